//! Image copies as a compute shader (issue 16: `clEnqueueCopyImage` at a copy kernel's speed).
//! NVIDIA's `vkCmdCopyImage` between two optimal-tiling images ran at 101 GB/s on an H100
//! where NVIDIA's OpenCL copied the same images at 766 (docs/h200.md, session 15), the same
//! story as its `vkCmdCopyBuffer` (`copy_kernel.rs`). Where the buffer-copy shader is wanted
//! (NVIDIA's driver, or `VKCL_COPY_KERNEL=1`), an image whose texels are 1, 2, 4, 8 or 16 bytes
//! and that kernels may write is made with `VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT` and gets a
//! storage view of the unsigned-integer format of its texel size ([`uint_format`]), and a copy
//! between two such images is a dispatch of this shader: each invocation reads one texel of
//! the source view (`OpImageRead`) and writes it to the destination view (`OpImageWrite`), its
//! bits unchanged whatever the OpenCL format (a read through the image's own format would turn
//! a snorm -128 into -127 or quieten a NaN).
//!
//! One shader per image type and texel size, SPIR-V 1.5 built here with rspirv, 8 x 8 x 1
//! invocations per group, a push-descriptor set 0 of two storage images (binding 0 the source,
//! 1 the destination; `uint` texels of the view's format, so no `...WithoutFormat` feature is
//! needed: lavapipe 22.3.6 has no `shaderStorageImageReadWithoutFormat`; the 1-, 2- and 8-byte
//! formats need `shaderStorageImageExtendedFormats`) and push constants of nine u32: source origin
//! (offset 0), destination origin (12) and extent (24), in grid coordinates: (x, layer, -) of
//! a 1D array view, (x, y, layer) of a 2D array view, (x, y, z) of a 3D view (1D and 2D
//! images get array views, one layer or more). Invocation (x, y, z) copies texel origin +
//! (x, y, z) when x and y are inside the extent; the dispatch has exactly one group per slice
//! or layer in z.

use super::copy_kernel::{compute_pipeline, push_block_and_invocation_id};
use super::image::{Dim, ImageCopy};
use ash::vk;
use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    self, AddressingModel, Capability, Decoration, ExecutionMode, ExecutionModel, FunctionControl,
    ImageFormat, MemoryModel, SelectionControl, StorageClass,
};

/// Invocations per work-group in x and y.
const GROUP: u32 = 8;
/// Bytes of the push-constant block.
const PUSH_BYTES: u32 = 36;

/// The unsigned-integer format whose texels are `texel_size` bytes: the format of an image's
/// copy view. None for other sizes (no OpenCL image format has them).
pub fn uint_format(texel_size: u64) -> Option<vk::Format> {
    Some(match texel_size {
        1 => vk::Format::R8_UINT,
        2 => vk::Format::R16_UINT,
        4 => vk::Format::R32_UINT,
        8 => vk::Format::R32G32_UINT,
        16 => vk::Format::R32G32B32A32_UINT,
        _ => return None,
    })
}

/// The SPIR-V image format of [`uint_format`]'s formats, and whether it needs the
/// `StorageImageExtendedFormats` capability.
fn spirv_format(texel_size: u64) -> Option<(ImageFormat, bool)> {
    Some(match texel_size {
        1 => (ImageFormat::R8ui, true),
        2 => (ImageFormat::R16ui, true),
        4 => (ImageFormat::R32ui, false),
        8 => (ImageFormat::Rg32ui, true),
        16 => (ImageFormat::Rgba32ui, false),
        _ => return None,
    })
}

/// Whether the copy view of `texel_size` needs `shaderStorageImageExtendedFormats`.
pub fn needs_extended_formats(texel_size: u64) -> bool {
    spirv_format(texel_size).is_some_and(|f| f.1)
}

/// The view type of the copy view of an image of `dim`.
pub fn view_type(dim: Dim) -> vk::ImageViewType {
    match dim {
        Dim::D1 => vk::ImageViewType::TYPE_1D_ARRAY,
        Dim::D2 => vk::ImageViewType::TYPE_2D_ARRAY,
        Dim::D3 => vk::ImageViewType::TYPE_3D,
    }
}

/// The image-copy shaders of one device, one per image type and texel size, sharing one
/// layout (the layout made once, each pipeline at its first copy; kept for the device's life
/// like its samplers).
pub struct ImageCopyKernels {
    pub set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    /// By image type ([`index`]) and log2 of the texel size; None where it could not be made.
    pipelines: [[std::sync::OnceLock<Option<vk::Pipeline>>; 5]; 3],
}

/// One dispatch of an image-copy shader: its push constants and work-group counts.
pub struct ImageCopyDispatch {
    pub push: [u8; PUSH_BYTES as usize],
    pub groups: [u32; 3],
}

fn index(dim: Dim) -> usize {
    match dim {
        Dim::D1 => 0,
        Dim::D2 => 1,
        Dim::D3 => 2,
    }
}

