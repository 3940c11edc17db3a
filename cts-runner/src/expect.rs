//! Expectations: the last accepted status of every test, per device kind, kept in the repo.
//!
//! A run fails when a test expected to pass does not (a regression) or a test expected not to
//! pass passes (an unexpected pass: accept it with `--update-expectations` so that it is
//! guarded from then on). Other changes (fail to crash, skip to fail) and new tests are
//! reported without failing the run.
//!
//! "Pass" here has two grades: [`Status::Pass`] above [`Status::PartialPass`] (some cases
//! skipped); [`Status::PassedWithoutTesting`] is not a pass. A pass that becomes a partial pass
//! or a pass without testing is a regression; the reverse is an unexpected pass.
//!
//! The file format (`format`):
//! - 1 (no `format` key): written by runners that counted a pass without testing, and a
//!   partial pass, as `pass`, and device_partition's passes after a skip line as `skip`. Those
//!   two readings of an old `pass` or `skip` are reported as reclassified, not as regressions.
//! - 2: every status as this runner reads it. `--update-expectations` writes format 2.
//!
//! A test's entry is its status (`"fail"`) or, to say why, `{"status": "fail", "note": "..."}`.

use crate::model::{Status, SuiteResult, SuiteState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The format [`update`] writes.
pub const FORMAT: u32 = 2;

fn format_1() -> u32 {
    1
}

fn is_format_1(f: &u32) -> bool {
    *f == 1
}

/// One test's expectation: a status, with a note when the file says why.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum Entry {
    /// Just the status.
    Status(Status),
    /// The status and why (how it was measured, what it waits for).
    Noted {
        /// The expected status.
        status: Status,
        /// Why.
        note: String,
    },
}

impl Entry {
    /// The expected status.
    pub fn status(&self) -> Status {
        match self {
            Entry::Status(s) | Entry::Noted { status: s, .. } => *s,
        }
    }
}

impl From<Status> for Entry {
    fn from(s: Status) -> Self {
        Entry::Status(s)
    }
}

/// The expectations file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Expectations {
    /// File format; absent means 1 (see the module docs).
    #[serde(default = "format_1", skip_serializing_if = "is_format_1")]
    pub format: u32,
    /// Device kind (`lavapipe`).
    pub device: String,
    /// The CTS commit the expectations were taken with.
    #[serde(default)]
    pub cts_commit: Option<String>,
    /// The vkcl commit of the last update, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vkcl_commit: Option<String>,
    /// Suite id -> test name -> expectation.
    pub suites: BTreeMap<String, BTreeMap<String, Entry>>,
}

impl Default for Expectations {
    fn default() -> Self {
        Expectations {
            format: FORMAT,
            device: String::new(),
            cts_commit: None,
            vkcl_commit: None,
            suites: BTreeMap::new(),
        }
    }
}

impl Expectations {
    /// The expected status of a test, if the file names it.
    pub fn get(&self, suite: &str, test: &str) -> Option<Status> {
        self.suites.get(suite)?.get(test).map(Entry::status)
    }
}

/// Grade of passing: 2 a pass, 1 a partial pass, 0 anything else.
fn grade(s: Status) -> u8 {
    match s {
        Status::Pass => 2,
        Status::PartialPass => 1,
        _ => 0,
    }
}

/// Whether a format-1 file's `expected` may stand for `got`: such a runner wrote `pass` for a
/// partial pass and for a pass without testing, and `skip` for device_partition's passes
/// after a skip line.
fn format_1_reading(expected: Status, got: Status) -> bool {
    matches!(
        (expected, got),
        (Status::Pass, Status::PartialPass)
            | (Status::Pass, Status::PassedWithoutTesting)
            | (Status::Skip, Status::PassedWithoutTesting)
            | (Status::Skip, Status::PartialPass)
    )
}

/// One difference from the expectations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Suite id.
    pub suite: String,
    /// Test name.
    pub test: String,
    /// Expected status (`None`: a test the expectations do not know).
    pub expected: Option<Status>,
    /// Status in this run.
    pub got: Status,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.expected {
            Some(e) => write!(
                f,
                "{}/{}: expected {}, got {}",
                self.suite, self.test, e, self.got
            ),
            None => write!(
                f,
                "{}/{}: new test, got {}",
                self.suite, self.test, self.got
            ),
        }
    }
}

