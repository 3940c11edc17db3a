//! Random differential testing (`vkcl-difftest`): seeded random OpenCL C kernels of integer
//! code that is well defined, each run on OpenCL platforms and compared with the answer of
//! a host interpreter.
//!
//! - [`ast`]: the syntax tree of the generated subset;
//! - [`gen`] (and `gen_expr`): the generator, one [`ast::Unit`] (structs, helpers, a kernel)
//!   per seed;
//! - [`print`]: OpenCL C source, several units to one program;
//! - [`eval`] (and `ops`, `value`): the interpreter, which also rejects anything not well defined;
//! - [`reduce`]: shrinks a failing unit.
//!
//! docs/difftest.md says what is generated, how to run the tester and what it found.

pub mod ast;
pub mod eval;
pub mod gen;
mod gen_expr;
mod ops;
pub mod print;
pub mod reduce;
mod value;

/// A seed's unit and its expected output (one uint per work-item), or why the interpreter
/// refused it (a generator bug).
pub fn case(seed: u64) -> (ast::Unit, Result<Vec<u32>, eval::EvalError>) {
    let u = gen::generate(seed);
    let r = eval::run(&u);
    (u, r)
}
#[cfg(test)]
mod tests;
