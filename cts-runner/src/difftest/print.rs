//! Prints units as OpenCL C: the shared prelude ([`PRELUDE`]), then each unit's structs,
//! helpers and kernel, their names prefixed so that several units share one program.

use super::ast::*;
use std::fmt::Write;

/// The overflow-safe helpers every program starts with (the `safe_*` built-ins of the syntax
/// tree): each returns its first argument where the operation would overflow or divide by
/// zero, in the manner of Csmith's safe math.
pub const PRELUDE: &str = r#"// vkcl-difftest: overflow-safe helpers.
int safe_add_int(int a, int b) { return ((b > 0 && a > INT_MAX - b) || (b < 0 && a < INT_MIN - b)) ? a : a + b; }
int safe_sub_int(int a, int b) { return ((b < 0 && a > INT_MAX + b) || (b > 0 && a < INT_MIN + b)) ? a : a - b; }
int safe_mul_int(int a, int b) { return ((a > 0 && b > 0 && a > INT_MAX / b) || (a > 0 && b <= 0 && b < INT_MIN / a) || (a <= 0 && b > 0 && a < INT_MIN / b) || (a < 0 && b <= 0 && b < INT_MAX / a)) ? a : a * b; }
int safe_div_int(int a, int b) { return (b == 0 || (a == INT_MIN && b == -1)) ? a : a / b; }
int safe_rem_int(int a, int b) { return (b == 0 || (a == INT_MIN && b == -1)) ? a : a % b; }
long safe_add_long(long a, long b) { return ((b > 0 && a > LONG_MAX - b) || (b < 0 && a < LONG_MIN - b)) ? a : a + b; }
long safe_sub_long(long a, long b) { return ((b < 0 && a > LONG_MAX + b) || (b > 0 && a < LONG_MIN + b)) ? a : a - b; }
long safe_mul_long(long a, long b) { return ((a > 0 && b > 0 && a > LONG_MAX / b) || (a > 0 && b <= 0 && b < LONG_MIN / a) || (a <= 0 && b > 0 && a < LONG_MIN / b) || (a < 0 && b <= 0 && b < LONG_MAX / a)) ? a : a * b; }
long safe_div_long(long a, long b) { return (b == 0 || (a == LONG_MIN && b == -1)) ? a : a / b; }
long safe_rem_long(long a, long b) { return (b == 0 || (a == LONG_MIN && b == -1)) ? a : a % b; }
uint safe_div_uint(uint a, uint b) { return b == 0 ? a : a / b; }
uint safe_rem_uint(uint a, uint b) { return b == 0 ? a : a % b; }
ulong safe_div_ulong(ulong a, ulong b) { return b == 0 ? a : a / b; }
ulong safe_rem_ulong(ulong a, ulong b) { return b == 0 ? a : a % b; }
"#;

/// The kernel's name for a unit printed with `prefix`.
pub fn kernel_name(prefix: &str) -> String {
    format!("{prefix}k")
}

/// A whole program: the prelude and each unit, unit `i` with prefix `t<i>_` storing to
/// `out[i * global + gid]` (every unit of a batch has the same global size).
pub fn program(units: &[&Unit]) -> String {
    let mut s = String::from(PRELUDE);
    let mut base = 0;
    for (i, u) in units.iter().enumerate() {
        s.push('\n');
        s.push_str(&unit(u, &format!("t{i}_"), base));
        base += u.global;
    }
    s
}

/// One unit: `// seed N`, its structs, helpers and kernel.
pub fn unit(u: &Unit, prefix: &str, base: usize) -> String {
    let p = Printer {
        prefix,
        out: String::new(),
    };
    p.unit(u, base)
}

struct Printer<'a> {
    prefix: &'a str,
    out: String,
}

