//! A guard against LLVM 15's InstCombine `scalarizePHI`, which miscompiles a vector phi
//! carried round a loop by a non-commutative operation with the phi as its second operand.
//!
//! # The bug
//! `InstCombinerImpl::scalarizePHI` (`InstCombineVectorOps.cpp`, LLVM 15) looks at an
//! `extractelement` with a constant index of a vector phi `P` whose other users are
//! `extractelement`s of the same index and exactly one more instruction `B`, where `B` is a
//! `BinaryOperator`, `B`'s only use is `P`, and `B` is cheap to scalarize (an operand that is a
//! constant, an `insertelement` at a constant index, a one-use load, unary or binary
//! operation...). It then builds a scalar phi of that lane and rebuilds `B` on it, always with
//! the scalar phi as the *first* operand. For `sub`, shifts, divisions, remainders, `fsub`,
//! `fdiv`, `frem` with the phi second, the operands are swapped: `for (...) v =
//! (uint2)(100u, 7u) - v; out = v.y;` computes `v.y - 7` (difftest seed 400706). Fixed upstream
//! in November 2025 (llvm-project pull request 169120); opt-15 has no switch for it.
//!
//! # The guard
//! Nothing can make `P` eligible once every value that reaches a vector phi round a cycle is
//! the result of an opaque call: then `B` (an operation on `P`) is used by the call, not by
//! `P`. Before opt, [`guard`] rewrites the module's text so that
//! - every store of a non-constant vector (or of a `bitcast` of a vector) that may execute in a
//!   cycle stores `@__vkcl_keep.<type>(value)` instead; SROA, mem2reg, LICM's promotion and
//!   GVN turn memory into phis, and the values they give a phi round a back edge are the stored
//!   ones;
//! - every vector phi that may be in a cycle (present in IR from SPIR-V) is used only through
//!   such a call.
//!
//! "May execute in a cycle": in a block of a cycle of its function's CFG, or anywhere in a
//! function that something calls (it is inlined, perhaps into a loop). `__vkcl_keep.*` is a
//! declaration (`readnone nounwind willreturn`), so no pass can see through it or replace a
//! used call by its operand (passes may move, copy or merge the calls, which keeps them
//! between `B` and `P`). Straight-line kernel code is left alone. A kept phi still works as a
//! vector; only InstCombine's scalarization of such loops is lost (`docs/difftest.md`,
//! session 12, has the cost and the one shape not covered).
//!
//! After llvm-spirv, [`unguard`] replaces each call by its operand in the SPIR-V module and
//! removes the declaration, so the rest of vkcl never sees it.

use std::collections::{HashMap, HashSet};

/// The prefix of the opaque identity functions.
pub(crate) const KEEP: &str = "__vkcl_keep.";

/// The `__vkcl_keep` suffix of an LLVM vector type of integers or floats (`<2 x i32>` ->
/// `v2i32`), or `None` for any other type (pointers, `i1`, scalars).
fn vector_suffix(ty: &str) -> Option<String> {
    let inner = ty.strip_prefix('<')?.strip_suffix('>')?;
    let (n, elem) = inner.split_once(" x ")?;
    let n: u32 = n.trim().parse().ok()?;
    scalar_type(elem).then(|| format!("v{n}{elem}"))
}

/// Whether `ty` is an integer (wider than `i1`) or floating-point scalar type.
fn scalar_type(ty: &str) -> bool {
    matches!(ty, "half" | "float" | "double")
        || ty
            .strip_prefix('i')
            .and_then(|w| w.parse::<u32>().ok())
            .is_some_and(|w| w > 1)
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '$' | '.' | '_')
}

/// The local name at the start of `s` (`%12`, `%x.y`), `%` included.
fn local_at(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('%')?;
    let len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
    (len > 0).then(|| &s[..len + 1])
}

