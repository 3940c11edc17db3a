//! Devices: a root device per Vulkan physical device, and sub-devices partitioned from them
//! (OpenCL 3.0 section 4.3). A sub-device shares its root's `VkDevice`; what it owns is a
//! compute-unit budget (see [`Device::compute_units`]) that kernels enqueued on it respect
//! (compute-unit-limited dispatch, `core::kernel`), and the Vulkan queues its command queues
//! lease (its own where the family has spare ones).

use super::error::{refused, ClError, ClResult};
use super::object::{self, ClObject, Header, Kind};
use super::partition::{plan_sm_split, SplitVia};
pub use crate::backend::cuda::SplitMethod;
use crate::backend::cuda::{self, CudaDevice, GreenContext, SmResource, SplitRequest};
use crate::backend::error::BackendError;
use crate::backend::vulkan::{self, Instance, PhysicalDevice};
pub use crate::util::config::LimitedDispatch;
use ash::vk;
use opencl_sys::*;
use std::sync::{Arc, OnceLock};

/// vkcl's partition property (a `cl_device_partition_property` name, placed after the scheme
/// and its values in clCreateSubDevices' list): how a CUDA device's SMs are carved, its value
/// one of `CL_DEVICE_PARTITION_SM_SPLIT_{ALIGNED,FINE,BACKFILL}_VKCL` (docs/subdevices.md).
/// Accepted, and without effect, on devices outside the CUDA path.
pub const CL_DEVICE_PARTITION_SM_SPLIT_VKCL: cl_device_partition_property = 0x7F10;
/// [`SplitMethod::Aligned`]: whole co-scheduled groups of 8 SMs (the default).
pub const CL_DEVICE_PARTITION_SM_SPLIT_ALIGNED_VKCL: cl_device_partition_property = 1;
/// [`SplitMethod::Fine`]: counts exact to 2 SMs, no thread-block clusters.
pub const CL_DEVICE_PARTITION_SM_SPLIT_FINE_VKCL: cl_device_partition_property = 2;
/// [`SplitMethod::Backfill`]: EQUALLY shares that together cover the whole device.
pub const CL_DEVICE_PARTITION_SM_SPLIT_BACKFILL_VKCL: cl_device_partition_property = 3;

/// The split method a `CL_DEVICE_PARTITION_SM_SPLIT_VKCL` value names; None for other values.
pub fn split_method(value: cl_device_partition_property) -> Option<SplitMethod> {
    match value {
        CL_DEVICE_PARTITION_SM_SPLIT_ALIGNED_VKCL => Some(SplitMethod::Aligned),
        CL_DEVICE_PARTITION_SM_SPLIT_FINE_VKCL => Some(SplitMethod::Fine),
        CL_DEVICE_PARTITION_SM_SPLIT_BACKFILL_VKCL => Some(SplitMethod::Backfill),
        _ => None,
    }
}

/// The CUDA side of a device on the CUDA path (an NVIDIA device whose CUDA twin, matched by
/// UUID, the driver offers, with `VKCL_CUDA` not 0).
pub struct CudaSide {
    /// The CUDA device with the same UUID as the Vulkan physical device.
    pub device: &'static CudaDevice,
    /// The SMs this device holds: all of them for a root, its part for a sub-device.
    pub sm: SmResource,
    /// A sub-device's green context (on exactly the SMs of `sm`); None for a root.
    pub green: Option<Arc<GreenContext>>,
}

/// llvmpipe's cap on its thread count (`LP_MAX_THREADS` in Mesa 22.x).
const LLVMPIPE_MAX_THREADS: u32 = 32;