impl Printer<'_> {
    fn unit(mut self, u: &Unit, base: usize) -> String {
        let _ = writeln!(self.out, "// seed {}", u.seed);
        for (i, st) in u.structs.iter().enumerate() {
            let _ = writeln!(self.out, "struct {}S{i} {{", self.prefix);
            for (j, f) in st.fields.iter().enumerate() {
                let d = self.decl(f, &format!("f{j}"));
                let _ = writeln!(self.out, "  {d};");
            }
            self.out.push_str("};\n");
        }
        for (i, f) in u.funcs.iter().enumerate() {
            let params: Vec<String> = f.params.iter().map(|(n, t)| self.decl(t, n)).collect();
            let _ = writeln!(
                self.out,
                "{} {}f{i}({}) {{",
                self.ty(&f.ret),
                self.prefix,
                params.join(", ")
            );
            self.stmts(&f.body, 1);
            self.out.push_str("}\n");
        }
        let _ = writeln!(
            self.out,
            "__kernel void {}(__global uint *out, __global const uint *in) {{",
            kernel_name(self.prefix)
        );
        self.stmts(&u.body, 1);
        if u.epilogue == Epilogue::LocalExchange {
            let l = u.local.unwrap_or(1);
            let _ = writeln!(self.out, "  __local uint lm[{l}];");
            self.out
                .push_str("  lm[lid] = h;\n  barrier(CLK_LOCAL_MEM_FENCE);\n");
            let _ = writeln!(self.out, "  h ^= lm[(lid + 1u) % {l}u] * 3u;");
        }
        let _ = writeln!(self.out, "  out[{base}u + gid] = h;");
        self.out.push_str("}\n");
        self.out
    }

    fn ty(&self, t: &Type) -> String {
        match t {
            Type::Scalar(s) => s.name().to_string(),
            Type::Vector(s, n) => format!("{}{n}", s.name()),
            Type::Struct(i) => format!("struct {}S{i}", self.prefix),
            Type::Array(..) => "/* array */".to_string(),
        }
    }

    /// `T name[dims]`.
    fn decl(&self, t: &Type, name: &str) -> String {
        let mut dims = String::new();
        let mut cur = t;
        while let Type::Array(e, n) = cur {
            let _ = write!(dims, "[{n}]");
            cur = e;
        }
        format!("{} {name}{dims}", self.ty(cur))
    }

    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn stmts(&mut self, ss: &[Stmt], depth: usize) {
        for s in ss {
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, s: &Stmt, d: usize) {
        match s {
            Stmt::Decl(n, t, init) => {
                let text = format!("{} = {};", self.decl(t, n), self.init(init));
                self.line(d, &text);
            }
            Stmt::Assign(lv, op, e) => {
                let text = format!(
                    "{} {}= {};",
                    self.lvalue(lv),
                    op.map_or("", |o| o.symbol()),
                    self.expr(e)
                );
                self.line(d, &text);
            }
            Stmt::If(c, t, f) => {
                let text = format!("if ({}) {{", self.expr(c));
                self.line(d, &text);
                self.stmts(t, d + 1);
                if f.is_empty() {
                    self.line(d, "}");
                } else {
                    self.line(d, "} else {");
                    self.stmts(f, d + 1);
                    self.line(d, "}");
                }
            }
            Stmt::For {
                var,
                start,
                inclusive,
                bound,
                step,
                body,
            } => {
                let step = if *step == 1 {
                    format!("{var}++")
                } else {
                    format!("{var} += {step}")
                };
                let text = format!(
                    "for (int {var} = {start}; {var} {} {}; {step}) {{",
                    if *inclusive { "<=" } else { "<" },
                    self.expr(bound)
                );
                self.line(d, &text);
                self.stmts(body, d + 1);
                self.line(d, "}");
            }
            Stmt::While {
                counter,
                limit,
                cond,
                do_while,
                body,
            } => {
                self.line(d, "{");
                self.line(d + 1, &format!("int {counter} = 0;"));
                let c = self.expr(cond);
                if *do_while {
                    self.line(d + 1, "do {");
                } else {
                    self.line(d + 1, &format!("while ({c}) {{"));
                }
                self.line(d + 2, &format!("if ({counter} >= {limit}) break;"));
                self.line(d + 2, &format!("{counter}++;"));
                self.stmts(body, d + 2);
                if *do_while {
                    self.line(d + 1, &format!("}} while ({c});"));
                } else {
                    self.line(d + 1, "}");
                }
                self.line(d, "}");
            }
            Stmt::Switch(e, arms) => {
                let text = format!("switch ({}) {{", self.expr(e));
                self.line(d, &text);
                for a in arms {
                    if a.cases.is_empty() {
                        self.line(d, "default: {");
                    } else {
                        let labels: Vec<String> =
                            a.cases.iter().map(|c| format!("case {c}:")).collect();
                        self.line(d, &format!("{} {{", labels.join(" ")));
                    }
                    self.stmts(&a.body, d + 1);
                    self.line(
                        d,
                        if a.breaks {
                            "} break;"
                        } else {
                            "} /* falls through */"
                        },
                    );
                }
                self.line(d, "}");
            }
            Stmt::Break => self.line(d, "break;"),
            Stmt::Continue => self.line(d, "continue;"),
            Stmt::Return(e) => {
                let text = format!("return {};", self.expr(e));
                self.line(d, &text);
            }
            Stmt::Block(b) => {
                self.line(d, "{");
                self.stmts(b, d + 1);
                self.line(d, "}");
            }
        }
    }

    fn init(&self, i: &Init) -> String {
        match i {
            Init::Expr(e) => self.expr(e),
            Init::List(items) => {
                let v: Vec<String> = items.iter().map(|i| self.init(i)).collect();
                format!("{{{}}}", v.join(", "))
            }
        }
    }

    fn lvalue(&self, lv: &LValue) -> String {
        let mut s = lv.var.clone();
        for a in &lv.path {
            match a {
                Access::Field(i) => {
                    let _ = write!(s, ".f{i}");
                }
                Access::Index(e) => {
                    let _ = write!(s, "[{}]", self.expr(e));
                }
                Access::Swizzle(l, st) => s.push_str(&swizzle_suffix(l, *st)),
            }
        }
        s
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Lit(s, b) => literal(*s, *b),
            Expr::Var(n) => n.clone(),
            Expr::Field(x, i) => format!("{}.f{i}", self.postfix(x)),
            Expr::Index(a, i) => format!("{}[{}]", self.postfix(a), self.expr(i)),
            Expr::Swizzle(v, l, st) => format!("{}{}", self.postfix(v), swizzle_suffix(l, *st)),
            Expr::Unary(op, x) => {
                let o = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "~",
                    UnOp::LNot => "!",
                };
                format!("({o}{})", self.expr(x))
            }
            Expr::Bin(op, a, b) => {
                format!("({} {} {})", self.expr(a), op.symbol(), self.expr(b))
            }
            Expr::Cond(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            // `(int4)(x).s1` would be a vector literal of `x`, then a swizzle: the operand of
            // a cast to a vector is parenthesised whole.
            Expr::Cast(t @ Type::Vector(..), x) => format!("(({})({}))", self.ty(t), self.expr(x)),
            Expr::Cast(t, x) => format!("(({}){})", self.ty(t), self.expr(x)),
            Expr::Convert(t, sat, x) => format!(
                "convert_{}{}({})",
                self.ty(t),
                if *sat { "_sat" } else { "" },
                self.expr(x)
            ),
            Expr::AsType(t, x) => format!("as_{}({})", self.ty(t), self.expr(x)),
            Expr::VecLit(s, n, parts) => {
                let v: Vec<String> = parts.iter().map(|p| self.expr(p)).collect();
                format!("(({}{n})({}))", s.name(), v.join(", "))
            }
            Expr::Call(f, args) => {
                let v: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{}({})", f.name(), v.join(", "))
            }
            Expr::Safe(f, t, args) => {
                let v: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{}_{}({})", f.name(), t.name(), v.join(", "))
            }
            Expr::CallFn(i, args) => {
                let v: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{}f{i}({})", self.prefix, v.join(", "))
            }
            Expr::Input(i) => format!("in[({}) & {}u]", self.expr(i), INPUT_LEN - 1),
            Expr::GlobalId => "((uint)get_global_id(0))".to_string(),
            Expr::LocalId => "((uint)get_local_id(0))".to_string(),
        }
    }

    /// An operand of a postfix operator (`.`, `[]`): parenthesised unless primary.
    fn postfix(&self, e: &Expr) -> String {
        match e {
            Expr::Var(_) | Expr::Field(..) | Expr::Index(..) => self.expr(e),
            _ => format!("({})", self.expr(e)),
        }
    }
}

