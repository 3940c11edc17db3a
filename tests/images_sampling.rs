//! `read_image{f,ui}` with samplers under `VKCL_IMAGES=1` (docs/images.md, "Kernel
//! access"): every addressing mode, nearest and linear filtering, normalized and
//! unnormalized float coordinates, integer coordinates, the border colours of
//! `CL_ADDRESS_CLAMP`, each image type; every result against a host model of OpenCL 3.0's
//! addressing and filtering rules (OpenCL C 3.0 section 8.2). Nearest reads are exact
//! (coordinates kept 0.02 texel away from texel edges, where rounding may pick either
//! texel); linear reads within 2/256 of the texels' spread (lavapipe's 8 bits of sub-texel
//! precision) plus 1e-5.
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

const MODES: [cl_addressing_mode; 5] = [
    CL_ADDRESS_NONE,
    CL_ADDRESS_CLAMP_TO_EDGE,
    CL_ADDRESS_CLAMP,
    CL_ADDRESS_REPEAT,
    CL_ADDRESS_MIRRORED_REPEAT,
];

fn sampler(env: &Env, norm: bool, a: cl_addressing_mode, f: cl_filter_mode) -> cl_sampler {
    let mut err = 0;
    let s = unsafe {
        cl!(clCreateSampler)(
            env.context,
            if norm { CL_TRUE } else { CL_FALSE },
            a,
            f,
            &mut err,
        )
    };
    ok(err);
    s
}

/// An image's host model as decoded texels: extent (w, h, d) with the layers of an array in
/// the next dimension, `dims` spatial dimensions, whether it is an array, and whether its
/// format has alpha.
struct Model {
    ext: [usize; 3],
    dims: usize,
    arrayed: bool,
    alpha: bool,
    texels: Vec<[f64; 4]>,
}

impl Model {
    fn texel(&self, i: [i64; 3]) -> [f64; 4] {
        let inside = (0..3).all(|d| i[d] >= 0 && (i[d] as usize) < self.ext[d]);
        if !inside {
            return [0.0, 0.0, 0.0, if self.alpha { 0.0 } else { 1.0 }];
        }
        self.texels[(i[2] as usize * self.ext[1] + i[1] as usize) * self.ext[0] + i[0] as usize]
    }
}

