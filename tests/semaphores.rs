//! cl_khr_semaphore 1.0.0 through the real loader: binary semaphores ordering commands within
//! and across queues (results checked on the host), wait before signal, the payload, info
//! queries and every error code of the extension.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::time::Duration;

const BINARY: [cl_semaphore_properties_khr; 3] = [
    CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr,
    CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr,
    0,
];

fn try_create(
    context: cl_context,
    props: *const cl_semaphore_properties_khr,
) -> Result<cl_semaphore_khr, cl_int> {
    let mut err = 1;
    let s = unsafe { ext!(clCreateSemaphoreWithPropertiesKHR)(context, props, &mut err) };
    if err == CL_SUCCESS {
        assert!(!s.is_null());
        Ok(s)
    } else {
        assert!(s.is_null(), "a failed creation returns NULL");
        Err(err)
    }
}

fn create(context: cl_context) -> cl_semaphore_khr {
    try_create(context, BINARY.as_ptr()).expect("semaphore")
}

fn release(s: cl_semaphore_khr) {
    ok(unsafe { ext!(clReleaseSemaphoreKHR)(s) });
}

fn signal(
    q: cl_command_queue,
    sems: &[cl_semaphore_khr],
    waits: &[cl_event],
) -> Result<cl_event, cl_int> {
    let mut ev = null_mut();
    let list = if waits.is_empty() {
        null()
    } else {
        waits.as_ptr()
    };
    let r = unsafe {
        ext!(clEnqueueSignalSemaphoresKHR)(
            q,
            sems.len() as cl_uint,
            sems.as_ptr(),
            null(),
            waits.len() as cl_uint,
            list,
            &mut ev,
        )
    };
    if r == CL_SUCCESS {
        Ok(ev)
    } else {
        Err(r)
    }
}

fn wait(
    q: cl_command_queue,
    sems: &[cl_semaphore_khr],
    waits: &[cl_event],
) -> Result<cl_event, cl_int> {
    let mut ev = null_mut();
    let list = if waits.is_empty() {
        null()
    } else {
        waits.as_ptr()
    };
    let r = unsafe {
        ext!(clEnqueueWaitSemaphoresKHR)(
            q,
            sems.len() as cl_uint,
            sems.as_ptr(),
            null(),
            waits.len() as cl_uint,
            list,
            &mut ev,
        )
    };
    if r == CL_SUCCESS {
        Ok(ev)
    } else {
        Err(r)
    }
}

fn payload(s: cl_semaphore_khr) -> cl_semaphore_payload_khr {
    info_scalar(|n, v, r| unsafe {
        ext!(clGetSemaphoreInfoKHR)(s, CL_SEMAPHORE_PAYLOAD_KHR, n, v, r)
    })
}

fn event_status(e: cl_event) -> cl_int {
    info_scalar(|s, v, r| unsafe {
        cl!(clGetEventInfo)(e, CL_EVENT_COMMAND_EXECUTION_STATUS, s, v, r)
    })
}

fn user_event(context: cl_context) -> cl_event {
    let mut err = 1;
    let e = unsafe { cl!(clCreateUserEvent)(context, &mut err) };
    ok(err);
    e
}

/// A user event that holds commands back; completed when dropped if the test did not (so a
/// failing test ends, rather than hanging in the finish of its queues' release).
struct Gate(cl_event);

impl Gate {
    fn new(context: cl_context) -> Gate {
        Gate(user_event(context))
    }
    fn open(&self) {
        ok(unsafe { cl!(clSetUserEventStatus)(self.0, CL_COMPLETE) });
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        unsafe {
            cl!(clSetUserEventStatus)(self.0, CL_COMPLETE);
            cl!(clReleaseEvent)(self.0);
        }
    }
}

fn new_queue(env: &Env) -> cl_command_queue {
    let mut err = 1;
    let q = unsafe {
        cl!(clCreateCommandQueueWithProperties)(env.context, env.device, null(), &mut err)
    };
    ok(err);
    q
}

fn finish(q: cl_command_queue) {
    ok(unsafe { cl!(clFinish)(q) });
}

