//! Reading CTS output.
//!
//! The harness prints `<name>...` when a test starts and then one of `<name> passed`,
//! `<name> FAILED`, `<name> test not supported`, `<name> test currently not implemented` or
//! `<name> skipped (requires at least ...)`; a binary ends with `PASSED n of m tests.`,
//! `FAILED n of m tests.` or `SKIPPED n of m tests.`. A crash leaves the last started test
//! without a verdict and no closing line.

use crate::model::{Status, TestResult};
use crate::skips::Evidence;

/// One line of output and when it was read, seconds after the process started.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Seconds since the process started.
    pub at: f64,
    /// The text, without its newline.
    pub text: String,
}

/// What one process's output says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    /// Tests with a verdict, in order.
    pub tests: Vec<TestResult>,
    /// A test that started (`<name>...`) and has no verdict.
    pub unfinished: Option<(String, f64)>,
    /// The closing line, when present (`PASSED 3 of 3 tests.`).
    pub closing: Option<String>,
    /// The device name the harness printed.
    pub device_name: Option<String>,
    /// The count of sub-tests a binary that runs many under one test printed
    /// (`PASSED 765 of 765 sub-tests.`: conversions), when it printed one.
    pub subtests: Option<String>,
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*'))
}

/// `ends_with(suffix)` with a test name before it; returns the name.
fn name_before<'a>(line: &'a str, suffix: &str) -> Option<&'a str> {
    let name = line.strip_suffix(suffix)?;
    is_name(name).then_some(name)
}

/// Whether a line is a binary's closing line (`PASSED 3 of 3 tests.`, `FAILED 1 of 2 tests.`,
/// `SKIPPED 2 of 2 tests.`, `PASSED test.`, `FAILED test.`).
pub fn is_closing(line: &str) -> bool {
    let l = line.trim();
    ["PASSED ", "FAILED ", "SKIPPED "].iter().any(|p| {
        l.strip_prefix(p)
            .is_some_and(|rest| rest.ends_with(" tests.") || rest == "test.")
    })
}

