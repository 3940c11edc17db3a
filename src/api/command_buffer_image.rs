//! The image commands of `cl_khr_command_buffer` (`clCommandCopyImageKHR`,
//! `clCommandCopyImageToBufferKHR`, `clCommandCopyBufferToImageKHR`,
//! `clCommandFillImageKHR`): the same checked commands as their `clEnqueue*` twins
//! (`core/image_command.rs`), recorded once into the command buffer's secondary. Their
//! staging buffers (a fill's texels, a copy between image types or at an unaligned buffer
//! offset) are made at recording and live with the command buffer (its runs are ordered,
//! so no two use them at once). Without images
//! (`VKCL_IMAGES` unset) they fail as on a device without images.

use super::command_buffer_record::{finish, recording};
use super::status;
use crate::core::command::Command;
use crate::core::command_buffer::CommandBuffer;
use crate::core::error::{ClError, ClResult};
use crate::core::image::images_enabled;
use crate::core::memory::Mem;
use crate::core::object::lookup;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// A memory object of the command buffer's context. Errors: `CL_INVALID_MEM_OBJECT`,
/// `CL_INVALID_CONTEXT`.
fn mem_of(cb: &CommandBuffer, mem: cl_mem) -> ClResult<Arc<Mem>> {
    let m = lookup::<Mem>(mem as *const c_void)?;
    if !Arc::ptr_eq(&m.context, &cb.context) {
        return Err(ClError(CL_INVALID_CONTEXT));
    }
    Ok(m)
}

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

/// The checks of [`recording`], then `CL_INVALID_OPERATION` while images are off.
///
/// # Safety
/// As [`recording`].
unsafe fn image_recording(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> ClResult<(Arc<CommandBuffer>, crate::core::command_buffer::Placement)> {
    // SAFETY: forwarded.
    let r = unsafe {
        recording(
            command_buffer,
            command_queue,
            props,
            num,
            list,
            mutable_handle,
        )
    }?;
    // CL_INVALID_OPERATION if the device does not support images (CL_DEVICE_IMAGE_SUPPORT
    // is CL_FALSE).
    if !images_enabled() {
        return Err(ClError(CL_INVALID_OPERATION));
    }
    Ok(r)
}

/// clCommandCopyBufferToImageKHR. Errors: those of [`recording`] (`CL_INVALID_OPERATION`
/// without images), then those of clEnqueueCopyBufferToImage.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyBufferToImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            image_recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        let (buffer, image) = (mem_of(&cb, src_buffer)?, mem_of(&cb, dst_image)?);
        // SAFETY: forwarded.
        let (o, r) = unsafe { (triple(dst_origin)?, triple(region)?) };
        let cmd = Command::copy_image_buffer(image, buffer, o, r, src_offset, true)?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, cmd, sync_point) }
    })
}

/// clCommandCopyImageToBufferKHR. Errors: those of [`recording`] (`CL_INVALID_OPERATION`
/// without images), then those of clEnqueueCopyImageToBuffer.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyImageToBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            image_recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        let (image, buffer) = (mem_of(&cb, src_image)?, mem_of(&cb, dst_buffer)?);
        // SAFETY: forwarded.
        let (o, r) = unsafe { (triple(src_origin)?, triple(region)?) };
        let cmd = Command::copy_image_buffer(image, buffer, o, r, dst_offset, false)?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, cmd, sync_point) }
    })
}

/// clCommandCopyImageKHR. Errors: those of [`recording`] (`CL_INVALID_OPERATION` without
/// images), then those of clEnqueueCopyImage.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            image_recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        let (src, dst) = (mem_of(&cb, src_image)?, mem_of(&cb, dst_image)?);
        // SAFETY: forwarded.
        let (so, dso, r) = unsafe { (triple(src_origin)?, triple(dst_origin)?, triple(region)?) };
        let cmd = Command::copy_image(src, dst, so, dso, r)?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, cmd, sync_point) }
    })
}

/// clCommandFillImageKHR. Errors: those of [`recording`] (`CL_INVALID_OPERATION` without
/// images), then those of clEnqueueFillImage.
///
/// # Safety
/// Pointers as the OpenCL API requires (`fill_color` holds 16 bytes).
pub unsafe extern "C" fn clCommandFillImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            image_recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        let m = mem_of(&cb, image)?;
        if fill_color.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: four 32-bit values per the API, read unaligned.
        let color = unsafe { (fill_color as *const [u32; 4]).read_unaligned() };
        // SAFETY: forwarded.
        let (o, r) = unsafe { (triple(origin)?, triple(region)?) };
        let cmd = Command::fill_image(m, color, o, r)?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, cmd, sync_point) }
    })
}
