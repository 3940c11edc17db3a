//! Special values and range edges of the built-ins (classification, overflow-free geometry,
//! rounding, inverse trig, subnormal exponents, saturation, NaN operands), against the host.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::*;

// ---------------------------------------------------------------------------------------------
// Relational built-ins whose SPIR-V instructions are Kernel-only (OpIsFinite, OpIsNormal,
// OpSignBitSet, OpOrdered, OpUnordered, OpLessOrGreater), scalar and vector.

const CLASSIFY: &str = r#"
__kernel void classify(__global const float *x, __global const float *y, __global int *out) {
    size_t i = get_global_id(0);
    float a = x[i], b = y[i];
    __global int *o = out + i * 12;
    o[0] = isfinite(a);
    o[1] = isnormal(a);
    o[2] = signbit(a);
    o[3] = isordered(a, b);
    o[4] = isunordered(a, b);
    o[5] = islessgreater(a, b);
    float4 va = (float4)(a, b, -a, a * 0.5f), vb = (float4)(b, a, b, -b);
    int4 r1 = isnormal(va) + 2 * signbit(va) + 4 * isfinite(va);
    int4 r2 = isordered(va, vb) + 2 * isunordered(va, vb) + 4 * islessgreater(va, vb);
    o[6] = r1.x; o[7] = r1.y; o[8] = r1.w;
    o[9] = r2.x; o[10] = r2.z; o[11] = r2.w;
}
"#;

#[test]
fn relational_classification_builtins() {
    let env = Env::new();
    let k = env.kern(CLASSIFY, "classify");
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -2.5,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::MIN_POSITIVE / 4.0, // subnormal
        -1.0e-40,                // subnormal
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        3.0e38,
        1.0e-30,
    ];
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for &a in &specials {
        for &b in &specials {
            xs.push(a);
            ys.push(b);
        }
    }
    let n = xs.len();
    let (bx, by, bo) = (env.buf(&xs), env.buf(&ys), env.zeros::<i32>(n * 12));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, by);
    arg_mem(k, 2, bo);
    env.run(k, &[n], None, None);
    let got: Vec<i32> = env.read(bo, n * 12);
    // Scalars give 1/0, vector components -1/0.
    let s = |c: bool| c as i32;
    let v = |c: bool| -(c as i32);
    let normal = |x: f32| x.is_normal();
    let ordered = |a: f32, b: f32| !a.is_nan() && !b.is_nan();
    let lg = |a: f32, b: f32| {
        matches!(
            a.partial_cmp(&b),
            Some(std::cmp::Ordering::Less | std::cmp::Ordering::Greater)
        )
    };
    // Without CL_FP_DENORM the device may flush subnormal inputs and results to zero.
    let denorm = single_fp_denorm();
    let want_of = |a: f32, b: f32, flush: bool| {
        let f = |x: f32| if flush { flushed(x) } else { x };
        let (a, b) = (f(a), f(b));
        let half = f(a * 0.5);
        let r1 = |x: f32| v(normal(x)) + 2 * v(x.is_sign_negative()) + 4 * v(x.is_finite());
        let r2 = |x: f32, y: f32| v(ordered(x, y)) + 2 * v(!ordered(x, y)) + 4 * v(lg(x, y));
        [
            s(a.is_finite()),
            s(normal(a)),
            s(a.is_sign_negative()),
            s(ordered(a, b)),
            s(!ordered(a, b)),
            s(lg(a, b)),
            r1(a),
            r1(b),
            r1(half),
            r2(a, b),
            r2(-a, b),
            r2(half, -b),
        ]
    };
    for i in 0..n {
        let (a, b) = (xs[i], ys[i]);
        let got = &got[i * 12..i * 12 + 12];
        let mut want = want_of(a, b, false);
        if got != want && !denorm && got == want_of(a, b, true) {
            continue;
        }
        // The sign of NaN * 0.5 is not defined (IEEE 754 does not carry it through
        // arithmetic; NVIDIA's result is positive): signbit(half) may be either.
        if a.is_nan() && (got[8] - want[8]).abs() == 2 {
            want[8] = got[8];
        }
        assert_eq!(got, &want, "x = {a:e} ({:#x}), y = {b:e}", a.to_bits());
    }
}

