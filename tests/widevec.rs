//! Vectors of 8 and 16 components (`src/compiler/testdata/widevec.cl`) run on the device
//! through the real loader; every result is compared with the same computation on the host.
mod common;
use common::*;
use std::ptr::{null, null_mut};

const FIXTURE: &str = include_str!("../src/compiler/testdata/widevec.cl");

/// Number of work-items of every launch.
const N: usize = 64;

/// Runs `k` over a 1-D NDRange of `global` work-items (local size chosen by the runtime).
fn run(env: &Env, k: cl_kernel, global: usize) {
    let g = [global];
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
        )
    });
    env.finish();
}

/// A read-write buffer initialised with `v`.
fn input<T: Copy>(env: &Env, v: &[T]) -> cl_mem {
    env.buffer(CL_MEM_READ_WRITE, std::mem::size_of_val(v), Some(bytes(v)))
}

/// An uninitialised read-write buffer of `n` elements of T.
fn output<T>(env: &Env, n: usize) -> cl_mem {
    env.buffer(CL_MEM_READ_WRITE, n * std::mem::size_of::<T>(), None)
}

fn release(mems: &[cl_mem]) {
    for m in mems {
        unsafe { cl!(clReleaseMemObject)(*m) };
    }
}

/// Builds the fixture once per test and returns the named kernel.
fn fixture_kernel(env: &Env, name: &str) -> (cl_program, cl_kernel) {
    let p = env.build(FIXTURE);
    let k = env.kernel(p, name);
    (p, k)
}

fn release_kernel(p: cl_program, k: cl_kernel) {
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseProgram)(p);
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn stream_int8_and_float16() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "stream_int8");
    let dst = output::<i32>(&env, N * 8);
    set_arg(k, 0, &dst);
    run(&env, k, N);
    assert!(env.read::<i32>(dst, N * 8).iter().all(|v| *v == 257));
    release(&[dst]);
    release_kernel(p, k);

    let (p, k) = fixture_kernel(&env, "stream_float16");
    let dst = output::<f32>(&env, N * 16);
    set_arg(k, 0, &dst);
    run(&env, k, N);
    assert!(env.read::<f32>(dst, N * 16).iter().all(|v| *v == f32::MAX));
    release(&[dst]);
    release_kernel(p, k);
}

#[test]
fn copy_long8() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "copy_long8");
    let mut rng = Rng(7);
    let src: Vec<i64> = (0..N * 8)
        .map(|_| (u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32())) as i64)
        .collect();
    let s = input(&env, &src);
    let d = output::<i64>(&env, N * 8);
    set_arg(k, 0, &s);
    set_arg(k, 1, &d);
    run(&env, k, N);
    assert_eq!(env.read::<i64>(d, N * 8), src);
    release(&[s, d]);
    release_kernel(p, k);
}

#[test]
fn arguments_by_value() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "by_value");
    let c: i8 = -3;
    let a: [i32; 8] = [1, -2, 30, 400, -5000, 60000, 7, i32::MAX - 10];
    let b: [u64; 16] = std::array::from_fn(|j| (j as u64) * 0x1_0000_0001 + 11);
    let f: [f32; 8] = [1.5, -2.75, 3.25, 100.9, -0.5, 7.0, 8.99, -1234.5];
    let out = output::<i32>(&env, N * 40);
    set_arg(k, 0, &c);
    set_arg(k, 1, &a);
    set_arg(k, 2, &b);
    set_arg(k, 3, &f);
    set_arg(k, 4, &out);
    run(&env, k, N);
    let got = env.read::<i32>(out, N * 40);
    for i in 0..N {
        let o = &got[i * 40..i * 40 + 33];
        for j in 0..8 {
            assert_eq!(o[j], a[j].wrapping_add(i32::from(c)), "item {i} s{j}");
            assert_eq!(o[24 + j], f[j] as i32, "item {i} float s{j}");
        }
        for j in 0..16 {
            assert_eq!(o[8 + j], b[j] as i32, "item {i} ulong s{j}");
        }
        assert_eq!(o[32], b[15] as i32, "item {i} b.sf");
    }
    release(&[out]);
    release_kernel(p, k);
}

