//! Image arguments of kernels under `VKCL_IMAGES=1` (docs/images.md, "Kernel access"):
//! `write_image{f,i,ui}` into write-only images, samplerless `read_image{f,i,ui}` from
//! read-only (sampled) and read-write (storage) images, the `get_image_*` queries, of each
//! image type, against a host model of the OpenCL conversion rules; `clSetKernelArg`'s
//! errors for image arguments.
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// Kernel source pieces per image type: the type name, and the coordinate expression of
/// the work-item's texel (global ids x, y, z).
fn type_src(ty: cl_mem_object_type) -> (&'static str, &'static str) {
    match ty {
        CL_MEM_OBJECT_IMAGE1D => ("image1d_t", "x"),
        CL_MEM_OBJECT_IMAGE1D_ARRAY => ("image1d_array_t", "(int2)(x, y)"),
        CL_MEM_OBJECT_IMAGE2D => ("image2d_t", "(int2)(x, y)"),
        CL_MEM_OBJECT_IMAGE2D_ARRAY => ("image2d_array_t", "(int4)(x, y, z, 0)"),
        _ => ("image3d_t", "(int4)(x, y, z, 0)"),
    }
}

/// One channel format under test: (order, data type), element size, the channels it
/// stores, and the texel kind the kernel uses: 'f', 'i' or 'u'.
struct Fmt {
    f: (u32, u32),
    elem: usize,
    channels: usize,
    kind: char,
}

const FMTS: [Fmt; 5] = [
    Fmt {
        f: (CL_RGBA, CL_FLOAT),
        elem: 16,
        channels: 4,
        kind: 'f',
    },
    Fmt {
        f: (CL_RGBA, CL_UNORM_INT8),
        elem: 4,
        channels: 4,
        kind: 'f',
    },
    Fmt {
        f: (CL_RG, CL_SIGNED_INT16),
        elem: 4,
        channels: 2,
        kind: 'i',
    },
    Fmt {
        f: (CL_R, CL_UNSIGNED_INT32),
        elem: 4,
        channels: 1,
        kind: 'u',
    },
    Fmt {
        f: (CL_RGBA, CL_UNSIGNED_INT8),
        elem: 4,
        channels: 4,
        kind: 'u',
    },
];

/// What reading channel `c` of texel bytes `t` gives in the kernel (OpenCL 3.0 8.3: normalized
/// integers to [0, 1], integers sign- or zero-extended, missing channels 0 and alpha 1).
fn decode(fmt: &Fmt, t: &[u8]) -> [f64; 4] {
    let mut v = [0.0, 0.0, 0.0, 1.0];
    for (c, out) in v.iter_mut().enumerate().take(fmt.channels) {
        *out = match fmt.f.1 {
            CL_FLOAT => f32::from_le_bytes(t[4 * c..4 * c + 4].try_into().unwrap()) as f64,
            CL_UNORM_INT8 => t[c] as f64 / 255.0,
            CL_SIGNED_INT16 => i16::from_le_bytes([t[2 * c], t[2 * c + 1]]) as f64,
            CL_UNSIGNED_INT32 => u32::from_le_bytes(t[4 * c..4 * c + 4].try_into().unwrap()) as f64,
            CL_UNSIGNED_INT8 => t[c] as f64,
            _ => unreachable!(),
        };
    }
    v
}

/// The texel values a kernel writes at texel `i` (in range for the format).
fn value(fmt: &Fmt, i: usize, rng: &mut Rng) -> [u32; 4] {
    let _ = i;
    std::array::from_fn(|_| match (fmt.kind, fmt.f.1) {
        ('f', CL_FLOAT) => (rng.next_f32() * 200.0 - 100.0).to_bits(),
        ('f', _) => (rng.next_f32() * 1.2 - 0.1).to_bits(),
        // Integers: a quarter out of the channel's range (saturated, OpenCL 3.0 8.3.2).
        ('i', _) if rng.next_u32() % 4 == 0 => rng.next_u32(),
        ('i', _) => (rng.next_u32() as i16) as i32 as u32,
        (_, CL_UNSIGNED_INT8) if rng.next_u32() % 4 != 0 => rng.next_u32() & 0xFF,
        _ => rng.next_u32(),
    })
}

