//! Keeps only the kernel's body: llvm-spirv wraps every kernel in an entry function that calls
//! the real body with its own parameters; everything else was inlined by LLVM.

use rspirv::dr::{Function, Module, Operand};
use rspirv::spirv::{Op, Word};

use crate::compiler::reflect::KernelInfo;
use crate::compiler::spv::{id_operand, inst};

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
/// When the kernel still calls functions.
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
    for i in body.blocks.iter().flat_map(|b| b.instructions.iter()) {
        if i.class.opcode == Op::FunctionCall {
            return Err("calls to functions that were not inlined are not supported yet".into());
        }
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
