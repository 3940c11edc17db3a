//! Types, conversions, vectors: narrow and 64-bit integers, `double` where offered,
//! saturating and rounding conversions, swizzles, 8- and 16-component vectors, `half` loads and
//! stores, against host answers.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::kernels::*;
use common::*;

// ---------------------------------------------------------------------------------------------
// Types, conversions, vectors

const TYPES: &str = r#"
__kernel void types(__global const char *c, __global const short *s, __global const long *l,
                    __global uchar4 *o4, __global short *os, __global long *ol,
                    __global char *oc) {
    size_t i = get_global_id(0);
    oc[i] = c[i] * 3 + (char)1;
    os[i] = s[i] / (short)3 + (short)c[i];
    ol[i] = l[i] * l[i] + (l[i] >> 7) + mul_hi(l[i], (long)0x123456789) + rotate(l[i], (long)13)
            + popcount(l[i]) + clz(l[i]) + ctz(l[i]);
    o4[i] = (uchar4)(c[i], s[i], l[i], (uchar)i) + convert_uchar4_sat((int4)(-5, 300, 7, 8));
}

__kernel void narrow_bits(__global const uchar *b, __global const ushort *h, __global uint *o) {
    size_t i = get_global_id(0);
    o[i * 6] = popcount(b[i]);
    o[i * 6 + 1] = clz(b[i]);
    o[i * 6 + 2] = ctz(b[i]);
    o[i * 6 + 3] = popcount(h[i]);
    o[i * 6 + 4] = clz(h[i]);
    o[i * 6 + 5] = ctz(h[i]);
}
"#;

const DOUBLES: &str = r#"
__kernel void doubles(__global const double *d, __global double *od) {
    size_t i = get_global_id(0);
    od[i] = sqrt(fabs(d[i])) + d[i] * 0.5 + fma(d[i], d[i], 1.0) + floor(d[i]);
}
"#;

