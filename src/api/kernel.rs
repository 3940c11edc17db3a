//! Kernel entry points (OpenCL 3.0 sections 5.9 and 5.10).

use super::event::{return_event, wait_list};
use super::info::InfoOut;
use super::{slice_from, status, write_opt};
use crate::compiler::{AccessQualifier, AddressQualifier, ArgKind};
use crate::core::command::Command;
use crate::core::device::Device;
use crate::core::error::{ClError, ClResult};
use crate::core::kernel::{check_range, ArgValue, Kernel};
use crate::core::kernel_image::check_image_arg;
use crate::core::memory::Mem;
use crate::core::object::{self, handle_of, lookup, register, ClObject};
use crate::core::program::Program;
use crate::core::queue::CommandQueue;
use crate::core::sampler::Sampler;
use opencl_sys::*;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// clCreateKernel. Errors: `CL_INVALID_PROGRAM`, `CL_INVALID_VALUE` (NULL name),
/// `CL_INVALID_PROGRAM_EXECUTABLE`, `CL_INVALID_KERNEL_NAME`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateKernel(
    program: cl_program,
    kernel_name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    super::object(errcode_ret, || {
        let p = lookup::<Program>(program as *const c_void)?;
        if kernel_name.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: NUL-terminated per the API.
        let name = unsafe { CStr::from_ptr(kernel_name) }.to_string_lossy();
        Ok(handle_of(&register(Kernel::new(p, &name)?)))
    })
}

/// clCreateKernelsInProgram. Errors: `CL_INVALID_PROGRAM`, `CL_INVALID_PROGRAM_EXECUTABLE`,
/// `CL_INVALID_VALUE` (`kernels` not NULL and `num_kernels` below the kernel count).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateKernelsInProgram(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    status(|| {
        let p = lookup::<Program>(program as *const c_void)?;
        let compiled = p.compiled()?;
        let n = compiled.kernels.len();
        if !kernels.is_null() {
            if (num_kernels as usize) < n {
                return Err(ClError(CL_INVALID_VALUE));
            }
            for (i, k) in compiled.kernels.iter().enumerate() {
                let kernel = register(Kernel::new(p.clone(), &k.name)?);
                // SAFETY: kernels holds num_kernels >= n entries.
                unsafe { kernels.add(i).write(handle_of(&kernel)) };
            }
        }
        // SAFETY: NULL or valid.
        unsafe { write_opt(num_kernels_ret, n as cl_uint) };
        Ok(())
    })
}

/// clRetainKernel. Errors: `CL_INVALID_KERNEL`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainKernel(kernel: cl_kernel) -> cl_int {
    status(|| object::retain::<Kernel>(kernel as *const c_void))
}

/// clReleaseKernel. Errors: `CL_INVALID_KERNEL`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseKernel(kernel: cl_kernel) -> cl_int {
    status(|| object::release::<Kernel>(kernel as *const c_void).map(|_| ()))
}

/// clCloneKernel. Errors: `CL_INVALID_KERNEL`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCloneKernel(source: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel {
    super::object(errcode_ret, || {
        let k = lookup::<Kernel>(source as *const c_void)?;
        Ok(handle_of(&register(k.clone_kernel())))
    })
}

/// clSetKernelArg. Errors: `CL_INVALID_KERNEL`, `CL_INVALID_ARG_INDEX`, `CL_INVALID_ARG_SIZE`
/// (size not that of the argument: `sizeof(cl_mem)` for buffers, 0 for `__local` on an
/// OpenCL 3.0 platform; OpenCL 3.1 allows it),
/// `CL_INVALID_ARG_VALUE` (NULL value for a by-value argument, non-NULL for `__local`),
/// `CL_INVALID_MEM_OBJECT` (not a buffer of the kernel's context), `CL_INVALID_SAMPLER`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clSetKernelArg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> cl_int {
    status(|| {
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        // SAFETY: forwarded.
        let value = unsafe { decode_arg(&k, arg_index, arg_size, arg_value) }?;
        k.set_arg(arg_index as usize, value)
    })
}

