// The body of tests/host_access.rs (storage accessed directly where the device allows) and
// tests/host_access_staged.rs (VKCL_STAGED_READS=1: every map, read and rectangle through
// host-cached staging): maps (the pointer returned, the data seen after unmap and after a
// blocking read, overlapping maps, sub-buffers, CL_MEM_USE_HOST_PTR, write-invalidate,
// blocking and not, ordering with kernels on in-order and out-of-order queues), rectangular
// reads and writes with pitches, and staging reuse, each checked against a host model.
// The including file defines `STAGED: bool` and `DEVICE_LOCAL: bool` (VKCL_DEVICE_LOCAL=force:
// every buffer but CL_MEM_ALLOC_HOST_PTR ones in memory the host does not map, so every host
// access is staged; tests/host_access_device_local.rs).

use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn env_with(props: cl_command_queue_properties) -> Env {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used in this
    // process; every test of this binary wants the same value.
    unsafe {
        if STAGED {
            std::env::set_var("VKCL_STAGED_READS", "1");
        } else {
            std::env::remove_var("VKCL_STAGED_READS");
        }
        if DEVICE_LOCAL {
            std::env::set_var("VKCL_DEVICE_LOCAL", "force");
        } else {
            std::env::remove_var("VKCL_DEVICE_LOCAL");
        }
    }
    Env::with_queue_properties(props)
}

fn env() -> Env {
    env_with(0)
}

/// Panics with the first differing byte (not the whole arrays) unless `got == want`.
#[track_caller]
fn same(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let i = got.iter().zip(want).position(|(a, b)| a != b);
        panic!(
            "{what}: lengths {} and {}, first difference at {i:?} ({:?} instead of {:?})",
            got.len(),
            want.len(),
            i.map(|i| got[i]),
            i.map(|i| want[i])
        );
    }
}

fn bytes_of(seed: u32, n: usize) -> Vec<u8> {
    let mut r = Rng(seed as u64);
    (0..n).map(|_| r.next_u32() as u8).collect()
}

fn release(m: cl_mem) {
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

/// A map on `q`; `blocking`; returns the pointer and the map's event.
#[allow(clippy::too_many_arguments)]
fn map_on(
    q: cl_command_queue,
    m: cl_mem,
    blocking: bool,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    waits: &[cl_event],
) -> (*mut u8, cl_event) {
    let mut err = 1;
    let mut ev = null_mut();
    let p = unsafe {
        cl!(clEnqueueMapBuffer)(
            q,
            m,
            blocking as cl_bool,
            flags,
            offset,
            size,
            waits.len() as cl_uint,
            if waits.is_empty() { null() } else { waits.as_ptr() },
            &mut ev,
            &mut err,
        )
    };
    ok(err);
    assert!(!p.is_null());
    (p as *mut u8, ev)
}

fn map(env: &Env, m: cl_mem, flags: cl_map_flags, offset: usize, size: usize) -> *mut u8 {
    let (p, ev) = map_on(env.queue, m, true, flags, offset, size, &[]);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    p
}

fn unmap_on(q: cl_command_queue, m: cl_mem, p: *mut u8, waits: &[cl_event]) -> cl_event {
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueUnmapMemObject)(
            q,
            m,
            p as *mut c_void,
            waits.len() as cl_uint,
            if waits.is_empty() { null() } else { waits.as_ptr() },
            &mut ev,
        )
    });
    ev
}

fn unmap(env: &Env, m: cl_mem, p: *mut u8) {
    let ev = unmap_on(env.queue, m, p, &[]);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
}

fn read_all(env: &Env, m: cl_mem, n: usize) -> Vec<u8> {
    env.read::<u8>(m, n)
}

fn write_at(env: &Env, m: cl_mem, offset: usize, data: &[u8]) {
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            env.queue,
            m,
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

fn view<'a>(p: *mut u8, n: usize) -> &'a mut [u8] {
    unsafe { std::slice::from_raw_parts_mut(p, n) }
}

fn wait(ev: cl_event) {
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    ok(unsafe { cl!(clReleaseEvent)(ev) });
}

fn sub(m: cl_mem, origin: usize, size: usize) -> cl_mem {
    let region = cl_buffer_region { origin, size };
    let mut err = 0;
    let s = unsafe {
        cl!(clCreateSubBuffer)(
            m,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    s
}

/// A kernel that adds `add` to every byte of its buffer.
const ADD: &str = "__kernel void add(__global uchar *a, uchar add) { a[get_global_id(0)] += add; }";

fn add_on(q: cl_command_queue, k: cl_kernel, m: cl_mem, n: usize, add: u8, waits: &[cl_event]) -> cl_event {
    set_arg(k, 0, &m);
    set_arg(k, 1, &add);
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            q,
            k,
            1,
            null(),
            &n,
            null(),
            waits.len() as cl_uint,
            if waits.is_empty() { null() } else { waits.as_ptr() },
            &mut ev,
        )
    });
    ev
}

