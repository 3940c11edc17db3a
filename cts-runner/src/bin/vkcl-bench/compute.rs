//! Compute workloads: an arithmetic-bound kernel, a tiled SGEMM and work-group reductions.

use crate::cl::{Arg, Session};
use crate::figure::{e, median, pattern, Figure, Sizes};
use std::time::Instant;

pub(crate) const ITERS: u32 = 512;

pub(crate) fn compute_source(iters: u32) -> String {
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
pub(crate) fn compute_expected(gid: usize, a: f32, b: f32, iters: u32) -> f32 {
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
pub(crate) fn compute(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
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
pub(crate) fn sgemm(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
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

pub(crate) fn reduce_local(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    reduce_with(s, z, REDUCE_LOCAL, "__local memory tree")
}

pub(crate) fn reduce_subgroup(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    reduce_with(s, z, REDUCE_SUBGROUP, "sub_group_reduce_add")
}

/// Work-group sums of `z.bytes` of `uint`s in groups of 256 with kernel `src`, GB/s of input
/// (every group's sum checked on the host).
pub(crate) fn reduce_with(
    s: &Session<'_>,
    z: &Sizes,
    src: &str,
    how: &str,
) -> Result<Figure, String> {
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
