//! Expressions of a wanted type, kept well defined (see [`super::gen`]).

use super::ast::*;
use super::gen::{is_vector, Gen, VECTORS};
use rand::Rng;

const ARITH: [Scalar; 4] = [Scalar::Int, Scalar::UInt, Scalar::Long, Scalar::ULong];

fn bx(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Bin(op, bx(a), bx(b))
}

impl Gen {
    /// An expression of type `t` (a scalar, vector or struct), at most `d` levels deep.
    pub fn expr(&mut self, t: &Type, d: u32) -> Expr {
        if d == 0 || self.chance(0.2) {
            return self.leaf(t);
        }
        match t {
            Type::Scalar(s) if s.unpromoted() => self.scalar(*s, d),
            Type::Scalar(s) => self.small(*s, d),
            Type::Vector(s, n) => self.vector(*s, *n, d),
            _ => self.leaf(t),
        }
    }

    /// A literal's bits: often an edge value.
    pub fn literal_bits(&mut self, s: Scalar) -> u64 {
        let v: i128 = match self.rng.gen_range(0..10) {
            0 => 0,
            1 => 1,
            2 => -1,
            3 => s.min(),
            4 => s.max(),
            5 | 6 => self.rng.gen_range(-20..=20),
            7 => 1i128 << self.rng.gen_range(0..s.bits()),
            _ => self.rng.gen::<u64>() as i128,
        };
        s.wrap(v as u64)
    }

    fn lit(&mut self, s: Scalar) -> Expr {
        Expr::Lit(s, self.literal_bits(s))
    }

    /// A variable's value (or a part of one), a literal, an id or an input.
    fn leaf(&mut self, t: &Type) -> Expr {
        let paths = self.paths(t, false);
        if !paths.is_empty() && (self.chance(0.75) || matches!(t, Type::Struct(_))) {
            let (v, steps) = self.pick(&paths);
            return self.read(&v, &steps);
        }
        match t {
            Type::Scalar(Scalar::UInt) if self.chance(0.3) => match self.rng.gen_range(0..3) {
                0 => Expr::GlobalId,
                1 => Expr::LocalId,
                _ if self.in_func => self.lit(Scalar::UInt),
                _ => {
                    let i = self.lit(Scalar::UInt);
                    Expr::Input(bx(i))
                }
            },
            Type::Scalar(s) => self.lit(*s),
            Type::Vector(s, n) => {
                if self.chance(0.3) {
                    let l = self.lit(*s);
                    Expr::Cast(t.clone(), bx(l))
                } else {
                    let parts = (0..*n).map(|_| self.lit(*s)).collect();
                    Expr::VecLit(*s, *n, parts)
                }
            }
            Type::Struct(_) => {
                // Only asked for where a variable of the type exists (`paths` above).
                self.funcs
                    .iter()
                    .position(|f| &f.ret == t)
                    .and_then(|i| self.call(i, 1))
                    .unwrap_or(Expr::Lit(Scalar::Int, 0))
            }
            Type::Array(..) => Expr::Lit(Scalar::Int, 0),
        }
    }

