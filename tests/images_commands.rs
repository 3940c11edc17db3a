//! Image commands behind `VKCL_IMAGES=1` (docs/images.md): clEnqueueWriteImage and
//! clEnqueueReadImage of every image type with pitches, clEnqueueCopyImage (same and mixed
//! types), copies between images and buffers at offsets, clEnqueueFillImage of several
//! formats, each compared with a host model of the image; and the commands' error codes.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn env() -> Env {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used in this
    // process; every test of this binary wants the same value.
    unsafe { std::env::set_var("VKCL_IMAGES", "1") };
    Env::new()
}

/// An image and its host model: texels tightly packed in OpenCL's coordinates (x, then y:
/// rows or the layers of a 1D array, then z: slices or the layers of a 2D array).
struct Img {
    mem: cl_mem,
    ty: cl_mem_object_type,
    ext: [usize; 3],
    elem: usize,
    model: Vec<u8>,
}

impl Img {
    /// An image of `ty` with OpenCL extent `ext`, element size `elem`, created from random
    /// bytes (COPY_HOST_PTR) laid out with padded pitches.
    fn new(
        env: &Env,
        ty: cl_mem_object_type,
        ext: [usize; 3],
        f: (u32, u32),
        elem: usize,
        rng: &mut Rng,
    ) -> Img {
        let model: Vec<u8> = (0..ext.iter().product::<usize>() * elem)
            .map(|_| rng.next_u32() as u8)
            .collect();
        let row = ext[0] * elem + 3 * elem;
        let (ys, zs, slice) = match ty {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (row * 2, 0, row * 2),
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE2D => (row, 0, 0),
            _ => (row, row * (ext[1] + 1), row * (ext[1] + 1)),
        };
        let host_len = ys * ext[1] + zs * ext[2] + row;
        let mut host = vec![0xEEu8; host_len];
        for z in 0..ext[2] {
            for y in 0..ext[1] {
                let m = ((z * ext[1] + y) * ext[0]) * elem;
                let h = z * zs + y * ys;
                host[h..h + ext[0] * elem].copy_from_slice(&model[m..m + ext[0] * elem]);
            }
        }
        let (w, h, d, a) = match ty {
            CL_MEM_OBJECT_IMAGE1D => (ext[0], 0, 0, 0),
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (ext[0], 0, 0, ext[1]),
            CL_MEM_OBJECT_IMAGE2D => (ext[0], ext[1], 0, 0),
            CL_MEM_OBJECT_IMAGE2D_ARRAY => (ext[0], ext[1], 0, ext[2]),
            _ => (ext[0], ext[1], ext[2], 0),
        };
        let desc = cl_image_desc {
            image_type: ty,
            image_width: w,
            image_height: h,
            image_depth: d,
            image_array_size: a,
            image_row_pitch: if ty == CL_MEM_OBJECT_IMAGE1D { 0 } else { row },
            image_slice_pitch: slice,
            num_mip_levels: 0,
            num_samples: 0,
            buffer: null_mut(),
        };
        let format = cl_image_format {
            image_channel_order: f.0,
            image_channel_data_type: f.1,
        };
        let mut err = 0;
        let mem = unsafe {
            cl!(clCreateImage)(
                env.context,
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                &format,
                &desc,
                host.as_mut_ptr() as *mut c_void,
                &mut err,
            )
        };
        ok(err);
        Img {
            mem,
            ty,
            ext,
            elem,
            model,
        }
    }

    /// The model's bytes of the box, tightly packed.
    fn expect(&self, o: [usize; 3], r: [usize; 3]) -> Vec<u8> {
        let mut v = Vec::new();
        for z in o[2]..o[2] + r[2] {
            for y in o[1]..o[1] + r[1] {
                let at = ((z * self.ext[1] + y) * self.ext[0] + o[0]) * self.elem;
                v.extend_from_slice(&self.model[at..at + r[0] * self.elem]);
            }
        }
        v
    }

