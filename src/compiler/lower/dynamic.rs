//! `OpVectorExtractDynamic` and `OpVectorInsertDynamic` on vectors of 8- or 16-bit
//! components become static `OpCompositeExtract`s and `OpSelect`s on the index.
//!
//! NVIDIA's Vulkan driver (580.159) returns the wrong component from a dynamic extract of a
//! `half2` computed by conversions: `convert_half2(vload2(0, d))[g & 1]` gave the other
//! component or garbage for even `g`, with a 32- or 64-bit index, while the same `half2`
//! read through `.x`/`.y`, a dynamic extract of a loaded `half2` and every 32-bit case were
//! right (`docs/h200.md`). Mesa turns dynamic vector indexing into the same selects (NIR
//! `bcsel` chains), so lavapipe compiles the same thing either way. After [`super::widevec`]
//! vectors have at most 4 components. An index out of range (undefined in OpenCL C) reads
//! component 0 and inserts nothing.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Rewrites the narrow dynamic vector accesses of the kernel function.
///
/// # Errors
/// For an access whose vector or index type is unknown.
pub(crate) fn lower_dynamic_indexing(ctx: &mut Ctx) -> Result<(), String> {
    let narrow = |ctx: &Ctx, ty: Word| ctx.scalar_width(ty).is_some_and(|w| w < 32);
    let types = ctx.value_types();
    let found = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .any(|i| match i.class.opcode {
            Op::VectorExtractDynamic | Op::VectorInsertDynamic => id_operand(i, 0)
                .and_then(|v| types.get(&v))
                .is_some_and(|&t| narrow(ctx, t)),
            _ => false,
        });
    if !found {
        return Ok(());
    }
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut new_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        let mut out = Vec::with_capacity(b.instructions.len());
        for i in std::mem::take(&mut b.instructions) {
            let vt = id_operand(&i, 0).and_then(|v| types.get(&v)).copied();
            match (i.class.opcode, vt) {
                (Op::VectorExtractDynamic, Some(vt)) if narrow(ctx, vt) => {
                    extract(ctx, &mut out, &i, vt, &types)?
                }
                (Op::VectorInsertDynamic, Some(vt)) if narrow(ctx, vt) => {
                    insert(ctx, &mut out, &i, vt, &types)?
                }
                _ => out.push(i),
            }
        }
        b.instructions = out;
        new_blocks.push(b);
    }
    ctx.module.functions[0].blocks = new_blocks;
    Ok(())
}

/// The vector type's component type and count.
fn vector_shape(ctx: &Ctx, vt: Word) -> Result<(Word, u32), String> {
    ctx.vector_shape(vt)
        .ok_or_else(|| "dynamic index into a non-vector".into())
}

/// `idx == k`, as a new instruction in `out`, for an index of 32 or 64 bits.
fn index_is(
    ctx: &mut Ctx,
    out: &mut Vec<Instruction>,
    idx: Word,
    k: u32,
    types: &std::collections::HashMap<Word, Word>,
) -> Result<Word, String> {
    let it = *types.get(&idx).ok_or("dynamic index of unknown type")?;
    let c = match ctx.scalar_width(it) {
        Some(64) => ctx.c_u64(u64::from(k)),
        Some(32) => ctx.c_u32(k),
        Some(w) => {
            let t = ctx.t_int(w);
            ctx.global(Op::Constant, Some(t), vec![Operand::LiteralBit32(k)])
        }
        None => return Err("dynamic index of unknown width".into()),
    };
    let (bt, id) = (ctx.t_bool(), ctx.id());
    out.push(inst(
        Op::IEqual,
        Some(bt),
        Some(id),
        vec![Operand::IdRef(idx), Operand::IdRef(c)],
    ));
    Ok(id)
}

/// Component `k` of vector `v`, as a new instruction in `out`.
fn component(ctx: &mut Ctx, out: &mut Vec<Instruction>, elem: Word, v: Word, k: u32) -> Word {
    let id = ctx.id();
    out.push(inst(
        Op::CompositeExtract,
        Some(elem),
        Some(id),
        vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
    ));
    id
}

/// `OpVectorExtractDynamic v idx`: component 0, replaced by component k where `idx == k`.
fn extract(
    ctx: &mut Ctx,
    out: &mut Vec<Instruction>,
    i: &Instruction,
    vt: Word,
    types: &std::collections::HashMap<Word, Word>,
) -> Result<(), String> {
    let (elem, n) = vector_shape(ctx, vt)?;
    let rid = i.result_id.ok_or("extract result")?;
    let v = id_operand(i, 0).ok_or("extract vector")?;
    let idx = id_operand(i, 1).ok_or("extract index")?;
    let mut r = component(ctx, out, elem, v, 0);
    for k in 1..n {
        let is = index_is(ctx, out, idx, k, types)?;
        let c = component(ctx, out, elem, v, k);
        let id = if k == n - 1 { rid } else { ctx.id() };
        out.push(inst(
            Op::Select,
            Some(elem),
            Some(id),
            vec![Operand::IdRef(is), Operand::IdRef(c), Operand::IdRef(r)],
        ));
        r = id;
    }
    if n == 1 {
        out.push(inst(
            Op::CopyObject,
            Some(elem),
            Some(rid),
            vec![Operand::IdRef(r)],
        ));
    }
    Ok(())
}

/// `OpVectorInsertDynamic v obj idx`: each component k is `obj` where `idx == k`.
fn insert(
    ctx: &mut Ctx,
    out: &mut Vec<Instruction>,
    i: &Instruction,
    vt: Word,
    types: &std::collections::HashMap<Word, Word>,
) -> Result<(), String> {
    let (elem, n) = vector_shape(ctx, vt)?;
    let rid = i.result_id.ok_or("insert result")?;
    let v = id_operand(i, 0).ok_or("insert vector")?;
    let obj = id_operand(i, 1).ok_or("insert component")?;
    let idx = id_operand(i, 2).ok_or("insert index")?;
    let mut comps = Vec::with_capacity(n as usize);
    for k in 0..n {
        let is = index_is(ctx, out, idx, k, types)?;
        let c = component(ctx, out, elem, v, k);
        let id = ctx.id();
        out.push(inst(
            Op::Select,
            Some(elem),
            Some(id),
            vec![Operand::IdRef(is), Operand::IdRef(obj), Operand::IdRef(c)],
        ));
        comps.push(Operand::IdRef(id));
    }
    out.push(inst(Op::CompositeConstruct, Some(vt), Some(rid), comps));
    Ok(())
}
