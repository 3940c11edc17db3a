//! OpenCL C kernels run on the device through the real loader; every result is compared with an
//! answer computed on the host. Also the kernel API's error codes and queries.
mod common;
use common::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};

const VADD: &str = include_str!("../src/compiler/testdata/vadd.cl");
const ARGS: &str = include_str!("../src/compiler/testdata/args.cl");
const WORKITEM30: &str = include_str!("../src/compiler/testdata/workitem30.cl");
const CONTROL: &str = include_str!("../src/compiler/testdata/control.cl");
const LOCAL: &str = include_str!("../src/compiler/testdata/local.cl");
const ATOMICS: &str = include_str!("../src/compiler/testdata/atomics.cl");
const MATH: &str = include_str!("../src/compiler/testdata/math.cl");
const PRIVATE: &str = include_str!("../src/compiler/testdata/private.cl");
const CONSTANT: &str = include_str!("../src/compiler/testdata/constant.cl");

// ---------------------------------------------------------------------------------------------
// Helpers

fn random_i32(rng: &mut Rng, n: usize, lo: i32, hi: i32) -> Vec<i32> {
    (0..n)
        .map(|_| lo + (rng.next_u32() % (hi - lo) as u32) as i32)
        .collect()
}

fn random_f32(rng: &mut Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| lo + rng.next_f32() * (hi - lo)).collect()
}

#[track_caller]
fn assert_close(got: f32, want: f32, tol: f32, what: &str) {
    let err = (got - want).abs();
    assert!(
        err <= tol * want.abs().max(1.0),
        "{what}: got {got}, want {want} (error {err})"
    );
}

// ---------------------------------------------------------------------------------------------
// Vector addition

#[test]
fn vadd_float_and_int() {
    let env = Env::new();
    let mut rng = Rng(1);
    let n = 4096;
    let a = random_f32(&mut rng, n, -100.0, 100.0);
    let b = random_f32(&mut rng, n, -100.0, 100.0);
    let (ma, mb, mc) = (env.buf(&a), env.buf(&b), env.zeros::<f32>(n));
    let k = env.kern(VADD, "vadd_float");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    arg_mem(k, 2, mc);
    env.run(k, &[n], Some(&[64]), None);
    let c: Vec<f32> = env.read(mc, n);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }

    let ai = random_i32(&mut rng, n, i32::MIN / 2, i32::MAX / 2);
    let bi = random_i32(&mut rng, n, i32::MIN / 2, i32::MAX / 2);
    let (ma, mb) = (env.buf(&ai), env.buf(&bi));
    let mc = env.buf(&vec![-7i32; n]);
    let k = env.kern(VADD, "vadd_int");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    arg_mem(k, 2, mc);
    let limit = 4000i32;
    set_arg(k, 3, &limit);
    env.run(k, &[n], Some(&[32]), None);
    let c: Vec<i32> = env.read(mc, n);
    for i in 0..n {
        let want = if (i as i32) < limit {
            ai[i] + bi[i]
        } else {
            -7
        };
        assert_eq!(c[i], want, "c[{i}]");
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments

#[test]
fn scalar_arguments() {
    let env = Env::new();
    let k = env.kern(ARGS, "scalars");
    let out = env.zeros::<f32>(8);
    let (f, i, c, s, l, d) = (
        1.5f32,
        -3i32,
        200u8,
        -7i16,
        123_456_789_012i64,
        9_876_543_210u64,
    );
    arg_mem(k, 0, out);
    set_arg(k, 1, &f);
    set_arg(k, 2, &i);
    set_arg(k, 3, &c);
    set_arg(k, 4, &s);
    set_arg(k, 5, &l);
    set_arg(k, 6, &d);
    env.run(k, &[8], None, None);
    let want = f + i as f32 + c as f32 + s as f32 + l as f32 + d as f32;
    let got: Vec<f32> = env.read(out, 8);
    assert!(got.iter().all(|&g| g == want), "{got:?} != {want}");
}

#[test]
fn vector_arguments() {
    let env = Env::new();
    let k = env.kern(ARGS, "vectors");
    let n = 16;
    let out = env.zeros::<[f32; 4]>(n);
    let v = [1.0f32, -2.0, 3.5, 4.25];
    let w = [9i32, -3];
    let t = [0.5f32, 0.25, -8.0, 1234.0]; // float3 occupies 16 bytes; .w is ignored
    arg_mem(k, 0, out);
    set_arg(k, 1, &v);
    set_arg(k, 2, &w);
    set_arg(k, 3, &t);
    env.run(k, &[n], Some(&[4]), None);
    let got: Vec<[f32; 4]> = env.read(out, n);
    let want: [f32; 4] =
        std::array::from_fn(|j| v[j] * w[1] as f32 + if j < 3 { t[j] } else { 1.0 });
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, want, "out[{i}]");
    }
}

/// OpenCL C layout of `Params` in args.cl: int a; float b; char c; float4 v (at 16).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Params {
    a: i32,
    b: f32,
    c: i8,
    _pad: [u8; 7],
    v: [f32; 4],
}

#[test]
fn struct_by_value_argument() {
    let env = Env::new();
    let k = env.kern(ARGS, "by_value");
    let n = 8;
    let out = env.zeros::<f32>(n);
    let p = Params {
        a: 40,
        b: 0.5,
        c: -3,
        _pad: [0xAA; 7],
        v: [9.0, 8.0, 7.0, 6.25],
    };
    arg_mem(k, 0, out);
    set_arg(k, 1, &p);
    env.run(k, &[n], None, None);
    let want = p.a as f32 + p.b + p.c as f32 + p.v[3];
    let got: Vec<f32> = env.read(out, n);
    assert!(got.iter().all(|&g| g == want), "{got:?} != {want}");
}

// ---------------------------------------------------------------------------------------------
// Work-item functions

const WORKITEM_ALL: &str = r#"
__kernel void items(__global ulong *out, uint dyn) {
    size_t lin = ((get_global_id(2) - get_global_offset(2)) * get_global_size(1)
                  + (get_global_id(1) - get_global_offset(1))) * get_global_size(0)
                  + (get_global_id(0) - get_global_offset(0));
    __global ulong *o = out + lin * 32;
    for (uint d = 0; d < 3; d++) {
        o[d * 8 + 0] = get_global_id(d);
        o[d * 8 + 1] = get_local_id(d);
        o[d * 8 + 2] = get_group_id(d);
        o[d * 8 + 3] = get_num_groups(d);
        o[d * 8 + 4] = get_global_size(d);
        o[d * 8 + 5] = get_local_size(d);
        o[d * 8 + 6] = get_global_offset(d);
        o[d * 8 + 7] = get_enqueued_local_size(d);
    }
    o[24] = get_work_dim();
    o[25] = get_global_id(dyn) + get_local_id(dyn) + get_group_id(dyn) + get_global_offset(dyn);
    o[26] = get_num_groups(dyn) * 100 + get_global_size(dyn) * 10 + get_local_size(dyn);
    o[27] = get_global_id(0) + get_global_id(1) * 1000 + get_global_id(2) * 1000000;
}
"#;

fn check_workitems(global: &[usize], local: &[usize], offset: &[usize]) {
    let env = Env::new();
    let k = env.kern_opts(WORKITEM_ALL, "-cl-std=CL3.0", "items");
    let dims = global.len();
    let total: usize = global.iter().product();
    let out = env.buf(&vec![0xFFFF_FFFF_u64; total * 32]);
    arg_mem(k, 0, out);
    let dyn_dim = 3u32; // out of range: the spec's defaults
    set_arg(k, 1, &dyn_dim);
    env.run(k, global, Some(local), Some(offset));
    let got: Vec<u64> = env.read(out, total * 32);
    let g = |d: usize| if d < dims { global[d] } else { 1 } as u64;
    let l = |d: usize| if d < dims { local[d] } else { 1 } as u64;
    let off = |d: usize| if d < dims { offset[d] } else { 0 } as u64;
    for lin in 0..total as u64 {
        let idx = [lin % g(0), (lin / g(0)) % g(1), lin / (g(0) * g(1))];
        let o = &got[lin as usize * 32..lin as usize * 32 + 32];
        for d in 0..3 {
            // A non-uniform range: the last group of a dimension holds the remainder.
            let in_edge = idx[d] / l(d) == g(d) / l(d);
            let actual = if in_edge { g(d) % l(d) } else { l(d) };
            let want = [
                idx[d] + off(d),
                idx[d] % l(d),
                idx[d] / l(d),
                g(d).div_ceil(l(d)),
                g(d),
                actual,
                off(d),
                l(d),
            ];
            assert_eq!(
                &o[d * 8..d * 8 + 8],
                &want,
                "work-item {idx:?} dimension {d} ({dims}D)"
            );
        }
        assert_eq!(o[24], dims as u64, "work dim");
        assert_eq!(o[25], 0, "ids of dimension 3");
        assert_eq!(o[26], 111, "sizes of dimension 3");
        let gid: [u64; 3] = std::array::from_fn(|d| idx[d] + off(d));
        assert_eq!(o[27], gid[0] + gid[1] * 1000 + gid[2] * 1_000_000);
    }
}

#[test]
fn workitem_functions_1d() {
    check_workitems(&[96], &[16], &[5]);
}

#[test]
fn workitem_functions_2d() {
    check_workitems(&[24, 10], &[8, 2], &[3, 100]);
}

#[test]
fn workitem_functions_3d() {
    check_workitems(&[8, 6, 4], &[4, 3, 2], &[1, 2, 3]);
}

#[test]
fn non_uniform_workitems_1d() {
    check_workitems(&[100], &[16], &[5]);
    check_workitems(&[5], &[8], &[0]);
}

#[test]
fn non_uniform_workitems_2d_edges_in_each_dimension() {
    check_workitems(&[26, 10], &[8, 2], &[3, 100]);
    check_workitems(&[24, 11], &[8, 3], &[0, 0]);
    check_workitems(&[13, 7], &[4, 3], &[1, 1]);
}

#[test]
fn non_uniform_workitems_3d_all_eight_boxes() {
    check_workitems(&[9, 7, 5], &[4, 3, 2], &[1, 2, 3]);
    check_workitems(&[8, 7, 4], &[4, 2, 4], &[0, 0, 0]);
    check_workitems(&[3, 2, 5], &[4, 4, 4], &[0, 0, 0]);
}

const GROUP_SUM: &str = r#"
__kernel void group_sum(__global const int *in, __global int *sums, __global uint *sizes,
                        __local int *tmp) {
    size_t l = get_local_id(0), n = get_local_size(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        int s = 0;
        for (size_t i = 0; i < n; i++) s += tmp[i];
        sums[get_group_id(0)] = s;
        sizes[get_group_id(0)] = (uint)(n * 1000 + get_enqueued_local_size(0));
    }
}
"#;

#[test]
fn non_uniform_edge_group_uses_local_memory_and_barriers() {
    let env = Env::new();
    let k = env.kern_opts(GROUP_SUM, "-cl-std=CL3.0", "group_sum");
    let (n, l) = (1000usize, 64usize);
    let mut rng = Rng(7);
    let input = random_i32(&mut rng, n, -1000, 1000);
    let groups = n.div_ceil(l);
    let (bin, bsum, bsize) = (
        env.buf(&input),
        env.zeros::<i32>(groups),
        env.zeros::<u32>(groups),
    );
    arg_mem(k, 0, bin);
    arg_mem(k, 1, bsum);
    arg_mem(k, 2, bsize);
    arg_local(k, 3, l * 4);
    env.run(k, &[n], Some(&[l]), None);
    let sums: Vec<i32> = env.read(bsum, groups);
    let sizes: Vec<u32> = env.read(bsize, groups);
    for g in 0..groups {
        let chunk = &input[g * l..((g + 1) * l).min(n)];
        assert_eq!(sums[g], chunk.iter().sum::<i32>(), "sum of group {g}");
        assert_eq!(
            sizes[g],
            (chunk.len() * 1000 + l) as u32,
            "sizes of group {g}"
        );
    }
}

#[test]
fn uniform_work_group_size_option_refuses_a_remainder() {
    let env = Env::new();
    let k = env.kern_opts(
        WORKITEM_ALL,
        "-cl-std=CL3.0 -cl-uniform-work-group-size",
        "items",
    );
    let out = env.zeros::<u64>(12 * 32);
    arg_mem(k, 0, out);
    set_arg(k, 1, &0u32);
    assert_eq!(
        env.try_run(k, &[12], Some(&[5]), None),
        CL_INVALID_WORK_GROUP_SIZE
    );
    assert_eq!(env.try_run(k, &[12], Some(&[4]), None), CL_SUCCESS);
}

#[test]
fn device_reports_non_uniform_work_groups() {
    let mut v: cl_bool = CL_FALSE;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            device(),
            CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT,
            std::mem::size_of::<cl_bool>(),
            &mut v as *mut cl_bool as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(v, CL_TRUE);
}

#[test]
fn workitem_fixture_2d() {
    let env = Env::new();
    let k = env.kern(ARGS, "workitem");
    let (gx, gy, lx, ly, ox) = (16usize, 6usize, 4usize, 3usize, 7usize);
    let out = env.zeros::<u64>((gx * gy + ox) * 16);
    arg_mem(k, 0, out);
    env.run(k, &[gx, gy], Some(&[lx, ly]), Some(&[ox, 0]));
    let got: Vec<u64> = env.read(out, (gx * gy + ox) * 16);
    // The fixture indexes by get_global_id without subtracting the offset: rows start at ox.
    for y in 0..gy {
        for x in 0..gx {
            let g = y * gx + x + ox;
            let o = &got[g * 16..g * 16 + 12];
            let want = [
                (x + ox) as u64,
                y as u64,
                (x % lx) as u64,
                (x / lx) as u64,
                (gx / lx) as u64,
                gx as u64,
                lx as u64,
                ox as u64,
                2,
                (y % ly) as u64,
                ly as u64,
                0,
            ];
            assert_eq!(o, &want, "item ({x}, {y})");
        }
    }
}

#[test]
fn workitem30_linear_ids() {
    let env = Env::new();
    let k = env.kern_opts(WORKITEM30, "-cl-std=CL3.0", "workitem30");
    let (global, local) = ([8usize, 6, 2], [2usize, 3, 2]);
    let total = 96;
    let out = env.zeros::<u64>(total * 4);
    arg_mem(k, 0, out);
    env.run(k, &global, Some(&local), Some(&[1, 2, 3]));
    let got: Vec<u64> = env.read(out, total * 4);
    for z in 0..2 {
        for y in 0..6 {
            for x in 0..8 {
                let g = (z * 6 + y) * 8 + x;
                let l = ((z % 2) * 3 + (y % 3)) * 2 + (x % 2);
                assert_eq!(
                    &got[g * 4..g * 4 + 4],
                    &[l as u64, 2, g as u64, 3],
                    "item ({x}, {y}, {z})"
                );
            }
        }
    }
}

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

