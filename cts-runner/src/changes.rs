//! `--changed-since COMMIT`: the suites a change to vkcl can affect, and the vkcl commit a run
//! was against.
//!
//! The table is `suites/changes.txt` (documented there): path patterns, first match wins,
//! and a file no line names maps to every suite.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The change table shipped with the crate (`suites/changes.txt`).
pub const CHANGES: &str = include_str!("../suites/changes.txt");

/// What a table line maps its files to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Nothing: the file cannot change a CTS result.
    None,
    /// Every selected suite but these ids.
    AllBut(Vec<String>),
    /// These suite ids.
    Some(Vec<String>),
}

/// Parses the table text into (pattern, target) pairs, in order.
pub fn parse_table(text: &str) -> Result<Vec<(String, Target)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (pat, rhs) = line
            .split_once('|')
            .ok_or_else(|| format!("changes table line {}: no '|'", i + 1))?;
        let words: Vec<&str> = rhs.split_whitespace().collect();
        let target = match words.as_slice() {
            [] => return Err(format!("changes table line {}: no suites", i + 1)),
            ["none"] => Target::None,
            ["all", rest @ ..] => {
                let mut but = Vec::new();
                for w in rest {
                    let id = w.strip_prefix('-').ok_or_else(|| {
                        format!("changes table line {}: after `all`, only -id", i + 1)
                    })?;
                    but.push(id.to_string());
                }
                Target::AllBut(but)
            }
            ids => Target::Some(ids.iter().map(|s| s.to_string()).collect()),
        };
        out.push((pat.trim().to_string(), target));
    }
    Ok(out)
}