// ---------------------------------------------------------------------------------------------
// Special values and range edges

const GEOMETRIC: &str = r#"
__kernel void geo(__global const float4 *a, __global const float4 *b, __global float4 *c,
                  __global float *len) {
    size_t i = get_global_id(0);
    c[i] = cross(a[i], b[i]);
    len[i * 4 + 0] = length(a[i]);
    len[i * 4 + 1] = length(a[i].xy);
    len[i * 4 + 2] = distance(a[i].xyz, b[i].xyz);
    len[i * 4 + 3] = distance(a[i].x, b[i].x);
}
"#;

/// `cross` on float4 (w is 0), `length` and `distance` of vectors whose sum of squares
/// overflows or underflows float, against the host in double precision.
#[test]
fn geometric_cross4_and_length_without_overflow() {
    let env = Env::new();
    let k = env.kern(GEOMETRIC, "geo");
    let mut rng = Rng(0x6E0);
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..64 {
        // Magnitudes from 2^-70 (squares underflow) to 2^70 (squares overflow).
        let e = [-70, -40, -5, 0, 5, 40, 64, 70][i % 8];
        let m = 2f32.powi(e);
        let r = |rng: &mut Rng| (rng.next_f32() * 2.0 - 1.0) * m;
        a.push([r(&mut rng), r(&mut rng), r(&mut rng), r(&mut rng)]);
        b.push([r(&mut rng), r(&mut rng), r(&mut rng), r(&mut rng)]);
    }
    let n = a.len();
    let (ba, bb, bc, bl) = (
        env.buf(&a),
        env.buf(&b),
        env.zeros::<[f32; 4]>(n),
        env.zeros::<f32>(n * 4),
    );
    arg_mem(k, 0, ba);
    arg_mem(k, 1, bb);
    arg_mem(k, 2, bc);
    arg_mem(k, 3, bl);
    env.run(k, &[n], None, None);
    let c: Vec<[f32; 4]> = env.read(bc, n);
    let l: Vec<f32> = env.read(bl, n * 4);
    let len = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    for i in 0..n {
        let (x, y) = (a[i].map(f64::from), b[i].map(f64::from));
        let want_c = [
            x[1] * y[2] - x[2] * y[1],
            x[2] * y[0] - x[0] * y[2],
            x[0] * y[1] - x[1] * y[0],
        ];
        let scale = want_c
            .iter()
            .fold(0f64, |m, v| m.max(v.abs()))
            .max(f64::MIN_POSITIVE);
        for d in 0..3 {
            if scale.is_finite() && scale < f32::MAX as f64 && scale > 1e-30 {
                let err = (f64::from(c[i][d]) - want_c[d]).abs() / scale;
                assert!(err < 1e-5, "cross {i}.{d}: {} vs {}", c[i][d], want_c[d]);
            }
        }
        assert_eq!(c[i][3], 0.0, "cross w of {i}");
        let diff: Vec<f64> = (0..3).map(|d| x[d] - y[d]).collect();
        let wants = [len(&x), len(&x[..2]), len(&diff), (x[0] - y[0]).abs()];
        for (j, want) in wants.iter().enumerate() {
            let got = f64::from(l[i * 4 + j]);
            let err = (got - want).abs() / want.max(f64::from(f32::MIN_POSITIVE));
            assert!(err < 4e-7, "length {j} of item {i}: {got:e} vs {want:e}");
        }
    }
}

const ROUND_HYPOT: &str = r#"
__kernel void rh(__global const float *x, __global const float *y, __global float *out) {
    size_t i = get_global_id(0);
    out[i * 3] = round(x[i]);
    out[i * 3 + 1] = hypot(x[i], y[i]);
    float4 v = hypot((float4)(x[i]), (float4)(y[i], 1.0f, -y[i], 0.0f));
    out[i * 3 + 2] = v.z;
}
"#;

