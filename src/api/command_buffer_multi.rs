//! `cl_khr_command_buffer_multi_device` 0.9.2 (OpenCL 3.0 API spec section 5.X.2, "Command-Buffers
//! and Multiple Devices"; `clRemapCommandBufferKHR`): command buffers of several queues, and
//! their deep copies onto other queues.
//!
//! What vkcl offers, and why: devices that share a root device share its `VkDevice`, so a
//! command buffer's commands for the root and its sub-devices go into one Vulkan command buffer
//! whose pipeline barriers are the sync points between them: device-side sync among a root
//! device and all its sub-devices (`CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR` lists the root,
//! which the specification says stands for its sub-devices). Devices of different roots have
//! different `VkDevice`s and nothing to sync them on the device, and vkcl does not fall back to
//! host-side sync: no `CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR`, so such a mix is
//! `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR`. Several queues of one device are allowed
//! (`CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR`). Remapping is explicit (queue i replaces
//! creation queue i) or automatic (creation queue i goes to `queues[i % num_queues]`: the
//! order the application gave, spread round the list).

use super::{slice_from, write_opt};
use crate::core::command_buffer::CommandBuffer;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::error::{ClError, ClResult};
use crate::core::kernel_command::KernelCommand;
use crate::core::object::{handle_of, lookup, register, ClObject};
use crate::core::queue::CommandQueue;
use crate::util::config::config;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// Whether `cl_khr_command_buffer_multi_device` is reported ([`config`]'s
/// `command_buffer_multi_device`).
pub fn enabled() -> bool {
    config().command_buffer_multi_device
}

/// `CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR`: explicit and automatic remapping; no
/// universal sync (see the module doc).
pub const PLATFORM_CAPABILITIES: cl_platform_command_buffer_capabilities_khr =
    CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR | CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR;

/// `CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR` of `device`: its root device (itself for a
/// root), with which it and every sub-device of that root sync on the device.
pub fn sync_devices(device: &Device) -> Vec<cl_device_id> {
    vec![device.root().header().handle() as cl_device_id]
}

/// The queues of `clCreateCommandBufferKHR`, checked by the rules of the specification
/// (creation's table "multi-device command-buffer creation configurations" with every device
/// having the multiple-queue capability and no universal sync).
/// Errors: `CL_INVALID_VALUE` (`queues` NULL, `num_queues` 0, or not 1 without the
/// extension), `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_CONTEXT` (queues of different
/// contexts), `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR` (devices of different root devices, with or
/// without `CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR`).
///
/// # Safety
/// `queues` NULL or holding `num_queues` handles.
pub(super) unsafe fn creation_queues(
    num_queues: cl_uint,
    queues: *const cl_command_queue,
) -> ClResult<Vec<Arc<CommandQueue>>> {
    // CL_INVALID_VALUE if queues is NULL.
    // CL_INVALID_VALUE if the multi-device extension is supported and num_queues is zero, or
    // if it is not supported and num_queues is not one.
    if queues.is_null() || num_queues == 0 || (num_queues != 1 && !enabled()) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: queues holds num_queues handles per the caller.
    let list = unsafe { queue_list(num_queues, queues) }?;
    same_context_and_root(&list, &list[0].context)?;
    Ok(list)
}

/// The command queues of the handle list `queues` (`num` handles).
/// Errors: `CL_INVALID_COMMAND_QUEUE` for a handle that is not a valid command queue.
///
/// # Safety
/// `queues` holds `num` handles.
pub(super) unsafe fn queue_list(
    num: cl_uint,
    queues: *const cl_command_queue,
) -> ClResult<Vec<Arc<CommandQueue>>> {
    // SAFETY: the caller's contract.
    unsafe { slice_from(queues, num as usize) }
        .iter()
        .map(|&h| lookup::<CommandQueue>(h as *const c_void))
        .collect()
}

/// Errors: `CL_INVALID_CONTEXT` if a queue's context is not `context`, then
/// `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR` if the queues' devices have different root devices.
fn same_context_and_root(list: &[Arc<CommandQueue>], context: &Arc<Context>) -> ClResult<()> {
    let first = &list[0];
    // CL_INVALID_CONTEXT if all the command-queues in queues do not have the same context.
    if list.iter().any(|q| !Arc::ptr_eq(&q.context, context)) {
        return Err(ClError(CL_INVALID_CONTEXT));
    }
    // CL_INCOMPATIBLE_COMMAND_QUEUE_KHR if a device cannot sync natively with the others
    // (CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR) and the platform has no universal sync.
    let root = first.device.root().header().handle();
    if list
        .iter()
        .any(|q| q.device.root().header().handle() != root)
    {
        return Err(ClError(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR));
    }
    Ok(())
}

