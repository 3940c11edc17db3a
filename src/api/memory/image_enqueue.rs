//! Image commands (OpenCL 3.0 sections 5.3.3 to 5.3.5): reads, writes, copies between
//! images and with buffers, fills. Each reads the application's arrays and builds core's
//! command (`core/image_command.rs`), which holds the spec's checks.

use super::enqueue::{finish_enqueue, mem_command_args};
use crate::api::status;
use crate::core::command::Command;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::Mem;
use crate::core::object::lookup;
use crate::core::queue::CommandQueue;
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// Three `size_t`s at `p`. Errors: `CL_INVALID_VALUE` for NULL.
///
/// # Safety
/// `p` NULL or valid for three reads.
unsafe fn triple(p: *const usize) -> ClResult<[usize; 3]> {
    if p.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { [*p, *p.add(1), *p.add(2)] })
}

/// A second memory object of `q`'s context. Errors: `CL_INVALID_MEM_OBJECT`,
/// `CL_INVALID_CONTEXT`.
fn other(q: &CommandQueue, mem: cl_mem) -> ClResult<Arc<Mem>> {
    let m = lookup::<Mem>(mem as *const c_void)?;
    if !Arc::ptr_eq(&q.context, &m.context) {
        return Err(ClError(CL_INVALID_CONTEXT));
    }
    Ok(m)
}

/// clEnqueueReadImage and clEnqueueWriteImage, shared.
///
/// # Safety
/// As the entry points.
#[allow(clippy::too_many_arguments)]
unsafe fn host_image(
    queue: cl_command_queue,
    image: cl_mem,
    write: bool,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    pitches: (usize, usize),
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> ClResult<()> {
    // SAFETY: forwarded.
    let (q, m, waits) = unsafe { mem_command_args(queue, image, num, list) }?;
    // SAFETY: forwarded.
    let (o, r) = unsafe { (triple(origin)?, triple(region)?) };
    let cmd = Command::host_image(m, write, o, r, pitches, UserPtr(ptr))?;
    let ev = q.enqueue_command(cmd, &waits)?;
    // SAFETY: forwarded.
    unsafe { finish_enqueue(ev, blocking, event) }
}

/// clEnqueueReadImage: the box `origin`, `region` of `image` to `ptr`, rows `row_pitch`
/// and slices (layers of arrays) `slice_pitch` bytes apart (0: tight). Errors: those of the
/// queue, image and wait list; `CL_INVALID_MEM_OBJECT` (not an image); `CL_INVALID_VALUE`
/// (NULL arrays or `ptr`, the box out of bounds, pitches: see `Command::host_image`);
/// `CL_INVALID_OPERATION` (`CL_MEM_HOST_WRITE_ONLY`, `CL_MEM_HOST_NO_ACCESS`).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueReadImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        let p = (row_pitch, slice_pitch);
        // SAFETY: forwarded.
        unsafe {
            host_image(
                queue, image, false, blocking, origin, region, p, ptr, num, list, event,
            )
        }
    })
}

/// clEnqueueWriteImage: as [`clEnqueueReadImage`] in the other direction, with
/// `CL_INVALID_OPERATION` for `CL_MEM_HOST_READ_ONLY`, `CL_MEM_HOST_NO_ACCESS` and immutable
/// images.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueWriteImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *const c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        let (p, ptr) = ((row_pitch, slice_pitch), ptr as *mut c_void);
        // SAFETY: forwarded.
        unsafe {
            host_image(
                queue, image, true, blocking, origin, region, p, ptr, num, list, event,
            )
        }
    })
}

/// clEnqueueCopyImage. Errors: those of the queue, images and wait list;
/// `CL_INVALID_VALUE` (NULL arrays; boxes out of bounds); `CL_IMAGE_FORMAT_MISMATCH`;
/// `CL_MEM_COPY_OVERLAP` (see `Command::copy_image`).
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyImage(
    queue: cl_command_queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, src, waits) = unsafe { mem_command_args(queue, src_image, num, list) }?;
        let dst = other(&q, dst_image)?;
        // SAFETY: forwarded.
        let (so, dso, r) = unsafe { (triple(src_origin)?, triple(dst_origin)?, triple(region)?) };
        let cmd = Command::copy_image(src, dst, so, dso, r)?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}

/// clEnqueueCopyImageToBuffer: the box `src_origin`, `region` of `src_image` tightly packed
/// into `dst_buffer` from `dst_offset`. Errors: those of the queue, objects and wait list;
/// `CL_INVALID_MEM_OBJECT` (an image where the buffer goes, or the other way round);
/// `CL_INVALID_VALUE` (NULL arrays, the box or the bytes out of bounds).
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyImageToBuffer(
    queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, image, waits) = unsafe { mem_command_args(queue, src_image, num, list) }?;
        let buffer = other(&q, dst_buffer)?;
        // SAFETY: forwarded.
        let (o, r) = unsafe { (triple(src_origin)?, triple(region)?) };
        let cmd = Command::copy_image_buffer(image, buffer, o, r, dst_offset, false)?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}

/// clEnqueueCopyBufferToImage: as [`clEnqueueCopyImageToBuffer`] in the other direction.
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueCopyBufferToImage(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, buffer, waits) = unsafe { mem_command_args(queue, src_buffer, num, list) }?;
        let image = other(&q, dst_image)?;
        // SAFETY: forwarded.
        let (o, r) = unsafe { (triple(dst_origin)?, triple(region)?) };
        let cmd = Command::copy_image_buffer(image, buffer, o, r, src_offset, true)?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}

/// clEnqueueFillImage: the box `origin`, `region` of `image` with `fill_color` (a `float4`,
/// or `int4`/`uint4` for unnormalized integer formats) converted to the image's format.
/// Errors: those of the queue, image and wait list; `CL_INVALID_VALUE` (NULL colour or
/// arrays, the box out of bounds); `CL_INVALID_OPERATION` (an immutable image).
///
/// # Safety
/// Pointers as the OpenCL API requires (`fill_color` holds 16 bytes).
pub unsafe extern "C" fn clEnqueueFillImage(
    queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, m, waits) = unsafe { mem_command_args(queue, image, num, list) }?;
        if fill_color.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: the colour is four 32-bit values per the API (read unaligned: the
        // application's pointer need not be aligned for u32 arrays).
        let color = unsafe { (fill_color as *const [u32; 4]).read_unaligned() };
        // SAFETY: forwarded.
        let (o, r) = unsafe { (triple(origin)?, triple(region)?) };
        let cmd = Command::fill_image(m, color, o, r)?;
        let ev = q.enqueue_command(cmd, &waits)?;
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}
