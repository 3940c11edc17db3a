//! The generated programs' syntax tree: the subset of OpenCL C integer code that the generator
//! writes ([`super::gen`]), the printer prints ([`super::print`]) and the interpreter runs
//! ([`super::eval`]). No floating point, no pointers but the kernel's two buffers, no atomics.

/// An integer scalar type (OpenCL C 3.0 section 6.3.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Scalar {
    /// `char`, 8-bit signed.
    Char,
    /// `uchar`.
    UChar,
    /// `short`, 16-bit signed.
    Short,
    /// `ushort`.
    UShort,
    /// `int`, 32-bit signed.
    Int,
    /// `uint`.
    UInt,
    /// `long`, 64-bit signed.
    Long,
    /// `ulong`.
    ULong,
}

impl Scalar {
    /// Every scalar type.
    pub const ALL: [Scalar; 8] = [
        Scalar::Char,
        Scalar::UChar,
        Scalar::Short,
        Scalar::UShort,
        Scalar::Int,
        Scalar::UInt,
        Scalar::Long,
        Scalar::ULong,
    ];

    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Char | Scalar::UChar => 8,
            Scalar::Short | Scalar::UShort => 16,
            Scalar::Int | Scalar::UInt => 32,
            Scalar::Long | Scalar::ULong => 64,
        }
    }

    /// Whether the type is signed.
    pub fn signed(self) -> bool {
        matches!(
            self,
            Scalar::Char | Scalar::Short | Scalar::Int | Scalar::Long
        )
    }

    /// The OpenCL C name.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Char => "char",
            Scalar::UChar => "uchar",
            Scalar::Short => "short",
            Scalar::UShort => "ushort",
            Scalar::Int => "int",
            Scalar::UInt => "uint",
            Scalar::Long => "long",
            Scalar::ULong => "ulong",
        }
    }

    /// The unsigned type of the same width.
    pub fn unsigned(self) -> Scalar {
        match self {
            Scalar::Char | Scalar::UChar => Scalar::UChar,
            Scalar::Short | Scalar::UShort => Scalar::UShort,
            Scalar::Int | Scalar::UInt => Scalar::UInt,
            Scalar::Long | Scalar::ULong => Scalar::ULong,
        }
    }

    /// The signed type of the same width.
    pub fn signed_of(self) -> Scalar {
        match self {
            Scalar::Char | Scalar::UChar => Scalar::Char,
            Scalar::Short | Scalar::UShort => Scalar::Short,
            Scalar::Int | Scalar::UInt => Scalar::Int,
            Scalar::Long | Scalar::ULong => Scalar::Long,
        }
    }

    /// Whether C's integer promotions leave the type as it is (int and wider): the generator
    /// applies scalar arithmetic only to these, so that no promotion needs modelling.
    pub fn unpromoted(self) -> bool {
        self.bits() >= 32
    }

    /// `bits` reduced to the type's width.
    pub fn wrap(self, bits: u64) -> u64 {
        match self.bits() {
            64 => bits,
            b => bits & ((1u64 << b) - 1),
        }
    }

    /// The value of `bits` (already wrapped) as a mathematical integer.
    pub fn value(self, bits: u64) -> i128 {
        if self.signed() {
            let sh = 64 - self.bits();
            (((bits << sh) as i64) >> sh) as i128
        } else {
            bits as i128
        }
    }

    /// Smallest value.
    pub fn min(self) -> i128 {
        if self.signed() {
            -(1i128 << (self.bits() - 1))
        } else {
            0
        }
    }

    /// Largest value.
    pub fn max(self) -> i128 {
        if self.signed() {
            (1i128 << (self.bits() - 1)) - 1
        } else {
            (1i128 << self.bits()) - 1
        }
    }
}

/// A type of a variable or an expression.
#[derive(Clone, PartialEq, Eq, Debug, Hash)]
pub enum Type {
    /// A scalar.
    Scalar(Scalar),
    /// A vector of 2, 4, 8 or 16 elements.
    Vector(Scalar, u8),
    /// `struct S<n>` of the unit.
    Struct(usize),
    /// An array of a length.
    Array(Box<Type>, usize),
}

impl Type {
    /// `int`.
    pub const INT: Type = Type::Scalar(Scalar::Int);
    /// `uint`.
    pub const UINT: Type = Type::Scalar(Scalar::UInt);

    /// The element type of a scalar or vector.
    pub fn elem(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) | Type::Vector(s, _) => Some(*s),
            _ => None,
        }
    }

    /// Lanes of a scalar (1) or vector.
    pub fn lanes(&self) -> usize {
        match self {
            Type::Vector(_, n) => *n as usize,
            _ => 1,
        }
    }
}

