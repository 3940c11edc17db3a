//! An integer scalar reinterpreted as a vector of narrower integers (`as_ushort4(ulong)`), a
//! constant vector added, and two of its lanes combined, against host answers. Lavapipe
//! 22.3.6 computed `x.s0 ^ x.s3` of `x = (ushort4)(65525, 65527, 65524, 0) +
//! as_ushort4(0x8000000000000000)` as if `x.s3` were 0 (difftest seed 500472);
//! `src/compiler/lower/unpack.rs` builds such vectors from shifts.
mod common;
use common::*;

/// Work-items (each reads its own scalar).
const G: usize = 64;

const SRC: &str = r#"
__kernel void k(__global uint *out, __global const ulong *in) {
  uint gid = (uint)get_global_id(0);
  // add_sat (a select) in front: lavapipe 22.3.6 got a plain load right.
  ulong y = as_ulong(add_sat(0L, as_long(in[gid])));
  __global uint *o = out + gid * 9u;
  ushort4 a = (ushort4)(65525, 65527, 65524, 0) + as_ushort4(y);
  o[0] = a.s0 ^ a.s3;
  uchar8 b = (uchar8)(1, 2, 3, 4, 5, 6, 7, 250) + as_uchar8(y);
  o[1] = (uint)b.s0 ^ ((uint)b.s7 << 8) ^ ((uint)b.s3 << 16);
  uint2 c = (uint2)(7u, 4000000000u) + as_uint2(y);
  o[2] = c.s0 ^ c.s1;
  uchar4 d = (uchar4)(9, 8, 7, 255) + as_uchar4((uint)y);
  o[3] = (uint)d.s0 ^ ((uint)d.s3 << 8);
  ushort2 e = (ushort2)(65535, 3) + as_ushort2((uint)(y >> 32));
  o[4] = (uint)e.s0 ^ ((uint)e.s1 << 16);
  short4 f = as_short4((ushort4)(65535, 2, 65533, 4) + as_ushort4(y));
  o[5] = (uint)(int)f.s3 ^ (uint)(int)f.s0;
  // Constants that only the driver's compiler folds (vkcl lowers add_sat to an add and
  // selects): the shape of the seed.
  ushort4 g0 = (ushort4)(65525, 65527, 65524, 0) + as_ushort4(add_sat(0L, (-9223372036854775807L-1L)));
  ushort4 g1 = (ushort4)(65525, 65527, 65524, 0) + as_ushort4(add_sat(0L, 0x0001000200030004L));
  ushort4 g2 = (ushort4)(65525, 65527, 65524, 0) + as_ushort4(add_sat(0L, -2L));
  o[6] = g0.s0 ^ g0.s3;
  o[7] = g1.s0 ^ g1.s3;
  o[8] = g2.s0 ^ g2.s3;
}
"#;

/// The host's answers for one input.
fn expected(y: u64) -> [u32; 9] {
    let lane = |w: u32, i: u32| (y >> (w * i)) & ((1u64 << w) - 1);
    let a = |i: u32, k: u64| ((lane(16, i) + k) & 0xffff) as u32;
    let b = |i: u32, k: u64| ((lane(8, i) + k) & 0xff) as u32;
    let c = |i: u32, k: u64| ((lane(32, i) + k) & 0xffff_ffff) as u32;
    let d = |i: u32, k: u64| (((y & 0xffff_ffff) >> (8 * i)) as u32).wrapping_add(k as u32) & 0xff;
    let e = |i: u32, k: u64| ((((y >> 32) >> (16 * i)) + k) & 0xffff) as u32;
    let g = |z: u64| ((z as u16).wrapping_add(65525) ^ (z >> 48) as u16) as u32;
    let f = |i: u32, k: i64| (lane(16, i) as u16 as i16).wrapping_add(k as i16) as i32 as u32;
    [
        a(0, 65525) ^ a(3, 0),
        b(0, 1) ^ (b(7, 250) << 8) ^ (b(3, 4) << 16),
        c(0, 7) ^ c(1, 4_000_000_000),
        d(0, 9) ^ (d(3, 255) << 8),
        e(0, 65535) ^ (e(1, 3) << 16),
        f(3, 4) ^ f(0, -1),
        g(0x8000_0000_0000_0000),
        g(0x0001_0002_0003_0004),
        g(-2i64 as u64),
    ]
}

#[test]
fn narrow_lanes_of_a_reinterpreted_scalar() {
    let mut rng = Rng(0x500472);
    let mut ys: Vec<u64> = vec![0x8000_0000_0000_0000, 0, u64::MAX, 1, 0x0001_0002_0003_0004];
    while ys.len() < G {
        ys.push(((rng.next_u32() as u64) << 32) | rng.next_u32() as u64);
    }
    let e = Env::new();
    let k = e.kern(SRC, "k");
    let out = e.zeros::<u32>(G * 9);
    let input = e.buf(&ys);
    arg_mem(k, 0, out);
    arg_mem(k, 1, input);
    e.run(k, &[G], Some(&[8]), None);
    let got = e.read::<u32>(out, G * 9);
    let mut wrong = Vec::new();
    for (g, &y) in ys.iter().enumerate() {
        for (j, want) in expected(y).into_iter().enumerate() {
            if got[g * 9 + j] != want {
                wrong.push(format!(
                    "y {y:#x} output {j}: {:#x}, expected {want:#x}",
                    got[g * 9 + j]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} wrong:\n{}",
        wrong.len(),
        G * 9,
        wrong.join("\n")
    );
}

/// Difftest seed 500472 reduced: the vector in a struct array's initialiser, the lanes
/// exchanged through `__local` memory; 131114 on lavapipe 22.3.6 before.
#[test]
fn seed_500472_ushort4_of_a_long_in_a_struct_initialiser() {
    let src = r#"
struct t0_S1 { uint2 f0; ushort4 f1; short f2; };
__kernel void t0_k(__global uint *out, __global const uint *in) {
  uint gid = ((uint)get_global_id(0));
  uint lid = ((uint)get_local_id(0));
  uint h = 2166136261u;
  struct t0_S1 v8[2] = {{((uint2)(in[0], in[1])), ((ushort4)(1)), ((short)-32768)},
    {((uint2)(4294967295u)), (((ushort4)(((ushort)65525), ((ushort)65527), ((ushort)65524),
      ((ushort)0))) + as_ushort4((add_sat(((long2)(0L)), ((long2)((-9223372036854775807L-1L))))).s1)),
     ((short)-19)}};
  h = v8[1].f1.s0 ^ v8[1].f1.s3;
  __local uint lm[16];
  lm[lid] = h;
  barrier(CLK_LOCAL_MEM_FENCE);
  h ^= lm[(lid + 1u) % 4u] * 3u;
  out[0u + gid] = h;
}
"#;
    let e = Env::new();
    let k = e.kern(src, "t0_k");
    let out = e.zeros::<u32>(16);
    let input = e.zeros::<u32>(64);
    arg_mem(k, 0, out);
    arg_mem(k, 1, input);
    e.run(k, &[16], Some(&[4]), None);
    // h = 65525 ^ 0x8000 = 32757 in every work-item; then h ^ (h * 3).
    let h = 32757u32;
    assert_eq!(e.read::<u32>(out, 16), vec![h ^ h.wrapping_mul(3); 16]);
}
