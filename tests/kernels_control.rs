//! Control flow in kernels (loops, goto, switch, tangled branches), helper functions, and the
//! forms LLVM's optimiser gives control flow and clamped arithmetic (lookup tables, saturating
//! intrinsics), each run against host answers.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::kernels::*;
use common::*;

// ---------------------------------------------------------------------------------------------
// Control flow

const CONTROL_IO: &str = r#"
__kernel void loops(__global const int *in, __global int *out, int n) {
    int i = (int)get_global_id(0);
    int acc = 0;
    for (int k = 0; k < n; k++) {
        if (k == i % 5)
            continue;
        acc += in[(i + k) % n];
        if (acc > 1000)
            break;
    }
    out[i] = acc;
}

__kernel void nested_loops(__global const float *m, __global float *out, int rows, int cols) {
    int r = (int)get_global_id(0);
    float sum = 0.0f;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            float x = m[((i + r) % rows) * cols + j];
            if (x < 0.0f)
                continue;
            sum += x;
            if (sum > (float)(r * 4))
                goto done;
        }
    }
done:
    out[r] = sum;
}
"#;

#[test]
fn loops_with_break_and_continue() {
    let env = Env::new();
    let mut rng = Rng(7);
    let n = 200usize;
    let input = random_i32(&mut rng, n, -20, 40);
    let (min, mout) = (env.buf(&input), env.zeros::<i32>(n));
    let k = env.kern(CONTROL_IO, "loops");
    arg_mem(k, 0, min);
    arg_mem(k, 1, mout);
    set_arg(k, 2, &(n as i32));
    env.run(k, &[n], Some(&[8]), None);
    let got: Vec<i32> = env.read(mout, n);
    for i in 0..n {
        let mut acc = 0;
        for kk in 0..n {
            if kk == i % 5 {
                continue;
            }
            acc += input[(i + kk) % n];
            if acc > 1000 {
                break;
            }
        }
        assert_eq!(got[i], acc, "out[{i}]");
    }
}

#[test]
fn nested_loops_with_goto() {
    let env = Env::new();
    let mut rng = Rng(8);
    let (rows, cols, n) = (9usize, 7usize, 64usize);
    let m = random_f32(&mut rng, rows * cols, -1.0, 3.0);
    let (mm, mout) = (env.buf(&m), env.zeros::<f32>(n));
    let k = env.kern(CONTROL_IO, "nested_loops");
    arg_mem(k, 0, mm);
    arg_mem(k, 1, mout);
    set_arg(k, 2, &(rows as i32));
    set_arg(k, 3, &(cols as i32));
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(mout, n);
    for r in 0..n {
        let mut sum = 0.0f32;
        'outer: for i in 0..rows {
            for j in 0..cols {
                let x = m[((i + r) % rows) * cols + j];
                if x < 0.0 {
                    continue;
                }
                sum += x;
                if sum > (r * 4) as f32 {
                    break 'outer;
                }
            }
        }
        assert_eq!(got[r], sum, "out[{r}]");
    }
}

const CONTROL: &str = include_str!("../src/compiler/testdata/control.cl");

