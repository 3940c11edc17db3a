//! Non-uniform sub-group functions in divergent control flow: an `if`/`else` on the
//! sub-group local id whose two branches call the same built-in, each half of the sub-group
//! in its own branch (the shape of the CTS's subgroups `sub_group_non_uniform_broadcast`).
//! Each call must see only the work-items of its own branch. LLVM's SimplifyCFG used to
//! merge the two calls into one after the branch (sinking, a `select` on the argument) or
//! before it (hoisting, identical arguments), run by the whole sub-group: the broadcast
//! read a lane of the wrong half, the reduction and the ballot covered both halves. And
//! lavapipe reads the id of a dynamic `OpGroupNonUniformBroadcast` from a lane that may be
//! inactive (vkcl makes it a shuffle). Every result is compared with the host's.

mod common;

use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// The driver's sub-group size, as the kernel reports it for a large work-group.
fn sub_group_size(k: cl_kernel, d: cl_device_id) -> usize {
    let input = [256usize];
    let mut out = 0usize;
    ok(unsafe {
        cl!(clGetKernelSubGroupInfo)(
            k,
            d,
            CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
            std::mem::size_of_val(&input),
            input.as_ptr() as *const c_void,
            std::mem::size_of::<usize>(),
            &mut out as *mut usize as *mut c_void,
            null_mut(),
        )
    });
    out
}

/// The (global, local) shapes: whole sub-groups, a partial last sub-group, a work-group
/// smaller than a sub-group, and a smaller last work-group.
const SHAPES: [(usize, usize); 4] = [(128, 64), (60, 20), (15, 5), (90, 20)];

/// For work-item `i` of an NDRange of `n` items in groups of `l`, with sub-groups of `s`:
/// the global index of its sub-group's first item and the sub-group's size.
fn sub_group_of(i: usize, n: usize, l: usize, s: usize) -> (usize, usize) {
    let g0 = i / l * l;
    let wg = l.min(n - g0);
    let first = (i - g0) / s * s;
    (g0 + first, s.min(wg - first))
}

/// Runs `k(in, aux, out)` over `n` items in groups of `l`; `in` and `aux` of `int`,
/// `out` of `out_len` ints.
fn run(
    env: &Env,
    k: cl_kernel,
    input: &[i32],
    aux: &[i32],
    out_len: usize,
    n: usize,
    l: usize,
) -> Vec<i32> {
    let ib = env.buf(input);
    let ab = env.buf(aux);
    let ob = env.zeros::<i32>(out_len);
    arg_mem(k, 0, ib);
    arg_mem(k, 1, ab);
    arg_mem(k, 2, ob);
    env.run(k, &[n], Some(&[l]), None);
    let got = env.read::<i32>(ob, out_len);
    unsafe {
        for m in [ib, ab, ob] {
            cl!(clReleaseMemObject)(m);
        }
    }
    got
}

