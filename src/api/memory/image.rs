//! Image entry points (OpenCL 3.0 section 5.3), the runtime half behind `VKCL_IMAGES=1`
//! (docs/images.md): supported formats, creation and info; the image commands are
//! `image_enqueue.rs`.

use super::flags::{check_flags, ACCESS, HOST_ACCESS, HOST_PTR, WRITABLE};
use crate::api::info::InfoOut;
use crate::api::{properties, status};
use crate::core::context::Context;
use crate::core::error::{ClError, ClResult};
use crate::core::image::{images_enabled, supported_formats, IMAGE_TYPES};
use crate::core::image_desc::ImageDesc;
use crate::core::memory::Mem;
use crate::core::object::{handle_of, lookup, register};
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;

/// clCreateImage's common path. Errors: `CL_INVALID_CONTEXT`; `CL_INVALID_VALUE` (flags,
/// and for 1D buffer images those of [`buffer_image_flags`]); `CL_INVALID_HOST_PTR`;
/// `CL_INVALID_IMAGE_DESCRIPTOR` for a 1D buffer image whose `buffer` is not a buffer of
/// the context; then those of [`ImageDesc::check`] and of [`Mem::new_image`] /
/// [`Mem::new_buffer_image`].
fn create_image(
    context: cl_context,
    props: Vec<cl_mem_properties>,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> ClResult<*mut c_void> {
    let c = lookup::<Context>(context as *const c_void)?;
    if !images_enabled() {
        // No device in the context supports images.
        return Err(ClError(CL_INVALID_OPERATION));
    }
    // Buffers' flags, and CL_MEM_KERNEL_READ_AND_WRITE (only with CL_MEM_READ_WRITE).
    check_flags(flags & !CL_MEM_KERNEL_READ_AND_WRITE)?;
    if flags & CL_MEM_KERNEL_READ_AND_WRITE != 0
        && flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) != 0
    {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: NULL or pointers to the application's structures, per the API.
    let (format, desc) = unsafe { (format.as_ref(), desc.as_ref()) };
    // A 1D buffer image's buffer (OpenCL 3.0 section 5.3.1.2: a buffer object of the
    // context, whose storage the image shares).
    let source = match desc {
        Some(d) if d.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER && !d.buffer.is_null() => {
            let b = lookup::<Mem>(d.buffer as *const c_void)
                .and_then(|b| b.as_buffer())
                .map_err(|_| ClError(CL_INVALID_IMAGE_DESCRIPTOR))?;
            if !std::sync::Arc::ptr_eq(&b.context, &c) {
                return Err(ClError(CL_INVALID_IMAGE_DESCRIPTOR));
            }
            Some(b)
        }
        _ => None,
    };
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if flags & CL_MEM_IMMUTABLE_EXT != 0 && !wants_ptr && source.is_none() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let flags = match &source {
        Some(b) => buffer_image_flags(flags, b.flags)?,
        None => flags,
    };
    // CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
    // are set in flags or if host_ptr is not NULL but they are not set.
    if wants_ptr == host_ptr.is_null() {
        return Err(ClError(CL_INVALID_HOST_PTR));
    }
    let flags = if flags & (ACCESS | CL_MEM_IMMUTABLE_EXT) == 0 {
        flags | CL_MEM_READ_WRITE
    } else {
        flags
    };
    let buffer_size = source.as_ref().map(|b| b.size);
    let d = ImageDesc::check(&c.devices, flags, format, desc, wants_ptr, buffer_size)?;
    let m = match source {
        Some(b) => Mem::new_buffer_image(c, flags, d, b, props)?,
        None => Mem::new_image(c, flags, d, UserPtr(host_ptr), props)?,
    };
    Ok(handle_of(&register(m)) as cl_mem)
}

/// The flags of an image made from a buffer created with `buffer` flags, given `flags`
/// (OpenCL 3.0 section 5.3.1, `flags` and the errors of clCreateImage): access and host
/// access flags not given are the buffer's, and so are `CL_MEM_USE_HOST_PTR`,
/// `CL_MEM_ALLOC_HOST_PTR`, `CL_MEM_COPY_HOST_PTR` and `CL_MEM_IMMUTABLE_EXT`. Errors:
/// `CL_INVALID_VALUE` when `flags` has a host pointer flag, asks for access the buffer's
/// flags forbid (reads of a write-only buffer, writes of a read-only one, either way for
/// host access), or lacks `CL_MEM_IMMUTABLE_EXT` of an immutable buffer.
fn buffer_image_flags(flags: cl_mem_flags, pf: cl_mem_flags) -> ClResult<cl_mem_flags> {
    if flags & HOST_PTR != 0
        || (pf & CL_MEM_WRITE_ONLY != 0 && flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY) != 0)
        || (pf & CL_MEM_READ_ONLY != 0 && flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY) != 0)
        || (pf & CL_MEM_HOST_WRITE_ONLY != 0 && flags & CL_MEM_HOST_READ_ONLY != 0)
        || (pf & CL_MEM_HOST_READ_ONLY != 0 && flags & CL_MEM_HOST_WRITE_ONLY != 0)
        || (pf & CL_MEM_HOST_NO_ACCESS != 0
            && flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) != 0)
        || (pf & CL_MEM_IMMUTABLE_EXT != 0 && flags & CL_MEM_IMMUTABLE_EXT == 0)
    {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let mut f = flags;
    if f & (ACCESS | CL_MEM_IMMUTABLE_EXT) == 0 {
        f |= pf & ACCESS;
    }
    if f & HOST_ACCESS == 0 {
        f |= pf & HOST_ACCESS;
    }
    Ok(f | (pf & (HOST_PTR | CL_MEM_IMMUTABLE_EXT)))
}

