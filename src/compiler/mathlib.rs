//! The math library: precise OpenCL C math built-ins from libclc, linked into programs at the
//! LLVM level.
//!
//! Most `OpenCL.std` math instructions have a `GLSL.std.450` counterpart, but Vulkan's
//! precision requirements for those (and llvmpipe's implementation) are far looser than the
//! OpenCL C full-profile ULP limits (OpenCL C 3.0 section 7.4, table "ULP values"), and some
//! (`erf`, `lgamma`, `remquo`...) have none. libclc's SPIR-V build (`libclc-15`,
//! `/usr/lib/clc/spirv64-mesa3d-.spv`) carries OpenCL C implementations of them that meet the
//! limits, written in terms of simpler built-ins (`fabs`, `mad`, `mul_hi`, `trunc`...) whose
//! `GLSL.std.450` or core lowerings are exact.
//!
//! # How
//! Once per process ([`library`]), or once per libclc file through the on-disk cache
//! (`mathlib-<hash>.bin` next to the program entries), vkcl prepares a bitcode library:
//! 1. `llvm-spirv-15 -r` of libclc's module (its functions come back under their OpenCL C
//!    mangled names, `_Z3sinf`, and its uses of simple built-ins as declarations);
//! 2. `llvm-link-15` with the shim `mathlib.cl` (`half_log` and friends as the full-precision
//!    functions; the generic-address-space pointer variants of `sincos`, `lgamma_r`, `remquo`
//!    that libclc 15 lacks) and `mathlib_half.cl` (the `half` math built-ins of
//!    [`HALF_FUNCTIONS`], through float), compiled by clang;
//! 3. `llvm-extract-15 --recursive` of the 32-bit float variants (scalar and vectors) of
//!    [`FUNCTIONS`] and the scalar `double` variants of [`DOUBLE_FUNCTIONS`] (the shim's
//!    loops, not unrolled, are their vector variants), with what they call and
//!    the constant tables, so that every other built-in keeps vkcl's own lowering (a program
//!    without `double` pulls in no `double` function: the link takes only what is used);
//! 4. `noinline` and libclc's module metadata (`opencl.ocl.version` 1.2, which llvm-spirv
//!    refuses to mix with the program's) removed, and libclc's own `mad` calls renamed to the
//!    shim's exact `__vkcl_mad_exact` ([`exact_mad`]), in text form with opt-15.
//!
//! # Contraction
//! A program's `mad` and the `a * b + c` clang contracts (`llvm.fmuladd`) reach lowering as
//! OpenCL.std `mad`, which the driver may fuse (`lower/extinst.rs`). The library's arithmetic
//! must not be fused: libclc's `mad` calls become calls of `__vkcl_mad_exact` here, once per
//! process, and the shim is `FP_CONTRACT OFF`, so that after linking and inlining every
//! multiply and add of the library is a plain `OpFMul`/`OpFAdd`, which lowering decorates
//! `NoContraction` (`lower/entry.rs`). Where an operation came from decides, not its shape.
//!
//! Each program whose bitcode names one of these functions ([`needs_library`], a byte search)
//! is then linked with it (`llvm-link-15 --only-needed --internalize`) before opt, which
//! inlines the bodies: only the functions used are pulled in, and unused ones never reach
//! SPIR-V. libclc's tables become program-scope `__constant` data.
//!
//! `VKCL_LIBCLC` names another libclc SPIR-V module; `VKCL_LIBCLC=0` (or a missing file)
//! switches the library off, and the built-ins keep their `GLSL.std.450` lowering (Vulkan
//! precision, see `lower/extinst.rs`). `native_*` and the other `half_*` functions always use
//! `GLSL.std.450`, whose precision is within their limits.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::error::BuildFailure;
use super::tools::{run, Tools};

