//! Loads and stores through global pointers stepped back by negative constant and dynamic
//! element counts (`p[-1]`, `q[-back]`, `vstore16(v, -1, p)`, `out + i * 40 - 8`): each step
//! may reach the device as an `OpPtrAccessChain` with a negative element, which faults
//! NVIDIA's GPU (issue 18 finding 3); vkcl lowers them to integer address arithmetic. Results
//! are compared with answers computed on the host.
mod common;
use common::*;

/// Work-items per launch.
const N: usize = 64;

/// Scalars (`int`, `long`) at negative constant and dynamic steps from pointers into the
/// middle of the buffers: `q = out + base + 8 * i` with `base = 8`, so `q[-8..-1]` is item
/// i's own eight elements.
#[test]
fn scalar_loads_and_stores_at_negative_steps() {
    let env = Env::new();
    let k = env.kern(
        "__kernel void k(__global const int *in, __global int *out, __global const long *lin,\n\
                         __global long *lout, int base, int back) {\n\
           int i = get_global_id(0);\n\
           __global const int *r = in + base + 8 * i;\n\
           __global int *q = out + base + 8 * i;\n\
           q[-1] = r[-8] + 1;\n\
           q[-8] = r[-1] * 2;\n\
           q[-back] = r[-back] + 100;\n\
           long far = -(long)back - 3;\n\
           q[far] = r[far] - 7;\n\
           __global int *q2 = q - back;\n\
           q2[-1] = r[-back - 1] ^ 0x55;\n\
           __global const long *lr = lin + base + 8 * i;\n\
           __global long *lq = lout + base + 8 * i;\n\
           lq[-2] = lr[-7] * 3;\n\
           lq[-back] = lr[1 - back] + 0x100000000L;\n\
         }\n",
        "k",
    );
    let back = 3i32;
    let base = 8i32;
    let len = N * 8 + 8;
    let ints: Vec<i32> = (0..len as i32).map(|v| v * 7 - 300).collect();
    let longs: Vec<i64> = (0..len as i64).map(|v| v * 0x1_0000_0003 - 12345).collect();
    let (mi, mo, ml, mlo) = (
        env.buf(&ints),
        env.zeros::<i32>(len),
        env.buf(&longs),
        env.zeros::<i64>(len),
    );
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    arg_mem(k, 2, ml);
    arg_mem(k, 3, mlo);
    set_arg(k, 4, &base);
    set_arg(k, 5, &back);
    env.run(k, &[N], None, None);
    let got: Vec<i32> = env.read(mo, len);
    let got_l: Vec<i64> = env.read(mlo, len);
    let mut want = vec![0i32; len];
    let mut want_l = vec![0i64; len];
    for i in 0..N {
        let at = |s: i64| (base as i64 + 8 * i as i64 + s) as usize;
        let b = back as i64;
        want[at(-1)] = ints[at(-8)] + 1;
        want[at(-8)] = ints[at(-1)] * 2;
        want[at(-b)] = ints[at(-b)] + 100;
        want[at(-b - 3)] = ints[at(-b - 3)] - 7;
        want[at(-b - 1)] = ints[at(-b - 1)] ^ 0x55;
        want_l[at(-2)] = longs[at(-7)] * 3;
        want_l[at(-b)] = longs[at(1 - b)] + 0x1_0000_0000;
    }
    for j in 0..len {
        assert_eq!(got[j], want[j], "int element {j}");
        assert_eq!(got_l[j], want_l[j], "long element {j}");
    }
}

