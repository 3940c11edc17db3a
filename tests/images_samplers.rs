//! Sampler objects under `VKCL_IMAGES=1` (OpenCL 3.0 section 5.8, docs/images.md):
//! clCreateSampler and clCreateSamplerWithProperties in every mode, clGetSamplerInfo,
//! retain/release, and the spec's error codes.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const MODES: [cl_addressing_mode; 5] = [
    CL_ADDRESS_NONE,
    CL_ADDRESS_CLAMP_TO_EDGE,
    CL_ADDRESS_CLAMP,
    CL_ADDRESS_REPEAT,
    CL_ADDRESS_MIRRORED_REPEAT,
];
const FILTERS: [cl_filter_mode; 2] = [CL_FILTER_NEAREST, CL_FILTER_LINEAR];

fn info<T: Copy + Default>(s: cl_sampler, name: cl_sampler_info) -> T {
    info_scalar(|sz, v, r| unsafe { cl!(clGetSamplerInfo)(s, name, sz, v, r) })
}

/// The sampler's modes as clGetSamplerInfo reports them.
fn modes(s: cl_sampler) -> (cl_bool, cl_addressing_mode, cl_filter_mode) {
    (
        info(s, CL_SAMPLER_NORMALIZED_COORDS),
        info(s, CL_SAMPLER_ADDRESSING_MODE),
        info(s, CL_SAMPLER_FILTER_MODE),
    )
}

/// The bytes of CL_SAMPLER_PROPERTIES.
fn props_of(s: cl_sampler) -> Vec<cl_sampler_properties> {
    let mut n = 0usize;
    ok(unsafe { cl!(clGetSamplerInfo)(s, CL_SAMPLER_PROPERTIES, 0, null_mut(), &mut n) });
    let mut v = vec![0 as cl_sampler_properties; n / 8];
    if n > 0 {
        ok(unsafe {
            cl!(clGetSamplerInfo)(
                s,
                CL_SAMPLER_PROPERTIES,
                n,
                v.as_mut_ptr() as *mut c_void,
                null_mut(),
            )
        });
    }
    v
}

#[test]
fn create_sampler_in_every_mode() {
    let env = images::env();
    for norm in [CL_TRUE, CL_FALSE] {
        for a in MODES {
            for f in FILTERS {
                let mut err = 1;
                let s = unsafe { cl!(clCreateSampler)(env.context, norm, a, f, &mut err) };
                ok(err);
                assert!(!s.is_null());
                assert_eq!(modes(s), (norm, a, f));
                let c: cl_context = info(s, CL_SAMPLER_CONTEXT);
                assert_eq!(c, env.context);
                assert_eq!(info::<cl_uint>(s, CL_SAMPLER_REFERENCE_COUNT), 1);
                assert!(props_of(s).is_empty(), "clCreateSampler: no properties");
                ok(unsafe { cl!(clReleaseSampler)(s) });
            }
        }
    }
}

#[test]
fn create_sampler_with_properties() {
    let env = images::env();
    for norm in [CL_TRUE, CL_FALSE] {
        for a in MODES {
            for f in FILTERS {
                let p: [cl_sampler_properties; 7] = [
                    CL_SAMPLER_FILTER_MODE as _,
                    f as _,
                    CL_SAMPLER_NORMALIZED_COORDS as _,
                    norm as _,
                    CL_SAMPLER_ADDRESSING_MODE as _,
                    a as _,
                    0,
                ];
                let mut err = 1;
                let s = unsafe {
                    cl!(clCreateSamplerWithProperties)(env.context, p.as_ptr(), &mut err)
                };
                ok(err);
                assert_eq!(modes(s), (norm, a, f));
                assert_eq!(props_of(s), p.to_vec(), "the list as given, in order");
                ok(unsafe { cl!(clReleaseSampler)(s) });
            }
        }
    }
    // Defaults: normalized, CLAMP, NEAREST; a NULL list reports no properties, an empty
    // list reports its terminator.
    let mut err = 1;
    let s = unsafe { cl!(clCreateSamplerWithProperties)(env.context, null(), &mut err) };
    ok(err);
    assert_eq!(modes(s), (CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST));
    assert!(props_of(s).is_empty());
    ok(unsafe { cl!(clReleaseSampler)(s) });
    let empty: [cl_sampler_properties; 1] = [0];
    let s = unsafe { cl!(clCreateSamplerWithProperties)(env.context, empty.as_ptr(), &mut err) };
    ok(err);
    assert_eq!(modes(s), (CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST));
    assert_eq!(props_of(s), vec![0]);
    ok(unsafe { cl!(clReleaseSampler)(s) });
    let one: [cl_sampler_properties; 3] = [CL_SAMPLER_FILTER_MODE as _, CL_FILTER_LINEAR as _, 0];
    let s = unsafe { cl!(clCreateSamplerWithProperties)(env.context, one.as_ptr(), &mut err) };
    ok(err);
    assert_eq!(modes(s), (CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_LINEAR));
    ok(unsafe { cl!(clReleaseSampler)(s) });
}

