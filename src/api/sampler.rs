//! Sampler entry points (OpenCL 3.0 section 5.8), behind `VKCL_IMAGES=1` (docs/images.md):
//! without it no device supports images and creation fails with `CL_INVALID_OPERATION`.

use crate::api::info::InfoOut;
use crate::api::{properties, status};
use crate::core::context::Context;
use crate::core::error::{ClError, ClResult};
use crate::core::object::{self, handle_of, lookup, register, ClObject};
use crate::core::sampler::{Sampler, SamplerState};
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

fn create(
    context: cl_context,
    state: impl FnOnce() -> ClResult<SamplerState>,
    props: Vec<cl_sampler_properties>,
) -> ClResult<*mut c_void> {
    let c: Arc<Context> = lookup::<Context>(context as *const c_void)?;
    let state = state()?;
    let s = register(Sampler::new(c, state, props)?);
    Ok(handle_of(&s))
}

/// clCreateSampler (deprecated by 2.0, still in 3.0): a sampler of the given modes.
/// Errors: `CL_INVALID_CONTEXT`; `CL_INVALID_VALUE` (`normalized_coords` neither `CL_TRUE`
/// nor `CL_FALSE`, an unknown addressing or filter mode); `CL_INVALID_OPERATION` (no device
/// supports images: `VKCL_IMAGES` unset).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clCreateSampler(
    context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    crate::api::object(errcode_ret, || {
        create(
            context,
            || SamplerState::new(normalized_coords, addressing_mode, filter_mode),
            Vec::new(),
        )
    }) as cl_sampler
}

/// clCreateSamplerWithProperties: a sampler of a zero-terminated property list
/// (`CL_SAMPLER_NORMALIZED_COORDS`, `CL_SAMPLER_ADDRESSING_MODE`, `CL_SAMPLER_FILTER_MODE`;
/// defaults `CL_TRUE`, `CL_ADDRESS_CLAMP`, `CL_FILTER_NEAREST`). Errors:
/// `CL_INVALID_CONTEXT`; `CL_INVALID_VALUE` (an unsupported name, including the mipmap ones,
/// an invalid value, a name given twice); `CL_INVALID_OPERATION` (no device supports images).
///
/// # Safety
/// `sampler_properties` is NULL or a zero-terminated list of pairs.
pub unsafe extern "C" fn clCreateSamplerWithProperties(
    context: cl_context,
    sampler_properties: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    crate::api::object(errcode_ret, || {
        lookup::<Context>(context as *const c_void)?;
        // SAFETY: NULL or a zero-terminated list per the API.
        let pairs = unsafe { properties(sampler_properties) }.map_err(|e| match e.0 {
            // The same name twice is CL_INVALID_VALUE for samplers.
            CL_INVALID_PROPERTY => ClError(CL_INVALID_VALUE),
            _ => e,
        })?;
        let mut list: Vec<cl_sampler_properties> =
            pairs.iter().flat_map(|&(k, v)| [k, v]).collect();
        if !sampler_properties.is_null() {
            list.push(0);
        }
        create(context, || SamplerState::from_properties(&pairs), list)
    }) as cl_sampler
}

/// clRetainSampler. Errors: `CL_INVALID_SAMPLER`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clRetainSampler(sampler: cl_sampler) -> cl_int {
    status(|| object::retain::<Sampler>(sampler as *const c_void))
}

/// clReleaseSampler: the sampler is deleted once its count is 0 and no kernel launch that
/// uses it is pending. Errors: `CL_INVALID_SAMPLER`.
///
/// # Safety
/// Any pointer value is accepted.
pub unsafe extern "C" fn clReleaseSampler(sampler: cl_sampler) -> cl_int {
    status(|| object::release::<Sampler>(sampler as *const c_void).map(|_| ()))
}

/// clGetSamplerInfo (OpenCL 3.0 section 5.8.2). Errors: `CL_INVALID_SAMPLER`;
/// `CL_INVALID_VALUE` (unknown name, including the mipmap ones; value too small).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clGetSamplerInfo(
    sampler: cl_sampler,
    param_name: cl_sampler_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let s = lookup::<Sampler>(sampler as *const c_void)?;
        let out = InfoOut::new(size, value, size_ret);
        match param_name {
            CL_SAMPLER_REFERENCE_COUNT => out.scalar(s.header().ref_count()),
            CL_SAMPLER_CONTEXT => out.scalar(handle_of(&s.context) as cl_context),
            CL_SAMPLER_NORMALIZED_COORDS => out.scalar(if s.state.normalized {
                CL_TRUE
            } else {
                CL_FALSE
            }),
            CL_SAMPLER_ADDRESSING_MODE => out.scalar(s.state.addressing),
            CL_SAMPLER_FILTER_MODE => out.scalar(s.state.filter),
            CL_SAMPLER_PROPERTIES => out.slice(&s.properties),
            _ => Err(ClError(CL_INVALID_VALUE)),
        }
    })
}
