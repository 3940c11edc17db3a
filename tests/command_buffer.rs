//! cl_khr_command_buffer 1.0 (the semantics of 0.9.8) through the real loader: recording, sync points, replay with
//! fresh input, argument capture, the one-submission statistic, queries and error codes.
mod common;
use common::*;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, MutexGuard};

/// Tests of this file run one at a time: the debug counters are process-wide.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// vkcl's debug counters: [vkQueueSubmit calls, device commands recorded, secondaries executed,
/// barriers put into secondaries by finalize].
fn stats() -> [u64; 4] {
    let s = debug_stats();
    [s[0], s[1], s[2], s[3]]
}

const SOURCE: &str = r#"
__kernel void scale_add(__global const uint *a, __global uint *b, uint add) {
    size_t i = get_global_id(0);
    b[i] = a[i] * 3u + add;
}
"#;

fn create(
    env: &Env,
    props: Option<&[cl_command_buffer_properties_khr]>,
) -> Result<cl_command_buffer_khr, cl_int> {
    let mut err = 0;
    let cb = unsafe {
        ext!(clCreateCommandBufferKHR)(
            1,
            &env.queue,
            props.map_or(null(), |p| p.as_ptr()),
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        assert!(!cb.is_null());
        Ok(cb)
    } else {
        assert!(cb.is_null());
        Err(err)
    }
}

fn copy(
    cb: cl_command_buffer_khr,
    src: cl_mem,
    dst: cl_mem,
    so: usize,
    d: usize,
    n: usize,
    wait: &[cl_sync_point_khr],
) -> (cl_int, cl_sync_point_khr) {
    let mut sp = 0;
    let w = if wait.is_empty() {
        null()
    } else {
        wait.as_ptr()
    };
    let r = unsafe {
        ext!(clCommandCopyBufferKHR)(
            cb,
            null_mut(),
            null(),
            src,
            dst,
            so,
            d,
            n,
            wait.len() as u32,
            w,
            &mut sp,
            null_mut(),
        )
    };
    (r, sp)
}

fn fill<T>(
    cb: cl_command_buffer_khr,
    m: cl_mem,
    pattern: &T,
    offset: usize,
    size: usize,
    wait: &[cl_sync_point_khr],
) -> (cl_int, cl_sync_point_khr) {
    let mut sp = 0;
    let w = if wait.is_empty() {
        null()
    } else {
        wait.as_ptr()
    };
    let p = pattern as *const T as *const c_void;
    let r = unsafe {
        ext!(clCommandFillBufferKHR)(
            cb,
            null_mut(),
            null(),
            m,
            p,
            std::mem::size_of::<T>(),
            offset,
            size,
            wait.len() as u32,
            w,
            &mut sp,
            null_mut(),
        )
    };
    (r, sp)
}

fn ndrange(
    cb: cl_command_buffer_khr,
    k: cl_kernel,
    n: usize,
    wait: &[cl_sync_point_khr],
) -> (cl_int, cl_sync_point_khr) {
    let mut sp = 0;
    let w = if wait.is_empty() {
        null()
    } else {
        wait.as_ptr()
    };
    let g = [n];
    let r = unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            wait.len() as u32,
            w,
            &mut sp,
            null_mut(),
        )
    };
    (r, sp)
}

fn finalize(cb: cl_command_buffer_khr) -> cl_int {
    unsafe { ext!(clFinalizeCommandBufferKHR)(cb) }
}

fn enqueue(cb: cl_command_buffer_khr) -> cl_int {
    unsafe { ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, null(), null_mut()) }
}

fn release(cb: cl_command_buffer_khr) {
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
}

fn write(env: &Env, m: cl_mem, data: &[u32]) {
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            env.queue,
            m,
            CL_FALSE,
            0,
            data.len() * 4,
            data.as_ptr() as *const c_void,
            0,
            null(),
            null_mut(),
        )
    });
}

fn bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn extension_and_device_queries() {
    let _s = serial();
    let d = device();
    let exts =
        info_string(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_EXTENSIONS, s, v, r) });
    assert!(
        exts.split(' ').any(|e| e == "cl_khr_command_buffer"),
        "{exts}"
    );
    let mut n = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, null_mut(), &mut n)
    });
    let mut list = vec![
        unsafe { std::mem::zeroed::<cl_name_version>() };
        n / std::mem::size_of::<cl_name_version>()
    ];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            n,
            list.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let v = list
        .iter()
        .find(|e| {
            unsafe { std::ffi::CStr::from_ptr(e.name.as_ptr() as *const c_char) }.to_bytes()
                == b"cl_khr_command_buffer"
        })
        .expect("cl_khr_command_buffer with version")
        .version;
    // Final since 2026-09-09 (the CTS checks ">= 1.0"); VKCL_COMMAND_BUFFER_REVISION=0.9.8
    // reports the last provisional revision instead (tests/command_buffer_098.rs).
    assert_eq!(v, 1 << 22, "CL_MAKE_VERSION(1, 0, 0)");
    let caps: cl_device_command_buffer_capabilities_khr = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, s, v, r)
    });
    assert_eq!(
        caps,
        CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
            | CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR
            | CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR,
        "simultaneous use, printf, several queues (multi-device); no device-side enqueue"
    );
    let req: cl_command_queue_properties = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
            s,
            v,
            r,
        )
    });
    assert_eq!(req, 0);
    let sup: cl_command_queue_properties = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR,
            s,
            v,
            r,
        )
    });
    assert_ne!(sup & CL_QUEUE_PROFILING_ENABLE, 0, "the mandated minimum");
}

