//! The workloads. Each runs on one session, checks its output on the host, and only then
//! returns a figure; a wrong result is an error naming what was wrong.

use crate::cl::{Arg, Session};
use std::time::Instant;

/// Whether a larger or a smaller figure is better.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Throughput.
    Higher,
    /// Cost or latency.
    Lower,
}

/// A measured, checked figure.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Figure {
    /// The value, in `unit`.
    pub value: f64,
    /// Remarks (sizes, repetitions).
    pub note: String,
}

/// One workload's description.
pub struct Workload {
    /// Short id.
    pub id: &'static str,
    /// Unit of its figure.
    pub unit: &'static str,
    /// Direction.
    pub better: Better,
    /// The measurement.
    pub run: fn(&Session<'_>, &Sizes) -> Result<Figure, String>,
}

/// Problem sizes (smaller with `--small`, for a quick look).
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Launches for the enqueue-cost loop.
    pub launches: usize,
    /// Round trips for the latency figure.
    pub round_trips: usize,
    /// Bytes for the bandwidth figures.
    pub bytes: usize,
    /// Repetitions of each bandwidth transfer.
    pub reps: usize,
    /// Work-items of the compute kernel.
    pub flop_items: usize,
    /// SGEMM matrix order (a multiple of 16).
    pub n: usize,
}

/// The workloads, in print order.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        id: "enqueue_cost",
        unit: "us/launch",
        better: Better::Lower,
        run: enqueue_cost,
    },
    Workload {
        id: "launch_latency",
        unit: "us",
        better: Better::Lower,
        run: launch_latency,
    },
    Workload {
        id: "write_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: write_bandwidth,
    },
    Workload {
        id: "read_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: read_bandwidth,
    },
    Workload {
        id: "map_read_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::maps::map_read_bandwidth,
    },
    Workload {
        id: "map_write_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::maps::map_write_bandwidth,
    },
    Workload {
        id: "copy_kernel_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: copy_bandwidth,
    },
    Workload {
        id: "copy_kernel_bandwidth_long",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::long::copy_bandwidth_long,
    },
    Workload {
        id: "compute_fp32",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: compute,
    },
    Workload {
        id: "compute_fp32_long",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: crate::long::compute_long,
    },
    Workload {
        id: "sgemm_tiled",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: sgemm,
    },
    Workload {
        id: "sgemm_tiled_long",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: crate::long::sgemm_long,
    },
    Workload {
        id: "reduce_local",
        unit: "GB/s",
        better: Better::Higher,
        run: reduce_local,
    },
    Workload {
        id: "reduce_subgroup",
        unit: "GB/s",
        better: Better::Higher,
        run: reduce_subgroup,
    },
    Workload {
        id: "build_cold",
        unit: "ms",
        better: Better::Lower,
        run: build_cold,
    },
    Workload {
        id: "build_cached",
        unit: "ms",
        better: Better::Lower,
        run: build_cached,
    },
];

pub(crate) fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

const INC: &str = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

/// Host time to enqueue one small kernel (the enqueue loop alone; completion waited after).
fn enqueue_cost(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let items = 64;
    let buf = s.buffer(items * 4).map_err(e)?;
    s.write(&buf, &vec![0i32; items]).map_err(e)?;
    let p = s.program(INC).map_err(e)?;
    let k = s.kernel(&p, "inc", &[Arg::Buf(&buf)]).map_err(e)?;
    let warm = 20;
    for _ in 0..warm {
        s.launch(&k, &[items], None).map_err(e)?;
    }
    s.finish().map_err(e)?;
    let t = Instant::now();
    for _ in 0..z.launches {
        s.launch(&k, &[items], None).map_err(e)?;
    }
    let enq = t.elapsed().as_secs_f64();
    s.finish().map_err(e)?;
    let mut out = vec![0i32; items];
    s.read(&buf, &mut out).map_err(e)?;
    let want = (warm + z.launches) as i32;
    if let Some((i, v)) = out.iter().enumerate().find(|(_, v)| **v != want) {
        return Err(format!("a[{i}] = {v}, expected {want}: launches were lost"));
    }
    Ok(Figure {
        value: enq / z.launches as f64 * 1e6,
        note: format!(
            "{} launches of 64 work-items, enqueue loop only",
            z.launches
        ),
    })
}

