//! Buffer entry points (OpenCL 3.0 section 5.2): creation, sub-buffers and info here; the
//! enqueue functions in the submodules (whole-buffer transfers, rectangular transfers, maps
//! and migration), which build core's commands (`core::command`).

mod enqueue;
mod external;
pub use external::{
    clEnqueueAcquireExternalMemObjectsKHR, clEnqueueReleaseExternalMemObjectsKHR, import_types,
};
mod flags;
use flags::{check_flags, ACCESS, HOST_ACCESS, HOST_PTR, WRITABLE};
mod image;
mod image_enqueue;
pub use image::{
    clCreateImage, clCreateImage2D, clCreateImage3D, clCreateImageWithProperties, clGetImageInfo,
    clGetSupportedImageFormats,
};
pub use image_enqueue::{
    clEnqueueCopyBufferToImage, clEnqueueCopyImage, clEnqueueCopyImageToBuffer, clEnqueueFillImage,
    clEnqueueMapImage, clEnqueueReadImage, clEnqueueWriteImage,
};
mod map;
mod rect;
pub(crate) use rect::rect_arrays;
mod transfer;

pub use map::{clEnqueueMapBuffer, clEnqueueMigrateMemObjects, clEnqueueUnmapMemObject};
pub use rect::{clEnqueueCopyBufferRect, clEnqueueReadBufferRect, clEnqueueWriteBufferRect};
pub(crate) use transfer::pattern_bytes;
pub use transfer::{
    clEnqueueCopyBuffer, clEnqueueFillBuffer, clEnqueueReadBuffer, clEnqueueWriteBuffer,
};

use super::info::InfoOut;
use super::{properties, status};
use crate::core::context::Context;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::{Mem, MemDestructor, BUFFER_ALIGNMENT};
use crate::core::object::{self, handle_of, lookup, register, ClObject};
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;

fn create_buffer(
    context: cl_context,
    props: Vec<cl_mem_properties>,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    addressable: bool,
) -> ClResult<*mut c_void> {
    let c = lookup::<Context>(context as *const c_void)?;
    check_flags(flags)?;
    // CL_INVALID_BUFFER_SIZE if size is 0 or greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE for all
    // devices in context.
    if size == 0
        || c.devices
            .iter()
            .all(|d| size as u64 > d.max_mem_alloc_size())
    {
        return Err(ClError(CL_INVALID_BUFFER_SIZE));
    }
    // CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
    // are set in flags, or if host_ptr is not NULL but they are not set.
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    // CL_INVALID_VALUE if CL_MEM_IMMUTABLE_EXT is set in flags and neither
    // CL_MEM_COPY_HOST_PTR nor CL_MEM_USE_HOST_PTR is (its contents come only from creation).
    if flags & CL_MEM_IMMUTABLE_EXT != 0 && !wants_ptr {
        return Err(ClError(CL_INVALID_VALUE));
    }
    if wants_ptr == host_ptr.is_null() {
        return Err(ClError(CL_INVALID_HOST_PTR));
    }
    // An immutable buffer keeps the flags as given (no implied CL_MEM_READ_WRITE).
    let flags = if flags & (ACCESS | CL_MEM_IMMUTABLE_EXT) == 0 {
        flags | CL_MEM_READ_WRITE
    } else {
        flags
    };
    let m = register(Mem::new_buffer(
        c,
        flags,
        size,
        UserPtr(host_ptr),
        props,
        addressable,
    )?);
    Ok(handle_of(&m) as cl_mem)
}

/// clCreateBuffer. Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE` (flags; also
/// `CL_MEM_IMMUTABLE_EXT` with a write flag or without `CL_MEM_COPY_HOST_PTR` or
/// `CL_MEM_USE_HOST_PTR`, cl_ext_immutable_memory_objects),
/// `CL_INVALID_BUFFER_SIZE`, `CL_INVALID_HOST_PTR`, `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
///
/// # Safety
/// Pointers as the OpenCL API requires (host_ptr holds `size` bytes when used).
pub unsafe extern "C" fn clCreateBuffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    super::object(errcode_ret, || {
        create_buffer(context, Vec::new(), flags, size, host_ptr, false)
    })
}

