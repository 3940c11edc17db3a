//! Numeric `OpUndef`s as `OpConstantNull`, for NVIDIA's driver.
//!
//! LLVM leaves `undef` where a value is never read on a path, most often as the entry value
//! of a loop phi whose first value is written inside the loop (a promoted store, a value
//! carried out of the loop). NVIDIA's Vulkan driver (580, measured on an H100 on
//! 2026-12-07) miscompiled such loops: `for (int i = -2; i < (convert_int_sat(0L) & 7); i += 2)
//! a[k] = 3;` ran no pass, and the stored value was the undefined one (each work-item's
//! global id, or garbage), where lavapipe ran it once (vkcl-difftest seed 400148,
//! docs/difftest.md). Giving the operands of signed comparisons signed types did not change
//! it; defining the undefined values as zero did, in all three variants that failed.
//!
//! An undefined value may be any value, so zero is always a correct choice: the pass only
//! removes the driver's freedom. It turns every `OpUndef` of an integer, float or boolean
//! scalar or vector into `OpConstantNull` of the same type. It runs where the device asks for
//! it ([`DeviceCaps::undef_as_null`](crate::compiler::DeviceCaps): NVIDIA's driver, or
//! `VKCL_UNDEF_AS_NULL=1`).

use rspirv::dr::Operand;
use rspirv::spirv::Op;

use super::ctx::Ctx;
use crate::compiler::spv::inst;

/// Turns every numeric `OpUndef` of the module into `OpConstantNull` (see the module doc).
pub(crate) fn define_undefs(ctx: &mut Ctx) {
    let numeric: Vec<bool> = ctx
        .module
        .types_global_values
        .iter()
        .map(|i| {
            i.class.opcode == Op::Undef
                && i.result_type.is_some_and(|t| {
                    let d = ctx.def(t);
                    let elem = match d.map(|d| (d.class.opcode, d.operands.first())) {
                        Some((Op::TypeVector, Some(Operand::IdRef(e)))) => ctx.def(*e),
                        _ => d,
                    };
                    elem.is_some_and(|e| {
                        matches!(e.class.opcode, Op::TypeInt | Op::TypeFloat | Op::TypeBool)
                    })
                })
        })
        .collect();
    for (i, n) in ctx.module.types_global_values.iter_mut().zip(numeric) {
        if n {
            *i = inst(Op::ConstantNull, i.result_type, i.result_id, vec![]);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compiler::{compile_source, find_tools, DeviceCaps};

    /// Seed 400148's kernel: its loop-carried `uchar` enters the loop undefined.
    const SEED_400148: &str = "__kernel void k(__global uint *out, __global const uint *in) {\n\
        uint gid = ((uint)get_global_id(0));\n\
        uint h = 2166136261u;\n\
        uint v9 = in[(0u) & 63u];\n\
        uchar v10[8] = {0, 0, 0, 1, 0, 0, clamp(((uchar)29), ((uchar)1), ((uchar)250)), 3};\n\
        for (int i13 = -2; i13 < (convert_int_sat(0L) & 7); i13 += 2) {\n\
          v10[v9] = ((uchar)min(3UL, 11543101502803392491UL));\n\
        }\n\
        h = ((uint)v10[0]);\n\
        out[0u + gid] = h;\n}\n";

    /// The opcodes of a module's instructions (after the 5-word header).
    fn opcodes(words: &[u32]) -> Vec<u32> {
        let (mut out, mut i) = (Vec::new(), 5);
        while i < words.len() {
            out.push(words[i] & 0xffff);
            i += ((words[i] >> 16) as usize).max(1);
        }
        out
    }

    #[test]
    fn the_seed_kernels_undefined_value_becomes_a_null_constant() {
        let tools = find_tools().expect("clang-15, opt-15 and llvm-spirv-15 must be installed");
        let build = |undef_as_null| {
            let caps = DeviceCaps {
                undef_as_null,
                ..DeviceCaps::default()
            };
            let p = compile_source(&tools, SEED_400148, "", &caps).expect("builds");
            opcodes(&p.kernels[0].spirv)
        };
        // OpUndef is opcode 1, OpConstantNull 46.
        let plain = build(false);
        assert!(
            plain.contains(&1),
            "the plain module has no OpUndef: the test lost its shape"
        );
        let defined = build(true);
        assert!(!defined.contains(&1), "an OpUndef is left");
        assert_eq!(
            defined.iter().filter(|&&o| o == 46).count(),
            plain.iter().filter(|&&o| o == 46).count() + plain.iter().filter(|&&o| o == 1).count(),
            "each OpUndef became one OpConstantNull"
        );
    }
}
