//! C11 atomics on every type the conformance suite uses (`int`, `uint`, `long`, `ulong`,
//! `float`, `double`, `intptr_t`, `uintptr_t`, `size_t`, `ptrdiff_t`), written the way the
//! CTS's c11_atomics and basic progvar kernels are: program-scope atomics with and without
//! initializers read and written with `atomic_store`/`atomic_load`, `__local` atomics (a
//! `__local` argument and a kernel-scope array) set with `atomic_store_explicit` and
//! `atomic_init`, swapped with `atomic_exchange`, compared with
//! `atomic_compare_exchange_strong`/`_weak`. Results are compared with answers computed on the
//! host (issue 18 finding 8).
mod common;
use common::*;

/// OpenCL C name, byte size, whether floating point.
const TYPES: [(&str, usize, bool); 10] = [
    ("int", 4, false),
    ("uint", 4, false),
    ("long", 8, false),
    ("ulong", 8, false),
    ("float", 4, true),
    ("double", 8, true),
    ("intptr_t", 8, false),
    ("uintptr_t", 8, false),
    ("size_t", 8, false),
    ("ptrdiff_t", 8, false),
];

const PRAGMAS: &str = "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\
                       #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n\
                       #pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";

/// `v` as the bytes of a value of the type (`size`, `float`).
fn enc(size: usize, float: bool, v: i64) -> Vec<u8> {
    match (size, float) {
        (4, false) => (v as i32).to_le_bytes().to_vec(),
        (8, false) => v.to_le_bytes().to_vec(),
        (4, true) => (v as f32).to_le_bytes().to_vec(),
        _ => (v as f64).to_le_bytes().to_vec(),
    }
}

/// The values in `bytes` (of the type), as integers (the tests use exact small integers).
fn dec(size: usize, float: bool, bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks(size)
        .map(|c| match (size, float) {
            (4, false) => i64::from(i32::from_le_bytes(c.try_into().unwrap())),
            (8, false) => i64::from_le_bytes(c.try_into().unwrap()),
            (4, true) => f32::from_le_bytes(c.try_into().unwrap()) as i64,
            _ => f64::from_le_bytes(c.try_into().unwrap()) as i64,
        })
        .collect()
}

fn skip(env: &Env, size: usize, float: bool) -> bool {
    let int64 = env.has_extension("cl_khr_int64_base_atomics")
        && env.has_extension("cl_khr_int64_extended_atomics");
    (size == 8 && !int64) || (size == 8 && float && !env.has_extension("cl_khr_fp64"))
}

