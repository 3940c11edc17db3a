//! Images, the runtime half (docs/images.md): the OpenCL image formats as Vulkan formats, what
//! the physical device can do with each (`vkGetPhysicalDeviceFormatProperties`, optimal
//! tiling), the device's image limits, and the plain shapes and boxes image commands carry
//! ([`ImageShape`], [`ImageRegion`], [`ImageCopy`]). OpenCL names appear here only as the plain
//! numbers core hands down (a channel order and a channel data type).

use super::instance::{Instance, PhysicalDevice};
use ash::vk;

/// The Vulkan format backing the OpenCL image format (`order`, `data_type`: the `CL_*`
/// values of `cl_image_format`), or None where Vulkan has no format with the same memory
/// layout (`CL_A`, `CL_INTENSITY`, `CL_LUMINANCE`, `CL_RGBx`, `CL_ARGB`, `CL_ABGR`, the 555 and
/// 101010 packings, depth: see docs/images.md).
pub fn vk_format(order: u32, data_type: u32) -> Option<vk::Format> {
    use vk::Format as F;
    // CL_R, CL_RG, CL_RGBA columns; channel data types CL_SNORM_INT8 (0x10D0) on.
    const R: u32 = 0x10B0;
    const RG: u32 = 0x10B2;
    const RGBA: u32 = 0x10B5;
    const BGRA: u32 = 0x10B6;
    const RGB: u32 = 0x10B4;
    const SRGBA: u32 = 0x10C1;
    const SBGRA: u32 = 0x10C2;
    let table: [(u32, [F; 3]); 12] = [
        (0x10D0, [F::R8_SNORM, F::R8G8_SNORM, F::R8G8B8A8_SNORM]),
        (
            0x10D1,
            [F::R16_SNORM, F::R16G16_SNORM, F::R16G16B16A16_SNORM],
        ),
        (0x10D2, [F::R8_UNORM, F::R8G8_UNORM, F::R8G8B8A8_UNORM]),
        (
            0x10D3,
            [F::R16_UNORM, F::R16G16_UNORM, F::R16G16B16A16_UNORM],
        ),
        (0x10D7, [F::R8_SINT, F::R8G8_SINT, F::R8G8B8A8_SINT]),
        (0x10D8, [F::R16_SINT, F::R16G16_SINT, F::R16G16B16A16_SINT]),
        (0x10D9, [F::R32_SINT, F::R32G32_SINT, F::R32G32B32A32_SINT]),
        (0x10DA, [F::R8_UINT, F::R8G8_UINT, F::R8G8B8A8_UINT]),
        (0x10DB, [F::R16_UINT, F::R16G16_UINT, F::R16G16B16A16_UINT]),
        (0x10DC, [F::R32_UINT, F::R32G32_UINT, F::R32G32B32A32_UINT]),
        (
            0x10DD,
            [F::R16_SFLOAT, F::R16G16_SFLOAT, F::R16G16B16A16_SFLOAT],
        ),
        (
            0x10DE,
            [F::R32_SFLOAT, F::R32G32_SFLOAT, F::R32G32B32A32_SFLOAT],
        ),
    ];
    const UNORM_INT8: u32 = 0x10D2;
    const UNORM_SHORT_565: u32 = 0x10D4;
    match (order, data_type) {
        (BGRA, UNORM_INT8) => return Some(F::B8G8R8A8_UNORM),
        (SRGBA, UNORM_INT8) => return Some(F::R8G8B8A8_SRGB),
        (SBGRA, UNORM_INT8) => return Some(F::B8G8R8A8_SRGB),
        // Red in bits 15:11, green 10:5, blue 4:0 in both APIs.
        (RGB, UNORM_SHORT_565) => return Some(F::R5G6B5_UNORM_PACK16),
        _ => {}
    }
    let column = match order {
        R => 0,
        RG => 1,
        RGBA => 2,
        _ => return None,
    };
    table
        .iter()
        .find(|(t, _)| *t == data_type)
        .map(|(_, f)| f[column])
}