/// `line` with every local that `names` maps (`%n`, not `%n2`) replaced by its image.
fn rename_locals(line: &str, names: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let name = local_at(&rest[at..]).unwrap_or("%");
        out.push_str(names.get(name).map_or(name, |s| s.as_str()));
        rest = &rest[at + name.len()..];
    }
    out.push_str(rest);
    out
}

/// A function's body: its blocks' names (the entry's is empty) and line ranges.
struct Body {
    blocks: Vec<(String, std::ops::Range<usize>)>,
}

/// The blocks of the function whose body is `lines` that lie on a cycle of its CFG
/// (Tarjan's strongly connected components; a block with an edge to itself counts).
fn cyclic_blocks(lines: &[&str], body: &Body) -> HashSet<usize> {
    let index: HashMap<&str, usize> = body
        .blocks
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.as_str(), i))
        .collect();
    let succ: Vec<Vec<usize>> = body
        .blocks
        .iter()
        .map(|(_, r)| {
            let mut s = Vec::new();
            for line in &lines[r.clone()] {
                let mut rest = *line;
                while let Some(at) = rest.find("label %") {
                    rest = &rest[at + "label ".len()..];
                    if let Some(n) = local_at(rest) {
                        if let Some(&b) = index.get(&n[1..]) {
                            s.push(b);
                        }
                    }
                }
            }
            s
        })
        .collect();
    // Iterative Tarjan.
    let n = succ.len();
    let (mut idx, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut cyclic) = (Vec::new(), 0, HashSet::new());
    for root in 0..n {
        if idx[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 {
                idx[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if idx[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(idx[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == idx[v] {
                let mut scc = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 || succ[v].contains(&v) {
                    cyclic.extend(scc);
                }
            }
        }
    }
    cyclic
}

/// The names of the functions the module calls (`@name(` in a line with `call `/`invoke `).
fn called_functions<'a>(lines: &[&'a str]) -> HashSet<&'a str> {
    let mut called = HashSet::new();
    for line in lines {
        if !(line.contains("call ") || line.contains("invoke ")) {
            continue;
        }
        let mut rest = *line;
        while let Some(at) = rest.find('@') {
            rest = &rest[at + 1..];
            let len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
            if rest[len..].starts_with('(') {
                called.insert(&rest[..len]);
            }
        }
    }
    called
}

/// The module text `text` (LLVM 15 textual IR) with the guard of the module documentation,
/// or `None` when nothing needed it.
pub(crate) fn guard(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let called = called_functions(&lines);
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + 16);
    let mut types: Vec<(String, String)> = Vec::new();
    let mut count = 0usize;
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if !(line.starts_with("define ") && line.trim_end().ends_with('{')) {
            out.push(line.to_string());
            at += 1;
            continue;
        }
        let name = line
            .split_once('@')
            .map(|(_, r)| &r[..r.find(|c: char| !is_ident(c)).unwrap_or(r.len())])
            .unwrap_or("");
        let start = at + 1;
        let end = (start..lines.len())
            .find(|&i| lines[i] == "}")
            .unwrap_or(lines.len());
        let mut body = Body { blocks: Vec::new() };
        let mut block_start = start;
        let mut block_name = String::new();
        for (i, l) in lines.iter().enumerate().take(end).skip(start) {
            let label = (!l.starts_with([' ', ';']) && !l.is_empty())
                .then(|| l.split_once(':'))
                .flatten();
            if let Some((lab, _)) = label {
                body.blocks
                    .push((std::mem::take(&mut block_name), block_start..i));
                block_name = lab.trim_matches('"').to_string();
                block_start = i + 1;
            }
        }
        body.blocks.push((block_name, block_start..end));
        let everywhere = called.contains(name);
        let cyclic = if everywhere {
            HashSet::new()
        } else {
            cyclic_blocks(&lines, &body)
        };
        let defs: HashMap<&str, &str> = lines[start..end]
            .iter()
            .filter_map(|l| {
                let t = l.trim_start();
                let (lhs, rhs) = t.split_once(" = ")?;
                Some((local_at(lhs)?, rhs))
            })
            .collect();
        let mut body_out: Vec<String> = lines[start..end].iter().map(|l| l.to_string()).collect();
        // (line before which to insert, text); a store's keep goes before the store, a phi's
        // after the block's last phi.
        let mut inserts: Vec<(usize, String)> = Vec::new();
        // (phi, its keep, the phi's line)
        let mut renames: Vec<(String, String, usize)> = Vec::new();
        for (b, (_, range)) in body.blocks.iter().enumerate() {
            if !(everywhere || cyclic.contains(&b)) {
                continue;
            }
            let mut phi_keeps = Vec::new();
            let mut after_phis = range.start;
            for i in range.clone() {
                let t = lines[i].trim_start();
                if let Some((lhs, rhs)) = t.split_once(" = phi ") {
                    after_phis = i + 1;
                    // The type follows any fast-math flags.
                    let ty = rhs
                        .split_once(" [")
                        .map(|(ty, _)| ty.trim())
                        .map(|ty| ty.rfind('<').map_or(ty, |at| &ty[at..]));
                    let (Some(ty), Some(name)) = (ty, local_at(lhs)) else {
                        continue;
                    };
                    let Some(sfx) = vector_suffix(ty) else {
                        continue;
                    };
                    let kept = format!("%vkcl.keep.{count}");
                    count += 1;
                    renames.push((name.to_string(), kept.clone(), i - start));
                    phi_keeps.push(format!(
                        "  {kept} = call spir_func {ty} @{KEEP}{sfx}({ty} {name})"
                    ));
                    types.push((ty.to_string(), sfx));
                } else if let Some((call, store)) = wrap_store(t, &defs, &mut count, &mut types) {
                    body_out[i - start] = format!("  {store}");
                    inserts.push((i - start, format!("  {call}")));
                }
            }
            inserts.extend(phi_keeps.into_iter().map(|k| (after_phis - start, k)));
        }
        if !renames.is_empty() {
            let names: HashMap<String, String> = renames
                .iter()
                .map(|(n, k, _)| (n.clone(), k.clone()))
                .collect();
            let defs: HashSet<usize> = renames.iter().map(|r| r.2).collect();
            for (j, l) in body_out.iter_mut().enumerate() {
                *l = match l.split_once(" = ") {
                    // A phi's own name stays; its incoming values are uses.
                    Some((lhs, rhs)) if defs.contains(&j) => {
                        format!("{lhs} = {}", rename_locals(rhs, &names))
                    }
                    _ => rename_locals(l, &names),
                };
            }
        }
        // Insert (stable: a store's keep goes before it, a phi's after the block's phis).
        inserts.sort_by_key(|(p, _)| *p);
        let mut k = 0;
        out.push(line.to_string());
        for (j, l) in body_out.into_iter().enumerate() {
            while k < inserts.len() && inserts[k].0 == j {
                out.push(inserts[k].1.clone());
                k += 1;
            }
            out.push(l);
        }
        out.extend(inserts[k..].iter().map(|(_, s)| s.clone()));
        at = end;
    }
    if count == 0 {
        return None;
    }
    types.sort();
    types.dedup();
    for (ty, sfx) in types {
        out.push(format!(
            "declare spir_func {ty} @{KEEP}{sfx}({ty}) nounwind readnone willreturn"
        ));
    }
    let mut text = out.join("\n");
    text.push('\n');
    Some(text)
}

