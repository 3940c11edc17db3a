//! Math built-ins in kernels: common, integer and float functions, functions that store through
//! pointers, and the compiler's math fixtures, against host answers.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::kernels::*;
use common::*;

// ---------------------------------------------------------------------------------------------
// Math

const MATH_EACH: &str = r#"
__kernel void each(__global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    float a = x[i];
    __global float *o = y + i * 12;
    o[0] = sqrt(fabs(a));
    o[1] = fabs(a);
    o[2] = fmin(a, 0.5f);
    o[3] = fmax(a, 0.5f);
    o[4] = mad(a, 2.0f, 3.0f);
    o[5] = exp(a);
    o[6] = log(fabs(a) + 1.0f);
    o[7] = sin(a);
    o[8] = cos(a);
    o[9] = floor(a) + ceil(a) * 10.0f;
    o[10] = clamp(a, -2.0f, 2.0f);
    o[11] = a / 3.0f;
}

__kernel void each4(__global const float4 *x, __global float4 *y) {
    size_t i = get_global_id(0);
    float4 a = x[i];
    y[i * 3] = sqrt(fabs(a)) + fmin(a, (float4)(1.0f)) + fmax(a, 0.5f);
    y[i * 3 + 1] = (float4)(dot(a, a), length(a), 0.0f, 0.0f);
    y[i * 3 + 2] = mad(a, a, a);
}
"#;

#[test]
fn common_math_functions() {
    let env = Env::new();
    let mut rng = Rng(14);
    let n = 512usize;
    let x = random_f32(&mut rng, n, -6.0, 6.0);
    let (mx, my) = (env.buf(&x), env.zeros::<f32>(n * 12));
    let k = env.kern(MATH_EACH, "each");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n * 12);
    for i in 0..n {
        let a = x[i];
        let o = &y[i * 12..i * 12 + 12];
        assert_close(o[0], a.abs().sqrt(), 1e-6, "sqrt");
        assert_eq!(o[1], a.abs(), "fabs");
        assert_eq!(o[2], a.min(0.5), "fmin");
        assert_eq!(o[3], a.max(0.5), "fmax");
        assert_close(o[4], a * 2.0 + 3.0, 1e-6, "mad");
        assert_close(o[5], a.exp(), 1e-5, "exp");
        assert_close(o[6], (a.abs() + 1.0).ln(), 1e-5, "log");
        assert_close(o[7], a.sin(), 1e-5, "sin");
        assert_close(o[8], a.cos(), 1e-5, "cos");
        assert_eq!(o[9], a.floor() + a.ceil() * 10.0, "floor/ceil");
        assert_eq!(o[10], a.clamp(-2.0, 2.0), "clamp");
        assert_close(o[11], a / 3.0, 3e-7, "divide");
    }

    let x4 = random_f32(&mut rng, n * 4, -3.0, 3.0);
    let (mx, my) = (env.buf(&x4), env.zeros::<f32>(n * 12));
    let k = env.kern(MATH_EACH, "each4");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n * 12);
    for i in 0..n {
        let a = &x4[i * 4..i * 4 + 4];
        let o = &y[i * 12..i * 12 + 12];
        let dot: f32 = a.iter().map(|v| v * v).sum();
        for j in 0..4 {
            assert_close(
                o[j],
                a[j].abs().sqrt() + a[j].min(1.0) + a[j].max(0.5),
                1e-6,
                "vector sqrt/fmin/fmax",
            );
            assert_close(o[8 + j], a[j] * a[j] + a[j], 1e-6, "vector mad");
        }
        assert_close(o[4], dot, 1e-5, "dot");
        assert_close(o[5], dot.sqrt(), 1e-5, "length");
    }
}

const MATH: &str = include_str!("../src/compiler/testdata/math.cl");

