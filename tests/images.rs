//! Images, the runtime half behind `VKCL_IMAGES=1` (docs/images.md): the device's image
//! support and limits, clGetSupportedImageFormats (the OpenCL 3.0 minimum list, counts, errors).
mod common;
use common::*;
use std::ptr::null_mut;

fn env() -> Env {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used in this
    // process; every test of this binary wants the same value.
    unsafe { std::env::set_var("VKCL_IMAGES", "1") };
    Env::new()
}

fn dev<T: Copy + Default>(env: &Env, p: cl_device_info) -> T {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(env.device, p, s, v, r) })
}

fn formats(env: &Env, flags: cl_mem_flags, ty: cl_mem_object_type) -> Vec<(u32, u32)> {
    let mut n: cl_uint = 0;
    ok(unsafe { cl!(clGetSupportedImageFormats)(env.context, flags, ty, 0, null_mut(), &mut n) });
    let mut v = vec![
        cl_image_format {
            image_channel_order: 0,
            image_channel_data_type: 0
        };
        n as usize
    ];
    if n == 0 {
        // num_entries 0 with an array is CL_INVALID_VALUE: nothing more to ask.
        return Vec::new();
    }
    let mut m: cl_uint = 0;
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(env.context, flags, ty, n, v.as_mut_ptr(), &mut m)
    });
    assert_eq!(m, n, "the count is the same with and without an array");
    v.iter()
        .map(|f| (f.image_channel_order, f.image_channel_data_type))
        .collect()
}

const TYPES12: [cl_channel_type; 12] = [
    CL_UNORM_INT8,
    CL_UNORM_INT16,
    CL_SNORM_INT8,
    CL_SNORM_INT16,
    CL_SIGNED_INT8,
    CL_SIGNED_INT16,
    CL_SIGNED_INT32,
    CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16,
    CL_UNSIGNED_INT32,
    CL_HALF_FLOAT,
    CL_FLOAT,
];

#[test]
fn device_reports_images_and_the_drivers_limits() {
    let env = env();
    assert_eq!(dev::<cl_bool>(&env, CL_DEVICE_IMAGE_SUPPORT), CL_TRUE);
    // The OpenCL 3.0 minimums for a device with images (full profile), which the Vulkan
    // limits behind them meet on lavapipe.
    for (p, min) in [
        (CL_DEVICE_IMAGE2D_MAX_WIDTH, 16384),
        (CL_DEVICE_IMAGE2D_MAX_HEIGHT, 16384),
        (CL_DEVICE_IMAGE3D_MAX_WIDTH, 2048),
        (CL_DEVICE_IMAGE3D_MAX_HEIGHT, 2048),
        (CL_DEVICE_IMAGE3D_MAX_DEPTH, 2048),
        (CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, 65536),
        (CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, 2048),
    ] {
        let v: usize = dev(&env, p);
        assert!(v >= min, "{p:#x}: {v} < {min}");
    }
    for (p, min) in [
        (CL_DEVICE_MAX_READ_IMAGE_ARGS, 8),
        (CL_DEVICE_MAX_WRITE_IMAGE_ARGS, 8),
        (CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, 8),
        (CL_DEVICE_MAX_SAMPLERS, 8),
    ] {
        let v: cl_uint = dev(&env, p);
        assert!(v >= min, "{p:#x}: {v} < {min}");
        eprintln!("{p:#x} = {v}");
    }
    // 2D images from buffers are refused (docs/images.md): OpenCL 3.0 then requires both
    // alignments to be 0, and no cl_khr_image2d_from_buffer.
    for p in [
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT,
        CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT,
    ] {
        let v: cl_uint = dev(&env, p);
        assert_eq!(v, 0, "{p:#x}");
    }
    assert!(!env.has_extension("cl_khr_image2d_from_buffer"));
}

