//! Timeline semaphores: the values every command of a queue signals, and the waits on them
//! that notice a lost device (see [`Timeline::wait_probed`]).

use super::device::Device;
use crate::backend::cuda::ExternalSemaphore;
use ash::vk;
use std::sync::Arc;

/// A check of foreign work (a CUDA stream) run while its timeline value is waited for:
/// `Err(why)` once the work failed, which marks the device lost.
pub type Probe = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

/// A timeline semaphore.
pub struct Timeline {
    device: Arc<Device>,
    pub raw: vk::Semaphore,
    /// The index of the `VkQueue` whose submissions alone signal this timeline; None when
    /// another API (CUDA) signals it too, so that every wait on it is a semaphore wait.
    pub queue_index: Option<usize>,
    /// Whether it was created exportable (`VK_KHR_external_semaphore_fd`, opaque fd).
    exportable: bool,
    /// The semaphore imported into CUDA, at the first [`Timeline::cuda_semaphore`].
    cuda: std::sync::OnceLock<Option<ExternalSemaphore>>,
}

impl Timeline {
    /// Creates a timeline semaphore at value 0, signalled by submissions to queue
    /// `queue_index` only (None: by other APIs too). On a device of the CUDA path it is created
    /// exportable, so CUDA can wait on it; where the driver refuses that, a plain one.
    /// Errors: `vkCreateSemaphore`'s result.
    pub fn new(
        device: &Arc<Device>,
        queue_index: Option<usize>,
    ) -> Result<Arc<Timeline>, vk::Result> {
        let create = |export: bool| {
            let mut ty = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let mut ex = vk::ExportSemaphoreCreateInfo::default()
                .handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
            let mut info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
            if export {
                info = info.push_next(&mut ex);
            }
            // SAFETY: valid create info on a live device (the export structure only where
            // VK_KHR_external_semaphore_fd is enabled).
            unsafe { device.raw.create_semaphore(&info, None) }
        };
        let want_export = device.semaphore_fd.is_some();
        let (raw, exportable) = match create(want_export) {
            Ok(raw) => (raw, want_export),
            Err(e) if want_export => {
                tracing::warn!("exportable timeline semaphore refused ({e}): a plain one");
                (create(false)?, false)
            }
            Err(e) => return Err(e),
        };
        Ok(Arc::new(Timeline {
            device: device.clone(),
            raw,
            queue_index,
            exportable,
            cuda: std::sync::OnceLock::new(),
        }))
    }

