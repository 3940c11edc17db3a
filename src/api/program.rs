//! Program entry points (OpenCL 3.0 section 5.8).

use super::info::InfoOut;
use super::{slice_from, status, write_opt};
use crate::core::binary;
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

/// Checks a device list against a program's (or context's) devices and returns the indices
/// into `devices` it names: every index for a NULL list (duplicates removed, in list order).
/// Errors: `CL_INVALID_VALUE` (NULL list with num > 0 or a list with num 0),
/// `CL_INVALID_DEVICE` (a device not of the program).
///
/// # Safety
/// `list` must be NULL or hold `num` handles.
unsafe fn check_devices(
    devices: &[Arc<Device>],
    num: cl_uint,
    list: *const cl_device_id,
) -> ClResult<Vec<usize>> {
    if (list.is_null() && num > 0) || (!list.is_null() && num == 0) {
        return Err(ClError(CL_INVALID_VALUE));
    }
    if list.is_null() {
        return Ok((0..devices.len()).collect());
    }
    let mut out = Vec::new();
    // SAFETY: forwarded.
    for &h in unsafe { slice_from(list, num as usize) } {
        let d = lookup::<Device>(h as *const c_void)?;
        let i = devices
            .iter()
            .position(|x| Arc::ptr_eq(x, &d))
            .ok_or(ClError(CL_INVALID_DEVICE))?;
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
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
        if !crate::compiler::available() {
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

/// clCreateProgramWithBinary (OpenCL 3.0 API 5.8.1): accepts vkcl's own binaries (from
/// `CL_PROGRAM_BINARIES`; format in `core::binary`) of every type: compiled object, library,
/// executable. The program has the binary's `CL_PROGRAM_BINARY_TYPE`; clBuildProgram makes
/// an executable of any of them, clLinkProgram takes objects and libraries. Errors:
/// `CL_INVALID_CONTEXT`, `CL_INVALID_VALUE` (no devices, NULL lengths or binaries, a zero
/// length or NULL entry), `CL_INVALID_DEVICE` (a device not of the context),
/// `CL_INVALID_BINARY` (not an intact vkcl binary of this version, or binaries of different
/// contents for the devices; `binary_status` says which).
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
        let mut decoded: Option<binary::ProgramBinary> = None;
        let mut failed = false;
        for i in 0..num_devices as usize {
            // SAFETY: lengths and binaries hold num_devices entries.
            let (len, ptr) = unsafe { (*lengths.add(i), *binaries.add(i)) };
            if len == 0 || ptr.is_null() {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // SAFETY: the binary holds len bytes.
            let r = binary::decode(unsafe { std::slice::from_raw_parts(ptr, len) });
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
                // One program serves all devices: their binaries must agree.
                Ok(b) => match &decoded {
                    Some(d) if *d != b => failed = true,
                    _ => decoded = Some(b),
                },
                Err(_) => failed = true,
            }
        }
        if failed {
            return Err(ClError(CL_INVALID_BINARY));
        }
        let b = decoded.ok_or(ClError(CL_INVALID_BINARY))?;
        Ok(handle_of(&register(Program::new(
            c,
            devices,
            ProgramSource::Binary(b),
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
    let targets = unsafe { check_devices(&p.devices, num_devices, device_list) }?;
    // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
    if pfn_notify.is_none() && !user_data.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: NUL-terminated per the API.
    let o = unsafe { options(opts) };
    let r = p.build(&targets, &o);
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

/// clCompileProgram (OpenCL 3.0 API 5.8.3): compiles source (or IL) to a compiled object
/// (LLVM bitcode; see `compiler::compile_object` for why), synchronously, then calls
/// `pfn_notify` once. Each of `input_headers` is a program whose source is found by
/// `#include "<header_include_names[i]>"`. Errors: `CL_INVALID_PROGRAM`, `CL_INVALID_VALUE`
/// (device list, headers or callback arguments inconsistent, a NULL header name),
/// `CL_INVALID_DEVICE`, `CL_INVALID_OPERATION` (kernels attached, or no source or IL),
/// `CL_COMPILER_NOT_AVAILABLE`, `CL_INVALID_COMPILER_OPTIONS`, `CL_COMPILE_PROGRAM_FAILURE`
/// (the build log names file and line).
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
        let p = lookup::<Program>(program as *const c_void)?;
        // SAFETY: forwarded.
        let targets = unsafe { check_devices(&p.devices, num_devices, device_list) }?;
        // CL_INVALID_VALUE if num_input_headers is zero and header_include_names or
        // input_headers are not NULL, or if num_input_headers is not zero and either is NULL.
        if (num_input_headers == 0 && (!input_headers.is_null() || !header_include_names.is_null()))
            || (num_input_headers > 0
                && (input_headers.is_null() || header_include_names.is_null()))
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
        if pfn_notify.is_none() && !user_data.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let mut headers = Vec::with_capacity(num_input_headers as usize);
        for i in 0..num_input_headers as usize {
            // SAFETY: both arrays hold num_input_headers entries.
            let (h, name) = unsafe { (*input_headers.add(i), *header_include_names.add(i)) };
            let hp = lookup::<Program>(h as *const c_void)?;
            if name.is_null() {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // SAFETY: a NUL-terminated name per the API.
            let name = unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned();
            let text = match &hp.source {
                ProgramSource::Source(s) => s.clone(),
                // A header must be a program created with source.
                _ => return Err(ClError(CL_INVALID_OPERATION)),
            };
            headers.push((name, text));
        }
        // SAFETY: NUL-terminated per the API.
        let o = unsafe { options(opts) };
        let r = p.compile(&targets, &o, &headers);
        if let Some(f) = pfn_notify {
            // SAFETY: the application's callback for this program.
            unsafe { f(program, user_data) };
        }
        r
    })
}

/// clLinkProgram (OpenCL 3.0 API 5.8.4): links compiled objects and libraries (from
/// clCompileProgram, clLinkProgram `-create-library` or their binaries) into a new program:
/// an executable, or a library with `-create-library` (`-enable-link-options` and the
/// program linking options are accepted with it). Synchronous; `pfn_notify` is called once
/// with the new program. A link that fails still returns a program (status
/// `CL_BUILD_ERROR`, the log says why) together with `CL_LINK_PROGRAM_FAILURE`. Errors:
/// `CL_INVALID_CONTEXT` (also an input of another context), `CL_INVALID_VALUE` (no inputs,
/// callback arguments inconsistent), `CL_INVALID_DEVICE`, `CL_INVALID_PROGRAM` (an input is
/// not a program), `CL_INVALID_OPERATION` (an input is not a successfully compiled object or
/// library), `CL_INVALID_LINKER_OPTIONS`, `CL_LINKER_NOT_AVAILABLE`, `CL_LINK_PROGRAM_FAILURE`.
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
    let mut link_failure = CL_SUCCESS;
    let handle = super::object(errcode_ret, || {
        let c = lookup::<Context>(context as *const c_void)?;
        // SAFETY: forwarded.
        unsafe { check_devices(&c.devices, num_devices, device_list) }?;
        // CL_INVALID_VALUE if num_input_programs is zero or input_programs is NULL, or if
        // pfn_notify is NULL but user_data is not NULL.
        if num_input_programs == 0
            || input_programs.is_null()
            || (pfn_notify.is_none() && !user_data.is_null())
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: input_programs holds num_input_programs handles.
        let inputs =
            unsafe { object::lookup_list::<Program>(input_programs, num_input_programs as usize) }?;
        // CL_INVALID_CONTEXT if the context associated with programs in input_programs is
        // not the same as context (stated since OpenCL 3.1, OpenCL-Docs PR #1453).
        if inputs.iter().any(|p| !Arc::ptr_eq(&p.context, &c)) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        // CL_INVALID_OPERATION if the compilation or build of a program in input_programs
        // has not completed successfully.
        if inputs.iter().any(|p| !p.is_linkable()) {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        // SAFETY: NUL-terminated per the API.
        let o = unsafe { options(opts) };
        // CL_INVALID_LINKER_OPTIONS if the linker options are invalid (no program is made).
        crate::compiler::parse_link_options(&o).map_err(|e| {
            tracing::debug!("clLinkProgram: {e}");
            ClError(CL_INVALID_LINKER_OPTIONS)
        })?;
        let devices = if device_list.is_null() {
            c.devices.clone()
        } else {
            // SAFETY: checked above: num_devices handles.
            unsafe { object::lookup_list::<Device>(device_list, num_devices as usize) }?
        };
        let p = register(Program::new(c, devices, ProgramSource::Linked));
        let r = p.link(&o, &inputs);
        if let Some(f) = pfn_notify {
            // SAFETY: the application's callback.
            unsafe { f(handle_of(&p), user_data) };
        }
        match r {
            Ok(()) => {}
            // A failed link still returns the program, whose log says why.
            Err(ClError(CL_LINK_PROGRAM_FAILURE)) => link_failure = CL_LINK_PROGRAM_FAILURE,
            Err(e) => {
                // CL_LINKER_NOT_AVAILABLE if a linker is not available
                // (CL_DEVICE_LINKER_AVAILABLE false: the tools are missing, core says
                // CL_COMPILER_NOT_AVAILABLE for every build step).
                let e = if e.0 == CL_COMPILER_NOT_AVAILABLE {
                    ClError(CL_LINKER_NOT_AVAILABLE)
                } else {
                    e
                };
                // The handle was registered above and never reached the application.
                let _ = object::release::<Program>(handle_of(&p) as *const c_void);
                return Err(e);
            }
        }
        Ok(handle_of(&p))
    });
    if link_failure != CL_SUCCESS && !errcode_ret.is_null() {
        // SAFETY: a non-NULL errcode_ret points to a cl_int per the OpenCL API.
        unsafe { errcode_ret.write(link_failure) };
    }
    handle
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

/// clSetProgramSpecializationConstant (OpenCL 3.0 API 5.8.3): sets the value of a
/// specialization constant of a program created from SPIR-V for its later builds (`spec_size`
/// bytes at `spec_value`: 1 byte for a boolean, zero meaning false, else the size of the
/// constant's type). Errors: `CL_INVALID_PROGRAM` (not a valid program, or not created from
/// IL), `CL_INVALID_OPERATION` (no device of the program takes IL: vkcl without its
/// compiler), `CL_INVALID_VALUE` (`spec_value` NULL, or `spec_size` not the constant's size),
/// `CL_INVALID_SPEC_ID` (no specialization constant `spec_id` in the module).
///
/// # Safety
/// Pointers as the OpenCL API requires: `spec_value` holds `spec_size` bytes.
pub unsafe extern "C" fn clSetProgramSpecializationConstant(
    program: cl_program,
    spec_id: cl_uint,
    spec_size: usize,
    spec_value: *const c_void,
) -> cl_int {
    status(|| {
        let p = lookup::<Program>(program as *const c_void)?;
        if !crate::compiler::available() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        if !matches!(p.source, ProgramSource::Il(_)) {
            return Err(ClError(CL_INVALID_PROGRAM));
        }
        if spec_value.is_null() || p.spec_constant_size(spec_id)? != spec_size {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: spec_value holds spec_size bytes per the OpenCL API (checked non-NULL).
        let value = unsafe { std::slice::from_raw_parts(spec_value as *const u8, spec_size) };
        p.set_spec_constant(spec_id, value)
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
        match param_name {
            CL_PROGRAM_REFERENCE_COUNT => out.scalar(p.header().ref_count()),
            CL_PROGRAM_CONTEXT => out.scalar(handle_of(&p.context)),
            CL_PROGRAM_NUM_DEVICES => out.scalar(p.devices.len() as cl_uint),
            CL_PROGRAM_DEVICES => out.slice(&p.devices.iter().map(handle_of).collect::<Vec<_>>()),
            CL_PROGRAM_SOURCE => match &p.source {
                ProgramSource::Source(s) => out.string(s),
                _ => out.string(""),
            },
            CL_PROGRAM_IL => match &p.source {
                ProgramSource::Il(b) => out.bytes(b),
                _ => out.bytes(&[]),
            },
            CL_PROGRAM_BINARY_SIZES => {
                out.slice(&p.binaries().iter().map(|b| b.len()).collect::<Vec<_>>())
            }
            CL_PROGRAM_BINARIES => {
                let bins = p.binaries();
                let n = bins.len();
                if !value.is_null() {
                    if size < n * std::mem::size_of::<*mut u8>() {
                        return Err(ClError(CL_INVALID_VALUE));
                    }
                    for (i, b) in bins.iter().enumerate() {
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
        // CL_INVALID_DEVICE if device is not in the list of devices associated with program.
        let st = p.build_state(&d)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_PROGRAM_BUILD_STATUS => out.scalar(st.status),
            CL_PROGRAM_BUILD_OPTIONS => out.string(&st.options),
            CL_PROGRAM_BUILD_LOG => out.string(&st.log),
            CL_PROGRAM_BINARY_TYPE => out.scalar(st.binary_type),
            // The program's __global variable block (compiler::globals), 0 without one.
            CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE => out.scalar(
                st.compiled
                    .as_ref()
                    .filter(|c| c.has_global_variables)
                    .and_then(|c| crate::compiler::program_globals(&c.opencl_spirv).ok())
                    .map_or(0, |g| g.size as usize),
            ),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}
