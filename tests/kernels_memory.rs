//! Kernel memory: `__local` memory and barriers, async work-group copies, structs in global,
//! private and local memory, pointer arithmetic, punned views, packed layouts and the
//! addresses of private and local variables.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::kernels::*;
use common::*;

// ---------------------------------------------------------------------------------------------
// __local memory and barriers

#[test]
fn reduction_with_local_pointer_argument() {
    let env = Env::new();
    let mut rng = Rng(11);
    for wg in [64usize, 128, 16] {
        let n = wg * 37;
        let input: Vec<f32> = (0..n).map(|_| (rng.next_u32() % 1000) as f32).collect();
        let (min, mout) = (env.buf(&input), env.zeros::<f32>(n / wg));
        let k = env.kern(LOCAL, "reduce_sum");
        arg_mem(k, 0, min);
        arg_mem(k, 1, mout);
        arg_local(k, 2, wg * 4);
        env.run(k, &[n], Some(&[wg]), None);
        let got: Vec<f32> = env.read(mout, n / wg);
        for (g, chunk) in input.chunks(wg).enumerate() {
            // Integer-valued sums below 2^24 are exact in any order.
            let want: f32 = chunk.iter().sum();
            assert_eq!(got[g], want, "group {g} of size {wg}");
        }
    }
}

#[test]
fn local_arrays_reverse_and_transpose() {
    let env = Env::new();
    let n = 64 * 8;
    let data: Vec<i32> = (0..n as i32).map(|x| x * 3 - 5).collect();
    let m = env.buf(&data);
    let k = env.kern(LOCAL, "reverse_tile");
    arg_mem(k, 0, m);
    env.run(k, &[n], Some(&[64]), None);
    let got: Vec<i32> = env.read(m, n);
    for i in 0..n {
        assert_eq!(
            got[i],
            data[(i / 64) * 64 + 63 - i % 64],
            "reverse_tile[{i}]"
        );
    }

    let side = 32usize;
    let mat: Vec<f32> = (0..side * side).map(|x| x as f32).collect();
    let m = env.buf(&mat);
    let k = env.kern(LOCAL, "local_2d");
    arg_mem(k, 0, m);
    set_arg(k, 1, &(side as i32));
    env.run(k, &[side, side], Some(&[16, 16]), None);
    let got: Vec<f32> = env.read(m, side * side);
    for y in 0..side {
        for x in 0..side {
            // Each 16x16 tile is transposed in place.
            let (tx, ty) = (x / 16 * 16, y / 16 * 16);
            let (lx, ly) = (x % 16, y % 16);
            let want = mat[(ty + lx) * side + tx + ly];
            assert_eq!(got[y * side + x], want, "local_2d ({x}, {y})");
        }
    }
}

#[test]
fn two_local_pointer_arguments() {
    let env = Env::new();
    let (n, wg) = (96usize, 32usize);
    let out = env.zeros::<[f32; 4]>(n);
    let k = env.kern(LOCAL, "two_local_args");
    arg_mem(k, 0, out);
    arg_local(k, 1, wg * 16);
    arg_local(k, 2, wg * 4);
    env.run(k, &[n], Some(&[wg]), None);
    let got: Vec<[f32; 4]> = env.read(out, n);
    for (i, g) in got.iter().enumerate() {
        let v = ((i % wg + 1) % wg) as f32;
        assert_eq!(*g, [v; 4], "out[{i}]");
    }
}

