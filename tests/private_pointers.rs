//! Pointers chosen among different private or `__local` variables (issue 22, finding 1):
//! selects, phis, a pointer advanced from one array into the next, pointers kept in a private
//! struct, compared, subtracted, converted to integers and back, one pointer over arrays of
//! different element types, NULL, and the hashcat shape (a word buffer chosen among
//! `w0[4]`..`w3[4]` by index). The lowering places such variables in one arena per work-item
//! (private) or per work-group (local) (`src/compiler/lower/memory/arena.rs`). Every result
//! is compared with an answer computed on the host, over several work-items (and several
//! work-groups of more than one work-item for `__local` memory: no work-item's or group's
//! arena may alias another's).
mod common;
use common::*;

const N: usize = 64;

/// Input words `in[k]` for the kernels: small, distinct, deterministic.
fn input(n: usize) -> Vec<i32> {
    let mut r = Rng(0x22_0001);
    (0..n).map(|_| (r.next_u32() % 1000) as i32).collect()
}

/// Runs `k(out, in, extra...)` over `N` work-items (work-group `local`), returns `out`.
fn run_words<T: Copy + Default>(
    e: &Env,
    k: cl_kernel,
    inp: &[i32],
    out_len: usize,
    local: Option<usize>,
) -> Vec<T> {
    let out = e.zeros::<T>(out_len);
    let ib = e.buf(inp);
    arg_mem(k, 0, out);
    arg_mem(k, 1, ib);
    let l = local.map(|l| [l]);
    e.run(k, &[N], l.as_ref().map(|l| &l[..]), None);
    e.read(out, out_len)
}

#[test]
fn select_between_private_arrays() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global int *o, __global const int *in) {
            int i = get_global_id(0);
            int a[4], b[4];
            for (int j = 0; j < 4; j++) { a[j] = in[j] + i; b[j] = in[4 + j] * i; }
            int *p = (in[8 + (i & 7)] & 1) ? a : b;
            p[(i >> 1) & 3] += 1000;
            o[i] = p[i & 3] * 3 + p[(i + 1) & 3] + a[(i >> 1) & 3] - b[(i >> 1) & 3];
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(16);
    let got: Vec<i32> = run_words(&e, k, &inp, N, None);
    for i in 0..N as i32 {
        let mut a: Vec<i32> = (0..4).map(|j| inp[j] + i).collect();
        let mut b: Vec<i32> = (0..4).map(|j| inp[4 + j] * i).collect();
        let pick_a = inp[8 + (i as usize & 7)] & 1 != 0;
        let m = (i as usize >> 1) & 3;
        let p = if pick_a { &mut a } else { &mut b };
        p[m] += 1000;
        let (x, y) = (p[i as usize & 3], p[(i as usize + 1) & 3]);
        let want = x * 3 + y + a[m] - b[m];
        assert_eq!(got[i as usize], want, "work-item {i}");
    }
}

#[test]
fn select_between_local_arrays() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global int *o, __global const int *in) {
            __local int a[16], b[16];
            int l = get_local_id(0), g = get_group_id(0), i = get_global_id(0);
            a[l] = in[i] + 100 * g;
            b[l] = -in[i] - 100 * g;
            barrier(CLK_LOCAL_MEM_FENCE);
            __local int *p = ((l + g) & 1) ? a : b;
            int n = get_local_size(0);
            int v = p[(l + 1) % n] + p[(l + 3) % n];
            barrier(CLK_LOCAL_MEM_FENCE);
            // each work-item writes its own word through the chosen pointer
            p[l] += 7 * l;
            barrier(CLK_LOCAL_MEM_FENCE);
            o[i] = v * 10 + a[(l + 5) % n] - b[(l + 2) % n];
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(N);
    let lsz = 16;
    let got: Vec<i32> = run_words(&e, k, &inp, N, Some(lsz));
    for g in 0..N / lsz {
        let base = g * lsz;
        let mut a: Vec<i32> = (0..lsz).map(|l| inp[base + l] + 100 * g as i32).collect();
        let mut b: Vec<i32> = (0..lsz).map(|l| -inp[base + l] - 100 * g as i32).collect();
        let pick_a = |l: usize| (l + g) & 1 != 0;
        let v: Vec<i32> = (0..lsz)
            .map(|l| {
                let p = if pick_a(l) { &a } else { &b };
                p[(l + 1) % lsz] + p[(l + 3) % lsz]
            })
            .collect();
        for l in 0..lsz {
            if pick_a(l) {
                a[l] += 7 * l as i32;
            } else {
                b[l] += 7 * l as i32;
            }
        }
        for l in 0..lsz {
            let want = v[l] * 10 + a[(l + 5) % lsz] - b[(l + 2) % lsz];
            assert_eq!(got[base + l], want, "group {g}, work-item {l}");
        }
    }
}

