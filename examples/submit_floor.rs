//! The Vulkan driver's own round trip for one small dispatch (issue 17): what a launch costs
//! below vkcl. With plain ash and vkcl's buffer-copy shader (64 work-items, one work-group,
//! 1 KiB copied), one pre-recorded command buffer is submitted `N` times, each submission
//! signalling the next value of a timeline semaphore, and the time from `vkQueueSubmit` to the
//! value being seen is measured three ways:
//!
//! - `wait`: the submitting thread blocks in `vkWaitSemaphores`;
//! - `poll`: the submitting thread polls `vkGetSemaphoreCounterValue` (what vkcl does on GPUs);
//! - `handoff`: a second thread submits and waits, the first hands it the job and is woken by it
//!   through a channel (the two thread hops vkcl's queue adds on top of the driver).
//!
//! Prints the median, minimum and 90th percentile in microseconds of each. Compare with
//! `vkcl-bench --workloads launch_latency` and clpeak's kernel launch latency on the same
//! machine (docs/performance.md).
//!
//! ```sh
//! cargo run --release --example submit_floor -- [N]    # default 2000
//! ```
use ash::vk;
use std::sync::mpsc::channel;
use std::time::Instant;
#[path = "common/vk.rs"]
mod vk_probe;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("a count"))
        .unwrap_or(2000);
    let p = vk_probe::open(1 << 12);
    let cmd = p.copy_command(64, 1 << 11);
    let timeline = p.timeline();
    let mut value = 0u64;
    let mut submit = |p: &vk_probe::Probe| -> u64 {
        value += 1;
        let sems = [timeline];
        let vals = [value];
        let cmds = [cmd];
        let mut tl = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&vals);
        let info = [vk::SubmitInfo::default()
            .command_buffers(&cmds)
            .signal_semaphores(&sems)
            .push_next(&mut tl)];
        // SAFETY: the command buffer was recorded without ONE_TIME_SUBMIT and each submission
        // is waited for before the next, so it is never pending twice.
        unsafe { p.device.queue_submit(p.queue, &info, vk::Fence::null()) }.expect("vkQueueSubmit");
        value
    };
    let wait = |p: &vk_probe::Probe, v: u64| {
        let sems = [timeline];
        let vals = [v];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&vals);
        // SAFETY: a valid semaphore of this device.
        unsafe { p.device.wait_semaphores(&info, u64::MAX) }.expect("vkWaitSemaphores");
    };
    let poll = |p: &vk_probe::Probe, v: u64| {
        // SAFETY: a valid semaphore of this device.
        while unsafe { p.device.get_semaphore_counter_value(timeline) }.expect("counter") < v {
            std::hint::spin_loop();
        }
    };
    let mut wait_times = Vec::with_capacity(n);
    let mut poll_times = Vec::with_capacity(n);
    for i in 0..n + 20 {
        let t = Instant::now();
        let v = submit(&p);
        wait(&p, v);
        let dt = t.elapsed().as_secs_f64() * 1e6;
        if i >= 20 {
            wait_times.push(dt);
        }
        let t = Instant::now();
        let v = submit(&p);
        poll(&p, v);
        let dt = t.elapsed().as_secs_f64() * 1e6;
        if i >= 20 {
            poll_times.push(dt);
        }
    }
    // The hand-off: a worker thread submits and waits, the caller blocks on a channel.
    let handoff_times = std::thread::scope(|s| {
        let (job_tx, job_rx) = channel::<()>();
        let (done_tx, done_rx) = channel::<()>();
        let p = &p;
        s.spawn(move || {
            while job_rx.recv().is_ok() {
                let v = submit(p);
                wait(p, v);
                done_tx.send(()).expect("the caller");
            }
        });
        let mut times = Vec::with_capacity(n);
        for i in 0..n + 20 {
            let t = Instant::now();
            job_tx.send(()).expect("the worker");
            done_rx.recv().expect("the worker");
            if i >= 20 {
                times.push(t.elapsed().as_secs_f64() * 1e6);
            }
        }
        drop(job_tx);
        times
    });
    for (name, mut t) in [
        ("wait", wait_times),
        ("poll", poll_times),
        ("handoff", handoff_times),
    ] {
        t.sort_by(f64::total_cmp);
        println!(
            "{name:>8}: median {:.1} us, min {:.1}, p90 {:.1} ({n} submissions)",
            t[t.len() / 2],
            t[0],
            t[t.len() * 9 / 10]
        );
    }
}
