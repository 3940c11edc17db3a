//! Device back ends: `vulkan` (every device) and `cuda` (NVIDIA green contexts for
//! sub-devices, where the CUDA driver is present).

pub mod cuda;
pub mod error;
pub mod executor;
pub mod vulkan;
