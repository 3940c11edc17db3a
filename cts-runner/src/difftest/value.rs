//! The interpreter's values and its refusal: what `eval` computes and `ops` operates on.

use super::ast::{Scalar, Type};

/// A value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A scalar, as bits reduced to its width.
    Scalar(Scalar, u64),
    /// A vector's lanes.
    Vector(Scalar, Vec<u64>),
    /// A struct's fields.
    Struct(usize, Vec<Value>),
    /// An array's elements.
    Array(Vec<Value>),
}

impl Value {
    /// The value's type (an array's from its first element).
    pub fn ty(&self) -> Type {
        match self {
            Value::Scalar(s, _) => Type::Scalar(*s),
            Value::Vector(s, l) => Type::Vector(*s, l.len() as u8),
            Value::Struct(i, _) => Type::Struct(*i),
            Value::Array(e) => Type::Array(Box::new(e[0].ty()), e.len()),
        }
    }
}

/// Why the interpreter stopped: the program is not well defined, or not what the generator
/// may write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError(pub String);

impl EvalError {
    pub(super) fn bad(what: &str) -> EvalError {
        EvalError(what.to_string())
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
