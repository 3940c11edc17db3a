//! cl_khr_command_buffer_mutable_dispatch 0.9.5 through the real loader: updates of
//! arguments, global size and offset, local size (device results against host answers after
//! each update), copy-on-write while a run is pending, pipelined enqueue, mutable-command
//! queries, error codes; and that vkcl never waits for a whole queue or device to go idle.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::{Mutex, MutexGuard};

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const SOURCE: &str = r#"
__kernel void scale_add(__global const uint *a, __global uint *b, uint add) {
    size_t i = get_global_id(0);
    b[i] = a[i] * 3u + add + (uint)get_local_size(0) * 1000000u;
}
__kernel void bump(__global uint *b) {
    b[get_global_id(0)] += 1u;
}
"#;

fn mutable_cb(env: &Env) -> cl_command_buffer_khr {
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, props.as_ptr(), &mut err) };
    ok(err);
    cb
}

/// Records a 1-D NDRange of `k` and returns its mutable handle.
fn record(
    cb: cl_command_buffer_khr,
    k: cl_kernel,
    props: Option<&[cl_command_properties_khr]>,
    offset: usize,
    global: usize,
    local: Option<usize>,
) -> Result<cl_mutable_command_khr, cl_int> {
    let mut h = null_mut();
    let (o, g, l) = ([offset], [global], [local.unwrap_or(0)]);
    let r = unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            props.map_or(null(), |p| p.as_ptr()),
            k,
            1,
            o.as_ptr(),
            g.as_ptr(),
            if local.is_some() { l.as_ptr() } else { null() },
            0,
            null(),
            null_mut(),
            &mut h,
        )
    };
    if r == CL_SUCCESS {
        Ok(h)
    } else {
        Err(r)
    }
}

fn config(h: cl_mutable_command_khr) -> cl_mutable_dispatch_config_khr {
    dispatch_config(h)
}

fn update(cb: cl_command_buffer_khr, configs: &[cl_mutable_dispatch_config_khr]) -> cl_int {
    let types = vec![CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR; configs.len()];
    let mut ptrs: Vec<*const c_void> = configs
        .iter()
        .map(|c| c as *const _ as *const c_void)
        .collect();
    unsafe {
        ext!(clUpdateMutableCommandsKHR)(
            cb,
            configs.len() as u32,
            types.as_ptr(),
            ptrs.as_mut_ptr(),
        )
    }
}

fn arg<T>(index: u32, v: &T) -> cl_mutable_dispatch_arg_khr {
    cl_mutable_dispatch_arg_khr {
        arg_index: index,
        arg_size: std::mem::size_of::<T>(),
        arg_value: v as *const T as *const c_void,
    }
}

fn enqueue(cb: cl_command_buffer_khr, wait: &[cl_event]) -> cl_int {
    let w = if wait.is_empty() {
        null()
    } else {
        wait.as_ptr()
    };
    unsafe { ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, wait.len() as u32, w, null_mut()) }
}

fn state(cb: cl_command_buffer_khr) -> cl_command_buffer_state_khr {
    info_scalar(|s, v, r| unsafe {
        ext!(clGetCommandBufferInfoKHR)(cb, CL_COMMAND_BUFFER_STATE_KHR, s, v, r)
    })
}

fn sizes(h: cl_mutable_command_khr, name: cl_mutable_command_info_khr) -> Vec<usize> {
    let mut n = 0;
    ok(unsafe { ext!(clGetMutableCommandInfoKHR)(h, name, 0, null_mut(), &mut n) });
    let mut v = vec![0usize; n / 8];
    ok(unsafe {
        ext!(clGetMutableCommandInfoKHR)(h, name, n, v.as_mut_ptr() as *mut c_void, null_mut())
    });
    v
}

fn zero(env: &Env, m: cl_mem, n: usize) {
    let z = 0u32;
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            env.queue,
            m,
            &z as *const u32 as *const c_void,
            4,
            0,
            n * 4,
            0,
            null(),
            null_mut(),
        )
    });
}

/// The host answer of scale_add over [offset, offset + global) with work-group size `local`.
fn expect(a: &[u32], n: usize, offset: usize, global: usize, add: u32, local: u32) -> Vec<u32> {
    (0..n)
        .map(|i| {
            if i >= offset && i < offset + global {
                a[i] * 3 + add + local * 1_000_000
            } else {
                0
            }
        })
        .collect()
}

