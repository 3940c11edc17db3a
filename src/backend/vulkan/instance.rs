//! The Vulkan instance, the validation layer hook-up, and the facts of each physical device.

use crate::util::config::{config, Validation};
use ash::vk;
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Number of validation-layer errors reported in this process (`VKCL_VALIDATION`).
pub static VALIDATION_ERRORS: AtomicU64 = AtomicU64::new(0);

/// The loaded Vulkan library and instance.
pub struct Instance {
    pub entry: ash::Entry,
    pub raw: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Usable physical devices, in enumeration order.
    pub physical_devices: Vec<Arc<PhysicalDevice>>,
}

// SAFETY: ash handles are plain data; Vulkan instance-level calls vkcl makes are thread-safe.
unsafe impl Send for Instance {}
// SAFETY: as above.
unsafe impl Sync for Instance {}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        VALIDATION_ERRORS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the layer passes a valid callback-data struct with a NUL-terminated message.
        let msg = unsafe {
            data.as_ref()
                .and_then(|d| d.message_as_c_str())
                .map(|m| m.to_string_lossy().into_owned())
        };
        eprintln!("vkcl: Vulkan validation error: {}", msg.unwrap_or_default());
        if config().validation == Validation::Fatal {
            std::process::abort();
        }
    }
    vk::FALSE
}

impl Instance {
    /// The process-wide instance, created at first use; `None` when no Vulkan loader or no
    /// instance could be had (vkcl then reports no devices).
    pub fn get() -> Option<&'static Instance> {
        static INSTANCE: OnceLock<Option<Instance>> = OnceLock::new();
        INSTANCE
            .get_or_init(|| match Instance::create() {
                Ok(i) => Some(i),
                Err(e) => {
                    tracing::warn!("no Vulkan instance: {e}");
                    None
                }
            })
            .as_ref()
    }

    fn create() -> Result<Instance, String> {
        // SAFETY: loading the system Vulkan loader library; its initialisers are trusted.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| e.to_string())?;
        let validation = config().validation != Validation::Off;
        // SAFETY: plain enumeration calls on a loaded entry.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
        let has_layer = layers
            .iter()
            .any(|l| l.layer_name_as_c_str().ok() == Some(c"VK_LAYER_KHRONOS_validation"));
        let mut layer_names = Vec::new();
        let mut ext_names = Vec::new();
        if validation {
            if has_layer {
                layer_names.push(c"VK_LAYER_KHRONOS_validation".as_ptr());
                ext_names.push(ash::ext::debug_utils::NAME.as_ptr());
            } else {
                eprintln!(
                    "vkcl: VKCL_VALIDATION is set but VK_LAYER_KHRONOS_validation is not installed"
                );
            }
        }
        // SAFETY: plain query.
        let version = unsafe { entry.try_enumerate_instance_version() }
            .ok()
            .flatten()
            .unwrap_or(vk::API_VERSION_1_0);
        if version < vk::API_VERSION_1_2 {
            return Err(format!(
                "Vulkan loader supports only {}.{}",
                vk::api_version_major(version),
                vk::api_version_minor(version)
            ));
        }
        let app = vk::ApplicationInfo::default()
            .application_name(c"vkcl")
            .engine_name(c"vkcl")
            .api_version(vk::API_VERSION_1_3.min(version));
        let info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&ext_names);
        // SAFETY: the create info and everything it points to outlive the call.
        let raw = unsafe { entry.create_instance(&info, None) }.map_err(|e| e.to_string())?;
        let debug = if validation && has_layer {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &raw);
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                        | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::GENERAL,
                )
                .pfn_user_callback(Some(debug_callback));
            // SAFETY: valid create info, instance alive.
            unsafe { loader.create_debug_utils_messenger(&info, None) }
                .ok()
                .map(|m| (loader, m))
        } else {
            None
        };
        // SAFETY: the instance is valid.
        let pds = unsafe { raw.enumerate_physical_devices() }.map_err(|e| e.to_string())?;
        let physical_devices = pds
            .into_iter()
            .filter_map(|pd| PhysicalDevice::probe(&raw, pd))
            .map(Arc::new)
            .collect();
        Ok(Instance {
            entry,
            raw,
            debug,
            physical_devices,
        })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some((loader, m)) = self.debug.take() {
            // SAFETY: the messenger belongs to this instance and is destroyed once.
            unsafe { loader.destroy_debug_utils_messenger(m, None) };
        }
    }
}

