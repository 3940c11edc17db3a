//! spirv-val on lowered modules (Vulkan 1.2 target environment).

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
