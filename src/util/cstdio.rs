//! The C library's `printf` machinery, one conversion at a time, and its `stdout` stream.
//!
//! Formatting goes through libc's `snprintf` rather than Rust's formatter: C99 conversions
//! (`%a`, `%g` with its trailing-zero rules, `#` alternative forms, `(nil)` for a null `%p`, ...)
//! then come out exactly as the host C library writes them, which is what applications and the
//! conformance tests compare with.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

extern "C" {
    /// The C library's standard output stream (glibc, musl: a global `FILE *`).
    static mut stdout: *mut libc::FILE;
}

/// One argument of a C conversion.
#[derive(Clone, Copy, Debug)]
pub enum CArg<'a> {
    /// For `d i` with the `ll` length modifier, and `c` (passed as an `int`).
    Signed(i64),
    /// For `o u x X` with `ll`.
    Unsigned(u64),
    /// For `f F e E g G a A`.
    Double(f64),
    /// For `s`.
    Str(&'a CStr),
    /// For `p`.
    Pointer(u64),
}

/// Formats one conversion `spec` (a complete C conversion such as `"%-08.3lld"`, whose
/// argument type matches `arg`) with the C library's `snprintf`. Returns `None` when `spec`
/// contains a NUL or the C library reports an error (a width over `INT_MAX`).
pub fn format_one(spec: &str, arg: CArg<'_>) -> Option<String> {
    let fmt = CString::new(spec).ok()?;
    let mut buf = vec![0u8; 128];
    for _ in 0..2 {
        let (p, n) = (buf.as_mut_ptr() as *mut c_char, buf.len());
        // SAFETY: `buf` has `n` writable bytes; `fmt` is NUL-terminated and its one
        // conversion takes exactly the argument type passed (the caller's contract, checked
        // by the variant: `lld`/`c` take long long/int, `llu` unsigned long long, floating
        // conversions double, `s` a NUL-terminated string, `p` a pointer).
        let r: c_int = unsafe {
            match arg {
                CArg::Signed(v) => libc::snprintf(p, n, fmt.as_ptr(), v as libc::c_longlong),
                CArg::Unsigned(v) => libc::snprintf(p, n, fmt.as_ptr(), v as libc::c_ulonglong),
                CArg::Double(v) => libc::snprintf(p, n, fmt.as_ptr(), v),
                CArg::Str(s) => libc::snprintf(p, n, fmt.as_ptr(), s.as_ptr()),
                CArg::Pointer(v) => libc::snprintf(p, n, fmt.as_ptr(), v as usize as *const c_void),
            }
        };
        let r = usize::try_from(r).ok()?;
        if r < buf.len() {
            buf.truncate(r);
            return Some(String::from_utf8_lossy(&buf).into_owned());
        }
        buf = vec![0u8; r + 1];
    }
    None
}

/// Writes `bytes` to the C library's `stdout` stream and flushes it, so that the text comes out
/// in order with the application's own C output (and lands where a `freopen` or `dup2` of
/// stdout sends it).
pub fn write_stdout(bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    // SAFETY: `stdout` is the C library's stream, valid for the life of the process; stdio
    // locks it per call; `bytes` is valid for its length.
    unsafe {
        let out = stdout;
        libc::fwrite(bytes.as_ptr() as *const c_void, 1, bytes.len(), out);
        libc::fflush(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_match_c() {
        assert_eq!(format_one("%+5lld", CArg::Signed(42)).unwrap(), "  +42");
        assert_eq!(format_one("%#llx", CArg::Unsigned(255)).unwrap(), "0xff");
        assert_eq!(format_one("%.1a", CArg::Double(1.5)).unwrap(), "0x1.8p+0");
        assert_eq!(format_one("%g", CArg::Double(100000.0)).unwrap(), "100000");
        assert_eq!(format_one("%g", CArg::Double(1e6)).unwrap(), "1e+06");
        assert_eq!(format_one("%4s", CArg::Str(c"ab")).unwrap(), "  ab");
        assert_eq!(format_one("%c", CArg::Signed(65)).unwrap(), "A");
        let long = format_one("%300lld", CArg::Signed(1)).unwrap();
        assert_eq!(long.len(), 300);
        assert!(long.ends_with(" 1"));
    }
}