// ---------------------------------------------------------------------------------------------
// Atomics

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
// Math

const MATH_EACH: &str = r#"
__kernel void each(__global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    float a = x[i];
    __global float *o = y + i * 12;
    o[0] = sqrt(fabs(a));
    o[1] = fabs(a);
    o[2] = fmin(a, 0.5f);
    o[3] = fmax(a, 0.5f);
    o[4] = mad(a, 2.0f, 3.0f);
    o[5] = exp(a);
    o[6] = log(fabs(a) + 1.0f);
    o[7] = sin(a);
    o[8] = cos(a);
    o[9] = floor(a) + ceil(a) * 10.0f;
    o[10] = clamp(a, -2.0f, 2.0f);
    o[11] = a / 3.0f;
}

__kernel void each4(__global const float4 *x, __global float4 *y) {
    size_t i = get_global_id(0);
    float4 a = x[i];
    y[i * 3] = sqrt(fabs(a)) + fmin(a, (float4)(1.0f)) + fmax(a, 0.5f);
    y[i * 3 + 1] = (float4)(dot(a, a), length(a), 0.0f, 0.0f);
    y[i * 3 + 2] = mad(a, a, a);
}
"#;

#[test]
fn common_math_functions() {
    let env = Env::new();
    let mut rng = Rng(14);
    let n = 512usize;
    let x = random_f32(&mut rng, n, -6.0, 6.0);
    let (mx, my) = (env.buf(&x), env.zeros::<f32>(n * 12));
    let k = env.kern(MATH_EACH, "each");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n * 12);
    for i in 0..n {
        let a = x[i];
        let o = &y[i * 12..i * 12 + 12];
        assert_close(o[0], a.abs().sqrt(), 1e-6, "sqrt");
        assert_eq!(o[1], a.abs(), "fabs");
        assert_eq!(o[2], a.min(0.5), "fmin");
        assert_eq!(o[3], a.max(0.5), "fmax");
        assert_close(o[4], a * 2.0 + 3.0, 1e-6, "mad");
        assert_close(o[5], a.exp(), 1e-5, "exp");
        assert_close(o[6], (a.abs() + 1.0).ln(), 1e-5, "log");
        assert_close(o[7], a.sin(), 1e-5, "sin");
        assert_close(o[8], a.cos(), 1e-5, "cos");
        assert_eq!(o[9], a.floor() + a.ceil() * 10.0, "floor/ceil");
        assert_eq!(o[10], a.clamp(-2.0, 2.0), "clamp");
        assert_close(o[11], a / 3.0, 3e-7, "divide");
    }

    let x4 = random_f32(&mut rng, n * 4, -3.0, 3.0);
    let (mx, my) = (env.buf(&x4), env.zeros::<f32>(n * 12));
    let k = env.kern(MATH_EACH, "each4");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n * 12);
    for i in 0..n {
        let a = &x4[i * 4..i * 4 + 4];
        let o = &y[i * 12..i * 12 + 12];
        let dot: f32 = a.iter().map(|v| v * v).sum();
        for j in 0..4 {
            assert_close(
                o[j],
                a[j].abs().sqrt() + a[j].min(1.0) + a[j].max(0.5),
                1e-6,
                "vector sqrt/fmin/fmax",
            );
            assert_close(o[8 + j], a[j] * a[j] + a[j], 1e-6, "vector mad");
        }
        assert_close(o[4], dot, 1e-5, "dot");
        assert_close(o[5], dot.sqrt(), 1e-5, "length");
    }
}

#[test]
fn integer_functions() {
    let env = Env::new();
    let mut rng = Rng(15);
    let n = 1000usize;
    // mad24/mul24 are only defined for 24-bit operands.
    let x = random_i32(&mut rng, n, -(1 << 22), 1 << 22);
    let u: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let (mx, mu, my, mz) = (
        env.buf(&x),
        env.buf(&u),
        env.zeros::<i32>(n),
        env.zeros::<u32>(n),
    );
    let k = env.kern(MATH, "int_math");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, mu);
    arg_mem(k, 2, my);
    arg_mem(k, 3, mz);
    env.run(k, &[n], None, None);
    let y: Vec<i32> = env.read(my, n);
    let z: Vec<u32> = env.read(mz, n);
    for i in 0..n {
        let a = x[i];
        let want = [
            ((a as i64 * 12345) >> 32) as i32,
            a.min(7),
            a.max(-7),
            a.clamp(-100, 100),
            a.unsigned_abs() as i32,
            a * 3 + 4,
            a * 5,
            a.rotate_left(3),
            a.count_ones() as i32,
            a.leading_zeros() as i32,
        ]
        .iter()
        .fold(0i32, |s, v| s.wrapping_add(*v));
        assert_eq!(y[i], want, "int_math({a})");
        let b = u[i];
        let mul_hi = |p: u32, q: u32| ((p as u64 * q as u64) >> 32) as u32;
        let want = [
            mul_hi(b, 0x9e37_79b9),
            b.min(7),
            b.max(9),
            b.clamp(3, 300),
            b,
            b.rotate_left(7),
            mul_hi(b, b).wrapping_add(1),
        ]
        .iter()
        .fold(0u32, |s, v| s.wrapping_add(*v));
        assert_eq!(z[i], want, "uint math({b})");
    }
}

const INT_OPS: &str = r#"
__kernel void ops(__global const int *a, __global const int *b, __global int *out) {
    size_t i = get_global_id(0);
    int x = a[i], y = b[i];
    __global int *o = out + i * 10;
    o[0] = x + y;
    o[1] = x - y;
    o[2] = x * y;
    o[3] = x / y;
    o[4] = x % y;
    o[5] = x >> (y & 31);
    o[6] = (int)((uint)x >> (y & 31));
    o[7] = x << (y & 15);
    o[8] = (x & y) ^ (x | ~y);
    o[9] = (x < y) + (x == y) * 2 + (x >= y) * 4 + add_sat(x, y);
}
"#;

#[test]
fn integer_operators() {
    let env = Env::new();
    let mut rng = Rng(16);
    let n = 1000usize;
    let a: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
    let b: Vec<i32> = (0..n)
        .map(|_| (rng.next_u32() as i32 >> (rng.next_u32() % 31)) | 1)
        .collect();
    let (ma, mb, mo) = (env.buf(&a), env.buf(&b), env.zeros::<i32>(n * 10));
    let k = env.kern(INT_OPS, "ops");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    arg_mem(k, 2, mo);
    env.run(k, &[n], None, None);
    let got: Vec<i32> = env.read(mo, n * 10);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let want = [
            x.wrapping_add(y),
            x.wrapping_sub(y),
            x.wrapping_mul(y),
            x.wrapping_div(y),
            x.wrapping_rem(y),
            x >> (y & 31),
            ((x as u32) >> (y & 31)) as i32,
            x << (y & 15),
            (x & y) ^ (x | !y),
            ((x < y) as i32 + (x == y) as i32 * 2 + (x >= y) as i32 * 4)
                .wrapping_add(x.saturating_add(y)),
        ];
        assert_eq!(&got[i * 10..i * 10 + 10], &want, "ops({x}, {y})");
    }
}

// ---------------------------------------------------------------------------------------------
// Private arrays, __constant

#[test]
fn private_arrays_indexed_dynamically() {
    let env = Env::new();
    let mut rng = Rng(17);
    let n = 128usize;
    let input = random_i32(&mut rng, n * 16, -1000, 1000);
    let (mi, mo) = (env.buf(&input), env.zeros::<i32>(n));
    let k = env.kern(PRIVATE, "private_array");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    set_arg(k, 2, &13i32);
    env.run(k, &[n], None, None);
    let got: Vec<i32> = env.read(mo, n);
    for g in 0..n {
        let buf: Vec<i32> = (0..16).map(|k| input[g * 16 + k] * k as i32).collect();
        let want: i32 = (0..13).map(|k| buf[(k * 7 + g) & 15]).sum();
        assert_eq!(got[g], want, "private_array[{g}]");
    }

    let data = random_f32(&mut rng, n * 8, -50.0, 50.0);
    let m = env.buf(&data);
    let k = env.kern(PRIVATE, "private_sort");
    arg_mem(k, 0, m);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(m, n * 8);
    for g in 0..n {
        let mut want = data[g * 8..g * 8 + 8].to_vec();
        want.sort_by(|p, q| p.partial_cmp(q).unwrap());
        assert_eq!(&got[g * 8..g * 8 + 8], &want[..], "private_sort[{g}]");
    }
}

#[test]
fn constant_arguments_and_tables() {
    let env = Env::new();
    let mut rng = Rng(18);
    let n = 300usize;
    let input = random_f32(&mut rng, n, 0.0, 10.0);
    let (mi, mo) = (env.buf(&input), env.zeros::<f32>(n));
    let scale = env.buffer(CL_MEM_READ_ONLY, 4, Some(bytes(&[2.5f32])));
    let k = env.kern(CONSTANT, "blur");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    arg_mem(k, 2, scale);
    set_arg(k, 3, &(n as i32));
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(mo, n);
    let weights = [0.1f32, 0.2, 0.4, 0.2, 0.1];
    let lut = [3.0f32, 1.0, 4.0, 1.0];
    for i in 0..n {
        let mut acc = 0.0f32;
        for k in -2i32..=2 {
            let j = (i as i32 + k).clamp(0, n as i32 - 1) as usize;
            acc += weights[(k + 2) as usize] * input[j];
        }
        assert_close(got[i], acc * 2.5 + lut[i & 3], 1e-6, "blur");
    }
}

// ---------------------------------------------------------------------------------------------
// Grid sizes

const IDS: &str = r#"
__kernel void ids(__global uint *gid, __global uint *grp, __global uint *info) {
    size_t i = get_global_id(0) - get_global_offset(0);
    gid[i] = (uint)get_global_id(0);
    grp[i] = (uint)get_group_id(0) * 1024 + (uint)get_local_id(0);
    if (i == 0) {
        info[0] = (uint)get_num_groups(0);
        info[1] = (uint)get_local_size(0);
    }
}

__kernel void ids3(__global uint *out) {
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t lin = (z * get_global_size(1) + y) * get_global_size(0) + x;
    out[lin * 2] = (uint)(x + y * 100 + z * 10000);
    out[lin * 2 + 1] = (uint)(get_local_size(0) + get_local_size(1) * 1000 + get_local_size(2) * 1000000);
}
"#;

#[test]
fn grid_larger_than_dispatch_limit() {
    let env = Env::new();
    for (global, local, offset) in [
        (65535 * 2 + 1001, 1usize, 3usize),
        (2 * (65536 + 100), 2, 0),
    ] {
        let (mg, mp, mi) = (
            env.zeros::<u32>(global),
            env.zeros::<u32>(global),
            env.zeros::<u32>(2),
        );
        let k = env.kern(IDS, "ids");
        arg_mem(k, 0, mg);
        arg_mem(k, 1, mp);
        arg_mem(k, 2, mi);
        env.run(k, &[global], Some(&[local]), Some(&[offset]));
        let gid: Vec<u32> = env.read(mg, global);
        let grp: Vec<u32> = env.read(mp, global);
        for i in 0..global {
            assert_eq!(gid[i] as usize, i + offset, "global id {i}");
            assert_eq!(
                grp[i] as usize,
                (i / local) * 1024 + i % local,
                "group/local id {i}"
            );
        }
        assert_eq!(
            env.read::<u32>(mi, 2),
            vec![(global / local) as u32, local as u32]
        );
    }
}

