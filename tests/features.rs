//! OpenCL C 3.0 optional features (`CL_DEVICE_OPENCL_C_FEATURES`): each one vkcl reports is
//! used by a kernel whose results are compared with answers computed on the host, and the
//! report itself is checked against the predefined macros programs see.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

const COLLECTIVE: &str = include_str!("../src/compiler/testdata/collective.cl");

/// `CL_DEVICE_OPENCL_C_FEATURES` names.
fn features(d: cl_device_id) -> Vec<String> {
    let mut n = 0;
    ok(unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_OPENCL_C_FEATURES, 0, null_mut(), &mut n) });
    let count = n / std::mem::size_of::<cl_name_version>();
    let mut v: Vec<cl_name_version> = Vec::with_capacity(count);
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_OPENCL_C_FEATURES,
            n,
            v.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    // SAFETY: the query wrote `count` elements.
    unsafe { v.set_len(count) };
    v.iter()
        .map(|nv| {
            let name: Vec<u8> = nv
                .name
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            // OpenCL C 3.0's features are at 3.0.0; those an extension adds carry the
            // extension's version (cl_khr_integer_dot_product 2.0.0).
            let want = if name.starts_with(b"__opencl_c_integer_dot_product") {
                2 << 22
            } else {
                3 << 22
            };
            assert_eq!(nv.version, want, "{:?}", String::from_utf8_lossy(&name));
            String::from_utf8(name).unwrap()
        })
        .collect()
}

fn device_scalar<T: Copy + Default>(d: cl_device_id, q: cl_device_info) -> T {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, q, s, v, r) })
}

/// Every optional feature of OpenCL C 3.0 (section 6.2.1) vkcl could report.
const ALL_FEATURES: &[&str] = &[
    "__opencl_c_3d_image_writes",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_device_enqueue",
    "__opencl_c_generic_address_space",
    "__opencl_c_fp64",
    "__opencl_c_images",
    "__opencl_c_int64",
    "__opencl_c_pipes",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_read_write_images",
    "__opencl_c_subgroups",
    "__opencl_c_work_group_collective_functions",
];

#[test]
fn reported_features_are_those_that_work_and_programs_see_them() {
    let env = Env::new();
    let got = features(env.device);
    // What vkcl implements on every Vulkan device it runs on (each is exercised below or in
    // tests/kernels_*.rs), plus fp64 exactly when cl_khr_fp64 is offered.
    let mut want = vec![
        "__opencl_c_int64",
        "__opencl_c_atomic_order_acq_rel",
        "__opencl_c_atomic_order_seq_cst",
        "__opencl_c_atomic_scope_device",
        "__opencl_c_atomic_scope_all_devices",
        "__opencl_c_program_scope_global_variables",
    ];
    let collectives: cl_bool = device_scalar(
        env.device,
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
    );
    if collectives == CL_TRUE {
        want.push("__opencl_c_work_group_collective_functions");
    }
    if env.has_extension("cl_khr_fp64") {
        want.push("__opencl_c_fp64");
    }
    if env.has_extension("cl_khr_integer_dot_product") {
        want.push("__opencl_c_integer_dot_product_input_4x8bit");
        want.push("__opencl_c_integer_dot_product_input_4x8bit_packed");
    }
    let max_sgs: cl_uint = device_scalar(env.device, CL_DEVICE_MAX_NUM_SUB_GROUPS);
    if max_sgs > 0 {
        want.push("__opencl_c_subgroups");
    }
    // cl_khr_subgroups needs independent forward progress, which vkcl does not claim.
    let ifp: cl_bool = device_scalar(env.device, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS);
    assert_eq!(ifp, CL_FALSE);
    assert!(!env.has_extension("cl_khr_subgroups"));
    let mut got_sorted = got.clone();
    got_sorted.sort();
    want.sort();
    assert_eq!(got_sorted, want);

    // The capability queries agree with the features (OpenCL 3.0 section 4.2).
    let mem: cl_device_atomic_capabilities =
        device_scalar(env.device, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES);
    let fence: cl_device_atomic_capabilities =
        device_scalar(env.device, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES);
    for (f, bit) in [
        (
            "__opencl_c_atomic_order_acq_rel",
            CL_DEVICE_ATOMIC_ORDER_ACQ_REL,
        ),
        (
            "__opencl_c_atomic_order_seq_cst",
            CL_DEVICE_ATOMIC_ORDER_SEQ_CST,
        ),
        (
            "__opencl_c_atomic_scope_device",
            CL_DEVICE_ATOMIC_SCOPE_DEVICE,
        ),
        (
            "__opencl_c_atomic_scope_all_devices",
            CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES,
        ),
    ] {
        let bit = bit as cl_device_atomic_capabilities;
        assert_eq!(got.iter().any(|g| g == f), mem & bit != 0, "{f}");
        assert_eq!(fence & mem, mem, "fences cover the memory capabilities");
    }

    // Programs compiled for OpenCL C 3.0 see exactly the reported features as macros.
    let mut src = String::from("kernel void k(global int *out) {\n");
    for (i, f) in ALL_FEATURES.iter().enumerate() {
        src.push_str(&format!(
            "#ifdef {f}\n  out[{i}] = 1;\n#else\n  out[{i}] = 0;\n#endif\n"
        ));
    }
    src.push_str("}\n");
    let p = env
        .try_build(&src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "k");
    let out = env.buffer(CL_MEM_READ_WRITE, 4 * ALL_FEATURES.len(), None);
    set_arg(k, 0, &out);
    run(&env, k, &[1], None);
    let seen: Vec<i32> = env.read(out, ALL_FEATURES.len());
    for (f, s) in ALL_FEATURES.iter().zip(seen) {
        assert_eq!(s == 1, got.iter().any(|g| g == f), "macro {f}");
    }
    unsafe {
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseKernel)(k);
        cl!(clReleaseProgram)(p);
    }
}

