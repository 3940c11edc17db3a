//! Front end: OpenCL C -> LLVM IR (clang-15) -> structured LLVM IR (opt-15) -> Kernel SPIR-V
//! (llvm-spirv-15). Kernel SPIR-V input (`clCreateProgramWithIL`) goes back to LLVM IR first so
//! that it takes the same structurization path.

use std::path::Path;

use super::caps::DeviceCaps;
use super::error::BuildFailure;
use super::options::ParsedOptions;
use super::tools::{run, Tools};

/// The LLVM passes run before translation. clang emits unoptimised IR
/// (`-disable-llvm-passes`) so that everything runs here under a data layout that declares the
/// native integer widths (`n8:16:32:64`): otherwise InstCombine narrows switch conditions to
/// odd widths (`i3`) that SPIR-V cannot express. The O2 pipeline inlines everything (huge
/// threshold: Vulkan has no use for calls with pointer arguments); then the CFG is made
/// structured (switches to branches, one return, reducible loops with one exit,
/// `structurizecfg`). Nothing after `structurizecfg` may change the CFG.
const OPT_PIPELINE: &str = "default<O2>,function(lowerswitch,mergereturn,fix-irreducible,\
unify-loop-exits,structurizecfg)";

/// The passes after the O2 pipeline (see [`OPT_PIPELINE`]).
const STRUCTURIZE: &str = "function(lowerswitch,mergereturn,fix-irreducible,unify-loop-exits,\
structurizecfg)";

/// The `-passes=` pipeline given to opt: [`OPT_PIPELINE`] with O2 spelled out (as opt prints
/// it, `-print-pipeline-passes`) and its one SimplifyCFG that turns switches into lookup tables
/// (`switch-to-lookup`) told not to. Those tables are constant arrays, or, for small tables,
/// "bitmaps": an integer of `cases * element bits` (`i24` for three `char` results, made from
/// an `if`/`else` chain on a `char`), shifted and truncated, which llvm-spirv-15 refuses
/// ("InvalidBitWidth"); the switch becomes branches (`lowerswitch`) instead. Asked of opt once
/// per opt path; when opt cannot print its pipeline, or prints no such pass, [`OPT_PIPELINE`].
fn opt_pipeline(tools: &Tools) -> String {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};
    static PIPELINES: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let map = PIPELINES.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(p) = map
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&tools.opt)
    {
        return p.clone();
    }
    let args = [
        "-passes=default<O2>".to_string(),
        "-print-pipeline-passes".to_string(),
        "-disable-output".to_string(),
        "-".to_string(),
    ];
    let Ok(out) = run(&tools.opt, &args, Some(b"")) else {
        // opt could not be started (a transient failure under load): the fallback for this
        // build only, not remembered for the process.
        return OPT_PIPELINE.to_string();
    };
    let printed = Some(out)
        .filter(|o| o.success)
        .map(|o| o.stdout.trim().to_string());
    let pipeline = match printed {
        Some(o2) if o2.matches(";switch-to-lookup;").count() == 1 => format!(
            "{},{STRUCTURIZE}",
            o2.replace(";switch-to-lookup;", ";no-switch-to-lookup;")
        ),
        _ => OPT_PIPELINE.to_string(),
    };
    map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(tools.opt.clone(), pipeline.clone());
    pipeline
}

/// OpenCL C definitions of built-ins without a Vulkan counterpart (async copies, prefetch),
/// included before every program.
const PRELUDE: &str = include_str!("prelude.cl");

/// The SPIR data layout plus native integer widths.
const DATA_LAYOUT: &str = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-\
v512:512-v1024:1024-n8:16:32:64";

/// Result of the front end.
pub(crate) struct FrontOutput {
    /// Structurized Kernel SPIR-V.
    pub spirv: Vec<u32>,
    /// Diagnostics (warnings) for the build log.
    pub log: String,
}

fn tmpdir() -> Result<tempfile::TempDir, BuildFailure> {
    tempfile::Builder::new()
        .prefix("vkcl-cc")
        .tempdir()
        .map_err(|e| BuildFailure::compile(format!("cannot create a temporary directory: {e}")))
}

