//! Image objects (docs/images.md): a `VkImage` with optimal tiling, one mip level and
//! device-local memory, in `VK_IMAGE_LAYOUT_GENERAL` for its whole life. The one transition
//! out of `UNDEFINED` (and the upload of initial contents) is a one-time submission at
//! creation, so no command ever tracks layouts. A 1D buffer image has no `VkImage`: it is a
//! `VkBufferView` of an OpenCL buffer's `VkBuffer` ([`Image::texel_buffer`]), and the
//! recorder turns its copies into buffer copies.

use super::device::Device;
use super::image::{format_support, vk_format};
pub use super::image::{Dim, ImageCopy, ImageRegion, ImageShape};
use super::memory::Buffer;
use crate::backend::error::BackendError;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::{Arc, Mutex};

/// An image: the `VkImage`, its memory and what it was made with.
pub struct Image {
    device: Arc<Device>,
    pub raw: vk::Image,
    allocation: Mutex<Option<Allocation>>,
    pub format: vk::Format,
    pub shape: ImageShape,
    /// Bytes per texel.
    pub texel_size: u64,
    /// The usages it was made with.
    usage: vk::ImageUsageFlags,
    /// Views made for kernels ([`Image::view`]): (storage, arrayed, view).
    views: Mutex<Vec<(bool, bool, vk::ImageView)>>,
    /// A 1D buffer image: the texels' buffer and view (`raw` is then null).
    pub texels: Option<TexelBuffer>,
    /// The format of the image's copy view (`super::image_copy_kernel`) where it was made
    /// with `MUTABLE_FORMAT` for one, and that view once made ([`Image::copy_view`]).
    copy_format: Option<vk::Format>,
    copy_view: std::sync::OnceLock<Option<vk::ImageView>>,
}

/// Where a 1D buffer image's texels live: `width` texels from byte `offset` of `buffer` (an
/// OpenCL buffer's storage, shared with it), and the `VkBufferView` kernels bind as a
/// uniform or storage texel buffer.
pub struct TexelBuffer {
    pub buffer: Arc<Buffer>,
    pub offset: u64,
    pub view: vk::BufferView,
}

