//! The host's answer: an interpreter of the generated subset with OpenCL C semantics
//! (OpenCL C 3.0 sections 6.3-6.5 and the integer built-ins of 6.15.3).
//!
//! It also checks that the program is well defined: signed overflow, a division by zero, an
//! index out of bounds, a signed left shift, a `clamp` with lo > hi, arithmetic on a type
//! that C would promote (which the generator must not write) or a runaway loop is an
//! [`EvalError`], a bug of the generator, never a device's answer to compare with.

use super::ast::*;
use super::ops;
pub use super::value::{EvalError, Value};
use std::collections::HashMap;

type R<T> = Result<T, EvalError>;

enum Flow {
    Normal,
    Break,
    Continue,
    Return(Value),
}

/// Most loop iterations per work-item before the run counts as runaway.
const MAX_ITERATIONS: u64 = 1_000_000;

struct Item<'u> {
    unit: &'u Unit,
    gid: u32,
    lid: u32,
    scopes: Vec<HashMap<String, Value>>,
    iterations: u64,
    /// The type of each expression evaluated, by its address (for the reducer).
    types: Option<&'u mut HashMap<usize, Type>>,
}

/// The values the kernel stores, one per work-item (`out[gid]`).
pub fn run(unit: &Unit) -> Result<Vec<u32>, EvalError> {
    run_with(unit, None)
}

/// [`run`], also noting the type of every expression evaluated, by its address.
pub fn run_typed(unit: &Unit, types: &mut HashMap<usize, Type>) -> Result<Vec<u32>, EvalError> {
    run_with(unit, Some(types))
}

fn run_with(
    unit: &Unit,
    mut types: Option<&mut HashMap<usize, Type>>,
) -> Result<Vec<u32>, EvalError> {
    let mut h = Vec::with_capacity(unit.global);
    for gid in 0..unit.global {
        let lid = unit.local.map_or(gid, |l| gid % l);
        let mut item = Item {
            unit,
            gid: gid as u32,
            lid: lid as u32,
            scopes: vec![HashMap::new()],
            iterations: 0,
            types: types.as_deref_mut(),
        };
        match item.stmts(&unit.body)? {
            Flow::Normal => {}
            _ => return Err(EvalError::bad("the kernel body left by a jump")),
        }
        match item.lookup("h")? {
            Value::Scalar(Scalar::UInt, v) => h.push(*v as u32),
            _ => return Err(EvalError::bad("h is not a uint")),
        }
    }
    match unit.epilogue {
        Epilogue::Store => Ok(h),
        Epilogue::LocalExchange => {
            let l = unit
                .local
                .ok_or_else(|| EvalError::bad("a local exchange without a local size"))?;
            Ok((0..unit.global)
                .map(|g| {
                    let base = g - g % l;
                    let other = base + (g % l + 1) % l;
                    h[g] ^ h[other].wrapping_mul(3)
                })
                .collect())
        }
    }
}

