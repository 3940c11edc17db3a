//! Helpers and OpenCL C sources shared by the `kernels_*` test files (the former
//! `tests/kernels.rs`, split in issue 17).
use super::*;

pub const VADD: &str = include_str!("../../src/compiler/testdata/vadd.cl");
pub const ARGS: &str = include_str!("../../src/compiler/testdata/args.cl");
pub const LOCAL: &str = include_str!("../../src/compiler/testdata/local.cl");
pub const PRIVATE: &str = include_str!("../../src/compiler/testdata/private.cl");
pub const CONSTANT: &str = include_str!("../../src/compiler/testdata/constant.cl");

pub fn random_i32(rng: &mut Rng, n: usize, lo: i32, hi: i32) -> Vec<i32> {
    (0..n)
        .map(|_| lo + (rng.next_u32() % (hi - lo) as u32) as i32)
        .collect()
}

pub fn random_f32(rng: &mut Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| lo + rng.next_f32() * (hi - lo)).collect()
}

#[track_caller]
pub fn assert_close(got: f32, want: f32, tol: f32, what: &str) {
    let err = (got - want).abs();
    assert!(
        err <= tol * want.abs().max(1.0),
        "{what}: got {got}, want {want} (error {err})"
    );
}

/// Builds `source`, a program using `double`, with `options`: `Some` where the device reports
/// `cl_khr_fp64`; elsewhere asserts that the build fails with a log naming the missing
/// extension (never a program where `double` silently became `float`) and gives `None`.
pub fn build_doubles(env: &Env, source: &str, options: &str) -> Option<cl_program> {
    let built = env.try_build(source, options);
    if env.has_extension("cl_khr_fp64") {
        return Some(built.unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}")));
    }
    let (err, log) = built.expect_err("double without cl_khr_fp64 must not build");
    assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        log.contains("error") && log.contains("double") && log.contains("cl_khr_fp64"),
        "{log}"
    );
    None
}