#[test]
fn local_argument_and_local_array_chosen_by_one_pointer() {
    // A `__local` argument (its size set at enqueue) and a `__local` array in one arena.
    let e = Env::new();
    let src = r#"
        __kernel void k(__global int *o, __global const int *in, __local int *scratch) {
            __local int tile[8];
            int l = get_local_id(0), g = get_group_id(0), i = get_global_id(0);
            scratch[l] = in[i] * 2 + g;
            if (l < 8) tile[l] = 1000 * (g + 1) + l;
            barrier(CLK_LOCAL_MEM_FENCE);
            __local int *p = (in[i] & 1) ? scratch : tile;
            o[i] = p[(l * 5) & 7];
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(N);
    let lsz = 16;
    arg_local(k, 2, lsz * 4);
    let got: Vec<i32> = run_words(&e, k, &inp, N, Some(lsz));
    for i in 0..N {
        let (g, l) = (i / lsz, i % lsz);
        let m = (l * 5) & 7;
        let want = if inp[i] & 1 != 0 {
            inp[g * lsz + m] * 2 + g as i32
        } else {
            1000 * (g as i32 + 1) + m as i32
        };
        assert_eq!(got[i], want, "work-item {i}");
    }
}

#[test]
fn pointer_chosen_in_a_loop_and_by_if_else() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global int *o, __global const int *in, int n) {
            int i = get_global_id(0);
            int a[4], b[4], c[4];
            for (int j = 0; j < 4; j++) { a[j] = in[j] + i; b[j] = in[4 + j] - i; c[j] = j * i; }
            int *p = a;
            int s = 0;
            for (int j = 0; j < n; j++) {
                s = s * 3 + p[(i + j) & 3];
                if (in[8 + ((i + j) & 7)] & 1) p = (p == a) ? b : a;
                else if (in[8 + ((i + j) & 7)] & 2) p = c;
            }
            o[i] = s;
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(16);
    let n = 11i32;
    set_arg(k, 2, &n);
    let got: Vec<i32> = run_words(&e, k, &inp, N, None);
    for i in 0..N as i32 {
        let a: Vec<i32> = (0..4).map(|j| inp[j] + i).collect();
        let b: Vec<i32> = (0..4).map(|j| inp[4 + j] - i).collect();
        let c: Vec<i32> = (0..4).map(|j| j as i32 * i).collect();
        let arrays = [&a, &b, &c];
        let mut p = 0usize;
        let mut s = 0i32;
        for j in 0..n {
            s = s
                .wrapping_mul(3)
                .wrapping_add(arrays[p][((i + j) & 3) as usize]);
            let w = inp[8 + ((i + j) & 7) as usize];
            if w & 1 != 0 {
                p = if p == 0 { 1 } else { 0 };
            } else if w & 2 != 0 {
                p = 2;
            }
        }
        assert_eq!(got[i as usize], s, "work-item {i}");
    }
}

#[test]
fn pointer_advanced_from_one_array_into_the_next() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global int *o, __global const int *in, int n) {
            int i = get_global_id(0);
            int a[4], b[4];
            for (int j = 0; j < 4; j++) { a[j] = in[j] * (i + 1); b[j] = in[4 + j] + i; }
            int *p = a + (i & 3);
            int s = 0;
            for (int j = 0; j < n; j++) {
                s = s * 5 + *p;
                *p += 1;
                p++;
                if (p == a + 4) p = b;
                else if (p == b + 4) p = a;
            }
            o[i] = s + a[0] + b[3];
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(8);
    let n = 13i32;
    set_arg(k, 2, &n);
    let got: Vec<i32> = run_words(&e, k, &inp, N, None);
    for i in 0..N as i32 {
        // a then b as one ring of 8 words
        let mut ring: Vec<i32> = (0..4)
            .map(|j| inp[j] * (i + 1))
            .chain((0..4).map(|j| inp[4 + j] + i))
            .collect();
        let mut p = (i & 3) as usize;
        let mut s = 0i32;
        for _ in 0..n {
            s = s.wrapping_mul(5).wrapping_add(ring[p]);
            ring[p] += 1;
            p = (p + 1) % 8;
        }
        assert_eq!(got[i as usize], s + ring[0] + ring[7], "work-item {i}");
    }
}

