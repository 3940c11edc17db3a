//! 1D buffer images under `VKCL_IMAGES=1` (docs/images.md, "Images sharing buffer memory"):
//! `CL_MEM_OBJECT_IMAGE1D_BUFFER` images made over buffers and sub-buffers share their
//! storage both ways (host commands and kernels); every host command on them; kernels with
//! `image1d_buffer_t` arguments; the limit `CL_DEVICE_IMAGE_MAX_BUFFER_SIZE`; the errors of
//! clCreateImage and of copies between an image and its own buffer. Answers come from a
//! host model of the bytes.
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn fmt(f: (u32, u32)) -> cl_image_format {
    cl_image_format {
        image_channel_order: f.0,
        image_channel_data_type: f.1,
    }
}

fn desc1b(width: usize, buffer: cl_mem) -> cl_image_desc {
    cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE1D_BUFFER,
        image_width: width,
        image_height: 0,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer,
    }
}

fn try_image(
    env: &Env,
    flags: cl_mem_flags,
    f: (u32, u32),
    d: &cl_image_desc,
    host: *mut c_void,
) -> Result<cl_mem, cl_int> {
    let mut err = 0;
    let m = unsafe { cl!(clCreateImage)(env.context, flags, &fmt(f), d, host, &mut err) };
    if err == CL_SUCCESS {
        assert!(!m.is_null());
        Ok(m)
    } else {
        assert!(m.is_null(), "an error and an object");
        Err(err)
    }
}

fn image_on(env: &Env, flags: cl_mem_flags, f: (u32, u32), width: usize, b: cl_mem) -> cl_mem {
    try_image(env, flags, f, &desc1b(width, b), null_mut()).unwrap_or_else(|e| panic!("{e}"))
}

fn random(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u32() as u8).collect()
}

fn write_buffer(env: &Env, b: cl_mem, offset: usize, data: &[u8]) {
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            env.queue,
            b,
            CL_TRUE,
            offset,
            data.len(),
            data.as_ptr() as *const c_void,
            0,
            null(),
            null_mut(),
        )
    });
}

fn formats(env: &Env, flags: cl_mem_flags) -> Vec<(u32, u32)> {
    let mut n = 0;
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(
            env.context,
            flags,
            CL_MEM_OBJECT_IMAGE1D_BUFFER,
            0,
            null_mut(),
            &mut n,
        )
    });
    if n == 0 {
        return Vec::new();
    }
    let mut v = vec![fmt((0, 0)); n as usize];
    ok(unsafe {
        cl!(clGetSupportedImageFormats)(
            env.context,
            flags,
            CL_MEM_OBJECT_IMAGE1D_BUFFER,
            n,
            v.as_mut_ptr(),
            null_mut(),
        )
    });
    v.iter()
        .map(|f| (f.image_channel_order, f.image_channel_data_type))
        .collect()
}

#[test]
fn formats_are_listed_for_each_access() {
    let env = env();
    for flags in [CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE] {
        let list = formats(&env, flags);
        eprintln!("flags {flags:#x}: {} formats {list:x?}", list.len());
        for f in [RGBA8, R32F, (CL_RGBA, CL_FLOAT), (CL_R, CL_UNSIGNED_INT32)] {
            assert!(list.contains(&f), "{f:?} for flags {flags:#x}: {list:?}");
        }
    }
}