impl Item<'_> {
    fn lookup(&self, name: &str) -> R<&Value> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .ok_or_else(|| EvalError(format!("{name} is not declared")))
    }

    fn lookup_mut(&mut self, name: &str) -> R<&mut Value> {
        self.scopes
            .iter_mut()
            .rev()
            .find_map(|s| s.get_mut(name))
            .ok_or_else(|| EvalError(format!("{name} is not declared")))
    }

    fn declare(&mut self, name: &str, v: Value) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    fn block(&mut self, stmts: &[Stmt]) -> R<Flow> {
        self.scopes.push(HashMap::new());
        let r = self.stmts(stmts);
        self.scopes.pop();
        r
    }

    fn stmts(&mut self, stmts: &[Stmt]) -> R<Flow> {
        for s in stmts {
            match self.stmt(s)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn tick(&mut self) -> R<()> {
        self.iterations += 1;
        if self.iterations > MAX_ITERATIONS {
            return Err(EvalError::bad("runaway loop"));
        }
        Ok(())
    }

    fn truth(&mut self, e: &Expr) -> R<bool> {
        match self.expr(e)? {
            Value::Scalar(_, b) => Ok(b != 0),
            _ => Err(EvalError::bad("a condition that is not a scalar")),
        }
    }

    fn int(&mut self, e: &Expr) -> R<i128> {
        match self.expr(e)? {
            Value::Scalar(s, b) => Ok(s.value(b)),
            _ => Err(EvalError::bad("an integer scalar expected")),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> R<Flow> {
        match s {
            Stmt::Decl(name, ty, init) => {
                let v = self.init(ty, init)?;
                self.declare(name, v);
            }
            Stmt::Assign(lv, op, e) => {
                let rhs = self.expr(e)?;
                let mut idx = Vec::new();
                for a in &lv.path {
                    if let Access::Index(i) = a {
                        idx.push(self.int(i)?);
                    }
                }
                let new = match op {
                    None => rhs,
                    Some(op) => {
                        let old = read_path(self.lookup(&lv.var)?, &lv.path, &idx)?;
                        ops::binary(*op, &old, &rhs)?
                    }
                };
                let slot = self.lookup_mut(&lv.var)?;
                write_path(slot, &lv.path, &idx, new)?;
            }
            Stmt::If(c, t, f) => {
                return if self.truth(c)? {
                    self.block(t)
                } else {
                    self.block(f)
                };
            }
            Stmt::For {
                var,
                start,
                inclusive,
                bound,
                step,
                body,
            } => {
                self.scopes.push(HashMap::new());
                self.declare(var, Value::Scalar(Scalar::Int, *start as u32 as u64));
                let r = self.for_loop(var, *inclusive, bound, *step, body);
                self.scopes.pop();
                return r;
            }
            Stmt::While {
                counter,
                limit,
                cond,
                do_while,
                body,
            } => {
                self.scopes.push(HashMap::new());
                self.declare(counter, Value::Scalar(Scalar::Int, 0));
                let r = self.while_loop(counter, *limit, cond, *do_while, body);
                self.scopes.pop();
                return r;
            }
            Stmt::Switch(e, arms) => {
                let v = self.int(e)?;
                let start = arms
                    .iter()
                    .position(|a| a.cases.iter().any(|&c| c as i128 == v))
                    .or_else(|| arms.iter().position(|a| a.cases.is_empty()));
                if let Some(start) = start {
                    for arm in &arms[start..] {
                        match self.block(&arm.body)? {
                            Flow::Normal => {}
                            Flow::Break => break,
                            other => return Ok(other),
                        }
                        if arm.breaks {
                            break;
                        }
                    }
                }
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Return(e) => return Ok(Flow::Return(self.expr(e)?)),
            Stmt::Block(b) => return self.block(b),
        }
        Ok(Flow::Normal)
    }

    fn for_loop(
        &mut self,
        var: &str,
        inclusive: bool,
        bound: &Expr,
        step: i32,
        body: &[Stmt],
    ) -> R<Flow> {
        loop {
            let i = match self.lookup(var)? {
                Value::Scalar(_, b) => Scalar::Int.value(*b),
                _ => return Err(EvalError::bad("loop counter")),
            };
            let b = self.int(bound)?;
            if !(if inclusive { i <= b } else { i < b }) {
                return Ok(Flow::Normal);
            }
            self.tick()?;
            match self.block(body)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Normal | Flow::Continue => {}
            }
            let next = i + step as i128;
            if next > i32::MAX as i128 {
                return Err(EvalError::bad("loop counter overflow"));
            }
            *self.lookup_mut(var)? = Value::Scalar(Scalar::Int, Scalar::Int.wrap(next as u64));
        }
    }

    fn while_loop(
        &mut self,
        counter: &str,
        limit: u32,
        cond: &Expr,
        do_while: bool,
        body: &[Stmt],
    ) -> R<Flow> {
        let mut first = true;
        loop {
            // A do-while's first iteration runs before its condition is evaluated.
            let skip_cond = do_while && first;
            if !skip_cond && !self.truth(cond)? {
                return Ok(Flow::Normal);
            }
            first = false;
            let c = match self.lookup(counter)? {
                Value::Scalar(_, b) => *b as u32,
                _ => return Err(EvalError::bad("loop counter")),
            };
            if c >= limit {
                return Ok(Flow::Normal);
            }
            *self.lookup_mut(counter)? = Value::Scalar(Scalar::Int, (c + 1) as u64);
            self.tick()?;
            match self.block(body)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Normal | Flow::Continue => {}
            }
        }
    }

    fn init(&mut self, ty: &Type, init: &Init) -> R<Value> {
        let v = match (ty, init) {
            (_, Init::Expr(e)) => self.expr(e)?,
            (Type::Array(elem, n), Init::List(items)) => {
                if items.len() != *n {
                    return Err(EvalError::bad("array initialiser length"));
                }
                let mut out = Vec::with_capacity(*n);
                for i in items {
                    out.push(self.init(elem, i)?);
                }
                Value::Array(out)
            }
            (Type::Struct(s), Init::List(items)) => {
                let def = self
                    .unit
                    .structs
                    .get(*s)
                    .ok_or_else(|| EvalError::bad("no such struct"))?;
                if items.len() != def.fields.len() {
                    return Err(EvalError::bad("struct initialiser length"));
                }
                let mut out = Vec::with_capacity(items.len());
                for (f, i) in def.fields.iter().zip(items) {
                    out.push(self.init(f, i)?);
                }
                Value::Struct(*s, out)
            }
            _ => return Err(EvalError::bad("a brace list for a scalar or vector")),
        };
        if &v.ty() != ty {
            return Err(EvalError(format!(
                "initialiser of type {:?} for {:?}",
                v.ty(),
                ty
            )));
        }
        Ok(v)
    }

    fn expr(&mut self, e: &Expr) -> R<Value> {
        let v = self.expr_value(e)?;
        if let Some(t) = self.types.as_deref_mut() {
            t.entry(e as *const Expr as usize).or_insert_with(|| v.ty());
        }
        Ok(v)
    }

    fn expr_value(&mut self, e: &Expr) -> R<Value> {
        Ok(match e {
            Expr::Lit(s, b) => Value::Scalar(*s, s.wrap(*b)),
            Expr::Var(n) => self.lookup(n)?.clone(),
            Expr::Field(x, i) => match self.expr(x)? {
                Value::Struct(_, mut f) if *i < f.len() => f.swap_remove(*i),
                _ => return Err(EvalError::bad("field of a non-struct")),
            },
            Expr::Index(a, i) => {
                let i = self.int(i)?;
                match self.expr(a)? {
                    Value::Array(mut e) if i >= 0 && (i as usize) < e.len() => {
                        e.swap_remove(i as usize)
                    }
                    Value::Array(e) => {
                        return Err(EvalError(format!(
                            "index {i} out of bounds of an array of {}",
                            e.len()
                        )))
                    }
                    _ => return Err(EvalError::bad("index of a non-array")),
                }
            }
            Expr::Swizzle(v, lanes, _) => ops::swizzle(&self.expr(v)?, lanes)?,
            Expr::Unary(op, x) => ops::unary(*op, &self.expr(x)?)?,
            Expr::Bin(op @ (BinOp::LAnd | BinOp::LOr), a, b) => {
                let a = self.truth(a)?;
                let r = match op {
                    BinOp::LAnd => a && self.truth(b)?,
                    _ => a || self.truth(b)?,
                };
                Value::Scalar(Scalar::Int, r as u64)
            }
            Expr::Bin(op, a, b) => {
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                ops::binary(*op, &a, &b)?
            }
            Expr::Cond(c, a, b) => {
                if self.truth(c)? {
                    self.expr(a)?
                } else {
                    self.expr(b)?
                }
            }
            Expr::Cast(t, x) => ops::cast(t, &self.expr(x)?)?,
            Expr::Convert(t, sat, x) => ops::convert(t, *sat, &self.expr(x)?)?,
            Expr::AsType(t, x) => ops::as_type(t, &self.expr(x)?)?,
            Expr::VecLit(s, n, parts) => {
                let mut lanes = Vec::with_capacity(*n as usize);
                for p in parts {
                    match self.expr(p)? {
                        Value::Scalar(t, b) if t == *s => lanes.push(b),
                        Value::Vector(t, l) if t == *s => lanes.extend(l),
                        _ => return Err(EvalError::bad("vector literal part of another type")),
                    }
                }
                if lanes.len() != *n as usize || parts.len() < 2 {
                    return Err(EvalError::bad("vector literal lane count"));
                }
                Value::Vector(*s, lanes)
            }
            Expr::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.expr(a)?);
                }
                ops::builtin(*f, &vals)?
            }
            Expr::Safe(f, t, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    let v = self.expr(a)?;
                    if v.ty() != Type::Scalar(*t) {
                        return Err(EvalError::bad("safe_* argument of another type"));
                    }
                    vals.push(v);
                }
                if !f.is_safe_helper() {
                    return Err(EvalError::bad("not a safe_* helper"));
                }
                ops::builtin(*f, &vals)?
            }
            Expr::CallFn(i, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.expr(a)?);
                }
                self.call(*i, vals)?
            }
            Expr::Input(i) => {
                let i = match self.expr(i)? {
                    Value::Scalar(Scalar::UInt, b) => b as usize & (INPUT_LEN - 1),
                    _ => return Err(EvalError::bad("input index is not a uint")),
                };
                Value::Scalar(Scalar::UInt, self.unit.input[i] as u64)
            }
            Expr::GlobalId => Value::Scalar(Scalar::UInt, self.gid as u64),
            Expr::LocalId => Value::Scalar(Scalar::UInt, self.lid as u64),
        })
    }

    fn call(&mut self, i: usize, args: Vec<Value>) -> R<Value> {
        let f = self
            .unit
            .funcs
            .get(i)
            .ok_or_else(|| EvalError::bad("no such function"))?;
        if f.params.len() != args.len() {
            return Err(EvalError::bad("argument count"));
        }
        let mut frame = HashMap::new();
        for ((name, ty), v) in f.params.iter().zip(args) {
            if &v.ty() != ty {
                return Err(EvalError(format!("argument {name} of type {:?}", v.ty())));
            }
            frame.insert(name.clone(), v);
        }
        let saved = std::mem::replace(&mut self.scopes, vec![frame]);
        let r = self.stmts(&f.body);
        self.scopes = saved;
        match r? {
            Flow::Return(v) if v.ty() == f.ret => Ok(v),
            Flow::Return(_) => Err(EvalError::bad("return of another type")),
            _ => Err(EvalError::bad("a function that ends without return")),
        }
    }
}