/// Decodes one argument value as clSetKernelArg takes it (also used by
/// clUpdateMutableCommandsKHR). Errors: as [`clSetKernelArg`].
///
/// # Safety
/// `arg_value` NULL or holding `arg_size` readable bytes.
pub(crate) unsafe fn decode_arg(
    k: &Kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> ClResult<ArgValue> {
    {
        let a = k
            .info()
            .args
            .get(arg_index as usize)
            .ok_or(ClError(CL_INVALID_ARG_INDEX))?
            .clone();
        let value = match a.kind {
            ArgKind::Buffer => {
                if arg_size != std::mem::size_of::<cl_mem>() {
                    return Err(ClError(CL_INVALID_ARG_SIZE));
                }
                // SAFETY: arg_value points to a cl_mem when not NULL.
                let h = if arg_value.is_null() {
                    std::ptr::null_mut()
                } else {
                    unsafe { *(arg_value as *const cl_mem) }
                };
                if h.is_null() {
                    ArgValue::Buffer(None)
                } else {
                    let m = lookup::<Mem>(h as *const c_void)?.as_buffer()?;
                    if !Arc::ptr_eq(&m.context, &k.program.context) {
                        return Err(ClError(CL_INVALID_MEM_OBJECT));
                    }
                    // CL_INVALID_ARG_VALUE (cl_ext_immutable_memory_objects) if the buffer was
                    // created with CL_MEM_IMMUTABLE_EXT and the argument may be written: only
                    // __constant and const-qualified pointers take it.
                    if m.flags & CL_MEM_IMMUTABLE_EXT != 0
                        && a.address_qualifier != AddressQualifier::Constant
                        && !a.type_qualifier.is_const
                    {
                        return Err(ClError(CL_INVALID_ARG_VALUE));
                    }
                    ArgValue::Buffer(Some(Arc::downgrade(&m)))
                }
            }
            ArgKind::Local { .. } => {
                // CL_INVALID_ARG_SIZE if the argument is a __local pointer and arg_size is
                // zero, which "does not apply if the platform associated with kernel is OpenCL
                // 3.1 or newer" (OpenCL 3.1 API 5.9.2): then no local memory is reserved and
                // the pointer's value is implementation-defined (a one-element array here).
                if arg_size == 0 && crate::core::version::platform_version() < (3, 1) {
                    return Err(ClError(CL_INVALID_ARG_SIZE));
                }
                if !arg_value.is_null() {
                    return Err(ClError(CL_INVALID_ARG_VALUE));
                }
                ArgValue::Local(arg_size)
            }
            ArgKind::Value => {
                if arg_size != a.size as usize {
                    return Err(ClError(CL_INVALID_ARG_SIZE));
                }
                if arg_value.is_null() {
                    return Err(ClError(CL_INVALID_ARG_VALUE));
                }
                // SAFETY: arg_value holds arg_size bytes.
                ArgValue::Bytes(
                    unsafe { std::slice::from_raw_parts(arg_value as *const u8, arg_size) }
                        .to_vec(),
                )
            }
            ArgKind::Sampler => {
                if arg_size != std::mem::size_of::<cl_sampler>() {
                    return Err(ClError(CL_INVALID_ARG_SIZE));
                }
                // CL_INVALID_SAMPLER if arg_value is not a valid sampler object (NULL, a
                // handle of another kind, one of another context).
                if arg_value.is_null() {
                    return Err(ClError(CL_INVALID_SAMPLER));
                }
                // SAFETY: arg_value points to a cl_sampler when not NULL.
                let h = unsafe { *(arg_value as *const cl_sampler) };
                let s = lookup::<Sampler>(h as *const c_void)?;
                if !Arc::ptr_eq(&s.context, &k.program.context) {
                    return Err(ClError(CL_INVALID_SAMPLER));
                }
                ArgValue::Sampler(s)
            }
            ArgKind::Image => {
                if arg_size != std::mem::size_of::<cl_mem>() {
                    return Err(ClError(CL_INVALID_ARG_SIZE));
                }
                // CL_INVALID_MEM_OBJECT if arg_value is not a valid image (NULL included).
                if arg_value.is_null() {
                    return Err(ClError(CL_INVALID_MEM_OBJECT));
                }
                // SAFETY: arg_value points to a cl_mem when not NULL.
                let h = unsafe { *(arg_value as *const cl_mem) };
                let m = lookup::<Mem>(h as *const c_void)?;
                if !Arc::ptr_eq(&m.context, &k.program.context) {
                    return Err(ClError(CL_INVALID_MEM_OBJECT));
                }
                check_image_arg(&a, &m)?;
                ArgValue::Image(Arc::downgrade(&m))
            }
        };
        Ok(value)
    }
}

/// clSetKernelArgSVMPointer: no device supports SVM. Errors: `CL_INVALID_KERNEL`,
/// `CL_INVALID_OPERATION`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clSetKernelArgSVMPointer(
    kernel: cl_kernel,
    _index: cl_uint,
    _value: *const c_void,
) -> cl_int {
    status(|| {
        lookup::<Kernel>(kernel as *const c_void)?;
        Err(ClError(CL_INVALID_OPERATION))
    })
}

