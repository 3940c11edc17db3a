//! Loops and private arrays on the device through the real loader (issue 18, findings 1 and
//! 2), every result compared with a host answer.
//!
//! - Long loops: llvmpipe before Mesa 25 ends every loop of a shader call once 65535 loop
//!   passes are spent (see "Loop-limit guard" in the `compiler` module doc). A launch must then
//!   either be right or fail with `CL_OUT_OF_RESOURCES` on its event, never report success with
//!   cut-off data; launches below the limit must succeed and be right everywhere.
//! - Private arrays filled through a counter under a condition (`zs[n++] = x`), which lavapipe
//!   22.3.6 stored at the wrong index (the `access` lowering pass).
mod common;
use common::*;
use std::ptr::{null, null_mut};

/// Enqueues `k` over `global` (local size `local`) with an event, waits on it and returns
/// (clWaitForEvents' result, the event's final execution status).
fn run_status(env: &Env, k: cl_kernel, global: usize, local: usize) -> (cl_int, cl_int) {
    let mut ev: cl_event = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &global, &local, 0, null(), &mut ev)
    });
    let waited = unsafe { cl!(clWaitForEvents)(1, &ev) };
    let status: cl_int = info_scalar(|n, p, r| unsafe {
        cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, n, p, r)
    });
    unsafe { cl!(clReleaseEvent)(ev) };
    (waited, status)
}

const LONG: &str = r#"
// Each loop pass adds 1 through a volatile pointer, so no compiler can fold the loop.
kernel void single(global int *out, int n, int m) {
    volatile global int *v = out + get_global_id(0);
    for (int i = 0; i < n; i++) *v += 1;
}
kernel void nested(global int *out, int n, int m) {
    volatile global int *v = out + get_global_id(0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) *v += 1;
}
kernel void sequential(global int *out, int n, int m) {
    volatile global int *v = out + 2 * get_global_id(0);
    for (int i = 0; i < n; i++) v[0] += 1;
    for (int i = 0; i < m; i++) v[1] += 1;
}
// Odd items run n passes in the first loop, even items in the second.
kernel void divergent(global int *out, int n, int m) {
    int g = get_global_id(0);
    volatile global int *v = out + 2 * g;
    int a = (g & 1) ? n : 0, b = (g & 1) ? 0 : n;
    for (int i = 0; i < a; i++) v[0] += 1;
    for (int i = 0; i < b; i++) v[1] += 1;
}
// A loop left only by return: its merge block is unreachable.
kernel void until_return(global int *out, int n, int m) {
    volatile global int *v = out + get_global_id(0);
    for (;;) {
        *v += 1;
        if (*v >= n) return;
    }
}
// A loop with a data-dependent exit, then a counted loop (lavapipe 22.3.6 left the second
// loop after one pass).
kernel void after_data_loop(global int *out, int n, int m) {
    volatile global int *v = out + 2 * get_global_id(0);
    int s = 0;
    do { s += 1 + (v[0] & 1); } while (s < n);
    for (int j = 0; j < m; j++) v[1] += 1;
    v[0] = s;
}
// A loop left by a data-dependent break.
kernel void until_break(global int *out, int n, int m) {
    volatile global int *v = out + get_global_id(0);
    while (1) {
        *v += 1;
        if (*v >= n) break;
    }
    out[get_global_id(0)] += m;
}
"#;

