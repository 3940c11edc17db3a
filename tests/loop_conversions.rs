//! Saturating and rounding conversions whose result is used before the conversion in the
//! translator's order (a loop-carried value read at the top of the next iteration, or a
//! value stored in an exit block laid out before the loop's latch), against host answers.
//! llvm-spirv-15 dropped their `SaturatedConversion` / `FPRoundingMode` decorations there
//! (`src/compiler/fwdconv.rs`): `convert_int_sat` became a truncation, `convert_int_rtp` a
//! truncation toward zero, `convert_float_rtz` a rounding to nearest (difftest seed 400610).
mod common;
use common::*;

/// Conversions per input element (outputs of the kernel below, in order).
const K: usize = 14;
/// Work-items, and input elements each converts (loop iterations).
const G: usize = 64;
const ITER: usize = 4;

const SRC: &str = r#"
__kernel void k(__global uint *out, __global const long *L, __global const float *F,
                __global const float *R, int n) {
  uint base = (uint)get_global_id(0) * (uint)n;
  int a0 = 0, a4 = 0, a6 = 0, a7 = 0, a8 = 0, a13 = 0;
  uint a1 = 0u, a5 = 0u;
  short a2 = 0;
  uchar a3 = 0;
  float a9 = 0.0f, a10 = 0.0f, a11 = 0.0f;
  short2 a12 = (short2)(0);
  for (int j = 0; j < n; j++) {
    if (j > 0) {
      __global uint *o = out + (base + (uint)j - 1u) * 14u;
      o[0] = (uint)a0; o[1] = a1; o[2] = (uint)(int)a2; o[3] = (uint)a3;
      o[4] = (uint)a4; o[5] = a5; o[6] = (uint)a6; o[7] = (uint)a7; o[8] = (uint)a8;
      o[9] = as_uint(a9); o[10] = as_uint(a10); o[11] = as_uint(a11);
      o[12] = as_uint(a12); o[13] = (uint)a13;
    }
    long l = L[base + (uint)j];
    float f = F[base + (uint)j];
    float r = R[base + (uint)j];
    int i = (int)l;
    a0 = convert_int_sat(l);
    a1 = convert_uint_sat(as_ulong(l));
    a2 = convert_short_sat(i);
    a3 = convert_uchar_sat((uint)i);
    a4 = convert_int_sat(f);
    a5 = convert_uint_sat(f);
    a6 = convert_int_rtp(r);
    a7 = convert_int_rtn(r);
    a8 = convert_int_rte(r);
    a9 = convert_float_rtz(i);
    a10 = convert_float_rtp(i);
    a11 = convert_float_rtn(l);
    a12 = convert_short2_sat((int2)(i, (int)(l >> 32)));
    a13 = convert_int_sat_rte(f);
  }
  __global uint *o = out + (base + (uint)n - 1u) * 14u;
  o[0] = (uint)a0; o[1] = a1; o[2] = (uint)(int)a2; o[3] = (uint)a3;
  o[4] = (uint)a4; o[5] = a5; o[6] = (uint)a6; o[7] = (uint)a7; o[8] = (uint)a8;
  o[9] = as_uint(a9); o[10] = as_uint(a10); o[11] = as_uint(a11);
  o[12] = as_uint(a12); o[13] = (uint)a13;
}
"#;

/// The next `f32` above (`up`) or below `f` (finite, or an infinity for the largest).
fn step(f: f32, up: bool) -> f32 {
    if f == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = f.to_bits();
    // Away from zero when the direction and the sign agree.
    let away = up == (f > 0.0);
    f32::from_bits(if away { b + 1 } else { b - 1 })
}

/// `x` to `f32` rounded toward zero (`mode` 'z'), up ('p') or down ('n'); exact for every
/// `i64` (compared in `i128`).
fn int_to_float(x: i64, mode: char) -> f32 {
    let f = x as f32; // to nearest
    let v = f as i128; // |f| <= 2^63: exact
    let x = x as i128;
    match mode {
        'z' if v.abs() > x.abs() => step(f, f < 0.0),
        'p' if v < x => step(f, true),
        'n' if v > x => step(f, false),
        _ => f,
    }
}

/// `f` rounded to an integer by `mode` ('p', 'n', 'e' to even, 'z'), NaN to 0, then clamped to
/// `[lo, hi]`.
fn float_to_int(f: f32, mode: char, lo: f64, hi: f64) -> i64 {
    if f.is_nan() {
        return 0;
    }
    let f = f as f64;
    let r = match mode {
        'p' => f.ceil(),
        'n' => f.floor(),
        'e' => f.round_ties_even(),
        _ => f.trunc(),
    };
    r.clamp(lo, hi) as i64
}

