//! Events through the real loader: user events, callbacks, waits, wait lists across queues,
//! markers and barriers, profiling, out-of-order queues, event info and error codes.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn user_event(env: &Env) -> cl_event {
    let mut err = 1;
    let e = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    e
}

fn status(e: cl_event) -> cl_int {
    info_scalar(|s, v, r| unsafe {
        cl!(clGetEventInfo)(e, CL_EVENT_COMMAND_EXECUTION_STATUS, s, v, r)
    })
}

fn command_type(e: cl_event) -> cl_command_type {
    info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(e, CL_EVENT_COMMAND_TYPE, s, v, r) })
}

fn set(e: cl_event, s: cl_int) {
    ok(unsafe { cl!(clSetUserEventStatus)(e, s) });
}

fn release(e: cl_event) {
    ok(unsafe { cl!(clReleaseEvent)(e) });
}

fn queue(env: &Env, props: cl_command_queue_properties) -> cl_command_queue {
    let p = [CL_QUEUE_PROPERTIES as cl_queue_properties, props, 0];
    let mut err = 1;
    let q = unsafe {
        cl!(clCreateCommandQueueWithProperties)(env.context, env.device, p.as_ptr(), &mut err)
    };
    ok(err);
    q
}

/// A non-blocking write of `data` to `m` at 0 on `q` after `waits`.
fn write_after(q: cl_command_queue, m: cl_mem, data: &[u8], waits: &[cl_event]) -> cl_event {
    let mut ev = null_mut();
    let list = if waits.is_empty() {
        null()
    } else {
        waits.as_ptr()
    };
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            q,
            m,
            CL_FALSE,
            0,
            data.len(),
            data.as_ptr() as *const c_void,
            waits.len() as cl_uint,
            list,
            &mut ev,
        )
    });
    ev
}

fn read_on(q: cl_command_queue, m: cl_mem, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            q,
            m,
            CL_TRUE,
            0,
            n,
            v.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    v
}

/// Polls `f` for up to five seconds.
fn eventually(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn user_event_gates_dependent_commands() {
    let env = Env::new();
    let q2 = queue(&env, 0);
    let m = env.buffer(0, 64, Some(&[1u8; 64]));
    let ue = user_event(&env);
    assert_eq!(status(ue), CL_SUBMITTED);
    let data = [9u8; 64];
    let w = write_after(env.queue, m, &data, &[ue]);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        status(w) > CL_COMPLETE,
        "the write ran before its user event was set"
    );
    assert_eq!(
        read_on(q2, m, 64),
        vec![1u8; 64],
        "buffer changed before the user event was set"
    );
    set(ue, CL_COMPLETE);
    ok(unsafe { cl!(clWaitForEvents)(1, &w) });
    assert_eq!(status(w), CL_COMPLETE);
    assert_eq!(status(ue), CL_COMPLETE);
    assert_eq!(read_on(env.queue, m, 64), vec![9u8; 64]);
    release(w);
    release(ue);
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
}

#[test]
fn negative_user_event_fails_dependants() {
    let env = Env::new();
    let m = env.buffer(0, 64, Some(&[1u8; 64]));
    let ue = user_event(&env);
    let data = [9u8; 64];
    let w = write_after(env.queue, m, &data, &[ue]);
    let mut marker = null_mut();
    ok(unsafe { cl!(clEnqueueMarkerWithWaitList)(env.queue, 1, &w, &mut marker) });
    set(ue, -42);
    assert_eq!(status(ue), -42);
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(1, &w) },
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    assert_eq!(status(w), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(1, &marker) },
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    assert!(status(marker) < 0, "failure propagates through wait lists");
    // The failed write did not run.
    assert_eq!(read_on(env.queue, m, 64), vec![1u8; 64]);
    // A blocking read that waits on the failed user event fails.
    let mut out = [0u8; 64];
    let r = unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            m,
            CL_TRUE,
            0,
            64,
            out.as_mut_ptr() as *mut c_void,
            1,
            &ue,
            null_mut(),
        )
    };
    assert_eq!(r, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    // Commands that do not depend on it still run.
    assert_eq!(read_on(env.queue, m, 64), vec![1u8; 64]);
    for e in [ue, w, marker] {
        release(e);
    }
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

/// What callbacks saw: (user tag, status), in call order.
struct Log(Mutex<Vec<(usize, cl_int)>>);

struct Tagged<'a> {
    log: &'a Log,
    tag: usize,
}