/// `round` rounds halfway cases away from zero and keeps the sign of zero; `hypot` neither
/// overflows nor underflows in between and gives +inf for an infinite operand.
#[test]
fn round_half_away_and_hypot_without_overflow() {
    let env = Env::new();
    let k = env.kern(ROUND_HYPOT, "rh");
    let mut xs = vec![
        2.5f32,
        -2.5,
        0.5,
        -0.5,
        -0.3,
        1.5,
        -513.0 - 0.5,
        8388607.5,
        1.0e30,
        3.0e-30,
        f32::INFINITY,
        f32::NAN,
        -0.0,
        2.0e38,
    ];
    let mut ys = vec![
        1.0f32,
        2.0,
        -3.0,
        0.0,
        0.1,
        1.0e20,
        4.0,
        1.0,
        3.0e30,
        4.0e-30,
        f32::NAN,
        1.0,
        -0.0,
        2.0e38,
    ];
    let mut rng = Rng(0x90D);
    for _ in 0..50 {
        xs.push((rng.next_f32() - 0.5) * 2f32.powi((rng.next_u32() % 200) as i32 - 100));
        ys.push((rng.next_f32() - 0.5) * 2f32.powi((rng.next_u32() % 200) as i32 - 100));
    }
    let n = xs.len();
    let (bx, by, bo) = (env.buf(&xs), env.buf(&ys), env.zeros::<f32>(n * 3));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, by);
    arg_mem(k, 2, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n * 3);
    for i in 0..n {
        let (x, y) = (xs[i], ys[i]);
        let r = x.round();
        let g = got[i * 3];
        assert!(
            g.to_bits() == r.to_bits() || (g.is_nan() && r.is_nan()),
            "round({x}) = {g}, want {r}"
        );
        for (j, yy) in [(1, y), (2, -y)] {
            let want = if x.is_infinite() || yy.is_infinite() {
                f32::INFINITY
            } else {
                f64::from(x).hypot(f64::from(yy)) as f32
            };
            let g = got[i * 3 + j];
            if want.is_nan() || want.is_infinite() {
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "hypot({x}, {yy}) = {g}, want {want}"
                );
                continue;
            }
            // FTZ devices may flush results below the smallest normal.
            if want < f32::MIN_POSITIVE {
                assert!(
                    g < f32::MIN_POSITIVE * 2.0,
                    "hypot({x}, {yy}) = {g}, want {want}"
                );
                continue;
            }
            let err = (f64::from(g) - f64::from(want)).abs() / f64::from(want);
            assert!(err < 5e-7, "hypot({x}, {yy}) = {g:e}, want {want:e}");
        }
    }
}

const INVERSE_EDGES: &str = r#"
__kernel void inv(__global const float *x, __global float *out) {
    size_t i = get_global_id(0);
    out[i * 4] = atan(x[i]);
    out[i * 4 + 1] = asinh(x[i]);
    out[i * 4 + 2] = acosh(x[i]);
    out[i * 4 + 3] = atanpi(x[i]);
}
"#;

/// Where lavapipe's GLSL formulas break: atan/atanpi of NaN (NaN, not 0), asinh and acosh of
/// huge values (x*x overflows), asinh of tiny values, acosh below 1 (NaN).
#[test]
fn inverse_trig_and_hyperbolic_edges() {
    let env = Env::new();
    let k = env.kern(INVERSE_EDGES, "inv");
    let xs = [
        f32::NAN,
        2f32.powi(113),
        -2f32.powi(121),
        3.0e30,
        1.0e-10,
        -3.0e-9,
        0.5,
        -7.0,
    ];
    let n = xs.len();
    let (bx, bo) = (env.buf(&xs), env.zeros::<f32>(n * 4));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n * 4);
    for (i, &x) in xs.iter().enumerate() {
        let x64 = f64::from(x);
        let wants = [
            x64.atan(),
            x64.asinh(),
            x64.acosh(),
            x64.atan() / std::f64::consts::PI,
        ];
        for (j, want) in wants.iter().enumerate() {
            let g = f64::from(got[i * 4 + j]);
            // atan itself is GLSL's (its precision near 0 is not what this test is about).
            if (j == 0 || j == 3) && x.abs() < 0.5 {
                continue;
            }
            if want.is_nan() {
                assert!(g.is_nan(), "function {j} of {x:e}: {g:e}, want NaN");
            } else {
                let err = (g - want).abs() / want.abs().max(1e-30);
                assert!(err < 1e-5, "function {j} of {x:e}: {g:e}, want {want:e}");
            }
        }
    }
}

