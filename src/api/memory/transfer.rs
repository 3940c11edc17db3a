//! Whole-buffer transfers (OpenCL 3.0 sections 5.2.2 and 5.2.3): reads, writes, copies, fills.

use super::enqueue::{command_args, finish_enqueue};
use crate::api::status;
use crate::core::command::Command;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::Mem;
use crate::core::object::lookup;
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// clEnqueueReadBuffer. Errors: those of the queue, buffer and wait list; `CL_INVALID_VALUE`
/// (region out of bounds, NULL ptr); `CL_INVALID_OPERATION` (buffer created with
/// CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS);
/// `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` for a blocking read after a failed event.
///
/// # Safety
/// Pointers as the OpenCL API requires (`ptr` holds `size` bytes).
pub unsafe extern "C" fn clEnqueueReadBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, m, waits) = unsafe { command_args(queue, buffer, num, list) }?;
        let cmd = Command::read(m, offset, size, UserPtr(ptr))?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, blocking, event) }
    })
}

/// clEnqueueWriteBuffer. Errors as [`clEnqueueReadBuffer`], with `CL_INVALID_OPERATION` for
/// buffers created with CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS or CL_MEM_IMMUTABLE_EXT.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueWriteBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, m, waits) = unsafe { command_args(queue, buffer, num, list) }?;
        let cmd = Command::write(m, offset, size, UserPtr(ptr as *mut c_void))?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, blocking, event) }
    })
}

/// clEnqueueCopyBuffer (recorded as `vkCmdCopyBuffer`). Errors: those of the queue, buffers
/// and wait list; `CL_INVALID_VALUE` (regions out of bounds); `CL_MEM_COPY_OVERLAP` (regions of
/// the same storage overlap).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueCopyBuffer(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, src, waits) = unsafe { command_args(queue, src_buffer, num, list) }?;
        let dst = lookup::<Mem>(dst_buffer as *const c_void)?.as_buffer()?;
        // CL_INVALID_CONTEXT if the context associated with command_queue, src_buffer and
        // dst_buffer are not the same.
        if !Arc::ptr_eq(&q.context, &dst.context) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        let cmd = Command::copy(src, dst, src_offset, dst_offset, size)?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}

/// clEnqueueFillBuffer: `vkCmdFillBuffer` where the pattern repeats every 4 bytes and the
/// region is 4-byte aligned, else written by the host into the (mapped) buffer.
/// Errors: those of the queue, buffer and wait list; `CL_INVALID_VALUE` (NULL pattern,
/// pattern size not 1..128 and a power of two, offset or size not a multiple of it, region out
/// of bounds).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueFillBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, m, waits) = unsafe { command_args(queue, buffer, num, list) }?;
        // SAFETY: pattern holds pattern_size bytes per the API.
        let pattern = unsafe { pattern_bytes(pattern, pattern_size) }?;
        let cmd = Command::fill(m, pattern, offset, size)?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}

/// The bytes of a fill pattern. Errors: `CL_INVALID_VALUE` for a NULL `pattern` or a
/// `pattern_size` of 0 or above 128 (the other size rules are core's: `check_fill`).
///
/// # Safety
/// `pattern` must be NULL or hold `pattern_size` bytes, alive for the returned lifetime.
pub(crate) unsafe fn pattern_bytes<'a>(
    pattern: *const c_void,
    pattern_size: usize,
) -> ClResult<&'a [u8]> {
    // CL_INVALID_VALUE if pattern is NULL, or if pattern_size is 0 or not one of
    // {1, 2, 4, 8, 16, 32, 64, 128}.
    if pattern.is_null() || pattern_size == 0 || pattern_size > 128 {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: pattern holds pattern_size bytes per the caller.
    Ok(unsafe { std::slice::from_raw_parts(pattern as *const u8, pattern_size) })
}
