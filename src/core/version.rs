//! The OpenCL version each device and the platform report: OpenCL 3.1 where every 3.1
//! requirement holds on the device, else 3.0 (docs/opencl31.md has the list and why).
//!
//! OpenCL 3.1 API specification: section 3.7 ("An OpenCL 3.1 device must support all the
//! requirements of an OpenCL 3.0 device in addition to the OpenCL C 3.1 programming language
//! and the SPIR-V 1.0 ... 1.4 intermediate languages"), table "Device queries"
//! (`CL_DEVICE_MAX_NUM_SUB_GROUPS`: "Support for sub-groups is required for an ... OpenCL 3.1
//! device"; `CL_DEVICE_IL_VERSION`; `CL_DEVICE_OPENCL_C_ALL_VERSIONS`: "at least OpenCL C 3.1,
//! OpenCL C 3.0, OpenCL C 1.2, OpenCL C 1.1, and OpenCL C 1.0") and section 4.2's list of
//! extension names "returned by all devices that support OpenCL 3.1 or newer"
//! ([`REQUIRED_31_EXTENSIONS`]).

use super::device::Device;
use super::make_version;
use super::platform::Platform;

/// The extension names every OpenCL 3.1 device must report (OpenCL 3.1 API section 4.2,
/// "Platform and device extensions"; the CTS's `get_device_info_31` checks the same list).
pub const REQUIRED_31_EXTENSIONS: [&str; 9] = [
    "cl_khr_device_uuid",
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "cl_khr_spirv_queries",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_rotate",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_suggested_local_work_size",
];

/// What keeps `d` from OpenCL 3.1, in words (empty: the device reports 3.1). Each entry names
/// the requirement: the compiler tools (OpenCL C 3.1 and SPIR-V 1.0 to 1.4 both need clang-15
/// and llvm-spirv-15), sub-groups (`__opencl_c_subgroups`, `CL_DEVICE_MAX_NUM_SUB_GROUPS` at
/// least 1), a required extension, or `VKCL_OPENCL_VERSION=3.0`.
pub fn missing_31(d: &Device) -> Vec<String> {
    let mut missing = Vec::new();
    if crate::util::config::config().opencl_30 {
        missing.push("VKCL_OPENCL_VERSION=3.0".to_string());
    }
    if !crate::compiler::available() {
        missing.push("the compiler tools (OpenCL C 3.1, SPIR-V 1.0 to 1.4)".to_string());
    }
    if d.max_num_sub_groups() == 0 {
        missing.push("sub-groups (__opencl_c_subgroups)".to_string());
    }
    let extensions = d.extensions();
    for name in REQUIRED_31_EXTENSIONS {
        if !extensions.iter().any(|(n, _)| *n == name) {
            missing.push(name.to_string());
        }
    }
    missing
}

/// The device's OpenCL version as (major, minor): (3, 1) where [`missing_31`] is empty,
/// else (3, 0).
pub fn device_version(d: &Device) -> (u32, u32) {
    if missing_31(d).is_empty() {
        (3, 1)
    } else {
        (3, 0)
    }
}

/// The platform's OpenCL version: the highest of its devices' (3.0 without devices). The
/// platform's own behaviour is 3.1's either way (`clSetKernelArg` takes a zero-sized
/// `__local` argument when this is 3.1, as OpenCL 3.1 ties that to the platform's version).
pub fn platform_version() -> (u32, u32) {
    Platform::get()
        .devices()
        .iter()
        .map(|d| device_version(d))
        .max()
        .unwrap_or((3, 0))
}

/// `CL_DEVICE_VERSION` / `CL_PLATFORM_VERSION` text: "OpenCL 3.1 vkcl 0.1.0" (the format of
/// OpenCL 3.1 API section 4.1: "OpenCL<space><major.minor><space><specific information>").
pub fn version_text((major, minor): (u32, u32)) -> String {
    format!("OpenCL {major}.{minor} vkcl {}", env!("CARGO_PKG_VERSION"))
}

/// `CL_DEVICE_NUMERIC_VERSION` / `CL_PLATFORM_NUMERIC_VERSION` of a (major, minor) version.
pub fn numeric((major, minor): (u32, u32)) -> u32 {
    make_version(major, minor, 0)
}

/// `CL_DEVICE_OPENCL_C_ALL_VERSIONS` (as name, version pairs): OpenCL C 1.0, 1.1, 1.2 and 3.0,
/// and 3.1 on an OpenCL 3.1 device. OpenCL C 3.1 is clang-15's OpenCL C 3.0 with 3.1's
/// predefined macros and the promoted extensions' built-ins, which every 3.1 device reports
/// (compiler/options.rs).
pub fn opencl_c_versions(d: &Device) -> Vec<(&'static str, u32)> {
    let mut v = vec![
        ("OpenCL C", make_version(1, 0, 0)),
        ("OpenCL C", make_version(1, 1, 0)),
        ("OpenCL C", make_version(1, 2, 0)),
        ("OpenCL C", make_version(3, 0, 0)),
    ];
    if device_version(d) >= (3, 1) {
        v.push(("OpenCL C", make_version(3, 1, 0)));
    }
    v
}