const LOGB: &str = r#"
__kernel void lb(__global const uint *bits, __global int *ie, __global float *fe) {
    size_t i = get_global_id(0);
    float x = as_float(bits[i]);
    ie[i] = ilogb(x);
    fe[i] = logb(x);
}
"#;

/// `ilogb` and `logb` of normal and subnormal floats (a subnormal's exponent is that of its
/// mantissa's top bit), zeros, infinities and NaN, against the host's bit arithmetic.
#[test]
fn ilogb_and_logb_of_subnormals() {
    let env = Env::new();
    let k = env.kern(LOGB, "lb");
    let mut bits: Vec<u32> = vec![
        0x0000_0201,
        0x0000_0001,
        0x007f_ffff,
        0x8000_4000,
        0x0080_0000,
    ];
    bits.extend([1.0f32, -3.5, 1.0e30, 0.0, -0.0, f32::INFINITY, f32::NAN].map(f32::to_bits));
    let mut rng = Rng(0x10B);
    bits.extend((0..40).map(|_| rng.next_u32()));
    let n = bits.len();
    let (bb, bi, bf) = (env.buf(&bits), env.zeros::<i32>(n), env.zeros::<f32>(n));
    arg_mem(k, 0, bb);
    arg_mem(k, 1, bi);
    arg_mem(k, 2, bf);
    env.run(k, &[n], None, None);
    let gi: Vec<i32> = env.read(bi, n);
    let gf: Vec<f32> = env.read(bf, n);
    for (i, &b) in bits.iter().enumerate() {
        let x = f32::from_bits(b);
        let (ef, m) = ((b >> 23) & 0xff, b & 0x7f_ffff);
        let (wi, wf) = if x.is_nan() {
            (i32::MAX, f32::NAN)
        } else if x.is_infinite() {
            (i32::MAX, f32::INFINITY)
        } else if ef == 0 && m == 0 {
            (i32::MIN, f32::NEG_INFINITY)
        } else if ef == 0 {
            let e = 31 - m.leading_zeros() as i32 - 149;
            (e, e as f32)
        } else {
            (ef as i32 - 127, (ef as i32 - 127) as f32)
        };
        // Without CL_FP_DENORM a subnormal may be read as zero.
        let (wi, wf) = if !single_fp_denorm() && x.is_subnormal() && gi[i] == i32::MIN {
            (i32::MIN, f32::NEG_INFINITY)
        } else {
            (wi, wf)
        };
        assert_eq!(gi[i], wi, "ilogb({x:e}, bits {b:#x})");
        assert!(
            gf[i] == wf || (gf[i].is_nan() && wf.is_nan()),
            "logb({x:e}, bits {b:#x}) = {}, want {wf}",
            gf[i]
        );
    }
}

const LDEXP: &str = r#"
__kernel void ld(__global const float *x, __global const int *n, __global float *out) {
    size_t i = get_global_id(0);
    out[i] = ldexp(x[i], n[i]);
}
"#;

