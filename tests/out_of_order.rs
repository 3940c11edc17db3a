//! Out-of-order queues run commands without a dependency at once (`core/queue_lanes.rs`,
//! issue 17): a command held by a user event holds only the commands that wait for it, while
//! markers, barriers, wait lists and clFinish keep their order. Also two in-order queues of
//! one device: a held command of one does not hold the other; and an in-order queue whose
//! launches go to the device in batches (`backend/vulkan/queue.rs`) keeps their order. Every
//! result is checked against the host.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

const ADD: &str = "__kernel void add(__global int *a, int v) { a[get_global_id(0)] += v; }\n\
                   __kernel void mul(__global int *a, int v) { a[get_global_id(0)] *= v; }\n";
const N: usize = 256;

fn queue(env: &Env, props: cl_command_queue_properties) -> cl_command_queue {
    let p = [CL_QUEUE_PROPERTIES as cl_queue_properties, props, 0];
    let mut err = 1;
    let q = unsafe {
        cl!(clCreateCommandQueueWithProperties)(env.context, env.device, p.as_ptr(), &mut err)
    };
    ok(err);
    q
}

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

/// Polls `e` until it completes (true) or `limit` passes (false).
fn completes_within(e: cl_event, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        let s = status(e);
        assert!(s >= CL_COMPLETE, "the command failed: {s}");
        if s == CL_COMPLETE {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// Long enough for a command that nothing holds to complete on lavapipe under load.
const PATIENCE: Duration = Duration::from_secs(30);

/// A buffer of N ints holding `v`.
fn ints(env: &Env, v: i32) -> cl_mem {
    env.buffer(CL_MEM_READ_WRITE, N * 4, Some(bytes(&vec![v; N])))
}

/// Enqueues `name(m, v)` on `q` over N work-items after `waits`; returns its event.
fn launch(q: cl_command_queue, k: cl_kernel, m: cl_mem, v: i32, waits: &[cl_event]) -> cl_event {
    set_arg(k, 0, &m);
    set_arg(k, 1, &v);
    let mut ev = null_mut();
    let list = if waits.is_empty() {
        null()
    } else {
        waits.as_ptr()
    };
    let global = N;
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            q,
            k,
            1,
            null(),
            &global,
            null(),
            waits.len() as u32,
            list,
            &mut ev,
        )
    });
    ev
}

/// Enqueues a marker (`barrier` false) or a barrier after `waits` on `q`; returns its event.
fn order(q: cl_command_queue, barrier: bool, waits: &[cl_event]) -> cl_event {
    let mut ev = null_mut();
    let list = if waits.is_empty() {
        null()
    } else {
        waits.as_ptr()
    };
    let n = waits.len() as u32;
    ok(unsafe {
        if barrier {
            cl!(clEnqueueBarrierWithWaitList)(q, n, list, &mut ev)
        } else {
            cl!(clEnqueueMarkerWithWaitList)(q, n, list, &mut ev)
        }
    });
    ev
}