fn path_arg(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Compiles OpenCL C to structurized Kernel SPIR-V.
///
/// # Errors
/// `CompileError` with clang's diagnostics (the source file is called `<source>`), or a tool's
/// message when a later step fails.
pub(crate) fn compile_c(
    tools: &Tools,
    source: &str,
    opts: &ParsedOptions,
    caps: &DeviceCaps,
) -> Result<FrontOutput, BuildFailure> {
    let dir = tmpdir()?;
    // Text IR, which the loop-vector guard reads (`phiguard`) without a disassembly.
    let (bc, log) = clang(tools, dir.path(), source, &[], opts, caps, true)?;
    let spirv = llvm_to_spirv(tools, dir.path(), &bc)?;
    Ok(FrontOutput { spirv, log })
}

/// A compiled object (`clCompileProgram`): LLVM bitcode as clang emits it, before any LLVM
/// pass, and clang's diagnostics.
pub(crate) struct ObjectOutput {
    /// LLVM bitcode (module of target `spir64`).
    pub bitcode: Vec<u8>,
    /// Diagnostics (warnings) for the build log.
    pub log: String,
}

/// Compiles OpenCL C to a compiled object. `headers` are the embedded headers of
/// `clCompileProgram`, (include name, contents): they are written under their names into a
/// temporary directory that is added to the include path.
///
/// # Errors
/// `CompileError` with clang's diagnostics, or when a header name leaves its directory
/// (absolute or with `..`).
pub(crate) fn compile_object(
    tools: &Tools,
    source: &str,
    headers: &[(String, String)],
    opts: &ParsedOptions,
    caps: &DeviceCaps,
) -> Result<ObjectOutput, BuildFailure> {
    let dir = tmpdir()?;
    let (bc, log) = clang(tools, dir.path(), source, headers, opts, caps, false)?;
    let bitcode = std::fs::read(&bc)
        .map_err(|e| BuildFailure::compile(format!("cannot read clang's output: {e}")))?;
    Ok(ObjectOutput { bitcode, log })
}

/// Runs clang on `source` in `dir`; returns the path of the LLVM module (bitcode, or text IR
/// with `text`) and the diagnostics.
fn clang(
    tools: &Tools,
    dir: &Path,
    source: &str,
    headers: &[(String, String)],
    opts: &ParsedOptions,
    caps: &DeviceCaps,
    text: bool,
) -> Result<(std::path::PathBuf, String), BuildFailure> {
    let io =
        |e: std::io::Error| BuildFailure::compile(format!("cannot write a temporary file: {e}"));
    let truth = dir.join("vkcl-device.h");
    std::fs::write(&truth, super::options::truth_header(caps, opts.cl_std)).map_err(io)?;
    let prelude = dir.join("vkcl-prelude.h");
    std::fs::write(&prelude, PRELUDE).map_err(io)?;
    let header_dir = dir.join("headers");
    for (name, text) in headers {
        let rel = Path::new(name);
        let escapes = rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)));
        if escapes || name.is_empty() {
            return Err(BuildFailure::compile(format!(
                "error: invalid header include name `{name}` (it must be a relative path \
                 without `..`)"
            )));
        }
        let path = header_dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&path, text).map_err(io)?;
    }
    let bc = dir.join(if text { "front.ll" } else { "front.bc" });
    let mut args: Vec<String> = [
        "-x",
        "cl",
        "-target",
        "spir64",
        "-emit-llvm",
        "-c",
        "-O2",
        "-Xclang",
        "-disable-llvm-passes",
        "-cl-kernel-arg-info",
        "-fno-color-diagnostics",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if text {
        args.push("-S".into());
    }
    args.extend(opts.clang_args.iter().cloned());
    if !headers.is_empty() {
        args.push(format!("-I{}", path_arg(&header_dir)));
    }
    args.push("-include".into());
    args.push(path_arg(&truth));
    args.push("-include".into());
    args.push(path_arg(&prelude));
    args.push("-".into());
    args.push("-o".into());
    args.push(path_arg(&bc));
    let out = run(&tools.clang, &args, Some(source.as_bytes())).map_err(BuildFailure::compile)?;
    // Diagnostics name `<source>` and embedded headers by their include names.
    let log = out
        .stderr
        .replace("<stdin>", "<source>")
        .replace(&format!("{}/", path_arg(&header_dir)), "")
        .replace(&format!("{}/", path_arg(dir)), "<vkcl>/");
    if !out.success {
        return Err(BuildFailure::compile(log));
    }
    Ok((bc, log))
}