/// Wide vectors (`float16`, `int8`, `long4`) at negative steps: `vload16`/`vstore16` with
/// negative offsets, through pointers minus constants, `float16 *` stepped back by a constant
/// and a dynamic count, and the exact shape of tests/widevec.rs `arguments_by_value`
/// (`vstore16(v, 1, out + i * 40 - 8)`).
#[test]
fn wide_vector_loads_and_stores_at_negative_steps() {
    let env = Env::new();
    let k = env.kern(
        "__kernel void k(__global const float *fin, __global float *fout,\n\
                         __global const float16 *win, __global float16 *wout,\n\
                         __global const int *iin, __global int *iout,\n\
                         __global long4 *lout, int back) {\n\
           int i = get_global_id(0);\n\
           __global const float *fr = fin + 32 * i + 32;\n\
           __global float *fq = fout + 32 * i + 32;\n\
           vstore16(vload16(-2, fr) * 2.0f, -1, fq);\n\
           vstore16(vload16(0, fr - 16) + 1.0f, 0, fq - 32);\n\
           __global const float16 *wr = win + 2 * i + 2;\n\
           __global float16 *wq = wout + 2 * i + 2;\n\
           wq[-1] = wr[-2] - 3.0f;\n\
           wq[-back] = wr[1 - back] * 0.5f;\n\
           vstore16(convert_int16(vload16(1 - back, iin + i * 40 + 24)), 1, iout + i * 40 - 8);\n\
           vstore8(vload8(-back, iin + i * 40 + 8 * back + 16) + 5, 0, iout + i * 40 + 24);\n\
           __global long4 *lq = lout + 2 * i + 2;\n\
           lq[-back] = (long4)(i, -i, (long)i << 33, -1L);\n\
           lq[-1] = convert_long4(vload4(0, iin + i * 40 + 32)) - 9;\n\
         }\n",
        "k",
    );
    let back = 2i32;
    let floats: Vec<f32> = (0..N * 32 + 32).map(|v| v as f32 * 0.25 - 40.0).collect();
    let ints: Vec<i32> = (0..(N * 40 + 40) as i32).map(|v| v * 3 - 1000).collect();
    let (mfi, mfo, mwi, mwo, mii, mio, mlo) = (
        env.buf(&floats),
        env.zeros::<f32>(N * 32),
        env.buf(&floats),
        env.zeros::<f32>(N * 32),
        env.buf(&ints),
        env.zeros::<i32>(N * 40),
        env.zeros::<i64>(N * 8),
    );
    for (a, m) in [mfi, mfo, mwi, mwo, mii, mio, mlo].into_iter().enumerate() {
        arg_mem(k, a as u32, m);
    }
    set_arg(k, 7, &back);
    env.run(k, &[N], None, None);
    let fout: Vec<f32> = env.read(mfo, N * 32);
    let wout: Vec<f32> = env.read(mwo, N * 32);
    let iout: Vec<i32> = env.read(mio, N * 40);
    let lout: Vec<i64> = env.read(mlo, N * 8);
    for i in 0..N {
        for j in 0..16 {
            let (lo, hi) = (32 * i + j, 32 * i + 16 + j);
            assert_eq!(
                fout[hi],
                floats[lo] * 2.0,
                "item {i} vstore16(.., -1, ..) s{j}"
            );
            assert_eq!(
                fout[lo],
                floats[hi] + 1.0,
                "item {i} vstore16 at p - 32, s{j}"
            );
            assert_eq!(wout[hi], floats[lo] - 3.0, "item {i} float16 [-1] s{j}");
            assert_eq!(wout[lo], floats[hi] * 0.5, "item {i} float16 [-back] s{j}");
            assert_eq!(
                iout[i * 40 + 8 + j],
                ints[i * 40 + 8 + j],
                "item {i} by_value s{j}"
            );
        }
        for j in 0..8 {
            assert_eq!(
                iout[i * 40 + 24 + j],
                ints[i * 40 + 16 + j] + 5,
                "item {i} vload8(-back) s{j}"
            );
        }
        let ii = i as i64;
        assert_eq!(
            &lout[8 * i..8 * i + 4],
            &[ii, -ii, ii << 33, -1],
            "item {i} long4 [-back]"
        );
        let want: Vec<i64> = (0..4)
            .map(|j| i64::from(ints[i * 40 + 32 + j]) - 9)
            .collect();
        assert_eq!(
            &lout[8 * i + 4..8 * i + 8],
            &want[..],
            "item {i} long4 [-1]"
        );
    }
}
