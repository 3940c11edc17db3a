//! OpenCL C -> Kernel SPIR-V -> Vulkan SPIR-V. Pure functions of bytes in, bytes out.
//!
//! Placeholder with the public interface of the compiler under construction (branch
//! `compiler`): every build fails with CL_COMPILER_NOT_AVAILABLE's reason until it lands.

/// Device features that change code generation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceCaps {
    pub int8_storage: bool,
    pub int16_storage: bool,
    pub fp64: bool,
    pub fp16: bool,
    pub int64_atomics: bool,
    pub max_push_constants: u32,
    pub max_local_mem_bytes: u32,
}

/// The tools could not be found.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CompilerError {
    #[error("{0}")]
    NotAvailable(String),
}

/// Why a build failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildFailureKind {
    InvalidOptions,
    CompileError,
}

/// A failed build and its log.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("{log}")]
pub struct BuildFailure {
    pub kind: BuildFailureKind,
    pub log: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressQualifier {
    Global,
    Constant,
    Local,
    Private,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessQualifier {
    None,
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeQualifiers {
    pub is_const: bool,
    pub is_restrict: bool,
    pub is_volatile: bool,
    pub is_pipe: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    Buffer,
    Local { spec_id: u32, elem_size: u32 },
    Value,
    Sampler,
    Image,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArgInfo {
    pub name: String,
    pub type_name: String,
    pub address_qualifier: AddressQualifier,
    pub access_qualifier: AccessQualifier,
    pub type_qualifier: TypeQualifiers,
    pub kind: ArgKind,
    pub offset: u32,
    pub size: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    pub args: Vec<KernelArgInfo>,
    pub args_size: u32,
    pub reqd_work_group_size: Option<[u32; 3]>,
    pub work_group_size_hint: Option<[u32; 3]>,
    pub vec_type_hint: Option<String>,
    pub attributes: String,
    pub static_local_mem_bytes: u64,
    pub private_mem_bytes: u64,
    pub spirv: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct CompiledProgram {
    pub build_log: String,
    pub kernels: Vec<KernelInfo>,
    pub opencl_spirv: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tools;

pub fn find_tools() -> Result<Tools, CompilerError> {
    Err(CompilerError::NotAvailable("the OpenCL C compiler has not landed yet".into()))
}

pub fn compile_source(_: &Tools, _: &str, _: &str, _: &DeviceCaps) -> Result<CompiledProgram, BuildFailure> {
    Err(BuildFailure { kind: BuildFailureKind::CompileError, log: "compiler not available".into() })
}

pub fn compile_il(_: &[u8], _: &str, _: &DeviceCaps) -> Result<CompiledProgram, BuildFailure> {
    Err(BuildFailure { kind: BuildFailureKind::CompileError, log: "compiler not available".into() })
}
