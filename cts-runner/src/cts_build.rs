//! A CTS build directory: the CTS source it was configured from and that source's commit.

use std::path::{Path, PathBuf};

/// The CTS source directory of a build (its `CMakeCache.txt` names it).
pub fn cts_source_dir(cts_dir: &Path) -> Option<PathBuf> {
    let cache = std::fs::read_to_string(cts_dir.join("CMakeCache.txt")).ok()?;
    cache
        .lines()
        .find_map(|l| l.strip_prefix("CMAKE_HOME_DIRECTORY:INTERNAL="))
        .map(PathBuf::from)
}

/// The CTS source commit of a build, from git in its source directory.
pub fn cts_commit(cts_dir: &Path) -> Option<String> {
    let src = cts_source_dir(cts_dir)?;
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&src)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && s.len() == 40).then_some(s)
}
