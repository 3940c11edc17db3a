//! Kernels (OpenCL 3.0 section 5.9) and NDRange launches (section 5.10).

use super::device::{Device, LimitedDispatch};
use super::error::{allocation_failed, ClError, ClResult};
use super::kernel_image::{encode_image, encode_sampler, inline_sampler_descriptors};
use super::memory::Mem;
use super::object::{ClObject, Header, Kind};
use super::printf::PrintfBuffer;
use super::program::{LaunchSpec, Program};
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::pipeline::{Descriptor, Pipeline};
use crate::backend::vulkan::record::Region;
use crate::compiler::{ArgKind, CompiledProgram, KernelInfo};
use opencl_sys::*;
use std::any::Any;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

/// The value of one kernel argument, as set by clSetKernelArg.
#[derive(Clone)]
pub enum ArgValue {
    /// A buffer (None: NULL). Held weakly: clSetKernelArg does not retain the memory object,
    /// so releasing it still destroys it (and runs its destructor callbacks).
    Buffer(Option<Weak<Mem>>),
    /// A `__local` size in bytes.
    Local(usize),
    /// Bytes copied verbatim into the argument block.
    Bytes(Vec<u8>),
    /// A `sampler_t` argument's sampler (held: the spec lets the application release it
    /// once it is set, OpenCL 3.0 5.8.1).
    Sampler(Arc<crate::core::sampler::Sampler>),
    /// An image argument's image (held weakly, as buffers are).
    Image(Weak<Mem>),
    /// A `__global` pointer given as a raw device address (`clSetKernelArgDevicePointerEXT`,
    /// cl_ext_buffer_device_address): any value, dereferenced only by the kernel.
    DevicePointer(u64),
}

/// The formats of the `read_only` image arguments among `args` (those sampled).
fn read_only_formats(info: &KernelInfo, args: &[Option<ArgValue>]) -> Vec<cl_image_format> {
    info.args
        .iter()
        .zip(args.iter())
        .filter(|(a, _)| a.access_qualifier == crate::compiler::AccessQualifier::ReadOnly)
        .filter_map(|(_, v)| match v {
            Some(ArgValue::Image(w)) => w.upgrade(),
            _ => None,
        })
        .filter_map(|m| m.image_part().ok().map(|i| i.desc.format))
        .collect()
}

/// A kernel object: one kernel of a built program plus its argument values.
pub struct Kernel {
    header: Header,
    pub program: Arc<Program>,
    compiled: Arc<CompiledProgram>,
    index: usize,
    pub args: Mutex<Vec<Option<ArgValue>>>,
    /// `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`: device addresses into the buffers the kernel may
    /// reach through pointers it finds in memory (cl_ext_buffer_device_address).
    pub device_ptrs: Mutex<Vec<u64>>,
    /// Whether every NDRange of this kernel must have uniform work-groups: its program was
    /// built with `-cl-uniform-work-group-size`, or from OpenCL C source without
    /// `-cl-std=CL2.0`/`CL3.0` (OpenCL 3.0 5.10, clEnqueueNDRangeKernel).
    pub uniform_work_groups: bool,
}

impl ClObject for Kernel {
    const KIND: Kind = Kind::Kernel;
    const INVALID: i32 = CL_INVALID_KERNEL;
    fn header(&self) -> &Header {
        &self.header
    }
}

/// Offset of the argument block in a launch buffer (after the 96-byte header), bytes.
pub const ARGS_OFFSET: usize = 128;

impl Kernel {
    /// Whether the kernel's program has program-scope `__global` variables (their block is
    /// the Vulkan path's: `Program::global_block`).
    pub fn has_program_globals(&self) -> bool {
        self.compiled.has_global_variables
    }

    /// clCreateKernel. Errors: `CL_INVALID_PROGRAM_EXECUTABLE`, `CL_INVALID_KERNEL_NAME`.
    pub fn new(program: Arc<Program>, name: &str) -> ClResult<Kernel> {
        let (compiled, index) = program.kernel_info(name)?;
        let n = compiled.kernels[index].args.len();
        program.kernel_count.fetch_add(1, Ordering::AcqRel);
        let uniform_work_groups = !program.executable_non_uniform();
        Ok(Kernel {
            header: Header::new(Kind::Kernel),
            program,
            compiled,
            index,
            args: Mutex::new(vec![None; n]),
            device_ptrs: Mutex::new(Vec::new()),
            uniform_work_groups,
        })
    }