#[test]
fn integer_functions() {
    let env = Env::new();
    let mut rng = Rng(15);
    let n = 1000usize;
    // mad24/mul24 are only defined for 24-bit operands.
    let x = random_i32(&mut rng, n, -(1 << 22), 1 << 22);
    let u: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let (mx, mu, my, mz) = (
        env.buf(&x),
        env.buf(&u),
        env.zeros::<i32>(n),
        env.zeros::<u32>(n),
    );
    let k = env.kern(MATH, "int_math");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, mu);
    arg_mem(k, 2, my);
    arg_mem(k, 3, mz);
    env.run(k, &[n], None, None);
    let y: Vec<i32> = env.read(my, n);
    let z: Vec<u32> = env.read(mz, n);
    for i in 0..n {
        let a = x[i];
        let want = [
            ((a as i64 * 12345) >> 32) as i32,
            a.min(7),
            a.max(-7),
            a.clamp(-100, 100),
            a.unsigned_abs() as i32,
            a * 3 + 4,
            a * 5,
            a.rotate_left(3),
            a.count_ones() as i32,
            a.leading_zeros() as i32,
        ]
        .iter()
        .fold(0i32, |s, v| s.wrapping_add(*v));
        assert_eq!(y[i], want, "int_math({a})");
        let b = u[i];
        let mul_hi = |p: u32, q: u32| ((p as u64 * q as u64) >> 32) as u32;
        let want = [
            mul_hi(b, 0x9e37_79b9),
            b.min(7),
            b.max(9),
            b.clamp(3, 300),
            b,
            b.rotate_left(7),
            mul_hi(b, b).wrapping_add(1),
        ]
        .iter()
        .fold(0u32, |s, v| s.wrapping_add(*v));
        assert_eq!(z[i], want, "uint math({b})");
    }
}

const INT_OPS: &str = r#"
__kernel void ops(__global const int *a, __global const int *b, __global int *out) {
    size_t i = get_global_id(0);
    int x = a[i], y = b[i];
    __global int *o = out + i * 10;
    o[0] = x + y;
    o[1] = x - y;
    o[2] = x * y;
    o[3] = x / y;
    o[4] = x % y;
    o[5] = x >> (y & 31);
    o[6] = (int)((uint)x >> (y & 31));
    o[7] = x << (y & 15);
    o[8] = (x & y) ^ (x | ~y);
    o[9] = (x < y) + (x == y) * 2 + (x >= y) * 4 + add_sat(x, y);
}
"#;

#[test]
fn integer_operators() {
    let env = Env::new();
    let mut rng = Rng(16);
    let n = 1000usize;
    let a: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
    let b: Vec<i32> = (0..n)
        .map(|_| (rng.next_u32() as i32 >> (rng.next_u32() % 31)) | 1)
        .collect();
    let (ma, mb, mo) = (env.buf(&a), env.buf(&b), env.zeros::<i32>(n * 10));
    let k = env.kern(INT_OPS, "ops");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    arg_mem(k, 2, mo);
    env.run(k, &[n], None, None);
    let got: Vec<i32> = env.read(mo, n * 10);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let want = [
            x.wrapping_add(y),
            x.wrapping_sub(y),
            x.wrapping_mul(y),
            x.wrapping_div(y),
            x.wrapping_rem(y),
            x >> (y & 31),
            ((x as u32) >> (y & 31)) as i32,
            x << (y & 15),
            (x & y) ^ (x | !y),
            ((x < y) as i32 + (x == y) as i32 * 2 + (x >= y) as i32 * 4)
                .wrapping_add(x.saturating_add(y)),
        ];
        assert_eq!(&got[i * 10..i * 10 + 10], &want, "ops({x}, {y})");
    }
}

const MATH_MORE: &str = r#"
__kernel void more(__global const float *x, __global const int *k, __global float *y) {
    size_t i = get_global_id(0);
    float a = x[i];
    __global float *o = y + i * 8;
    o[0] = copysign(2.0f, a);
    o[1] = fdim(a, 1.0f);
    o[2] = cbrt(a);
    o[3] = pown(a, k[i]);
    o[4] = maxmag(a, 0.5f);
    o[5] = minmag(a, 0.5f);
    o[6] = rootn(a, k[i]);
    o[7] = (float)(abs_diff(k[i], -3) + hadd(k[i], 7) + rhadd(k[i], 8) + sub_sat(k[i], 2147483647)
           + (int)add_sat((uint)k[i], 4000000000u) + upsample((short)k[i], (ushort)3));
}
"#;

