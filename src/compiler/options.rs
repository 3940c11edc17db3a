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
    /// `-cl-opt-disable`: no spirv-opt on the lowered modules, and every `mad` (the program's
    /// own and the contracted `a * b + c`) rounded twice rather than left for the driver to
    /// fuse.
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

/// Options accepted and ignored: kernel argument info is always kept. `-cl-opt-disable` is
/// handled apart: LLVM's optimisation stays on (the structurizer needs the optimised form),
/// but `mad` is not left for the driver to fuse ([`ParsedOptions::opt_disable`]).
const IGNORED: &[&str] = &[
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

/// The names (extensions and `__opencl_c_*` features) a device with `caps` reports, when
/// [`DeviceCaps::opencl_c_names`] does not list them.
fn derived_names(caps: &DeviceCaps) -> Vec<String> {
    let mut v = vec![
        "cl_khr_byte_addressable_store",
        "cl_khr_global_int32_base_atomics",
        "cl_khr_global_int32_extended_atomics",
        "cl_khr_local_int32_base_atomics",
        "cl_khr_local_int32_extended_atomics",
        "__opencl_c_int64",
        "__opencl_c_atomic_order_acq_rel",
        "__opencl_c_atomic_order_seq_cst",
        "__opencl_c_atomic_scope_device",
        "__opencl_c_atomic_scope_all_devices",
        "__opencl_c_work_group_collective_functions",
        "__opencl_c_program_scope_global_variables",
        "__opencl_c_subgroups",
        "cl_khr_extended_bit_ops",
        "cl_khr_integer_dot_product",
        "__opencl_c_integer_dot_product_input_4x8bit",
        "__opencl_c_integer_dot_product_input_4x8bit_packed",
    ];
    if caps.fp64 {
        v.extend(["cl_khr_fp64", "__opencl_c_fp64"]);
    }
    if caps.fp16 {
        v.push("cl_khr_fp16");
    }
    if caps.int64_atomics {
        v.extend(["cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"]);
    }
    let sg = &caps.subgroup_ops;
    for (name, on) in [
        ("cl_khr_subgroup_extended_types", true),
        ("cl_khr_subgroup_non_uniform_vote", sg.vote),
        ("cl_khr_subgroup_ballot", sg.ballot),
        ("cl_khr_subgroup_non_uniform_arithmetic", sg.arithmetic),
        ("cl_khr_subgroup_shuffle", sg.shuffle),
        ("cl_khr_subgroup_shuffle_relative", sg.shuffle_relative),
        ("cl_khr_subgroup_clustered_reduce", sg.clustered),
        ("cl_khr_subgroup_rotate", sg.shuffle),
    ] {
        if on {
            v.push(name);
        }
    }
    v.into_iter().map(String::from).collect()
}

/// The extensions and OpenCL C features the program may see (see [`DeviceCaps::opencl_c_names`]).
pub(crate) fn device_names(caps: &DeviceCaps) -> Vec<String> {
    caps.opencl_c_names
        .clone()
        .unwrap_or_else(|| derived_names(caps))
}

/// The `-cl-ext` list: exactly the extensions and OpenCL C features the device reports
/// (`CL_DEVICE_EXTENSIONS`, `CL_DEVICE_OPENCL_C_FEATURES`). clang-15 declares a built-in only
/// while its extension or feature is enabled, so nothing beyond the device's claims may be
/// enabled: `double` without `cl_khr_fp64` is a build error (clang: "use of type 'double'
/// requires cl_khr_fp64 support"), never a kernel whose `sqrt(double)` silently resolves to
/// the `float` overload.
pub(crate) fn extension_list(caps: &DeviceCaps) -> String {
    let mut ext = vec!["-all".to_string()];
    ext.extend(
        device_names(caps)
            .iter()
            .filter(|n| n.starts_with("cl_") || n.starts_with("__opencl_c_"))
            .map(|n| format!("+{n}")),
    );
    format!("-cl-ext={}", ext.join(","))
}

/// Macros that clang or its OpenCL header (`opencl-c-base.h`) define for the SPIR target
/// whatever `-cl-ext` says: each is removed unless the device reports it.
const HEADER_DEFINED: &[&str] = &[
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_read_write_images",
    "__opencl_c_images",
    "__opencl_c_3d_image_writes",
    "__opencl_c_pipes",
    "__opencl_c_generic_address_space",
    "__opencl_c_device_enqueue",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_subgroups",
    "__opencl_c_fp64",
    "__opencl_c_int64",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "__opencl_c_ext_fp16_global_atomic_load_store",
    "__opencl_c_ext_fp16_local_atomic_load_store",
    "__opencl_c_ext_fp16_global_atomic_add",
    "__opencl_c_ext_fp16_local_atomic_add",
    "__opencl_c_ext_fp16_global_atomic_min_max",
    "__opencl_c_ext_fp16_local_atomic_min_max",
    "__opencl_c_ext_fp32_global_atomic_add",
    "__opencl_c_ext_fp32_local_atomic_add",
    "__opencl_c_ext_fp32_global_atomic_min_max",
    "__opencl_c_ext_fp32_local_atomic_min_max",
    "__opencl_c_ext_fp64_global_atomic_add",
    "__opencl_c_ext_fp64_local_atomic_add",
    "__opencl_c_ext_fp64_global_atomic_min_max",
    "__opencl_c_ext_fp64_local_atomic_min_max",
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_rotate",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
];

/// A header included before the program (after clang's own OpenCL header) that makes the
/// predefined macros tell the truth about the device: `__IMAGE_SUPPORT__` only when the device
/// reports `__opencl_c_images` (`VKCL_IMAGES=1`; otherwise `CL_DEVICE_IMAGE_SUPPORT` is
/// false), and of the extension and feature macros only those the device reports.
///
/// `cl_std` is the program's OpenCL C version times 100 ([`ParsedOptions::cl_std`]). OpenCL C
/// 3.1 (OpenCL 3.1 devices, [`DeviceCaps::opencl_version`]) is clang-15's OpenCL C 3.0, which
/// this header then names 3.1 (`__OPENCL_C_VERSION__` 310; clang's own header has made its
/// 3.0 declarations by then): the language differs from 3.0 only in built-ins of extensions
/// that every 3.1 device reports, so their macros are defined and clang declares them, and in
/// printf's `z` and `t` length modifiers (compiler/printf.rs).
pub(crate) fn truth_header(caps: &DeviceCaps, cl_std: u32) -> String {
    let names = device_names(caps);
    let mut s = String::from(
        "// vkcl: predefined macros as the device reports them (CL_DEVICE_IMAGE_SUPPORT,\n\
         // CL_DEVICE_EXTENSIONS, CL_DEVICE_OPENCL_C_FEATURES).\n#undef __IMAGE_SUPPORT__\n",
    );
    // OpenCL C 3.0 section 6.12 (predefined macros): __OPENCL_VERSION__ is the OpenCL version
    // of the device (CL_DEVICE_VERSION); clang leaves it to the implementation.
    s.push_str(&format!(
        "#ifndef __OPENCL_VERSION__\n#define __OPENCL_VERSION__ {}\n#endif\n",
        caps.opencl_version * 10
    ));
    // OpenCL C 3.1 (unified OpenCL C specification, "Preprocessor Directives and Macros"):
    // CL_VERSION_3_1 is 310 where OpenCL C 3.1 is supported (clang-15 knows versions up to
    // 3.0), and __OPENCL_C_VERSION__ the -cl-std version.
    if caps.opencl_version >= 31 {
        s.push_str("#define CL_VERSION_3_1 310\n");
    }
    if cl_std == 310 {
        s.push_str("#undef __OPENCL_C_VERSION__\n#define __OPENCL_C_VERSION__ 310\n");
    }
    for m in HEADER_DEFINED {
        if !names.iter().any(|n| n == m) {
            s.push_str(&format!("#undef {m}\n"));
        }
    }
    // Images (`VKCL_IMAGES=1`): the device reports `__opencl_c_images`.
    if names.iter().any(|n| n == "__opencl_c_images") {
        s.push_str("#define __IMAGE_SUPPORT__ 1\n");
    }
    for m in PRELUDE_DEFINED {
        if names.iter().any(|n| n == m) {
            s.push_str(&format!("#ifndef {m}\n#define {m} 1\n#endif\n"));
        }
    }
    s
}

/// Extensions and features whose built-ins vkcl's prelude defines (`compiler/prelude.cl`):
/// their macros are defined whenever the device reports them, in every OpenCL C version
/// (clang-15's header defines them for OpenCL C 2.0 and later only).
const PRELUDE_DEFINED: &[&str] = &[
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
];

/// The OpenCL C versions of `-cl-std` a device with `caps` offers, for messages.
fn supported_versions(caps: &DeviceCaps) -> &'static str {
    if caps.opencl_version >= 31 {
        "CL1.0, CL1.1, CL1.2, CL3.0, CL3.1"
    } else {
        "CL1.0, CL1.1, CL1.2, CL3.0"
    }
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
                // OpenCL C 3.1 on OpenCL 3.1 devices (see truth_header).
                "CL3.1" if caps.opencl_version >= 31 => 310,
                // A valid option, but the device does not offer the version
                // (CL_DEVICE_OPENCL_C_ALL_VERSIONS): the compilation fails.
                "CL2.0" | "CL3.1" => {
                    return Err(BuildFailure::compile(format!(
                        "error: `{w}`: the device does not support OpenCL C {} \
                         (CL_DEVICE_OPENCL_C_ALL_VERSIONS: {})",
                        &v[2..],
                        supported_versions(caps)
                    )))
                }
                _ => {
                    return Err(BuildFailure::options(format!(
                        "invalid OpenCL C version in `{w}` (supported: {})",
                        supported_versions(caps)
                    )))
                }
            };
        } else if w == "-cl-opt-disable" {
            opt_disable = true;
        } else if PASS_THROUGH.contains(&w) {
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
        300 | 310 => "CL3.0",
        _ => "CL1.2",
    };
    clang_args.push(format!("-cl-std={std}"));
    clang_args.push("-Xclang".into());
    clang_args.push(extension_list(caps));
    Ok(ParsedOptions {
        clang_args,
        cl_std,
        opt_disable,
    })
}

