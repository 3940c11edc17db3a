//! Build script: links libvkcl.so with `-Bsymbolic`, and gives the crate the identity of its
//! compiler's sources.
//!
//! An application linked with `-lOpenCL` has the loader's `clGetExtensionFunctionAddress*`
//! first in the global symbol scope. Without `-Bsymbolic`, vkcl's own references to functions
//! of the same names (the dispatch table, and identical functions the optimiser merges into
//! the exported ones in release builds) can bind to the loader's, which then dispatches back to
//! itself forever. `-Bsymbolic` binds every reference inside the library to its own definition.
//!
//! `VKCL_COMPILER_SOURCE_HASH` (hex SHA-256 over every file under `src/compiler/`, each with
//! its relative path and length, and `Cargo.lock`, which pins rspirv and the other crates the
//! lowering uses): part of the program cache's key for lowered kernels
//! (`src/compiler/lowered_cache.rs`), so that a vkcl whose lowering differs in any way never
//! uses another's entries.
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut files = Vec::new();
    files_under(&root.join("src/compiler"), &mut files);
    files.push(root.join("Cargo.lock"));
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(f).unwrap_or_default();
        for part in [rel.as_bytes(), &bytes] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=VKCL_COMPILER_SOURCE_HASH={hex}");
    // A directory is scanned recursively for changes.
    println!("cargo:rerun-if-changed=src/compiler");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
}
