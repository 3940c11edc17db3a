//! The logical device: one `VkDevice` per physical device, its compute queues and allocator.

use super::instance::{Instance, PhysicalDevice};
use super::pipeline_cache::PersistentCache;
use crate::backend::cuda::{self, CudaDevice};
use crate::backend::error::BackendError;
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
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
    /// How many live OpenCL command queues use each of `queues` (see [`Device::lease_queue`]).
    queue_users: Mutex<Vec<usize>>,
    pub allocator: Mutex<Allocator>,
    /// Whether `VK_KHR_shader_non_semantic_info` etc. could be enabled: filled as extensions land.
    pub enabled_extensions: Vec<&'static std::ffi::CStr>,
    /// The `VkPipelineCache` every pipeline is created with, loaded from and saved to disk
    /// (see [`PersistentCache`]).
    pub pipeline_cache: Arc<PersistentCache>,
    /// On the CUDA path (an NVIDIA device whose CUDA twin has the same UUID): that CUDA device
    /// and `VK_KHR_external_memory_fd`, so buffers are allocated exportable and imported into
    /// CUDA ([`super::memory::Buffer::cuda_address`]).
    pub cuda: Option<(&'static CudaDevice, ash::khr::external_memory_fd::Device)>,
    /// On the CUDA path with `VK_KHR_external_semaphore_fd`: timeline semaphores are created
    /// exportable and imported into CUDA on first use
    /// ([`super::queue::Timeline::cuda_semaphore`]).
    pub semaphore_fd: Option<ash::khr::external_semaphore_fd::Device>,
    /// `VK_KHR_push_descriptor` where the driver has it: how kernels' image and sampler
    /// descriptors are bound ([`super::recorder::Recorder::push_descriptors`]).
    pub push_descriptor: Option<ash::khr::push_descriptor::Device>,
    /// The samplers of kernels' sampler arguments by their encoded state
    /// ([`super::sampler::sampler`]); live as long as the device.
    pub samplers: Mutex<std::collections::HashMap<u32, vk::Sampler>>,
    /// The physical device's memory types (exportable allocations choose their own).
    pub memory_properties: vk::PhysicalDeviceMemoryProperties,
    /// The buffer-copy shader, made at the first large aligned copy on a device that copies
    /// with it ([`Device::copy_kernel`]); None there when it could not be made (logged).
    copy_kernel: std::sync::OnceLock<Option<super::copy_kernel::CopyKernel>>,
    /// The image-copy shaders ([`Device::image_copy_kernels`]), made at the first image copy
    /// on a device that copies images with them; None there when they could not be made.
    image_copy_kernels: std::sync::OnceLock<Option<super::image_copy_kernel::ImageCopyKernels>>,
    /// `shaderStorageImageExtendedFormats` is enabled (storage images of `R8_UINT`,
    /// `R16_UINT`, `R32G32_UINT`... in shaders: the image-copy shaders' 1-, 2- and 8-byte
    /// texels).
    pub storage_extended_formats: bool,
    /// Set once the device is lost (`VK_ERROR_DEVICE_LOST` from any call, a CUDA error on a
    /// green context's stream, or [`inject_device_loss`]): from then on every wait on its
    /// timelines ends with that error and every new command fails (see [`Device::lost`]).
    lost: std::sync::atomic::AtomicBool,
    /// NVML's critical Xid events of this GPU (NVIDIA devices, `VKCL_GPU_FAULT_WATCH` not 0):
    /// filled by a thread started with the device; see [`Device::xid_seen`].
    xid: Option<Arc<std::sync::OnceLock<Option<super::xid::XidWatch>>>>,
}