#[test]
fn device_reports_mutable_dispatch() {
    let _s = serial();
    let d = device();
    let exts =
        info_string(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_EXTENSIONS, s, v, r) });
    assert!(
        exts.split(' ')
            .any(|e| e == "cl_khr_command_buffer_mutable_dispatch"),
        "{exts}"
    );
    let caps: cl_mutable_dispatch_fields_khr = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR, s, v, r)
    });
    assert_eq!(
        caps, 0b11111,
        "offset, global size, local size, arguments, exec info"
    );
}

#[test]
fn updates_match_host_answers() {
    let _s = serial();
    let env = Env::new();
    const N: usize = 512;
    let k = env.kernel(env.build(SOURCE), "scale_add");
    let a: Vec<u32> = (0..N as u32).map(|i| i * 7 + 1).collect();
    let a2: Vec<u32> = (0..N as u32).map(|i| i ^ 0x55).collect();
    let abytes: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    let a2bytes: Vec<u8> = a2.iter().flat_map(|x| x.to_le_bytes()).collect();
    let src = env.buffer(CL_MEM_READ_WRITE, N * 4, Some(&abytes));
    let src2 = env.buffer(CL_MEM_READ_WRITE, N * 4, Some(&a2bytes));
    let out = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    let out2 = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    set_arg(k, 0, &src);
    set_arg(k, 1, &out);
    set_arg(k, 2, &5u32);
    let cb = mutable_cb(&env);
    let h = record(cb, k, None, 0, 256, Some(64)).unwrap();
    // Captured at record time: this later value changes nothing recorded.
    set_arg(k, 2, &99u32);
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    let run = |m: cl_mem| {
        zero(&env, m, N);
        ok(enqueue(cb, &[]));
        env.finish();
        env.read::<u32>(m, N)
    };
    assert_eq!(run(out), expect(&a, N, 0, 256, 5, 64));

    // A by-value argument.
    let add = 11u32;
    let args = [arg(2, &add)];
    ok(update(
        cb,
        &[cl_mutable_dispatch_config_khr {
            num_args: 1,
            arg_list: args.as_ptr(),
            ..config(h)
        }],
    ));
    assert_eq!(run(out), expect(&a, N, 0, 256, 11, 64));

    // Buffer arguments.
    let args = [arg(0, &src2), arg(1, &out2)];
    ok(update(
        cb,
        &[cl_mutable_dispatch_config_khr {
            num_args: 2,
            arg_list: args.as_ptr(),
            ..config(h)
        }],
    ));
    zero(&env, out, N);
    assert_eq!(run(out2), expect(&a2, N, 0, 256, 11, 64));
    assert!(
        env.read::<u32>(out, N).iter().all(|&x| x == 0),
        "old output untouched"
    );

    // Global size and offset (group counts come from device memory).
    let (off, glob) = ([64usize], [384usize]);
    ok(update(
        cb,
        &[cl_mutable_dispatch_config_khr {
            global_work_offset: off.as_ptr(),
            global_work_size: glob.as_ptr(),
            ..config(h)
        }],
    ));
    assert_eq!(run(out2), expect(&a2, N, 64, 384, 11, 64));
    assert_eq!(
        sizes(h, CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR),
        vec![64]
    );
    assert_eq!(
        sizes(h, CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR),
        vec![384]
    );

    // Local size (another pipeline: the secondary is recorded again), with work_dim given.
    let local = [32usize];
    ok(update(
        cb,
        &[cl_mutable_dispatch_config_khr {
            work_dim: 1,
            local_work_size: local.as_ptr(),
            ..config(h)
        }],
    ));
    assert_eq!(run(out2), expect(&a2, N, 64, 384, 11, 32));
    assert_eq!(sizes(h, CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR), vec![32]);

    // Two configs for one command in one call: the later one wins, both apply.
    let (v1, v2) = (1u32, 2u32);
    let (l1, l2) = ([arg(2, &v1)], [arg(2, &v2)]);
    ok(update(
        cb,
        &[
            cl_mutable_dispatch_config_khr {
                num_args: 1,
                arg_list: l1.as_ptr(),
                ..config(h)
            },
            cl_mutable_dispatch_config_khr {
                num_args: 1,
                arg_list: l2.as_ptr(),
                ..config(h)
            },
        ],
    ));
    assert_eq!(run(out2), expect(&a2, N, 64, 384, 2, 32));

    // The offset back to 0 (the pipeline specialized for a zero offset), then to another
    // non-zero one: every run sees its own offset.
    for o in [0usize, 96, 0] {
        let off = [o];
        ok(update(
            cb,
            &[cl_mutable_dispatch_config_khr {
                global_work_offset: off.as_ptr(),
                ..config(h)
            }],
        ));
        assert_eq!(run(out2), expect(&a2, N, o, 384, 2, 32), "offset {o}");
    }

    // Queries.
    let q: cl_command_queue = info_scalar(|s, v, r| unsafe {
        ext!(clGetMutableCommandInfoKHR)(h, CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR, s, v, r)
    });
    assert_eq!(q, env.queue);
    let c: cl_command_buffer_khr = info_scalar(|s, v, r| unsafe {
        ext!(clGetMutableCommandInfoKHR)(h, CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR, s, v, r)
    });
    assert_eq!(c, cb);
    let kk: cl_kernel = info_scalar(|s, v, r| unsafe {
        ext!(clGetMutableCommandInfoKHR)(h, CL_MUTABLE_DISPATCH_KERNEL_KHR, s, v, r)
    });
    assert_eq!(kk, k);
    let t: cl_command_type = info_scalar(|s, v, r| unsafe {
        ext!(clGetMutableCommandInfoKHR)(h, CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR, s, v, r)
    });
    assert_eq!(t, CL_COMMAND_NDRANGE_KERNEL);
    let dims: cl_uint = info_scalar(|s, v, r| unsafe {
        ext!(clGetMutableCommandInfoKHR)(h, CL_MUTABLE_DISPATCH_DIMENSIONS_KHR, s, v, r)
    });
    assert_eq!(dims, 1);
    let mut n = 1;
    ok(unsafe {
        ext!(clGetMutableCommandInfoKHR)(
            h,
            CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR,
            0,
            null_mut(),
            &mut n,
        )
    });
    assert_eq!(n, 0, "recorded without properties");
    unsafe {
        ext!(clReleaseCommandBufferKHR)(cb);
        cl!(clReleaseKernel)(k);
        for m in [src, src2, out, out2] {
            cl!(clReleaseMemObject)(m);
        }
    }
}