/// Kernel SPIR-V (`clCreateProgramWithIL`) as a compiled object: LLVM bitcode
/// (`llvm-spirv-15 -r`).
///
/// # Errors
/// `CompileError` when llvm-spirv rejects the module.
///
/// `weak_linkonce`: the module has `LinkOnceODR` functions or variables (SPIR-V
/// `SPV_KHR_linkonce_odr`); they become `weak_odr` in the object, because llvm-link drops a
/// `linkonce_odr` definition that nothing linked before it uses, which would leave a later
/// object's import of it undefined. Duplicates still merge.
pub(crate) fn il_to_object(
    tools: &Tools,
    words: &[u32],
    weak_linkonce: bool,
    caps: &DeviceCaps,
) -> Result<Vec<u8>, BuildFailure> {
    let dir = tmpdir()?;
    let bc = spirv_to_llvm(tools, dir.path(), words)?;
    let bc = super::il_library::link(tools, dir.path(), &bc, caps)?;
    if weak_linkonce {
        linkonce_to_weak(tools, dir.path(), &bc)?;
    }
    std::fs::read(&bc).map_err(|e| BuildFailure::compile(format!("cannot read bitcode: {e}")))
}

/// Links compiled objects or libraries (LLVM bitcode) into one module with llvm-link-15.
///
/// # Errors
/// `CompileError` with llvm-link's diagnostics (duplicate definitions, mismatched types): the
/// runtime reports it as `CL_LINK_PROGRAM_FAILURE`.
pub(crate) fn link(tools: &Tools, objects: &[&[u8]]) -> Result<Vec<u8>, BuildFailure> {
    if let [one] = objects {
        return Ok(one.to_vec());
    }
    let dir = tmpdir()?;
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let mut args = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        let p = dir.path().join(format!("input{i}.bc"));
        std::fs::write(&p, o).map_err(io)?;
        args.push(path_arg(&p));
    }
    let out_path = dir.path().join("linked.bc");
    args.push("-o".into());
    args.push(path_arg(&out_path));
    let out = run(&tools.llvm_link, &args, None).map_err(BuildFailure::compile)?;
    if !out.success {
        let log = out
            .stderr
            .replace(&format!("{}/", path_arg(dir.path())), "");
        return Err(BuildFailure::compile(format!(
            "link failed: {}",
            log.trim()
        )));
    }
    std::fs::read(&out_path).map_err(io)
}

/// A compiled object or linked module (LLVM bitcode) -> structurized Kernel SPIR-V.
///
/// # Errors
/// `CompileError` when opt or llvm-spirv fails.
pub(crate) fn object_to_spirv(tools: &Tools, bitcode: &[u8]) -> Result<Vec<u32>, BuildFailure> {
    let dir = tmpdir()?;
    let bc = dir.path().join("object.bc");
    std::fs::write(&bc, bitcode)
        .map_err(|e| BuildFailure::compile(format!("cannot write a temporary file: {e}")))?;
    llvm_to_spirv(tools, dir.path(), &bc)
}

/// llvm-spirv-15 -r of `words` into `dir`; returns the bitcode's path.
fn spirv_to_llvm(
    tools: &Tools,
    dir: &Path,
    words: &[u32],
) -> Result<std::path::PathBuf, BuildFailure> {
    let input = dir.join("input.spv");
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&input, bytes)
        .map_err(|e| BuildFailure::compile(format!("cannot write a temporary file: {e}")))?;
    let bc = dir.join("il.bc");
    let args = vec![
        "-r".to_string(),
        path_arg(&input),
        "-o".to_string(),
        path_arg(&bc),
    ];
    let out = run(&tools.llvm_spirv, &args, None).map_err(BuildFailure::compile)?;
    if !out.success {
        return Err(BuildFailure::compile(format!(
            "invalid SPIR-V module: {}",
            out.stderr.trim()
        )));
    }
    Ok(bc)
}

/// Sends Kernel SPIR-V back to LLVM IR and through the same structurizing path.
///
/// # Errors
/// `CompileError` when llvm-spirv rejects the module.
pub(crate) fn compile_il(
    tools: &Tools,
    words: &[u32],
    _opts: &ParsedOptions,
    caps: &DeviceCaps,
) -> Result<FrontOutput, BuildFailure> {
    let dir = tmpdir()?;
    let bc = spirv_to_llvm(tools, dir.path(), words)?;
    let bc = super::il_library::link(tools, dir.path(), &bc, caps)?;
    let spirv = llvm_to_spirv(tools, dir.path(), &bc)?;
    Ok(FrontOutput {
        spirv,
        log: String::new(),
    })
}

