//! The IL library (`il_library.cl`): the OpenCL C built-ins that `llvm-spirv-15 -r` names
//! when it reads an IL program (`clCreateProgramWithIL`) but that source programs get from
//! the prelude as macros, or that exist only as SPIR-V instructions, so that nothing would
//! define them for IL: the work-group collective functions (SPIR-V `OpGroup*` of `Workgroup`
//! scope read back as `work_group_reduce_add` and the rest; without the library they reached
//! the lowering as `OpGroupIAdd` of `Workgroup` scope and the build failed) and the
//! `SPV_KHR_integer_dot_product` instructions (read back as `__spirv_SDotKHR_Rint` and the
//! rest, which llvm-spirv-15 refused to write again: "RequiresExtension").
//!
//! The library is compiled by clang with the device's truth header and the prelude (so only
//! the overloads of the device's types exist), to textual IR without named metadata (as the
//! math library's shim: `mathlib::clean_ir`), once per process and truth header, and linked
//! into an IL program's bitcode (`llvm-link-15 --only-needed --internalize`) when the
//! bitcode names one of its functions ([`needs_library`], a byte search), before the same
//! opt pipeline as source programs inlines it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::caps::DeviceCaps;
use super::error::BuildFailure;
use super::tools::{run, Tools};

/// The library's OpenCL C source (part of the program cache's key).
pub(crate) const SOURCE: &str = include_str!("il_library.cl");

/// Whether bitcode `bc` names a function of the library.
pub(crate) fn needs_library(bc: &[u8]) -> bool {
    [&b"work_group_"[..], b"DotKHR_R", b"DotAccSatKHR_R"]
        .iter()
        .any(|name| bc.windows(name.len()).any(|w| w == *name))
}

fn path_arg(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The library's textual IR for a device of `caps` (compiled once per truth header), without
/// named metadata.
fn library(tools: &Tools, caps: &DeviceCaps, dir: &Path) -> Result<Vec<u8>, BuildFailure> {
    static BUILT: Mutex<Option<HashMap<String, Vec<u8>>>> = Mutex::new(None);
    // Compiled as OpenCL C 3.0 (below).
    let truth = super::options::truth_header(caps, 300);
    if let Some(bc) = BUILT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&truth))
    {
        return Ok(bc.clone());
    }
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let truth_path = dir.join("vkcl-il-device.h");
    std::fs::write(&truth_path, &truth).map_err(io)?;
    let prelude = dir.join("vkcl-il-prelude.h");
    std::fs::write(&prelude, include_str!("prelude.cl")).map_err(io)?;
    let out_path = dir.join("il-library.ll");
    let mut args: Vec<String> = [
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
        "-fno-color-diagnostics",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(super::options::extension_list(caps));
    for h in [&truth_path, &prelude] {
        args.push("-include".into());
        args.push(path_arg(h));
    }
    args.extend(["-".into(), "-o".into(), path_arg(&out_path)]);
    let out = run(&tools.clang, &args, Some(SOURCE.as_bytes())).map_err(BuildFailure::compile)?;
    if !out.success {
        return Err(BuildFailure::compile(format!(
            "vkcl's IL library does not compile: {}",
            out.stderr.trim()
        )));
    }
    // Without the module's named metadata: its `opencl.ocl.version` (3.0) differs from the
    // IL program's, which llvm-spirv refuses ("OCL version mismatch").
    let text = std::fs::read_to_string(&out_path).map_err(io)?;
    let bc = super::mathlib::clean_ir(&text).into_bytes();
    BUILT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(truth, bc.clone());
    Ok(bc)
}

/// `bc` linked with the library when it needs it (see the module doc), in `dir`; `bc`
/// itself otherwise.
///
/// # Errors
/// `CompileError` when the library does not compile or llvm-link fails.
pub(crate) fn link(
    tools: &Tools,
    dir: &Path,
    bc: &Path,
    caps: &DeviceCaps,
) -> Result<PathBuf, BuildFailure> {
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    if !needs_library(&std::fs::read(bc).map_err(io)?) {
        return Ok(bc.to_path_buf());
    }
    let lib = dir.join("il-library-linked-in.ll");
    std::fs::write(&lib, library(tools, caps, dir)?).map_err(io)?;
    let linked = dir.join("with-il-library.bc");
    let args = [
        "--only-needed".to_string(),
        "--internalize".to_string(),
        path_arg(bc),
        path_arg(&lib),
        "-o".to_string(),
        path_arg(&linked),
    ];
    let out = run(&tools.llvm_link, &args, None).map_err(BuildFailure::compile)?;
    if !out.success {
        return Err(BuildFailure::compile(format!(
            "linking vkcl's IL library failed: {}",
            out.stderr.trim()
        )));
    }
    Ok(linked)
}
