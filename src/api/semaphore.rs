//! `cl_khr_semaphore` 1.0.0 entry points (OpenCL extension specification, "Semaphores"):
//! create, wait, signal, query, retain, release; and `clGetSemaphoreHandleForTypeKHR` of
//! `cl_khr_external_semaphore`, answered for applications (and the CTS) that look it up, with
//! no handle type to export (docs/interop.md). The semantics are `core/semaphore.rs`.

use super::event::{return_event, wait_list};
use super::info::InfoOut;
use super::status;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::error::{ClError, ClResult};
use crate::core::event::Event;
use crate::core::object::{self, handle_of, lookup, register, ClObject};
use crate::core::queue::CommandQueue;
use crate::core::semaphore::{self as sem, Semaphore, SemaphoreDesc};
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// The semaphore types of every vkcl device (`CL_DEVICE_SEMAPHORE_TYPES_KHR`,
/// `CL_PLATFORM_SEMAPHORE_TYPES_KHR`): binary.
pub const TYPES: [cl_semaphore_type_khr; 1] = [CL_SEMAPHORE_TYPE_BINARY_KHR];

/// Reads clCreateSemaphoreWithPropertiesKHR's property list: `CL_SEMAPHORE_TYPE_KHR` with one
/// value, `CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR` with devices up to
/// `CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR`; the list ends with 0.
/// Errors: `CL_INVALID_VALUE` for a NULL list; `CL_INVALID_PROPERTY` for any other name
/// (the `cl_khr_external_semaphore` ones included: vkcl offers no handle type) or a name given
/// twice; `CL_INVALID_DEVICE` for an entry of the device list that is no device.
///
/// # Safety
/// `p` must be NULL or a list laid out as above.
unsafe fn read_properties(p: *const cl_semaphore_properties_khr) -> ClResult<SemaphoreDesc> {
    // CL_INVALID_VALUE if sema_props is NULL.
    if p.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let mut desc = SemaphoreDesc {
        semaphore_type: None,
        devices: None,
        properties: Vec::new(),
    };
    let mut seen: Vec<cl_semaphore_properties_khr> = Vec::new();
    let mut i = 0;
    // SAFETY (every read below): the list is laid out as the caller promises.
    let at = |i: usize| unsafe { *p.add(i) };
    loop {
        let key = at(i);
        if key == 0 {
            break;
        }
        // CL_INVALID_PROPERTY if the same property name is specified more than once.
        if seen.contains(&key) {
            return Err(ClError(CL_INVALID_PROPERTY));
        }
        seen.push(key);
        match key as cl_semaphore_info_khr {
            CL_SEMAPHORE_TYPE_KHR => {
                desc.semaphore_type = Some(at(i + 1));
                i += 2;
            }
            CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR => {
                let mut devices = Vec::new();
                i += 1;
                while at(i)
                    != CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR as cl_semaphore_properties_khr
                {
                    // CL_INVALID_DEVICE if the list does not identify a valid device.
                    let d = lookup::<Device>(at(i) as *const c_void)
                        .map_err(|_| ClError(CL_INVALID_DEVICE))?;
                    devices.push(d);
                    i += 1;
                }
                i += 1;
                desc.devices = Some(devices);
            }
            // CL_INVALID_PROPERTY if a property name in sema_props is not a supported name.
            _ => return Err(ClError(CL_INVALID_PROPERTY)),
        }
    }
    desc.properties = (0..=i).map(at).collect();
    Ok(desc)
}

