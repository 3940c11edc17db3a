//! Buffers: `VkBuffer`s with device addresses, suballocated by gpu-allocator.

use super::device::Device;
use crate::backend::cuda::ImportedMemory;
use crate::backend::error::BackendError;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::{Arc, Mutex, OnceLock};

/// Alignment of every buffer's start, bytes (`CL_DEVICE_MEM_BASE_ADDR_ALIGN` is this in bits).
pub const BUFFER_ALIGNMENT: u64 = 128;

/// A storage buffer usable by shaders (through its device address) and by transfers.
/// Host-visible and mapped for its whole life, except device-local buffers
/// ([`Buffer::new_shared`]), whose [`Buffer::mapped`] is null.
pub struct Buffer {
    device: Arc<Device>,
    pub raw: vk::Buffer,
    allocation: Mutex<Option<Allocation>>,
    /// Size in bytes.
    pub size: u64,
    /// `vkGetBufferDeviceAddress` of the buffer's start.
    pub address: u64,
    mapped: *mut u8,
    /// On the CUDA path: the buffer's own exportable allocation (instead of `allocation`)
    /// and, once a CUDA kernel has used it, its import into CUDA.
    exported: Option<Exported>,
    /// Whether the host reads this memory through its caches (`HOST_CACHED`): false for
    /// device-local memory mapped through the PCI BAR, which the host reads at tens of MB/s.
    pub host_cached: bool,
    /// Whether the memory is `DEVICE_LOCAL` (on a discrete GPU: not system memory, which the
    /// GPU reaches over PCIe): only such buffers are copied by the copy shader
    /// (`copy_kernel.rs`), so staging copies to and from system memory stay on the copy engine.
    pub device_local: bool,
}

/// A dedicated, exportable allocation (`VK_KHR_external_memory_fd`, opaque fd).
struct Exported {
    memory: vk::DeviceMemory,
    size: u64,
    cuda: OnceLock<Option<ImportedMemory>>,
}

// SAFETY: the mapped pointer is to memory owned by this buffer; concurrent access is governed
// by OpenCL's own rules (the application's synchronisation), as for any device memory.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

/// Host-visible device buffers of at least this many bytes get a dedicated allocation instead
/// of a part of the allocator's shared blocks.
const DEDICATED_BYTES: u64 = 4 << 20;

/// Whether `device` is a discrete GPU whose device-local memory is host-visible as a whole (a
/// memory type `DEVICE_LOCAL | HOST_VISIBLE` on a heap of at least 90% of the largest
/// device-local heap: a resizable BAR), where OpenCL buffers, which live in such memory,
/// must never spill into system memory.
fn whole_vram_mappable(device: &Device) -> bool {
    let props = &device.memory_properties;
    let both = vk::MemoryPropertyFlags::DEVICE_LOCAL | vk::MemoryPropertyFlags::HOST_VISIBLE;
    device.phys.device_type == vk::PhysicalDeviceType::DISCRETE_GPU
        && props.memory_types[..props.memory_type_count as usize]
            .iter()
            .filter(|t| t.property_flags.contains(both))
            .any(|t| {
                props.memory_heaps[t.heap_index as usize].size
                    >= device.phys.device_local_heap / 10 * 9
            })
}

impl Buffer {
    /// Allocates `size` bytes (> 0) of host-visible device memory (suballocated below
    /// [`DEDICATED_BYTES`], dedicated from there).
    /// Errors: [`BackendError`] when Vulkan or the allocator refuse (out of memory).
    pub fn new(device: &Arc<Device>, size: u64) -> Result<Buffer, BackendError> {
        Buffer::new_suballocated(device, size, MemoryLocation::CpuToGpu, false)
    }

    /// Allocates `size` bytes (> 0) of host-cached memory, the staging area of device-to-host
    /// copies out of memory the host reads slowly ([`Buffer::host_cached`] false).
    /// Errors: as [`Buffer::new`].
    pub fn readback(device: &Arc<Device>, size: u64) -> Result<Buffer, BackendError> {
        Buffer::new_suballocated(device, size, MemoryLocation::GpuToCpu, true)
    }

