//! Host-cached staging buffers, pooled per device: the host side of staged reads, rectangular
//! transfers and maps of buffers whose memory the host reads slowly (device-local memory
//! behind the PCI BAR), where the device's copy engine moves the data (`vkCmdCopyBuffer`) and
//! the CPU touches only cached memory.
//!
//! A [`Staging`] lease holds one buffer of at least the requested size; dropping it (when the
//! last command using it completed) gives the buffer back to its device's pool,
//! which keeps idle buffers up to a bound (`VKCL_STAGING_POOL_MB`, default 256 MiB) and frees
//! the rest, so steady-state reads and maps allocate no Vulkan memory.

use super::device::Device;
use super::memory::Buffer;
use crate::backend::error::BackendError;
use std::sync::{Arc, Mutex};

/// The smallest staging buffer, bytes (sizes are rounded up to a power of two from here, so a
/// pooled buffer serves any request of its size class).
const MIN_BYTES: u64 = 64 << 10;

/// Idle staging buffers, each with its size class (its size), by device (the address of its
/// [`Device`], which lives as long as the process). Kept outside the device so that the device
/// does not name its buffers' type.
static IDLE: Mutex<Vec<(usize, Arc<Buffer>)>> = Mutex::new(Vec::new());

fn idle() -> std::sync::MutexGuard<'static, Vec<(usize, Arc<Buffer>)>> {
    IDLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The key of `device` in [`IDLE`].
fn key(device: &Arc<Device>) -> usize {
    Arc::as_ptr(device) as usize
}

/// Idle staging bytes `device` holds for reuse now.
pub fn idle_bytes(device: &Arc<Device>) -> u64 {
    let k = key(device);
    idle()
        .iter()
        .filter(|(d, _)| *d == k)
        .map(|(_, b)| b.size)
        .sum()
}

/// Requests above this many bytes are rounded up to a multiple of it instead of a power of
/// two (a map of 1 GiB and a byte must not take 2 GiB).
const LARGE_STEP: u64 = 16 << 20;

/// The size class of a request of `size` bytes: the next power of two, at least
/// [`MIN_BYTES`], up to 4 x [`LARGE_STEP`]; above, the next multiple of [`LARGE_STEP`].
fn class(size: u64) -> u64 {
    if size > 4 * LARGE_STEP {
        size.div_ceil(LARGE_STEP).saturating_mul(LARGE_STEP)
    } else {
        size.max(MIN_BYTES).next_power_of_two()
    }
}

/// A staging buffer leased from its device's pool: host-cached, host-coherent memory, mapped
/// for its whole life, usable as the source and destination of device copies. Given back to
/// the pool (or freed beyond the pool's bound) when dropped.
pub struct Staging {
    buffer: Option<Arc<Buffer>>,
    device: Arc<Device>,
}

impl Staging {
    /// A staging buffer of at least `size` bytes (> 0) on `device`: an idle one of the same size
    /// class from the pool, else a new allocation of host-cached memory.
    /// Errors: [`BackendError`] when Vulkan or the allocator refuse (out of memory).
    pub fn lease(device: &Arc<Device>, size: u64) -> Result<Staging, BackendError> {
        let want = class(size);
        let k = key(device);
        let reused = {
            let mut idle = idle();
            idle.iter()
                .position(|(d, b)| *d == k && b.size == want)
                .map(|i| idle.swap_remove(i).1)
        };
        let buffer = match reused {
            Some(b) => b,
            None => {
                tracing::debug!("new staging buffer of {want} bytes (request {size})");
                let b = Arc::new(Buffer::readback(device, want)?);
                super::counters::count_staging_allocation();
                b
            }
        };
        Ok(Staging {
            buffer: Some(buffer),
            device: device.clone(),
        })
    }

    /// The buffer (device copies name it).
    pub fn buffer(&self) -> &Arc<Buffer> {
        self.buffer
            .as_ref()
            .expect("a staging lease holds its buffer until dropped")
    }

    /// Host address of byte 0 (mapped while the lease lives).
    pub fn mapped(&self) -> *mut u8 {
        self.buffer().mapped()
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let Some(b) = self.buffer.take() else { return };
        // Only a buffer no command still names goes back (device commands hold clones only
        // while they are recorded, before the lease's command completes).
        if Arc::strong_count(&b) != 1 {
            return;
        }
        let bound = crate::util::config::config().staging_pool_bytes;
        let k = key(&self.device);
        let mut idle = idle();
        let held: u64 = idle
            .iter()
            .filter(|(d, _)| *d == k)
            .map(|(_, x)| x.size)
            .sum();
        if held + b.size <= bound {
            idle.push((k, b));
        } else {
            // Freed outside the lock (the allocator takes its own).
            drop(idle);
            drop(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::class;

    #[test]
    fn size_classes() {
        assert_eq!(class(1), 64 << 10);
        assert_eq!(class(64 << 10), 64 << 10);
        assert_eq!(class((64 << 10) + 1), 128 << 10);
        assert_eq!(class(16 << 20), 16 << 20);
        assert_eq!(class((16 << 20) + 5), 32 << 20);
        assert_eq!(class(64 << 20), 64 << 20);
        assert_eq!(class((64 << 20) + 1), 80 << 20);
    }
}
