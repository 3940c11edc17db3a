//! `cl_khr_command_buffer_multi_device` 0.9.2: command buffers whose commands go to several
//! queues (two sub-devices of the default device, and two queues of one device), sync points
//! across devices, `clRemapCommandBufferKHR` (explicit and automatic, mutable handles, the
//! recording state), the queries and each error code the extension adds, every result against
//! the host. The extension hidden (`VKCL_COMMAND_BUFFER_MULTI_DEVICE=0`):
//! tests/command_buffer_single_queue.rs.
mod common;
use common::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};

const N: usize = 4096;

/// Serializes the tests that read vkcl's process-wide debug counters around a finalize.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const SRC: &str = r#"
__kernel void fill(__global uint *a, uint k) {
    size_t i = get_global_id(0);
    a[i] = (uint)i * k + 7u;
}
__kernel void next(__global const uint *a, __global uint *b) {
    size_t i = get_global_id(0);
    // Reads another work-item's element: wrong unless every write of `fill` came first.
    b[i] = a[(i * 17u) % get_global_size(0)] + 1u;
}
"#;

/// Two sub-devices of the default device (each a partition of one compute unit, made by two
/// partitions, so the test runs on a device of any size) in one context, a queue on each and
/// one on the root, the program built for all three.
struct Multi {
    root: cl_device_id,
    subs: [cl_device_id; 2],
    context: cl_context,
    /// Queues on the sub-devices, then the root.
    queues: [cl_command_queue; 3],
    program: cl_program,
}

impl Multi {
    fn new() -> Multi {
        let root = device();
        let by_one = [
            CL_DEVICE_PARTITION_BY_COUNTS,
            1,
            CL_DEVICE_PARTITION_BY_COUNTS_LIST_END,
            0,
        ];
        let a = split(root, &by_one).expect("a sub-device of one unit")[0];
        let b = split(root, &by_one).expect("another one")[0];
        let devices = [a, b, root];
        let mut err = 0;
        let context = unsafe {
            cl!(clCreateContext)(null(), 3, devices.as_ptr(), None, null_mut(), &mut err)
        };
        ok(err);
        let queues = devices.map(|d| {
            let q =
                unsafe { cl!(clCreateCommandQueueWithProperties)(context, d, null(), &mut err) };
            ok(err);
            q
        });
        let program = build_for(context, &[]);
        Multi {
            root,
            subs: [a, b],
            context,
            queues,
            program,
        }
    }

    fn kernel(&self, name: &str) -> cl_kernel {
        let mut err = 0;
        let n = CString::new(name).unwrap();
        let k = unsafe { cl!(clCreateKernel)(self.program, n.as_ptr(), &mut err) };
        ok(err);
        k
    }

    fn buffer(&self) -> cl_mem {
        let mut err = 0;
        let m = unsafe {
            cl!(clCreateBuffer)(self.context, CL_MEM_READ_WRITE, N * 4, null_mut(), &mut err)
        };
        ok(err);
        m
    }

    /// The contents of `m` once every queue has finished.
    fn read(&self, m: cl_mem) -> Vec<u32> {
        for q in self.queues {
            ok(unsafe { cl!(clFinish)(q) });
        }
        let mut v = vec![0u32; N];
        ok(unsafe {
            cl!(clEnqueueReadBuffer)(
                self.queues[2],
                m,
                CL_TRUE,
                0,
                N * 4,
                v.as_mut_ptr() as *mut c_void,
                0,
                null(),
                null_mut(),
            )
        });
        v
    }
}

impl Drop for Multi {
    fn drop(&mut self) {
        unsafe {
            for q in self.queues {
                cl!(clFinish)(q);
                cl!(clReleaseCommandQueue)(q);
            }
            cl!(clReleaseProgram)(self.program);
            cl!(clReleaseContext)(self.context);
        }
        release_all(&self.subs);
    }
}

