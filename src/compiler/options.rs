//! OpenCL build options (OpenCL 3.0 API spec, 5.8.6 "Compiler Options") -> clang arguments.

use super::caps::DeviceCaps;
use super::error::BuildFailure;

/// Build options after parsing: what clang gets, and the language version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ParsedOptions {
    /// Arguments for clang (macros, include paths, warnings, `-cl-*` math flags, `-cl-std`).
    pub clang_args: Vec<String>,
    /// OpenCL C version times 100 (120 = OpenCL C 1.2, the default).
    pub cl_std: u32,
    /// `-cl-opt-disable`: no spirv-opt on the lowered modules.
    pub opt_disable: bool,
}

/// Options passed to clang as they are.
const PASS_THROUGH: &[&str] = &[
    "-w",
    "-Werror",
    "-cl-single-precision-constant",
    "-cl-denorms-are-zero",
    "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-mad-enable",
    "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only",
    "-cl-fast-relaxed-math",
    "-cl-uniform-work-group-size",
];

/// Options accepted and ignored: optimisation is always on (the structurizer needs the
/// optimised form), kernel argument info is always kept.
const IGNORED: &[&str] = &[
    "-cl-opt-disable",
    "-cl-kernel-arg-info",
    "-cl-no-subgroup-ifp",
    "-cl-strict-aliasing",
    "-g",
];

/// Splits `options` into words, honouring single and double quotes.
fn tokenize(options: &str) -> Result<Vec<String>, BuildFailure> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in options.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(BuildFailure::options(format!(
            "unterminated quote in build options `{options}`"
        )));
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// The `-cl-ext` list that enables exactly what the device supports.
fn extension_list(caps: &DeviceCaps, cl_std: u32) -> String {
    let mut ext = vec![
        "-all",
        "+cl_khr_byte_addressable_store",
        "+cl_khr_global_int32_base_atomics",
        "+cl_khr_global_int32_extended_atomics",
        "+cl_khr_local_int32_base_atomics",
        "+cl_khr_local_int32_extended_atomics",
    ];
    if caps.fp64 {
        ext.push("+cl_khr_fp64");
    }
    if caps.fp16 {
        ext.push("+cl_khr_fp16");
    }
    if caps.int64_atomics {
        ext.push("+cl_khr_int64_base_atomics");
        ext.push("+cl_khr_int64_extended_atomics");
    }
    if cl_std >= 300 {
        ext.push("+__opencl_c_int64");
        if caps.fp64 {
            ext.push("+__opencl_c_fp64");
        }
    }
    format!("-cl-ext={}", ext.join(","))
}

/// Parses OpenCL build options.
///
/// # Errors
/// [`BuildFailure`] of kind `InvalidOptions` naming the first option that is not an OpenCL
/// compiler option, or a missing value after `-D`/`-I`.
pub(crate) fn parse(options: &str, caps: &DeviceCaps) -> Result<ParsedOptions, BuildFailure> {
    let words = tokenize(options)?;
    let mut clang_args = Vec::new();
    let mut cl_std = 120;
    let mut opt_disable = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        if w == "-D" || w == "-I" {
            let Some(value) = words.get(i) else {
                return Err(BuildFailure::options(format!("missing value after `{w}`")));
            };
            i += 1;
            clang_args.push(w.to_string());
            clang_args.push(if w == "-I" {
                absolute(value)
            } else {
                value.clone()
            });
        } else if let Some(v) = w.strip_prefix("-D") {
            clang_args.push(format!("-D{v}"));
        } else if let Some(v) = w.strip_prefix("-I") {
            clang_args.push(format!("-I{}", absolute(v)));
        } else if let Some(v) = w.strip_prefix("-cl-std=") {
            cl_std = match v {
                "CL1.0" => 100,
                "CL1.1" => 110,
                "CL1.2" => 120,
                "CL3.0" => 300,
                _ => {
                    return Err(BuildFailure::options(format!(
                    "unsupported OpenCL C version in `{w}` (supported: CL1.0, CL1.1, CL1.2, CL3.0)"
                )))
                }
            };
        } else if PASS_THROUGH.contains(&w) {
            opt_disable |= w == "-cl-opt-disable";
            clang_args.push(w.to_string());
        } else if IGNORED.contains(&w) {
            // accepted, no effect
        } else {
            return Err(BuildFailure::options(format!("invalid build option `{w}`")));
        }
    }
    let std = match cl_std {
        100 => "CL1.0",
        110 => "CL1.1",
        300 => "CL3.0",
        _ => "CL1.2",
    };
    clang_args.push(format!("-cl-std={std}"));
    clang_args.push("-Xclang".into());
    clang_args.push(extension_list(caps, cl_std));
    Ok(ParsedOptions {
        clang_args,
        cl_std,
        opt_disable,
    })
}

/// Makes an include path absolute against the current directory, as the application meant it.
fn absolute(path: &str) -> String {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        return path.to_string();
    }
    match std::env::current_dir() {
        Ok(cwd) => cwd.join(p).to_string_lossy().into_owned(),
        Err(_) => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes_quotes() {
        let t = tokenize(r#"-D A="x y" -I 'a b'  -w"#).unwrap();
        assert_eq!(t, vec!["-D", "A=x y", "-I", "a b", "-w"]);
    }

    #[test]
    fn rejects_unknown() {
        let e = parse("-cl-mad-enable -foo", &DeviceCaps::default()).unwrap_err();
        assert_eq!(e.kind, super::super::BuildFailureKind::InvalidOptions);
        assert!(e.log.contains("-foo"));
        assert!(parse("-D", &DeviceCaps::default()).is_err());
        assert!(parse("-cl-std=CL2.0", &DeviceCaps::default()).is_err());
    }

    #[test]
    fn translates() {
        let p = parse("-DN=4 -cl-std=CL3.0 -Werror", &DeviceCaps::default()).unwrap();
        assert_eq!(p.cl_std, 300);
        assert!(p.clang_args.contains(&"-DN=4".to_string()));
        assert!(p.clang_args.contains(&"-cl-std=CL3.0".to_string()));
    }
}
