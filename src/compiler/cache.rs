//! The on-disk program cache: front-end results (structurized Kernel SPIR-V, compiled objects)
//! keyed by everything that decides them, so that building the same program again runs
//! neither clang nor opt nor llvm-spirv.
//!
//! Location: `$VKCL_CACHE_DIR`, else the user's cache directory (`~/.cache/vkcl`, from the
//! `dirs` crate), entries under `programs/`; `VKCL_CACHE=0` disables it. The directory is kept
//! under `VKCL_CACHE_MAX_MB` (default 256) by removing the least recently used entries after
//! each store.
//!
//! An entry is `VKCLCAC\0`, a format version (u32 LE), the SHA-256 of the rest, then the
//! build log's length (u32 LE), the log and the data. It is written to a temporary file in the
//! same directory and renamed into place, so readers never see half an entry. An entry that
//! does not check out (truncated, corrupted, another version) is deleted and rebuilt, never
//! used.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"VKCLCAC\0";
const VERSION: u32 = 1;

/// Lookups that found a valid entry.
pub static HITS: AtomicU64 = AtomicU64::new(0);
/// Lookups that found nothing (or an invalid entry).
pub static MISSES: AtomicU64 = AtomicU64::new(0);
/// Entries written.
pub static STORES: AtomicU64 = AtomicU64::new(0);
/// Entries found corrupt and removed.
pub static CORRUPT: AtomicU64 = AtomicU64::new(0);

/// Where the cache lives and how big it may grow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// The cache directory (`programs/` is created inside).
    pub dir: PathBuf,
    /// Upper bound of the entries' total size, bytes.
    pub max_bytes: u64,
}

/// A cache hit: the build log and the data stored with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The build log stored with the result (clang's warnings).
    pub log: String,
    /// The result: structurized Kernel SPIR-V (bytes) or LLVM bitcode.
    pub data: Vec<u8>,
}

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

/// Serialises an entry (see the module doc).
pub fn encode(log: &str, data: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(4 + log.len() + data.len());
    body.extend_from_slice(&(log.len() as u32).to_le_bytes());
    body.extend_from_slice(log.as_bytes());
    body.extend_from_slice(data);
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&body));
    out.extend_from_slice(&body);
    out
}

/// Parses an entry; `None` when anything is wrong with it.
pub fn decode(bytes: &[u8]) -> Option<Entry> {
    if bytes.len() < 12 + 32 + 4 || &bytes[..8] != MAGIC || bytes[8..12] != VERSION.to_le_bytes() {
        return None;
    }
    let body = &bytes[44..];
    if Sha256::digest(body).as_slice() != &bytes[12..44] {
        return None;
    }
    let n = u32::from_le_bytes(body[..4].try_into().ok()?) as usize;
    let log = body.get(4..4 + n)?;
    Some(Entry {
        log: String::from_utf8(log.to_vec()).ok()?,
        data: body[4 + n..].to_vec(),
    })
}

/// Looks `k` up. A corrupt entry is removed and counts as a miss.
pub fn load(cfg: &CacheConfig, k: &[u8; 32]) -> Option<Entry> {
    let path = entry_path(cfg, k);
    let Ok(bytes) = std::fs::read(&path) else {
        MISSES.fetch_add(1, Ordering::Relaxed);
        return None;
    };
    match decode(&bytes) {
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
            CORRUPT.fetch_add(1, Ordering::Relaxed);
            MISSES.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(path = %path.display(), "corrupt program cache entry, rebuilding");
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// Reads a file written by [`store_file`]; `None` when it is missing or does not check out
/// (a corrupt file is removed). Used for blobs kept beside the program cache (the persisted
/// `VkPipelineCache`).
pub fn load_file(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    match decode(&bytes) {
        Some(e) => Some(e.data),
        None => {
            CORRUPT.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(path = %path.display(), "corrupt cache file, ignored");
            let _ = std::fs::remove_file(path);
            None
        }
    }
}

/// Writes `data` to `path` in the checked entry format, atomically (a temporary file in the
/// same directory renamed into place). Errors: the I/O error.
pub fn store_file(path: &Path, log: &str, data: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(&encode(log, data))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Stores `log` and `data` under `k` (atomically: temporary file + rename), then trims the
/// cache to its size bound. Failures are logged and otherwise ignored: the cache is an
/// optimisation.
pub fn store(cfg: &CacheConfig, k: &[u8; 32], log: &str, data: &[u8]) {
    let path = entry_path(cfg, k);
    let Some(dir) = path.parent() else { return };
    let r = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
        tmp.write_all(&encode(log, data))?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    })();
    match r {
        Ok(()) => {
            STORES.fetch_add(1, Ordering::Relaxed);
            trim(dir, cfg.max_bytes);
        }
        Err(e) => tracing::warn!(path = %path.display(), "cannot write program cache entry: {e}"),
    }
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
