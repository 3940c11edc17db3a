//! The recorder of one Vulkan command buffer (a job's primary or a command buffer's
//! secondary): the Vulkan commands vkcl uses (copies, fills, dispatches, executes of
//! secondaries) and the barriers between them. What an OpenCL command records is chosen in
//! `record.rs`.

use super::device::Device;
use super::image_object::{
    buffer_image_copy, image_copy, Image, ImageCopy, ImageRegion, TexelBuffer,
};
use super::memory::Buffer;
use super::pipeline::{BindingKind, Descriptor, Pipeline};
use ash::vk;

/// Records commands into a job's command buffer.
pub struct Recorder<'a> {
    pub device: &'a Device,
    pub cmd: vk::CommandBuffer,
    /// The compute pipeline bound last in `cmd` (null: none yet): binding it again is skipped.
    pub bound: vk::Pipeline,
    /// The first synchronisation scope of the next barrier: the stages of the commands recorded
    /// since the last barrier and that barrier's second scope (so dependencies chain).
    src: vk::PipelineStageFlags,
    /// A barrier was asked for and is recorded before the next command, with that command's
    /// stages as its second scope.
    pending: bool,
}

/// The stages vkcl's device commands use: compute shaders and transfers.
const WORK_STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::COMPUTE_SHADER.as_raw() | vk::PipelineStageFlags::TRANSFER.as_raw(),
);

