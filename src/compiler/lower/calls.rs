//! The calls left in a kernel body after the front end: inlined here when the callee is one
//! block of plain instructions, otherwise an exact error.
//!
//! # Why calls are inlined, not emitted as `OpFunctionCall`
//! Every call of the program's own functions is inlined by opt-15 in the front end
//! ([`crate::compiler::frontend`]: a huge inline threshold, and for the functions it still
//! leaves, `noinline` ones included, a second opt run that forces `alwaysinline` on them).
//! OpenCL C forbids recursion (OpenCL C 3.0 section 6.11, "Recursion is not supported"), so the
//! call graph is finite and inlining always terminates. Real Vulkan calls were the other way:
//! Vulkan SPIR-V allows `OpFunctionCall`, but a function's pointer parameters must be memory
//! object declarations (or pointers to them) without `VariablePointers`, and every later pass
//! here (memory, wide vectors, pointer arithmetic, loop guards, the persistent variant) works on
//! one function; calls would need each of them to follow values across functions. Inlining
//! keeps one function, costs build time only where opt had declined (measured on hashcat 6.2.6
//! in docs/clients.md, section "hashcat"), and leaves lavapipe and NVIDIA's compilers nothing
//! to inline.
//!
//! What still arrives here are the helper functions llvm-spirv-15 writes for LLVM intrinsics it
//! has no instruction for (`spirv.llvm_bswap_i32` for `llvm.bswap`, one block of shifts and
//! masks; the funnel shifts are expanded by [`super::select`]): those are inlined below. A call
//! of anything else (a function only declared, or a recursive one) fails with its name.

use std::collections::HashMap;

use rspirv::dr::{Function, Instruction, Module, Operand};
use rspirv::spirv::{Op, Word};

use crate::compiler::spv::{for_each_used_id_mut, id_operand, name_of, IdAlloc};

/// How many rounds of inlining: a helper that calls a helper needs two.
const ROUNDS: usize = 8;

/// A callee that can be inlined: one block ending in `OpReturn`/`OpReturnValue`, without
/// `OpVariable` or `OpPhi`. Returns (parameter ids, the block's instructions without its label
/// and return, the returned value).
fn simple_callee(f: &Function) -> Option<(Vec<Word>, &[Instruction], Option<Word>)> {
    let [block] = f.blocks.as_slice() else {
        return None;
    };
    let (ret, body) = block.instructions.split_last()?;
    let value = match ret.class.opcode {
        Op::Return => None,
        Op::ReturnValue => Some(id_operand(ret, 0)?),
        _ => return None,
    };
    if body
        .iter()
        .any(|i| matches!(i.class.opcode, Op::Variable | Op::Phi | Op::Label))
    {
        return None;
    }
    let params = f.parameters.iter().filter_map(|p| p.result_id).collect();
    Some((params, body, value))
}

/// Inlines into `body` every call of a function of `m` that [`simple_callee`] accepts (copies
/// of its instructions with fresh ids, their decorations copied too), repeating for calls the
/// copies bring, up to [`ROUNDS`] times.
pub(crate) fn inline_simple_calls(m: &mut Module, body: &mut Function) {
    let callees: HashMap<Word, &Function> = m
        .functions
        .iter()
        .filter(|f| simple_callee(f).is_some())
        .filter_map(|f| Some((f.def.as_ref()?.result_id?, f)))
        .collect();
    if callees.is_empty() {
        return;
    }
    let mut decorations: HashMap<Word, Vec<Instruction>> = HashMap::new();
    for d in &m.annotations {
        if d.class.opcode == Op::Decorate {
            if let Some(t) = id_operand(d, 0) {
                decorations.entry(t).or_default().push(d.clone());
            }
        }
    }
    let mut ids = IdAlloc::new(m);
    let mut new_decorations = Vec::new();
    for _ in 0..ROUNDS {
        let mut changed = false;
        for block in &mut body.blocks {
            if !block.instructions.iter().any(|i| {
                i.class.opcode == Op::FunctionCall
                    && id_operand(i, 0).is_some_and(|f| callees.contains_key(&f))
            }) {
                continue;
            }
            let old = std::mem::take(&mut block.instructions);
            for call in old {
                let callee = (call.class.opcode == Op::FunctionCall)
                    .then(|| id_operand(&call, 0))
                    .flatten()
                    .and_then(|f| callees.get(&f));
                let Some((params, insts, value)) = callee.and_then(|f| simple_callee(f)) else {
                    block.instructions.push(call);
                    continue;
                };
                changed = true;
                let args = call.operands.iter().skip(1).filter_map(|o| match o {
                    Operand::IdRef(w) => Some(*w),
                    _ => None,
                });
                let mut map: HashMap<Word, Word> = params.into_iter().zip(args).collect();
                // The returned value takes the call's id when the callee computes it.
                let value_is_computed =
                    value.is_some_and(|v| insts.iter().any(|i| i.result_id == Some(v)));
                if let (Some(v), Some(rid), true) = (value, call.result_id, value_is_computed) {
                    map.insert(v, rid);
                }
                for i in insts {
                    let mut copy = i.clone();
                    if let Some(old_id) = i.result_id {
                        let new_id = *map.entry(old_id).or_insert_with(|| ids.next());
                        copy.result_id = Some(new_id);
                        for d in decorations.get(&old_id).into_iter().flatten() {
                            let mut d = d.clone();
                            d.operands[0] = Operand::IdRef(new_id);
                            new_decorations.push(d);
                        }
                    }
                    for_each_used_id_mut(&mut copy, |w| {
                        if let Some(n) = map.get(w) {
                            *w = *n;
                        }
                    });
                    block.instructions.push(copy);
                }
                if let (Some(v), Some(rid), Some(ty), false) =
                    (value, call.result_id, call.result_type, value_is_computed)
                {
                    // A parameter or a constant returned as it is.
                    let v = map.get(&v).copied().unwrap_or(v);
                    block.instructions.push(Instruction::new(
                        Op::CopyObject,
                        Some(ty),
                        Some(rid),
                        vec![Operand::IdRef(v)],
                    ));
                }
            }
        }
        if !changed {
            break;
        }
    }
    m.annotations.extend(new_decorations);
    if let Some(h) = m.header.as_mut() {
        h.bound = ids.bound();
    }
}

/// The error for a call still in the kernel body `body` of `m` (other than of the prelude's
/// scratch functions), naming the callee and why it is there.
pub(crate) fn remaining_call_error(m: &Module, body: &Function) -> Option<String> {
    let call = body
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .find(|i| {
            i.class.opcode == Op::FunctionCall
                && !id_operand(i, 0).is_some_and(|f| super::collective::is_scratch(m, f))
        })?;
    let callee = id_operand(call, 0)?;
    let name = name_of(m, callee).unwrap_or_else(|| format!("%{callee}"));
    let defined = m
        .functions
        .iter()
        .find(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(callee))
        .is_some_and(|f| !f.blocks.is_empty());
    Some(if name.starts_with("spirv.llvm_") {
        format!(
            "a call of `{name}`, llvm-spirv's helper for an LLVM intrinsic, which vkcl cannot \
             inline (it is not one block of plain instructions)"
        )
    } else if defined {
        format!(
            "a call of `{name}` was left after inlining every function (a recursive call: \
             OpenCL C 3.0 section 6.11, recursion is not supported); vkcl does not emit \
             OpFunctionCall"
        )
    } else {
        format!(
            "a call of `{name}`, which the program declares but does not define (link the \
             program that defines it)"
        )
    })
}