/// The loop-vector guard ([`super::phiguard`]), the math library ([`super::mathlib`]) when
/// `bc` needs it, then opt-15 (inline + structurize) then llvm-spirv-15 on `bc` (bitcode, or
/// text IR when its name ends in `.ll`), in `dir`.
///
/// Every call of the program's own functions must be inlined (see
/// [`super::lower`]'s `calls` pass for why vkcl does not emit calls). One opt run normally
/// does it: the O2 pipeline with a huge threshold ([`INLINE_THRESHOLD`], for cold call sites
/// too), and the module's `noinline` functions ([`noinline_functions`](super::inlining::noinline_functions)) made `alwaysinline`
/// (their `noinline` and `optnone` removed). What it still leaves called (a callee that grew
/// past the threshold by inlining its own callees, or a `noinline` function the text scan
/// missed) is found in the SPIR-V ([`not_inlined`](super::inlining::not_inlined)) and the module goes through opt and
/// llvm-spirv again with those functions forced too. A forced run can leave a call that the
/// previous one inlined (a function that called a newly forced one grew by inlining it and
/// now exceeds the threshold where it is called; pyopencl's `bessel_jv` did against the
/// former threshold of 1 million), so the runs repeat, each forcing every function found so
/// far, until no new function is left called; the set only grows and the module's functions
/// are finite, so this ends. What is still called then (a recursive function) is reported by
/// the lowering with the function's name. Before the cold-call-site threshold and the
/// `noinline` scan, pyopencl's `bessel_jn` took three opt and llvm-spirv runs (each as long
/// as the first); now one (docs/performance.md, "Build time of large programs").
fn llvm_to_spirv(tools: &Tools, dir: &Path, bc: &Path) -> Result<Vec<u32>, BuildFailure> {
    // LLVM 15's InstCombine miscompiles some loop-carried vectors: see `phiguard`. The math
    // library joins after the guard: its loops carry vectors only through `insertelement`.
    let Prepared {
        path,
        guarded,
        noinline,
    } = prepare_module(tools, dir, bc)?;
    let bc = path.as_deref().unwrap_or(bc);
    // Precise math built-ins (libclc) join the module before opt, which inlines them.
    let input = &super::mathlib::link(tools, dir, bc)?;
    let unguard = |words: Vec<u32>| -> Result<Vec<u32>, BuildFailure> {
        if !guarded {
            return Ok(words);
        }
        match super::phiguard::unguard(&words) {
            Ok(Some(w)) => Ok(w),
            Ok(None) => Ok(words),
            Err(e) => Err(BuildFailure::compile(format!(
                "cannot remove vkcl's loop-vector guard: {e}"
            ))),
        }
    };
    // `noinline` functions would stay called: forced from the first run.
    let mut forced: Vec<String> = noinline;
    if !forced.is_empty() {
        tracing::debug!(
            "{} noinline functions inlined by force: {}",
            forced.len(),
            forced.join(", ")
        );
    }
    let mut words = optimize_and_translate(tools, dir, input, &forced)?;
    loop {
        let left: Vec<String> = super::inlining::not_inlined(&words)
            .into_iter()
            .filter(|f| !forced.contains(f))
            .collect();
        if left.is_empty() {
            return unguard(words);
        }
        tracing::debug!(
            "{} functions not inlined by opt, inlined by force: {}",
            left.len(),
            left.join(", ")
        );
        forced.extend(left);
        words = optimize_and_translate(tools, dir, input, &forced)?;
    }
}

/// The module going into opt, prepared from the text IR ([`prepare_module`]).
struct Prepared {
    /// The prepared module (text IR in the build's directory), `None` when it is the input
    /// unchanged.
    path: Option<std::path::PathBuf>,
    /// Whether `phiguard::guard` changed it (the SPIR-V then needs `phiguard::unguard`).
    guarded: bool,
    /// Its `noinline` functions ([`noinline_functions`](super::inlining::noinline_functions)).
    noinline: Vec<String>,
}