unsafe extern "C" fn on_event(_e: cl_event, status: cl_int, user: *mut c_void) {
    // SAFETY: user data is a Tagged that outlives the callback (the test waits for it).
    let t = unsafe { &*(user as *const Tagged) };
    t.log.0.lock().unwrap().push((t.tag, status));
}

fn callback(e: cl_event, when: cl_int, t: &Tagged) -> cl_int {
    unsafe { cl!(clSetEventCallback)(e, when, Some(on_event), t as *const Tagged as *mut c_void) }
}

#[test]
fn event_callbacks_before_and_after_completion() {
    let env = Env::new();
    let log = Log(Mutex::new(Vec::new()));
    let tags: Vec<Tagged> = (0..12).map(|tag| Tagged { log: &log, tag }).collect();
    let m = env.buffer(0, 64, None);
    let ue = user_event(&env);
    let data = [5u8; 64];
    let w = write_after(env.queue, m, &data, &[ue]);
    ok(callback(w, CL_SUBMITTED, &tags[0]));
    ok(callback(w, CL_RUNNING, &tags[1]));
    ok(callback(w, CL_COMPLETE, &tags[2]));
    // A user event's status is CL_SUBMITTED: its SUBMITTED callback is due at once.
    ok(callback(ue, CL_SUBMITTED, &tags[3]));
    ok(callback(ue, CL_COMPLETE, &tags[4]));
    std::thread::sleep(Duration::from_millis(50));
    {
        let seen = log.0.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![(3, CL_SUBMITTED)],
            "only the user event's SUBMITTED callback so far"
        );
    }
    set(ue, CL_COMPLETE);
    ok(unsafe { cl!(clWaitForEvents)(1, &w) });
    eventually("callbacks", || log.0.lock().unwrap().len() == 5);
    let seen = log.0.lock().unwrap().clone();
    for expected in [
        (0, CL_SUBMITTED),
        (1, CL_RUNNING),
        (2, CL_COMPLETE),
        (4, CL_COMPLETE),
    ] {
        assert!(
            seen.contains(&expected),
            "{expected:?} missing from {seen:?}"
        );
    }
    let pos = |tag| seen.iter().position(|(t, _)| *t == tag).unwrap();
    assert!(
        pos(0) < pos(1) && pos(1) < pos(2),
        "SUBMITTED, RUNNING, COMPLETE in order: {seen:?}"
    );
    // Registered after completion: called at once with the status asked for.
    ok(callback(w, CL_SUBMITTED, &tags[5]));
    ok(callback(w, CL_RUNNING, &tags[6]));
    ok(callback(w, CL_COMPLETE, &tags[7]));
    eventually("late callbacks", || log.0.lock().unwrap().len() == 8);
    let seen = log.0.lock().unwrap().clone();
    assert_eq!(
        seen[5..],
        [(5, CL_SUBMITTED), (6, CL_RUNNING), (7, CL_COMPLETE)]
    );
    // A failed command's callbacks get its error status.
    let bad = user_event(&env);
    let f = write_after(env.queue, m, &data, &[bad]);
    ok(callback(f, CL_COMPLETE, &tags[8]));
    ok(callback(bad, CL_COMPLETE, &tags[9]));
    set(bad, -7);
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(1, &f) },
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    eventually("error callbacks", || log.0.lock().unwrap().len() == 10);
    let seen = log.0.lock().unwrap().clone();
    assert!(
        seen.contains(&(8, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)),
        "{seen:?}"
    );
    assert!(seen.contains(&(9, -7)), "{seen:?}");
    // Errors.
    assert_eq!(
        unsafe { cl!(clSetEventCallback)(w, CL_COMPLETE, None, null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(callback(w, CL_QUEUED, &tags[10]), CL_INVALID_VALUE);
    assert_eq!(callback(w, -1, &tags[10]), CL_INVALID_VALUE);
    assert_eq!(
        callback(null_mut(), CL_COMPLETE, &tags[10]),
        CL_INVALID_EVENT
    );
    assert_eq!(
        callback(env.queue as cl_event, CL_COMPLETE, &tags[10]),
        CL_INVALID_EVENT
    );
    env.finish();
    for e in [ue, w, bad, f] {
        release(e);
    }
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    assert_eq!(log.0.lock().unwrap().len(), 10);
}

#[test]
fn wait_for_events_and_its_errors() {
    let env = Env::new();
    let m = env.buffer(0, 256, None);
    let a = [1u8; 256];
    let evs: Vec<cl_event> = (0..4).map(|_| write_after(env.queue, m, &a, &[])).collect();
    ok(unsafe { cl!(clWaitForEvents)(evs.len() as cl_uint, evs.as_ptr()) });
    assert!(evs.iter().all(|&e| status(e) == CL_COMPLETE));
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(0, evs.as_ptr()) },
        CL_INVALID_VALUE
    );
    assert_eq!(unsafe { cl!(clWaitForEvents)(1, null()) }, CL_INVALID_VALUE);
    let not_event = [evs[0], env.queue as cl_event];
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(2, not_event.as_ptr()) },
        CL_INVALID_EVENT
    );
    // Events of two contexts.
    let mut err = 0;
    let other = unsafe { cl!(clCreateContext)(null(), 1, &env.device, None, null_mut(), &mut err) };
    ok(err);
    let oe = unsafe { cl!(clCreateUserEvent)(other, &mut err) };
    ok(err);
    set(oe, CL_COMPLETE);
    let mixed = [evs[0], oe];
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(2, mixed.as_ptr()) },
        CL_INVALID_CONTEXT
    );
    // A released event is invalid.
    let gone = write_after(env.queue, m, &a, &[]);
    ok(unsafe { cl!(clWaitForEvents)(1, &gone) });
    release(gone);
    assert_eq!(unsafe { cl!(clWaitForEvents)(1, &gone) }, CL_INVALID_EVENT);
    assert_eq!(unsafe { cl!(clReleaseEvent)(gone) }, CL_INVALID_EVENT);
    assert_eq!(unsafe { cl!(clRetainEvent)(gone) }, CL_INVALID_EVENT);
    // A wait that returns only once a user event is set from another thread.
    let ue = user_event(&env);
    let w = write_after(env.queue, m, &a, &[ue]);
    let ue_addr = ue as usize;
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        set(ue_addr as cl_event, CL_COMPLETE);
    });
    let t = Instant::now();
    ok(unsafe { cl!(clWaitForEvents)(1, &w) });
    assert!(t.elapsed() >= Duration::from_millis(40));
    setter.join().unwrap();
    for e in evs.into_iter().chain([oe, ue, w]) {
        release(e);
    }
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    ok(unsafe { cl!(clReleaseContext)(other) });
}

