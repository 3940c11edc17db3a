//! Whole-buffer transfers (OpenCL 3.0 sections 5.2.2 and 5.2.3): reads, writes, copies, fills.

use super::{
    check_copy, check_fill, check_writable, command_args, finish_enqueue, in_bounds, keep, FillPlan,
};
use crate::api::status;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::queue::Work;
use crate::core::error::{refused, ClError};
use crate::core::kernel_cuda;
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
        in_bounds(offset, size, m.size)?;
        if ptr.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if m.flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        let dst = UserPtr(ptr);
        let ev =
            if size > 0 && (!m.storage.host_cached || crate::util::config::config().staged_reads) {
                // Memory the host reads slowly (device-local behind the PCI BAR): one command
                // whose device part copies the range into host-cached staging memory and whose
                // host part (run once the copy completed successfully, before the event is
                // complete) copies it out.
                let staging = Arc::new(
                    Buffer::readback(q.device.vk()?, size as u64)
                        .map_err(|e| refused("read staging", e))?,
                );
                let (sb, st, at) = (
                    m.storage.clone(),
                    staging.clone(),
                    (m.offset + offset) as u64,
                );
                let copy = Work::Gpu(Box::new(move |r| {
                    r.copy_buffer(&sb, &st, &[(at, 0, size as u64)])
                }));
                let src = UserPtr(staging.mapped() as *mut c_void);
                let out = Box::new(move || {
                    // SAFETY: the staging buffer holds `size` bytes; the application keeps `ptr`
                    // valid for `size` bytes until the read completes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            src.get() as *const u8,
                            dst.get() as *mut u8,
                            size,
                        )
                    };
                });
                let mut k = keep(&m);
                k.push(staging);
                q.enqueue_then(CL_COMMAND_READ_BUFFER, &waits, copy, k, out)
            } else {
                let src = UserPtr(m.mapped().wrapping_add(offset) as *mut c_void);
                let work = Work::Host(Box::new(move || {
                    // SAFETY: the source lies inside the mapped buffer (bounds checked); the
                    // application keeps `ptr` valid for `size` bytes until the read completes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            src.get() as *const u8,
                            dst.get() as *mut u8,
                            size,
                        )
                    };
                    0
                }));
                q.enqueue(CL_COMMAND_READ_BUFFER, &waits, work, keep(&m))
            };
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
        in_bounds(offset, size, m.size)?;
        if ptr.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if m.flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_OPERATION if buffer was created with CL_MEM_IMMUTABLE_EXT.
        check_writable(&m)?;
        let (src, dst) = (
            UserPtr(ptr as *mut c_void),
            UserPtr(m.mapped().wrapping_add(offset) as *mut c_void),
        );
        let work = Work::Host(Box::new(move || {
            // SAFETY: as for reads, in the other direction.
            unsafe {
                std::ptr::copy_nonoverlapping(src.get() as *const u8, dst.get() as *mut u8, size)
            };
            0
        }));
        let ev = q.enqueue(CL_COMMAND_WRITE_BUFFER, &waits, work, keep(&m));
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
        let dst = lookup::<Mem>(dst_buffer as *const c_void)?;
        if !Arc::ptr_eq(&q.context, &dst.context) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        let (s, d) = check_copy(&src, &dst, src_offset, dst_offset, size)?;
        let on_green = || {
            let n = size as u64;
            let op = kernel_cuda::copy_op(&q.device, &src.storage, s, &dst.storage, d, n);
            kernel_cuda::on_green(&q.device, op)
        };
        let work = if size == 0 {
            Work::Nop
        } else if let Some(w) = on_green() {
            w
        } else {
            let (sb, db) = (src.storage.clone(), dst.storage.clone());
            Work::Gpu(Box::new(move |r| {
                r.copy_buffer(&sb, &db, &[(s, d, size as u64)])
            }))
        };
        let mut k = keep(&src);
        k.push(dst.clone());
        let ev = q.enqueue(CL_COMMAND_COPY_BUFFER, &waits, work, k);
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
        let work = match unsafe { check_fill(&m, pattern, pattern_size, offset, size) }? {
            FillPlan::Empty => Work::Nop,
            FillPlan::Words { offset, size, word } => {
                let storage = m.storage.clone();
                let op = kernel_cuda::fill_op(&q.device, &storage, offset, size, word);
                kernel_cuda::on_green(&q.device, op).unwrap_or_else(|| {
                    Work::Gpu(Box::new(move |r| {
                        r.fill_buffer(&storage, offset, size, word)
                    }))
                })
            }
            FillPlan::Bytes(pat) => {
                let dst = UserPtr(m.mapped().wrapping_add(offset) as *mut c_void);
                Work::Host(Box::new(move || {
                    // SAFETY: the region lies inside the mapped buffer (bounds checked above).
                    let d = unsafe { std::slice::from_raw_parts_mut(dst.get() as *mut u8, size) };
                    for c in d.chunks_mut(pat.len()) {
                        c.copy_from_slice(&pat[..c.len()]);
                    }
                    0
                }))
            }
        };
        let ev = q.enqueue(CL_COMMAND_FILL_BUFFER, &waits, work, keep(&m));
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}