/// A non-blocking read of `n` ints of `m` on `q` after `waits`.
fn read_after(q: cl_command_queue, m: cl_mem, out: &mut [i32], waits: &[cl_event]) -> cl_event {
    let mut ev = null_mut();
    let list = if waits.is_empty() {
        null()
    } else {
        waits.as_ptr()
    };
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            q,
            m,
            CL_FALSE,
            0,
            std::mem::size_of_val(out),
            out.as_mut_ptr() as *mut c_void,
            waits.len() as cl_uint,
            list,
            &mut ev,
        )
    });
    ev
}

const FILL: &str = "kernel void fill(global int* out, int base) {
    size_t i = get_global_id(0);
    out[i] = base + (int)(i * 7u);
}";

#[test]
fn extension_and_type_queries() {
    let env = Env::new();
    assert!(env.has_extension("cl_khr_semaphore"));
    let platform_exts = info_string(|s, v, r| unsafe {
        cl!(clGetPlatformInfo)(env.platform, CL_PLATFORM_EXTENSIONS, s, v, r)
    });
    assert!(platform_exts.split(' ').any(|e| e == "cl_khr_semaphore"));
    // Not offered: vkcl shares no semaphore with another API (docs/interop.md).
    assert!(!env.has_extension("cl_khr_external_semaphore"));
    let mut types = [0 as cl_semaphore_type_khr; 4];
    let mut size = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_SEMAPHORE_TYPES_KHR,
            std::mem::size_of_val(&types),
            types.as_mut_ptr() as *mut c_void,
            &mut size,
        )
    });
    assert_eq!(size, 4);
    assert_eq!(types[0], CL_SEMAPHORE_TYPE_BINARY_KHR);
    let mut size = 0;
    ok(unsafe {
        cl!(clGetPlatformInfo)(
            env.platform,
            CL_PLATFORM_SEMAPHORE_TYPES_KHR,
            std::mem::size_of_val(&types),
            types.as_mut_ptr() as *mut c_void,
            &mut size,
        )
    });
    assert_eq!((size, types[0]), (4, CL_SEMAPHORE_TYPE_BINARY_KHR));
}

