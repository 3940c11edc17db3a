//! The loop-limit guard variant of a lowered kernel, for llvmpipe's loop limiter (lavapipe
//! from Mesa 22.3; see "Loop-limit guard" in the `compiler` module doc).
//!
//! Mesa 22.3.6's gallivm (`lp_bld_ir_common.c`: `lp_exec_mask_function_init`,
//! `lp_exec_endloop`) keeps one `int` counter per shader call, set to
//! `LP_MAX_TGSI_LOOP_ITERATIONS` (65535, `lp_bld_limits.h`) at the start of the shader and
//! decremented at the end of every pass through the body of any loop (nested, sequential and
//! inlined loops share it; it is never reset). After a decrement that leaves it `<= 0` the loop
//! is left whatever the lanes still in it would do, and so is every later loop after one pass.
//! A compute shader call runs one SIMD vector of invocations (8 on AVX2), so all of them share
//! the count. No loop shape escapes it: Vulkan drivers inline every function, and all NIR
//! loops go through `lp_exec_endloop`.
//!
//! The variant does not change what a kernel computes; it makes a cut visible:
//! - Before every `OpReturn` of the entry point it runs a canary loop of `work_dim + 3` passes
//!   (4 to 6, read from the launch header so no compiler can count them). While the counter
//!   lasts the canary finishes; once it is spent the canary leaves after one pass, and the
//!   kernel stores 1 into the header's `loop_limit_hit` word. (One pass more than two would
//!   do: should NIR peel a pass off the loop, a cut canary still ends short.)
//! - A loop whose merge block is unreachable (`for (;;)` left only by `return`, or never) gets
//!   a latch that also branches to the merge when `work_dim == 0` (never true), and the merge,
//!   reached only when llvmpipe cuts the loop, stores the flag and returns. Without that the
//!   code after the loop is dead and a cut loop would end the invocation silently.
//!
//! The runtime turns the flag into `CL_OUT_OF_RESOURCES` on the command's event. A kernel that
//! spends within a few passes of 65535 without being cut may be reported too (the canary's
//! own passes: measured, a loop of 65,530 iterations passes and one of 65,531 fails); below
//! that no error, above it no silent result.

use rspirv::dr::{Block, Instruction, Operand};
use rspirv::spirv::{LoopControl, MemoryAccess, Op, SelectionControl, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Offset of the `loop_limit_hit` flag (`u32`) in the launch header, bytes (see the ABI).
pub(crate) const LOOP_FLAG: u64 = 4;

/// Whether the module has a loop (`OpLoopMerge`); modules without one need no guard.
pub(crate) fn has_loops(ctx: &Ctx) -> bool {
    ctx.module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .any(|i| i.class.opcode == Op::LoopMerge)
}

struct Ids {
    u32t: Word,
    u64t: Word,
    boolt: Word,
    pc_u64: Word,
    psb_u32: Word,
    pc_var: Word,
    c0: Word,
    c1: Word,
    c3: Word,
    flag_off: Word,
}

/// Appends code that loads `work_dim` from the launch header; returns (`work_dim`, header).
fn load_work_dim(ctx: &mut Ctx, ids: &Ids, out: &mut Vec<Instruction>) -> (Word, Word) {
    let hp = ctx.id();
    out.push(inst(
        Op::AccessChain,
        Some(ids.pc_u64),
        Some(hp),
        vec![Operand::IdRef(ids.pc_var), Operand::IdRef(ids.c0)],
    ));
    let header = ctx.id();
    out.push(inst(
        Op::Load,
        Some(ids.u64t),
        Some(header),
        vec![Operand::IdRef(hp)],
    ));
    let p = ctx.id();
    out.push(inst(
        Op::ConvertUToPtr,
        Some(ids.psb_u32),
        Some(p),
        vec![Operand::IdRef(header)],
    ));
    let wd = ctx.id();
    out.push(inst(
        Op::Load,
        Some(ids.u32t),
        Some(wd),
        vec![
            Operand::IdRef(p),
            Operand::MemoryAccess(MemoryAccess::ALIGNED),
            Operand::LiteralBit32(8),
        ],
    ));
    (wd, header)
}

/// Appends the store of 1 into the header's flag word.
fn raise(ctx: &mut Ctx, ids: &Ids, header: Word, out: &mut Vec<Instruction>) {
    let a = ctx.id();
    out.push(inst(
        Op::IAdd,
        Some(ids.u64t),
        Some(a),
        vec![Operand::IdRef(header), Operand::IdRef(ids.flag_off)],
    ));
    let p = ctx.id();
    out.push(inst(
        Op::ConvertUToPtr,
        Some(ids.psb_u32),
        Some(p),
        vec![Operand::IdRef(a)],
    ));
    out.push(inst(
        Op::Store,
        None,
        None,
        vec![
            Operand::IdRef(p),
            Operand::IdRef(ids.c1),
            Operand::MemoryAccess(MemoryAccess::ALIGNED),
            Operand::LiteralBit32(4),
        ],
    ));
}

fn block(label: Word, instructions: Vec<Instruction>) -> Block {
    Block {
        label: Some(inst(Op::Label, None, Some(label), vec![])),
        instructions,
    }
}

fn branch(target: Word) -> Instruction {
    inst(Op::Branch, None, None, vec![Operand::IdRef(target)])
}

/// Rewrites a finished kernel module into its loop-limit guard variant (module doc).
///
/// # Errors
/// A message when the module has no entry point.
pub(crate) fn guard_loops(ctx: &mut Ctx) -> Result<(), String> {
    if !has_loops(ctx) {
        return Ok(());
    }
    let entry = ctx
        .module
        .entry_points
        .first()
        .and_then(|e| id_operand(e, 1))
        .ok_or("no entry point")?;
    let u32t = ctx.t_int(32);
    let u64t = ctx.t_int(64);
    let boolt = ctx.t_bool();
    let pc_u64 = ctx.t_ptr(StorageClass::PushConstant, u64t);
    let psb_u32 = ctx.t_ptr(StorageClass::PhysicalStorageBuffer, u32t);
    let found = ctx
        .module
        .types_global_values
        .iter()
        .find(|i| {
            i.class.opcode == Op::Variable
                && i.operands.first() == Some(&Operand::StorageClass(StorageClass::PushConstant))
        })
        .and_then(|i| i.result_id);
    let pc_var = match found {
        Some(v) => v,
        None => {
            let v = super::entry::push_constant_block(ctx);
            if let Some(ep) = ctx.module.entry_points.first_mut() {
                ep.operands.push(Operand::IdRef(v));
            }
            v
        }
    };
    let ids = Ids {
        u32t,
        u64t,
        boolt,
        pc_u64,
        psb_u32,
        pc_var,
        c0: ctx.c_u32(0),
        c1: ctx.c_u32(1),
        c3: ctx.c_u32(3),
        flag_off: ctx.c_u64(LOOP_FLAG),
    };
    for f in 0..ctx.module.functions.len() {
        let is_entry = ctx.module.functions[f]
            .def
            .as_ref()
            .and_then(|d| d.result_id)
            == Some(entry);
        let ret_ty = ctx.module.functions[f]
            .def
            .as_ref()
            .and_then(|d| d.result_type)
            .unwrap_or(0);
        let mut blocks = std::mem::take(&mut ctx.module.functions[f].blocks);
        open_unreachable_merges(ctx, &ids, &mut blocks, ret_ty);
        if is_entry {
            blocks = add_canaries(ctx, &ids, blocks);
        }
        ctx.module.functions[f].blocks = blocks;
    }
    let bound = ctx.bound();
    if let Some(h) = ctx.module.header.as_mut() {
        h.bound = bound;
    }
    Ok(())
}

fn label_of(b: &Block) -> Word {
    b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0)
}