/// clSetKernelExecInfo (OpenCL 3.0 section 5.9.3). `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`
/// (cl_ext_buffer_device_address) takes an array of `cl_mem_device_address_ext`, the
/// addresses of the buffers the kernel may reach through pointers it finds in memory; each
/// call replaces the list (size 0 and NULL: none). Enqueued launches keep those buffers
/// alive until they complete. The SVM parameters are refused: no device supports SVM.
/// Errors: `CL_INVALID_KERNEL`, `CL_INVALID_VALUE` (unknown name, NULL value with a size
/// above 0, a device-pointer list whose size is not a multiple of 8), `CL_INVALID_OPERATION`
/// (SVM parameters; device pointers when no device of the context supports them).
///
/// # Safety
/// `value` NULL or holding `size` readable bytes.
pub unsafe extern "C" fn clSetKernelExecInfo(
    kernel: cl_kernel,
    name: cl_kernel_exec_info,
    size: usize,
    value: *const c_void,
) -> cl_int {
    status(|| {
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        // SAFETY: forwarded.
        let ptrs = unsafe { exec_info_device_ptrs(&k, name, size, value) }?;
        k.set_device_ptrs(ptrs);
        Ok(())
    })
}

/// Checks one clSetKernelExecInfo parameter for `k` (also used by clUpdateMutableCommandsKHR's
/// exec info) and returns its device-pointer list: the only parameter vkcl takes is
/// `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`. Errors: as [`clSetKernelExecInfo`].
///
/// # Safety
/// `value` NULL or holding `size` readable bytes.
pub(crate) unsafe fn exec_info_device_ptrs(
    k: &Kernel,
    name: cl_uint,
    size: usize,
    value: *const c_void,
) -> ClResult<Vec<u64>> {
    match name {
        // CL_INVALID_OPERATION if param_name is CL_KERNEL_EXEC_INFO_SVM_PTRS (or
        // CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM) and no devices in the context associated
        // with kernel support SVM.
        CL_KERNEL_EXEC_INFO_SVM_PTRS | CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM => {
            Err(ClError(CL_INVALID_OPERATION))
        }
        CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT => {
            // CL_INVALID_OPERATION if param_name is CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT and no
            // devices in the context associated with kernel support the
            // cl_ext_buffer_device_address extension.
            if !k.program.context.has_device_addresses() {
                return Err(ClError(CL_INVALID_OPERATION));
            }
            // CL_INVALID_VALUE if param_value is NULL and param_value_size is greater than
            // zero, or if the size specified by param_value_size is not valid.
            let n = std::mem::size_of::<cl_mem_device_address_ext>();
            if (value.is_null() && size > 0) || !size.is_multiple_of(n) {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // SAFETY: value holds size bytes, size / n addresses, when not NULL (caller).
            let list = unsafe { slice_from(value as *const cl_mem_device_address_ext, size / n) };
            Ok(list.to_vec())
        }
        // CL_INVALID_VALUE if param_name is not valid.
        _ => Err(ClError(CL_INVALID_VALUE)),
    }
}

/// clSetKernelArgDevicePointerEXT (cl_ext_buffer_device_address 1.0.2, OpenCL API section
/// 5.9.2): argument `arg_index`, a pointer to `__global` memory, takes the raw device address
/// `arg_value` (a `CL_MEM_DEVICE_ADDRESS_EXT` value, any offset into such a buffer, or any
/// other value the kernel does not dereference, NULL included) for every later
/// clEnqueueNDRangeKernel / clEnqueueTask / clCommandNDRangeKernelKHR until set again. A
/// launch keeps the buffer the address points into alive until it completes.
/// Errors: `CL_INVALID_KERNEL`, `CL_INVALID_OPERATION` (no device of the kernel's context
/// supports the extension: never on vkcl), `CL_INVALID_ARG_INDEX` (no such argument, or
/// not a pointer to `__global` memory: `__constant`, `__local`, by-value, image and sampler
/// arguments).
///
/// # Safety
/// Any value is accepted.
pub unsafe extern "C" fn clSetKernelArgDevicePointerEXT(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: cl_mem_device_address_ext,
) -> cl_int {
    status(|| {
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        // CL_INVALID_OPERATION if no devices in the context associated with kernel support
        // the cl_ext_buffer_device_address extension.
        if !k.program.context.has_device_addresses() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_ARG_INDEX if arg_index is not a valid argument index, or corresponds to
        // an argument that is not a pointer to the global address space.
        let a = k
            .info()
            .args
            .get(arg_index as usize)
            .ok_or(ClError(CL_INVALID_ARG_INDEX))?;
        if a.kind != ArgKind::Buffer || a.address_qualifier != AddressQualifier::Global {
            return Err(ClError(CL_INVALID_ARG_INDEX));
        }
        k.set_arg(arg_index as usize, ArgValue::DevicePointer(arg_value))
    })
}

/// clGetKernelInfo. Errors: `CL_INVALID_KERNEL`, `CL_INVALID_VALUE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetKernelInfo(
    kernel: cl_kernel,
    param: cl_kernel_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        match param {
            CL_KERNEL_FUNCTION_NAME => out.string(&k.info().name),
            CL_KERNEL_NUM_ARGS => out.scalar(k.info().args.len() as cl_uint),
            CL_KERNEL_REFERENCE_COUNT => out.scalar(k.header().ref_count()),
            CL_KERNEL_CONTEXT => out.scalar(handle_of(&k.program.context)),
            CL_KERNEL_PROGRAM => out.scalar(handle_of(&k.program)),
            CL_KERNEL_ATTRIBUTES => out.string(&k.info().attributes),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// The device argument of kernel queries: NULL is allowed when the program has one device.
/// Errors: `CL_INVALID_DEVICE`.
fn kernel_device(k: &Kernel, device: cl_device_id) -> ClResult<Arc<Device>> {
    if device.is_null() {
        return match k.program.devices.as_slice() {
            [d] => Ok(d.clone()),
            _ => Err(ClError(CL_INVALID_DEVICE)),
        };
    }
    let d = lookup::<Device>(device as *const c_void)?;
    if !k.program.devices.iter().any(|x| Arc::ptr_eq(x, &d)) {
        return Err(ClError(CL_INVALID_DEVICE));
    }
    Ok(d)
}

/// clGetKernelWorkGroupInfo. Errors: `CL_INVALID_KERNEL`, `CL_INVALID_DEVICE`,
/// `CL_INVALID_VALUE` (unknown name; CL_KERNEL_GLOBAL_WORK_SIZE, which is only for custom
/// devices and built-in kernels).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetKernelWorkGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param: cl_kernel_work_group_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        let d = kernel_device(&k, device)?;
        let out = InfoOut::new(size, value, size_ret);
        match param {
            CL_KERNEL_WORK_GROUP_SIZE => out.scalar(k.max_work_group_size(&d)),
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE => out.slice(
                &k.info()
                    .reqd_work_group_size
                    .map_or([0usize; 3], |r| r.map(|v| v as usize)),
            ),
            CL_KERNEL_LOCAL_MEM_SIZE => out.scalar(k.local_mem_size()),
            CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => {
                out.scalar(d.phys.subgroup_size.max(1) as usize)
            }
            CL_KERNEL_PRIVATE_MEM_SIZE => out.scalar(k.info().private_mem_bytes),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// clGetKernelArgInfo. Errors: `CL_INVALID_KERNEL`, `CL_INVALID_ARG_INDEX`,
/// `CL_KERNEL_ARG_INFO_NOT_AVAILABLE` (program not built with `-cl-kernel-arg-info`),
/// `CL_INVALID_VALUE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetKernelArgInfo(
    kernel: cl_kernel,
    index: cl_uint,
    param: cl_kernel_arg_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        let a = k
            .info()
            .args
            .get(index as usize)
            .ok_or(ClError(CL_INVALID_ARG_INDEX))?
            .clone();
        if !k.program.executable_arg_info() {
            return Err(ClError(CL_KERNEL_ARG_INFO_NOT_AVAILABLE));
        }
        let out = InfoOut::new(size, value, size_ret);
        match param {
            CL_KERNEL_ARG_ADDRESS_QUALIFIER => out.scalar(match a.address_qualifier {
                AddressQualifier::Global => CL_KERNEL_ARG_ADDRESS_GLOBAL,
                AddressQualifier::Constant => CL_KERNEL_ARG_ADDRESS_CONSTANT,
                AddressQualifier::Local => CL_KERNEL_ARG_ADDRESS_LOCAL,
                AddressQualifier::Private => CL_KERNEL_ARG_ADDRESS_PRIVATE,
            }
                as cl_kernel_arg_address_qualifier),
            CL_KERNEL_ARG_ACCESS_QUALIFIER => out.scalar(match a.access_qualifier {
                AccessQualifier::None => CL_KERNEL_ARG_ACCESS_NONE,
                AccessQualifier::ReadOnly => CL_KERNEL_ARG_ACCESS_READ_ONLY,
                AccessQualifier::WriteOnly => CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
                AccessQualifier::ReadWrite => CL_KERNEL_ARG_ACCESS_READ_WRITE,
            }
                as cl_kernel_arg_access_qualifier),
            CL_KERNEL_ARG_TYPE_NAME => out.string(&a.type_name),
            CL_KERNEL_ARG_TYPE_QUALIFIER => {
                let q = a.type_qualifier;
                let mut bits = CL_KERNEL_ARG_TYPE_NONE;
                if q.is_const {
                    bits |= CL_KERNEL_ARG_TYPE_CONST;
                }
                if q.is_restrict {
                    bits |= CL_KERNEL_ARG_TYPE_RESTRICT;
                }
                if q.is_volatile {
                    bits |= CL_KERNEL_ARG_TYPE_VOLATILE;
                }
                if q.is_pipe {
                    bits |= CL_KERNEL_ARG_TYPE_PIPE;
                }
                out.scalar(bits as cl_kernel_arg_type_qualifier)
            }
            CL_KERNEL_ARG_NAME => out.string(&a.name),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// clGetKernelSubGroupInfo (and its `clGetKernelSubGroupInfoKHR` alias; OpenCL 3.0 section
/// 5.9.3, `__opencl_c_subgroups`): sub-groups are the
/// device's Vulkan subgroups (`CL_DEVICE_MAX_NUM_SUB_GROUPS`), `subgroupSize` work-items each in
/// order of the linear local id, the last one possibly smaller. Errors: `CL_INVALID_KERNEL`,
/// `CL_INVALID_DEVICE` (device not the kernel's, or NULL with several),
/// `CL_INVALID_OPERATION` (device without sub-groups), `CL_INVALID_VALUE` (unknown `param`, an
/// input of the wrong size or NULL, `size` too small).
///
/// # Safety
/// `in_value` must point to `in_size` readable bytes; other pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetKernelSubGroupInfo(
    kernel: cl_kernel,
    device: cl_device_id,
    param: cl_kernel_sub_group_info,
    in_size: usize,
    in_value: *const c_void,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        let d = kernel_device(&k, device)?;
        // CL_INVALID_OPERATION if device does not support sub-groups.
        if !d.subgroups() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        let sg = d.phys.subgroup_size.max(1) as usize;
        let max_wg = k.max_work_group_size(&d);
        let word = std::mem::size_of::<usize>();
        // The local size (1 to 3 size_t) the NDRANGE queries take as input.
        let local_items = || -> ClResult<usize> {
            // CL_INVALID_VALUE if input_value_size is not valid for param_name.
            if in_value.is_null()
                || in_size == 0
                || !in_size.is_multiple_of(word)
                || in_size / word > 3
            {
                return Err(ClError(CL_INVALID_VALUE));
            }
            let mut v = [0usize; 3];
            // SAFETY: the caller provides in_size readable bytes at in_value (checked above
            // to be 1 to 3 size_t).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    in_value as *const u8,
                    v.as_mut_ptr() as *mut u8,
                    in_size,
                )
            };
            Ok(v[..in_size / word].iter().product())
        };
        let out = InfoOut::new(size, value, size_ret);
        match param {
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE => out.scalar(local_items()?.min(sg)),
            CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE => out.scalar(local_items()?.div_ceil(sg)),
            CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT => {
                // CL_INVALID_VALUE if input_value_size is not sizeof(size_t).
                if in_value.is_null() || in_size != word {
                    return Err(ClError(CL_INVALID_VALUE));
                }
                // SAFETY: one size_t is readable at in_value (checked above).
                let count = unsafe { std::ptr::read_unaligned(in_value as *const usize) };
                // The output has as many dimensions as param_value_size holds (1 to 3).
                let dims = if value.is_null() { 3 } else { size / word };
                if !(1..=3).contains(&dims) {
                    return Err(ClError(CL_INVALID_VALUE));
                }
                let mut v = vec![0usize; dims];
                // Zero when no local size gives exactly `count` sub-groups.
                if count > 0 && count * sg <= max_wg {
                    v.fill(1);
                    v[0] = count * sg;
                }
                out.slice(&v)
            }
            CL_KERNEL_MAX_NUM_SUB_GROUPS => out.scalar(max_wg.div_ceil(sg)),
            // No attribute sets a sub-group count.
            CL_KERNEL_COMPILE_NUM_SUB_GROUPS => out.scalar(0usize),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// The queue and kernel of a launch, checked against each other.
/// Errors: `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_KERNEL`, `CL_INVALID_CONTEXT` (different
/// contexts), `CL_INVALID_PROGRAM_EXECUTABLE` (no program built for the queue's device).
pub(crate) fn queue_and_kernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
) -> ClResult<(Arc<CommandQueue>, Arc<Kernel>)> {
    let q = lookup::<CommandQueue>(queue as *const c_void)?;
    let k = lookup::<Kernel>(kernel as *const c_void)?;
    if !Arc::ptr_eq(&q.context, &k.program.context) {
        return Err(ClError(CL_INVALID_CONTEXT));
    }
    // CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built program executable
    // available for the device associated with command_queue.
    if !k.program.has_executable_for(&q.device) {
        return Err(ClError(CL_INVALID_PROGRAM_EXECUTABLE));
    }
    Ok((q, k))
}

/// clEnqueueNDRangeKernel. Errors: `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_KERNEL`,
/// `CL_INVALID_CONTEXT`, `CL_INVALID_PROGRAM_EXECUTABLE`, the size errors of the NDRange,
/// `CL_INVALID_KERNEL_ARGS`, `CL_INVALID_EVENT_WAIT_LIST`, `CL_OUT_OF_RESOURCES`.
/// A global size of 0 in any dimension enqueues a command that does nothing.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueNDRangeKernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        let (q, k) = queue_and_kernel(queue, kernel)?;
        let n = work_dim.min(3) as usize;
        let opt = |p: *const usize| {
            // SAFETY: each non-NULL array holds work_dim entries per the API.
            (!p.is_null()).then(|| unsafe { slice_from(p, n) })
        };
        let range = check_range(
            &k,
            &q.device,
            work_dim,
            opt(global_work_offset),
            opt(global_work_size),
            opt(local_work_size),
        )?;
        // SAFETY: forwarded.
        let waits = unsafe { wait_list(&q, num, list) }?;
        let ev = q.enqueue_command(Command::launch(&k, &q.device, range)?, &waits)?;
        // SAFETY: forwarded.
        unsafe { return_event(event, ev) };
        Ok(())
    })
}

