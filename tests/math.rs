//! Math built-ins at OpenCL precision: device results against references computed on the host
//! in double precision (Rust's std and the `libm` crate), checked in ulps of the float result
//! against the full-profile limits of the OpenCL C specification (3.0, section 7.4, "ULP
//! values for single precision built-in math functions").
mod common;
use common::*;

/// Error of `got` against the exact `want`, in ulps of the float nearest `want` (the ulp of a
/// subnormal is 2^-149). NaN wants NaN and an infinite or overflowing `want` wants that
/// infinity: both give 0 when met and infinity otherwise.
fn ulps(got: f32, want: f64) -> f64 {
    if want.is_nan() {
        return if got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    let wf = want as f32;
    if wf.is_infinite() {
        // Overflowing results may be the largest float or infinity (within one ulp).
        if got == wf || (got.abs() == f32::MAX && got.signum() == wf.signum()) {
            return 0.0;
        }
        return f64::INFINITY;
    }
    if got.is_nan() || got.is_infinite() {
        return f64::INFINITY;
    }
    let a = want.abs();
    let e = if a == 0.0 {
        -126
    } else {
        (a.log2().floor() as i32).max(-126)
    };
    let ulp = 2f64.powi(e - 23);
    (got as f64 - want).abs() / ulp
}

/// One function under test: its OpenCL C expression of `a` and `b` (floats), the host
/// reference and the limit in ulps.
struct Case {
    name: &'static str,
    expr: &'static str,
    reference: fn(f32, f32) -> f64,
    limit: f64,
    /// Input range of `a` (uniform), and of `b`.
    a: (f32, f32),
    b: (f32, f32),
}

/// Enqueues `k` over `n` work-items and waits.
fn run1(env: &Env, k: cl_kernel, n: usize) {
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            std::ptr::null(),
            &n,
            std::ptr::null(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    });
    env.finish();
}

fn f(x: f32) -> f64 {
    x as f64
}