#[test]
fn arith_int16() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "arith_int16");
    let mut rng = Rng(11);
    let mut gen = || (rng.next_u32() % 32768) as i32 - 16384;
    let a: Vec<i32> = (0..N * 16).map(|_| gen()).collect();
    let b: Vec<i32> = (0..N * 16).map(|_| gen()).collect();
    let (ma, mb, mo) = (
        input(&env, &a),
        input(&env, &b),
        output::<i32>(&env, N * 16),
    );
    set_arg(k, 0, &ma);
    set_arg(k, 1, &mb);
    set_arg(k, 2, &mo);
    run(&env, k, N);
    let got = env.read::<i32>(mo, N * 16);
    for i in 0..N {
        let x = &a[i * 16..i * 16 + 16];
        let y = &b[i * 16..i * 16 + 16];
        let mut r: Vec<i32> = (0..16)
            .map(|j| {
                let v = x[j]
                    .wrapping_mul(y[j])
                    .wrapping_add(x[j] >> 2)
                    .wrapping_sub(y[j] & 0x0f0f);
                if x[j] > y[j] {
                    x[j] ^ y[j]
                } else {
                    v
                }
            })
            .collect();
        for j in 0..8 {
            r[j] = r[8 + j].wrapping_add(x[2 * j].max(y[2 * j + 1]));
        }
        for j in 0..8 {
            r[8 + j] = r[j].min(7);
        }
        r[3] = x[15];
        assert_eq!(&got[i * 16..i * 16 + 16], &r[..], "item {i}");
    }
    release(&[ma, mb, mo]);
    release_kernel(p, k);
}

#[test]
fn float_math_vload_vstore() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "float_math");
    let mut rng = Rng(5);
    // N * 16 floats read by vload16; vload8(i * 2 + 1) stays inside them.
    let input_f: Vec<f32> = (0..N * 16).map(|_| rng.next_f32() * 20.0 - 10.0).collect();
    let (mi, mo, mt) = (
        input(&env, &input_f),
        output::<f32>(&env, N * 16),
        output::<i32>(&env, N * 8),
    );
    set_arg(k, 0, &mi);
    set_arg(k, 1, &mo);
    set_arg(k, 2, &mt);
    run(&env, k, N);
    let got = env.read::<f32>(mo, N * 16);
    let got_t = env.read::<i32>(mt, N * 8);
    for i in 0..N {
        let v = &input_f[i * 16..i * 16 + 16];
        let w = &input_f[i * 16 + 8..i * 16 + 16];
        for j in 0..16 {
            let r = v[j] * 2.0 + w[j % 8];
            let r = r.abs() + v[j].abs().sqrt() + v[j].max(1.5);
            assert!(
                close(got[i * 16 + j], r),
                "item {i} s{j}: {} vs {r}",
                got[i * 16 + j]
            );
        }
        for j in 0..8 {
            assert_eq!(got_t[i * 8 + j], (w[j] * 3.0) as i32, "item {i} t.s{j}");
        }
    }
    release(&[mi, mo, mt]);
    release_kernel(p, k);
}

#[test]
fn char_and_short_vectors() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "small_types");
    let mut rng = Rng(3);
    let a: Vec<i8> = (0..N * 16).map(|_| rng.next_u32() as i8).collect();
    let b: Vec<i16> = (0..N * 8).map(|_| rng.next_u32() as i16).collect();
    let (ma, mb) = (input(&env, &a), input(&env, &b));
    let (mc, md) = (output::<u8>(&env, N * 16), output::<i16>(&env, N * 8));
    set_arg(k, 0, &ma);
    set_arg(k, 1, &mb);
    set_arg(k, 2, &mc);
    set_arg(k, 3, &md);
    run(&env, k, N);
    let c = env.read::<u8>(mc, N * 16);
    let d = env.read::<i16>(md, N * 8);
    for i in 0..N {
        let x = &a[i * 16..i * 16 + 16];
        let y = &b[i * 8..i * 8 + 8];
        for j in 0..16 {
            assert_eq!(
                c[i * 16 + j],
                (x[j] as u8).wrapping_add(1),
                "item {i} c.s{j}"
            );
        }
        let z: Vec<i16> = (0..8)
            .map(|j| {
                i16::from(x[8 + j])
                    .wrapping_mul(y[j])
                    .wrapping_add(i16::from(x[2 * j + 1]))
            })
            .collect();
        for j in 0..8 {
            assert_eq!(d[i * 8 + j], z[7 - j], "item {i} d.s{j}");
        }
    }
    release(&[ma, mb, mc, md]);
    release_kernel(p, k);
}

