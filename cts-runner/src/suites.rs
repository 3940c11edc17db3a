//! Which suites to run: the CTS's own conformance list, the exclusions, and the quick list.

use std::path::Path;

/// The exclusions shipped with the crate (`suites/exclusions.txt`).
pub const EXCLUSIONS: &str = include_str!("../suites/exclusions.txt");

/// Suite ids of the quick list, in order; `basic` is cut to [`QUICK_BASIC_TESTS`].
pub const QUICK: &[&str] = &[
    "computeinfo",
    "api",
    "buffers",
    "events",
    "profiling",
    "mem_host_flags",
    "basic",
];

/// The test_basic tests the quick list runs (fast ones that cover kernels, vectors, local
/// memory, barriers, atomics and copies; the whole of test_basic takes hours on 2 cores).
pub const QUICK_BASIC_TESTS: &[&str] = &[
    "hostptr",
    "fpmath",
    "intmath_int",
    "intmath_int4",
    "local_arg_def",
    "barrier",
    "int2fp",
    "fp2int",
    "astype",
    "async_copy_global_to_local",
    "vector_creation",
    "global_work_offsets",
    "kernel_call_kernel_function",
    "loop",
    "sizeof",
    "enqueue_map_buffer",
    "work_item_functions",
];

/// Tests that build thousands of programs, one at a time, each through clang, opt and
/// llvm-spirv (a tenth of a second of tool start-up apiece on a 2-core VM): (suite id, test
/// name prefix, factor). Their time limit is `--timeout` times the factor; the limit exists to
/// catch hangs, and these take 5 to 20 minutes on lavapipe without hanging.
/// - vectors vec_align_*: 1,800 to 3,600 programs each;
/// - relationals shuffle_*: about 720 programs each;
/// - c11_atomics atomic_*: 700 to 1,200 programs each since vkcl reports the OpenCL C 3.0
///   memory orders and scopes (one per type, order, scope and address-space shape; 236 to
///   300+ s each on lavapipe 25.0.7 on 2 cores, the session-13 full run);
/// - conversions: its binary lists one test, so its 1,045 conversions run as one process
///   (850 s on lavapipe 25.0.7 on 2 cores, session 14; cut at 327 conversions by 300 s).
pub const SLOW_TESTS: &[(&str, &str, u32)] = &[
    ("vectors", "vec_align_", 4),
    ("relationals", "shuffle_", 4),
    ("c11_atomics", "atomic_", 4),
    ("conversions", "", 5),
];

/// The time-limit factor of `test` in suite `suite_id` ([`SLOW_TESTS`]; 1 for the others).
pub fn slow_factor(suite_id: &str, test: &str) -> u32 {
    SLOW_TESTS
        .iter()
        .find(|(s, prefix, _)| *s == suite_id && test.starts_with(prefix))
        .map_or(1, |(_, _, f)| *f)
}

/// Suites whose tests print chatter that is not work even when every case is skipped: (binary
/// name, the text of a line that shows a case ran).
/// - device_partition prints "Maximal number of sub-devices on device ..." and "Testing on all
///   device ... finished" for every test, and "Testing on device ... partition type ..." for
///   each partition type it really tests.
pub const WORK_MARKERS: &[(&str, &str)] = &[("test_device_partition", "Testing on device ")];

/// The work marker of a binary (path relative to `test_conformance/`).
pub fn work_marker(binary: &str) -> Option<&'static str> {
    let name = binary.rsplit('/').next().unwrap_or(binary);
    WORK_MARKERS
        .iter()
        .find(|(b, _)| *b == name)
        .map(|(_, m)| *m)
}

