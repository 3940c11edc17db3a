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
use super::error::{ClError, ClResult};
use super::event::Event;
use super::object::{ClObject, Header, Kind};
use super::queue::CommandQueue;
use crate::backend::vulkan::queue::{Recorder, Work};
use crate::backend::vulkan::secondary::{self, Secondary};
use opencl_sys::*;
use std::any::Any;
use std::sync::{Arc, Mutex};

/// A sync point: 1 + the index of the command it names (0 is never issued).
pub type SyncPoint = cl_sync_point_khr;

/// Objects a command keeps alive as long as the command buffer (buffers, kernels, pipelines,
/// launch buffers).
pub type Keep = Vec<Arc<dyn Any + Send + Sync>>;

/// What a recorded command does when the secondary command buffer is recorded.
pub enum Op {
    /// Device commands, recorded once by finalize.
    Gpu(Box<dyn FnOnce(&mut Recorder) + Send>),
    /// Nothing on the device (barrier commands, empty copies and fills, empty NDRanges): the
    /// command only orders others.
    Order,
}

struct Command {
    op: Option<Op>,
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
}

/// A finalized command buffer: the recorded secondary and what it uses.
pub struct Executable {
    pub secondary: Secondary,
    _keep: Keep,
    /// Number of recorded commands (sync points issued).
    pub commands: usize,
    /// Number of pipeline barriers finalize put into the secondary.
    pub barriers: usize,
}

enum State {
    Recording(Recording),
    Executable(Arc<Executable>),
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
    state: Mutex<State>,
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
    ) -> CommandBuffer {
        CommandBuffer {
            header: Header::new(Kind::CommandBuffer),
            context: queue.context.clone(),
            queue,
            properties,
            state: Mutex::new(State::Recording(Recording {
                commands: Vec::new(),
                keep: Vec::new(),
                last_barrier: None,
                last_gpu: None,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `CL_COMMAND_BUFFER_STATE_KHR`: RECORDING until finalized, then EXECUTABLE.
    pub fn state(&self) -> cl_command_buffer_state_khr {
        match *self.lock() {
            State::Recording(_) => CL_COMMAND_BUFFER_STATE_RECORDING_KHR,
            State::Executable(_) => CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR,
        }
    }

    /// Checks the state and a sync-point wait list before a command is prepared (so that a
    /// recording error is reported before the command's own argument errors are looked at).
    /// Errors: `CL_INVALID_OPERATION` if finalized, `CL_INVALID_SYNC_POINT_WAIT_LIST_KHR` for a
    /// sync point this command buffer did not issue.
    pub fn check_recording(&self, wait: &[SyncPoint]) -> ClResult<()> {
        match &*self.lock() {
            State::Executable(_) => Err(ClError(CL_INVALID_OPERATION)),
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
        self.append(wait, op, keep, false)
    }

    /// clCommandBarrierWithWaitListKHR: a command that waits for the commands of `wait` (all
    /// earlier commands when `wait` is empty) and that every later command waits for.
    /// Errors as [`record`](Self::record).
    pub fn record_barrier(&self, wait: &[SyncPoint]) -> ClResult<SyncPoint> {
        self.append(wait, Op::Order, Vec::new(), true)
    }

    fn append(&self, wait: &[SyncPoint], op: Op, keep: Keep, barrier: bool) -> ClResult<SyncPoint> {
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

    /// clFinalizeCommandBufferKHR: records every command once into a secondary command buffer
    /// with the barriers the dependencies need. Errors: `CL_INVALID_OPERATION` if already
    /// finalized, `CL_OUT_OF_RESOURCES` if the Vulkan command buffer cannot be made (the
    /// recorded commands are consumed by the attempt: such a command buffer stays in the
    /// Recording state but a later finalize would record an incomplete secondary).
    pub fn finalize(&self) -> ClResult<()> {
        let mut st = self.lock();
        let State::Recording(r) = &mut *st else {
            return Err(ClError(CL_INVALID_OPERATION));
        };
        let vk = self.queue.device.vk()?;
        let mut barriers = 0;
        let commands = &mut r.commands;
        let secondary = Secondary::record(vk, |rec| {
            // Every device command with an index below `fence` is ordered before whatever is
            // recorded next.
            let mut fence = 0;
            for (i, c) in commands.iter_mut().enumerate() {
                let Some(Op::Gpu(f)) = c.op.take() else {
                    continue;
                };
                if c.after.is_some_and(|a| a >= fence) {
                    rec.barrier();
                    barriers += 1;
                    fence = i;
                }
                f(rec);
            }
        })
        .map_err(|e| {
            tracing::error!("command buffer secondary: {e}");
            ClError(CL_OUT_OF_RESOURCES)
        })?;
        let exe = Executable {
            secondary,
            _keep: std::mem::take(&mut r.keep),
            commands: r.commands.len(),
            barriers,
        };
        secondary::SECONDARY_BARRIERS
            .fetch_add(barriers as u64, std::sync::atomic::Ordering::Relaxed);
        tracing::debug!(
            "command buffer finalized: {} commands, {} barriers",
            exe.commands,
            exe.barriers
        );
        *st = State::Executable(Arc::new(exe));
        Ok(())
    }

    /// The finalized form. Errors: `CL_INVALID_OPERATION` if not finalized.
    pub fn executable(&self) -> ClResult<Arc<Executable>> {
        match &*self.lock() {
            State::Executable(e) => Ok(e.clone()),
            State::Recording(_) => Err(ClError(CL_INVALID_OPERATION)),
        }
    }

    /// clEnqueueCommandBufferKHR on `queue` (already checked compatible): one job that executes
    /// the secondary after `wait_list`. The job keeps the command buffer alive until it
    /// completes. Errors: `CL_INVALID_OPERATION` if not finalized.
    pub fn enqueue(
        self: &Arc<Self>,
        queue: &Arc<CommandQueue>,
        wait_list: &[Arc<Event>],
    ) -> ClResult<Arc<Event>> {
        let exe = self.executable()?;
        let keep: Keep = vec![exe.clone(), self.clone()];
        let work = Work::Gpu(Box::new(move |r| r.execute(&exe.secondary)));
        Ok(queue.enqueue(CL_COMMAND_COMMAND_BUFFER_KHR, wait_list, work, keep))
    }
}
