//! The shape of an image object (OpenCL 3.0 section 5.3.1): `clCreateImage`'s descriptor
//! checked against the devices' limits, the host view's pitches, and how OpenCL's origins
//! and regions become Vulkan boxes and layers (docs/images.md).

use super::device::Device;
use super::error::{ClError, ClResult};
use super::image::{element_size, images_enabled, limits, supported_formats};
use crate::backend::vulkan::image_object::{Dim, ImageRegion, ImageShape};
use opencl_sys::*;
use std::sync::Arc;

/// A checked image: what `clGetImageInfo` reports.
#[derive(Debug, Clone, Copy)]
pub struct ImageDesc {
    pub format: cl_image_format,
    pub image_type: cl_mem_object_type,
    /// Texels; `height` 0 for 1D types, `depth` 0 unless 3D, `array_size` 0 unless an array
    /// (as `CL_IMAGE_HEIGHT`, `CL_IMAGE_DEPTH`, `CL_IMAGE_ARRAY_SIZE` report them).
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub array_size: usize,
    /// The host view's pitches, bytes: those given with a host pointer, else the tight ones;
    /// `slice_pitch` 0 for 1D and 2D images, the layer size for arrays.
    pub row_pitch: usize,
    pub slice_pitch: usize,
    /// `CL_IMAGE_ELEMENT_SIZE`, bytes.
    pub element_size: usize,
}

/// The image types of clCreateImage this build makes.
const MADE: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];