/// An update while a run is pending is copy-on-write: the pending run keeps what it was
/// enqueued with, the next run sees the update. The same command buffer is also enqueued
/// again before the earlier runs finished (pipelined enqueue, no flag needed in 0.9.8).
#[test]
fn pending_runs_never_see_an_update() {
    let _s = serial();
    let env = Env::new();
    const N: usize = 256;
    let k = env.kernel(env.build(SOURCE), "scale_add");
    let a: Vec<u32> = (0..N as u32).collect();
    let abytes: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    let src = env.buffer(CL_MEM_READ_WRITE, N * 4, Some(&abytes));
    let out = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    let out2 = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    zero(&env, out, N);
    zero(&env, out2, N);
    env.finish();
    set_arg(k, 0, &src);
    set_arg(k, 1, &out);
    set_arg(k, 2, &1u32);
    let cb = mutable_cb(&env);
    let h = record(cb, k, None, 0, N, Some(16)).unwrap();
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    let mut err = 0;
    let gate = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    ok(enqueue(cb, &[gate]));
    let add = 2u32;
    let args = [arg(1, &out2), arg(2, &add)];
    ok(update(
        cb,
        &[cl_mutable_dispatch_config_khr {
            num_args: 2,
            arg_list: args.as_ptr(),
            ..config(h)
        }],
    ));
    ok(enqueue(cb, &[]));
    ok(enqueue(cb, &[]));
    ok(unsafe { cl!(clSetUserEventStatus)(gate, CL_COMPLETE) });
    env.finish();
    assert_eq!(
        env.read::<u32>(out, N),
        expect(&a, N, 0, N, 1, 16),
        "the pending run kept its arguments"
    );
    assert_eq!(
        env.read::<u32>(out2, N),
        expect(&a, N, 0, N, 2, 16),
        "later runs see the update"
    );

    // Pipelined: one command buffer enqueued many times back to back accumulates.
    let bump = env.kernel(env.build(SOURCE), "bump");
    set_arg(bump, 0, &out);
    zero(&env, out, N);
    let cb2 = mutable_cb(&env);
    record(cb2, bump, None, 0, N, None).unwrap();
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb2) });
    for _ in 0..5 {
        ok(enqueue(cb2, &[]));
    }
    env.finish();
    assert!(env.read::<u32>(out, N).iter().all(|&x| x == 5));
    unsafe {
        cl!(clReleaseEvent)(gate);
        ext!(clReleaseCommandBufferKHR)(cb);
        ext!(clReleaseCommandBufferKHR)(cb2);
        cl!(clReleaseKernel)(k);
        cl!(clReleaseKernel)(bump);
        for m in [src, out, out2] {
            cl!(clReleaseMemObject)(m);
        }
    }
}