#[test]
fn double_and_ulong_vectors() {
    let env = Env::new();
    if !env.has_extension("cl_khr_fp64") {
        // Without cl_khr_fp64 the fixture leaves `mixed` out; forced in, the build fails
        // naming the extension (never double silently computed as float).
        let p = env.build(FIXTURE);
        let name = std::ffi::CString::new("mixed").unwrap();
        let mut err = 0;
        let k = unsafe { cl!(clCreateKernel)(p, name.as_ptr(), &mut err) };
        assert!(k.is_null());
        assert_eq!(err, CL_INVALID_KERNEL_NAME);
        unsafe { cl!(clReleaseProgram)(p) };
        let (err, log) = env
            .try_build(FIXTURE, "-D WIDEVEC_MIXED")
            .expect_err("double8 without cl_khr_fp64 must not build");
        assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
        assert!(
            log.contains("double") && log.contains("cl_khr_fp64"),
            "{log}"
        );
        return;
    }
    let (p, k) = fixture_kernel(&env, "mixed");
    let mut rng = Rng(9);
    let a: Vec<f64> = (0..N * 8)
        .map(|_| f64::from(rng.next_u32() % 1000) / 8.0)
        .collect();
    let b: Vec<u64> = (0..N * 16).map(|_| u64::from(rng.next_u32() % 8)).collect();
    let kk: i32 = 6;
    let (ma, mb, mc) = (input(&env, &a), input(&env, &b), output::<f64>(&env, N));
    set_arg(k, 0, &ma);
    set_arg(k, 1, &mb);
    set_arg(k, 2, &mc);
    set_arg(k, 3, &kk);
    run(&env, k, N);
    let gb = env.read::<u64>(mb, N * 16);
    let gc = env.read::<f64>(mc, N);
    for i in 0..N {
        let x: Vec<f64> = a[i * 8..i * 8 + 8].iter().map(|v| v * 0.5).collect();
        for j in 0..16 {
            let u = b[i * 16 + j];
            let conv = x[j % 8] as u64;
            let want = if u.wrapping_add(conv) > 3 { u } else { u * 2 };
            assert_eq!(gb[i * 16 + j], want, "item {i} u.s{j}");
        }
        let want = x[(kk & 7) as usize] + f64::from((kk & 3) * kk);
        assert_eq!(gc[i], want, "item {i} c");
    }
    release(&[ma, mb, mc]);
    release_kernel(p, k);
}

/// A kernel the Khronos conformance tests use in spirit: a vec16 built from scalars and
/// swizzles of a vec8 argument, stored through a `__global` pointer with a dynamic index and
/// read back component by component.
#[test]
fn swizzles_and_dynamic_components() {
    let env = Env::new();
    let src = "__kernel void k(uint8 v, __global uint16 *out, __global uint *comp) {\n\
                 int i = get_global_id(0);\n\
                 uint16 w = (uint16)(v.s7654, v.even, v.odd.s10, (uint2)(i), v.lo);\n\
                 out[i] = w;\n\
                 comp[i] = w[i & 15] + v[(i + 3) & 7];\n\
               }\n";
    let p = env.build(src);
    let k = env.kernel(p, "k");
    let v: [u32; 8] = [10, 11, 12, 13, 14, 15, 16, 17];
    let (mo, mc) = (output::<u32>(&env, N * 16), output::<u32>(&env, N));
    set_arg(k, 0, &v);
    set_arg(k, 1, &mo);
    set_arg(k, 2, &mc);
    run(&env, k, N);
    let out = env.read::<u32>(mo, N * 16);
    let comp = env.read::<u32>(mc, N);
    for i in 0..N {
        let ii = i as u32;
        let w = [
            v[7], v[6], v[5], v[4], v[0], v[2], v[4], v[6], v[3], v[1], ii, ii, v[0], v[1], v[2],
            v[3],
        ];
        assert_eq!(&out[i * 16..i * 16 + 16], &w[..], "item {i}");
        assert_eq!(comp[i], w[i & 15] + v[(i + 3) & 7], "item {i} comp");
    }
    release(&[mo, mc]);
    release_kernel(p, k);
}