    /// Puts tightly packed `bytes` into the model's box.
    fn put(&mut self, o: [usize; 3], r: [usize; 3], bytes: &[u8]) {
        let mut i = 0;
        for z in o[2]..o[2] + r[2] {
            for y in o[1]..o[1] + r[1] {
                let at = ((z * self.ext[1] + y) * self.ext[0] + o[0]) * self.elem;
                let n = r[0] * self.elem;
                self.model[at..at + n].copy_from_slice(&bytes[i..i + n]);
                i += n;
            }
        }
    }

    /// Reads the box with tight pitches (blocking).
    fn read(&self, env: &Env, o: [usize; 3], r: [usize; 3]) -> Vec<u8> {
        let mut v = vec![0u8; r.iter().product::<usize>() * self.elem];
        ok(read_image(env, self.mem, o, r, (0, 0), &mut v));
        v
    }

    fn check(&self, env: &Env, what: &str) {
        let all = self.read(env, [0; 3], self.ext);
        assert!(
            all == self.model,
            "{what}: image {:#x} differs from the host model",
            self.ty
        );
    }
}

fn read_image(
    env: &Env,
    m: cl_mem,
    o: [usize; 3],
    r: [usize; 3],
    p: (usize, usize),
    out: &mut [u8],
) -> cl_int {
    unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            m,
            CL_TRUE,
            o.as_ptr(),
            r.as_ptr(),
            p.0,
            p.1,
            out.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    }
}

fn write_image(
    env: &Env,
    m: cl_mem,
    o: [usize; 3],
    r: [usize; 3],
    p: (usize, usize),
    data: &[u8],
) -> cl_int {
    unsafe {
        cl!(clEnqueueWriteImage)(
            env.queue,
            m,
            CL_TRUE,
            o.as_ptr(),
            r.as_ptr(),
            p.0,
            p.1,
            data.as_ptr() as *const c_void,
            0,
            null(),
            null_mut(),
        )
    }
}

const RGBA8: (u32, u32) = (CL_RGBA, CL_UNORM_INT8);
const R32F: (u32, u32) = (CL_R, CL_FLOAT);

/// The five types with an extent each and a box inside it (origin, region).
fn cases() -> [(cl_mem_object_type, [usize; 3], [usize; 3], [usize; 3]); 5] {
    [
        (CL_MEM_OBJECT_IMAGE1D, [37, 1, 1], [5, 0, 0], [20, 1, 1]),
        (
            CL_MEM_OBJECT_IMAGE1D_ARRAY,
            [19, 5, 1],
            [3, 1, 0],
            [9, 3, 1],
        ),
        (CL_MEM_OBJECT_IMAGE2D, [23, 17, 1], [4, 6, 0], [11, 7, 1]),
        (
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            [13, 11, 4],
            [2, 3, 1],
            [7, 5, 2],
        ),
        (CL_MEM_OBJECT_IMAGE3D, [9, 7, 5], [1, 2, 1], [6, 4, 3]),
    ]
}

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