const ASYNC: &str = r#"
__kernel void async_copies(__global const float *in, __global float *out, __local float *tmp) {
    size_t g = get_group_id(0), n = get_local_size(0);
    event_t e = async_work_group_copy(tmp, in + g * n, n, 0);
    wait_group_events(1, &e);
    float v = tmp[n - 1 - get_local_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[get_local_id(0)] = v * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_strided_copy(out + g * n * 2, tmp, n, 2, 0);
    wait_group_events(1, &e);
    prefetch(in, 16);
}
"#;

#[test]
fn async_work_group_copies() {
    let env = Env::new();
    let (n, wg) = (256usize, 32usize);
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (mi, mo) = (env.buf(&input), env.buf(&vec![-1.0f32; n * 2]));
    let k = env.kern(ASYNC, "async_copies");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    arg_local(k, 2, wg * 4);
    env.run(k, &[n], Some(&[wg]), None);
    let got: Vec<f32> = env.read(mo, n * 2);
    for g in 0..n / wg {
        for l in 0..wg {
            let mirror = input[g * wg + wg - 1 - l];
            assert_eq!(got[g * wg * 2 + l * 2], mirror * 2.0, "group {g} item {l}");
            assert_eq!(got[g * wg * 2 + l * 2 + 1], -1.0, "stride gap {g}/{l}");
        }
    }
}

const ROUND3: &str = r#"
typedef struct { float x; int y; } Pair;

__kernel void local_structs(__global const Pair *in, __global Pair *out) {
    __local Pair tile[64];
    size_t l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    Pair p = tile[63 - l];
    p.y += 1;
    out[get_global_id(0)] = p;
}

__kernel void private_vectors_2d(__global const float4 *in, __global float4 *out, int k) {
    float4 acc[4];
    float m[3][3];
    for (int i = 0; i < 4; i++)
        acc[i] = in[get_global_id(0) * 4 + i];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m[i][j] = (float)(i * 3 + j + k);
    acc[k & 3] += (float4)(m[k % 3][(k + 1) % 3]);
    out[get_global_id(0)] = acc[0] + acc[1] + acc[2] + acc[3];
}

__kernel void bools_and_longs(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    uint x = in[i];
    bool a = x > 10, b = (x & 1) != 0;
    out[i] = (a && !b) ? x / 3 : (a ^ b) ? x % 7 : x * 5;
    ulong big = (ulong)x * 0x100000001ul;
    out[i] += (uint)(big >> 31) + (uint)(big / 12345u) + (uint)(big % 97u);
}
"#;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Pair {
    x: f32,
    y: i32,
}

#[test]
fn local_structs_private_vector_arrays_bools_and_longs() {
    let env = Env::new();
    let mut rng = Rng(39);
    let p = env.build(ROUND3);

    let n = 128usize;
    let pairs: Vec<Pair> = (0..n)
        .map(|i| Pair {
            x: rng.next_f32(),
            y: i as i32 * 5,
        })
        .collect();
    let (mi, mo) = (env.buf(&pairs), env.buf(&vec![Pair { x: 0.0, y: 0 }; n]));
    let k = env.kernel(p, "local_structs");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    env.run(k, &[n], Some(&[64]), None);
    let got: Vec<Pair> = env.read(mo, n);
    for i in 0..n {
        let src = pairs[i / 64 * 64 + 63 - i % 64];
        assert_eq!(
            got[i],
            Pair {
                x: src.x,
                y: src.y + 1
            },
            "local_structs {i}"
        );
    }

    let v: Vec<[f32; 4]> = (0..n * 4)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 100) as f32))
        .collect();
    let k = env.kernel(p, "private_vectors_2d");
    for kk in [0i32, 5, 10] {
        let (mi, mo) = (env.buf(&v), env.zeros::<[f32; 4]>(n));
        arg_mem(k, 0, mi);
        arg_mem(k, 1, mo);
        set_arg(k, 2, &kk);
        env.run(k, &[n], None, None);
        let got: Vec<[f32; 4]> = env.read(mo, n);
        let m = ((kk % 3) * 3 + (kk + 1) % 3 + kk) as f32;
        for g in 0..n {
            let want: [f32; 4] =
                std::array::from_fn(|j| (0..4).map(|i| v[g * 4 + i][j]).sum::<f32>() + m);
            assert_eq!(got[g], want, "private_vectors_2d {g}, k {kk}");
        }
    }

    let xs: Vec<u32> = (0..n)
        .map(|_| rng.next_u32() >> (rng.next_u32() % 32))
        .collect();
    let (mi, mo) = (env.buf(&xs), env.zeros::<u32>(n));
    let k = env.kernel(p, "bools_and_longs");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    env.run(k, &[n], None, None);
    let got: Vec<u32> = env.read(mo, n);
    for i in 0..n {
        let x = xs[i];
        let (a, b) = (x > 10, x & 1 != 0);
        let first = if a && !b {
            x / 3
        } else if a ^ b {
            x % 7
        } else {
            x.wrapping_mul(5)
        };
        let big = x as u64 * 0x1_0000_0001;
        let want = first
            .wrapping_add((big >> 31) as u32)
            .wrapping_add((big / 12345) as u32)
            .wrapping_add((big % 97) as u32);
        assert_eq!(got[i], want, "bools_and_longs({x})");
    }
}

