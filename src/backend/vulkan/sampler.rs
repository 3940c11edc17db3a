//! The `VkSampler`s of kernels' sampler arguments (docs/images.md): made once per state and
//! kept by the device (a handful of states exist). Always normalized: the lowering divides
//! unnormalized coordinates by the image size (compiler/lower/sampled.rs), since Vulkan's
//! unnormalized samplers allow only 1D and 2D views, no arrays and two addressing modes.

use super::device::Device;
use crate::backend::error::BackendError;
use ash::vk;

/// Addressing of a sampler, in Vulkan's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Address {
    ClampToEdge,
    /// `CLAMP_TO_BORDER` (OpenCL's `CL_ADDRESS_CLAMP`) with `border`.
    ClampToBorder,
    Repeat,
    MirroredRepeat,
}

/// The border colour of [`Address::ClampToBorder`]: OpenCL's (0, 0, 0, 0) for formats with
/// alpha, (0, 0, 0, 1) without, as floats or integers by the image's numeric format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Border {
    pub opaque: bool,
    pub int: bool,
}

/// A sampler's Vulkan state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SamplerKey {
    pub address: Address,
    pub linear: bool,
    pub border: Border,
}

/// The device's sampler of `key`, made on first use. Errors: `vkCreateSampler`'s result.
pub fn sampler(device: &Device, key: SamplerKey) -> Result<vk::Sampler, BackendError> {
    let code = key.address as u32
        | u32::from(key.linear) << 4
        | u32::from(key.border.opaque) << 5
        | u32::from(key.border.int) << 6;
    let mut cache = device.samplers.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = cache.get(&code) {
        return Ok(*s);
    }
    let mode = match key.address {
        Address::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
        Address::ClampToBorder => vk::SamplerAddressMode::CLAMP_TO_BORDER,
        Address::Repeat => vk::SamplerAddressMode::REPEAT,
        Address::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
    };
    let filter = if key.linear {
        vk::Filter::LINEAR
    } else {
        vk::Filter::NEAREST
    };
    let border = match (key.border.int, key.border.opaque) {
        (false, false) => vk::BorderColor::FLOAT_TRANSPARENT_BLACK,
        (false, true) => vk::BorderColor::FLOAT_OPAQUE_BLACK,
        (true, false) => vk::BorderColor::INT_TRANSPARENT_BLACK,
        (true, true) => vk::BorderColor::INT_OPAQUE_BLACK,
    };
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(filter)
        .min_filter(filter)
        .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
        .address_mode_u(mode)
        .address_mode_v(mode)
        .address_mode_w(mode)
        .max_lod(0.0)
        .border_color(border)
        .unnormalized_coordinates(false);
    // SAFETY: valid create info on a live device.
    let s = unsafe { device.raw.create_sampler(&info, None) }?;
    cache.insert(code, s);
    Ok(s)
}