/// OpenCL's addressing and filtering of coordinate `c` (spatial components, then the layer)
/// with sampler state (`norm`, `mode`, `linear`). Returns the value and, for nearest, how
/// close a coordinate came to a texel edge (in texels).
fn sample(
    m: &Model,
    c: [f32; 4],
    norm: bool,
    mode: cl_addressing_mode,
    linear: bool,
) -> ([f64; 4], f64, f64) {
    let mut lo = [[0i64; 2]; 3];
    let mut wt = [0f64; 3];
    let mut edge = f64::MAX;
    for d in 0..3 {
        if d >= m.dims {
            // A layer (rounded to nearest even, clamped) or an absent dimension.
            let l = if m.arrayed && d == m.dims {
                let r = (c[d] as f64).round_ties_even();
                r.clamp(0.0, (m.ext[d] - 1) as f64) as i64
            } else {
                0
            };
            lo[d] = [l, l];
            continue;
        }
        let n = m.ext[d] as f64;
        let s = c[d] as f64;
        let u = match (mode, norm) {
            (_, false) => s,
            (CL_ADDRESS_REPEAT, true) => (s - s.floor()) * n,
            (CL_ADDRESS_MIRRORED_REPEAT, true) => {
                let t = 2.0 * (0.5 * s).round_ties_even();
                (s - t).abs() * n
            }
            _ => s * n,
        };
        let max = m.ext[d] as i64 - 1;
        if !linear {
            edge = edge.min((u - u.round()).abs());
            let mut i = u.floor() as i64;
            i = match mode {
                CL_ADDRESS_CLAMP_TO_EDGE | CL_ADDRESS_NONE => i.clamp(0, max),
                CL_ADDRESS_CLAMP => i.clamp(-1, max + 1),
                CL_ADDRESS_REPEAT => {
                    if i > max {
                        0
                    } else {
                        i
                    }
                }
                _ => i.min(max),
            };
            lo[d] = [i, i];
        } else {
            let v = u - 0.5;
            let mut i0 = v.floor() as i64;
            let mut i1 = i0 + 1;
            wt[d] = v - v.floor();
            match mode {
                CL_ADDRESS_CLAMP_TO_EDGE | CL_ADDRESS_NONE => {
                    i0 = i0.clamp(0, max);
                    i1 = i1.clamp(0, max);
                }
                CL_ADDRESS_CLAMP => {
                    i0 = i0.clamp(-1, max + 1);
                    i1 = i1.clamp(-1, max + 1);
                }
                CL_ADDRESS_REPEAT => {
                    if i0 < 0 {
                        i0 += max + 1;
                    }
                    if i1 > max {
                        i1 -= max + 1;
                    }
                }
                _ => {
                    i0 = i0.max(0);
                    i1 = i1.min(max);
                }
            }
            lo[d] = [i0, i1];
        }
    }
    let mut out = [0f64; 4];
    let (mut vmin, mut vmax) = (f64::MAX, f64::MIN);
    for corner in 0..8 {
        let pick = |d: usize| (corner >> d) & 1;
        let mut w = 1.0;
        for d in 0..3 {
            w *= if pick(d) == 1 { wt[d] } else { 1.0 - wt[d] };
        }
        if w == 0.0 && corner != 0 {
            continue;
        }
        let t = m.texel(std::array::from_fn(|d| lo[d][pick(d)]));
        for k in 0..4 {
            out[k] += w * t[k];
            vmin = vmin.min(t[k]);
            vmax = vmax.max(t[k]);
        }
    }
    (out, edge, vmax - vmin)
}

fn type_of(ty: cl_mem_object_type) -> (&'static str, &'static str, usize, bool) {
    match ty {
        CL_MEM_OBJECT_IMAGE1D => ("image1d_t", "c.x", 1, false),
        CL_MEM_OBJECT_IMAGE1D_ARRAY => ("image1d_array_t", "c.xy", 1, true),
        CL_MEM_OBJECT_IMAGE2D => ("image2d_t", "c.xy", 2, false),
        CL_MEM_OBJECT_IMAGE2D_ARRAY => ("image2d_array_t", "c", 2, true),
        _ => ("image3d_t", "c", 3, false),
    }
}

/// A float RGBA32F or R32F image of `ty` with random texels in [0, 1), and its model.
fn float_image(
    env: &Env,
    ty: cl_mem_object_type,
    ext: [usize; 3],
    rgba: bool,
    rng: &mut Rng,
) -> (Img, Model) {
    let (f, elem) = if rgba {
        ((CL_RGBA, CL_FLOAT), 16)
    } else {
        ((CL_R, CL_FLOAT), 4)
    };
    let n: usize = ext.iter().product();
    let vals: Vec<f32> = (0..n * elem / 4).map(|_| rng.next_f32()).collect();
    let mut img = Img::new(env, ty, ext, f, elem, rng);
    ok(write_image(env, img.mem, [0; 3], ext, (0, 0), bytes(&vals)));
    img.model = bytes(&vals).to_vec();
    let texels = (0..n)
        .map(|i| {
            if rgba {
                std::array::from_fn(|k| vals[4 * i + k] as f64)
            } else {
                [vals[i] as f64, 0.0, 0.0, 1.0]
            }
        })
        .collect();
    let (_, _, dims, arrayed) = type_of(ty);
    (
        img,
        Model {
            ext,
            dims,
            arrayed,
            alpha: rgba,
            texels,
        },
    )
}