/// Reads the module of `bc` (bitcode, or text IR when it ends in `.ll`) as text and prepares
/// it for opt: `phiguard::guard` applied, and its external non-kernel functions made internal
/// ([`internalize_functions`](super::inlining::internalize_functions)); written as a text IR file in `dir` when either changed it.
fn prepare_module(tools: &Tools, dir: &Path, bc: &Path) -> Result<Prepared, BuildFailure> {
    let ll = if bc.extension().is_some_and(|e| e == "ll") {
        bc.to_path_buf()
    } else {
        let ll = dir.join("unguarded.ll");
        run_opt(
            tools,
            &[
                "-passes=verify".to_string(),
                "-S".to_string(),
                path_arg(bc),
                "-o".to_string(),
                path_arg(&ll),
            ],
        )?;
        ll
    };
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let text = std::fs::read_to_string(&ll).map_err(io)?;
    let noinline = super::inlining::noinline_functions(&text);
    let guarded = super::phiguard::guard(&text);
    let is_guarded = guarded.is_some();
    let text = guarded.unwrap_or(text);
    let internal = super::inlining::internalize_functions(&text);
    if !is_guarded && matches!(internal, std::borrow::Cow::Borrowed(_)) {
        return Ok(Prepared {
            path: None,
            guarded: false,
            noinline,
        });
    }
    let out = dir.join("prepared.ll");
    std::fs::write(&out, internal.as_bytes()).map_err(io)?;
    Ok(Prepared {
        path: Some(out),
        guarded: is_guarded,
        noinline,
    })
}

/// opt's inline threshold, for every call site (cold ones too): inline cost is counted in
/// instructions, about 5 each, so this inlines callees of up to about 2 million instructions
/// (pyopencl's `bessel_jv` with its callees inlined costs 3.2 million). LLVM 15 computes
/// bonuses of up to 150% of the threshold in `int` (`Threshold * VectorBonusPercent`), so
/// much more than 14 million would overflow them.
const INLINE_THRESHOLD: u32 = 10_000_000;

/// opt-15 (inline + structurize; the functions `force_inline` made `alwaysinline`) then
/// llvm-spirv-15 on `bc`, in `dir`.
fn optimize_and_translate(
    tools: &Tools,
    dir: &Path,
    bc: &Path,
    force_inline: &[String],
) -> Result<Vec<u32>, BuildFailure> {
    match optimize_and_translate_with(tools, dir, bc, force_inline, &[]) {
        // LFTR (IndVarSimplify's exit-test rewrite) may count a loop in the narrowest
        // integer its exit value fits (`i3` for a counter only used as `i & 7`), a width
        // llvm-spirv-15 refuses. Taken only on that error, so modules that translate
        // without it keep their SPIR-V byte for byte.
        Err(e) if e.log.contains("InvalidBitWidth") => {
            tracing::debug!(
                "llvm-spirv refused an odd-width integer; optimizing again without LFTR"
            );
            optimize_and_translate_with(tools, dir, bc, force_inline, &["-disable-lftr"])
        }
        result => result,
    }
}

