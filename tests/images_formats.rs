//! Image formats under `VKCL_IMAGES=1` whose reads depend on the driver (docs/images.md,
//! "Formats"): a format listed for reading reads exactly as OpenCL 3.0 converts (section
//! 8.3.1.1, within 1.5 ulp), with a sampler and without; one that cannot is not listed and
//! clCreateImage refuses it with `CL_IMAGE_FORMAT_NOT_SUPPORTED`. Answers from the host.
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// The 2D image formats the context lists for `flags` (`clGetSupportedImageFormats`).
fn formats(env: &Env, flags: cl_mem_flags) -> Vec<cl_image_format> {
    let mut n = 0;
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(
            env.context,
            flags,
            CL_MEM_OBJECT_IMAGE2D,
            0,
            null_mut(),
            &mut n,
        )
    });
    let mut v = vec![
        cl_image_format {
            image_channel_order: 0,
            image_channel_data_type: 0
        };
        n as usize
    ];
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(
            env.context,
            flags,
            CL_MEM_OBJECT_IMAGE2D,
            n,
            v.as_mut_ptr(),
            null_mut(),
        )
    });
    v
}

/// Whether the context lists `f` for `flags` and 2D images.
fn listed(env: &Env, flags: cl_mem_flags, f: (u32, u32)) -> bool {
    formats(env, flags)
        .iter()
        .any(|x| x.image_channel_order == f.0 && x.image_channel_data_type == f.1)
}

/// `CL_RGB`/`CL_UNORM_SHORT_565`, 32 x 64 texels holding every 5- and 6-bit value, read
/// with a nearest sampler and without one: each channel is x / 31 or x / 63 (alpha 1)
/// within 1.5 ulp. Lavapipe samples such an image through 8-bit channels
/// (`((x << 3) | (x >> 2)) / 255`, 0.16078 for 5 / 31 = 0.16129), so there the format is not
/// listed for reading and creating a readable image of it is refused.
#[test]
fn unorm_short_565_reads_are_exact_or_refused() {
    let env = env();
    let f = (CL_RGB, CL_UNORM_SHORT_565);
    let (w, h) = (32usize, 64usize);
    let texel = |x: usize, y: usize| -> [u32; 3] { [x as u32, y as u32, ((x + y) % 32) as u32] };
    let mut bytes = Vec::with_capacity(w * h * 2);
    for y in 0..h {
        for x in 0..w {
            let [r, g, b] = texel(x, y);
            bytes.extend(((r << 11 | g << 5 | b) as u16).to_le_bytes());
        }
    }
    let format = cl_image_format {
        image_channel_order: f.0,
        image_channel_data_type: f.1,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: w,
        image_height: h,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    for access in [CL_MEM_READ_ONLY, CL_MEM_READ_WRITE] {
        let mut err = 0;
        let img = unsafe {
            cl!(clCreateImage)(
                env.context,
                access | CL_MEM_COPY_HOST_PTR,
                &format,
                &desc,
                bytes.as_ptr() as *mut c_void,
                &mut err,
            )
        };
        if !listed(&env, access, f) {
            assert_eq!(err, CL_IMAGE_FORMAT_NOT_SUPPORTED, "access {access:#x}");
            assert!(img.is_null());
            continue;
        }
        ok(err);
        let k = env.kern_opts(
            "kernel void k(read_only image2d_t img, sampler_t s, global float4* a, global float4* b) {
                int2 c = (int2)(get_global_id(0), get_global_id(1));
                int i = c.y * get_image_width(img) + c.x;
                a[i] = read_imagef(img, s, c);
                b[i] = read_imagef(img, c);
            }",
            "-cl-std=CL3.0",
            "k",
        );
        let mut serr = 0;
        let s = unsafe {
            cl!(clCreateSampler)(
                env.context,
                CL_FALSE,
                CL_ADDRESS_CLAMP_TO_EDGE,
                CL_FILTER_NEAREST,
                &mut serr,
            )
        };
        ok(serr);
        let (a, b) = (env.zeros::<[f32; 4]>(w * h), env.zeros::<[f32; 4]>(w * h));
        arg_mem(k, 0, img);
        set_arg(k, 1, &s);
        arg_mem(k, 2, a);
        arg_mem(k, 3, b);
        env.run(k, &[w, h], None, None);
        for (what, out) in [("sampled", a), ("samplerless", b)] {
            let got: Vec<[f32; 4]> = env.read(out, w * h);
            for y in 0..h {
                for x in 0..w {
                    let [r, g, bl] = texel(x, y);
                    let want = [r as f64 / 31.0, g as f64 / 63.0, bl as f64 / 31.0, 1.0];
                    for c in 0..4 {
                        let v = got[y * w + x][c] as f64;
                        let ulp = (want[c] as f32).abs().max(f32::MIN_POSITIVE);
                        let ulp = (f32::from_bits(ulp.to_bits() + 1) - ulp) as f64;
                        assert!(
                            (v - want[c]).abs() <= 1.5 * ulp,
                            "{what} ({x}, {y}) channel {c}: {v}, expected {}",
                            want[c]
                        );
                    }
                }
            }
        }
        unsafe {
            cl!(clReleaseMemObject)(a);
            cl!(clReleaseMemObject)(b);
            cl!(clReleaseSampler)(s);
            cl!(clReleaseKernel)(k);
            cl!(clReleaseMemObject)(img);
        }
    }
}

/// The formats listed for `CL_MEM_IMMUTABLE_EXT` (cl_ext_immutable_memory_objects: "flags
/// may also be CL_MEM_IMMUTABLE_EXT to query image formats that may be used to create
/// immutable images"), with the host pointer flags of the CTS's api
/// `negative_enqueue_map_image`: the query succeeds, lists formats, and each makes an
/// immutable 2D image from host data. The query failed with `CL_INVALID_VALUE`.
#[test]
fn immutable_formats_are_listed_and_create_immutable_images() {
    let env = env();
    let bytes = [0x5au8; 4 * 4 * 16];
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
    for flags in [
        CL_MEM_IMMUTABLE_EXT | CL_MEM_USE_HOST_PTR,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_COPY_HOST_PTR,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
    ] {
        let list = formats(&env, flags);
        assert!(!list.is_empty(), "flags {flags:#x}: no formats");
        for f in &list {
            let mut err = 0;
            let img = unsafe {
                cl!(clCreateImage)(
                    env.context,
                    flags,
                    f,
                    &desc,
                    bytes.as_ptr() as *mut c_void,
                    &mut err,
                )
            };
            assert_eq!(
                err, CL_SUCCESS,
                "flags {flags:#x}, format {:#x}/{:#x}",
                f.image_channel_order, f.image_channel_data_type
            );
            ok(unsafe { cl!(clReleaseMemObject)(img) });
        }
    }
}
