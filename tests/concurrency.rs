//! Many threads building programs, creating kernels and launching at once (issue 18, finding
//! 6: clCreateKernel once failed in all 8 threads of such a program). Each round, every thread
//! builds the round's shared source (the same text in all threads at once: concurrent misses
//! and stores of one program-cache entry), some build a source of their own, one shared
//! program is built by every thread at once (clBuildProgram on one program from many
//! threads), and every thread creates kernels of all of them, including of a program built
//! before the threads started, launches them on its own queue and checks the results against
//! the host. The program cache is tested fresh, warm and off, each in a child process (this
//! binary running `stress_child`) since the cache settings are read once per process.
mod common;
use common::*;
use std::ffi::{c_char, c_void, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};
use std::sync::{Arc, Barrier};

const THREADS: usize = 12;
const ROUNDS: usize = 2;
const N: usize = 256;

/// Round `r`'s shared source: an integer kernel, and a `sin` kernel that needs the math
/// library (built once per process, or read from the cache beside the programs).
fn shared_source(r: usize) -> String {
    format!(
        "__kernel void lin(__global const int *x, __global int *y) {{\n\
         size_t i = get_global_id(0); y[i] = x[i] * {a} + (int)i * {b}; }}\n\
         __kernel void wave(__global const float *x, __global float *y) {{\n\
         size_t i = get_global_id(0); y[i] = sin(x[i]) + {b}.0f; }}\n",
        a = 3 + r,
        b = 7 * r + 1
    )
}

/// A source of thread `t` in round `r` alone.
fn own_source(t: usize, r: usize) -> String {
    format!(
        "__kernel void own(__global const int *x, __global int *y) {{\n\
         size_t i = get_global_id(0); y[i] = (x[i] ^ {t}) - {r} * (int)i; }}\n"
    )
}

/// Raw OpenCL handles shared between threads (the API is thread-safe for these uses).
#[derive(Clone, Copy)]
struct Shared {
    context: cl_context,
    device: cl_device_id,
    prebuilt: cl_program,
}
// SAFETY: OpenCL handles may be used from any thread (OpenCL 3.0 appendix A.2).
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

fn program(ctx: cl_context, src: &str) -> cl_program {
    let s = CString::new(src).unwrap();
    let ptrs = [s.as_ptr()];
    let mut err = 0;
    let p = unsafe {
        cl!(clCreateProgramWithSource)(
            ctx,
            1,
            ptrs.as_ptr() as *mut *const c_char,
            null(),
            &mut err,
        )
    };
    ok(err);
    p
}

fn build(p: cl_program, d: cl_device_id, what: &str) {
    let r = unsafe { cl!(clBuildProgram)(p, 1, &d, null(), None, null_mut()) };
    assert_eq!(r, CL_SUCCESS, "{what}: {}", build_log(p, d));
}