/// `sub_group_non_uniform_broadcast` of `int`, `int2`... `int16` from a lane of the caller's
/// half: the lower half broadcasts from one of its lanes (`aux[2 * i]`), the upper half from
/// one of its own (`aux[2 * i + 1]`), both read before the branch. Each work-item holds its
/// own half's lane in both slots, as in the CTS (which leaves the other slot 0), so the id is
/// uniform among the work-items that make the call only: lavapipe read a dynamic broadcast's
/// id from lane 0 even where lane 0 skipped the call, and the upper half got the value of a
/// lower lane.
#[test]
fn non_uniform_broadcast_in_both_branches() {
    let env = Env::new();
    if !env.has_extension("cl_khr_subgroup_ballot") {
        return;
    }
    for w in [1usize, 2, 3, 4, 8, 16] {
        let ty = if w == 1 {
            "int".to_string()
        } else {
            format!("int{w}")
        };
        let (load, store) = if w == 1 {
            ("in[i]".to_string(), "out[i] = r;".to_string())
        } else {
            (format!("vload{w}(i, in)"), format!("vstore{w}(r, i, out);"))
        };
        let src = format!(
            "kernel void k(global const int *in, global const int *aux, global int *out) {{\n\
             size_t i = get_global_id(0);\n\
             {ty} x = {load};\n\
             uint2 id = as_uint2(vload2(i, aux));\n\
             {ty} r;\n\
             if (get_sub_group_local_id() < (get_sub_group_size() >> 1))\n\
             \x20   r = sub_group_non_uniform_broadcast(x, id.x);\n\
             else\n\
             \x20   r = sub_group_non_uniform_broadcast(x, id.y);\n\
             {store}\n}}\n"
        );
        let k = env.kern_opts(&src, "-cl-std=CL3.0", "k");
        let s = sub_group_size(k, env.device);
        for (n, l) in SHAPES {
            let mut rng = Rng(0xb0ad ^ (w * 1000 + n * 31 + l) as u64);
            let input: Vec<i32> = (0..n * w).map(|_| rng.next_u32() as i32).collect();
            // One source lane per half of each sub-group, the same for all of the half.
            let mut aux = vec![0i32; 2 * n];
            let mut want = vec![0i32; n * w];
            let mut i = 0;
            while i < n {
                let (first, size) = sub_group_of(i, n, l, s);
                let half = size / 2;
                let lo = if half > 0 {
                    rng.next_u32() as usize % half
                } else {
                    0
                };
                let hi = half + rng.next_u32() as usize % (size - half);
                for lane in 0..size {
                    let j = first + lane;
                    // A lane's slot for the other branch names a lane of its own half: an
                    // id read from a work-item that skips the call picks the wrong half.
                    aux[2 * j] = if lane < half { lo } else { hi } as i32;
                    aux[2 * j + 1] = aux[2 * j];
                    let from = first + if lane < half { lo } else { hi };
                    want[j * w..(j + 1) * w].copy_from_slice(&input[from * w..(from + 1) * w]);
                }
                i = first + size;
            }
            let got = run(&env, k, &input, &aux, n * w, n, l);
            for j in 0..n {
                let (first, size) = sub_group_of(j, n, l, s);
                assert_eq!(
                    got[j * w..(j + 1) * w],
                    want[j * w..(j + 1) * w],
                    "{ty}: work-item {j} (global {n}, local {l}; lane {} of a sub-group of {size})",
                    j - first
                );
            }
        }
        unsafe {
            cl!(clReleaseKernel)(k);
        }
    }
}

