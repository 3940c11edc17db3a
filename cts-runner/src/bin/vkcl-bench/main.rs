//! `vkcl-bench`: runs the same OpenCL workloads on several installed platforms, chosen by name,
//! in one run, and prints each figure with the ratio vkcl / other.
//!
//! Each platform runs in its own child process (this binary again, with `--child`), so a crash
//! in one implementation costs only its column. Every workload checks its output on the host
//! before its figure is kept, and figures beyond what the device could possibly do are
//! flagged and left out of the ratios.
//!
//! ```sh
//! cargo build --release -p vkcl -p cts-runner
//! target/release/vkcl-bench --vkcl-lib target/release/libvkcl.so --platforms vkcl,pocl,rusticl
//! ```

mod builds;
mod cl;
mod compute;
mod figure;
mod images;
mod long;
mod maps;
mod queues;
mod transfers;
mod workloads;

use clap::Parser;
use figure::{Better, Sizes};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use workloads::WORKLOADS;

/// Benchmarks OpenCL platforms side by side (vkcl against the others).
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Platforms to run, by (case-insensitive) part of their name; `pocl` also matches
    /// "Portable Computing Language". The first is the one the ratios divide by the others.
    #[arg(long, default_value = "vkcl,pocl,rusticl")]
    platforms: String,
    /// Make the loader see this libvkcl.so plus the system's other ICDs (a private vendors
    /// directory); without it, OCL_ICD_VENDORS or the system directory decides.
    #[arg(long)]
    vkcl_lib: Option<PathBuf>,
    /// Also write the results as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Smaller problem sizes (a quick look, not figures to publish).
    #[arg(long)]
    small: bool,
    /// Only these workloads (comma-separated ids).
    #[arg(long)]
    workloads: Option<String>,
    /// Runs of every platform, interleaved (a b c a b c ...); each figure is the median of
    /// the runs, so that load from other processes hits every platform alike.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Internal: run one platform and print its results as JSON.
    #[arg(long, hide = true)]
    child: Option<String>,
}

/// One workload's outcome on one platform.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
struct Outcome {
    value: Option<f64>,
    unit: String,
    note: String,
    /// Why there is no figure (a failed check, an OpenCL error).
    error: Option<String>,
    /// Why the figure is not believed.
    implausible: Option<String>,
}

/// One platform's results.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
struct PlatformResults {
    query: String,
    platform: Option<String>,
    version: Option<String>,
    device: Option<String>,
    /// `CL_DRIVER_VERSION` of the device.
    #[serde(default)]
    driver: Option<String>,
    error: Option<String>,
    results: BTreeMap<String, Outcome>,
}

fn sizes(small: bool) -> Sizes {
    if small {
        Sizes {
            launches: 200,
            round_trips: 50,
            bytes: 8 << 20,
            reps: 3,
            flop_items: 4096,
            n: 128,
        }
    } else {
        Sizes {
            launches: 2000,
            round_trips: 300,
            bytes: 64 << 20,
            reps: 7,
            flop_items: 32768,
            n: 512,
        }
    }
}

fn matches(query: &str, name: &str) -> bool {
    let (q, n) = (query.to_ascii_lowercase(), name.to_ascii_lowercase());
    if unpacked_rusticl(&q).is_some() {
        return n == "rusticl";
    }
    n.contains(&q) || (q == "pocl" && n.contains("portable computing language"))
}

/// The Mesa version of a `rusticl-VERSION` query (rusticl unpacked by `scripts/rusticl.sh
/// VERSION` into `target/rusticl-VERSION`, run through its `run` wrapper), else `None`.
fn unpacked_rusticl(query: &str) -> Option<&str> {
    query
        .strip_prefix("rusticl-")
        .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The `run` wrapper of `rusticl-VERSION`: `$VKCL_BENCH_RUSTICL_DIR/rusticl-VERSION/run`, or
/// beside this binary's profile directory (`target/rusticl-VERSION/run` for
/// `target/release/vkcl-bench`).
fn rusticl_wrapper(exe: &std::path::Path, version: &str) -> Option<PathBuf> {
    let base = std::env::var_os("VKCL_BENCH_RUSTICL_DIR")
        .map(PathBuf::from)
        .or_else(|| exe.parent()?.parent().map(PathBuf::from))?;
    Some(base.join(format!("rusticl-{version}")).join("run"))
}

/// Upper and lower bounds beyond which a figure cannot be real on this device.
fn implausible(id: &str, value: f64, cpu: bool) -> Option<String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    // 2 FMA units x 16 lanes (AVX-512) x 2 FLOP x 5 GHz per core is beyond any x86 core.
    let max_gflops = if cpu { cores * 320.0 } else { 200_000.0 };
    let max_gbps = if cpu { 400.0 } else { 10_000.0 };
    let bad = match id {
        "enqueue_cost" => (value < 0.05).then(|| "under 50 ns per launch".to_string()),
        "launch_latency" => {
            (value < 1.0).then(|| "under 1 us from enqueue to completion".to_string())
        }
        "threads_queues" => (value < 0.0008).then(|| "under 50 ns per launch".to_string()),
        // Two kernels, each as long as the one alone, cannot finish much sooner than it.
        "overlap_ooo" | "overlap_queues" => {
            (value < 0.8).then(|| "two kernels in under 0.8x the time of one".to_string())
        }
        "write_bandwidth"
        | "read_bandwidth"
        | "copy_kernel_bandwidth"
        | "copy_kernel_bandwidth_long" => {
            (value > max_gbps).then(|| format!("over {max_gbps} GB/s"))
        }
        "compute_fp32" | "compute_fp32_long" | "sgemm_tiled" | "sgemm_tiled_long" => {
            (value > max_gflops).then(|| format!("over {max_gflops} GFLOP/s for this device"))
        }
        _ => None,
    };
    bad.or_else(|| (!value.is_finite() || value <= 0.0).then(|| "not a positive number".into()))
}

