//! The kernel API: build failures with their logs, `clSetKernelArg` / `clEnqueueNDRangeKernel`
//! / `clCreateKernel` error codes, kernel queries, and what vkcl refuses to build (with a
//! reason) or to launch.
//!
//! Run through the real ICD loader, every result compared with a host-computed answer. Split
//! from the former `tests/kernels.rs` (issue 17); shared helpers in `tests/common/kernels.rs`.
mod common;
use common::kernels::*;
use common::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};

// ---------------------------------------------------------------------------------------------
// Build failures, API errors, queries

#[test]
fn broken_source_fails_with_log_naming_the_line() {
    let env = Env::new();
    let src = "__kernel void ok(__global int *p) { p[0] = 1; }\n\
               \n\
               __kernel void broken(__global int *p) {\n\
                   p[0] = undefined_thing + 1;\n\
               }\n";
    let (err, log) = env.try_build(src, "").expect_err("the build must fail");
    assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains(":4:"), "log names line 4: {log}");
    assert!(log.contains("undefined_thing"), "{log}");
}

#[test]
fn set_kernel_arg_errors() {
    let env = Env::new();
    let k = env.kern(ARGS, "scalars");
    let f = 1.0f32;
    let set = |i: u32, size: usize, v: *const c_void| unsafe { cl!(clSetKernelArg)(k, i, size, v) };
    assert_eq!(
        set(1, 8, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_SIZE,
        "float given 8 bytes"
    );
    assert_eq!(
        set(6, 4, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_SIZE,
        "ulong given 4 bytes"
    );
    assert_eq!(
        set(0, 4, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_SIZE,
        "buffer given 4 bytes"
    );
    assert_eq!(
        set(7, 4, &f as *const f32 as *const c_void),
        CL_INVALID_ARG_INDEX
    );
    assert_eq!(
        set(1, 4, null()),
        CL_INVALID_ARG_VALUE,
        "NULL for a by-value argument"
    );
    let k2 = env.kern(LOCAL, "reduce_sum");
    let x = 0u32;
    let r = unsafe { cl!(clSetKernelArg)(k2, 2, 4, &x as *const u32 as *const c_void) };
    assert_eq!(r, CL_INVALID_ARG_VALUE, "non-NULL value for __local");
    // A __local argument of 0 bytes: an error before OpenCL 3.1, allowed by a 3.1 platform
    // (tests/opencl31.rs runs such a kernel).
    let r = unsafe { cl!(clSetKernelArg)(k2, 2, 0, null()) };
    let v31 = info_string(|s, v, r| unsafe {
        cl!(clGetPlatformInfo)(platform(), CL_PLATFORM_VERSION, s, v, r)
    })
    .starts_with("OpenCL 3.1 ");
    let want = if v31 { CL_SUCCESS } else { CL_INVALID_ARG_SIZE };
    assert_eq!(r, want, "__local of 0 bytes");
    let bogus = 0x1234usize as cl_mem;
    let r = unsafe {
        cl!(clSetKernelArg)(
            k2,
            0,
            std::mem::size_of::<cl_mem>(),
            &bogus as *const cl_mem as *const c_void,
        )
    };
    assert_eq!(r, CL_INVALID_MEM_OBJECT);
}

#[test]
fn enqueue_errors() {
    let env = Env::new();
    let k = env.kern(VADD, "vadd_float");
    assert_eq!(
        env.try_run(k, &[64], None, None),
        CL_INVALID_KERNEL_ARGS,
        "no argument set"
    );
    let m = env.zeros::<f32>(64);
    arg_mem(k, 0, m);
    arg_mem(k, 1, m);
    assert_eq!(
        env.try_run(k, &[64], None, None),
        CL_INVALID_KERNEL_ARGS,
        "one argument unset"
    );
    arg_mem(k, 2, m);
    env.run(k, &[64], None, None);

    let global = [64usize, 1, 1, 1];
    for dim in [0u32, 4] {
        let r = unsafe {
            cl!(clEnqueueNDRangeKernel)(
                env.queue,
                k,
                dim,
                null(),
                global.as_ptr(),
                null(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_INVALID_WORK_DIMENSION, "work_dim {dim}");
    }
    // An OpenCL C 1.2 program (no -cl-std) must have uniform work-groups (OpenCL 3.0 5.10):
    // a local size that does not divide the global size is CL_INVALID_WORK_GROUP_SIZE (see
    // non_uniform_work_groups_need_cl_std_2_or_later for the programs that may).
    assert_eq!(
        env.try_run(k, &[64], Some(&[5]), None),
        CL_INVALID_WORK_GROUP_SIZE
    );
    assert_eq!(
        env.try_run(k, &[64, 6], Some(&[8, 4]), None),
        CL_INVALID_WORK_GROUP_SIZE
    );
    assert_eq!(
        env.try_run(k, &[64], Some(&[0]), None),
        CL_INVALID_WORK_GROUP_SIZE,
        "a local size of 0"
    );
    let mut max_wg = 0usize;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MAX_WORK_GROUP_SIZE,
            8,
            &mut max_wg as *mut usize as *mut c_void,
            null_mut(),
        )
    });
    let mut sizes = [0usize; 3];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MAX_WORK_ITEM_SIZES,
            24,
            sizes.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let big = sizes[0] * 2;
    assert_eq!(
        env.try_run(k, &[big * 4], Some(&[big]), None),
        CL_INVALID_WORK_ITEM_SIZE,
        "local above the item size"
    );
    let side = sizes[0].min(sizes[1]);
    if side * side > max_wg {
        assert_eq!(
            env.try_run(k, &[side, side], Some(&[side, side]), None),
            CL_INVALID_WORK_GROUP_SIZE,
            "local above the group size"
        );
    }
    // reqd_work_group_size(8, 4, 1)
    let ka = env.kern(ARGS, "attributed");
    arg_mem(ka, 0, m);
    assert_eq!(
        env.try_run(ka, &[16, 4], Some(&[4, 4]), None),
        CL_INVALID_WORK_GROUP_SIZE
    );
    env.run(ka, &[16, 4], Some(&[8, 4]), None);
    let global = [64usize];
    let r = unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            null(),
            null(),
            0,
            null(),
            null_mut(),
        )
    };
    // OpenCL 2.1+: a NULL global size is an empty NDRange.
    assert_eq!(r, CL_SUCCESS, "NULL global size");
    let r = unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            null_mut(),
            1,
            null(),
            global.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_KERNEL);
}