/// A struct declaration: `struct S<n> { T0 f0; T1 f1; ... };`.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// Field types, named `f0`, `f1`, ...
    pub fields: Vec<Type>,
}

/// Binary operators (OpenCL C 3.0 section 6.5).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<` (count taken modulo the width, section 6.5.7)
    Shl,
    /// `>>` (likewise; arithmetic for signed types)
    Shr,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&` (scalars)
    LAnd,
    /// `||` (scalars)
    LOr,
}

impl BinOp {
    /// The C spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::LAnd => "&&",
            BinOp::LOr => "||",
        }
    }

    /// Whether the result is a truth value (int 0/1, or -1/0 per vector lane).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }
}

/// Unary operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `~`
    Not,
    /// `!` (scalars; int 0/1)
    LNot,
}

/// Built-in functions (OpenCL C 3.0 section 6.15.3) and the program's own overflow-safe
/// helpers (the `safe_*` functions of the prelude, [`super::print::PRELUDE`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Builtin {
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
    /// `clamp(x, lo, hi)` (lo <= hi)
    Clamp,
    /// `abs(x)`: the unsigned type.
    Abs,
    /// `abs_diff(a, b)`: the unsigned type.
    AbsDiff,
    /// `add_sat(a, b)`
    AddSat,
    /// `sub_sat(a, b)`
    SubSat,
    /// `mul_hi(a, b)`
    MulHi,
    /// `rotate(v, n)`
    Rotate,
    /// `popcount(x)`
    Popcount,
    /// `clz(x)`
    Clz,
    /// `hadd(a, b)`: (a + b) >> 1 without overflow.
    Hadd,
    /// `rhadd(a, b)`: (a + b + 1) >> 1 without overflow.
    Rhadd,
    /// `select(a, b, c)`: per lane, c's MSB (vectors) or c != 0 (scalars) picks b.
    Select,
    /// `safe_add_T(a, b)`: a + b, or a where that overflows (signed scalars).
    SafeAdd,
    /// `safe_sub_T(a, b)`.
    SafeSub,
    /// `safe_mul_T(a, b)`.
    SafeMul,
    /// `safe_div_T(a, b)`: a / b, or a where b is 0 or the quotient overflows.
    SafeDiv,
    /// `safe_rem_T(a, b)`.
    SafeRem,
}

impl Builtin {
    /// The OpenCL C name (the prelude's helpers get the type's suffix when printed).
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Clamp => "clamp",
            Builtin::Abs => "abs",
            Builtin::AbsDiff => "abs_diff",
            Builtin::AddSat => "add_sat",
            Builtin::SubSat => "sub_sat",
            Builtin::MulHi => "mul_hi",
            Builtin::Rotate => "rotate",
            Builtin::Popcount => "popcount",
            Builtin::Clz => "clz",
            Builtin::Hadd => "hadd",
            Builtin::Rhadd => "rhadd",
            Builtin::Select => "select",
            Builtin::SafeAdd => "safe_add",
            Builtin::SafeSub => "safe_sub",
            Builtin::SafeMul => "safe_mul",
            Builtin::SafeDiv => "safe_div",
            Builtin::SafeRem => "safe_rem",
        }
    }

    /// Whether this is one of the prelude's `safe_*` helpers.
    pub fn is_safe_helper(self) -> bool {
        matches!(
            self,
            Builtin::SafeAdd
                | Builtin::SafeSub
                | Builtin::SafeMul
                | Builtin::SafeDiv
                | Builtin::SafeRem
        )
    }
}

/// How a swizzle is spelled (the lanes are the same whichever).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SwizzleStyle {
    /// `.xyzw` letters (vectors of up to 4 lanes).
    Xyzw,
    /// `.s0123` hex digits.
    Numeric,
    /// `.lo` (the lanes are the lower half).
    Lo,
    /// `.hi`.
    Hi,
    /// `.even`.
    Even,
    /// `.odd`.
    Odd,
}

/// An expression. Every one has a type the generator knows; the interpreter recomputes it.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal of a scalar type, as bits.
    Lit(Scalar, u64),
    /// A variable or parameter.
    Var(String),
    /// `e.f<n>`.
    Field(Box<Expr>, usize),
    /// `a[i]`; the generator keeps `i` in bounds (masked, or a loop counter of known range).
    Index(Box<Expr>, Box<Expr>),
    /// `v.<lanes>`: one lane gives a scalar.
    Swizzle(Box<Expr>, Vec<u8>, SwizzleStyle),
    /// A unary operator.
    Unary(UnOp, Box<Expr>),
    /// A binary operator; both sides of one type, or a vector and a scalar of its element
    /// type, or (shifts) any integer right side.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b` with a scalar `c`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(T)e`: scalar to scalar, or scalar to vector (each lane the converted scalar).
    Cast(Type, Box<Expr>),
    /// `convert_T(e)` / `convert_T_sat(e)`.
    Convert(Type, bool, Box<Expr>),
    /// `as_T(e)` (same size in bytes).
    AsType(Type, Box<Expr>),
    /// `(T)(a, b, ...)`: a vector from scalars and vectors of its element type.
    VecLit(Scalar, u8, Vec<Expr>),
    /// A built-in function.
    Call(Builtin, Vec<Expr>),
    /// A `safe_*` helper of the prelude for a type (int, long; uint, ulong for division).
    Safe(Builtin, Scalar, Vec<Expr>),
    /// A helper function of the unit, by index.
    CallFn(usize, Vec<Expr>),
    /// `in[i & 63]` of the kernel's input buffer (uint).
    Input(Box<Expr>),
    /// `(uint)get_global_id(0)`.
    GlobalId,
    /// `(uint)get_local_id(0)`.
    LocalId,
}

/// A place to store to: a variable and a path into it.
#[derive(Clone, Debug)]
pub struct LValue {
    /// The variable.
    pub var: String,
    /// Fields, indices and (last only) a swizzle without repeated lanes.
    pub path: Vec<Access>,
}

/// One step of an [`LValue`]'s path.
#[derive(Clone, Debug)]
pub enum Access {
    /// `.f<n>`
    Field(usize),
    /// `[i]`
    Index(Expr),
    /// `.<lanes>`
    Swizzle(Vec<u8>, SwizzleStyle),
}

/// An initialiser: an expression or a brace list (arrays, structs).
#[derive(Clone, Debug)]
pub enum Init {
    /// `= e`
    Expr(Expr),
    /// `= { ... }`
    List(Vec<Init>),
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `T name = init;`
    Decl(String, Type, Init),
    /// `lv = e;` or `lv op= e;`
    Assign(LValue, Option<BinOp>, Expr),
    /// `if (c) { ... } else { ... }`
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `for (int var = start; var < bound; var += step) { ... }`; `bound` is evaluated before
    /// every iteration and bounded by a constant (masked).
    For {
        /// The counter (int), read-only in the body.
        var: String,
        /// First value.
        start: i32,
        /// `<` or `<=`.
        inclusive: bool,
        /// The bound (int).
        bound: Expr,
        /// 1 or 2.
        step: i32,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `int counter = 0; while (cond) { if (counter >= limit) break; counter++; ... }`, or
    /// the `do { ... } while (cond);` form of it.
    While {
        /// The iteration counter (int), read-only in the body.
        counter: String,
        /// Most iterations.
        limit: u32,
        /// The condition (scalar).
        cond: Expr,
        /// `do`-`while`.
        do_while: bool,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `switch (e) { case ...: ... }`: arms of case values (empty: `default`), each arm's
    /// statements ending in `break` or falling through.
    Switch(Expr, Vec<SwitchArm>),
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return e;` (helper functions)
    Return(Expr),
    /// `{ ... }`
    Block(Vec<Stmt>),
}

