//! `VKCL_COMMAND_BUFFER_REVISION=0.9.4`: the device reports cl_khr_command_buffer 0.9.4 (and
//! no mutable dispatch), and the extension lookup hands out the recording functions without
//! the `properties` parameter (Debian bookworm's CL/cl_ext.h). Its own test binary: the
//! setting is read once per process.
mod common;
use common::*;
use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

type CopyFn = unsafe extern "C" fn(
    cl_command_buffer_khr,
    cl_command_queue,
    cl_mem,
    cl_mem,
    usize,
    usize,
    usize,
    cl_uint,
    *const cl_sync_point_khr,
    *mut cl_sync_point_khr,
    *mut cl_mutable_command_khr,
) -> cl_int;
type FillFn = unsafe extern "C" fn(
    cl_command_buffer_khr,
    cl_command_queue,
    cl_mem,
    *const c_void,
    usize,
    usize,
    usize,
    cl_uint,
    *const cl_sync_point_khr,
    *mut cl_sync_point_khr,
    *mut cl_mutable_command_khr,
) -> cl_int;
type BarrierFn = unsafe extern "C" fn(
    cl_command_buffer_khr,
    cl_command_queue,
    cl_uint,
    *const cl_sync_point_khr,
    *mut cl_sync_point_khr,
    *mut cl_mutable_command_khr,
) -> cl_int;

fn address(name: &str) -> *mut c_void {
    let c = std::ffi::CString::new(name).unwrap();
    unsafe {
        cl!(clGetExtensionFunctionAddressForPlatform)(platform(), c.as_ptr() as *const c_char)
    }
}

#[test]
fn revision_094_abi() {
    // SAFETY: set before the loader (and vkcl) is first used; the only test of this binary.
    unsafe { std::env::set_var("VKCL_COMMAND_BUFFER_REVISION", "0.9.4") };
    let env = Env::new();
    let d = device();
    let exts =
        info_string(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_EXTENSIONS, s, v, r) });
    assert!(exts.split(' ').any(|e| e == "cl_khr_command_buffer"));
    assert!(!exts.contains("cl_khr_command_buffer_mutable_dispatch"));
    let mut n = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, null_mut(), &mut n)
    });
    let mut list = vec![
        unsafe { std::mem::zeroed::<cl_name_version>() };
        n / std::mem::size_of::<cl_name_version>()
    ];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            n,
            list.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let v = list
        .iter()
        .find(|e| {
            unsafe { std::ffi::CStr::from_ptr(e.name.as_ptr() as *const c_char) }.to_bytes()
                == b"cl_khr_command_buffer"
        })
        .unwrap()
        .version;
    assert_eq!(v, (9 << 12) | 4, "CL_MAKE_VERSION(0, 9, 4)");
    assert!(address("clUpdateMutableCommandsKHR").is_null());
    assert!(address("clCommandSVMMemcpyKHR").is_null());

    // SAFETY: vkcl's functions of these names have the 0.9.4 signatures under this setting.
    let (copy, fill, barrier) = unsafe {
        (
            std::mem::transmute::<*mut c_void, CopyFn>(address("clCommandCopyBufferKHR")),
            std::mem::transmute::<*mut c_void, FillFn>(address("clCommandFillBufferKHR")),
            std::mem::transmute::<*mut c_void, BarrierFn>(address(
                "clCommandBarrierWithWaitListKHR",
            )),
        )
    };
    let create: clCreateCommandBufferKHR_t = unsafe {
        std::mem::transmute::<*mut c_void, clCreateCommandBufferKHR_t>(address(
            "clCreateCommandBufferKHR",
        ))
    };
    let finalize: clFinalizeCommandBufferKHR_t = unsafe {
        std::mem::transmute::<*mut c_void, clFinalizeCommandBufferKHR_t>(address(
            "clFinalizeCommandBufferKHR",
        ))
    };
    let enqueue: clEnqueueCommandBufferKHR_t = unsafe {
        std::mem::transmute::<*mut c_void, clEnqueueCommandBufferKHR_t>(address(
            "clEnqueueCommandBufferKHR",
        ))
    };
    let release: clReleaseCommandBufferKHR_t = unsafe {
        std::mem::transmute::<*mut c_void, clReleaseCommandBufferKHR_t>(address(
            "clReleaseCommandBufferKHR",
        ))
    };
    let mut err = 0;
    let cb = unsafe { create.unwrap()(1, &env.queue, null(), &mut err) };
    ok(err);
    let a = env.buffer(CL_MEM_READ_WRITE, 64, None);
    let b = env.buffer(CL_MEM_READ_WRITE, 64, None);
    let word = 0x0102_0304u32;
    let (mut s1, mut s2) = (0, 0);
    unsafe {
        ok(fill(
            cb,
            null_mut(),
            a,
            &word as *const u32 as *const c_void,
            4,
            0,
            64,
            0,
            null(),
            &mut s1,
            null_mut(),
        ));
        ok(barrier(cb, null_mut(), 1, &s1, &mut s2, null_mut()));
        ok(copy(
            cb,
            null_mut(),
            a,
            b,
            0,
            0,
            64,
            1,
            &s2,
            null_mut(),
            null_mut(),
        ));
        assert_eq!(
            copy(
                cb,
                env.queue,
                a,
                b,
                0,
                0,
                64,
                0,
                null(),
                null_mut(),
                null_mut()
            ),
            CL_INVALID_COMMAND_QUEUE
        );
        ok(finalize.unwrap()(cb));
        ok(enqueue.unwrap()(0, null_mut(), cb, 0, null(), null_mut()));
    }
    env.finish();
    assert!(env.read::<u32>(b, 16).iter().all(|&x| x == word));
    unsafe {
        release.unwrap()(cb);
        cl!(clReleaseMemObject)(a);
        cl!(clReleaseMemObject)(b);
    }
}
