//! Compiler tests: real OpenCL C kernels (fixtures in `testdata/`, which the runtime's tests
//! can run too) compiled for lavapipe's capabilities; every output module goes through
//! spirv-val (Vulkan 1.2).

use super::*;

fn tools() -> Tools {
    find_tools().expect("clang-15, opt-15 and llvm-spirv-15 must be installed for these tests")
}

fn build(src: &str, options: &str) -> CompiledProgram {
    match compile_source(&tools(), src, options, &DeviceCaps::default()) {
        Ok(p) => {
            for k in &p.kernels {
                // VKCL_TEST_DUMP=dir writes every lowered module for inspection.
                if let Some(dir) = std::env::var_os("VKCL_TEST_DUMP") {
                    let bytes: Vec<u8> = k.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
                    let _ = std::fs::write(
                        std::path::Path::new(&dir).join(format!("{}.spv", k.name)),
                        bytes,
                    );
                }
                if let Err(e) = validate::validate_vulkan(&k.spirv) {
                    panic!("kernel {} does not validate: {e}", k.name);
                }
            }
            p
        }
        Err(e) => panic!("build failed ({:?}):\n{}", e.kind, e.log),
    }
}

fn kernel<'p>(p: &'p CompiledProgram, name: &str) -> &'p KernelInfo {
    p.kernels
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
}

#[test]
fn broken_source_names_the_line() {
    let src = "__kernel void k(__global int *a) {\n  a[0] = 1;\n  a[1] = undefined_thing;\n}\n";
    let e = compile_source(&tools(), src, "", &DeviceCaps::default()).unwrap_err();
    assert_eq!(e.kind, BuildFailureKind::CompileError);
    assert!(e.log.contains("<source>:3:"), "log: {}", e.log);
    assert!(e.log.contains("undefined_thing"), "log: {}", e.log);
}

#[test]
fn invalid_option() {
    let e = compile_source(
        &tools(),
        "__kernel void k() {}",
        "-fbogus",
        &DeviceCaps::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, BuildFailureKind::InvalidOptions);
}

#[test]
fn options_reach_clang() {
    let src = "__kernel void k(__global int *a) { a[0] = VALUE; }";
    build(src, "-D VALUE=3 -cl-mad-enable");
    build(src, "-DVALUE=4 -cl-std=CL3.0");
    let e = compile_source(&tools(), src, "", &DeviceCaps::default()).unwrap_err();
    assert!(e.log.contains("VALUE"));
}

#[test]
fn vadd() {
    let p = build(include_str!("testdata/vadd.cl"), "");
    assert_eq!(p.kernels.len(), 2);
    let k = kernel(&p, "vadd_float");
    assert_eq!(k.args.len(), 3);
    for (n, a) in k.args.iter().enumerate() {
        assert_eq!(a.kind, ArgKind::Buffer);
        assert_eq!(a.offset, 8 * n as u32);
        assert_eq!(a.size, 8);
        assert_eq!(a.address_qualifier, AddressQualifier::Global);
        assert_eq!(a.type_name, "float*");
    }
    assert_eq!(k.args[0].name, "a");
    assert!(k.args[0].type_qualifier.is_const);
    assert_eq!(k.args_size, 24);
    let k = kernel(&p, "vadd_int");
    assert_eq!(k.args[3].kind, ArgKind::Value);
    assert_eq!((k.args[3].offset, k.args[3].size), (24, 4));
    assert_eq!(k.args[3].type_name, "int");
    assert_eq!(k.args_size, 32);
}

#[test]
fn args() {
    let p = build(include_str!("testdata/args.cl"), "");
    let k = kernel(&p, "scalars");
    let placed: Vec<(u32, u32)> = k.args.iter().map(|a| (a.offset, a.size)).collect();
    // out, float f, int i, uchar c, short s, long l, ulong d
    assert_eq!(
        placed,
        vec![(0, 8), (8, 4), (12, 4), (16, 1), (18, 2), (24, 8), (32, 8)]
    );
    assert_eq!(k.args_size, 40);
    let k = kernel(&p, "vectors");
    let placed: Vec<(u32, u32)> = k.args.iter().map(|a| (a.offset, a.size)).collect();
    // out, float4 (16-aligned), int2, float3 (size and alignment 16)
    assert_eq!(placed, vec![(0, 8), (16, 16), (32, 8), (48, 16)]);
    assert_eq!(k.args[1].type_name, "float4");
    let k = kernel(&p, "by_value");
    // struct { int; float; char; float4 } : size 32, align 16
    assert_eq!((k.args[1].offset, k.args[1].size), (16, 32));
    assert_eq!(k.args[1].kind, ArgKind::Value);
    assert_eq!(k.args[1].address_qualifier, AddressQualifier::Private);
    assert_eq!(k.args_size, 48);
    let k = kernel(&p, "attributed");
    assert_eq!(k.reqd_work_group_size, Some([8, 4, 1]));
    assert_eq!(k.vec_type_hint.as_deref(), Some("float4"));
    assert!(k.attributes.contains("reqd_work_group_size(8,4,1)"));
    kernel(&p, "workitem");
}

