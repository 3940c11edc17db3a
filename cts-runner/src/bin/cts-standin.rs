//! A stand-in for a CTS test binary, for cts-runner's own tests (no CTS, no OpenCL needed).
//!
//! It prints what the CTS harness prints. Its behaviour depends on its file name, so that the
//! tests can copy it into a fake build tree under several names:
//! - `test_good`: tests `a` (passes), `b` (passes), `c` (not supported);
//! - `test_mixed`: `alpha` passes, `beta` fails, `gamma` is not supported, `delta` crashes
//!   (abort), `epsilon` hangs, `zeta` passes, `omega` passes after a partition-style skip line;
//! - `test_nolist`: cannot `--list`; run whole, it passes `a`, then crashes in `b`.
//!
//! Shapes of suites run as one process with arguments, and of passes that tested nothing:
//! - `test_dims` (`thread_dimensions full*`): `full_a` passes after 4.5 s, `full_b` hangs,
//!   `full_c` is never reached, `quick_a` is not named by `full*`; with `CL_WIMPY_MODE` set,
//!   each prints "Wimpy mode enabled, skipping test" and passes at once;
//! - `test_streams` (`image_streams CL_FILTER_NEAREST` without images): skips every test at
//!   start-up, `SKIPPED 3 of 3 tests.`, exit 0;
//! - `test_allocs` (`allocations single 5 all`: options, not test names): `x1` passes, `x2`
//!   crashes, `x3` is never reached;
//! - `test_device_partition`: `partition_all` runs EQUALLY then skips the affinity domains
//!   (a partial pass), `partition_by_affinity_domain_numa` skips it all (a pass without
//!   testing), `partition_equally` passes.
//!
//! - `test_cmdbuf`: `cb` is supported only under `VKCL_COMMAND_BUFFER_REVISION=0.9.8`, as the
//!   command-buffer tests of CTS commits before `cl_khr_command_buffer` 1.0 (their message is
//!   in this binary, so the runner gives every stand-in suite that variable).
//!
//! Every test first checks that `OCL_ICD_VENDORS` names a directory holding a `vkcl.icd` that
//! names an existing library by absolute path, as the runner promises, and fails otherwise.

use std::time::Duration;

fn tests_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "test_good" => &["a", "b", "c"],
        "test_mixed" => &[
            "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "omega",
        ],
        "test_dims" => &["full_a", "full_b", "full_c", "quick_a"],
        "test_streams" => &["s1", "s2", "s3"],
        "test_allocs" => &["x1", "x2", "x3"],
        "test_cmdbuf" => &["cb"],
        "test_device_partition" => &[
            "partition_all",
            "partition_by_affinity_domain_numa",
            "partition_equally",
        ],
        _ => &["a", "b"],
    }
}

/// The binary's own options (not test names), as `allocations` and `image_streams` take.
const OPTIONS: &[&str] = &["single", "5", "all", "CL_FILTER_NEAREST"];

/// Whether the harness argument `arg` names `test` (`full*`: a prefix).
fn names(arg: &str, test: &str) -> bool {
    match arg.strip_suffix('*') {
        Some(prefix) => test.starts_with(prefix),
        None => arg == test,
    }
}

const PARTITION_SKIP: &str = "Device partition type \"CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN\" \"CL_DEVICE_AFFINITY_DOMAIN_NUMA\" is not supported on device 0x1. Skipping test...";

