//! `double` (`cl_khr_fp64`) end to end: arithmetic, `fma`, conversions with rounding modes and
//! saturation, vectors, math built-ins within the OpenCL C full-profile limits for double
//! (3.0, section 7.4, "ULP values for double precision built-in math functions") and printf,
//! each against answers computed on the host. `double` is on by default (`VKCL_FP64=0` turns
//! it off: docs/settings.md); every test returns early, passing, when the device does not
//! report `cl_khr_fp64` (no `shaderFloat64` or `shaderInt64`, or `VKCL_FP64=0` in the
//! environment).
mod common;
use common::*;
use std::ffi::CString;
use std::ptr::{null, null_mut};

/// An environment on a device with `double`, or None (the test then skips).
fn fp64_env() -> Option<Env> {
    let env = Env::new();
    if env.has_extension("cl_khr_fp64") {
        Some(env)
    } else {
        eprintln!("skipped: the device does not report cl_khr_fp64");
        None
    }
}

fn run(env: &Env, k: cl_kernel, global: usize) {
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            &global,
            null(),
            0,
            null(),
            null_mut(),
        )
    });
    env.finish();
}

/// A random double of any exponent (subnormals included) and sign, from 64 random bits.
fn any_f64(rng: &mut Rng) -> f64 {
    let bits = (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32());
    let x = f64::from_bits(bits);
    if x.is_finite() {
        x
    } else {
        1.5
    }
}

/// A random double in [lo, hi).
fn in_range(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    let u = ((u64::from(rng.next_u32()) << 21) ^ u64::from(rng.next_u32())) as f64 / 2f64.powi(53);
    lo + (hi - lo) * u
}

/// Runs kernel `k(decl)` whose `body` uses `size_t i` over `n` work-items: argument 0 is
/// the output (returned, `out_len` elements of T), the others buffers made from `inputs`.
fn run_kernel<T: Copy + Default>(
    env: &Env,
    decl: &str,
    body: &str,
    inputs: &[&[u8]],
    n: usize,
    out_len: usize,
) -> Vec<T> {
    let src = format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n__kernel void k({decl}) {{\n    \
         size_t i = get_global_id(0);\n    {body}\n}}\n"
    );
    let p = env.build(&src);
    let k = env.kernel(p, "k");
    let out = env.buffer(CL_MEM_WRITE_ONLY, out_len * std::mem::size_of::<T>(), None);
    set_arg(k, 0, &out);
    let mems: Vec<cl_mem> = inputs
        .iter()
        .map(|b| env.buffer(CL_MEM_READ_ONLY, b.len(), Some(b)))
        .collect();
    for (j, m) in mems.iter().enumerate() {
        set_arg(k, j as u32 + 1, m);
    }
    run(env, k, n);
    env.read(out, out_len)
}

/// Error of `got` against the exact `want` in ulps of double (the ulp of a subnormal is
/// 2^-1074); NaN wants NaN, infinities want themselves.
fn ulps(got: f64, want: f64) -> f64 {
    if want.is_nan() {
        return if got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if want.is_infinite() || got.is_infinite() || got.is_nan() {
        return if got == want { 0.0 } else { f64::INFINITY };
    }
    let a = want.abs();
    let e = if a == 0.0 {
        -1022
    } else {
        (a.log2().floor() as i32).max(-1022)
    };
    (got - want).abs() / 2f64.powi(e - 52)
}

#[test]
fn fp64_device_info() {
    let Some(env) = fp64_env() else { return };
    let d = env.device;
    let cfg: cl_device_fp_config = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_DOUBLE_FP_CONFIG, s, v, r)
    });
    let need = CL_FP_FMA | CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN | CL_FP_DENORM;
    assert_eq!(
        cfg & need as cl_device_fp_config,
        need as cl_device_fp_config
    );
    for q in [
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
    ] {
        let w: cl_uint = info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, q, s, v, r) });
        assert!(w >= 1, "vector width {w}");
    }
    // __opencl_c_fp64 is reported and defined for OpenCL C 3.0 programs.
    let p = env
        .try_build(
            "#ifndef __opencl_c_fp64\n#error no fp64\n#endif\n\
             __kernel void k(__global double *o) { o[0] = 1.0; }",
            "-cl-std=CL3.0",
        )
        .unwrap_or_else(|(e, log)| panic!("{e}: {log}"));
    unsafe { cl!(clReleaseProgram)(p) };
}

