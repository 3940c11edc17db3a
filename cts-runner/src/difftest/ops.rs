//! Lane-wise integer semantics of OpenCL C's operators, conversions and built-ins, for the
//! interpreter ([`super::eval`]). Undefined behaviour is an [`EvalError`].

use super::ast::{BinOp, Builtin, Scalar, Type, UnOp};
use super::value::{EvalError, Value};

type R<T> = Result<T, EvalError>;

fn err<T>(what: String) -> R<T> {
    Err(EvalError(what))
}

/// `v` as a scalar or vector: element type, lanes, whether a vector.
fn parts(v: &Value) -> R<(Scalar, Vec<u64>, bool)> {
    match v {
        Value::Scalar(s, b) => Ok((*s, vec![*b], false)),
        Value::Vector(s, l) => Ok((*s, l.clone(), true)),
        _ => err("a scalar or vector operand expected".into()),
    }
}

fn make(s: Scalar, lanes: Vec<u64>, vector: bool) -> Value {
    if vector {
        Value::Vector(s, lanes)
    } else {
        Value::Scalar(s, lanes[0])
    }
}

/// An exact result, or undefined behaviour where a signed type overflows; unsigned wraps.
fn fit(s: Scalar, v: i128, what: &str) -> R<u64> {
    if s.signed() && (v < s.min() || v > s.max()) {
        return err(format!("signed overflow in {what} ({})", s.name()));
    }
    Ok(s.wrap(v as u64))
}

/// Truncation to the type (C's conversion to unsigned; two's complement for signed).
fn trunc(s: Scalar, v: i128) -> u64 {
    s.wrap(v as u64)
}

/// A unary operator.
pub fn unary(op: UnOp, v: &Value) -> R<Value> {
    let (s, l, vector) = parts(v)?;
    if !vector && !s.unpromoted() {
        return err(format!("unary operator on {} (promoted)", s.name()));
    }
    let out = match op {
        UnOp::Neg => l
            .iter()
            .map(|&b| fit(s, -s.value(b), "negation"))
            .collect::<R<Vec<_>>>()?,
        UnOp::Not => l.iter().map(|&b| s.wrap(!b)).collect(),
        UnOp::LNot => {
            if vector {
                return err("! on a vector".into());
            }
            return Ok(Value::Scalar(Scalar::Int, (l[0] == 0) as u64));
        }
    };
    Ok(make(s, out, vector))
}

/// A binary operator other than `&&` and `||`.
pub fn binary(op: BinOp, a: &Value, b: &Value) -> R<Value> {
    let (sa, la, va) = parts(a)?;
    let (sb, lb, vb) = parts(b)?;
    let n = la.len().max(lb.len());
    if va && vb && la.len() != lb.len() {
        return err("vector operands of different lengths".into());
    }
    let shift = matches!(op, BinOp::Shl | BinOp::Shr);
    if !shift && sa != sb {
        return err(format!("operands {} and {}", sa.name(), sb.name()));
    }
    if shift && !va && vb {
        return err("scalar shifted by a vector".into());
    }
    if !va && !vb && !sa.unpromoted() {
        return err(format!("scalar arithmetic on {} (promoted)", sa.name()));
    }
    let vector = va || vb;
    let get = |l: &Vec<u64>, i: usize| if l.len() == 1 { l[0] } else { l[i] };
    let s = sa;
    let mut out = Vec::with_capacity(n);
    let result_type = if op.is_comparison() {
        if vector {
            s.signed_of()
        } else {
            Scalar::Int
        }
    } else {
        s
    };
    for i in 0..n {
        let (x, y) = (get(&la, i), get(&lb, i));
        let (vx, vy) = (s.value(x), sb.value(y));
        let r = match op {
            BinOp::Add if !s.signed() => s.wrap(x.wrapping_add(y)),
            BinOp::Sub if !s.signed() => s.wrap(x.wrapping_sub(y)),
            BinOp::Mul if !s.signed() => s.wrap(x.wrapping_mul(y)),
            BinOp::Add => fit(s, vx + vy, "+")?,
            BinOp::Sub => fit(s, vx - vy, "-")?,
            BinOp::Mul => fit(s, vx * vy, "*")?,
            BinOp::Div | BinOp::Rem => {
                if vy == 0 {
                    return err("division by zero".into());
                }
                let q = vx / vy;
                if s.signed() && q > s.max() {
                    return err("signed division overflow".into());
                }
                if op == BinOp::Div {
                    trunc(s, q)
                } else {
                    trunc(s, vx % vy)
                }
            }
            BinOp::And => x & y,
            BinOp::Or => x | y,
            BinOp::Xor => x ^ y,
            BinOp::Shl | BinOp::Shr => {
                // Section 6.5.7: the count is the low log2(N) bits of the right side.
                let k = (y as u32) & (s.bits() - 1);
                if op == BinOp::Shl {
                    if s.signed() {
                        return err("left shift of a signed value".into());
                    }
                    s.wrap(x << k)
                } else {
                    trunc(s, vx >> k)
                }
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                let t = match op {
                    BinOp::Lt => vx < vy,
                    BinOp::Le => vx <= vy,
                    BinOp::Gt => vx > vy,
                    BinOp::Ge => vx >= vy,
                    BinOp::Eq => vx == vy,
                    _ => vx != vy,
                };
                match (t, vector) {
                    (false, _) => 0,
                    (true, false) => 1,
                    (true, true) => result_type.wrap(u64::MAX),
                }
            }
            BinOp::LAnd | BinOp::LOr => return err("&& or || on values".into()),
        };
        out.push(r);
    }
    Ok(make(result_type, out, vector))
}