// ---------------------------------------------------------------------------------------------
// Structs in global memory, pointer arithmetic, punned views, addresses

const MISC: &str = r#"
typedef struct { float x, y; int tag; } Point;
__kernel void aos(__global const Point *in, __global Point *out) {
    size_t i = get_global_id(0);
    Point p = in[i];
    p.x += p.y;
    p.tag = -p.tag;
    out[i] = p;
}
__kernel void subptr(__global int *a, int off) {
    __global int *p = a + off;
    size_t i = get_global_id(0);
    p[i] = (int)(p + i - a);
}
__kernel void atom64(__global long *a, __global ulong *b) {
    atom_add(&a[0], (long)get_global_id(0));
    atom_max(&b[0], (ulong)get_global_id(0) << 33);
}
__kernel void atom64_local(__global long *out) {
    __local long t[4];
    size_t l = get_local_id(0);
    if (l < 4)
        t[l] = l == 1 ? LONG_MAX : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    long v = ((long)get_global_id(0) << 35) - 7;
    atom_add(&t[0], v);
    atom_min(&t[1], v);
    atom_xor(&t[2], v);
    atom_inc(&t[3]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 4)
        out[get_group_id(0) * 4 + l] = t[l];
}
__kernel void local_loop(__global int *out, __local int *tmp) {
    size_t l = get_local_id(0);
    int acc = 0;
    for (int r = 0; r < 4; r++) {
        tmp[l] = (int)l * r;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += tmp[(l + 1) % get_local_size(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = acc;
}
__kernel void irreducible(__global int *d, int n) {
    int i = (int)get_global_id(0);
    int x = d[i];
    if (x & 1) goto second;
first:
    x = x * 3 + 1;
    if (x > 1000) goto out;
second:
    x = x / 2;
    if (x > 1 && n-- > 0) goto first;
out:
    d[i] = x;
}
"#;

#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Point {
    x: f32,
    y: f32,
    tag: i32,
}

#[test]
fn structs_pointers_atom64_barrier_loops_goto() {
    let env = Env::new();
    let mut rng = Rng(24);
    let p = env.build(MISC);

    let n = 100usize;
    let pts: Vec<Point> = (0..n)
        .map(|i| Point {
            x: rng.next_f32(),
            y: rng.next_f32(),
            tag: i as i32 - 50,
        })
        .collect();
    let (mi, mo) = (env.buf(&pts), env.zeros::<Point>(n));
    let k = env.kernel(p, "aos");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    env.run(k, &[n], None, None);
    let got: Vec<Point> = env.read(mo, n);
    for i in 0..n {
        assert_eq!(
            got[i],
            Point {
                x: pts[i].x + pts[i].y,
                y: pts[i].y,
                tag: -pts[i].tag
            },
            "aos {i}"
        );
    }

    let m = env.buf(&vec![-1i32; 64]);
    let k = env.kernel(p, "subptr");
    arg_mem(k, 0, m);
    set_arg(k, 1, &10i32);
    env.run(k, &[40], None, None);
    let got: Vec<i32> = env.read(m, 64);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(
            *g,
            if (10..50).contains(&i) { i as i32 } else { -1 },
            "subptr {i}"
        );
    }

    let (ma, mb) = (env.buf(&[5i64]), env.buf(&[7u64]));
    let k = env.kernel(p, "atom64");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    env.run(k, &[1000], Some(&[50]), None);
    assert_eq!(env.read::<i64>(ma, 1)[0], 5 + 999 * 1000 / 2);
    assert_eq!(env.read::<u64>(mb, 1)[0], 999u64 << 33);

    // cl_khr_int64_base/extended_atomics on __local memory.
    let (wg, groups) = (50usize, 4usize);
    let mo = env.zeros::<i64>(groups * 4);
    let k = env.kernel(p, "atom64_local");
    arg_mem(k, 0, mo);
    env.run(k, &[wg * groups], Some(&[wg]), None);
    let got: Vec<i64> = env.read(mo, groups * 4);
    for g in 0..groups {
        let vals: Vec<i64> = (g * wg..(g + 1) * wg)
            .map(|i| ((i as i64) << 35) - 7)
            .collect();
        let want = [
            vals.iter().fold(0i64, |a, v| a.wrapping_add(*v)),
            *vals.iter().min().unwrap(),
            vals.iter().fold(0i64, |a, v| a ^ v),
            wg as i64,
        ];
        assert_eq!(
            &got[g * 4..g * 4 + 4],
            &want,
            "local 64-bit atomics, group {g}"
        );
    }

    let (wg, groups) = (32usize, 4usize);
    let mo = env.zeros::<i32>(wg * groups);
    let k = env.kernel(p, "local_loop");
    arg_mem(k, 0, mo);
    arg_local(k, 1, wg * 4);
    env.run(k, &[wg * groups], Some(&[wg]), None);
    let got: Vec<i32> = env.read(mo, wg * groups);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, (((i % wg) + 1) % wg) as i32 * 6, "local_loop {i}");
    }

    let d: Vec<i32> = (0..300).map(|i| i * 7 + 3).collect();
    let md = env.buf(&d);
    let k = env.kernel(p, "irreducible");
    arg_mem(k, 0, md);
    set_arg(k, 1, &20i32);
    env.run(k, &[d.len()], None, None);
    let got: Vec<i32> = env.read(md, d.len());
    for (i, &start) in d.iter().enumerate() {
        let (mut x, mut n) = (start, 20);
        let mut at_second = x & 1 != 0;
        loop {
            if !at_second {
                x = x * 3 + 1;
                if x > 1000 {
                    break;
                }
            }
            at_second = false;
            x /= 2;
            let go = x > 1 && {
                let c = n > 0;
                n -= 1;
                c
            };
            if !go {
                break;
            }
        }
        assert_eq!(got[i], x, "irreducible {i} from {start}");
    }
}

