//! Atomics in kernels: OpenCL 1.x atomic functions on global and local memory, C11-style
//! OpenCL C 3.0 atomics, float atomics and `atomic_flag`, counted against host answers.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::kernels::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

// ---------------------------------------------------------------------------------------------
// Atomics

const ATOMICS: &str = include_str!("../src/compiler/testdata/atomics.cl");

#[test]
fn histogram_with_local_and_global_atomics() {
    let env = Env::new();
    let mut rng = Rng(12);
    let n = 100_003usize;
    let data: Vec<u8> = (0..n).map(|_| (rng.next_u32() >> 13) as u8).collect();
    let mut want = [0u32; 256];
    for &b in &data {
        want[b as usize] += 1;
    }
    let (md, mbins) = (env.buf(&data), env.zeros::<u32>(256));
    let k = env.kern(ATOMICS, "histogram");
    arg_mem(k, 0, md);
    set_arg(k, 1, &(n as u32));
    arg_mem(k, 2, mbins);
    arg_local(k, 3, 256 * 4);
    env.run(k, &[64 * 32], Some(&[64]), None);
    let got: Vec<u32> = env.read(mbins, 256);
    assert_eq!(got, want.to_vec());
}

#[test]
fn global_atomic_functions() {
    let env = Env::new();
    let n = 300i32;
    let init: Vec<i32> = vec![10, 10, 10, 10, 1000, -1000, -1, 0, 0, -5, 0, 0];
    let (mp, mu) = (env.buf(&init), env.buf(&[u32::MAX, 0u32]));
    let k = env.kern(ATOMICS, "global_atomics");
    arg_mem(k, 0, mp);
    arg_mem(k, 1, mu);
    env.run(k, &[n as usize], Some(&[30]), None);
    let p: Vec<i32> = env.read(mp, 12);
    let u: Vec<u32> = env.read(mu, 2);
    assert_eq!(p[0], 10 + n);
    assert_eq!(p[1], 10 - n);
    assert_eq!(p[2], 10 + n);
    assert_eq!(p[3], 10 - n);
    assert_eq!(p[4], 0);
    assert_eq!(p[5], n - 1);
    assert_eq!(p[6], 0, "every bit cleared");
    assert_eq!(p[7], -1, "every bit set");
    assert_eq!(p[8], (0..n).fold(0, |a, i| a ^ i));
    assert!(
        (0..n).contains(&p[9]),
        "xchg leaves some item's id: {}",
        p[9]
    );
    // cmpxchg(0 -> i): whoever comes first with i != 0 wins; later ones see non-zero.
    assert!((0..n).contains(&p[10]));
    assert_eq!(p[11], 2 * n);
    assert_eq!(u, vec![0, (n - 1) as u32]);
}

#[test]
fn local_atomics_per_group() {
    let env = Env::new();
    let (groups, wg) = (6usize, 40usize);
    let out = env.zeros::<i32>(groups * 2);
    let k = env.kern(ATOMICS, "local_atomics");
    arg_mem(k, 0, out);
    env.run(k, &[groups * wg], Some(&[wg]), None);
    let got: Vec<i32> = env.read(out, groups * 2);
    for g in 0..groups {
        assert_eq!(got[g * 2], wg as i32, "counter of group {g}");
        assert_eq!(got[g * 2 + 1], wg as i32 - 1, "max of group {g}");
    }
}

const ATOMIC_MORE: &str = r#"
__kernel void slots(__global uint *counter, __global uint *out) {
    uint slot = atomic_inc(counter);
    out[slot] = (uint)get_global_id(0);
}

__kernel void cas_add(__global int *sum, __global const int *in) {
    int v = in[get_global_id(0)];
    int old = *sum;
    for (;;) {
        int seen = atomic_cmpxchg(sum, old, old + v);
        if (seen == old)
            break;
        old = seen;
    }
}