/// The program of [`SRC`] built for `devices` of `context` (all of its devices when empty).
fn build_for(context: cl_context, devices: &[cl_device_id]) -> cl_program {
    let mut err = 0;
    let src = CString::new(SRC).unwrap();
    let ptrs = [src.as_ptr()];
    let p = unsafe {
        cl!(clCreateProgramWithSource)(context, 1, ptrs.as_ptr() as *mut _, null(), &mut err)
    };
    ok(err);
    let list = if devices.is_empty() {
        null()
    } else {
        devices.as_ptr()
    };
    ok(unsafe { cl!(clBuildProgram)(p, devices.len() as cl_uint, list, null(), None, null_mut()) });
    p
}

fn create(
    queues: &[cl_command_queue],
    flags: cl_command_buffer_flags_khr,
) -> Result<cl_command_buffer_khr, cl_int> {
    let props = [CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0];
    let mut err = 0;
    let cb = unsafe {
        ext!(clCreateCommandBufferKHR)(
            queues.len() as cl_uint,
            queues.as_ptr(),
            props.as_ptr(),
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        Ok(cb)
    } else {
        Err(err)
    }
}

/// Records an NDRange of `N` work-items of `k` to `queue` after `wait`; returns the status,
/// the sync point and (when `handle`) the mutable handle.
fn ndrange(
    cb: cl_command_buffer_khr,
    queue: cl_command_queue,
    k: cl_kernel,
    wait: &[cl_sync_point_khr],
    handle: bool,
) -> (cl_int, cl_sync_point_khr, cl_mutable_command_khr) {
    let (mut sp, mut h) = (0, null_mut());
    let global = [N];
    let r = unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            queue,
            null(),
            k,
            1,
            null(),
            global.as_ptr(),
            null(),
            wait.len() as cl_uint,
            if wait.is_empty() {
                null()
            } else {
                wait.as_ptr()
            },
            &mut sp,
            if handle { &mut h } else { null_mut() },
        )
    };
    (r, sp, h)
}

fn copy(
    cb: cl_command_buffer_khr,
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    wait: &[cl_sync_point_khr],
) -> (cl_int, cl_sync_point_khr) {
    let mut sp = 0;
    let r = unsafe {
        ext!(clCommandCopyBufferKHR)(
            cb,
            queue,
            null(),
            src,
            dst,
            0,
            0,
            N * 4,
            wait.len() as cl_uint,
            if wait.is_empty() {
                null()
            } else {
                wait.as_ptr()
            },
            &mut sp,
            null_mut(),
        )
    };
    (r, sp)
}

fn enqueue(cb: cl_command_buffer_khr, queues: &[cl_command_queue]) -> cl_int {
    let mut qs = queues.to_vec();
    let p = if qs.is_empty() {
        null_mut()
    } else {
        qs.as_mut_ptr()
    };
    unsafe { ext!(clEnqueueCommandBufferKHR)(qs.len() as cl_uint, p, cb, 0, null(), null_mut()) }
}

/// clFinalizeCommandBufferKHR (serialized: it counts barriers, see [`serial`]).
fn finalize(cb: cl_command_buffer_khr) {
    let _s = serial();
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
}

fn release_cb(cb: cl_command_buffer_khr) {
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
}

fn remap(
    cb: cl_command_buffer_khr,
    automatic: bool,
    queues: &[cl_command_queue],
    handles: &[cl_mutable_command_khr],
) -> (
    Result<cl_command_buffer_khr, cl_int>,
    Vec<cl_mutable_command_khr>,
) {
    let mut ret = vec![null_mut(); handles.len()];
    let mut err = 0;
    let _s = serial();
    let copy = unsafe {
        ext!(clRemapCommandBufferKHR)(
            cb,
            if automatic { CL_TRUE } else { CL_FALSE },
            queues.len() as cl_uint,
            if queues.is_empty() {
                null()
            } else {
                queues.as_ptr()
            },
            handles.len() as cl_uint,
            if handles.is_empty() {
                null()
            } else {
                handles.as_ptr()
            },
            if handles.is_empty() {
                null_mut()
            } else {
                ret.as_mut_ptr()
            },
            &mut err,
        )
    };
    match err {
        CL_SUCCESS => (Ok(copy), ret),
        e => {
            assert!(copy.is_null(), "NULL with an error");
            (Err(e), ret)
        }
    }
}

