//! `VKCL_COPY_KERNEL=1`: large 16-byte-aligned buffer copies made by vkcl's copy shader
//! (`backend/vulkan/copy_kernel.rs`, the default on NVIDIA's driver) rather than
//! `vkCmdCopyBuffer`, here forced on lavapipe: queue copies and command-buffer copies of
//! aligned and unaligned ranges, whole buffers and sub-buffers, each compared with the host's
//! bytes, and vkcl's debug counter of shader copies showing which path each took. Its own
//! test binary: the setting is read once per process.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const MIB: usize = 1 << 20;

/// Copies `size` bytes from `src_off` of a source to `dst_off` of a destination (both of
/// `len` bytes, the destination zeroed) on the queue; returns the destination's bytes.
fn queue_copy(env: &Env, len: usize, src_off: usize, dst_off: usize, size: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
    let src = env.buffer(CL_MEM_READ_WRITE, len, Some(&data));
    let dst = env.buffer(CL_MEM_READ_WRITE, len, Some(&vec![0u8; len]));
    ok(unsafe {
        cl!(clEnqueueCopyBuffer)(
            env.queue,
            src,
            dst,
            src_off,
            dst_off,
            size,
            0,
            null(),
            null_mut(),
        )
    });
    let got: Vec<u8> = env.read(dst, len);
    let mut want = vec![0u8; len];
    want[dst_off..dst_off + size].copy_from_slice(&data[src_off..src_off + size]);
    if let Some(i) = (0..len).find(|&i| got[i] != want[i]) {
        panic!(
            "copy of {size} bytes {src_off} -> {dst_off}: byte {i} is {}, want {}",
            got[i], want[i]
        );
    }
    unsafe {
        cl!(clReleaseMemObject)(src);
        cl!(clReleaseMemObject)(dst);
    }
    got
}

fn shader_copies() -> u64 {
    debug_stats()[5]
}

#[test]
fn large_aligned_copies_go_through_the_shader_and_stay_exact() {
    // SAFETY: set before the loader (and vkcl) is first used; the only test of this binary.
    unsafe { std::env::set_var("VKCL_COPY_KERNEL", "1") };
    let env = Env::new();
    // (buffer bytes, source offset, destination offset, bytes, through the shader)
    let cases = [
        (4 * MIB, 0, 0, 4 * MIB, true),
        (4 * MIB, 16, 1024, 2 * MIB + 48, true),
        (MIB, 0, 0, MIB, true),
        (MIB, 0, 0, MIB - 16, false),    // under the shader's minimum
        (4 * MIB, 4, 0, 2 * MIB, false), // source offset not a multiple of 16
        (4 * MIB, 0, 8, 2 * MIB, false), // destination offset
        (4 * MIB, 0, 0, 2 * MIB + 4, false), // size
    ];
    for (len, s, d, n, shader) in cases {
        let before = shader_copies();
        queue_copy(&env, len, s, d, n);
        assert_eq!(
            shader_copies() - before,
            u64::from(shader),
            "copy of {n} bytes {s} -> {d}: shader or not"
        );
    }
    // A command buffer's copy is recorded the same way (once, at finalize).
    let len = 3 * MIB;
    let data: Vec<u32> = (0..len as u32 / 4)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let (src, dst) = (env.buf(&data), env.zeros::<u32>(len / 4));
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, null(), &mut err) };
    ok(err);
    let before = shader_copies();
    ok(unsafe {
        ext!(clCommandCopyBufferKHR)(
            cb,
            null_mut(),
            null(),
            src,
            dst,
            MIB,
            0,
            2 * MIB,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    assert_eq!(shader_copies() - before, 1, "recorded through the shader");
    for _ in 0..2 {
        ok(unsafe { ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, null(), null_mut()) });
    }
    let got: Vec<u32> = env.read(dst, len / 4);
    let q = MIB / 4;
    assert!(got[..2 * q] == data[q..3 * q], "the command buffer's copy");
    assert!(
        got[2 * q..].iter().all(|&x| x == 0),
        "nothing past the copy"
    );
    ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    // A sub-buffer's copy: the shader sees the sub-buffer's own address.
    let region = cl_buffer_region {
        origin: MIB,
        size: 2 * MIB,
    };
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            src,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    let dst2 = env.zeros::<u32>(len / 4);
    let before = shader_copies();
    ok(unsafe {
        cl!(clEnqueueCopyBuffer)(env.queue, sub, dst2, 0, 16, 2 * MIB, 0, null(), null_mut())
    });
    let got: Vec<u32> = env.read(dst2, len / 4);
    assert_eq!(shader_copies() - before, 1);
    assert!(got[4..4 + 2 * q] == data[q..3 * q] && got[..4].iter().all(|&x| x == 0));
    unsafe {
        cl!(clReleaseMemObject)(sub);
        cl!(clReleaseMemObject)(src);
        cl!(clReleaseMemObject)(dst);
        cl!(clReleaseMemObject)(dst2);
    }
}
