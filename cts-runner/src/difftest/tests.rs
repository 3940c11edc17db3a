//! The interpreter is the oracle: its semantics checked against values worked out by hand
//! from the OpenCL C 3.0 specification, its refusal of undefined behaviour, and the
//! generator's output (deterministic, always well defined).

use super::ast::*;
use super::eval::{self, Value};
use super::{case, gen, print};

fn lit(s: Scalar, v: i64) -> Expr {
    Expr::Lit(s, s.wrap(v as u64))
}

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// Runs `h = (uint)e` in a one-work-item kernel... as `e` folded into a uint result of the
/// first work-item: returns the bits of `(uint)e`.
fn value_of(e: Expr) -> Result<u32, eval::EvalError> {
    let u = Unit {
        seed: 0,
        structs: Vec::new(),
        funcs: Vec::new(),
        body: vec![Stmt::Decl(
            "h".into(),
            Type::UINT,
            Init::Expr(Expr::Cast(Type::UINT, b(e))),
        )],
        epilogue: Epilogue::Store,
        global: 1,
        local: None,
        input: vec![0; INPUT_LEN],
    };
    eval::run(&u).map(|v| v[0])
}

fn call(f: Builtin, args: Vec<Expr>) -> Expr {
    Expr::Call(f, args)
}

#[test]
fn scalar_semantics_follow_the_specification() {
    use Scalar::*;
    let bin = |op, x, y| Expr::Bin(op, b(x), b(y));
    // Unsigned arithmetic wraps; shift counts are taken modulo the width (6.5.7).
    assert_eq!(
        value_of(bin(BinOp::Add, lit(UInt, -1), lit(UInt, 2))),
        Ok(1)
    );
    assert_eq!(
        value_of(bin(BinOp::Shl, lit(UInt, 1), lit(UInt, 33))),
        Ok(2)
    );
    assert_eq!(
        value_of(bin(BinOp::Shr, lit(Int, -8), lit(Int, 1))),
        Ok((-4i32) as u32)
    );
    assert_eq!(
        value_of(bin(BinOp::Shr, lit(Long, 1 << 40), lit(Long, 73))),
        Ok(1 << 31)
    );
    // C99 division truncates toward zero; the remainder takes the dividend's sign.
    assert_eq!(
        value_of(bin(BinOp::Div, lit(Int, -7), lit(Int, 2))),
        Ok((-3i32) as u32)
    );
    assert_eq!(
        value_of(bin(BinOp::Rem, lit(Int, -7), lit(Int, 2))),
        Ok((-1i32) as u32)
    );
    // Comparisons give int 1 for scalars.
    assert_eq!(value_of(bin(BinOp::Lt, lit(UInt, 1), lit(UInt, -1))), Ok(1));
    assert_eq!(value_of(bin(BinOp::Lt, lit(Int, 1), lit(Int, -1))), Ok(0));
    // Conversions: truncation, sign extension, saturation.
    assert_eq!(
        value_of(Expr::Cast(Type::Scalar(Char), b(lit(Int, 200)))),
        Ok((-56i32) as u32)
    );
    assert_eq!(
        value_of(Expr::Convert(Type::Scalar(UChar), true, b(lit(Int, -5)))),
        Ok(0)
    );
    assert_eq!(
        value_of(Expr::Convert(Type::Scalar(Short), true, b(lit(Int, 70000)))),
        Ok(32767)
    );
    // Built-ins (6.15.3).
    assert_eq!(
        value_of(call(Builtin::Abs, vec![lit(Int, i32::MIN as i64)])),
        Ok(1 << 31)
    );
    assert_eq!(value_of(call(Builtin::Clz, vec![lit(UChar, 0)])), Ok(8));
    assert_eq!(value_of(call(Builtin::Clz, vec![lit(UInt, 1)])), Ok(31));
    assert_eq!(
        value_of(call(Builtin::Popcount, vec![lit(Long, -1)])),
        Ok(64)
    );
    assert_eq!(
        value_of(call(Builtin::Rotate, vec![lit(UChar, 0x81), lit(UChar, 9)])),
        Ok(0x03)
    );
    assert_eq!(
        value_of(call(Builtin::MulHi, vec![lit(ULong, -1), lit(ULong, -1)])),
        Ok(0xffff_fffe)
    );
    assert_eq!(
        value_of(call(Builtin::MulHi, vec![lit(Int, -1), lit(Int, 1)])),
        Ok(u32::MAX)
    );
    assert_eq!(
        value_of(call(Builtin::Hadd, vec![lit(UInt, -1), lit(UInt, -1)])),
        Ok(u32::MAX)
    );
    assert_eq!(
        value_of(call(Builtin::Rhadd, vec![lit(Int, -2), lit(Int, 1)])),
        Ok(0)
    );
    assert_eq!(
        value_of(call(Builtin::Hadd, vec![lit(Int, -2), lit(Int, 1)])),
        Ok(u32::MAX)
    );
    assert_eq!(
        value_of(call(
            Builtin::AddSat,
            vec![lit(Int, i32::MAX as i64), lit(Int, 1)]
        )),
        Ok(i32::MAX as u32)
    );
    assert_eq!(
        value_of(call(Builtin::SubSat, vec![lit(UInt, 1), lit(UInt, 2)])),
        Ok(0)
    );
    assert_eq!(
        value_of(call(Builtin::AbsDiff, vec![lit(Int, -2), lit(Int, 3)])),
        Ok(5)
    );
    assert_eq!(
        value_of(call(
            Builtin::Select,
            vec![lit(UInt, 1), lit(UInt, 2), lit(Int, 0)]
        )),
        Ok(1)
    );
    // The prelude's helpers return the first operand where C would be undefined.
    let safe = |f, s, x, y| Expr::Safe(f, s, vec![lit(s, x), lit(s, y)]);
    assert_eq!(
        value_of(safe(Builtin::SafeMul, Int, i32::MIN as i64, -1)),
        Ok(i32::MIN as u32)
    );
    assert_eq!(
        value_of(safe(Builtin::SafeMul, Int, -3, 5)),
        Ok((-15i32) as u32)
    );
    assert_eq!(
        value_of(safe(Builtin::SafeAdd, Int, i32::MAX as i64, 1)),
        Ok(i32::MAX as u32)
    );
    assert_eq!(value_of(safe(Builtin::SafeDiv, UInt, 7, 0)), Ok(7));
    assert_eq!(value_of(safe(Builtin::SafeRem, Long, i64::MIN, -1)), Ok(0));
}

