//! Test-case reduction on the syntax tree: greedily removes statements, flattens `if`,
//! loops, `switch` and blocks into their bodies, and replaces expressions by literals or by
//! sub-expressions of the same type, keeping each step that the interpreter still accepts
//! (well defined, types consistent) and that still fails the same way.

use super::ast::*;
use super::eval;
use std::collections::HashMap;

/// A statement list: 0 is the kernel body, `1 + i` function `i`'s body; then pairs of
/// (statement index, child list index).
type ListPath = Vec<usize>;

fn child_lists(s: &mut Stmt) -> Vec<&mut Vec<Stmt>> {
    match s {
        Stmt::If(_, t, f) => vec![t, f],
        Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Block(body) => vec![body],
        Stmt::Switch(_, arms) => arms.iter_mut().map(|a| &mut a.body).collect(),
        _ => Vec::new(),
    }
}

fn root_list(u: &mut Unit, i: usize) -> Option<&mut Vec<Stmt>> {
    if i == 0 {
        Some(&mut u.body)
    } else {
        u.funcs.get_mut(i - 1).map(|f| &mut f.body)
    }
}

fn list_mut<'a>(u: &'a mut Unit, p: &[usize]) -> Option<&'a mut Vec<Stmt>> {
    let mut cur = root_list(u, *p.first()?)?;
    for pair in p[1..].chunks(2) {
        let s = cur.get_mut(pair[0])?;
        cur = child_lists(s).into_iter().nth(*pair.get(1)?)?;
    }
    Some(cur)
}

fn all_lists(u: &mut Unit) -> Vec<ListPath> {
    fn walk(l: &mut [Stmt], path: &mut ListPath, out: &mut Vec<ListPath>) {
        out.push(path.clone());
        for (j, s) in l.iter_mut().enumerate() {
            for (c, child) in child_lists(s).into_iter().enumerate() {
                path.extend([j, c]);
                walk(child, path, out);
                path.truncate(path.len() - 2);
            }
        }
    }
    let mut out = Vec::new();
    for i in 0..=u.funcs.len() {
        if let Some(l) = root_list(u, i) {
            walk(l, &mut vec![i], &mut out);
        }
    }
    out
}

