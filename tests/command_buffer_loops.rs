//! Long loops in NDRange commands of command buffers (`cl_khr_command_buffer`, mutable
//! dispatch) through the real loader (issue 18, finding 2): llvmpipe before Mesa 25 ends every
//! loop of a shader call once 65535 loop passes are spent, and each enqueue of a command
//! buffer must then fail with `CL_OUT_OF_RESOURCES` on its event (never report success with
//! cut-off data), while enqueues whose loops stay under the limit, before or after a failed
//! one, succeed with the host's answer. Where the driver has no limit (lavapipe 25.0.7) the
//! long loops must be right. `tests/loops.rs` has the queue-launch versions.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const SOURCE: &str = r#"
// Each item counts to n through a volatile pointer, so no compiler can fold the loop; n comes
// from an argument or from memory.
kernel void count(global int *out, int n) {
    volatile global int *v = out + get_global_id(0);
    *v = 0;
    for (int i = 0; i < n; i++) *v += 1;
}
kernel void count_from(global int *out, global const int *n) {
    volatile global int *v = out + get_global_id(0);
    *v = 0;
    for (int i = 0; i < n[0]; i++) *v += 1;
}
"#;

/// Whether the device is llvmpipe before Mesa 25 (lavapipe 22.3.6 here), whose loop limiter
/// cuts loops after 65535 passes: `CL_DRIVER_VERSION` quotes Vulkan's driverInfo ("Mesa
/// 22.3.6 (LLVM 15.0.6)").
fn has_loop_limit(env: &Env) -> bool {
    let name =
        info_string(|n, p, r| unsafe { cl!(clGetDeviceInfo)(env.device, CL_DEVICE_NAME, n, p, r) });
    let driver = info_string(|n, p, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DRIVER_VERSION, n, p, r)
    });
    let major = driver
        .split("Mesa ")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    name.contains("llvmpipe") && major.is_some_and(|m| m < 25)
}

fn create(env: &Env, mutable: bool) -> cl_command_buffer_khr {
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        if mutable {
            CL_COMMAND_BUFFER_MUTABLE_KHR
        } else {
            0
        },
        0,
    ];
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, props.as_ptr(), &mut err) };
    ok(err);
    cb
}

/// Records a 1-D NDRange of `k` over `items` (one group) and finalizes; returns the mutable
/// handle.
fn record(cb: cl_command_buffer_khr, k: cl_kernel, items: usize) -> cl_mutable_command_khr {
    let mut h = null_mut();
    let (g, l) = ([items], [items]);
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            g.as_ptr(),
            l.as_ptr(),
            0,
            null(),
            null_mut(),
            &mut h,
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    h
}

/// Checks one run of a command buffer whose every item counted to `n` into `out`: on a device
/// with the loop limit and `n` past it, the run failed with CL_OUT_OF_RESOURCES; otherwise it
/// succeeded with `n` in every item.
fn check(env: &Env, (waited, status): (cl_int, cl_int), out: cl_mem, items: usize, n: i32) {
    if has_loop_limit(env) && n >= 65535 {
        assert_eq!(status, CL_OUT_OF_RESOURCES, "count to {n}: event status");
        assert_eq!(
            waited, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
            "count to {n}: clWaitForEvents"
        );
    } else {
        assert_eq!((waited, status), (CL_SUCCESS, CL_COMPLETE), "count to {n}");
        let got: Vec<i32> = env.read(out, items);
        assert_eq!(got, vec![n; items], "count to {n}: wrong data");
    }
}

#[test]
fn long_loop_in_a_command_buffer_fails_or_is_right() {
    let env = Env::new();
    eprintln!("device has llvmpipe's loop limit: {}", has_loop_limit(&env));
    let items = 4;
    let (out, n) = (env.zeros::<i32>(items), 65_536i32);
    let k = env.kern(SOURCE, "count");
    arg_mem(k, 0, out);
    set_arg(k, 1, &n);
    let cb = create(&env, false);
    record(cb, k, items);
    for _ in 0..2 {
        check(&env, run_command_buffer(cb), out, items, n);
    }
    // Without an event: clFinish returns once the failed run completed.
    ok(unsafe { ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, null(), null_mut()) });
    env.finish();
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    unsafe { cl!(clReleaseKernel)(k) };
    unsafe { cl!(clReleaseMemObject)(out) };
}

#[test]
fn short_loops_in_a_command_buffer_succeed_around_failed_runs() {
    let env = Env::new();
    let items = 8;
    let out = env.zeros::<i32>(items);
    let nbuf = env.zeros::<i32>(1);
    let k = env.kern(SOURCE, "count_from");
    arg_mem(k, 0, out);
    arg_mem(k, 1, nbuf);
    let cb = create(&env, false);
    record(cb, k, items);
    let set_n = |n: i32| {
        ok(unsafe {
            cl!(clEnqueueWriteBuffer)(
                env.queue,
                nbuf,
                CL_TRUE,
                0,
                4,
                &n as *const i32 as *const c_void,
                0,
                null(),
                null_mut(),
            )
        })
    };
    // Short twice (the second enqueued before the first is waited for), long, then short:
    // a raised flag must not leak into the runs after it.
    set_n(1000);
    ok(unsafe { ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, null(), null_mut()) });
    check(&env, run_command_buffer(cb), out, items, 1000);
    for n in [70_000, 3_000, 100_000, 65_534] {
        set_n(n);
        check(&env, run_command_buffer(cb), out, items, n);
    }
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    unsafe { cl!(clReleaseKernel)(k) };
    unsafe { cl!(clReleaseMemObject)(out) };
    unsafe { cl!(clReleaseMemObject)(nbuf) };
}

#[test]
fn mutated_loop_counts_in_a_command_buffer() {
    let env = Env::new();
    if !env.has_extension("cl_khr_command_buffer_mutable_dispatch") {
        eprintln!("skipped: no cl_khr_command_buffer_mutable_dispatch");
        return;
    }
    let items = 2;
    let out = env.zeros::<i32>(items);
    let k = env.kern(SOURCE, "count");
    let first = 65_536i32;
    arg_mem(k, 0, out);
    set_arg(k, 1, &first);
    let cb = create(&env, true);
    let h = record(cb, k, items);
    check(&env, run_command_buffer(cb), out, items, first);
    for n in [500i32, 200_000, 7, 65_535] {
        let a = cl_mutable_dispatch_arg_khr {
            arg_index: 1,
            arg_size: 4,
            arg_value: &n as *const i32 as *const c_void,
        };
        let config = cl_mutable_dispatch_config_khr {
            num_args: 1,
            arg_list: &a,
            ..dispatch_config(h)
        };
        ok(update_one(cb, &config));
        check(&env, run_command_buffer(cb), out, items, n);
    }
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    unsafe { cl!(clReleaseKernel)(k) };
    unsafe { cl!(clReleaseMemObject)(out) };
}