/// Reads `coords` through `s` with a kernel and checks each against the model.
#[allow(clippy::too_many_arguments)]
fn check_reads(
    env: &Env,
    k: cl_kernel,
    img: &Img,
    m: &Model,
    s: cl_sampler,
    (norm, mode, linear): (bool, cl_addressing_mode, bool),
    coords: &[[f32; 4]],
    what: &str,
) {
    let cbuf = env.buf(coords);
    let out = env.zeros::<[f32; 4]>(coords.len());
    arg_mem(k, 0, img.mem);
    set_arg(k, 1, &s);
    arg_mem(k, 2, cbuf);
    arg_mem(k, 3, out);
    env.run(k, &[coords.len()], None, None);
    let got: Vec<[f32; 4]> = env.read(out, coords.len());
    for (i, c) in coords.iter().enumerate() {
        let (want, _, spread) = sample(m, *c, norm, mode, linear);
        let tol = if linear {
            2.0 / 256.0 * spread + 1e-5
        } else {
            0.0
        };
        for ch in 0..4 {
            assert!(
                (got[i][ch] as f64 - want[ch]).abs() <= tol,
                "{what}: coordinate {c:?} channel {ch}: {} for {} (tolerance {tol})",
                got[i][ch],
                want[ch]
            );
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(cbuf);
        cl!(clReleaseMemObject)(out);
    }
}

/// Random coordinates for `m` under the sampler state: in [-0.5, 1.5) of the image
/// (normalized) or [-3, n + 3) texels, in range for CL_ADDRESS_NONE; nearest reads keep
/// away from texel edges.
fn coords_for(
    m: &Model,
    norm: bool,
    mode: cl_addressing_mode,
    linear: bool,
    rng: &mut Rng,
    n: usize,
) -> Vec<[f32; 4]> {
    let mut v = Vec::new();
    while v.len() < n {
        let c: [f32; 4] = std::array::from_fn(|d| {
            if d < m.dims {
                let e = m.ext[d] as f32;
                match (norm, mode) {
                    (true, CL_ADDRESS_NONE) => rng.next_f32(),
                    (true, _) => rng.next_f32() * 2.0 - 0.5,
                    (false, CL_ADDRESS_NONE) => rng.next_f32() * e,
                    (false, _) => rng.next_f32() * (e + 6.0) - 3.0,
                }
            } else if m.arrayed && d == m.dims {
                // Layers, rounded to nearest: keep away from .5.
                (rng.next_u32() % (m.ext[d] as u32 + 2)) as f32 - 1.0 + (rng.next_f32() - 0.5) * 0.8
            } else {
                0.0
            }
        });
        let (_, edge, _) = sample(m, c, norm, mode, linear);
        if linear || edge > 0.02 {
            v.push(c);
        }
    }
    v
}

fn kernel_for(env: &Env, ty: cl_mem_object_type) -> cl_kernel {
    let (tname, coord, _, _) = type_of(ty);
    let src = format!(
        "kernel void k(read_only {tname} img, sampler_t s, global const float4* cs, global float4* out) {{
            int i = get_global_id(0);
            float4 c = cs[i];
            out[i] = read_imagef(img, s, {coord});
        }}"
    );
    env.kern_opts(&src, "-cl-std=CL3.0", "k")
}

#[test]
fn sampler_modes_on_2d_images() {
    let env = env();
    let mut rng = Rng(88);
    let k = kernel_for(&env, CL_MEM_OBJECT_IMAGE2D);
    for rgba in [true, false] {
        let (img, m) = float_image(&env, CL_MEM_OBJECT_IMAGE2D, [7, 5, 1], rgba, &mut rng);
        for norm in [true, false] {
            for mode in MODES {
                if !norm && (mode == CL_ADDRESS_REPEAT || mode == CL_ADDRESS_MIRRORED_REPEAT) {
                    continue; // undefined in OpenCL
                }
                for linear in [false, true] {
                    let f = if linear {
                        CL_FILTER_LINEAR
                    } else {
                        CL_FILTER_NEAREST
                    };
                    let s = sampler(&env, norm, mode, f);
                    let coords = coords_for(&m, norm, mode, linear, &mut rng, 64);
                    let what =
                        format!("rgba {rgba} normalized {norm} mode {mode:#x} linear {linear}");
                    check_reads(&env, k, &img, &m, s, (norm, mode, linear), &coords, &what);
                    unsafe { cl!(clReleaseSampler)(s) };
                }
            }
        }
        unsafe { cl!(clReleaseMemObject)(img.mem) };
    }
    unsafe { cl!(clReleaseKernel)(k) };
}