#[test]
fn narrow_and_wide_integer_types_and_double() {
    let env = Env::new();
    let mut rng = Rng(21);
    let n = 500usize;
    let c: Vec<i8> = (0..n).map(|_| rng.next_u32() as i8).collect();
    let s: Vec<i16> = (0..n).map(|_| rng.next_u32() as i16).collect();
    let mut l: Vec<i64> = (0..n)
        .map(|_| {
            ((rng.next_u32() as u64) << 32 | rng.next_u32() as u64) as i64 >> (rng.next_u32() % 64)
        })
        .collect();
    l[0] = 0;
    l[1] = -1;
    let d: Vec<f64> = (0..n)
        .map(|_| (rng.next_u32() as f64 - 2e9) / 1e5)
        .collect();
    let bufs = [env.buf(&c), env.buf(&s), env.buf(&l)];
    let (o4, os, ol, oc) = (
        env.zeros::<[u8; 4]>(n),
        env.zeros::<i16>(n),
        env.zeros::<i64>(n),
        env.zeros::<i8>(n),
    );
    let k = env.kern_opts(TYPES, "-cl-std=CL3.0", "types");
    for (i, m) in bufs.iter().chain([o4, os, ol, oc].iter()).enumerate() {
        arg_mem(k, i as u32, *m);
    }
    env.run(k, &[n], None, None);
    let g4: Vec<[u8; 4]> = env.read(o4, n);
    let gs: Vec<i16> = env.read(os, n);
    let gl: Vec<i64> = env.read(ol, n);
    let gc: Vec<i8> = env.read(oc, n);
    for i in 0..n {
        assert_eq!(gc[i], (c[i] as i32 * 3 + 1) as i8, "char {i}");
        assert_eq!(gs[i], (s[i] / 3).wrapping_add(c[i] as i16), "short {i}");
        let x = l[i];
        let want = [
            x.wrapping_mul(x),
            x >> 7,
            ((x as i128 * 0x1_2345_6789) >> 64) as i64,
            x.rotate_left(13),
            x.count_ones() as i64,
            x.leading_zeros() as i64,
            x.trailing_zeros() as i64,
        ]
        .iter()
        .fold(0i64, |a, v| a.wrapping_add(*v));
        assert_eq!(gl[i], want, "long {i} of {x}");
        let v = [c[i] as u8, s[i] as u8, l[i] as u8, i as u8];
        let sat = [0u8, 255, 7, 8];
        let want: [u8; 4] = std::array::from_fn(|j| v[j].wrapping_add(sat[j]));
        assert_eq!(g4[i], want, "uchar4 {i}");
    }

    // double: computed where the device reports cl_khr_fp64, a build error elsewhere.
    for std in ["-cl-std=CL3.0", "-cl-std=CL1.2"] {
        let Some(p) = build_doubles(&env, DOUBLES, std) else {
            continue;
        };
        let (md, od) = (env.buf(&d), env.zeros::<f64>(n));
        let k = env.kernel(p, "doubles");
        arg_mem(k, 0, md);
        arg_mem(k, 1, od);
        env.run(k, &[n], None, None);
        let gd: Vec<f64> = env.read(od, n);
        for i in 0..n {
            let y = d[i];
            let want = y.abs().sqrt() + y * 0.5 + y.mul_add(y, 1.0) + y.floor();
            assert!(
                (gd[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
                "double {i}: {} vs {want}",
                gd[i]
            );
        }
    }

    let b: Vec<u8> = (0..256).map(|x| x as u8).collect();
    let h: Vec<u16> = (0..256)
        .map(|x| {
            if x < 17 {
                1u16 << (x % 16)
            } else {
                rng.next_u32() as u16
            }
        })
        .collect();
    let (mb, mh, mo) = (env.buf(&b), env.buf(&h), env.zeros::<u32>(256 * 6));
    let k = env.kern_opts(TYPES, "-cl-std=CL3.0", "narrow_bits");
    arg_mem(k, 0, mb);
    arg_mem(k, 1, mh);
    arg_mem(k, 2, mo);
    env.run(k, &[256], None, None);
    let got: Vec<u32> = env.read(mo, 256 * 6);
    for i in 0..256 {
        let want = [
            b[i].count_ones(),
            b[i].leading_zeros(),
            b[i].trailing_zeros(),
            h[i].count_ones(),
            h[i].leading_zeros(),
            h[i].trailing_zeros(),
        ];
        assert_eq!(&got[i * 6..i * 6 + 6], &want, "bits of {} / {}", b[i], h[i]);
    }
}

const CONVERSIONS: &str = r#"
__kernel void conv(__global const float *f, __global int *oi, __global uint *ou, __global float *of) {
    size_t i = get_global_id(0);
    float x = f[i];
    oi[i * 5] = convert_int_sat(x * 1e9f);
    oi[i * 5 + 1] = convert_int_rtn(x);
    oi[i * 5 + 2] = convert_int_sat_rtp(x);
    oi[i * 5 + 3] = as_int(x);
    oi[i * 5 + 4] = convert_int_rte(x);
    ou[i * 4] = convert_uint_sat(x);
    ou[i * 4 + 1] = convert_uchar_sat(x * 100.0f);
    ou[i * 4 + 2] = convert_char_sat((int)(x * 100.0f));
    ou[i * 4 + 3] = convert_ushort_sat(as_int(x) >> 12);
    of[i * 3] = convert_float((int)i);
    of[i * 3 + 1] = as_float(as_uint(x) ^ 0x80000000u);
    of[i * 3 + 2] = (float)(ulong)(i * 1000000007ul);
}
"#;

#[test]
fn conversions_saturate_and_round() {
    let env = Env::new();
    let mut rng = Rng(22);
    let mut x = random_f32(&mut rng, 200, -5.0, 5.0);
    x.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e10,
        -1e10,
        0.5,
        -0.5,
        2.5,
        -2.5,
        3e9,
        4.5e9,
        2147483520.0,
        0.0,
        -0.0,
    ]);
    let n = x.len();
    let (mx, mi, mu, mf) = (
        env.buf(&x),
        env.zeros::<i32>(n * 5),
        env.zeros::<u32>(n * 4),
        env.zeros::<f32>(n * 3),
    );
    let k = env.kern(CONVERSIONS, "conv");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, mi);
    arg_mem(k, 2, mu);
    arg_mem(k, 3, mf);
    env.run(k, &[n], None, None);
    let (gi, gu, gf): (Vec<i32>, Vec<u32>, Vec<f32>) = (
        env.read(mi, n * 5),
        env.read(mu, n * 4),
        env.read(mf, n * 3),
    );
    for i in 0..n {
        let v = x[i];
        // Rust's float -> int `as` saturates and maps NaN to 0, like OpenCL's _sat.
        let rte = if v.is_finite() && v.abs() < 2e9 {
            Some(v.round_ties_even() as i32)
        } else {
            None
        };
        assert_eq!(gi[i * 5], (v * 1e9) as i32, "convert_int_sat({v} * 1e9)");
        if v.is_finite() && v.abs() < 2e9 {
            assert_eq!(gi[i * 5 + 1], v.floor() as i32, "convert_int_rtn({v})");
        }
        assert_eq!(gi[i * 5 + 2], v.ceil() as i32, "convert_int_sat_rtp({v})");
        assert_eq!(gi[i * 5 + 3], v.to_bits() as i32, "as_int({v})");
        if let Some(r) = rte {
            assert_eq!(gi[i * 5 + 4], r, "convert_int_rte({v})");
        }
        assert_eq!(gu[i * 4], v as u32, "convert_uint_sat({v})");
        assert_eq!(
            gu[i * 4 + 1],
            (v * 100.0) as u8 as u32,
            "convert_uchar_sat({v} * 100)"
        );
        if v.is_finite() && v.abs() < 2e7 {
            let c = ((v * 100.0) as i32).clamp(-128, 127) as i8;
            assert_eq!(
                gu[i * 4 + 2],
                c as i32 as u32,
                "convert_char_sat((int)({v} * 100))"
            );
        }
        assert_eq!(
            gu[i * 4 + 3],
            ((v.to_bits() as i32) >> 12).clamp(0, 65535) as u32,
            "convert_ushort_sat of {v}"
        );
        assert_eq!(gf[i * 3], i as f32);
        assert_eq!(gf[i * 3 + 1].to_bits(), v.to_bits() ^ 0x8000_0000);
        assert_eq!(gf[i * 3 + 2], (i as u64 * 1_000_000_007) as f32);
    }
}

