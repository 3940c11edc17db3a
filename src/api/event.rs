//! Event, marker and barrier entry points (OpenCL 3.0 sections 5.11 and 5.12).

use super::info::InfoOut;
use super::status;
use crate::core::command::Command;
use crate::core::context::Context;
use crate::core::error::{ClError, ClResult};
use crate::core::event::{Event, EventCallback};
use crate::core::object::{self, handle_of, lookup, register, register_arc, ClObject};
use crate::core::queue::CommandQueue;
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// Reads and checks an event wait list for an enqueue on `queue`.
/// Errors: `CL_INVALID_EVENT_WAIT_LIST` (list NULL with num > 0, list non-NULL with num 0, or an
/// invalid event), `CL_INVALID_CONTEXT` (event of another context).
///
/// # Safety
/// `list` must be NULL or hold `num` handles.
pub(crate) unsafe fn wait_list(
    queue: &CommandQueue,
    num: cl_uint,
    list: *const cl_event,
) -> ClResult<Vec<Arc<Event>>> {
    // CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0,
    // or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event objects in
    // event_wait_list are not valid events.
    if (list.is_null() && num > 0) || (!list.is_null() && num == 0) {
        return Err(ClError(CL_INVALID_EVENT_WAIT_LIST));
    }
    // SAFETY: list holds num handles.
    let events = unsafe { object::lookup_list::<Event>(list as *const *mut c_void, num as usize) }
        .map_err(|_| ClError(CL_INVALID_EVENT_WAIT_LIST))?;
    queue.check_wait_list(&events)?;
    Ok(events)
}

/// Hands an event to the application when it asked for one (`event` not NULL).
///
/// # Safety
/// `out` must be NULL or valid for a write.
pub(crate) unsafe fn return_event(out: *mut cl_event, ev: Arc<Event>) {
    if !out.is_null() {
        let ev = register_arc(ev);
        // SAFETY: checked non-NULL; valid per the caller.
        unsafe { out.write(handle_of(&ev) as cl_event) };
    }
}

/// Blocks until `events` complete. Errors: `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` if
/// any ended with a negative status.
pub(crate) fn wait_all(events: &[Arc<Event>]) -> ClResult<()> {
    let mut failed = false;
    for e in events {
        failed |= e.wait() < 0;
    }
    if failed {
        Err(ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST))
    } else {
        Ok(())
    }
}

/// clWaitForEvents. Errors: `CL_INVALID_VALUE` (no events), `CL_INVALID_EVENT`,
/// `CL_INVALID_CONTEXT` (events of different contexts),
/// `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clWaitForEvents(
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    status(|| {
        // CL_INVALID_VALUE if num_events is zero or event_list is NULL.
        if num_events == 0 || event_list.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: event_list holds num_events handles.
        let events = unsafe {
            object::lookup_list::<Event>(event_list as *const *mut c_void, num_events as usize)
        }?;
        // CL_INVALID_CONTEXT if events specified in event_list do not belong to the same context.
        if events
            .iter()
            .any(|e| !Arc::ptr_eq(&e.context, &events[0].context))
        {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        wait_all(&events)
    })
}

/// clGetEventInfo. Errors: `CL_INVALID_EVENT`, `CL_INVALID_VALUE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetEventInfo(
    event: cl_event,
    param_name: cl_event_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let e = lookup::<Event>(event as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_EVENT_COMMAND_QUEUE => out.scalar(
                e.queue
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |q| q.handle())
                    as cl_command_queue,
            ),
            CL_EVENT_CONTEXT => out.scalar(handle_of(&e.context) as cl_context),
            CL_EVENT_COMMAND_TYPE => out.scalar(e.command_type),
            CL_EVENT_COMMAND_EXECUTION_STATUS => out.scalar(e.status()),
            CL_EVENT_REFERENCE_COUNT => out.scalar(e.header().ref_count()),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// clRetainEvent. Errors: `CL_INVALID_EVENT`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainEvent(event: cl_event) -> cl_int {
    status(|| object::retain::<Event>(event as *const c_void))
}

/// clReleaseEvent. Errors: `CL_INVALID_EVENT`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseEvent(event: cl_event) -> cl_int {
    status(|| object::release::<Event>(event as *const c_void).map(|_| ()))
}

/// clGetEventProfilingInfo: times in ns of the host's CLOCK_MONOTONIC. Errors:
/// `CL_INVALID_EVENT`, `CL_PROFILING_INFO_NOT_AVAILABLE` (user event, queue without profiling,
/// event not complete), `CL_INVALID_VALUE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetEventProfilingInfo(
    event: cl_event,
    param_name: cl_profiling_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let e = lookup::<Event>(event as *const c_void)?;
        let t = e.profiling(param_name)?;
        InfoOut::new(size, value, size_ret).scalar(t as cl_ulong)
    })
}

