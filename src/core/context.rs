//! Contexts (OpenCL 3.0 section 4.4).

use super::device::Device;
use super::device_address::AddressMap;
use super::object::{ClObject, Header, Kind};
use super::UserPtr;
use opencl_sys::*;
use std::sync::{Arc, Mutex};

/// `pfn_notify` of clCreateContext.
pub type ContextNotify = unsafe extern "C" fn(
    *const std::ffi::c_char,
    *const std::ffi::c_void,
    usize,
    *mut std::ffi::c_void,
);
/// A destructor callback of clSetContextDestructorCallback.
pub type ContextDestructor = unsafe extern "C" fn(cl_context, *mut std::ffi::c_void);

/// A context: its devices, the properties it was created with, its callbacks.
pub struct Context {
    header: Header,
    pub devices: Vec<Arc<Device>>,
    /// The property list as given, with its terminating 0 (empty if none was given).
    pub properties: Vec<cl_context_properties>,
    pub notify: Option<(ContextNotify, UserPtr)>,
    /// The buffers created with `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT`, by device address
    /// (cl_ext_buffer_device_address).
    pub device_addresses: AddressMap,
    destructors: Mutex<Vec<(ContextDestructor, UserPtr)>>,
}

impl ClObject for Context {
    const KIND: Kind = Kind::Context;
    const INVALID: i32 = CL_INVALID_CONTEXT;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Context {
    /// A context of `devices` (non-empty, no duplicates: checked by the caller).
    pub fn new(
        devices: Vec<Arc<Device>>,
        properties: Vec<cl_context_properties>,
        notify: Option<(ContextNotify, UserPtr)>,
    ) -> Context {
        Context {
            header: Header::new(Kind::Context),
            devices,
            properties,
            notify,
            device_addresses: AddressMap::default(),
            destructors: Mutex::new(Vec::new()),
        }
    }

    /// Whether `device` belongs to this context.
    pub fn has_device(&self, device: &Arc<Device>) -> bool {
        self.devices.iter().any(|d| Arc::ptr_eq(d, device))
    }

    /// clSetContextDestructorCallback: called in reverse order of registration at destruction.
    pub fn add_destructor(&self, f: ContextDestructor, user: UserPtr) {
        self.destructors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((f, user));
    }

    /// Whether some device of the context supports `cl_ext_buffer_device_address`
    /// ([`Device::has_device_addresses`]): the condition of its `CL_INVALID_OPERATION` errors.
    pub fn has_device_addresses(&self) -> bool {
        self.devices.iter().any(|d| d.has_device_addresses())
    }

    /// Reports an error through the context's `pfn_notify`, if any.
    pub fn report(&self, msg: &str) {
        if let Some((f, user)) = self.notify {
            let c = std::ffi::CString::new(msg.replace('\0', " ")).unwrap_or_default();
            // SAFETY: the application registered this callback for exactly this purpose.
            unsafe { f(c.as_ptr(), std::ptr::null(), 0, user.0) };
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let handle = self.header.handle() as cl_context;
        let list = std::mem::take(
            self.destructors
                .get_mut()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for (f, user) in list.into_iter().rev() {
            // SAFETY: callback registered by the application; the handle is only passed back.
            unsafe { f(handle, user.0) };
        }
        // Persist pipelines made while the context lived.
        for d in &self.devices {
            d.save_pipeline_cache();
        }
    }
}