#[test]
fn supported_formats_hold_the_minimum_list() {
    let env = env();
    for ty in [
        CL_MEM_OBJECT_IMAGE1D,
        CL_MEM_OBJECT_IMAGE1D_ARRAY,
        CL_MEM_OBJECT_IMAGE2D,
        CL_MEM_OBJECT_IMAGE2D_ARRAY,
        CL_MEM_OBJECT_IMAGE3D,
    ] {
        // OpenCL 3.0 table "Minimum list of supported image formats": CL_R, CL_RG and
        // CL_RGBA with every non-packed type, and CL_BGRA UNORM_INT8, for reads and writes.
        for flags in [CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE] {
            let list = formats(&env, flags, ty);
            for order in [CL_R, CL_RG, CL_RGBA] {
                for t in TYPES12 {
                    assert!(
                        list.contains(&(order, t)),
                        "type {ty:#x} flags {flags:#x}: ({order:#x}, {t:#x}) missing"
                    );
                }
            }
            assert!(list.contains(&(CL_BGRA, CL_UNORM_INT8)), "BGRA unorm8");
            // No format twice, no format vkcl has no Vulkan twin for.
            let mut sorted = list.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), list.len(), "duplicates in {list:?}");
            assert!(!list.iter().any(|&(o, _)| o == CL_A || o == CL_LUMINANCE));
        }
        // Read-write images: CL_R and CL_RGBA with the types of the minimum list.
        let rw = formats(&env, CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_READ_WRITE, ty);
        if rw.is_empty() {
            // lavapipe 22.3.6 (measured): no read-write format at all, the driver lacking what
            // kernel reads of a storage image without a format need; such a device cannot
            // offer `__opencl_c_read_write_images`, and images stay behind VKCL_IMAGES.
            eprintln!("type {ty:#x}: no read-write format (driver lacks the feature)");
            continue;
        }
        for order in [CL_R, CL_RGBA] {
            for t in [CL_UNORM_INT8, CL_SIGNED_INT32, CL_UNSIGNED_INT32, CL_FLOAT] {
                assert!(rw.contains(&(order, t)), "read-write ({order:#x}, {t:#x})");
            }
        }
    }
    // Only as many as asked are written; the count is all of them.
    let all = formats(&env, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D);
    let mut two = [cl_image_format {
        image_channel_order: 0,
        image_channel_data_type: 0,
    }; 3];
    let mut n: cl_uint = 0;
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(
            env.context,
            CL_MEM_READ_ONLY,
            CL_MEM_OBJECT_IMAGE2D,
            2,
            two.as_mut_ptr(),
            &mut n,
        )
    });
    assert_eq!(n as usize, all.len());
    assert_eq!(
        (two[1].image_channel_order, two[1].image_channel_data_type),
        all[1]
    );
    assert_eq!(
        two[2].image_channel_order, 0,
        "entry past num_entries written"
    );
}

#[test]
fn formats_for_1d_buffer_images() {
    // Texel-buffer formats (tests/images_buffer.rs makes and uses them): RGBA8 at least.
    let env = env();
    for flags in [CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE] {
        let list = formats(&env, flags, CL_MEM_OBJECT_IMAGE1D_BUFFER);
        assert!(
            list.contains(&(CL_RGBA, CL_UNORM_INT8)),
            "{flags:#x}: {list:?}"
        );
    }
}

#[test]
fn supported_formats_errors() {
    let env = env();
    let mut f = cl_image_format {
        image_channel_order: 0,
        image_channel_data_type: 0,
    };
    let call = |flags, ty, n, p: *mut cl_image_format| unsafe {
        cl!(clGetSupportedImageFormats)(env.context, flags, ty, n, p, null_mut())
    };
    assert_eq!(
        call(CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, &mut f),
        CL_INVALID_VALUE,
        "num_entries 0 with an array"
    );
    assert_eq!(
        call(CL_MEM_READ_ONLY, CL_MEM_OBJECT_BUFFER, 1, &mut f),
        CL_INVALID_VALUE,
        "a buffer is no image type"
    );
    assert_eq!(
        call(
            CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
            CL_MEM_OBJECT_IMAGE2D,
            1,
            &mut f
        ),
        CL_INVALID_VALUE,
        "exclusive access flags"
    );
    assert_eq!(
        call(CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 1, &mut f),
        CL_SUCCESS
    );
    let bad = unsafe {
        cl!(clGetSupportedImageFormats)(
            null_mut(),
            CL_MEM_READ_ONLY,
            CL_MEM_OBJECT_IMAGE2D,
            0,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(bad, CL_INVALID_CONTEXT);
}
