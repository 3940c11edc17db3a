//! Programs (OpenCL 3.0 section 5.8): source or IL, a build state per device (status, options,
//! log, binary, executable), and the Vulkan shader modules and pipelines of its kernels.

use super::binary::{BinaryKind, ProgramBinary};
use super::context::Context;
use super::device::Device;
use super::error::{refused, ClError, ClResult};
use super::object::{ClObject, Header, Kind};
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::pipeline::{Pipeline, ShaderModule};
use crate::compiler::{
    self, BuildEnv, BuildFailure, BuildFailureKind, CompiledProgram, DeviceCaps, KernelInfo,
};
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
    /// One of vkcl's binaries (clCreateProgramWithBinary).
    Binary(ProgramBinary),
    /// The result of clLinkProgram (it cannot be built or compiled again).
    Linked,
}

/// The state of the program's build for one device (`CL_PROGRAM_BUILD_*` of
/// clGetProgramBuildInfo). A step run for several devices at once shares its results (the
/// `Arc`s) between their states.
#[derive(Clone)]
pub struct BuildState {
    pub status: cl_build_status,
    pub options: String,
    pub log: String,
    pub binary_type: cl_program_binary_type,
    pub compiled: Option<Arc<CompiledProgram>>,
    /// The LLVM bitcode of a compiled object or library (`binary_type` says which).
    pub object: Option<Arc<Vec<u8>>>,
    /// Whether clGetKernelArgInfo may answer for kernels of this build: built or compiled
    /// with `-cl-kernel-arg-info`, or linked from an object or library that was (OpenCL 3.0
    /// 5.10.11: the option may be given to clCompileProgram).
    pub arg_info: bool,
    /// Whether kernels of this build may run non-uniform work-groups (see
    /// [`supports_non_uniform`]; for a link, every input must).
    pub non_uniform: bool,
}

/// Whether a build or compile with `options` supports non-uniform work-groups (OpenCL 3.0
/// section 5.10, clEnqueueNDRangeKernel): from OpenCL C source (`from_source`) only with
/// `-cl-std=CL2.0`, `CL3.0` or `CL3.1`; from IL or a binary always; in both cases never with
/// `-cl-uniform-work-group-size`. Launches of a kernel whose build does not must have uniform
/// work-groups (`CL_INVALID_WORK_GROUP_SIZE` otherwise).
pub fn supports_non_uniform(from_source: bool, options: &str) -> bool {
    let mut cl2_or_later = false;
    for o in options.split_whitespace() {
        match o {
            "-cl-uniform-work-group-size" => return false,
            "-cl-std=CL2.0" | "-cl-std=CL3.0" | "-cl-std=CL3.1" => cl2_or_later = true,
            _ if o.starts_with("-cl-std=") => cl2_or_later = false,
            _ => {}
        }
    }
    cl2_or_later || !from_source
}

/// Which entry point builds: decides the error codes of a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildStep {
    /// clBuildProgram: `CL_BUILD_PROGRAM_FAILURE`, `CL_INVALID_BUILD_OPTIONS`.
    Build,
    /// clCompileProgram: `CL_COMPILE_PROGRAM_FAILURE`, `CL_INVALID_COMPILER_OPTIONS`.
    Compile,
    /// clLinkProgram: `CL_LINK_PROGRAM_FAILURE`, `CL_INVALID_LINKER_OPTIONS`.
    Link,
}

impl BuildStep {
    fn error(self, kind: BuildFailureKind) -> ClError {
        ClError(match (self, kind) {
            (BuildStep::Build, BuildFailureKind::InvalidOptions) => CL_INVALID_BUILD_OPTIONS,
            (BuildStep::Build, BuildFailureKind::CompileError) => CL_BUILD_PROGRAM_FAILURE,
            (BuildStep::Compile, BuildFailureKind::InvalidOptions) => CL_INVALID_COMPILER_OPTIONS,
            (BuildStep::Compile, BuildFailureKind::CompileError) => CL_COMPILE_PROGRAM_FAILURE,
            (BuildStep::Link, BuildFailureKind::InvalidOptions) => CL_INVALID_LINKER_OPTIONS,
            (BuildStep::Link, BuildFailureKind::CompileError) => CL_LINK_PROGRAM_FAILURE,
        })
    }
}

