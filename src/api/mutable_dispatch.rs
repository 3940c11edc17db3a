//! `cl_khr_command_buffer_mutable_dispatch` 0.9.5 entry points (OpenCL 3.0 API spec section
//! 5.X "Mutable Commands"): clUpdateMutableCommandsKHR and clGetMutableCommandInfoKHR.
//!
//! Each update is resolved here into a complete new [`Dispatch`] (NDRange checked as
//! clEnqueueNDRangeKernel checks it, arguments decoded as clSetKernelArg decodes them); the
//! command buffer then applies all of them or none (see `core::command_buffer` for how a
//! pending run is kept from seeing an update).

use super::info::InfoOut;
use super::kernel::{decode_arg, exec_info_device_ptrs};
use super::{slice_from, status};
use crate::core::command_buffer::CommandBuffer;
use crate::core::error::{ClError, ClResult};
use crate::core::kernel::check_range;
use crate::core::kernel_command::{held_buffers, Dispatch, KernelCommand};
use crate::core::object::{handle_of, lookup};
use crate::util::config::config;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// `CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR`: every field (exec info: the
/// `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT` list of cl_ext_buffer_device_address; the device has
/// no SVM).
pub const CAPABILITIES: cl_mutable_dispatch_fields_khr = CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR
    | CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_ARGUMENTS_KHR
    | CL_MUTABLE_DISPATCH_EXEC_INFO_KHR;

/// Whether `cl_khr_command_buffer_mutable_dispatch` is reported: not under
/// `VKCL_COMMAND_BUFFER_REVISION=0.9.4`, whose mutable-dispatch ABI differs.
pub fn enabled() -> bool {
    !config().command_buffer_094
}

