//! `cl_khr_spirv_queries`: the three queries' sizes and errors, the lists against what the
//! device's own extensions and features require (the OpenCL SPIR-V environment's table, as
//! the Khronos CTS's `spirv_query_requirements` reads it), every listed capability's SPIR-V
//! extension listed too, and nothing listed that the device does not have.
mod common;
use common::*;
use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;

const SETS: cl_device_info = 0x12B9;
const EXTS: cl_device_info = 0x12BA;
const CAPS: cl_device_info = 0x12BB;

fn raw(d: cl_device_id, q: cl_device_info) -> Vec<u8> {
    let mut size = 0usize;
    ok(unsafe { cl!(clGetDeviceInfo)(d, q, 0, null_mut(), &mut size) });
    let mut v = vec![0u8; size];
    ok(unsafe { cl!(clGetDeviceInfo)(d, q, size, v.as_mut_ptr() as *mut c_void, null_mut()) });
    if size > 0 {
        // One byte short of the answer: CL_INVALID_VALUE.
        let r = unsafe {
            cl!(clGetDeviceInfo)(d, q, size - 1, v.as_mut_ptr() as *mut c_void, null_mut())
        };
        assert_eq!(r, CL_INVALID_VALUE);
    }
    v
}

fn strings(d: cl_device_id, q: cl_device_info) -> Vec<String> {
    let v = raw(d, q);
    assert_eq!(v.len() % std::mem::size_of::<*const c_char>(), 0);
    v.chunks(std::mem::size_of::<*const c_char>())
        .map(|c| {
            let p = usize::from_ne_bytes(c.try_into().unwrap()) as *const c_char;
            assert!(!p.is_null());
            // SAFETY: the extension returns pointers to static strings.
            unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
        })
        .collect()
}

fn device_string(d: cl_device_id, q: cl_device_info) -> String {
    let v = raw(d, q);
    String::from_utf8_lossy(&v)
        .trim_end_matches('\0')
        .to_string()
}

#[test]
fn spirv_queries_follow_the_device() {
    let e = Env::new();
    let d = e.device;
    let extensions = device_string(d, CL_DEVICE_EXTENSIONS);
    assert!(extensions.split(' ').any(|x| x == "cl_khr_spirv_queries"));
    let has = |x: &str| extensions.split(' ').any(|y| y == x);
    let sets = strings(d, SETS);
    let exts = strings(d, EXTS);
    let caps: Vec<u32> = raw(d, CAPS)
        .chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    let il = device_string(d, CL_DEVICE_IL_VERSION);
    if !il.contains("SPIR-V") {
        assert!(sets.is_empty() && exts.is_empty() && caps.is_empty());
        return;
    }
    assert_eq!(sets, vec!["OpenCL.std".to_string()]);
    // SPIR-V capability numbers (the SPIR-V specification's table).
    let (addresses, linkage, kernel, vector16, float16_buffer, float16, float64, int64) =
        (4, 5, 6, 7, 8, 9, 10, 11);
    let (int64_atomics, groups, int16, int8, generic, pipes, image_basic) =
        (12, 18, 22, 39, 38, 17, 13);
    let mut want = vec![
        addresses,
        linkage,
        kernel,
        vector16,
        float16_buffer,
        int16,
        int8,
        int64,
    ];
    let mut want_ext: Vec<&str> = Vec::new();
    let sub_groups: cl_uint = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_MAX_NUM_SUB_GROUPS, s, v, r)
    });
    let collectives: cl_bool = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
            s,
            v,
            r,
        )
    });
    if sub_groups != 0 || collectives == CL_TRUE {
        want.push(groups);
    }
    if sub_groups != 0 {
        want.push(58); // SubgroupDispatch (SPIR-V 1.1 with sub-groups)
    }
    for (ext, spv, more) in [
        ("cl_khr_fp16", None, vec![float16]),
        ("cl_khr_fp64", None, vec![float64]),
        ("cl_khr_int64_base_atomics", None, vec![int64_atomics]),
        (
            "cl_khr_expect_assume",
            Some("SPV_KHR_expect_assume"),
            vec![5629],
        ),
        (
            "cl_khr_extended_bit_ops",
            Some("SPV_KHR_bit_instructions"),
            vec![6025],
        ),
        (
            "cl_khr_integer_dot_product",
            Some("SPV_KHR_integer_dot_product"),
            vec![6019, 6018, 6017],
        ),
        (
            "cl_khr_spirv_linkonce_odr",
            Some("SPV_KHR_linkonce_odr"),
            vec![],
        ),
        (
            "cl_khr_spirv_no_integer_wrap_decoration",
            Some("SPV_KHR_no_integer_wrap_decoration"),
            vec![],
        ),
        ("cl_khr_subgroup_ballot", None, vec![64]),
        ("cl_khr_subgroup_clustered_reduce", None, vec![67]),
        ("cl_khr_subgroup_non_uniform_arithmetic", None, vec![63]),
        ("cl_khr_subgroup_non_uniform_vote", None, vec![61, 62]),
        (
            "cl_khr_subgroup_rotate",
            Some("SPV_KHR_subgroup_rotate"),
            vec![6026],
        ),
        ("cl_khr_subgroup_shuffle", None, vec![65]),
        ("cl_khr_subgroup_shuffle_relative", None, vec![66]),
    ] {
        if has(ext) {
            want.extend(more);
            want_ext.extend(spv);
        }
    }
    for c in &want {
        assert!(caps.contains(c), "capability {c} missing from {caps:?}");
    }
    for x in &want_ext {
        assert!(exts.iter().any(|e| e == x), "{x} missing from {exts:?}");
    }
    // Nothing the device lacks: no images, pipes or generic pointers (vkcl has none).
    for c in [generic, pipes, image_basic] {
        assert!(!caps.contains(&c), "capability {c} listed");
    }
    // Every listed extension-only capability has its extension listed (SPIR-V 1.4 at most:
    // DotProduct and the others became core only in 1.6).
    for (c, x) in [
        (5629, "SPV_KHR_expect_assume"),
        (6025, "SPV_KHR_bit_instructions"),
        (6019, "SPV_KHR_integer_dot_product"),
        (6026, "SPV_KHR_subgroup_rotate"),
    ] {
        if caps.contains(&c) {
            assert!(exts.iter().any(|e| e == x), "capability {c} without {x}");
        }
    }
    let mut unique = caps.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), caps.len(), "duplicates in {caps:?}");
}