#[test]
fn null_local_size_with_prime_global_sizes() {
    let env = Env::new();
    for global in [vec![997usize], vec![13, 7], vec![5, 3, 11], vec![251, 3]] {
        let g3: [usize; 3] = std::array::from_fn(|d| global.get(d).copied().unwrap_or(1));
        let total: usize = g3.iter().product();
        let out = env.buf(&vec![u32::MAX; total * 2]);
        let k = env.kern(IDS, "ids3");
        arg_mem(k, 0, out);
        env.run(k, &global, None, None);
        let got: Vec<u32> = env.read(out, total * 2);
        let ls = got[1];
        let l = [ls % 1000, ls / 1000 % 1000, ls / 1_000_000];
        for d in 0..3 {
            assert!(
                l[d] >= 1 && g3[d].is_multiple_of(l[d] as usize),
                "local size {l:?} for {g3:?}"
            );
        }
        for z in 0..g3[2] {
            for y in 0..g3[1] {
                for x in 0..g3[0] {
                    let lin = (z * g3[1] + y) * g3[0] + x;
                    assert_eq!(
                        got[lin * 2] as usize,
                        x + y * 100 + z * 10000,
                        "item ({x}, {y}, {z}) of {global:?}"
                    );
                    assert_eq!(got[lin * 2 + 1], ls);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Build failures, API errors, queries

#[test]
fn broken_source_fails_with_log_naming_the_line() {
    let env = Env::new();
    let src = "__kernel void ok(__global int *p) { p[0] = 1; }\n\
               \n\
               __kernel void broken(__global int *p) {\n\
                   p[0] = undefined_thing + 1;\n\
               }\n";
    let (err, log) = env.try_build(src, "").expect_err("the build must fail");
    assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains(":4:"), "log names line 4: {log}");
    assert!(log.contains("undefined_thing"), "{log}");
}

#[test]
fn set_kernel_arg_errors() {
    let env = Env::new();
    let k = env.kern(ARGS, "scalars");
    let f = 1.0f32;
    let set = |i: u32, size: usize, v: *const c_void| unsafe { cl!(clSetKernelArg)(k, i, size, v) };
    assert_eq!(
        set(1, 8, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_SIZE,
        "float given 8 bytes"
    );
    assert_eq!(
        set(6, 4, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_SIZE,
        "ulong given 4 bytes"
    );
    assert_eq!(
        set(0, 4, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_SIZE,
        "buffer given 4 bytes"
    );
    assert_eq!(
        set(7, 4, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_INDEX
    );
    assert_eq!(
        set(1, 4, null()),
        CL_INVALID_ARG_VALUE,
        "NULL for a by-value argument"
    );
    let k2 = env.kern(LOCAL, "reduce_sum");
    let x = 0u32;
    let r = unsafe { cl!(clSetKernelArg)(k2, 2, 4, &x as *const u32 as *const c_void) };
    assert_eq!(r, CL_INVALID_ARG_VALUE, "non-NULL value for __local");
    let r = unsafe { cl!(clSetKernelArg)(k2, 2, 0, null()) };
    assert_eq!(r, CL_INVALID_ARG_SIZE, "__local of 0 bytes");
    let bogus = 0x1234usize as cl_mem;
    let r = unsafe {
        cl!(clSetKernelArg)(
            k2,
            0,
            std::mem::size_of::<cl_mem>(),
            &bogus as *const cl_mem as *const c_void,
        )
    };
    assert_eq!(r, CL_INVALID_MEM_OBJECT);
}

#[test]
fn enqueue_errors() {
    let env = Env::new();
    let k = env.kern(VADD, "vadd_float");
    assert_eq!(
        env.try_run(k, &[64], None, None),
        CL_INVALID_KERNEL_ARGS,
        "no argument set"
    );
    let m = env.zeros::<f32>(64);
    arg_mem(k, 0, m);
    arg_mem(k, 1, m);
    assert_eq!(
        env.try_run(k, &[64], None, None),
        CL_INVALID_KERNEL_ARGS,
        "one argument unset"
    );
    arg_mem(k, 2, m);
    env.run(k, &[64], None, None);

    let global = [64usize, 1, 1, 1];
    for dim in [0u32, 4] {
        let r = unsafe {
            cl!(clEnqueueNDRangeKernel)(
                env.queue,
                k,
                dim,
                null(),
                global.as_ptr(),
                null(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_INVALID_WORK_DIMENSION, "work_dim {dim}");
    }
    // An OpenCL C 1.2 program (no -cl-std) must have uniform work-groups (OpenCL 3.0 5.10):
    // a local size that does not divide the global size is CL_INVALID_WORK_GROUP_SIZE (see
    // non_uniform_work_groups_need_cl_std_2_or_later for the programs that may).
    assert_eq!(
        env.try_run(k, &[64], Some(&[5]), None),
        CL_INVALID_WORK_GROUP_SIZE
    );
    assert_eq!(
        env.try_run(k, &[64, 6], Some(&[8, 4]), None),
        CL_INVALID_WORK_GROUP_SIZE
    );
    assert_eq!(
        env.try_run(k, &[64], Some(&[0]), None),
        CL_INVALID_WORK_GROUP_SIZE,
        "a local size of 0"
    );
    let mut max_wg = 0usize;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MAX_WORK_GROUP_SIZE,
            8,
            &mut max_wg as *mut usize as *mut c_void,
            null_mut(),
        )
    });
    let mut sizes = [0usize; 3];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MAX_WORK_ITEM_SIZES,
            24,
            sizes.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let big = sizes[0] * 2;
    assert_eq!(
        env.try_run(k, &[big * 4], Some(&[big]), None),
        CL_INVALID_WORK_ITEM_SIZE,
        "local above the item size"
    );
    let side = sizes[0].min(sizes[1]);
    if side * side > max_wg {
        assert_eq!(
            env.try_run(k, &[side, side], Some(&[side, side]), None),
            CL_INVALID_WORK_GROUP_SIZE,
            "local above the group size"
        );
    }
    // reqd_work_group_size(8, 4, 1)
    let ka = env.kern(ARGS, "attributed");
    arg_mem(ka, 0, m);
    assert_eq!(
        env.try_run(ka, &[16, 4], Some(&[4, 4]), None),
        CL_INVALID_WORK_GROUP_SIZE
    );
    env.run(ka, &[16, 4], Some(&[8, 4]), None);
    let global = [64usize];
    let r = unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            null(),
            null(),
            0,
            null(),
            null_mut(),
        )
    };
    // OpenCL 2.1+: a NULL global size is an empty NDRange.
    assert_eq!(r, CL_SUCCESS, "NULL global size");
    let r = unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            null_mut(),
            1,
            null(),
            global.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_KERNEL);
}

#[test]
fn create_kernel_errors() {
    let env = Env::new();
    let p = env.build(VADD);
    let mut err = 0;
    let name = CString::new("no_such_kernel").unwrap();
    let k = unsafe { cl!(clCreateKernel)(p, name.as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_KERNEL_NAME);
    let k = unsafe { cl!(clCreateKernel)(p, null(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let mut n = 0u32;
    ok(unsafe { cl!(clCreateKernelsInProgram)(p, 0, null_mut(), &mut n) });
    assert_eq!(n, 2);
}

#[test]
fn kernel_queries() {
    let env = Env::new();
    let p = env.build(ARGS);
    let k = env.kernel(p, "scalars");
    let num: cl_uint =
        info_scalar(|s, v, r| unsafe { cl!(clGetKernelInfo)(k, CL_KERNEL_NUM_ARGS, s, v, r) });
    assert_eq!(num, 7);
    let name =
        info_string(|s, v, r| unsafe { cl!(clGetKernelInfo)(k, CL_KERNEL_FUNCTION_NAME, s, v, r) });
    assert_eq!(name, "scalars");
    let wg: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(k, env.device, CL_KERNEL_WORK_GROUP_SIZE, s, v, r)
    });
    let mut max_wg = 0usize;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MAX_WORK_GROUP_SIZE,
            8,
            &mut max_wg as *mut usize as *mut c_void,
            null_mut(),
        )
    });
    assert!(wg >= 1 && wg <= max_wg);
    let mut compile = [9usize; 3];
    ok(unsafe {
        cl!(clGetKernelWorkGroupInfo)(
            k,
            env.device,
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
            24,
            compile.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(compile, [0, 0, 0]);
    let ka = env.kernel(p, "attributed");
    ok(unsafe {
        cl!(clGetKernelWorkGroupInfo)(
            ka,
            env.device,
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
            24,
            compile.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(compile, [8, 4, 1]);
    let wga: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(ka, env.device, CL_KERNEL_WORK_GROUP_SIZE, s, v, r)
    });
    assert_eq!(wga, 32);

    let kl = env.kern(LOCAL, "reduce_sum");
    arg_local(kl, 2, 1000);
    let lm: cl_ulong = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(kl, env.device, CL_KERNEL_LOCAL_MEM_SIZE, s, v, r)
    });
    assert!(lm >= 1000, "local memory {lm}");
    let kt = env.kern(LOCAL, "reverse_tile");
    let lm: cl_ulong = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(kt, env.device, CL_KERNEL_LOCAL_MEM_SIZE, s, v, r)
    });
    assert!(lm >= 256, "static local memory {lm}");

    // Without -cl-kernel-arg-info: not available.
    let mut q: cl_kernel_arg_address_qualifier = 0;
    let r = unsafe {
        cl!(clGetKernelArgInfo)(
            k,
            0,
            CL_KERNEL_ARG_ADDRESS_QUALIFIER,
            4,
            &mut q as *mut _ as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_KERNEL_ARG_INFO_NOT_AVAILABLE);

    let p = env.try_build(ARGS, "-cl-kernel-arg-info").unwrap();
    let k = env.kernel(p, "scalars");
    let arg_name = |i: u32| {
        info_string(|s, v, r| unsafe { cl!(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_NAME, s, v, r) })
    };
    let type_name = |i: u32| {
        info_string(|s, v, r| unsafe {
            cl!(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_TYPE_NAME, s, v, r)
        })
    };
    assert_eq!(arg_name(0), "out");
    assert_eq!(type_name(0), "float*");
    assert_eq!(arg_name(3), "c");
    assert_eq!(type_name(3), "uchar");
    assert_eq!(type_name(6), "ulong");
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_GLOBAL);
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_PRIVATE);
    let r = unsafe { cl!(clGetKernelArgInfo)(k, 7, CL_KERNEL_ARG_NAME, 0, null_mut(), null_mut()) };
    assert_eq!(r, CL_INVALID_ARG_INDEX);

    let p = env.try_build(CONSTANT, "-cl-kernel-arg-info").unwrap();
    let k = env.kernel(p, "blur");
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 2, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_CONSTANT);
    let tq: cl_kernel_arg_type_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, s, v, r)
    });
    assert_eq!(tq & CL_KERNEL_ARG_TYPE_CONST, CL_KERNEL_ARG_TYPE_CONST);
    let p = env.try_build(LOCAL, "-cl-kernel-arg-info").unwrap();
    let k = env.kernel(p, "reduce_sum");
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 2, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_LOCAL);
}

// ---------------------------------------------------------------------------------------------
// Types, conversions, vectors

const TYPES: &str = r#"
__kernel void types(__global const char *c, __global const short *s, __global const long *l,
                    __global uchar4 *o4, __global short *os, __global long *ol,
                    __global char *oc) {
    size_t i = get_global_id(0);
    oc[i] = c[i] * 3 + (char)1;
    os[i] = s[i] / (short)3 + (short)c[i];
    ol[i] = l[i] * l[i] + (l[i] >> 7) + mul_hi(l[i], (long)0x123456789) + rotate(l[i], (long)13)
            + popcount(l[i]) + clz(l[i]) + ctz(l[i]);
    o4[i] = (uchar4)(c[i], s[i], l[i], (uchar)i) + convert_uchar4_sat((int4)(-5, 300, 7, 8));
}

__kernel void narrow_bits(__global const uchar *b, __global const ushort *h, __global uint *o) {
    size_t i = get_global_id(0);
    o[i * 6] = popcount(b[i]);
    o[i * 6 + 1] = clz(b[i]);
    o[i * 6 + 2] = ctz(b[i]);
    o[i * 6 + 3] = popcount(h[i]);
    o[i * 6 + 4] = clz(h[i]);
    o[i * 6 + 5] = ctz(h[i]);
}
"#;

const DOUBLES: &str = r#"
__kernel void doubles(__global const double *d, __global double *od) {
    size_t i = get_global_id(0);
    od[i] = sqrt(fabs(d[i])) + d[i] * 0.5 + fma(d[i], d[i], 1.0) + floor(d[i]);
}
"#;

/// Builds `source`, a program using `double`, with `options`: `Some` where the device reports
/// `cl_khr_fp64`; elsewhere asserts that the build fails with a log naming the missing
/// extension (never a program where `double` silently became `float`) and gives `None`.
fn build_doubles(env: &Env, source: &str, options: &str) -> Option<cl_program> {
    let built = env.try_build(source, options);
    if env.has_extension("cl_khr_fp64") {
        return Some(built.unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}")));
    }
    let (err, log) = built.expect_err("double without cl_khr_fp64 must not build");
    assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        log.contains("error") && log.contains("double") && log.contains("cl_khr_fp64"),
        "{log}"
    );
    None
}