#[test]
fn wait_lists_across_two_queues() {
    let env = Env::new();
    let q2 = queue(&env, 0);
    let n = 4096;
    let a = env.buffer(0, n, Some(&vec![0u8; n]));
    let b = env.buffer(0, n, Some(&vec![0u8; n]));
    let ue = user_event(&env);
    let mut rng = Rng(3);
    let data: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
    // q1: a host write gated by the user event; q2: a device copy that waits for it.
    let w = write_after(env.queue, a, &data, &[ue]);
    let mut c = null_mut();
    ok(unsafe { cl!(clEnqueueCopyBuffer)(q2, a, b, 0, 0, n, 1, &w, &mut c) });
    std::thread::sleep(Duration::from_millis(50));
    assert!(status(c) > CL_COMPLETE);
    set(ue, CL_COMPLETE);
    ok(unsafe { cl!(clWaitForEvents)(1, &c) });
    assert_eq!(read_on(q2, b, n), data);
    // q2: a device fill; q1: a blocking read that waits for it.
    let pat = 0xC3u8;
    let mut f = null_mut();
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            q2,
            b,
            &pat as *const u8 as *const c_void,
            1,
            0,
            n,
            0,
            null(),
            &mut f,
        )
    });
    let mut out = vec![0u8; n];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            b,
            CL_TRUE,
            0,
            n,
            out.as_mut_ptr() as *mut c_void,
            1,
            &f,
            null_mut(),
        )
    });
    assert_eq!(out, vec![0xC3u8; n]);
    // A barrier on q1 that waits for q2's work.
    let mut f2 = null_mut();
    let pat2 = 0x11111111u32;
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            q2,
            b,
            &pat2 as *const u32 as *const c_void,
            4,
            0,
            n,
            0,
            null(),
            &mut f2,
        )
    });
    ok(unsafe { cl!(clEnqueueBarrierWithWaitList)(env.queue, 1, &f2, null_mut()) });
    assert_eq!(read_on(env.queue, b, n), vec![0x11u8; n]);
    for e in [ue, w, c, f, f2] {
        release(e);
    }
    ok(unsafe { cl!(clFinish)(q2) });
    ok(unsafe { cl!(clReleaseCommandQueue)(q2) });
    ok(unsafe { cl!(clReleaseMemObject)(a) });
    ok(unsafe { cl!(clReleaseMemObject)(b) });
}

