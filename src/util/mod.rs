//! Helpers that know nothing of OpenCL or Vulkan.

pub mod config;
pub mod cstdio;