#[test]
fn control_flow() {
    let p = build(include_str!("testdata/control.cl"), "");
    assert_eq!(p.kernels.len(), 6);
}

#[test]
fn workitem_cl30() {
    let p = build(include_str!("testdata/workitem30.cl"), "-cl-std=CL3.0");
    kernel(&p, "workitem30");
}

#[test]
fn local_memory() {
    let p = build(include_str!("testdata/local.cl"), "");
    let k = kernel(&p, "reduce_sum");
    assert_eq!(
        k.args[2].kind,
        ArgKind::Local {
            spec_id: 5,
            elem_size: 4
        }
    );
    assert_eq!(k.args[2].address_qualifier, AddressQualifier::Local);
    assert_eq!(k.args[2].size, 0);
    assert_eq!(k.args_size, 16);
    let k = kernel(&p, "two_local_args");
    assert_eq!(
        k.args[1].kind,
        ArgKind::Local {
            spec_id: 4,
            elem_size: 16
        }
    );
    assert_eq!(
        k.args[2].kind,
        ArgKind::Local {
            spec_id: 5,
            elem_size: 4
        }
    );
    assert_eq!(kernel(&p, "reverse_tile").static_local_mem_bytes, 64 * 4);
    assert_eq!(kernel(&p, "local_2d").static_local_mem_bytes, 16 * 17 * 4);
}

#[test]
fn atomics() {
    let p = build(include_str!("testdata/atomics.cl"), "");
    let k = kernel(&p, "histogram");
    assert_eq!(
        k.args[3].kind,
        ArgKind::Local {
            spec_id: 6,
            elem_size: 4
        }
    );
    assert_eq!(kernel(&p, "local_atomics").static_local_mem_bytes, 8);
}

#[test]
fn math() {
    build(include_str!("testdata/math.cl"), "");
}

#[test]
fn private_arrays() {
    let p = build(include_str!("testdata/private.cl"), "");
    assert!(kernel(&p, "private_array").private_mem_bytes >= 64);
    assert!(kernel(&p, "private_structs").private_mem_bytes >= 48);
}

#[test]
fn unsupported_constructs_fail_cleanly() {
    let e = compile_source(
        &tools(),
        include_str!("testdata/unsupported.cl"),
        "",
        &DeviceCaps::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, BuildFailureKind::CompileError);
    assert!(e.log.contains("variable_memcpy"), "log: {}", e.log);
    assert!(
        e.log.contains("memcpy of a variable size"),
        "log: {}",
        e.log
    );
}

#[test]
fn il_round_trip() {
    let p = build(include_str!("testdata/control.cl"), "");
    let bytes: Vec<u8> = p
        .opencl_spirv
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let q = compile_il(&bytes, "", &DeviceCaps::default(), &SpecValues::new())
        .unwrap_or_else(|e| panic!("{}", e.log));
    let names = |p: &CompiledProgram| p.kernels.iter().map(|k| k.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&p), names(&q));
    for k in &q.kernels {
        validate::validate_vulkan(&k.spirv).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    }
    assert!(compile_il(
        &[1, 2, 3, 4],
        "",
        &DeviceCaps::default(),
        &SpecValues::new()
    )
    .is_err());
}

#[test]
fn constant_memory() {
    let p = build(include_str!("testdata/constant.cl"), "");
    let k = kernel(&p, "blur");
    assert_eq!(k.args[2].address_qualifier, AddressQualifier::Constant);
    assert_eq!(k.args[2].kind, ArgKind::Buffer);
    assert_eq!(k.args[3].offset, 24);
}