#[test]
fn pointers_kept_in_a_private_struct() {
    let e = Env::new();
    let src = r#"
        typedef struct { int *p; int n; } View;
        __kernel void k(__global int *o, __global const int *in, int shift) {
            int i = get_global_id(0);
            int a[4], b[4];
            for (int j = 0; j < 4; j++) { a[j] = in[j] + i; b[j] = in[4 + j] - i; }
            View v[2];
            v[0].p = a; v[0].n = 4;
            v[1].p = b + 1; v[1].n = 3;
            View *w = &v[(i + shift) & 1];
            int s = 0;
            for (int j = 0; j < w->n; j++) { s = s * 7 + w->p[j]; w->p[j] = -j; }
            o[i] = s * 100 + a[1] + b[2];
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(8);
    let shift = 1i32;
    set_arg(k, 2, &shift);
    let got: Vec<i32> = run_words(&e, k, &inp, N, None);
    for i in 0..N as i32 {
        let mut a: Vec<i32> = (0..4).map(|j| inp[j] + i).collect();
        let mut b: Vec<i32> = (0..4).map(|j| inp[4 + j] - i).collect();
        let mut s = 0i32;
        if (i + shift) & 1 == 0 {
            for j in 0..4 {
                s = s.wrapping_mul(7).wrapping_add(a[j]);
                a[j] = -(j as i32);
            }
        } else {
            for j in 0..3 {
                s = s.wrapping_mul(7).wrapping_add(b[1 + j]);
                b[1 + j] = -(j as i32);
            }
        }
        let want = s.wrapping_mul(100) + a[1] + b[2];
        assert_eq!(got[i as usize], want, "work-item {i}");
    }
}

#[test]
fn pointer_comparison_and_difference() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global long *o, __global const int *in) {
            int i = get_global_id(0);
            int a[8], b[8];
            for (int j = 0; j < 8; j++) { a[j] = in[j]; b[j] = in[j] + 1; }
            int *p = (i & 1) ? a + (i & 7) : b + ((i >> 3) & 7);
            int *q = (i & 2) ? a + ((i >> 2) & 3) : b;
            o[i * 4] = (p == q);
            o[i * 4 + 1] = (q <= p && (i & 3) == 3) ? (p - q) : -1;
            o[i * 4 + 2] = *p + *q;
            o[i * 4 + 3] = (p != 0) + 2 * (q > p);
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(8);
    let got: Vec<i64> = run_words(&e, k, &inp, N * 4, None);
    for i in 0..N {
        let a: Vec<i64> = (0..8).map(|j| inp[j] as i64).collect();
        let b: Vec<i64> = (0..8).map(|j| inp[j] as i64 + 1).collect();
        // (array, index); both pointers into the same array when i & 3 == 3
        let p = if i & 1 != 0 {
            (0, i & 7)
        } else {
            (1, (i >> 3) & 7)
        };
        let q = if i & 2 != 0 {
            (0, (i >> 2) & 3)
        } else {
            (1, 0)
        };
        let val = |x: (usize, usize)| if x.0 == 0 { a[x.1] } else { b[x.1] };
        assert_eq!(got[i * 4], (p == q) as i64, "p == q, work-item {i}");
        let diff = if i & 3 == 3 && q.1 <= p.1 {
            (p.1 - q.1) as i64
        } else {
            -1
        };
        assert_eq!(got[i * 4 + 1], diff, "p - q, work-item {i}");
        assert_eq!(got[i * 4 + 2], val(p) + val(q), "*p + *q, work-item {i}");
        if i & 3 == 3 {
            // same array: `q > p` is defined
            assert_eq!(
                got[i * 4 + 3],
                1 + 2 * (q.1 > p.1) as i64,
                "p != NULL, q > p, work-item {i}"
            );
        } else {
            assert_eq!(got[i * 4 + 3] & 1, 1, "p != NULL, work-item {i}");
        }
    }
}