#[test]
fn markers_and_barriers() {
    let env = Env::new();
    let m = env.buffer(0, 64, None);
    let ue = user_event(&env);
    let w = write_after(env.queue, m, &[2u8; 64], &[ue]);
    // Without a wait list a marker waits for everything before it.
    let mut mk = null_mut();
    ok(unsafe { cl!(clEnqueueMarkerWithWaitList)(env.queue, 0, null(), &mut mk) });
    assert_eq!(command_type(mk), CL_COMMAND_MARKER);
    // With a wait list (on another user event).
    let ue2 = user_event(&env);
    let mut mk2 = null_mut();
    ok(unsafe { cl!(clEnqueueMarkerWithWaitList)(env.queue, 1, &ue2, &mut mk2) });
    let mut br = null_mut();
    ok(unsafe { cl!(clEnqueueBarrierWithWaitList)(env.queue, 0, null(), &mut br) });
    assert_eq!(command_type(br), CL_COMMAND_BARRIER);
    std::thread::sleep(Duration::from_millis(50));
    for e in [w, mk, mk2, br] {
        assert!(status(e) > CL_COMPLETE);
    }
    set(ue, CL_COMPLETE);
    ok(unsafe { cl!(clWaitForEvents)(1, &mk) });
    assert_eq!(
        status(w),
        CL_COMPLETE,
        "marker completed before the command before it"
    );
    std::thread::sleep(Duration::from_millis(30));
    assert!(
        status(mk2) > CL_COMPLETE,
        "marker with a wait list ran before its event"
    );
    set(ue2, CL_COMPLETE);
    ok(unsafe { cl!(clWaitForEvents)(1, &br) });
    assert_eq!(status(mk2), CL_COMPLETE);
    // Barrier with a wait list, and the OpenCL 1.1 forms.
    let mut br2 = null_mut();
    ok(unsafe { cl!(clEnqueueBarrierWithWaitList)(env.queue, 1, &w, &mut br2) });
    ok(unsafe { cl!(clWaitForEvents)(1, &br2) });
    let mut old = null_mut();
    ok(unsafe { cl!(clEnqueueMarker)(env.queue, &mut old) });
    ok(unsafe { cl!(clWaitForEvents)(1, &old) });
    assert_eq!(command_type(old), CL_COMMAND_MARKER);
    assert_eq!(
        unsafe { cl!(clEnqueueMarker)(env.queue, null_mut()) },
        CL_INVALID_VALUE
    );
    ok(unsafe { cl!(clEnqueueBarrier)(env.queue) });
    ok(unsafe { cl!(clEnqueueWaitForEvents)(env.queue, 1, &w) });
    assert_eq!(
        unsafe { cl!(clEnqueueWaitForEvents)(env.queue, 0, &w) },
        CL_INVALID_VALUE
    );
    // Errors.
    let r = unsafe { cl!(clEnqueueMarkerWithWaitList)(env.queue, 1, null(), null_mut()) };
    assert_eq!(r, CL_INVALID_EVENT_WAIT_LIST);
    let r = unsafe { cl!(clEnqueueBarrierWithWaitList)(env.queue, 0, &w, null_mut()) };
    assert_eq!(r, CL_INVALID_EVENT_WAIT_LIST);
    let r =
        unsafe { cl!(clEnqueueMarkerWithWaitList)(m as cl_command_queue, 0, null(), null_mut()) };
    assert_eq!(r, CL_INVALID_COMMAND_QUEUE);
    env.finish();
    for e in [ue, ue2, w, mk, mk2, br, br2, old] {
        release(e);
    }
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

fn profile(e: cl_event, name: cl_profiling_info) -> Result<cl_ulong, cl_int> {
    let mut v: cl_ulong = 0;
    let r = unsafe {
        cl!(clGetEventProfilingInfo)(
            e,
            name,
            std::mem::size_of::<cl_ulong>(),
            &mut v as *mut cl_ulong as *mut c_void,
            null_mut(),
        )
    };
    if r == CL_SUCCESS {
        Ok(v)
    } else {
        Err(r)
    }
}

const PROFILING: [cl_profiling_info; 5] = [
    CL_PROFILING_COMMAND_QUEUED,
    CL_PROFILING_COMMAND_SUBMIT,
    CL_PROFILING_COMMAND_START,
    CL_PROFILING_COMMAND_END,
    CL_PROFILING_COMMAND_COMPLETE,
];

#[test]
fn profiling_times_are_ordered() {
    let env = Env::with_queue_properties(CL_QUEUE_PROFILING_ENABLE);
    let n = 1 << 16;
    let a = env.buffer(0, n, None);
    let b = env.buffer(0, n, None);
    let ue = user_event(&env);
    let data = vec![7u8; n];
    let w = write_after(env.queue, a, &data, &[ue]);
    assert_eq!(
        profile(w, CL_PROFILING_COMMAND_QUEUED),
        Err(CL_PROFILING_INFO_NOT_AVAILABLE),
        "not complete yet"
    );
    set(ue, CL_COMPLETE);
    let mut c = null_mut();
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, a, b, 0, 0, n, 0, null(), &mut c) });
    let mut mk = null_mut();
    ok(unsafe { cl!(clEnqueueMarkerWithWaitList)(env.queue, 0, null(), &mut mk) });
    env.finish();
    for e in [w, c, mk] {
        let t: Vec<cl_ulong> = PROFILING.iter().map(|&p| profile(e, p).unwrap()).collect();
        assert!(t[0] > 0);
        assert!(
            t.windows(2).all(|w| w[0] <= w[1]),
            "QUEUED <= SUBMIT <= START <= END <= COMPLETE: {t:?}"
        );
    }
    // Commands of one in-order queue start after the previous one ended.
    assert!(
        profile(w, CL_PROFILING_COMMAND_END).unwrap()
            <= profile(c, CL_PROFILING_COMMAND_END).unwrap()
    );
    assert_eq!(
        profile(ue, CL_PROFILING_COMMAND_QUEUED),
        Err(CL_PROFILING_INFO_NOT_AVAILABLE),
        "user event"
    );
    assert_eq!(profile(w, 0x9999), Err(CL_INVALID_VALUE));
    let mut small = 0u32;
    let r = unsafe {
        cl!(clGetEventProfilingInfo)(
            w,
            CL_PROFILING_COMMAND_END,
            4,
            &mut small as *mut u32 as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE);
    assert_eq!(
        profile(env.queue as cl_event, CL_PROFILING_COMMAND_END),
        Err(CL_INVALID_EVENT)
    );
    // Without profiling.
    let plain = Env::new();
    let m = plain.buffer(0, 64, None);
    let e = write_after(plain.queue, m, &[1u8; 64], &[]);
    ok(unsafe { cl!(clWaitForEvents)(1, &e) });
    for p in PROFILING {
        assert_eq!(profile(e, p), Err(CL_PROFILING_INFO_NOT_AVAILABLE));
    }
    plain.finish();
    for x in [ue, w, c, mk, e] {
        release(x);
    }
    for x in [a, b, m] {
        ok(unsafe { cl!(clReleaseMemObject)(x) });
    }
}