/// `v.<lanes>`.
pub fn swizzle(v: &Value, lanes: &[u8]) -> R<Value> {
    let Value::Vector(s, l) = v else {
        return err("swizzle of a non-vector".into());
    };
    let mut out = Vec::with_capacity(lanes.len());
    for &i in lanes {
        out.push(
            *l.get(i as usize)
                .ok_or_else(|| EvalError(format!("lane {i} of a {}-vector", l.len())))?,
        );
    }
    Ok(make(*s, out, lanes.len() > 1))
}

/// `(T)v`: scalar to scalar, or scalar to every lane of a vector.
pub fn cast(t: &Type, v: &Value) -> R<Value> {
    let Value::Scalar(s, b) = v else {
        return err("cast of a non-scalar".into());
    };
    let x = s.value(*b);
    match t {
        Type::Scalar(d) => Ok(Value::Scalar(*d, trunc(*d, x))),
        Type::Vector(d, n) => Ok(Value::Vector(*d, vec![trunc(*d, x); *n as usize])),
        _ => err("cast to a non-scalar".into()),
    }
}

/// `convert_T(v)` or `convert_T_sat(v)` (section 6.4.3).
pub fn convert(t: &Type, sat: bool, v: &Value) -> R<Value> {
    let (s, l, vector) = parts(v)?;
    let (d, n) = match t {
        Type::Scalar(d) => (*d, 1),
        Type::Vector(d, n) => (*d, *n as usize),
        _ => return err("convert to a non-scalar".into()),
    };
    if n != l.len() || vector != matches!(t, Type::Vector(..)) {
        return err("convert between different lane counts".into());
    }
    let out = l
        .iter()
        .map(|&b| {
            let x = s.value(b);
            if sat {
                trunc(d, x.clamp(d.min(), d.max()))
            } else {
                trunc(d, x)
            }
        })
        .collect();
    Ok(make(d, out, vector))
}

/// `as_T(v)`: the same bytes (little-endian lanes) as another type of the same size.
pub fn as_type(t: &Type, v: &Value) -> R<Value> {
    let (s, l, _) = parts(v)?;
    let mut bytes = Vec::new();
    for b in &l {
        bytes.extend_from_slice(&b.to_le_bytes()[..(s.bits() / 8) as usize]);
    }
    let (d, n, vector) = match t {
        Type::Scalar(d) => (*d, 1, false),
        Type::Vector(d, n) => (*d, *n as usize, true),
        _ => return err("as_type to a non-scalar".into()),
    };
    let w = (d.bits() / 8) as usize;
    if w * n != bytes.len() {
        return err("as_type between sizes".into());
    }
    let out = bytes
        .chunks(w)
        .map(|c| {
            let mut x = [0u8; 8];
            x[..w].copy_from_slice(c);
            u64::from_le_bytes(x)
        })
        .collect();
    Ok(make(d, out, vector))
}

