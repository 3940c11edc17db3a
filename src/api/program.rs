//! Program entry points (OpenCL 3.0 section 5.8).

use super::info::InfoOut;
use super::{slice_from, status, write_opt};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::error::{ClError, ClResult};
use crate::core::object::{self, handle_of, lookup, register, ClObject};
use crate::core::program::{Program, ProgramSource};
use opencl_sys::*;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// `pfn_notify` of clBuildProgram, clCompileProgram and clLinkProgram.
pub type BuildNotify = unsafe extern "C" fn(cl_program, *mut c_void);

/// Magic number of vkcl's program binaries (`CL_PROGRAM_BINARIES`).
const BINARY_MAGIC: &[u8; 8] = b"VKCLBIN\0";
/// Version of the binary container; a binary of another version is `CL_INVALID_BINARY`.
const BINARY_VERSION: u32 = 1;

/// vkcl's program binary: magic, container version, then the program's OpenCL SPIR-V words
/// (little-endian). Loading one goes through the IL path of the compiler.
fn encode_binary(spirv: &[u32]) -> Vec<u8> {
    let mut b = BINARY_MAGIC.to_vec();
    b.extend_from_slice(&BINARY_VERSION.to_le_bytes());
    for w in spirv {
        b.extend_from_slice(&w.to_le_bytes());
    }
    b
}

/// The SPIR-V inside a vkcl binary. Errors: `CL_INVALID_BINARY` for anything else.
fn decode_binary(b: &[u8]) -> ClResult<Vec<u8>> {
    if b.len() < 12 + 20
        || &b[..8] != BINARY_MAGIC
        || b[8..12] != BINARY_VERSION.to_le_bytes()
        || !(b.len() - 12).is_multiple_of(4)
    {
        return Err(ClError(CL_INVALID_BINARY));
    }
    if b[12..16] != 0x0723_0203u32.to_le_bytes() {
        return Err(ClError(CL_INVALID_BINARY));
    }
    Ok(b[12..].to_vec())
}

/// Reads an optional options string. NULL is "".
///
/// # Safety
/// `p` must be NULL or NUL-terminated.
unsafe fn options(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: NUL-terminated per the caller.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Checks a device list against a program's devices. Errors: `CL_INVALID_VALUE` (NULL list
/// with num > 0 or a list with num 0), `CL_INVALID_DEVICE` (a device not of the program).
///
/// # Safety
/// `list` must be NULL or hold `num` handles.
unsafe fn check_devices(
    devices: &[Arc<Device>],
    num: cl_uint,
    list: *const cl_device_id,
) -> ClResult<()> {
    if (list.is_null() && num > 0) || (!list.is_null() && num == 0) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: forwarded.
    for &h in unsafe { slice_from(list, num as usize) } {
        let d = lookup::<Device>(h as *const c_void)?;
        if !devices.iter().any(|x| Arc::ptr_eq(x, &d)) {
            return Err(ClError(CL_INVALID_DEVICE));
        }
    }
    Ok(())
}

fn new_program(c: Arc<Context>, source: ProgramSource) -> *mut c_void {
    let devices = c.devices.clone();
    handle_of(&register(Program::new(c, devices, source)))
}

/// clCreateProgramWithSource. Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE` (count 0,
/// NULL strings or a NULL entry).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateProgramWithSource(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    super::object(errcode_ret, || {
        let c = lookup::<Context>(context as *const c_void)?;
        // CL_INVALID_VALUE if count is zero or if strings or any entry in strings is NULL.
        if count == 0 || strings.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let mut src = Vec::new();
        for i in 0..count as usize {
            // SAFETY: strings holds count pointers.
            let s = unsafe { *strings.add(i) };
            if s.is_null() {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // SAFETY: lengths is NULL or holds count entries.
            let len = if lengths.is_null() {
                0
            } else {
                unsafe { *lengths.add(i) }
            };
            if len == 0 {
                // SAFETY: a zero length means a NUL-terminated string.
                src.extend_from_slice(unsafe { CStr::from_ptr(s) }.to_bytes());
            } else {
                // SAFETY: the string holds len bytes.
                src.extend_from_slice(unsafe { std::slice::from_raw_parts(s as *const u8, len) });
            }
        }
        Ok(new_program(
            c,
            ProgramSource::Source(String::from_utf8_lossy(&src).into_owned()),
        ))
    })
}

