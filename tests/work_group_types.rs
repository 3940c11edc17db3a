//! Work-group reductions, scans and broadcasts (OpenCL C 3.0 section 6.15.16) on every type
//! the specification allows: `int`, `uint`, `long`, `ulong`, `float`, `double` (cl_khr_fp64)
//! and `half` (cl_khr_fp16), where the device has the collective functions feature, from
//! OpenCL C source and from SPIR-V IL (`OpGroupFAdd`... on `half`); every result against the
//! host's, folded in work-item order with each step rounded to the type, as the device does.
//! The CTS's workgroups `work_group_reduce_*` and `work_group_scan_*` failed to build for
//! `half` (no overload of vkcl's prelude functions matched).

mod common;

use common::spirv::*;
use common::*;
use half::f16;

/// The kernel of type `t`: ten results per work-item (reduce, inclusive scan and exclusive
/// scan of add, min and max, then a broadcast from the group's last work-item).
fn source(t: &str) -> String {
    let pragma = match t {
        "half" => "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
        "double" => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
        _ => "",
    };
    format!(
        "{pragma}kernel void k(global const {t} *in, global {t} *out) {{\n\
         size_t i = get_global_id(0);\n\
         {t} x = in[i];\n\
         global {t} *o = out + 10 * i;\n\
         o[0] = work_group_reduce_add(x);\n\
         o[1] = work_group_reduce_min(x);\n\
         o[2] = work_group_reduce_max(x);\n\
         o[3] = work_group_scan_inclusive_add(x);\n\
         o[4] = work_group_scan_inclusive_min(x);\n\
         o[5] = work_group_scan_inclusive_max(x);\n\
         o[6] = work_group_scan_exclusive_add(x);\n\
         o[7] = work_group_scan_exclusive_min(x);\n\
         o[8] = work_group_scan_exclusive_max(x);\n\
         o[9] = work_group_broadcast(x, get_local_size(0) - 1);\n\
         }}\n"
    )
}

/// One element type on the host: its addition (rounded as the device rounds), its order and
/// the identities of add, min and max.
struct Ops<T> {
    zero: T,
    /// The identity of min (the type's largest value, +infinity for floating point).
    top: T,
    /// The identity of max.
    bottom: T,
    add: fn(T, T) -> T,
    lt: fn(T, T) -> bool,
}

/// The host's ten results per work-item of one work-group's inputs.
fn host<T: Copy>(xs: &[T], o: &Ops<T>) -> Vec<T> {
    let min = |a: T, b: T| if (o.lt)(b, a) { b } else { a };
    let max = |a: T, b: T| if (o.lt)(a, b) { b } else { a };
    let fold = |n: usize, f: &dyn Fn(T, T) -> T, id: T| xs[..n].iter().fold(id, |a, &b| f(a, b));
    let n = xs.len();
    let mut out = Vec::new();
    for i in 0..n {
        out.extend([
            fold(n, &o.add, o.zero),
            fold(n, &min, o.top),
            fold(n, &max, o.bottom),
            fold(i + 1, &o.add, o.zero),
            fold(i + 1, &min, o.top),
            fold(i + 1, &max, o.bottom),
            fold(i, &o.add, o.zero),
            fold(i, &min, o.top),
            fold(i, &max, o.bottom),
            xs[n - 1],
        ]);
    }
    out
}

/// Builds the kernel of type `t` and runs it on `xs` in groups of each of `locals` (the last
/// group smaller where a size does not divide the input); compares bit for bit.
fn check<T: Copy + Default + PartialEq + std::fmt::Debug>(
    env: &Env,
    t: &str,
    xs: &[T],
    locals: &[usize],
    ops: &Ops<T>,
) {
    let src = source(t);
    let p = env
        .try_build(&src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("{t}: build failed ({e}):\n{log}"));
    let k = env.kernel(p, "k");
    for &local in locals {
        let input = env.buf(xs);
        let out = env.zeros::<T>(10 * xs.len());
        arg_mem(k, 0, input);
        arg_mem(k, 1, out);
        env.run(k, &[xs.len()], Some(&[local]), None);
        let got: Vec<T> = env.read(out, 10 * xs.len());
        let want: Vec<T> = xs.chunks(local).flat_map(|g| host(g, ops)).collect();
        const NAMES: [&str; 10] = [
            "reduce_add",
            "reduce_min",
            "reduce_max",
            "scan_inclusive_add",
            "scan_inclusive_min",
            "scan_inclusive_max",
            "scan_exclusive_add",
            "scan_exclusive_min",
            "scan_exclusive_max",
            "broadcast",
        ];
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                w,
                "{t} work_group_{} of work-item {} (groups of {local})",
                NAMES[i % 10],
                i / 10
            );
        }
        unsafe {
            cl!(clReleaseMemObject)(input);
            cl!(clReleaseMemObject)(out);
        }
    }
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseProgram)(p);
    }
}