__kernel void local_cas(__global int *out) {
    __local int acc;
    if (get_local_id(0) == 0)
        acc = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = (int)get_local_id(0) + 1;
    int old = acc;
    for (;;) {
        int seen = atomic_cmpxchg(&acc, old, old + v);
        if (seen == old)
            break;
        old = seen;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        out[get_group_id(0)] = acc;
}
"#;

#[test]
fn atomic_inc_counter_hands_out_unique_slots() {
    let env = Env::new();
    let n = 5000usize;
    let (mc, mo) = (env.zeros::<u32>(1), env.buf(&vec![u32::MAX; n]));
    let k = env.kern(ATOMIC_MORE, "slots");
    arg_mem(k, 0, mc);
    arg_mem(k, 1, mo);
    env.run(k, &[n], Some(&[50]), None);
    assert_eq!(env.read::<u32>(mc, 1)[0], n as u32);
    let mut got: Vec<u32> = env.read(mo, n);
    got.sort_unstable();
    assert_eq!(got, (0..n as u32).collect::<Vec<_>>());
}

#[test]
fn cmpxchg_loops_on_global_and_local() {
    let env = Env::new();
    let mut rng = Rng(13);
    let n = 2000usize;
    let input = random_i32(&mut rng, n, -1000, 1000);
    let (ms, mi) = (env.buf(&[17i32]), env.buf(&input));
    let k = env.kern(ATOMIC_MORE, "cas_add");
    arg_mem(k, 0, ms);
    arg_mem(k, 1, mi);
    env.run(k, &[n], Some(&[40]), None);
    assert_eq!(env.read::<i32>(ms, 1)[0], 17 + input.iter().sum::<i32>());

    let (groups, wg) = (5usize, 64usize);
    let out = env.zeros::<i32>(groups);
    let k = env.kern(ATOMIC_MORE, "local_cas");
    arg_mem(k, 0, out);
    env.run(k, &[groups * wg], Some(&[wg]), None);
    let want = (wg * (wg + 1) / 2) as i32;
    assert_eq!(env.read::<i32>(out, groups), vec![want; groups]);
}

// ---------------------------------------------------------------------------------------------
// OpenCL C 3.0 atomics, float atomics, atomic_flag

const MORE: &str = r#"
__kernel void c30_atomics(__global atomic_int *c, __global atomic_int *s, __global int *o) {
    size_t g = get_group_id(0);
    int v = atomic_fetch_add_explicit(c + g, 1, memory_order_relaxed, memory_scope_work_group);
    if (get_local_id(0) == 0)
        atomic_store_explicit(s + g, (int)g + 1, memory_order_relaxed, memory_scope_work_group);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE);
    o[get_global_id(0)] =
        v + 1000 * atomic_load_explicit(s + g, memory_order_relaxed, memory_scope_work_group);
}

__kernel void local_view(__global const float2 *in, __global long *out) {
    __local float2 t[64];
    t[get_local_id(0)] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = ((__local long *)t)[63 - get_local_id(0)];
}

__kernel void pointer_select(__global int *a, __global int *b, int which) {
    __global int *p = which ? a : b;
    p[get_global_id(0)] = 7;
    int priv[4] = {1, 2, 3, 4};
    int *q = priv + (which & 1);
    a[get_global_id(0) + 100] = q[1] + q[2];
}

__kernel void char_vectors(__global const uchar4 *in, __global uchar4 *out, __global short2 *s) {
    size_t i = get_global_id(0);
    uchar4 v = in[i];
    out[i] = add_sat(v, (uchar4)(200)) + rotate(v, (uchar4)(3)) + (v >> (uchar4)(1))
             + hadd(v, v.wzyx) + popcount(v) + clz(v) + abs_diff(v, (uchar4)(128));
    s[i] = convert_short2_sat((int2)(v.x * 1000, -v.y * 1000));
}
"#;

