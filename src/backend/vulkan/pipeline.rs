//! Compute pipelines for lowered kernels: shader modules, the one pipeline layout of the
//! kernel ABI (32 bytes of push constants, no descriptor sets) and specialised pipelines.

use super::device::Device;
use super::instance::PhysicalDevice;
use ash::vk;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

/// A `VkPipelineCache` persisted beside the program cache (`<cache dir>/pipelines/`, one file
/// per `pipelineCacheUUID`, vendor and device ID; `VKCL_CACHE=0` keeps it in memory only).
/// Loaded when the device is created; saved, atomically and in the program cache's checked
/// format (a corrupt file is ignored), when it has grown: at context release and at process
/// exit.
pub struct PersistentCache {
    pub raw: vk::PipelineCache,
    file: Option<PathBuf>,
    /// Size of the data last loaded or saved, bytes.
    saved: Mutex<usize>,
}

impl PersistentCache {
    /// Creates the cache of `raw`, with the saved data for `phys` if there is valid data.
    /// A cache that cannot be created is `VK_NULL_HANDLE` (pipelines are then uncached).
    pub fn open(raw: &ash::Device, phys: &PhysicalDevice) -> PersistentCache {
        let file = crate::util::config::config().cache.as_ref().map(|c| {
            let uuid: String = phys
                .pipeline_cache_uuid
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            c.dir.join("pipelines").join(format!(
                "{uuid}-{:04x}-{:04x}.bin",
                phys.vendor_id, phys.device_id
            ))
        });
        let initial = file
            .as_deref()
            .and_then(crate::compiler::cache::load_file)
            .filter(|d| Self::header_matches(d, phys))
            .unwrap_or_default();
        let info = vk::PipelineCacheCreateInfo::default().initial_data(&initial);
        // SAFETY: a live device; the initial data is what this driver returned for a device
        // with the same pipelineCacheUUID (checked in its header and by our checksum).
        let created = unsafe { raw.create_pipeline_cache(&info, None) };
        let raw_cache = match created {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("vkCreatePipelineCache: {e}; retrying without saved data");
                let info = vk::PipelineCacheCreateInfo::default();
                // SAFETY: as above, no initial data.
                unsafe { raw.create_pipeline_cache(&info, None) }.unwrap_or_default()
            }
        };
        tracing::debug!(bytes = initial.len(), ?file, "pipeline cache loaded");
        PersistentCache {
            raw: raw_cache,
            file,
            saved: Mutex::new(initial.len()),
        }
    }

    /// Whether `data` starts with a Vulkan pipeline-cache header (version ONE) for `phys`.
    fn header_matches(data: &[u8], phys: &PhysicalDevice) -> bool {
        let u32_at = |o: usize| {
            data.get(o..o + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        u32_at(4) == Some(vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32)
            && u32_at(8) == Some(phys.vendor_id)
            && u32_at(12) == Some(phys.device_id)
            && data.get(16..32) == Some(&phys.pipeline_cache_uuid[..])
    }

    /// Saves the cache of `device` if it has grown since it was loaded or last saved.
    pub fn save(&self, device: &ash::Device) {
        self.save_logged(device, true);
    }

    /// [`Self::save`], logging what it did only when `log` (not from an exit handler: the
    /// logger's thread-local state may already be gone then, and touching it panics).
    fn save_logged(&self, device: &ash::Device, log: bool) {
        let (Some(file), false) = (&self.file, self.raw == vk::PipelineCache::null()) else {
            return;
        };
        let mut saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: a live cache of a live device; reading its data needs no synchronisation.
        let data = match unsafe { device.get_pipeline_cache_data(self.raw) } {
            Ok(d) => d,
            Err(e) => {
                if log {
                    tracing::warn!("vkGetPipelineCacheData: {e}");
                }
                return;
            }
        };
        if data.len() <= *saved {
            return;
        }
        match crate::compiler::cache::store_file(file, "", &data) {
            Ok(()) => {
                if log {
                    tracing::debug!(bytes = data.len(), file = %file.display(), "pipeline cache saved");
                }
                *saved = data.len();
            }
            Err(e) if log => {
                tracing::warn!(file = %file.display(), "cannot save the pipeline cache: {e}")
            }
            Err(_) => {}
        }
    }
}

/// Devices whose pipeline caches are saved at process exit.
static LIVE: Mutex<Vec<Weak<Device>>> = Mutex::new(Vec::new());

extern "C" fn save_all_at_exit() {
    // No unwinding out of an exit handler.
    let _ = std::panic::catch_unwind(|| {
        let devices: Vec<Arc<Device>> = LIVE
            .lock()
            .map(|l| l.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default();
        for d in devices {
            d.pipeline_cache.save_logged(&d.raw, false);
        }
    });
}

/// Registers `device` for saving its pipeline cache at process exit (`atexit`, once).
pub fn save_at_exit(device: &Arc<Device>) {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    if let Ok(mut l) = LIVE.lock() {
        l.push(Arc::downgrade(device));
    }
    REGISTER.call_once(|| {
        // SAFETY: registering a plain extern "C" function that never unwinds.
        unsafe { libc::atexit(save_all_at_exit) };
    });
}

/// Size of the kernel ABI's push-constant block, bytes (see `compiler` module docs).
pub const PUSH_CONSTANT_BYTES: u32 = 32;

/// A `VkShaderModule` holding one lowered kernel (entry point `main`).
pub struct ShaderModule {
    device: Arc<Device>,
    pub raw: vk::ShaderModule,
}

impl ShaderModule {
    /// Creates the module from SPIR-V words. Errors: `vkCreateShaderModule`'s result.
    pub fn new(device: &Arc<Device>, words: &[u32]) -> Result<ShaderModule, vk::Result> {
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
    ) -> Result<Pipeline, vk::Result> {
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
                Err(e)
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
