//! OpenCL C -> PTX for kernels on NVIDIA green contexts (the CUDA path, issue 7):
//! clang-15 (`-target nvptx64-unknown-nvidiacl`) -> llvm-link-15 with libclc-15's
//! `nvptx64--nvidiacl.bc` (the OpenCL built-ins) -> opt-15 `-O3` (inlines the built-ins) ->
//! llc-15 `-mcpu=sm_86 -mattr=+ptx75`, the newest target llc-15 knows; the driver JIT-compiles
//! that PTX for the device it runs on (sm_90 on the H200).
//!
//! Tools: clang and opt as [`super::find_tools`] finds them; `VKCL_LLVM_LINK` (default
//! `llvm-link-15`), `VKCL_LLC` (default `llc-15`) and `VKCL_LIBCLC_NVPTX` (default
//! `/usr/lib/clc/nvptx64--nvidiacl.bc`, Debian's libclc-15).

use super::tools::{find_tools, run};
use std::ffi::CString;
use std::path::PathBuf;

/// The PTX target and ISA version llc-15 is asked for.
pub const PTX_CPU: &str = "sm_86";

fn tool(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default))
}

/// Compiles OpenCL C `source` with extra clang arguments `clang_args` (`-D`, `-I`, ...) to
/// NUL-terminated PTX text, one `.entry` per kernel with the kernel's name and its parameters
/// in source order (pointers to global memory as 64-bit addresses, scalars by value).
///
/// # Errors
/// A message with the failing tool's diagnostics (clang's for source errors), or saying which
/// tool or library is missing.
pub fn compile_ptx(source: &str, clang_args: &[String]) -> Result<CString, String> {
    let tools = find_tools().map_err(|e| e.to_string())?;
    let libclc = tool("VKCL_LIBCLC_NVPTX", "/usr/lib/clc/nvptx64--nvidiacl.bc");
    if !libclc.is_file() {
        return Err(format!(
            "{} not found (install libclc-15 or set VKCL_LIBCLC_NVPTX)",
            libclc.display()
        ));
    }
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let p = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let step = |program: &PathBuf, args: Vec<String>, input: Option<&[u8]>| {
        let out = run(program, &args, input)?;
        if out.success {
            Ok(out.stderr)
        } else {
            Err(format!("{}: {}", program.display(), out.stderr))
        }
    };
    let mut args: Vec<String> = [
        "-x",
        "cl",
        "-cl-std=CL1.2",
        "-target",
        "nvptx64-unknown-nvidiacl",
        "-emit-llvm",
        "-c",
        "-O2",
        "-fno-color-diagnostics",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(clang_args.iter().cloned());
    args.extend(["-".into(), "-o".into(), p("front.bc")]);
    // The definitions libclc's nvptx64 library lacks, after the source (its line numbers stay).
    let source = format!("{source}\n{NVPTX_EXTRAS}");
    step(&tools.clang, args, Some(source.as_bytes()))
        .map_err(|e| e.replace("<stdin>", "<source>"))?;
    step(
        &tool("VKCL_LLVM_LINK", "llvm-link-15"),
        vec![
            "--only-needed".into(),
            p("front.bc"),
            libclc.to_string_lossy().into_owned(),
            "-o".into(),
            p("linked.bc"),
        ],
        None,
    )?;
    step(
        &tools.opt,
        vec!["-O3".into(), p("linked.bc"), "-o".into(), p("opt.bc")],
        None,
    )?;
    step(
        &tool("VKCL_LLC", "llc-15"),
        vec![
            "-O3".into(),
            format!("-mcpu={PTX_CPU}"),
            "-mattr=+ptx75".into(),
            p("opt.bc"),
            "-o".into(),
            p("out.ptx"),
        ],
        None,
    )?;
    let text = std::fs::read(p("out.ptx")).map_err(|e| format!("reading PTX: {e}"))?;
    // A function nothing defines makes the driver's JIT fail at load time; say which here.
    let text_str = String::from_utf8_lossy(&text);
    if let Some(line) = text_str.lines().find(|l| l.starts_with(".extern .func")) {
        return Err(format!("undefined function in PTX: {}", line.trim()));
    }
    CString::new(text).map_err(|_| "PTX with a NUL byte".to_string())
}

/// The symbol of the dynamic shared memory that `__local` pointer arguments point into.
const LOCAL_SYMBOL: &str = "__vkcl_local";

/// Rewrites `ptx` so that the `__local` pointer parameters of its kernels take offsets into
/// the launch's dynamic shared memory: `locals` names, per kernel, the parameter indices of its
/// `__local` pointer arguments. Declares `.extern .shared .align 16 .b8 __vkcl_local[]` and
/// adds its shared-window address to each such parameter where the kernel loads it
/// (`ld.param.u64 %rdN, [<kernel>_param_<i>]`). The launch then passes each argument's byte
/// offset in the dynamic shared memory and the total as `sharedMemBytes`.
///
/// Returns the rewritten PTX and the kernels it could rewrite (a kernel whose `__local`
/// parameter is used some other way is left out: its launches take the Vulkan path).
pub fn local_params_to_dynamic_shared(
    ptx: &str,
    locals: &[(String, Vec<usize>)],
) -> (String, Vec<String>) {
    let wanted: Vec<&(String, Vec<usize>)> = locals.iter().filter(|(_, v)| !v.is_empty()).collect();
    if wanted.is_empty() {
        return (ptx.to_string(), Vec::new());
    }
    let mut out: Vec<String> = Vec::new();
    let mut done = Vec::new();
    let lines: Vec<&str> = ptx.lines().collect();
    let mut declared = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let entry = line
            .split_whitespace()
            .skip_while(|w| *w != ".entry")
            .nth(1)
            .map(|n| n.trim_end_matches('('));
        if let Some(name) = entry {
            if !declared {
                out.push(format!(".extern .shared .align 16 .b8 {LOCAL_SYMBOL}[];"));
                declared = true;
            }
            // The function: from its `.entry` line to the `}` that closes its body.
            let mut j = i;
            while j < lines.len() && lines[j] != "}" {
                j += 1;
            }
            let body = &lines[i..(j + 1).min(lines.len())];
            match wanted.iter().find(|(n, _)| n == name) {
                Some((_, params)) => {
                    let mut rewritten = Vec::new();
                    let mut found = vec![false; params.len()];
                    let mut reg_added = false;
                    for l in body {
                        rewritten.push(l.to_string());
                        if !reg_added && l.trim() == "{" {
                            rewritten.push("	.reg .b64 	%vkl;".to_string());
                            reg_added = true;
                            continue;
                        }
                        let t = l.trim();
                        if let Some(rest) = t.strip_prefix("ld.param.u64") {
                            for (k, &p) in params.iter().enumerate() {
                                let tail = format!("[{name}_param_{p}];");
                                if let Some(reg) = rest.trim().strip_suffix(&tail) {
                                    let reg = reg.trim().trim_end_matches(',').trim();
                                    rewritten.push(format!("	mov.u64 	%vkl, {LOCAL_SYMBOL};"));
                                    rewritten.push(format!("	add.s64 	{reg}, {reg}, %vkl;"));
                                    found[k] = true;
                                }
                            }
                        }
                    }
                    if found.iter().all(|&f| f) {
                        out.extend(rewritten);
                        done.push(name.to_string());
                    } else {
                        out.extend(body.iter().map(|l| l.to_string()));
                    }
                }
                None => out.extend(body.iter().map(|l| l.to_string())),
            }
            i = j + 1;
            continue;
        }
        out.push(line.to_string());
        i += 1;
    }
    let mut text = out.join("\n");
    text.push('\n');
    (text, done)
}