impl<'a> Recorder<'a> {
    /// A recorder of `cmd` (recording begun); what came before it in the queue may have used
    /// any of vkcl's stages.
    pub fn new(device: &'a Device, cmd: vk::CommandBuffer) -> Recorder<'a> {
        Recorder {
            device,
            cmd,
            bound: vk::Pipeline::null(),
            src: WORK_STAGES,
            pending: false,
        }
    }

    /// Called before each command with the stages it runs in: records a pending barrier first
    /// (from the stages before to exactly these), else adds them to the next barrier's scope.
    pub fn before(&mut self, stages: vk::PipelineStageFlags) {
        if !std::mem::take(&mut self.pending) {
            self.src |= stages;
            return;
        }
        let writes = |s: vk::PipelineStageFlags| {
            let mut a = vk::AccessFlags::empty();
            if s.contains(vk::PipelineStageFlags::COMPUTE_SHADER) {
                a |= vk::AccessFlags::SHADER_WRITE;
            }
            if s.contains(vk::PipelineStageFlags::TRANSFER) {
                a |= vk::AccessFlags::TRANSFER_WRITE;
            }
            a
        };
        let mut dst_access = vk::AccessFlags::empty();
        if stages.contains(vk::PipelineStageFlags::COMPUTE_SHADER) {
            dst_access |= vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
        }
        if stages.contains(vk::PipelineStageFlags::TRANSFER) {
            dst_access |= vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE;
        }
        if stages.contains(vk::PipelineStageFlags::DRAW_INDIRECT) {
            dst_access |= vk::AccessFlags::INDIRECT_COMMAND_READ;
        }
        let mb = [vk::MemoryBarrier::default()
            .src_access_mask(writes(self.src))
            .dst_access_mask(dst_access)];
        // SAFETY: the command buffer is recording.
        unsafe {
            self.device.raw.cmd_pipeline_barrier(
                self.cmd,
                self.src,
                stages,
                vk::DependencyFlags::empty(),
                &mb,
                &[],
                &[],
            )
        };
        self.src = stages;
    }
    /// `vkCmdCopyBuffer`: each region is (source offset, destination offset, size), bytes.
    pub fn copy_buffer(&mut self, src: &Buffer, dst: &Buffer, regions: &[(u64, u64, u64)]) {
        let local = src.device_local && dst.device_local;
        if let Some(k) = local.then(|| self.device.copy_kernel()).flatten() {
            let limits = &self.device.phys.limits;
            let max = [
                limits.max_compute_work_group_count[0],
                limits.max_compute_work_group_count[1],
            ];
            let plans: Option<Vec<_>> = regions
                .iter()
                .map(|&(s, d, n)| {
                    super::copy_kernel::plan(src.address + s, dst.address + d, n, max)
                })
                .collect();
            if let Some(plans) = plans {
                return self.copy_with_shader(k, &plans);
            }
        }
        super::counters::count_command();
        self.before(vk::PipelineStageFlags::TRANSFER);
        let r: Vec<vk::BufferCopy> = regions
            .iter()
            .map(|&(s, d, n)| vk::BufferCopy {
                src_offset: s,
                dst_offset: d,
                size: n,
            })
            .collect();
        // SAFETY: the command buffer is recording; buffers are alive (the job keeps them).
        unsafe {
            self.device
                .raw
                .cmd_copy_buffer(self.cmd, src.raw, dst.raw, &r)
        };
    }

    /// The dispatches of the buffer-copy shader (`copy_kernel.rs`), one per region.
    fn copy_with_shader(
        &mut self,
        k: &super::copy_kernel::CopyKernel,
        plans: &[super::copy_kernel::CopyDispatch],
    ) {
        for p in plans {
            super::counters::count_shader_copy();
            // The buffers' addresses stay valid while the job (or the secondary) keeps them.
            self.dispatch_raw(k.raw, k.layout, &p.push, [p.groups[0], p.groups[1], 1]);
        }
    }

    /// `vkCmdCopyBufferToImage` (`to_image`) or `vkCmdCopyImageToBuffer` of `regions`, the
    /// image in `GENERAL` layout; for a 1D buffer image ([`Image::texels`]) a
    /// `vkCmdCopyBuffer` of the same bytes between `buffer` and the image's buffer (core
    /// routes copies whose byte ranges overlap in one `VkBuffer` through staging).
    pub fn copy_buffer_image(
        &mut self,
        buffer: &Buffer,
        image: &Image,
        regions: &[ImageRegion],
        to_image: bool,
    ) {
        if let Some(t) = &image.texels {
            let r: Vec<(u64, u64, u64)> = regions
                .iter()
                .map(|g| {
                    let at = t.offset + u64::from(g.offset[0]) * image.texel_size;
                    let n = u64::from(g.extent[0]) * image.texel_size;
                    if to_image {
                        (g.buffer_offset, at, n)
                    } else {
                        (at, g.buffer_offset, n)
                    }
                })
                .collect();
            let (src, dst) = if to_image {
                (buffer, &*t.buffer)
            } else {
                (&*t.buffer, buffer)
            };
            return self.copy_buffer(src, dst, &r);
        }
        super::counters::count_command();
        self.before(vk::PipelineStageFlags::TRANSFER);
        let r: Vec<vk::BufferImageCopy> = regions.iter().map(buffer_image_copy).collect();
        let general = vk::ImageLayout::GENERAL;
        // SAFETY: the command buffer is recording; buffer and image are alive (the job or
        // the secondary keeps them); core checked the regions inside both.
        unsafe {
            if to_image {
                self.device
                    .raw
                    .cmd_copy_buffer_to_image(self.cmd, buffer.raw, image.raw, general, &r)
            } else {
                self.device
                    .raw
                    .cmd_copy_image_to_buffer(self.cmd, image.raw, general, buffer.raw, &r)
            }
        };
    }

    /// `vkCmdCopyImage` of `regions` between two images of one format, both `GENERAL`; where
    /// one or both are 1D buffer images, the buffer-image or buffer copy of the same texels
    /// (one row per region: core makes image copies only between images of one type, so a
    /// 1D buffer image meets another 1D buffer image here).
    pub fn copy_image(&mut self, src: &Image, dst: &Image, regions: &[ImageCopy]) {
        // The byte of texel `x` of a 1D buffer image in its buffer.
        let at = |t: &TexelBuffer, img: &Image, x: u32| t.offset + u64::from(x) * img.texel_size;
        match (&src.texels, &dst.texels) {
            (Some(s), Some(d)) => {
                let r: Vec<(u64, u64, u64)> = regions
                    .iter()
                    .map(|c| {
                        (
                            at(s, src, c.src_offset[0]),
                            at(d, dst, c.dst_offset[0]),
                            u64::from(c.extent[0]) * src.texel_size,
                        )
                    })
                    .collect();
                return self.copy_buffer(&s.buffer, &d.buffer, &r);
            }
            (Some(s), None) | (None, Some(s)) => {
                let to_image = src.texels.is_some();
                let (img, rs): (&Image, Vec<ImageRegion>) = if to_image {
                    let v = regions
                        .iter()
                        .map(|c| ImageRegion {
                            buffer_offset: at(s, src, c.src_offset[0]),
                            offset: c.dst_offset,
                            extent: c.extent,
                            base_layer: c.dst_layer,
                            layers: c.layers,
                        })
                        .collect();
                    (dst, v)
                } else {
                    let v = regions
                        .iter()
                        .map(|c| ImageRegion {
                            buffer_offset: at(s, dst, c.dst_offset[0]),
                            offset: c.src_offset,
                            extent: c.extent,
                            base_layer: c.src_layer,
                            layers: c.layers,
                        })
                        .collect();
                    (src, v)
                };
                return self.copy_buffer_image(&s.buffer, img, &rs, to_image);
            }
            (None, None) => {}
        }
        if self.copy_image_with_shader(src, dst, regions) {
            return;
        }
        super::counters::count_command();
        self.before(vk::PipelineStageFlags::TRANSFER);
        let r: Vec<vk::ImageCopy> = regions.iter().map(image_copy).collect();
        let general = vk::ImageLayout::GENERAL;
        // SAFETY: as above.
        unsafe {
            self.device
                .raw
                .cmd_copy_image(self.cmd, src.raw, general, dst.raw, general, &r)
        };
    }

    /// Records the copy of `regions` from `src` to `dst` as dispatches of the image-copy shader
    /// (`image_copy_kernel.rs`) where the device copies images with it and both images have
    /// copy views; false (nothing recorded) otherwise.
    fn copy_image_with_shader(&mut self, src: &Image, dst: &Image, regions: &[ImageCopy]) -> bool {
        let Some(k) = self.device.image_copy_kernels() else {
            return false;
        };
        let (Some(pd), Some(from), Some(to)) = (
            self.device.push_descriptor.as_ref(),
            src.copy_view(),
            dst.copy_view(),
        ) else {
            return false;
        };
        let max = self.device.phys.limits.max_compute_work_group_count;
        let dim = src.shape.dim;
        let plans: Option<Vec<_>> = regions
            .iter()
            .map(|c| super::image_copy_kernel::plan(dim, c, max))
            .collect();
        let Some(plans) = plans else {
            return false;
        };
        let cache = self.device.pipeline_cache.raw;
        let Some(pipeline) = k.pipeline(&self.device.raw, cache, dim, src.texel_size) else {
            return false;
        };
        let infos = [from, to].map(|view| {
            [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: view,
                image_layout: vk::ImageLayout::GENERAL,
            }]
        });
        let writes = [0, 1].map(|b| {
            vk::WriteDescriptorSet::default()
                .dst_binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
                .image_info(&infos[b as usize])
        });
        // SAFETY: the command buffer is recording; the layout lives with the device and
        // declares set 0 of two storage images; the views live with their images, which the
        // job (or the secondary) keeps. Pushed once (before the pipeline is bound, which
        // Vulkan allows): every region copies between the same two.
        unsafe {
            pd.cmd_push_descriptor_set(
                self.cmd,
                vk::PipelineBindPoint::COMPUTE,
                k.layout,
                0,
                &writes,
            )
        };
        for p in &plans {
            super::counters::count_shader_copy();
            self.dispatch_raw(pipeline, k.layout, &p.push, p.groups);
        }
        true
    }