/// clCreateImage: an image of the format and descriptor on the context's device (a
/// `VkImage`, docs/images.md), its contents copied from `host_ptr` with
/// `CL_MEM_COPY_HOST_PTR` or `CL_MEM_USE_HOST_PTR`; a 1D buffer image is a texel-buffer
/// view of its buffer's storage (shared both ways). 2D images from buffers are not made
/// yet (`CL_INVALID_IMAGE_DESCRIPTOR`).
/// Errors: `CL_INVALID_CONTEXT`; `CL_INVALID_OPERATION` (images off: `VKCL_IMAGES`);
/// `CL_INVALID_VALUE` (flags); `CL_INVALID_HOST_PTR`; `CL_INVALID_IMAGE_FORMAT_DESCRIPTOR`;
/// `CL_INVALID_IMAGE_DESCRIPTOR`; `CL_INVALID_IMAGE_SIZE`; `CL_IMAGE_FORMAT_NOT_SUPPORTED`;
/// `CL_MEM_OBJECT_ALLOCATION_FAILURE` (see [`ImageDesc::check`]).
///
/// # Safety
/// Pointers as the OpenCL API requires (`host_ptr` holds the image with its pitches).
pub unsafe extern "C" fn clCreateImage(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    crate::api::object(errcode_ret, || {
        create_image(
            context,
            Vec::new(),
            flags,
            image_format,
            image_desc,
            host_ptr,
        )
    })
}

/// clCreateImageWithProperties: no image properties are supported, so any property name
/// gives `CL_INVALID_PROPERTY`; otherwise as [`clCreateImage`].
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateImageWithProperties(
    context: cl_context,
    props: *const cl_mem_properties,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    crate::api::object(errcode_ret, || {
        lookup::<Context>(context as *const c_void)?;
        // SAFETY: zero-terminated list per the API.
        let pairs = unsafe { properties(props) }?;
        if !pairs.is_empty() {
            return Err(ClError(CL_INVALID_PROPERTY));
        }
        let list = if props.is_null() { Vec::new() } else { vec![0] };
        create_image(context, list, flags, image_format, image_desc, host_ptr)
    })
}

/// A descriptor of `ty` with the given dimensions (clCreateImage2D and clCreateImage3D).
fn legacy_desc(ty: cl_mem_object_type, size: [usize; 3], pitches: [usize; 2]) -> cl_image_desc {
    cl_image_desc {
        image_type: ty,
        image_width: size[0],
        image_height: size[1],
        image_depth: size[2],
        image_array_size: 0,
        image_row_pitch: pitches[0],
        image_slice_pitch: pitches[1],
        num_mip_levels: 0,
        num_samples: 0,
        buffer: std::ptr::null_mut(),
    }
}

/// clCreateImage2D (deprecated by OpenCL 1.2): as [`clCreateImage`] of a 2D image, with
/// `CL_INVALID_IMAGE_SIZE` for a width or height of 0 (its own rule).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateImage2D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    crate::api::object(errcode_ret, || {
        lookup::<Context>(context as *const c_void)?;
        if images_enabled() && (image_width == 0 || image_height == 0) {
            return Err(ClError(CL_INVALID_IMAGE_SIZE));
        }
        let d = legacy_desc(
            CL_MEM_OBJECT_IMAGE2D,
            [image_width, image_height, 0],
            [image_row_pitch, 0],
        );
        create_image(context, Vec::new(), flags, image_format, &d, host_ptr)
    })
}