/// clEnqueueTask (deprecated in 2.0): an NDRange of one work-item.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueTask(
    queue: cl_command_queue,
    kernel: cl_kernel,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let one = [1usize];
    // SAFETY: forwarded with valid one-element arrays.
    unsafe {
        clEnqueueNDRangeKernel(
            queue,
            kernel,
            1,
            std::ptr::null(),
            one.as_ptr(),
            one.as_ptr(),
            num,
            list,
            event,
        )
    }
}

/// clGetKernelSuggestedLocalWorkSizeKHR (cl_khr_suggested_local_work_size), which is also
/// OpenCL 3.1's core clGetKernelSuggestedLocalWorkSize (OpenCL 3.1 API 5.9.4; the dispatch
/// table's 3.1 slot and the name lookup give this function for both names): the local size
/// vkcl would pick for a NULL `local_work_size`. Errors: `CL_INVALID_COMMAND_QUEUE`,
/// `CL_INVALID_KERNEL`, `CL_INVALID_CONTEXT`, `CL_INVALID_PROGRAM_EXECUTABLE`,
/// `CL_INVALID_KERNEL_ARGS` (an argument not set), `CL_INVALID_WORK_DIMENSION`,
/// `CL_INVALID_GLOBAL_WORK_SIZE` (NULL or a zero entry), `CL_INVALID_GLOBAL_OFFSET`
/// (offset plus size overflows), `CL_INVALID_VALUE` (NULL `suggested_local_work_size`).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetKernelSuggestedLocalWorkSizeKHR(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    suggested_local_work_size: *mut usize,
) -> cl_int {
    status(|| {
        let (q, k) = queue_and_kernel(queue, kernel)?;
        let n = work_dim.min(3) as usize;
        // SAFETY: each non-NULL array holds work_dim entries per the API.
        let offset =
            (!global_work_offset.is_null()).then(|| unsafe { slice_from(global_work_offset, n) });
        // SAFETY: as above.
        let global =
            (!global_work_size.is_null()).then(|| unsafe { slice_from(global_work_size, n) });
        // CL_INVALID_GLOBAL_WORK_SIZE if global_work_size is NULL or any of its values is 0.
        if (1..=3).contains(&work_dim) && global.is_none_or(|g| g.contains(&0)) {
            return Err(ClError(CL_INVALID_GLOBAL_WORK_SIZE));
        }
        let r = check_range(&k, &q.device, work_dim, offset, global, None)?;
        // CL_INVALID_KERNEL_ARGS if any kernel arguments for kernel have not been set.
        if !k.args_set() {
            return Err(ClError(CL_INVALID_KERNEL_ARGS));
        }
        if suggested_local_work_size.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        for (i, l) in r.local.iter().take(n).enumerate() {
            // SAFETY: the output holds work_dim entries.
            unsafe { suggested_local_work_size.add(i).write(*l as usize) };
        }
        Ok(())
    })
}
