//! Staged host access to buffers (issue 19): where a buffer's memory is not host-cached
//! (device-local memory behind the PCI BAR, which the CPU reads at tens of MB/s) or
//! `VKCL_STAGED_READS=1` asks for it ([`Mem::staged`]), reads, rectangular reads and writes,
//! and maps move the data between the storage and a pooled host-cached staging buffer
//! (`backend::vulkan::staging`) with the device's copy engine (`vkCmdCopyBuffer`); the CPU
//! only touches cached memory.
//!
//! Each function here turns one checked command into a [`Staged`] plan, which
//! [`crate::core::queue::CommandQueue::enqueue_command`] enqueues: device copies whose
//! completion hook copies out of the staging buffer (reads, maps), or host rows copied into
//! the staging buffer first and the device copy after them (writes, unmaps of write maps of
//! `CL_MEM_USE_HOST_PTR` buffers). OpenCL 3.0 sections 5.2.2 (reads and writes, blocking and
//! not), 5.2.3 (rectangles) and 5.5.2 (maps; the pointer of a `CL_MEM_USE_HOST_PTR` buffer's
//! map is `host_ptr + offset`, and the host sees the data there).

use super::command::Keep;
use super::error::{refused, ClResult};
use super::memory::{Mapping, Mem};
use super::rect::{copy_regions, Side};
use super::UserPtr;
use crate::backend::vulkan::record::DeviceCommand;
use crate::backend::vulkan::staging::Staging;
use crate::util::host_copy::copy;
use opencl_sys::*;
use std::sync::Arc;

/// Host work of a staged command: runs on the queue's worker (before the device part) or on
/// its completion thread (after it, before the event completes); returns `CL_SUCCESS`.
pub type HostPart = Box<dyn FnOnce() -> cl_int + Send>;

/// How a staged command runs.
pub enum Staged {
    /// Device copies, then (once they completed successfully, before the command's event
    /// completes) `after` on the host.
    CopyOut {
        device: Vec<DeviceCommand>,
        after: Option<HostPart>,
        keep: Keep,
    },
    /// `before` on the host in queue order, then the device copies (two jobs; the command's
    /// event is the second's, which fails with the first).
    CopyIn {
        before: Option<HostPart>,
        device: Vec<DeviceCommand>,
        keep: Keep,
    },
}

/// A pooled staging buffer of `size` bytes for a command of `mem`.
/// Errors: `CL_OUT_OF_RESOURCES` (logged) when it cannot be allocated.
fn lease(mem: &Mem, size: usize, what: &str) -> ClResult<Arc<Staging>> {
    Staging::lease(mem.storage().device(), size as u64)
        .map(Arc::new)
        .map_err(|e| refused(format_args!("staging of a {what} of {size} bytes"), e))
}

/// clEnqueueReadBuffer of `size` (> 0) bytes at `offset` of `mem` into host `ptr`: the range
/// copied into staging on the device, then out to `ptr`.
/// Errors: `CL_OUT_OF_RESOURCES` when no staging buffer can be had.
pub fn read(mem: &Arc<Mem>, offset: usize, size: usize, ptr: UserPtr) -> ClResult<Staged> {
    let staging = lease(mem, size, "read")?;
    let device = vec![DeviceCommand::Copy {
        src: mem.storage().clone(),
        dst: staging.buffer().clone(),
        regions: vec![((mem.offset + offset) as u64, 0, size as u64)],
    }];
    let src = UserPtr(staging.mapped() as *mut std::ffi::c_void);
    let after: HostPart = Box::new(move || {
        // SAFETY: the staging buffer holds `size` bytes; the application keeps `ptr` valid
        // for `size` bytes until the read completes.
        unsafe { copy(src.get() as *const u8, ptr.get() as *mut u8, size) };
        CL_SUCCESS
    });
    Ok(Staged::CopyOut {
        device,
        after: Some(after),
        keep: vec![staging],
    })
}

/// clEnqueueReadBufferRect (`write` false) and clEnqueueWriteBufferRect: the rows of `region`
/// (`buffer` side in `mem`, `host` side at `ptr`) packed in a staging buffer, which the device
/// fills from or drains into the buffer rows (rows continuing each other merged into one copy
/// region). Errors: `CL_OUT_OF_RESOURCES` when no staging buffer can be had.
pub fn rect(
    mem: &Arc<Mem>,
    write: bool,
    buffer: Side,
    host: Side,
    region: [usize; 3],
    ptr: UserPtr,
) -> ClResult<Staged> {
    let row = region[0];
    let bytes = row * region[1] * region[2];
    let staging = lease(mem, bytes, "rectangular transfer")?;
    let at = mem.offset;
    let packed = (0..region[1] * region[2]).map(move |i| i * row);
    let on_buffer = buffer.rows(region).map(move |o| o + at);
    let device = if write {
        vec![DeviceCommand::Copy {
            src: staging.buffer().clone(),
            dst: mem.storage().clone(),
            regions: copy_regions(packed, on_buffer, row),
        }]
    } else {
        vec![DeviceCommand::Copy {
            src: mem.storage().clone(),
            dst: staging.buffer().clone(),
            regions: copy_regions(on_buffer, packed, row),
        }]
    };
    let st = UserPtr(staging.mapped() as *mut std::ffi::c_void);
    let rows: HostPart = Box::new(move || {
        let (st, hp) = (st.get() as *mut u8, ptr.get() as *mut u8);
        for (i, ho) in host.rows(region).enumerate() {
            let (s, h) = (st.wrapping_add(i * row), hp.wrapping_add(ho));
            let (from, to) = if write { (h, s) } else { (s, h) };
            // SAFETY: the staging buffer holds the rows packed; the application keeps `ptr`
            // valid for the host rectangle until the command completes.
            unsafe { copy(from as *const u8, to, row) };
        }
        CL_SUCCESS
    });
    let keep: Keep = vec![staging];
    Ok(if write {
        Staged::CopyIn {
            before: Some(rows),
            device,
            keep,
        }
    } else {
        Staged::CopyOut {
            device,
            after: Some(rows),
            keep,
        }
    })
}

