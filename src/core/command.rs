//! The commands of queues and command buffers (OpenCL 3.0 sections 5.2, 5.10, 5.11 and
//! `cl_khr_command_buffer`): one value per command, built and checked here, used alike by
//! `clEnqueue*` ([`crate::core::queue::CommandQueue::enqueue_command`]) and by command-buffer
//! recording ([`crate::core::command_buffer::CommandBuffer::record_command`]).
//!
//! The device part of a command is one [`DeviceCommand`] list ([`Command::device_commands`]),
//! which the queue's executor or the command buffer's finalize lowers through the back end's
//! one recording function; only what runs on the host (reads, writes, maps, byte-pattern fills
//! of an enqueued command) is the queue's own.

use super::error::{refused, ClError, ClResult};
use super::kernel::{Kernel, NdRange};
use super::launch::{prepare, Launch};
use super::memory::{Mapping, Mem};
use super::rect::{check_copy_rect, check_host_rect, HostRect, Side};
use super::transfer::{check_copy, check_fill, check_writable, in_bounds, FillPlan};
use super::UserPtr;
use crate::backend::vulkan::record::DeviceCommand;
use crate::backend::vulkan::staging::Staging;
use opencl_sys::*;
use std::any::Any;
use std::sync::Arc;

/// Objects a command keeps alive until it completes (or, recorded, as long as its command
/// buffer).
pub type Keep = Vec<Arc<dyn Any + Send + Sync>>;

pub(super) const MAP_FLAGS: cl_map_flags =
    CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
pub(super) const MAP_WRITES: cl_map_flags = CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;

/// One checked command. Offsets are bytes; `Copy`'s regions are (source, destination, size)
/// on the buffers' storage.
pub enum Command {
    /// clEnqueueReadBuffer: `size` bytes from `offset` of `mem` to host `ptr`.
    Read {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        ptr: UserPtr,
    },
    /// clEnqueueWriteBuffer: `size` bytes from host `ptr` to `offset` of `mem`.
    Write {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        ptr: UserPtr,
    },
    /// clEnqueueReadBufferRect (`write` false) and clEnqueueWriteBufferRect: the rows of
    /// `region` between the `buffer` side of `mem` and the `host` side at `ptr`.
    HostRect {
        mem: Arc<Mem>,
        write: bool,
        buffer: Side,
        host: Side,
        region: [usize; 3],
        ptr: UserPtr,
    },
    /// clEnqueueCopyBuffer, clCommandCopyBufferKHR (`rect` false) and their `Rect` forms.
    Copy {
        src: Arc<Mem>,
        dst: Arc<Mem>,
        regions: Vec<(u64, u64, u64)>,
        rect: bool,
    },
    /// clEnqueueFillBuffer, clCommandFillBufferKHR: `[offset, offset + size)` of `mem`.
    Fill {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        plan: FillPlan,
    },
    /// clEnqueueMapBuffer (the mapping already registered on `mem`): copies the region to
    /// the map's pointer when `copy_in` (a map that is not `CL_MAP_WRITE_INVALIDATE_REGION` of
    /// a `CL_MEM_USE_HOST_PTR` or staged buffer); through `staging` (a device copy, then for
    /// `CL_MEM_USE_HOST_PTR` a host copy on to `ptr`) when the buffer is staged.
    Map {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        ptr: UserPtr,
        copy_in: bool,
        staging: Option<Arc<Staging>>,
    },
    /// clEnqueueUnmapMemObject (the mapping already removed): copies the map's region back
    /// when `copy_out` (a write map of a `CL_MEM_USE_HOST_PTR` or staged buffer), through the
    /// mapping's staging buffer when it has one.
    Unmap {
        mem: Arc<Mem>,
        mapping: Mapping,
        copy_out: bool,
    },
    /// clEnqueueReadImage (`write` false) and clEnqueueWriteImage: the box `origin`,
    /// `region` of `image` and the host texels at `ptr`, whose y and z coordinates lie
    /// `strides` bytes apart (`core/image_command.rs`).
    HostImage {
        image: Arc<Mem>,
        write: bool,
        origin: [usize; 3],
        region: [usize; 3],
        strides: (usize, usize),
        ptr: UserPtr,
    },
    /// clEnqueueCopyImage, clEnqueueCopyImageToBuffer, clEnqueueCopyBufferToImage and
    /// clEnqueueFillImage: device commands made when the command was checked (with their
    /// staging buffers in `keep`), of command type `ty`.
    ImageDevice {
        ty: cl_command_type,
        device: Vec<DeviceCommand>,
        keep: Keep,
    },
    /// clEnqueueMapImage (the mapping already registered on `image`): the box copied into
    /// the map's staging buffer when `read` (and on to `host_ptr` for `CL_MEM_USE_HOST_PTR`).
    MapImage {
        image: Arc<Mem>,
        map: Arc<super::memory::ImageMap>,
        read: bool,
    },
    /// clEnqueueMigrateMemObjects: only orders (every buffer is where all its users reach it).
    Migrate(Vec<Arc<Mem>>),
    /// clEnqueueNDRangeKernel: a launch prepared (encoded, pipelines built) at enqueue.
    Launch(Launch),
    /// clEnqueueMarkerWithWaitList.
    Marker,
    /// clEnqueueBarrierWithWaitList, clEnqueueWaitForEvents, clCommandBarrierWithWaitListKHR.
    Barrier,
}

