//! Platform entry points (OpenCL 3.0 section 4.1).

use super::info::InfoOut;
use super::{status, write_opt};
use crate::core::error::{ClError, ClResult};
use crate::core::object;
use crate::core::platform::{self as core_platform, Platform};
use crate::core::version;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// Builds a `cl_name_version` list from (name, version) pairs.
pub(crate) fn name_versions(list: &[(&str, u32)]) -> Vec<cl_name_version> {
    list.iter()
        .map(|(n, v)| {
            let mut name = [0u8; CL_NAME_VERSION_MAX_NAME_SIZE];
            for (d, s) in name
                .iter_mut()
                .zip(n.bytes().take(CL_NAME_VERSION_MAX_NAME_SIZE - 1))
            {
                *d = s;
            }
            cl_name_version { version: *v, name }
        })
        .collect()
}

/// Space-separated names of a (name, version) list.
pub(crate) fn names(list: &[(&str, u32)]) -> String {
    list.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(" ")
}

/// Resolves a platform argument: NULL means vkcl's platform (implementation-defined
/// behaviour the spec allows). Errors: `CL_INVALID_PLATFORM` for any other handle.
pub(crate) fn platform_arg(p: cl_platform_id) -> ClResult<&'static Arc<Platform>> {
    let ours = Platform::get();
    if p.is_null() || object::lookup::<Platform>(p as *const c_void).is_ok() {
        Ok(ours)
    } else {
        Err(ClError(CL_INVALID_PLATFORM))
    }
}

/// clGetPlatformIDs. Errors: `CL_INVALID_VALUE` if `num_entries` is 0 and `platforms` is
/// not NULL, or both `platforms` and `num_platforms` are NULL.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetPlatformIDs(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    status(|| {
        // CL_INVALID_VALUE if num_entries is 0 and platforms is not NULL
        // or if both num_platforms and platforms are NULL.
        if (num_entries == 0 && !platforms.is_null())
            || (platforms.is_null() && num_platforms.is_null())
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let p = Platform::get();
        if !platforms.is_null() {
            // SAFETY: platforms holds num_entries >= 1 entries.
            unsafe { platforms.write(object::handle_of(p) as cl_platform_id) };
        }
        // SAFETY: NULL or a valid cl_uint pointer.
        unsafe { write_opt(num_platforms, 1) };
        Ok(())
    })
}

/// clGetPlatformInfo. Errors: `CL_INVALID_PLATFORM`, `CL_INVALID_VALUE` for an unknown name or
/// a too small `param_value_size`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetPlatformInfo(
    platform: cl_platform_id,
    param_name: cl_platform_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let p = platform_arg(platform)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_PLATFORM_PROFILE => out.string(core_platform::PROFILE),
            // The highest of the devices' versions (core::version): OpenCL 3.1 or 3.0.
            CL_PLATFORM_VERSION => out.string(&version::version_text(version::platform_version())),
            CL_PLATFORM_NUMERIC_VERSION => {
                out.scalar(version::numeric(version::platform_version()))
            }
            CL_PLATFORM_NAME => out.string(core_platform::NAME),
            CL_PLATFORM_VENDOR => out.string(core_platform::VENDOR),
            CL_PLATFORM_EXTENSIONS => out.string(&names(&p.extensions())),
            CL_PLATFORM_EXTENSIONS_WITH_VERSION => out.slice(&name_versions(&p.extensions())),
            CL_PLATFORM_HOST_TIMER_RESOLUTION => out.scalar(1 as cl_ulong),
            // cl_khr_command_buffer_multi_device 0.9.2.
            CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR
                if super::command_buffer_multi::enabled() =>
            {
                out.scalar(super::command_buffer_multi::PLATFORM_CAPABILITIES)
            }
            CL_PLATFORM_ICD_SUFFIX_KHR => out.string(core_platform::ICD_SUFFIX),
            // cl_khr_semaphore: the types every device supports.
            CL_PLATFORM_SEMAPHORE_TYPES_KHR => out.slice(&super::semaphore::TYPES),
            // cl_khr_external_memory: the handle types every device imports.
            CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR => {
                let devices = p.devices();
                let all = !devices.is_empty() && devices.iter().all(|d| d.imports_opaque_fd());
                let types: &[cl_external_memory_handle_type_khr] = if all {
                    &[CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR]
                } else {
                    &[]
                };
                out.slice(types)
            }
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}