const VECTORS: &str = r#"
__kernel void vecs(__global const int4 *a, __global const uint4 *m, __global int4 *o, __global int *oi) {
    size_t i = get_global_id(0);
    int4 x = a[i];
    o[i * 3] = shuffle(x, m[i]);
    o[i * 3 + 1] = shuffle2(x, x.wzyx + 100, m[i]);
    o[i * 3 + 2] = (x.zwxy * 2 - x) >> 1;
    oi[i] = any(x < 0) + all(x > -100) * 2 + (x.x > x.y ? 4 : 0) + (int)dot(convert_float4(x), (float4)(1.0f));
}
"#;

#[test]
fn vector_swizzles_and_shuffles() {
    let env = Env::new();
    let mut rng = Rng(23);
    let n = 300usize;
    let a: Vec<[i32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 400) as i32 - 200))
        .collect();
    let m: Vec<[u32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.next_u32()))
        .collect();
    let (ma, mm, mo, mi) = (
        env.buf(&a),
        env.buf(&m),
        env.zeros::<[i32; 4]>(n * 3),
        env.zeros::<i32>(n),
    );
    let k = env.kern(VECTORS, "vecs");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mm);
    arg_mem(k, 2, mo);
    arg_mem(k, 3, mi);
    env.run(k, &[n], None, None);
    let (go, gi): (Vec<[i32; 4]>, Vec<i32>) = (env.read(mo, n * 3), env.read(mi, n));
    for i in 0..n {
        let x = a[i];
        let y = [x[3] + 100, x[2] + 100, x[1] + 100, x[0] + 100];
        let sh: [i32; 4] = std::array::from_fn(|j| x[(m[i][j] & 3) as usize]);
        let sh2: [i32; 4] = std::array::from_fn(|j| {
            let k = (m[i][j] & 7) as usize;
            if k < 4 {
                x[k]
            } else {
                y[k - 4]
            }
        });
        let sw = [x[2], x[3], x[0], x[1]];
        let ar: [i32; 4] = std::array::from_fn(|j| (sw[j] * 2 - x[j]) >> 1);
        assert_eq!(go[i * 3], sh, "shuffle {i}");
        assert_eq!(go[i * 3 + 1], sh2, "shuffle2 {i}");
        assert_eq!(go[i * 3 + 2], ar, "swizzle {i}");
        let want = x.iter().any(|v| *v < 0) as i32
            + x.iter().all(|v| *v > -100) as i32 * 2
            + if x[0] > x[1] { 4 } else { 0 }
            + x.iter().sum::<i32>();
        assert_eq!(gi[i], want, "any/all/dot {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Wide vectors

const WIDE: &str = include_str!("../src/compiler/testdata/wide.cl");

#[test]
fn vectors_of_8_and_16_components() {
    let env = Env::new();
    let mut rng = Rng(31);
    let p = env.build(WIDE);

    let n = 64usize;
    let a: Vec<[f32; 8]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.next_f32() * 8.0 - 4.0))
        .collect();
    let (ma, mb) = (env.buf(&a), env.zeros::<[f32; 8]>(n));
    let k = env.kernel(p, "wide_vectors");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    env.run(k, &[n], None, None);
    let got: Vec<[f32; 8]> = env.read(mb, n);
    for i in 0..n {
        let want: [f32; 8] = std::array::from_fn(|j| a[i][j] * 2.0 + a[i][7 - j]);
        assert_eq!(got[i], want, "wide_vectors {i}");
    }

    let x: Vec<[i32; 16]> = (0..n)
        .map(|i| {
            std::array::from_fn(|j| {
                if i % 7 == 3 && j == 5 {
                    -2_000_000
                } else {
                    (rng.next_u32() % 2000) as i32 - 1000
                }
            })
        })
        .collect();
    let f = random_f32(&mut rng, n * 8, -9.0, 9.0);
    let s: [f32; 8] = std::array::from_fn(|j| j as f32 * 0.5);
    let kk = 21u32;
    let (mx, mf, mo, mfo, mfl) = (
        env.buf(&x),
        env.buf(&f),
        env.zeros::<[i32; 16]>(n * 3),
        env.zeros::<[f32; 8]>(n + 64),
        env.zeros::<i32>(n),
    );
    let k = env.kernel(p, "wide_mix");
    for (idx, m) in [mx, mf, mo, mfo, mfl].iter().enumerate() {
        arg_mem(k, idx as u32, *m);
    }
    set_arg(k, 5, &s);
    set_arg(k, 6, &kk);
    env.run(k, &[n], Some(&[16]), None);
    let out: Vec<[i32; 16]> = env.read(mo, n * 3);
    let fo: Vec<[f32; 8]> = env.read(mfo, n + 64);
    let flags: Vec<i32> = env.read(mfl, n);
    for i in 0..n {
        let xv = x[i];
        let y: [i32; 16] = std::array::from_fn(|j| (i + j) as i32);
        let sel: [i32; 16] = std::array::from_fn(|j| {
            (if xv[j] > y[j] { y[j] } else { xv[j] })
                .wrapping_mul(3)
                .wrapping_sub(xv[j] >> 2)
        });
        assert_eq!(out[i * 3], sel, "select/shift {i}");
        let mix: [i32; 16] = std::array::from_fn(|j| {
            xv[15 - j]
                .wrapping_add(xv[j])
                .wrapping_add(xv[j].wrapping_sub(y[j]).unsigned_abs() as i32)
        });
        assert_eq!(out[i * 3 + 1], mix, "swizzles/abs {i}");
        let mut z = xv;
        z[(kk & 15) as usize] = -1;
        assert_eq!(out[i * 3 + 2], z, "dynamic insert {i}");
        let w: [f32; 8] =
            std::array::from_fn(|j| f[i * 8 + j].abs().sqrt() + xv[2 * j] as f32 + s[j]);
        for j in 0..8 {
            assert_close(fo[i][j], w[j], 1e-6, &format!("float8 {i}.{j}"));
            assert_close(fo[i + 64][j], w[j] * 2.0, 1e-6, &format!("vstore8 {i}.{j}"));
        }
        let want = xv.iter().any(|v| *v < 0) as i32
            + xv.iter().all(|v| *v > -1_000_000) as i32 * 2
            + xv[(kk & 15) as usize] * 4;
        assert_eq!(flags[i], want, "any/all/dynamic extract {i}");
    }
}

