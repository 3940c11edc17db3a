//! OpenCL C `printf` (OpenCL C 3.0 section 6.15.14): the format-string grammar and the
//! reflection data the host needs to decode the records a kernel writes.
//!
//! The record layout in the printf buffer is part of the kernel ABI (module doc of
//! `compiler`); this module only describes what each record holds.

/// One argument of a `printf` call, as the kernel stores it in its record: every component of
/// at most 32 bits takes one little-endian `u32` word (8- and 16-bit values zero-extended,
/// `half` as its 16 bits), every 64-bit component two words (low, high).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PrintfArg {
    /// An integer scalar or vector: `bytes` per component (1, 2, 4, 8), `lanes` components.
    Int { bytes: u8, lanes: u8 },
    /// A floating-point scalar or vector (`half`, `float`, `double`).
    Float { bytes: u8, lanes: u8 },
    /// A `%s` argument: one word, an index into [`PrintfInfo::strings`].
    Str,
    /// A pointer (`%p`): two words, its 64-bit device address (0 for a pointer to private or
    /// local memory, which has no device address).
    Ptr,
}

impl PrintfArg {
    /// Words this argument takes in a record.
    pub fn words(&self) -> u32 {
        match *self {
            PrintfArg::Int { bytes, lanes } | PrintfArg::Float { bytes, lanes } => {
                u32::from(lanes) * if bytes == 8 { 2 } else { 1 }
            }
            PrintfArg::Str => 1,
            PrintfArg::Ptr => 2,
        }
    }
}

/// One `printf` call site of a kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PrintfCall {
    /// The format string (without its terminating NUL).
    pub format: String,
    /// The arguments after the format, in order.
    pub args: Vec<PrintfArg>,
}

impl PrintfCall {
    /// Bytes of one record of this call: the two header words plus the arguments.
    pub fn record_bytes(&self) -> u32 {
        4 * (2 + self.args.iter().map(PrintfArg::words).sum::<u32>())
    }
}

/// Everything the host needs to print a kernel's records. Empty when the kernel has no printf.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PrintfInfo {
    /// The call sites; a record's second word indexes this list.
    pub calls: Vec<PrintfCall>,
    /// Constant strings passed to `%s`, indexed by the word of a [`PrintfArg::Str`].
    pub strings: Vec<String>,
}

impl PrintfInfo {
    /// Whether the kernel calls printf at all.
    pub fn is_used(&self) -> bool {
        !self.calls.is_empty()
    }

    /// The largest record of any call, bytes (0 without printf).
    pub fn max_record_bytes(&self) -> u32 {
        self.calls
            .iter()
            .map(PrintfCall::record_bytes)
            .max()
            .unwrap_or(0)
    }
}

/// The length modifier of a conversion (OpenCL C 6.15.14.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    None,
    /// `hh`: char.
    Hh,
    /// `h`: short (or half for vectors of `%f` and friends).
    H,
    /// `hl`: int or float, only with a vector specifier.
    Hl,
    /// `l`: long or double; also OpenCL C 3.1's `z` and `t` (64-bit `size_t`, `ptrdiff_t`).
    L,
}

/// One conversion specification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The flags (`-+ #0`), in source order.
    pub flags: String,
    pub width: Option<u32>,
    pub precision: Option<u32>,
    /// `vN`: the argument is a vector of N components (2, 3, 4, 8, 16).
    pub vector: Option<u8>,
    pub length: Length,
    /// The conversion character (`d i o u x X f F e E g G a A c s p`).
    pub conv: char,
}

/// A piece of a parsed format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text printed as is (`%%` already turned into `%`).
    Text(String),
    /// A conversion that consumes one argument.
    Conv(Spec),
}