impl Image {
    /// A new image of the OpenCL format (`order`, `data_type`: see [`vk_format`]) and
    /// `shape` (usages: transfers, and sampled and storage where the format allows them), in
    /// `GENERAL` layout; `init` (tightly packed texels of the whole image, layers last) is
    /// uploaded before it returns. Errors: the Vulkan result (`FORMAT_NOT_SUPPORTED` for a
    /// format without a Vulkan twin) or the allocator's refusal (out of memory).
    pub fn new(
        device: &Arc<Device>,
        (order, data_type): (u32, u32),
        shape: ImageShape,
        texel_size: u64,
        init: Option<&[u8]>,
    ) -> Result<Image, BackendError> {
        let format = vk_format(order, data_type).ok_or(vk::Result::ERROR_FORMAT_NOT_SUPPORTED)?;
        let support = format_support(&device.phys, format);
        let mut usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
        if support.sampled {
            usage |= vk::ImageUsageFlags::SAMPLED;
        }
        if support.storage_write {
            usage |= vk::ImageUsageFlags::STORAGE;
        }
        // A storage view of the unsigned format of the texel size, for the image-copy shader.
        let copy_format = super::image_copy_kernel::uint_format(texel_size).filter(|&f| {
            support.storage_write
                && device.copies_images_with_shader()
                && format_support(&device.phys, f).storage_image
                && (device.storage_extended_formats
                    || !super::image_copy_kernel::needs_extended_formats(texel_size))
        });
        // Made for views of both formats (an image of an unsigned format is its own copy view).
        let mutable = copy_format.filter(|&f| f != format);
        let view_formats: Vec<vk::Format> = mutable.iter().flat_map(|&f| [format, f]).collect();
        let mut format_list = vk::ImageFormatListCreateInfo::default().view_formats(&view_formats);
        let [w, h, d] = shape.extent;
        let mut info = vk::ImageCreateInfo::default()
            .image_type(match shape.dim {
                Dim::D1 => vk::ImageType::TYPE_1D,
                Dim::D2 => vk::ImageType::TYPE_2D,
                Dim::D3 => vk::ImageType::TYPE_3D,
            })
            .format(format)
            .extent(vk::Extent3D {
                width: w,
                height: h,
                depth: d,
            })
            .mip_levels(1)
            .array_layers(shape.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        if mutable.is_some() {
            info = info
                .flags(vk::ImageCreateFlags::MUTABLE_FORMAT)
                .push_next(&mut format_list);
        }
        // SAFETY: valid create info on a live device (the copy view's format is of the
        // image format's compatibility class: the same texel size, both uncompressed colour).
        let raw = unsafe { device.raw.create_image(&info, None) }?;
        // SAFETY: `raw` is an image of this device.
        let requirements = unsafe { device.raw.get_image_memory_requirements(raw) };
        let alloc = device
            .allocator
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .allocate(&AllocationCreateDesc {
                name: "vkcl image",
                requirements,
                location: MemoryLocation::GpuOnly,
                linear: false,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            });
        let alloc = match alloc {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: unused image, destroyed once.
                unsafe { device.raw.destroy_image(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: the allocation meets the image's requirements and is bound nowhere else.
        let bound = unsafe {
            device
                .raw
                .bind_image_memory(raw, alloc.memory(), alloc.offset())
        };
        let image = Image {
            device: device.clone(),
            raw,
            allocation: Mutex::new(Some(alloc)),
            format,
            shape,
            texel_size,
            usage,
            views: Mutex::new(Vec::new()),
            texels: None,
            copy_format,
            copy_view: std::sync::OnceLock::new(),
        };
        bound?;
        image.initialize(init)?;
        Ok(image)
    }

    /// A 1D buffer image of the OpenCL format (`order`, `data_type`) over `width` texels of
    /// `texel_size` bytes from byte `offset` of `buffer` (OpenCL 3.0 section 5.3: the image
    /// and the buffer share their storage). Errors: `ERROR_FORMAT_NOT_SUPPORTED` for a format
    /// without both texel-buffer features ([`format_support`]) or an `offset` that is not a
    /// multiple of `minTexelBufferOffsetAlignment`; `vkCreateBufferView`'s result.
    pub fn texel_buffer(
        device: &Arc<Device>,
        (order, data_type): (u32, u32),
        width: u32,
        texel_size: u64,
        buffer: Arc<Buffer>,
        offset: u64,
    ) -> Result<Image, BackendError> {
        let format = vk_format(order, data_type).ok_or(vk::Result::ERROR_FORMAT_NOT_SUPPORTED)?;
        let support = format_support(&device.phys, format);
        let align = device.phys.limits.min_texel_buffer_offset_alignment.max(1);
        let range = u64::from(width) * texel_size;
        if !support.texel_buffer
            || !offset.is_multiple_of(align)
            || offset.saturating_add(range) > buffer.size
        {
            return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED.into());
        }
        let info = vk::BufferViewCreateInfo::default()
            .buffer(buffer.raw)
            .format(format)
            .offset(offset)
            .range(range);
        // SAFETY: a live buffer of this device made with both texel-buffer usages
        // (`Buffer::usage` with images on), a format with both features, an aligned offset
        // and a range inside the buffer (checked above).
        let view = unsafe { device.raw.create_buffer_view(&info, None) }?;
        let mut usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_SRC;
        usage |= vk::ImageUsageFlags::TRANSFER_DST;
        if support.texel_write {
            usage |= vk::ImageUsageFlags::STORAGE;
        }
        Ok(Image {
            device: device.clone(),
            raw: vk::Image::null(),
            allocation: Mutex::new(None),
            format,
            shape: ImageShape {
                dim: Dim::D1,
                extent: [width, 1, 1],
                layers: 1,
            },
            texel_size,
            usage,
            views: Mutex::new(Vec::new()),
            copy_format: None,
            copy_view: std::sync::OnceLock::new(),
            texels: Some(TexelBuffer {
                buffer,
                offset,
                view,
            }),
        })
    }

    /// The `VkBufferView` of a 1D buffer image for kernels: the uniform texel buffer of
    /// reads or (`storage`) the storage texel buffer of writes. Errors:
    /// `ERROR_FORMAT_NOT_SUPPORTED` for an image that is no 1D buffer image, or for writes
    /// where the device cannot write texel buffers without a format.
    pub fn buffer_view(&self, storage: bool) -> Result<vk::BufferView, BackendError> {
        match &self.texels {
            Some(t) if !storage || self.usage.contains(vk::ImageUsageFlags::STORAGE) => Ok(t.view),
            _ => Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED.into()),
        }
    }

    /// The one-time submission of a new image: `UNDEFINED -> GENERAL`, the upload of `init`,
    /// and a barrier making both visible to every later command; waited for on a fence.
    fn initialize(&self, init: Option<&[u8]>) -> Result<(), BackendError> {
        let dev = &self.device;
        let staging = match init {
            Some(bytes) => {
                let b = Buffer::new(dev, bytes.len().max(1) as u64)?;
                b.write_bytes(0, bytes);
                Some(b)
            }
            None => None,
        };
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(dev.phys.compute_queue_family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { dev.raw.create_command_pool(&pool_info, None) }?;
        let result = self.submit_initialization(pool, staging.as_ref());
        // SAFETY: the submission completed (or was never made): the pool is unused.
        unsafe { dev.raw.destroy_command_pool(pool, None) };
        result
    }

    fn submit_initialization(
        &self,
        pool: vk::CommandPool,
        staging: Option<&Buffer>,
    ) -> Result<(), BackendError> {
        let dev = &self.device;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: a pool of this device; freed with the pool.
        let cmd = unsafe { dev.raw.allocate_command_buffers(&alloc) }?[0];
        let range = vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: self.shape.layers,
        };
        let to_general = [vk::ImageMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::empty())
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(self.raw)
            .subresource_range(range)];
        let after = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)];
        let whole = ImageRegion {
            buffer_offset: 0,
            offset: [0; 3],
            extent: self.shape.extent,
            base_layer: 0,
            layers: self.shape.layers,
        };
        let fence_info = vk::FenceCreateInfo::default();
        // SAFETY: recording a fresh command buffer of this device; the image and staging
        // buffer live until the fence is waited for below.
        unsafe {
            let d = &dev.raw;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )?;
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &to_general,
            );
            if let Some(b) = staging {
                d.cmd_copy_buffer_to_image(
                    cmd,
                    b.raw,
                    self.raw,
                    vk::ImageLayout::GENERAL,
                    &[buffer_image_copy(&whole)],
                );
            }
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &after,
                &[],
                &[],
            );
            d.end_command_buffer(cmd)?;
            let fence = d.create_fence(&fence_info, None)?;
            let cmds = [cmd];
            let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
            let submitted = {
                let q = dev.queues[0].lock().unwrap_or_else(|e| e.into_inner());
                dev.note(d.queue_submit(*q, &submit, fence), "image initialisation")
            };
            let waited = submitted.and_then(|_| {
                dev.note(
                    d.wait_for_fences(&[fence], true, u64::MAX),
                    "image initialisation",
                )
            });
            d.destroy_fence(fence, None);
            waited?;
        }
        Ok(())
    }
}

