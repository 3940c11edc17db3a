//! `printf` output (OpenCL C 3.0 section 6.15.14): the per-launch printf buffer and the host
//! side that decodes its records and prints them to the C library's `stdout` when the command
//! completes, before its completion is reported (section 6.15.14.3: the output of a kernel is
//! flushed by the time `clFinish`, `clWaitForEvents` or a callback learns of its completion).
//!
//! The buffer layout and record format are the kernel ABI's (module doc of `compiler`).

use std::ffi::CString;
use std::sync::Arc;

use super::device::Device;
use super::error::{refused, ClResult};
use crate::backend::vulkan::memory::Buffer;
use crate::compiler::{parse_format, Length, Piece, PrintfArg, PrintfCall, PrintfInfo, Spec};
use crate::util::cstdio::{format_one, write_stdout, CArg};

/// `CL_DEVICE_PRINTF_BUFFER_SIZE`: bytes of records one launch can print (the full profile's
/// minimum, 1 MB).
pub const PRINTF_BUFFER_SIZE: u32 = 1024 * 1024;

/// Offset of the first record (after the `used` and `capacity` words), bytes.
const RECORDS: u64 = 8;

/// The printf buffer of one launch (or of one recorded command of a command buffer).
pub struct PrintfBuffer {
    /// Device memory: `used`, `capacity`, records, overflow slot.
    pub buf: Arc<Buffer>,
    capacity: u32,
    info: Arc<PrintfInfo>,
}

impl PrintfBuffer {
    /// A buffer for a kernel with printf calls `info` on `device`, `used` set to 0.
    /// Errors: `CL_OUT_OF_RESOURCES` when the memory cannot be allocated (the enqueue fails
    /// with it: the buffer is an implementation resource, not a kernel argument).
    pub fn new(device: &Device, info: &PrintfInfo) -> ClResult<PrintfBuffer> {
        let capacity = PRINTF_BUFFER_SIZE;
        let size = RECORDS + u64::from(capacity) + u64::from(info.max_record_bytes());
        let buf = Buffer::new(device.vk()?, size).map_err(|e| refused("printf buffer", e))?;
        let mut head = [0u8; 8];
        head[4..].copy_from_slice(&capacity.to_le_bytes());
        buf.write_bytes(0, &head);
        Ok(PrintfBuffer {
            buf: Arc::new(buf),
            capacity,
            info: Arc::new(info.clone()),
        })
    }

    /// Device address of the buffer (the launch header's `printf_buffer`).
    pub fn address(&self) -> u64 {
        self.buf.address
    }

    /// Bytes from the start of the buffer to the `used` word that a run must reset to 0 on
    /// the device (`(offset, bytes)` for a fill).
    pub fn counter_range(&self) -> (u64, u64) {
        (0, 4)
    }

    /// The text of the records written so far (call after the launch completed).
    pub fn text(&self) -> Vec<u8> {
        self.text_of(&self.buf)
    }

    /// The text of the records in `src`: this buffer or a snapshot of it (a device copy of
    /// its first `8 + capacity` bytes or more).
    fn text_of(&self, src: &Buffer) -> Vec<u8> {
        let mut used = [0u8; 4];
        if !src.read_bytes(0, &mut used) {
            return Vec::new();
        }
        let n = u32::from_le_bytes(used).min(self.capacity) as usize;
        let mut bytes = vec![0u8; n];
        if !src.read_bytes(RECORDS, &mut bytes) {
            return Vec::new();
        }
        decode(&self.info, &bytes)
    }

    /// Prints the records written so far to `stdout` and flushes it (call after the launch
    /// completed).
    pub fn print(&self) {
        write_stdout(&self.text());
    }

    /// Prints the records of `snapshot`, a device copy of this buffer taken when a run
    /// completed (command buffers), to `stdout` and flushes it.
    pub fn print_from(&self, snapshot: &Buffer) {
        write_stdout(&self.text_of(snapshot));
    }
}

