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

/// clEnqueueMapImage: maps the box `origin`, `region` of `image` for the host and returns
/// its address, with its row pitch in `image_row_pitch` and its slice pitch (0 for 1D and 2D
/// images) in `image_slice_pitch`, valid until the matching clEnqueueUnmapMemObject, which
/// copies a write map's box back (`CL_MEM_MAP_COUNT` counts live maps). For
/// `CL_MEM_USE_HOST_PTR` images the address lies in `host_ptr`, with the image's pitches.
/// Errors (through `errcode_ret`, NULL returned): those of the queue, image and wait list;
/// `CL_INVALID_VALUE` (NULL arrays or `image_row_pitch`, NULL `image_slice_pitch` for 3D
/// images and arrays, and those of `Command::map_image`); `CL_INVALID_OPERATION` (host
/// access flags); `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` for a blocking map after a
/// failed event.
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clEnqueueMapImage(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    image_row_pitch: *mut usize,
    image_slice_pitch: *mut usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    crate::api::object(errcode_ret, || {
        // SAFETY: forwarded.
        let (q, m, waits) = unsafe { mem_command_args(queue, image, num, list) }?;
        let ty = m.image_part()?.desc.image_type;
        // CL_INVALID_VALUE if image_row_pitch is NULL, or image_slice_pitch is NULL for a
        // 3D image, a 1D or 2D image array.
        let layered = matches!(
            ty,
            CL_MEM_OBJECT_IMAGE3D | CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
        );
        if image_row_pitch.is_null() || (layered && image_slice_pitch.is_null()) {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: forwarded.
        let (o, r) = unsafe { (triple(origin)?, triple(region)?) };
        let (cmd, out) = Command::map_image(m.clone(), flags, o, r)?;
        let ptr = out.ptr.get();
        let ev = match q.enqueue_command(cmd, &waits) {
            Ok(ev) => ev,
            Err(e) => {
                m.take_mapping(ptr);
                return Err(e);
            }
        };
        // SAFETY: forwarded.
        if let Err(e) = unsafe { finish_enqueue(ev, blocking, event) } {
            m.take_mapping(ptr);
            return Err(e);
        }
        // SAFETY: non-NULL (checked) or NULL output pointers per the API.
        unsafe {
            image_row_pitch.write(out.row_pitch);
            if !image_slice_pitch.is_null() {
                image_slice_pitch.write(out.slice_pitch);
            }
        }
        Ok(ptr)
    })
}
