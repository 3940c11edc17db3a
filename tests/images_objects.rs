//! Image objects behind `VKCL_IMAGES=1` (docs/images.md): clCreateImage of every type made
//! (1D, 1D array, 2D, 2D array, 3D) with and without host pointers and pitches,
//! clGetImageInfo and the image fields of clGetMemObjectInfo, release, and the error codes
//! of creation and of images given where buffers are expected.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn env() -> Env {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used in this
    // process; every test of this binary wants the same value.
    unsafe { std::env::set_var("VKCL_IMAGES", "1") };
    Env::new()
}

fn fmt(order: cl_channel_order, ty: cl_channel_type) -> cl_image_format {
    cl_image_format {
        image_channel_order: order,
        image_channel_data_type: ty,
    }
}

/// A descriptor: `size` is width, height, depth, array size as clCreateImage reads them.
fn desc(ty: cl_mem_object_type, size: [usize; 4], pitches: [usize; 2]) -> cl_image_desc {
    cl_image_desc {
        image_type: ty,
        image_width: size[0],
        image_height: size[1],
        image_depth: size[2],
        image_array_size: size[3],
        image_row_pitch: pitches[0],
        image_slice_pitch: pitches[1],
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    }
}

fn create(
    env: &Env,
    flags: cl_mem_flags,
    f: Option<&cl_image_format>,
    d: Option<&cl_image_desc>,
    host: *mut c_void,
) -> Result<cl_mem, cl_int> {
    let mut err = 0;
    let m = unsafe {
        cl!(clCreateImage)(
            env.context,
            flags,
            f.map_or(null(), |f| f as *const _),
            d.map_or(null(), |d| d as *const _),
            host,
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        assert!(!m.is_null());
        Ok(m)
    } else {
        assert!(m.is_null(), "an error and an object");
        Err(err)
    }
}

fn image_info<T: Copy + Default>(m: cl_mem, p: cl_image_info) -> T {
    info_scalar(|s, v, r| unsafe { cl!(clGetImageInfo)(m, p, s, v, r) })
}

fn mem_info<T: Copy + Default>(m: cl_mem, p: cl_mem_info) -> T {
    info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(m, p, s, v, r) })
}

fn device_size(env: &Env, p: cl_device_info) -> usize {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(env.device, p, s, v, r) })
}

