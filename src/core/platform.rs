//! The one platform, `vkcl`, with one device per usable Vulkan physical device.

use super::device::Device;
use super::make_version;
use super::object::{self, ClObject, Header, Kind};
use crate::backend::vulkan::Instance;
use opencl_sys::CL_INVALID_PLATFORM;
use std::sync::{Arc, OnceLock};

/// The platform: profile, version and name strings plus the root devices.
pub struct Platform {
    header: Header,
    /// Root devices, one per usable Vulkan physical device.
    pub devices: OnceLock<Vec<Arc<Device>>>,
}

impl ClObject for Platform {
    const KIND: Kind = Kind::Platform;
    const INVALID: i32 = CL_INVALID_PLATFORM;
    fn header(&self) -> &Header {
        &self.header
    }
}

/// `CL_PLATFORM_NAME`.
pub const NAME: &str = "vkcl";
/// `CL_PLATFORM_VENDOR`.
pub const VENDOR: &str = "vkcl project";
/// `CL_PLATFORM_ICD_SUFFIX_KHR`.
pub const ICD_SUFFIX: &str = "vkcl";
// `CL_PLATFORM_VERSION`: core::version::platform_version (3.1 or 3.0, from the devices).
/// `CL_PLATFORM_PROFILE`.
pub const PROFILE: &str = "FULL_PROFILE";

impl Platform {
    /// The platform singleton (registered as a live handle at first use).
    pub fn get() -> &'static Arc<Platform> {
        static PLATFORM: OnceLock<Arc<Platform>> = OnceLock::new();
        PLATFORM.get_or_init(|| {
            object::register(Platform {
                header: Header::new(Kind::Platform),
                devices: OnceLock::new(),
            })
        })
    }

    /// The root devices (enumerated from Vulkan at first use; empty without Vulkan).
    pub fn devices(self: &Arc<Self>) -> &[Arc<Device>] {
        self.devices.get_or_init(|| {
            let Some(instance) = Instance::get() else {
                return Vec::new();
            };
            instance
                .physical_devices
                .iter()
                .map(|pd| Device::new_root(instance, pd.clone()))
                .collect()
        })
    }

    /// Platform extensions with their versions (`CL_PLATFORM_EXTENSIONS_WITH_VERSION`).
    pub fn extensions(&self) -> Vec<(&'static str, u32)> {
        // Those of every device: cl_khr_semaphore is offered on all (core/semaphore.rs).
        vec![
            ("cl_khr_icd", make_version(1, 0, 0)),
            ("cl_khr_semaphore", make_version(1, 0, 0)),
        ]
    }
}
