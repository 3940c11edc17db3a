//! Which Vulkan driver vkcl runs on in the tests, `examples/run.sh` and `cts-runner`:
//! `VKCL_VULKAN_DRIVER` (read by these tools only, never by libvkcl.so itself; docs/devices.md).
//!
//! | value | driver |
//! |---|---|
//! | unset or empty | `lavapipe-25.0.7` when `scripts/lavapipe-25.sh` has unpacked it into the build tree, else the loader's default (with a loud warning); `system` when `VK_DRIVER_FILES` or `VK_ICD_FILENAMES` is already set |
//! | `lavapipe-25.0.7` | Mesa 25.0.7's lavapipe from `<target>/lavapipe-25.0.7/` (an error when absent) |
//! | `lavapipe-22.3.6` | the system's lavapipe, `/usr/share/vulkan/icd.d/lvp_icd.<arch>.json` (Mesa 22.3.6 on Debian bookworm) |
//! | `system` | whatever the Vulkan loader finds (all installed ICDs, or `VK_DRIVER_FILES`) |
//! | a path ending in `.json` | that Vulkan ICD manifest |
//!
//! The choice becomes `VK_DRIVER_FILES` (the Vulkan loader's list of ICD manifests) and, for
//! the build tree's lavapipe, a library directory for `LD_LIBRARY_PATH` (its libdrm). This file
//! is shared: `tests/common/mod.rs` has it as a module, `cts-runner/src/main.rs` includes it by
//! path. It uses only `std`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The variable naming the driver.
pub const VARIABLE: &str = "VKCL_VULKAN_DRIVER";

/// The directory, under the build tree's `target/`, that `scripts/lavapipe-25.sh` fills.
pub const LAVAPIPE_25_DIR: &str = "lavapipe-25.0.7";

/// A resolved choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Driver {
    /// `lavapipe-25.0.7`, `lavapipe-22.3.6`, `system` or the manifest's path.
    pub name: String,
    /// The manifest for `VK_DRIVER_FILES`; `None`: leave the loader's own search alone.
    pub manifest: Option<PathBuf>,
    /// A directory to put first in `LD_LIBRARY_PATH` (the driver's own libraries).
    pub library_dir: Option<PathBuf>,
    /// Text the device's `CL_DRIVER_VERSION` must contain (vkcl quotes Vulkan's driverInfo,
    /// "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)"), where the choice names a version.
    pub driver_info: Option<&'static str>,
    /// A warning to print loudly (the default driver was not found).
    pub warning: Option<String>,
}

/// The system lavapipe manifest of this architecture (`lvp_icd.x86_64.json`).
pub fn system_lavapipe_manifest() -> PathBuf {
    Path::new("/usr/share/vulkan/icd.d").join(format!("lvp_icd.{}.json", std::env::consts::ARCH))
}

/// Resolves `VKCL_VULKAN_DRIVER` (as `value`; `None` when unset) against the build tree's
/// `target` directory. `driver_env_set`: whether `VK_DRIVER_FILES` or `VK_ICD_FILENAMES` is
/// set. An error names what is missing and how to get it.
pub fn resolve(value: Option<&str>, target: &Path, driver_env_set: bool) -> Result<Driver, String> {
    let lp25 = target.join(LAVAPIPE_25_DIR);
    let lp25_manifest = lp25.join("lvp_icd.json");
    let lavapipe_25 = || Driver {
        name: "lavapipe-25.0.7".into(),
        manifest: Some(lp25_manifest.clone()),
        library_dir: Some(lp25.join("lib")),
        driver_info: Some("Mesa 25.0.7"),
        warning: None,
    };
    let system = |warning| Driver {
        name: "system".into(),
        manifest: None,
        library_dir: None,
        driver_info: None,
        warning,
    };
    match value.unwrap_or("") {
        "" if driver_env_set => Ok(system(None)),
        "" if lp25_manifest.is_file() => Ok(lavapipe_25()),
        "" => Ok(system(Some(format!(
            "{VARIABLE} is unset and lavapipe 25.0.7 (the default device) is not installed in \
             {}: running on whatever Vulkan driver the loader finds. Install it with \
             scripts/lavapipe-25.sh, or set {VARIABLE}=system (or lavapipe-22.3.6) to mean it",
            lp25.display()
        )))),
        "lavapipe-25.0.7" if lp25_manifest.is_file() => Ok(lavapipe_25()),
        "lavapipe-25.0.7" => Err(format!(
            "{VARIABLE}=lavapipe-25.0.7 but {} is missing: run scripts/lavapipe-25.sh",
            lp25_manifest.display()
        )),
        "lavapipe-22.3.6" => {
            let m = system_lavapipe_manifest();
            if !m.is_file() {
                return Err(format!(
                    "{VARIABLE}=lavapipe-22.3.6 but {} is missing: install mesa-vulkan-drivers \
                     (.ci/deps.sh)",
                    m.display()
                ));
            }
            Ok(Driver {
                name: "lavapipe-22.3.6".into(),
                manifest: Some(m),
                library_dir: None,
                driver_info: Some("Mesa 22.3.6"),
                warning: None,
            })
        }
        "system" => Ok(system(None)),
        path if path.ends_with(".json") => {
            let m = PathBuf::from(path);
            if !m.is_file() {
                return Err(format!("{VARIABLE}={path}: no such ICD manifest"));
            }
            Ok(Driver {
                name: path.into(),
                manifest: Some(m),
                library_dir: None,
                driver_info: None,
                warning: None,
            })
        }
        other => Err(format!(
            "{VARIABLE}={other} is not one of lavapipe-25.0.7, lavapipe-22.3.6, system or a \
             path to a Vulkan ICD manifest (.json)"
        )),
    }
}

/// [`resolve`] with this process's environment.
pub fn from_env(target: &Path) -> Result<Driver, String> {
    let value = std::env::var(VARIABLE).ok();
    let set = std::env::var_os("VK_DRIVER_FILES").is_some()
        || std::env::var_os("VK_ICD_FILENAMES").is_some();
    resolve(value.as_deref(), target, set)
}

impl Driver {
    /// The environment a process needs to see this driver (`VK_DRIVER_FILES`, and
    /// `LD_LIBRARY_PATH` with the driver's directory first), as KEY=VALUE pairs; empty for
    /// `system`.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(m) = &self.manifest {
            env.push(("VK_DRIVER_FILES".to_string(), m.display().to_string()));
        }
        if let Some(dir) = &self.library_dir {
            let mut v = dir.display().to_string();
            if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|o| !o.is_empty()) {
                v = format!("{v}:{}", old.to_string_lossy());
            }
            env.push(("LD_LIBRARY_PATH".to_string(), v));
        }
        env
    }
}
