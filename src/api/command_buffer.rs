//! `cl_khr_command_buffer` 0.9.8 entry points (OpenCL 3.0 API spec section 5.X,
//! "Command-Buffers"): creation, recording, finalize, enqueue, queries.
//!
//! A command buffer has one queue, or several of devices of one root device under
//! `cl_khr_command_buffer_multi_device` (`command_buffer_multi.rs`), and the `command_queue`
//! argument of every recording function names one of them (NULL: the only one). NDRange commands take
//! the properties and mutable handles of `cl_khr_command_buffer_mutable_dispatch` (see
//! `mutable_dispatch.rs`); other commands take no property and no handle. Image commands are
//! `command_buffer_image.rs`; SVM commands exist for the extension lookup and fail as their
//! `clEnqueue*` counterparts do on a device without SVM (`CL_INVALID_OPERATION`).

pub use super::command_buffer_image::{
    clCommandCopyBufferToImageKHR, clCommandCopyImageKHR, clCommandCopyImageToBufferKHR,
    clCommandFillImageKHR,
};
use super::command_buffer_record::{buffer_of, finish, recording, recording_with};
use super::event::wait_list;
use super::info::InfoOut;
use super::memory::{pattern_bytes, rect_arrays};
use super::{properties, slice_from, status};
use crate::core::command::Command;
use crate::core::command_buffer::{debug_counters, CommandBuffer};
use crate::core::error::ClError;
use crate::core::kernel::{check_range, Kernel};
use crate::core::kernel_command::{held_buffers, Dispatch, KernelCommand};
use crate::core::object::{self, handle_of, lookup, register, ClObject};
use crate::core::queue::CommandQueue;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// `CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR`: simultaneous use (a command buffer may be
/// enqueued again while a run is pending: the secondary is recorded with `SIMULTANEOUS_USE`),
/// kernel printf (each enqueue prints the output of its printf kernels when it completes;
/// see `CommandBuffer::enqueue`), several queues of the device in one command buffer where
/// `cl_khr_command_buffer_multi_device` is reported; no device-side enqueue.
pub fn capabilities() -> cl_device_command_buffer_capabilities_khr {
    let multi = match super::command_buffer_multi::enabled() {
        true => CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR,
        false => 0,
    };
    CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
        | CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR
        | multi
}
/// `CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR`: none.
pub const REQUIRED_QUEUE_PROPERTIES: cl_command_queue_properties = 0;
/// `CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR`: every property vkcl queues have.
pub const SUPPORTED_QUEUE_PROPERTIES: cl_command_queue_properties =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;

/// `cl_command_buffer_flags_khr` bits defined by layered extensions: simultaneous use and
/// mutable (`cl_khr_command_buffer_mutable_dispatch`), device-side sync
/// (`cl_khr_command_buffer_multi_device`).
const LAYERED_FLAGS: cl_command_buffer_flags_khr = (1 << 0) | (1 << 1) | (1 << 2);

/// The flags vkcl supports: simultaneous use and mutable; device-side sync where the
/// multi-device extension is reported (every command buffer vkcl accepts syncs on the device).
fn supported_flags() -> cl_command_buffer_flags_khr {
    let sync = match super::command_buffer_multi::enabled() {
        true => CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR,
        false => 0,
    };
    CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR | CL_COMMAND_BUFFER_MUTABLE_KHR | sync
}
/// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR` (the value in OpenCL-Headers; opencl-sys
/// 0.6 has a stale one).
pub const COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS: cl_command_buffer_properties_khr = 0x12B7;