#[test]
fn info_queries_and_payload() {
    let env = Env::new();
    let props = [
        CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr,
        CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr,
        CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR as cl_semaphore_properties_khr,
        env.device as cl_semaphore_properties_khr,
        CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR as cl_semaphore_properties_khr,
        0,
    ];
    let s = try_create(env.context, props.as_ptr()).unwrap();
    let get = |name: cl_semaphore_info_khr| -> Vec<u8> {
        let mut n = 0;
        ok(unsafe { ext!(clGetSemaphoreInfoKHR)(s, name, 0, null_mut(), &mut n) });
        let mut v = vec![0u8; n];
        ok(unsafe {
            ext!(clGetSemaphoreInfoKHR)(s, name, n, v.as_mut_ptr() as *mut c_void, null_mut())
        });
        v
    };
    assert_eq!(get(CL_SEMAPHORE_PROPERTIES_KHR), bytes(&props));
    assert_eq!(
        get(CL_SEMAPHORE_TYPE_KHR),
        bytes(&[CL_SEMAPHORE_TYPE_BINARY_KHR])
    );
    assert_eq!(get(CL_SEMAPHORE_CONTEXT_KHR), bytes(&[env.context]));
    assert_eq!(
        get(CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR),
        bytes(&[env.device])
    );
    let refs = || -> cl_uint {
        info_scalar(|n, v, r| unsafe {
            ext!(clGetSemaphoreInfoKHR)(s, CL_SEMAPHORE_REFERENCE_COUNT_KHR, n, v, r)
        })
    };
    assert_eq!(refs(), 1);
    ok(unsafe { ext!(clRetainSemaphoreKHR)(s) });
    assert_eq!(refs(), 2);
    release(s);
    assert_eq!(refs(), 1);

    // Without a device list: the context's one device; the properties as given.
    let t = create(env.context);
    let mut d: cl_device_id = null_mut();
    ok(unsafe {
        ext!(clGetSemaphoreInfoKHR)(
            t,
            CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR,
            std::mem::size_of::<cl_device_id>(),
            &mut d as *mut cl_device_id as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(d, env.device);
    let mut n = 0;
    ok(unsafe {
        ext!(clGetSemaphoreInfoKHR)(t, CL_SEMAPHORE_PROPERTIES_KHR, 0, null_mut(), &mut n)
    });
    assert_eq!(n, std::mem::size_of_val(&BINARY));

    // The payload: 0 un-signalled, 1 once a signal completed, 0 again once a wait completed.
    assert_eq!(payload(s), 0);
    let gate = Gate::new(env.context);
    let sig = signal(env.queue, &[s], &[gate.0]).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(payload(s), 0, "signalled before its signal command ran");
    gate.open();
    ok(unsafe { cl!(clWaitForEvents)(1, &sig) });
    assert_eq!(payload(s), 1);
    let command_type: cl_command_type =
        info_scalar(|n, v, r| unsafe { cl!(clGetEventInfo)(sig, CL_EVENT_COMMAND_TYPE, n, v, r) });
    assert_eq!(command_type, CL_COMMAND_SEMAPHORE_SIGNAL_KHR);
    let w = wait(env.queue, &[s], &[]).unwrap();
    ok(unsafe { cl!(clWaitForEvents)(1, &w) });
    assert_eq!(payload(s), 0);
    let command_type: cl_command_type =
        info_scalar(|n, v, r| unsafe { cl!(clGetEventInfo)(w, CL_EVENT_COMMAND_TYPE, n, v, r) });
    assert_eq!(command_type, CL_COMMAND_SEMAPHORE_WAIT_KHR);
    for e in [sig, w] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
    release(t);
}

/// A kernel on one queue, held back by a user event, signals a semaphore; a read on another
/// queue waits on it: the read must not run before the kernel, and reads its result.
#[test]
fn signal_on_one_queue_orders_a_kernel_before_a_wait_on_another() {
    let env = Env::new();
    let q2 = new_queue(&env);
    let s = create(env.context);
    let n = 4096;
    let m = env.zeros::<i32>(n);
    let k = env.kern(FILL, "fill");
    arg_mem(k, 0, m);
    set_arg(k, 1, &1000i32);
    let gate = Gate::new(env.context);
    let mut kev = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &n, null(), 1, &gate.0, &mut kev)
    });
    let sig = signal(env.queue, &[s], &[]).unwrap();
    let w = wait(q2, &[s], &[]).unwrap();
    let mut out = vec![-1i32; n];
    let rev = read_after(q2, m, &mut out, &[]);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        event_status(w) > CL_COMPLETE,
        "the wait completed before its signal"
    );
    assert!(
        event_status(rev) > CL_COMPLETE,
        "the read ran before the kernel"
    );
    gate.open();
    finish(q2);
    assert_eq!(event_status(kev), CL_COMPLETE);
    let want: Vec<i32> = (0..n).map(|i| 1000 + (i * 7) as i32).collect();
    assert_eq!(out, want);
    for e in [kev, sig, w, rev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
}

/// A wait enqueued before its signal (on another queue) holds its queue until the signal is
/// enqueued and has completed; the copy after it sees the signalling queue's write.
#[test]
fn wait_before_signal_across_queues() {
    let env = Env::new();
    let q2 = new_queue(&env);
    let s = create(env.context);
    let n = 1024;
    let a = env.zeros::<i32>(n);
    let b = env.zeros::<i32>(n);
    let w = wait(q2, &[s], &[]).unwrap();
    let mut cev = null_mut();
    ok(unsafe { cl!(clEnqueueCopyBuffer)(q2, a, b, 0, 0, n * 4, 0, null(), &mut cev) });
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        event_status(w) > CL_COMPLETE,
        "a wait completed with no signal"
    );
    assert!(
        event_status(cev) > CL_COMPLETE,
        "the copy ran before the wait"
    );
    let data: Vec<i32> = (0..n as i32).map(|i| i * 3 - 5).collect();
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            env.queue,
            a,
            CL_FALSE,
            0,
            n * 4,
            data.as_ptr() as *const c_void,
            0,
            null(),
            null_mut(),
        )
    });
    let sig = signal(env.queue, &[s], &[]).unwrap();
    finish(q2);
    assert_eq!(event_status(w), CL_COMPLETE);
    let mut out = vec![0i32; n];
    let rev = read_after(q2, b, &mut out, &[]);
    ok(unsafe { cl!(clWaitForEvents)(1, &rev) });
    assert_eq!(out, data);
    finish(env.queue);
    for e in [w, cev, sig, rev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
}