#[test]
fn image_and_buffer_share_their_bytes() {
    let env = env();
    let mut rng = Rng(16);
    let mut model = random(&mut rng, 1024);
    let b = env.buffer(CL_MEM_READ_WRITE, 1024, Some(&model));
    // An image over the first 200 texels of RGBA8 (800 bytes of 1024).
    let img = image_on(&env, 0, RGBA8, 200, b);
    let read = |o: usize, n: usize| {
        let mut v = vec![0u8; n * 4];
        ok(read_image(&env, img, [o, 0, 0], [n, 1, 1], (0, 0), &mut v));
        v
    };
    assert_eq!(
        read(0, 200),
        model[..800],
        "the buffer's bytes through the image"
    );
    // Buffer write -> image read.
    let w = random(&mut rng, 40);
    write_buffer(&env, b, 100, &w);
    model[100..140].copy_from_slice(&w);
    assert_eq!(read(20, 30), model[80..200]);
    // Image write -> buffer read.
    let w = random(&mut rng, 60);
    ok(write_image(&env, img, [150, 0, 0], [15, 1, 1], (0, 0), &w));
    model[600..660].copy_from_slice(&w);
    assert_eq!(env.read::<u8>(b, 1024), model);
    // Queries: the buffer, the inherited flags, the shape.
    let info =
        |p| -> cl_mem { info_scalar(|s, v, r| unsafe { cl!(clGetImageInfo)(img, p, s, v, r) }) };
    assert_eq!(info(CL_IMAGE_BUFFER), b);
    let mem =
        |p| -> usize { info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(img, p, s, v, r) }) };
    assert_eq!(mem(CL_MEM_ASSOCIATED_MEMOBJECT), b as usize);
    assert_eq!(mem(CL_MEM_OFFSET), 0);
    assert_eq!(mem(CL_MEM_SIZE), 800);
    let flags: cl_mem_flags =
        info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(img, CL_MEM_FLAGS, s, v, r) });
    assert_eq!(
        flags & CL_MEM_READ_WRITE,
        CL_MEM_READ_WRITE,
        "inherited access"
    );
    let ty: cl_mem_object_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(img, CL_MEM_TYPE, s, v, r) });
    assert_eq!(ty, CL_MEM_OBJECT_IMAGE1D_BUFFER);
    let width: usize =
        info_scalar(|s, v, r| unsafe { cl!(clGetImageInfo)(img, CL_IMAGE_WIDTH, s, v, r) });
    assert_eq!(width, 200);
    // The buffer outlives its release while the image holds it.
    ok(unsafe { cl!(clReleaseMemObject)(b) });
    assert_eq!(read(0, 200), model[..800]);
    ok(unsafe { cl!(clReleaseMemObject)(img) });
}

#[test]
fn images_over_sub_buffers_start_at_their_origin() {
    let env = env();
    let mut rng = Rng(17);
    let model = random(&mut rng, 2048);
    let b = env.buffer(CL_MEM_READ_WRITE, 2048, Some(&model));
    let region = cl_buffer_region {
        origin: 256,
        size: 1024,
    };
    let mut err = 0;
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            b,
            CL_MEM_READ_ONLY,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    let img = image_on(&env, 0, R32F, 256, sub);
    let mut v = vec![0u8; 1024];
    ok(read_image(&env, img, [0; 3], [256, 1, 1], (0, 0), &mut v));
    assert_eq!(v, model[256..1280]);
    let flags: cl_mem_flags =
        info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(img, CL_MEM_FLAGS, s, v, r) });
    assert_eq!(
        flags & CL_MEM_READ_ONLY,
        CL_MEM_READ_ONLY,
        "inherited access"
    );
    // A copy from the image into its parent's bytes over it: staged, as a memmove.
    ok(unsafe {
        cl!(clEnqueueCopyImageToBuffer)(
            env.queue,
            img,
            b,
            [0usize; 3].as_ptr(),
            [256usize, 1, 1].as_ptr(),
            512,
            0,
            null(),
            null_mut(),
        )
    });
    let mut want = model.clone();
    want[512..1536].copy_from_slice(&model[256..1280]);
    assert_eq!(env.read::<u8>(b, 2048), want);
}