#[test]
fn more_math_functions() {
    let env = Env::new();
    let mut rng = Rng(25);
    let n = 400usize;
    let x = random_f32(&mut rng, n, -4.0, 4.0);
    let kk = random_i32(&mut rng, n, -4, 6);
    let (mx, mk, my) = (env.buf(&x), env.buf(&kk), env.zeros::<f32>(n * 8));
    let k = env.kern(MATH_MORE, "more");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, mk);
    arg_mem(k, 2, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n * 8);
    for i in 0..n {
        let (a, e) = (x[i], kk[i]);
        let o = &y[i * 8..i * 8 + 8];
        assert_eq!(o[0], 2.0f32.copysign(a), "copysign");
        assert_eq!(o[1], if a > 1.0 { a - 1.0 } else { 0.0 }, "fdim");
        assert_close(o[2], a.cbrt(), 1e-5, "cbrt");
        if e != 0 {
            assert_close(o[3], a.powi(e), 1e-4, &format!("pown({a}, {e})"));
        }
        let (ax, ay) = (a.abs(), 0.5f32);
        assert_eq!(
            o[4],
            if ax > ay {
                a
            } else if ay > ax {
                0.5
            } else {
                a.max(0.5)
            },
            "maxmag"
        );
        assert_eq!(
            o[5],
            if ax < ay {
                a
            } else if ay < ax {
                0.5
            } else {
                a.min(0.5)
            },
            "minmag"
        );
        if e > 0 && (a >= 0.0 || e % 2 == 1) {
            let want = a.abs().powf(1.0 / e as f32).copysign(a);
            assert_close(o[6], want, 1e-5, &format!("rootn({a}, {e})"));
        } else if e > 0 {
            assert!(o[6].is_nan(), "rootn({a}, {e}) = {}", o[6]);
        }
        let ints = [
            (e as i64 - -3i64).unsigned_abs() as i32,
            ((e as i64 + 7) >> 1) as i32,
            ((e as i64 + 8 + 1) >> 1) as i32,
            e.saturating_sub(i32::MAX),
            (e as u32).saturating_add(4_000_000_000) as i32,
            ((e as i16 as i32) << 16) | 3,
        ];
        let want = ints.iter().fold(0i32, |s, v| s.wrapping_add(*v)) as f32;
        assert_eq!(o[7], want, "integer built-ins of {e}");
    }
}

const PI_AND_BITS: &str = r#"
__kernel void pi_and_bits(__global const float *x, __global float *y, __global int *e) {
    size_t i = get_global_id(0);
    float a = x[i];
    __global float *o = y + i * 9;
    o[0] = sinpi(a);
    o[1] = cospi(a);
    o[2] = tanpi(a * 0.2f);
    o[3] = asinpi(a * 0.1f);
    o[4] = acospi(a * 0.1f);
    o[5] = atanpi(a) + atan2pi(a, 2.0f);
    o[6] = logb(a);
    o[7] = nextafter(a, 0.0f);
    o[8] = nextafter(a, INFINITY);
    e[i] = ilogb(a);
}
"#;