fn read_path(v: &Value, path: &[Access], idx: &[i128]) -> R<Value> {
    let mut cur = v;
    let mut k = 0;
    for a in path {
        cur = match (a, cur) {
            (Access::Field(i), Value::Struct(_, f)) => {
                f.get(*i).ok_or_else(|| EvalError::bad("field"))?
            }
            (Access::Index(_), Value::Array(e)) => {
                let i = idx[k];
                k += 1;
                if i < 0 || i as usize >= e.len() {
                    return Err(EvalError(format!("store index {i} out of bounds")));
                }
                &e[i as usize]
            }
            (Access::Swizzle(l, _), v) => return ops::swizzle(v, l),
            _ => return Err(EvalError::bad("bad lvalue path")),
        };
    }
    Ok(cur.clone())
}

fn write_path(slot: &mut Value, path: &[Access], idx: &[i128], new: Value) -> R<()> {
    let mut cur = slot;
    let mut k = 0;
    for a in path {
        cur = match (a, cur) {
            (Access::Field(i), Value::Struct(_, f)) => {
                f.get_mut(*i).ok_or_else(|| EvalError::bad("field"))?
            }
            (Access::Index(_), Value::Array(e)) => {
                let i = idx[k];
                k += 1;
                if i < 0 || i as usize >= e.len() {
                    return Err(EvalError(format!("store index {i} out of bounds")));
                }
                &mut e[i as usize]
            }
            (Access::Swizzle(lanes, _), Value::Vector(s, l)) => {
                let src: Vec<u64> = match &new {
                    Value::Scalar(t, b) if t == s && lanes.len() == 1 => vec![*b],
                    Value::Vector(t, n) if t == s && n.len() == lanes.len() => n.clone(),
                    _ => return Err(EvalError::bad("swizzle store of another type")),
                };
                for (j, &lane) in lanes.iter().enumerate() {
                    if lanes[..j].contains(&lane) {
                        return Err(EvalError::bad("swizzle store with a repeated lane"));
                    }
                    *l.get_mut(lane as usize)
                        .ok_or_else(|| EvalError::bad("lane out of range"))? = src[j];
                }
                return Ok(());
            }
            _ => return Err(EvalError::bad("bad lvalue path")),
        };
    }
    if cur.ty() != new.ty() {
        return Err(EvalError(format!(
            "store of {:?} into {:?}",
            new.ty(),
            cur.ty()
        )));
    }
    *cur = new;
    Ok(())
}
