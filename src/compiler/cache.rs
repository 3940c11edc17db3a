//! The on-disk program cache: front-end results (structurized Kernel SPIR-V, compiled objects)
//! keyed by everything that decides them, so that building the same program again runs
//! neither clang nor opt nor llvm-spirv, and whole built programs (every kernel's lowered
//! module and reflection, `lowered_cache.rs`), so that it does not run vkcl's own passes
//! either.
//!
//! Location: `$VKCL_CACHE_DIR`, else the user's cache directory (`~/.cache/vkcl`, from the
//! `dirs` crate), entries under `programs/`; `VKCL_CACHE=0` disables it. The directory is kept
//! under `VKCL_CACHE_MAX_MB` (default 256) by removing the least recently used entries after
//! each store.
//!
//! An entry is a checked cache file ([`crate::util::cache_file`]: the build log and the
//! result, written atomically); an entry that does not check out is deleted and rebuilt,
//! never used.

use crate::util::cache_file::{self, CacheConfig, Entry};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Lookups that found a valid entry.
pub static HITS: AtomicU64 = AtomicU64::new(0);
/// Lookups that found nothing (or an invalid entry).
pub static MISSES: AtomicU64 = AtomicU64::new(0);
/// Entries written.
pub static STORES: AtomicU64 = AtomicU64::new(0);

/// A cache key: SHA-256 over `parts`, each prefixed with its length (so that no two different
/// part lists collide by concatenation).
pub fn key(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

fn hex(k: &[u8; 32]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

fn entry_path(cfg: &CacheConfig, k: &[u8; 32]) -> PathBuf {
    cfg.dir.join("programs").join(format!("{}.bin", hex(k)))
}

/// Looks `k` up. A corrupt entry is removed and counts as a miss.
pub fn load(cfg: &CacheConfig, k: &[u8; 32]) -> Option<Entry> {
    let path = entry_path(cfg, k);
    match cache_file::read(&path) {
        Some(e) => {
            HITS.fetch_add(1, Ordering::Relaxed);
            // Least-recently-used order for the size bound: a hit refreshes the entry.
            if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                let _ = f.set_modified(std::time::SystemTime::now());
            }
            tracing::debug!(path = %path.display(), "program cache hit");
            Some(e)
        }
        None => {
            MISSES.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

/// Stores `log` and `data` under `k` ([`cache_file::store_file`]), then trims the cache to
/// its size bound. Failures are logged and otherwise ignored: the cache is an optimisation.
pub fn store(cfg: &CacheConfig, k: &[u8; 32], log: &str, data: &[u8]) {
    let path = entry_path(cfg, k);
    match cache_file::store_file(&path, log, data) {
        Ok(()) => {
            STORES.fetch_add(1, Ordering::Relaxed);
            if let Some(dir) = path.parent() {
                trim(dir, cfg.max_bytes);
            }
        }
        Err(e) => tracing::warn!(path = %path.display(), "cannot write program cache entry: {e}"),
    }
}

/// Removes the entry of `k` (one whose data the caller cannot use).
pub fn remove(cfg: &CacheConfig, k: &[u8; 32]) {
    let _ = std::fs::remove_file(entry_path(cfg, k));
}

/// Removes the least recently used entries of `dir` until their total is at most `max`.
fn trim(dir: &Path, max: u64) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = rd
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".bin"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= max {
        return;
    }
    entries.sort();
    for (_, len, p) in entries {
        if total <= max {
            break;
        }
        if std::fs::remove_file(&p).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dir: &Path) -> CacheConfig {
        CacheConfig {
            dir: dir.to_path_buf(),
            max_bytes: 1 << 20,
        }
    }

    #[test]
    fn round_trip_and_corruption() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path());
        let k = key(&[b"a", b"bc"]);
        assert_ne!(k, key(&[b"ab", b"c"]));
        assert_eq!(load(&c, &k), None);
        store(&c, &k, "warning: x", &[1, 2, 3]);
        let e = load(&c, &k).unwrap();
        assert_eq!(e.log, "warning: x");
        assert_eq!(e.data, vec![1, 2, 3]);
        // Flip one byte of the data: the entry is refused and removed.
        let p = entry_path(&c, &k);
        let mut b = std::fs::read(&p).unwrap();
        let last = b.len() - 1;
        b[last] ^= 0xff;
        std::fs::write(&p, &b).unwrap();
        assert_eq!(load(&c, &k), None);
        assert!(!p.exists());
        // Truncated entries too.
        store(&c, &k, "", &[9; 100]);
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..30]).unwrap();
        assert_eq!(load(&c, &k), None);
    }

    #[test]
    fn size_bound() {
        let d = tempfile::tempdir().unwrap();
        let c = CacheConfig {
            dir: d.path().to_path_buf(),
            max_bytes: 2500,
        };
        for i in 0..5u8 {
            store(&c, &key(&[&[i]]), "", &[i; 1000]);
        }
        let n = std::fs::read_dir(d.path().join("programs"))
            .unwrap()
            .count();
        assert_eq!(n, 2, "only the newest entries that fit remain");
        assert!(load(&c, &key(&[&[4u8]])).is_some());
    }
}
