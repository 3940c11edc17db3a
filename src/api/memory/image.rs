//! Image entry points (OpenCL 3.0 section 5.3), the runtime half behind `VKCL_IMAGES=1`
//! (docs/images.md): supported formats for now.

use super::super::status;
use crate::core::context::Context;
use crate::core::error::{ClError, ClResult};
use crate::core::image::{supported_formats, IMAGE_TYPES};
use crate::core::object::lookup;
use opencl_sys::*;
use std::ffi::c_void;

/// The formats every device of `c` supports for `flags` and `image_type`, in the order of
/// the first device's list. Errors: `CL_INVALID_VALUE` (flags, image type).
fn formats(
    c: &Context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
) -> ClResult<Vec<cl_image_format>> {
    const ACCESS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    const HOST: cl_mem_flags =
        CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
    const PTR: cl_mem_flags = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
    let exclusive = |m: cl_mem_flags| (flags & m).count_ones() > 1;
    // CL_INVALID_VALUE if flags or image_type are not valid: undefined bits, exclusive
    // access or host-access flags, CL_MEM_KERNEL_READ_AND_WRITE with an access flag other
    // than CL_MEM_READ_WRITE.
    if flags & !(ACCESS | HOST | PTR | CL_MEM_KERNEL_READ_AND_WRITE) != 0
        || exclusive(ACCESS)
        || exclusive(HOST)
        || exclusive(CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)
        || (flags & CL_MEM_KERNEL_READ_AND_WRITE != 0
            && flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) != 0)
        || !IMAGE_TYPES.contains(&image_type)
    {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let same = |a: &cl_image_format, b: &cl_image_format| {
        a.image_channel_order == b.image_channel_order
            && a.image_channel_data_type == b.image_channel_data_type
    };
    let mut list: Option<Vec<cl_image_format>> = None;
    for d in &c.devices {
        let mine = supported_formats(d, flags, image_type);
        list = Some(match list {
            None => mine,
            Some(l) => l
                .into_iter()
                .filter(|f| mine.iter().any(|g| same(f, g)))
                .collect(),
        });
    }
    Ok(list.unwrap_or_default())
}

/// clGetSupportedImageFormats: the image formats every device of the context supports for
/// `flags` and `image_type` (see [`supported_formats`]; none while `VKCL_IMAGES` is off).
/// Errors: `CL_INVALID_CONTEXT`; `CL_INVALID_VALUE` (invalid flags or image type,
/// `num_entries` 0 with non-NULL `image_formats`).
///
/// # Safety
/// Pointers as the OpenCL API requires (`image_formats` holds `num_entries` formats).
pub unsafe extern "C" fn clGetSupportedImageFormats(
    context: cl_context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
    num_entries: cl_uint,
    image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> cl_int {
    status(|| {
        let c = lookup::<Context>(context as *const c_void)?;
        // CL_INVALID_VALUE if num_entries is 0 and image_formats is not NULL.
        if num_entries == 0 && !image_formats.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let list = formats(&c, flags, image_type)?;
        if !image_formats.is_null() {
            for (i, f) in list.iter().take(num_entries as usize).enumerate() {
                // SAFETY: the application's array holds num_entries formats.
                unsafe { image_formats.add(i).write(*f) };
            }
        }
        if !num_image_formats.is_null() {
            // SAFETY: non-NULL output pointer per the API.
            unsafe { num_image_formats.write(list.len() as cl_uint) };
        }
        Ok(())
    })
}