#[test]
fn create_kernel_errors() {
    let env = Env::new();
    let p = env.build(VADD);
    let mut err = 0;
    let name = CString::new("no_such_kernel").unwrap();
    let k = unsafe { cl!(clCreateKernel)(p, name.as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_KERNEL_NAME);
    let k = unsafe { cl!(clCreateKernel)(p, null(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    let mut n = 0u32;
    ok(unsafe { cl!(clCreateKernelsInProgram)(p, 0, null_mut(), &mut n) });
    assert_eq!(n, 2);
}

#[test]
fn kernel_queries() {
    let env = Env::new();
    let p = env.build(ARGS);
    let k = env.kernel(p, "scalars");
    let num: cl_uint =
        info_scalar(|s, v, r| unsafe { cl!(clGetKernelInfo)(k, CL_KERNEL_NUM_ARGS, s, v, r) });
    assert_eq!(num, 7);
    let name =
        info_string(|s, v, r| unsafe { cl!(clGetKernelInfo)(k, CL_KERNEL_FUNCTION_NAME, s, v, r) });
    assert_eq!(name, "scalars");
    let wg: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(k, env.device, CL_KERNEL_WORK_GROUP_SIZE, s, v, r)
    });
    let mut max_wg = 0usize;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MAX_WORK_GROUP_SIZE,
            8,
            &mut max_wg as *mut usize as *mut c_void,
            null_mut(),
        )
    });
    assert!(wg >= 1 && wg <= max_wg);
    let mut compile = [9usize; 3];
    ok(unsafe {
        cl!(clGetKernelWorkGroupInfo)(
            k,
            env.device,
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
            24,
            compile.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(compile, [0, 0, 0]);
    let ka = env.kernel(p, "attributed");
    ok(unsafe {
        cl!(clGetKernelWorkGroupInfo)(
            ka,
            env.device,
            CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
            24,
            compile.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(compile, [8, 4, 1]);
    let wga: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(ka, env.device, CL_KERNEL_WORK_GROUP_SIZE, s, v, r)
    });
    assert_eq!(wga, 32);

    let kl = env.kern(LOCAL, "reduce_sum");
    arg_local(kl, 2, 1000);
    let lm: cl_ulong = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(kl, env.device, CL_KERNEL_LOCAL_MEM_SIZE, s, v, r)
    });
    assert!(lm >= 1000, "local memory {lm}");
    let kt = env.kern(LOCAL, "reverse_tile");
    let lm: cl_ulong = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(kt, env.device, CL_KERNEL_LOCAL_MEM_SIZE, s, v, r)
    });
    assert!(lm >= 256, "static local memory {lm}");

    // Without -cl-kernel-arg-info: not available.
    let mut q: cl_kernel_arg_address_qualifier = 0;
    let r = unsafe {
        cl!(clGetKernelArgInfo)(
            k,
            0,
            CL_KERNEL_ARG_ADDRESS_QUALIFIER,
            4,
            &mut q as *mut _ as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_KERNEL_ARG_INFO_NOT_AVAILABLE);

    let p = env.try_build(ARGS, "-cl-kernel-arg-info").unwrap();
    let k = env.kernel(p, "scalars");
    let arg_name = |i: u32| {
        info_string(|s, v, r| unsafe { cl!(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_NAME, s, v, r) })
    };
    let type_name = |i: u32| {
        info_string(|s, v, r| unsafe {
            cl!(clGetKernelArgInfo)(k, i, CL_KERNEL_ARG_TYPE_NAME, s, v, r)
        })
    };
    assert_eq!(arg_name(0), "out");
    assert_eq!(type_name(0), "float*");
    assert_eq!(arg_name(3), "c");
    assert_eq!(type_name(3), "uchar");
    assert_eq!(type_name(6), "ulong");
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_GLOBAL);
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_PRIVATE);
    let r = unsafe { cl!(clGetKernelArgInfo)(k, 7, CL_KERNEL_ARG_NAME, 0, null_mut(), null_mut()) };
    assert_eq!(r, CL_INVALID_ARG_INDEX);

    let p = env.try_build(CONSTANT, "-cl-kernel-arg-info").unwrap();
    let k = env.kernel(p, "blur");
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 2, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_CONSTANT);
    let tq: cl_kernel_arg_type_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 0, CL_KERNEL_ARG_TYPE_QUALIFIER, s, v, r)
    });
    assert_eq!(tq & CL_KERNEL_ARG_TYPE_CONST, CL_KERNEL_ARG_TYPE_CONST);
    let p = env.try_build(LOCAL, "-cl-kernel-arg-info").unwrap();
    let k = env.kernel(p, "reduce_sum");
    let aq: cl_kernel_arg_address_qualifier = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelArgInfo)(k, 2, CL_KERNEL_ARG_ADDRESS_QUALIFIER, s, v, r)
    });
    assert_eq!(aq, CL_KERNEL_ARG_ADDRESS_LOCAL);
}