const WIDE_TYPES: &str = r#"
__kernel void wide_types(__global const char16 *c, __global uchar16 *o, __global long8 *l,
                         __global long8 *w, __global const int8 *m) {
    size_t i = get_global_id(0);
    int16 wide = convert_int16(c[i]) * 1000;
    o[i] = convert_uchar16_sat(wide);
    l[i] = convert_long8(c[i].lo) << 40;
    w[i] = convert_long8(c[i].hi) * -3;
    int8 s = shuffle(m[i], as_uint8(m[i]));
    o[i] += convert_uchar16(shuffle2(s, s, (uint16)(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)));
    int16 f = vload16(i, (__global const int *)w);
    vstore16(f, i, (__global int *)l);
}
"#;

const WIDE_DOUBLES: &str = r#"
__kernel void wide_doubles(__global const char16 *c, __global double8 *d, __global long8 *l) {
    size_t i = get_global_id(0);
    l[i] = convert_long8(c[i].lo) << 40;
    d[i] = convert_double8(c[i].hi) * 0.5;
    float16 f = vload16(i, (__global const float *)d);
    vstore16(f, i, (__global float *)l);
}
"#;

#[test]
fn wide_vectors_of_narrow_and_64_bit_types() {
    let env = Env::new();
    let mut rng = Rng(32);
    let n = 48usize;
    let c: Vec<[i8; 16]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.next_u32() as i8))
        .collect();
    let m: Vec<[i32; 8]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 1000) as i32 - 500))
        .collect();
    let (mc, mo, ml, mw, mm) = (
        env.buf(&c),
        env.zeros::<[u8; 16]>(n),
        env.zeros::<[i64; 8]>(n),
        env.zeros::<[i64; 8]>(n),
        env.buf(&m),
    );
    let k = env.kern(WIDE_TYPES, "wide_types");
    for (idx, b) in [mc, mo, ml, mw, mm].iter().enumerate() {
        arg_mem(k, idx as u32, *b);
    }
    env.run(k, &[n], None, None);
    let o: Vec<[u8; 16]> = env.read(mo, n);
    let l: Vec<[i64; 8]> = env.read(ml, n);
    let w: Vec<[i64; 8]> = env.read(mw, n);
    for i in 0..n {
        let s: [i32; 8] = std::array::from_fn(|j| m[i][(m[i][j] & 7) as usize]);
        let want: [u8; 16] = std::array::from_fn(|j| {
            let sat = (c[i][j] as i32 * 1000).clamp(0, 255) as u8;
            sat.wrapping_add(s[(15 - j) & 7] as u8)
        });
        assert_eq!(o[i], want, "uchar16 {i}");
        let ww: [i64; 8] = std::array::from_fn(|j| c[i][8 + j] as i64 * -3);
        assert_eq!(w[i], ww, "long8 {i}");
        assert_eq!(l[i], ww, "long8 overwritten by vstore16 {i}");
    }

    // double8: computed where the device reports cl_khr_fp64, a build error elsewhere.
    let Some(p) = build_doubles(&env, WIDE_DOUBLES, "") else {
        return;
    };
    let (md, ml) = (env.zeros::<[f64; 8]>(n), env.zeros::<[i64; 8]>(n));
    let k = env.kernel(p, "wide_doubles");
    for (idx, b) in [mc, md, ml].iter().enumerate() {
        arg_mem(k, idx as u32, *b);
    }
    env.run(k, &[n], None, None);
    let d: Vec<[f64; 8]> = env.read(md, n);
    let l: Vec<[i64; 8]> = env.read(ml, n);
    for i in 0..n {
        let dw: [f64; 8] = std::array::from_fn(|j| c[i][8 + j] as f64 * 0.5);
        assert_eq!(d[i], dw, "double8 {i}");
        let lw: [i64; 8] = std::array::from_fn(|j| dw[j].to_bits() as i64);
        assert_eq!(l[i], lw, "long8 overwritten by vstore16 {i}");
    }
}