/// The built-ins whose 32-bit float variants (scalar and vectors) come from libclc: those whose
/// `GLSL.std.450` lowering misses the OpenCL limits on llvmpipe, or that have no lowering at
/// all.
#[rustfmt::skip]
pub(crate) const FUNCTIONS: &[&str] = &[
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atan2pi", "atanh",
    "atanpi", "cbrt", "cos", "cosh", "erf", "exp", "exp2", "exp10", "expm1", "fma",
    "fmod", "lgamma", "lgamma_r", "log", "log10", "log1p", "log2", "pow", "pown", "powr",
    "remainder", "remquo", "rootn", "sin", "sincos", "sinh", "tan", "tanh",
];

/// The built-ins whose scalar `double` variants come from libclc (the vector variants are
/// loops over them in `mathlib.cl`, not unrolled, to keep llvmpipe's compile time down): every
/// transcendental function, since Vulkan's `GLSL.std.450` takes no 64-bit operands for those,
/// and the others whose lowering does not meet the double limits.
#[rustfmt::skip]
pub(crate) const DOUBLE_FUNCTIONS: &[&str] = &[
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atan2pi", "atanh",
    "atanpi", "cbrt", "cos", "cosh", "erf", "erfc", "exp", "exp2", "exp10", "expm1",
    "fmod", "lgamma", "lgamma_r", "log", "log10", "log1p", "log2", "pow", "pown", "powr",
    "remainder", "remquo", "rootn", "sin", "sincos", "sinh", "tan", "tanh",
];

/// libclc functions taken as scalars only and renamed `__clc_<name>` (float) and
/// `__clc_<name>_d` (double): `mathlib.cl` defines the built-in (every width) around them.
const RENAMED: &[&str] = &["sinpi", "cospi", "tanpi", "erfc"];

/// The libclc double functions renamed `__clc_<name>_d` for `mathlib.cl` to wrap: the
/// [`RENAMED`] ones but `erfc` (libclc's double `erfc` is precise: taken under its own name
/// through [`DOUBLE_FUNCTIONS`]), and the odd functions whose libclc double variant returns
/// +0 for -0 (`mathlib.cl` item 8; tests/fp64.rs `fp64_odd_functions_keep_the_sign_of_zero`).
#[rustfmt::skip]
const RENAMED_DOUBLE: &[&str] = &[
    "sinpi", "cospi", "tanpi", "atan", "atanpi", "erf", "expm1", "sin", "tan",
];

/// The built-ins `mathlib.cl` defines (names only; their signatures are OpenCL C's).
#[rustfmt::skip]
const SHIM_FUNCTIONS: &[&str] = &[
    "half_log", "half_log2", "half_log10", "half_powr", "sinpi", "cospi", "tanpi", "tgamma",
    "erfc",
];

/// The `half` built-ins `mathlib_half.cl` defines (every width; names only): the float
/// function of the same name, in float, rounded to half once (see there).
#[rustfmt::skip]
const HALF_FUNCTIONS: &[&str] = &[
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi", "cbrt",
    "ceil", "cos", "cosh", "cospi", "erf", "erfc", "exp", "exp2", "exp10", "expm1", "fabs",
    "floor", "lgamma", "log", "log2", "log10", "log1p", "logb", "rint", "round", "rsqrt", "sin",
    "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma", "trunc", "atan2", "atan2pi",
    "copysign", "fdim", "fmax", "fmin", "fmod", "hypot", "maxmag", "minmag", "pow", "powr",
    "remainder", "ldexp", "pown", "rootn", "ilogb", "fma", "nextafter", "sincos", "fract",
    "modf", "frexp", "lgamma_r", "remquo",
];

/// The shim compiled with the library (see the module doc): `mathlib.cl`, then the `half`
/// functions of `mathlib_half.cl`.
const SHIM: &str = concat!(include_str!("mathlib.cl"), include_str!("mathlib_half.cl"));

/// libclc's 64-bit SPIR-V build in Debian's `libclc-15`.
const DEFAULT_LIBCLC: &str = "/usr/lib/clc/spirv64-mesa3d-.spv";