/// The comparison of a run with the expectations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Expected pass, did not pass.
    pub regressions: Vec<Change>,
    /// Expected not to pass, passed.
    pub unexpected_passes: Vec<Change>,
    /// Other status changes (not fatal).
    pub other_changes: Vec<Change>,
    /// Tests the expectations do not name (not fatal).
    pub new_tests: Vec<Change>,
    /// A format-1 file's `pass` or `skip` that this runner reads as a partial pass or a pass
    /// without testing (not fatal; `--update-expectations` writes them down).
    pub reclassified: Vec<Change>,
}

impl Comparison {
    /// Whether the run must exit non-zero.
    pub fn failed(&self) -> bool {
        !self.regressions.is_empty() || !self.unexpected_passes.is_empty()
    }
}

/// Compares the suites that ran with the expectations. Suites that did not run (not built,
/// not selected) and tests not selected this time are not compared.
pub fn compare(exp: &Expectations, results: &[SuiteResult]) -> Comparison {
    let mut c = Comparison::default();
    for s in results.iter().filter(|s| s.state == SuiteState::Ran) {
        for t in &s.tests {
            let change = Change {
                suite: s.id.clone(),
                test: t.name.clone(),
                expected: exp.get(&s.id, &t.name),
                got: t.status,
            };
            let Some(e) = change.expected else {
                c.new_tests.push(change);
                continue;
            };
            if e == t.status {
                continue;
            }
            if exp.format < 2 && format_1_reading(e, t.status) {
                c.reclassified.push(change);
            } else if grade(t.status) < grade(e) {
                c.regressions.push(change);
            } else if grade(t.status) > grade(e) {
                c.unexpected_passes.push(change);
            } else {
                c.other_changes.push(change);
            }
        }
    }
    c
}