/// Enqueues `k` over `global` with `local` and waits.
fn run(env: &Env, k: cl_kernel, global: &[usize], local: Option<&[usize]>) {
    env.run(k, global, local, None);
}

/// Host answers of `collective.cl` for one group's inputs: 11 values per work-item.
fn host_collectives<T: Copy>(
    xs: &[T],
    zero: T,
    min_id: T,
    max_id: T,
    add: impl Fn(T, T) -> T,
    lt: impl Fn(T, T) -> bool,
    eq: impl Fn(T, u8) -> bool,
    from_int: impl Fn(i64) -> T,
) -> Vec<T> {
    let min = |a: T, b: T| if lt(b, a) { b } else { a };
    let max = |a: T, b: T| if lt(a, b) { b } else { a };
    let fold = |n: usize, f: &dyn Fn(T, T) -> T, id: T| xs[..n].iter().fold(id, |a, &b| f(a, b));
    let n = xs.len();
    let all = xs.iter().all(|&x| !eq(x, 3));
    let any = xs.iter().any(|&x| eq(x, 5));
    let mut out = Vec::new();
    for (i, _) in xs.iter().enumerate() {
        out.extend([
            fold(n, &add, zero),
            fold(n, &min, max_id),
            fold(n, &max, min_id),
            fold(i + 1, &add, zero),
            fold(i + 1, &min, max_id),
            fold(i + 1, &max, min_id),
            fold(i, &add, zero),
            fold(i, &min, max_id),
            fold(i, &max, min_id),
            xs[n - 1],
            from_int(all as i64 * 2 + any as i64),
        ]);
    }
    out
}

/// Runs kernel `name` of `collective.cl` over `global` items in groups of `local` (the last
/// group smaller where `local` does not divide `global`) and checks every output.
fn check_collective<T: Copy + Default + PartialEq + std::fmt::Debug>(
    env: &Env,
    p: cl_program,
    name: &str,
    xs: &[T],
    local: usize,
    host: impl Fn(&[T]) -> Vec<T>,
    close: impl Fn(T, T) -> bool,
) {
    let k = env.kernel(p, name);
    let input = env.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        std::mem::size_of_val(xs),
        Some(bytes(xs)),
    );
    let out = env.buffer(CL_MEM_READ_WRITE, std::mem::size_of_val(xs) * 11, None);
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    run(env, k, &[xs.len()], Some(&[local]));
    let got: Vec<T> = env.read(out, xs.len() * 11);
    let want: Vec<T> = xs.chunks(local).flat_map(&host).collect();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            close(*g, *w),
            "{name}: work-item {} output {}: got {g:?}, want {w:?}",
            i / 11,
            i % 11
        );
    }
    unsafe {
        cl!(clReleaseMemObject)(input);
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseKernel)(k);
    }
}