/// Whether `got` (texel bytes) is what writing `v` gives: floats exact, UNORM within 0.6 of
/// the exact value after clamping (OpenCL 3.0 8.3.1.1), integers exact.
fn check_written(fmt: &Fmt, v: [u32; 4], got: &[u8], what: &str) {
    let d = decode(fmt, got);
    for c in 0..fmt.channels {
        match (fmt.kind, fmt.f.1) {
            ('f', CL_FLOAT) => assert_eq!(d[c] as f32, f32::from_bits(v[c]), "{what} channel {c}"),
            ('f', _) => {
                let exact = (f32::from_bits(v[c]) as f64).clamp(0.0, 1.0) * 255.0;
                assert!(
                    (d[c] * 255.0 - exact).abs() <= 0.6,
                    "{what} channel {c}: {} for {exact}",
                    d[c] * 255.0
                );
            }
            ('i', _) => {
                let want = (v[c] as i32).clamp(i16::MIN as i32, i16::MAX as i32);
                assert_eq!(d[c] as i32, want, "{what} channel {c}")
            }
            (_, CL_UNSIGNED_INT8) => assert_eq!(d[c] as u32, v[c].min(255), "{what} channel {c}"),
            _ => assert_eq!(d[c] as u32, v[c], "{what} channel {c}"),
        }
    }
}

fn write_fn(kind: char) -> (&'static str, &'static str) {
    match kind {
        'f' => ("write_imagef", "float4"),
        'i' => ("write_imagei", "int4"),
        _ => ("write_imageui", "uint4"),
    }
}

/// Whether the context lists format `f` for `flags` and image type `ty`.
fn supported(env: &Env, flags: cl_mem_flags, ty: cl_mem_object_type, f: (u32, u32)) -> bool {
    let mut n = 0;
    ok(unsafe { cl!(clGetSupportedImageFormats)(env.context, flags, ty, 0, null_mut(), &mut n) });
    let mut v = vec![
        cl_image_format {
            image_channel_order: 0,
            image_channel_data_type: 0
        };
        n as usize
    ];
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(env.context, flags, ty, n, v.as_mut_ptr(), null_mut())
    });
    v.iter()
        .any(|x| x.image_channel_order == f.0 && x.image_channel_data_type == f.1)
}

/// Whether the device reports OpenCL C feature `name`.
fn has_feature(env: &Env, name: &str) -> bool {
    let mut n = 0usize;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_OPENCL_C_FEATURES,
            0,
            null_mut(),
            &mut n,
        )
    });
    let mut v = vec![
        cl_name_version {
            version: 0,
            name: [0; 64]
        };
        n / std::mem::size_of::<cl_name_version>()
    ];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_OPENCL_C_FEATURES,
            n,
            v.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    v.iter().any(|f| {
        let s: Vec<u8> = f
            .name
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        s == name.as_bytes()
    })
}

fn run3(env: &Env, k: cl_kernel, ext: [usize; 3]) {
    env.run(k, &ext, None, None);
}

#[test]
fn write_image_of_each_type_and_format() {
    let env = env();
    let mut rng = Rng(16);
    for (ty, ext, _, _) in cases() {
        let (tname, coord) = type_src(ty);
        for fmt in &FMTS {
            assert!(
                supported(&env, CL_MEM_WRITE_ONLY, ty, fmt.f) || ty == CL_MEM_OBJECT_IMAGE3D,
                "{:?} listed for writes",
                fmt.f
            );
            if !supported(&env, CL_MEM_WRITE_ONLY, ty, fmt.f) {
                continue;
            }
            let (wf, vt) = write_fn(fmt.kind);
            let src = format!(
                "kernel void k(write_only {tname} img, global const {vt}* src, int w, int h) {{
                    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
                    {wf}(img, {coord}, src[(z * h + y) * w + x]);
                }}"
            );
            let k = env.kern_opts(&src, "-cl-std=CL3.0", "k");
            let mut img = Img::new(&env, ty, ext, fmt.f, fmt.elem, &mut rng);
            let n: usize = ext.iter().product();
            let vals: Vec<[u32; 4]> = (0..n).map(|i| value(fmt, i, &mut rng)).collect();
            let buf = env.buf(&vals);
            arg_mem(k, 0, img.mem);
            arg_mem(k, 1, buf);
            set_arg(k, 2, &(ext[0] as i32));
            set_arg(k, 3, &(ext[1] as i32));
            run3(&env, k, ext);
            let got = img.read(&env, [0; 3], ext);
            for i in 0..n {
                let what = format!("{tname} {:?} texel {i}", fmt.f);
                check_written(fmt, vals[i], &got[i * fmt.elem..(i + 1) * fmt.elem], &what);
            }
            img.model = got;
            unsafe {
                cl!(clReleaseMemObject)(buf);
                cl!(clReleaseMemObject)(img.mem);
                cl!(clReleaseKernel)(k);
            }
        }
    }
}

