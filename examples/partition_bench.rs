//! SM-partition benchmark through OpenCL (not a test), issue 7: the same program run twice, once
//! with the CUDA path (green-context sub-devices) and once with `VKCL_CUDA=0` (Vulkan's
//! compute-unit-limited dispatch), printed side by side:
//! - a compute-bound kernel on the root device and on sub-devices of 8, 16, 32, 64 and 128
//!   compute units (`BY_COUNTS`), GFLOP/s and the ratio to the root next to m / total;
//! - two 64-unit sub-devices at once against one after the other;
//! - the SM ids each sub-device's work-groups ran on (`%smid` by inline PTX; only kernels
//!   that run as PTX can read it, so the Vulkan column says n/a);
//! - the cross-queue dependency latency: a chain of one-work-group kernels alternating between
//!   a root-device queue and a sub-device queue, each waiting on the previous one's event
//!   (on the CUDA path a Vulkan -> CUDA -> Vulkan hop through timeline semaphores imported into
//!   CUDA), against the same chain on the root queue alone.
//!
//! Goes through the system ICD loader like any OpenCL program (`OCL_ICD_VENDORS` or
//! `OCL_ICD_FILENAMES` naming vkcl). On a device without SM partitions (lavapipe) it still runs
//! with whatever counts fit. Arguments (optional): `groups iterations repetitions hops`.
//!
//! ```sh
//! OCL_ICD_VENDORS="$PWD/target/icd" cargo run --release --example partition_bench
//! ```
#[path = "common/cl.rs"]
#[macro_use]
mod cl;
use cl::{ok, try_split, units};
use opencl_sys::*;
use std::collections::BTreeSet;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::time::Instant;

const SOURCE: &str = r#"
__kernel void burn(__global float *out, __global uint *smids, int iters) {
    float a = (float)get_global_id(0) * 1e-6f, b = 1.0f, c = 0.5f, d = 0.25f;
    for (int i = 0; i < iters; i++) {
        a = a * 0.9999f + 0.001f;
        b = b * 0.9999f + 0.002f;
        c = c * 0.9999f + 0.003f;
        d = d * 0.9999f + 0.004f;
    }
    out[get_global_id(0)] = a + b + c + d;
#ifdef __NVPTX__
    uint s;
    __asm__ volatile("mov.u32 %0, %%smid;" : "=r"(s));
#else
    uint s = 0xFFFFFFFFu;
#endif
    if (get_local_id(0) == 0)
        smids[get_group_id(0)] = s;
}

__kernel void tick(__global uint *c) {
    if (get_global_id(0) == 0)
        c[0] += 1u;
}
"#;

/// Floating-point operations per loop iteration of `burn` (4 multiply-adds).
const FLOPS_PER_ITER: f64 = 8.0;
const LOCAL: usize = 64;

struct Ctx {
    context: cl_context,
    program: cl_program,
}

impl Ctx {
    fn new(devices: &[cl_device_id]) -> Ctx {
        let (context, program) = cl::context_with_program(devices, SOURCE);
        Ctx { context, program }
    }
    fn queue(&self, d: cl_device_id) -> cl_command_queue {
        let mut err = 0;
        let q =
            unsafe { cl!(clCreateCommandQueueWithProperties)(self.context, d, null(), &mut err) };
        ok(err);
        q
    }
    fn buffer(&self, bytes: usize) -> cl_mem {
        let mut err = 0;
        let m = unsafe {
            cl!(clCreateBuffer)(self.context, CL_MEM_READ_WRITE, bytes, null_mut(), &mut err)
        };
        ok(err);
        m
    }
    fn kernel(&self, name: &std::ffi::CStr, args: &[&dyn Arg]) -> cl_kernel {
        let mut err = 0;
        let k = unsafe { cl!(clCreateKernel)(self.program, name.as_ptr(), &mut err) };
        ok(err);
        for (i, &a) in args.iter().enumerate() {
            // Explicitly the trait object's methods (a reference is an `Arg` too).
            let (size, ptr) = (<dyn Arg>::size(a), <dyn Arg>::ptr(a));
            ok(unsafe { cl!(clSetKernelArg)(k, i as u32, size, ptr) });
        }
        k
    }
}

trait Arg {
    fn size(&self) -> usize;
    fn ptr(&self) -> *const c_void;
}
impl<T: Copy> Arg for T {
    fn size(&self) -> usize {
        std::mem::size_of::<T>()
    }
    fn ptr(&self) -> *const c_void {
        self as *const T as *const c_void
    }
}

fn enqueue(
    q: cl_command_queue,
    k: cl_kernel,
    n: usize,
    local: usize,
    wait: &[cl_event],
) -> cl_event {
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            q,
            k,
            1,
            null(),
            &n,
            &local,
            wait.len() as u32,
            if wait.is_empty() {
                null()
            } else {
                wait.as_ptr()
            },
            &mut ev,
        )
    });
    ev
}

fn read_u32(q: cl_command_queue, m: cl_mem, n: usize) -> Vec<u32> {
    let mut v = vec![0u32; n];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            q,
            m,
            CL_TRUE,
            0,
            4 * n,
            v.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    v
}