#[test]
fn samplers_on_each_image_type() {
    let env = env();
    let mut rng = Rng(5);
    for (ty, ext, _, _) in cases() {
        let k = kernel_for(&env, ty);
        let (img, m) = float_image(&env, ty, ext, true, &mut rng);
        for (norm, mode, linear) in [
            (true, CL_ADDRESS_CLAMP_TO_EDGE, true),
            (true, CL_ADDRESS_REPEAT, false),
            (false, CL_ADDRESS_CLAMP, false),
            (false, CL_ADDRESS_CLAMP, true),
            (true, CL_ADDRESS_MIRRORED_REPEAT, true),
        ] {
            let f = if linear {
                CL_FILTER_LINEAR
            } else {
                CL_FILTER_NEAREST
            };
            let s = sampler(&env, norm, mode, f);
            let coords = coords_for(&m, norm, mode, linear, &mut rng, 48);
            let what = format!("type {ty:#x} normalized {norm} mode {mode:#x} linear {linear}");
            check_reads(&env, k, &img, &m, s, (norm, mode, linear), &coords, &what);
            unsafe { cl!(clReleaseSampler)(s) };
        }
        unsafe {
            cl!(clReleaseMemObject)(img.mem);
            cl!(clReleaseKernel)(k);
        }
    }
}

/// Integer coordinates with an unnormalized nearest sampler, out of range too: the border
/// colour with CL_ADDRESS_CLAMP (integers: read_imageui of an RGBA8 integer image gives
/// (0, 0, 0, 0)), the edge texel with CL_ADDRESS_CLAMP_TO_EDGE.
#[test]
fn integer_coordinates_and_borders() {
    let env = env();
    let mut rng = Rng(12);
    let ext = [6usize, 4, 1];
    let img = Img::new(
        &env,
        CL_MEM_OBJECT_IMAGE2D,
        ext,
        (CL_RGBA, CL_UNSIGNED_INT8),
        4,
        &mut rng,
    );
    let k = env.kern_opts(
        "kernel void k(read_only image2d_t img, sampler_t s, global const int2* cs, global uint4* out) {
            int i = get_global_id(0);
            out[i] = read_imageui(img, s, cs[i]);
        }",
        "-cl-std=CL3.0",
        "k",
    );
    let coords: Vec<[i32; 2]> = (-2..8).flat_map(|x| (-2..6).map(move |y| [x, y])).collect();
    for mode in [CL_ADDRESS_CLAMP, CL_ADDRESS_CLAMP_TO_EDGE] {
        let s = sampler(&env, false, mode, CL_FILTER_NEAREST);
        let cbuf = env.buf(&coords);
        let out = env.zeros::<[u32; 4]>(coords.len());
        arg_mem(k, 0, img.mem);
        set_arg(k, 1, &s);
        arg_mem(k, 2, cbuf);
        arg_mem(k, 3, out);
        env.run(k, &[coords.len()], None, None);
        let got: Vec<[u32; 4]> = env.read(out, coords.len());
        for (i, c) in coords.iter().enumerate() {
            let inside = (0..2).all(|d| c[d] >= 0 && (c[d] as usize) < ext[d]);
            let want: [u32; 4] = if mode == CL_ADDRESS_CLAMP && !inside {
                [0; 4]
            } else {
                let x = c[0].clamp(0, ext[0] as i32 - 1) as usize;
                let y = c[1].clamp(0, ext[1] as i32 - 1) as usize;
                let t = &img.model[(y * ext[0] + x) * 4..][..4];
                std::array::from_fn(|k| t[k] as u32)
            };
            assert_eq!(got[i], want, "mode {mode:#x} coordinate {c:?}");
        }
        unsafe {
            cl!(clReleaseSampler)(s);
            cl!(clReleaseMemObject)(cbuf);
            cl!(clReleaseMemObject)(out);
        }
    }
    // Float images: the border of an image without alpha is opaque black.
    let kf = env.kern_opts(
        "kernel void k(read_only image2d_t img, sampler_t s, global const int2* cs, global float4* out) {
            int i = get_global_id(0);
            out[i] = read_imagef(img, s, cs[i]);
        }",
        "-cl-std=CL3.0",
        "k",
    );
    for rgba in [true, false] {
        let (fimg, m) = float_image(&env, CL_MEM_OBJECT_IMAGE2D, ext, rgba, &mut rng);
        let s = sampler(&env, false, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST);
        let cbuf = env.buf(&coords);
        let out = env.zeros::<[f32; 4]>(coords.len());
        arg_mem(kf, 0, fimg.mem);
        set_arg(kf, 1, &s);
        arg_mem(kf, 2, cbuf);
        arg_mem(kf, 3, out);
        env.run(kf, &[coords.len()], None, None);
        let got: Vec<[f32; 4]> = env.read(out, coords.len());
        for (i, c) in coords.iter().enumerate() {
            let want = m.texel([c[0] as i64, c[1] as i64, 0]);
            let g: [f64; 4] = got[i].map(|v| v as f64);
            assert_eq!(g, want, "rgba {rgba} coordinate {c:?}");
        }
        unsafe {
            cl!(clReleaseSampler)(s);
            cl!(clReleaseMemObject)(cbuf);
            cl!(clReleaseMemObject)(out);
            cl!(clReleaseMemObject)(fimg.mem);
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(img.mem);
        cl!(clReleaseKernel)(k);
        cl!(clReleaseKernel)(kf);
    }
}

