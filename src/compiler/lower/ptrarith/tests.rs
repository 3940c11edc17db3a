//! The lowered modules keep no element step of a physical pointer that may be negative.

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::Op;

use crate::compiler::spv::id_operand;
use crate::compiler::{compile_source, find_tools, validate, CompiledProgram, DeviceCaps};

/// Builds `src` for lavapipe's capabilities; every kernel must pass spirv-val.
fn build(src: &str) -> CompiledProgram {
    let tools = find_tools().expect("clang-15, opt-15 and llvm-spirv-15 are needed");
    let p = compile_source(&tools, src, "", &DeviceCaps::default())
        .unwrap_or_else(|e| panic!("build failed ({:?}):\n{}", e.kind, e.log));
    for k in &p.kernels {
        if let Err(e) = validate::validate_vulkan(&k.spirv) {
            panic!("kernel {} does not validate: {e}", k.name);
        }
    }
    p
}

fn def(m: &Module, id: u32) -> Option<&Instruction> {
    m.types_global_values
        .iter()
        .find(|i| i.result_id == Some(id))
}

/// Every `OpPtrAccessChain` element of kernel `words`, as `Some(constant value)` (sign-extended
/// from its width) or `None` when it is not a constant.
fn chain_elements(words: &[u32]) -> (Vec<Option<i64>>, usize) {
    let m = rspirv::dr::load_words(words).expect("lowered module parses");
    let mut elems = Vec::new();
    let mut ptr_to_u = 0;
    for i in m
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| &b.instructions)
    {
        match i.class.opcode {
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                let e = id_operand(i, 1).expect("element");
                let v = def(&m, e).and_then(|d| {
                    let w = d
                        .result_type
                        .and_then(|t| def(&m, t))
                        .and_then(|t| match t.operands.first() {
                            Some(Operand::LiteralBit32(w)) => Some(*w),
                            _ => None,
                        })
                        .unwrap_or(32);
                    match (d.class.opcode, d.operands.first()) {
                        (Op::ConstantNull, _) => Some(0),
                        (Op::Constant, Some(Operand::LiteralBit32(v))) => {
                            let sh = 64 - w.min(32);
                            Some(((u64::from(*v) << sh) as i64) >> sh)
                        }
                        (Op::Constant, Some(Operand::LiteralBit64(v))) => Some(*v as i64),
                        _ => None,
                    }
                });
                elems.push(v);
            }
            Op::ConvertPtrToU => ptr_to_u += 1,
            _ => {}
        }
    }
    (elems, ptr_to_u)
}

/// `vstore16(v, 1, out + i * 40 - 8)` of tests/widevec.rs `arguments_by_value` (the store that
/// faults the H200) and negative constant and dynamic steps of scalars, vectors, structs and
/// wide vectors: no chain with a negative or dynamic element remains; the steps became
/// integer arithmetic.
#[test]
fn negative_and_dynamic_steps_become_integer_arithmetic() {
    let p = build(include_str!("../../testdata/widevec.cl"));
    let k = p
        .kernels
        .iter()
        .find(|k| k.name == "by_value")
        .expect("by_value");
    let (elems, ptr_to_u) = chain_elements(&k.spirv);
    assert!(
        elems
            .iter()
            .all(|e| e.is_some_and(|v| (0..1 << 31).contains(&v))),
        "by_value keeps chains with elements {elems:?}"
    );
    assert!(ptr_to_u > 0, "by_value: no integer address arithmetic");

    let p = build(
        "typedef struct { int a; float b; long c; } S;\n\
         __kernel void k(__global int *p, __global float16 *w, __global S *s, int n) {\n\
           int i = get_global_id(0);\n\
           __global int *q = p + 8 * i + 4;\n\
           q[-1] = q[-3] + 1;\n\
           vstore4(vload4(0, q - 4), -1, q + 8);\n\
           p[i - n] = 7;\n\
           ((__global long *)q)[-2] = 5;\n\
           w[i - 1] = w[-1 + i] * 2.0f;\n\
           vstore16(vload16(-1, (__global float *)(w + i)), 0, (__global float *)w);\n\
           s[i - 1].c = s[i].a;\n\
           (s + i)[-1].b = 1.0f;\n\
         }\n",
    );
    let (elems, ptr_to_u) = chain_elements(&p.kernels[0].spirv);
    assert!(
        elems
            .iter()
            .all(|e| e.is_some_and(|v| (0..1 << 31).contains(&v))),
        "chains with elements {elems:?} remain"
    );
    assert!(ptr_to_u >= 8, "only {ptr_to_u} integer address steps");
}
