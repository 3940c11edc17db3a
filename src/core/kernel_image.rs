//! Image arguments of kernel launches (docs/images.md, "Kernel access"): the checks of
//! `clSetKernelArg` for an image argument, and what a launch makes of one: the argument's
//! table entry in the argument block (channel order and data type for `get_image_channel_*`)
//! and the descriptor of its view at binding = argument index.

use super::error::{refused, ClError, ClResult};
use super::memory::Mem;
use super::sampler::{Sampler, SamplerState};
use crate::backend::vulkan::pipeline::{BindingKind, Descriptor};
use crate::backend::vulkan::sampler::{sampler, Address, Border, SamplerKey};
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

/// The descriptor kind of image or sampler argument `arg`: a sampler, or for an image a
/// storage image unless it is `read_only` (a sampled image then); for `image1d_buffer_t` a
/// storage texel buffer unless `read_only` (a uniform texel buffer then).
pub fn binding_kind(arg: &KernelArgInfo) -> BindingKind {
    let texels = image_type_of(&arg.type_name) == Some(CL_MEM_OBJECT_IMAGE1D_BUFFER);
    let read_only = arg.access_qualifier == AccessQualifier::ReadOnly;
    match (
        arg.kind == crate::compiler::ArgKind::Sampler,
        texels,
        read_only,
    ) {
        (true, _, _) => BindingKind::Sampler,
        (_, true, true) => BindingKind::UniformTexelBuffer,
        (_, true, false) => BindingKind::StorageTexelBuffer,
        (_, false, true) => BindingKind::SampledImage,
        (_, false, false) => BindingKind::StorageImage,
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
    let storage = matches!(
        kind,
        BindingKind::StorageImage | BindingKind::StorageTexelBuffer
    );
    let texels = matches!(
        kind,
        BindingKind::StorageTexelBuffer | BindingKind::UniformTexelBuffer
    );
    let refused_view = |e: crate::backend::error::BackendError| {
        if e.to_string().contains("FORMAT_NOT_SUPPORTED") {
            tracing::warn!(
                "argument `{}`: the image's format cannot be {} by kernels on this device",
                arg.name,
                if storage { "written" } else { "read" }
            );
            ClError(CL_INVALID_KERNEL_ARGS)
        } else {
            refused(format_args!("image view of argument `{}`", arg.name), e)
        }
    };
    let (view, buffer_view) = if texels {
        let v = img.vk.buffer_view(storage).map_err(refused_view)?;
        (Default::default(), v)
    } else {
        let v = img.vk.view(storage, arrayed).map_err(refused_view)?;
        (v, Default::default())
    };
    Ok(Descriptor {
        binding: index,
        kind,
        view,
        buffer_view,
        sampler: Default::default(),
    })
}

/// Whether formats of channel order `order` have alpha (OpenCL's border colour is then
/// transparent black, else opaque black).
#[allow(non_upper_case_globals)]
fn has_alpha(order: cl_channel_order) -> bool {
    matches!(
        order,
        CL_A | CL_RA | CL_RGBA | CL_BGRA | CL_ARGB | CL_ABGR | CL_INTENSITY | CL_sRGBA | CL_sBGRA
    )
}

/// Encodes sampler argument `index` (`arg`, sampler `s`): writes its table entry at `entry`
/// (a `u32`, [`crate::compiler::sampler_entry`]) and returns its descriptor. `images`: the formats
/// of the launch's `read_only` image arguments, which the border colour of
/// `CL_ADDRESS_CLAMP` depends on (OpenCL 3.0 8.2: (0, 0, 0, 0) with alpha, (0, 0, 0, 1)
/// without; integer or float by the format). Errors: `CL_INVALID_OPERATION` (logged) for a
/// `CL_ADDRESS_CLAMP` sampler in a launch whose read-only images need different border
/// colours, which one Vulkan sampler cannot give; `CL_OUT_OF_RESOURCES` when the sampler
/// cannot be made.
pub fn encode_sampler(
    device: &crate::core::device::Device,
    index: u32,
    arg: &KernelArgInfo,
    s: &Sampler,
    images: &[cl_image_format],
    entry: &mut [u8],
) -> ClResult<Descriptor> {
    let value = crate::compiler::sampler_entry(s.state.normalized, s.state.addressing);
    entry[0..4].copy_from_slice(&value.to_le_bytes());
    sampler_descriptor(device, index, &arg.name, &s.state, images)
}

/// The descriptors of `kernel`'s inline samplers (`const sampler_t`), at the bindings the
/// lowering gave them; border colours as [`encode_sampler`]. Errors: as [`encode_sampler`].
pub fn inline_sampler_descriptors(
    device: &crate::core::device::Device,
    kernel: &crate::compiler::KernelInfo,
    images: &[cl_image_format],
) -> ClResult<Vec<Descriptor>> {
    const MODES: [cl_addressing_mode; 5] = [
        CL_ADDRESS_NONE,
        CL_ADDRESS_CLAMP_TO_EDGE,
        CL_ADDRESS_CLAMP,
        CL_ADDRESS_REPEAT,
        CL_ADDRESS_MIRRORED_REPEAT,
    ];
    crate::compiler::inline_samplers(kernel)
        .into_iter()
        .map(|(binding, normalized, a, linear)| {
            let state = SamplerState {
                normalized,
                addressing: MODES[(a as usize).min(4)],
                filter: if linear {
                    CL_FILTER_LINEAR
                } else {
                    CL_FILTER_NEAREST
                },
            };
            sampler_descriptor(device, binding, "inline sampler", &state, images)
        })
        .collect()
}

/// The descriptor of a sampler of `state` at `binding` (`what` names it in logs).
fn sampler_descriptor(
    device: &crate::core::device::Device,
    index: u32,
    what: &str,
    state: &SamplerState,
    images: &[cl_image_format],
) -> ClResult<Descriptor> {
    let border_of = |f: &cl_image_format| Border {
        opaque: !has_alpha(f.image_channel_order),
        int: matches!(
            f.image_channel_data_type,
            CL_SIGNED_INT8
                | CL_SIGNED_INT16
                | CL_SIGNED_INT32
                | CL_UNSIGNED_INT8
                | CL_UNSIGNED_INT16
                | CL_UNSIGNED_INT32
        ),
    };
    let border = images.first().map(border_of).unwrap_or(Border {
        opaque: false,
        int: false,
    });
    let address = match state.addressing {
        CL_ADDRESS_CLAMP => {
            if images.iter().any(|f| border_of(f) != border) {
                tracing::warn!(
                    "{what}: a CL_ADDRESS_CLAMP sampler in a launch with read-only \
                     images of different border colours (alpha or not, integer or float): \
                     not supported, the launch fails with CL_INVALID_OPERATION"
                );
                return Err(ClError(CL_INVALID_OPERATION));
            }
            Address::ClampToBorder
        }
        CL_ADDRESS_REPEAT => Address::Repeat,
        CL_ADDRESS_MIRRORED_REPEAT => Address::MirroredRepeat,
        // CL_ADDRESS_NONE: out-of-range reads are undefined; CLAMP_TO_EDGE gives some texel.
        _ => Address::ClampToEdge,
    };
    let key = SamplerKey {
        address,
        linear: state.filter == CL_FILTER_LINEAR,
        border,
    };
    let vk = device.vk()?;
    let sampler = sampler(vk, key).map_err(|e| refused(format_args!("sampler of {what}"), e))?;
    Ok(Descriptor {
        binding: index,
        kind: BindingKind::Sampler,
        view: Default::default(),
        buffer_view: Default::default(),
        sampler,
    })
}
