//! Image commands behind `VKCL_IMAGES=1` (docs/images.md): clEnqueueWriteImage and
//! clEnqueueReadImage of every image type with pitches, clEnqueueCopyImage (same and mixed
//! types), copies between images and buffers at offsets, each compared with a host model of
//! the image (`tests/common/images.rs`). Fills and error codes: `tests/images_fills.rs`.
mod common;
use common::images::*;
use common::*;
use std::ptr::{null, null_mut};

#[test]
fn every_type_round_trips_with_pitches() {
    let env = env();
    let mut rng = Rng(16);
    for (ty, ext, o, r) in cases() {
        for (f, elem) in [
            (RGBA8, 4),
            (R32F, 4),
            ((CL_RG, CL_UNSIGNED_INT16), 4),
            ((CL_R, CL_UNORM_INT8), 1),
        ] {
            let mut img = Img::new(&env, ty, ext, f, elem, &mut rng);
            img.check(&env, "created from a padded host pointer");
            // Write the box from rows and slices with padding (1D arrays: layers at the
            // slice pitch; 1D and 2D images take no slice pitch).
            let row = r[0] * elem + 2 * elem + 1;
            let (ys, zs, sp) = match ty {
                CL_MEM_OBJECT_IMAGE1D_ARRAY => (row + 5, 0, row + 5),
                CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE2D => (row, 0, 0),
                _ => (row, row * r[1] + 7, row * r[1] + 7),
            };
            let packed: Vec<u8> = (0..r.iter().product::<usize>() * elem)
                .map(|_| rng.next_u32() as u8)
                .collect();
            let mut host = vec![0x5Au8; ys * r[1] + zs * r[2] + row];
            let mut i = 0;
            for z in 0..r[2] {
                for y in 0..r[1] {
                    let at = z * zs + y * ys;
                    host[at..at + r[0] * elem].copy_from_slice(&packed[i..i + r[0] * elem]);
                    i += r[0] * elem;
                }
            }
            ok(write_image(&env, img.mem, o, r, (row, sp), &host));
            img.put(o, r, &packed);
            img.check(&env, "after a write with pitches");
            // Read the box back with the same pitches: the box's bytes where the rows are,
            // the padding untouched.
            let mut back = vec![0xC3u8; host.len()];
            ok(read_image(&env, img.mem, o, r, (row, sp), &mut back));
            for z in 0..r[2] {
                for y in 0..r[1] {
                    let at = z * zs + y * ys;
                    assert_eq!(&back[at..at + r[0] * elem], &host[at..at + r[0] * elem]);
                    if r[0] * elem < row && at + row <= back.len() {
                        assert_eq!(back[at + r[0] * elem], 0xC3, "padding written");
                    }
                }
            }
            assert_eq!(
                img.read(&env, o, r),
                img.expect(o, r),
                "a tight read of the box"
            );
            ok(unsafe { cl!(clReleaseMemObject)(img.mem) });
        }
    }
}

