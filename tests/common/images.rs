//! Helpers of the image test files (`tests/images_*.rs`): images with a host model of
//! their texels, reads and writes of boxes, the image types with a box each.
use super::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

pub fn env() -> Env {
    // SAFETY: set before the loader (and with it vkcl's settings) is first used in this
    // process; every test of this binary wants the same value.
    unsafe { std::env::set_var("VKCL_IMAGES", "1") };
    Env::new()
}

/// An image and its host model: texels tightly packed in OpenCL's coordinates (x, then y:
/// rows or the layers of a 1D array, then z: slices or the layers of a 2D array).
pub struct Img {
    pub mem: cl_mem,
    pub ty: cl_mem_object_type,
    pub ext: [usize; 3],
    pub elem: usize,
    pub model: Vec<u8>,
}

impl Img {
    /// An image of `ty` with OpenCL extent `ext`, element size `elem`, created from random
    /// bytes (COPY_HOST_PTR) laid out with padded pitches.
    pub fn new(
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
    pub fn expect(&self, o: [usize; 3], r: [usize; 3]) -> Vec<u8> {
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
    pub fn put(&mut self, o: [usize; 3], r: [usize; 3], bytes: &[u8]) {
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
    pub fn read(&self, env: &Env, o: [usize; 3], r: [usize; 3]) -> Vec<u8> {
        let mut v = vec![0u8; r.iter().product::<usize>() * self.elem];
        ok(read_image(env, self.mem, o, r, (0, 0), &mut v));
        v
    }

    pub fn check(&self, env: &Env, what: &str) {
        let all = self.read(env, [0; 3], self.ext);
        assert!(
            all == self.model,
            "{what}: image {:#x} differs from the host model",
            self.ty
        );
    }
}

pub fn read_image(
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

pub fn write_image(
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

/// clEnqueueCopyImage of the box at `so` of `s` (region `r`) to `dso` of `d`, its error code.
pub fn copy_image(
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

pub const RGBA8: (u32, u32) = (CL_RGBA, CL_UNORM_INT8);
pub const R32F: (u32, u32) = (CL_R, CL_FLOAT);

/// The five types with an extent each and a box inside it (origin, region).
pub fn cases() -> [(cl_mem_object_type, [usize; 3], [usize; 3], [usize; 3]); 5] {
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
