//! `VKCL_COMMAND_BUFFER_REVISION=0.9.8`: the device reports cl_khr_command_buffer 0.9.8
//! instead of the final 1.0.0 (the same ABI and semantics), with mutable dispatch 0.9.5, for
//! applications that check for that revision. Its own test binary: the setting is read once
//! per process.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// The versions of the named extensions in `CL_DEVICE_EXTENSIONS_WITH_VERSION`.
fn versions(d: cl_device_id, names: &[&str]) -> Vec<Option<cl_version>> {
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
    names
        .iter()
        .map(|name| {
            list.iter()
                .find(|e| {
                    unsafe { std::ffi::CStr::from_ptr(e.name.as_ptr() as *const std::ffi::c_char) }
                        .to_bytes()
                        == name.as_bytes()
                })
                .map(|e| e.version)
        })
        .collect()
}

#[test]
fn revision_098_is_reported() {
    // SAFETY: set before the loader (and vkcl) is first used; the only test of this binary.
    unsafe { std::env::set_var("VKCL_COMMAND_BUFFER_REVISION", "0.9.8") };
    let d = device();
    let v = versions(
        d,
        &[
            "cl_khr_command_buffer",
            "cl_khr_command_buffer_mutable_dispatch",
        ],
    );
    assert_eq!(v[0], Some((9 << 12) | 8), "CL_MAKE_VERSION(0, 9, 8)");
    assert_eq!(v[1], Some((9 << 12) | 5), "mutable dispatch 0.9.5");
    // The 0.9.5+ recording ABI (with `properties`) stays: a command buffer records and runs.
    let env = Env::new();
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, std::ptr::null(), &mut err) };
    ok(err);
    let data: Vec<u32> = (0..64).collect();
    let (src, dst) = (env.buf(&data), env.zeros::<u32>(64));
    ok(unsafe {
        ext!(clCommandCopyBufferKHR)(
            cb,
            null_mut(),
            std::ptr::null(),
            src,
            dst,
            0,
            0,
            256,
            0,
            std::ptr::null(),
            null_mut(),
            null_mut(),
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    ok(unsafe {
        ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, std::ptr::null(), null_mut())
    });
    env.finish();
    assert_eq!(env.read::<u32>(dst, 64), data);
    unsafe {
        ext!(clReleaseCommandBufferKHR)(cb);
        cl!(clReleaseMemObject)(src);
        cl!(clReleaseMemObject)(dst);
    }
}