/// Gives every loop whose merge block has no predecessor a never-taken exit from its latch,
/// and makes that merge raise the flag and return (module doc).
fn open_unreachable_merges(ctx: &mut Ctx, ids: &Ids, blocks: &mut Vec<Block>, ret_ty: Word) {
    let targets: std::collections::HashSet<Word> = blocks
        .iter()
        .filter_map(|b| b.instructions.last())
        .filter(|t| {
            matches!(
                t.class.opcode,
                Op::Branch | Op::BranchConditional | Op::Switch
            )
        })
        .flat_map(|t| {
            t.operands
                .iter()
                .enumerate()
                .filter_map(|(k, o)| match (t.class.opcode, k, o) {
                    (Op::BranchConditional, 0, _) => None,
                    (Op::Switch, 0, _) => None,
                    (_, _, Operand::IdRef(w)) => Some(*w),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // (header index, header label, merge label)
    let loops: Vec<(usize, Word, Word)> = blocks
        .iter()
        .enumerate()
        .filter_map(|(k, b)| {
            let n = b.instructions.len();
            let lm = b.instructions.get(n.checked_sub(2)?)?;
            (lm.class.opcode == Op::LoopMerge)
                .then(|| (k, label_of(b), id_operand(lm, 0).unwrap_or(0)))
        })
        .filter(|(_, _, m)| !targets.contains(m))
        .collect();
    for (_, header, merge) in loops {
        let Some(hk) = blocks.iter().position(|b| label_of(b) == header) else {
            continue;
        };
        // The latch: a block after the header that branches back to it unconditionally.
        let Some(latch) = (hk..blocks.len()).find(|&k| {
            blocks[k]
                .instructions
                .last()
                .is_some_and(|t| t.class.opcode == Op::Branch && id_operand(t, 0) == Some(header))
        }) else {
            continue;
        };
        let Some(mut mk) = blocks.iter().position(|b| label_of(b) == merge) else {
            continue;
        };
        // The merge now has the latch as its dominator: it must come after it.
        if mk < latch {
            let m = blocks.remove(mk);
            blocks.insert(latch, m);
            mk = latch;
        }
        let latch = if mk == latch { latch - 1 } else { latch };
        let mut code = Vec::new();
        let (wd, _) = load_work_dim(ctx, ids, &mut code);
        let never = ctx.id();
        code.push(inst(
            Op::IEqual,
            Some(ids.boolt),
            Some(never),
            vec![Operand::IdRef(wd), Operand::IdRef(ids.c0)],
        ));
        code.push(inst(
            Op::BranchConditional,
            None,
            None,
            vec![
                Operand::IdRef(never),
                Operand::IdRef(merge),
                Operand::IdRef(header),
            ],
        ));
        let insts = &mut blocks[latch].instructions;
        insts.pop();
        // A one-block loop: the header is its own latch; the test goes before OpLoopMerge.
        let merge_inst = (insts.last().map(|i| i.class.opcode) == Some(Op::LoopMerge))
            .then(|| insts.pop())
            .flatten();
        let br = code.pop();
        insts.extend(code);
        insts.extend(merge_inst);
        insts.extend(br);
        let mut body = Vec::new();
        let (_, h) = load_work_dim(ctx, ids, &mut body);
        raise(ctx, ids, h, &mut body);
        if ret_ty != 0
            && ctx
                .def(ret_ty)
                .is_some_and(|d| d.class.opcode != Op::TypeVoid)
        {
            let undef = ctx.id();
            body.push(inst(Op::Undef, Some(ret_ty), Some(undef), vec![]));
            body.push(inst(
                Op::ReturnValue,
                None,
                None,
                vec![Operand::IdRef(undef)],
            ));
        } else {
            body.push(inst(Op::Return, None, None, vec![]));
        }
        blocks[mk].instructions = body;
    }
}

/// Puts the canary loop before every `OpReturn` of the entry function (module doc).
fn add_canaries(ctx: &mut Ctx, ids: &Ids, blocks: Vec<Block>) -> Vec<Block> {
    let mut out = Vec::with_capacity(blocks.len() + 6);
    for mut b in blocks {
        if b.instructions.last().map(|t| t.class.opcode) != Some(Op::Return) {
            out.push(b);
            continue;
        }
        b.instructions.pop();
        let from = label_of(&b);
        let (lh, lc, lm, lr, le) = (ctx.id(), ctx.id(), ctx.id(), ctx.id(), ctx.id());
        let (wd, header) = load_work_dim(ctx, ids, &mut b.instructions);
        let passes = ctx.id();
        b.instructions.push(inst(
            Op::IAdd,
            Some(ids.u32t),
            Some(passes),
            vec![Operand::IdRef(wd), Operand::IdRef(ids.c3)],
        ));
        b.instructions.push(branch(lh));
        out.push(b);
        let (i, i1, done, short) = (ctx.id(), ctx.id(), ctx.id(), ctx.id());
        out.push(block(
            lh,
            vec![
                inst(
                    Op::Phi,
                    Some(ids.u32t),
                    Some(i),
                    vec![
                        Operand::IdRef(ids.c0),
                        Operand::IdRef(from),
                        Operand::IdRef(i1),
                        Operand::IdRef(lc),
                    ],
                ),
                inst(
                    Op::LoopMerge,
                    None,
                    None,
                    vec![
                        Operand::IdRef(lm),
                        Operand::IdRef(lc),
                        Operand::LoopControl(LoopControl::DONT_UNROLL),
                    ],
                ),
                branch(lc),
            ],
        ));
        // The exit test sits in the latch (the shape LLVM gives a counted loop): with the
        // test in a body block and an empty latch, NIR peels the first pass off the loop.
        out.push(block(
            lc,
            vec![
                inst(
                    Op::IAdd,
                    Some(ids.u32t),
                    Some(i1),
                    vec![Operand::IdRef(i), Operand::IdRef(ids.c1)],
                ),
                inst(
                    Op::UGreaterThanEqual,
                    Some(ids.boolt),
                    Some(done),
                    vec![Operand::IdRef(i1), Operand::IdRef(passes)],
                ),
                inst(
                    Op::BranchConditional,
                    None,
                    None,
                    vec![Operand::IdRef(done), Operand::IdRef(lm), Operand::IdRef(lh)],
                ),
            ],
        ));
        // Left early (i1 != passes) only when llvmpipe cut the canary.
        out.push(block(
            lm,
            vec![
                inst(
                    Op::INotEqual,
                    Some(ids.boolt),
                    Some(short),
                    vec![Operand::IdRef(i1), Operand::IdRef(passes)],
                ),
                inst(
                    Op::SelectionMerge,
                    None,
                    None,
                    vec![
                        Operand::IdRef(le),
                        Operand::SelectionControl(SelectionControl::NONE),
                    ],
                ),
                inst(
                    Op::BranchConditional,
                    None,
                    None,
                    vec![
                        Operand::IdRef(short),
                        Operand::IdRef(lr),
                        Operand::IdRef(le),
                    ],
                ),
            ],
        ));
        let mut raise_code = Vec::new();
        raise(ctx, ids, header, &mut raise_code);
        raise_code.push(branch(le));
        out.push(block(lr, raise_code));
        out.push(block(le, vec![inst(Op::Return, None, None, vec![])]));
    }
    out
}