/// clCreateProgramWithIL. Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE` (NULL `il`, length
/// 0, or not a SPIR-V module).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateProgramWithIL(
    context: cl_context,
    il: *const c_void,
    length: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    super::object(errcode_ret, || {
        let c = lookup::<Context>(context as *const c_void)?;
        // CL_INVALID_OPERATION if no devices in context support intermediate language programs.
        if !crate::compiler_available() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        if il.is_null() || length < 20 {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: il holds length bytes.
        let bytes = unsafe { std::slice::from_raw_parts(il as *const u8, length) }.to_vec();
        let magic = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if magic != 0x0723_0203 && magic.swap_bytes() != 0x0723_0203 {
            return Err(ClError(CL_INVALID_VALUE));
        }
        Ok(new_program(c, ProgramSource::Il(bytes)))
    })
}

/// clCreateProgramWithBinary: accepts vkcl's own binaries (from `CL_PROGRAM_BINARIES`).
/// Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE` (no devices, NULL lengths or binaries, a
/// zero length or NULL entry), `CL_INVALID_DEVICE` (a device not of the context),
/// `CL_INVALID_BINARY` (not a vkcl binary of this version; `binary_status` says which).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateProgramWithBinary(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    super::object(errcode_ret, || {
        let c = lookup::<Context>(context as *const c_void)?;
        if num_devices == 0 || device_list.is_null() || lengths.is_null() || binaries.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: device_list holds num_devices handles.
        let devices = unsafe {
            object::lookup_list::<Device>(device_list as *const *mut c_void, num_devices as usize)
        }?;
        if devices.iter().any(|d| !c.has_device(d)) {
            return Err(ClError(CL_INVALID_DEVICE));
        }
        let mut il = None;
        let mut failed = false;
        for i in 0..num_devices as usize {
            // SAFETY: lengths and binaries hold num_devices entries.
            let (len, ptr) = unsafe { (*lengths.add(i), *binaries.add(i)) };
            if len == 0 || ptr.is_null() {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // SAFETY: the binary holds len bytes.
            let r = decode_binary(unsafe { std::slice::from_raw_parts(ptr, len) });
            if !binary_status.is_null() {
                // SAFETY: binary_status holds num_devices entries when not NULL.
                unsafe {
                    binary_status.add(i).write(if r.is_ok() {
                        CL_SUCCESS
                    } else {
                        CL_INVALID_BINARY
                    })
                };
            }
            match r {
                Ok(b) => il = Some(b),
                Err(_) => failed = true,
            }
        }
        if failed {
            return Err(ClError(CL_INVALID_BINARY));
        }
        let il = il.ok_or(ClError(CL_INVALID_BINARY))?;
        Ok(handle_of(&register(Program::new(
            c,
            devices,
            ProgramSource::Il(il),
        ))))
    })
}

/// clCreateProgramWithBuiltInKernels: vkcl has no built-in kernels.
/// Errors: `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE` (always: no name is supported).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateProgramWithBuiltInKernels(
    context: cl_context,
    _num_devices: cl_uint,
    _device_list: *const cl_device_id,
    _kernel_names: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_program {
    super::object(errcode_ret, || {
        lookup::<Context>(context as *const c_void)?;
        Err(ClError(CL_INVALID_VALUE))
    })
}

/// clRetainProgram. Errors: `CL_INVALID_PROGRAM`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainProgram(program: cl_program) -> cl_int {
    status(|| object::retain::<Program>(program as *const c_void))
}

/// clReleaseProgram. Errors: `CL_INVALID_PROGRAM`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseProgram(program: cl_program) -> cl_int {
    status(|| object::release::<Program>(program as *const c_void).map(|_| ()))
}

fn build_common(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    opts: *const c_char,
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
) -> ClResult<()> {
    let p = lookup::<Program>(program as *const c_void)?;
    // SAFETY: forwarded.
    unsafe { check_devices(&p.devices, num_devices, device_list) }?;
    // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
    if pfn_notify.is_none() && !user_data.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: NUL-terminated per the API.
    let o = unsafe { options(opts) };
    let r = p.build(&o);
    if let Some(f) = pfn_notify {
        // SAFETY: the application's callback for this program.
        unsafe { f(program, user_data) };
    }
    r
}

/// clBuildProgram: compiles synchronously (then calls `pfn_notify`). Errors:
/// `CL_INVALID_PROGRAM`, `CL_INVALID_VALUE`, `CL_INVALID_DEVICE`, `CL_INVALID_OPERATION`
/// (kernels attached), `CL_COMPILER_NOT_AVAILABLE`, `CL_INVALID_BUILD_OPTIONS`,
/// `CL_BUILD_PROGRAM_FAILURE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clBuildProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    opts: *const c_char,
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        build_common(
            program,
            num_devices,
            device_list,
            opts,
            pfn_notify,
            user_data,
        )
    })
}