#[test]
fn work_group_collective_functions_match_the_host() {
    let env = Env::new();
    let supported: cl_bool = device_scalar(
        env.device,
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
    );
    if supported != CL_TRUE {
        // Without the feature the functions do not exist: the program must not build.
        assert!(env.try_build(COLLECTIVE, "-cl-std=CL3.0").is_err());
        return;
    }
    let p = env
        .try_build(COLLECTIVE, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let mut rng = Rng(0x5eed_c011);
    // 200 items in groups of 64: three full groups and one of 8 (non-uniform).
    let n = 200;
    let ints: Vec<i32> = (0..n)
        .map(|_| (rng.next_u32() % 2001) as i32 - 1000)
        .collect();
    let mut small = ints.clone();
    small[70] = 3; // group 1: work_group_all false
    small[5] = 5; // group 0: work_group_any true
    for local in [64, 1, 200] {
        check_collective(
            &env,
            p,
            "coll_int",
            &small,
            local,
            |xs| {
                host_collectives(
                    xs,
                    0i32,
                    i32::MIN,
                    i32::MAX,
                    i32::wrapping_add,
                    |a, b| a < b,
                    |x, c| x == c as i32,
                    |v| v as i32,
                )
            },
            |a, b| a == b,
        );
    }
    let uints: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    check_collective(
        &env,
        p,
        "coll_uint",
        &uints,
        64,
        |xs| {
            host_collectives(
                xs,
                0u32,
                0,
                u32::MAX,
                u32::wrapping_add,
                |a, b| a < b,
                |x, c| x == c as u32,
                |v| v as u32,
            )
        },
        |a, b| a == b,
    );
    let longs: Vec<i64> = (0..n)
        .map(|_| ((rng.next_u32() as i64) << 31) - (1 << 62) + 5)
        .collect();
    check_collective(
        &env,
        p,
        "coll_long",
        &longs,
        32,
        |xs| {
            host_collectives(
                xs,
                0i64,
                i64::MIN,
                i64::MAX,
                i64::wrapping_add,
                |a, b| a < b,
                |x, c| x == c as i64,
                |v| v,
            )
        },
        |a, b| a == b,
    );
    let ulongs: Vec<u64> = (0..n)
        .map(|_| ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64)
        .collect();
    check_collective(
        &env,
        p,
        "coll_ulong",
        &ulongs,
        64,
        |xs| {
            host_collectives(
                xs,
                0u64,
                0,
                u64::MAX,
                u64::wrapping_add,
                |a, b| a < b,
                |x, c| x == c as u64,
                |v| v as u64,
            )
        },
        |a, b| a == b,
    );
    let floats: Vec<f32> = (0..n).map(|_| rng.next_f32() * 200.0 - 100.0).collect();
    check_collective(
        &env,
        p,
        "coll_float",
        &floats,
        64,
        |xs| {
            host_collectives(
                xs,
                0f32,
                f32::NEG_INFINITY,
                f32::INFINITY,
                |a, b| a + b,
                |a, b| a < b,
                |x, c| x == c as f32,
                |v| v as f32,
            )
        },
        // Sums in work-item order, as on the host; allow for a different association.
        |a, b| a == b || (a - b).abs() <= 1e-3,
    );

    // 2-D groups of 8x4: broadcast from (bx, by) and the group sum.
    let k = env.kernel(p, "coll_2d");
    let (gx, gy, lx, ly) = (16usize, 8usize, 8usize, 4usize);
    let xs: Vec<i32> = (0..gx * gy)
        .map(|_| (rng.next_u32() % 100) as i32)
        .collect();
    let input = env.buffer(
        CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
        4 * xs.len(),
        Some(bytes(&xs)),
    );
    let out = env.buffer(CL_MEM_READ_WRITE, 8 * xs.len(), None);
    let (bx, by) = (5u32, 2u32);
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    set_arg(k, 2, &bx);
    set_arg(k, 3, &by);
    run(&env, k, &[gx, gy], Some(&[lx, ly]));
    let got: Vec<i32> = env.read(out, 2 * xs.len());
    for y in 0..gy {
        for x in 0..gx {
            let (x0, y0) = (x / lx * lx, y / ly * ly);
            let b = xs[(x0 + bx as usize) + gx * (y0 + by as usize)];
            let sum: i32 = (y0..y0 + ly)
                .flat_map(|yy| (x0..x0 + lx).map(move |xx| (xx, yy)))
                .map(|(xx, yy)| xs[xx + gx * yy])
                .sum();
            let i = x + gx * y;
            assert_eq!((got[2 * i], got[2 * i + 1]), (b, sum), "item ({x}, {y})");
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(input);
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseKernel)(k);
        cl!(clReleaseProgram)(p);
    }
}

const PROGVARS: &str = r#"
// Program-scope __global variables (OpenCL C 3.0 section 6.8).
global int counter;                        // zero-initialised
global float4 vec = (float4)(1.5f, -2.0f, 3.25f, 8.0f);
global struct { char c; long l; int a[3]; } st = { 7, -5000000000L, { 1, 2, 3 } };
global int table[4] = { 10, 20, 30, 40 };
global int *global ptr = &table[2];         // a pointer initialised with a variable's address
global uchar bytes[3] = { 200, 201, 202 };
global uchar2 pair[2] = { (uchar2)(1, 2), (uchar2)(3, 4) };
global uchar2 *global pp = &pair[1];        // an access chain of three indexes

kernel void bump(global int *out) {
    // Every work-item adds once; the counter keeps its value across launches.
    int old = atomic_fetch_add_explicit((volatile global atomic_int *)&counter, 1,
                                        memory_order_relaxed, memory_scope_device);
    out[get_global_id(0)] = old;
}

kernel void read_all(global long *out) {
    static global int calls;                // function-scope static: program storage too
    out[0] = counter;
    out[1] = (long)(vec.x * 4) + (long)(vec.y * 4) * 100 + (long)(vec.z * 4) * 10000
             + (long)(vec.w * 4) * 1000000;
    out[2] = st.c;
    out[3] = st.l;
    out[4] = st.a[0] + st.a[1] * 10 + st.a[2] * 100;
    out[5] = *ptr;
    out[6] = ptr - table;
    out[7] = bytes[0] + bytes[1] + bytes[2];
    out[8] = calls++;
    out[9] = pp->x * 10 + pp->y;
}

kernel void write_all(int v) {
    table[2] = v;
    ptr = &table[v & 3];
    bytes[1] = (uchar)v;
    st.l = v * 3L;
}
"#;

#[test]
fn program_scope_global_variables_persist_across_launches() {
    let env = Env::new();
    let p = env
        .try_build(PROGVARS, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let total: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramBuildInfo)(
            p,
            env.device,
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
            s,
            v,
            r,
        )
    });
    // counter 4, vec 16, st 32, table 16, ptr 8, bytes 3, pair 4, pp 8, calls 4 (with
    // alignment padding).
    assert!((95..=160).contains(&total), "total size {total}");
    let max: usize = device_scalar(env.device, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE);
    assert!(max >= 64 * 1024);

    let bump = env.kernel(p, "bump");
    let read = env.kernel(p, "read_all");
    let write = env.kernel(p, "write_all");
    let n = 64;
    let out = env.buffer(CL_MEM_READ_WRITE, 4 * n, None);
    set_arg(bump, 0, &out);
    let res = env.buffer(CL_MEM_READ_WRITE, 8 * 10, None);
    set_arg(read, 0, &res);

    // Initial values, as the host computes them.
    run(&env, read, &[1], None);
    let got: Vec<i64> = env.read(res, 10);
    let vec4 = [1.5f32, -2.0, 3.25, 8.0];
    let v = (vec4[0] * 4.0) as i64
        + (vec4[1] * 4.0) as i64 * 100
        + (vec4[2] * 4.0) as i64 * 10000
        + (vec4[3] * 4.0) as i64 * 1000000;
    assert_eq!(got, vec![0, v, 7, -5_000_000_000, 321, 30, 2, 603, 0, 34]);

    // Two launches of 64 work-items: the counter persists; every old value is seen once.
    for round in 0..2 {
        run(&env, bump, &[n], Some(&[16]));
        let mut olds: Vec<i32> = env.read(out, n);
        olds.sort();
        let want: Vec<i32> = (0..n as i32).map(|i| i + round * n as i32).collect();
        assert_eq!(olds, want, "round {round}");
    }

    // Another kernel writes; the reader sees it (and its own static counter went up).
    let val = 77i32;
    set_arg(write, 0, &val);
    run(&env, write, &[1], None);
    run(&env, read, &[1], None);
    let got: Vec<i64> = env.read(res, 10);
    let t = [10i64, 20, 77, 40];
    let k = (val & 3) as usize;
    assert_eq!(
        got,
        vec![
            2 * n as i64,
            v,
            7,
            3 * val as i64,
            321,
            t[k],
            k as i64,
            200 + (val as u8) as i64 + 202,
            1,
            34
        ]
    );
    unsafe {
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseMemObject)(res);
        cl!(clReleaseKernel)(bump);
        cl!(clReleaseKernel)(read);
        cl!(clReleaseKernel)(write);
        cl!(clReleaseProgram)(p);
    }
}