/// One semaphore signalled and waited on in turn many times between two queues (each round
/// a kernel result the other queue reads), and one command on several semaphores.
#[test]
fn reuse_and_several_semaphores() {
    let env = Env::new();
    let q2 = new_queue(&env);
    let (s, t) = (create(env.context), create(env.context));
    let m = env.zeros::<i32>(64);
    let k = env.kern(FILL, "fill");
    arg_mem(k, 0, m);
    for round in 0..8 {
        set_arg(k, 1, &(round * 100));
        ok(unsafe {
            cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &64, null(), 0, null(), null_mut())
        });
        let sig = signal(env.queue, &[s], &[]).unwrap();
        let w = wait(q2, &[s], &[]).unwrap();
        let mut out = vec![0i32; 64];
        let rev = read_after(q2, m, &mut out, &[]);
        // The next round's kernel waits for this round's read (q2 signals t back).
        let back = signal(q2, &[t], &[]).unwrap();
        let w2 = wait(env.queue, &[t], &[]).unwrap();
        ok(unsafe { cl!(clWaitForEvents)(1, &rev) });
        let want: Vec<i32> = (0..64).map(|i| round * 100 + i * 7).collect();
        assert_eq!(out, want, "round {round}");
        for e in [sig, w, rev, back, w2] {
            ok(unsafe { cl!(clReleaseEvent)(e) });
        }
    }
    finish(env.queue);
    finish(q2);
    assert_eq!((payload(s), payload(t)), (0, 0));
    // One signal of two semaphores; one wait on both.
    let sig = signal(env.queue, &[s, t], &[]).unwrap();
    let w = wait(q2, &[s, t], &[]).unwrap();
    finish(q2);
    assert_eq!(event_status(sig), CL_COMPLETE);
    assert_eq!(event_status(w), CL_COMPLETE);
    assert_eq!((payload(s), payload(t)), (0, 0));
    for e in [sig, w] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
    release(t);
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
}

/// A signal whose wait list fails fails too, and so does the wait paired with it; the
/// semaphore stays un-signalled.
#[test]
fn failed_signal_fails_its_wait() {
    let env = Env::new();
    let q2 = new_queue(&env);
    let s = create(env.context);
    let gate = user_event(env.context);
    let sig = signal(env.queue, &[s], &[gate]).unwrap();
    let w = wait(q2, &[s], &[]).unwrap();
    ok(unsafe { cl!(clSetUserEventStatus)(gate, -42) });
    finish(q2);
    assert!(event_status(sig) < 0);
    assert!(event_status(w) < 0);
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(1, &w) },
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    assert_eq!(payload(s), 0);
    for e in [gate, sig, w] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
}

