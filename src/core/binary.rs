//! vkcl's program binaries (`CL_PROGRAM_BINARIES`, `clCreateProgramWithBinary`; OpenCL 3.0
//! API 5.8.1 and 5.8.9).
//!
//! Layout (all integers little-endian):
//! | offset | size | meaning                                                           |
//! |--------|------|-------------------------------------------------------------------|
//! | 0      | 8    | magic `VKCLBIN\0`                                                  |
//! | 8      | 4    | container version ([`VERSION`])                                    |
//! | 12     | 4    | `cl_program_binary_type`: COMPILED_OBJECT, LIBRARY or EXECUTABLE   |
//! | 16     | 8    | payload length in bytes                                            |
//! | 24     | 32   | SHA-256 of the payload                                             |
//! | 56     | n    | payload                                                            |
//!
//! The payload of a compiled object or library is LLVM bitcode (target `spir64`); that of an
//! executable is its structurized Kernel SPIR-V, which only needs reflection and lowering to
//! become kernels again (no external tool).

use super::error::{ClError, ClResult};
use opencl_sys::*;
use sha2::{Digest, Sha256};

/// Magic number of vkcl's program binaries.
pub const MAGIC: &[u8; 8] = b"VKCLBIN\0";
/// Version of the container; a binary of another version is `CL_INVALID_BINARY`. 4: an
/// executable's Kernel SPIR-V keeps llvm-spirv's `OpSpecConstantOp` access chains (which
/// `compiler/spv.rs` now parses whole); version 3's had them respelled as
/// `OpSpecConstantComposite`, which program-scope initialisers no longer read that way. 3:
/// libclc's `mad` as plain arithmetic (`compiler/mathlib.rs`, "Contraction"); version 2's has
/// it as `OpenCL.std` `mad`, which lowering now leaves for the driver to fuse.
pub const VERSION: u32 = 4;
const HEADER: usize = 56;

/// What a binary holds (`CL_PROGRAM_BINARY_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryKind {
    /// `CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT`: LLVM bitcode from `clCompileProgram`.
    CompiledObject,
    /// `CL_PROGRAM_BINARY_TYPE_LIBRARY`: LLVM bitcode from `clLinkProgram -create-library`.
    Library,
    /// `CL_PROGRAM_BINARY_TYPE_EXECUTABLE`: structurized Kernel SPIR-V.
    Executable,
}

impl BinaryKind {
    /// The `cl_program_binary_type` value.
    pub fn cl(self) -> cl_program_binary_type {
        (match self {
            BinaryKind::CompiledObject => CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
            BinaryKind::Library => CL_PROGRAM_BINARY_TYPE_LIBRARY,
            BinaryKind::Executable => CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
        }) as cl_program_binary_type
    }

    fn from_cl(v: u32) -> Option<BinaryKind> {
        match v as cl_program_binary_type {
            x if x == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type => {
                Some(BinaryKind::CompiledObject)
            }
            x if x == CL_PROGRAM_BINARY_TYPE_LIBRARY as cl_program_binary_type => {
                Some(BinaryKind::Library)
            }
            x if x == CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type => {
                Some(BinaryKind::Executable)
            }
            _ => None,
        }
    }
}

/// A decoded binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramBinary {
    /// Its `CL_PROGRAM_BINARY_TYPE`.
    pub kind: BinaryKind,
    /// LLVM bitcode (objects, libraries) or SPIR-V bytes (executables).
    pub payload: Vec<u8>,
}

/// The container of `payload` (see the module doc).
pub fn encode(kind: BinaryKind, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER + payload.len());
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&kind.cl().to_le_bytes());
    b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    b.extend_from_slice(&Sha256::digest(payload));
    b.extend_from_slice(payload);
    b
}

/// Decodes a binary. Errors: `CL_INVALID_BINARY` for anything but an intact vkcl binary of
/// this version: wrong magic, version or type, a length that does not match, a checksum
/// mismatch (corruption), or a payload that is not bitcode (objects, libraries) or SPIR-V
/// (executables).
pub fn decode(b: &[u8]) -> ClResult<ProgramBinary> {
    let bad = ClError(CL_INVALID_BINARY);
    if b.len() < HEADER || &b[..8] != MAGIC || b[8..12] != VERSION.to_le_bytes() {
        return Err(bad);
    }
    let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    let kind = BinaryKind::from_cl(u32_at(12)).ok_or(bad)?;
    let len = u64::from_le_bytes(b[16..24].try_into().map_err(|_| bad)?);
    if len != (b.len() - HEADER) as u64 {
        return Err(bad);
    }
    let payload = &b[HEADER..];
    if Sha256::digest(payload).as_slice() != &b[24..56] {
        return Err(bad);
    }
    let ok = match kind {
        // LLVM bitcode starts with 'BC' 0xC0DE.
        BinaryKind::CompiledObject | BinaryKind::Library => payload.starts_with(b"BC\xc0\xde"),
        BinaryKind::Executable => {
            payload.len() >= 20
                && payload.len().is_multiple_of(4)
                && payload[..4] == 0x0723_0203u32.to_le_bytes()
        }
    };
    if !ok {
        return Err(bad);
    }
    Ok(ProgramBinary {
        kind,
        payload: payload.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spirv() -> Vec<u8> {
        let mut v = 0x0723_0203u32.to_le_bytes().to_vec();
        v.extend_from_slice(&[0; 16]);
        v
    }

    #[test]
    fn round_trip_each_kind() {
        for (kind, payload) in [
            (BinaryKind::CompiledObject, b"BC\xc0\xde1234".to_vec()),
            (BinaryKind::Library, b"BC\xc0\xdeabcd".to_vec()),
            (BinaryKind::Executable, spirv()),
        ] {
            let b = encode(kind, &payload);
            assert_eq!(decode(&b), Ok(ProgramBinary { kind, payload }));
        }
    }

    #[test]
    fn refuses_damage() {
        let good = encode(BinaryKind::Executable, &spirv());
        // Every single-byte change anywhere is caught.
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0x41;
            assert_eq!(decode(&b), Err(ClError(CL_INVALID_BINARY)), "byte {i}");
        }
        assert!(decode(&good[..good.len() - 4]).is_err());
        assert!(decode(b"VKCLBIN\0").is_err());
        // A payload of the wrong kind.
        assert!(decode(&encode(BinaryKind::CompiledObject, &spirv())).is_err());
        assert!(decode(&encode(BinaryKind::Executable, b"BC\xc0\xde1234")).is_err());
    }
}
