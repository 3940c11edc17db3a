//! OpenCL C language points of issue 5 not covered elsewhere: unions by value and in global
//! memory, `vec3` layout inside structs, private strings and constant tables reached through
//! pointers passed to functions, `vstore_half` in each rounding mode, the kernel attributes as
//! `CL_KERNEL_ATTRIBUTES` reports them, `-cl-fast-relaxed-math` and build logs. Every device result is
//! compared with an answer computed on the host.
mod common;
use common::*;

// ---------------------------------------------------------------------------------------------
// Unions and struct layout

/// Mirrors the kernel's `union U { float f; uint u; uchar b[4]; }` inside a struct with a
/// `float3` (16-byte size and alignment in OpenCL C).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Holder {
    tag: u32,
    _pad: [u32; 3],
    v: [f32; 4], // float3: 12 bytes of data, 16 of storage
    bits: u32,   // union U
    _tail: [u32; 3],
}

#[test]
fn unions_by_value_and_in_global_memory() {
    let e = Env::new();
    let src = r#"
        typedef union { float f; uint u; uchar b[4]; } U;
        typedef struct { uint tag; float3 v; U bits; } Holder;
        __kernel void k(U by_value, __global Holder *h, __global uint *out) {
            size_t i = get_global_id(0);
            // the union passed by value: its float read as bits and its bytes one by one
            out[i * 4 + 0] = by_value.u + (uint)i;
            out[i * 4 + 1] = by_value.b[i % 4];
            // a union inside a struct in global memory, written as float, read back as uint
            h[i].bits.f = h[i].v.y * 2.0f;
            out[i * 4 + 2] = h[i].bits.u;
            out[i * 4 + 3] = (uint)sizeof(Holder) * 1000u + (uint)__alignof__(Holder);
        }
    "#;
    let k = e.kern(src, "k");
    let n = 8;
    let by_value = 3.25f32;
    let mut hs = vec![Holder::default(); n];
    for (i, h) in hs.iter_mut().enumerate() {
        h.tag = i as u32;
        h.v = [i as f32, 0.5 + i as f32, -(i as f32), 99.0];
    }
    let hbuf = e.buf(&hs);
    let out = e.zeros::<u32>(n * 4);
    set_arg(k, 0, &by_value);
    arg_mem(k, 1, hbuf);
    arg_mem(k, 2, out);
    e.run(k, &[n], None, None);
    let got: Vec<u32> = e.read(out, n * 4);
    let back: Vec<Holder> = e.read(hbuf, n);
    assert_eq!(std::mem::size_of::<Holder>(), 48);
    for i in 0..n {
        let want_bits = (hs[i].v[1] * 2.0).to_bits();
        assert_eq!(
            got[i * 4],
            by_value.to_bits().wrapping_add(i as u32),
            "union by value, item {i}"
        );
        assert_eq!(
            got[i * 4 + 1],
            by_value.to_le_bytes()[i % 4] as u32,
            "union bytes, item {i}"
        );
        assert_eq!(
            got[i * 4 + 2],
            want_bits,
            "union in global memory, item {i}"
        );
        assert_eq!(
            got[i * 4 + 3],
            48 * 1000 + 16,
            "sizeof/alignof of the struct with float3"
        );
        assert_eq!(
            back[i].bits, want_bits,
            "union member written at its offset, item {i}"
        );
        assert_eq!(
            back[i].tag, i as u32,
            "neighbouring member untouched, item {i}"
        );
        assert_eq!(back[i].v, hs[i].v, "float3 member untouched, item {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Private memory: strings, constant tables, pointers passed to functions

#[test]
fn private_string_copied_up_to_its_terminator() {
    // A copy loop with a run-time length (LLVM would make it a memcpy of variable size).
    let e = Env::new();
    let src = r#"
        int my_strlen(const char *s) { int n = 0; while (s[n]) n++; return n; }
        void rev(char *s, int n) { for (int i = 0; i < n / 2; i++) { char t = s[i]; s[i] = s[n - 1 - i]; s[n - 1 - i] = t; } }
        __kernel void k(__global char *out, int skip) {
            char s[] = "Hello, vkcl!";
            int n = my_strlen(s + skip);
            rev(s + skip, n);
            for (int i = 0; i <= n; i++) out[i] = s[skip + i];
        }
    "#;
    let k = e.kern(src, "k");
    for skip in [0i32, 3, 12] {
        let out = e.buf(&[0x55u8; 16]);
        arg_mem(k, 0, out);
        set_arg(k, 1, &skip);
        e.run(k, &[1], None, None);
        let got: Vec<u8> = e.read(out, 16);
        let mut want: Vec<u8> = b"Hello, vkcl!"[skip as usize..]
            .iter()
            .rev()
            .copied()
            .collect();
        want.push(0);
        want.resize(16, 0x55);
        assert_eq!(got, want, "skip {skip}");
    }
}

#[test]
fn private_strings_and_tables_through_pointers() {
    let e = Env::new();
    let src = r#"
        __constant int primes[8] = { 2, 3, 5, 7, 11, 13, 17, 19 };
        int sum_from(const int *p, int n) { int s = 0; for (int j = 0; j < n; j++) s += p[j]; return s; }
        int count_char(const char *s, char c) { int n = 0; while (*s) { n += (*s == c); s++; } return n; }
        __kernel void k(__global int *out) {
            int i = get_global_id(0);
            char word[] = "mississippi";
            int local_copy[8];
            for (int j = 0; j < 8; j++) local_copy[j] = primes[j] * (i + 1);
            int *mid = local_copy + (i % 4);
            word[i % 11] = 'x';
            out[i * 3 + 0] = sum_from(mid, 4);
            out[i * 3 + 1] = count_char(word, 's');
            out[i * 3 + 2] = word[(i + 1) % 11];
        }
    "#;
    let k = e.kern(src, "k");
    let n = 16;
    let out = e.zeros::<i32>(n * 3);
    arg_mem(k, 0, out);
    e.run(k, &[n], None, None);
    let got: Vec<i32> = e.read(out, n * 3);
    let primes = [2, 3, 5, 7, 11, 13, 17, 19];
    for i in 0..n {
        let table: Vec<i32> = primes.iter().map(|p| p * (i as i32 + 1)).collect();
        let want_sum: i32 = table[i % 4..i % 4 + 4].iter().sum();
        let mut word = b"mississippi".to_vec();
        word[i % 11] = b'x';
        let want_s = word.iter().filter(|&&c| c == b's').count() as i32;
        assert_eq!(
            got[i * 3],
            want_sum,
            "pointer into a private array, item {i}"
        );
        assert_eq!(
            got[i * 3 + 1],
            want_s,
            "private string from a literal, item {i}"
        );
        assert_eq!(
            got[i * 3 + 2],
            word[(i + 1) % 11] as i32,
            "string byte, item {i}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// vstore_half in each rounding mode

/// The f16 next to `h` (bits) towards +infinity (`up`) or -infinity (sign-magnitude steps;
/// from a zero of either sign to the smallest subnormal of the direction's sign).
fn f16_step(h: u16, up: bool) -> u16 {
    let negative = h & 0x8000 != 0;
    let magnitude = h & 0x7fff;
    if negative == up {
        // towards zero
        if magnitude == 0 {
            (if up { 0 } else { 0x8000 }) | 1
        } else {
            h - 1
        }
    } else {
        h + 1 // away from zero (0x7bff + 1 is infinity)
    }
}

/// f32 -> f16 bits under `mode` ("rte", "rtz", "rtp", "rtn"), on the host: round to nearest
/// even, then step to the neighbour on the side the mode asks for when the result is inexact.
fn to_f16(x: f32, mode: &str) -> u16 {
    let rne = f16_bits(x);
    if x.is_nan() || mode == "rte" {
        return rne;
    }
    let back = f16_to_f32(rne);
    if back == x {
        return rne;
    }
    let (lo, hi) = if back < x {
        (rne, f16_step(rne, true))
    } else {
        (f16_step(rne, false), rne)
    };
    match mode {
        "rtp" => hi,
        "rtn" => lo,
        _ if x > 0.0 => lo,
        _ => hi,
    }
}

/// f32 -> f16 bits, round to nearest even (IEEE 754 binary16).
fn f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    // value = 1.man * 2^(exp-127); binary16 subnormal step 2^-24
    let e = exp - 127;
    if e > 15 {
        return sign | 0x7c00;
    }
    let (full, shift) = if e >= -14 {
        ((man | 0x80_0000) as u64, 13) // normal: keep 10 mantissa bits
    } else if exp == 0 {
        (man as u64, 32) // f32 subnormals are far below the f16 range
    } else {
        ((man | 0x80_0000) as u64, (13 + (-14 - e)) as u32)
    };
    if shift >= 32 {
        return sign;
    }
    let kept = full >> shift;
    let rest = full & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let rounded = kept + u64::from(rest > half || (rest == half && kept & 1 == 1));
    let bits = if e >= -14 {
        // normal: rounded includes the hidden bit (may carry into the exponent)
        (((e + 15) as u64) << 10) + (rounded - 0x400)
    } else {
        rounded
    };
    sign | bits.min(0x7c00) as u16
}

/// f16 bits -> f32 (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f32;
    match exp {
        0 => sign * man * 2f32.powi(-24),
        31 if man == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15),
    }
}

#[test]
fn host_f16_reference_rounds_as_ieee() {
    assert_eq!(f16_bits(1.0), 0x3c00);
    assert_eq!(f16_bits(65504.0), 0x7bff);
    assert_eq!(
        f16_bits(65520.0),
        0x7c00,
        "halfway above the largest half rounds to infinity"
    );
    assert_eq!(f16_bits(2f32.powi(-24)), 1);
    assert_eq!(
        f16_bits(-2f32.powi(-25)),
        0x8000,
        "halfway to the smallest subnormal: even (zero)"
    );
    assert_eq!(to_f16(1.0 + 2f32.powi(-11), "rtp"), 0x3c01);
    assert_eq!(to_f16(1.0 + 2f32.powi(-11), "rtz"), 0x3c00);
    assert_eq!(to_f16(-1.0 - 2f32.powi(-11), "rtn"), 0xbc01);
    assert_eq!(to_f16(1e6, "rtz"), 0x7bff);
    assert_eq!(to_f16(-1e6, "rtp"), 0xfbff);
    assert_eq!(to_f16(1e-10, "rtp"), 1);
    assert_eq!(to_f16(-1e-10, "rtp"), 0x8000);
    assert_eq!(to_f16(-1e-10, "rtn"), 0x8001);
}

#[test]
fn vstore_half_in_each_rounding_mode() {
    let e = Env::new();
    let modes = ["rte", "rtz", "rtp", "rtn"];
    let mut src = String::new();
    for m in modes {
        src += &format!(
            "__kernel void st_{m}(__global const float *x, __global half *h) {{\n\
               size_t i = get_global_id(0);\n\
               vstore_half_{m}(x[i], i, h);\n\
               if (i % 4 == 0) vstore_half4_{m}(vload4(i / 4, x), i / 4, h + get_global_size(0));\n\
             }}\n"
        );
    }
    let p = e.build(&src);
    let mut rng = Rng(0x5eed_f16);
    let mut xs: Vec<f32> = vec![
        1.0,
        -1.0,
        0.0,
        -0.0,
        65504.0,
        65519.0,
        65520.0,
        1e6,
        -1e6,
        1e-10,
        -1e-10,
        2f32.powi(-24),
        3.0 * 2f32.powi(-26),
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0 + 2f32.powi(-11),
    ];
    while xs.len() < 256 {
        let m = rng.next_f32() * 2.0 - 1.0;
        let scale = 2f32.powi((rng.next_u32() % 44) as i32 - 28);
        xs.push(m * scale);
    }
    let n = xs.len();
    let x = e.buf(&xs);
    for m in modes {
        let k = e.kernel(p, &format!("st_{m}"));
        let h = e.zeros::<u16>(2 * n);
        arg_mem(k, 0, x);
        arg_mem(k, 1, h);
        e.run(k, &[n], None, None);
        let got: Vec<u16> = e.read(h, 2 * n);
        for i in 0..n {
            let want = to_f16(xs[i], m);
            assert_eq!(
                got[i], want,
                "vstore_half_{m}({:e}) = {:#06x}, want {want:#06x}",
                xs[i], got[i]
            );
            assert_eq!(got[n + i], want, "vstore_half4_{m}({:e})", xs[i]);
        }
    }
}

#[test]
fn vstore_half_into_a_private_ushort_array() {
    // The CTS half suite's private variant: halves stored through `(__private half *)` over a
    // `ushort` array (at its start, and a vector store at vector offset 1, elements 4 to 7),
    // read back.
    let e = Env::new();
    let src = "__kernel void test(__global const float *p, __global half *f) {\n\
                 __private ushort data[16];\n\
                 size_t i = get_global_id(0);\n\
                 vstore_half_rtz(p[i], 0, (__private half *)(&data[0]));\n\
                 vstore_half4_rtp(vload4(i, p) * 2.0f, 1, (__private half *)data);\n\
                 for (int k = 0; k < 5; k++)\n\
                   vstore_half(vload_half(k == 0 ? 0 : k + 3, (__private half *)data), 0, &f[5 * i + k]);\n\
               }\n";
    let k = e.kern(src, "test");
    let n = 64;
    let mut rng = Rng(0xf16);
    let xs: Vec<f32> = (0..4 * n).map(|_| (rng.next_f32() - 0.5) * 300.0).collect();
    let x = e.buf(&xs);
    let out = e.zeros::<u16>(5 * n);
    arg_mem(k, 0, x);
    arg_mem(k, 1, out);
    e.run(k, &[n], None, None);
    let got: Vec<u16> = e.read(out, 5 * n);
    for i in 0..n {
        assert_eq!(
            got[5 * i],
            to_f16(xs[i], "rtz"),
            "item {i}: rtz at the array's start"
        );
        for c in 0..4 {
            let v = xs[4 * i + c] * 2.0;
            assert_eq!(
                got[5 * i + 1 + c],
                to_f16(v, "rtp"),
                "item {i}: component {c}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Kernel attributes and build options

#[test]
fn kernel_attributes_are_reported() {
    let e = Env::new();
    let src = "__kernel __attribute__((work_group_size_hint(8, 2, 1))) __attribute__((vec_type_hint(float4)))\n\
               void hinted(__global float4 *p) { p[get_global_id(0)] *= 2.0f; }\n\
               __kernel __attribute__((reqd_work_group_size(4, 1, 1))) void fixed(__global int *p) { p[get_global_id(0)] = 7; }\n";
    let p = e.build(src);
    let attributes = |name: &str| {
        let k = e.kernel(p, name);
        info_string(|n, v, r| unsafe { cl!(clGetKernelInfo)(k, CL_KERNEL_ATTRIBUTES, n, v, r) })
    };
    let hinted = attributes("hinted");
    assert!(hinted.contains("work_group_size_hint(8,2,1)"), "{hinted:?}");
    assert!(hinted.contains("vec_type_hint(float4)"), "{hinted:?}");
    assert_eq!(attributes("fixed"), "reqd_work_group_size(4,1,1)");
    // The hinted kernel still runs with any local size, and computes.
    let k = e.kernel(p, "hinted");
    let data: Vec<f32> = (0..64).map(|i| i as f32 - 7.5).collect();
    let b = e.buf(&data);
    arg_mem(k, 0, b);
    e.run(k, &[16], Some(&[4]), None);
    let got: Vec<f32> = e.read(b, 64);
    for (g, d) in got.iter().zip(&data) {
        assert_eq!(*g, d * 2.0);
    }
}

#[test]
fn fast_relaxed_math_defines_its_macro_and_stays_within_relaxed_limits() {
    let e = Env::new();
    let src = r#"
        __kernel void k(__global const float *x, __global float *y, __global int *flag) {
            size_t i = get_global_id(0);
            y[i * 3 + 0] = sin(x[i]);
            y[i * 3 + 1] = exp(x[i] * 0.25f);
            y[i * 3 + 2] = x[i] / 3.0f;
        #ifdef __FAST_RELAXED_MATH__
            flag[0] = 1;
        #else
            flag[0] = 2;
        #endif
        }
    "#;
    let xs: Vec<f32> = (0..128).map(|i| (i as f32 - 64.0) * 0.047).collect();
    for (opts, want_flag) in [
        ("-cl-fast-relaxed-math", 1),
        ("", 2),
        ("-cl-mad-enable -cl-no-signed-zeros", 2),
    ] {
        let k = e.kern_opts(src, opts, "k");
        let x = e.buf(&xs);
        let y = e.zeros::<f32>(xs.len() * 3);
        let flag = e.zeros::<i32>(1);
        arg_mem(k, 0, x);
        arg_mem(k, 1, y);
        arg_mem(k, 2, flag);
        e.run(k, &[xs.len()], None, None);
        let got: Vec<f32> = e.read(y, xs.len() * 3);
        assert_eq!(
            e.read::<i32>(flag, 1)[0],
            want_flag,
            "__FAST_RELAXED_MATH__ with {opts:?}"
        );
        for (i, &v) in xs.iter().enumerate() {
            let v64 = v as f64;
            // Relaxed limits (OpenCL C 7.4, relaxed math): sin absolute error <= 2^-11 in
            // [-pi, pi], exp 3 + floor(fabs(2x)) ulp, division 2.5 ulp.
            let (s, ex, d) = (v64.sin(), (v64 * 0.25).exp(), v64 / 3.0);
            assert!(
                (got[i * 3] as f64 - s).abs() <= 2f64.powi(-11),
                "sin({v}) {opts:?}"
            );
            let ulp = |w: f64| (w as f32).abs() * f32::EPSILON;
            let ulps_exp = 3.0 + (2.0 * v64 * 0.25).abs().floor();
            assert!(
                (got[i * 3 + 1] as f64 - ex).abs() <= ulps_exp * ulp(ex) as f64,
                "exp({v}) {opts:?}"
            );
            assert!(
                (got[i * 3 + 2] as f64 - d).abs() <= 2.5 * ulp(d) as f64 + 1e-30,
                "{v}/3 {opts:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Build logs

#[test]
fn build_log_names_the_line_of_each_error() {
    let e = Env::new();
    let src = "__kernel void ok(__global int *p) { p[0] = 1; }\n\
               \n\
               __kernel void bad(__global int *p) { p[0] = undeclared_a; }\n\
               __kernel void worse(__global int *p) { p[0] = undeclared_b; }\n";
    let (err, log) = e.try_build(src, "").err().expect("the build must fail");
    assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        log.contains(":3:") && log.contains("undeclared_a"),
        "line 3 named:\n{log}"
    );
    assert!(
        log.contains(":4:") && log.contains("undeclared_b"),
        "line 4 named:\n{log}"
    );
    // The context is still usable after the failed build.
    let k = e.kern(
        "__kernel void again(__global int *p) { p[get_global_id(0)] = 5; }",
        "again",
    );
    let b = e.zeros::<i32>(4);
    arg_mem(k, 0, b);
    e.run(k, &[4], None, None);
    assert_eq!(e.read::<i32>(b, 4), vec![5; 4]);
}

/// `cl_khr_extended_bit_ops` and `cl_khr_integer_dot_product` (written in vkcl's prelude):
/// every built-in against host answers, for 8- and 64-bit elements and a vector, in OpenCL C
/// 1.2 (where clang's header does not declare them) and 3.0.
#[test]
fn extended_bit_ops_and_integer_dot_products() {
    let e = Env::new();
    assert!(e.has_extension("cl_khr_extended_bit_ops"));
    assert!(e.has_extension("cl_khr_integer_dot_product"));
    let src = r#"
        __kernel void k(__global const char *c, __global const long *l, __global const uint *u,
                        __global int *out, __global long *lout) {
            int i = get_global_id(0);
            uint off = i % 9, cnt = (i / 9) % (9 - off);
            char a = c[2 * i], b = c[2 * i + 1];
            out[8 * i + 0] = bitfield_insert(a, b, off, cnt);
            out[8 * i + 1] = bitfield_extract_signed(a, off, cnt);
            out[8 * i + 2] = bitfield_extract_unsigned(a, off, cnt);
            out[8 * i + 3] = bit_reverse((uchar)a);
            uchar4 x = as_uchar4(u[3 * i]), y = as_uchar4(u[3 * i + 1]);
            out[8 * i + 4] = (int)dot(x, y);
            out[8 * i + 5] = dot(as_char4(x), y);
            out[8 * i + 6] = dot_acc_sat_4x8packed_ss_int(u[3 * i], u[3 * i + 1], (int)u[3 * i + 2]);
            out[8 * i + 7] = (int)dot_acc_sat(x, y, u[3 * i + 2]);
            uint loff = i % 65, lcnt = (i / 3) % (65 - loff);
            long2 v = (long2)(l[i], ~l[i]);
            long2 r = bit_reverse(v);
            lout[4 * i + 0] = r.x;
            lout[4 * i + 1] = r.y;
            lout[4 * i + 2] = bitfield_extract_signed(l[i], loff, lcnt);
            lout[4 * i + 3] = bitfield_insert(l[i], ~l[i], loff, lcnt);
        }
    "#;
    let n = 260;
    let mut rng = Rng(0x5eed);
    let c: Vec<i8> = (0..2 * n).map(|_| rng.next_u32() as i8).collect();
    let l: Vec<i64> = (0..n)
        .map(|_| ((u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32())) as i64)
        .collect();
    let mut u: Vec<u32> = (0..3 * n).map(|_| rng.next_u32()).collect();
    // Accumulators at the saturation edges.
    u[2] = i32::MAX as u32;
    u[5] = i32::MIN as u32;
    u[8] = u32::MAX;
    let bits = |count: u32, offset: u32| -> u64 {
        if count == 0 {
            0
        } else {
            (u64::MAX >> (64 - count)) << offset
        }
    };
    let sext = |v: u64, count: u32| -> i64 {
        if count == 0 {
            0
        } else {
            ((v << (64 - count)) as i64) >> (64 - count)
        }
    };
    for options in ["", "-cl-std=CL3.0"] {
        let k = e.kern_opts(src, options, "k");
        let (cm, lm, um) = (e.buf(&c), e.buf(&l), e.buf(&u));
        let (out, lout) = (e.zeros::<i32>(8 * n), e.zeros::<i64>(4 * n));
        for (i, m) in [cm, lm, um, out, lout].into_iter().enumerate() {
            arg_mem(k, i as u32, m);
        }
        e.run(k, &[n], None, None);
        let got: Vec<i32> = e.read(out, 8 * n);
        let lgot: Vec<i64> = e.read(lout, 4 * n);
        for i in 0..n {
            let (off, cnt) = ((i % 9) as u32, ((i / 9) % (9 - i % 9)) as u32);
            let (a, b) = (c[2 * i] as u8 as u64, c[2 * i + 1] as u8 as u64);
            let m = bits(cnt, off);
            let field = (a >> off) & bits(cnt, 0);
            let x = u[3 * i].to_le_bytes();
            let y = u[3 * i + 1].to_le_bytes();
            let udot: u32 = (0..4).map(|j| u32::from(x[j]) * u32::from(y[j])).sum();
            let sdot: i32 = (0..4)
                .map(|j| i32::from(x[j] as i8) * i32::from(y[j]))
                .sum();
            let ssdot: i32 = (0..4)
                .map(|j| i32::from(x[j] as i8) * i32::from(y[j] as i8))
                .sum();
            let want = [
                ((a & !m) | ((b << off) & m)) as u8 as i8 as i32,
                sext(field, cnt) as i8 as i32,
                field as i32,
                (a as u8).reverse_bits() as i32,
                udot as i32,
                sdot,
                ssdot.saturating_add(u[3 * i + 2] as i32),
                udot.saturating_add(u[3 * i + 2]) as i32,
            ];
            assert_eq!(
                &got[8 * i..8 * i + 8],
                &want,
                "{options:?} item {i}: a {a:#x} b {b:#x} offset {off} count {cnt}"
            );
            let (loff, lcnt) = ((i % 65) as u32, ((i / 3) % (65 - i % 65)) as u32);
            let v = l[i] as u64;
            let lm = bits(lcnt, loff);
            let lwant = [
                v.reverse_bits() as i64,
                (!v).reverse_bits() as i64,
                sext(if loff == 64 { 0 } else { v >> loff }, lcnt),
                ((v & !lm) | ((!v).checked_shl(loff).unwrap_or(0) & lm)) as i64,
            ];
            assert_eq!(
                &lgot[4 * i..4 * i + 4],
                &lwant,
                "{options:?} item {i}: long {v:#x} offset {loff} count {lcnt}"
            );
        }
    }
}