fn copy_image(
    env: &Env,
    s: &Img,
    d: &Img,
    so: [usize; 3],
    dso: [usize; 3],
    r: [usize; 3],
) -> cl_int {
    unsafe {
        cl!(clEnqueueCopyImage)(
            env.queue,
            s.mem,
            d.mem,
            so.as_ptr(),
            dso.as_ptr(),
            r.as_ptr(),
            0,
            null(),
            null_mut(),
        )
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

/// The host's answer for one channel value of a fill.
fn unorm(x: f32, max: f32) -> u32 {
    (x.clamp(0.0, 1.0) * max).round_ties_even() as u32
}

#[test]
fn fills_convert_the_colour() {
    let env = env();
    let mut rng = Rng(11);
    let fc = [0.2f32, 0.7, -0.4, 1.25];
    let f = fc.map(f32::to_bits);
    let ic = [-200i32, 40000, 7, -3];
    let i = ic.map(|v| v as u32);
    let uc = [300u32, 70000, 9, 5_000_000_000u64 as u32];
    let bytes = |v: &[u8]| v.to_vec();
    // (format, element size, colour words, the expected texel)
    let formats: Vec<((u32, u32), usize, [u32; 4], Vec<u8>)> = vec![
        (
            RGBA8,
            4,
            f,
            vec![unorm(0.2, 255.0) as u8, unorm(0.7, 255.0) as u8, 0, 255],
        ),
        (
            (CL_BGRA, CL_UNORM_INT8),
            4,
            f,
            vec![0, unorm(0.7, 255.0) as u8, unorm(0.2, 255.0) as u8, 255],
        ),
        (R32F, 4, f, bytes(&0.2f32.to_le_bytes())),
        (
            (CL_RGBA, CL_UNSIGNED_INT32),
            16,
            uc,
            uc.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        (
            (CL_RGBA, CL_SIGNED_INT32),
            16,
            i,
            ic.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        ((CL_RG, CL_SIGNED_INT8), 2, i, vec![(-128i8) as u8, 127]),
        (
            (CL_RG, CL_UNSIGNED_INT16),
            4,
            uc,
            [300u16, 65535]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
        (
            (CL_RG, CL_SNORM_INT16),
            4,
            f,
            [
                (0.2f32 * 32767.0).round_ties_even() as i16,
                (0.7f32 * 32767.0).round_ties_even() as i16,
            ]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        ),
        (
            (CL_RGBA, CL_SNORM_INT8),
            4,
            f,
            vec![
                (0.2f32 * 127.0).round_ties_even() as i8 as u8,
                (0.7f32 * 127.0).round_ties_even() as i8 as u8,
                (-0.4f32 * 127.0).round_ties_even() as i8 as u8,
                127,
            ],
        ),
        (
            (CL_RGBA, CL_UNORM_INT16),
            8,
            f,
            [unorm(0.2, 65535.0), unorm(0.7, 65535.0), 0, 65535]
                .iter()
                .flat_map(|&v| (v as u16).to_le_bytes())
                .collect(),
        ),
        (
            (CL_RGBA, CL_HALF_FLOAT),
            8,
            f,
            fc.iter()
                .flat_map(|&v| half::f16::from_f32(v).to_bits().to_le_bytes())
                .collect(),
        ),
    ];
    for (fmt, elem, color, texel) in formats {
        assert_eq!(texel.len(), elem, "{fmt:?}: the expected texel's size");
        for (ty, ext, o, r) in cases() {
            let mut img = Img::new(&env, ty, ext, fmt, elem, &mut rng);
            ok(unsafe {
                cl!(clEnqueueFillImage)(
                    env.queue,
                    img.mem,
                    color.as_ptr() as *const c_void,
                    o.as_ptr(),
                    r.as_ptr(),
                    0,
                    null(),
                    null_mut(),
                )
            });
            let n = r.iter().product::<usize>();
            img.put(o, r, &texel.repeat(n));
            img.check(&env, &format!("fill of {fmt:x?} in {ty:#x}"));
            ok(unsafe { cl!(clReleaseMemObject)(img.mem) });
        }
    }
}

#[test]
fn command_errors() {
    let env = env();
    let mut rng = Rng(5);
    let img = Img::new(&env, CL_MEM_OBJECT_IMAGE2D, [8, 8, 1], RGBA8, 4, &mut rng);
    let arr = Img::new(
        &env,
        CL_MEM_OBJECT_IMAGE1D_ARRAY,
        [8, 4, 1],
        RGBA8,
        4,
        &mut rng,
    );
    let mut out = vec![0u8; 4096];
    let r = |o: [usize; 3], g: [usize; 3], p| read_image(&env, img.mem, o, g, p, &mut out.clone());
    assert_eq!(r([0; 3], [8, 8, 1], (0, 0)), CL_SUCCESS);
    assert_eq!(
        r([1, 0, 0], [8, 8, 1], (0, 0)),
        CL_INVALID_VALUE,
        "x beyond the width"
    );
    assert_eq!(
        r([0, 0, 0], [8, 9, 1], (0, 0)),
        CL_INVALID_VALUE,
        "y beyond the height"
    );
    assert_eq!(
        r([0, 0, 0], [8, 8, 0], (0, 0)),
        CL_INVALID_VALUE,
        "region[2] 0"
    );
    assert_eq!(
        r([0, 0, 0], [8, 8, 2], (0, 0)),
        CL_INVALID_VALUE,
        "region[2] 2 of a 2D image"
    );
    assert_eq!(
        r([0; 3], [8, 8, 1], (31, 0)),
        CL_INVALID_VALUE,
        "row pitch below 8 x 4"
    );
    assert_eq!(
        r([0; 3], [8, 8, 1], (32, 256)),
        CL_INVALID_VALUE,
        "slice pitch of a 2D image"
    );
    let ra = |p| read_image(&env, arr.mem, [0; 3], [8, 4, 1], p, &mut out.clone());
    assert_eq!(
        ra((32, 16)),
        CL_INVALID_VALUE,
        "1D array slice pitch below the row pitch"
    );
    assert_eq!(ra((32, 48)), CL_SUCCESS, "1D array slice pitch above it");
    let o = [0usize; 3];
    let g = [1usize, 1, 1];
    let null_ptr = unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            img.mem,
            CL_TRUE,
            o.as_ptr(),
            g.as_ptr(),
            0,
            0,
            null_mut(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(null_ptr, CL_INVALID_VALUE, "NULL ptr");
    let null_origin = unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            img.mem,
            CL_TRUE,
            null(),
            g.as_ptr(),
            0,
            0,
            out.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(null_origin, CL_INVALID_VALUE, "NULL origin");
    let buf = env.buffer(CL_MEM_READ_WRITE, 4096, None);
    assert_eq!(
        read_image(&env, buf, o, g, (0, 0), &mut out),
        CL_INVALID_MEM_OBJECT,
        "a buffer as the image"
    );
    let fill = unsafe {
        cl!(clEnqueueFillImage)(
            env.queue,
            img.mem,
            null(),
            o.as_ptr(),
            g.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(fill, CL_INVALID_VALUE, "NULL fill colour");
    // Host access flags.
    let fmt = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: 4,
        image_height: 4,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    for (flags, read_ok, write_ok) in [
        (CL_MEM_HOST_NO_ACCESS, false, false),
        (CL_MEM_HOST_READ_ONLY, true, false),
        (CL_MEM_HOST_WRITE_ONLY, false, true),
    ] {
        let mut err = 0;
        let m =
            unsafe { cl!(clCreateImage)(env.context, flags, &fmt, &desc, null_mut(), &mut err) };
        ok(err);
        let code = |b| if b { CL_SUCCESS } else { CL_INVALID_OPERATION };
        assert_eq!(
            read_image(&env, m, o, g, (0, 0), &mut out),
            code(read_ok),
            "read, flags {flags:#x}"
        );
        assert_eq!(
            write_image(&env, m, o, g, (0, 0), &out),
            code(write_ok),
            "write, flags {flags:#x}"
        );
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
    // Events: a non-blocking write then read, ordered by the queue, with command types.
    let data: Vec<u8> = (0..256).map(|v| v as u8).collect();
    let mut ev = null_mut();
    let full = [8usize, 8, 1];
    ok(unsafe {
        cl!(clEnqueueWriteImage)(
            env.queue,
            img.mem,
            CL_FALSE,
            o.as_ptr(),
            full.as_ptr(),
            0,
            0,
            data.as_ptr() as *const c_void,
            0,
            null(),
            &mut ev,
        )
    });
    let ty: cl_command_type =
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_TYPE, s, v, r) });
    assert_eq!(ty, CL_COMMAND_WRITE_IMAGE);
    let mut back = vec![0u8; 256];
    let mut ev2 = null_mut();
    ok(unsafe {
        cl!(clEnqueueReadImage)(
            env.queue,
            img.mem,
            CL_FALSE,
            o.as_ptr(),
            full.as_ptr(),
            0,
            0,
            back.as_mut_ptr() as *mut c_void,
            1,
            &ev,
            &mut ev2,
        )
    });
    ok(unsafe { cl!(clWaitForEvents)(1, &ev2) });
    assert_eq!(back, data);
    for e in [ev, ev2] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    for m in [img.mem, arr.mem, buf] {
        ok(unsafe { cl!(clReleaseMemObject)(m) });
    }
}