/// The text of the records in `bytes` (the record area up to `used`), in record order. A
/// record that is cut short or names no call ends the decoding.
pub fn decode(info: &PrintfInfo, bytes: &[u8]) -> Vec<u8> {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    let mut out = Vec::new();
    let mut pos = 0usize;
    while let (Some(size), Some(id)) = (word(pos), word(pos + 4)) {
        let size = size as usize;
        let Some(call) = info.calls.get(id as usize) else {
            break;
        };
        if size < 8 || !size.is_multiple_of(4) || pos + size > bytes.len() {
            break;
        }
        let words: Vec<u32> = (pos + 8..pos + size).step_by(4).filter_map(word).collect();
        out.extend(format_call(call, &info.strings, &words).into_bytes());
        pos += size;
    }
    out
}

/// Formats one call from its argument `words` (the record after its two header words).
pub fn format_call(call: &PrintfCall, strings: &[String], words: &[u32]) -> String {
    let pieces = match parse_format(&call.format) {
        Ok(p) => p,
        // Not a format OpenCL C allows (undefined behaviour): print it as it is.
        Err(_) => return call.format.clone(),
    };
    let mut out = String::new();
    let mut arg = 0usize;
    let mut at = 0usize;
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(&t),
            Piece::Conv(spec) => {
                let Some(a) = call.args.get(arg) else {
                    // Fewer arguments than conversions: undefined; stop here.
                    break;
                };
                let n = a.words() as usize;
                let Some(w) = words.get(at..at + n) else {
                    break;
                };
                out.push_str(&format_arg(&spec, a, w, strings));
                arg += 1;
                at += n;
            }
        }
    }
    out
}

/// Formats argument `arg` (its record words `w`) with conversion `spec`; vector conversions
/// print every component with the scalar conversion, separated by commas.
fn format_arg(spec: &Spec, arg: &PrintfArg, w: &[u32], strings: &[String]) -> String {
    match *arg {
        PrintfArg::Int { bytes, lanes } | PrintfArg::Float { bytes, lanes } => {
            let float = matches!(arg, PrintfArg::Float { .. });
            let step = if bytes == 8 { 2 } else { 1 };
            (0..lanes as usize)
                .map(|k| {
                    let raw = if step == 2 {
                        u64::from(w[2 * k]) | (u64::from(w[2 * k + 1]) << 32)
                    } else {
                        u64::from(w[k])
                    };
                    format_scalar(spec, raw, bytes, float)
                })
                .collect::<Vec<_>>()
                .join(",")
        }
        PrintfArg::Str => {
            let s = strings.get(w[0] as usize).map_or("", |s| s.as_str());
            let s = CString::new(s).unwrap_or_default();
            let c = c_spec(spec, "", 's');
            format_one(&c, CArg::Str(&s)).unwrap_or_default()
        }
        PrintfArg::Ptr => {
            let raw = u64::from(w[0]) | (u64::from(w[1]) << 32);
            if spec.conv == 'p' {
                format_one(&c_spec(spec, "", 'p'), CArg::Pointer(raw)).unwrap_or_default()
            } else {
                format_scalar(spec, raw, 8, false)
            }
        }
    }
}

/// The C conversion for `spec` with C length modifier `length` and conversion `conv`.
fn c_spec(spec: &Spec, length: &str, conv: char) -> String {
    let mut s = String::from("%");
    s.push_str(&spec.flags);
    if let Some(w) = spec.width {
        s.push_str(&w.to_string());
    }
    if let Some(p) = spec.precision {
        s.push('.');
        s.push_str(&p.to_string());
    }
    s.push_str(length);
    s.push(conv);
    s
}