#[rustfmt::skip]
fn cases() -> Vec<Case> {
    vec![
        Case { name: "sin", expr: "sin(a)", reference: |a, _| f(a).sin(), limit: 4.0, a: (-100.0, 100.0), b: (0.0, 0.0) },
        Case { name: "sin_large", expr: "sin(a * 65536.0f)", reference: |a, _| f(a * 65536.0).sin(), limit: 4.0, a: (-1.0e6, 1.0e6), b: (0.0, 0.0) },
        Case { name: "cos", expr: "cos(a)", reference: |a, _| f(a).cos(), limit: 4.0, a: (-100.0, 100.0), b: (0.0, 0.0) },
        Case { name: "tan", expr: "tan(a)", reference: |a, _| f(a).tan(), limit: 5.0, a: (-10.0, 10.0), b: (0.0, 0.0) },
        Case { name: "asin", expr: "asin(a)", reference: |a, _| f(a).asin(), limit: 4.0, a: (-1.0, 1.0), b: (0.0, 0.0) },
        Case { name: "acos", expr: "acos(a)", reference: |a, _| f(a).acos(), limit: 4.0, a: (-1.0, 1.0), b: (0.0, 0.0) },
        Case { name: "atan", expr: "atan(a)", reference: |a, _| f(a).atan(), limit: 5.0, a: (-50.0, 50.0), b: (0.0, 0.0) },
        Case { name: "atan2", expr: "atan2(a, b)", reference: |a, b| f(a).atan2(f(b)), limit: 6.0, a: (-5.0, 5.0), b: (-5.0, 5.0) },
        Case { name: "sinh", expr: "sinh(a)", reference: |a, _| f(a).sinh(), limit: 4.0, a: (-20.0, 20.0), b: (0.0, 0.0) },
        Case { name: "cosh", expr: "cosh(a)", reference: |a, _| f(a).cosh(), limit: 4.0, a: (-20.0, 20.0), b: (0.0, 0.0) },
        Case { name: "tanh", expr: "tanh(a)", reference: |a, _| f(a).tanh(), limit: 5.0, a: (-5.0, 5.0), b: (0.0, 0.0) },
        Case { name: "asinh", expr: "asinh(a)", reference: |a, _| f(a).asinh(), limit: 4.0, a: (-100.0, 100.0), b: (0.0, 0.0) },
        Case { name: "acosh", expr: "acosh(a)", reference: |a, _| f(a).acosh(), limit: 4.0, a: (1.0, 100.0), b: (0.0, 0.0) },
        Case { name: "atanh", expr: "atanh(a)", reference: |a, _| f(a).atanh(), limit: 5.0, a: (-0.99, 0.99), b: (0.0, 0.0) },
        Case { name: "exp", expr: "exp(a)", reference: |a, _| f(a).exp(), limit: 3.0, a: (-80.0, 80.0), b: (0.0, 0.0) },
        Case { name: "exp2", expr: "exp2(a)", reference: |a, _| f(a).exp2(), limit: 3.0, a: (-120.0, 120.0), b: (0.0, 0.0) },
        Case { name: "exp10", expr: "exp10(a)", reference: |a, _| 10f64.powf(f(a)), limit: 3.0, a: (-35.0, 35.0), b: (0.0, 0.0) },
        Case { name: "expm1", expr: "expm1(a)", reference: |a, _| f(a).exp_m1(), limit: 3.0, a: (-2.0, 2.0), b: (0.0, 0.0) },
        Case { name: "log", expr: "log(a)", reference: |a, _| f(a).ln(), limit: 3.0, a: (0.5, 2.0), b: (0.0, 0.0) },
        Case { name: "log2", expr: "log2(a)", reference: |a, _| f(a).log2(), limit: 3.0, a: (0.5, 2.0), b: (0.0, 0.0) },
        Case { name: "log10", expr: "log10(a)", reference: |a, _| f(a).log10(), limit: 3.0, a: (0.5, 2.0), b: (0.0, 0.0) },
        Case { name: "log1p", expr: "log1p(a)", reference: |a, _| f(a).ln_1p(), limit: 2.0, a: (-0.5, 1.0), b: (0.0, 0.0) },
        Case { name: "pow", expr: "pow(a, b)", reference: |a, b| f(a).powf(f(b)), limit: 16.0, a: (0.0, 10.0), b: (-20.0, 20.0) },
        Case { name: "powr", expr: "powr(a, b)", reference: |a, b| f(a).powf(f(b)), limit: 16.0, a: (0.0, 10.0), b: (-20.0, 20.0) },
        Case { name: "cbrt", expr: "cbrt(a)", reference: |a, _| f(a).cbrt(), limit: 2.0, a: (-1000.0, 1000.0), b: (0.0, 0.0) },
        Case { name: "sinpi", expr: "sinpi(a)", reference: |a, _| libm::sin(std::f64::consts::PI * f(a)), limit: 4.0, a: (-4.0, 4.0), b: (0.0, 0.0) },
        Case { name: "erf", expr: "erf(a)", reference: |a, _| libm::erf(f(a)), limit: 16.0, a: (-4.0, 4.0), b: (0.0, 0.0) },
        Case { name: "erfc", expr: "erfc(a)", reference: |a, _| libm::erfc(f(a)), limit: 16.0, a: (-4.0, 9.0), b: (0.0, 0.0) },
        Case { name: "erfc_near_8", expr: "erfc(a)", reference: |a, _| libm::erfc(f(a)), limit: 16.0, a: (7.9, 8.0), b: (0.0, 0.0) },
        Case { name: "erfc_near_4", expr: "erfc(a)", reference: |a, _| libm::erfc(f(a)), limit: 16.0, a: (3.9, 4.0), b: (0.0, 0.0) },
        Case { name: "tgamma", expr: "tgamma(a)", reference: |a, _| libm::tgamma(f(a)), limit: 16.0, a: (0.1, 35.0), b: (0.0, 0.0) },
        Case { name: "tgamma_negative", expr: "tgamma(a)", reference: |a, _| libm::tgamma(f(a)), limit: 16.0, a: (-30.0, -0.01), b: (0.0, 0.0) },
        Case { name: "lgamma", expr: "lgamma(a)", reference: |a, _| libm::lgamma(f(a)), limit: 16.0, a: (0.1, 1.0e4), b: (0.0, 0.0) },
        Case { name: "tanpi", expr: "tanpi(a)", reference: |a, _| libm::tan(std::f64::consts::PI * f(a)), limit: 6.0, a: (-0.45, 0.45), b: (0.0, 0.0) },
        Case { name: "cospi", expr: "cospi(a)", reference: |a, _| libm::cos(std::f64::consts::PI * f(a)), limit: 4.0, a: (-0.45, 0.45), b: (0.0, 0.0) },
        Case { name: "sin_float4", expr: "sin((float4)(a, a * 2.0f, -a, a * 0.5f)).s2", reference: |a, _| -f(a).sin(), limit: 4.0, a: (-1000.0, 1000.0), b: (0.0, 0.0) },
        Case { name: "fmod", expr: "fmod(a, b)", reference: |a, b| f(a) % f(b), limit: 0.0, a: (-3.0e7, 3.0e7), b: (0.001, 3.0) },
        Case { name: "remainder", expr: "remainder(a, b)", reference: |a, b| libm::remainder(f(a), f(b)), limit: 0.0, a: (-1.0e6, 1.0e6), b: (0.01, 3.0) },
        Case { name: "fma", expr: "fma(a, b, a * 0.75f)", reference: |a, b| libm::fmaf(a, b, a * 0.75) as f64, limit: 0.0, a: (-1.0e3, 1.0e3), b: (-1.0, 1.0) },
    ]
}

