//! Buffers through the real loader: transfers, fills, sub-buffers, rectangles, maps, destructor
//! callbacks and the error codes of every buffer entry point. Device results are compared with
//! a host model.
mod common;
use common::*;
use std::collections::HashSet;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

fn write(env: &Env, m: cl_mem, offset: usize, data: &[u8]) {
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

fn read_at(env: &Env, m: cl_mem, offset: usize, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            m,
            CL_TRUE,
            offset,
            n,
            v.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    v
}

fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next_u32() as u8).collect()
}

fn mem_info<T: Copy + Default>(m: cl_mem, name: cl_mem_info) -> T {
    info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(m, name, s, v, r) })
}

fn create(env: &Env, flags: cl_mem_flags, size: usize, host: *mut c_void) -> (cl_mem, cl_int) {
    let mut err = 1;
    let m = unsafe { cl!(clCreateBuffer)(env.context, flags, size, host, &mut err) };
    (m, err)
}

fn release(m: cl_mem) {
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

fn sub_buffer(m: cl_mem, flags: cl_mem_flags, origin: usize, size: usize) -> (cl_mem, cl_int) {
    let region = cl_buffer_region { origin, size };
    let mut err = 1;
    let s = unsafe {
        cl!(clCreateSubBuffer)(
            m,
            flags,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    (s, err)
}

/// A user event already set to a negative status.
fn failed_event(env: &Env) -> cl_event {
    let mut err = 0;
    let e = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    ok(unsafe { cl!(clSetUserEventStatus)(e, -1) });
    e
}

#[test]
fn write_read_round_trips() {
    let env = Env::new();
    let data = random_bytes(1, 4096);
    let m = env.buffer(0, 4096, None);
    write(&env, m, 0, &data);
    assert_eq!(read_at(&env, m, 0, 4096), data);
    // Unaligned partial write and read.
    let part = random_bytes(2, 101);
    write(&env, m, 13, &part);
    let mut model = data.clone();
    model[13..114].copy_from_slice(&part);
    assert_eq!(read_at(&env, m, 0, 4096), model);
    assert_eq!(read_at(&env, m, 7, 33), model[7..40]);
    // Non-blocking write, then a blocking read that waits on its event.
    let more = random_bytes(3, 64);
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            env.queue,
            m,
            CL_FALSE,
            100,
            64,
            more.as_ptr() as *const c_void,
            0,
            null(),
            &mut ev,
        )
    });
    let mut out = vec![0u8; 64];
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            env.queue,
            m,
            CL_TRUE,
            100,
            64,
            out.as_mut_ptr() as *mut c_void,
            1,
            &ev,
            null_mut(),
        )
    });
    assert_eq!(out, more);
    let ty: cl_command_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_TYPE, s, v, r) });
    assert_eq!(ty, CL_COMMAND_WRITE_BUFFER);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    // COPY_HOST_PTR initialises; the host copy may change afterwards.
    let mut init = random_bytes(4, 256);
    let c = env.buffer(CL_MEM_READ_ONLY, 256, Some(&init));
    let expect = init.clone();
    init.fill(0);
    assert_eq!(read_at(&env, c, 0, 256), expect);
    release(m);
    release(c);
}

#[test]
fn copy_between_and_within_buffers() {
    let env = Env::new();
    let a_data = random_bytes(5, 1024);
    let a = env.buffer(0, 1024, Some(&a_data));
    let b = env.buffer(0, 1024, Some(&[0u8; 1024]));
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, a, b, 100, 300, 500, 0, null(), null_mut()) });
    let mut model = vec![0u8; 1024];
    model[300..800].copy_from_slice(&a_data[100..600]);
    assert_eq!(read_at(&env, b, 0, 1024), model);
    // Within one buffer, disjoint regions.
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, a, a, 0, 512, 256, 0, null(), null_mut()) });
    let mut model_a = a_data.clone();
    model_a.copy_within(0..256, 512);
    assert_eq!(read_at(&env, a, 0, 1024), model_a);
    // Overlapping regions of one buffer, and of a buffer and its sub-buffer.
    let r =
        unsafe { cl!(clEnqueueCopyBuffer)(env.queue, a, a, 0, 100, 200, 0, null(), null_mut()) };
    assert_eq!(r, CL_MEM_COPY_OVERLAP);
    let (s, err) = sub_buffer(a, 0, 128, 256);
    ok(err);
    let r = unsafe { cl!(clEnqueueCopyBuffer)(env.queue, s, a, 0, 150, 64, 0, null(), null_mut()) };
    assert_eq!(r, CL_MEM_COPY_OVERLAP);
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, s, a, 0, 600, 64, 0, null(), null_mut()) });
    model_a.copy_within(128..192, 600);
    assert_eq!(read_at(&env, a, 0, 1024), model_a);
    // Out of bounds.
    let r =
        unsafe { cl!(clEnqueueCopyBuffer)(env.queue, a, b, 1000, 0, 25, 0, null(), null_mut()) };
    assert_eq!(r, CL_INVALID_VALUE);
    let r = unsafe {
        cl!(clEnqueueCopyBuffer)(env.queue, a, b, 0, usize::MAX, 2, 0, null(), null_mut())
    };
    assert_eq!(r, CL_INVALID_VALUE);
    release(s);
    release(a);
    release(b);
}

#[test]
fn fill_every_pattern_size_and_offset() {
    let env = Env::new();
    const N: usize = 2048;
    let m = env.buffer(0, N, None);
    let mut size = 1;
    while size <= 128 {
        let pattern = random_bytes(size as u64, size);
        // Offsets that are and are not 4-byte aligned (multiples of the pattern size).
        for (k, count) in [(0usize, 1usize), (1, 3), (3, 5), (5, 2), (2, 7)] {
            let (offset, len) = (k * size, count * size);
            if offset + len > N {
                continue;
            }
            let background = random_bytes(1000 + size as u64 * 10 + k as u64, N);
            write(&env, m, 0, &background);
            ok(unsafe {
                cl!(clEnqueueFillBuffer)(
                    env.queue,
                    m,
                    pattern.as_ptr() as *const c_void,
                    size,
                    offset,
                    len,
                    0,
                    null(),
                    null_mut(),
                )
            });
            let mut model = background.clone();
            for (i, b) in model[offset..offset + len].iter_mut().enumerate() {
                *b = pattern[i % size];
            }
            assert_eq!(
                read_at(&env, m, 0, N),
                model,
                "pattern size {size}, offset {offset}, size {len}"
            );
        }
        size *= 2;
    }
    // A word-periodic pattern on a large aligned region (vkCmdFillBuffer path) and on a sub-buffer.
    let pat = [7u8, 7, 7, 7, 7, 7, 7, 7];
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            env.queue,
            m,
            pat.as_ptr() as *const c_void,
            8,
            0,
            N,
            0,
            null(),
            null_mut(),
        )
    });
    assert_eq!(read_at(&env, m, 0, N), vec![7u8; N]);
    let (s, err) = sub_buffer(m, 0, 1024, 512);
    ok(err);
    let p2 = [1u8, 2];
    ok(unsafe {
        cl!(clEnqueueFillBuffer)(
            env.queue,
            s,
            p2.as_ptr() as *const c_void,
            2,
            2,
            6,
            0,
            null(),
            null_mut(),
        )
    });
    let mut model = vec![7u8; N];
    model[1026..1032].copy_from_slice(&[1, 2, 1, 2, 1, 2]);
    assert_eq!(read_at(&env, m, 0, N), model);
    // Errors: NULL pattern, sizes that are not 1..128 powers of two, misaligned offset/size.
    let fill = |p: *const c_void, ps: usize, off: usize, size: usize| unsafe {
        cl!(clEnqueueFillBuffer)(env.queue, m, p, ps, off, size, 0, null(), null_mut())
    };
    let big = [0u8; 256];
    let bp = big.as_ptr() as *const c_void;
    assert_eq!(fill(null(), 4, 0, 16), CL_INVALID_VALUE);
    assert_eq!(fill(bp, 0, 0, 16), CL_INVALID_VALUE);
    assert_eq!(fill(bp, 3, 0, 12), CL_INVALID_VALUE);
    assert_eq!(fill(bp, 256, 0, 256), CL_INVALID_VALUE);
    assert_eq!(fill(bp, 4, 2, 16), CL_INVALID_VALUE);
    assert_eq!(fill(bp, 4, 0, 18), CL_INVALID_VALUE);
    assert_eq!(fill(bp, 4, N - 4, 8), CL_INVALID_VALUE);
    release(s);
    release(m);
}

