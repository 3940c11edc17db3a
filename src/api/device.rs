//! Device entry points (OpenCL 3.0 sections 4.2 and 4.3).

use super::info::InfoOut;
use super::platform::{name_versions, names, platform_arg};
use super::{status, write_opt};
use crate::core::device::{
    split_method, Device, Partition, SplitMethod, CL_DEVICE_PARTITION_SM_SPLIT_VKCL,
};
use crate::core::error::{ClError, ClResult};
use crate::core::event::host_ns;
use crate::core::image::images_enabled;
use crate::core::make_version;
use crate::core::object::{self, lookup, ClObject};
use crate::core::platform::Platform;
use crate::core::version;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// `CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE`, bytes: the full profile's minimum (OpenCL 3.0
/// section 4.2), 64 KiB.
const MAX_GLOBAL_VARIABLE_SIZE: usize = 64 * 1024;

const ALL_TYPES: cl_device_type = CL_DEVICE_TYPE_DEFAULT
    | CL_DEVICE_TYPE_CPU
    | CL_DEVICE_TYPE_GPU
    | CL_DEVICE_TYPE_ACCELERATOR
    | CL_DEVICE_TYPE_CUSTOM;

/// The devices of vkcl's platform matching `device_type` (CL_DEVICE_TYPE_DEFAULT: the first).
/// Errors: `CL_INVALID_DEVICE_TYPE` for bits outside the defined types.
pub(crate) fn devices_of_type(device_type: cl_device_type) -> ClResult<Vec<Arc<Device>>> {
    // CL_INVALID_DEVICE_TYPE if device_type is not a valid value
    if device_type != CL_DEVICE_TYPE_ALL && (device_type & !ALL_TYPES != 0 || device_type == 0) {
        return Err(ClError(CL_INVALID_DEVICE_TYPE));
    }
    let all = Platform::get().devices();
    if device_type == CL_DEVICE_TYPE_ALL {
        return Ok(all.to_vec());
    }
    let mut out: Vec<Arc<Device>> = all
        .iter()
        .filter(|d| d.device_type() & device_type != 0)
        .cloned()
        .collect();
    if device_type & CL_DEVICE_TYPE_DEFAULT != 0
        && !all.is_empty()
        && !out.iter().any(|d| Arc::ptr_eq(d, &all[0]))
    {
        out.insert(0, all[0].clone());
    }
    Ok(out)
}

/// clGetDeviceIDs. Errors: `CL_INVALID_PLATFORM`, `CL_INVALID_DEVICE_TYPE`,
/// `CL_INVALID_VALUE` (num_entries 0 with non-NULL devices, or both outputs NULL),
/// `CL_DEVICE_NOT_FOUND`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetDeviceIDs(
    platform: cl_platform_id,
    device_type: cl_device_type,
    num_entries: cl_uint,
    devices: *mut cl_device_id,
    num_devices: *mut cl_uint,
) -> cl_int {
    status(|| {
        platform_arg(platform)?;
        let found = devices_of_type(device_type)?;
        // CL_INVALID_VALUE if num_entries is equal to zero and devices is not NULL
        // or if both num_devices and devices are NULL.
        if (num_entries == 0 && !devices.is_null()) || (devices.is_null() && num_devices.is_null())
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // CL_DEVICE_NOT_FOUND if no OpenCL devices that matched device_type were found.
        if found.is_empty() {
            return Err(ClError(CL_DEVICE_NOT_FOUND));
        }
        if !devices.is_null() {
            for (i, d) in found.iter().take(num_entries as usize).enumerate() {
                // SAFETY: devices holds num_entries entries.
                unsafe { devices.add(i).write(object::handle_of(d) as cl_device_id) };
            }
        }
        // SAFETY: NULL or valid.
        unsafe { write_opt(num_devices, found.len() as cl_uint) };
        Ok(())
    })
}

/// clRetainDevice: counts references of sub-devices; root devices are not reference counted
/// (always succeeds for them, OpenCL 3.0 section 4.3). Errors: `CL_INVALID_DEVICE`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainDevice(device: cl_device_id) -> cl_int {
    status(|| {
        // CL_INVALID_DEVICE if device is not a valid device.
        let d = lookup::<Device>(device as *const c_void)?;
        if d.is_sub_device() {
            object::retain::<Device>(device as *const c_void)?;
        }
        Ok(())
    })
}