/// clCreateSemaphoreWithPropertiesKHR: an un-signalled binary semaphore.
/// Errors: `CL_INVALID_CONTEXT`; as [`read_properties`] and [`Semaphore::new`]
/// (`CL_INVALID_VALUE`, `CL_INVALID_PROPERTY`, `CL_INVALID_DEVICE`).
///
/// # Safety
/// `sema_props` is NULL or a zero-terminated property list.
pub unsafe extern "C" fn clCreateSemaphoreWithPropertiesKHR(
    context: cl_context,
    sema_props: *const cl_semaphore_properties_khr,
    errcode_ret: *mut cl_int,
) -> cl_semaphore_khr {
    super::object(errcode_ret, || {
        // CL_INVALID_CONTEXT if context is not a valid context.
        let c: Arc<Context> = lookup::<Context>(context as *const c_void)?;
        // SAFETY: sema_props is NULL or a property list per the API.
        let desc = unsafe { read_properties(sema_props) }?;
        Ok(handle_of(&register(Semaphore::new(c, desc)?)))
    })
}

/// The queue, semaphores and wait list of an enqueue of semaphore commands.
type Arguments = (Arc<CommandQueue>, Vec<Arc<Semaphore>>, Vec<Arc<Event>>);

/// Reads the queue, semaphores and wait list of an enqueue of semaphore commands.
/// Errors: `CL_INVALID_COMMAND_QUEUE`; `CL_INVALID_VALUE` for no semaphores;
/// `CL_INVALID_SEMAPHORE_KHR` for an entry that is no semaphore (or a NULL list);
/// `CL_INVALID_EVENT_WAIT_LIST`, `CL_INVALID_CONTEXT` as every wait list.
///
/// # Safety
/// `sems` holds `num` handles (or is NULL); `list` holds `num_events` events (or is NULL).
unsafe fn arguments(
    queue: cl_command_queue,
    num: cl_uint,
    sems: *const cl_semaphore_khr,
    num_events: cl_uint,
    list: *const cl_event,
) -> ClResult<Arguments> {
    let q = lookup::<CommandQueue>(queue as *const c_void)?;
    // CL_INVALID_VALUE if num_sema_objects is 0.
    if num == 0 {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // CL_INVALID_SEMAPHORE_KHR if any of the semaphore objects in sema_objects is not valid.
    if sems.is_null() {
        return Err(ClError(CL_INVALID_SEMAPHORE_KHR));
    }
    // SAFETY: sems holds num handles per the API.
    let sems = unsafe { object::lookup_list::<Semaphore>(sems, num as usize) }?;
    // SAFETY: list holds num_events handles per the API.
    let events = unsafe { wait_list(&q, num_events, list) }?;
    Ok((q, sems, events))
}

/// clEnqueueWaitSemaphoresKHR: a command that waits for each semaphore's signal and
/// un-signals it (`core::semaphore::enqueue_wait`); `sema_payload_list` is ignored (binary
/// semaphores only). Errors: as [`arguments`]; `CL_INVALID_CONTEXT` for a semaphore of
/// another context; `CL_INVALID_COMMAND_QUEUE` for a queue of a device the semaphore is not
/// for; `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` for a failed event in the wait list.
///
/// # Safety
/// Pointers as the extension requires.
pub unsafe extern "C" fn clEnqueueWaitSemaphoresKHR(
    command_queue: cl_command_queue,
    num_sema_objects: cl_uint,
    sema_objects: *const cl_semaphore_khr,
    _sema_payload_list: *const cl_semaphore_payload_khr,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: the lists hold their counts per the API.
        let (q, sems, waits) = unsafe {
            arguments(
                command_queue,
                num_sema_objects,
                sema_objects,
                num_events_in_wait_list,
                event_wait_list,
            )
        }?;
        let ev = sem::enqueue_wait(&q, &sems, &waits)?;
        // SAFETY: NULL or valid per the API.
        unsafe { return_event(event, ev) };
        Ok(())
    })
}