/// `.xy`, `.s01`, `.lo`...
pub fn swizzle_suffix(lanes: &[u8], st: SwizzleStyle) -> String {
    match st {
        SwizzleStyle::Lo => ".lo".into(),
        SwizzleStyle::Hi => ".hi".into(),
        SwizzleStyle::Even => ".even".into(),
        SwizzleStyle::Odd => ".odd".into(),
        SwizzleStyle::Xyzw => {
            let mut s = String::from(".");
            for &l in lanes {
                s.push(['x', 'y', 'z', 'w'][l as usize & 3]);
            }
            s
        }
        SwizzleStyle::Numeric => {
            let mut s = String::from(".s");
            for &l in lanes {
                s.push(
                    char::from_digit(l as u32, 16)
                        .unwrap_or('0')
                        .to_ascii_uppercase(),
                );
            }
            s
        }
    }
}

/// A literal of its type: `5`, `5u`, `(-5L)`, `((uchar)200)`, `(-2147483647-1)`.
pub fn literal(s: Scalar, bits: u64) -> String {
    let v = s.value(s.wrap(bits));
    match s {
        Scalar::Int if v == s.min() => "(-2147483647-1)".into(),
        Scalar::Long if v == s.min() => "(-9223372036854775807L-1L)".into(),
        Scalar::Int if v < 0 => format!("({v})"),
        Scalar::Int => format!("{v}"),
        Scalar::UInt => format!("{v}u"),
        Scalar::Long if v < 0 => format!("({v}L)"),
        Scalar::Long => format!("{v}L"),
        Scalar::ULong => format!("{v}UL"),
        _ => format!("(({}){v})", s.name()),
    }
}