// ---------------------------------------------------------------------------------------------
// Refused builds and launches

#[test]
fn double_transcendentals_fail_the_build_cleanly() {
    let env = Env::new();
    let src = "__kernel void dbl(__global double *d) { d[0] = exp(d[0]); }";
    if env.has_extension("cl_khr_fp64") {
        // exp(double) comes from the math library (libclc; its results: tests/fp64.rs);
        // without it (VKCL_LIBCLC=0) Vulkan has no 64-bit exp: a clean failure naming the
        // kernel.
        match env.try_build(src, "") {
            Ok(p) => unsafe {
                cl!(clReleaseProgram)(p);
            },
            Err((err, log)) => {
                assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
                assert!(log.contains("double") && log.contains("dbl"), "{log}");
            }
        }
    } else {
        let (err, log) = env
            .try_build(src, "")
            .expect_err("double without cl_khr_fp64");
        assert_eq!(err, CL_BUILD_PROGRAM_FAILURE);
        assert!(
            log.contains("double") && log.contains("cl_khr_fp64"),
            "{log}"
        );
    }
    // sqrt, fma, floor and friends do exist for doubles (where the device has them).
    let ok = "__kernel void ok(__global double *d) { d[0] = sqrt(d[0]) + fma(d[1], d[2], floor(d[3])); }";
    build_doubles(&env, ok, "");
    // A `double` only inside the kernel, whose sqrt would silently take the float overload
    // were the type enabled without the extension, for both language versions.
    let inner = "__kernel void k(__global float *f) { double x = f[0]; f[0] = (float)sqrt(x); }";
    for std in ["", "-cl-std=CL3.0"] {
        build_doubles(&env, inner, std);
    }
}