/// basic progvar_prog_scope_init / _uninit: program-scope atomics of every type stored by one
/// kernel and loaded by the next (a store through a program-scope pointer to one of them
/// too); without initializers a first kernel sees them all zero.
#[test]
fn program_scope_atomics_of_every_type() {
    let env = Env::new();
    for (t, size, float) in TYPES {
        if skip(&env, size, float) {
            continue;
        }
        for init in [true, false] {
            let decls = if init {
                format!(
                    "volatile atomic_{t} var = ATOMIC_VAR_INIT(0);\n\
                     global volatile atomic_{t} g_var = ATOMIC_VAR_INIT(1);\n\
                     volatile atomic_{t} a_var[2] = {{ ATOMIC_VAR_INIT(1), ATOMIC_VAR_INIT(1) }};\n\
                     volatile global atomic_{t} *p_var = &a_var[1];\n"
                )
            } else {
                format!(
                    "volatile atomic_{t} var;\n\
                     global volatile atomic_{t} g_var;\n\
                     volatile atomic_{t} a_var[2];\n\
                     global volatile atomic_{t} *p_var;\n"
                )
            };
            // Kernel arguments cannot be size_t and its kin: the CTS passes them as (u)long.
            let b = match t {
                "intptr_t" | "ptrdiff_t" => "long",
                "uintptr_t" | "size_t" => "ulong",
                _ => t,
            };
            let src = format!(
                "{PRAGMAS}{decls}\
                 kernel void global_check(global int *out) {{\n\
                   const {t} zero = ({t})0;\n\
                   bool status = true;\n\
                   status &= (atomic_load(&var) == zero);\n\
                   status &= (atomic_load(&g_var) == zero);\n\
                   status &= (atomic_load(&a_var[0]) == zero);\n\
                   status &= (atomic_load(&a_var[1]) == zero);\n\
                   status &= (p_var == NULL);\n\
                   *out = status ? 1 : 0;\n\
                 }}\n\
                 kernel void writer(global {b} *src, uint idx) {{\n\
                   atomic_store(&var, src[0]);\n\
                   atomic_store(&g_var, src[1]);\n\
                   atomic_store(&a_var[0], src[2]);\n\
                   atomic_store(&a_var[1], src[3]);\n\
                   p_var = a_var + idx;\n\
                 }}\n\
                 kernel void reader(global {b} *dest, {b} ptr_write_val) {{\n\
                   atomic_store(p_var, ptr_write_val);\n\
                   dest[0] = atomic_load(&var);\n\
                   dest[1] = atomic_load(&g_var);\n\
                   dest[2] = atomic_load(&a_var[0]);\n\
                   dest[3] = atomic_load(&a_var[1]);\n\
                 }}\n"
            );
            let what = format!("atomic_{t}, init {init}");
            let p = env
                .try_build(&src, "-cl-std=CL3.0")
                .unwrap_or_else(|(e, log)| panic!("{what}: build failed ({e}):\n{log}"));
            if !init {
                let k = env.kernel(p, "global_check");
                let out = env.zeros::<i32>(1);
                arg_mem(k, 0, out);
                env.run(k, &[1], None, None);
                assert_eq!(
                    env.read::<i32>(out, 1),
                    [1],
                    "{what}: not all zero at first"
                );
            }
            let (w, r) = (env.kernel(p, "writer"), env.kernel(p, "reader"));
            for idx in 0..2u32 {
                let vals: Vec<u8> = [11i64, 22, 33, 44]
                    .iter()
                    .flat_map(|v| enc(size, float, v + i64::from(idx)))
                    .collect();
                let (src_m, dest) = (env.buf(&vals), env.zeros::<u8>(4 * size));
                arg_mem(w, 0, src_m);
                set_arg(w, 1, &idx);
                env.run(w, &[1], None, None);
                let pv = enc(size, float, 99);
                ok(unsafe { cl!(clSetKernelArg)(r, 1, size, pv.as_ptr().cast()) });
                arg_mem(r, 0, dest);
                env.run(r, &[1], None, None);
                let got = dec(size, float, &env.read::<u8>(dest, 4 * size));
                let mut want: Vec<i64> = [11i64, 22, 33, 44]
                    .iter()
                    .map(|v| v + i64::from(idx))
                    .collect();
                want[2 + idx as usize] = 99;
                assert_eq!(got, want, "{what}: p_var = a_var + {idx}");
            }
        }
    }
}

/// c11_atomics atomic_store / atomic_init on `__global` atomics of every type: each
/// work-item stores into its own element (a kernel whose only 64-bit atomic is a store
/// needs `Int64Atomics` too).
#[test]
fn global_atomic_store_and_init_of_every_type() {
    let env = Env::new();
    const ITEMS: usize = 64;
    for (t, size, float) in TYPES {
        if skip(&env, size, float) {
            continue;
        }
        let src = format!(
            "{PRAGMAS}\
             __kernel void k(volatile __global atomic_{t} *dest) {{\n\
               uint tid = get_global_id(0);\n\
               atomic_store_explicit(&dest[tid], ({t})(tid * 2 + 1), memory_order_relaxed, memory_scope_device);\n\
             }}\n\
             __kernel void k2(volatile __global atomic_{t} *d2) {{\n\
               uint tid = get_global_id(0);\n\
               atomic_init(&d2[tid], ({t})tid);\n\
               atomic_store(&d2[tid], atomic_load(&d2[tid]) + ({t})3);\n\
             }}\n"
        );
        let p = env
            .try_build(&src, "-cl-std=CL3.0")
            .unwrap_or_else(|(e, log)| panic!("atomic_{t}: build failed ({e}):\n{log}"));
        let (k, k2) = (env.kernel(p, "k"), env.kernel(p, "k2"));
        let (a, b) = (env.zeros::<u8>(ITEMS * size), env.zeros::<u8>(ITEMS * size));
        arg_mem(k, 0, a);
        arg_mem(k2, 0, b);
        env.run(k, &[ITEMS], None, None);
        env.run(k2, &[ITEMS], None, None);
        let want_a: Vec<i64> = (0..ITEMS as i64).map(|i| i * 2 + 1).collect();
        let want_b: Vec<i64> = (0..ITEMS as i64).map(|i| i + 3).collect();
        assert_eq!(
            dec(size, float, &env.read::<u8>(a, ITEMS * size)),
            want_a,
            "atomic_{t}"
        );
        assert_eq!(
            dec(size, float, &env.read::<u8>(b, ITEMS * size)),
            want_b,
            "atomic_{t}"
        );
    }
}

