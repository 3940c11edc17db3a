//! Secondary command buffers recorded once and executed by many submissions
//! (`cl_khr_command_buffer`).
//!
//! A [`Secondary`] owns its own command pool (one buffer in it), is recorded with
//! `SIMULTANEOUS_USE` (a finalized OpenCL command buffer may be enqueued again while an earlier
//! run is still pending) and binds its own pipelines and pushes its own constants, so nothing is
//! inherited from the primary that executes it. Replaying it is one `vkCmdExecuteCommands` in a
//! job's primary command buffer.

use super::device::Device;
use super::memory::Buffer;
use super::recorder::Recorder;
use crate::backend::error::BackendError;
use ash::vk;
use std::sync::Arc;

/// A recorded secondary command buffer and the pool it lives in.
pub struct Secondary {
    device: Arc<Device>,
    pool: vk::CommandPool,
    pub raw: vk::CommandBuffer,
}

// SAFETY: the pool and buffer are only touched at creation (one thread) and at drop (after
// every submission that executes the buffer has completed: jobs keep the Secondary alive);
// executing it from several primaries is what SIMULTANEOUS_USE allows.
unsafe impl Send for Secondary {}
// SAFETY: as above; shared access only reads the handle.
unsafe impl Sync for Secondary {}

impl Secondary {
    /// Records a secondary command buffer for the compute queue family of `device` with
    /// `record`. Errors: the Vulkan result of pool or buffer creation, begin or end.
    pub fn record(
        device: &Arc<Device>,
        record: impl FnOnce(&mut Recorder),
    ) -> Result<Secondary, BackendError> {
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(device.phys.compute_queue_family);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { device.raw.create_command_pool(&info, None) }?;
        // From here on `Drop` frees the pool (and the buffer with it) on every path.
        let mut sec = Secondary {
            device: device.clone(),
            pool,
            raw: vk::CommandBuffer::null(),
        };
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::SECONDARY)
            .command_buffer_count(1);
        // SAFETY: the pool was just created and belongs to this thread.
        sec.raw = unsafe { device.raw.allocate_command_buffers(&alloc) }?[0];
        // Outside any render pass, no queries: the inheritance info is all defaults.
        let inheritance = vk::CommandBufferInheritanceInfo::default();
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)
            .inheritance_info(&inheritance);
        // SAFETY: a new command buffer in the initial state.
        unsafe { device.raw.begin_command_buffer(sec.raw, &begin) }?;
        record(&mut Recorder::new(device, sec.raw));
        // SAFETY: recording was begun above.
        unsafe { device.raw.end_command_buffer(sec.raw) }?;
        Ok(sec)
    }
}

impl Drop for Secondary {
    fn drop(&mut self) {
        // SAFETY: no pending submission executes the buffer (every job that does holds this
        // object until it completes); destroying the pool frees its command buffer.
        unsafe { self.device.raw.destroy_command_pool(self.pool, None) };
    }
}

/// A buffer of `size` bytes (> 0) holding `pattern` repeated (the last repetition cut short),
/// the source of a recorded fill whose pattern `vkCmdFillBuffer` cannot write.
/// Errors: as [`Buffer::new`].
pub fn pattern_buffer(
    device: &Arc<Device>,
    pattern: &[u8],
    size: u64,
) -> Result<Buffer, BackendError> {
    let buf = Buffer::new(device, size)?;
    // SAFETY: the buffer is mapped, `size` bytes long, and no device work uses it yet.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.mapped(), size as usize) };
    for chunk in bytes.chunks_mut(pattern.len().max(1)) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
    Ok(buf)
}