/// Environment that a suite's processes get because of what its CTS binary requires: (text
/// in the binary, variable, value). The text is a message only that requirement prints, so a
/// CTS build without it runs as vkcl is by default.
/// - CTS commits from before `cl_khr_command_buffer` 1.0 (b8f8906c among them) skip every
///   command-buffer and mutable-dispatch test unless the extension reports exactly 0.9.8;
///   vkcl reports 1.0.0, the same ABI and semantics as 0.9.8, which
///   `VKCL_COMMAND_BUFFER_REVISION=0.9.8` reports instead (docs/command-buffers.md).
pub const BINARY_ENV: &[(&str, &str, &str)] = &[(
    "cl_khr_command_buffer version 0.9.8 is required",
    "VKCL_COMMAND_BUFFER_REVISION",
    "0.9.8",
)];

/// The [`BINARY_ENV`] entries whose text occurs in `binary` (the test binary's bytes).
pub fn binary_env(binary: &[u8]) -> Vec<(String, String)> {
    BINARY_ENV
        .iter()
        .filter(|(text, _, _)| {
            let text = text.as_bytes();
            binary.windows(text.len()).any(|w| w == text)
        })
        .map(|(_, k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One suite: one line of the conformance list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteSpec {
    /// Short unique id (`api`, `allocations_single_5_all`).
    pub id: String,
    /// The list's display name (`API`).
    pub title: String,
    /// Binary path relative to the build's `test_conformance/` (`api/test_api`).
    pub binary: String,
    /// Arguments the list gives the binary; a suite with arguments runs as one process.
    pub args: Vec<String>,
    /// Only these tests (empty: all that `--list` names).
    pub tests: Vec<String>,
    /// The line that shows one of a test's cases ran, for a suite whose tests print other
    /// chatter even when they skip everything ([`WORK_MARKERS`]); `None`: any line that is not
    /// a skip notice ([`crate::skips`]).
    pub work_marker: Option<&'static str>,
}

impl SuiteSpec {
    /// The list's command: binary and arguments.
    pub fn command(&self) -> String {
        let mut c = self.binary.clone();
        for a in &self.args {
            c.push(' ');
            c.push_str(a);
        }
        c
    }
}

/// The suite's list arguments from a recorded command ([`SuiteSpec::command`], with any
/// `NAME=value` environment of [`binary_env`] before the binary): the words after the binary.
pub fn command_args(command: &str) -> Vec<String> {
    command
        .split_whitespace()
        .skip_while(|w| {
            w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        })
        .skip(1)
        .map(String::from)
        .collect()
}

/// A suite left out of the full list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Excluded {
    /// The suite.
    pub suite: SuiteSpec,
    /// Why (from the exclusions file).
    pub reason: String,
}

/// The id for a list command: the binary's name less `test_`, then the arguments, with
/// anything but letters, digits and `_` dropped.
fn make_id(binary: &str, args: &[String]) -> String {
    let stem = binary.rsplit('/').next().unwrap_or(binary);
    let mut id = stem.strip_prefix("test_").unwrap_or(stem).to_string();
    for a in args {
        let clean: String = a
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !clean.is_empty() {
            id.push('_');
            id.push_str(&clean);
        }
    }
    id
}

/// Parses a CTS conformance list (`Name,binary args` lines; `#` comments; an optional leading
/// device-type field as in `CL_DEVICE_TYPE_CPU, Name,binary args`).
pub fn parse_list(text: &str) -> Vec<SuiteSpec> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 2 {
            continue;
        }
        let command = fields[fields.len() - 1];
        let title = fields[fields.len() - 2].to_string();
        let mut words = command.split_whitespace();
        let Some(binary) = words.next() else { continue };
        let args: Vec<String> = words.map(str::to_string).collect();
        let mut id = make_id(binary, &args);
        // Keep ids unique (the list may name one command twice).
        let base = id.clone();
        let mut n = 2;
        while out.iter().any(|s: &SuiteSpec| s.id == id) {
            id = format!("{base}_{n}");
            n += 1;
        }
        out.push(SuiteSpec {
            work_marker: work_marker(binary),
            id,
            title,
            binary: binary.to_string(),
            args,
            tests: Vec::new(),
        });
    }
    out
}