/// Runs `k` over `global` work-items in groups of `local`.
fn run_local(env: &Env, k: cl_kernel, global: usize, local: usize) {
    let (g, l) = ([global], [local]);
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            g.as_ptr(),
            l.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    env.finish();
}

/// The OpenCL C layout of `struct { int tag; float8 v; }`: tag at 0, v at 32, 64 bytes.
const TAGGED: usize = 64;

#[test]
fn constant_tables_structs_local_memory_and_reinterpretation() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "memory_shapes");
    const LOCAL: usize = 16;
    let mut rng = Rng(13);
    let io: Vec<i32> = (0..N * 16).map(|_| rng.next_u32() as i32).collect();
    let mut s = vec![0u8; N * TAGGED];
    let mut tags = Vec::new();
    let mut vs = Vec::new();
    for i in 0..N {
        let tag = (i % 5) as i32 - 2;
        let v: [f32; 8] = std::array::from_fn(|j| (i * 8 + j) as f32 * 0.25 - 3.0);
        s[i * TAGGED..i * TAGGED + 4].copy_from_slice(&tag.to_le_bytes());
        for (j, x) in v.iter().enumerate() {
            let o = i * TAGGED + 32 + 4 * j;
            s[o..o + 4].copy_from_slice(&x.to_le_bytes());
        }
        tags.push(tag);
        vs.push(v);
    }
    let (ms, mio, mbits) = (
        input(&env, &s),
        input(&env, &io),
        output::<i64>(&env, N * 4),
    );
    set_arg(k, 0, &ms);
    set_arg(k, 1, &mio);
    ok(unsafe { cl!(clSetKernelArg)(k, 2, LOCAL * 64, null()) });
    set_arg(k, 3, &mbits);
    run_local(&env, k, N, LOCAL);
    let got_io = env.read::<i32>(mio, N * 16);
    let got_s = env.read::<u8>(ms, N * TAGGED);
    let got_bits = env.read::<i64>(mbits, N * 4);
    let table = |r: usize, j: usize| {
        if r == 0 {
            j as i32 + 1
        } else {
            -(j as i32 + 1)
        }
    };
    for i in 0..N {
        let (g, l) = (i / LOCAL, i % LOCAL);
        let src = g * LOCAL + (LOCAL - 1 - l);
        let other = &io[src * 16..src * 16 + 16];
        for j in 0..16 {
            let row = if j < 8 { i & 1 } else { (i + 1) & 1 };
            let want = other[j].wrapping_add(table(row, j % 8));
            assert_eq!(got_io[i * 16 + j], want, "item {i} io.s{j}");
        }
        let v: Vec<f32> = vs[i].iter().map(|x| x * tags[i] as f32).collect();
        let word = |o: usize| {
            let b = &got_s[i * TAGGED + o..i * TAGGED + o + 4];
            [b[0], b[1], b[2], b[3]]
        };
        for (j, x) in v.iter().enumerate() {
            assert_eq!(f32::from_le_bytes(word(32 + 4 * j)), *x, "item {i} v.s{j}");
        }
        assert_eq!(i32::from_le_bytes(word(0)), v[7] as i32, "item {i} tag");
        let long = |w: &[i32], j: usize| {
            (u64::from(w[2 * j] as u32) | (u64::from(w[2 * j + 1] as u32) << 32)) as i64
        };
        for j in 0..4 {
            let want = long(&other[..8], j).wrapping_add(long(&other[8..], j));
            assert_eq!(got_bits[i * 4 + j], want, "item {i} bits.s{j}");
        }
    }
    release(&[ms, mio, mbits]);
    release_kernel(p, k);
}

