//! vkcl: an OpenCL 3.0 implementation on Vulkan compute.
//!
//! Loaded by the OpenCL ICD loader through `vkcl.icd` (README.md: set-up, settings, limits).
//! Layers (dependencies point down only): [`api`] (C ABI) -> [`core`] (OpenCL object model)
//! -> [`backend`] (Vulkan) and [`compiler`] (OpenCL C -> Vulkan SPIR-V).

pub mod api;
pub mod backend;
pub mod compiler;
pub mod core;
pub mod util;

/// Whether the OpenCL C front end (clang-15, opt-15 and llvm-spirv-15, or their `VKCL_*`
/// overrides) can be found (`CL_DEVICE_COMPILER_AVAILABLE`).
pub fn compiler_available() -> bool {
    compiler::find_tools().is_ok()
}
