//! NDRange launches on a queue (OpenCL 3.0 section 5.10): a kernel's launch prepared at
//! enqueue, on the calling thread, so its errors return at once and the queue's worker only
//! records it: the arguments encoded into a launch buffer (one reused where it can) and the pipelines built (the
//! Vulkan form), or, on a green-context sub-device where the CUDA path takes the kernel, the
//! PTX function and its arguments (the CUDA form).

use super::device::Device;
use super::error::ClResult;
use super::kernel::{Encoded, Kernel, NdRange, ARGS_OFFSET};
use super::kernel_cuda::prepare_green_launch;
use super::printf::PrintfBuffer;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::record::{DeviceCommand, Grid, VulkanLaunch};
use opencl_sys::*;
use std::any::Any;
use std::sync::Arc;

/// A launch prepared for a queue.
pub struct Launch {
    /// Its device command (None for an empty NDRange, which runs nothing).
    pub device: Option<DeviceCommand>,
    /// The kernel, its buffers, pipelines and launch buffer.
    pub keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// The launch's printf buffer, for a kernel that calls printf: print it on completion.
    pub printf: Option<Arc<PrintfBuffer>>,
    /// On a device with a loop limit: the check of the launch's `loop_limit_hit` flag, to run
    /// on completion ([`LoopCheck::status`]).
    pub loop_check: Option<LoopCheck>,
}

/// The completion check of a launch on a device with a loop limit ([`Device::loop_limit`]):
/// the launch buffer whose header holds `loop_limit_hit`, the kernel's name and the limit.
pub struct LoopCheck {
    buf: Arc<Buffer>,
    kernel: String,
    /// The device's loop limit, None where it has none.
    limit: Option<u32>,
    /// Whether the launch ran the bounds-check variant (`VKCL_BOUNDS_CHECK`).
    bounds: bool,
}

impl LoopCheck {
    /// The check of a command buffer's snapshot `buf` of a launch header (its first bytes, up
    /// to the last flag word read): `loop_limit_hit` where `limit` is set (the device's loop
    /// limit, passes per shader call), and the bounds flag and address where `bounds`
    /// (`VKCL_BOUNDS_CHECK`), for `kernel`.
    pub fn snapshot(
        buf: Arc<Buffer>,
        kernel: String,
        limit: Option<u32>,
        bounds: bool,
    ) -> LoopCheck {
        LoopCheck {
            buf,
            kernel,
            limit,
            bounds,
        }
    }

    /// The completion check of a launch of `kernel` on `device` from launch buffer `buf`:
    /// None when there is nothing to check (no loop limit, `VKCL_BOUNDS_CHECK` off).
    pub fn new(buf: Arc<Buffer>, kernel: &str, device: &Device) -> Option<LoopCheck> {
        let limit = device.loop_limit();
        let bounds = crate::util::config::config().bounds_check;
        (limit.is_some() || bounds).then(|| LoopCheck {
            buf,
            kernel: kernel.to_string(),
            limit,
            bounds,
        })
    }

    /// After the launch completed: `CL_SUCCESS`, or `CL_OUT_OF_RESOURCES` (with an error log
    /// naming the kernel and the limit) when the loop-guard variant found a loop that an
    /// invocation left without taking an exit (the driver cut it), so the results are
    /// incomplete; with `VKCL_BOUNDS_CHECK`, also `CL_OUT_OF_RESOURCES` (with an error log
    /// naming the kernel and a bad address) when the bounds-check variant found a global
    /// access outside every buffer of the launch (it was not performed).
    pub fn status(&self) -> cl_int {
        if self.bounds {
            let [flag_at, addr_at, _, _] = crate::compiler::BOUNDS_OFFSETS;
            let (mut flag, mut addr) = ([0u8; 4], [0u8; 8]);
            if self.buf.read_bytes(flag_at, &mut flag)
                && u32::from_le_bytes(flag) != 0
                && self.buf.read_bytes(addr_at, &mut addr)
            {
                tracing::error!(
                    "kernel `{}`: a global memory access at address {:#x} is outside every \
                     buffer of the launch (VKCL_BOUNDS_CHECK); it was skipped and the command \
                     fails with CL_OUT_OF_RESOURCES",
                    self.kernel,
                    u64::from_le_bytes(addr)
                );
                return CL_OUT_OF_RESOURCES;
            }
        }
        let Some(limit) = self.limit else {
            return CL_SUCCESS;
        };
        let off = crate::compiler::LOOP_FLAG_OFFSET;
        let mut flag = [0u8; 4];
        if self.buf.read_bytes(off, &mut flag) && u32::from_le_bytes(flag) != 0 {
            tracing::error!(
                "kernel `{}`: a loop was left without taking any of its exits (llvmpipe's \
                 loop limit of {} passes per shader call, lavapipe before Mesa 25), so the \
                 results are incomplete; the command fails with CL_OUT_OF_RESOURCES",
                self.kernel,
                limit
            );
            return CL_OUT_OF_RESOURCES;
        }
        CL_SUCCESS
    }
}

/// Prepares a launch of `kernel` over `range` (checked: [`super::kernel::check_range`]) on
/// `device` with the kernel's current arguments: on a green context, its CUDA form where the
/// CUDA path takes it; else [`Kernel::encode`]d into a launch buffer ([`super::launch_buffers::LaunchBuffers`]), dispatched per box of
/// groups (split where a count exceeds the device's `maxComputeWorkGroupCount`, in waves or
/// persistent on a compute-unit-limited sub-device). An empty range (a global size 0) prepares
/// nothing. Errors: as [`Kernel::encode`]; `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
pub fn prepare(kernel: &Arc<Kernel>, device: &Arc<Device>, range: NdRange) -> ClResult<Launch> {
    let mut launch = Launch {
        device: None,
        keep: Vec::new(),
        printf: None,
        loop_check: None,
    };
    if range.global.contains(&0) {
        return Ok(launch);
    }
    let args = kernel
        .args
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let device_ptrs = kernel.device_ptrs();
    // Green-context sub-devices (CUDA path) run the kernel as PTX where they can; not a
    // kernel that may follow Vulkan device addresses found in memory (CUDA's differ).
    let green = if device_ptrs.is_empty() {
        prepare_green_launch(kernel, device, &range, &args)?
    } else {
        None
    };
    if let Some(l) = green {
        launch.keep = l.keep.clone();
        launch.device = Some(DeviceCommand::Launch {
            vulkan: None,
            cuda: Some(Arc::new(l)),
        });
        return Ok(launch);
    }
    let enc = kernel.encode(device, range, &args, &device_ptrs)?;
    let buf = device.launch_buffers.take(
        enc.size() as u64,
        || enc.to_buffer(device),
        |b| enc.write_to(b),
    )?;
    let address = buf.address;
    let Encoded {
        regions,
        limited,
        persistent,
        mut keep,
        printf,
        descriptors,
        ..
    } = enc;
    launch.loop_check = LoopCheck::new(buf.clone(), &kernel.info().name, device);
    keep.push(buf);
    let max = device
        .phys
        .limits
        .max_compute_work_group_count
        .map(|v| v as u64);
    launch.device = Some(DeviceCommand::Launch {
        vulkan: Some(VulkanLaunch {
            header: address,
            args: address + ARGS_OFFSET as u64,
            grid: Grid::Direct {
                regions,
                limited,
                persistent,
                max,
            },
            descriptors,
        }),
        cuda: None,
    });
    launch.keep = keep;
    launch.printf = printf;
    Ok(launch)
}
