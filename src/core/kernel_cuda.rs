//! Kernels on green-context sub-devices (the CUDA path, issue 7): the program's OpenCL C
//! compiled to PTX ([`crate::compiler::ptx`]), loaded once per green context, launched with
//! `cuLaunchKernel` on the green context's stream over buffers' CUDA addresses (Vulkan memory
//! imported into CUDA, [`crate::backend::vulkan::memory::Buffer::cuda_address`]).
//!
//! `__local` pointer arguments become offsets into the launch's dynamic shared memory (the PTX
//! is rewritten to add its address). Commands of a green-context queue are [`Work::Foreign`]
//! of its engine ([`green_work`]): they wait for other queues' commands on the device, through
//! the queues' Vulkan timeline semaphores imported into CUDA, and signal their own queue's
//! timeline from CUDA, so events, wait lists, markers, barriers, `clFinish` and profiling
//! behave as for any command. A launch that the CUDA path cannot take (a program from IL, a
//! global offset, a non-uniform NDRange, a kernel that calls printf, a buffer that is not
//! exportable, PTX that fails to build or load) runs through Vulkan as on any sub-device.

use super::device::Device;
use super::error::{ClError, ClResult};
use super::kernel::{ArgValue, Kernel, Launch, NdRange};
use super::program::ProgramSource;
use crate::backend::cuda::CuError;
use crate::backend::cuda::{GreenContext, Module, Stream};
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::queue::{ForeignOutcome, Work};
use crate::compiler::ArgKind;
use opencl_sys::*;
use std::any::Any;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
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

/// A kernel launch prepared for a green context: its function, grid and argument values, and
/// what must stay alive while it runs; [`GreenLaunch::enqueue_on`] enqueues it on a stream.
pub(crate) struct GreenLaunch {
    pub green: Arc<GreenContext>,
    f: usize,
    groups: [u32; 3],
    block: [u32; 3],
    /// Bytes of dynamic shared memory (the `__local` arguments).
    shared: u32,
    /// The bytes of each argument's value, in order (cuLaunchKernel copies them).
    params: Vec<Vec<u8>>,
    /// The kernel, its module and buffers.
    pub keep: Vec<Arc<dyn Any + Send + Sync>>,
}

