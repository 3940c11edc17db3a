//! Integer homes for `__local` floating-point atomics.
//!
//! Vulkan allows atomic load, store and exchange on a float in `Workgroup` memory only with
//! `VK_EXT_shader_atomic_float` (`shaderSharedFloat32Atomics`, `shaderSharedFloat64Atomics`:
//! lavapipe 22.3 has the 32-bit one only), and logical pointers cannot be cast to an integer
//! view as physical ones are ([`super::Walk::float_atomic_as_int`]). So a `__local` variable
//! whose floats are reached by those atomics (C11 `atomic_init`, `atomic_store`,
//! `atomic_load`, `atomic_exchange` on `atomic_float` and `atomic_double`, `atomic_xchg`) is
//! retyped before the memory lowering: every float in its type becomes the integer of the
//! same width, every pointer derived from it points to the integer type, and each access
//! converts the value with `OpBitcast` (loads and stores of scalars and vectors, the atomics'
//! values and results). A variable also used in another way (`vloadn`, memcpy, a call, a
//! float atomic add, a load of a struct holding a float) keeps its type and the float
//! atomics (and their device requirement) as before.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

use super::super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Instructions that derive a pointer from their operand 0 (or, for phi and select, from
/// their pointer operands) without accessing memory.
fn derives(op: Op) -> bool {
    matches!(
        op,
        Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain
            | Op::Bitcast
            | Op::CopyObject
            | Op::Phi
            | Op::Select
    )
}

/// Atomics that move a value without arithmetic on it (the value is operand 3; exchange's
/// comparator is operand 5).
fn moves_value(op: Op) -> bool {
    matches!(
        op,
        Op::AtomicLoad | Op::AtomicStore | Op::AtomicExchange | Op::AtomicCompareExchange
    )
}

/// Retypes the `Workgroup` variables that need it (see the module doc).
///
/// # Errors
/// Never for a kernel it leaves alone; a message when a type cannot be rebuilt.
pub(super) fn integer_homes(ctx: &mut Ctx) -> Result<(), String> {
    let vars: Vec<Word> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Variable
                && i.operands.first() == Some(&Operand::StorageClass(StorageClass::Workgroup))
        })
        .filter_map(|i| i.result_id)
        .collect();
    if vars.is_empty() {
        return Ok(());
    }
    let types = ctx.value_types();
    let code: Vec<&Instruction> = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .collect();
    // Every pointer derived from each variable (phis may name later pointers: to a fixpoint).
    let mut root: HashMap<Word, Word> = vars.iter().map(|v| (*v, *v)).collect();
    loop {
        let before = root.len();
        for i in &code {
            let Some(rid) = i.result_id else { continue };
            if !derives(i.class.opcode) || root.contains_key(&rid) {
                continue;
            }
            let from = (0..i.operands.len())
                .filter_map(|k| id_operand(i, k))
                .find_map(|w| root.get(&w).copied());
            if let Some(r) = from {
                root.insert(rid, r);
            }
        }
        if root.len() == before {
            break;
        }
    }
    let is_float = |ctx: &Ctx, t: Word| ctx.def(t).is_some_and(|d| d.class.opcode == Op::TypeFloat);
    let float_or_vec = |ctx: &Ctx, t: Word| {
        is_float(ctx, t)
            || ctx.def(t).is_some_and(|d| {
                d.class.opcode == Op::TypeVector
                    && id_operand(d, 0).is_some_and(|e| is_float(ctx, e))
            })
    };
    let mut wanted: HashSet<Word> = HashSet::new();
    let mut refused: HashSet<Word> = HashSet::new();
    for i in &code {
        let op = i.class.opcode;
        let uses: Vec<Word> = crate::compiler::spv::used_ids(i)
            .into_iter()
            .filter_map(|w| root.get(&w).copied())
            .collect();
        if uses.is_empty() {
            continue;
        }
        let ptr_root = id_operand(i, 0).and_then(|p| root.get(&p).copied());
        match op {
            // A phi or select must choose between pointers of one variable.
            Op::Phi | Op::Select => {
                let ptrs: Vec<Option<Word>> = if op == Op::Phi {
                    (0..i.operands.len())
                        .step_by(2)
                        .map(|k| id_operand(i, k).and_then(|w| root.get(&w).copied()))
                        .collect()
                } else {
                    [1, 2]
                        .iter()
                        .map(|k| id_operand(i, *k).and_then(|w| root.get(&w).copied()))
                        .collect()
                };
                let first = ptrs.first().copied().flatten();
                if first.is_none() || ptrs.iter().any(|p| *p != first) {
                    refused.extend(uses);
                }
            }
            _ if derives(op) => {}
            Op::Load | Op::Store => {
                let ty = if op == Op::Load {
                    i.result_type
                } else {
                    id_operand(i, 1).and_then(|v| types.get(&v).copied())
                };
                // A value holding a float that a bitcast cannot convert (a struct or array).
                let stored_is_root =
                    op == Op::Store && id_operand(i, 1).is_some_and(|v| root.contains_key(&v));
                if stored_is_root
                    || ty.is_some_and(|t| !float_or_vec(ctx, t) && contains_float(ctx, t, 0))
                {
                    refused.extend(uses);
                }
            }
            op if moves_value(op) && ptr_root.is_some() && uses.len() == 1 => {
                let ty = match op {
                    Op::AtomicStore => id_operand(i, 3).and_then(|v| types.get(&v).copied()),
                    _ => i.result_type,
                };
                if ty.is_some_and(|t| is_float(ctx, t)) {
                    wanted.extend(uses);
                }
            }
            Op::LifetimeStart | Op::LifetimeStop => {}
            _ => refused.extend(uses),
        }
    }
    let chosen: HashSet<Word> = wanted.difference(&refused).copied().collect();
    if chosen.is_empty() {
        return Ok(());
    }
    let mut retype = Retype {
        map: HashMap::new(),
    };
    // Variables and derived pointers get their new pointer types.
    let mut new_ptr: HashMap<Word, Word> = HashMap::new();
    for (p, r) in &root {
        if !chosen.contains(r) {
            continue;
        }
        let Some(&ty) = types.get(p) else { continue };
        let nt = retype.ty(ctx, ty)?;
        if nt != ty {
            new_ptr.insert(*p, nt);
        }
    }
    for g in ctx.module.types_global_values.iter_mut() {
        if let Some(nt) = g.result_id.and_then(|r| new_ptr.get(&r)) {
            g.result_type = Some(*nt);
        }
    }
    let mut blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    for b in &mut blocks {
        let mut out = Vec::with_capacity(b.instructions.len());
        for mut i in std::mem::take(&mut b.instructions) {
            let rid = i.result_id.unwrap_or(0);
            if let Some(nt) = new_ptr.get(&rid) {
                i.result_type = Some(*nt);
                out.push(i);
                continue;
            }
            let on_home = id_operand(&i, 0).is_some_and(|p| new_ptr.contains_key(&p));
            if !on_home {
                out.push(i);
                continue;
            }
            access(ctx, &mut retype, &types, i, &mut out)?;
        }
        b.instructions = out;
    }
    ctx.module.functions[0].blocks = blocks;
    Ok(())
}