#[test]
fn odd_corners() {
    // No arguments, no built-ins; a dynamic dimension; a NULL-able pointer compared to 0.
    let src = r#"
        __kernel void empty(void) {}
        __kernel void dyn_dim(__global ulong *out, uint d) {
            out[get_global_id(0)] = get_global_id(d) + get_local_size(d) + get_num_groups(d);
        }
        __kernel void maybe_null(__global int *p, __global int *q) {
            if (q != 0) q[get_global_id(0)] = 1;
            if (p) p[0] = 2;
        }
    "#;
    let p = build(src, "");
    assert_eq!(kernel(&p, "empty").args_size, 0);
    kernel(&p, "dyn_dim");
    kernel(&p, "maybe_null");
}

#[test]
fn validator_rejects_invalid_modules_with_a_message() {
    assert!(validate::enabled(), "unit tests always validate");
    let p = build(include_str!("testdata/vadd.cl"), "");
    let mut m = rspirv::dr::load_words(&kernel(&p, "vadd_float").spirv).unwrap();
    m.memory_model = None;
    use rspirv::binary::Assemble;
    let e = validate::validate_vulkan(&m.assemble()).unwrap_err();
    assert!(e.contains("memory model"), "{e}");
}

#[test]
fn freeze_is_rewritten_as_a_no_op_cast() {
    let ir = "  %a = sdiv i32 %x, %y\n  %b.frozen = freeze i32 %x, !dbg !7\n  %c = freeze <2 x i32> %v\n";
    let out = frontend::remove_freeze(ir);
    assert_eq!(
        out,
        "  %a = sdiv i32 %x, %y\n  %b.frozen = bitcast i32 %x to i32, !dbg !7\n  \
         %c = bitcast <2 x i32> %v to <2 x i32>\n"
    );
    // `i1` has no same-type OpBitcast in SPIR-V (bool is neither numeric nor a pointer):
    // found by vkcl-difftest, seed 58 (docs/difftest.md).
    let ir = "  %f = freeze i1 %c\n  %g = freeze <4 x i1> %m, !dbg !3\n";
    assert_eq!(
        frontend::remove_freeze(ir),
        "  %f = and i1 %c, %c\n  %g = and <4 x i1> %m, %m, !dbg !3\n"
    );
    // x / y next to x % y makes O2 emit `freeze` (DivRemPairs).
    build(
        "__kernel void k(__global int *a) { int x = a[0], y = a[1]; a[2] = x / y; a[3] = x % y; }",
        "",
    );
}

#[test]
fn loop_counted_in_an_odd_width_is_optimized_again() {
    // O2's LFTR counts the outer loop in `i3` (the counter is used only as `i & 7`), which
    // llvm-spirv-15 refuses ("InvalidBitWidth"); found by vkcl-difftest (docs/difftest.md).
    let p = build(
        "__kernel void k(__global uint *out, __global const uint *in) {\n\
           uint h = in[0];\n\
           for (int i = -2; i <= 7; i++) {\n\
             int c = 0;\n\
             while (in[1] & 1u) {\n\
               if (c >= 3) break;\n\
               c++;\n\
               for (int j = 1; j < (i & 7); j++) h = h * 31u + (uint)j;\n\
             }\n\
           }\n\
           out[0] = h;\n\
         }",
        "",
    );
    assert_eq!(p.kernels.len(), 1);
}

#[test]
fn spirv_opt_output_stays_valid() {
    // Off by default (see SPIRV_OPT), but kept working for when SPIRV-Tools is fixed.
    let p = build(include_str!("testdata/local.cl"), "");
    for k in &p.kernels {
        let words = validate::optimize(&k.spirv).unwrap_or_else(|e| panic!("{}: {e}", k.name));
        validate::validate_vulkan(&words).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    }
}

#[test]
fn wide_vectors() {
    let p = build(include_str!("testdata/wide.cl"), "");
    assert_eq!(kernel(&p, "wide_mix").args[5].size, 32);
}

#[test]
fn loop_exit_values_stay_in_native_widths() {
    // IndVarSimplify's closed form of a triangular sum needs i33 unless exit values are kept.
    build(
        "__kernel void k(__global int *a, int n) { int s = 0; for (int j = 0; j < (n & 7); j++) s += j; a[0] = s; }",
        "",
    );
}