    /// clCloneKernel: same kernel, a copy of the current argument values and execution
    /// information.
    pub fn clone_kernel(&self) -> Kernel {
        self.program.kernel_count.fetch_add(1, Ordering::AcqRel);
        Kernel {
            header: Header::new(Kind::Kernel),
            program: self.program.clone(),
            compiled: self.compiled.clone(),
            index: self.index,
            args: Mutex::new(self.args.lock().unwrap_or_else(|e| e.into_inner()).clone()),
            device_ptrs: Mutex::new(self.device_ptrs()),
            uniform_work_groups: self.uniform_work_groups,
        }
    }

    /// The compiler's description of this kernel.
    pub fn info(&self) -> &KernelInfo {
        &self.compiled.kernels[self.index]
    }

    /// clSetKernelArg with the value already decoded. Errors: `CL_INVALID_ARG_INDEX`.
    pub fn set_arg(&self, index: usize, value: ArgValue) -> ClResult<()> {
        let mut args = self.args.lock().unwrap_or_else(|e| e.into_inner());
        *args.get_mut(index).ok_or(ClError(CL_INVALID_ARG_INDEX))? = Some(value);
        Ok(())
    }

    /// The current `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT` list.
    pub fn device_ptrs(&self) -> Vec<u64> {
        self.device_ptrs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// clSetKernelExecInfo(`CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`): replaces the list.
    pub fn set_device_ptrs(&self, ptrs: Vec<u64>) {
        *self.device_ptrs.lock().unwrap_or_else(|e| e.into_inner()) = ptrs;
    }

    /// `CL_KERNEL_WORK_GROUP_SIZE` on `device`.
    pub fn max_work_group_size(&self, device: &Device) -> usize {
        match self.info().reqd_work_group_size {
            Some(r) => r.iter().map(|&v| v as usize).product(),
            None => device.max_work_group_size(),
        }
    }

    /// Whether every argument has a value (`clSetKernelArg` was called for each index).
    pub fn args_set(&self) -> bool {
        let args = self.args.lock().unwrap_or_else(|e| e.into_inner());
        args.iter().all(Option::is_some)
    }

    /// `CL_KERNEL_LOCAL_MEM_SIZE`: static `__local` data plus the sizes set for `__local`
    /// arguments, bytes.
    pub fn local_mem_size(&self) -> u64 {
        let args = self.args.lock().unwrap_or_else(|e| e.into_inner());
        let dynamic: usize = args
            .iter()
            .map(|a| {
                if let Some(ArgValue::Local(n)) = a {
                    *n
                } else {
                    0
                }
            })
            .sum();
        self.info().static_local_mem_bytes + dynamic as u64
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.program.kernel_count.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A checked NDRange: sizes per dimension (unused dimensions are 1, offsets 0).
#[derive(Debug, Clone, Copy)]
pub struct NdRange {
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    pub local: [u32; 3],
}

impl NdRange {
    /// Work-groups per dimension, counting a partial edge group (`ceil(global / local)`).
    pub fn groups(&self) -> [u64; 3] {
        std::array::from_fn(|d| self.global[d].div_ceil(u64::from(self.local[d].max(1))))
    }

    /// Whether every dimension's global size is a multiple of its local size.
    pub fn is_uniform(&self) -> bool {
        (0..3).all(|d| self.global[d].is_multiple_of(u64::from(self.local[d].max(1))))
    }

    /// The boxes of work-groups that share a work-group size (section 3.2.2, non-uniform
    /// work-groups): per dimension the uniform part (`global / local` groups of the enqueued
    /// size, starting at group 0) and the edge (one group of `global % local` items, after
    /// them). Up to `2^3` boxes, none empty; as (group size, first group, groups). A uniform
    /// range is one box.
    pub fn boxes(&self) -> Vec<([u32; 3], [u64; 3], [u64; 3])> {
        let mut out = Vec::new();
        for mask in 0..8u32 {
            let mut size = [1u32; 3];
            let mut first = [0u64; 3];
            let mut count = [0u64; 3];
            for d in 0..3 {
                let l = u64::from(self.local[d].max(1));
                if mask & (1 << d) != 0 {
                    first[d] = self.global[d] / l;
                    count[d] = u64::from(!self.global[d].is_multiple_of(l));
                    size[d] = (self.global[d] % l) as u32;
                } else {
                    count[d] = self.global[d] / l;
                    size[d] = l as u32;
                }
            }
            if count.iter().all(|&c| c > 0) {
                out.push((size, first, count));
            }
        }
        out
    }
}

/// Picks a work-group size for a NULL `local_work_size`: per dimension the largest divisor of
/// the global size that keeps the product within `max` and each size within `max_sizes`,
/// filling dimension 0 first (consecutive work-items in one group).
pub fn pick_local_size(
    global: [u64; 3],
    work_dim: u32,
    max: usize,
    max_sizes: [usize; 3],
) -> [u32; 3] {
    let mut local = [1u32; 3];
    let mut budget = max.max(1) as u64;
    for d in 0..work_dim as usize {
        let cap = budget.min(max_sizes[d] as u64).min(global[d]).max(1);
        let best = (1..=cap)
            .rev()
            .find(|l| global[d].is_multiple_of(*l))
            .unwrap_or(1);
        local[d] = best as u32;
        budget /= best;
    }
    local
}

/// Checks an NDRange against the device and kernel and picks a local size when none is given.
/// Errors: `CL_INVALID_WORK_DIMENSION`, `CL_INVALID_GLOBAL_WORK_SIZE`,
/// `CL_INVALID_GLOBAL_OFFSET`, `CL_INVALID_WORK_ITEM_SIZE`, `CL_INVALID_WORK_GROUP_SIZE`.
pub fn check_range(
    k: &Kernel,
    d: &Device,
    work_dim: cl_uint,
    offset: Option<&[usize]>,
    global: Option<&[usize]>,
    local: Option<&[usize]>,
) -> ClResult<NdRange> {
    if !(1..=3).contains(&work_dim) {
        return Err(ClError(CL_INVALID_WORK_DIMENSION));
    }
    let n = work_dim as usize;
    let mut r = NdRange {
        work_dim,
        offset: [0; 3],
        global: [1; 3],
        local: [1; 3],
    };
    // Since OpenCL 2.1 a NULL global_work_size (like a zero in it) is an empty NDRange: the
    // command runs nothing and completes (CL_INVALID_GLOBAL_WORK_SIZE for it is deprecated).
    let Some(global) = global else {
        r.global = [0; 3];
        return Ok(r);
    };
    for i in 0..n {
        r.global[i] = global[i] as u64;
        r.offset[i] = offset.map_or(0, |o| o[i] as u64);
        // CL_INVALID_GLOBAL_OFFSET if global_work_offset + global_work_size overflows size_t.
        if r.offset[i].checked_add(r.global[i]).is_none() {
            return Err(ClError(CL_INVALID_GLOBAL_OFFSET));
        }
    }
    let reqd = k.info().reqd_work_group_size;
    match local {
        Some(l) => {
            let max_sizes = d.max_work_item_sizes();
            for i in 0..n {
                // CL_INVALID_WORK_ITEM_SIZE if a local size exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES.
                if l[i] > max_sizes[i] {
                    return Err(ClError(CL_INVALID_WORK_ITEM_SIZE));
                }
                // CL_INVALID_WORK_GROUP_SIZE if a local size is 0.
                if l[i] == 0 {
                    return Err(ClError(CL_INVALID_WORK_GROUP_SIZE));
                }
                // CL_INVALID_WORK_GROUP_SIZE if the work-group size must be uniform (built
                // with -cl-uniform-work-group-size, or from source without -cl-std=CL2.0 or
                // CL3.0) and the global size is not evenly divisible by the local size
                // (otherwise non-uniform work-groups run the remainder).
                if k.uniform_work_groups
                    && r.global[i] != 0
                    && !r.global[i].is_multiple_of(l[i] as u64)
                {
                    return Err(ClError(CL_INVALID_WORK_GROUP_SIZE));
                }
                r.local[i] = l[i] as u32;
            }
            let total: usize = l[..n].iter().product();
            if total > k.max_work_group_size(d) {
                return Err(ClError(CL_INVALID_WORK_GROUP_SIZE));
            }
            if let Some(req) = reqd {
                if (0..3).any(|i| r.local[i] != req[i]) {
                    return Err(ClError(CL_INVALID_WORK_GROUP_SIZE));
                }
            }
        }
        None => {
            if let Some(req) = reqd {
                // CL_INVALID_WORK_GROUP_SIZE if the work-group size must be uniform and the
                // global size is not evenly divisible by the required work-group size.
                if k.uniform_work_groups
                    && (0..n).any(|i| !r.global[i].is_multiple_of(req[i] as u64))
                {
                    return Err(ClError(CL_INVALID_WORK_GROUP_SIZE));
                }
                r.local = req;
            } else {
                r.local = pick_local_size(
                    r.global,
                    work_dim,
                    k.max_work_group_size(d).min(256),
                    d.max_work_item_sizes(),
                );
            }
        }
    }
    if r.global.contains(&0) {
        return Ok(r);
    }
    // Each dimension's group count must fit the launch header's 32-bit fields.
    if r.groups().iter().any(|&g| g > u32::MAX as u64) {
        return Err(ClError(CL_INVALID_GLOBAL_WORK_SIZE));
    }
    Ok(r)
}

/// A launch encoded for device memory: the launch header (group counts at
/// [`GROUPS_OFFSET`], in the layout of `VkDispatchIndirectCommand`), the argument block, the
/// pipeline and what the arguments reference.
pub struct Encoded {
    /// Launch header, [`ARGS_OFFSET`] bytes (the kernel ABI's 96 bytes, zero-padded).
    pub header: [u8; ARGS_OFFSET],
    /// Argument block, `KernelInfo::args_size` bytes.
    pub block: Vec<u8>,
    /// The boxes of groups to dispatch, each with its own pipeline (one for a uniform range).
    pub regions: Vec<Region>,
    /// Work-groups per dimension of the whole NDRange (edge groups counted).
    pub groups: [u64; 3],
    /// On a sub-device whose launch has more groups than it may keep resident: that limit
    /// ([`resident_group_limit`]); None otherwise.
    pub limited: Option<u64>,
    /// Whether `pipeline` is the persistent variant (its `limited` groups loop over all).
    pub persistent: bool,
    /// For a kernel that calls printf: its printf buffer (`used` 0), whose address is in the
    /// header.
    pub printf: Option<Arc<PrintfBuffer>>,
    /// The kernel, its buffers and images, and the pipeline.
    pub keep: Vec<Arc<dyn Any + Send + Sync>>,
    /// The pushed descriptors of its image arguments (binding = argument index).
    pub descriptors: Vec<Descriptor>,
    /// With `VKCL_BOUNDS_CHECK`: the offset in `block` of the range-table entry that
    /// [`write_to`](Self::write_to) fills with the launch buffer's own range.
    pub bounds_self: Option<usize>,
}

/// Offset of `num_groups` (`u32[3]`) in the launch header, bytes: also the offset of a
/// `VkDispatchIndirectCommand` for `vkCmdDispatchIndirect`.
pub const GROUPS_OFFSET: u64 = 68;

/// Offset of the printf buffer address (`u64`) in the launch header, bytes.
const PRINTF_OFFSET: usize = 80;

/// Offset of the program's global variable block address (`u64`) in the launch header, bytes.
const GLOBALS_OFFSET: usize = 88;

impl Encoded {
    /// The pipeline of a launch that is one box starting at group 0 (a uniform NDRange,
    /// which one indirect dispatch of the header's group counts can run); None otherwise.
    pub fn single_pipeline(&self) -> Option<&Arc<Pipeline>> {
        single_region(&self.regions)
    }

    /// Size of the launch buffer this encoding needs, bytes.
    pub fn size(&self) -> usize {
        ARGS_OFFSET + self.block.len().max(8)
    }

    /// Writes header and argument block to `buf` (mapped, at least [`size`](Self::size)
    /// bytes) from the host. The caller makes sure no device work reads `buf` meanwhile.
    pub fn write_to(&self, buf: &Buffer) {
        // SAFETY: the buffer is mapped and holds ARGS_OFFSET + block.len() bytes (callers
        // allocate `size()`); no device work reads it during the write (caller's contract).
        unsafe {
            std::ptr::copy_nonoverlapping(self.header.as_ptr(), buf.mapped(), ARGS_OFFSET);
            std::ptr::copy_nonoverlapping(
                self.block.as_ptr(),
                buf.mapped().add(ARGS_OFFSET),
                self.block.len(),
            );
        }
        if let Some(at) = self.bounds_self {
            let entry = [buf.address, buf.address + self.size() as u64];
            for (k, v) in entry.iter().enumerate() {
                // SAFETY: `at + 16 <= block.len()` (encode), within the mapped buffer.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        v.to_le_bytes().as_ptr(),
                        buf.mapped().add(ARGS_OFFSET + at + 8 * k),
                        8,
                    );
                }
            }
        }
    }

    /// A new launch buffer holding this encoding. Errors: `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
    pub fn to_buffer(&self, device: &Device) -> ClResult<Buffer> {
        let buf = Buffer::new(device.vk()?, self.size() as u64)
            .map_err(|e| allocation_failed("launch buffer", e))?;
        self.write_to(&buf);
        Ok(buf)
    }
}

/// The pipeline of `regions` when they are one box starting at group 0; None otherwise.
pub fn single_region(regions: &[Region]) -> Option<&Arc<Pipeline>> {
    match regions {
        [r] if r.first == [0; 3] => Some(&r.pipeline),
        _ => None,
    }
}

/// The most work-groups a launch on `device` may have resident: None for a root device and
/// for a sub-device that has all of its root's compute units (no limit); for a sub-device
/// its compute units x the groups one unit keeps resident
/// ([`Device::groups_per_unit`]), within `maxComputeWorkGroupCount[0]` (the persistent
/// variant is launched as a 1-D grid). A launch with more groups than that is limited by the
/// device's [`LimitedDispatch`]: the persistent variant, or waves of at most this many groups.
pub fn resident_group_limit(device: &Device, local: [u32; 3]) -> Option<u64> {
    if !device.is_sub_device() || device.compute_units >= device.root().compute_units {
        return None;
    }
    let per_unit = device.groups_per_unit(local.iter().product());
    let max_x = u64::from(device.phys.limits.max_compute_work_group_count[0]);
    Some((u64::from(device.compute_units) * u64::from(per_unit)).clamp(1, max_x))
}

impl Kernel {
    /// Encodes a launch of this kernel over `range` on `device` with argument values `args`
    /// and `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT` list `device_ptrs` (the kernel's own, or
    /// those a command buffer captured): checks the arguments, builds the launch header and
    /// argument block, gets the pipeline. The buffers that raw device addresses point into
    /// (device-pointer arguments, `device_ptrs`) are kept alive with the launch and, under
    /// `VKCL_BOUNDS_CHECK`, admitted whole (core/device_address.rs).
    /// Errors: `CL_INVALID_KERNEL_ARGS` (an argument not set, or a buffer released since),
    /// `CL_OUT_OF_RESOURCES` (local memory over the device's, pipeline creation).
    pub fn encode(
        self: &Arc<Self>,
        device: &Arc<Device>,
        range: NdRange,
        args: &[Option<ArgValue>],
        device_ptrs: &[u64],
    ) -> ClResult<Encoded> {
        let info = self.info();
        let mut keep: Vec<Arc<dyn Any + Send + Sync>> = vec![self.clone()];
        let mut block = vec![0u8; info.args_size as usize];
        let mut locals = Vec::new();
        let mut local_bytes = info.static_local_mem_bytes;
        // VKCL_BOUNDS_CHECK: [base, end) of every buffer argument, in argument order.
        let mut ranges: Vec<[u64; 2]> = Vec::new();
        let mut descriptors = Vec::new();
        // Raw device addresses: the buffer each points into is kept alive with the launch,
        // and its whole range is a bounds-check entry ([0, 0) where it points into none).
        let addresses = &self.program.context.device_addresses;
        let reach =
            |addr: u64, keep: &mut Vec<Arc<dyn Any + Send + Sync>>| match addresses.find(addr) {
                Some(r) => {
                    keep.push(r.storage);
                    r.range
                }
                None => [0, 0],
            };
        let sampled_formats = read_only_formats(info, args);
        if info.args.iter().any(|a| a.kind == ArgKind::Image) {
            descriptors.extend(inline_sampler_descriptors(device, info, &sampled_formats)?);
        }
        for (a, v) in info.args.iter().zip(args.iter()) {
            // CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified.
            let v = v.as_ref().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
            let at = a.offset as usize;
            match (a.kind, v) {
                (ArgKind::Buffer, ArgValue::Buffer(m)) => {
                    // CL_INVALID_KERNEL_ARGS if a buffer argument was released since it was set.
                    let m = match m {
                        Some(w) => Some(w.upgrade().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?),
                        None => None,
                    };
                    let addr = m.as_ref().map_or(0, |m| m.device_address());
                    block[at..at + 8].copy_from_slice(&addr.to_le_bytes());
                    // A buffer with a device address is reachable whole through it (its
                    // sub-buffers too: the extension's pointers may leave their region).
                    let whole = m
                        .as_ref()
                        .filter(|m| m.addressable)
                        .and_then(|_| addresses.find(addr));
                    ranges.push(match (&m, whole) {
                        (_, Some(w)) => w.range,
                        (Some(m), None) => [addr, addr + m.size as u64],
                        (None, None) => [0, 0],
                    });
                    if let Some(m) = m {
                        keep.push(m);
                    }
                }
                (ArgKind::Buffer, ArgValue::DevicePointer(addr)) => {
                    block[at..at + 8].copy_from_slice(&addr.to_le_bytes());
                    ranges.push(reach(*addr, &mut keep));
                }
                (ArgKind::Local { spec_id, elem_size }, ArgValue::Local(n)) => {
                    let count = n.div_ceil(elem_size.max(1) as usize) as u32;
                    locals.push((spec_id, count.max(1)));
                    local_bytes += *n as u64;
                }
                (ArgKind::Value, ArgValue::Bytes(b)) => {
                    let n = b.len().min(block.len().saturating_sub(at));
                    block[at..at + n].copy_from_slice(&b[..n]);
                }
                (ArgKind::Sampler, ArgValue::Sampler(smp)) => {
                    let index = info
                        .args
                        .iter()
                        .position(|x| std::ptr::eq(x, a))
                        .unwrap_or(0) as u32;
                    let d = encode_sampler(
                        device,
                        index,
                        a,
                        smp,
                        &sampled_formats,
                        &mut block[at..at + 8],
                    )?;
                    descriptors.push(d);
                    keep.push(smp.clone());
                }
                (ArgKind::Image, ArgValue::Image(w)) => {
                    // CL_INVALID_KERNEL_ARGS if the image was released since it was set.
                    let m = w.upgrade().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
                    let index = info
                        .args
                        .iter()
                        .position(|x| std::ptr::eq(x, a))
                        .unwrap_or(0) as u32;
                    descriptors.push(encode_image(index, a, &m, &mut block[at..at + 24])?);
                    keep.push(m);
                }
                _ => return Err(ClError(CL_INVALID_KERNEL_ARGS)),
            }
        }
        if local_bytes > device.local_mem_size() {
            return Err(ClError(CL_OUT_OF_RESOURCES));
        }
        // CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT: the buffers reached through pointers in memory.
        let indirect: Vec<[u64; 2]> = device_ptrs.iter().map(|&a| reach(a, &mut keep)).collect();
        // Bounds-check table entries: arguments, launch buffer, printf, globals, indirect.
        let table_entries = (ranges.len() + 3 + indirect.len()) as u32;
        let groups = range.groups();
        let total: u64 = groups.iter().product();
        let limited = resident_group_limit(device, range.local).filter(|&l| total > l);
        // The persistent variant loops over groups of one size: non-uniform ranges go in waves.
        // llvmpipe ends a shader invocation after 65535 loop iterations in total, so there a
        // launch whose groups would need more turns of the group loop goes in waves too
        // (VKCL_SUBDEVICE_DISPATCH=persistent on lavapipe would otherwise lose work).
        let loop_fits = |l: u64| {
            device.phys.driver_id != ash::vk::DriverId::MESA_LLVMPIPE || total.div_ceil(l) < 65535
        };
        let persistent = limited.is_some_and(loop_fits)
            && range.is_uniform()
            && device.limited_dispatch() == LimitedDispatch::Persistent;
        let mut regions = Vec::new();
        let max = device.phys.limits.max_compute_work_group_count;
        for (size, first, count) in range.boxes() {
            // A box dispatched whole from group 0 (not split over dispatches, not in waves)
            // pushes group_offset 0 (backend::vulkan::record).
            let unsplit = (0..3).all(|d| count[d] <= u64::from(max[d]));
            let launch = LaunchSpec {
                local: size,
                enqueued: range.local,
                zero_offset: range.offset == [0; 3],
                zero_group_offset: first == [0; 3] && unsplit && limited.is_none(),
            };
            let pipeline = self.program.pipeline(
                device,
                info,
                launch,
                locals.clone(),
                persistent,
                table_entries,
            )?;
            keep.push(pipeline.clone());
            regions.push(Region {
                pipeline,
                first,
                groups: count,
            });
        }

        let mut header = [0u8; ARGS_OFFSET];
        header[0..4].copy_from_slice(&range.work_dim.to_le_bytes());
        for d in 0..3 {
            header[8 + 8 * d..16 + 8 * d].copy_from_slice(&range.offset[d].to_le_bytes());
            header[32 + 8 * d..40 + 8 * d].copy_from_slice(&range.global[d].to_le_bytes());
            header[56 + 4 * d..60 + 4 * d].copy_from_slice(&range.local[d].to_le_bytes());
            header[68 + 4 * d..72 + 4 * d]
                .copy_from_slice(&(groups[d].min(u32::MAX as u64) as u32).to_le_bytes());
        }
        // The program's __global variables (compiler::globals): their block's address.
        if let Some(g) = self.program.global_block(device, &self.compiled)? {
            header[GLOBALS_OFFSET..GLOBALS_OFFSET + 8].copy_from_slice(&g.address.to_le_bytes());
            keep.push(g);
        }
        let mut globals_range = [0u64, 0];
        if let Some(g) = self.program.global_block(device, &self.compiled)? {
            globals_range = [g.address, g.address + g.size];
        }
        let printf = if info.printf.is_used() {
            let p = Arc::new(PrintfBuffer::new(device, &info.printf)?);
            header[PRINTF_OFFSET..PRINTF_OFFSET + 8].copy_from_slice(&p.address().to_le_bytes());
            keep.push(p.clone());
            Some(p)
        } else {
            None
        };
        let mut bounds_self = None;
        if crate::util::config::config().bounds_check {
            // Range table after the argument block, then a 256-byte sink (256-aligned).
            let table = block.len().div_ceil(16) * 16;
            bounds_self = Some(table + 16 * ranges.len());
            ranges.push([0, 0]);
            ranges.push(
                printf
                    .as_ref()
                    .map_or([0, 0], |p| [p.address(), p.address() + p.buf.size]),
            );
            ranges.push(globals_range);
            ranges.extend(indirect);
            let sink = (ARGS_OFFSET + table + 16 * ranges.len()).div_ceil(256) * 256 - ARGS_OFFSET;
            block.resize(sink + 256, 0);
            for (k, r) in ranges.iter().enumerate() {
                block[table + 16 * k..table + 16 * k + 8].copy_from_slice(&r[0].to_le_bytes());
                block[table + 16 * k + 8..table + 16 * k + 16].copy_from_slice(&r[1].to_le_bytes());
            }
            let [_, _, t, s] = crate::compiler::BOUNDS_OFFSETS.map(|o| o as usize);
            header[t..t + 8].copy_from_slice(&((ARGS_OFFSET + table) as u64).to_le_bytes());
            header[s..s + 8].copy_from_slice(&((ARGS_OFFSET + sink) as u64).to_le_bytes());
        }
        Ok(Encoded {
            descriptors,
            bounds_self,
            printf,
            header,
            block,
            regions,
            groups,
            limited,
            persistent,
            keep,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::pick_local_size;

    #[test]
    fn local_size_divides_global() {
        assert_eq!(
            pick_local_size([1024, 1, 1], 1, 256, [256, 256, 64]),
            [256, 1, 1]
        );
        assert_eq!(
            pick_local_size([1000, 1, 1], 1, 256, [256, 256, 64]),
            [250, 1, 1]
        );
        assert_eq!(pick_local_size([97, 1, 1], 1, 64, [64, 64, 64]), [1, 1, 1]);
        let l = pick_local_size([64, 48, 1], 2, 256, [256, 256, 64]);
        assert!(64 % l[0] == 0 && 48 % l[1] == 0 && l[0] * l[1] <= 256);
    }
}
