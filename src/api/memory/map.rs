//! Mapping and migration (OpenCL 3.0 sections 5.2.4, 5.5.2 and 5.4.6 (migration)):
//! clEnqueueMapBuffer, clEnqueueUnmapMemObject, clEnqueueMigrateMemObjects.
//!
//! Buffer storage is always host-mapped, so a map hands out the storage address and costs
//! nothing. `CL_MEM_USE_HOST_PTR` objects keep their data in a device copy: a map copies the
//! region to `host_ptr + offset` (unless the map invalidates it) and hands that out, and the
//! unmap of a map for writing copies it back.

use super::{command_args, finish_enqueue, in_bounds, keep};
use crate::api::event::{return_event, wait_list};
use crate::api::status;
use crate::backend::vulkan::queue::Work;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::{Mapping, Mem};
use crate::core::object::{lookup, lookup_list};
use crate::core::queue::CommandQueue;
use crate::core::UserPtr;
use opencl_sys::*;
use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

const MAP_FLAGS: cl_map_flags = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
const MAP_WRITES: cl_map_flags = CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;

/// A host copy of `size` bytes (the worker runs it in queue order).
fn host_copy(from: UserPtr, to: UserPtr, size: usize) -> Work {
    Work::Host(Box::new(move || {
        // SAFETY: `from` lies in the object's mapped storage or the application's host_ptr and
        // `to` in the other (bounds checked at enqueue); the two never overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(from.get() as *const u8, to.get() as *mut u8, size)
        };
        0
    }))
}

#[allow(clippy::too_many_arguments)]
fn map(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> ClResult<*mut c_void> {
    // SAFETY: the wait list holds `num` handles per the API.
    let (q, m, waits) = unsafe { command_args(queue, buffer, num, list) }?;
    // CL_INVALID_VALUE if region being mapped given by (offset, size) is out of bounds or if
    // size is 0 or if values specified in map_flags are not valid.
    in_bounds(offset, size, m.size)?;
    if size == 0
        || flags & !MAP_FLAGS != 0
        || (flags & CL_MAP_WRITE_INVALIDATE_REGION != 0
            && flags & (CL_MAP_READ | CL_MAP_WRITE) != 0)
    {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // CL_INVALID_OPERATION if buffer has been created with CL_MEM_HOST_WRITE_ONLY or
    // CL_MEM_HOST_NO_ACCESS and CL_MAP_READ is set in map_flags.
    if m.flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 && flags & CL_MAP_READ != 0 {
        return Err(ClError(CL_INVALID_OPERATION));
    }
    // CL_INVALID_OPERATION if buffer has been created with CL_MEM_HOST_READ_ONLY or
    // CL_MEM_HOST_NO_ACCESS and CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION is set in
    // map_flags.
    if m.flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) != 0 && flags & MAP_WRITES != 0 {
        return Err(ClError(CL_INVALID_OPERATION));
    }
    // CL_INVALID_OPERATION if buffer has been created with CL_MEM_IMMUTABLE_EXT and
    // CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION is set in map_flags.
    if flags & MAP_WRITES != 0 {
        super::check_writable(&m)?;
    }
    let ptr = m.map_pointer(offset);
    let work = if m.flags & CL_MEM_USE_HOST_PTR != 0 && flags != CL_MAP_WRITE_INVALIDATE_REGION {
        host_copy(
            UserPtr(m.mapped().wrapping_add(offset) as *mut c_void),
            ptr,
            size,
        )
    } else {
        Work::Nop
    };
    m.add_mapping(Mapping {
        ptr,
        offset,
        size,
        flags,
    });
    let ev = q.enqueue(CL_COMMAND_MAP_BUFFER, &waits, work, keep(&m));
    // SAFETY: `event` is NULL or valid per the API.
    if let Err(e) = unsafe { finish_enqueue(ev, blocking, event) } {
        m.take_mapping(ptr.get());
        return Err(e);
    }
    Ok(ptr.get())
}

/// clEnqueueMapBuffer: maps `[offset, offset + size)` of `buffer` for the host and returns its
/// address (`host_ptr + offset` for CL_MEM_USE_HOST_PTR buffers), valid until the matching
/// clEnqueueUnmapMemObject; `CL_MEM_MAP_COUNT` counts live maps. Errors (through
/// `errcode_ret`, NULL returned): those of the queue, buffer and wait list; `CL_INVALID_VALUE`
/// (region out of bounds, size 0, undefined flag bits, CL_MAP_WRITE_INVALIDATE_REGION with
/// CL_MAP_READ or CL_MAP_WRITE); `CL_INVALID_OPERATION` (CL_MAP_READ on a buffer created with
/// CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS; a write map on one created with
/// CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS or CL_MEM_IMMUTABLE_EXT);
/// `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` for a blocking map after a failed event.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueMapBuffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    crate::api::object(errcode_ret, || {
        map(
            queue, buffer, blocking, flags, offset, size, num, list, event,
        )
    })
}