/// What a Vulkan format can back on a physical device (optimal tiling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatSupport {
    /// Transfers in both directions (`TRANSFER_SRC` and `TRANSFER_DST` features).
    pub transfer: bool,
    /// `SAMPLED_IMAGE`: kernels may read it (read_image with and without a sampler).
    pub sampled: bool,
    /// Sampled reads convert texels within OpenCL's limits: false for R5G6B5 on llvmpipe,
    /// which samples it through 8-bit channels, `((x << 3) | (x >> 2)) / 255` (0.16078 for
    /// 5 / 31 = 0.16129), far beyond OpenCL's 1.5 ulp (docs/images.md, "Formats").
    pub sampled_exact: bool,
    /// `STORAGE_IMAGE`: a storage view of this format may be read and written by a shader
    /// that declares the format (vkcl's image-copy shader).
    pub storage_image: bool,
    /// `STORAGE_IMAGE` and `shaderStorageImageWriteWithoutFormat`: kernels may write it
    /// (OpenCL's SPIR-V images have an `Unknown` format).
    pub storage_write: bool,
    /// `STORAGE_IMAGE` and `shaderStorageImageReadWithoutFormat` as well: read-write images.
    pub storage_read_write: bool,
    /// `UNIFORM_TEXEL_BUFFER` and `STORAGE_TEXEL_BUFFER` (buffer features): a 1D buffer image
    /// may be a texel-buffer view of a buffer's memory. Both are required, since OpenCL
    /// buffers carry both texel usages and Vulkan then requires both of a view's format.
    pub texel_buffer: bool,
    /// `texel_buffer` and `shaderStorageImageWriteWithoutFormat` (which covers storage texel
    /// buffers too): kernels may write a 1D buffer image.
    pub texel_write: bool,
    /// `texel_write` and `shaderStorageImageReadWithoutFormat`: read-write 1D buffer images.
    pub texel_read_write: bool,
}

/// The support of `format` on `phys` (no instance: nothing).
pub fn format_support(phys: &PhysicalDevice, format: vk::Format) -> FormatSupport {
    let none = FormatSupport {
        transfer: false,
        sampled: false,
        sampled_exact: false,
        storage_image: false,
        storage_write: false,
        storage_read_write: false,
        texel_buffer: false,
        texel_write: false,
        texel_read_write: false,
    };
    let Some(instance) = Instance::get() else {
        return none;
    };
    // SAFETY: a physical device of this instance; plain queries.
    let (props, features) = unsafe {
        (
            instance
                .raw
                .get_physical_device_format_properties(phys.raw, format),
            instance.raw.get_physical_device_features(phys.raw),
        )
    };
    let f = props.optimal_tiling_features;
    let storage = f.contains(vk::FormatFeatureFlags::STORAGE_IMAGE);
    let write_unknown = features.shader_storage_image_write_without_format != 0;
    let read_unknown = features.shader_storage_image_read_without_format != 0;
    let write = storage && write_unknown;
    let texel_buffer = props.buffer_features.contains(
        vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER | vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER,
    );
    FormatSupport {
        transfer: f
            .contains(vk::FormatFeatureFlags::TRANSFER_SRC | vk::FormatFeatureFlags::TRANSFER_DST),
        sampled: f.contains(vk::FormatFeatureFlags::SAMPLED_IMAGE),
        sampled_exact: !(format == vk::Format::R5G6B5_UNORM_PACK16
            && phys.driver_id == vk::DriverId::MESA_LLVMPIPE),
        storage_image: storage,
        storage_write: write,
        storage_read_write: write && read_unknown,
        texel_buffer,
        texel_write: texel_buffer && write_unknown,
        texel_read_write: texel_buffer && write_unknown && read_unknown,
    }
}

/// The image limits of a physical device, in OpenCL's terms (texels, images, bytes).
#[derive(Debug, Clone, Copy)]
pub struct ImageLimits {
    pub max_1d: u32,
    pub max_2d: u32,
    pub max_3d: u32,
    pub max_layers: u32,
    /// `maxTexelBufferElements`: the largest 1D buffer image, texels.
    pub max_texel_buffer: u32,
    /// Per-stage sampled images, storage images and samplers a kernel may bind.
    pub sampled_images: u32,
    pub storage_images: u32,
    pub samplers: u32,
    /// `minTexelBufferOffsetAlignment` (bytes): the base alignment of images sharing a
    /// buffer's memory.
    pub texel_buffer_alignment: u64,
    /// `optimalBufferCopyRowPitchAlignment` (bytes).
    pub row_pitch_alignment: u64,
}