#[test]
fn sampler_errors() {
    let env = images::env();
    let mut err = 0;
    let create = |n: cl_bool, a: cl_addressing_mode, f: cl_filter_mode, err: &mut cl_int| {
        let s = unsafe { cl!(clCreateSampler)(env.context, n, a, f, err) };
        assert!(s.is_null());
    };
    create(2, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &mut err);
    assert_eq!(err, CL_INVALID_VALUE, "normalized_coords 2");
    create(CL_TRUE, 0x1135, CL_FILTER_NEAREST, &mut err);
    assert_eq!(err, CL_INVALID_VALUE, "addressing mode");
    create(CL_TRUE, CL_ADDRESS_CLAMP, 0x1142, &mut err);
    assert_eq!(err, CL_INVALID_VALUE, "filter mode");
    let s = unsafe {
        cl!(clCreateSampler)(
            null_mut(),
            CL_TRUE,
            CL_ADDRESS_CLAMP,
            CL_FILTER_NEAREST,
            &mut err,
        )
    };
    assert!(s.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    // The same with properties: unknown names (the mipmap ones need cl_khr_mipmap_image),
    // invalid values, a name twice.
    let cases: [&[cl_sampler_properties]; 7] = [
        &[0x1234, 1, 0],
        &[
            CL_SAMPLER_MIP_FILTER_MODE_KHR as _,
            CL_FILTER_NEAREST as _,
            0,
        ],
        &[CL_SAMPLER_LOD_MIN_KHR as _, 0, 0],
        &[CL_SAMPLER_NORMALIZED_COORDS as _, 5, 0],
        &[CL_SAMPLER_ADDRESSING_MODE as _, 0x1100, 0],
        &[CL_SAMPLER_FILTER_MODE as _, 0x1ffff_1140, 0],
        &[
            CL_SAMPLER_FILTER_MODE as _,
            CL_FILTER_LINEAR as _,
            CL_SAMPLER_FILTER_MODE as _,
            CL_FILTER_LINEAR as _,
            0,
        ],
    ];
    for (i, p) in cases.iter().enumerate() {
        let s = unsafe { cl!(clCreateSamplerWithProperties)(env.context, p.as_ptr(), &mut err) };
        assert!(s.is_null());
        assert_eq!(err, CL_INVALID_VALUE, "properties case {i}");
    }
    let s = unsafe { cl!(clCreateSamplerWithProperties)(null_mut(), null(), &mut err) };
    assert!(s.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    // Handles that are not samplers.
    let buf = env.buffer(CL_MEM_READ_WRITE, 16, None);
    for h in [null_mut(), buf as cl_sampler, env.context as cl_sampler] {
        assert_eq!(unsafe { cl!(clRetainSampler)(h) }, CL_INVALID_SAMPLER);
        assert_eq!(unsafe { cl!(clReleaseSampler)(h) }, CL_INVALID_SAMPLER);
        let mut v: cl_uint = 0;
        let r = unsafe {
            cl!(clGetSamplerInfo)(
                h,
                CL_SAMPLER_REFERENCE_COUNT,
                4,
                &mut v as *mut cl_uint as *mut c_void,
                null_mut(),
            )
        };
        assert_eq!(r, CL_INVALID_SAMPLER);
    }
    ok(unsafe { cl!(clReleaseMemObject)(buf) });
    // Unknown info names and a value too small.
    let s = unsafe {
        cl!(clCreateSampler)(
            env.context,
            CL_TRUE,
            CL_ADDRESS_REPEAT,
            CL_FILTER_LINEAR,
            &mut err,
        )
    };
    ok(err);
    let mut v = [0u8; 16];
    for name in [
        0x1150 - 1,
        CL_SAMPLER_MIP_FILTER_MODE_KHR as cl_sampler_info,
        CL_SAMPLER_LOD_MAX_KHR as cl_sampler_info,
    ] {
        let r = unsafe {
            cl!(clGetSamplerInfo)(s, name, 16, v.as_mut_ptr() as *mut c_void, null_mut())
        };
        assert_eq!(r, CL_INVALID_VALUE, "info name {name:#x}");
    }
    let r = unsafe {
        cl!(clGetSamplerInfo)(
            s,
            CL_SAMPLER_ADDRESSING_MODE,
            2,
            v.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "value too small");
    ok(unsafe { cl!(clReleaseSampler)(s) });
    // Released: the handle is no longer valid.
    assert_eq!(unsafe { cl!(clRetainSampler)(s) }, CL_INVALID_SAMPLER);
}

#[test]
fn retain_and_release() {
    let env = images::env();
    let mut err = 0;
    let s = unsafe {
        cl!(clCreateSampler)(
            env.context,
            CL_FALSE,
            CL_ADDRESS_NONE,
            CL_FILTER_NEAREST,
            &mut err,
        )
    };
    ok(err);
    ok(unsafe { cl!(clRetainSampler)(s) });
    ok(unsafe { cl!(clRetainSampler)(s) });
    assert_eq!(info::<cl_uint>(s, CL_SAMPLER_REFERENCE_COUNT), 3);
    ok(unsafe { cl!(clReleaseSampler)(s) });
    assert_eq!(info::<cl_uint>(s, CL_SAMPLER_REFERENCE_COUNT), 2);
    ok(unsafe { cl!(clReleaseSampler)(s) });
    ok(unsafe { cl!(clReleaseSampler)(s) });
    assert_eq!(unsafe { cl!(clReleaseSampler)(s) }, CL_INVALID_SAMPLER);
}
