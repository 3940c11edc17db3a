//! Device-local placement (`VKCL_DEVICE_LOCAL=force`: on lavapipe too, every buffer but
//! `CL_MEM_ALLOC_HOST_PTR` ones lives in memory the host does not map, and every host access
//! goes through staging): the map, rectangle and read tests of tests/host_access.rs
//! (tests/common/host_access_body.rs), and writes, byte-pattern fills, initial contents,
//! copies and kernels, against a host model.
mod common;

const STAGED: bool = false;
const DEVICE_LOCAL: bool = true;

include!("common/host_access_body.rs");

fn fill(env: &Env, m: cl_mem, pattern: &[u8], offset: usize, size: usize) {
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            env.queue,
            m,
            pattern.as_ptr() as *const c_void,
            pattern.len(),
            offset,
            size,
            0,
            null(),
            &mut ev,
        )
    });
    wait(ev);
}

#[test]
fn writes_fills_initial_contents_and_kernels() {
    let env = env();
    let n = 50_000;
    let data = bytes_of(40, n);
    // COPY_HOST_PTR: the initial contents are uploaded.
    let m = env.buffer(0, n, Some(&data));
    let mut model = data.clone();
    same(&read_all(&env, m, n), &model, "COPY_HOST_PTR contents");
    // Writes, blocking and not, at odd offsets, and of a sub-buffer.
    write_at(&env, m, 7, &bytes_of(41, 999));
    model[7..1006].copy_from_slice(&bytes_of(41, 999));
    let src = bytes_of(42, 3000);
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            env.queue,
            m,
            CL_FALSE,
            20_001,
            3000,
            src.as_ptr() as *const c_void,
            0,
            null(),
            &mut ev,
        )
    });
    wait(ev);
    model[20_001..23_001].copy_from_slice(&src);
    let s = sub(m, 32_768, 8192);
    write_at(&env, s, 100, &[0xAB; 50]);
    model[32_868..32_918].fill(0xAB);
    same(&read_all(&env, m, n), &model, "after writes");
    // Fills: byte patterns (staged) and word patterns (on the device).
    fill(&env, m, &[0x3C], 5, 77);
    model[5..82].fill(0x3C);
    fill(&env, m, &[1, 2], 1000, 64);
    for (i, b) in model[1000..1064].iter_mut().enumerate() {
        *b = [1, 2][i % 2];
    }
    let pat8 = [9u8, 8, 7, 6, 5, 4, 3, 2];
    fill(&env, m, &pat8, 4096, 800);
    for (i, b) in model[4096..4896].iter_mut().enumerate() {
        *b = pat8[i % 8];
    }
    fill(&env, m, &[0xDE, 0xAD, 0xBE, 0xEF], 8192, 4096);
    for (i, b) in model[8192..12_288].iter_mut().enumerate() {
        *b = [0xDE, 0xAD, 0xBE, 0xEF][i % 4];
    }
    same(&read_all(&env, m, n), &model, "after fills");
    // A kernel sees all of it; a copy moves it.
    let k = env.kernel(env.build(ADD), "add");
    let kev = add_on(env.queue, k, m, n, 5, &[]);
    ok(unsafe { cl!(clReleaseEvent)(kev) });
    model.iter_mut().for_each(|b| *b = b.wrapping_add(5));
    let m2 = env.buffer(0, n, None);
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, m, m2, 0, 0, n, 0, null(), null_mut()) });
    same(
        &read_all(&env, m2, n),
        &model,
        "copy of the kernel's output",
    );
    // USE_HOST_PTR: initial contents from host_ptr.
    let mut host = bytes_of(43, 4096);
    let mut err = 0;
    let u = unsafe {
        cl!(clCreateBuffer)(
            env.context,
            CL_MEM_USE_HOST_PTR,
            4096,
            host.as_mut_ptr() as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    same(
        &read_all(&env, u, 4096),
        &bytes_of(43, 4096),
        "USE_HOST_PTR contents",
    );
    for x in [s, m, m2, u] {
        release(x);
    }
    env.finish();
    drop(host);
}

/// `CL_MEM_ALLOC_HOST_PTR` buffers stay in memory the host maps: two maps of one region hand
/// out the same address (the storage's), where a device-local buffer's two maps differ.
#[test]
fn alloc_host_ptr_buffers_stay_host_visible() {
    let env = env();
    let data = bytes_of(44, 4096);
    let a = env.buffer(CL_MEM_ALLOC_HOST_PTR, 4096, Some(&data));
    let p1 = map(&env, a, CL_MAP_READ, 0, 4096);
    let p2 = map(&env, a, CL_MAP_READ, 0, 4096);
    assert_eq!(p1, p2, "an ALLOC_HOST_PTR buffer's maps are its storage");
    same(view(p1, 4096), &data, "ALLOC_HOST_PTR map");
    unmap(&env, a, p2);
    unmap(&env, a, p1);
    let d = env.buffer(0, 4096, Some(&data));
    let q1 = map(&env, d, CL_MAP_READ, 0, 4096);
    let q2 = map(&env, d, CL_MAP_READ, 0, 4096);
    assert_ne!(q1, q2, "a device-local buffer's maps are staged");
    same(view(q2, 4096), &data, "device-local map");
    unmap(&env, d, q1);
    unmap(&env, d, q2);
    env.finish();
    release(a);
    release(d);
}