/// The same call with the same argument in both branches (what SimplifyCFG hoists):
/// `sub_group_non_uniform_reduce_add`, `sub_group_non_uniform_scan_inclusive_add` and
/// `sub_group_ballot` over the caller's half only.
#[test]
fn identical_calls_in_both_branches() {
    let env = Env::new();
    let arithmetic = env.has_extension("cl_khr_subgroup_non_uniform_arithmetic");
    let ballot = env.has_extension("cl_khr_subgroup_ballot");
    if !arithmetic && !ballot {
        return;
    }
    // out[3i]: reduce, out[3i + 1]: inclusive scan, out[3i + 2]: ballot's first word.
    let mut body = String::new();
    if arithmetic {
        body.push_str(
            "o[0] = sub_group_non_uniform_reduce_add(x) + 1;\n\
             o[1] = sub_group_non_uniform_scan_inclusive_add(x) + 2;\n",
        );
    }
    if ballot {
        body.push_str("o[2] = sub_group_ballot(1).x;\n");
    }
    let src = format!(
        "kernel void k(global const int *in, global const int *aux, global int *out) {{\n\
         size_t i = get_global_id(0);\n\
         int x = in[i];\n\
         global int *o = out + 3 * i;\n\
         if (get_sub_group_local_id() < (get_sub_group_size() >> 1)) {{\n{body}\
         o[0] -= aux[i];\n\
         }} else {{\n{body}\
         o[0] += aux[i];\n\
         }}\n}}\n"
    );
    let k = env.kern_opts(&src, "-cl-std=CL3.0", "k");
    let s = sub_group_size(k, env.device);
    assert!(
        s <= 32,
        "sub-group size {s}: the ballot check reads one word"
    );
    for (n, l) in SHAPES {
        let mut rng = Rng(0x4015 ^ (n * 31 + l) as u64);
        let input: Vec<i32> = (0..n).map(|_| (rng.next_u32() % 1000) as i32).collect();
        let aux: Vec<i32> = (0..n).map(|_| (rng.next_u32() % 10) as i32).collect();
        let got = run(&env, k, &input, &aux, 3 * n, n, l);
        for j in 0..n {
            let (first, size) = sub_group_of(j, n, l, s);
            let lane = j - first;
            let half = size / 2;
            let lanes = if lane < half { 0..half } else { half..size };
            let sign = if lane < half { -1 } else { 1 };
            let what = format!("work-item {j} (global {n}, local {l}; lane {lane} of {size})");
            if arithmetic {
                let sum: i32 = lanes.clone().map(|k| input[first + k]).sum();
                assert_eq!(got[3 * j], sum + 1 + sign * aux[j], "reduce_add, {what}");
                let scan: i32 = (lanes.start..=lane).map(|k| input[first + k]).sum();
                assert_eq!(got[3 * j + 1], scan + 2, "scan_inclusive_add, {what}");
            }
            if ballot {
                let mask = lanes.fold(0u32, |m, k| m | 1 << k);
                assert_eq!(got[3 * j + 2] as u32, mask, "ballot, {what}");
            }
        }
    }
    unsafe {
        cl!(clReleaseKernel)(k);
    }
}

/// `sub_group_clustered_reduce_add` in each case of a `switch` on the cluster size (the
/// CTS's subgroups `subgroup_functions_clustered_reduce` kernel): SimplifyCFG sank the eight
/// calls into one whose cluster size was a `phi`, which SPIR-V forbids (it must be a
/// constant); the Vulkan driver refused the pipeline and every launch failed with
/// CL_OUT_OF_RESOURCES. Each cluster size up to the sub-group size, against the host.
#[test]
fn clustered_reduce_in_a_switch_on_the_cluster_size() {
    let env = Env::new();
    if !env.has_extension("cl_khr_subgroup_clustered_reduce") {
        return;
    }
    let src = "kernel void k(global const int *in, global const int *aux, global int *out) {\n\
               size_t i = get_global_id(0);\n\
               int v = in[i];\n\
               int r = -1;\n\
               switch (aux[0]) {\n\
               case 1: r = sub_group_clustered_reduce_add(v, 1); break;\n\
               case 2: r = sub_group_clustered_reduce_add(v, 2); break;\n\
               case 4: r = sub_group_clustered_reduce_add(v, 4); break;\n\
               case 8: r = sub_group_clustered_reduce_add(v, 8); break;\n\
               case 16: r = sub_group_clustered_reduce_add(v, 16); break;\n\
               case 32: r = sub_group_clustered_reduce_add(v, 32); break;\n\
               case 64: r = sub_group_clustered_reduce_add(v, 64); break;\n\
               case 128: r = sub_group_clustered_reduce_add(v, 128); break;\n\
               }\n\
               out[i] = r;\n}\n";
    let k = env.kern_opts(src, "-cl-std=CL3.0", "k");
    let s = sub_group_size(k, env.device);
    let (n, l) = (128usize, 64usize);
    let mut rng = Rng(0xc105);
    let input: Vec<i32> = (0..n).map(|_| (rng.next_u32() % 1000) as i32).collect();
    let mut c = 1;
    while c <= s {
        let got = run(&env, k, &input, &[c as i32], n, n, l);
        for j in 0..n {
            let first = j / c * c;
            let want: i32 = input[first..first + c].iter().sum();
            assert_eq!(got[j], want, "cluster size {c}: work-item {j}");
        }
        c *= 2;
    }
    unsafe {
        cl!(clReleaseKernel)(k);
    }
}