#[test]
fn creation_errors() {
    let env = Env::new();
    let p = |v: &[cl_semaphore_properties_khr]| try_create(env.context, v.as_ptr());
    let ty = CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr;
    let bin = CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr;
    let list = CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR as cl_semaphore_properties_khr;
    let end = CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR as cl_semaphore_properties_khr;
    let dev = env.device as cl_semaphore_properties_khr;
    assert_eq!(
        try_create(null_mut(), BINARY.as_ptr()),
        Err(CL_INVALID_CONTEXT)
    );
    assert_eq!(try_create(env.context, null()), Err(CL_INVALID_VALUE));
    assert_eq!(p(&[0]), Err(CL_INVALID_VALUE));
    assert_eq!(p(&[list, dev, end, 0]), Err(CL_INVALID_VALUE));
    assert_eq!(p(&[!0, bin, 0]), Err(CL_INVALID_PROPERTY));
    assert_eq!(p(&[ty, !0, 0]), Err(CL_INVALID_PROPERTY));
    assert_eq!(p(&[ty, bin, ty, bin, 0]), Err(CL_INVALID_PROPERTY));
    // cl_khr_external_semaphore's properties: no handle type is offered.
    let export = CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR as cl_semaphore_properties_khr;
    let sync_fd = CL_SEMAPHORE_HANDLE_SYNC_FD_KHR as cl_semaphore_properties_khr;
    assert_eq!(
        p(&[ty, bin, export, sync_fd, 0, 0]),
        Err(CL_INVALID_PROPERTY)
    );
    assert_eq!(p(&[ty, bin, sync_fd, 3, 0]), Err(CL_INVALID_PROPERTY));
    // Device lists: exactly one valid device of the context.
    assert_eq!(
        p(&[ty, bin, list, 0x1234_5678, end, 0]),
        Err(CL_INVALID_DEVICE)
    );
    assert_eq!(p(&[ty, bin, list, end, 0]), Err(CL_INVALID_DEVICE));
    assert_eq!(
        p(&[ty, bin, list, dev, dev, end, 0]),
        Err(CL_INVALID_DEVICE)
    );
    assert_eq!(
        p(&[ty, bin, list, dev, end, list, dev, end, 0]),
        Err(CL_INVALID_PROPERTY)
    );
    let u = units(env.device);
    let Ok(subs) = split(
        env.device,
        &[CL_DEVICE_PARTITION_EQUALLY, (u / 2).max(1) as isize, 0],
    ) else {
        eprintln!("skipped the multi-device cases: the device does not partition");
        return;
    };
    if subs.len() < 2 {
        eprintln!("skipped the multi-device cases: fewer than 2 sub-devices");
        release_all(&subs);
        return;
    }
    // A device outside the context.
    let sub0 = subs[0] as cl_semaphore_properties_khr;
    assert_eq!(p(&[ty, bin, list, sub0, end, 0]), Err(CL_INVALID_DEVICE));
    // A context of two devices: a device list is required; a queue of the other device may
    // neither signal nor wait.
    let mut err = 1;
    let ctx = unsafe { cl!(clCreateContext)(null(), 2, subs.as_ptr(), None, null_mut(), &mut err) };
    ok(err);
    assert_eq!(try_create(ctx, BINARY.as_ptr()), Err(CL_INVALID_PROPERTY));
    let s = try_create(ctx, [ty, bin, list, sub0, end, 0].as_ptr()).unwrap();
    let q1 = unsafe { cl!(clCreateCommandQueueWithProperties)(ctx, subs[1], null(), &mut err) };
    ok(err);
    assert_eq!(signal(q1, &[s], &[]), Err(CL_INVALID_COMMAND_QUEUE));
    assert_eq!(wait(q1, &[s], &[]), Err(CL_INVALID_COMMAND_QUEUE));
    let q0 = unsafe { cl!(clCreateCommandQueueWithProperties)(ctx, subs[0], null(), &mut err) };
    ok(err);
    let sig = signal(q0, &[s], &[]).unwrap();
    let w = wait(q0, &[s], &[]).unwrap();
    finish(q0);
    assert_eq!(
        (event_status(sig), event_status(w)),
        (CL_COMPLETE, CL_COMPLETE)
    );
    for e in [sig, w] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
    ok(unsafe { cl!(clReleaseCommandQueue)(q0) });
    ok(unsafe { cl!(clReleaseCommandQueue)(q1) });
    ok(unsafe { cl!(clReleaseContext)(ctx) });
    release_all(&subs);
}