/// Takes this run's statuses into the expectations (suites that ran; their tests not selected
/// this time keep their old entries, while a test the run lists as not run is written so).
/// A test whose status is unchanged keeps its note; a changed one loses it. The file becomes
/// format 2.
pub fn update(exp: &mut Expectations, results: &[SuiteResult], cts_commit: Option<&str>) {
    for s in results.iter().filter(|s| s.state == SuiteState::Ran) {
        let entry = exp.suites.entry(s.id.clone()).or_default();
        for t in &s.tests {
            if entry.get(&t.name).map(Entry::status) != Some(t.status) {
                entry.insert(t.name.clone(), Entry::Status(t.status));
            }
        }
    }
    if let Some(c) = cts_commit {
        exp.cts_commit = Some(c.to_string());
    }
    exp.format = FORMAT;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TestResult;

    fn suite(tests: &[(&str, Status)]) -> SuiteResult {
        SuiteResult {
            id: "api".into(),
            title: "API".into(),
            command: "api/test_api".into(),
            state: SuiteState::Ran,
            note: None,
            duration_s: 0.0,
            tests: tests
                .iter()
                .map(|(n, s)| TestResult {
                    name: n.to_string(),
                    status: *s,
                    duration_s: None,
                    note: None,
                })
                .collect(),
            log: None,
        }
    }

    #[test]
    fn regressions_and_unexpected_passes_fail() {
        let mut exp = Expectations::default();
        update(
            &mut exp,
            &[suite(&[
                ("a", Status::Pass),
                ("b", Status::Fail),
                ("c", Status::Skip),
                ("d", Status::Fail),
            ])],
            Some("abc"),
        );
        assert_eq!(exp.cts_commit.as_deref(), Some("abc"));
        let same = compare(&exp, &[suite(&[("a", Status::Pass), ("b", Status::Fail)])]);
        assert!(!same.failed());
        let run = suite(&[
            ("a", Status::Crash),
            ("b", Status::Pass),
            ("c", Status::Fail),
            ("d", Status::Timeout),
            ("e", Status::Fail),
        ]);
        let c = compare(&exp, std::slice::from_ref(&run));
        assert!(c.failed());
        assert_eq!(c.regressions.len(), 1);
        assert_eq!(
            c.regressions[0].to_string(),
            "api/a: expected pass, got crash"
        );
        assert_eq!(c.unexpected_passes[0].test, "b");
        assert_eq!(c.other_changes.len(), 2);
        assert_eq!(c.new_tests[0].to_string(), "api/e: new test, got fail");
        update(&mut exp, std::slice::from_ref(&run), None);
        assert!(!compare(&exp, &[run]).failed());
        assert_eq!(exp.suites["api"].len(), 5);
        assert_eq!(exp.format, FORMAT);
    }

    #[test]
    fn grades_of_passing() {
        let mut exp = Expectations::default();
        update(
            &mut exp,
            &[suite(&[
                ("p", Status::Pass),
                ("q", Status::PartialPass),
                ("u", Status::PassedWithoutTesting),
                ("s", Status::Skip),
            ])],
            None,
        );
        let c = compare(
            &exp,
            &[suite(&[
                ("p", Status::PassedWithoutTesting),
                ("q", Status::Pass),
                ("u", Status::PartialPass),
                ("s", Status::PassedWithoutTesting),
            ])],
        );
        let names = |v: &[Change]| v.iter().map(|c| c.test.clone()).collect::<Vec<_>>();
        assert_eq!(names(&c.regressions), vec!["p"]);
        assert_eq!(names(&c.unexpected_passes), vec!["q", "u"]);
        assert_eq!(names(&c.other_changes), vec!["s"]);
        let c = compare(&exp, &[suite(&[("q", Status::Fail)])]);
        assert_eq!(
            names(&c.regressions),
            vec!["q"],
            "partial to fail regresses"
        );
    }

    #[test]
    fn the_shipped_expectations_read() {
        let exp: Expectations =
            serde_json::from_str(include_str!("../expectations/lavapipe.json")).expect("parses");
        assert_eq!(exp.format, 1, "format 1 until a full run rewrites it");
        assert_eq!(
            exp.get("relationals", "shuffle_copy"),
            Some(Status::Timeout)
        );
        assert_eq!(
            exp.get("basic", "immutable_arrayreadwrite"),
            Some(Status::Pass)
        );
        assert!(exp.suites.values().map(BTreeMap::len).sum::<usize>() > 1000);
    }

    #[test]
    fn format_1_files_read_and_reclassify() {
        let text = r#"{"device": "lavapipe", "cts_commit": "b8f8",
            "suites": {"api": {"a": "pass", "b": "skip", "c": "pass",
              "d": {"status": "timeout", "note": "600 s without --wimpy"}}}}"#;
        let mut exp: Expectations = serde_json::from_str(text).expect("format 1 reads");
        assert_eq!(exp.format, 1);
        assert_eq!(exp.get("api", "d"), Some(Status::Timeout));
        let run = suite(&[
            ("a", Status::PassedWithoutTesting),
            ("b", Status::PassedWithoutTesting),
            ("c", Status::Fail),
            ("d", Status::Timeout),
        ]);
        let c = compare(&exp, std::slice::from_ref(&run));
        assert_eq!(c.reclassified.len(), 2);
        assert_eq!(c.regressions.len(), 1, "a real failure still fails");
        update(&mut exp, &[run], None);
        assert_eq!(exp.format, 2);
        // The unchanged noted entry keeps its note; format 2 is strict from now on.
        let out = serde_json::to_string(&exp).expect("ser");
        assert!(out.contains(r#""format":2"#), "{out}");
        assert!(out.contains("600 s without --wimpy"), "{out}");
        assert!(out.contains(r#""a":"passed_without_testing""#), "{out}");
        let back: Expectations = serde_json::from_str(&out).expect("reads back");
        let c = compare(&back, &[suite(&[("a", Status::Pass)])]);
        assert_eq!(c.unexpected_passes.len(), 1);
    }

    #[test]
    fn suites_that_did_not_run_are_not_compared() {
        let mut exp = Expectations::default();
        update(&mut exp, &[suite(&[("a", Status::Pass)])], None);
        let mut s = suite(&[]);
        s.state = SuiteState::NotBuilt;
        assert!(!compare(&exp, &[s]).failed());
    }
}