/// The image limits of `phys` (`VkPhysicalDeviceLimits`).
pub fn image_limits(phys: &PhysicalDevice) -> ImageLimits {
    let l = &phys.limits;
    ImageLimits {
        max_1d: l.max_image_dimension1_d,
        max_2d: l.max_image_dimension2_d,
        max_3d: l.max_image_dimension3_d,
        max_layers: l.max_image_array_layers,
        max_texel_buffer: l.max_texel_buffer_elements,
        sampled_images: l.max_per_stage_descriptor_sampled_images,
        storage_images: l.max_per_stage_descriptor_storage_images,
        samplers: l.max_per_stage_descriptor_samplers,
        texel_buffer_alignment: l.min_texel_buffer_offset_alignment,
        row_pitch_alignment: l.optimal_buffer_copy_row_pitch_alignment,
    }
}

/// The size of one texel of the formats [`vk_format`] returns, bytes (None for others).
pub fn texel_size(format: vk::Format) -> Option<usize> {
    use vk::Format as F;
    Some(match format {
        F::R8_SNORM | F::R8_UNORM | F::R8_SINT | F::R8_UINT => 1,
        F::R8G8_SNORM | F::R8G8_UNORM | F::R8G8_SINT | F::R8G8_UINT => 2,
        F::R16_SNORM | F::R16_UNORM | F::R16_SINT | F::R16_UINT | F::R16_SFLOAT => 2,
        F::R5G6B5_UNORM_PACK16 => 2,
        F::R8G8B8A8_SNORM | F::R8G8B8A8_UNORM | F::R8G8B8A8_SINT | F::R8G8B8A8_UINT => 4,
        F::R8G8B8A8_SRGB | F::B8G8R8A8_UNORM | F::B8G8R8A8_SRGB => 4,
        F::R16G16_SNORM | F::R16G16_UNORM | F::R16G16_SINT | F::R16G16_UINT => 4,
        F::R16G16_SFLOAT | F::R32_SINT | F::R32_UINT | F::R32_SFLOAT => 4,
        F::R16G16B16A16_SNORM | F::R16G16B16A16_UNORM | F::R16G16B16A16_SINT => 8,
        F::R16G16B16A16_UINT | F::R16G16B16A16_SFLOAT => 8,
        F::R32G32_SINT | F::R32G32_UINT | F::R32G32_SFLOAT => 8,
        F::R32G32B32A32_SINT | F::R32G32B32A32_UINT | F::R32G32B32A32_SFLOAT => 16,
        _ => return None,
    })
}

/// The dimensionality of a Vulkan image (`VK_IMAGE_TYPE_1D`, `2D`, `3D`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    D1,
    D2,
    D3,
}

/// The Vulkan shape of an image: its type, its extent in texels (height and depth 1 where
/// the type has none) and its array layers (1 for non-arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageShape {
    pub dim: Dim,
    pub extent: [u32; 3],
    pub layers: u32,
}

/// A box of an image and where its texels lie in a buffer, tightly packed from
/// `buffer_offset` (bytes; a multiple of the texel size): rows of `extent[0]` texels, then
/// `extent[1]` rows per slice, slices of a 3D box then layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageRegion {
    pub buffer_offset: u64,
    pub offset: [u32; 3],
    pub extent: [u32; 3],
    pub base_layer: u32,
    pub layers: u32,
}

/// A box copied between two images of one format: source and destination offsets and first
/// layers, and the extent and layer count both share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageCopy {
    pub src_offset: [u32; 3],
    pub src_layer: u32,
    pub dst_offset: [u32; 3],
    pub dst_layer: u32,
    pub extent: [u32; 3],
    pub layers: u32,
}