/// clCreateBufferWithProperties (OpenCL 3.0 section 5.2.1). The one buffer property is
/// `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` (cl_ext_buffer_device_address 1.0.2), a `cl_bool`:
/// `CL_TRUE` makes the buffer's device address queryable (`CL_MEM_DEVICE_ADDRESS_EXT`) and
/// usable as a raw pointer value (`clSetKernelArgDevicePointerEXT`, data structures in
/// memory); `CL_FALSE` is a plain buffer. Errors: as [`clCreateBuffer`], and
/// `CL_INVALID_PROPERTY` for another property name, a value other than `CL_TRUE` or
/// `CL_FALSE`, or a name given twice; `CL_INVALID_OPERATION` for
/// `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` when no device of the context supports the extension
/// (never on vkcl, whose devices all do).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateBufferWithProperties(
    context: cl_context,
    props: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    super::object(errcode_ret, || {
        let c = lookup::<Context>(context as *const c_void)?;
        // cl_khr_external_memory: a list naming an external memory handle (or a device list)
        // makes a buffer on imported memory (api/memory/external.rs).
        // SAFETY: NULL or a zero-terminated list per the API.
        if !props.is_null()
            && (props as usize) >= 0x10000
            && unsafe { external::names_import(props) }
        {
            // SAFETY: as above.
            let Some(import) = unsafe { external::read(props, &c) }? else {
                return Err(ClError(CL_INVALID_PROPERTY));
            };
            return import_buffer(c, import, flags, size, host_ptr);
        }
        // SAFETY: zero-terminated list per the API.
        let pairs = unsafe { properties(props) }?;
        let mut addressable = false;
        for &(name, value) in &pairs {
            match name {
                CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT => {
                    // CL_INVALID_PROPERTY if the value specified for a supported property name
                    // is not valid.
                    addressable = match value {
                        v if v == CL_TRUE as cl_mem_properties => true,
                        v if v == CL_FALSE as cl_mem_properties => false,
                        _ => return Err(ClError(CL_INVALID_PROPERTY)),
                    };
                    // CL_INVALID_OPERATION if properties includes
                    // CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT and there are no devices in the
                    // context that support the cl_ext_buffer_device_address extension.
                    if !c.has_device_addresses() {
                        return Err(ClError(CL_INVALID_OPERATION));
                    }
                }
                // CL_INVALID_PROPERTY if a property name in properties is not a supported
                // property name.
                _ => return Err(ClError(CL_INVALID_PROPERTY)),
            }
        }
        let mut list: Vec<cl_mem_properties> = pairs.iter().flat_map(|(k, v)| [*k, *v]).collect();
        if !props.is_null() {
            list.push(0);
        }
        create_buffer(context, list, flags, size, host_ptr, addressable)
    })
}

/// clCreateBufferWithProperties for an [`external::Import`]: the checks of clCreateBuffer on
/// flags and size, no host pointer. Errors: `CL_INVALID_VALUE` (flags, a host-pointer flag or
/// `CL_MEM_IMMUTABLE_EXT`), `CL_INVALID_BUFFER_SIZE`, `CL_INVALID_HOST_PTR`; as
/// `Mem::new_imported_buffer`.
fn import_buffer(
    c: std::sync::Arc<Context>,
    import: external::Import,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
) -> ClResult<*mut c_void> {
    // cl_khr_external_memory: the memory is the handle's; the checks of clCreateBuffer
    // on flags and size apply.
    check_flags(flags)?;
    // CL_INVALID_BUFFER_SIZE if size is 0 or greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE.
    if size == 0
        || c.devices
            .iter()
            .all(|d| size as u64 > d.max_mem_alloc_size())
    {
        return Err(ClError(CL_INVALID_BUFFER_SIZE));
    }
    // CL_INVALID_VALUE for CL_MEM_USE_HOST_PTR, CL_MEM_ALLOC_HOST_PTR or
    // CL_MEM_COPY_HOST_PTR (and CL_MEM_IMMUTABLE_EXT): the storage is the imported memory.
    if flags & (HOST_PTR | CL_MEM_IMMUTABLE_EXT) != 0 {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // CL_INVALID_HOST_PTR if host_ptr is not NULL without those flags.
    if !host_ptr.is_null() {
        return Err(ClError(CL_INVALID_HOST_PTR));
    }
    let flags = if flags & ACCESS == 0 {
        flags | CL_MEM_READ_WRITE
    } else {
        flags
    };
    external::create(c, import, flags, size)
}

/// clCreateSubBuffer. Errors: `CL_INVALID_MEM_OBJECT` (not a buffer, or a sub-buffer),
/// `CL_INVALID_VALUE` (flags incompatible with the parent's, bad create type, NULL info,
/// region out of bounds), `CL_INVALID_BUFFER_SIZE` (size 0), `CL_MISALIGNED_SUB_BUFFER_OFFSET`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateSubBuffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: cl_buffer_create_type,
    create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    super::object(errcode_ret, || {
        let parent = lookup::<Mem>(buffer as *const c_void)?.as_buffer()?;
        if parent.parent.is_some() {
            return Err(ClError(CL_INVALID_MEM_OBJECT));
        }
        check_flags(flags)?;
        // CL_INVALID_VALUE if the buffer was created WRITE_ONLY and flags specify READ_WRITE or
        // READ_ONLY, or READ_ONLY and flags specify READ_WRITE or WRITE_ONLY, or if flags
        // specify USE_HOST_PTR, ALLOC_HOST_PTR or COPY_HOST_PTR.
        let pf = parent.flags;
        // CL_INVALID_VALUE (cl_ext_immutable_memory_objects) if the buffer is immutable and
        // flags ask for writes.
        if pf & CL_MEM_IMMUTABLE_EXT != 0 && flags & WRITABLE != 0 {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if flags & HOST_PTR != 0
            || (pf & CL_MEM_WRITE_ONLY != 0 && flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY) != 0)
            || (pf & CL_MEM_READ_ONLY != 0 && flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY) != 0)
            || (pf & CL_MEM_HOST_WRITE_ONLY != 0 && flags & CL_MEM_HOST_READ_ONLY != 0)
            || (pf & CL_MEM_HOST_READ_ONLY != 0 && flags & CL_MEM_HOST_WRITE_ONLY != 0)
            || (pf & CL_MEM_HOST_NO_ACCESS != 0
                && flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) != 0)
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if create_type != CL_BUFFER_CREATE_TYPE_REGION || create_info.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: create_info points to a cl_buffer_region for CL_BUFFER_CREATE_TYPE_REGION.
        let region = unsafe { *(create_info as *const cl_buffer_region) };
        if region.size == 0 {
            return Err(ClError(CL_INVALID_BUFFER_SIZE));
        }
        if region
            .origin
            .checked_add(region.size)
            .is_none_or(|end| end > parent.size)
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if !(region.origin as u64).is_multiple_of(BUFFER_ALIGNMENT) {
            return Err(ClError(CL_MISALIGNED_SUB_BUFFER_OFFSET));
        }
        let mut f = flags;
        if f & ACCESS == 0 {
            f |= pf & ACCESS;
        }
        if f & HOST_ACCESS == 0 {
            f |= pf & HOST_ACCESS;
        }
        f |= pf & (HOST_PTR | CL_MEM_IMMUTABLE_EXT);
        let m = register(Mem::new_sub_buffer(&parent, f, region.origin, region.size));
        Ok(handle_of(&m) as cl_mem)
    })
}

