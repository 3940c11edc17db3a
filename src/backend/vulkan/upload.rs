//! One-time uploads into buffers the host does not map (device-local placement,
//! `VKCL_DEVICE_LOCAL`): the initial contents of a `CL_MEM_COPY_HOST_PTR` or
//! `CL_MEM_USE_HOST_PTR` buffer, copied through a pooled staging buffer by a command buffer of
//! its own, waited for on a fence before the buffer is handed out.

use super::device::Device;
use super::memory::Buffer;
use super::staging::Staging;
use crate::backend::error::BackendError;
use ash::vk;
use std::sync::Arc;

/// Copies `data` to bytes `offset..offset + data.len()` of `dst` (a new buffer no command uses
/// yet) and waits until the copy is done and visible to every later command.
/// Errors: [`BackendError`] when the staging buffer, the command pool or buffer, the fence or
/// the submission fail (the device lost included).
pub fn upload(
    device: &Arc<Device>,
    dst: &Buffer,
    offset: u64,
    data: &[u8],
) -> Result<(), BackendError> {
    if data.is_empty() {
        return Ok(());
    }
    let staging = Staging::lease(device, data.len() as u64)?;
    // SAFETY: the staging buffer holds at least `data.len()` bytes and nothing else uses it.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), staging.mapped(), data.len()) };
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(device.phys.compute_queue_family)
        .flags(vk::CommandPoolCreateFlags::TRANSIENT);
    // SAFETY: valid create info on a live device.
    let pool = unsafe { device.raw.create_command_pool(&pool_info, None) }?;
    let region = vk::BufferCopy {
        src_offset: 0,
        dst_offset: offset,
        size: data.len() as u64,
    };
    let result = submit(device, pool, staging.buffer().raw, dst.raw, region);
    // SAFETY: the submission completed (or was never made): the pool is unused.
    unsafe { device.raw.destroy_command_pool(pool, None) };
    result
}

/// Records and submits the copy on the family's first queue, and waits for it on a fence.
fn submit(
    dev: &Arc<Device>,
    pool: vk::CommandPool,
    src: vk::Buffer,
    dst: vk::Buffer,
    region: vk::BufferCopy,
) -> Result<(), BackendError> {
    let alloc = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: a pool of this device; freed with the pool.
    let cmd = unsafe { dev.raw.allocate_command_buffers(&alloc) }?[0];
    let after = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)];
    // SAFETY: recording a fresh command buffer of this device; both buffers live until the
    // fence is waited for below (the caller holds them).
    unsafe {
        let d = &dev.raw;
        d.begin_command_buffer(
            cmd,
            &vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
        )?;
        d.cmd_copy_buffer(cmd, src, dst, &[region]);
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::DependencyFlags::empty(),
            &after,
            &[],
            &[],
        );
        d.end_command_buffer(cmd)?;
        let fence = d.create_fence(&vk::FenceCreateInfo::default(), None)?;
        let cmds = [cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let submitted = {
            let q = dev.queues[0].lock().unwrap_or_else(|e| e.into_inner());
            dev.note(d.queue_submit(*q, &submit, fence), "buffer upload")
        };
        let waited = submitted
            .and_then(|_| dev.note(d.wait_for_fences(&[fence], true, u64::MAX), "buffer upload"));
        d.destroy_fence(fence, None);
        waited?;
    }
    Ok(())
}