#[test]
fn copies_between_images() {
    let env = env();
    let mut rng = Rng(7);
    let mk = |ty, ext, rng: &mut Rng| Img::new(&env, ty, ext, RGBA8, 4, rng);
    // (source type, extent, destination type, extent, source origin, destination origin,
    // region): same types (vkCmdCopyImage) and mixed ones (through a buffer).
    let cases: [(
        u32,
        [usize; 3],
        u32,
        [usize; 3],
        [usize; 3],
        [usize; 3],
        [usize; 3],
    ); 7] = [
        (
            CL_MEM_OBJECT_IMAGE2D,
            [16, 12, 1],
            CL_MEM_OBJECT_IMAGE2D,
            [10, 9, 1],
            [3, 2, 0],
            [1, 4, 0],
            [8, 5, 1],
        ),
        (
            CL_MEM_OBJECT_IMAGE1D,
            [40, 1, 1],
            CL_MEM_OBJECT_IMAGE1D,
            [30, 1, 1],
            [7, 0, 0],
            [2, 0, 0],
            [20, 1, 1],
        ),
        (
            CL_MEM_OBJECT_IMAGE3D,
            [8, 6, 5],
            CL_MEM_OBJECT_IMAGE3D,
            [7, 7, 7],
            [1, 1, 1],
            [0, 2, 3],
            [5, 4, 3],
        ),
        (
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            [8, 6, 4],
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            [8, 6, 3],
            [0, 1, 1],
            [2, 0, 0],
            [6, 5, 3],
        ),
        (
            CL_MEM_OBJECT_IMAGE2D,
            [16, 12, 1],
            CL_MEM_OBJECT_IMAGE3D,
            [8, 8, 4],
            [5, 3, 0],
            [1, 2, 2],
            [6, 5, 1],
        ),
        (
            CL_MEM_OBJECT_IMAGE1D_ARRAY,
            [12, 6, 1],
            CL_MEM_OBJECT_IMAGE2D,
            [10, 10, 1],
            [2, 1, 0],
            [3, 4, 0],
            [7, 4, 1],
        ),
        (
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            [8, 6, 4],
            CL_MEM_OBJECT_IMAGE3D,
            [9, 9, 9],
            [1, 0, 1],
            [2, 3, 4],
            [5, 6, 3],
        ),
    ];
    for (sty, sext, dty, dext, so, dso, r) in cases {
        let s = mk(sty, sext, &mut rng);
        let mut d = mk(dty, dext, &mut rng);
        ok(copy_image(&env, &s, &d, so, dso, r));
        d.put(dso, r, &s.expect(so, r));
        d.check(&env, &format!("copy {sty:#x} -> {dty:#x}"));
        s.check(&env, "the source is unchanged");
        for m in [s.mem, d.mem] {
            ok(unsafe { cl!(clReleaseMemObject)(m) });
        }
    }
    // Within one image: boxes apart are copied, overlapping ones refused.
    let mut one = mk(CL_MEM_OBJECT_IMAGE2D, [16, 16, 1], &mut rng);
    let part = one.expect([0, 0, 0], [6, 6, 1]);
    ok(copy_image(
        &env,
        &one,
        &one,
        [0, 0, 0],
        [8, 8, 0],
        [6, 6, 1],
    ));
    one.put([8, 8, 0], [6, 6, 1], &part);
    one.check(&env, "a copy within one image");
    assert_eq!(
        copy_image(&env, &one, &one, [0, 0, 0], [3, 3, 0], [6, 6, 1]),
        CL_MEM_COPY_OVERLAP
    );
    let other = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, [16, 16, 1], R32F, 4, &mut rng);
    assert_eq!(
        copy_image(&env, &one, &other, [0; 3], [0; 3], [4, 4, 1]),
        CL_IMAGE_FORMAT_MISMATCH,
        "RGBA8 and R32F share a texel size, not a format"
    );
    assert_eq!(
        copy_image(&env, &one, &one, [12, 0, 0], [0, 8, 0], [6, 6, 1]),
        CL_INVALID_VALUE,
        "source box out of bounds"
    );
    assert_eq!(
        copy_image(&env, &one, &one, [0, 0, 0], [0, 8, 1], [6, 6, 1]),
        CL_INVALID_VALUE,
        "origin[2] of a 2D image"
    );
    for m in [one.mem, other.mem] {
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
}

#[test]
fn copies_with_buffers_at_offsets() {
    let env = env();
    let mut rng = Rng(3);
    for (ty, ext, o, r) in cases() {
        let mut img = Img::new(&env, ty, ext, RGBA8, 4, &mut rng);
        let n = r.iter().product::<usize>() * 4;
        // Aligned (a multiple of the texel) and unaligned offsets.
        for off in [8usize, 3] {
            let init: Vec<u8> = (0..n + 32).map(|_| rng.next_u32() as u8).collect();
            let buf = env.buffer(CL_MEM_READ_WRITE, init.len(), Some(&init));
            ok(unsafe {
                cl!(clEnqueueCopyImageToBuffer)(
                    env.queue,
                    img.mem,
                    buf,
                    o.as_ptr(),
                    r.as_ptr(),
                    off,
                    0,
                    null(),
                    null_mut(),
                )
            });
            let got: Vec<u8> = env.read(buf, init.len());
            let mut want = init.clone();
            want[off..off + n].copy_from_slice(&img.expect(o, r));
            assert!(got == want, "image {ty:#x} to buffer at {off}");
            // And back from another offset of fresh bytes.
            let src: Vec<u8> = (0..n + 32).map(|_| rng.next_u32() as u8).collect();
            let b2 = env.buffer(CL_MEM_READ_WRITE, src.len(), Some(&src));
            let at = off + 2;
            ok(unsafe {
                cl!(clEnqueueCopyBufferToImage)(
                    env.queue,
                    b2,
                    img.mem,
                    at,
                    o.as_ptr(),
                    r.as_ptr(),
                    0,
                    null(),
                    null_mut(),
                )
            });
            img.put(o, r, &src[at..at + n]);
            img.check(&env, &format!("buffer at {at} to image"));
            let too_far = init.len() - n + 1;
            assert_eq!(
                unsafe {
                    cl!(clEnqueueCopyImageToBuffer)(
                        env.queue,
                        img.mem,
                        buf,
                        o.as_ptr(),
                        r.as_ptr(),
                        too_far,
                        0,
                        null(),
                        null_mut(),
                    )
                },
                CL_INVALID_VALUE,
                "bytes past the buffer's end"
            );
            assert_eq!(
                unsafe {
                    cl!(clEnqueueCopyBufferToImage)(
                        env.queue,
                        img.mem,
                        buf,
                        0,
                        o.as_ptr(),
                        r.as_ptr(),
                        0,
                        null(),
                        null_mut(),
                    )
                },
                CL_INVALID_MEM_OBJECT,
                "an image as the source buffer"
            );
            for m in [buf, b2] {
                ok(unsafe { cl!(clReleaseMemObject)(m) });
            }
        }
        ok(unsafe { cl!(clReleaseMemObject)(img.mem) });
    }
}