/// The child side: one platform, every selected workload.
fn child(query: &str, args: &Args) -> PlatformResults {
    let mut r = PlatformResults {
        query: query.to_string(),
        ..Default::default()
    };
    let api = match cl::Api::load() {
        Ok(a) => a,
        Err(e) => {
            r.error = Some(e);
            return r;
        }
    };
    let platforms = match api.platforms() {
        Ok(p) => p,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    // `rusticl-VERSION` also asks for that Mesa version (its wrapper shows only that rusticl).
    let version_ok = |p: cl::Platform| {
        unpacked_rusticl(query)
            .is_none_or(|v| api.driver_version(p).is_ok_and(|d| d.starts_with(v)))
    };
    let Some(p) = platforms
        .into_iter()
        .find(|p| api.platform_name(*p).is_ok_and(|n| matches(query, &n)) && version_ok(*p))
    else {
        r.error = Some(format!("no platform with a device matches '{query}'"));
        return r;
    };
    r.platform = api.platform_name(p).ok();
    r.version = api.platform_version(p).ok();
    r.device = api.device_name(p).ok();
    r.driver = api.driver_version(p).ok();
    let cpu = api
        .device_type(p)
        .is_ok_and(|t| t & cl::DEVICE_TYPE_CPU != 0);
    let session = match api.session(p) {
        Ok(s) => s,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    let z = sizes(args.small);
    for w in selected(args) {
        eprintln!("  {query}: {}", w.id);
        let mut o = Outcome {
            unit: w.unit.to_string(),
            ..Default::default()
        };
        match (w.run)(&session, &z) {
            Ok(f) => {
                o.implausible = implausible(w.id, f.value, cpu);
                o.value = Some(f.value);
                o.note = f.note;
            }
            Err(e) => o.error = Some(e),
        }
        r.results.insert(w.id.to_string(), o);
    }
    r
}

fn selected(args: &Args) -> Vec<&'static workloads::Workload> {
    WORKLOADS
        .iter()
        .filter(|w| {
            args.workloads
                .as_ref()
                .is_none_or(|list| list.split(',').any(|x| x.trim() == w.id))
        })
        .collect()
}

/// Writes a vendors directory with `vkcl.icd` naming `lib` plus the system's other ICDs.
fn vendors_dir(lib: &std::path::Path) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("vkcl-bench-icd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let lib = lib
        .canonicalize()
        .map_err(|e| format!("{}: {e}", lib.display()))?;
    std::fs::write(dir.join("vkcl.icd"), format!("{}\n", lib.display()))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Ok(entries) = std::fs::read_dir("/etc/OpenCL/vendors") {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".icd") && name != "vkcl.icd" {
                let _ = std::fs::copy(e.path(), dir.join(&name));
            }
        }
    }
    Ok(dir)
}

fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn cell(o: Option<&Outcome>) -> String {
    match o {
        None => "-".into(),
        Some(o) => match (&o.error, o.value, &o.implausible) {
            (Some(_), _, _) => "FAILED".into(),
            (_, Some(v), Some(_)) => format!("{}!", fmt_value(v)),
            (_, Some(v), None) => fmt_value(v),
            _ => "-".into(),
        },
    }
}