#[test]
fn pointers_converted_to_integers_and_back() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global uint *o, __global const int *in) {
            int i = get_global_id(0);
            uint a[4], b[4];
            for (int j = 0; j < 4; j++) { a[j] = in[j]; b[j] = in[4 + j]; }
            uintptr_t x = (uintptr_t)((i & 1) ? a : b);
            x += sizeof(uint) * (i & 3);
            uint *p = (uint *)x;
            *p += 100;
            intptr_t d = (intptr_t)&b[3] - (intptr_t)&b[1];
            uint aligned = ((uintptr_t)a % sizeof(uint)) == 0;
            o[i * 3] = a[0] + 2 * a[1] + 3 * a[2] + 4 * a[3] + 5 * b[0] + 6 * b[1] + 7 * b[2] + 8 * b[3];
            o[i * 3 + 1] = (uint)d;
            o[i * 3 + 2] = aligned + 2 * ((uint *)(uintptr_t)&a[2] == &a[2]);
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(8);
    let got: Vec<u32> = run_words(&e, k, &inp, N * 3, None);
    for i in 0..N {
        let mut ab: Vec<u32> = inp[..8].iter().map(|v| *v as u32).collect();
        let at = if i & 1 != 0 { 0 } else { 4 } + (i & 3);
        ab[at] += 100;
        let want: u32 = ab.iter().enumerate().map(|(k, v)| (k as u32 + 1) * v).sum();
        assert_eq!(got[i * 3], want, "sums, work-item {i}");
        assert_eq!(got[i * 3 + 1], 8, "(intptr_t)&b[3] - (intptr_t)&b[1]");
        assert_eq!(got[i * 3 + 2], 3, "alignment and round trip, work-item {i}");
    }
}

#[test]
fn one_pointer_over_uchar_and_float_arrays() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global uint *o, __global const int *in, int n) {
            int i = get_global_id(0);
            uchar c[16];
            float f[4];
            for (int j = 0; j < 16; j++) c[j] = in[j] + i;
            for (int j = 0; j < 4; j++) f[j] = (float)in[j] * 0.5f + i;
            uchar *p = (in[16 + (i & 7)] & 1) ? c : (uchar *)f;
            uint s = 0;
            for (int j = 0; j < n; j++) s = s * 31 + p[j];
            p[i & 15] = 0xAB;
            o[i * 2] = s;
            o[i * 2 + 1] = as_uint(f[(i & 15) >> 2]) ^ ((uint)c[i & 15] << 8);
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(24);
    let n = 16i32;
    set_arg(k, 2, &n);
    let got: Vec<u32> = run_words(&e, k, &inp, N * 2, None);
    for i in 0..N {
        let mut c: Vec<u8> = (0..16).map(|j| (inp[j] + i as i32) as u8).collect();
        let fl: Vec<f32> = (0..4).map(|j| inp[j] as f32 * 0.5 + i as f32).collect();
        let mut fb: Vec<u8> = fl.iter().flat_map(|x| x.to_le_bytes()).collect();
        let pick_c = inp[16 + (i & 7)] & 1 != 0;
        let p = if pick_c { &mut c } else { &mut fb };
        let s = p
            .iter()
            .fold(0u32, |s, b| s.wrapping_mul(31).wrapping_add(*b as u32));
        p[i & 15] = 0xAB;
        let fw = (i & 15) >> 2;
        let fbits =
            u32::from_le_bytes([fb[fw * 4], fb[fw * 4 + 1], fb[fw * 4 + 2], fb[fw * 4 + 3]]);
        assert_eq!(
            got[i * 2],
            s,
            "bytes read through the pointer, work-item {i}"
        );
        assert_eq!(
            got[i * 2 + 1],
            fbits ^ ((c[i & 15] as u32) << 8),
            "byte written through the pointer, work-item {i}"
        );
    }
}

