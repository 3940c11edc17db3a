//! Sub-device throughput benchmark (not a test): a compute-bound kernel on the root device, on
//! sub-devices of m compute units for every m, and on two disjoint half-device sub-devices at
//! once, each with its ratio to the root's throughput next to m / total.
//!
//! Goes through the system ICD loader, like any OpenCL program: point `OCL_ICD_VENDORS` at a
//! directory whose vkcl.icd names libvkcl.so (see docs/subdevices.md). Arguments (optional):
//! `groups iterations repetitions`; defaults scale the group count with the compute units.
//!
//! ```sh
//! layer-manifest/register.sh --dir "$PWD/target/icd" "$PWD/target/debug/libvkcl.so"
//! OCL_ICD_VENDORS="$PWD/target/icd" cargo run --example subdevice_bench
//! ```
use opencl_sys::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use std::time::Instant;

#[path = "common/cl.rs"]
#[macro_use]
mod cl;
use cl::{ok, split, units};

const SOURCE: &str = r#"
__kernel void burn(__global float *out, int iters) {
    float a = (float)get_global_id(0) * 1e-6f, b = 1.0f, c = 0.5f, d = 0.25f;
    for (int i = 0; i < iters; i++) {
        a = a * 0.9999f + 0.001f;
        b = b * 0.9999f + 0.002f;
        c = c * 0.9999f + 0.003f;
        d = d * 0.9999f + 0.004f;
    }
    out[get_global_id(0)] = a + b + c + d;
}
"#;

/// Floating-point operations per loop iteration of `burn`.
const FLOPS_PER_ITER: f64 = 8.0;
const LOCAL: usize = 64;

struct Bench {
    context: cl_context,
    kernel: cl_kernel,
    groups: usize,
    iters: i32,
    reps: usize,
}

impl Bench {
    fn queue(&self, d: cl_device_id) -> cl_command_queue {
        let mut err = 0;
        let q =
            unsafe { cl!(clCreateCommandQueueWithProperties)(self.context, d, null(), &mut err) };
        ok(err);
        q
    }

    /// The output buffer's contents after a run (to check a sub-device computes what the root
    /// does).
    fn result(&self, q: cl_command_queue, out: cl_mem) -> Vec<f32> {
        let mut v = vec![0f32; self.groups * LOCAL];
        ok(unsafe {
            cl!(clEnqueueReadBuffer)(
                q,
                out,
                CL_TRUE,
                0,
                v.len() * 4,
                v.as_mut_ptr() as *mut c_void,
                0,
                null(),
                null_mut(),
            )
        });
        v
    }

    /// Runs the kernel once on every queue of `queues` at the same time (after a warm-up run),
    /// `reps` times; returns the best throughput in GFLOP/s of all queues together.
    fn run(&self, queues: &[cl_command_queue]) -> f64 {
        let n = self.groups * LOCAL;
        let mut best = f64::MAX;
        for rep in 0..=self.reps {
            let t = Instant::now();
            for &q in queues {
                ok(unsafe {
                    cl!(clEnqueueNDRangeKernel)(
                        q,
                        self.kernel,
                        1,
                        null(),
                        &n,
                        &LOCAL,
                        0,
                        null(),
                        null_mut(),
                    )
                });
                ok(unsafe { cl!(clFlush)(q) });
            }
            for &q in queues {
                ok(unsafe { cl!(clFinish)(q) });
            }
            if rep > 0 {
                best = best.min(t.elapsed().as_secs_f64());
            }
        }
        let flops = (n * queues.len()) as f64 * f64::from(self.iters) * FLOPS_PER_ITER;
        flops / best / 1e9
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).and_then(|s| s.parse::<usize>().ok());
    let (root, name) = cl::default_device();
    let total = units(root);

