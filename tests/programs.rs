//! Programs: builds, build logs, binaries, IL, info queries and their error codes.
mod common;
use common::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};

const SOURCE: &str = "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }\n\
                      __kernel void add1(__global int *a) { a[get_global_id(0)] += 1; }\n";

fn program_info_string(p: cl_program, name: cl_program_info) -> String {
    info_string(|s, v, r| unsafe { cl!(clGetProgramInfo)(p, name, s, v, r) })
}

fn run_twice(e: &Env, p: cl_program) -> Vec<i32> {
    let data: Vec<i32> = (0..64).collect();
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let m = e.buffer(CL_MEM_READ_WRITE, bytes.len(), Some(&bytes));
    let k = e.kernel(p, "twice");
    set_arg(k, 0, &m);
    let g = 64usize;
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(e.queue, k, 1, null(), &g, null(), 0, null(), null_mut())
    });
    let out = e.read::<i32>(m, 64);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(m);
    }
    out
}

#[test]
fn build_and_query_kernels() {
    let e = Env::new();
    let p = e.build(SOURCE);
    let n: usize =
        info_scalar(|s, v, r| unsafe { cl!(clGetProgramInfo)(p, CL_PROGRAM_NUM_KERNELS, s, v, r) });
    assert_eq!(n, 2);
    let mut names: Vec<String> = program_info_string(p, CL_PROGRAM_KERNEL_NAMES)
        .split(';')
        .map(String::from)
        .collect();
    names.sort();
    assert_eq!(names, ["add1", "twice"]);
    assert_eq!(program_info_string(p, CL_PROGRAM_SOURCE), SOURCE);
    let st: cl_build_status = info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramBuildInfo)(p, e.device, CL_PROGRAM_BUILD_STATUS, s, v, r)
    });
    assert_eq!(st, CL_BUILD_SUCCESS);
    let mut kernels = [null_mut(); 2];
    let mut count = 0;
    ok(unsafe { cl!(clCreateKernelsInProgram)(p, 2, kernels.as_mut_ptr(), &mut count) });
    assert_eq!(count, 2);
    let r = unsafe { cl!(clCreateKernelsInProgram)(p, 1, kernels.as_mut_ptr(), &mut count) };
    assert_eq!(r, CL_INVALID_VALUE, "num_kernels below the kernel count");
    // clBuildProgram while kernels are attached.
    assert_eq!(
        unsafe { cl!(clBuildProgram)(p, 0, null(), null(), None, null_mut()) },
        CL_INVALID_OPERATION
    );
    for k in kernels {
        ok(unsafe { cl!(clReleaseKernel)(k) });
    }
    let out = run_twice(&e, p);
    assert_eq!(out, (0..64).map(|v| v * 2).collect::<Vec<i32>>());
    ok(unsafe { cl!(clReleaseProgram)(p) });
}

#[test]
fn broken_source_log_names_the_line() {
    let e = Env::new();
    let src = "__kernel void f(__global int *a) {\n  int x = 1;\n  a[0] = y;\n}\n";
    let (code, log) = e.try_build(src, "").expect_err("must not build");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains(":3:"), "log names line 3: {log}");
    assert!(log.contains("y"), "{log}");
}

#[test]
fn invalid_options_are_rejected() {
    let e = Env::new();
    let (code, _) = e
        .try_build(SOURCE, "-cl-no-such-option")
        .expect_err("must not build");
    assert_eq!(code, CL_INVALID_BUILD_OPTIONS);
    // A -D define reaches the compiler.
    let p = e
        .try_build(
            "__kernel void f(__global int *a) { a[0] = VALUE; }",
            "-D VALUE=41",
        )
        .unwrap();
    let m = e.buffer(CL_MEM_READ_WRITE, 4, None);
    let k = e.kernel(p, "f");
    set_arg(k, 0, &m);
    ok(unsafe { cl!(clEnqueueTask)(e.queue, k, 0, null(), null_mut()) });
    assert_eq!(e.read::<i32>(m, 1), [41]);
}