/// Runs one test; `Some(true)` pass, `Some(false)` fail, `None` not supported.
fn run_test(name: &str) -> Option<bool> {
    let icd_ok = std::env::var_os("OCL_ICD_VENDORS")
        .map(std::path::PathBuf::from)
        .and_then(|d| std::fs::read_to_string(d.join("vkcl.icd")).ok())
        .is_some_and(|lib| {
            let lib = std::path::Path::new(lib.trim());
            lib.is_absolute() && lib.is_file()
        });
    if !icd_ok {
        println!("OCL_ICD_VENDORS does not name a directory with vkcl.icd");
        return Some(false);
    }
    match name {
        "beta" => {
            eprintln!("ERROR: result mismatch at 3");
            Some(false)
        }
        "c" | "gamma" => None,
        "cb" if std::env::var("VKCL_COMMAND_BUFFER_REVISION").as_deref() != Ok("0.9.8") => {
            println!("cl_khr_command_buffer version 0.9.8 is required to run the test, skipping.");
            None
        }
        "full_a" | "full_b" | "full_c" if std::env::var_os("CL_WIMPY_MODE").is_some() => {
            println!("Wimpy mode enabled, skipping test");
            Some(true)
        }
        "full_a" => {
            std::thread::sleep(Duration::from_millis(4500));
            Some(true)
        }
        "full_b" => {
            std::thread::sleep(Duration::from_secs(120));
            Some(true)
        }
        "partition_all" => {
            println!("Maximal number of sub-devices on device 0x1 is 2.");
            println!("Testing on device 0x1 partition type \"CL_DEVICE_PARTITION_EQUALLY\" (1,0)");
            println!("Testing with 2 queues on 2 devices, 64 kernel executions.");
            println!("{PARTITION_SKIP}");
            println!("Testing on all device 0x1 finished");
            Some(true)
        }
        "partition_by_affinity_domain_numa" => {
            println!("Maximal number of sub-devices on device 0x1 is 2.");
            println!("{PARTITION_SKIP}");
            println!("Testing on all device 0x1 finished");
            Some(true)
        }
        "delta" | "nolist-b" | "x2" => {
            println!("about to crash");
            std::process::abort();
        }
        "epsilon" => {
            std::thread::sleep(Duration::from_secs(120));
            Some(true)
        }
        "omega" => {
            println!(
                "Device partition type \"X\" is not supported on device 0x1. Skipping test..."
            );
            Some(true)
        }
        _ => Some(true),
    }
}

fn main() {
    let argv0 = std::env::args().next().unwrap_or_default();
    let kind = std::path::Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = tests_of(&kind);
    if args.first().map(String::as_str) == Some("--list") {
        if kind == "test_nolist" {
            eprintln!("unknown option --list");
            std::process::exit(1);
        }
        for t in all {
            println!("\t{t}");
        }
        return;
    }
    if std::env::var_os("CL_WIMPY_MODE").is_some() {
        println!("*** Wimpy mode enabled ***");
    }
    println!(" Initializing random seed to 0.");
    println!("Compute Device Name = standin device, Compute Device Vendor = none, Compute Device Version = OpenCL 3.0");
    if kind == "test_streams" {
        println!("Test skipped while initialization");
        println!("SKIPPED {} of {} tests.", all.len(), all.len());
        return;
    }
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !OPTIONS.contains(a))
        .collect();
    let selected: Vec<&str> = if args.is_empty() {
        all.to_vec()
    } else {
        let mut sel = Vec::new();
        for a in &args {
            let hits: Vec<&str> = all.iter().copied().filter(|t| names(a, t)).collect();
            if hits.is_empty() {
                println!("Invalid test name: {a}");
                std::process::exit(1);
            }
            sel.extend(hits);
        }
        sel
    };
    let mut failed = 0;
    let mut count = 0;
    for t in &selected {
        println!("{t}...");
        let id = if kind == "test_nolist" {
            format!("nolist-{t}")
        } else {
            t.to_string()
        };
        match run_test(&id) {
            Some(true) => {
                println!("{t} passed");
                count += 1;
            }
            Some(false) => {
                println!("{t} FAILED");
                failed += 1;
                count += 1;
            }
            None => println!("{t} test not supported"),
        }
    }
    if failed == 0 {
        println!("PASSED {count} of {count} tests.");
    } else {
        println!("FAILED {failed} of {count} tests.");
        std::process::exit(1);
    }
}
