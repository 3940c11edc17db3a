//! Command buffers (`cl_khr_command_buffer` 0.9.8, OpenCL 3.0 API spec section 5.X
//! "Command-Buffers").
//!
//! Recording appends commands to a list; each gets a sync point (its index + 1) and the queue
//! it was recorded to (one of the queues the command buffer was created with:
//! `cl_khr_command_buffer_multi_device` 0.9.2 allows several, of devices that share one root
//! device, so one `VkDevice`). A command's dependencies are its sync-point wait list, plus the
//! previous command recorded to the same queue when that queue is in-order, plus the last
//! barrier command recorded to that queue. Finalize records the list once into
//! a Vulkan secondary command buffer ([`Secondary`]) and turns the dependencies into the fewest
//! pipeline barriers it can: a barrier goes before a command only when the latest device command
//! it depends on was recorded after the last barrier, so commands with no edge between them may
//! overlap. Enqueue is one job whose primary command buffer executes the secondary: its host cost
//! does not depend on the number of recorded commands. A command buffer of several queues runs
//! as that one job too, on one of its queues, ordered after the commands enqueued before it on
//! each of them and before the commands enqueued after it (each command still runs as its own
//! device's: a sub-device's compute-unit limit is in its dispatch); `remap.rs` makes the deep
//! copies of `clRemapCommandBufferKHR` (`command_buffer_remap.rs`).

use super::command::{Command, Keep};
use super::context::Context;
use super::error::{refused, ClError, ClResult};
use super::event::Event;
use super::kernel_command::{Dispatch, KernelCommand, Live, NO_ADDITIONAL_WORK_GROUPS};
use super::kernel_cuda::prepare_green_launch;
use super::launch::LoopCheck;
use super::object::{ClObject, Header, Kind};
use super::printf::PrintfBuffer;
use super::queue::CommandQueue;
use super::transfer::FillPlan;
use crate::backend::cuda::Graph;
use crate::backend::vulkan::counters;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::record::{record, DeviceCommand};
use crate::backend::vulkan::secondary::{pattern_buffer, Secondary};
use opencl_sys::*;
use std::sync::{Arc, Mutex};

#[path = "command_buffer_remap.rs"]
mod remap;
pub use remap::CommandPair;

/// A sync point: 1 + the index of the command it names (0 is never issued).
pub type SyncPoint = cl_sync_point_khr;

/// The device part of a recorded command.
pub(super) enum Step {
    /// Device commands fixed at recording (copies, fills).
    Fixed(Vec<DeviceCommand>),
    /// An NDRange: its launch as it stands when the secondary is recorded (a mutable update
    /// changes it and records the secondary again).
    Kernel(Arc<KernelCommand>),
}

impl Step {
    /// The step's device commands now (pushing what they use beyond the recording's own
    /// keep list onto `keep`, and the launch buffer and kernel name of a kernel command with
    /// a loop onto `launches`).
    fn device_commands(
        &self,
        keep: &mut Keep,
        launches: &mut Vec<(Arc<Buffer>, String)>,
    ) -> Vec<DeviceCommand> {
        match self {
            Step::Fixed(c) => c.clone(),
            Step::Kernel(k) => match k.device_command() {
                Some((c, live)) => {
                    if k.loops(&live) || crate::util::config::config().bounds_check {
                        launches.push((live.buf.clone(), k.kernel.info().name.clone()));
                    }
                    keep.push(live);
                    vec![c]
                }
                None => Vec::new(),
            },
        }
    }
}

/// Where a command is recorded: the index of its queue among the command buffer's queues
/// ([`CommandBuffer::queues`]) and the sync points it waits for.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    pub queue: usize,
    pub wait: Vec<SyncPoint>,
}

#[derive(Clone)]
pub(super) struct Recorded {
    /// The device part (None: the command only orders others: barrier commands, empty copies
    /// and fills).
    pub(super) step: Option<Arc<Step>>,
    /// Index of the latest device command this one must wait for (through sync points,
    /// the in-order chain, barrier commands and commands that record nothing), if any.
    after: Option<usize>,
    /// Its queue and sync-point wait list as recorded (a remapped copy records it again).
    pub(super) at: Placement,
    /// Whether it is a barrier command.
    pub(super) barrier: bool,
}