#[test]
fn enqueue_errors() {
    let env = Env::new();
    let s = create(env.context);
    let q = env.queue;
    let call = |f: clEnqueueSignalSemaphoresKHR_t,
                q: cl_command_queue,
                n: cl_uint,
                sems: *const cl_semaphore_khr,
                ne: cl_uint,
                events: *const cl_event| unsafe {
        f.unwrap()(q, n, sems, null(), ne, events, null_mut())
    };
    let sig = Some(ext!(clEnqueueSignalSemaphoresKHR));
    let wt: clEnqueueSignalSemaphoresKHR_t = Some(ext!(clEnqueueWaitSemaphoresKHR));
    let other = Env::new();
    let foreign_event = user_event(other.context);
    let failed = user_event(env.context);
    ok(unsafe { cl!(clSetUserEventStatus)(failed, -1) });
    let released = create(env.context);
    release(released);
    for f in [sig, wt] {
        assert_eq!(
            call(f, null_mut(), 1, &s, 0, null()),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(call(f, q, 0, &s, 0, null()), CL_INVALID_VALUE);
        assert_eq!(call(f, q, 1, null(), 0, null()), CL_INVALID_SEMAPHORE_KHR);
        let bad: cl_semaphore_khr = env.context as cl_semaphore_khr;
        assert_eq!(call(f, q, 1, &bad, 0, null()), CL_INVALID_SEMAPHORE_KHR);
        assert_eq!(
            call(f, q, 1, &released, 0, null()),
            CL_INVALID_SEMAPHORE_KHR
        );
        assert_eq!(call(f, other.queue, 1, &s, 0, null()), CL_INVALID_CONTEXT);
        assert_eq!(call(f, q, 1, &s, 1, &foreign_event), CL_INVALID_CONTEXT);
        assert_eq!(call(f, q, 1, &s, 1, null()), CL_INVALID_EVENT_WAIT_LIST);
        assert_eq!(call(f, q, 1, &s, 0, &failed), CL_INVALID_EVENT_WAIT_LIST);
        let not_event = env.context as cl_event;
        assert_eq!(call(f, q, 1, &s, 1, &not_event), CL_INVALID_EVENT_WAIT_LIST);
        assert_eq!(
            call(f, q, 1, &s, 1, &failed),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        );
    }
    finish(q);
    assert_eq!(payload(s), 0, "a refused signal signalled");
    for e in [foreign_event, failed] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
}

#[test]
fn query_retain_release_and_handle_errors() {
    let env = Env::new();
    let s = create(env.context);
    let info = ext!(clGetSemaphoreInfoKHR);
    let mut v = [0u64; 8];
    let vp = v.as_mut_ptr() as *mut c_void;
    assert_eq!(
        unsafe { info(null_mut(), CL_SEMAPHORE_TYPE_KHR, 8, vp, null_mut()) },
        CL_INVALID_SEMAPHORE_KHR
    );
    let not_sem = env.queue as cl_semaphore_khr;
    assert_eq!(
        unsafe { info(not_sem, CL_SEMAPHORE_TYPE_KHR, 8, vp, null_mut()) },
        CL_INVALID_SEMAPHORE_KHR
    );
    assert_eq!(unsafe { info(s, !0, 64, vp, null_mut()) }, CL_INVALID_VALUE);
    assert_eq!(
        unsafe { info(s, CL_SEMAPHORE_TYPE_KHR, 0, vp, null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe { info(s, CL_SEMAPHORE_PROPERTIES_KHR, 8, vp, null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe { info(s, CL_SEMAPHORE_PAYLOAD_KHR, 4, vp, null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe { ext!(clRetainSemaphoreKHR)(null_mut()) },
        CL_INVALID_SEMAPHORE_KHR
    );
    assert_eq!(
        unsafe { ext!(clReleaseSemaphoreKHR)(null_mut()) },
        CL_INVALID_SEMAPHORE_KHR
    );
    assert_eq!(
        unsafe { ext!(clReleaseSemaphoreKHR)(not_sem) },
        CL_INVALID_SEMAPHORE_KHR
    );
    // No handle type is exportable.
    let handle = ext!(clGetSemaphoreHandleForTypeKHR);
    let mut fd = -1i32;
    let mut size = 0usize;
    let fdp = &mut fd as *mut i32 as *mut c_void;
    assert_eq!(
        unsafe {
            handle(
                s,
                env.device,
                CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                4,
                fdp,
                &mut size,
            )
        },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe {
            handle(
                null_mut(),
                env.device,
                CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                4,
                fdp,
                &mut size,
            )
        },
        CL_INVALID_SEMAPHORE_KHR
    );
    assert_eq!(
        unsafe {
            handle(
                s,
                null_mut(),
                CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                4,
                fdp,
                &mut size,
            )
        },
        CL_INVALID_DEVICE
    );
    assert_eq!((fd, size), (-1, 0), "nothing written on failure");
    release(s);
    assert_eq!(
        unsafe { ext!(clRetainSemaphoreKHR)(s) },
        CL_INVALID_SEMAPHORE_KHR
    );
}

/// A semaphore released while its wait is still pending (enqueued before its signal): the
/// commands keep what they need, the wait completes once the signal comes.
#[test]
fn released_semaphore_commands_still_complete() {
    let env = Env::new();
    let q2 = new_queue(&env);
    let s = create(env.context);
    let w = wait(q2, &[s], &[]).unwrap();
    let sig = signal(env.queue, &[s], &[]).unwrap();
    release(s);
    finish(q2);
    finish(env.queue);
    assert_eq!(
        (event_status(sig), event_status(w)),
        (CL_COMPLETE, CL_COMPLETE)
    );
    for e in [sig, w] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
}