#[test]
fn pi_functions_logb_nextafter() {
    let env = Env::new();
    let mut rng = Rng(33);
    let mut x = random_f32(&mut rng, 200, -9.0, 9.0);
    x.extend([0.0, 1.0, -1.0, 0.5, 2.0, 1024.0, 3.0e-3, -7.5]);
    let n = x.len();
    let (mx, my, me) = (env.buf(&x), env.zeros::<f32>(n * 9), env.zeros::<i32>(n));
    let k = env.kern(PI_AND_BITS, "pi_and_bits");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    arg_mem(k, 2, me);
    env.run(k, &[n], None, None);
    let (y, e): (Vec<f32>, Vec<i32>) = (env.read(my, n * 9), env.read(me, n));
    let pi = std::f64::consts::PI;
    for i in 0..n {
        let a = x[i];
        let ad = a as f64;
        let o = &y[i * 9..i * 9 + 9];
        // lavapipe's GLSL asin/acos/atan are good to about 5e-4 only (OpenCL asks for a few
        // ulp: precise versions are future work).
        let close_to = |got: f32, want: f64, tol: f64, what: &str| {
            if want.is_nan() {
                assert!(got.is_nan(), "{what}({a}): {got}, want NaN");
                return;
            }
            assert!(
                (got as f64 - want).abs() <= tol * want.abs().max(1.0),
                "{what}({a}): {got} vs {want}"
            )
        };
        let abs_close = |got: f32, want: f64, what: &str| close_to(got, want, 2e-5, what);
        abs_close(o[0], (pi * ad).sin(), "sinpi");
        abs_close(o[1], (pi * ad).cos(), "cospi");
        let tp = (pi * (a * 0.2) as f64).tan();
        if tp.abs() < 100.0 {
            abs_close(o[2], tp, "tanpi");
        }
        let tenth = (a * 0.1) as f64;
        close_to(o[3], tenth.asin() / pi, 1e-3, "asinpi");
        close_to(o[4], tenth.acos() / pi, 1e-3, "acospi");
        close_to(
            o[5],
            ad.atan() / pi + ad.atan2(2.0) / pi,
            1e-3,
            "atanpi + atan2pi",
        );
        if a == 0.0 {
            assert_eq!(o[6], f32::NEG_INFINITY, "logb(0)");
            assert_eq!(e[i], i32::MIN, "ilogb(0)");
            assert_eq!(o[7], 0.0, "nextafter(0, 0)");
        } else {
            let lb = a.abs().log2().floor();
            assert_eq!(o[6], lb, "logb({a})");
            assert_eq!(e[i], lb as i32, "ilogb({a})");
            let toward0 = f32::from_bits(a.to_bits() - 1);
            assert_eq!(o[7], toward0, "nextafter({a}, 0)");
            let up = if a > 0.0 {
                f32::from_bits(a.to_bits() + 1)
            } else {
                f32::from_bits(a.to_bits() - 1)
            };
            assert_eq!(o[8], up, "nextafter({a}, inf)");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Functions with pointer outputs

const POINTER_MATH: &str = r#"
__kernel void split_floats(__global const float *x, __global float *y, __global int *e,
                           __global float *gi) {
    size_t i = get_global_id(0);
    float ip;
    int ex;
    y[i * 4] = fract(x[i], &ip);
    y[i * 4 + 1] = ip;
    y[i * 4 + 2] = frexp(x[i], &ex);
    e[i] = ex;
    y[i * 4 + 3] = modf(x[i], gi + i);
}
"#;

#[test]
fn fract_frexp_modf_store_through_pointers() {
    let env = Env::new();
    let mut rng = Rng(30);
    let mut x = random_f32(&mut rng, 200, -100.0, 100.0);
    x.extend([0.0, -0.0, 1.0, -1.0, 0.75, -2.5, 1e-3, 3.0e7]);
    let n = x.len();
    let (mx, my, me, mg) = (
        env.buf(&x),
        env.zeros::<f32>(n * 4),
        env.zeros::<i32>(n),
        env.zeros::<f32>(n),
    );
    let k = env.kern(POINTER_MATH, "split_floats");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    arg_mem(k, 2, me);
    arg_mem(k, 3, mg);
    env.run(k, &[n], None, None);
    let (y, e, gi): (Vec<f32>, Vec<i32>, Vec<f32>) =
        (env.read(my, n * 4), env.read(me, n), env.read(mg, n));
    for i in 0..n {
        let v = x[i];
        assert_eq!(
            y[i * 4],
            (v - v.floor()).min(1.0 - f32::EPSILON / 2.0),
            "fract({v})"
        );
        assert_eq!(y[i * 4 + 1], v.floor(), "fract({v}) integer part");
        // frexp: v = m * 2^e with 0.5 <= |m| < 1 (0 for 0).
        let (m, ex) = (y[i * 4 + 2], e[i]);
        if v == 0.0 {
            assert_eq!((m, ex), (0.0, 0), "frexp(0)");
        } else {
            assert!((0.5..1.0).contains(&m.abs()), "frexp({v}) mantissa {m}");
            assert_eq!(m * 2f32.powi(ex), v, "frexp({v})");
        }
        assert_eq!(y[i * 4 + 3], v - v.trunc(), "modf({v})");
        assert_eq!(gi[i], v.trunc(), "modf({v}) integer part");
    }
}

/// `fract`, `frexp` and `modf` of `float3` / `double`-free 3-component vectors writing their
/// second result into a private `float3` / `int3` (clang reads and writes those through a
/// 4-component view, whose last word is padding), then stored with `vstore3`; the same for
/// 2- and 4-component vectors. Exact functions, so the host's answers must match bit for bit.
#[test]
fn three_component_pointer_outputs_in_private_memory() {
    let env = Env::new();
    let src = r#"
__kernel void outs3(__global const float *in, __global float *fr, __global float *ip,
                    __global float *mant, __global int *ex, __global float *mf,
                    __global float *mi) {
    size_t i = get_global_id(0);
    float3 x = vload3(i, in);
    float3 iout = NAN;
    int3 e = (int3)(-99);
    float3 mint = NAN;
    vstore3(fract(x, &iout), i, fr);
    vstore3(iout, i, ip);
    vstore3(frexp(x, &e), i, mant);
    vstore3(e, i, ex);
    vstore3(modf(x, &mint), i, mf);
    vstore3(mint, i, mi);
}

__kernel void outs2(__global const float *in, __global float *fr, __global float *ip) {
    size_t i = get_global_id(0);
    float2 iout;
    vstore2(fract(vload2(i, in), &iout), i, fr);
    vstore2(iout, i, ip);
}
"#;
    let p = env.build(src);
    let mut rng = Rng(0x3c0);
    let n = 64usize;
    let mut x = random_f32(&mut rng, n * 3, -1000.0, 1000.0);
    x[..6].copy_from_slice(&[0.0, -0.0, 1.0, -1.0, 0.75, -2.5]);
    let bx = env.buf(&x);
    let bufs: Vec<cl_mem> = (0..6).map(|_| env.zeros::<f32>(n * 3)).collect();
    let k = env.kernel(p, "outs3");
    arg_mem(k, 0, bx);
    for (j, b) in bufs.iter().enumerate() {
        arg_mem(k, j as u32 + 1, *b);
    }
    env.run(k, &[n], None, None);
    let r: Vec<Vec<f32>> = bufs.iter().map(|b| env.read::<f32>(*b, n * 3)).collect();
    let ex: Vec<i32> = env.read(bufs[3], n * 3);
    for (i, &v) in x.iter().enumerate() {
        let fl = v.floor();
        // OpenCL C's fract(±0) is ±0 (x - floor(x) would give +0 for -0).
        let want = if v == 0.0 {
            v
        } else {
            (v - fl).min(1.0 - f32::EPSILON / 2.0)
        };
        assert_eq!(r[0][i].to_bits(), want.to_bits(), "fract({v})");
        assert_eq!(r[1][i].to_bits(), fl.to_bits(), "fract({v}) integer part");
        if v == 0.0 {
            assert_eq!((r[2][i].to_bits(), ex[i]), (v.to_bits(), 0), "frexp({v})");
        } else {
            let (m, e) = (r[2][i], ex[i]);
            assert!((0.5..1.0).contains(&m.abs()), "frexp({v}) mantissa {m}");
            assert_eq!(
                m as f64 * 2f64.powi(e),
                v as f64,
                "frexp({v}) = {m} * 2^{e}"
            );
        }
        let t = v.trunc();
        let frac = if v.is_infinite() {
            0.0f32.copysign(v)
        } else {
            (v - t).copysign(v)
        };
        assert_eq!(r[4][i].to_bits(), frac.to_bits(), "modf({v})");
        assert_eq!(r[5][i].to_bits(), t.to_bits(), "modf({v}) integer part");
    }
    let k2 = env.kernel(p, "outs2");
    arg_mem(k2, 0, bx);
    arg_mem(k2, 1, bufs[0]);
    arg_mem(k2, 2, bufs[1]);
    env.run(k2, &[n], None, None);
    let (f2, i2): (Vec<f32>, Vec<f32>) = (env.read(bufs[0], n * 2), env.read(bufs[1], n * 2));
    for i in 0..n * 2 {
        let want = if x[i] == 0.0 {
            x[i]
        } else {
            (x[i] - x[i].floor()).min(1.0 - f32::EPSILON / 2.0)
        };
        assert_eq!(f2[i].to_bits(), want.to_bits(), "fract({})", x[i]);
        assert_eq!(i2[i].to_bits(), x[i].floor().to_bits());
    }
    unsafe {
        for b in bufs.into_iter().chain([bx]) {
            cl!(clReleaseMemObject)(b);
        }
        cl!(clReleaseKernel)(k);
        cl!(clReleaseKernel)(k2);
    }
}

// ---------------------------------------------------------------------------------------------
// The compiler's math fixtures

#[test]
fn select_fixture_and_vector_loads_fixture() {
    let env = Env::new();
    let mut rng = Rng(34);
    let p = env.build(MATH);
    let n = 128usize;
    let a: Vec<[i32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 100) as i32 - 50))
        .collect();
    let b: Vec<[i32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 100) as i32 - 50))
        .collect();
    let f = random_f32(&mut rng, n, -1.0, 1.0);
    let (ma, mb, mc, mf) = (
        env.buf(&a),
        env.buf(&b),
        env.zeros::<[i32; 4]>(n),
        env.buf(&f),
    );
    let k = env.kernel(p, "selects");
    for (i, m) in [ma, mb, mc, mf].iter().enumerate() {
        arg_mem(k, i as u32, *m);
    }
    env.run(k, &[n], None, None);
    let (c, gf): (Vec<[i32; 4]>, Vec<f32>) = (env.read(mc, n), env.read(mf, n));
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let fixed = [y[0], x[1], y[2], x[3]];
        let want: [i32; 4] = std::array::from_fn(|j| {
            let lt = if x[j] < y[j] { y[j] } else { x[j] };
            let gt = if x[j] > y[j] { x[j] } else { y[j] };
            lt + fixed[j] + gt
        });
        assert_eq!(c[i], want, "selects {i}");
        let want = if i & 1 == 1 { 2.0 } else { 1.0 } + if f[i] > 0.0 { 1.0 } else { 0.0 };
        assert_eq!(gf[i], want, "scalar select {i}");
    }

    // vector_loads writes overlapping ranges from neighbouring items: run one work-item.
    let input: Vec<f32> = (0..16).map(|v| v as f32 * 1.5).collect();
    let ints: Vec<i32> = (0..8).map(|v| v * 7 - 3).collect();
    let (mi, mo, mii, mio) = (
        env.buf(&input),
        env.buf(&[-1.0f32; 16]),
        env.buf(&ints),
        env.zeros::<i32>(8),
    );
    let k = env.kernel(p, "vector_loads");
    for (i, m) in [mi, mo, mii, mio].iter().enumerate() {
        arg_mem(k, i as u32, *m);
    }
    env.run(k, &[1], None, None);
    let (out, io): (Vec<f32>, Vec<i32>) = (env.read(mo, 16), env.read(mio, 8));
    let mut want = [-1.0f32; 16];
    let (va, vb, vc) = (
        [input[0], input[1]],
        [input[1], input[2], input[3]],
        [input[2], input[3], input[4], input[5]],
    );
    let add = [va[0], va[1], vb[0], vb[1]];
    for j in 0..4 {
        want[j] = vc[j] + add[j];
    }
    want[1] = va[0];
    want[2] = va[1];
    want[3..6].copy_from_slice(&vb);
    assert_eq!(out, want.to_vec(), "vector_loads floats");
    assert_eq!(
        &io[..4],
        &[ints[0] * 2, ints[1] * 2, ints[2] * 2, ints[3] * 2],
        "vector_loads ints"
    );
}