fn read_fn(kind: char) -> (&'static str, &'static str) {
    match kind {
        'f' => ("read_imagef", "float4"),
        'i' => ("read_imagei", "int4"),
        _ => ("read_imageui", "uint4"),
    }
}

/// Samplerless reads of every texel, from a read-only image (a sampled image and
/// `OpImageFetch`) and from a read-write one (a storage image).
#[test]
fn read_image_without_sampler() {
    let env = env();
    let mut rng = Rng(61);
    for access in ["read_only", "read_write"] {
        // lavapipe 22.3.6 has no shaderStorageImageReadWithoutFormat: no read-write images.
        if access == "read_write" && !has_feature(&env, "__opencl_c_read_write_images") {
            eprintln!("no __opencl_c_read_write_images: read_write images not tested");
            continue;
        }
        for (ty, ext, _, _) in cases() {
            let (tname, coord) = type_src(ty);
            for fmt in &FMTS {
                let flags = if access == "read_only" {
                    CL_MEM_READ_ONLY
                } else {
                    CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_READ_WRITE
                };
                assert!(
                    supported(&env, flags, ty, fmt.f),
                    "{access} {:?} listed",
                    fmt.f
                );
                let (rf, vt) = read_fn(fmt.kind);
                let src = format!(
                    "kernel void k({access} {tname} img, global {vt}* dst, int w, int h) {{
                        int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
                        dst[(z * h + y) * w + x] = {rf}(img, {coord});
                    }}"
                );
                let k = env.kern_opts(&src, "-cl-std=CL3.0", "k");
                let img = Img::new(&env, ty, ext, fmt.f, fmt.elem, &mut rng);
                let n: usize = ext.iter().product();
                let buf = env.zeros::<[u32; 4]>(n);
                arg_mem(k, 0, img.mem);
                arg_mem(k, 1, buf);
                set_arg(k, 2, &(ext[0] as i32));
                set_arg(k, 3, &(ext[1] as i32));
                run3(&env, k, ext);
                let got: Vec<[u32; 4]> = env.read(buf, n);
                for i in 0..n {
                    let want = decode(fmt, &img.model[i * fmt.elem..(i + 1) * fmt.elem]);
                    for c in 0..4 {
                        let what = format!("{access} {tname} {:?} texel {i} channel {c}", fmt.f);
                        match fmt.kind {
                            'f' => {
                                let g = f32::from_bits(got[i][c]) as f64;
                                let w = want[c];
                                let same = (g.is_nan() && w.is_nan()) || g == w as f32 as f64;
                                // Normalized to float: within 1.5 ulp (OpenCL 3.0 8.3.1.2).
                                let close = (g - w).abs() <= 1.5 * f32::EPSILON as f64 * w.abs();
                                assert!(same || close, "{what}: {g} for {w}");
                            }
                            'i' => assert_eq!(got[i][c] as i32 as f64, want[c], "{what}"),
                            _ => assert_eq!(got[i][c] as f64, want[c], "{what}"),
                        }
                    }
                }
                unsafe {
                    cl!(clReleaseMemObject)(buf);
                    cl!(clReleaseMemObject)(img.mem);
                    cl!(clReleaseKernel)(k);
                }
            }
        }
    }
}

