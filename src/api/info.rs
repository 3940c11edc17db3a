//! The one writer behind every `clGet*Info` query: size checks and `param_value_size_ret`.

use crate::core::error::{ClError, ClResult};
use opencl_sys::CL_INVALID_VALUE;
use std::ffi::c_void;

/// The output arguments of a `clGet*Info` call.
pub struct InfoOut {
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
}

impl InfoOut {
    /// Wraps the `param_value_size`, `param_value` and `param_value_size_ret` arguments.
    pub fn new(size: usize, value: *mut c_void, size_ret: *mut usize) -> Self {
        InfoOut {
            size,
            value,
            size_ret,
        }
    }

    /// Writes raw bytes. Errors: `CL_INVALID_VALUE` if `param_value` is not NULL and
    /// `param_value_size` is smaller than the value (OpenCL 3.0, every clGet*Info).
    pub fn bytes(self, data: &[u8]) -> ClResult<()> {
        if !self.value.is_null() {
            if self.size < data.len() {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // SAFETY: the application guarantees `param_value` holds `param_value_size` bytes,
            // and we checked that the data fits.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), self.value as *mut u8, data.len())
            };
        }
        if !self.size_ret.is_null() {
            // SAFETY: a non-NULL size_ret points to a size_t.
            unsafe { self.size_ret.write(data.len()) };
        }
        Ok(())
    }

    /// Writes one plain value (`cl_uint`, `cl_ulong`, a handle, a bitfield...).
    pub fn scalar<T: Copy>(self, v: T) -> ClResult<()> {
        self.slice(std::slice::from_ref(&v))
    }

    /// Writes an array of plain values.
    pub fn slice<T: Copy>(self, v: &[T]) -> ClResult<()> {
        // SAFETY: T is Copy plain data; viewing it as bytes is sound for writing out.
        let bytes = unsafe {
            std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v))
        };
        self.bytes(bytes)
    }

    /// Writes a NUL-terminated string.
    pub fn string(self, s: &str) -> ClResult<()> {
        let mut b = Vec::with_capacity(s.len() + 1);
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        self.bytes(&b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_checks() {
        let mut out = [0u32; 2];
        let mut ret = 0usize;
        InfoOut::new(8, out.as_mut_ptr() as *mut c_void, &mut ret)
            .slice(&[7u32, 9])
            .unwrap();
        assert_eq!((out, ret), ([7, 9], 8));
        let e = InfoOut::new(4, out.as_mut_ptr() as *mut c_void, &mut ret).slice(&[1u32, 2]);
        assert_eq!(e, Err(ClError(CL_INVALID_VALUE)));
        InfoOut::new(0, std::ptr::null_mut(), &mut ret)
            .string("abc")
            .unwrap();
        assert_eq!(ret, 4);
    }
}
