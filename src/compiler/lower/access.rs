//! Access chains into `Function`/`Private` memory are re-emitted right before each load or
//! store that uses them, and the originals dropped once unused.
//!
//! Lavapipe from Mesa 22.3 (llvmpipe's NIR back end, `lp_build_nir_llvm`) runs
//! `nir_convert_from_ssa` before `nir_lower_locals_to_regs`, and the latter reads an array
//! deref's index at the load or store (`b->cursor = nir_before_instr(&intrin->instr)`), not at
//! the deref. After out-of-SSA the index may be a register that a phi web shares with a later
//! value, so an instruction between the access chain and the access that updates that web
//! changes the index the access sees: `if (in[i] > 0) zs[n++] = in[i];`, where LLVM emits
//! `chain = &zs[n]; n1 = n + 1; store chain`, stored at `n + 1` (issue 18, finding 1:
//! `{5, 0, 7}` instead of `{5, 7, 2}`). The module was valid and is right on the H200 and on
//! lavapipe 25.0.7; with the chain next to its access the index is read where SPIR-V reads
//! it. The rewrite changes no semantics, so it runs for every driver.
//!
//! A load and a store of one element through one chain with a counter update between them
//! (`zs[n] += x` with `n++` scheduled between the load and the store) may still be merged back
//! into one deref by NIR's CSE; the tests cover the shapes LLVM emits for the common
//! patterns.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, used_ids};

fn is_chain(op: Op) -> bool {
    matches!(
        op,
        Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain
    )
}

/// Re-emits the kernel function's `Function`/`Private` access chains before their loads and
/// stores (see the module doc).
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn sink_private_access_chains(ctx: &mut Ctx) -> Result<(), String> {
    let Some(f) = ctx.module.functions.first() else {
        return Ok(());
    };
    let mut chains: HashMap<Word, Instruction> = HashMap::new();
    for i in f.blocks.iter().flat_map(|b| b.instructions.iter()) {
        if !is_chain(i.class.opcode) {
            continue;
        }
        let private = i
            .result_type
            .and_then(|t| ctx.ptr_info(t))
            .is_some_and(|(sc, _)| matches!(sc, StorageClass::Function | StorageClass::Private));
        if let (true, Some(id)) = (private, i.result_id) {
            chains.insert(id, i.clone());
        }
    }
    if chains.is_empty() {
        return Ok(());
    }
    let mut blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    for b in &mut blocks {
        let mut out = Vec::with_capacity(b.instructions.len());
        for mut i in std::mem::take(&mut b.instructions) {
            let ptr_operands: &[usize] = match i.class.opcode {
                Op::Load => &[0],
                Op::Store => &[0],
                Op::CopyMemory => &[0, 1],
                _ => &[],
            };
            for &k in ptr_operands {
                if let Some(p) = id_operand(&i, k).filter(|p| chains.contains_key(p)) {
                    let fresh = clone_chain(ctx, &chains, p, &mut out);
                    i.operands[k] = Operand::IdRef(fresh);
                }
            }
            out.push(i);
        }
        b.instructions = out;
    }
    // Drop the original chains nothing uses any more (a chain may feed another chain).
    loop {
        let used: HashSet<Word> = blocks
            .iter()
            .flat_map(|b| b.instructions.iter())
            .flat_map(used_ids)
            .collect();
        let before: usize = blocks.iter().map(|b| b.instructions.len()).sum();
        for b in &mut blocks {
            b.instructions.retain(|i| {
                !i.result_id
                    .is_some_and(|id| chains.contains_key(&id) && !used.contains(&id))
            });
        }
        let after: usize = blocks.iter().map(|b| b.instructions.len()).sum();
        if after == before {
            break;
        }
    }
    ctx.module.functions[0].blocks = blocks;
    // Names and decorations of dropped chains would name undefined ids.
    let live: HashSet<Word> = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter_map(|i| i.result_id)
        .collect();
    let dropped = |i: &Instruction| {
        id_operand(i, 0).is_some_and(|t| chains.contains_key(&t) && !live.contains(&t))
    };
    ctx.module.debug_names.retain(|i| !dropped(i));
    ctx.module.annotations.retain(|i| !dropped(i));
    Ok(())
}

/// Emits a copy of chain `id` (and of the chains its base comes from) into `out`; returns the
/// copy's id.
fn clone_chain(
    ctx: &mut Ctx,
    chains: &HashMap<Word, Instruction>,
    id: Word,
    out: &mut Vec<Instruction>,
) -> Word {
    let mut c = chains[&id].clone();
    if let Some(base) = id_operand(&c, 0).filter(|b| chains.contains_key(b)) {
        c.operands[0] = Operand::IdRef(clone_chain(ctx, chains, base, out));
    }
    let fresh = ctx.id();
    c.result_id = Some(fresh);
    out.push(c);
    fresh
}