#[test]
fn private_constant_table_and_array_chosen_by_one_pointer() {
    // A constant private table (LLVM may make it a module-scope private global) and a
    // private array in one work-item arena.
    let e = Env::new();
    let src = r#"
        __kernel void k(__global int *o, __global const int *in) {
            const int table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
            int i = get_global_id(0);
            int a[8];
            for (int j = 0; j < 8; j++) a[j] = in[j] * i;
            const int *p = (in[8 + (i & 7)] & 1) ? table : a;
            o[i] = p[i & 7] * 10 + p[(i + 3) & 7];
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(16);
    let got: Vec<i32> = run_words(&e, k, &inp, N, None);
    let table = [3, 1, 4, 1, 5, 9, 2, 6];
    for i in 0..N {
        let a: Vec<i32> = (0..8).map(|j| inp[j] * i as i32).collect();
        let p: &[i32] = if inp[8 + (i & 7)] & 1 != 0 {
            &table
        } else {
            &a
        };
        assert_eq!(got[i], p[i & 7] * 10 + p[(i + 3) & 7], "work-item {i}");
    }
}

#[test]
fn null_and_found_pointers() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global int *o, __global const int *in) {
            int i = get_global_id(0);
            int a[4], b[4];
            for (int j = 0; j < 4; j++) { a[j] = in[j] + (i & 3); b[j] = in[4 + j] + i; }
            int *p = 0;
            for (int j = 0; j < 4; j++) if (a[j] == in[8 + (i & 3)]) p = &a[j];
            if (!p && (i & 4)) p = b + (i & 3);
            o[i] = p ? *p : -1;
        }
    "#;
    let k = e.kern(src, "k");
    let mut inp = input(12);
    // some work-items find their value in `a`
    inp[8] = inp[2];
    inp[9] = inp[0] + 1;
    let got: Vec<i32> = run_words(&e, k, &inp, N, None);
    for i in 0..N as i32 {
        let a: Vec<i32> = (0..4).map(|j| inp[j] + (i & 3)).collect();
        let b: Vec<i32> = (0..4).map(|j| inp[4 + j] + i).collect();
        let mut p: Option<i32> = None;
        for v in &a {
            if *v == inp[8 + (i & 3) as usize] {
                p = Some(*v);
            }
        }
        if p.is_none() && i & 4 != 0 {
            p = Some(b[(i & 3) as usize]);
        }
        assert_eq!(got[i as usize], p.unwrap_or(-1), "work-item {i}");
    }
}

#[test]
fn word_buffer_chosen_among_four_by_index_as_hashcat_does() {
    // hashcat's inc_common / switch_buffer shape: `u32 w0[4], w1[4], w2[4], w3[4]` and a
    // pointer to one of them chosen by the word index.
    let e = Env::new();
    let src = r#"
        typedef uint u32;
        void append_word(u32 *w0, u32 *w1, u32 *w2, u32 *w3, int at, u32 v) {
            u32 *w;
            switch (at >> 2) { case 0: w = w0; break; case 1: w = w1; break;
                               case 2: w = w2; break; default: w = w3; }
            w[at & 3] ^= v;
        }
        __kernel void k(__global u32 *o, __global const int *in, int rounds) {
            int i = get_global_id(0);
            u32 w0[4], w1[4], w2[4], w3[4];
            for (int j = 0; j < 4; j++) {
                w0[j] = in[j]; w1[j] = in[4 + j]; w2[j] = in[8 + j]; w3[j] = in[12 + j] ^ i;
            }
            u32 s = 0;
            for (int k = 0; k < rounds; k++) {
                int idx = (k * 5 + i) & 15;
                append_word(w0, w1, w2, w3, idx, k * 0x9E3779B9u);
                u32 *w = idx < 4 ? w0 : idx < 8 ? w1 : idx < 12 ? w2 : w3;
                s = s * 7 + w[idx & 3];
            }
            o[i] = s ^ w0[1] ^ w1[2] ^ w2[3] ^ w3[0];
        }
    "#;
    let k = e.kern(src, "k");
    let inp = input(16);
    let rounds = 20i32;
    set_arg(k, 2, &rounds);
    let got: Vec<u32> = run_words(&e, k, &inp, N, None);
    for i in 0..N {
        let mut w: Vec<u32> = inp.iter().map(|v| *v as u32).collect();
        for j in 12..16 {
            w[j] ^= i as u32;
        }
        let mut s = 0u32;
        for k in 0..rounds as u32 {
            let idx = ((k * 5) as usize + i) & 15;
            w[idx] ^= k.wrapping_mul(0x9E37_79B9);
            s = s.wrapping_mul(7).wrapping_add(w[idx]);
        }
        assert_eq!(got[i], s ^ w[1] ^ w[6] ^ w[11] ^ w[12], "work-item {i}");
    }
}

