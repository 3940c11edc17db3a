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
//! On the same lavapipe a loop that follows a loop whose exit depends on loaded data (`do
//! { s += in[s]; } while (s < n); for (j = 0; j < m; j++) ...`, or any loop over a volatile
//! location) is also left after one pass, with no 65535 passes spent (measured, issue 18): the
//! second loop's results are silently wrong. The guard catches that too.
//!
//! The variant does not change what a kernel computes; it makes a cut visible:
//! - Every loop with a reachable merge gets a private mark (a Function variable): at each
//!   pass through the header it gets `work_dim >> 8` (0), on each edge to the merge
//!   `work_dim` (not 0; for a conditional branch, a select on whether it goes there). Both
//!   come from the launch header, so no compiler can fold the check. The merge block reads
//!   the mark first; `work_dim >> 8` there means the invocation arrived without taking any
//!   exit, so the driver cut the loop, and it stores 1 into the header's `loop_limit_hit`.
//!   (A `u32[2]` array at an opaque index lost values of the loop on lavapipe 22.3.6.) A merge that heads another loop is not
//!   checked, nor are edges of an `OpSwitch` (vkcl's structurizer emits neither in practice).
//! - A loop whose merge block is unreachable (`for (;;)` left only by `return`, or never) gets
//!   a latch that also branches to the merge when `work_dim == 0` (never true), and the merge,
//!   reached only when llvmpipe cuts the loop, stores the flag and returns. Without that the
//!   code after the loop is dead and a cut loop would end the invocation silently.
//!
//! The runtime turns the flag into `CL_OUT_OF_RESOURCES` on the command's event. Measured on
//! Mesa 22.3.6: a loop of 65,534 iterations passes, one of 65,535 (right, but cut in its last
//! pass) or 65,536 fails; nested 200 x 200 passes, 400 x 400 fails; a `while (1)` loop left
//! by `break` after 5 passes passes. A cut in the pass where the loop would have left anyway
//! is reported too (its results happen to be right).

