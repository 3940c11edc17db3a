//! The inline-launch-data variant of a lowered kernel: launch header and argument block read
//! from push constants instead of device memory.
//!
//! Input: a finished Vulkan module of this crate's kernel ABI, whose entry reads the launch
//! header and argument block through the two addresses at the start of the push-constant block
//! (`OpLoad` of member 0 or 1, an optional `OpIAdd` of a constant offset, `OpConvertUToPtr`,
//! `OpLoad`). Output: the same kernel whose push-constant block gains a member `uint data[n]`
//! at byte 32 holding a copy of the header (bytes 0..96) and the argument block (from byte 96),
//! and where every such load of a scalar, vector or pointer is rebuilt from those words. Loads
//! of other types (structs and arrays by value) keep reading memory, which the runtime still
//! fills, so any mix is correct. A kernel's first instructions then no longer wait for a
//! memory round trip (about 0.8 us per launch in a dependent chain on the H200, measured with
//! `examples/cmdbuf_chain.c`).

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Bytes of the launch header (the argument block follows it in the inline data).
const HEADER_BYTES: u32 = 96;
/// Byte offset of the inline data in the push-constant block.
const DATA_OFFSET: u32 = 32;

/// Rewrites `ctx`'s module as described in the module documentation with `words` 32-bit words
/// of inline data (the header's 24, then the argument block's, as many as fit in the device's
/// push constants: loads beyond them keep reading memory). Returns the number of loads
/// rewritten. Errors: the push-constant block is not the kernel ABI's.
pub(crate) fn inline_launch_data(ctx: &mut Ctx, words: u32) -> Result<usize, String> {
    let words = words.max(1);
    // A kernel that reads no launch data may have no push-constant block at all.
    let Some((pc_var, pc_ptr_ty)) = ctx
        .module
        .types_global_values
        .iter()
        .find(|i| {
            i.class.opcode == Op::Variable
                && i.operands.first() == Some(&Operand::StorageClass(StorageClass::PushConstant))
        })
        .and_then(|i| Some((i.result_id?, i.result_type?)))
    else {
        return Ok(0);
    };
    let (_, pc_struct) = ctx.ptr_info(pc_ptr_ty).ok_or("push-constant variable type")?;
    let members = ctx
        .def(pc_struct)
        .filter(|d| d.class.opcode == Op::TypeStruct)
        .map(|d| d.operands.len() as u32)
        .ok_or("push-constant block is not a struct")?;
    if members != 6 {
        return Err(format!("push-constant block with {members} members, not the ABI's 6"));
    }
    // Member 0 or 1 loads: the header's and the argument block's base addresses.
    let u64t = ctx.t_int(64);
    let mut base: HashMap<Word, u32> = HashMap::new(); // value -> byte offset into data
    let mut member_ptr: HashMap<Word, u32> = HashMap::new();
    let c0 = ctx.c_u32(0);
    let c1 = ctx.c_u32(1);
    let consts = constants(ctx);
    for f in &ctx.module.functions {
        for b in &f.blocks {
            for i in &b.instructions {
                if i.class.opcode == Op::AccessChain
                    && id_operand(i, 0) == Some(pc_var)
                    && i.operands.len() == 2
                {
                    let m = id_operand(i, 1);
                    let origin = if m == Some(c0) {
                        Some(0)
                    } else if m == Some(c1) {
                        Some(HEADER_BYTES)
                    } else {
                        None
                    };
                    if let (Some(o), Some(id)) = (origin, i.result_id) {
                        member_ptr.insert(id, o);
                    }
                }
            }
        }
    }
    // Follow loads of those members through constant offsets to pointers.
    let mut pointer: HashMap<Word, u32> = HashMap::new(); // pointer value -> data byte offset
    for f in &ctx.module.functions {
        for b in &f.blocks {
            for i in &b.instructions {
                let Some(id) = i.result_id else { continue };
                match i.class.opcode {
                    Op::Load if i.result_type == Some(u64t) => {
                        if let Some(o) = id_operand(i, 0).and_then(|p| member_ptr.get(&p)) {
                            base.insert(id, *o);
                        }
                    }
                    Op::IAdd if i.result_type == Some(u64t) => {
                        let (a, c) = (id_operand(i, 0), id_operand(i, 1));
                        let found = match (a.and_then(|a| base.get(&a)), c.and_then(|c| consts.get(&c))) {
                            (Some(o), Some(k)) => Some(*o as u64 + k),
                            _ => match (c.and_then(|c| base.get(&c)), a.and_then(|a| consts.get(&a))) {
                                (Some(o), Some(k)) => Some(*o as u64 + k),
                                _ => None,
                            },
                        };
                        if let Some(off) = found.filter(|&o| o < u32::MAX as u64) {
                            base.insert(id, off as u32);
                        }
                    }
                    Op::ConvertUToPtr => {
                        if let Some(o) = id_operand(i, 0).and_then(|v| base.get(&v)) {
                            pointer.insert(id, *o);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // The loads through those pointers, by result id: (type, byte offset).
    let mut loads: Vec<(Word, Word, u32)> = Vec::new();
    for f in &ctx.module.functions {
        for b in &f.blocks {
            for i in &b.instructions {
                if i.class.opcode != Op::Load {
                    continue;
                }
                if let (Some(o), Some(id), Some(ty)) = (
                    id_operand(i, 0).and_then(|p| pointer.get(&p)),
                    i.result_id,
                    i.result_type,
                ) {
                    loads.push((id, ty, *o));
                }
            }
        }
    }
    if loads.is_empty() {
        return Ok(0);
    }
    // The data member: uint data[words] at byte 32, stride 4.
    let u32t = ctx.t_int(32);
    let len = ctx.c_u32(words);
    let arr = ctx.id();
    ctx.module.types_global_values.push(inst(
        Op::TypeArray,
        None,
        Some(arr),
        vec![Operand::IdRef(u32t), Operand::IdRef(len)],
    ));
    ctx.decorate(arr, Decoration::ArrayStride, vec![Operand::LiteralBit32(4)]);
    // The struct, its pointer type and the variable move after the array they now use.
    let tv = &mut ctx.module.types_global_values;
    let mut moved = Vec::new();
    for id in [pc_struct, pc_ptr_ty, pc_var] {
        if let Some(p) = tv.iter().position(|i| i.result_id == Some(id)) {
            moved.push(tv.remove(p));
        }
    }
    moved[0].operands.push(Operand::IdRef(arr));
    tv.extend(moved);
    ctx.module.annotations.push(inst(
        Op::MemberDecorate,
        None,
        None,
        vec![
            Operand::IdRef(pc_struct),
            Operand::LiteralBit32(6),
            Operand::Decoration(Decoration::Offset),
            Operand::LiteralBit32(DATA_OFFSET),
        ],
    ));
    let ptr_u32 = ctx.t_ptr(StorageClass::PushConstant, u32t);
    let c6 = ctx.c_u32(6);
    let mut done = 0;
    for (id, ty, off) in loads {
        let mut code = Vec::new();
        let Some(v) = build(ctx, &mut code, ty, off, words, (pc_var, ptr_u32, c6)) else {
            continue;
        };
        // The last instruction takes the load's result id; the load goes.
        let Some(last) = code.last_mut() else { continue };
        let old = last.result_id;
        last.result_id = Some(id);
        debug_assert_eq!(old, Some(v));
        replace_load(ctx, id, code);
        done += 1;
    }
    Ok(done)
}

/// Integer constants of the module (32- and 64-bit), by id.
fn constants(ctx: &Ctx) -> HashMap<Word, u64> {
    ctx.module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Constant)
        .filter_map(|i| {
            let v = match i.operands.first()? {
                Operand::LiteralBit32(v) => *v as u64,
                Operand::LiteralBit64(v) => *v,
                _ => return None,
            };
            Some((i.result_id?, v))
        })
        .collect()
}

/// Emits into `code` the instructions that rebuild a `ty` stored at byte `off` of the inline
/// data; returns the id of the value (the result of the last instruction), or None for a type
/// it does not rebuild (or bytes beyond the data).
fn build(
    ctx: &mut Ctx,
    code: &mut Vec<Instruction>,
    ty: Word,
    off: u32,
    words: u32,
    pc: (Word, Word, Word),
) -> Option<Word> {
    let d = ctx.def(ty)?.clone();
    let u32t = ctx.t_int(32);
    let op = |ctx: &mut Ctx, code: &mut Vec<Instruction>, o: Op, t: Word, args: Vec<Word>| {
        let id = ctx.id();
        code.push(inst(o, Some(t), Some(id), args.into_iter().map(Operand::IdRef).collect()));
        id
    };
    let word = |ctx: &mut Ctx, code: &mut Vec<Instruction>, k: u32| -> Option<Word> {
        if k >= words {
            return None;
        }
        let ck = ctx.c_u32(k);
        let p = ctx.id();
        code.push(inst(
            Op::AccessChain,
            Some(pc.1),
            Some(p),
            vec![Operand::IdRef(pc.0), Operand::IdRef(pc.2), Operand::IdRef(ck)],
        ));
        let v = ctx.id();
        code.push(inst(Op::Load, Some(u32t), Some(v), vec![Operand::IdRef(p)]));
        Some(v)
    };
    match d.class.opcode {
        Op::TypeInt | Op::TypeFloat => {
            let width = match d.operands.first()? {
                Operand::LiteralBit32(w) => *w,
                _ => return None,
            };
            let is_float = d.class.opcode == Op::TypeFloat;
            match width {
                32 => {
                    let w = word(ctx, code, off / 4)?;
                    if ty == u32t {
                        // A value must be the last instruction's result: copy it.
                        Some(op(ctx, code, Op::CopyObject, ty, vec![w]))
                    } else {
                        Some(op(ctx, code, Op::Bitcast, ty, vec![w]))
                    }
                }
                64 => {
                    let lo = word(ctx, code, off / 4)?;
                    let hi = word(ctx, code, off / 4 + 1)?;
                    let v2 = ctx.t_vec(u32t, 2);
                    let pair = op(ctx, code, Op::CompositeConstruct, v2, vec![lo, hi]);
                    Some(op(ctx, code, Op::Bitcast, ty, vec![pair]))
                }
                8 | 16 if !is_float && (off % 4) * 8 + width <= 32 => {
                    let w = word(ctx, code, off / 4)?;
                    let shift = ctx.c_u32((off % 4) * 8);
                    let s = op(ctx, code, Op::ShiftRightLogical, u32t, vec![w, shift]);
                    Some(op(ctx, code, Op::UConvert, ty, vec![s]))
                }
                16 if is_float && off % 2 == 0 => {
                    let w = word(ctx, code, off / 4)?;
                    let shift = ctx.c_u32((off % 4) * 8);
                    let s = op(ctx, code, Op::ShiftRightLogical, u32t, vec![w, shift]);
                    let u16t = ctx.t_int(16);
                    let h = op(ctx, code, Op::UConvert, u16t, vec![s]);
                    Some(op(ctx, code, Op::Bitcast, ty, vec![h]))
                }
                _ => None,
            }
        }
        Op::TypeVector => {
            let elem = id_operand(&d, 0)?;
            let n = match d.operands.get(1)? {
                Operand::LiteralBit32(n) => *n,
                _ => return None,
            };
            let bytes = ctx.scalar_width(elem)? / 8;
            let mut parts = Vec::with_capacity(n as usize);
            for c in 0..n {
                parts.push(build(ctx, code, elem, off + c * bytes, words, pc)?);
            }
            Some(op(ctx, code, Op::CompositeConstruct, ty, parts))
        }
        Op::TypePointer => {
            let u64t = ctx.t_int(64);
            let v = build(ctx, code, u64t, off, words, pc)?;
            Some(op(ctx, code, Op::ConvertUToPtr, ty, vec![v]))
        }
        _ => None,
    }
}

/// Replaces the `OpLoad` with result `id` by `code` (whose last instruction now defines `id`).
fn replace_load(ctx: &mut Ctx, id: Word, code: Vec<Instruction>) {
    for f in &mut ctx.module.functions {
        for b in &mut f.blocks {
            if let Some(p) = b.instructions.iter().position(|i| i.result_id == Some(id)) {
                b.instructions.splice(p..p + 1, code);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compiler::{compile_source, find_tools, inline_data_variant, DeviceCaps};
    use rspirv::spirv::{Op, StorageClass};

    /// Loads of launch data from memory: through `OpConvertUToPtr` of an address loaded from
    /// the push-constant block (plus constant offsets).
    fn memory_reads(words: &[u32]) -> usize {
        use std::collections::HashSet;
        let m = rspirv::dr::load_words(words).expect("parse");
        let insts: Vec<&rspirv::dr::Instruction> = m
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter())
            .flat_map(|b| b.instructions.iter())
            .collect();
        let pc_ptrs: HashSet<u32> = insts
            .iter()
            .filter(|i| i.class.opcode == Op::AccessChain)
            .filter_map(|i| i.result_id)
            .collect();
        let mut addr: HashSet<u32> = HashSet::new();
        let mut ptrs: HashSet<u32> = HashSet::new();
        let mut n = 0;
        for i in &insts {
            let first = crate::compiler::spv::id_operand(i, 0);
            let id = i.result_id.unwrap_or(0);
            match i.class.opcode {
                Op::Load if first.is_some_and(|p| pc_ptrs.contains(&p)) => {
                    addr.insert(id);
                }
                Op::IAdd if i.operands.iter().any(|o| matches!(o, rspirv::dr::Operand::IdRef(x) if addr.contains(x))) => {
                    addr.insert(id);
                }
                Op::ConvertUToPtr if first.is_some_and(|v| addr.contains(&v)) => {
                    ptrs.insert(id);
                }
                Op::Load if first.is_some_and(|p| ptrs.contains(&p)) => n += 1,
                _ => {}
            }
        }
        n
    }

    /// Every kernel's variant passes spirv-val (Vulkan 1.2), declares the data member, and
    /// reads scalars, vectors, pointers, chars and the header from push constants; a struct
    /// passed by value keeps reading memory.
    #[test]
    fn variants_validate_and_read_push_constants() {
        let src = r#"
            typedef struct { int a; float b; } pair;
            __kernel void scalars(__global float *o, float k, int n, char c, short s, ulong u) {
                size_t i = get_global_id(0);
                if (i < n) o[i] = k * (float)i + c + s + (float)u;
            }
            __kernel void vectors(__global float4 *o, float4 v, int2 w, uchar3 b) {
                o[get_global_id(0)] = v + (float)(w.x + w.y + b.z);
            }
            __kernel void by_value(__global float *o, pair p) {
                o[get_global_id(0)] = p.a + p.b;
            }
            __kernel void nothing() {}
        "#;
        let tools = find_tools().expect("clang-15, opt-15 and llvm-spirv-15");
        let p = compile_source(&tools, src, "", &DeviceCaps::default()).expect("build");
        for k in &p.kernels {
            let before = memory_reads(&k.spirv);
            let words = (96 + k.args_size).div_ceil(4);
            let v = inline_data_variant(&k.spirv, words)
                .unwrap_or_else(|e| panic!("{}: {e}", k.name));
            let Some(v) = v else {
                assert_eq!(k.name, "nothing", "{} reads launch data", k.name);
                continue;
            };
            let m = rspirv::dr::load_words(&v).expect("parse");
            let pc = m
                .types_global_values
                .iter()
                .find(|i| {
                    i.class.opcode == Op::Variable
                        && i.operands.first()
                            == Some(&rspirv::dr::Operand::StorageClass(StorageClass::PushConstant))
                })
                .expect("push constants");
            assert!(pc.result_id.is_some());
            let after = memory_reads(&v);
            // Buffer pointers still become pointers (now from push-constant words).
            if k.name == "by_value" {
                assert!(after >= 1, "{}: the struct still comes from memory", k.name);
            } else {
                // With the header alone inline (lavapipe's 128 bytes of push constants), the
                // arguments keep coming from memory.
                let h = inline_data_variant(&k.spirv, 24).unwrap().unwrap();
                let mid = memory_reads(&h);
                assert!(0 < mid && mid < before, "{}: {before} -> {mid}", k.name);
                assert!(before > 0, "{}", k.name);
                assert_eq!(after, 0, "{}: {before} -> {after} memory reads", k.name);
            }
        }
    }
}
