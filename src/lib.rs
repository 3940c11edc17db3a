//! vkcl: an OpenCL 3.0 implementation on Vulkan compute.
//!
//! Loaded by the OpenCL ICD loader through `vkcl.icd` (README.md: set-up, settings, limits).
//! Layers (dependencies point down only): [`api`] (C ABI) -> [`core`] (OpenCL object model)
//! -> [`backend`] (Vulkan) and [`compiler`] (OpenCL C -> Vulkan SPIR-V), with [`util`] below
//! them all; docs/architecture.md states the rules and tests/layering.rs checks them.

pub mod api;
pub mod backend;
pub mod compiler;
pub mod core;
pub mod util;