/// Enqueue plus clFinish of one small kernel, median of many.
fn launch_latency(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let items = 64;
    let buf = s.buffer(items * 4).map_err(e)?;
    s.write(&buf, &vec![0i32; items]).map_err(e)?;
    let p = s.program(INC).map_err(e)?;
    let k = s.kernel(&p, "inc", &[Arg::Buf(&buf)]).map_err(e)?;
    let mut times = Vec::with_capacity(z.round_trips);
    for _ in 0..z.round_trips + 5 {
        let t = Instant::now();
        s.launch(&k, &[items], None).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut out = vec![0i32; items];
    s.read(&buf, &mut out).map_err(e)?;
    let want = (z.round_trips + 5) as i32;
    if out.iter().any(|v| *v != want) {
        return Err(format!("counter is {}, expected {want}", out[0]));
    }
    let mut t = times[5..].to_vec();
    t.sort_by(f64::total_cmp);
    Ok(Figure {
        value: t[t.len() / 2] * 1e6,
        note: format!("median of {} enqueue+clFinish round trips", z.round_trips),
    })
}

pub(crate) fn pattern(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ seed)
        .collect()
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Blocking clEnqueueWriteBuffer from host memory, median GB/s.
fn write_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let n = z.bytes / 4;
    let buf = s.buffer(z.bytes).map_err(e)?;
    let mut times = Vec::new();
    let mut last = Vec::new();
    for r in 0..=z.reps {
        let data = pattern(n, r as u32);
        let t = Instant::now();
        s.write(&buf, &data).map_err(e)?;
        if r > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
        last = data;
    }
    let mut back = vec![0u32; n];
    s.read(&buf, &mut back).map_err(e)?;
    if back != last {
        return Err("the buffer does not hold what was last written".into());
    }
    Ok(Figure {
        value: z.bytes as f64 / median(times) / 1e9,
        note: format!("{} MiB, median of {}", z.bytes >> 20, z.reps),
    })
}

/// Blocking clEnqueueReadBuffer into host memory, median GB/s.
fn read_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let n = z.bytes / 4;
    let buf = s.buffer(z.bytes).map_err(e)?;
    let data = pattern(n, 7);
    s.write(&buf, &data).map_err(e)?;
    let mut back = vec![0u32; n];
    let mut times = Vec::new();
    for r in 0..=z.reps {
        back.iter_mut().for_each(|v| *v = 0);
        let t = Instant::now();
        s.read(&buf, &mut back).map_err(e)?;
        if r > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
        if back != data {
            return Err("read-back differs from what was written".into());
        }
    }
    Ok(Figure {
        value: z.bytes as f64 / median(times) / 1e9,
        note: format!("{} MiB, median of {}", z.bytes >> 20, z.reps),
    })
}

const COPY: &str = "__kernel void copy(__global const uint4 *a, __global uint4 *b) {\n\
    size_t i = get_global_id(0); b[i] = a[i]; }\n";

/// A kernel copying one buffer to another; bytes counted read plus written.
fn copy_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    copy_sized(s, z.bytes, z.reps)
}

