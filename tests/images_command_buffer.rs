//! The image commands of `cl_khr_command_buffer` behind `VKCL_IMAGES=1` (docs/images.md):
//! clCommandCopyImageKHR (same and mixed types), clCommandCopyImageToBufferKHR and
//! clCommandCopyBufferToImageKHR (aligned and unaligned offsets), clCommandFillImageKHR,
//! recorded once and run twice, against the host model of each image
//! (`tests/common/images.rs`); and their error codes. 1D buffer images in a command buffer
//! (fill, a kernel, a copy) see their buffer's bytes at each run.
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn command_buffer(env: &Env) -> cl_command_buffer_khr {
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, null(), &mut err) };
    ok(err);
    cb
}

#[test]
fn image_commands_record_and_replay() {
    let env = env();
    let mut rng = Rng(33);
    let a = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, [16, 12, 1], RGBA8, 4, &mut rng);
    let mut b = Img::new(&env, CL_MEM_OBJECT_IMAGE3D, [8, 8, 4], RGBA8, 4, &mut rng);
    let mut c = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, [10, 10, 1], RGBA8, 4, &mut rng);
    let src: Vec<u8> = (0..600).map(|_| rng.next_u32() as u8).collect();
    let buf = env.buffer(CL_MEM_READ_WRITE, src.len(), Some(&src));
    let out = env.buffer(CL_MEM_READ_WRITE, 600, Some(&[0u8; 600]));
    let cb = command_buffer(&env);
    let (o, r) = ([1usize, 2, 0], [6usize, 5, 1]);
    let dst = [2usize, 1, 3];
    let sp = null_mut();
    // a -> b (2D into a slice of a 3D image), buffer at 5 -> c, c -> buffer at 8, fill of a.
    ok(unsafe {
        ext!(clCommandCopyImageKHR)(
            cb,
            null_mut(),
            null(),
            a.mem,
            b.mem,
            o.as_ptr(),
            dst.as_ptr(),
            r.as_ptr(),
            0,
            null(),
            sp,
            null_mut(),
        )
    });
    let co = [3usize, 3, 0];
    ok(unsafe {
        ext!(clCommandCopyBufferToImageKHR)(
            cb,
            null_mut(),
            null(),
            buf,
            c.mem,
            5,
            co.as_ptr(),
            r.as_ptr(),
            0,
            null(),
            sp,
            null_mut(),
        )
    });
    ok(unsafe {
        ext!(clCommandBarrierWithWaitListKHR)(cb, null_mut(), null(), 0, null(), sp, null_mut())
    });
    ok(unsafe {
        ext!(clCommandCopyImageToBufferKHR)(
            cb,
            null_mut(),
            null(),
            c.mem,
            out,
            co.as_ptr(),
            r.as_ptr(),
            8,
            0,
            null(),
            sp,
            null_mut(),
        )
    });
    let color = [0.0f32, 1.0, 0.5, 1.0].map(f32::to_bits);
    let fo = [0usize, 0, 0];
    let fr = [4usize, 4, 1];
    ok(unsafe {
        ext!(clCommandBarrierWithWaitListKHR)(cb, null_mut(), null(), 0, null(), sp, null_mut())
    });
    ok(unsafe {
        ext!(clCommandFillImageKHR)(
            cb,
            null_mut(),
            null(),
            a.mem,
            color.as_ptr() as *const c_void,
            fo.as_ptr(),
            fr.as_ptr(),
            0,
            null(),
            sp,
            null_mut(),
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    let n = r[0] * r[1] * 4;
    let from_a = a.expect(o, r);
    for run in 0..2 {
        assert_eq!(run_command_buffer(cb), (CL_SUCCESS, CL_COMPLETE));
        // The second run copies the filled corner of a too (the fill ran after the copy).
        let mut want_b = from_a.clone();
        if run == 1 {
            let mut a2 = Img {
                mem: a.mem,
                ty: a.ty,
                ext: a.ext,
                elem: 4,
                model: a.model.clone(),
            };
            a2.put(fo, fr, &[0u8, 255, 128, 255].repeat(16));
            want_b = a2.expect(o, r);
        }
        b.put(dst, r, &want_b);
        b.check(&env, &format!("run {run}: a -> b"));
        c.put(co, r, &src[5..5 + n]);
        c.check(&env, &format!("run {run}: buffer -> c"));
        let got: Vec<u8> = env.read(out, 600);
        assert_eq!(&got[8..8 + n], &src[5..5 + n], "run {run}: c -> buffer");
        assert!(got[..8].iter().all(|&v| v == 0) && got[8 + n..].iter().all(|&v| v == 0));
    }
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    for m in [a.mem, b.mem, c.mem, buf, out] {
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
}

#[test]
fn image_command_errors() {
    let env = env();
    let mut rng = Rng(1);
    let a = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, [8, 8, 1], RGBA8, 4, &mut rng);
    let f = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, [8, 8, 1], R32F, 4, &mut rng);
    let buf = env.buffer(CL_MEM_READ_WRITE, 64, None);
    let cb = command_buffer(&env);
    let (o, r) = ([0usize; 3], [4usize, 4, 1]);
    let copy = |s, d| unsafe {
        ext!(clCommandCopyImageKHR)(
            cb,
            null_mut(),
            null(),
            s,
            d,
            o.as_ptr(),
            o.as_ptr(),
            r.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(copy(a.mem, f.mem), CL_IMAGE_FORMAT_MISMATCH);
    assert_eq!(
        copy(a.mem, buf),
        CL_INVALID_MEM_OBJECT,
        "a buffer as the destination image"
    );
    let to_buf = |off| unsafe {
        ext!(clCommandCopyImageToBufferKHR)(
            cb,
            null_mut(),
            null(),
            a.mem,
            buf,
            o.as_ptr(),
            r.as_ptr(),
            off,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(
        to_buf(1),
        CL_INVALID_VALUE,
        "64 bytes from offset 1 pass the buffer's end"
    );
    ok(to_buf(0));
    let fill = unsafe {
        ext!(clCommandFillImageKHR)(
            cb,
            null_mut(),
            null(),
            a.mem,
            null(),
            o.as_ptr(),
            r.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(fill, CL_INVALID_VALUE, "NULL colour");
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    for m in [a.mem, f.mem, buf] {
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
}

/// A 1D buffer image over `b` (`n` texels of `f`), with `flags`.
fn image_on_buffer(env: &Env, f: (u32, u32), n: usize, b: cl_mem, flags: cl_mem_flags) -> cl_mem {
    let format = cl_image_format {
        image_channel_order: f.0,
        image_channel_data_type: f.1,
    };
    // SAFETY: a plain C struct; every field set below or zero.
    let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
    desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    desc.image_width = n;
    desc.buffer = b;
    let mut err = 0;
    let m = unsafe { cl!(clCreateImage)(env.context, flags, &format, &desc, null_mut(), &mut err) };
    ok(err);
    m
}

#[test]
fn one_d_buffer_images_in_command_buffers() {
    // A fill of a 1D buffer image, a kernel reading it (image1d_buffer_t) and writing a
    // second one, and a copy of that into a plain buffer, recorded once and run twice with
    // the first buffer rewritten from the host between: each run sees the buffer's bytes.
    let env = env();
    let mut rng = Rng(34);
    let n = 48;
    let mut words: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let b_in = env.buf(&words);
    let b_mid = env.zeros::<u32>(n);
    let out = env.zeros::<u32>(n);
    let r32 = (CL_R, CL_UNSIGNED_INT32);
    let a = image_on_buffer(&env, r32, n, b_in, CL_MEM_READ_ONLY);
    let m = image_on_buffer(&env, r32, n, b_mid, CL_MEM_WRITE_ONLY);
    let k = env.kern(
        "kernel void k(read_only image1d_buffer_t a, write_only image1d_buffer_t m) {
             int x = get_global_id(0);
             write_imageui(m, x, read_imageui(a, x) * 3u + (uint4)(1u));
         }",
        "k",
    );
    arg_mem(k, 0, a);
    arg_mem(k, 1, m);
    let cb = command_buffer(&env);
    let sp = null_mut();
    let color = [7u32, 0, 0, 0];
    let (fo, fr) = ([4usize, 0, 0], [8usize, 1, 1]);
    ok(unsafe {
        ext!(clCommandFillImageKHR)(
            cb,
            null_mut(),
            null(),
            a,
            color.as_ptr() as *const c_void,
            fo.as_ptr(),
            fr.as_ptr(),
            0,
            null(),
            sp,
            null_mut(),
        )
    });
    ok(unsafe {
        ext!(clCommandBarrierWithWaitListKHR)(cb, null_mut(), null(), 0, null(), sp, null_mut())
    });
    let g = [n];
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    ok(unsafe {
        ext!(clCommandBarrierWithWaitListKHR)(cb, null_mut(), null(), 0, null(), sp, null_mut())
    });
    let (o, r) = ([0usize; 3], [n, 1, 1]);
    ok(unsafe {
        ext!(clCommandCopyImageToBufferKHR)(
            cb,
            null_mut(),
            null(),
            m,
            out,
            o.as_ptr(),
            r.as_ptr(),
            0,
            0,
            null(),
            sp,
            null_mut(),
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    for run in 0..2 {
        assert_eq!(run_command_buffer(cb), (CL_SUCCESS, CL_COMPLETE));
        for w in &mut words[4..12] {
            *w = 7;
        }
        let want: Vec<u32> = words
            .iter()
            .map(|w| w.wrapping_mul(3).wrapping_add(1))
            .collect();
        assert_eq!(env.read::<u32>(out, n), want, "run {run}");
        assert_eq!(
            env.read::<u32>(b_mid, n),
            want,
            "run {run}: the image's buffer"
        );
        // New bytes for the next run, written through the buffer.
        words = (0..n).map(|_| rng.next_u32()).collect();
        ok(unsafe {
            cl!(clEnqueueWriteBuffer)(
                env.queue,
                b_in,
                CL_TRUE,
                0,
                n * 4,
                words.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        });
    }
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
}