impl Command {
    /// A read. Errors: `CL_INVALID_VALUE` (region out of bounds, NULL `ptr`),
    /// `CL_INVALID_OPERATION` (buffer created with `CL_MEM_HOST_WRITE_ONLY` or
    /// `CL_MEM_HOST_NO_ACCESS`).
    pub fn read(mem: Arc<Mem>, offset: usize, size: usize, ptr: UserPtr) -> ClResult<Command> {
        in_bounds(offset, size, mem.size)?;
        // CL_INVALID_VALUE if ptr is a NULL value.
        if ptr.0.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // CL_INVALID_OPERATION if clEnqueueReadBuffer is called on buffer which has been
        // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS.
        if mem.flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        Ok(Command::Read {
            mem,
            offset,
            size,
            ptr,
        })
    }

    /// A write. Errors as [`read`](Self::read), with `CL_INVALID_OPERATION` for buffers
    /// created with `CL_MEM_HOST_READ_ONLY`, `CL_MEM_HOST_NO_ACCESS` or `CL_MEM_IMMUTABLE_EXT`.
    pub fn write(mem: Arc<Mem>, offset: usize, size: usize, ptr: UserPtr) -> ClResult<Command> {
        in_bounds(offset, size, mem.size)?;
        if ptr.0.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if mem.flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_OPERATION if buffer was created with CL_MEM_IMMUTABLE_EXT.
        check_writable(&mem)?;
        Ok(Command::Write {
            mem,
            offset,
            size,
            ptr,
        })
    }

    /// A rectangular read (`write` false) or write between `mem` and host `ptr` (not NULL:
    /// the api checked). Errors: those of [`check_host_rect`].
    pub fn host_rect(
        mem: Arc<Mem>,
        rect: &HostRect,
        write: bool,
        ptr: UserPtr,
    ) -> ClResult<Command> {
        let (buffer, host) = check_host_rect(&mem, rect, write)?;
        Ok(Command::HostRect {
            mem,
            write,
            buffer,
            host,
            region: rect.region,
            ptr,
        })
    }

    /// A buffer-to-buffer copy. Errors: those of [`check_copy`].
    pub fn copy(
        src: Arc<Mem>,
        dst: Arc<Mem>,
        src_offset: usize,
        dst_offset: usize,
        size: usize,
    ) -> ClResult<Command> {
        let (s, d) = check_copy(&src, &dst, src_offset, dst_offset, size)?;
        let regions = if size == 0 {
            Vec::new()
        } else {
            vec![(s, d, size as u64)]
        };
        Ok(Command::Copy {
            src,
            dst,
            regions,
            rect: false,
        })
    }

    /// A rectangular copy; `arrays` are the source origin, destination origin and region
    /// (each region element > 0), `pitches` the source row and slice, destination row and
    /// slice pitches. Errors: those of [`check_copy_rect`].
    pub fn copy_rect(
        src: Arc<Mem>,
        dst: Arc<Mem>,
        arrays: [[usize; 3]; 3],
        pitches: [usize; 4],
    ) -> ClResult<Command> {
        let regions = check_copy_rect(&src, &dst, arrays, pitches)?;
        Ok(Command::Copy {
            src,
            dst,
            regions,
            rect: true,
        })
    }