/// What a successful step produced.
enum Outcome {
    Executable(CompiledProgram),
    Object(BinaryKind, Vec<u8>, String),
}

/// Key of a specialised pipeline: kernel name, launch facts, `__local` argument sizes,
/// dispatch variant (persistent or not), bounds-check table entries (0: unchecked).
type PipelineKey = (String, LaunchSpec, Vec<(u32, u32)>, bool, u32);

/// The facts of a launch a pipeline is specialized on (the compiler's "Work-group size and
/// launch specialization constants").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchSpec {
    /// The work-group size of the pipeline's groups (`WorkgroupSize`), work-items.
    pub local: [u32; 3],
    /// The enqueued work-group size (`get_enqueued_local_size`; `local` but in the edge
    /// boxes of a non-uniform NDRange), work-items.
    pub enqueued: [u32; 3],
    /// The launch's global offset is 0 in every dimension.
    pub zero_offset: bool,
    /// Every dispatch of the pipeline pushes `group_offset` 0.
    pub zero_group_offset: bool,
}

impl LaunchSpec {
    /// The (spec id, value) pairs of these facts, work-group size first.
    fn entries(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = (0..3).map(|d| (d as u32, self.local[d])).collect();
        v.extend((0..3).map(|d| {
            (
                compiler::ENQUEUED_LOCAL_SIZE_SPEC_ID + d as u32,
                self.enqueued[d],
            )
        }));
        v.push((
            compiler::ZERO_GLOBAL_OFFSET_SPEC_ID,
            u32::from(self.zero_offset),
        ));
        v.push((
            compiler::ZERO_GROUP_OFFSET_SPEC_ID,
            u32::from(self.zero_group_offset),
        ));
        v
    }
}

/// Key of a kernel's shader module: kernel name, persistent variant, loop-guard variant,
/// bounds-check table entries (0: unchecked).
type ModuleKey = (String, bool, bool, u32);

/// A program object.
pub struct Program {
    header: Header,
    pub context: Arc<Context>,
    pub devices: Vec<Arc<Device>>,
    pub source: ProgramSource,
    /// One build state per device of `devices` (same order): OpenCL 3.0 clBuildProgram builds
    /// for the devices it names only, and the others keep their state.
    build: Mutex<Vec<BuildState>>,
    /// Kernel objects alive for this program (clBuildProgram fails while any exist).
    pub kernel_count: AtomicU32,
    modules: Mutex<HashMap<ModuleKey, Arc<ShaderModule>>>,
    pipelines: Mutex<HashMap<PipelineKey, Arc<Pipeline>>>,
    /// Specialization constant values of an IL program (clSetProgramSpecializationConstant),
    /// used by later builds and compiles.
    spec_values: Mutex<compiler::SpecValues>,
    /// The program's `__global` variable blocks (compiler::globals), one per Vulkan device
    /// and build, made at the first launch that needs one.
    globals: Mutex<HashMap<(usize, usize), Arc<Buffer>>>,
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
        fp64: d.has_fp64(),
        fp16: d.has_fp16(),
        int64_atomics: p.shader_int64_atomics && p.shader_shared_int64_atomics,
        shared_float32_atomics: p.shader_shared_float32_atomics,
        f64_rounding_by_floor: d.rounds_doubles_by_floor(),
        undef_as_null: d.defines_undefs(),
        max_push_constants: p.limits.max_push_constants_size,
        max_local_mem_bytes: p.limits.max_compute_shared_memory_size,
        max_work_group_size: p.limits.max_compute_work_group_invocations,
        subgroup_ops: d.subgroup_ops(),
        opencl_c_names: Some(
            d.extensions()
                .into_iter()
                .chain(super::image::image_extensions(d))
                .chain(d.opencl_c_features())
                .chain(super::image::image_features(d))
                .map(|(n, _)| n.to_string())
                .collect(),
        ),
        opencl_version: {
            let (major, minor) = super::version::device_version(d);
            major * 10 + minor
        },
    }
}