#[test]
fn set_kernel_arg_of_samplers() {
    let env = env();
    let k = kernel_for(&env, CL_MEM_OBJECT_IMAGE2D);
    let s = sampler(&env, true, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST);
    let buf = env.zeros::<i32>(4);
    let set = |v: *const c_void, size: usize| unsafe { cl!(clSetKernelArg)(k, 1, size, v) };
    ok(set(&s as *const cl_sampler as *const c_void, 8));
    assert_eq!(
        set(&s as *const cl_sampler as *const c_void, 4),
        CL_INVALID_ARG_SIZE
    );
    assert_eq!(
        set(&buf as *const cl_mem as *const c_void, 8),
        CL_INVALID_SAMPLER
    );
    let nul: cl_sampler = null_mut();
    assert_eq!(
        set(&nul as *const cl_sampler as *const c_void, 8),
        CL_INVALID_SAMPLER
    );
    assert_eq!(set(std::ptr::null(), 8), CL_INVALID_SAMPLER);
    // A sampler given to an image argument.
    let r = unsafe { cl!(clSetKernelArg)(k, 0, 8, &s as *const cl_sampler as *const c_void) };
    assert_eq!(r, CL_INVALID_MEM_OBJECT);
    unsafe {
        cl!(clReleaseSampler)(s);
        cl!(clReleaseMemObject)(buf);
        cl!(clReleaseKernel)(k);
    }
}

