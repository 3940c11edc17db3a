//! `cl_khr_external_memory` 1.0.1 with `cl_khr_external_memory_opaque_fd` (OpenCL extension
//! specification, "External Memory"): buffers on memory imported from another API's opaque
//! fd, and the acquire and release commands that order their use (docs/interop.md).

use super::super::event::{return_event, wait_list};
use super::super::status;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::Mem;
use crate::core::object::{self, handle_of, lookup, register};
use crate::core::queue::CommandQueue;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// The handle types `device` imports (`CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR`):
/// opaque fds where its Vulkan device imports them for buffers.
pub fn import_types(device: &Device) -> Vec<cl_external_memory_handle_type_khr> {
    if device.imports_opaque_fd() {
        vec![CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR]
    } else {
        Vec::new()
    }
}

/// What clCreateBufferWithProperties' list asks of an external-memory buffer.
pub(super) struct Import {
    pub fd: i32,
    /// The list as given, with its terminating 0.
    pub properties: Vec<cl_mem_properties>,
}

/// Whether clCreateBufferWithProperties' list names an external memory handle or a device
/// list (the names of `cl_khr_external_memory`), which [`read`] then reads.
///
/// # Safety
/// `p` must be a zero-terminated list of pairs up to any such name.
pub(super) unsafe fn names_import(p: *const cl_mem_properties) -> bool {
    let mut i = 0;
    loop {
        // SAFETY: the list is laid out as the caller promises.
        let key = unsafe { *p.add(i) };
        if key == 0 {
            return false;
        }
        if key == CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR as cl_mem_properties
            || key == CL_MEM_DEVICE_HANDLE_LIST_KHR as cl_mem_properties
        {
            return true;
        }
        i += 2;
    }
}

/// Reads clCreateBufferWithProperties' property list for `context`: None for an empty list;
/// an [`Import`] for `CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR` (with an optional
/// `CL_MEM_DEVICE_HANDLE_LIST_KHR`). Errors: `CL_INVALID_PROPERTY` for any other name, a name
/// given twice, a handle type the context's devices do not import, or a device list without
/// a handle; `CL_INVALID_DEVICE` for a device list naming no device, another context's device,
/// or a device that cannot import the handle type.
///
/// # Safety
/// `p` must be a zero-terminated list (device lists terminated by 0 inside it).
pub(super) unsafe fn read(
    p: *const cl_mem_properties,
    context: &Context,
) -> ClResult<Option<Import>> {
    // SAFETY (every read): the list is laid out as the caller promises.
    let at = |i: usize| unsafe { *p.add(i) };
    let (mut fd, mut devices, mut i) = (None, None, 0);
    loop {
        let key = at(i);
        if key == 0 {
            break;
        }
        match key {
            k if k == CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR as cl_mem_properties => {
                // CL_INVALID_PROPERTY if the same property name is specified more than once.
                if fd.is_some() {
                    return Err(ClError(CL_INVALID_PROPERTY));
                }
                fd = Some(at(i + 1) as i32);
                i += 2;
            }
            k if k == CL_MEM_DEVICE_HANDLE_LIST_KHR as cl_mem_properties => {
                if devices.is_some() {
                    return Err(ClError(CL_INVALID_PROPERTY));
                }
                let mut list = Vec::new();
                i += 1;
                while at(i) != CL_MEM_DEVICE_HANDLE_LIST_END_KHR as cl_mem_properties {
                    // CL_INVALID_DEVICE if the list does not identify a valid device, or a
                    // device that is not in context.
                    let d = lookup::<Device>(at(i) as *const c_void)
                        .map_err(|_| ClError(CL_INVALID_DEVICE))?;
                    if !context.has_device(&d) {
                        return Err(ClError(CL_INVALID_DEVICE));
                    }
                    list.push(d);
                    i += 1;
                }
                i += 1;
                devices = Some(list);
            }
            // CL_INVALID_PROPERTY if a property name is not a supported property name.
            _ => return Err(ClError(CL_INVALID_PROPERTY)),
        }
    }
    let properties: Vec<cl_mem_properties> = (0..=i).map(at).collect();
    let Some(fd) = fd else {
        // A device list alone names nothing to import.
        return match devices {
            Some(_) => Err(ClError(CL_INVALID_PROPERTY)),
            None => Ok(None),
        };
    };
    // CL_INVALID_DEVICE if a device of the list cannot import the handle type;
    // CL_INVALID_PROPERTY (an unsupported handle type) when no device of context can.
    let devices = devices.unwrap_or_else(|| context.devices.clone());
    if devices.is_empty() {
        return Err(ClError(CL_INVALID_DEVICE));
    }
    if !devices.iter().all(|d| d.imports_opaque_fd()) {
        return Err(ClError(
            if context.devices.iter().any(|d| d.imports_opaque_fd()) {
                CL_INVALID_DEVICE
            } else {
                CL_INVALID_PROPERTY
            },
        ));
    }
    Ok(Some(Import { fd, properties }))
}

