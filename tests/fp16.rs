//! `half` (`cl_khr_fp16`) end to end: arithmetic (scalars and every vector width, subnormals
//! included), loads and stores in each address space and `half` kernel arguments, conversions
//! with every rounding mode and saturation, and the math, common, geometric and relational
//! built-ins within the OpenCL C full-profile limits for half (3.0, section 7.4), each against
//! answers computed on the host (the `half` crate's binary16, f64 references). `VKCL_FP16=1`
//! (by default half is offered on CPU devices only) and `VKCL_FP64=1` are set for this test
//! binary, so it checks half on GPUs too (docs/settings.md); every
//! test returns early, passing, when the device does not report `cl_khr_fp16` (no
//! `shaderFloat16` or 16-bit storage).
mod common;
use common::*;
use half::f16;

const PRAGMA: &str = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";

/// An environment on a device with `half`, or None (the test then skips).
fn fp16_env() -> Option<Env> {
    static SET: std::sync::Once = std::sync::Once::new();
    // Before the library reads its settings (once per process, at its first call).
    // double too where the device has it, for the double <-> half conversions.
    SET.call_once(|| {
        std::env::set_var("VKCL_FP16", "1");
        std::env::set_var("VKCL_FP64", "1");
    });
    let env = Env::new();
    if env.has_extension("cl_khr_fp16") {
        Some(env)
    } else {
        eprintln!("skipped: the device does not report cl_khr_fp16");
        None
    }
}

/// Runs `k` (from `src`, kernel `k`) over `n` work-items: argument 0 is the output
/// (`out_len` elements of T), the others buffers holding `inputs`.
fn run_k<T: Copy + Default>(
    env: &Env,
    src: &str,
    inputs: &[&[u8]],
    n: usize,
    out_len: usize,
) -> Vec<T> {
    let k = env.kern(&format!("{PRAGMA}{src}"), "k");
    let out = env.zeros::<T>(out_len);
    arg_mem(k, 0, out);
    for (j, b) in inputs.iter().enumerate() {
        let m = env.buffer(CL_MEM_READ_ONLY, b.len().max(1), Some(b));
        arg_mem(k, j as u32 + 1, m);
    }
    env.run(k, &[n], None, None);
    env.read(out, out_len)
}

/// A random half of any exponent (subnormals, zeros and both signs included), finite.
fn any_half(rng: &mut Rng) -> f16 {
    loop {
        let h = f16::from_bits(rng.next_u32() as u16);
        if h.is_finite() {
            return h;
        }
    }
}

fn halves(rng: &mut Rng, n: usize) -> Vec<u16> {
    (0..n).map(|_| any_half(rng).to_bits()).collect()
}

/// Every finite half and the infinities and a NaN.
fn all_halves() -> Vec<u16> {
    (0..=u16::MAX)
        .filter(|&b| {
            let h = f16::from_bits(b);
            !h.is_nan() || b == 0x7e00
        })
        .collect()
}

fn h(b: u16) -> f64 {
    f16::from_bits(b).to_f64()
}

/// Error of `got` (a half) against the exact `want` in half ulps (the ulp of a subnormal and
/// of the smallest normals is 2^-24); NaN wants NaN, infinities want themselves. A finite
/// `want` beyond the largest half counts from 65504 (an infinite result is 1 ulp past it).
fn ulps(got: u16, want: f64) -> f64 {
    let g = h(got);
    if want.is_nan() {
        return if g.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if g.is_nan() {
        return f64::INFINITY;
    }
    if want.is_infinite() {
        return if g == want { 0.0 } else { f64::INFINITY };
    }
    let a = want.abs();
    let e = if a == 0.0 {
        -14
    } else {
        (a.log2().floor() as i32).clamp(-14, 15)
    };
    let ulp = 2f64.powi(e - 10);
    if g.is_infinite() {
        // Overflow: fine where the exact value rounds to infinity within the limit.
        return if g.signum() == want.signum() {
            ((65504.0 + ulp) - a).max(0.0) / ulp
        } else {
            f64::INFINITY
        };
    }
    (g - want).abs() / ulp
}

/// Bits of the correctly rounded (to nearest even) half of `x`. The `half` crate's
/// `from_f64` goes through f32 on some hosts (two roundings), so its answer only brackets
/// `x`: the halves on either side are found from it and `x` compared with their midpoint,
/// which is exact in double.
fn rte(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_infinite() || a >= 65520.0 {
        return sign | 0x7c00;
    }
    // Magnitude bits: monotonic in the value.
    let mut lo = f16::from_f64(a).to_bits().min(0x7bff);
    while lo > 0 && h(lo) > a {
        lo -= 1;
    }
    while lo < 0x7bff && h(lo + 1) <= a {
        lo += 1;
    }
    if h(lo) == a {
        return sign | lo;
    }
    let hi = lo + 1;
    let mid = (h(lo) + h(hi)) / 2.0;
    let m = if a < mid {
        lo
    } else if a > mid {
        hi
    } else if lo & 1 == 0 {
        lo
    } else {
        hi
    };
    sign | m
}

/// Same value (both NaN counts as the same).
/// The spacing of halves at `w` (2^-24 among the subnormals).
/// Whether the device keeps half subnormals (`CL_FP_DENORM` in `CL_DEVICE_HALF_FP_CONFIG`).
fn half_denorm(env: &Env) -> bool {
    let cfg: cl_device_fp_config = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_HALF_FP_CONFIG, s, v, r)
    });
    cfg & CL_FP_DENORM as cl_device_fp_config != 0
}