#[test]
fn narrow_and_wide_integer_types_and_double() {
    let env = Env::new();
    let mut rng = Rng(21);
    let n = 500usize;
    let c: Vec<i8> = (0..n).map(|_| rng.next_u32() as i8).collect();
    let s: Vec<i16> = (0..n).map(|_| rng.next_u32() as i16).collect();
    let mut l: Vec<i64> = (0..n)
        .map(|_| {
            ((rng.next_u32() as u64) << 32 | rng.next_u32() as u64) as i64 >> (rng.next_u32() % 64)
        })
        .collect();
    l[0] = 0;
    l[1] = -1;
    let d: Vec<f64> = (0..n)
        .map(|_| (rng.next_u32() as f64 - 2e9) / 1e5)
        .collect();
    let bufs = [env.buf(&c), env.buf(&s), env.buf(&l)];
    let (o4, os, ol, oc) = (
        env.zeros::<[u8; 4]>(n),
        env.zeros::<i16>(n),
        env.zeros::<i64>(n),
        env.zeros::<i8>(n),
    );
    let k = env.kern_opts(TYPES, "-cl-std=CL3.0", "types");
    for (i, m) in bufs.iter().chain([o4, os, ol, oc].iter()).enumerate() {
        arg_mem(k, i as u32, *m);
    }
    env.run(k, &[n], None, None);
    let g4: Vec<[u8; 4]> = env.read(o4, n);
    let gs: Vec<i16> = env.read(os, n);
    let gl: Vec<i64> = env.read(ol, n);
    let gc: Vec<i8> = env.read(oc, n);
    for i in 0..n {
        assert_eq!(gc[i], (c[i] as i32 * 3 + 1) as i8, "char {i}");
        assert_eq!(gs[i], (s[i] / 3).wrapping_add(c[i] as i16), "short {i}");
        let x = l[i];
        let want = [
            x.wrapping_mul(x),
            x >> 7,
            ((x as i128 * 0x1_2345_6789) >> 64) as i64,
            x.rotate_left(13),
            x.count_ones() as i64,
            x.leading_zeros() as i64,
            x.trailing_zeros() as i64,
        ]
        .iter()
        .fold(0i64, |a, v| a.wrapping_add(*v));
        assert_eq!(gl[i], want, "long {i} of {x}");
        let v = [c[i] as u8, s[i] as u8, l[i] as u8, i as u8];
        let sat = [0u8, 255, 7, 8];
        let want: [u8; 4] = std::array::from_fn(|j| v[j].wrapping_add(sat[j]));
        assert_eq!(g4[i], want, "uchar4 {i}");
    }

    // double: computed where the device reports cl_khr_fp64, a build error elsewhere.
    for std in ["-cl-std=CL3.0", "-cl-std=CL1.2"] {
        let Some(p) = build_doubles(&env, DOUBLES, std) else {
            continue;
        };
        let (md, od) = (env.buf(&d), env.zeros::<f64>(n));
        let k = env.kernel(p, "doubles");
        arg_mem(k, 0, md);
        arg_mem(k, 1, od);
        env.run(k, &[n], None, None);
        let gd: Vec<f64> = env.read(od, n);
        for i in 0..n {
            let y = d[i];
            let want = y.abs().sqrt() + y * 0.5 + y.mul_add(y, 1.0) + y.floor();
            assert!(
                (gd[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
                "double {i}: {} vs {want}",
                gd[i]
            );
        }
    }

    let b: Vec<u8> = (0..256).map(|x| x as u8).collect();
    let h: Vec<u16> = (0..256)
        .map(|x| {
            if x < 17 {
                1u16 << (x % 16)
            } else {
                rng.next_u32() as u16
            }
        })
        .collect();
    let (mb, mh, mo) = (env.buf(&b), env.buf(&h), env.zeros::<u32>(256 * 6));
    let k = env.kern_opts(TYPES, "-cl-std=CL3.0", "narrow_bits");
    arg_mem(k, 0, mb);
    arg_mem(k, 1, mh);
    arg_mem(k, 2, mo);
    env.run(k, &[256], None, None);
    let got: Vec<u32> = env.read(mo, 256 * 6);
    for i in 0..256 {
        let want = [
            b[i].count_ones(),
            b[i].leading_zeros(),
            b[i].trailing_zeros(),
            h[i].count_ones(),
            h[i].leading_zeros(),
            h[i].trailing_zeros(),
        ];
        assert_eq!(&got[i * 6..i * 6 + 6], &want, "bits of {} / {}", b[i], h[i]);
    }
}

const CONVERSIONS: &str = r#"
__kernel void conv(__global const float *f, __global int *oi, __global uint *ou, __global float *of) {
    size_t i = get_global_id(0);
    float x = f[i];
    oi[i * 5] = convert_int_sat(x * 1e9f);
    oi[i * 5 + 1] = convert_int_rtn(x);
    oi[i * 5 + 2] = convert_int_sat_rtp(x);
    oi[i * 5 + 3] = as_int(x);
    oi[i * 5 + 4] = convert_int_rte(x);
    ou[i * 4] = convert_uint_sat(x);
    ou[i * 4 + 1] = convert_uchar_sat(x * 100.0f);
    ou[i * 4 + 2] = convert_char_sat((int)(x * 100.0f));
    ou[i * 4 + 3] = convert_ushort_sat(as_int(x) >> 12);
    of[i * 3] = convert_float((int)i);
    of[i * 3 + 1] = as_float(as_uint(x) ^ 0x80000000u);
    of[i * 3 + 2] = (float)(ulong)(i * 1000000007ul);
}
"#;

#[test]
fn conversions_saturate_and_round() {
    let env = Env::new();
    let mut rng = Rng(22);
    let mut x = random_f32(&mut rng, 200, -5.0, 5.0);
    x.extend([
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e10,
        -1e10,
        0.5,
        -0.5,
        2.5,
        -2.5,
        3e9,
        4.5e9,
        2147483520.0,
        0.0,
        -0.0,
    ]);
    let n = x.len();
    let (mx, mi, mu, mf) = (
        env.buf(&x),
        env.zeros::<i32>(n * 5),
        env.zeros::<u32>(n * 4),
        env.zeros::<f32>(n * 3),
    );
    let k = env.kern(CONVERSIONS, "conv");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, mi);
    arg_mem(k, 2, mu);
    arg_mem(k, 3, mf);
    env.run(k, &[n], None, None);
    let (gi, gu, gf): (Vec<i32>, Vec<u32>, Vec<f32>) = (
        env.read(mi, n * 5),
        env.read(mu, n * 4),
        env.read(mf, n * 3),
    );
    for i in 0..n {
        let v = x[i];
        // Rust's float -> int `as` saturates and maps NaN to 0, like OpenCL's _sat.
        let rte = if v.is_finite() && v.abs() < 2e9 {
            Some(v.round_ties_even() as i32)
        } else {
            None
        };
        assert_eq!(gi[i * 5], (v * 1e9) as i32, "convert_int_sat({v} * 1e9)");
        if v.is_finite() && v.abs() < 2e9 {
            assert_eq!(gi[i * 5 + 1], v.floor() as i32, "convert_int_rtn({v})");
        }
        assert_eq!(gi[i * 5 + 2], v.ceil() as i32, "convert_int_sat_rtp({v})");
        assert_eq!(gi[i * 5 + 3], v.to_bits() as i32, "as_int({v})");
        if let Some(r) = rte {
            assert_eq!(gi[i * 5 + 4], r, "convert_int_rte({v})");
        }
        assert_eq!(gu[i * 4], v as u32, "convert_uint_sat({v})");
        assert_eq!(
            gu[i * 4 + 1],
            (v * 100.0) as u8 as u32,
            "convert_uchar_sat({v} * 100)"
        );
        if v.is_finite() && v.abs() < 2e7 {
            let c = ((v * 100.0) as i32).clamp(-128, 127) as i8;
            assert_eq!(
                gu[i * 4 + 2],
                c as i32 as u32,
                "convert_char_sat((int)({v} * 100))"
            );
        }
        assert_eq!(
            gu[i * 4 + 3],
            ((v.to_bits() as i32) >> 12).clamp(0, 65535) as u32,
            "convert_ushort_sat of {v}"
        );
        assert_eq!(gf[i * 3], i as f32);
        assert_eq!(gf[i * 3 + 1].to_bits(), v.to_bits() ^ 0x8000_0000);
        assert_eq!(gf[i * 3 + 2], (i as u64 * 1_000_000_007) as f32);
    }
}

const VECTORS: &str = r#"
__kernel void vecs(__global const int4 *a, __global const uint4 *m, __global int4 *o, __global int *oi) {
    size_t i = get_global_id(0);
    int4 x = a[i];
    o[i * 3] = shuffle(x, m[i]);
    o[i * 3 + 1] = shuffle2(x, x.wzyx + 100, m[i]);
    o[i * 3 + 2] = (x.zwxy * 2 - x) >> 1;
    oi[i] = any(x < 0) + all(x > -100) * 2 + (x.x > x.y ? 4 : 0) + (int)dot(convert_float4(x), (float4)(1.0f));
}
"#;

#[test]
fn vector_swizzles_and_shuffles() {
    let env = Env::new();
    let mut rng = Rng(23);
    let n = 300usize;
    let a: Vec<[i32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 400) as i32 - 200))
        .collect();
    let m: Vec<[u32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.next_u32()))
        .collect();
    let (ma, mm, mo, mi) = (
        env.buf(&a),
        env.buf(&m),
        env.zeros::<[i32; 4]>(n * 3),
        env.zeros::<i32>(n),
    );
    let k = env.kern(VECTORS, "vecs");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mm);
    arg_mem(k, 2, mo);
    arg_mem(k, 3, mi);
    env.run(k, &[n], None, None);
    let (go, gi): (Vec<[i32; 4]>, Vec<i32>) = (env.read(mo, n * 3), env.read(mi, n));
    for i in 0..n {
        let x = a[i];
        let y = [x[3] + 100, x[2] + 100, x[1] + 100, x[0] + 100];
        let sh: [i32; 4] = std::array::from_fn(|j| x[(m[i][j] & 3) as usize]);
        let sh2: [i32; 4] = std::array::from_fn(|j| {
            let k = (m[i][j] & 7) as usize;
            if k < 4 {
                x[k]
            } else {
                y[k - 4]
            }
        });
        let sw = [x[2], x[3], x[0], x[1]];
        let ar: [i32; 4] = std::array::from_fn(|j| (sw[j] * 2 - x[j]) >> 1);
        assert_eq!(go[i * 3], sh, "shuffle {i}");
        assert_eq!(go[i * 3 + 1], sh2, "shuffle2 {i}");
        assert_eq!(go[i * 3 + 2], ar, "swizzle {i}");
        let want = x.iter().any(|v| *v < 0) as i32
            + x.iter().all(|v| *v > -100) as i32 * 2
            + if x[0] > x[1] { 4 } else { 0 }
            + x.iter().sum::<i32>();
        assert_eq!(gi[i], want, "any/all/dot {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Structs in global memory, pointer arithmetic, 64-bit atomics, barriers in loops, goto

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

const MATH_MORE: &str = r#"
__kernel void more(__global const float *x, __global const int *k, __global float *y) {
    size_t i = get_global_id(0);
    float a = x[i];
    __global float *o = y + i * 8;
    o[0] = copysign(2.0f, a);
    o[1] = fdim(a, 1.0f);
    o[2] = cbrt(a);
    o[3] = pown(a, k[i]);
    o[4] = maxmag(a, 0.5f);
    o[5] = minmag(a, 0.5f);
    o[6] = rootn(a, k[i]);
    o[7] = (float)(abs_diff(k[i], -3) + hadd(k[i], 7) + rhadd(k[i], 8) + sub_sat(k[i], 2147483647)
           + (int)add_sat((uint)k[i], 4000000000u) + upsample((short)k[i], (ushort)3));
}
"#;

#[test]
fn more_math_functions() {
    let env = Env::new();
    let mut rng = Rng(25);
    let n = 400usize;
    let x = random_f32(&mut rng, n, -4.0, 4.0);
    let kk = random_i32(&mut rng, n, -4, 6);
    let (mx, mk, my) = (env.buf(&x), env.buf(&kk), env.zeros::<f32>(n * 8));
    let k = env.kern(MATH_MORE, "more");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, mk);
    arg_mem(k, 2, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n * 8);
    for i in 0..n {
        let (a, e) = (x[i], kk[i]);
        let o = &y[i * 8..i * 8 + 8];
        assert_eq!(o[0], 2.0f32.copysign(a), "copysign");
        assert_eq!(o[1], if a > 1.0 { a - 1.0 } else { 0.0 }, "fdim");
        assert_close(o[2], a.cbrt(), 1e-5, "cbrt");
        if e != 0 {
            assert_close(o[3], a.powi(e), 1e-4, &format!("pown({a}, {e})"));
        }
        let (ax, ay) = (a.abs(), 0.5f32);
        assert_eq!(
            o[4],
            if ax > ay {
                a
            } else if ay > ax {
                0.5
            } else {
                a.max(0.5)
            },
            "maxmag"
        );
        assert_eq!(
            o[5],
            if ax < ay {
                a
            } else if ay < ax {
                0.5
            } else {
                a.min(0.5)
            },
            "minmag"
        );
        if e > 0 && (a >= 0.0 || e % 2 == 1) {
            let want = a.abs().powf(1.0 / e as f32).copysign(a);
            assert_close(o[6], want, 1e-5, &format!("rootn({a}, {e})"));
        } else if e > 0 {
            assert!(o[6].is_nan(), "rootn({a}, {e}) = {}", o[6]);
        }
        let ints = [
            (e as i64 - -3i64).unsigned_abs() as i32,
            ((e as i64 + 7) >> 1) as i32,
            ((e as i64 + 8 + 1) >> 1) as i32,
            e.saturating_sub(i32::MAX),
            (e as u32).saturating_add(4_000_000_000) as i32,
            ((e as i16 as i32) << 16) | 3,
        ];
        let want = ints.iter().fold(0i32, |s, v| s.wrapping_add(*v)) as f32;
        assert_eq!(o[7], want, "integer built-ins of {e}");
    }
}

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

#[test]
fn double_transcendentals_fail_the_build_cleanly() {
    let env = Env::new();
    let src = "__kernel void dbl(__global double *d) { d[0] = exp(d[0]); }";
    if env.has_extension("cl_khr_fp64") {
        // exp(double) comes from the math library (libclc; its results: tests/fp64.rs);
        // without it (VKCL_LIBCLC=0) Vulkan has no 64-bit exp: a clean failure naming the
        // kernel.
        match env.try_build(src, "") {
            Ok(p) => unsafe {
                cl!(clReleaseProgram)(p);
            },
            Err((err, log)) => {
                assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
                assert!(log.contains("double") && log.contains("dbl"), "{log}");
            }
        }
    } else {
        let (err, log) = env
            .try_build(src, "")
            .expect_err("double without cl_khr_fp64");
        assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
        assert!(
            log.contains("double") && log.contains("cl_khr_fp64"),
            "{log}"
        );
    }
    // sqrt, fma, floor and friends do exist for doubles (where the device has them).
    let ok = "__kernel void ok(__global double *d) { d[0] = sqrt(d[0]) + fma(d[1], d[2], floor(d[3])); }";
    build_doubles(&env, ok, "");
    // A `double` only inside the kernel, whose sqrt would silently take the float overload
    // were the type enabled without the extension, for both language versions.
    let inner = "__kernel void k(__global float *f) { double x = f[0]; f[0] = (float)sqrt(x); }";
    for std in ["", "-cl-std=CL3.0"] {
        build_doubles(&env, inner, std);
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

const POINTER_MATH: &str = r#"
__kernel void split_floats(__global const float *x, __global float *y, __global int *e,
                           __global float *gi) {
    size_t i = get_global_id(0);
    float ip;
    int ex;
    y[i * 4] = fract(x[i], &ip);
    y[i * 4 + 1] = ip;
    y[i * 4 + 2] = frexp(x[i], &ex);
    e[i] = ex;
    y[i * 4 + 3] = modf(x[i], gi + i);
}
"#;

#[test]
fn fract_frexp_modf_store_through_pointers() {
    let env = Env::new();
    let mut rng = Rng(30);
    let mut x = random_f32(&mut rng, 200, -100.0, 100.0);
    x.extend([0.0, -0.0, 1.0, -1.0, 0.75, -2.5, 1e-3, 3.0e7]);
    let n = x.len();
    let (mx, my, me, mg) = (
        env.buf(&x),
        env.zeros::<f32>(n * 4),
        env.zeros::<i32>(n),
        env.zeros::<f32>(n),
    );
    let k = env.kern(POINTER_MATH, "split_floats");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    arg_mem(k, 2, me);
    arg_mem(k, 3, mg);
    env.run(k, &[n], None, None);
    let (y, e, gi): (Vec<f32>, Vec<i32>, Vec<f32>) =
        (env.read(my, n * 4), env.read(me, n), env.read(mg, n));
    for i in 0..n {
        let v = x[i];
        assert_eq!(
            y[i * 4],
            (v - v.floor()).min(1.0 - f32::EPSILON / 2.0),
            "fract({v})"
        );
        assert_eq!(y[i * 4 + 1], v.floor(), "fract({v}) integer part");
        // frexp: v = m * 2^e with 0.5 <= |m| < 1 (0 for 0).
        let (m, ex) = (y[i * 4 + 2], e[i]);
        if v == 0.0 {
            assert_eq!((m, ex), (0.0, 0), "frexp(0)");
        } else {
            assert!((0.5..1.0).contains(&m.abs()), "frexp({v}) mantissa {m}");
            assert_eq!(m * 2f32.powi(ex), v, "frexp({v})");
        }
        assert_eq!(y[i * 4 + 3], v - v.trunc(), "modf({v})");
        assert_eq!(gi[i], v.trunc(), "modf({v}) integer part");
    }
}

const WIDE: &str = include_str!("../src/compiler/testdata/wide.cl");

#[test]
fn vectors_of_8_and_16_components() {
    let env = Env::new();
    let mut rng = Rng(31);
    let p = env.build(WIDE);

    let n = 64usize;
    let a: Vec<[f32; 8]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.next_f32() * 8.0 - 4.0))
        .collect();
    let (ma, mb) = (env.buf(&a), env.zeros::<[f32; 8]>(n));
    let k = env.kernel(p, "wide_vectors");
    arg_mem(k, 0, ma);
    arg_mem(k, 1, mb);
    env.run(k, &[n], None, None);
    let got: Vec<[f32; 8]> = env.read(mb, n);
    for i in 0..n {
        let want: [f32; 8] = std::array::from_fn(|j| a[i][j] * 2.0 + a[i][7 - j]);
        assert_eq!(got[i], want, "wide_vectors {i}");
    }

    let x: Vec<[i32; 16]> = (0..n)
        .map(|i| {
            std::array::from_fn(|j| {
                if i % 7 == 3 && j == 5 {
                    -2_000_000
                } else {
                    (rng.next_u32() % 2000) as i32 - 1000
                }
            })
        })
        .collect();
    let f = random_f32(&mut rng, n * 8, -9.0, 9.0);
    let s: [f32; 8] = std::array::from_fn(|j| j as f32 * 0.5);
    let kk = 21u32;
    let (mx, mf, mo, mfo, mfl) = (
        env.buf(&x),
        env.buf(&f),
        env.zeros::<[i32; 16]>(n * 3),
        env.zeros::<[f32; 8]>(n + 64),
        env.zeros::<i32>(n),
    );
    let k = env.kernel(p, "wide_mix");
    for (idx, m) in [mx, mf, mo, mfo, mfl].iter().enumerate() {
        arg_mem(k, idx as u32, *m);
    }
    set_arg(k, 5, &s);
    set_arg(k, 6, &kk);
    env.run(k, &[n], Some(&[16]), None);
    let out: Vec<[i32; 16]> = env.read(mo, n * 3);
    let fo: Vec<[f32; 8]> = env.read(mfo, n + 64);
    let flags: Vec<i32> = env.read(mfl, n);
    for i in 0..n {
        let xv = x[i];
        let y: [i32; 16] = std::array::from_fn(|j| (i + j) as i32);
        let sel: [i32; 16] = std::array::from_fn(|j| {
            (if xv[j] > y[j] { y[j] } else { xv[j] })
                .wrapping_mul(3)
                .wrapping_sub(xv[j] >> 2)
        });
        assert_eq!(out[i * 3], sel, "select/shift {i}");
        let mix: [i32; 16] = std::array::from_fn(|j| {
            xv[15 - j]
                .wrapping_add(xv[j])
                .wrapping_add(xv[j].wrapping_sub(y[j]).unsigned_abs() as i32)
        });
        assert_eq!(out[i * 3 + 1], mix, "swizzles/abs {i}");
        let mut z = xv;
        z[(kk & 15) as usize] = -1;
        assert_eq!(out[i * 3 + 2], z, "dynamic insert {i}");
        let w: [f32; 8] =
            std::array::from_fn(|j| f[i * 8 + j].abs().sqrt() + xv[2 * j] as f32 + s[j]);
        for j in 0..8 {
            assert_close(fo[i][j], w[j], 1e-6, &format!("float8 {i}.{j}"));
            assert_close(fo[i + 64][j], w[j] * 2.0, 1e-6, &format!("vstore8 {i}.{j}"));
        }
        let want = xv.iter().any(|v| *v < 0) as i32
            + xv.iter().all(|v| *v > -1_000_000) as i32 * 2
            + xv[(kk & 15) as usize] * 4;
        assert_eq!(flags[i], want, "any/all/dynamic extract {i}");
    }
}

const WIDE_TYPES: &str = r#"
__kernel void wide_types(__global const char16 *c, __global uchar16 *o, __global long8 *l,
                         __global long8 *w, __global const int8 *m) {
    size_t i = get_global_id(0);
    int16 wide = convert_int16(c[i]) * 1000;
    o[i] = convert_uchar16_sat(wide);
    l[i] = convert_long8(c[i].lo) << 40;
    w[i] = convert_long8(c[i].hi) * -3;
    int8 s = shuffle(m[i], as_uint8(m[i]));
    o[i] += convert_uchar16(shuffle2(s, s, (uint16)(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)));
    int16 f = vload16(i, (__global const int *)w);
    vstore16(f, i, (__global int *)l);
}
"#;

const WIDE_DOUBLES: &str = r#"
__kernel void wide_doubles(__global const char16 *c, __global double8 *d, __global long8 *l) {
    size_t i = get_global_id(0);
    l[i] = convert_long8(c[i].lo) << 40;
    d[i] = convert_double8(c[i].hi) * 0.5;
    float16 f = vload16(i, (__global const float *)d);
    vstore16(f, i, (__global float *)l);
}
"#;

#[test]
fn wide_vectors_of_narrow_and_64_bit_types() {
    let env = Env::new();
    let mut rng = Rng(32);
    let n = 48usize;
    let c: Vec<[i8; 16]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.next_u32() as i8))
        .collect();
    let m: Vec<[i32; 8]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 1000) as i32 - 500))
        .collect();
    let (mc, mo, ml, mw, mm) = (
        env.buf(&c),
        env.zeros::<[u8; 16]>(n),
        env.zeros::<[i64; 8]>(n),
        env.zeros::<[i64; 8]>(n),
        env.buf(&m),
    );
    let k = env.kern(WIDE_TYPES, "wide_types");
    for (idx, b) in [mc, mo, ml, mw, mm].iter().enumerate() {
        arg_mem(k, idx as u32, *b);
    }
    env.run(k, &[n], None, None);
    let o: Vec<[u8; 16]> = env.read(mo, n);
    let l: Vec<[i64; 8]> = env.read(ml, n);
    let w: Vec<[i64; 8]> = env.read(mw, n);
    for i in 0..n {
        let s: [i32; 8] = std::array::from_fn(|j| m[i][(m[i][j] & 7) as usize]);
        let want: [u8; 16] = std::array::from_fn(|j| {
            let sat = (c[i][j] as i32 * 1000).clamp(0, 255) as u8;
            sat.wrapping_add(s[(15 - j) & 7] as u8)
        });
        assert_eq!(o[i], want, "uchar16 {i}");
        let ww: [i64; 8] = std::array::from_fn(|j| c[i][8 + j] as i64 * -3);
        assert_eq!(w[i], ww, "long8 {i}");
        assert_eq!(l[i], ww, "long8 overwritten by vstore16 {i}");
    }

    // double8: computed where the device reports cl_khr_fp64, a build error elsewhere.
    let Some(p) = build_doubles(&env, WIDE_DOUBLES, "") else {
        return;
    };
    let (md, ml) = (env.zeros::<[f64; 8]>(n), env.zeros::<[i64; 8]>(n));
    let k = env.kernel(p, "wide_doubles");
    for (idx, b) in [mc, md, ml].iter().enumerate() {
        arg_mem(k, idx as u32, *b);
    }
    env.run(k, &[n], None, None);
    let d: Vec<[f64; 8]> = env.read(md, n);
    let l: Vec<[i64; 8]> = env.read(ml, n);
    for i in 0..n {
        let dw: [f64; 8] = std::array::from_fn(|j| c[i][8 + j] as f64 * 0.5);
        assert_eq!(d[i], dw, "double8 {i}");
        let lw: [i64; 8] = std::array::from_fn(|j| dw[j].to_bits() as i64);
        assert_eq!(l[i], lw, "long8 overwritten by vstore16 {i}");
    }
}