    /// A fill of `pattern` (its bytes). Errors: those of [`check_fill`].
    pub fn fill(mem: Arc<Mem>, pattern: &[u8], offset: usize, size: usize) -> ClResult<Command> {
        let plan = check_fill(&mem, pattern, offset, size)?;
        Ok(Command::Fill {
            mem,
            offset,
            size,
            plan,
        })
    }

    /// A map of `[offset, offset + size)` of `mem` with `flags`: registers the mapping on
    /// `mem` and returns the command and the pointer handed out (the caller removes the
    /// mapping again if the enqueue fails). Errors: `CL_INVALID_VALUE` (region out of bounds,
    /// size 0, undefined flag bits, `CL_MAP_WRITE_INVALIDATE_REGION` with `CL_MAP_READ` or
    /// `CL_MAP_WRITE`); `CL_INVALID_OPERATION` (a read map of a buffer created with
    /// `CL_MEM_HOST_WRITE_ONLY` or `CL_MEM_HOST_NO_ACCESS`; a write map of one created with
    /// `CL_MEM_HOST_READ_ONLY`, `CL_MEM_HOST_NO_ACCESS` or `CL_MEM_IMMUTABLE_EXT`).
    pub fn map(
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        flags: cl_map_flags,
    ) -> ClResult<(Command, UserPtr)> {
        // CL_INVALID_VALUE if region being mapped given by (offset, size) is out of bounds or
        // if size is 0 or if values specified in map_flags are not valid.
        in_bounds(offset, size, mem.size)?;
        if size == 0
            || flags & !MAP_FLAGS != 0
            || (flags & CL_MAP_WRITE_INVALIDATE_REGION != 0
                && flags & (CL_MAP_READ | CL_MAP_WRITE) != 0)
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // CL_INVALID_OPERATION if buffer has been created with CL_MEM_HOST_WRITE_ONLY or
        // CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set in map_flags.
        if mem.flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) != 0
            && flags & CL_MAP_READ != 0
        {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_OPERATION if buffer has been created with CL_MEM_HOST_READ_ONLY or
        // CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION is set in
        // map_flags.
        if mem.flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) != 0
            && flags & MAP_WRITES != 0
        {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_OPERATION if buffer has been created with CL_MEM_IMMUTABLE_EXT and
        // CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION is set in map_flags.
        if flags & MAP_WRITES != 0 {
            check_writable(&mem)?;
        }
        let use_host = mem.flags & CL_MEM_USE_HOST_PTR != 0;
        // A staged buffer's map hands out (or, for CL_MEM_USE_HOST_PTR, goes through) a
        // host-cached staging buffer of its own, leased now so that the pointer is known.
        let staging = if mem.staged() {
            let s = Staging::lease(mem.storage().device(), size as u64)
                .map_err(|e| refused(format_args!("staging of a map of {size} bytes"), e))?;
            Some(Arc::new(s))
        } else {
            None
        };
        let ptr = match &staging {
            Some(s) if !use_host => UserPtr(s.mapped() as *mut std::ffi::c_void),
            _ => mem.map_pointer(offset),
        };
        let copy_in = (use_host || staging.is_some()) && flags != CL_MAP_WRITE_INVALIDATE_REGION;
        mem.add_mapping(Mapping {
            ptr,
            offset,
            size,
            flags,
            image: None,
            staging: staging.clone(),
        });
        let cmd = Command::Map {
            mem,
            offset,
            size,
            ptr,
            copy_in,
            staging,
        };
        Ok((cmd, ptr))
    }

    /// The unmap of the live map of `mem` at `mapped_ptr` (removed now).
    /// Errors: `CL_INVALID_VALUE` if `mapped_ptr` is not a live map of `mem`.
    pub fn unmap(mem: Arc<Mem>, mapped_ptr: UserPtr) -> ClResult<Command> {
        // CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by clEnqueueMapBuffer
        // or clEnqueueMapImage for memobj.
        let mapping = mem
            .take_mapping(mapped_ptr.0)
            .ok_or(ClError(CL_INVALID_VALUE))?;
        let writes = mapping.flags & MAP_WRITES != 0 || mapping.flags == 0;
        let copy_out =
            (mem.flags & CL_MEM_USE_HOST_PTR != 0 || mapping.staging.is_some()) && writes;
        Ok(Command::Unmap {
            mem,
            mapping,
            copy_out,
        })
    }