/// copy -> kernel -> (fill) -> copy -> byte fill, chained by sync points; replayed with fresh
/// input on an in-order and an out-of-order queue.
#[test]
fn pipeline_replayed_with_fresh_input() {
    let _s = serial();
    for props in [0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE] {
        let env = Env::with_queue_properties(props);
        const N: usize = 4096;
        let k = env.kernel(env.build(SOURCE), "scale_add");
        let input = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
        let stage = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
        let out = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
        let out2 = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
        set_arg(k, 0, &stage);
        set_arg(k, 1, &out);
        set_arg(k, 2, &7u32);
        let cb = create(&env, None).unwrap();
        let (r, s1) = copy(cb, input, stage, 0, 0, N * 4, &[]);
        ok(r);
        let (r, s2) = ndrange(cb, k, N, &[s1]);
        ok(r);
        let (r, s3) = fill(cb, out2, &0xABAB_ABABu32, 0, N * 4, &[]);
        ok(r);
        let (r, s4) = copy(cb, out, out2, 0, N * 2, N * 2, &[s2, s3]);
        ok(r);
        let (r, _) = fill(cb, out2, &0x11u8, 1, 3, &[s4]);
        ok(r);
        assert!(
            [s1, s2, s3, s4].windows(2).all(|w| w[0] != w[1]),
            "distinct sync points"
        );
        ok(finalize(cb));
        let mut rng = Rng(0x1234 + props);
        for _ in 0..3 {
            let a: Vec<u32> = (0..N).map(|_| rng.next_u32() >> 4).collect();
            write(&env, input, &a);
            env.finish();
            ok(enqueue(cb));
            env.finish();
            let got: Vec<u32> = env.read(out, N);
            let expect: Vec<u32> = a
                .iter()
                .map(|x| x.wrapping_mul(3).wrapping_add(7))
                .collect();
            assert_eq!(got, expect);
            let got2: Vec<u32> = env.read(out2, N);
            assert_eq!(got2[0], 0x1111_11AB, "byte fill over the word fill");
            assert!(got2[1..N / 2].iter().all(|&x| x == 0xABAB_ABAB));
            assert_eq!(&got2[N / 2..], &expect[..N / 2]);
        }
        release(cb);
        unsafe {
            cl!(clReleaseKernel)(k);
            for m in [input, stage, out, out2] {
                cl!(clReleaseMemObject)(m);
            }
        }
    }
}

#[test]
fn kernel_arguments_are_captured_at_record_time() {
    let _s = serial();
    let env = Env::new();
    const N: usize = 256;
    let k = env.kernel(env.build(SOURCE), "scale_add");
    let a: Vec<u32> = (0..N as u32).collect();
    let src = env.buffer(CL_MEM_READ_WRITE, N * 4, Some(&bytes(&a)));
    let other = env.buffer(CL_MEM_READ_WRITE, N * 4, Some(&bytes(&vec![1000u32; N])));
    let out = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    let out_other = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    set_arg(k, 0, &src);
    set_arg(k, 1, &out);
    set_arg(k, 2, &5u32);
    let cb = create(&env, None).unwrap();
    ok(ndrange(cb, k, N, &[]).0);
    // Later changes to the kernel do not reach the recorded command.
    set_arg(k, 0, &other);
    set_arg(k, 1, &out_other);
    set_arg(k, 2, &100u32);
    ok(finalize(cb));
    ok(enqueue(cb));
    let got: Vec<u32> = env.read(out, N);
    assert_eq!(got, a.iter().map(|x| x * 3 + 5).collect::<Vec<_>>());
    assert_eq!(env.read::<u32>(out_other, N), vec![0u32; N], "untouched");
    // A second recording of the same kernel captures the new arguments.
    let cb2 = create(&env, None).unwrap();
    ok(ndrange(cb2, k, N, &[]).0);
    ok(finalize(cb2));
    ok(enqueue(cb2));
    assert_eq!(env.read::<u32>(out_other, N), vec![3100u32; N]);
    release(cb);
    release(cb2);
}

