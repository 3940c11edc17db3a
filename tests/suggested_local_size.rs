//! clGetKernelSuggestedLocalWorkSize (OpenCL 3.1 API 5.9.4; cl_khr_suggested_local_work_size's
//! clGetKernelSuggestedLocalWorkSizeKHR) through the real loader: found by both names and in
//! the dispatch table's OpenCL 3.1 slot (what a 3.1 ICD loader calls; ocl-icd 2.3 exports no
//! such symbol), each answer checked against the local size a launch with a NULL local size
//! uses (the kernel writes `get_local_size`), the kernel's and device's limits, a required
//! work-group size, and every error code.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

type Suggest = unsafe extern "C" fn(
    cl_command_queue,
    cl_kernel,
    cl_uint,
    *const usize,
    *const usize,
    *mut usize,
) -> cl_int;

/// The function by `name` (clGetExtensionFunctionAddressForPlatform).
fn by_name(name: &str) -> Suggest {
    let n = std::ffi::CString::new(name).unwrap();
    let p = unsafe { cl!(clGetExtensionFunctionAddressForPlatform)(platform(), n.as_ptr()) };
    assert!(!p.is_null(), "{name} not found");
    // SAFETY: vkcl's function of that name has this signature (CL/cl.h, CL/cl_ext.h).
    unsafe { std::mem::transmute::<*mut c_void, Suggest>(p) }
}

/// The OpenCL 3.1 slot of the dispatch table that `k`'s handle points to (the last entry of
/// cl_icd_dispatch in CL/cl_icd.h of OpenCL-Headers a1b9cce: after the 3.0 entries).
fn from_dispatch_table(k: cl_kernel) -> Suggest {
    // SAFETY: every vkcl handle starts with a pointer to its dispatch table (cl_khr_icd).
    let table = unsafe { *(k as *const *const opencl_sys::cl_icd::cl_icd_dispatch) };
    // SAFETY: vkcl's table is a whole cl_icd_dispatch; the 3.1 slot is an integer in
    // opencl-sys's 3.0 layout.
    let slot = unsafe { (*table).clGetKernelSuggestedLocalWorkSize } as usize;
    assert_ne!(slot, 0, "the 3.1 slot is empty");
    // SAFETY: the slot holds a function of this signature.
    unsafe { std::mem::transmute::<usize, Suggest>(slot) }
}

const SRC: &str = r#"
__kernel void sizes(__global uint *out, __local uint *scratch) {
    if (get_global_id(0) == 0 && get_global_id(1) == 0 && get_global_id(2) == 0) {
        out[0] = get_local_size(0);
        out[1] = get_local_size(1);
        out[2] = get_local_size(2);
    }
    scratch[0] = 0;
}
__kernel __attribute__((reqd_work_group_size(4, 2, 1)))
void fixed(__global uint *out) {
    out[0] = get_local_size(0) * 100 + get_local_size(1);
}
"#;

fn suggest(f: Suggest, q: cl_command_queue, k: cl_kernel, global: &[usize]) -> Vec<usize> {
    let mut local = vec![0usize; global.len()];
    ok(unsafe {
        f(
            q,
            k,
            global.len() as cl_uint,
            null(),
            global.as_ptr(),
            local.as_mut_ptr(),
        )
    });
    local
}

#[test]
fn suggestions_match_the_launch_and_the_limits() {
    let env = Env::new();
    let p = env
        .try_build(SRC, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "sizes");
    let out = env.zeros::<u32>(3);
    arg_mem(k, 0, out);
    arg_local(k, 1, 16);
    let khr = by_name("clGetKernelSuggestedLocalWorkSizeKHR");
    let core = by_name("clGetKernelSuggestedLocalWorkSize");
    let table = from_dispatch_table(k);
    assert_eq!(khr as usize, core as usize, "one function under both names");
    let kernel_max: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(k, env.device, CL_KERNEL_WORK_GROUP_SIZE, s, v, r)
    });
    let mut item_max = [0usize; 3];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_MAX_WORK_ITEM_SIZES,
            std::mem::size_of_val(&item_max),
            item_max.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let cases: [&[usize]; 8] = [
        &[1],
        &[7],
        &[64],
        &[1000],
        &[1 << 20],
        &[100, 30],
        &[5, 6, 7],
        &[1, 1, 64],
    ];
    for global in cases {
        let local = suggest(khr, env.queue, k, global);
        assert_eq!(suggest(core, env.queue, k, global), local);
        assert_eq!(
            suggest(table, env.queue, k, global),
            local,
            "dispatch table"
        );
        for (d, (&g, &l)) in global.iter().zip(&local).enumerate() {
            assert!(
                l >= 1 && g % l == 0,
                "{global:?}: {local:?} does not divide"
            );
            assert!(
                l <= item_max[d],
                "{global:?}: {local:?} over the item limit"
            );
        }
        assert!(
            local.iter().product::<usize>() <= kernel_max,
            "{global:?}: {local:?}"
        );
        // The local size a launch with a NULL local size uses.
        env.run(k, global, None, None);
        let used = env.read::<u32>(out, 3);
        let want: Vec<u32> = (0..3).map(|d| *local.get(d).unwrap_or(&1) as u32).collect();
        assert_eq!(used, want, "{global:?}");
    }
    // A required work-group size is the suggestion (and what the launch uses).
    let fixed = env.kernel(p, "fixed");
    arg_mem(fixed, 0, out);
    assert_eq!(suggest(khr, env.queue, fixed, &[8, 6]), vec![4, 2]);
    env.run(fixed, &[8, 6], None, None);
    assert_eq!(env.read::<u32>(out, 1), vec![402]);
}