/// An OpenCL device backed by a Vulkan physical device.
pub struct Device {
    header: Header,
    instance: &'static Instance,
    /// Facts read from the Vulkan driver.
    pub phys: Arc<PhysicalDevice>,
    vk: OnceLock<Result<Arc<vulkan::Device>, BackendError>>,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`, see [`compute_units`]; for a sub-device its budget.
    pub compute_units: u32,
    /// The device this one was partitioned from (`CL_DEVICE_PARENT_DEVICE`); None for a root.
    pub parent: Option<Arc<Device>>,
    /// `CL_DEVICE_PARTITION_TYPE`: the property list this sub-device was created with,
    /// terminating 0 included; empty for a root device.
    pub partition_type: Vec<cl_device_partition_property>,
    /// Index of this device's first compute unit among its root device's units.
    pub first_unit: u32,
    /// The CUDA side (green contexts), on the CUDA path only.
    pub cuda: Option<CudaSide>,
    /// Launch buffers of finished launches, reused by later ones ([`LaunchBuffers`]).
    pub launch_buffers: LaunchBuffers,
    /// [`Device::loop_limit`], worked out at its first call (every launch asks).
    loop_limit: OnceLock<Option<u32>>,
}

pub use super::launch_buffers::LaunchBuffers;
pub use super::partition::{plan_partition, Partition, ALL_AFFINITY_DOMAINS};

/// Debug fault injection (`vkcl_debug_inject_device_loss`): the next device submission of any
/// queue is treated as a GPU fault (the backend's `inject_device_loss`).
pub fn inject_device_loss() {
    vulkan::device::inject_device_loss();
}

impl ClObject for Device {
    const KIND: Kind = Kind::Device;
    const INVALID: i32 = CL_INVALID_DEVICE;
    fn header(&self) -> &Header {
        &self.header
    }
}

/// The real compute-unit count of a device: NVIDIA's shaderSMCount
/// (`VK_NV_shader_sm_builtins`); on llvmpipe its thread count, following llvmpipe's own rule
/// (`LP_NUM_THREADS` if set, else the number of CPUs, capped at 32, at least 1). Where the
/// driver tells nothing, the estimate is 1 (documented in docs/features.md).
pub fn compute_units(phys: &PhysicalDevice) -> u32 {
    if let Some(sms) = phys.sm_count {
        return sms.max(1);
    }
    if phys.driver_id == vk::DriverId::MESA_LLVMPIPE {
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let n = std::env::var("LP_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(cpus);
        return n.clamp(1, LLVMPIPE_MAX_THREADS);
    }
    1
}

/// The CUDA side of a root device: its CUDA twin by UUID, for NVIDIA devices only (no CUDA
/// probing at all elsewhere), when the CUDA path is on and the driver offers green contexts.
fn cuda_side_of(phys: &PhysicalDevice) -> Option<CudaSide> {
    if phys.vendor_id != 0x10DE {
        return None;
    }
    let device = cuda::device_for_uuid(&phys.device_uuid)?;
    match device.sm_resource() {
        Ok(sm) => Some(CudaSide {
            device,
            sm,
            green: None,
        }),
        Err(e) => {
            tracing::debug!("CUDA device {} without SM resource: {e}", device.name);
            None
        }
    }
}

impl Device {
    /// A root device for `phys`, registered as a live handle.
    pub fn new_root(instance: &'static Instance, phys: Arc<PhysicalDevice>) -> Arc<Device> {
        let compute_units = compute_units(&phys);
        let cuda = cuda_side_of(&phys);
        object::register(Device {
            header: Header::new(Kind::Device),
            instance,
            phys,
            vk: OnceLock::new(),
            compute_units,
            parent: None,
            partition_type: Vec::new(),
            first_unit: 0,
            cuda,
            launch_buffers: LaunchBuffers::default(),
            loop_limit: OnceLock::new(),
        })
    }

    /// A sub-device of `parent` with `units` compute units starting at `first` (relative to the
    /// parent), created by the property list `partition_type` (terminating 0 included);
    /// registered as a live handle with reference count 1.
    pub fn new_sub(
        parent: &Arc<Device>,
        first: u32,
        units: u32,
        partition_type: Vec<cl_device_partition_property>,
        cuda: Option<CudaSide>,
    ) -> Arc<Device> {
        object::register(Device {
            header: Header::new(Kind::Device),
            instance: parent.instance,
            phys: parent.phys.clone(),
            vk: OnceLock::new(),
            compute_units: units,
            parent: Some(parent.clone()),
            partition_type,
            first_unit: parent.first_unit + first,
            cuda,
            launch_buffers: LaunchBuffers::default(),
            loop_limit: OnceLock::new(),
        })
    }

    /// Whether this is a sub-device (reference counted, partitioned from another device).
    pub fn is_sub_device(&self) -> bool {
        self.parent.is_some()
    }

    /// The root device this one was (perhaps repeatedly) partitioned from, or itself.
    pub fn root(&self) -> &Device {
        match &self.parent {
            Some(p) => p.root(),
            None => self,
        }
    }

    /// `CL_DEVICE_PARTITION_AFFINITY_DOMAIN`: the affinity domains this device can be split
    /// along. None on every device vkcl knows: llvmpipe's threads are not bound to NUMA nodes
    /// or caches, and Vulkan tells nothing of a GPU's cache hierarchy (docs/subdevices.md).
    pub fn affinity_domains(&self) -> cl_device_affinity_domain {
        0
    }

    /// `CL_DEVICE_PARTITION_PROPERTIES`: the partition schemes this device supports.
    pub fn partition_properties(&self) -> Vec<cl_device_partition_property> {
        let mut v = vec![CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS];
        if self.affinity_domains() != 0 {
            v.push(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN);
        }
        v
    }

    /// clCreateSubDevices' work once the properties are decoded: plans the split and, when
    /// `create` is set, makes the sub-devices (`partition_type` is the list as given, with its
    /// terminating 0). Returns the number of sub-devices and those created.
    ///
    /// Every sub-device has exactly the compute units the scheme gives it (OpenCL 3.0 4.3).
    /// On the CUDA path [`plan_sm_split`] picks how (`method`: vkcl's split property, None
    /// when absent): green contexts of an aligned or fine driver split whose parts have
    /// exactly those SMs, else (odd counts, or a driver split that does not give them) Vulkan
    /// sub-devices without a green context; elsewhere `method` has no effect.
    /// Errors: as [`plan_partition`]; on the CUDA path also `CL_DEVICE_PARTITION_FAILED` when
    /// an explicit method cannot give the counts, `CL_OUT_OF_RESOURCES` when the driver
    /// refuses a split or a green context.
    pub fn partition(
        self: &Arc<Self>,
        scheme: &Partition,
        method: Option<SplitMethod>,
        partition_type: &[cl_device_partition_property],
        create: bool,
    ) -> ClResult<(usize, Vec<Arc<Device>>)> {
        let plan = plan_partition(self.compute_units, self.affinity_domains(), scheme)?;
        if let Some(side) = &self.cuda {
            let align = side.sm.granularity(SplitMethod::Aligned);
            let split = plan_sm_split(self.compute_units, align, scheme, method)?;
            if let SplitVia::Green(m) = split.via {
                // Without vkcl's split property an aligned split that does not give the counts
                // (the H200's driver makes 15 aligned parts of 8 of its 132 SMs, not 16) is
                // tried again fine (steps of 2) when every count is even, before Vulkan.
                let all_even = plan.iter().all(|&(_, n)| n % 2 == 0);
                let retry = method.is_none() && m == SplitMethod::Aligned && all_even;
                let tries: &[SplitMethod] = if retry {
                    &[SplitMethod::Aligned, SplitMethod::Fine]
                } else {
                    std::slice::from_ref(&m)
                };
                for &m in tries {
                    let exact = m != SplitMethod::Backfill;
                    let made =
                        self.partition_cuda(side, scheme, &plan, m, exact, partition_type, create)?;
                    if let Some(r) = made {
                        return Ok(r);
                    }
                }
                // CL_DEVICE_PARTITION_FAILED if the partition name is supported by the
                // implementation but in_device could not be further partitioned (the method
                // asked for does not give these counts).
                if method.is_some() {
                    return Err(ClError(CL_DEVICE_PARTITION_FAILED));
                }
                tracing::info!(
                    "no green-context split of {} SMs gives {:?}: Vulkan sub-devices",
                    self.compute_units,
                    scheme
                );
            }
        }
        let subs = if create {
            plan.iter()
                .map(|&(first, n)| Device::new_sub(self, first, n, partition_type.to_vec(), None))
                .collect()
        } else {
            Vec::new()
        };
        Ok((plan.len(), subs))
    }

    /// [`Device::partition`] on the CUDA path: the driver's split of this device's SMs by
    /// `method` into the counts of `plan`. `Ok(None)` when the parts do not fit or (`exact`)
    /// a part's SMs differ from its count.
    #[allow(clippy::too_many_arguments)]
    fn partition_cuda(
        self: &Arc<Self>,
        side: &CudaSide,
        scheme: &Partition,
        plan: &[(u32, u32)],
        method: SplitMethod,
        exact: bool,
        partition_type: &[cl_device_partition_property],
        create: bool,
    ) -> ClResult<Option<(usize, Vec<Arc<Device>>)>> {
        let request = match scheme {
            Partition::Equally(n) => SplitRequest::Equally {
                size: *n,
                max: plan.len() as u32,
            },
            Partition::ByCounts(c) => SplitRequest::Counts(c.clone()),
            // plan_partition refuses every affinity domain on these devices.
            Partition::ByAffinityDomain(_) => return Err(ClError(CL_INVALID_VALUE)),
        };
        let out_of_resources = |e: cuda::CuError| {
            tracing::warn!("green-context partition: {e}");
            ClError(CL_OUT_OF_RESOURCES)
        };
        let Some(parts) = side.sm.split(&request, method).map_err(out_of_resources)? else {
            return Ok(None);
        };
        let got: Vec<u32> = parts.iter().map(|p| cuda::sm_count_of(p)).collect();
        if parts.len() != plan.len()
            || (exact && got.iter().zip(plan).any(|(&g, &(_, want))| g != want))
        {
            tracing::info!(
                "{method:?} split of {} SMs gave {got:?}, not {plan:?}",
                side.sm.sm_count()
            );
            return Ok(None);
        }
        if !create {
            return Ok(Some((parts.len(), Vec::new())));
        }
        let mut subs = Vec::with_capacity(parts.len());
        let mut first = 0;
        for part in &parts {
            let green = Arc::new(GreenContext::new(side.device, part).map_err(out_of_resources)?);
            let units = green.sm_count;
            let cuda = CudaSide {
                device: side.device,
                sm: green.resource,
                green: Some(green),
            };
            subs.push(Device::new_sub(
                self,
                first,
                units,
                partition_type.to_vec(),
                Some(cuda),
            ));
            first += units;
        }
        Ok(Some((subs.len(), subs)))
    }

    /// The green context of a sub-device on the CUDA path.
    pub fn green_context(&self) -> Option<&Arc<GreenContext>> {
        self.cuda.as_ref()?.green.as_ref()
    }

    /// llvmpipe's loop limit where the driver has one: lavapipe before Mesa 25 (Mesa
    /// 22.3.6 has it, 25.0.7 not), 65535 loop passes per shader call
    /// (`LP_MAX_TGSI_LOOP_ITERATIONS`, see "Loop-limit guard" in the `compiler` module doc).
    /// Kernels with loops then run as their loop-guard variant. None elsewhere.
    ///
    /// Lavapipe reports a `driverVersion` of 1 (22.3.6 and 25.0.7 alike), so the Mesa version
    /// comes from `driverInfo` ("Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)"); a `driverInfo` that
    /// names none falls back to `driverVersion` (as `VK_MAKE_API_VERSION`), and so to the limit.
    pub fn loop_limit(&self) -> Option<u32> {
        *self.loop_limit.get_or_init(|| {
            if self.phys.driver_id != vk::DriverId::MESA_LLVMPIPE {
                return None;
            }
            let major = self
                .phys
                .driver_info
                .split("Mesa ")
                .nth(1)
                .and_then(|v| v.split('.').next())
                .and_then(|m| m.parse::<u32>().ok())
                .unwrap_or_else(|| vk::api_version_major(self.phys.driver_version));
            (major < 25).then_some(65535)
        })
    }

    /// Whether kernels round `double`s through `floor` and `ceil` (the compiler's
    /// `DeviceCaps::f64_rounding_by_floor`): on llvmpipe, whose own `double` rounding is
    /// wrong on hosts without AVX-512 (`compiler/lower/f64round.rs`).
    pub fn rounds_doubles_by_floor(&self) -> bool {
        self.phys.driver_id == vk::DriverId::MESA_LLVMPIPE
    }

    /// Whether kernels have their undefined numeric values defined as zeros (the compiler's
    /// `DeviceCaps::undef_as_null`): `VKCL_UNDEF_AS_NULL` if set, else on NVIDIA's driver,
    /// which miscompiled loops entered with undefined phi values (`compiler/lower/undef.rs`).
    pub fn defines_undefs(&self) -> bool {
        crate::util::config::config()
            .undef_as_null
            .unwrap_or(self.phys.driver_id == vk::DriverId::NVIDIA_PROPRIETARY)
    }

    /// `VKCL_SUBDEVICE_DISPATCH` if set, else waves on llvmpipe and the persistent variant
    /// elsewhere (see [`LimitedDispatch`]).
    pub fn limited_dispatch(&self) -> LimitedDispatch {
        if let Some(d) = crate::util::config::config().subdevice_dispatch {
            return d;
        }
        if self.phys.driver_id == vk::DriverId::MESA_LLVMPIPE {
            LimitedDispatch::Waves
        } else {
            LimitedDispatch::Persistent
        }
    }

    /// Work-groups one compute unit keeps resident at once, for kernels with `group_size`
    /// work-items per group: 1 on llvmpipe (a compute unit is a thread that runs one group at
    /// a time); on NVIDIA the SM's 2048 resident threads (Hopper, Ampere) divided by the group
    /// size, at most 32 groups (a documented estimate: Vulkan has no query for it); 1 elsewhere.
    pub fn groups_per_unit(&self, group_size: u32) -> u32 {
        if self.phys.sm_count.is_some() {
            return (2048 / group_size.max(1)).clamp(1, 32);
        }
        1
    }

    /// The logical Vulkan device, created at first use.
    /// Errors: `CL_OUT_OF_RESOURCES` if `vkCreateDevice` fails.
    /// A sub-device shares its root's.
    pub fn vk(&self) -> ClResult<&Arc<vulkan::Device>> {
        if let Some(p) = &self.parent {
            return p.vk();
        }
        self.vk
            .get_or_init(|| vulkan::Device::new(self.instance, self.phys.clone()))
            .as_ref()
            .map_err(|e| refused("device creation", e.clone()))
    }

    /// Whether the device's Vulkan device was created and is lost (a GPU fault): its
    /// commands fail with `CL_OUT_OF_RESOURCES` (`CL_DEVICE_AVAILABLE` false).
    pub fn is_lost(&self) -> bool {
        matches!(self.root().vk.get(), Some(Ok(vk)) if vk.is_lost())
    }

    /// Saves the Vulkan pipeline cache of the device (its root's) to disk if it has grown;
    /// nothing when its Vulkan device was never created (context release).
    pub fn save_pipeline_cache(&self) {
        if let Some(Ok(vk)) = self.root().vk.get() {
            vk.pipeline_cache.save();
        }
    }

    /// `CL_DEVICE_TYPE`.
    pub fn device_type(&self) -> cl_device_type {
        match self.phys.device_type {
            vk::PhysicalDeviceType::CPU => CL_DEVICE_TYPE_CPU,
            vk::PhysicalDeviceType::DISCRETE_GPU
            | vk::PhysicalDeviceType::INTEGRATED_GPU
            | vk::PhysicalDeviceType::VIRTUAL_GPU => CL_DEVICE_TYPE_GPU,
            _ => CL_DEVICE_TYPE_ACCELERATOR,
        }
    }

    /// `CL_DEVICE_VENDOR`: the PCI vendor's name where known.
    pub fn vendor(&self) -> String {
        match self.phys.vendor_id {
            0x10DE => "NVIDIA Corporation".into(),
            0x1002 => "Advanced Micro Devices, Inc.".into(),
            0x8086 => "Intel Corporation".into(),
            0x13B5 => "ARM".into(),
            0x5143 => "Qualcomm".into(),
            0x10005 => "Mesa".into(),
            id => format!("Vulkan vendor 0x{id:x}"),
        }
    }

    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, bytes: what one `VkBuffer` allocation can hold.
    pub fn max_mem_alloc_size(&self) -> u64 {
        self.phys
            .max_memory_allocation_size
            .min(self.phys.max_buffer_size)
            .min(self.global_mem_size())
    }

    /// `CL_DEVICE_GLOBAL_MEM_SIZE`, bytes: the largest device-local heap.
    pub fn global_mem_size(&self) -> u64 {
        self.phys.device_local_heap
    }

    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub fn max_work_group_size(&self) -> usize {
        self.phys.limits.max_compute_work_group_invocations as usize
    }

    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`.
    pub fn max_work_item_sizes(&self) -> [usize; 3] {
        self.phys
            .limits
            .max_compute_work_group_size
            .map(|v| v as usize)
    }