#[test]
fn maps_show_the_contents_and_unmaps_write_them_back() {
    let env = env();
    let n = 70_000;
    let data = bytes_of(1, n);
    let m = env.buffer(0, n, Some(&data));
    let mut model = data.clone();
    // READ: the region's bytes at the pointer.
    let p = map(&env, m, CL_MAP_READ, 1000, 50_000);
    same(view(p, 50_000), &model[1000..51_000], "contents");
    unmap(&env, m, p);
    // READ | WRITE: the contents, and changes seen by a blocking read after the unmap.
    let p = map(&env, m, CL_MAP_READ | CL_MAP_WRITE, 3, 60_000);
    same(view(p, 60_000), &model[3..60_003], "contents");
    view(p, 60_000)[100..5000].fill(0xA5);
    model[103..5003].fill(0xA5);
    unmap(&env, m, p);
    same(&read_all(&env, m, n), &model, "contents");
    // WRITE alone keeps the bytes the host does not write.
    let p = map(&env, m, CL_MAP_WRITE, 65_000, 5_000);
    view(p, 5_000)[..10].fill(0x11);
    model[65_000..65_010].fill(0x11);
    unmap(&env, m, p);
    same(&read_all(&env, m, n), &model, "contents");
    // WRITE_INVALIDATE_REGION: the host writes every byte of the region.
    let p = map(&env, m, CL_MAP_WRITE_INVALIDATE_REGION, 128, 4096);
    view(p, 4096).copy_from_slice(&bytes_of(2, 4096));
    model[128..4224].copy_from_slice(&bytes_of(2, 4096));
    unmap(&env, m, p);
    same(&read_all(&env, m, n), &model, "contents");
    // A kernel sees what an unmap wrote, and a map what the kernel wrote.
    let k = env.kernel(env.build(ADD), "add");
    let p = map(&env, m, CL_MAP_WRITE, 0, 256);
    view(p, 256).fill(7);
    model[..256].fill(7);
    unmap(&env, m, p);
    let ev = add_on(env.queue, k, m, n, 3, &[]);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    model.iter_mut().for_each(|b| *b = b.wrapping_add(3));
    let p = map(&env, m, CL_MAP_READ, 0, n);
    same(view(p, n), &model[..], "contents");
    unmap(&env, m, p);
    release(m);
}

#[test]
fn overlapping_maps_and_sub_buffer_maps() {
    let env = env();
    let n = 8192;
    let data = bytes_of(3, n);
    let m = env.buffer(0, n, Some(&data));
    let mut model = data.clone();
    // Several read maps at once, overlapping, each with the right bytes.
    let a = map(&env, m, CL_MAP_READ, 0, 4096);
    let b = map(&env, m, CL_MAP_READ, 1024, 4096);
    let c = map(&env, m, CL_MAP_READ, 1024, 4096);
    same(view(a, 4096), &model[..4096], "contents");
    same(view(b, 4096), &model[1024..5120], "contents");
    same(view(c, 4096), &model[1024..5120], "contents");
    if STAGED || DEVICE_LOCAL {
        // Each staged map has its own staging memory.
        assert_ne!(b, c, "two live staged maps must not share a pointer");
    }
    let count = |m: cl_mem| {
        info_scalar::<cl_uint>(|s, v, r| unsafe {
            cl!(clGetMemObjectInfo)(m, CL_MEM_MAP_COUNT, s, v, r)
        })
    };
    assert_eq!(count(m), 3);
    // A write map of a region no live map overlaps.
    let w = map(&env, m, CL_MAP_WRITE, 6000, 1000);
    view(w, 1000).fill(0x5C);
    model[6000..7000].fill(0x5C);
    unmap(&env, m, b);
    unmap(&env, m, w);
    unmap(&env, m, c);
    unmap(&env, m, a);
    env.finish();
    assert_eq!(count(m), 0);
    same(&read_all(&env, m, n), &model, "contents");
    // Sub-buffers: a write map of one lands at its origin in the parent; a read map of the
    // parent and of another sub-buffer overlapping it, live together, agree.
    let s1 = sub(m, 1024, 2048);
    let s2 = sub(m, 2048, 4096);
    let p = map(&env, s1, CL_MAP_READ | CL_MAP_WRITE, 512, 1024);
    same(view(p, 1024), &model[1536..2560], "contents");
    view(p, 1024)[..100].copy_from_slice(&bytes_of(4, 100));
    model[1536..1636].copy_from_slice(&bytes_of(4, 100));
    unmap(&env, s1, p);
    let q1 = map(&env, m, CL_MAP_READ, 0, n);
    let q2 = map(&env, s2, CL_MAP_READ, 100, 3000);
    same(view(q1, n), &model[..], "contents");
    same(view(q2, 3000), &model[2148..5148], "contents");
    unmap(&env, m, q1);
    unmap(&env, s2, q2);
    // A kernel on a sub-buffer, then a map of the parent.
    let k = env.kernel(env.build(ADD), "add");
    let ev = add_on(env.queue, k, s2, 4096, 1, &[]);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    model[2048..6144].iter_mut().for_each(|b| *b = b.wrapping_add(1));
    let p = map(&env, m, CL_MAP_READ, 0, n);
    same(view(p, n), &model[..], "contents");
    unmap(&env, m, p);
    for x in [s1, s2, m] {
        release(x);
    }
}

