//! The logical device: one `VkDevice` per physical device, its compute queues and allocator.

use super::instance::{Instance, PhysicalDevice};
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A logical Vulkan device with every queue of its compute family.
///
/// Lives as long as the process (devices belong to the platform, which is never torn down).
pub struct Device {
    pub phys: Arc<PhysicalDevice>,
    pub raw: ash::Device,
    /// The queues of the compute family; a `VkQueue` needs external synchronisation, hence the
    /// locks (queues are shared by OpenCL command queues when there are fewer than those).
    pub queues: Vec<Mutex<vk::Queue>>,
    next_queue: AtomicUsize,
    pub allocator: Mutex<Allocator>,
    /// Whether `VK_KHR_shader_non_semantic_info` etc. could be enabled: filled as extensions land.
    pub enabled_extensions: Vec<&'static std::ffi::CStr>,
}

// SAFETY: ash's Device is a function table plus a handle; vkcl synchronises queue access and
// the allocator itself (Mutex), other device-level calls are thread-safe per the Vulkan spec.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl Device {
    /// Creates the logical device with the features vkcl uses (those the device has).
    /// Errors: the `vk::Result` of `vkCreateDevice` or the allocator's creation.
    pub fn new(instance: &'static Instance, phys: Arc<PhysicalDevice>) -> Result<Arc<Device>, vk::Result> {
        let priorities = vec![1.0f32; phys.compute_queue_count as usize];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(phys.compute_queue_family)
            .queue_priorities(&priorities)];
        let features = vk::PhysicalDeviceFeatures::default()
            .shader_int16(phys.shader_int16)
            .shader_int64(phys.shader_int64)
            .shader_float64(phys.shader_float64);
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default()
            .storage_buffer16_bit_access(phys.storage_16bit)
            .uniform_and_storage_buffer16_bit_access(false);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(true)
            .timeline_semaphore(true)
            .storage_buffer8_bit_access(phys.storage_8bit)
            .shader_int8(phys.shader_int8)
            .shader_float16(phys.shader_float16)
            .vulkan_memory_model(phys.vulkan_memory_model)
            .vulkan_memory_model_device_scope(phys.vulkan_memory_model)
            .shader_buffer_int64_atomics(phys.shader_int64_atomics)
            .host_query_reset(true);
        let mut enabled_extensions: Vec<&'static std::ffi::CStr> = Vec::new();
        if phys.has_extension(ash::nv::shader_sm_builtins::NAME) {
            enabled_extensions.push(ash::nv::shader_sm_builtins::NAME);
        }
        let ext_ptrs: Vec<_> = enabled_extensions.iter().map(|e| e.as_ptr()).collect();
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_features(&features)
            .enabled_extension_names(&ext_ptrs)
            .push_next(&mut f11)
            .push_next(&mut f12);
        // SAFETY: the physical device belongs to the instance; the create info outlives the call.
        let raw = unsafe { instance.raw.create_device(phys.raw, &info, None) }?;
        let queues = (0..phys.compute_queue_count)
            // SAFETY: the family and index were requested in the create info.
            .map(|i| Mutex::new(unsafe { raw.get_device_queue(phys.compute_queue_family, i) }))
            .collect();
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.raw.clone(),
            device: raw.clone(),
            physical_device: phys.raw,
            debug_settings: Default::default(),
            buffer_device_address: true,
            allocation_sizes: Default::default(),
        })
        .map_err(|e| {
            tracing::error!("gpu-allocator: {e}");
            vk::Result::ERROR_INITIALIZATION_FAILED
        })?;
        Ok(Arc::new(Device {
            phys,
            raw,
            queues,
            next_queue: AtomicUsize::new(0),
            allocator: Mutex::new(allocator),
            enabled_extensions,
        }))
    }

    /// Picks a queue index for a new command queue: round-robin over the family's queues.
    pub fn pick_queue(&self) -> usize {
        self.next_queue.fetch_add(1, Ordering::Relaxed) % self.queues.len()
    }
}