/// The subgroup operations a device offers in compute shaders, one flag per Vulkan
/// `VkSubgroupFeatureFlagBits` group (Vulkan 1.1, `subgroupSupportedOperations`), for layers
/// above the backend that decide which OpenCL sub-group extensions to report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubgroupOperations {
    pub basic: bool,
    pub vote: bool,
    pub arithmetic: bool,
    pub ballot: bool,
    pub shuffle: bool,
    pub shuffle_relative: bool,
    pub clustered: bool,
}

/// What vkcl needs to know about a physical device, read once from the driver.
#[derive(Debug, Clone)]
pub struct PhysicalDevice {
    pub raw: vk::PhysicalDevice,
    pub name: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub api_version: u32,
    pub driver_version: u32,
    pub driver_id: vk::DriverId,
    pub driver_name: String,
    pub driver_info: String,
    pub device_type: vk::PhysicalDeviceType,
    pub limits: vk::PhysicalDeviceLimits,
    pub subgroup_size: u32,
    /// Subgroup operations usable in compute shaders (`subgroupSupportedOperations` when
    /// `subgroupSupportedStages` has COMPUTE; empty otherwise).
    pub subgroup_ops: vk::SubgroupFeatureFlags,
    /// `shaderSubgroupExtendedTypes`: subgroup operations on 8/16/64-bit types.
    pub subgroup_extended_types: bool,
    /// `subgroupBroadcastDynamicId`: `OpGroupNonUniformBroadcast` with an id that is only
    /// dynamically uniform (SPIR-V 1.5).
    pub subgroup_broadcast_dynamic_id: bool,
    pub max_memory_allocation_size: u64,
    pub max_buffer_size: u64,
    pub device_uuid: [u8; 16],
    pub driver_uuid: [u8; 16],
    pub pipeline_cache_uuid: [u8; 16],
    /// Size of the largest device-local heap, bytes.
    pub device_local_heap: u64,
    /// Whether every device-local memory type is also host-visible (CPU devices, UMA).
    pub unified_memory: bool,
    pub shader_int8: bool,
    pub shader_int16: bool,
    pub shader_int64: bool,
    pub shader_float16: bool,
    pub shader_float64: bool,
    pub storage_8bit: bool,
    pub storage_16bit: bool,
    pub vulkan_memory_model: bool,
    /// `shaderBufferInt64Atomics`: 64-bit integer atomics on storage buffers.
    pub shader_int64_atomics: bool,
    /// `shaderSharedInt64Atomics`: 64-bit integer atomics on workgroup (shared) memory.
    pub shader_shared_int64_atomics: bool,
    /// `VK_EXT_shader_atomic_float` `shaderSharedFloat32Atomics`: 32-bit float atomic load,
    /// store and exchange on workgroup (shared) memory.
    pub shader_shared_float32_atomics: bool,
    /// `VK_NV_shader_sm_builtins` shaderSMCount, when exposed.
    pub sm_count: Option<u32>,
    pub compute_queue_family: u32,
    pub compute_queue_count: u32,
    pub extensions: Vec<String>,
    /// Whether buffers can be imported from opaque fds (`VK_KHR_external_memory_fd`,
    /// importable for vkcl's buffer usages, and one memory type, so the import's type is the
    /// exporter's): `cl_khr_external_memory_opaque_fd`
    /// ([`super::memory::Buffer::import_opaque_fd`]).
    pub import_opaque_fd: bool,
}

impl PhysicalDevice {
    /// Whether the driver reports a CPU device (`VK_PHYSICAL_DEVICE_TYPE_CPU`: lavapipe).
    pub fn is_cpu(&self) -> bool {
        self.device_type == vk::PhysicalDeviceType::CPU
    }