/// Runs kernel `name` of [`LONG`] over `items` work-items (one group) with `n`, `m`;
/// `want(item)` is each item's expected output words. Returns whether the launch failed with
/// CL_OUT_OF_RESOURCES; panics on success with wrong data or on any other failure.
fn long_loop(env: &Env, name: &str, items: usize, words: usize, n: i32, m: i32) -> bool {
    let want = |g: usize| -> Vec<i32> {
        match name {
            "single" | "until_return" => vec![n],
            "nested" => vec![n * m],
            "sequential" => vec![n, m],
            "divergent" if g % 2 == 1 => vec![n, 0],
            "divergent" => vec![0, n],
            "until_break" => vec![n + m],
            "after_data_loop" => vec![n, m],
            _ => unreachable!(),
        }
    };
    let out = env.zeros::<i32>(items * words);
    let k = env.kern(LONG, name);
    arg_mem(k, 0, out);
    set_arg(k, 1, &n);
    set_arg(k, 2, &m);
    let (waited, status) = run_status(env, k, items, items);
    let got: Vec<i32> = env.read(out, items * words);
    unsafe { cl!(clReleaseKernel)(k) };
    unsafe { cl!(clReleaseMemObject)(out) };
    if status == CL_COMPLETE {
        assert_eq!(waited, CL_SUCCESS, "{name}({n}, {m})");
        for g in 0..items {
            assert_eq!(
                &got[g * words..(g + 1) * words],
                &want(g)[..],
                "{name}({n}, {m}) item {g}: success with wrong data"
            );
        }
        false
    } else {
        assert_eq!(
            status, CL_OUT_OF_RESOURCES,
            "{name}({n}, {m}): event status"
        );
        assert_eq!(
            waited, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
            "{name}({n}, {m}): clWaitForEvents"
        );
        true
    }
}

#[test]
fn loops_past_the_limit_are_right_or_fail() {
    let env = Env::new();
    let cases: [(&str, usize, usize, i32, i32); 9] = [
        ("single", 1, 1, 65536, 0),
        ("after_data_loop", 8, 2, 5, 4),
        ("single", 1, 1, 200_000, 0),
        ("nested", 1, 1, 400, 400),
        ("sequential", 1, 2, 40_000, 40_000),
        ("divergent", 16, 2, 40_000, 0),
        ("divergent", 2, 2, 70_000, 0),
        ("until_return", 1, 1, 1_000_000, 0),
        ("until_break", 4, 1, 100_000, 7),
    ];
    let mut failed = Vec::new();
    for (name, items, words, n, m) in cases {
        if long_loop(&env, name, items, words, n, m) {
            failed.push(name);
        }
    }
    eprintln!("loops past llvmpipe's limit that failed with CL_OUT_OF_RESOURCES: {failed:?}");
    // A queue whose command failed keeps working.
    assert!(!long_loop(&env, "single", 1, 1, 100, 0));
}

#[test]
fn loops_under_the_limit_succeed() {
    let env = Env::new();
    let cases: [(&str, usize, usize, i32, i32); 8] = [
        ("single", 1, 1, 65_534, 0),
        ("single", 256, 1, 5_000, 0),
        ("nested", 1, 1, 200, 200),
        ("sequential", 1, 2, 30_000, 30_000),
        ("divergent", 16, 2, 30_000, 0),
        ("until_return", 8, 1, 50_000, 0),
        ("until_break", 4, 1, 50_000, 7),
        ("until_break", 1, 1, 5, 7),
    ];
    for (name, items, words, n, m) in cases {
        assert!(
            !long_loop(&env, name, items, words, n, m),
            "{name}({n}, {m}) failed under the limit"
        );
    }
}

const COMPACT: &str = r#"
// Each item compacts its N inputs (the positive ones, some transformed) into a private array
// through a counter bumped under a condition, then writes the count and the array.
#define COMPACT(NAME, T, C, N, COND, STORE)                                   \
kernel void NAME(global const int *input, global int *output) {              \
    global const int *in = input + N * get_global_id(0);                      \
    global int *out = output + (2 * N + 1) * get_global_id(0);                \
    T zs[2 * N];                                                              \
    C n = 0;                                                                  \
    for (int i = 0; i < N; i++) if (COND) { STORE; }                          \
    out[0] = n;                                                               \
    for (int i = 0; i < n; i++) out[1 + i] = (int)zs[i];                      \
}
COMPACT(cmp_int4, int, int, 4, in[i] > 0, zs[n++] = in[i])
COMPACT(cmp_uint_counter, int, uint, 4, in[i] > 0, zs[n++] = in[i])
COMPACT(cmp_long_elems, long, int, 4, in[i] > 0, zs[n++] = (long)in[i])
COMPACT(cmp_int8, int, int, 8, in[i] > 0, zs[n++] = in[i])
COMPACT(cmp_short16, short, int, 16, in[i] > 0, zs[n++] = (short)in[i])
COMPACT(cmp_float8, float, uchar, 8, in[i] != 0, zs[n++] = (float)in[i])
COMPACT(cmp_nested_cond, int, int, 6, in[i] > 0,
        if (in[i] & 1) zs[n++] = in[i]; else { zs[n++] = -in[i]; zs[n++] = 100; })