fn half_ulp(w: f64) -> f64 {
    let a = w.abs();
    if a < 2f64.powi(-14) {
        2f64.powi(-24)
    } else {
        2f64.powi(a.log2().floor() as i32 - 10)
    }
}

fn same(a: u16, b: u16) -> bool {
    a == b || (f16::from_bits(a).is_nan() && f16::from_bits(b).is_nan())
}

#[test]
fn fp16_device_info() {
    let Some(env) = fp16_env() else { return };
    let d = env.device;
    let cfg: cl_device_fp_config = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_HALF_FP_CONFIG, s, v, r)
    });
    // cl_khr_fp16's minimum: round to nearest (or to zero) with infinities and NaNs.
    let need = CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN;
    assert_eq!(
        cfg & need as cl_device_fp_config,
        need as cl_device_fp_config
    );
    for q in [
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF,
    ] {
        let w: cl_uint = info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, q, s, v, r) });
        assert!(w >= 1, "vector width {w}");
    }
    // cl_khr_fp16 is defined for OpenCL C 3.0 programs (OpenCL C 3.0 has no __opencl_c_fp16
    // feature: half is an extension only).
    let p = env
        .try_build(
            "#if !defined(cl_khr_fp16)\n#error no fp16\n#endif\n\
             #pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
             __kernel void k(__global half *o) { o[0] = 1.0h; }",
            "-cl-std=CL3.0",
        )
        .unwrap_or_else(|(e, log)| panic!("{e}: {log}"));
    unsafe { cl!(clReleaseProgram)(p) };
}

/// +, -, *, / on random halves of every exponent: correctly rounded (the exact sum,
/// difference and product of two halves fit a double; the double quotient rounds once more
/// without changing the half result, 53 >= 2 * 11 + 2), subnormals kept (`CL_FP_DENORM`).
#[test]
fn fp16_arithmetic_is_correctly_rounded() {
    let Some(env) = fp16_env() else { return };
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let n = 4096;
    let mut a = halves(&mut rng, n);
    let b = halves(&mut rng, n);
    // Some subnormal results: small operands.
    for x in a.iter_mut().take(256) {
        *x &= 0x83ff;
    }
    let out: Vec<u16> = run_k(
        &env,
        "__kernel void k(__global half *o, __global const half *a, __global const half *b) {\n\
         size_t i = get_global_id(0);\n\
         o[4 * i] = a[i] + b[i]; o[4 * i + 1] = a[i] - b[i];\n\
         o[4 * i + 2] = a[i] * b[i]; o[4 * i + 3] = a[i] / b[i]; }",
        &[bytes(&a), bytes(&b)],
        n,
        4 * n,
    );
    let denorm = half_denorm(&env);
    for i in 0..n {
        let (x, y) = (h(a[i]), h(b[i]));
        let want = [rte(x + y), rte(x - y), rte(x * y), rte(x / y)];
        for (k, w) in want.iter().enumerate() {
            let got = out[4 * i + k];
            let sub = |b: u16| !f16::from_bits(b).is_normal() && h(b) != 0.0;
            // Without CL_FP_DENORM, subnormal operands and results may be flushed.
            if !denorm && (sub(*w) || sub(a[i]) || sub(b[i])) {
                continue;
            }
            // + - * correctly rounded; x / y within 1 ulp (OpenCL C, half precision): lavapipe
            // rounds it correctly, NVIDIA's is 1 ulp off at times.
            let near = k == 3
                && f16::from_bits(got).is_finite()
                && (h(got) - h(*w)).abs() <= half_ulp(h(*w));
            assert!(
                same(got, *w) || near,
                "op {k} of {x:e} and {y:e}: got {:e} ({got:04x}), want {:e} ({w:04x})",
                h(got),
                h(*w)
            );
        }
    }
}

/// Half division at the edges of the rounding to half, scalar and `half2`: quotients that are
/// exact ties below 2^-14 (ties to even), a quotient just below the overflow threshold (65504)
/// and ones at and past it (infinity), and a quotient near a half, against the host's
/// correctly rounded answers. vkcl divides in float and rounds the quotient to half on its
/// bits, so these are exact wherever float division is (lavapipe, NVIDIA at these inputs).
#[test]
fn fp16_division_rounds_ties_to_even_and_overflows() {
    let Some(env) = fp16_env() else { return };
    let tiny = 2f32.powi(-24);
    let pairs: &[(f32, f32)] = &[
        (tiny, 2.0),
        (3.0 * tiny, 2.0),
        (5.0 * tiny, 2.0),
        (7.0 * tiny, -2.0),
        (tiny, 1.5),
        (65504.0, 0.5),
        (-65504.0, 0.5),
        (65504.0, 1.0 - 2f32.powi(-11)),
        (65472.0, 1.0 - 2f32.powi(-11)),
        (-0.10888671875, -0.0277099609375),
        (0.0, -3.0),
        (1.0, 0.0),
    ];
    let a: Vec<u16> = pairs.iter().map(|p| f16::from_f32(p.0).to_bits()).collect();
    let b: Vec<u16> = pairs.iter().map(|p| f16::from_f32(p.1).to_bits()).collect();
    let n = pairs.len();
    let out: Vec<u16> = run_k(
        &env,
        "__kernel void k(__global half *o, __global const half *a, __global const half *b) {\n\
         size_t i = get_global_id(0);\n\
         o[2 * i] = a[i] / b[i];\n\
         half2 q = (half2)(a[i], 1.0h) / (half2)(b[i], 1.0h);\n\
         o[2 * i + 1] = q.x; }",
        &[bytes(&a), bytes(&b)],
        n,
        2 * n,
    );
    let denorm = half_denorm(&env);
    for i in 0..n {
        let (x, y) = (h(a[i]), h(b[i]));
        let want = rte(x / y);
        if !denorm && (x.abs() < 2f64.powi(-14) || h(want).abs() < 2f64.powi(-14)) && x != 0.0 {
            continue;
        }
        for k in 0..2 {
            let got = out[2 * i + k];
            assert!(
                same(got, want),
                "{x:e} / {y:e} ({}): got {:e} ({got:04x}), want {:e} ({want:04x})",
                ["half", "half2"][k],
                h(got),
                h(want)
            );
        }
    }
}

