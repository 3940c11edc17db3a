//! Keeps only the kernel's body: llvm-spirv wraps every kernel in an entry function that calls
//! the real body with its own parameters; everything else was inlined by LLVM, but for
//! llvm-spirv's helpers of LLVM intrinsics (funnel shifts expanded here, the others inlined by
//! [`super::calls`], which says why vkcl inlines instead of calling).

use rspirv::dr::{Function, Module, Operand};
use rspirv::spirv::{Op, Word};

use crate::compiler::reflect::KernelInfo;
use crate::compiler::spv::{id_operand, inst, lit_operand, name_of, IdAlloc};

fn fn_id(f: &Function) -> Option<Word> {
    f.def.as_ref().and_then(|d| d.result_id)
}

/// If `f` is `{ call g(params...); return }`, returns `g`.
fn forwarded_callee(f: &Function) -> Option<Word> {
    let [block] = f.blocks.as_slice() else {
        return None;
    };
    let [call, ret] = block.instructions.as_slice() else {
        return None;
    };
    if call.class.opcode != Op::FunctionCall || ret.class.opcode != Op::Return {
        return None;
    }
    let args: Vec<Word> = call
        .operands
        .get(1..)
        .unwrap_or_default()
        .iter()
        .filter_map(|o| match o {
            Operand::IdRef(w) => Some(*w),
            _ => None,
        })
        .collect();
    let params: Vec<Word> = f.parameters.iter().filter_map(|p| p.result_id).collect();
    (args == params).then(|| id_operand(call, 0)).flatten()
}

/// A copy of `module` holding only the kernel's body function (whose parameter ids are
/// renamed to the entry function's, so the names and decorations of those apply).
///
/// # Errors
/// When the kernel still calls a function other than llvm-spirv's one-block helpers (the
/// message names it: see [`super::calls::remaining_call_error`]).
pub(crate) fn select_kernel(module: &Module, info: &KernelInfo) -> Result<Module, String> {
    let mut m = module.clone();
    expand_decoration_groups(&mut m);
    // Before any id is renamed: a literal read as an id (vloadn's 16) may equal a parameter's.
    let cl = opencl_std(&m);
    for f in m.functions.iter_mut() {
        literal_ext_inst_operands(cl, f);
    }
    let wrapper = m
        .functions
        .iter()
        .find(|f| fn_id(f) == Some(info.function))
        .cloned()
        .ok_or("kernel function not found")?;
    let mut body = match forwarded_callee(&wrapper) {
        Some(callee) => {
            let mut b = m
                .functions
                .iter()
                .find(|f| fn_id(f) == Some(callee))
                .cloned()
                .ok_or("kernel body not found")?;
            // Use the wrapper's parameter ids (they carry the OpName of the arguments).
            let mut map = std::collections::HashMap::new();
            for (bp, wp) in b.parameters.iter_mut().zip(&wrapper.parameters) {
                if let (Some(old), Some(new)) = (bp.result_id, wp.result_id) {
                    map.insert(old, new);
                    bp.result_id = Some(new);
                }
            }
            for i in b.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
                crate::compiler::spv::for_each_used_id_mut(i, |w| {
                    if let Some(n) = map.get(w) {
                        *w = *n;
                    }
                });
            }
            b
        }
        None => wrapper,
    };
    expand_funnel_shifts(&mut m, &mut body)?;
    super::calls::inline_simple_calls(&mut m, &mut body);
    if let Some(e) = super::calls::remaining_call_error(&m, &body) {
        return Err(e);
    }
    if let Some(def) = body.def.as_mut() {
        def.result_id = Some(info.function);
    }
    m.functions = vec![body];
    Ok(m)
}

/// The id of the module's `OpenCL.std` import.
fn opencl_std(m: &Module) -> Option<Word> {
    m.ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "OpenCL.std" => i.result_id,
            _ => None,
        })
}

/// rspirv parses every trailing `OpExtInst` operand as an id; the OpenCL.std instructions
/// whose last operand is a literal (`vloadn`'s component count, rounding modes) get it back as
/// a literal here, before any id is renamed (`vload16`'s 16 read as `%16` was renamed with a
/// kernel parameter of that id).
fn literal_ext_inst_operands(cl: Option<Word>, body: &mut Function) {
    const LAST_IS_LITERAL: &[u32] = &[171, 174, 176, 178, 179, 181];
    let Some(cl) = cl else {
        return;
    };
    for i in body
        .blocks
        .iter_mut()
        .flat_map(|b| b.instructions.iter_mut())
    {
        if i.class.opcode != Op::ExtInst || id_operand(i, 0) != Some(cl) {
            continue;
        }
        let num = match i.operands.get(1) {
            Some(Operand::LiteralExtInstInteger(n)) => *n,
            _ => continue,
        };
        if LAST_IS_LITERAL.contains(&num) {
            if let Some(last) = i.operands.last_mut() {
                if let Operand::IdRef(w) = last {
                    *last = Operand::LiteralBit32(*w);
                }
            }
        }
    }
}

