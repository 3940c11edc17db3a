//! Command-queue entry points (OpenCL 3.0 section 5.1).

use super::info::InfoOut;
use super::{properties, status, write_opt};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::error::{ClError, ClResult};
use crate::core::object::{self, handle_of, lookup, register, ClObject};
use crate::core::queue::CommandQueue;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

const SUPPORTED: cl_command_queue_properties =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
const DEFINED: cl_command_queue_properties =
    SUPPORTED | CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT;

/// Checks queue property bits. Errors: `CL_INVALID_VALUE` for undefined bits,
/// `CL_INVALID_QUEUE_PROPERTIES` for defined but unsupported ones (on-device queues).
fn check_bits(p: cl_command_queue_properties) -> ClResult<()> {
    // CL_INVALID_VALUE if values specified in properties are not valid.
    if p & !DEFINED != 0 || (p & CL_QUEUE_ON_DEVICE_DEFAULT != 0 && p & CL_QUEUE_ON_DEVICE == 0) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid but are not
    // supported by the device.
    if p & !SUPPORTED != 0 {
        return Err(ClError(CL_INVALID_QUEUE_PROPERTIES));
    }
    Ok(())
}

fn create(
    context: cl_context,
    device: cl_device_id,
    props: cl_command_queue_properties,
    array: Vec<cl_queue_properties>,
) -> ClResult<*mut c_void> {
    let c = lookup::<Context>(context as *const c_void)?;
    let d = lookup::<Device>(device as *const c_void)?;
    // CL_INVALID_DEVICE if device is not a valid device or is not associated with context.
    if !c.has_device(&d) {
        return Err(ClError(CL_INVALID_DEVICE));
    }
    check_bits(props)?;
    let q = register(CommandQueue::new(c, d, props, array)?);
    Ok(handle_of(&q) as cl_command_queue)
}

/// clCreateCommandQueueWithProperties. Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_DEVICE`,
/// `CL_INVALID_VALUE` (unknown property or bits, CL_QUEUE_SIZE without an on-device queue),
/// `CL_INVALID_QUEUE_PROPERTIES` (on-device queues), `CL_OUT_OF_RESOURCES`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateCommandQueueWithProperties(
    context: cl_context,
    device: cl_device_id,
    props: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    super::object(errcode_ret, || {
        lookup::<Context>(context as *const c_void)?;
        lookup::<Device>(device as *const c_void)?;
        // SAFETY: zero-terminated list per the API.
        let pairs = unsafe { properties(props) }.map_err(|_| ClError(CL_INVALID_VALUE))?;
        let mut bits = 0;
        for (k, v) in &pairs {
            match *k as cl_uint {
                CL_QUEUE_PROPERTIES => bits = *v,
                // Only meaningful for on-device queues, which are not supported.
                CL_QUEUE_SIZE => {
                    check_bits(bits)?;
                    return Err(ClError(CL_INVALID_VALUE));
                }
                _ => return Err(ClError(CL_INVALID_VALUE)),
            }
        }
        let mut array: Vec<cl_queue_properties> =
            pairs.iter().flat_map(|(k, v)| [*k, *v]).collect();
        if !props.is_null() {
            array.push(0);
        }
        create(context, device, bits, array)
    })
}

/// clCreateCommandQueue (deprecated in OpenCL 2.0). Errors as
/// [`clCreateCommandQueueWithProperties`].
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateCommandQueue(
    context: cl_context,
    device: cl_device_id,
    props: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    super::object(errcode_ret, || create(context, device, props, Vec::new()))
}

/// clRetainCommandQueue. Errors: `CL_INVALID_COMMAND_QUEUE`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainCommandQueue(queue: cl_command_queue) -> cl_int {
    status(|| object::retain::<CommandQueue>(queue as *const c_void))
}

/// clReleaseCommandQueue: commands already enqueued still run (the queue is flushed).
/// Errors: `CL_INVALID_COMMAND_QUEUE`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseCommandQueue(queue: cl_command_queue) -> cl_int {
    status(|| object::release::<CommandQueue>(queue as *const c_void).map(|_| ()))
}

/// clGetCommandQueueInfo. Errors: `CL_INVALID_COMMAND_QUEUE` (also for CL_QUEUE_SIZE of a
/// host queue), `CL_INVALID_VALUE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetCommandQueueInfo(
    queue: cl_command_queue,
    param_name: cl_command_queue_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let q = lookup::<CommandQueue>(queue as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_QUEUE_CONTEXT => out.scalar(handle_of(&q.context) as cl_context),
            CL_QUEUE_DEVICE => out.scalar(handle_of(&q.device) as cl_device_id),
            CL_QUEUE_REFERENCE_COUNT => out.scalar(q.header().ref_count()),
            CL_QUEUE_PROPERTIES => out.scalar(q.props()),
            CL_QUEUE_PROPERTIES_ARRAY => out.slice(&q.properties_array),
            CL_QUEUE_DEVICE_DEFAULT => {
                out.scalar(std::ptr::null_mut::<c_void>() as cl_command_queue)
            }
            // CL_INVALID_COMMAND_QUEUE for CL_QUEUE_SIZE when the queue is not a device queue.
            CL_QUEUE_SIZE => Err(ClError(CL_INVALID_COMMAND_QUEUE)),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// clSetCommandQueueProperty (deprecated, OpenCL 1.0): enables or disables profiling and
/// out-of-order execution. Errors: `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_VALUE`,
/// `CL_INVALID_QUEUE_PROPERTIES`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clSetCommandQueueProperty(
    queue: cl_command_queue,
    props: cl_command_queue_properties,
    enable: cl_bool,
    old: *mut cl_command_queue_properties,
) -> cl_int {
    status(|| {
        let q = lookup::<CommandQueue>(queue as *const c_void)?;
        check_bits(props)?;
        q.finish();
        let prev = if enable != 0 {
            q.properties.fetch_or(props, Ordering::AcqRel)
        } else {
            q.properties.fetch_and(!props, Ordering::AcqRel)
        };
        // SAFETY: NULL or valid.
        unsafe { write_opt(old, prev) };
        Ok(())
    })
}

/// clFlush: vkcl submits every command as soon as its dependencies allow, so there is nothing
/// left to flush. Errors: `CL_INVALID_COMMAND_QUEUE`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clFlush(queue: cl_command_queue) -> cl_int {
    status(|| lookup::<CommandQueue>(queue as *const c_void).map(|_| ()))
}

/// clFinish: blocks until every command of the queue has completed.
/// Errors: `CL_INVALID_COMMAND_QUEUE`; `CL_OUT_OF_RESOURCES` when the queue's device is lost
/// (a GPU fault: its commands then end with that status too, within seconds).
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clFinish(queue: cl_command_queue) -> cl_int {
    status(|| {
        let q: Arc<CommandQueue> = lookup(queue as *const c_void)?;
        q.finish();
        if q.device_lost() {
            return Err(ClError(CL_OUT_OF_RESOURCES));
        }
        Ok(())
    })
}

/// Debug fault injection for tests (not an OpenCL entry point): the next device submission
/// of any queue is treated as a GPU fault. It is not made, its device is marked lost, and its
/// timeline value never comes, as on a GPU that faulted, so the command's event ends with
/// `CL_OUT_OF_RESOURCES`, clFinish returns it, waits on dependants end with
/// `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` or `CL_OUT_OF_RESOURCES`, and every later
/// enqueue on the device is refused with `CL_OUT_OF_RESOURCES`. The loss lasts for the
/// process (the device cannot come back).
#[no_mangle]
pub extern "C" fn vkcl_debug_inject_device_loss() {
    crate::core::device::inject_device_loss();
}