/// clCreateImage3D (deprecated by OpenCL 1.2): as [`clCreateImage`] of a 3D image, with
/// `CL_INVALID_IMAGE_SIZE` for a dimension of 0 or a depth of 1 (its own rules).
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clCreateImage3D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_depth: usize,
    image_row_pitch: usize,
    image_slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    crate::api::object(errcode_ret, || {
        lookup::<Context>(context as *const c_void)?;
        if images_enabled() && (image_width == 0 || image_height == 0 || image_depth <= 1) {
            return Err(ClError(CL_INVALID_IMAGE_SIZE));
        }
        let d = legacy_desc(
            CL_MEM_OBJECT_IMAGE3D,
            [image_width, image_height, image_depth],
            [image_row_pitch, image_slice_pitch],
        );
        create_image(context, Vec::new(), flags, image_format, &d, host_ptr)
    })
}

/// clGetImageInfo (OpenCL 3.0 section 5.3.7). Errors: `CL_INVALID_MEM_OBJECT` (not an
/// image), `CL_INVALID_VALUE` (unknown name, value too small).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetImageInfo(
    image: cl_mem,
    param_name: cl_image_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let m = lookup::<Mem>(image as *const c_void)?;
        let d = m.image_part()?.desc;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_IMAGE_FORMAT => out.scalar(d.format),
            CL_IMAGE_ELEMENT_SIZE => out.scalar(d.element_size),
            CL_IMAGE_ROW_PITCH => out.scalar(d.row_pitch),
            CL_IMAGE_SLICE_PITCH => out.scalar(d.slice_pitch),
            CL_IMAGE_WIDTH => out.scalar(d.width),
            CL_IMAGE_HEIGHT => out.scalar(d.height),
            CL_IMAGE_DEPTH => out.scalar(d.depth),
            CL_IMAGE_ARRAY_SIZE => out.scalar(d.array_size),
            // The buffer of a 1D buffer image (its CL_MEM_ASSOCIATED_MEMOBJECT), else NULL.
            CL_IMAGE_BUFFER => out.scalar(
                m.parent
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |(b, _)| handle_of(b) as cl_mem),
            ),
            CL_IMAGE_NUM_MIP_LEVELS | CL_IMAGE_NUM_SAMPLES => out.scalar(0 as cl_uint),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// The formats every device of `c` supports for `flags` and `image_type`, in the order of
/// the first device's list (none where no device has images). `flags` may hold
/// `CL_MEM_IMMUTABLE_EXT` (cl_ext_immutable_memory_objects: "flags may also be
/// CL_MEM_IMMUTABLE_EXT to query image formats that may be used to create immutable images";
/// its formats are those clCreateImage accepts with it). Errors: `CL_INVALID_VALUE` (flags,
/// image type).
fn formats(
    c: &Context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
) -> ClResult<Vec<cl_image_format>> {
    let exclusive = |m: cl_mem_flags| (flags & m).count_ones() > 1;
    // CL_INVALID_VALUE if flags or image_type are not valid: undefined bits, exclusive
    // access or host-access flags, CL_MEM_KERNEL_READ_AND_WRITE with an access flag other
    // than CL_MEM_READ_WRITE, CL_MEM_IMMUTABLE_EXT with CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY
    // or CL_MEM_HOST_WRITE_ONLY (as clCreateImage refuses them).
    if flags
        & !(ACCESS | HOST_ACCESS | HOST_PTR | CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_IMMUTABLE_EXT)
        != 0
        || exclusive(ACCESS)
        || exclusive(HOST_ACCESS)
        || exclusive(CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)
        || (flags & CL_MEM_KERNEL_READ_AND_WRITE != 0
            && flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) != 0)
        || (flags & CL_MEM_IMMUTABLE_EXT != 0 && flags & WRITABLE != 0)
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

/// clGetSupportedImageFormats (OpenCL 3.0 section 5.3.2): the image formats every device of
/// the context supports for `flags` and `image_type` (see [`supported_formats`]); with no
/// image support (`CL_DEVICE_IMAGE_SUPPORT` `CL_FALSE` while `VKCL_IMAGES` is off) it
/// succeeds with none (`num_image_formats` 0). Errors: `CL_INVALID_CONTEXT`;
/// `CL_INVALID_VALUE` (invalid flags or image type, `num_entries` 0 with non-NULL
/// `image_formats`).
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