#[test]
fn fp64_arithmetic_is_correctly_rounded() {
    let Some(env) = fp64_env() else { return };
    let mut rng = Rng(0x5eed_0064);
    let n = 4096;
    let mut a: Vec<f64> = (0..n).map(|_| any_f64(&mut rng)).collect();
    let mut b: Vec<f64> = (0..n).map(|_| any_f64(&mut rng)).collect();
    // Operands of similar size (cancellation, subnormal sums and products).
    for k in 0..n / 4 {
        b[k] = -a[k] * (1.0 + in_range(&mut rng, -1e-12, 1e-12));
        a[n / 2 + k] = f64::from_bits(rng.next_u32().into()); // subnormal
    }
    let out6: Vec<f64> = run_kernel(
        &env,
        "__global double *o, __global const double *a, __global const double *b",
        "double x = a[i], y = b[i];\n    \
         o[6*i] = x + y; o[6*i+1] = x - y; o[6*i+2] = x * y; o[6*i+3] = x / y;\n    \
         o[6*i+4] = sqrt(fabs(x)); o[6*i+5] = fma(x, y, -(x * y));",
        &[bytes(&a), bytes(&b)],
        n,
        n * 6,
    );
    for k in 0..n {
        let (x, y) = (a[k], b[k]);
        let want = [
            x + y,
            x - y,
            x * y,
            x / y,
            x.abs().sqrt(),
            x.mul_add(y, -(x * y)),
        ];
        for (j, w) in want.iter().enumerate() {
            let g = out6[6 * k + j];
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "op {j} of {x:e}, {y:e}: {g:e} ({:#x}), want {w:e} ({:#x})",
                g.to_bits(),
                w.to_bits()
            );
        }
    }
}

#[test]
fn fp64_fma_rounds_once() {
    let Some(env) = fp64_env() else { return };
    let mut rng = Rng(0xf3a);
    let n = 1 << 16;
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    // A double of exponent e (normal) with random significand and sign.
    let with_exp = |rng: &mut Rng, e: i64| {
        let m =
            (u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32())) & 0x800f_ffff_ffff_ffff;
        f64::from_bits(m | ((e + 1023) as u64) << 52)
    };
    for k in 0..n {
        let x = any_f64(&mut rng);
        let y = match k % 8 {
            0 => any_f64(&mut rng),
            // A product near or below the subnormal range.
            4 | 5 => {
                let ex = ((x.to_bits() >> 52) & 0x7ff) as i64 - 1023;
                let e = -1022 - i64::from(rng.next_u32() % 64) - ex;
                if (-1022..=1023).contains(&e) {
                    with_exp(&mut rng, e)
                } else {
                    any_f64(&mut rng)
                }
            }
            // Few significant bits: exact products, ties.
            6 => f64::from_bits(any_f64(&mut rng).to_bits() & 0xfff0_0000_0000_0007),
            _ => in_range(&mut rng, -4.0, 4.0),
        };
        let z = match k % 8 {
            0 => any_f64(&mut rng),
            1 => -(x * y),
            2 => -(x * y) * (1.0 + in_range(&mut rng, -1e-15, 1e-15)),
            // Subnormal results: a subnormal or zero addend.
            4 => f64::from_bits(u64::from(rng.next_u32()) << (rng.next_u32() % 21)) * x.signum(),
            5 => 0.0,
            // An addend at the product's last bits (ties), either sign.
            6 | 7 => x * y * 2f64.powi(-53 - (rng.next_u32() % 4) as i32) * -y.signum(),
            _ => f64::from_bits(u64::from(rng.next_u32()) << 20) * -x.signum(),
        };
        a.push(x);
        b.push(y);
        c.push(z);
    }
    a.extend([
        1e308,
        2.0,
        f64::MIN_POSITIVE,
        0.0,
        -0.0,
        f64::INFINITY,
        3.0,
        1e300,
        1e-300,
    ]);
    b.extend([
        10.0,
        f64::MIN_POSITIVE,
        0.5,
        5.0,
        5.0,
        0.0,
        f64::NAN,
        1e10,
        1e-300,
    ]);
    c.extend([
        -1e308,
        -4.0 * 1e-308,
        1e-320,
        -0.0,
        0.0,
        1.0,
        1.0,
        f64::INFINITY,
        -0.0,
    ]);
    // Every combination of the edge values.
    let edge = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        5e-324,
        -5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        -f64::MAX,
        2f64.powi(-537),
        1.0 + f64::EPSILON,
        3.0,
        1.5 * f64::MIN_POSITIVE,
        2f64.powi(1023),
    ];
    for x in edge {
        for y in edge {
            for z in edge {
                a.push(x);
                b.push(y);
                c.push(z);
            }
        }
    }
    let total = a.len();
    let out: Vec<f64> = run_kernel(
        &env,
        "__global double *o, __global const double *a, __global const double *b, \
         __global const double *c",
        "o[i] = fma(a[i], b[i], c[i]);",
        &[bytes(&a), bytes(&b), bytes(&c)],
        total,
        total,
    );
    for k in 0..total {
        let w = a[k].mul_add(b[k], c[k]);
        let g = out[k];
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "fma({:e}, {:e}, {:e}) = {g:e} ({:#x}), want {w:e} ({:#x})",
            a[k],
            b[k],
            c[k],
            g.to_bits(),
            w.to_bits()
        );
    }
}

