//! Rectangular transfers (OpenCL 3.0 sections 5.2.2 and 5.2.3): clEnqueueReadBufferRect,
//! clEnqueueWriteBufferRect and clEnqueueCopyBufferRect.
//!
//! A region is `[width in bytes, height in rows, depth in slices]`; an origin is `[x in bytes,
//! y in rows, z in slices]` and its byte offset is `z * slice_pitch + y * row_pitch + x`. Host
//! transfers copy row by row on the queue's worker; copies are one `vkCmdCopyBuffer` with one
//! region per row.

use super::{command_args, finish_enqueue, keep};
use crate::api::status;
use crate::backend::vulkan::queue::Work;
use crate::core::error::{ClError, ClResult};
use crate::core::memory::Mem;
use crate::core::object::lookup;
use crate::core::UserPtr;
use opencl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

const INVALID: ClError = ClError(CL_INVALID_VALUE);

/// One side of a rectangular transfer, resolved: the byte offset of the region's first byte
/// and the row and slice pitches in bytes (a pitch of 0 replaced by its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Side {
    base: usize,
    row: usize,
    slice: usize,
}

impl Side {
    /// Resolves `origin` and the pitches for `region` (every element > 0).
    /// Errors: `CL_INVALID_VALUE` for a row pitch below `region[0]`, a slice pitch below
    /// `region[1] * row_pitch` or not a multiple of the row pitch, or offsets that overflow.
    fn new(
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
    fn end(&self, region: [usize; 3]) -> Option<usize> {
        let z = (region[2] - 1).checked_mul(self.slice)?;
        let y = (region[1] - 1).checked_mul(self.row)?;
        self.base
            .checked_add(z)?
            .checked_add(y)?
            .checked_add(region[0])
    }

    /// Byte offsets of the region's rows, increasing (slices outer, rows inner).
    fn rows(self, region: [usize; 3]) -> impl Iterator<Item = usize> {
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
fn copy_regions(
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

/// Reads three `size_t`s. Errors: `CL_INVALID_VALUE` for NULL.
///
/// # Safety
/// `p` must be NULL or point to three readable `size_t`s.
unsafe fn triple(p: *const usize) -> ClResult<[usize; 3]> {
    if p.is_null() {
        return Err(INVALID);
    }
    // SAFETY: non-NULL and three elements long per the caller.
    Ok(unsafe { [*p, *p.add(1), *p.add(2)] })
}

/// Reads origins and region. Errors: `CL_INVALID_VALUE` for a NULL array or a region element 0.
///
/// # Safety
/// Each pointer must be NULL or point to three readable `size_t`s.
unsafe fn rect_arrays(
    a: *const usize,
    b: *const usize,
    region: *const usize,
) -> ClResult<[[usize; 3]; 3]> {
    // CL_INVALID_VALUE if buffer_origin, host_origin, or region is NULL (copy: src_origin,
    // dst_origin or region).
    // SAFETY: forwarded.
    let (a, b, r) = unsafe { (triple(a)?, triple(b)?, triple(region)?) };
    // CL_INVALID_VALUE if any region array element is 0.
    if r.contains(&0) {
        return Err(INVALID);
    }
    Ok([a, b, r])
}

/// The geometry of a host <-> buffer rectangle.
struct HostRect {
    buffer: [usize; 3],
    host: [usize; 3],
    region: [usize; 3],
    /// buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch.
    pitches: [usize; 4],
}

/// The body of clEnqueueReadBufferRect (`write` false) and clEnqueueWriteBufferRect.
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[allow(clippy::too_many_arguments)]
unsafe fn host_rect(
    queue: cl_command_queue,
    buffer: cl_mem,
    write: bool,
    blocking: cl_bool,
    rect: HostRect,
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> ClResult<()> {
    // SAFETY: forwarded.
    let (q, m, waits) = unsafe { command_args(queue, buffer, num, list) }?;
    let region = rect.region;
    let [brp, bsp, hrp, hsp] = rect.pitches;
    let b = Side::new(rect.buffer, region, brp, bsp)?;
    let h = Side::new(rect.host, region, hrp, hsp)?;
    // CL_INVALID_VALUE if the region being read or written specified by (buffer_origin, region,
    // buffer_row_pitch, buffer_slice_pitch) is out of bounds.
    if b.end(region).is_none_or(|end| end > m.size) {
        return Err(INVALID);
    }
    // CL_INVALID_VALUE if ptr is a NULL value.
    if ptr.is_null() {
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
    let (dev, host) = (UserPtr(m.mapped() as *mut c_void), UserPtr(ptr));
    let work = Work::Host(Box::new(move || {
        let (dev, host) = (dev.get() as *mut u8, host.get() as *mut u8);
        for (bo, ho) in b.rows(region).zip(h.rows(region)) {
            let (from, to) = if write {
                (host.wrapping_add(ho), dev.wrapping_add(bo))
            } else {
                (dev.wrapping_add(bo), host.wrapping_add(ho))
            };
            // SAFETY: buffer rows lie inside the mapped object (bounds checked above); the
            // application keeps `ptr` valid for the host rectangle until the command completes.
            unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to, region[0]) };
        }
        0
    }));
    let ty = if write {
        CL_COMMAND_WRITE_BUFFER_RECT
    } else {
        CL_COMMAND_READ_BUFFER_RECT
    };
    let ev = q.enqueue(ty, &waits, work, keep(&m));
    // SAFETY: forwarded.
    unsafe { finish_enqueue(ev, blocking, event) }
}

/// clEnqueueReadBufferRect: copies a 2D or 3D rectangle of `buffer` to host memory `ptr`.
/// Errors: those of the queue, buffer and wait list; `CL_INVALID_VALUE` (NULL origin, region
/// or ptr, a region element 0, pitches too small or not multiples, the buffer rectangle out of
/// bounds); `CL_INVALID_OPERATION` (buffer created with CL_MEM_HOST_WRITE_ONLY or
/// CL_MEM_HOST_NO_ACCESS); `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` for a blocking read
/// after a failed event.
///
/// # Safety
/// Pointers as the OpenCL API requires (`ptr` holds the host rectangle).
pub unsafe extern "C" fn clEnqueueReadBufferRect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *mut c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let [buffer_o, host, region] = unsafe { rect_arrays(buffer_origin, host_origin, region) }?;
        let pitches = [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ];
        let rect = HostRect {
            buffer: buffer_o,
            host,
            region,
            pitches,
        };
        // SAFETY: forwarded.
        unsafe { host_rect(queue, buffer, false, blocking, rect, ptr, num, list, event) }
    })
}

/// clEnqueueWriteBufferRect: copies a 2D or 3D rectangle of host memory `ptr` into `buffer`.
/// Errors as [`clEnqueueReadBufferRect`], with `CL_INVALID_OPERATION` for buffers created with
/// CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS.
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueWriteBufferRect(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    buffer_origin: *const usize,
    host_origin: *const usize,
    region: *const usize,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    ptr: *const c_void,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let [buffer_o, host, region] = unsafe { rect_arrays(buffer_origin, host_origin, region) }?;
        let pitches = [
            buffer_row_pitch,
            buffer_slice_pitch,
            host_row_pitch,
            host_slice_pitch,
        ];
        let rect = HostRect {
            buffer: buffer_o,
            host,
            region,
            pitches,
        };
        // SAFETY: forwarded.
        unsafe {
            host_rect(
                queue,
                buffer,
                true,
                blocking,
                rect,
                ptr as *mut c_void,
                num,
                list,
                event,
            )
        }
    })
}