#[test]
fn sub_buffers_read_write_and_info() {
    let env = Env::new();
    let data = random_bytes(9, 1024);
    let m = env.buffer(0, 1024, Some(&data));
    let (s, err) = sub_buffer(m, CL_MEM_READ_ONLY, 256, 300);
    ok(err);
    assert_eq!(read_at(&env, s, 0, 300), data[256..556]);
    let upd = random_bytes(10, 50);
    write(&env, s, 10, &upd);
    let mut model = data.clone();
    model[266..316].copy_from_slice(&upd);
    assert_eq!(read_at(&env, m, 0, 1024), model);
    assert_eq!(mem_info::<cl_mem>(s, CL_MEM_ASSOCIATED_MEMOBJECT), m);
    assert_eq!(mem_info::<usize>(s, CL_MEM_OFFSET), 256);
    assert_eq!(mem_info::<usize>(s, CL_MEM_SIZE), 300);
    assert_eq!(
        mem_info::<cl_mem_flags>(s, CL_MEM_FLAGS) & CL_MEM_READ_ONLY,
        CL_MEM_READ_ONLY
    );
    assert_eq!(
        mem_info::<cl_mem>(m, CL_MEM_ASSOCIATED_MEMOBJECT),
        null_mut()
    );
    assert_eq!(mem_info::<usize>(m, CL_MEM_OFFSET), 0);
    assert_eq!(mem_info::<cl_context>(s, CL_MEM_CONTEXT), env.context);
    // Errors.
    let align_bits: cl_uint = info_scalar(|sz, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sz, v, r)
    });
    let align = align_bits as usize / 8;
    assert_eq!(sub_buffer(m, 0, 4, 16).1, CL_MISALIGNED_SUB_BUFFER_OFFSET);
    assert_eq!(sub_buffer(m, 0, align, 16).1, CL_SUCCESS);
    assert_eq!(sub_buffer(m, 0, 0, 0).1, CL_INVALID_BUFFER_SIZE);
    assert_eq!(sub_buffer(m, 0, 512, 513).1, CL_INVALID_VALUE);
    assert_eq!(sub_buffer(m, 0, usize::MAX - 127, 256).1, CL_INVALID_VALUE);
    assert_eq!(
        sub_buffer(s, 0, 0, 16).1,
        CL_INVALID_MEM_OBJECT,
        "sub-buffer of a sub-buffer"
    );
    assert_eq!(
        sub_buffer(m, CL_MEM_USE_HOST_PTR, 0, 16).1,
        CL_INVALID_VALUE
    );
    let ro = env.buffer(CL_MEM_READ_ONLY, 256, None);
    assert_eq!(sub_buffer(ro, CL_MEM_WRITE_ONLY, 0, 16).1, CL_INVALID_VALUE);
    assert_eq!(sub_buffer(ro, CL_MEM_READ_WRITE, 0, 16).1, CL_INVALID_VALUE);
    let hro = env.buffer(CL_MEM_HOST_READ_ONLY, 256, None);
    assert_eq!(
        sub_buffer(hro, CL_MEM_HOST_WRITE_ONLY, 0, 16).1,
        CL_INVALID_VALUE
    );
    let (hs, err) = sub_buffer(hro, 0, 0, 16);
    ok(err);
    assert_ne!(
        mem_info::<cl_mem_flags>(hs, CL_MEM_FLAGS) & CL_MEM_HOST_READ_ONLY,
        0,
        "host access inherited"
    );
    let region = cl_buffer_region {
        origin: 0,
        size: 16,
    };
    let mut e = 0;
    let r = unsafe {
        cl!(clCreateSubBuffer)(m, 0, 0x9999, &region as *const _ as *const c_void, &mut e)
    };
    assert!(r.is_null());
    assert_eq!(e, CL_INVALID_VALUE, "bad create type");
    let r = unsafe { cl!(clCreateSubBuffer)(m, 0, CL_BUFFER_CREATE_TYPE_REGION, null(), &mut e) };
    assert!(r.is_null());
    assert_eq!(e, CL_INVALID_VALUE, "NULL region");
    for x in [s, hs, ro, hro, m] {
        release(x);
    }
}

/// Byte offsets of a rectangle's rows (the spec's formula, pitches resolved by the caller).
fn model_rows(origin: [usize; 3], region: [usize; 3], rp: usize, sp: usize) -> Vec<usize> {
    let mut v = Vec::new();
    for z in 0..region[2] {
        for y in 0..region[1] {
            v.push((origin[2] + z) * sp + (origin[1] + y) * rp + origin[0]);
        }
    }
    v
}

struct RectCase {
    origin: [usize; 3],
    /// Pitches as passed (0 means the default) and as resolved.
    pass: (usize, usize),
    rp: usize,
    sp: usize,
}

/// A random rectangle that fits in `size` bytes.
fn random_rect(r: &mut Rng, region: [usize; 3], size: usize) -> RectCase {
    loop {
        let use_default = r.next_u32().is_multiple_of(4);
        let rp = if use_default {
            region[0]
        } else {
            region[0] + (r.next_u32() % 9) as usize
        };
        let sp = if use_default {
            region[1] * rp
        } else {
            rp * (region[1] + (r.next_u32() % 3) as usize)
        };
        let origin = [
            (r.next_u32() % 8) as usize,
            (r.next_u32() % 4) as usize,
            (r.next_u32() % 3) as usize,
        ];
        let end = origin[2] * sp
            + origin[1] * rp
            + origin[0]
            + (region[2] - 1) * sp
            + (region[1] - 1) * rp
            + region[0];
        if end <= size {
            let pass = if use_default { (0, 0) } else { (rp, sp) };
            return RectCase {
                origin,
                pass,
                rp,
                sp,
            };
        }
    }
}