#[test]
fn relational_any_all_shuffle() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "relational");
    let mut rng = Rng(17);
    let mut a: Vec<f32> = (0..N * 8)
        .map(|_| (rng.next_u32() % 8) as f32 - 3.0)
        .collect();
    let b: Vec<f32> = (0..N * 8)
        .map(|_| (rng.next_u32() % 8) as f32 - 3.0)
        .collect();
    a[3] = f32::NAN;
    a[8 * 5 + 6] = f32::NAN;
    let (ma, mb) = (input(&env, &a), input(&env, &b));
    let (mc, msh, mf) = (
        output::<i32>(&env, N * 8),
        output::<u32>(&env, N * 16),
        output::<i32>(&env, N),
    );
    for (n, m) in [ma, mb, mc, msh, mf].iter().enumerate() {
        set_arg(k, n as u32, m);
    }
    run(&env, k, N);
    let cmp = env.read::<i32>(mc, N * 8);
    let sh = env.read::<u32>(msh, N * 16);
    let flags = env.read::<i32>(mf, N);
    let m1 = [15, 0, 14, 1, 13, 2, 12, 3, 11, 4, 10, 5, 9, 6, 8, 7];
    let m2 = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15];
    for i in 0..N {
        let x = &a[i * 8..i * 8 + 8];
        let y = &b[i * 8..i * 8 + 8];
        let s: Vec<i32> = (0..8)
            .map(|j| {
                if x[j].is_nan() {
                    100
                } else {
                    -i32::from(x[j] > y[j])
                        - 2 * i32::from(x[j] == y[j])
                        - 4 * i32::from(x[j] <= 0.0)
                }
            })
            .collect();
        assert_eq!(&cmp[i * 8..i * 8 + 8], &s[..], "item {i} cmp");
        let want_flags = i32::from(s.iter().any(|v| *v > 1))
            + 2 * i32::from(s.iter().all(|v| *v <= 0))
            + 4 * i32::from(s.contains(&100));
        assert_eq!(flags[i], want_flags, "item {i} flags");
        if x.iter().any(|v| v.is_nan()) {
            continue; // convert_uint of NaN is implementation-defined
        }
        let u: Vec<u32> = x
            .iter()
            .chain(y.iter())
            .map(|v| (v.abs() * 10.0) as u32)
            .collect();
        for j in 0..16 {
            assert_eq!(sh[i * 16 + j], u[m1[j]] + u[m2[j]], "item {i} sh.s{j}");
        }
    }
    release(&[ma, mb, mc, msh, mf]);
    release_kernel(p, k);
}

#[test]
fn loops_private_arrays_and_struct_arguments() {
    let env = Env::new();
    let (p, k) = fixture_kernel(&env, "loops");
    let n: i32 = 6;
    let nn = n as usize;
    let mut rng = Rng(23);
    let input_f: Vec<f32> = (0..N * nn * 8)
        .map(|_| (rng.next_u32() % 64) as f32 / 8.0)
        .collect();
    // struct { char c; int8 v; }: c at 0, v at 32, 64 bytes.
    let c: i8 = 5;
    let v: [i32; 8] = [3, -1, 4, -1, 5, -9, 2, -6];
    let mut sv = [0u8; 64];
    sv[0] = c as u8;
    for (j, x) in v.iter().enumerate() {
        sv[32 + 4 * j..36 + 4 * j].copy_from_slice(&x.to_le_bytes());
    }
    let (mi, mo) = (input(&env, &input_f), output::<f32>(&env, N * 24));
    set_arg(k, 0, &mi);
    set_arg(k, 1, &mo);
    set_arg(k, 2, &sv);
    set_arg(k, 3, &n);
    run(&env, k, N);
    let got = env.read::<f32>(mo, N * 24);
    for i in 0..N {
        let mut acc = [0f32; 8];
        let mut iacc = v;
        let mut hist: Vec<[f32; 8]> = (0..4)
            .map(|j| std::array::from_fn(|q| input_f[j * 8 + q] * i as f32))
            .collect();
        for j in 0..nn {
            let x = &input_f[(i * nn + j) * 8..(i * nn + j) * 8 + 8];
            let old = iacc;
            for q in 0..8 {
                acc[q] = acc[q] * 0.5 + x[q];
                iacc[q] = old[(q + 1) % 8] + i32::from(c);
                hist[j & 3][q] += x[q];
            }
        }
        let o = &got[i * 24..i * 24 + 24];
        for q in 0..8 {
            assert!(
                close(o[q], acc[q]),
                "item {i} acc.s{q}: {} vs {}",
                o[q],
                acc[q]
            );
            assert_eq!(o[8 + q], iacc[q] as f32, "item {i} iacc.s{q}");
            let h = hist[nn & 3][q] + hist[(nn + 1) & 3][q];
            assert!(
                close(o[16 + q], h),
                "item {i} hist.s{q}: {} vs {h}",
                o[16 + q]
            );
        }
    }
    release(&[mi, mo]);
    release_kernel(p, k);
}