#[test]
fn known_limitations_fail_the_build_with_a_reason() {
    let env = Env::new();
    let cases = [
        // (A select between two private arrays builds since issue 22: tests/private_pointers.rs.)
        (
            include_str!("../src/compiler/testdata/unsupported.cl"),
            "variable_memcpy",
        ),
        (
            "__kernel void pf(__constant char *s) { printf(\"%s\\n\", s); }",
            "must be a constant string",
        ),
    ];
    for (src, reason) in cases {
        let (err, log) = env.try_build(src, "").expect_err(reason);
        assert_eq!(err, CL_BUILD_PROGRAM_FAILURE, "{log}");
        assert!(log.contains(reason), "log should mention `{reason}`: {log}");
    }
}

const NON_UNIFORM_IDS: &str = r#"
__kernel void ids(__global uint *out) {
    size_t i = get_global_id(0);
    out[i] = (uint)(i * 1000 + get_local_size(0) * 10 + get_group_id(0));
}
"#;

/// OpenCL 3.0 5.10, clEnqueueNDRangeKernel: a program from source supports non-uniform
/// work-groups only when built with -cl-std=CL2.0 or CL3.0 and without
/// -cl-uniform-work-group-size. Global 10, local 4: CL_INVALID_WORK_GROUP_SIZE for OpenCL C
/// 1.2 (no -cl-std, and -cl-std=CL1.2) and for CL3.0 with -cl-uniform-work-group-size; with
/// CL3.0 alone it runs groups of 4, 4 and 2, checked against the host. A linked program
/// supports them when its compiled inputs do; a uniform range runs in every case.
#[test]
fn non_uniform_work_groups_need_cl_std_2_or_later() {
    let env = Env::new();
    let run = |k: cl_kernel| {
        let out = env.zeros::<u32>(10);
        arg_mem(k, 0, out);
        let r = env.try_run(k, &[10], Some(&[4]), None);
        let got: Vec<u32> = env.read(out, 10);
        // A uniform range is fine whatever the options.
        let uni = env.zeros::<u32>(8);
        arg_mem(k, 0, uni);
        assert_eq!(env.try_run(k, &[8], Some(&[4]), None), CL_SUCCESS);
        let want: Vec<u32> = (0..8).map(|i| i * 1000 + 40 + i / 4).collect();
        assert_eq!(env.read::<u32>(uni, 8), want);
        unsafe {
            cl!(clReleaseMemObject)(out);
            cl!(clReleaseMemObject)(uni);
        }
        (r, got)
    };
    for opts in [
        "",
        "-cl-std=CL1.2",
        "-cl-std=CL3.0 -cl-uniform-work-group-size",
    ] {
        let k = env.kern_opts(NON_UNIFORM_IDS, opts, "ids");
        let (r, got) = run(k);
        assert_eq!(r, CL_INVALID_WORK_GROUP_SIZE, "options {opts:?}");
        assert_eq!(got, vec![0; 10], "nothing ran with options {opts:?}");
        unsafe { cl!(clReleaseKernel)(k) };
    }
    let k = env.kern_opts(NON_UNIFORM_IDS, "-cl-std=CL3.0", "ids");
    let (r, got) = run(k);
    assert_eq!(r, CL_SUCCESS);
    let want: Vec<u32> = (0..10u32)
        .map(|i| i * 1000 + if i < 8 { 40 } else { 20 } + i / 4)
        .collect();
    assert_eq!(got, want);
    unsafe { cl!(clReleaseKernel)(k) };

    // clCompileProgram + clLinkProgram: the compile options decide.
    for (opts, allowed) in [("-cl-std=CL3.0", true), ("", false)] {
        let src = std::ffi::CString::new(NON_UNIFORM_IDS).unwrap();
        let ptrs = [src.as_ptr()];
        let mut err = 0;
        let obj = unsafe {
            cl!(clCreateProgramWithSource)(
                env.context,
                1,
                ptrs.as_ptr() as *mut *const std::ffi::c_char,
                null(),
                &mut err,
            )
        };
        ok(err);
        let copts = std::ffi::CString::new(opts).unwrap();
        ok(unsafe {
            cl!(clCompileProgram)(
                obj,
                1,
                &env.device,
                copts.as_ptr(),
                0,
                null(),
                null_mut(),
                None,
                null_mut(),
            )
        });
        let linked = unsafe {
            cl!(clLinkProgram)(
                env.context,
                1,
                &env.device,
                null(),
                1,
                &obj,
                None,
                null_mut(),
                &mut err,
            )
        };
        ok(err);
        let k = env.kernel(linked, "ids");
        let (r, got) = run(k);
        if allowed {
            assert_eq!(r, CL_SUCCESS, "linked from {opts:?}");
            assert_eq!(got, want);
        } else {
            assert_eq!(r, CL_INVALID_WORK_GROUP_SIZE, "linked from {opts:?}");
        }
        unsafe {
            cl!(clReleaseKernel)(k);
            cl!(clReleaseProgram)(linked);
            cl!(clReleaseProgram)(obj);
        }
    }
}