/// Creates the buffer of an [`Import`] after the common checks of `clCreateBuffer*` (flags,
/// size, host pointer), which the caller made. Errors: as
/// [`Mem::new_imported_buffer`].
pub(super) fn create(
    context: Arc<Context>,
    import: Import,
    flags: cl_mem_flags,
    size: usize,
) -> ClResult<*mut c_void> {
    let m = register(Mem::new_imported_buffer(
        context,
        flags,
        size,
        import.fd,
        import.properties,
    )?);
    Ok(handle_of(&m))
}

/// The shared body of the acquire and release commands: checks and enqueues a command of
/// type `ty` ordered after `wait_list` and the queue's earlier commands.
///
/// # Safety
/// `mems` holds `num` handles (or is NULL); `list` holds `num_events` events (or is NULL).
unsafe fn order(
    queue: cl_command_queue,
    num: cl_uint,
    mems: *const cl_mem,
    num_events: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    ty: cl_command_type,
) -> ClResult<()> {
    let q = lookup::<CommandQueue>(queue as *const c_void)?;
    // CL_INVALID_VALUE if num_mem_objects is zero and mem_objects is not NULL, or if
    // num_mem_objects is greater than 0 and mem_objects is NULL.
    if (num == 0) != mems.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: mems holds num handles per the API.
    let objects = unsafe { object::lookup_list::<Mem>(mems, num as usize) }?;
    for m in &objects {
        // CL_INVALID_MEM_OBJECT if a memory object was not created from an external memory
        // handle.
        if !m.is_external() {
            return Err(ClError(CL_INVALID_MEM_OBJECT));
        }
        // CL_INVALID_CONTEXT if the context of command_queue and of a memory object differ.
        if !Arc::ptr_eq(&m.context, &q.context) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
    }
    // SAFETY: list holds num_events handles per the API.
    let waits = unsafe { wait_list(&q, num_events, list) }?;
    let keep = objects
        .into_iter()
        .map(|m| m as Arc<dyn std::any::Any + Send + Sync>)
        .collect();
    let ev = q.enqueue_ordering(ty, &waits, keep);
    // SAFETY: NULL or valid per the API.
    unsafe { return_event(event, ev) };
    Ok(())
}

/// clEnqueueAcquireExternalMemObjectsKHR: a command after which the queue's commands may use
/// the imported buffers. vkcl's imported memory is coherent with the exporter's (one device
/// and driver), so it orders and nothing more: the exporting API's writes must be complete
/// (its fence or semaphore waited for) before it runs. Errors: `CL_INVALID_COMMAND_QUEUE`,
/// `CL_INVALID_VALUE`, `CL_INVALID_MEM_OBJECT` (not imported), `CL_INVALID_CONTEXT`,
/// `CL_INVALID_EVENT_WAIT_LIST`.
///
/// # Safety
/// Pointers as the extension requires.
pub unsafe extern "C" fn clEnqueueAcquireExternalMemObjectsKHR(
    command_queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        unsafe {
            order(
                command_queue,
                num_mem_objects,
                mem_objects,
                num_events_in_wait_list,
                event_wait_list,
                event,
                CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR,
            )
        }
    })
}

/// clEnqueueReleaseExternalMemObjectsKHR: a command that completes once the queue's commands
/// before it (their writes to the imported buffers) have; the other API may use the memory
/// after its event. Errors: as [`clEnqueueAcquireExternalMemObjectsKHR`].
///
/// # Safety
/// Pointers as the extension requires.
pub unsafe extern "C" fn clEnqueueReleaseExternalMemObjectsKHR(
    command_queue: cl_command_queue,
    num_mem_objects: cl_uint,
    mem_objects: *const cl_mem,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        unsafe {
            order(
                command_queue,
                num_mem_objects,
                mem_objects,
                num_events_in_wait_list,
                event_wait_list,
                event,
                CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR,
            )
        }
    })
}
