//! Calls the front end must not leave as calls: `noinline` functions taking private, local and
//! global pointers, structs by value, values returned, a call chain three deep, one large
//! function called from several places, a kernel called from a kernel, a function left called
//! only after its callee was forced inline, and the helper functions llvm-spirv writes for
//! LLVM intrinsics (byte swaps, funnel shifts), each against a host answer.
mod common;
use common::*;

const N: usize = 64;

/// Runs kernel `name` of `src` over `N` work-items (work-groups of `local`) with one output
/// buffer of `N` uints (argument 0) and the input `input` (argument 1); returns the output.
fn run_uint(src: &str, name: &str, input: &[u32], local: usize) -> Vec<u32> {
    let e = Env::new();
    let k = e.kern(src, name);
    let out = e.zeros::<u32>(N);
    let inp = e.buf(input);
    arg_mem(k, 0, out);
    arg_mem(k, 1, inp);
    e.run(k, &[N], Some(&[local]), None);
    e.read::<u32>(out, N)
}

fn input() -> Vec<u32> {
    let mut r = Rng(0x5eed_ca11);
    (0..N).map(|_| r.next_u32()).collect()
}

#[test]
fn noinline_function_writes_through_a_private_pointer() {
    let src = r#"
        __attribute__((noinline)) void fill(uint *p, int n, uint seed) {
            for (int i = 0; i < n; i++) p[i] = seed * (uint)(i + 1) + (uint)i;
        }
        __attribute__((noinline)) uint sum(const uint *p, int n) {
            uint s = 0;
            for (int i = 0; i < n; i++) s += p[i] ^ (uint)i;
            return s;
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            uint a[8], b[5];
            size_t g = get_global_id(0);
            fill(a, 8, in[g]);
            fill(b, 5, in[g] + 1u);
            out[g] = sum(a, 8) * 3u + sum(b, 5);
        }"#;
    let inp = input();
    let fill = |seed: u32, n: u32| -> Vec<u32> {
        (0..n)
            .map(|i| seed.wrapping_mul(i + 1).wrapping_add(i))
            .collect()
    };
    let sum = |p: &[u32]| -> u32 {
        p.iter()
            .enumerate()
            .fold(0u32, |s, (i, v)| s.wrapping_add(v ^ i as u32))
    };
    let want: Vec<u32> = inp
        .iter()
        .map(|&x| {
            sum(&fill(x, 8))
                .wrapping_mul(3)
                .wrapping_add(sum(&fill(x.wrapping_add(1), 5)))
        })
        .collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

#[test]
fn noinline_function_reads_and_writes_local_memory() {
    let src = r#"
        __attribute__((noinline)) void reverse_into(__local uint *dst, __local const uint *src,
                                                   uint n, uint i) {
            dst[n - 1u - i] = src[i] + 7u;
        }
        __attribute__((noinline)) uint pair(__local const uint *p, uint i, uint n) {
            return p[i] * 2u + p[(i + 1u) % n];
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            __local uint a[16];
            __local uint b[16];
            uint l = get_local_id(0);
            uint n = get_local_size(0);
            a[l] = in[get_global_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            reverse_into(b, a, n, l);
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = pair(b, l, n);
        }"#;
    let inp = input();
    let mut want = vec![0u32; N];
    for g in 0..N / 16 {
        let a = &inp[g * 16..g * 16 + 16];
        let b: Vec<u32> = (0..16).map(|j| a[15 - j].wrapping_add(7)).collect();
        for l in 0..16 {
            want[g * 16 + l] = b[l].wrapping_mul(2).wrapping_add(b[(l + 1) % 16]);
        }
    }
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

#[test]
fn noinline_function_takes_global_pointers() {
    let src = r#"
        __attribute__((noinline)) void store_mix(__global uint *dst, __global const uint *src,
                                                size_t i) {
            dst[i] = src[i] * 2654435761u + src[(i + 3) % 64];
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            store_mix(out, in, get_global_id(0));
        }"#;
    let inp = input();
    let want: Vec<u32> = (0..N)
        .map(|i| {
            inp[i]
                .wrapping_mul(2_654_435_761)
                .wrapping_add(inp[(i + 3) % 64])
        })
        .collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

#[test]
fn noinline_functions_take_and_return_structs_by_value() {
    let src = r#"
        typedef struct { uint a; ushort b; uchar c; ulong d; } rec;
        __attribute__((noinline)) rec make(uint x) {
            rec r;
            r.a = x * 3u; r.b = (ushort)(x >> 5); r.c = (uchar)x; r.d = (ulong)x << 20;
            return r;
        }
        __attribute__((noinline)) uint fold(rec r, rec s) {
            return r.a + (uint)r.b * 5u + (uint)r.c + (uint)(r.d >> 17) ^ (s.a - (uint)s.c);
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            size_t g = get_global_id(0);
            out[g] = fold(make(in[g]), make(in[g] ^ 0xffu));
        }"#;
    let inp = input();
    #[derive(Clone, Copy)]
    struct Rec {
        a: u32,
        b: u16,
        c: u8,
        d: u64,
    }
    let make = |x: u32| Rec {
        a: x.wrapping_mul(3),
        b: (x >> 5) as u16,
        c: x as u8,
        d: (x as u64) << 20,
    };
    let fold = |r: Rec, s: Rec| -> u32 {
        r.a.wrapping_add((r.b as u32).wrapping_mul(5))
            .wrapping_add(r.c as u32)
            .wrapping_add((r.d >> 17) as u32)
            ^ s.a.wrapping_sub(s.c as u32)
    };
    let want: Vec<u32> = inp.iter().map(|&x| fold(make(x), make(x ^ 0xff))).collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

#[test]
fn call_chain_three_deep_with_pointers_at_each_level() {
    let src = r#"
        __attribute__((noinline)) void c3(uint *acc, uint v) { *acc = (*acc << 3) ^ v; }
        __attribute__((noinline)) void c2(uint *acc, uint v) { c3(acc, v + 1u); c3(acc, v * 7u); }
        __attribute__((noinline)) uint c1(uint v) {
            uint acc = v;
            for (uint i = 0; i < 3u; i++) c2(&acc, v + i);
            return acc;
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            out[get_global_id(0)] = c1(in[get_global_id(0)]);
        }"#;
    let inp = input();
    let c3 = |acc: &mut u32, v: u32| *acc = (*acc << 3) ^ v;
    let c2 = |acc: &mut u32, v: u32| {
        c3(acc, v.wrapping_add(1));
        c3(acc, v.wrapping_mul(7));
    };
    let c1 = |v: u32| {
        let mut acc = v;
        for i in 0..3 {
            c2(&mut acc, v.wrapping_add(i));
        }
        acc
    };
    let want: Vec<u32> = inp.iter().map(|&x| c1(x)).collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

/// The host side of the large `mix` below: 64 unrolled rounds over a 16-word state.
fn mix(state: &mut [u32; 16], key: u32) {
    for r in 0..64u32 {
        let i = (r % 16) as usize;
        let j = ((r * 7 + 3) % 16) as usize;
        state[i] = state[i]
            .wrapping_add(state[j] ^ key.wrapping_add(r))
            .rotate_left(r % 31 + 1);
    }
}

#[test]
fn large_noinline_function_called_from_several_places() {
    let src = r#"
        __attribute__((noinline)) void mix(uint *state, uint key) {
            #pragma unroll
            for (uint r = 0; r < 64u; r++) {
                uint i = r % 16u, j = (r * 7u + 3u) % 16u;
                state[i] = rotate(state[i] + (state[j] ^ (key + r)), r % 31u + 1u);
            }
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            size_t g = get_global_id(0);
            uint s[16], t[16];
            for (int i = 0; i < 16; i++) { s[i] = in[(g + i) % 64]; t[i] = s[i] ^ 0x9e3779b9u; }
            mix(s, 1u);
            mix(t, in[g]);
            if (in[g] & 1u) mix(s, 2u); else mix(t, 3u);
            uint h = 0;
            for (int i = 0; i < 16; i++) h = h * 31u + s[i] + t[i] * 17u;
            out[g] = h;
        }"#;
    let inp = input();
    let want: Vec<u32> = (0..N)
        .map(|g| {
            let mut s = [0u32; 16];
            let mut t = [0u32; 16];
            for i in 0..16 {
                s[i] = inp[(g + i) % 64];
                t[i] = s[i] ^ 0x9e37_79b9;
            }
            mix(&mut s, 1);
            mix(&mut t, inp[g]);
            if inp[g] & 1 != 0 {
                mix(&mut s, 2);
            } else {
                mix(&mut t, 3);
            }
            (0..16).fold(0u32, |h, i| {
                h.wrapping_mul(31)
                    .wrapping_add(s[i])
                    .wrapping_add(t[i].wrapping_mul(17))
            })
        })
        .collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

#[test]
fn kernel_called_from_another_kernel() {
    let src = r#"
        __kernel void inner(__global uint *out, __global const uint *in) {
            size_t g = get_global_id(0);
            out[g] = in[g] * 5u + 1u;
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            inner(out, in);
            out[get_global_id(0)] ^= 0xa5u;
        }"#;
    let inp = input();
    let want: Vec<u32> = inp
        .iter()
        .map(|&x| x.wrapping_mul(5).wrapping_add(1) ^ 0xa5)
        .collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

/// The host side of `scramble` below.
fn scramble(mut x: u32) -> u32 {
    for r in 0..(x & 7) + 1 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x = x.wrapping_mul(0x9e37_79b9).wrapping_add(r);
        x = x.rotate_left(7) ^ (x >> 3) ^ x.wrapping_mul(0x85eb_ca6b);
        x = (x ^ (x >> 16))
            .wrapping_mul(0xc2b2_ae35)
            .wrapping_add(x << 11);
        x = x
            .wrapping_add(x.rotate_left(19).wrapping_mul(5))
            .wrapping_sub(x >> 9);
    }
    x
}

/// A small function whose one call is on a branch `__builtin_expect` marks cold, calling a
/// `noinline` one: opt inlines `wrapped` into the kernel (its cost is below the 45 LLVM allows
/// at cold call sites) and leaves `scramble`; the second opt run, with `scramble` forced
/// inline, inlines it into `wrapped` first, which then costs too much for the cold call site
/// and stays called (pyopencl's `bessel_jn` kernel failed so, with `bessel_jv`). The front
/// end forces functions until none is left called.
#[test]
fn function_left_called_after_its_callee_is_forced_inline() {
    let src = r#"
        __attribute__((noinline)) uint scramble(uint x) {
            uint n = (x & 7u) + 1u;
            for (uint r = 0; r < n; r++) {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5;
                x = x * 0x9e3779b9u + r;
                x = rotate(x, 7u) ^ (x >> 3) ^ (x * 0x85ebca6bu);
                x = (x ^ (x >> 16)) * 0xc2b2ae35u + (x << 11);
                x = x + rotate(x, 19u) * 5u - (x >> 9);
            }
            return x;
        }
        uint wrapped(uint x) { return scramble(x); }
        __kernel void k(__global uint *out, __global const uint *in) {
            size_t g = get_global_id(0);
            uint v = in[g];
            if (__builtin_expect(g % 4u == 3u, 0)) v = wrapped(v);
            out[g] = v;
        }"#;
    let inp = input();
    let want: Vec<u32> = inp
        .iter()
        .enumerate()
        .map(|(g, &x)| if g % 4 == 3 { scramble(x) } else { x })
        .collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

/// Byte swaps written as shifts (opt makes `llvm.bswap` of them, which llvm-spirv writes as a
/// helper function `spirv.llvm_bswap_*`: the call hashcat's `m00000_m04` failed on), scalar
/// and vector, 16, 32 and 64 bits, and rotates (`llvm.fshl`), beside each other.
#[test]
fn byte_swaps_and_rotates_llvm_writes_as_helper_calls() {
    let src = r#"
        uint swap32(uint v) {
            return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
        }
        uint4 swap32x4(uint4 v) {
            return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
        }
        ushort swap16(ushort v) { return (ushort)((v >> 8) | (v << 8)); }
        ulong swap64(ulong v) {
            return ((ulong)swap32((uint)v) << 32) | (ulong)swap32((uint)(v >> 32));
        }
        __kernel void k(__global uint *out, __global const uint *in) {
            size_t g = get_global_id(0);
            uint x = in[g];
            uint4 v = (uint4)(x, x + 1u, x ^ 0xdeadbeefu, x * 3u);
            uint4 w = swap32x4(v);
            ulong l = swap64(((ulong)x << 32) | (ulong)(x * 7u));
            out[g] = swap32(x) + w.x * 3u + w.y + (w.z ^ w.w) + (uint)swap16((ushort)x) * 11u
                     + (uint)(l >> 7) + rotate(x, 13u) + (uint)(l ^ (l >> 32));
        }"#;
    let inp = input();
    let want: Vec<u32> = inp
        .iter()
        .map(|&x| {
            let w = [
                x.swap_bytes(),
                x.wrapping_add(1).swap_bytes(),
                (x ^ 0xdead_beef).swap_bytes(),
                x.wrapping_mul(3).swap_bytes(),
            ];
            let l = (((x as u64) << 32) | x.wrapping_mul(7) as u64).swap_bytes();
            x.swap_bytes()
                .wrapping_add(w[0].wrapping_mul(3))
                .wrapping_add(w[1])
                .wrapping_add(w[2] ^ w[3])
                .wrapping_add(((x as u16).swap_bytes() as u32).wrapping_mul(11))
                .wrapping_add((l >> 7) as u32)
                .wrapping_add(x.rotate_left(13))
                .wrapping_add((l ^ (l >> 32)) as u32)
        })
        .collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}

/// Builds `src`, which must fail; returns the build log.
fn build_failure_log(src: &str) -> String {
    let e = Env::new();
    match e.try_build(src, "") {
        Ok(_) => panic!("the build succeeded"),
        Err((code, log)) => {
            assert_eq!(code, CL_BUILD_PROGRAM_FAILURE, "log: {log}");
            log
        }
    }
}

/// OpenCL C forbids recursion (OpenCL C 3.0 section 6.11): the build fails and the log names
/// the function still called. (Not a tail recursion, which opt turns into a loop.)
#[test]
fn recursive_call_fails_the_build_naming_the_function() {
    let log = build_failure_log(
        r#"
        uint fib(uint n) { return n < 2u ? n : fib(n - 1u) + fib(n - 2u); }
        __kernel void k(__global uint *out, __global const uint *in) {
            out[get_global_id(0)] = fib(in[get_global_id(0)] & 7u);
        }"#,
    );
    assert!(
        log.contains("`fib`") && log.contains("recursion is not supported"),
        "log: {log}"
    );
}

/// A function declared but defined nowhere in the program: the build fails and says so.
#[test]
fn call_of_an_undefined_function_fails_the_build_naming_it() {
    let log = build_failure_log(
        r#"
        uint elsewhere(uint x);
        __kernel void k(__global uint *out, __global const uint *in) {
            out[get_global_id(0)] = elsewhere(in[get_global_id(0)]);
        }"#,
    );
    assert!(
        log.contains("`elsewhere`") && log.contains("does not define"),
        "log: {log}"
    );
}

/// 16- and 8-bit byte swaps and rotates: the only 16- and 8-bit shifts a program reaches the
/// device with (llvm-spirv's `spirv.llvm_bswap_i16` helper, the funnel-shift expansion of
/// `rotate`). NVIDIA's Vulkan driver gave 0 for them (H200, 2026-12-02) until the lowering did
/// them in 32 bits (`lower/narrowshift.rs`).
#[test]
fn sixteen_and_eight_bit_swaps_and_rotates() {
    let src = r#"
        ushort swap16(ushort v) { return (ushort)((v >> 8) | (v << 8)); }
        __kernel void k(__global uint *out, __global const uint *in) {
            size_t g = get_global_id(0);
            uint x = in[g];
            ushort v = (ushort)x;
            uchar c = (uchar)(x >> 16);
            short s = (short)x;
            out[g] = (uint)swap16(v) + (uint)rotate(v, (ushort)5) * 3u
                     + (uint)rotate(c, (uchar)3) * 7u + (uint)(ushort)rotate(s, (short)9) * 13u;
        }"#;
    let inp = input();
    let want: Vec<u32> = inp
        .iter()
        .map(|&x| {
            let v = x as u16;
            let c = (x >> 16) as u8;
            v.swap_bytes() as u32
                + v.rotate_left(5) as u32 * 3
                + c.rotate_left(3) as u32 * 7
                + (x as u16).rotate_left(9) as u32 * 13
        })
        .collect();
    assert_eq!(run_uint(src, "k", &inp, 16), want);
}