#[test]
fn early_return_nested_ifs_switch_while() {
    let env = Env::new();
    let mut rng = Rng(9);
    let n = 256usize;
    let input = random_i32(&mut rng, n, -200, 200);
    let p = env.build(CONTROL);

    // early_return: only the first `limit` items act.
    let m = env.buf(&input);
    let k = env.kernel(p, "early_return");
    arg_mem(k, 0, m);
    set_arg(k, 1, &200i32);
    env.run(k, &[n], Some(&[16]), None);
    let got: Vec<i32> = env.read(m, n);
    for i in 0..n {
        let v = input[i];
        let want = if i >= 200 {
            v
        } else if v < 0 {
            0
        } else {
            v * 2
        };
        assert_eq!(got[i], want, "early_return[{i}]");
    }

    let m = env.buf(&input);
    let k = env.kernel(p, "nested_ifs");
    arg_mem(k, 0, m);
    env.run(k, &[n], Some(&[16]), None);
    let got: Vec<i32> = env.read(m, n);
    for i in 0..n {
        let v = input[i];
        let want = if v > 10 {
            if v > 100 {
                100
            } else if v > 50 {
                50
            } else {
                v + 1
            }
        } else if v < 0 {
            -v
        } else {
            v
        };
        assert_eq!(got[i], want, "nested_ifs[{i}] of {v}");
    }

    let m = env.buf(&input);
    let k = env.kernel(p, "switches");
    arg_mem(k, 0, m);
    env.run(k, &[n], Some(&[16]), None);
    let got: Vec<i32> = env.read(m, n);
    for i in 0..n {
        let v = input[i];
        let want = match v & 7 {
            0 => 10,
            1 => 20,
            2 | 3 => 30,
            5 => v + 3,
            6 => v + 2,
            _ => -1,
        };
        assert_eq!(got[i], want, "switches[{i}] of {v}");
    }

    let start: Vec<u32> = (1..=n as u32).map(|x| x * 7 + 1).collect();
    let m = env.buf(&start);
    let k = env.kernel(p, "while_loop");
    arg_mem(k, 0, m);
    env.run(k, &[n], Some(&[16]), None);
    let got: Vec<u32> = env.read(m, n);
    for i in 0..n {
        let (mut x, mut steps) = (start[i], 0u32);
        while x != 1 && steps < 1000 {
            x = if x & 1 != 0 { 3 * x + 1 } else { x / 2 };
            steps += 1;
        }
        assert_eq!(got[i], steps, "while_loop[{i}] of {}", start[i]);
    }
}

#[test]
fn control_fixture_loops_single_item() {
    // The fixture's `loops` reads data[0..n] and writes data[i]: run one work-item.
    let env = Env::new();
    let data: Vec<i32> = vec![5, 300, 7, 1000, 400, 200, 100, 9];
    let m = env.buf(&data);
    let k = env.kern(CONTROL, "loops");
    arg_mem(k, 0, m);
    set_arg(k, 1, &(data.len() as i32));
    env.run(k, &[1], None, None);
    let mut acc = 0;
    for (kk, v) in data.iter().enumerate() {
        if kk == 3 {
            continue;
        }
        acc += v;
        if acc > 1000 {
            break;
        }
    }
    assert_eq!(env.read::<i32>(m, 1)[0], acc);
}

const TANGLED: &str = r#"
__kernel void tangled(__global const int *in, __global int *out, int n) {
    int i = (int)get_global_id(0);
    int acc = 0, k = 0;
    do {
        int v = in[(i + k) % n];
        k++;
        switch (v & 3) {
        case 0:
            if (v > 50)
                continue;
            acc += v;
            break;
        case 1:
            acc -= v;
            if (acc < -500)
                goto done;
            break;
        case 2:
            for (int j = 0; j < (v & 7); j++) {
                if (j == 5)
                    break;
                acc += j;
            }
            break;
        default:
            acc ^= v;
        }
        if (acc > 2000)
            break;
    } while (k < n);
done:
    out[i] = acc * 10 + k;
}
"#;