/// [`optimize_and_translate`] with `extra` opt flags.
fn optimize_and_translate_with(
    tools: &Tools,
    dir: &Path,
    bc: &Path,
    force_inline: &[String],
    extra: &[&str],
) -> Result<Vec<u32>, BuildFailure> {
    let structured = dir.join("structured.bc");
    let mut args: Vec<String> = force_inline
        .iter()
        .flat_map(|f| {
            [
                format!("-force-remove-attribute={f}:noinline"),
                format!("-force-remove-attribute={f}:optnone"),
                format!("-force-attribute={f}:alwaysinline"),
            ]
        })
        .collect();
    args.extend([
        format!("-inline-threshold={INLINE_THRESHOLD}"),
        // Call sites on branches LLVM estimates cold (2% of the caller's entry count, from
        // `__builtin_expect` or its own heuristics) and callees marked `cold` get their own
        // threshold, 45 by default, whatever `-inline-threshold` says: one run would leave
        // them called and the next, forcing them, costs as much as the first (pyopencl's
        // Bessel functions, see `llvm_to_spirv`).
        format!("-inline-cold-callsite-threshold={INLINE_THRESHOLD}"),
        format!("-inlinecold-threshold={INLINE_THRESHOLD}"),
        // IndVarSimplify would replace loop exit values by closed forms computed in odd
        // widths (`i33` for a triangular sum), which SPIR-V cannot express.
        "-replexitval=never".to_string(),
        // The SLP vectorizer joins scalar code into vectors of any length (`<32 x i32>` in
        // libclc's cbrt on float8), which SPIR-V (2 to 16 components) cannot express.
        "-vectorize-slp=false".to_string(),
        // LoopIdiomRecognize turns copy and fill loops into memcpy/memset of a length known
        // only at run time (a private string copied up to its terminator), which Vulkan has
        // no instruction for: the loops stay loops.
        "-disable-loop-idiom-all".to_string(),
        // SimplifyCFG would hoist the common instructions of an if/else into the block before
        // it and sink them into the block after, calls included: LLVM 15's `convergent` only
        // forbids adding control dependences, so the two `sub_group_non_uniform_broadcast`
        // calls of a divergent if/else became one call with a `select` on the lane id, run
        // by the whole sub-group (each half then read the other half's lane: wrong answers,
        // CTS subgroups `sub_group_non_uniform_broadcast`). Every non-uniform sub-group
        // function (reduce, scan, ballot, elect, shuffle, clustered...) depends on which
        // work-items run it, so no call may move across a branch; the Vulkan driver's own
        // compiler still merges what it can prove equal. These options override every
        // SimplifyCFG of the pipeline, the fallback one too.
        "-hoist-common-insts=false".to_string(),
        "-sink-common-insts=false".to_string(),
    ]);
    args.extend(extra.iter().map(|f| f.to_string()));
    args.extend([
        format!("--data-layout={DATA_LAYOUT}"),
        format!("-passes={}", opt_pipeline(tools)),
        path_arg(bc),
        "-o".to_string(),
        path_arg(&structured),
    ]);
    run_opt(tools, &args)?;
    // Saturating intrinsics: their names are plain bytes in the bitcode's string table.
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let bitcode = std::fs::read(&structured).map_err(io)?;
    if SAT_INTRINSICS.iter().any(|(p, _, _)| {
        let name = &p.as_bytes()[1..];
        bitcode.windows(name.len()).any(|w| w == name)
    }) {
        thaw(tools, dir, &structured, false)?;
    }
    let spv = dir.join("kernel.spv");
    let args = vec![
        "--preserve-ocl-kernel-arg-type-metadata-through-string".to_string(),
        // sub_group_rotate (cl_khr_subgroup_rotate): OpGroupNonUniformRotateKHR, which
        // llvm-spirv-15 writes only with this extension allowed.
        "--spirv-ext=+SPV_KHR_subgroup_rotate".to_string(),
        path_arg(&structured),
        "-o".to_string(),
        path_arg(&spv),
    ];
    let mut out = run(&tools.llvm_spirv, &args, None).map_err(BuildFailure::compile)?;
    if !out.success && (out.stderr.contains("freeze") || out.stderr.contains("llvm intrinsic")) {
        // Rare (O2 makes `freeze` for some idioms, InstCombine saturating-arithmetic
        // intrinsics from clamps): rewrite them away in text form and retry.
        thaw(tools, dir, &structured, false)?;
        out = run(&tools.llvm_spirv, &args, None).map_err(BuildFailure::compile)?;
    }
    if !out.success {
        return Err(BuildFailure::compile(format!(
            "llvm-spirv failed: {}",
            out.stderr.trim()
        )));
    }
    let read = || {
        let bytes = std::fs::read(&spv)
            .map_err(|e| BuildFailure::compile(format!("cannot read llvm-spirv output: {e}")))?;
        words_from_bytes(&bytes)
    };
    let words = read()?;
    if !super::fwdconv::lost_conversion_decorations(&words) {
        return Ok(words);
    }
    // A saturating or rounding conversion used before its definition lost its decoration
    // (see `fwdconv`): translate again with every such conversion isolated.
    tracing::debug!("llvm-spirv lost a conversion's decoration; translating again");
    thaw(tools, dir, &structured, true)?;
    let out = run(&tools.llvm_spirv, &args, None).map_err(BuildFailure::compile)?;
    if !out.success {
        return Err(BuildFailure::compile(format!(
            "llvm-spirv failed: {}",
            out.stderr.trim()
        )));
    }
    let words = read()?;
    if super::fwdconv::lost_conversion_decorations(&words) {
        return Err(BuildFailure::compile(
            "llvm-spirv-15 lost the saturation or rounding mode of a conversion (a \
             decoration whose target no instruction defines)",
        ));
    }
    Ok(words)
}

/// Runs opt-15 with `args`.
fn run_opt(tools: &Tools, args: &[String]) -> Result<(), BuildFailure> {
    let out = run(&tools.opt, args, None).map_err(BuildFailure::compile)?;
    if !out.success {
        return Err(BuildFailure::compile(format!(
            "opt failed: {}",
            out.stderr.trim()
        )));
    }
    Ok(())
}