#[test]
fn every_type_is_made_and_reports_its_shape() {
    let env = env();
    let rgba8 = fmt(CL_RGBA, CL_UNORM_INT8);
    // type, (width, height, depth, array size), reported (height, depth, array size),
    // tight slice pitch
    let cases: [(cl_mem_object_type, [usize; 4], [usize; 3], usize); 5] = [
        (CL_MEM_OBJECT_IMAGE1D, [37, 0, 0, 0], [0, 0, 0], 0),
        (
            CL_MEM_OBJECT_IMAGE1D_ARRAY,
            [19, 0, 0, 5],
            [0, 0, 5],
            19 * 4,
        ),
        (CL_MEM_OBJECT_IMAGE2D, [23, 17, 0, 0], [17, 0, 0], 0),
        (
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            [13, 11, 0, 4],
            [11, 0, 4],
            13 * 11 * 4,
        ),
        (CL_MEM_OBJECT_IMAGE3D, [9, 7, 5, 0], [7, 5, 0], 9 * 7 * 4),
    ];
    for (ty, size, shown, slice) in cases {
        let d = desc(ty, size, [0, 0]);
        let m = create(&env, CL_MEM_READ_WRITE, Some(&rgba8), Some(&d), null_mut())
            .unwrap_or_else(|e| panic!("type {ty:#x}: {e}"));
        let f: [cl_uint; 2] = image_info(m, CL_IMAGE_FORMAT);
        let f = fmt(f[0], f[1]);
        assert_eq!(
            (f.image_channel_order, f.image_channel_data_type),
            (CL_RGBA, CL_UNORM_INT8)
        );
        assert_eq!(image_info::<usize>(m, CL_IMAGE_ELEMENT_SIZE), 4);
        assert_eq!(image_info::<usize>(m, CL_IMAGE_WIDTH), size[0]);
        assert_eq!(image_info::<usize>(m, CL_IMAGE_HEIGHT), shown[0], "{ty:#x}");
        assert_eq!(image_info::<usize>(m, CL_IMAGE_DEPTH), shown[1], "{ty:#x}");
        assert_eq!(
            image_info::<usize>(m, CL_IMAGE_ARRAY_SIZE),
            shown[2],
            "{ty:#x}"
        );
        assert_eq!(image_info::<usize>(m, CL_IMAGE_ROW_PITCH), size[0] * 4);
        assert_eq!(
            image_info::<usize>(m, CL_IMAGE_SLICE_PITCH),
            slice,
            "{ty:#x}"
        );
        assert_eq!(image_info::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS), 0);
        assert_eq!(image_info::<cl_uint>(m, CL_IMAGE_NUM_SAMPLES), 0);
        assert!(image_info::<cl_mem>(m, CL_IMAGE_BUFFER).is_null());
        assert_eq!(mem_info::<cl_mem_object_type>(m, CL_MEM_TYPE), ty);
        let texels: usize = size.iter().filter(|&&v| v != 0).product();
        assert_eq!(mem_info::<usize>(m, CL_MEM_SIZE), texels * 4, "{ty:#x}");
        assert_eq!(mem_info::<cl_mem_flags>(m, CL_MEM_FLAGS), CL_MEM_READ_WRITE);
        assert_eq!(mem_info::<cl_uint>(m, CL_MEM_REFERENCE_COUNT), 1);
        // Migration takes images as it takes buffers (it only orders).
        ok(unsafe { cl!(clEnqueueMigrateMemObjects)(env.queue, 1, &m, 0, 0, null(), null_mut()) });
        env.finish();
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
}