    /// [`Self::subgroup_ops`] as plain flags (all false where compute has no subgroups).
    pub fn subgroup_operations(&self) -> SubgroupOperations {
        use vk::SubgroupFeatureFlags as F;
        let on = |f: F| self.subgroup_ops.contains(f);
        SubgroupOperations {
            basic: on(F::BASIC),
            vote: on(F::VOTE),
            arithmetic: on(F::ARITHMETIC),
            ballot: on(F::BALLOT),
            shuffle: on(F::SHUFFLE),
            shuffle_relative: on(F::SHUFFLE_RELATIVE),
            clustered: on(F::CLUSTERED),
        }
    }

    /// The Vulkan version the device supports, as `major.minor.patch`.
    pub fn api_version_text(&self) -> String {
        let v = self.api_version;
        format!(
            "{}.{}.{}",
            vk::api_version_major(v),
            vk::api_version_minor(v),
            vk::api_version_patch(v)
        )
    }

    /// Reads the facts of `pd`; `None` when the device lacks what vkcl needs: Vulkan 1.2,
    /// `bufferDeviceAddress`, `timelineSemaphore` and a compute queue.
    fn probe(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Option<PhysicalDevice> {
        // SAFETY: `pd` was enumerated from `instance`; every query below is a plain read.
        let props = unsafe { instance.get_physical_device_properties(pd) };
        if props.api_version < vk::API_VERSION_1_2 {
            return None;
        }
        // SAFETY: as above.
        let exts: Vec<String> = unsafe { instance.enumerate_device_extension_properties(pd) }
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                e.extension_name_as_c_str()
                    .ok()
                    .map(|s| s.to_string_lossy().into_owned())
            })
            .collect();
        let has = |n: &CStr| exts.iter().any(|e| e.as_bytes() == n.to_bytes());
        // Buffers on memory imported from opaque fds, for vkcl's buffer usages. Vulkan wants
        // the import in the exporter's memory type, which OpenCL's properties do not name:
        // only a device of one memory type (lavapipe) leaves no choice to get wrong.
        // SAFETY: plain query.
        let one_type =
            unsafe { instance.get_physical_device_memory_properties(pd) }.memory_type_count == 1;
        let import_opaque_fd = one_type && has(ash::khr::external_memory_fd::NAME) && {
            let info = vk::PhysicalDeviceExternalBufferInfo::default()
                .usage(buffer_usage())
                .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
            let mut out = vk::ExternalBufferProperties::default();
            // SAFETY: plain query of a physical device of this instance.
            unsafe { instance.get_physical_device_external_buffer_properties(pd, &info, &mut out) };
            out.external_memory_properties
                .external_memory_features
                .contains(vk::ExternalMemoryFeatureFlags::IMPORTABLE)
        };
        let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
        let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
        let mut m4 = vk::PhysicalDeviceMaintenance4Properties::default();
        let mut sm = vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut p11)
            .push_next(&mut p12);
        let has_m4 = props.api_version >= vk::API_VERSION_1_3 || has(ash::khr::maintenance4::NAME);
        if has_m4 {
            props2 = props2.push_next(&mut m4);
        }
        let has_sm = has(ash::nv::shader_sm_builtins::NAME);
        if has_sm {
            props2 = props2.push_next(&mut sm);
        }
        // SAFETY: the chain holds valid structs that outlive the call.
        unsafe { instance.get_physical_device_properties2(pd, &mut props2) };
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut af = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12);
        let has_af = has(ash::ext::shader_atomic_float::NAME);
        if has_af {
            f2 = f2.push_next(&mut af);
        }
        // SAFETY: as above.
        unsafe { instance.get_physical_device_features2(pd, &mut f2) };
        let f = f2.features;
        if f12.buffer_device_address == 0 || f12.timeline_semaphore == 0 {
            return None;
        }
        // SAFETY: plain query.
        let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
        // A compute-only family (dedicated asynchronous compute) unless VKCL_QUEUE_FAMILY=any,
        // else the first family with compute.
        let pick = |want_no_gfx: bool| {
            families.iter().position(|q| {
                q.queue_flags.contains(vk::QueueFlags::COMPUTE)
                    && (!want_no_gfx || !q.queue_flags.contains(vk::QueueFlags::GRAPHICS))
            })
        };
        let family = if crate::util::config::config().compute_only_family {
            pick(true).or_else(|| pick(false))?
        } else {
            pick(false)?
        };
        // SAFETY: plain query.
        let mem = unsafe { instance.get_physical_device_memory_properties(pd) };
        let heaps = &mem.memory_heaps[..mem.memory_heap_count as usize];
        let types = &mem.memory_types[..mem.memory_type_count as usize];
        let device_local_heap = heaps
            .iter()
            .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .map(|h| h.size)
            .max()
            .unwrap_or_else(|| heaps.iter().map(|h| h.size).max().unwrap_or(0));
        let unified_memory = types
            .iter()
            .filter(|t| {
                t.property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .all(|t| {
                t.property_flags
                    .contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
            });
        let cstr = |s: &[std::ffi::c_char]| {
            // SAFETY: Vulkan fills these fixed arrays with NUL-terminated strings.
            unsafe { CStr::from_ptr(s.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        };
        Some(PhysicalDevice {
            raw: pd,
            name: cstr(&props.device_name),
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            api_version: props.api_version,
            driver_version: props.driver_version,
            driver_id: p12.driver_id,
            driver_name: cstr(&p12.driver_name),
            driver_info: cstr(&p12.driver_info),
            device_type: props.device_type,
            limits: props.limits,
            subgroup_size: p11.subgroup_size,
            subgroup_ops: if p11
                .subgroup_supported_stages
                .contains(vk::ShaderStageFlags::COMPUTE)
            {
                p11.subgroup_supported_operations
            } else {
                vk::SubgroupFeatureFlags::empty()
            },
            subgroup_extended_types: f12.shader_subgroup_extended_types != 0,
            subgroup_broadcast_dynamic_id: f12.subgroup_broadcast_dynamic_id != 0,
            max_memory_allocation_size: p11.max_memory_allocation_size,
            max_buffer_size: if has_m4 {
                m4.max_buffer_size
            } else {
                u32::MAX as u64
            },
            device_uuid: p11.device_uuid,
            driver_uuid: p11.driver_uuid,
            pipeline_cache_uuid: props.pipeline_cache_uuid,
            device_local_heap,
            unified_memory,
            shader_int8: f12.shader_int8 != 0,
            shader_int16: f.shader_int16 != 0,
            shader_int64: f.shader_int64 != 0,
            shader_float16: f12.shader_float16 != 0,
            shader_float64: f.shader_float64 != 0,
            storage_8bit: f12.storage_buffer8_bit_access != 0,
            storage_16bit: f11.storage_buffer16_bit_access != 0,
            vulkan_memory_model: f12.vulkan_memory_model != 0,
            shader_int64_atomics: f12.shader_buffer_int64_atomics != 0,
            shader_shared_int64_atomics: f12.shader_shared_int64_atomics != 0,
            shader_shared_float32_atomics: has_af && af.shader_shared_float32_atomics != 0,
            sm_count: has_sm.then_some(sm.shader_sm_count),
            compute_queue_family: family as u32,
            compute_queue_count: families[family].queue_count,
            extensions: exts,
            import_opaque_fd,
        })
    }

    /// Whether the device exposes the named extension.
    pub fn has_extension(&self, name: &CStr) -> bool {
        self.extensions
            .iter()
            .any(|e| e.as_bytes() == name.to_bytes())
    }
}

/// The usages of every buffer; with `VKCL_IMAGES=1` also uniform and storage texel
/// buffers, so that a 1D buffer image can be a `VkBufferView` of an OpenCL buffer
/// (docs/images.md; such views then need formats with both texel-buffer features).
pub fn buffer_usage() -> vk::BufferUsageFlags {
    let texel = if crate::util::config::config().images {
        vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER
    } else {
        vk::BufferUsageFlags::empty()
    };
    vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
        | vk::BufferUsageFlags::INDIRECT_BUFFER
        | texel
}
