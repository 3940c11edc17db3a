//! Memory objects: buffers and sub-buffers (OpenCL 3.0 section 5.2), and images (section
//! 5.3, docs/images.md), which are memory objects with an image part instead of a buffer.

use super::context::Context;
use super::error::{allocation_failed, ClError, ClResult};
use super::image_desc::{copy_box, ImageDesc};
use super::object::{ClObject, Header, Kind};
use super::UserPtr;
use crate::backend::vulkan::image_object::Image;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::staging::Staging;
use crate::backend::vulkan::upload::upload;
use opencl_sys::*;
use std::sync::{Arc, Mutex};

/// The alignment of every buffer's storage and of sub-buffer origins
/// (`CL_DEVICE_MEM_BASE_ADDR_ALIGN` / 8), bytes.
pub const BUFFER_ALIGNMENT: u64 = crate::backend::vulkan::memory::BUFFER_ALIGNMENT;

/// A destructor callback of clSetMemObjectDestructorCallback.
pub type MemDestructor = unsafe extern "C" fn(cl_mem, *mut std::ffi::c_void);

/// A buffer, sub-buffer or image.
pub struct Mem {
    header: Header,
    pub context: Arc<Context>,
    /// `CL_MEM_FLAGS` (for sub-buffers: including what was inherited from the parent).
    pub flags: cl_mem_flags,
    /// `CL_MEM_SIZE`, bytes.
    pub size: usize,
    /// `CL_MEM_HOST_PTR`: the host pointer given with CL_MEM_USE_HOST_PTR (sub-buffers: offset
    /// into the parent's).
    pub host_ptr: UserPtr,
    /// `CL_MEM_ASSOCIATED_MEMOBJECT` and `CL_MEM_OFFSET` of a sub-buffer; the buffer of a
    /// 1D buffer image (offset 0).
    pub parent: Option<(Arc<Mem>, usize)>,
    /// `CL_MEM_PROPERTIES`: as given to clCreateBufferWithProperties (with its 0), else empty.
    pub properties: Vec<cl_mem_properties>,
    /// Whether `CL_MEM_DEVICE_ADDRESS_EXT` may be asked: a buffer created with
    /// `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` set to `CL_TRUE`, or a sub-buffer of one
    /// (cl_ext_buffer_device_address; [`Mem::fixed_address`]).
    pub addressable: bool,
    /// The device buffer (a sub-buffer shares its parent's; None for images: see
    /// [`Mem::storage`]) and this object's offset in it.
    buffer: Option<Arc<Buffer>>,
    pub offset: usize,
    /// An image's shape and Vulkan image (None for buffers).
    pub image: Option<ImagePart>,
    /// Live mappings (clEnqueueMapBuffer); `CL_MEM_MAP_COUNT` is their number.
    pub maps: Mutex<Vec<Mapping>>,
    destructors: Mutex<Vec<(MemDestructor, UserPtr)>>,
}

/// The image part of an image object.
pub struct ImagePart {
    pub desc: ImageDesc,
    pub vk: Arc<Image>,
}

/// One mapping of a buffer region or an image box into host memory.
#[derive(Clone)]
pub struct Mapping {
    /// The pointer handed to the application.
    pub ptr: UserPtr,
    /// Offset and size of the mapped region in the buffer, bytes.
    pub offset: usize,
    pub size: usize,
    /// `cl_map_flags` of the map.
    pub flags: u64,
    /// An image map's staging and box (None for buffers).
    pub image: Option<Arc<ImageMap>>,
    /// A staged buffer map ([`Mem::staged`]): the host-cached buffer holding the region
    /// (byte 0 is the region's first byte), which the map hands out unless the buffer was
    /// created with `CL_MEM_USE_HOST_PTR` (then it carries the region between the storage
    /// and `host_ptr`); None for maps of the storage itself.
    pub staging: Option<Arc<Staging>>,
}