/// What a statement can be flattened into.
fn flattenings(s: &Stmt) -> Vec<Vec<Stmt>> {
    match s {
        Stmt::If(_, t, f) => vec![t.clone(), f.clone()],
        Stmt::Block(b) => vec![b.clone()],
        Stmt::For {
            var, start, body, ..
        } => {
            let mut v = vec![Stmt::Decl(
                var.clone(),
                Type::INT,
                Init::Expr(Expr::Lit(Scalar::Int, *start as u32 as u64)),
            )];
            v.extend(body.iter().cloned());
            vec![v]
        }
        Stmt::While { counter, body, .. } => {
            let mut v = vec![Stmt::Decl(
                counter.clone(),
                Type::INT,
                Init::Expr(Expr::Lit(Scalar::Int, 1)),
            )];
            v.extend(body.iter().cloned());
            vec![v]
        }
        Stmt::Switch(_, arms) => arms.iter().map(|a| a.body.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Every expression of the unit in a fixed pre-order.
fn exprs_mut(u: &mut Unit, f: &mut dyn FnMut(&mut Expr) -> bool) {
    fn expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
        if f(e) {
            return true;
        }
        let kids: Vec<&mut Expr> = match e {
            Expr::Field(x, _)
            | Expr::Swizzle(x, _, _)
            | Expr::Unary(_, x)
            | Expr::Cast(_, x)
            | Expr::Convert(_, _, x)
            | Expr::AsType(_, x)
            | Expr::Input(x) => vec![x],
            Expr::Index(a, b) | Expr::Bin(_, a, b) => vec![a, b],
            Expr::Cond(c, a, b) => vec![c, a, b],
            Expr::VecLit(_, _, v) | Expr::Call(_, v) | Expr::Safe(_, _, v) | Expr::CallFn(_, v) => {
                v.iter_mut().collect()
            }
            _ => Vec::new(),
        };
        for k in kids {
            if expr(k, f) {
                return true;
            }
        }
        false
    }
    fn init(i: &mut Init, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
        match i {
            Init::Expr(e) => expr(e, f),
            Init::List(l) => l.iter_mut().any(|i| init(i, f)),
        }
    }
    fn stmts(l: &mut [Stmt], f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
        for s in l {
            let stop = match s {
                // The ids stay: every work-item must keep storing to its own element.
                Stmt::Decl(n, _, _) if n == "gid" || n == "lid" => false,
                Stmt::Decl(_, _, i) => init(i, f),
                Stmt::Assign(lv, _, e) => {
                    lv.path.iter_mut().any(|a| match a {
                        Access::Index(i) => expr(i, f),
                        _ => false,
                    }) || expr(e, f)
                }
                Stmt::If(c, t, e) => expr(c, f) || stmts(t, f) || stmts(e, f),
                Stmt::For { bound, body, .. } => expr(bound, f) || stmts(body, f),
                Stmt::While { cond, body, .. } => expr(cond, f) || stmts(body, f),
                Stmt::Switch(e, arms) => {
                    expr(e, f) || arms.iter_mut().any(|a| stmts(&mut a.body, f))
                }
                Stmt::Return(e) => expr(e, f),
                Stmt::Block(b) => stmts(b, f),
                Stmt::Break | Stmt::Continue => false,
            };
            if stop {
                return true;
            }
        }
        false
    }
    for func in &mut u.funcs {
        if stmts(&mut func.body, f) {
            return;
        }
    }
    stmts(&mut u.body, f);
}

/// Replacements for an expression of type `t`: literals, then its operands of type `t`
/// (`types`: by address, from the interpreter).
fn replacements(e: &Expr, t: &Type, types: &HashMap<usize, Type>) -> Vec<Expr> {
    let mut out = Vec::new();
    let is_lit = matches!(e, Expr::Lit(..));
    let is_splat = matches!(e, Expr::Cast(_, x) if matches!(**x, Expr::Lit(..)));
    match t {
        Type::Scalar(s) if !is_lit => {
            out.push(Expr::Lit(*s, 0));
            out.push(Expr::Lit(*s, 1));
        }
        Type::Vector(s, _) if !is_splat => {
            out.push(Expr::Cast(t.clone(), Box::new(Expr::Lit(*s, 0))));
        }
        _ => {}
    }
    let kids: Vec<&Expr> = match e {
        Expr::Unary(_, x) => vec![x],
        Expr::Bin(_, a, b) => vec![a, b],
        Expr::Cond(_, a, b) => vec![a, b],
        Expr::Call(_, v) | Expr::Safe(_, _, v) => v.iter().collect(),
        Expr::CallFn(_, v) => v.iter().collect(),
        Expr::Cast(_, x) | Expr::Convert(_, _, x) | Expr::AsType(_, x) => vec![x],
        _ => Vec::new(),
    };
    for k in kids {
        if types.get(&(k as *const Expr as usize)) == Some(t) {
            out.push(k.clone());
        }
    }
    out
}

/// Reduces `unit` while `fails` holds for the candidate, trying at most `budget` candidates.
/// Calls `progress` with each accepted candidate.
pub fn reduce(
    unit: &Unit,
    fails: &mut dyn FnMut(&Unit) -> bool,
    budget: usize,
    progress: &mut dyn FnMut(&Unit),
) -> Unit {
    let mut best = unit.clone();
    let mut tries = 0usize;
    let mut accept = |cand: Unit, best: &mut Unit, tries: &mut usize| -> bool {
        *tries += 1;
        if eval::run(&cand).is_err() || !fails(&cand) {
            return false;
        }
        *best = cand;
        progress(best);
        true
    };
    loop {
        let mut changed = false;
        // Statements: halves, then single statements, from the end; then flattenings.
        let lists = all_lists(&mut best);
        for p in lists.iter().rev() {
            let Some(len) = list_mut(&mut best, p).map(|l| l.len()) else {
                continue;
            };
            let mut size = (len / 2).max(1);
            loop {
                let mut start = len.saturating_sub(size);
                loop {
                    if tries >= budget {
                        return best;
                    }
                    let mut cand = best.clone();
                    if let Some(l) = list_mut(&mut cand, p) {
                        if start + size <= l.len() {
                            l.drain(start..start + size);
                            changed |= accept(cand, &mut best, &mut tries);
                        }
                    }
                    if start < size {
                        break;
                    }
                    start -= size;
                }
                if size == 1 {
                    break;
                }
                size /= 2;
            }
            let len = list_mut(&mut best, p).map_or(0, |l| l.len());
            for j in (0..len).rev() {
                let Some(s) = list_mut(&mut best, p).and_then(|l| l.get(j).cloned()) else {
                    continue;
                };
                for flat in flattenings(&s) {
                    if tries >= budget {
                        return best;
                    }
                    let mut cand = best.clone();
                    if let Some(l) = list_mut(&mut cand, p) {
                        if j < l.len() {
                            l.splice(j..=j, flat);
                            if accept(cand, &mut best, &mut tries) {
                                changed = true;
                                break;
                            }
                        }
                    }
                }
            }
        }
        // Expressions, in pre-order; the numbering changes with each accepted step.
        let mut k = 0;
        'exprs: loop {
            let mut types = HashMap::new();
            let _ = eval::run_typed(&best, &mut types);
            let mut found = None;
            let mut n = 0;
            exprs_mut(&mut best, &mut |e| {
                if n < k {
                    n += 1;
                    return false;
                }
                if let Some(t) = types.get(&(e as *const Expr as usize)) {
                    found = Some(replacements(e, t, &types));
                    return true;
                }
                n += 1;
                false
            });
            let Some(reps) = found else { break };
            let at = n;
            for r in reps {
                if tries >= budget {
                    return best;
                }
                let mut cand = best.clone();
                let mut m = 0;
                exprs_mut(&mut cand, &mut |e| {
                    if m == at {
                        *e = r.clone();
                        return true;
                    }
                    m += 1;
                    false
                });
                if accept(cand, &mut best, &mut tries) {
                    changed = true;
                    k = at;
                    continue 'exprs;
                }
            }
            k = at + 1;
        }
        // Helper functions nothing calls.
        for i in (0..best.funcs.len()).rev() {
            if tries >= budget {
                return best;
            }
            let mut cand = best.clone();
            let mut used = false;
            exprs_mut(&mut cand, &mut |e| {
                if let Expr::CallFn(j, _) = e {
                    used |= *j == i;
                    if *j > i {
                        *j -= 1;
                    }
                }
                false
            });
            if !used {
                cand.funcs.remove(i);
                changed |= accept(cand, &mut best, &mut tries);
            }
        }
        if !changed {
            return best;
        }
    }
}