/// The copy kernel over two buffers of `bytes`: one untimed launch, then the median of `reps`
/// (at least 1) timed launches + finish; the destination compared.
pub(crate) fn copy_sized(s: &Session<'_>, bytes: usize, reps: usize) -> Result<Figure, String> {
    let n = bytes / 4;
    let a = s.buffer(bytes).map_err(e)?;
    let b = s.buffer(bytes).map_err(e)?;
    let data = pattern(n, 3);
    s.write(&a, &data).map_err(e)?;
    s.write(&b, &vec![0u32; n]).map_err(e)?;
    let p = s.program(COPY).map_err(e)?;
    let k = s
        .kernel(&p, "copy", &[Arg::Buf(&a), Arg::Buf(&b)])
        .map_err(e)?;
    let global = [n / 4];
    s.launch(&k, &global, Some(&[64])).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        s.launch(&k, &global, Some(&[64])).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut back = vec![0u32; n];
    s.read(&b, &mut back).map_err(e)?;
    if back != data {
        let i = back
            .iter()
            .zip(&data)
            .position(|(x, y)| x != y)
            .unwrap_or(0);
        return Err(format!("b[{i}] = {:#x}, expected {:#x}", back[i], data[i]));
    }
    Ok(Figure {
        value: 2.0 * bytes as f64 / median(times) / 1e9,
        note: format!(
            "{} MiB copied, 2x bytes counted, median of {}",
            bytes >> 20,
            reps
        ),
    })
}

pub(crate) const ITERS: u32 = 512;

fn compute_source(iters: u32) -> String {
    // Eight independent float4 multiply-add chains per work-item: 8 * 4 * 2 FLOP per step.
    let mut s = String::from(
        "__kernel void flops(__global float *out, float a, float b) {\n\
         float x0 = get_global_id(0) * 1e-6f;\n",
    );
    for c in 0..8 {
        s.push_str(&format!(
            "    float4 v{c} = (float4)(x0 + {c}.0f, x0 - {c}.0f, x0 * {c}.5f, -x0);\n"
        ));
    }
    s.push_str(&format!("    for (int i = 0; i < {iters}; i++) {{\n"));
    for c in 0..8 {
        s.push_str(&format!("        v{c} = v{c} * a + b;\n"));
    }
    s.push_str("    }\n    float4 t = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;\n");
    s.push_str("    out[get_global_id(0)] = t.x + t.y + t.z + t.w;\n}\n");
    s
}

/// What one work-item of the compute kernel writes, on the host.
fn compute_expected(gid: usize, a: f32, b: f32, iters: u32) -> f32 {
    let x0 = gid as f32 * 1e-6;
    let mut sum = 0.0f64;
    for c in 0..8 {
        let cf = c as f32;
        let mut v = [x0 + cf, x0 - cf, x0 * (cf + 0.5), -x0];
        for _ in 0..iters {
            for x in v.iter_mut() {
                *x = *x * a + b;
            }
        }
        sum += v.iter().map(|x| *x as f64).sum::<f64>();
    }
    sum as f32
}

/// A compute-bound single-precision kernel, GFLOP/s: `z.flop_items` work-items of
/// [`ITERS`] steps, one launch + clFinish timed (on a large GPU this is mostly launch cost).
fn compute(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    compute_sized(s, z.flop_items, ITERS, 3)
}

/// Builds and launches the compute kernel of `items` work-items x `iters` steps once, then
/// `reps` timed launches (0: the untimed launch only, for sizing), and checks 62 items
/// against the host.
pub(crate) fn compute_sized(
    s: &Session<'_>,
    items: usize,
    iters: u32,
    reps: usize,
) -> Result<Figure, String> {
    let out = s.buffer(items * 4).map_err(e)?;
    let p = s.program(&compute_source(iters)).map_err(e)?;
    let (a, b) = (0.999f32, 0.01f32);
    let k = s
        .kernel(
            &p,
            "flops",
            &[Arg::Buf(&out), Arg::U32(a.to_bits()), Arg::U32(b.to_bits())],
        )
        .map_err(e)?;
    s.launch(&k, &[items], Some(&[64])).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        s.launch(&k, &[items], Some(&[64])).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut back = vec![0f32; items];
    s.read(&out, &mut back).map_err(e)?;
    for i in (0..items).step_by(items / 61 + 1).chain([items - 1]) {
        let want = compute_expected(i, a, b, iters);
        if (back[i] - want).abs() > 1e-3 * want.abs().max(1.0) {
            return Err(format!("out[{i}] = {}, expected {want}", back[i]));
        }
    }
    if reps == 0 {
        return Ok(Figure {
            value: 0.0,
            note: String::new(),
        });
    }
    let flop = items as f64 * iters as f64 * 8.0 * 4.0 * 2.0;
    Ok(Figure {
        value: flop / median(times) / 1e9,
        note: format!("{items} work-items x {iters} steps x 8 float4 mad, median of {reps}"),
    })
}