/// The dispatch copying the box `c` between two images of type `dim`, or None when its group
/// counts exceed `max_groups` (`maxComputeWorkGroupCount`) or the box is empty.
pub fn plan(dim: Dim, c: &ImageCopy, max_groups: [u32; 3]) -> Option<ImageCopyDispatch> {
    let [sx, sy, sz] = c.src_offset;
    let [dx, dy, dz] = c.dst_offset;
    let [ex, ey, ez] = c.extent;
    let (src, dst, extent) = match dim {
        Dim::D1 => (
            [sx, c.src_layer, 0],
            [dx, c.dst_layer, 0],
            [ex, c.layers, 1],
        ),
        Dim::D2 => (
            [sx, sy, c.src_layer],
            [dx, dy, c.dst_layer],
            [ex, ey, c.layers],
        ),
        Dim::D3 => ([sx, sy, sz], [dx, dy, dz], [ex, ey, ez]),
    };
    if extent.contains(&0) {
        return None;
    }
    let groups = [
        extent[0].div_ceil(GROUP),
        extent[1].div_ceil(GROUP),
        extent[2],
    ];
    if groups.iter().zip(max_groups).any(|(&g, m)| g > m) {
        return None;
    }
    let mut push = [0u8; PUSH_BYTES as usize];
    for (i, v) in src.iter().chain(&dst).chain(&extent).enumerate() {
        push[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    Some(ImageCopyDispatch { push, groups })
}

/// The SPIR-V words of the image-copy shader for images of type `dim` and texels of
/// `texel_size` bytes (one of [`uint_format`]'s sizes; others panic).
pub fn spirv(dim: Dim, texel_size: u64) -> Vec<u32> {
    let (format, extended) = spirv_format(texel_size).expect("a copy view's texel size");
    let mut b = Builder::new();
    b.set_version(1, 5);
    b.capability(Capability::Shader);
    if extended {
        b.capability(Capability::StorageImageExtendedFormats);
    }
    if dim == Dim::D1 {
        b.capability(Capability::Image1D);
    }
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
    let void = b.type_void();
    let fn_ty = b.type_function(void, vec![]);
    let u32_t = b.type_int(32, 0);
    let bool_t = b.type_bool();
    let v2 = b.type_vector(u32_t, 2);
    let v3 = b.type_vector(u32_t, 3);
    let v4 = b.type_vector(u32_t, 4);
    let (sdim, arrayed) = match dim {
        Dim::D1 => (spirv::Dim::Dim1D, 1),
        Dim::D2 => (spirv::Dim::Dim2D, 1),
        Dim::D3 => (spirv::Dim::Dim3D, 0),
    };
    let image = b.type_image(u32_t, sdim, 0, arrayed, 0, 2, format, None);
    let image_ptr = b.type_pointer(None, StorageClass::UniformConstant, image);
    let src = b.variable(image_ptr, None, StorageClass::UniformConstant, None);
    let dst = b.variable(image_ptr, None, StorageClass::UniformConstant, None);
    for (v, binding) in [(src, 0u32), (dst, 1)] {
        b.decorate(v, Decoration::DescriptorSet, vec![Operand::LiteralBit32(0)]);
        b.decorate(v, Decoration::Binding, vec![Operand::LiteralBit32(binding)]);
    }
    b.decorate(src, Decoration::NonWritable, vec![]);
    b.decorate(dst, Decoration::NonReadable, vec![]);
    let members: Vec<(u32, u32)> = (0..9).map(|m| (u32_t, m * 4)).collect();
    let (pc, gid) = push_block_and_invocation_id(&mut b, &members, v3);
    let pc_u32 = b.type_pointer(None, StorageClass::PushConstant, u32_t);
    let member: Vec<u32> = (0..9).map(|v| b.constant_bit32(u32_t, v)).collect();
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .expect("function");
    let (body, merge) = (b.id(), b.id());
    // The builder fails only when called outside a function or block; each call is inside.
    let emit = |b: &mut Builder| -> Result<(), rspirv::dr::Error> {
        b.begin_block(None)?;
        let g = b.load(v3, None, gid, None, vec![])?;
        let mut at = [0u32; 3];
        for (i, a) in at.iter_mut().enumerate() {
            *a = b.composite_extract(u32_t, None, g, vec![i as u32])?;
        }
        let push = |b: &mut Builder, m: usize| -> Result<u32, rspirv::dr::Error> {
            let p = b.access_chain(pc_u32, None, pc, vec![member[m]])?;
            b.load(u32_t, None, p, None, vec![])
        };
        let (ex, ey) = (push(b, 6)?, push(b, 7)?);
        let in_x = b.u_less_than(bool_t, None, at[0], ex)?;
        let in_y = b.u_less_than(bool_t, None, at[1], ey)?;
        let inside = b.logical_and(bool_t, None, in_x, in_y)?;
        b.selection_merge(merge, SelectionControl::NONE)?;
        b.branch_conditional(inside, body, merge, vec![])?;
        b.begin_block(Some(body))?;
        // The coordinate of the texel: origin (push constants from `first`) + invocation.
        let coordinate = |b: &mut Builder, first: usize| -> Result<u32, rspirv::dr::Error> {
            let mut c = Vec::new();
            for (i, &a) in at.iter().enumerate() {
                let o = push(b, first + i)?;
                c.push(b.i_add(u32_t, None, o, a)?);
            }
            if dim == Dim::D1 {
                b.composite_construct(v2, None, c[..2].to_vec())
            } else {
                b.composite_construct(v3, None, c)
            }
        };
        let (from, to) = (coordinate(b, 0)?, coordinate(b, 3)?);
        let s = b.load(image, None, src, None, vec![])?;
        let texel = b.image_read(v4, None, s, from, None, vec![])?;
        let d = b.load(image, None, dst, None, vec![])?;
        b.image_write(d, to, texel, None, vec![])?;
        b.branch(merge)?;
        b.begin_block(Some(merge))?;
        b.ret()?;
        b.end_function()
    };
    emit(&mut b).expect("the image-copy shader's instructions");
    b.entry_point(
        ExecutionModel::GLCompute,
        main,
        "main",
        vec![gid, pc, src, dst],
    );
    b.execution_mode(main, ExecutionMode::LocalSize, vec![GROUP, GROUP, 1]);
    b.module().assemble()
}

impl ImageCopyKernels {
    /// Creates the set layout (push descriptors: `VK_KHR_push_descriptor` must be enabled)
    /// and the pipeline layout on `device`; the pipelines come at first use
    /// ([`ImageCopyKernels::pipeline`]). Errors: Vulkan's result.
    pub fn new(device: &ash::Device) -> Result<ImageCopyKernels, vk::Result> {
        let bindings = [0, 1].map(|b| vk::DescriptorSetLayoutBinding {
            binding: b,
            descriptor_type: vk::DescriptorType::STORAGE_IMAGE,
            descriptor_count: 1,
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            ..Default::default()
        });
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            .bindings(&bindings);
        // SAFETY: valid create info; the caller enabled VK_KHR_push_descriptor.
        let set_layout = unsafe { device.create_descriptor_set_layout(&info, None) }?;
        let set_layouts = [set_layout];
        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: PUSH_BYTES,
        }];
        let info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&set_layouts)
            .push_constant_ranges(&ranges);
        // SAFETY: valid create info.
        match unsafe { device.create_pipeline_layout(&info, None) } {
            Ok(layout) => Ok(ImageCopyKernels {
                set_layout,
                layout,
                pipelines: Default::default(),
            }),
            Err(e) => {
                // SAFETY: unused.
                unsafe { device.destroy_descriptor_set_layout(set_layout, None) };
                Err(e)
            }
        }
    }

    /// The pipeline copying images of type `dim` with texels of `texel_size` bytes, made on
    /// `device` (through `cache`) at the first call; None for another texel size, or when it
    /// could not be made (logged once).
    pub fn pipeline(
        &self,
        device: &ash::Device,
        cache: vk::PipelineCache,
        dim: Dim,
        texel_size: u64,
    ) -> Option<vk::Pipeline> {
        spirv_format(texel_size)?;
        let slot = &self.pipelines[index(dim)][texel_size.trailing_zeros() as usize];
        *slot.get_or_init(|| {
            let words = spirv(dim, texel_size);
            compute_pipeline(device, cache, &words, &[], PUSH_BYTES, self.layout)
                .map(|(_, p)| p)
                .map_err(|e| {
                    tracing::warn!("the image-copy shader ({dim:?}, {texel_size}-byte texels) could not be made ({e})")
                })
                .ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(d: &ImageCopyDispatch) -> Vec<u32> {
        d.push
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn plans_map_each_type_to_the_grid() {
        let max = [65_535; 3];
        let c = ImageCopy {
            src_offset: [1, 2, 3],
            src_layer: 4,
            dst_offset: [5, 6, 7],
            dst_layer: 8,
            extent: [17, 9, 2],
            layers: 3,
        };
        let d = plan(Dim::D1, &c, max).unwrap();
        assert_eq!(words(&d), [1, 4, 0, 5, 8, 0, 17, 3, 1]);
        assert_eq!(d.groups, [3, 1, 1]);
        let d = plan(Dim::D2, &c, max).unwrap();
        assert_eq!(words(&d), [1, 2, 4, 5, 6, 8, 17, 9, 3]);
        assert_eq!(d.groups, [3, 2, 3]);
        let d = plan(Dim::D3, &c, max).unwrap();
        assert_eq!(words(&d), [1, 2, 3, 5, 6, 7, 17, 9, 2]);
        assert_eq!(d.groups, [3, 2, 2]);
        assert!(plan(Dim::D3, &c, [65_535, 65_535, 1]).is_none(), "z limit");
        let empty = ImageCopy { layers: 0, ..c };
        assert!(plan(Dim::D2, &empty, max).is_none(), "no layers");
    }

    #[test]
    fn the_shaders_are_valid_vulkan_spirv() {
        for (dim, size) in [Dim::D1, Dim::D2, Dim::D3]
            .into_iter()
            .flat_map(|d| [1, 2, 4, 8, 16].map(|s| (d, s)))
        {
            let name = format!("image-copy-{dim:?}-{size}");
            super::super::copy_kernel::assert_valid_spirv(&spirv(dim, size), &name);
        }
    }
}