/// One device's burn setup: kernel, output and SM-id buffers.
struct Burn {
    kernel: cl_kernel,
    smids: cl_mem,
    groups: usize,
}

impl Burn {
    fn new(ctx: &Ctx, groups: usize, iters: i32) -> Burn {
        let out = ctx.buffer(groups * LOCAL * 4);
        let smids = ctx.buffer(groups * 4);
        let kernel = ctx.kernel(c"burn", &[&out, &smids, &iters]);
        Burn {
            kernel,
            smids,
            groups,
        }
    }
}

/// Best seconds of `reps` runs (after a warm-up) of every (queue, burn) at once.
fn time(runs: &[(cl_command_queue, &Burn)], reps: usize) -> f64 {
    let mut best = f64::MAX;
    for rep in 0..=reps {
        let t = Instant::now();
        let evs: Vec<cl_event> = runs
            .iter()
            .map(|(q, b)| {
                let e = enqueue(*q, b.kernel, b.groups * LOCAL, LOCAL, &[]);
                ok(unsafe { cl!(clFlush)(*q) });
                e
            })
            .collect();
        ok(unsafe { cl!(clWaitForEvents)(evs.len() as u32, evs.as_ptr()) });
        for e in evs {
            unsafe { cl!(clReleaseEvent)(e) };
        }
        if rep > 0 {
            best = best.min(t.elapsed().as_secs_f64());
        }
    }
    best
}

fn sm_ids(q: cl_command_queue, b: &Burn) -> Option<BTreeSet<u32>> {
    let ids: BTreeSet<u32> = read_u32(q, b.smids, b.groups).into_iter().collect();
    (!ids.contains(&u32::MAX)).then_some(ids)
}