/// Asserts `got == want`, naming the first difference (not printing 4096 numbers).
#[track_caller]
fn same(got: &[u32], want: &[u32], what: &str) {
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i} is {}, want {}", got[i], want[i]);
    }
}

/// The host's answer of `fill(k)` then `next`.
fn expected(k: u32) -> Vec<u32> {
    let a: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(k).wrapping_add(7))
        .collect();
    (0..N).map(|i| a[(i * 17) % N] + 1).collect()
}

/// Records `fill(k)` on `qa`, `next` on `qb` after it (a sync point between two devices) and
/// a copy of `b` into `c` on `qa` after that; returns the NDRange handles.
fn record_chain(
    m: &Multi,
    cb: cl_command_buffer_khr,
    (qa, qb): (cl_command_queue, cl_command_queue),
    (a, b, c): (cl_mem, cl_mem, cl_mem),
    k: u32,
) -> [cl_mutable_command_khr; 2] {
    let (fill, next) = (m.kernel("fill"), m.kernel("next"));
    arg_mem(fill, 0, a);
    set_arg(fill, 1, &k);
    arg_mem(next, 0, a);
    arg_mem(next, 1, b);
    let (r, s1, h1) = ndrange(cb, qa, fill, &[], true);
    ok(r);
    let (r, s2, h2) = ndrange(cb, qb, next, &[s1], true);
    ok(r);
    ok(copy(cb, qa, b, c, &[s2]).0);
    [h1, h2]
}

fn platform_caps() -> cl_platform_command_buffer_capabilities_khr {
    info_scalar(|s, v, r| unsafe {
        cl!(clGetPlatformInfo)(
            platform(),
            CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR,
            s,
            v,
            r,
        )
    })
}

fn sync_devices(d: cl_device_id) -> Vec<cl_device_id> {
    let n: cl_uint = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR, s, v, r)
    });
    let mut list = vec![null_mut(); n as usize];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR,
            list.len() * std::mem::size_of::<cl_device_id>(),
            list.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    list
}