/// clCreateCommandBufferKHR. Errors: `CL_INVALID_VALUE` (`queues` NULL, `num_queues` 0, or
/// not 1 without the multi-device extension, an unknown property, a property given twice,
/// undefined flag bits), `CL_INVALID_COMMAND_QUEUE`, `CL_INVALID_CONTEXT` and
/// `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR` (queues of different contexts / root devices:
/// `command_buffer_multi::creation_queues`), `CL_INVALID_PROPERTY` (flags of layered
/// extensions vkcl does not report).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateCommandBufferKHR(
    num_queues: cl_uint,
    queues: *const cl_command_queue,
    props: *const cl_command_buffer_properties_khr,
    errcode_ret: *mut cl_int,
) -> cl_command_buffer_khr {
    super::object(errcode_ret, || {
        // SAFETY: queues holds num_queues handles per the API.
        let qs = unsafe { super::command_buffer_multi::creation_queues(num_queues, queues) }?;
        // CL_INVALID_VALUE if values specified in properties are not valid, or if the same
        // property name is specified more than once.
        // SAFETY: NULL or zero-terminated per the API.
        let pairs = unsafe { properties(props) }.map_err(|_| ClError(CL_INVALID_VALUE))?;
        let (mut flags, mut asserts) = (0, 0);
        for (key, value) in &pairs {
            match *key {
                CL_COMMAND_BUFFER_FLAGS_KHR if value & !LAYERED_FLAGS != 0 => {
                    return Err(ClError(CL_INVALID_VALUE))
                }
                // CL_INVALID_PROPERTY if values specified in properties are valid but are not
                // supported by all the devices associated with command-queues in queues.
                CL_COMMAND_BUFFER_FLAGS_KHR if value & !supported_flags() != 0 => {
                    return Err(ClError(CL_INVALID_PROPERTY))
                }
                CL_COMMAND_BUFFER_FLAGS_KHR => flags = *value,
                COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS
                    if super::mutable_dispatch::enabled()
                        && value & !crate::core::kernel_command::NO_ADDITIONAL_WORK_GROUPS == 0 =>
                {
                    asserts = *value
                }
                _ => return Err(ClError(CL_INVALID_VALUE)),
            }
        }
        // CL_INVALID_PROPERTY for the mutable flag where mutable dispatch is not reported.
        if flags & CL_COMMAND_BUFFER_MUTABLE_KHR != 0 && !super::mutable_dispatch::enabled() {
            return Err(ClError(CL_INVALID_PROPERTY));
        }
        let mut list: Vec<cl_command_buffer_properties_khr> =
            pairs.iter().flat_map(|(k, v)| [*k, *v]).collect();
        if !props.is_null() {
            list.push(0);
        }
        Ok(handle_of(&register(CommandBuffer::new(
            qs, list, flags, asserts,
        ))))
    })
}

/// clRetainCommandBufferKHR. Errors: `CL_INVALID_COMMAND_BUFFER_KHR`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainCommandBufferKHR(command_buffer: cl_command_buffer_khr) -> cl_int {
    status(|| object::retain::<CommandBuffer>(command_buffer))
}

/// clReleaseCommandBufferKHR: at reference count 0 the handle dies; the command buffer itself
/// lives until its pending enqueues complete. Errors: `CL_INVALID_COMMAND_BUFFER_KHR`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseCommandBufferKHR(
    command_buffer: cl_command_buffer_khr,
) -> cl_int {
    status(|| object::release::<CommandBuffer>(command_buffer).map(|_| ()))
}

/// clFinalizeCommandBufferKHR: records the commands once into a Vulkan secondary command
/// buffer. Errors: `CL_INVALID_COMMAND_BUFFER_KHR`, `CL_INVALID_OPERATION` (not in the
/// Recording state), `CL_OUT_OF_RESOURCES`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clFinalizeCommandBufferKHR(
    command_buffer: cl_command_buffer_khr,
) -> cl_int {
    status(|| lookup::<CommandBuffer>(command_buffer)?.finalize())
}

/// Whether a queue with `props` may run command buffers: none outside
/// [`SUPPORTED_QUEUE_PROPERTIES`], all of [`REQUIRED_QUEUE_PROPERTIES`].
// The required set is empty today; the check stays for when it is not.
#[allow(clippy::bad_bit_mask)]
fn compatible(props: cl_command_queue_properties) -> bool {
    props & !SUPPORTED_QUEUE_PROPERTIES == 0
        && props & REQUIRED_QUEUE_PROPERTIES == REQUIRED_QUEUE_PROPERTIES
}

