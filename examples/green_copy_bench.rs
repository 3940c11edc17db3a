//! Copy-kernel bandwidth with and without sub-devices in the context (issue 19: buffers of a
//! context holding green-context sub-devices must stay in device memory). A kernel copying
//! 256 MiB (`float4` per work-item) runs on the root device in a context of the root alone,
//! then, in a context of the root and a sub-device of 64 compute units (`BY_COUNTS`; a green
//! context on the CUDA path), on the root's queue and on the sub-device's; prints each one's
//! GB/s (bytes read + written over the best of `reps` launch-to-finish times) and its ratio to
//! the first. Every copy is checked on the host (all of it, after the last run).
//!
//! Goes through the system ICD loader like any OpenCL program (`OCL_ICD_VENDORS` or
//! `OCL_ICD_FILENAMES` naming vkcl). Arguments (optional): `mib reps` (default 256, 5).
//!
//! ```sh
//! OCL_ICD_VENDORS="$PWD/target/icd" cargo run --release --example green_copy_bench
//! ```
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::time::Instant;
#[path = "common/cl.rs"]
mod cl;
use cl::ok;

const SOURCE: &str =
    "__kernel void copy(__global const float4 *a, __global float4 *b) { size_t i = get_global_id(0); b[i] = a[i]; }";

/// GB/s of the copy on `device` of `context` (program built for it), best of `reps`; the
/// destination checked against the source afterwards.
fn copy_bandwidth(
    context: cl_context,
    program: cl_program,
    device: cl_device_id,
    bytes: usize,
    reps: usize,
) -> f64 {
    let mut err = 0;
    // SAFETY: OpenCL calls with valid handles and sizes; buffers outlive their commands.
    unsafe {
        let q = cl!(clCreateCommandQueueWithProperties)(context, device, null(), &mut err);
        ok(err);
        let words: Vec<u32> = (0..bytes / 4).map(|i| i as u32 ^ 0x9e37_79b9).collect();
        let a = cl!(clCreateBuffer)(
            context,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            bytes,
            words.as_ptr() as *mut c_void,
            &mut err,
        );
        ok(err);
        let b = cl!(clCreateBuffer)(context, CL_MEM_READ_WRITE, bytes, null_mut(), &mut err);
        ok(err);
        let k = cl!(clCreateKernel)(program, c"copy".as_ptr(), &mut err);
        ok(err);
        ok(cl!(clSetKernelArg)(
            k,
            0,
            8,
            &a as *const cl_mem as *const c_void,
        ));
        ok(cl!(clSetKernelArg)(
            k,
            1,
            8,
            &b as *const cl_mem as *const c_void,
        ));
        let global = bytes / 16;
        let mut best = f64::MAX;
        for _ in 0..=reps {
            let t = Instant::now();
            ok(cl!(clEnqueueNDRangeKernel)(
                q,
                k,
                1,
                null(),
                &global,
                null(),
                0,
                null(),
                null_mut(),
            ));
            ok(cl!(clFinish)(q));
            best = best.min(t.elapsed().as_secs_f64());
        }
        let mut back = vec![0u32; bytes / 4];
        ok(cl!(clEnqueueReadBuffer)(
            q,
            b,
            CL_TRUE,
            0,
            bytes,
            back.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        ));
        if let Some(i) = (0..back.len()).find(|&i| back[i] != words[i]) {
            eprintln!(
                "wrong copy at word {i}: {:#x}, want {:#x}",
                back[i], words[i]
            );
            std::process::exit(1);
        }
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(a);
        cl!(clReleaseMemObject)(b);
        cl!(clReleaseCommandQueue)(q);
        2.0 * bytes as f64 / best / 1e9
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let bytes = args.first().copied().unwrap_or(256) << 20;
    let reps = args.get(1).copied().unwrap_or(5);
    let (root, name) = cl::default_device();
    let total = cl::units(root);
    let m = if total >= 64 { 64 } else { (total / 2).max(1) };
    println!(
        "device: {name} ({total} compute units), {} MiB copies, best of {reps}",
        bytes >> 20
    );
    let (context, program) = cl::context_with_program(&[root], SOURCE);
    let alone = copy_bandwidth(context, program, root, bytes, reps);
    println!("root, context without sub-devices: {alone:.1} GB/s");
    let props = [
        CL_DEVICE_PARTITION_BY_COUNTS as cl_device_partition_property,
        m as cl_device_partition_property,
        CL_DEVICE_PARTITION_BY_COUNTS_LIST_END as cl_device_partition_property,
        0,
    ];
    let Some(sub) = cl::try_split(root, &props)
        .ok()
        .and_then(|v| v.first().copied())
    else {
        println!("no sub-device of {m} compute units: nothing more to measure");
        return;
    };
    let (context, program) = cl::context_with_program(&[root, sub], SOURCE);
    for (what, d) in [("root", root), ("sub-device", sub)] {
        let g = copy_bandwidth(context, program, d, bytes, reps);
        println!(
            "{what}, context with a {m}-unit sub-device: {g:.1} GB/s ({:.2}x)",
            g / alone
        );
    }
}