#[test]
fn queries_report_device_side_sync_within_a_root_device() {
    let m = Multi::new();
    let env = Env::new();
    assert!(env.has_extension("cl_khr_command_buffer_multi_device"));
    assert_eq!(
        platform_caps(),
        CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR
            | CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR,
        "remapping, explicit and automatic; no universal (host-side) sync"
    );
    for d in [m.root, m.subs[0], m.subs[1]] {
        assert_eq!(
            sync_devices(d),
            vec![m.root],
            "the root stands for its sub-devices"
        );
        let caps: cl_device_command_buffer_capabilities_khr = info_scalar(|s, v, r| unsafe {
            cl!(clGetDeviceInfo)(d, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, s, v, r)
        });
        assert_ne!(caps & CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR, 0);
    }
    let cb = create(&m.queues, 0).expect("three queues of one root device");
    let n: cl_uint = info_scalar(|s, v, r| unsafe {
        ext!(clGetCommandBufferInfoKHR)(cb, CL_COMMAND_BUFFER_NUM_QUEUES_KHR, s, v, r)
    });
    assert_eq!(n, 3);
    let mut qs = [null_mut(); 3];
    ok(unsafe {
        ext!(clGetCommandBufferInfoKHR)(
            cb,
            CL_COMMAND_BUFFER_QUEUES_KHR,
            std::mem::size_of_val(&qs),
            qs.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(qs, m.queues, "the creation order");
    release_cb(cb);
    // Device-side sync asked for: every queue here syncs on the device.
    let cb =
        create(&m.queues[..2], CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR).expect("device-side sync");
    release_cb(cb);
}

#[test]
fn a_sync_point_between_two_sub_devices_orders_their_commands() {
    let m = Multi::new();
    let (a, b, c) = (m.buffer(), m.buffer(), m.buffer());
    let cb = create(&m.queues[..2], 0).unwrap();
    record_chain(&m, cb, (m.queues[0], m.queues[1]), (a, b, c), 3);
    let s = serial();
    let before = debug_stats()[3];
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    // A pipeline barrier before `next` (its sync point on the other device's `fill`) and one
    // before the copy (after `next`): lavapipe runs dispatches one after another, so the
    // barriers, not the results alone, show that the cross-device sync point was kept.
    assert_eq!(debug_stats()[3] - before, 2, "barriers finalize recorded");
    drop(s);
    let want = expected(3);
    for run in 0..3 {
        ok(enqueue(cb, &[]));
        same(&m.read(c), &want, &format!("run {run}"));
    }
    // The same with the queues given at enqueue (each replaces its creation queue).
    ok(enqueue(cb, &m.queues[..2]));
    same(&m.read(c), &want, "the command buffer's result");
    // Later work on both queues waits for the command buffer: a fill on queue b after it.
    let zero = 0u32;
    ok(enqueue(cb, &[]));
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            m.queues[1],
            c,
            &zero as *const u32 as *const c_void,
            4,
            0,
            N * 4,
            0,
            null(),
            null_mut(),
        )
    });
    ok(unsafe { cl!(clFinish)(m.queues[1]) });
    assert!(
        m.read(c).iter().all(|&x| x == 0),
        "the fill ran after the copy"
    );
    release_cb(cb);
}

#[test]
fn two_queues_of_one_device_and_barriers_per_queue() {
    let m = Multi::new();
    let mut err = 0;
    let q2 =
        unsafe { cl!(clCreateCommandQueueWithProperties)(m.context, m.root, null(), &mut err) };
    ok(err);
    let (a, b, c) = (m.buffer(), m.buffer(), m.buffer());
    let cb = create(&[m.queues[2], q2], 0).expect("two queues of one device");
    let (fill, next) = (m.kernel("fill"), m.kernel("next"));
    arg_mem(fill, 0, a);
    set_arg(fill, 1, &5u32);
    arg_mem(next, 0, a);
    arg_mem(next, 1, b);
    // fill on the first queue; a barrier on the second waiting for it; then `next` and the
    // copy on the second queue, ordered by its in-order chain.
    let (r, s1, _) = ndrange(cb, m.queues[2], fill, &[], false);
    ok(r);
    ok(unsafe {
        ext!(clCommandBarrierWithWaitListKHR)(cb, q2, null(), 1, &s1, null_mut(), null_mut())
    });
    ok(ndrange(cb, q2, next, &[], false).0);
    ok(copy(cb, q2, b, c, &[]).0);
    finalize(cb);
    ok(enqueue(cb, &[]));
    same(&m.read(c), &expected(5), "the command buffer's result");
    release_cb(cb);
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
}

fn mutable_command_buffer(h: cl_mutable_command_khr) -> cl_command_buffer_khr {
    info_scalar(|s, v, r| unsafe {
        ext!(clGetMutableCommandInfoKHR)(h, CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR, s, v, r)
    })
}

fn set_fill_factor(cb: cl_command_buffer_khr, h: cl_mutable_command_khr, k: u32) {
    let arg = cl_mutable_dispatch_arg_khr {
        arg_index: 1,
        arg_size: 4,
        arg_value: &k as *const u32 as *const c_void,
    };
    let config = cl_mutable_dispatch_config_khr {
        num_args: 1,
        arg_list: &arg,
        ..dispatch_config(h)
    };
    ok(update_one(cb, &config));
}

