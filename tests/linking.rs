//! Separate compilation and linking (clCompileProgram with embedded headers, clLinkProgram of
//! objects and libraries), binaries of every type, their error codes, and the predefined
//! macros a program sees.
mod common;
use common::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, Ordering};

fn source_program(e: &Env, src: &str) -> cl_program {
    let mut err = 0;
    let s = CString::new(src).unwrap();
    let ptrs = [s.as_ptr()];
    let p = unsafe {
        cl!(clCreateProgramWithSource)(e.context, 1, ptrs.as_ptr() as *mut _, null(), &mut err)
    };
    ok(err);
    p
}

/// clCompileProgram of `p` with `headers` (include name, header program).
fn compile(e: &Env, p: cl_program, opts: &str, headers: &[(&str, cl_program)]) -> cl_int {
    let o = CString::new(opts).unwrap();
    let names: Vec<CString> = headers.iter().map(|h| CString::new(h.0).unwrap()).collect();
    let mut name_ptrs: Vec<*const i8> = names.iter().map(|n| n.as_ptr()).collect();
    let progs: Vec<cl_program> = headers.iter().map(|h| h.1).collect();
    unsafe {
        cl!(clCompileProgram)(
            p,
            1,
            &e.device,
            o.as_ptr(),
            headers.len() as u32,
            if headers.is_empty() {
                null()
            } else {
                progs.as_ptr()
            },
            if headers.is_empty() {
                null_mut()
            } else {
                name_ptrs.as_mut_ptr() as *mut _
            },
            None,
            null_mut(),
        )
    }
}

/// clLinkProgram of `inputs`; the program (possibly NULL) and the error code.
fn link(e: &Env, inputs: &[cl_program], opts: &str) -> (cl_program, cl_int) {
    let o = CString::new(opts).unwrap();
    let mut err = 0;
    let p = unsafe {
        cl!(clLinkProgram)(
            e.context,
            1,
            &e.device,
            o.as_ptr(),
            inputs.len() as u32,
            inputs.as_ptr(),
            None,
            null_mut(),
            &mut err,
        )
    };
    (p, err)
}

fn binary_type(e: &Env, p: cl_program) -> cl_program_binary_type {
    info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramBuildInfo)(p, e.device, CL_PROGRAM_BINARY_TYPE, s, v, r)
    })
}

fn build_status(e: &Env, p: cl_program) -> cl_build_status {
    info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramBuildInfo)(p, e.device, CL_PROGRAM_BUILD_STATUS, s, v, r)
    })
}

/// Runs kernel `name(__global int *out, __global const int *in)` over 64 items of `input`.
fn run(e: &Env, p: cl_program, name: &str, input: &[i32]) -> Vec<i32> {
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let inb = e.buffer(CL_MEM_READ_ONLY, bytes.len(), Some(&bytes));
    let out = e.buffer(CL_MEM_READ_WRITE, bytes.len(), None);
    let k = e.kernel(p, name);
    set_arg(k, 0, &out);
    set_arg(k, 1, &inb);
    let g = input.len();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(e.queue, k, 1, null(), &g, null(), 0, null(), null_mut())
    });
    let v = e.read::<i32>(out, input.len());
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(inb);
        cl!(clReleaseMemObject)(out);
    }
    v
}

fn release(p: cl_program) {
    ok(unsafe { cl!(clReleaseProgram)(p) });
}

fn input() -> Vec<i32> {
    let mut r = Rng(7);
    (0..64)
        .map(|_| (r.next_u32() % 1000) as i32 - 500)
        .collect()
}

// The kernel file includes two embedded headers, one of them in a subdirectory that includes
// the other; the function it calls lives in a second compiled object.
const DEFS_H: &str = "#define SCALE 3\n";
const OPS_H: &str = "#include \"defs.h\"\nint mix(int a, int b);\n#define OFFSET (SCALE * 7)\n";
const KERNEL_CL: &str = "#include \"ops/ops.h\"\n\
    __kernel void apply(__global int *out, __global const int *in) {\n\
        size_t i = get_global_id(0);\n\
        out[i] = mix(in[i], (int)i) + OFFSET;\n\
    }\n";
