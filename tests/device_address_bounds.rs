//! Device addresses (cl_ext_buffer_device_address) under the checked mode
//! `VKCL_BOUNDS_CHECK=1`: valid device pointers pass (an argument pointing inside a buffer and
//! reaching before it, a buffer reached through a pointer in memory and listed with
//! `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`, a sub-buffer of an addressable buffer reaching its
//! parent), and invalid ones fail the command with `CL_OUT_OF_RESOURCES` instead of touching
//! memory (an address past every buffer, NULL, a buffer reached through memory but not listed),
//! also in command buffers, where a mutable update of the list makes the launch valid.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn env() -> Env {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used in this
    // process; every test of this binary wants the same value.
    unsafe { std::env::set_var("VKCL_BOUNDS_CHECK", "1") };
    Env::new()
}

/// A buffer of `data` created with `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` and its address.
fn addressable<T: Copy>(env: &Env, data: &[T]) -> (cl_mem, u64) {
    let props = [
        CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT,
        CL_TRUE as cl_mem_properties,
        0,
    ];
    let mut err = 0;
    let m = unsafe {
        cl!(clCreateBufferWithProperties)(
            env.context,
            props.as_ptr(),
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            std::mem::size_of_val(data),
            data.as_ptr() as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    let mut a = 0u64;
    ok(unsafe {
        cl!(clGetMemObjectInfo)(
            m,
            CL_MEM_DEVICE_ADDRESS_EXT,
            8,
            &mut a as *mut u64 as *mut c_void,
            null_mut(),
        )
    });
    (m, a)
}

/// Enqueues `k` over one item and returns its event's status (`CL_COMPLETE` or the error).
fn run_status(env: &Env, k: cl_kernel) -> cl_int {
    let g = [1usize];
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            &mut ev,
        )
    });
    unsafe { cl!(clWaitForEvents)(1, &ev) };
    let status: cl_int = info_scalar(|s, v, r| unsafe {
        cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, s, v, r)
    });
    unsafe { cl!(clReleaseEvent)(ev) };
    status
}

fn set_device_ptrs(k: cl_kernel, ptrs: &[u64]) {
    ok(unsafe {
        cl!(clSetKernelExecInfo)(
            k,
            CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT,
            std::mem::size_of_val(ptrs),
            if ptrs.is_empty() {
                null()
            } else {
                ptrs.as_ptr() as *const c_void
            },
        )
    });
}

const SOURCE: &str = r#"
__kernel void around(__global int *p, __global int *out) {
    out[0] = p[-2];
    p[1] = 9;
}
__kernel void deref(__global ulong *table, __global int *out) {
    out[0] = (*(__global int * __global *)table)[3];
}
"#;

#[test]
fn device_pointer_arguments_are_checked_against_their_whole_buffer() {
    let env = env();
    let data: Vec<i32> = (0..64).collect();
    let (m, base) = addressable(&env, &data);
    let out = env.zeros::<i32>(1);
    let k = env.kern(SOURCE, "around");
    arg_mem(k, 1, out);
    // Inside the buffer, reaching two elements before the pointer.
    ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, base + 4 * 10) });
    assert_eq!(run_status(&env, k), CL_COMPLETE);
    assert_eq!(env.read::<i32>(out, 1)[0], 8);
    assert_eq!(env.read::<i32>(m, 64)[11], 9);
    // p[-2] before the buffer's start, p past its end, NULL: refused, nothing written.
    let neighbour = env.buf(&vec![5i32; 4096]);
    for p in [base + 4, base + 4 * 64 + 4096, 0] {
        ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, p) });
        assert_eq!(run_status(&env, k), CL_OUT_OF_RESOURCES, "pointer {p:#x}");
    }
    assert!(env.read::<i32>(neighbour, 4096).iter().all(|&v| v == 5));
    // A sub-buffer of the addressable buffer, set with clSetKernelArg, reaches its parent.
    let region = cl_buffer_region {
        origin: 128,
        size: 64,
    };
    let mut err = 0;
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            m,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    arg_mem(k, 0, sub);
    assert_eq!(run_status(&env, k), CL_COMPLETE);
    assert_eq!(env.read::<i32>(out, 1)[0], 30);
    // A plain buffer's sub-buffer keeps its window: p[-2] is outside it.
    let plain = env.buf(&data);
    let psub = unsafe {
        cl!(clCreateSubBuffer)(
            plain,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    arg_mem(k, 0, psub);
    assert_eq!(run_status(&env, k), CL_OUT_OF_RESOURCES);
    for x in [psub, plain, sub, neighbour, m, out] {
        unsafe { cl!(clReleaseMemObject)(x) };
    }
}

#[test]
fn pointers_found_in_memory_need_the_exec_info_list() {
    let env = env();
    let data: Vec<i32> = (100..164).collect();
    let (m, base) = addressable(&env, &data);
    let (table, out) = (env.buf(&[base]), env.zeros::<i32>(1));
    let k = env.kern(SOURCE, "deref");
    arg_mem(k, 0, table);
    arg_mem(k, 1, out);
    // Not listed: the access is outside every buffer of the launch.
    assert_eq!(run_status(&env, k), CL_OUT_OF_RESOURCES);
    // Listed (any address inside it names the buffer).
    set_device_ptrs(k, &[base + 100]);
    assert_eq!(run_status(&env, k), CL_COMPLETE);
    assert_eq!(env.read::<i32>(out, 1)[0], 103);
    // Cleared again.
    set_device_ptrs(k, &[]);
    assert_eq!(run_status(&env, k), CL_OUT_OF_RESOURCES);

    // A command buffer captures the (empty) list; a mutable update supplies it.
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, props.as_ptr(), &mut err) };
    ok(err);
    let g = [1usize];
    let mut h = null_mut();
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
            &mut h,
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    assert_eq!(
        run_command_buffer(cb),
        (
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
            CL_OUT_OF_RESOURCES
        )
    );
    let list = [base];
    let info = cl_mutable_dispatch_exec_info_khr {
        param_name: CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT,
        param_value_size: 8,
        param_value: list.as_ptr() as *const c_void,
    };
    let c = cl_mutable_dispatch_config_khr {
        command: h,
        num_args: 0,
        num_svm_args: 0,
        num_exec_infos: 1,
        work_dim: 0,
        arg_list: null(),
        arg_svm_list: null(),
        exec_info_list: &info,
        global_work_offset: null(),
        global_work_size: null(),
        local_work_size: null(),
    };
    let types = [CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR];
    let mut ptrs = [&c as *const _ as *const c_void];
    ok(unsafe { ext!(clUpdateMutableCommandsKHR)(cb, 1, types.as_ptr(), ptrs.as_mut_ptr()) });
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            env.queue,
            out,
            CL_TRUE,
            0,
            4,
            [0i32].as_ptr() as *const c_void,
            0,
            null(),
            null_mut(),
        )
    });
    assert_eq!(run_command_buffer(cb), (CL_SUCCESS, CL_COMPLETE));
    assert_eq!(env.read::<i32>(out, 1)[0], 103);
    unsafe { ext!(clReleaseCommandBufferKHR)(cb) };
    for x in [m, table, out] {
        unsafe { cl!(clReleaseMemObject)(x) };
    }
}