fn collectives(env: &Env) -> bool {
    let supported: cl_bool = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
            s,
            v,
            r,
        )
    });
    supported == CL_TRUE
}

/// Half as bits; each addition rounded once to half (exact in f64, then rounded to nearest
/// even), min and max by value.
fn half_ops() -> Ops<u16> {
    Ops {
        zero: 0,
        top: f16::INFINITY.to_bits(),
        bottom: f16::NEG_INFINITY.to_bits(),
        add: |a, b| {
            f16::from_f64(f16::from_bits(a).to_f64() + f16::from_bits(b).to_f64()).to_bits()
        },
        lt: |a, b| f16::from_bits(a) < f16::from_bits(b),
    }
}

/// Inputs of 200 work-items (groups of 64 leave a last group of 8; groups of 200 are one).
const N: usize = 200;
const LOCALS: [usize; 3] = [64, 200, 1];

#[test]
fn reduce_scan_and_broadcast_on_every_type() {
    let env = Env::new();
    if !collectives(&env) {
        return;
    }
    let mut rng = Rng(0x3c0_11ec);
    let ints: Vec<i32> = (0..N).map(|_| rng.next_u32() as i32).collect();
    let ops = Ops {
        zero: 0i32,
        top: i32::MAX,
        bottom: i32::MIN,
        add: i32::wrapping_add,
        lt: |a, b| a < b,
    };
    check(&env, "int", &ints, &LOCALS, &ops);
    let uints: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
    let ops = Ops {
        zero: 0u32,
        top: u32::MAX,
        bottom: 0,
        add: u32::wrapping_add,
        lt: |a, b| a < b,
    };
    check(&env, "uint", &uints, &LOCALS, &ops);
    let ulongs: Vec<u64> = (0..N)
        .map(|_| (rng.next_u32() as u64) << 32 | rng.next_u32() as u64)
        .collect();
    let longs: Vec<i64> = ulongs.iter().map(|&v| v as i64).collect();
    let ops = Ops {
        zero: 0i64,
        top: i64::MAX,
        bottom: i64::MIN,
        add: i64::wrapping_add,
        lt: |a, b| a < b,
    };
    check(&env, "long", &longs, &LOCALS, &ops);
    let ops = Ops {
        zero: 0u64,
        top: u64::MAX,
        bottom: 0,
        add: u64::wrapping_add,
        lt: |a, b| a < b,
    };
    check(&env, "ulong", &ulongs, &LOCALS, &ops);
    // Multiples of 1/4 up to 256 in magnitude: every sum of a group is exact in float.
    let floats: Vec<f32> = (0..N)
        .map(|_| (rng.next_u32() % 2049) as f32 / 4.0 - 256.0)
        .collect();
    let ops = Ops {
        zero: 0f32,
        top: f32::INFINITY,
        bottom: f32::NEG_INFINITY,
        add: |a, b| a + b,
        lt: |a, b| a < b,
    };
    check(&env, "float", &floats, &LOCALS, &ops);
    if env.has_extension("cl_khr_fp64") {
        let doubles: Vec<f64> = (0..N)
            .map(|_| (rng.next_u32() as f64 - 2147483648.0) / 3.0)
            .collect();
        let ops = Ops {
            zero: 0f64,
            top: f64::INFINITY,
            bottom: f64::NEG_INFINITY,
            add: |a, b| a + b,
            lt: |a, b| a < b,
        };
        check(&env, "double", &doubles, &LOCALS, &ops);
    }
    if env.has_extension("cl_khr_fp16") {
        // Any finite half, so that the sums round (and overflow to infinity) along the way.
        let halves: Vec<u16> = (0..N)
            .map(|_| loop {
                let h = f16::from_bits(rng.next_u32() as u16);
                if h.is_finite() && h.to_f32().abs() <= 4096.0 {
                    break h.to_bits();
                }
            })
            .collect();
        check(&env, "half", &halves, &LOCALS, &half_ops());
    }
}