/// `o[i] = (a[i] + v).<reversed>`, `f[i] = convert_floatN(a[i])` for one element type and
/// width, checked against the host (`add` is the element type's OpenCL addition).
fn check_type<T: Copy + Default + PartialEq + std::fmt::Debug>(
    cl: &str,
    n: usize,
    mut gen: impl FnMut() -> T,
    add: impl Fn(T, T) -> T,
    to_f32: impl Fn(T) -> f32,
) {
    let env = Env::new();
    if cl == "double" && !env.has_extension("cl_khr_fp64") {
        let src = format!("__kernel void k(__global double{n} *a) {{ a[1] = a[0] + a[2]; }}");
        let (err, log) = env
            .try_build(&src, "")
            .expect_err("double without cl_khr_fp64 must not build");
        assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
        assert!(
            log.contains("double") && log.contains("cl_khr_fp64"),
            "{log}"
        );
        return;
    }
    let rev: String = (0..n)
        .rev()
        .map(|j| char::from_digit(j as u32, 16).unwrap_or('0'))
        .collect();
    let ext = if cl == "double" {
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    } else {
        ""
    };
    let src = format!(
        "{ext}__kernel void k(__global const {cl}{n} *a, {cl}{n} v, __global {cl}{n} *o,\n\
                              __global float{n} *f) {{\n\
           int i = get_global_id(0);\n\
           {cl}{n} x = a[i] + v;\n\
           o[i] = x.s{rev};\n\
           f[i] = convert_float{n}(a[i]);\n\
         }}\n"
    );
    let p = env.build(&src);
    let k = env.kernel(p, "k");
    let a: Vec<T> = (0..N * n).map(|_| gen()).collect();
    let v: Vec<T> = (0..n).map(|_| gen()).collect();
    let (ma, mo, mf) = (
        input(&env, &a),
        output::<T>(&env, N * n),
        output::<f32>(&env, N * n),
    );
    set_arg(k, 0, &ma);
    ok(unsafe {
        cl!(clSetKernelArg)(
            k,
            1,
            std::mem::size_of_val(&v[..]),
            v.as_ptr() as *const std::ffi::c_void,
        )
    });
    set_arg(k, 2, &mo);
    set_arg(k, 3, &mf);
    run(&env, k, N);
    let o = env.read::<T>(mo, N * n);
    let f = env.read::<f32>(mf, N * n);
    for i in 0..N {
        for j in 0..n {
            let src = i * n + (n - 1 - j);
            let want = add(a[src], v[n - 1 - j]);
            assert_eq!(o[i * n + j], want, "{cl}{n} item {i} s{j}");
            let fw = to_f32(a[i * n + j]);
            assert_eq!(f[i * n + j], fw, "{cl}{n} item {i} convert_float s{j}");
        }
    }
    release(&[ma, mo, mf]);
    release_kernel(p, k);
}

#[test]
fn every_element_type_at_8_and_16() {
    let mut rng = Rng(29);
    let mut r = move || u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());
    for n in [8, 16] {
        check_type("char", n, || r() as i8, |x, y| x.wrapping_add(y), f32::from);
        check_type(
            "uchar",
            n,
            || r() as u8,
            |x, y| x.wrapping_add(y),
            f32::from,
        );
        check_type(
            "short",
            n,
            || r() as i16,
            |x, y| x.wrapping_add(y),
            f32::from,
        );
        check_type(
            "ushort",
            n,
            || r() as u16,
            |x, y| x.wrapping_add(y),
            f32::from,
        );
        check_type(
            "int",
            n,
            || r() as i32,
            |x, y| x.wrapping_add(y),
            |x| x as f32,
        );
        check_type(
            "uint",
            n,
            || r() as u32,
            |x, y| x.wrapping_add(y),
            |x| x as f32,
        );
        check_type(
            "long",
            n,
            || r() as i64,
            |x, y| x.wrapping_add(y),
            |x| x as f32,
        );
        check_type("ulong", n, &mut r, |x, y| x.wrapping_add(y), |x| x as f32);
        check_type(
            "float",
            n,
            || (r() % 100_000) as f32 / 64.0 - 500.0,
            |x, y| x + y,
            |x| x,
        );
        check_type(
            "double",
            n,
            || (r() % 100_000) as f64 / 64.0 - 500.0,
            |x, y| x + y,
            |x| x as f32,
        );
    }
}

