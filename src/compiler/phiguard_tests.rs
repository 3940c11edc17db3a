//! Tests of the loop-vector guard ([`super`]): the text rewrite, what opt-15 makes of the
//! guarded pattern, and the SPIR-V clean-up.

use super::*;
use crate::compiler::tools::{find_tools, run};

/// A kernel whose loop (blocks 5 -> 7 -> 5) stores a vector, a store of the same vector
/// before the loop, a constant store, a scalar store of a bitcast vector, a phi with fast-math
/// flags in the loop, and a helper (called) with a straight-line store.
const MODULE: &str = "\
define spir_func void @h(<2 x i32>* %p, <2 x i32> %x) {
  store <2 x i32> %x, <2 x i32>* %p, align 8
  ret void
}

define spir_kernel void @k(<2 x i32>* %p, i64* %q, <2 x float> %f) {
  %1 = load <2 x i32>, <2 x i32>* %p, align 8
  store <2 x i32> %1, <2 x i32>* %p, align 8
  br label %5

5:                                                ; preds = %7, %0
  %6 = phi fast <2 x float> [ %f, %0 ], [ %9, %7 ]
  %12 = phi i32 [ 0, %0 ], [ %13, %7 ]
  br label %7

7:                                                ; preds = %5
  %8 = sub <2 x i32> <i32 100, i32 7>, %1
  store <2 x i32> %8, <2 x i32>* %p, align 8
  store <2 x i32> <i32 1, i32 2>, <2 x i32>* %p, align 8
  %9 = fsub fast <2 x float> %6, %6
  %10 = bitcast <2 x float> %9 to i64
  store volatile i64 %10, i64* %q, align 8
  %13 = add i32 %12, 1
  call spir_func void @h(<2 x i32>* %p, <2 x i32> %8)
  %14 = icmp slt i32 %13, 4
  br i1 %14, label %5, label %15

15:                                               ; preds = %7
  ret void
}
";

#[test]
fn guard_keeps_what_a_cycle_can_carry() {
    let out = guard(MODULE).expect("the module has loop-carried vectors");
    let expect = [
        // The helper is called: its straight-line store is kept.
        "  %vkcl.keep.0 = call spir_func <2 x i32> @__vkcl_keep.v2i32(<2 x i32> %x)\n  \
         store <2 x i32> %vkcl.keep.0, <2 x i32>* %p, align 8\n",
        // The kernel's store before the loop is not.
        "  %1 = load <2 x i32>, <2 x i32>* %p, align 8\n  store <2 x i32> %1, <2 x i32>* %p",
        // The phi (after the block's phis) and its uses, its own name left alone.
        "  %6 = phi fast <2 x float> [ %f, %0 ], [ %9, %7 ]\n  %12 = phi i32 [ 0, %0 ], [ %13, %7 ]\n  \
         %vkcl.keep.1 = call spir_func <2 x float> @__vkcl_keep.v2float(<2 x float> %6)\n  br label %7\n",
        "  %9 = fsub fast <2 x float> %vkcl.keep.1, %vkcl.keep.1\n",
        // The loop's vector store, not its constant one.
        "  %vkcl.keep.2 = call spir_func <2 x i32> @__vkcl_keep.v2i32(<2 x i32> %8)\n  \
         store <2 x i32> %vkcl.keep.2, <2 x i32>* %p, align 8\n  \
         store <2 x i32> <i32 1, i32 2>, <2 x i32>* %p, align 8\n",
        // A scalar made from a vector.
        "  %vkcl.keep.3 = call spir_func i64 @__vkcl_keep.i64(i64 %10)\n  \
         store volatile i64 %vkcl.keep.3, i64* %q, align 8\n",
        "declare spir_func <2 x float> @__vkcl_keep.v2float(<2 x float>) nounwind readnone willreturn\n",
        "declare spir_func <2 x i32> @__vkcl_keep.v2i32(<2 x i32>) nounwind readnone willreturn\n",
        "declare spir_func i64 @__vkcl_keep.i64(i64) nounwind readnone willreturn\n",
    ];
    for e in expect {
        assert!(out.contains(e), "missing:\n{e}\nin:\n{out}");
    }
    assert_eq!(out.matches(" = call spir_func").count(), 4, "{out}");
    // Nothing to keep: no rewrite.
    let straight = "define spir_kernel void @k(<2 x i32>* %p) {\n  %1 = load <2 x i32>, <2 x i32>* %p\n  \
                    %2 = sub <2 x i32> zeroinitializer, %1\n  store <2 x i32> %2, <2 x i32>* %p\n  ret void\n}\n";
    assert_eq!(guard(straight), None);
}