/// `OpGroupFAdd`, `OpGroupFMin`, `OpGroupFMax` and `OpGroupBroadcast` of `half` in an IL
/// program (llvm-spirv-15 reads them back as `work_group_*` calls, which vkcl's IL library
/// defines): five results per work-item.
const HALF_IL: &str = r#"
    OpCapability Addresses
    OpCapability Kernel
    OpCapability Int64
    OpCapability Float16
    OpCapability Groups
    OpMemoryModel Physical64 OpenCL
    OpEntryPoint Kernel %k "wg" %gid
    OpDecorate %gid BuiltIn GlobalInvocationId
    OpDecorate %gid Constant
    %uint = OpTypeInt 32 0
    %ulong = OpTypeInt 64 0
    %half = OpTypeFloat 16
    %v3 = OpTypeVector %ulong 3
    %pv3 = OpTypePointer Input %v3
    %gid = OpVariable %pv3 Input
    %void = OpTypeVoid
    %ph = OpTypePointer CrossWorkgroup %half
    %fn = OpTypeFunction %void %ph %ph
    %wgs = OpConstant %uint 2
    %c1 = OpConstant %uint 1
    %l3 = OpConstant %ulong 3
    %l5 = OpConstant %ulong 5
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %ph
    %in = OpFunctionParameter %ph
    %b = OpLabel
    %g3 = OpLoad %v3 %gid
    %g = OpCompositeExtract %ulong %g3 0
    %pin = OpPtrAccessChain %ph %in %g
    %x = OpLoad %half %pin Aligned 2
    %r0 = OpGroupFAdd %half %wgs Reduce %x
    %r1 = OpGroupFAdd %half %wgs InclusiveScan %x
    %r2 = OpGroupFMin %half %wgs ExclusiveScan %x
    %r3 = OpGroupFMax %half %wgs Reduce %x
    %r4 = OpGroupBroadcast %half %wgs %x %l3
    %base = OpIMul %ulong %g %l5
    %o0 = OpPtrAccessChain %ph %out %base
    OpStore %o0 %r0 Aligned 2
    %o1 = OpPtrAccessChain %ph %o0 %c1
    OpStore %o1 %r1 Aligned 2
    %o2 = OpPtrAccessChain %ph %o1 %c1
    OpStore %o2 %r2 Aligned 2
    %o3 = OpPtrAccessChain %ph %o2 %c1
    OpStore %o3 %r3 Aligned 2
    %o4 = OpPtrAccessChain %ph %o3 %c1
    OpStore %o4 %r4 Aligned 2
    OpReturn
    OpFunctionEnd
"#;

#[test]
fn half_collectives_of_il_programs() {
    let env = Env::new();
    if !collectives(&env) || !env.has_extension("cl_khr_fp16") {
        return;
    }
    let (groups, size) = (2usize, 64usize);
    let n = groups * size;
    let mut rng = Rng(0x4a1f);
    let x: Vec<u16> = (0..n)
        .map(|_| f16::from_f32((rng.next_u32() % 401) as f32 / 8.0 - 25.0).to_bits())
        .collect();
    let p = create_il(&env, &assemble_whole(HALF_IL));
    build(&env, p);
    let k = env.kernel(p, "wg");
    let out = env.zeros::<u16>(5 * n);
    let inb = env.buf(&x);
    arg_mem(k, 0, out);
    arg_mem(k, 1, inb);
    env.run(k, &[n], Some(&[size]), None);
    let got: Vec<u16> = env.read(out, 5 * n);
    let o = half_ops();
    for g in 0..groups {
        let v = &x[g * size..(g + 1) * size];
        let all = host(v, &o);
        for l in 0..size {
            let h = &all[10 * l..10 * l + 10];
            // reduce add, inclusive add, exclusive min, reduce max, broadcast from 3.
            let want = [h[0], h[3], h[7], h[2], v[3]];
            let i = g * size + l;
            assert_eq!(&got[5 * i..5 * i + 5], &want, "work-item {i}");
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseMemObject)(inb);
        cl!(clReleaseKernel)(k);
        cl!(clReleaseProgram)(p);
    }
}