#[test]
fn unsigned_vec_type_hint_keeps_its_name() {
    let src = "__kernel __attribute__((vec_type_hint(uint4))) void a(__global int *p) { p[0] = 1; }\n\
               __kernel __attribute__((vec_type_hint(int2))) void b(__global int *p) { p[0] = 2; }\n";
    let p = compile_source(&tools(), src, "", &DeviceCaps::default()).unwrap();
    let a = p.kernels.iter().find(|k| k.name == "a").unwrap();
    let b = p.kernels.iter().find(|k| k.name == "b").unwrap();
    assert_eq!(a.vec_type_hint.as_deref(), Some("uint4"));
    assert_eq!(a.attributes, "vec_type_hint(uint4)");
    assert_eq!(b.vec_type_hint.as_deref(), Some("int2"));
}

#[test]
fn printf_calls_become_records() {
    let src = r#"
__constant char greeting[] = "constant data";
__kernel void k(__global int *o) {
  int i = get_global_id(0);
  float4 v = (float4)(1.0f, 2.0f, 3.0f, (float)i);
  long8 w = (long8)(i);
  printf("hello %d %f %s %v4hlf %c %ld %p %s %v8ld\n", i, 1.5f, "str", v, 'x', (long)i, o,
         greeting, w);
  o[i] = printf("x=%d %hhd\n", o[i], (char)i);
}
"#;
    let p = build(src, "");
    let k = kernel(&p, "k");
    assert_eq!(k.printf.calls.len(), 2);
    let c = &k.printf.calls[0];
    assert_eq!(c.format, "hello %d %f %s %v4hlf %c %ld %p %s %v8ld\n");
    assert_eq!(
        c.args,
        vec![
            PrintfArg::Int { bytes: 4, lanes: 1 },
            PrintfArg::Float { bytes: 8, lanes: 1 },
            PrintfArg::Str,
            PrintfArg::Float { bytes: 4, lanes: 4 },
            PrintfArg::Int { bytes: 4, lanes: 1 },
            PrintfArg::Int { bytes: 8, lanes: 1 },
            PrintfArg::Ptr,
            PrintfArg::Str,
            PrintfArg::Int { bytes: 8, lanes: 8 },
        ]
    );
    assert_eq!(
        k.printf.strings,
        vec!["str".to_string(), "constant data".into()]
    );
    assert_eq!(k.printf.calls[1].format, "x=%d %hhd\n");
}

#[test]
fn saturating_intrinsics_are_renamed_to_opencl_builtins() {
    let ir = "  %12 = tail call i32 @llvm.uadd.sat.i32(i32 %9, i32 %11)\n  \
              %13 = tail call <4 x i16> @llvm.ssub.sat.v4i16(<4 x i16> %a, <4 x i16> %b)\n  \
              %14 = call i32 @llvm.smax.i32(i32 %9, i32 %11)\n\
              declare i32 @llvm.uadd.sat.i32(i32, i32) #2\n\
              declare <4 x i16> @llvm.ssub.sat.v4i16(<4 x i16>, <4 x i16>) #2\n\
              declare spir_func i32 @_Z7add_satjj(i32, i32)\n";
    let out = frontend::rename_sat_intrinsics(ir);
    assert_eq!(
        out,
        "  %12 = tail call spir_func i32 @_Z7add_satjj(i32 %9, i32 %11)\n  \
         %13 = tail call spir_func <4 x i16> @_Z7sub_satDv4_sS_(<4 x i16> %a, <4 x i16> %b)\n  \
         %14 = call i32 @llvm.smax.i32(i32 %9, i32 %11)\n\
         declare spir_func i32 @_Z7add_satjj(i32, i32) #2\n\
         declare spir_func <4 x i16> @_Z7sub_satDv4_sS_(<4 x i16>, <4 x i16>) #2\n"
    );
}

/// Every `OpFMul`/`OpFAdd`/`OpFSub` of kernel `name`'s lowered module: (opcode, decorated
/// `NoContraction`, result type is 16-bit float or a vector of them).
fn float_arith(p: &CompiledProgram, name: &str) -> Vec<(rspirv::spirv::Op, bool, bool)> {
    use rspirv::dr::Operand;
    use rspirv::spirv::{Decoration, Op};
    let module = rspirv::dr::load_words(&kernel(p, name).spirv).unwrap();
    let decorated: std::collections::HashSet<u32> = module
        .annotations
        .iter()
        .filter(|i| i.operands.get(1) == Some(&Operand::Decoration(Decoration::NoContraction)))
        .filter_map(|i| match i.operands.first() {
            Some(Operand::IdRef(t)) => Some(*t),
            _ => None,
        })
        .collect();
    let def = |id: u32| {
        module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(id))
            .unwrap()
    };
    let is_half = |ty: u32| {
        let t = def(ty);
        let t = match t.class.opcode {
            Op::TypeVector => match t.operands[0] {
                Operand::IdRef(e) => def(e),
                _ => unreachable!(),
            },
            _ => t,
        };
        t.class.opcode == Op::TypeFloat && t.operands[0] == Operand::LiteralBit32(16)
    };
    module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter(|i| matches!(i.class.opcode, Op::FMul | Op::FAdd | Op::FSub))
        .map(|i| {
            let id = i.result_id.unwrap();
            (
                i.class.opcode,
                decorated.contains(&id),
                is_half(i.result_type.unwrap()),
            )
        })
        .collect()
}