#[test]
fn private_struct_copies_through_punned_views() {
    let env = Env::new();
    let mut rng = Rng(27);
    let n = 64usize;
    let pts: Vec<Point> = (0..n * 4)
        .map(|i| Point {
            x: rng.next_f32(),
            y: rng.next_f32() * 10.0,
            tag: i as i32 * 3 - 7,
        })
        .collect();
    let k = env.kern(PRIVATE, "private_structs");
    for which in [0i32, 2, 7] {
        let (mi, mo) = (env.buf(&pts), env.zeros::<Point>(n));
        arg_mem(k, 0, mi);
        arg_mem(k, 1, mo);
        set_arg(k, 2, &which);
        env.run(k, &[n], None, None);
        let got: Vec<Point> = env.read(mo, n);
        for g in 0..n {
            let p = pts[g * 4 + (which & 3) as usize];
            assert_eq!(
                got[g],
                Point { x: p.x + 1.0, ..p },
                "item {g}, which {which}"
            );
        }
    }
}

const PUNNING: &str = r#"
typedef struct { int a; float b; float c; int d; } Quad;
typedef struct { long w; int k; float f; } Mixed;

__kernel void quads(__global const Quad *in, __global Quad *out, int which) {
    Quad arr[3];
    size_t g = get_global_id(0);
    for (int k = 0; k < 3; k++)
        arr[k] = in[g * 3 + k];
    Quad t = arr[which % 3];
    arr[(which + 1) % 3] = t;
    t.a += 1;
    t.c *= 2.0f;
    out[g * 4] = t;
    for (int k = 0; k < 3; k++)
        out[g * 4 + 1 + k] = arr[k];
}

__kernel void mixed(__global const Mixed *in, __global Mixed *out, int which) {
    Mixed arr[2];
    size_t g = get_global_id(0);
    arr[0] = in[g * 2];
    arr[1] = in[g * 2 + 1];
    Mixed m = arr[which & 1];
    m.k -= 5;
    out[g] = m;
}
"#;