/// The host side of an image map (clEnqueueMapImage): the box's texels in a staging buffer,
/// tightly packed, and where the application sees them.
pub struct ImageMap {
    pub staging: Arc<Buffer>,
    pub origin: [usize; 3],
    pub region: [usize; 3],
    /// Strides of the packed box in the staging buffer (y, z), bytes.
    pub packed: (usize, usize),
    /// `CL_MEM_USE_HOST_PTR` images: the box's first texel in `host_ptr` and the strides of
    /// the image's host view there (the map's pointer and pitches); None: the map hands out
    /// the staging buffer.
    pub host: Option<(UserPtr, (usize, usize))>,
}

impl ClObject for Mem {
    const KIND: Kind = Kind::Mem;
    const INVALID: i32 = CL_INVALID_MEM_OBJECT;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Mem {
    /// A new buffer of `size` bytes on the context's first device (vkcl contexts share one
    /// Vulkan device per buffer for now); `addressable`: created with
    /// `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` (its address goes into the context's
    /// [`AddressMap`](super::device_address::AddressMap) until the object is destroyed).
    /// Errors: `CL_MEM_OBJECT_ALLOCATION_FAILURE` when the allocation fails,
    /// `CL_OUT_OF_RESOURCES` when the Vulkan device cannot be created.
    pub fn new_buffer(
        context: Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: UserPtr,
        properties: Vec<cl_mem_properties>,
        addressable: bool,
    ) -> ClResult<Mem> {
        let device = context.devices[0].vk()?;
        // Only a context with a green-context sub-device has CUDA kernels that may use it.
        let export = context.devices.iter().any(|d| d.green_context().is_some());
        // CL_MEM_ALLOC_HOST_PTR asks for memory the host reaches: never device-local.
        let device_local = flags & CL_MEM_ALLOC_HOST_PTR == 0;
        let storage = Buffer::new_shared(device, size as u64, export, device_local)
            .map_err(|e| allocation_failed(format_args!("buffer of {size} bytes"), e))?;
        if flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) != 0 {
            if storage.mapped().is_null() {
                // Device-local storage (VKCL_DEVICE_LOCAL): uploaded through staging.
                // SAFETY: the application promises host_ptr holds `size` bytes (clCreateBuffer).
                let data = unsafe { std::slice::from_raw_parts(host_ptr.0 as *const u8, size) };
                upload(device, &storage, 0, data).map_err(|e| {
                    allocation_failed(format_args!("initial contents of {size} bytes"), e)
                })?;
            } else {
                // SAFETY: the application promises host_ptr holds `size` bytes
                // (clCreateBuffer); the mapped storage holds `size` bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(host_ptr.0 as *const u8, storage.mapped(), size)
                };
            }
        }
        let host_ptr = if flags & CL_MEM_USE_HOST_PTR != 0 {
            host_ptr
        } else {
            UserPtr::NULL
        };
        let storage = Arc::new(storage);
        if addressable {
            let map = &context.device_addresses;
            map.insert(storage.address, size as u64, &storage);
        }
        Ok(Mem {
            header: Header::new(Kind::Mem),
            context,
            flags,
            size,
            host_ptr,
            parent: None,
            properties,
            addressable,
            buffer: Some(storage),
            offset: 0,
            image: None,
            maps: Mutex::new(Vec::new()),
            destructors: Mutex::new(Vec::new()),
        })
    }

    /// A buffer of `size` bytes on memory imported from `fd`, an opaque fd of Vulkan memory
    /// (`cl_khr_external_memory_opaque_fd`; the storage is the exporter's memory, nothing is
    /// copied). On success vkcl owns `fd`. Errors: `CL_INVALID_OPERATION` where the device
    /// cannot import opaque fds; `CL_INVALID_VALUE` when the driver refuses the handle (logged).
    pub fn new_imported_buffer(
        context: Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        fd: i32,
        properties: Vec<cl_mem_properties>,
    ) -> ClResult<Mem> {
        let device = context.devices[0].vk()?;
        if !context.devices[0].imports_opaque_fd() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        let storage = Buffer::import_opaque_fd(device, fd, size as u64).map_err(|e| {
            tracing::warn!("import of an opaque fd as a buffer of {size} bytes: {e}");
            ClError(CL_INVALID_VALUE)
        })?;
        Ok(Mem {
            header: Header::new(Kind::Mem),
            context,
            flags,
            size,
            host_ptr: UserPtr::NULL,
            parent: None,
            properties,
            addressable: false,
            buffer: Some(Arc::new(storage)),
            offset: 0,
            image: None,
            maps: Mutex::new(Vec::new()),
            destructors: Mutex::new(Vec::new()),
        })
    }

    /// Whether the object's storage was imported (`cl_khr_external_memory`): the buffer's
    /// properties name an external memory handle.
    pub fn is_external(&self) -> bool {
        let props = match &self.parent {
            Some((p, _)) => &p.properties,
            None => &self.properties,
        };
        let mut i = 0;
        while let Some(&key) = props.get(i) {
            match key {
                0 => break,
                k if k == CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR as cl_mem_properties => {
                    return true
                }
                // A device list runs to its terminating 0.
                k if k == CL_MEM_DEVICE_HANDLE_LIST_KHR as cl_mem_properties => {
                    i += 1;
                    while props.get(i).is_some_and(|&d| d != 0) {
                        i += 1;
                    }
                    i += 1;
                }
                _ => i += 2,
            }
        }
        false
    }

    /// A sub-buffer of `parent` (itself not a sub-buffer) at `origin`, `size` bytes.
    pub fn new_sub_buffer(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        origin: usize,
        size: usize,
    ) -> Mem {
        let host_ptr = if parent.host_ptr.0.is_null() {
            UserPtr::NULL
        } else {
            UserPtr(parent.host_ptr.0.wrapping_byte_add(origin))
        };
        Mem {
            header: Header::new(Kind::Mem),
            context: parent.context.clone(),
            flags,
            size,
            host_ptr,
            parent: Some((parent.clone(), origin)),
            properties: Vec::new(),
            addressable: parent.addressable,
            buffer: parent.buffer.clone(),
            offset: parent.offset + origin,
            image: None,
            maps: Mutex::new(Vec::new()),
            destructors: Mutex::new(Vec::new()),
        }
    }

    /// A new image of the checked `desc` on the context's first device, its contents copied
    /// from `host_ptr` (laid out with the descriptor's pitches) for `CL_MEM_COPY_HOST_PTR`
    /// and `CL_MEM_USE_HOST_PTR`. Errors: `CL_MEM_OBJECT_ALLOCATION_FAILURE` when Vulkan or
    /// the allocator refuse, `CL_OUT_OF_RESOURCES` when the Vulkan device cannot be created.
    pub fn new_image(
        context: Arc<Context>,
        flags: cl_mem_flags,
        desc: ImageDesc,
        host_ptr: UserPtr,
        properties: Vec<cl_mem_properties>,
    ) -> ClResult<Mem> {
        let device = context.devices[0].vk()?;
        let init = if flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) != 0 {
            let mut packed = vec![0u8; desc.packed_size()];
            let [x, y, z] = desc.extent();
            let row = x * desc.element_size;
            // SAFETY: the application promises host_ptr holds the image with its pitches
            // (clCreateImage); `packed` holds it tightly.
            unsafe {
                copy_box(
                    host_ptr.0 as *const u8,
                    desc.host_strides(desc.row_pitch, desc.slice_pitch),
                    packed.as_mut_ptr(),
                    (row, row * y),
                    [row, y, z],
                )
            };
            Some(packed)
        } else {
            None
        };
        let image = Image::new(
            device,
            desc.format_pair(),
            desc.shape(),
            desc.element_size as u64,
            init.as_deref(),
        )
        .map_err(|e| {
            let [x, y, z] = desc.extent();
            allocation_failed(format_args!("image of {x}x{y}x{z}"), e)
        })?;
        let host_ptr = if flags & CL_MEM_USE_HOST_PTR != 0 {
            host_ptr
        } else {
            UserPtr::NULL
        };
        Ok(Mem {
            header: Header::new(Kind::Mem),
            context,
            flags,
            size: desc.host_size(),
            host_ptr,
            parent: None,
            properties,
            addressable: false,
            buffer: None,
            offset: 0,
            image: Some(ImagePart {
                desc,
                vk: Arc::new(image),
            }),
            maps: Mutex::new(Vec::new()),
            destructors: Mutex::new(Vec::new()),
        })
    }

    /// A new 1D buffer image of the checked `desc` over the start of `buffer` (a buffer or
    /// sub-buffer of at least `desc.packed_size()` bytes), sharing its storage: a texel-buffer
    /// view of the buffer's `VkBuffer` at the buffer's offset (OpenCL 3.0 section 5.3.1;
    /// docs/images.md). `CL_MEM_ASSOCIATED_MEMOBJECT` and `CL_IMAGE_BUFFER` report `buffer`,
    /// which lives as long as the image; `CL_MEM_HOST_PTR` is the buffer's for
    /// `CL_MEM_USE_HOST_PTR` (inherited in `flags`). Errors:
    /// `CL_MEM_OBJECT_ALLOCATION_FAILURE` (logged) when the view cannot be made.
    pub fn new_buffer_image(
        context: Arc<Context>,
        flags: cl_mem_flags,
        desc: ImageDesc,
        buffer: Arc<Mem>,
        properties: Vec<cl_mem_properties>,
    ) -> ClResult<Mem> {
        let device = context.devices[0].vk()?;
        let image = Image::texel_buffer(
            device,
            desc.format_pair(),
            desc.width as u32,
            desc.element_size as u64,
            buffer.storage().clone(),
            buffer.offset as u64,
        )
        .map_err(|e| {
            allocation_failed(format_args!("1D buffer image of {} texels", desc.width), e)
        })?;
        let host_ptr = if flags & CL_MEM_USE_HOST_PTR != 0 {
            buffer.host_ptr
        } else {
            UserPtr::NULL
        };
        Ok(Mem {
            header: Header::new(Kind::Mem),
            context,
            flags,
            size: desc.host_size(),
            host_ptr,
            parent: Some((buffer, 0)),
            properties,
            addressable: false,
            buffer: None,
            offset: 0,
            image: Some(ImagePart {
                desc,
                vk: Arc::new(image),
            }),
            maps: Mutex::new(Vec::new()),
            destructors: Mutex::new(Vec::new()),
        })
    }

    /// The device buffer of a buffer object. Every entry point that takes a buffer refuses
    /// images first ([`Mem::as_buffer`]), so only buffers get here.
    ///
    /// # Panics
    /// For an image (a bug: an entry point took an image as a buffer).
    pub fn storage(&self) -> &Arc<Buffer> {
        self.buffer
            .as_ref()
            .expect("a buffer command was given an image (entry points refuse them)")
    }

    /// `self` if it is a buffer. Errors: `CL_INVALID_MEM_OBJECT` for an image (OpenCL:
    /// "not a valid buffer object").
    pub fn as_buffer(self: Arc<Self>) -> ClResult<Arc<Self>> {
        if self.buffer.is_none() {
            return Err(ClError(CL_INVALID_MEM_OBJECT));
        }
        Ok(self)
    }

    /// The image part of an image. Errors: `CL_INVALID_MEM_OBJECT` for a buffer.
    pub fn image_part(&self) -> ClResult<&ImagePart> {
        self.image.as_ref().ok_or(ClError(CL_INVALID_MEM_OBJECT))
    }

    /// `CL_MEM_TYPE`.
    pub fn mem_type(&self) -> cl_mem_object_type {
        self.image
            .as_ref()
            .map_or(CL_MEM_OBJECT_BUFFER, |i| i.desc.image_type)
    }

    /// Host address of this object's byte 0 in the (always mapped) storage (buffers).
    pub fn mapped(&self) -> *mut u8 {
        self.storage().mapped().wrapping_add(self.offset)
    }

    /// Whether host access to this buffer goes through host-cached staging memory filled and
    /// drained by device copies: when its storage is not host-cached (device-local memory
    /// behind the PCI BAR, which the CPU reads at tens of MB/s), or always under
    /// `VKCL_STAGED_READS=1`, or for device-local storage the host does not map at all
    /// (`VKCL_DEVICE_LOCAL`). Reads, rectangular reads and writes and maps take that path.
    pub fn staged(&self) -> bool {
        !self.storage().host_cached
            || self.storage().mapped().is_null()
            || crate::util::config::config().staged_reads
    }

    /// Whether the host writes this buffer's storage directly (`clEnqueueWriteBuffer`, fills
    /// of byte patterns): false only for device-local storage the host does not map
    /// (`VKCL_DEVICE_LOCAL`), which those go through staging for.
    pub fn host_writes(&self) -> bool {
        !self.storage().mapped().is_null()
    }

    /// Device address of this object's byte 0 (buffers).
    pub fn device_address(&self) -> u64 {
        self.storage().address + self.offset as u64
    }

    /// `CL_MEM_DEVICE_ADDRESS_EXT` (cl_ext_buffer_device_address): the device address of
    /// this buffer, the same on every device of the context (a vkcl buffer has one storage
    /// that all of them use); a sub-buffer's is its parent's plus its origin.
    /// Errors: `CL_INVALID_OPERATION` if the buffer (or a sub-buffer's parent) was not
    /// created with `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` set to `CL_TRUE`, and for images.
    pub fn fixed_address(&self) -> ClResult<u64> {
        if !self.addressable || self.buffer.is_none() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        Ok(self.device_address())
    }

    /// The host pointer a map of `[offset, offset + size)` hands out: inside the application's
    /// `host_ptr` for `CL_MEM_USE_HOST_PTR` objects (OpenCL 3.0 section 5.5.2: the map must
    /// return host_ptr + offset), else inside the mapped storage.
    pub fn map_pointer(&self, offset: usize) -> UserPtr {
        if self.flags & CL_MEM_USE_HOST_PTR != 0 {
            UserPtr(self.host_ptr.0.wrapping_byte_add(offset))
        } else {
            UserPtr(self.mapped().wrapping_add(offset) as *mut std::ffi::c_void)
        }
    }

    /// Records a live mapping (counted by `CL_MEM_MAP_COUNT` until unmapped).
    pub fn add_mapping(&self, m: Mapping) {
        self.maps.lock().unwrap_or_else(|e| e.into_inner()).push(m);
    }

    /// Removes and returns the most recent live mapping handed out as `ptr`; None if `ptr` is not
    /// mapped from this object.
    pub fn take_mapping(&self, ptr: *mut std::ffi::c_void) -> Option<Mapping> {
        let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
        let i = maps.iter().rposition(|x| x.ptr.0 == ptr)?;
        Some(maps.remove(i))
    }

    /// `CL_MEM_MAP_COUNT`: the number of live mappings.
    pub fn map_count(&self) -> cl_uint {
        self.maps.lock().unwrap_or_else(|e| e.into_inner()).len() as cl_uint
    }

    /// clSetMemObjectDestructorCallback: called in reverse order when the object is freed.
    pub fn add_destructor(&self, f: MemDestructor, user: UserPtr) {
        self.destructors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((f, user));
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        if self.addressable && self.parent.is_none() {
            if let Some(b) = &self.buffer {
                self.context.device_addresses.remove(b.address);
            }
        }
        let handle = self.header.handle() as cl_mem;
        let list = std::mem::take(
            self.destructors
                .get_mut()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for (f, user) in list.into_iter().rev() {
            // SAFETY: callback registered by the application; the handle is only passed back.
            unsafe { f(handle, user.0) };
        }
    }
}
