//! Kernels on green-context sub-devices (the CUDA path, issue 7): the program's OpenCL C
//! compiled to PTX ([`crate::compiler::ptx`]), loaded once per green context, launched with
//! `cuLaunchKernel` on the green context's stream over buffers' CUDA addresses (Vulkan memory
//! imported into CUDA, [`crate::backend::vulkan::memory::Buffer::cuda_address`]).
//!
//! `__local` pointer arguments become offsets into the launch's dynamic shared memory (the PTX
//! is rewritten to add its address). The launch prepared here is the CUDA form of a launch's
//! device command; the queue's CUDA executor ([`crate::backend::executor::Executor`]) runs it
//! and the copies and fills of a green-context queue on the green context's stream: they wait for other queues' commands on the device, through
//! the queues' Vulkan timeline semaphores imported into CUDA, and signal their own queue's
//! timeline from CUDA, so events, wait lists, markers, barriers, `clFinish` and profiling
//! behave as for any command. A launch that the CUDA path cannot take (a program from IL, a
//! global offset, a non-uniform NDRange, a kernel that calls printf, a buffer that is not
//! exportable, PTX that fails to build or load, raw device addresses of
//! cl_ext_buffer_device_address: a device-pointer argument, a buffer created with
//! `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT`, `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`) runs through
//! Vulkan as on any sub-device.

use super::device::Device;
use super::error::{ClError, ClResult};
use super::kernel::{ArgValue, Kernel, NdRange};
use super::program::ProgramSource;
use crate::backend::cuda::launch::GreenLaunch;
use crate::backend::cuda::{GreenContext, Module};
use crate::compiler::ArgKind;
use opencl_sys::*;
use std::any::Any;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::ffi::CString;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// A program's PTX and the kernels whose `__local` pointer parameters were rewritten to take
/// offsets into dynamic shared memory ([`crate::compiler::ptx::local_params_to_dynamic_shared`]).
struct Ptx {
    text: CString,
    local_ok: Vec<String>,
}

/// PTX built per (source, options), shared by every green context; a failed build is
/// remembered too (its launches take the Vulkan path). `locals` gives, per kernel of the
/// program, the indices of its `__local` pointer arguments (asked only when building).
fn ptx_for(
    source: &str,
    options: &str,
    locals: impl FnOnce() -> Vec<(String, Vec<usize>)>,
) -> (u64, Option<Arc<Ptx>>) {
    static CACHE: OnceLock<Mutex<HashMap<u64, Option<Arc<Ptx>>>>> = OnceLock::new();
    let mut h = DefaultHasher::new();
    (source, options).hash(&mut h);
    let key = h.finish();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return (key, p.clone());
    }
    let built = match crate::compiler::ptx::compile_ptx(source, &clang_args(options)) {
        Ok(p) => {
            let (text, local_ok) = crate::compiler::ptx::local_params_to_dynamic_shared(
                &p.to_string_lossy(),
                &locals(),
            );
            CString::new(text)
                .ok()
                .map(|text| Arc::new(Ptx { text, local_ok }))
        }
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
/// `args` (its PTX function, grid and argument bytes), or None when the CUDA path cannot take
/// it (see the module's documentation): the CUDA form of a launch's device command.
/// Errors: `CL_INVALID_KERNEL_ARGS` for an argument not set or a buffer released since.
pub(crate) fn prepare_green_launch(
    kernel: &Arc<Kernel>,
    device: &Arc<Device>,
    range: &NdRange,
    args: &[Option<ArgValue>],
) -> ClResult<Option<GreenLaunch>> {
    let Some(green) = device.green_context().cloned() else {
        return Ok(None);
    };
    // A global offset, or a non-uniform NDRange (edge groups smaller than the others, which
    // one CUDA launch cannot express), takes the Vulkan path.
    if range.offset.iter().any(|&o| o != 0) || !range.is_uniform() {
        return Ok(None);
    }
    let ProgramSource::Source(source) = &kernel.program.source else {
        return Ok(None);
    };
    let info = kernel.info();
    // printf from PTX would go to CUDA's own buffer, not vkcl's, and program-scope
    // variables to CUDA's own storage, not the program's block: such kernels take Vulkan.
    if info.printf.is_used() || kernel.has_program_globals() {
        return Ok(None);
    }
    let mut keep: Vec<Arc<dyn Any + Send + Sync>> = vec![kernel.clone()];
    // The bytes of each argument's value, in order (cuLaunchKernel takes a pointer to each).
    let mut params: Vec<Vec<u8>> = Vec::with_capacity(info.args.len());
    // Bytes of dynamic shared memory the `__local` arguments take.
    let mut shared: u64 = 0;
    let mut has_locals = false;
    for (a, v) in info.args.iter().zip(args.iter()) {
        // CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified.
        let v = v.as_ref().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
        match (a.kind, v) {
            (ArgKind::Buffer, ArgValue::Buffer(m)) => {
                let addr = match m {
                    Some(w) => {
                        // CL_INVALID_KERNEL_ARGS if a buffer argument was released since.
                        let m = w.upgrade().ok_or(ClError(CL_INVALID_KERNEL_ARGS))?;
                        // A buffer with a device address: the kernel may store or follow
                        // Vulkan addresses, which CUDA's are not.
                        if m.addressable {
                            return Ok(None);
                        }
                        let Some(base) = m.storage().cuda_address() else {
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
            // A `__local` argument: its offset in the launch's dynamic shared memory (the
            // PTX adds the memory's address; 16-byte aligned like the largest OpenCL type).
            (ArgKind::Local { .. }, ArgValue::Local(n)) => {
                let at = shared.div_ceil(16) * 16;
                params.push(at.to_le_bytes().to_vec());
                shared = at + (*n as u64).max(1);
                has_locals = true;
            }
            _ => return Ok(None),
        }
    }
    // Beyond the device's local memory: the Vulkan path gives the error.
    if shared > device.local_mem_size() {
        return Ok(None);
    }
    let options = kernel.program.executable_options();
    let locals = || match kernel.program.compiled() {
        Ok(c) => c
            .kernels
            .iter()
            .map(|k| {
                let idx = k.args.iter().enumerate();
                let v = idx.filter(|(_, a)| matches!(a.kind, ArgKind::Local { .. }));
                (k.name.clone(), v.map(|(i, _)| i).collect())
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let (key, Some(ptx)) = ptx_for(source, &options, locals) else {
        return Ok(None);
    };
    if has_locals && !ptx.local_ok.contains(&info.name) {
        return Ok(None);
    }
    let Some(module) = module_in(&green, key, &ptx.text) else {
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
    Ok(Some(GreenLaunch {
        green,
        f,
        groups,
        block,
        shared: shared as u32,
        params,
        keep,
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