#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Quad {
    a: i32,
    b: f32,
    c: f32,
    d: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Mixed {
    w: i64,
    k: i32,
    f: f32,
}

#[test]
fn private_struct_copies_with_dynamic_indices() {
    let env = Env::new();
    let mut rng = Rng(28);
    let p = env.build(PUNNING);
    let n = 32usize;
    let quads: Vec<Quad> = (0..n * 3)
        .map(|i| Quad {
            a: i as i32,
            b: rng.next_f32(),
            c: rng.next_f32(),
            d: -(i as i32),
        })
        .collect();
    let k = env.kernel(p, "quads");
    for which in [0i32, 1, 5] {
        let (mi, mo) = (env.buf(&quads), env.zeros::<Quad>(n * 4));
        arg_mem(k, 0, mi);
        arg_mem(k, 1, mo);
        set_arg(k, 2, &which);
        env.run(k, &[n], None, None);
        let got: Vec<Quad> = env.read(mo, n * 4);
        for g in 0..n {
            let mut arr = [quads[g * 3], quads[g * 3 + 1], quads[g * 3 + 2]];
            let t = arr[(which % 3) as usize];
            arr[((which + 1) % 3) as usize] = t;
            let want_t = Quad {
                a: t.a + 1,
                c: t.c * 2.0,
                ..t
            };
            assert_eq!(got[g * 4], want_t, "t of {g}, which {which}");
            assert_eq!(
                &got[g * 4 + 1..g * 4 + 4],
                &arr[..],
                "arr of {g}, which {which}"
            );
        }
    }

    let mixed: Vec<Mixed> = (0..n * 2)
        .map(|i| Mixed {
            w: (i as i64) * -1_000_000_007,
            k: i as i32,
            f: rng.next_f32(),
        })
        .collect();
    let k = env.kernel(p, "mixed");
    for which in [0i32, 1] {
        let (mi, mo) = (env.buf(&mixed), env.zeros::<Mixed>(n));
        arg_mem(k, 0, mi);
        arg_mem(k, 1, mo);
        set_arg(k, 2, &which);
        env.run(k, &[n], None, None);
        let got: Vec<Mixed> = env.read(mo, n);
        for g in 0..n {
            let m = mixed[g * 2 + which as usize];
            assert_eq!(
                got[g],
                Mixed { k: m.k - 5, ..m },
                "mixed {g}, which {which}"
            );
        }
    }
}

/// A `__attribute__((packed))` struct with members at unaligned offsets (`float4` at 1, `short`
/// at 17, `int` at 19; 23 bytes) in global memory: member loads, stores and the member's byte
/// offset (the CTS's vec_align_packed_struct_arr) match the host's packed layout.
#[test]
fn packed_struct_with_unaligned_members() {
    let env = Env::new();
    let src = r#"
typedef struct __attribute__((packed)) { char c; float4 v; short s; int i; } P;
__kernel void k(__global P *p, __global float *o, __global uint *d) {
    size_t i = get_global_id(0);
    o[i] = p[i].v.y + (float)p[i].s + (float)p[i].i + (float)p[i].c;
    p[i].v.w = 2.0f * p[i].v.x;
    p[i].i = p[i].i + 1;
    d[i] = (uint)((__global uchar *)&(p[i].v) - (__global uchar *)&(p[0]));
}
"#;
    let k = env.kern(src, "k");
    const SIZE: usize = 23;
    let n = 64usize;
    let mut rng = Rng(0x9acd);
    let mut bytes = vec![0u8; n * SIZE];
    let mut recs = Vec::new();
    for r in 0..n {
        let c = ((rng.next_u32() % 200) as i32 - 100) as i8;
        let v: [f32; 4] = std::array::from_fn(|_| rng.next_f32() * 100.0 - 50.0);
        let s = (rng.next_u32() % 60000) as i32 as i16;
        let i = rng.next_u32() as i32 >> 8;
        let b = &mut bytes[r * SIZE..(r + 1) * SIZE];
        b[0] = c as u8;
        for (j, x) in v.iter().enumerate() {
            b[1 + 4 * j..5 + 4 * j].copy_from_slice(&x.to_le_bytes());
        }
        b[17..19].copy_from_slice(&s.to_le_bytes());
        b[19..23].copy_from_slice(&i.to_le_bytes());
        recs.push((c, v, s, i));
    }
    let (mp, mo, md) = (env.buf(&bytes), env.zeros::<f32>(n), env.zeros::<u32>(n));
    arg_mem(k, 0, mp);
    arg_mem(k, 1, mo);
    arg_mem(k, 2, md);
    env.run(k, &[n], None, None);
    let got: Vec<u8> = env.read(mp, n * SIZE);
    let o: Vec<f32> = env.read(mo, n);
    let d: Vec<u32> = env.read(md, n);
    for (r, (c, v, s, i)) in recs.iter().enumerate() {
        assert_eq!(o[r], v[1] + *s as f32 + *i as f32 + *c as f32, "sum {r}");
        assert_eq!(d[r], (r * SIZE + 1) as u32, "offset of v in record {r}");
        let mut want = bytes[r * SIZE..(r + 1) * SIZE].to_vec();
        want[13..17].copy_from_slice(&(2.0 * v[0]).to_le_bytes());
        want[19..23].copy_from_slice(&(i + 1).to_le_bytes());
        assert_eq!(&got[r * SIZE..(r + 1) * SIZE], &want[..], "record {r}");
    }
    unsafe {
        for m in [mp, mo, md] {
            cl!(clReleaseMemObject)(m);
        }
        cl!(clReleaseKernel)(k);
    }
}

