//! Context entry points (OpenCL 3.0 section 4.4).

use super::device::devices_of_type;
use super::info::InfoOut;
use super::platform::platform_arg;
use super::{properties, slice_from, status};
use crate::core::context::{Context, ContextDestructor, ContextNotify};
use crate::core::device::Device;
use crate::core::error::{ClError, ClResult};
use crate::core::object;
use crate::core::object::{handle_of, lookup, register};
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// Checks a context property list. Errors: `CL_INVALID_PLATFORM` for a platform that is not
/// vkcl's, `CL_INVALID_PROPERTY` for unknown or repeated names or bad values.
///
/// # Safety
/// `props` must be NULL or a zero-terminated property list.
unsafe fn context_properties(
    props: *const cl_context_properties,
) -> ClResult<Vec<cl_context_properties>> {
    // SAFETY: forwarded contract.
    let pairs = unsafe { properties(props) }?;
    for (k, v) in &pairs {
        match *k {
            k if k == CL_CONTEXT_PLATFORM as cl_context_properties => {
                // CL_INVALID_PLATFORM if the platform value is not a valid platform.
                if *v == 0 {
                    return Err(ClError(CL_INVALID_PLATFORM));
                }
                platform_arg(*v as cl_platform_id)?;
            }
            k if k == CL_CONTEXT_INTEROP_USER_SYNC as cl_context_properties => {
                if *v as cl_bool != CL_TRUE && *v as cl_bool != CL_FALSE {
                    return Err(ClError(CL_INVALID_PROPERTY));
                }
            }
            // CL_INVALID_PROPERTY if a property name is not supported.
            _ => return Err(ClError(CL_INVALID_PROPERTY)),
        }
    }
    let mut list: Vec<cl_context_properties> = pairs.iter().flat_map(|(k, v)| [*k, *v]).collect();
    if !props.is_null() {
        list.push(0);
    }
    Ok(list)
}

fn new_context(
    devices: Vec<Arc<Device>>,
    props: Vec<cl_context_properties>,
    notify: Option<ContextNotify>,
    user_data: *mut c_void,
) -> ClResult<*mut c_void> {
    let ctx = register(Context::new(
        devices,
        props,
        notify.map(|f| (f, UserPtr(user_data))),
    ));
    Ok(handle_of(&ctx) as cl_context)
}

/// clCreateContext. Errors: `CL_INVALID_PLATFORM`, `CL_INVALID_PROPERTY`, `CL_INVALID_VALUE`
/// (no devices, or user_data without pfn_notify), `CL_INVALID_DEVICE` (a bad or repeated
/// device handle).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateContext(
    props: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    pfn_notify: Option<ContextNotify>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    super::object(errcode_ret, || {
        // SAFETY: forwarded contract.
        let props = unsafe { context_properties(props) }?;
        // CL_INVALID_VALUE if devices is NULL or num_devices is 0,
        // or if pfn_notify is NULL but user_data is not NULL.
        if devices.is_null() || num_devices == 0 || (pfn_notify.is_none() && !user_data.is_null()) {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: devices holds num_devices handles.
        let handles = unsafe { slice_from(devices, num_devices as usize) };
        let mut list: Vec<Arc<Device>> = Vec::new();
        for &h in handles {
            // CL_INVALID_DEVICE if any device in devices is not a valid device.
            let d = lookup::<Device>(h as *const c_void)?;
            if list.iter().any(|x| Arc::ptr_eq(x, &d)) {
                return Err(ClError(CL_INVALID_DEVICE));
            }
            list.push(d);
        }
        new_context(list, props, pfn_notify, user_data)
    })
}

/// clCreateContextFromType. Errors: as clCreateContext, plus `CL_INVALID_DEVICE_TYPE` and
/// `CL_DEVICE_NOT_FOUND`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateContextFromType(
    props: *const cl_context_properties,
    device_type: cl_device_type,
    pfn_notify: Option<ContextNotify>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    super::object(errcode_ret, || {
        // SAFETY: forwarded contract.
        let props = unsafe { context_properties(props) }?;
        if pfn_notify.is_none() && !user_data.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let devices = devices_of_type(device_type)?;
        if devices.is_empty() {
            return Err(ClError(CL_DEVICE_NOT_FOUND));
        }
        new_context(devices, props, pfn_notify, user_data)
    })
}

/// clRetainContext. Errors: `CL_INVALID_CONTEXT`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainContext(context: cl_context) -> cl_int {
    status(|| object::retain::<Context>(context as *const c_void))
}

/// clReleaseContext. Errors: `CL_INVALID_CONTEXT`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseContext(context: cl_context) -> cl_int {
    status(|| object::release::<Context>(context as *const c_void).map(|_| ()))
}

/// clGetContextInfo. Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetContextInfo(
    context: cl_context,
    param_name: cl_context_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let c = lookup::<Context>(context as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_CONTEXT_REFERENCE_COUNT => {
                out.scalar(crate::core::object::ClObject::header(&*c).ref_count())
            }
            CL_CONTEXT_NUM_DEVICES => out.scalar(c.devices.len() as cl_uint),
            CL_CONTEXT_DEVICES => {
                let v: Vec<cl_device_id> = c
                    .devices
                    .iter()
                    .map(|d| handle_of(d) as cl_device_id)
                    .collect();
                out.slice(&v)
            }
            CL_CONTEXT_PROPERTIES => out.slice(&c.properties),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// clSetContextDestructorCallback. Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE` for a
/// NULL `pfn_notify`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clSetContextDestructorCallback(
    context: cl_context,
    pfn_notify: Option<ContextDestructor>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        let c = lookup::<Context>(context as *const c_void)?;
        let f = pfn_notify.ok_or(ClError(CL_INVALID_VALUE))?;
        c.add_destructor(f, UserPtr(user_data));
        Ok(())
    })
}