/// Enqueueing a finalized command buffer of many commands is one vkQueueSubmit that records
/// none of them again.
#[test]
fn enqueue_is_one_submission_recording_nothing() {
    let _s = serial();
    let env = Env::new();
    const N: usize = 1024;
    let k = env.kernel(env.build(SOURCE), "scale_add");
    let bufs: Vec<cl_mem> = (0..4)
        .map(|_| env.buffer(CL_MEM_READ_WRITE, N * 4, None))
        .collect();
    set_arg(k, 0, &bufs[0]);
    set_arg(k, 1, &bufs[1]);
    set_arg(k, 2, &1u32);
    let cb = create(&env, None).unwrap();
    let mut recorded = 0;
    let mut last = Vec::new();
    for i in 0..10 {
        let (r, s) = fill(cb, bufs[0], &(i as u32), 0, N * 4, &last);
        ok(r);
        let (r, s) = ndrange(cb, k, N, &[s]);
        ok(r);
        let (r, s) = copy(cb, bufs[1], bufs[2 + i % 2], 0, 0, N * 4, &[s]);
        ok(r);
        last = vec![s];
        recorded += 3;
    }
    let before = stats();
    ok(finalize(cb));
    let finalized = stats();
    assert_eq!(finalized[0], before[0], "finalize submits nothing");
    assert_eq!(
        finalized[1] - before[1],
        recorded,
        "finalize records each command once"
    );
    env.finish();
    let start = stats();
    const RUNS: u64 = 5;
    for _ in 0..RUNS {
        ok(enqueue(cb));
    }
    env.finish();
    let end = stats();
    // Runs already queued when the queue's worker takes one share its submission.
    let submits = end[0] - start[0];
    assert!(
        (1..=RUNS).contains(&submits),
        "at most one vkQueueSubmit per enqueue: {submits} for {RUNS}"
    );
    assert_eq!(end[1] - start[1], 0, "no command recorded again");
    assert_eq!(
        end[2] - start[2],
        RUNS,
        "one vkCmdExecuteCommands per enqueue"
    );
    let got: Vec<u32> = env.read(bufs[3], N);
    assert_eq!(got, vec![9 * 3 + 1; N]);
    release(cb);
}

