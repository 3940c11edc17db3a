//! Whole built programs in the program cache: what reflection and lowering made of a front-end
//! result (every kernel's [`KernelInfo`] with its Vulkan module, the structurized Kernel
//! SPIR-V, the build log), so that a cached build runs neither the front end nor vkcl's own
//! passes.
//!
//! Reflection and lowering are deterministic functions of the front-end result, the device's
//! capabilities, the build options and vkcl's compiler code; the key ([`key`]) holds the
//! front-end entry's key (which covers source or IL, options, device and tools), the identity
//! of the compiler's sources (`VKCL_COMPILER_SOURCE_HASH`, build.rs: every file of
//! `src/compiler/` and `Cargo.lock`), and whether and with which spirv-val the modules were
//! validated. An entry is stored only after a build succeeded, every module validated as a
//! cold build does.
//!
//! The data is a [`FORMAT`] word, then the entry's own key and the program in postcard's
//! encoding (serde). An entry that does not decode, holds another key, or holds a module that
//! is not SPIR-V, is refused and the build takes
//! the full path (and replaces it); the checked cache file ([`crate::util::cache_file`])
//! already refuses a corrupted or truncated one.

use super::{cache, validate, BuildEnv, CompiledProgram, KernelInfo};
use serde::{Deserialize, Serialize};

/// Version of the entry layout; bump on any change to what is serialised.
const FORMAT: u32 = 1;

/// The serialised program (the build log travels as the cache file's log).
#[derive(Serialize, Deserialize)]
struct Stored {
    /// The entry's own key: an entry found under another name (copied, renamed) is refused.
    key: [u8; 32],
    kernels: Vec<KernelInfo>,
    opencl_spirv: Vec<u32>,
    has_global_variables: bool,
}

/// The identity of vkcl's compiler: crate version and the hash of its sources (build.rs).
fn compiler_id() -> &'static [u8] {
    concat!(
        env!("CARGO_PKG_VERSION"),
        ";",
        env!("VKCL_COMPILER_SOURCE_HASH")
    )
    .as_bytes()
}

/// The key of the built program whose front-end entry has key `front`; `extra`: whatever
/// else decides the result (the sources whose `vec_type_hint`s a link reads).
pub(super) fn key(front: &[u8; 32], extra: &[u8]) -> [u8; 32] {
    let validated = if validate::enabled() {
        validate::identity()
    } else {
        "not validated"
    };
    cache::key(&[
        b"lowered",
        compiler_id(),
        front,
        extra,
        validated.as_bytes(),
    ])
}

/// The cached program of `k`, `None` without a cache, without an entry, or when the entry does
/// not decode (then it is removed).
pub(super) fn load(env: &BuildEnv, k: &[u8; 32]) -> Option<CompiledProgram> {
    let c = env.cache?;
    let e = cache::load(c, k)?;
    match decode(&e.data, k) {
        Some(mut p) => {
            p.build_log = e.log;
            if let Some(dir) = &crate::util::config::config().dump_spirv {
                for kernel in &p.kernels {
                    super::dump_spirv(dir, &kernel.name, &kernel.spirv);
                }
            }
            Some(p)
        }
        None => {
            tracing::warn!("program cache: a lowered-program entry does not decode, rebuilding");
            cache::remove(c, k);
            None
        }
    }
}

/// Stores `p` under `k` when the cache is on.
pub(super) fn store(env: &BuildEnv, k: &[u8; 32], p: &CompiledProgram) {
    if let Some(c) = env.cache {
        cache::store(c, k, &p.build_log, &encode(k, p));
    }
}

/// The data of an entry (see the module doc).
fn encode(k: &[u8; 32], p: &CompiledProgram) -> Vec<u8> {
    let stored = Stored {
        key: *k,
        kernels: p.kernels.clone(),
        opencl_spirv: p.opencl_spirv.clone(),
        has_global_variables: p.has_global_variables,
    };
    // Serialising plain data into a Vec cannot fail; were it to, the empty data would not
    // decode and the next build would take the full path.
    postcard::to_extend(&stored, FORMAT.to_le_bytes().to_vec()).unwrap_or_default()
}

/// The program of an entry's data, `None` unless it is exactly one of [`FORMAT`] and key `k`
/// whose modules are all SPIR-V.
fn decode(data: &[u8], k: &[u8; 32]) -> Option<CompiledProgram> {
    let body = data.strip_prefix(&FORMAT.to_le_bytes())?;
    let (s, rest): (Stored, _) = postcard::take_from_bytes(body).ok()?;
    let spirv = |w: &[u32]| w.len() >= 5 && w[0] == rspirv::spirv::MAGIC_NUMBER;
    if !rest.is_empty()
        || s.key != *k
        || !spirv(&s.opencl_spirv)
        || !s.kernels.iter().all(|k| spirv(&k.spirv))
    {
        return None;
    }
    Some(CompiledProgram {
        build_log: String::new(),
        kernels: s.kernels,
        opencl_spirv: s.opencl_spirv,
        has_global_variables: s.has_global_variables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: [u8; 32] = [5; 32];

    fn program() -> CompiledProgram {
        let mut k = KernelInfo {
            name: "k".into(),
            args_size: 8,
            spirv: vec![rspirv::spirv::MAGIC_NUMBER, 0x10500, 0, 9, 0, 0xdead_beef],
            ..Default::default()
        };
        k.reqd_work_group_size = Some([4, 2, 1]);
        CompiledProgram {
            build_log: "warning: w".into(),
            kernels: vec![k],
            opencl_spirv: vec![rspirv::spirv::MAGIC_NUMBER, 0x10000, 0, 3, 0],
            has_global_variables: true,
        }
    }

    #[test]
    fn round_trip() {
        let p = program();
        let mut d = decode(&encode(&K, &p), &K).expect("decodes");
        assert_eq!(d.build_log, "");
        d.build_log = p.build_log.clone();
        assert_eq!(d.kernels, p.kernels);
        assert_eq!(d.opencl_spirv, p.opencl_spirv);
        assert!(d.has_global_variables);
    }

    #[test]
    fn refuses_bad_data() {
        let data = encode(&K, &program());
        assert!(decode(&data, &K).is_some());
        // Another key.
        assert!(decode(&data, &[6; 32]).is_none());
        // Another format version, a truncation, trailing bytes, garbage.
        let mut other = data.clone();
        other[0] ^= 1;
        assert!(decode(&other, &K).is_none());
        for n in [0, 3, 4, 10, data.len() - 1] {
            assert!(decode(&data[..n], &K).is_none(), "truncated to {n}");
        }
        let mut long = data.clone();
        long.push(0);
        assert!(decode(&long, &K).is_none());
        assert!(decode(&[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff], &K).is_none());
        // A kernel whose module is not SPIR-V.
        let mut p = program();
        p.kernels[0].spirv = vec![1, 2, 3, 4, 5];
        assert!(decode(&encode(&K, &p), &K).is_none());
    }

    #[test]
    fn key_depends_on_its_parts() {
        let f = [7u8; 32];
        assert_eq!(key(&f, b""), key(&f, b""));
        assert_ne!(key(&f, b""), key(&f, b"x"));
        assert_ne!(key(&f, b""), key(&[8u8; 32], b""));
    }
}
