//! What every `cl_khr_command_buffer` recording entry point shares (`command_buffer.rs`,
//! `command_buffer_image.rs`): the checks it starts with, the buffers it takes, and the
//! recording of its command with its sync point.

use super::{properties, slice_from};
use crate::core::command::Command;
use crate::core::command_buffer::{CommandBuffer, Placement};
use crate::core::error::{ClError, ClResult};
use crate::core::memory::Mem;
use crate::core::object::lookup;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// The checks every recording entry point starts with, in the spec's order; returns the
/// command buffer and where the command goes (its queue's index, its sync-point wait list).
/// Errors: `CL_INVALID_COMMAND_BUFFER_KHR`, `CL_INVALID_COMMAND_QUEUE` and
/// `CL_INVALID_CONTEXT` (`command_queue`: `command_buffer_multi::queue_index`),
/// `CL_INVALID_OPERATION` (finalized), `CL_INVALID_VALUE`
/// (any command property: none is defined for these commands; `mutable_handle` not NULL),
/// `CL_INVALID_SYNC_POINT_WAIT_LIST_KHR` (list NULL with a count, a list with count 0, a sync
/// point not issued by this command buffer).
///
/// # Safety
/// `props` NULL or zero-terminated; `list` NULL or holding `num` sync points.
pub(super) unsafe fn recording(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> ClResult<(Arc<CommandBuffer>, Placement)> {
    // SAFETY: forwarded.
    let (cb, wait, pairs) =
        unsafe { recording_with(command_buffer, command_queue, props, num, list) }?;
    // CL_INVALID_VALUE if values specified in properties are not valid (none are defined).
    // CL_INVALID_VALUE if mutable_handle is not NULL.
    if !pairs.is_empty() || !mutable_handle.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    Ok((cb, wait))
}

/// A command property and its value.
pub(super) type PropertyPair = (cl_command_properties_khr, cl_command_properties_khr);

/// [`recording`] without the property and handle checks: returns the properties as pairs.
/// Errors: as [`recording`], `CL_INVALID_VALUE` for a property list that is not
/// zero-terminated pairs.
///
/// # Safety
/// As [`recording`].
pub(super) unsafe fn recording_with(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    num: cl_uint,
    list: *const cl_sync_point_khr,
) -> ClResult<(Arc<CommandBuffer>, Placement, Vec<PropertyPair>)> {
    let cb = lookup::<CommandBuffer>(command_buffer)?;
    let queue = super::command_buffer_multi::queue_index(&cb, command_queue)?;
    cb.check_recording(&[])?;
    // SAFETY: NULL or zero-terminated per the caller.
    let pairs = unsafe { properties(props) }.map_err(|_| ClError(CL_INVALID_VALUE))?;
    // CL_INVALID_SYNC_POINT_WAIT_LIST_KHR if sync_point_wait_list is NULL and
    // num_sync_points_in_wait_list is > 0, or sync_point_wait_list is not NULL and
    // num_sync_points_in_wait_list is 0, or if synchronization-point objects in
    // sync_point_wait_list are not valid synchronization-points.
    if list.is_null() != (num == 0) {
        return Err(ClError(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR));
    }
    // SAFETY: list holds num sync points.
    let wait = unsafe { slice_from(list, num as usize) }.to_vec();
    cb.check_recording(&wait)?;
    Ok((cb, Placement { queue, wait }, pairs))
}

/// Records `cmd` and writes its sync point. Errors as [`CommandBuffer::record_command`].
///
/// # Safety
/// `sync_point` NULL or valid for a write.
pub(super) unsafe fn finish(
    cb: &CommandBuffer,
    wait: &Placement,
    cmd: Command,
    sync_point: *mut cl_sync_point_khr,
) -> ClResult<()> {
    let sp = cb.record_command(wait, cmd)?;
    // SAFETY: forwarded.
    unsafe { super::write_opt(sync_point, sp) };
    Ok(())
}

/// A buffer of the command buffer's context. Errors: `CL_INVALID_MEM_OBJECT`,
/// `CL_INVALID_CONTEXT`.
pub(super) fn buffer_of(cb: &CommandBuffer, mem: cl_mem) -> ClResult<Arc<Mem>> {
    let m = lookup::<Mem>(mem as *const c_void)?.as_buffer()?;
    // CL_INVALID_CONTEXT if the context associated with command_buffer and the buffers is not
    // the same.
    if !Arc::ptr_eq(&m.context, &cb.context) {
        return Err(ClError(CL_INVALID_CONTEXT));
    }
    Ok(m)
}
