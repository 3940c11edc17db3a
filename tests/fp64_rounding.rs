//! `double` rounding to integral values at every magnitude: `rint`, `trunc`, `round`,
//! `floor`, `ceil`, `modf`, `convert_long_rte` and the round trip `(double)(long)x`, scalar
//! and `double2`, against the host.
//!
//! llvmpipe's own `double` rounding is wrong on host CPUs without AVX-512 (values above 2^24
//! keep their fraction, halfway cases round down; `compiler/lower/f64round.rs`), so CI also
//! runs this file with `GALLIUM_OVERRIDE_CPU_CAPS=avx`, which hides AVX-512 from llvmpipe on
//! any host. Skips (passing) where the device does not report `cl_khr_fp64`.
mod common;
use common::*;

/// Values around every power of two from 2^-2 to 2^62: exact halves, near-halves, integers,
/// both signs; zeros, infinities and NaN.
fn values(rng: &mut Rng) -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        0.3,
        -0.3,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        3.5,
        -2.5,
        -3.5,
        1663934893.5471,
        -1663934893.5471,
        16777217.5,
        4503599627370495.5,
        -4503599627370495.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for e in -2..=62 {
        let p = 2f64.powi(e);
        for _ in 0..6 {
            let frac = f64::from(rng.next_u32()) / 2f64.powi(32);
            let x = p * (1.0 + frac);
            let half = (x.floor() + 0.5).min(x * 2.0);
            for y in [x, half, x.floor()] {
                v.push(y);
                v.push(-y);
            }
        }
    }
    v
}

#[test]
fn fp64_rounding_to_integral_values_at_every_magnitude() {
    let env = Env::new();
    if !env.has_extension("cl_khr_fp64") {
        eprintln!("skipped: the device does not report cl_khr_fp64");
        return;
    }
    let mut rng = Rng(0xf64);
    let x = values(&mut rng);
    let n = x.len();
    assert_eq!(n % 2, 0);
    // Per value: rint, trunc, round, floor, ceil, modf's integral part, convert_long_rte,
    // (double)(long)x (|x| < 2^62 only), then the same four of double2.
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
        __kernel void k(__global double *o, __global long *l, __global const double *x) {\n\
          size_t i = get_global_id(0); double v = x[i]; double ip;\n\
          o[10*i] = rint(v); o[10*i+1] = trunc(v); o[10*i+2] = round(v);\n\
          o[10*i+3] = floor(v); o[10*i+4] = ceil(v); modf(v, &ip); o[10*i+5] = ip;\n\
          l[2*i] = convert_long_sat_rte(v);\n\
          o[10*i+6] = fabs(v) < 0x1p62 ? (double)(long)v : v;\n\
          if ((i & 1) == 0) {\n\
            double2 w = vload2(i / 2, x);\n\
            vstore2(rint(w), 0, o + 10*i + 7); \n\
            double2 t = trunc(w); o[10*i+9] = t.x; o[10*i+19] = t.y;\n\
            long2 r = convert_long2_sat_rte(w); l[2*i+1] = r.x; l[2*i+3] = r.y;\n\
          }\n\
        }\n";
    let p = env.build(src);
    let k = env.kernel(p, "k");
    let o = env.buffer(CL_MEM_WRITE_ONLY, n * 80, None);
    let l = env.buffer(CL_MEM_WRITE_ONLY, n * 16, None);
    let xin = env.buffer(CL_MEM_READ_ONLY, n * 8, Some(bytes(&x)));
    set_arg(k, 0, &o);
    set_arg(k, 1, &l);
    set_arg(k, 2, &xin);
    env.run(k, &[n], None, None);
    let g: Vec<f64> = env.read(o, n * 10);
    let gl: Vec<i64> = env.read(l, n * 2);
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let sat = |r: f64| if r.is_nan() { 0 } else { r as i64 };
    let mut bad = Vec::new();
    for (j, &v) in x.iter().enumerate() {
        let away = if (v - v.trunc()).abs() >= 0.5 {
            v.trunc() + v.signum()
        } else {
            v.trunc()
        };
        let rte = v.round_ties_even();
        let want = [
            ("rint", rte),
            ("trunc", v.trunc()),
            ("round", away),
            ("floor", v.floor()),
            ("ceil", v.ceil()),
            ("modf", v.trunc()),
            (
                "(double)(long)",
                if v.abs() < 2f64.powi(62) {
                    (v as i64) as f64
                } else {
                    v
                },
            ),
        ];
        for (m, (name, w)) in want.iter().enumerate() {
            if !same(g[10 * j + m], *w) {
                bad.push(format!("{name}({v:e}) = {:e}, want {w:e}", g[10 * j + m]));
            }
        }
        if gl[2 * j] != sat(rte) {
            bad.push(format!(
                "convert_long_sat_rte({v:e}) = {}, want {}",
                gl[2 * j],
                sat(rte)
            ));
        }
        let pair = j & !1;
        let lane = j & 1;
        let (vr, vt) = if lane == 0 {
            (g[10 * pair + 7], g[10 * pair + 9])
        } else {
            (g[10 * pair + 8], g[10 * pair + 19])
        };
        if !same(vr, rte) || !same(vt, v.trunc()) {
            bad.push(format!("double2 rint/trunc({v:e}) = {vr:e}/{vt:e}"));
        }
        if gl[2 * pair + 1 + 2 * lane] != sat(rte) {
            bad.push(format!(
                "convert_long2_sat_rte({v:e}) = {}",
                gl[2 * pair + 1 + 2 * lane]
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} results wrong, first: {:?}",
        bad.len(),
        n * 11,
        &bad[..bad.len().min(8)]
    );
}
