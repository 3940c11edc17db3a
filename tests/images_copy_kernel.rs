//! `VKCL_COPY_KERNEL=1` with `VKCL_IMAGES=1`: image-to-image copies made by vkcl's image-copy
//! shader (`backend/vulkan/image_copy_kernel.rs`, the default on NVIDIA's driver) rather than
//! `vkCmdCopyImage`, here forced on lavapipe. Every image type, texels of 1, 2, 4, 8 and 16
//! bytes in formats whose own conversions would change some bit patterns (snorm -128, NaN
//! payloads, denormals, all present among the random bytes), a copy within one image and a
//! copy recorded in a command buffer, each compared with the host model of the images
//! (`tests/common/images.rs`), and vkcl's debug counter of shader copies showing that each went
//! through the shader. Its own test binary: the settings are read once per process.
mod common;
use common::images::*;
use common::*;
use std::ptr::{null, null_mut};

/// Held by each test: the shader-copy counter is the process's, so the tests take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn shader_copies() -> u64 {
    debug_stats()[5]
}

fn copy(env: &Env, s: &Img, d: &Img, so: [usize; 3], dso: [usize; 3], r: [usize; 3]) {
    ok(copy_image(env, s, d, so, dso, r));
}

#[test]
fn image_copies_go_through_the_shader_bit_exact() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: set before the loader (and vkcl) is first used; the only test of this binary.
    unsafe { std::env::set_var("VKCL_COPY_KERNEL", "1") };
    let env = env();
    let mut rng = Rng(61);
    let formats = [
        ((CL_R, CL_UNSIGNED_INT8), 1),
        ((CL_RG, CL_SNORM_INT8), 2),
        ((CL_R, CL_HALF_FLOAT), 2),
        ((CL_RGBA, CL_SNORM_INT8), 4),
        (RGBA8, 4),
        (R32F, 4),
        ((CL_RGBA, CL_HALF_FLOAT), 8),
        ((CL_RG, CL_FLOAT), 8),
        ((CL_RGBA, CL_FLOAT), 16),
        ((CL_RGBA, CL_SIGNED_INT32), 16),
    ];
    for (ty, ext, o, r) in cases() {
        for (f, elem) in formats {
            let s = Img::new(&env, ty, ext, f, elem, &mut rng);
            let mut d = Img::new(&env, ty, ext, f, elem, &mut rng);
            // The box to the destination's origin (the box fits there: o + r <= ext).
            let before = shader_copies();
            copy(&env, &s, &d, o, [0; 3], r);
            env.finish();
            let what = format!("type {ty:#x}, format {f:?}");
            assert_eq!(shader_copies(), before + 1, "{what}: a shader copy");
            d.put([0; 3], r, &s.expect(o, r));
            d.check(&env, &what);
            s.check(&env, &format!("{what}: the source is unchanged"));
            for m in [s.mem, d.mem] {
                ok(unsafe { cl!(clReleaseMemObject)(m) });
            }
        }
    }
    // Within one image, boxes apart.
    let mut one = Img::new(
        &env,
        CL_MEM_OBJECT_IMAGE2D,
        [70, 40, 1],
        (CL_RGBA, CL_HALF_FLOAT),
        8,
        &mut rng,
    );
    let part = one.expect([0, 0, 0], [33, 17, 1]);
    copy(&env, &one, &one, [0, 0, 0], [35, 20, 0], [33, 17, 1]);
    one.put([35, 20, 0], [33, 17, 1], &part);
    one.check(&env, "a copy within one image");
    ok(unsafe { cl!(clReleaseMemObject)(one.mem) });
}

#[test]
fn recorded_image_copies_replay_through_the_shader() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: as above; both tests of this binary set the same value.
    unsafe { std::env::set_var("VKCL_COPY_KERNEL", "1") };
    let env = env();
    if !env.has_extension("cl_khr_command_buffer") {
        eprintln!("skipped: no cl_khr_command_buffer");
        return;
    }
    let mut rng = Rng(62);
    let f = (CL_RGBA, CL_SNORM_INT8);
    let a = Img::new(&env, CL_MEM_OBJECT_IMAGE3D, [12, 10, 6], f, 4, &mut rng);
    let mut b = Img::new(&env, CL_MEM_OBJECT_IMAGE3D, [9, 9, 9], f, 4, &mut rng);
    let (o, dso, r) = ([2usize, 1, 1], [0usize, 3, 2], [9usize, 6, 5]);
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, null(), &mut err) };
    ok(err);
    ok(unsafe {
        ext!(clCommandCopyImageKHR)(
            cb,
            null_mut(),
            null(),
            a.mem,
            b.mem,
            o.as_ptr(),
            dso.as_ptr(),
            r.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    // Counted when the copy is recorded (at finalize, into the command buffer's secondary).
    let before = shader_copies();
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    for run in 0..2 {
        // The destination is written anew between runs: each run copies again.
        let fresh: Vec<u8> = (0..9 * 9 * 9 * 4).map(|_| rng.next_u32() as u8).collect();
        ok(write_image(&env, b.mem, [0; 3], [9, 9, 9], (0, 0), &fresh));
        b.model = fresh;
        ok(unsafe { ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, null(), null_mut()) });
        env.finish();
        b.put(dso, r, &a.expect(o, r));
        b.check(&env, &format!("run {run}"));
    }
    assert!(
        shader_copies() > before,
        "the recorded copy went through the shader ({before} -> {})",
        shader_copies()
    );
    unsafe {
        cl!(clReleaseMemObject)(a.mem);
        cl!(clReleaseMemObject)(b.mem);
        ext!(clReleaseCommandBufferKHR)(cb);
    }
}