/// (FMul, FAdd) counts among `arith` whose decoration is `decorated`.
fn count(arith: &[(rspirv::spirv::Op, bool, bool)], decorated: bool) -> (usize, usize) {
    let n = |op| {
        arith
            .iter()
            .filter(|(o, d, _)| *o == op && *d == decorated)
            .count()
    };
    (n(rspirv::spirv::Op::FMul), n(rspirv::spirv::Op::FAdd))
}

#[test]
fn user_mad_and_contracted_arithmetic_may_fuse() {
    // OpenCL C contracts within an expression only (FP_CONTRACT, 6.10): the product stored
    // and added in a later statement stays two roundings; `a * b + c` in one expression
    // (llvm.fmuladd, llvm-spirv's `mad`) and `mad` itself reach the driver undecorated.
    let p = build(
        "__kernel void k(__global float *a) {\n\
           float t = a[0] * a[1];\n\
           a[5] = t;\n\
           a[3] = t + a[2];\n\
           a[4] = a[10] * a[11] + a[12];\n\
           a[6] = mad(a[7], a[8], a[9]);\n\
         }",
        "",
    );
    let arith = float_arith(&p, "k");
    assert_eq!(count(&arith, true), (1, 1), "{arith:?}");
    assert_eq!(count(&arith, false), (2, 2), "{arith:?}");
}

#[test]
fn library_arithmetic_is_not_fused() {
    // libclc's `sin` and `pow` are full of `mad` (the error terms of their argument reduction
    // and extended-precision logarithm need the product rounded on its own): with the
    // program's one `mad` in the same kernel, exactly that multiply and add are undecorated.
    let p = build(
        "__kernel void k(__global float *a, __global double *d) {\n\
           a[0] = sin(a[1]);\n\
           a[2] = pow(a[3], a[4]);\n\
           d[0] = sin(d[1]);\n\
           a[5] = mad(a[6], a[7], a[8]);\n\
         }",
        "",
    );
    let arith = float_arith(&p, "k");
    let (mul, add) = count(&arith, true);
    assert!(
        mul > 50 && add > 50,
        "library arithmetic: {mul} FMul, {add} FAdd"
    );
    // Undecorated: the program's `mad` only (53 pairs when libclc's `mad` was left as is).
    assert_eq!(
        count(&arith, false),
        (1, 1),
        "FMul and FAdd without NoContraction"
    );
    assert!(arith
        .iter()
        .filter(|a| a.0 == rspirv::spirv::Op::FSub)
        .all(|a| a.1));
}

#[test]
fn fp_contract_off_and_opt_disable_keep_products_rounded() {
    let src = "__kernel void k(__global float *a) {\n\
                 a[4] = a[0] * a[1] + a[2];\n\
                 a[5] = mad(a[6], a[7], a[8]);\n\
               }";
    // FP_CONTRACT OFF: clang emits a plain multiply and add, which stay rounded; `mad` is an
    // explicit permission to fuse and keeps it.
    let off = build(&format!("#pragma OPENCL FP_CONTRACT OFF\n{src}"), "");
    let arith = float_arith(&off, "k");
    assert_eq!(count(&arith, true), (1, 1), "{arith:?}");
    assert_eq!(count(&arith, false), (1, 1), "{arith:?}");
    // -cl-opt-disable: nothing fused.
    let plain = build(src, "-cl-opt-disable");
    let arith = float_arith(&plain, "k");
    assert_eq!(count(&arith, true), (2, 2), "{arith:?}");
    assert_eq!(count(&arith, false), (0, 0), "{arith:?}");
}

