//! Buffers: `VkBuffer`s with device addresses, suballocated by gpu-allocator.

use super::device::Device;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::{Arc, Mutex};

/// Alignment of every buffer's start, bytes (`CL_DEVICE_MEM_BASE_ADDR_ALIGN` is this in bits).
pub const BUFFER_ALIGNMENT: u64 = 128;

/// Why a buffer could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("Vulkan: {0}")]
    Vulkan(#[from] vk::Result),
    #[error("allocation: {0}")]
    Allocation(#[from] gpu_allocator::AllocationError),
}

/// A storage buffer usable by shaders (through its device address) and by transfers.
/// Always host-visible for now (mapped for its whole life).
pub struct Buffer {
    device: Arc<Device>,
    pub raw: vk::Buffer,
    allocation: Mutex<Option<Allocation>>,
    /// Size in bytes.
    pub size: u64,
    /// `vkGetBufferDeviceAddress` of the buffer's start.
    pub address: u64,
    mapped: *mut u8,
    /// Whether the host reads this memory through its caches (`HOST_CACHED`): false for
    /// device-local memory mapped through the PCI BAR, which the host reads at tens of MB/s.
    pub host_cached: bool,
}

// SAFETY: the mapped pointer is to memory owned by this buffer; concurrent access is governed
// by OpenCL's own rules (the application's synchronisation), as for any device memory.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Allocates `size` bytes (> 0) of host-visible device memory (device-local where the
    /// device has such memory).
    /// Errors: `MemoryError` when Vulkan or the allocator refuse (out of memory).
    pub fn new(device: &Arc<Device>, size: u64) -> Result<Buffer, MemoryError> {
        Buffer::new_in(device, size, MemoryLocation::CpuToGpu)
    }

    /// Allocates `size` bytes (> 0) of host-cached memory, the staging area of device-to-host
    /// copies out of memory the host reads slowly ([`Buffer::host_cached`] false).
    /// Errors: as [`Buffer::new`].
    pub fn readback(device: &Arc<Device>, size: u64) -> Result<Buffer, MemoryError> {
        Buffer::new_in(device, size, MemoryLocation::GpuToCpu)
    }

    fn new_in(
        device: &Arc<Device>,
        size: u64,
        location: MemoryLocation,
    ) -> Result<Buffer, MemoryError> {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
            | vk::BufferUsageFlags::INDIRECT_BUFFER;
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
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
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
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
        let mapped = alloc
            .mapped_ptr()
            .map(|p| p.as_ptr() as *mut u8)
            .unwrap_or(std::ptr::null_mut());
        // SAFETY: the buffer was created with SHADER_DEVICE_ADDRESS and is bound.
        let address = unsafe {
            device
                .raw
                .get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(raw))
        };
        let host_cached = alloc
            .memory_properties()
            .contains(vk::MemoryPropertyFlags::HOST_CACHED);
        Ok(Buffer {
            device: device.clone(),
            raw,
            allocation: Mutex::new(Some(alloc)),
            size,
            address,
            mapped,
            host_cached,
        })
    }

    /// The host address of byte 0 (the memory stays mapped while the buffer lives).
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
