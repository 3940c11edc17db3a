//! spirv-val and spirv-opt on lowered modules (Vulkan 1.2 target environment).

use spirv_tools::opt::Optimizer;
use spirv_tools::val::Validator;

use crate::util::config::{config, Validation};

/// Whether every module handed to Vulkan goes through spirv-val first. Yes by default (about
/// 5 ms of a build that takes 100 ms and more in clang, opt and llvm-spirv; the program cache
/// keeps the result), so that a lowering bug is a build error with spirv-val's message in the
/// build log instead of invalid SPIR-V reaching the driver, which may reject it at pipeline
/// creation (lavapipe: `VK_ERROR_UNKNOWN`) or crash. No when `VKCL_SPIRV_VAL=0`, or when
/// `spirv-val` is not on `PATH` (Debian: package `spirv-tools`), unless `VKCL_VALIDATION` is
/// set (which then makes a missing validator a build error). Always in the compiler's unit
/// tests.
pub(crate) fn enabled() -> bool {
    if cfg!(test) || config().validation != Validation::Off {
        return true;
    }
    config().spirv_val && installed()
}

/// Whether `spirv-val` (which the `spirv-tools` crate runs) is on `PATH`; looked up once.
fn installed() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        let found = super::tools::search_path(std::ffi::OsStr::new("spirv-val")).is_some();
        if !found {
            tracing::info!("spirv-val is not installed: lowered modules go to Vulkan unvalidated");
        }
        found
    })
}

/// The validator's identity for the program cache ([`super::validate_once`]): the target
/// environment and `spirv-val`'s resolved path, size and modification time (an upgrade changes
/// them); looked up once.
pub(crate) fn identity() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let path = super::tools::search_path(std::ffi::OsStr::new("spirv-val"));
        let real = path.as_ref().and_then(|p| std::fs::canonicalize(p).ok());
        let meta = real.as_ref().and_then(|p| std::fs::metadata(p).ok());
        let mtime = meta
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!(
            "vulkan1.2;{}:{}:{mtime}",
            real.map_or_else(String::new, |p| p.display().to_string()),
            meta.map_or(0, |m| m.len())
        )
    })
}

/// Validates `words` as a Vulkan 1.2 module.
///
/// # Errors
/// spirv-val's message when the module is invalid or the validator cannot run.
pub(crate) fn validate_vulkan(words: &[u32]) -> Result<(), String> {
    let validator = spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_2));
    validator.validate(words, None).map_err(|e| e.to_string())
}

/// Runs spirv-opt's performance passes (`-O`) on `words`, keeping specialization constants (the
/// work-group size and `__local` argument lengths are set at pipeline creation).
///
/// # Errors
/// spirv-opt's message when it fails (it validates its input first).
pub(crate) fn optimize(words: &[u32]) -> Result<Vec<u32>, String> {
    let mut optimizer = spirv_tools::opt::create(Some(spirv_tools::TargetEnv::Vulkan_1_2));
    optimizer.register_performance_passes();
    let options = spirv_tools::opt::Options {
        preserve_spec_constants: true,
        ..Default::default()
    };
    let mut messages = Vec::new();
    let mut collect = |m: spirv_tools::error::Message| messages.push(m.message);
    match optimizer.optimize(words, &mut collect, Some(options)) {
        Ok(binary) => Ok(binary.as_words().to_vec()),
        Err(e) => Err(format!("{e} {}", messages.join("; "))),
    }
}