/// Rewrites load, store or atomic `i` through a retyped pointer: values converted by bitcast.
fn access(
    ctx: &mut Ctx,
    retype: &mut Retype,
    types: &HashMap<Word, Word>,
    mut i: Instruction,
    out: &mut Vec<Instruction>,
) -> Result<(), String> {
    let op = i.class.opcode;
    let cast = |ctx: &mut Ctx, out: &mut Vec<Instruction>, v: Word, to: Word| -> Word {
        let id = ctx.id();
        out.push(inst(
            Op::Bitcast,
            Some(to),
            Some(id),
            vec![Operand::IdRef(v)],
        ));
        id
    };
    // Value operands: Store's 1, the atomics' 3 (exchange: 4 and 5 hold value and comparator).
    let value_slots: &[usize] = match op {
        Op::Store => &[1],
        Op::AtomicStore | Op::AtomicExchange => &[3],
        Op::AtomicCompareExchange => &[4, 5],
        _ => &[],
    };
    for &k in value_slots {
        let Some(v) = id_operand(&i, k) else { continue };
        let Some(&vt) = types.get(&v) else { continue };
        let it = retype.ty(ctx, vt)?;
        if it != vt {
            i.operands[k] = Operand::IdRef(cast(ctx, out, v, it));
        }
    }
    match (i.result_id, i.result_type) {
        (Some(rid), Some(rt)) => {
            let it = retype.ty(ctx, rt)?;
            if it == rt {
                out.push(i);
                return Ok(());
            }
            let tmp = ctx.id();
            out.push(inst(op, Some(it), Some(tmp), i.operands));
            out.push(inst(
                Op::Bitcast,
                Some(rt),
                Some(rid),
                vec![Operand::IdRef(tmp)],
            ));
        }
        _ => out.push(i),
    }
    Ok(())
}

