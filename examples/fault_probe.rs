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
#[path = "common/vk.rs"]
mod vk_probe;

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
    // A 1 MiB device buffer: the shader's smallest copy; half of it copied to `offset` bytes
    // past its start.
    let size = 1u64 << 20;
    let p = vk_probe::open(size);
    let (device, queue) = (&p.device, p.queue);
    let cmd = p.copy_command((size / 2 / 16) as u32, offset);
    let timeline = p.timeline();
    // SAFETY: every call below follows the Vulkan spec's valid usage for a single-threaded
    // program; handles are used only while alive (the process exits without destroying them).
    unsafe {
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
