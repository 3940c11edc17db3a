//! What the Rust examples share: the system ICD loader opened at run time, `cl!` to call its
//! functions, and small device queries. Included with `#[path = "common/cl.rs"] mod cl;`.
#![allow(dead_code)]
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// The system ICD loader (`libOpenCL.so.1`), opened once.
pub fn loader() -> &'static libloading::Library {
    static LIB: std::sync::OnceLock<libloading::Library> = std::sync::OnceLock::new();
    // SAFETY: loading the system ICD loader.
    LIB.get_or_init(|| {
        unsafe { libloading::Library::new("libOpenCL.so.1") }.expect("libOpenCL.so.1")
    })
}

/// The loader's function `name`, typed as opencl-sys's `<name>_t`.
#[macro_export]
macro_rules! cl {
    ($name:ident) => {
        paste::paste! {{
            // SAFETY: the symbol has the C signature of the OpenCL header.
            #[allow(unused_unsafe)]
            let f: libloading::Symbol<opencl_sys::cl_function_types::[<$name _t>]> =
                unsafe { $crate::cl::loader().get(concat!(stringify!($name), "\0").as_bytes()) }.expect(stringify!($name));
            (*f).expect(stringify!($name))
        }}
    };
}

/// Panics with the code unless it is `CL_SUCCESS`.
#[track_caller]
pub fn ok(code: cl_int) {
    assert_eq!(code, CL_SUCCESS, "OpenCL error {code}");
}

/// `CL_DEVICE_MAX_COMPUTE_UNITS`.
pub fn units(d: cl_device_id) -> u32 {
    let mut v = 0u32;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_MAX_COMPUTE_UNITS,
            4,
            &mut v as *mut u32 as *mut c_void,
            null_mut(),
        )
    });
    v
}

/// clCreateSubDevices with `props`: the sub-devices, or the error code.
pub fn try_split(
    d: cl_device_id,
    props: &[cl_device_partition_property],
) -> Result<Vec<cl_device_id>, cl_int> {
    let mut n = 0;
    let r = unsafe { cl!(clCreateSubDevices)(d, props.as_ptr(), 0, null_mut(), &mut n) };
    if r != CL_SUCCESS {
        return Err(r);
    }
    let mut out = vec![null_mut(); n as usize];
    ok(unsafe { cl!(clCreateSubDevices)(d, props.as_ptr(), n, out.as_mut_ptr(), null_mut()) });
    Ok(out)
}

/// clCreateSubDevices with `props`, panicking on an error.
pub fn split(d: cl_device_id, props: &[cl_device_partition_property]) -> Vec<cl_device_id> {
    try_split(d, props).unwrap_or_else(|e| panic!("clCreateSubDevices {props:?}: {e}"))
}

/// The first platform's default device and its name.
pub fn default_device() -> (cl_device_id, String) {
    let mut platform = null_mut();
    ok(unsafe { cl!(clGetPlatformIDs)(1, &mut platform, null_mut()) });
    let mut root = null_mut();
    ok(unsafe { cl!(clGetDeviceIDs)(platform, CL_DEVICE_TYPE_DEFAULT, 1, &mut root, null_mut()) });
    let mut name = vec![0u8; 256];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            root,
            CL_DEVICE_NAME,
            256,
            name.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let name = String::from_utf8_lossy(&name)
        .trim_end_matches('\0')
        .to_string();
    (root, name)
}

/// A context of `devices` with `source` built for all of them.
pub fn context_with_program(devices: &[cl_device_id], source: &str) -> (cl_context, cl_program) {
    let mut err = 0;
    let context = unsafe {
        cl!(clCreateContext)(
            std::ptr::null(),
            devices.len() as u32,
            devices.as_ptr(),
            None,
            null_mut(),
            &mut err,
        )
    };
    ok(err);
    let src = std::ffi::CString::new(source).unwrap();
    let ptrs = [src.as_ptr()];
    let program = unsafe {
        cl!(clCreateProgramWithSource)(
            context,
            1,
            ptrs.as_ptr() as *mut _,
            std::ptr::null(),
            &mut err,
        )
    };
    ok(err);
    ok(unsafe {
        cl!(clBuildProgram)(
            program,
            0,
            std::ptr::null(),
            std::ptr::null(),
            None,
            null_mut(),
        )
    });
    (context, program)
}