const SGEMM: &str = "#define T 16\n\
__kernel void sgemm(__global const float *A, __global const float *B, __global float *C, int n) {\n\
    __local float As[T][T];\n\
    __local float Bs[T][T];\n\
    int lx = get_local_id(0), ly = get_local_id(1);\n\
    int col = get_global_id(0), row = get_global_id(1);\n\
    float acc = 0.0f;\n\
    for (int t = 0; t < n; t += T) {\n\
        As[ly][lx] = A[row * n + t + lx];\n\
        Bs[ly][lx] = B[(t + ly) * n + col];\n\
        barrier(CLK_LOCAL_MEM_FENCE);\n\
        for (int k = 0; k < T; k++) acc += As[ly][k] * Bs[k][lx];\n\
        barrier(CLK_LOCAL_MEM_FENCE);\n\
    }\n\
    C[row * n + col] = acc;\n\
}\n";

/// Tiled SGEMM with 16x16 tiles in local memory, GFLOP/s (2 n^3 per product).
fn sgemm(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    sgemm_sized(s, z.n, 3)
}

/// The SGEMM of `n` x `n` (a multiple of 16): one untimed launch, then the median of `reps`
/// timed launches + finish; a spread of rows compared with the host.
pub(crate) fn sgemm_sized(s: &Session<'_>, n: usize, reps: usize) -> Result<Figure, String> {
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0)
        .collect();
    let (ba, bb, bc) = (
        s.buffer(n * n * 4).map_err(e)?,
        s.buffer(n * n * 4).map_err(e)?,
        s.buffer(n * n * 4).map_err(e)?,
    );
    s.write(&ba, &a).map_err(e)?;
    s.write(&bb, &b).map_err(e)?;
    s.write(&bc, &vec![0f32; n * n]).map_err(e)?;
    let p = s.program(SGEMM).map_err(e)?;
    let k = s
        .kernel(
            &p,
            "sgemm",
            &[
                Arg::Buf(&ba),
                Arg::Buf(&bb),
                Arg::Buf(&bc),
                Arg::U32(n as u32),
            ],
        )
        .map_err(e)?;
    let (g, l) = ([n, n], [16usize, 16]);
    s.launch(&k, &g, Some(&l)).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        s.launch(&k, &g, Some(&l)).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut c = vec![0f32; n * n];
    s.read(&bc, &mut c).map_err(e)?;
    // Check every element of a spread of rows (the inputs are exact in f32; sums are small).
    for row in (0..n).step_by(n / 16 + 1).chain([n - 1]) {
        for col in 0..n {
            let want: f64 = (0..n)
                .map(|k| a[row * n + k] as f64 * b[k * n + col] as f64)
                .sum();
            let got = c[row * n + col] as f64;
            if (got - want).abs() > 1e-3 * want.abs().max(1.0) {
                return Err(format!("C[{row}][{col}] = {got}, expected {want}"));
            }
        }
    }
    Ok(Figure {
        value: 2.0 * (n as f64).powi(3) / median(times) / 1e9,
        note: format!("n = {n}, 16x16 tiles, median of {reps}"),
    })
}