#[test]
fn cl30_atomics_local_views_pointer_selects_char_vectors() {
    let env = Env::new();
    let mut rng = Rng(29);
    let p = env
        .try_build(MORE, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("{e}: {log}"));

    // Relaxed atomics at work-group scope: per work-group counters and flags.
    let (n, wg) = (640usize, 64usize);
    let groups = n / wg;
    let (mc, ms, mo) = (
        env.zeros::<i32>(groups),
        env.zeros::<i32>(groups),
        env.zeros::<i32>(n),
    );
    let k = env.kernel(p, "c30_atomics");
    arg_mem(k, 0, mc);
    arg_mem(k, 1, ms);
    arg_mem(k, 2, mo);
    env.run(k, &[n], Some(&[wg]), None);
    assert_eq!(env.read::<i32>(mc, groups), vec![wg as i32; groups]);
    let want: Vec<i32> = (1..=groups as i32).collect();
    assert_eq!(env.read::<i32>(ms, groups), want);
    let got: Vec<i32> = env.read(mo, n);
    for g in 0..groups {
        let mut part = got[g * wg..(g + 1) * wg].to_vec();
        part.sort_unstable();
        let want: Vec<i32> = (0..wg as i32).map(|v| v + 1000 * (g as i32 + 1)).collect();
        assert_eq!(part, want, "group {g}");
    }
    // The implicit forms are seq_cst at device scope, which the device claims
    // (__opencl_c_atomic_order_seq_cst, __opencl_c_atomic_scope_device; tests/features.rs).
    let k2 = env.kern_opts(
        "__kernel void k(__global atomic_int *c) {\n\
             atomic_store(c, atomic_load(c + 1) * 3);\n\
             atomic_fetch_add(c + 2, 5);\n\
         }",
        "-cl-std=CL3.0",
        "k",
    );
    let c = env.buf(&[0i32, 14, 1]);
    arg_mem(k2, 0, c);
    env.run(k2, &[16], None, None);
    assert_eq!(env.read::<i32>(c, 3), vec![42, 14, 1 + 16 * 5]);

    let v: Vec<[f32; 2]> = (0..128)
        .map(|_| [rng.next_f32(), -rng.next_f32()])
        .collect();
    let (mv, mo) = (env.buf(&v), env.zeros::<i64>(128));
    let k = env.kernel(p, "local_view");
    arg_mem(k, 0, mv);
    arg_mem(k, 1, mo);
    env.run(k, &[128], Some(&[64]), None);
    let got: Vec<i64> = env.read(mo, 128);
    for (i, g) in got.iter().enumerate() {
        let src = v[i / 64 * 64 + 63 - i % 64];
        let want = (src[0].to_bits() as u64 | (src[1].to_bits() as u64) << 32) as i64;
        assert_eq!(*g, want, "local view {i}");
    }

    let k = env.kernel(p, "pointer_select");
    for which in [0i32, 1] {
        let (ma, mb) = (env.zeros::<i32>(200), env.zeros::<i32>(100));
        arg_mem(k, 0, ma);
        arg_mem(k, 1, mb);
        set_arg(k, 2, &which);
        env.run(k, &[100], None, None);
        let (a, b): (Vec<i32>, Vec<i32>) = (env.read(ma, 200), env.read(mb, 100));
        let sel = if which == 1 { &a[..100] } else { &b[..] };
        assert!(sel.iter().all(|&x| x == 7), "which {which}");
        let q = if which == 1 { 3 + 4 } else { 2 + 3 };
        assert!(
            a[100..].iter().all(|&x| x == q),
            "private pointer arithmetic, which {which}"
        );
    }

    let c: Vec<[u8; 4]> = (0..256)
        .map(|_| std::array::from_fn(|_| rng.next_u32() as u8))
        .collect();
    let (mc, mo, ms) = (
        env.buf(&c),
        env.zeros::<[u8; 4]>(256),
        env.zeros::<[i16; 2]>(256),
    );
    let k = env.kernel(p, "char_vectors");
    arg_mem(k, 0, mc);
    arg_mem(k, 1, mo);
    arg_mem(k, 2, ms);
    env.run(k, &[256], None, None);
    let (go, gs): (Vec<[u8; 4]>, Vec<[i16; 2]>) = (env.read(mo, 256), env.read(ms, 256));
    for i in 0..256 {
        let v = c[i];
        let want: [u8; 4] = std::array::from_fn(|j| {
            let (x, w) = (v[j], v[3 - j]);
            [
                x.saturating_add(200),
                x.rotate_left(3),
                x >> 1,
                ((x as u16 + w as u16) >> 1) as u8,
                x.count_ones() as u8,
                x.leading_zeros() as u8,
                x.abs_diff(128),
            ]
            .iter()
            .fold(0u8, |s, t| s.wrapping_add(*t))
        });
        assert_eq!(go[i], want, "uchar4 of {v:?}");
        let want = [
            (v[0] as i32 * 1000).clamp(-32768, 32767) as i16,
            (-(v[1] as i32) * 1000).clamp(-32768, 32767) as i16,
        ];
        assert_eq!(gs[i], want, "short2 of {v:?}");
    }
}

const ODDS: &str = r#"
typedef struct { int n; float v[3]; } WithArray;

__kernel void float_xchg(__global float *f) {
    if (get_global_id(0) == 0) {
        float old = atomic_xchg(f, 2.0f);
        f[1] = old + 3.0f;
    }
}

__kernel void big_private(__global const float *in, __global float *out, int n) {
    float p[1024];
    for (int i = 0; i < 1024; i++)
        p[i] = in[i] * (float)get_global_id(0);
    out[get_global_id(0)] = p[(n + (int)get_global_id(0)) & 1023];
}

__kernel void struct_with_array(__global float *o, WithArray s, __constant WithArray *cs) {
    size_t i = get_global_id(0);
    o[i] = s.v[s.n % 3] + cs->v[i % 3] + (float)cs->n;
}

__kernel void too_much_local(__global float *f) {
    __local float big[16384];
    big[get_local_id(0)] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    f[get_global_id(0)] = big[0];
}
"#;

