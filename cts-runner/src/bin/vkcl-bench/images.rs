//! Image workloads (issue 16): `clEnqueueCopyImage` bandwidth and a kernel of bilinear
//! filtered reads through a sampler, each checked on the host. 2D `CL_RGBA`/`CL_UNORM_INT8`
//! images; vkcl offers images under `VKCL_IMAGES=1` (docs/images.md), and a platform without
//! them reports the `clCreateImage` error instead of a figure.

use crate::cl::{Arg, Session};
use crate::figure::{e, median, pattern, Figure, Sizes};
use std::time::Instant;

/// The side of a square RGBA8 image of at most `bytes`, a multiple of 64 texels (at least 64).
fn side(bytes: usize) -> usize {
    (((bytes / 4) as f64).sqrt() as usize / 64 * 64).max(64)
}

/// `clEnqueueCopyImage` of a square RGBA8 image of about `--bytes` into another: one untimed
/// copy, then the median of `reps` timed copies + finish; the destination read back and
/// compared; bytes counted read plus written.
pub(crate) fn image_copy_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let w = side(z.bytes);
    let (a, b) = (
        s.image_rgba8(w, w).map_err(e)?,
        s.image_rgba8(w, w).map_err(e)?,
    );
    let data = pattern(w * w, 11);
    s.write_image(&a, &data).map_err(e)?;
    s.write_image(&b, &vec![0u32; w * w]).map_err(e)?;
    s.copy_image(&a, &b).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..z.reps.max(1) {
        let t = Instant::now();
        s.copy_image(&a, &b).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut back = vec![0u32; w * w];
    s.read_image(&b, &mut back).map_err(e)?;
    if let Some(i) = (0..back.len()).find(|&i| back[i] != data[i]) {
        return Err(format!(
            "texel {i} is {:#x}, expected {:#x}",
            back[i], data[i]
        ));
    }
    let bytes = 4 * w * w;
    Ok(Figure {
        value: 2.0 * bytes as f64 / median(times) / 1e9,
        note: format!(
            "{w}x{w} RGBA8 ({} MiB), 2x bytes counted, median of {}",
            bytes >> 20,
            z.reps.max(1)
        ),
    })
}

const BILERP: &str = "__kernel void bilerp(__read_only image2d_t img, sampler_t s,
    __global float4 *out, float dx, float dy) {
    int x = get_global_id(0), y = get_global_id(1);
    int w = get_image_width(img), h = get_image_height(img);
    float2 c = (float2)((x + 0.5f + dx) / w, (y + 0.5f + dy) / h);
    out[y * w + x] = read_imagef(img, s, c);
}
";

/// The offsets of each read from its texel's centre: weights 1/4 and 3/4, exact in the 8-bit
/// fixed point that GPUs filter with.
const DX: f32 = 0.25;
const DY: f32 = 0.75;

/// The host's bilinear read of RGBA8 `texels` (`w` x `h`) at texel (x + DX, y + DY) with
/// clamp-to-edge (OpenCL C 3.0 section 8.3.1.2, `CL_FILTER_LINEAR`).
fn bilerp_ref(texels: &[u32], w: usize, h: usize, x: usize, y: usize) -> [f32; 4] {
    let at = |i: isize, j: isize| {
        let i = i.clamp(0, w as isize - 1) as usize;
        let j = j.clamp(0, h as isize - 1) as usize;
        texels[j * w + i]
            .to_le_bytes()
            .map(|b| f32::from(b) / 255.0)
    };
    let (u, v) = (x as f32 + DX, y as f32 + DY);
    let (i0, j0) = (u.floor() as isize, v.floor() as isize);
    let (a, b) = (u - u.floor(), v - v.floor());
    let (t00, t10, t01, t11) = (
        at(i0, j0),
        at(i0 + 1, j0),
        at(i0, j0 + 1),
        at(i0 + 1, j0 + 1),
    );
    std::array::from_fn(|c| {
        (1.0 - a) * (1.0 - b) * t00[c]
            + a * (1.0 - b) * t10[c]
            + (1.0 - a) * b * t01[c]
            + a * b * t11[c]
    })
}

/// A kernel reading every texel of a square RGBA8 image of about `--bytes` / 4 through a
/// linear, clamp-to-edge sampler between four texels, writing float4s: one untimed launch,
/// then the median of `reps` timed launches + finish; every result compared with the host's
/// filtering within 1.5/255. The figure is filtered reads (work-items) per second.
pub(crate) fn image_filter(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let w = side(z.bytes / 4);
    let img = s.image_rgba8(w, w).map_err(e)?;
    let texels = pattern(w * w, 5);
    s.write_image(&img, &texels).map_err(e)?;
    let smp = s
        .sampler(
            crate::cl::image_consts::CLAMP_TO_EDGE,
            crate::cl::image_consts::FILTER_LINEAR,
        )
        .map_err(e)?;
    let out = s.buffer(16 * w * w).map_err(e)?;
    let p = s.program(BILERP).map_err(e)?;
    let args = [
        Arg::Image(&img),
        Arg::Sampler(&smp),
        Arg::Buf(&out),
        Arg::U32(DX.to_bits()),
        Arg::U32(DY.to_bits()),
    ];
    let k = s.kernel(&p, "bilerp", &args).map_err(e)?;
    let global = [w, w];
    s.launch(&k, &global, None).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..z.reps.max(1) {
        let t = Instant::now();
        s.launch(&k, &global, None).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut got = vec![0f32; 4 * w * w];
    s.read(&out, &mut got).map_err(e)?;
    for y in 0..w {
        for x in 0..w {
            let want = bilerp_ref(&texels, w, w, x, y);
            let g = &got[4 * (y * w + x)..][..4];
            if (0..4).any(|c| (g[c] - want[c]).abs() > 1.5 / 255.0) {
                return Err(format!("texel ({x}, {y}): {g:?}, expected {want:?}"));
            }
        }
    }
    Ok(Figure {
        value: (w * w) as f64 / median(times) / 1e9,
        note: format!(
            "Gread/s: {w}x{w} RGBA8, bilinear (4 texels each), median of {}",
            z.reps.max(1)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_multiples_of_64() {
        assert_eq!(side(64 << 20), 4096);
        assert_eq!(side(4 * 100 * 100), 64);
        assert_eq!(side(0), 64);
    }

    #[test]
    fn the_host_bilinear_read() {
        // A ramp in red (x * 10), green (y * 20): each channel interpolates linearly; the last
        // column and row clamp.
        let (w, h) = (8, 4);
        let t: Vec<u32> = (0..w * h)
            .map(|i| u32::from_le_bytes([(i % w * 10) as u8, (i / w * 20) as u8, 7, 255]))
            .collect();
        let r = bilerp_ref(&t, w, h, 2, 1);
        assert!((r[0] - (2.25 * 10.0) / 255.0).abs() < 1e-6, "{r:?}");
        assert!((r[1] - (1.75 * 20.0) / 255.0).abs() < 1e-6, "{r:?}");
        assert!((r[2] - 7.0 / 255.0).abs() < 1e-6 && (r[3] - 1.0).abs() < 1e-6);
        let edge = bilerp_ref(&t, w, h, w - 1, h - 1);
        assert!((edge[0] - 70.0 / 255.0).abs() < 1e-6 && (edge[1] - 60.0 / 255.0).abs() < 1e-6);
    }
}