/// Each case on 256 random inputs in one program: `o[i * N + k] = case k (a, b)`.
#[test]
fn math_builtins_within_opencl_ulp_limits() {
    let cases = cases();
    let n_cases = cases.len();
    let mut body = String::new();
    for (k, c) in cases.iter().enumerate() {
        body.push_str(&format!(
            "    {{ float a = ia[i * {n_cases} + {k}], b = ib[i * {n_cases} + {k}]; o[i * {n_cases} + {k}] = {}; }}\n",
            c.expr
        ));
    }
    let src = format!(
        "__kernel void m(__global const float *ia, __global const float *ib, __global float *o) {{\n\
         size_t i = get_global_id(0);\n{body}}}\n"
    );
    let env = Env::new();
    let n = 256;
    let mut rng = Rng(7);
    let mut ia = vec![0f32; n * n_cases];
    let mut ib = vec![0f32; n * n_cases];
    for i in 0..n {
        for (k, c) in cases.iter().enumerate() {
            ia[i * n_cases + k] = c.a.0 + rng.next_f32() * (c.a.1 - c.a.0);
            ib[i * n_cases + k] = c.b.0 + rng.next_f32() * (c.b.1 - c.b.0);
        }
    }
    let ma = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        ia.len() * 4,
        Some(bytes(&ia)),
    );
    let mb = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        ib.len() * 4,
        Some(bytes(&ib)),
    );
    let mo = env.buffer(CL_MEM_READ_WRITE, ia.len() * 4, None);
    let k = env.kernel(env.build(&src), "m");
    set_arg(k, 0, &ma);
    set_arg(k, 1, &mb);
    set_arg(k, 2, &mo);
    run1(&env, k, n);
    let out: Vec<f32> = env.read(mo, n * n_cases);
    let mut failures = Vec::new();
    for (k, c) in cases.iter().enumerate() {
        let mut worst = (0.0f64, 0f32, 0f32, 0f32, 0f64);
        for i in 0..n {
            let (a, b) = (ia[i * n_cases + k], ib[i * n_cases + k]);
            let got = out[i * n_cases + k];
            let want = (c.reference)(a, b);
            let e = ulps(got, want);
            if e > worst.0 || (e.is_nan() && !worst.0.is_nan()) {
                worst = (e, a, b, got, want);
            }
        }
        if !(worst.0 <= c.limit) {
            failures.push(format!(
                "{}: {} ulp (limit {}) at a = {:e}, b = {:e}: got {:e}, want {:e}",
                c.name, worst.0, c.limit, worst.1, worst.2, worst.3, worst.4
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "over the limit:\n{}",
        failures.join("\n")
    );
}

/// Special values the OpenCL C specification fixes (section 7.5.1 and the function
/// descriptions): signed zeros of sinpi, cospi and tanpi at integers and half-integers, fma
/// with an overflowing product plus infinity, tgamma's poles and overflows, erf at infinity.
#[test]
fn math_special_values() {
    // (expression of x, x, expected bits)
    let inf = f32::INFINITY;
    let cases: &[(&str, f32, f32)] = &[
        ("sinpi(x)", 1.0, 0.0),
        ("sinpi(x)", -1.0, -0.0),
        ("sinpi(x)", -0.0, -0.0),
        ("cospi(x)", 0.5, 0.0),
        ("cospi(x)", -0.5, 0.0),
        ("cospi(x)", 2.5, 0.0),
        ("tanpi(x)", 1.0, -0.0),
        ("tanpi(x)", -1.0, 0.0),
        ("tanpi(x)", 2.0, 0.0),
        ("tanpi(x)", 3.0, -0.0),
        ("tanpi(x)", -0.5, -inf),
        ("tanpi(x)", 0.5, inf),
        ("fma(x, 2.0f, -INFINITY)", f32::MAX, -inf),
        (
            "fma(x, x, -x * x)",
            1.0 + f32::EPSILON,
            f32::EPSILON * f32::EPSILON,
        ),
        ("tgamma(x)", 0.0, inf),
        ("tgamma(x)", -0.0, -inf),
        ("tgamma(x)", 40.0, inf),
        ("tgamma(x)", -512.03, -0.0),
        ("tgamma(x)", 5.0, 24.0),
        ("erf(x)", inf, 1.0),
        ("erfc(x)", -inf, 2.0),
        ("exp(x)", -inf, 0.0),
        ("log(x)", 0.0, -inf),
    ];
    let mut body = String::new();
    for (k, (e, _, _)) in cases.iter().enumerate() {
        body.push_str(&format!("    {{ float x = in[{k}]; o[{k}] = {e}; }}\n"));
    }
    let src = format!(
        "__kernel void s(__global const float *in, __global float *o) {{\n\
         if (get_global_id(0) != 0) return;\n{body}}}\n"
    );
    let env = Env::new();
    let xs: Vec<f32> = cases.iter().map(|c| c.1).collect();
    let mi = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        xs.len() * 4,
        Some(bytes(&xs)),
    );
    let mo = env.buffer(CL_MEM_READ_WRITE, xs.len() * 4, None);
    let k = env.kernel(env.build(&src), "s");
    set_arg(k, 0, &mi);
    set_arg(k, 1, &mo);
    run1(&env, k, 1);
    let out: Vec<f32> = env.read(mo, xs.len());
    let mut bad = Vec::new();
    for ((e, x, want), got) in cases.iter().zip(&out) {
        if got.to_bits() != want.to_bits() {
            bad.push(format!("{} at x = {x:e}: got {got:e}, want {want:e}", e));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Shift-or idioms that LLVM turns into funnel shifts (`llvm.fshl`/`llvm.fshr`, which
/// llvm-spirv writes as helper functions that vkcl expands): constant and variable amounts,
/// 32 and 64 bits, against the host's.
#[test]
fn funnel_shift_idioms() {
    const SRC: &str = r#"
__kernel void f(__global const uint *a, __global const uint *b, __global const ulong *c,
                __global uint *o, __global ulong *o64) {
    size_t i = get_global_id(0);
    uint x = a[i], y = b[i];
    uint s = y & 31;
    o[i * 4 + 0] = (x << 2) | (y >> 30);
    o[i * 4 + 1] = (x >> 7) | (y << 25);
    o[i * 4 + 2] = s ? (x << s) | (y >> (32 - s)) : x;
    o[i * 4 + 3] = (x << 9) | (x >> 23);
    ulong u = c[i];
    o64[i * 2 + 0] = (u << 13) | ((ulong)x >> 19);
    o64[i * 2 + 1] = (u >> 40) | ((ulong)y << 24);
}
"#;
    let env = Env::new();
    let n = 64;
    let mut rng = Rng(99);
    let a: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let b: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let c: Vec<u64> = (0..n)
        .map(|_| (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32()))
        .collect();
    let ma = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        n * 4,
        Some(bytes(&a)),
    );
    let mb = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        n * 4,
        Some(bytes(&b)),
    );
    let mc = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        n * 8,
        Some(bytes(&c)),
    );
    let mo = env.buffer(CL_MEM_READ_WRITE, n * 16, None);
    let mo64 = env.buffer(CL_MEM_READ_WRITE, n * 16, None);
    let k = env.kernel(env.build(SRC), "f");
    set_arg(k, 0, &ma);
    set_arg(k, 1, &mb);
    set_arg(k, 2, &mc);
    set_arg(k, 3, &mo);
    set_arg(k, 4, &mo64);
    run1(&env, k, n);
    let o: Vec<u32> = env.read(mo, n * 4);
    let o64: Vec<u64> = env.read(mo64, n * 2);
    for i in 0..n {
        let (x, y, u) = (a[i], b[i], c[i]);
        let s = y & 31;
        let want = [
            (x << 2) | (y >> 30),
            (x >> 7) | (y << 25),
            if s != 0 {
                (x << s) | (y >> (32 - s))
            } else {
                x
            },
            x.rotate_left(9),
        ];
        assert_eq!(&o[i * 4..i * 4 + 4], &want, "32-bit, item {i}");
        let want64 = [
            (u << 13) | (u64::from(x) >> 19),
            (u >> 40) | (u64::from(y) << 24),
        ];
        assert_eq!(&o64[i * 2..i * 2 + 2], &want64, "64-bit, item {i}");
    }
}

/// fract, modf and frexp on `float3` through a private `float3`/`int3` (clang accesses those
/// as 4-component vectors: the fourth is padding), including NaN, infinities, signed zero and
/// a subnormal, against the host's.
#[test]
fn fract_modf_frexp_float3() {
    const SRC: &str = r#"
__kernel void f(__global const float *in, __global float *o, __global int *e) {
    size_t i = get_global_id(0);
    float3 x = vload3(i, in);
    float3 ip = (float3)(0.0f), mp = (float3)(0.0f);
    int3 ex = (int3)(7);
    float3 fr = fract(x, &ip);
    float3 md = modf(x, &mp);
    float3 m = frexp(x, &ex);
    vstore3(fr, i * 5 + 0, o);
    vstore3(ip, i * 5 + 1, o);
    vstore3(md, i * 5 + 2, o);
    vstore3(mp, i * 5 + 3, o);
    vstore3(m, i * 5 + 4, o);
    vstore3(ex, i, e);
}
"#;
    let xs: Vec<f32> = vec![
        1.25,
        -1.25,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.0e-40,
        -7.5e5,
        1.0e30,
        -0.1,
        5.0,
    ];
    let n = xs.len() / 3;
    let env = Env::new();
    let mi = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        xs.len() * 4,
        Some(bytes(&xs)),
    );
    let mo = env.buffer(CL_MEM_READ_WRITE, xs.len() * 5 * 4, None);
    let me = env.buffer(CL_MEM_READ_WRITE, xs.len() * 4, None);
    let k = env.kernel(env.build(SRC), "f");
    set_arg(k, 0, &mi);
    set_arg(k, 1, &mo);
    set_arg(k, 2, &me);
    run1(&env, k, n);
    let o: Vec<f32> = env.read(mo, xs.len() * 5);
    let e: Vec<i32> = env.read(me, xs.len());
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    // Without CL_FP_DENORM a subnormal input may be read as ±0 (NVIDIA's Vulkan fp32), by
    // each built-in on its own: fract(3e-40) may be 3e-40 (x itself, exact) while modf
    // flushed it. Each result is checked against x, then against the flushed x.
    let denorm = single_fp_denorm();
    for (j, &x0) in xs.iter().enumerate() {
        let (i, c) = (j / 3, j % 3);
        let at = |slot: usize| o[i * 15 + slot * 3 + c];
        let candidates = if !denorm && x0.is_subnormal() {
            vec![x0, flushed(x0)]
        } else {
            vec![x0]
        };
        let fract_ok = |x: f32| {
            let fl = x.floor();
            let want_fract = if x.is_nan() || x == 0.0 {
                x
            } else if x.is_infinite() {
                0f32.copysign(x)
            } else {
                (x - fl).min(1.0 - f32::EPSILON / 2.0)
            };
            same(at(0), want_fract) && same(at(1), fl)
        };
        assert!(
            candidates.iter().any(|&x| fract_ok(x)),
            "fract({x0:e}) = {:e}, floor {:e}",
            at(0),
            at(1)
        );
        // modf's two results together: both from x or both from the flushed x.
        let x = if candidates.len() > 1 && at(3) == 0.0 && at(2) == 0.0 {
            flushed(x0)
        } else {
            x0
        };
        let t = x.trunc();
        // C's modf: the fraction has the sign of x (-0 for negative integers).
        let want_modf = if x.is_infinite() {
            0f32.copysign(x)
        } else {
            (x - t).copysign(x)
        };
        assert!(same(at(2), want_modf), "modf({x:e}) = {:e}", at(2));
        assert!(same(at(3), t), "modf({x:e}) integral = {:e}", at(3));
        let frexp_ok = |x: f32| {
            let (want_m, want_e) = if x == 0.0 || !x.is_finite() {
                (x, 0)
            } else {
                let e = (x.abs() as f64).log2().floor() as i32 + 1;
                ((x as f64 / 2f64.powi(e)) as f32, e)
            };
            same(at(4), want_m) && e[j] == want_e
        };
        assert!(
            candidates.iter().any(|&x| frexp_ok(x)),
            "frexp({x0:e}) = {:e}, exponent {}",
            at(4),
            e[j]
        );
    }
}
