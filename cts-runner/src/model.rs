//! The result types shared by the runner, the reports and the expectations.

use serde::{Deserialize, Serialize};

/// What became of one CTS test.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// `<name> passed`, and its log has no skip notice (or the suite's work marker says it
    /// ran in full).
    Pass,
    /// `<name> passed` after skip notices, with other output showing that some of its cases
    /// ran (device_partition `partition_all`: EQUALLY and BY_COUNTS ran, the affinity domains
    /// were skipped). Shown in its own column, next to pass.
    PartialPass,
    /// `<name> passed`, but its log says only that it skipped its work ("Wimpy mode enabled,
    /// skipping test", "SVM_ATOMICS not supported", "Skipping test (implicitly passing)"):
    /// the CTS's pass verdict for a test that exercised nothing. Never counted as a pass.
    PassedWithoutTesting,
    /// `<name> FAILED`, or the process exited non-zero without a verdict for the test.
    Fail,
    /// `<name> test not supported`, a version skip, or a binary that closed with
    /// `SKIPPED n of m tests.`.
    Skip,
    /// The process died (signal, or ended without its closing line) while running the test.
    Crash,
    /// The process ran past its time limit while running the test, and was killed.
    Timeout,
    /// Listed by the binary but never reached (a whole-suite process died, timed out or ended
    /// before its `<name>...` line).
    NotRun,
}

impl Status {
    /// Every status, in table order.
    pub const ALL: [Status; 8] = [
        Status::Pass,
        Status::PartialPass,
        Status::PassedWithoutTesting,
        Status::Fail,
        Status::Skip,
        Status::Crash,
        Status::Timeout,
        Status::NotRun,
    ];

    /// The name used in JSON, tables and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::PartialPass => "partial_pass",
            Status::PassedWithoutTesting => "passed_without_testing",
            Status::Fail => "fail",
            Status::Skip => "skip",
            Status::Crash => "crash",
            Status::Timeout => "timeout",
            Status::NotRun => "not_run",
        }
    }
}

impl Status {
    /// The column heading in the Markdown tables.
    pub fn heading(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::PartialPass => "partial pass",
            Status::PassedWithoutTesting => "passed without testing",
            Status::Fail => "fail",
            Status::Skip => "skip",
            Status::Crash => "crash",
            Status::Timeout => "timeout",
            Status::NotRun => "not run",
        }
    }

    /// Whether the test ran and passed what it ran: [`Status::Pass`] or
    /// [`Status::PartialPass`] (never [`Status::PassedWithoutTesting`]).
    pub fn ran_and_passed(self) -> bool {
        matches!(self, Status::Pass | Status::PartialPass)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One test's result.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TestResult {
    /// The CTS test name (what `--list` prints).
    pub name: String,
    /// Its verdict.
    pub status: Status,
    /// Seconds from its `<name>...` line (or its process start) to its verdict; `None` when
    /// the output gave no way to tell.
    pub duration_s: Option<f64>,
    /// A short explanation for crash / timeout / not-run verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Whether a suite ran at all.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum SuiteState {
    /// Its binary ran (the per-test results say how it went).
    Ran,
    /// Its binary is absent from the CTS build.
    NotBuilt,
    /// It could not be started (the note in the report says why).
    Error,
}

/// One suite's results.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct SuiteResult {
    /// Short id (`api`, `allocations_single_5_all`).
    pub id: String,
    /// The CTS's display name (`API`).
    pub title: String,
    /// Binary path relative to the build's `test_conformance/` plus its arguments.
    pub command: String,
    /// Whether it ran.
    pub state: SuiteState,
    /// Why it did not run, or other remarks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Sum of the wall time of its processes, seconds.
    pub duration_s: f64,
    /// Per-test results, in the binary's order.
    pub tests: Vec<TestResult>,
    /// The raw log, relative to the output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

impl SuiteResult {
    /// How many tests ended with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.tests.iter().filter(|t| t.status == status).count()
    }
}

/// One run over one device: what `--out DIR/<device>.json` holds.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct RunResults {
    /// Device kind label (`lavapipe`), as given by `--device`.
    pub device: String,
    /// The device name the CTS printed (`Compute Device Name = ...`), when seen.
    #[serde(default)]
    pub device_name: Option<String>,
    /// The CTS source commit, when it could be found.
    pub cts_commit: Option<String>,
    /// The command line that produced this file.
    pub command: String,
    /// Start time, seconds since the Unix epoch (UTC).
    pub started_unix: u64,
    /// The vkcl library that was tested (as given; a private copy was run).
    pub lib: String,
    /// The vkcl commit the run was against (`--vkcl-commit`, or `git describe --always
    /// --dirty` of the library's source tree), and how it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vkcl_commit: Option<String>,
    /// `--changed-since`: the commit compared with and the files that chose the suites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_since: Option<String>,
    /// Per-suite results.
    pub suites: Vec<SuiteResult>,
}

/// One finished suite as the runner writes it the moment the suite ends
/// (`<out>/suites/<id>.json`), so that a run cut short keeps it and `--resume` can reuse it.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct SuiteRecord {
    /// Device kind label (`--device`).
    pub device: String,
    /// The vkcl commit, as [`RunResults::vkcl_commit`] states it.
    pub vkcl_commit: Option<String>,
    /// The CTS source commit.
    pub cts_commit: Option<String>,
    /// Whether `CL_WIMPY_MODE` was set.
    pub wimpy: bool,
    /// The suite's results.
    pub suite: SuiteResult,
}

impl SuiteRecord {
    /// Whether `self` was made under the same conditions as `other` (device label, vkcl and
    /// CTS commits, wimpy mode), so that one run's results may stand in for the other's. An
    /// unknown vkcl commit never matches.
    pub fn same_conditions(&self, other: &SuiteRecord) -> bool {
        let commit = |c: &Option<String>| {
            c.as_deref()
                .and_then(|c| c.split_whitespace().next())
                .map(str::to_string)
        };
        self.device == other.device
            && self.wimpy == other.wimpy
            && self.cts_commit == other.cts_commit
            && commit(&self.vkcl_commit).is_some()
            && commit(&self.vkcl_commit) == commit(&other.vkcl_commit)
    }
}
