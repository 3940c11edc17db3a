//! Images and samplers of the benchmark's OpenCL layer (OpenCL 1.2 entry points: every
//! platform's loader has them): 2D `CL_RGBA`/`CL_UNORM_INT8` images, their writes, reads and
//! copies, and samplers. A platform without images fails at `clCreateImage` (vkcl needs
//! `VKCL_IMAGES=1`, docs/images.md).

use super::{check, ClResult, Handle, Session, Uint};
use std::ffi::c_void;
use std::ptr;

/// `cl_image_format`.
#[repr(C)]
pub struct ImageFormat {
    order: Uint,
    data_type: Uint,
}

/// `cl_image_desc` (OpenCL 1.2 layout; the last member is the buffer/mem_object union).
#[repr(C)]
pub struct ImageDesc {
    image_type: Uint,
    width: usize,
    height: usize,
    depth: usize,
    array_size: usize,
    row_pitch: usize,
    slice_pitch: usize,
    num_mip_levels: Uint,
    num_samples: Uint,
    mem_object: Handle,
}

const CL_RGBA: Uint = 0x10B5;
const CL_UNORM_INT8: Uint = 0x10D2;
const CL_MEM_OBJECT_IMAGE2D: Uint = 0x10F1;
const CL_MEM_READ_WRITE: u64 = 1;
/// `CL_ADDRESS_CLAMP_TO_EDGE`.
pub const CLAMP_TO_EDGE: Uint = 0x1131;
/// `CL_FILTER_LINEAR`.
pub const FILTER_LINEAR: Uint = 0x1141;

/// A 2D image of RGBA8 (unorm) texels.
pub struct Image<'a> {
    api: &'a super::Api,
    pub(super) raw: Handle,
    /// Width and height in texels.
    pub size: [usize; 2],
}

impl Drop for Image<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this reference.
        unsafe { (self.api.clReleaseMemObject)(self.raw) };
    }
}

/// A sampler.
pub struct Sampler<'a> {
    api: &'a super::Api,
    pub(super) raw: Handle,
}

impl Drop for Sampler<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this reference.
        unsafe { (self.api.clReleaseSampler)(self.raw) };
    }
}

impl<'a> Session<'a> {
    /// A read-write `width` x `height` RGBA8 (`CL_UNORM_INT8`) 2D image.
    pub fn image_rgba8(&self, width: usize, height: usize) -> ClResult<Image<'a>> {
        let format = ImageFormat {
            order: CL_RGBA,
            data_type: CL_UNORM_INT8,
        };
        let desc = ImageDesc {
            image_type: CL_MEM_OBJECT_IMAGE2D,
            width,
            height,
            depth: 1,
            array_size: 1,
            row_pitch: 0,
            slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            mem_object: ptr::null_mut(),
        };
        let mut err = 0;
        // SAFETY: format and desc live through the call; no host pointer.
        let raw = unsafe {
            (self.api.clCreateImage)(
                self.ctx.raw,
                CL_MEM_READ_WRITE,
                &format,
                &desc,
                ptr::null_mut(),
                &mut err,
            )
        };
        check("clCreateImage", err)?;
        Ok(Image {
            api: self.api,
            raw,
            size: [width, height],
        })
    }

    /// Blocking write of the whole image from `texels` (4 bytes each, rows packed).
    pub fn write_image(&self, m: &Image<'a>, texels: &[u32]) -> ClResult<()> {
        assert_eq!(texels.len(), m.size[0] * m.size[1], "one word per texel");
        let (origin, region) = ([0usize; 3], [m.size[0], m.size[1], 1]);
        // SAFETY: texels holds the whole region with tight pitches.
        check("clEnqueueWriteImage", unsafe {
            (self.api.clEnqueueWriteImage)(
                self.queue.raw,
                m.raw,
                1,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                texels.as_ptr() as *const c_void,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// Blocking read of the whole image into `texels`.
    pub fn read_image(&self, m: &Image<'a>, texels: &mut [u32]) -> ClResult<()> {
        assert_eq!(texels.len(), m.size[0] * m.size[1], "one word per texel");
        let (origin, region) = ([0usize; 3], [m.size[0], m.size[1], 1]);
        // SAFETY: texels has room for the whole region with tight pitches.
        check("clEnqueueReadImage", unsafe {
            (self.api.clEnqueueReadImage)(
                self.queue.raw,
                m.raw,
                1,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                texels.as_mut_ptr() as *mut c_void,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// Enqueues a copy of the whole of `src` into `dst` (same size), without waiting.
    pub fn copy_image(&self, src: &Image<'a>, dst: &Image<'a>) -> ClResult<()> {
        let (origin, region) = ([0usize; 3], [src.size[0], src.size[1], 1]);
        // SAFETY: both images hold the region.
        check("clEnqueueCopyImage", unsafe {
            (self.api.clEnqueueCopyImage)(
                self.queue.raw,
                src.raw,
                dst.raw,
                origin.as_ptr(),
                origin.as_ptr(),
                region.as_ptr(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// A sampler with normalized coordinates, `addressing` and `filter`.
    pub fn sampler(&self, addressing: Uint, filter: Uint) -> ClResult<Sampler<'a>> {
        let mut err = 0;
        // SAFETY: valid context.
        let raw =
            unsafe { (self.api.clCreateSampler)(self.ctx.raw, 1, addressing, filter, &mut err) };
        check("clCreateSampler", err)?;
        Ok(Sampler { api: self.api, raw })
    }
}
