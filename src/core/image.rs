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

/// The OpenCL C features of images that `d` reports in `CL_DEVICE_OPENCL_C_FEATURES` besides
/// [`Device::opencl_c_features`] (name, version): none while images are off; else
/// `__opencl_c_images`, `__opencl_c_3d_image_writes` where some format can be written in 3D
/// images and `__opencl_c_read_write_images` where some 2D format can be read and written.
pub fn image_features(d: &Device) -> Vec<(&'static str, u32)> {
    let v3 = super::make_version(3, 0, 0);
    let mut v = Vec::new();
    if !images_enabled() {
        return v;
    }
    v.push(("__opencl_c_images", v3));
    if !supported_formats(d, CL_MEM_WRITE_ONLY, CL_MEM_OBJECT_IMAGE3D).is_empty() {
        v.push(("__opencl_c_3d_image_writes", v3));
    }
    let rw = CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_READ_WRITE;
    if !supported_formats(d, rw, CL_MEM_OBJECT_IMAGE2D).is_empty() {
        v.push(("__opencl_c_read_write_images", v3));
    }
    v
}

/// The image extensions `d` reports besides [`Device::extensions`] (name, version):
/// `cl_khr_3d_image_writes` with `__opencl_c_3d_image_writes` (clang requires both or
/// neither); none while images are off.
pub fn image_extensions(d: &Device) -> Vec<(&'static str, u32)> {
    image_features(d)
        .iter()
        .filter(|(n, _)| *n == "__opencl_c_3d_image_writes")
        .map(|_| ("cl_khr_3d_image_writes", super::make_version(1, 0, 0)))
        .collect()
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
/// storage reads and writes without a format as well. 1D buffer images (texel-buffer views
/// of a buffer, copied with buffer copies) need both texel-buffer features of the format
/// instead, and the storage ones without a format for writes and read-write access.
/// `CL_RGB`/`CL_UNORM_SHORT_565` is not listed for reading on llvmpipe (its sampled reads
/// are 8-bit approximations). Empty when images are off ([`images_enabled`]).
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
            // A format whose sampled reads are inexact (R5G6B5 on llvmpipe) is not listed for
            // reading: its samplerless reads are exact, but a format listed for reading may
            // meet a sampler (docs/images.md, "Formats").
            let sampled_exact = s.sampled_exact;
            let (transfer, read, write, read_write) = if image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER
            {
                (
                    s.texel_buffer,
                    s.texel_buffer,
                    s.texel_write,
                    s.texel_read_write,
                )
            } else {
                let sampled = s.sampled && sampled_exact;
                (
                    s.transfer,
                    sampled,
                    s.storage_write,
                    sampled && s.storage_read_write,
                )
            };
            let ok = transfer
                && (access & CL_MEM_READ_ONLY == 0 || read)
                && (access & CL_MEM_WRITE_ONLY == 0 || write)
                && (access & CL_MEM_READ_WRITE == 0 || (read && write))
                && (access & CL_MEM_KERNEL_READ_AND_WRITE == 0 || read_write);
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

/// The texel of `format` (one [`vk_format`] backs) holding `color`, the four 32-bit words of
/// clEnqueueFillImage's colour (`float4` for normalized, half and float types, `int4` and
/// `uint4` for the signed and unsigned integer types), converted as OpenCL C section 8.3
/// converts on writes: floats to normalized integers with saturation and round to nearest
/// even (NaN to 0), to half with round to nearest even, integers saturated to the channel;
/// `CL_sRGBA`/`CL_sBGRA` encode red, green and blue with the sRGB transfer function first.
/// None for formats vkcl does not back.
#[allow(non_upper_case_globals)]
pub fn pack_color(format: &cl_image_format, color: [u32; 4]) -> Option<Vec<u8>> {
    let f = color.map(f32::from_bits);
    let unorm = |x: f32, m: f32| -> u32 {
        if x.is_nan() {
            0
        } else {
            (x.clamp(0.0, 1.0) * m).round_ties_even() as u32
        }
    };
    let snorm = |x: f32, m: f32| -> i32 {
        if x.is_nan() {
            0
        } else {
            (x.clamp(-1.0, 1.0) * m).round_ties_even() as i32
        }
    };
    let srgb = |x: f32| -> f32 {
        if x.is_nan() || x <= 0.0 {
            0.0
        } else if x <= 0.003_130_8 {
            x * 12.92
        } else {
            1.055 * x.min(1.0).powf(1.0 / 2.4) - 0.055
        }
    };
    let order = format.image_channel_order;
    let ty = format.image_channel_data_type;
    if order == CL_RGB && ty == CL_UNORM_SHORT_565 {
        let v = (unorm(f[0], 31.0) << 11) | (unorm(f[1], 63.0) << 5) | unorm(f[2], 31.0);
        return Some((v as u16).to_le_bytes().to_vec());
    }
    let (channels, srgb_rgb): (&[usize], bool) = match order {
        CL_R => (&[0], false),
        CL_RG => (&[0, 1], false),
        CL_RGBA => (&[0, 1, 2, 3], false),
        CL_BGRA => (&[2, 1, 0, 3], false),
        CL_sRGBA => (&[0, 1, 2, 3], true),
        CL_sBGRA => (&[2, 1, 0, 3], true),
        _ => return None,
    };
    let mut out = Vec::new();
    for &c in channels {
        let x = if srgb_rgb && c < 3 { srgb(f[c]) } else { f[c] };
        let (i, u) = (color[c] as i32, color[c]);
        match ty {
            CL_UNORM_INT8 => out.push(unorm(x, 255.0) as u8),
            CL_UNORM_INT16 => out.extend((unorm(x, 65535.0) as u16).to_le_bytes()),
            CL_SNORM_INT8 => out.push(snorm(x, 127.0) as i8 as u8),
            CL_SNORM_INT16 => out.extend((snorm(x, 32767.0) as i16).to_le_bytes()),
            CL_SIGNED_INT8 => out.push(i.clamp(-128, 127) as i8 as u8),
            CL_SIGNED_INT16 => out.extend((i.clamp(-32768, 32767) as i16).to_le_bytes()),
            CL_SIGNED_INT32 => out.extend(i.to_le_bytes()),
            CL_UNSIGNED_INT8 => out.push(u.min(255) as u8),
            CL_UNSIGNED_INT16 => out.extend((u.min(65535) as u16).to_le_bytes()),
            CL_UNSIGNED_INT32 => out.extend(u.to_le_bytes()),
            CL_HALF_FLOAT => out.extend(half_bits(x).to_le_bytes()),
            CL_FLOAT => out.extend(x.to_bits().to_le_bytes()),
            _ => return None,
        }
    }
    Some(out)
}

/// `x` as an IEEE binary16, rounded to nearest even (overflow to infinity, NaN kept quiet).
pub fn half_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 255 {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let round = |h: u32, rem: u32, half: u32| -> u32 {
        if rem > half || (rem == half && h & 1 == 1) {
            h + 1
        } else {
            h
        }
    };
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    if e > 0 {
        let h = ((e as u32) << 10) | (man >> 13);
        return sign | round(h, man & 0x1fff, 0x1000).min(0x7c00) as u16;
    }
    // A half subnormal (units of 2^-24) or zero.
    let s = (126 - exp) as u32;
    if s > 24 {
        return sign;
    }
    let m = man | 0x80_0000;
    sign | round(m >> s, m & ((1 << s) - 1), 1 << (s - 1)) as u16
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
    fn halves_round_to_nearest_even() {
        assert_eq!(half_bits(1.0), 0x3c00);
        assert_eq!(half_bits(-2.0), 0xc000);
        assert_eq!(half_bits(65504.0), 0x7bff);
        assert_eq!(
            half_bits(65520.0),
            0x7c00,
            "halfway above the largest: to infinity"
        );
        assert_eq!(half_bits(1.0 + 1.0 / 2048.0), 0x3c00, "tie to even");
        assert_eq!(half_bits(1.0 + 3.0 / 2048.0), 0x3c02, "tie to even, up");
        assert_eq!(half_bits(5.960_464_5e-8), 0x0001, "smallest subnormal");
        assert_eq!(half_bits(2.980_232_2e-8), 0x0000, "half of it ties to 0");
        assert_eq!(half_bits(f32::NAN) & 0x7e00, 0x7e00);
    }

    #[test]
    fn colors_pack_per_format() {
        let c = [0.5f32, 1.5, -0.25, 0.25].map(f32::to_bits);
        assert_eq!(
            pack_color(&f(CL_RGBA, CL_UNORM_INT8), c),
            Some(vec![128, 255, 0, 64])
        );
        assert_eq!(
            pack_color(&f(CL_BGRA, CL_UNORM_INT8), c),
            Some(vec![0, 255, 128, 64])
        );
        let i = [-300i32, 70000, 5, -1].map(|v| v as u32);
        assert_eq!(
            pack_color(&f(CL_RG, CL_SIGNED_INT16), i),
            Some(vec![0xd4, 0xfe, 0xff, 0x7f])
        );
        assert_eq!(pack_color(&f(CL_R, CL_UNSIGNED_INT8), i), Some(vec![255]));
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