    /// `vkCmdFillBuffer` with a 32-bit pattern; offset and size multiples of 4.
    pub fn fill_buffer(&mut self, dst: &Buffer, offset: u64, size: u64, word: u32) {
        super::counters::count_command();
        self.before(vk::PipelineStageFlags::TRANSFER);
        // SAFETY: as above.
        unsafe {
            self.device
                .raw
                .cmd_fill_buffer(self.cmd, dst.raw, offset, size, word)
        };
    }

    /// Binds `pipeline`, pushes the 32-byte constant block and dispatches `groups` work-groups.
    pub fn dispatch(&mut self, pipeline: &Pipeline, push: &[u8; 32], groups: [u32; 3]) {
        self.dispatch_raw(pipeline.raw, pipeline.layout, push, groups);
    }

    /// [`Recorder::dispatch`] of any pipeline (a kernel's, or vkcl's own copy shaders) whose
    /// `layout` declares exactly `push`'s push-constant range at offset 0.
    fn dispatch_raw(
        &mut self,
        pipeline: vk::Pipeline,
        layout: vk::PipelineLayout,
        push: &[u8],
        groups: [u32; 3],
    ) {
        super::counters::count_command();
        self.before(vk::PipelineStageFlags::COMPUTE_SHADER);
        self.bind_raw(pipeline);
        // SAFETY: the command buffer is recording; the layout declares exactly this
        // push-constant range (the caller's duty); the pipeline is alive (see bind_raw).
        unsafe {
            self.device.raw.cmd_push_constants(
                self.cmd,
                layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                push,
            );
            self.device
                .raw
                .cmd_dispatch(self.cmd, groups[0], groups[1], groups[2]);
        }
    }