/// Parses a process's output. `known` is the binary's test list (from `--list`): when given,
/// only those names start tests, so a test's own chatter (`Testing...`) is not taken for one.
/// A pass whose output holds skip notices becomes a partial pass or a pass without testing
/// ([`crate::skips`]); `work_marker` is the suite's marker of a case that ran, if it has one.
pub fn parse(lines: &[Line], known: Option<&[String]>, work_marker: Option<&str>) -> Parsed {
    let mut p = Parsed::default();
    // The running test: name, start time, what its output says of skipping.
    let mut current: Option<(String, f64, Evidence)> = None;
    for line in lines {
        let text = line.text.trim_end();
        if let Some(rest) = text.trim_start().strip_prefix("Compute Device Name = ") {
            let name = rest.split(", Compute Device Vendor").next().unwrap_or(rest);
            p.device_name.get_or_insert_with(|| name.to_string());
        }
        let t = text.trim();
        if (t.starts_with("PASSED ") || t.starts_with("FAILED ")) && t.ends_with(" sub-tests.") {
            p.subtests = Some(t.to_string());
            continue;
        }
        if is_closing(text) {
            p.closing = Some(text.trim().to_string());
            continue;
        }
        if let Some(name) = name_before(text, "...") {
            if known.is_none_or(|k| k.iter().any(|n| n == name)) {
                current = Some((name.to_string(), line.at, Evidence::default()));
                continue;
            }
        }
        // The binary does not know the name it was given and skips it (the conversions
        // binary's "Unable to parse function name conversions. Skipping"): never run, whatever
        // the closing line says.
        if let Some(rest) = text
            .trim_start()
            .strip_prefix("Unable to parse function name ")
        {
            if let Some(name) = rest.split(['.', ' ']).next().filter(|n| is_name(n)) {
                p.tests.push(TestResult {
                    name: name.to_string(),
                    status: Status::NotRun,
                    duration_s: None,
                    note: Some("the binary does not know this test name".to_string()),
                });
                continue;
            }
        }
        // A test's output may lack its last newline, gluing the verdict to it
        // (`...for this type.vload_local FAILED`): the running test's verdict is found at the
        // end of any line.
        let glued = current.as_ref().and_then(|(c, _, _)| {
            [
                (" passed", Status::Pass),
                (" FAILED", Status::Fail),
                (" test not supported", Status::Skip),
            ]
            .into_iter()
            .find_map(|(suffix, st)| {
                let before = text.strip_suffix(suffix)?.strip_suffix(c.as_str())?;
                Some((c.clone(), st, before.to_string()))
            })
        });
        if let (Some((_, _, before)), Some(c)) = (&glued, current.as_mut()) {
            c.2.see(before, work_marker);
        }
        let verdict = if let Some((n, st, _)) = &glued {
            Some((n.as_str(), *st))
        } else if let Some(n) = name_before(text, " passed") {
            Some((n, Status::Pass))
        } else if let Some(n) = name_before(text, " FAILED") {
            Some((n, Status::Fail))
        } else if let Some(n) = name_before(text, " test not supported")
            .or_else(|| name_before(text, " test currently not implemented"))
        {
            Some((n, Status::Skip))
        } else if let Some((n, _)) = text.split_once(" skipped (requires at least ") {
            is_name(n).then_some((n, Status::Skip))
        } else {
            text.strip_prefix("Subtest ")
                .and_then(|r| r.split_once(" tests is not supported in offline"))
                .and_then(|(n, _)| is_name(n).then_some((n, Status::Skip)))
        };
        let Some((name, verdict)) = verdict else {
            if let Some(c) = current.as_mut() {
                c.2.see(text, work_marker);
            }
            continue;
        };
        let (start, status, note) = match &current {
            Some((c, start, evidence)) if c == name => {
                let (status, note) = evidence.judge(name, verdict);
                (Some(*start), status, note)
            }
            // A verdict for a test that never announced itself is only believed when the
            // binary lists that name.
            _ if known.is_some_and(|k| k.iter().any(|n| n == name)) => (None, verdict, None),
            _ => {
                if let Some(c) = current.as_mut() {
                    c.2.see(text, work_marker);
                }
                continue;
            }
        };
        p.tests.push(TestResult {
            name: name.to_string(),
            status,
            duration_s: start.map(|s| line.at - s),
            note,
        });
        current = None;
    }
    p.unfinished = current.map(|(n, s, _)| (n, s));
    p
}