/// clReleaseDevice: as [`clRetainDevice`]; a sub-device's handle stops being valid when its
/// count reaches 0 (contexts, queues and programs that use it keep it alive meanwhile).
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseDevice(device: cl_device_id) -> cl_int {
    status(|| {
        // CL_INVALID_DEVICE if device is not a valid device.
        let d = lookup::<Device>(device as *const c_void)?;
        if d.is_sub_device() {
            drop(d);
            object::release_held::<Device>(device as *const c_void)?;
        }
        Ok(())
    })
}

/// Reads a clCreateSubDevices property list: the scheme, vkcl's split method
/// (`CL_DEVICE_PARTITION_SM_SPLIT_VKCL` after the scheme's values; None when absent) and
/// the list as given (terminating 0 included, for `CL_DEVICE_PARTITION_TYPE`).
/// Errors: `CL_INVALID_VALUE` for a NULL list, an unknown scheme, a missing value, a second
/// scheme in the same list, an unknown split method, or a value that cannot be a compute-unit
/// count.
///
/// # Safety
/// `props` must be NULL or a list terminated as the OpenCL API requires.
unsafe fn partition_properties(
    props: *const cl_device_partition_property,
) -> ClResult<(
    Partition,
    Option<SplitMethod>,
    Vec<cl_device_partition_property>,
)> {
    // CL_INVALID_VALUE if values specified in properties are not valid (a NULL list names no scheme).
    if props.is_null() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    // SAFETY: the list is readable up to its terminator; each read below stops at a terminator.
    let at = |i: usize| unsafe { props.add(i).read() };
    let unit_count = |v: cl_device_partition_property| -> ClResult<u32> {
        // CL_INVALID_DEVICE_PARTITION_COUNT if the number of compute units requested for one or
        // more sub-devices is less than zero (values beyond cl_uint cannot be counts either).
        u32::try_from(v).map_err(|_| {
            ClError(if v < 0 {
                CL_INVALID_DEVICE_PARTITION_COUNT
            } else {
                CL_INVALID_VALUE
            })
        })
    };
    let (scheme, end) = match at(0) {
        CL_DEVICE_PARTITION_EQUALLY => {
            // CL_INVALID_VALUE if values specified in properties are not valid (n must be positive).
            let n = u32::try_from(at(1))
                .ok()
                .filter(|&n| n > 0)
                .ok_or(ClError(CL_INVALID_VALUE))?;
            (Partition::Equally(n), 2)
        }
        CL_DEVICE_PARTITION_BY_COUNTS => {
            let mut counts = Vec::new();
            let mut i = 1;
            while at(i) != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END {
                counts.push(unit_count(at(i))?);
                i += 1;
            }
            (Partition::ByCounts(counts), i + 1)
        }
        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN => (
            Partition::ByAffinityDomain(at(1) as cl_device_affinity_domain),
            2,
        ),
        // CL_INVALID_VALUE if values specified in properties are not valid (an unknown scheme).
        _ => return Err(ClError(CL_INVALID_VALUE)),
    };
    let mut end = end;
    let mut method = None;
    // vkcl's own property, once, after the scheme's values.
    if at(end) == CL_DEVICE_PARTITION_SM_SPLIT_VKCL {
        // CL_INVALID_VALUE if values specified in properties are not valid (an unknown method).
        method = Some(split_method(at(end + 1)).ok_or(ClError(CL_INVALID_VALUE))?);
        end += 2;
    }
    // CL_INVALID_VALUE if values specified in properties are not valid: "Only one of the listed
    // partitioning schemes can be specified in properties", so the list ends here.
    if at(end) != 0 {
        return Err(ClError(CL_INVALID_VALUE));
    }
    Ok((scheme, method, (0..=end).map(at).collect()))
}