fn kernel(p: cl_program, name: &str, what: &str) -> cl_kernel {
    let n = CString::new(name).unwrap();
    let mut err = 0;
    let k = unsafe { cl!(clCreateKernel)(p, n.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "clCreateKernel({name}) of {what}");
    k
}

fn buffer<T: Copy>(ctx: cl_context, data: &[T]) -> cl_mem {
    let mut err = 0;
    let m = unsafe {
        cl!(clCreateBuffer)(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            std::mem::size_of_val(data),
            data.as_ptr() as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    m
}

/// Runs `k(x, y)` over N items on `q` and returns y.
fn launch<T: Copy + Default>(
    ctx: cl_context,
    q: cl_command_queue,
    k: cl_kernel,
    x: &[T],
) -> Vec<T> {
    let (bx, by) = (buffer(ctx, x), buffer(ctx, &[T::default(); N]));
    set_arg(k, 0, &bx);
    set_arg(k, 1, &by);
    let g = N;
    ok(unsafe { cl!(clEnqueueNDRangeKernel)(q, k, 1, null(), &g, null(), 0, null(), null_mut()) });
    let mut out = vec![T::default(); N];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            q,
            by,
            CL_TRUE,
            0,
            N * std::mem::size_of::<T>(),
            out.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    unsafe {
        cl!(clReleaseMemObject)(bx);
        cl!(clReleaseMemObject)(by);
    }
    out
}

fn check_lin(got: &[i32], x: &[i32], r: usize, what: &str) {
    let (a, b) = (3 + r as i32, 7 * r as i32 + 1);
    let want: Vec<i32> = (0..N).map(|i| x[i] * a + i as i32 * b).collect();
    assert_eq!(got, want, "{what}");
}

fn check_wave(got: &[f32], x: &[f32], r: usize, what: &str) {
    let b = (7 * r + 1) as f32;
    for (i, (&g, &xi)) in got.iter().zip(x).enumerate() {
        let want = xi.sin() + b;
        assert!(
            (g - want).abs() <= 1e-5 * want.abs().max(1.0),
            "{what}: item {i}: {g} vs {want}"
        );
    }
}

/// One thread's work: `ROUNDS` rounds, all threads starting each round together.
fn worker(t: usize, s: Shared, gate: Arc<Barrier>, together: Vec<cl_program>) {
    let mut err = 0;
    let q =
        unsafe { cl!(clCreateCommandQueueWithProperties)(s.context, s.device, null(), &mut err) };
    ok(err);
    let mut rng = Rng(0x5eed + t as u64);
    let xi: Vec<i32> = (0..N)
        .map(|_| (rng.next_u32() % 2001) as i32 - 1000)
        .collect();
    let xf: Vec<f32> = (0..N).map(|_| rng.next_f32() * 6.0 - 3.0).collect();
    for (r, &shared_program) in together.iter().enumerate() {
        gate.wait();
        // The round's shared source, built by every thread at once (its own program object).
        let p = program(s.context, &shared_source(r));
        build(p, s.device, &format!("thread {t} round {r}: shared source"));
        // One program object built by every thread at once: each build succeeds or, while
        // another is in progress, is CL_INVALID_OPERATION (OpenCL 3.0 5.8.5); either way the
        // program has its executable once all builds returned (gate below).
        let rb =
            unsafe { cl!(clBuildProgram)(shared_program, 1, &s.device, null(), None, null_mut()) };
        assert!(
            rb == CL_SUCCESS || rb == CL_INVALID_OPERATION,
            "thread {t} round {r}: clBuildProgram of one program from all threads: {rb}: {}",
            build_log(shared_program, s.device)
        );
        let what = format!("thread {t} round {r}: shared source");
        let k = kernel(p, "lin", &what);
        check_lin(&launch(s.context, q, k, &xi), &xi, r, &what);
        let kw = kernel(p, "wave", &what);
        check_wave(&launch(s.context, q, kw, &xf), &xf, r, &what);
        unsafe {
            cl!(clReleaseKernel)(k);
            cl!(clReleaseKernel)(kw);
            cl!(clReleaseProgram)(p);
        }
        // A source of this thread's own (half of the threads).
        if t % 2 == 0 {
            let what = format!("thread {t} round {r}: own source");
            let p = program(s.context, &own_source(t, r));
            build(p, s.device, &what);
            let k = kernel(p, "own", &what);
            let got = launch(s.context, q, k, &xi);
            let want: Vec<i32> = (0..N)
                .map(|i| (xi[i] ^ t as i32) - r as i32 * i as i32)
                .collect();
            assert_eq!(got, want, "{what}");
            unsafe {
                cl!(clReleaseKernel)(k);
                cl!(clReleaseProgram)(p);
            }
        }
        // Kernels of the program built before the threads started, created by all at once.
        let what = format!("thread {t} round {r}: prebuilt program");
        let k = kernel(s.prebuilt, "lin", &what);
        check_lin(&launch(s.context, q, k, &xi), &xi, 0, &what);
        unsafe { cl!(clReleaseKernel)(k) };
        // Every thread's build of the one program has returned: it has its executable.
        gate.wait();
        let what = format!("thread {t} round {r}: one program built by all threads");
        let k = kernel(shared_program, "lin", &what);
        check_lin(&launch(s.context, q, k, &xi), &xi, r, &what);
        unsafe { cl!(clReleaseKernel)(k) };
        // Nobody creates kernels of it while the next round builds it again.
        gate.wait();
    }
    unsafe { cl!(clReleaseCommandQueue)(q) };
}

/// The stress itself: `THREADS` threads, `ROUNDS` rounds, in this process.
fn stress() {
    let d = device();
    let mut err = 0;
    let context = unsafe { cl!(clCreateContext)(null(), 1, &d, None, null_mut(), &mut err) };
    ok(err);
    let prebuilt = program(context, &shared_source(0));
    build(prebuilt, d, "prebuilt");
    let together: Vec<cl_program> = (0..ROUNDS)
        .map(|r| program(context, &shared_source(r)))
        .collect();
    let s = Shared {
        context,
        device: d,
        prebuilt,
    };
    let gate = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (gate, together) = (gate.clone(), together.clone());
            struct Programs(Vec<cl_program>);
            // SAFETY: as for Shared.
            unsafe impl Send for Programs {}
            let together = Programs(together);
            std::thread::spawn(move || {
                let together = together;
                worker(t, s, gate, together.0)
            })
        })
        .collect();
    let mut failed = Vec::new();
    for (t, h) in handles.into_iter().enumerate() {
        if let Err(e) = h.join() {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("thread {t}: {msg}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    unsafe {
        for p in together {
            cl!(clReleaseProgram)(p);
        }
        cl!(clReleaseProgram)(prebuilt);
        cl!(clReleaseContext)(context);
    }
}

/// Run in a child process by the test below, under the cache settings it is given.
#[test]
#[ignore]
fn stress_child() {
    stress();
}

fn child(env: &[(&str, &std::ffi::OsStr)], remove: &[&str], what: &str) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "stress_child", "--ignored", "--nocapture"]);
    for k in remove {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{what}:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The stress with the program cache in a fresh directory, then warm (the same directory, a
/// new process: every build a hit, the math library read back), then off.
#[test]
fn concurrent_builds_and_launches_with_the_cache_fresh_warm_and_off() {
    let dir: PathBuf = tempfile_dir();
    let d = dir.as_os_str();
    child(&[("VKCL_CACHE_DIR", d)], &["VKCL_CACHE"], "cache fresh");
    let entries = std::fs::read_dir(dir.join("programs"))
        .map(|rd| rd.count())
        .unwrap_or(0);
    assert!(entries > 0, "the fresh run stored programs");
    child(&[("VKCL_CACHE_DIR", d)], &["VKCL_CACHE"], "cache warm");
    child(
        &[("VKCL_CACHE", std::ffi::OsStr::new("0"))],
        &[],
        "cache off",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("vkcl-concurrency-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