/// `x` rounded to float in `mode` (`rte`, `rtz`, `rtp`, `rtn`).
fn to_f32(x: f64, mode: &str) -> f32 {
    let f = x as f32;
    if x.is_nan() || f64::from(f) == x {
        return f;
    }
    let up = |f: f32| {
        if f == f32::INFINITY {
            f
        } else if f == 0.0 {
            f32::from_bits(1)
        } else if f > 0.0 {
            f32::from_bits(f.to_bits() + 1)
        } else {
            f32::from_bits(f.to_bits() - 1)
        }
    };
    let down = |f: f32| -up(-f);
    let above = f64::from(f) > x;
    match mode {
        "rtp" if !above => up(f),
        "rtn" if above => down(f),
        "rtz" if (x > 0.0) == above => {
            if x > 0.0 {
                down(f)
            } else {
                up(f)
            }
        }
        _ => f,
    }
}

#[test]
fn fp64_conversions_round_and_saturate() {
    let Some(env) = fp64_env() else { return };
    let mut rng = Rng(0xc0de);
    let n = 2048;
    let mut x: Vec<f64> = (0..n)
        .map(|k| match k % 3 {
            0 => in_range(&mut rng, -3e9, 3e9),
            1 => in_range(&mut rng, -300.0, 300.0),
            _ => any_f64(&mut rng),
        })
        .collect();
    x.extend([
        0.5,
        1.5,
        2.5,
        -0.5,
        -2.5,
        1e30,
        -1e30,
        f64::NAN,
        2147483647.5,
        -2147483648.5,
        // Float subnormal results (NVIDIA's driver flushes float subnormals in arithmetic).
        1.5e-39,
        -2.7e-42,
        1.0e-45,
        -3.0e-46,
        1.1754942e-38,
    ]);
    let total = x.len();
    let modes = ["rte", "rtz", "rtp", "rtn"];
    // Per item: 4 floats (rounding modes), 4 longs (rounding modes), int_sat, uchar_sat.
    let body = "double v = x[i];\n    \
        of[4*i] = convert_float_rte(v); of[4*i+1] = convert_float_rtz(v);\n    \
        of[4*i+2] = convert_float_rtp(v); of[4*i+3] = convert_float_rtn(v);\n    \
        ol[6*i] = convert_long_sat_rte(v); ol[6*i+1] = convert_long_sat_rtz(v);\n    \
        ol[6*i+2] = convert_long_sat_rtp(v); ol[6*i+3] = convert_long_sat_rtn(v);\n    \
        ol[6*i+4] = convert_int_sat(v); ol[6*i+5] = convert_uchar_sat(v);";
    let src = format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n__kernel void k(__global float *of, \
         __global long *ol, __global const double *x) {{\n    size_t i = get_global_id(0);\n    \
         {body}\n}}\n"
    );
    let p = env.build(&src);
    let k = env.kernel(p, "k");
    let of = env.buffer(CL_MEM_WRITE_ONLY, total * 16, None);
    let ol = env.buffer(CL_MEM_WRITE_ONLY, total * 48, None);
    let xin = env.buffer(CL_MEM_READ_ONLY, total * 8, Some(bytes(&x)));
    set_arg(k, 0, &of);
    set_arg(k, 1, &ol);
    set_arg(k, 2, &xin);
    run(&env, k, total);
    let gf: Vec<f32> = env.read(of, total * 4);
    let gl: Vec<i64> = env.read(ol, total * 6);
    let sat = |v: f64, lo: f64, hi: f64| -> i64 {
        if v.is_nan() {
            0
        } else {
            v.clamp(lo, hi) as i64
        }
    };
    for j in 0..total {
        let v = x[j];
        for (m, mode) in modes.iter().enumerate() {
            let w = to_f32(v, mode);
            let g = gf[4 * j + m];
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "convert_float_{mode}({v:e}) = {g:e}, want {w:e}"
            );
            let r = match *mode {
                "rte" => v.round_ties_even(),
                "rtz" => v.trunc(),
                "rtp" => v.ceil(),
                _ => v.floor(),
            };
            let w = if v.is_nan() { 0 } else { r as i64 };
            assert_eq!(gl[6 * j + m], w, "convert_long_sat_{mode}({v:e})");
        }
        assert_eq!(
            gl[6 * j + 4],
            sat(v.trunc(), -2147483648.0, 2147483647.0),
            "convert_int_sat({v:e})"
        );
        assert_eq!(
            gl[6 * j + 5],
            sat(v.trunc(), 0.0, 255.0),
            "convert_uchar_sat({v:e})"
        );
    }
    // Integers to double: exact below 2^53, rounded to nearest above.
    let ints: Vec<i64> = (0..1024)
        .map(|_| ((u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32())) as i64)
        .collect();
    let got: Vec<f64> = run_kernel(
        &env,
        "__global double *o, __global const long *a",
        "o[2*i] = convert_double(a[i]); o[2*i+1] = convert_double((ulong)a[i]);",
        &[bytes(&ints)],
        ints.len(),
        ints.len() * 2,
    );
    for (j, &v) in ints.iter().enumerate() {
        assert_eq!(got[2 * j], v as f64, "convert_double({v})");
        assert_eq!(
            got[2 * j + 1],
            v as u64 as f64,
            "convert_double({}ul)",
            v as u64
        );
    }
}

