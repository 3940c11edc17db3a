//! The results file and the Markdown tables.

use crate::model::{RunResults, Status, SuiteResult, SuiteState};
use crate::suites::Excluded;
use std::fmt::Write;

fn dur(s: f64) -> String {
    if s >= 120.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` for seconds since the Unix epoch.
pub fn utc(unix: u64) -> String {
    let (days, rem) = ((unix / 86_400) as i64, unix % 86_400);
    // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// What the columns mean, above every summary table.
pub const COLUMNS: &str = "pass: the test ran and passed; partial pass: it passed what it \
ran and its log says it skipped some cases; passed without testing: the CTS printed `passed` but \
its log says it skipped its work (never counted as a pass); skip: the CTS said not supported; \
not run: the process never reached the test (it died, timed out or ended first).\n\n";

/// One row per suite: counts by status and duration, then a total line; excluded suites
/// listed after, each with its reason.
pub fn summary_table(run: &RunResults, excluded: &[Excluded]) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# CTS results: {}\n", run.device);
    if let Some(d) = &run.device_name {
        let _ = writeln!(md, "- device: {d}");
    }
    let _ = writeln!(
        md,
        "- CTS commit: {}",
        run.cts_commit.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(
        md,
        "- vkcl commit: {}",
        run.vkcl_commit.as_deref().unwrap_or("unknown")
    );
    if let Some(c) = &run.changed_since {
        let _ = writeln!(md, "- changed since: {c}");
    }
    let _ = writeln!(md, "- command: `{}`", run.command);
    let _ = writeln!(md, "- started: {}\n", utc(run.started_unix));
    md.push_str(COLUMNS);
    md.push_str("| suite | state | tests |");
    for st in Status::ALL {
        let _ = write!(md, " {} |", st.heading());
    }
    md.push_str(" duration |\n|---|---|---:|");
    for _ in Status::ALL {
        md.push_str("---:|");
    }
    md.push_str("---:|\n");
    let mut totals = [0usize; Status::ALL.len()];
    let mut total_tests = 0;
    let mut total_time = 0.0;
    for s in &run.suites {
        let state = match s.state {
            SuiteState::Ran => "ran",
            SuiteState::NotBuilt => "not built",
            SuiteState::Error => "error",
        };
        let _ = write!(
            md,
            "| [{}]({}.md) | {} | {} |",
            s.id,
            s.id,
            state,
            s.tests.len()
        );
        for (i, st) in Status::ALL.iter().enumerate() {
            let n = s.count(*st);
            totals[i] += n;
            let _ = write!(md, " {n} |");
        }
        let _ = writeln!(md, " {} |", dur(s.duration_s));
        total_tests += s.tests.len();
        total_time += s.duration_s;
    }
    let _ = write!(md, "| **total** | | **{total_tests}** |");
    for t in totals {
        let _ = write!(md, " **{t}** |");
    }
    let _ = writeln!(md, " {} |", dur(total_time));
    if !excluded.is_empty() {
        md.push_str("\n## Excluded suites\n\n| suite | command | reason |\n|---|---|---|\n");
        for e in excluded {
            let _ = writeln!(
                md,
                "| {} | `{}` | {} |",
                e.suite.title,
                e.suite.command(),
                e.reason
            );
        }
    }
    md
}

/// One suite's table: every test with its status, duration and note.
pub fn suite_table(s: &SuiteResult) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# {} (`{}`)\n", s.title, s.command);
    if let Some(n) = &s.note {
        let _ = writeln!(md, "{n}\n");
    }
    let counts: Vec<String> = Status::ALL
        .iter()
        .filter(|st| s.count(**st) > 0)
        .map(|st| format!("{} {}", s.count(*st), st.heading()))
        .collect();
    let _ = writeln!(
        md,
        "{} tests: {}; {}\n",
        s.tests.len(),
        if counts.is_empty() {
            "none".to_string()
        } else {
            counts.join(", ")
        },
        dur(s.duration_s)
    );
    if let Some(log) = &s.log {
        let _ = writeln!(md, "Raw log: `{log}`\n");
    }
    md.push_str("| test | status | duration | note |\n|---|---|---:|---|\n");
    for t in &s.tests {
        let d = t
            .duration_s
            .map_or("-".to_string(), |d| format!("{d:.2} s"));
        let note = t.note.as_deref().unwrap_or("").replace('|', "\\|");
        let status = if t.status.ran_and_passed() {
            t.status.to_string()
        } else {
            format!("**{}**", t.status)
        };
        let _ = writeln!(md, "| {} | {} | {} | {} |", t.name, status, d, note);
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TestResult;

    fn suite() -> SuiteResult {
        SuiteResult {
            id: "api".into(),
            title: "API".into(),
            command: "api/test_api".into(),
            state: SuiteState::Ran,
            note: None,
            duration_s: 3.0,
            tests: vec![
                TestResult {
                    name: "a".into(),
                    status: Status::Pass,
                    duration_s: Some(1.0),
                    note: None,
                },
                TestResult {
                    name: "b".into(),
                    status: Status::Crash,
                    duration_s: Some(2.0),
                    note: Some("died by signal 11".into()),
                },
            ],
            log: Some("logs/api.log".into()),
        }
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_069_999), "2026-11-30 20:19:59 UTC");
    }

    #[test]
    fn tables_count() {
        let run = RunResults {
            device: "lavapipe".into(),
            device_name: None,
            cts_commit: Some("abc".into()),
            command: "cts-runner".into(),
            started_unix: 0,
            lib: "x".into(),
            vkcl_commit: Some("0eb60c5".into()),
            changed_since: None,
            suites: vec![suite()],
        };
        let md = summary_table(&run, &[]);
        assert!(
            md.contains("| suite | state | tests | pass | partial pass | passed without testing | fail | skip | crash | timeout | not run | duration |"),
            "{md}"
        );
        assert!(
            md.contains("| [api](api.md) | ran | 2 | 1 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 3.0 s |"),
            "{md}"
        );
        assert!(
            md.contains("| **total** | | **2** | **1** | **0** | **0** | **0** | **0** | **1** |"),
            "{md}"
        );
        assert!(md.contains("- vkcl commit: 0eb60c5\n"), "{md}");
        let mut s2 = suite();
        s2.tests[0].status = Status::PassedWithoutTesting;
        s2.tests[1].status = Status::PartialPass;
        let run2 = RunResults {
            suites: vec![s2.clone()],
            ..run
        };
        let md = summary_table(&run2, &[]);
        assert!(
            md.contains("| [api](api.md) | ran | 2 | 0 | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 3.0 s |"),
            "an untested pass is not a pass: {md}"
        );
        let t = suite_table(&s2);
        assert!(t.contains("| a | **passed_without_testing** |"), "{t}");
        assert!(t.contains("| b | partial_pass |"), "{t}");
        let t = suite_table(&suite());
        assert!(
            t.contains("| b | **crash** | 2.00 s | died by signal 11 |"),
            "{t}"
        );
        assert!(t.contains("2 tests: 1 pass, 1 crash; 3.0 s"), "{t}");
    }
}