/// Launches that follow each other without a wait, each with its own scalar argument and
/// global offset, on an in-order and an out-of-order queue: every launch must see its own
/// arguments. The device reuses the launch buffers of finished launches (`core::launch`,
/// `LaunchBuffers`); handing one out while a launch still reads it would show here as a
/// block of another launch's value (issue 17).
#[test]
fn back_to_back_launches_keep_their_own_arguments() {
    const LAUNCHES: usize = 300;
    const PER: usize = 64;
    for props in [0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE] {
        let env = Env::with_queue_properties(props);
        let k = env.kern(
            "__kernel void put(__global uint *out, uint v) {\n\
             size_t i = get_global_id(0); out[i] = v * 3u + (uint)i; }",
            "put",
        );
        let out = env.zeros::<u32>(LAUNCHES * PER);
        arg_mem(k, 0, out);
        for l in 0..LAUNCHES {
            let v = (l as u32).wrapping_mul(2654435761);
            set_arg(k, 1, &v);
            let (global, offset) = ([PER], [l * PER]);
            ok(unsafe {
                cl!(clEnqueueNDRangeKernel)(
                    env.queue,
                    k,
                    1,
                    offset.as_ptr(),
                    global.as_ptr(),
                    null(),
                    0,
                    null(),
                    null_mut(),
                )
            });
        }
        env.finish();
        let got = env.read::<u32>(out, LAUNCHES * PER);
        for l in 0..LAUNCHES {
            let v = (l as u32).wrapping_mul(2654435761);
            for j in 0..PER {
                let i = l * PER + j;
                assert_eq!(
                    got[i],
                    v.wrapping_mul(3).wrapping_add(i as u32),
                    "launch {l}, item {i}"
                );
            }
        }
    }
}
