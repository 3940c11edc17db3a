//! Without `VKCL_IMAGES` (the default) nothing of the image work is visible (docs/images.md):
//! no image support, no formats, and the image entry points give the errors of a device
//! without images.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn env() -> Env {
    // SAFETY: before the loader (and vkcl's settings) is first used in this process; every
    // test of this binary wants images off, whatever the caller's environment says.
    unsafe { std::env::remove_var("VKCL_IMAGES") };
    Env::new()
}

#[test]
fn image_entry_points_fail_as_without_images() {
    let env = env();
    let support: cl_bool = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_IMAGE_SUPPORT, s, v, r)
    });
    assert_eq!(support, CL_FALSE);
    let mut n: cl_uint = 7;
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(
            env.context,
            CL_MEM_READ_WRITE,
            CL_MEM_OBJECT_IMAGE2D,
            0,
            null_mut(),
            &mut n,
        )
    });
    assert_eq!(n, 0, "no formats");
    let fmt = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: 4,
        image_height: 4,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    let mut err = 0;
    let m = unsafe {
        cl!(clCreateImage)(
            env.context,
            CL_MEM_READ_WRITE,
            &fmt,
            &desc,
            null_mut(),
            &mut err,
        )
    };
    assert!(m.is_null());
    assert_eq!(err, CL_INVALID_OPERATION, "clCreateImage");
    let m = unsafe {
        cl!(clCreateImage2D)(
            env.context,
            CL_MEM_READ_WRITE,
            &fmt,
            4,
            4,
            0,
            null_mut(),
            &mut err,
        )
    };
    assert!(m.is_null());
    assert_eq!(err, CL_INVALID_OPERATION, "clCreateImage2D");
    let buf = env.buffer(CL_MEM_READ_WRITE, 64, None);
    let mut w = 0usize;
    let r = unsafe {
        cl!(clGetImageInfo)(
            buf,
            CL_IMAGE_WIDTH,
            8,
            &mut w as *mut usize as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_MEM_OBJECT, "clGetImageInfo of a buffer");
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, null(), &mut err) };
    ok(err);
    let (o, g) = ([0usize; 3], [1usize, 1, 1]);
    let color = [0u32; 4];
    let r = unsafe {
        ext!(clCommandFillImageKHR)(
            cb,
            null_mut(),
            null(),
            buf,
            color.as_ptr() as *const c_void,
            o.as_ptr(),
            g.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_OPERATION, "clCommandFillImageKHR");
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    ok(unsafe { cl!(clReleaseMemObject)(buf) });
    // Samplers: CL_INVALID_OPERATION when no device in the context supports images.
    let s = unsafe {
        cl!(clCreateSampler)(
            env.context,
            CL_TRUE,
            CL_ADDRESS_CLAMP,
            CL_FILTER_NEAREST,
            &mut err,
        )
    };
    assert!(s.is_null());
    assert_eq!(err, CL_INVALID_OPERATION, "clCreateSampler");
    let s = unsafe { cl!(clCreateSamplerWithProperties)(env.context, null(), &mut err) };
    assert!(s.is_null());
    assert_eq!(err, CL_INVALID_OPERATION, "clCreateSamplerWithProperties");
    assert_eq!(
        unsafe { cl!(clRetainSampler)(null_mut()) },
        CL_INVALID_SAMPLER
    );
    // Kernels with image or sampler arguments do not build, as before images.
    for src in [
        "kernel void k(write_only image2d_t i) { write_imagef(i, (int2)(0, 0), (float4)(1.0f)); }",
        "kernel void k(read_only image2d_t i, sampler_t s, global float4* o) { o[0] = read_imagef(i, s, (float2)(0.0f)); }",
    ] {
        match env.try_build(src, "") {
            Err((code, log)) => {
                assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
                assert!(log.contains("image support"), "log: {log}");
            }
            Ok(_) => panic!("an image kernel built without VKCL_IMAGES"),
        }
    }
}

/// clGetSupportedImageFormats of a device without images (OpenCL 3.0 section 5.3.2):
/// `CL_SUCCESS` and no formats for every valid `flags` (`CL_MEM_IMMUTABLE_EXT` too, as
/// cl_ext_immutable_memory_objects allows, with the host pointer flags the CTS's api
/// `negative_enqueue_map_image` passes) and image type; `CL_INVALID_VALUE` for invalid
/// flags (`CL_MEM_IMMUTABLE_EXT` with a write flag, undefined bits), an invalid image type, or
/// `num_entries` 0 with a non-NULL list. The immutable queries failed with
/// `CL_INVALID_VALUE`.
#[test]
fn format_queries_succeed_with_no_formats() {
    let env = env();
    assert!(env.has_extension("cl_ext_immutable_memory_objects"));
    let query = |flags: cl_mem_flags, ty: cl_mem_object_type| {
        let mut n: cl_uint = 7;
        let r = unsafe {
            cl!(clGetSupportedImageFormats)(env.context, flags, ty, 0, null_mut(), &mut n)
        };
        (r, n)
    };
    let types = [
        CL_MEM_OBJECT_IMAGE1D,
        CL_MEM_OBJECT_IMAGE1D_BUFFER,
        CL_MEM_OBJECT_IMAGE2D,
        CL_MEM_OBJECT_IMAGE3D,
        CL_MEM_OBJECT_IMAGE1D_ARRAY,
        CL_MEM_OBJECT_IMAGE2D_ARRAY,
    ];
    let valid = [
        CL_MEM_READ_WRITE,
        CL_MEM_READ_ONLY,
        CL_MEM_WRITE_ONLY,
        CL_MEM_KERNEL_READ_AND_WRITE,
        CL_MEM_READ_WRITE | CL_MEM_KERNEL_READ_AND_WRITE,
        CL_MEM_IMMUTABLE_EXT,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_USE_HOST_PTR,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_COPY_HOST_PTR,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS,
    ];
    for ty in types {
        for flags in valid {
            assert_eq!(
                query(flags, ty),
                (CL_SUCCESS, 0),
                "flags {flags:#x}, type {ty:#x}"
            );
            // The CTS's second call: num_entries 0, a NULL list, no count.
            let r = unsafe {
                cl!(clGetSupportedImageFormats)(env.context, flags, ty, 0, null_mut(), null_mut())
            };
            assert_eq!(r, CL_SUCCESS, "flags {flags:#x}, type {ty:#x}, no count");
        }
    }
    let invalid = [
        CL_MEM_IMMUTABLE_EXT | CL_MEM_READ_WRITE,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_WRITE_ONLY,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_HOST_WRITE_ONLY,
        CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
        CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
        1 << 40,
    ];
    for flags in invalid {
        assert_eq!(
            query(flags, CL_MEM_OBJECT_IMAGE2D).0,
            CL_INVALID_VALUE,
            "flags {flags:#x}"
        );
    }
    assert_eq!(
        query(CL_MEM_READ_WRITE, CL_MEM_OBJECT_BUFFER).0,
        CL_INVALID_VALUE
    );
    let mut f = cl_image_format {
        image_channel_order: 0,
        image_channel_data_type: 0,
    };
    let r = unsafe {
        cl!(clGetSupportedImageFormats)(
            env.context,
            CL_MEM_IMMUTABLE_EXT,
            CL_MEM_OBJECT_IMAGE2D,
            0,
            &mut f,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "num_entries 0 with a list");
}
