//! Programs (OpenCL 3.0 section 5.8): source or IL, a build per program, and the Vulkan
//! shader modules and pipelines of its kernels.

use super::context::Context;
use super::device::Device;
use super::error::{ClError, ClResult};
use super::object::{ClObject, Header, Kind};
use crate::backend::vulkan::pipeline::{Pipeline, ShaderModule};
use crate::compiler::{self, BuildFailureKind, CompiledProgram, DeviceCaps, KernelInfo};
use opencl_sys::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Where a program came from.
pub enum ProgramSource {
    /// OpenCL C (clCreateProgramWithSource).
    Source(String),
    /// SPIR-V (clCreateProgramWithIL).
    Il(Vec<u8>),
}

/// The state of the program's build (`CL_PROGRAM_BUILD_*`).
pub struct BuildState {
    pub status: cl_build_status,
    pub options: String,
    pub log: String,
    pub binary_type: cl_program_binary_type,
    pub compiled: Option<Arc<CompiledProgram>>,
}

/// Key of a specialised pipeline: kernel name, work-group size, `__local` argument sizes,
/// dispatch variant (persistent or not).
type PipelineKey = (String, [u32; 3], Vec<(u32, u32)>, bool);

/// A program object.
pub struct Program {
    header: Header,
    pub context: Arc<Context>,
    pub devices: Vec<Arc<Device>>,
    pub source: ProgramSource,
    pub build: Mutex<BuildState>,
    /// Kernel objects alive for this program (clBuildProgram fails while any exist).
    pub kernel_count: AtomicU32,
    modules: Mutex<HashMap<(String, bool), Arc<ShaderModule>>>,
    pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
}

impl ClObject for Program {
    const KIND: Kind = Kind::Program;
    const INVALID: i32 = CL_INVALID_PROGRAM;
    fn header(&self) -> &Header {
        &self.header
    }
}

/// The compiler's view of a device.
pub fn device_caps(d: &Device) -> DeviceCaps {
    let p = &d.phys;
    DeviceCaps {
        int8_storage: p.storage_8bit && p.shader_int8,
        int16_storage: p.storage_16bit && p.shader_int16,
        fp64: p.shader_float64,
        fp16: p.shader_float16,
        int64_atomics: p.shader_int64_atomics,
        max_push_constants: p.limits.max_push_constants_size,
        max_local_mem_bytes: p.limits.max_compute_shared_memory_size,
    }
}

