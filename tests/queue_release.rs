//! Released out-of-order queues free their lanes (`core/queue_lanes.rs`): each lane is an
//! engine with two threads, and a queue that outlived its release (an event of it held by the
//! queue itself) would keep them. Counted with the threads of this process, alone in its
//! test binary so that no other test starts or ends threads meanwhile.
mod common;
use common::*;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// Creates an out-of-order queue, runs two kernels on it (one held by a user event, so the
/// other takes a second lane) and releases everything.
fn cycle(env: &Env, k: cl_kernel) {
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    ];
    let mut err = 1;
    let q = unsafe {
        cl!(clCreateCommandQueueWithProperties)(env.context, env.device, props.as_ptr(), &mut err)
    };
    ok(err);
    let user = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    let global = 64usize;
    let mut held = null_mut();
    let mut free = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(q, k, 1, null(), &global, null(), 1, &user, &mut held)
    });
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(q, k, 1, null(), &global, null(), 0, null(), &mut free)
    });
    ok(unsafe { cl!(clWaitForEvents)(1, &free) });
    ok(unsafe { cl!(clSetUserEventStatus)(user, CL_COMPLETE) });
    ok(unsafe { cl!(clFinish)(q) });
    for e in [user, held, free] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    ok(unsafe { cl!(clReleaseCommandQueue)(q) });
}

#[test]
fn released_out_of_order_queues_end_their_threads() {
    let env = Env::new();
    let p = env.build("__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n");
    let k = env.kernel(p, "inc");
    let m = env.buffer(CL_MEM_READ_WRITE, 64 * 4, Some(bytes(&[0i32; 64])));
    set_arg(k, 0, &m);
    // The driver's own threads start with the first queues.
    cycle(&env, k);
    std::thread::sleep(Duration::from_millis(200));
    let before = threads();
    for _ in 0..4 {
        cycle(&env, k);
    }
    let start = Instant::now();
    while threads() > before && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        threads() <= before,
        "{} threads after 4 released queues, {before} before",
        threads()
    );
    assert_eq!(env.read::<i32>(m, 64), vec![10; 64]);
}