/// `(double)(float)x` rounds `x` to float and widens it back exactly, in scalars and
/// vectors. Lavapipe 25.0.7 folded the `OpFConvert` pair into `x` itself (so every directed
/// `convert_float_rtp(double)` that compares the round trip with its source was wrong too);
/// vkcl widens float to double from the bits (docs/devices.md).
#[test]
fn fp64_float_round_trip_rounds() {
    let Some(env) = fp64_env() else { return };
    let mut rng = Rng(0xf10a7);
    let mut x: Vec<f64> = (0..1024)
        .map(|k| match k % 2 {
            0 => in_range(&mut rng, -3e9, 3e9),
            _ => any_f64(&mut rng),
        })
        .collect();
    x.extend([
        6.500452744485092e8,
        0.1,
        -0.0,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f32::MAX as f64 * (1.0 + 1e-9),
        1.5e-39,
        -2.7e-42,
        1.0e-45,
        1.1754942e-38,
    ]);
    while x.len() % 4 != 0 {
        x.push(1.0 / 3.0);
    }
    let n = x.len();
    let denorm = single_fp_denorm();
    let check = |what: &str, got: &[f64]| {
        for (j, (&v, &g)) in x.iter().zip(got).enumerate() {
            let f = v as f32;
            let ok = |w: f32| g.to_bits() == (w as f64).to_bits() || (g.is_nan() && w.is_nan());
            assert!(
                ok(f) || (!denorm && ok(flushed(f))),
                "{what} #{j}: (double)(float){v:e} = {g:e}, want {:e}",
                f as f64
            );
        }
    };
    let got: Vec<f64> = run_kernel(
        &env,
        "__global double *o, __global const double *x",
        "o[i] = (double)(float)x[i];",
        &[bytes(&x)],
        n,
        n,
    );
    check("scalar", &got);
    let got: Vec<f64> = run_kernel(
        &env,
        "__global double *o, __global const double *x",
        "vstore4(convert_double4(convert_float4(vload4(i, x))), i, o);",
        &[bytes(&x)],
        n / 4,
        n,
    );
    check("double4", &got);
}

