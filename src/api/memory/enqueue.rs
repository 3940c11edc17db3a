//! What every buffer enqueue shares: the queue, buffer and wait list checked, and the event
//! handed out (and waited for, when blocking).

use crate::api::event::{return_event, wait_all, wait_list};
use crate::core::error::{ClError, ClResult};
use crate::core::event::Event;
use crate::core::memory::Mem;
use crate::core::object::lookup;
use crate::core::queue::CommandQueue;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// The queue, buffer and wait list of a buffer command.
type CommandArgs = (Arc<CommandQueue>, Arc<Mem>, Vec<Arc<Event>>);

/// The queue, buffer and wait list of a buffer command, checked.
/// Errors: `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_MEM_OBJECT` (also for an image),
/// `CL_INVALID_CONTEXT` (buffer or events of another context), `CL_INVALID_EVENT_WAIT_LIST`.
///
/// # Safety
/// `list` must be NULL or hold `num` handles.
pub(super) unsafe fn command_args(
    queue: cl_command_queue,
    buffer: cl_mem,
    num: cl_uint,
    list: *const cl_event,
) -> ClResult<CommandArgs> {
    // SAFETY: forwarded.
    let (q, m, waits) = unsafe { mem_command_args(queue, buffer, num, list) }?;
    Ok((q, m.as_buffer()?, waits))
}

/// As [`command_args`] for a command that takes any memory object (unmap, image commands).
///
/// # Safety
/// `list` must be NULL or hold `num` handles.
pub(super) unsafe fn mem_command_args(
    queue: cl_command_queue,
    buffer: cl_mem,
    num: cl_uint,
    list: *const cl_event,
) -> ClResult<CommandArgs> {
    let q = lookup::<CommandQueue>(queue as *const c_void)?;
    let m = lookup::<Mem>(buffer as *const c_void)?;
    if !Arc::ptr_eq(&q.context, &m.context) {
        return Err(ClError(CL_INVALID_CONTEXT));
    }
    // SAFETY: forwarded.
    let waits = unsafe { wait_list(&q, num, list) }?;
    Ok((q, m, waits))
}

/// Finishes an enqueue: hands out the event and, for blocking calls, waits for it.
/// Errors: `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` when a blocking command failed.
///
/// # Safety
/// `event` must be NULL or valid for a write.
pub(super) unsafe fn finish_enqueue(
    ev: Arc<Event>,
    blocking: cl_bool,
    event: *mut cl_event,
) -> ClResult<()> {
    // SAFETY: forwarded.
    unsafe { return_event(event, ev.clone()) };
    if blocking != 0 {
        wait_all(&[ev])?;
    }
    Ok(())
}