fn read(q: cl_command_queue, m: cl_mem) -> Vec<i32> {
    let mut v = vec![0i32; N];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            q,
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

fn release(events: &[cl_event]) {
    for &e in events {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
}

fn set(e: cl_event, s: cl_int) {
    ok(unsafe { cl!(clSetUserEventStatus)(e, s) });
}

struct Fixture {
    env: Env,
    add: cl_kernel,
    mul: cl_kernel,
}

fn fixture() -> Fixture {
    let env = Env::new();
    let p = env.build(ADD);
    let (add, mul) = (env.kernel(p, "add"), env.kernel(p, "mul"));
    Fixture { env, add, mul }
}

/// A kernel held by a user event on an out-of-order queue holds neither an independent kernel
/// nor a marker with a wait list of its own, but holds a kernel that lists it, a marker with
/// an empty list and (on a second queue) nothing; all results are right once released.
#[test]
fn held_command_holds_only_its_dependants() {
    let f = fixture();
    let q = queue(&f.env, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let (a, b, c) = (ints(&f.env, 1), ints(&f.env, 10), ints(&f.env, 100));
    let user = user_event(&f.env);
    let held = launch(q, f.add, a, 5, &[user]);
    let after_held = launch(q, f.mul, a, 3, &[held]);
    let free = launch(q, f.add, b, 7, &[]);
    let free_marker = order(q, false, &[free]);
    let all_marker = order(q, false, &[]);
    let chained = launch(q, f.mul, b, 2, &[free]);
    assert!(
        completes_within(chained, PATIENCE),
        "an independent command (and one after it) waited for a held command of an \
         out-of-order queue"
    );
    assert!(completes_within(free_marker, PATIENCE));
    assert_eq!(read(q, b), vec![(10 + 7) * 2; N]);
    for (e, what) in [
        (held, "the held kernel"),
        (after_held, "a kernel listing it"),
        (all_marker, "a marker with an empty wait list"),
    ] {
        assert!(status(e) > CL_COMPLETE, "{what} ran before the user event");
    }
    // A blocking read without a wait list on an out-of-order queue waits for nothing; `c`
    // is only read.
    assert_eq!(read(q, c), vec![100; N]);
    set(user, CL_COMPLETE);
    ok(unsafe { cl!(clFinish)(q) });
    for e in [held, after_held, all_marker, free, chained] {
        assert_eq!(
            status(e),
            CL_COMPLETE,
            "clFinish returned before every command"
        );
    }
    assert_eq!(read(q, a), vec![(1 + 5) * 3; N]);
    release(&[
        user,
        held,
        after_held,
        free,
        free_marker,
        all_marker,
        chained,
    ]);
    ok(unsafe { cl!(clReleaseCommandQueue)(q) });
}

/// A barrier with an empty wait list holds every later command of an out-of-order queue until
/// everything before it completed; a barrier with a wait list waits only for that list, and
/// still holds the commands after it.
#[test]
fn barriers_order_out_of_order_commands() {
    let f = fixture();
    let q = queue(&f.env, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let other = queue(&f.env, 0);
    let (a, b, c) = (ints(&f.env, 2), ints(&f.env, 3), ints(&f.env, 4));
    let user = user_event(&f.env);
    let held = launch(q, f.add, a, 1, &[user]);
    let barrier = order(q, true, &[]);
    let after = launch(q, f.mul, b, 5, &[]);
    // Something unrelated completes on another queue, and more time passes.
    let reference = launch(other, f.add, c, 1, &[]);
    assert!(completes_within(reference, PATIENCE));
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        status(after) > CL_COMPLETE,
        "a command after a barrier ran before the held command before the barrier"
    );
    assert!(status(barrier) > CL_COMPLETE);
    set(user, CL_COMPLETE);
    assert!(completes_within(after, PATIENCE));
    assert_eq!(status(held), CL_COMPLETE, "the barrier completed before it");
    assert_eq!(read(q, a), vec![3; N]);
    assert_eq!(read(q, b), vec![15; N]);

    // A barrier listing only `first`: later commands wait for it, not for `unlisted`.
    let (user2, user3) = (user_event(&f.env), user_event(&f.env));
    let first = launch(q, f.add, a, 10, &[user2]);
    let unlisted = launch(q, f.add, c, 100, &[user3]);
    let listed_barrier = order(q, true, &[first]);
    let later = launch(q, f.mul, a, 2, &[]);
    std::thread::sleep(Duration::from_millis(200));
    assert!(status(later) > CL_COMPLETE, "ran before the barrier's list");
    set(user2, CL_COMPLETE);
    assert!(
        completes_within(later, PATIENCE),
        "a barrier with a wait list waited for a command it does not list"
    );
    assert!(status(unlisted) > CL_COMPLETE);
    assert_eq!(read(q, a), vec![(3 + 10) * 2; N]);
    set(user3, CL_COMPLETE);
    ok(unsafe { cl!(clFinish)(q) });
    assert_eq!(read(q, c), vec![4 + 1 + 100; N]);
    release(&[user, held, barrier, after, reference, user2, user3]);
    release(&[first, unlisted, listed_barrier, later]);
    for x in [q, other] {
        ok(unsafe { cl!(clReleaseCommandQueue)(x) });
    }
}

/// Many independent and chained commands on an out-of-order queue: chains ordered by their
/// events, barriers between rounds, each buffer's value computed on the host.
#[test]
fn independent_and_chained_commands_give_right_results() {
    let f = fixture();
    let q = queue(&f.env, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let bufs: Vec<cl_mem> = (0..12).map(|i| ints(&f.env, i)).collect();
    let mut want: Vec<i32> = (0..12).collect();
    let mut events = Vec::new();
    for round in 0..4 {
        for (i, &m) in bufs.iter().enumerate() {
            // Chain per buffer within a round: add then multiply, linked by an event.
            let v = (round * 7 + i as i32) % 5 + 1;
            let e1 = launch(q, f.add, m, v, &[]);
            let e2 = launch(q, f.mul, m, 3, &[e1]);
            want[i] = (want[i] + v) * 3;
            events.extend([e1, e2]);
        }
        events.push(order(q, true, &[]));
    }
    ok(unsafe { cl!(clFinish)(q) });
    for &e in &events {
        assert_eq!(status(e), CL_COMPLETE);
    }
    for (i, &m) in bufs.iter().enumerate() {
        assert_eq!(read(q, m), vec![want[i]; N], "buffer {i}");
    }
    release(&events);
    ok(unsafe { cl!(clReleaseCommandQueue)(q) });
}

/// Two in-order queues of one device: a kernel held by a user event on one does not hold the
/// other's kernels; each queue keeps its own order.
#[test]
fn in_order_queues_do_not_hold_each_other() {
    let f = fixture();
    let (q1, q2) = (queue(&f.env, 0), queue(&f.env, 0));
    let (a, b) = (ints(&f.env, 1), ints(&f.env, 2));
    let user = user_event(&f.env);
    let held = launch(q1, f.add, a, 4, &[user]);
    let behind = launch(q1, f.mul, a, 5, &[]);
    let free = launch(q2, f.add, b, 3, &[]);
    let free2 = launch(q2, f.mul, b, 6, &[]);
    assert!(
        completes_within(free2, PATIENCE),
        "a held kernel of one in-order queue held another queue"
    );
    assert!(
        status(behind) > CL_COMPLETE,
        "an in-order queue ran out of order"
    );
    set(user, CL_COMPLETE);
    ok(unsafe { cl!(clFinish)(q1) });
    assert_eq!(read(q1, a), vec![(1 + 4) * 5; N]);
    assert_eq!(read(q2, b), vec![(2 + 3) * 6; N]);
    release(&[user, held, behind, free, free2]);
    for x in [q1, q2] {
        ok(unsafe { cl!(clReleaseCommandQueue)(x) });
    }
}

/// A failed user event fails the commands that list it, not the independent ones of the
/// same out-of-order queue.
#[test]
fn failed_dependency_fails_only_its_dependants() {
    let f = fixture();
    let q = queue(&f.env, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let (a, b) = (ints(&f.env, 1), ints(&f.env, 2));
    let user = user_event(&f.env);
    let doomed = launch(q, f.add, a, 4, &[user]);
    let free = launch(q, f.add, b, 5, &[]);
    assert!(completes_within(free, PATIENCE));
    set(user, -1);
    let _ = unsafe { cl!(clFinish)(q) };
    assert!(
        status(doomed) < 0,
        "a command of a failed wait list completed"
    );
    assert_eq!(read(q, a), vec![1; N]);
    assert_eq!(read(q, b), vec![7; N]);
    release(&[user, doomed, free]);
    ok(unsafe { cl!(clReleaseCommandQueue)(q) });
}

/// 300 launches of `a = a * m + c` with changing `m` and `c` on an in-order queue, enqueued
/// faster than lavapipe runs them (so they reach the device in batches, one submission each):
/// the result is the host's composition in enqueue order, which any lost, repeated or
/// reordered launch changes.
#[test]
fn batched_launches_keep_queue_order() {
    let env = Env::new();
    let p = env.build(
        "__kernel void affine(__global uint *a, uint m, uint c) {\n\
         size_t i = get_global_id(0); a[i] = a[i] * m + c; }\n",
    );
    let k = env.kernel(p, "affine");
    let init: Vec<u32> = (0..N as u32).collect();
    let m = env.buffer(CL_MEM_READ_WRITE, N * 4, Some(bytes(&init)));
    set_arg(k, 0, &m);
    let mut want = init.clone();
    let mut rng = Rng(0x5eed);
    for _ in 0..300 {
        let (mul, add) = (rng.next_u32() | 1, rng.next_u32());
        set_arg(k, 1, &mul);
        set_arg(k, 2, &add);
        let global = N;
        ok(unsafe {
            cl!(clEnqueueNDRangeKernel)(
                env.queue,
                k,
                1,
                null(),
                &global,
                null(),
                0,
                null(),
                null_mut(),
            )
        });
        for w in &mut want {
            *w = w.wrapping_mul(mul).wrapping_add(add);
        }
    }
    env.finish();
    assert_eq!(env.read::<u32>(m, N), want);
}