/// What is refused rather than answered wrongly: a `CL_ADDRESS_CLAMP` sampler in a launch
/// whose read-only images need different border colours (one Vulkan sampler has one).
#[test]
fn refused_sampler_uses() {
    let env = env();
    let mut rng = Rng(3);
    let k = env.kern_opts(
        "kernel void k(read_only image2d_t a, read_only image2d_t b, sampler_t s, global float4* out) {
            out[0] = read_imagef(a, s, (float2)(0.5f, 0.5f)) + read_imagef(b, s, (float2)(0.5f, 0.5f));
        }",
        "-cl-std=CL3.0",
        "k",
    );
    let (a, _) = float_image(&env, CL_MEM_OBJECT_IMAGE2D, [4, 4, 1], true, &mut rng);
    let (b, _) = float_image(&env, CL_MEM_OBJECT_IMAGE2D, [4, 4, 1], false, &mut rng);
    let out = env.zeros::<[f32; 4]>(1);
    arg_mem(k, 0, a.mem);
    arg_mem(k, 1, b.mem);
    arg_mem(k, 3, out);
    let clamp = sampler(&env, true, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST);
    set_arg(k, 2, &clamp);
    assert_eq!(env.try_run(k, &[1], None, None), CL_INVALID_OPERATION);
    let edge = sampler(&env, true, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST);
    set_arg(k, 2, &edge);
    env.run(k, &[1], None, None);
    arg_mem(k, 1, a.mem);
    set_arg(k, 2, &clamp);
    env.run(k, &[1], None, None);
    unsafe {
        cl!(clReleaseSampler)(clamp);
        cl!(clReleaseSampler)(edge);
        for m in [a.mem, b.mem, out] {
            cl!(clReleaseMemObject)(m);
        }
        cl!(clReleaseKernel)(k);
    }
}

/// Inline samplers: a program-scope `constant sampler_t` and a kernel-scope
/// `const sampler_t` of other modes, against the model.
#[test]
fn inline_samplers() {
    let env = env();
    let mut rng = Rng(42);
    let k = env.kern_opts(
        "constant sampler_t s1 = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
        kernel void k(read_only image2d_t img, global const float4* cs, global float4* out) {
            const sampler_t s2 = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
            int i = get_global_id(0);
            float4 c = cs[i];
            out[2 * i] = read_imagef(img, s1, c.xy);
            out[2 * i + 1] = read_imagef(img, s2, c.zw);
        }",
        "-cl-std=CL3.0",
        "k",
    );
    for rgba in [true, false] {
        let (img, m) = float_image(&env, CL_MEM_OBJECT_IMAGE2D, [9, 6, 1], rgba, &mut rng);
        let a = coords_for(&m, false, CL_ADDRESS_CLAMP, false, &mut rng, 64);
        let b = coords_for(&m, true, CL_ADDRESS_REPEAT, true, &mut rng, 64);
        let cs: Vec<[f32; 4]> = a
            .iter()
            .zip(&b)
            .map(|(a, b)| [a[0], a[1], b[0], b[1]])
            .collect();
        let cbuf = env.buf(&cs);
        let out = env.zeros::<[f32; 4]>(2 * cs.len());
        arg_mem(k, 0, img.mem);
        arg_mem(k, 1, cbuf);
        arg_mem(k, 2, out);
        env.run(k, &[cs.len()], None, None);
        let got: Vec<[f32; 4]> = env.read(out, 2 * cs.len());
        for i in 0..cs.len() {
            let (w1, _, _) = sample(&m, a[i], false, CL_ADDRESS_CLAMP, false);
            let (w2, _, spread) = sample(&m, b[i], true, CL_ADDRESS_REPEAT, true);
            for ch in 0..4 {
                assert_eq!(
                    got[2 * i][ch] as f64,
                    w1[ch],
                    "rgba {rgba} s1 at {:?}",
                    a[i]
                );
                let tol = 2.0 / 256.0 * spread + 1e-5;
                assert!(
                    (got[2 * i + 1][ch] as f64 - w2[ch]).abs() <= tol,
                    "rgba {rgba} s2 at {:?}: {} for {}",
                    b[i],
                    got[2 * i + 1][ch],
                    w2[ch]
                );
            }
        }
        unsafe {
            cl!(clReleaseMemObject)(cbuf);
            cl!(clReleaseMemObject)(out);
            cl!(clReleaseMemObject)(img.mem);
        }
    }
    unsafe { cl!(clReleaseKernel)(k) };
}

