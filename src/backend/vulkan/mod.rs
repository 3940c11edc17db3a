//! The Vulkan back end: the only module that names `ash` and `gpu_allocator`.

pub mod copy_kernel;
pub mod counters;
pub mod device;
pub mod image;
pub mod image_copy_kernel;
pub mod image_object;
pub mod instance;
pub mod memory;
pub mod pipeline;
pub mod pipeline_cache;
pub mod queue;
pub mod record;
pub mod recorder;
pub mod sampler;
pub mod secondary;
pub mod staging;
pub mod timeline;
pub mod upload;
pub mod xid;

pub use device::Device;
pub use instance::{Instance, PhysicalDevice, SubgroupOperations};
