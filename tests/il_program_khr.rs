//! `cl_khr_il_program`: the extension's names for the core IL path (OpenCL 3.0 API section
//! 5.8.1 and the extension specification): the device lists the extension (1.0.0) where it
//! has an IL version, `clCreateProgramWithILKHR` is found by name, `CL_DEVICE_IL_VERSION_KHR`
//! and `CL_PROGRAM_IL_KHR` answer, and a program made through the extension's function builds
//! and runs with results checked on the host. PoCL-Remote's `pocld` forwards SPIR-V only to
//! devices that list the extension (docs/remote.md). Modules are assembled with spirv-as.
mod common;
use common::spirv::*;
use common::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};

/// `CL_DEVICE_IL_VERSION_KHR` and `CL_PROGRAM_IL_KHR` (cl_ext.h): the values of the core names.
const CL_DEVICE_IL_VERSION_KHR: cl_device_info = 0x105B;
const CL_PROGRAM_IL_KHR: cl_program_info = 0x1169;

type CreateProgramWithIlKhr =
    unsafe extern "C" fn(cl_context, *const c_void, usize, *mut cl_int) -> cl_program;

/// `out[i] = i * m` for every work-item `i`.
const SCALE: &str = r#"
    OpCapability Addresses
    OpCapability Kernel
    OpCapability Int64
    OpMemoryModel Physical64 OpenCL
    OpEntryPoint Kernel %k "scale" %gid
    OpDecorate %gid BuiltIn GlobalInvocationId
    OpDecorate %gid Constant
    %void = OpTypeVoid
    %uint = OpTypeInt 32 0
    %ulong = OpTypeInt 64 0
    %v3 = OpTypeVector %ulong 3
    %pv3 = OpTypePointer Input %v3
    %pg = OpTypePointer CrossWorkgroup %uint
    %fn = OpTypeFunction %void %pg %uint
    %gid = OpVariable %pv3 Input
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %pg
    %m = OpFunctionParameter %uint
    %entry = OpLabel
    %g3 = OpLoad %v3 %gid Aligned 32
    %g = OpCompositeExtract %ulong %g3 0
    %gi = OpUConvert %uint %g
    %v = OpIMul %uint %gi %m
    %p = OpInBoundsPtrAccessChain %pg %out %g
    OpStore %p %v Aligned 4
    OpReturn
    OpFunctionEnd
"#;

fn create_program_with_il_khr() -> Option<CreateProgramWithIlKhr> {
    let name = CString::new("clCreateProgramWithILKHR").unwrap();
    let f = unsafe { cl!(clGetExtensionFunctionAddressForPlatform)(platform(), name.as_ptr()) };
    // SAFETY: the extension's signature (cl_ext.h).
    (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, CreateProgramWithIlKhr>(f) })
}

/// The device's `CL_DEVICE_IL_VERSION`: empty without the compiler tools.
fn il_version(e: &Env) -> String {
    info_string(|s, v, r| unsafe { cl!(clGetDeviceInfo)(e.device, CL_DEVICE_IL_VERSION, s, v, r) })
}

/// Whether the device takes IL programs (a non-empty `CL_DEVICE_IL_VERSION`).
fn il_supported(e: &Env) -> bool {
    !il_version(e).is_empty()
}

#[test]
fn extension_listed_with_the_il_version() {
    let e = Env::new();
    let il = il_version(&e);
    let listed = e.has_extension("cl_khr_il_program");
    assert_eq!(
        listed,
        !il.is_empty(),
        "cl_khr_il_program listed ({listed}) exactly when CL_DEVICE_IL_VERSION is not empty ({il:?})"
    );
    if !listed {
        return;
    }
    // The versioned list names it at 1.0.0.
    let mut size = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            e.device,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            0,
            null_mut(),
            &mut size,
        )
    });
    let mut v = vec![
        cl_name_version {
            version: 0,
            name: [0; CL_NAME_VERSION_MAX_NAME_SIZE]
        };
        size / std::mem::size_of::<cl_name_version>()
    ];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            e.device,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            size,
            v.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let entry = v.iter().find(|nv| {
        let n: Vec<u8> = nv.name.iter().take_while(|&&c| c != 0).copied().collect();
        n == b"cl_khr_il_program"
    });
    assert_eq!(entry.map(|nv| nv.version), Some((1 << 22) as cl_version));
    // CL_DEVICE_IL_VERSION_KHR is the core query.
    let il_khr = info_string(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(e.device, CL_DEVICE_IL_VERSION_KHR, s, v, r)
    });
    assert_eq!(il_khr, il);
    assert!(il.contains("SPIR-V_1.0"), "IL versions: {il}");
}

#[test]
fn program_made_with_the_extension_function_runs() {
    let e = Env::new();
    if !il_supported(&e) {
        return;
    }
    let create = create_program_with_il_khr().expect("clCreateProgramWithILKHR found by name");
    let il = assemble_whole(SCALE);
    let mut err = 0;
    let p = unsafe { create(e.context, il.as_ptr() as *const c_void, il.len(), &mut err) };
    ok(err);
    build(&e, p);
    // CL_PROGRAM_IL_KHR gives the module back.
    let mut size = 0;
    ok(unsafe { cl!(clGetProgramInfo)(p, CL_PROGRAM_IL_KHR, 0, null_mut(), &mut size) });
    let mut back = vec![0u8; size];
    ok(unsafe {
        cl!(clGetProgramInfo)(
            p,
            CL_PROGRAM_IL_KHR,
            size,
            back.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(back, il);
    let n = 4096usize;
    let m: u32 = 2654435761;
    let out = e.buffer(CL_MEM_READ_WRITE, n * 4, Some(&vec![0u8; n * 4]));
    let k = e.kernel(p, "scale");
    set_arg(k, 0, &out);
    set_arg(k, 1, &m);
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(e.queue, k, 1, null(), &n, null(), 0, null(), null_mut())
    });
    let got = e.read::<u32>(out, n);
    let wrong = (0..n)
        .filter(|&i| got[i] != (i as u32).wrapping_mul(m))
        .count();
    assert_eq!(wrong, 0, "{wrong} of {n} wrong; first: {:?}", &got[..4]);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseProgram)(p);
    }
}

#[test]
fn extension_function_rejects_what_the_core_one_rejects() {
    let e = Env::new();
    if !il_supported(&e) {
        return;
    }
    let create = create_program_with_il_khr().expect("clCreateProgramWithILKHR found by name");
    // Not SPIR-V (wrong magic number): CL_INVALID_VALUE, as clCreateProgramWithIL.
    let junk = [0x55u8; 64];
    let mut err = 0;
    let p = unsafe {
        create(
            e.context,
            junk.as_ptr() as *const c_void,
            junk.len(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    // A NULL context: CL_INVALID_CONTEXT.
    let il = assemble_whole(SCALE);
    let p = unsafe { create(null_mut(), il.as_ptr() as *const c_void, il.len(), &mut err) };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
}
