//! A stand-in for a CTS test binary, for cts-runner's own tests (no CTS, no OpenCL needed).
//!
//! It prints what the CTS harness prints. Its behaviour depends on its file name, so that the
//! tests can copy it into a fake build tree under several names:
//! - `test_good`: tests `a` (passes), `b` (passes), `c` (not supported);
//! - `test_mixed`: `alpha` passes, `beta` fails, `gamma` is not supported, `delta` crashes
//!   (abort), `epsilon` hangs, `zeta` passes, `omega` passes after a partition-style skip line;
//! - `test_nolist`: cannot `--list`; run whole, it passes `a`, then crashes in `b`.
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
        _ => &["a", "b"],
    }
}

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
        "delta" | "nolist-b" => {
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
    println!(" Initializing random seed to 0.");
    println!("Compute Device Name = standin device, Compute Device Vendor = none, Compute Device Version = OpenCL 3.0");
    let selected: Vec<&str> = if args.is_empty() {
        all.to_vec()
    } else {
        args.iter().map(String::as_str).collect()
    };
    let mut failed = 0;
    let mut count = 0;
    for t in &selected {
        if !all.contains(t) {
            println!("Invalid test name: {t}");
            std::process::exit(1);
        }
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