/// Resolves one config into the command's new dispatch.
///
/// # Safety
/// The config's pointers as the OpenCL API requires.
unsafe fn resolve(
    cb: &CommandBuffer,
    c: &cl_mutable_dispatch_config_khr,
) -> ClResult<(Arc<KernelCommand>, Dispatch)> {
    // CL_INVALID_MUTABLE_COMMAND_KHR if command is not a valid mutable command object, or
    // was not recorded into command_buffer.
    let k = lookup::<KernelCommand>(c.command as *const c_void)?;
    if k.command_buffer != handle_of_cb(cb) {
        return Err(ClError(CL_INVALID_MUTABLE_COMMAND_KHR));
    }
    let mut d = k.dispatch();
    let work_dim = d.range.work_dim;
    // CL_INVALID_VALUE if work_dim is not 0 and differs from the work_dim the command was
    // recorded with.
    if c.work_dim != 0 && c.work_dim != work_dim {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let field = |given: bool, f: cl_mutable_dispatch_fields_khr| {
        // CL_INVALID_OPERATION if a field is updated that is not in the command's
        // CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR.
        if given && k.updatable & f == 0 {
            Err(ClError(CL_INVALID_OPERATION))
        } else {
            Ok(())
        }
    };
    field(
        !c.global_work_offset.is_null(),
        CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR,
    )?;
    field(
        !c.global_work_size.is_null(),
        CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR,
    )?;
    field(
        !c.local_work_size.is_null(),
        CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR,
    )?;
    field(c.num_args > 0, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR)?;
    field(c.num_svm_args > 0, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR)?;
    field(c.num_exec_infos > 0, CL_MUTABLE_DISPATCH_EXEC_INFO_KHR)?;
    // CL_INVALID_VALUE if a list is NULL with a count above 0, or given with count 0.
    if (c.arg_list.is_null() != (c.num_args == 0))
        || (c.arg_svm_list.is_null() != (c.num_svm_args == 0))
        || (c.exec_info_list.is_null() != (c.num_exec_infos == 0))
    {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SVM arguments: CL_INVALID_OPERATION, as clSetKernelArgSVMPointer on a device without
    // SVM.
    if c.num_svm_args > 0 {
        return Err(ClError(CL_INVALID_OPERATION));
    }
    // SAFETY: exec_info_list holds num_exec_infos entries per the API.
    for e in unsafe { slice_from(c.exec_info_list, c.num_exec_infos as usize) } {
        // Exec info as clSetKernelExecInfo takes it ("kernel execution info normally passed
        // using clSetKernelExecInfo"): CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT replaces the
        // command's device-pointer list. The SVM names, which clSetKernelExecInfo refuses
        // with CL_INVALID_OPERATION (no SVM), are accepted here and change nothing, as before.
        if matches!(
            e.param_name,
            CL_KERNEL_EXEC_INFO_SVM_PTRS | CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM
        ) {
            if e.param_value.is_null() || e.param_value_size == 0 {
                return Err(ClError(CL_INVALID_VALUE));
            }
            continue;
        }
        // Errors as clSetKernelExecInfo (CL_INVALID_VALUE, CL_INVALID_OPERATION).
        // SAFETY: param_value holds param_value_size bytes per the API.
        d.device_ptrs = unsafe {
            exec_info_device_ptrs(&k.kernel, e.param_name, e.param_value_size, e.param_value)
        }?;
    }
    let n = work_dim as usize;
    let offset: Vec<usize> = if c.global_work_offset.is_null() {
        d.range.offset[..n].iter().map(|&v| v as usize).collect()
    } else {
        // SAFETY: work_dim entries per the API.
        unsafe { slice_from(c.global_work_offset, n) }.to_vec()
    };
    let global: Vec<usize> = if c.global_work_size.is_null() {
        d.range.global[..n].iter().map(|&v| v as usize).collect()
    } else {
        // SAFETY: as above.
        unsafe { slice_from(c.global_work_size, n) }.to_vec()
    };
    let local: Option<Vec<usize>> = if !c.local_work_size.is_null() {
        // SAFETY: as above.
        Some(unsafe { slice_from(c.local_work_size, n) }.to_vec())
    } else if d.local_given {
        Some(d.range.local[..n].iter().map(|&v| v as usize).collect())
    } else {
        None
    };
    d.range = check_range(
        &k.kernel,
        &k.device,
        work_dim,
        Some(&offset),
        Some(&global),
        local.as_deref(),
    )?;
    d.local_given |= !c.local_work_size.is_null();
    // SAFETY: arg_list holds num_args entries per the API.
    for a in unsafe { slice_from(c.arg_list, c.num_args as usize) } {
        // Errors as clSetKernelArg (CL_INVALID_ARG_INDEX, CL_INVALID_ARG_VALUE,
        // CL_INVALID_MEM_OBJECT, CL_INVALID_ARG_SIZE).
        // SAFETY: arg_value holds arg_size bytes per the API.
        let v = unsafe { decode_arg(&k.kernel, a.arg_index, a.arg_size, a.arg_value) }?;
        d.args[a.arg_index as usize] = Some(v);
    }
    d.held = held_buffers(&d.args)?;
    Ok((k, d))
}

/// The handle of a command buffer, as mutable commands record it.
fn handle_of_cb(cb: &CommandBuffer) -> usize {
    use crate::core::object::ClObject;
    cb.header().handle() as usize
}

/// clUpdateMutableCommandsKHR: all updates are applied, or none.
/// Errors: `CL_INVALID_COMMAND_BUFFER_KHR`, `CL_INVALID_OPERATION` (not finalized, not created
/// with `CL_COMMAND_BUFFER_MUTABLE_KHR`, a field outside the command's updatable fields, more
/// work-groups than recorded under the no-additional-work-groups assert, SVM arguments),
/// `CL_INVALID_VALUE` (`num_configs` 0 or a NULL array, an unknown config type, a list and
/// count that disagree, `work_dim` not 0 and not the recorded one, exec info clSetKernelExecInfo
/// would refuse but for the SVM names), `CL_INVALID_MUTABLE_COMMAND_KHR`, the NDRange errors of clEnqueueNDRangeKernel and
/// the argument errors of clSetKernelArg, `CL_OUT_OF_RESOURCES`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clUpdateMutableCommandsKHR(
    command_buffer: cl_command_buffer_khr,
    num_configs: cl_uint,
    config_types: *const cl_command_buffer_update_type_khr,
    configs: *mut *const c_void,
) -> cl_int {
    status(|| {
        let cb = lookup::<CommandBuffer>(command_buffer)?;
        // CL_INVALID_OPERATION if command_buffer has not been finalized.
        if cb.state() == CL_COMMAND_BUFFER_STATE_RECORDING_KHR {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_OPERATION if command_buffer was not created with the
        // CL_COMMAND_BUFFER_MUTABLE_KHR flag.
        if !cb.is_mutable() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_VALUE if num_configs is 0, or config_types or configs is NULL.
        if num_configs == 0 || config_types.is_null() || configs.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: both arrays hold num_configs entries per the API.
        let (types, ptrs) = unsafe {
            (
                slice_from(config_types, num_configs as usize),
                slice_from(configs, num_configs as usize),
            )
        };
        let mut updates = Vec::with_capacity(types.len());
        for (&t, &p) in types.iter().zip(ptrs) {
            // CL_INVALID_VALUE if a type is not a cl_command_buffer_update_type_khr value or
            // its config is NULL.
            if t != CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR || p.is_null() {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // SAFETY: a cl_mutable_dispatch_config_khr per its type.
            let c = unsafe { &*(p as *const cl_mutable_dispatch_config_khr) };
            // SAFETY: the config's pointers per the API.
            let (k, d) = unsafe { resolve(&cb, c) }?;
            // Later configs for the same command see the earlier ones.
            if let Some(slot) = updates
                .iter_mut()
                .find(|(u, _): &&mut (Arc<KernelCommand>, Dispatch)| Arc::ptr_eq(u, &k))
            {
                slot.1 = d;
            } else {
                updates.push((k, d));
            }
        }
        cb.update(updates)
    })
}

/// clGetMutableCommandInfoKHR. Errors: `CL_INVALID_MUTABLE_COMMAND_KHR`, `CL_INVALID_VALUE`
/// (unknown name, `param_value_size` too small).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetMutableCommandInfoKHR(
    command: cl_mutable_command_khr,
    param_name: cl_mutable_command_info_khr,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let k = lookup::<KernelCommand>(command as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        let d = k.dispatch();
        let n = d.range.work_dim as usize;
        let sizes = |v: &[u64]| v[..n].iter().map(|&x| x as usize).collect::<Vec<usize>>();
        match param_name {
            CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR => {
                out.scalar(handle_of(&k.queue) as cl_command_queue)
            }
            CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR => {
                out.scalar(k.command_buffer as cl_command_buffer_khr)
            }
            CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR => {
                out.scalar(CL_COMMAND_NDRANGE_KERNEL as cl_command_type)
            }
            CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR => out.slice(&k.properties),
            CL_MUTABLE_DISPATCH_KERNEL_KHR => out.scalar(handle_of(&k.kernel) as cl_kernel),
            CL_MUTABLE_DISPATCH_DIMENSIONS_KHR => out.scalar(d.range.work_dim as cl_uint),
            CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR => out.slice(&sizes(&d.range.offset)),
            CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR => out.slice(&sizes(&d.range.global)),
            CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR => {
                let local: Vec<u64> = d.range.local.iter().map(|&v| v as u64).collect();
                out.slice(&sizes(&local))
            }
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}
