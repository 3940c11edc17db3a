//! What the plain-Vulkan probes share (`fault_probe`, `submit_floor`): the first device with
//! a compute queue, a device-local buffer with its device address, vkcl's buffer-copy pipeline
//! and a command buffer that runs it once. Included with `#[path = "common/vk.rs"] mod vk;`.
#![allow(dead_code)]
use ash::vk;
use vkcl::backend::vulkan::copy_kernel::{compute_pipeline, spirv};

/// A device, its first compute queue, one buffer and the copy pipeline.
pub struct Probe {
    /// The loaded Vulkan loader: dropping it would unload the library under the handles.
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub device: ash::Device,
    pub family: u32,
    pub queue: vk::Queue,
    /// `VkPhysicalDeviceProperties::deviceType`.
    pub device_type: vk::PhysicalDeviceType,
    /// The buffer's device address; `size` bytes.
    pub address: u64,
    pub size: u64,
    pub layout: vk::PipelineLayout,
    pub pipeline: vk::Pipeline,
    pub pool: vk::CommandPool,
}

/// Opens the first Vulkan device (printing its name) with a `size`-byte device-local buffer.
/// Panics with the failing call's name: these are probes, not library code.
pub fn open(size: u64) -> Probe {
    // SAFETY: every call below follows the Vulkan spec's valid usage for a single-threaded
    // program; handles are used only while alive (the process exits without destroying them).
    unsafe {
        let entry = ash::Entry::load().expect("the Vulkan loader");
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .expect("vkCreateInstance");
        let phys = instance.enumerate_physical_devices().expect("devices")[0];
        let props = instance.get_physical_device_properties(phys);
        let name = std::ffi::CStr::from_ptr(props.device_name.as_ptr());
        println!(
            "device: {name:?}, driver version {:#x}",
            props.driver_version
        );
        let family = instance
            .get_physical_device_queue_family_properties(phys)
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .expect("a compute queue") as u32;
        let prio = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(true)
            .timeline_semaphore(true);
        let device = instance
            .create_device(
                phys,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .push_next(&mut f12),
                None,
            )
            .expect("vkCreateDevice");
        let queue = device.get_device_queue(family, 0);
        let buffer = device
            .create_buffer(
                &vk::BufferCreateInfo::default().size(size).usage(
                    vk::BufferUsageFlags::STORAGE_BUFFER
                        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                ),
                None,
            )
            .expect("vkCreateBuffer");
        let req = device.get_buffer_memory_requirements(buffer);
        let mem_props = instance.get_physical_device_memory_properties(phys);
        let type_index = (0..mem_props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && mem_props.memory_types[i as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .expect("device-local memory");
        let mut flags =
            vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let memory = device
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(type_index)
                    .push_next(&mut flags),
                None,
            )
            .expect("vkAllocateMemory");
        device
            .bind_buffer_memory(buffer, memory, 0)
            .expect("vkBindBufferMemory");
        let address = device
            .get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer));
        let (layout, pipeline) = compute_pipeline(
            &device,
            vk::PipelineCache::null(),
            &spirv(),
            &[],
            24,
            vk::PipelineLayout::null(),
        )
        .expect("the copy pipeline");
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                None,
            )
            .expect("vkCreateCommandPool");
        Probe {
            entry,
            instance,
            device,
            family,
            queue,
            device_type: props.device_type,
            address,
            size,
            layout,
            pipeline,
            pool,
        }
    }
}

impl Probe {
    /// A command buffer that copies `words` 16-byte words from the buffer's start to `offset`
    /// bytes past it with the copy shader (the push block of copy_kernel.rs), in
    /// `ceil(words / 64)` work-groups.
    pub fn copy_command(&self, words: u32, offset: u64) -> vk::CommandBuffer {
        // SAFETY: as in `open`; the command buffer is recorded once from this thread.
        unsafe {
            let d = &self.device;
            let cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.pool)
                        .command_buffer_count(1),
                )
                .expect("vkAllocateCommandBuffers")[0];
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .expect("begin");
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            let mut push = [0u8; 24];
            push[0..8].copy_from_slice(&self.address.to_le_bytes());
            push[8..16].copy_from_slice(&(self.address + offset).to_le_bytes());
            push[16..20].copy_from_slice(&words.to_le_bytes());
            push[20..24].copy_from_slice(&words.to_le_bytes());
            d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            d.cmd_dispatch(cmd, words.div_ceil(64), 1, 1);
            d.end_command_buffer(cmd).expect("end");
            cmd
        }
    }

    /// A timeline semaphore starting at 0.
    pub fn timeline(&self) -> vk::Semaphore {
        let mut info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        // SAFETY: as in `open`.
        unsafe {
            self.device
                .create_semaphore(
                    &vk::SemaphoreCreateInfo::default().push_next(&mut info),
                    None,
                )
                .expect("timeline")
        }
    }
}