/// Splits raw text into [`Line`]s all stamped 0 (for tests and for logs read back).
pub fn untimed(text: &str) -> Vec<Line> {
    text.lines()
        .map(|l| Line {
            at: 0.0,
            text: l.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(text: &str) -> Vec<Line> {
        text.lines()
            .enumerate()
            .map(|(i, l)| Line {
                at: i as f64,
                text: l.to_string(),
            })
            .collect()
    }

    #[test]
    fn verdicts_and_durations() {
        let out = " Initializing random seed to 0.\n\
            Compute Device Name = llvmpipe (LLVM 15), Compute Device Vendor = Mesa, x\n\
            Device latest conformance version passed: v0000-01-01-00\n\
            a...\n\
            a passed\n\
            b...\n\
            some chatter\n\
            b FAILED\n\
            c...\n\
            c test not supported\n\
            d skipped (requires at least OpenCL version 2.0, but the device reports OpenCL version 1.2)\n\
            FAILED 1 of 4 tests.\n";
        let p = parse(&timed(out), None, None);
        let got: Vec<(&str, Status)> = p
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.status))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", Status::Pass),
                ("b", Status::Fail),
                ("c", Status::Skip)
            ],
            "d has no start line and no list: not believed"
        );
        assert_eq!(p.tests[1].duration_s, Some(2.0));
        assert_eq!(p.closing.as_deref(), Some("FAILED 1 of 4 tests."));
        assert_eq!(p.device_name.as_deref(), Some("llvmpipe (LLVM 15)"));
        assert!(p.unfinished.is_none());
        let known: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let p = parse(&timed(out), Some(&known), None);
        assert_eq!(p.tests.len(), 4);
        assert_eq!(p.tests[3].status, Status::Skip);
        assert_eq!(p.tests[3].duration_s, None);
    }

    #[test]
    fn crash_leaves_unfinished() {
        let p = parse(&timed("a...\na passed\nb...\nworking\n"), None, None);
        assert_eq!(p.tests.len(), 1);
        assert_eq!(p.unfinished, Some(("b".to_string(), 2.0)));
        assert!(p.closing.is_none());
    }

    #[test]
    fn chatter_is_not_a_test_when_list_known() {
        let known = vec!["a".to_string()];
        let p = parse(
            &timed("a...\nTesting...\nTesting passed\na passed\n"),
            Some(&known),
            None,
        );
        assert_eq!(p.tests.len(), 1);
        assert_eq!(p.tests[0].name, "a");
        assert_eq!(p.tests[0].duration_s, Some(3.0));
    }

    #[test]
    fn verdict_glued_to_unterminated_output() {
        let out = "vload_local...\nFailure; skipping further sizes for this type.vload_local FAILED\nFAILED test.\n";
        let p = parse(&timed(out), None, None);
        assert_eq!(p.tests.len(), 1);
        assert_eq!(p.tests[0].name, "vload_local");
        assert_eq!(p.tests[0].status, Status::Fail);
        // Glued to any text, even a word.
        let out = "k...\nFAILURE: defined even though images aren't supportedk FAILED\n";
        let p = parse(&timed(out), None, None);
        assert_eq!(
            (p.tests[0].name.as_str(), p.tests[0].status),
            ("k", Status::Fail)
        );
        // Another test's name at the end of chatter is not a verdict for the running one.
        let p = parse(&timed("a...\nsaw b passed\n"), None, None);
        assert!(p.tests.is_empty());
    }

    #[test]
    fn skip_lines_judge_a_pass() {
        let out = "p...\nDevice partition type \"X\" is not supported on device 0x1. Skipping test...\np passed\nq...\nq passed\nPASSED 2 of 2 tests.\n";
        let p = parse(&timed(out), None, Some("Testing on device "));
        assert_eq!(p.tests[0].status, Status::PassedWithoutTesting);
        assert!(p.tests[0]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("Skipping test")));
        assert_eq!(p.tests[1].status, Status::Pass);
        // A banner before any test is no test's notice.
        let out = "*** Wimpy mode enabled ***\nq...\nq passed\n";
        assert_eq!(parse(&timed(out), None, None).tests[0].status, Status::Pass);
        // Glued to the verdict, a notice still counts.
        let out = "g...\nWimpy mode enabled, skipping testg passed\n";
        assert_eq!(
            parse(&timed(out), None, None).tests[0].status,
            Status::PassedWithoutTesting
        );
    }

    #[test]
    fn closing_lines() {
        assert!(is_closing("PASSED 9 of 9 tests."));
        // A name the binary does not know is not run, even though it closes with PASSED.
        let lines: Vec<Line> =
            "Unable to parse function name conversions. Skipping\nPASSED 0 of 0 tests.\n"
                .lines()
                .enumerate()
                .map(|(i, t)| Line {
                    at: i as f64,
                    text: t.to_string(),
                })
                .collect();
        let p = parse(&lines, None, None);
        assert_eq!(p.tests.len(), 1);
        assert_eq!(p.tests[0].status, Status::NotRun);
        assert!(is_closing("FAILED test."));
        assert!(is_closing("SKIPPED 3 of 3 tests."));
        assert!(!is_closing("PASSED 1984 of 1984 sub-tests."));
        assert!(!is_closing("PASSED sub-test."));
    }

    #[test]
    fn whole_conversions_run_keeps_its_sub_test_count() {
        let out = "conversions...\n\tWimp pass\nconversions passed\nPASSED 765 of 765 sub-tests.\nPASSED test.\n";
        let p = parse(&timed(out), Some(&["conversions".to_string()]), None);
        assert_eq!(p.tests.len(), 1);
        assert_eq!(p.tests[0].status, Status::Pass);
        assert_eq!(p.subtests.as_deref(), Some("PASSED 765 of 765 sub-tests."));
        assert_eq!(p.closing.as_deref(), Some("PASSED test."));
    }
}
