//! Random differential testing in CI: a fixed set of generated kernels (`vkcl-difftest`)
//! on vkcl, on the Vulkan driver that `VKCL_VULKAN_DRIVER` names (lavapipe 25.0.7 of the
//! build tree by default), with the validation layer fatal, each result compared with the
//! host interpreter's; and a smaller set on pocl where pocl is installed. docs/difftest.md.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Seeds every CI run checks on vkcl (about 40 s on lavapipe 25.0.7 on 2 loaded cores): 0..48,
/// and four that lavapipe 22.3.6 got wrong before `lower::upcastcmp` (docs/difftest.md).
const VKCL_SEEDS: &str = "0..48,201776,202721,202734,204964";
/// How many seeds [`VKCL_SEEDS`] names.
const VKCL_COUNT: u64 = 52;
/// Seeds checked on pocl when it is installed.
const POCL_SEEDS: &str = "0..16";

fn newest(dir: &Path) -> std::time::SystemTime {
    let mut t = std::time::UNIX_EPOCH;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let m = if e.path().is_dir() {
            newest(&e.path())
        } else {
            e.metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH)
        };
        t = t.max(m);
    }
    t
}

/// The libvkcl.so beside the binary, refused when older than vkcl's sources.
fn vkcl_lib() -> PathBuf {
    let lib = Path::new(env!("CARGO_BIN_EXE_vkcl-difftest")).with_file_name("libvkcl.so");
    let built = std::fs::metadata(&lib)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} not built: run `cargo build --workspace`", lib.display()));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
    assert!(
        built >= newest(&src),
        "{} is older than the sources: run `cargo build --workspace`",
        lib.display()
    );
    lib
}

/// Runs the seeds on one platform; the platform's entry of summary.json.
fn run(platform: &str, seeds: &str, extra: &[&str]) -> Value {
    let out = tempfile::tempdir().expect("temp dir");
    let st = Command::new(env!("CARGO_BIN_EXE_vkcl-difftest"))
        .args(["--seeds", seeds, "--platforms", platform, "--require-all"])
        .arg("--vkcl-lib")
        .arg(vkcl_lib())
        .arg("--out")
        .arg(out.path())
        .args(extra)
        .status()
        .expect("vkcl-difftest runs");
    let summary = std::fs::read_to_string(out.path().join("summary.json")).expect("summary.json");
    let doc: Value = serde_json::from_str(&summary).expect("summary is JSON");
    let failures = std::fs::read_dir(out.path().join("failures"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    assert!(
        st.success(),
        "vkcl-difftest on {platform} failed ({st}): {summary}\n{}",
        failures.join("\n")
    );
    doc["platforms"][0].clone()
}

#[test]
fn fixed_seeds_agree_with_the_host_on_vkcl() {
    let p = run("vkcl", VKCL_SEEDS, &["--validation"]);
    assert_eq!(p["kernels"], VKCL_COUNT, "{p}");
    assert_eq!(p["agree"], VKCL_COUNT, "{p}");
}

#[test]
fn fixed_seeds_agree_with_the_host_on_pocl_where_installed() {
    if !Path::new("/etc/OpenCL/vendors/pocl.icd").exists() {
        eprintln!("pocl is not installed (pocl-opencl-icd): skipped");
        return;
    }
    let p = run("pocl", POCL_SEEDS, &[]);
    assert_eq!(p["agree"], 16, "{p}");
}
