//! The recording entry points of `cl_khr_command_buffer` revisions before 0.9.5 (0.9.4, the
//! one in Debian bookworm's `CL/cl_ext.h`): copy, copy-rect, fill, image and barrier commands
//! without the `properties` parameter. `VKCL_COMMAND_BUFFER_REVISION=0.9.4` makes the
//! extension lookup hand these out and the device report revision 0.9.4; each forwards to the
//! 0.9.8 function with NULL properties, so behaviour and errors are those of
//! [`super::command_buffer`]. The SVM commands did not exist before 0.9.5; NDRange kept its
//! properties and create, finalize, enqueue and queries did not change.

use super::command_buffer as cb;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr::null;

/// clCommandBarrierWithWaitListKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandBarrierWithWaitListKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandBarrierWithWaitListKHR(
            command_buffer,
            command_queue,
            null(),
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}

/// clCommandCopyBufferKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandCopyBufferKHR(
            command_buffer,
            command_queue,
            null(),
            src_buffer,
            dst_buffer,
            src_offset,
            dst_offset,
            size,
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}

/// clCommandCopyBufferRectKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyBufferRectKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
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
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandCopyBufferRectKHR(
            command_buffer,
            command_queue,
            null(),
            src_buffer,
            dst_buffer,
            src_origin,
            dst_origin,
            region,
            src_row_pitch,
            src_slice_pitch,
            dst_row_pitch,
            dst_slice_pitch,
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}

/// clCommandFillBufferKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandFillBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandFillBufferKHR(
            command_buffer,
            command_queue,
            null(),
            buffer,
            pattern,
            pattern_size,
            offset,
            size,
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}

/// clCommandCopyBufferToImageKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyBufferToImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
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
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandCopyBufferToImageKHR(
            command_buffer,
            command_queue,
            null(),
            src_buffer,
            dst_image,
            src_offset,
            dst_origin,
            region,
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}

/// clCommandCopyImageKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
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
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandCopyImageKHR(
            command_buffer,
            command_queue,
            null(),
            src_image,
            dst_image,
            src_origin,
            dst_origin,
            region,
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}

/// clCommandCopyImageToBufferKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyImageToBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
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
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandCopyImageToBufferKHR(
            command_buffer,
            command_queue,
            null(),
            src_image,
            dst_buffer,
            src_origin,
            region,
            dst_offset,
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}

/// clCommandFillImageKHR (0.9.4). Errors: as the 0.9.8 function.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandFillImageKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    // SAFETY: forwarded with NULL properties.
    unsafe {
        cb::clCommandFillImageKHR(
            command_buffer,
            command_queue,
            null(),
            image,
            fill_color,
            origin,
            region,
            num,
            list,
            sync_point,
            mutable_handle,
        )
    }
}
