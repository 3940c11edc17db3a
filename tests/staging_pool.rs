//! The staging pool (`backend/vulkan/staging.rs`) with every host access staged
//! (`VKCL_STAGED_READS=1`): once warm, reads, chunked reads, rectangles and maps of the same
//! sizes allocate no staging buffer from Vulkan (vkcl's debug counter 4), and the data stays
//! right. One test in its own binary, so that no other test allocates meanwhile.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// vkcl's debug counter of staging buffers allocated from Vulkan.
fn staging_allocations() -> u64 {
    debug_stats()[4]
}

fn round(env: &Env, m: cl_mem, data: &[u8]) {
    let n = data.len();
    // A read of one chunk, a chunked read, a rectangle, a map.
    for len in [100_000, n] {
        let mut v = vec![0u8; len];
        ok(unsafe {
            cl!(clEnqueueReadBuffer)(
                env.queue,
                m,
                CL_TRUE,
                0,
                len,
                v.as_mut_ptr() as *mut c_void,
                0,
                null(),
                null_mut(),
            )
        });
        assert!(v == data[..len], "read of {len} bytes");
    }
    let (o, r) = ([0usize, 0, 0], [64usize, 32, 1]);
    let mut v = vec![0u8; 64 * 32];
    ok(unsafe {
        cl!(clEnqueueReadBufferRect)(
            env.queue,
            m,
            CL_TRUE,
            o.as_ptr(),
            o.as_ptr(),
            r.as_ptr(),
            256,
            0,
            64,
            0,
            v.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    for y in 0..32 {
        assert!(
            v[y * 64..y * 64 + 64] == data[y * 256..y * 256 + 64],
            "rect row {y}"
        );
    }
    let mut err = 0;
    let p = unsafe {
        cl!(clEnqueueMapBuffer)(
            env.queue,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            1 << 20,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    ok(err);
    assert!(unsafe { std::slice::from_raw_parts(p as *const u8, 1 << 20) } == &data[..1 << 20]);
    ok(unsafe { cl!(clEnqueueUnmapMemObject)(env.queue, m, p, 0, null(), null_mut()) });
    env.finish();
}

#[test]
fn warm_staging_is_reused() {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used.
    unsafe { std::env::set_var("VKCL_STAGED_READS", "1") };
    let env = Env::new();
    let n = 20 << 20;
    let mut rng = Rng(5);
    let data: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
    let m = env.buffer(0, n, Some(&data));
    round(&env, m, &data);
    let warm = staging_allocations();
    assert!(
        warm > 0,
        "the staged paths allocated no staging buffer at all"
    );
    for _ in 0..5 {
        round(&env, m, &data);
    }
    assert_eq!(
        staging_allocations(),
        warm,
        "steady-state staged commands allocated staging buffers"
    );
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}