struct Recording {
    commands: Vec<Recorded>,
    keep: Keep,
    /// For each queue, the index of the last barrier command recorded to it: every later
    /// command recorded to that queue waits for it.
    last_barrier: Vec<Option<usize>>,
    /// For each queue, the index of the last device command recorded to it.
    last_gpu: Vec<Option<usize>>,
    /// For each queue, the index of the last command recorded to it (an in-order queue's
    /// chain).
    last_command: Vec<Option<usize>>,
    /// Every NDRange command, in recording order.
    kernels: Vec<Arc<KernelCommand>>,
}

/// What finalize made of the recording: the device commands in order, each with whether a
/// barrier goes before it. Kept to record the secondary again after a mutable update.
struct Plan {
    steps: Vec<(bool, Arc<Step>)>,
    keep: Keep,
    commands: usize,
    barriers: usize,
    kernels: Vec<Arc<KernelCommand>>,
    /// The recorded commands (a remapped copy records them again).
    recorded: Vec<Recorded>,
}

/// A finalized command buffer: the recorded secondary and what it uses.
pub struct Executable {
    pub secondary: Arc<Secondary>,
    /// On a green-context queue whose every command has a CUDA form and none is mutable: the
    /// commands captured into a CUDA graph of that green context, launched by enqueue there
    /// (by the queue's executor).
    graph: Option<Arc<Graph>>,
    keep: Keep,
    /// The launch buffer of each NDRange command with a loop that the secondary runs, with its
    /// kernel's name:
    /// on a device with a loop limit, each run resets and checks their `loop_limit_hit` flags
    /// (an update in place keeps the buffers; one that is not records a new secondary).
    launches: Vec<(Arc<Buffer>, String)>,
    /// Number of recorded commands (sync points issued).
    pub commands: usize,
    /// Number of pipeline barriers finalize put into the secondary.
    pub barriers: usize,
}

enum State {
    Recording(Recording),
    /// Finalized, but a mutable command still lacks an argument (deferred arguments): no
    /// secondary yet, not enqueueable until an update sets it.
    Finalized(Arc<Plan>),
    Executable(Arc<Plan>, Arc<Executable>),
}

/// A `cl_command_buffer_khr`.
pub struct CommandBuffer {
    header: Header,
    /// The queues it was created with, in order (`CL_COMMAND_BUFFER_QUEUES_KHR`): one, or
    /// under `cl_khr_command_buffer_multi_device` several of devices of one root device
    /// (checked by the API layer).
    pub queues: Vec<Arc<CommandQueue>>,
    /// `CL_COMMAND_BUFFER_CONTEXT_KHR`.
    pub context: Arc<Context>,
    /// `CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR`: as given with its 0, empty when NULL.
    pub properties: Vec<cl_command_buffer_properties_khr>,
    /// `CL_COMMAND_BUFFER_FLAGS_KHR`.
    pub flags: cl_command_buffer_flags_khr,
    /// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR`.
    pub asserts: cl_bitfield,
    state: Mutex<State>,
    /// The event of the last enqueue, kept while the command buffer has printf commands or
    /// loop checks: runs of such a command buffer are serialized, since they share its printf
    /// buffers and the `loop_limit_hit` flags of its launch buffers.
    last_shared_run: Mutex<Option<Arc<Event>>>,
}

