//! A kernel launch prepared for a green context (`cuLaunchKernel`'s arguments): what core
//! makes of an NDRange that the CUDA path can take, enqueued by the CUDA executor on the
//! green context's stream or captured into a command buffer's graph.

use super::green::{GreenContext, Stream};
use super::CuError;
use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

/// A kernel launch prepared for a green context: its function, grid and argument values, and
/// what must stay alive while it runs; [`GreenLaunch::enqueue_on`] enqueues it on a stream.
pub struct GreenLaunch {
    pub green: Arc<GreenContext>,
    pub f: usize,
    pub groups: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory (the `__local` arguments).
    pub shared: u32,
    /// The bytes of each argument's value, in order (cuLaunchKernel copies them).
    pub params: Vec<Vec<u8>>,
    /// The kernel, its module and buffers.
    pub keep: Vec<Arc<dyn Any + Send + Sync>>,
}

impl GreenLaunch {
    /// Enqueues the launch on `stream`, a stream of its green context (its own, or one being
    /// captured into a graph). Errors: the driver's.
    // `Stream` is the driver's opaque handle: handed to the driver, never dereferenced here.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn enqueue_on(&self, stream: Stream) -> Result<(), CuError> {
        let mut params = self.params.clone();
        let mut ptrs: Vec<*mut c_void> = params
            .iter_mut()
            .map(|b| b.as_mut_ptr() as *mut c_void)
            .collect();
        // SAFETY: `f` is the kernel of a module loaded in this green context (kept alive by
        // `keep`); one parameter per kernel argument, each pointing to a value of the
        // argument's size (cuLaunchKernel copies them); the buffers are kept alive by the
        // command that enqueues this.
        unsafe {
            self.green.launch_on(
                stream,
                self.f as _,
                self.groups,
                self.block,
                self.shared,
                &mut ptrs,
            )
        }
    }
}
