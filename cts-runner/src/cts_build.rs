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

/// The file in a CTS build directory that can name its source commit (40 hex digits), for a
/// build copied away from its source (the device host's packed binaries).
pub const COMMIT_FILE: &str = "cts-commit";

/// The CTS source commit of a build, from git in its source directory, else from the build's
/// [`COMMIT_FILE`].
pub fn cts_commit(cts_dir: &Path) -> Option<String> {
    from_git(cts_dir).or_else(|| {
        let s = std::fs::read_to_string(cts_dir.join(COMMIT_FILE)).ok()?;
        let s = s.trim();
        (s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| s.to_string())
    })
}

fn from_git(cts_dir: &Path) -> Option<String> {
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_copied_build_names_its_commit_in_a_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(super::cts_commit(dir.path()), None);
        let commit = "b8f8906c251926b1b3679323bfbf3df730b40fb8";
        std::fs::write(dir.path().join(super::COMMIT_FILE), format!("{commit}\n")).expect("write");
        assert_eq!(super::cts_commit(dir.path()).as_deref(), Some(commit));
        std::fs::write(dir.path().join(super::COMMIT_FILE), "not a commit").expect("write");
        assert_eq!(super::cts_commit(dir.path()), None);
    }
}