/// Parses the exclusions text into (command prefix, reason) pairs.
pub fn parse_exclusions(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (p, r) = l.split_once('|')?;
            Some((p.trim().to_string(), r.trim().to_string()))
        })
        .collect()
}

/// Splits `list` into the suites to run and the excluded ones.
pub fn apply_exclusions(
    list: Vec<SuiteSpec>,
    exclusions: &[(String, String)],
) -> (Vec<SuiteSpec>, Vec<Excluded>) {
    let mut keep = Vec::new();
    let mut dropped = Vec::new();
    for s in list {
        let cmd = s.command();
        match exclusions.iter().find(|(p, _)| cmd.starts_with(p.as_str())) {
            Some((_, reason)) => dropped.push(Excluded {
                suite: s,
                reason: reason.clone(),
            }),
            None => keep.push(s),
        }
    }
    (keep, dropped)
}

/// Errors choosing suites.
#[derive(Debug)]
pub enum SelectError {
    /// The conformance list could not be read.
    List(std::path::PathBuf, std::io::Error),
    /// A suite id named on the command line is not in the full list.
    Unknown(String),
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::List(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            SelectError::Unknown(id) => write!(
                f,
                "unknown suite '{id}' (ids are binary names less test_, e.g. api, basic)"
            ),
        }
    }
}

impl std::error::Error for SelectError {}

/// Finds the conformance list of a CTS build: beside the binaries, or in the source tree.
pub fn find_list(cts_dir: &Path) -> Option<std::path::PathBuf> {
    let name = "opencl_conformance_tests_full.csv";
    let beside = cts_dir.join("test_conformance").join(name);
    if beside.is_file() {
        return Some(beside);
    }
    let src = crate::cts_build::cts_source_dir(cts_dir)?;
    let p = src.join("test_conformance").join(name);
    p.is_file().then_some(p)
}

