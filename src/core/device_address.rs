//! Device addresses of buffers (`cl_ext_buffer_device_address` 1.0.2; docs/features.md,
//! "Device addresses").
//!
//! Every vkcl buffer already has a fixed Vulkan buffer device address (kernels reach global
//! memory through `PhysicalStorageBuffer` pointers, see the compiler's kernel ABI), so a
//! buffer created with `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` differs from another only in
//! that its address may be handed out and taken back as a raw value. This map, one per
//! context, takes such a value back to its buffer: the launch of a kernel that receives a
//! raw address (`clSetKernelArgDevicePointerEXT`) or may follow one stored in memory
//! (`CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`) keeps that buffer's storage alive until it
//! completes and, under `VKCL_BOUNDS_CHECK`, admits accesses to the whole buffer.

use crate::backend::vulkan::memory::Buffer;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

/// The buffers of a context that were created with `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT`,
/// by device address.
#[derive(Default)]
pub struct AddressMap {
    /// Start address -> (end address, storage). Ranges never overlap: Vulkan gives live
    /// buffers disjoint address ranges, and an entry leaves with its memory object.
    map: Mutex<BTreeMap<u64, (u64, Weak<Buffer>)>>,
}

/// The buffer an address points into: its storage and its whole address range.
pub struct Resolved {
    /// The buffer's storage (a launch keeps it alive).
    pub storage: Arc<Buffer>,
    /// `[start, end)` of the buffer's device addresses.
    pub range: [u64; 2],
}

impl AddressMap {
    /// Records a buffer of `size` bytes at device address `start` with storage `storage`.
    pub fn insert(&self, start: u64, size: u64, storage: &Arc<Buffer>) {
        self.lock()
            .insert(start, (start + size, Arc::downgrade(storage)));
    }

    /// Forgets the buffer at `start` (its memory object is being destroyed).
    pub fn remove(&self, start: u64) {
        self.lock().remove(&start);
    }

    /// The buffer whose addresses `[start, end]` hold `address` (its one-past-the-end
    /// address included, where no other buffer starts), if it is still alive; None for any
    /// other value (NULL, an address of no such buffer, a dangling one).
    pub fn find(&self, address: u64) -> Option<Resolved> {
        let map = self.lock();
        let (start, end, storage) = entry_at(&map, address)?;
        Some(Resolved {
            storage: storage.upgrade()?,
            range: [start, end],
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, (u64, Weak<Buffer>)>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The entry of `map` (start -> (end, value)) whose `[start, end]` holds `address`, as
/// (start, end, value); the one starting at `address` where one ends there and the next
/// starts.
fn entry_at<V>(map: &BTreeMap<u64, (u64, V)>, address: u64) -> Option<(u64, u64, &V)> {
    let (&start, (end, v)) = map.range(..=address).next_back()?;
    (address <= *end).then_some((start, *end, v))
}

#[cfg(test)]
mod tests {
    // `find` needs live `Buffer`s (a Vulkan device): tests/device_address.rs covers it through
    // the real loader; the range rule is checked here.
    use super::entry_at;
    use std::collections::BTreeMap;

    fn find(map: &BTreeMap<u64, (u64, ())>, a: u64) -> Option<u64> {
        entry_at(map, a).map(|(s, _, _)| s)
    }

    #[test]
    fn an_address_belongs_to_the_buffer_it_lies_in() {
        let map = BTreeMap::from([
            (0x1000, (0x1400, ())),
            (0x1400, (0x1800, ())),
            (0x4000, (0x4010, ())),
        ]);
        assert_eq!(find(&map, 0x0fff), None);
        assert_eq!(find(&map, 0x1000), Some(0x1000));
        assert_eq!(find(&map, 0x13ff), Some(0x1000));
        // Where one buffer ends and the next starts, the address is the next one's.
        assert_eq!(find(&map, 0x1400), Some(0x1400));
        assert_eq!(find(&map, 0x1800), Some(0x1400));
        assert_eq!(find(&map, 0x1801), None);
        assert_eq!(find(&map, 0x4008), Some(0x4000));
    }
}
