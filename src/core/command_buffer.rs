//! Command buffers (`cl_khr_command_buffer` 0.9.8, OpenCL 3.0 API spec section 5.X
//! "Command-Buffers").
//!
//! Recording appends commands to a list; each gets a sync point (its index + 1). A command's
//! dependencies are its sync-point wait list, plus the previous command when the command
//! buffer's queue is in-order, plus the last barrier command. Finalize records the list once into
//! a Vulkan secondary command buffer ([`Secondary`]) and turns the dependencies into the fewest
//! pipeline barriers it can: a barrier goes before a command only when the latest device command
//! it depends on was recorded after the last barrier, so commands with no edge between them may
//! overlap. Enqueue is one job whose primary command buffer executes the secondary: its host cost
//! does not depend on the number of recorded commands.

use super::context::Context;
use super::device::Device;
use super::error::{refused, ClError, ClResult};
use super::event::Event;
use super::kernel::{
    push_constants, record_launch, single_region, ArgValue, Encoded, Kernel, NdRange, Region,
    GROUPS_OFFSET,
};
use super::kernel_cuda::CudaOp;
use super::memory::Mem;
use super::object::{ClObject, Header, Kind};
use super::printf::PrintfBuffer;
use super::queue::CommandQueue;
use crate::backend::cuda::{Graph, GreenContext};
use crate::backend::vulkan::counters;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::pipeline::Pipeline;
use crate::backend::vulkan::queue::{Recorder, Work};
use crate::backend::vulkan::secondary::Secondary;
use opencl_sys::*;
use std::any::Any;
use std::sync::{Arc, Mutex};

/// A sync point: 1 + the index of the command it names (0 is never issued).
pub type SyncPoint = cl_sync_point_khr;

/// Objects a command keeps alive as long as the command buffer (buffers, kernels, pipelines,
/// launch buffers).
pub type Keep = Vec<Arc<dyn Any + Send + Sync>>;

/// Records one command into a secondary; pushes what the recorded commands use (beyond what
/// the recording keeps) onto the [`Keep`] list of the secondary.
pub type RecordFn = Arc<dyn Fn(&mut Recorder, &mut Keep) + Send + Sync>;

/// What a recorded command does when the secondary command buffer is recorded.
pub enum Op {
    /// Device commands, recorded by finalize (and again when a mutable update re-records).
    Gpu(RecordFn),
    /// Nothing on the device (barrier commands, empty copies and fills, empty NDRanges): the
    /// command only orders others.
    Order,
}

/// The CUDA form of a recorded command, where it has one.
enum CudaForm {
    /// A copy or fill, ready.
    Op(CudaOp),
    /// An NDRange: prepared at finalize from its captured arguments.
    Kernel(Arc<KernelCommand>),
}

struct Command {
    op: Option<Op>,
    /// The command's CUDA form (None: it has none, so the command buffer runs through Vulkan
    /// even on a green-context queue).
    cuda: Option<CudaForm>,
    /// Whether the command records device work.
    gpu: bool,
    /// Index of the latest device command this one must wait for (through sync points,
    /// the in-order chain, barrier commands and commands that record nothing), if any.
    after: Option<usize>,
}

struct Recording {
    commands: Vec<Command>,
    keep: Keep,
    /// Index of the last barrier command: every later command waits for it.
    last_barrier: Option<usize>,
    /// Index of the last device command.
    last_gpu: Option<usize>,
    /// Every NDRange command, in recording order.
    kernels: Vec<Arc<KernelCommand>>,
}

/// What finalize made of the recording: the device commands in order, each with whether a
/// barrier goes before it. Kept to record the secondary again after a mutable update.
struct Plan {
    steps: Vec<(bool, RecordFn)>,
    keep: Keep,
    commands: usize,
    barriers: usize,
    kernels: Vec<Arc<KernelCommand>>,
}

/// A finalized command buffer: the recorded secondary and what it uses.
pub struct Executable {
    pub secondary: Secondary,
    /// On a green-context queue whose every command has a CUDA form and none is mutable: the
    /// commands captured into a CUDA graph of that green context, launched by enqueue there
    /// (the secondary serves substitute queues elsewhere).
    graph: Option<(Arc<GreenContext>, Arc<Graph>)>,
    keep: Keep,
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
    /// The one queue it was created with (`CL_COMMAND_BUFFER_QUEUES_KHR`).
    pub queue: Arc<CommandQueue>,
    /// `CL_COMMAND_BUFFER_CONTEXT_KHR`.
    pub context: Arc<Context>,
    /// `CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR`: as given with its 0, empty when NULL.
    pub properties: Vec<cl_command_buffer_properties_khr>,
    /// `CL_COMMAND_BUFFER_FLAGS_KHR`.
    pub flags: cl_command_buffer_flags_khr,
    /// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR`.
    pub asserts: cl_bitfield,
    state: Mutex<State>,
    /// The event of the last enqueue, kept while the command buffer has printf commands: runs
    /// of such a command buffer are serialized, since they share its printf buffers.
    last_printf_run: Mutex<Option<Arc<Event>>>,
}

