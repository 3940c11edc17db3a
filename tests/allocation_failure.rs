//! Allocation failure (issue 19): buffers of `CL_DEVICE_MAX_MEM_ALLOC_SIZE` created and used
//! (a fill of each, so a lazy allocation happens too) until the device's memory runs out must
//! end in the specification's error, `CL_MEM_OBJECT_ALLOCATION_FAILURE` from clCreateBuffer
//! or `CL_MEM_OBJECT_ALLOCATION_FAILURE` / `CL_OUT_OF_RESOURCES` from the command that first
//! needs the storage (OpenCL 3.0 section 5.2.1, 5.2.2), never a crash; once the buffers are
//! released, the same context builds and runs a kernel with the host's answer. GPUs only: on a
//! CPU device (lavapipe) the heap is the host's memory, and filling it would take the machine.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

#[test]
fn running_out_of_device_memory_is_an_error_and_the_context_lives_on() {
    let env = Env::new();
    let ty: cl_device_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(env.device, CL_DEVICE_TYPE, s, v, r) });
    if ty & CL_DEVICE_TYPE_GPU == 0 {
        eprintln!("skipped: not a GPU (the heap is the host's memory)");
        return;
    }
    let global: u64 = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_GLOBAL_MEM_SIZE, s, v, r)
    });
    let max: u64 = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, s, v, r)
    });
    let mut held = Vec::new();
    let mut failure = None;
    for i in 0..global.div_ceil(max) + 2 {
        let mut err = 0;
        let m = unsafe {
            cl!(clCreateBuffer)(
                env.context,
                CL_MEM_READ_WRITE,
                max as usize,
                null_mut(),
                &mut err,
            )
        };
        if err != CL_SUCCESS {
            assert!(m.is_null(), "a handle with error {err}");
            failure = Some(("clCreateBuffer", i, err));
            break;
        }
        held.push(m);
        let word = 0x5a5a_5a5au32;
        let r = unsafe {
            cl!(clEnqueueFillBuffer)(
                env.queue,
                m,
                &word as *const u32 as *const c_void,
                4,
                0,
                max as usize,
                0,
                null(),
                null_mut(),
            )
        };
        let r = if r == CL_SUCCESS {
            unsafe { cl!(clFinish)(env.queue) }
        } else {
            r
        };
        if r != CL_SUCCESS {
            failure = Some(("fill", i, r));
            break;
        }
    }
    let (what, i, code) = failure.unwrap_or_else(|| {
        panic!(
            "{} buffers of {max} bytes each on a {global}-byte device all succeeded",
            held.len()
        )
    });
    eprintln!("after {i} buffers of {max} bytes ({global} bytes in all): {what} gave {code}");
    assert!(
        code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES,
        "{what} of buffer {i} gave {code}"
    );
    for m in held {
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
    // The context still works: a kernel with the host's answer.
    let k = env.kern(
        "__kernel void sq(__global int *a) { size_t i = get_global_id(0); a[i] *= a[i]; }",
        "sq",
    );
    let data: Vec<i32> = (0..4096).collect();
    let buf = env.buf(&data);
    arg_mem(k, 0, buf);
    env.run(k, &[4096], None, None);
    let want: Vec<i32> = data.iter().map(|x| x * x).collect();
    assert_eq!(env.read::<i32>(buf, 4096), want);
}
