//! Rectangular transfers (OpenCL 3.0 sections 5.2.2 and 5.2.3): clEnqueueReadBufferRect,
//! clEnqueueWriteBufferRect and clEnqueueCopyBufferRect.
//!
//! A region is `[width in bytes, height in rows, depth in slices]`; an origin is `[x in bytes,
//! y in rows, z in slices]` (the geometry and its checks: `core::rect`). Host transfers copy
//! row by row on the queue's worker; copies are one `vkCmdCopyBuffer` with one region per row.

use super::enqueue::{command_args, finish_enqueue};
use crate::api::status;
use crate::core::command::Command;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::Mem;
use crate::core::object::lookup;
use crate::core::rect::HostRect;
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// Reads three `size_t`s. Errors: `CL_INVALID_VALUE` for NULL.
///
/// # Safety
/// `p` must be NULL or point to three readable `size_t`s.
unsafe fn triple(p: *const usize) -> ClResult<[usize; 3]> {
    if p.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: non-NULL and three elements long per the caller.
    Ok(unsafe { [*p, *p.add(1), *p.add(2)] })
}

/// Reads origins and region. Errors: `CL_INVALID_VALUE` for a NULL array or a region element 0.
///
/// # Safety
/// Each pointer must be NULL or point to three readable `size_t`s.
pub(crate) unsafe fn rect_arrays(
    a: *const usize,
    b: *const usize,
    region: *const usize,
) -> ClResult<[[usize; 3]; 3]> {
    // CL_INVALID_VALUE if buffer_origin, host_origin, or region is NULL (copy: src_origin,
    // dst_origin or region).
    // SAFETY: forwarded.
    let (a, b, r) = unsafe { (triple(a)?, triple(b)?, triple(region)?) };
    // CL_INVALID_VALUE if any region array element is 0.
    if r.contains(&0) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    Ok([a, b, r])
}

/// The body of clEnqueueReadBufferRect (`write` false) and clEnqueueWriteBufferRect.
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
unsafe fn host_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    write: bool,
    blocking: cl_bool,
    rect: HostRect,
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> ClResult<()> {
    // SAFETY: forwarded.
    let (q, m, waits) = unsafe { command_args(queue, buffer, num, list) }?;
    // CL_INVALID_VALUE if ptr is a NULL value.
    if ptr.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let cmd = Command::host_rect(m, &rect, write, UserPtr(ptr))?;
    let ev = q.enqueue_command(cmd, &waits)?;
    // SAFETY: forwarded.
    unsafe { finish_enqueue(ev, blocking, event) }
}

/// clEnqueueReadBufferRect: copies a 2D or 3D rectangle of `buffer` to host memory `ptr`.
/// Errors: those of the queue, buffer and wait list; `CL_INVALID_VALUE` (NULL origin, region
/// or ptr, a region element 0, pitches too small or not multiples, the buffer rectangle out of
/// bounds); `CL_INVALID_OPERATION` (buffer created with CL_MEM_HOST_WRITE_ONLY or
/// CL_MEM_HOST_NO_ACCESS); `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` for a blocking read
/// after a failed event.
///
/// # Safety
/// Pointers as the OpenCL API requires (`ptr` holds the host rectangle).
pub unsafe extern "C" fn clEnqueueReadBufferRect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let [buffer_o, host, region] = unsafe { rect_arrays(buffer_origin, host_origin, region) }?;
        let pitches = [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ];
        let rect = HostRect {
            buffer: buffer_o,
            host,
            region,
            pitches,
        };
        // SAFETY: forwarded.
        unsafe { host_rect(queue, buffer, false, blocking, rect, ptr, num, list, event) }
    })
}

/// clEnqueueWriteBufferRect: copies a 2D or 3D rectangle of host memory `ptr` into `buffer`.
/// Errors as [`clEnqueueReadBufferRect`], with `CL_INVALID_OPERATION` for buffers created with
/// CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueWriteBufferRect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let [buffer_o, host, region] = unsafe { rect_arrays(buffer_origin, host_origin, region) }?;
        let pitches = [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ];
        let rect = HostRect {
            buffer: buffer_o,
            host,
            region,
            pitches,
        };
        // SAFETY: forwarded.
        unsafe {
            host_rect(
                queue,
                buffer,
                true,
                blocking,
                rect,
                ptr as *mut c_void,
                num,
                list,
                event,
            )
        }
    })
}

/// clEnqueueCopyBufferRect: one `vkCmdCopyBuffer` with one region per row.
/// Errors: those of the queue, buffers and wait list; `CL_INVALID_VALUE` (NULL origin or
/// region, a region element 0, pitches too small or not multiples, a rectangle out of bounds,
/// the same buffer with both pitches different); `CL_MEM_COPY_OVERLAP` (rectangles of the same
/// storage share a byte).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueCopyBufferRect(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
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
        // SAFETY: each non-NULL array holds 3 values per the API.
        let arrays = unsafe { rect_arrays(src_origin, dst_origin, region) }?;
        let pitches = [
            src_row_pitch,
            src_slice_pitch,
            dst_row_pitch,
            dst_slice_pitch,
        ];
        let cmd = Command::copy_rect(src, dst, arrays, pitches)?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}
