//! Devices: a root device per Vulkan physical device (sub-devices come with partitioning).

use super::error::{ClError, ClResult};
use super::object::{self, ClObject, Header, Kind};
use super::platform::make_version;
use crate::backend::vulkan::{self, Instance, PhysicalDevice};
use ash::vk;
use opencl_sys::*;
use std::sync::{Arc, OnceLock};

/// llvmpipe's cap on its thread count (`LP_MAX_THREADS` in Mesa 22.x).
const LLVMPIPE_MAX_THREADS: u32 = 32;

/// An OpenCL device backed by a Vulkan physical device.
pub struct Device {
    header: Header,
    instance: &'static Instance,
    /// Facts read from the Vulkan driver.
    pub phys: Arc<PhysicalDevice>,
    vk: OnceLock<Result<Arc<vulkan::Device>, vk::Result>>,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`, see [`compute_units`].
    pub compute_units: u32,
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
/// driver tells nothing, the estimate is 1 (documented in README.md).
pub fn compute_units(phys: &PhysicalDevice) -> u32 {
    if let Some(sms) = phys.sm_count {
        return sms.max(1);
    }
    if phys.driver_id == vk::DriverId::MESA_LLVMPIPE {
        let cpus = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
        let n = std::env::var("LP_NUM_THREADS").ok().and_then(|v| v.trim().parse::<u32>().ok()).unwrap_or(cpus);
        return n.clamp(1, LLVMPIPE_MAX_THREADS);
    }
    1
}

impl Device {
    /// A root device for `phys`, registered as a live handle.
    pub fn new_root(instance: &'static Instance, phys: Arc<PhysicalDevice>) -> Arc<Device> {
        let compute_units = compute_units(&phys);
        object::register(Device { header: Header::new(Kind::Device), instance, phys, vk: OnceLock::new(), compute_units })
    }

    /// The logical Vulkan device, created at first use.
    /// Errors: `CL_OUT_OF_RESOURCES` if `vkCreateDevice` fails.
    pub fn vk(&self) -> ClResult<&Arc<vulkan::Device>> {
        self.vk
            .get_or_init(|| vulkan::Device::new(self.instance, self.phys.clone()))
            .as_ref()
            .map_err(|e| {
                tracing::error!("vkCreateDevice failed: {e}");
                ClError(CL_OUT_OF_RESOURCES)
            })
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
        self.phys.max_memory_allocation_size.min(self.phys.max_buffer_size).min(self.global_mem_size())
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
        self.phys.limits.max_compute_work_group_size.map(|v| v as usize)
    }

    /// `CL_DEVICE_LOCAL_MEM_SIZE`, bytes.
    pub fn local_mem_size(&self) -> u64 {
        self.phys.limits.max_compute_shared_memory_size as u64
    }

    /// `CL_DEVICE_MAX_CLOCK_FREQUENCY` in MHz: for CPU devices the CPU's, from /proc/cpuinfo;
    /// 0 (unknown) where Vulkan tells nothing.
    pub fn max_clock_mhz(&self) -> u32 {
        if self.phys.device_type != vk::PhysicalDeviceType::CPU {
            return 0;
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

    /// Device extensions with versions (`CL_DEVICE_EXTENSIONS_WITH_VERSION`).
    pub fn extensions(&self) -> Vec<(&'static str, u32)> {
        let mut v = vec![
            ("cl_khr_icd", make_version(1, 0, 0)),
            ("cl_khr_global_int32_base_atomics", make_version(1, 0, 0)),
            ("cl_khr_global_int32_extended_atomics", make_version(1, 0, 0)),
            ("cl_khr_local_int32_base_atomics", make_version(1, 0, 0)),
            ("cl_khr_local_int32_extended_atomics", make_version(1, 0, 0)),
            ("cl_khr_device_uuid", make_version(1, 0, 0)),
            ("cl_khr_suggested_local_work_size", make_version(1, 0, 0)),
        ];
        // cl_khr_command_buffer (api/command_buffer.rs), at 0.9.4 with its older ABI under
        // VKCL_COMMAND_BUFFER_REVISION=0.9.4, else 0.9.8 with mutable dispatch 0.9.5.
        if crate::util::config::config().command_buffer_094 {
            v.push(("cl_khr_command_buffer", make_version(0, 9, 4)));
        } else {
            v.push(("cl_khr_command_buffer", make_version(0, 9, 8)));
            v.push(("cl_khr_command_buffer_mutable_dispatch", make_version(0, 9, 5)));
        }
        if self.phys.storage_8bit {
            v.push(("cl_khr_byte_addressable_store", make_version(1, 0, 0)));
        }
        v
    }

    /// `CL_DEVICE_OPENCL_C_FEATURES`: the optional OpenCL C 3.0 features supported.
    pub fn opencl_c_features(&self) -> Vec<(&'static str, u32)> {
        let mut v = Vec::new();
        if self.phys.shader_int64 {
            v.push(("__opencl_c_int64", make_version(3, 0, 0)));
        }
        v
    }

    /// `CL_DEVICE_PROFILING_TIMER_RESOLUTION` in ns.
    pub fn timer_resolution_ns(&self) -> usize {
        1
    }
}