/// Vectors of every width (component-wise arithmetic, a scalar broadcast, swizzles), `half`
/// and `half2` kernel arguments by value, and `half` in `__local`, `__private` and `__constant`
/// memory, against the same computation on the host.
#[test]
fn fp16_vectors_memory_and_arguments() {
    let Some(env) = fp16_env() else { return };
    let mut rng = Rng(77);
    let n = 16usize;
    let a: Vec<u16> = (0..16 * n)
        .map(|_| f16::from_f32(rng.next_f32() * 8.0 - 4.0).to_bits())
        .collect();
    let src = "__constant half ctab[4] = {0.5h, -1.25h, 3.0h, 7.75h};\n\
        __kernel void k(__global half *o, __global const half *a, half s, half2 s2) {\n\
        size_t i = get_global_id(0);\n\
        __local half lm[16 * 16];\n\
        half priv[16];\n\
        for (int j = 0; j < 16; j++) { lm[16 * i + j] = a[16 * i + j]; priv[j] = a[16 * i + 15 - j]; }\n\
        barrier(CLK_LOCAL_MEM_FENCE);\n\
        half16 v16 = vload16(i, lm);\n\
        half8 v8 = vload8(0, priv);\n\
        half4 v4 = vload4(0, a + 16 * i) * s;\n\
        half3 v3 = vload3(0, a + 16 * i + 4) + s2.y;\n\
        half2 v2 = s2 * (half2)(ctab[i & 3], a[16 * i]);\n\
        half16 r = v16 * (half)2.0h + (half16)(v8, v4, v3.zyx, v2.y);\n\
        vstore16(r, i, o);\n\
        }";
    let k = env.kern(&format!("{PRAGMA}{src}"), "k");
    let out = env.zeros::<u16>(16 * n);
    let ab = env.buf(&a);
    arg_mem(k, 0, out);
    arg_mem(k, 1, ab);
    let s = f16::from_f32(1.5).to_bits();
    let s2 = [f16::from_f32(-2.0).to_bits(), f16::from_f32(0.75).to_bits()];
    set_arg(k, 2, &s);
    set_arg(k, 3, &s2);
    env.run(k, &[n], Some(&[n]), None);
    let got: Vec<u16> = env.read(out, 16 * n);
    let ctab = [0.5f32, -1.25, 3.0, 7.75];
    let f = |b: u16| f16::from_bits(b);
    let r16 = |x: f32| f16::from_f32(x);
    for i in 0..n {
        let row = &a[16 * i..16 * i + 16];
        let v8: Vec<f16> = (0..8).map(|j| f(row[15 - j])).collect();
        let v4: Vec<f16> = (0..4).map(|j| r16(f(row[j]).to_f32() * 1.5)).collect();
        let v3: Vec<f16> = (0..3).map(|j| r16(f(row[4 + j]).to_f32() + 0.75)).collect();
        let v2y = r16(0.75 * f(row[0]).to_f32());
        let _ = ctab[i & 3];
        let tail: Vec<f16> = v8
            .iter()
            .chain(&v4)
            .copied()
            .chain([v3[2], v3[1], v3[0], v2y])
            .collect();
        for j in 0..16 {
            let want = r16(r16(f(row[j]).to_f32() * 2.0).to_f32() + tail[j].to_f32());
            assert_eq!(
                got[16 * i + j],
                want.to_bits(),
                "work-item {i} component {j}: got {}, want {want}",
                f(got[16 * i + j])
            );
        }
    }
}

/// The host's directed rounding of `x` to half: `rte` stepped by one half towards the mode's
/// side where it lies on the wrong side of `x`.
fn directed(x: f64, mode: &str) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let n = f16::from_bits(rte(x));
    let nv = n.to_f64();
    let step = |b: u16, up: bool| -> u16 {
        // One half towards +inf (up) or -inf.
        let v = f16::from_bits(b);
        if v.to_f64() == 0.0 {
            return if up { 0x0001 } else { 0x8001 };
        }
        let away = (v.to_f64() > 0.0) == up;
        if away {
            b + 1
        } else {
            b - 1
        }
    };
    match mode {
        "_rtp" if nv < x => step(n.to_bits(), true),
        "_rtn" if nv > x => step(n.to_bits(), false),
        "_rtz" if nv.abs() > x.abs() => step(n.to_bits(), x < 0.0),
        _ => n.to_bits(),
    }
}