#[test]
fn binaries_round_trip_and_corrupt_binaries_fail() {
    let e = Env::new();
    let p = e.build(SOURCE);
    let size: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramInfo)(p, CL_PROGRAM_BINARY_SIZES, s, v, r)
    });
    assert!(size > 12);
    let mut bin = vec![0u8; size];
    let mut ptrs = [bin.as_mut_ptr()];
    ok(unsafe {
        cl!(clGetProgramInfo)(
            p,
            CL_PROGRAM_BINARIES,
            8,
            ptrs.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let mut err = 0;
    let mut status = 0;
    let lens = [size];
    let bins = [bin.as_ptr()];
    let p2 = unsafe {
        cl!(clCreateProgramWithBinary)(
            e.context,
            1,
            &e.device,
            lens.as_ptr(),
            bins.as_ptr() as *mut _,
            &mut status,
            &mut err,
        )
    };
    ok(err);
    ok(status);
    ok(unsafe { cl!(clBuildProgram)(p2, 0, null(), null(), None, null_mut()) });
    assert_eq!(
        run_twice(&e, p2),
        (0..64).map(|v| v * 2).collect::<Vec<i32>>()
    );
    // Corrupt the magic number.
    let mut bad = bin.clone();
    bad[0] ^= 0xff;
    let bins = [bad.as_ptr()];
    let p3 = unsafe {
        cl!(clCreateProgramWithBinary)(
            e.context,
            1,
            &e.device,
            lens.as_ptr(),
            bins.as_ptr() as *mut _,
            &mut status,
            &mut err,
        )
    };
    assert!(p3.is_null());
    assert_eq!((err, status), (CL_INVALID_BINARY, CL_INVALID_BINARY));
}

#[test]
fn program_error_codes() {
    let e = Env::new();
    let mut err = 0;
    let p = unsafe { cl!(clCreateProgramWithSource)(e.context, 0, null_mut(), null(), &mut err) };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let src = CString::new(SOURCE).unwrap();
    let ptrs = [src.as_ptr()];
    let p = unsafe {
        cl!(clCreateProgramWithSource)(e.context, 1, ptrs.as_ptr() as *mut _, null(), &mut err)
    };
    ok(err);
    let name = CString::new("twice").unwrap();
    let k = unsafe { cl!(clCreateKernel)(p, name.as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE, "kernel before build");
    let mut n = 0usize;
    let r = unsafe {
        cl!(clGetProgramInfo)(
            p,
            CL_PROGRAM_NUM_KERNELS,
            8,
            &mut n as *mut usize as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_PROGRAM_EXECUTABLE);
    ok(unsafe { cl!(clBuildProgram)(p, 1, &e.device, null(), None, null_mut()) });
    let missing = CString::new("nope").unwrap();
    let k = unsafe { cl!(clCreateKernel)(p, missing.as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_KERNEL_NAME);
    let k = unsafe { cl!(clCreateKernel)(p, null(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    assert_eq!(
        unsafe { cl!(clBuildProgram)(p, 1, null(), null(), None, null_mut()) },
        CL_INVALID_VALUE
    );
    let mut dummy = 0u8;
    let r = unsafe {
        cl!(clBuildProgram)(
            p,
            0,
            null(),
            null(),
            None,
            &mut dummy as *mut u8 as *mut c_void,
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "user_data without pfn_notify");
    ok(unsafe { cl!(clReleaseProgram)(p) });
    assert_eq!(
        unsafe { cl!(clReleaseProgram)(p) },
        CL_INVALID_PROGRAM,
        "released twice"
    );
}

/// Run in a child process (see `missing_compiler_gives_compiler_not_available`).
#[test]
#[ignore]
fn child_missing_compiler() {
    let e = Env::new();
    let (code, log) = e.try_build(SOURCE, "").expect_err("no compiler");
    assert_eq!(code, CL_COMPILER_NOT_AVAILABLE);
    assert!(
        log.contains("apt-get install"),
        "the log says what to install: {log}"
    );
    let avail: cl_bool = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(e.device, CL_DEVICE_COMPILER_AVAILABLE, s, v, r)
    });
    assert_eq!(avail, CL_FALSE);
    // Without the compiler tools there is neither OpenCL C 3.1 nor SPIR-V: OpenCL 3.0
    // (docs/opencl31.md), for the device and so for the platform.
    let version = info_string(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(e.device, CL_DEVICE_VERSION, s, v, r)
    });
    assert!(version.starts_with("OpenCL 3.0 "), "{version}");
    let platform = info_string(|s, v, r| unsafe {
        cl!(clGetPlatformInfo)(e.platform, CL_PLATFORM_VERSION, s, v, r)
    });
    assert!(platform.starts_with("OpenCL 3.0 "), "{platform}");
    let mut size = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            e.device,
            CL_DEVICE_OPENCL_C_ALL_VERSIONS,
            0,
            null_mut(),
            &mut size,
        )
    });
    assert_eq!(
        size,
        4 * std::mem::size_of::<cl_name_version>(),
        "OpenCL C 1.0 to 3.0"
    );
}

#[test]
fn missing_compiler_gives_compiler_not_available() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_missing_compiler",
            "--ignored",
            "--nocapture",
        ])
        .env("VKCL_CLANG", "/nonexistent/clang-15")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn program_from_spirv_il() {
    // Make OpenCL SPIR-V with the same tools an application would use.
    let dir = std::env::temp_dir().join(format!("vkcl-il-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cl = dir.join("k.cl");
    std::fs::write(
        &cl,
        "__kernel void twice(__global int *a) { a[get_global_id(0)] *= 2; }\n",
    )
    .unwrap();
    let bc = dir.join("k.bc");
    let spv = dir.join("k.spv");
    let st = std::process::Command::new("clang-15")
        .args(["-x", "cl", "-target", "spir64", "-emit-llvm", "-c", "-O1"])
        .arg(&cl)
        .arg("-o")
        .arg(&bc)
        .status()
        .unwrap();
    assert!(st.success());
    let st = std::process::Command::new("llvm-spirv-15")
        .arg(&bc)
        .arg("-o")
        .arg(&spv)
        .status()
        .unwrap();
    assert!(st.success());
    let il = std::fs::read(&spv).unwrap();
    let e = Env::new();
    let mut err = 0;
    let p = unsafe {
        cl!(clCreateProgramWithIL)(e.context, il.as_ptr() as *const c_void, il.len(), &mut err)
    };
    ok(err);
    ok(unsafe { cl!(clBuildProgram)(p, 0, null(), null(), None, null_mut()) });
    assert_eq!(
        run_twice(&e, p),
        (0..64).map(|v| v * 2).collect::<Vec<i32>>()
    );
    let mut n = 0;
    ok(unsafe { cl!(clGetProgramInfo)(p, CL_PROGRAM_IL, 0, null_mut(), &mut n) });
    assert_eq!(n, il.len(), "CL_PROGRAM_IL returns the IL given");
    // Not SPIR-V at all.
    let junk = [0u8; 64];
    let q = unsafe {
        cl!(clCreateProgramWithIL)(
            e.context,
            junk.as_ptr() as *const c_void,
            junk.len(),
            &mut err,
        )
    };
    assert!(q.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run in a child process (see `executable_binary_builds_without_the_compiler`): the binary in
/// the file `$VKCL_TEST_BINARY` builds and runs with the compiler tools missing.
#[test]
#[ignore]
fn child_binary_without_compiler() {
    let e = Env::new();
    let bin = std::fs::read(std::env::var_os("VKCL_TEST_BINARY").expect("binary file")).unwrap();
    let (p, err, status) = from_binary(&e, &bin);
    ok(err);
    ok(status);
    ok(unsafe { cl!(clBuildProgram)(p, 0, null(), null(), None, null_mut()) });
    assert_eq!(
        run_twice(&e, p),
        (0..64).map(|v| v * 2).collect::<Vec<i32>>()
    );
    // The same process cannot build source.
    let (code, _) = e.try_build(SOURCE, "").expect_err("no compiler");
    assert_eq!(code, CL_COMPILER_NOT_AVAILABLE);
    // Nor link a compiled object: CL_LINKER_NOT_AVAILABLE.
    let obj = std::fs::read(std::env::var_os("VKCL_TEST_OBJECT").expect("object file")).unwrap();
    let (o, err, status) = from_binary(&e, &obj);
    ok(err);
    ok(status);
    let mut err = 0;
    let q = unsafe {
        cl!(clLinkProgram)(
            e.context,
            0,
            null(),
            null(),
            1,
            &o,
            None,
            null_mut(),
            &mut err,
        )
    };
    assert!(q.is_null());
    assert_eq!(err, CL_LINKER_NOT_AVAILABLE);
}

#[test]
fn executable_binary_builds_without_the_compiler() {
    let e = Env::new();
    let p = e.build(SOURCE);
    let path = std::env::temp_dir().join(format!("vkcl-bin-{}.bin", std::process::id()));
    std::fs::write(&path, binary_of(p)).unwrap();
    // A compiled object for the child's clLinkProgram.
    let src = CString::new(SOURCE).unwrap();
    let ptrs = [src.as_ptr()];
    let mut err = 0;
    let o = unsafe {
        cl!(clCreateProgramWithSource)(e.context, 1, ptrs.as_ptr() as *mut _, null(), &mut err)
    };
    ok(err);
    ok(unsafe {
        cl!(clCompileProgram)(
            o,
            1,
            &e.device,
            null(),
            0,
            null(),
            null_mut(),
            None,
            null_mut(),
        )
    });
    let obj_path = std::env::temp_dir().join(format!("vkcl-obj-{}.bin", std::process::id()));
    std::fs::write(&obj_path, binary_of(o)).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_binary_without_compiler",
            "--ignored",
            "--nocapture",
        ])
        .env("VKCL_CLANG", "/nonexistent/clang-15")
        .env("VKCL_CACHE", "0")
        .env("VKCL_TEST_BINARY", &path)
        .env("VKCL_TEST_OBJECT", &obj_path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&obj_path);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