fn usable(o: Option<&Outcome>) -> Option<f64> {
    o.filter(|o| o.error.is_none() && o.implausible.is_none())
        .and_then(|o| o.value)
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Some(q) = &args.child {
        let r = child(q, &args);
        match serde_json::to_string(&r) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("vkcl-bench: {e}"),
        }
        return std::process::ExitCode::SUCCESS;
    }
    match parent(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vkcl-bench: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

fn parent(args: &Args) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let vendors = args.vkcl_lib.as_deref().map(vendors_dir).transpose()?;
    let queries: Vec<String> = args
        .platforms
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let mut runs: Vec<Vec<PlatformResults>> = vec![Vec::new(); queries.len()];
    for run in 0..args.runs.max(1) {
        for (i, q) in queries.iter().enumerate() {
            eprintln!("{q} (run {}):", run + 1);
            runs[i].push(run_child(&exe, q, args, vendors.as_deref())?);
        }
    }
    let all: Vec<PlatformResults> = runs.into_iter().map(merge_runs).collect();
    if let Some(v) = &vendors {
        let _ = std::fs::remove_dir_all(v);
    }
    let _ = std::fs::remove_dir_all(
        std::env::temp_dir().join(format!("vkcl-bench-cache-{}", std::process::id())),
    );
    print_table(&all, args);
    if let Some(path) = &args.json {
        let date = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let doc = serde_json::json!({
            "command": std::env::args().collect::<Vec<_>>().join(" "),
            "unix_time": date,
            "host_cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "small": args.small,
            "runs": args.runs.max(1),
            "platforms": all,
        });
        let s = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        std::fs::write(path, s + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs one platform in a child process and reads its JSON line.
fn run_child(
    exe: &std::path::Path,
    q: &str,
    args: &Args,
    vendors: Option<&std::path::Path>,
) -> Result<PlatformResults, String> {
    let mut cmd = match unpacked_rusticl(q) {
        Some(v) => {
            let run = rusticl_wrapper(exe, v).filter(|r| r.is_file());
            let Some(run) = run else {
                return Ok(PlatformResults {
                    query: q.to_string(),
                    error: Some(format!(
                        "no target/rusticl-{v}/run: run scripts/rusticl.sh {v} first"
                    )),
                    ..Default::default()
                });
            };
            let mut c = std::process::Command::new(run);
            c.arg(exe);
            c
        }
        None => std::process::Command::new(exe),
    };
    cmd.arg("--child").arg(q);
    if args.small {
        cmd.arg("--small");
    }
    if let Some(w) = &args.workloads {
        cmd.arg("--workloads").arg(w);
    }
    if let Some(v) = vendors {
        cmd.env("OCL_ICD_VENDORS", v);
    }
    if std::env::var_os("RUSTICL_ENABLE").is_none() {
        cmd.env("RUSTICL_ENABLE", "llvmpipe");
    }
    // vkcl's program cache starts empty in every benchmark run (and stays out of the user's).
    let cache = std::env::temp_dir().join(format!("vkcl-bench-cache-{}", std::process::id()));
    cmd.env("VKCL_CACHE_DIR", &cache);
    cmd.env("RUST_BACKTRACE", "0")
        .stderr(std::process::Stdio::inherit());
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<PlatformResults>(l).ok())
        .unwrap_or_else(|| PlatformResults {
            query: q.to_string(),
            error: Some(format!("the benchmark process died ({})", out.status)),
            ..Default::default()
        }))
}

/// One platform's runs as one result: per workload the median of the runs' figures; a
/// failure or a flag in any run is kept (a figure is only as good as its worst run's check).
fn merge_runs(runs: Vec<PlatformResults>) -> PlatformResults {
    let Some(mut merged) = runs
        .iter()
        .find(|r| r.error.is_none())
        .or(runs.first())
        .cloned()
    else {
        return PlatformResults::default();
    };
    if let Some(e) = runs.iter().find_map(|r| r.error.clone()) {
        merged.error = Some(e);
    }
    for (id, o) in merged.results.iter_mut() {
        let outcomes: Vec<&Outcome> = runs.iter().filter_map(|r| r.results.get(id)).collect();
        let mut values: Vec<f64> = outcomes.iter().filter_map(|o| o.value).collect();
        values.sort_by(f64::total_cmp);
        o.value = values.get(values.len() / 2).copied();
        o.error = outcomes.iter().find_map(|o| o.error.clone());
        o.implausible = outcomes.iter().find_map(|o| o.implausible.clone());
        if values.len() > 1 {
            o.note = format!(
                "{}; median of {} runs (range {:.4}..{:.4})",
                o.note,
                values.len(),
                values[0],
                values[values.len() - 1]
            );
        }
    }
    merged
}

fn print_table(all: &[PlatformResults], args: &Args) {
    for p in all {
        println!(
            "{}: {} | {} | {} | driver {}{}",
            p.query,
            p.platform.as_deref().unwrap_or("?"),
            p.version.as_deref().unwrap_or("?"),
            p.device.as_deref().unwrap_or("?"),
            p.driver.as_deref().unwrap_or("?"),
            p.error
                .as_ref()
                .map_or(String::new(), |e| format!(" | ERROR: {e}"))
        );
    }
    println!();
    let mut header = "| workload | unit | better |".to_string();
    let mut rule = "|---|---|---|".to_string();
    for (i, p) in all.iter().enumerate() {
        header.push_str(&format!(" {} |", p.query));
        rule.push_str("---:|");
        if i > 0 {
            header.push_str(&format!(" {} / {} |", all[0].query, p.query));
            rule.push_str("---:|");
        }
    }
    println!("{header}\n{rule}");
    let mut notes = Vec::new();
    for w in selected(args) {
        let better = match w.better {
            Better::Higher => "higher",
            Better::Lower => "lower",
        };
        let mut line = format!("| {} | {} | {} |", w.id, w.unit, better);
        let first = all.first().and_then(|p| p.results.get(w.id));
        for (i, p) in all.iter().enumerate() {
            let o = p.results.get(w.id);
            line.push_str(&format!(" {} |", cell(o)));
            if let Some(o) = o {
                if let Some(e) = &o.error {
                    notes.push(format!("{} {}: FAILED: {e}", p.query, w.id));
                }
                if let Some(why) = &o.implausible {
                    notes.push(format!("{} {}: flagged, not used ({why})", p.query, w.id));
                }
            }
            if i > 0 {
                let ratio = match (usable(first), usable(o)) {
                    (Some(a), Some(b)) => format!("{:.2}", a / b),
                    _ => "n/a".into(),
                };
                line.push_str(&format!(" {ratio} |"));
            }
        }
        println!("{line}");
    }
    // Program build: what each platform's cache saves.
    let cold_cached: Vec<String> = all
        .iter()
        .filter_map(|p| {
            let cold = usable(p.results.get("build_cold"))?;
            let cached = usable(p.results.get("build_cached"))?;
            Some(format!(
                "{} {} ms cold, {} ms cached, cold / cached {:.1}",
                p.query,
                fmt_value(cold),
                fmt_value(cached),
                cold / cached
            ))
        })
        .collect();
    if !cold_cached.is_empty() {
        println!();
        println!("Program build (medium program): {}", cold_cached.join("; "));
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("- {n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_peer_figures_are_flagged() {
        // What clpeak printed for rusticl on this 2-core machine.
        assert!(implausible("compute_fp32", 95_000.0, true).is_some());
        assert!(implausible("launch_latency", 0.0, true).is_some());
        assert!(implausible("enqueue_cost", 0.01, true).is_some());
        assert!(implausible("copy_kernel_bandwidth", 5_000.0, true).is_some());
        assert!(implausible("build_cold", f64::NAN, true).is_some());
        // Ordinary figures pass, and a GPU may go far beyond a CPU.
        assert!(implausible("compute_fp32", 20.0, true).is_none());
        assert!(implausible("launch_latency", 40.0, true).is_none());
        assert!(implausible("copy_kernel_bandwidth", 3_000.0, false).is_none());
    }

    #[test]
    fn platform_names() {
        assert!(matches("pocl", "Portable Computing Language"));
        assert!(matches("nvidia", "NVIDIA CUDA"));
        assert!(matches("VKCL", "vkcl"));
        assert!(!matches("rusticl", "Clover"));
        assert!(matches("rusticl-25.0.7", "rusticl"));
        assert!(!matches("rusticl-25.0.7", "vkcl"));
        assert_eq!(unpacked_rusticl("rusticl-22.3.6"), Some("22.3.6"));
        assert_eq!(unpacked_rusticl("rusticl"), None);
        assert_eq!(unpacked_rusticl("rusticl-x"), None);
        let exe = std::path::Path::new("/r/target/release/vkcl-bench");
        if std::env::var_os("VKCL_BENCH_RUSTICL_DIR").is_none() {
            assert_eq!(
                rusticl_wrapper(exe, "25.0.7"),
                Some(PathBuf::from("/r/target/rusticl-25.0.7/run"))
            );
        }
    }

    fn outcome(value: Option<f64>, error: Option<&str>) -> Outcome {
        Outcome {
            value,
            unit: "GB/s".into(),
            note: "n".into(),
            error: error.map(str::to_string),
            implausible: None,
        }
    }

    #[test]
    fn runs_merge_to_medians_and_keep_failures() {
        let run = |v: Option<f64>, e: Option<&str>| PlatformResults {
            query: "vkcl".into(),
            results: [("copy".to_string(), outcome(v, e))].into_iter().collect(),
            ..Default::default()
        };
        let m = merge_runs(vec![
            run(Some(3.0), None),
            run(Some(1.0), None),
            run(Some(2.0), None),
        ]);
        assert_eq!(m.results["copy"].value, Some(2.0));
        let m = merge_runs(vec![
            run(Some(3.0), None),
            run(None, Some("b[0] = 1, expected 2")),
        ]);
        assert!(m.results["copy"].error.is_some());
        assert_eq!(cell(m.results.get("copy")), "FAILED");
    }
}