#[test]
fn fp64_vectors_and_scalar_arguments() {
    let Some(env) = fp64_env() else { return };
    let mut rng = Rng(0x7ec0);
    let n = 16 * 64;
    let a: Vec<f64> = (0..n).map(|_| in_range(&mut rng, -100.0, 100.0)).collect();
    for w in [2usize, 3, 4, 8, 16] {
        let src = format!(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
             __kernel void k(__global double *o, __global const double *a, double s) {{\n    \
             size_t i = get_global_id(0);\n    \
             double{w} v = vload{w}(i, a);\n    \
             vstore{w}(v * s + (double{w})(0.25), i, o);\n}}\n"
        );
        let p = env.build(&src);
        let k = env.kernel(p, "k");
        let items = n / w;
        let out = env.buffer(CL_MEM_WRITE_ONLY, items * w * 8, None);
        let ain = env.buffer(CL_MEM_READ_ONLY, n * 8, Some(bytes(&a)));
        let s = -1.75f64;
        set_arg(k, 0, &out);
        set_arg(k, 1, &ain);
        set_arg(k, 2, &s);
        run(&env, k, items);
        let got: Vec<f64> = env.read(out, items * w);
        for j in 0..items * w {
            // No contraction: the product is rounded before the sum.
            let want = a[j] * s + 0.25;
            assert_eq!(got[j].to_bits(), want.to_bits(), "double{w} element {j}");
        }
    }
}

/// One math function: OpenCL C expression of `a` and `b`, host reference, limit in ulps (the
/// OpenCL limit plus one for the host reference's own error), and input ranges.
struct Case {
    expr: &'static str,
    reference: fn(f64, f64) -> f64,
    limit: f64,
    a: (f64, f64),
    b: (f64, f64),
}

