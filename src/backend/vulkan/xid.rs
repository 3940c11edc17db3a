//! GPU faults on NVIDIA, seen through NVML's Xid events.
//!
//! NVIDIA's Vulkan driver (580.159.04) reports nothing after a GPU fault (an MMU fault, Xid 13
//! or 31): the faulted command's timeline value is never signalled, `vkWaitSemaphores` times
//! out, waiting for the queue to go idle blocks, and no call returns `VK_ERROR_DEVICE_LOST`
//! (`examples/fault_probe.rs`, docs/h200.md "Session 16"). The kernel driver does log the fault,
//! and NVML (`libnvidia-ml.so.1`, part of the driver) delivers it to any process that
//! registered for critical Xid events. A [`XidWatch`] registers for them when the Vulkan device
//! is made (on a thread of its own: NVML's start takes tens of milliseconds), and a timeline wait
//! that sees an Xid while its own command made no progress for [`GRACE`] marks the device lost
//! (`timeline.rs`), so the application gets an error within seconds instead of a hang.
//!
//! NVML does not say which process faulted: another process's fault on the same GPU while one
//! of vkcl's commands runs longer than [`GRACE`] would end that command too (documented in
//! docs/features.md). `VKCL_GPU_FAULT_WATCH=0` turns the watch off.

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::EventSet;
use nvml_wrapper::Nvml;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a wait that saw an Xid lets its command go without progress before the device is
/// marked lost.
pub const GRACE: Duration = Duration::from_secs(2);

/// NVML's event set for one GPU's critical Xid errors, and the first Xid it delivered.
pub struct XidWatch {
    set: Mutex<EventSet<'static>>,
    seen: Mutex<Option<(Instant, u64)>>,
}

// SAFETY: NVML is thread-safe (its documentation: "NVML is thread-safe so it is safe to make
// simultaneous NVML calls from multiple threads"); the event set is only used under its lock.
unsafe impl Send for XidWatch {}
// SAFETY: as above.
unsafe impl Sync for XidWatch {}

/// The watch of the GPU with Vulkan device UUID `uuid`, being made or made: filled by a thread
/// started here (None inside when NVML or its events are unavailable, logged at debug level).
pub fn start(uuid: [u8; 16]) -> Arc<OnceLock<Option<XidWatch>>> {
    let cell = Arc::new(OnceLock::new());
    let fill = cell.clone();
    let spawned = std::thread::Builder::new()
        .name("vkcl-xid-watch".into())
        .spawn(move || {
            let watch = XidWatch::new(&uuid)
                .map_err(|e| tracing::debug!("no GPU fault watch through NVML: {e}"))
                .ok();
            let _ = fill.set(watch);
        });
    if spawned.is_err() {
        let _ = cell.set(None);
    }
    cell
}

/// NVML's UUID string of a GPU from its 16 bytes ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
fn nvml_uuid(b: &[u8; 16]) -> String {
    let hex =
        |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

impl XidWatch {
    /// Starts NVML (kept for the life of the process) and registers for critical Xid errors
    /// of the GPU whose UUID is `uuid`. Errors: NVML's, as text (library absent, no such GPU,
    /// events not supported).
    fn new(uuid: &[u8; 16]) -> Result<XidWatch, String> {
        static NVML: OnceLock<Result<Nvml, String>> = OnceLock::new();
        let nvml = NVML
            .get_or_init(|| Nvml::init().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| e.clone())?;
        let device = nvml
            .device_by_uuid(nvml_uuid(uuid))
            .map_err(|e| e.to_string())?;
        let set = nvml.create_event_set().map_err(|e| e.to_string())?;
        let set = device
            .register_events(EventTypes::CRITICAL_XID_ERROR, set)
            .map_err(|e| e.error.to_string())?;
        tracing::debug!(
            "GPU fault watch on {} (NVML critical Xid events)",
            nvml_uuid(uuid)
        );
        Ok(XidWatch {
            set: Mutex::new(set),
            seen: Mutex::new(None),
        })
    }

    /// The first critical Xid delivered so far (when it was seen, its number), reading the
    /// events NVML holds without waiting.
    pub fn seen(&self) -> Option<(Instant, u64)> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        while let Ok(event) = set.wait(0) {
            let xid = match event.event_data {
                Some(XidError::Value(v)) => v,
                _ => 0,
            };
            if seen.is_none() {
                tracing::warn!("NVML reports Xid {xid} on the GPU (a GPU fault)");
                *seen = Some((Instant::now(), xid));
            }
        }
        *seen
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuid_string_is_nvmls_form() {
        let b: [u8; 16] = core::array::from_fn(|i| (i as u8) * 17);
        assert_eq!(
            super::nvml_uuid(&b),
            "GPU-00112233-4455-6677-8899-aabbccddeeff"
        );
    }
}