#[test]
fn deferred_arguments_and_error_codes() {
    let _s = serial();
    let env = Env::new();
    const N: usize = 64;
    let p = env.build(SOURCE);
    let k = env.kernel(p, "scale_add");
    let src = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    let out = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    zero(&env, src, N);
    set_arg(k, 0, &src);
    set_arg(k, 2, &3u32);
    // Argument 1 unset: allowed when arguments are updatable; FINALIZED until it is set.
    let cb = mutable_cb(&env);
    let props = [
        CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
        CL_MUTABLE_DISPATCH_ARGUMENTS_KHR,
        0,
    ];
    let h = record(cb, k, Some(&props), 0, N, None).unwrap();
    let upd = |c: cl_mutable_dispatch_config_khr| update(cb, &[c]);
    assert_eq!(upd(config(h)), CL_INVALID_OPERATION, "not finalized");
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    assert_eq!(state(cb), CL_COMMAND_BUFFER_STATE_FINALIZED_KHR);
    assert_eq!(enqueue(cb, &[]), CL_INVALID_OPERATION, "not executable");
    let mut pa = 0;
    ok(unsafe {
        ext!(clGetMutableCommandInfoKHR)(
            h,
            CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR,
            0,
            null_mut(),
            &mut pa,
        )
    });
    assert_eq!(pa, 3 * 8);
    let g = [N];
    assert_eq!(
        upd(cl_mutable_dispatch_config_khr {
            global_work_size: g.as_ptr(),
            ..config(h)
        }),
        CL_INVALID_OPERATION,
        "global size not in the updatable fields"
    );
    let bad_index = [arg(7, &out)];
    assert_eq!(
        upd(cl_mutable_dispatch_config_khr {
            num_args: 1,
            arg_list: bad_index.as_ptr(),
            ..config(h)
        }),
        CL_INVALID_ARG_INDEX
    );
    let bad_size = [cl_mutable_dispatch_arg_khr {
        arg_index: 1,
        arg_size: 3,
        arg_value: &out as *const cl_mem as *const c_void,
    }];
    assert_eq!(
        upd(cl_mutable_dispatch_config_khr {
            num_args: 1,
            arg_list: bad_size.as_ptr(),
            ..config(h)
        }),
        CL_INVALID_ARG_SIZE
    );
    assert_eq!(
        upd(cl_mutable_dispatch_config_khr {
            num_args: 1,
            ..config(h)
        }),
        CL_INVALID_VALUE,
        "count without list"
    );
    assert_eq!(
        upd(cl_mutable_dispatch_config_khr {
            work_dim: 2,
            ..config(h)
        }),
        CL_INVALID_VALUE,
        "work_dim changed"
    );
    assert_eq!(upd(config(null_mut())), CL_INVALID_MUTABLE_COMMAND_KHR);
    assert_eq!(
        upd(config(k as cl_mutable_command_khr)),
        CL_INVALID_MUTABLE_COMMAND_KHR
    );
    let types = [42u32];
    let c = config(h);
    let mut ptrs = [&c as *const _ as *const c_void];
    assert_eq!(
        unsafe { ext!(clUpdateMutableCommandsKHR)(cb, 1, types.as_ptr(), ptrs.as_mut_ptr()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe { ext!(clUpdateMutableCommandsKHR)(cb, 0, types.as_ptr(), ptrs.as_mut_ptr()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe {
            ext!(clUpdateMutableCommandsKHR)(null_mut(), 1, types.as_ptr(), ptrs.as_mut_ptr())
        },
        CL_INVALID_COMMAND_BUFFER_KHR
    );
    assert_eq!(
        unsafe { ext!(clGetMutableCommandInfoKHR)(h, 0x4242, 0, null_mut(), null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe {
            ext!(clGetMutableCommandInfoKHR)(
                null_mut(),
                CL_MUTABLE_DISPATCH_KERNEL_KHR,
                0,
                null_mut(),
                null_mut(),
            )
        },
        CL_INVALID_MUTABLE_COMMAND_KHR
    );
    // Setting the missing argument makes it executable.
    let args = [arg(1, &out)];
    ok(upd(cl_mutable_dispatch_config_khr {
        num_args: 1,
        arg_list: args.as_ptr(),
        ..config(h)
    }));
    assert_eq!(state(cb), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    ok(enqueue(cb, &[]));
    env.finish();
    assert!(env.read::<u32>(out, N).iter().all(|&x| x % 1_000_000 == 3));

    // Without the mutable flag: no updates.
    let mut err = 0;
    let plain = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, null(), &mut err) };
    ok(err);
    set_arg(k, 1, &out);
    let h2 = record(plain, k, None, 0, N, None).unwrap();
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(plain) });
    assert_eq!(
        update(plain, &[config(h2)]),
        CL_INVALID_OPERATION,
        "not created mutable"
    );
    assert_eq!(
        update(cb, &[config(h2)]),
        CL_INVALID_MUTABLE_COMMAND_KHR,
        "command of another command buffer"
    );

    // No additional work-groups: an update may not add groups.
    let cb3 = mutable_cb(&env);
    let asserts = [CL_MUTABLE_DISPATCH_ASSERTS_KHR, 1, 0];
    let h3 = record(cb3, k, Some(&asserts), 0, N / 2, Some(8)).unwrap();
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb3) });
    let more = [N];
    let fewer = [N / 4];
    assert_eq!(
        update(
            cb3,
            &[cl_mutable_dispatch_config_khr {
                global_work_size: more.as_ptr(),
                ..config(h3)
            }]
        ),
        CL_INVALID_OPERATION
    );
    ok(update(
        cb3,
        &[cl_mutable_dispatch_config_khr {
            global_work_size: fewer.as_ptr(),
            ..config(h3)
        }],
    ));
    // Work-size errors as clEnqueueNDRangeKernel (a local size of 0).
    let odd = [7usize];
    let l8 = [0usize];
    assert_eq!(
        update(
            cb3,
            &[cl_mutable_dispatch_config_khr {
                global_work_size: odd.as_ptr(),
                local_work_size: l8.as_ptr(),
                ..config(h3)
            }]
        ),
        CL_INVALID_WORK_GROUP_SIZE
    );
    // The mutable handle dies with its command buffer.
    unsafe { ext!(clReleaseCommandBufferKHR)(cb3) };
    assert_eq!(
        unsafe {
            ext!(clGetMutableCommandInfoKHR)(
                h3,
                CL_MUTABLE_DISPATCH_KERNEL_KHR,
                0,
                null_mut(),
                null_mut(),
            )
        },
        CL_INVALID_MUTABLE_COMMAND_KHR
    );
    unsafe {
        ext!(clReleaseCommandBufferKHR)(cb);
        ext!(clReleaseCommandBufferKHR)(plain);
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(src);
        cl!(clReleaseMemObject)(out);
    }
}

/// Nothing in vkcl waits for a whole queue or device to go idle: completion is always a
/// timeline-semaphore value.
#[test]
fn nothing_waits_for_idle() {
    fn walk(dir: &std::path::Path, hits: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, hits);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for pat in [
                    "queue_wait_idle",
                    "device_wait_idle",
                    "vkQueueWaitIdle",
                    "vkDeviceWaitIdle",
                ] {
                    if text.contains(pat) {
                        hits.push(format!("{}: {pat}", p.display()));
                    }
                }
            }
        }
    }
    let mut hits = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut hits,
    );
    assert!(hits.is_empty(), "{hits:?}");
}
