//! Large host-to-host copies split across a few threads: the CPU side of staged reads
//! (a staging buffer copied out to the application's memory), where one core's copy
//! bandwidth, not the device's, bounds the transfer on GPUs with a fast bus.

use super::config::config;

/// The smallest part a thread copies: a thread's start costs tens of microseconds, the time
/// to copy about 256 KiB, so a part is twice that.
const PART: usize = 512 << 10;

/// Copies of fewer bytes than this (two parts) stay on the calling thread.
const SPLIT_FROM: usize = 2 * PART;

/// Copies `len` bytes from `from` to `to`, with up to `config().host_copy_threads` threads
/// (`VKCL_HOST_COPY_THREADS`) for copies of at least [`SPLIT_FROM`] bytes, each thread one
/// contiguous part; returns once every byte is copied.
///
/// # Safety
/// `from` valid for reads and `to` for writes of `len` bytes, the two not overlapping, and
/// neither touched by anyone else during the call.
pub unsafe fn copy(from: *const u8, to: *mut u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe { copy_with(from, to, len, config().host_copy_threads) }
}

/// [`copy`] with up to `threads` threads.
///
/// # Safety
/// As [`copy`].
unsafe fn copy_with(from: *const u8, to: *mut u8, len: usize, threads: usize) {
    let threads = threads.clamp(1, 64);
    if threads == 1 || len < SPLIT_FROM {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(from, to, len) };
        return;
    }
    // Parts of whole cache lines, as many as `threads`, each at least PART.
    let parts = threads.min(len / PART).max(1);
    let step = len.div_ceil(parts).next_multiple_of(64);
    let (from, to) = (from as usize, to as usize);
    std::thread::scope(|s| {
        let mut at = step;
        while at < len {
            let n = step.min(len - at);
            s.spawn(move || {
                // SAFETY: a disjoint part of the caller's ranges.
                unsafe {
                    std::ptr::copy_nonoverlapping((from + at) as *const u8, (to + at) as *mut u8, n)
                }
            });
            at += step;
        }
        // SAFETY: the first part, on this thread.
        unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to as *mut u8, step.min(len)) };
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_every_byte_of_odd_lengths_with_any_thread_count() {
        for threads in [1, 2, 3, 4, 8] {
            for len in [
                0usize,
                1,
                63,
                (1 << 20) - 1,
                1 << 20,
                (3 << 20) + 17,
                9 << 20,
            ] {
                let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
                let mut dst = vec![0xA5u8; len + 1];
                // SAFETY: both vectors hold at least len bytes.
                unsafe { super::copy_with(src.as_ptr(), dst.as_mut_ptr(), len, threads) };
                assert!(dst[..len] == src[..], "length {len}, {threads} threads");
                assert_eq!(
                    dst[len], 0xA5,
                    "byte past the end, length {len}, {threads} threads"
                );
            }
        }
    }
}