impl Program {
    /// A program of `source` for every device of `context` (or `devices`).
    pub fn new(context: Arc<Context>, devices: Vec<Arc<Device>>, source: ProgramSource) -> Program {
        Program {
            header: Header::new(Kind::Program),
            context,
            devices,
            source,
            build: Mutex::new(BuildState {
                status: CL_BUILD_NONE,
                options: String::new(),
                log: String::new(),
                binary_type: CL_PROGRAM_BINARY_TYPE_NONE as cl_program_binary_type,
                compiled: None,
            }),
            kernel_count: AtomicU32::new(0),
            modules: Mutex::new(HashMap::new()),
            pipelines: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BuildState> {
        self.build.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// clBuildProgram: compiles for the program's devices (one build serves all of them).
    /// Errors: `CL_INVALID_OPERATION` while kernels exist, `CL_COMPILER_NOT_AVAILABLE`,
    /// `CL_INVALID_BUILD_OPTIONS`, `CL_BUILD_PROGRAM_FAILURE` (the log says why).
    pub fn build(&self, options: &str) -> ClResult<()> {
        // CL_INVALID_OPERATION if there are kernel objects attached to program.
        if self.kernel_count.load(Ordering::Acquire) > 0 {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        let caps = device_caps(&self.devices[0]);
        {
            let mut st = self.lock();
            st.status = CL_BUILD_IN_PROGRESS;
            st.options = options.to_string();
        }
        let result = match &self.source {
            ProgramSource::Source(src) => match compiler::find_tools() {
                Ok(tools) => compiler::compile_source(&tools, src, options, &caps),
                Err(e) => {
                    let mut st = self.lock();
                    st.status = CL_BUILD_ERROR;
                    st.log = e.to_string();
                    return Err(ClError(CL_COMPILER_NOT_AVAILABLE));
                }
            },
            ProgramSource::Il(il) => compiler::compile_il(il, options, &caps),
        };
        self.modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let mut st = self.lock();
        match result {
            Ok(p) => {
                st.status = CL_BUILD_SUCCESS;
                st.log = p.build_log.clone();
                st.binary_type = CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type;
                st.compiled = Some(Arc::new(p));
                Ok(())
            }
            Err(f) => {
                st.status = CL_BUILD_ERROR;
                st.log = f.log;
                st.compiled = None;
                Err(ClError(match f.kind {
                    BuildFailureKind::InvalidOptions => CL_INVALID_BUILD_OPTIONS,
                    BuildFailureKind::CompileError => CL_BUILD_PROGRAM_FAILURE,
                }))
            }
        }
    }

    /// The built program. Errors: `CL_INVALID_PROGRAM_EXECUTABLE` if there is no successful
    /// build.
    pub fn compiled(&self) -> ClResult<Arc<CompiledProgram>> {
        self.lock()
            .compiled
            .clone()
            .ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))
    }

    /// The kernel named `name`. Errors: `CL_INVALID_PROGRAM_EXECUTABLE` (not built),
    /// `CL_INVALID_KERNEL_NAME` (no such kernel).
    pub fn kernel_info(&self, name: &str) -> ClResult<(Arc<CompiledProgram>, usize)> {
        let c = self.compiled()?;
        let i = c
            .kernels
            .iter()
            .position(|k| k.name == name)
            .ok_or(ClError(CL_INVALID_KERNEL_NAME))?;
        Ok((c, i))
    }

    /// The pipeline of `kernel` for work-group size `local` and `__local` argument sizes
    /// `locals` (spec-constant ID, element count), created at first use; `persistent` picks
    /// the compute-unit-limited variant (see the compiler's "Persistent variant").
    /// Errors: `CL_OUT_OF_RESOURCES` when Vulkan refuses the module or pipeline or the
    /// persistent variant cannot be made.
    pub fn pipeline(
        &self,
        device: &Device,
        kernel: &KernelInfo,
        local: [u32; 3],
        locals: Vec<(u32, u32)>,
        persistent: bool,
    ) -> ClResult<Arc<Pipeline>> {
        let key = (kernel.name.clone(), local, locals, persistent);
        if let Some(p) = self
            .pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(p.clone());
        }
        let vk = device.vk()?;
        let module = {
            let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
            let mkey = (kernel.name.clone(), persistent);
            match modules.get(&mkey) {
                Some(m) => m.clone(),
                None => {
                    let variant;
                    let words = if persistent {
                        variant = compiler::persistent_variant(&kernel.spirv).map_err(|e| {
                            tracing::error!("persistent variant of {}: {e}", kernel.name);
                            ClError(CL_OUT_OF_RESOURCES)
                        })?;
                        &variant
                    } else {
                        &kernel.spirv
                    };
                    let m = Arc::new(ShaderModule::new(vk, words).map_err(|e| {
                        tracing::error!("vkCreateShaderModule({}): {e}", kernel.name);
                        ClError(CL_OUT_OF_RESOURCES)
                    })?);
                    modules.insert(mkey, m.clone());
                    m
                }
            }
        };
        let mut spec = vec![(0, local[0]), (1, local[1]), (2, local[2])];
        spec.extend(key.2.iter().copied());
        let p = Arc::new(Pipeline::new(vk, &module, &spec).map_err(|e| {
            tracing::error!("vkCreateComputePipelines({}): {e}", kernel.name);
            ClError(CL_OUT_OF_RESOURCES)
        })?);
        self.pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, p.clone());
        Ok(p)
    }
}