/// The libclc module to use: `$VKCL_LIBCLC` when set (`0`, `off` or empty: none), else
/// [`DEFAULT_LIBCLC`]; `None` when the file does not exist.
fn libclc_path() -> Option<PathBuf> {
    let p = match std::env::var_os("VKCL_LIBCLC") {
        Some(v) if v.is_empty() || v == "0" || v == "off" => return None,
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(DEFAULT_LIBCLC),
    };
    p.is_file().then_some(p)
}

/// Identity of the math library for cache keys: the libclc file's path, size and modification
/// time, the shim and this module's function list; `none` when the library is off.
pub(crate) fn identity() -> String {
    let Some(p) = libclc_path() else {
        return "none".into();
    };
    let (len, mtime) = std::fs::metadata(&p)
        .map(|m| {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            (m.len(), t)
        })
        .unwrap_or((0, 0));
    format!(
        "{}:{len}:{mtime}:{}:{}:{}",
        p.display(),
        FUNCTIONS.join(","),
        DOUBLE_FUNCTIONS.join(","),
        SHIM.len() + HALF_FUNCTIONS.len()
    )
}

/// The mangled-name prefixes (`_Z3sin`) of every library function.
fn prefixes() -> &'static [String] {
    static P: OnceLock<Vec<String>> = OnceLock::new();
    P.get_or_init(|| {
        FUNCTIONS
            .iter()
            .chain(DOUBLE_FUNCTIONS)
            .chain(SHIM_FUNCTIONS)
            .map(|f| format!("_Z{}{f}", f.len()))
            .chain(HALF_FUNCTIONS.iter().flat_map(|f| {
                ["Dh", "Dv2_Dh", "Dv3_Dh", "Dv4_Dh", "Dv8_Dh", "Dv16_Dh"]
                    .map(|t| format!("_Z{}{f}{t}", f.len()))
            }))
            .collect()
    })
}

/// Whether LLVM bitcode `bc` may call a library function: its string table holds a name
/// starting with one's mangled prefix (false positives only cost a link).
pub(crate) fn needs_library(bc: &[u8]) -> bool {
    // Every prefix starts with `_Z`: only the places holding one are compared.
    (0..bc.len().saturating_sub(1))
        .filter(|&i| bc[i] == b'_' && bc[i + 1] == b'Z')
        .any(|i| prefixes().iter().any(|p| bc[i..].starts_with(p.as_bytes())))
}

/// The prepared library (bitcode), built at the first call of the process or read from the
/// on-disk cache; `None` when libclc is off or missing, or its preparation failed (logged;
/// programs then keep the `GLSL.std.450` lowering).
pub(crate) fn library(tools: &Tools) -> Option<&'static [u8]> {
    static LIB: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    LIB.get_or_init(|| {
        let path = libclc_path()?;
        let cache_file = crate::util::config::config().cache.as_ref().map(|c| {
            let k = super::cache::key(&[
                identity().as_bytes(),
                SHIM.as_bytes(),
                tools.identity().as_bytes(),
                include_str!("mathlib.rs").as_bytes(),
            ]);
            let hex: String = k[..16].iter().map(|b| format!("{b:02x}")).collect();
            c.dir.join(format!("mathlib-{hex}.bin"))
        });
        if let Some(bytes) = cache_file
            .as_deref()
            .and_then(crate::util::cache_file::load_file)
        {
            return Some(bytes);
        }
        let started = std::time::Instant::now();
        match prepare(tools, &path) {
            Ok(bytes) => {
                tracing::debug!(
                    ms = started.elapsed().as_millis() as u64,
                    bytes = bytes.len(),
                    "math library prepared from {}",
                    path.display()
                );
                if let Some(f) = &cache_file {
                    if let Some(dir) = f.parent() {
                        let _ = std::fs::create_dir_all(dir);
                    }
                    if let Err(e) = crate::util::cache_file::store_file(f, "", &bytes) {
                        tracing::debug!("cannot cache the math library: {e}");
                    }
                }
                Some(bytes)
            }
            Err(e) => {
                tracing::warn!(
                    "libclc math library unavailable ({}), math built-ins use GLSL.std.450: {}",
                    path.display(),
                    e.log
                );
                // Also without VKCL_LOG (once per process): the math built-ins of every
                // program now have Vulkan's precision, not OpenCL's, which must not go unseen.
                eprintln!(
                    "vkcl: the math library could not be built from {} (a vkcl bug; VKCL_LOG=warn \
                     shows why): math built-ins fall back to Vulkan precision",
                    path.display()
                );
                None
            }
        }
    })
    .as_deref()
}

