//! Tests of the final clean-up ([`super`]) on kernels compiled from OpenCL C.

use crate::compiler::{compile_source, find_tools, DeviceCaps};
use rspirv::dr::Operand;
use rspirv::spirv::{Op, StorageClass};

/// A list node holds a pointer to its own struct type: llvm-spirv forward-declares the
/// pointer, and the lowered module keeps one `OpTypeForwardPointer` in
/// `PhysicalStorageBuffer`, before the struct, which comes before the pointer type.
#[test]
fn a_struct_pointing_to_itself_is_forward_declared() {
    let src = "
        struct node { __global struct node *next; int value; };
        __kernel void walk(__global ulong *head, __global int *out) {
            __global struct node *p = (__global struct node *)head[0];
            int sum = 0;
            while (p) { sum += p->value; p = p->next; }
            *out = sum;
        }";
    let tools = find_tools().expect("clang-15, opt-15 and llvm-spirv-15");
    let p = compile_source(&tools, src, "", &DeviceCaps::default())
        .unwrap_or_else(|e| panic!("build failed: {}", e.log));
    let k = &p.kernels[0];
    crate::compiler::validate::validate_vulkan(&k.spirv).expect("spirv-val");
    let m = rspirv::dr::load_words(&k.spirv).unwrap();
    let globals = &m.types_global_values;
    let pos = |f: &dyn Fn(&rspirv::dr::Instruction) -> bool| globals.iter().position(f);
    let fwd: Vec<_> = globals
        .iter()
        .filter(|i| i.class.opcode == Op::TypeForwardPointer)
        .collect();
    assert_eq!(fwd.len(), 1, "one forward declaration");
    assert_eq!(
        fwd[0].operands[1],
        Operand::StorageClass(StorageClass::PhysicalStorageBuffer)
    );
    let Operand::IdRef(ptr) = fwd[0].operands[0] else {
        panic!("forward pointer operand")
    };
    let at_ptr = pos(&|i| i.result_id == Some(ptr)).expect("the pointer type");
    let Operand::IdRef(node) = globals[at_ptr].operands[1] else {
        panic!("pointee")
    };
    let at_node = pos(&|i| i.result_id == Some(node)).expect("the struct");
    let at_fwd = pos(&|i| i.class.opcode == Op::TypeForwardPointer).unwrap();
    assert_eq!(globals[at_node].class.opcode, Op::TypeStruct);
    assert!(
        at_fwd < at_node && at_node < at_ptr,
        "{at_fwd} < {at_node} < {at_ptr}"
    );
}
