//! Sampler objects (OpenCL 3.0 section 5.8, behind `VKCL_IMAGES=1`, docs/images.md): the
//! addressing mode, filter mode and coordinate normalization a kernel's `read_image*` calls
//! use when the sampler is passed as a `sampler_t` argument.

use super::context::Context;
use super::error::{ClError, ClResult};
use super::image::images_enabled;
use super::object::{ClObject, Header, Kind};
use opencl_sys::*;
use std::sync::Arc;

/// The state of a sampler, as `sampler_t` values and `clGetSamplerInfo` see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SamplerState {
    /// `CL_SAMPLER_NORMALIZED_COORDS`: coordinates in [0, 1) rather than texels.
    pub normalized: bool,
    /// `CL_SAMPLER_ADDRESSING_MODE`: one of `CL_ADDRESS_NONE`, `_CLAMP_TO_EDGE`, `_CLAMP`,
    /// `_REPEAT`, `_MIRRORED_REPEAT`.
    pub addressing: cl_addressing_mode,
    /// `CL_SAMPLER_FILTER_MODE`: `CL_FILTER_NEAREST` or `CL_FILTER_LINEAR`.
    pub filter: cl_filter_mode,
}

impl SamplerState {
    /// The state of the arguments of `clCreateSampler`. Errors: `CL_INVALID_VALUE` when
    /// `normalized` is neither `CL_TRUE` nor `CL_FALSE`, or the addressing or filter mode is
    /// not one OpenCL defines.
    pub fn new(
        normalized: cl_bool,
        addressing: cl_addressing_mode,
        filter: cl_filter_mode,
    ) -> ClResult<SamplerState> {
        const MODES: [cl_addressing_mode; 5] = [
            CL_ADDRESS_NONE,
            CL_ADDRESS_CLAMP_TO_EDGE,
            CL_ADDRESS_CLAMP,
            CL_ADDRESS_REPEAT,
            CL_ADDRESS_MIRRORED_REPEAT,
        ];
        if (normalized != CL_TRUE && normalized != CL_FALSE)
            || !MODES.contains(&addressing)
            || (filter != CL_FILTER_NEAREST && filter != CL_FILTER_LINEAR)
        {
            return Err(ClError(CL_INVALID_VALUE));
        }
        Ok(SamplerState {
            normalized: normalized == CL_TRUE,
            addressing,
            filter,
        })
    }

    /// The state of a `clCreateSamplerWithProperties` list (pairs of name and value without
    /// the terminating 0); names left out take the spec's defaults (normalized, `CLAMP`,
    /// `NEAREST`). Errors: `CL_INVALID_VALUE` for a name other than the three (the mipmap
    /// names need `cl_khr_mipmap_image`, which vkcl does not claim), a name given twice or a
    /// value that is not valid.
    pub fn from_properties(
        props: &[(cl_sampler_properties, cl_sampler_properties)],
    ) -> ClResult<SamplerState> {
        let (mut n, mut a, mut f) = (None, None, None);
        for &(key, value) in props {
            let slot = match key {
                k if k == CL_SAMPLER_NORMALIZED_COORDS as cl_sampler_properties => &mut n,
                k if k == CL_SAMPLER_ADDRESSING_MODE as cl_sampler_properties => &mut a,
                k if k == CL_SAMPLER_FILTER_MODE as cl_sampler_properties => &mut f,
                _ => return Err(ClError(CL_INVALID_VALUE)),
            };
            if slot.is_some() || value > u32::MAX as cl_sampler_properties {
                return Err(ClError(CL_INVALID_VALUE));
            }
            *slot = Some(value as u32);
        }
        SamplerState::new(
            n.unwrap_or(CL_TRUE),
            a.unwrap_or(CL_ADDRESS_CLAMP),
            f.unwrap_or(CL_FILTER_NEAREST),
        )
    }
}

/// A sampler object.
pub struct Sampler {
    header: Header,
    /// The context it was made in (`CL_SAMPLER_CONTEXT`).
    pub context: Arc<Context>,
    /// Its modes.
    pub state: SamplerState,
    /// The property list as given to `clCreateSamplerWithProperties`, with its terminating 0
    /// (`CL_SAMPLER_PROPERTIES`); empty for `clCreateSampler` or a NULL list.
    pub properties: Vec<cl_sampler_properties>,
}

impl ClObject for Sampler {
    const KIND: Kind = Kind::Sampler;
    const INVALID: i32 = CL_INVALID_SAMPLER;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Sampler {
    /// A sampler of `state` in `context`. Errors: `CL_INVALID_OPERATION` when no device of
    /// the context supports images (`VKCL_IMAGES` unset).
    pub fn new(
        context: Arc<Context>,
        state: SamplerState,
        properties: Vec<cl_sampler_properties>,
    ) -> ClResult<Sampler> {
        if !images_enabled() {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        Ok(Sampler {
            header: Header::new(Kind::Sampler),
            context,
            state,
            properties,
        })
    }
}