use rspirv::dr::{Block, Instruction, Operand};
use rspirv::spirv::{MemoryAccess, Op, SelectionControl, StorageClass, Word};

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
    if ctx.module.entry_points.is_empty() {
        return Err("no entry point".into());
    }
    let u32t = ctx.t_int(32);
    let u64t = ctx.t_int(64);
    let boolt = ctx.t_bool();
    let pc_u64 = ctx.t_ptr(StorageClass::PushConstant, u64t);
    let psb_u32 = ctx.t_ptr(StorageClass::PhysicalStorageBuffer, u32t);
    let found = super::entry::push_constant_var(ctx);
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
        flag_off: ctx.c_u64(LOOP_FLAG),
    };
    for f in 0..ctx.module.functions.len() {
        let ret_ty = ctx.module.functions[f]
            .def
            .as_ref()
            .and_then(|d| d.result_type)
            .unwrap_or(0);
        let mut blocks = std::mem::take(&mut ctx.module.functions[f].blocks);
        open_unreachable_merges(ctx, &ids, &mut blocks, ret_ty);
        blocks = mark_exits(ctx, &ids, blocks);
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

/// Branch targets of the terminators of `blocks`.
fn branch_targets(blocks: &[Block]) -> std::collections::HashSet<Word> {
    blocks
        .iter()
        .filter_map(|b| b.instructions.last())
        .flat_map(targets_of)
        .collect()
}

fn targets_of(t: &Instruction) -> Vec<Word> {
    match t.class.opcode {
        Op::Branch => id_operand(t, 0).into_iter().collect(),
        Op::BranchConditional => [1, 2].iter().filter_map(|&k| id_operand(t, k)).collect(),
        Op::Switch => t
            .operands
            .iter()
            .enumerate()
            .filter_map(|(k, o)| match o {
                Operand::IdRef(w) if k > 0 => Some(*w),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Index of the first instruction of `b` after its `OpPhi`s (and `OpVariable`s).
fn after_phis(b: &Block) -> usize {
    b.instructions
        .iter()
        .take_while(|i| matches!(i.class.opcode, Op::Phi | Op::Variable))
        .count()
}

/// Index where code goes before `b`'s terminator and its merge instruction.
fn before_terminator(b: &Block) -> usize {
    let n = b.instructions.len();
    match b
        .instructions
        .get(n.wrapping_sub(2))
        .map(|i| i.class.opcode)
    {
        Some(Op::SelectionMerge | Op::LoopMerge) => n - 2,
        _ => n.saturating_sub(1),
    }
}

/// Marks every legitimate exit of every loop with a reachable merge and checks the mark at
/// the merge (module doc): `mark[opaque 0] = 0` at each pass through the header, `= 1` on
/// each edge to the merge, and the merge raises the flag when it finds 0 (a lane that left
/// the loop without taking an exit: llvmpipe cut it).
fn mark_exits(ctx: &mut Ctx, ids: &Ids, mut blocks: Vec<Block>) -> Vec<Block> {
    let targets = branch_targets(&blocks);
    let loops: Vec<(Word, Word)> = blocks
        .iter()
        .filter_map(|b| {
            let n = b.instructions.len();
            let lm = b.instructions.get(n.checked_sub(2)?)?;
            let merge = id_operand(lm, 0)?;
            (lm.class.opcode == Op::LoopMerge).then_some((label_of(b), merge))
        })
        .filter(|(_, m)| targets.contains(m))
        .collect();
    if loops.is_empty() || blocks.is_empty() {
        return blocks;
    }
    let c8 = ctx.c_u32(8);
    let pu32 = ctx.t_ptr(StorageClass::Function, ids.u32t);
    // Function start: one mark per loop, an opaque 0 (`work_dim >> 8`) and an opaque non-zero
    // (`work_dim`), and the launch header's address.
    let vars: Vec<Word> = loops.iter().map(|_| ctx.id()).collect();
    let mut code = Vec::new();
    let (wd, header) = load_work_dim(ctx, ids, &mut code);
    let oi = ctx.id();
    code.push(inst(
        Op::ShiftRightLogical,
        Some(ids.u32t),
        Some(oi),
        vec![Operand::IdRef(wd), Operand::IdRef(c8)],
    ));
    let nvars = blocks[0]
        .instructions
        .iter()
        .take_while(|i| i.class.opcode == Op::Variable)
        .count();
    let decls = vars.iter().map(|&v| {
        inst(
            Op::Variable,
            Some(pu32),
            Some(v),
            vec![Operand::StorageClass(StorageClass::Function)],
        )
    });
    let first = &mut blocks[0].instructions;
    let tail = first.split_off(nvars);
    first.extend(decls);
    first.extend(code);
    first.extend(tail);

    // The marks are plain variables; what they hold are opaque values, so that no compiler
    // can tell at the merge that every exit stored "left" (a constant would fold the check).
    let (zero, one) = (oi, wd);
    let chain = |_: &mut Ctx, var: Word, _: &mut Vec<Instruction>| var;
    let store = |p: Word, v: Word| {
        inst(
            Op::Store,
            None,
            None,
            vec![Operand::IdRef(p), Operand::IdRef(v)],
        )
    };
    for (&(h, m), &var) in loops.iter().zip(&vars) {
        // Every pass through the header: mark = 0.
        if let Some(hb) = blocks.iter_mut().position(|b| label_of(b) == h) {
            let mut c = Vec::new();
            let p = chain(ctx, var, &mut c);
            c.push(store(p, zero));
            let at = after_phis(&blocks[hb]);
            blocks[hb].instructions.splice(at..at, c);
        }
        // Every edge to the merge: mark = 1 (for a conditional branch, whether it is taken).
        for b in blocks.iter_mut() {
            if label_of(b) == m {
                continue;
            }
            let Some(t) = b.instructions.last() else {
                continue;
            };
            let value = match t.class.opcode {
                Op::Branch if id_operand(t, 0) == Some(m) => Some((None, true)),
                Op::BranchConditional => {
                    let (c, tt, ff) = (id_operand(t, 0), id_operand(t, 1), id_operand(t, 2));
                    match (tt == Some(m), ff == Some(m)) {
                        (true, true) => Some((None, true)),
                        (true, false) => c.map(|c| (Some(c), true)),
                        (false, true) => c.map(|c| (Some(c), false)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some((cond, when_true)) = value else {
                continue;
            };
            let mut c = Vec::new();
            let v = match cond {
                None => one,
                Some(cond) => {
                    let v = ctx.id();
                    let (a, b) = if when_true {
                        (ids.c1, ids.c0)
                    } else {
                        (ids.c0, ids.c1)
                    };
                    c.push(inst(
                        Op::Select,
                        Some(ids.u32t),
                        Some(v),
                        vec![Operand::IdRef(cond), Operand::IdRef(a), Operand::IdRef(b)],
                    ));
                    v
                }
            };
            let p = chain(ctx, var, &mut c);
            c.push(store(p, v));
            let at = before_terminator(b);
            b.instructions.splice(at..at, c);
        }
        // The merge: check the mark, then the merge's own code in a new block.
        let Some(mk) = blocks.iter().position(|b| label_of(b) == m) else {
            continue;
        };
        if blocks[mk]
            .instructions
            .iter()
            .any(|i| i.class.opcode == Op::LoopMerge)
        {
            // The merge heads another loop: left unchecked (documented).
            continue;
        }
        let (m2, lr) = (ctx.id(), ctx.id());
        let at = after_phis(&blocks[mk]);
        let rest = blocks[mk].instructions.split_off(at);
        let mut c = Vec::new();
        let p = chain(ctx, var, &mut c);
        let (v, bad) = (ctx.id(), ctx.id());
        c.push(inst(
            Op::Load,
            Some(ids.u32t),
            Some(v),
            vec![Operand::IdRef(p)],
        ));
        c.push(inst(
            Op::IEqual,
            Some(ids.boolt),
            Some(bad),
            vec![Operand::IdRef(v), Operand::IdRef(zero)],
        ));
        c.push(inst(
            Op::SelectionMerge,
            None,
            None,
            vec![
                Operand::IdRef(m2),
                Operand::SelectionControl(SelectionControl::NONE),
            ],
        ));
        c.push(inst(
            Op::BranchConditional,
            None,
            None,
            vec![Operand::IdRef(bad), Operand::IdRef(lr), Operand::IdRef(m2)],
        ));
        blocks[mk].instructions.extend(c);
        let mut r = Vec::new();
        raise(ctx, ids, header, &mut r);
        r.push(branch(m2));
        // Phis that named the merge as a predecessor now see its second half.
        for (k, b) in blocks.iter_mut().enumerate() {
            if k == mk {
                continue;
            }
            for i in b
                .instructions
                .iter_mut()
                .filter(|i| i.class.opcode == Op::Phi)
            {
                for (j, o) in i.operands.iter_mut().enumerate() {
                    if j % 2 == 1 && *o == Operand::IdRef(m) {
                        *o = Operand::IdRef(m2);
                    }
                }
            }
        }
        blocks.insert(mk + 1, block(lr, r));
        blocks.insert(mk + 2, block(m2, rest));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use crate::compiler::{
        compile_source, find_tools, loop_guard_variant, persistent_variant, DeviceCaps,
    };

    /// The guard variant of kernels with every loop shape (and of their persistent variants)
    /// passes spirv-val (Vulkan 1.2); a kernel without loops is left as it is.
    #[test]
    fn variants_validate() {
        let src = r#"
            __kernel void counted(__global int *o, int n) {
                for (int i = 0; i < n; i++) o[i] = i;
            }
            __kernel void nested(__global int *o, int n) {
                for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) o[i] += j;
            }
            __kernel void data(__global int *o, int n) {
                int s = 0;
                do { s += o[s]; } while (s < n);
                while (1) { if (o[s] == 3) break; s++; }
                o[0] = s;
            }
            __kernel void forever(__global volatile int *o) {
                for (;;) { if (++o[0] > 100) return; }
            }
            __kernel void spin(__global volatile int *o) { for (;;) o[0]++; }
            __kernel void flat(__global int *o) { o[0] = 1; }
        "#;
        let tools = find_tools().expect("clang-15, opt-15 and llvm-spirv-15");
        let p = compile_source(&tools, src, "", &DeviceCaps::default()).expect("build");
        for k in &p.kernels {
            let v = loop_guard_variant(&k.spirv).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            if k.name == "flat" {
                assert_eq!(
                    v.len(),
                    k.spirv.len(),
                    "a kernel without loops is unchanged"
                );
            } else {
                assert!(v.len() > k.spirv.len(), "{}: not guarded", k.name);
            }
            let pv = persistent_variant(&k.spirv).expect("persistent");
            loop_guard_variant(&pv).unwrap_or_else(|e| panic!("{} persistent: {e}", k.name));
        }
    }
}
