//! The one error type of the device back ends. Core maps it to a `CL_*` code in one place
//! (`core::error`), logging the reason.

use ash::vk;

/// Why a back end could not do what was asked: the Vulkan result, the allocator's or the
/// host's reason. `Display` gives the reason for the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// A Vulkan call returned this result (logged by name and description).
    #[error("Vulkan {0:?}: {0}")]
    Vulkan(#[from] vk::Result),
    /// The device-memory allocator (`gpu-allocator`) refused; its message.
    #[error("allocator: {0}")]
    Allocation(String),
    /// A host resource could not be had (a thread could not be started); what failed.
    #[error("host: {0}")]
    Host(String),
}

/// The class of a [`BackendError`], which decides its OpenCL code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Host memory or another host resource ran out.
    HostMemory,
    /// Device memory ran out (or no memory type fits).
    DeviceMemory,
    /// The device was lost.
    DeviceLost,
    /// Anything else the driver refused.
    Other,
}

impl BackendError {
    /// The class of the error.
    pub fn refusal(&self) -> Refusal {
        match self {
            BackendError::Vulkan(vk::Result::ERROR_OUT_OF_HOST_MEMORY) | BackendError::Host(_) => {
                Refusal::HostMemory
            }
            BackendError::Vulkan(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)
            | BackendError::Allocation(_) => Refusal::DeviceMemory,
            BackendError::Vulkan(vk::Result::ERROR_DEVICE_LOST) => Refusal::DeviceLost,
            BackendError::Vulkan(_) => Refusal::Other,
        }
    }
}

impl From<gpu_allocator::AllocationError> for BackendError {
    fn from(e: gpu_allocator::AllocationError) -> Self {
        BackendError::Allocation(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_reasons() {
        let e = BackendError::from(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
        assert_eq!(e.refusal(), Refusal::DeviceMemory);
        assert_eq!(
            e.to_string(),
            "Vulkan ERROR_OUT_OF_DEVICE_MEMORY: A device memory allocation has failed"
        );
        assert_eq!(
            BackendError::from(vk::Result::ERROR_OUT_OF_HOST_MEMORY).refusal(),
            Refusal::HostMemory
        );
        assert_eq!(
            BackendError::from(vk::Result::ERROR_DEVICE_LOST).refusal(),
            Refusal::DeviceLost
        );
        assert_eq!(
            BackendError::from(vk::Result::ERROR_INITIALIZATION_FAILED).refusal(),
            Refusal::Other
        );
        assert_eq!(
            BackendError::Host("thread".into()).refusal(),
            Refusal::HostMemory
        );
    }
}