#[test]
fn tangled_control_flow() {
    let env = Env::new();
    let mut rng = Rng(37);
    let n = 300usize;
    let input = random_i32(&mut rng, n, -100, 300);
    let (mi, mo) = (env.buf(&input), env.zeros::<i32>(n));
    let k = env.kern(TANGLED, "tangled");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    set_arg(k, 2, &(n as i32));
    env.run(k, &[n], None, None);
    let got: Vec<i32> = env.read(mo, n);
    for i in 0..n {
        let (mut acc, mut k) = (0i32, 0usize);
        'outer: loop {
            let v = input[(i + k) % n];
            k += 1;
            let mut skip = false;
            match v & 3 {
                0 => {
                    if v > 50 {
                        skip = true;
                    } else {
                        acc += v;
                    }
                }
                1 => {
                    acc -= v;
                    if acc < -500 {
                        break 'outer;
                    }
                }
                2 => {
                    for j in 0..(v & 7) {
                        if j == 5 {
                            break;
                        }
                        acc += j;
                    }
                }
                _ => acc ^= v,
            }
            if !skip && acc > 2000 {
                break;
            }
            if k >= n {
                break;
            }
        }
        assert_eq!(got[i], acc * 10 + k as i32, "tangled {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Helper functions

const TILED: &str = r#"
__constant int tbl[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};

int helper(__global const int *p, int k) { return p[k] * tbl[k % 3][k & 3]; }

__kernel void scale_by_table(__global const int *in, __global int *o) {
    int i = get_global_id(0);
    o[i] = helper(in, i);
}

__kernel void matmul(__global const float *A, __global const float *B, __global float *C, int N) {
    __local float As[16][16];
    __local float Bs[16][16];
    int tx = get_local_id(0), ty = get_local_id(1);
    int row = get_global_id(1), col = get_global_id(0);
    float acc = 0.0f;
    for (int t = 0; t < N / 16; t++) {
        As[ty][tx] = A[row * N + t * 16 + tx];
        Bs[ty][tx] = B[(t * 16 + ty) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 16; k++)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}

__kernel void bitsel(__global const float4 *a, __global float4 *o) {
    size_t i = get_global_id(0);
    float4 x = a[i];
    o[i] = select(x, -x, isless(x, (float4)(0.0f))) + bitselect(x, (float4)(1.0f), (float4)(-0.0f));
}
"#;

#[test]
fn tiled_matmul_helper_functions_and_bitselect() {
    let env = Env::new();
    let mut rng = Rng(26);
    let p = env.build(TILED);

    let n = 64usize;
    // Small integers keep every partial sum exact.
    let a: Vec<f32> = (0..n * n)
        .map(|_| (rng.next_u32() % 9) as f32 - 4.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|_| (rng.next_u32() % 9) as f32 - 4.0)
        .collect();
    let (ma, mb, mc) = (env.buf(&a), env.buf(&b), env.zeros::<f32>(n * n));
    let k = env.kernel(p, "matmul");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    arg_mem(k, 2, mc);
    set_arg(k, 3, &(n as i32));
    env.run(k, &[n, n], Some(&[16, 16]), None);
    let c: Vec<f32> = env.read(mc, n * n);
    for r in 0..n {
        for col in 0..n {
            let want: f32 = (0..n).map(|k| a[r * n + k] * b[k * n + col]).sum();
            assert_eq!(c[r * n + col], want, "C[{r}][{col}]");
        }
    }

    let input = random_i32(&mut rng, 100, -1000, 1000);
    let (mi, mo) = (env.buf(&input), env.zeros::<i32>(100));
    let k = env.kernel(p, "scale_by_table");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    env.run(k, &[100], None, None);
    let got: Vec<i32> = env.read(mo, 100);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(
            *g,
            input[i] * ((i % 3) * 4 + (i & 3) + 1) as i32,
            "table {i}"
        );
    }

    let v: Vec<[f32; 4]> = (0..64)
        .map(|_| std::array::from_fn(|_| rng.next_f32() * 4.0 - 2.0))
        .collect();
    let (mv, mo) = (env.buf(&v), env.zeros::<[f32; 4]>(64));
    let k = env.kernel(p, "bitsel");
    arg_mem(k, 0, mv);
    arg_mem(k, 1, mo);
    env.run(k, &[64], None, None);
    let got: Vec<[f32; 4]> = env.read(mo, 64);
    for i in 0..64 {
        // bitselect(x, 1.0, -0.0) takes the sign bit from 1.0 (clear) and the rest from x: |x|.
        let want: [f32; 4] = std::array::from_fn(|j| {
            let x = v[i][j];
            (if x < 0.0 { -x } else { x }) + x.abs()
        });
        assert_eq!(got[i], want, "bitsel {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Switch tables and saturating intrinsics from LLVM's optimiser

const SWITCH_TABLE: &str = r#"
__kernel void sw(__global const int *c, __global ulong *out) {
    size_t i = get_global_id(0);
    ulong v;
    switch (c[i]) {
    case 0: v = 0x1234567890ul; break;
    case 1: v = 77ul; break;
    case 2: v = 0xFFFFFFFFFFFFul; break;
    case 3: v = 5ul; break;
    default: v = 9ul; break;
    }
    out[i] = v;
}
"#;

/// A switch that LLVM turns into a lookup table (a private-address-space global that
/// llvm-spirv declares with Function storage at module scope) builds and gives the host's
/// values.
#[test]
fn switch_lookup_table() {
    let env = Env::new();
    let k = env.kern(SWITCH_TABLE, "sw");
    let cs: Vec<i32> = (0..64).map(|i| (i * 7) % 6 - 1).collect();
    let n = cs.len();
    let (bc, bo) = (env.buf(&cs), env.zeros::<u64>(n));
    arg_mem(k, 0, bc);
    arg_mem(k, 1, bo);
    env.run(k, &[n], None, None);
    let got: Vec<u64> = env.read(bo, n);
    for (i, &c) in cs.iter().enumerate() {
        let want = match c {
            0 => 0x12_3456_7890,
            1 => 77,
            2 => 0xFFFF_FFFF_FFFF,
            3 => 5,
            _ => 9,
        };
        assert_eq!(got[i], want, "case {c}");
    }
}

/// An `if`/`else` chain on a `char` choosing `x + 1` or `x - 1` for `char`, `uchar`, `short`
/// and `ushort` values (the CTS's integer_ops unary_ops kernel): LLVM's O2 turns it into a
/// switch and the switch into a bitmap lookup table of `i24`/`i48`, which llvm-spirv-15
/// refuses; the front end keeps switches as branches. Host-computed wrapping answers.
#[test]
fn char_short_increment_decrement_chains() {
    let env = Env::new();
    let mut rng = Rng(0x5eed_0005);
    let n = 256usize;
    let control: Vec<i8> = (0..n).map(|_| (rng.next_u32() % 4) as i8).collect();
    let ctl = env.buf(&control);
    for ty in ["char", "uchar", "short", "ushort"] {
        for width in [1usize, 2, 4] {
            let (load, store, vt) = if width == 1 {
                (
                    "inOut[tid]".to_string(),
                    "inOut[tid] = v".to_string(),
                    ty.to_string(),
                )
            } else {
                (
                    format!("vload{width}(tid, inOut)"),
                    format!("vstore{width}(v, tid, inOut)"),
                    format!("{ty}{width}"),
                )
            };
            let src = format!(
                "__kernel void test(__global {ty} *inOut, __global char *control) {{\n\
                 size_t tid = get_global_id(0);\n\
                 {vt} v = {load};\n\
                 if (control[tid] == 0) v++;\n\
                 else if (control[tid] == 1) ++v;\n\
                 else if (control[tid] == 2) v--;\n\
                 else --v;\n\
                 {store};\n}}\n"
            );
            let k = env.kern(&src, "test");
            let bytes_per = if ty.contains("char") { 1 } else { 2 };
            let data: Vec<u16> = (0..n * width).map(|_| rng.next_u32() as u16).collect();
            let input: Vec<u8> = if bytes_per == 1 {
                data.iter().map(|&x| x as u8).collect()
            } else {
                data.iter().flat_map(|&x| x.to_le_bytes()).collect()
            };
            let m = env.buf(&input);
            arg_mem(k, 0, m);
            arg_mem(k, 1, ctl);
            env.run(k, &[n], None, None);
            let got: Vec<u8> = env.read(m, input.len());
            for i in 0..n * width {
                let delta: u16 = if control[i / width] < 2 { 1 } else { u16::MAX };
                let want = data[i].wrapping_add(delta);
                let g = if bytes_per == 1 {
                    got[i] as u16
                } else {
                    u16::from_le_bytes([got[2 * i], got[2 * i + 1]])
                };
                let want = if bytes_per == 1 { want & 0xff } else { want };
                assert_eq!(g, want, "{ty}{width} element {i}");
            }
            unsafe {
                cl!(clReleaseMemObject)(m);
                cl!(clReleaseKernel)(k);
            }
        }
    }
    unsafe { cl!(clReleaseMemObject)(ctl) };
}

/// Clamped arithmetic that LLVM's InstCombine turns into saturating intrinsics
/// (`llvm.sadd.sat`, `llvm.uadd.sat`, `llvm.ssub.sat`, `llvm.usub.sat`, scalar and vector);
/// llvm-spirv-15 refuses two of them, which the front end renames to OpenCL's `add_sat` /
/// `sub_sat`. Host-computed saturating answers.
#[test]
fn clamped_arithmetic_as_saturating_intrinsics() {
    let env = Env::new();
    let src = r#"
__kernel void clamps(__global const int *a, __global const int *b, __global int *o,
                     __global const uchar *c, __global uchar *co,
                     __global const short *s, __global short *so,
                     __global const ushort *u, __global ushort *uo,
                     __global const uint *w, __global uint *wo) {
    size_t i = get_global_id(0);
    long x = (long)a[i] + b[i];
    o[i] = (int)(x > 2147483647L ? 2147483647L : (x < -2147483648L ? -2147483648L : x));
    uint t = (uint)c[2 * i] + c[2 * i + 1];
    co[i] = t > 255 ? 255 : t;
    int d = (int)s[2 * i] - s[2 * i + 1];
    so[i] = d > 32767 ? 32767 : (d < -32768 ? -32768 : d);
    uo[i] = u[2 * i] > u[2 * i + 1] ? u[2 * i] - u[2 * i + 1] : 0;
    uint4 p = vload4(2 * i, w), q = vload4(2 * i + 1, w);
    uint4 sum = p + q;
    vstore4(sum < p ? (uint4)(0xffffffffu) : sum, i, wo);
}
"#;
    let k = env.kern(src, "clamps");
    let mut rng = Rng(0x5a7);
    let n = 128usize;
    let wide = |r: &mut Rng| {
        if r.next_u32() % 4 == 0 {
            r.next_u32() as i32
        } else {
            (r.next_u32() % 2000) as i32 - 1000
        }
    };
    let a: Vec<i32> = (0..n).map(|_| wide(&mut rng)).collect();
    let b: Vec<i32> = (0..n).map(|_| wide(&mut rng)).collect();
    let c: Vec<u8> = (0..2 * n).map(|_| rng.next_u32() as u8).collect();
    let s: Vec<i16> = (0..2 * n).map(|_| rng.next_u32() as i16).collect();
    let u: Vec<u16> = (0..2 * n).map(|_| rng.next_u32() as u16).collect();
    let w: Vec<u32> = (0..8 * n)
        .map(|_| {
            if rng.next_u32() % 2 == 0 {
                rng.next_u32()
            } else {
                rng.next_u32() % 100
            }
        })
        .collect();
    let bufs = [
        env.buf(&a),
        env.buf(&b),
        env.zeros::<i32>(n),
        env.buf(&c),
        env.zeros::<u8>(n),
        env.buf(&s),
        env.zeros::<i16>(n),
        env.buf(&u),
        env.zeros::<u16>(n),
        env.buf(&w),
        env.zeros::<u32>(4 * n),
    ];
    for (j, m) in bufs.iter().enumerate() {
        arg_mem(k, j as u32, *m);
    }
    env.run(k, &[n], None, None);
    let o: Vec<i32> = env.read(bufs[2], n);
    let co: Vec<u8> = env.read(bufs[4], n);
    let so: Vec<i16> = env.read(bufs[6], n);
    let uo: Vec<u16> = env.read(bufs[8], n);
    let wo: Vec<u32> = env.read(bufs[10], 4 * n);
    for i in 0..n {
        assert_eq!(
            o[i],
            a[i].saturating_add(b[i]),
            "add_sat({}, {})",
            a[i],
            b[i]
        );
        assert_eq!(
            co[i],
            c[2 * i].saturating_add(c[2 * i + 1]),
            "uchar add {i}"
        );
        assert_eq!(
            so[i],
            s[2 * i].saturating_sub(s[2 * i + 1]),
            "short sub {i}"
        );
        assert_eq!(
            uo[i],
            u[2 * i].saturating_sub(u[2 * i + 1]),
            "ushort sub {i}"
        );
        for j in 0..4 {
            let (p, q) = (w[8 * i + j], w[8 * i + 4 + j]);
            assert_eq!(wo[4 * i + j], p.saturating_add(q), "uint4 add {i}.{j}");
        }
    }
    unsafe {
        for m in bufs {
            cl!(clReleaseMemObject)(m);
        }
        cl!(clReleaseKernel)(k);
    }
}