/// Scalar-condition selects, dynamic and constant component inserts, and reinterpretation
/// between wide and narrow shapes (`as_char16(int4)`, `as_ulong(uchar8)`).
#[test]
fn inserts_selects_and_narrow_reinterpretation() {
    let env = Env::new();
    let src = "__kernel void k(__global int4 *a, __global char16 *c, __global ulong *u, int k) {\n\
                 int i = get_global_id(0);\n\
                 char16 x = as_char16(a[i]);\n\
                 x[k & 15] = (char)i;\n\
                 x.s5 = (char)(i + k);\n\
                 c[i] = (i & 1) ? x : x.sfedcba9876543210;\n\
                 u[i] = as_ulong(as_uchar8(x.lo) + (uchar8)(1));\n\
               }\n";
    let p = env.build(src);
    let kern = env.kernel(p, "k");
    let mut rng = Rng(31);
    let a: Vec<i32> = (0..N * 4).map(|_| rng.next_u32() as i32).collect();
    let kk: i32 = 9;
    let (ma, mc, mu) = (
        input(&env, &a),
        output::<i8>(&env, N * 16),
        output::<u64>(&env, N),
    );
    set_arg(kern, 0, &ma);
    set_arg(kern, 1, &mc);
    set_arg(kern, 2, &mu);
    set_arg(kern, 3, &kk);
    run(&env, kern, N);
    let c = env.read::<i8>(mc, N * 16);
    let u = env.read::<u64>(mu, N);
    for i in 0..N {
        let mut x: Vec<i8> = a[i * 4..i * 4 + 4]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .map(|b| b as i8)
            .collect();
        x[(kk & 15) as usize] = i as i8;
        x[5] = (i as i32 + kk) as i8;
        let want: Vec<i8> = if i & 1 == 1 {
            x.clone()
        } else {
            x.iter().rev().copied().collect()
        };
        assert_eq!(&c[i * 16..i * 16 + 16], &want[..], "item {i}");
        let lo: Vec<u8> = x[..8].iter().map(|b| (*b as u8).wrapping_add(1)).collect();
        let want_u = u64::from_le_bytes(lo.try_into().expect("8 bytes"));
        assert_eq!(u[i], want_u, "item {i} as_ulong");
    }
    release(&[ma, mc, mu]);
    release_kernel(p, kern);
}

