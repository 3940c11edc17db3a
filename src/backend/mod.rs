//! Device back ends. Only `vulkan` exists so far; `cuda` (green contexts) comes with sub-devices.

pub mod vulkan;
