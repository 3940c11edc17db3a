//! The NDRange commands of command buffers (`cl_khr_command_buffer`,
//! `cl_khr_command_buffer_mutable_dispatch`): the arguments captured at recording, their
//! launch buffer, and the device command a secondary records for them (again after each
//! mutable update that cannot be written in place).

use super::command::Keep;
use super::device::Device;
use super::error::{ClError, ClResult};
use super::kernel::{
    single_region, ArgValue, Encoded, Kernel, NdRange, ARGS_OFFSET, GROUPS_OFFSET,
};
use super::memory::Mem;
use super::object::{ClObject, Header, Kind};
use super::printf::PrintfBuffer;
use super::queue::CommandQueue;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::pipeline::{Descriptor, Pipeline};
use crate::backend::vulkan::record::{DeviceCommand, Grid, Region, VulkanLaunch};
use opencl_sys::*;
use std::sync::{Arc, Mutex};

/// `CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR`.
pub const NO_ADDITIONAL_WORK_GROUPS: cl_bitfield = 1 << 0;

/// The NDRange and argument values of a kernel command (as recorded or last updated).
#[derive(Clone)]
pub struct Dispatch {
    pub range: NdRange,
    /// Whether a local work size was given (`CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR` reports
    /// zeros otherwise).
    pub local_given: bool,
    /// Captured argument values (None: not set yet, deferred to an update).
    pub args: Vec<Option<ArgValue>>,
    /// Strong references to the buffers of `args` (captured arguments retain their buffers).
    pub held: Vec<Arc<Mem>>,
    /// The captured `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT` list (cl_ext_buffer_device_address),
    /// which a mutable update's exec info replaces.
    pub device_ptrs: Vec<u64>,
}

/// A launch buffer in use by a recorded secondary: the encoding of one [`Dispatch`].
pub struct Live {
    pub(crate) buf: Arc<Buffer>,
    /// The boxes of groups (one per work-group size) and their pipelines.
    regions: Vec<Region>,
    groups: [u64; 3],
    /// The printf buffer the launch header points to (kernels that call printf).
    pub(crate) printf: Option<Arc<PrintfBuffer>>,
    /// Compute-unit limit of a sub-device launch, and whether it uses the persistent variant
    /// (see [`Encoded`]).
    limited: Option<u64>,
    persistent: bool,
    /// The pushed descriptors of its image arguments.
    descriptors: Vec<Descriptor>,
    /// What the encoded arguments reference (kernel, buffers, pipeline), alive as long as a
    /// secondary that reads this launch buffer.
    _keep: Keep,
}

impl Live {
    /// The launch of `e` from the launch buffer `buf` (already holding `e`).
    pub(crate) fn new(buf: Arc<Buffer>, e: Encoded) -> Live {
        Live {
            buf,
            regions: e.regions,
            groups: e.groups,
            limited: e.limited,
            persistent: e.persistent,
            printf: e.printf,
            descriptors: e.descriptors,
            _keep: e.keep,
        }
    }

    /// The pipeline when this launch is one indirect dispatch of the header's group counts:
    /// one box of groups from group 0 (a uniform NDRange), no compute-unit limit, counts
    /// within `max`.
    fn indirect(&self, max: [u64; 3]) -> Option<&Arc<Pipeline>> {
        let fits = (0..3).all(|i| self.groups[i] <= max[i]);
        single_region(&self.regions).filter(|_| fits && self.limited.is_none())
    }

    /// Whether `e` can replace this launch in place: both are one indirect dispatch of the
    /// same pipeline (group counts within `max`).
    pub(crate) fn in_place_ok(&self, e: &Encoded, max: [u64; 3]) -> bool {
        let fits = (0..3).all(|i| e.groups[i] <= max[i]);
        match (self.indirect(max), e.single_pipeline()) {
            (Some(a), Some(b)) => {
                Arc::ptr_eq(a, b) && fits && e.limited.is_none() && e.size() as u64 <= self.buf.size
            }
            _ => false,
        }
    }
}

/// An NDRange command of a command buffer; a `cl_mutable_command_khr` when the application
/// asked for its handle.
pub struct KernelCommand {
    header: Header,
    /// Handle of the command buffer (`CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR`).
    pub command_buffer: usize,
    pub queue: Arc<CommandQueue>,
    pub kernel: Arc<Kernel>,
    pub(crate) device: Arc<Device>,
    /// `CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR`: as given with its 0, empty when NULL.
    pub properties: Vec<cl_command_properties_khr>,
    /// `CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR`.
    pub updatable: cl_mutable_dispatch_fields_khr,
    /// `CL_MUTABLE_DISPATCH_ASSERTS_KHR`.
    pub asserts: cl_bitfield,
    /// Work-groups per dimension when recorded.
    pub recorded_groups: [u64; 3],
    /// Whether the application holds a handle to this command (it may be updated): its
    /// group counts are then read by an indirect dispatch from the launch buffer, so an update
    /// in place is a memory write. Commands without a handle dispatch directly (cheaper on
    /// some drivers).
    pub(crate) mutable: bool,
    /// The device's `maxComputeWorkGroupCount`.
    pub(crate) max_groups: [u64; 3],
    state: Mutex<(Dispatch, Option<Arc<Live>>)>,
}