/// Whether type `ty` holds a float.
fn contains_float(ctx: &Ctx, ty: Word, depth: u32) -> bool {
    let Some(d) = ctx.def(ty) else { return false };
    if depth > 16 {
        return false;
    }
    match d.class.opcode {
        Op::TypeFloat => true,
        Op::TypeVector | Op::TypeArray | Op::TypeRuntimeArray => {
            id_operand(d, 0).is_some_and(|e| contains_float(ctx, e, depth + 1))
        }
        Op::TypeStruct => (0..d.operands.len())
            .filter_map(|k| id_operand(d, k))
            .any(|m| contains_float(ctx, m, depth + 1)),
        Op::TypePointer => false,
        _ => false,
    }
}

/// Types with every float replaced by the integer of its width (memoized).
struct Retype {
    map: HashMap<Word, Word>,
}

impl Retype {
    fn ty(&mut self, ctx: &mut Ctx, ty: Word) -> Result<Word, String> {
        if let Some(t) = self.map.get(&ty) {
            return Ok(*t);
        }
        let d = ctx.def(ty).cloned().ok_or("type of a __local variable")?;
        let nt = match d.class.opcode {
            Op::TypeFloat => {
                let w = match d.operands.first() {
                    Some(Operand::LiteralBit32(w)) => *w,
                    _ => 32,
                };
                ctx.t_int(w)
            }
            Op::TypeVector => {
                let e = id_operand(&d, 0).ok_or("vector type")?;
                let ne = self.ty(ctx, e)?;
                match d.operands.get(1) {
                    Some(Operand::LiteralBit32(n)) if ne != e => ctx.t_vec(ne, *n),
                    _ => ty,
                }
            }
            Op::TypeArray | Op::TypeRuntimeArray => {
                let e = id_operand(&d, 0).ok_or("array type")?;
                let ne = self.ty(ctx, e)?;
                if ne == e {
                    ty
                } else {
                    let mut ops = d.operands.clone();
                    ops[0] = Operand::IdRef(ne);
                    let id = ctx.id();
                    ctx.module
                        .types_global_values
                        .push(inst(d.class.opcode, None, Some(id), ops));
                    id
                }
            }
            Op::TypeStruct => {
                let mut ops = d.operands.clone();
                let mut changed = false;
                for o in ops.iter_mut() {
                    if let Operand::IdRef(m) = o {
                        let nm = self.ty(ctx, *m)?;
                        changed |= nm != *m;
                        *o = Operand::IdRef(nm);
                    }
                }
                if changed {
                    let id = ctx.id();
                    ctx.module
                        .types_global_values
                        .push(inst(Op::TypeStruct, None, Some(id), ops));
                    id
                } else {
                    ty
                }
            }
            Op::TypePointer => match (d.operands.first(), id_operand(&d, 1)) {
                (Some(Operand::StorageClass(sc)), Some(p)) => {
                    let np = self.ty(ctx, p)?;
                    if np == p {
                        ty
                    } else {
                        ctx.t_ptr(*sc, np)
                    }
                }
                _ => ty,
            },
            _ => ty,
        };
        self.map.insert(ty, nt);
        Ok(nt)
    }
}