/// The `VkBufferImageCopy` of `r` (colour aspect, mip 0, tightly packed rows).
pub fn buffer_image_copy(r: &ImageRegion) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset: r.buffer_offset,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: layers(r.base_layer, r.layers),
        image_offset: offset(r.offset),
        image_extent: extent(r.extent),
    }
}

/// The `VkImageCopy` of `c`.
pub fn image_copy(c: &ImageCopy) -> vk::ImageCopy {
    vk::ImageCopy {
        src_subresource: layers(c.src_layer, c.layers),
        src_offset: offset(c.src_offset),
        dst_subresource: layers(c.dst_layer, c.layers),
        dst_offset: offset(c.dst_offset),
        extent: extent(c.extent),
    }
}

fn layers(base: u32, count: u32) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        base_array_layer: base,
        layer_count: count,
    }
}

fn offset(o: [u32; 3]) -> vk::Offset3D {
    vk::Offset3D {
        x: o[0] as i32,
        y: o[1] as i32,
        z: o[2] as i32,
    }
}

fn extent(e: [u32; 3]) -> vk::Extent3D {
    vk::Extent3D {
        width: e[0],
        height: e[1],
        depth: e[2],
    }
}

impl Image {
    /// The view of the whole image that kernels bind (docs/images.md): for a storage image
    /// (`storage`) or a sampled one, of the array view type when the OpenCL type is an array
    /// (`arrayed`), the image's format and identity swizzle. Made once and kept with the
    /// image. Errors: `ERROR_FORMAT_NOT_SUPPORTED` when the image's format has no such use
    /// (it was made without that usage); `vkCreateImageView`'s result.
    pub fn view(&self, storage: bool, arrayed: bool) -> Result<vk::ImageView, BackendError> {
        if self.texels.is_some() {
            return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED.into());
        }
        let want = if storage {
            vk::ImageUsageFlags::STORAGE
        } else {
            vk::ImageUsageFlags::SAMPLED
        };
        if !self.usage.contains(want) {
            return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED.into());
        }
        let mut views = self.views.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = views.iter().find(|v| v.0 == storage && v.1 == arrayed) {
            return Ok(v.2);
        }
        let view_type = match (self.shape.dim, arrayed) {
            (Dim::D1, false) => vk::ImageViewType::TYPE_1D,
            (Dim::D1, true) => vk::ImageViewType::TYPE_1D_ARRAY,
            (Dim::D2, false) => vk::ImageViewType::TYPE_2D,
            (Dim::D2, true) => vk::ImageViewType::TYPE_2D_ARRAY,
            (Dim::D3, _) => vk::ImageViewType::TYPE_3D,
        };
        let usage = if storage {
            vk::ImageUsageFlags::STORAGE
        } else {
            vk::ImageUsageFlags::SAMPLED
        };
        let v = self.make_view(view_type, self.format, usage)?;
        views.push((storage, arrayed, v));
        Ok(v)
    }
}