/// Replaces bitcode file `bc` by the same module without `freeze` instructions
/// ([`remove_freeze`]) and with the saturating intrinsics llvm-spirv-15 refuses renamed to
/// OpenCL built-ins ([`rename_sat_intrinsics`]), going through text IR with opt-15; with
/// `isolate`, also with decorated conversions isolated (`fwdconv::isolate_conversions`).
fn thaw(tools: &Tools, dir: &Path, bc: &Path, isolate: bool) -> Result<(), BuildFailure> {
    let ll = dir.join("frozen.ll");
    let to_text = [
        "-passes=verify".to_string(),
        "-S".to_string(),
        path_arg(bc),
        "-o".to_string(),
        path_arg(&ll),
    ];
    run_opt(tools, &to_text)?;
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let text = std::fs::read_to_string(&ll).map_err(io)?;
    let text = remove_freeze(&text);
    let text = rename_sat_intrinsics(&text);
    let text = if isolate {
        std::borrow::Cow::Owned(super::fwdconv::isolate_conversions(&text))
    } else {
        text
    };
    std::fs::write(&ll, text.as_bytes()).map_err(io)?;
    let to_bitcode = [
        "-passes=verify".to_string(),
        path_arg(&ll),
        "-o".to_string(),
        path_arg(bc),
    ];
    run_opt(tools, &to_bitcode)
}

/// Replaces bitcode file `bc` by the same module with `linkonce_odr` definitions made
/// `weak_odr` (see [`il_to_object`]), through text IR with opt-15.
fn linkonce_to_weak(tools: &Tools, dir: &Path, bc: &Path) -> Result<(), BuildFailure> {
    let ll = dir.join("linkonce.ll");
    run_opt(
        tools,
        &[
            "-passes=verify".to_string(),
            "-S".to_string(),
            path_arg(bc),
            "-o".to_string(),
            path_arg(&ll),
        ],
    )?;
    let io = |e: std::io::Error| BuildFailure::compile(format!("temporary file: {e}"));
    let text = std::fs::read_to_string(&ll).map_err(io)?;
    let text: String = text
        .split_inclusive('\n')
        .map(|line| {
            if line.starts_with("define linkonce_odr ") || line.starts_with('@') {
                std::borrow::Cow::Owned(line.replacen(" linkonce_odr ", " weak_odr ", 1))
            } else {
                std::borrow::Cow::Borrowed(line)
            }
        })
        .collect();
    std::fs::write(&ll, text.as_bytes()).map_err(io)?;
    run_opt(
        tools,
        &[
            "-passes=verify".to_string(),
            path_arg(&ll),
            "-o".to_string(),
            path_arg(bc),
        ],
    )
}