/// clCompileProgram: compiles the program like clBuildProgram (separate compilation and
/// embedded headers come with the compiler issue). Errors as clBuildProgram, with
/// `CL_COMPILE_PROGRAM_FAILURE` and `CL_INVALID_COMPILER_OPTIONS`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCompileProgram(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    opts: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
) -> cl_int {
    status(|| {
        // CL_INVALID_VALUE if num_input_headers is 0 and header_include_names or input_headers
        // are not NULL, or if num_input_headers is not 0 and either is NULL.
        if (num_input_headers == 0) != (input_headers.is_null() && header_include_names.is_null())
            || (num_input_headers > 0
                && (input_headers.is_null() || header_include_names.is_null()))
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        build_common(
            program,
            num_devices,
            device_list,
            opts,
            pfn_notify,
            user_data,
        )
        .map_err(|e| match e.0 {
            CL_BUILD_PROGRAM_FAILURE => ClError(CL_COMPILE_PROGRAM_FAILURE),
            CL_INVALID_BUILD_OPTIONS => ClError(CL_INVALID_COMPILER_OPTIONS),
            _ => e,
        })?;
        let p = lookup::<Program>(program as *const c_void)?;
        p.build
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .binary_type = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type;
        Ok(())
    })
}

/// clLinkProgram: links one compiled program into an executable (several inputs come with
/// the compiler issue and give `CL_LINK_PROGRAM_FAILURE` for now). Errors:
/// `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE`, `CL_INVALID_PROGRAM`, `CL_INVALID_DEVICE`,
/// `CL_INVALID_LINKER_OPTIONS`, `CL_LINK_PROGRAM_FAILURE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clLinkProgram(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    opts: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: Option<BuildNotify>,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    super::object(errcode_ret, || {
        let c = lookup::<Context>(context as *const c_void)?;
        // SAFETY: forwarded.
        unsafe { check_devices(&c.devices, num_devices, device_list) }?;
        if num_input_programs == 0
            || input_programs.is_null()
            || (pfn_notify.is_none() && !user_data.is_null())
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: input_programs holds num_input_programs handles.
        let inputs = unsafe {
            object::lookup_list::<Program>(
                input_programs as *const *mut c_void,
                num_input_programs as usize,
            )
        }?;
        if inputs.len() != 1 {
            return Err(ClError(CL_LINK_PROGRAM_FAILURE));
        }
        let spirv = inputs[0]
            .compiled()
            .map_err(|_| ClError(CL_INVALID_PROGRAM))?
            .opencl_spirv
            .clone();
        let il: Vec<u8> = spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
        let p = register(Program::new(
            c,
            inputs[0].devices.clone(),
            ProgramSource::Il(il),
        ));
        // SAFETY: NUL-terminated per the API.
        let o = unsafe { options(opts) };
        let r = p.build(&o);
        if let Some(f) = pfn_notify {
            // SAFETY: the application's callback.
            unsafe { f(handle_of(&p), user_data) };
        }
        r.map_err(|e| match e.0 {
            CL_BUILD_PROGRAM_FAILURE => ClError(CL_LINK_PROGRAM_FAILURE),
            CL_INVALID_BUILD_OPTIONS => ClError(CL_INVALID_LINKER_OPTIONS),
            _ => e,
        })?;
        Ok(handle_of(&p))
    })
}

/// clUnloadCompiler (OpenCL 1.1): a hint; always succeeds.
pub extern "C" fn clUnloadCompiler() -> cl_int {
    CL_SUCCESS
}

/// clUnloadPlatformCompiler: a hint. Errors: `CL_INVALID_PLATFORM`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clUnloadPlatformCompiler(platform: cl_platform_id) -> cl_int {
    status(|| {
        lookup::<crate::core::platform::Platform>(platform as *const c_void)?;
        Ok(())
    })
}

/// clSetProgramReleaseCallback (deprecated in 3.0): no program-scope global destructors exist.
/// Errors: `CL_INVALID_PROGRAM`, `CL_INVALID_OPERATION`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clSetProgramReleaseCallback(
    program: cl_program,
    _pfn_notify: Option<BuildNotify>,
    _user_data: *mut c_void,
) -> cl_int {
    status(|| {
        lookup::<Program>(program as *const c_void)?;
        Err(ClError(CL_INVALID_OPERATION))
    })
}