#[test]
fn half_mad_is_half_arithmetic() {
    // `mad` on half vectors: one half multiply and add per part (widevec splits half8 into
    // half4 parts), undecorated, and no trip through float (fma(half) goes through float and
    // rounds to odd; mad may be any precision, OpenCL C 3.0 section 7.4).
    let p = build(
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
         __kernel void k(__global half2 *a, __global half8 *b) {\n\
           a[0] = mad(a[1], a[2], a[3]);\n\
           b[0] = b[1] * b[2] + b[3];\n\
         }",
        "",
    );
    let arith = float_arith(&p, "k");
    assert_eq!(count(&arith, false), (3, 3), "{arith:?}");
    assert!(arith.iter().all(|&(_, d, h)| !d && h), "{arith:?}");
    let module = rspirv::dr::load_words(&kernel(&p, "k").spirv).unwrap();
    let converts = module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == rspirv::spirv::Op::FConvert)
        .count();
    assert_eq!(converts, 0);
}

#[test]
fn flat_private_vload_compiles() {
    let src = r#"
__kernel void test_fn(__global uchar2 *src, __global uint *offsets, __global uint *alignmentOffsets, __global uchar2 *results)
{
    __private uchar2 sPrivateStorage[128];
    int tid = get_global_id(0);
    for (int i = 0; i < 128; i++)
        sPrivateStorage[i] = src[i];
    uchar2 tmp = vload2(offsets[tid], ((__private uchar *)sPrivateStorage) + alignmentOffsets[tid]);
    results[tid] = tmp;
}
"#;
    build(src, "");
}

#[test]
fn flat_private_vstore_compiles() {
    let src = r#"
__kernel void test_fn(__global uchar2 *srcValues, __global uint *offsets, __global uchar2 *destBuffer, uint alignmentOffset)
{
  __private uchar2 sPrivateStorage[85];
  int tid = get_global_id(0);
  sPrivateStorage[tid] = (uchar2)(uchar)0;
  vstore2(srcValues[tid], offsets[tid], ((__private uchar *)sPrivateStorage) + alignmentOffset);
  uint i;
  __private uchar *sp = (__private uchar*)(sPrivateStorage + offsets[tid]) + alignmentOffset;
  __global uchar *dp = (__global uchar*)(destBuffer + offsets[tid]) + alignmentOffset;
  for (i = 0; i < sizeof(sPrivateStorage[0]) / sizeof(*sp); i++)
    dp[i] = sp[i];
}
"#;
    build(src, "");
}

#[test]
fn preprocessor_macros_kernel_compiles() {
    let src = r#"
#line 2 "some/file.cpp"
__kernel void test( __global int *results, __global char *outFileString, __global char *outRoundingString )
{
#ifdef __IMAGE_SUPPORT__
    results[0] =    __IMAGE_SUPPORT__;
#else
    results[0] = 0xf00baa;
#endif
#ifdef __ENDIAN_LITTLE__
    results[1] =    __ENDIAN_LITTLE__;
#else
    results[1] = 0xf00baa;
#endif
#ifdef __OPENCL_VERSION__
    results[2] =    __OPENCL_VERSION__;
#else
    results[2] = 0xf00baa;
#endif
#ifdef __OPENCL_C_VERSION__
    results[3] =    __OPENCL_C_VERSION__;
#else
    results[3] = 0xf00baa;
#endif
#ifdef __LINE__
    results[4] =    __LINE__;
#else
    results[4] = 0xf00baa;
#endif
#ifdef __kernel_exec
    results[6] = 1;
#else
    results[6] = 0xf00baa;
#endif
    int i;
    constant char *f = "" __FILE__;
   for( i = 0; f[ i ] != 0 && i < 512; i++ )
        outFileString[ i ] = f[ i ];
    outFileString[ i ] = 0;
}
"#;
    build(src, "-cl-std=CL3.0");
}

#[test]
fn work_group_collectives_lower_to_local_memory() {
    let p = build(include_str!("testdata/collective.cl"), "-cl-std=CL3.0");
    for k in [
        "coll_int",
        "coll_uint",
        "coll_long",
        "coll_ulong",
        "coll_float",
        "coll_2d",
    ] {
        // The scratch array: one slot per work-item of the largest group.
        let info = kernel(&p, k);
        assert!(
            info.static_local_mem_bytes >= 4 * 1024,
            "{k}: {}",
            info.static_local_mem_bytes
        );
    }
}