fn path_arg(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Runs `tool` with `args`; a failure becomes a `CompileError` naming `what`.
fn step(tool: &Path, args: &[String], what: &str) -> Result<(), BuildFailure> {
    let out = run(tool, args, None).map_err(BuildFailure::compile)?;
    if out.success {
        Ok(())
    } else {
        Err(BuildFailure::compile(format!(
            "{what} failed: {}",
            out.stderr.trim()
        )))
    }
}

/// Builds the library from libclc module `libclc` (steps 1 to 4 of the module doc).
fn prepare(tools: &Tools, libclc: &Path) -> Result<Vec<u8>, BuildFailure> {
    let dir = tempfile::Builder::new()
        .prefix("vkcl-mathlib")
        .tempdir()
        .map_err(|e| BuildFailure::compile(format!("temporary directory: {e}")))?;
    let d = dir.path();
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let clc = d.join("libclc.bc");
    step(
        &tools.llvm_spirv,
        &["-r".into(), path_arg(libclc), "-o".into(), path_arg(&clc)],
        "llvm-spirv -r of libclc",
    )?;
    let shim_src = d.join("mathlib.cl");
    std::fs::write(&shim_src, SHIM).map_err(io)?;
    let shim = d.join("shim.ll");
    let args: Vec<String> = [
        "-x",
        "cl",
        "-cl-std=CL3.0",
        "-target",
        "spir64",
        "-emit-llvm",
        "-S",
        "-O2",
        "-Xclang",
        "-disable-llvm-passes",
        "-cl-no-stdinc",
        "-Xclang",
        "-cl-ext=+__opencl_c_generic_address_space,+cl_khr_fp64,+__opencl_c_fp64,+cl_khr_fp16",
        "-fno-color-diagnostics",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([path_arg(&shim_src), "-o".into(), path_arg(&shim)])
    .collect();
    step(&tools.clang, &args, "clang of mathlib.cl")?;
    let shim_ir = clean_ir(&std::fs::read_to_string(&shim).map_err(io)?);
    std::fs::write(&shim, shim_ir).map_err(io)?;
    let extract = extract_tool(tools);
    let selected = d.join("selected.bc");
    let mut args = vec!["--recursive".to_string(), "--rglob=.".to_string()];
    for f in FUNCTIONS {
        // Scalar float (`f`, then the other parameters) or float vectors (`Dv4_f`).
        args.push(format!("--rfunc=^_Z{}{f}(f|Dv[0-9]+_f)", f.len()));
    }
    for f in DOUBLE_FUNCTIONS {
        // Scalar double only: the shim's loops are the vector variants.
        args.push(format!("--rfunc=^_Z{}{f}d", f.len()));
    }
    for f in RENAMED {
        args.push(format!("--func=_Z{}{f}f", f.len()));
    }
    for f in RENAMED_DOUBLE {
        args.push(format!("--func=_Z{}{f}d", f.len()));
    }
    args.extend([path_arg(&clc), "-o".into(), path_arg(&selected)]);
    step(&extract, &args, "llvm-extract of the math functions")?;
    let text = d.join("selected.ll");
    step(
        &tools.opt,
        &[
            "-passes=verify".into(),
            "-S".into(),
            path_arg(&selected),
            "-o".into(),
            path_arg(&text),
        ],
        "opt -S of the math library",
    )?;
    let mut ir = clean_ir(&std::fs::read_to_string(&text).map_err(io)?);
    for f in RENAMED {
        ir = ir.replace(&format!("@_Z{}{f}f(", f.len()), &format!("@__clc_{f}("));
    }
    for f in RENAMED_DOUBLE {
        ir = ir.replace(&format!("@_Z{}{f}d(", f.len()), &format!("@__clc_{f}_d("));
    }
    let ir = exact_mad(&ir);
    if ir.contains("@llvm.fmuladd.") {
        // Not in Debian's libclc-15; another VKCL_LIBCLC module's contracted arithmetic would
        // reach SPIR-V as a `mad` the driver may fuse.
        tracing::warn!("the libclc module has llvm.fmuladd: its arithmetic may be fused");
    }
    std::fs::write(&text, ir).map_err(io)?;
    let clc_selected = d.join("clc-selected.bc");
    step(
        &tools.opt,
        &[
            "-passes=verify".into(),
            path_arg(&text),
            "-o".into(),
            path_arg(&clc_selected),
        ],
        "opt of the math library",
    )?;
    let lib = d.join("mathlib.bc");
    step(
        &tools.llvm_link,
        &[
            path_arg(&clc_selected),
            path_arg(&shim),
            "-o".into(),
            path_arg(&lib),
        ],
        "llvm-link of libclc and the shim",
    )?;
    std::fs::read(&lib).map_err(io)
}

/// The shim's exact multiply-add (`mathlib.cl`): a product and a sum, each rounded.
const EXACT_MAD: &str = "__vkcl_mad_exact";

/// Textual IR `ir` with its calls and declarations of OpenCL C `mad` (`_Z3madfff`,
/// `_Z3madDv4_fS_S_`, any element type) renamed to the shim's [`EXACT_MAD`] of the same
/// parameters (`_Z16__vkcl_mad_exactfff`): only the name changes, so the rest of the mangled
/// name stays valid. `mad24`, `mad_hi` and `mad_sat` are other names (`_Z5mad24`...).
pub(crate) fn exact_mad(ir: &str) -> String {
    ir.replace("@_Z3mad", &format!("@_Z{}{EXACT_MAD}", EXACT_MAD.len()))
}

/// `llvm-extract-15` next to opt-15 (same LLVM installation), else on `PATH`.
fn extract_tool(tools: &Tools) -> PathBuf {
    let real = std::fs::canonicalize(&tools.opt).unwrap_or_else(|_| tools.opt.clone());
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().replace("opt", "llvm-extract"))
        .unwrap_or_else(|| "llvm-extract-15".into());
    let sibling = real.with_file_name(&name);
    if sibling.is_file() {
        sibling
    } else {
        PathBuf::from("llvm-extract-15")
    }
}

/// Textual IR of the extracted library without `noinline` attributes (libclc marks every
/// function so; vkcl needs everything inlined) and without the module's named metadata other
/// than `llvm.module.flags` (libclc's `opencl.ocl.version` differs from the program's, which
/// llvm-spirv refuses, and its `opencl.used.optional.core.features` names `cl_doubles`).
pub(crate) fn clean_ir(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        if line.starts_with('!') && !line.starts_with("!llvm.module.flags") {
            // Named metadata (`!name = !{...}`); numbered nodes (`!0 = ...`) stay.
            let named = line[1..]
                .chars()
                .next()
                .is_some_and(|c| !c.is_ascii_digit());
            if named {
                continue;
            }
        }
        if line.starts_with("attributes #") {
            out.push_str(&line.replace(" noinline", ""));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// `bc` linked with the library when it may call a library function (see the module doc),
/// written into `dir`; otherwise `bc` itself.
///
/// # Errors
/// `CompileError` with llvm-link's message when linking fails.
pub(crate) fn link(tools: &Tools, dir: &Path, bc: &Path) -> Result<PathBuf, BuildFailure> {
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let bytes = std::fs::read(bc).map_err(io)?;
    if !needs_library(&bytes) {
        return Ok(bc.to_path_buf());
    }
    let Some(lib) = library(tools) else {
        return Ok(bc.to_path_buf());
    };
    let lib_path = dir.join("mathlib.bc");
    std::fs::write(&lib_path, lib).map_err(io)?;
    let linked = dir.join("with-mathlib.bc");
    step(
        &tools.llvm_link,
        &[
            "--only-needed".into(),
            "--internalize".into(),
            path_arg(bc),
            path_arg(&lib_path),
            "-o".into(),
            path_arg(&linked),
        ],
        "linking the math library",
    )?;
    Ok(linked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_ir_drops_noinline_and_named_metadata() {
        let ir = "define void @f() #1 {\n  ret void\n}\nattributes #1 = { noinline nounwind }\n\
                  !opencl.ocl.version = !{!0}\n!llvm.module.flags = !{!1}\n!0 = !{i32 1, i32 2}\n";
        let c = clean_ir(ir);
        assert!(c.contains("attributes #1 = { nounwind }"), "{c}");
        assert!(!c.contains("opencl.ocl.version"), "{c}");
        assert!(c.contains("!llvm.module.flags"), "{c}");
        assert!(c.contains("!0 = !{i32 1, i32 2}"), "{c}");
    }

    /// A shim that does not compile would leave every program on the GLSL.std.450 lowering
    /// (a warning at run time, imprecise math): it must build wherever libclc is installed.
    #[test]
    fn the_library_is_prepared_from_libclc_and_the_shim() {
        let Some(path) = libclc_path() else { return };
        let tools = crate::compiler::find_tools().expect("clang-15 and friends");
        let lib = match prepare(&tools, &path) {
            Ok(lib) => lib,
            Err(e) => panic!("the math library does not build: {}", e.log),
        };
        // No `mad` the driver may fuse (see "Contraction" in the module doc): libclc's calls
        // renamed, none contracted by clang. Names are plain bytes in the string table.
        let has = |n: &[u8]| lib.windows(n.len()).any(|w| w == n);
        assert!(
            !has(b"_Z3mad"),
            "libclc's mad calls are left as OpenCL C mad"
        );
        assert!(
            !has(b"llvm.fmuladd"),
            "the library has contracted arithmetic"
        );
        assert!(has(b"_Z16__vkcl_mad_exactfff"));
    }

    #[test]
    fn exact_mad_renames_only_mad() {
        let ir = "%1 = call spir_func float @_Z3madfff(float %a, float %b, float %c)\n\
                  declare spir_func <4 x double> @_Z3madDv4_dS_S_(<4 x double>)\n\
                  %2 = call spir_func i32 @_Z5mad24iii(i32 %x, i32 %y, i32 %z)\n\
                  %3 = call spir_func i32 @_Z6mad_hiiii(i32 %x, i32 %y, i32 %z)\n";
        let r = exact_mad(ir);
        assert!(r.contains("@_Z16__vkcl_mad_exactfff(float %a"), "{r}");
        assert!(
            r.contains("@_Z16__vkcl_mad_exactDv4_dS_S_(<4 x double>)"),
            "{r}"
        );
        assert!(
            r.contains("@_Z5mad24iii(") && r.contains("@_Z6mad_hiiii("),
            "{r}"
        );
        assert!(!r.contains("@_Z3mad"), "{r}");
    }

    #[test]
    fn needs_library_finds_mangled_names() {
        assert!(needs_library(b"xx_Z3sinfyy"));
        assert!(needs_library(b"_Z8half_logDv4_f"));
        assert!(!needs_library(b"_Z10native_sinf _Z4fabsf"));
        assert!(needs_library(b"_Z4fabsDv4_Dh"));
        assert!(needs_library(b"_Z3fmaDhDhDh"));
        assert!(!needs_library(b"_Z4fabsDv4_f"));
    }
}