/// For a `store` instruction `t` (trimmed) of a non-constant vector, or of a local defined
/// by a `bitcast` of a vector: (the keep call, the store of its result).
fn wrap_store(
    t: &str,
    defs: &HashMap<&str, &str>,
    count: &mut usize,
    types: &mut Vec<(String, String)>,
) -> Option<(String, String)> {
    let rest = t.strip_prefix("store ")?;
    let (volatile, rest) = match rest.strip_prefix("volatile ") {
        Some(r) => ("volatile ", r),
        None => ("", rest),
    };
    let (ty, rest) = if rest.starts_with('<') {
        let close = rest.find('>')?;
        (&rest[..=close], rest[close + 1..].strip_prefix(' ')?)
    } else {
        rest.split_once(' ')?
    };
    let value = local_at(rest)?;
    if !rest[value.len()..].starts_with(',') {
        return None;
    }
    let sfx = match vector_suffix(ty) {
        Some(sfx) => sfx,
        // A scalar made from a vector (`as_long(v)`): InstCombine may turn a phi of it back
        // into a vector phi, so it is kept the same way.
        None if defs.get(value)?.starts_with("bitcast <") && scalar_type(ty) => ty.to_string(),
        None => return None,
    };
    let wty = ty.to_string();
    let kept = format!("%vkcl.keep.{count}");
    *count += 1;
    types.push((wty.clone(), sfx.clone()));
    Some((
        format!("{kept} = call spir_func {wty} @{KEEP}{sfx}({wty} {value})"),
        format!("store {volatile}{ty} {kept}{}", &rest[value.len()..]),
    ))
}