impl GreenLaunch {
    /// Enqueues the launch on `stream`, a stream of its green context (its own, or one being
    /// captured into a graph). Errors: the driver's.
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

/// A launch of `kernel` over `range` on the green context of `device` with argument values
/// `args`, or None when the CUDA path cannot take it (see the module's documentation).
/// Errors: `CL_INVALID_KERNEL_ARGS` for an argument not set or a buffer released since.
pub(crate) fn launch_on_green(
    kernel: &Arc<Kernel>,
    device: &Arc<Device>,
    range: &NdRange,
    args: &[Option<ArgValue>],
) -> ClResult<Option<Launch>> {
    let Some(l) = prepare_green_launch(kernel, device, range, args)? else {
        return Ok(None);
    };
    let (green, keep) = (l.green.clone(), l.keep.clone());
    Ok(Some(Launch {
        work: green_work(green.clone(), move || l.enqueue_on(green.stream)),
        keep,
        printf: None,
        loop_check: None,
    }))
}

/// Prepares a launch as [`launch_on_green`] does, for the stream of the caller's choice.
/// Errors: as [`launch_on_green`].
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

/// A command's work on a stream of a green context (the CUDA path): enqueues it on the given
/// stream. Enqueued commands run it on the queue's stream ([`on_green`]); command buffers
/// capture theirs into a CUDA graph.
pub(crate) type CudaOp = Arc<dyn Fn(&GreenContext, Stream) -> Result<(), CuError> + Send + Sync>;

/// A buffer copy in CUDA (`cuMemcpyDtoDAsync`) on `device`'s green context: `size` bytes from
/// byte `s` of `src` to byte `d` of `dst` (storage offsets, already checked in bounds and not
/// overlapping; the command keeps both buffers alive). None off a green context or for a buffer
/// CUDA cannot see (the copy then goes through Vulkan).
pub(crate) fn copy_op(
    device: &Device,
    src: &Buffer,
    s: u64,
    dst: &Buffer,
    d: u64,
    size: u64,
) -> Option<CudaOp> {
    device.green_context()?;
    let (from, to) = (src.cuda_address()? + s, dst.cuda_address()? + d);
    // SAFETY: both ranges lie inside live buffers and do not overlap (the caller's checks).
    Some(Arc::new(move |g: &GreenContext, st: Stream| unsafe {
        g.copy_on(st, to, from, size as usize)
    }))
}

/// A fill in CUDA (`cuMemsetD32Async`) on `device`'s green context: `size` bytes from byte
/// `offset` of `dst` (4-byte aligned) repeat `word`. None as for [`copy_op`].
pub(crate) fn fill_op(
    device: &Device,
    dst: &Buffer,
    offset: u64,
    size: u64,
    word: u32,
) -> Option<CudaOp> {
    device.green_context()?;
    let at = dst.cuda_address()? + offset;
    // SAFETY: the range lies inside a live buffer (the caller's checks); 4-byte aligned.
    Some(Arc::new(move |g: &GreenContext, st: Stream| unsafe {
        g.fill_on(st, at, &word.to_le_bytes(), (size / 4) as usize)
    }))
}

/// `op` as an enqueued command of a queue of `device` (its green context's stream); None off a
/// green context or without an op.
pub(crate) fn on_green(device: &Device, op: Option<CudaOp>) -> Option<Work> {
    let (green, op) = (device.green_context()?.clone(), op?);
    let g = green.clone();
    Some(green_work(green, move || op(&g, g.stream)))
}

/// Device work on `green`'s stream as a command of a green-context queue ([`Work::Foreign`]):
/// `body` enqueues it (without blocking) after the command's waits, and the queue's timeline
/// value is signalled from CUDA after it, so commands of Vulkan queues that depend on it wait
/// on the device. A wait on a timeline CUDA cannot import is waited for on the host first;
/// where the queue's own timeline cannot be imported the command runs synchronously on the
/// submission thread (waits on the host, then the work, then `cuStreamSynchronize`).
pub(crate) fn green_work(
    green: Arc<GreenContext>,
    body: impl FnOnce() -> Result<(), CuError> + Send + 'static,
) -> Work {
    Work::Foreign(Box::new(move |waits, signal| {
        let failed = |e: CuError| {
            tracing::error!("command on a green context: {e}");
            // Whatever was enqueued ends before the host signals the command's value.
            let _ = green.synchronize();
            ForeignOutcome::Completed(CL_OUT_OF_RESOURCES)
        };
        let Some(sig) = signal.0.cuda_semaphore() else {
            for (t, v) in waits {
                let _ = t.wait(*v);
            }
            return match green
                .make_current()
                .and_then(|()| body())
                .and_then(|()| green.synchronize())
            {
                Ok(()) => ForeignOutcome::Completed(CL_SUCCESS),
                Err(e) => failed(e),
            };
        };
        let sync = crate::util::config::config().cuda_sync;
        let mut sems = Vec::with_capacity(waits.len());
        for (t, v) in waits {
            match t.cuda_semaphore().filter(|_| !sync.host_wait) {
                Some(s) => sems.push((s, *v)),
                None => {
                    let _ = t.wait(*v);
                }
            }
        }
        let device_signal = (!sync.host_signal).then_some((sig, signal.1));
        if let Err(e) = green.submit(&sems, device_signal, body) {
            return failed(e);
        }
        if sync.host_signal {
            let (t, v) = signal.clone();
            if let Err(e) = green.then_on_host(Box::new(move || {
                let _ = t.signal(v);
            })) {
                return failed(e);
            }
        }
        // A fault on the device never signals the value: the completion's wait asks the
        // streams for their errors.
        let probe: crate::backend::vulkan::queue::Probe =
            Box::new(move || green.check_streams().map_err(|e| e.to_string()));
        ForeignOutcome::Enqueued(Some(probe))
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
