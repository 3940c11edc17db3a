//! The image commands (OpenCL 3.0 sections 5.3.3 to 5.3.5), built and checked here as
//! [`Command`]s: host reads and writes of a box, copies between images and between images
//! and buffers, fills. Copies and fills become their device commands now
//! (`vkCmdCopyImage`, `vkCmdCopyBufferToImage`, `vkCmdCopyImageToBuffer`, through staging
//! buffers where Vulkan cannot copy directly); host transfers are staged by the queue
//! (`core/queue.rs`). Design: docs/images.md.

use super::command::{Command, Keep, MAP_FLAGS, MAP_WRITES};
use super::error::{refused, ClError, ClResult};
use super::image::pack_color;
use super::image_desc::ImageDesc;
use super::memory::{ImageMap, Mapping, Mem};
use super::transfer::check_writable;
use super::UserPtr;
use crate::backend::vulkan::image_object::ImageCopy;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::record::DeviceCommand;
use opencl_sys::*;
use std::any::Any;
use std::sync::Arc;

/// What clEnqueueMapImage hands out: the pointer and the row and slice pitches, bytes.
pub struct MappedImage {
    pub ptr: UserPtr,
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

/// A staging buffer of `size` bytes on `mem`'s device. Errors: `CL_OUT_OF_RESOURCES`.
fn staging(mem: &Mem, size: usize) -> ClResult<Arc<Buffer>> {
    let vk = mem.context.devices[0].vk()?;
    let b = Buffer::new(vk, size.max(1) as u64).map_err(|e| refused("image staging", e))?;
    Ok(Arc::new(b))
}

/// Keeps `mems` and `extra` alive with the command.
fn keep_of(mems: &[&Arc<Mem>], extra: Vec<Arc<Buffer>>) -> Keep {
    let mut k: Keep = mems
        .iter()
        .map(|m| (*m).clone() as Arc<dyn Any + Send + Sync>)
        .collect();
    k.extend(extra.into_iter().map(|b| b as Arc<dyn Any + Send + Sync>));
    k
}

/// Whether a copy between the box `origin`, `region` of 1D buffer image `image` and bytes
/// `[at, at + bytes)` of `buffer`'s storage (or, with `other` an image, that image's box)
/// would read and write overlapping bytes of one `VkBuffer`: such copies go through staging
/// (Vulkan forbids overlapping regions in one `vkCmdCopyBuffer`).
fn shares_bytes(
    image: &Mem,
    origin: [usize; 3],
    region: [usize; 3],
    other: (&Arc<Buffer>, u64, u64),
) -> bool {
    let Some(t) = image.image.as_ref().and_then(|i| i.vk.texels.as_ref()) else {
        return false;
    };
    let elem = image.image.as_ref().map_or(0, |i| i.desc.element_size) as u64;
    let start = t.offset + origin[0] as u64 * elem;
    let end = start + region[0] as u64 * elem;
    let (b, at, n) = other;
    Arc::ptr_eq(&t.buffer, b) && start < at + n && at < end
}

/// The bytes of a box of `region` texels of `desc`, tightly packed.
fn box_bytes(desc: &ImageDesc, region: [usize; 3]) -> usize {
    region.iter().product::<usize>() * desc.element_size
}

impl Command {
    /// clEnqueueReadImage (`write` false) or clEnqueueWriteImage of the box `origin`,
    /// `region` of `image` and host memory at `ptr` with pitches `row_pitch` and
    /// `slice_pitch` (0: tight). Errors: `CL_INVALID_MEM_OBJECT` (not an image);
    /// `CL_INVALID_VALUE` (NULL `ptr`, the box beyond the image or a region element 0, a row
    /// pitch below region[0] x element size, a slice pitch not 0 for 1D and 2D images or
    /// below the row pitch (1D arrays) or row pitch x region[1] (2D arrays, 3D));
    /// `CL_INVALID_OPERATION` (host access flags forbid it; a write to an immutable image).
    pub fn host_image(
        image: Arc<Mem>,
        write: bool,
        origin: [usize; 3],
        region: [usize; 3],
        (row_pitch, slice_pitch): (usize, usize),
        ptr: UserPtr,
    ) -> ClResult<Command> {
        let desc = image.image_part()?.desc;
        if ptr.0.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        desc.check_box(origin, region)?;
        let tight_row = region[0] * desc.element_size;
        let row = if row_pitch == 0 { tight_row } else { row_pitch };
        if row < tight_row {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let slice = match desc.image_type {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER | CL_MEM_OBJECT_IMAGE2D => {
                if slice_pitch != 0 {
                    return Err(ClError(CL_INVALID_VALUE));
                }
                0
            }
            ty => {
                let tight = if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
                    row
                } else {
                    row * region[1]
                };
                let s = if slice_pitch == 0 { tight } else { slice_pitch };
                if s < tight {
                    return Err(ClError(CL_INVALID_VALUE));
                }
                s
            }
        };
        let forbidden = if write {
            CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS
        } else {
            CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS
        };
        if image.flags & forbidden != 0 {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        if write {
            check_writable(&image)?;
        }
        Ok(Command::HostImage {
            image,
            write,
            origin,
            region,
            strides: desc.host_strides(row, slice),
            ptr,
        })
    }

    /// clEnqueueCopyImage of the box `region` from `src_origin` of `src` to `dst_origin` of
    /// `dst`: `vkCmdCopyImage` between images of one type, else through a staging buffer.
    /// Errors: `CL_INVALID_MEM_OBJECT` (not images); `CL_IMAGE_FORMAT_MISMATCH`;
    /// `CL_INVALID_VALUE` (a box beyond its image, a region element 0);
    /// `CL_MEM_COPY_OVERLAP` (the same image, boxes overlapping); `CL_INVALID_OPERATION`
    /// (`dst` immutable); `CL_OUT_OF_RESOURCES` (staging).
    pub fn copy_image(
        src: Arc<Mem>,
        dst: Arc<Mem>,
        src_origin: [usize; 3],
        dst_origin: [usize; 3],
        region: [usize; 3],
    ) -> ClResult<Command> {
        let (s, d) = (src.image_part()?, dst.image_part()?);
        if s.desc.format_pair() != d.desc.format_pair() {
            return Err(ClError(CL_IMAGE_FORMAT_MISMATCH));
        }
        s.desc.check_box(src_origin, region)?;
        d.desc.check_box(dst_origin, region)?;
        check_writable(&dst)?;
        let overlap = (0..3).all(|i| {
            src_origin[i] < dst_origin[i] + region[i] && dst_origin[i] < src_origin[i] + region[i]
        });
        if Arc::ptr_eq(&src, &dst) && overlap {
            return Err(ClError(CL_MEM_COPY_OVERLAP));
        }
        let a = s.desc.region(src_origin, region, 0);
        let b = d.desc.region(dst_origin, region, 0);
        // Two 1D buffer images over overlapping bytes of one buffer: through staging.
        let shared = d.vk.texels.as_ref().is_some_and(|t| {
            let e = d.desc.element_size as u64;
            let at = t.offset + dst_origin[0] as u64 * e;
            shares_bytes(
                &src,
                src_origin,
                region,
                (&t.buffer, at, region[0] as u64 * e),
            )
        });
        let (device, extra) = if s.desc.image_type == d.desc.image_type && !shared {
            let copy = ImageCopy {
                src_offset: a.offset,
                src_layer: a.base_layer,
                dst_offset: b.offset,
                dst_layer: b.base_layer,
                extent: a.extent,
                layers: a.layers,
            };
            let c = DeviceCommand::CopyImage {
                src: s.vk.clone(),
                dst: d.vk.clone(),
                regions: vec![copy],
            };
            (vec![c], Vec::new())
        } else {
            // Different types (a 2D image and a slice of a 3D one, a 1D array and a 2D
            // image): their boxes pack alike in a buffer, which Vulkan copies both ways.
            let buf = staging(&src, box_bytes(&s.desc, region))?;
            let c = vec![
                DeviceCommand::BufferImage {
                    buffer: buf.clone(),
                    image: s.vk.clone(),
                    regions: vec![a],
                    to_image: false,
                },
                DeviceCommand::Barrier,
                DeviceCommand::BufferImage {
                    buffer: buf.clone(),
                    image: d.vk.clone(),
                    regions: vec![b],
                    to_image: true,
                },
            ];
            (c, vec![buf])
        };
        Ok(Command::ImageDevice {
            ty: CL_COMMAND_COPY_IMAGE,
            device,
            keep: keep_of(&[&src, &dst], extra),
        })
    }

    /// clEnqueueCopyImageToBuffer (`to_image` false) or clEnqueueCopyBufferToImage: the box
    /// `origin`, `region` of `image` and the texels tightly packed from byte `offset` of
    /// `buffer`. Offsets that are not a multiple of the texel size (Vulkan's rule for
    /// buffer-image copies) go through a staging buffer. Errors: `CL_INVALID_MEM_OBJECT`
    /// (`image` not an image, `buffer` not a buffer, `image` a 1D buffer image made from
    /// `buffer`); `CL_INVALID_VALUE` (a box beyond the image, a region element 0, the bytes
    /// beyond the buffer); `CL_INVALID_OPERATION` (the destination immutable);
    /// `CL_OUT_OF_RESOURCES` (staging). A 1D buffer image and bytes of a buffer sharing its
    /// storage (a sub-buffer or parent of the image's) go through staging where they overlap.
    pub fn copy_image_buffer(
        image: Arc<Mem>,
        buffer: Arc<Mem>,
        origin: [usize; 3],
        region: [usize; 3],
        offset: usize,
        to_image: bool,
    ) -> ClResult<Command> {
        let im = image.image_part()?;
        let buffer = buffer.as_buffer()?;
        // OpenCL 3.0 (clEnqueueCopyImageToBuffer, clEnqueueCopyBufferToImage): a 1D buffer
        // image made from the buffer is refused.
        if image
            .parent
            .as_ref()
            .is_some_and(|(b, _)| Arc::ptr_eq(b, &buffer))
        {
            return Err(ClError(CL_INVALID_MEM_OBJECT));
        }
        im.desc.check_box(origin, region)?;
        let bytes = box_bytes(&im.desc, region);
        super::transfer::in_bounds(offset, bytes, buffer.size)?;
        check_writable(if to_image { &image } else { &buffer })?;
        let at = (buffer.offset + offset) as u64;
        let shared = shares_bytes(&image, origin, region, (buffer.storage(), at, bytes as u64));
        let (device, extra) = if at.is_multiple_of(im.desc.element_size as u64) && !shared {
            let c = DeviceCommand::BufferImage {
                buffer: buffer.storage().clone(),
                image: im.vk.clone(),
                regions: vec![im.desc.region(origin, region, at)],
                to_image,
            };
            (vec![c], Vec::new())
        } else {
            let buf = staging(&image, bytes)?;
            let through = DeviceCommand::BufferImage {
                buffer: buf.clone(),
                image: im.vk.clone(),
                regions: vec![im.desc.region(origin, region, 0)],
                to_image,
            };
            let (from, to, regions) = if to_image {
                (
                    buffer.storage().clone(),
                    buf.clone(),
                    vec![(at, 0, bytes as u64)],
                )
            } else {
                (
                    buf.clone(),
                    buffer.storage().clone(),
                    vec![(0, at, bytes as u64)],
                )
            };
            let copy = DeviceCommand::Copy {
                src: from,
                dst: to,
                regions,
            };
            let c = if to_image {
                vec![copy, DeviceCommand::Barrier, through]
            } else {
                vec![through, DeviceCommand::Barrier, copy]
            };
            (c, vec![buf])
        };
        Ok(Command::ImageDevice {
            ty: if to_image {
                CL_COMMAND_COPY_BUFFER_TO_IMAGE
            } else {
                CL_COMMAND_COPY_IMAGE_TO_BUFFER
            },
            device,
            keep: keep_of(&[&image, &buffer], extra),
        })
    }

    /// clEnqueueFillImage of the box `origin`, `region` of `image` with `color` (the four
    /// words of the application's `float4`, `int4` or `uint4`), converted to the image's
    /// format on the host ([`pack_color`]) and copied in from a staging buffer holding one
    /// texel per element (exact, unlike `vkCmdClearColorImage`'s driver rounding).
    /// Errors: `CL_INVALID_MEM_OBJECT` (not an image); `CL_INVALID_VALUE` (a box beyond the
    /// image, a region element 0); `CL_INVALID_OPERATION` (immutable); `CL_OUT_OF_RESOURCES`.
    pub fn fill_image(
        image: Arc<Mem>,
        color: [u32; 4],
        origin: [usize; 3],
        region: [usize; 3],
    ) -> ClResult<Command> {
        let im = image.image_part()?;
        im.desc.check_box(origin, region)?;
        check_writable(&image)?;
        let texel = pack_color(&im.desc.format, color).ok_or(ClError(CL_INVALID_VALUE))?;
        let bytes = box_bytes(&im.desc, region);
        let buf = staging(&image, bytes)?;
        let pattern: Vec<u8> = texel.iter().copied().cycle().take(bytes).collect();
        if !buf.write_bytes(0, &pattern) {
            return Err(ClError(CL_OUT_OF_RESOURCES));
        }
        let c = DeviceCommand::BufferImage {
            buffer: buf.clone(),
            image: im.vk.clone(),
            regions: vec![im.desc.region(origin, region, 0)],
            to_image: true,
        };
        Ok(Command::ImageDevice {
            ty: CL_COMMAND_FILL_IMAGE,
            device: vec![c],
            keep: keep_of(&[&image], vec![buf]),
        })
    }

    /// clEnqueueMapImage of the box `origin`, `region` of `image` with `flags`: registers
    /// the mapping on `image` and returns the command and what the map hands out (the caller
    /// removes the mapping if the enqueue fails). The box lives in a staging buffer, tightly
    /// packed (row pitch region[0] x element size, slice pitch 0 for 1D and 2D images, the
    /// row pitch for 1D arrays, row pitch x region[1] otherwise); for `CL_MEM_USE_HOST_PTR`
    /// images the pointer is the box's place in `host_ptr`, with the image's pitches.
    /// Errors: `CL_INVALID_MEM_OBJECT` (not an image); `CL_INVALID_VALUE` (a box beyond the
    /// image, a region element 0, undefined flag bits, `CL_MAP_WRITE_INVALIDATE_REGION` with
    /// `CL_MAP_READ` or `CL_MAP_WRITE`); `CL_INVALID_OPERATION` (host access flags, a write
    /// map of an immutable image); `CL_OUT_OF_RESOURCES` (staging).
    pub fn map_image(
        image: Arc<Mem>,
        flags: cl_map_flags,
        origin: [usize; 3],
        region: [usize; 3],
    ) -> ClResult<(Command, MappedImage)> {
        let desc = image.image_part()?.desc;
        desc.check_box(origin, region)?;
        if flags & !MAP_FLAGS != 0
            || (flags & CL_MAP_WRITE_INVALIDATE_REGION != 0
                && flags & (CL_MAP_READ | CL_MAP_WRITE) != 0)
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let reads = flags & CL_MAP_READ != 0 || flags == 0;
        let writes = flags & MAP_WRITES != 0 || flags == 0;
        if (reads && image.flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) != 0)
            || (writes && image.flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) != 0)
        {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        if writes {
            check_writable(&image)?;
        }
        let row = region[0] * desc.element_size;
        let bytes = box_bytes(&desc, region);
        let vk = image.context.devices[0].vk()?;
        // Host-cached memory for maps the host only reads; coherent upload memory for the
        // others, which the host writes.
        let staging = if writes {
            Buffer::new(vk, bytes as u64)
        } else {
            Buffer::readback(vk, bytes as u64)
        }
        .map_err(|e| refused("image map staging", e))?;
        let staging = Arc::new(staging);
        let (host, out) = if image.flags & CL_MEM_USE_HOST_PTR != 0 {
            let (ys, zs) = desc.host_strides(desc.row_pitch, desc.slice_pitch);
            let at = origin[0] * desc.element_size + origin[1] * ys + origin[2] * zs;
            let p = UserPtr(image.host_ptr.0.wrapping_byte_add(at));
            let out = MappedImage {
                ptr: p,
                row_pitch: desc.row_pitch,
                slice_pitch: desc.slice_pitch,
            };
            (Some((p, (ys, zs))), out)
        } else {
            let slice = match desc.image_type {
                CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER | CL_MEM_OBJECT_IMAGE2D => 0,
                CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
                _ => row * region[1],
            };
            let out = MappedImage {
                ptr: UserPtr(staging.mapped() as *mut std::ffi::c_void),
                row_pitch: row,
                slice_pitch: slice,
            };
            (None, out)
        };
        let map = Arc::new(ImageMap {
            staging,
            origin,
            region,
            packed: (row, row * region[1]),
            host,
        });
        image.add_mapping(Mapping {
            ptr: out.ptr,
            offset: 0,
            size: bytes,
            flags,
            image: Some(map.clone()),
            staging: None,
        });
        let read = flags != CL_MAP_WRITE_INVALIDATE_REGION;
        Ok((Command::MapImage { image, map, read }, out))
    }
}