/// Replaces `OpDecorationGroup`/`OpGroupDecorate` by plain `OpDecorate`s.
fn expand_decoration_groups(m: &mut Module) {
    let groups: Vec<Word> = m
        .annotations
        .iter()
        .filter(|i| i.class.opcode == Op::DecorationGroup)
        .filter_map(|i| i.result_id)
        .collect();
    if groups.is_empty() {
        return;
    }
    let mut out = Vec::new();
    let old = std::mem::take(&mut m.annotations);
    for i in &old {
        if i.class.opcode == Op::GroupDecorate {
            let Some(g) = id_operand(i, 0) else { continue };
            for target in i.operands[1..].iter() {
                let Operand::IdRef(t) = target else { continue };
                for d in old
                    .iter()
                    .filter(|d| d.class.opcode == Op::Decorate && id_operand(d, 0) == Some(g))
                {
                    let mut ops = d.operands.clone();
                    ops[0] = Operand::IdRef(*t);
                    out.push(inst(Op::Decorate, None, None, ops));
                }
            }
        }
    }
    m.annotations = old
        .into_iter()
        .filter(|i| {
            let group_inst = matches!(
                i.class.opcode,
                Op::DecorationGroup | Op::GroupDecorate | Op::GroupMemberDecorate
            );
            let on_group = i.class.opcode == Op::Decorate
                && id_operand(i, 0).is_some_and(|t| groups.contains(&t));
            !group_inst && !on_group
        })
        .chain(out)
        .collect();
}

/// Replaces calls of the helper functions llvm-spirv writes for LLVM's funnel shifts
/// (`spirv.llvm_fshl_i32`, `spirv.llvm_fshr_v2i64`...; opt makes `llvm.fshl` from shift-or
/// idioms) by their value in core instructions. For width `w`, `s = c & (w - 1)`:
/// `fshl(a, b, c) = (a << s) | ((b >> 1) >> (w - 1 - s))` and
/// `fshr(a, b, c) = ((a << 1) << (w - 1 - s)) | (b >> s)` (LLVM semantics, and no shift by
/// `w` or more).
///
/// # Errors
/// When a helper's result type is not an integer scalar or vector.
fn expand_funnel_shifts(m: &mut Module, body: &mut Function) -> Result<(), String> {
    let helpers: Vec<(Word, bool)> = m
        .functions
        .iter()
        .filter_map(|f| {
            let id = fn_id(f)?;
            let name = name_of(m, id)?;
            if name.starts_with("spirv.llvm_fshl_") {
                Some((id, true))
            } else if name.starts_with("spirv.llvm_fshr_") {
                Some((id, false))
            } else {
                None
            }
        })
        .collect();
    if helpers.is_empty() {
        return Ok(());
    }
    let mut ids = IdAlloc::new(m);
    let mut consts: std::collections::HashMap<(Word, u64), Word> = Default::default();
    for block in &mut body.blocks {
        let old = std::mem::take(&mut block.instructions);
        for i in old {
            let left = (i.class.opcode == Op::FunctionCall)
                .then(|| id_operand(&i, 0))
                .flatten()
                .and_then(|callee| helpers.iter().find(|(h, _)| *h == callee))
                .map(|(_, l)| *l);
            let (Some(left), Some(ty), Some(rid)) = (left, i.result_type, i.result_id) else {
                block.instructions.push(i);
                continue;
            };
            let (a, b, c) = match (id_operand(&i, 1), id_operand(&i, 2), id_operand(&i, 3)) {
                (Some(a), Some(b), Some(c)) => (a, b, c),
                _ => return Err("funnel shift call without its operands".into()),
            };
            let tdef = m
                .types_global_values
                .iter()
                .find(|d| d.result_id == Some(ty))
                .cloned()
                .ok_or("funnel shift type")?;
            let (elem, n) = if tdef.class.opcode == Op::TypeVector {
                (
                    id_operand(&tdef, 0).ok_or("vector type")?,
                    lit_operand(&tdef, 1).unwrap_or(1),
                )
            } else {
                (ty, 1)
            };
            let width = m
                .types_global_values
                .iter()
                .find(|d| d.result_id == Some(elem) && d.class.opcode == Op::TypeInt)
                .and_then(|d| lit_operand(d, 0))
                .ok_or("funnel shift on a non-integer type")?;
            let mut constant = |m: &mut Module, v: u64| -> Word {
                *consts.entry((ty, v)).or_insert_with(|| {
                    let s = ids.next();
                    let lit = if width == 64 {
                        Operand::LiteralBit64(v)
                    } else {
                        Operand::LiteralBit32(v as u32)
                    };
                    m.types_global_values
                        .push(inst(Op::Constant, Some(elem), Some(s), vec![lit]));
                    if n == 1 {
                        return s;
                    }
                    let vid = ids.next();
                    m.types_global_values.push(inst(
                        Op::ConstantComposite,
                        Some(ty),
                        Some(vid),
                        vec![Operand::IdRef(s); n as usize],
                    ));
                    vid
                })
            };
            let mask = constant(m, u64::from(width - 1));
            let one = constant(m, 1);
            let mut emit = |op: Op, x: Word, y: Word, id: Option<Word>| -> Word {
                let r = id.unwrap_or_else(|| ids.next());
                block.instructions.push(inst(
                    op,
                    Some(ty),
                    Some(r),
                    vec![Operand::IdRef(x), Operand::IdRef(y)],
                ));
                r
            };
            let s = emit(Op::BitwiseAnd, c, mask, None);
            let t = emit(Op::ISub, mask, s, None);
            let (hi, lo) = if left {
                let hi = emit(Op::ShiftLeftLogical, a, s, None);
                let b1 = emit(Op::ShiftRightLogical, b, one, None);
                (hi, emit(Op::ShiftRightLogical, b1, t, None))
            } else {
                let a1 = emit(Op::ShiftLeftLogical, a, one, None);
                let hi = emit(Op::ShiftLeftLogical, a1, t, None);
                (hi, emit(Op::ShiftRightLogical, b, s, None))
            };
            emit(Op::BitwiseOr, hi, lo, Some(rid));
        }
    }
    if let Some(h) = m.header.as_mut() {
        h.bound = ids.bound();
    }
    Ok(())
}