impl ImageDesc {
    /// Checks clCreateImage's format and descriptor for `devices` (the context's), with
    /// `flags` already checked and `has_host_ptr` whether a host pointer comes with them.
    /// Errors, in this order: `CL_INVALID_OPERATION` (images off, [`images_enabled`]);
    /// `CL_INVALID_IMAGE_FORMAT_DESCRIPTOR` (NULL or undefined format);
    /// `CL_INVALID_IMAGE_DESCRIPTOR` (NULL descriptor, unknown type, a dimension 0, mip
    /// levels or samples, a `buffer` the type does not take, pitches without a host pointer
    /// (a row pitch is allowed with the buffer of a 1D buffer image, which keeps the tight
    /// one) or against the rules: row pitch below `width` x element size or not a multiple of it,
    /// slice pitch below the row pitch x height (the row pitch for 1D arrays) or not a
    /// multiple of the row pitch); `CL_INVALID_IMAGE_SIZE` (a dimension beyond every
    /// device's limit: `CL_DEVICE_IMAGE_MAX_BUFFER_SIZE` for 1D buffer images; a 1D buffer
    /// image of more bytes than its buffer's `buffer_size`, as OpenCL 3.0 lists for a buffer
    /// too small to be the image's data store); `CL_IMAGE_FORMAT_NOT_SUPPORTED` (no device
    /// supports the format for `flags` and the type).
    pub fn check(
        devices: &[Arc<Device>],
        flags: cl_mem_flags,
        format: Option<&cl_image_format>,
        desc: Option<&cl_image_desc>,
        has_host_ptr: bool,
        buffer_size: Option<usize>,
    ) -> ClResult<ImageDesc> {
        if !images_enabled() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        let format = *format.ok_or(ClError(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR))?;
        let element = element_size(&format).ok_or(ClError(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR))?;
        let bad = ClError(CL_INVALID_IMAGE_DESCRIPTOR);
        let d = desc.ok_or(bad)?;
        let ty = d.image_type;
        if !super::image::IMAGE_TYPES.contains(&ty) || d.num_mip_levels != 0 || d.num_samples != 0 {
            return Err(bad);
        }
        let mem_object = d.buffer;
        // buffer must be NULL for every type but 1D buffer (2D images from buffers,
        // cl_khr_image2d_from_buffer, are not claimed: a linear Vulkan image cannot alias a
        // buffer with every row pitch OpenCL allows, docs/images.md), and given for 1D buffer.
        if mem_object.is_null() == (ty == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
            return Err(bad);
        }
        let (w, h, dep, arr) = match ty {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => (d.image_width, 0, 0, 0),
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (d.image_width, 0, 0, d.image_array_size),
            CL_MEM_OBJECT_IMAGE2D => (d.image_width, d.image_height, 0, 0),
            CL_MEM_OBJECT_IMAGE2D_ARRAY => (d.image_width, d.image_height, 0, d.image_array_size),
            _ => (d.image_width, d.image_height, d.image_depth, 0),
        };
        let used = [w, h, dep, arr];
        let needed = match ty {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => [true, false, false, false],
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [true, false, false, true],
            CL_MEM_OBJECT_IMAGE2D => [true, true, false, false],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [true, true, false, true],
            _ => [true, true, true, false],
        };
        if used.iter().zip(needed).any(|(&v, n)| n && v == 0) {
            return Err(bad);
        }
        // Pitches: 0 without a host pointer; else at least the tight ones, multiples of the
        // element size (rows) and of the row pitch (slices). A 1D buffer image may be given
        // a row pitch with its buffer (the pitch describes the buffer's bytes, as for images
        // from buffers; the CTS gives the tight one); its one row changes nothing, so its
        // row pitch stays the tight one below.
        let buffer_image = ty == CL_MEM_OBJECT_IMAGE1D_BUFFER;
        if !has_host_ptr && (d.image_slice_pitch != 0 || (d.image_row_pitch != 0 && !buffer_image))
        {
            return Err(bad);
        }
        let tight_row = w
            .checked_mul(element)
            .ok_or(ClError(CL_INVALID_IMAGE_SIZE))?;
        let row = if d.image_row_pitch == 0 {
            tight_row
        } else {
            d.image_row_pitch
        };
        if row < tight_row || !row.is_multiple_of(element) {
            return Err(bad);
        }
        let row = if buffer_image { tight_row } else { row };
        let layered = matches!(
            ty,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D
        );
        let slice = if !layered {
            0
        } else {
            let rows = if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
                1
            } else {
                h
            };
            let tight = row
                .checked_mul(rows)
                .ok_or(ClError(CL_INVALID_IMAGE_SIZE))?;
            let s = if d.image_slice_pitch == 0 {
                tight
            } else {
                d.image_slice_pitch
            };
            if s < tight || !s.is_multiple_of(row) {
                return Err(bad);
            }
            s
        };
        let desc = ImageDesc {
            format,
            image_type: ty,
            width: w,
            height: h,
            depth: dep,
            array_size: arr,
            row_pitch: row,
            slice_pitch: slice,
            element_size: element,
        };
        if !devices.iter().any(|dv| desc.fits(dv)) {
            return Err(ClError(CL_INVALID_IMAGE_SIZE));
        }
        if ty == CL_MEM_OBJECT_IMAGE1D_BUFFER && buffer_size.is_none_or(|b| tight_row > b) {
            return Err(ClError(CL_INVALID_IMAGE_SIZE));
        }
        let same = |f: &cl_image_format| {
            f.image_channel_order == format.image_channel_order
                && f.image_channel_data_type == format.image_channel_data_type
        };
        if !MADE.contains(&ty)
            || !devices
                .iter()
                .any(|dv| supported_formats(dv, flags, ty).iter().any(same))
        {
            return Err(ClError(CL_IMAGE_FORMAT_NOT_SUPPORTED));
        }
        Ok(desc)
    }

    /// Whether the image's dimensions lie within `device`'s limits (OpenCL's device queries,
    /// which are the Vulkan driver's).
    fn fits(&self, device: &Device) -> bool {
        let l = limits(device);
        let le = |v: usize, m: u32| v <= m as usize;
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D => le(self.width, l.max_1d),
            CL_MEM_OBJECT_IMAGE1D_BUFFER => le(self.width, l.max_texel_buffer),
            CL_MEM_OBJECT_IMAGE1D_ARRAY => {
                le(self.width, l.max_1d) && le(self.array_size, l.max_layers)
            }
            CL_MEM_OBJECT_IMAGE2D => le(self.width, l.max_2d) && le(self.height, l.max_2d),
            CL_MEM_OBJECT_IMAGE2D_ARRAY => {
                le(self.width, l.max_2d)
                    && le(self.height, l.max_2d)
                    && le(self.array_size, l.max_layers)
            }
            _ => le(self.width, l.max_3d) && le(self.height, l.max_3d) && le(self.depth, l.max_3d),
        }
    }

    /// The image in OpenCL's coordinates: x, then y (rows, or the layer of a 1D array), then
    /// z (slices of a 3D image, or the layer of a 2D array); 1 where the type has none.
    pub fn extent(&self) -> [usize; 3] {
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [self.width, self.array_size, 1],
            CL_MEM_OBJECT_IMAGE2D => [self.width, self.height, 1],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [self.width, self.height, self.array_size],
            CL_MEM_OBJECT_IMAGE3D => [self.width, self.height, self.depth],
            _ => [self.width, 1, 1],
        }
    }

    /// Bytes of the host view (`CL_MEM_SIZE`, and what `host_ptr` must hold): the pitches
    /// times the extent.
    pub fn host_size(&self) -> usize {
        let [_, y, z] = self.extent();
        let (ys, zs) = self.host_strides(self.row_pitch, self.slice_pitch);
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => ys * y,
            _ if zs == 0 => ys * y,
            _ => zs * z,
        }
    }

    /// Bytes of the whole image, tightly packed (rows, slices, layers).
    pub fn packed_size(&self) -> usize {
        self.extent().iter().product::<usize>() * self.element_size
    }

    /// The host strides of OpenCL's y and z coordinates for host pitches `row` and `slice`:
    /// a 1D array's layers are its "rows" at the slice pitch.
    pub fn host_strides(&self, row: usize, slice: usize) -> (usize, usize) {
        if self.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            (slice, 0)
        } else {
            (row, slice)
        }
    }

    /// Whether the image is an array (its y or z coordinate is a layer).
    pub fn is_array(&self) -> bool {
        matches!(
            self.image_type,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
        )
    }

    /// The format as the back end takes it (channel order, channel data type).
    pub fn format_pair(&self) -> (u32, u32) {
        (
            self.format.image_channel_order,
            self.format.image_channel_data_type,
        )
    }

    /// The Vulkan shape: 1D and 1D arrays are `1D` images (layers), 2D and 2D arrays `2D`.
    pub fn shape(&self) -> ImageShape {
        let [x, y, z] = self.extent().map(|v| v as u32);
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => ImageShape {
                dim: Dim::D1,
                extent: [x, 1, 1],
                layers: y,
            },
            CL_MEM_OBJECT_IMAGE2D => ImageShape {
                dim: Dim::D2,
                extent: [x, y, 1],
                layers: 1,
            },
            CL_MEM_OBJECT_IMAGE2D_ARRAY => ImageShape {
                dim: Dim::D2,
                extent: [x, y, 1],
                layers: z,
            },
            CL_MEM_OBJECT_IMAGE3D => ImageShape {
                dim: Dim::D3,
                extent: [x, y, z],
                layers: 1,
            },
            _ => ImageShape {
                dim: Dim::D1,
                extent: [x, 1, 1],
                layers: 1,
            },
        }
    }

    /// The Vulkan box and layers of OpenCL's `origin` and `region` (checked in bounds), its
    /// texels packed in a buffer from `buffer_offset`.
    pub fn region(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
        buffer_offset: u64,
    ) -> ImageRegion {
        let o = origin.map(|v| v as u32);
        let r = region.map(|v| v as u32);
        let (offset, extent, base_layer, layers) = match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => ([o[0], 0, 0], [r[0], 1, 1], o[1], r[1]),
            CL_MEM_OBJECT_IMAGE2D_ARRAY => ([o[0], o[1], 0], [r[0], r[1], 1], o[2], r[2]),
            _ => (o, r, 0, 1),
        };
        ImageRegion {
            buffer_offset,
            offset,
            extent,
            base_layer,
            layers,
        }
    }

    /// Checks `origin` and `region` against the image. Errors: `CL_INVALID_VALUE` for a
    /// region element 0 or a box beyond the image (which covers the rules for the unused
    /// coordinates: origin 0 and region 1 there).
    pub fn check_box(&self, origin: [usize; 3], region: [usize; 3]) -> ClResult<()> {
        let ext = self.extent();
        for d in 0..3 {
            if region[d] == 0 || origin[d].checked_add(region[d]).is_none_or(|e| e > ext[d]) {
                return Err(ClError(CL_INVALID_VALUE));
            }
        }
        Ok(())
    }
}