COMPACT(cmp_accumulate, int, int, 6, in[i] > 0, zs[n] = in[i]; zs[n] *= 2; n++)
// A loop of unknown trip count (the length comes from the data).
kernel void unknown_trip(global const int *input, global int *output) {
    global const int *in = input + 9 * get_global_id(0);
    global int *out = output + 17 * get_global_id(0);
    int zs[8];
    int n = 0, len = in[8] & 7;
    for (int i = 0; i < len; i++) if (in[i] > 0) zs[n++] = in[i];
    out[0] = n;
    for (int i = 0; i < n; i++) out[1 + i] = zs[i];
}
"#;

/// The host answer of one item of a [`COMPACT`] kernel: count then values, in `2N + 1` words.
fn compact_host(name: &str, input: &[i32], n: usize) -> Vec<i32> {
    let mut zs = Vec::new();
    for &x in input {
        match name {
            "cmp_float8" if x != 0 => zs.push(x),
            "cmp_float8" => {}
            "cmp_nested_cond" if x > 0 && x & 1 == 1 => zs.push(x),
            "cmp_nested_cond" if x > 0 => zs.extend([-x, 100]),
            "cmp_accumulate" if x > 0 => zs.push(2 * x),
            "cmp_short16" if x > 0 => zs.push(i32::from(x as i16)),
            _ if x > 0 => zs.push(x),
            _ => {}
        }
    }
    let mut out = vec![0; 2 * n + 1];
    out[0] = zs.len() as i32;
    out[1..=zs.len()].copy_from_slice(&zs);
    out
}

#[test]
fn private_arrays_filled_through_a_counter() {
    let env = Env::new();
    let mut rng = Rng(18);
    let items = 64;
    // The issue's input first, then random signs.
    let shapes = [
        ("cmp_int4", 4),
        ("cmp_uint_counter", 4),
        ("cmp_long_elems", 4),
        ("cmp_int8", 8),
        ("cmp_short16", 16),
        ("cmp_float8", 8),
        ("cmp_nested_cond", 6),
        ("cmp_accumulate", 6),
    ];
    let p = env.build(COMPACT);
    for (name, n) in shapes {
        let mut input: Vec<i32> = (0..items * n)
            .map(|_| (rng.next_u32() % 21) as i32 - 10)
            .collect();
        input[..4].copy_from_slice(&[5, -1, 7, 2]);
        let words = 2 * n + 1;
        let (mi, mo) = (env.buf(&input), env.zeros::<i32>(items * words));
        let k = env.kernel(p, name);
        arg_mem(k, 0, mi);
        arg_mem(k, 1, mo);
        env.run(k, &[items], None, None);
        let got: Vec<i32> = env.read(mo, items * words);
        for g in 0..items {
            let want = compact_host(name, &input[g * n..(g + 1) * n], n);
            assert_eq!(
                &got[g * words..(g + 1) * words],
                &want[..],
                "{name} item {g}"
            );
        }
    }
    // Unknown trip count: 8 values and a length per item.
    let mut input: Vec<i32> = (0..items * 9)
        .map(|_| (rng.next_u32() % 21) as i32 - 10)
        .collect();
    for g in 0..items {
        input[g * 9 + 8] = (rng.next_u32() % 9) as i32;
    }
    let (mi, mo) = (env.buf(&input), env.zeros::<i32>(items * 17));
    let k = env.kernel(p, "unknown_trip");
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    env.run(k, &[items], None, None);
    let got: Vec<i32> = env.read(mo, items * 17);
    for g in 0..items {
        let item = &input[g * 9..g * 9 + 9];
        let len = (item[8] & 7) as usize;
        let mut want = compact_host("cmp_int8", &item[..len], 8);
        want.resize(17, 0);
        assert_eq!(
            &got[g * 17..(g + 1) * 17],
            &want[..],
            "unknown_trip item {g}"
        );
    }
}