/// `source` compiled to SPIR-V with the generic address space on (clang-15 and
/// llvm-spirv-15, which vkcl needs anyway): vkcl does not claim
/// `__opencl_c_generic_address_space`, so only a program from IL can hold generic pointers.
fn generic_il(source: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("vkcl-private-pointers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cl, bc, spv) = (dir.join("g.cl"), dir.join("g.bc"), dir.join("g.spv"));
    std::fs::write(&cl, source).unwrap();
    let run = |cmd: &str, args: &[&std::ffi::OsStr]| {
        let o = std::process::Command::new(cmd).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(
        "clang-15",
        &[
            "-x".as_ref(),
            "cl".as_ref(),
            "-cl-std=CL3.0".as_ref(),
            "-Xclang".as_ref(),
            "-cl-ext=+__opencl_c_generic_address_space".as_ref(),
            "-target".as_ref(),
            "spir64".as_ref(),
            "-emit-llvm".as_ref(),
            "-c".as_ref(),
            "-O2".as_ref(),
            "-fno-vectorize".as_ref(),
            "-fno-unroll-loops".as_ref(),
            cl.as_os_str(),
            "-o".as_ref(),
            bc.as_os_str(),
        ],
    );
    run(
        "llvm-spirv-15",
        &[bc.as_os_str(), "-o".as_ref(), spv.as_os_str()],
    );
    std::fs::read(&spv).unwrap()
}

/// Builds IL `il`; `Err(log)` when the build fails.
fn build_il(e: &Env, il: &[u8]) -> Result<cl_program, String> {
    let mut err = 0;
    let p = unsafe {
        cl!(clCreateProgramWithIL)(
            e.context,
            il.as_ptr() as *const std::ffi::c_void,
            il.len(),
            &mut err,
        )
    };
    ok(err);
    let r = unsafe {
        cl!(clBuildProgram)(
            p,
            1,
            &e.device,
            std::ptr::null(),
            None,
            std::ptr::null_mut(),
        )
    };
    if r == CL_SUCCESS {
        Ok(p)
    } else {
        assert_eq!(r, CL_BUILD_PROGRAM_FAILURE);
        Err(build_log(p, e.device))
    }
}

#[test]
fn generic_pointers_into_private_arrays_from_il() {
    // Generic pointers that only ever point into private memory are the private pointers
    // they were cast from; one that may point into global memory at run time fails the build
    // with the reason.
    let e = Env::new();
    let il = generic_il(
        r#"
        int sum4(int *p) { int s = 0; for (int j = 0; j < 4; j++) s = s * 3 + p[j]; return s; }
        __kernel void k(__global int *o, __global const int *in, int w) {
            int i = get_global_id(0);
            int a[4], b[4];
            for (int j = 0; j < 4; j++) { a[j] = in[j] + i; b[j] = in[4 + j] * 2; }
            int *p = ((w + i) & 1) ? a : b;
            o[i] = sum4(p);
        }
    "#,
    );
    let p = build_il(&e, &il).unwrap_or_else(|log| panic!("build failed:\n{log}"));
    let k = e.kernel(p, "k");
    let inp = input(8);
    let w = 1i32;
    set_arg(k, 2, &w);
    let got: Vec<i32> = run_words(&e, k, &inp, N, None);
    for i in 0..N as i32 {
        let arr: Vec<i32> = if (w + i) & 1 != 0 {
            (0..4).map(|j| inp[j] + i).collect()
        } else {
            (0..4).map(|j| inp[4 + j] * 2).collect()
        };
        let want = arr.iter().fold(0i32, |s, v| s * 3 + v);
        assert_eq!(got[i as usize], want, "work-item {i}");
    }
    let mixed = generic_il(
        r#"
        __kernel void k(__global int *o, __global int *g, int w) {
            int a[4];
            for (int j = 0; j < 4; j++) a[j] = g[j] + (int)get_global_id(0);
            int *p = (w == 0) ? a : (int *)g;
            o[get_global_id(0)] = p[w & 3];
        }
    "#,
    );
    let log = build_il(&e, &mixed).expect_err("a generic pointer into private or global memory");
    assert!(
        log.contains("needs the generic address space"),
        "log should give the reason: {log}"
    );
}
