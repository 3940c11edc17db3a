//! The generator: a seeded random [`Unit`] of well-defined OpenCL C (in the manner of
//! CLsmith): structs (nested, with arrays), helper functions, private arrays, vectors and
//! swizzles, bounded loops (nested, with data-dependent bounds and exits), `if`, `switch`,
//! `?:`, `select`, conversions and integer arithmetic kept defined (unsigned wraps; signed
//! operations go through the prelude's `safe_*` helpers or through `as_uint`; shift counts are
//! masked or rely on OpenCL's modulo rule; divisors are made non-zero). Expressions are in
//! [`super::gen_expr`].

use super::ast::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Work-items of every unit.
pub const GLOBAL: usize = 16;

/// The vector types the generator uses.
pub const VECTORS: [(Scalar, u8); 13] = [
    (Scalar::Int, 2),
    (Scalar::Int, 4),
    (Scalar::Int, 8),
    (Scalar::UInt, 2),
    (Scalar::UInt, 4),
    (Scalar::UInt, 8),
    (Scalar::UInt, 16),
    (Scalar::UChar, 4),
    (Scalar::UChar, 8),
    (Scalar::UShort, 2),
    (Scalar::UShort, 4),
    (Scalar::Long, 2),
    (Scalar::ULong, 2),
];

/// Whether the generator uses the vector type.
pub fn is_vector(s: Scalar, n: u8) -> bool {
    VECTORS.contains(&(s, n))
}

/// A variable in scope.
#[derive(Clone, Debug)]
pub(super) struct Var {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
    /// A loop counter's range of values, inclusive.
    pub range: Option<(i32, i32)>,
}

/// One step of a path into a variable, before its index or lane is chosen.
#[derive(Clone, Debug)]
pub(super) enum Step {
    Field(usize),
    Index(usize),
    Lane(u8),
}

pub(super) struct Gen {
    pub rng: ChaCha8Rng,
    pub structs: Vec<StructDef>,
    pub funcs: Vec<Func>,
    pub scopes: Vec<Vec<Var>>,
    next: usize,
    /// Enclosing loops / enclosing loops or switches.
    loops: u32,
    breakable: u32,
    /// Most iterations of the enclosing loops together.
    iterations: u32,
    /// Statements left to write.
    budget: i32,
    pub depth: u32,
    pub in_func: bool,
    /// The return type of the function being written.
    ret: Option<Type>,
    /// Index expressions being written inside one another.
    indexing: u32,
}

/// The unit of `seed`.
pub fn generate(seed: u64) -> Unit {
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(seed),
        structs: Vec::new(),
        funcs: Vec::new(),
        scopes: Vec::new(),
        next: 0,
        loops: 0,
        breakable: 0,
        iterations: 1,
        budget: 0,
        depth: 3,
        in_func: false,
        ret: None,
        indexing: 0,
    };
    g.depth = g.rng.gen_range(2..=4);
    let nstructs = g.rng.gen_range(0..=3);
    for _ in 0..nstructs {
        let s = g.struct_def();
        g.structs.push(s);
    }
    let nfuncs = g.rng.gen_range(0..=3);
    for _ in 0..nfuncs {
        let f = g.func();
        g.funcs.push(f);
    }
    let local = match g.rng.gen_range(0..4) {
        0 => None,
        1 => Some(4),
        2 => Some(8),
        _ => Some(16),
    };
    let epilogue = if local.is_some() && g.chance(0.25) {
        Epilogue::LocalExchange
    } else {
        Epilogue::Store
    };
    let body = g.kernel_body();
    let input = (0..INPUT_LEN)
        .map(|_| g.literal_bits(Scalar::UInt) as u32)
        .collect();
    Unit {
        seed,
        structs: g.structs,
        funcs: g.funcs,
        body,
        epilogue,
        global: GLOBAL,
        local,
        input,
    }
}