#[rustfmt::skip]
fn cases() -> Vec<Case> {
    vec![
        Case { expr: "sin(a)", reference: |a, _| a.sin(), limit: 5.0, a: (-1e6, 1e6), b: (0.0, 0.0) },
        Case { expr: "cos(a)", reference: |a, _| a.cos(), limit: 5.0, a: (-100.0, 100.0), b: (0.0, 0.0) },
        Case { expr: "tan(a)", reference: |a, _| a.tan(), limit: 6.0, a: (-10.0, 10.0), b: (0.0, 0.0) },
        Case { expr: "exp(a)", reference: |a, _| a.exp(), limit: 4.0, a: (-700.0, 700.0), b: (0.0, 0.0) },
        Case { expr: "log(a)", reference: |a, _| a.ln(), limit: 4.0, a: (1e-300, 1e300), b: (0.0, 0.0) },
        Case { expr: "pow(a, b)", reference: |a, b| a.powf(b), limit: 17.0, a: (0.0, 100.0), b: (-50.0, 50.0) },
        Case { expr: "atan2(a, b)", reference: |a, b| a.atan2(b), limit: 7.0, a: (-10.0, 10.0), b: (-10.0, 10.0) },
        Case { expr: "cbrt(a)", reference: |a, _| a.cbrt(), limit: 3.0, a: (-1e10, 1e10), b: (0.0, 0.0) },
        Case { expr: "erfc(a)", reference: |a, _| libm::erfc(a), limit: 17.0, a: (-5.0, 25.0), b: (0.0, 0.0) },
        Case { expr: "sinpi(a)", reference: |a, _| (a * std::f64::consts::PI).sin(), limit: 5.0, a: (-0.25, 0.25), b: (0.0, 0.0) },
        Case { expr: "hypot(a, b)", reference: |a, b| a.hypot(b), limit: 5.0, a: (-1e200, 1e200), b: (-1e200, 1e200) },
        Case { expr: "degrees(a)", reference: |a, _| a.to_degrees(), limit: 3.0, a: (-10.0, 10.0), b: (0.0, 0.0) },
    ]
}