/// Parses an OpenCL C format string.
///
/// # Errors
/// A message for a conversion the OpenCL C grammar does not allow (an unknown conversion
/// character, `*` widths, a vector specifier without a length modifier, `hl` without a vector
/// specifier, an incomplete conversion at the end).
pub fn parse_format(fmt: &str) -> Result<Vec<Piece>, String> {
    let b = fmt.as_bytes();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c != b'%' {
            // Copy one UTF-8 character.
            let ch = fmt[i..].chars().next().unwrap_or('\u{fffd}');
            text.push(ch);
            i += ch.len_utf8().max(1);
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'%') {
            text.push('%');
            i += 1;
            continue;
        }
        let start = i - 1;
        let mut flags = String::new();
        while let Some(&f) = b.get(i) {
            if b"-+ #0".contains(&f) {
                flags.push(f as char);
                i += 1;
            } else {
                break;
            }
        }
        let number = |i: &mut usize| {
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            (*i > s).then(|| fmt[s..*i].parse::<u32>().unwrap_or(u32::MAX))
        };
        let width = number(&mut i);
        let precision = if b.get(i) == Some(&b'.') {
            i += 1;
            Some(number(&mut i).unwrap_or(0))
        } else {
            None
        };
        let vector = if b.get(i) == Some(&b'v') {
            i += 1;
            match number(&mut i) {
                Some(n @ (2 | 3 | 4 | 8 | 16)) => Some(n as u8),
                _ => return Err(format!("bad vector specifier in `{}`", &fmt[start..])),
            }
        } else {
            None
        };
        let length = match (b.get(i), b.get(i + 1)) {
            (Some(b'h'), Some(b'h')) => {
                i += 2;
                Length::Hh
            }
            (Some(b'h'), Some(b'l')) => {
                i += 2;
                Length::Hl
            }
            (Some(b'h'), _) => {
                i += 1;
                Length::H
            }
            (Some(b'l'), _) => {
                i += 1;
                Length::L
            }
            // OpenCL C 3.1 (6.15.14.2.1): `z` (size_t) and `t` (ptrdiff_t), both 64-bit on
            // vkcl's devices (CL_DEVICE_ADDRESS_BITS 64), so `l`'s width. Earlier versions
            // leave them undefined, so vkcl takes them in every version.
            (Some(b'z' | b't'), _) => {
                i += 1;
                Length::L
            }
            _ => Length::None,
        };
        let Some(&conv) = b.get(i) else {
            return Err(format!("incomplete conversion `{}`", &fmt[start..]));
        };
        i += 1;
        let conv = conv as char;
        if !"diouxXfFeEgGaAcsp".contains(conv) {
            return Err(format!("unknown conversion `{}`", &fmt[start..i]));
        }
        if vector.is_some() && length == Length::None {
            return Err(format!(
                "a vector conversion needs a length modifier: `{}`",
                &fmt[start..i]
            ));
        }
        if vector.is_none() && length == Length::Hl {
            return Err(format!(
                "`hl` is only valid with a vector specifier: `{}`",
                &fmt[start..i]
            ));
        }
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(&mut text)));
        }
        out.push(Piece::Conv(Spec {
            flags,
            width,
            precision,
            vector,
            length,
            conv,
        }));
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// The conversions of `fmt` in order (one per argument).
///
/// # Errors
/// As [`parse_format`].
pub fn conversions(fmt: &str) -> Result<Vec<Spec>, String> {
    Ok(parse_format(fmt)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Conv(s) => Some(s),
            Piece::Text(_) => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flags_vectors_and_percent() {
        let p = parse_format("a%%b %-+08.3v4hlf %hhx %s%c %ld %p").unwrap();
        assert_eq!(p[0], Piece::Text("a%b ".into()));
        let Piece::Conv(s) = &p[1] else { panic!() };
        assert_eq!(
            (
                s.flags.as_str(),
                s.width,
                s.precision,
                s.vector,
                s.length,
                s.conv
            ),
            ("-+0", Some(8), Some(3), Some(4), Length::Hl, 'f')
        );
        let convs = conversions("a%%b %-+08.3v4hlf %hhx %s%c %ld %p").unwrap();
        let chars: String = convs.iter().map(|s| s.conv).collect();
        assert_eq!(chars, "fxscdp");
        assert_eq!(convs[1].length, Length::Hh);
        assert_eq!(convs[4].length, Length::L);
        // OpenCL C 3.1's size_t and ptrdiff_t length modifiers.
        let convs = conversions("%zu %5td %zx").unwrap();
        assert!(convs.iter().all(|s| s.length == Length::L));
        assert_eq!(convs.iter().map(|s| s.conv).collect::<String>(), "udx");
    }

    #[test]
    fn rejects_what_opencl_forbids() {
        assert!(parse_format("%v4f").is_err());
        assert!(parse_format("%hld").is_err());
        assert!(parse_format("%*d").is_err());
        assert!(parse_format("%v5hd").is_err());
        assert!(parse_format("abc %").is_err());
    }

    #[test]
    fn record_sizes() {
        let call = PrintfCall {
            format: String::new(),
            args: vec![
                PrintfArg::Int { bytes: 8, lanes: 2 },
                PrintfArg::Float { bytes: 4, lanes: 3 },
                PrintfArg::Str,
                PrintfArg::Ptr,
            ],
        };
        assert_eq!(call.record_bytes(), 4 * (2 + 4 + 3 + 1 + 2));
    }
}