impl Image {
    /// The storage view of the whole image in its copy format (`super::image_copy_kernel`:
    /// the unsigned format of its texel size, an array view for 1D and 2D images), made once
    /// and kept with the image; None for an image made without one, or when
    /// `vkCreateImageView` fails (logged; its copies then stay `vkCmdCopyImage`).
    pub fn copy_view(&self) -> Option<vk::ImageView> {
        let format = self.copy_format?;
        *self.copy_view.get_or_init(|| {
            let view_type = super::image_copy_kernel::view_type(self.shape.dim);
            self.make_view(view_type, format, vk::ImageUsageFlags::STORAGE)
                .map_err(|e| tracing::warn!("an image's copy view could not be made ({e})"))
                .ok()
        })
    }
}

impl Image {
    /// A view of the whole image (every layer, the one level) of `view_type` and `format`
    /// with the one `usage`. The caller picks a format the image can be viewed as (its own, or
    /// one of its `MUTABLE_FORMAT` format list) and a usage it was made with.
    /// Errors: `vkCreateImageView`'s result.
    fn make_view(
        &self,
        view_type: vk::ImageViewType,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
    ) -> Result<vk::ImageView, vk::Result> {
        let mut usage = vk::ImageViewUsageCreateInfo::default().usage(usage);
        let info = vk::ImageViewCreateInfo::default()
            .image(self.raw)
            .view_type(view_type)
            .format(format)
            .subresource_range(vk::ImageSubresourceRange {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                base_mip_level: 0,
                level_count: 1,
                base_array_layer: 0,
                layer_count: self.shape.layers,
            })
            .push_next(&mut usage);
        // SAFETY: a view of this live image in a format and with a usage it allows (the
        // caller's duty, see above).
        unsafe { self.device.raw.create_image_view(&info, None) }
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        if let Some(t) = self.texels.take() {
            // SAFETY: no pending command uses the view (commands hold an Arc of their
            // images); the buffer it views outlives it (held in `t`).
            unsafe { self.device.raw.destroy_buffer_view(t.view, None) };
            return;
        }
        // SAFETY: no pending command uses the image or its views (commands hold an Arc of
        // their images).
        unsafe {
            for (_, _, v) in self
                .views
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..)
            {
                self.device.raw.destroy_image_view(v, None);
            }
            if let Some(Some(v)) = self.copy_view.take() {
                self.device.raw.destroy_image_view(v, None);
            }
            self.device.raw.destroy_image(self.raw, None)
        };
        if let Some(a) = self
            .allocation
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = self
                .device
                .allocator
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .free(a);
        }
    }
}