impl ClObject for KernelCommand {
    const KIND: Kind = Kind::MutableCommand;
    const INVALID: i32 = CL_INVALID_MUTABLE_COMMAND_KHR;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl KernelCommand {
    /// A kernel command of the command buffer with handle `cb_handle`, on its `queue`,
    /// dispatching `dispatch`.
    /// Errors: those of [`Kernel::encode`] (`CL_INVALID_KERNEL_ARGS` only when an argument
    /// is unset and `allow_unset` is false), `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        queue: &Arc<CommandQueue>,
        cb_handle: usize,
        kernel: Arc<Kernel>,
        dispatch: Dispatch,
        properties: Vec<cl_command_properties_khr>,
        updatable: cl_mutable_dispatch_fields_khr,
        asserts: cl_bitfield,
        allow_unset: bool,
        mutable: bool,
    ) -> ClResult<KernelCommand> {
        let device = queue.device.clone();
        let max_groups = device
            .phys
            .limits
            .max_compute_work_group_count
            .map(|v| v as u64);
        let r = &dispatch.range;
        let recorded_groups = r.groups();
        let mut k = KernelCommand {
            header: Header::new(Kind::MutableCommand),
            command_buffer: cb_handle,
            queue: queue.clone(),
            kernel,
            device,
            properties,
            updatable,
            asserts,
            recorded_groups,
            max_groups,
            mutable,
            state: Mutex::new((dispatch.clone(), None)),
        };
        if dispatch.args.iter().any(|a| a.is_none()) && allow_unset {
            return Ok(k);
        }
        let e = k
            .encode(&dispatch)?
            .ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
        let buf = Arc::new(e.to_buffer(&k.device)?);
        k.state = Mutex::new((dispatch, Some(Arc::new(Live::new(buf, e)))));
        Ok(k)
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, (Dispatch, Option<Arc<Live>>)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current NDRange and arguments.
    pub fn dispatch(&self) -> Dispatch {
        self.lock().0.clone()
    }

    pub(crate) fn live(&self) -> Option<Arc<Live>> {
        self.lock().1.clone()
    }

    pub(crate) fn set(&self, d: Dispatch, live: Option<Arc<Live>>) {
        *self.lock() = (d, live);
    }

    /// Whether every argument is set (the command can be recorded).
    pub(crate) fn complete(&self) -> bool {
        self.lock().1.is_some()
    }

    /// Encodes `d`: None while an argument is unset. Errors: as [`Kernel::encode`].
    pub(crate) fn encode(&self, d: &Dispatch) -> ClResult<Option<Encoded>> {
        if d.args.iter().any(|a| a.is_none()) {
            return Ok(None);
        }
        self.kernel
            .encode(&self.device, d.range, &d.args, &d.device_ptrs)
            .map(Some)
    }

    /// Whether `live`, a launch of this command, runs a loop: its kernel has one, or it is
    /// the persistent variant (a loop over groups), so its loop-guard variant may raise
    /// `loop_limit_hit`.
    pub(crate) fn loops(&self, live: &Live) -> bool {
        live.persistent || crate::compiler::has_loops(&self.kernel.info().spirv)
    }

    /// The device command of the current launch (and the launch buffer it reads): for a
    /// mutable command (one the application holds a handle to) whose launch is one box of
    /// groups, one `vkCmdDispatchIndirect` reading the group counts from the launch header;
    /// otherwise direct dispatches (per box of a non-uniform NDRange, split where a count
    /// exceeds the device limit, in waves on a compute-unit-limited sub-device). None while an
    /// argument is unset.
    pub(crate) fn device_command(&self) -> Option<(DeviceCommand, Arc<Live>)> {
        let live = self.live()?;
        let grid = match live.indirect(self.max_groups).filter(|_| self.mutable) {
            Some(pipeline) => Grid::Indirect {
                pipeline: pipeline.clone(),
                buffer: live.buf.clone(),
                offset: GROUPS_OFFSET,
            },
            None => Grid::Direct {
                regions: live.regions.clone(),
                limited: live.limited,
                persistent: live.persistent,
                max: self.max_groups,
            },
        };
        let header = live.buf.address;
        let c = DeviceCommand::Launch {
            vulkan: Some(VulkanLaunch {
                header,
                args: header + ARGS_OFFSET as u64,
                grid,
                descriptors: live.descriptors.clone(),
            }),
            cuda: None,
        };
        Some((c, live))
    }
}

/// Strong references to the buffers named by captured argument values.
/// Errors: `CL_INVALID_KERNEL_ARGS` for a buffer released since it was set.
pub fn held_buffers(args: &[Option<ArgValue>]) -> ClResult<Vec<Arc<Mem>>> {
    let mut held = Vec::new();
    for a in args.iter().flatten() {
        if let ArgValue::Buffer(Some(w)) | ArgValue::Image(w) = a {
            held.push(w.upgrade().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?);
        }
    }
    Ok(held)
}