/// clang-15's unoptimized IR of `source` as text.
fn clang_ir(source: &str) -> String {
    let tools = find_tools().expect("clang-15 and opt-15 must be installed for these tests");
    let args: Vec<String> = [
        "-x",
        "cl",
        "-target",
        "spir64",
        "-emit-llvm",
        "-S",
        "-O2",
        "-Xclang",
        "-disable-llvm-passes",
        "-",
        "-o",
        "-",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run(&tools.clang, &args, Some(source.as_bytes())).expect("clang runs");
    assert!(out.success, "{}", out.stderr);
    out.stdout
}

/// `opt-15 -passes=sroa,instcombine` of text IR `ir`, as text.
fn sroa_instcombine(ir: &str) -> String {
    let tools = find_tools().expect("opt-15 must be installed for these tests");
    let args: Vec<String> = ["-passes=sroa,instcombine", "-S", "-", "-o", "-"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out = run(&tools.opt, &args, Some(ir.as_bytes())).expect("opt runs");
    assert!(out.success, "{}", out.stderr);
    out.stdout
}

#[test]
fn opt_keeps_the_operands_of_a_guarded_loop_vector() {
    let src = "__kernel void k(__global uint *out, __global const uint *in) {\n\
               uint2 v = (uint2)(in[0], in[1]);\n\
               for (int j = 0; j < (int)in[2]; j++) v = (uint2)(100u, 7u) - v;\n\
               out[0] = v.y;\n}\n";
    let ir = clang_ir(src);
    // Unguarded, InstCombine's scalarizePHI computes `v.y - 7` (LLVM 15): the test can fail.
    let bare = sroa_instcombine(&ir);
    assert!(
        bare.contains(", -7\n"),
        "opt-15 no longer swaps the operands:\n{bare}"
    );
    let guarded = sroa_instcombine(&guard(&ir).expect("a loop-carried vector"));
    assert!(!guarded.contains(", -7\n"), "{guarded}");
    assert!(
        guarded.contains("sub <2 x i32> <i32 100, i32 7>, %"),
        "the vector operation should stay whole:\n{guarded}"
    );
}

#[test]
fn no_keep_call_reaches_the_lowering() {
    let src = "uint f(uint2 p) { for (int i = 1; i <= 1; i++) p = ((uint2)(0u) - p).s01; return p.s1; }\n\
               __kernel void k(__global uint *out) { out[get_global_id(0)] = f((uint2)(4294967295u, 4294967294u)); }\n";
    let tools = find_tools().expect("tools");
    let p = crate::compiler::compile_source(
        &tools,
        src,
        "",
        &crate::compiler::caps::DeviceCaps::default(),
    )
    .unwrap_or_else(|e| panic!("build failed: {}", e.log));
    let module = rspirv::dr::load_words(&p.opencl_spirv).expect("parses");
    let text = format!("{:?}", module.debug_names);
    assert!(!text.contains(KEEP), "{text}");
    // Only llvm-spirv's kernel entry wrappers call, and only functions with a body.
    let defined: Vec<u32> = module
        .functions
        .iter()
        .filter(|f| !f.blocks.is_empty())
        .filter_map(|f| f.def_id())
        .collect();
    for i in module.all_inst_iter() {
        if i.class.opcode == rspirv::spirv::Op::FunctionCall {
            let callee = match i.operands.first() {
                Some(rspirv::dr::Operand::IdRef(c)) => *c,
                _ => 0,
            };
            assert!(defined.contains(&callee), "a call of a declaration is left");
        }
    }
}
