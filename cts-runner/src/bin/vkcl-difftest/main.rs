//! `vkcl-difftest`: random differential testing. Generates a seeded random OpenCL C kernel
//! per seed (`cts_runner::difftest`), computes its expected output with the host
//! interpreter, runs it on each chosen OpenCL platform and compares.
//!
//! Each platform runs in child processes (this binary again, `--child`), several kernels per
//! program (`--batch`); a child that crashes or hangs costs only its batch, whose seeds are
//! then run one at a time to find the culprit. Every failure (mismatch, crash, timeout, build
//! or run error) is saved under `--out` with its seed, source, expected and actual values and
//! platform, and reruns with `--seeds SEED`.
//!
//! ```sh
//! cargo build -p vkcl -p cts-runner
//! target/debug/vkcl-difftest --seeds 0..200 --platforms vkcl,pocl
//! target/debug/vkcl-difftest --print 17          # the kernel of seed 17 and its answer
//! ```
//! docs/difftest.md has the rest.

mod child;
#[path = "../vkcl-bench/cl.rs"]
#[allow(dead_code)]
mod cl;
#[path = "../../../../tests/common/vulkan_driver.rs"]
mod vulkan_driver;

use child::Event;
use clap::Parser;
use cts_runner::difftest::{self, print};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Random differential testing of OpenCL C kernels against a host interpreter.
#[derive(Parser, Debug, Clone)]
#[command(version)]
struct Args {
    /// Seeds: `N`, `A..B` (B excluded) or a comma-separated list of those.
    #[arg(long, default_value = "0..100")]
    seeds: String,
    /// Platforms, by case-insensitive part of the name (`pocl` also matches "Portable
    /// Computing Language"); one that is not installed is skipped with a note unless
    /// `--require-all`.
    #[arg(long, default_value = "vkcl,pocl")]
    platforms: String,
    /// Fail when a platform of `--platforms` is not there.
    #[arg(long)]
    require_all: bool,
    /// libvkcl.so for the `vkcl` platform (default: the one beside this binary).
    #[arg(long)]
    vkcl_lib: Option<PathBuf>,
    /// Kernels per program.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// Seeds per child process.
    #[arg(long, default_value_t = 400)]
    per_child: usize,
    /// Child processes per platform at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Seconds a child may go without finishing a batch before it counts as hung.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Start no new child process after this many seconds (the seeds not run are reported).
    #[arg(long)]
    time_limit: Option<u64>,
    /// Where failures and the summary go (default: target/difftest/<unix time>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run vkcl with the Khronos validation layer, fatal (`VKCL_VALIDATION=fatal`).
    #[arg(long)]
    validation: bool,
    /// Only generate and interpret (checks the generator), no device.
    #[arg(long)]
    host_only: bool,
    /// Print the kernel source of this seed and its expected output, and exit.
    #[arg(long)]
    print: Option<u64>,
    /// Reduce this seed's failure on the first of `--platforms` (writes the smallest
    /// failing program so far to `--out`/reduced-<seed>.cl while it works).
    #[arg(long)]
    reduce: Option<u64>,
    /// Run this OpenCL C file (kernel `t0_k(out, in)`, as `--print` and `--reduce` write them)
    /// on each of `--platforms` with the input and sizes of the first of `--seeds`, and print
    /// the values (checking a hand-edited reproducer).
    #[arg(long)]
    run_file: Option<PathBuf>,
    /// Most candidates a reduction tries.
    #[arg(long, default_value_t = 4000)]
    budget: usize,
    /// Internal: reduce on this platform.
    #[arg(long, hide = true)]
    child_reduce: Option<String>,
    /// Internal: run these seeds on one platform and print events.
    #[arg(long, hide = true)]
    child: Option<String>,
}

fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((a, b)) = part.split_once("..") {
            let a: u64 = a.parse().map_err(|_| format!("bad seed range {part}"))?;
            let b: u64 = b.parse().map_err(|_| format!("bad seed range {part}"))?;
            out.extend(a..b);
        } else {
            out.push(part.parse().map_err(|_| format!("bad seed {part}"))?);
        }
    }
    Ok(out)
}

/// One seed's failure on one platform.
#[derive(Debug, Clone)]
struct Failure {
    seed: u64,
    platform: String,
    kind: &'static str,
    expected: Vec<u32>,
    got: Vec<u32>,
    detail: String,
}

