//! Program-build workloads: a medium program built cold and again from the cache, each build
//! checked by running its kernels.

use crate::cl::{Arg, Session};
use crate::figure::{e, Figure, Sizes};
use std::time::Instant;

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
pub(crate) fn build_cold(s: &Session<'_>, _z: &Sizes) -> Result<Figure, String> {
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
pub(crate) fn build_cached(s: &Session<'_>, _z: &Sizes) -> Result<Figure, String> {
    let src = build_source(&unique_tag());
    timed_build(s, &src)?;
    let ms = timed_build(s, &src)?;
    Ok(Figure {
        value: ms,
        note: "second build of an identical source in a new program".into(),
    })
}