    /// Pushes `descriptors` as set 0 of `pipeline`'s layout (`VK_KHR_push_descriptor`, which
    /// a pipeline with a set layout implies); nothing when there are none.
    pub fn push_descriptors(&mut self, pipeline: &Pipeline, descriptors: &[Descriptor]) {
        let Some(pd) = self.device.push_descriptor.as_ref() else {
            return;
        };
        if descriptors.is_empty() || pipeline.set_layout.is_none() {
            return;
        }
        let infos: Vec<[vk::DescriptorImageInfo; 1]> = descriptors
            .iter()
            .map(|d| {
                [vk::DescriptorImageInfo {
                    sampler: d.sampler,
                    image_view: d.view,
                    image_layout: vk::ImageLayout::GENERAL,
                }]
            })
            .collect();
        let texel_views: Vec<[vk::BufferView; 1]> =
            descriptors.iter().map(|d| [d.buffer_view]).collect();
        let writes: Vec<vk::WriteDescriptorSet> = descriptors
            .iter()
            .zip(infos.iter().zip(texel_views.iter()))
            .map(|(d, (info, texel))| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_binding(d.binding)
                    .descriptor_type(d.kind.vk());
                match d.kind {
                    BindingKind::StorageTexelBuffer | BindingKind::UniformTexelBuffer => {
                        w.texel_buffer_view(texel)
                    }
                    _ => w.image_info(info),
                }
            })
            .collect();
        // SAFETY: the command buffer is recording; the views are alive while the launch is
        // (its images are kept); the layout's set 0 was made with these bindings.
        unsafe {
            pd.cmd_push_descriptor_set(
                self.cmd,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.layout,
                0,
                &writes,
            )
        };
    }

    /// Binds `pipeline` for compute unless it is the one bound last: consecutive launches of
    /// one kernel (waves, split grids, command-buffer chains) bind it once.
    pub fn bind(&mut self, pipeline: &Pipeline) {
        self.bind_raw(pipeline.raw);
    }

    /// [`Recorder::bind`] of a pipeline vkcl made itself (its copy shaders), alive as long as
    /// the device.
    fn bind_raw(&mut self, pipeline: vk::Pipeline) {
        if self.bound == pipeline {
            return;
        }
        self.bound = pipeline;
        // SAFETY: the command buffer is recording; the pipeline is alive (the job or the
        // secondary keeps a kernel's; vkcl's own live with the device).
        unsafe {
            self.device
                .raw
                .cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, pipeline)
        };
    }

    /// Makes every device write recorded before it available and visible to host reads once
    /// the job's timeline value is reached (the device-to-host domain operation Vulkan
    /// requires before the host reads mapped memory the device wrote).
    pub fn host_barrier(&mut self) {
        let mb = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ | vk::AccessFlags::HOST_WRITE)];
        // SAFETY: as above.
        unsafe {
            self.device.raw.cmd_pipeline_barrier(
                self.cmd,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &mb,
                &[],
                &[],
            )
        };
    }

    /// A memory barrier between everything recorded before and after: every write before made
    /// visible to every read and write after. Recorded lazily, before the next command, with
    /// exactly the stages of the commands on each side (compute shaders, transfers, indirect
    /// reads): a barrier from compute to compute only, say, rather than one over every stage
    /// vkcl uses, which some drivers (NVIDIA's) turn into a heavier wait. A barrier with no
    /// command after it in this command buffer is not recorded (every job begins with one).
    pub fn barrier(&mut self) {
        self.pending = true;
    }

    /// Binds `pipeline`, pushes the 32-byte constant block and dispatches the work-group
    /// counts found in `buffer` at `offset` (a `VkDispatchIndirectCommand`, 4-byte aligned),
    /// read by the device when the command runs.
    pub fn dispatch_indirect(
        &mut self,
        pipeline: &Pipeline,
        push: &[u8; 32],
        buffer: &Buffer,
        offset: u64,
    ) {
        super::counters::count_command();
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
    pub fn execute(&mut self, secondary: vk::CommandBuffer) {
        super::counters::count_secondary_executed();
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
        unsafe { self.device.raw.cmd_execute_commands(self.cmd, &[secondary]) };
    }
}