#[test]
fn out_of_order_queue_with_explicit_dependencies() {
    let env = Env::with_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let props: cl_command_queue_properties = info_scalar(|s, v, r| unsafe {
        cl!(clGetCommandQueueInfo)(env.queue, CL_QUEUE_PROPERTIES, s, v, r)
    });
    assert_ne!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0);
    let n = 1024;
    let a = env.buffer(0, n, None);
    let b = env.buffer(0, n, None);
    let c = env.buffer(0, n, None);
    let ue = user_event(&env);
    let data: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
    let w = write_after(env.queue, a, &data, &[ue]);
    let mut c1 = null_mut();
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, a, b, 0, 0, n, 1, &w, &mut c1) });
    let mut c2 = null_mut();
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, b, c, 0, 0, n, 1, &c1, &mut c2) });
    set(ue, CL_COMPLETE);
    let mut out = vec![0u8; n];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            c,
            CL_TRUE,
            0,
            n,
            out.as_mut_ptr() as *mut c_void,
            1,
            &c2,
            null_mut(),
        )
    });
    assert_eq!(out, data);
    // A barrier orders everything before it against everything after it.
    let pat = 0xABu8;
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            env.queue,
            c,
            &pat as *const u8 as *const c_void,
            1,
            0,
            n,
            0,
            null(),
            null_mut(),
        )
    });
    ok(unsafe { cl!(clEnqueueBarrierWithWaitList)(env.queue, 0, null(), null_mut()) });
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            c,
            CL_TRUE,
            0,
            n,
            out.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    assert_eq!(out, vec![0xABu8; n]);
    env.finish();
    for e in [ue, w, c1, c2] {
        release(e);
    }
    for x in [a, b, c] {
        ok(unsafe { cl!(clReleaseMemObject)(x) });
    }
}