    /// `CL_DEVICE_LOCAL_MEM_SIZE`, bytes.
    pub fn local_mem_size(&self) -> u64 {
        self.phys.limits.max_compute_shared_memory_size as u64
    }

    /// `CL_DEVICE_MAX_CLOCK_FREQUENCY` in MHz: for CPU devices the CPU's, from /proc/cpuinfo;
    /// on NVIDIA the SM clock from the CUDA driver where it is present
    /// (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`); 0 (unknown) where nothing tells.
    pub fn max_clock_mhz(&self) -> u32 {
        if self.phys.device_type != vk::PhysicalDeviceType::CPU {
            return self.cuda_twin().map_or(0, |c| c.clock_khz / 1000);
        }
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .filter(|l| l.starts_with("cpu MHz"))
                    .filter_map(|l| l.split(':').nth(1)?.trim().parse::<f64>().ok())
                    .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            })
            .map(|v| v as u32)
            .unwrap_or(0)
    }

    /// The CUDA device of the same GPU (by UUID) on NVIDIA where the CUDA driver is present;
    /// None elsewhere (no CUDA probing on other vendors).
    fn cuda_twin(&self) -> Option<&'static CudaDevice> {
        if let Some(side) = &self.cuda {
            return Some(side.device);
        }
        if self.phys.vendor_id != 0x10DE {
            return None;
        }
        cuda::device_for_uuid(&self.phys.device_uuid)
    }

    /// The global memory cache (`CL_DEVICE_GLOBAL_MEM_CACHE_TYPE`, `..._CACHELINE_SIZE`,
    /// `..._CACHE_SIZE`): (type, line bytes, size bytes). On a CPU device (lavapipe) the CPU's
    /// last-level data cache of CPU 0 as Linux describes it under
    /// `/sys/devices/system/cpu/cpu0/cache/`; on NVIDIA the L2 (128-byte lines, the size from
    /// the CUDA driver where present, else 0: unknown). `CL_NONE` where nothing tells.
    pub fn global_mem_cache(&self) -> (cl_device_mem_cache_type, u32, u64) {
        if self.phys.device_type == vk::PhysicalDeviceType::CPU {
            return match cpu_last_level_cache() {
                Some((line, size)) => (CL_READ_WRITE_CACHE as _, line, size),
                None => (CL_NONE as _, 0, 0),
            };
        }
        if self.phys.vendor_id == 0x10DE {
            let l2 = self.cuda_twin().map_or(0, |c| u64::from(c.l2_bytes));
            return (CL_READ_WRITE_CACHE as _, 128, l2);
        }
        (CL_NONE as _, 0, 0)
    }

    /// `CL_DEVICE_PREFERRED_VECTOR_WIDTH_<T>` for a scalar type of `bytes` bytes (`half`:
    /// 2, `double`: 8; `float_type` tells `int` from `float`, since only the float types
    /// depend on cl_khr_fp16 / cl_khr_fp64). 0 for half or double where they are not offered
    /// (OpenCL 3.0 table 4.3).
    ///
    /// Vulkan devices run one work-item per SIMD lane, so a work-item's vector gives
    /// independent instructions, not wider ones. On llvmpipe (a CPU device) that
    /// instruction-level parallelism pays: clpeak 1.1.2 on lavapipe 25.0.7 (2026-12-02, 2
    /// cores, load 6-13) measured float 2.34, float2 4.77, float4 8.96, float8 9.52,
    /// float16 9.51 GFLOP/s; int best at int4 (5.64 GIOP/s); double best at double8 (6.65
    /// against 5.14 for double4); half best at half4 (1.59). So 16 bytes' worth (char16,
    /// short8, int4, float4, long2 ... with double 8 and half 4, as measured). On GPUs
    /// (NVIDIA: 32-bit lanes) one 32-bit value per lane (char4, short2, int, float, long,
    /// double), and half2 where half is offered (packed half2 arithmetic ran at 1.92x float
    /// in clpeak on the H200, session 7).
    pub fn preferred_vector_width(&self, bytes: u32, float_type: bool) -> u32 {
        let offered = match (float_type, bytes) {
            (true, 2) => self.has_fp16(),
            (true, 8) => self.has_fp64(),
            _ => true,
        };
        if !offered {
            return 0;
        }
        if self.phys.device_type == vk::PhysicalDeviceType::CPU {
            return match (float_type, bytes) {
                (true, 8) => 8,
                (true, 2) => 4,
                _ => 16 / bytes,
            };
        }
        match (float_type, bytes) {
            (true, 2) => 2,
            _ => (4 / bytes).max(1),
        }
    }

    /// `CL_DEVICE_NATIVE_VECTOR_WIDTH_<T>` (arguments as [`Self::preferred_vector_width`]):
    /// the width one instruction of a work-item handles. Every Vulkan device here runs a
    /// work-item in one 32-bit lane: 4 chars or 2 shorts pack into one 32-bit operation,
    /// 32- and 64-bit types are 1, half is 2 on NVIDIA (packed half2) and 1 elsewhere; 0 for
    /// half or double where they are not offered.
    pub fn native_vector_width(&self, bytes: u32, float_type: bool) -> u32 {
        if self.preferred_vector_width(bytes, float_type) == 0 {
            return 0;
        }
        match (float_type, bytes) {
            (true, 2) if self.phys.vendor_id == 0x10DE => 2,
            (true, _) => 1,
            _ => (4 / bytes).max(1),
        }
    }

    /// `CL_DEVICE_PROFILING_TIMER_RESOLUTION` in ns.
    pub fn timer_resolution_ns(&self) -> usize {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equally_leaves_the_remainder_unused() {
        assert_eq!(
            plan_partition(5, 0, &Partition::Equally(2)),
            Ok(vec![(0, 2), (2, 2)])
        );
        assert_eq!(
            plan_partition(4, 0, &Partition::Equally(1)).map(|v| v.len()),
            Ok(4)
        );
        assert_eq!(
            plan_partition(2, 0, &Partition::Equally(3)),
            Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT))
        );
        assert_eq!(
            plan_partition(2, 0, &Partition::Equally(2)),
            Err(ClError(CL_DEVICE_PARTITION_FAILED))
        );
        assert_eq!(
            plan_partition(2, 0, &Partition::Equally(0)),
            Err(ClError(CL_INVALID_VALUE))
        );
    }

    #[test]
    fn by_counts_checks_totals() {
        assert_eq!(
            plan_partition(4, 0, &Partition::ByCounts(vec![1, 3])),
            Ok(vec![(0, 1), (1, 3)])
        );
        assert_eq!(
            plan_partition(4, 0, &Partition::ByCounts(vec![3, 2])),
            Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT))
        );
        assert_eq!(
            plan_partition(2, 0, &Partition::ByCounts(vec![1, 1, 1])),
            Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT))
        );
        assert_eq!(
            plan_partition(2, 0, &Partition::ByCounts(vec![0, 1])),
            Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT))
        );
        assert_eq!(
            plan_partition(2, 0, &Partition::ByCounts(vec![])),
            Err(ClError(CL_INVALID_VALUE))
        );
    }

    #[test]
    fn affinity_domains_only_where_offered() {
        let numa = Partition::ByAffinityDomain(CL_DEVICE_AFFINITY_DOMAIN_NUMA);
        assert_eq!(plan_partition(4, 0, &numa), Err(ClError(CL_INVALID_VALUE)));
        let two = Partition::ByAffinityDomain(
            CL_DEVICE_AFFINITY_DOMAIN_NUMA | CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
        );
        assert_eq!(
            plan_partition(4, ALL_AFFINITY_DOMAINS, &two),
            Err(ClError(CL_INVALID_VALUE))
        );
        assert_eq!(
            plan_partition(4, 0, &Partition::ByAffinityDomain(1 << 20)),
            Err(ClError(CL_INVALID_VALUE))
        );
    }
}

/// The last-level data (or unified) cache of CPU 0 from Linux's sysfs
/// (`/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,coherency_line_size}`):
/// (line bytes, size bytes), or None where sysfs does not describe it.
fn cpu_last_level_cache() -> Option<(u32, u64)> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let read = |p: &std::path::Path, f: &str| std::fs::read_to_string(p.join(f)).ok();
    let mut best: Option<(u32, u32, u64)> = None; // (level, line, size)
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        let kind = read(&p, "type").unwrap_or_default();
        if !matches!(kind.trim(), "Data" | "Unified") {
            continue;
        }
        let level: u32 = read(&p, "level")?.trim().parse().ok()?;
        let line: u32 = read(&p, "coherency_line_size")?.trim().parse().ok()?;
        let size = parse_cache_size(read(&p, "size")?.trim())?;
        if best.is_none_or(|(l, _, _)| level > l) {
            best = Some((level, line, size));
        }
    }
    best.map(|(_, line, size)| (line, size))
}

/// A sysfs cache size ("32K", "1024K", "16M", or bytes) in bytes.
fn parse_cache_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}
