//! The memory flags of buffers and images (OpenCL 3.0 table "Memory Flags") and their
//! checks, shared by buffer and image creation.

use crate::core::error::{ClError, ClResult};
use opencl_sys::*;

pub(super) const ACCESS: cl_mem_flags = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
pub(super) const HOST_ACCESS: cl_mem_flags =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
pub(super) const HOST_PTR: cl_mem_flags =
    CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
/// Flags that allow writes, which an immutable buffer may not have
/// (cl_ext_immutable_memory_objects).
pub(super) const WRITABLE: cl_mem_flags =
    CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_HOST_WRITE_ONLY;

/// Checks buffer flags. Errors: `CL_INVALID_VALUE` for undefined bits or mutually exclusive
/// combinations (OpenCL 3.0 table "Memory Flags"), or `CL_MEM_IMMUTABLE_EXT` together with
/// `CL_MEM_READ_WRITE`, `CL_MEM_WRITE_ONLY` or `CL_MEM_HOST_WRITE_ONLY`.
pub(super) fn check_flags(flags: cl_mem_flags) -> ClResult<()> {
    let exclusive = |m: cl_mem_flags| (flags & m).count_ones() > 1;
    if flags & !(ACCESS | HOST_ACCESS | HOST_PTR | CL_MEM_IMMUTABLE_EXT) != 0
        || (flags & CL_MEM_IMMUTABLE_EXT != 0 && flags & WRITABLE != 0)
        || exclusive(ACCESS)
        || exclusive(HOST_ACCESS)
        || exclusive(CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)
        || exclusive(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)
    {
        return Err(ClError(CL_INVALID_VALUE));
    }
    Ok(())
}