/// clSetProgramSpecializationConstant: specialization constants of SPIR-V programs are not
/// supported yet. Errors: `CL_INVALID_PROGRAM`, `CL_INVALID_OPERATION` (not created from IL),
/// `CL_INVALID_SPEC_ID`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clSetProgramSpecializationConstant(
    program: cl_program,
    _spec_id: cl_uint,
    _spec_size: usize,
    _spec_value: *const c_void,
) -> cl_int {
    status(|| {
        let p = lookup::<Program>(program as *const c_void)?;
        match p.source {
            ProgramSource::Il(_) => Err(ClError(CL_INVALID_SPEC_ID)),
            ProgramSource::Source(_) => Err(ClError(CL_INVALID_OPERATION)),
        }
    })
}

/// clGetProgramInfo. Errors: `CL_INVALID_PROGRAM`, `CL_INVALID_VALUE`,
/// `CL_INVALID_PROGRAM_EXECUTABLE` (kernel queries before a successful build).
///
/// # Safety
/// Pointers as the OpenCL API requires (CL_PROGRAM_BINARIES: an array of pointers).
pub unsafe extern "C" fn clGetProgramInfo(
    program: cl_program,
    param_name: cl_program_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let p = lookup::<Program>(program as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        let binary = || -> Vec<u8> {
            p.build
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .compiled
                .as_ref()
                .map_or(Vec::new(), |c| encode_binary(&c.opencl_spirv))
        };
        match param_name {
            CL_PROGRAM_REFERENCE_COUNT => out.scalar(p.header().ref_count()),
            CL_PROGRAM_CONTEXT => out.scalar(handle_of(&p.context)),
            CL_PROGRAM_NUM_DEVICES => out.scalar(p.devices.len() as cl_uint),
            CL_PROGRAM_DEVICES => out.slice(&p.devices.iter().map(handle_of).collect::<Vec<_>>()),
            CL_PROGRAM_SOURCE => match &p.source {
                ProgramSource::Source(s) => out.string(s),
                ProgramSource::Il(_) => out.string(""),
            },
            CL_PROGRAM_IL => match &p.source {
                ProgramSource::Il(b) => out.bytes(b),
                ProgramSource::Source(_) => out.bytes(&[]),
            },
            CL_PROGRAM_BINARY_SIZES => {
                let n = binary().len();
                out.slice(&vec![n; p.devices.len()])
            }
            CL_PROGRAM_BINARIES => {
                let b = binary();
                let n = p.devices.len();
                if !value.is_null() {
                    if size < n * std::mem::size_of::<*mut u8>() {
                        return Err(ClError(CL_INVALID_VALUE));
                    }
                    for i in 0..n {
                        // SAFETY: value holds n pointers; each non-NULL one points to a buffer
                        // of CL_PROGRAM_BINARY_SIZES bytes per the API.
                        unsafe {
                            let dst = *(value as *const *mut u8).add(i);
                            if !dst.is_null() {
                                std::ptr::copy_nonoverlapping(b.as_ptr(), dst, b.len());
                            }
                        }
                    }
                }
                // SAFETY: NULL or valid.
                unsafe { write_opt(size_ret, n * std::mem::size_of::<*mut u8>()) };
                Ok(())
            }
            CL_PROGRAM_NUM_KERNELS => out.scalar(p.compiled()?.kernels.len()),
            CL_PROGRAM_KERNEL_NAMES => {
                let names: Vec<String> = p
                    .compiled()?
                    .kernels
                    .iter()
                    .map(|k| k.name.clone())
                    .collect();
                out.string(&names.join(";"))
            }
            CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT | CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT => {
                out.scalar(CL_FALSE)
            }
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}

/// clGetProgramBuildInfo. Errors: `CL_INVALID_PROGRAM`, `CL_INVALID_DEVICE` (not a device of
/// the program), `CL_INVALID_VALUE`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetProgramBuildInfo(
    program: cl_program,
    device: cl_device_id,
    param_name: cl_program_build_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let p = lookup::<Program>(program as *const c_void)?;
        let d = lookup::<Device>(device as *const c_void)?;
        if !p.devices.iter().any(|x| Arc::ptr_eq(x, &d)) {
            return Err(ClError(CL_INVALID_DEVICE));
        }
        let st = p.build.lock().unwrap_or_else(|e| e.into_inner());
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_PROGRAM_BUILD_STATUS => out.scalar(st.status),
            CL_PROGRAM_BUILD_OPTIONS => out.string(&st.options),
            CL_PROGRAM_BUILD_LOG => out.string(&st.log),
            CL_PROGRAM_BINARY_TYPE => out.scalar(st.binary_type),
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => out.scalar(0usize),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}