/// One arm of a [`Stmt::Switch`].
#[derive(Clone, Debug)]
pub struct SwitchArm {
    /// Case values (int); empty for `default`.
    pub cases: Vec<i32>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// Whether the arm ends in `break` (else it falls through).
    pub breaks: bool,
}

/// A helper function: `T name(params) { body }`, body ending in a return.
#[derive(Clone, Debug)]
pub struct Func {
    /// Return type.
    pub ret: Type,
    /// Parameters.
    pub params: Vec<(String, Type)>,
    /// The body.
    pub body: Vec<Stmt>,
}

/// What the kernel does after its body, with the hash `h` of its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// `out[base + gid] = h;`
    Store,
    /// Through local memory: `lm[lid] = h; barrier; h ^= lm[(lid + 1) % lsize] * 3;` then
    /// the store (needs a local size).
    LocalExchange,
}

/// One generated test: structs, helper functions and one kernel, for one seed.
#[derive(Clone, Debug)]
pub struct Unit {
    /// The seed it came from.
    pub seed: u64,
    /// Struct declarations.
    pub structs: Vec<StructDef>,
    /// Helper functions; a function calls only those before it.
    pub funcs: Vec<Func>,
    /// The kernel's body (it declares `uint h` first and folds values into it).
    pub body: Vec<Stmt>,
    /// After the body.
    pub epilogue: Epilogue,
    /// Work-items (global size, 1-dimensional).
    pub global: usize,
    /// Work-group size, or `None` for the implementation's choice.
    pub local: Option<usize>,
    /// The input buffer's values (64 uints).
    pub input: Vec<u32>,
}

/// Elements of the input buffer.
pub const INPUT_LEN: usize = 64;
