//! The `VkPipelineCache` of each device, persisted beside the program cache.

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
    /// The device the cache belongs to (devices live as long as the process).
    device: ash::Device,
    file: Option<PathBuf>,
    /// Size of the data last loaded or saved, bytes.
    saved: Mutex<usize>,
}

impl PersistentCache {
    /// Creates the cache of `raw`, with the saved data for `phys` if there is valid data, and
    /// registers it for saving at process exit. A cache that cannot be created is
    /// `VK_NULL_HANDLE` (pipelines are then uncached).
    pub fn open(raw: &ash::Device, phys: &PhysicalDevice) -> Arc<PersistentCache> {
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
            .and_then(crate::util::cache_file::load_file)
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
        let cache = Arc::new(PersistentCache {
            raw: raw_cache,
            device: raw.clone(),
            file,
            saved: Mutex::new(initial.len()),
        });
        save_at_exit(&cache);
        cache
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

    /// Saves the cache if it has grown since it was loaded or last saved.
    pub fn save(&self) {
        self.save_logged(true);
    }

    /// [`Self::save`], logging what it did only when `log` (not from an exit handler: the
    /// logger's thread-local state may already be gone then, and touching it panics).
    fn save_logged(&self, log: bool) {
        let (Some(file), false) = (&self.file, self.raw == vk::PipelineCache::null()) else {
            return;
        };
        let mut saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: a live cache of a live device; reading its data needs no synchronisation.
        let data = match unsafe { self.device.get_pipeline_cache_data(self.raw) } {
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
        match crate::util::cache_file::store_file(file, "", &data) {
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

/// The pipeline caches saved at process exit.
static LIVE: Mutex<Vec<Weak<PersistentCache>>> = Mutex::new(Vec::new());

extern "C" fn save_all_at_exit() {
    // No unwinding out of an exit handler.
    let _ = std::panic::catch_unwind(|| {
        let caches: Vec<Arc<PersistentCache>> = LIVE
            .lock()
            .map(|l| l.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default();
        for c in caches {
            c.save_logged(false);
        }
    });
}

/// Registers `cache` for saving at process exit (`atexit`, once).
fn save_at_exit(cache: &Arc<PersistentCache>) {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    if let Ok(mut l) = LIVE.lock() {
        l.push(Arc::downgrade(cache));
    }
    REGISTER.call_once(|| {
        // SAFETY: registering a plain extern "C" function that never unwinds.
        unsafe { libc::atexit(save_all_at_exit) };
    });
}