/// clCreateUserEvent. Errors: `CL_INVALID_CONTEXT`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateUserEvent(
    context: cl_context,
    errcode_ret: *mut cl_int,
) -> cl_event {
    super::object(errcode_ret, || {
        let c = lookup::<Context>(context as *const c_void)?;
        Ok(handle_of(&register(Event::new_user(c))) as cl_event)
    })
}

/// clSetUserEventStatus. Errors: `CL_INVALID_EVENT` (not a user event), `CL_INVALID_VALUE`
/// (status neither CL_COMPLETE nor negative), `CL_INVALID_OPERATION` (already set).
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> cl_int {
    status(|| lookup::<Event>(event as *const c_void)?.set_user_status(execution_status))
}

/// clSetEventCallback. Errors: `CL_INVALID_EVENT`, `CL_INVALID_VALUE` (NULL `pfn_notify` or a
/// callback type other than CL_SUBMITTED, CL_RUNNING, CL_COMPLETE).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clSetEventCallback(
    event: cl_event,
    command_exec_callback_type: cl_int,
    pfn_notify: Option<EventCallback>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        let e = lookup::<Event>(event as *const c_void)?;
        let f = pfn_notify.ok_or(ClError(CL_INVALID_VALUE))?;
        if ![CL_SUBMITTED, CL_RUNNING, CL_COMPLETE].contains(&command_exec_callback_type) {
            return Err(ClError(CL_INVALID_VALUE));
        }
        e.add_callback(command_exec_callback_type, f, UserPtr(user_data));
        Ok(())
    })
}

fn marker(
    queue: cl_command_queue,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
    ty: cl_command_type,
) -> ClResult<()> {
    let q = lookup::<CommandQueue>(queue as *const c_void)?;
    // SAFETY: list holds num handles per the API.
    let waits = unsafe { wait_list(&q, num, list) }?;
    let cmd = if ty == CL_COMMAND_MARKER {
        Command::Marker
    } else {
        Command::Barrier
    };
    let ev = q.enqueue_command(cmd, &waits)?;
    // SAFETY: NULL or valid per the API.
    unsafe { return_event(event, ev) };
    Ok(())
}

/// clEnqueueMarkerWithWaitList: completes when the listed events (or, with none, every command
/// enqueued before it) have. Errors: `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_EVENT_WAIT_LIST`,
/// `CL_INVALID_CONTEXT`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueMarkerWithWaitList(
    queue: cl_command_queue,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| marker(queue, num, list, event, CL_COMMAND_MARKER))
}

/// clEnqueueBarrierWithWaitList: as the marker; commands after it wait for it (vkcl queues
/// run in order). Errors as [`clEnqueueMarkerWithWaitList`].
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueBarrierWithWaitList(
    queue: cl_command_queue,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| marker(queue, num, list, event, CL_COMMAND_BARRIER))
}

/// clEnqueueMarker (OpenCL 1.1). Errors: `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_VALUE` for a
/// NULL `event`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueMarker(queue: cl_command_queue, event: *mut cl_event) -> cl_int {
    status(|| {
        lookup::<CommandQueue>(queue as *const c_void)?;
        if event.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        marker(queue, 0, std::ptr::null(), event, CL_COMMAND_MARKER)
    })
}

/// clEnqueueBarrier (OpenCL 1.1). Errors: `CL_INVALID_COMMAND_QUEUE`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clEnqueueBarrier(queue: cl_command_queue) -> cl_int {
    status(|| {
        marker(
            queue,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
            CL_COMMAND_BARRIER,
        )
    })
}

/// clEnqueueWaitForEvents (OpenCL 1.1). Errors: `CL_INVALID_COMMAND_QUEUE`,
/// `CL_INVALID_VALUE` (no events), `CL_INVALID_EVENT`, `CL_INVALID_CONTEXT`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueWaitForEvents(
    queue: cl_command_queue,
    num: cl_uint,
    list: *const cl_event,
) -> cl_int {
    status(|| {
        let q = lookup::<CommandQueue>(queue as *const c_void)?;
        if num == 0 || list.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: list holds num handles.
        let events =
            unsafe { object::lookup_list::<Event>(list as *const *mut c_void, num as usize) }?;
        q.check_wait_list(&events)?;
        q.enqueue_command(Command::Barrier, &events)?;
        Ok(())
    })
}
