//! Vector `OpPhi`s as one phi per component (issue 15, llvmpipe's loop code).
//!
//! LLVM keeps a `float4` that a loop carries as one vector phi, and its rotated loops leave
//! the loop through the latch, so the code after the loop reads the body's last values. In
//! lavapipe's NIR (Mesa 25.0.7) a vector phi stays a vector (`32x4 phi`) while the arithmetic
//! around it is scalar; when llvmpipe leaves SSA, the scalar values live out of the loop cannot
//! share a register with the vector phi that carries them, so each one gets a register of its
//! own, written under the execution mask on every pass (2x the instructions in the hot loop;
//! vkcl-bench's `compute_fp32` at 0.3-0.4x of rusticl on the same Mesa, and at parity once
//! split: docs/performance.md, "lavapipe 25.0.7 against rusticl of the same Mesa"). One
//! scalar phi per component (its incoming values extracted at the end of each predecessor, the
//! vector rebuilt after the block's phis under the old id) lets the scalars coalesce. The
//! result is the same value on every path, on every device.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// (component type, count) of `ty` when it is a vector of numbers or booleans.
fn vector_of_scalars(ctx: &Ctx, ty: Word) -> Option<(Word, u32)> {
    let (elem, n) = ctx.vector_shape(ty)?;
    let scalar = ctx
        .def(elem)
        .is_some_and(|e| matches!(e.class.opcode, Op::TypeFloat | Op::TypeInt | Op::TypeBool));
    scalar.then_some((elem, n))
}

/// Component `k` of the global constant or undefined value `v`, as a global id; `None` when
/// `v` is not such a global (then it is extracted in a block).
fn global_component(ctx: &mut Ctx, v: Word, elem: Word, k: u32) -> Option<Word> {
    let d = ctx.def(v)?.clone();
    match d.class.opcode {
        Op::ConstantComposite => id_operand(&d, k as usize),
        Op::ConstantNull => Some(ctx.global(Op::ConstantNull, Some(elem), vec![])),
        Op::Undef => Some(ctx.global(Op::Undef, Some(elem), vec![])),
        _ => None,
    }
}

/// Index in `b` where instructions that must end the block begin: its terminator and the
/// `OpSelectionMerge`/`OpLoopMerge` before it.
fn end_of_body(b: &[Instruction]) -> usize {
    let mut at = b.len().saturating_sub(1);
    if at > 0 && matches!(b[at - 1].class.opcode, Op::SelectionMerge | Op::LoopMerge) {
        at -= 1;
    }
    at
}

/// Replaces every `OpPhi` of a vector of numbers or booleans by one phi per component and an
/// `OpCompositeConstruct` of them that keeps the phi's id.
///
/// # Errors
/// A phi whose incoming block is not in the function (a malformed module).
pub(crate) fn scalarize_vector_phis(ctx: &mut Ctx) -> Result<(), String> {
    let mut functions = std::mem::take(&mut ctx.module.functions);
    let mut result = Ok(());
    for f in functions.iter_mut() {
        if let Err(e) = scalarize_function(ctx, &mut f.blocks) {
            result = Err(e);
        }
    }
    ctx.module.functions = functions;
    result
}

fn scalarize_function(ctx: &mut Ctx, blocks: &mut [rspirv::dr::Block]) -> Result<(), String> {
    let index: HashMap<Word, usize> = blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((b.label.as_ref()?.result_id?, i)))
        .collect();
    // Extracts to add at the end of predecessors: (block index) -> instructions; and the
    // extract already made for (block, value, component).
    let mut tails: HashMap<usize, Vec<Instruction>> = HashMap::new();
    let mut made: HashMap<(usize, Word, u32), Word> = HashMap::new();
    for block in blocks.iter_mut() {
        let phis = block
            .instructions
            .iter()
            .take_while(|i| i.class.opcode == Op::Phi)
            .count();
        let mut new_phis = Vec::with_capacity(phis);
        let mut constructs = Vec::new();
        let old: Vec<Instruction> = block.instructions.drain(..phis).collect();
        for phi in old {
            let (Some(ty), Some(id)) = (phi.result_type, phi.result_id) else {
                new_phis.push(phi);
                continue;
            };
            let Some((elem, n)) = vector_of_scalars(ctx, ty) else {
                new_phis.push(phi);
                continue;
            };
            let pairs: Vec<(Word, Word)> = phi
                .operands
                .chunks(2)
                .filter_map(|p| match p {
                    [Operand::IdRef(v), Operand::IdRef(b)] => Some((*v, *b)),
                    _ => None,
                })
                .collect();
            let mut parts = Vec::with_capacity(n as usize);
            for k in 0..n {
                let mut ops = Vec::with_capacity(pairs.len() * 2);
                for &(v, pred) in &pairs {
                    let c = match global_component(ctx, v, elem, k) {
                        Some(c) => c,
                        None => {
                            let &pi = index.get(&pred).ok_or_else(|| {
                                format!("phi %{id}: incoming block %{pred} is not in the function")
                            })?;
                            match made.get(&(pi, v, k)) {
                                Some(&c) => c,
                                None => {
                                    let c = ctx.id();
                                    tails.entry(pi).or_default().push(inst(
                                        Op::CompositeExtract,
                                        Some(elem),
                                        Some(c),
                                        vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
                                    ));
                                    made.insert((pi, v, k), c);
                                    c
                                }
                            }
                        }
                    };
                    ops.push(Operand::IdRef(c));
                    ops.push(Operand::IdRef(pred));
                }
                let s = ctx.id();
                new_phis.push(inst(Op::Phi, Some(elem), Some(s), ops));
                parts.push(Operand::IdRef(s));
            }
            constructs.push(inst(Op::CompositeConstruct, Some(ty), Some(id), parts));
        }
        let rest = std::mem::take(&mut block.instructions);
        block.instructions = new_phis.into_iter().chain(constructs).chain(rest).collect();
    }
    for (bi, extracts) in tails {
        let b = &mut blocks[bi].instructions;
        let at = end_of_body(b);
        b.splice(at..at, extracts);
    }
    Ok(())
}