    /// A launch of `kernel` over the checked `range` on `device` with the kernel's current
    /// arguments (an empty range runs nothing). Errors: those of [`prepare`].
    pub fn launch(
        kernel: &Arc<Kernel>,
        device: &Arc<super::device::Device>,
        range: NdRange,
    ) -> ClResult<Command> {
        Ok(Command::Launch(prepare(kernel, device, range)?))
    }

    /// `CL_EVENT_COMMAND_TYPE` of the command's event.
    pub fn command_type(&self) -> cl_command_type {
        match self {
            Command::Read { .. } => CL_COMMAND_READ_BUFFER,
            Command::Write { .. } => CL_COMMAND_WRITE_BUFFER,
            Command::HostRect { write: false, .. } => CL_COMMAND_READ_BUFFER_RECT,
            Command::HostRect { write: true, .. } => CL_COMMAND_WRITE_BUFFER_RECT,
            Command::Copy { rect: false, .. } => CL_COMMAND_COPY_BUFFER,
            Command::Copy { rect: true, .. } => CL_COMMAND_COPY_BUFFER_RECT,
            Command::Fill { .. } => CL_COMMAND_FILL_BUFFER,
            Command::Map { .. } => CL_COMMAND_MAP_BUFFER,
            Command::MapImage { .. } => CL_COMMAND_MAP_IMAGE,
            Command::HostImage { write: false, .. } => CL_COMMAND_READ_IMAGE,
            Command::HostImage { write: true, .. } => CL_COMMAND_WRITE_IMAGE,
            Command::ImageDevice { ty, .. } => *ty,
            Command::Unmap { .. } => CL_COMMAND_UNMAP_MEM_OBJECT,
            Command::Migrate(_) => CL_COMMAND_MIGRATE_MEM_OBJECTS,
            Command::Launch(_) => CL_COMMAND_NDRANGE_KERNEL,
            Command::Marker => CL_COMMAND_MARKER,
            Command::Barrier => CL_COMMAND_BARRIER,
        }
    }

    /// The memory objects the command uses (kept alive while it runs).
    pub fn keep(&self) -> Keep {
        let one = |m: &Arc<Mem>| vec![m.clone() as Arc<dyn Any + Send + Sync>];
        match self {
            Command::Read { mem, .. }
            | Command::Write { mem, .. }
            | Command::HostRect { mem, .. }
            | Command::Fill { mem, .. }
            | Command::Map {
                mem, staging: None, ..
            }
            | Command::HostImage { image: mem, .. } => one(mem),
            Command::Map {
                mem,
                staging: Some(s),
                ..
            } => {
                let mut k = one(mem);
                k.push(s.clone());
                k
            }
            Command::Unmap { mem, mapping, .. } => {
                let mut k = one(mem);
                k.extend(
                    mapping
                        .staging
                        .clone()
                        .map(|s| s as Arc<dyn Any + Send + Sync>),
                );
                k
            }
            Command::MapImage { image, map, .. } => {
                let mut k = one(image);
                k.push(map.staging.clone());
                k
            }
            Command::ImageDevice { keep, .. } => keep.clone(),
            Command::Copy { src, dst, .. } => {
                let mut k = one(src);
                k.push(dst.clone());
                k
            }
            Command::Migrate(mems) => mems
                .iter()
                .map(|m| m.clone() as Arc<dyn Any + Send + Sync>)
                .collect(),
            Command::Launch(l) => l.keep.clone(),
            Command::Marker | Command::Barrier => Vec::new(),
        }
    }

    /// The command's device part, the same for a queue and a command buffer: a copy's
    /// `vkCmdCopyBuffer`, a word-pattern fill's `vkCmdFillBuffer`, a launch's dispatches.
    /// Empty for commands that run on the host or only order.
    pub fn device_commands(&self) -> Vec<DeviceCommand> {
        match self {
            Command::Copy {
                src, dst, regions, ..
            } if !regions.is_empty() => vec![DeviceCommand::Copy {
                src: src.storage().clone(),
                dst: dst.storage().clone(),
                regions: regions.clone(),
            }],
            Command::Fill {
                mem,
                plan: FillPlan::Words { offset, size, word },
                ..
            } => vec![DeviceCommand::Fill {
                dst: mem.storage().clone(),
                offset: *offset,
                size: *size,
                word: *word,
            }],
            Command::Launch(l) => l.device.iter().cloned().collect(),
            Command::ImageDevice { device, .. } => device.clone(),
            _ => Vec::new(),
        }
    }
}
