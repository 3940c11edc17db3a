//! Compute pipelines for lowered kernels: shader modules, the one pipeline layout of the
//! kernel ABI (32 bytes of push constants, no descriptor sets) and specialised pipelines.

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

/// A compute pipeline specialised for one work-group size and set of `__local` sizes.
pub struct Pipeline {
    device: Arc<Device>,
    pub layout: vk::PipelineLayout,
    pub raw: vk::Pipeline,
}

impl Pipeline {
    /// Creates a pipeline from `module` with specialization constants `spec` (pairs of
    /// constant ID and 32-bit value). Errors: Vulkan's result.
    pub fn new(
        device: &Arc<Device>,
        module: &ShaderModule,
        spec: &[(u32, u32)],
    ) -> Result<Pipeline, BackendError> {
        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: PUSH_CONSTANT_BYTES,
        }];
        let layout_info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges);
        // SAFETY: valid create info.
        let layout = unsafe { device.raw.create_pipeline_layout(&layout_info, None) }?;
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
                raw: p[0],
            }),
            Err((_, e)) => {
                // SAFETY: the layout is unused.
                unsafe { device.raw.destroy_pipeline_layout(layout, None) };
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
        }
    }
}
