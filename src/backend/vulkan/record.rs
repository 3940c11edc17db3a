//! What each device command records: the one lowering of a [`DeviceCommand`] into Vulkan
//! commands, used alike by a queue's job (immediate submission, through
//! [`crate::backend::executor::Executor`]) and by a command buffer's finalize (the secondary
//! it records).
//!
//! A device command is what core made of an OpenCL command once it was checked: buffers,
//! byte offsets, pipelines and launch-buffer addresses, no OpenCL object.

use super::image_object::{Image, ImageCopy, ImageRegion};
use super::memory::Buffer;
pub use super::pipeline::Descriptor;
use super::pipeline::Pipeline;
use super::recorder::Recorder;
use crate::backend::cuda::launch::GreenLaunch;
use std::sync::Arc;

/// A box of work-groups of one launch that share a work-group size: its pipeline
/// (specialised to that size), its first group (the kernel ABI's `group_offset`) and its
/// group count per dimension.
#[derive(Clone)]
pub struct Region {
    pub pipeline: Arc<Pipeline>,
    pub first: [u64; 3],
    pub groups: [u64; 3],
}

/// How the work-groups of a launch are dispatched.
#[derive(Clone)]
pub enum Grid {
    /// Direct dispatches of each region, split where a count exceeds `max` (the device's
    /// `maxComputeWorkGroupCount`); on a compute-unit-limited sub-device (`limited`: the most
    /// groups resident) either the persistent variant as `limited` groups that loop over all
    /// of them, or waves of at most `limited` groups.
    Direct {
        regions: Vec<Region>,
        limited: Option<u64>,
        persistent: bool,
        max: [u64; 3],
    },
    /// One `vkCmdDispatchIndirect` of `pipeline` reading its group counts (a
    /// `VkDispatchIndirectCommand`) from `buffer` at byte `offset`, when the command runs.
    Indirect {
        pipeline: Arc<Pipeline>,
        buffer: Arc<Buffer>,
        offset: u64,
    },
}

/// A kernel launch for Vulkan: the device addresses of its launch header and argument block
/// (the kernel ABI's two push-constant pointers), its grid, and the pushed descriptors of its
/// image arguments (empty for kernels without).
#[derive(Clone)]
pub struct VulkanLaunch {
    pub header: u64,
    pub args: u64,
    pub grid: Grid,
    pub descriptors: Vec<Descriptor>,
}

/// One device command, ready to record.
#[derive(Clone)]
pub enum DeviceCommand {
    /// `vkCmdCopyBuffer`: each region is (source offset, destination offset, size), bytes.
    Copy {
        src: Arc<Buffer>,
        dst: Arc<Buffer>,
        regions: Vec<(u64, u64, u64)>,
    },
    /// `vkCmdFillBuffer` of `word` over `size` bytes from byte `offset` (multiples of 4).
    Fill {
        dst: Arc<Buffer>,
        offset: u64,
        size: u64,
        word: u32,
    },
    /// A kernel launch: its Vulkan form and, on a green context where the kernel runs as PTX,
    /// its CUDA form (at least one of the two is there).
    Launch {
        vulkan: Option<VulkanLaunch>,
        cuda: Option<Arc<GreenLaunch>>,
    },
    /// `vkCmdCopyBufferToImage` (`to_image`) or `vkCmdCopyImageToBuffer` of `regions`.
    BufferImage {
        buffer: Arc<Buffer>,
        image: Arc<Image>,
        regions: Vec<ImageRegion>,
        to_image: bool,
    },
    /// `vkCmdCopyImage` between two images of one format.
    CopyImage {
        src: Arc<Image>,
        dst: Arc<Image>,
        regions: Vec<ImageCopy>,
    },
    /// Every write recorded before made visible to every read and write after.
    Barrier,
    /// `vkCmdExecuteCommands` of a recorded secondary (a command buffer's enqueue).
    Execute(Arc<super::secondary::Secondary>),
}

impl DeviceCommand {
    /// Whether [`record`] can record this command (a launch prepared only for CUDA cannot).
    pub fn has_vulkan_form(&self) -> bool {
        !matches!(self, DeviceCommand::Launch { vulkan: None, .. })
    }
}

