//! `read_imageh` and `write_imageh` under `VKCL_IMAGES=1` (docs/images.md, "Kernel access";
//! OpenCL C 3.0 6.15.15 with `cl_khr_fp16`): samplerless and sampled reads of float, half
//! and UNORM8 images rounded to half to nearest even, writes of half texels into half and
//! float images, and a 1D buffer image; against a host model (the texels' floats rounded to
//! half on the host).
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// `x` as an IEEE binary16, rounded to nearest with ties to even (the host model).
fn half_rte(x: f32) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return 0x7e00;
    }
    let a = x.abs() as f64;
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 2f64.powi(-14) {
        // Subnormal: units of 2^-24 (exact in f64), ties to even.
        return sign | (a * 2f64.powi(24)).round_ties_even() as u16;
    }
    let mut e = a.log2().floor() as i32;
    if 2f64.powi(e) > a {
        e -= 1;
    }
    let mut m = (a / 2f64.powi(e - 10)).round_ties_even() as u32;
    if m == 2048 {
        e += 1;
        m = 1024;
    }
    sign | (((e + 15) as u16) << 10) | (m - 1024) as u16
}

/// `h` (binary16 bits) as a float (exact).
fn half_to_f32(h: u16) -> f32 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    let v = match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1024.0 + m) * 2f64.powi(e - 25),
    };
    (s * v) as f32
}

#[test]
fn host_model_rounds_to_nearest_even() {
    assert_eq!(half_rte(1.0), 0x3c00);
    assert_eq!(half_rte(1.0 + 1.0 / 2048.0), 0x3c00, "tie to even");
    assert_eq!(half_rte(1.0 + 3.0 / 2048.0), 0x3c02, "tie to even, up");
    assert_eq!(half_rte(65504.0), 0x7bff);
    assert_eq!(half_rte(65520.0), 0x7c00);
    assert_eq!(
        half_rte(2f32.powi(-25)),
        0,
        "half the smallest subnormal ties to 0"
    );
    assert_eq!(half_rte(3.0 * 2f32.powi(-25)), 2);
    assert_eq!(half_rte(-0.0), 0x8000);
    for h in [0x0001u16, 0x03ff, 0x0400, 0x3555, 0x7bff, 0xc000] {
        assert_eq!(half_rte(half_to_f32(h)), h);
    }
}

/// Floats that exercise the rounding: ties, values just off ties, subnormal halves,
/// overflow, signs, and random magnitudes.
fn test_floats(n: usize, rng: &mut Rng) -> Vec<f32> {
    let mut v = vec![
        1.0 + 1.0 / 2048.0,
        1.0 + 3.0 / 2048.0,
        -(1.0 + 1.0 / 2048.0),
        f32::from_bits((1.0f32 + 1.0 / 2048.0).to_bits() + 1),
        65504.0,
        65519.0,
        65520.0,
        -70000.0,
        2f32.powi(-25),
        3.0 * 2f32.powi(-25),
        2f32.powi(-14) * 1.5,
        -0.0,
        0.1,
        1.0 / 3.0,
        1e-6,
        123.456,
    ];
    while v.len() < n {
        let e = (rng.next_u32() % 40) as i32 - 24;
        v.push((rng.next_f32() * 2.0 - 1.0) * 2f32.powi(e));
    }
    v
}