/// A platform's tally.
#[derive(Debug, Default, Clone)]
struct Tally {
    name: Option<String>,
    missing: Option<String>,
    ok: usize,
    failures: Vec<Failure>,
    /// Seeds left when the time limit came.
    not_run: usize,
    /// Children that failed after printing every result (a crash at exit).
    exit_failures: Vec<String>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let seeds = match parse_seeds(&args.seeds) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("vkcl-difftest: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    if let Some(q) = &args.child {
        child::run(q, &seeds, args.batch);
        return std::process::ExitCode::SUCCESS;
    }
    if let (Some(q), Some(seed)) = (&args.child_reduce, args.reduce) {
        let out = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
        child::reduce(
            q,
            seed,
            args.budget,
            &out.join(format!("reduced-{seed}.cl")),
            args.run_file.as_deref(),
        );
        return std::process::ExitCode::SUCCESS;
    }
    if let Some(seed) = args.print {
        let (u, r) = difftest::case(seed);
        println!("{}", print::program(&[&u]));
        match r {
            Ok(v) => println!("// expected out[0..{}]: {v:?}", v.len()),
            Err(e) => println!("// not well defined: {e}"),
        }
        println!(
            "// global {}, local {:?}, in[] = {:?}",
            u.global, u.local, u.input
        );
        return std::process::ExitCode::SUCCESS;
    }
    match parent(&args, &seeds) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(1),
        Err(e) => {
            eprintln!("vkcl-difftest: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// The host's answers, computed when first asked; an `Err` (the interpreter refused the
/// kernel as not well defined) is a generator bug.
#[derive(Default)]
struct Answers(std::sync::Mutex<BTreeMap<u64, Result<Vec<u32>, String>>>);

impl Answers {
    fn get(&self, seed: u64) -> Result<Vec<u32>, String> {
        let lock = || self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = lock().get(&seed) {
            return r.clone();
        }
        let r = difftest::case(seed).1.map_err(|e| e.0);
        lock().insert(seed, r.clone());
        r
    }

    fn rejected(&self) -> Vec<(u64, String)> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.iter()
            .filter_map(|(s, r)| r.as_ref().err().map(|e| (*s, e.clone())))
            .collect()
    }
}

/// What the children need to find a platform.
struct Setup {
    exe: PathBuf,
    env_vkcl: Vec<(String, String)>,
    env_other: Vec<(String, String)>,
}

fn parent(args: &Args, seeds: &[u64]) -> Result<bool, String> {
    let started = Instant::now();
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let target = exe
        .parent()
        .and_then(|d| d.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let out = args.out.clone().unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        target.join("difftest").join(t.to_string())
    });
    std::fs::create_dir_all(out.join("failures")).map_err(|e| format!("{}: {e}", out.display()))?;
    let answers = Answers::default();
    if args.host_only {
        for &s in seeds {
            let _ = answers.get(s);
        }
    }
    let runnable = seeds;
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    if let Some(file) = &args.run_file {
        let setup = setup(args, &target, &out)?;
        let seed = seeds.first().copied().unwrap_or(0);
        if let Ok(v) = answers.get(seed) {
            println!("host (seed {seed}'s input; for the seed's own kernel): {v:?}");
        }
        for q in args.platforms.split(',').map(str::trim) {
            let mut cmd = Command::new(&setup.exe);
            cmd.args(["--child-reduce", q, "--reduce", &seed.to_string()])
                .arg("--run-file")
                .arg(file);
            let env = if q.eq_ignore_ascii_case("vkcl") {
                &setup.env_vkcl
            } else {
                &setup.env_other
            };
            for (k, v) in env {
                cmd.env(k, v);
            }
            cmd.status().map_err(|e| e.to_string())?;
        }
        return Ok(true);
    }
    if let Some(seed) = args.reduce {
        let setup = setup(args, &target, &out)?;
        let q = args.platforms.split(',').next().unwrap_or("vkcl").trim();
        let mut cmd = Command::new(&setup.exe);
        cmd.args(["--child-reduce", q, "--reduce", &seed.to_string()])
            .arg("--budget")
            .arg(args.budget.to_string())
            .arg("--out")
            .arg(&out);
        let env = if q.eq_ignore_ascii_case("vkcl") {
            &setup.env_vkcl
        } else {
            &setup.env_other
        };
        for (k, v) in env {
            cmd.env(k, v);
        }
        let st = cmd.status().map_err(|e| e.to_string())?;
        eprintln!(
            "vkcl-difftest: reduction ended ({st}); {}",
            out.join(format!("reduced-{seed}.cl")).display()
        );
        return Ok(st.success());
    }
    if !args.host_only {
        let setup = setup(args, &target, &out)?;
        let queries: Vec<String> = args
            .platforms
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let results: Vec<(String, Tally)> = std::thread::scope(|sc| {
            let hs: Vec<_> = queries
                .iter()
                .map(|q| {
                    let (setup, answers) = (&setup, &answers);
                    sc.spawn(move || (q.clone(), run_platform(args, setup, q, runnable, answers)))
                })
                .collect();
            hs.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        tallies.extend(results);
    }
    let secs = started.elapsed().as_secs_f64();
    let rejected = answers.rejected();
    for (s, e) in &rejected {
        eprintln!(
            "vkcl-difftest: seed {s}: the generator wrote a kernel that is not well defined: {e}"
        );
    }
    // Save and summarise.
    let driver =
        std::env::var("VKCL_VULKAN_DRIVER").unwrap_or_else(|_| "lavapipe-25.0.7 (default)".into());
    let mut all_ok = rejected.is_empty();
    let mut summary = Vec::new();
    for (q, t) in &tallies {
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &t.failures {
            *kinds.entry(f.kind).or_default() += 1;
            save_failure(&out, f, t.name.as_deref(), &driver)?;
        }
        if let Some(m) = &t.missing {
            println!("{q}: not run: {m}");
            if args.require_all {
                all_ok = false;
            }
        } else {
            println!(
                "{q} ({}): {} kernels, {} agree with the host, failures {:?}, {} not run (time limit)",
                t.name.as_deref().unwrap_or("?"),
                t.ok + t.failures.len(),
                t.ok,
                kinds,
                t.not_run
            );
            if !t.exit_failures.is_empty() {
                println!(
                    "{q}: {} child processes failed at exit: {}",
                    t.exit_failures.len(),
                    t.exit_failures[0]
                );
            }
            all_ok &= t.failures.is_empty() && t.exit_failures.is_empty();
        }
        summary.push(json!({
            "query": q,
            "platform": t.name,
            "missing": t.missing,
            "agree": t.ok,
            "kernels": t.ok + t.failures.len(),
            "not_run": t.not_run,
            "exit_failures": t.exit_failures,
            "failures": kinds,
            "failed_seeds": t.failures.iter().map(|f| json!({"seed": f.seed, "kind": f.kind})).collect::<Vec<_>>(),
        }));
    }
    println!(
        "{} seeds, {} refused by the interpreter, {:.0} s; failures in {}",
        seeds.len(),
        rejected.len(),
        secs,
        out.join("failures").display()
    );
    let doc = json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "vulkan_driver": driver,
        "seeds": seeds.len(),
        "refused_by_interpreter": rejected.iter().map(|(s, e)| json!({"seed": s, "why": e})).collect::<Vec<_>>(),
        "seconds": secs,
        "load_average": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
        "platforms": summary,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    std::fs::write(out.join("summary.json"), text + "\n").map_err(|e| e.to_string())?;
    Ok(all_ok)
}

/// The environment of the children: vkcl alone behind the loader (on the Vulkan driver of
/// `VKCL_VULKAN_DRIVER`), or the system's ICDs for the other platforms.
fn setup(args: &Args, target: &Path, out: &Path) -> Result<Setup, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let lib = args
        .vkcl_lib
        .clone()
        .unwrap_or_else(|| exe.with_file_name("libvkcl.so"));
    let vendors = out.join("icd");
    std::fs::create_dir_all(&vendors).map_err(|e| e.to_string())?;
    let lib = lib
        .canonicalize()
        .map_err(|e| format!("{}: {e}", lib.display()))?;
    std::fs::write(vendors.join("vkcl.icd"), format!("{}\n", lib.display()))
        .map_err(|e| e.to_string())?;
    let driver = vulkan_driver::from_env(target)?;
    if let Some(w) = &driver.warning {
        eprintln!("vkcl-difftest: WARNING: {w}");
    }
    let mut env_vkcl = driver.env();
    env_vkcl.push(("OCL_ICD_VENDORS".into(), vendors.display().to_string()));
    env_vkcl.push((
        "VKCL_CACHE_DIR".into(),
        out.join("cache").display().to_string(),
    ));
    env_vkcl.push(("VKCL_VULKAN_DRIVER".into(), driver.name.clone()));
    if args.validation {
        env_vkcl.push(("VKCL_VALIDATION".into(), "fatal".into()));
    }
    let env_other = vec![
        ("OCL_ICD_VENDORS".into(), "/etc/OpenCL/vendors".into()),
        (
            "POCL_CACHE_DIR".into(),
            out.join("pocl-cache").display().to_string(),
        ),
    ];
    Ok(Setup {
        exe,
        env_vkcl,
        env_other,
    })
}

/// How one child process ended.
enum End {
    /// It printed every result.
    Done,
    /// It could not find or open the platform.
    Fatal(String),
    /// It printed every result, then failed.
    ExitFailed(String),
    /// It died or hung in the batch of these seeds.
    Died(Vec<u64>, &'static str, String),
}

/// What a child's result is given to: seed, status, values, detail.
type OnResult<'a> = dyn FnMut(u64, &str, Vec<u32>, String) + 'a;

/// Runs one child over `seeds`; feeds each result to `on_result`.
fn run_child(
    args: &Args,
    setup: &Setup,
    query: &str,
    seeds: &[u64],
    batch: usize,
    name: &mut Option<String>,
    on_result: &mut OnResult<'_>,
) -> End {
    let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
    let mut cmd = Command::new(&setup.exe);
    cmd.arg("--child")
        .arg(query)
        .arg("--seeds")
        .arg(list.join(","))
        .arg("--batch")
        .arg(batch.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("RUST_BACKTRACE", "0");
    let env = if query.eq_ignore_ascii_case("vkcl") {
        &setup.env_vkcl
    } else {
        &setup.env_other
    };
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return End::Fatal(format!("cannot run {}: {e}", setup.exe.display())),
    };
    let (tx, rx) = mpsc::channel::<Option<String>>();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let err_tail = std::thread::spawn(move || {
        let mut tail = std::collections::VecDeque::new();
        if let Some(e) = stderr {
            for l in std::io::BufReader::new(e).lines().map_while(Result::ok) {
                tail.push_back(l);
                if tail.len() > 20 {
                    tail.pop_front();
                }
            }
        }
        tail.into_iter().collect::<Vec<_>>().join("\n")
    });
    std::thread::spawn(move || {
        if let Some(o) = stdout {
            for l in std::io::BufReader::new(o).lines().map_while(Result::ok) {
                if tx.send(Some(l)).is_err() {
                    return;
                }
            }
        }
        let _ = tx.send(None);
    });
    let mut current: Vec<u64> = Vec::new();
    let mut pending: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
    let mut fatal = None;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let mut hung = false;
    loop {
        match rx.recv_timeout(timeout) {
            Ok(Some(line)) => match serde_json::from_str::<Event>(&line) {
                Ok(Event::Platform { name: n }) => *name = Some(n),
                Ok(Event::Started { seeds }) => {
                    pending.extend(seeds.iter().copied());
                    current = seeds;
                }
                Ok(Event::Result {
                    seed,
                    status,
                    values,
                    detail,
                }) => {
                    pending.remove(&seed);
                    on_result(seed, &status, values, detail);
                }
                Ok(Event::Fatal { detail }) => fatal = Some(detail),
                Err(_) => {}
            },
            Ok(None) => break,
            Err(_) => {
                hung = true;
                // The child this function started, by its handle.
                let _ = child.kill();
                break;
            }
        }
    }
    let status = child.wait();
    let tail = err_tail.join().unwrap_or_default();
    if let Some(f) = fatal {
        return End::Fatal(f);
    }
    let unfinished: Vec<u64> = current
        .iter()
        .copied()
        .filter(|s| pending.contains(s))
        .collect();
    if hung {
        return End::Died(
            unfinished,
            "timeout",
            format!("no result for {} s; stderr:\n{tail}", args.timeout),
        );
    }
    let st = status.as_ref().map_or("?".to_string(), |s| s.to_string());
    if !unfinished.is_empty() {
        return End::Died(
            unfinished,
            "crash",
            format!("the process ended ({st}); stderr:\n{tail}"),
        );
    }
    if !status.is_ok_and(|s| s.success()) {
        return End::ExitFailed(format!(
            "the process ended ({st}) after its last result; stderr:\n{tail}"
        ));
    }
    End::Done
}

fn run_platform(
    args: &Args,
    setup: &Setup,
    query: &str,
    seeds: &[u64],
    answers: &Answers,
) -> Tally {
    let mut t = Tally::default();
    let mut todo: std::collections::VecDeque<Vec<u64>> = seeds
        .chunks(args.per_child.max(1))
        .map(<[u64]>::to_vec)
        .collect();
    let mut done = 0usize;
    let total = seeds.len();
    let progress = Instant::now();
    while let Some(list) = todo.pop_front() {
        if args
            .time_limit
            .is_some_and(|l| progress.elapsed().as_secs() >= l)
        {
            t.not_run = todo.iter().map(Vec::len).sum::<usize>() + list.len();
            break;
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut name = t.name.clone();
        let mut on_result = |seed: u64, status: &str, values: Vec<u32>, detail: String| {
            seen.insert(seed);
            // A seed the interpreter refuses is reported once, not as this platform's.
            let Ok(exp) = answers.get(seed) else {
                return;
            };
            let kind = match status {
                "ok" if values == exp => None,
                "ok" => Some("mismatch"),
                "build_error" => Some("build_error"),
                _ => Some("run_error"),
            };
            match kind {
                None => t.ok += 1,
                Some(kind) => {
                    eprintln!("vkcl-difftest: {query}: seed {seed}: {kind}");
                    t.failures.push(Failure {
                        seed,
                        platform: query.to_string(),
                        kind,
                        expected: exp,
                        got: values,
                        detail,
                    })
                }
            }
        };
        let batch = if list.len() == 1 { 1 } else { args.batch };
        let end = run_child(args, setup, query, &list, batch, &mut name, &mut on_result);
        t.name = name;
        match end {
            End::Done => {}
            End::ExitFailed(why) => {
                eprintln!("vkcl-difftest: {query}: {why}");
                t.exit_failures.push(why);
            }
            End::Fatal(f) => {
                t.missing = Some(f);
                return t;
            }
            End::Died(culprits, kind, detail) => {
                if culprits.len() == 1 {
                    eprintln!("vkcl-difftest: {query}: seed {}: {kind}", culprits[0]);
                    t.failures.push(Failure {
                        seed: culprits[0],
                        platform: query.to_string(),
                        kind,
                        expected: answers.get(culprits[0]).unwrap_or_default(),
                        got: Vec::new(),
                        detail,
                    });
                    seen.insert(culprits[0]);
                } else {
                    // Each seed of the batch alone, to find the one.
                    for s in &culprits {
                        todo.push_front(vec![*s]);
                        seen.insert(*s);
                    }
                }
                let rest: Vec<u64> = list.iter().copied().filter(|s| !seen.contains(s)).collect();
                if !rest.is_empty() {
                    todo.push_back(rest);
                }
            }
        }
        done = t.ok + t.failures.len();
        eprintln!(
            "vkcl-difftest: {query}: {done}/{total} kernels, {} failures, {:.0} s",
            t.failures.len(),
            progress.elapsed().as_secs_f64()
        );
    }
    let _ = done;
    t
}

fn save_failure(
    out: &Path,
    f: &Failure,
    platform_name: Option<&str>,
    driver: &str,
) -> Result<(), String> {
    let (u, _) = difftest::case(f.seed);
    let src = print::program(&[&u]);
    let base = out
        .join("failures")
        .join(format!("{}-seed{}", f.platform, f.seed));
    std::fs::write(base.with_extension("cl"), &src).map_err(|e| e.to_string())?;
    let doc = json!({
        "seed": f.seed,
        "platform": f.platform,
        "platform_name": platform_name,
        "vulkan_driver": if f.platform.eq_ignore_ascii_case("vkcl") { Some(driver) } else { None },
        "kind": f.kind,
        "expected": f.expected,
        "got": f.got,
        "detail": f.detail,
        "global": u.global,
        "local": u.local,
        "input": u.input,
        "rerun": format!("vkcl-difftest --seeds {} --platforms {}", f.seed, f.platform),
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    std::fs::write(base.with_extension("json"), text + "\n").map_err(|e| e.to_string())
}
