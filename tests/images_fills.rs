//! Image fills and the image commands' error codes behind `VKCL_IMAGES=1`
//! (docs/images.md): clEnqueueFillImage of several formats in every image type against
//! host-converted texels; bounds, pitches, NULL arguments, host access flags, events.
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// The host's answer for one channel value of a fill.
fn unorm(x: f32, max: f32) -> u32 {
    (x.clamp(0.0, 1.0) * max).round_ties_even() as u32
}

#[test]
fn fills_convert_the_colour() {
    let env = env();
    let mut rng = Rng(11);
    let fc = [0.2f32, 0.7, -0.4, 1.25];
    let f = fc.map(f32::to_bits);
    let ic = [-200i32, 40000, 7, -3];
    let i = ic.map(|v| v as u32);
    let uc = [300u32, 70000, 9, 5_000_000_000u64 as u32];
    let bytes = |v: &[u8]| v.to_vec();
    // (format, element size, colour words, the expected texel)
    let formats: Vec<((u32, u32), usize, [u32; 4], Vec<u8>)> = vec![
        (
            RGBA8,
            4,
            f,
            vec![unorm(0.2, 255.0) as u8, unorm(0.7, 255.0) as u8, 0, 255],
        ),
        (
            (CL_BGRA, CL_UNORM_INT8),
            4,
            f,
            vec![0, unorm(0.7, 255.0) as u8, unorm(0.2, 255.0) as u8, 255],
        ),
        (R32F, 4, f, bytes(&0.2f32.to_le_bytes())),
        (
            (CL_RGBA, CL_UNSIGNED_INT32),
            16,
            uc,
            uc.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        (
            (CL_RGBA, CL_SIGNED_INT32),
            16,
            i,
            ic.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        ((CL_RG, CL_SIGNED_INT8), 2, i, vec![(-128i8) as u8, 127]),
        (
            (CL_RG, CL_UNSIGNED_INT16),
            4,
            uc,
            [300u16, 65535]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            (CL_RG, CL_SNORM_INT16),
            4,
            f,
            [
                (0.2f32 * 32767.0).round_ties_even() as i16,
                (0.7f32 * 32767.0).round_ties_even() as i16,
            ]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        ),
        (
            (CL_RGBA, CL_SNORM_INT8),
            4,
            f,
            vec![
                (0.2f32 * 127.0).round_ties_even() as i8 as u8,
                (0.7f32 * 127.0).round_ties_even() as i8 as u8,
                (-0.4f32 * 127.0).round_ties_even() as i8 as u8,
                127,
            ],
        ),
        (
            (CL_RGBA, CL_UNORM_INT16),
            8,
            f,
            [unorm(0.2, 65535.0), unorm(0.7, 65535.0), 0, 65535]
                .iter()
                .flat_map(|&v| (v as u16).to_le_bytes())
                .collect(),
        ),
        (
            (CL_RGBA, CL_HALF_FLOAT),
            8,
            f,
            fc.iter()
                .flat_map(|&v| half::f16::from_f32(v).to_bits().to_le_bytes())
                .collect(),
        ),
    ];
    for (fmt, elem, color, texel) in formats {
        assert_eq!(texel.len(), elem, "{fmt:?}: the expected texel's size");
        for (ty, ext, o, r) in cases() {
            let mut img = Img::new(&env, ty, ext, fmt, elem, &mut rng);
            ok(unsafe {
                cl!(clEnqueueFillImage)(
                    env.queue,
                    img.mem,
                    color.as_ptr() as *const c_void,
                    o.as_ptr(),
                    r.as_ptr(),
                    0,
                    null(),
                    null_mut(),
                )
            });
            let n = r.iter().product::<usize>();
            img.put(o, r, &texel.repeat(n));
            img.check(&env, &format!("fill of {fmt:x?} in {ty:#x}"));
            ok(unsafe { cl!(clReleaseMemObject)(img.mem) });
        }
    }
}

#[test]
fn command_errors() {
    let env = env();
    let mut rng = Rng(5);
    let img = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, [8, 8, 1], RGBA8, 4, &mut rng);
    let arr = Img::new(
        &env,
        CL_MEM_OBJECT_IMAGE1D_ARRAY,
        [8, 4, 1],
        RGBA8,
        4,
        &mut rng,
    );
    let mut out = vec![0u8; 4096];
    let r = |o: [usize; 3], g: [usize; 3], p| read_image(&env, img.mem, o, g, p, &mut out.clone());
    assert_eq!(r([0; 3], [8, 8, 1], (0, 0)), CL_SUCCESS);
    assert_eq!(
        r([1, 0, 0], [8, 8, 1], (0, 0)),
        CL_INVALID_VALUE,
        "x beyond the width"
    );
    assert_eq!(
        r([0, 0, 0], [8, 9, 1], (0, 0)),
        CL_INVALID_VALUE,
        "y beyond the height"
    );
    assert_eq!(
        r([0, 0, 0], [8, 8, 0], (0, 0)),
        CL_INVALID_VALUE,
        "region[2] 0"
    );
    assert_eq!(
        r([0, 0, 0], [8, 8, 2], (0, 0)),
        CL_INVALID_VALUE,
        "region[2] 2 of a 2D image"
    );
    assert_eq!(
        r([0; 3], [8, 8, 1], (31, 0)),
        CL_INVALID_VALUE,
        "row pitch below 8 x 4"
    );
    assert_eq!(
        r([0; 3], [8, 8, 1], (32, 256)),
        CL_INVALID_VALUE,
        "slice pitch of a 2D image"
    );
    let ra = |p| read_image(&env, arr.mem, [0; 3], [8, 4, 1], p, &mut out.clone());
    assert_eq!(
        ra((32, 16)),
        CL_INVALID_VALUE,
        "1D array slice pitch below the row pitch"
    );
    assert_eq!(ra((32, 48)), CL_SUCCESS, "1D array slice pitch above it");
    let o = [0usize; 3];
    let g = [1usize, 1, 1];
    let null_ptr = unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            img.mem,
            CL_TRUE,
            o.as_ptr(),
            g.as_ptr(),
            0,
            0,
            null_mut(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(null_ptr, CL_INVALID_VALUE, "NULL ptr");
    let null_origin = unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            img.mem,
            CL_TRUE,
            null(),
            g.as_ptr(),
            0,
            0,
            out.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(null_origin, CL_INVALID_VALUE, "NULL origin");
    let buf = env.buffer(CL_MEM_READ_WRITE, 4096, None);
    assert_eq!(
        read_image(&env, buf, o, g, (0, 0), &mut out),
        CL_INVALID_MEM_OBJECT,
        "a buffer as the image"
    );
    let fill = unsafe {
        cl!(clEnqueueFillImage)(
            env.queue,
            img.mem,
            null(),
            o.as_ptr(),
            g.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(fill, CL_INVALID_VALUE, "NULL fill colour");
    // Host access flags.
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
    for (flags, read_ok, write_ok) in [
        (CL_MEM_HOST_NO_ACCESS, false, false),
        (CL_MEM_HOST_READ_ONLY, true, false),
        (CL_MEM_HOST_WRITE_ONLY, false, true),
    ] {
        let mut err = 0;
        let m =
            unsafe { cl!(clCreateImage)(env.context, flags, &fmt, &desc, null_mut(), &mut err) };
        ok(err);
        let code = |b| if b { CL_SUCCESS } else { CL_INVALID_OPERATION };
        assert_eq!(
            read_image(&env, m, o, g, (0, 0), &mut out),
            code(read_ok),
            "read, flags {flags:#x}"
        );
        assert_eq!(
            write_image(&env, m, o, g, (0, 0), &out),
            code(write_ok),
            "write, flags {flags:#x}"
        );
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
    // Events: a non-blocking write then read, ordered by the queue, with command types.
    let data: Vec<u8> = (0..256).map(|v| v as u8).collect();
    let mut ev = null_mut();
    let full = [8usize, 8, 1];
    ok(unsafe {
        cl!(clEnqueueWriteImage)(
            env.queue,
            img.mem,
            CL_FALSE,
            o.as_ptr(),
            full.as_ptr(),
            0,
            0,
            data.as_ptr() as *const c_void,
            0,
            null(),
            &mut ev,
        )
    });
    let ty: cl_command_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_TYPE, s, v, r) });
    assert_eq!(ty, CL_COMMAND_WRITE_IMAGE);
    let mut back = vec![0u8; 256];
    let mut ev2 = null_mut();
    ok(unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            img.mem,
            CL_FALSE,
            o.as_ptr(),
            full.as_ptr(),
            0,
            0,
            back.as_mut_ptr() as *mut c_void,
            1,
            &ev,
            &mut ev2,
        )
    });
    ok(unsafe { cl!(clWaitForEvents)(1, &ev2) });
    assert_eq!(back, data);
    for e in [ev, ev2] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    for m in [img.mem, arr.mem, buf] {
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
}