/// The index among `cb`'s queues of a recording entry point's `command_queue`.
/// Errors: `CL_INVALID_COMMAND_QUEUE` (not NULL without the extension; NULL for a command
/// buffer of several queues; not a valid queue; a queue of the context that `cb` was not
/// created with), `CL_INVALID_CONTEXT` (a queue of another context).
pub(super) fn queue_index(cb: &CommandBuffer, command_queue: cl_command_queue) -> ClResult<usize> {
    if command_queue.is_null() {
        // CL_INVALID_COMMAND_QUEUE if command_queue is NULL and command_buffer was created
        // with more than one queue.
        return match cb.queues.len() {
            1 => Ok(0),
            _ => Err(ClError(CL_INVALID_COMMAND_QUEUE)),
        };
    }
    // CL_INVALID_COMMAND_QUEUE if the multi-device extension is not supported and
    // command_queue is not NULL.
    if !enabled() {
        return Err(ClError(CL_INVALID_COMMAND_QUEUE));
    }
    let q = lookup::<CommandQueue>(command_queue as *const c_void)?;
    // CL_INVALID_CONTEXT if the context associated with command_queue and command_buffer is
    // not the same.
    if !Arc::ptr_eq(&q.context, &cb.context) {
        return Err(ClError(CL_INVALID_CONTEXT));
    }
    // CL_INVALID_COMMAND_QUEUE if command_queue is not a queue listed on creation.
    cb.queues
        .iter()
        .position(|c| Arc::ptr_eq(c, &q))
        .ok_or(ClError(CL_INVALID_COMMAND_QUEUE))
}

/// clRemapCommandBufferKHR: a new command buffer (reference count 1) of `queues` holding a
/// deep copy of `command_buffer`'s commands, each on the queue of its creation queue's index
/// (`automatic` false: `queues` replaces the creation queues in order) or on
/// `queues[index % num_queues]` (`automatic` true), in the same state; `handles_ret[i]` is the
/// copy of `handles[i]`. Errors: `CL_INVALID_COMMAND_BUFFER_KHR`, `CL_INVALID_VALUE`
/// (`num_queues` 0 or `queues` NULL; `num_queues` not the creation count when not
/// automatic; `handles`/`handles_ret` NULL with `num_handles` > 0 or the reverse; a handle not
/// of `command_buffer`), `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_CONTEXT` (a queue of another
/// context), `CL_INVALID_OPERATION` (the extension not reported),
/// `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR` (a queue of another root device than the command
/// buffer's: its copies and fills are recorded for that root's `VkDevice`),
/// `CL_INVALID_PROGRAM_EXECUTABLE` (a kernel not built for a new queue's device),
/// `CL_OUT_OF_RESOURCES`. `handles_ret` is written only on success.
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn clRemapCommandBufferKHR(
    command_buffer: cl_command_buffer_khr,
    automatic: cl_bool,
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    num_handles: cl_uint,
    handles: *const cl_mutable_command_khr,
    handles_ret: *mut cl_mutable_command_khr,
    errcode_ret: *mut cl_int,
) -> cl_command_buffer_khr {
    super::object(errcode_ret, || {
        let cb = lookup::<CommandBuffer>(command_buffer)?;
        // CL_INVALID_OPERATION if the platform does not support remapping.
        if !enabled() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // CL_INVALID_VALUE if num_queues is 0, or if queues is NULL.
        // CL_INVALID_VALUE if automatic is CL_FALSE and num_queues is not the number of
        // queues used on creation of command_buffer.
        if num_queues == 0
            || queues.is_null()
            || (automatic == CL_FALSE && num_queues as usize != cb.queues.len())
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // CL_INVALID_VALUE if handles or handles_ret is NULL and num_handles is > 0, or
        // either is not NULL and num_handles is 0.
        if (num_handles > 0 && (handles.is_null() || handles_ret.is_null()))
            || (num_handles == 0 && (!handles.is_null() || !handles_ret.is_null()))
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: handles holds num_handles handles per the API.
        let wanted = unsafe { slice_from(handles, num_handles as usize) }
            .iter()
            .map(|&h| {
                // CL_INVALID_VALUE if any handle in handles is not a valid command handle
                // belonging to command_buffer.
                let k = lookup::<KernelCommand>(h as *const c_void)
                    .map_err(|_| ClError(CL_INVALID_VALUE))?;
                match k.command_buffer == command_buffer as usize {
                    true => Ok(k),
                    false => Err(ClError(CL_INVALID_VALUE)),
                }
            })
            .collect::<ClResult<Vec<_>>>()?;
        // CL_INVALID_COMMAND_QUEUE if any command-queue in queues is not valid.
        // SAFETY: queues holds num_queues handles per the API.
        let list = unsafe { queue_list(num_queues, queues) }?;
        // CL_INVALID_CONTEXT if command_buffer and all the queues do not have the same context.
        same_context_and_root(&list, &cb.context)?;
        if list[0].device.root().header().handle() != cb.queues[0].device.root().header().handle() {
            return Err(ClError(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR));
        }
        let n = list.len();
        let copy = register(CommandBuffer::new(
            list,
            cb.properties.clone(),
            cb.flags,
            cb.asserts,
        ));
        let handle = handle_of(&copy) as usize;
        // On an error, `copy` (count 1) is released with its partial recording.
        let pairs = match copy.copy_commands(&cb, handle, &|i| i % n) {
            Ok(p) => p,
            Err(e) => {
                let _ = crate::core::object::release::<CommandBuffer>(handle as *const c_void);
                return Err(e);
            }
        };
        for (i, k) in wanted.iter().enumerate() {
            let new = pairs
                .iter()
                .find(|(old, _)| Arc::ptr_eq(old, k))
                .map(|(_, new)| handle_of(new) as cl_mutable_command_khr)
                .unwrap_or(std::ptr::null_mut());
            // SAFETY: handles_ret holds num_handles writable handles per the API.
            unsafe { write_opt(handles_ret.add(i), new) };
        }
        Ok(handle as cl_command_buffer_khr)
    })
}
