//! The geometry of rectangular buffer transfers (OpenCL 3.0 sections 5.2.2 and 5.2.3),
//! shared by clEnqueueReadBufferRect, clEnqueueWriteBufferRect, clEnqueueCopyBufferRect and
//! clCommandCopyBufferRectKHR.
//!
//! A region is `[width in bytes, height in rows, depth in slices]`; an origin is `[x in bytes,
//! y in rows, z in slices]` and its byte offset is `z * slice_pitch + y * row_pitch + x`.

use super::error::{ClError, ClResult};
use super::memory::Mem;
use super::transfer::check_writable;
use opencl_sys::*;
use std::sync::Arc;

pub(crate) const INVALID: ClError = ClError(CL_INVALID_VALUE);

/// One side of a rectangular transfer, resolved: the byte offset of the region's first byte
/// and the row and slice pitches in bytes (a pitch of 0 replaced by its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    base: usize,
    row: usize,
    slice: usize,
}

impl Side {
    /// Resolves `origin` and the pitches for `region` (every element > 0).
    /// Errors: `CL_INVALID_VALUE` for a row pitch below `region[0]`, a slice pitch below
    /// `region[1] * row_pitch` or not a multiple of the row pitch, or offsets that overflow.
    pub fn new(
        origin: [usize; 3],
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> ClResult<Side> {
        // CL_INVALID_VALUE if row_pitch is not 0 and is less than region[0].
        if row_pitch != 0 && row_pitch < region[0] {
            return Err(INVALID);
        }
        let row = if row_pitch == 0 { region[0] } else { row_pitch };
        let min_slice = region[1].checked_mul(row).ok_or(INVALID)?;
        // CL_INVALID_VALUE if slice_pitch is not 0 and is less than region[1] x row_pitch and
        // not a multiple of row_pitch (read as "or": a smaller pitch would overlap slices).
        if slice_pitch != 0 && (slice_pitch < min_slice || !slice_pitch.is_multiple_of(row)) {
            return Err(INVALID);
        }
        let slice = if slice_pitch == 0 {
            min_slice
        } else {
            slice_pitch
        };
        let base = origin[2]
            .checked_mul(slice)
            .and_then(|z| origin[1].checked_mul(row).and_then(|y| z.checked_add(y)))
            .and_then(|b| b.checked_add(origin[0]))
            .ok_or(INVALID)?;
        let side = Side { base, row, slice };
        side.end(region).ok_or(INVALID)?;
        Ok(side)
    }

    /// One past the last byte the region touches, counted from byte 0 of the object.
    pub fn end(&self, region: [usize; 3]) -> Option<usize> {
        let z = (region[2] - 1).checked_mul(self.slice)?;
        let y = (region[1] - 1).checked_mul(self.row)?;
        self.base
            .checked_add(z)?
            .checked_add(y)?
            .checked_add(region[0])
    }

    /// Byte offsets of the region's rows, increasing (slices outer, rows inner).
    pub fn rows(self, region: [usize; 3]) -> impl Iterator<Item = usize> {
        (0..region[2]).flat_map(move |z| {
            (0..region[1]).map(move |y| self.base + z * self.slice + y * self.row)
        })
    }
}

/// Whether two increasing lists of disjoint `len`-byte intervals (given by their starts) share
/// a byte.
fn overlaps(a: impl Iterator<Item = usize>, b: impl Iterator<Item = usize>, len: usize) -> bool {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    while let (Some(&x), Some(&y)) = (a.peek(), b.peek()) {
        if x + len <= y {
            a.next();
        } else if y + len <= x {
            b.next();
        } else {
            return true;
        }
    }
    false
}

/// The `vkCmdCopyBuffer` regions (source offset, destination offset, size) of a row-by-row
/// copy of `len`-byte rows, rows that continue the previous one on both sides merged.
pub(crate) fn copy_regions(
    src: impl Iterator<Item = usize>,
    dst: impl Iterator<Item = usize>,
    len: usize,
) -> Vec<(u64, u64, u64)> {
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    for (s, d) in src.zip(dst) {
        let (s, d, n) = (s as u64, d as u64, len as u64);
        match out.last_mut() {
            Some(last) if last.0 + last.2 == s && last.1 + last.2 == d => last.2 += n,
            _ => out.push((s, d, n)),
        }
    }
    out
}

/// The geometry of a host <-> buffer rectangle.
pub struct HostRect {
    pub buffer: [usize; 3],
    pub host: [usize; 3],
    pub region: [usize; 3],
    /// buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch.
    pub pitches: [usize; 4],
}

/// Checks a rectangular transfer between `m` and host memory (clEnqueueReadBufferRect with
/// `write` false, clEnqueueWriteBufferRect) and returns its buffer and host sides.
/// Errors: `CL_INVALID_VALUE` (pitches too small or not multiples, the buffer rectangle out
/// of bounds), `CL_INVALID_OPERATION` (host access the buffer's flags forbid, or a write to an
/// immutable buffer).
pub fn check_host_rect(m: &Mem, rect: &HostRect, write: bool) -> ClResult<(Side, Side)> {
    let region = rect.region;
    let [brp, bsp, hrp, hsp] = rect.pitches;
    let b = Side::new(rect.buffer, region, brp, bsp)?;
    let h = Side::new(rect.host, region, hrp, hsp)?;
    // CL_INVALID_VALUE if the region being read or written specified by (buffer_origin, region,
    // buffer_row_pitch, buffer_slice_pitch) is out of bounds.
    if b.end(region).is_none_or(|end| end > m.size) {
        return Err(INVALID);
    }
    let forbidden = if write {
        // CL_INVALID_OPERATION if clEnqueueWriteBufferRect is called on buffer which has been
        // created with CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS or CL_MEM_IMMUTABLE_EXT.
        CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_IMMUTABLE_EXT
    } else {
        // CL_INVALID_OPERATION if clEnqueueReadBufferRect is called on buffer which has been
        // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS.
        CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS
    };
    if m.flags & forbidden != 0 {
        return Err(ClError(CL_INVALID_OPERATION));
    }
    Ok((b, h))
}

/// Checks a rectangular buffer-to-buffer copy (clEnqueueCopyBufferRect,
/// clCommandCopyBufferRectKHR) and returns its `vkCmdCopyBuffer` regions on the storage.
/// `arrays` are src_origin, dst_origin and region; `pitches` src_row, src_slice, dst_row,
/// dst_slice (the api read them; each region element > 0). Errors: `CL_INVALID_VALUE` (pitches too
/// small or not multiples, a rectangle out of bounds, the same buffer with both pitches
/// different); `CL_MEM_COPY_OVERLAP` (rectangles of the same storage share a byte).
///
pub fn check_copy_rect(
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    arrays: [[usize; 3]; 3],
    pitches: [usize; 4],
) -> ClResult<Vec<(u64, u64, u64)>> {
    let [so, d_o, region] = arrays;
    let [src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch] = pitches;
    let s = Side::new(so, region, src_row_pitch, src_slice_pitch)?;
    let d = Side::new(d_o, region, dst_row_pitch, dst_slice_pitch)?;
    // CL_INVALID_VALUE if (src_origin, region, src_row_pitch, src_slice_pitch) or
    // (dst_origin, region, dst_row_pitch, dst_slice_pitch) require accessing elements
    // outside the src_buffer and dst_buffer buffer objects respectively.
    if s.end(region).is_none_or(|e| e > src.size) || d.end(region).is_none_or(|e| e > dst.size) {
        return Err(INVALID);
    }
    // CL_INVALID_OPERATION if dst_buffer was created with CL_MEM_IMMUTABLE_EXT.
    check_writable(dst)?;
    // CL_INVALID_VALUE if src_buffer and dst_buffer are the same buffer object and
    // src_slice_pitch is not equal to dst_slice_pitch and src_row_pitch is not equal to
    // dst_row_pitch.
    if Arc::ptr_eq(src, dst) && s.slice != d.slice && s.row != d.row {
        return Err(INVALID);
    }
    let (sbase, dbase) = (src.offset, dst.offset);
    // CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or sub-buffer
    // object and the source and destination regions overlap or if src_buffer and
    // dst_buffer are different sub-buffers of the same associated buffer object and they
    // overlap (checked byte-exactly on the shared storage, which vkCmdCopyBuffer needs too).
    if Arc::ptr_eq(src.storage(), dst.storage())
        && overlaps(
            s.rows(region).map(|o| sbase + o),
            d.rows(region).map(|o| dbase + o),
            region[0],
        )
    {
        return Err(ClError(CL_MEM_COPY_OVERLAP));
    }
    let regions = copy_regions(
        s.rows(region).map(|o| sbase + o),
        d.rows(region).map(|o| dbase + o),
        region[0],
    );
    Ok(regions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pitches_default_and_checks() {
        let r = [4, 3, 2];
        assert_eq!(
            Side::new([1, 2, 1], r, 0, 0),
            Ok(Side {
                base: 12 + 8 + 1,
                row: 4,
                slice: 12
            })
        );
        assert_eq!(
            Side::new([0, 0, 0], r, 10, 0),
            Ok(Side {
                base: 0,
                row: 10,
                slice: 30
            })
        );
        assert_eq!(
            Side::new([0, 0, 0], r, 3, 0),
            Err(INVALID),
            "row pitch below width"
        );
        assert_eq!(
            Side::new([0, 0, 0], r, 4, 8),
            Err(INVALID),
            "slice pitch below height x row"
        );
        assert_eq!(
            Side::new([0, 0, 0], r, 4, 13),
            Err(INVALID),
            "slice pitch not a multiple"
        );
        assert_eq!(
            Side::new([usize::MAX, 0, 0], r, 0, 0),
            Err(INVALID),
            "overflow"
        );
        let s = Side::new([1, 1, 0], r, 5, 20).unwrap();
        assert_eq!(s.end(r), Some(6 + 20 + 10 + 4));
        assert_eq!(s.rows(r).collect::<Vec<_>>(), vec![6, 11, 16, 26, 31, 36]);
    }

    #[test]
    fn contiguous_rows_merge() {
        let r = copy_regions(
            [0usize, 4, 8, 20].into_iter(),
            [100usize, 104, 110, 122].into_iter(),
            4,
        );
        assert_eq!(r, vec![(0, 100, 8), (8, 110, 4), (20, 122, 4)]);
    }

    #[test]
    fn overlap_is_byte_exact() {
        let a = [0usize, 10, 20];
        assert!(!overlaps(a.into_iter(), [4usize, 14, 24].into_iter(), 4));
        assert!(overlaps(a.into_iter(), [3usize, 14].into_iter(), 4));
        assert!(overlaps(a.into_iter(), [23usize].into_iter(), 4));
        assert!(!overlaps(a.into_iter(), [24usize, 30].into_iter(), 4));
    }
}