#[test]
fn remapped_copies_run_on_their_new_queues() {
    let m = Multi::new();
    let (a, b, c) = (m.buffer(), m.buffer(), m.buffer());
    let cb = create(&m.queues[..2], CL_COMMAND_BUFFER_MUTABLE_KHR).unwrap();
    let handles = record_chain(&m, cb, (m.queues[0], m.queues[1]), (a, b, c), 3);
    finalize(cb);
    // Explicit: the two sub-devices' queues swapped.
    let swapped = [m.queues[1], m.queues[0]];
    let (copy1, new) = remap(cb, false, &swapped, &handles);
    let copy1 = copy1.expect("explicit remap");
    assert!(new.iter().all(|h| !h.is_null()) && new != handles);
    assert!(new.iter().all(|&h| mutable_command_buffer(h) == copy1));
    let state: cl_command_buffer_state_khr = info_scalar(|s, v, r| unsafe {
        ext!(clGetCommandBufferInfoKHR)(copy1, CL_COMMAND_BUFFER_STATE_KHR, s, v, r)
    });
    assert_eq!(
        state, CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR,
        "the original's state"
    );
    ok(enqueue(copy1, &[]));
    same(&m.read(c), &expected(3), "the command buffer's result");
    // An update of the copy's handle leaves the original alone.
    set_fill_factor(copy1, new[0], 11);
    ok(enqueue(copy1, &[]));
    same(&m.read(c), &expected(11), "the command buffer's result");
    ok(enqueue(cb, &[]));
    same(&m.read(c), &expected(3), "the original keeps its argument");
    // Automatic: everything onto the root device's one queue.
    let (copy2, _) = remap(cb, true, &m.queues[2..], &[]);
    let copy2 = copy2.expect("automatic remap");
    let n: cl_uint = info_scalar(|s, v, r| unsafe {
        ext!(clGetCommandBufferInfoKHR)(copy2, CL_COMMAND_BUFFER_NUM_QUEUES_KHR, s, v, r)
    });
    assert_eq!(n, 1);
    ok(enqueue(copy2, &[]));
    same(&m.read(c), &expected(3), "the command buffer's result");
    // A command buffer still recording is copied recording: the copy takes more commands.
    let open = create(&m.queues[..1], 0).unwrap();
    let fill = m.kernel("fill");
    arg_mem(fill, 0, a);
    set_arg(fill, 1, &9u32);
    let (r, s1, _) = ndrange(open, m.queues[0], fill, &[], false);
    ok(r);
    let (copy3, _) = remap(open, false, &m.queues[2..], &[]);
    let copy3 = copy3.expect("remap while recording");
    let next = m.kernel("next");
    arg_mem(next, 0, a);
    arg_mem(next, 1, b);
    ok(ndrange(copy3, m.queues[2], next, &[s1], false).0);
    ok(copy(copy3, m.queues[2], b, c, &[]).0);
    finalize(copy3);
    ok(enqueue(copy3, &[]));
    same(&m.read(c), &expected(9), "the command buffer's result");
    for x in [cb, copy1, copy2, open, copy3] {
        release_cb(x);
    }
}