#[test]
fn program_scope_variables_layout_and_initial_image() {
    let src = "global int a = 5;\n\
               global char c = -2;\n\
               global short2 v[2] = { (short2)(1, 2), (short2)(3, 4) };\n\
               global short2 *global p = &v[1];\n\
               global int z;\n\
               kernel void k(global int *o) { o[0] = a + c + v[1].y + p->x + z++; }\n";
    let p = build(src, "-cl-std=CL3.0");
    assert!(p.has_global_variables);
    let g = program_globals(&p.opencl_spirv).unwrap();
    // a @0 (4), c @4 (1), v @8 (2 x 4), p @16 (8), z @24 (4).
    assert_eq!(g.size, 28);
    assert_eq!(&g.init[0..4], &5i32.to_le_bytes());
    assert_eq!(g.init[4], (-2i8) as u8);
    let shorts: Vec<i16> = g.init[8..16]
        .chunks(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(shorts, [1, 2, 3, 4]);
    // p holds the block's address plus v[1]'s offset, written by the runtime.
    assert_eq!(g.relocations, vec![(16, 12)]);
    assert_eq!(&g.init[24..28], &[0; 4]);
    // A program without them has no block.
    let q = build(
        "kernel void k(global int *o) { o[0] = 1; }",
        "-cl-std=CL3.0",
    );
    assert!(!q.has_global_variables);
}

#[test]
fn subgroup_functions_lower_to_non_uniform_operations() {
    let p = build(include_str!("testdata/subgroups.cl"), "-cl-std=CL3.0");
    for k in ["sg_int", "sg_long_float"] {
        let words = &kernel(&p, k).spirv;
        let m = rspirv::dr::load_words(words).unwrap();
        let ops: Vec<_> = m.functions[0]
            .blocks
            .iter()
            .flat_map(|b| b.instructions.iter())
            .map(|i| format!("{:?}", i.class.opcode))
            .collect();
        assert!(ops.iter().any(|o| o.starts_with("GroupNonUniform")), "{k}");
        assert!(
            !ops.iter()
                .any(|o| o.starts_with("Group") && !o.starts_with("GroupNonUniform")),
            "{k}"
        );
    }
}

/// C11 atomics on `__local atomic_double`/`atomic_float` (the CTS's c11_atomics exchange and
/// init kernels): the variables get integer homes, so no atomic on a float remains (lavapipe
/// has no `shaderSharedFloat64Atomics`), and a 64-bit `atomic_store` declares
/// `Int64Atomics` (basic progvar).
#[test]
fn local_float_atomics_use_integer_homes_and_64_bit_stores_declare_int64_atomics() {
    use rspirv::spirv::{Capability, Op};
    for t in ["float", "double", "long"] {
        let src = format!(
            "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\
             #pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
             volatile atomic_{t} pv = ATOMIC_VAR_INIT(0);\n\
             __kernel void k(__global {t} *o, volatile __local atomic_{t} *arg) {{\n\
               __local volatile atomic_{t} d[4];\n\
               uint l = get_local_id(0);\n\
               atomic_init(&d[l & 3], ({t})l);\n\
               atomic_store_explicit(arg + l, ({t})1, memory_order_relaxed, memory_scope_work_group);\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               o[l] = atomic_exchange(&d[l & 3], o[l]) + atomic_load(arg + (l ^ 1));\n\
               atomic_store(&pv, o[l]);\n\
             }}\n"
        );
        let p = build(&src, "-cl-std=CL3.0");
        let m = rspirv::dr::load_words(&p.kernels[0].spirv).expect("module");
        let types = {
            let mut t = std::collections::HashMap::new();
            for i in m.types_global_values.iter().chain(
                m.functions
                    .iter()
                    .flat_map(|f| f.blocks.iter())
                    .flat_map(|b| &b.instructions),
            ) {
                if let (Some(r), Some(ty)) = (i.result_id, i.result_type) {
                    t.insert(r, ty);
                }
            }
            t
        };
        let def = |id: u32| {
            m.types_global_values
                .iter()
                .find(|i| i.result_id == Some(id))
        };
        let is_float = |ty: u32| def(ty).is_some_and(|d| d.class.opcode == Op::TypeFloat);
        let mut atomics = 0;
        for i in m
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter())
            .flat_map(|b| &b.instructions)
        {
            if !format!("{:?}", i.class.opcode).starts_with("Atomic") {
                continue;
            }
            atomics += 1;
            let pointee = crate::compiler::spv::id_operand(i, 0)
                .and_then(|p| types.get(&p))
                .and_then(|pt| def(*pt))
                .and_then(|d| crate::compiler::spv::id_operand(d, 1));
            let sc = crate::compiler::spv::id_operand(i, 0)
                .and_then(|p| types.get(&p))
                .and_then(|pt| def(*pt))
                .and_then(|d| d.operands.first().cloned());
            if sc
                == Some(rspirv::dr::Operand::StorageClass(
                    rspirv::spirv::StorageClass::Workgroup,
                ))
            {
                assert!(
                    !pointee.is_some_and(is_float),
                    "{t}: a float atomic on __local memory remains: {i:?}"
                );
            }
        }
        assert!(atomics >= 4, "{t}: only {atomics} atomics");
        let int64 = m.capabilities.iter().any(|c| {
            c.operands.first() == Some(&rspirv::dr::Operand::Capability(Capability::Int64Atomics))
        });
        assert_eq!(int64, t != "float", "{t}: Int64Atomics declared: {int64}");
    }
}

