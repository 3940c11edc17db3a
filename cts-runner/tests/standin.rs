//! cts-runner end to end over a fake CTS build made of the `cts-standin` binary: per-test and
//! whole-suite runs, crashes, timeouts, not-built and excluded suites, expectations, argument
//! suites (per-test limits, not run, `SKIPPED`), passes without testing, `--changed-since`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Fake {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn fake_cts() -> Fake {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    let tc = root.join("cts/test_conformance");
    let standin = Path::new(env!("CARGO_BIN_EXE_cts-standin"));
    for (dir, kind) in [
        ("good", "good"),
        ("mixed", "mixed"),
        ("nolist", "nolist"),
        ("dims", "dims"),
        ("streams", "streams"),
        ("allocs", "allocs"),
        ("device_partition", "device_partition"),
        ("cmdbuf", "cmdbuf"),
    ] {
        std::fs::create_dir_all(tc.join(dir)).expect("mkdir");
        std::fs::copy(standin, tc.join(dir).join(format!("test_{kind}"))).expect("copy stand-in");
    }
    std::fs::write(
        root.join("shapes.csv"),
        "Thread Dimensions,dims/test_dims full*\n\
         Images (Kernel),streams/test_streams CL_FILTER_NEAREST\n\
         Allocations (single maximum),allocs/test_allocs single 5 all\n\
         Device Partitioning,device_partition/test_device_partition\n\
         Command buffers,cmdbuf/test_cmdbuf\n",
    )
    .expect("shapes list");
    std::fs::write(
        tc.join("opencl_conformance_tests_full.csv"),
        "# fake list\n\
         Good,good/test_good\n\
         Mixed,mixed/test_mixed\n\
         No list,nolist/test_nolist\n\
         Good subset,good/test_good a c\n\
         Missing,missing/test_missing\n\
         OpenCL-GL Sharing,gl/test_gl\n",
    )
    .expect("list");
    std::fs::write(root.join("libvkcl.so"), b"not really a library").expect("lib");
    Fake { _dir: dir, root }
}

fn runner(f: &Fake, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .arg("--cts-dir")
        .arg(f.root.join("cts"))
        .arg("--lib")
        .arg(f.root.join("libvkcl.so"))
        .args([
            "--device",
            "standin",
            "--suites",
            "full",
            "--jobs",
            "2",
            "--timeout",
            "3",
            "--quiet",
        ])
        .arg("--out")
        .arg("out")
        .current_dir(&f.root)
        .arg("--expectations")
        .arg(f.root.join("exp.json"))
        .args(extra)
        .env_remove("VKCL_CTS_DIR")
        .output()
        .expect("cts-runner starts")
}