/// The device's identity for program-cache keys: vendor and device ID, driver version and
/// the driver's UUIDs.
pub fn device_key(d: &Device) -> Vec<u8> {
    let p = &d.phys;
    let mut k = Vec::new();
    k.extend_from_slice(&p.vendor_id.to_le_bytes());
    k.extend_from_slice(&p.device_id.to_le_bytes());
    k.extend_from_slice(&p.driver_version.to_le_bytes());
    k.extend_from_slice(&p.device_uuid);
    k.extend_from_slice(&p.driver_uuid);
    k.extend_from_slice(&p.pipeline_cache_uuid);
    k.extend_from_slice(p.driver_info.as_bytes());
    k
}

impl Program {
    /// A program of `source` for every device of `context` (or `devices`).
    pub fn new(context: Arc<Context>, devices: Vec<Arc<Device>>, source: ProgramSource) -> Program {
        // A program made from a binary has that binary's type (and, for objects and
        // libraries, can be linked at once); it still needs clBuildProgram for kernels.
        let (binary_type, object) = match &source {
            ProgramSource::Binary(b) => (
                b.kind.cl(),
                (b.kind != BinaryKind::Executable).then(|| Arc::new(b.payload.clone())),
            ),
            _ => (CL_PROGRAM_BINARY_TYPE_NONE as cl_program_binary_type, None),
        };
        let from_binary = matches!(&source, ProgramSource::Binary(_));
        Program {
            header: Header::new(Kind::Program),
            context,
            source,
            build: Mutex::new(vec![
                BuildState {
                    status: CL_BUILD_NONE,
                    options: String::new(),
                    log: String::new(),
                    binary_type,
                    compiled: None,
                    object,
                    arg_info: false,
                    // An object or library from a binary, linked as it is (OpenCL 3.0 5.10:
                    // a program from a binary supports non-uniform work-groups).
                    non_uniform: from_binary,
                };
                devices.len()
            ]),
            devices,
            kernel_count: AtomicU32::new(0),
            modules: Mutex::new(HashMap::new()),
            pipelines: Mutex::new(HashMap::new()),
            spec_values: Mutex::new(compiler::SpecValues::new()),
            globals: Mutex::new(HashMap::new()),
        }
    }

    /// The size in bytes that clSetProgramSpecializationConstant must be given for the
    /// specialization constant `spec_id` of this IL program (1 for a boolean, else the size of
    /// its type). Errors: `CL_INVALID_PROGRAM` when the program was not created from IL,
    /// `CL_INVALID_SPEC_ID` when the module has no specialization constant `spec_id` (also
    /// for a module that cannot be parsed).
    pub fn spec_constant_size(&self, spec_id: u32) -> ClResult<usize> {
        let ProgramSource::Il(il) = &self.source else {
            return Err(ClError(CL_INVALID_PROGRAM));
        };
        let constants = compiler::spec_constants(il).map_err(|_| ClError(CL_INVALID_SPEC_ID))?;
        constants
            .iter()
            .find(|c| c.id == spec_id)
            .map(|c| c.size)
            .ok_or(ClError(CL_INVALID_SPEC_ID))
    }

    /// clSetProgramSpecializationConstant (OpenCL 3.0 API 5.8.3): records `value` for the
    /// specialization constant `spec_id`; later clBuildProgram and clCompileProgram calls use
    /// it (a boolean is true for any nonzero byte). Errors: as
    /// [`Program::spec_constant_size`], and `CL_INVALID_VALUE` when `value`'s length is not
    /// that size.
    pub fn set_spec_constant(&self, spec_id: u32, value: &[u8]) -> ClResult<()> {
        if self.spec_constant_size(spec_id)? != value.len() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        self.spec_values
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(spec_id, value.to_vec());
        Ok(())
    }

