//! Kernel basics: vector addition, arguments, work-item functions, grid sizes, private
//! arrays and `__constant` data.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::kernels::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

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
    check_workitems(&[96], &[16], &[0]);
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

const WORKITEM30: &str = include_str!("../src/compiler/testdata/workitem30.cl");

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

/// One kernel launched with zero and non-zero global offsets in turn, uniform and
/// non-uniform: the pipelines specialized for a zero offset (no `global_offset` load) and
/// those that read it alternate, and every launch sees its own offset and sizes.
#[test]
fn zero_and_nonzero_offsets_alternate() {
    let env = Env::new();
    let k = env.kern_opts(IDS, "-cl-std=CL3.0", "ids");
    for (global, local, offset) in [
        (256usize, 64usize, 0usize),
        (256, 64, 7),
        (256, 64, 0),
        (250, 64, 1000),
        (250, 64, 0),
        (250, 64, 3),
    ] {
        let (mg, mp, mi) = (
            env.zeros::<u32>(global),
            env.zeros::<u32>(global),
            env.zeros::<u32>(2),
        );
        arg_mem(k, 0, mg);
        arg_mem(k, 1, mp);
        arg_mem(k, 2, mi);
        env.run(k, &[global], Some(&[local]), Some(&[offset]));
        let gid: Vec<u32> = env.read(mg, global);
        let grp: Vec<u32> = env.read(mp, global);
        for i in 0..global {
            assert_eq!(
                gid[i] as usize,
                i + offset,
                "global id {i}, offset {offset}"
            );
            assert_eq!(
                grp[i] as usize,
                (i / local) * 1024 + i % local,
                "group/local id {i}, offset {offset}"
            );
        }
        assert_eq!(
            env.read::<u32>(mi, 2),
            vec![global.div_ceil(local) as u32, local as u32],
            "offset {offset}"
        );
        unsafe {
            for m in [mg, mp, mi] {
                cl!(clReleaseMemObject)(m);
            }
        }
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
