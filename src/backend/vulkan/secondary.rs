//! Secondary command buffers recorded once and executed by many submissions
//! (`cl_khr_command_buffer`).
//!
//! A [`Secondary`] owns its own command pool (one buffer in it), is recorded with
//! `SIMULTANEOUS_USE` (a finalized OpenCL command buffer may be enqueued again while an earlier
//! run is still pending) and binds its own pipelines and pushes its own constants, so nothing is
//! inherited from the primary that executes it. Replaying it is one `vkCmdExecuteCommands` in a
//! job's primary command buffer.

use super::counters::{count_command, count_secondary_executed};
use super::device::Device;
use super::memory::Buffer;
use super::queue::Recorder;
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

impl Recorder<'_> {
    /// Binds `pipeline`, pushes the 32-byte constant block and dispatches the work-group
    /// counts found in `buffer` at `offset` (a `VkDispatchIndirectCommand`, 4-byte aligned),
    /// read by the device when the command runs.
    pub fn dispatch_indirect(
        &mut self,
        pipeline: &super::pipeline::Pipeline,
        push: &[u8; 32],
        buffer: &Buffer,
        offset: u64,
    ) {
        count_command();
        self.before(vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT);
        // SAFETY: the command buffer is recording; the pipeline's layout declares exactly this
        // push-constant range; the buffer was created with INDIRECT_BUFFER usage and is kept
        // alive with the secondary.
        self.bind(pipeline);
        unsafe {
            let d = &self.device.raw;
            d.cmd_push_constants(
                self.cmd,
                pipeline.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                push,
            );
            d.cmd_dispatch_indirect(self.cmd, buffer.raw, offset);
        }
    }

    /// `vkCmdExecuteCommands` of one secondary command buffer (recorded for the same queue
    /// family) into this job's primary command buffer.
    pub fn execute(&mut self, secondary: &Secondary) {
        count_secondary_executed();
        // Its commands may use every stage vkcl's do.
        self.before(
            vk::PipelineStageFlags::COMPUTE_SHADER
                | vk::PipelineStageFlags::TRANSFER
                | vk::PipelineStageFlags::DRAW_INDIRECT,
        );
        // The primary's bound state is undefined after vkCmdExecuteCommands.
        self.bound = vk::Pipeline::null();
        // SAFETY: the primary is recording; the secondary is executable, SIMULTANEOUS_USE, and
        // kept alive by the job until the submission completes.
        unsafe {
            self.device
                .raw
                .cmd_execute_commands(self.cmd, &[secondary.raw])
        };
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