/// clEnqueueCommandBufferKHR. Errors: `CL_INVALID_COMMAND_BUFFER_KHR`, `CL_INVALID_OPERATION`
/// (not Executable), `CL_INVALID_VALUE` (`queues` NULL with `num_queues` > 0 or the reverse,
/// `num_queues` given and not the creation count), `CL_INVALID_COMMAND_QUEUE`,
/// `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR` (queue properties outside
/// [`SUPPORTED_QUEUE_PROPERTIES`] or without [`REQUIRED_QUEUE_PROPERTIES`]),
/// `CL_INVALID_CONTEXT` / `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR` (a queue of another context /
/// device than the creation queue of its index: the current specification names
/// `CL_INVALID_DEVICE` for the device, the CTS at b8f8906c expects
/// `CL_INCOMPATIBLE_COMMAND_QUEUE_KHR`), `CL_INVALID_EVENT_WAIT_LIST`, `CL_INVALID_CONTEXT`
/// (events of another context).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueCommandBufferKHR(
    num_queues: cl_uint,
    queues: *mut cl_command_queue,
    command_buffer: cl_command_buffer_khr,
    num_events: cl_uint,
    event_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        let cb = lookup::<CommandBuffer>(command_buffer)?;
        cb.executable()?;
        // CL_INVALID_VALUE if queues is NULL and num_queues is > 0, or queues is not NULL and
        // num_queues is 0; or num_queues is > 0 and not the number set on creation.
        if queues.is_null() != (num_queues == 0)
            || (num_queues > 0 && num_queues as usize != cb.queues.len())
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // The creation queues unless others are given (no copy of the list then).
        let given;
        let qs: &[Arc<CommandQueue>] = if queues.is_null() {
            &cb.queues
        } else {
            // SAFETY: queues holds num_queues handles per the API.
            given = unsafe { super::command_buffer_multi::queue_list(num_queues, queues) }?;
            &given
        };
        for q in qs {
            // CL_INCOMPATIBLE_COMMAND_QUEUE_KHR if a queue has a property not in
            // CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR or lacks one of
            // CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR.
            if !compatible(q.props()) {
                return Err(ClError(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR));
            }
        }
        for (q, created) in qs.iter().zip(&cb.queues) {
            // CL_INVALID_CONTEXT if a queue does not have the context of the creation queue
            // at the same index.
            if !Arc::ptr_eq(&q.context, &created.context) {
                return Err(ClError(CL_INVALID_CONTEXT));
            }
            // A queue of another device than the creation queue at its index is not
            // compatible (the CTS's negative_enqueue_inconsistent_device).
            if !Arc::ptr_eq(&q.device, &created.device) {
                return Err(ClError(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR));
            }
        }
        // SAFETY: forwarded.
        let waits = unsafe { wait_list(&qs[0], num_events, event_list) }?;
        let ev = cb.enqueue(qs, &waits)?;
        // SAFETY: forwarded.
        unsafe { super::event::return_event(event, ev) };
        Ok(())
    })
}

/// clCommandBarrierWithWaitListKHR: waits for the listed commands (every earlier command when
/// the list is empty); every later command waits for it. Errors: those of [`recording`].
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandBarrierWithWaitListKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, Command::Barrier, sync_point) }
    })
}

/// clCommandCopyBufferKHR. Errors: those of [`recording`]; `CL_INVALID_MEM_OBJECT`,
/// `CL_INVALID_CONTEXT` (a buffer of another context), `CL_INVALID_VALUE` (a region out of
/// bounds), `CL_MEM_COPY_OVERLAP` (as clEnqueueCopyBuffer).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandCopyBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        let (src, dst) = (buffer_of(&cb, src_buffer)?, buffer_of(&cb, dst_buffer)?);
        let cmd = Command::copy(src, dst, src_offset, dst_offset, size)?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, cmd, sync_point) }
    })
}

/// clCommandCopyBufferRectKHR: one `vkCmdCopyBuffer` with a region per row (per slice where
/// rows are contiguous). Errors: those of [`recording`]; `CL_INVALID_MEM_OBJECT`,
/// `CL_INVALID_CONTEXT`, and the region errors of clEnqueueCopyBufferRect (`CL_INVALID_VALUE`,
/// `CL_MEM_COPY_OVERLAP`).
///
/// # Safety
/// Pointers as the OpenCL API requires (each non-NULL origin and region holds 3 values).
pub unsafe extern "C" fn clCommandCopyBufferRectKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        let (src, dst) = (buffer_of(&cb, src_buffer)?, buffer_of(&cb, dst_buffer)?);
        // SAFETY: each non-NULL array holds 3 values per the API.
        let arrays = unsafe { rect_arrays(src_origin, dst_origin, region) }?;
        let pitches = [
            src_row_pitch,
            src_slice_pitch,
            dst_row_pitch,
            dst_slice_pitch,
        ];
        let cmd = Command::copy_rect(src, dst, arrays, pitches)?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, cmd, sync_point) }
    })
}

/// clCommandFillBufferKHR: `vkCmdFillBuffer` where the pattern repeats every 4 bytes and the
/// region is 4-byte aligned, else a copy from a buffer filled with the pattern at record time.
/// Errors: those of [`recording`]; `CL_INVALID_MEM_OBJECT`, `CL_INVALID_CONTEXT`,
/// `CL_INVALID_VALUE` (as clEnqueueFillBuffer), `CL_OUT_OF_RESOURCES` (the pattern buffer).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandFillBufferKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    buffer: cl_mem,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait) = unsafe {
            recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        let m = buffer_of(&cb, buffer)?;
        // SAFETY: pattern holds pattern_size bytes per the API.
        let pattern = unsafe { pattern_bytes(pattern, pattern_size) }?;
        let cmd = Command::fill(m, pattern, offset, size)?;
        // SAFETY: forwarded.
        unsafe { finish(&cb, &wait, cmd, sync_point) }
    })
}