/// The kernel's 14 outputs for one input element (`l`, `f`, `r`).
fn expected(l: i64, f: f32, r: f32) -> [u32; K] {
    let i = l as i32;
    let (imin, imax) = (i32::MIN as f64, i32::MAX as f64);
    let s = |v: i32| v.clamp(i16::MIN as i32, i16::MAX as i32) as i16 as u16 as u32;
    [
        l.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32,
        (l as u64).min(u32::MAX as u64) as u32,
        s(i) as i16 as i32 as u32,
        (i as u32).min(255),
        float_to_int(f, 'z', imin, imax) as i32 as u32,
        float_to_int(f, 'z', 0.0, u32::MAX as f64) as u32,
        float_to_int(r, 'p', imin, imax) as i32 as u32,
        float_to_int(r, 'n', imin, imax) as i32 as u32,
        float_to_int(r, 'e', imin, imax) as i32 as u32,
        int_to_float(i as i64, 'z').to_bits(),
        int_to_float(i as i64, 'p').to_bits(),
        int_to_float(l, 'n').to_bits(),
        s(i) | (s((l >> 32) as i32) << 16),
        float_to_int(f, 'e', imin, imax) as i32 as u32,
    ]
}

/// Inputs: edge values first, then random ones (`l` of all magnitudes, `f` of any bits, `r`
/// within `int`'s range after any rounding).
fn inputs() -> (Vec<i64>, Vec<f32>, Vec<f32>) {
    let n = G * ITER;
    let mut ls: Vec<i64> = vec![
        0,
        1,
        -1,
        -741444014703483050,
        i32::MAX as i64,
        i32::MAX as i64 + 1,
        i32::MIN as i64,
        i32::MIN as i64 - 1,
        u32::MAX as i64,
        u32::MAX as i64 + 1,
        i64::MAX,
        i64::MIN,
        32767,
        32768,
        -32768,
        -32769,
        255,
        256,
        16777217,
        -16777217,
        (1 << 53) + 1,
        -(1 << 53) - 1,
        0x7fff_ff80_0000_0001,
        -0x7fff_ff80_0000_0001,
    ];
    let mut fs: Vec<f32> = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        4294967040.0,
        4294967296.0,
        1e20,
        -1e20,
        -0.75,
        3.999_999_8,
    ];
    let mut rs: Vec<f32> = vec![
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.0,
        -0.0,
        1e-3,
        -1e-3,
        2147483520.0,
        -2147483648.0,
        -2147483520.5,
        8388607.5,
        -8388607.5,
        1234.25,
        -1234.75,
    ];
    let mut rng = Rng(0x10c0_4061_0bad_5eed);
    while ls.len() < n {
        let hi = rng.next_u32() as u64;
        let lo = rng.next_u32() as u64;
        let v = ((hi << 32) | lo) as i64;
        // A third of full width, the others within 2^40 and 2^20.
        ls.push(match ls.len() % 3 {
            0 => v,
            1 => v >> 24,
            _ => v >> 44,
        });
    }
    while fs.len() < n {
        let b = rng.next_u32();
        fs.push(if fs.len() % 2 == 0 {
            f32::from_bits(b)
        } else {
            (b as i32) as f32 * (1.0 + rng.next_f32()) + rng.next_f32()
        });
    }
    while rs.len() < n {
        let v = (rng.next_u32() as i32 >> (rng.next_u32() % 24)) as f32;
        let frac = [0.0f32, 0.25, 0.5, 0.75][rs.len() % 4];
        rs.push((v + frac).clamp(-2147483520.0, 2147483520.0));
    }
    (ls, fs, rs)
}

