//! Buffer reads through host-cached staging memory (`VKCL_STAGED_READS=1`, the path NVIDIA's
//! device-local BAR memory takes by default): contents, offsets, sub-buffers, kernel output,
//! wait lists and the failure of a wait-list event, compared with a host model.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn env() -> Env {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used in this
    // process; every test of this binary wants the same value.
    unsafe { std::env::set_var("VKCL_STAGED_READS", "1") };
    Env::new()
}

fn read(env: &Env, m: cl_mem, offset: usize, n: usize, waits: &[cl_event]) -> (Vec<u8>, cl_event) {
    let mut v = vec![0u8; n];
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            m,
            CL_FALSE,
            offset,
            n,
            v.as_mut_ptr() as *mut c_void,
            waits.len() as cl_uint,
            if waits.is_empty() {
                null()
            } else {
                waits.as_ptr()
            },
            &mut ev,
        )
    });
    (v, ev)
}

fn status(ev: cl_event) -> cl_int {
    info_scalar(|s, v, r| unsafe {
        cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, s, v, r)
    })
}

#[test]
fn staged_reads_return_the_buffer_contents() {
    let env = env();
    let mut rng = Rng(7);
    let data: Vec<u8> = (0..10_000).map(|_| rng.next_u32() as u8).collect();
    let m = env.buffer(0, data.len(), Some(&data));
    for (off, n) in [(0, 10_000), (1, 9_999), (4_093, 17), (9_999, 1)] {
        let (v, ev) = read(&env, m, off, n, &[]);
        ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
        assert_eq!(v, data[off..off + n], "read of {n} bytes at {off}");
        ok(unsafe { cl!(clReleaseEvent)(ev) });
    }
    // A sub-buffer reads its own window.
    let region = cl_buffer_region {
        origin: 256,
        size: 1000,
    };
    let mut err = 0;
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            m,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    let (v, ev) = read(&env, sub, 10, 500, &[]);
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    assert_eq!(v, data[266..766]);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    ok(unsafe { cl!(clReleaseMemObject)(sub) });
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

#[test]
fn staged_reads_see_kernel_output_and_wait_for_their_wait_list() {
    let env = env();
    let n = 4096usize;
    let m = env.buffer(0, n * 4, None);
    let p = env.build(
        "__kernel void f(__global uint *a) { uint i = get_global_id(0); a[i] = i * 2654435761u; }",
    );
    let k = env.kernel(p, "f");
    set_arg(k, 0, &m);
    // The kernel waits for a user event, and the read waits for the kernel: nothing may
    // complete before the user event does.
    let mut err = 0;
    let gate = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    let mut kev = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &n, null(), 1, &gate, &mut kev)
    });
    ok(unsafe { cl!(clFlush)(env.queue) });
    let (v, ev) = read(&env, m, 0, n * 4, &[kev]);
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(
        status(ev) > CL_COMPLETE,
        "the read completed before its wait list"
    );
    ok(unsafe { cl!(clSetUserEventStatus)(gate, CL_COMPLETE) });
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    let want: Vec<u8> = (0..n as u32)
        .flat_map(|i| i.wrapping_mul(2654435761).to_ne_bytes())
        .collect();
    assert_eq!(v, want);
    for e in [gate, kev, ev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
}

#[test]
fn staged_read_fails_with_a_failed_wait_list_event() {
    let env = env();
    let m = env.buffer(0, 64, Some(&[5u8; 64]));
    let mut err = 0;
    let gate = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    let (v, ev) = read(&env, m, 0, 64, &[gate]);
    ok(unsafe { cl!(clSetUserEventStatus)(gate, -7) });
    let r = unsafe { cl!(clWaitForEvents)(1, &ev) };
    assert_eq!(r, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert!(status(ev) < 0, "the read's event must carry the failure");
    assert_eq!(
        v,
        vec![0u8; 64],
        "a failed read must not write the destination"
    );
    ok(unsafe { cl!(clReleaseEvent)(gate) });
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

/// Reads larger than one chunk (8 MiB) are pipelined as chunk jobs reporting to one event:
/// the whole range arrives, at an odd offset and size, from a sub-buffer, behind a gated
/// kernel, and a failed wait list fails the read without writing the destination.
#[test]
fn chunked_reads_return_every_chunk() {
    let env = env();
    let n = (8 << 20) * 3 + 12_345;
    let mut rng = Rng(11);
    let data: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
    let m = env.buffer(0, n, Some(&data));
    for (off, len) in [(0, n), (3, (8 << 20) + 1), (777, (16 << 20) + 4096 + 5)] {
        let (v, ev) = read(&env, m, off, len, &[]);
        ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
        assert!(
            v == data[off..off + len],
            "chunked read of {len} bytes at {off} differs at {:?}",
            v.iter().zip(&data[off..]).position(|(a, b)| a != b)
        );
        ok(unsafe { cl!(clReleaseEvent)(ev) });
    }
    // A sub-buffer, behind a kernel that waits for a user event.
    let region = cl_buffer_region {
        origin: 4096,
        size: n - 4096,
    };
    let mut err = 0;
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            m,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    let p = env.build("__kernel void f(__global uchar *a) { a[get_global_id(0)] ^= 0x5A; }");
    let k = env.kernel(p, "f");
    set_arg(k, 0, &sub);
    let gate = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    let items = n - 4096;
    let mut kev = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &items, null(), 1, &gate, &mut kev)
    });
    let (v, ev) = read(&env, sub, 100, items - 100, &[]);
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert!(
        status(ev) > CL_COMPLETE,
        "the read completed before the kernel ran"
    );
    ok(unsafe { cl!(clSetUserEventStatus)(gate, CL_COMPLETE) });
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    let want: Vec<u8> = data[4196..].iter().map(|b| b ^ 0x5A).collect();
    assert!(v == want, "chunked read of a sub-buffer after a kernel");
    for e in [gate, kev, ev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    // A failed wait list.
    let gate = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    let (v, ev) = read(&env, m, 0, n, &[gate]);
    ok(unsafe { cl!(clSetUserEventStatus)(gate, -9) });
    let r = unsafe { cl!(clWaitForEvents)(1, &ev) };
    assert_eq!(r, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert!(status(ev) < 0);
    assert!(
        v.iter().all(|&b| b == 0),
        "a failed read wrote its destination"
    );
    // The queue still works afterwards.
    let (v, ev) = read(&env, m, 0, n, &[]);
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    assert!(v[..4096] == data[..4096]);
    for e in [gate, ev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    ok(unsafe { cl!(clReleaseMemObject)(sub) });
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}
