#![allow(non_snake_case)]
//! The C ABI: `extern "C"` entry points, the ICD dispatch table, handle conversion, argument
//! checks and `clGet*Info` writers. The only module that touches raw pointers from the
//! application.

pub mod command_buffer;
pub mod command_buffer_094;
pub mod command_buffer_image;
pub mod command_buffer_multi;
pub mod command_buffer_record;
pub mod context;
pub mod device;
pub mod event;
pub mod icd;
pub mod info;
pub mod kernel;
pub mod memory;
pub mod mutable_dispatch;
pub mod platform;
pub mod program;
pub mod queue;
pub mod sampler;
pub mod semaphore;
pub mod unsupported;

use crate::core::error::{ClError, ClResult};
use opencl_sys::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs an entry point body that returns a status code; a panic becomes
/// `CL_OUT_OF_HOST_MEMORY` instead of unwinding into the application.
pub(crate) fn status(f: impl FnOnce() -> ClResult<()>) -> cl_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(ClError(code))) => code,
        Err(_) => {
            tracing::error!("internal panic caught at the API boundary");
            CL_OUT_OF_HOST_MEMORY
        }
    }
}

/// Runs an entry point body that returns an object and reports through `errcode_ret`
/// (which may be NULL). On error returns NULL.
pub(crate) fn object<T>(errcode_ret: *mut cl_int, f: impl FnOnce() -> ClResult<*mut T>) -> *mut T {
    let (ptr, code) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(p)) => (p, CL_SUCCESS),
        Ok(Err(ClError(code))) => (std::ptr::null_mut(), code),
        Err(_) => {
            tracing::error!("internal panic caught at the API boundary");
            (std::ptr::null_mut(), CL_OUT_OF_HOST_MEMORY)
        }
    };
    if !errcode_ret.is_null() {
        // SAFETY: a non-NULL errcode_ret points to a cl_int per the OpenCL API.
        unsafe { errcode_ret.write(code) };
    }
    ptr
}

/// Reads `n` elements at `p` into a Vec; an empty Vec when `n` is 0 or `p` is NULL.
///
/// # Safety
/// `p` must point to `n` readable elements when non-NULL.
pub(crate) unsafe fn slice_from<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// Reads a zero-terminated property list (pairs of key and value ending in 0).
/// Errors: `CL_INVALID_PROPERTY` for a key given twice; `CL_INVALID_VALUE` for a "pointer"
/// below 64 KiB (an integer passed in its place).
///
/// # Safety
/// `p` must be NULL or point to a zero-terminated list of pairs.
pub(crate) unsafe fn properties<T: Copy + Default + PartialEq>(
    p: *const T,
) -> ClResult<Vec<(T, T)>> {
    let mut out: Vec<(T, T)> = Vec::new();
    if p.is_null() {
        return Ok(out);
    }
    // No list lives in the first 64 KiB (Linux's mmap_min_addr): such a "pointer" is an
    // integer passed where the list goes, e.g. a sync-point count from an application built
    // against cl_khr_command_buffer 0.9.4's entry points (no `properties` parameter) while
    // vkcl exposes 0.9.5+ (`VKCL_COMMAND_BUFFER_REVISION`): an error, not a crash.
    if (p as usize) < 0x10000 {
        return Err(ClError(CL_INVALID_VALUE));
    }
    let mut i = 0;
    loop {
        // SAFETY: the list is zero-terminated per the caller.
        let key = unsafe { *p.add(i) };
        if key == T::default() {
            break;
        }
        // SAFETY: every key is followed by its value.
        let value = unsafe { *p.add(i + 1) };
        if out.iter().any(|(k, _)| *k == key) {
            return Err(ClError(CL_INVALID_PROPERTY));
        }
        out.push((key, value));
        i += 2;
    }
    Ok(out)
}

/// Writes `v` to `p` when `p` is not NULL.
///
/// # Safety
/// `p` must be NULL or valid for a write of `T`.
pub(crate) unsafe fn write_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: guaranteed by the caller.
        unsafe { p.write(v) };
    }
}
