//! Which Vulkan calls report a GPU fault (issue 18, finding 3): on NVIDIA's driver a kernel's
//! store to an unmapped address raises an MMU fault (Xid 13) and its timeline value is never
//! signalled, while `vkWaitSemaphores` keeps answering `VK_TIMEOUT` (tests/device_loss.rs
//! `real_gpu_fault_ends_in_an_error` hung there). This probe, with plain ash and vkcl's
//! buffer-copy shader, submits one dispatch whose destination is `--offset` bytes past a small
//! buffer (0: inside it, the control run) with a timeline signal and a fence, then every half
//! second for `--seconds` prints what each candidate call returns: the counter
//! (`vkGetSemaphoreCounterValue`), `vkWaitSemaphores` (1 ms), `vkGetFenceStatus`, an empty
//! `vkQueueSubmit`, and at the end `vkQueueWaitIdle` on a watchdog thread.
//!
//! ```sh
//! cargo run --example fault_probe -- [OFFSET_BYTES] [SECONDS]   # default 2^40, 20
//! ```
use ash::vk;
use std::time::{Duration, Instant};
use vkcl::backend::vulkan::copy_kernel::{compute_pipeline, spirv};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let offset = args.first().copied().unwrap_or(1 << 40);
    let seconds = args.get(1).copied().unwrap_or(20);
    run(offset, seconds)
}

fn run(offset: u64, seconds: u64) {
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
        // A 1 MiB device buffer: the shader's smallest copy.
        let size = 1u64 << 20;
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
        let cmd = device
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .command_buffer_count(1),
            )
            .expect("vkAllocateCommandBuffers")[0];
        device
            .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
            .expect("begin");
        device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
        // Half the buffer copied to `offset` bytes past its start (the push block of copy_kernel.rs).
        let words = (size / 2 / 16) as u32;
        let mut push = [0u8; 24];
        push[0..8].copy_from_slice(&address.to_le_bytes());
        push[8..16].copy_from_slice(&(address + offset).to_le_bytes());
        push[16..20].copy_from_slice(&words.to_le_bytes());
        push[20..24].copy_from_slice(&words.to_le_bytes());
        device.cmd_push_constants(cmd, layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
        device.cmd_dispatch(cmd, words.div_ceil(64), 1, 1);
        device.end_command_buffer(cmd).expect("end");
        let mut timeline_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let timeline = device
            .create_semaphore(
                &vk::SemaphoreCreateInfo::default().push_next(&mut timeline_info),
                None,
            )
            .expect("timeline");
        let fence = device
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .expect("fence");
        let sems = [timeline];
        let one = [1u64];
        let mut values = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&one);
        let cmds = [cmd];
        let submit = [vk::SubmitInfo::default()
            .command_buffers(&cmds)
            .signal_semaphores(&sems)
            .push_next(&mut values)];
        let t0 = Instant::now();
        println!(
            "submit (destination {offset:#x} bytes past the buffer): {:?}",
            device.queue_submit(queue, &submit, fence)
        );
        let wait = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&one);
        while t0.elapsed() < Duration::from_secs(seconds) {
            std::thread::sleep(Duration::from_millis(500));
            let counter = device.get_semaphore_counter_value(timeline);
            let waited = device.wait_semaphores(&wait, 1_000_000);
            let fenced = device.get_fence_status(fence);
            let empty = device.queue_submit(queue, &[vk::SubmitInfo::default()], vk::Fence::null());
            println!(
            "{:>6.2} s: counter {counter:?}, vkWaitSemaphores {waited:?}, vkGetFenceStatus {fenced:?}, empty vkQueueSubmit {empty:?}",
            t0.elapsed().as_secs_f64()
        );
            if counter == Ok(1) && fenced == Ok(true) {
                break;
            }
        }
        // vkQueueWaitIdle may block for ever on a faulted queue: a watchdog ends the process.
        std::thread::spawn(|| {
            std::thread::sleep(Duration::from_secs(10));
            println!("vkQueueWaitIdle: still blocked after 10 s");
            std::process::exit(3);
        });
        println!("vkQueueWaitIdle: {:?}", device.queue_wait_idle(queue));
        println!("vkDeviceWaitIdle: {:?}", device.device_wait_idle());
    }
}
