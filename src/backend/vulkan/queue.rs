//! Timeline semaphores and the submission engine behind each OpenCL command queue.
//!
//! Every job submitted to an [`Engine`] takes the next value of the engine's timeline
//! semaphore. A worker thread takes jobs in order: it waits on the host until each dependency's
//! own signal has been submitted (never submitting a wait whose signal is not yet submitted, so
//! queues that share one `VkQueue` cannot deadlock, and a failed dependency can still fail its
//! dependants), then either records and submits a command buffer that waits on the
//! dependencies' timeline values and signals its own, or runs host work and signals its value
//! from the host. A completion thread waits for each value and reports completion.
//!
//! Jobs of one engine run in submission order (each waits on the value before it): OpenCL allows
//! an out-of-order queue to run in order, and a timeline's values must rise monotonically.

use super::device::Device;
use super::recorder::Recorder;
pub use super::timeline::{Probe, Timeline, POLL, SPIN};
use crate::backend::error::BackendError;
use ash::vk;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvError, Sender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long, on a GPU, an engine's threads and [`Engine::finish`] poll for their next step
/// before they sleep (`VKCL_HANDOFF_SPIN_US` overrides it). A launch followed by `clFinish`
/// crosses three threads (caller, submit, completion, caller); a thread woken from a futex
/// sleep resumes microseconds to tens of microseconds later, on the critical path of every
/// short launch, while a polling thread sees the hand-off at once.
pub const HANDOFF_SPIN_GPU: Duration = Duration::from_micros(200);

/// Receives from `rx`, polling for `spin` before blocking. Errors: the channel is closed.
fn recv_spinning<T>(rx: &Receiver<T>, spin: Duration) -> Result<T, RecvError> {
    if !spin.is_zero() {
        let start = Instant::now();
        loop {
            match rx.try_recv() {
                Ok(v) => return Ok(v),
                Err(TryRecvError::Disconnected) => return Err(RecvError),
                Err(TryRecvError::Empty) if start.elapsed() < spin => std::hint::spin_loop(),
                Err(TryRecvError::Empty) => break,
            }
        }
    }
    rx.recv()
}

/// A timeline point: a semaphore and a value on it.
pub type TimelinePoint = (Arc<Timeline>, u64);

/// Something a job waits for: an event of any queue, or a user event.
pub trait JobDependency: Send + Sync {
    /// Blocks until the dependency's signal has been submitted (or it has completed). Returns
    /// the timeline point a submission must wait on (None when it already completed on the
    /// host), or `Err(())` if the dependency failed (negative status).
    fn wait_submitted(&self) -> Result<Option<TimelinePoint>, ()>;
}

/// Told about a job's progress; implemented by OpenCL events.
pub trait JobObserver: Send + Sync {
    /// The job's timeline point, given before the job reaches the worker.
    fn assigned(&self, point: TimelinePoint);
    /// The job was submitted (`device_signal`: its timeline value will be signalled by a
    /// device submission already made; false for host work, whose value the host signals when
    /// it completes); `ns` is host time.
    fn submitted(&self, ns: u64, device_signal: bool);
    /// Told before `submitted` when the job rides in a batch whose submission signals the
    /// later value `signal` of its timeline, which a device or host wait for the job then
    /// waits for (no submission signals the job's own value).
    fn batched(&self, _signal: u64) {}
    /// Everything the job waits for has completed, so it runs now; `ns` is host time.
    fn running(&self, ns: u64);
    /// The job finished with `status` (`0` = CL_COMPLETE, negative = error); `start`/`end`
    /// are its execution times in host nanoseconds.
    fn completed(&self, status: i32, start: u64, end: u64);
}

/// What a job does.
pub enum Work {
    /// Device commands recorded into the job's own command buffer.
    Gpu(Box<dyn FnOnce(&mut Recorder) + Send>),
    /// Host work run once everything before it has completed; returns 0 or a negative status.
    Host(Box<dyn FnOnce() -> i32 + Send>),
    /// Nothing (markers, barriers): completes when everything before it has.
    Nop,
    /// Device work of another API (CUDA on a green context): given the timeline points it must
    /// wait for (other queues', and this queue's previous value unless the previous job was
    /// also foreign work, which the foreign API's own stream orders; points already reached
    /// are left out) and the point it must signal, it enqueues its waits, its work and the
    /// signal without blocking.
    Foreign(Box<dyn FnOnce(&[TimelinePoint], &TimelinePoint) -> ForeignOutcome + Send>),
}