/// OpenCL C 3.0 8.2's nearest texel index of normalized coordinate `s` along a dimension of
/// `n` texels for `CL_ADDRESS_REPEAT` or `_MIRRORED_REPEAT`, computed in float as the CTS's
/// reference does (so `s - floor(s)` of -1e-10 is 1.0, texel n, which wraps to 0).
fn wrapped_index(s: f32, n: usize, mirrored: bool) -> usize {
    let w = n as f32;
    if mirrored {
        let t = 2.0 * (0.5 * s).round_ties_even();
        let u = (s - t).abs() * w;
        (u.floor() as i64).min(n as i64 - 1) as usize
    } else {
        let u = (s - s.floor()) * w;
        let i = u.floor() as i64;
        (if i > n as i64 - 1 { i - n as i64 } else { i }) as usize
    }
}

/// Normalized repeat and mirrored repeat where float rounding decides the texel: coordinates
/// just below 0 (Vulkan's own wrap of `floor(s * n)` = -1 read texel n - 1 there), at
/// integers, and random ones, on a 7 x 5 R32F 2D image; every read against the float model
/// above (random coordinates 0.02 texel away from texel edges, where the driver's sub-texel
/// precision may pick either neighbour).
#[test]
fn repeat_modes_wrap_as_opencl_rounds() {
    let env = env();
    let mut rng = Rng(77);
    let ext = [7usize, 5, 1];
    let (img, m) = float_image(&env, CL_MEM_OBJECT_IMAGE2D, ext, false, &mut rng);
    let k = kernel_for(&env, CL_MEM_OBJECT_IMAGE2D);
    let special = [
        -1e-10f32,
        -f32::from_bits(0x2d924925), // -0x1.24924ap-33, from the CTS
        -(2.0f32).powi(-30),
        -1e-7,
        0.0,
        1.0,
        -1.0,
        2.0,
        -3.0 + 1e-9,
        0.5 / 7.0,
    ];
    let mut coords: Vec<[f32; 4]> = Vec::new();
    for &a in &special {
        for &b in &special {
            coords.push([a, b, 0.0, 0.0]);
        }
    }
    while coords.len() < special.len() * special.len() + 200 {
        let c = [rng.next_f32() * 6.0 - 3.0, rng.next_f32() * 6.0 - 3.0];
        let away = (0..2).all(|d| {
            let u = (c[d] - c[d].floor()) * ext[d] as f32;
            (u - u.round()).abs() > 0.02
        });
        if away {
            coords.push([c[0], c[1], 0.0, 0.0]);
        }
    }
    for (mode, mirrored) in [
        (CL_ADDRESS_REPEAT, false),
        (CL_ADDRESS_MIRRORED_REPEAT, true),
    ] {
        let s = sampler(&env, true, mode, CL_FILTER_NEAREST);
        let cbuf = env.buf(&coords);
        let out = env.zeros::<[f32; 4]>(coords.len());
        arg_mem(k, 0, img.mem);
        set_arg(k, 1, &s);
        arg_mem(k, 2, cbuf);
        arg_mem(k, 3, out);
        env.run(k, &[coords.len()], None, None);
        let got: Vec<[f32; 4]> = env.read(out, coords.len());
        for (i, c) in coords.iter().enumerate() {
            let x = wrapped_index(c[0], ext[0], mirrored);
            let y = wrapped_index(c[1], ext[1], mirrored);
            let want = m.texel([x as i64, y as i64, 0]);
            assert_eq!(
                got[i][0] as f64, want[0],
                "mode {mode:#x} coordinate {c:?}: texel ({x}, {y}) expected"
            );
        }
        unsafe {
            cl!(clReleaseSampler)(s);
            cl!(clReleaseMemObject)(cbuf);
            cl!(clReleaseMemObject)(out);
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(img.mem);
        cl!(clReleaseKernel)(k);
    }
}