/// Whether `path` matches `pattern`: `*` matches within one segment, `**` across segments
/// (`**/` also matches nothing, so `**/*.md` matches `README.md`).
pub fn glob(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p {
            [] => s.is_empty(),
            [b'*', b'*', b'/', rest @ ..] => {
                go(rest, s) || (0..s.len()).any(|i| s[i] == b'/' && go(rest, &s[i + 1..]))
            }
            [b'*', b'*', rest @ ..] => (0..=s.len()).any(|i| go(rest, &s[i..])),
            [b'*', rest @ ..] => (0..=s.len())
                .take_while(|&i| i == 0 || s[i - 1] != b'/')
                .any(|i| go(rest, &s[i..])),
            [c, rest @ ..] => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

/// The suites (of `all_ids`, in their order) that the changed `files` can affect, each with
/// the files that chose it, per the table.
pub fn affected(
    table: &[(String, Target)],
    files: &[String],
    all_ids: &[String],
) -> Vec<(String, Vec<String>)> {
    let mut chosen: Vec<(String, BTreeSet<String>)> = all_ids
        .iter()
        .map(|id| (id.clone(), BTreeSet::new()))
        .collect();
    for f in files {
        let target = table
            .iter()
            .find(|(p, _)| glob(p, f))
            .map_or(Target::AllBut(Vec::new()), |(_, t)| t.clone());
        for (id, why) in chosen.iter_mut() {
            let hit = match &target {
                Target::None => false,
                Target::AllBut(but) => !but.contains(id),
                Target::Some(ids) => ids.contains(id),
            };
            if hit {
                why.insert(f.clone());
            }
        }
    }
    chosen
        .into_iter()
        .filter(|(_, why)| !why.is_empty())
        .map(|(id, why)| (id, why.into_iter().collect()))
        .collect()
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {} in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The files changed in the git tree `dir` since `commit`: committed and uncommitted changes
/// (`git diff --name-only COMMIT`) and untracked files, paths from the repository root.
pub fn changed_files(dir: &Path, commit: &str) -> Result<Vec<String>, String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    let top = Path::new(&top);
    let mut files: BTreeSet<String> = BTreeSet::new();
    let diff = git(top, &["diff", "--name-only", commit, "--"])?;
    let untracked = git(top, &["ls-files", "--others", "--exclude-standard"])?;
    for l in diff.lines().chain(untracked.lines()) {
        if !l.trim().is_empty() {
            files.insert(l.trim().to_string());
        }
    }
    Ok(files.into_iter().collect())
}

/// `git describe --always --dirty --abbrev=12` of the tree `dir` (a `-dirty` suffix when it has
/// uncommitted changes), or why not.
pub fn describe(dir: &Path) -> Result<String, String> {
    git(dir, &["describe", "--always", "--dirty", "--abbrev=12"])
}

/// The git tree the library `lib` was built in: the first directory above its real path that
/// is inside a git work tree (`target/release/libvkcl.so` of a checkout), if any.
pub fn source_tree_of(lib: &Path) -> Option<std::path::PathBuf> {
    let real = lib.canonicalize().ok()?;
    let dir = real.parent()?;
    let top = git(dir, &["rev-parse", "--show-toplevel"]).ok()?;
    Some(top.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("src/compiler/**", "src/compiler/lower/convert.rs"));
        assert!(glob("src/compiler/**", "src/compiler/mod.rs"));
        assert!(!glob("src/compiler/**", "src/compilers.rs"));
        assert!(glob("**/*.md", "README.md"));
        assert!(glob("**/*.md", "docs/a/b.md"));
        assert!(!glob("**/*.md", "docs/a/b.rs"));
        assert!(glob("*.md", "README.md"));
        assert!(!glob("*.md", "docs/x.md"));
        assert!(glob(
            "src/api/command_buffer*.rs",
            "src/api/command_buffer_094.rs"
        ));
        assert!(!glob("src/api/*.rs", "src/api/memory/map.rs"));
    }

    fn ids() -> Vec<String> {
        [
            "computeinfo",
            "api",
            "buffers",
            "mem_host_flags",
            "basic",
            "compiler",
            "device_timer",
            "cl_khr_command_buffer",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    fn names(files: &[&str]) -> Vec<String> {
        let t = parse_table(CHANGES).expect("the shipped table parses");
        let files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        affected(&t, &files, &ids())
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }

    #[test]
    fn the_shipped_table() {
        assert!(names(&["docs/cts-conform.md", "README.md", "tests/kernels_math.rs"]).is_empty());
        assert_eq!(
            names(&["src/compiler/lower/convert.rs"]),
            vec![
                "api",
                "buffers",
                "mem_host_flags",
                "basic",
                "compiler",
                "cl_khr_command_buffer"
            ]
        );
        assert_eq!(
            names(&["src/api/memory/rect.rs"]),
            vec!["api", "buffers", "mem_host_flags", "basic"]
        );
        assert_eq!(
            names(&["src/api/mutable_dispatch.rs"]),
            vec!["cl_khr_command_buffer"]
        );
        assert_eq!(
            names(&[
                "src/api/command_buffer_multi.rs",
                "src/core/command_buffer_remap.rs"
            ]),
            vec!["cl_khr_command_buffer"]
        );
        // Unknown files run everything; so does the runner's own code.
        assert_eq!(names(&["src/core/queue.rs"]).len(), ids().len());
        assert_eq!(names(&["Cargo.toml"]).len(), ids().len());
        assert_eq!(names(&["cts-runner/src/parse.rs"]).len(), ids().len());
        // The files that chose a suite are kept.
        let t = parse_table(CHANGES).expect("table");
        let a = affected(
            &t,
            &["src/api/memory/map.rs".into(), "docs/x.md".into()],
            &ids(),
        );
        assert_eq!(
            a[0],
            ("api".to_string(), vec!["src/api/memory/map.rs".to_string()])
        );
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(parse_table("src/** compiler\n").is_err());
        assert!(parse_table("src/** |\n").is_err());
        assert!(parse_table("src/** | all compiler\n").is_err());
        assert_eq!(
            parse_table("# c\nsrc/** | all -a\n").expect("ok"),
            vec![("src/**".to_string(), Target::AllBut(vec!["a".to_string()]))]
        );
    }
}