#[repr(C)]
#[derive(Clone, Copy)]
struct WithArray {
    n: i32,
    v: [f32; 3],
}

#[test]
fn float_atomics_big_private_arrays_struct_arrays_local_limit() {
    let env = Env::new();
    let mut rng = Rng(36);
    let p = env.build(ODDS);

    let mf = env.buf(&[5.0f32, 0.0]);
    let k = env.kernel(p, "float_xchg");
    arg_mem(k, 0, mf);
    env.run(k, &[4], None, None);
    assert_eq!(env.read::<f32>(mf, 2), vec![2.0, 8.0]);

    let input = random_f32(&mut rng, 1024, -1.0, 1.0);
    let (mi, mo) = (env.buf(&input), env.zeros::<f32>(64));
    let k = env.kernel(p, "big_private");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    set_arg(k, 2, &1000i32);
    env.run(k, &[64], None, None);
    let got: Vec<f32> = env.read(mo, 64);
    for (g, v) in got.iter().enumerate() {
        assert_eq!(*v, input[(1000 + g) & 1023] * g as f32, "big_private {g}");
    }

    let s = WithArray {
        n: 7,
        v: [1.5, 2.5, 3.5],
    };
    let cs = WithArray {
        n: 100,
        v: [10.0, 20.0, 30.0],
    };
    let (mo, mc) = (
        env.zeros::<f32>(9),
        env.buffer(CL_MEM_READ_ONLY, 16, Some(bytes(&[cs]))),
    );
    let k = env.kernel(p, "struct_with_array");
    arg_mem(k, 0, mo);
    set_arg(k, 1, &s);
    arg_mem(k, 2, mc);
    env.run(k, &[9], None, None);
    let got: Vec<f32> = env.read(mo, 9);
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, s.v[1] + cs.v[i % 3] + 100.0, "struct_with_array {i}");
    }

    // 64 KiB of __local: more than lavapipe's 32 KiB; refused at enqueue, not in Vulkan.
    let mut local_max: cl_ulong = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_LOCAL_MEM_SIZE,
            8,
            &mut local_max as *mut cl_ulong as *mut c_void,
            null_mut(),
        )
    });
    if local_max < 65536 {
        let mo = env.zeros::<f32>(64);
        let k = env.kernel(p, "too_much_local");
        arg_mem(k, 0, mo);
        assert_eq!(
            env.try_run(k, &[64], Some(&[64]), None),
            CL_OUT_OF_RESOURCES
        );
    }
}

