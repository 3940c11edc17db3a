//! `VKCL_COMMAND_BUFFER_MULTI_DEVICE=0`: `cl_khr_command_buffer_multi_device` is not reported,
//! and command buffers follow the base extension's one-queue rules (the CTS's negative tests
//! of cl_khr_command_buffer check these; they skip where the multi-device extension is
//! reported). Its own test binary: the setting is read once per process.
mod common;
use common::*;
use std::ptr::{null, null_mut};

#[test]
fn one_queue_rules_without_the_multi_device_extension() {
    // SAFETY: set before the loader (and vkcl) is first used; the only test of this binary.
    unsafe { std::env::set_var("VKCL_COMMAND_BUFFER_MULTI_DEVICE", "0") };
    let env = Env::new();
    assert!(!env.has_extension("cl_khr_command_buffer_multi_device"));
    assert!(env.has_extension("cl_khr_command_buffer"));
    let f = unsafe {
        cl!(clGetExtensionFunctionAddressForPlatform)(
            platform(),
            c"clRemapCommandBufferKHR".as_ptr(),
        )
    };
    assert!(f.is_null(), "no clRemapCommandBufferKHR");
    let caps: cl_device_command_buffer_capabilities_khr = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
            s,
            v,
            r,
        )
    });
    assert_eq!(caps & CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR, 0);
    let mut n = 0;
    let r = unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR,
            0,
            null_mut(),
            &mut n,
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "no multi-device device query");
    let r = unsafe {
        cl!(clGetPlatformInfo)(
            env.platform,
            CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR,
            0,
            null_mut(),
            &mut n,
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "no multi-device platform query");
    let create = ext!(clCreateCommandBufferKHR);
    let mut err = 0;
    let two = [env.queue, env.queue];
    assert!(unsafe { create(2, two.as_ptr(), null(), &mut err) }.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "two queues");
    let sync = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR,
        0,
    ];
    assert!(unsafe { create(1, &env.queue, sync.as_ptr(), &mut err) }.is_null());
    assert_eq!(err, CL_INVALID_PROPERTY, "the device-side sync flag");
    let cb = unsafe { create(1, &env.queue, null(), &mut err) };
    ok(err);
    let (a, b) = (env.zeros::<u32>(16), env.zeros::<u32>(16));
    let copy = |queue: cl_command_queue| unsafe {
        ext!(clCommandCopyBufferKHR)(
            cb,
            queue,
            null(),
            a,
            b,
            0,
            0,
            64,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(
        copy(env.queue),
        CL_INVALID_COMMAND_QUEUE,
        "command_queue must be NULL"
    );
    ok(copy(null_mut()));
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    let mut q = [env.queue];
    ok(unsafe { ext!(clEnqueueCommandBufferKHR)(1, q.as_mut_ptr(), cb, 0, null(), null_mut()) });
    env.finish();
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
}