/// Resolves `--suites` (`quick`, `full`, or comma-separated ids, `id:test1+test2` for a
/// subset) against the conformance list text.
pub fn select(
    selection: &str,
    list_text: &str,
) -> Result<(Vec<SuiteSpec>, Vec<Excluded>), SelectError> {
    let all = parse_list(list_text);
    let exclusions = parse_exclusions(EXCLUSIONS);
    match selection {
        "full" => Ok(apply_exclusions(all, &exclusions)),
        "quick" => {
            let mut out = Vec::new();
            for id in QUICK {
                let mut s = all
                    .iter()
                    .find(|s| s.id == *id)
                    .cloned()
                    .ok_or_else(|| SelectError::Unknown(id.to_string()))?;
                if *id == "basic" {
                    s.tests = QUICK_BASIC_TESTS.iter().map(|t| t.to_string()).collect();
                }
                out.push(s);
            }
            Ok((out, Vec::new()))
        }
        ids => {
            let mut out = Vec::new();
            for item in ids.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (id, tests) = match item.split_once(':') {
                    Some((id, t)) => (id, t.split('+').map(str::to_string).collect()),
                    None => (item, Vec::new()),
                };
                let mut s = all
                    .iter()
                    .find(|s| s.id == id)
                    .cloned()
                    .ok_or_else(|| SelectError::Unknown(id.to_string()))?;
                s.tests = tests;
                out.push(s);
            }
            Ok((out, Vec::new()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_commands_give_back_their_arguments() {
        assert_eq!(
            command_args("VKCL_COMMAND_BUFFER_REVISION=0.9.8 dims/test_dims full*"),
            vec!["full*"]
        );
        assert_eq!(command_args("api/test_api"), Vec::<String>::new());
        // An argument with `=` after the binary is kept.
        assert_eq!(
            command_args("math/test_bruteforce -w x=1"),
            vec!["-w", "x=1"]
        );
    }

    #[test]
    fn binaries_that_require_command_buffer_098_get_it() {
        let old_cts = b"\0x\0cl_khr_command_buffer version 0.9.8 is required to run the test\0";
        assert_eq!(
            binary_env(old_cts),
            vec![(
                "VKCL_COMMAND_BUFFER_REVISION".to_string(),
                "0.9.8".to_string()
            )]
        );
        // A CTS that accepts 1.0 (or any other binary) runs with vkcl's defaults.
        assert!(binary_env(b"cl_khr_command_buffer version 1.0.0 or later").is_empty());
    }

    #[test]
    fn slow_tests_get_a_longer_limit() {
        assert_eq!(slow_factor("vectors", "vec_align_struct"), 4);
        assert_eq!(slow_factor("relationals", "shuffle_built_in"), 4);
        assert_eq!(slow_factor("relationals", "relational_any"), 1);
        assert_eq!(slow_factor("basic", "vec_align_struct"), 1);
        assert_eq!(slow_factor("c11_atomics", "atomic_fetch_xor"), 4);
        assert_eq!(slow_factor("c11_atomics", "svm_atomic_fetch_xor"), 1);
        assert_eq!(slow_factor("conversions", "conversions"), 5);
        assert_eq!(slow_factor("commonfns", "conversions"), 1);
    }

    const LIST: &str = "# comment\n\
        Compute Info,computeinfo/test_computeinfo\n\
        API,api/test_api\n\
        Basic,basic/test_basic\n\
        Allocations (single maximum),allocations/test_allocations single 5 all\n\
        Allocations (total maximum),allocations/test_allocations multiple 5 all\n\
        Thread Dimensions,thread_dimensions/test_thread_dimensions full*\n\
        Images (Kernel),images/kernel_read_write/test_image_streams CL_FILTER_NEAREST\n\
        CL_DEVICE_TYPE_CPU, Images (Kernel CL_FILTER_LINEAR),images/kernel_read_write/test_image_streams CL_FILTER_LINEAR\n\
        OpenCL-GL Sharing,gl/test_gl\n\
        Device Partitioning,device_partition/test_device_partition\n";

    #[test]
    fn parses_ids_titles_and_args() {
        let l = parse_list(LIST);
        assert_eq!(l.len(), 10);
        assert_eq!(l[1].id, "api");
        assert_eq!(l[1].title, "API");
        assert_eq!(l[3].id, "allocations_single_5_all");
        assert_eq!(l[3].args, vec!["single", "5", "all"]);
        assert_eq!(l[5].id, "thread_dimensions_full");
        assert_eq!(l[7].title, "Images (Kernel CL_FILTER_LINEAR)");
        assert_eq!(l[9].work_marker, Some("Testing on device "));
        assert_eq!(l[1].work_marker, None);
    }

    #[test]
    fn full_excludes_images_and_gl_with_reasons() {
        let (keep, dropped) = select("full", LIST).expect("full list");
        let kept: Vec<&str> = keep.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            kept,
            vec![
                "computeinfo",
                "api",
                "basic",
                "allocations_single_5_all",
                "allocations_multiple_5_all",
                "thread_dimensions_full",
                "device_partition"
            ]
        );
        assert_eq!(dropped.len(), 3);
        assert!(dropped.iter().all(|d| !d.reason.is_empty()));
        assert!(dropped[2].reason.contains("OpenGL"));
    }

    #[test]
    fn named_selection_with_subset() {
        let (s, _) = select("api,basic:hostptr+fpmath", LIST).expect("selection");
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].tests, vec!["hostptr", "fpmath"]);
        assert!(matches!(
            select("nosuch", LIST),
            Err(SelectError::Unknown(_))
        ));
    }

    #[test]
    fn every_exclusion_line_has_a_reason() {
        let e = parse_exclusions(EXCLUSIONS);
        // The file parses to something (its size shrinks as suites are claimed).
        assert!(!e.is_empty());
        let lines = EXCLUSIONS
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .count();
        assert_eq!(e.len(), lines, "an exclusion line lacks '| reason'");
    }
}