impl Gen {
    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.gen_bool(p)
    }

    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.rng.gen_range(0..items.len())].clone()
    }

    fn name(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn declare(&mut self, name: &str, ty: Type, mutable: bool, range: Option<(i32, i32)>) {
        if let Some(s) = self.scopes.last_mut() {
            s.push(Var {
                name: name.to_string(),
                ty,
                mutable,
                range,
            });
        }
    }

    /// An unsigned-heavy choice of a scalar type.
    pub fn scalar_type(&mut self) -> Scalar {
        match self.rng.gen_range(0..20) {
            0..=5 => Scalar::Int,
            6..=11 => Scalar::UInt,
            12..=13 => Scalar::Long,
            14..=15 => Scalar::ULong,
            16 => Scalar::Char,
            17 => Scalar::UChar,
            18 => Scalar::Short,
            _ => Scalar::UShort,
        }
    }

    /// A scalar or vector type.
    pub fn value_type(&mut self) -> Type {
        if self.chance(0.65) {
            Type::Scalar(self.scalar_type())
        } else {
            let (s, n) = self.pick(&VECTORS);
            Type::Vector(s, n)
        }
    }

    /// A type for a variable or field: also structs and arrays.
    fn var_type(&mut self, structs: usize) -> Type {
        match self.rng.gen_range(0..20) {
            0..=2 => {
                let elem = if structs > 0 && self.chance(0.3) {
                    Type::Struct(self.rng.gen_range(0..structs))
                } else {
                    self.value_type()
                };
                let n = self.pick(&[2, 3, 4, 5, 8]);
                if self.chance(0.15) {
                    let m = self.pick(&[2, 3, 4]);
                    Type::Array(Box::new(Type::Array(Box::new(elem), m)), n)
                } else {
                    Type::Array(Box::new(elem), n)
                }
            }
            3..=5 if structs > 0 => Type::Struct(self.rng.gen_range(0..structs)),
            _ => self.value_type(),
        }
    }

    fn struct_def(&mut self) -> StructDef {
        let n = self.rng.gen_range(1..=5);
        let earlier = self.structs.len();
        let fields = (0..n).map(|_| self.var_type(earlier)).collect();
        StructDef { fields }
    }

    fn func(&mut self) -> Func {
        let ret = if !self.structs.is_empty() && self.chance(0.2) {
            Type::Struct(self.rng.gen_range(0..self.structs.len()))
        } else {
            self.value_type()
        };
        let nparams = self.rng.gen_range(1..=4);
        let mut params = Vec::new();
        self.scopes = vec![Vec::new()];
        for _ in 0..nparams {
            let t = if !self.structs.is_empty() && self.chance(0.15) {
                Type::Struct(self.rng.gen_range(0..self.structs.len()))
            } else {
                self.value_type()
            };
            let n = self.name("p");
            self.declare(&n, t.clone(), true, None);
            params.push((n, t));
        }
        self.in_func = true;
        self.ret = Some(ret.clone());
        self.iterations = 1;
        self.budget = self.rng.gen_range(2..=10);
        let mut body = self.stmts();
        if let Type::Struct(_) = ret {
            if self.paths(&ret, false).is_empty() {
                let n = self.name("v");
                let init = self.init(&ret);
                body.push(Stmt::Decl(n.clone(), ret.clone(), init));
                self.declare(&n, ret.clone(), true, None);
            }
        }
        let e = self.expr(&ret, self.depth);
        body.push(Stmt::Return(e));
        self.in_func = false;
        self.ret = None;
        self.scopes.clear();
        Func { ret, params, body }
    }

    fn kernel_body(&mut self) -> Vec<Stmt> {
        self.scopes = vec![Vec::new()];
        self.iterations = 1;
        let mut body = vec![
            Stmt::Decl("gid".into(), Type::UINT, Init::Expr(Expr::GlobalId)),
            Stmt::Decl("lid".into(), Type::UINT, Init::Expr(Expr::LocalId)),
            Stmt::Decl(
                "h".into(),
                Type::UINT,
                Init::Expr(Expr::Lit(Scalar::UInt, 2166136261)),
            ),
        ];
        self.declare("gid", Type::UINT, false, None);
        self.declare("lid", Type::UINT, false, None);
        self.declare("h", Type::UINT, true, None);
        for k in 0..self.rng.gen_range(1..=3u64) {
            let n = self.name("v");
            let idx = Expr::Bin(
                BinOp::Add,
                Box::new(Expr::Bin(
                    BinOp::Mul,
                    Box::new(Expr::Var("gid".into())),
                    Box::new(Expr::Lit(Scalar::UInt, self.rng.gen_range(1..8))),
                )),
                Box::new(Expr::Lit(Scalar::UInt, k)),
            );
            body.push(Stmt::Decl(
                n.clone(),
                Type::UINT,
                Init::Expr(Expr::Input(Box::new(idx))),
            ));
            self.declare(&n, Type::UINT, true, None);
        }
        self.budget = self.rng.gen_range(8..=40);
        body.extend(self.stmts());
        // Fold every variable of the kernel's outer scope into h.
        let vars: Vec<Var> = self.scopes[0].clone();
        for v in vars
            .iter()
            .filter(|v| !["gid", "lid", "h"].contains(&v.name.as_str()))
        {
            self.fold_value(&mut body, Expr::Var(v.name.clone()), &v.ty);
        }
        self.scopes.clear();
        body
    }

    /// `h = (h ^ (uint)e) * 16777619u` for each scalar inside `e`.
    fn fold_value(&self, out: &mut Vec<Stmt>, e: Expr, t: &Type) {
        match t {
            Type::Scalar(s) => {
                out.push(fold(e.clone()));
                if s.bits() == 64 {
                    out.push(fold(Expr::Bin(
                        BinOp::Shr,
                        Box::new(e),
                        Box::new(Expr::Lit(*s, 32)),
                    )));
                }
            }
            Type::Vector(s, n) => {
                for i in 0..*n {
                    let lane = Expr::Swizzle(Box::new(e.clone()), vec![i], SwizzleStyle::Numeric);
                    self.fold_value(out, lane, &Type::Scalar(*s));
                }
            }
            Type::Struct(i) => {
                for (j, f) in self.structs[*i].fields.iter().enumerate() {
                    self.fold_value(out, Expr::Field(Box::new(e.clone()), j), f);
                }
            }
            Type::Array(elem, n) => {
                for j in 0..*n {
                    let x = Expr::Index(
                        Box::new(e.clone()),
                        Box::new(Expr::Lit(Scalar::Int, j as u64)),
                    );
                    self.fold_value(out, x, elem);
                }
            }
        }
    }

    /// An initialiser for a variable of type `t`.
    pub fn init(&mut self, t: &Type) -> Init {
        match t {
            Type::Array(e, n) => Init::List((0..*n).map(|_| self.init(e)).collect()),
            Type::Struct(i) => {
                if !self.paths(t, false).is_empty() && self.chance(0.3) {
                    Init::Expr(self.expr(t, self.depth))
                } else {
                    let fields = self.structs[*i].fields.clone();
                    Init::List(fields.iter().map(|f| self.init(f)).collect())
                }
            }
            _ => Init::Expr(self.expr(t, self.depth)),
        }
    }

    fn stmts(&mut self) -> Vec<Stmt> {
        let mut out = Vec::new();
        let n = self.rng.gen_range(1..=6);
        for _ in 0..n {
            if self.budget <= 0 {
                break;
            }
            self.budget -= 1;
            out.extend(self.stmt());
        }
        out
    }

    fn block(&mut self) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        let b = self.stmts();
        self.scopes.pop();
        b
    }

    fn stmt(&mut self) -> Vec<Stmt> {
        let loops_ok = self.iterations <= 64 && self.loops < 3;
        match self.rng.gen_range(0..100) {
            0..=17 => vec![self.decl()],
            18..=44 => self.assign().into_iter().collect(),
            45..=54 => {
                let c = self.cond();
                let t = self.block();
                let f = if self.chance(0.4) {
                    self.block()
                } else {
                    Vec::new()
                };
                vec![Stmt::If(c, t, f)]
            }
            55..=63 if loops_ok => vec![self.for_loop()],
            64..=67 if loops_ok => vec![self.while_loop()],
            68..=71 => vec![self.switch()],
            72..=78 if !self.in_func => {
                let t = Type::Scalar(self.scalar_type());
                let e = self.expr(&t, self.depth);
                vec![fold(Expr::Cast(Type::UINT, Box::new(e)))]
            }
            79..=82 if self.breakable > 0 => {
                let c = self.cond();
                let jump = if self.loops > 0 && self.chance(0.4) {
                    Stmt::Continue
                } else {
                    Stmt::Break
                };
                vec![Stmt::If(c, vec![jump], Vec::new())]
            }
            83..=85 if self.in_func => {
                let ret = self.ret.clone();
                match ret {
                    Some(t) if !matches!(t, Type::Struct(_)) => {
                        let c = self.cond();
                        let e = self.expr(&t, self.depth);
                        vec![Stmt::If(c, vec![Stmt::Return(e)], Vec::new())]
                    }
                    _ => self.assign().into_iter().collect(),
                }
            }
            86..=91 if loops_ok => self.counter_pattern(),
            92..=94 => vec![Stmt::Block(self.block())],
            _ => self.assign().into_iter().collect(),
        }
    }

    fn decl(&mut self) -> Stmt {
        let t = self.var_type(self.structs.len());
        let init = self.init(&t);
        let n = self.name("v");
        self.declare(&n, t.clone(), true, None);
        Stmt::Decl(n, t, init)
    }

    /// A condition: a comparison, a truth value or a bit test.
    pub fn cond(&mut self) -> Expr {
        let d = self.depth.min(3);
        match self.rng.gen_range(0..3) {
            0 => {
                let s = self.pick(&[Scalar::Int, Scalar::UInt, Scalar::Long, Scalar::ULong]);
                let t = Type::Scalar(s);
                let op = self.pick(&[
                    BinOp::Lt,
                    BinOp::Le,
                    BinOp::Gt,
                    BinOp::Ge,
                    BinOp::Eq,
                    BinOp::Ne,
                ]);
                Expr::Bin(
                    op,
                    Box::new(self.expr(&t, d - 1)),
                    Box::new(self.expr(&t, d - 1)),
                )
            }
            1 => {
                let t = Type::Scalar(self.pick(&[Scalar::Int, Scalar::UInt]));
                let bit = self.rng.gen_range(0..4);
                Expr::Bin(
                    BinOp::And,
                    Box::new(self.expr(&t, d - 1)),
                    Box::new(Expr::Lit(t.elem().unwrap_or(Scalar::Int), 1 << bit)),
                )
            }
            _ => self.expr(&Type::INT, d),
        }
    }

    fn assign(&mut self) -> Option<Stmt> {
        let targets = self.writable();
        if targets.is_empty() {
            return None;
        }
        let (var, steps, leaf) = self.pick(&targets);
        let mut path = self.accesses(&steps);
        let mut t = leaf;
        if let Type::Vector(s, n) = t {
            if self.chance(0.3) {
                let k = self.pick(&[1u8, 2, 4]);
                if k < n && (k == 1 || is_vector(s, k)) {
                    let mut lanes: Vec<u8> = (0..n).collect();
                    for i in 0..k as usize {
                        let j = self.rng.gen_range(i..lanes.len());
                        lanes.swap(i, j);
                    }
                    lanes.truncate(k as usize);
                    let style = if n <= 4 && self.chance(0.5) {
                        SwizzleStyle::Xyzw
                    } else {
                        SwizzleStyle::Numeric
                    };
                    path.push(Access::Swizzle(lanes, style));
                    t = if k == 1 {
                        Type::Scalar(s)
                    } else {
                        Type::Vector(s, k)
                    };
                }
            }
        }
        let compound = match &t {
            Type::Scalar(s) if s.unpromoted() => Some(s.signed()),
            Type::Vector(s, _) => Some(s.signed()),
            _ => None,
        };
        let lv = LValue { var, path };
        if let (Some(signed), true) = (compound, self.chance(0.35)) {
            let s = t.elem().unwrap_or(Scalar::Int);
            let ops: &[BinOp] = if signed {
                &[BinOp::And, BinOp::Or, BinOp::Xor, BinOp::Shr]
            } else {
                &[
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Shl,
                    BinOp::Shr,
                ]
            };
            let op = self.pick(ops);
            let mut e = self.expr(&t, self.depth);
            if matches!(op, BinOp::Shl | BinOp::Shr) {
                e = Expr::Bin(
                    BinOp::And,
                    Box::new(e),
                    Box::new(Expr::Lit(s, (s.bits() - 1) as u64)),
                );
            }
            return Some(Stmt::Assign(lv, Some(op), e));
        }
        let e = self.expr(&t, self.depth);
        Some(Stmt::Assign(lv, None, e))
    }

    fn for_loop(&mut self) -> Stmt {
        let var = self.name("i");
        let start = self.pick(&[0, 0, 0, 1, -2]);
        let step = if self.chance(0.8) { 1 } else { 2 };
        let inclusive = self.chance(0.3);
        let (bound, hi) = if self.chance(0.5) {
            let b = start + self.rng.gen_range(0..=8);
            (Expr::Lit(Scalar::Int, b as u32 as u64), b)
        } else {
            let e = self.expr(&Type::INT, 2);
            (
                Expr::Bin(BinOp::And, Box::new(e), Box::new(Expr::Lit(Scalar::Int, 7))),
                7,
            )
        };
        let last = if inclusive { hi } else { hi - 1 };
        let body = self.loop_body(
            |g| {
                g.declare(&var, Type::INT, false, Some((start, last.max(start))));
            },
            9,
        );
        Stmt::For {
            var,
            start,
            inclusive,
            bound,
            step,
            body,
        }
    }

    fn while_loop(&mut self) -> Stmt {
        let counter = self.name("c");
        let limit = self.rng.gen_range(1..=6);
        let cond = self.cond();
        let do_while = self.chance(0.4);
        let c2 = counter.clone();
        let body = self.loop_body(
            |g| g.declare(&c2, Type::INT, false, Some((1, limit as i32))),
            limit + 1,
        );
        Stmt::While {
            counter,
            limit,
            cond,
            do_while,
            body,
        }
    }

    fn loop_body(&mut self, declare: impl FnOnce(&mut Gen), iterations: u32) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        declare(self);
        self.loops += 1;
        self.breakable += 1;
        let saved = self.iterations;
        self.iterations = saved.saturating_mul(iterations);
        let b = self.block();
        self.iterations = saved;
        self.loops -= 1;
        self.breakable -= 1;
        self.scopes.pop();
        b
    }

    /// A counter bumped under a condition and used as a store index (the shape of issue 18's
    /// first finding): `T a[N] = {..}; int n = 0; for (...) if (c) { a[n & (N-1)] = e; n++; }`.
    fn counter_pattern(&mut self) -> Vec<Stmt> {
        let elem =
            Type::Scalar(self.pick(&[Scalar::Int, Scalar::UInt, Scalar::UChar, Scalar::Long]));
        let len = self.pick(&[4usize, 8]);
        let arr = self.name("v");
        let n = self.name("v");
        let aty = Type::Array(Box::new(elem.clone()), len);
        let init = self.init(&aty);
        let mut out = vec![
            Stmt::Decl(arr.clone(), aty.clone(), init),
            Stmt::Decl(n.clone(), Type::INT, Init::Expr(Expr::Lit(Scalar::Int, 0))),
        ];
        self.declare(&arr, aty, true, None);
        self.declare(&n, Type::INT, true, None);
        let var = self.name("i");
        let bound = self.rng.gen_range(2..=8);
        let (arr2, n2) = (arr.clone(), n.clone());
        self.scopes.push(vec![Var {
            name: var.clone(),
            ty: Type::INT,
            mutable: false,
            range: Some((0, bound - 1)),
        }]);
        let c = self.cond();
        let e = self.expr(&elem, self.depth.min(3));
        self.scopes.pop();
        let idx = Expr::Bin(
            BinOp::And,
            Box::new(Expr::Var(n2.clone())),
            Box::new(Expr::Lit(Scalar::Int, (len - 1) as u64)),
        );
        let store = Stmt::Assign(
            LValue {
                var: arr2,
                path: vec![Access::Index(idx)],
            },
            None,
            e,
        );
        let bump = Stmt::Assign(
            LValue {
                var: n2,
                path: Vec::new(),
            },
            None,
            Expr::Safe(
                Builtin::SafeAdd,
                Scalar::Int,
                vec![Expr::Var(n.clone()), Expr::Lit(Scalar::Int, 1)],
            ),
        );
        out.push(Stmt::For {
            var,
            start: 0,
            inclusive: false,
            bound: Expr::Lit(Scalar::Int, bound as u64),
            step: 1,
            body: vec![Stmt::If(c, vec![store, bump], Vec::new())],
        });
        out
    }

    fn switch(&mut self) -> Stmt {
        let mask = self.pick(&[3u64, 7]);
        let e = Expr::Bin(
            BinOp::And,
            Box::new(self.expr(&Type::INT, 2)),
            Box::new(Expr::Lit(Scalar::Int, mask)),
        );
        let narms = self.rng.gen_range(2..=4);
        let mut values: Vec<i32> = (0..=mask as i32).collect();
        let mut arms = Vec::new();
        self.breakable += 1;
        for k in 0..narms {
            let cases = if k == narms - 1 && self.chance(0.5) {
                Vec::new()
            } else {
                let m = self.rng.gen_range(1..=2).min(values.len());
                (0..m)
                    .map(|_| {
                        let i = self.rng.gen_range(0..values.len());
                        values.swap_remove(i)
                    })
                    .collect()
            };
            if cases.is_empty() && k != narms - 1 {
                continue;
            }
            let body = self.block();
            let breaks = self.chance(0.75);
            arms.push(SwitchArm {
                cases,
                body,
                breaks,
            });
            if values.is_empty() {
                break;
            }
        }
        self.breakable -= 1;
        Stmt::Switch(e, arms)
    }

    /// Every path to a scalar, vector or struct in a variable (`mutable_only`: of mutable
    /// variables), with its type; `want`: only those of that type.
    pub fn paths(&self, want: &Type, mutable_only: bool) -> Vec<(String, Vec<Step>)> {
        let mut out = Vec::new();
        for v in self.scopes.iter().flatten() {
            if mutable_only && !v.mutable {
                continue;
            }
            walk(&self.structs, &v.ty, &mut Vec::new(), &mut |steps, t| {
                if t == want {
                    out.push((v.name.clone(), steps.to_vec()));
                }
            });
        }
        out
    }

    fn writable(&self) -> Vec<(String, Vec<Step>, Type)> {
        let mut out = Vec::new();
        for v in self.scopes.iter().flatten().filter(|v| v.mutable) {
            walk(&self.structs, &v.ty, &mut Vec::new(), &mut |steps, t| {
                if !matches!(t, Type::Array(..)) {
                    out.push((v.name.clone(), steps.to_vec(), t.clone()));
                }
            });
        }
        out
    }

    /// The accesses of a path, with in-bounds indices.
    fn accesses(&mut self, steps: &[Step]) -> Vec<Access> {
        steps
            .iter()
            .map(|s| match s {
                Step::Field(i) => Access::Field(*i),
                Step::Index(n) => Access::Index(self.index(*n)),
                Step::Lane(w) => {
                    let l = self.rng.gen_range(0..*w);
                    Access::Swizzle(vec![l], SwizzleStyle::Numeric)
                }
            })
            .collect()
    }

    /// An in-bounds index of an array of `n`: a constant, a loop counter of a fitting range,
    /// a masked value (n a power of two) or a remainder.
    pub fn index(&mut self, n: usize) -> Expr {
        let counters: Vec<String> = self
            .scopes
            .iter()
            .flatten()
            .filter(|v| v.range.is_some_and(|(lo, hi)| lo >= 0 && (hi as usize) < n))
            .map(|v| v.name.clone())
            .collect();
        if self.indexing >= 2 {
            return Expr::Lit(Scalar::Int, self.rng.gen_range(0..n) as u64);
        }
        self.indexing += 1;
        let e = self.index_of(n, &counters);
        self.indexing -= 1;
        e
    }

    fn index_of(&mut self, n: usize, counters: &[String]) -> Expr {
        match self.rng.gen_range(0..4) {
            0 => Expr::Lit(Scalar::Int, self.rng.gen_range(0..n) as u64),
            1 if !counters.is_empty() => Expr::Var(self.pick(counters)),
            _ if n.is_power_of_two() => {
                let t = self.pick(&[Scalar::Int, Scalar::UInt]);
                let e = self.expr(&Type::Scalar(t), 1);
                Expr::Bin(
                    BinOp::And,
                    Box::new(e),
                    Box::new(Expr::Lit(t, (n - 1) as u64)),
                )
            }
            _ => {
                let e = self.expr(&Type::UINT, 1);
                Expr::Bin(
                    BinOp::Rem,
                    Box::new(e),
                    Box::new(Expr::Lit(Scalar::UInt, n as u64)),
                )
            }
        }
    }

    /// The expression reading a path.
    pub fn read(&mut self, var: &str, steps: &[Step]) -> Expr {
        let mut e = Expr::Var(var.to_string());
        for s in steps {
            e = match s {
                Step::Field(i) => Expr::Field(Box::new(e), *i),
                Step::Index(n) => {
                    let i = self.index(*n);
                    Expr::Index(Box::new(e), Box::new(i))
                }
                Step::Lane(w) => {
                    let l = self.rng.gen_range(0..*w);
                    let style = if *w <= 4 && self.chance(0.5) {
                        SwizzleStyle::Xyzw
                    } else {
                        SwizzleStyle::Numeric
                    };
                    Expr::Swizzle(Box::new(e), vec![l], style)
                }
            };
        }
        e
    }
}