/// Copies a box of `size[1]` rows of `size[0]` bytes in each of `size[2]` slices between two
/// host layouts, each given by its strides of a row and a slice, bytes.
///
/// # Safety
/// Both layouts valid for the box, not overlapping.
pub unsafe fn copy_box(
    src: *const u8,
    (sy, sz): (usize, usize),
    dst: *mut u8,
    (dy, dz): (usize, usize),
    size: [usize; 3],
) {
    for z in 0..size[2] {
        for y in 0..size[1] {
            // SAFETY: the caller's contract.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.add(z * sz + y * sy),
                    dst.add(z * dz + y * dy),
                    size[0],
                )
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(ty: cl_mem_object_type, w: usize, h: usize, d: usize, a: usize) -> ImageDesc {
        ImageDesc {
            format: cl_image_format {
                image_channel_order: CL_RGBA,
                image_channel_data_type: CL_UNORM_INT8,
            },
            image_type: ty,
            width: w,
            height: h,
            depth: d,
            array_size: a,
            row_pitch: w * 4,
            slice_pitch: 0,
            element_size: 4,
        }
    }

    #[test]
    fn arrays_map_layers_to_their_layer_coordinate() {
        let a1 = desc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 8, 0, 0, 5);
        assert_eq!(a1.extent(), [8, 5, 1]);
        let r = a1.region([2, 1, 0], [3, 4, 1], 16);
        assert_eq!(
            (r.offset, r.extent, r.base_layer, r.layers),
            ([2, 0, 0], [3, 1, 1], 1, 4)
        );
        let a2 = desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 8, 6, 0, 3);
        let r = a2.region([1, 2, 1], [2, 2, 2], 0);
        assert_eq!(
            (r.offset, r.extent, r.base_layer, r.layers),
            ([1, 2, 0], [2, 2, 1], 1, 2)
        );
        let i3 = desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 4, 0);
        assert_eq!(i3.shape().extent, [4, 4, 4]);
        assert!(i3.check_box([0, 0, 3], [4, 4, 1]).is_ok());
        assert!(i3.check_box([0, 0, 3], [4, 4, 2]).is_err());
        let i2 = desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
        assert!(
            i2.check_box([0, 0, 1], [1, 1, 1]).is_err(),
            "origin[2] of a 2D image"
        );
        assert!(
            i2.check_box([0, 0, 0], [1, 1, 0]).is_err(),
            "region element 0"
        );
    }
}