/// `convert_half{_rte,_rtz,_rtp,_rtn}` of float, int, uint, long, short and the vector form,
/// against the host's rounding of the exact value.
#[test]
fn fp16_conversions_to_half_every_rounding_mode() {
    let Some(env) = fp16_env() else { return };
    let mut rng = Rng(99);
    let n = 2048;
    let fl: Vec<f32> = (0..n)
        .map(|i| {
            let bits = rng.next_u32();
            match i % 4 {
                // Around the half range, its subnormals, and anything.
                0 => (rng.next_f32() * 2.0 - 1.0) * 70000.0,
                1 => (rng.next_f32() * 2.0 - 1.0) * 1e-6,
                2 => f32::from_bits(bits & 0xbfff_ffff),
                _ => (rng.next_f32() * 2.0 - 1.0) * 3000.0,
            }
        })
        .collect();
    let ints: Vec<i32> = (0..n)
        .map(|i| match i % 3 {
            0 => rng.next_u32() as i32,
            1 => (rng.next_u32() as i32) >> 14,
            _ => (rng.next_u32() as i32) >> 20,
        })
        .collect();
    let longs: Vec<i64> = ints.iter().map(|&v| i64::from(v) * 977).collect();
    let shorts: Vec<i16> = ints.iter().map(|&v| v as i16).collect();
    for mode in ["", "_rte", "_rtz", "_rtp", "_rtn"] {
        let src = format!(
            "__kernel void k(__global half *o, __global const float *f, __global const int *i,\n\
             __global const long *l, __global const short *s) {{\n\
             size_t g = get_global_id(0);\n\
             o[6 * g] = convert_half{mode}(f[g]);\n\
             o[6 * g + 1] = convert_half{mode}(i[g]);\n\
             o[6 * g + 2] = convert_half{mode}(as_uint(i[g]));\n\
             o[6 * g + 3] = convert_half{mode}(l[g]);\n\
             o[6 * g + 4] = convert_half{mode}(s[g]);\n\
             o[6 * g + 5] = convert_half4{mode}(vload4(0, f + (g & ~3)))[g & 3];\n}}"
        );
        let out: Vec<u16> = run_k(
            &env,
            &src,
            &[bytes(&fl), bytes(&ints), bytes(&longs), bytes(&shorts)],
            n,
            6 * n,
        );
        let m = if mode.is_empty() { "_rte" } else { mode };
        for g in 0..n {
            let want = [
                directed(f64::from(fl[g]), m),
                directed(f64::from(ints[g]), m),
                directed(f64::from(ints[g] as u32), m),
                directed(longs[g] as f64, m),
                directed(f64::from(shorts[g]), m),
                directed(f64::from(fl[g]), m),
            ];
            for (k, w) in want.iter().enumerate() {
                assert_eq!(
                    out[6 * g + k],
                    *w,
                    "convert_half{mode} #{k} of element {g} (float {:e}, int {}, long {}, short {}): \
                     got {}, want {}",
                    fl[g],
                    ints[g],
                    longs[g],
                    shorts[g],
                    h(out[6 * g + k]),
                    h(*w)
                );
            }
        }
    }
}

/// `double` -> `half` in every rounding mode (plain casts and vectors too), where the device
/// has `double`: one rounding of the double, not double -> float -> half.
#[test]
fn fp16_conversions_from_double() {
    let Some(env) = fp16_env() else { return };
    if !env.has_extension("cl_khr_fp64") {
        eprintln!("skipped: no cl_khr_fp64");
        return;
    }
    let mut rng = Rng(4242);
    let n = 2048;
    let d: Vec<f64> = (0..n)
        .map(|i| {
            let u = (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32());
            match i % 4 {
                // A half plus less than an ulp of float: float would round it to the half or
                // to a tie.
                0 => {
                    let hv = f16::from_bits(rng.next_u32() as u16 & 0x7bff).to_f64();
                    let tie = hv * (1.0 + 2f64.powi(-11));
                    tie + (if u & 1 == 0 { 1.0 } else { -1.0 }) * tie * 2f64.powi(-40)
                }
                1 => (f64::from(rng.next_f32()) * 2.0 - 1.0) * 70000.0,
                2 => f64::from_bits(u & 0xbfff_ffff_ffff_ffff),
                _ => (f64::from(rng.next_f32()) - 0.5) * 1e-6,
            }
        })
        .collect();
    for mode in ["", "_rte", "_rtz", "_rtp", "_rtn"] {
        let src = format!(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
             __kernel void k(__global half *o, __global const double *d) {{\n\
             size_t g = get_global_id(0);\n\
             o[3 * g] = convert_half{mode}(d[g]);\n\
             o[3 * g + 1] = convert_half2{mode}(vload2(0, d + (g & ~1)))[g & 1];\n\
             o[3 * g + 2] = (half)d[g];\n}}"
        );
        let out: Vec<u16> = run_k(&env, &src, &[bytes(&d)], n, 3 * n);
        let m = if mode.is_empty() { "_rte" } else { mode };
        for g in 0..n {
            let want = [directed(d[g], m), directed(d[g], m), directed(d[g], "_rte")];
            for (k, w) in want.iter().enumerate() {
                assert_eq!(
                    out[3 * g + k],
                    *w,
                    "convert_half{mode} #{k} of {:e}: got {}, want {}",
                    d[g],
                    h(out[3 * g + k]),
                    h(*w)
                );
            }
        }
    }
}