#[test]
fn use_host_ptr_maps_return_host_ptr_with_the_data() {
    let env = env();
    let n = 20_000;
    let mut host = bytes_of(5, n);
    let mut model = host.clone();
    let hp = host.as_mut_ptr();
    let mut err = 0;
    let m = unsafe {
        cl!(clCreateBuffer)(env.context, CL_MEM_USE_HOST_PTR, n, hp as *mut c_void, &mut err)
    };
    ok(err);
    // The device changes the buffer; a read map shows it at host_ptr + offset.
    let k = env.kernel(env.build(ADD), "add");
    let ev = add_on(env.queue, k, m, n, 9, &[]);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    model.iter_mut().for_each(|b| *b = b.wrapping_add(9));
    let p = map(&env, m, CL_MAP_READ, 300, 10_000);
    assert_eq!(p, hp.wrapping_add(300), "the map of a USE_HOST_PTR buffer is host_ptr + offset");
    same(view(p, 10_000), &model[300..10_300], "contents");
    unmap(&env, m, p);
    // A write map's changes, made at host_ptr, reach the buffer (a blocking read and a
    // kernel see them).
    let p = map(&env, m, CL_MAP_WRITE, 12_000, 2_000);
    assert_eq!(p, hp.wrapping_add(12_000));
    same(view(p, 2_000), &model[12_000..14_000], "contents");
    view(p, 2_000)[..500].fill(0xEE);
    model[12_000..12_500].fill(0xEE);
    unmap(&env, m, p);
    same(&read_all(&env, m, n), &model, "contents");
    // Write-invalidate: the host writes the region at host_ptr.
    let p = map(&env, m, CL_MAP_WRITE_INVALIDATE_REGION, 0, 1000);
    assert_eq!(p, hp);
    view(p, 1000).fill(0x21);
    model[..1000].fill(0x21);
    unmap(&env, m, p);
    let ev = add_on(env.queue, k, m, n, 1, &[]);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    model.iter_mut().for_each(|b| *b = b.wrapping_add(1));
    same(&read_all(&env, m, n), &model, "contents");
    // A sub-buffer's map is inside host_ptr too.
    let s = sub(m, 4096, 4096);
    let p = map(&env, s, CL_MAP_READ, 10, 100);
    assert_eq!(p, hp.wrapping_add(4106));
    same(view(p, 100), &model[4106..4206], "contents");
    unmap(&env, s, p);
    // A non-blocking write map unmapped at once, both queued behind a kernel that waits for
    // a user event: the unmap must copy back what the map brought in (the kernel's output),
    // not what host_ptr held before.
    let mut err = 0;
    let gate = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    let kev = add_on(env.queue, k, m, n, 2, &[gate]);
    model.iter_mut().for_each(|b| *b = b.wrapping_add(2));
    let (p, mev) = map_on(env.queue, m, false, CL_MAP_WRITE, 0, n, &[]);
    assert_eq!(p, hp);
    let uev = unmap_on(env.queue, m, p, &[]);
    ok(unsafe { cl!(clFlush)(env.queue) });
    ok(unsafe { cl!(clSetUserEventStatus)(gate, CL_COMPLETE) });
    wait(uev);
    same(&read_all(&env, m, n), &model, "contents");
    for e in [gate, kev, mev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    release(s);
    release(m);
    env.finish();
    drop(host);
}

/// Maps queued behind kernels (blocking and not), on an in-order and an out-of-order queue
/// (ordered there by events): each map sees the kernels before it, each unmap's data the
/// kernels after it.
#[test]
fn maps_order_with_kernels_on_both_queue_kinds() {
    for props in [0, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE] {
        let env = env_with(props);
        let q = env.queue;
        let n = 100_000;
        let data = bytes_of(6, n);
        let m = env.buffer(0, n, Some(&data));
        let mut model = data.clone();
        let k = env.kernel(env.build(ADD), "add");
        let mut last: Option<cl_event> = None;
        for round in 0..6u8 {
            let waits: Vec<cl_event> = last.into_iter().collect();
            let kev = add_on(q, k, m, n, round + 1, &waits);
            model.iter_mut().for_each(|b| *b = b.wrapping_add(round + 1));
            let blocking = round % 2 == 0;
            let (p, mev) = map_on(q, m, blocking, CL_MAP_READ | CL_MAP_WRITE, 0, n, &[kev]);
            if !blocking {
                ok(unsafe { cl!(clWaitForEvents)(1, &mev) });
            }
            same(view(p, n), &model[..], &format!("round {round}, props {props}"));
            let at = round as usize * 1000;
            view(p, n)[at..at + 700].fill(round);
            model[at..at + 700].fill(round);
            let uev = unmap_on(q, m, p, &[mev]);
            for e in waits.into_iter().chain([kev, mev]) {
                ok(unsafe { cl!(clReleaseEvent)(e) });
            }
            last = Some(uev);
        }
        let last = last.unwrap();
        let mut v = vec![0u8; n];
        ok(unsafe {
            cl!(clEnqueueReadBuffer)(
                q,
                m,
                CL_TRUE,
                0,
                n,
                v.as_mut_ptr() as *mut c_void,
                1,
                &last,
                null_mut(),
            )
        });
        same(&v, &model, "contents");
        ok(unsafe { cl!(clReleaseEvent)(last) });
        release(m);
    }
}

/// The rows of a rectangle: (buffer offset, host offset) of each, as the spec defines them.
fn rect_rows(
    b_origin: [usize; 3],
    h_origin: [usize; 3],
    region: [usize; 3],
    p: [usize; 4],
) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for z in 0..region[2] {
        for y in 0..region[1] {
            let bo = b_origin[0] + (b_origin[1] + y) * p[0] + (b_origin[2] + z) * p[1];
            let ho = h_origin[0] + (h_origin[1] + y) * p[2] + (h_origin[2] + z) * p[3];
            v.push((bo, ho));
        }
    }
    v
}

