//! `cts-runner`: runs OpenCL-CTS suites against a vkcl library and compares with expectations.
//!
//! Exit status: 0 when every compared test matches its expectation, 1 on a regression from
//! pass or an unexpected pass (each named on stderr), 2 when the run could not be made.

use clap::Parser;
use cts_runner::expect::{self, Expectations};
use cts_runner::model::{RunResults, SuiteRecord, SuiteResult, SuiteState};
use cts_runner::{changes, cts_build, parse, report, runner, suites};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

#[path = "../../tests/common/vulkan_driver.rs"]
mod vulkan_driver;

/// Runs Khronos OpenCL-CTS suites against vkcl, writes results, compares with expectations.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// The CTS build directory (the one holding test_conformance/).
    #[arg(long, env = "VKCL_CTS_DIR")]
    cts_dir: PathBuf,
    /// The libvkcl.so to test (a private copy, in a temporary directory, is what runs).
    #[arg(long)]
    lib: PathBuf,
    /// Device kind label: names the results file and the expectations (lavapipe, nvidia).
    #[arg(long, default_value = "lavapipe")]
    device: String,
    /// `quick`, `full` (the CTS's conformance list less suites/exclusions.txt), or suite ids
    /// separated by commas, a subset as `id:test1+test2`. Default: `quick`, or `full` with
    /// `--changed-since`.
    #[arg(long)]
    suites: Option<String>,
    /// Quick mode: run only the suites (of `--suites`) that the files changed since this
    /// commit in the vkcl tree can affect (the table in cts-runner/suites/changes.txt; a file
    /// it does not name runs every suite).
    #[arg(long, value_name = "COMMIT")]
    changed_since: Option<String>,
    /// The vkcl source tree (a git work tree), for `--changed-since` and the vkcl commit in
    /// the summary. Default: the git tree holding `--lib`, else the current directory.
    #[arg(long)]
    vkcl_src: Option<PathBuf>,
    /// The vkcl commit the library was built from, for the summary (default: `git describe
    /// --always --dirty` of the vkcl tree; give it when `--lib` is a copy from elsewhere).
    #[arg(long)]
    vkcl_commit: Option<String>,
    /// Test processes at once.
    #[arg(long, default_value_t = default_jobs())]
    jobs: usize,
    /// Time limit for one test, seconds (a suite run as one process gets this per test).
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Output directory: <device>.json, summary.md, <suite>.md, logs/.
    #[arg(long, default_value = "cts-results")]
    out: PathBuf,
    /// The expectations file to compare with (e.g. cts-runner/expectations/lavapipe.json).
    #[arg(long)]
    expectations: Option<PathBuf>,
    /// Write this run's statuses into the expectations file instead of failing on changes.
    #[arg(long, requires = "expectations")]
    update_expectations: bool,
    /// The conformance list (default: opencl_conformance_tests_full.csv of the CTS).
    #[arg(long)]
    list: Option<PathBuf>,
    /// Set CL_WIMPY_MODE for suites that have a reduced mode.
    #[arg(long)]
    wimpy: bool,
    /// Extra environment for the tests, KEY=VALUE (repeatable).
    #[arg(long = "env", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// No per-process progress lines.
    #[arg(long)]
    quiet: bool,
    /// Keep the suites that an earlier run finished in `--out` under the same conditions
    /// (device label, vkcl and CTS commits, `--wimpy`; each finished suite is recorded in
    /// `<out>/suites/<id>.json` as it ends) and run only the others; the summary and the
    /// expectations cover both. Records from other conditions are ignored and overwritten.
    #[arg(long)]
    resume: bool,
}

fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .ok_or_else(|| format!("'{s}' is not KEY=VALUE"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("cts-runner: {e}");
            ExitCode::from(2)
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Copies the library into `work` (so that a rebuild cannot change it under a running test)
/// and writes an ICD directory naming only it; returns that directory's absolute path.
fn private_icd(lib: &Path, work: &Path) -> Result<PathBuf, String> {
    let lib_dir = work.join("lib");
    let icd_dir = work.join("icd");
    for d in [&lib_dir, &icd_dir] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let copy = lib_dir.join("libvkcl.so");
    std::fs::copy(lib, &copy).map_err(|e| format!("cannot copy {}: {e}", lib.display()))?;
    let copy = copy
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", copy.display()))?;
    write(&icd_dir.join("vkcl.icd"), &format!("{}\n", copy.display()))?;
    icd_dir
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", icd_dir.display()))
}

/// Runs everything; `Ok(false)` when the comparison failed.
fn run(a: &Args) -> Result<bool, String> {
    if !a.cts_dir.join("test_conformance").is_dir() {
        return Err(format!(
            "{} has no test_conformance/: give the CTS build directory",
            a.cts_dir.display()
        ));
    }
    let list_path = match &a.list {
        Some(p) => p.clone(),
        None => suites::find_list(&a.cts_dir)
            .ok_or("cannot find opencl_conformance_tests_full.csv; give --list")?,
    };
    let list_text = std::fs::read_to_string(&list_path)
        .map_err(|e| format!("cannot read {}: {e}", list_path.display()))?;
    let selection = a.suites.clone().unwrap_or_else(|| {
        if a.changed_since.is_some() {
            "full"
        } else {
            "quick"
        }
        .to_string()
    });
    let (mut selected, excluded) =
        suites::select(&selection, &list_text).map_err(|e| e.to_string())?;
    let (tree, whose) = match a.vkcl_src.clone() {
        Some(t) => (t, "--vkcl-src"),
        None => match changes::source_tree_of(&a.lib) {
            Some(t) => (t, "the tree holding --lib"),
            None => (
                PathBuf::from("."),
                "the current directory: --lib is outside any git tree",
            ),
        },
    };
    let vkcl_commit = match &a.vkcl_commit {
        Some(c) => Some(format!("{c} (--vkcl-commit)")),
        None => match changes::describe(&tree) {
            Ok(d) => Some(format!("{d} (git describe of {}, {whose})", tree.display())),
            Err(e) => {
                eprintln!("cts-runner: vkcl commit unknown ({e}); give --vkcl-commit");
                None
            }
        },
    };
    let changed_since = match &a.changed_since {
        None => None,
        Some(commit) => Some(choose_changed(commit, &tree, &mut selected)?),
    };
    for d in ["logs", "suites"] {
        std::fs::create_dir_all(a.out.join(d))
            .map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    }
    // The private library lives outside the output directory (which may be committed).
    let work = std::env::temp_dir().join(format!("cts-runner-{}", std::process::id()));
    let icd_dir = private_icd(&a.lib, &work)?;
    let cache_dir = work.join("program-cache");
    let facts = Facts {
        vkcl_commit,
        changed_since,
        cts_commit: cts_build::cts_commit(&a.cts_dir),
    };
    let outcome = run_with(a, &selected, &excluded, icd_dir, &cache_dir, facts);
    // Best effort: a leftover temp directory is harmless.
    let _ = std::fs::remove_dir_all(&work);
    outcome
}

/// What the summary states about the run besides its results.
struct Facts {
    vkcl_commit: Option<String>,
    changed_since: Option<String>,
    cts_commit: Option<String>,
}

impl Facts {
    /// A record of `suite` under this run's conditions.
    fn record(&self, a: &Args, suite: &SuiteResult) -> SuiteRecord {
        SuiteRecord {
            device: a.device.clone(),
            vkcl_commit: self.vkcl_commit.clone(),
            cts_commit: self.cts_commit.clone(),
            wimpy: a.wimpy,
            suite: suite.clone(),
        }
    }
}

/// The records in `<out>/suites/` made under the conditions of `now` (`--resume`).
fn kept_records(out: &Path, now: &SuiteRecord) -> Vec<SuiteRecord> {
    let Ok(dir) = std::fs::read_dir(out.join("suites")) else {
        return Vec::new();
    };
    let mut kept: Vec<SuiteRecord> = dir
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|t| serde_json::from_str::<SuiteRecord>(&t).ok())
        .filter(|r| r.same_conditions(now) && r.suite.state == SuiteState::Ran)
        .collect();
    kept.sort_by(|x, y| x.suite.id.cmp(&y.suite.id));
    kept
}

/// Writes a finished suite's log, table and record (`<out>/logs/<id>.log`, `<out>/<id>.md`,
/// `<out>/suites/<id>.json`); returns the result with its log path set.
fn write_suite(
    out: &Path,
    suite: &SuiteResult,
    log: &str,
    record: impl Fn(&SuiteResult) -> SuiteRecord,
) -> Result<SuiteResult, String> {
    let mut suite = suite.clone();
    if suite.state == SuiteState::NotBuilt {
        return Ok(suite);
    }
    let rel = format!("logs/{}.log", suite.id);
    write(&out.join(&rel), log)?;
    suite.log = Some(rel);
    write(
        &out.join(format!("{}.md", suite.id)),
        &report::suite_table(&suite),
    )?;
    let json = serde_json::to_string_pretty(&record(&suite)).map_err(|e| e.to_string())?;
    write(
        &out.join("suites").join(format!("{}.json", suite.id)),
        &(json + "\n"),
    )?;
    Ok(suite)
}

/// Keeps, of `selected`, the suites that the files changed in `tree` since `commit` can
/// affect; prints which and why on stderr; returns the summary's line.
fn choose_changed(
    commit: &str,
    tree: &Path,
    selected: &mut Vec<suites::SuiteSpec>,
) -> Result<String, String> {
    let files = changes::changed_files(tree, commit)?;
    let table = changes::parse_table(changes::CHANGES)?;
    let ids: Vec<String> = selected.iter().map(|s| s.id.clone()).collect();
    let affected = changes::affected(&table, &files, &ids);
    eprintln!(
        "changed since {commit}: {} files; {} of {} suites affected",
        files.len(),
        affected.len(),
        ids.len()
    );
    for (id, why) in &affected {
        let more = if why.len() > 3 {
            format!(" and {} more", why.len() - 3)
        } else {
            String::new()
        };
        eprintln!("  {id}: {}{more}", why[..why.len().min(3)].join(", "));
    }
    selected.retain(|s| affected.iter().any(|(id, _)| id == &s.id));
    Ok(format!(
        "{commit} ({} files changed; {} of {} suites run)",
        files.len(),
        affected.len(),
        ids.len()
    ))
}

/// Runs the selected suites with the loader pointed at `icd_dir`, then reports and compares.
/// The tests share one program cache, `cache_dir`, empty at the start (so build times are
/// cold-cache times), unless `--env VKCL_CACHE_DIR=...` or `--env VKCL_CACHE=...` says
/// otherwise.
fn run_with(
    a: &Args,
    selected: &[suites::SuiteSpec],
    excluded: &[suites::Excluded],
    icd_dir: PathBuf,
    cache_dir: &Path,
    facts: Facts,
) -> Result<bool, String> {
    // The Vulkan driver of VKCL_VULKAN_DRIVER (lavapipe 25.0.7 of the build tree by default),
    // resolved like the tests do; `--env` comes after, so it can override.
    let target = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.to_path_buf()))
        .unwrap_or_default();
    let driver = vulkan_driver::from_env(&target)?;
    if let Some(w) = &driver.warning {
        eprintln!("cts-runner: WARNING: {w}");
    }
    eprintln!("cts-runner: Vulkan driver {}", driver.name);
    let mut env = driver.env();
    env.extend(a.env.iter().cloned());
    if !env
        .iter()
        .any(|(k, _)| k == "VKCL_CACHE_DIR" || k == "VKCL_CACHE")
    {
        env.push((
            "VKCL_CACHE_DIR".to_string(),
            cache_dir.display().to_string(),
        ));
    }
    if a.wimpy {
        env.push(("CL_WIMPY_MODE".to_string(), "1".to_string()));
    }
    let cfg = runner::Config {
        cts_dir: a.cts_dir.clone(),
        icd_dir,
        jobs: a.jobs.max(1),
        timeout: Duration::from_secs(a.timeout.max(1)),
        env,
        progress: !a.quiet,
    };
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let record = |s: &SuiteResult| facts.record(a, s);
    let kept = if a.resume {
        let nothing = SuiteResult {
            id: String::new(),
            title: String::new(),
            command: String::new(),
            state: SuiteState::NotBuilt,
            note: None,
            duration_s: 0.0,
            tests: Vec::new(),
            log: None,
        };
        let probe = facts.record(a, &nothing);
        kept_records(&a.out, &probe)
    } else {
        Vec::new()
    };
    if a.resume {
        let ids: Vec<&str> = kept.iter().map(|r| r.suite.id.as_str()).collect();
        eprintln!(
            "cts-runner: --resume keeps {} finished suites from {}: {}",
            ids.len(),
            a.out.join("suites").display(),
            ids.join(", ")
        );
    }
    let to_run: Vec<suites::SuiteSpec> = selected
        .iter()
        .filter(|s| !kept.iter().any(|r| r.suite.id == s.id))
        .cloned()
        .collect();
    let write_errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let finished = |suite: &SuiteResult, log: &str| {
        if let Err(e) = write_suite(&a.out, suite, log, record) {
            if let Ok(mut w) = write_errors.lock() {
                w.push(e);
            }
        }
    };
    let mut ran = runner::run_suites(&cfg, &to_run, &finished);
    if let Some(e) = write_errors.into_inner().unwrap_or_default().first() {
        return Err(e.clone());
    }
    // Kept suites take their place in the list's order, with their logs as recorded.
    for r in kept {
        ran.push((r.suite, String::new()));
    }
    ran.sort_by_key(|(s, _)| selected.iter().position(|x| x.id == s.id));
    let mut results = RunResults {
        device: a.device.clone(),
        device_name: None,
        cts_commit: facts.cts_commit.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        started_unix,
        lib: a.lib.display().to_string(),
        vkcl_commit: facts.vkcl_commit.clone(),
        changed_since: facts.changed_since.clone(),
        suites: Vec::new(),
    };
    for (suite, log) in ran {
        // A kept suite's files are in place already (its log is read back for the device name).
        let suite = if log.is_empty() && suite.log.is_some() {
            suite
        } else {
            write_suite(&a.out, &suite, &log, record)?
        };
        if results.device_name.is_none() {
            let text = match &suite.log {
                Some(rel) if log.is_empty() => {
                    std::fs::read_to_string(a.out.join(rel)).unwrap_or_default()
                }
                _ => log,
            };
            results.device_name = parse::parse(&parse::untimed(&text), None, None).device_name;
        }
        results.suites.push(suite);
    }
    let json = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
    write(&a.out.join(format!("{}.json", a.device)), &(json + "\n"))?;
    let summary = report::summary_table(&results, excluded);
    write(&a.out.join("summary.md"), &summary)?;
    println!("{summary}");
    println!("results in {}", a.out.display());

    let Some(exp_path) = &a.expectations else {
        return Ok(true);
    };
    let mut exp: Expectations = match std::fs::read_to_string(exp_path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| format!("{} is not an expectations file: {e}", exp_path.display()))?,
        Err(_) if a.update_expectations => Expectations {
            device: a.device.clone(),
            ..Expectations::default()
        },
        Err(e) => return Err(format!("cannot read {}: {e}", exp_path.display())),
    };
    let cmp = expect::compare(&exp, &results.suites);
    for c in &cmp.other_changes {
        eprintln!("changed (not fatal): {c}");
    }
    for c in &cmp.reclassified {
        eprintln!("reclassified (format-1 expectations could not tell; not fatal): {c}");
    }
    if !cmp.new_tests.is_empty() {
        eprintln!(
            "{} tests not in the expectations (not fatal)",
            cmp.new_tests.len()
        );
    }
    for c in &cmp.regressions {
        eprintln!("REGRESSION: {c}");
    }
    for c in &cmp.unexpected_passes {
        eprintln!("UNEXPECTED PASS: {c}");
    }
    if a.update_expectations {
        expect::update(&mut exp, &results.suites, results.cts_commit.as_deref());
        if let Some(c) = &results.vkcl_commit {
            exp.vkcl_commit = Some(c.clone());
        }
        let text = serde_json::to_string_pretty(&exp).map_err(|e| e.to_string())?;
        write(exp_path, &(text + "\n"))?;
        eprintln!(
            "expectations written to {} (the changes above are accepted)",
            exp_path.display()
        );
        return Ok(true);
    }
    if cmp.failed() {
        eprintln!(
            "{} regressions, {} unexpected passes (accept with --update-expectations)",
            cmp.regressions.len(),
            cmp.unexpected_passes.len()
        );
    } else {
        eprintln!("all compared tests match the expectations");
    }
    Ok(!cmp.failed())
}
