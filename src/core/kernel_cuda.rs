//! Kernels on green-context sub-devices (the CUDA path, issue 7): the program's OpenCL C
//! compiled to PTX ([`crate::compiler::ptx`]), loaded once per green context, launched with
//! `cuLaunchKernel` on the green context's stream over buffers' CUDA addresses (Vulkan memory
//! imported into CUDA, [`crate::backend::vulkan::memory::Buffer::cuda_address`]).
//!
//! First landing: the launch is host work of the queue (it runs once everything before it has
//! completed and returns when the kernel has), so events, wait lists, markers, barriers,
//! `clFinish` and profiling behave as for any command. Ordering on the device through the
//! queues' timeline semaphores imported into CUDA is not done yet. A launch that the CUDA path
//! cannot take (a program from IL, a `__local` argument, a global offset, a buffer that is not
//! exportable, PTX that fails to build or load) runs through Vulkan as on any sub-device.

use super::device::Device;
use super::error::{ClError, ClResult};
use super::kernel::{ArgValue, Kernel, Launch, NdRange};
use super::program::ProgramSource;
use crate::backend::cuda::{GreenContext, Module};
use crate::backend::vulkan::queue::Work;
use crate::compiler::ArgKind;
use opencl_sys::*;
use std::any::Any;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// PTX built per (source, options), shared by every green context; a failed build is
/// remembered too (its launches take the Vulkan path).
fn ptx_for(source: &str, options: &str) -> (u64, Option<Arc<CString>>) {
    static CACHE: OnceLock<Mutex<HashMap<u64, Option<Arc<CString>>>>> = OnceLock::new();
    let mut h = DefaultHasher::new();
    (source, options).hash(&mut h);
    let key = h.finish();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return (key, p.clone());
    }
    let built = match crate::compiler::ptx::compile_ptx(source, &clang_args(options)) {
        Ok(p) => Some(Arc::new(p)),
        Err(e) => {
            tracing::warn!("PTX build failed, kernels take the Vulkan path: {e}");
            None
        }
    };
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, built.clone());
    (key, built)
}

/// The build options clang needs for PTX: macro definitions and include paths.
fn clang_args(options: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = options.split_whitespace();
    while let Some(t) = it.next() {
        match t {
            "-D" | "-I" => {
                if let Some(v) = it.next() {
                    out.push(format!("{t}{v}"));
                }
            }
            _ if t.starts_with("-D") || t.starts_with("-I") => out.push(t.to_string()),
            _ => {}
        }
    }
    out
}

/// The module of `ptx` (cache key `key`) in `green`, loaded at its first use there.
fn module_in(green: &GreenContext, key: u64, ptx: &CString) -> Option<Arc<Module>> {
    let mut modules = green.modules.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = modules.get(&key) {
        return m.clone();
    }
    let m = match Module::load(green, ptx) {
        Ok(m) => Some(Arc::new(m)),
        Err(e) => {
            tracing::warn!("PTX load failed, kernels take the Vulkan path: {e}");
            None
        }
    };
    modules.insert(key, m.clone());
    m
}

/// A launch of `kernel` over `range` on the green context of `device` with argument values
/// `args`, or None when the CUDA path cannot take it (see the module's documentation).
/// Errors: `CL_INVALID_KERNEL_ARGS` for an argument not set or a buffer released since.
pub(crate) fn launch_on_green(
    kernel: &Arc<Kernel>,
    device: &Arc<Device>,
    range: &NdRange,
    args: &[Option<ArgValue>],
) -> ClResult<Option<Launch>> {
    let Some(green) = device.green_context().cloned() else {
        return Ok(None);
    };
    if range.offset.iter().any(|&o| o != 0) {
        return Ok(None);
    }
    let ProgramSource::Source(source) = &kernel.program.source else {
        return Ok(None);
    };
    let info = kernel.info();
    let mut keep: Vec<Arc<dyn Any + Send + Sync>> = vec![kernel.clone()];
    // The bytes of each argument's value, in order (cuLaunchKernel takes a pointer to each).
    let mut params: Vec<Vec<u8>> = Vec::with_capacity(info.args.len());
    for (a, v) in info.args.iter().zip(args.iter()) {
        // CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified.
        let v = v.as_ref().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
        match (a.kind, v) {
            (ArgKind::Buffer, ArgValue::Buffer(m)) => {
                let addr = match m {
                    Some(w) => {
                        // CL_INVALID_KERNEL_ARGS if a buffer argument was released since.
                        let m = w.upgrade().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
                        let Some(base) = m.storage.cuda_address() else {
                            return Ok(None);
                        };
                        let addr = base + m.offset as u64;
                        keep.push(m);
                        addr
                    }
                    None => 0,
                };
                params.push(addr.to_le_bytes().to_vec());
            }
            (ArgKind::Value, ArgValue::Bytes(b)) => params.push(b.clone()),
            // `__local` arguments need the dynamic shared-memory ABI: not yet.
            _ => return Ok(None),
        }
    }
    let options = kernel.program.executable_options();
    let (key, Some(ptx)) = ptx_for(source, &options) else {
        return Ok(None);
    };
    let Some(module) = module_in(&green, key, &ptx) else {
        return Ok(None);
    };
    let Ok(name) = CString::new(info.name.clone()) else {
        return Ok(None);
    };
    let f = match module.function(&name) {
        Ok(f) => f as usize,
        Err(e) => {
            tracing::warn!("{e}");
            return Ok(None);
        }
    };
    keep.push(module);
    let groups: [u32; 3] =
        std::array::from_fn(|d| (range.global[d] / range.local[d].max(1) as u64) as u32);
    let block = range.local;
    let work = Work::Host(Box::new(move || {
        let mut params = params;
        let mut ptrs: Vec<*mut c_void> = params
            .iter_mut()
            .map(|b| b.as_mut_ptr() as *mut c_void)
            .collect();
        let mut run = || {
            green.make_current()?;
            // SAFETY: `f` is the kernel of a module loaded in this green context (kept alive
            // by the command); one parameter per kernel argument, each pointing to a value
            // of the argument's size; the buffers are kept alive until the command completes.
            unsafe { green.launch(f as _, groups, block, 0, &mut ptrs) }?;
            green.synchronize()
        };
        match run() {
            Ok(()) => CL_SUCCESS,
            Err(e) => {
                tracing::error!("kernel on a green context: {e}");
                CL_OUT_OF_RESOURCES
            }
        }
    }));
    Ok(Some(Launch {
        work,
        keep,
        printf: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::clang_args;

    #[test]
    fn only_definitions_and_include_paths_reach_clang() {
        assert_eq!(
            clang_args("-DN=4 -cl-fast-relaxed-math -D M=2 -I /inc -Werror -Ifoo"),
            vec!["-DN=4", "-DM=2", "-I/inc", "-Ifoo"]
        );
        assert!(clang_args("").is_empty());
    }
}