/// `atomic_xchg` on a `__local float` (OpenCL C 6.15.12.1 allows float there) and the C11
/// `atomic_init` / `atomic_store_explicit` / `atomic_load_explicit` / `atomic_exchange_explicit`
/// on a `__local atomic_float`: every work-item swaps its own value in, so per work-group the
/// old values plus the final one are exactly the inputs plus the initial value (host check).
#[test]
fn local_float_atomic_exchange_load_store() {
    let env = Env::new();
    let src = r#"
__kernel void xchg(__global const float *in, __global float *olds, __global float *last) {
    __local float dest;
    size_t g = get_global_id(0);
    if (get_local_id(0) == 0) dest = -1.5f;
    barrier(CLK_LOCAL_MEM_FENCE);
    olds[g] = atomic_xchg(&dest, in[g]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) last[get_group_id(0)] = dest;
}

__kernel void c11(__global const float *in, __global float *olds, __global float *last) {
    __local atomic_float a;
    size_t g = get_global_id(0);
    if (get_local_id(0) == 0) {
        atomic_init(&a, 0.0f);
        atomic_store_explicit(&a, -2.5f, memory_order_relaxed, memory_scope_work_group);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    olds[g] = atomic_exchange_explicit(&a, in[g], memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        last[get_group_id(0)] = atomic_load_explicit(&a, memory_order_relaxed, memory_scope_work_group);
}
"#;
    let p = env
        .try_build(src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let mut rng = Rng(0xf10a7);
    let (n, l) = (512usize, 64usize);
    let input = random_f32(&mut rng, n, -100.0, 100.0);
    for (name, init) in [("xchg", -1.5f32), ("c11", -2.5f32)] {
        let k = env.kernel(p, name);
        let inb = env.buf(&input);
        let olds = env.zeros::<f32>(n);
        let last = env.zeros::<f32>(n / l);
        arg_mem(k, 0, inb);
        arg_mem(k, 1, olds);
        arg_mem(k, 2, last);
        env.run(k, &[n], Some(&[l]), None);
        let o: Vec<f32> = env.read(olds, n);
        let f: Vec<f32> = env.read(last, n / l);
        for grp in 0..n / l {
            let mut got: Vec<u32> = o[grp * l..(grp + 1) * l]
                .iter()
                .map(|x| x.to_bits())
                .collect();
            got.push(f[grp].to_bits());
            let mut want: Vec<u32> = input[grp * l..(grp + 1) * l]
                .iter()
                .map(|x| x.to_bits())
                .collect();
            want.push(init.to_bits());
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{name}: group {grp}");
        }
        unsafe {
            cl!(clReleaseMemObject)(inb);
            cl!(clReleaseMemObject)(olds);
            cl!(clReleaseMemObject)(last);
            cl!(clReleaseKernel)(k);
        }
    }
}

/// C11 `atomic_flag_test_and_set_explicit` / `atomic_flag_clear_explicit` on `__local` and
/// `__global` flags: every work-item tests-and-sets every flag, so exactly one finds each flag
/// clear (counted with `atomic_inc`); then the even work-items clear their own flag, and a last
/// test-and-set finds exactly those clear (host check). Relaxed order: lavapipe 22.3 runs a
/// memory fence (and the fences Mesa puts around an acquire or release atomic) inside
/// divergent control flow as a work-group barrier, which breaks the CTS's spin loops there
/// (see docs/cts-conform.md).
#[test]
fn atomic_flag_test_and_set_and_clear() {
    let env = Env::new();
    let src = r#"
#define N 64
__kernel void local_flags(__global uint *wins, __global int *flags_out) {
    __local atomic_flag flags[N];
    uint tid = get_global_id(0), lid = get_local_id(0);
    atomic_flag_clear_explicit(&flags[lid], memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < N; k++)
        if (!atomic_flag_test_and_set_explicit(&flags[k], memory_order_relaxed,
                                               memory_scope_work_group))
            atomic_inc(&wins[get_group_id(0) * N + k]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid % 2 == 0)
        atomic_flag_clear_explicit(&flags[lid], memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    flags_out[tid] = atomic_flag_test_and_set_explicit(&flags[lid], memory_order_relaxed,
                                                       memory_scope_work_group);
}

__kernel void global_flags(__global atomic_flag *flags, __global uint *wins,
                           __global int *flags_out) {
    uint tid = get_global_id(0), n = get_global_size(0);
    for (uint k = 0; k < n; k++)
        if (!atomic_flag_test_and_set_explicit(&flags[k], memory_order_relaxed,
                                               memory_scope_device))
            atomic_inc(&wins[k]);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (tid % 2 == 0)
        atomic_flag_clear_explicit(&flags[tid], memory_order_relaxed, memory_scope_device);
    barrier(CLK_GLOBAL_MEM_FENCE);
    flags_out[tid] = atomic_flag_test_and_set_explicit(&flags[tid], memory_order_relaxed,
                                                       memory_scope_device);
}
"#;
    let p = env
        .try_build(src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let n = 256usize;
    let odd: Vec<i32> = (0..n).map(|i| (i % 64 % 2) as i32).collect();
    // __local flags: 4 work-groups of 64.
    let k = env.kernel(p, "local_flags");
    let wins = env.zeros::<u32>(n);
    let out = env.zeros::<i32>(n);
    arg_mem(k, 0, wins);
    arg_mem(k, 1, out);
    env.run(k, &[n], Some(&[64]), None);
    assert_eq!(
        env.read::<u32>(wins, n),
        vec![1u32; n],
        "local: one winner per flag"
    );
    assert_eq!(env.read::<i32>(out, n), odd, "local: cleared flags");
    // __global flags: one work-group of 64.
    let k2 = env.kernel(p, "global_flags");
    let m = 64usize;
    let flags = env.zeros::<i32>(m);
    let wins2 = env.zeros::<u32>(m);
    let out2 = env.zeros::<i32>(m);
    arg_mem(k2, 0, flags);
    arg_mem(k2, 1, wins2);
    arg_mem(k2, 2, out2);
    env.run(k2, &[m], Some(&[m]), None);
    assert_eq!(
        env.read::<u32>(wins2, m),
        vec![1u32; m],
        "global: one winner per flag"
    );
    assert_eq!(
        env.read::<i32>(out2, m),
        odd[..m].to_vec(),
        "global: cleared flags"
    );
    assert_eq!(
        env.read::<i32>(flags, m),
        vec![1; m],
        "global: all set at the end"
    );
    unsafe {
        for b in [wins, out, flags, wins2, out2] {
            cl!(clReleaseMemObject)(b);
        }
        cl!(clReleaseKernel)(k);
        cl!(clReleaseKernel)(k2);
    }
}
