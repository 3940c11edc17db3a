//! Reading back the runner's own raw logs (`logs/<suite>.log`): each process's output under a
//! `### <binary> <args> (<how it ended>, <seconds> s)` header. Used to judge recorded runs again
//! with the current rules (`cts-reclassify`) and by the tests on recorded excerpts.

use crate::exec::{Exit, Outcome};
use crate::model::TestResult;
use crate::parse::{self, Line};
use crate::runner;

/// One process of a raw log.
#[derive(Clone, Debug)]
pub struct Logged {
    /// Binary path relative to `test_conformance/`.
    pub binary: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// How it ended and its output (lines stamped 0: the log keeps no times).
    pub outcome: Outcome,
}

/// Parses `exit 0`, `signal 6`, `timed out` (what [`runner`] writes in a header).
fn parse_exit(s: &str) -> Option<Exit> {
    if s == "timed out" {
        return Some(Exit::TimedOut);
    }
    if let Some(c) = s.strip_prefix("exit ") {
        return c.parse().ok().map(Exit::Code);
    }
    s.strip_prefix("signal ")?.parse().ok().map(Exit::Signal)
}

/// Parses one header line, without its `### `.
fn parse_header(h: &str) -> Option<(String, Vec<String>, Exit, f64)> {
    let (cmd, tail) = h.rsplit_once(" (")?;
    let (how, secs) = tail.strip_suffix(" s)")?.rsplit_once(", ")?;
    let mut words = cmd.split_whitespace();
    let binary = words.next()?.to_string();
    Some((
        binary,
        words.map(str::to_string).collect(),
        parse_exit(how)?,
        secs.parse().ok()?,
    ))
}

/// Splits a raw log into its processes; text before the first header, and headers that do
/// not parse, are dropped.
pub fn split(text: &str) -> Vec<Logged> {
    let mut out: Vec<Logged> = Vec::new();
    for l in text.lines() {
        if let Some((binary, args, exit, duration_s)) =
            l.strip_prefix("### ").and_then(parse_header)
        {
            out.push(Logged {
                binary,
                args,
                outcome: Outcome {
                    exit,
                    lines: Vec::new(),
                    duration_s,
                },
            });
        } else if let Some(p) = out.last_mut() {
            p.outcome.lines.push(Line {
                at: 0.0,
                text: l.to_string(),
            });
        }
    }
    out
}

/// Judges the processes of one suite's raw log again. `suite_args`: the suite's list
/// arguments (a process whose arguments are exactly those ran the whole suite; any other ran
/// the tests it names, one per process); `listed`: the binary's test list, when known.
pub fn reclassify(
    suite_id: &str,
    suite_args: &[String],
    listed: Option<&[String]>,
    text: &str,
) -> Vec<TestResult> {
    let mut tests = Vec::new();
    for p in split(text) {
        let marker = crate::suites::work_marker(&p.binary);
        if p.args == suite_args {
            let parsed = parse::parse(&p.outcome.lines, listed, marker);
            let expected = runner::expected_tests(listed, suite_args);
            tests.extend(runner::classify_whole(
                suite_id,
                expected.as_deref(),
                &p.outcome,
                &parsed,
            ));
        } else {
            for t in &p.args {
                let known = [t.clone()];
                let parsed = parse::parse(&p.outcome.lines, Some(&known), marker);
                tests.push(runner::classify_single(t, &p.outcome, &parsed));
            }
        }
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let log = "junk\n### api/test_api queue_hint (exit 0, 0.52 s)\na\nb\n\
                   ### thread_dimensions/test_thread_dimensions full* (timed out, 600.00 s)\nc\n\
                   ### x/test_x (signal 6, 1.5 s)\n";
        let p = split(log);
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].binary, "api/test_api");
        assert_eq!(p[0].args, vec!["queue_hint"]);
        assert_eq!(p[0].outcome.exit, Exit::Code(0));
        assert_eq!(p[0].outcome.lines.len(), 2);
        assert_eq!(p[1].args, vec!["full*"]);
        assert_eq!(p[1].outcome.exit, Exit::TimedOut);
        assert_eq!(p[1].outcome.duration_s, 600.0);
        assert_eq!(p[2].outcome.exit, Exit::Signal(6));
        assert!(p[2].args.is_empty());
    }
}
