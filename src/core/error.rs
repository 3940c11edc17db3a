//! The OpenCL error type shared by every layer.

use crate::backend::error::{BackendError, Refusal};
use opencl_sys::*;

/// An OpenCL error code (one of the negative `CL_*` values of `cl.h`).
///
/// Every fallible function in vkcl returns `ClResult<T>`; the C entry points in `api/` turn the
/// code into the `cl_int` return value or `errcode_ret`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} ({})", error_name(self.0), self.0)]
pub struct ClError(pub cl_int);

/// Result of any vkcl operation that can fail with an OpenCL error code.
pub type ClResult<T> = Result<T, ClError>;

/// The `CL_*` name of an error code, for logs and messages; `"CL_UNKNOWN_ERROR"` otherwise.
pub fn error_name(code: cl_int) -> &'static str {
    macro_rules! names {
        ($($n:ident),* $(,)?) => {
            $(if code == $n { return stringify!($n); })*
        };
    }
    names!(
        CL_SUCCESS,
        CL_DEVICE_NOT_FOUND,
        CL_DEVICE_NOT_AVAILABLE,
        CL_COMPILER_NOT_AVAILABLE,
        CL_MEM_OBJECT_ALLOCATION_FAILURE,
        CL_OUT_OF_RESOURCES,
        CL_OUT_OF_HOST_MEMORY,
        CL_PROFILING_INFO_NOT_AVAILABLE,
        CL_MEM_COPY_OVERLAP,
        CL_IMAGE_FORMAT_MISMATCH,
        CL_IMAGE_FORMAT_NOT_SUPPORTED,
        CL_BUILD_PROGRAM_FAILURE,
        CL_MAP_FAILURE,
        CL_MISALIGNED_SUB_BUFFER_OFFSET,
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
        CL_COMPILE_PROGRAM_FAILURE,
        CL_LINKER_NOT_AVAILABLE,
        CL_LINK_PROGRAM_FAILURE,
        CL_DEVICE_PARTITION_FAILED,
        CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
        CL_INVALID_VALUE,
        CL_INVALID_DEVICE_TYPE,
        CL_INVALID_PLATFORM,
        CL_INVALID_DEVICE,
        CL_INVALID_CONTEXT,
        CL_INVALID_QUEUE_PROPERTIES,
        CL_INVALID_COMMAND_QUEUE,
        CL_INVALID_HOST_PTR,
        CL_INVALID_MEM_OBJECT,
        CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
        CL_INVALID_IMAGE_SIZE,
        CL_INVALID_SAMPLER,
        CL_INVALID_BINARY,
        CL_INVALID_BUILD_OPTIONS,
        CL_INVALID_PROGRAM,
        CL_INVALID_PROGRAM_EXECUTABLE,
        CL_INVALID_KERNEL_NAME,
        CL_INVALID_KERNEL_DEFINITION,
        CL_INVALID_KERNEL,
        CL_INVALID_ARG_INDEX,
        CL_INVALID_ARG_VALUE,
        CL_INVALID_ARG_SIZE,
        CL_INVALID_KERNEL_ARGS,
        CL_INVALID_WORK_DIMENSION,
        CL_INVALID_WORK_GROUP_SIZE,
        CL_INVALID_WORK_ITEM_SIZE,
        CL_INVALID_GLOBAL_OFFSET,
        CL_INVALID_EVENT_WAIT_LIST,
        CL_INVALID_EVENT,
        CL_INVALID_OPERATION,
        CL_INVALID_GL_OBJECT,
        CL_INVALID_BUFFER_SIZE,
        CL_INVALID_MIP_LEVEL,
        CL_INVALID_GLOBAL_WORK_SIZE,
        CL_INVALID_PROPERTY,
        CL_INVALID_IMAGE_DESCRIPTOR,
        CL_INVALID_COMPILER_OPTIONS,
        CL_INVALID_LINKER_OPTIONS,
        CL_INVALID_DEVICE_PARTITION_COUNT,
        CL_INVALID_PIPE_SIZE,
        CL_INVALID_DEVICE_QUEUE,
        CL_INVALID_SPEC_ID,
        CL_MAX_SIZE_RESTRICTION_EXCEEDED,
        CL_INVALID_COMMAND_BUFFER_KHR,
        CL_INVALID_SYNC_POINT_WAIT_LIST_KHR,
        CL_INCOMPATIBLE_COMMAND_QUEUE_KHR,
        CL_INVALID_MUTABLE_COMMAND_KHR,
    );
    "CL_UNKNOWN_ERROR"
}

/// The OpenCL code of a back-end failure, the one place where they are mapped: host memory
/// `CL_OUT_OF_HOST_MEMORY`; everything else, device memory and a lost device included,
/// `CL_OUT_OF_RESOURCES` (OpenCL 3.0 appendix C: resources "required by the OpenCL
/// implementation on the device"), or, for the storage of a memory object (`memory_object`),
/// device memory `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
pub fn backend_code(e: &BackendError, memory_object: bool) -> cl_int {
    match e.refusal() {
        Refusal::HostMemory => CL_OUT_OF_HOST_MEMORY,
        Refusal::DeviceMemory if memory_object => CL_MEM_OBJECT_ALLOCATION_FAILURE,
        Refusal::DeviceMemory | Refusal::DeviceLost | Refusal::Other => CL_OUT_OF_RESOURCES,
    }
}

/// The error for a back-end failure while doing `what` ([`backend_code`]), with the reason
/// (the Vulkan result, the allocator's message) in the log.
pub fn refused(what: impl std::fmt::Display, e: BackendError) -> ClError {
    let code = backend_code(&e, false);
    tracing::warn!("{what}: {e} -> {}", error_name(code));
    ClError(code)
}

/// As [`refused`], for the storage of a memory object (`CL_MEM_OBJECT_ALLOCATION_FAILURE`
/// when device memory ran out).
pub fn allocation_failed(what: impl std::fmt::Display, e: BackendError) -> ClError {
    let code = backend_code(&e, true);
    tracing::warn!("{what}: {e} -> {}", error_name(code));
    ClError(code)
}

impl From<BackendError> for ClError {
    /// [`refused`] for `?` on a back-end result.
    fn from(e: BackendError) -> ClError {
        refused("device work", e)
    }
}

/// Shorthand: `Err(ClError(code))`.
pub fn err<T>(code: cl_int) -> ClResult<T> {
    Err(ClError(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_display() {
        assert_eq!(error_name(CL_INVALID_VALUE), "CL_INVALID_VALUE");
        assert_eq!(error_name(-12345), "CL_UNKNOWN_ERROR");
        assert_eq!(
            ClError(CL_INVALID_KERNEL).to_string(),
            "CL_INVALID_KERNEL (-48)"
        );
    }

    #[test]
    fn backend_codes() {
        let device = BackendError::Allocation("out of memory".into());
        assert_eq!(backend_code(&device, false), CL_OUT_OF_RESOURCES);
        assert_eq!(
            backend_code(&device, true),
            CL_MEM_OBJECT_ALLOCATION_FAILURE
        );
        let host = BackendError::Host("thread".into());
        assert_eq!(ClError::from(host), ClError(CL_OUT_OF_HOST_MEMORY));
        assert_eq!(
            allocation_failed("x", BackendError::Host("y".into())),
            ClError(CL_OUT_OF_HOST_MEMORY)
        );
    }
}
