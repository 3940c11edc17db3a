//! Compute pipelines for lowered kernels: shader modules, the pipeline layout of the kernel
//! ABI (32 bytes of push constants; a push-descriptor set 0 of the kernel's image and
//! sampler arguments where it has any) and specialised pipelines.

use super::device::Device;
use crate::backend::error::BackendError;
use ash::vk;
use std::sync::Arc;

/// Size of the kernel ABI's push-constant block, bytes (see `compiler` module docs).
pub const PUSH_CONSTANT_BYTES: u32 = 32;

/// A `VkShaderModule` holding one lowered kernel (entry point `main`).
pub struct ShaderModule {
    device: Arc<Device>,
    pub raw: vk::ShaderModule,
}

impl ShaderModule {
    /// Creates the module from SPIR-V words. Errors: `vkCreateShaderModule`'s result.
    pub fn new(device: &Arc<Device>, words: &[u32]) -> Result<ShaderModule, BackendError> {
        let info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: valid SPIR-V words (validated by the compiler) on a live device.
        let raw = unsafe { device.raw.create_shader_module(&info, None) }?;
        Ok(ShaderModule {
            device: device.clone(),
            raw,
        })
    }
}

impl Drop for ShaderModule {
    fn drop(&mut self) {
        // SAFETY: pipelines made from the module hold no reference to it.
        unsafe { self.device.raw.destroy_shader_module(self.raw, None) };
    }
}

/// What a descriptor binding of a kernel's set 0 holds (docs/images.md): a write-only or
/// read-write image argument (storage image), a read-only one (sampled image), a sampler;
/// for `image1d_buffer_t` arguments a storage texel buffer (write-only, read-write) or a
/// uniform texel buffer (read-only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindingKind {
    StorageImage,
    SampledImage,
    Sampler,
    StorageTexelBuffer,
    UniformTexelBuffer,
}

impl BindingKind {
    /// The Vulkan descriptor type.
    pub fn vk(self) -> vk::DescriptorType {
        match self {
            BindingKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
            BindingKind::SampledImage => vk::DescriptorType::SAMPLED_IMAGE,
            BindingKind::Sampler => vk::DescriptorType::SAMPLER,
            BindingKind::StorageTexelBuffer => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
            BindingKind::UniformTexelBuffer => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
        }
    }
}

/// One descriptor of a launch's set 0 (docs/images.md): binding, kind and the image view
/// or buffer view (kept alive by the launch, which holds the image) or sampler.
#[derive(Clone, Copy)]
pub struct Descriptor {
    pub binding: u32,
    pub kind: BindingKind,
    /// The image view (null for a sampler or a texel buffer).
    pub view: vk::ImageView,
    /// The buffer view of a texel buffer (null otherwise).
    pub buffer_view: vk::BufferView,
    /// The sampler (null for an image; samplers live as long as the device).
    pub sampler: vk::Sampler,
}

/// A compute pipeline specialised for one work-group size and set of `__local` sizes.
pub struct Pipeline {
    device: Arc<Device>,
    pub layout: vk::PipelineLayout,
    /// Set 0's layout (push descriptors) when the kernel has image or sampler arguments.
    pub set_layout: Option<vk::DescriptorSetLayout>,
    pub raw: vk::Pipeline,
}

impl Pipeline {
    /// Creates a pipeline from `module` with specialization constants `spec` (pairs of
    /// constant ID and 32-bit value) and, when `bindings` (binding number, descriptor type)
    /// is not empty, a push-descriptor set 0 of them. Errors: Vulkan's result
    /// (`ERROR_FEATURE_NOT_PRESENT` for bindings without `VK_KHR_push_descriptor`).
    pub fn new(
        device: &Arc<Device>,
        module: &ShaderModule,
        spec: &[(u32, u32)],
        bindings: &[(u32, BindingKind)],
    ) -> Result<Pipeline, BackendError> {
        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: PUSH_CONSTANT_BYTES,
        }];
        let set_layout = if bindings.is_empty() {
            None
        } else {
            if device.push_descriptor.is_none() {
                return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT.into());
            }
            let b: Vec<vk::DescriptorSetLayoutBinding> = bindings
                .iter()
                .map(|&(binding, ty)| vk::DescriptorSetLayoutBinding {
                    binding,
                    descriptor_type: ty.vk(),
                    descriptor_count: 1,
                    stage_flags: vk::ShaderStageFlags::COMPUTE,
                    ..Default::default()
                })
                .collect();
            let info = vk::DescriptorSetLayoutCreateInfo::default()
                .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
                .bindings(&b);
            // SAFETY: valid create info; VK_KHR_push_descriptor is enabled.
            Some(unsafe { device.raw.create_descriptor_set_layout(&info, None) }?)
        };
        let sets: Vec<vk::DescriptorSetLayout> = set_layout.into_iter().collect();
        let layout_info = vk::PipelineLayoutCreateInfo::default()
            .push_constant_ranges(&ranges)
            .set_layouts(&sets);
        // SAFETY: valid create info.
        let layout = match unsafe { device.raw.create_pipeline_layout(&layout_info, None) } {
            Ok(l) => l,
            Err(e) => {
                if let Some(s) = set_layout {
                    // SAFETY: unused.
                    unsafe { device.raw.destroy_descriptor_set_layout(s, None) };
                }
                return Err(e.into());
            }
        };
        let entries: Vec<vk::SpecializationMapEntry> = spec
            .iter()
            .enumerate()
            .map(|(i, (id, _))| vk::SpecializationMapEntry {
                constant_id: *id,
                offset: (i * 4) as u32,
                size: 4,
            })
            .collect();
        let data: Vec<u8> = spec.iter().flat_map(|(_, v)| v.to_le_bytes()).collect();
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module.raw)
            .name(c"main")
            .specialization_info(&spec_info);
        let info = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)
            .flags(vk::PipelineCreateFlags::DISPATCH_BASE)];
        // SAFETY: valid create info; the module is alive for the call.
        match unsafe {
            device
                .raw
                .create_compute_pipelines(device.pipeline_cache.raw, &info, None)
        } {
            Ok(p) => Ok(Pipeline {
                device: device.clone(),
                layout,
                set_layout,
                raw: p[0],
            }),
            Err((_, e)) => {
                // SAFETY: the layouts are unused.
                unsafe {
                    device.raw.destroy_pipeline_layout(layout, None);
                    if let Some(s) = set_layout {
                        device.raw.destroy_descriptor_set_layout(s, None);
                    }
                }
                Err(e.into())
            }
        }
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // SAFETY: jobs keep their pipeline alive until they complete.
        unsafe {
            self.device.raw.destroy_pipeline(self.raw, None);
            self.device.raw.destroy_pipeline_layout(self.layout, None);
            if let Some(s) = self.set_layout {
                self.device.raw.destroy_descriptor_set_layout(s, None);
            }
        }
    }
}