    /// The specialization constant values set so far.
    fn spec_values(&self) -> compiler::SpecValues {
        self.spec_values
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The block of program-scope `__global` variables of build `compiled` on `device`
    /// (OpenCL C 3.0 section 6.8: their storage belongs to the program, is initialised once
    /// and persists across launches of its kernels); `None` for a program without such
    /// variables. Made and initialised at first use.
    /// Errors: `CL_OUT_OF_RESOURCES` when the memory cannot be allocated or the initialisers
    /// cannot be evaluated.
    pub fn global_block(
        &self,
        device: &Device,
        compiled: &Arc<CompiledProgram>,
    ) -> ClResult<Option<Arc<Buffer>>> {
        if !compiled.has_global_variables {
            return Ok(None);
        }
        let vk = device.vk()?;
        let key = (Arc::as_ptr(vk) as usize, Arc::as_ptr(compiled) as usize);
        let mut map = self.globals.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = map.get(&key) {
            return Ok(Some(b.clone()));
        }
        let g = compiler::program_globals(&compiled.opencl_spirv).map_err(|e| {
            tracing::error!("program-scope variables: {e}");
            ClError(CL_OUT_OF_RESOURCES)
        })?;
        let buf =
            Buffer::new(vk, g.size.max(8)).map_err(|e| refused("program-scope variables", e))?;
        let mut init = g.init;
        for (at, target) in g.relocations {
            let at = at as usize;
            if let Some(dst) = init.get_mut(at..at + 8) {
                dst.copy_from_slice(&(buf.address + target).to_le_bytes());
            }
        }
        buf.write_bytes(0, &init);
        let buf = Arc::new(buf);
        map.insert(key, buf.clone());
        Ok(Some(buf))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<BuildState>> {
        self.build.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The index of `device` in `devices`, if it is one of the program's devices.
    pub fn device_index(&self, device: &Device) -> Option<usize> {
        self.devices
            .iter()
            .position(|d| std::ptr::eq(Arc::as_ptr(d), device))
    }

    /// A copy of the build state for `device` (clGetProgramBuildInfo). Errors:
    /// `CL_INVALID_DEVICE` if `device` is not one of the program's devices.
    pub fn build_state(&self, device: &Device) -> ClResult<BuildState> {
        let i = self
            .device_index(device)
            .ok_or(ClError(CL_INVALID_DEVICE))?;
        Ok(self.lock()[i].clone())
    }

    /// The build options of the executable that [`Program::compiled`] returns ("" when
    /// there is none).
    pub fn executable_options(&self) -> String {
        self.lock()
            .iter()
            .find(|s| s.compiled.is_some())
            .map(|s| s.options.clone())
            .unwrap_or_default()
    }

    /// Whether kernels of the executable that [`Program::compiled`] returns may run
    /// non-uniform work-groups (see [`BuildState::non_uniform`]); false when there is none.
    pub fn executable_non_uniform(&self) -> bool {
        self.lock()
            .iter()
            .find(|s| s.compiled.is_some())
            .is_some_and(|s| s.non_uniform)
    }

    /// Whether the executable that [`Program::compiled`] returns has argument information
    /// (see [`BuildState::arg_info`]).
    pub fn executable_arg_info(&self) -> bool {
        self.lock()
            .iter()
            .find(|s| s.compiled.is_some())
            .is_some_and(|s| s.arg_info)
    }

    /// clBuildProgram: compiles (or, for a compiled-object or library binary, links) for the
    /// devices `targets` (indices into `devices`; one build serves all of them, the other
    /// devices keep their state). Errors: `CL_INVALID_OPERATION` while kernels exist or for a
    /// program made by clLinkProgram, `CL_COMPILER_NOT_AVAILABLE`,
    /// `CL_INVALID_BUILD_OPTIONS`, `CL_BUILD_PROGRAM_FAILURE` (the log says why).
    pub fn build(&self, targets: &[usize], options: &str) -> ClResult<()> {
        if matches!(self.source, ProgramSource::Linked) {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // An executable binary is rebuilt from its structured IR: no external tool runs.
        let needs_tools =
            !matches!(&self.source, ProgramSource::Binary(b) if b.kind == BinaryKind::Executable);
        self.run_step(
            BuildStep::Build,
            targets,
            options,
            needs_tools,
            |env| match &self.source {
                ProgramSource::Source(src) => {
                    compiler::build_source(env, src, options).map(Outcome::Executable)
                }
                ProgramSource::Il(il) => compiler::build_il(env, il, options, &self.spec_values())
                    .map(Outcome::Executable),
                ProgramSource::Binary(b) if b.kind == BinaryKind::Executable => {
                    compiler::build_binary(env, &b.payload, options).map(Outcome::Executable)
                }
                ProgramSource::Binary(b) => {
                    compiler::check_options(options, env.caps)?;
                    compiler::link_executable(env, &[&b.payload], "").map(Outcome::Executable)
                }
                ProgramSource::Linked => Err(BuildFailure::compile("not buildable")),
            },
        )
    }

    /// clCompileProgram: compiles source (with embedded `headers`, (include name, source))
    /// or IL to a compiled object. Errors: `CL_INVALID_OPERATION` while kernels exist or when
    /// the program has neither source nor IL, `CL_COMPILER_NOT_AVAILABLE`,
    /// `CL_INVALID_COMPILER_OPTIONS`, `CL_COMPILE_PROGRAM_FAILURE`.
    /// `targets`: indices into `devices`, as for [`Program::build`].
    pub fn compile(
        &self,
        targets: &[usize],
        options: &str,
        headers: &[(String, String)],
    ) -> ClResult<()> {
        // CL_INVALID_OPERATION if program has no source or IL available.
        if !matches!(self.source, ProgramSource::Source(_) | ProgramSource::Il(_)) {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        self.run_step(BuildStep::Compile, targets, options, true, |env| {
            let o = match &self.source {
                ProgramSource::Source(src) => compiler::compile_object(env, src, headers, options),
                ProgramSource::Il(il) => compiler::il_object(env, il, options, &self.spec_values()),
                _ => Err(BuildFailure::compile("no source")),
            }?;
            Ok(Outcome::Object(
                BinaryKind::CompiledObject,
                o.bitcode,
                o.log,
            ))
        })
    }

    /// clLinkProgram into this (new, [`ProgramSource::Linked`]) program: links the compiled
    /// objects and libraries `inputs` into an executable, or a library with
    /// `-create-library`. Errors: `CL_INVALID_LINKER_OPTIONS`, `CL_COMPILER_NOT_AVAILABLE`,
    /// `CL_LINK_PROGRAM_FAILURE` (the log says why); the program records the failure.
    pub fn link(&self, options: &str, inputs: &[Arc<Program>]) -> ClResult<()> {
        let objects: Vec<Arc<Vec<u8>>> = inputs.iter().filter_map(|p| p.object()).collect();
        let sources: String = inputs
            .iter()
            .filter_map(|p| match &p.source {
                ProgramSource::Source(s) => Some(s.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let inputs_arg_info = inputs
            .iter()
            .any(|p| p.lock().iter().any(|s| s.object.is_some() && s.arg_info));
        // clEnqueueNDRangeKernel: a linked program supports non-uniform work-groups when all
        // its input programs do.
        let inputs_non_uniform = inputs.iter().all(|p| {
            p.lock()
                .iter()
                .filter(|s| s.object.is_some())
                .all(|s| s.non_uniform)
        });
        let all: Vec<usize> = (0..self.devices.len()).collect();
        let linked = self.run_step(BuildStep::Link, &all, options, true, |env| {
            let o = compiler::parse_link_options(options).map_err(BuildFailure::options)?;
            let refs: Vec<&[u8]> = objects.iter().map(|o| o.as_slice()).collect();
            if o.create_library {
                let lib = compiler::link_library(env, &refs)?;
                Ok(Outcome::Object(BinaryKind::Library, lib, String::new()))
            } else {
                compiler::link_executable(env, &refs, &sources).map(Outcome::Executable)
            }
        });
        if linked.is_ok() {
            for s in self.lock().iter_mut() {
                s.arg_info |= inputs_arg_info;
                s.non_uniform = inputs_non_uniform;
            }
        }
        linked
    }

    /// Runs one build step (`f`) for the devices `targets` (indices into `devices`, not
    /// empty) and the program's devices partitioned from them (sub-devices, at any depth),
    /// with their build states kept as the API requires: in progress, then success with the
    /// result or error with the log. The first target's capabilities decide. Without the
    /// external tools a step that `needs_tools` fails with `CL_COMPILER_NOT_AVAILABLE`; one
    /// that does not runs with [`compiler::Tools::absent`].
    fn run_step(
        &self,
        step: BuildStep,
        targets: &[usize],
        options: &str,
        needs_tools: bool,
        f: impl FnOnce(&BuildEnv) -> Result<Outcome, BuildFailure>,
    ) -> ClResult<()> {
        // CL_INVALID_OPERATION if there are kernel objects attached to program.
        if self.kernel_count.load(Ordering::Acquire) > 0 {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // A build for a device also serves the program's devices partitioned from it (its
        // sub-devices run the same code; the CTS's device_partition builds for the parent
        // device and then expects CL_BUILD_SUCCESS on the sub-devices of the context).
        let targets: Vec<usize> = (0..self.devices.len())
            .filter(|&k| {
                targets.contains(&k) || {
                    let mut up = self.devices[k].parent.clone();
                    let mut found = false;
                    while let Some(p) = up {
                        if targets.iter().any(|&t| Arc::ptr_eq(&self.devices[t], &p)) {
                            found = true;
                            break;
                        }
                        up = p.parent.clone();
                    }
                    found
                }
            })
            .collect();
        let targets = targets.as_slice();
        let first = &self.devices[targets.first().copied().unwrap_or(0)];
        let caps = device_caps(first);
        let key = device_key(first);
        {
            let mut all = self.lock();
            // CL_INVALID_OPERATION if the build of a program executable for any of the devices
            // listed in device_list by a previous call to clBuildProgram for program has not
            // completed (a build from another thread at the same time: checked and marked
            // under one lock, so two builds of one program never interleave their states).
            if targets
                .iter()
                .any(|&i| all[i].status == CL_BUILD_IN_PROGRESS)
            {
                return Err(ClError(CL_INVALID_OPERATION));
            }
            for &i in targets {
                all[i].status = CL_BUILD_IN_PROGRESS;
                all[i].options = options.to_string();
            }
        }
        // A panic in the step (caught at the API boundary) must not leave the states in
        // progress for ever: they become errors.
        struct InProgress<'a>(&'a Program, &'a [usize], bool);
        impl Drop for InProgress<'_> {
            fn drop(&mut self) {
                if !self.2 {
                    let mut all = self.0.lock();
                    for &i in self.1 {
                        if all[i].status == CL_BUILD_IN_PROGRESS {
                            all[i].status = CL_BUILD_ERROR;
                        }
                    }
                }
            }
        }
        let mut guard = InProgress(self, targets, false);
        let tools = match compiler::find_tools() {
            Ok(t) => t,
            Err(_) if !needs_tools => compiler::Tools::absent(),
            Err(e) => {
                let mut all = self.lock();
                for &i in targets {
                    all[i].status = CL_BUILD_ERROR;
                    all[i].log = e.to_string();
                }
                return Err(ClError(CL_COMPILER_NOT_AVAILABLE));
            }
        };
        let env = BuildEnv {
            tools: &tools,
            caps: &caps,
            device_key: &key,
            cache: crate::util::config::config().cache.as_ref(),
        };
        let started = std::time::Instant::now();
        let result = f(&env);
        match &result {
            Ok(_) => tracing::debug!(
                "{step:?} with options `{options}`: done in {:.2} s",
                started.elapsed().as_secs_f64()
            ),
            Err(e) => tracing::debug!(
                "{step:?} with options `{options}`: failed after {:.2} s: {}",
                started.elapsed().as_secs_f64(),
                e.log
            ),
        }
        self.modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let arg_info = options
            .split_whitespace()
            .any(|o| o == "-cl-kernel-arg-info");
        let non_uniform =
            supports_non_uniform(matches!(self.source, ProgramSource::Source(_)), options);
        let mut all = self.lock();
        let (state, r) = match result {
            Ok(Outcome::Executable(p)) => (
                BuildState {
                    status: CL_BUILD_SUCCESS,
                    options: options.to_string(),
                    log: p.build_log.clone(),
                    binary_type: BinaryKind::Executable.cl(),
                    compiled: Some(Arc::new(p)),
                    object: None,
                    arg_info,
                    non_uniform,
                },
                Ok(()),
            ),
            Ok(Outcome::Object(kind, bitcode, log)) => (
                BuildState {
                    status: CL_BUILD_SUCCESS,
                    options: options.to_string(),
                    log,
                    binary_type: kind.cl(),
                    compiled: None,
                    object: Some(Arc::new(bitcode)),
                    arg_info,
                    non_uniform,
                },
                Ok(()),
            ),
            Err(f) => (
                BuildState {
                    status: CL_BUILD_ERROR,
                    options: options.to_string(),
                    log: f.log,
                    binary_type: CL_PROGRAM_BINARY_TYPE_NONE as cl_program_binary_type,
                    compiled: None,
                    object: None,
                    arg_info,
                    non_uniform,
                },
                Err(step.error(f.kind)),
            ),
        };
        for &i in targets {
            all[i] = state.clone();
        }
        guard.2 = true;
        r
    }

    /// `CL_PROGRAM_BINARIES` of this program, one per device of `devices`: vkcl's container
    /// of that device's executable, compiled object or library; empty where there is none.
    pub fn binaries(&self) -> Vec<Vec<u8>> {
        self.lock().iter().map(Self::binary_of).collect()
    }

    fn binary_of(st: &BuildState) -> Vec<u8> {
        if let Some(o) = &st.object {
            let kind = if st.binary_type == BinaryKind::Library.cl() {
                BinaryKind::Library
            } else {
                BinaryKind::CompiledObject
            };
            return super::binary::encode(kind, o);
        }
        match &st.compiled {
            Some(c) => {
                let bytes: Vec<u8> = c
                    .opencl_spirv
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .collect();
                super::binary::encode(BinaryKind::Executable, &bytes)
            }
            None => Vec::new(),
        }
    }

    /// The compiled object or library of the first device that has one.
    fn object(&self) -> Option<Arc<Vec<u8>>> {
        self.lock().iter().find_map(|s| s.object.clone())
    }

    /// Whether this program can be an input of clLinkProgram (a successfully compiled
    /// object or library for some device, or a program made from one's binary).
    pub fn is_linkable(&self) -> bool {
        self.object().is_some()
    }

    /// The executable of the first device that has one (clCreateKernel needs one for at
    /// least one device). Errors: `CL_INVALID_PROGRAM_EXECUTABLE` if no device has a
    /// successfully built executable.
    pub fn compiled(&self) -> ClResult<Arc<CompiledProgram>> {
        self.lock()
            .iter()
            .find_map(|s| s.compiled.clone())
            .ok_or(ClError(CL_INVALID_PROGRAM_EXECUTABLE))
    }

    /// Whether `device` (one of the program's devices) has a successfully built executable:
    /// kernels of this program can run on it. False for any other device.
    pub fn has_executable_for(&self, device: &Device) -> bool {
        self.device_index(device)
            .is_some_and(|i| self.lock()[i].compiled.is_some())
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

    /// The pipeline of `kernel` for the launch facts `launch` (work-group size, enqueued
    /// size, zero offsets) and `__local` argument sizes
    /// `locals` (spec-constant ID, element count), created at first use; `persistent` picks
    /// the compute-unit-limited variant (see the compiler's "Persistent variant"); on a
    /// device with a loop limit ([`Device::loop_limit`]) the module is the loop-guard variant;
    /// under `VKCL_BOUNDS_CHECK` it is the bounds-check variant checking `table_entries`
    /// entries of the launch's range table (see `Kernel::encode`).
    /// Errors: `CL_OUT_OF_RESOURCES` when Vulkan refuses the module or pipeline or the
    /// persistent or loop-guard variant cannot be made.
    pub fn pipeline(
        &self,
        device: &Device,
        kernel: &KernelInfo,
        launch: LaunchSpec,
        locals: Vec<(u32, u32)>,
        persistent: bool,
        table_entries: u32,
    ) -> ClResult<Arc<Pipeline>> {
        let check = crate::util::config::config().bounds_check;
        let ranges = if check { table_entries } else { 0 };
        let key = (kernel.name.clone(), launch, locals, persistent, ranges);
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
            let guard = device.loop_limit().is_some();
            let mkey = (kernel.name.clone(), persistent, guard, ranges);
            match modules.get(&mkey) {
                Some(m) => m.clone(),
                None => {
                    let mut variant = None;
                    if check {
                        variant = Some(
                            compiler::bounds_check_variant(&kernel.spirv, ranges).map_err(|e| {
                                tracing::error!("bounds-check variant of {}: {e}", kernel.name);
                                ClError(CL_OUT_OF_RESOURCES)
                            })?,
                        );
                    }
                    if persistent {
                        let from = variant.as_deref().unwrap_or(&kernel.spirv);
                        variant = Some(compiler::persistent_variant(from).map_err(|e| {
                            tracing::error!("persistent variant of {}: {e}", kernel.name);
                            ClError(CL_OUT_OF_RESOURCES)
                        })?);
                    }
                    if guard {
                        let from = variant.as_deref().unwrap_or(&kernel.spirv);
                        variant = Some(compiler::loop_guard_variant(from).map_err(|e| {
                            tracing::error!("loop-guard variant of {}: {e}", kernel.name);
                            ClError(CL_OUT_OF_RESOURCES)
                        })?);
                    }
                    let words = variant.as_deref().unwrap_or(&kernel.spirv);
                    let m = Arc::new(ShaderModule::new(vk, words).map_err(|e| {
                        refused(format_args!("shader module of {}", kernel.name), e)
                    })?);
                    modules.insert(mkey, m.clone());
                    m
                }
            }
        };
        let mut spec = launch.entries();
        spec.extend(key.2.iter().copied());
        // Set 0: a binding per image and sampler argument, at its index (docs/images.md).
        let bindings: Vec<_> = kernel
            .args
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                matches!(
                    a.kind,
                    compiler::ArgKind::Image | compiler::ArgKind::Sampler
                )
            })
            .map(|(i, a)| (i as u32, super::kernel_image::binding_kind(a)))
            .chain(
                compiler::inline_samplers(kernel)
                    .into_iter()
                    .map(|s| (s.0, crate::backend::vulkan::pipeline::BindingKind::Sampler)),
            )
            .collect();
        let p = Arc::new(
            Pipeline::new(vk, &module, &spec, &bindings)
                .map_err(|e| refused(format_args!("pipeline of {}", kernel.name), e))?,
        );
        self.pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, p.clone());
        Ok(p)
    }
}