/// From half: `convert_int`, `convert_int_sat_rtX`, `convert_uchar_sat`, `convert_short_rtX`,
/// `convert_float`, `as_short` and `as_half`, over every half value.
#[test]
fn fp16_conversions_from_half() {
    let Some(env) = fp16_env() else { return };
    let all = all_halves();
    let n = all.len();
    for mode in ["", "_rte", "_rtz", "_rtp", "_rtn"] {
        let src = format!(
            "__kernel void k(__global int *o, __global const half *a) {{\n\
             size_t g = get_global_id(0);\n half x = a[g];\n\
             o[6 * g] = convert_int_sat{mode}(x);\n\
             o[6 * g + 1] = convert_uchar_sat{mode}(x);\n\
             o[6 * g + 2] = convert_short_sat{mode}(x);\n\
             o[6 * g + 3] = as_int(convert_float(x));\n\
             o[6 * g + 4] = as_short(x) + (as_half(as_short(x)) == x);\n\
             o[6 * g + 5] = isfinite(x) && fabs(x) < 32768.0h ? convert_int{mode}(x) : 7;\n}}"
        );
        let out: Vec<i32> = run_k(&env, &src, &[bytes(&all)], n, 6 * n);
        for (g, &b) in all.iter().enumerate() {
            let x = h(b);
            let r = match mode {
                "" | "_rtz" => x.trunc(),
                "_rte" => {
                    let r = x.round();
                    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                        r - x.signum()
                    } else {
                        r
                    }
                }
                "_rtp" => x.ceil(),
                _ => x.floor(),
            };
            let sat = |lo: f64, hi: f64| {
                if x.is_nan() {
                    0
                } else {
                    r.clamp(lo, hi) as i32
                }
            };
            let eq = i32::from(!x.is_nan());
            let want = [
                sat(i32::MIN as f64, i32::MAX as f64),
                sat(0.0, 255.0),
                sat(-32768.0, 32767.0),
                (x as f32).to_bits() as i32,
                i32::from(b as i16) + eq,
                if x.is_finite() && x.abs() < 32768.0 {
                    r as i32
                } else {
                    7
                },
            ];
            let got = &out[6 * g..6 * g + 6];
            if x.is_nan() {
                assert!(f32::from_bits(got[3] as u32).is_nan(), "convert_float(NaN)");
                assert_eq!(
                    [got[0], got[1], got[2], got[4], got[5]],
                    [0, 0, 0, want[4], 7]
                );
                continue;
            }
            assert_eq!(got, &want[..], "conversions{mode} of {x:e} ({b:04x})");
        }
    }
}