/// A built-in or one of the prelude's helpers.
pub fn builtin(f: Builtin, args: &[Value]) -> R<Value> {
    let arity = match f {
        Builtin::Abs | Builtin::Popcount | Builtin::Clz => 1,
        Builtin::Clamp | Builtin::Select => 3,
        _ => 2,
    };
    if args.len() != arity {
        return err(format!("{} takes {arity} arguments", f.name()));
    }
    let ps = args.iter().map(parts).collect::<R<Vec<_>>>()?;
    let (s, _, vector) = ps[0].clone();
    let n = ps[0].1.len();
    if f.is_safe_helper() && vector {
        return err("safe_* helper on a vector".into());
    }
    for (i, p) in ps.iter().enumerate().skip(1) {
        let scalar_ok = matches!(f, Builtin::Min | Builtin::Max | Builtin::Clamp) && !p.2;
        if f == Builtin::Select && i == 2 {
            if p.0.bits() != s.bits() || p.1.len() != n || p.2 != vector {
                return err("select's condition of another shape".into());
            }
        } else if p.0 != s || (p.1.len() != n && !scalar_ok) {
            return err(format!("{}'s arguments of different types", f.name()));
        }
    }
    let get = |k: usize, i: usize| {
        let l = &ps[k].1;
        let b = if l.len() == 1 { l[0] } else { l[i] };
        (b, ps[k].0.value(b))
    };
    let bits = s.bits();
    let mut out = Vec::with_capacity(n);
    let mut result = s;
    for i in 0..n {
        let (xb, x) = get(0, i);
        let r = match f {
            Builtin::Min => trunc(s, x.min(get(1, i).1)),
            Builtin::Max => trunc(s, x.max(get(1, i).1)),
            Builtin::Clamp => {
                let (lo, hi) = (get(1, i).1, get(2, i).1);
                if lo > hi {
                    return err("clamp with lo > hi".into());
                }
                trunc(s, x.clamp(lo, hi))
            }
            Builtin::Abs => {
                result = s.unsigned();
                trunc(result, x.abs())
            }
            Builtin::AbsDiff => {
                result = s.unsigned();
                trunc(result, (x - get(1, i).1).abs())
            }
            Builtin::AddSat => trunc(s, (x + get(1, i).1).clamp(s.min(), s.max())),
            Builtin::SubSat => trunc(s, (x - get(1, i).1).clamp(s.min(), s.max())),
            Builtin::MulHi => {
                let y = get(1, i).1;
                if s.signed() {
                    trunc(s, (x * y) >> bits)
                } else {
                    trunc(s, ((x as u128 * y as u128) >> bits) as i128)
                }
            }
            Builtin::Rotate => {
                let k = (get(1, i).0 as u32) & (bits - 1);
                let u = s.wrap(xb);
                if k == 0 {
                    u
                } else {
                    s.wrap((u << k) | (u >> (bits - k)))
                }
            }
            Builtin::Popcount => s.wrap(xb).count_ones() as u64,
            Builtin::Clz => (s.wrap(xb).leading_zeros() - (64 - bits)) as u64,
            Builtin::Hadd => trunc(s, (x + get(1, i).1) >> 1),
            Builtin::Rhadd => trunc(s, (x + get(1, i).1 + 1) >> 1),
            Builtin::Select => {
                let (cb, cv) = get(2, i);
                let take_b = if vector {
                    (cb >> (bits - 1)) & 1 == 1
                } else {
                    cv != 0
                };
                if take_b {
                    get(1, i).0
                } else {
                    xb
                }
            }
            Builtin::SafeAdd | Builtin::SafeSub | Builtin::SafeMul => {
                if !s.signed() || !s.unpromoted() {
                    return err(format!("{} on {}", f.name(), s.name()));
                }
                let y = get(1, i).1;
                let exact = match f {
                    Builtin::SafeAdd => x + y,
                    Builtin::SafeSub => x - y,
                    _ => x * y,
                };
                if exact < s.min() || exact > s.max() {
                    xb
                } else {
                    trunc(s, exact)
                }
            }
            Builtin::SafeDiv | Builtin::SafeRem => {
                if !s.unpromoted() {
                    return err(format!("{} on {}", f.name(), s.name()));
                }
                let y = get(1, i).1;
                if y == 0 || (s.signed() && x == s.min() && y == -1) {
                    xb
                } else if f == Builtin::SafeDiv {
                    trunc(s, x / y)
                } else {
                    trunc(s, x % y)
                }
            }
        };
        out.push(r);
    }
    Ok(make(result, out, vector))
}