#[test]
fn rectangular_reads_and_writes_with_pitches() {
    let env = env();
    let n = 64 * 1024;
    let data = bytes_of(7, n);
    let m = env.buffer(0, n, Some(&data));
    let mut model = data.clone();
    // (buffer origin, host origin, region, [buffer row, slice, host row, slice] pitches)
    let cases: [([usize; 3], [usize; 3], [usize; 3], [usize; 4]); 4] = [
        ([3, 2, 1], [1, 1, 0], [37, 5, 3], [64, 640, 40, 400]),
        ([0, 0, 0], [0, 0, 0], [256, 16, 2], [256, 4096, 256, 4096]),
        ([5, 0, 0], [7, 3, 2], [11, 7, 4], [100, 1000, 20, 300]),
        ([0, 10, 2], [0, 0, 0], [1, 30, 5], [33, 2013, 1, 30]),
    ];
    for (i, (bo, ho, region, p)) in cases.into_iter().enumerate() {
        let rows = rect_rows(bo, ho, region, p);
        let host_len = rows.iter().map(|r| r.1).max().unwrap() + region[0];
        // Read: every row lands at its host offset; host bytes outside the rows untouched.
        let mut host = vec![0xCDu8; host_len + 16];
        let mut want = host.clone();
        for &(b, h) in &rows {
            want[h..h + region[0]].copy_from_slice(&model[b..b + region[0]]);
        }
        ok(unsafe {
            cl!(clEnqueueReadBufferRect)(
                env.queue,
                m,
                CL_TRUE,
                bo.as_ptr(),
                ho.as_ptr(),
                region.as_ptr(),
                p[0],
                p[1],
                p[2],
                p[3],
                host.as_mut_ptr() as *mut c_void,
                0,
                null(),
                null_mut(),
            )
        });
        same(&host, &want, &format!("rect read {i}"));
        // Write: fresh host bytes go to the buffer rows, the rest of the buffer untouched.
        let src = bytes_of(100 + i as u32, host_len);
        for &(b, h) in &rows {
            model[b..b + region[0]].copy_from_slice(&src[h..h + region[0]]);
        }
        let mut ev = null_mut();
        ok(unsafe {
            cl!(clEnqueueWriteBufferRect)(
                env.queue,
                m,
                CL_FALSE,
                bo.as_ptr(),
                ho.as_ptr(),
                region.as_ptr(),
                p[0],
                p[1],
                p[2],
                p[3],
                src.as_ptr() as *const c_void,
                0,
                null(),
                &mut ev,
            )
        });
        wait(ev);
        same(&read_all(&env, m, n), &model, &format!("rect write {i}"));
    }
    // On a sub-buffer, non-blocking, queued behind a kernel.
    let s = sub(m, 8192, 8192);
    let k = env.kernel(env.build(ADD), "add");
    let kev = add_on(env.queue, k, s, 8192, 4, &[]);
    model[8192..16384].iter_mut().for_each(|b| *b = b.wrapping_add(4));
    let (bo, ho, region, p) = ([1usize, 1, 1], [0usize, 0, 0], [50usize, 20, 3], [80usize, 2000, 50, 1000]);
    let mut host = vec![0u8; 3000];
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueReadBufferRect)(
            env.queue,
            s,
            CL_FALSE,
            bo.as_ptr(),
            ho.as_ptr(),
            region.as_ptr(),
            p[0],
            p[1],
            p[2],
            p[3],
            host.as_mut_ptr() as *mut c_void,
            0,
            null(),
            &mut ev,
        )
    });
    wait(ev);
    let mut want = vec![0u8; 3000];
    for (b, h) in rect_rows(bo, ho, region, p) {
        want[h..h + 50].copy_from_slice(&model[8192 + b..8192 + b + 50]);
    }
    same(&host, &want, "rect read of a sub-buffer");
    // A rect write into the sub-buffer lands at its origin in the parent.
    let src = bytes_of(200, 3000);
    ok(unsafe {
        cl!(clEnqueueWriteBufferRect)(
            env.queue,
            s,
            CL_TRUE,
            bo.as_ptr(),
            ho.as_ptr(),
            region.as_ptr(),
            p[0],
            p[1],
            p[2],
            p[3],
            src.as_ptr() as *const c_void,
            0,
            null(),
            null_mut(),
        )
    });
    for (b, h) in rect_rows(bo, ho, region, p) {
        model[8192 + b..8192 + b + 50].copy_from_slice(&src[h..h + 50]);
    }
    same(&read_all(&env, m, n), &model, "rect write of a sub-buffer");
    ok(unsafe { cl!(clReleaseEvent)(kev) });
    release(s);
    release(m);
}

/// Many reads and maps of changing contents and sizes (staging buffers reused from the pool
/// must never show an earlier command's bytes).
#[test]
fn repeated_reads_and_maps_see_fresh_data() {
    let env = env();
    let n = 300_000;
    let m = env.buffer(0, n, None);
    for i in 0..40u32 {
        let data = bytes_of(1000 + i, n);
        write_at(&env, m, 0, &data);
        let (off, len) = ((i as usize * 7919) % 1000, [1, 4096, 65_536, 200_000][i as usize % 4]);
        let mut v = vec![0u8; len];
        ok(unsafe {
            cl!(clEnqueueReadBuffer)(
                env.queue,
                m,
                CL_TRUE,
                off,
                len,
                v.as_mut_ptr() as *mut c_void,
                0,
                null(),
                null_mut(),
            )
        });
        same(&v, &data[off..off + len], &format!("read {i}"));
        let p = map(&env, m, CL_MAP_READ, off, len);
        same(view(p, len), &data[off..off + len], &format!("map {i}"));
        unmap(&env, m, p);
    }
    env.finish();
    release(m);
}