/// Debug fault injection (`vkcl_debug_inject_device_loss`): the next device submission of any
/// engine is not made and its device is marked lost, as a GPU fault leaves it: its timeline
/// value is never signalled.
static INJECT_LOSS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Arms [`INJECT_LOSS`] for the next device submission (tests of the device-loss path).
pub fn inject_device_loss() {
    INJECT_LOSS.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Takes an armed [`INJECT_LOSS`] (true once per arming).
pub fn take_injected_loss() -> bool {
    INJECT_LOSS.swap(false, std::sync::atomic::Ordering::SeqCst)
}

// SAFETY: ash's Device is a function table plus a handle; vkcl synchronises queue access and
// the allocator itself (Mutex), other device-level calls are thread-safe per the Vulkan spec.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl Device {
    /// The buffer-copy shader where this device copies large aligned buffers with it
    /// (`super::copy_kernel::wanted`: NVIDIA's driver, or `VKCL_COPY_KERNEL`), made on first
    /// use; None elsewhere, or when it could not be made (logged once: copies then stay
    /// `vkCmdCopyBuffer`).
    pub fn copy_kernel(&self) -> Option<&super::copy_kernel::CopyKernel> {
        let setting = crate::util::config::config().copy_kernel;
        if !super::copy_kernel::wanted(self.phys.vendor_id, setting) {
            return None;
        }
        self.copy_kernel
            .get_or_init(|| {
                match super::copy_kernel::CopyKernel::new(&self.raw, self.pipeline_cache.raw) {
                    Ok(k) => Some(k),
                    Err(e) => {
                        tracing::warn!("the buffer-copy shader could not be made ({e}): copies stay vkCmdCopyBuffer");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Whether this device copies images with the image-copy shaders
    /// (`super::image_copy_kernel`): where it copies buffers with a shader
    /// ([`super::copy_kernel::wanted`]) and has `VK_KHR_push_descriptor`. Images made on such a
    /// device get a copy view where their format allows.
    pub fn copies_images_with_shader(&self) -> bool {
        let setting = crate::util::config::config().copy_kernel;
        super::copy_kernel::wanted(self.phys.vendor_id, setting) && self.push_descriptor.is_some()
    }

    /// The image-copy shaders where [`Device::copies_images_with_shader`], made on first use;
    /// None elsewhere, or when they could not be made (logged once: image copies then stay
    /// `vkCmdCopyImage`).
    pub fn image_copy_kernels(&self) -> Option<&super::image_copy_kernel::ImageCopyKernels> {
        if !self.copies_images_with_shader() {
            return None;
        }
        self.image_copy_kernels
            .get_or_init(|| {
                let made = super::image_copy_kernel::ImageCopyKernels::new(&self.raw);
                made.map_err(|e| {
                    tracing::warn!("the image-copy shaders could not be made ({e}): image copies stay vkCmdCopyImage")
                })
                .ok()
            })
            .as_ref()
    }

    /// Creates the logical device with the features vkcl uses (those the device has).
    /// Errors: the Vulkan result of `vkCreateDevice`, or the allocator's creation.
    pub fn new(
        instance: &'static Instance,
        phys: Arc<PhysicalDevice>,
    ) -> Result<Arc<Device>, BackendError> {
        let priorities = vec![1.0f32; phys.compute_queue_count as usize];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(phys.compute_queue_family)
            .queue_priorities(&priorities)];
        // SAFETY: a physical device of this instance; plain query.
        let available = unsafe { instance.raw.get_physical_device_features(phys.raw) };
        let features = vk::PhysicalDeviceFeatures::default()
            // Image arguments: storage images of `Unknown` format (docs/images.md).
            .shader_storage_image_read_without_format(
                available.shader_storage_image_read_without_format != 0,
            )
            .shader_storage_image_write_without_format(
                available.shader_storage_image_write_without_format != 0,
            )
            // The image-copy shaders' views of 1-, 2- and 8-byte texels.
            .shader_storage_image_extended_formats(
                available.shader_storage_image_extended_formats != 0,
            )
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
            .shader_shared_int64_atomics(phys.shader_shared_int64_atomics)
            .shader_subgroup_extended_types(phys.subgroup_extended_types)
            .subgroup_broadcast_dynamic_id(phys.subgroup_broadcast_dynamic_id)
            .host_query_reset(true);
        let mut enabled_extensions: Vec<&'static std::ffi::CStr> = Vec::new();
        let mut atomic_float = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
            .shader_shared_float32_atomics(true);
        if phys.shader_shared_float32_atomics {
            enabled_extensions.push(ash::ext::shader_atomic_float::NAME);
        }
        // Image arguments are pushed descriptors (docs/images.md).
        let push_descriptor = phys.has_extension(ash::khr::push_descriptor::NAME);
        if push_descriptor {
            enabled_extensions.push(ash::khr::push_descriptor::NAME);
        }
        if phys.has_extension(ash::nv::shader_sm_builtins::NAME) {
            enabled_extensions.push(ash::nv::shader_sm_builtins::NAME);
        }
        // The CUDA path: only NVIDIA devices are looked up in CUDA at all.
        let cuda_twin =
            if phys.vendor_id == 0x10DE && phys.has_extension(ash::khr::external_memory_fd::NAME) {
                cuda::device_for_uuid(&phys.device_uuid)
            } else {
                None
            };
        // Buffers imported from opaque fds (cl_khr_external_memory_opaque_fd), and the CUDA
        // path's exported buffers.
        let memory_fd = phys.has_extension(ash::khr::external_memory_fd::NAME);
        if memory_fd {
            enabled_extensions.push(ash::khr::external_memory_fd::NAME);
        }
        // Timelines shared with CUDA (ordering across the two APIs on the device).
        let semaphore_export =
            cuda_twin.is_some() && phys.has_extension(ash::khr::external_semaphore_fd::NAME);
        if semaphore_export {
            enabled_extensions.push(ash::khr::external_semaphore_fd::NAME);
        }
        let ext_ptrs: Vec<_> = enabled_extensions.iter().map(|e| e.as_ptr()).collect();
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_info)
            .enabled_features(&features)
            .enabled_extension_names(&ext_ptrs)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if phys.shader_shared_float32_atomics {
            info = info.push_next(&mut atomic_float);
        }
        // SAFETY: the physical device belongs to the instance; the create info outlives the call.
        let raw = unsafe { instance.raw.create_device(phys.raw, &info, None) }?;
        let queues: Vec<_> = (0..phys.compute_queue_count)
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
        .map_err(BackendError::from)?;
        let pipeline_cache = PersistentCache::open(&raw, &phys);
        let cuda = cuda_twin.map(|c| {
            (
                c,
                ash::khr::external_memory_fd::Device::new(&instance.raw, &raw),
            )
        });
        // SAFETY: plain query.
        let memory_properties =
            unsafe { instance.raw.get_physical_device_memory_properties(phys.raw) };
        let semaphore_fd = semaphore_export
            .then(|| ash::khr::external_semaphore_fd::Device::new(&instance.raw, &raw));
        let push_descriptor =
            push_descriptor.then(|| ash::khr::push_descriptor::Device::new(&instance.raw, &raw));
        let (phys_vendor, phys_uuid) = (phys.vendor_id, phys.device_uuid);
        let device = Arc::new(Device {
            push_descriptor,
            samplers: Mutex::new(std::collections::HashMap::new()),
            copy_kernel: std::sync::OnceLock::new(),
            image_copy_kernels: std::sync::OnceLock::new(),
            storage_extended_formats: available.shader_storage_image_extended_formats != 0,
            cuda,
            semaphore_fd,
            memory_properties,
            phys,
            raw,
            queue_users: Mutex::new(vec![0; queues.len()]),
            queues,
            allocator: Mutex::new(allocator),
            enabled_extensions,
            pipeline_cache,
            lost: std::sync::atomic::AtomicBool::new(false),
            xid: (phys_vendor == 0x10DE && crate::util::config::config().gpu_fault_watch)
                .then(|| super::xid::start(phys_uuid)),
        });
        Ok(device)
    }

    /// Whether the device is lost (see the `lost` field): its commands fail with
    /// `CL_OUT_OF_RESOURCES` and `CL_DEVICE_AVAILABLE` is false.
    pub fn is_lost(&self) -> bool {
        self.lost.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The first critical Xid (a GPU fault the kernel driver logged: when vkcl saw it, its
    /// number) that NVML delivered for this GPU since the device was made; None where no
    /// fault was reported or there is no watch (not NVIDIA, no NVML, `VKCL_GPU_FAULT_WATCH=0`).
    pub fn xid_seen(&self) -> Option<(std::time::Instant, u64)> {
        self.xid.as_ref()?.get()?.as_ref()?.seen()
    }

    /// Marks the device lost (logged once, naming `why`).
    pub fn mark_lost(&self, why: &str) {
        if !self.lost.swap(true, std::sync::atomic::Ordering::AcqRel) {
            tracing::error!(
                device = %self.phys.name,
                "device lost ({why}): its pending and new commands fail with CL_OUT_OF_RESOURCES"
            );
        }
    }

    /// Passes `r` through, marking the device lost when it is `VK_ERROR_DEVICE_LOST`.
    pub fn note<T>(&self, r: Result<T, vk::Result>, what: &str) -> Result<T, vk::Result> {
        if r.as_ref().err() == Some(&vk::Result::ERROR_DEVICE_LOST) {
            self.mark_lost(what);
        }
        r
    }

    /// Leases a queue of the compute family for a new command queue: the one with the fewest
    /// live users (lowest index first), so every command queue, of a root device or of a
    /// sub-device, gets a `VkQueue` of its own while the family has spare ones (the H200's
    /// compute-only family, the default, has 8; its graphics family 16: `VKCL_QUEUE_FAMILY`),
    /// and queues are shared under their lock once there are more command queues than that
    /// (lavapipe has one).
    pub fn lease_queue(self: &Arc<Self>) -> QueueLease {
        let mut users = self.queue_users.lock().unwrap_or_else(|e| e.into_inner());
        let index = (0..users.len()).min_by_key(|&i| users[i]).unwrap_or(0);
        if let Some(u) = users.get_mut(index) {
            *u += 1;
        }
        QueueLease {
            device: self.clone(),
            index,
        }
    }
}

/// One command queue's use of one `VkQueue` of the compute family ([`Device::lease_queue`]);
/// ends when dropped.
pub struct QueueLease {
    device: Arc<Device>,
    /// Index into [`Device::queues`].
    pub index: usize,
}

impl Drop for QueueLease {
    fn drop(&mut self) {
        let mut users = self
            .device
            .queue_users
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(u) = users.get_mut(self.index) {
            *u = u.saturating_sub(1);
        }
    }
}
