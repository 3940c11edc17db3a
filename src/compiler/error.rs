//! Error types of the compiler.

use thiserror::Error;

/// The compiler cannot run at all (`CL_COMPILER_NOT_AVAILABLE`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CompilerError {
    /// A tool (clang-15, opt-15, llvm-spirv-15) was not found; the message says how to install.
    #[error("{0}")]
    NotAvailable(String),
}

/// Why a build failed; decides the OpenCL error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildFailureKind {
    /// An option is not an OpenCL build option (`CL_INVALID_BUILD_OPTIONS`).
    InvalidOptions,
    /// The source does not compile or a kernel cannot be lowered (`CL_BUILD_PROGRAM_FAILURE`).
    CompileError,
}

/// A failed build: its kind and the build log (`CL_PROGRAM_BUILD_LOG`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{log}")]
pub struct BuildFailure {
    /// Which OpenCL error this maps to.
    pub kind: BuildFailureKind,
    /// Human-readable diagnostics (clang's, naming `<source>:line:column`, or the lowering's).
    pub log: String,
}

impl BuildFailure {
    /// A [`BuildFailureKind::CompileError`] with `log`.
    pub fn compile(log: impl Into<String>) -> Self {
        BuildFailure {
            kind: BuildFailureKind::CompileError,
            log: log.into(),
        }
    }

    /// A [`BuildFailureKind::InvalidOptions`] with `log`.
    pub fn options(log: impl Into<String>) -> Self {
        BuildFailure {
            kind: BuildFailureKind::InvalidOptions,
            log: log.into(),
        }
    }
}