/// clCreateSubDevices (OpenCL 3.0 section 4.3.1): EQUALLY, BY_COUNTS, and BY_AFFINITY_DOMAIN
/// where the device has domains (none does yet: the spec's `CL_INVALID_VALUE`). With
/// `out_devices` NULL only the count is returned and nothing is created.
/// Errors: `CL_INVALID_DEVICE`, `CL_INVALID_VALUE` (properties not valid or not supported,
/// `num_devices` below the number of sub-devices), `CL_DEVICE_PARTITION_FAILED`,
/// `CL_INVALID_DEVICE_PARTITION_COUNT`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateSubDevices(
    in_device: cl_device_id,
    properties: *const cl_device_partition_property,
    num_devices: cl_uint,
    out_devices: *mut cl_device_id,
    num_devices_ret: *mut cl_uint,
) -> cl_int {
    status(|| {
        // CL_INVALID_DEVICE if in_device is not valid.
        let d = lookup::<Device>(in_device as *const c_void)?;
        // SAFETY: forwarded contract.
        let (scheme, method, list) = unsafe { partition_properties(properties) }?;
        let (count, _) = d.partition(&scheme, method, &list, false)?;
        // CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the number of
        // sub-devices created by the partition scheme.
        if !out_devices.is_null() && (num_devices as usize) < count {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if !out_devices.is_null() {
            let (_, subs) = d.partition(&scheme, method, &list, true)?;
            for (i, s) in subs.iter().enumerate() {
                // SAFETY: out_devices holds num_devices >= count entries.
                unsafe {
                    out_devices
                        .add(i)
                        .write(object::handle_of(s) as cl_device_id)
                };
            }
        }
        // SAFETY: NULL or valid.
        unsafe { write_opt(num_devices_ret, count as cl_uint) };
        Ok(())
    })
}

/// clGetHostTimer: CLOCK_MONOTONIC in ns, the time base of vkcl's profiling values.
/// Errors: `CL_INVALID_DEVICE`, `CL_INVALID_VALUE` for a NULL `host_timestamp`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetHostTimer(
    device: cl_device_id,
    host_timestamp: *mut cl_ulong,
) -> cl_int {
    status(|| {
        lookup::<Device>(device as *const c_void)?;
        if host_timestamp.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        // SAFETY: checked non-NULL.
        unsafe { host_timestamp.write(host_ns()) };
        Ok(())
    })
}

/// clGetDeviceAndHostTimer: vkcl reports device times in the host's time base, so both are
/// the same clock. Errors: `CL_INVALID_DEVICE`, `CL_INVALID_VALUE` for a NULL pointer.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetDeviceAndHostTimer(
    device: cl_device_id,
    device_ts: *mut cl_ulong,
    host_ts: *mut cl_ulong,
) -> cl_int {
    status(|| {
        lookup::<Device>(device as *const c_void)?;
        if device_ts.is_null() || host_ts.is_null() {
            return Err(ClError(CL_INVALID_VALUE));
        }
        let t = host_ns();
        // SAFETY: checked non-NULL.
        unsafe {
            device_ts.write(t);
            host_ts.write(t);
        }
        Ok(())
    })
}

/// clGetDeviceInfo: every OpenCL 3.0 query, answered from the Vulkan driver's facts.
/// Errors: `CL_INVALID_DEVICE`, `CL_INVALID_VALUE` (unknown name, size too small).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetDeviceInfo(
    device: cl_device_id,
    param_name: cl_device_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let d = lookup::<Device>(device as *const c_void)?;
        device_info(&d, param_name, InfoOut::new(size, value, size_ret))
    })
}