/// clEnqueueSignalSemaphoresKHR: a command whose completion signals each semaphore
/// (`core::semaphore::enqueue_signal`); `sema_payload_list` is ignored. Errors: as
/// [`clEnqueueWaitSemaphoresKHR`].
///
/// # Safety
/// Pointers as the extension requires.
pub unsafe extern "C" fn clEnqueueSignalSemaphoresKHR(
    command_queue: cl_command_queue,
    num_sema_objects: cl_uint,
    sema_objects: *const cl_semaphore_khr,
    _sema_payload_list: *const cl_semaphore_payload_khr,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: the lists hold their counts per the API.
        let (q, sems, waits) = unsafe {
            arguments(
                command_queue,
                num_sema_objects,
                sema_objects,
                num_events_in_wait_list,
                event_wait_list,
            )
        }?;
        let ev = sem::enqueue_signal(&q, &sems, &waits)?;
        // SAFETY: NULL or valid per the API.
        unsafe { return_event(event, ev) };
        Ok(())
    })
}

/// clGetSemaphoreInfoKHR: `CL_SEMAPHORE_CONTEXT_KHR`, `_REFERENCE_COUNT_KHR`,
/// `_PROPERTIES_KHR` (the list as given, with its 0), `_TYPE_KHR` (binary), `_PAYLOAD_KHR` (1
/// while signalled, else 0), `CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR` (the one device).
/// Errors: `CL_INVALID_SEMAPHORE_KHR`; `CL_INVALID_VALUE` for another name or a too small
/// `param_value_size`.
///
/// # Safety
/// Pointers as the extension requires.
pub unsafe extern "C" fn clGetSemaphoreInfoKHR(
    sema_object: cl_semaphore_khr,
    param_name: cl_semaphore_info_khr,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let s = lookup::<Semaphore>(sema_object as *const c_void)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_SEMAPHORE_CONTEXT_KHR => out.scalar(handle_of(&s.context) as cl_context),
            CL_SEMAPHORE_REFERENCE_COUNT_KHR => out.scalar(s.header().ref_count() as cl_uint),
            CL_SEMAPHORE_PROPERTIES_KHR => out.slice(&s.properties),
            CL_SEMAPHORE_TYPE_KHR => out.scalar(CL_SEMAPHORE_TYPE_BINARY_KHR),
            CL_SEMAPHORE_PAYLOAD_KHR => out.scalar(s.payload()),
            CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR => {
                out.slice(&[handle_of(&s.device) as cl_device_id])
            }
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// clRetainSemaphoreKHR. Errors: `CL_INVALID_SEMAPHORE_KHR`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainSemaphoreKHR(sema_object: cl_semaphore_khr) -> cl_int {
    status(|| object::retain::<Semaphore>(sema_object as *const c_void))
}

/// clReleaseSemaphoreKHR: the semaphore goes once released and its commands are done.
/// Errors: `CL_INVALID_SEMAPHORE_KHR`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseSemaphoreKHR(sema_object: cl_semaphore_khr) -> cl_int {
    status(|| object::release::<Semaphore>(sema_object as *const c_void).map(|_| ()))
}

/// clGetSemaphoreHandleForTypeKHR (`cl_khr_external_semaphore`): vkcl's semaphores are
/// never exportable (no `CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR` is accepted at creation).
/// Errors: `CL_INVALID_SEMAPHORE_KHR`; `CL_INVALID_DEVICE` for a device that is not the
/// semaphore's; `CL_INVALID_VALUE` otherwise (the handle type is not one the semaphore was
/// created to export).
///
/// # Safety
/// Any pointer values are accepted (none is written).
pub unsafe extern "C" fn clGetSemaphoreHandleForTypeKHR(
    sema_object: cl_semaphore_khr,
    device: cl_device_id,
    _handle_type: cl_external_semaphore_handle_type_khr,
    _handle_size: usize,
    _handle_ptr: *mut c_void,
    _handle_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let s = lookup::<Semaphore>(sema_object as *const c_void)?;
        // CL_INVALID_DEVICE if device is not a valid device or is not associated with the
        // semaphore.
        let d = lookup::<Device>(device as *const c_void)?;
        if !Arc::ptr_eq(&d, &s.device) {
            return Err(ClError(CL_INVALID_DEVICE));
        }
        // CL_INVALID_VALUE if the requested external semaphore handle type was not specified
        // in CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR at creation.
        Err(ClError(CL_INVALID_VALUE))
    })
}
