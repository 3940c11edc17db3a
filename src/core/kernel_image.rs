//! Image arguments of kernel launches (docs/images.md, "Kernel access"): the checks of
//! `clSetKernelArg` for an image argument, and what a launch makes of one: the argument's
//! table entry in the argument block (channel order and data type for `get_image_channel_*`)
//! and the descriptor of its view at binding = argument index.

use super::error::{refused, ClError, ClResult};
use super::memory::Mem;
use crate::backend::vulkan::pipeline::{BindingKind, Descriptor};
use crate::compiler::{AccessQualifier, KernelArgInfo};
use opencl_sys::*;
use std::sync::Arc;

/// The OpenCL image type of an image argument's type name (`image2d_t`, as
/// `CL_KERNEL_ARG_TYPE_NAME` gives it, with or without an access qualifier).
pub fn image_type_of(type_name: &str) -> Option<cl_mem_object_type> {
    let t = type_name
        .trim()
        .trim_start_matches("__")
        .rsplit(' ')
        .next()
        .unwrap_or("");
    Some(match t {
        "image1d_t" => CL_MEM_OBJECT_IMAGE1D,
        "image1d_array_t" => CL_MEM_OBJECT_IMAGE1D_ARRAY,
        "image1d_buffer_t" => CL_MEM_OBJECT_IMAGE1D_BUFFER,
        "image2d_t" => CL_MEM_OBJECT_IMAGE2D,
        "image2d_array_t" => CL_MEM_OBJECT_IMAGE2D_ARRAY,
        "image3d_t" => CL_MEM_OBJECT_IMAGE3D,
        _ => return None,
    })
}

/// The descriptor kind of image argument `arg`: a storage image unless it is `read_only`.
pub fn binding_kind(arg: &KernelArgInfo) -> BindingKind {
    if arg.access_qualifier == AccessQualifier::ReadOnly {
        BindingKind::SampledImage
    } else {
        BindingKind::StorageImage
    }
}

/// `clSetKernelArg`'s checks of image `m` for image argument `arg`. Errors:
/// `CL_INVALID_MEM_OBJECT` (not an image); `CL_INVALID_ARG_VALUE` when the image's type is
/// not the argument's, or its flags forbid the argument's access (a `read_only` argument
/// and a `CL_MEM_WRITE_ONLY` image, a `write_only` one and a `CL_MEM_READ_ONLY` image, a
/// `read_write` one and an image of either).
pub fn check_image_arg(arg: &KernelArgInfo, m: &Mem) -> ClResult<()> {
    let d = m.image_part()?.desc;
    if image_type_of(&arg.type_name) != Some(d.image_type) {
        tracing::warn!(
            "clSetKernelArg: argument `{}` of type {} given an image of type {:#x}",
            arg.name,
            arg.type_name,
            d.image_type
        );
        return Err(ClError(CL_INVALID_ARG_VALUE));
    }
    let bad = match arg.access_qualifier {
        AccessQualifier::ReadOnly => CL_MEM_WRITE_ONLY,
        AccessQualifier::WriteOnly => CL_MEM_READ_ONLY,
        _ => CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
    };
    if m.flags & bad != 0 {
        return Err(ClError(CL_INVALID_ARG_VALUE));
    }
    Ok(())
}

/// Encodes image argument `index` (`arg`, image `m`): writes its table entry at `entry` (six
/// `u32`: the SPIR-V enumerants of its channel order and data type, `CL_*` less `CL_R` and
/// `CL_SNORM_INT8`; width, height, depth, array size) and returns the descriptor of its
/// view. Errors:
/// `CL_INVALID_KERNEL_ARGS` when the image's format has no view of the argument's kind (a
/// format without storage support given to a `write_only` argument);
/// `CL_OUT_OF_RESOURCES` when the view cannot be made.
pub fn encode_image(
    index: u32,
    arg: &KernelArgInfo,
    m: &Arc<Mem>,
    entry: &mut [u8],
) -> ClResult<Descriptor> {
    let img = m.image_part()?;
    let f = img.desc.format;
    let order = f.image_channel_order.wrapping_sub(CL_R);
    let ty = f.image_channel_data_type.wrapping_sub(CL_SNORM_INT8);
    let d = &img.desc;
    let values = [
        order,
        ty,
        d.width as u32,
        d.height as u32,
        d.depth as u32,
        d.array_size as u32,
    ];
    for (j, v) in values.iter().enumerate() {
        entry[4 * j..4 * j + 4].copy_from_slice(&v.to_le_bytes());
    }
    let kind = binding_kind(arg);
    let arrayed = matches!(
        img.desc.image_type,
        CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
    );
    let view = img
        .vk
        .view(kind == BindingKind::StorageImage, arrayed)
        .map_err(|e| {
            if e.to_string().contains("FORMAT_NOT_SUPPORTED") {
                tracing::warn!(
                    "argument `{}`: the image's format cannot be {} by kernels on this device",
                    arg.name,
                    if kind == BindingKind::StorageImage {
                        "written"
                    } else {
                        "read"
                    }
                );
                ClError(CL_INVALID_KERNEL_ARGS)
            } else {
                refused(format_args!("image view of argument `{}`", arg.name), e)
            }
        })?;
    Ok(Descriptor {
        binding: index,
        kind,
        view,
    })
}