/// Saturating conversions of 8- and 16-component vectors (`convert_uchar8_sat(ushort8)`,
/// `convert_uchar16_sat_rte(uint16)`, `convert_char8_sat(int8)`, `convert_short16_sat(float16)`,
/// `convert_int8_sat_rtn(float8)`): the split halves keep the conversion's
/// `SaturatedConversion` / `FPRoundingMode` decorations (the CTS conversions suite found
/// 0x100 -> 0x00 instead of 0xff). Host-computed saturation and rounding.
#[test]
fn saturating_conversions_of_wide_vectors() {
    let env = Env::new();
    let src = r#"
__kernel void sat(__global const ushort *us, __global uchar *a,
                  __global const uint *ui, __global uchar *b,
                  __global const int *si, __global char *c,
                  __global const float *f, __global short *d, __global int *e) {
    size_t i = get_global_id(0);
    vstore8(convert_uchar8_sat(vload8(i, us)), i, a);
    vstore16(convert_uchar16_sat_rte(vload16(i, ui)), i, b);
    vstore8(convert_char8_sat(vload8(i, si)), i, c);
    vstore16(convert_short16_sat(vload16(i, f)), i, d);
    vstore8(convert_int8_sat_rtn(vload8(i, f)), i, e);
}
"#;
    let p = env.build(src);
    let k = env.kernel(p, "sat");
    let mut rng = Rng(0x5a78);
    let us: Vec<u16> = (0..N * 8)
        .map(|_| rng.next_u32() as u16 >> (rng.next_u32() % 9))
        .collect();
    let ui: Vec<u32> = (0..N * 16)
        .map(|_| rng.next_u32() >> (rng.next_u32() % 25))
        .collect();
    let si: Vec<i32> = (0..N * 8)
        .map(|_| (rng.next_u32() as i32) >> (rng.next_u32() % 25))
        .collect();
    let f: Vec<f32> = (0..N * 16)
        .map(|_| (rng.next_f32() - 0.5) * [10.0, 1e5, 1e10][rng.next_u32() as usize % 3])
        .collect();
    let bufs = [
        input(&env, &us),
        output::<u8>(&env, N * 8),
        input(&env, &ui),
        output::<u8>(&env, N * 16),
        input(&env, &si),
        output::<i8>(&env, N * 8),
        input(&env, &f),
        output::<i16>(&env, N * 16),
        output::<i32>(&env, N * 8),
    ];
    for (j, m) in bufs.iter().enumerate() {
        set_arg(k, j as u32, m);
    }
    run(&env, k, N);
    let a: Vec<u8> = env.read(bufs[1], N * 8);
    let b: Vec<u8> = env.read(bufs[3], N * 16);
    let c: Vec<i8> = env.read(bufs[5], N * 8);
    let d: Vec<i16> = env.read(bufs[7], N * 16);
    let e: Vec<i32> = env.read(bufs[8], N * 8);
    for i in 0..N * 8 {
        assert_eq!(a[i], us[i].min(255) as u8, "uchar8_sat({})", us[i]);
        assert_eq!(c[i], si[i].clamp(-128, 127) as i8, "char8_sat({})", si[i]);
        // Rust's float-to-int `as` saturates; floor() is round-towards-negative-infinity.
        assert_eq!(e[i], f[i].floor() as i32, "int8_sat_rtn({})", f[i]);
    }
    for i in 0..N * 16 {
        assert_eq!(b[i], ui[i].min(255) as u8, "uchar16_sat_rte({})", ui[i]);
        assert_eq!(d[i], f[i].trunc() as i16, "short16_sat({})", f[i]);
    }
    release(&bufs);
    unsafe { cl!(clReleaseKernel)(k) };
}

/// `vload16(offsets[tid], src + alignmentOffsets[tid])` in the CTS's basic vload_global kernel:
/// llvm-spirv's literal 16 of `vloadn` was read as the id `%16`, which is also a kernel
/// parameter's id, and renamed with it ("36 components for a 16-component vector"). Host
/// answers for char16, int16 and float16.
#[test]
fn vload16_with_offsets_like_the_cts() {
    let env = Env::new();
    let mut rng = Rng(0x716);
    for ty in ["char", "int", "float"] {
        let src = format!(
            "#define STYPE {ty}\n\
             __kernel void test_fn(__global STYPE *src, __global uint *offsets,\n\
                                   __global uint *alignmentOffsets, __global {ty}16 *results) {{\n\
                 int tid = get_global_id(0);\n\
                 {ty}16 tmp = vload16(offsets[tid], ((__global STYPE *)src) + alignmentOffsets[tid]);\n\
                 results[tid] = tmp;\n\
             }}\n"
        );
        let p = env.build(&src);
        let k = env.kernel(p, "test_fn");
        let size = if ty == "char" { 1 } else { 4 };
        let words: Vec<u32> = (0..N * 16 + 16).map(|_| rng.next_u32()).collect();
        let data: Vec<u8> = if size == 1 {
            words.iter().map(|w| *w as u8).collect()
        } else {
            words.iter().flat_map(|w| w.to_le_bytes()).collect()
        };
        let offsets: Vec<u32> = (0..N as u32).map(|_| rng.next_u32() % N as u32).collect();
        let align: Vec<u32> = (0..N).map(|_| rng.next_u32() % 16).collect();
        let bufs = [
            input(&env, &data),
            input(&env, &offsets),
            input(&env, &align),
            output::<u8>(&env, N * 16 * size),
        ];
        for (j, m) in bufs.iter().enumerate() {
            set_arg(k, j as u32, m);
        }
        run(&env, k, N);
        let got: Vec<u8> = env.read(bufs[3], N * 16 * size);
        for t in 0..N {
            let first = offsets[t] as usize * 16 + align[t] as usize;
            let want = &data[first * size..(first + 16) * size];
            assert_eq!(
                &got[t * 16 * size..(t + 1) * 16 * size],
                want,
                "{ty}16 work-item {t}"
            );
        }
        release(&bufs);
        unsafe { cl!(clReleaseKernel)(k) };
    }
}