#[test]
fn noinline_functions_are_found_in_text_ir() {
    let ir = "define dso_local spir_func i32 @keep(i32 noundef %x) #0 {\n\
              define dso_local spir_func i32 addrspace(1)* @no.inl(i32 addrspace(1)* %p) #1 {\n\
              define spir_kernel void @k(i32 addrspace(1)* %a) #2 !kernel_arg_addr_space !3 {\n\
              define dso_local spir_func void @\"quoted name\"() #1 {\n\
              define internal i32 @opt_none(i32 %x) #3 {\n\
              declare spir_func i32 @decl(i32) #1\n\
              attributes #0 = { convergent nounwind \"frame-pointer\"=\"none\" }\n\
              attributes #1 = { convergent noinline nounwind }\n\
              attributes #2 = { convergent norecurse }\n\
              attributes #3 = { noinline optnone }\n";
    assert_eq!(
        inlining::noinline_functions(ir),
        vec!["no.inl".to_string(), "opt_none".to_string()]
    );
    assert!(inlining::noinline_functions("define void @f() #0 {\n").is_empty());
}

#[test]
fn only_external_non_kernel_functions_are_internalized() {
    let ir = "@g = dso_local addrspace(1) global i32 0, align 4\n\
              define dso_local spir_func i32 @f(i32 %x) #0 {\n\
              define spir_func i32 @h(i32 %x) {\n\
              define dso_local spir_kernel void @k(i32 addrspace(1)* %a) #1 {\n\
              define weak_odr dso_local spir_func i32 @w(i32 %x) {\n\
              define internal spir_func i32 @i(i32 %x) {\n\
              declare spir_func i32 @d(i32)\n";
    assert_eq!(
        inlining::internalize_functions(ir),
        "@g = dso_local addrspace(1) global i32 0, align 4\n\
         define internal spir_func i32 @f(i32 %x) #0 {\n\
         define internal spir_func i32 @h(i32 %x) {\n\
         define dso_local spir_kernel void @k(i32 addrspace(1)* %a) #1 {\n\
         define weak_odr dso_local spir_func i32 @w(i32 %x) {\n\
         define internal spir_func i32 @i(i32 %x) {\n\
         declare spir_func i32 @d(i32)\n"
    );
    let kernels_only = "define spir_kernel void @k() {\n";
    assert!(matches!(
        inlining::internalize_functions(kernels_only),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn a_lowered_module_is_validated_once_per_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = crate::util::cache_file::CacheConfig {
        dir: dir.path().to_path_buf(),
        max_bytes: 1 << 20,
    };
    let entries = || {
        std::fs::read_dir(dir.path().join("programs"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let p = build(include_str!("testdata/vadd.cl"), "");
    let words = kernel(&p, "vadd_float").spirv.clone();
    // An invalid module fails and is not recorded.
    let mut m = rspirv::dr::load_words(&words).unwrap();
    m.memory_model = None;
    use rspirv::binary::Assemble;
    let invalid = m.assemble();
    assert!(validate_once(Some(&cfg), &invalid).is_err());
    assert!(validate_once(Some(&cfg), &invalid).is_err());
    assert_eq!(entries(), 0);
    // A valid one is recorded once, then found.
    validate_once(Some(&cfg), &words).unwrap();
    assert_eq!(entries(), 1);
    let hits = cache::HITS.load(std::sync::atomic::Ordering::Relaxed);
    validate_once(Some(&cfg), &words).unwrap();
    assert_eq!(entries(), 1);
    assert!(cache::HITS.load(std::sync::atomic::Ordering::Relaxed) > hits);
    // Without a cache it always validates.
    assert!(validate_once(None, &invalid).is_err());
}