/// Rewrites every `%x = freeze T v` of textual LLVM IR as the no-op `%x = bitcast T v to T`.
///
/// llvm-spirv-15 cannot translate `freeze` (O2 creates it, e.g. DivRemPairs for `x / y` next to
/// `x % y`). SPIR-V has no poison values, so passing the operand through is exact; the
/// same-type `OpBitcast` it becomes is valid SPIR-V.
pub(crate) fn remove_freeze(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(" = freeze ") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let rewritten = body.split_once(" = freeze ").and_then(|(lhs, rest)| {
            // `rest` is `T v` plus perhaps `, !md !n` attachments; the value is the last
            // token before them (a name or a scalar constant).
            let (rest, attachments) = match rest.find(", !") {
                Some(at) => rest.split_at(at),
                None => (rest, ""),
            };
            let (ty, value) = rest.rsplit_once(' ')?;
            // A same-type bitcast of `i1` would become `OpBitcast` of a bool, which SPIR-V
            // forbids: `and v, v` is the no-op there.
            if ty == "i1" || ty.ends_with(" x i1>") {
                return Some(format!("{lhs} = and {ty} {value}, {value}{attachments}"));
            }
            Some(format!("{lhs} = bitcast {ty} {value} to {ty}{attachments}"))
        });
        match rewritten {
            Some(r) => {
                out.push_str(&r);
                out.push_str(&line[body.len()..]);
            }
            None => out.push_str(line),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The saturating LLVM intrinsics InstCombine makes from clamped arithmetic, and the OpenCL C
/// built-in each one is: (intrinsic prefix, built-in name, unsigned). llvm-spirv-15 refuses
/// `uadd.sat` and `ssub.sat` ("Unexpected llvm intrinsic") and turns `sadd.sat` into a call of
/// a helper function of its own, which vkcl does not inline; as built-ins they become
/// OpenCL.std `*_add_sat` / `*_sub_sat`.
const SAT_INTRINSICS: [(&str, &str, bool); 4] = [
    ("@llvm.uadd.sat.", "add_sat", true),
    ("@llvm.sadd.sat.", "add_sat", false),
    ("@llvm.usub.sat.", "sub_sat", true),
    ("@llvm.ssub.sat.", "sub_sat", false),
];

/// The Itanium-mangled OpenCL C built-in `name(T, T)` for the LLVM type suffix `suffix` of an
/// overloaded intrinsic (`i16`, `v4i32`), or `None` for another type.
fn mangle_binary(name: &str, suffix: &str, unsigned: bool) -> Option<String> {
    let (lanes, scalar) = match suffix.strip_prefix('v') {
        Some(rest) => {
            let at = rest.find('i')?;
            (Some(&rest[..at]), &rest[at..])
        }
        None => (None, suffix),
    };
    let code = match (scalar, unsigned) {
        ("i8", true) => 'h',
        ("i8", false) => 'c',
        ("i16", true) => 't',
        ("i16", false) => 's',
        ("i32", true) => 'j',
        ("i32", false) => 'i',
        ("i64", true) => 'm',
        ("i64", false) => 'l',
        _ => return None,
    };
    let args = match lanes {
        Some(n) if n.parse::<u32>().is_ok() => format!("Dv{n}_{code}S_"),
        Some(_) => return None,
        None => format!("{code}{code}"),
    };
    Some(format!("_Z{}{name}{args}", name.len()))
}

/// Renames calls and declarations of the intrinsics of [`SAT_INTRINSICS`] in textual LLVM IR
/// to the OpenCL C built-ins with the same meaning (`llvm.uadd.sat.i32` is `add_sat(uint,
/// uint)`, `_Z7add_satjj`), which llvm-spirv-15 translates to OpenCL.std `u_add_sat` /
/// `s_sub_sat`. A declaration the module already has is not repeated.
pub(crate) fn rename_sat_intrinsics(text: &str) -> std::borrow::Cow<'_, str> {
    if !SAT_INTRINSICS.iter().any(|(p, _, _)| text.contains(p)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut renamed = text.to_string();
    let mut names = Vec::new();
    for (prefix, name, unsigned) in SAT_INTRINSICS {
        while let Some(at) = renamed.find(prefix) {
            let rest = &renamed[at + prefix.len()..];
            let Some(end) = rest.find('(') else { break };
            let suffix = rest[..end].to_string();
            let Some(mangled) = mangle_binary(name, &suffix, unsigned) else {
                break;
            };
            let from = format!("{prefix}{suffix}(");
            let to = format!("@{mangled}(");
            renamed = renamed.replace(&from, &to);
            names.push(to);
        }
    }
    let mut out = String::with_capacity(renamed.len());
    let mut declared = Vec::new();
    for line in renamed.split_inclusive('\n') {
        let Some(name) = names.iter().find(|n| line.contains(n.as_str())) else {
            out.push_str(line);
            continue;
        };
        if line.starts_with("declare ") {
            if declared.contains(name) {
                continue;
            }
            declared.push(name.clone());
            if line.starts_with("declare spir_func ") {
                out.push_str(line);
            } else {
                out.push_str("declare spir_func ");
                out.push_str(&line["declare ".len()..]);
            }
        } else if !line.contains("call spir_func ") {
            out.push_str(&line.replacen("call ", "call spir_func ", 1));
        } else {
            out.push_str(line);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Interprets `bytes` as SPIR-V words, accepting either byte order (by the magic number).
///
/// # Errors
/// `CompileError` when the length is not a multiple of 4 or the magic number is wrong.
pub(crate) fn words_from_bytes(bytes: &[u8]) -> Result<Vec<u32>, BuildFailure> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(BuildFailure::compile("invalid SPIR-V: bad length"));
    }
    let le: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if le[0] == spirv_magic() {
        return Ok(le);
    }
    let be: Vec<u32> = le.iter().map(|w| w.swap_bytes()).collect();
    if be[0] == spirv_magic() {
        return Ok(be);
    }
    Err(BuildFailure::compile("invalid SPIR-V: bad magic number"))
}

fn spirv_magic() -> u32 {
    rspirv::spirv::MAGIC_NUMBER
}