/// Calls `f` with every path below `t` (and `t` itself), vector lanes included.
fn walk(structs: &[StructDef], t: &Type, steps: &mut Vec<Step>, f: &mut dyn FnMut(&[Step], &Type)) {
    f(steps, t);
    match t {
        Type::Struct(i) => {
            for (j, ft) in structs[*i].fields.iter().enumerate() {
                steps.push(Step::Field(j));
                walk(structs, ft, steps, f);
                steps.pop();
            }
        }
        Type::Array(e, n) => {
            steps.push(Step::Index(*n));
            walk(structs, e, steps, f);
            steps.pop();
        }
        Type::Vector(s, n) => {
            steps.push(Step::Lane(*n));
            f(steps, &Type::Scalar(*s));
            steps.pop();
        }
        Type::Scalar(_) => {}
    }
}

/// `h = (h ^ e) * 16777619u` (e a uint).
fn fold(e: Expr) -> Stmt {
    let e = match e {
        Expr::Cast(Type::Scalar(Scalar::UInt), _) => e,
        other => Expr::Cast(Type::UINT, Box::new(other)),
    };
    Stmt::Assign(
        LValue {
            var: "h".into(),
            path: Vec::new(),
        },
        None,
        Expr::Bin(
            BinOp::Mul,
            Box::new(Expr::Bin(
                BinOp::Xor,
                Box::new(Expr::Var("h".into())),
                Box::new(e),
            )),
            Box::new(Expr::Lit(Scalar::UInt, 16777619)),
        ),
    )
}
