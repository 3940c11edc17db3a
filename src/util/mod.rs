//! Helpers that know nothing of OpenCL or Vulkan.

pub mod cache_file;
pub mod config;
pub mod cstdio;
pub mod host_copy;
