//! The bounds-check variant of a lowered kernel (`VKCL_BOUNDS_CHECK=1`; see "Bounds-check
//! variant" in the `compiler` module doc).
//!
//! Every `OpLoad`, `OpStore` and atomic through a `PhysicalStorageBuffer` pointer that the
//! lowered module had is checked: its address `a` (u64) and `a + size` of the accessed type
//! must lie in one of the launch's ranges (a table of `[base, end)` pairs the runtime writes,
//! at `header + table_offset`; the header's word at [`TABLE_OFFSET`]). An access outside all
//! of them is redirected to the launch's sink area (so nothing outside the buffers is
//! written; a load reads the sink's bytes), and the invocation remembers it; at each return
//! of the function an invocation that remembers one (and only such an invocation: a branch
//! around the report) stores 1 into the header's `bounds_hit` word and the bad address next
//! to it. The variant's own loads
//! of the table are not checked. `OpCopyMemory` is not checked (vkcl's lowering emits none).

use rspirv::dr::{Block, Instruction, Operand};
use rspirv::spirv::{MemoryAccess, Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::layout::Layout;
use crate::compiler::spv::{inst, Defs};

/// Offset of the `bounds_hit` flag (`u32`) in the launch header, bytes.
pub(crate) const FLAG: u64 = 96;
/// Offset of the first bad address (`u64`) in the launch header, bytes.
pub(crate) const BAD_ADDRESS: u64 = 104;
/// Offset of the range table's offset from the header (`u64`) in the launch header, bytes.
pub(crate) const TABLE_OFFSET: u64 = 112;
/// Offset of the sink's offset from the header (`u64`) in the launch header, bytes.
pub(crate) const SINK_OFFSET: u64 = 120;

fn is_checked(op: Op) -> bool {
    matches!(
        op,
        Op::Load
            | Op::Store
            | Op::AtomicLoad
            | Op::AtomicStore
            | Op::AtomicExchange
            | Op::AtomicCompareExchange
            | Op::AtomicCompareExchangeWeak
            | Op::AtomicIIncrement
            | Op::AtomicIDecrement
            | Op::AtomicIAdd
            | Op::AtomicISub
            | Op::AtomicSMin
            | Op::AtomicUMin
            | Op::AtomicSMax
            | Op::AtomicUMax
            | Op::AtomicAnd
            | Op::AtomicOr
            | Op::AtomicXor
            | Op::AtomicFAddEXT
            | Op::AtomicFMinEXT
            | Op::AtomicFMaxEXT
    )
}

/// Rewrites a finished kernel module into its bounds-check variant against `ranges` table
/// entries (module doc).
pub(crate) fn check_bounds(ctx: &mut Ctx, ranges: u32) -> Result<(), String> {
    let u32t = ctx.t_int(32);
    let u64t = ctx.t_int(64);
    let boolt = ctx.t_bool();
    let pc_u64 = ctx.t_ptr(StorageClass::PushConstant, u64t);
    let psb_u64 = ctx.t_ptr(StorageClass::PhysicalStorageBuffer, u64t);
    let psb_u32 = ctx.t_ptr(StorageClass::PhysicalStorageBuffer, u32t);
    let fn_u32 = ctx.t_ptr(StorageClass::Function, u32t);
    let fn_u64 = ctx.t_ptr(StorageClass::Function, u64t);
    let pc_var = match super::entry::push_constant_var(ctx) {
        Some(v) => v,
        None => {
            let v = super::entry::push_constant_block(ctx);
            if let Some(ep) = ctx.module.entry_points.first_mut() {
                ep.operands.push(Operand::IdRef(v));
            }
            v
        }
    };
    let c0 = ctx.c_u32(0);
    let c1 = ctx.c_u32(1);
    let z64 = ctx.c_u64(0);
    let types = ctx.value_types();
    // Sizes of accessed pointee types.
    let mut sizes = std::collections::HashMap::new();
    {
        let defs = Defs::new(&ctx.module);
        let layout = Layout::new(&ctx.module, &defs);
        for (_, &ty) in types.iter() {
            if let Some((StorageClass::PhysicalStorageBuffer, pointee)) = ctx.ptr_info(ty) {
                let s = layout.size_align(pointee).map(|s| s.size).unwrap_or(1);
                sizes.insert(ty, s.max(1));
            }
        }
    }
    let mut consts = std::collections::HashMap::new();
    for &s in sizes.values() {
        consts.entry(s).or_insert_with(|| ctx.c_u64(s));
    }
    let offs: Vec<Word> = [FLAG, BAD_ADDRESS, TABLE_OFFSET, SINK_OFFSET]
        .iter()
        .map(|&o| ctx.c_u64(o))
        .collect();
    let entry_offs: Vec<Word> = (0..2 * ranges as u64).map(|k| ctx.c_u64(8 * k)).collect();
    let mut emitted = false;
    for f in 0..ctx.module.functions.len() {
        let mut blocks = std::mem::take(&mut ctx.module.functions[f].blocks);
        let any = blocks.iter().flat_map(|b| &b.instructions).any(|i| {
            is_checked(i.class.opcode)
                && match i.operands.first() {
                    Some(Operand::IdRef(p)) => types.get(p).is_some_and(|t| sizes.contains_key(t)),
                    _ => false,
                }
        });
        if !any || blocks.is_empty() {
            ctx.module.functions[f].blocks = blocks;
            continue;
        }
        emitted = true;
        let (hit_var, bad_var) = (ctx.id(), ctx.id());
        let mut pre = Vec::new();
        let load64 = |ctx: &mut Ctx, out: &mut Vec<Instruction>, addr: Word| {
            let p = ctx.id();
            out.push(inst(
                Op::ConvertUToPtr,
                Some(psb_u64),
                Some(p),
                vec![Operand::IdRef(addr)],
            ));
            let v = ctx.id();
            out.push(inst(
                Op::Load,
                Some(u64t),
                Some(v),
                vec![
                    Operand::IdRef(p),
                    Operand::MemoryAccess(MemoryAccess::ALIGNED),
                    Operand::LiteralBit32(8),
                ],
            ));
            v
        };
        let add = |ctx: &mut Ctx, out: &mut Vec<Instruction>, a: Word, b: Word| {
            let r = ctx.id();
            out.push(inst(
                Op::IAdd,
                Some(u64t),
                Some(r),
                vec![Operand::IdRef(a), Operand::IdRef(b)],
            ));
            r
        };
        let hp = ctx.id();
        pre.push(inst(
            Op::AccessChain,
            Some(pc_u64),
            Some(hp),
            vec![Operand::IdRef(pc_var), Operand::IdRef(c0)],
        ));
        let header = ctx.id();
        pre.push(inst(
            Op::Load,
            Some(u64t),
            Some(header),
            vec![Operand::IdRef(hp)],
        ));
        let a = add(ctx, &mut pre, header, offs[2]);
        let toff = load64(ctx, &mut pre, a);
        let table = add(ctx, &mut pre, header, toff);
        let a = add(ctx, &mut pre, header, offs[3]);
        let soff = load64(ctx, &mut pre, a);
        let sink = add(ctx, &mut pre, header, soff);
        let mut bounds = Vec::new();
        for k in 0..ranges as usize {
            let a = add(ctx, &mut pre, table, entry_offs[2 * k]);
            let lo = load64(ctx, &mut pre, a);
            let a = add(ctx, &mut pre, table, entry_offs[2 * k + 1]);
            let hi = load64(ctx, &mut pre, a);
            bounds.push((lo, hi));
        }
        let store = |p: Word, v: Word| {
            inst(
                Op::Store,
                None,
                None,
                vec![Operand::IdRef(p), Operand::IdRef(v)],
            )
        };
        pre.push(store(hit_var, c0));
        pre.push(store(bad_var, z64));
        let nvars = blocks[0]
            .instructions
            .iter()
            .take_while(|i| i.class.opcode == Op::Variable)
            .count();
        let mut first = std::mem::take(&mut blocks[0].instructions);
        let tail = first.split_off(nvars);
        first.push(inst(
            Op::Variable,
            Some(fn_u32),
            Some(hit_var),
            vec![Operand::StorageClass(StorageClass::Function)],
        ));
        first.push(inst(
            Op::Variable,
            Some(fn_u64),
            Some(bad_var),
            vec![Operand::StorageClass(StorageClass::Function)],
        ));
        // Keep OpPhi-free entry block order: variables, then the table loads, then the rest.
        first.extend(pre);
        first.extend(tail);
        blocks[0].instructions = first;
        let mut done = Vec::with_capacity(blocks.len() + 2);
        for mut b in blocks {
            let old = std::mem::take(&mut b.instructions);
            let mut out = Vec::with_capacity(old.len());
            let mut tail_blocks = Vec::new();
            for mut i in old {
                let op = i.class.opcode;
                if matches!(op, Op::Return | Op::ReturnValue) {
                    // Only an invocation that went out of bounds writes the report: a branch
                    // around it (one store by every invocation to a shared line cost 26x on
                    // a copy kernel).
                    let h = ctx.id();
                    out.push(inst(
                        Op::Load,
                        Some(u32t),
                        Some(h),
                        vec![Operand::IdRef(hit_var)],
                    ));
                    let hb = ctx.id();
                    out.push(inst(
                        Op::INotEqual,
                        Some(boolt),
                        Some(hb),
                        vec![Operand::IdRef(h), Operand::IdRef(c0)],
                    ));
                    let (report, merge) = (ctx.id(), ctx.id());
                    out.push(inst(
                        Op::SelectionMerge,
                        None,
                        None,
                        vec![
                            Operand::IdRef(merge),
                            Operand::SelectionControl(rspirv::spirv::SelectionControl::NONE),
                        ],
                    ));
                    out.push(inst(
                        Op::BranchConditional,
                        None,
                        None,
                        vec![
                            Operand::IdRef(hb),
                            Operand::IdRef(report),
                            Operand::IdRef(merge),
                        ],
                    ));
                    let mut r = Vec::new();
                    let bad = ctx.id();
                    r.push(inst(
                        Op::Load,
                        Some(u64t),
                        Some(bad),
                        vec![Operand::IdRef(bad_var)],
                    ));
                    let fa = add(ctx, &mut r, header, offs[0]);
                    let ba = add(ctx, &mut r, header, offs[1]);
                    let fp = ctx.id();
                    r.push(inst(
                        Op::ConvertUToPtr,
                        Some(psb_u32),
                        Some(fp),
                        vec![Operand::IdRef(fa)],
                    ));
                    let bp = ctx.id();
                    r.push(inst(
                        Op::ConvertUToPtr,
                        Some(psb_u64),
                        Some(bp),
                        vec![Operand::IdRef(ba)],
                    ));
                    for (ptr, v, align) in [(fp, c1, 4), (bp, bad, 8)] {
                        r.push(inst(
                            Op::Store,
                            None,
                            None,
                            vec![
                                Operand::IdRef(ptr),
                                Operand::IdRef(v),
                                Operand::MemoryAccess(MemoryAccess::ALIGNED),
                                Operand::LiteralBit32(align),
                            ],
                        ));
                    }
                    r.push(inst(Op::Branch, None, None, vec![Operand::IdRef(merge)]));
                    tail_blocks.push(block(report, r));
                    // What followed the return in this block (nothing, in valid SPIR-V)
                    // goes with it into the merge block.
                    tail_blocks.push(block(merge, vec![i]));
                    continue;
                }
                if let Some(last) = tail_blocks.last_mut() {
                    last.instructions.push(i);
                    continue;
                }
                let ptr_ty = match (is_checked(op), i.operands.first()) {
                    (true, Some(Operand::IdRef(p))) => {
                        types.get(p).copied().filter(|t| sizes.contains_key(t))
                    }
                    _ => None,
                };
                let Some(pty) = ptr_ty else {
                    out.push(i);
                    continue;
                };
                let Some(Operand::IdRef(p)) = i.operands.first().cloned() else {
                    unreachable!()
                };
                let u = ctx.id();
                out.push(inst(
                    Op::ConvertPtrToU,
                    Some(u64t),
                    Some(u),
                    vec![Operand::IdRef(p)],
                ));
                let end = add(ctx, &mut out, u, consts[&sizes[&pty]]);
                let mut ok = None;
                for &(lo, hi) in &bounds {
                    let (ge, le, both) = (ctx.id(), ctx.id(), ctx.id());
                    out.push(inst(
                        Op::UGreaterThanEqual,
                        Some(boolt),
                        Some(ge),
                        vec![Operand::IdRef(u), Operand::IdRef(lo)],
                    ));
                    out.push(inst(
                        Op::ULessThanEqual,
                        Some(boolt),
                        Some(le),
                        vec![Operand::IdRef(end), Operand::IdRef(hi)],
                    ));
                    out.push(inst(
                        Op::LogicalAnd,
                        Some(boolt),
                        Some(both),
                        vec![Operand::IdRef(ge), Operand::IdRef(le)],
                    ));
                    ok = Some(match ok {
                        None => both,
                        Some(prev) => {
                            let r = ctx.id();
                            out.push(inst(
                                Op::LogicalOr,
                                Some(boolt),
                                Some(r),
                                vec![Operand::IdRef(prev), Operand::IdRef(both)],
                            ));
                            r
                        }
                    });
                }
                let ok = match ok {
                    Some(ok) => ok,
                    None => ctx.global(Op::ConstantFalse, Some(boolt), vec![]),
                };
                let safe = ctx.id();
                out.push(inst(
                    Op::Select,
                    Some(u64t),
                    Some(safe),
                    vec![Operand::IdRef(ok), Operand::IdRef(u), Operand::IdRef(sink)],
                ));
                let p2 = ctx.id();
                out.push(inst(
                    Op::ConvertUToPtr,
                    Some(pty),
                    Some(p2),
                    vec![Operand::IdRef(safe)],
                ));
                let (h, h2, b, b2) = (ctx.id(), ctx.id(), ctx.id(), ctx.id());
                out.push(inst(
                    Op::Load,
                    Some(u32t),
                    Some(h),
                    vec![Operand::IdRef(hit_var)],
                ));
                out.push(inst(
                    Op::Select,
                    Some(u32t),
                    Some(h2),
                    vec![Operand::IdRef(ok), Operand::IdRef(h), Operand::IdRef(c1)],
                ));
                out.push(store(hit_var, h2));
                out.push(inst(
                    Op::Load,
                    Some(u64t),
                    Some(b),
                    vec![Operand::IdRef(bad_var)],
                ));
                out.push(inst(
                    Op::Select,
                    Some(u64t),
                    Some(b2),
                    vec![Operand::IdRef(ok), Operand::IdRef(b), Operand::IdRef(u)],
                ));
                out.push(store(bad_var, b2));
                i.operands[0] = Operand::IdRef(p2);
                out.push(i);
            }
            b.instructions = out;
            done.push(b);
            done.extend(tail_blocks);
        }
        ctx.module.functions[f].blocks = done;
    }
    let _ = emitted;
    let bound = ctx.bound();
    if let Some(h) = ctx.module.header.as_mut() {
        h.bound = bound;
    }
    Ok(())
}

fn block(label: Word, instructions: Vec<Instruction>) -> Block {
    Block {
        label: Some(inst(Op::Label, None, Some(label), vec![])),
        instructions,
    }
}