/// Checks a rectangular buffer-to-buffer copy (clEnqueueCopyBufferRect,
/// clCommandCopyBufferRectKHR) and returns its `vkCmdCopyBuffer` regions on the storage.
/// `arrays` are src_origin, dst_origin and region; `pitches` src_row, src_slice, dst_row,
/// dst_slice. Errors: `CL_INVALID_VALUE` (NULL origin or region, a region element 0, pitches too
/// small or not multiples, a rectangle out of bounds, the same buffer with both pitches
/// different); `CL_MEM_COPY_OVERLAP` (rectangles of the same storage share a byte).
///
/// # Safety
/// Each array pointer must be NULL or point to three readable `size_t`s.
pub(crate) unsafe fn check_copy_rect(
    src: &Arc<Mem>,
    dst: &Arc<Mem>,
    arrays: [*const usize; 3],
    pitches: [usize; 4],
) -> ClResult<Vec<(u64, u64, u64)>> {
    // SAFETY: forwarded.
    let [so, d_o, region] = unsafe { rect_arrays(arrays[0], arrays[1], arrays[2]) }?;
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
    super::check_writable(dst)?;
    // CL_INVALID_VALUE if src_buffer and dst_buffer are the same buffer object and
    // src_slice_pitch is not equal to dst_slice_pitch and src_row_pitch is not equal to
    // dst_row_pitch.
    if Arc::ptr_eq(&src, &dst) && s.slice != d.slice && s.row != d.row {
        return Err(INVALID);
    }
    let (sbase, dbase) = (src.offset, dst.offset);
    // CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or sub-buffer
    // object and the source and destination regions overlap or if src_buffer and
    // dst_buffer are different sub-buffers of the same associated buffer object and they
    // overlap (checked byte-exactly on the shared storage, which vkCmdCopyBuffer needs too).
    if Arc::ptr_eq(&src.storage, &dst.storage)
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

/// clEnqueueCopyBufferRect: one `vkCmdCopyBuffer` with one region per row.
/// Errors: those of the queue, buffers and wait list; `CL_INVALID_VALUE` (NULL origin or
/// region, a region element 0, pitches too small or not multiples, a rectangle out of bounds,
/// the same buffer with both pitches different); `CL_MEM_COPY_OVERLAP` (rectangles of the same
/// storage share a byte).
///
/// # Safety
/// Pointers as the OpenCL API requires.
pub unsafe extern "C" fn clEnqueueCopyBufferRect(
    queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    num: cl_uint,
    list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: forwarded.
        let (q, src, waits) = unsafe { command_args(queue, src_buffer, num, list) }?;
        let dst = lookup::<Mem>(dst_buffer as *const c_void)?;
        // CL_INVALID_CONTEXT if the context associated with command_queue, src_buffer and
        // dst_buffer are not the same.
        if !Arc::ptr_eq(&q.context, &dst.context) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        // SAFETY: forwarded.
        let regions = unsafe {
            check_copy_rect(
                &src,
                &dst,
                [src_origin, dst_origin, region],
                [
                    src_row_pitch,
                    src_slice_pitch,
                    dst_row_pitch,
                    dst_slice_pitch,
                ],
            )
        }?;
        let (sb, db) = (src.storage.clone(), dst.storage.clone());
        let work = Work::Gpu(Box::new(move |r| r.copy_buffer(&sb, &db, &regions)));
        let mut k = keep(&src);
        k.push(dst.clone());
        let ev = q.enqueue(CL_COMMAND_COPY_BUFFER_RECT, &waits, work, k);
        // SAFETY: forwarded.
        unsafe { finish_enqueue(ev, CL_FALSE, event) }
    })
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