/// Work-group sums of `uint`s (256 per group) in `__local` memory: a tree of halvings, a
/// barrier after each.
const REDUCE_LOCAL: &str = "__kernel void reduce(__global const uint *in, __global uint *out) {\n\
    __local uint part[256];\n\
    uint l = get_local_id(0);\n\
    part[l] = in[get_global_id(0)];\n\
    barrier(CLK_LOCAL_MEM_FENCE);\n\
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n\
        if (l < s) part[l] += part[l + s];\n\
        barrier(CLK_LOCAL_MEM_FENCE);\n\
    }\n\
    if (l == 0) out[get_group_id(0)] = part[0];\n\
}\n";

/// The same sums with sub-group built-ins (OpenCL C 3.0 `__opencl_c_subgroups`): each
/// sub-group reduces its items, one barrier, and the first sub-group reduces the partial
/// sums.
const REDUCE_SUBGROUP: &str =
    "__kernel void reduce(__global const uint *in, __global uint *out) {\n\
    __local uint part[256];\n\
    uint s = sub_group_reduce_add(in[get_global_id(0)]);\n\
    uint sid = get_sub_group_id(), lid = get_sub_group_local_id();\n\
    if (lid == 0) part[sid] = s;\n\
    barrier(CLK_LOCAL_MEM_FENCE);\n\
    if (sid == 0) {\n\
        uint v = 0;\n\
        for (uint k = lid; k < get_num_sub_groups(); k += get_sub_group_size()) v += part[k];\n\
        v = sub_group_reduce_add(v);\n\
        if (lid == 0) out[get_group_id(0)] = v;\n\
    }\n\
}\n";

fn reduce_local(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    reduce_with(s, z, REDUCE_LOCAL, "__local memory tree")
}

fn reduce_subgroup(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    reduce_with(s, z, REDUCE_SUBGROUP, "sub_group_reduce_add")
}

/// Work-group sums of `z.bytes` of `uint`s in groups of 256 with kernel `src`, GB/s of input
/// (every group's sum checked on the host).
fn reduce_with(s: &Session<'_>, z: &Sizes, src: &str, how: &str) -> Result<Figure, String> {
    const GROUP: usize = 256;
    let n = z.bytes / 4 / GROUP * GROUP;
    let groups = n / GROUP;
    let data = pattern(n, 7);
    let input = s.buffer(n * 4).map_err(e)?;
    let out = s.buffer(groups * 4).map_err(e)?;
    s.write(&input, &data).map_err(e)?;
    s.write(&out, &vec![0u32; groups]).map_err(e)?;
    let p = s.program_with_options(src, "-cl-std=CL3.0").map_err(e)?;
    let k = s
        .kernel(&p, "reduce", &[Arg::Buf(&input), Arg::Buf(&out)])
        .map_err(e)?;
    s.launch(&k, &[n], Some(&[GROUP])).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..z.reps {
        let t = Instant::now();
        s.launch(&k, &[n], Some(&[GROUP])).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut back = vec![0u32; groups];
    s.read(&out, &mut back).map_err(e)?;
    for (g, got) in back.iter().enumerate() {
        let want = data[g * GROUP..(g + 1) * GROUP]
            .iter()
            .fold(0u32, |a, &b| a.wrapping_add(b));
        if *got != want {
            return Err(format!("sum of group {g} = {got:#x}, expected {want:#x}"));
        }
    }
    Ok(Figure {
        value: (n * 4) as f64 / median(times) / 1e9,
        note: format!(
            "{} MiB of uint in work-groups of {GROUP}, {how}, median of {}",
            (n * 4) >> 20,
            z.reps
        ),
    })
}

/// The medium program of the build workloads (ten kernels, about 230 lines of OpenCL C).
const MEDIUM: &str = include_str!("medium.cl");

/// Kernels of [`MEDIUM`]; a build must give all of them.
const MEDIUM_KERNELS: &[&str] = &[
    "saxpy",
    "reduce_sum",
    "scan_block",
    "histogram",
    "transpose",
    "hash_fill",
    "stencil3",
    "mandel",
    "particles",
    "bitonic_step",
];

/// Source for the build workloads: [`MEDIUM`] made unique by `tag` (a comment) so that no
/// cache on any level can have seen it.
fn build_source(tag: &str) -> String {
    format!("// {tag}\n{MEDIUM}")
}

fn unique_tag() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("vkcl-bench {} {t}", std::process::id())
}

