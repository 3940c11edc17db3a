//! Devices: a root device per Vulkan physical device, and sub-devices partitioned from them
//! (OpenCL 3.0 section 4.3). A sub-device shares its root's `VkDevice`; what it owns is a
//! compute-unit budget (see [`Device::compute_units`]) that kernels enqueued on it respect
//! (compute-unit-limited dispatch, `core::kernel`), and the Vulkan queues its command queues
//! lease (its own where the family has spare ones).

use super::error::{refused, ClError, ClResult};
use super::make_version;
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

/// The C11-atomics features of `CL_DEVICE_OPENCL_C_FEATURES` (OpenCL C 3.0 section 6.2.1),
/// consistent with [`Device::atomic_memory_capabilities`].
const ATOMIC_FEATURES: [&str; 4] = [
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
];

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

    /// How kernels on this device's sub-devices keep to their compute units:
    /// llvmpipe's loop limit where the driver has one: lavapipe before Mesa 25 (Mesa
    /// 22.3.6 has it, 25.0.7 not), 65535 loop passes per shader call
    /// (`LP_MAX_TGSI_LOOP_ITERATIONS`, see "Loop-limit guard" in the `compiler` module doc).
    /// Kernels with loops then run as their loop-guard variant. None elsewhere.
    ///
    /// Lavapipe reports a `driverVersion` of 1 (22.3.6 and 25.0.7 alike), so the Mesa version
    /// comes from `driverInfo` ("Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)"); a `driverInfo` that
    /// names none falls back to `driverVersion` (as `VK_MAKE_API_VERSION`), and so to the limit.
    pub fn loop_limit(&self) -> Option<u32> {
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

    /// Whether buffers can be imported from opaque fds of Vulkan memory
    /// (`cl_khr_external_memory_opaque_fd`; the Vulkan device imports them for vkcl's buffers).
    pub fn imports_opaque_fd(&self) -> bool {
        self.phys.import_opaque_fd
    }

    /// Device extensions with versions (`CL_DEVICE_EXTENSIONS_WITH_VERSION`).
    pub fn extensions(&self) -> Vec<(&'static str, u32)> {
        let mut v = vec![
            ("cl_khr_icd", make_version(1, 0, 0)),
            ("cl_khr_global_int32_base_atomics", make_version(1, 0, 0)),
            (
                "cl_khr_global_int32_extended_atomics",
                make_version(1, 0, 0),
            ),
            ("cl_khr_local_int32_base_atomics", make_version(1, 0, 0)),
            ("cl_khr_local_int32_extended_atomics", make_version(1, 0, 0)),
            ("cl_khr_device_uuid", make_version(1, 0, 0)),
            ("cl_khr_suggested_local_work_size", make_version(1, 0, 0)),
            // SPIR-V extensions of IL programs (compiler/il.rs; llvm-spirv-15 reads the first
            // two, vkcl drops the expect/assume hints before it).
            (
                "cl_khr_spirv_no_integer_wrap_decoration",
                make_version(1, 0, 0),
            ),
            ("cl_khr_spirv_linkonce_odr", make_version(1, 0, 0)),
            ("cl_khr_expect_assume", make_version(1, 0, 0)),
            // What the IL path accepts (compiler/spirv_queries.rs; empty lists without the
            // compiler tools, as CL_DEVICE_IL_VERSION).
            ("cl_khr_spirv_queries", make_version(1, 0, 0)),
            // CL_MEM_IMMUTABLE_EXT buffers (api/memory): every write gives CL_INVALID_OPERATION.
            ("cl_ext_immutable_memory_objects", make_version(1, 0, 0)),
            // Written in OpenCL C in the prelude (compiler/prelude.cl): bit-field insert and
            // extract, bit reverse; dot products of four 8-bit integers (vectors and packed,
            // version 2.0.0), not accelerated (CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_*).
            ("cl_khr_extended_bit_ops", make_version(1, 0, 0)),
            ("cl_khr_integer_dot_product", make_version(2, 0, 0)),
            // Binary semaphores ordering commands on the host (core/semaphore.rs); no
            // external handle types (docs/interop.md).
            ("cl_khr_semaphore", make_version(1, 0, 0)),
        ];
        // Buffer device addresses as raw values (core/device_address.rs), revision 1.0.2 of
        // the extension (the one the CTS and the headers know).
        if self.has_device_addresses() {
            v.push(("cl_ext_buffer_device_address", make_version(1, 0, 2)));
        }
        // cl_khr_command_buffer (api/command_buffer.rs): 1.0.0, final since 2026-09-09 with
        // the semantics and ABI of 0.9.8 (which VKCL_COMMAND_BUFFER_REVISION=0.9.8 reports),
        // with mutable dispatch 0.9.5; at 0.9.4 with its older ABI and no mutable dispatch
        // under VKCL_COMMAND_BUFFER_REVISION=0.9.4.
        let config = crate::util::config::config();
        if config.command_buffer_094 {
            v.push(("cl_khr_command_buffer", make_version(0, 9, 4)));
        } else {
            let revision = if config.command_buffer_098 {
                make_version(0, 9, 8)
            } else {
                make_version(1, 0, 0)
            };
            v.push(("cl_khr_command_buffer", revision));
            v.push((
                "cl_khr_command_buffer_mutable_dispatch",
                make_version(0, 9, 5),
            ));
        }
        // Buffers on imported Vulkan memory (api/memory/external.rs, docs/interop.md).
        if self.imports_opaque_fd() {
            v.push(("cl_khr_external_memory", make_version(1, 0, 1)));
            v.push(("cl_khr_external_memory_opaque_fd", make_version(1, 0, 0)));
        }
        if self.phys.storage_8bit {
            v.push(("cl_khr_byte_addressable_store", make_version(1, 0, 0)));
        }
        // Not cl_khr_subgroups: the OpenCL 3.0 API specification (table "Device queries",
        // CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS) says that query "must return
        // CL_TRUE for devices that support the cl_khr_subgroups extension", and the CTS's
        // subgroups ifp_ext fails a device that claims it with CL_FALSE. Vulkan promises no
        // forward progress between the subgroups of a workgroup (lavapipe runs them in turn:
        // a spin-wait on another sub-group never ends), so vkcl reports CL_FALSE and offers
        // sub-groups as OpenCL 3.0's __opencl_c_subgroups, which does not require it.
        v.extend(self.subgroup_extensions());
        // atom_* on 64-bit integers in __global and __local memory: SPIR-V Int64Atomics on
        // storage buffers and on workgroup memory.
        if self.phys.shader_int64_atomics && self.phys.shader_shared_int64_atomics {
            v.push(("cl_khr_int64_base_atomics", make_version(1, 0, 0)));
            v.push(("cl_khr_int64_extended_atomics", make_version(1, 0, 0)));
        }
        if self.has_fp64() {
            v.push(("cl_khr_fp64", make_version(1, 0, 0)));
        }
        if self.has_fp16() {
            v.push(("cl_khr_fp16", make_version(1, 0, 0)));
        }
        v
    }

    /// `CL_DEVICE_DOUBLE_FP_CONFIG`: 0 without `double`; otherwise fused multiply-add (`fma`
    /// is exact), infinities and NaNs, denormals (kept by the arithmetic and the math
    /// library: `tests/fp64.rs`), round to nearest (the arithmetic's mode), and round to zero
    /// and to +-infinity: OpenCL C selects a rounding mode only in explicit conversions
    /// (`convert_float_rtz(double)`, `convert_long_rtp(double)`...), which vkcl implements
    /// for every mode. The Khronos CTS (math_brute_force) requires all six, the OpenCL 1.x
    /// minimum (OpenCL 3.0 API section 4.2, table 5.3).
    pub fn double_fp_config(&self) -> cl_device_fp_config {
        if !self.has_fp64() {
            return 0;
        }
        (CL_FP_FMA
            | CL_FP_ROUND_TO_NEAREST
            | CL_FP_ROUND_TO_ZERO
            | CL_FP_ROUND_TO_INF
            | CL_FP_INF_NAN
            | CL_FP_DENORM) as cl_device_fp_config
    }

    /// `CL_DEVICE_HALF_FP_CONFIG`: 0 without `half` arithmetic; otherwise round to nearest
    /// (Vulkan's `shaderFloat16` arithmetic) with infinities and NaNs, the minimum of
    /// `cl_khr_fp16` (OpenCL 3.0 extension specification), and denormals on CPU devices
    /// (lavapipe: its float16 arithmetic, done in float, keeps them, `tests/fp16.rs` and the
    /// CTS's "half precision denormals: YES"). Elsewhere Vulkan leaves float16 denormal
    /// behaviour to the driver unless a shader asks for `DenormPreserve`, which vkcl does not
    /// yet, so `CL_FP_DENORM` is not claimed there.
    pub fn half_fp_config(&self) -> cl_device_fp_config {
        if !self.has_fp16() {
            return 0;
        }
        let mut c = CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN;
        if self.phys.device_type == vk::PhysicalDeviceType::CPU {
            c |= CL_FP_DENORM;
        }
        c as cl_device_fp_config
    }

    /// Whether `half` arithmetic is offered (`cl_khr_fp16`; OpenCL C 3.0 defines no
    /// `__opencl_c_fp16` feature, half being an extension only): the Vulkan
    /// device has `shaderFloat16`, `shaderInt16` and 16-bit storage-buffer access, and
    /// `VKCL_FP16` turns it on (docs/settings.md).
    ///
    /// Offered by default (`VKCL_FP16=0` turns it off). On the H200 (NVIDIA 580) vkcl works
    /// around two driver bugs for it: half division is done in float and rounded to half on
    /// the bits (`lower::convert`), and dynamic indexing of 16-bit vectors becomes selects
    /// (`lower::dynamic`); `tests/fp16.rs` passes there (docs/h200.md).
    pub fn has_fp16(&self) -> bool {
        let wanted = crate::util::config::config().fp16.unwrap_or(true);
        self.phys.shader_float16 && self.phys.shader_int16 && self.phys.storage_16bit && wanted
    }

    /// Whether the device supports `cl_ext_buffer_device_address`: every vkcl device does,
    /// since kernels reach memory through buffer device addresses and a Vulkan device
    /// without `bufferDeviceAddress` is not offered at all (`backend/vulkan/instance.rs`).
    pub fn has_device_addresses(&self) -> bool {
        true
    }

    /// Whether `double` is offered (`cl_khr_fp64`, `__opencl_c_fp64`): the Vulkan device has
    /// `shaderFloat64` and `shaderInt64` (the double math library works on the bits through
    /// 64-bit integers) and `VKCL_FP64` does not turn it off (docs/settings.md).
    pub fn has_fp64(&self) -> bool {
        self.phys.shader_float64 && self.phys.shader_int64 && crate::util::config::config().fp64
    }

    /// `CL_DEVICE_OPENCL_C_FEATURES`: the optional OpenCL C 3.0 features supported.
    pub fn opencl_c_features(&self) -> Vec<(&'static str, u32)> {
        let mut v = Vec::new();
        if self.phys.shader_int64 {
            v.push(("__opencl_c_int64", make_version(3, 0, 0)));
        }
        if self.has_fp64() {
            v.push(("__opencl_c_fp64", make_version(3, 0, 0)));
        }
        // C11-style atomics (OpenCL C 3.0 section 6.15.12): every Vulkan device has
        // acquire/release semantics and Device scope. seq_cst runs as acq_rel (Vulkan's
        // memory model has no sequentially consistent semantics; on a device without SVM
        // every shared location is a buffer, which acq_rel orders the same way), and
        // memory_scope_all_devices as Device scope (no SVM: nothing outside this VkDevice
        // can see the memory before the next synchronisation point).
        for f in ATOMIC_FEATURES {
            v.push((f, make_version(3, 0, 0)));
        }
        // cl_khr_integer_dot_product's inputs (compiler/prelude.cl).
        v.push((
            "__opencl_c_integer_dot_product_input_4x8bit",
            make_version(2, 0, 0),
        ));
        v.push((
            "__opencl_c_integer_dot_product_input_4x8bit_packed",
            make_version(2, 0, 0),
        ));
        // One buffer per program, its address in the launch header (compiler::globals).
        v.push((
            "__opencl_c_program_scope_global_variables",
            make_version(3, 0, 0),
        ));
        if self.subgroups() {
            v.push(("__opencl_c_subgroups", make_version(3, 0, 0)));
        }
        // Written with __local memory and barriers in the prelude (compiler/prelude.cl).
        if self.work_group_collective_functions() {
            v.push((
                "__opencl_c_work_group_collective_functions",
                make_version(3, 0, 0),
            ));
        }
        v
    }

    /// Sub-groups (`__opencl_c_subgroups`, OpenCL C 3.0 section 6.15.17): Vulkan subgroups in compute
    /// with basic, vote, arithmetic and shuffle operations, on 64-bit types too
    /// (`shaderSubgroupExtendedTypes`).
    pub fn subgroups(&self) -> bool {
        use vk::SubgroupFeatureFlags as F;
        self.phys.subgroup_size > 0
            && self.phys.shader_int64
            && self.phys.subgroup_extended_types
            && self
                .phys
                .subgroup_ops
                .contains(F::BASIC | F::VOTE | F::ARITHMETIC | F::SHUFFLE)
    }

    /// The Vulkan subgroup operations of compute shaders that the compiler may use: each
    /// cl_khr_subgroup_* extension is reported where its operations are (see
    /// [`Self::subgroup_extensions`]).
    pub fn subgroup_ops(&self) -> crate::compiler::SubgroupOps {
        use vk::SubgroupFeatureFlags as F;
        let p = &self.phys;
        let on = |f: F| self.subgroups() && p.subgroup_ops.contains(f);
        crate::compiler::SubgroupOps {
            vote: on(F::VOTE),
            arithmetic: on(F::ARITHMETIC),
            ballot: on(F::BALLOT) && p.subgroup_broadcast_dynamic_id,
            shuffle: on(F::SHUFFLE),
            shuffle_relative: on(F::SHUFFLE_RELATIVE),
            clustered: on(F::CLUSTERED),
        }
    }

    /// The cl_khr_subgroup_* extensions (OpenCL extension specification, 1.0.0 each), each
    /// where the Vulkan device offers its operations in compute shaders
    /// (`subgroupSupportedOperations`, `VK_KHR_shader_subgroup_rotate`):
    /// `_extended_types` (8- and 16-bit integers; `shaderSubgroupExtendedTypes`, required by
    /// [`Self::subgroups`], with `shaderInt8` and `shaderInt16`), `_non_uniform_vote` (vote),
    /// `_ballot` (ballot, `subgroupBroadcastDynamicId`), `_non_uniform_arithmetic`
    /// (arithmetic), `_shuffle` (shuffle), `_shuffle_relative` (shuffle relative),
    /// `_clustered_reduce` (clustered) and `_rotate` (shuffle: OpenCL rotates modulo the
    /// maximum sub-group size, which is the work-group's size in a work-group smaller than
    /// a Vulkan subgroup, where `VK_KHR_shader_subgroup_rotate` rotates modulo
    /// `SubgroupSize`; `lower::collective` shuffles from the computed lane instead). None
    /// without sub-groups.
    pub fn subgroup_extensions(&self) -> Vec<(&'static str, u32)> {
        let ops = self.subgroup_ops();
        let p = &self.phys;
        let v1 = make_version(1, 0, 0);
        [
            (
                "cl_khr_subgroup_extended_types",
                self.subgroups() && p.shader_int8 && p.shader_int16,
            ),
            ("cl_khr_subgroup_non_uniform_vote", ops.vote),
            ("cl_khr_subgroup_ballot", ops.ballot),
            ("cl_khr_subgroup_non_uniform_arithmetic", ops.arithmetic),
            ("cl_khr_subgroup_shuffle", ops.shuffle),
            ("cl_khr_subgroup_shuffle_relative", ops.shuffle_relative),
            ("cl_khr_subgroup_clustered_reduce", ops.clustered),
            ("cl_khr_subgroup_rotate", ops.shuffle),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| (n, v1))
        .collect()
    }

    /// `CL_DEVICE_MAX_NUM_SUB_GROUPS`: sub-groups in the largest work-group (0 without them).
    pub fn max_num_sub_groups(&self) -> u32 {
        if self.subgroups() {
            (self.max_work_group_size() as u32).div_ceil(self.phys.subgroup_size)
        } else {
            0
        }
    }

    /// `CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT`: the prelude's implementation
    /// needs one scratch slot of 8 bytes per work-item of the largest group in local memory.
    pub fn work_group_collective_functions(&self) -> bool {
        (self.max_work_group_size() as u64) * 8 <= self.local_mem_size() / 2
    }

    /// `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`, consistent with [`Self::opencl_c_features`]
    /// (OpenCL 3.0 section 4.2, table "Device queries").
    pub fn atomic_memory_capabilities(&self) -> u64 {
        CL_DEVICE_ATOMIC_ORDER_RELAXED
            | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
            | CL_DEVICE_ATOMIC_ORDER_SEQ_CST
            | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
            | CL_DEVICE_ATOMIC_SCOPE_DEVICE
            | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES
    }

    /// `CL_DEVICE_ATOMIC_FENCE_CAPABILITIES`: the memory capabilities plus work-item scope
    /// (`atomic_work_item_fence` with `memory_scope_work_item`).
    pub fn atomic_fence_capabilities(&self) -> u64 {
        self.atomic_memory_capabilities() | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM
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