/// `ldexp` with exponents far outside the float range (results 0 or infinity) and with
/// results in the subnormal range (rounded once), against the host in double precision.
#[test]
fn ldexp_huge_exponents_and_subnormal_results() {
    let env = Env::new();
    let k = env.kern(LDEXP, "ld");
    let mut rng = Rng(0x1D);
    let mut xs = vec![1.5f32, -1.5, 3.0, 1.0e30, 1.0e-30, f32::MAX, 1.0];
    let mut ns = vec![-148i32, -149, -150, -200, 200, 1, 304732809];
    for _ in 0..200 {
        let x = (rng.next_f32() + 0.5) * 2f32.powi((rng.next_u32() % 200) as i32 - 100);
        xs.push(if rng.next_u32() & 1 == 0 { x } else { -x });
        ns.push((rng.next_u32() % 800) as i32 - 400);
    }
    let n = xs.len();
    let (bx, bn, bo) = (env.buf(&xs), env.buf(&ns), env.zeros::<f32>(n));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, bn);
    arg_mem(k, 2, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n);
    for i in 0..n {
        let e = ns[i].clamp(-1000, 1000);
        let want = (f64::from(xs[i]) * 2f64.powi(e)) as f32;
        let flushed = want.abs() < f32::MIN_POSITIVE && got[i] == 0.0;
        assert!(
            got[i].to_bits() == want.to_bits() || flushed,
            "ldexp({:e}, {}) = {:e}, want {want:e}",
            xs[i],
            ns[i],
            got[i]
        );
    }
}

const MAD_SAT: &str = r#"
__kernel void ms(__global const long *a, __global const long *b, __global const long *c,
                 __global long *out) {
    size_t i = get_global_id(0);
    out[i * 4] = mad_sat(a[i], b[i], c[i]);
    out[i * 4 + 1] = mad_sat((int)a[i], (int)b[i], (int)c[i]);
    out[i * 4 + 2] = mad_sat((char)a[i], (char)b[i], (char)c[i]);
    int2 v = mad_sat((int2)((int)a[i]), (int2)((int)b[i], 1), (int2)((int)c[i]));
    out[i * 4 + 3] = v.x;
}
"#;

/// Signed `mad_sat` (OpenCL.std s_mad_sat) for long, int, char and a vector, including
/// products that overflow but come back into range with `c`, against the host in i128.
#[test]
fn signed_mad_sat() {
    let env = Env::new();
    let k = env.kern(MAD_SAT, "ms");
    let mut rng = Rng(0x5A7);
    let mut a = vec![i64::MAX, i64::MIN, 1i64 << 32, -(1i64 << 32), 3, -128, 127];
    let mut b = vec![2i64, 2, 1 << 31, 1 << 31, -5, -1, 127];
    let mut c = vec![-i64::MAX, i64::MAX, -5, 7, 11, 0, -100];
    for _ in 0..100 {
        let r = |rng: &mut Rng| {
            let v = (u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32())) as i64;
            v >> (rng.next_u32() % 64)
        };
        a.push(r(&mut rng));
        b.push(r(&mut rng));
        c.push(r(&mut rng));
    }
    let n = a.len();
    let (ba, bb, bc, bo) = (
        env.buf(&a),
        env.buf(&b),
        env.buf(&c),
        env.zeros::<i64>(n * 4),
    );
    arg_mem(k, 0, ba);
    arg_mem(k, 1, bb);
    arg_mem(k, 2, bc);
    arg_mem(k, 3, bo);
    env.run(k, &[n], None, None);
    let got: Vec<i64> = env.read(bo, n * 4);
    let sat = |v: i128, lo: i128, hi: i128| v.clamp(lo, hi) as i64;
    for i in 0..n {
        let (x, y, z) = (a[i] as i128, b[i] as i128, c[i] as i128);
        let (xi, yi, zi) = (
            a[i] as i32 as i128,
            b[i] as i32 as i128,
            c[i] as i32 as i128,
        );
        let (xc, yc, zc) = (a[i] as i8 as i128, b[i] as i8 as i128, c[i] as i8 as i128);
        let want = [
            sat(x * y + z, i64::MIN as i128, i64::MAX as i128),
            sat(xi * yi + zi, i32::MIN as i128, i32::MAX as i128),
            sat(xc * yc + zc, -128, 127),
            sat(xi * yi + zi, i32::MIN as i128, i32::MAX as i128),
        ];
        assert_eq!(
            &got[i * 4..i * 4 + 4],
            &want,
            "mad_sat({}, {}, {})",
            a[i],
            b[i],
            c[i]
        );
    }
}