const HALVES: &str = r#"
__kernel void halves(__global const float *in, __global half *h, __global float *out,
                     __global half *h4) {
    size_t i = get_global_id(0);
    vstore_half(in[i], i, h);
    out[i * 2] = vload_half(i, (__global const half *)h);
    float4 v = (float4)(in[i], -in[i], in[i] * 2.0f, 0.5f);
    vstore_half4(v, i, h4);
    float4 w = vload_half4(i, (__global const half *)h4);
    out[i * 2 + 1] = w.x + w.y + w.z + w.w;
}
"#;

#[test]
fn half_loads_and_stores() {
    let env = Env::new();
    let n = 256usize;
    // Values exactly representable in half, so the round trip is exact.
    let input: Vec<f32> = (0..n).map(|i| (i as f32 - 128.0) * 0.25).collect();
    let (mi, mh, mo, mh4) = (
        env.buf(&input),
        env.zeros::<u16>(n),
        env.zeros::<f32>(n * 2),
        env.zeros::<u16>(n * 4),
    );
    let k = env.kern(HALVES, "halves");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mh);
    arg_mem(k, 2, mo);
    arg_mem(k, 3, mh4);
    env.run(k, &[n], None, None);
    let (h, out): (Vec<u16>, Vec<f32>) = (env.read(mh, n), env.read(mo, n * 2));
    for i in 0..n {
        let x = input[i];
        // IEEE half: sign, 5-bit exponent (bias 15), 10-bit mantissa.
        let bits = h[i];
        let mag = if bits & 0x7fff == 0 {
            0.0
        } else {
            let e = ((bits >> 10) & 31) as i32 - 15;
            (1.0 + (bits & 1023) as f32 / 1024.0) * 2f32.powi(e)
        };
        let v = if bits & 0x8000 != 0 { -mag } else { mag };
        assert_eq!(v, x, "vstore_half({x}) = {bits:#06x}");
        assert_eq!(out[i * 2], x, "vload_half {i}");
        assert_eq!(out[i * 2 + 1], x * 2.0 + 0.5, "vload_half4 {i}");
    }
}

const PI_AND_BITS: &str = r#"
__kernel void pi_and_bits(__global const float *x, __global float *y, __global int *e) {
    size_t i = get_global_id(0);
    float a = x[i];
    __global float *o = y + i * 9;
    o[0] = sinpi(a);
    o[1] = cospi(a);
    o[2] = tanpi(a * 0.2f);
    o[3] = asinpi(a * 0.1f);
    o[4] = acospi(a * 0.1f);
    o[5] = atanpi(a) + atan2pi(a, 2.0f);
    o[6] = logb(a);
    o[7] = nextafter(a, 0.0f);
    o[8] = nextafter(a, INFINITY);
    e[i] = ilogb(a);
}
"#;

#[test]
fn pi_functions_logb_nextafter() {
    let env = Env::new();
    let mut rng = Rng(33);
    let mut x = random_f32(&mut rng, 200, -9.0, 9.0);
    x.extend([0.0, 1.0, -1.0, 0.5, 2.0, 1024.0, 3.0e-3, -7.5]);
    let n = x.len();
    let (mx, my, me) = (env.buf(&x), env.zeros::<f32>(n * 9), env.zeros::<i32>(n));
    let k = env.kern(PI_AND_BITS, "pi_and_bits");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    arg_mem(k, 2, me);
    env.run(k, &[n], None, None);
    let (y, e): (Vec<f32>, Vec<i32>) = (env.read(my, n * 9), env.read(me, n));
    let pi = std::f64::consts::PI;
    for i in 0..n {
        let a = x[i];
        let ad = a as f64;
        let o = &y[i * 9..i * 9 + 9];
        // lavapipe's GLSL asin/acos/atan are good to about 5e-4 only (OpenCL asks for a few
        // ulp: precise versions are future work).
        let close_to = |got: f32, want: f64, tol: f64, what: &str| {
            if want.is_nan() {
                assert!(got.is_nan(), "{what}({a}): {got}, want NaN");
                return;
            }
            assert!(
                (got as f64 - want).abs() <= tol * want.abs().max(1.0),
                "{what}({a}): {got} vs {want}"
            )
        };
        let abs_close = |got: f32, want: f64, what: &str| close_to(got, want, 2e-5, what);
        abs_close(o[0], (pi * ad).sin(), "sinpi");
        abs_close(o[1], (pi * ad).cos(), "cospi");
        let tp = (pi * (a * 0.2) as f64).tan();
        if tp.abs() < 100.0 {
            abs_close(o[2], tp, "tanpi");
        }
        let tenth = (a * 0.1) as f64;
        close_to(o[3], tenth.asin() / pi, 1e-3, "asinpi");
        close_to(o[4], tenth.acos() / pi, 1e-3, "acospi");
        close_to(
            o[5],
            ad.atan() / pi + ad.atan2(2.0) / pi,
            1e-3,
            "atanpi + atan2pi",
        );
        if a == 0.0 {
            assert_eq!(o[6], f32::NEG_INFINITY, "logb(0)");
            assert_eq!(e[i], i32::MIN, "ilogb(0)");
            assert_eq!(o[7], 0.0, "nextafter(0, 0)");
        } else {
            let lb = a.abs().log2().floor();
            assert_eq!(o[6], lb, "logb({a})");
            assert_eq!(e[i], lb as i32, "ilogb({a})");
            let toward0 = f32::from_bits(a.to_bits() - 1);
            assert_eq!(o[7], toward0, "nextafter({a}, 0)");
            let up = if a > 0.0 {
                f32::from_bits(a.to_bits() + 1)
            } else {
                f32::from_bits(a.to_bits() - 1)
            };
            assert_eq!(o[8], up, "nextafter({a}, inf)");
        }
    }
}

#[test]
fn select_fixture_and_vector_loads_fixture() {
    let env = Env::new();
    let mut rng = Rng(34);
    let p = env.build(MATH);
    let n = 128usize;
    let a: Vec<[i32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 100) as i32 - 50))
        .collect();
    let b: Vec<[i32; 4]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 100) as i32 - 50))
        .collect();
    let f = random_f32(&mut rng, n, -1.0, 1.0);
    let (ma, mb, mc, mf) = (
        env.buf(&a),
        env.buf(&b),
        env.zeros::<[i32; 4]>(n),
        env.buf(&f),
    );
    let k = env.kernel(p, "selects");
    for (i, m) in [ma, mb, mc, mf].iter().enumerate() {
        arg_mem(k, i as u32, *m);
    }
    env.run(k, &[n], None, None);
    let (c, gf): (Vec<[i32; 4]>, Vec<f32>) = (env.read(mc, n), env.read(mf, n));
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let fixed = [y[0], x[1], y[2], x[3]];
        let want: [i32; 4] = std::array::from_fn(|j| {
            let lt = if x[j] < y[j] { y[j] } else { x[j] };
            let gt = if x[j] > y[j] { x[j] } else { y[j] };
            lt + fixed[j] + gt
        });
        assert_eq!(c[i], want, "selects {i}");
        let want = if i & 1 == 1 { 2.0 } else { 1.0 } + if f[i] > 0.0 { 1.0 } else { 0.0 };
        assert_eq!(gf[i], want, "scalar select {i}");
    }

    // vector_loads writes overlapping ranges from neighbouring items: run one work-item.
    let input: Vec<f32> = (0..16).map(|v| v as f32 * 1.5).collect();
    let ints: Vec<i32> = (0..8).map(|v| v * 7 - 3).collect();
    let (mi, mo, mii, mio) = (
        env.buf(&input),
        env.buf(&[-1.0f32; 16]),
        env.buf(&ints),
        env.zeros::<i32>(8),
    );
    let k = env.kernel(p, "vector_loads");
    for (i, m) in [mi, mo, mii, mio].iter().enumerate() {
        arg_mem(k, i as u32, *m);
    }
    env.run(k, &[1], None, None);
    let (out, io): (Vec<f32>, Vec<i32>) = (env.read(mo, 16), env.read(mio, 8));
    let mut want = [-1.0f32; 16];
    let (va, vb, vc) = (
        [input[0], input[1]],
        [input[1], input[2], input[3]],
        [input[2], input[3], input[4], input[5]],
    );
    let add = [va[0], va[1], vb[0], vb[1]];
    for j in 0..4 {
        want[j] = vc[j] + add[j];
    }
    want[1] = va[0];
    want[2] = va[1];
    want[3..6].copy_from_slice(&vb);
    assert_eq!(out, want.to_vec(), "vector_loads floats");
    assert_eq!(
        &io[..4],
        &[ints[0] * 2, ints[1] * 2, ints[2] * 2, ints[3] * 2],
        "vector_loads ints"
    );
}