const AFTER_DATA_LOOP: &str = r#"
// A loop whose exit depends on loaded data, then a counted loop: lavapipe 22.3.6 left the
// second loop after one pass (silently, with no 65535 passes spent).
kernel void after_data_loop(global int *buf, int n, int m) {
    global int *in = buf + 8;
    int s = 0;
    do { s += in[s]; } while (s < n);
    for (int j = 0; j < m; j++) buf[1 + j] = in[j] + s;
    buf[0] = s;
}
"#;

#[test]
fn loop_after_a_data_dependent_loop_is_right_or_fails() {
    let env = Env::new();
    let (n, m) = (5i32, 4i32);
    let mut data = vec![0i32; 8];
    data.extend([1; 6]);
    let buf = env.buf(&data);
    let k = env.kern(AFTER_DATA_LOOP, "after_data_loop");
    arg_mem(k, 0, buf);
    set_arg(k, 1, &n);
    set_arg(k, 2, &m);
    let (waited, status) = run_status(&env, k, 1, 1);
    let got: Vec<i32> = env.read(buf, 5);
    if status == CL_COMPLETE {
        assert_eq!(waited, CL_SUCCESS);
        assert_eq!(got, vec![5, 6, 6, 6, 6], "success with wrong data");
    } else {
        assert_eq!(status, CL_OUT_OF_RESOURCES);
        assert_eq!(waited, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    }
}

/// A loop counter used only as `i & 7` (vkcl-difftest's `InvalidBitWidth` builds,
/// docs/difftest.md): IndVarSimplify's exit-test rewrite counts the loop in `i3`, a width
/// llvm-spirv-15 refuses, unless the front end optimizes again without it.
const ODD_WIDTH: &str = r#"
kernel void odd_width(global uint *out, global const uint *in) {
    uint gid = get_global_id(0);
    uint h = in[gid];
    for (int i = -2; i <= 7; i++) {
        int c = 0;
        while (in[gid] & 1u) {
            if (c >= 3) break;
            c++;
            for (int j = 1; j < (i & 7); j++) h = h * 31u + (uint)j;
        }
    }
    out[gid] = h;
}
"#;

fn odd_width_host(x: u32) -> u32 {
    let mut h = x;
    for i in -2i32..=7 {
        for _ in 0..if x & 1 != 0 { 3 } else { 0 } {
            for j in 1..(i & 7) {
                h = h.wrapping_mul(31).wrapping_add(j as u32);
            }
        }
    }
    h
}

#[test]
fn loop_counter_masked_to_three_bits_builds_and_is_right() {
    let env = Env::new();
    let mut rng = Rng(22);
    let items = 64;
    let input: Vec<u32> = (0..items).map(|_| rng.next_u32()).collect();
    let p = env.build(ODD_WIDTH);
    let (mi, mo) = (env.buf(&input), env.zeros::<u32>(items));
    let k = env.kernel(p, "odd_width");
    arg_mem(k, 0, mo);
    arg_mem(k, 1, mi);
    env.run(k, &[items], None, None);
    let got: Vec<u32> = env.read(mo, items);
    let want: Vec<u32> = input.iter().map(|&x| odd_width_host(x)).collect();
    assert_eq!(got, want);
}
