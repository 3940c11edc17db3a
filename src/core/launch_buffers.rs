//! Launch buffers kept for reuse by a device's later launches (issue 17): a short launch
//! otherwise spends part of its enqueue allocating its header and argument buffer.
//! ([`super::launch`] fills them; kept apart from it so that the device, which owns the pool,
//! imports nothing of the launch path.)

use super::error::ClResult;
use crate::backend::vulkan::memory::Buffer;
use std::sync::{Arc, Mutex};

/// How many launch buffers a device keeps for reuse.
const KEPT_BUFFERS: usize = 32;
/// The largest launch buffer kept for reuse, bytes.
const KEPT_BYTES: u64 = 64 << 10;

/// Launch buffers (header and argument block, `Encoded::size` bytes) kept by a device for
/// reuse: a short launch otherwise spends part of its enqueue allocating and creating one
/// (issue 17). A kept buffer is handed out again only while nothing else holds it: commands
/// keep their launch buffer until they complete, so a count of one means no device work can
/// read it while the host writes the next launch's arguments. `VKCL_LAUNCH_BUFFER_REUSE=0`
/// allocates every time.
#[derive(Default)]
pub struct LaunchBuffers(Mutex<Vec<Arc<Buffer>>>);

impl LaunchBuffers {
    /// A launch buffer of at least `size` bytes holding what `write` writes from the host: a
    /// kept one that no command holds, of at most twice the size (or 256 bytes), else a new
    /// one from `new` (which writes it itself), kept if small. Errors: those of `new`
    /// (`CL_MEM_OBJECT_ALLOCATION_FAILURE`).
    pub fn take(
        &self,
        size: u64,
        new: impl FnOnce() -> ClResult<Buffer>,
        write: impl FnOnce(&Buffer),
    ) -> ClResult<Arc<Buffer>> {
        if !crate::util::config::config().launch_buffer_reuse {
            return Ok(Arc::new(new()?));
        }
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let free = kept
            .iter()
            .find(|b| Arc::strong_count(b) == 1 && b.size >= size && b.size <= size.max(256) * 2);
        if let Some(b) = free.cloned() {
            drop(kept);
            write(&b);
            return Ok(b);
        }
        drop(kept);
        let b = Arc::new(new()?);
        if size <= KEPT_BYTES {
            let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() < KEPT_BUFFERS {
                kept.push(b.clone());
            } else if let Some(slot) = kept.iter_mut().find(|x| Arc::strong_count(x) == 1) {
                *slot = b.clone();
            }
        }
        Ok(b)
    }
}