#[test]
fn vector_semantics_follow_the_specification() {
    use Scalar::*;
    let v = |s, l: &[i64]| Expr::VecLit(s, l.len() as u8, l.iter().map(|&x| lit(s, x)).collect());
    let lane = |e: Expr, i| Expr::Swizzle(b(e), vec![i], SwizzleStyle::Numeric);
    // A vector comparison gives -1 per true lane, of the signed type (6.5.6).
    let cmp = Expr::Bin(BinOp::Gt, b(v(UInt, &[1, 5])), b(v(UInt, &[2, 3])));
    assert_eq!(
        value_of(Expr::Cast(Type::UINT, b(lane(cmp.clone(), 0)))),
        Ok(0)
    );
    assert_eq!(
        value_of(Expr::Cast(Type::UINT, b(lane(cmp, 1)))),
        Ok(u32::MAX)
    );
    // select on vectors looks at each lane's most significant bit (6.15.6).
    let sel = call(
        Builtin::Select,
        vec![v(Int, &[1, 2]), v(Int, &[3, 4]), v(Int, &[1, -1])],
    );
    assert_eq!(value_of(lane(sel.clone(), 0)), Ok(1));
    assert_eq!(value_of(lane(sel, 1)), Ok(4));
    // as_type keeps the bytes, lanes little-endian.
    let wide = Expr::AsType(Type::Scalar(UInt), b(v(UChar, &[1, 2, 3, 4])));
    assert_eq!(value_of(wide), Ok(0x0403_0201));
    let split = Expr::AsType(Type::Vector(UInt, 2), b(lit(ULong, 0x1111_2222_3333_4444)));
    assert_eq!(value_of(lane(split, 1)), Ok(0x1111_2222));
    // Vector shifts take the count modulo the element width; uchar lanes wrap.
    let sh = Expr::Bin(BinOp::Shl, b(v(UChar, &[1, 3])), b(v(UChar, &[9, 7])));
    assert_eq!(value_of(lane(sh.clone(), 0)), Ok(2));
    assert_eq!(value_of(lane(sh, 1)), Ok(0x80));
    // A scalar operand is widened to every lane.
    let mixed = Expr::Bin(BinOp::Mul, b(v(UInt, &[3, 4])), b(lit(UInt, 5)));
    assert_eq!(value_of(lane(mixed, 1)), Ok(20));
}