#[test]
fn error_codes() {
    let env = Env::new();
    let f = by_name("clGetKernelSuggestedLocalWorkSize");
    let p = env
        .try_build(SRC, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "sizes");
    let g = [64usize, 1, 1];
    let mut l = [0usize; 3];
    let call = |q: cl_command_queue,
                k: cl_kernel,
                dim: u32,
                off: *const usize,
                g: *const usize,
                l: *mut usize| unsafe { f(q, k, dim, off, g, l) };
    // CL_INVALID_KERNEL_ARGS: no argument set yet.
    assert_eq!(
        call(env.queue, k, 1, null(), g.as_ptr(), l.as_mut_ptr()),
        CL_INVALID_KERNEL_ARGS
    );
    let out = env.zeros::<u32>(3);
    arg_mem(k, 0, out);
    assert_eq!(
        call(env.queue, k, 1, null(), g.as_ptr(), l.as_mut_ptr()),
        CL_INVALID_KERNEL_ARGS,
        "one of two arguments set"
    );
    arg_local(k, 1, 16);
    ok(call(env.queue, k, 1, null(), g.as_ptr(), l.as_mut_ptr()));
    // CL_INVALID_COMMAND_QUEUE, CL_INVALID_KERNEL (called directly, so the loader never reads
    // through the bad handles).
    let bogus = 0x1234usize as *mut c_void;
    assert_eq!(
        call(
            bogus as cl_command_queue,
            k,
            1,
            null(),
            g.as_ptr(),
            l.as_mut_ptr()
        ),
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(
        call(null_mut(), k, 1, null(), g.as_ptr(), l.as_mut_ptr()),
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(
        call(
            env.queue,
            bogus as cl_kernel,
            1,
            null(),
            g.as_ptr(),
            l.as_mut_ptr()
        ),
        CL_INVALID_KERNEL
    );
    // CL_INVALID_CONTEXT: a queue of another context.
    let other = Env::new();
    assert_eq!(
        call(other.queue, k, 1, null(), g.as_ptr(), l.as_mut_ptr()),
        CL_INVALID_CONTEXT
    );
    // CL_INVALID_WORK_DIMENSION.
    for dim in [0, 4] {
        assert_eq!(
            call(env.queue, k, dim, null(), g.as_ptr(), l.as_mut_ptr()),
            CL_INVALID_WORK_DIMENSION,
            "work_dim {dim}"
        );
    }
    // CL_INVALID_GLOBAL_WORK_SIZE: NULL, or a zero entry.
    assert_eq!(
        call(env.queue, k, 1, null(), null(), l.as_mut_ptr()),
        CL_INVALID_GLOBAL_WORK_SIZE
    );
    let zero = [64usize, 0, 1];
    assert_eq!(
        call(env.queue, k, 2, null(), zero.as_ptr(), l.as_mut_ptr()),
        CL_INVALID_GLOBAL_WORK_SIZE
    );
    // CL_INVALID_GLOBAL_OFFSET: offset + size beyond size_t.
    let off = [usize::MAX - 10, 0, 0];
    assert_eq!(
        call(env.queue, k, 1, off.as_ptr(), g.as_ptr(), l.as_mut_ptr()),
        CL_INVALID_GLOBAL_OFFSET
    );
    // An offset that fits is fine.
    let off = [5usize, 0, 0];
    ok(call(
        env.queue,
        k,
        1,
        off.as_ptr(),
        g.as_ptr(),
        l.as_mut_ptr(),
    ));
    // CL_INVALID_VALUE: no output array.
    assert_eq!(
        call(env.queue, k, 1, null(), g.as_ptr(), null_mut()),
        CL_INVALID_VALUE
    );
    // CL_INVALID_PROGRAM_EXECUTABLE cannot be reached: a kernel exists only for a program
    // with an executable, and a queue of its context is on one of the program's devices.
}