/// OpenCL C built-ins libclc-15's nvptx64 library declares but does not define, defined for
/// the CUDA path. `get_global_offset` is 0: launches with a global offset take the Vulkan path
/// ([`crate::core::kernel`]).
const NVPTX_EXTRAS: &str =
    "size_t __attribute__((overloadable, const)) get_global_offset(uint d) { return 0; }\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_become_ptx_entries() {
        if find_tools().is_err()
            || !std::path::Path::new("/usr/lib/clc/nvptx64--nvidiacl.bc").is_file()
        {
            eprintln!("skipped: clang-15/opt-15 or libclc-15's nvptx64 library not installed");
            return;
        }
        let src = "kernel void add(global float *a, global const float *b, float k) {\n\
                   size_t i = get_global_id(0); a[i] += k * b[i]; }";
        let ptx = match compile_ptx(src, &[]) {
            Ok(p) => p.into_string().unwrap(),
            Err(e) if e.contains("llvm-link-15") || e.contains("llc-15") => {
                eprintln!("skipped: {e}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert!(ptx.contains(".entry add("), "{ptx}");
        assert!(ptx.contains(&format!(".target {PTX_CPU}")), "{ptx}");
        // The work-item functions were inlined from libclc: no calls remain.
        assert!(!ptx.contains("call.uni"), "{ptx}");
        // get_global_offset, which libclc's nvptx64 library lacks, is defined (0).
        let off = compile_ptx(
            "kernel void o(global uint *a) { a[0] = get_global_offset(0); }",
            &[],
        )
        .unwrap()
        .into_string()
        .unwrap();
        assert!(!off.contains(".extern"), "{off}");
        // A function nothing defines is a build error, not a load failure later.
        let undef = compile_ptx(
            "int helper(int); kernel void u(global int *a) { a[0] = helper(a[1]); }",
            &[],
        )
        .unwrap_err();
        assert!(undef.contains("undefined function"), "{undef}");
        // A __local pointer parameter becomes an offset into dynamic shared memory.
        let local = compile_ptx(
            "kernel void l(global int *o, local int *t) { t[get_local_id(0)] = 1; \
             barrier(CLK_LOCAL_MEM_FENCE); o[get_global_id(0)] = t[0]; }",
            &[],
        )
        .unwrap()
        .into_string()
        .unwrap();
        let (rewritten, done) =
            local_params_to_dynamic_shared(&local, &[("l".to_string(), vec![1])]);
        assert_eq!(done, vec!["l".to_string()], "{local}");
        assert!(rewritten.contains(".extern .shared .align 16 .b8 __vkcl_local[];"));
        assert!(
            rewritten.contains("mov.u64 \t%vkl, __vkcl_local;"),
            "{rewritten}"
        );
        let bad = compile_ptx("kernel void f() { undeclared(); }", &[]).unwrap_err();
        assert!(bad.contains("undeclared"), "{bad}");
    }
}