    /// This timeline imported into CUDA (exported with `vkGetSemaphoreFdKHR` and imported at
    /// the first call, once), for CUDA streams to wait on and signal; None off the CUDA path or
    /// where the export or import failed (logged once).
    pub fn cuda_semaphore(&self) -> Option<&ExternalSemaphore> {
        if !self.exportable {
            return None;
        }
        let fd_loader = self.device.semaphore_fd.as_ref()?;
        let (cuda, _) = self.device.cuda.as_ref()?;
        self.cuda
            .get_or_init(|| {
                let info = vk::SemaphoreGetFdInfoKHR::default()
                    .semaphore(self.raw)
                    .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
                // SAFETY: an exportable semaphore of this device.
                let fd = match unsafe { fd_loader.get_semaphore_fd(&info) } {
                    Ok(fd) => fd,
                    Err(e) => {
                        tracing::warn!("vkGetSemaphoreFdKHR: {e}");
                        return None;
                    }
                };
                match ExternalSemaphore::import_timeline_fd(cuda, fd) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        // SAFETY: the import failed, so the fd is still ours to close.
                        unsafe { libc::close(fd) };
                        tracing::warn!("timeline import into CUDA: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// The current counter value.
    pub fn value(&self) -> u64 {
        // SAFETY: live timeline semaphore of this device.
        unsafe { self.device.raw.get_semaphore_counter_value(self.raw) }.unwrap_or(0)
    }

    /// Blocks until the counter reaches `value`. Errors: `VK_ERROR_DEVICE_LOST` once the
    /// device is lost (see [`Timeline::wait_probed`]), other errors of the wait.
    pub fn wait(&self, value: u64) -> Result<(), vk::Result> {
        self.wait_probed(value, None)
    }

    /// Blocks until the counter reaches `value`, or the device is found lost.
    ///
    /// On a GPU it polls the counter: spinning for [`SPIN`], then yielding the CPU between
    /// polls until [`POLL`] has passed, then sleeping between polls (100 us, growing to 1 ms
    /// after a second): a blocking `vkWaitSemaphores` wakes from tens of microseconds to
    /// several milliseconds after the signal on NVIDIA's driver (measured on the H200; worse
    /// for values CUDA signals), which every command's completion would otherwise wait for.
    /// On a CPU device (lavapipe) it blocks, leaving the cores to the device's threads.
    ///
    /// A faulted GPU never signals the value, and a counter read may only read memory, so
    /// every [`CHECK`] of waiting the wait also asks the driver (`vkWaitSemaphores` with a
    /// [`CHECK_WAIT`] timeout, where the driver reports `VK_ERROR_DEVICE_LOST`), looks at the
    /// device's lost flag (set by any call that saw the loss, on any thread) and runs `probe`
    /// (foreign work's own error check: a CUDA error on a green context's stream), which
    /// marks the device lost when it fails. No time limit by default (a long kernel is no
    /// fault): with `VKCL_GPU_TIMEOUT_MS` a wait still unfinished after that long marks the
    /// device lost (NVIDIA's driver reports nothing after a GPU fault: `examples/fault_probe.rs`).
    /// On NVIDIA, a GPU fault that NVML reports (`xid.rs`) marks the device lost once this
    /// wait's counter has stayed for [`super::xid::GRACE`] after the report.
    /// Errors: `VK_ERROR_DEVICE_LOST` as said; other errors of the Vulkan calls.
    pub fn wait_probed(&self, value: u64, probe: Option<&Probe>) -> Result<(), vk::Result> {
        let dev = &self.device;
        let sems = [self.raw];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        // SAFETY (both closures): live semaphore of this device; the info outlives the call.
        let counter = || {
            dev.note(
                unsafe { dev.raw.get_semaphore_counter_value(self.raw) },
                "vkGetSemaphoreCounterValue",
            )
        };
        let blocking = |timeout: std::time::Duration| {
            dev.note(
                unsafe { dev.raw.wait_semaphores(&info, timeout.as_nanos() as u64) },
                "vkWaitSemaphores",
            )
        };
        let start = std::time::Instant::now();
        // The counter when this wait first saw a GPU fault reported, and since when it stays.
        let xid_since = std::cell::Cell::new(None::<(u64, std::time::Instant)>);
        // The checks made every CHECK: Ok(true) when the value was reached meanwhile.
        let check = || -> Result<bool, vk::Result> {
            match blocking(CHECK_WAIT) {
                Ok(()) => return Ok(true),
                Err(vk::Result::TIMEOUT) => {}
                Err(e) => return Err(e),
            }
            if let Some(Err(why)) = probe.map(|p| p()) {
                dev.mark_lost(&why);
            }
            if let Some(limit) = crate::util::config::config().gpu_timeout {
                if start.elapsed() >= limit {
                    dev.mark_lost(&format!(
                        "a command did not end within VKCL_GPU_TIMEOUT_MS = {} ms",
                        limit.as_millis()
                    ));
                }
            }
            let fault = dev.xid_seen();
            if let Some((_, xid)) = fault.filter(|&(seen, _)| start <= seen + super::xid::GRACE) {
                // A GPU fault on this GPU while this wait ran (or just before it began): lost
                // once this command makes no progress (its timeline's counter stays) for
                // GRACE after this wait first saw it. Waits begun later ignore it.
                let now = counter()?;
                match xid_since.get() {
                    Some((at, when)) if at == now && when.elapsed() >= super::xid::GRACE => {
                        dev.mark_lost(&format!(
                            "NVML reported Xid {xid} (a GPU fault) and a command made no \
                             progress for {} s after it",
                            super::xid::GRACE.as_secs()
                        ));
                    }
                    Some((at, _)) if at == now => {}
                    _ => xid_since.set(Some((now, std::time::Instant::now()))),
                }
            }
            if dev.is_lost() {
                return if counter()? >= value {
                    Ok(true)
                } else {
                    Err(vk::Result::ERROR_DEVICE_LOST)
                };
            }
            Ok(false)
        };
        let mut next_check = CHECK;
        if dev.phys.device_type != vk::PhysicalDeviceType::CPU {
            loop {
                if counter()? >= value {
                    return Ok(());
                }
                let t = start.elapsed();
                if t >= next_check {
                    next_check = t + CHECK;
                    if check()? {
                        return Ok(());
                    }
                } else if t < SPIN {
                    std::hint::spin_loop();
                } else if t < POLL {
                    std::thread::yield_now();
                } else if t < std::time::Duration::from_secs(1) {
                    std::thread::sleep(std::time::Duration::from_micros(100));
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
        loop {
            match blocking(CHECK) {
                Ok(()) => return Ok(()),
                Err(vk::Result::TIMEOUT) => {
                    if check()? {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Signals `value` from the host (it must be above the current value).
    pub fn signal(&self, value: u64) -> Result<(), vk::Result> {
        let info = vk::SemaphoreSignalInfo::default()
            .semaphore(self.raw)
            .value(value);
        // SAFETY: live semaphore; callers keep values increasing.
        let r = unsafe { self.device.raw.signal_semaphore(&info) };
        self.device.note(r, "vkSignalSemaphore")
    }

    /// Whether the timeline's device is lost ([`super::device::Device::is_lost`]).
    pub fn device_lost(&self) -> bool {
        self.device.is_lost()
    }

    /// Marks the timeline's device lost ([`super::device::Device::mark_lost`]).
    pub fn mark_device_lost(&self, why: &str) {
        self.device.mark_lost(why)
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        // CUDA's import goes first: it must not outlive the Vulkan semaphore.
        drop(self.cuda.take());
        // SAFETY: no pending submission references the semaphore once its last owner drops it.
        unsafe { self.device.raw.destroy_semaphore(self.raw, None) };
    }
}

/// How long [`Timeline::wait`] spins on a GPU's timeline.
pub const SPIN: std::time::Duration = std::time::Duration::from_micros(100);
/// How long [`Timeline::wait`] polls a GPU's timeline (yielding) before it blocks.
pub const POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// How often a wait that has not ended checks for a lost device (and runs its probe).
pub const CHECK: std::time::Duration = std::time::Duration::from_millis(100);
/// The timeout of the blocking `vkWaitSemaphores` of each such check on a GPU.
pub const CHECK_WAIT: std::time::Duration = std::time::Duration::from_millis(1);
