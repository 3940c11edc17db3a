//! The checks of buffer commands (OpenCL 3.0 sections 5.2.2 to 5.2.4), shared by their
//! `clEnqueue*` and `clCommand*KHR` forms: bounds, immutable buffers, copy overlap, fill
//! patterns.

use super::error::{ClError, ClResult};
use super::memory::Mem;
use opencl_sys::*;
use std::sync::Arc;

/// Checks that a command may write `m`. Errors: `CL_INVALID_OPERATION` if `m` was created
/// with `CL_MEM_IMMUTABLE_EXT` (cl_ext_immutable_memory_objects: writes, copies and fills into
/// it, and maps for writing, all fail).
pub fn check_writable(m: &Mem) -> ClResult<()> {
    if m.flags & CL_MEM_IMMUTABLE_EXT != 0 {
        return Err(ClError(CL_INVALID_OPERATION));
    }
    Ok(())
}

/// Checks that `[offset, offset + size)` lies inside a buffer of `len` bytes.
/// Errors: `CL_INVALID_VALUE`.
pub fn in_bounds(offset: usize, size: usize, len: usize) -> ClResult<()> {
    match offset.checked_add(size) {
        Some(end) if end <= len => Ok(()),
        _ => Err(ClError(CL_INVALID_VALUE)),
    }
}

/// Checks the regions of a buffer-to-buffer copy (clEnqueueCopyBuffer, clCommandCopyBufferKHR)
/// and returns the source and destination offsets in the underlying storage, bytes.
/// Errors: `CL_INVALID_VALUE` (a region out of bounds), `CL_MEM_COPY_OVERLAP`,
/// `CL_INVALID_OPERATION` (`dst` immutable).
pub fn check_copy(
    src: &Mem,
    dst: &Mem,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
) -> ClResult<(u64, u64)> {
    in_bounds(src_offset, size, src.size)?;
    in_bounds(dst_offset, size, dst.size)?;
    // CL_INVALID_OPERATION if dst_buffer was created with CL_MEM_IMMUTABLE_EXT.
    check_writable(dst)?;
    let (s, d) = (
        (src.offset + src_offset) as u64,
        (dst.offset + dst_offset) as u64,
    );
    // CL_MEM_COPY_OVERLAP if the source and destination regions of the same buffer (or of
    // sub-buffers of the same buffer) overlap.
    if Arc::ptr_eq(src.storage(), dst.storage()) && s < d + size as u64 && d < s + size as u64 {
        return Err(ClError(CL_MEM_COPY_OVERLAP));
    }
    Ok((s, d))
}

/// How a checked fill is carried out.
pub enum FillPlan {
    /// Nothing to do (size 0).
    Empty,
    /// `vkCmdFillBuffer` of `word` at storage offset `offset`, `size` bytes (all multiples of 4).
    Words { offset: u64, size: u64, word: u32 },
    /// Any other pattern: the pattern bytes, repeated over the region by other means.
    Bytes(Vec<u8>),
}

/// Checks a fill (clEnqueueFillBuffer, clCommandFillBufferKHR) of `pattern` (its bytes,
/// copied: the application may reuse its memory) over `[offset, offset + size)` of `m`, and
/// picks how to carry it out. Errors: `CL_INVALID_VALUE` (pattern size not 1..128 and a
/// power of two, offset or size not a multiple of it, region out of bounds),
/// `CL_INVALID_OPERATION` (`m` immutable).
pub fn check_fill(m: &Mem, pattern: &[u8], offset: usize, size: usize) -> ClResult<FillPlan> {
    let pattern_size = pattern.len();
    if !pattern_size.is_power_of_two()
        || pattern_size > 128
        || !offset.is_multiple_of(pattern_size)
        || !size.is_multiple_of(pattern_size)
    {
        return Err(ClError(CL_INVALID_VALUE));
    }
    in_bounds(offset, size, m.size)?;
    // CL_INVALID_OPERATION if buffer was created with CL_MEM_IMMUTABLE_EXT.
    check_writable(m)?;
    let pat = pattern.to_vec();
    let abs = (m.offset + offset) as u64;
    let word_periodic = pattern_size <= 4 || pat.chunks(4).all(|c| c == &pat[..4]);
    Ok(if size == 0 {
        FillPlan::Empty
    } else if word_periodic && abs.is_multiple_of(4) && size.is_multiple_of(4) {
        let mut w = [0u8; 4];
        for (i, b) in w.iter_mut().enumerate() {
            *b = pat[i % pattern_size];
        }
        FillPlan::Words {
            offset: abs,
            size: size as u64,
            word: u32::from_le_bytes(w),
        }
    } else {
        FillPlan::Bytes(pat)
    })
}