    // Sub-devices: one of m units for each m (all m up to 4, then powers of two and halves),
    // and two disjoint halves.
    let mut ms: Vec<u32> = (1..=total.min(4)).collect();
    let mut p = 8;
    while p < total {
        ms.push(p);
        p *= 2;
    }
    if total > 4 {
        ms.push(total / 2);
        ms.push(total);
    }
    ms.sort_unstable();
    ms.dedup();
    let end = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
    let singles: Vec<(u32, cl_device_id)> = ms
        .iter()
        .map(|&m| {
            (
                m,
                split(root, &[CL_DEVICE_PARTITION_BY_COUNTS, m as isize, end, 0])[0],
            )
        })
        .collect();
    let halves = if total >= 2 {
        split(
            root,
            &[CL_DEVICE_PARTITION_EQUALLY, (total / 2) as isize, 0],
        )
    } else {
        Vec::new()
    };

    let mut devices = vec![root];
    devices.extend(singles.iter().map(|s| s.1));
    devices.extend(halves.iter().take(2));
    let (context, program) = cl::context_with_program(&devices, SOURCE);
    let mut err = 0;
    let kname = CString::new("burn").unwrap();
    let kernel = unsafe { cl!(clCreateKernel)(program, kname.as_ptr(), &mut err) };
    ok(err);
    let groups = arg(0).unwrap_or((total as usize * 64).max(256));
    let iters = arg(1).unwrap_or(4000) as i32;
    let reps = arg(2).unwrap_or(3);
    let out = unsafe {
        cl!(clCreateBuffer)(
            context,
            CL_MEM_READ_WRITE,
            groups * LOCAL * 4,
            null_mut(),
            &mut err,
        )
    };
    ok(err);
    ok(unsafe {
        cl!(clSetKernelArg)(
            kernel,
            0,
            std::mem::size_of::<cl_mem>(),
            &out as *const cl_mem as *const c_void,
        )
    });
    ok(unsafe { cl!(clSetKernelArg)(kernel, 1, 4, &iters as *const i32 as *const c_void) });
    let bench = Bench {
        context,
        kernel,
        groups,
        iters,
        reps,
    };

    println!("device: {name}, {total} compute units");
    println!(
        "kernel: {groups} groups of {LOCAL} work-items, {iters} iterations, best of {reps} runs"
    );
    println!(
        "{:<34} {:>10} {:>10} {:>10}",
        "where", "GFLOP/s", "vs root", "m/total"
    );
    let rq = bench.queue(root);
    let base = bench.run(&[rq]);
    let want = bench.result(rq, out);
    let zero = vec![0u8; groups * LOCAL * 4];
    let clear = |q: cl_command_queue| {
        ok(unsafe {
            cl!(clEnqueueWriteBuffer)(
                q,
                out,
                CL_TRUE,
                0,
                zero.len(),
                zero.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        });
    };
    println!(
        "{:<34} {:>10.2} {:>10.3} {:>10.3}",
        "root device", base, 1.0, 1.0
    );
    for &(m, d) in &singles {
        let q = bench.queue(d);
        clear(q);
        let g = bench.run(&[q]);
        let got = bench.result(q, out);
        if let Some(i) = got.iter().zip(&want).position(|(a, b)| a != b) {
            let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            panic!(
                "sub-device of {m} units: {bad} values differ, first at {i}: {} != {}",
                got[i], want[i]
            );
        }
        println!(
            "{:<34} {:>10.2} {:>10.3} {:>10.3}",
            format!("sub-device, m = {m}"),
            g,
            g / base,
            f64::from(m) / f64::from(total)
        );
        ok(unsafe { cl!(clReleaseCommandQueue)(q) });
    }
    if halves.len() >= 2 {
        // Two queues at once: separate output buffers are not needed (both write the same
        // values), the point is the combined rate.
        let qs = [bench.queue(halves[0]), bench.queue(halves[1])];
        let g = bench.run(&qs);
        let m = 2 * (total / 2);
        println!(
            "{:<34} {:>10.2} {:>10.3} {:>10.3}",
            format!("two sub-devices of {} at once", total / 2),
            g,
            g / base,
            f64::from(m) / f64::from(total)
        );
    }
}