fn ranges(ids: &BTreeSet<u32>) -> String {
    let mut out: Vec<String> = Vec::new();
    let v: Vec<u32> = ids.iter().copied().collect();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            format!("{}", v[i])
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// One run of the measurements with whatever path the environment selects; prints
/// `key<TAB>value` lines for the parent to put side by side.
fn child(groups: Option<usize>, iters: i32, reps: usize, hops: usize, hops_only: bool) {
    let (root, name) = cl::default_device();
    let total = units(root);
    let groups = groups.unwrap_or(total as usize * 64);
    if hops_only {
        return hop_latency(root, total, hops);
    }
    println!("device\t{name}, {total} compute units");
    println!("kernel\t{groups} groups of {LOCAL}, {iters} iterations, best of {reps}");
    let end = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
    let flops = |g: usize, s: f64| (g * LOCAL) as f64 * f64::from(iters) * FLOPS_PER_ITER / s / 1e9;
    // The root.
    let ctx = Ctx::new(&[root]);
    let rq = ctx.queue(root);
    let rb = Burn::new(&ctx, groups, iters);
    let base = flops(groups, time(&[(rq, &rb)], reps));
    println!("root GFLOP/s\t{base:.0}");
    let mut per_sm: Vec<(u32, f64)> = Vec::new();
    for m in [8u32, 16, 32, 64, 128] {
        if m > total {
            continue;
        }
        let Ok(sub) = try_split(root, &[CL_DEVICE_PARTITION_BY_COUNTS, m as isize, end, 0]) else {
            println!("m={m} GFLOP/s\tpartition failed");
            continue;
        };
        let real = units(sub[0]);
        let c = Ctx::new(&[sub[0]]);
        let q = c.queue(sub[0]);
        let b = Burn::new(&c, groups, iters);
        let g = flops(groups, time(&[(q, &b)], reps));
        per_sm.push((m, g / f64::from(real)));
        println!("m={m} units\t{real}");
        println!("m={m} GFLOP/s\t{g:.0}");
        println!(
            "m={m} vs root (m/total)\t{:.3} ({:.3})",
            g / base,
            f64::from(real) / f64::from(total)
        );
        let ids =
            sm_ids(q, &b).map_or("n/a".into(), |s| format!("{} SMs: {}", s.len(), ranges(&s)));
        println!("m={m} SM ids\t{ids}");
    }
    // Proportionality: GFLOP/s per compute unit against the largest sub-device's.
    if let Some(&(_, top)) = per_sm.last() {
        for &(m, p) in &per_sm {
            println!("m={m} per unit vs largest sub-device\t{:.3}", p / top);
        }
    }
    // Two 64-unit sub-devices, at once and one after the other.
    if total >= 128 {
        match try_split(root, &[CL_DEVICE_PARTITION_BY_COUNTS, 64, 64, end, 0]) {
            Ok(two) => {
                let c = Ctx::new(&two);
                let (qa, qb) = (c.queue(two[0]), c.queue(two[1]));
                let (ba, bb) = (Burn::new(&c, groups, iters), Burn::new(&c, groups, iters));
                let together = time(&[(qa, &ba), (qb, &bb)], reps);
                let apart = time(&[(qa, &ba)], reps) + time(&[(qb, &bb)], reps);
                println!("2x64 at once s\t{together:.4}");
                println!("2x64 one after the other s\t{apart:.4}");
                println!("2x64 speed-up\t{:.2}x", apart / together);
                match (sm_ids(qa, &ba), sm_ids(qb, &bb)) {
                    (Some(a), Some(b)) => println!(
                        "2x64 SM ids\tA {} SMs, B {} SMs, shared {}",
                        a.len(),
                        b.len(),
                        a.intersection(&b).count()
                    ),
                    _ => println!("2x64 SM ids\tn/a"),
                }
            }
            Err(e) => println!("2x64 at once s\tpartition failed ({e})"),
        }
    }
    hop_latency(root, total, hops);
}

/// The cross-queue dependency latency (see the file's documentation).
fn hop_latency(root: cl_device_id, total: u32, hops: usize) {
    let end = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
    let m = if total >= 64 { 64 } else { (total / 2).max(1) };
    if let Ok(sub) = try_split(root, &[CL_DEVICE_PARTITION_BY_COUNTS, m as isize, end, 0]) {
        let c = Ctx::new(&[root, sub[0]]);
        let (qr, qs) = (c.queue(root), c.queue(sub[0]));
        let counter = c.buffer(4);
        let zero = 0u32;
        ok(unsafe {
            cl!(clEnqueueFillBuffer)(
                qr,
                counter,
                &zero as *const u32 as *const c_void,
                4,
                0,
                4,
                0,
                null(),
                null_mut(),
            )
        });
        ok(unsafe { cl!(clFinish)(qr) });
        let k = c.kernel(c"tick", &[&counter]);
        let chain = |queues: &[cl_command_queue]| -> f64 {
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t = Instant::now();
                let mut last: Option<cl_event> = None;
                for i in 0..hops {
                    let q = queues[i % queues.len()];
                    let e = enqueue(q, k, 1, 1, last.as_slice());
                    ok(unsafe { cl!(clFlush)(q) });
                    if let Some(l) = last.replace(e) {
                        unsafe { cl!(clReleaseEvent)(l) };
                    }
                }
                let l = last.unwrap();
                ok(unsafe { cl!(clWaitForEvents)(1, &l) });
                unsafe { cl!(clReleaseEvent)(l) };
                best = best.min(t.elapsed().as_secs_f64());
            }
            best / hops as f64 * 1e6
        };
        let same = chain(&[qr]);
        let cross = chain(&[qr, qs]);
        let count = read_u32(qr, counter, 1)[0];
        assert_eq!(count as usize, 6 * hops, "a dependent kernel was lost");
        println!("same-queue dependent kernel us\t{same:.1}");
        println!("cross-queue (root <-> sub-device) hop us\t{cross:.1}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let n = |i: usize| args.get(i).and_then(|s| s.parse::<usize>().ok());
        let hops_only = args.iter().any(|a| a == "--hops-only");
        child(
            n(1),
            n(2).unwrap_or(40000) as i32,
            n(3).unwrap_or(3),
            n(4).unwrap_or(200),
            hops_only,
        );
        return;
    }
    let run = |env: &[(&str, &str)], extra: &[&str]| -> Vec<(String, String)> {
        let out = std::process::Command::new(std::env::current_exe().expect("own path"))
            .arg("--child")
            .args(&args)
            .args(extra)
            .envs(env.iter().copied())
            .output()
            .expect("child run");
        if !out.status.success() {
            eprintln!(
                "run with {env:?} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                l.split_once('\t')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect()
    };
    let mut cuda = run(&[("VKCL_CUDA", "1")], &[]);
    let vulkan = run(&[("VKCL_CUDA", "0")], &[]);
    let mut vulkan = vulkan;
    // The other ways of ordering across queues (docs/settings.md: VKCL_CUDA_SYNC, VKCL_CROSS_QUEUE_WAIT).
    for (cuda_on, var, mode) in [
        ("1", "VKCL_CUDA_SYNC", "device"),
        ("1", "VKCL_CUDA_SYNC", "host"),
        ("1", "VKCL_CROSS_QUEUE_WAIT", "device"),
        ("0", "VKCL_CROSS_QUEUE_WAIT", "device"),
    ] {
        let hop = run(&[("VKCL_CUDA", cuda_on), (var, mode)], &["--hops-only"]);
        let into = if cuda_on == "1" {
            &mut cuda
        } else {
            &mut vulkan
        };
        for (k, v) in hop {
            if k.starts_with("cross-queue") {
                into.push((format!("{k}, {var}={mode}"), v));
            }
        }
    }
    println!("| measurement | CUDA path (green contexts) | Vulkan path (VKCL_CUDA=0) |");
    println!("|---|---|---|");
    let mut keys: Vec<&String> = cuda.iter().map(|(k, _)| k).collect();
    for (k, _) in &vulkan {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let get = |v: &[(String, String)], k: &str| {
        v.iter()
            .find(|(x, _)| x == k)
            .map_or("-".to_string(), |(_, y)| y.clone())
    };
    for k in keys {
        println!("| {k} | {} | {} |", get(&cuda, k), get(&vulkan, k));
    }
}