/// `get_image_width/height/depth/array_size/dim/channel_order/channel_data_type` of each
/// type, on read-only and write-only arguments.
#[test]
fn get_image_queries() {
    let env = env();
    let mut rng = Rng(7);
    let formats = [
        ((CL_RGBA, CL_UNORM_INT8), 4),
        ((CL_R, CL_FLOAT), 4),
        ((CL_RG, CL_SIGNED_INT16), 4),
        ((CL_BGRA, CL_UNORM_INT8), 4),
    ];
    for access in ["read_only", "write_only"] {
        for (ty, ext, _, _) in cases() {
            let (tname, _) = type_src(ty);
            let q = match ty {
                CL_MEM_OBJECT_IMAGE1D => "0, 0, 0, 0, 0",
                CL_MEM_OBJECT_IMAGE1D_ARRAY => "0, 0, get_image_array_size(img), 0, 0",
                CL_MEM_OBJECT_IMAGE2D => {
                    "get_image_height(img), 0, 0, get_image_dim(img).x, get_image_dim(img).y"
                }
                CL_MEM_OBJECT_IMAGE2D_ARRAY => {
                    "get_image_height(img), 0, get_image_array_size(img), get_image_dim(img).x, \
                     get_image_dim(img).y"
                }
                _ => {
                    "get_image_height(img), get_image_depth(img), get_image_dim(img).z, \
                     get_image_dim(img).x, get_image_dim(img).y"
                }
            };
            let src = format!(
                "kernel void k({access} {tname} img, global int* out) {{
                    int v[8] = {{ get_image_width(img), {q}, get_image_channel_order(img),
                                  get_image_channel_data_type(img) }};
                    for (int i = 0; i < 8; i++) out[i] = v[i];
                }}"
            );
            let k = env.kern_opts(&src, "-cl-std=CL3.0", "k");
            for (f, elem) in formats {
                let img = Img::new(&env, ty, ext, f, elem, &mut rng);
                let buf = env.zeros::<i32>(8);
                arg_mem(k, 0, img.mem);
                arg_mem(k, 1, buf);
                env.run(k, &[1], None, None);
                let got: Vec<i32> = env.read(buf, 8);
                let e = ext.map(|v| v as i32);
                let want: [i32; 6] = match ty {
                    CL_MEM_OBJECT_IMAGE1D => [e[0], 0, 0, 0, 0, 0],
                    CL_MEM_OBJECT_IMAGE1D_ARRAY => [e[0], 0, 0, e[1], 0, 0],
                    CL_MEM_OBJECT_IMAGE2D => [e[0], e[1], 0, 0, e[0], e[1]],
                    CL_MEM_OBJECT_IMAGE2D_ARRAY => [e[0], e[1], 0, e[2], e[0], e[1]],
                    _ => [e[0], e[1], e[2], e[2], e[0], e[1]],
                };
                assert_eq!(&got[..6], &want, "{access} {tname} sizes");
                assert_eq!(got[6] as u32, f.0, "{access} {tname} channel order");
                assert_eq!(got[7] as u32, f.1, "{access} {tname} channel data type");
                unsafe {
                    cl!(clReleaseMemObject)(buf);
                    cl!(clReleaseMemObject)(img.mem);
                }
            }
            unsafe { cl!(clReleaseKernel)(k) };
        }
    }
}