#[test]
fn loop_carried_saturating_and_rounding_conversions() {
    let (ls, fs, rs) = inputs();
    let n = G * ITER;
    let e = Env::new();
    let k = e.kern(SRC, "k");
    let out = e.zeros::<u32>(n * K);
    let (lb, fb, rb) = (e.buf(&ls), e.buf(&fs), e.buf(&rs));
    arg_mem(k, 0, out);
    arg_mem(k, 1, lb);
    arg_mem(k, 2, fb);
    arg_mem(k, 3, rb);
    set_arg(k, 4, &(ITER as i32));
    e.run(k, &[G], Some(&[16]), None);
    let got = e.read::<u32>(out, n * K);
    let names = [
        "convert_int_sat(long)",
        "convert_uint_sat(ulong)",
        "convert_short_sat(int)",
        "convert_uchar_sat(uint)",
        "convert_int_sat(float)",
        "convert_uint_sat(float)",
        "convert_int_rtp(float)",
        "convert_int_rtn(float)",
        "convert_int_rte(float)",
        "convert_float_rtz(int)",
        "convert_float_rtp(int)",
        "convert_float_rtn(long)",
        "convert_short2_sat(int2)",
        "convert_int_sat_rte(float)",
    ];
    let mut wrong = Vec::new();
    for x in 0..n {
        let want = expected(ls[x], fs[x], rs[x]);
        for c in 0..K {
            if got[x * K + c] != want[c] {
                wrong.push(format!(
                    "{} of l={} f={:e} r={}: got {:#x}, want {:#x}",
                    names[c],
                    ls[x],
                    fs[x],
                    rs[x],
                    got[x * K + c],
                    want[c]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} wrong, e.g.:\n{}",
        wrong.len(),
        n * K,
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn seed_400610_saturation_in_a_loop() {
    // The reduced difftest kernel: the clamp folds to c, convert_int_sat(c) is INT_MIN; the
    // saturation was lost (3535955798, c's low 32 bits).
    let src = r#"
__kernel void t0_k(__global uint *out, __global const uint *in) {
  uint gid = ((uint)get_global_id(0));
  uint h = 2166136261u;
  uint v12 = 0u;
  int v16 = 0;
  for (int i18 = -2; i18 <= 3; i18++) {
    for (int i20 = 0; i20 < (as_int((1u << as_uint(max(0, 0)))) & 7); i20++) {
      v12 ^= 1u;
    }
    v16 = convert_int_sat(clamp(9223372036854775807L, min(0L, (-741444014703483050L)),
                                max(as_long(((uchar8)(((uchar)243)))), (-741444014703483050L))));
  }
  h = v12;
  h = (h ^ ((uint)v16));
  out[0u + gid] = h;
}
"#;
    let c: i64 = -741444014703483050;
    let lo = 0i64.min(c);
    let hi = (u64::from_ne_bytes([243; 8]) as i64).max(c);
    let v = i64::MAX
        .clamp(lo, hi)
        .clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    // Six passes of the inner loop XOR 1 six times: v12 ends at 0.
    let want = v as u32;
    assert_eq!(want, 2147483648);
    let e = Env::new();
    let k = e.kern(src, "t0_k");
    let out = e.zeros::<u32>(16);
    let inp = e.zeros::<u32>(64);
    arg_mem(k, 0, out);
    arg_mem(k, 1, inp);
    e.run(k, &[16], Some(&[4]), None);
    assert_eq!(e.read::<u32>(out, 16), vec![want; 16]);
}

#[test]
fn seed_303518_saturation_in_a_loop() {
    // The reduced difftest kernel (docs/difftest.md): v2 = convert_uint_sat(2^64 - 8) in a
    // loop is UINT_MAX; without its saturation it was 0xfffffff8, and h 32 instead of 18.
    let src = r#"
int safe_add_int(int a, int b) { return ((b > 0 && a > INT_MAX - b) || (b < 0 && a < INT_MIN - b)) ? a : a + b; }
uint safe_rem_uint(uint a, uint b) { return b == 0 ? a : a % b; }
__kernel void t0_k(__global uint *out, __global const uint *in) {
  uint gid = ((uint)get_global_id(0));
  uint lid = ((uint)get_local_id(0));
  uint h = 2166136261u;
  uint v2 = 0u;
  for (int i3 = -2; i3 <= 1; i3++) {
    int v4[4] = {convert_int(0L), (i3 | (0u >= ((2147483647 & i3) ? gid : 0u))), as_int(as_uchar4(clz(0))), (i3 >> 1)};
    int v5 = 0;
    for (int i6 = 0; i6 < 7; i6++) {
      if ((v4[3] & 2)) {
        v4[v5] = 1;
        v5 = safe_add_int(v5, 1);
      }
    }
    if (v5) {
      v2 = convert_uint_sat(18446744073709551608UL);
    }
    h = safe_rem_uint(h, ((1u << h) - 1u));
  }
  h = (h ^ v2);
  __local uint lm[4];
  lm[lid] = h;
  barrier(CLK_LOCAL_MEM_FENCE);
  h ^= lm[(lid + 1u) % 4u] * 3u;
  out[0u + gid] = h;
}
"#;
    // The same on the host (every work-item computes the same h before the exchange).
    let mut h: u32 = 2166136261;
    let mut v2 = 0u32;
    for i3 in -2i32..=1 {
        let mut v4 = [0i32, i3 | 1, 32, i3 >> 1];
        let mut v5 = 0usize;
        for _ in 0..7 {
            if v4[3] & 2 != 0 {
                v4[v5] = 1;
                v5 += 1;
            }
        }
        if v5 != 0 {
            v2 = u32::MAX; // convert_uint_sat(18446744073709551608UL)
        }
        let d = 1u32.wrapping_shl(h).wrapping_sub(1);
        h = if d == 0 { h } else { h % d };
    }
    h ^= v2;
    let want = h ^ h.wrapping_mul(3);
    assert_eq!(want, 18);
    let e = Env::new();
    let k = e.kern(src, "t0_k");
    let out = e.zeros::<u32>(16);
    let inp = e.zeros::<u32>(64);
    arg_mem(k, 0, out);
    arg_mem(k, 1, inp);
    e.run(k, &[16], Some(&[4]), None);
    assert_eq!(e.read::<u32>(out, 16), vec![want; 16]);
}
