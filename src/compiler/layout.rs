//! OpenCL C data layout (OpenCL C 3.0 spec, 6.3.5 "Alignment of Types") of SPIR-V types:
//! scalars and vectors are aligned to their size, 3-component vectors take the size and
//! alignment of 4-component ones, arrays align as their element, structs as their most aligned
//! member (1 with `CPacked`), pointers are 8 bytes.

use rspirv::dr::{Module, Operand};
use rspirv::spirv::{Decoration, Op, Word};

use super::spv::{has_decoration, id_operand, lit_operand, Defs};

/// Size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SizeAlign {
    pub size: u64,
    pub align: u64,
}

/// Layout computations over one module.
pub(crate) struct Layout<'m> {
    module: &'m Module,
    defs: &'m Defs,
}

fn round_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a) * a
    }
}

impl<'m> Layout<'m> {
    /// Layout queries for types of `module`.
    pub fn new(module: &'m Module, defs: &'m Defs) -> Self {
        Layout { module, defs }
    }

    /// Size and alignment of type `ty`.
    ///
    /// # Errors
    /// A message for types without a memory layout (void, functions, opaque types).
    pub fn size_align(&self, ty: Word) -> Result<SizeAlign, String> {
        let inst = self
            .defs
            .get(ty)
            .ok_or_else(|| format!("unknown type %{ty}"))?;
        let sa = |size: u64, align: u64| Ok(SizeAlign { size, align });
        match inst.class.opcode {
            Op::TypeBool => sa(1, 1),
            Op::TypeInt | Op::TypeFloat => {
                let bits = u64::from(lit_operand(inst, 0).unwrap_or(32));
                sa(bits / 8, bits / 8)
            }
            Op::TypePointer | Op::TypeEvent | Op::TypeSampler => sa(8, 8),
            Op::TypeVector => {
                let elem = self.size_align(id_operand(inst, 0).unwrap_or(0))?;
                let n = u64::from(lit_operand(inst, 1).unwrap_or(1));
                let n = if n == 3 { 4 } else { n };
                sa(elem.size * n, elem.size * n)
            }
            Op::TypeArray => {
                let elem = self.size_align(id_operand(inst, 0).unwrap_or(0))?;
                let len = id_operand(inst, 1)
                    .and_then(|c| self.defs.const_u64(c))
                    .ok_or("array length is not a constant")?;
                sa(round_up(elem.size, elem.align) * len, elem.align)
            }
            Op::TypeStruct => {
                let offsets = self.member_offsets(ty)?;
                let packed = has_decoration(self.module, ty, Decoration::CPacked);
                let mut align = 1;
                let mut end = 0;
                for (m, off) in inst.operands.iter().zip(&offsets) {
                    if let Operand::IdRef(mt) = m {
                        let msa = self.size_align(*mt)?;
                        if !packed {
                            align = align.max(msa.align);
                        }
                        end = end.max(off + msa.size);
                    }
                }
                sa(round_up(end, align), align)
            }
            other => Err(format!("type {other:?} has no memory layout")),
        }
    }

    /// Byte offsets of the members of struct type `ty`.
    ///
    /// # Errors
    /// As [`Layout::size_align`] for a member.
    pub fn member_offsets(&self, ty: Word) -> Result<Vec<u64>, String> {
        let inst = self
            .defs
            .get(ty)
            .ok_or_else(|| format!("unknown type %{ty}"))?;
        let packed = has_decoration(self.module, ty, Decoration::CPacked);
        let mut off = 0;
        let mut out = Vec::new();
        for m in &inst.operands {
            if let Operand::IdRef(mt) = m {
                let msa = self.size_align(*mt)?;
                if !packed {
                    off = round_up(off, msa.align);
                }
                out.push(off);
                off += msa.size;
            }
        }
        Ok(out)
    }
}