/// `(ulong)&x` of private and local variables (CTS basic kernel_memory_alignment_private /
/// _local, vectors vec_align_struct): Vulkan gives such memory no address, so vkcl hands out
/// synthetic ones. They must be aligned like the type (vec3 like vec4), and differences
/// within one variable must be the OpenCL C layout's byte offsets (host-computed).
#[test]
fn addresses_of_private_and_local_memory() {
    let env = Env::new();
    let src = r#"
typedef struct { char c; float4 v; short s[3]; } S;
kernel void addrs(global ulong *r, int k) {
    char mem0[3]; short2 mem2[3]; int3 mem3[3]; float4 mem4[3]; long8 mem8[3];
    local uchar16 lmem[3];
    S st[2];
    r[0] = (ulong)&mem0[0];
    r[1] = (ulong)&mem2[0];
    r[2] = (ulong)&mem3[0];
    r[3] = (ulong)&mem4[0];
    r[4] = (ulong)&mem8[0];
    r[5] = (ulong)&lmem[0];
    r[6] = (ulong)&mem4[k] - (ulong)&mem4[0];
    r[7] = (ulong)&st[k].s[2] - (ulong)&st[0];
    r[8] = (ulong)&st[0].v - (ulong)&st[0];
    r[9] = (uint)(&mem3[k]) - (uint)(&mem3[0]);
    mem0[k] = 1; mem2[k].x = 2; mem3[k].y = 3; mem4[k].z = 4; mem8[k].s7 = 5;
    lmem[k].s3 = 6; st[k].c = 7;
    r[10] = mem0[k] + mem2[k].x + mem3[k].y + mem4[k].z + mem8[k].s7 + lmem[k].s3 + st[k].c;
}
"#;
    let k = env.kern(src, "addrs");
    let out = env.zeros::<u64>(11);
    arg_mem(k, 0, out);
    set_arg(k, 1, &2i32);
    env.run(k, &[1], None, None);
    let r: Vec<u64> = env.read(out, 11);
    for (j, align) in [(0usize, 1u64), (1, 4), (2, 16), (3, 16), (4, 64), (5, 16)] {
        assert_eq!(
            r[j] % align,
            0,
            "address {j} = {:#x} not aligned to {align}",
            r[j]
        );
        assert_ne!(r[j], 0, "address {j}");
    }
    // float4 stride 16; S is { char @0, float4 @16, short[3] @32 }, 48 bytes.
    assert_eq!(r[6], 2 * 16);
    assert_eq!(r[7], 2 * 48 + 32 + 2 * 2);
    assert_eq!(r[8], 16);
    assert_eq!(r[9], 2 * 16);
    assert_eq!(r[10], 1 + 2 + 3 + 4 + 5 + 6 + 7);
    unsafe {
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseKernel)(k);
    }
}