#[test]
fn undefined_behaviour_is_refused() {
    use Scalar::*;
    let bin = |op, x, y| Expr::Bin(op, b(x), b(y));
    for e in [
        bin(BinOp::Add, lit(Int, i32::MAX as i64), lit(Int, 1)),
        bin(BinOp::Mul, lit(Long, i64::MIN), lit(Long, -1)),
        bin(BinOp::Div, lit(UInt, 1), lit(UInt, 0)),
        bin(BinOp::Div, lit(Int, i32::MIN as i64), lit(Int, -1)),
        bin(BinOp::Shl, lit(Int, 1), lit(Int, 3)),
        Expr::Unary(UnOp::Neg, b(lit(Int, i32::MIN as i64))),
        call(Builtin::Clamp, vec![lit(Int, 0), lit(Int, 2), lit(Int, 1)]),
        // C would promote uchar to int: the generator must not write it.
        bin(BinOp::Add, lit(UChar, 1), lit(UChar, 1)),
    ] {
        assert!(value_of(e.clone()).is_err(), "{e:?} was accepted");
    }
    let arr = Type::Array(Box::new(Type::INT), 2);
    let u = Unit {
        seed: 0,
        structs: Vec::new(),
        funcs: Vec::new(),
        body: vec![
            Stmt::Decl(
                "a".into(),
                arr,
                Init::List(vec![Init::Expr(lit(Int, 1)), Init::Expr(lit(Int, 2))]),
            ),
            Stmt::Decl(
                "h".into(),
                Type::UINT,
                Init::Expr(Expr::Cast(
                    Type::UINT,
                    b(Expr::Index(b(Expr::Var("a".into())), b(lit(Int, 2)))),
                )),
            ),
        ],
        epilogue: Epilogue::Store,
        global: 1,
        local: None,
        input: vec![0; INPUT_LEN],
    };
    assert!(
        eval::run(&u).is_err(),
        "an out-of-bounds index was accepted"
    );
}

#[test]
fn generated_kernels_are_deterministic_and_well_defined() {
    for seed in 0..300 {
        let (u, r) = case(seed);
        assert!(r.is_ok(), "seed {seed}: {:?}", r.err());
        let again = gen::generate(seed);
        assert_eq!(
            print::program(&[&u]),
            print::program(&[&again]),
            "seed {seed}"
        );
        assert_eq!(r.as_ref().map(Vec::len), Ok(u.global));
    }
    // Different seeds give different kernels and answers.
    let a = case(1).1.ok();
    let b = case(2).1.ok();
    assert_ne!(a, b);
    let _ = Value::Scalar(Scalar::Int, 0);
}

#[test]
fn the_printer_spells_edge_literals_and_vector_casts() {
    assert_eq!(
        print::literal(Scalar::Int, i32::MIN as u32 as u64),
        "(-2147483647-1)"
    );
    assert_eq!(
        print::literal(Scalar::Long, i64::MIN as u64),
        "(-9223372036854775807L-1L)"
    );
    assert_eq!(print::literal(Scalar::UChar, 255), "((uchar)255)");
    assert_eq!(
        print::literal(Scalar::ULong, u64::MAX),
        "18446744073709551615UL"
    );
    let u = Unit {
        seed: 0,
        structs: Vec::new(),
        funcs: Vec::new(),
        body: vec![Stmt::Decl(
            "v".into(),
            Type::Vector(Scalar::Int, 4),
            Init::Expr(Expr::Cast(
                Type::Vector(Scalar::Int, 4),
                b(Expr::Swizzle(
                    b(Expr::Var("w".into())),
                    vec![1],
                    SwizzleStyle::Numeric,
                )),
            )),
        )],
        epilogue: Epilogue::Store,
        global: 1,
        local: None,
        input: vec![0; INPUT_LEN],
    };
    // Not `(int4)(w).s1`, which clang reads as a vector literal, then a swizzle.
    assert!(print::unit(&u, "", 0).contains("int4 v = ((int4)(w.s1));"));
}