/// clCommandNDRangeKernelKHR: the arguments are captured now (later clSetKernelArg calls do
/// not change the recorded command). With `mutable_handle`, returns the command's
/// `cl_mutable_command_khr` (valid while the command buffer lives). Properties:
/// `CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR` (default: every field of
/// `CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR`) and `CL_MUTABLE_DISPATCH_ASSERTS_KHR`.
/// Errors: those of [`recording`] (`CL_INVALID_VALUE` for another property, or for properties
/// and handles while mutable dispatch is not reported); `CL_INVALID_KERNEL`,
/// `CL_INVALID_CONTEXT` (kernel of another context), `CL_INVALID_PROGRAM_EXECUTABLE`, the
/// NDRange errors of clEnqueueNDRangeKernel, `CL_INVALID_KERNEL_ARGS` (unless the properties
/// name arguments as updatable in a mutable command buffer: then clUpdateMutableCommandsKHR
/// may set them before enqueue),
/// `CL_OUT_OF_RESOURCES`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandNDRangeKernelKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (cb, wait, pairs) =
            unsafe { recording_with(command_buffer, command_queue, props, num, list) }?;
        let mutable = super::mutable_dispatch::enabled();
        let (mut updatable, mut asserts) = (super::mutable_dispatch::CAPABILITIES, 0);
        let mut seen = Vec::new();
        for (key, value) in &pairs {
            // CL_INVALID_VALUE if values specified in properties are not valid, or a property
            // is given twice.
            if seen.contains(key) {
                return Err(ClError(CL_INVALID_VALUE));
            }
            seen.push(*key);
            match *key {
                CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR
                    if mutable && value & !super::mutable_dispatch::CAPABILITIES == 0 =>
                {
                    updatable = *value
                }
                CL_MUTABLE_DISPATCH_ASSERTS_KHR
                    if mutable
                        && value & !crate::core::kernel_command::NO_ADDITIONAL_WORK_GROUPS == 0 =>
                {
                    asserts = *value
                }
                _ => return Err(ClError(CL_INVALID_VALUE)),
            }
        }
        // CL_INVALID_VALUE if mutable_handle is not NULL and mutable dispatch is not supported.
        if !mutable_handle.is_null() && !mutable {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let k = lookup::<Kernel>(kernel as *const c_void)?;
        // CL_INVALID_CONTEXT if the context associated with command_buffer and kernel is not
        // the same.
        if !Arc::ptr_eq(&cb.context, &k.program.context) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        let queue = &cb.queues[wait.queue];
        let device = &queue.device;
        if !k.program.has_executable_for(device) {
            return Err(ClError(CL_INVALID_PROGRAM_EXECUTABLE));
        }
        let n = work_dim.min(3) as usize;
        let opt = |p: *const usize| {
            // SAFETY: each non-NULL array holds work_dim entries per the API.
            (!p.is_null()).then(|| unsafe { slice_from(p, n) })
        };
        let range = check_range(
            &k,
            device,
            work_dim,
            opt(global_work_offset),
            opt(global_work_size),
            opt(local_work_size),
        )?;
        // Capture the arguments: values now, buffers retained by the command.
        let args = k.args.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let held = held_buffers(&args)?;
        // Deferred arguments: only where the command asks for updatable arguments explicitly
        // and the command buffer can take updates.
        let deferred = cb.is_mutable()
            && seen.contains(&CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR)
            && updatable & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR != 0;
        // CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified
        // (unless arguments are explicitly updatable in a mutable command buffer).
        if !deferred && args.iter().any(|a| a.is_none()) {
            return Err(ClError(CL_INVALID_KERNEL_ARGS));
        }
        let dispatch = Dispatch {
            range,
            local_given: !local_work_size.is_null(),
            args,
            held,
            device_ptrs: k.device_ptrs(),
        };
        let mut list: Vec<cl_command_properties_khr> =
            pairs.iter().flat_map(|(k, v)| [*k, *v]).collect();
        if !props.is_null() {
            list.push(0);
        }
        let command = Arc::new(KernelCommand::new(
            queue,
            command_buffer as usize,
            k,
            dispatch,
            list,
            updatable,
            asserts,
            deferred,
            !mutable_handle.is_null(),
        )?);
        let sp = cb.record_kernel(&wait, command.clone())?;
        if !mutable_handle.is_null() {
            let h = handle_of(&object::register_arc(command)) as cl_mutable_command_khr;
            // SAFETY: not NULL, writable per the API.
            unsafe { mutable_handle.write(h) };
        }
        // SAFETY: NULL or valid per the API.
        unsafe { super::write_opt(sync_point, sp) };
        Ok(())
    })
}