#[test]
fn float_math_fixture_within_glsl_precision() {
    let env = Env::new();
    let mut rng = Rng(35);
    let n = 256usize;
    let x = random_f32(&mut rng, n, -3.0, 3.0);
    let (mx, my) = (env.buf(&x), env.zeros::<f32>(n));
    let k = env.kern(MATH, "float_math");
    arg_mem(k, 0, mx);
    arg_mem(k, 1, my);
    env.run(k, &[n], None, None);
    let y: Vec<f32> = env.read(my, n);
    for i in 0..n {
        let a = x[i] as f64;
        let fa = x[i];
        let round_half_away = a.signum() * (a.abs() + 0.5).floor();
        let terms = [
            a.abs().sqrt() + a.min(1.0) + a.max(-1.0) + (a * 2.0 + 3.0),
            a.exp() + (a.abs() + 1.0).ln() + a.sin() + a.cos() + ((fa * 0.1) as f64).tan(),
            a.exp2() + (a.abs() + 1.0).log2() + a.abs().powf(1.5) + 1.0 / (a.abs() + 1.0).sqrt(),
            a.floor()
                + a.ceil()
                + a.trunc()
                + round_half_away
                + (fa.round_ties_even() as f64)
                + (fa % 3.0) as f64,
            a.clamp(-2.0, 2.0)
                + (a + (1.0 - a) * 0.25)
                + if a < 0.5 { 0.0 } else { 1.0 }
                + a.signum(),
            a.sin() + a.exp() + a.abs().sqrt() + a.atan2(2.0) + a.mul_add(a, a),
            10f64.powf((fa * 0.1) as f64) + (a.abs() + 1.0).log10() + a.hypot(2.0) + a / 3.0,
        ];
        let want: f64 = terms.iter().sum();
        assert!(
            (y[i] as f64 - want).abs() <= 2e-3 * want.abs().max(1.0),
            "float_math({a}): {} vs {want}",
            y[i]
        );
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

const ARG_LAYOUT: &str = r#"
__kernel void many_args(__global long *out, char a, long b, char c, float3 d, short e,
                        ulong f, uchar2 g, int h, __global const int *maybe, ushort i) {
    out[0] = a;
    out[1] = b;
    out[2] = c;
    out[3] = (long)(d.x + d.y * 10.0f + d.z * 100.0f);
    out[4] = e;
    out[5] = (long)f;
    out[6] = g.x + g.y * 1000;
    out[7] = h;
    out[8] = maybe ? (long)maybe[1] : -12345;
    out[9] = i;
}
"#;

#[test]
fn argument_block_layout_null_buffers_and_sub_buffers() {
    let env = Env::new();
    let k = env.kern(ARG_LAYOUT, "many_args");
    let out = env.zeros::<i64>(10);
    let f = 0x8123_4567_89ab_cdefu64;
    arg_mem(k, 0, out);
    set_arg(k, 1, &-5i8);
    set_arg(k, 2, &(-(1i64 << 40) - 3));
    set_arg(k, 3, &100i8);
    set_arg(k, 4, &[1.0f32, 2.0, 3.0, 99.0]);
    set_arg(k, 5, &-300i16);
    set_arg(k, 6, &f);
    set_arg(k, 7, &[7u8, 9]);
    set_arg(k, 8, &123456i32);
    let null: cl_mem = null_mut();
    set_arg(k, 9, &null);
    set_arg(k, 10, &65000u16);
    env.run(k, &[1], None, None);
    let want = [
        -5,
        -(1i64 << 40) - 3,
        100,
        321,
        -300,
        f as i64,
        9007,
        123456,
        -12345,
        65000,
    ];
    assert_eq!(env.read::<i64>(out, 10), want.to_vec());

    // A sub-buffer is its parent's address plus the origin.
    let data: Vec<i32> = (0..1024).map(|v| v * 3).collect();
    let parent = env.buf(&data);
    let mut align_bits: cl_uint = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MEM_BASE_ADDR_ALIGN,
            4,
            &mut align_bits as *mut cl_uint as *mut c_void,
            null_mut(),
        )
    });
    let origin = (align_bits as usize / 8).max(4);
    let region = cl_buffer_region { origin, size: 64 };
    let mut err = 0;
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            parent,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const cl_buffer_region as *const c_void,
            &mut err,
        )
    };
    ok(err);
    set_arg(k, 9, &sub);
    env.run(k, &[1], None, None);
    assert_eq!(
        env.read::<i64>(out, 10)[8],
        data[origin / 4 + 1] as i64,
        "maybe[1] through a sub-buffer"
    );
    unsafe { cl!(clReleaseMemObject)(sub) };
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

const PRIVATE_INIT: &str = r#"
__kernel void private_hist(__global const uchar *in, __global int *out, int n) {
    int hist[16] = {0};
    float w[5] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
    size_t g = get_global_id(0);
    for (int k = 0; k < n; k++)
        hist[in[g * n + k] & 15]++;
    float acc = 0.0f;
    for (int b = 0; b < 16; b++)
        acc += (float)hist[b] * w[b % 5];
    for (int b = 0; b < 16; b++)
        out[g * 17 + b] = hist[b];
    out[g * 17 + 16] = (int)(acc * 2.0f);
}
"#;