#[test]
fn host_commands_on_1d_buffer_images() {
    let env = env();
    let mut rng = Rng(18);
    let bytes = random(&mut rng, 400);
    let b = env.buffer(CL_MEM_READ_WRITE, 400, Some(&bytes));
    let img = image_on(&env, CL_MEM_READ_WRITE, RGBA8, 100, b);
    let mut model = bytes.clone();
    // Fill texels 10..30 with a float4 colour (UNORM8, round to nearest even).
    let color = [0.5f32, 1.0, 0.0, 0.25];
    ok(unsafe {
        cl!(clEnqueueFillImage)(
            env.queue,
            img,
            color.as_ptr() as *const c_void,
            [10usize, 0, 0].as_ptr(),
            [20usize, 1, 1].as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    for t in 10..30 {
        model[t * 4..t * 4 + 4].copy_from_slice(&[128, 255, 0, 64]);
    }
    env.finish();
    assert_eq!(env.read::<u8>(b, 400), model, "fill");
    // Copy between two 1D buffer images on one buffer (texels 0..10 -> 60..70), and
    // between a 1D buffer image and a 1D image.
    let other = image_on(&env, CL_MEM_READ_WRITE, RGBA8, 100, b);
    ok(unsafe {
        cl!(clEnqueueCopyImage)(
            env.queue,
            img,
            other,
            [0usize; 3].as_ptr(),
            [60usize, 0, 0].as_ptr(),
            [10usize, 1, 1].as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    model.copy_within(0..40, 240);
    // Overlapping bytes of the one buffer (texels 5..25 -> 15..35): staged, as a memmove.
    ok(unsafe {
        cl!(clEnqueueCopyImage)(
            env.queue,
            img,
            other,
            [5usize, 0, 0].as_ptr(),
            [15usize, 0, 0].as_ptr(),
            [20usize, 1, 1].as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    model.copy_within(20..100, 60);
    env.finish();
    assert_eq!(env.read::<u8>(b, 400), model, "copies");
    let mut one_d = Img::new(&env, CL_MEM_OBJECT_IMAGE1D, [50, 1, 1], RGBA8, 4, &mut rng);
    ok(unsafe {
        cl!(clEnqueueCopyImage)(
            env.queue,
            one_d.mem,
            img,
            [3usize, 0, 0].as_ptr(),
            [80usize, 0, 0].as_ptr(),
            [20usize, 1, 1].as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    model[320..400].copy_from_slice(&one_d.expect([3, 0, 0], [20, 1, 1]));
    ok(unsafe {
        cl!(clEnqueueCopyImage)(
            env.queue,
            img,
            one_d.mem,
            [40usize, 0, 0].as_ptr(),
            [0usize; 3].as_ptr(),
            [10usize, 1, 1].as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    one_d.put([0; 3], [10, 1, 1], &model[160..200]);
    env.finish();
    one_d.check(&env, "1D image from a 1D buffer image");
    assert_eq!(env.read::<u8>(b, 400), model, "copy from a 1D image");
    // Copies with another buffer, at an offset that is no multiple of the texel.
    let c = env.buffer(CL_MEM_READ_WRITE, 128, Some(&random(&mut rng, 128)));
    let mut cm = env.read::<u8>(c, 128);
    ok(unsafe {
        cl!(clEnqueueCopyImageToBuffer)(
            env.queue,
            img,
            c,
            [7usize, 0, 0].as_ptr(),
            [9usize, 1, 1].as_ptr(),
            3,
            0,
            null(),
            null_mut(),
        )
    });
    cm[3..39].copy_from_slice(&model[28..64]);
    ok(unsafe {
        cl!(clEnqueueCopyBufferToImage)(
            env.queue,
            c,
            img,
            64,
            [90usize, 0, 0].as_ptr(),
            [10usize, 1, 1].as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    model[360..400].copy_from_slice(&cm[64..104]);
    env.finish();
    assert_eq!(env.read::<u8>(c, 128), cm, "image to buffer");
    assert_eq!(env.read::<u8>(b, 400), model, "buffer to image");
    // Map for writing, then for reading.
    let mut err = 0;
    let (mut row, mut slice) = (0usize, 0usize);
    let p = unsafe {
        cl!(clEnqueueMapImage)(
            env.queue,
            img,
            CL_TRUE,
            CL_MAP_WRITE,
            [25usize, 0, 0].as_ptr(),
            [5usize, 1, 1].as_ptr(),
            &mut row,
            &mut slice,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    } as *mut u8;
    ok(err);
    assert_eq!((row, slice), (20, 0));
    let w = random(&mut rng, 20);
    unsafe { std::ptr::copy_nonoverlapping(w.as_ptr(), p, 20) };
    ok(unsafe {
        cl!(clEnqueueUnmapMemObject)(env.queue, img, p as *mut c_void, 0, null(), null_mut())
    });
    model[100..120].copy_from_slice(&w);
    env.finish();
    assert_eq!(env.read::<u8>(b, 400), model, "map for writing");
    let p = unsafe {
        cl!(clEnqueueMapImage)(
            env.queue,
            img,
            CL_TRUE,
            CL_MAP_READ,
            [0usize; 3].as_ptr(),
            [100usize, 1, 1].as_ptr(),
            &mut row,
            &mut slice,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    } as *mut u8;
    ok(err);
    let got = unsafe { std::slice::from_raw_parts(p, 400) }.to_vec();
    ok(unsafe {
        cl!(clEnqueueUnmapMemObject)(env.queue, img, p as *mut c_void, 0, null(), null_mut())
    });
    assert_eq!(got, model, "map for reading");
}

#[test]
fn kernels_read_and_write_1d_buffer_images() {
    let env = env();
    let mut rng = Rng(19);
    let n = 64;
    let src: Vec<f32> = (0..n * 4).map(|_| rng.next_f32() * 8.0 - 4.0).collect();
    let b_in = env.buf(&src);
    let b_out = env.zeros::<f32>(n * 4);
    let img_in = image_on(&env, CL_MEM_READ_ONLY, (CL_RGBA, CL_FLOAT), n, b_in);
    let img_out = image_on(&env, CL_MEM_WRITE_ONLY, (CL_RGBA, CL_FLOAT), n, b_out);
    let widths = env.zeros::<i32>(2);
    let k = env.kern(
        "kernel void k(read_only image1d_buffer_t a, write_only image1d_buffer_t b,
                       global int *w) {
             int x = get_global_id(0);
             float4 v = read_imagef(a, x);
             write_imagef(b, get_image_width(b) - 1 - x, v * 2.0f + (float4)(x));
             if (x == 0) { w[0] = get_image_width(a); w[1] = get_image_channel_order(b); }
         }",
        "k",
    );
    arg_mem(k, 0, img_in);
    arg_mem(k, 1, img_out);
    arg_mem(k, 2, widths);
    env.run(k, &[n], None, None);
    let got = env.read::<f32>(b_out, n * 4);
    for x in 0..n {
        for c in 0..4 {
            let want = src[x * 4 + c] * 2.0 + x as f32;
            assert_eq!(got[(n - 1 - x) * 4 + c], want, "texel {x} channel {c}");
        }
    }
    assert_eq!(env.read::<i32>(widths, 2), [n as i32, CL_RGBA as i32]);
    // Integer texels, and a kernel writing through the buffer that another reads through
    // the image (the same memory, ordered by the queue).
    let words: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let b = env.buf(&words);
    let img = image_on(&env, CL_MEM_READ_WRITE, (CL_R, CL_UNSIGNED_INT32), n, b);
    let out = env.zeros::<u32>(n);
    let k = env.kern(
        "kernel void bump(global uint *p) { p[get_global_id(0)] += 7u; }
         kernel void get(read_only image1d_buffer_t i, global uint *o) {
             int x = get_global_id(0); o[x] = read_imageui(i, x).x;
         }",
        "bump",
    );
    arg_mem(k, 0, b);
    env.run(k, &[n], None, None);
    let prog: cl_program =
        info_scalar(|s, v, r| unsafe { cl!(clGetKernelInfo)(k, CL_KERNEL_PROGRAM, s, v, r) });
    let get = env.kernel(prog, "get");
    arg_mem(get, 0, img);
    arg_mem(get, 1, out);
    env.run(get, &[n], None, None);
    let want: Vec<u32> = words.iter().map(|w| w.wrapping_add(7)).collect();
    assert_eq!(env.read::<u32>(out, n), want);
}

#[test]
fn read_write_1d_buffer_images_where_the_device_allows() {
    let env = env();
    let flags = CL_MEM_READ_WRITE | CL_MEM_KERNEL_READ_AND_WRITE;
    if !formats(&env, flags).contains(&(CL_R, CL_SIGNED_INT32)) {
        // Lavapipe 22.3.6: no shaderStorageImageReadWithoutFormat.
        let mut err = 0;
        let f = fmt((CL_R, CL_SIGNED_INT32));
        let b = env.buffer(CL_MEM_READ_WRITE, 64, None);
        let m = unsafe {
            cl!(clCreateImage)(env.context, flags, &f, &desc1b(16, b), null_mut(), &mut err)
        };
        assert!(m.is_null());
        assert_eq!(err, CL_IMAGE_FORMAT_NOT_SUPPORTED);
        return;
    }
    let n = 32;
    let v: Vec<i32> = (0..n as i32).map(|i| i * 1000 - 7000).collect();
    let b = env.buf(&v);
    let img = image_on(&env, flags, (CL_R, CL_SIGNED_INT32), n, b);
    let k = env.kern_opts(
        "kernel void k(read_write image1d_buffer_t i) {
             int x = get_global_id(0);
             int4 t = read_imagei(i, x);
             write_imagei(i, x, t * -3);
         }",
        "-cl-std=CL3.0",
        "k",
    );
    arg_mem(k, 0, img);
    env.run(k, &[n], None, None);
    let want: Vec<i32> = v.iter().map(|x| x * -3).collect();
    assert_eq!(env.read::<i32>(b, n), want);
}

#[test]
fn creation_errors() {
    let env = env();
    let b = env.buffer(CL_MEM_READ_WRITE, 1024, None);
    let d = desc1b(256, b);
    let e = |flags, f, d: &cl_image_desc, host| try_image(&env, flags, f, d, host).err();
    // Host pointer flags are the buffer's: CL_INVALID_VALUE; a host pointer: CL_INVALID_HOST_PTR.
    for f in [
        CL_MEM_USE_HOST_PTR,
        CL_MEM_COPY_HOST_PTR,
        CL_MEM_ALLOC_HOST_PTR,
    ] {
        let mut host = [0u8; 1024];
        assert_eq!(
            e(f, RGBA8, &d, host.as_mut_ptr() as *mut c_void),
            Some(CL_INVALID_VALUE),
            "{f:#x}"
        );
    }
    let mut host = [0u8; 1024];
    assert_eq!(
        e(0, RGBA8, &d, host.as_mut_ptr() as *mut c_void),
        Some(CL_INVALID_HOST_PTR)
    );
    // Access the buffer's flags forbid.
    let ro = env.buffer(CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS, 1024, None);
    for f in [CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE, CL_MEM_HOST_READ_ONLY] {
        assert_eq!(
            e(f, RGBA8, &desc1b(16, ro), null_mut()),
            Some(CL_INVALID_VALUE)
        );
    }
    // One texel more than the buffer holds; a width beyond the device's limit.
    assert_eq!(
        e(0, RGBA8, &desc1b(257, b), null_mut()),
        Some(CL_INVALID_IMAGE_SIZE)
    );
    let max: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, s, v, r)
    });
    assert!(max >= 65536, "OpenCL's minimum");
    let r8 = (CL_R, CL_UNSIGNED_INT8);
    let big = env.buffer(CL_MEM_READ_WRITE, max + 1, None);
    assert_eq!(
        e(0, r8, &desc1b(max + 1, big), null_mut()),
        Some(CL_INVALID_IMAGE_SIZE)
    );
    let at_max = try_image(&env, 0, r8, &desc1b(max, big), null_mut()).expect("the limit");
    ok(unsafe { cl!(clReleaseMemObject)(at_max) });
    ok(unsafe { cl!(clReleaseMemObject)(big) });
    // A row pitch of at least width x element size, a multiple of the element size, is
    // accepted (the CTS gives the tight one with the buffer) and changes nothing: the
    // image's row pitch is the tight one, the layout of the buffer's bytes.
    for pitch in [1024, 2048] {
        let mut pitched = d;
        pitched.image_row_pitch = pitch;
        let img = try_image(&env, 0, RGBA8, &pitched, null_mut())
            .unwrap_or_else(|e| panic!("row pitch {pitch}: {e}"));
        let row: usize =
            info_scalar(|s, v, r| unsafe { cl!(clGetImageInfo)(img, CL_IMAGE_ROW_PITCH, s, v, r) });
        assert_eq!(row, 1024, "row pitch {pitch}");
        ok(unsafe { cl!(clReleaseMemObject)(img) });
    }
    // No buffer, an image as the buffer, a row pitch below the width or not a multiple of
    // the element size, a slice pitch: CL_INVALID_IMAGE_DESCRIPTOR.
    let img = image_on(&env, 0, RGBA8, 16, b);
    let pitched = |row, slice| {
        let mut p = d;
        p.image_row_pitch = row;
        p.image_slice_pitch = slice;
        p
    };
    for (what, d) in [
        ("no buffer", desc1b(16, null_mut())),
        ("an image", desc1b(16, img)),
        ("a short row pitch", pitched(1020, 0)),
        ("a row pitch not of whole texels", pitched(1026, 0)),
        ("a slice pitch", pitched(0, 1024)),
    ] {
        assert_eq!(
            e(0, RGBA8, &d, null_mut()),
            Some(CL_INVALID_IMAGE_DESCRIPTOR),
            "{what}"
        );
    }
    // A format without a Vulkan twin.
    assert_eq!(
        e(0, (CL_A, CL_UNORM_INT8), &d, null_mut()),
        Some(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    );
    // Copies between the image and the buffer it was made from: CL_INVALID_MEM_OBJECT.
    let copy = |to_image: bool| unsafe {
        let (o, r) = ([0usize; 3], [4usize, 1, 1]);
        if to_image {
            cl!(clEnqueueCopyBufferToImage)(
                env.queue,
                b,
                img,
                512,
                o.as_ptr(),
                r.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        } else {
            cl!(clEnqueueCopyImageToBuffer)(
                env.queue,
                img,
                b,
                o.as_ptr(),
                r.as_ptr(),
                512,
                0,
                null(),
                null_mut(),
            )
        }
    };
    assert_eq!(copy(true), CL_INVALID_MEM_OBJECT);
    assert_eq!(copy(false), CL_INVALID_MEM_OBJECT);
    // A 1D buffer image is no buffer.
    let mut out = [0u8; 4];
    let r = unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            img,
            CL_TRUE,
            0,
            4,
            out.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_MEM_OBJECT);
}

#[test]
fn maps_of_images_over_use_host_ptr_buffers_point_into_host_ptr() {
    // The image inherits CL_MEM_USE_HOST_PTR and the buffer's host pointer: its maps hand
    // out that memory (as the buffer's do), holding the shared bytes.
    let env = env();
    let mut rng = Rng(20);
    let mut host = random(&mut rng, 256);
    let model = host.clone();
    let mut err = 0;
    let b = unsafe {
        cl!(clCreateBuffer)(
            env.context,
            CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
            256,
            host.as_mut_ptr() as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    let img = image_on(&env, 0, RGBA8, 64, b);
    let flags: cl_mem_flags =
        info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(img, CL_MEM_FLAGS, s, v, r) });
    assert_ne!(flags & CL_MEM_USE_HOST_PTR, 0, "inherited");
    let (mut row, mut slice) = (0usize, 0usize);
    let p = unsafe {
        cl!(clEnqueueMapImage)(
            env.queue,
            img,
            CL_TRUE,
            CL_MAP_READ,
            [8usize, 0, 0].as_ptr(),
            [16usize, 1, 1].as_ptr(),
            &mut row,
            &mut slice,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    } as *mut u8;
    ok(err);
    assert_eq!(p, host.as_mut_ptr().wrapping_add(32), "host_ptr + origin");
    let got = unsafe { std::slice::from_raw_parts(p, 64) }.to_vec();
    assert_eq!(got, model[32..96]);
    ok(unsafe {
        cl!(clEnqueueUnmapMemObject)(env.queue, img, p as *mut c_void, 0, null(), null_mut())
    });
    env.finish();
    ok(unsafe { cl!(clReleaseMemObject)(img) });
    ok(unsafe { cl!(clReleaseMemObject)(b) });
}