fn device_info(d: &Arc<Device>, param: cl_device_info, out: InfoOut) -> ClResult<()> {
    let p = &d.phys;
    let lim = &p.limits;
    let b = |v: bool| if v { CL_TRUE } else { CL_FALSE };
    let compiler = crate::compiler::available();
    let mut extensions = d.extensions();
    extensions.extend(crate::core::image::image_extensions(d));
    match param {
        CL_DEVICE_TYPE => out.scalar(d.device_type()),
        CL_DEVICE_VENDOR_ID => out.scalar(p.vendor_id),
        CL_DEVICE_MAX_COMPUTE_UNITS => out.scalar(d.compute_units),
        CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS => out.scalar(3 as cl_uint),
        CL_DEVICE_MAX_WORK_ITEM_SIZES => out.slice(&d.max_work_item_sizes()),
        CL_DEVICE_MAX_WORK_GROUP_SIZE => out.scalar(d.max_work_group_size()),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR => out.scalar(d.preferred_vector_width(1, false)),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT => out.scalar(d.preferred_vector_width(2, false)),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT => out.scalar(d.preferred_vector_width(4, false)),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG => out.scalar(d.preferred_vector_width(8, false)),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF => out.scalar(d.preferred_vector_width(2, true)),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT => out.scalar(d.preferred_vector_width(4, true)),
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE => out.scalar(d.preferred_vector_width(8, true)),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR => out.scalar(d.native_vector_width(1, false)),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT => out.scalar(d.native_vector_width(2, false)),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_INT => out.scalar(d.native_vector_width(4, false)),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG => out.scalar(d.native_vector_width(8, false)),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF => out.scalar(d.native_vector_width(2, true)),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT => out.scalar(d.native_vector_width(4, true)),
        CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE => out.scalar(d.native_vector_width(8, true)),
        CL_DEVICE_MAX_CLOCK_FREQUENCY => out.scalar(d.max_clock_mhz()),
        CL_DEVICE_ADDRESS_BITS => out.scalar(64 as cl_uint),
        CL_DEVICE_MAX_MEM_ALLOC_SIZE => out.scalar(d.max_mem_alloc_size()),
        CL_DEVICE_IMAGE_SUPPORT => out.scalar(if images_enabled() { CL_TRUE } else { CL_FALSE }),
        CL_DEVICE_MAX_READ_IMAGE_ARGS
        | CL_DEVICE_MAX_WRITE_IMAGE_ARGS
        | CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS
        | CL_DEVICE_MAX_SAMPLERS
        | CL_DEVICE_IMAGE_PITCH_ALIGNMENT
        | CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT
            if images_enabled() =>
        {
            out.scalar(image_uint(d, param))
        }
        CL_DEVICE_IMAGE2D_MAX_WIDTH
        | CL_DEVICE_IMAGE2D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_WIDTH
        | CL_DEVICE_IMAGE3D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_DEPTH
        | CL_DEVICE_IMAGE_MAX_BUFFER_SIZE
        | CL_DEVICE_IMAGE_MAX_ARRAY_SIZE
            if images_enabled() =>
        {
            out.scalar(image_size(d, param))
        }
        CL_DEVICE_MAX_READ_IMAGE_ARGS
        | CL_DEVICE_MAX_WRITE_IMAGE_ARGS
        | CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS
        | CL_DEVICE_MAX_SAMPLERS
        | CL_DEVICE_IMAGE_PITCH_ALIGNMENT
        | CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT
        | CL_DEVICE_MAX_PIPE_ARGS
        | CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS
        | CL_DEVICE_PIPE_MAX_PACKET_SIZE
        | CL_DEVICE_MAX_ON_DEVICE_QUEUES
        | CL_DEVICE_MAX_ON_DEVICE_EVENTS
        | CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE
        | CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE
        | CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT
        | CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT => out.scalar(0 as cl_uint),
        CL_DEVICE_MAX_NUM_SUB_GROUPS => out.scalar(d.max_num_sub_groups() as cl_uint),
        CL_DEVICE_IMAGE2D_MAX_WIDTH
        | CL_DEVICE_IMAGE2D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_WIDTH
        | CL_DEVICE_IMAGE3D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_DEPTH
        | CL_DEVICE_IMAGE_MAX_BUFFER_SIZE
        | CL_DEVICE_IMAGE_MAX_ARRAY_SIZE => out.scalar(0usize),
        // Program-scope __global variables live in one buffer per program (compiler::globals).
        CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE => out.scalar(MAX_GLOBAL_VARIABLE_SIZE),
        CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE => out.scalar(16 * MAX_GLOBAL_VARIABLE_SIZE),
        CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES => out.scalar(0 as cl_command_queue_properties),
        CL_DEVICE_MAX_PARAMETER_SIZE => out.scalar(1024usize),
        CL_DEVICE_MEM_BASE_ADDR_ALIGN => {
            out.scalar((crate::core::memory::BUFFER_ALIGNMENT * 8) as cl_uint)
        }
        CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE => out.scalar(128 as cl_uint),
        CL_DEVICE_SINGLE_FP_CONFIG => {
            out.scalar((CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN | CL_FP_FMA) as cl_device_fp_config)
        }
        CL_DEVICE_DOUBLE_FP_CONFIG => out.scalar(d.double_fp_config()),
        CL_DEVICE_HALF_FP_CONFIG => out.scalar(d.half_fp_config()),
        // cl_khr_integer_dot_product: both input forms, written in OpenCL C (the prelude), so
        // none is accelerated.
        CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR => out.scalar(
            (CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR
                | CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR)
                as cl_device_integer_dot_product_capabilities_khr,
        ),
        #[allow(non_upper_case_globals)] // the header's spelling ("4x8BIT")
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR
        | CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR => {
            // cl_device_integer_dot_product_acceleration_properties_khr: six cl_bool, all
            // CL_FALSE.
            out.slice(&[CL_FALSE; 6])
        }
        CL_DEVICE_GLOBAL_MEM_CACHE_TYPE => out.scalar(d.global_mem_cache().0),
        CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE => out.scalar(d.global_mem_cache().1 as cl_uint),
        CL_DEVICE_GLOBAL_MEM_CACHE_SIZE => out.scalar(d.global_mem_cache().2 as cl_ulong),
        CL_DEVICE_GLOBAL_MEM_SIZE => out.scalar(d.global_mem_size()),
        CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE => out.scalar(65536 as cl_ulong),
        CL_DEVICE_MAX_CONSTANT_ARGS => out.scalar(8 as cl_uint),
        CL_DEVICE_LOCAL_MEM_TYPE => out.scalar(CL_LOCAL as cl_device_local_mem_type),
        CL_DEVICE_LOCAL_MEM_SIZE => out.scalar(d.local_mem_size()),
        CL_DEVICE_ERROR_CORRECTION_SUPPORT => out.scalar(CL_FALSE),
        CL_DEVICE_HOST_UNIFIED_MEMORY => out.scalar(b(p.unified_memory)),
        CL_DEVICE_PROFILING_TIMER_RESOLUTION => out.scalar(d.timer_resolution_ns()),
        CL_DEVICE_ENDIAN_LITTLE => out.scalar(CL_TRUE),
        // CL_FALSE once the device is lost (a GPU fault): its commands fail.
        CL_DEVICE_AVAILABLE => out.scalar(if d.is_lost() { CL_FALSE } else { CL_TRUE }),
        CL_DEVICE_COMPILER_AVAILABLE | CL_DEVICE_LINKER_AVAILABLE => out.scalar(b(compiler)),
        CL_DEVICE_EXECUTION_CAPABILITIES => {
            out.scalar(CL_EXEC_KERNEL as cl_device_exec_capabilities)
        }
        CL_DEVICE_QUEUE_ON_HOST_PROPERTIES => out.scalar(
            (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE)
                as cl_command_queue_properties,
        ),
        CL_DEVICE_BUILT_IN_KERNELS => out.string(""),
        CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION => out.slice::<cl_name_version>(&[]),
        CL_DEVICE_PLATFORM => out.scalar(object::handle_of(Platform::get()) as cl_platform_id),
        CL_DEVICE_NAME => out.string(&p.name),
        CL_DEVICE_VENDOR => out.string(&d.vendor()),
        CL_DRIVER_VERSION => out.string(&format!(
            "{} (Vulkan {}, {} {})",
            env!("CARGO_PKG_VERSION"),
            p.api_version_text(),
            p.driver_name,
            p.driver_info
        )),
        CL_DEVICE_PROFILE => out.string("FULL_PROFILE"),
        // OpenCL 3.1 where every 3.1 requirement holds on the device, else 3.0
        // (core::version, docs/opencl31.md). OpenCL 3.1's core names of the promoted
        // extensions' queries have the KHR values answered below (CL/cl.h of
        // KhronosGroup/OpenCL-Headers a1b9cce: CL_DEVICE_UUID 0x106A = CL_DEVICE_UUID_KHR ...
        // CL_DEVICE_SPIRV_CAPABILITIES 0x12BB, CL_DEVICE_INTEGER_DOT_PRODUCT_* 0x1073-0x1075),
        // as does CL_DEVICE_MAX_WORK_GROUP_SIZES (0x1005, CL_DEVICE_MAX_WORK_ITEM_SIZES).
        CL_DEVICE_VERSION => out.string(&version::version_text(version::device_version(d))),
        CL_DEVICE_NUMERIC_VERSION => out.scalar(version::numeric(version::device_version(d))),
        // The highest OpenCL C 1.x (OpenCL 3.x allows it; 3.0 and 3.1 are in ALL_VERSIONS).
        CL_DEVICE_OPENCL_C_VERSION => out.string("OpenCL C 1.2 vkcl"),
        CL_DEVICE_OPENCL_C_ALL_VERSIONS => {
            out.slice(&name_versions(&version::opencl_c_versions(d)))
        }
        CL_DEVICE_OPENCL_C_FEATURES => {
            let mut f = d.opencl_c_features();
            f.extend(crate::core::image::image_features(d));
            out.slice(&name_versions(&f))
        }
        CL_DEVICE_EXTENSIONS => out.string(&names(&extensions)),
        CL_DEVICE_EXTENSIONS_WITH_VERSION => out.slice(&name_versions(&extensions)),
        CL_DEVICE_PRINTF_BUFFER_SIZE => {
            out.scalar(crate::core::printf::PRINTF_BUFFER_SIZE as usize)
        }
        CL_DEVICE_PREFERRED_INTEROP_USER_SYNC => out.scalar(CL_TRUE),
        // Partitioning (section 4.3): a sub-device can be split again down to one compute unit.
        CL_DEVICE_PARENT_DEVICE => out.scalar(
            d.parent
                .as_ref()
                .map_or(std::ptr::null_mut(), |p| p.header().handle()) as cl_device_id,
        ),
        CL_DEVICE_PARTITION_MAX_SUB_DEVICES => out.scalar(d.compute_units),
        CL_DEVICE_PARTITION_PROPERTIES => out.slice(&d.partition_properties()),
        CL_DEVICE_PARTITION_AFFINITY_DOMAIN => out.scalar(d.affinity_domains()),
        CL_DEVICE_PARTITION_TYPE => out.slice(&d.partition_type),
        CL_DEVICE_REFERENCE_COUNT => out.scalar(if d.is_sub_device() {
            d.header().ref_count()
        } else {
            1
        }),
        CL_DEVICE_SVM_CAPABILITIES => out.scalar(0 as cl_device_svm_capabilities),
        // llvm-spirv-15 reads SPIR-V up to 1.4; the IL path needs the same tools as source.
        CL_DEVICE_IL_VERSION => out.string(if compiler {
            "SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2 SPIR-V_1.3 SPIR-V_1.4"
        } else {
            ""
        }),
        // cl_khr_spirv_queries: what the IL path accepts (compiler/spirv_queries.rs); the
        // strings are static, as the extension requires.
        CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR
        | CL_DEVICE_SPIRV_EXTENSIONS_KHR
        | CL_DEVICE_SPIRV_CAPABILITIES_KHR => {
            let mut features = d.opencl_c_features();
            features.extend(crate::core::image::image_features(d));
            let names: Vec<&str> = extensions
                .iter()
                .chain(features.iter())
                .map(|(n, _)| *n)
                .collect();
            let q = crate::compiler::spirv_queries(&names, compiler);
            let ptrs = |v: &[&'static std::ffi::CStr]| -> Vec<*const std::ffi::c_char> {
                v.iter().map(|s| s.as_ptr()).collect()
            };
            match param {
                CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR => {
                    out.slice(&ptrs(&q.extended_instruction_sets))
                }
                CL_DEVICE_SPIRV_EXTENSIONS_KHR => out.slice(&ptrs(&q.extensions)),
                _ => out.slice(&q.capabilities),
            }
        }
        CL_DEVICE_ILS_WITH_VERSION => out.slice(&if compiler {
            name_versions(
                &(0..=4)
                    .map(|m| ("SPIR-V", make_version(1, m, 0)))
                    .collect::<Vec<_>>(),
            )
        } else {
            Vec::new()
        }),
        // Non-uniform work-groups: the edge groups run as their own dispatches (core::kernel).
        CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT => out.scalar(CL_TRUE),
        CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT => {
            out.scalar(b(d.work_group_collective_functions()))
        }
        CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS
        | CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT
        | CL_DEVICE_PIPE_SUPPORT => out.scalar(CL_FALSE),
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES => {
            out.scalar(d.atomic_memory_capabilities() as cl_device_atomic_capabilities)
        }
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES => {
            out.scalar(d.atomic_fence_capabilities() as cl_device_atomic_capabilities)
        }
        CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES => {
            out.scalar(0 as cl_device_device_enqueue_capabilities)
        }
        CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => out.scalar(p.subgroup_size.max(1) as usize),
        // cl_khr_device_uuid: Vulkan's own device and driver UUIDs (the same values Vulkan
        // applications see, so interop can match devices).
        CL_DEVICE_UUID_KHR => out.slice(&p.device_uuid),
        CL_DRIVER_UUID_KHR => out.slice(&p.driver_uuid),
        CL_DEVICE_LUID_VALID_KHR => out.scalar(CL_FALSE),
        CL_DEVICE_LUID_KHR => out.slice(&[0u8; 8]),
        CL_DEVICE_NODE_MASK_KHR => out.scalar(0 as cl_uint),
        // cl_khr_external_memory 1.0.1: opaque fds where the Vulkan device imports them; no
        // images (vkcl claims none by default).
        CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR if d.imports_opaque_fd() => {
            out.slice(&super::memory::import_types(d))
        }
        CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
            if d.imports_opaque_fd() =>
        {
            out.slice::<cl_external_memory_handle_type_khr>(&[])
        }
        // cl_khr_semaphore 1.0.0: binary semaphores.
        CL_DEVICE_SEMAPHORE_TYPES_KHR => out.slice(&super::semaphore::TYPES),
        // cl_khr_command_buffer 1.0.0.
        CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR => {
            out.scalar(super::command_buffer::capabilities())
        }
        // cl_khr_command_buffer_multi_device 0.9.2: the root device (standing for itself and
        // its sub-devices).
        CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR if super::command_buffer_multi::enabled() => {
            out.scalar(super::command_buffer_multi::sync_devices(d).len() as cl_uint)
        }
        CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR if super::command_buffer_multi::enabled() => {
            out.slice(&super::command_buffer_multi::sync_devices(d))
        }
        CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR => {
            out.scalar(super::command_buffer::REQUIRED_QUEUE_PROPERTIES)
        }
        CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR => {
            out.scalar(super::command_buffer::SUPPORTED_QUEUE_PROPERTIES)
        }
        // cl_khr_command_buffer_mutable_dispatch 0.9.5.
        CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR if super::mutable_dispatch::enabled() => {
            out.scalar(super::mutable_dispatch::CAPABILITIES)
        }
        // "The latest version of the conformance test suite that this device has fully passed
        // in accordance with the official conformance process" (OpenCL 3.0 table 4.3): vkcl
        // has passed none (it runs the CTS, docs/cts-conform.md, but has not fully passed it
        // or submitted), so the earliest date the CTS's vYYYY-MM-DD-XX format allows, which
        // no application can mistake for a real CTS release. Naming the CTS commit the
        // expectations were run with would claim a pass that did not happen.
        CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED => out.string("v0000-01-01-00"),
        _ => {
            let _ = lim;
            Err(ClError(CL_INVALID_VALUE))
        }
    }
}