impl ClObject for CommandBuffer {
    const KIND: Kind = Kind::CommandBuffer;
    const INVALID: i32 = CL_INVALID_COMMAND_BUFFER_KHR;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl CommandBuffer {
    /// A command buffer in the Recording state on `queue` (properties already checked).
    pub fn new(
        queue: Arc<CommandQueue>,
        properties: Vec<cl_command_buffer_properties_khr>,
        flags: cl_command_buffer_flags_khr,
        asserts: cl_bitfield,
    ) -> CommandBuffer {
        CommandBuffer {
            header: Header::new(Kind::CommandBuffer),
            context: queue.context.clone(),
            queue,
            properties,
            flags,
            asserts,
            state: Mutex::new(State::Recording(Recording {
                commands: Vec::new(),
                keep: Vec::new(),
                last_barrier: None,
                last_gpu: None,
                kernels: Vec::new(),
            })),
            last_printf_run: Mutex::new(None),
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

    /// Appends a command that runs after the commands of `wait` (and, implicitly, after the
    /// previous command on an in-order queue and after the last barrier command). Returns its
    /// sync point. Errors: as [`check_recording`](Self::check_recording); `CL_OUT_OF_RESOURCES`
    /// once `cl_uint` sync points run out.
    pub fn record(&self, wait: &[SyncPoint], op: Op, keep: Keep) -> ClResult<SyncPoint> {
        self.append(wait, op, keep, false, None)
    }

    /// As [`record`](Self::record), for a command that also has a CUDA form `cuda` (copies and
    /// fills on a green-context queue).
    pub fn record_with_cuda(
        &self,
        wait: &[SyncPoint],
        op: Op,
        keep: Keep,
        cuda: Option<CudaOp>,
    ) -> ClResult<SyncPoint> {
        self.append(wait, op, keep, false, cuda.map(CudaForm::Op))
    }

    /// Records an NDRange command ([`KernelCommand`]). Errors as [`record`](Self::record).
    pub fn record_kernel(
        &self,
        wait: &[SyncPoint],
        command: Arc<KernelCommand>,
    ) -> ClResult<SyncPoint> {
        let c = command.clone();
        let op = Op::Gpu(Arc::new(move |r, keep| c.record(r, keep)));
        let cuda = Some(CudaForm::Kernel(command.clone()));
        let sp = self.append(wait, op, Vec::new(), false, cuda)?;
        if let State::Recording(r) = &mut *self.lock() {
            r.kernels.push(command);
        }
        Ok(sp)
    }

    /// clCommandBarrierWithWaitListKHR: a command that waits for the commands of `wait` (all
    /// earlier commands when `wait` is empty) and that every later command waits for.
    /// Errors as [`record`](Self::record).
    pub fn record_barrier(&self, wait: &[SyncPoint]) -> ClResult<SyncPoint> {
        self.append(wait, Op::Order, Vec::new(), true, None)
    }

    fn append(
        &self,
        wait: &[SyncPoint],
        op: Op,
        keep: Keep,
        barrier: bool,
        cuda: Option<CudaForm>,
    ) -> ClResult<SyncPoint> {
        self.check_recording(wait)?;
        let in_order = self.queue.props() & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0;
        let mut st = self.lock();
        let State::Recording(r) = &mut *st else {
            return Err(ClError(CL_INVALID_OPERATION));
        };
        let index = r.commands.len();
        if index >= cl_uint::MAX as usize {
            return Err(ClError(CL_OUT_OF_RESOURCES));
        }
        let latest = |c: &Command, i: usize| if c.gpu { Some(i) } else { c.after };
        let mut deps: Vec<usize> = wait.iter().map(|&s| s as usize - 1).collect();
        if in_order && index > 0 {
            deps.push(index - 1);
        }
        deps.extend(r.last_barrier);
        let mut after = deps
            .into_iter()
            .filter_map(|d| latest(&r.commands[d], d))
            .max();
        if barrier && wait.is_empty() {
            after = after.max(r.last_gpu);
        }
        let gpu = matches!(op, Op::Gpu(_));
        r.commands.push(Command {
            op: Some(op),
            cuda,
            gpu,
            after,
        });
        r.keep.extend(keep);
        if barrier {
            r.last_barrier = Some(index);
        }
        if gpu {
            r.last_gpu = Some(index);
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
        // The CUDA forms of the device commands, in order (None once one lacks it).
        let mut cuda: Option<Vec<CudaForm>> = Some(Vec::new());
        for c in r.commands.iter_mut().filter(|c| c.gpu) {
            match (c.cuda.take(), cuda.as_mut()) {
                (Some(f), Some(v)) => v.push(f),
                _ => cuda = None,
            }
        }
        // Every device command with an index below `fence` is ordered before whatever is
        // recorded next.
        let mut fence = 0;
        for (i, c) in r.commands.iter_mut().enumerate() {
            let Some(Op::Gpu(f)) = c.op.take() else {
                continue;
            };
            let barrier = c.after.is_some_and(|a| a >= fence);
            if barrier {
                barriers += 1;
                fence = i;
            }
            steps.push((barrier, f));
        }
        let plan = Arc::new(Plan {
            steps,
            keep: std::mem::take(&mut r.keep),
            commands: r.commands.len(),
            barriers,
            kernels: std::mem::take(&mut r.kernels),
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
            exe.graph = cuda.and_then(|forms| self.cuda_graph(forms));
            *st = State::Executable(plan.clone(), Arc::new(exe));
        }
        Ok(())
    }

    /// The commands' CUDA forms captured into a graph of the queue's green context, when the
    /// queue has one, no command is mutable and every kernel can run as PTX; None otherwise
    /// (and when the capture fails: logged).
    fn cuda_graph(&self, forms: Vec<CudaForm>) -> Option<(Arc<GreenContext>, Arc<Graph>)> {
        let green = self.queue.device.green_context()?.clone();
        let mut ops: Vec<CudaOp> = Vec::with_capacity(forms.len());
        for f in forms {
            match f {
                CudaForm::Op(op) => ops.push(op),
                CudaForm::Kernel(k) if !k.mutable => {
                    let d = k.lock().0.clone();
                    let l = super::kernel_cuda::prepare_green_launch(
                        &k.kernel, &k.device, &d.range, &d.args,
                    )
                    .ok()
                    .flatten()
                    .filter(|l| Arc::ptr_eq(&l.green, &green))?;
                    ops.push(Arc::new(move |_, stream| l.enqueue_on(stream)));
                }
                CudaForm::Kernel(_) => return None,
            }
        }
        match green.capture(|stream| ops.iter().try_for_each(|op| op(&green, stream))) {
            Ok(g) => {
                tracing::debug!(
                    "command buffer captured into a CUDA graph ({} commands)",
                    ops.len()
                );
                Some((green, Arc::new(g)))
            }
            Err(e) => {
                tracing::warn!("command buffer as a CUDA graph: {e}; it runs through Vulkan");
                None
            }
        }
    }

    /// Records `plan` into a new secondary. Errors: `CL_OUT_OF_RESOURCES`.
    fn record_plan(&self, plan: &Plan) -> ClResult<Executable> {
        let vk = self.queue.device.vk()?;
        let mut keep = plan.keep.clone();
        let secondary = Secondary::record(vk, |rec| {
            for (barrier, f) in &plan.steps {
                if *barrier {
                    rec.barrier();
                }
                f(rec, &mut keep);
            }
        })
        .map_err(|e| refused("command buffer secondary", e))?;
        Ok(Executable {
            graph: None,
            secondary,
            keep,
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
                    let buf = Arc::new(e.to_buffer(&self.queue.device)?);
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
    /// its own after it, and prints the snapshots when it completes (before its event does);
    /// such runs wait for the previous run of the same command buffer, since they share the
    /// printf buffers. Errors: also `CL_OUT_OF_RESOURCES` when a snapshot cannot be allocated.
    pub fn enqueue(
        self: &Arc<Self>,
        queue: &Arc<CommandQueue>,
        wait_list: &[Arc<Event>],
    ) -> ClResult<Arc<Event>> {
        let exe = self.executable()?;
        let printfs = self.printf_buffers();
        let mut keep: Keep = vec![exe.clone(), self.clone()];
        if let (Some((green, graph)), true) = (&exe.graph, printfs.is_empty()) {
            let here = queue
                .device
                .green_context()
                .is_some_and(|g| Arc::ptr_eq(g, green));
            if here {
                let (g, graph) = (green.clone(), graph.clone());
                let work =
                    super::kernel_cuda::green_work(green.clone(), move || g.launch_graph(&graph));
                return Ok(queue.enqueue(CL_COMMAND_COMMAND_BUFFER_KHR, wait_list, work, keep));
            }
        }
        if printfs.is_empty() {
            let work = Work::Gpu(Box::new(move |r| r.execute(&exe.secondary)));
            return Ok(queue.enqueue(CL_COMMAND_COMMAND_BUFFER_KHR, wait_list, work, keep));
        }
        let vk = queue.device.vk()?;
        let mut pairs = Vec::with_capacity(printfs.len());
        for p in printfs {
            let snap = Buffer::new(vk, p.buf.size).map_err(|e| refused("printf snapshot", e))?;
            keep.push(p.clone());
            pairs.push((p, Arc::new(snap)));
        }
        let recorded = pairs.clone();
        let work = Work::Gpu(Box::new(move |r| {
            for (p, _) in &recorded {
                let (offset, size) = p.counter_range();
                r.fill_buffer(&p.buf, offset, size, 0);
            }
            r.barrier();
            r.execute(&exe.secondary);
            r.barrier();
            for (p, snap) in &recorded {
                r.copy_buffer(&p.buf, snap, &[(0, 0, p.buf.size)]);
            }
            // The engine ends every job with a barrier to host reads.
        }));
        let mut last = self
            .last_printf_run
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut waits = wait_list.to_vec();
        waits.extend(last.take());
        let then = Box::new(move || {
            for (p, snap) in &pairs {
                p.print_from(snap);
            }
        });
        let ev = queue.enqueue_then(CL_COMMAND_COMMAND_BUFFER_KHR, &waits, work, keep, then);
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
            let h = k.header.handle();
            if !h.is_null() {
                let _ = super::object::release::<KernelCommand>(h);
            }
        }
    }
}

/// `CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR`.
pub const NO_ADDITIONAL_WORK_GROUPS: cl_bitfield = 1 << 0;

/// The NDRange and argument values of a kernel command (as recorded or last updated).
#[derive(Clone)]
pub struct Dispatch {
    pub range: NdRange,
    /// Whether a local work size was given (`CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR` reports
    /// zeros otherwise).
    pub local_given: bool,
    /// Captured argument values (None: not set yet, deferred to an update).
    pub args: Vec<Option<ArgValue>>,
    /// Strong references to the buffers of `args` (captured arguments retain their buffers).
    pub held: Vec<Arc<Mem>>,
}

/// A launch buffer in use by a recorded secondary: the encoding of one [`Dispatch`].
pub struct Live {
    buf: Arc<Buffer>,
    /// The boxes of groups (one per work-group size) and their pipelines.
    regions: Vec<Region>,
    groups: [u64; 3],
    /// The printf buffer the launch header points to (kernels that call printf).
    printf: Option<Arc<PrintfBuffer>>,
    /// Compute-unit limit of a sub-device launch, and whether it uses the persistent variant
    /// (see [`Encoded`]).
    limited: Option<u64>,
    persistent: bool,
    /// What the encoded arguments reference (kernel, buffers, pipeline), alive as long as a
    /// secondary that reads this launch buffer.
    _keep: Keep,
}

impl Live {
    /// The launch of `e` from the launch buffer `buf` (already holding `e`).
    fn new(buf: Arc<Buffer>, e: Encoded) -> Live {
        Live {
            buf,
            regions: e.regions,
            groups: e.groups,
            limited: e.limited,
            persistent: e.persistent,
            printf: e.printf,
            _keep: e.keep,
        }
    }

    /// The pipeline when this launch is one indirect dispatch of the header's group counts:
    /// one box of groups from group 0 (a uniform NDRange), no compute-unit limit, counts
    /// within `max`.
    fn indirect(&self, max: [u64; 3]) -> Option<&Arc<Pipeline>> {
        let fits = (0..3).all(|i| self.groups[i] <= max[i]);
        single_region(&self.regions).filter(|_| fits && self.limited.is_none())
    }

    /// Whether `e` can replace this launch in place: both are one indirect dispatch of the
    /// same pipeline (group counts within `max`).
    fn in_place_ok(&self, e: &Encoded, max: [u64; 3]) -> bool {
        let fits = (0..3).all(|i| e.groups[i] <= max[i]);
        match (self.indirect(max), e.single_pipeline()) {
            (Some(a), Some(b)) => {
                Arc::ptr_eq(a, b) && fits && e.limited.is_none() && e.size() as u64 <= self.buf.size
            }
            _ => false,
        }
    }
}

/// An NDRange command of a command buffer; a `cl_mutable_command_khr` when the application
/// asked for its handle.
pub struct KernelCommand {
    header: Header,
    /// Handle of the command buffer (`CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR`).
    pub command_buffer: usize,
    pub queue: Arc<CommandQueue>,
    pub kernel: Arc<Kernel>,
    device: Arc<Device>,
    /// `CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR`: as given with its 0, empty when NULL.
    pub properties: Vec<cl_command_properties_khr>,
    /// `CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR`.
    pub updatable: cl_mutable_dispatch_fields_khr,
    /// `CL_MUTABLE_DISPATCH_ASSERTS_KHR`.
    pub asserts: cl_bitfield,
    /// Work-groups per dimension when recorded.
    pub recorded_groups: [u64; 3],
    /// Whether the application holds a handle to this command (it may be updated): its
    /// group counts are then read by an indirect dispatch from the launch buffer, so an update
    /// in place is a memory write. Commands without a handle dispatch directly (cheaper on
    /// some drivers).
    mutable: bool,
    /// The device's `maxComputeWorkGroupCount`.
    max_groups: [u64; 3],
    state: Mutex<(Dispatch, Option<Arc<Live>>)>,
}

impl ClObject for KernelCommand {
    const KIND: Kind = Kind::MutableCommand;
    const INVALID: i32 = CL_INVALID_MUTABLE_COMMAND_KHR;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl KernelCommand {
    /// A kernel command of the command buffer `cb` (its handle) dispatching `dispatch`.
    /// Errors: those of [`Kernel::encode`] (`CL_INVALID_KERNEL_ARGS` only when an argument
    /// is unset and `allow_unset` is false), `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cb: &CommandBuffer,
        cb_handle: usize,
        kernel: Arc<Kernel>,
        dispatch: Dispatch,
        properties: Vec<cl_command_properties_khr>,
        updatable: cl_mutable_dispatch_fields_khr,
        asserts: cl_bitfield,
        allow_unset: bool,
        mutable: bool,
    ) -> ClResult<KernelCommand> {
        let device = cb.queue.device.clone();
        let max_groups = device
            .phys
            .limits
            .max_compute_work_group_count
            .map(|v| v as u64);
        let r = &dispatch.range;
        let recorded_groups = r.groups();
        let mut k = KernelCommand {
            header: Header::new(Kind::MutableCommand),
            command_buffer: cb_handle,
            queue: cb.queue.clone(),
            kernel,
            device,
            properties,
            updatable,
            asserts,
            recorded_groups,
            max_groups,
            mutable,
            state: Mutex::new((dispatch.clone(), None)),
        };
        if dispatch.args.iter().any(|a| a.is_none()) && allow_unset {
            return Ok(k);
        }
        let e = k
            .encode(&dispatch)?
            .ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
        let buf = Arc::new(e.to_buffer(&k.device)?);
        k.state = Mutex::new((dispatch, Some(Arc::new(Live::new(buf, e)))));
        Ok(k)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Dispatch, Option<Arc<Live>>)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current NDRange and arguments.
    pub fn dispatch(&self) -> Dispatch {
        self.lock().0.clone()
    }

    fn live(&self) -> Option<Arc<Live>> {
        self.lock().1.clone()
    }

    fn set(&self, d: Dispatch, live: Option<Arc<Live>>) {
        *self.lock() = (d, live);
    }

    /// Whether every argument is set (the command can be recorded).
    fn complete(&self) -> bool {
        self.lock().1.is_some()
    }

    /// Encodes `d`: None while an argument is unset. Errors: as [`Kernel::encode`].
    fn encode(&self, d: &Dispatch) -> ClResult<Option<Encoded>> {
        if d.args.iter().any(|a| a.is_none()) {
            return Ok(None);
        }
        self.kernel.encode(&self.device, d.range, &d.args).map(Some)
    }

    /// Records the current launch: for a mutable command (one the application holds a handle
    /// to) whose launch is one box of groups, one `vkCmdDispatchIndirect` reading the group
    /// counts from the launch header; otherwise direct dispatches (per box of a non-uniform
    /// NDRange, split where a count exceeds the device limit, in waves on a compute-unit-limited
    /// sub-device).
    fn record(&self, r: &mut Recorder, keep: &mut Keep) {
        let Some(live) = self.live() else {
            return;
        };
        if let Some(pipeline) = live.indirect(self.max_groups).filter(|_| self.mutable) {
            let push = push_constants(live.buf.address, [0; 3]);
            r.dispatch_indirect(pipeline, &push, &live.buf, GROUPS_OFFSET);
        } else {
            record_launch(
                r,
                &live.regions,
                live.buf.address,
                live.limited,
                live.persistent,
                self.max_groups,
            );
        }
        keep.push(live);
    }
}