/// Barriers only where a command depends on one recorded since the last barrier; an
/// in-order queue chains every command; a barrier command orders what follows.
#[test]
fn minimum_barriers_and_barrier_command() {
    let _s = serial();
    let barriers_of = |env: &Env, record: &dyn Fn(cl_command_buffer_khr)| {
        let cb = create(env, None).unwrap();
        record(cb);
        let before = stats()[3];
        ok(finalize(cb));
        let n = stats()[3] - before;
        (cb, n)
    };
    let ooo = Env::with_queue_properties(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    let bufs: Vec<cl_mem> = (0..6)
        .map(|_| ooo.buffer(CL_MEM_READ_WRITE, 64, None))
        .collect();
    let four_fills_then_two = |cb| {
        let sps: Vec<_> = (0..4)
            .map(|i| fill(cb, bufs[i], &(i as u32 + 1), 0, 64, &[]).1)
            .collect();
        ok(copy(cb, bufs[0], bufs[4], 0, 0, 64, &[sps[0]]).0);
        ok(copy(cb, bufs[1], bufs[5], 0, 0, 64, &[sps[1]]).0);
    };
    let (cb, n) = barriers_of(&ooo, &four_fills_then_two);
    assert_eq!(
        n, 1,
        "independent fills overlap; one barrier serves both copies"
    );
    ok(enqueue(cb));
    ooo.finish();
    assert_eq!(ooo.read::<u32>(bufs[4], 16), vec![1; 16]);
    assert_eq!(ooo.read::<u32>(bufs[5], 16), vec![2; 16]);
    release(cb);

    let in_order = Env::new();
    let bufs2: Vec<cl_mem> = (0..6)
        .map(|_| in_order.buffer(CL_MEM_READ_WRITE, 64, None))
        .collect();
    let (cb, n) = barriers_of(&in_order, &|cb| {
        let sps: Vec<_> = (0..4)
            .map(|i| fill(cb, bufs2[i], &(i as u32 + 1), 0, 64, &[]).1)
            .collect();
        ok(copy(cb, bufs2[0], bufs2[4], 0, 0, 64, &[sps[0]]).0);
        ok(copy(cb, bufs2[1], bufs2[5], 0, 0, 64, &[sps[1]]).0);
    });
    assert_eq!(n, 5, "an in-order queue chains every command");
    release(cb);

    // Barrier command with an empty wait list: the copy recorded after it sees the fill.
    let (cb, n) = barriers_of(&ooo, &|cb| {
        ok(fill(cb, bufs[0], &0x55u32, 0, 64, &[]).0);
        let mut sp = 0;
        ok(unsafe {
            ext!(clCommandBarrierWithWaitListKHR)(
                cb,
                null_mut(),
                null(),
                0,
                null(),
                &mut sp,
                null_mut(),
            )
        });
        assert_ne!(sp, 0);
        ok(copy(cb, bufs[0], bufs[4], 0, 0, 64, &[]).0);
    });
    assert_eq!(n, 1);
    ok(enqueue(cb));
    ooo.finish();
    assert_eq!(ooo.read::<u32>(bufs[4], 16), vec![0x55; 16]);
    release(cb);
}

#[test]
fn rect_copy_and_release_while_pending() {
    let _s = serial();
    let env = Env::new();
    // A 16 x 8 byte matrix; copy the 5 x 3 block at (2, 1) to (0, 2) of a 8-byte-pitch buffer.
    let src: Vec<u8> = (0..128u32).map(|x| x as u8).collect();
    let a = env.buffer(CL_MEM_READ_WRITE, 128, Some(&src));
    let b = env.buffer(CL_MEM_READ_WRITE, 64, Some(&[0u8; 64]));
    let cb = create(&env, None).unwrap();
    let (so, d_o, region) = ([2usize, 1, 0], [0usize, 2, 0], [5usize, 3, 1]);
    let mut sp = 0;
    ok(unsafe {
        ext!(clCommandCopyBufferRectKHR)(
            cb,
            null_mut(),
            null(),
            a,
            b,
            so.as_ptr(),
            d_o.as_ptr(),
            region.as_ptr(),
            16,
            0,
            8,
            0,
            0,
            null(),
            &mut sp,
            null_mut(),
        )
    });
    let r = unsafe {
        ext!(clCommandCopyBufferRectKHR)(
            cb,
            null_mut(),
            null(),
            a,
            b,
            so.as_ptr(),
            d_o.as_ptr(),
            region.as_ptr(),
            4,
            0,
            8,
            0,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "row pitch below region[0]");
    let r = unsafe {
        ext!(clCommandCopyBufferRectKHR)(
            cb,
            null_mut(),
            null(),
            a,
            a,
            so.as_ptr(),
            so.as_ptr(),
            region.as_ptr(),
            16,
            0,
            16,
            0,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_MEM_COPY_OVERLAP);
    ok(finalize(cb));
    ok(enqueue(cb));
    // Released while (possibly) still pending: the run completes.
    release(cb);
    let got: Vec<u8> = env.read(b, 64);
    let mut expect = vec![0u8; 64];
    for y in 0..3 {
        for x in 0..5 {
            expect[(2 + y) * 8 + x] = src[(1 + y) * 16 + 2 + x];
        }
    }
    assert_eq!(got, expect);
}

#[test]
fn command_buffer_info() {
    let _s = serial();
    let env = Env::new();
    let get = ext!(clGetCommandBufferInfoKHR);
    let props = [CL_COMMAND_BUFFER_FLAGS_KHR, 0, 0];
    let cb = create(&env, Some(&props)).unwrap();
    let q: cl_command_queue =
        info_scalar(|s, v, r| unsafe { get(cb, CL_COMMAND_BUFFER_QUEUES_KHR, s, v, r) });
    assert_eq!(q, env.queue);
    let n: cl_uint =
        info_scalar(|s, v, r| unsafe { get(cb, CL_COMMAND_BUFFER_NUM_QUEUES_KHR, s, v, r) });
    assert_eq!(n, 1);
    let c: cl_context =
        info_scalar(|s, v, r| unsafe { get(cb, CL_COMMAND_BUFFER_CONTEXT_KHR, s, v, r) });
    assert_eq!(c, env.context);
    let refs = |cb| {
        info_scalar::<cl_uint>(|s, v, r| unsafe {
            get(cb, CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR, s, v, r)
        })
    };
    assert_eq!(refs(cb), 1);
    ok(unsafe { ext!(clRetainCommandBufferKHR)(cb) });
    assert_eq!(refs(cb), 2);
    release(cb);
    assert_eq!(refs(cb), 1);
    let state = |cb| {
        info_scalar::<cl_command_buffer_state_khr>(|s, v, r| unsafe {
            get(cb, CL_COMMAND_BUFFER_STATE_KHR, s, v, r)
        })
    };
    assert_eq!(state(cb), CL_COMMAND_BUFFER_STATE_RECORDING_KHR);
    ok(finalize(cb));
    assert_eq!(state(cb), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    let mut got = [9u64; 3];
    let mut size = 0;
    ok(unsafe {
        get(
            cb,
            CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR,
            24,
            got.as_mut_ptr() as *mut c_void,
            &mut size,
        )
    });
    assert_eq!((size, got), (24, props));
    let plain = create(&env, None).unwrap();
    ok(unsafe {
        get(
            plain,
            CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR,
            0,
            null_mut(),
            &mut size,
        )
    });
    assert_eq!(size, 0, "NULL properties: nothing to return");
    assert_eq!(
        unsafe { get(cb, 0xdead, 0, null_mut(), &mut size) },
        CL_INVALID_VALUE
    );
    let mut small = 0u16;
    assert_eq!(
        unsafe {
            get(
                cb,
                CL_COMMAND_BUFFER_NUM_QUEUES_KHR,
                2,
                &mut small as *mut u16 as *mut c_void,
                null_mut(),
            )
        },
        CL_INVALID_VALUE
    );
    release(cb);
    release(plain);
    // Released to 0: the handle is no longer valid.
    assert_eq!(
        unsafe {
            get(
                cb,
                CL_COMMAND_BUFFER_NUM_QUEUES_KHR,
                0,
                null_mut(),
                &mut size,
            )
        },
        CL_INVALID_COMMAND_BUFFER_KHR
    );
}

#[test]
fn creation_errors() {
    let _s = serial();
    let env = Env::new();
    let create_raw = ext!(clCreateCommandBufferKHR);
    let mut err = 0;
    assert!(unsafe { create_raw(1, null(), null(), &mut err) }.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "queues NULL");
    // Two queues are cl_khr_command_buffer_multi_device's (tests/command_buffer_multi_device.rs;
    // without it, tests/command_buffer_single_queue.rs).
    let two = [env.queue, env.queue];
    unsafe { create_raw(0, two.as_ptr(), null(), &mut err) };
    assert_eq!(err, CL_INVALID_VALUE, "no queue");
    let not_queue = [env.context as cl_command_queue];
    unsafe { create_raw(1, not_queue.as_ptr(), null(), &mut err) };
    assert_eq!(err, CL_INVALID_COMMAND_QUEUE);
    assert_eq!(
        create(&env, Some(&[0x4242, 1, 0])),
        Err(CL_INVALID_VALUE),
        "unknown property"
    );
    assert_eq!(
        create(&env, Some(&[CL_COMMAND_BUFFER_FLAGS_KHR, 1 << 20, 0])),
        Err(CL_INVALID_VALUE),
        "undefined flag"
    );
    // The device-side sync flag is cl_khr_command_buffer_multi_device's: every command buffer
    // of vkcl syncs on the device (without the extension: tests/command_buffer_single_queue.rs).
    for flags in [1, 2, 3, 4, 7] {
        let cb = create(&env, Some(&[CL_COMMAND_BUFFER_FLAGS_KHR, flags, 0]));
        release(cb.expect("simultaneous-use, mutable and device-side sync flags"));
    }
    assert_eq!(
        create(
            &env,
            Some(&[
                CL_COMMAND_BUFFER_FLAGS_KHR,
                0,
                CL_COMMAND_BUFFER_FLAGS_KHR,
                0,
                0
            ])
        ),
        Err(CL_INVALID_VALUE),
        "property twice"
    );
    // Invalid command-buffer handles.
    for bad in [null_mut(), env.queue as cl_command_buffer_khr] {
        assert_eq!(finalize(bad), CL_INVALID_COMMAND_BUFFER_KHR);
        assert_eq!(enqueue(bad), CL_INVALID_COMMAND_BUFFER_KHR);
        assert_eq!(
            unsafe { ext!(clRetainCommandBufferKHR)(bad) },
            CL_INVALID_COMMAND_BUFFER_KHR
        );
        assert_eq!(
            unsafe { ext!(clReleaseCommandBufferKHR)(bad) },
            CL_INVALID_COMMAND_BUFFER_KHR
        );
        let m = env.buffer(CL_MEM_READ_WRITE, 16, None);
        assert_eq!(
            copy(bad, m, m, 0, 8, 4, &[]).0,
            CL_INVALID_COMMAND_BUFFER_KHR
        );
    }
}

#[test]
fn recording_and_enqueue_errors() {
    let _s = serial();
    let env = Env::new();
    let k = env.kernel(env.build(SOURCE), "scale_add");
    let m = env.buffer(CL_MEM_READ_WRITE, 64, None);
    let m2 = env.buffer(CL_MEM_READ_WRITE, 64, None);
    let cb = create(&env, None).unwrap();
    let (r, s1) = fill(cb, m, &1u32, 0, 64, &[]);
    ok(r);
    // Sync-point wait lists.
    let copy_raw = ext!(clCommandCopyBufferKHR);
    let r = unsafe {
        copy_raw(
            cb,
            null_mut(),
            null(),
            m,
            m2,
            0,
            0,
            4,
            1,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(
        r, CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
        "NULL list with a count"
    );
    let r = unsafe {
        copy_raw(
            cb,
            null_mut(),
            null(),
            m,
            m2,
            0,
            0,
            4,
            0,
            &s1,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, "list with count 0");
    assert_eq!(
        copy(cb, m, m2, 0, 0, 4, &[0]).0,
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    assert_eq!(
        copy(cb, m, m2, 0, 0, 4, &[s1 + 100]).0,
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR
    );
    // command_queue NULL or the creation queue (cl_khr_command_buffer_multi_device), no
    // command properties, no mutable handles.
    let mut err = 0;
    let p: [cl_queue_properties; 1] = [0];
    let other_q = unsafe {
        cl!(clCreateCommandQueueWithProperties)(env.context, env.device, p.as_ptr(), &mut err)
    };
    ok(err);
    let r = unsafe {
        copy_raw(
            cb,
            other_q,
            null(),
            m,
            m2,
            0,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(
        r, CL_INVALID_COMMAND_QUEUE,
        "a queue the command buffer was not created with"
    );
    ok(unsafe { cl!(clReleaseCommandQueue)(other_q) });
    let props: [cl_command_properties_khr; 3] = [0x1234, 1, 0];
    let r = unsafe {
        copy_raw(
            cb,
            null_mut(),
            props.as_ptr(),
            m,
            m2,
            0,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "no command property is defined");
    let empty: [cl_command_properties_khr; 1] = [0];
    ok(unsafe {
        copy_raw(
            cb,
            null_mut(),
            empty.as_ptr(),
            m,
            m2,
            0,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    let mut handle: cl_mutable_command_khr = null_mut();
    let r = unsafe {
        copy_raw(
            cb,
            null_mut(),
            null(),
            m,
            m2,
            0,
            0,
            4,
            0,
            null(),
            null_mut(),
            &mut handle,
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "mutable_handle on a copy command");
    let mut h2: cl_mutable_command_khr = null_mut();
    let k2 = env.kernel(env.build(SOURCE), "scale_add");
    set_arg(k2, 0, &m);
    set_arg(k2, 1, &m2);
    set_arg(k2, 2, &0u32);
    let g = [16usize];
    let r = unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k2,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
            &mut h2,
        )
    };
    ok(r);
    assert!(!h2.is_null(), "NDRange commands have mutable handles");
    // Copy errors of clEnqueueCopyBuffer.
    assert_eq!(
        copy(cb, null_mut(), m2, 0, 0, 4, &[]).0,
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(copy(cb, m, m2, 0, 62, 4, &[]).0, CL_INVALID_VALUE);
    assert_eq!(copy(cb, m, m, 0, 2, 4, &[]).0, CL_MEM_COPY_OVERLAP);
    let other = Env::new();
    let foreign = other.buffer(CL_MEM_READ_WRITE, 64, None);
    assert_eq!(copy(cb, m, foreign, 0, 0, 4, &[]).0, CL_INVALID_CONTEXT);
    // Fill errors of clEnqueueFillBuffer.
    let fill_raw = ext!(clCommandFillBufferKHR);
    let r = unsafe {
        fill_raw(
            cb,
            null_mut(),
            null(),
            m,
            null(),
            4,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "NULL pattern");
    let r = unsafe {
        fill_raw(
            cb,
            null_mut(),
            null(),
            m,
            &1u32 as *const u32 as *const c_void,
            0,
            0,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "pattern size 0");
    assert_eq!(
        fill(cb, m, &1u32, 0, 6, &[]).0,
        CL_INVALID_VALUE,
        "size not a multiple of the pattern"
    );
    assert_eq!(
        fill(cb, m, &1u32, 64, 4, &[]).0,
        CL_INVALID_VALUE,
        "out of bounds"
    );
    // NDRange errors of clEnqueueNDRangeKernel.
    assert_eq!(ndrange(cb, k, 16, &[]).0, CL_INVALID_KERNEL_ARGS);
    set_arg(k, 0, &m);
    set_arg(k, 1, &m2);
    set_arg(k, 2, &0u32);
    let nd = ext!(clCommandNDRangeKernelKHR);
    let r = unsafe {
        nd(
            cb,
            null_mut(),
            null(),
            k,
            0,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_WORK_DIMENSION);
    let r = unsafe {
        nd(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            null(),
            null(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    // As clEnqueueNDRangeKernel since OpenCL 2.1: a NULL global size is an empty NDRange.
    ok(r);
    assert_eq!(ndrange(cb, null_mut(), 16, &[]).0, CL_INVALID_KERNEL);
    let foreign_k = other.kernel(other.build(SOURCE), "scale_add");
    assert_eq!(ndrange(cb, foreign_k, 16, &[]).0, CL_INVALID_CONTEXT);
    // Image and SVM commands: the device has neither.
    let o = [0usize; 3];
    let r = unsafe {
        ext!(clCommandCopyImageKHR)(
            cb,
            null_mut(),
            null(),
            m,
            m2,
            o.as_ptr(),
            o.as_ptr(),
            o.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION);
    let r = unsafe {
        ext!(clCommandFillImageKHR)(
            cb,
            null_mut(),
            null(),
            m,
            o.as_ptr() as *const c_void,
            o.as_ptr(),
            o.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION);
    let r = unsafe {
        ext!(clCommandCopyBufferToImageKHR)(
            cb,
            null_mut(),
            null(),
            m,
            m2,
            0,
            o.as_ptr(),
            o.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION);
    let r = unsafe {
        ext!(clCommandCopyImageToBufferKHR)(
            cb,
            null_mut(),
            null(),
            m,
            m2,
            o.as_ptr(),
            o.as_ptr(),
            0,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION);
    let mut word = 0u32;
    let r = unsafe {
        ext!(clCommandSVMMemcpyKHR)(
            cb,
            null_mut(),
            null(),
            &mut word as *mut u32 as *mut c_void,
            &word as *const u32 as *const c_void,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION);
    let r = unsafe {
        ext!(clCommandSVMMemFillKHR)(
            cb,
            null_mut(),
            null(),
            &mut word as *mut u32 as *mut c_void,
            &word as *const u32 as *const c_void,
            4,
            4,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION);
    // Enqueue before finalize; recording after finalize; finalize twice.
    assert_eq!(enqueue(cb), CL_INVALID_OPERATION);
    ok(finalize(cb));
    assert_eq!(finalize(cb), CL_INVALID_OPERATION);
    assert_eq!(fill(cb, m, &1u32, 0, 4, &[]).0, CL_INVALID_OPERATION);
    assert_eq!(ndrange(cb, k, 16, &[]).0, CL_INVALID_OPERATION);
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
    assert_eq!(r, CL_INVALID_OPERATION);
    // Enqueue arguments.
    let enq = ext!(clEnqueueCommandBufferKHR);
    let mut q = [env.queue, env.queue];
    assert_eq!(
        unsafe { enq(1, null_mut(), cb, 0, null(), null_mut()) },
        CL_INVALID_VALUE,
        "NULL queues with a count"
    );
    assert_eq!(
        unsafe { enq(0, q.as_mut_ptr(), cb, 0, null(), null_mut()) },
        CL_INVALID_VALUE,
        "queues with count 0"
    );
    assert_eq!(
        unsafe { enq(2, q.as_mut_ptr(), cb, 0, null(), null_mut()) },
        CL_INVALID_VALUE,
        "count not that of creation"
    );
    let mut bad = [env.context as cl_command_queue];
    assert_eq!(
        unsafe { enq(1, bad.as_mut_ptr(), cb, 0, null(), null_mut()) },
        CL_INVALID_COMMAND_QUEUE
    );
    let mut foreign_q = [other.queue];
    assert_eq!(
        unsafe { enq(1, foreign_q.as_mut_ptr(), cb, 0, null(), null_mut()) },
        CL_INVALID_CONTEXT
    );
    assert_eq!(
        unsafe { enq(0, null_mut(), cb, 1, null(), null_mut()) },
        CL_INVALID_EVENT_WAIT_LIST
    );
    let mut err = 0;
    let foreign_ev = unsafe { cl!(clCreateUserEvent)(other.context, &mut err) };
    ok(err);
    assert_eq!(
        unsafe { enq(0, null_mut(), cb, 1, &foreign_ev, null_mut()) },
        CL_INVALID_CONTEXT
    );
    ok(unsafe { cl!(clSetUserEventStatus)(foreign_ev, CL_COMPLETE) });
    // A substitute queue of the same device and context is accepted; the event reports the
    // command type.
    let p = [0u64];
    let q2 = unsafe {
        cl!(clCreateCommandQueueWithProperties)(env.context, env.device, p.as_ptr(), &mut err)
    };
    ok(err);
    let mut subst = [q2];
    let mut ev = null_mut();
    ok(unsafe { enq(1, subst.as_mut_ptr(), cb, 0, null(), &mut ev) });
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    let ty: cl_command_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_TYPE, s, v, r) });
    assert_eq!(ty, CL_COMMAND_COMMAND_BUFFER_KHR);
    assert_eq!(env.read::<u32>(m, 16), vec![1; 16]);
    unsafe {
        cl!(clReleaseEvent)(ev);
        cl!(clReleaseEvent)(foreign_ev);
        cl!(clReleaseCommandQueue)(q2);
    }
    release(cb);
}

const NON_UNIFORM: &str = r#"
__kernel void sizes(__global uint4 *out) {
    size_t w = get_global_size(0);
    size_t i = get_global_id(1) * w + get_global_id(0);
    out[i] = (uint4)(get_local_size(0) * 100 + get_local_size(1),
                     get_enqueued_local_size(0) * 100 + get_enqueued_local_size(1),
                     get_num_groups(0) * 100 + get_num_groups(1),
                     get_group_id(0) * 100 + get_group_id(1));
}
"#;

/// A recorded 2-D NDRange whose global size is a multiple of the local size in neither
/// dimension: four boxes of groups, each item sees its own group's size.
#[test]
fn non_uniform_ndrange_recorded() {
    let _s = serial();
    let env = Env::new();
    let p = env
        .try_build(NON_UNIFORM, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "sizes");
    let (g, l) = ([13usize, 7], [4usize, 3]);
    let n = g[0] * g[1];
    let out = env.buffer(CL_MEM_READ_WRITE, n * 16, Some(&vec![0xFF; n * 16]));
    set_arg(k, 0, &out);
    let cb = create(&env, None).unwrap();
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            2,
            null(),
            g.as_ptr(),
            l.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    ok(finalize(cb));
    for _ in 0..2 {
        ok(enqueue(cb));
        env.finish();
        let got: Vec<[u32; 4]> = env.read(out, n);
        for y in 0..g[1] {
            for x in 0..g[0] {
                let size = |d: usize, i: usize| {
                    if i / l[d] == g[d] / l[d] {
                        g[d] % l[d]
                    } else {
                        l[d]
                    }
                };
                let want = [
                    (size(0, x) * 100 + size(1, y)) as u32,
                    (l[0] * 100 + l[1]) as u32,
                    (g[0].div_ceil(l[0]) * 100 + g[1].div_ceil(l[1])) as u32,
                    ((x / l[0]) * 100 + y / l[1]) as u32,
                ];
                assert_eq!(got[y * g[0] + x], want, "item ({x}, {y})");
            }
        }
    }
    release(cb);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(out);
    }
}

/// cl_ext_immutable_memory_objects: recording a copy, rectangular copy or fill into an
/// immutable buffer is CL_INVALID_OPERATION; a copy out of it records and runs.
#[test]
fn immutable_buffer_in_command_buffer() {
    let _s = serial();
    let env = Env::new();
    const N: usize = 256;
    let data: Vec<u32> = (0..N as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
    let imm = env.buffer(
        CL_MEM_IMMUTABLE_EXT | CL_MEM_READ_ONLY,
        N * 4,
        Some(&bytes(&data)),
    );
    let other = env.buffer(CL_MEM_READ_WRITE, N * 4, Some(&vec![0; N * 4]));
    let cb = create(&env, None).unwrap();
    assert_eq!(copy(cb, other, imm, 0, 0, 64, &[]).0, CL_INVALID_OPERATION);
    assert_eq!(fill(cb, imm, &1u32, 0, 64, &[]).0, CL_INVALID_OPERATION);
    let (zero, region) = ([0usize; 3], [16usize, 2, 1]);
    let r = unsafe {
        ext!(clCommandCopyBufferRectKHR)(
            cb,
            null_mut(),
            null(),
            other,
            imm,
            zero.as_ptr(),
            zero.as_ptr(),
            region.as_ptr(),
            16,
            0,
            16,
            0,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION, "copy rect into");
    let (r, _) = copy(cb, imm, other, 0, 0, N * 4, &[]);
    ok(r);
    ok(finalize(cb));
    ok(enqueue(cb));
    env.finish();
    let got: Vec<u32> = env.read(other, N);
    assert_eq!(got, data);
    let kept: Vec<u32> = env.read(imm, N);
    assert_eq!(kept, data);
    release(cb);
    unsafe {
        cl!(clReleaseMemObject)(imm);
        cl!(clReleaseMemObject)(other);
    }
}

/// Recording follows clEnqueueNDRangeKernel's rule (OpenCL 3.0 5.10): a non-uniform range
/// (global 10, local 4) of a program built without -cl-std (OpenCL C 1.2), or with CL3.0 and
/// -cl-uniform-work-group-size, is CL_INVALID_WORK_GROUP_SIZE; with CL3.0 it records and runs
/// groups of 4, 4 and 2 (checked against the host).
#[test]
fn non_uniform_recording_needs_cl_std_2_or_later() {
    let _s = serial();
    let env = Env::new();
    const IDS: &str = r#"
__kernel void ids(__global uint *out) {
    size_t i = get_global_id(0);
    out[i] = (uint)(i * 1000 + get_local_size(0) * 10 + get_group_id(0));
}
"#;
    let (g, l) = ([10usize], [4usize]);
    for (opts, allowed) in [
        ("", false),
        ("-cl-std=CL3.0 -cl-uniform-work-group-size", false),
        ("-cl-std=CL3.0", true),
    ] {
        let p = env
            .try_build(IDS, opts)
            .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
        let k = env.kernel(p, "ids");
        let out = env.buffer(CL_MEM_READ_WRITE, 40, Some(&[0; 40]));
        set_arg(k, 0, &out);
        let cb = create(&env, None).unwrap();
        let r = unsafe {
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
                null_mut(),
            )
        };
        if allowed {
            assert_eq!(r, CL_SUCCESS, "options {opts:?}");
            ok(finalize(cb));
            ok(enqueue(cb));
            env.finish();
            let got: Vec<u32> = env.read(out, 10);
            let want: Vec<u32> = (0..10u32)
                .map(|i| i * 1000 + if i < 8 { 40 } else { 20 } + i / 4)
                .collect();
            assert_eq!(got, want);
        } else {
            assert_eq!(r, CL_INVALID_WORK_GROUP_SIZE, "options {opts:?}");
        }
        release(cb);
        unsafe {
            cl!(clReleaseKernel)(k);
            cl!(clReleaseMemObject)(out);
            cl!(clReleaseProgram)(p);
        }
    }
}
