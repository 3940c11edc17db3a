//! clEnqueueMapImage and the unmap of images behind `VKCL_IMAGES=1` (docs/images.md): read
//! maps of every image type through the returned pitches, write maps reaching the image at
//! unmap, `CL_MAP_WRITE_INVALIDATE_REGION`, maps of `CL_MEM_USE_HOST_PTR` images inside
//! `host_ptr`, `CL_MEM_MAP_COUNT` and the error codes; against the host model of each image
//! (`tests/common/images.rs`).
mod common;
use common::images::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// Maps the box; returns the pointer and the row and slice pitches.
fn map(
    env: &Env,
    m: cl_mem,
    flags: cl_map_flags,
    o: [usize; 3],
    r: [usize; 3],
) -> Result<(*mut u8, usize, usize), cl_int> {
    let (mut row, mut slice, mut err) = (0usize, 0usize, 0);
    let p = unsafe {
        cl!(clEnqueueMapImage)(
            env.queue,
            m,
            CL_TRUE,
            flags,
            o.as_ptr(),
            r.as_ptr(),
            &mut row,
            &mut slice,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    if err != CL_SUCCESS {
        assert!(p.is_null());
        return Err(err);
    }
    Ok((p as *mut u8, row, slice))
}

fn unmap(env: &Env, m: cl_mem, p: *mut u8) -> cl_int {
    let r = unsafe {
        cl!(clEnqueueUnmapMemObject)(env.queue, m, p as *mut c_void, 0, null(), null_mut())
    };
    env.finish();
    r
}

fn map_count(m: cl_mem) -> cl_uint {
    info_scalar(|s, v, r| unsafe { cl!(clGetMemObjectInfo)(m, CL_MEM_MAP_COUNT, s, v, r) })
}

/// The strides of y and z behind a map's pitches (a 1D array's layers at the slice pitch).
fn strides(ty: cl_mem_object_type, row: usize, slice: usize) -> (usize, usize) {
    if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
        (slice, 0)
    } else {
        (row, slice)
    }
}

/// Reads the box through a map's pointer and pitches, tightly packed.
fn gather(p: *mut u8, (ys, zs): (usize, usize), r: [usize; 3], elem: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for z in 0..r[2] {
        for y in 0..r[1] {
            // SAFETY: the map covers the box with these strides.
            let row = unsafe { std::slice::from_raw_parts(p.add(z * zs + y * ys), r[0] * elem) };
            v.extend_from_slice(row);
        }
    }
    v
}

/// Writes tightly packed `bytes` through a map's pointer and pitches.
fn scatter(p: *mut u8, (ys, zs): (usize, usize), r: [usize; 3], elem: usize, bytes: &[u8]) {
    let n = r[0] * elem;
    let mut i = 0;
    for z in 0..r[2] {
        for y in 0..r[1] {
            // SAFETY: as above.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes[i..].as_ptr(), p.add(z * zs + y * ys), n)
            };
            i += n;
        }
    }
}

#[test]
fn read_and_write_maps_of_every_type() {
    let env = env();
    let mut rng = Rng(21);
    for (ty, ext, o, r) in cases() {
        let mut img = Img::new(&env, ty, ext, RGBA8, 4, &mut rng);
        let (p, row, slice) = map(&env, img.mem, CL_MAP_READ, o, r).expect("read map");
        assert_eq!(row, r[0] * 4, "tight rows");
        let want_slice = match ty {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE2D => 0,
            CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
            _ => row * r[1],
        };
        assert_eq!(slice, want_slice, "slice pitch of {ty:#x}");
        assert_eq!(map_count(img.mem), 1);
        assert_eq!(
            gather(p, strides(ty, row, slice), r, 4),
            img.expect(o, r),
            "read map of {ty:#x}"
        );
        ok(unmap(&env, img.mem, p));
        assert_eq!(map_count(img.mem), 0);
        for flags in [
            CL_MAP_WRITE,
            CL_MAP_WRITE_INVALIDATE_REGION,
            CL_MAP_READ | CL_MAP_WRITE,
        ] {
            let (p, row, slice) = map(&env, img.mem, flags, o, r).expect("write map");
            if flags & CL_MAP_READ != 0 {
                assert_eq!(gather(p, strides(ty, row, slice), r, 4), img.expect(o, r));
            }
            let new: Vec<u8> = (0..r.iter().product::<usize>() * 4)
                .map(|_| rng.next_u32() as u8)
                .collect();
            scatter(p, strides(ty, row, slice), r, 4, &new);
            ok(unmap(&env, img.mem, p));
            img.put(o, r, &new);
            img.check(&env, &format!("after a write map ({flags:#x}) of {ty:#x}"));
        }
        ok(unsafe { cl!(clReleaseMemObject)(img.mem) });
    }
}