#[test]
fn fp64_math_functions_within_the_double_limits() {
    let Some(env) = fp64_env() else { return };
    let mut rng = Rng(0x3a7);
    let n = 1024;
    let mut failures = Vec::new();
    for c in cases() {
        let a: Vec<f64> = (0..n).map(|_| in_range(&mut rng, c.a.0, c.a.1)).collect();
        let b: Vec<f64> = (0..n).map(|_| in_range(&mut rng, c.b.0, c.b.1)).collect();
        let body = format!("double a = x[i], b = y[i];\n    o[i] = {};", c.expr);
        let got: Vec<f64> = run_kernel(
            &env,
            "__global double *o, __global const double *x, __global const double *y",
            &body,
            &[bytes(&a), bytes(&b)],
            n,
            n,
        );
        let worst = (0..n)
            .map(|k| (ulps(got[k], (c.reference)(a[k], b[k])), k))
            .fold((0.0, 0), |m, v| if v.0 > m.0 { v } else { m });
        if worst.0 > c.limit {
            let k = worst.1;
            failures.push(format!(
                "{}: {} ulp at a = {:e}, b = {:e}: {:e}, want {:e}",
                c.expr,
                worst.0,
                a[k],
                b[k],
                got[k],
                (c.reference)(a[k], b[k])
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs this test binary's test `name` in a child process with `VKCL_FP64_PRINTF_CHILD`
/// set and returns its stdout (OpenCL C printf writes to the process's stdout).
fn child_stdout(name: &str) -> String {
    child_stdout_with(name, None)
}

/// [`child_stdout`] with `VKCL_FP64` set to `fp64` in the child (None: inherited).
fn child_stdout_with(name: &str, fp64: Option<&str>) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("VKCL_FP64_PRINTF_CHILD", "1");
    if let Some(v) = fp64 {
        cmd.env("VKCL_FP64", v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "child failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The C library's formatting of `v` with `spec`.
fn c_fmt(spec: &str, v: f64) -> String {
    let f = CString::new(spec).unwrap();
    let mut buf = vec![0u8; 1024];
    // SAFETY: `buf` holds 1024 bytes; the spec takes one double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr() as *mut libc::c_char, 1024, f.as_ptr(), v) };
    buf.truncate(n as usize);
    String::from_utf8(buf).unwrap()
}

#[test]
fn fp64_printf_of_doubles() {
    let vals = [
        0.1,
        -1.0 / 3.0,
        1e300,
        2.5e-310,
        12345.678901234567,
        f64::INFINITY,
    ];
    if std::env::var_os("VKCL_FP64_PRINTF_CHILD").is_some() {
        let Some(env) = fp64_env() else {
            print!("<skip>");
            return;
        };
        let p = env.build(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
             __kernel void k(__global const double *v, uint n) {\n\
                 for (uint i = 0; i < n; i++) {\n\
                     double x = v[i];\n\
                     printf(\"<%f|%e|%g|%a|%.17g>\\n\", x, x, x, x, x);\n\
                 }\n\
             }",
        );
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_ONLY, vals.len() * 8, Some(bytes(&vals)));
        set_arg(k, 0, &m);
        set_arg(k, 1, &(vals.len() as u32));
        run(&env, k, 1);
        // SAFETY: flushes the C library's stdout, where vkcl prints.
        unsafe { libc::fflush(null_mut::<libc::FILE>()) };
        return;
    }
    let out = child_stdout("fp64_printf_of_doubles");
    if out.contains("<skip>") {
        return;
    }
    // Lines from the first '<' (libtest's own "test ... " may precede the first one).
    let got: Vec<&str> = out
        .lines()
        .filter_map(|l| l.find('<').map(|p| &l[p..]))
        .collect();
    let want: Vec<String> = vals
        .iter()
        .map(|&x| {
            let parts: Vec<String> = ["%f", "%e", "%g", "%a", "%.17g"]
                .iter()
                .map(|s| c_fmt(s, x))
                .collect();
            format!("<{}>", parts.join("|"))
        })
        .collect();
    assert_eq!(got, want);
}

/// `VKCL_FP64=0` (in a child process: the library reads its settings once) takes `double` away:
/// no `cl_khr_fp64` or `__opencl_c_fp64`, `CL_DEVICE_DOUBLE_FP_CONFIG` 0, preferred and
/// native double widths 0, and a kernel using `double` fails to build naming the extension.
#[test]
fn fp64_off_with_vkcl_fp64_0() {
    if std::env::var_os("VKCL_FP64_PRINTF_CHILD").is_some() {
        let env = Env::new();
        let d = env.device;
        let cfg: cl_device_fp_config = info_scalar(|s, v, r| unsafe {
            cl!(clGetDeviceInfo)(d, CL_DEVICE_DOUBLE_FP_CONFIG, s, v, r)
        });
        let widths: Vec<cl_uint> = [
            CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
            CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
        ]
        .iter()
        .map(|&q| info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, q, s, v, r) }))
        .collect();
        let built = env.try_build(
            "__kernel void k(__global double *o) { o[0] = 1.0; }",
            "-cl-std=CL3.0",
        );
        let log = match built {
            Ok(_) => "built".to_string(),
            Err((_, log)) => log,
        };
        print!(
            "<ext={} cfg={cfg} widths={widths:?} fails={}>",
            env.has_extension("cl_khr_fp64"),
            log.contains("cl_khr_fp64") || log.contains("__opencl_c_fp64")
        );
        // SAFETY: flushes the C library's stdout.
        unsafe { libc::fflush(null_mut::<libc::FILE>()) };
        return;
    }
    let out = child_stdout_with("fp64_off_with_vkcl_fp64_0", Some("0"));
    assert!(
        out.contains("<ext=false cfg=0 widths=[0, 0] fails=true>"),
        "{out}"
    );
}

/// The vector variants of the double math built-ins (loops over the scalar function in the math
/// library) give each element the scalar function's result, bit for bit, with the second
/// results through global, local and private pointers (`sincos`, `remquo`).
#[test]
fn fp64_vector_math_matches_scalar() {
    let Some(env) = fp64_env() else { return };
    let mut rng = Rng(0x5ec);
    let items = 4;
    let x: Vec<f64> = (0..items * 16)
        .map(|_| in_range(&mut rng, -20.0, 20.0))
        .collect();
    let y: Vec<f64> = (0..items * 16)
        .map(|_| in_range(&mut rng, -6.0, 6.0))
        .collect();
    let per = 10 * 16;
    let out: Vec<f64> = run_kernel(
        &env,
        "__global double *o, __global const double *x, __global const double *y",
        "__global double *v = o + i * 2 * 160, *s = v + 160;\n    \
         double16 a = vload16(i, x), b = vload16(i, y);\n    \
         vstore16(cos(a), 0, v);\n    \
         vstore16(pown(a, convert_int16(b)), 1, v);\n    \
         vstore16(sincos(a, (__global double16 *)(v + 48)), 2, v);\n    \
         __local int16 lq[64];\n    \
         vstore16(remquo(a, b, &lq[get_local_id(0)]), 4, v);\n    \
         vstore16(convert_double16(lq[get_local_id(0)]), 5, v);\n    \
         vstore16(fma(a, b, a), 6, v);\n    \
         vstore16((double16)(0.0), 7, v);\n    \
         vstore16((double16)(0.0), 8, v);\n    \
         vstore16((double16)(0.0), 9, v);\n    \
         vstore3(atan2(a.s012, b.s012), 0, v + 112);\n    \
         double3 c3;\n    \
         vstore3(sincos(a.s012, &c3), 0, v + 128);\n    \
         vstore3(c3, 0, v + 144);\n    \
         #pragma nounroll\n    \
         for (int j = 0; j < 16; j++) {\n        \
             double aj = x[i * 16 + j], bj = y[i * 16 + j];\n        \
             int q;\n        \
             double c;\n        \
             s[j] = cos(aj);\n        \
             s[16 + j] = pown(aj, (int)bj);\n        \
             s[32 + j] = sincos(aj, &c);\n        \
             s[48 + j] = c;\n        \
             s[64 + j] = remquo(aj, bj, &q);\n        \
             s[80 + j] = q;\n        \
             s[96 + j] = fma(aj, bj, aj);\n        \
             s[112 + j] = j < 3 ? atan2(aj, bj) : 0.0;\n        \
             s[128 + j] = j < 3 ? s[32 + j] : 0.0;\n        \
             s[144 + j] = j < 3 ? c : 0.0;\n    \
         }",
        &[bytes(&x), bytes(&y)],
        items,
        items * 2 * per,
    );
    let names = [
        "cos",
        "pown",
        "sincos",
        "sincos cos (global)",
        "remquo",
        "remquo quo (local)",
        "fma",
        "atan2 (double3)",
        "sincos (double3)",
        "sincos cos (double3, private)",
    ];
    for it in 0..items {
        for (f, name) in names.iter().enumerate() {
            for j in 0..16 {
                let v = out[it * 2 * per + f * 16 + j];
                let s = out[it * 2 * per + per + f * 16 + j];
                assert!(
                    v.to_bits() == s.to_bits() || (v.is_nan() && s.is_nan()),
                    "{name} element {j} of item {it} (a = {:e}, b = {:e}): vector {v:e}, \
                     scalar {s:e}",
                    x[it * 16 + j],
                    y[it * 16 + j]
                );
            }
        }
    }
}

/// The odd double functions keep the sign of zero (C99 Annex F, which OpenCL C 3.0 section
/// 7.5.1 "Additional Requirements Beyond C99 TC2" follows): f(-0) is -0 and f(+0) is +0.
/// CTS bruteforce `math_edge_cases` checks some of these; libclc's double atanpi returned +0
/// for -0.
#[test]
fn fp64_odd_functions_keep_the_sign_of_zero() {
    let Some(env) = fp64_env() else { return };
    let names = [
        "asin", "asinh", "asinpi", "atan", "atanh", "atanpi", "cbrt", "erf", "expm1", "log1p",
        "sin", "sinh", "sinpi", "tan", "tanh", "tanpi", "round", "rint", "trunc", "ceil", "floor",
        "sqrt",
    ];
    let body: String = names
        .iter()
        .enumerate()
        .map(|(j, f)| format!("o[{}*2 + i] = {f}(x[i]);\n    ", j))
        .collect();
    let x = [0.0f64, -0.0];
    let got: Vec<f64> = run_kernel(
        &env,
        "__global double *o, __global const double *x",
        &body,
        &[bytes(&x)],
        2,
        names.len() * 2,
    );
    let wrong = signed_zero_errors(&names, &x, &got, f64::to_bits);
    assert!(wrong.is_empty(), "wrong signed zeros: {}", wrong.join(", "));
}