#[test]
fn multi_device_errors() {
    let m = Multi::new();
    let other = Env::new();
    let (a, b, c) = (m.buffer(), m.buffer(), m.buffer());
    // Creation.
    assert_eq!(
        create(&[m.queues[0], other.queue], 0),
        Err(CL_INVALID_CONTEXT)
    );
    assert_eq!(create(&[], 0), Err(CL_INVALID_VALUE), "no queue");
    let bad = [m.queues[0], m.context as cl_command_queue];
    assert_eq!(create(&bad, 0), Err(CL_INVALID_COMMAND_QUEUE));
    // Recording: NULL needs a command buffer of one queue; a listed queue; the context.
    let cb = create(&m.queues[..2], CL_COMMAND_BUFFER_MUTABLE_KHR).unwrap();
    let fill = m.kernel("fill");
    arg_mem(fill, 0, a);
    set_arg(fill, 1, &1u32);
    assert_eq!(
        ndrange(cb, null_mut(), fill, &[], false).0,
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(copy(cb, null_mut(), a, b, &[]).0, CL_INVALID_COMMAND_QUEUE);
    assert_eq!(
        copy(cb, m.queues[2], a, b, &[]).0,
        CL_INVALID_COMMAND_QUEUE,
        "not listed"
    );
    assert_eq!(copy(cb, other.queue, a, b, &[]).0, CL_INVALID_CONTEXT);
    let r = unsafe {
        ext!(clCommandBarrierWithWaitListKHR)(
            cb,
            null_mut(),
            null(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_COMMAND_QUEUE, "barrier without a queue");
    let handles = record_chain(&m, cb, (m.queues[0], m.queues[1]), (a, b, c), 2);
    finalize(cb);
    // Enqueue: the creation count, each queue of its creation queue's device.
    assert_eq!(enqueue(cb, &m.queues[..1]), CL_INVALID_VALUE);
    assert_eq!(
        enqueue(cb, &[m.queues[1], m.queues[0]]),
        CL_INCOMPATIBLE_COMMAND_QUEUE_KHR,
        "queues of other devices than at creation"
    );
    assert_eq!(enqueue(cb, &[m.queues[0], other.queue]), CL_INVALID_CONTEXT);
    // Remap.
    assert_eq!(
        remap(cb, false, &[], &[]).0,
        Err(CL_INVALID_VALUE),
        "no queue"
    );
    assert_eq!(
        remap(cb, false, &m.queues, &[]).0,
        Err(CL_INVALID_VALUE),
        "not the creation count"
    );
    let (r, ret) = remap(cb, false, &m.queues[..2], &[handles[0], null_mut()]);
    assert_eq!(
        r,
        Err(CL_INVALID_VALUE),
        "a handle not of the command buffer"
    );
    assert!(
        ret.iter().all(|h| h.is_null()),
        "handles_ret untouched on error"
    );
    let mut err = 0;
    let r = unsafe {
        ext!(clRemapCommandBufferKHR)(
            cb,
            CL_FALSE,
            2,
            m.queues.as_ptr(),
            1,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(r.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "handles NULL with a count");
    assert_eq!(remap(cb, true, &bad, &[]).0, Err(CL_INVALID_COMMAND_QUEUE));
    assert_eq!(
        remap(cb, true, &[other.queue], &[]).0,
        Err(CL_INVALID_CONTEXT)
    );
    let unknown = unsafe {
        ext!(clRemapCommandBufferKHR)(
            null_mut(),
            CL_TRUE,
            1,
            m.queues.as_ptr(),
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(unknown.is_null());
    assert_eq!(err, CL_INVALID_COMMAND_BUFFER_KHR);
    release_cb(cb);
    // A kernel whose program has no executable for the new queue's device.
    let only_a = build_for(m.context, &m.subs[..1]);
    let mut err = 0;
    let name = CString::new("fill").unwrap();
    let k = unsafe { cl!(clCreateKernel)(only_a, name.as_ptr(), &mut err) };
    ok(err);
    arg_mem(k, 0, a);
    set_arg(k, 1, &1u32);
    let cb = create(&m.queues[..1], 0).unwrap();
    ok(ndrange(cb, m.queues[0], k, &[], false).0);
    finalize(cb);
    assert_eq!(
        remap(cb, false, &m.queues[2..], &[]).0,
        Err(CL_INVALID_PROGRAM_EXECUTABLE)
    );
    assert_eq!(
        remap(cb, false, &m.queues[..1], &[]).0.map(release_cb),
        Ok(())
    );
    release_cb(cb);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseProgram)(only_a);
    }
}