#[test]
fn float_math_fixture_within_glsl_precision() {
    let env = Env::new();
    let mut rng = Rng(35);
    let n = 256usize;
    let x = random_f32(&mut rng, n, -3.0, 3.0);
    let (mx, my) = (env.buf(&x), env.zeros::<f32>(n));
    let k = env.kern(MATH, "float_math");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n);
    for i in 0..n {
        let a = x[i] as f64;
        let fa = x[i];
        let round_half_away = a.signum() * (a.abs() + 0.5).floor();
        let terms = [
            a.abs().sqrt() + a.min(1.0) + a.max(-1.0) + (a * 2.0 + 3.0),
            a.exp() + (a.abs() + 1.0).ln() + a.sin() + a.cos() + ((fa * 0.1) as f64).tan(),
            a.exp2() + (a.abs() + 1.0).log2() + a.abs().powf(1.5) + 1.0 / (a.abs() + 1.0).sqrt(),
            a.floor()
                + a.ceil()
                + a.trunc()
                + round_half_away
                + (fa.round_ties_even() as f64)
                + (fa % 3.0) as f64,
            a.clamp(-2.0, 2.0)
                + (a + (1.0 - a) * 0.25)
                + if a < 0.5 { 0.0 } else { 1.0 }
                + a.signum(),
            a.sin() + a.exp() + a.abs().sqrt() + a.atan2(2.0) + a.mul_add(a, a),
            10f64.powf((fa * 0.1) as f64) + (a.abs() + 1.0).log10() + a.hypot(2.0) + a / 3.0,
        ];
        let want: f64 = terms.iter().sum();
        assert!(
            (y[i] as f64 - want).abs() <= 2e-3 * want.abs().max(1.0),
            "float_math({a}): {} vs {want}",
            y[i]
        );
    }
}