/// Math built-ins over every half (unary) or random pairs, within the half limits of OpenCL
/// C 3.0 section 7.4, against double results from the host's libm.
#[test]
fn fp16_math_within_half_limits() {
    let Some(env) = fp16_env() else { return };
    let all = all_halves();
    let n = all.len();
    type F = fn(f64) -> f64;
    let unary: &[(&str, F, f64)] = &[
        ("sin", f64::sin, 2.0),
        ("cos", f64::cos, 2.0),
        ("tan", f64::tan, 2.5),
        ("exp", f64::exp, 2.0),
        ("exp2", f64::exp2, 2.0),
        ("exp10", |x| 10f64.powf(x), 2.0),
        ("expm1", f64::exp_m1, 2.0),
        ("log", f64::ln, 2.0),
        ("log2", f64::log2, 2.0),
        ("log10", f64::log10, 2.0),
        ("log1p", f64::ln_1p, 2.0),
        ("sqrt", f64::sqrt, 1.0),
        ("rsqrt", |x| 1.0 / x.sqrt(), 1.0),
        ("cbrt", f64::cbrt, 2.0),
        ("asin", f64::asin, 2.0),
        ("acos", f64::acos, 2.0),
        ("atan", f64::atan, 2.0),
        ("sinh", f64::sinh, 2.0),
        ("cosh", f64::cosh, 2.0),
        ("tanh", f64::tanh, 2.0),
        ("asinh", f64::asinh, 2.0),
        ("acosh", f64::acosh, 2.0),
        ("atanh", f64::atanh, 2.0),
        ("erf", libm::erf, 4.0),
        ("erfc", libm::erfc, 4.0),
        ("tgamma", libm::tgamma, 4.0),
        ("sinpi", |x| (std::f64::consts::PI * x).sin(), 2.0),
        ("fabs", f64::abs, 0.0),
        ("floor", f64::floor, 0.0),
        ("ceil", f64::ceil, 0.0),
        ("trunc", f64::trunc, 0.0),
        ("rint", libm::rint, 0.0),
        ("round", f64::round, 0.0),
        (
            "logb",
            |x| {
                if x.is_nan() {
                    x
                } else if x == 0.0 {
                    f64::NEG_INFINITY
                } else if x.is_infinite() {
                    f64::INFINITY
                } else {
                    libm::ilogb(x) as f64
                }
            },
            0.0,
        ),
    ];
    let body: String = unary
        .iter()
        .enumerate()
        .map(|(j, (name, _, _))| format!("o[{}u * g + {j}u] = {name}(x);\n", unary.len()))
        .collect();
    let src = format!(
        "__kernel void k(__global half *o, __global const half *a) {{\n\
         size_t g = get_global_id(0);\n half x = a[g];\n{body}}}"
    );
    let out: Vec<u16> = run_k(&env, &src, &[bytes(&all)], n, unary.len() * n);
    for (g, &b) in all.iter().enumerate() {
        let x = h(b);
        for (j, (name, f, limit)) in unary.iter().enumerate() {
            let want = f(x);
            // sinpi of large arguments: the double product loses the argument's exactness.
            if *name == "sinpi" && x.abs() > 1024.0 {
                continue;
            }
            let got = out[unary.len() * g + j];
            let e = if *limit == 0.0 {
                if same(got, rte(want)) {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                ulps(got, want)
            };
            assert!(
                e <= *limit,
                "{name}({x:e}) = {:e} ({got:04x}), want {want:e}: {e} ulp > {limit}",
                h(got)
            );
        }
    }
    // Binary functions and fma on random operands.
    let mut rng = Rng(5);
    let m = 8192;
    let a = halves(&mut rng, m);
    let b = halves(&mut rng, m);
    let c = halves(&mut rng, m);
    type G = fn(f64, f64) -> f64;
    let binary: &[(&str, G, f64)] = &[
        ("pow", f64::powf, 4.0),
        ("atan2", f64::atan2, 2.0),
        ("hypot", f64::hypot, 2.0),
        ("fmod", libm::fmod, 0.0),
        ("remainder", libm::remainder, 0.0),
        ("fmin", f64::min, 0.0),
        ("fmax", f64::max, 0.0),
        ("copysign", f64::copysign, 0.0),
        ("fdim", libm::fdim, 0.0),
        (
            "nextafter",
            |x, y| f16::from_bits(next_half(rte(x), rte(y))).to_f64(),
            0.0,
        ),
    ];
    let body: String = binary
        .iter()
        .enumerate()
        .map(|(j, (name, _, _))| format!("o[{}u * g + {j}u] = {name}(x, y);\n", binary.len() + 1))
        .collect();
    let src = format!(
        "__kernel void k(__global half *o, __global const half *a, __global const half *b,\n\
         __global const half *c) {{\n\
         size_t g = get_global_id(0);\n half x = a[g], y = b[g];\n{body}\
         o[{w}u * g + {j}u] = fma(x, y, c[g]);\n}}",
        w = binary.len() + 1,
        j = binary.len()
    );
    let w = binary.len() + 1;
    let out: Vec<u16> = run_k(&env, &src, &[bytes(&a), bytes(&b), bytes(&c)], m, w * m);
    for g in 0..m {
        let (x, y, z) = (h(a[g]), h(b[g]), h(c[g]));
        for (j, (name, f, limit)) in binary.iter().enumerate() {
            let want = f(x, y);
            let got = out[w * g + j];
            // A limit of 0: the correctly rounded result.
            let e = if *limit == 0.0 {
                if same(got, rte(want)) {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                ulps(got, want)
            };
            assert!(
                e <= *limit,
                "{name}({x:e}, {y:e}) = {:e} ({got:04x}), want {want:e}: {e} ulp > {limit}",
                h(got)
            );
        }
        // fma: the product of two halves is exact in double; the double sum rounds at 2^-53
        // relative, far below the half's rounding unless it lands on a half tie exactly,
        // which a random sum does not.
        let want = rte(x.mul_add(y, z));
        let got = out[w * g + binary.len()];
        assert!(
            same(got, want),
            "fma({x:e}, {y:e}, {z:e}) = {:e}, want {:e}",
            h(got),
            h(want)
        );
    }
}

/// The built-ins with a pointer result over every half: `fract` (below 1 even for -2^-24,
/// whose float fract rounds up to 1 in half), `modf`, `frexp` and `sincos`, the pointer to
/// private memory for some and to global memory for others.
#[test]
fn fp16_pointer_results() {
    let Some(env) = fp16_env() else { return };
    let all = all_halves();
    let n = all.len();
    let src = "__kernel void k(__global half *o, __global const half *a, __global int *e) {\n\
        size_t g = get_global_id(0);\n half x = a[g];\n half ip, c; int ex;\n\
        o[5 * g] = fract(x, &ip);\n o[5 * g + 1] = ip;\n\
        o[5 * g + 2] = modf(x, o + 5 * g + 3);\n\
        o[5 * g + 4] = frexp(x, &ex) + (sincos(x, &c) - sin(x)) + (c - cos(x));\n\
        e[g] = ex;\n}";
    let k = env.kern(&format!("{PRAGMA}{src}"), "k");
    let out = env.zeros::<u16>(5 * n);
    let inp = env.buf(&all);
    let ex = env.zeros::<i32>(n);
    arg_mem(k, 0, out);
    arg_mem(k, 1, inp);
    arg_mem(k, 2, ex);
    env.run(k, &[n], None, None);
    let o: Vec<u16> = env.read(out, 5 * n);
    let e: Vec<i32> = env.read(ex, n);
    for (g, &b) in all.iter().enumerate() {
        let x = h(b);
        if !x.is_finite() {
            continue;
        }
        let fl = x.floor();
        let fr = rte((x - fl).min(1.0 - 2f64.powi(-11)));
        // (The sign of a zero result is not checked.)
        assert_eq!(h(o[5 * g]), h(fr), "fract({x:e}) = {}", h(o[5 * g]));
        assert!(h(o[5 * g]) < 1.0, "fract({x:e}) = {}", h(o[5 * g]));
        assert_eq!(h(o[5 * g + 1]), fl, "fract({x:e}) integral part");
        assert_eq!(h(o[5 * g + 3]), x.trunc(), "modf({x:e}) integral part");
        assert_eq!(h(o[5 * g + 2]), x - x.trunc(), "modf({x:e})");
        let (m, ee) = if x == 0.0 {
            (x, 0)
        } else {
            let ee = x.abs().log2().floor() as i32 + 1;
            (x / 2f64.powi(ee), ee)
        };
        assert_eq!(h(o[5 * g + 4]), m, "frexp({x:e}) (sincos as sin and cos)");
        assert_eq!(e[g], ee, "frexp({x:e}) exponent");
    }
}

/// The next half after bits `x` towards bits `y` (IEEE 754 nextafter).
fn next_half(x: u16, y: u16) -> u16 {
    let (fx, fy) = (h(x), h(y));
    if fx.is_nan() || fy.is_nan() {
        return 0x7e00;
    }
    if fx == fy {
        return y;
    }
    if fx == 0.0 {
        return if fy > 0.0 { 0x0001 } else { 0x8001 };
    }
    if (fy > fx) == (fx > 0.0) {
        x + 1
    } else {
        x - 1
    }
}

/// Common, geometric and relational built-ins on half vectors: clamp, mix, step, min/max,
/// dot, length, isnan/isinf/isless/signbit and select, against the host.
#[test]
fn fp16_common_geometric_relational() {
    let Some(env) = fp16_env() else { return };
    let mut rng = Rng(31);
    let n = 1024;
    let a: Vec<u16> = (0..4 * n)
        .map(|i| {
            if i % 97 == 5 {
                0x7e00
            } else if i % 89 == 3 {
                0xfc00
            } else {
                f16::from_f32(rng.next_f32() * 4.0 - 2.0).to_bits()
            }
        })
        .collect();
    let b: Vec<u16> = (0..4 * n)
        .map(|_| f16::from_f32(rng.next_f32() * 4.0 - 2.0).to_bits())
        .collect();
    let src =
        "__kernel void k(__global short *o, __global const half *a, __global const half *b) {\n\
        size_t g = get_global_id(0);\n\
        half4 x = vload4(g, a), y = vload4(g, b);\n\
        short4 r0 = isnan(x) | (isinf(x) << 1) | (isless(x, y) << 2) | (signbit(x) << 3);\n\
        vstore4(r0, 0, o + 16 * g);\n\
        vstore4(as_short4(select(x, y, isgreater(x, y))), 0, o + 16 * g + 4);\n\
        vstore4(as_short4(clamp(y, (half)-0.5h, (half)0.75h)), 0, o + 16 * g + 8);\n\
        vstore2(as_short2(fmax(y.xy, y.zw)), 0, o + 16 * g + 12);\n\
        o[16 * g + 14] = as_short(dot(y, y));\n\
        o[16 * g + 15] = as_short(length(y.xy));\n}";
    let out: Vec<i16> = run_k(&env, src, &[bytes(&a), bytes(&b)], n, 16 * n);
    for g in 0..n {
        let x: Vec<f64> = (0..4).map(|j| h(a[4 * g + j])).collect();
        let y: Vec<f64> = (0..4).map(|j| h(b[4 * g + j])).collect();
        let o = &out[16 * g..16 * g + 16];
        for j in 0..4 {
            let t = |c: bool| if c { -1i16 } else { 0 };
            let want = t(x[j].is_nan())
                | (t(x[j].is_infinite()) << 1)
                | (t(x[j] < y[j]) << 2)
                | (t(a[4 * g + j] & 0x8000 != 0) << 3);
            assert_eq!(o[j], want, "relational bits of ({}, {})", x[j], y[j]);
            let sel = if x[j] > y[j] {
                b[4 * g + j]
            } else {
                a[4 * g + j]
            };
            assert!(same(o[4 + j] as u16, sel), "select of ({}, {})", x[j], y[j]);
            assert_eq!(
                o[8 + j] as u16,
                rte(y[j].clamp(-0.5, 0.75)),
                "clamp({})",
                y[j]
            );
        }
        for j in 0..2 {
            assert_eq!(o[12 + j] as u16, rte(y[j].max(y[j + 2])), "fmax");
        }
        // dot and length: the half limits for geometric functions are loose; these are within
        // 2 ulp of the exact value.
        let d: f64 = y.iter().map(|v| v * v).sum();
        let e = ulps(o[14] as u16, d);
        assert!(e <= 2.0, "dot {y:?}: {} vs {d}: {e} ulp", h(o[14] as u16));
        let l = (y[0] * y[0] + y[1] * y[1]).sqrt();
        let e = ulps(o[15] as u16, l);
        assert!(
            e <= 2.0,
            "length {:?}: {} vs {l}: {e} ulp",
            &y[..2],
            h(o[15] as u16)
        );
    }
}

/// Without `VKCL_FP16` the device does not report half and `half` arithmetic is a build
/// error; this binary sets it, so here the pragma and types compile and `half` arguments
/// report their size: a by-value `half` set with 4 bytes is `CL_INVALID_ARG_SIZE`.
#[test]
fn fp16_argument_size_is_checked() {
    let Some(env) = fp16_env() else { return };
    let k = env.kern(
        &format!("{PRAGMA}__kernel void k(__global half *o, half s) {{ o[0] = s; }}"),
        "k",
    );
    let v: u32 = 0;
    let r = unsafe { cl!(clSetKernelArg)(k, 1, 4, &v as *const u32 as *const std::ffi::c_void) };
    assert_eq!(r, CL_INVALID_ARG_SIZE);
    let s: u16 = 0x3c00;
    ok(unsafe { cl!(clSetKernelArg)(k, 1, 2, &s as *const u16 as *const std::ffi::c_void) });
}

/// `vstore_half_rtz/rtp/rtn` of `double` round once: through a round-to-odd float, not the
/// nearest float (which turned 2.4999999999999 into a tie and 2^-766 into zero).
#[test]
fn vstore_half_of_double_rounds_once() {
    let Some(env) = fp16_env() else { return };
    if !env.has_extension("cl_khr_fp64") {
        return;
    }
    let mut rng = Rng(0x0dd);
    let mut d: Vec<f64> = vec![
        f64::from_bits(0x4003_ffff_ffff_ff80), // 0x1.3ffffffffff80p+1
        f64::from_bits(0x3fff_ffff_ffff_ff80), // 0x1.fffffffffff80p+0
        f64::from_bits(0x3f14_0000_0000_0000) * f64::from_bits(0x3010_0000_0000_0000), // tiny
        -2.4999999999999,
        65519.99999999,
        70000.0,
        -1e-300,
    ];
    d.extend((0..1017).map(|_| {
        let u = (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32());
        // Near half precision: a half's value plus a small offset either way.
        let base = h((u as u16) & 0x7bff) * if u >> 63 == 1 { -1.0 } else { 1.0 };
        base * (1.0 + ((u >> 20) & 0xfff) as f64 * 2f64.powi(-40) - 2f64.powi(-29))
    }));
    let n = d.len();
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
        __kernel void k(__global half *o, __global const double *d) {\n\
        size_t g = get_global_id(0), n = get_global_size(0);\n\
        vstore_half_rtz(d[g], g, o); vstore_half_rtp(d[g], g + n, o);\n\
        vstore_half_rtn(d[g], g + 2 * n, o); vstore_half(d[g], g + 3 * n, o);\n}";
    let out: Vec<u16> = run_k(&env, src, &[bytes(&d)], n, 4 * n);
    for (m, mode) in ["_rtz", "_rtp", "_rtn", "_rte"].iter().enumerate() {
        for g in 0..n {
            assert_eq!(
                out[m * n + g],
                directed(d[g], mode),
                "vstore_half{mode} of {:e} ({:#x})",
                d[g],
                d[g].to_bits()
            );
        }
    }
}

/// `mad` on half scalars, `half2` and `half8`: OpenCL C leaves its precision to the
/// implementation (3.0, section 7.4), and vkcl leaves the multiply and add for the driver to
/// fuse, so each result must be one of the ways a device computes it: rounded once (fused),
/// the product and the sum each rounded to half, or the sum of the exact product in float
/// rounded to half. A lost or swapped operand fails.
#[test]
fn fp16_mad_is_fused_or_rounded_twice() {
    let Some(env) = fp16_env() else { return };
    let mut rng = Rng(21);
    let m = 4096;
    let a = halves(&mut rng, m);
    let b = halves(&mut rng, m);
    let c = halves(&mut rng, m);
    let src = format!(
        "#define M {m}\n\
         __kernel void k(__global half *o, __global const half *a, __global const half *b,\n\
         __global const half *c) {{\n\
         size_t g = get_global_id(0);\n\
         for (int j = 0; j < 8; j++) {{ size_t i = 8 * g + j; o[i] = mad(a[i], b[i], c[i]); }}\n\
         for (int j = 0; j < 4; j++) {{\n\
           size_t i = 4 * g + j;\n\
           vstore2(mad(vload2(i, a), vload2(i, b), vload2(i, c)), i, o + M);\n\
         }}\n\
         vstore8(mad(vload8(g, a), vload8(g, b), vload8(g, c)), g, o + 2 * M);\n}}"
    );
    let out: Vec<u16> = run_k(&env, &src, &[bytes(&a), bytes(&b), bytes(&c)], m / 8, 3 * m);
    for i in 0..m {
        let (x, y, z) = (h(a[i]), h(b[i]), h(c[i]));
        // The product of two halves is exact in f64 and in f32, a half plus a half in f64.
        let fused = rte(x.mul_add(y, z));
        let twice = rte(h(rte(x * y)) + z);
        let via_float = rte(((x * y) as f32 + z as f32) as f64);
        for (s, width) in ["scalar", "half2", "half8"].iter().enumerate() {
            let got = out[s * m + i];
            assert!(
                [fused, twice, via_float].iter().any(|&w| same(got, w)),
                "{width} mad({x:e}, {y:e}, {z:e}) = {:e}; fused {:e}, rounded twice {:e}, \
                 through float {:e}",
                h(got),
                h(fused),
                h(twice),
                h(via_float)
            );
        }
    }
}