#[test]
fn event_info_and_user_event_errors() {
    let env = Env::new();
    let m = env.buffer(0, 64, None);
    let w = write_after(env.queue, m, &[1u8; 64], &[]);
    ok(unsafe { cl!(clWaitForEvents)(1, &w) });
    let q: cl_command_queue =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(w, CL_EVENT_COMMAND_QUEUE, s, v, r) });
    assert_eq!(q, env.queue);
    let c: cl_context =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(w, CL_EVENT_CONTEXT, s, v, r) });
    assert_eq!(c, env.context);
    assert_eq!(command_type(w), CL_COMMAND_WRITE_BUFFER);
    assert_eq!(status(w), CL_COMPLETE);
    let refs = |e| {
        info_scalar::<cl_uint>(|s, v, r| unsafe {
            cl!(clGetEventInfo)(e, CL_EVENT_REFERENCE_COUNT, s, v, r)
        })
    };
    assert_eq!(refs(w), 1);
    ok(unsafe { cl!(clRetainEvent)(w) });
    assert_eq!(refs(w), 2);
    release(w);
    assert_eq!(refs(w), 1);
    // User event facts.
    let ue = user_event(&env);
    let uq: cl_command_queue =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ue, CL_EVENT_COMMAND_QUEUE, s, v, r) });
    assert!(uq.is_null());
    assert_eq!(command_type(ue), CL_COMMAND_USER);
    let uc: cl_context =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ue, CL_EVENT_CONTEXT, s, v, r) });
    assert_eq!(uc, env.context);
    // Info errors.
    assert_eq!(
        unsafe { cl!(clGetEventInfo)(w, 0x7777, 0, null_mut(), null_mut()) },
        CL_INVALID_VALUE
    );
    let mut small = 0u16;
    let r = unsafe {
        cl!(clGetEventInfo)(
            w,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            2,
            &mut small as *mut u16 as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE);
    let r = unsafe {
        cl!(clGetEventInfo)(
            m as cl_event,
            CL_EVENT_COMMAND_TYPE,
            0,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_EVENT);
    // clSetUserEventStatus errors.
    assert_eq!(
        unsafe { cl!(clSetUserEventStatus)(w, CL_COMPLETE) },
        CL_INVALID_EVENT,
        "not a user event"
    );
    assert_eq!(
        unsafe { cl!(clSetUserEventStatus)(ue, CL_RUNNING) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe { cl!(clSetUserEventStatus)(ue, CL_SUBMITTED) },
        CL_INVALID_VALUE
    );
    set(ue, CL_COMPLETE);
    assert_eq!(
        unsafe { cl!(clSetUserEventStatus)(ue, CL_COMPLETE) },
        CL_INVALID_OPERATION,
        "set twice"
    );
    assert_eq!(
        unsafe { cl!(clSetUserEventStatus)(ue, -1) },
        CL_INVALID_OPERATION,
        "set twice"
    );
    assert_eq!(
        unsafe { cl!(clSetUserEventStatus)(m as cl_event, CL_COMPLETE) },
        CL_INVALID_EVENT
    );
    // clCreateUserEvent with something that is not a context.
    let mut err = 0;
    let e = unsafe { cl!(clCreateUserEvent)(env.queue as cl_context, &mut err) };
    assert!(e.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    // A wait list naming an event of another context.
    let other = unsafe { cl!(clCreateContext)(null(), 1, &env.device, None, null_mut(), &mut err) };
    ok(err);
    let oe = unsafe { cl!(clCreateUserEvent)(other, &mut err) };
    ok(err);
    let r = unsafe { cl!(clEnqueueMarkerWithWaitList)(env.queue, 1, &oe, null_mut()) };
    assert_eq!(r, CL_INVALID_CONTEXT);
    set(oe, CL_COMPLETE);
    for e in [w, ue, oe] {
        release(e);
    }
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    ok(unsafe { cl!(clReleaseContext)(other) });
}