/// clEnqueueMapBuffer of a staged buffer: the region copied into the map's staging buffer
/// when `copy_in` (not for `CL_MAP_WRITE_INVALIDATE_REGION`), and for `CL_MEM_USE_HOST_PTR`
/// buffers on to the map's pointer `ptr` (`host_ptr + offset`) once that completed.
pub fn map(
    mem: &Arc<Mem>,
    offset: usize,
    size: usize,
    ptr: UserPtr,
    copy_in: bool,
    staging: Arc<Staging>,
) -> Staged {
    let keep: Keep = vec![staging.clone()];
    if !copy_in {
        return Staged::CopyOut {
            device: Vec::new(),
            after: None,
            keep,
        };
    }
    let device = vec![DeviceCommand::Copy {
        src: mem.storage().clone(),
        dst: staging.buffer().clone(),
        regions: vec![((mem.offset + offset) as u64, 0, size as u64)],
    }];
    let after = (mem.flags & CL_MEM_USE_HOST_PTR != 0).then(|| {
        let src = UserPtr(staging.mapped() as *mut std::ffi::c_void);
        Box::new(move || {
            // SAFETY: the staging buffer holds the region; host_ptr holds the buffer
            // (clCreateBuffer), and `ptr` is host_ptr + offset of a region in bounds.
            unsafe { copy(src.get() as *const u8, ptr.get() as *mut u8, size) };
            CL_SUCCESS
        }) as HostPart
    });
    Staged::CopyOut {
        device,
        after,
        keep,
    }
}

/// clEnqueueUnmapMemObject of a staged write map (`mapping.staging` set): for
/// `CL_MEM_USE_HOST_PTR` buffers the region first from `host_ptr + offset` into the staging
/// buffer, then the staging buffer into the storage on the device. None for other mappings.
pub fn unmap(mem: &Arc<Mem>, mapping: &Mapping) -> Option<Staged> {
    let staging = mapping.staging.clone()?;
    let size = mapping.size;
    let device = vec![DeviceCommand::Copy {
        src: staging.buffer().clone(),
        dst: mem.storage().clone(),
        regions: vec![(0, (mem.offset + mapping.offset) as u64, size as u64)],
    }];
    let before = (mem.flags & CL_MEM_USE_HOST_PTR != 0).then(|| {
        let (from, to) = (
            mapping.ptr,
            UserPtr(staging.mapped() as *mut std::ffi::c_void),
        );
        Box::new(move || {
            // SAFETY: as for the map, in the other direction.
            unsafe { copy(from.get() as *const u8, to.get() as *mut u8, size) };
            CL_SUCCESS
        }) as HostPart
    });
    Some(Staged::CopyIn {
        before,
        device,
        keep: vec![staging],
    })
}

/// clEnqueueWriteBuffer of `size` (> 0) bytes from host `ptr` to `offset` of `mem` whose
/// storage the host does not map ([`Mem::host_writes`] false): the bytes copied into staging
/// in queue order, then into the storage on the device.
/// Errors: `CL_OUT_OF_RESOURCES` when no staging buffer can be had.
pub fn write(mem: &Arc<Mem>, offset: usize, size: usize, ptr: UserPtr) -> ClResult<Staged> {
    let staging = lease(mem, size, "write")?;
    let device = vec![DeviceCommand::Copy {
        src: staging.buffer().clone(),
        dst: mem.storage().clone(),
        regions: vec![(0, (mem.offset + offset) as u64, size as u64)],
    }];
    let to = UserPtr(staging.mapped() as *mut std::ffi::c_void);
    let before: HostPart = Box::new(move || {
        // SAFETY: the application keeps `ptr` valid for `size` bytes until the write
        // completes; the staging buffer holds `size` bytes.
        unsafe { copy(ptr.get() as *const u8, to.get() as *mut u8, size) };
        CL_SUCCESS
    });
    Ok(Staged::CopyIn {
        before: Some(before),
        device,
        keep: vec![staging],
    })
}

/// clEnqueueFillBuffer of the byte pattern `pattern` over `[offset, offset + size)` (size > 0,
/// a multiple of the pattern's length) of `mem` whose storage the host does not map: the
/// pattern repeated in staging, then copied into the storage on the device.
/// Errors: `CL_OUT_OF_RESOURCES` when no staging buffer can be had.
pub fn fill(mem: &Arc<Mem>, offset: usize, size: usize, pattern: Vec<u8>) -> ClResult<Staged> {
    let staging = lease(mem, size, "fill")?;
    let device = vec![DeviceCommand::Copy {
        src: staging.buffer().clone(),
        dst: mem.storage().clone(),
        regions: vec![(0, (mem.offset + offset) as u64, size as u64)],
    }];
    let to = UserPtr(staging.mapped() as *mut std::ffi::c_void);
    let before: HostPart = Box::new(move || {
        // SAFETY: the staging buffer holds at least `size` bytes and nothing else uses it.
        let d = unsafe { std::slice::from_raw_parts_mut(to.get() as *mut u8, size) };
        for c in d.chunks_mut(pattern.len().max(1)) {
            c.copy_from_slice(&pattern[..c.len()]);
        }
        CL_SUCCESS
    });
    Ok(Staged::CopyIn {
        before: Some(before),
        device,
        keep: vec![staging],
    })
}