    /// As [`Buffer::new`], for an OpenCL buffer; `export`: CUDA kernels may use it too (its
    /// context has a green-context sub-device), so on the CUDA path it is a dedicated
    /// exportable allocation (the allocator's if the driver refuses). On the H200 the only
    /// exportable host-visible memory type is system memory (about 75 GB/s from the GPU,
    /// against 2 TB/s and more for device-local memory), so there such a buffer is exportable
    /// device-local memory the host does not map (host access staged) unless it is
    /// `CL_MEM_ALLOC_HOST_PTR` (`device_local` false).
    /// Errors: as [`Buffer::new`].
    ///
    /// `device_local`: the buffer may live in device-local memory the host does not map, which
    /// it does under `VKCL_DEVICE_LOCAL=1` on discrete GPUs (`force`: on every device) unless
    /// `export` applies; such a buffer's [`Buffer::mapped`] is null and every host access
    /// goes through staging ([`super::upload::upload`], `core/staged.rs`). Without it
    /// (`CL_MEM_ALLOC_HOST_PTR`) a discrete GPU's buffer is host-cached system memory.
    /// Otherwise the buffer is host-visible device-local memory where the driver has it (the
    /// BAR); on a GPU whose whole device memory is host-visible, never system memory instead
    /// (`ERROR_OUT_OF_DEVICE_MEMORY` once device memory is full).
    pub fn new_shared(
        device: &Arc<Device>,
        size: u64,
        export: bool,
        device_local: bool,
    ) -> Result<Buffer, BackendError> {
        if export && device.cuda.is_some() {
            // Not CL_MEM_ALLOC_HOST_PTR: device-local even where the driver exports only
            // memory the host does not map (the H200), staged for the host.
            let unmapped =
                device_local && device.phys.device_type == vk::PhysicalDeviceType::DISCRETE_GPU;
            match Buffer::new_exported(device, size, unmapped) {
                Ok(b) => return Ok(b),
                Err(e) => tracing::debug!("exportable buffer of {size} bytes: {e}"),
            }
        }
        use crate::util::config::{config, DeviceLocal};
        let placed = match config().device_local {
            DeviceLocal::Off => false,
            DeviceLocal::Discrete => {
                device.phys.device_type == vk::PhysicalDeviceType::DISCRETE_GPU
            }
            DeviceLocal::Force => true,
        };
        if device_local && placed && !export {
            let mut b = Buffer::new_suballocated(device, size, MemoryLocation::GpuOnly, false)?;
            // Never touched by the host, even where the memory type is host-visible (lavapipe).
            b.mapped = std::ptr::null_mut();
            b.host_cached = false;
            return Ok(b);
        }
        if !device_local && device.phys.device_type == vk::PhysicalDeviceType::DISCRETE_GPU {
            // CL_MEM_ALLOC_HOST_PTR on a discrete GPU: host-cached system memory, which the
            // host maps, reads and writes at memory speed (no staging) and kernels reach
            // over the bus.
            return Buffer::new_suballocated(device, size, MemoryLocation::GpuToCpu, false);
        }
        let b = Buffer::new_suballocated(device, size, MemoryLocation::CpuToGpu, false)?;
        if !b.device_local && whole_vram_mappable(device) {
            // The allocator falls back to system memory when device-local memory is full; on a
            // GPU whose whole memory is host-visible (resizable BAR) that would hand out more
            // than CL_DEVICE_GLOBAL_MEM_SIZE, silently at bus speed for kernels: refused.
            tracing::warn!(
                "buffer of {size} bytes: device-local memory is full (the allocator offered \
                 system memory, refused)"
            );
            return Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY.into());
        }
        Ok(b)
    }

    /// The usages of every buffer ([`super::instance::buffer_usage`]).
    pub fn usage() -> vk::BufferUsageFlags {
        super::instance::buffer_usage()
    }

    /// A buffer of `size` bytes on memory imported from `fd`, an opaque fd of
    /// `VK_KHR_external_memory_fd` (exported by Vulkan with the same driver: its allocation
    /// must have `size` rounded up to the buffer's requirements, in a memory type the buffer
    /// allows; host-visible types first, mapped). On success Vulkan owns `fd`; on failure the
    /// caller still does. Errors: `ERROR_FEATURE_NOT_PRESENT` without
    /// `import_opaque_fd` of the physical device or a memory type; Vulkan's refusals
    /// (`ERROR_INVALID_EXTERNAL_HANDLE`, out of memory).
    pub fn import_opaque_fd(
        device: &Arc<Device>,
        fd: i32,
        size: u64,
    ) -> Result<Buffer, BackendError> {
        if !device.phys.import_opaque_fd {
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT.into());
        }
        let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let (raw, req) = opaque_fd_buffer(device, size)?;
        let props = &device.memory_properties;
        let want = |flags| memory_type(device, &req, flags);
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(type_index) = want(host).or_else(|| want(vk::MemoryPropertyFlags::empty())) else {
            // SAFETY: unused buffer, destroyed once.
            unsafe { device.raw.destroy_buffer(raw, None) };
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT.into());
        };
        let type_flags = props.memory_types[type_index as usize].property_flags;
        let mut import = vk::ImportMemoryFdInfoKHR::default()
            .handle_type(handle)
            .fd(fd);
        let mut flags =
            vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index)
            .push_next(&mut import)
            .push_next(&mut flags);
        // SAFETY: valid allocate info whose chain outlives the call; on success the driver
        // owns the fd.
        let memory = match unsafe { device.raw.allocate_memory(&alloc, None) } {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: unused buffer, destroyed once.
                unsafe { device.raw.destroy_buffer(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: memory of the buffer's requirements, bound once; mapped whole when the host
        // sees it.
        let mapped = unsafe {
            device.raw.bind_buffer_memory(raw, memory, 0).and_then(|_| {
                if type_flags.contains(vk::MemoryPropertyFlags::HOST_VISIBLE) {
                    device
                        .raw
                        .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                } else {
                    Ok(std::ptr::null_mut())
                }
            })
        };
        let mapped = match mapped {
            Ok(p) => p as *mut u8,
            Err(e) => {
                // SAFETY: neither is in use; each destroyed once.
                unsafe {
                    device.raw.destroy_buffer(raw, None);
                    device.raw.free_memory(memory, None);
                }
                return Err(e.into());
            }
        };
        let address = device_address(device, raw);
        Ok(Buffer {
            device: device.clone(),
            raw,
            allocation: Mutex::new(None),
            size,
            address,
            mapped,
            host_cached: type_flags.contains(vk::MemoryPropertyFlags::HOST_CACHED),
            device_local: type_flags.contains(vk::MemoryPropertyFlags::DEVICE_LOCAL),
            exported: Some(Exported {
                memory,
                size: req.size,
                cuda: OnceLock::new(),
            }),
        })
    }

    /// A buffer with its own exportable allocation (opaque fd handle type): host-visible
    /// device-local memory where the driver exports it, else, with `unmapped`, device-local
    /// memory the host does not map (its [`Buffer::mapped`] null: host access through
    /// staging), else host-visible memory (system memory on the H200, which kernels reach
    /// over the bus).
    fn new_exported(
        device: &Arc<Device>,
        size: u64,
        unmapped: bool,
    ) -> Result<Buffer, BackendError> {
        let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let (raw, req) = opaque_fd_buffer(device, size)?;
        let props = &device.memory_properties;
        let want = |flags| memory_type(device, &req, flags);
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let local = vk::MemoryPropertyFlags::DEVICE_LOCAL;
        let Some(type_index) = want(host | local)
            .or_else(|| unmapped.then(|| want(local)).flatten())
            .or_else(|| want(host))
        else {
            // SAFETY: unused buffer, destroyed once.
            unsafe { device.raw.destroy_buffer(raw, None) };
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT.into());
        };
        tracing::debug!(
            "exportable buffer of {size} bytes in memory type {type_index} ({:?})",
            props.memory_types[type_index as usize].property_flags
        );
        let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(handle);
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(raw);
        let mut flags =
            vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index)
            .push_next(&mut export)
            .push_next(&mut dedicated)
            .push_next(&mut flags);
        // SAFETY: valid allocate info whose chain outlives the call.
        let memory = match unsafe { device.raw.allocate_memory(&alloc, None) } {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: unused buffer, destroyed once.
                unsafe { device.raw.destroy_buffer(raw, None) };
                return Err(e.into());
            }
        };
        let flags = props.memory_types[type_index as usize].property_flags;
        let visible = flags.contains(vk::MemoryPropertyFlags::HOST_VISIBLE);
        // SAFETY: fresh memory of the buffer's requirements; mapped whole, once, where the
        // host can see it.
        let mapped = unsafe {
            device.raw.bind_buffer_memory(raw, memory, 0).and_then(|_| {
                if visible {
                    device
                        .raw
                        .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                } else {
                    Ok(std::ptr::null_mut())
                }
            })
        };
        let mapped = match mapped {
            Ok(p) => p as *mut u8,
            Err(e) => {
                // SAFETY: neither is in use; each destroyed once.
                unsafe {
                    device.raw.destroy_buffer(raw, None);
                    device.raw.free_memory(memory, None);
                }
                return Err(e.into());
            }
        };
        let address = device_address(device, raw);
        Ok(Buffer {
            device: device.clone(),
            raw,
            allocation: Mutex::new(None),
            size,
            address,
            mapped,
            host_cached: flags.contains(vk::MemoryPropertyFlags::HOST_CACHED),
            device_local: flags.contains(vk::MemoryPropertyFlags::DEVICE_LOCAL),
            exported: Some(Exported {
                memory,
                size: req.size,
                cuda: OnceLock::new(),
            }),
        })
    }

    /// The CUDA address of byte 0 on the CUDA path: the allocation is exported
    /// (`vkGetMemoryFdKHR`) and imported into CUDA at the first call, once. None where the
    /// buffer is not exportable or the import failed (logged).
    pub fn cuda_address(&self) -> Option<u64> {
        let ex = self.exported.as_ref()?;
        let (cuda, fd_loader) = self.device.cuda.as_ref()?;
        ex.cuda
            .get_or_init(|| {
                let info = vk::MemoryGetFdInfoKHR::default()
                    .memory(ex.memory)
                    .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
                // SAFETY: exportable memory of this device.
                let fd = match unsafe { fd_loader.get_memory_fd(&info) } {
                    Ok(fd) => fd,
                    Err(e) => {
                        tracing::warn!("vkGetMemoryFdKHR: {e}");
                        return None;
                    }
                };
                match ImportedMemory::import_fd(cuda, fd, ex.size) {
                    Ok(m) => Some(m),
                    Err(e) => {
                        // SAFETY: the import failed, so the fd is still ours to close.
                        unsafe { libc::close(fd) };
                        tracing::warn!("buffer import into CUDA: {e}");
                        None
                    }
                }
            })
            .as_ref()
            .map(|m| m.ptr)
    }

    /// A buffer suballocated by gpu-allocator (a dedicated allocation from [`DEDICATED_BYTES`],
    /// except for `staging` buffers, which keep to the shared blocks).
    fn new_suballocated(
        device: &Arc<Device>,
        size: u64,
        location: MemoryLocation,
        staging: bool,
    ) -> Result<Buffer, BackendError> {
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(Buffer::usage())
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.raw.create_buffer(&info, None) }?;
        // SAFETY: `raw` is a buffer of this device.
        let mut requirements = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        requirements.alignment = requirements.alignment.max(BUFFER_ALIGNMENT);
        let alloc = device
            .allocator
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .allocate(&AllocationCreateDesc {
                name: "vkcl buffer",
                requirements,
                location,
                linear: true,
                // Large buffers get their own allocation: one that filled the allocator's
                // shared block (64 MiB for host-visible memory) made every later small
                // allocation (each launch's argument buffer) allocate and free a new block,
                // about 1 ms per launch on the H200.
                // (Readback staging keeps the shared blocks: the allocator keeps its last block,
                // which a dedicated allocation would give back after every read.)
                allocation_scheme: if size >= DEDICATED_BYTES && !staging {
                    AllocationScheme::DedicatedBuffer(raw)
                } else {
                    AllocationScheme::GpuAllocatorManaged
                },
            });
        let alloc = match alloc {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unused and destroyed once.
                unsafe { device.raw.destroy_buffer(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: the allocation satisfies the buffer's requirements and is not bound elsewhere.
        if let Err(e) = unsafe {
            device
                .raw
                .bind_buffer_memory(raw, alloc.memory(), alloc.offset())
        } {
            let _ = device
                .allocator
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .free(alloc);
            // SAFETY: as above.
            unsafe { device.raw.destroy_buffer(raw, None) };
            return Err(e.into());
        }
        tracing::debug!(
            "buffer of {size} bytes in memory {:?}",
            alloc.memory_properties()
        );
        let host_cached = alloc
            .memory_properties()
            .contains(vk::MemoryPropertyFlags::HOST_CACHED);
        let device_local = alloc
            .memory_properties()
            .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL);
        let mapped = alloc
            .mapped_ptr()
            .map(|p| p.as_ptr() as *mut u8)
            .unwrap_or(std::ptr::null_mut());
        let address = device_address(device, raw);
        Ok(Buffer {
            device: device.clone(),
            raw,
            allocation: Mutex::new(Some(alloc)),
            size,
            address,
            mapped,
            exported: None,
            host_cached,
            device_local,
        })
    }

    /// The Vulkan device the buffer belongs to.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// The host address of byte 0 (the memory stays mapped while the buffer lives); null for
    /// a device-local buffer the host does not map.
    pub fn mapped(&self) -> *mut u8 {
        self.mapped
    }

    /// Copies `data` to bytes `offset..offset + data.len()` from the host. The caller makes
    /// sure no device work uses those bytes meanwhile. Returns false (and writes nothing) when
    /// the range is outside the buffer or the buffer is not mapped.
    pub fn write_bytes(&self, offset: u64, data: &[u8]) -> bool {
        if self.mapped.is_null() || offset.saturating_add(data.len() as u64) > self.size {
            return false;
        }
        // SAFETY: the range lies inside the mapped buffer (checked above); no device work uses
        // it (caller's contract).
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.mapped.add(offset as usize),
                data.len(),
            )
        };
        true
    }

    /// Copies bytes `offset..offset + out.len()` to `out` on the host (after the device work
    /// that wrote them completed). Returns false (and reads nothing) when the range is outside
    /// the buffer or the buffer is not mapped.
    pub fn read_bytes(&self, offset: u64, out: &mut [u8]) -> bool {
        if self.mapped.is_null() || offset.saturating_add(out.len() as u64) > self.size {
            return false;
        }
        // SAFETY: the range lies inside the mapped buffer (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.mapped.add(offset as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        true
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // CUDA's mapping goes first, then the Vulkan buffer and its own memory.
        if let Some(mut ex) = self.exported.take() {
            drop(ex.cuda.take());
            // SAFETY: no pending command uses the buffer (commands hold an Arc of their
            // buffers); the memory is this buffer's own, freed once.
            unsafe {
                self.device.raw.destroy_buffer(self.raw, None);
                self.device.raw.free_memory(ex.memory, None);
            }
            return;
        }
        // SAFETY: no pending command uses the buffer (commands hold an Arc of their buffers).
        unsafe { self.device.raw.destroy_buffer(self.raw, None) };
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

/// `vkGetBufferDeviceAddress` of `raw`, a buffer of `device` created with
/// `SHADER_DEVICE_ADDRESS` usage and bound to memory.
fn device_address(device: &Device, raw: vk::Buffer) -> u64 {
    // SAFETY: as the caller guarantees.
    unsafe {
        device
            .raw
            .get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(raw))
    }
}

/// A buffer of `size` bytes whose memory may be an opaque-fd external allocation, and its
/// memory requirements (no memory bound yet).
fn opaque_fd_buffer(
    device: &Arc<Device>,
    size: u64,
) -> Result<(vk::Buffer, vk::MemoryRequirements), BackendError> {
    let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
    let mut ext_info = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
    let info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(Buffer::usage())
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .push_next(&mut ext_info);
    // SAFETY: valid create info on a live device.
    let raw = unsafe { device.raw.create_buffer(&info, None) }?;
    // SAFETY: `raw` is a buffer of this device.
    let req = unsafe { device.raw.get_buffer_memory_requirements(raw) };
    Ok((raw, req))
}

/// The first memory type `req` allows whose properties include `flags`.
fn memory_type(
    device: &Device,
    req: &vk::MemoryRequirements,
    flags: vk::MemoryPropertyFlags,
) -> Option<u32> {
    let props = &device.memory_properties;
    (0..props.memory_type_count).find(|&i| {
        req.memory_type_bits & (1 << i) != 0
            && props.memory_types[i as usize]
                .property_flags
                .contains(flags)
    })
}