/// Options of `clLinkProgram` after parsing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkOptions {
    /// `-create-library`: the result is a library (`CL_PROGRAM_BINARY_TYPE_LIBRARY`).
    pub create_library: bool,
    /// `-enable-link-options` (only with `-create-library`).
    pub enable_link_options: bool,
    /// The program linking options given (`-cl-denorms-are-zero`, ...).
    pub math: Vec<String>,
}

/// The program linking options of OpenCL 3.0 API 5.8.7.2. They change nothing vkcl's code
/// generation does after compilation (clang applied the compile options already), so they are
/// checked and recorded only.
const LINK_MATH_OPTIONS: &[&str] = &[
    "-cl-denorms-are-zero",
    "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only",
    "-cl-fast-relaxed-math",
    "-cl-no-subgroup-ifp",
];

/// Parses `clLinkProgram` options (OpenCL 3.0 API 5.8.7, "Linker Options").
///
/// # Errors
/// A message for an option that is not a linker option, or `-enable-link-options` without
/// `-create-library` (`CL_INVALID_LINKER_OPTIONS`).
pub fn parse_link(options: &str) -> Result<LinkOptions, String> {
    let words = tokenize(options).map_err(|e| e.log)?;
    let mut o = LinkOptions::default();
    for w in &words {
        match w.as_str() {
            "-create-library" => o.create_library = true,
            "-enable-link-options" => o.enable_link_options = true,
            m if LINK_MATH_OPTIONS.contains(&m) => o.math.push(m.to_string()),
            _ => return Err(format!("invalid linker option `{w}`")),
        }
    }
    // -enable-link-options can only be specified with -create-library.
    if o.enable_link_options && !o.create_library {
        return Err("`-enable-link-options` needs `-create-library`".into());
    }
    Ok(o)
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
        let e = parse("-cl-std=CL2.0", &DeviceCaps::default()).unwrap_err();
        assert_eq!(e.kind, super::super::BuildFailureKind::CompileError);
        let e = parse("-cl-std=CL9.9", &DeviceCaps::default()).unwrap_err();
        assert_eq!(e.kind, super::super::BuildFailureKind::InvalidOptions);
    }

    #[test]
    fn opt_disable_is_recorded_not_passed_on() {
        let o = parse("-cl-opt-disable -cl-mad-enable", &DeviceCaps::default()).unwrap();
        assert!(o.opt_disable);
        assert!(o.clang_args.iter().any(|a| a == "-cl-mad-enable"));
        assert!(!o.clang_args.iter().any(|a| a == "-cl-opt-disable"));
        assert!(
            !parse("-cl-mad-enable", &DeviceCaps::default())
                .unwrap()
                .opt_disable
        );
    }

    #[test]
    fn link_options() {
        let o = parse_link("-create-library -enable-link-options -cl-finite-math-only").unwrap();
        assert!(o.create_library && o.enable_link_options);
        assert_eq!(o.math, vec!["-cl-finite-math-only".to_string()]);
        assert!(parse_link("-enable-link-options").is_err());
        assert!(parse_link("-DX=1").is_err());
        assert_eq!(parse_link("").unwrap(), LinkOptions::default());
    }

    #[test]
    fn truth_header_follows_the_device() {
        let caps = DeviceCaps {
            opencl_c_names: Some(vec!["__opencl_c_int64".into()]),
            ..Default::default()
        };
        let h = truth_header(&caps, 120);
        assert!(h.contains("#undef __IMAGE_SUPPORT__"));
        assert!(h.contains("#define __OPENCL_VERSION__ 300"));
        assert!(h.contains("#undef __opencl_c_fp64"));
        assert!(h.contains("#undef __opencl_c_atomic_scope_device"));
        assert!(!h.contains("#undef __opencl_c_int64"));
        // Only what the device reports is enabled: no double without cl_khr_fp64.
        let ext = extension_list(&caps);
        assert_eq!(ext, "-cl-ext=-all,+__opencl_c_int64");
        let caps = DeviceCaps {
            opencl_c_names: Some(vec!["cl_khr_fp64".into(), "__opencl_c_fp64".into()]),
            ..Default::default()
        };
        assert_eq!(
            extension_list(&caps),
            "-cl-ext=-all,+cl_khr_fp64,+__opencl_c_fp64"
        );
        assert!(!truth_header(&caps, 300).contains("__opencl_c_fp64"));
        assert!(!truth_header(&caps, 300).contains("CL_VERSION_3_1"));
    }

    #[test]
    fn opencl_c_31_only_on_opencl_31_devices() {
        let e = parse("-cl-std=CL3.1", &DeviceCaps::default()).unwrap_err();
        assert_eq!(e.kind, super::super::BuildFailureKind::CompileError);
        let caps = DeviceCaps {
            opencl_version: 31,
            ..Default::default()
        };
        let p = parse("-cl-std=CL3.1", &caps).unwrap();
        assert_eq!(p.cl_std, 310);
        // clang-15 compiles it as OpenCL C 3.0; the truth header names it 3.1.
        assert!(p.clang_args.contains(&"-cl-std=CL3.0".to_string()));
        let h = truth_header(&caps, 310);
        assert!(h.contains("#define __OPENCL_VERSION__ 310"));
        assert!(h.contains("#define CL_VERSION_3_1 310"));
        assert!(h.contains("#define __OPENCL_C_VERSION__ 310"));
        let h = truth_header(&caps, 300);
        assert!(h.contains("#define CL_VERSION_3_1 310"));
        assert!(!h.contains("__OPENCL_C_VERSION__"));
    }

    #[test]
    fn translates() {
        let p = parse("-DN=4 -cl-std=CL3.0 -Werror", &DeviceCaps::default()).unwrap();
        assert_eq!(p.cl_std, 300);
        assert!(p.clang_args.contains(&"-DN=4".to_string()));
        assert!(p.clang_args.contains(&"-cl-std=CL3.0".to_string()));
    }
}