/// The image and SVM recording entry points: after the checks of [`recording`], the error of
/// their clEnqueue* counterpart on a device without images or SVM.
/// Errors: those of [`recording`], then `CL_INVALID_OPERATION`.
///
/// # Safety
/// As [`recording`].
unsafe fn unsupported(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        unsafe {
            recording(
                command_buffer,
                command_queue,
                props,
                num,
                list,
                mutable_handle,
            )
        }?;
        // CL_INVALID_OPERATION if the device does not support images (CL_DEVICE_IMAGE_SUPPORT
        // is CL_FALSE) / SVM (no CL_DEVICE_SVM_CAPABILITIES).
        Err(ClError(CL_INVALID_OPERATION))
    })
}

/// clCommandSVMMemcpyKHR: vkcl devices have no SVM. Errors: those of [`recording`], then
/// `CL_INVALID_OPERATION`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandSVMMemcpyKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    _dst_ptr: *mut c_void,
    _src_ptr: *const c_void,
    _size: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    _sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    // SAFETY: forwarded.
    unsafe {
        unsupported(
            command_buffer,
            command_queue,
            props,
            num,
            list,
            mutable_handle,
        )
    }
}

/// clCommandSVMMemFillKHR: vkcl devices have no SVM. Errors: those of [`recording`], then
/// `CL_INVALID_OPERATION`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCommandSVMMemFillKHR(
    command_buffer: cl_command_buffer_khr,
    command_queue: cl_command_queue,
    props: *const cl_command_properties_khr,
    _svm_ptr: *mut c_void,
    _pattern: *const c_void,
    _pattern_size: usize,
    _size: usize,
    num: cl_uint,
    list: *const cl_sync_point_khr,
    _sync_point: *mut cl_sync_point_khr,
    mutable_handle: *mut cl_mutable_command_khr,
) -> cl_int {
    // SAFETY: forwarded.
    unsafe {
        unsupported(
            command_buffer,
            command_queue,
            props,
            num,
            list,
            mutable_handle,
        )
    }
}

/// clGetCommandBufferInfoKHR. Errors: `CL_INVALID_COMMAND_BUFFER_KHR`, `CL_INVALID_VALUE`
/// (unknown name, `param_value_size` too small).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetCommandBufferInfoKHR(
    command_buffer: cl_command_buffer_khr,
    param_name: cl_command_buffer_info_khr,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let cb = lookup::<CommandBuffer>(command_buffer)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_COMMAND_BUFFER_QUEUES_KHR => {
                let queues: Vec<cl_command_queue> = cb
                    .queues
                    .iter()
                    .map(|q| handle_of(q) as cl_command_queue)
                    .collect();
                out.slice(&queues)
            }
            CL_COMMAND_BUFFER_NUM_QUEUES_KHR => out.scalar(cb.queues.len() as cl_uint),
            CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR => out.scalar(cb.header().ref_count()),
            CL_COMMAND_BUFFER_STATE_KHR => out.scalar(cb.state()),
            CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR => out.slice(&cb.properties),
            CL_COMMAND_BUFFER_CONTEXT_KHR => out.scalar(handle_of(&cb.context) as cl_context),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// Debug statistics for tests (not an OpenCL entry point): writes up to `n` counters to
/// `out` — [0] `vkQueueSubmit` calls, [1] device commands recorded into Vulkan command buffers
/// (copies, fills, dispatches), [2] secondary command buffers executed, [3] pipeline barriers
/// recorded into secondaries by finalize, [4] staging buffers allocated from Vulkan (not reused
/// from the pool), [5] buffer copies made by vkcl's copy shader (`backend/vulkan/copy_kernel.rs`)
/// — all since the library was loaded — and returns how many counters exist.
///
/// # Safety
/// `out` must be NULL or hold `n` writable `u64`s.
#[no_mangle]
pub unsafe extern "C" fn vkcl_debug_stats(out: *mut u64, n: usize) -> usize {
    let values = debug_counters();
    if !out.is_null() {
        for (i, v) in values.iter().take(n).enumerate() {
            // SAFETY: out holds n values per the caller.
            unsafe { out.add(i).write(*v) };
        }
    }
    values.len()
}
