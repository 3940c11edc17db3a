//! Expectations: the last accepted status of every test, per device kind, kept in the repo.
//!
//! A run fails when a test expected to pass does not (a regression) or a test expected not to
//! pass passes (an unexpected pass: accept it with `--update-expectations` so that it is
//! guarded from then on). Other changes (fail to crash, skip to fail) and new tests are
//! reported without failing the run.

use crate::model::{Status, SuiteResult, SuiteState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The expectations file.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Expectations {
    /// Device kind (`lavapipe`).
    pub device: String,
    /// The CTS commit the expectations were taken with.
    #[serde(default)]
    pub cts_commit: Option<String>,
    /// Suite id -> test name -> status.
    pub suites: BTreeMap<String, BTreeMap<String, Status>>,
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
        let expected = exp.suites.get(&s.id);
        for t in &s.tests {
            let change = Change {
                suite: s.id.clone(),
                test: t.name.clone(),
                expected: expected.and_then(|e| e.get(&t.name)).copied(),
                got: t.status,
            };
            match change.expected {
                None => c.new_tests.push(change),
                Some(e) if e == t.status => {}
                Some(Status::Pass) => c.regressions.push(change),
                Some(_) if t.status == Status::Pass => c.unexpected_passes.push(change),
                Some(_) => c.other_changes.push(change),
            }
        }
    }
    c
}

/// Takes this run's statuses into the expectations (suites that ran; their tests that were not
/// run this time keep their old entries).
pub fn update(exp: &mut Expectations, results: &[SuiteResult], cts_commit: Option<&str>) {
    for s in results.iter().filter(|s| s.state == SuiteState::Ran) {
        let entry = exp.suites.entry(s.id.clone()).or_default();
        for t in &s.tests {
            entry.insert(t.name.clone(), t.status);
        }
    }
    if let Some(c) = cts_commit {
        exp.cts_commit = Some(c.to_string());
    }
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
