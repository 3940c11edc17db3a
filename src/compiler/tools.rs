//! Locating and running the external tools (clang-15, opt-15, llvm-spirv-15).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::error::CompilerError;

/// Paths of the external tools the front end runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tools {
    /// `clang-15` (or `$VKCL_CLANG`).
    pub clang: PathBuf,
    /// `opt-15` (or `$VKCL_OPT`): inlining and CFG structurization.
    pub opt: PathBuf,
    /// `llvm-spirv-15` (or `$VKCL_LLVM_SPIRV`).
    pub llvm_spirv: PathBuf,
    /// `llvm-link-15` (or `$VKCL_LLVM_LINK`): links compiled objects (`clLinkProgram`).
    pub llvm_link: PathBuf,
}

impl Tools {
    /// No tools (empty paths): for a build step that runs none, such as rebuilding an
    /// executable binary from its structured IR (clBuildProgram of clCreateProgramWithBinary
    /// works without clang).
    pub fn absent() -> Tools {
        Tools {
            clang: PathBuf::new(),
            opt: PathBuf::new(),
            llvm_spirv: PathBuf::new(),
            llvm_link: PathBuf::new(),
        }
    }
}

const INSTALL_HINT: &str =
    "install them with `apt-get install clang-15 llvm-15 llvm-spirv-15` or point VKCL_CLANG, VKCL_OPT, VKCL_LLVM_SPIRV and VKCL_LLVM_LINK at them";

/// Whether the OpenCL C front end (clang-15, opt-15 and llvm-spirv-15, or their `VKCL_*`
/// overrides) can be found (`CL_DEVICE_COMPILER_AVAILABLE`).
pub fn available() -> bool {
    find_tools().is_ok()
}

/// Finds the tools: each from its environment variable (`VKCL_CLANG`, `VKCL_OPT`,
/// `VKCL_LLVM_SPIRV`, `VKCL_LLVM_LINK`) if set, otherwise `clang-15`, `opt-15`,
/// `llvm-spirv-15`, `llvm-link-15` on `PATH`.
///
/// # Errors
/// [`CompilerError::NotAvailable`] naming the missing tools and how to install them (the
/// runtime reports `CL_COMPILER_NOT_AVAILABLE`).
pub fn find_tools() -> Result<Tools, CompilerError> {
    let mut missing = Vec::new();
    let mut find = |var: &str, name: &str| -> PathBuf {
        if let Some(p) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let p = PathBuf::from(p);
            if is_executable(&p) {
                return p;
            }
            missing.push(format!("{} (from ${var})", p.display()));
            return p;
        }
        match search_path(OsStr::new(name)) {
            Some(p) => p,
            None => {
                missing.push(name.to_string());
                PathBuf::from(name)
            }
        }
    };
    let tools = Tools {
        clang: find("VKCL_CLANG", "clang-15"),
        opt: find("VKCL_OPT", "opt-15"),
        llvm_spirv: find("VKCL_LLVM_SPIRV", "llvm-spirv-15"),
        llvm_link: find("VKCL_LLVM_LINK", "llvm-link-15"),
    };
    if missing.is_empty() {
        Ok(tools)
    } else {
        Err(CompilerError::NotAvailable(format!(
            "OpenCL C compiler tools not found: {}; {INSTALL_HINT}",
            missing.join(", ")
        )))
    }
}

impl Tools {
    /// Identity of the tools for the program cache: for each, its resolved path, size and
    /// modification time (a package upgrade changes them). Runs none of them.
    pub fn identity(&self) -> String {
        let mut s = String::new();
        for p in [&self.clang, &self.opt, &self.llvm_spirv, &self.llvm_link] {
            let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            let (len, mtime) = std::fs::metadata(&real)
                .map(|m| {
                    let t = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_nanos());
                    (m.len(), t)
                })
                .unwrap_or((0, 0));
            s.push_str(&format!("{}:{len}:{mtime};", real.display()));
        }
        s
    }
}

fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// The first `name` on `PATH` that is a file.
pub(crate) fn search_path(name: &OsStr) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// Output of one tool run.
pub(crate) struct ToolOutput {
    pub success: bool,
    /// stderr then stdout (diagnostics for build logs).
    pub stderr: String,
    /// stdout alone.
    pub stdout: String,
}

/// Runs `program` with `args`, feeding `stdin` if given; never panics.
///
/// # Errors
/// A message when the process cannot be started or its pipes fail.
pub(crate) fn run(
    program: &Path,
    args: &[String],
    stdin: Option<&[u8]>,
) -> Result<ToolOutput, String> {
    use std::io::Write;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tracing::debug!(?program, ?args, "running compiler tool");
    // Many threads building at once on a loaded machine can meet a transient fork or exec
    // failure (EAGAIN at the process limit, EINTR, ETXTBSY): retried a few times, backing
    // off, before the build fails with it.
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Ok(c) => break c,
            Err(e)
                if tries < 6
                    && matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::Interrupted
                            | std::io::ErrorKind::ExecutableFileBusy
                    ) =>
            {
                tracing::debug!(?program, "spawn failed ({e}), retrying");
                std::thread::sleep(std::time::Duration::from_millis(10 << tries));
                tries += 1;
            }
            Err(e) => return Err(format!("cannot run {}: {e}", program.display())),
        }
    };
    let pipe = child.stdin.take();
    let out = std::thread::scope(|scope| {
        if let (Some(input), Some(mut pipe)) = (stdin, pipe) {
            // Written from a second thread so that a tool that talks before it has read all
            // its input cannot deadlock us. A tool that exits early closes the pipe; its
            // stderr then explains why, so the write error itself is not interesting.
            scope.spawn(move || {
                let _ = pipe.write_all(input);
            });
        }
        child.wait_with_output()
    })
    .map_err(|e| format!("waiting for {}: {e}", program.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    stderr.push_str(&stdout);
    Ok(ToolOutput {
        success: out.status.success(),
        stderr,
        stdout,
    })
}
