//! vkcl: an OpenCL 3.0 implementation on Vulkan compute.
//!
//! Loaded by the OpenCL ICD loader through `vkcl.icd`; see `../DESIGN` notes in README.md.
//! Layers (dependencies point down only): [`api`] (C ABI) -> [`core`] (OpenCL object model)
//! -> [`backend`] (Vulkan) and [`compiler`] (OpenCL C -> Vulkan SPIR-V).

pub mod compiler;
