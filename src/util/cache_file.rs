//! Checked cache files: the one on-disk format of everything vkcl caches (program cache
//! entries, the built math library, persisted `VkPipelineCache` data), and where the cache
//! lives.
//!
//! A file is `VKCLCAC\0`, a format version (u32 LE), the SHA-256 of the rest, then a log's
//! length (u32 LE), the log and the data. It is written to a temporary file in the same
//! directory and renamed into place, so readers never see half a file. A file that does not
//! check out (truncated, corrupted, another version) is deleted and reported missing, never
//! used.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"VKCLCAC\0";
const VERSION: u32 = 1;

/// Files found corrupt and removed.
pub static CORRUPT: AtomicU64 = AtomicU64::new(0);

/// Where the cache lives and how big its program entries may grow (`VKCL_CACHE_DIR`,
/// `VKCL_CACHE_MAX_MB`; see [`crate::util::config::Config::cache`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// The cache directory (`programs/` and `pipelines/` are created inside).
    pub dir: PathBuf,
    /// Upper bound of the program entries' total size, bytes.
    pub max_bytes: u64,
}

/// A file's contents: the log and the data stored with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The log stored with the data (a build's warnings; empty for blobs).
    pub log: String,
    /// The data.
    pub data: Vec<u8>,
}

/// Serialises a file (see the module doc).
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

/// Parses a file; `None` when anything is wrong with it.
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

/// Reads the file at `path`; `None` when it is missing or does not check out (a corrupt file
/// is removed, counted in [`CORRUPT`] and logged).
pub fn read(path: &Path) -> Option<Entry> {
    let bytes = std::fs::read(path).ok()?;
    let entry = decode(&bytes);
    if entry.is_none() {
        CORRUPT.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(path = %path.display(), "corrupt cache file, removed");
        let _ = std::fs::remove_file(path);
    }
    entry
}

/// The data of the file at `path` ([`read`] without the log).
pub fn load_file(path: &Path) -> Option<Vec<u8>> {
    read(path).map(|e| e.data)
}

/// Writes `log` and `data` to `path` in the checked format, atomically (a temporary file in
/// the same directory renamed into place), creating the directory. Errors: the I/O error.
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