/// c11_atomics on `__local` atomics of every type, in a `__local` argument and in a
/// kernel-scope array: the first work-item sets all slots with `atomic_store_explicit`; each
/// work-item then `atomic_init`s its own slot, swaps a value in with `atomic_exchange` and
/// (integers) compares-and-swaps it with `atomic_compare_exchange_strong` (succeeds) and
/// `atomic_compare_exchange_weak` (fails: the expected value is wrong); all swap their own
/// value into a shared slot, so that the old values and the last value are a permutation of
/// the first value and the work-items' values.
#[test]
fn local_atomics_of_every_type() {
    let env = Env::new();
    const L: usize = 32;
    for (t, size, float) in TYPES {
        if skip(&env, size, float) {
            continue;
        }
        for in_arg in [true, false] {
            let (param, decl) = if in_arg {
                (format!(", volatile __local atomic_{t} *dm"), String::new())
            } else {
                (
                    String::new(),
                    format!("  __local volatile atomic_{t} dm[{}];\n", L + 1),
                )
            };
            let cas = if float {
                format!(
                    "  atomic_store(&dm[lid + 1], atomic_load(&dm[lid + 1]) + ({t})100);\n\
                     oldValues[3 * lid + 2] = ({t})(lid + 10200);\n"
                )
            } else {
                format!(
                    "  {t} expected = ({t})(lid + 100);\n\
                       int ok = atomic_compare_exchange_strong_explicit(&dm[lid + 1], &expected,\n\
                           ({t})(lid + 200), memory_order_relaxed, memory_order_relaxed,\n\
                           memory_scope_work_group);\n\
                       {t} e2 = ({t})7;\n\
                       int bad = atomic_compare_exchange_weak(&dm[lid + 1], &e2, ({t})5);\n\
                       oldValues[3 * lid + 2] = e2 + ({t})(ok * 10000 + bad * 20000);\n"
                )
            };
            let src = format!(
                "{PRAGMAS}\
                 __kernel void k(uint n, __global {t} *finalDest, __global {t} *oldValues{param}) {{\n\
                 {decl}\
                   uint lid = get_local_id(0);\n\
                   if (lid == 0)\n\
                     for (uint d = 0; d < n; d++)\n\
                       atomic_store_explicit(dm + d, finalDest[d], memory_order_relaxed,\n\
                                             memory_scope_work_group);\n\
                   barrier(CLK_LOCAL_MEM_FENCE);\n\
                   atomic_init(&dm[lid + 1], ({t})(lid * 3 + 1));\n\
                   oldValues[3 * lid] = atomic_exchange_explicit(&dm[lid + 1], ({t})(lid + 100),\n\
                       memory_order_relaxed, memory_scope_work_group);\n\
                   oldValues[3 * lid + 1] = atomic_exchange(&dm[0], ({t})(lid + 1000));\n\
                 {cas}\
                   barrier(CLK_LOCAL_MEM_FENCE);\n\
                   if (lid == 0)\n\
                     for (uint d = 0; d < n; d++)\n\
                       finalDest[d] = atomic_load_explicit(dm + d, memory_order_relaxed,\n\
                                                           memory_scope_work_group);\n\
                 }}\n"
            );
            let what = format!("__local atomic_{t}, in an argument {in_arg}");
            let p = env
                .try_build(&src, "-cl-std=CL3.0")
                .unwrap_or_else(|(e, log)| panic!("{what}: build failed ({e}):\n{log}"));
            let k = env.kernel(p, "k");
            let n = (L + 1) as u32;
            let start: Vec<u8> = (0..L + 1)
                .flat_map(|d| enc(size, float, 5000 + d as i64))
                .collect();
            let (fin, old) = (env.buf(&start), env.zeros::<u8>(3 * L * size));
            set_arg(k, 0, &n);
            arg_mem(k, 1, fin);
            arg_mem(k, 2, old);
            if in_arg {
                arg_local(k, 3, (L + 1) * size);
            }
            env.run(k, &[L], Some(&[L]), None);
            let finals = dec(size, float, &env.read::<u8>(fin, (L + 1) * size));
            let olds = dec(size, float, &env.read::<u8>(old, 3 * L * size));
            let mut chain = vec![finals[0]];
            for l in 0..L as i64 {
                let o = &olds[3 * l as usize..3 * l as usize + 3];
                assert_eq!(
                    o[0],
                    l * 3 + 1,
                    "{what}: item {l} atomic_exchange of its own slot"
                );
                assert_eq!(o[2], l + 10200, "{what}: item {l} compare-exchange");
                assert_eq!(finals[l as usize + 1], l + 200, "{what}: slot {}", l + 1);
                chain.push(o[1]);
            }
            chain.sort_unstable();
            let mut want: Vec<i64> = (0..L as i64).map(|l| l + 1000).collect();
            want.push(5000);
            want.sort_unstable();
            assert_eq!(chain, want, "{what}: exchanges on the shared slot");
        }
    }
}
