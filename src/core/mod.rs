//! The OpenCL object model in safe Rust: platform, devices, contexts, queues, memory, events,
//! programs, kernels. Knows OpenCL semantics; reaches the device only through `backend`.

pub mod binary;
pub mod chunked;
pub mod command;
pub mod command_buffer;
pub mod context;
pub mod device;
pub mod device_address;
pub mod device_features;
pub mod error;
pub mod event;
pub mod image;
pub mod image_command;
pub mod image_desc;
pub mod kernel;
pub mod kernel_command;
pub(crate) mod kernel_cuda;
pub mod kernel_image;
pub mod launch;
pub mod launch_buffers;
pub mod memory;
pub mod object;
pub mod partition;
pub mod platform;
pub mod printf;
pub mod program;
pub mod queue;
pub mod queue_lanes;
pub mod rect;
pub mod sampler;
pub mod semaphore;
pub mod staged;
pub mod transfer;
pub mod version;

use std::ffi::c_void;

/// `CL_MAKE_VERSION(major, minor, patch)`.
pub const fn make_version(major: u32, minor: u32, patch: u32) -> u32 {
    (major << 22) | (minor << 12) | patch
}

/// An application pointer carried through vkcl untouched (callback `user_data`, host pointers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserPtr(pub *mut c_void);

// SAFETY: vkcl never dereferences a UserPtr itself except where the OpenCL API makes it the
// application's promise that the memory is valid (host_ptr of USE_HOST_PTR buffers, read/write
// destinations); passing it between threads is what the API requires.
unsafe impl Send for UserPtr {}
// SAFETY: as above.
unsafe impl Sync for UserPtr {}

impl UserPtr {
    /// The NULL pointer.
    pub const NULL: UserPtr = UserPtr(std::ptr::null_mut());

    /// The pointer (a method, so closures capture the whole `UserPtr`, which is `Send`).
    pub fn get(self) -> *mut c_void {
        self.0
    }
}