/// clCreateProgramWithSource + clBuildProgram of `src`, in ms, then the program's check.
fn timed_build(s: &Session<'_>, src: &str) -> Result<f64, String> {
    let t = Instant::now();
    let p = s.program(src).map_err(e)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    check_medium(s, &p)?;
    Ok(ms)
}

/// The host's `hash32` of medium.cl.
fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// Checks a build of [`MEDIUM`]: every kernel exists, and six of them give the host's results.
fn check_medium(s: &Session<'_>, p: &crate::cl::Program<'_>) -> Result<(), String> {
    for k in MEDIUM_KERNELS {
        s.kernel(p, k, &[])
            .map_err(|x| format!("kernel {k}: {x}"))?;
    }
    let group = 64usize;

    // saxpy: y = 1.5 x + y over 1000 of 1024 items.
    let n = 1000usize;
    let x: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let (bx, by) = (s.buffer(4096).map_err(e)?, s.buffer(4096).map_err(e)?);
    s.write(&bx, &x).map_err(e)?;
    s.write(&by, &y).map_err(e)?;
    let k = s
        .kernel(
            p,
            "saxpy",
            &[
                Arg::Buf(&bx),
                Arg::Buf(&by),
                Arg::U32(n as u32),
                Arg::U32(1.5f32.to_bits()),
            ],
        )
        .map_err(e)?;
    s.launch(&k, &[1024], None).map_err(e)?;
    let mut got = vec![0f32; 1024];
    s.read(&by, &mut got).map_err(e)?;
    for i in 0..1024 {
        let want = if i < n { 1.5 * x[i] + y[i] } else { y[i] };
        if (got[i] - want).abs() > 1e-4 * want.abs().max(1.0) {
            return Err(format!("saxpy: y[{i}] = {}, expected {want}", got[i]));
        }
    }

    // reduce_sum and scan_block over 256 pseudo-random ints.
    let vals: Vec<i32> = (0..256u32)
        .map(|i| (hash32(i) % 2001) as i32 - 1000)
        .collect();
    let bin = s.buffer(1024).map_err(e)?;
    s.write(&bin, &vals).map_err(e)?;
    let bpart = s.buffer(16).map_err(e)?;
    let k = s
        .kernel(p, "reduce_sum", &[Arg::Buf(&bin), Arg::Buf(&bpart)])
        .map_err(e)?;
    s.launch(&k, &[256], Some(&[group])).map_err(e)?;
    let bscan = s.buffer(1024).map_err(e)?;
    let k = s
        .kernel(p, "scan_block", &[Arg::Buf(&bin), Arg::Buf(&bscan)])
        .map_err(e)?;
    s.launch(&k, &[256], Some(&[group])).map_err(e)?;
    let mut part = vec![0i32; 4];
    s.read(&bpart, &mut part).map_err(e)?;
    let mut scan = vec![0i32; 256];
    s.read(&bscan, &mut scan).map_err(e)?;
    for g in 0..4 {
        let chunk = &vals[g * group..(g + 1) * group];
        let sum: i32 = chunk.iter().sum();
        if part[g] != sum {
            return Err(format!(
                "reduce_sum: group {g} = {}, expected {sum}",
                part[g]
            ));
        }
        let mut acc = 0;
        for (j, v) in chunk.iter().enumerate() {
            acc += v;
            if scan[g * group + j] != acc {
                return Err(format!(
                    "scan_block: [{}] = {}, expected {acc}",
                    g * group + j,
                    scan[g * group + j]
                ));
            }
        }
    }

    // histogram of 1000 hashed values into 16 bins.
    let data: Vec<u32> = (0..1024u32).map(|i| hash32(i ^ 0x5eed)).collect();
    let bdata = s.buffer(4096).map_err(e)?;
    s.write(&bdata, &data).map_err(e)?;
    let bbins = s.buffer(64).map_err(e)?;
    s.write(&bbins, &[0u32; 16]).map_err(e)?;
    let k = s
        .kernel(
            p,
            "histogram",
            &[Arg::Buf(&bdata), Arg::Buf(&bbins), Arg::U32(n as u32)],
        )
        .map_err(e)?;
    s.launch(&k, &[1024], Some(&[group])).map_err(e)?;
    let mut bins = vec![0u32; 16];
    s.read(&bbins, &mut bins).map_err(e)?;
    let mut want = [0u32; 16];
    for v in &data[..n] {
        want[(v & 15) as usize] += 1;
    }
    if bins != want {
        return Err(format!("histogram: {bins:?}, expected {want:?}"));
    }

    // transpose of a 48 x 32 matrix.
    let (w, h) = (48usize, 32usize);
    let m: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let (bm, bt) = (
        s.buffer(w * h * 4).map_err(e)?,
        s.buffer(w * h * 4).map_err(e)?,
    );
    s.write(&bm, &m).map_err(e)?;
    let k = s
        .kernel(
            p,
            "transpose",
            &[
                Arg::Buf(&bm),
                Arg::Buf(&bt),
                Arg::U32(w as u32),
                Arg::U32(h as u32),
            ],
        )
        .map_err(e)?;
    s.launch(&k, &[w, h], Some(&[16, 16])).map_err(e)?;
    let mut t = vec![0f32; w * h];
    s.read(&bt, &mut t).map_err(e)?;
    for r in 0..h {
        for c in 0..w {
            if t[c * h + r] != m[r * w + c] {
                return Err(format!("transpose: [{c}][{r}] = {}", t[c * h + r]));
            }
        }
    }

    // hash_fill.
    let bh = s.buffer(1024).map_err(e)?;
    let k = s
        .kernel(
            p,
            "hash_fill",
            &[Arg::Buf(&bh), Arg::U32(7), Arg::U32(1000)],
        )
        .map_err(e)?;
    s.launch(&k, &[256], None).map_err(e)?;
    let mut hv = vec![0u32; 256];
    s.read(&bh, &mut hv).map_err(e)?;
    for (i, v) in hv.iter().enumerate() {
        let want = hash32(i as u32 ^ 7) % 1000;
        if *v != want {
            return Err(format!("hash_fill: [{i}] = {v}, expected {want}"));
        }
    }
    Ok(())
}

/// Build of a medium program no cache has seen (for vkcl also an empty `VKCL_CACHE_DIR`).
fn build_cold(s: &Session<'_>, _z: &Sizes) -> Result<Figure, String> {
    let ms = timed_build(s, &build_source(&unique_tag()))?;
    Ok(Figure {
        value: ms,
        note: format!(
            "{} kernels, {} lines, source never seen before",
            MEDIUM_KERNELS.len(),
            MEDIUM.lines().count()
        ),
    })
}

/// The same source built again in a new program object: served by the implementation's
/// program cache (vkcl: its on-disk cache, no clang).
fn build_cached(s: &Session<'_>, _z: &Sizes) -> Result<Figure, String> {
    let src = build_source(&unique_tag());
    timed_build(s, &src)?;
    let ms = timed_build(s, &src)?;
    Ok(Figure {
        value: ms,
        note: "second build of an identical source in a new program".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_reference_is_stable() {
        // The recurrence converges to b / (1 - a) = 10 per lane; the sum of 32 lanes is
        // below 320 and finite.
        let v = compute_expected(1000, 0.999, 0.01, ITERS);
        assert!(v.is_finite() && v.abs() < 400.0, "{v}");
    }
}