/// What [`Work::Foreign`] did.
pub enum ForeignOutcome {
    /// The work and the signal of its timeline value are enqueued on the device; the probe,
    /// if any, is run while the value is waited for and reports the foreign API's errors
    /// (see [`Timeline::wait_probed`]).
    Enqueued(Option<Probe>),
    /// The work ran to completion on the calling thread (or failed before enqueuing the
    /// signal) with this status; the engine signals the value from the host.
    Completed(i32),
}

/// One command for an engine.
pub struct Job {
    pub deps: Vec<Arc<dyn JobDependency>>,
    pub work: Work,
    pub observer: Arc<dyn JobObserver>,
    /// Objects kept alive until the job completes (buffers it uses, its kernel...).
    pub keep: Vec<Arc<dyn Any + Send + Sync>>,
}

/// Host time in nanoseconds (CLOCK_MONOTONIC), the time base of all profiling values.
pub fn host_ns() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } == 0 {
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    } else {
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

struct Done {
    value: u64,
    /// The value the job's device submission signals: its own, or the last of its batch
    /// (waited for rather than a value no submission signals).
    signal: u64,
    status: i32,
    start: u64,
    /// Timeline points a device job waits on: kept alive (semaphores of other queues too)
    /// until the job completes, and waited for on the host to tell when it starts running.
    waits: Vec<TimelinePoint>,
    /// A device submission signals the value (Vulkan or foreign work).
    device_signal: bool,
    gpu: Option<vk::CommandBuffer>,
    observer: Arc<dyn JobObserver>,
    keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// Foreign work's error check while its value is waited for.
    probe: Option<Probe>,
}

impl Done {
    /// A job whose value a device submission signals (Vulkan's, or foreign work's), submitted
    /// at host time `start`, waiting on `waits`, with its command buffer `gpu` if Vulkan's.
    fn on_device(
        value: u64,
        start: u64,
        waits: Vec<TimelinePoint>,
        gpu: Option<vk::CommandBuffer>,
        observer: Arc<dyn JobObserver>,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
    ) -> Done {
        Done {
            value,
            signal: value,
            status: 0,
            start,
            waits,
            device_signal: true,
            gpu,
            observer,
            keep,
            probe: None,
        }
    }
}

/// Progress shared between an engine and its threads (`completed` mirrors `Counts::completed`,
/// for [`Engine::finish`] to poll without the lock).
struct Progress {
    state: Mutex<Counts>,
    cond: Condvar,
    completed: AtomicU64,
}

/// The last value enqueued and completed, and the lowest value a waiter waits for
/// (`u64::MAX`: none), so that the completion thread wakes waiters only when one is due
/// rather than at every job (16,000 needless wake-ups of a `clFinish` behind 16,000 launches).
struct Counts {
    queued: u64,
    completed: u64,
    wake_at: u64,
}

impl Progress {
    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks until every job up to `value` has completed (its observer told).
    fn wait_completed(&self, value: u64) {
        let mut st = self.lock();
        while st.completed < value {
            st.wake_at = st.wake_at.min(value);
            st = self.cond.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Records that every job up to `value` has completed; wakes the waiters if one is due.
    fn complete(&self, value: u64) {
        let mut st = self.lock();
        st.completed = st.completed.max(value);
        self.completed.store(st.completed, Ordering::Release);
        if st.completed >= st.wake_at {
            st.wake_at = u64::MAX;
            self.cond.notify_all();
        }
    }
}

/// The submission engine of one command queue (one timeline, one worker, one completion thread).
pub struct Engine {
    pub timeline: Arc<Timeline>,
    sender: Mutex<Option<Sender<(u64, Job)>>>,
    progress: Arc<Progress>,
    /// How long hand-offs poll before sleeping ([`HANDOFF_SPIN_GPU`] on GPUs, 0 on CPUs).
    spin: Duration,
}

const CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: i32 = -14;
const CL_OUT_OF_RESOURCES: i32 = -5;

impl Engine {
    /// Starts an engine on queue `queue_index` of `device`'s compute family; `foreign`: its
    /// jobs may include [`Work::Foreign`], which signals its timeline from another API.
    /// Errors: Vulkan object creation failures.
    pub fn new(
        device: &Arc<Device>,
        queue_index: usize,
        foreign: bool,
    ) -> Result<Engine, BackendError> {
        let timeline = Timeline::new(device, (!foreign).then_some(queue_index))?;
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(device.phys.compute_queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { device.raw.create_command_pool(&info, None) }?;
        let (tx, rx) = channel::<(u64, Job)>();
        let (done_tx, done_rx) = channel::<Done>();
        let (recycle_tx, recycle_rx) = channel::<vk::CommandBuffer>();
        let progress = Arc::new(Progress {
            state: Mutex::new(Counts {
                queued: 0,
                completed: 0,
                wake_at: u64::MAX,
            }),
            cond: Condvar::new(),
            completed: AtomicU64::new(0),
        });
        let spin = match crate::util::config::config().handoff_spin_us {
            Some(us) => Duration::from_micros(us),
            None if device.phys.device_type == vk::PhysicalDeviceType::CPU => Duration::ZERO,
            None => HANDOFF_SPIN_GPU,
        };
        {
            let (device, timeline) = (device.clone(), timeline.clone());
            let progress = progress.clone();
            std::thread::Builder::new()
                .name("vkcl-submit".into())
                .spawn(move || {
                    let jobs = (device, queue_index, pool, (timeline, progress), rx, spin);
                    worker(jobs, done_tx, recycle_rx)
                })
                .map_err(|e| BackendError::Host(format!("submit thread: {e}")))?;
        }
        {
            let (timeline, progress) = (timeline.clone(), progress.clone());
            std::thread::Builder::new()
                .name("vkcl-complete".into())
                .spawn(move || completer(timeline, done_rx, spin, recycle_tx, progress))
                .map_err(|e| BackendError::Host(format!("completion thread: {e}")))?;
        }
        Ok(Engine {
            timeline,
            sender: Mutex::new(Some(tx)),
            progress,
            spin,
        })
    }

    /// Queues a job; returns its timeline value.
    pub fn submit(&self, job: Job) -> u64 {
        self.submit_all(vec![job])
    }

    /// Queues `jobs` as consecutive timeline values (no other submitter's job between them);
    /// returns the last value (0 if `jobs` is empty).
    pub fn submit_all(&self, jobs: Vec<Job>) -> u64 {
        let sender = self.sender.lock().unwrap_or_else(|e| e.into_inner());
        let mut last = 0;
        for job in jobs {
            let mut st = self.progress.lock();
            st.queued += 1;
            last = st.queued;
            drop(st);
            job.observer.assigned((self.timeline.clone(), last));
            if let Some(tx) = sender.as_ref() {
                let _ = tx.send((last, job));
            }
        }
        last
    }

    /// Blocks until every job queued so far has completed (and its observer was told).
    pub fn finish(&self) {
        let target = self.last_value();
        // On a GPU the completion thread is polling the timeline: poll its progress rather
        // than sleep until it wakes this thread.
        let start = Instant::now();
        while !self.spin.is_zero() && start.elapsed() < self.spin {
            if self.progress.completed.load(Ordering::Acquire) >= target {
                return;
            }
            std::hint::spin_loop();
        }
        if self.spin.is_zero() && self.progress.completed.load(Ordering::Acquire) < target {
            // Woken by the driver's own signal of the last value rather than by the completion
            // thread, which the same signal wakes at once: one thread hop less (CPU devices,
            // where every hop is a futex wake on cores the kernels share).
            let _ = self.timeline.wait(target);
        }
        self.progress.wait_completed(target);
    }

    /// How long hand-offs to and from this engine poll before sleeping.
    pub fn handoff_spin(&self) -> Duration {
        self.spin
    }

    /// How many queued jobs have not completed yet.
    pub fn pending(&self) -> u64 {
        let st = self.progress.lock();
        st.queued - st.completed
    }

    /// The value of the last job queued (0 if none).
    pub fn last_value(&self) -> u64 {
        self.progress.lock().queued
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Closing the channel lets the worker drain and stop.
        self.sender.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// A worker's device, queue index, command pool, timeline and progress, job channel and
/// hand-off spin.
type WorkerJobs = (
    Arc<Device>,
    usize,
    vk::CommandPool,
    (Arc<Timeline>, Arc<Progress>),
    Receiver<(u64, Job)>,
    Duration,
);

fn worker(
    (device, queue_index, pool, (timeline, progress), rx, spin): WorkerJobs,
    done_tx: Sender<Done>,
    recycle_rx: Receiver<vk::CommandBuffer>,
) {
    let mut free: Vec<vk::CommandBuffer> = Vec::new();
    // The previous job was foreign work enqueued on the device: the foreign API's stream
    // orders the next foreign job after it.
    let mut after_foreign = false;
    let host_cross_waits = crate::util::config::config()
        .cross_queue_host_wait
        .unwrap_or(device.phys.device_type != vk::PhysicalDeviceType::CPU);
    // A job taken from the channel while gathering a batch, which did not fit in it.
    let mut held: Option<(u64, Job)> = None;
    let throttle = device.phys.device_type == vk::PhysicalDeviceType::CPU;
    // The last values of the submissions made and not known complete (with `throttle`).
    let mut flight = std::collections::VecDeque::new();
    loop {
        let Some((value, job)) = held.take().or_else(|| recv_spinning(&rx, spin).ok()) else {
            break;
        };
        let follows_foreign = std::mem::replace(&mut after_foreign, false);
        free.extend(recycle_rx.try_iter());
        let Job {
            deps,
            work,
            observer,
            keep,
        } = job;
        tracing::debug!(value, queue_index, deps = deps.len(), "job received");
        let mut waits: Vec<TimelinePoint> = Vec::new();
        let mut failed = false;
        for d in &deps {
            match d.wait_submitted() {
                Ok(Some(p)) => waits.push(p),
                Ok(None) => {}
                Err(()) => failed = true,
            }
        }
        let host_done = |status: i32, start: u64, keep| {
            host_end(&timeline, value, observer.clone(), status, start, keep)
        };
        tracing::debug!(
            value,
            waits = waits.len(),
            failed,
            "job dependencies submitted"
        );
        if failed {
            let now = host_ns();
            let _ = done_tx.send(host_done(
                CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
                now,
                keep,
            ));
            continue;
        }
        // A lost device runs nothing more: the job fails at once.
        if device.is_lost() {
            let _ = done_tx.send(host_done(CL_OUT_OF_RESOURCES, host_ns(), keep));
            continue;
        }
        match work {
            Work::Gpu(record) => {
                // Jobs already queued behind this one that wait for nothing ride in the same
                // command buffer and submission (a barrier before each), which signals the
                // last one's value: on lavapipe a submission costs about twice a small launch
                // (42 against 22 us), and the completion thread then wakes once for them all.
                // On a CPU device, which runs one submission at a time, at most IN_FLIGHT
                // submissions wait in the driver: jobs meanwhile gather in the channel and go
                // in one batch (on a GPU every job is submitted at once, for latency).
                while throttle && flight.len() >= IN_FLIGHT {
                    let _ = flight.pop_front().map(|v| timeline.wait(v));
                }
                let mut batch = vec![(value, record, observer, keep)];
                while batch.len() < BATCH {
                    match rx.try_recv() {
                        Ok((
                            v,
                            Job {
                                deps,
                                work: Work::Gpu(rec),
                                observer,
                                keep,
                            },
                        )) if deps.is_empty() => batch.push((v, rec, observer, keep)),
                        Ok(other) => {
                            held = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let last = batch.last().map_or(value, |b| b.0);
                let (mut records, mut ends) = (Vec::new(), Vec::new());
                for (v, rec, o, k) in batch {
                    records.push(rec);
                    ends.push((v, o, k));
                }
                let fail_all = |ends: Vec<(u64, Arc<dyn JobObserver>, Keep)>, start| {
                    for (v, o, k) in ends {
                        let _ =
                            done_tx.send(host_end(&timeline, v, o, CL_OUT_OF_RESOURCES, start, k));
                    }
                };
                let cmd = match free.pop() {
                    Some(c) => c,
                    None => {
                        let info = vk::CommandBufferAllocateInfo::default()
                            .command_pool(pool)
                            .level(vk::CommandBufferLevel::PRIMARY)
                            .command_buffer_count(1);
                        // SAFETY: the pool belongs to this thread.
                        match unsafe { device.raw.allocate_command_buffers(&info) } {
                            Ok(v) => v[0],
                            Err(_) => {
                                fail_all(ends, host_ns());
                                continue;
                            }
                        }
                    }
                };
                let begin = vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
                // SAFETY: the command buffer is idle (new or recycled after completion).
                let ok = unsafe {
                    device
                        .raw
                        .reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                        .is_ok()
                        && device.raw.begin_command_buffer(cmd, &begin).is_ok()
                };
                if ok {
                    let mut r = Recorder::new(&device, cmd);
                    for record in records {
                        // Orders each job after everything submitted before it to the same
                        // VkQueue (its own earlier jobs, and dependencies signalled on this
                        // VkQueue), in place of semaphore waits on values whose signal may
                        // still be pending.
                        r.barrier();
                        record(&mut r);
                    }
                    r.host_barrier();
                }
                // SAFETY: recording was begun above.
                let ok = ok && unsafe { device.raw.end_command_buffer(cmd) }.is_ok();
                if value > 1 {
                    waits.push((timeline.clone(), value - 1));
                }
                // Only dependencies signalled on other VkQueues need a semaphore wait, or on
                // GPUs by default a wait on the host before the submit (a semaphore wait across
                // queues costs about 0.18 ms on NVIDIA's driver, measured on the H200).
                // This engine's own previous value is ordered by the barrier that begins the
                // command buffer (same VkQueue; host work has completed before this job is
                // taken), unless it was foreign work, which signals from another API.
                let other = |t: &Arc<Timeline>| {
                    if Arc::ptr_eq(t, &timeline) {
                        follows_foreign
                    } else {
                        t.queue_index != Some(queue_index)
                    }
                };
                let mut lost = false;
                if host_cross_waits {
                    for (t, v) in waits.iter().filter(|(t, _)| other(t)) {
                        lost |= t.wait(*v).is_err();
                    }
                }
                let sem_waits: Vec<&TimelinePoint> = waits
                    .iter()
                    .filter(|(t, _)| other(t) && !host_cross_waits)
                    .collect();
                let wait_sems: Vec<vk::Semaphore> = sem_waits.iter().map(|(t, _)| t.raw).collect();
                let wait_values: Vec<u64> = sem_waits.iter().map(|(_, v)| *v).collect();
                let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; sem_waits.len()];
                let signal_sems = [timeline.raw];
                let signal_values = [last];
                let mut tl = vk::TimelineSemaphoreSubmitInfo::default()
                    .wait_semaphore_values(&wait_values)
                    .signal_semaphore_values(&signal_values);
                let cmds = [cmd];
                let submit = vk::SubmitInfo::default()
                    .wait_semaphores(&wait_sems)
                    .wait_dst_stage_mask(&stages)
                    .command_buffers(&cmds)
                    .signal_semaphores(&signal_sems)
                    .push_next(&mut tl);
                let start = host_ns();
                // Fault injection (vkcl_debug_inject_device_loss): the submission is not made
                // and the device is lost, as after a GPU fault: the value never comes.
                let injected = ok && !lost && super::device::take_injected_loss();
                if injected {
                    device.mark_lost("injected by vkcl_debug_inject_device_loss");
                }
                let submitted = injected
                    || (ok && !lost && !device.is_lost() && {
                        let q = device.queues[queue_index]
                            .lock()
                            .unwrap_or_else(|e| e.into_inner());
                        super::counters::count_submit();
                        // SAFETY: the queue is externally synchronised by the lock; all handles live.
                        let r =
                            unsafe { device.raw.queue_submit(*q, &[submit], vk::Fence::null()) };
                        device.note(r, "vkQueueSubmit").is_ok()
                    });
                drop(sem_waits);
                tracing::debug!(value, last, submitted, "jobs submitted to the device");
                if submitted {
                    flight.push_back(last);
                    // The first job's Done keeps the waits, the last one the command buffer.
                    let (n, mut waits) = (ends.len(), Some(waits));
                    for (i, (v, o, k)) in ends.into_iter().enumerate() {
                        if v < last {
                            o.batched(last);
                        }
                        o.submitted(start, true);
                        let gpu = (i + 1 == n).then_some(cmd);
                        let w = waits.take().unwrap_or_default();
                        let mut done = Done::on_device(v, start, w, gpu, o, k);
                        done.signal = last;
                        let _ = done_tx.send(done);
                    }
                } else {
                    free.push(cmd);
                    fail_all(ends, start);
                }
            }
            Work::Host(run) => {
                let mut lost = false;
                for (t, v) in &waits {
                    lost |= t.wait(*v).is_err();
                }
                lost |= timeline.wait(value - 1).is_err();
                // Host work also runs after the completion hooks of the jobs before it (a
                // staged read's copy out of its staging buffer into the application's memory,
                // which host work may read or write).
                progress.wait_completed(value - 1);
                let start = host_ns();
                observer.submitted(start, false);
                observer.running(start);
                // What it would read or write was never computed (the device is lost).
                let status = if lost { CL_OUT_OF_RESOURCES } else { run() };
                let _ = done_tx.send(host_done(status, start, keep));
            }
            Work::Foreign(run) => {
                if value > 1 && !follows_foreign {
                    waits.push((timeline.clone(), value - 1));
                }
                waits.retain(|(t, v)| t.value() < *v);
                let start = host_ns();
                // Fault injection: as for device work, but the loss is the foreign API's,
                // found by the probe while the value is waited for.
                let outcome = if super::device::take_injected_loss() {
                    let probe: Probe = Box::new(|| Err("injected foreign-work fault".into()));
                    ForeignOutcome::Enqueued(Some(probe))
                } else {
                    run(&waits, &(timeline.clone(), value))
                };
                match outcome {
                    ForeignOutcome::Enqueued(probe) => {
                        after_foreign = true;
                        observer.submitted(start, true);
                        let mut done = Done::on_device(value, start, waits, None, observer, keep);
                        done.probe = probe;
                        let _ = done_tx.send(done);
                    }
                    ForeignOutcome::Completed(status) => {
                        observer.submitted(start, false);
                        observer.running(start);
                        let _ = done_tx.send(host_done(status, start, keep));
                    }
                }
            }
            Work::Nop => {
                let mut status = 0;
                for (t, v) in &waits {
                    if t.wait(*v).is_err() {
                        status = CL_OUT_OF_RESOURCES;
                    }
                }
                let start = host_ns();
                observer.submitted(start, false);
                observer.running(start);
                let _ = done_tx.send(host_done(status, start, keep));
            }
        }
    }
    drop(done_tx);
    // Wait for the completion thread to hand back every command buffer, then free the pool.
    for _ in recycle_rx.iter() {}
    // SAFETY: every command buffer of the pool has completed; nothing else uses the pool.
    unsafe { device.raw.destroy_command_pool(pool, None) };
}

/// Objects a job keeps alive until it completes.
type Keep = Vec<Arc<dyn Any + Send + Sync>>;

/// The most jobs one submission carries.
const BATCH: usize = 64;

/// The most submissions of one engine a CPU device holds at once.
const IN_FLIGHT: usize = 2;

/// Ends job `value` on the host with `status`: its value is signalled after the previous one,
/// unless the device is lost (the previous value may never come; a later signal would make it
/// look reached), which fails the job.
fn host_end(
    timeline: &Timeline,
    value: u64,
    observer: Arc<dyn JobObserver>,
    status: i32,
    start: u64,
    keep: Keep,
) -> Done {
    let signalled = timeline.wait(value - 1).is_ok() && timeline.signal(value).is_ok();
    Done {
        value,
        signal: value,
        status: if signalled {
            status
        } else {
            status.min(CL_OUT_OF_RESOURCES)
        },
        start,
        waits: Vec::new(),
        device_signal: false,
        gpu: None,
        observer,
        keep,
        probe: None,
    }
}

fn completer(
    timeline: Arc<Timeline>,
    rx: Receiver<Done>,
    spin: Duration,
    recycle: Sender<vk::CommandBuffer>,
    progress: Arc<Progress>,
) {
    while let Ok(done) = recv_spinning(&rx, spin) {
        let mut status = done.status;
        let mut start = done.start;
        if done.device_signal {
            // The job runs once what it waits for (the previous value included) completed.
            for (t, v) in &done.waits {
                let _ = t.wait(*v);
            }
            start = host_ns().max(done.start);
            tracing::debug!(value = done.value, "job running");
            done.observer.running(start);
            if let Err(e) = timeline.wait_probed(done.signal, done.probe.as_ref()) {
                tracing::error!(value = done.value, "command failed: {e}");
                status = CL_OUT_OF_RESOURCES;
            }
        }
        let end = host_ns().max(start);
        tracing::debug!(value = done.value, status, "job complete");
        done.observer.completed(status, start, end);
        drop(done.keep);
        drop(done.waits);
        if let Some(cmd) = done.gpu {
            let _ = recycle.send(cmd);
        }
        progress.complete(done.value);
    }
}
