//! OpenCL C -> Kernel SPIR-V -> Vulkan SPIR-V. Pure functions of bytes in, bytes out.
