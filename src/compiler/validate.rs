//! spirv-val and spirv-opt on lowered modules (Vulkan 1.2 target environment).

use spirv_tools::opt::Optimizer;
use spirv_tools::val::Validator;

use crate::util::config::{config, Validation};

/// Whether every module handed to Vulkan goes through spirv-val first: when `VKCL_VALIDATION`
/// is set (`1` or `fatal`), and always in the compiler's unit tests. Off by default, so the
/// fast path pays nothing.
pub(crate) fn enabled() -> bool {
    cfg!(test) || config().validation != Validation::Off
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