fn image_with(env: &Env, flags: cl_mem_flags, ty: cl_mem_object_type) -> cl_mem {
    let desc = cl_image_desc {
        image_type: ty,
        image_width: 4,
        image_height: if ty == CL_MEM_OBJECT_IMAGE2D { 4 } else { 0 },
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let mut err = 0;
    let m = unsafe { cl!(clCreateImage)(env.context, flags, &format, &desc, null_mut(), &mut err) };
    ok(err);
    m
}

#[test]
fn set_kernel_arg_errors_of_images() {
    let env = env();
    let k = env.kern_opts(
        "kernel void k(read_only image2d_t r, write_only image2d_t w, global int* b) {
            write_imagef(w, (int2)(0, 0), read_imagef(r, (int2)(0, 0)));
            b[0] = 1;
        }",
        "-cl-std=CL3.0",
        "k",
    );
    let set = |i: u32, m: cl_mem| unsafe {
        cl!(clSetKernelArg)(
            k,
            i,
            std::mem::size_of::<cl_mem>(),
            &m as *const cl_mem as *const c_void,
        )
    };
    let ro = image_with(&env, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D);
    let wo = image_with(&env, CL_MEM_WRITE_ONLY, CL_MEM_OBJECT_IMAGE2D);
    let rw = image_with(&env, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D);
    let one_d = image_with(&env, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE1D);
    let buf = env.zeros::<i32>(4);
    ok(set(0, ro));
    ok(set(0, rw));
    ok(set(1, wo));
    ok(set(1, rw));
    assert_eq!(
        set(0, wo),
        CL_INVALID_ARG_VALUE,
        "write-only image to read_only"
    );
    assert_eq!(
        set(1, ro),
        CL_INVALID_ARG_VALUE,
        "read-only image to write_only"
    );
    assert_eq!(set(0, one_d), CL_INVALID_ARG_VALUE, "1D image to image2d_t");
    assert_eq!(set(0, buf), CL_INVALID_MEM_OBJECT, "buffer to an image");
    assert_eq!(set(0, null_mut()), CL_INVALID_MEM_OBJECT, "NULL image");
    assert_eq!(set(2, rw), CL_INVALID_MEM_OBJECT, "image to a buffer");
    let r = unsafe { cl!(clSetKernelArg)(k, 0, 4, &ro as *const cl_mem as *const c_void) };
    assert_eq!(r, CL_INVALID_ARG_SIZE);
    let r = unsafe { cl!(clSetKernelArg)(k, 0, 8, null()) };
    assert_eq!(r, CL_INVALID_MEM_OBJECT);
    // A launch with the image released since it was set.
    ok(set(0, rw));
    ok(set(1, wo));
    ok(set(2, buf));
    env.run(k, &[1], None, None);
    unsafe { cl!(clReleaseMemObject)(wo) };
    assert_eq!(env.try_run(k, &[1], None, None), CL_INVALID_KERNEL_ARGS);
    unsafe {
        for m in [ro, rw, one_d, buf] {
            cl!(clReleaseMemObject)(m);
        }
        cl!(clReleaseKernel)(k);
    }
}

/// An NDRange with image arguments recorded into a command buffer (cl_khr_command_buffer):
/// copies a read-only image into a write-only one through read_imagef/write_imagef; run
/// twice, the source rewritten between runs, the destination matching it each time.
#[test]
fn image_kernels_in_command_buffers() {
    let env = env();
    let mut rng = Rng(99);
    let ext = [11usize, 6, 1];
    let k = env.kern_opts(
        "kernel void k(read_only image2d_t a, write_only image2d_t b) {
            int2 p = (int2)(get_global_id(0), get_global_id(1));
            write_imagef(b, p, read_imagef(a, p) * 2.0f);
        }",
        "-cl-std=CL3.0",
        "k",
    );
    let a = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, ext, R32F, 4, &mut rng);
    let b = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, ext, R32F, 4, &mut rng);
    arg_mem(k, 0, a.mem);
    arg_mem(k, 1, b.mem);
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, null(), &mut err) };
    ok(err);
    let g = [ext[0], ext[1]];
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            2,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    for run in 0..2 {
        let vals: Vec<f32> = (0..ext[0] * ext[1])
            .map(|_| rng.next_f32() * 10.0)
            .collect();
        ok(write_image(&env, a.mem, [0; 3], ext, (0, 0), bytes(&vals)));
        let (waited, status) = run_command_buffer(cb);
        ok(waited);
        assert_eq!(status, CL_COMPLETE);
        let got = b.read(&env, [0; 3], ext);
        for (i, v) in vals.iter().enumerate() {
            let g = f32::from_le_bytes(got[4 * i..4 * i + 4].try_into().unwrap());
            assert_eq!(g, v * 2.0, "run {run} texel {i}");
        }
    }
    unsafe {
        ext!(clReleaseCommandBufferKHR)(cb);
        cl!(clReleaseMemObject)(a.mem);
        cl!(clReleaseMemObject)(b.mem);
        cl!(clReleaseKernel)(k);
    }
}
