//! Scheduling: each suite's tests as separate processes over `jobs` worker threads.
//!
//! A suite whose binary lists its tests (`--list`) runs one process per test, so a crash or a
//! hang costs one test and is pinned on it. A suite with list arguments (`allocations single 5
//! all`, `thread_dimensions full*`) or one that cannot list runs as one process whose output is
//! split by test. For such a process the runner still asks the binary for its list: the tests
//! the arguments name (as the harness matches them, `*` a wildcard; all of them when no
//! argument is a test name) are the ones it expects, the process gets `--timeout` for each,
//! and those it never reached are listed as not run.

use crate::exec::{self, Exit, Outcome};
use crate::model::{Status, SuiteResult, SuiteState, TestResult};
use crate::parse::{self, Parsed};
use crate::suites::SuiteSpec;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// How to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The CTS build directory (holds `test_conformance/`).
    pub cts_dir: PathBuf,
    /// A directory holding only `vkcl.icd`, for `OCL_ICD_VENDORS`.
    pub icd_dir: PathBuf,
    /// Worker threads (processes at once).
    pub jobs: usize,
    /// Limit for one test's process; a whole-suite process gets this times its test count.
    pub timeout: Duration,
    /// Extra environment for the test processes.
    pub env: Vec<(String, String)>,
    /// Print a line per finished process on stderr.
    pub progress: bool,
}

/// A suite's binary in a build.
pub fn binary_path(cts_dir: &Path, spec: &SuiteSpec) -> PathBuf {
    cts_dir.join("test_conformance").join(&spec.binary)
}

/// Asks a binary for its tests (`--list`: one tab-indented name a line).
pub fn list_tests(binary: &Path, cfg: &Config) -> Option<Vec<String>> {
    let cwd = binary.parent()?;
    let o = exec::run(
        binary,
        &["--list".to_string()],
        cwd,
        &child_env(cfg),
        ENV_REMOVE,
        Duration::from_secs(60),
    )
    .ok()?;
    if o.exit != Exit::Code(0) {
        return None;
    }
    let names: Vec<String> = o
        .lines
        .iter()
        .filter(|l| l.text.starts_with('\t'))
        .map(|l| l.text.trim().to_string())
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect();
    (!names.is_empty()).then_some(names)
}

/// Whether the binary's only listed test is named after the binary (`test_conversions` lists
/// `conversions`): such a binary's command line takes other names (conversions parses type
/// pairs and says "Unable to parse function name conversions. Skipping"), so the suite runs as
/// one process without a test name, which runs that test whole.
fn lists_only_itself(binary: &Path, listed: Option<&[String]>) -> bool {
    let stem = binary.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(listed, Some([only]) if stem.strip_prefix("test_") == Some(only.as_str()))
}

/// Whether a harness argument names `test`: equal, or with `*` standing for any text (the
/// harness's wildcard, `full*`).
pub fn arg_names(arg: &str, test: &str) -> bool {
    crate::changes::glob(&arg.replace('*', "**"), test)
}

/// The tests a whole-suite process is expected to run: those of `listed` that an argument
/// names, or all of `listed` when no argument names one (`allocations single 5 all`: the
/// arguments are the binary's own options). `None` when the binary gave no list.
pub fn expected_tests(listed: Option<&[String]>, args: &[String]) -> Option<Vec<String>> {
    let listed = listed?;
    let named: Vec<String> = listed
        .iter()
        .filter(|t| args.iter().any(|a| arg_names(a, t)))
        .cloned()
        .collect();
    Some(if named.is_empty() {
        listed.to_vec()
    } else {
        named
    })
}

/// The time limit of a whole-suite process: `per_test` for each expected test, times its
/// slow-test factor ([`crate::suites::slow_factor`]); `per_test` once when the list is unknown.
pub fn whole_limit(per_test: Duration, suite_id: &str, expected: Option<&[String]>) -> Duration {
    let units: u32 = expected.map_or(1, |tests| {
        tests
            .iter()
            .map(|t| crate::suites::slow_factor(suite_id, t))
            .sum::<u32>()
            .max(1)
    });
    per_test.saturating_mul(units)
}