/// clEnqueueUnmapMemObject: ends the map that returned `mapped_ptr`; for a write map of a
/// CL_MEM_USE_HOST_PTR buffer, the host region is copied back to the device copy. Errors:
/// those of the queue, object and wait list; `CL_INVALID_VALUE` if `mapped_ptr` is not a live
/// map of `memobj`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueUnmapMemObject(
    queue: cl_command_queue,
    memobj: cl_mem,
    mapped_ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, m, waits) = unsafe { command_args(queue, memobj, num, list) }?;
        // CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by clEnqueueMapBuffer
        // or clEnqueueMapImage for memobj.
        let map = m
            .take_mapping(mapped_ptr)
            .ok_or(ClError(CL_INVALID_VALUE))?;
        let writes = map.flags & MAP_WRITES != 0 || map.flags == 0;
        let work = if m.flags & CL_MEM_USE_HOST_PTR != 0 && writes {
            host_copy(
                map.ptr,
                UserPtr(m.mapped().wrapping_add(map.offset) as *mut c_void),
                map.size,
            )
        } else {
            Work::Nop
        };
        let ev = q.enqueue(CL_COMMAND_UNMAP_MEM_OBJECT, &waits, work, keep(&m));
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
}

/// clEnqueueMigrateMemObjects: vkcl keeps every buffer in memory that all its users reach, so
/// migration only orders (a command that completes after its wait list). Errors:
/// `CL_INVALID_COMMAND_QUEUE`; `CL_INVALID_VALUE` (no objects, NULL list, undefined flag bits);
/// `CL_INVALID_MEM_OBJECT`; `CL_INVALID_CONTEXT` (objects or events of another context);
/// `CL_INVALID_EVENT_WAIT_LIST`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueMigrateMemObjects(
    queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    flags: cl_mem_migration_flags,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        let q = lookup::<CommandQueue>(queue as *const c_void)?;
        // CL_INVALID_VALUE if num_mem_objects is zero or if mem_objects is NULL.
        if num_mem_objects == 0 || mem_objects.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // CL_INVALID_VALUE if flags is not 0 or is not any of the values described in the table.
        if flags & !(CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) != 0 {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // CL_INVALID_MEM_OBJECT if any of the memory objects in mem_objects is not a valid
        // memory object.
        // SAFETY: mem_objects holds num_mem_objects handles per the API.
        let mems = unsafe { lookup_list::<Mem>(mem_objects, num_mem_objects as usize) }?;
        // CL_INVALID_CONTEXT if the context associated with command_queue and memory objects in
        // mem_objects are not the same.
        if mems.iter().any(|m| !Arc::ptr_eq(&m.context, &q.context)) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        // SAFETY: forwarded.
        let waits = unsafe { wait_list(&q, num, list) }?;
        let k: Vec<Arc<dyn Any + Send + Sync>> = mems
            .into_iter()
            .map(|m| m as Arc<dyn Any + Send + Sync>)
            .collect();
        let ev = q.enqueue(CL_COMMAND_MIGRATE_MEM_OBJECTS, &waits, Work::Nop, k);
        // SAFETY: `event` is NULL or valid per the API.
        unsafe { return_event(event, ev) };
        Ok(())
    })
}