    /// A call of a helper returning `t`, if one exists whose arguments can be made.
    fn call_returning(&mut self, t: &Type, d: u32) -> Option<Expr> {
        let fs: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| &self.funcs[i].ret == t)
            .collect();
        if fs.is_empty() {
            return None;
        }
        let i = self.pick(&fs);
        self.call(i, d)
    }

    fn call(&mut self, i: usize, d: u32) -> Option<Expr> {
        let params: Vec<Type> = self.funcs[i].params.iter().map(|p| p.1.clone()).collect();
        for p in &params {
            if matches!(p, Type::Struct(_)) && self.paths(p, false).is_empty() {
                return None;
            }
        }
        let args = params
            .iter()
            .map(|p| self.expr(p, d.saturating_sub(1)))
            .collect();
        Some(Expr::CallFn(i, args))
    }

    /// Wraps a signed operation in unsigned arithmetic: `as_int(as_uint(a) op as_uint(b))`.
    fn via_unsigned(&self, t: &Type, op: BinOp, a: Expr, b: Expr) -> Expr {
        let u = match t {
            Type::Scalar(s) => Type::Scalar(s.unsigned()),
            Type::Vector(s, n) => Type::Vector(s.unsigned(), *n),
            _ => t.clone(),
        };
        let a = Expr::AsType(u.clone(), bx(a));
        let b = Expr::AsType(u, bx(b));
        Expr::AsType(t.clone(), bx(bin(op, a, b)))
    }

    /// `b` made a fit shift count for elements of `s`: masked, or (OpenCL's modulo rule) not.
    fn shift_count(&mut self, s: Scalar, b: Expr) -> Expr {
        match self.rng.gen_range(0..3) {
            0 => b,
            1 => Expr::Lit(s, self.rng.gen_range(0..s.bits()) as u64),
            _ => bin(BinOp::And, b, Expr::Lit(s, (s.bits() - 1) as u64)),
        }
    }

    /// `a op b` for int, uint, long and ulong scalars or vectors of `t`, defined.
    fn arith(&mut self, t: &Type, s: Scalar, d: u32) -> Expr {
        let vector = matches!(t, Type::Vector(..));
        let op = self.pick(&[
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Div,
            BinOp::Rem,
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
            BinOp::Shl,
            BinOp::Shr,
        ]);
        let a = self.expr(t, d - 1);
        // A vector operation sometimes takes a scalar right side (widened, section 6.5).
        let scalar_b = vector && s.unpromoted() && self.chance(0.2) && !matches!(op, BinOp::Shl);
        let b = if scalar_b {
            self.expr(&Type::Scalar(s), d - 1)
        } else {
            self.expr(t, d - 1)
        };
        let signed = s.signed();
        match op {
            BinOp::And | BinOp::Or | BinOp::Xor => bin(op, a, b),
            BinOp::Add | BinOp::Sub | BinOp::Mul if !signed => bin(op, a, b),
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                if !vector && self.chance(0.5) {
                    let f = match op {
                        BinOp::Add => Builtin::SafeAdd,
                        BinOp::Sub => Builtin::SafeSub,
                        _ => Builtin::SafeMul,
                    };
                    Expr::Safe(f, s, vec![a, b])
                } else if scalar_b {
                    let b = Expr::Cast(t.clone(), bx(b));
                    self.via_unsigned(t, op, a, b)
                } else {
                    self.via_unsigned(t, op, a, b)
                }
            }
            BinOp::Div | BinOp::Rem => {
                if !vector && (signed || self.chance(0.5)) {
                    let f = if op == BinOp::Div {
                        Builtin::SafeDiv
                    } else {
                        Builtin::SafeRem
                    };
                    Expr::Safe(f, s, vec![a, b])
                } else if signed {
                    // A divisor in 1..=127.
                    let m = bin(BinOp::And, b, Expr::Lit(s, 127));
                    bin(op, a, bin(BinOp::Or, m, Expr::Lit(s, 1)))
                } else {
                    bin(op, a, bin(BinOp::Or, b, Expr::Lit(s, 1)))
                }
            }
            BinOp::Shl if signed => {
                let u = match t {
                    Type::Vector(_, n) => Type::Vector(s.unsigned(), *n),
                    _ => Type::Scalar(s.unsigned()),
                };
                let b = Expr::AsType(u.clone(), bx(b));
                let b = self.shift_count(s.unsigned(), b);
                let a = Expr::AsType(u, bx(a));
                Expr::AsType(t.clone(), bx(bin(BinOp::Shl, a, b)))
            }
            _ => {
                let b = self.shift_count(s, b);
                bin(op, a, b)
            }
        }
    }

    /// int, uint, long or ulong.
    fn scalar(&mut self, s: Scalar, d: u32) -> Expr {
        let t = Type::Scalar(s);
        match self.rng.gen_range(0..24) {
            0..=6 => self.arith(&t, s, d),
            7 => {
                let a = self.expr(&t, d - 1);
                if !s.signed() && self.chance(0.5) {
                    Expr::Unary(UnOp::Neg, bx(a))
                } else if s.signed() && self.chance(0.5) {
                    Expr::Safe(Builtin::SafeSub, s, vec![Expr::Lit(s, 0), a])
                } else {
                    Expr::Unary(UnOp::Not, bx(a))
                }
            }
            8 | 9 if s == Scalar::Int => self.truth(d),
            10 => {
                let c = self.cond();
                let a = self.expr(&t, d - 1);
                let b = self.expr(&t, d - 1);
                Expr::Cond(bx(c), bx(a), bx(b))
            }
            11 => {
                let o = self.scalar_type();
                let e = self.expr(&Type::Scalar(o), d - 1);
                Expr::Cast(t, bx(e))
            }
            12 => {
                let o = self.scalar_type();
                let e = self.expr(&Type::Scalar(o), d - 1);
                let sat = self.chance(0.5);
                Expr::Convert(t, sat, bx(e))
            }
            13..=16 => self.builtin(&t, s, d),
            17 | 18 => {
                let ws: Vec<u8> = VECTORS.iter().filter(|v| v.0 == s).map(|v| v.1).collect();
                let w = self.pick(&ws);
                let v = self.expr(&Type::Vector(s, w), d - 1);
                let l = self.rng.gen_range(0..w);
                let style = if w <= 4 && self.chance(0.5) {
                    SwizzleStyle::Xyzw
                } else {
                    SwizzleStyle::Numeric
                };
                Expr::Swizzle(bx(v), vec![l], style)
            }
            19 => {
                let from = self.same_size(&t);
                let e = self.expr(&from, d - 1);
                Expr::AsType(t, bx(e))
            }
            20 | 21 => self.call_returning(&t, d).unwrap_or_else(|| self.leaf(&t)),
            22 if s == Scalar::UInt && !self.in_func => {
                let i = self.expr(&Type::UINT, d - 1);
                Expr::Input(bx(i))
            }
            _ => self.leaf(&t),
        }
    }

    /// A truth value (int 0 or 1): a comparison, `&&`, `||`, `!`.
    fn truth(&mut self, d: u32) -> Expr {
        match self.rng.gen_range(0..4) {
            0 | 1 => {
                let s = self.pick(&ARITH);
                let t = Type::Scalar(s);
                let op = self.pick(&[
                    BinOp::Lt,
                    BinOp::Le,
                    BinOp::Gt,
                    BinOp::Ge,
                    BinOp::Eq,
                    BinOp::Ne,
                ]);
                bin(op, self.expr(&t, d - 1), self.expr(&t, d - 1))
            }
            2 => {
                let op = self.pick(&[BinOp::LAnd, BinOp::LOr]);
                let s = self.pick(&ARITH);
                bin(
                    op,
                    self.expr(&Type::INT, d - 1),
                    self.expr(&Type::Scalar(s), d - 1),
                )
            }
            _ => {
                let s = self.pick(&ARITH);
                Expr::Unary(UnOp::LNot, bx(self.expr(&Type::Scalar(s), d - 1)))
            }
        }
    }

    /// char, uchar, short, ushort: no arithmetic (C would promote it), only conversions,
    /// lanes, built-ins (which keep the type) and calls.
    fn small(&mut self, s: Scalar, d: u32) -> Expr {
        let t = Type::Scalar(s);
        match self.rng.gen_range(0..10) {
            0..=2 => {
                let o = self.pick(&ARITH);
                let e = self.expr(&Type::Scalar(o), d - 1);
                Expr::Cast(t, bx(e))
            }
            3 | 4 => {
                let o = self.pick(&ARITH);
                let e = self.expr(&Type::Scalar(o), d - 1);
                let sat = self.chance(0.5);
                Expr::Convert(t, sat, bx(e))
            }
            5 | 6 => self.builtin(&t, s, d),
            7 => {
                let ws: Vec<u8> = VECTORS.iter().filter(|v| v.0 == s).map(|v| v.1).collect();
                if ws.is_empty() {
                    return self.leaf(&t);
                }
                let w = self.pick(&ws);
                let v = self.expr(&Type::Vector(s, w), d - 1);
                let l = self.rng.gen_range(0..w);
                Expr::Swizzle(bx(v), vec![l], SwizzleStyle::Numeric)
            }
            8 => self.call_returning(&t, d).unwrap_or_else(|| self.leaf(&t)),
            _ => self.leaf(&t),
        }
    }

    /// A type of the same size as `t` (for `as_T`), scalar or vector.
    fn same_size(&mut self, t: &Type) -> Type {
        let bytes = |t: &Type| t.elem().map_or(0, |s| s.bits() as usize / 8 * t.lanes());
        let want = bytes(t);
        let mut cands: Vec<Type> = ARITH
            .iter()
            .map(|s| Type::Scalar(*s))
            .chain(VECTORS.iter().map(|(s, n)| Type::Vector(*s, *n)))
            .filter(|c| bytes(c) == want && c != t)
            .collect();
        if cands.is_empty() {
            cands.push(t.clone());
        }
        self.pick(&cands)
    }

    /// A built-in of result type `t` (elements `s`).
    fn builtin(&mut self, t: &Type, s: Scalar, d: u32) -> Expr {
        let vector = matches!(t, Type::Vector(..));
        let with_elem = |e: Scalar| match t {
            Type::Vector(_, n) => Type::Vector(e, *n),
            _ => Type::Scalar(e),
        };
        let f = self.pick(&[
            Builtin::Min,
            Builtin::Max,
            Builtin::Clamp,
            Builtin::Abs,
            Builtin::AbsDiff,
            Builtin::AddSat,
            Builtin::SubSat,
            Builtin::MulHi,
            Builtin::Rotate,
            Builtin::Popcount,
            Builtin::Clz,
            Builtin::Hadd,
            Builtin::Rhadd,
            Builtin::Select,
        ]);
        let e = d - 1;
        match f {
            Builtin::Abs | Builtin::AbsDiff => {
                if s.signed() {
                    return self.leaf(t);
                }
                let from = with_elem(s.signed_of());
                let from =
                    if (vector && !is_vector(s.signed_of(), t.lanes() as u8)) || self.chance(0.3) {
                        t.clone()
                    } else {
                        from
                    };
                let mut args = vec![self.expr(&from, e)];
                if f == Builtin::AbsDiff {
                    args.push(self.expr(&from, e));
                }
                Expr::Call(f, args)
            }
            Builtin::Popcount | Builtin::Clz => Expr::Call(f, vec![self.expr(t, e)]),
            Builtin::Clamp => {
                let x = self.expr(t, e);
                if self.chance(0.5) {
                    let (mut lo, mut hi) = (self.literal_bits(s), self.literal_bits(s));
                    if s.value(lo) > s.value(hi) {
                        std::mem::swap(&mut lo, &mut hi);
                    }
                    Expr::Call(f, vec![x, Expr::Lit(s, lo), Expr::Lit(s, hi)])
                } else {
                    let a = self.expr(t, e.min(1));
                    let b = self.expr(t, e.min(1));
                    let lo = Expr::Call(Builtin::Min, vec![a.clone(), b.clone()]);
                    let hi = Expr::Call(Builtin::Max, vec![a, b]);
                    Expr::Call(f, vec![x, lo, hi])
                }
            }
            Builtin::Select => {
                let a = self.expr(t, e);
                let b = self.expr(t, e);
                let cs = if self.chance(0.5) {
                    s.signed_of()
                } else {
                    s.unsigned()
                };
                let ct = with_elem(cs);
                let ct = if vector && !is_vector(cs, t.lanes() as u8) {
                    with_elem(if is_vector(s.signed_of(), t.lanes() as u8) {
                        s.signed_of()
                    } else {
                        s.unsigned()
                    })
                } else if !vector && !cs.unpromoted() {
                    t.clone()
                } else {
                    ct
                };
                if vector && !is_vector(ct.elem().unwrap_or(s), t.lanes() as u8) {
                    return bin(BinOp::Xor, a, b);
                }
                let c = self.expr(&ct, e);
                Expr::Call(f, vec![a, b, c])
            }
            Builtin::Min | Builtin::Max if vector && self.chance(0.3) => {
                let a = self.expr(t, e);
                let b = self.expr(&Type::Scalar(s), e);
                Expr::Call(f, vec![a, b])
            }
            _ => {
                let a = self.expr(t, e);
                let b = self.expr(t, e);
                Expr::Call(f, vec![a, b])
            }
        }
    }

    /// A vector of `n` elements `s`.
    fn vector(&mut self, s: Scalar, n: u8, d: u32) -> Expr {
        let t = Type::Vector(s, n);
        match self.rng.gen_range(0..26) {
            0..=5 if s.unpromoted() || !s.signed() => self.arith(&t, s, d),
            6 => {
                let a = self.expr(&t, d - 1);
                if s.signed() {
                    let u = Type::Vector(s.unsigned(), n);
                    let x = Expr::Unary(UnOp::Neg, bx(Expr::AsType(u, bx(a))));
                    Expr::AsType(t, bx(x))
                } else if self.chance(0.5) {
                    Expr::Unary(UnOp::Neg, bx(a))
                } else {
                    Expr::Unary(UnOp::Not, bx(a))
                }
            }
            7 | 8 if s.signed() => {
                let o = if is_vector(s.unsigned(), n) && self.chance(0.5) {
                    s.unsigned()
                } else {
                    s
                };
                let ot = Type::Vector(o, n);
                let op = self.pick(&[
                    BinOp::Lt,
                    BinOp::Le,
                    BinOp::Gt,
                    BinOp::Ge,
                    BinOp::Eq,
                    BinOp::Ne,
                ]);
                bin(op, self.expr(&ot, d - 1), self.expr(&ot, d - 1))
            }
            9..=11 => {
                // (T)(parts...)
                let mut parts = Vec::new();
                let mut left = n;
                while left > 0 {
                    let sizes: Vec<u8> = [1u8, 2, 4, 8]
                        .into_iter()
                        .filter(|&k| k <= left && k < n && (k == 1 || is_vector(s, k)))
                        .collect();
                    let k = self.pick(&sizes);
                    let pt = if k == 1 {
                        Type::Scalar(s)
                    } else {
                        Type::Vector(s, k)
                    };
                    parts.push(self.expr(&pt, d - 1));
                    left -= k;
                }
                Expr::VecLit(s, n, parts)
            }
            12 => {
                let o = if self.chance(0.6) {
                    s
                } else {
                    self.scalar_type()
                };
                let e = self.expr(&Type::Scalar(o), d - 1);
                Expr::Cast(t, bx(e))
            }
            13 | 14 => {
                let others: Vec<Scalar> = VECTORS
                    .iter()
                    .filter(|v| v.1 == n && v.0 != s)
                    .map(|v| v.0)
                    .collect();
                if others.is_empty() {
                    return self.leaf(&t);
                }
                let o = self.pick(&others);
                let e = self.expr(&Type::Vector(o, n), d - 1);
                let sat = self.chance(0.4);
                Expr::Convert(t, sat, bx(e))
            }
            15 => {
                let from = self.same_size(&t);
                let e = self.expr(&from, d - 1);
                Expr::AsType(t, bx(e))
            }
            16..=18 => self.swizzle(s, n, d),
            19..=22 => self.builtin(&t, s, d),
            23 => {
                let c = self.cond();
                let a = self.expr(&t, d - 1);
                let b = self.expr(&t, d - 1);
                Expr::Cond(bx(c), bx(a), bx(b))
            }
            24 => self.call_returning(&t, d).unwrap_or_else(|| self.leaf(&t)),
            _ => self.leaf(&t),
        }
    }

    /// `v.<lanes>` of a vector of the same element type giving `n` lanes.
    fn swizzle(&mut self, s: Scalar, n: u8, d: u32) -> Expr {
        let ws: Vec<u8> = VECTORS.iter().filter(|v| v.0 == s).map(|v| v.1).collect();
        let w = self.pick(&ws);
        let v = self.expr(&Type::Vector(s, w), d - 1);
        if w == 2 * n && self.chance(0.5) {
            let (style, lanes): (SwizzleStyle, Vec<u8>) = match self.rng.gen_range(0..4) {
                0 => (SwizzleStyle::Lo, (0..n).collect()),
                1 => (SwizzleStyle::Hi, (n..w).collect()),
                2 => (SwizzleStyle::Even, (0..n).map(|i| 2 * i).collect()),
                _ => (SwizzleStyle::Odd, (0..n).map(|i| 2 * i + 1).collect()),
            };
            return Expr::Swizzle(bx(v), lanes, style);
        }
        let lanes = (0..n).map(|_| self.rng.gen_range(0..w)).collect();
        let style = if w <= 4 && n <= 4 && self.chance(0.5) {
            SwizzleStyle::Xyzw
        } else {
            SwizzleStyle::Numeric
        };
        Expr::Swizzle(bx(v), lanes, style)
    }
}
