//! Images, the runtime half (OpenCL 3.0 section 5.3; design in docs/images.md): whether
//! devices claim images (`VKCL_IMAGES=1`, experimental), the image limits and the supported
//! image formats, from the Vulkan driver.

use super::device::Device;
use crate::backend::vulkan::image::{format_support, image_limits, vk_format, ImageLimits};
use opencl_sys::*;

/// Whether devices report `CL_DEVICE_IMAGE_SUPPORT` (the `VKCL_IMAGES=1` setting).
pub fn images_enabled() -> bool {
    crate::util::config::config().images
}

/// Every channel order of OpenCL 3.0 (table "List of supported Image Channel Order Values").
pub const CHANNEL_ORDERS: [cl_channel_order; 19] = [
    CL_R,
    CL_A,
    CL_RG,
    CL_RA,
    CL_RGB,
    CL_RGBA,
    CL_BGRA,
    CL_ARGB,
    CL_INTENSITY,
    CL_LUMINANCE,
    CL_Rx,
    CL_RGx,
    CL_RGBx,
    CL_DEPTH,
    CL_sRGB,
    CL_sRGBx,
    CL_sRGBA,
    CL_sBGRA,
    CL_ABGR,
];

/// Every channel data type of OpenCL 3.0 (table "List of supported Image Channel Data Types").
pub const CHANNEL_TYPES: [cl_channel_type; 15] = [
    CL_SNORM_INT8,
    CL_SNORM_INT16,
    CL_UNORM_INT8,
    CL_UNORM_INT16,
    CL_UNORM_SHORT_565,
    CL_UNORM_SHORT_555,
    CL_UNORM_INT_101010,
    CL_SIGNED_INT8,
    CL_SIGNED_INT16,
    CL_SIGNED_INT32,
    CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16,
    CL_UNSIGNED_INT32,
    CL_HALF_FLOAT,
    CL_FLOAT,
];

/// The image types of clGetSupportedImageFormats and clCreateImage.
pub const IMAGE_TYPES: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];

/// The size of one element (texel) of `format`, bytes; None for an order or type OpenCL does
/// not define, or a packed type with an order other than `CL_RGB`/`CL_RGBx`.
#[allow(non_upper_case_globals)]
pub fn element_size(format: &cl_image_format) -> Option<usize> {
    let channels = match format.image_channel_order {
        CL_R | CL_A | CL_INTENSITY | CL_LUMINANCE | CL_Rx | CL_DEPTH => 1,
        CL_RG | CL_RA | CL_RGx => 2,
        CL_RGB | CL_RGBx | CL_sRGB | CL_sRGBx => 3,
        CL_RGBA | CL_BGRA | CL_ARGB | CL_sRGBA | CL_sBGRA | CL_ABGR => 4,
        _ => return None,
    };
    let packed = matches!(
        format.image_channel_data_type,
        CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 | CL_UNORM_INT_101010
    );
    let rgb = matches!(format.image_channel_order, CL_RGB | CL_RGBx);
    if packed != rgb && channels == 3 && !matches!(format.image_channel_order, CL_sRGB | CL_sRGBx)
        || packed && !rgb
    {
        return None;
    }
    let size = match format.image_channel_data_type {
        CL_SNORM_INT8 | CL_UNORM_INT8 | CL_SIGNED_INT8 | CL_UNSIGNED_INT8 => 1,
        CL_SNORM_INT16 | CL_UNORM_INT16 | CL_SIGNED_INT16 | CL_UNSIGNED_INT16 | CL_HALF_FLOAT => 2,
        CL_SIGNED_INT32 | CL_UNSIGNED_INT32 | CL_FLOAT => 4,
        CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 => return Some(2),
        CL_UNORM_INT_101010 => return Some(4),
        _ => return None,
    };
    Some(channels * size)
}

/// The image limits of `device`'s Vulkan driver.
pub fn limits(device: &Device) -> ImageLimits {
    image_limits(&device.phys)
}

/// The access flags of clGetSupportedImageFormats and clCreateImage.
const ACCESS: cl_mem_flags =
    CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY | CL_MEM_KERNEL_READ_AND_WRITE;

/// The formats `device` supports for images of `image_type` used as `flags` say
/// (clGetSupportedImageFormats, OpenCL 3.0 section 5.3.2.2): a Vulkan format with the same
/// memory layout whose optimal-tiling features allow transfers both ways and, for
/// `CL_MEM_READ_ONLY`, sampled reads; `CL_MEM_WRITE_ONLY`, storage writes without a format;
/// `CL_MEM_READ_WRITE` (no access flag: the same), both; `CL_MEM_KERNEL_READ_AND_WRITE`,
/// storage reads and writes without a format as well. 1D buffer images need texel-buffer
/// features. Empty when images are off ([`images_enabled`]).
pub fn supported_formats(
    device: &Device,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
) -> Vec<cl_image_format> {
    if !images_enabled() {
        return Vec::new();
    }
    let access = if flags & ACCESS == 0 {
        CL_MEM_READ_WRITE
    } else {
        flags & ACCESS
    };
    let mut out = Vec::new();
    for &order in &CHANNEL_ORDERS {
        for &data_type in &CHANNEL_TYPES {
            let Some(vk) = vk_format(order, data_type) else {
                continue;
            };
            let s = format_support(&device.phys, vk);
            let read = s.sampled;
            let write = s.storage_write;
            let ok = s.transfer
                && (access & CL_MEM_READ_ONLY == 0 || read)
                && (access & CL_MEM_WRITE_ONLY == 0 || write)
                && (access & CL_MEM_READ_WRITE == 0 || (read && write))
                && (access & CL_MEM_KERNEL_READ_AND_WRITE == 0 || (read && s.storage_read_write))
                && (image_type != CL_MEM_OBJECT_IMAGE1D_BUFFER || s.texel_buffer);
            if ok {
                out.push(cl_image_format {
                    image_channel_order: order,
                    image_channel_data_type: data_type,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(o: cl_channel_order, t: cl_channel_type) -> cl_image_format {
        cl_image_format {
            image_channel_order: o,
            image_channel_data_type: t,
        }
    }

    #[test]
    fn element_sizes() {
        assert_eq!(element_size(&f(CL_RGBA, CL_UNORM_INT8)), Some(4));
        assert_eq!(element_size(&f(CL_RGBA, CL_FLOAT)), Some(16));
        assert_eq!(element_size(&f(CL_RG, CL_HALF_FLOAT)), Some(4));
        assert_eq!(element_size(&f(CL_RGB, CL_UNORM_SHORT_565)), Some(2));
        assert_eq!(element_size(&f(CL_RGBA, CL_UNORM_SHORT_565)), None);
        assert_eq!(element_size(&f(CL_RGB, CL_FLOAT)), None);
        assert_eq!(element_size(&f(0x1234, CL_FLOAT)), None);
    }

    #[test]
    fn every_backed_format_has_the_vulkan_size() {
        // The Vulkan format of each table entry stores exactly the OpenCL element size.
        for &o in &CHANNEL_ORDERS {
            for &t in &CHANNEL_TYPES {
                if let Some(v) = vk_format(o, t) {
                    let cl = element_size(&f(o, t)).expect("backed formats are valid");
                    let vk_size = crate::backend::vulkan::image::texel_size(v);
                    assert_eq!(Some(cl), vk_size, "order {o:#x} type {t:#x}");
                }
            }
        }
    }
}