const WIDE_PRIVATE: &str = r#"
__kernel void wide_private(__global const float8 *in, __global float8 *out, __global int16 *io, int k) {
    float8 acc[3];
    __local int16 tile[16];
    size_t l = get_local_id(0);
    for (int i = 0; i < 3; i++)
        acc[i] = in[get_global_id(0) * 3 + i];
    acc[k % 3] *= 2.0f;
    acc[(k + 1) % 3].s3 = -1.0f;
    out[get_global_id(0)] = acc[0] + acc[1] + acc[2];
    tile[l] = (int16)((int)l) + (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    barrier(CLK_LOCAL_MEM_FENCE);
    io[get_global_id(0)] = tile[15 - l];
}
"#;

#[test]
fn wide_vectors_in_private_and_local_arrays() {
    let env = Env::new();
    let mut rng = Rng(40);
    let n = 32usize;
    let input: Vec<[f32; 8]> = (0..n * 3)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 50) as f32))
        .collect();
    let k = env.kern(WIDE_PRIVATE, "wide_private");
    for kk in [0i32, 1, 5] {
        let (mi, mo, mio) = (
            env.buf(&input),
            env.zeros::<[f32; 8]>(n),
            env.zeros::<[i32; 16]>(n),
        );
        arg_mem(k, 0, mi);
        arg_mem(k, 1, mo);
        arg_mem(k, 2, mio);
        set_arg(k, 3, &kk);
        env.run(k, &[n], Some(&[16]), None);
        let (out, io): (Vec<[f32; 8]>, Vec<[i32; 16]>) = (env.read(mo, n), env.read(mio, n));
        for g in 0..n {
            let mut acc = [input[g * 3], input[g * 3 + 1], input[g * 3 + 2]];
            for v in acc[(kk % 3) as usize].iter_mut() {
                *v *= 2.0;
            }
            acc[((kk + 1) % 3) as usize][3] = -1.0;
            let want: [f32; 8] = std::array::from_fn(|j| acc[0][j] + acc[1][j] + acc[2][j]);
            assert_eq!(out[g], want, "private float8 {g}, k {kk}");
            let l = 15 - g % 16;
            let want: [i32; 16] = std::array::from_fn(|j| (l + j) as i32);
            assert_eq!(io[g], want, "local int16 {g}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Half loads and stores, directed rounding

const HALVES: &str = r#"
__kernel void halves(__global const float *in, __global half *h, __global float *out,
                     __global half *h4) {
    size_t i = get_global_id(0);
    vstore_half(in[i], i, h);
    out[i * 2] = vload_half(i, (__global const half *)h);
    float4 v = (float4)(in[i], -in[i], in[i] * 2.0f, 0.5f);
    vstore_half4(v, i, h4);
    float4 w = vload_half4(i, (__global const half *)h4);
    out[i * 2 + 1] = w.x + w.y + w.z + w.w;
}
"#;

#[test]
fn half_loads_and_stores() {
    let env = Env::new();
    let n = 256usize;
    // Values exactly representable in half, so the round trip is exact.
    let input: Vec<f32> = (0..n).map(|i| (i as f32 - 128.0) * 0.25).collect();
    let (mi, mh, mo, mh4) = (
        env.buf(&input),
        env.zeros::<u16>(n),
        env.zeros::<f32>(n * 2),
        env.zeros::<u16>(n * 4),
    );
    let k = env.kern(HALVES, "halves");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mh);
    arg_mem(k, 2, mo);
    arg_mem(k, 3, mh4);
    env.run(k, &[n], None, None);
    let (h, out): (Vec<u16>, Vec<f32>) = (env.read(mh, n), env.read(mo, n * 2));
    for i in 0..n {
        let x = input[i];
        // IEEE half: sign, 5-bit exponent (bias 15), 10-bit mantissa.
        let bits = h[i];
        let mag = if bits & 0x7fff == 0 {
            0.0
        } else {
            let e = ((bits >> 10) & 31) as i32 - 15;
            (1.0 + (bits & 1023) as f32 / 1024.0) * 2f32.powi(e)
        };
        let v = if bits & 0x8000 != 0 { -mag } else { mag };
        assert_eq!(v, x, "vstore_half({x}) = {bits:#06x}");
        assert_eq!(out[i * 2], x, "vload_half {i}");
        assert_eq!(out[i * 2 + 1], x * 2.0 + 0.5, "vload_half4 {i}");
    }
}

/// `convert_float_rtp/rtn/rtz` of `int`, `uint`, `long` and `ulong` (scalar, 4 and 8
/// components): the conversion itself rounds to nearest, the directed modes are made from it
/// (CTS conversions `convert_floatn_rtp(uintn)` and friends). Host: round to nearest, then one
/// step towards the mode when that passed the exact value (compared in i128).
#[test]
fn int_to_float_with_directed_rounding() {
    let env = Env::new();
    let types = [
        ("int", true),
        ("uint", false),
        ("long", true),
        ("ulong", false),
    ];
    let mut src = String::new();
    for (t, _) in types {
        for m in ["rtp", "rtn", "rtz"] {
            src += &format!(
                "__kernel void {t}_{m}(__global const {t} *x, __global float *a,\n\
                                      __global float *b, __global float *c) {{\n\
                     size_t i = get_global_id(0);\n\
                     a[i] = convert_float_{m}(x[i]);\n\
                     vstore4(convert_float4_{m}(vload4(i, x)), i, b);\n\
                     vstore8(convert_float8_{m}(vload8(i, x)), i, c);\n\
                 }}\n"
            );
        }
    }
    let p = env.build(&src);
    let mut rng = Rng(0xf10a);
    let n = 64usize;
    let bits: Vec<u32> = (0..n * 8)
        .map(|k| match k % 4 {
            0 => rng.next_u32(),
            1 => 0x8000_0000u32
                .wrapping_add(rng.next_u32() % 16)
                .wrapping_sub(8),
            2 => 0xffff_ff00 | (rng.next_u32() & 0xff),
            _ => rng.next_u32() >> (rng.next_u32() % 32),
        })
        .collect();
    let wide: Vec<u64> = (0..n * 8)
        .map(|k| {
            let r = ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64;
            match k % 4 {
                0 => r,
                1 => (1u64 << 63).wrapping_add(r % 16).wrapping_sub(8),
                2 => u64::MAX - (r & 0xff),
                _ => r >> (r % 64),
            }
        })
        .collect();
    let step = |f: f32, up: bool| -> f32 {
        let b = f.to_bits();
        f32::from_bits(if (f > 0.0) == up { b + 1 } else { b - 1 })
    };
    let (xb, xw) = (env.buf(&bits), env.buf(&wide));
    for (t, signed) in types {
        for m in ["rtp", "rtn", "rtz"] {
            let name = format!("{t}_{m}");
            let k = env.kernel(p, &name);
            let outs = [
                env.zeros::<f32>(n),
                env.zeros::<f32>(n * 4),
                env.zeros::<f32>(n * 8),
            ];
            arg_mem(k, 0, if t.contains("long") { xw } else { xb });
            for (j, o) in outs.iter().enumerate() {
                arg_mem(k, j as u32 + 1, *o);
            }
            env.run(k, &[n], None, None);
            for (j, len) in [n, n * 4, n * 8].into_iter().enumerate() {
                let got: Vec<f32> = env.read(outs[j], len);
                for i in 0..len {
                    let (x, near): (i128, f32) = match (t, signed) {
                        ("int", _) => (bits[i] as i32 as i128, bits[i] as i32 as f32),
                        ("uint", _) => (bits[i] as i128, bits[i] as f32),
                        (_, true) => (wide[i] as i64 as i128, wide[i] as i64 as f32),
                        _ => (wide[i] as i128, wide[i] as f32),
                    };
                    let nearx = near as f64 as i128;
                    let want = match m {
                        "rtp" if nearx < x => step(near, true),
                        "rtn" if nearx > x => step(near, false),
                        "rtz" if nearx.abs() > x.abs() => step(near, near < 0.0),
                        _ => near,
                    };
                    assert_eq!(got[i], want, "{name} width {len}: {x}");
                }
            }
            unsafe {
                for o in outs {
                    cl!(clReleaseMemObject)(o);
                }
                cl!(clReleaseKernel)(k);
            }
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(xb);
        cl!(clReleaseMemObject)(xw);
    }
}