fn statuses(f: &Fake) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(f.root.join("out/standin.json")).expect("results json");
    let v: Value = serde_json::from_str(&text).expect("json");
    let mut out = Vec::new();
    for s in v["suites"].as_array().expect("suites") {
        let id = s["id"].as_str().unwrap_or("").to_string();
        out.push((
            id.clone(),
            "(state)".to_string(),
            s["state"].as_str().unwrap_or("").to_string(),
        ));
        for t in s["tests"].as_array().expect("tests") {
            out.push((
                id.clone(),
                t["name"].as_str().unwrap_or("").to_string(),
                t["status"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out
}

fn edit_expectation(f: &Fake, suite: &str, test: &str, status: &str) {
    let p = f.root.join("exp.json");
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(&p).expect("read")).expect("json");
    v["suites"][suite][test] = Value::String(status.to_string());
    std::fs::write(&p, serde_json::to_string(&v).expect("ser")).expect("write");
}

#[test]
fn full_run_results_and_expectations() {
    let f = fake_cts();
    // No expectations yet: refuse to compare.
    let o = runner(&f, &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let o = runner(&f, &["--update-expectations"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = statuses(&f);
    let want: Vec<(&str, &str, &str)> = vec![
        ("good", "(state)", "ran"),
        ("good", "a", "pass"),
        ("good", "b", "pass"),
        ("good", "c", "skip"),
        ("mixed", "(state)", "ran"),
        ("mixed", "alpha", "pass"),
        ("mixed", "beta", "fail"),
        ("mixed", "gamma", "skip"),
        ("mixed", "delta", "crash"),
        ("mixed", "epsilon", "timeout"),
        ("mixed", "zeta", "pass"),
        ("mixed", "omega", "passed_without_testing"),
        ("nolist", "(state)", "ran"),
        ("nolist", "a", "pass"),
        ("nolist", "b", "crash"),
        ("good_a_c", "(state)", "ran"),
        ("good_a_c", "a", "pass"),
        ("good_a_c", "c", "skip"),
        ("missing", "(state)", "not_built"),
    ];
    let got_ref: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    assert_eq!(got_ref, want);

    let summary = std::fs::read_to_string(f.root.join("out/summary.md")).expect("summary");
    assert!(
        summary.contains("| [mixed](mixed.md) | ran | 7 | 2 | 0 | 1 | 1 | 1 | 1 | 1 | 0 |"),
        "{summary}"
    );
    assert!(
        summary.contains("OpenCL-GL Sharing"),
        "exclusion named: {summary}"
    );
    let mixed = std::fs::read_to_string(f.root.join("out/mixed.md")).expect("mixed.md");
    assert!(mixed.contains("| delta | **crash** |"), "{mixed}");
    assert!(
        mixed.contains("| beta | **fail** |") && mixed.contains("ERROR: result mismatch at 3 |"),
        "a failure's note quotes its error line: {mixed}"
    );
    let log = std::fs::read_to_string(f.root.join("out/logs/mixed.log")).expect("log");
    assert!(
        log.contains("ERROR: result mismatch at 3"),
        "stderr kept in the log"
    );
    assert!(
        !f.root.join("out/lib").exists(),
        "the private library stays out of --out"
    );

    // Same results again: exit 0.
    let o = runner(&f, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // An expectation of pass that now fails is a regression, named.
    edit_expectation(&f, "mixed", "beta", "pass");
    let o = runner(&f, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("REGRESSION: mixed/beta: expected pass, got fail"),
        "{err}"
    );

    // An expected failure that passes is an unexpected pass, named.
    edit_expectation(&f, "mixed", "beta", "fail");
    edit_expectation(&f, "good", "a", "fail");
    let o = runner(&f, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("UNEXPECTED PASS: good/a: expected fail, got pass"),
        "{err}"
    );
}

#[test]
fn selection_and_bad_arguments() {
    let f = fake_cts();
    let o = Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .arg("--cts-dir")
        .arg(f.root.join("cts"))
        .arg("--lib")
        .arg(f.root.join("libvkcl.so"))
        .args([
            "--suites",
            "mixed:alpha+omega",
            "--quiet",
            "--device",
            "standin",
        ])
        .arg("--out")
        .arg(f.root.join("out"))
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = statuses(&f);
    assert_eq!(got.len(), 3);
    assert_eq!(got[1].1, "alpha");
    assert_eq!(got[2].1, "omega");

    let o = Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .arg("--cts-dir")
        .arg(f.root.join("cts"))
        .arg("--lib")
        .arg(f.root.join("libvkcl.so"))
        .args(["--suites", "nosuch"])
        .arg("--out")
        .arg(f.root.join("out2"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown suite 'nosuch'"));
}

fn shapes(f: &Fake, suites: &str, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cts-runner"))
        .arg("--cts-dir")
        .arg(f.root.join("cts"))
        .arg("--lib")
        .arg(f.root.join("libvkcl.so"))
        .arg("--list")
        .arg(f.root.join("shapes.csv"))
        .args(["--device", "standin", "--suites", suites, "--jobs", "2"])
        .args(["--timeout", "3", "--quiet"])
        .args(if extra.contains(&"--vkcl-commit") {
            &[][..]
        } else {
            &["--vkcl-commit", "abc1234"][..]
        })
        .arg("--out")
        .arg(f.root.join("out"))
        .args(extra)
        .env_remove("VKCL_CTS_DIR")
        .env_remove("CL_WIMPY_MODE")
        .output()
        .expect("cts-runner starts")
}

#[test]
fn argument_suites_and_passes_without_testing() {
    let f = fake_cts();
    let o = shapes(&f, "full", &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = statuses(&f);
    let got: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("dims_full", "(state)", "ran"),
            // 4.5 s is past `--timeout 3` but inside 3 s for each of the 3 tests `full*`
            // names: the limit is per test.
            ("dims_full", "full_a", "pass"),
            ("dims_full", "full_b", "timeout"),
            ("dims_full", "full_c", "not_run"),
            ("streams_CL_FILTER_NEAREST", "(state)", "ran"),
            ("streams_CL_FILTER_NEAREST", "s1", "skip"),
            ("streams_CL_FILTER_NEAREST", "s2", "skip"),
            ("streams_CL_FILTER_NEAREST", "s3", "skip"),
            ("allocs_single_5_all", "(state)", "ran"),
            ("allocs_single_5_all", "x1", "pass"),
            ("allocs_single_5_all", "x2", "crash"),
            ("allocs_single_5_all", "x3", "not_run"),
            ("device_partition", "(state)", "ran"),
            ("device_partition", "partition_all", "partial_pass"),
            (
                "device_partition",
                "partition_by_affinity_domain_numa",
                "passed_without_testing"
            ),
            ("device_partition", "partition_equally", "pass"),
            ("cmdbuf", "(state)", "ran"),
            ("cmdbuf", "cb", "pass"),
        ]
    );
    let summary = std::fs::read_to_string(f.root.join("out/summary.md")).expect("summary");
    assert!(
        summary.contains("- vkcl commit: abc1234 (--vkcl-commit)\n"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "| [device_partition](device_partition.md) | ran | 3 | 1 | 1 | 1 | 0 | 0 | 0 | 0 | 0 |"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("| **total** | | **13** | **4** | **1** | **1** | **0** | **3** | **1** | **1** | **2** |"),
        "{summary}"
    );
    let dims = std::fs::read_to_string(f.root.join("out/dims_full.md")).expect("dims.md");
    assert!(
        dims.contains("| full_c | **not_run** | - | the suite process ran past the time limit before reaching it |"),
        "{dims}"
    );

    // Judged again from its own raw logs, the run is the same.
    let o = Command::new(env!("CARGO_BIN_EXE_cts-reclassify"))
        .arg("--results")
        .arg(f.root.join("out/standin.json"))
        .arg("--logs")
        .arg(f.root.join("out/logs"))
        .output()
        .expect("cts-reclassify runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("## 0 changed statuses"), "{out}");
    assert!(
        out.contains("| [device_partition](device_partition.md) | ran | 3 | 1 | 1 | 1 |"),
        "{out}"
    );

    // --wimpy: the CTS says passed for all three, having skipped them.
    let o = shapes(&f, "dims_full", &["--wimpy"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got = statuses(&f);
    assert_eq!(got.len(), 4);
    assert!(
        got[1..]
            .iter()
            .all(|(_, _, s)| s == "passed_without_testing"),
        "{got:?}"
    );
    let md = std::fs::read_to_string(f.root.join("out/dims_full.md")).expect("dims.md");
    assert!(md.contains("Wimpy mode enabled, skipping test"), "{md}");
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn changed_since_runs_the_affected_suites() {
    let f = fake_cts();
    // A vkcl-like tree: a change to docs runs nothing; one to the compiler runs every suite
    // but computeinfo and device_timer; one to an unknown file runs everything.
    let tree = f.root.join("vkcl");
    std::fs::create_dir_all(tree.join("src/compiler")).expect("mkdir");
    std::fs::write(tree.join("README.md"), "x").expect("w");
    std::fs::write(tree.join("src/compiler/mod.rs"), "x").expect("w");
    git(&tree, &["init", "-q"]);
    git(&tree, &["add", "-A"]);
    git(&tree, &["commit", "-qm", "one"]);
    let run = |f: &Fake| {
        Command::new(env!("CARGO_BIN_EXE_cts-runner"))
            .arg("--cts-dir")
            .arg(f.root.join("cts"))
            .arg("--lib")
            .arg(f.root.join("libvkcl.so"))
            .args(["--device", "standin", "--quiet", "--changed-since", "HEAD"])
            .args(["--suites", "good,nolist"])
            .arg("--vkcl-src")
            .arg(&tree)
            .arg("--out")
            .arg(f.root.join("out"))
            .env_remove("VKCL_CTS_DIR")
            .output()
            .expect("runs")
    };
    std::fs::write(tree.join("README.md"), "y").expect("w");
    let o = run(&f);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("changed since HEAD: 1 files; 0 of 2 suites affected"),
        "{err}"
    );
    let summary = std::fs::read_to_string(f.root.join("out/summary.md")).expect("summary");
    assert!(
        summary.contains("- changed since: HEAD (1 files changed; 0 of 2 suites run)"),
        "{summary}"
    );
    assert!(
        summary.contains("- vkcl commit: ") && summary.contains("-dirty (git describe of "),
        "the summary names the tree's commit, dirty: {summary}"
    );

    std::fs::write(tree.join("src/compiler/new.rs"), "z").expect("w");
    let o = run(&f);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("2 files; 2 of 2 suites affected"), "{err}");
    assert!(
        err.contains("  good: src/compiler/new.rs"),
        "untracked files count: {err}"
    );
    assert_eq!(statuses(&f).len(), 2 + 3 + 2, "both suites ran");
}

/// The status of `test` of `suite` in the run's results JSON.
fn status_of(f: &Fake, suite: &str, test: &str) -> String {
    statuses(f)
        .into_iter()
        .find(|(s, t, _)| s == suite && t == test)
        .map(|(_, _, st)| st)
        .unwrap_or_else(|| format!("{suite}/{test} absent"))
}

#[test]
fn a_binary_that_requires_command_buffer_098_runs_with_it() {
    let f = fake_cts();
    let o = shapes(&f, "cmdbuf", &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Without the variable the stand-in says "not supported" (a skip).
    assert_eq!(status_of(&f, "cmdbuf", "cb"), "pass");
    let table = std::fs::read_to_string(f.root.join("out/cmdbuf.md")).expect("suite table");
    assert!(
        table.contains("VKCL_COMMAND_BUFFER_REVISION=0.9.8 cmdbuf/test_cmdbuf"),
        "{table}"
    );
}

#[test]
fn finished_suites_are_recorded_and_resume_keeps_them() {
    let f = fake_cts();
    // A run of one suite leaves its record, as a run cut short after it would.
    let o = shapes(&f, "device_partition", &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let record = f.root.join("out/suites/device_partition.json");
    let text = std::fs::read_to_string(&record).expect("record written as the suite ended");
    // Mark the record so that a rerun would show: a kept suite is not run again.
    let marked = text.replacen("\"partial_pass\"", "\"fail\"", 1);
    assert_ne!(marked, text);
    std::fs::write(&record, marked).expect("write record");

    let o = shapes(&f, "full", &["--resume"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume keeps 1 finished suites"));
    assert_eq!(status_of(&f, "device_partition", "partition_all"), "fail");
    assert_eq!(status_of(&f, "allocs_single_5_all", "x1"), "pass");
    let summary = std::fs::read_to_string(f.root.join("out/summary.md")).expect("summary");
    assert!(
        summary.contains("[device_partition](device_partition.md)"),
        "{summary}"
    );

    // Another vkcl commit: the records are not kept, everything runs again.
    let o = shapes(
        &f,
        "device_partition",
        &["--resume", "--vkcl-commit", "def5678"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume keeps 0 finished suites"));
    assert_eq!(
        status_of(&f, "device_partition", "partition_all"),
        "partial_pass"
    );
}
