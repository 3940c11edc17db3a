//! Deep copies of command buffers onto other queues (`clRemapCommandBufferKHR`,
//! `cl_khr_command_buffer_multi_device` 0.9.2): every recorded command is recorded again, in
//! order, with its sync-point wait list, to the queue the mapping gives it. Copies, fills and
//! barriers keep their device commands (every queue of a copy has the original's root device,
//! so the same `VkDevice`); NDRange commands are made again for the new queue's device (a
//! sub-device's compute-unit limit is in the dispatch), with the arguments, range and
//! properties they have now (mutable updates included). The copy has the original's state:
//! still recording, or finalized (and executable when the original is).

use super::{CommandBuffer, Placement, State, Step};
use crate::core::error::{ClError, ClResult};
use crate::core::kernel_command::KernelCommand;
use crate::core::object::{self, ClObject};
use opencl_sys::*;
use std::sync::Arc;

/// An NDRange command of the original and its copy.
pub type CommandPair = (Arc<KernelCommand>, Arc<KernelCommand>);

impl CommandBuffer {
    /// Records every command of `from` into this command buffer (new, recording, created with
    /// the target queues, registered as `handle`), command i's queue index q becoming
    /// `queue_of(q)`; finalizes it when `from` is finalized. Returns each NDRange command of
    /// `from` with its copy; the copy of a command the application holds a handle to is
    /// registered as a handle of its own (released with this command buffer).
    /// Errors: `CL_INVALID_PROGRAM_EXECUTABLE` (a kernel's program not built for a new
    /// queue's device), those of [`KernelCommand::new`], of [`Self::finalize`].
    pub fn copy_commands(
        &self,
        from: &CommandBuffer,
        handle: usize,
        queue_of: &dyn Fn(usize) -> usize,
    ) -> ClResult<Vec<CommandPair>> {
        let (recorded, keep, finalized) = match &*from.lock() {
            State::Recording(r) => (r.commands.clone(), r.keep.clone(), false),
            State::Finalized(p) | State::Executable(p, _) => {
                (p.recorded.clone(), p.keep.clone(), true)
            }
        };
        let mut pairs = Vec::new();
        let mut keep = Some(keep);
        for c in recorded {
            let at = Placement {
                queue: queue_of(c.at.queue),
                wait: c.at.wait.clone(),
            };
            let step = match c.step.as_deref() {
                Some(Step::Kernel(k)) => {
                    let queue = &self.queues[at.queue];
                    // CL_INVALID_PROGRAM_EXECUTABLE, as clCommandNDRangeKernelKHR, where the
                    // kernel's program has no executable for the new device.
                    if !k.kernel.program.has_executable_for(&queue.device) {
                        return Err(ClError(CL_INVALID_PROGRAM_EXECUTABLE));
                    }
                    let dispatch = k.lock().0.clone();
                    let copy = Arc::new(KernelCommand::new(
                        queue,
                        handle,
                        k.kernel.clone(),
                        dispatch,
                        k.properties.clone(),
                        k.updatable,
                        k.asserts,
                        true,
                        k.mutable,
                    )?);
                    self.record_kernel(&at, copy.clone())?;
                    if !k.header().handle().is_null() {
                        object::register_arc(copy.clone());
                    }
                    pairs.push((k.clone(), copy));
                    continue;
                }
                _ => c.step.clone(),
            };
            self.append(&at, step, keep.take().unwrap_or_default(), c.barrier)?;
        }
        if let Some(keep) = keep {
            // Nothing but kernels was recorded: what the original keeps, the copy keeps.
            if let State::Recording(r) = &mut *self.lock() {
                r.keep.extend(keep);
            }
        }
        if finalized {
            self.finalize()?;
        }
        Ok(pairs)
    }
}
