//! Mapping and migration (OpenCL 3.0 sections 5.2.4, 5.5.2 and 5.4.6 (migration)):
//! clEnqueueMapBuffer, clEnqueueUnmapMemObject, clEnqueueMigrateMemObjects.
//!
//! Buffer storage is always host-mapped: where the host reads it fast, a map hands out the
//! storage address and costs nothing; where it does not (or `VKCL_STAGED_READS=1`), a map hands
//! out a host-cached staging buffer the device filled, and the unmap of a write map copies it
//! back on the device (`core/staged.rs`). `CL_MEM_USE_HOST_PTR` objects keep their data in a
//! device copy: a map copies the region to `host_ptr + offset` (unless the map invalidates it)
//! and hands that out, and the unmap of a map for writing copies it back.

use super::enqueue::{command_args, finish_enqueue, mem_command_args};
use crate::api::event::{return_event, wait_list};
use crate::api::status;
use crate::core::command::Command;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::Mem;
use crate::core::object::{lookup, lookup_list};
use crate::core::queue::CommandQueue;
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

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
    let (cmd, ptr) = Command::map(m.clone(), offset, size, flags)?;
    let ev = match q.enqueue_command(cmd, &waits) {
        Ok(ev) => ev,
        Err(e) => {
            m.take_mapping(ptr.get());
            return Err(e);
        }
    };
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
/// CL_MEM_USE_HOST_PTR or staged buffer, the host region is copied back to the device copy
/// before the unmap's event completes. Errors:
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
        let (q, m, waits) = unsafe { mem_command_args(queue, memobj, num, list) }?;
        let cmd = Command::unmap(m, UserPtr(mapped_ptr))?;
        let ev = q.enqueue_command(cmd, &waits)?;
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
        let ev = q.enqueue_command(Command::Migrate(mems), &waits)?;
        // SAFETY: `event` is NULL or valid per the API.
        unsafe { return_event(event, ev) };
        Ok(())
    })
}