#[test]
fn maps_of_use_host_ptr_images_lie_in_host_ptr() {
    let env = env();
    let mut rng = Rng(4);
    // A 2D image of 10x6 RGBA8 texels in rows of 48 bytes.
    let (w, h, pitch) = (10usize, 6usize, 48usize);
    let mut host: Vec<u8> = (0..pitch * h).map(|_| rng.next_u32() as u8).collect();
    let fmt = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: w,
        image_height: h,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: pitch,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    let mut err = 0;
    let base = host.as_mut_ptr();
    let m = unsafe {
        cl!(clCreateImage)(
            env.context,
            CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
            &fmt,
            &desc,
            base as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    let (o, r) = ([2usize, 1, 0], [5usize, 4, 1]);
    // Before the map, the application changes host_ptr: the map brings the image's texels.
    let original = host.clone();
    host.iter_mut().for_each(|b| *b = 0);
    let (p, row, slice) = map(&env, m, CL_MAP_READ | CL_MAP_WRITE, o, r).expect("map");
    assert_eq!(
        p,
        base.wrapping_add(pitch + 2 * 4),
        "host_ptr + the box's offset"
    );
    assert_eq!((row, slice), (pitch, 0));
    let want = gather(
        original.as_ptr().wrapping_add(pitch + 8) as *mut u8,
        (pitch, 0),
        r,
        4,
    );
    assert_eq!(
        gather(p, (pitch, 0), r, 4),
        want,
        "the box copied into host_ptr"
    );
    let new: Vec<u8> = (0..5 * 4 * 4).map(|_| rng.next_u32() as u8).collect();
    scatter(p, (pitch, 0), r, 4, &new);
    ok(unmap(&env, m, p));
    let mut back = vec![0u8; r[0] * r[1] * 4];
    ok(unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            m,
            CL_TRUE,
            o.as_ptr(),
            r.as_ptr(),
            0,
            0,
            back.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    assert_eq!(back, new, "the unmap wrote the box back");
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

#[test]
fn map_errors() {
    let env = env();
    let mut rng = Rng(9);
    let img = Img::new(&env, CL_MEM_OBJECT_IMAGE3D, [4, 4, 4], RGBA8, 4, &mut rng);
    let (o, r) = ([0usize; 3], [2usize, 2, 2]);
    let mut err = 0;
    let mut row = 0usize;
    let p = unsafe {
        cl!(clEnqueueMapImage)(
            env.queue,
            img.mem,
            CL_TRUE,
            CL_MAP_READ,
            o.as_ptr(),
            r.as_ptr(),
            &mut row,
            null_mut(),
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "NULL slice pitch for a 3D image");
    let p = unsafe {
        cl!(clEnqueueMapImage)(
            env.queue,
            img.mem,
            CL_TRUE,
            CL_MAP_READ,
            o.as_ptr(),
            r.as_ptr(),
            null_mut(),
            null_mut(),
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_VALUE, "NULL row pitch");
    assert_eq!(
        map(&env, img.mem, CL_MAP_READ, [3, 0, 0], r),
        Err(CL_INVALID_VALUE),
        "box out of bounds"
    );
    assert_eq!(
        map(&env, img.mem, 1 << 7, o, r),
        Err(CL_INVALID_VALUE),
        "undefined flag"
    );
    assert_eq!(
        map(
            &env,
            img.mem,
            CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION,
            o,
            r
        ),
        Err(CL_INVALID_VALUE),
        "invalidate with read"
    );
    assert_eq!(map_count(img.mem), 0, "failed maps leave no mapping");
    let buf = env.buffer(CL_MEM_READ_WRITE, 64, None);
    assert_eq!(
        map(&env, buf, CL_MAP_READ, o, r),
        Err(CL_INVALID_MEM_OBJECT),
        "a buffer as the image"
    );
    let p = unsafe {
        cl!(clEnqueueMapBuffer)(
            env.queue,
            img.mem,
            CL_TRUE,
            CL_MAP_READ,
            0,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        )
    };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_MEM_OBJECT, "clEnqueueMapBuffer of an image");
    let (p, _, _) = map(&env, img.mem, CL_MAP_READ, o, r).unwrap();
    let mut other = [0u8; 4];
    assert_eq!(
        unmap(&env, img.mem, other.as_mut_ptr()),
        CL_INVALID_VALUE,
        "not a mapped pointer"
    );
    assert_eq!(
        unmap(&env, buf, p),
        CL_INVALID_VALUE,
        "mapped from another object"
    );
    ok(unmap(&env, img.mem, p));
    for m in [img.mem, buf] {
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
}