#[test]
fn private_arrays_with_initializers() {
    let env = Env::new();
    let mut rng = Rng(38);
    let (items, n) = (64usize, 40usize);
    let input: Vec<u8> = (0..items * n).map(|_| rng.next_u32() as u8).collect();
    let (mi, mo) = (env.buf(&input), env.zeros::<i32>(items * 17));
    let k = env.kern(PRIVATE_INIT, "private_hist");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    set_arg(k, 2, &(n as i32));
    env.run(k, &[items], None, None);
    let got: Vec<i32> = env.read(mo, items * 17);
    let w = [0.5f32, 1.5, 2.5, 3.5, 4.5];
    for g in 0..items {
        let mut hist = [0i32; 16];
        for v in &input[g * n..g * n + n] {
            hist[(v & 15) as usize] += 1;
        }
        let acc: f32 = (0..16).map(|b| hist[b] as f32 * w[b % 5]).sum();
        assert_eq!(&got[g * 17..g * 17 + 16], &hist, "histogram {g}");
        assert_eq!(got[g * 17 + 16], (acc * 2.0) as i32, "weights {g}");
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

#[test]
fn known_limitations_fail_the_build_with_a_reason() {
    let env = Env::new();
    let cases = [
        (
            "__kernel void psel(__global int *o, int w) { int a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}; \
             int *p = w ? a : b; o[get_global_id(0)] = p[get_global_id(0) & 3]; }",
            "private or local",
        ),
        (include_str!("../src/compiler/testdata/unsupported.cl"), "pointer_select"),
        (
            "__kernel void pf(__constant char *s) { printf(\"%s\\n\", s); }",
            "must be a constant string",
        ),
    ];
    for (src, reason) in cases {
        let (err, log) = env.try_build(src, "").expect_err(reason);
        assert_eq!(err, CL_BUILD_PROGRAM_FAILURE, "{log}");
        assert!(log.contains(reason), "log should mention `{reason}`: {log}");
    }
}

const WIDE_PRIVATE: &str = r#"
__kernel void wide_private(__global const float8 *in, __global float8 *out, __global int16 *io, int k) {
    float8 acc[3];
    __local int16 tile[16];
    size_t l = get_local_id(0);
    for (int i = 0; i < 3; i++)
        acc[i] = in[get_global_id(0) * 3 + i];
    acc[k % 3] *= 2.0f;
    acc[(k + 1) % 3].s3 = -1.0f;
    out[get_global_id(0)] = acc[0] + acc[1] + acc[2];
    tile[l] = (int16)((int)l) + (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    barrier(CLK_LOCAL_MEM_FENCE);
    io[get_global_id(0)] = tile[15 - l];
}
"#;

#[test]
fn wide_vectors_in_private_and_local_arrays() {
    let env = Env::new();
    let mut rng = Rng(40);
    let n = 32usize;
    let input: Vec<[f32; 8]> = (0..n * 3)
        .map(|_| std::array::from_fn(|_| (rng.next_u32() % 50) as f32))
        .collect();
    let k = env.kern(WIDE_PRIVATE, "wide_private");
    for kk in [0i32, 1, 5] {
        let (mi, mo, mio) = (
            env.buf(&input),
            env.zeros::<[f32; 8]>(n),
            env.zeros::<[i32; 16]>(n),
        );
        arg_mem(k, 0, mi);
        arg_mem(k, 1, mo);
        arg_mem(k, 2, mio);
        set_arg(k, 3, &kk);
        env.run(k, &[n], Some(&[16]), None);
        let (out, io): (Vec<[f32; 8]>, Vec<[i32; 16]>) = (env.read(mo, n), env.read(mio, n));
        for g in 0..n {
            let mut acc = [input[g * 3], input[g * 3 + 1], input[g * 3 + 2]];
            for v in acc[(kk % 3) as usize].iter_mut() {
                *v *= 2.0;
            }
            acc[((kk + 1) % 3) as usize][3] = -1.0;
            let want: [f32; 8] = std::array::from_fn(|j| acc[0][j] + acc[1][j] + acc[2][j]);
            assert_eq!(out[g], want, "private float8 {g}, k {kk}");
            let l = 15 - g % 16;
            let want: [i32; 16] = std::array::from_fn(|j| (l + j) as i32);
            assert_eq!(io[g], want, "local int16 {g}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Relational built-ins whose SPIR-V instructions are Kernel-only (OpIsFinite, OpIsNormal,
// OpSignBitSet, OpOrdered, OpUnordered, OpLessOrGreater), scalar and vector.

const CLASSIFY: &str = r#"
__kernel void classify(__global const float *x, __global const float *y, __global int *out) {
    size_t i = get_global_id(0);
    float a = x[i], b = y[i];
    __global int *o = out + i * 12;
    o[0] = isfinite(a);
    o[1] = isnormal(a);
    o[2] = signbit(a);
    o[3] = isordered(a, b);
    o[4] = isunordered(a, b);
    o[5] = islessgreater(a, b);
    float4 va = (float4)(a, b, -a, a * 0.5f), vb = (float4)(b, a, b, -b);
    int4 r1 = isnormal(va) + 2 * signbit(va) + 4 * isfinite(va);
    int4 r2 = isordered(va, vb) + 2 * isunordered(va, vb) + 4 * islessgreater(va, vb);
    o[6] = r1.x; o[7] = r1.y; o[8] = r1.w;
    o[9] = r2.x; o[10] = r2.z; o[11] = r2.w;
}
"#;

#[test]
fn relational_classification_builtins() {
    let env = Env::new();
    let k = env.kern(CLASSIFY, "classify");
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -2.5,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::MIN_POSITIVE / 4.0, // subnormal
        -1.0e-40,                // subnormal
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        3.0e38,
        1.0e-30,
    ];
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for &a in &specials {
        for &b in &specials {
            xs.push(a);
            ys.push(b);
        }
    }
    let n = xs.len();
    let (bx, by, bo) = (env.buf(&xs), env.buf(&ys), env.zeros::<i32>(n * 12));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, by);
    arg_mem(k, 2, bo);
    env.run(k, &[n], None, None);
    let got: Vec<i32> = env.read(bo, n * 12);
    // Scalars give 1/0, vector components -1/0.
    let s = |c: bool| c as i32;
    let v = |c: bool| -(c as i32);
    let normal = |x: f32| x.is_normal();
    let ordered = |a: f32, b: f32| !a.is_nan() && !b.is_nan();
    let lg = |a: f32, b: f32| {
        matches!(
            a.partial_cmp(&b),
            Some(std::cmp::Ordering::Less | std::cmp::Ordering::Greater)
        )
    };
    // Without CL_FP_DENORM the device may flush subnormal inputs and results to zero.
    let denorm = single_fp_denorm();
    let want_of = |a: f32, b: f32, flush: bool| {
        let f = |x: f32| if flush { flushed(x) } else { x };
        let (a, b) = (f(a), f(b));
        let half = f(a * 0.5);
        let r1 = |x: f32| v(normal(x)) + 2 * v(x.is_sign_negative()) + 4 * v(x.is_finite());
        let r2 = |x: f32, y: f32| v(ordered(x, y)) + 2 * v(!ordered(x, y)) + 4 * v(lg(x, y));
        [
            s(a.is_finite()),
            s(normal(a)),
            s(a.is_sign_negative()),
            s(ordered(a, b)),
            s(!ordered(a, b)),
            s(lg(a, b)),
            r1(a),
            r1(b),
            r1(half),
            r2(a, b),
            r2(-a, b),
            r2(half, -b),
        ]
    };
    for i in 0..n {
        let (a, b) = (xs[i], ys[i]);
        let got = &got[i * 12..i * 12 + 12];
        let mut want = want_of(a, b, false);
        if got != want && !denorm && got == want_of(a, b, true) {
            continue;
        }
        // The sign of NaN * 0.5 is not defined (IEEE 754 does not carry it through
        // arithmetic; NVIDIA's result is positive): signbit(half) may be either.
        if a.is_nan() && (got[8] - want[8]).abs() == 2 {
            want[8] = got[8];
        }
        assert_eq!(got, &want, "x = {a:e} ({:#x}), y = {b:e}", a.to_bits());
    }
}

const GEOMETRIC: &str = r#"
__kernel void geo(__global const float4 *a, __global const float4 *b, __global float4 *c,
                  __global float *len) {
    size_t i = get_global_id(0);
    c[i] = cross(a[i], b[i]);
    len[i * 4 + 0] = length(a[i]);
    len[i * 4 + 1] = length(a[i].xy);
    len[i * 4 + 2] = distance(a[i].xyz, b[i].xyz);
    len[i * 4 + 3] = distance(a[i].x, b[i].x);
}
"#;

/// `cross` on float4 (w is 0), `length` and `distance` of vectors whose sum of squares
/// overflows or underflows float, against the host in double precision.
#[test]
fn geometric_cross4_and_length_without_overflow() {
    let env = Env::new();
    let k = env.kern(GEOMETRIC, "geo");
    let mut rng = Rng(0x6E0);
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..64 {
        // Magnitudes from 2^-70 (squares underflow) to 2^70 (squares overflow).
        let e = [-70, -40, -5, 0, 5, 40, 64, 70][i % 8];
        let m = 2f32.powi(e);
        let r = |rng: &mut Rng| (rng.next_f32() * 2.0 - 1.0) * m;
        a.push([r(&mut rng), r(&mut rng), r(&mut rng), r(&mut rng)]);
        b.push([r(&mut rng), r(&mut rng), r(&mut rng), r(&mut rng)]);
    }
    let n = a.len();
    let (ba, bb, bc, bl) = (
        env.buf(&a),
        env.buf(&b),
        env.zeros::<[f32; 4]>(n),
        env.zeros::<f32>(n * 4),
    );
    arg_mem(k, 0, ba);
    arg_mem(k, 1, bb);
    arg_mem(k, 2, bc);
    arg_mem(k, 3, bl);
    env.run(k, &[n], None, None);
    let c: Vec<[f32; 4]> = env.read(bc, n);
    let l: Vec<f32> = env.read(bl, n * 4);
    let len = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    for i in 0..n {
        let (x, y) = (a[i].map(f64::from), b[i].map(f64::from));
        let want_c = [
            x[1] * y[2] - x[2] * y[1],
            x[2] * y[0] - x[0] * y[2],
            x[0] * y[1] - x[1] * y[0],
        ];
        let scale = want_c
            .iter()
            .fold(0f64, |m, v| m.max(v.abs()))
            .max(f64::MIN_POSITIVE);
        for d in 0..3 {
            if scale.is_finite() && scale < f32::MAX as f64 && scale > 1e-30 {
                let err = (f64::from(c[i][d]) - want_c[d]).abs() / scale;
                assert!(err < 1e-5, "cross {i}.{d}: {} vs {}", c[i][d], want_c[d]);
            }
        }
        assert_eq!(c[i][3], 0.0, "cross w of {i}");
        let diff: Vec<f64> = (0..3).map(|d| x[d] - y[d]).collect();
        let wants = [len(&x), len(&x[..2]), len(&diff), (x[0] - y[0]).abs()];
        for (j, want) in wants.iter().enumerate() {
            let got = f64::from(l[i * 4 + j]);
            let err = (got - want).abs() / want.max(f64::from(f32::MIN_POSITIVE));
            assert!(err < 4e-7, "length {j} of item {i}: {got:e} vs {want:e}");
        }
    }
}

const ROUND_HYPOT: &str = r#"
__kernel void rh(__global const float *x, __global const float *y, __global float *out) {
    size_t i = get_global_id(0);
    out[i * 3] = round(x[i]);
    out[i * 3 + 1] = hypot(x[i], y[i]);
    float4 v = hypot((float4)(x[i]), (float4)(y[i], 1.0f, -y[i], 0.0f));
    out[i * 3 + 2] = v.z;
}
"#;

/// `round` rounds halfway cases away from zero and keeps the sign of zero; `hypot` neither
/// overflows nor underflows in between and gives +inf for an infinite operand.
#[test]
fn round_half_away_and_hypot_without_overflow() {
    let env = Env::new();
    let k = env.kern(ROUND_HYPOT, "rh");
    let mut xs = vec![
        2.5f32,
        -2.5,
        0.5,
        -0.5,
        -0.3,
        1.5,
        -513.0 - 0.5,
        8388607.5,
        1.0e30,
        3.0e-30,
        f32::INFINITY,
        f32::NAN,
        -0.0,
        2.0e38,
    ];
    let mut ys = vec![
        1.0f32,
        2.0,
        -3.0,
        0.0,
        0.1,
        1.0e20,
        4.0,
        1.0,
        3.0e30,
        4.0e-30,
        f32::NAN,
        1.0,
        -0.0,
        2.0e38,
    ];
    let mut rng = Rng(0x90D);
    for _ in 0..50 {
        xs.push((rng.next_f32() - 0.5) * 2f32.powi((rng.next_u32() % 200) as i32 - 100));
        ys.push((rng.next_f32() - 0.5) * 2f32.powi((rng.next_u32() % 200) as i32 - 100));
    }
    let n = xs.len();
    let (bx, by, bo) = (env.buf(&xs), env.buf(&ys), env.zeros::<f32>(n * 3));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, by);
    arg_mem(k, 2, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n * 3);
    for i in 0..n {
        let (x, y) = (xs[i], ys[i]);
        let r = x.round();
        let g = got[i * 3];
        assert!(
            g.to_bits() == r.to_bits() || (g.is_nan() && r.is_nan()),
            "round({x}) = {g}, want {r}"
        );
        for (j, yy) in [(1, y), (2, -y)] {
            let want = if x.is_infinite() || yy.is_infinite() {
                f32::INFINITY
            } else {
                f64::from(x).hypot(f64::from(yy)) as f32
            };
            let g = got[i * 3 + j];
            if want.is_nan() || want.is_infinite() {
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "hypot({x}, {yy}) = {g}, want {want}"
                );
                continue;
            }
            // FTZ devices may flush results below the smallest normal.
            if want < f32::MIN_POSITIVE {
                assert!(
                    g < f32::MIN_POSITIVE * 2.0,
                    "hypot({x}, {yy}) = {g}, want {want}"
                );
                continue;
            }
            let err = (f64::from(g) - f64::from(want)).abs() / f64::from(want);
            assert!(err < 5e-7, "hypot({x}, {yy}) = {g:e}, want {want:e}");
        }
    }
}

const INVERSE_EDGES: &str = r#"
__kernel void inv(__global const float *x, __global float *out) {
    size_t i = get_global_id(0);
    out[i * 4] = atan(x[i]);
    out[i * 4 + 1] = asinh(x[i]);
    out[i * 4 + 2] = acosh(x[i]);
    out[i * 4 + 3] = atanpi(x[i]);
}
"#;

/// Where lavapipe's GLSL formulas break: atan/atanpi of NaN (NaN, not 0), asinh and acosh of
/// huge values (x*x overflows), asinh of tiny values, acosh below 1 (NaN).
#[test]
fn inverse_trig_and_hyperbolic_edges() {
    let env = Env::new();
    let k = env.kern(INVERSE_EDGES, "inv");
    let xs = [
        f32::NAN,
        2f32.powi(113),
        -2f32.powi(121),
        3.0e30,
        1.0e-10,
        -3.0e-9,
        0.5,
        -7.0,
    ];
    let n = xs.len();
    let (bx, bo) = (env.buf(&xs), env.zeros::<f32>(n * 4));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n * 4);
    for (i, &x) in xs.iter().enumerate() {
        let x64 = f64::from(x);
        let wants = [
            x64.atan(),
            x64.asinh(),
            x64.acosh(),
            x64.atan() / std::f64::consts::PI,
        ];
        for (j, want) in wants.iter().enumerate() {
            let g = f64::from(got[i * 4 + j]);
            // atan itself is GLSL's (its precision near 0 is not what this test is about).
            if (j == 0 || j == 3) && x.abs() < 0.5 {
                continue;
            }
            if want.is_nan() {
                assert!(g.is_nan(), "function {j} of {x:e}: {g:e}, want NaN");
            } else {
                let err = (g - want).abs() / want.abs().max(1e-30);
                assert!(err < 1e-5, "function {j} of {x:e}: {g:e}, want {want:e}");
            }
        }
    }
}

const LOGB: &str = r#"
__kernel void lb(__global const uint *bits, __global int *ie, __global float *fe) {
    size_t i = get_global_id(0);
    float x = as_float(bits[i]);
    ie[i] = ilogb(x);
    fe[i] = logb(x);
}
"#;

/// `ilogb` and `logb` of normal and subnormal floats (a subnormal's exponent is that of its
/// mantissa's top bit), zeros, infinities and NaN, against the host's bit arithmetic.
#[test]
fn ilogb_and_logb_of_subnormals() {
    let env = Env::new();
    let k = env.kern(LOGB, "lb");
    let mut bits: Vec<u32> = vec![
        0x0000_0201,
        0x0000_0001,
        0x007f_ffff,
        0x8000_4000,
        0x0080_0000,
    ];
    bits.extend([1.0f32, -3.5, 1.0e30, 0.0, -0.0, f32::INFINITY, f32::NAN].map(f32::to_bits));
    let mut rng = Rng(0x10B);
    bits.extend((0..40).map(|_| rng.next_u32()));
    let n = bits.len();
    let (bb, bi, bf) = (env.buf(&bits), env.zeros::<i32>(n), env.zeros::<f32>(n));
    arg_mem(k, 0, bb);
    arg_mem(k, 1, bi);
    arg_mem(k, 2, bf);
    env.run(k, &[n], None, None);
    let gi: Vec<i32> = env.read(bi, n);
    let gf: Vec<f32> = env.read(bf, n);
    for (i, &b) in bits.iter().enumerate() {
        let x = f32::from_bits(b);
        let (ef, m) = ((b >> 23) & 0xff, b & 0x7f_ffff);
        let (wi, wf) = if x.is_nan() {
            (i32::MAX, f32::NAN)
        } else if x.is_infinite() {
            (i32::MAX, f32::INFINITY)
        } else if ef == 0 && m == 0 {
            (i32::MIN, f32::NEG_INFINITY)
        } else if ef == 0 {
            let e = 31 - m.leading_zeros() as i32 - 149;
            (e, e as f32)
        } else {
            (ef as i32 - 127, (ef as i32 - 127) as f32)
        };
        // Without CL_FP_DENORM a subnormal may be read as zero.
        let (wi, wf) = if !single_fp_denorm() && x.is_subnormal() && gi[i] == i32::MIN {
            (i32::MIN, f32::NEG_INFINITY)
        } else {
            (wi, wf)
        };
        assert_eq!(gi[i], wi, "ilogb({x:e}, bits {b:#x})");
        assert!(
            gf[i] == wf || (gf[i].is_nan() && wf.is_nan()),
            "logb({x:e}, bits {b:#x}) = {}, want {wf}",
            gf[i]
        );
    }
}

const LDEXP: &str = r#"
__kernel void ld(__global const float *x, __global const int *n, __global float *out) {
    size_t i = get_global_id(0);
    out[i] = ldexp(x[i], n[i]);
}
"#;

/// `ldexp` with exponents far outside the float range (results 0 or infinity) and with
/// results in the subnormal range (rounded once), against the host in double precision.
#[test]
fn ldexp_huge_exponents_and_subnormal_results() {
    let env = Env::new();
    let k = env.kern(LDEXP, "ld");
    let mut rng = Rng(0x1D);
    let mut xs = vec![1.5f32, -1.5, 3.0, 1.0e30, 1.0e-30, f32::MAX, 1.0];
    let mut ns = vec![-148i32, -149, -150, -200, 200, 1, 304732809];
    for _ in 0..200 {
        let x = (rng.next_f32() + 0.5) * 2f32.powi((rng.next_u32() % 200) as i32 - 100);
        xs.push(if rng.next_u32() & 1 == 0 { x } else { -x });
        ns.push((rng.next_u32() % 800) as i32 - 400);
    }
    let n = xs.len();
    let (bx, bn, bo) = (env.buf(&xs), env.buf(&ns), env.zeros::<f32>(n));
    arg_mem(k, 0, bx);
    arg_mem(k, 1, bn);
    arg_mem(k, 2, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n);
    for i in 0..n {
        let e = ns[i].clamp(-1000, 1000);
        let want = (f64::from(xs[i]) * 2f64.powi(e)) as f32;
        let flushed = want.abs() < f32::MIN_POSITIVE && got[i] == 0.0;
        assert!(
            got[i].to_bits() == want.to_bits() || flushed,
            "ldexp({:e}, {}) = {:e}, want {want:e}",
            xs[i],
            ns[i],
            got[i]
        );
    }
}

const MAD_SAT: &str = r#"
__kernel void ms(__global const long *a, __global const long *b, __global const long *c,
                 __global long *out) {
    size_t i = get_global_id(0);
    out[i * 4] = mad_sat(a[i], b[i], c[i]);
    out[i * 4 + 1] = mad_sat((int)a[i], (int)b[i], (int)c[i]);
    out[i * 4 + 2] = mad_sat((char)a[i], (char)b[i], (char)c[i]);
    int2 v = mad_sat((int2)((int)a[i]), (int2)((int)b[i], 1), (int2)((int)c[i]));
    out[i * 4 + 3] = v.x;
}
"#;

/// Signed `mad_sat` (OpenCL.std s_mad_sat) for long, int, char and a vector, including
/// products that overflow but come back into range with `c`, against the host in i128.
#[test]
fn signed_mad_sat() {
    let env = Env::new();
    let k = env.kern(MAD_SAT, "ms");
    let mut rng = Rng(0x5A7);
    let mut a = vec![i64::MAX, i64::MIN, 1i64 << 32, -(1i64 << 32), 3, -128, 127];
    let mut b = vec![2i64, 2, 1 << 31, 1 << 31, -5, -1, 127];
    let mut c = vec![-i64::MAX, i64::MAX, -5, 7, 11, 0, -100];
    for _ in 0..100 {
        let r = |rng: &mut Rng| {
            let v = (u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32())) as i64;
            v >> (rng.next_u32() % 64)
        };
        a.push(r(&mut rng));
        b.push(r(&mut rng));
        c.push(r(&mut rng));
    }
    let n = a.len();
    let (ba, bb, bc, bo) = (
        env.buf(&a),
        env.buf(&b),
        env.buf(&c),
        env.zeros::<i64>(n * 4),
    );
    arg_mem(k, 0, ba);
    arg_mem(k, 1, bb);
    arg_mem(k, 2, bc);
    arg_mem(k, 3, bo);
    env.run(k, &[n], None, None);
    let got: Vec<i64> = env.read(bo, n * 4);
    let sat = |v: i128, lo: i128, hi: i128| v.clamp(lo, hi) as i64;
    for i in 0..n {
        let (x, y, z) = (a[i] as i128, b[i] as i128, c[i] as i128);
        let (xi, yi, zi) = (
            a[i] as i32 as i128,
            b[i] as i32 as i128,
            c[i] as i32 as i128,
        );
        let (xc, yc, zc) = (a[i] as i8 as i128, b[i] as i8 as i128, c[i] as i8 as i128);
        let want = [
            sat(x * y + z, i64::MIN as i128, i64::MAX as i128),
            sat(xi * yi + zi, i32::MIN as i128, i32::MAX as i128),
            sat(xc * yc + zc, -128, 127),
            sat(xi * yi + zi, i32::MIN as i128, i32::MAX as i128),
        ];
        assert_eq!(
            &got[i * 4..i * 4 + 4],
            &want,
            "mad_sat({}, {}, {})",
            a[i],
            b[i],
            c[i]
        );
    }
}

const POW_NAN: &str = r#"
__kernel void pn(__global const float *x, __global const float *y, __global const int *k,
                 __global float *out) {
    size_t i = get_global_id(0);
    out[i * 5] = pow(x[i], y[i]);
    out[i * 5 + 1] = powr(x[i], y[i]);
    out[i * 5 + 2] = pown(x[i], k[i]);
    out[i * 5 + 3] = rootn(x[i], k[i]);
    out[i * 5 + 4] = atan(x[i]);
}
"#;

/// NaN operands of pow, powr, pown, rootn and atan give NaN (lavapipe's GLSL Pow and Atan gave
/// 0), except pow(1, NaN) = 1 and pown(NaN, 0) = 1 (OpenCL C special values).
#[test]
fn pow_family_nan_operands() {
    let env = Env::new();
    let k = env.kern(POW_NAN, "pn");
    let nan = f32::NAN;
    let xs = [nan, nan, 1.0, 2.0, 4.0];
    let ys = [2.0, nan, nan, nan, 0.5];
    let ks = [3i32, 0, 2, 2, 2];
    let n = xs.len();
    let (bx, by, bk, bo) = (
        env.buf(&xs),
        env.buf(&ys),
        env.buf(&ks),
        env.zeros::<f32>(n * 5),
    );
    arg_mem(k, 0, bx);
    arg_mem(k, 1, by);
    arg_mem(k, 2, bk);
    arg_mem(k, 3, bo);
    env.run(k, &[n], None, None);
    let got: Vec<f32> = env.read(bo, n * 5);
    for i in 0..n {
        let (x, y, kk) = (xs[i], ys[i], ks[i]);
        let pow = if x == 1.0 { 1.0 } else { x.powf(y) };
        let powr = if x.is_nan() || y.is_nan() {
            nan
        } else {
            x.powf(y)
        };
        let pown = if kk == 0 { 1.0 } else { x.powi(kk) };
        let rootn = x.powf(1.0 / kk as f32);
        let wants = [pow, powr, pown, rootn, x.atan()];
        for (j, w) in wants.iter().enumerate() {
            let g = got[i * 5 + j];
            assert!(
                (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-5 * w.abs(),
                "function {j} of ({x}, {y}, {kk}): {g}, want {w}"
            );
        }
    }
}

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

/// `fract`, `frexp` and `modf` of `float3` / `double`-free 3-component vectors writing their
/// second result into a private `float3` / `int3` (clang reads and writes those through a
/// 4-component view, whose last word is padding), then stored with `vstore3`; the same for
/// 2- and 4-component vectors. Exact functions, so the host's answers must match bit for bit.
#[test]
fn three_component_pointer_outputs_in_private_memory() {
    let env = Env::new();
    let src = r#"
__kernel void outs3(__global const float *in, __global float *fr, __global float *ip,
                    __global float *mant, __global int *ex, __global float *mf,
                    __global float *mi) {
    size_t i = get_global_id(0);
    float3 x = vload3(i, in);
    float3 iout = NAN;
    int3 e = (int3)(-99);
    float3 mint = NAN;
    vstore3(fract(x, &iout), i, fr);
    vstore3(iout, i, ip);
    vstore3(frexp(x, &e), i, mant);
    vstore3(e, i, ex);
    vstore3(modf(x, &mint), i, mf);
    vstore3(mint, i, mi);
}

__kernel void outs2(__global const float *in, __global float *fr, __global float *ip) {
    size_t i = get_global_id(0);
    float2 iout;
    vstore2(fract(vload2(i, in), &iout), i, fr);
    vstore2(iout, i, ip);
}
"#;
    let p = env.build(src);
    let mut rng = Rng(0x3c0);
    let n = 64usize;
    let mut x = random_f32(&mut rng, n * 3, -1000.0, 1000.0);
    x[..6].copy_from_slice(&[0.0, -0.0, 1.0, -1.0, 0.75, -2.5]);
    let bx = env.buf(&x);
    let bufs: Vec<cl_mem> = (0..6).map(|_| env.zeros::<f32>(n * 3)).collect();
    let k = env.kernel(p, "outs3");
    arg_mem(k, 0, bx);
    for (j, b) in bufs.iter().enumerate() {
        arg_mem(k, j as u32 + 1, *b);
    }
    env.run(k, &[n], None, None);
    let r: Vec<Vec<f32>> = bufs.iter().map(|b| env.read::<f32>(*b, n * 3)).collect();
    let ex: Vec<i32> = env.read(bufs[3], n * 3);
    for (i, &v) in x.iter().enumerate() {
        let fl = v.floor();
        // OpenCL C's fract(±0) is ±0 (x - floor(x) would give +0 for -0).
        let want = if v == 0.0 {
            v
        } else {
            (v - fl).min(1.0 - f32::EPSILON / 2.0)
        };
        assert_eq!(r[0][i].to_bits(), want.to_bits(), "fract({v})");
        assert_eq!(r[1][i].to_bits(), fl.to_bits(), "fract({v}) integer part");
        if v == 0.0 {
            assert_eq!((r[2][i].to_bits(), ex[i]), (v.to_bits(), 0), "frexp({v})");
        } else {
            let (m, e) = (r[2][i], ex[i]);
            assert!((0.5..1.0).contains(&m.abs()), "frexp({v}) mantissa {m}");
            assert_eq!(
                m as f64 * 2f64.powi(e),
                v as f64,
                "frexp({v}) = {m} * 2^{e}"
            );
        }
        let t = v.trunc();
        let frac = if v.is_infinite() {
            0.0f32.copysign(v)
        } else {
            (v - t).copysign(v)
        };
        assert_eq!(r[4][i].to_bits(), frac.to_bits(), "modf({v})");
        assert_eq!(r[5][i].to_bits(), t.to_bits(), "modf({v}) integer part");
    }
    let k2 = env.kernel(p, "outs2");
    arg_mem(k2, 0, bx);
    arg_mem(k2, 1, bufs[0]);
    arg_mem(k2, 2, bufs[1]);
    env.run(k2, &[n], None, None);
    let (f2, i2): (Vec<f32>, Vec<f32>) = (env.read(bufs[0], n * 2), env.read(bufs[1], n * 2));
    for i in 0..n * 2 {
        let want = if x[i] == 0.0 {
            x[i]
        } else {
            (x[i] - x[i].floor()).min(1.0 - f32::EPSILON / 2.0)
        };
        assert_eq!(f2[i].to_bits(), want.to_bits(), "fract({})", x[i]);
        assert_eq!(i2[i].to_bits(), x[i].floor().to_bits());
    }
    unsafe {
        for b in bufs.into_iter().chain([bx]) {
            cl!(clReleaseMemObject)(b);
        }
        cl!(clReleaseKernel)(k);
        cl!(clReleaseKernel)(k2);
    }
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

/// `convert_float_rtp/rtn/rtz` of `int`, `uint`, `long` and `ulong` (scalar, 4 and 8
/// components): the conversion itself rounds to nearest, the directed modes are made from it
/// (CTS conversions `convert_floatn_rtp(uintn)` and friends). Host: round to nearest, then one
/// step towards the mode when that passed the exact value (compared in i128).
#[test]
fn int_to_float_with_directed_rounding() {
    let env = Env::new();
    let types = [
        ("int", true),
        ("uint", false),
        ("long", true),
        ("ulong", false),
    ];
    let mut src = String::new();
    for (t, _) in types {
        for m in ["rtp", "rtn", "rtz"] {
            src += &format!(
                "__kernel void {t}_{m}(__global const {t} *x, __global float *a,\n\
                                      __global float *b, __global float *c) {{\n\
                     size_t i = get_global_id(0);\n\
                     a[i] = convert_float_{m}(x[i]);\n\
                     vstore4(convert_float4_{m}(vload4(i, x)), i, b);\n\
                     vstore8(convert_float8_{m}(vload8(i, x)), i, c);\n\
                 }}\n"
            );
        }
    }
    let p = env.build(&src);
    let mut rng = Rng(0xf10a);
    let n = 64usize;
    let bits: Vec<u32> = (0..n * 8)
        .map(|k| match k % 4 {
            0 => rng.next_u32(),
            1 => 0x8000_0000u32
                .wrapping_add(rng.next_u32() % 16)
                .wrapping_sub(8),
            2 => 0xffff_ff00 | (rng.next_u32() & 0xff),
            _ => rng.next_u32() >> (rng.next_u32() % 32),
        })
        .collect();
    let wide: Vec<u64> = (0..n * 8)
        .map(|k| {
            let r = ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64;
            match k % 4 {
                0 => r,
                1 => (1u64 << 63).wrapping_add(r % 16).wrapping_sub(8),
                2 => u64::MAX - (r & 0xff),
                _ => r >> (r % 64),
            }
        })
        .collect();
    let step = |f: f32, up: bool| -> f32 {
        let b = f.to_bits();
        f32::from_bits(if (f > 0.0) == up { b + 1 } else { b - 1 })
    };
    let (xb, xw) = (env.buf(&bits), env.buf(&wide));
    for (t, signed) in types {
        for m in ["rtp", "rtn", "rtz"] {
            let name = format!("{t}_{m}");
            let k = env.kernel(p, &name);
            let outs = [
                env.zeros::<f32>(n),
                env.zeros::<f32>(n * 4),
                env.zeros::<f32>(n * 8),
            ];
            arg_mem(k, 0, if t.contains("long") { xw } else { xb });
            for (j, o) in outs.iter().enumerate() {
                arg_mem(k, j as u32 + 1, *o);
            }
            env.run(k, &[n], None, None);
            for (j, len) in [n, n * 4, n * 8].into_iter().enumerate() {
                let got: Vec<f32> = env.read(outs[j], len);
                for i in 0..len {
                    let (x, near): (i128, f32) = match (t, signed) {
                        ("int", _) => (bits[i] as i32 as i128, bits[i] as i32 as f32),
                        ("uint", _) => (bits[i] as i128, bits[i] as f32),
                        (_, true) => (wide[i] as i64 as i128, wide[i] as i64 as f32),
                        _ => (wide[i] as i128, wide[i] as f32),
                    };
                    let nearx = near as f64 as i128;
                    let want = match m {
                        "rtp" if nearx < x => step(near, true),
                        "rtn" if nearx > x => step(near, false),
                        "rtz" if nearx.abs() > x.abs() => step(near, near < 0.0),
                        _ => near,
                    };
                    assert_eq!(got[i], want, "{name} width {len}: {x}");
                }
            }
            unsafe {
                for o in outs {
                    cl!(clReleaseMemObject)(o);
                }
                cl!(clReleaseKernel)(k);
            }
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(xb);
        cl!(clReleaseMemObject)(xw);
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

const NON_UNIFORM_IDS: &str = r#"
__kernel void ids(__global uint *out) {
    size_t i = get_global_id(0);
    out[i] = (uint)(i * 1000 + get_local_size(0) * 10 + get_group_id(0));
}
"#;

/// OpenCL 3.0 5.10, clEnqueueNDRangeKernel: a program from source supports non-uniform
/// work-groups only when built with -cl-std=CL2.0 or CL3.0 and without
/// -cl-uniform-work-group-size. Global 10, local 4: CL_INVALID_WORK_GROUP_SIZE for OpenCL C
/// 1.2 (no -cl-std, and -cl-std=CL1.2) and for CL3.0 with -cl-uniform-work-group-size; with
/// CL3.0 alone it runs groups of 4, 4 and 2, checked against the host. A linked program
/// supports them when its compiled inputs do; a uniform range runs in every case.
#[test]
fn non_uniform_work_groups_need_cl_std_2_or_later() {
    let env = Env::new();
    let run = |k: cl_kernel| {
        let out = env.zeros::<u32>(10);
        arg_mem(k, 0, out);
        let r = env.try_run(k, &[10], Some(&[4]), None);
        let got: Vec<u32> = env.read(out, 10);
        // A uniform range is fine whatever the options.
        let uni = env.zeros::<u32>(8);
        arg_mem(k, 0, uni);
        assert_eq!(env.try_run(k, &[8], Some(&[4]), None), CL_SUCCESS);
        let want: Vec<u32> = (0..8).map(|i| i * 1000 + 40 + i / 4).collect();
        assert_eq!(env.read::<u32>(uni, 8), want);
        unsafe {
            cl!(clReleaseMemObject)(out);
            cl!(clReleaseMemObject)(uni);
        }
        (r, got)
    };
    for opts in [
        "",
        "-cl-std=CL1.2",
        "-cl-std=CL3.0 -cl-uniform-work-group-size",
    ] {
        let k = env.kern_opts(NON_UNIFORM_IDS, opts, "ids");
        let (r, got) = run(k);
        assert_eq!(r, CL_INVALID_WORK_GROUP_SIZE, "options {opts:?}");
        assert_eq!(got, vec![0; 10], "nothing ran with options {opts:?}");
        unsafe { cl!(clReleaseKernel)(k) };
    }
    let k = env.kern_opts(NON_UNIFORM_IDS, "-cl-std=CL3.0", "ids");
    let (r, got) = run(k);
    assert_eq!(r, CL_SUCCESS);
    let want: Vec<u32> = (0..10u32)
        .map(|i| i * 1000 + if i < 8 { 40 } else { 20 } + i / 4)
        .collect();
    assert_eq!(got, want);
    unsafe { cl!(clReleaseKernel)(k) };

    // clCompileProgram + clLinkProgram: the compile options decide.
    for (opts, allowed) in [("-cl-std=CL3.0", true), ("", false)] {
        let src = std::ffi::CString::new(NON_UNIFORM_IDS).unwrap();
        let ptrs = [src.as_ptr()];
        let mut err = 0;
        let obj = unsafe {
            cl!(clCreateProgramWithSource)(
                env.context,
                1,
                ptrs.as_ptr() as *mut *const std::ffi::c_char,
                null(),
                &mut err,
            )
        };
        ok(err);
        let copts = std::ffi::CString::new(opts).unwrap();
        ok(unsafe {
            cl!(clCompileProgram)(
                obj,
                1,
                &env.device,
                copts.as_ptr(),
                0,
                null(),
                null_mut(),
                None,
                null_mut(),
            )
        });
        let linked = unsafe {
            cl!(clLinkProgram)(
                env.context,
                1,
                &env.device,
                null(),
                1,
                &obj,
                None,
                null_mut(),
                &mut err,
            )
        };
        ok(err);
        let k = env.kernel(linked, "ids");
        let (r, got) = run(k);
        if allowed {
            assert_eq!(r, CL_SUCCESS, "linked from {opts:?}");
            assert_eq!(got, want);
        } else {
            assert_eq!(r, CL_INVALID_WORK_GROUP_SIZE, "linked from {opts:?}");
        }
        unsafe {
            cl!(clReleaseKernel)(k);
            cl!(clReleaseProgram)(linked);
            cl!(clReleaseProgram)(obj);
        }
    }
}