const POW_NAN: &str = r#"
__kernel void pn(__global const float *x, __global const float *y, __global const int *k,
                 __global float *out) {
    size_t i = get_global_id(0);
    out[i * 5] = pow(x[i], y[i]);
    out[i * 5 + 1] = powr(x[i], y[i]);
    out[i * 5 + 2] = pown(x[i], k[i]);
    out[i * 5 + 3] = rootn(x[i], k[i]);
    out[i * 5 + 4] = atan(x[i]);
}
"#;

/// NaN operands of pow, powr, pown, rootn and atan give NaN (lavapipe's GLSL Pow and Atan gave
/// 0), except pow(1, NaN) = 1 and pown(NaN, 0) = 1 (OpenCL C special values).
#[test]
fn pow_family_nan_operands() {
    let env = Env::new();
    let k = env.kern(POW_NAN, "pn");
    let nan = f32::NAN;
    let xs = [nan, nan, 1.0, 2.0, 4.0];
    let ys = [2.0, nan, nan, nan, 0.5];
    let ks = [3i32, 0, 2, 2, 2];
    let n = xs.len();
    let (bx, by, bk, bo) = (
        env.buf(&xs),
        env.buf(&ys),
        env.buf(&ks),
        env.zeros::<f32>(n * 5),
    );
    arg_mem(k, 0, bx);
    arg_mem(k, 1, by);
    arg_mem(k, 2, bk);
    arg_mem(k, 3, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n * 5);
    for i in 0..n {
        let (x, y, kk) = (xs[i], ys[i], ks[i]);
        let pow = if x == 1.0 { 1.0 } else { x.powf(y) };
        let powr = if x.is_nan() || y.is_nan() {
            nan
        } else {
            x.powf(y)
        };
        let pown = if kk == 0 { 1.0 } else { x.powi(kk) };
        let rootn = x.powf(1.0 / kk as f32);
        let wants = [pow, powr, pown, rootn, x.atan()];
        for (j, w) in wants.iter().enumerate() {
            let g = got[i * 5 + j];
            assert!(
                (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-5 * w.abs(),
                "function {j} of ({x}, {y}, {kk}): {g}, want {w}"
            );
        }
    }
}

/// The odd float built-ins keep the sign of zero (C99 Annex F, which OpenCL C 3.0 section
/// 7.5.1 follows): f(-0) is -0 and f(+0) is +0. Mesa folds `x + 0.0` to `x` (and so loses a
/// -0 on the way) unless the module asks for signed zeros (`SignedZeroInfNanPreserve`).
#[test]
fn odd_functions_keep_the_sign_of_zero() {
    let env = Env::new();
    let names = [
        "asin", "asinh", "asinpi", "atan", "atanh", "atanpi", "cbrt", "erf", "expm1", "log1p",
        "sin", "sinh", "sinpi", "tan", "tanh", "tanpi", "round", "rint", "trunc", "ceil", "floor",
        "sqrt",
    ];
    let body: String = names
        .iter()
        .enumerate()
        .map(|(j, f)| format!("out[{j} * 2 + i] = {f}(x[i]);\n"))
        .collect();
    let src = format!(
        "__kernel void z(__global const float *x, __global float *out) {{\n\
         size_t i = get_global_id(0);\n{body}}}\n"
    );
    let k = env.kern(&src, "z");
    let xs = [0.0f32, -0.0];
    let (bx, bo) = (env.buf(&xs), env.zeros::<f32>(names.len() * 2));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, bo);
    env.run(k, &[2], None, None);
    let got: Vec<f32> = env.read(bo, names.len() * 2);
    let wrong = signed_zero_errors(&names, &xs, &got, |v: f32| u64::from(v.to_bits()));
    assert!(wrong.is_empty(), "wrong signed zeros: {}", wrong.join(", "));
}