impl ClObject for CommandBuffer {
    const KIND: Kind = Kind::CommandBuffer;
    const INVALID: i32 = CL_INVALID_COMMAND_BUFFER_KHR;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl CommandBuffer {
    /// A command buffer in the Recording state on `queues` (at least one, of one context and
    /// one root device; properties already checked).
    pub fn new(
        queues: Vec<Arc<CommandQueue>>,
        properties: Vec<cl_command_buffer_properties_khr>,
        flags: cl_command_buffer_flags_khr,
        asserts: cl_bitfield,
    ) -> CommandBuffer {
        let n = queues.len();
        CommandBuffer {
            header: Header::new(Kind::CommandBuffer),
            context: queues[0].context.clone(),
            queues,
            properties,
            flags,
            asserts,
            state: Mutex::new(State::Recording(Recording {
                commands: Vec::new(),
                keep: Vec::new(),
                last_barrier: vec![None; n],
                last_gpu: vec![None; n],
                last_command: vec![None; n],
                kernels: Vec::new(),
            })),
            last_shared_run: Mutex::new(None),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `CL_COMMAND_BUFFER_STATE_KHR`: RECORDING until finalized, then EXECUTABLE (FINALIZED
    /// while a mutable command lacks an argument).
    pub fn state(&self) -> cl_command_buffer_state_khr {
        match *self.lock() {
            State::Recording(_) => CL_COMMAND_BUFFER_STATE_RECORDING_KHR,
            State::Finalized(_) => CL_COMMAND_BUFFER_STATE_FINALIZED_KHR,
            State::Executable(..) => CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR,
        }
    }

    /// Checks the state and a sync-point wait list before a command is prepared (so that a
    /// recording error is reported before the command's own argument errors are looked at).
    /// Errors: `CL_INVALID_OPERATION` if finalized, `CL_INVALID_SYNC_POINT_WAIT_LIST_KHR` for a
    /// sync point this command buffer did not issue.
    pub fn check_recording(&self, wait: &[SyncPoint]) -> ClResult<()> {
        match &*self.lock() {
            State::Finalized(_) | State::Executable(..) => Err(ClError(CL_INVALID_OPERATION)),
            State::Recording(r) => {
                if wait
                    .iter()
                    .any(|&s| s == 0 || s as usize > r.commands.len())
                {
                    return Err(ClError(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR));
                }
                Ok(())
            }
        }
    }

    /// Records `cmd` (checked by its constructor) to run after the commands of `wait`
    /// (and, implicitly, after the previous command on an in-order queue and after the last
    /// barrier command); returns its sync point. Its device part is the one a queue would run
    /// ([`Command::device_commands`]); a fill of a pattern `vkCmdFillBuffer` cannot write is a
    /// copy from a buffer holding the pattern, made now.
    /// Errors: as [`check_recording`](Self::check_recording); `CL_INVALID_OPERATION` for a
    /// command a command buffer cannot hold (host transfers, maps, launches: NDRanges are
    /// [`record_kernel`](Self::record_kernel)); `CL_OUT_OF_RESOURCES` (the pattern buffer;
    /// once `cl_uint` sync points run out).
    pub fn record_command(&self, at: &Placement, cmd: Command) -> ClResult<SyncPoint> {
        let mut keep = cmd.keep();
        let device = match &cmd {
            Command::Barrier => return self.append(at, None, keep, true),
            Command::Copy { .. } => cmd.device_commands(),
            Command::Fill {
                mem,
                offset,
                size,
                plan: FillPlan::Bytes(pat),
            } => {
                let vk = self.queues[at.queue].device.vk()?;
                let src = Arc::new(
                    pattern_buffer(vk, pat, *size as u64)
                        .map_err(|e| refused("fill pattern", e))?,
                );
                keep.push(src.clone());
                let at = (mem.offset + offset) as u64;
                vec![DeviceCommand::Copy {
                    src,
                    dst: mem.storage().clone(),
                    regions: vec![(0, at, *size as u64)],
                }]
            }
            Command::Fill { .. } | Command::ImageDevice { .. } => cmd.device_commands(),
            _ => return Err(ClError(CL_INVALID_OPERATION)),
        };
        let step = (!device.is_empty()).then(|| Arc::new(Step::Fixed(device)));
        self.append(at, step, keep, false)
    }

    /// Records an NDRange command ([`KernelCommand`]). Errors as
    /// [`record_command`](Self::record_command).
    pub fn record_kernel(
        &self,
        at: &Placement,
        command: Arc<KernelCommand>,
    ) -> ClResult<SyncPoint> {
        let step = Arc::new(Step::Kernel(command.clone()));
        let sp = self.append(at, Some(step), Vec::new(), false)?;
        if let State::Recording(r) = &mut *self.lock() {
            r.kernels.push(command);
        }
        Ok(sp)
    }

    pub(super) fn append(
        &self,
        at: &Placement,
        step: Option<Arc<Step>>,
        keep: Keep,
        barrier: bool,
    ) -> ClResult<SyncPoint> {
        let (q, wait) = (at.queue, at.wait.as_slice());
        self.check_recording(wait)?;
        let in_order = self.queues[q].props() & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0;
        let mut st = self.lock();
        let State::Recording(r) = &mut *st else {
            return Err(ClError(CL_INVALID_OPERATION));
        };
        let index = r.commands.len();
        if index >= cl_uint::MAX as usize {
            return Err(ClError(CL_OUT_OF_RESOURCES));
        }
        let latest = |c: &Recorded, i: usize| if c.step.is_some() { Some(i) } else { c.after };
        let mut deps: Vec<usize> = wait.iter().map(|&s| s as usize - 1).collect();
        if in_order {
            deps.extend(r.last_command[q]);
        }
        deps.extend(r.last_barrier[q]);
        let mut after = deps
            .into_iter()
            .filter_map(|d| latest(&r.commands[d], d))
            .max();
        // A barrier without a wait list waits for every command recorded to its queue before
        // it; the pipeline barrier that orders the latest of them orders them all.
        if barrier && wait.is_empty() {
            after = after.max(r.last_gpu[q]);
        }
        let gpu = step.is_some();
        r.commands.push(Recorded {
            step,
            after,
            at: at.clone(),
            barrier,
        });
        r.keep.extend(keep);
        r.last_command[q] = Some(index);
        if barrier {
            r.last_barrier[q] = Some(index);
        }
        if gpu {
            r.last_gpu[q] = Some(index);
        }
        Ok(index as SyncPoint + 1)
    }

    /// clFinalizeCommandBufferKHR: turns the dependencies into barriers and records every
    /// command once into a secondary command buffer (unless a mutable command still lacks an
    /// argument: then the state is FINALIZED and recording waits for the update that sets it).
    /// Errors: `CL_INVALID_OPERATION` if already finalized, `CL_OUT_OF_RESOURCES` if the
    /// Vulkan command buffer cannot be made (the command buffer then stays finalized but not
    /// executable).
    pub fn finalize(&self) -> ClResult<()> {
        tracing::debug!("command buffer: finalize");
        let mut st = self.lock();
        let State::Recording(r) = &mut *st else {
            return Err(ClError(CL_INVALID_OPERATION));
        };
        let mut barriers = 0;
        let mut steps = Vec::new();
        // Every device command with an index below `fence` is ordered before whatever is
        // recorded next.
        let mut fence = 0;
        for (i, c) in r.commands.iter().enumerate() {
            let Some(step) = &c.step else {
                continue;
            };
            let barrier = c.after.is_some_and(|a| a >= fence);
            if barrier {
                barriers += 1;
                fence = i;
            }
            steps.push((barrier, step.clone()));
        }
        let plan = Arc::new(Plan {
            steps,
            keep: std::mem::take(&mut r.keep),
            commands: r.commands.len(),
            barriers,
            kernels: std::mem::take(&mut r.kernels),
            recorded: std::mem::take(&mut r.commands),
        });
        counters::count_secondary_barriers(barriers as u64);
        tracing::debug!(
            "command buffer finalized: {} commands, {} barriers",
            plan.commands,
            plan.barriers
        );
        *st = State::Finalized(plan.clone());
        if plan.kernels.iter().all(|k| k.complete()) {
            let mut exe = self.record_plan(&plan)?;
            exe.graph = self.cuda_graph(&plan);
            *st = State::Executable(plan.clone(), Arc::new(exe));
        }
        Ok(())
    }

    /// The commands captured into a CUDA graph by the queue's executor, when the queue has a
    /// green context, no command is mutable and every one has a CUDA form (kernels that run
    /// as PTX); None otherwise (and when the capture fails: logged).
    fn cuda_graph(&self, plan: &Plan) -> Option<Arc<Graph>> {
        let [queue] = self.queues.as_slice() else {
            return None;
        };
        let executor = &queue.executor;
        let green = executor.green()?;
        let mut commands = Vec::with_capacity(plan.steps.len());
        for (_, step) in &plan.steps {
            match &**step {
                Step::Fixed(c) => commands.extend(c.iter().cloned()),
                Step::Kernel(k) if !k.mutable => {
                    let d = k.lock().0.clone();
                    let l = prepare_green_launch(&k.kernel, &k.device, &d.range, &d.args)
                        .ok()
                        .flatten()
                        .filter(|l| Arc::ptr_eq(&l.green, green))?;
                    commands.push(DeviceCommand::Launch {
                        vulkan: None,
                        cuda: Some(Arc::new(l)),
                    });
                }
                Step::Kernel(_) => return None,
            }
        }
        executor.capture(&commands)
    }

    /// Records `plan` into a new secondary: each step's device commands through the back
    /// end's one recording function, a barrier before the steps that need one.
    /// Errors: `CL_OUT_OF_RESOURCES`.
    fn record_plan(&self, plan: &Plan) -> ClResult<Executable> {
        // Every queue's device has the same root, so the same VkDevice.
        let vk = self.queues[0].device.vk()?;
        let mut keep = plan.keep.clone();
        let mut launches = Vec::new();
        let secondary = Secondary::record(vk, |rec| {
            for (barrier, step) in &plan.steps {
                if *barrier {
                    record(rec, &DeviceCommand::Barrier);
                }
                for c in step.device_commands(&mut keep, &mut launches) {
                    record(rec, &c);
                }
            }
        })
        .map_err(|e| refused("command buffer secondary", e))?;
        Ok(Executable {
            graph: None,
            secondary: Arc::new(secondary),
            keep,
            launches,
            commands: plan.commands,
            barriers: plan.barriers,
        })
    }

    /// The finalized form. Errors: `CL_INVALID_OPERATION` if not in the Executable state.
    pub fn executable(&self) -> ClResult<Arc<Executable>> {
        match &*self.lock() {
            State::Executable(_, e) => Ok(e.clone()),
            _ => Err(ClError(CL_INVALID_OPERATION)),
        }
    }

    /// clUpdateMutableCommandsKHR, after the API layer has checked and resolved each update:
    /// applies them all or none. In place (host writes into the launch buffers) when no
    /// enqueue of this command buffer is pending and no pipeline or dispatch split changes;
    /// otherwise copy-on-write (new launch buffers, secondary recorded again).
    /// Errors: `CL_INVALID_OPERATION` (not finalized; an update asks for more work-groups than
    /// recorded under `CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR`), the
    /// encoding errors of [`Kernel::encode`], `CL_OUT_OF_RESOURCES`.
    pub fn update(&self, updates: Vec<(Arc<KernelCommand>, Dispatch)>) -> ClResult<()> {
        let mut st = self.lock();
        // CL_INVALID_OPERATION if command_buffer has not been finalized.
        let plan = match &*st {
            State::Recording(_) => return Err(ClError(CL_INVALID_OPERATION)),
            State::Finalized(p) | State::Executable(p, _) => p.clone(),
        };
        // Encode everything first: an error leaves every command unchanged.
        let mut encoded = Vec::with_capacity(updates.len());
        for (k, d) in &updates {
            let no_more = (k.asserts | self.asserts) & NO_ADDITIONAL_WORK_GROUPS != 0;
            // CL_INVALID_OPERATION if the update would add work-groups to a command recorded
            // with CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR.
            if no_more && (0..3).any(|i| d.range.groups()[i] > k.recorded_groups[i]) {
                return Err(ClError(CL_INVALID_OPERATION));
            }
            encoded.push(k.encode(d)?);
        }
        let idle = match &mut *st {
            State::Executable(_, e) => Arc::get_mut(e).is_some(),
            _ => false,
        };
        let in_place = idle
            && updates
                .iter()
                .zip(&encoded)
                .all(|((k, _), e)| match (k.live(), e) {
                    (Some(l), Some(e)) => l.in_place_ok(e, k.max_groups),
                    _ => false,
                });
        if let (true, State::Executable(_, exe)) = (in_place, &mut *st) {
            let exe = Arc::get_mut(exe).ok_or(ClError(CL_OUT_OF_RESOURCES))?;
            for ((k, d), e) in updates.into_iter().zip(encoded) {
                let e = e.ok_or(ClError(CL_OUT_OF_RESOURCES))?;
                let old = k.live().ok_or(ClError(CL_OUT_OF_RESOURCES))?;
                e.write_to(&old.buf);
                let live = Arc::new(Live::new(old.buf.clone(), e));
                exe.keep.push(live.clone());
                k.set(d, Some(live));
            }
            return Ok(());
        }
        for ((k, d), e) in updates.into_iter().zip(encoded) {
            let live = match e {
                Some(e) => {
                    let buf = Arc::new(e.to_buffer(&k.device)?);
                    Some(Arc::new(Live::new(buf, e)))
                }
                None => None,
            };
            k.set(d, live);
        }
        *st = State::Finalized(plan.clone());
        if plan.kernels.iter().all(|k| k.complete()) {
            *st = State::Executable(plan.clone(), Arc::new(self.record_plan(&plan)?));
        }
        Ok(())
    }

    /// Whether the command buffer was created with `CL_COMMAND_BUFFER_MUTABLE_KHR`.
    pub fn is_mutable(&self) -> bool {
        self.flags & CL_COMMAND_BUFFER_MUTABLE_KHR != 0
    }

    /// clEnqueueCommandBufferKHR on `queue` (already checked compatible): one job that executes
    /// the secondary after `wait_list`. The job keeps the command buffer alive until it
    /// completes. Errors: `CL_INVALID_OPERATION` if not finalized.
    ///
    /// With printf commands (OpenCL C 6.15.14 output on every enqueue), the job also resets
    /// each printf buffer's counter before the secondary, copies each buffer into a snapshot of
    /// its own after it, and prints the snapshots when it completes (before its event does).
    /// On a device with a loop limit ([`super::device::Device::loop_limit`]) it likewise
    /// resets the `loop_limit_hit` flag in the launch buffer of every NDRange command with a
    /// loop before the secondary and copies each into a snapshot after it; a flag that an invocation raised
    /// fails the run: the event's status is `CL_OUT_OF_RESOURCES`, with a log line naming the
    /// kernel and the limit ([`LoopCheck::status`]). Such runs wait for the previous run of the
    /// same command buffer (whether it succeeded or not), since they share those buffers.
    /// Errors: also `CL_OUT_OF_RESOURCES` when a snapshot cannot be allocated.
    ///
    /// `queues` (already checked: as many as the command buffer has, each of the context and
    /// device of the queue it replaces) run the command buffer: one of them (the first with
    /// profiling, else the first) runs the job, after the commands enqueued before on each of
    /// the others (through an ordering command there) and before those enqueued after on each
    /// of them (an ordering command waits for the job's event), as if each queue ran its own
    /// commands in its turn. The event returned is the job's: it completes when every command
    /// has (`cl_khr_command_buffer_multi_device`, "Command-Buffers and Multiple Devices").
    pub fn enqueue(
        self: &Arc<Self>,
        queues: &[Arc<CommandQueue>],
        wait_list: &[Arc<Event>],
    ) -> ClResult<Arc<Event>> {
        let Some(first) = queues.first() else {
            return Err(ClError(CL_INVALID_VALUE));
        };
        let queue = queues
            .iter()
            .find(|q| q.props() & CL_QUEUE_PROFILING_ENABLE != 0)
            .unwrap_or(first);
        let mut others: Vec<&Arc<CommandQueue>> = Vec::new();
        for q in queues {
            if !Arc::ptr_eq(q, queue) && !others.iter().any(|o| Arc::ptr_eq(o, q)) {
                others.push(q);
            }
        }
        if others.is_empty() {
            return self.enqueue_on(queue, wait_list);
        }
        let mut waits = wait_list.to_vec();
        for q in &others {
            waits.push(q.enqueue_ordering(CL_COMMAND_MARKER, &[], Vec::new()));
        }
        let ev = self.enqueue_on(queue, &waits)?;
        for q in &others {
            q.enqueue_ordering(CL_COMMAND_MARKER, std::slice::from_ref(&ev), Vec::new());
        }
        Ok(ev)
    }

    /// [`enqueue`](Self::enqueue) on one queue.
    fn enqueue_on(
        self: &Arc<Self>,
        queue: &Arc<CommandQueue>,
        wait_list: &[Arc<Event>],
    ) -> ClResult<Arc<Event>> {
        let exe = self.executable()?;
        let printfs = self.printf_buffers();
        let limit = queue.device.loop_limit();
        let bounds = crate::util::config::config().bounds_check;
        let launches = match limit.is_some() || bounds {
            true => exe.launches.as_slice(),
            false => &[],
        };
        let mut keep: Keep = vec![exe.clone(), self.clone()];
        let ty = CL_COMMAND_COMMAND_BUFFER_KHR;
        let plain = printfs.is_empty() && launches.is_empty();
        if let (Some(graph), true) = (&exe.graph, plain) {
            let same = match (queue.executor.green(), self.queues[0].executor.green()) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            };
            if let Some(work) = same
                .then(|| queue.executor.graph_work(graph.clone()))
                .flatten()
            {
                return Ok(queue.enqueue(ty, wait_list, work, keep));
            }
        }
        let run = DeviceCommand::Execute(exe.secondary.clone());
        if plain {
            return Ok(queue.enqueue_device(ty, wait_list, vec![run], keep, None));
        }
        let vk = queue.device.vk()?;
        let mut commands = Vec::with_capacity(2 * (printfs.len() + launches.len()) + 3);
        let mut pairs = Vec::with_capacity(printfs.len());
        for p in printfs {
            let snap = Buffer::new(vk, p.buf.size).map_err(|e| refused("printf snapshot", e))?;
            let (offset, size) = p.counter_range();
            commands.push(DeviceCommand::Fill {
                dst: p.buf.clone(),
                offset,
                size,
                word: 0,
            });
            keep.push(p.clone());
            pairs.push((p, Arc::new(snap)));
        }
        let flag = crate::compiler::LOOP_FLAG_OFFSET;
        let [bounds_flag, bounds_addr, _, _] = crate::compiler::BOUNDS_OFFSETS;
        // The snapshot holds the header up to the last flag word, so LoopCheck reads it in
        // place: `loop_limit_hit`, and with VKCL_BOUNDS_CHECK the bounds flag and address.
        let snap_len = if bounds { bounds_addr + 8 } else { flag + 4 };
        let mut flags = Vec::with_capacity(launches.len());
        for (buf, kernel) in launches {
            let snap = Buffer::new(vk, snap_len).map_err(|e| refused("loop flag snapshot", e))?;
            commands.push(DeviceCommand::Fill {
                dst: buf.clone(),
                offset: flag,
                size: 4,
                word: 0,
            });
            if bounds {
                commands.push(DeviceCommand::Fill {
                    dst: buf.clone(),
                    offset: bounds_flag,
                    size: 4,
                    word: 0,
                });
            }
            flags.push((buf.clone(), Arc::new(snap), kernel.clone()));
        }
        commands.extend([DeviceCommand::Barrier, run, DeviceCommand::Barrier]);
        for (p, snap) in &pairs {
            commands.push(DeviceCommand::Copy {
                src: p.buf.clone(),
                dst: snap.clone(),
                regions: vec![(0, 0, p.buf.size)],
            });
        }
        let mut checks = Vec::with_capacity(flags.len());
        for (buf, snap, kernel) in flags {
            commands.push(DeviceCommand::Copy {
                src: buf,
                dst: snap.clone(),
                regions: vec![(0, 0, snap_len)],
            });
            keep.push(snap.clone());
            checks.push(LoopCheck::snapshot(snap, kernel, limit, bounds));
        }
        // The engine ends every job with a barrier to host reads.
        let mut last = self
            .last_shared_run
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let check = Box::new(move || {
            for (p, snap) in &pairs {
                p.print_from(snap);
            }
            // Every check runs, so that each kernel whose loop was cut is logged.
            checks
                .iter()
                .map(LoopCheck::status)
                .fold(CL_SUCCESS, |s, c| if s == CL_SUCCESS { c } else { s })
        });
        let work = queue.executor.work(commands);
        let ev = queue.enqueue_checked_after(ty, wait_list, last.take(), work, keep, check);
        *last = Some(ev.clone());
        Ok(ev)
    }

    /// The printf buffers of the recorded kernel commands, in recording order.
    fn printf_buffers(&self) -> Vec<Arc<PrintfBuffer>> {
        let kernels = match &*self.lock() {
            State::Recording(r) => r.kernels.clone(),
            State::Finalized(p) | State::Executable(p, _) => p.kernels.clone(),
        };
        kernels
            .iter()
            .filter_map(|k| k.live().and_then(|l| l.printf.clone()))
            .collect()
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        // Mutable-command handles are valid as long as their command buffer.
        let kernels = match &*self.lock() {
            State::Recording(r) => r.kernels.clone(),
            State::Finalized(p) | State::Executable(p, _) => p.kernels.clone(),
        };
        for k in kernels {
            let h = k.header().handle();
            if !h.is_null() {
                let _ = super::object::release::<KernelCommand>(h);
            }
        }
    }
}

/// The debug counters of the Vulkan back end since the library was loaded:
/// `vkQueueSubmit` calls, device commands recorded, secondaries executed, pipeline barriers
/// finalize put into secondaries, staging buffers allocated from Vulkan, buffer copies made
/// by the copy shader.
pub fn debug_counters() -> [u64; 6] {
    counters::snapshot()
}