/// Formats one scalar component: `raw` holds its `bytes` bytes, a float when `float`.
fn format_scalar(spec: &Spec, raw: u64, bytes: u8, float: bool) -> String {
    let bits = u32::from(bytes) * 8;
    let signed = |v: u64| -> i64 {
        if bits >= 64 {
            v as i64
        } else {
            ((v << (64 - bits)) as i64) >> (64 - bits)
        }
    };
    let as_f64 = || -> f64 {
        if float {
            match bytes {
                2 => half_to_f64(raw as u16),
                4 => f64::from(f32::from_bits(raw as u32)),
                _ => f64::from_bits(raw),
            }
        } else {
            signed(raw) as f64
        }
    };
    let as_bits = || -> u64 {
        if float {
            // An integer conversion of a floating-point argument (undefined): its value.
            as_f64() as i64 as u64
        } else {
            raw
        }
    };
    match spec.conv {
        'd' | 'i' => {
            let v = signed(as_bits());
            let v = match spec.length {
                Length::Hh => i64::from(v as i8),
                Length::H => i64::from(v as i16),
                Length::None | Length::Hl => i64::from(v as i32),
                Length::L => v,
            };
            format_one(&c_spec(spec, "ll", spec.conv), CArg::Signed(v)).unwrap_or_default()
        }
        'o' | 'u' | 'x' | 'X' => {
            let v = as_bits();
            let v = match spec.length {
                Length::Hh => u64::from(v as u8),
                Length::H => u64::from(v as u16),
                Length::None | Length::Hl => u64::from(v as u32),
                Length::L => v,
            };
            format_one(&c_spec(spec, "ll", spec.conv), CArg::Unsigned(v)).unwrap_or_default()
        }
        'c' => {
            let v = i64::from(as_bits() as u8);
            format_one(&c_spec(spec, "", 'c'), CArg::Signed(v)).unwrap_or_default()
        }
        'p' => format_one(&c_spec(spec, "", 'p'), CArg::Pointer(raw)).unwrap_or_default(),
        's' => String::new(),
        conv => format_one(&c_spec(spec, "", conv), CArg::Double(as_f64())).unwrap_or_default(),
    }
}

/// IEEE 754 binary16 -> f64 (exact).
fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    let mag = match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    };
    sign * mag
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(format: &str, args: Vec<PrintfArg>) -> PrintfCall {
        PrintfCall {
            format: format.into(),
            args,
        }
    }

    #[test]
    fn formats_scalars_vectors_and_strings() {
        let strings = vec!["foo".to_string()];
        let c = call(
            "%d|%hhx|%5.2f|%s|%v2hld|%c|%%|%ld\n",
            vec![
                PrintfArg::Int { bytes: 4, lanes: 1 },
                PrintfArg::Int { bytes: 1, lanes: 1 },
                PrintfArg::Float { bytes: 8, lanes: 1 },
                PrintfArg::Str,
                PrintfArg::Int { bytes: 4, lanes: 2 },
                PrintfArg::Int { bytes: 4, lanes: 1 },
                PrintfArg::Int { bytes: 8, lanes: 1 },
            ],
        );
        let d = 2.5f64.to_bits();
        let l = (-10_000_000_000i64) as u64;
        let words = [
            (-7i32) as u32,
            0xfa,
            d as u32,
            (d >> 32) as u32,
            0,
            1,
            (-2i32) as u32,
            b'x' as u32,
            l as u32,
            (l >> 32) as u32,
        ];
        assert_eq!(
            format_call(&c, &strings, &words),
            "-7|fa| 2.50|foo|1,-2|x|%|-10000000000\n"
        );
    }

    #[test]
    fn decodes_records_in_order_and_stops_at_garbage() {
        let info = PrintfInfo {
            calls: vec![call("a%d\n", vec![PrintfArg::Int { bytes: 4, lanes: 1 }])],
            strings: vec![],
        };
        let mut bytes = Vec::new();
        for v in [1u32, 2] {
            for w in [12u32, 0, v] {
                bytes.extend(w.to_le_bytes());
            }
        }
        bytes.extend([99u32, 7].iter().flat_map(|w| w.to_le_bytes()));
        assert_eq!(decode(&info, &bytes), b"a1\na2\n");
    }

    #[test]
    fn half_values() {
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0xc000), -2.0);
        assert_eq!(half_to_f64(0x0001), 2f64.powi(-24));
        assert!(half_to_f64(0x7e00).is_nan());
    }
}