fn image2d(env: &Env, f: (u32, u32), w: usize, h: usize, bytes: &[u8]) -> cl_mem {
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
    let mut err = 0;
    let m = unsafe {
        cl!(clCreateImage)(
            env.context,
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            &format,
            &desc,
            bytes.as_ptr() as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    m
}

const READ: &str = "
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
kernel void k(read_only image2d_t a, global ushort4 *plain, global ushort4 *sampled) {
    int x = get_global_id(0), y = get_global_id(1), i = y * get_image_width(a) + x;
    plain[i] = as_ushort4(read_imageh(a, (int2)(x, y)));
    sampled[i] = as_ushort4(read_imageh(a, s, (int2)(x, y)));
}";

/// Runs READ over a `w` x `h` image of format `f` holding `bytes`; returns the halves of
/// the samplerless and the sampled reads.
fn read_halves(env: &Env, f: (u32, u32), w: usize, h: usize, bytes: &[u8]) -> [Vec<u16>; 2] {
    let img = image2d(env, f, w, h, bytes);
    let plain = env.zeros::<u16>(w * h * 4);
    let sampled = env.zeros::<u16>(w * h * 4);
    let k = env.kern_opts(READ, "-cl-std=CL3.0", "k");
    arg_mem(k, 0, img);
    arg_mem(k, 1, plain);
    arg_mem(k, 2, sampled);
    env.run(k, &[w, h], None, None);
    [
        env.read::<u16>(plain, w * h * 4),
        env.read::<u16>(sampled, w * h * 4),
    ]
}

#[test]
fn read_imageh_rounds_float_texels_to_nearest_even() {
    let env = env();
    assert!(env.has_extension("cl_khr_fp16"), "lavapipe has half");
    let mut rng = Rng(1601);
    let (w, h) = (9, 7);
    let texels = test_floats(w * h * 4, &mut rng);
    let want: Vec<u16> = texels.iter().map(|&x| half_rte(x)).collect();
    for (what, got) in ["samplerless", "sampled"].iter().zip(read_halves(
        &env,
        (CL_RGBA, CL_FLOAT),
        w,
        h,
        bytes(&texels),
    )) {
        for (j, (g, e)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g,
                e,
                "{what} texel {} channel {}: {}",
                j / 4,
                j % 4,
                texels[j]
            );
        }
    }
}

#[test]
fn read_imageh_of_half_and_unorm8_images() {
    let env = env();
    let mut rng = Rng(1602);
    let (w, h) = (8, 5);
    // Half texels come back unchanged (finite ones).
    let halves: Vec<u16> = (0..w * h * 4)
        .map(|_| {
            let b = rng.next_u32() as u16;
            if (b >> 10) & 0x1f == 0x1f {
                b & 0xfbff
            } else {
                b
            }
        })
        .collect();
    for got in read_halves(&env, (CL_RGBA, CL_HALF_FLOAT), w, h, bytes(&halves)) {
        assert_eq!(got, halves);
    }
    // UNORM8: k / 255 rounded to half (never near a tie: 255 is odd).
    let b8: Vec<u8> = (0..w * h * 4).map(|_| rng.next_u32() as u8).collect();
    let want: Vec<u16> = b8.iter().map(|&k| half_rte(f32::from(k) / 255.0)).collect();
    for got in read_halves(&env, (CL_RGBA, CL_UNORM_INT8), w, h, &b8) {
        assert_eq!(got, want);
    }
}

#[test]
fn write_imageh_into_half_and_float_images() {
    let env = env();
    let mut rng = Rng(1603);
    let (w, h) = (6, 11);
    let halves: Vec<u16> = (0..w * h * 4)
        .map(|_| half_rte((rng.next_f32() * 2.0 - 1.0) * 1000.0))
        .collect();
    let src = env.buf(&halves);
    for (f, elem) in [((CL_RGBA, CL_HALF_FLOAT), 8), ((CL_RGBA, CL_FLOAT), 16)] {
        let img = image2d(&env, f, w, h, &vec![0u8; w * h * elem]);
        let k = env.kern_opts(
            "#pragma OPENCL EXTENSION cl_khr_fp16 : enable
             kernel void k(global ushort4 *src, write_only image2d_t b) {
                 int x = get_global_id(0), y = get_global_id(1);
                 write_imageh(b, (int2)(x, y), as_half4(src[y * get_image_width(b) + x]));
             }",
            "-cl-std=CL3.0",
            "k",
        );
        arg_mem(k, 0, src);
        arg_mem(k, 1, img);
        env.run(k, &[w, h], None, None);
        let mut out = vec![0u8; w * h * elem];
        ok(read_image(&env, img, [0; 3], [w, h, 1], (0, 0), &mut out));
        if elem == 8 {
            assert_eq!(out, bytes(&halves), "half image");
        } else {
            let want: Vec<f32> = halves.iter().map(|&b| half_to_f32(b)).collect();
            assert_eq!(out, bytes(&want), "float image");
        }
    }
}

#[test]
fn read_and_write_imageh_on_1d_buffer_images() {
    let env = env();
    let mut rng = Rng(1604);
    let n = 40;
    let texels = test_floats(n * 4, &mut rng);
    let b_in = env.buf(&texels);
    let b_out = env.zeros::<u16>(n * 4);
    let image = |b: cl_mem, f: (u32, u32), flags| {
        let format = cl_image_format {
            image_channel_order: f.0,
            image_channel_data_type: f.1,
        };
        let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
        desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
        desc.image_width = n;
        desc.buffer = b;
        let mut err = 0;
        let m =
            unsafe { cl!(clCreateImage)(env.context, flags, &format, &desc, null_mut(), &mut err) };
        ok(err);
        m
    };
    let a = image(b_in, (CL_RGBA, CL_FLOAT), CL_MEM_READ_ONLY);
    let o = image(b_out, (CL_RGBA, CL_HALF_FLOAT), CL_MEM_WRITE_ONLY);
    let k = env.kern_opts(
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable
         kernel void k(read_only image1d_buffer_t a, write_only image1d_buffer_t o) {
             int x = get_global_id(0);
             write_imageh(o, x, read_imageh(a, x));
         }",
        "-cl-std=CL3.0",
        "k",
    );
    arg_mem(k, 0, a);
    arg_mem(k, 1, o);
    env.run(k, &[n], None, None);
    let want: Vec<u16> = texels.iter().map(|&x| half_rte(x)).collect();
    assert_eq!(env.read::<u16>(b_out, n * 4), want);
}