/// Kernel SPIR-V `words` (llvm-spirv's output of a guarded module) without the keep calls:
/// each `OpFunctionCall` of a `__vkcl_keep.*` declaration is removed and its result replaced
/// by its operand everywhere; the declarations and their names and decorations go too.
/// `None` when the module has no keep function (nothing to do).
///
/// # Errors
/// A message when the module does not parse or a keep call is not a call of one operand.
pub(crate) fn unguard(words: &[u32]) -> Result<Option<Vec<u32>>, String> {
    use rspirv::binary::Assemble;
    use rspirv::dr::Operand;
    use rspirv::spirv::Op;
    let mut module = super::spv::load(words).map_err(|e| format!("cannot parse SPIR-V: {e}"))?;
    let keeps: HashSet<u32> = module
        .debug_names
        .iter()
        .filter(|i| i.class.opcode == Op::Name)
        .filter_map(|i| match (i.operands.first(), i.operands.get(1)) {
            (Some(Operand::IdRef(id)), Some(Operand::LiteralString(n))) if n.starts_with(KEEP) => {
                Some(*id)
            }
            _ => None,
        })
        .collect();
    if keeps.is_empty() {
        return Ok(None);
    }
    let mut by: HashMap<u32, u32> = HashMap::new();
    for f in &mut module.functions {
        for b in &mut f.blocks {
            let mut err = None;
            b.instructions.retain(|i| {
                if i.class.opcode != Op::FunctionCall {
                    return true;
                }
                let callee =
                    matches!(i.operands.first(), Some(Operand::IdRef(c)) if keeps.contains(c));
                if !callee {
                    return true;
                }
                match (i.result_id, &i.operands[1..]) {
                    (Some(r), [Operand::IdRef(x)]) => {
                        by.insert(r, *x);
                    }
                    _ => err = Some("a __vkcl_keep call without one operand".to_string()),
                }
                false
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
    }
    let resolve = |mut id: u32| {
        while let Some(&x) = by.get(&id) {
            id = x;
        }
        id
    };
    module.functions.retain(|f| {
        !f.def
            .as_ref()
            .and_then(|d| d.result_id)
            .is_some_and(|id| keeps.contains(&id))
    });
    let targets = |i: &rspirv::dr::Instruction| matches!(i.operands.first(), Some(Operand::IdRef(t)) if keeps.contains(t) || by.contains_key(t));
    module.debug_names.retain(|i| !targets(i));
    module.annotations.retain(|i| !targets(i));
    for f in &mut module.functions {
        for b in &mut f.blocks {
            for i in &mut b.instructions {
                for o in &mut i.operands {
                    if let Operand::IdRef(id) = o {
                        *id = resolve(*id);
                    }
                }
            }
        }
    }
    Ok(Some(module.assemble()))
}

#[cfg(test)]
#[path = "phiguard_tests.rs"]
mod tests;