/// Records `c` into `r`. A launch without a Vulkan form records nothing and is logged (the
/// executor never hands one here: see [`DeviceCommand::has_vulkan_form`]).
pub fn record(r: &mut Recorder, c: &DeviceCommand) {
    match c {
        DeviceCommand::Copy { src, dst, regions } => r.copy_buffer(src, dst, regions),
        DeviceCommand::Fill {
            dst,
            offset,
            size,
            word,
        } => r.fill_buffer(dst, *offset, *size, *word),
        DeviceCommand::Launch {
            vulkan: Some(l), ..
        } => record_launch(r, l),
        DeviceCommand::Launch { vulkan: None, .. } => {
            tracing::error!("a launch prepared for CUDA only reached the Vulkan recorder");
        }
        DeviceCommand::BufferImage {
            buffer,
            image,
            regions,
            to_image,
        } => r.copy_buffer_image(buffer, image, regions, *to_image),
        DeviceCommand::CopyImage { src, dst, regions } => r.copy_image(src, dst, regions),
        DeviceCommand::Barrier => r.barrier(),
        DeviceCommand::Execute(s) => r.execute(s.raw),
    }
}

/// The 32-byte push-constant block of the kernel ABI: the launch header's and the argument
/// block's device addresses and the group offset of the dispatch.
pub fn push_constants(header: u64, args: u64, group_offset: [u32; 3]) -> [u8; 32] {
    let mut push = [0u8; 32];
    push[0..8].copy_from_slice(&header.to_le_bytes());
    push[8..16].copy_from_slice(&args.to_le_bytes());
    for d in 0..3 {
        push[16 + 4 * d..20 + 4 * d].copy_from_slice(&group_offset[d].to_le_bytes());
    }
    push
}

/// Records a launch (see [`Grid`]).
pub fn record_launch(r: &mut Recorder, l: &VulkanLaunch) {
    let (header, args) = (l.header, l.args);
    match &l.grid {
        Grid::Indirect {
            pipeline,
            buffer,
            offset,
        } => {
            let push = push_constants(header, args, [0; 3]);
            r.push_descriptors(pipeline, &l.descriptors);
            r.dispatch_indirect(pipeline, &push, buffer, *offset);
        }
        Grid::Direct {
            regions,
            limited,
            persistent,
            max,
        } => {
            for reg in regions {
                r.push_descriptors(&reg.pipeline, &l.descriptors);
                match (*persistent, *limited) {
                    (true, Some(n)) => r.dispatch(
                        &reg.pipeline,
                        &push_constants(header, args, [0; 3]),
                        [n as u32, 1, 1],
                    ),
                    (false, Some(lim)) => {
                        let tile = wave_tile(reg.groups, lim);
                        let m = std::array::from_fn(|d| max[d].min(tile[d]));
                        record_split(r, reg, header, args, m);
                    }
                    _ => record_split(r, reg, header, args, *max),
                }
            }
        }
    }
}

/// Records the groups of `reg`, split into several dispatches where a count exceeds `max`.
pub fn record_split(r: &mut Recorder, reg: &Region, header: u64, args: u64, max: [u64; 3]) {
    let (first, groups) = (reg.first, reg.groups);
    let mut z = 0;
    while z < groups[2] {
        let nz = (groups[2] - z).min(max[2]);
        let mut y = 0;
        while y < groups[1] {
            let ny = (groups[1] - y).min(max[1]);
            let mut x = 0;
            while x < groups[0] {
                let nx = (groups[0] - x).min(max[0]);
                let at = [first[0] + x, first[1] + y, first[2] + z];
                let push = push_constants(header, args, at.map(|v| v as u32));
                r.dispatch(&reg.pipeline, &push, [nx as u32, ny as u32, nz as u32]);
                x += nx;
            }
            y += ny;
        }
        z += nz;
    }
}

/// The box of groups one wave dispatches: at most `l` groups, as many whole rows (then
/// planes) of the `groups` grid as fit, at least one group.
pub fn wave_tile(groups: [u64; 3], l: u64) -> [u64; 3] {
    let x = groups[0].min(l).max(1);
    let y = groups[1].min(l / x).max(1);
    let z = groups[2].min(l / (x * y)).max(1);
    [x, y, z]
}

#[cfg(test)]
mod tests {
    use super::{push_constants, wave_tile};

    #[test]
    fn waves_stay_within_the_limit() {
        assert_eq!(wave_tile([256, 1, 1], 3), [3, 1, 1]);
        assert_eq!(wave_tile([12, 6, 1], 30), [12, 2, 1]);
        assert_eq!(wave_tile([4, 4, 8], 40), [4, 4, 2]);
        assert_eq!(wave_tile([5, 5, 5], 1), [1, 1, 1]);
    }

    #[test]
    fn push_constants_hold_both_addresses_and_the_offset() {
        let p = push_constants(0x1000, 0x1080, [1, 2, 3]);
        assert_eq!(u64::from_le_bytes(p[0..8].try_into().unwrap()), 0x1000);
        assert_eq!(u64::from_le_bytes(p[8..16].try_into().unwrap()), 0x1080);
        assert_eq!(u32::from_le_bytes(p[24..28].try_into().unwrap()), 3);
    }
}