const MIX_CL: &str = "int mix(int a, int b) { return a * 5 - b; }\n";

fn expected(input: &[i32]) -> Vec<i32> {
    input
        .iter()
        .enumerate()
        .map(|(i, &a)| a * 5 - i as i32 + 21)
        .collect()
}

/// The kernel object (with headers) and the `mix` object, compiled.
fn compiled_pair(e: &Env) -> (cl_program, cl_program) {
    let defs = source_program(e, DEFS_H);
    let ops = source_program(e, OPS_H);
    let k = source_program(e, KERNEL_CL);
    ok(compile(e, k, "", &[("ops/ops.h", ops), ("defs.h", defs)]));
    let m = source_program(e, MIX_CL);
    ok(compile(e, m, "", &[]));
    release(defs);
    release(ops);
    (k, m)
}

#[test]
fn compile_with_headers_and_link_two_objects() {
    let e = Env::new();
    let (k, m) = compiled_pair(&e);
    assert_eq!(
        binary_type(&e, k),
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
    );
    assert_eq!(build_status(&e, k), CL_BUILD_SUCCESS);
    // A compiled object has no kernels yet.
    let mut n = 0usize;
    let r = unsafe {
        cl!(clGetProgramInfo)(
            k,
            CL_PROGRAM_NUM_KERNELS,
            8,
            &mut n as *mut usize as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_PROGRAM_EXECUTABLE);
    let (exe, err) = link(&e, &[k, m], "");
    ok(err);
    assert_eq!(
        binary_type(&e, exe),
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type
    );
    let x = input();
    assert_eq!(run(&e, exe, "apply", &x), expected(&x));
    for p in [k, m, exe] {
        release(p);
    }
}

#[test]
fn libraries_link_with_objects() {
    let e = Env::new();
    let (k, m) = compiled_pair(&e);
    let (lib, err) = link(
        &e,
        &[m],
        "-create-library -enable-link-options -cl-finite-math-only -cl-no-signed-zeros",
    );
    ok(err);
    assert_eq!(
        binary_type(&e, lib),
        CL_PROGRAM_BINARY_TYPE_LIBRARY as cl_program_binary_type
    );
    // A library of a library and an object, then the executable.
    let (exe, err) = link(&e, &[k, lib], "-cl-denorms-are-zero");
    ok(err);
    let x = input();
    assert_eq!(run(&e, exe, "apply", &x), expected(&x));
    for p in [k, m, lib, exe] {
        release(p);
    }
}

#[test]
fn binaries_of_every_type_round_trip() {
    let e = Env::new();
    let (k, m) = compiled_pair(&e);
    let (lib, err) = link(&e, &[m], "-create-library");
    ok(err);
    let x = input();
    let want = expected(&x);

    // Compiled object and library binaries: same type back, linkable.
    let (k2, err, st) = from_binary(&e, &binary_of(k));
    ok(err);
    ok(st);
    assert_eq!(
        binary_type(&e, k2),
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
    );
    let (lib2, err, st) = from_binary(&e, &binary_of(lib));
    ok(err);
    ok(st);
    assert_eq!(
        binary_type(&e, lib2),
        CL_PROGRAM_BINARY_TYPE_LIBRARY as cl_program_binary_type
    );
    let (exe, err) = link(&e, &[k2, lib2], "");
    ok(err);
    assert_eq!(run(&e, exe, "apply", &x), want);

    // Executable binary: built with clBuildProgram, runs the same.
    let (exe2, err, st) = from_binary(&e, &binary_of(exe));
    ok(err);
    ok(st);
    assert_eq!(
        binary_type(&e, exe2),
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type
    );
    ok(unsafe { cl!(clBuildProgram)(exe2, 0, null(), null(), None, null_mut()) });
    assert_eq!(run(&e, exe2, "apply", &x), want);

    // clBuildProgram of a compiled-object binary that holds everything.
    let all = source_program(
        &e,
        "int mix(int a, int b) { return a * 5 - b; }\n\
         __kernel void apply(__global int *out, __global const int *in) {\n\
             size_t i = get_global_id(0); out[i] = mix(in[i], (int)i) + 21; }\n",
    );
    ok(compile(&e, all, "", &[]));
    let (obj, err, st) = from_binary(&e, &binary_of(all));
    ok(err);
    ok(st);
    ok(unsafe { cl!(clBuildProgram)(obj, 0, null(), null(), None, null_mut()) });
    assert_eq!(
        binary_type(&e, obj),
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type
    );
    assert_eq!(run(&e, obj, "apply", &x), want);

    // Any damaged byte of any type gives CL_INVALID_BINARY, in the status too.
    for p in [k, lib, exe] {
        let good = binary_of(p);
        for at in [0, 9, 13, 20, 30, good.len() / 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x5a;
            let (q, err, st) = from_binary(&e, &bad);
            assert!(q.is_null(), "byte {at}");
            assert_eq!(
                (err, st),
                (CL_INVALID_BINARY, CL_INVALID_BINARY),
                "byte {at}"
            );
        }
        let (q, err, _) = from_binary(&e, &good[..good.len() - 1]);
        assert!(q.is_null());
        assert_eq!(err, CL_INVALID_BINARY);
    }
    for p in [k, m, lib, k2, lib2, exe, exe2, all, obj] {
        release(p);
    }
}

static CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn count_call(_p: cl_program, user: *mut c_void) {
    assert_eq!(user as usize, 0x1234);
    CALLS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn compile_and_link_error_codes() {
    let e = Env::new();

    // A compile error names the embedded header and its line.
    let bad_h = source_program(
        &e,
        "#define OK 1\nint broken(void) { return undeclared_name; }\n",
    );
    let p = source_program(
        &e,
        "#include \"bad.h\"\n__kernel void k(__global int *o) { o[0] = OK; }\n",
    );
    assert_eq!(
        compile(&e, p, "", &[("bad.h", bad_h)]),
        CL_COMPILE_PROGRAM_FAILURE
    );
    assert_eq!(build_status(&e, p), CL_BUILD_ERROR);
    let log = build_log(p, e.device);
    assert!(
        log.contains("bad.h:2:"),
        "log names the header and line: {log}"
    );
    assert!(
        !log.contains("/tmp/"),
        "no temporary paths in the log: {log}"
    );
    // Invalid compiler options.
    assert_eq!(
        compile(&e, p, "-not-an-option", &[]),
        CL_INVALID_COMPILER_OPTIONS
    );
    // Header arguments that do not agree.
    let o = CString::new("").unwrap();
    let r = unsafe {
        cl!(clCompileProgram)(
            p,
            1,
            &e.device,
            o.as_ptr(),
            1,
            null(),
            null_mut(),
            None,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE);
    let hp = [bad_h];
    let r = unsafe {
        cl!(clCompileProgram)(
            p,
            1,
            &e.device,
            o.as_ptr(),
            0,
            hp.as_ptr(),
            null_mut(),
            None,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE);

    // Callbacks are called exactly once per call, also when the step fails.
    let good = source_program(&e, "int twice(int x) { return 2 * x; }\n");
    let before = CALLS.load(Ordering::SeqCst);
    ok(unsafe {
        cl!(clCompileProgram)(
            good,
            0,
            null(),
            o.as_ptr(),
            0,
            null(),
            null_mut(),
            Some(count_call),
            0x1234 as *mut c_void,
        )
    });
    assert_eq!(CALLS.load(Ordering::SeqCst), before + 1);
    let mut err = 0;
    let inputs = [good];
    let linked = unsafe {
        cl!(clLinkProgram)(
            e.context,
            0,
            null(),
            o.as_ptr(),
            1,
            inputs.as_ptr(),
            Some(count_call),
            0x1234 as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    assert_eq!(CALLS.load(Ordering::SeqCst), before + 2);
    release(linked);

    // Invalid linker options; -enable-link-options needs -create-library.
    for opts in ["-cl-mad-enable", "-enable-link-options", "-DX=1"] {
        let (q, err) = link(&e, &[good], opts);
        assert!(q.is_null(), "{opts}");
        assert_eq!(err, CL_INVALID_LINKER_OPTIONS, "{opts}");
    }
    // A program that was not compiled cannot be linked.
    let raw = source_program(&e, "int f(int x) { return x; }\n");
    let (q, err) = link(&e, &[raw], "");
    assert!(q.is_null());
    assert_eq!(err, CL_INVALID_OPERATION);
    // An input of another context: CL_INVALID_CONTEXT (OpenCL 3.1 states it).
    let other = Env::new();
    let mut err = 0;
    let q = unsafe {
        cl!(clLinkProgram)(
            other.context,
            0,
            null(),
            o.as_ptr(),
            1,
            inputs.as_ptr(),
            None,
            null_mut(),
            &mut err,
        )
    };
    assert!(q.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    // Duplicate definitions: CL_LINK_PROGRAM_FAILURE, with a program that tells why.
    let dup = source_program(&e, "int twice(int x) { return x + x; }\n");
    ok(compile(&e, dup, "", &[]));
    let (q, err) = link(&e, &[good, dup], "");
    assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
    assert!(!q.is_null(), "a failed link still returns a program");
    assert_eq!(build_status(&e, q), CL_BUILD_ERROR);
    let log = build_log(q, e.device);
    assert!(log.contains("twice"), "the log names the symbol: {log}");
    release(q);
    // A function no input defines.
    let caller = source_program(
        &e,
        "int nowhere(int x);\n__kernel void k(__global int *o) { o[0] = nowhere(o[0]); }\n",
    );
    ok(compile(&e, caller, "", &[]));
    let (q, err) = link(&e, &[caller, good], "");
    assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
    let log = build_log(q, e.device);
    assert!(
        log.contains("nowhere"),
        "the log names the missing function: {log}"
    );
    release(q);
    release(caller);
    // Compiling or building a linked program, or compiling a binary program.
    let (lib, err) = link(&e, &[good], "-create-library");
    ok(err);
    assert_eq!(compile(&e, lib, "", &[]), CL_INVALID_OPERATION);
    assert_eq!(
        unsafe { cl!(clBuildProgram)(lib, 0, null(), null(), None, null_mut()) },
        CL_INVALID_OPERATION
    );
    let (fromb, err, _) = from_binary(&e, &binary_of(good));
    ok(err);
    assert_eq!(compile(&e, fromb, "", &[]), CL_INVALID_OPERATION);
    // clCompileProgram while kernels are attached.
    let kp = e.build("__kernel void k(__global int *o) { o[0] = 1; }\n");
    let kernel = e.kernel(kp, "k");
    assert_eq!(compile(&e, kp, "", &[]), CL_INVALID_OPERATION);
    unsafe { cl!(clReleaseKernel)(kernel) };
    ok(compile(&e, kp, "", &[]));
    for p in [bad_h, p, good, raw, dup, lib, fromb, kp] {
        release(p);
    }
}

/// Builds a kernel that records predefined macros and returns the recorded ints.
fn macro_probe(e: &Env, checks: &[&str], options: &str) -> Vec<i32> {
    let mut src = String::from("__kernel void probe(__global int *o) {\n");
    for (i, c) in checks.iter().enumerate() {
        src.push_str(&format!(
            "#if {c}\n o[{i}] = 1;\n#else\n o[{i}] = 0;\n#endif\n"
        ));
    }
    src.push_str(&format!(
        "o[{}] = __OPENCL_C_VERSION__;\n}}\n",
        checks.len()
    ));
    let p = e
        .try_build(&src, options)
        .unwrap_or_else(|(c, log)| panic!("{c}: {log}"));
    let out = e.buffer(CL_MEM_READ_WRITE, 4 * (checks.len() + 1), None);
    let k = e.kernel(p, "probe");
    set_arg(k, 0, &out);
    let g = 1usize;
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(e.queue, k, 1, null(), &g, null(), 0, null(), null_mut())
    });
    let v = e.read::<i32>(out, checks.len() + 1);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(out);
    }
    release(p);
    v
}

const FEATURES: &[&str] = &[
    "__opencl_c_3d_image_writes",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_device_enqueue",
    "__opencl_c_generic_address_space",
    "__opencl_c_fp64",
    "__opencl_c_int64",
    "__opencl_c_images",
    "__opencl_c_pipes",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_read_write_images",
    "__opencl_c_subgroups",
    "__opencl_c_work_group_collective_functions",
];

#[test]
fn predefined_macros_match_the_device() {
    let e = Env::new();
    // CL_DEVICE_OPENCL_C_FEATURES and CL_DEVICE_EXTENSIONS, as reported.
    let mut n = 0usize;
    ok(unsafe {
        cl!(clGetDeviceInfo)(e.device, CL_DEVICE_OPENCL_C_FEATURES, 0, null_mut(), &mut n)
    });
    let mut feats = vec![
        cl_name_version {
            version: 0,
            name: [0; 64]
        };
        n / std::mem::size_of::<cl_name_version>()
    ];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            e.device,
            CL_DEVICE_OPENCL_C_FEATURES,
            n,
            feats.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let reported: Vec<String> = feats
        .iter()
        .map(|f| {
            let b: Vec<u8> = f.name.iter().take_while(|&&c| c != 0).copied().collect();
            String::from_utf8(b).unwrap()
        })
        .collect();
    let exts = info_string(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(e.device, CL_DEVICE_EXTENSIONS, s, v, r)
    });
    let image: cl_bool = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(e.device, CL_DEVICE_IMAGE_SUPPORT, s, v, r)
    });

    let mut checks: Vec<String> = FEATURES.iter().map(|f| format!("defined({f})")).collect();
    checks.push("defined(__IMAGE_SUPPORT__)".into());
    checks.push("defined(cl_khr_fp64)".into());
    checks.push("defined(cl_khr_fp16)".into());
    checks.push("defined(cl_khr_byte_addressable_store)".into());
    checks.push("defined(CL_VERSION_3_0) && CL_VERSION_1_2 == 120".into());
    checks.push("defined(TEN) && TEN == 10".into());
    let refs: Vec<&str> = checks.iter().map(String::as_str).collect();
    for (std, version) in [("-cl-std=CL3.0", 300), ("-cl-std=CL1.2", 120), ("", 120)] {
        let got = macro_probe(&e, &refs, &format!("{std} -D TEN=10"));
        assert_eq!(
            got[checks.len()],
            version,
            "__OPENCL_C_VERSION__ with `{std}`"
        );
        if version == 300 {
            for (i, f) in FEATURES.iter().enumerate() {
                let want = reported.iter().any(|r| r == f);
                assert_eq!(
                    got[i] == 1,
                    want,
                    "{f}: macro vs CL_DEVICE_OPENCL_C_FEATURES"
                );
            }
        }
        let at = FEATURES.len();
        assert_eq!(got[at] == 1, image == CL_TRUE, "__IMAGE_SUPPORT__ ({std})");
        let has = |x: &str| exts.split(' ').any(|e| e == x);
        assert_eq!(got[at + 1] == 1, has("cl_khr_fp64"), "cl_khr_fp64 ({std})");
        assert_eq!(got[at + 2] == 1, has("cl_khr_fp16"), "cl_khr_fp16 ({std})");
        assert_eq!(
            got[at + 3] == 1,
            has("cl_khr_byte_addressable_store"),
            "cl_khr_byte_addressable_store ({std})"
        );
        assert_eq!(got[at + 4], 1, "CL_VERSION_* ({std})");
        assert_eq!(got[at + 5], 1, "-D TEN=10 ({std})");
    }
}

#[test]
fn language_version_and_warning_options() {
    let e = Env::new();
    // OpenCL C 2.0 is not offered by the device (CL_DEVICE_OPENCL_C_ALL_VERSIONS).
    let src = "__kernel void k(__global int *o) { o[0] = 1; }\n";
    let (code, log) = e
        .try_build(src, "-cl-std=CL2.0")
        .expect_err("no OpenCL C 2.0");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains("2.0"), "{log}");
    let (code, _) = e
        .try_build(src, "-cl-std=CL7.5")
        .expect_err("no such version");
    assert_eq!(code, CL_INVALID_BUILD_OPTIONS);
    // -Werror makes a warning fail the build; -w silences it.
    let warn = "#warning \"look here\"\n__kernel void k(__global int *o) { o[0] = 1; }\n";
    let p = e.try_build(warn, "").expect("warnings do not fail");
    let log = build_log(p, e.device);
    assert!(
        log.contains("<source>:1:"),
        "the warning names file and line: {log}"
    );
    release(p);
    let (code, log) = e.try_build(warn, "-Werror").expect_err("-Werror");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        log.contains("<source>:1:") && log.contains("error"),
        "{log}"
    );
    let p = e.try_build(warn, "-w").expect("-w");
    assert!(!build_log(p, e.device).contains("warning"));
    release(p);
    // -I finds a header directory.
    let dir = std::env::temp_dir().join(format!("vkcl-inc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("val.h"), "#define VAL 41\n").unwrap();
    let p = e
        .try_build(
            "#include \"val.h\"\n__kernel void k(__global int *o, __global const int *i) \
             { o[get_global_id(0)] = VAL + i[get_global_id(0)]; }\n",
            &format!("-I {}", dir.display()),
        )
        .unwrap_or_else(|(c, l)| panic!("{c}: {l}"));
    let x = input();
    let want: Vec<i32> = x.iter().map(|v| v + 41).collect();
    assert_eq!(run(&e, p, "k", &x), want);
    release(p);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The name of argument `i` of kernel `name` of `p`, or the clGetKernelArgInfo error.
fn arg_name(e: &Env, p: cl_program, name: &str, i: u32) -> Result<String, cl_int> {
    let k = e.kernel(p, name);
    let mut buf = [0u8; 64];
    let mut len = 0usize;
    let r = unsafe {
        cl!(clGetKernelArgInfo)(
            k,
            i,
            CL_KERNEL_ARG_NAME,
            buf.len(),
            buf.as_mut_ptr() as *mut c_void,
            &mut len,
        )
    };
    unsafe { cl!(clReleaseKernel)(k) };
    match r {
        CL_SUCCESS => Ok(String::from_utf8_lossy(&buf[..len.saturating_sub(1)]).into_owned()),
        e => Err(e),
    }
}

#[test]
fn argument_info_given_at_compile_survives_linking() {
    // OpenCL 3.0 5.10.11: -cl-kernel-arg-info may be given to clCompileProgram; the kernels of
    // the executable linked from that object (directly or through a library) answer.
    let e = Env::new();
    let src = "__kernel void k(__global int *out, __global const int *in) { out[get_global_id(0)] = in[get_global_id(0)] + 1; }";
    for (compile_opts, via_library, want) in [
        ("-cl-kernel-arg-info", false, Ok("in".to_string())),
        ("-cl-kernel-arg-info", true, Ok("in".to_string())),
        ("", false, Err(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)),
    ] {
        let p = source_program(&e, src);
        assert_eq!(compile(&e, p, compile_opts, &[]), CL_SUCCESS);
        let linked_from = if via_library {
            let (lib, r) = link(&e, &[p], "-create-library");
            assert_eq!(r, CL_SUCCESS);
            lib
        } else {
            p
        };
        let (exe, r) = link(&e, &[linked_from], "");
        assert_eq!(r, CL_SUCCESS);
        assert_eq!(
            arg_name(&e, exe, "k", 1),
            want,
            "{compile_opts:?}, library: {via_library}"
        );
        let inp = input();
        let want_out: Vec<i32> = inp.iter().map(|v| v + 1).collect();
        assert_eq!(run(&e, exe, "k", &inp), want_out);
    }
}