#[test]
fn host_pointers_and_pitches_are_kept() {
    let env = env();
    let r32f = fmt(CL_R, CL_FLOAT);
    // A 2D image of 5x3 floats in rows of 32 bytes (padding in each row).
    let mut host = vec![0u8; 32 * 3];
    let d = desc(CL_MEM_OBJECT_IMAGE2D, [5, 3, 0, 0], [32, 0]);
    let hp = host.as_mut_ptr() as *mut c_void;
    let m = create(
        &env,
        CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
        Some(&r32f),
        Some(&d),
        hp,
    )
    .expect("USE_HOST_PTR with a row pitch");
    assert_eq!(image_info::<usize>(m, CL_IMAGE_ROW_PITCH), 32);
    assert_eq!(mem_info::<*mut c_void>(m, CL_MEM_HOST_PTR), hp);
    assert_eq!(mem_info::<usize>(m, CL_MEM_SIZE), 96);
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    // A 3D image with a slice pitch larger than rows x height.
    let d = desc(CL_MEM_OBJECT_IMAGE3D, [4, 2, 3, 0], [16, 48]);
    let mut host = vec![0u8; 48 * 3];
    let m = create(
        &env,
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        Some(&r32f),
        Some(&d),
        host.as_mut_ptr() as *mut c_void,
    )
    .expect("COPY_HOST_PTR with a slice pitch");
    assert_eq!(image_info::<usize>(m, CL_IMAGE_SLICE_PITCH), 48);
    assert!(
        mem_info::<*mut c_void>(m, CL_MEM_HOST_PTR).is_null(),
        "COPY_HOST_PTR keeps none"
    );
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    let d = desc(CL_MEM_OBJECT_IMAGE2D, [64, 64, 0, 0], [0, 0]);
    let m = create(
        &env,
        CL_MEM_ALLOC_HOST_PTR,
        Some(&r32f),
        Some(&d),
        null_mut(),
    )
    .expect("ALLOC_HOST_PTR");
    assert_eq!(
        mem_info::<cl_mem_flags>(m, CL_MEM_FLAGS),
        CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE
    );
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

#[test]
fn creation_errors() {
    let env = env();
    let rgba8 = fmt(CL_RGBA, CL_UNORM_INT8);
    let d2 = desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0, 0], [0, 0]);
    let mut host = vec![0u8; 1 << 16];
    let hp = host.as_mut_ptr() as *mut c_void;
    let rw = CL_MEM_READ_WRITE;
    let copy = CL_MEM_COPY_HOST_PTR;
    let e = |flags, f: Option<&cl_image_format>, d: Option<&cl_image_desc>, h| {
        create(&env, flags, f, d, h).map(|m| unsafe { cl!(clReleaseMemObject)(m) })
    };
    assert_eq!(
        e(rw, None, Some(&d2), null_mut()),
        Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    );
    let bad_order = fmt(0x1234, CL_UNORM_INT8);
    assert_eq!(
        e(rw, Some(&bad_order), Some(&d2), null_mut()),
        Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    );
    let packed_rgba = fmt(CL_RGBA, CL_UNORM_SHORT_565);
    assert_eq!(
        e(rw, Some(&packed_rgba), Some(&d2), null_mut()),
        Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
        "565 needs CL_RGB"
    );
    assert_eq!(
        e(rw, Some(&rgba8), None, null_mut()),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    let bad = |f: &dyn Fn(&mut cl_image_desc)| {
        let mut d = d2;
        f(&mut d);
        d
    };
    for (what, d) in [
        (
            "unknown type",
            bad(&|d| d.image_type = CL_MEM_OBJECT_BUFFER),
        ),
        ("width 0", bad(&|d| d.image_width = 0)),
        ("height 0", bad(&|d| d.image_height = 0)),
        ("mip levels", bad(&|d| d.num_mip_levels = 1)),
        ("samples", bad(&|d| d.num_samples = 1)),
        (
            "row pitch without a host pointer",
            bad(&|d| d.image_row_pitch = 64),
        ),
        (
            "a buffer for a 2D image",
            bad(&|d| d.buffer = env.buffer(rw, 256, None)),
        ),
        (
            "1D buffer without a buffer",
            bad(&|d| d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER),
        ),
        (
            "array size 0",
            bad(&|d| d.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY),
        ),
    ] {
        assert_eq!(
            e(rw, Some(&rgba8), Some(&d), null_mut()),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "{what}"
        );
    }
    for (what, d) in [
        (
            "row pitch below width x 4",
            bad(&|d| d.image_row_pitch = 28),
        ),
        (
            "row pitch not a multiple of 4",
            bad(&|d| d.image_row_pitch = 34),
        ),
        (
            "3D slice pitch below row pitch x height",
            desc(CL_MEM_OBJECT_IMAGE3D, [8, 8, 2, 0], [32, 200]),
        ),
        (
            "3D slice pitch not a multiple of the row pitch",
            desc(CL_MEM_OBJECT_IMAGE3D, [8, 8, 2, 0], [32, 260]),
        ),
        (
            "1D array slice pitch below the row pitch",
            desc(CL_MEM_OBJECT_IMAGE1D_ARRAY, [8, 0, 0, 2], [32, 16]),
        ),
    ] {
        assert_eq!(
            e(rw | copy, Some(&rgba8), Some(&d), hp),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "{what}"
        );
    }
    let max2d = device_size(&env, CL_DEVICE_IMAGE2D_MAX_WIDTH);
    let max3d = device_size(&env, CL_DEVICE_IMAGE3D_MAX_DEPTH);
    let layers = device_size(&env, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
    for (what, d) in [
        ("2D width", bad(&|d| d.image_width = max2d + 1)),
        ("2D height", bad(&|d| d.image_height = max2d + 1)),
        (
            "3D depth",
            desc(CL_MEM_OBJECT_IMAGE3D, [4, 4, max3d + 1, 0], [0, 0]),
        ),
        (
            "array size",
            desc(CL_MEM_OBJECT_IMAGE1D_ARRAY, [4, 0, 0, layers + 1], [0, 0]),
        ),
    ] {
        assert_eq!(
            e(rw, Some(&rgba8), Some(&d), null_mut()),
            Err(CL_INVALID_IMAGE_SIZE),
            "{what}"
        );
    }
    assert_eq!(
        e(rw | copy, Some(&rgba8), Some(&d2), null_mut()),
        Err(CL_INVALID_HOST_PTR)
    );
    assert_eq!(e(rw, Some(&rgba8), Some(&d2), hp), Err(CL_INVALID_HOST_PTR));
    assert_eq!(
        e(
            CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
            Some(&rgba8),
            Some(&d2),
            null_mut()
        ),
        Err(CL_INVALID_VALUE)
    );
    assert_eq!(
        e(
            CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_READ_ONLY,
            Some(&rgba8),
            Some(&d2),
            null_mut()
        ),
        Err(CL_INVALID_VALUE)
    );
    // A defined format without a Vulkan twin (1D buffer images: tests/images_buffer.rs).
    let alpha = fmt(CL_A, CL_UNORM_INT8);
    assert_eq!(
        e(rw, Some(&alpha), Some(&d2), null_mut()),
        Err(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    );
    // The deprecated entry points: their own size rule.
    let mut err = 0;
    let m = unsafe { cl!(clCreateImage2D)(env.context, rw, &rgba8, 0, 8, 0, null_mut(), &mut err) };
    assert!(m.is_null());
    assert_eq!(err, CL_INVALID_IMAGE_SIZE);
    let m = unsafe {
        cl!(clCreateImage3D)(env.context, rw, &rgba8, 4, 4, 2, 0, 0, null_mut(), &mut err)
    };
    ok(err);
    assert_eq!(
        mem_info::<cl_mem_object_type>(m, CL_MEM_TYPE),
        CL_MEM_OBJECT_IMAGE3D
    );
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    let bad_ctx = unsafe { cl!(clCreateImage)(null_mut(), rw, &rgba8, &d2, null_mut(), &mut err) };
    assert!(bad_ctx.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
}

#[test]
fn images_are_refused_where_buffers_go() {
    let env = env();
    let rgba8 = fmt(CL_RGBA, CL_UNORM_INT8);
    let d2 = desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0, 0], [0, 0]);
    let img = create(&env, CL_MEM_READ_WRITE, Some(&rgba8), Some(&d2), null_mut()).unwrap();
    let buf = env.buffer(CL_MEM_READ_WRITE, 256, None);
    let mut out = [0u8; 256];
    let read = |m| unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            m,
            CL_TRUE,
            0,
            16,
            out.as_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(
        read(img),
        CL_INVALID_MEM_OBJECT,
        "clEnqueueReadBuffer of an image"
    );
    ok(read(buf));
    let copy = |s, d| unsafe {
        cl!(clEnqueueCopyBuffer)(env.queue, s, d, 0, 0, 16, 0, null(), null_mut())
    };
    assert_eq!(copy(buf, img), CL_INVALID_MEM_OBJECT);
    assert_eq!(copy(img, buf), CL_INVALID_MEM_OBJECT);
    let region = cl_buffer_region {
        origin: 0,
        size: 16,
    };
    let mut err = 0;
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            img,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    assert!(sub.is_null());
    assert_eq!(err, CL_INVALID_MEM_OBJECT, "clCreateSubBuffer of an image");
    let k = env.kern("kernel void k(global int *p) { p[0] = 1; }", "k");
    let r = unsafe {
        cl!(clSetKernelArg)(
            k,
            0,
            std::mem::size_of::<cl_mem>(),
            &img as *const cl_mem as *const c_void,
        )
    };
    assert_eq!(r, CL_INVALID_MEM_OBJECT, "an image for a global pointer");
    let r = unsafe {
        cl!(clGetImageInfo)(
            buf,
            CL_IMAGE_WIDTH,
            8,
            out.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_MEM_OBJECT, "clGetImageInfo of a buffer");
    assert_eq!(
        mem_info::<cl_mem_object_type>(buf, CL_MEM_TYPE),
        CL_MEM_OBJECT_BUFFER
    );
    ok(unsafe { cl!(clReleaseKernel)(k) });
    ok(unsafe { cl!(clReleaseMemObject)(img) });
    ok(unsafe { cl!(clReleaseMemObject)(buf) });
}