/// Variables the test processes must not inherit (they would widen the loader's choice).
const ENV_REMOVE: &[&str] = &["OCL_ICD_FILENAMES"];

fn child_env(cfg: &Config) -> Vec<(String, String)> {
    let mut env = vec![
        (
            "OCL_ICD_VENDORS".to_string(),
            cfg.icd_dir.display().to_string(),
        ),
        // A panic backtrace over vkcl's debug info takes long enough to look like a hang.
        ("RUST_BACKTRACE".to_string(), "0".to_string()),
    ];
    env.extend(cfg.env.iter().cloned());
    env
}

/// One process to run.
struct Item {
    suite: usize,
    /// `Some(test)`: that test alone; `None`: the whole suite with its list arguments.
    test: Option<String>,
    limit: Duration,
}

/// A finished item.
struct Done {
    suite: usize,
    test: Option<String>,
    args: Vec<String>,
    outcome: Result<Outcome, String>,
}

/// What is known of a suite before it runs.
struct Plan {
    binary: PathBuf,
    built: bool,
    listed: Option<Vec<String>>,
    /// The suite's own environment ([`crate::suites::binary_env`]), on top of the run's.
    env: Vec<(String, String)>,
}

/// Runs the suites and returns their results plus each suite's raw log text, in `suites`'
/// order. `finished` gets each suite's result and log the moment its last process ends (a
/// suite that is not built: before any process starts), from a worker thread, so that a run
/// cut short keeps what it finished.
pub fn run_suites(
    cfg: &Config,
    suites: &[SuiteSpec],
    finished: &(dyn Fn(&SuiteResult, &str) + Sync),
) -> Vec<(SuiteResult, String)> {
    let mut plans = Vec::new();
    let mut queue = VecDeque::new();
    for (i, spec) in suites.iter().enumerate() {
        let binary = binary_path(&cfg.cts_dir, spec);
        let built = binary.is_file();
        let listed = if built {
            list_tests(&binary, cfg)
        } else {
            None
        };
        if built {
            let per_test: Option<Vec<String>> = if !spec.tests.is_empty() {
                Some(spec.tests.clone())
            } else if lists_only_itself(&binary, listed.as_deref()) {
                None
            } else {
                listed.clone()
            };
            match per_test {
                Some(tests) if spec.args.is_empty() => {
                    for t in tests {
                        let factor = crate::suites::slow_factor(&spec.id, &t);
                        queue.push_back(Item {
                            suite: i,
                            limit: cfg.timeout.saturating_mul(factor),
                            test: Some(t),
                        });
                    }
                }
                _ => {
                    let expected = expected_tests(listed.as_deref(), &spec.args);
                    queue.push_back(Item {
                        suite: i,
                        test: None,
                        limit: whole_limit(cfg.timeout, &spec.id, expected.as_deref()),
                    });
                }
            }
        }
        let env = if built {
            std::fs::read(&binary)
                .map(|bytes| crate::suites::binary_env(&bytes))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        plans.push(Plan {
            binary,
            built,
            listed,
            env,
        });
    }
    let total = queue.len();
    // Processes left per suite; a suite with none is finished already.
    let mut left = vec![0usize; suites.len()];
    for item in &queue {
        left[item.suite] += 1;
    }
    for (i, spec) in suites.iter().enumerate() {
        if left[i] == 0 {
            let (result, log) = assemble(spec, &plans[i], std::iter::empty());
            finished(&result, &log);
        }
    }
    let left = Mutex::new(left);
    let queue = Mutex::new(queue);
    let done: Mutex<Vec<Done>> = Mutex::new(Vec::new());
    let env = child_env(cfg);
    std::thread::scope(|s| {
        for _ in 0..cfg.jobs.max(1) {
            s.spawn(|| loop {
                let item = match queue.lock() {
                    Ok(mut q) => q.pop_front(),
                    Err(_) => None,
                };
                let Some(item) = item else { break };
                let spec = &suites[item.suite];
                let plan = &plans[item.suite];
                let args: Vec<String> = match &item.test {
                    Some(t) => vec![t.clone()],
                    None => spec.args.clone(),
                };
                let cwd = plan.binary.parent().unwrap_or(Path::new("."));
                let mut env = env.clone();
                env.extend(plan.env.iter().cloned());
                let outcome = exec::run(&plan.binary, &args, cwd, &env, ENV_REMOVE, item.limit)
                    .map_err(|e| format!("cannot start {}: {e}", plan.binary.display()));
                if let Ok(mut d) = done.lock() {
                    if cfg.progress {
                        let what = item.test.as_deref().unwrap_or("(whole suite)");
                        let how = match &outcome {
                            Ok(o) => format!("{:?} {:.1}s", o.exit, o.duration_s),
                            Err(e) => e.clone(),
                        };
                        eprintln!("[{}/{}] {} {} {}", d.len() + 1, total, spec.id, what, how);
                    }
                    d.push(Done {
                        suite: item.suite,
                        test: item.test,
                        args,
                        outcome,
                    });
                    let last = left.lock().is_ok_and(|mut l| {
                        l[item.suite] -= 1;
                        l[item.suite] == 0
                    });
                    if last {
                        let mine = d.iter().filter(|x| x.suite == item.suite);
                        let (result, log) = assemble(spec, plan, mine);
                        finished(&result, &log);
                    }
                }
            });
        }
    });
    let done = done.into_inner().unwrap_or_default();
    suites
        .iter()
        .enumerate()
        .map(|(i, spec)| assemble(spec, &plans[i], done.iter().filter(|d| d.suite == i)))
        .collect()
}

fn exit_text(e: &Exit) -> String {
    match e {
        Exit::Code(c) => format!("exit {c}"),
        Exit::Signal(s) => format!("signal {s}"),
        Exit::TimedOut => "timed out".to_string(),
    }
}

/// The verdict for one test run alone.
pub fn classify_single(test: &str, o: &Outcome, p: &Parsed) -> TestResult {
    let verdict = p.tests.iter().find(|t| t.name == test).map(|t| t.status);
    let (status, note) = match (&o.exit, verdict) {
        (Exit::TimedOut, v) => (
            Status::Timeout,
            Some(match v {
                Some(v) => format!("said {v}, then the process ran past the limit"),
                None => "ran past the time limit".to_string(),
            }),
        ),
        (Exit::Signal(sig), v) => (
            Status::Crash,
            Some(match v {
                Some(v) => format!("said {v}, then the process died by signal {sig}"),
                None => format!("died by signal {sig}"),
            }),
        ),
        (Exit::Code(c), _) if p.closing.is_none() => (
            Status::Crash,
            Some(format!(
                "ended ({}) without its closing line",
                exit_text(&Exit::Code(*c))
            )),
        ),
        (_, Some(v)) if v == Status::Fail => (v, first_error(&o.lines)),
        (_, Some(v)) => (
            v,
            p.tests
                .iter()
                .find(|t| t.name == test)
                .and_then(|t| t.note.clone()),
        ),
        (Exit::Code(c), None) => {
            let closing = p.closing.as_deref().unwrap_or("");
            if closing.starts_with("SKIPPED") {
                (Status::Skip, Some(closing.to_string()))
            } else if *c == 0 {
                (Status::Pass, Some(format!("no verdict line; {closing}")))
            } else {
                (
                    Status::Fail,
                    Some(format!("no verdict line; exit {c}; {closing}")),
                )
            }
        }
    };
    TestResult {
        name: test.to_string(),
        status,
        duration_s: Some(o.duration_s),
        note,
    }
}

/// The most telling line of a failed test's output: the first line of a build log (vkcl says
/// there what it does not support), else the first line mentioning an error; at most 160
/// characters.
pub fn first_error(lines: &[crate::parse::Line]) -> Option<String> {
    let text = |i: usize| lines.get(i).map(|l| l.text.trim()).unwrap_or("");
    let build_log = lines
        .iter()
        .position(|l| l.text.starts_with("Build log for device"))
        .and_then(|i| {
            (i + 1..lines.len())
                .map(text)
                .find(|t| !t.is_empty() && !t.starts_with("---"))
        });
    let found = build_log.or_else(|| {
        lines
            .iter()
            .map(|l| l.text.trim())
            .filter(|t| !t.ends_with("..."))
            .find(|t| t.to_ascii_lowercase().contains("error") || t.contains("FAIL"))
    })?;
    let mut s: String = found.chars().take(160).collect();
    if s.len() < found.len() {
        s.push_str("...");
    }
    Some(s)
}

/// The verdicts for a whole-suite process. `expected`: the tests it should have run
/// ([`expected_tests`]); those without a line in its output are not run, or skipped when the
/// binary closed with `SKIPPED n of m tests.`.
pub fn classify_whole(
    id: &str,
    expected: Option<&[String]>,
    o: &Outcome,
    p: &Parsed,
) -> Vec<TestResult> {
    let mut tests = p.tests.clone();
    let closing = p.closing.as_deref().unwrap_or("");
    let all_skipped = closing.starts_with("SKIPPED ");
    let abnormal = match &o.exit {
        Exit::TimedOut => Some((Status::Timeout, "ran past the time limit".to_string())),
        Exit::Signal(s) => Some((Status::Crash, format!("died by signal {s}"))),
        Exit::Code(c) if p.closing.is_none() => Some((
            Status::Crash,
            format!("ended (exit {c}) without its closing line"),
        )),
        Exit::Code(_) => None,
    };
    if let Some((status, note)) = &abnormal {
        if let Some((name, start)) = &p.unfinished {
            tests.push(TestResult {
                name: name.clone(),
                status: *status,
                duration_s: Some(o.duration_s - start),
                note: Some(note.clone()),
            });
        }
    }
    for n in expected.unwrap_or(&[]) {
        if tests.iter().any(|t| &t.name == n) {
            continue;
        }
        let (status, note) = match &abnormal {
            Some((_, note)) => (
                Status::NotRun,
                format!("the suite process {note} before reaching it"),
            ),
            None if all_skipped => (Status::Skip, closing.to_string()),
            None => (
                Status::NotRun,
                format!("the suite process ended ({closing}) without a line for it"),
            ),
        };
        tests.push(TestResult {
            name: n.clone(),
            status,
            duration_s: None,
            note: Some(note),
        });
    }
    // One test that ran many sub-tests (conversions): their count is its note.
    if let ([only], Some(count)) = (tests.as_mut_slice(), &p.subtests) {
        only.note.get_or_insert_with(|| count.clone());
    }
    if tests.is_empty() {
        let (status, note) = match (&abnormal, &o.exit) {
            (Some((s, n)), _) => (*s, Some(n.clone())),
            (None, _) if all_skipped => (Status::Skip, Some(closing.to_string())),
            (None, Exit::Code(0)) => (Status::Pass, Some(format!("no test lines; {closing}"))),
            (None, e) => (Status::Fail, Some(exit_text(e))),
        };
        tests.push(TestResult {
            name: id.to_string(),
            status,
            duration_s: Some(o.duration_s),
            note,
        });
    }
    tests
}

fn assemble<'a>(
    spec: &SuiteSpec,
    plan: &Plan,
    done: impl Iterator<Item = &'a Done>,
) -> (SuiteResult, String) {
    let command = plan
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v} "))
        .collect::<String>()
        + &spec.command();
    let mut result = SuiteResult {
        id: spec.id.clone(),
        title: spec.title.clone(),
        command,
        state: if plan.built {
            SuiteState::Ran
        } else {
            SuiteState::NotBuilt
        },
        note: (!plan.built).then(|| format!("not built: {} is absent", plan.binary.display())),
        duration_s: 0.0,
        tests: Vec::new(),
        log: None,
    };
    let mut log = String::new();
    let mut errors = Vec::new();
    for d in done {
        let o = match &d.outcome {
            Ok(o) => o,
            Err(e) => {
                errors.push(e.clone());
                continue;
            }
        };
        result.duration_s += o.duration_s;
        log.push_str(&format!(
            "### {} {} ({}, {:.2} s)\n",
            spec.binary,
            d.args.join(" "),
            exit_text(&o.exit),
            o.duration_s
        ));
        for l in &o.lines {
            log.push_str(&l.text);
            log.push('\n');
        }
        let known = plan.listed.as_deref();
        let parsed = parse::parse(&o.lines, known, spec.work_marker);
        match &d.test {
            Some(t) => result.tests.push(classify_single(t, o, &parsed)),
            None => {
                let expected = if lists_only_itself(&plan.binary, known) {
                    known.map(<[String]>::to_vec)
                } else {
                    expected_tests(known, &spec.args)
                };
                result
                    .tests
                    .extend(classify_whole(&spec.id, expected.as_deref(), o, &parsed))
            }
        }
    }
    if !errors.is_empty() {
        result.state = SuiteState::Error;
        result.note = Some(errors.join("; "));
    }
    // The binary's own order.
    let order: Vec<String> = if spec.tests.is_empty() {
        plan.listed.clone().unwrap_or_default()
    } else {
        spec.tests.clone()
    };
    result.tests.sort_by_key(|t| {
        order
            .iter()
            .position(|n| n == &t.name)
            .unwrap_or(usize::MAX)
    });
    (result, log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::untimed;

    #[test]
    fn a_binary_listing_only_itself_runs_whole() {
        let b = Path::new("/cts/test_conformance/conversions/test_conversions");
        assert!(lists_only_itself(b, Some(&["conversions".to_string()])));
        assert!(!lists_only_itself(b, Some(&["char_uchar".to_string()])));
        assert!(!lists_only_itself(
            b,
            Some(&["conversions".into(), "more".into()])
        ));
        assert!(!lists_only_itself(b, None));
    }

    #[test]
    fn a_whole_conversions_process_gets_five_limits() {
        let per = Duration::from_secs(300);
        let only = ["conversions".to_string()];
        assert_eq!(whole_limit(per, "conversions", Some(&only)), per * 5);
        assert_eq!(whole_limit(per, "commonfns", Some(&only)), per);
        assert_eq!(whole_limit(per, "conversions", None), per);
    }

    #[test]
    fn first_error_prefers_the_build_log() {
        let out = "t...\nERROR: clBuildProgram failed! (CL_BUILD_PROGRAM_FAILURE)\n\
                   Build log for device \"llvmpipe\" is: ------------\n\
                   kernel `k`: printf is not supported yet\n----------\nt FAILED\n";
        assert_eq!(
            first_error(&untimed(out)).as_deref(),
            Some("kernel `k`: printf is not supported yet")
        );
        let out = "t...\nchatter\nERROR: result 3 != 4\nt FAILED\n";
        assert_eq!(
            first_error(&untimed(out)).as_deref(),
            Some("ERROR: result 3 != 4")
        );
        assert_eq!(first_error(&untimed("t...\nt passed\n")), None);
        // A test's start line is not its error, whatever its name.
        let out = "link_error_returns_program...\nERROR: clLinkProgram failed\n";
        assert_eq!(
            first_error(&untimed(out)).as_deref(),
            Some("ERROR: clLinkProgram failed")
        );
    }
}