#[test]
fn rect_read_write_copy_against_model() {
    let env = Env::new();
    const N: usize = 8192;
    let mut rng = Rng(77);
    let init = random_bytes(11, N);
    let a = env.buffer(0, N, Some(&init));
    let b = env.buffer(0, N, Some(&init));
    let mut model_a = init.clone();
    let mut model_b = init.clone();
    for case in 0..24 {
        let region = [
            1 + (rng.next_u32() % 24) as usize,
            1 + (rng.next_u32() % 6) as usize,
            1 + (rng.next_u32() % 4) as usize,
        ];
        let buf = random_rect(&mut rng, region, N);
        let host = random_rect(&mut rng, region, 4096);
        let (rows_b, rows_h) = (
            model_rows(buf.origin, region, buf.rp, buf.sp),
            model_rows(host.origin, region, host.rp, host.sp),
        );
        // Write a host rectangle.
        let src = random_bytes(100 + case, 4096);
        ok(unsafe {
            cl!(clEnqueueWriteBufferRect)(
                env.queue,
                a,
                CL_TRUE,
                buf.origin.as_ptr(),
                host.origin.as_ptr(),
                region.as_ptr(),
                buf.pass.0,
                buf.pass.1,
                host.pass.0,
                host.pass.1,
                src.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        });
        for (&ob, &oh) in rows_b.iter().zip(&rows_h) {
            model_a[ob..ob + region[0]].copy_from_slice(&src[oh..oh + region[0]]);
        }
        assert_eq!(read_at(&env, a, 0, N), model_a, "write rect case {case}");
        // Read it back into a host rectangle; bytes outside the rectangle stay untouched.
        let mut dst = vec![0xA5u8; 4096];
        ok(unsafe {
            cl!(clEnqueueReadBufferRect)(
                env.queue,
                a,
                CL_TRUE,
                buf.origin.as_ptr(),
                host.origin.as_ptr(),
                region.as_ptr(),
                buf.pass.0,
                buf.pass.1,
                host.pass.0,
                host.pass.1,
                dst.as_mut_ptr() as *mut c_void,
                0,
                null(),
                null_mut(),
            )
        });
        let mut expect = vec![0xA5u8; 4096];
        for (&ob, &oh) in rows_b.iter().zip(&rows_h) {
            expect[oh..oh + region[0]].copy_from_slice(&model_a[ob..ob + region[0]]);
        }
        assert_eq!(dst, expect, "read rect case {case}");
        // Copy a rectangle of a into b.
        let d = random_rect(&mut rng, region, N);
        ok(unsafe {
            cl!(clEnqueueCopyBufferRect)(
                env.queue,
                a,
                b,
                buf.origin.as_ptr(),
                d.origin.as_ptr(),
                region.as_ptr(),
                buf.pass.0,
                buf.pass.1,
                d.pass.0,
                d.pass.1,
                0,
                null(),
                null_mut(),
            )
        });
        for (&os, &od) in rows_b.iter().zip(&model_rows(d.origin, region, d.rp, d.sp)) {
            model_b[od..od + region[0]].copy_from_slice(&model_a[os..os + region[0]]);
        }
        assert_eq!(read_at(&env, b, 0, N), model_b, "copy rect case {case}");
        // Copy within b with the same pitches: COPY_OVERLAP exactly when the rectangles share a byte.
        let src_o = random_rect(&mut rng, region, N);
        let mut dst_o = src_o.origin;
        dst_o[0] += (rng.next_u32() % 40) as usize;
        dst_o[1] += (rng.next_u32() % 3) as usize;
        let rs = model_rows(src_o.origin, region, src_o.rp, src_o.sp);
        let rd = model_rows(dst_o, region, src_o.rp, src_o.sp);
        if rd.last().unwrap() + region[0] > N {
            continue;
        }
        let bytes = |rows: &[usize]| {
            rows.iter()
                .flat_map(|&o| o..o + region[0])
                .collect::<HashSet<_>>()
        };
        let overlap = !bytes(&rs).is_disjoint(&bytes(&rd));
        let r = unsafe {
            cl!(clEnqueueCopyBufferRect)(
                env.queue,
                b,
                b,
                src_o.origin.as_ptr(),
                dst_o.as_ptr(),
                region.as_ptr(),
                src_o.pass.0,
                src_o.pass.1,
                src_o.pass.0,
                src_o.pass.1,
                0,
                null(),
                null_mut(),
            )
        };
        if overlap {
            assert_eq!(r, CL_MEM_COPY_OVERLAP, "case {case}");
        } else {
            ok(r);
            let snapshot = model_b.clone();
            for (&os, &od) in rs.iter().zip(&rd) {
                model_b[od..od + region[0]].copy_from_slice(&snapshot[os..os + region[0]]);
            }
            assert_eq!(read_at(&env, b, 0, N), model_b, "copy within case {case}");
        }
    }
    release(a);
    release(b);
}

#[test]
fn rect_errors() {
    let env = Env::new();
    let m = env.buffer(0, 1024, None);
    let mut host = vec![0u8; 4096];
    let hp = host.as_mut_ptr() as *mut c_void;
    let z = [0usize; 3];
    let read = |m: cl_mem,
                bo: *const usize,
                ho: *const usize,
                rg: *const usize,
                p: [usize; 4],
                ptr: *mut c_void| unsafe {
        cl!(clEnqueueReadBufferRect)(
            env.queue,
            m,
            CL_TRUE,
            bo,
            ho,
            rg,
            p[0],
            p[1],
            p[2],
            p[3],
            ptr,
            0,
            null(),
            null_mut(),
        )
    };
    let write =
        |m: cl_mem, bo: *const usize, rg: *const usize, p: [usize; 4], ptr: *const c_void| unsafe {
            cl!(clEnqueueWriteBufferRect)(
                env.queue,
                m,
                CL_TRUE,
                bo,
                z.as_ptr(),
                rg,
                p[0],
                p[1],
                p[2],
                p[3],
                ptr,
                0,
                null(),
                null_mut(),
            )
        };
    let r = [16usize, 4, 2];
    ok(read(m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4], hp));
    assert_eq!(
        read(m, null(), z.as_ptr(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_VALUE
    );
    assert_eq!(
        read(m, z.as_ptr(), null(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_VALUE
    );
    assert_eq!(
        read(m, z.as_ptr(), z.as_ptr(), null(), [0; 4], hp),
        CL_INVALID_VALUE
    );
    assert_eq!(
        read(m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4], null_mut()),
        CL_INVALID_VALUE
    );
    for zero in [[0usize, 4, 2], [16, 0, 2], [16, 4, 0]] {
        assert_eq!(
            read(m, z.as_ptr(), z.as_ptr(), zero.as_ptr(), [0; 4], hp),
            CL_INVALID_VALUE
        );
    }
    assert_eq!(
        read(m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [8, 0, 0, 0], hp),
        CL_INVALID_VALUE,
        "buffer row pitch < width"
    );
    assert_eq!(
        read(m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0, 0, 8, 0], hp),
        CL_INVALID_VALUE,
        "host row pitch < width"
    );
    assert_eq!(
        read(m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [16, 32, 0, 0], hp),
        CL_INVALID_VALUE,
        "buffer slice pitch < rows"
    );
    assert_eq!(
        read(m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [16, 72, 0, 0], hp),
        CL_INVALID_VALUE,
        "slice pitch not a multiple"
    );
    assert_eq!(
        read(m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0, 0, 16, 40], hp),
        CL_INVALID_VALUE,
        "host slice pitch"
    );
    ok(read(
        m,
        z.as_ptr(),
        z.as_ptr(),
        r.as_ptr(),
        [32, 256, 32, 256],
        hp,
    ));
    // Out of bounds: the rectangle ends at origin + 256 + 3 * 32 + 16.
    let edge = [1024 - (256 + 3 * 32 + 16), 0, 0];
    ok(read(
        m,
        edge.as_ptr(),
        z.as_ptr(),
        r.as_ptr(),
        [32, 256, 0, 0],
        hp,
    ));
    let past = [edge[0] + 1, 0, 0];
    assert_eq!(
        read(
            m,
            past.as_ptr(),
            z.as_ptr(),
            r.as_ptr(),
            [32, 256, 0, 0],
            hp
        ),
        CL_INVALID_VALUE
    );
    let far = [0usize, 0, usize::MAX / 2];
    assert_eq!(
        read(m, far.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_VALUE
    );
    assert_eq!(
        write(m, past.as_ptr(), r.as_ptr(), [32, 256, 0, 0], hp),
        CL_INVALID_VALUE
    );
    assert_eq!(
        write(m, z.as_ptr(), r.as_ptr(), [0; 4], null()),
        CL_INVALID_VALUE
    );
    // Host access flags.
    let wo = env.buffer(CL_MEM_HOST_WRITE_ONLY, 1024, None);
    let ro = env.buffer(CL_MEM_HOST_READ_ONLY, 1024, None);
    let na = env.buffer(CL_MEM_HOST_NO_ACCESS, 1024, None);
    assert_eq!(
        read(wo, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_OPERATION
    );
    assert_eq!(
        read(na, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_OPERATION
    );
    ok(read(ro, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4], hp));
    assert_eq!(
        write(ro, z.as_ptr(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_OPERATION
    );
    assert_eq!(
        write(na, z.as_ptr(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_OPERATION
    );
    ok(write(wo, z.as_ptr(), r.as_ptr(), [0; 4], hp));
    // Invalid objects and wait lists.
    assert_eq!(
        read(null_mut(), z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4], hp),
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(
        read(
            env.context as cl_mem,
            z.as_ptr(),
            z.as_ptr(),
            r.as_ptr(),
            [0; 4],
            hp
        ),
        CL_INVALID_MEM_OBJECT
    );
    let rr = unsafe {
        cl!(clEnqueueReadBufferRect)(
            env.queue,
            m,
            CL_TRUE,
            z.as_ptr(),
            z.as_ptr(),
            r.as_ptr(),
            0,
            0,
            0,
            0,
            hp,
            1,
            null(),
            null_mut(),
        )
    };
    assert_eq!(rr, CL_INVALID_EVENT_WAIT_LIST);
    // A blocking rect read after a failed event.
    let bad = failed_event(&env);
    let rr = unsafe {
        cl!(clEnqueueReadBufferRect)(
            env.queue,
            m,
            CL_TRUE,
            z.as_ptr(),
            z.as_ptr(),
            r.as_ptr(),
            0,
            0,
            0,
            0,
            hp,
            1,
            &bad,
            null_mut(),
        )
    };
    assert_eq!(rr, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    let rr = unsafe {
        cl!(clEnqueueWriteBufferRect)(
            env.queue,
            m,
            CL_TRUE,
            z.as_ptr(),
            z.as_ptr(),
            r.as_ptr(),
            0,
            0,
            0,
            0,
            hp,
            1,
            &bad,
            null_mut(),
        )
    };
    assert_eq!(rr, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    // Copy rect errors.
    let m2 = env.buffer(0, 1024, None);
    let copy = |s: cl_mem,
                d: cl_mem,
                so: *const usize,
                dof: *const usize,
                rg: *const usize,
                p: [usize; 4]| unsafe {
        cl!(clEnqueueCopyBufferRect)(
            env.queue,
            s,
            d,
            so,
            dof,
            rg,
            p[0],
            p[1],
            p[2],
            p[3],
            0,
            null(),
            null_mut(),
        )
    };
    ok(copy(m, m2, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4]));
    assert_eq!(
        copy(m, m2, null(), z.as_ptr(), r.as_ptr(), [0; 4]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(m, m2, z.as_ptr(), null(), r.as_ptr(), [0; 4]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(m, m2, z.as_ptr(), z.as_ptr(), null(), [0; 4]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(
            m,
            m2,
            z.as_ptr(),
            z.as_ptr(),
            [16usize, 0, 1].as_ptr(),
            [0; 4]
        ),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(m, m2, z.as_ptr(), z.as_ptr(), r.as_ptr(), [8, 0, 0, 0]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(m, m2, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0, 0, 8, 0]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(m, m2, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0, 48, 0, 0]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(m, m2, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0, 0, 0, 65]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(
            m,
            m2,
            past.as_ptr(),
            z.as_ptr(),
            r.as_ptr(),
            [32, 256, 0, 0]
        ),
        CL_INVALID_VALUE
    );
    assert_eq!(
        copy(
            m,
            m2,
            z.as_ptr(),
            past.as_ptr(),
            r.as_ptr(),
            [0, 0, 32, 256]
        ),
        CL_INVALID_VALUE
    );
    // Same buffer with both pitches different; overlapping rectangles.
    let o2 = [0usize, 0, 2];
    assert_eq!(
        copy(m, m, z.as_ptr(), o2.as_ptr(), r.as_ptr(), [16, 64, 32, 128]),
        CL_INVALID_VALUE
    );
    let one = [1usize, 0, 0];
    assert_eq!(
        copy(
            m,
            m,
            z.as_ptr(),
            one.as_ptr(),
            r.as_ptr(),
            [32, 128, 32, 128]
        ),
        CL_MEM_COPY_OVERLAP
    );
    ok(copy(
        m,
        m,
        z.as_ptr(),
        [16usize, 0, 0].as_ptr(),
        r.as_ptr(),
        [32, 128, 32, 128],
    ));
    // Different sub-buffers of one buffer that overlap, and ones that do not.
    let (s1, e1) = sub_buffer(m, 0, 0, 512);
    let (s2, e2) = sub_buffer(m, 0, 256, 512);
    ok(e1);
    ok(e2);
    // s1 at slice 4 (byte 256 with the default pitches) is s2's byte 0.
    assert_eq!(
        copy(
            s1,
            s2,
            [0usize, 0, 4].as_ptr(),
            z.as_ptr(),
            r.as_ptr(),
            [0; 4]
        ),
        CL_MEM_COPY_OVERLAP
    );
    ok(copy(s1, s2, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4]));
    assert_eq!(
        copy(m, null_mut(), z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4]),
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(
        copy(null_mut(), m, z.as_ptr(), z.as_ptr(), r.as_ptr(), [0; 4]),
        CL_INVALID_MEM_OBJECT
    );
    env.finish();
    ok(unsafe { cl!(clReleaseEvent)(bad) });
    for x in [s1, s2, m, m2, wo, ro, na] {
        release(x);
    }
    drop(host);
}

fn map(env: &Env, m: cl_mem, flags: cl_map_flags, offset: usize, size: usize) -> (*mut u8, cl_int) {
    let mut err = 1;
    let p = unsafe {
        cl!(clEnqueueMapBuffer)(
            env.queue,
            m,
            CL_TRUE,
            flags,
            offset,
            size,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    (p as *mut u8, err)
}

fn unmap(env: &Env, m: cl_mem, p: *mut u8) -> cl_int {
    unsafe { cl!(clEnqueueUnmapMemObject)(env.queue, m, p as *mut c_void, 0, null(), null_mut()) }
}

#[test]
fn map_and_unmap_for_every_flag_kind() {
    let env = Env::new();
    for flags in [0, CL_MEM_ALLOC_HOST_PTR] {
        let data = random_bytes(20, 512);
        let m = env.buffer(flags, 512, None);
        write(&env, m, 0, &data);
        // READ.
        let (p, err) = map(&env, m, CL_MAP_READ, 64, 128);
        ok(err);
        assert_eq!(
            unsafe { std::slice::from_raw_parts(p, 128) },
            &data[64..192]
        );
        assert_eq!(mem_info::<cl_uint>(m, CL_MEM_MAP_COUNT), 1);
        ok(unmap(&env, m, p));
        env.finish();
        assert_eq!(mem_info::<cl_uint>(m, CL_MEM_MAP_COUNT), 0);
        // WRITE (and READ): changes are seen after the unmap.
        let (p, err) = map(&env, m, CL_MAP_READ | CL_MAP_WRITE, 0, 512);
        ok(err);
        let slice = unsafe { std::slice::from_raw_parts_mut(p, 512) };
        assert_eq!(slice, &data[..]);
        slice[10..20].fill(0x42);
        ok(unmap(&env, m, p));
        let mut model = data.clone();
        model[10..20].fill(0x42);
        assert_eq!(read_at(&env, m, 0, 512), model);
        // WRITE_INVALIDATE_REGION.
        let (p, err) = map(&env, m, CL_MAP_WRITE_INVALIDATE_REGION, 256, 256);
        ok(err);
        unsafe { std::slice::from_raw_parts_mut(p, 256) }.fill(0x17);
        ok(unmap(&env, m, p));
        model[256..].fill(0x17);
        assert_eq!(read_at(&env, m, 0, 512), model);
        // Two live maps are counted; unmapping one pointer twice fails the second time.
        let (p1, e1) = map(&env, m, CL_MAP_READ, 0, 16);
        let (p2, e2) = map(&env, m, CL_MAP_READ, 32, 16);
        ok(e1);
        ok(e2);
        assert_eq!(mem_info::<cl_uint>(m, CL_MEM_MAP_COUNT), 2);
        ok(unmap(&env, m, p1));
        assert_eq!(unmap(&env, m, p1), CL_INVALID_VALUE);
        ok(unmap(&env, m, p2));
        release(m);
    }
}

#[test]
fn map_use_host_ptr_returns_host_ptr() {
    let env = Env::new();
    let mut host = random_bytes(30, 1024);
    let original = host.clone();
    let hp = host.as_mut_ptr();
    let (m, err) = create(&env, CL_MEM_USE_HOST_PTR, 1024, hp as *mut c_void);
    ok(err);
    assert_eq!(
        mem_info::<*mut c_void>(m, CL_MEM_HOST_PTR),
        hp as *mut c_void
    );
    assert_eq!(
        read_at(&env, m, 0, 1024),
        original,
        "initialised from host_ptr"
    );
    // Data written through the API lands in the buffer; a read map makes host_ptr coherent.
    let upd = random_bytes(31, 100);
    write(&env, m, 200, &upd);
    let (p, err) = map(&env, m, CL_MAP_READ, 128, 512);
    ok(err);
    assert_eq!(p, hp.wrapping_add(128), "map returns host_ptr + offset");
    let mut model = original.clone();
    model[200..300].copy_from_slice(&upd);
    assert_eq!(
        unsafe { std::slice::from_raw_parts(p, 512) },
        &model[128..640]
    );
    ok(unmap(&env, m, p));
    // A write map's changes reach the buffer after the unmap.
    let (p, err) = map(&env, m, CL_MAP_WRITE, 0, 64);
    ok(err);
    assert_eq!(p, hp);
    unsafe { std::slice::from_raw_parts_mut(p, 64) }.fill(0x99);
    ok(unmap(&env, m, p));
    model[..64].fill(0x99);
    assert_eq!(read_at(&env, m, 0, 1024), model);
    // A copy into the buffer then a map shows it at host_ptr.
    let src = env.buffer(0, 1024, Some(&[0x5Au8; 1024]));
    ok(unsafe { cl!(clEnqueueCopyBuffer)(env.queue, src, m, 0, 512, 256, 0, null(), null_mut()) });
    let (p, err) = map(&env, m, CL_MAP_READ, 512, 256);
    ok(err);
    assert_eq!(p, hp.wrapping_add(512));
    assert_eq!(
        unsafe { std::slice::from_raw_parts(p, 256) },
        &[0x5Au8; 256][..]
    );
    ok(unmap(&env, m, p));
    // A sub-buffer of a USE_HOST_PTR buffer maps into the same host memory.
    let (s, err) = sub_buffer(m, 0, 128, 128);
    ok(err);
    let (p, err) = map(&env, s, CL_MAP_READ, 16, 32);
    ok(err);
    assert_eq!(p, hp.wrapping_add(144));
    ok(unmap(&env, s, p));
    // WRITE_INVALIDATE_REGION on USE_HOST_PTR.
    let (p, err) = map(&env, m, CL_MAP_WRITE_INVALIDATE_REGION, 960, 64);
    ok(err);
    unsafe { std::slice::from_raw_parts_mut(p, 64) }.fill(0x33);
    ok(unmap(&env, m, p));
    model[960..].fill(0x33);
    model[512..768].fill(0x5A);
    assert_eq!(read_at(&env, m, 0, 1024), model);
    release(s);
    release(m);
    release(src);
    env.finish();
    drop(host);
}

#[test]
fn map_non_blocking_and_errors() {
    let env = Env::new();
    let m = env.buffer(0, 256, Some(&[3u8; 256]));
    // Non-blocking map: valid once its event completes.
    let mut ev = null_mut();
    let mut err = 1;
    let p = unsafe {
        cl!(clEnqueueMapBuffer)(
            env.queue,
            m,
            CL_FALSE,
            CL_MAP_READ,
            0,
            256,
            0,
            null(),
            &mut ev,
            &mut err,
        )
    };
    ok(err);
    assert!(!p.is_null());
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    assert_eq!(
        unsafe { std::slice::from_raw_parts(p as *const u8, 256) },
        &[3u8; 256][..]
    );
    let ty: cl_command_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_TYPE, s, v, r) });
    assert_eq!(ty, CL_COMMAND_MAP_BUFFER);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    let mut ev = null_mut();
    ok(unsafe { cl!(clEnqueueUnmapMemObject)(env.queue, m, p, 0, null(), &mut ev) });
    ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
    let ty: cl_command_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_TYPE, s, v, r) });
    assert_eq!(ty, CL_COMMAND_UNMAP_MEM_OBJECT);
    ok(unsafe { cl!(clReleaseEvent)(ev) });
    // Errors reported through errcode_ret with NULL returned.
    let bad = |m: cl_mem, flags: cl_map_flags, offset: usize, size: usize| {
        let (p, err) = map(&env, m, flags, offset, size);
        assert!(p.is_null());
        err
    };
    assert_eq!(bad(m, CL_MAP_READ, 0, 0), CL_INVALID_VALUE, "size 0");
    assert_eq!(
        bad(m, CL_MAP_READ, 200, 57),
        CL_INVALID_VALUE,
        "out of bounds"
    );
    assert_eq!(
        bad(m, CL_MAP_READ, usize::MAX, 2),
        CL_INVALID_VALUE,
        "offset overflow"
    );
    assert_eq!(bad(m, 1 << 7, 0, 16), CL_INVALID_VALUE, "undefined flag");
    assert_eq!(
        bad(m, CL_MAP_WRITE_INVALIDATE_REGION | CL_MAP_READ, 0, 16),
        CL_INVALID_VALUE
    );
    assert_eq!(
        bad(m, CL_MAP_WRITE_INVALIDATE_REGION | CL_MAP_WRITE, 0, 16),
        CL_INVALID_VALUE
    );
    assert_eq!(bad(null_mut(), CL_MAP_READ, 0, 16), CL_INVALID_MEM_OBJECT);
    assert_eq!(
        bad(env.queue as cl_mem, CL_MAP_READ, 0, 16),
        CL_INVALID_MEM_OBJECT
    );
    let wo = env.buffer(CL_MEM_HOST_WRITE_ONLY, 64, None);
    let ro = env.buffer(CL_MEM_HOST_READ_ONLY, 64, None);
    let na = env.buffer(CL_MEM_HOST_NO_ACCESS, 64, None);
    assert_eq!(bad(wo, CL_MAP_READ, 0, 16), CL_INVALID_OPERATION);
    assert_eq!(bad(na, CL_MAP_READ, 0, 16), CL_INVALID_OPERATION);
    assert_eq!(bad(ro, CL_MAP_WRITE, 0, 16), CL_INVALID_OPERATION);
    assert_eq!(
        bad(ro, CL_MAP_WRITE_INVALIDATE_REGION, 0, 16),
        CL_INVALID_OPERATION
    );
    assert_eq!(bad(na, CL_MAP_WRITE, 0, 16), CL_INVALID_OPERATION);
    let (p, err) = map(&env, wo, CL_MAP_WRITE, 0, 16);
    ok(err);
    ok(unmap(&env, wo, p));
    let (p, err) = map(&env, ro, CL_MAP_READ, 0, 16);
    ok(err);
    ok(unmap(&env, ro, p));
    // A blocking map after a failed event fails and leaves nothing mapped.
    let failed = failed_event(&env);
    let mut err = 1;
    let p = unsafe {
        cl!(clEnqueueMapBuffer)(
            env.queue,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            16,
            1,
            &failed,
            null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_MAP_COUNT), 0);
    // NULL errcode_ret is allowed.
    let p = unsafe {
        cl!(clEnqueueMapBuffer)(
            env.queue,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            0,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    };
    assert!(p.is_null());
    // Unmap errors: unknown pointer, a pointer of another buffer, wait list.
    let mut local = 0u8;
    assert_eq!(unmap(&env, m, &mut local), CL_INVALID_VALUE);
    let (p, err) = map(&env, m, CL_MAP_READ, 0, 16);
    ok(err);
    assert_eq!(unmap(&env, wo, p), CL_INVALID_VALUE);
    let r = unsafe {
        cl!(clEnqueueUnmapMemObject)(env.queue, m, p as *mut c_void, 1, null(), null_mut())
    };
    assert_eq!(r, CL_INVALID_EVENT_WAIT_LIST);
    assert_eq!(unmap(&env, null_mut(), p), CL_INVALID_MEM_OBJECT);
    ok(unmap(&env, m, p));
    env.finish();
    ok(unsafe { cl!(clReleaseEvent)(failed) });
    for x in [m, wo, ro, na] {
        release(x);
    }
}

static ORDER: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn record_destructor(_m: cl_mem, user: *mut c_void) {
    ORDER.lock().unwrap().push(user as usize);
}

#[test]
fn destructor_callbacks_run_in_reverse_order() {
    let env = Env::new();
    let m = env.buffer(0, 64, None);
    for i in 1..=3usize {
        ok(unsafe {
            cl!(clSetMemObjectDestructorCallback)(m, Some(record_destructor), i as *mut c_void)
        });
    }
    assert_eq!(
        unsafe { cl!(clSetMemObjectDestructorCallback)(m, None, null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe {
            cl!(clSetMemObjectDestructorCallback)(null_mut(), Some(record_destructor), null_mut())
        },
        CL_INVALID_MEM_OBJECT
    );
    // A sub-buffer keeps its parent alive: the parent's callbacks wait for it.
    let (s, err) = sub_buffer(m, 0, 0, 32);
    ok(err);
    ok(unsafe {
        cl!(clSetMemObjectDestructorCallback)(s, Some(record_destructor), 10 as *mut c_void)
    });
    ok(unsafe { cl!(clRetainMemObject)(m) });
    release(m);
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_REFERENCE_COUNT), 1);
    release(m);
    env.finish();
    assert!(
        ORDER.lock().unwrap().is_empty(),
        "parent freed while a sub-buffer lives"
    );
    release(s);
    env.finish();
    assert_eq!(*ORDER.lock().unwrap(), vec![10, 3, 2, 1]);
    assert_eq!(
        unsafe { cl!(clReleaseMemObject)(m) },
        CL_INVALID_MEM_OBJECT,
        "released handle"
    );
    assert_eq!(
        unsafe { cl!(clRetainMemObject)(m) },
        CL_INVALID_MEM_OBJECT,
        "released handle"
    );
}

#[test]
fn create_buffer_errors() {
    let env = Env::new();
    let mut host = [0u8; 64];
    let hp = host.as_mut_ptr() as *mut c_void;
    assert_eq!(create(&env, 0, 0, null_mut()).1, CL_INVALID_BUFFER_SIZE);
    let max: cl_ulong = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, s, v, r)
    });
    assert_eq!(
        create(&env, 0, max as usize + 1, null_mut()).1,
        CL_INVALID_BUFFER_SIZE
    );
    for flags in [
        CL_MEM_READ_WRITE | CL_MEM_READ_ONLY,
        CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
        CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY,
        CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY,
        CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS,
        CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS,
        CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR,
        1 << 40,
    ] {
        let (m, err) = create(&env, flags, 64, hp);
        assert!(m.is_null());
        assert_eq!(err, CL_INVALID_VALUE, "flags {flags:#x}");
    }
    assert_eq!(
        create(&env, CL_MEM_USE_HOST_PTR, 64, null_mut()).1,
        CL_INVALID_HOST_PTR
    );
    assert_eq!(
        create(&env, CL_MEM_COPY_HOST_PTR, 64, null_mut()).1,
        CL_INVALID_HOST_PTR
    );
    assert_eq!(create(&env, 0, 64, hp).1, CL_INVALID_HOST_PTR);
    assert_eq!(
        create(&env, CL_MEM_ALLOC_HOST_PTR, 64, hp).1,
        CL_INVALID_HOST_PTR
    );
    let (m, err) = create(&env, CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, 64, hp);
    ok(err);
    // Access flags default to READ_WRITE.
    assert_eq!(
        mem_info::<cl_mem_flags>(m, CL_MEM_FLAGS) & CL_MEM_READ_WRITE,
        CL_MEM_READ_WRITE
    );
    assert_eq!(
        mem_info::<cl_mem_object_type>(m, CL_MEM_TYPE),
        CL_MEM_OBJECT_BUFFER
    );
    assert_eq!(mem_info::<usize>(m, CL_MEM_SIZE), 64);
    assert_eq!(
        mem_info::<*mut c_void>(m, CL_MEM_HOST_PTR),
        null_mut(),
        "only USE_HOST_PTR keeps host_ptr"
    );
    assert_eq!(mem_info::<cl_uint>(m, CL_MEM_REFERENCE_COUNT), 1);
    // Info errors.
    let r = unsafe { cl!(clGetMemObjectInfo)(m, 0x7777, 0, null_mut(), null_mut()) };
    assert_eq!(r, CL_INVALID_VALUE);
    let mut small = 0u8;
    let r = unsafe {
        cl!(clGetMemObjectInfo)(
            m,
            CL_MEM_SIZE,
            1,
            &mut small as *mut u8 as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE);
    let r = unsafe {
        cl!(clGetMemObjectInfo)(env.queue as cl_mem, CL_MEM_SIZE, 0, null_mut(), null_mut())
    };
    assert_eq!(r, CL_INVALID_MEM_OBJECT);
    // A handle of another type as context.
    let mut err = 0;
    let r = unsafe { cl!(clCreateBuffer)(env.queue as cl_context, 0, 64, null_mut(), &mut err) };
    assert!(r.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    // Properties: none are supported; an empty list is kept.
    let props = [0 as cl_mem_properties];
    let b = unsafe {
        cl!(clCreateBufferWithProperties)(env.context, props.as_ptr(), 0, 64, null_mut(), &mut err)
    };
    ok(err);
    let bad = [0x1234 as cl_mem_properties, 1, 0];
    let r = unsafe {
        cl!(clCreateBufferWithProperties)(env.context, bad.as_ptr(), 0, 64, null_mut(), &mut err)
    };
    assert!(r.is_null());
    assert_eq!(err, CL_INVALID_PROPERTY);
    release(b);
    release(m);
}

#[test]
fn transfer_error_sweep() {
    let env = Env::new();
    let m = env.buffer(0, 256, None);
    let mut host = vec![0u8; 512];
    let hp = host.as_mut_ptr() as *mut c_void;
    let read = |q: cl_command_queue,
                m: cl_mem,
                off: usize,
                size: usize,
                p: *mut c_void,
                n: cl_uint,
                l: *const cl_event| unsafe {
        cl!(clEnqueueReadBuffer)(q, m, CL_TRUE, off, size, p, n, l, null_mut())
    };
    let write = |m: cl_mem, off: usize, size: usize, p: *const c_void| unsafe {
        cl!(clEnqueueWriteBuffer)(env.queue, m, CL_TRUE, off, size, p, 0, null(), null_mut())
    };
    // Invalid objects: NULL, another type, released.
    assert_eq!(
        read(env.queue, null_mut(), 0, 16, hp, 0, null()),
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(
        read(env.queue, env.context as cl_mem, 0, 16, hp, 0, null()),
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(
        read(m as cl_command_queue, m, 0, 16, hp, 0, null()),
        CL_INVALID_COMMAND_QUEUE
    );
    let gone = env.buffer(0, 16, None);
    release(gone);
    assert_eq!(
        read(env.queue, gone, 0, 16, hp, 0, null()),
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(write(gone, 0, 16, hp), CL_INVALID_MEM_OBJECT);
    // Sizes and offsets.
    assert_eq!(read(env.queue, m, 250, 7, hp, 0, null()), CL_INVALID_VALUE);
    assert_eq!(
        read(env.queue, m, usize::MAX, 2, hp, 0, null()),
        CL_INVALID_VALUE
    );
    assert_eq!(
        read(env.queue, m, 0, 16, null_mut(), 0, null()),
        CL_INVALID_VALUE
    );
    assert_eq!(write(m, 250, 7, hp), CL_INVALID_VALUE);
    assert_eq!(write(m, 0, 16, null()), CL_INVALID_VALUE);
    // Wait lists.
    assert_eq!(
        read(env.queue, m, 0, 16, hp, 1, null()),
        CL_INVALID_EVENT_WAIT_LIST
    );
    let dummy: cl_event = null_mut();
    assert_eq!(
        read(env.queue, m, 0, 16, hp, 0, &dummy),
        CL_INVALID_EVENT_WAIT_LIST
    );
    assert_eq!(
        read(env.queue, m, 0, 16, hp, 1, &dummy),
        CL_INVALID_EVENT_WAIT_LIST
    );
    let failed = failed_event(&env);
    assert_eq!(
        read(env.queue, m, 0, 16, hp, 1, &failed),
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    // Host access.
    let wo = env.buffer(CL_MEM_HOST_WRITE_ONLY, 64, None);
    let ro = env.buffer(CL_MEM_HOST_READ_ONLY, 64, None);
    let na = env.buffer(CL_MEM_HOST_NO_ACCESS, 64, None);
    assert_eq!(
        read(env.queue, wo, 0, 16, hp, 0, null()),
        CL_INVALID_OPERATION
    );
    assert_eq!(
        read(env.queue, na, 0, 16, hp, 0, null()),
        CL_INVALID_OPERATION
    );
    ok(read(env.queue, ro, 0, 16, hp, 0, null()));
    assert_eq!(write(ro, 0, 16, hp), CL_INVALID_OPERATION);
    assert_eq!(write(na, 0, 16, hp), CL_INVALID_OPERATION);
    ok(write(wo, 0, 16, hp));
    // Objects of another context.
    let mut err = 0;
    let other = unsafe { cl!(clCreateContext)(null(), 1, &env.device, None, null_mut(), &mut err) };
    ok(err);
    let om = unsafe { cl!(clCreateBuffer)(other, 0, 64, null_mut(), &mut err) };
    ok(err);
    assert_eq!(
        read(env.queue, om, 0, 16, hp, 0, null()),
        CL_INVALID_CONTEXT
    );
    let copy = |s: cl_mem, d: cl_mem| unsafe {
        cl!(clEnqueueCopyBuffer)(env.queue, s, d, 0, 0, 16, 0, null(), null_mut())
    };
    assert_eq!(copy(m, om), CL_INVALID_CONTEXT);
    assert_eq!(copy(om, m), CL_INVALID_CONTEXT);
    assert_eq!(copy(m, null_mut()), CL_INVALID_MEM_OBJECT);
    let pat = 0u32;
    let r = unsafe {
        cl!(clEnqueueFillBuffer)(
            env.queue,
            om,
            &pat as *const u32 as *const c_void,
            4,
            0,
            16,
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_CONTEXT);
    let ue = unsafe { cl!(clCreateUserEvent)(other, &mut err) };
    ok(err);
    assert_eq!(read(env.queue, m, 0, 16, hp, 1, &ue), CL_INVALID_CONTEXT);
    ok(unsafe { cl!(clSetUserEventStatus)(ue, CL_COMPLETE) });
    // Migration.
    let migrate = |n: cl_uint, list: *const cl_mem, flags: cl_mem_migration_flags| unsafe {
        cl!(clEnqueueMigrateMemObjects)(env.queue, n, list, flags, 0, null(), null_mut())
    };
    let both = [m, wo];
    ok(migrate(2, both.as_ptr(), 0));
    ok(migrate(1, both.as_ptr(), CL_MIGRATE_MEM_OBJECT_HOST));
    ok(migrate(
        2,
        both.as_ptr(),
        CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
    ));
    assert_eq!(migrate(0, both.as_ptr(), 0), CL_INVALID_VALUE);
    assert_eq!(migrate(2, null(), 0), CL_INVALID_VALUE);
    assert_eq!(migrate(2, both.as_ptr(), 1 << 5), CL_INVALID_VALUE);
    let with_null = [m, null_mut()];
    assert_eq!(migrate(2, with_null.as_ptr(), 0), CL_INVALID_MEM_OBJECT);
    let with_other = [m, om];
    assert_eq!(migrate(2, with_other.as_ptr(), 0), CL_INVALID_CONTEXT);
    let mut ev = null_mut();
    ok(unsafe {
        cl!(clEnqueueMigrateMemObjects)(env.queue, 1, both.as_ptr(), 0, 1, &failed, &mut ev)
    });
    assert_eq!(
        unsafe { cl!(clWaitForEvents)(1, &ev) },
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
    );
    let ty: cl_command_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_TYPE, s, v, r) });
    assert_eq!(ty, CL_COMMAND_MIGRATE_MEM_OBJECTS);
    let r = unsafe {
        cl!(clEnqueueMigrateMemObjects)(env.queue, 1, both.as_ptr(), 0, 1, null(), null_mut())
    };
    assert_eq!(r, CL_INVALID_EVENT_WAIT_LIST);
    env.finish();
    for e in [failed, ue, ev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    for x in [m, wo, ro, na, om] {
        release(x);
    }
    ok(unsafe { cl!(clReleaseContext)(other) });
    drop(host);
}

// ---------------------------------------------------------------------------------------------
// cl_ext_immutable_memory_objects

/// CL_MEM_IMMUTABLE_EXT: creation rules, every write refused with CL_INVALID_OPERATION and the
/// contents unchanged afterwards, reads, maps for reading and copies out still work, sub-buffers
/// inherit it.
#[test]
fn immutable_buffer_refuses_every_write() {
    let env = Env::new();
    const N: usize = 256;
    let data = random_bytes(0x1_3AB1E, N);
    let mut host = data.clone();
    let hp = host.as_mut_ptr() as *mut c_void;
    let imm = CL_MEM_IMMUTABLE_EXT;

    // Creation: data must come with it, no write access may be asked for.
    for bad in [
        imm,
        imm | CL_MEM_ALLOC_HOST_PTR,
        imm | CL_MEM_COPY_HOST_PTR | CL_MEM_READ_WRITE,
        imm | CL_MEM_COPY_HOST_PTR | CL_MEM_WRITE_ONLY,
        imm | CL_MEM_COPY_HOST_PTR | CL_MEM_HOST_WRITE_ONLY,
    ] {
        let host_arg = if bad & CL_MEM_COPY_HOST_PTR != 0 {
            hp
        } else {
            null_mut()
        };
        let (m, e) = create(&env, bad, N, host_arg);
        assert!(m.is_null(), "flags {bad:#x}");
        assert_eq!(e, CL_INVALID_VALUE, "flags {bad:#x}");
    }

    for flags in [
        imm | CL_MEM_COPY_HOST_PTR,
        imm | CL_MEM_USE_HOST_PTR,
        imm | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR,
        imm | CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR | CL_MEM_HOST_READ_ONLY,
    ] {
        let (m, e) = create(&env, flags, N, hp);
        ok(e);
        let flags_got: cl_mem_flags = mem_info(m, CL_MEM_FLAGS);
        assert_ne!(
            flags_got & imm,
            0,
            "CL_MEM_FLAGS keeps CL_MEM_IMMUTABLE_EXT"
        );
        let other = env.buffer(CL_MEM_READ_WRITE, N, Some(&vec![0x5A; N]));
        let junk = vec![0xEEu8; N];
        let q = env.queue;
        let w = unsafe {
            cl!(clEnqueueWriteBuffer)(
                q,
                m,
                CL_TRUE,
                0,
                16,
                junk.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(w, CL_INVALID_OPERATION, "write ({flags:#x})");
        let region = [8usize, 2, 1];
        let zero = [0usize; 3];
        let w = unsafe {
            cl!(clEnqueueWriteBufferRect)(
                q,
                m,
                CL_TRUE,
                zero.as_ptr(),
                zero.as_ptr(),
                region.as_ptr(),
                16,
                0,
                16,
                0,
                junk.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(w, CL_INVALID_OPERATION, "write rect");
        let c = unsafe { cl!(clEnqueueCopyBuffer)(q, other, m, 0, 0, 16, 0, null(), null_mut()) };
        assert_eq!(c, CL_INVALID_OPERATION, "copy into");
        let c = unsafe {
            cl!(clEnqueueCopyBufferRect)(
                q,
                other,
                m,
                zero.as_ptr(),
                zero.as_ptr(),
                region.as_ptr(),
                16,
                0,
                16,
                0,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(c, CL_INVALID_OPERATION, "copy rect into");
        let pat = 7u32;
        let f = unsafe {
            cl!(clEnqueueFillBuffer)(
                q,
                m,
                &pat as *const u32 as *const c_void,
                4,
                0,
                16,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(f, CL_INVALID_OPERATION, "fill");
        for mf in [
            CL_MAP_WRITE,
            CL_MAP_READ | CL_MAP_WRITE,
            CL_MAP_WRITE_INVALIDATE_REGION,
        ] {
            let (p, e) = map(&env, m, mf, 0, 16);
            assert!(p.is_null());
            assert_eq!(e, CL_INVALID_OPERATION, "map {mf:#x}");
        }
        // Reading: read, map for reading, copy out.
        assert_eq!(read_at(&env, m, 0, N), data, "contents ({flags:#x})");
        let (p, e) = map(&env, m, CL_MAP_READ, 32, 64);
        ok(e);
        let mapped = unsafe { std::slice::from_raw_parts(p, 64) }.to_vec();
        assert_eq!(mapped, &data[32..96]);
        ok(unmap(&env, m, p));
        ok(unsafe { cl!(clEnqueueCopyBuffer)(q, m, other, 0, 0, N, 0, null(), null_mut()) });
        assert_eq!(read_at(&env, other, 0, N), data, "copied out");
        // Sub-buffers inherit immutability and refuse write access.
        let (s, e) = sub_buffer(m, CL_MEM_READ_WRITE, 0, 64);
        assert!(s.is_null());
        assert_eq!(e, CL_INVALID_VALUE);
        let (s, e) = sub_buffer(m, 0, 0, 64);
        ok(e);
        let sf: cl_mem_flags = mem_info(s, CL_MEM_FLAGS);
        assert_ne!(sf & imm, 0, "sub-buffer inherits CL_MEM_IMMUTABLE_EXT");
        let w = unsafe {
            cl!(clEnqueueWriteBuffer)(
                q,
                s,
                CL_TRUE,
                0,
                4,
                junk.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(w, CL_INVALID_OPERATION, "write into a sub-buffer");
        assert_eq!(read_at(&env, s, 0, 64), &data[..64]);
        release(s);
        release(other);
        release(m);
    }
    assert_eq!(host, data, "the host copy is untouched");
}

const IMMUTABLE_KERNELS: &str = r#"
__kernel void from_constant(__constant uint *src, __global uint *dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i] * 5u + 1u;
}
__kernel void from_global_const(__global const uint *src, __global uint *dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i] ^ 0xFFu;
}
"#;

/// An immutable buffer goes to `__constant` and `const` pointer arguments (kernels read it) and
/// is refused, CL_INVALID_ARG_VALUE, for a pointer the kernel may write through.
#[test]
fn immutable_buffer_as_kernel_argument() {
    let env = Env::new();
    const N: usize = 64;
    let src: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(2654435761).wrapping_add(i))
        .collect();
    let bytes: Vec<u8> = src.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut host = bytes.clone();
    let (m, e) = create(
        &env,
        CL_MEM_IMMUTABLE_EXT | CL_MEM_COPY_HOST_PTR,
        N * 4,
        host.as_mut_ptr() as *mut c_void,
    );
    ok(e);
    let out = env.buffer(CL_MEM_READ_WRITE, N * 4, None);
    let p = env.build(IMMUTABLE_KERNELS);
    for (name, f) in [
        (
            "from_constant",
            (|v: u32| v.wrapping_mul(5).wrapping_add(1)) as fn(u32) -> u32,
        ),
        ("from_global_const", |v: u32| v ^ 0xFF),
    ] {
        let k = env.kernel(p, name);
        set_arg(k, 0, &m);
        set_arg(k, 1, &out);
        // The output argument may be written: an immutable buffer is refused there.
        let r = unsafe {
            cl!(clSetKernelArg)(
                k,
                1,
                std::mem::size_of::<cl_mem>(),
                &m as *const cl_mem as *const c_void,
            )
        };
        assert_eq!(
            r, CL_INVALID_ARG_VALUE,
            "{name}: immutable buffer as output"
        );
        let n = N;
        ok(unsafe {
            cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &n, null(), 0, null(), null_mut())
        });
        let got = read_at(&env, out, 0, N * 4);
        let want: Vec<u8> = src.iter().flat_map(|&v| f(v).to_le_bytes()).collect();
        assert_eq!(got, want, "{name}");
        unsafe { cl!(clReleaseKernel)(k) };
    }
    unsafe { cl!(clReleaseProgram)(p) };
    release(out);
    release(m);
}

#[test]
fn immutable_extension_is_reported() {
    let d = device();
    let mut n = 0;
    ok(unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_EXTENSIONS, 0, null_mut(), &mut n) });
    let mut s = vec![0u8; n];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_EXTENSIONS,
            n,
            s.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let s = String::from_utf8_lossy(&s);
    assert!(
        s.split_whitespace()
            .any(|e| e == "cl_ext_immutable_memory_objects"),
        "{s}"
    );
    let mut n = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, null_mut(), &mut n)
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
            d,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            n,
            v.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let found = v.iter().find(|nv| {
        let name: Vec<u8> = nv.name.iter().take_while(|&&c| c != 0).copied().collect();
        name == b"cl_ext_immutable_memory_objects"
    });
    assert_eq!(found.map(|nv| nv.version), Some((1 << 22) as cl_version));
}