const SUBGROUPS: &str = include_str!("../src/compiler/testdata/subgroups.cl");

#[test]
fn subgroup_functions_match_the_host() {
    let env = Env::new();
    let reported = features(env.device)
        .iter()
        .any(|f| f == "__opencl_c_subgroups");
    let max_sgs: cl_uint = device_scalar(env.device, CL_DEVICE_MAX_NUM_SUB_GROUPS);
    assert_eq!(reported, max_sgs > 0);
    if !reported {
        return;
    }
    let p = env
        .try_build(SUBGROUPS, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "sg_int");
    // 90 items in groups of 20: the last group has 10 (non-uniform).
    let (n, local) = (90usize, 20usize);
    let mut sg = 0usize;
    ok(unsafe {
        cl!(clGetKernelSubGroupInfo)(
            k,
            env.device,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
            std::mem::size_of::<usize>(),
            &local as *const usize as *const c_void,
            std::mem::size_of::<usize>(),
            &mut sg as *mut usize as *mut c_void,
            null_mut(),
        )
    });
    assert!(sg >= 1 && sg <= local);
    let mut count = 0usize;
    ok(unsafe {
        cl!(clGetKernelSubGroupInfo)(
            k,
            env.device,
            CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
            std::mem::size_of::<usize>(),
            &local as *const usize as *const c_void,
            std::mem::size_of::<usize>(),
            &mut count as *mut usize as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(count, local.div_ceil(sg));
    assert!(max_sgs as usize >= count);

    let mut rng = Rng(0x5b9);
    let mut xs: Vec<i32> = (0..n)
        .map(|_| (rng.next_u32() % 1000) as i32 - 500)
        .collect();
    xs[2] = 3;
    xs[9] = 5;
    let input = env.buffer(CL_MEM_READ_WRITE, 4 * n, Some(bytes(&xs)));
    let out = env.buffer(CL_MEM_READ_WRITE, 4 * 12 * n, None);
    set_arg(k, 0, &input);
    set_arg(k, 1, &out);
    run(&env, k, &[n], Some(&[local]));
    let got: Vec<i32> = env.read(out, 12 * n);
    for g0 in (0..n).step_by(local) {
        let l = local.min(n - g0);
        for lid in 0..l {
            let (sid, slid) = (lid / sg, lid % sg);
            let first = g0 + sid * sg;
            let size = sg.min(l - sid * sg);
            let mine = &xs[first..first + size];
            let want = [
                size as i32,
                sg as i32,
                l.div_ceil(sg) as i32,
                sid as i32,
                slid as i32,
                local.div_ceil(sg) as i32,
                mine.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
                *mine[..=slid].iter().min().unwrap(),
                mine[..slid].iter().copied().max().unwrap_or(i32::MIN),
                mine[1.min(size - 1)],
                (mine.iter().all(|&x| x != 3) as i32) * 2 + mine.iter().any(|&x| x == 5) as i32,
                *mine.iter().max().unwrap(),
            ];
            let i = g0 + lid;
            if size < 2 {
                // sub_group_broadcast from lane 1 of a one-item sub-group is undefined.
                let mut g = got[12 * i..12 * i + 12].to_vec();
                g[9] = want[9];
                assert_eq!(g, want, "work-item {i}");
            } else {
                assert_eq!(&got[12 * i..12 * i + 12], &want, "work-item {i}");
            }
        }
    }

    // 64-bit integers and floats, groups of 16.
    let k2 = env.kernel(p, "sg_long_float");
    let n = 64;
    let ls: Vec<i64> = (0..n).map(|_| (rng.next_u32() as i64) << 20).collect();
    let fs: Vec<f32> = (0..n)
        .map(|_| (rng.next_u32() % 200) as f32 - 100.0)
        .collect();
    let (lb, fb) = (
        env.buffer(CL_MEM_READ_WRITE, 8 * n, Some(bytes(&ls))),
        env.buffer(CL_MEM_READ_WRITE, 4 * n, Some(bytes(&fs))),
    );
    let (lo, fo) = (
        env.buffer(CL_MEM_READ_WRITE, 16 * n, None),
        env.buffer(CL_MEM_READ_WRITE, 8 * n, None),
    );
    set_arg(k2, 0, &lb);
    set_arg(k2, 1, &fb);
    set_arg(k2, 2, &lo);
    set_arg(k2, 3, &fo);
    run(&env, k2, &[n], Some(&[16]));
    let gl: Vec<i64> = env.read(lo, 2 * n);
    let gf: Vec<f32> = env.read(fo, 2 * n);
    for i in 0..n {
        let (g0, lid) = (i / 16 * 16, i % 16);
        let first = g0 + lid / sg * sg;
        let size = sg.min(16 - lid / sg * sg);
        let slid = lid % sg;
        let ml = &ls[first..first + size];
        let mf = &fs[first..first + size];
        assert_eq!(gl[2 * i], ml[..=slid].iter().sum::<i64>(), "long scan {i}");
        assert_eq!(gl[2 * i + 1], ml[0], "long broadcast {i}");
        // Small integers in float: every order of summation is exact.
        assert_eq!(gf[2 * i], mf.iter().sum::<f32>(), "float reduce {i}");
        let m = mf[..slid].iter().copied().fold(f32::INFINITY, f32::min);
        assert_eq!(gf[2 * i + 1], m, "float exclusive min {i}");
    }
    unsafe {
        for m in [input, out, lb, fb, lo, fo] {
            cl!(clReleaseMemObject)(m);
        }
        cl!(clReleaseKernel)(k);
        cl!(clReleaseKernel)(k2);
        cl!(clReleaseProgram)(p);
    }
}

#[test]
fn max_sub_group_size_is_bounded_by_the_work_group() {
    // get_max_sub_group_size is the largest sub-group of the dispatch: with work-groups of 5
    // items it is at most 5 on any device (lavapipe's sub-groups have 8, NVIDIA's 32), and
    // equal to CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE.
    let env = Env::new();
    if !features(env.device)
        .iter()
        .any(|f| f == "__opencl_c_subgroups")
    {
        return;
    }
    let src = "__kernel void k(__global uint *o) {\n\
                 size_t i = get_global_id(0);\n\
                 o[3 * i] = get_max_sub_group_size();\n\
                 o[3 * i + 1] = get_sub_group_size();\n\
                 o[3 * i + 2] = get_num_sub_groups();\n\
               }";
    let p = env
        .try_build(src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "k");
    for local in [5usize, 1, 64] {
        let mut sg = 0usize;
        ok(unsafe {
            cl!(clGetKernelSubGroupInfo)(
                k,
                env.device,
                CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                std::mem::size_of::<usize>(),
                &local as *const usize as *const c_void,
                std::mem::size_of::<usize>(),
                &mut sg as *mut usize as *mut c_void,
                null_mut(),
            )
        });
        assert!(sg >= 1 && sg <= local, "local {local}: {sg}");
        let n = local * 3;
        let out = env.buffer(CL_MEM_READ_WRITE, 12 * n, None);
        set_arg(k, 0, &out);
        run(&env, k, &[n], Some(&[local]));
        let got: Vec<u32> = env.read(out, 3 * n);
        for i in 0..n {
            let lid = i % local;
            let size = sg.min(local - lid / sg * sg);
            assert_eq!(
                &got[3 * i..3 * i + 3],
                &[sg as u32, size as u32, local.div_ceil(sg) as u32],
                "local {local}, item {i}"
            );
        }
    }
}