/// The `cl_uint` image limits of `d` (`VKCL_IMAGES=1`), from its Vulkan limits: read images
/// are sampled images, write and read-write images storage images, samplers Vulkan samplers
/// (per-stage descriptor limits); the pitch and base address alignments of 2D images from
/// buffers are 0, as OpenCL 3.0 requires of devices without them (docs/images.md).
fn image_uint(d: &Device, param: cl_device_info) -> cl_uint {
    let l = crate::core::image::limits(d);
    match param {
        CL_DEVICE_MAX_READ_IMAGE_ARGS => l.sampled_images,
        CL_DEVICE_MAX_WRITE_IMAGE_ARGS | CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS => l.storage_images,
        // OpenCL 3.0: 0 for devices without 2D images created from buffers, which vkcl
        // refuses (docs/images.md, "Images sharing buffer memory").
        CL_DEVICE_IMAGE_PITCH_ALIGNMENT | CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT => 0,
        _ => l.samplers,
    }
}

/// The `size_t` image limits of `d` (`VKCL_IMAGES=1`): Vulkan's maximum image dimensions,
/// array layers and texel-buffer elements.
fn image_size(d: &Device, param: cl_device_info) -> usize {
    let l = crate::core::image::limits(d);
    (match param {
        CL_DEVICE_IMAGE2D_MAX_WIDTH | CL_DEVICE_IMAGE2D_MAX_HEIGHT => l.max_2d,
        CL_DEVICE_IMAGE3D_MAX_WIDTH
        | CL_DEVICE_IMAGE3D_MAX_HEIGHT
        | CL_DEVICE_IMAGE3D_MAX_DEPTH => l.max_3d,
        CL_DEVICE_IMAGE_MAX_BUFFER_SIZE => l.max_texel_buffer,
        _ => l.max_layers,
    }) as usize
}