/// clRetainMemObject. Errors: `CL_INVALID_MEM_OBJECT`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainMemObject(mem: cl_mem) -> cl_int {
    status(|| object::retain::<Mem>(mem as *const c_void))
}

/// clReleaseMemObject. Errors: `CL_INVALID_MEM_OBJECT`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseMemObject(mem: cl_mem) -> cl_int {
    status(|| object::release::<Mem>(mem as *const c_void).map(|_| ()))
}

/// clSetMemObjectDestructorCallback. Errors: `CL_INVALID_MEM_OBJECT`, `CL_INVALID_VALUE` for a
/// NULL `pfn_notify`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clSetMemObjectDestructorCallback(
    mem: cl_mem,
    pfn_notify: Option<MemDestructor>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        let m = lookup::<Mem>(mem as *const c_void)?;
        m.add_destructor(
            pfn_notify.ok_or(ClError(CL_INVALID_VALUE))?,
            UserPtr(user_data),
        );
        Ok(())
    })
}

/// clGetMemObjectInfo (OpenCL 3.0 section 5.5.6). `CL_MEM_DEVICE_ADDRESS_EXT`
/// (cl_ext_buffer_device_address) returns one `cl_mem_device_address_ext` per device of the
/// context, in the context's device order (vkcl gives them all the same address).
/// Errors: `CL_INVALID_MEM_OBJECT`, `CL_INVALID_VALUE` (unknown name, `param_value_size`
/// too small), `CL_INVALID_OPERATION` for `CL_MEM_DEVICE_ADDRESS_EXT` of a memory object not
/// created with `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` (nor a sub-buffer of one).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetMemObjectInfo(
    mem: cl_mem,
    param_name: cl_mem_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let m = lookup::<Mem>(mem as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_MEM_TYPE => out.scalar(m.mem_type()),
            CL_MEM_FLAGS => out.scalar(m.flags),
            CL_MEM_SIZE => out.scalar(m.size),
            CL_MEM_HOST_PTR => out.scalar(m.host_ptr.0),
            CL_MEM_MAP_COUNT => out.scalar(m.map_count()),
            CL_MEM_REFERENCE_COUNT => out.scalar(m.header().ref_count()),
            CL_MEM_CONTEXT => out.scalar(handle_of(&m.context) as cl_context),
            CL_MEM_ASSOCIATED_MEMOBJECT => out.scalar(
                m.parent
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |(p, _)| handle_of(p)) as cl_mem,
            ),
            CL_MEM_OFFSET => out.scalar(m.parent.as_ref().map_or(0, |(_, o)| *o)),
            CL_MEM_USES_SVM_POINTER => out.scalar(CL_FALSE),
            CL_MEM_PROPERTIES => out.slice(&m.properties),
            // CL_INVALID_OPERATION if the buffer was not allocated with
            // CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT.
            CL_MEM_DEVICE_ADDRESS_EXT => {
                let address: cl_mem_device_address_ext = m.fixed_address()?;
                out.slice(&vec![address; m.context.devices.len()])
            }
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}
