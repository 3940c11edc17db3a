//! Program-scope global variables (OpenCL C 3.0 section 6.8, feature
//! `__opencl_c_program_scope_global_variables`): variables in the `__global` address space at
//! program scope, or `static` in a function. Their storage belongs to the program: one block
//! of device memory per program and device, initialised once, shared by all kernels of the
//! program and kept across launches.
//!
//! The block's layout is a pure function of the program's Kernel SPIR-V module: the module's
//! `CrossWorkgroup` variables in declaration order, each at the next multiple of its
//! alignment (OpenCL C layout rules, or its `Alignment` decoration if larger). The lowering
//! turns each variable into `block address (launch header) + offset`; the runtime allocates
//! the block and fills it with [`GlobalVariables::init`], with the device addresses of
//! variables written where initialisers take them (`global int *p = &x;`).

use std::collections::HashMap;

use rspirv::dr::{Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::layout::Layout;
use super::spv::{decorations_of, id_operand, Defs};

/// The program's global variable block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GlobalVariables {
    /// Size of the block, bytes (`CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE`).
    pub size: u64,
    /// Initial contents, `size` bytes (zero where there is no initialiser).
    pub init: Vec<u8>,
    /// (byte offset in the block, offset of the target in the block): a 64-bit pointer to be
    /// written at the first offset, the block's device address plus the second.
    pub relocations: Vec<(u64, u64)>,
}

/// Whether `storage class` operand 0 of an `OpVariable` makes it a program global.
fn is_program_global(i: &rspirv::dr::Instruction) -> bool {
    i.class.opcode == Op::Variable
        && matches!(
            i.operands.first(),
            Some(Operand::StorageClass(StorageClass::CrossWorkgroup))
        )
}

/// Offsets of the module's program-scope global variables in the block, and the block size.
///
/// # Errors
/// A variable whose type has no memory layout.
pub(crate) fn offsets(module: &Module) -> Result<(HashMap<Word, u64>, u64), String> {
    let defs = Defs::new(module);
    let layout = Layout::new(module, &defs);
    let mut map = HashMap::new();
    let mut end = 0u64;
    for v in module
        .types_global_values
        .iter()
        .filter(|i| is_program_global(i))
    {
        let (Some(id), Some(ty)) = (v.result_id, v.result_type) else {
            continue;
        };
        let pointee = defs
            .get(ty)
            .and_then(|p| id_operand(p, 1))
            .ok_or("global variable of non-pointer type")?;
        let sa = layout.size_align(pointee)?;
        let declared = decorations_of(module, id)
            .iter()
            .find_map(|d| match (d.operands.get(1), d.operands.get(2)) {
                (
                    Some(Operand::Decoration(Decoration::Alignment)),
                    Some(Operand::LiteralBit32(a)),
                ) => Some(u64::from(*a)),
                _ => None,
            })
            .unwrap_or(1);
        let align = sa.align.max(declared).max(1);
        let at = end.div_ceil(align) * align;
        map.insert(id, at);
        end = at + sa.size;
    }
    Ok((map, end))
}

/// The block of the Kernel SPIR-V module `words` (see the module doc).
///
/// # Errors
/// A message for an initialiser that cannot be evaluated on the host (a pointer to memory
/// outside the block).
pub fn program_globals(words: &[u32]) -> Result<GlobalVariables, String> {
    let module = super::spv::load(words).map_err(|e| format!("cannot parse SPIR-V: {e}"))?;
    let (offsets, size) = offsets(&module)?;
    let defs = Defs::new(&module);
    let mut w = Writer {
        layout: Layout::new(&module, &defs),
        defs: &defs,
        offsets: &offsets,
        out: GlobalVariables {
            size,
            init: vec![0; size as usize],
            relocations: Vec::new(),
        },
    };
    for v in module
        .types_global_values
        .iter()
        .filter(|i| is_program_global(i))
    {
        if let (Some(id), Some(init)) = (v.result_id, id_operand(v, 1)) {
            w.write(init, offsets[&id])?;
        }
    }
    Ok(w.out)
}

/// Writes constants into the initial image.
struct Writer<'m> {
    layout: Layout<'m>,
    defs: &'m Defs,
    offsets: &'m HashMap<Word, u64>,
    out: GlobalVariables,
}

impl Writer<'_> {
    fn put(&mut self, at: u64, bytes: &[u8]) {
        let at = at as usize;
        if let Some(dst) = self.out.init.get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    /// Writes constant `id` at byte `at` of the block.
    fn write(&mut self, id: Word, at: u64) -> Result<(), String> {
        if self.offsets.contains_key(&id) {
            self.out.relocations.push((at, self.offsets[&id]));
            return Ok(());
        }
        let c = self
            .defs
            .get(id)
            .ok_or_else(|| format!("initialiser %{id} is not a constant"))?
            .clone();
        let ty = c.result_type.unwrap_or(0);
        let size = self.layout.size_align(ty).map(|s| s.size).unwrap_or(0);
        match c.class.opcode {
            Op::ConstantNull | Op::Undef | Op::ConstantFalse => Ok(()),
            Op::ConstantTrue => {
                self.put(at, &[1]);
                Ok(())
            }
            Op::Constant => {
                let mut v: u64 = 0;
                for (k, o) in c.operands.iter().enumerate() {
                    match o {
                        Operand::LiteralBit32(x) => v |= u64::from(*x) << (32 * k),
                        Operand::LiteralBit64(x) => v = *x,
                        _ => {}
                    }
                }
                let bytes = v.to_le_bytes();
                self.put(at, &bytes[..(size as usize).min(8)]);
                Ok(())
            }
            Op::ConstantComposite | Op::SpecConstantComposite => {
                let tdef = self
                    .defs
                    .get(ty)
                    .ok_or("composite of unknown type")?
                    .clone();
                let offsets: Vec<u64> = match tdef.class.opcode {
                    Op::TypeStruct => self.layout.member_offsets(ty)?,
                    Op::TypeVector | Op::TypeArray => {
                        let elem = self.layout.size_align(id_operand(&tdef, 0).unwrap_or(0))?;
                        let stride = elem.size.div_ceil(elem.align.max(1)) * elem.align.max(1);
                        (0..c.operands.len() as u64).map(|k| k * stride).collect()
                    }
                    other => return Err(format!("composite constant of type {other:?}")),
                };
                for (o, off) in c.operands.iter().zip(offsets) {
                    if let Operand::IdRef(e) = o {
                        self.write(*e, at + off)?;
                    }
                }
                Ok(())
            }
            Op::SpecConstantOp => {
                let target = self.pointer_target(id)?;
                self.out.relocations.push((at, target));
                Ok(())
            }
            other => Err(format!("initialiser {other:?} is not supported")),
        }
    }

    /// Offset in the block of the address that pointer constant `id` holds.
    fn pointer_target(&self, id: Word) -> Result<u64, String> {
        if let Some(o) = self.offsets.get(&id) {
            return Ok(*o);
        }
        let c = self
            .defs
            .get(id)
            .ok_or("a pointer initialiser outside the program's __global variables")?;
        let (op, rest) = match (c.class.opcode, c.operands.first()) {
            (Op::SpecConstantOp, Some(Operand::LiteralSpecConstantOpInteger(op))) => {
                (*op, &c.operands[1..])
            }
            (other, _) => return Err(format!("pointer initialiser {other:?} is not supported")),
        };
        let ids: Vec<Word> = rest
            .iter()
            .filter_map(|o| match o {
                Operand::IdRef(w) => Some(*w),
                _ => None,
            })
            .collect();
        match op {
            Op::Bitcast | Op::PtrCastToGeneric | Op::GenericCastToPtr | Op::ConvertPtrToU => {
                self.pointer_target(ids[0])
            }
            Op::InBoundsPtrAccessChain | Op::PtrAccessChain => {
                let base = ids[0];
                let mut off = self.pointer_target(base)?;
                // The base's pointee: the first index steps over whole pointees.
                let bty = self
                    .defs
                    .get(base)
                    .and_then(|b| b.result_type)
                    .and_then(|t| self.defs.get(t))
                    .and_then(|p| id_operand(p, 1))
                    .ok_or("pointer of unknown type")?;
                let idx = |i: Word| {
                    self.defs
                        .const_u64(i)
                        .map(|v| v as i64)
                        .ok_or("non-constant index in an initialiser")
                };
                let sa = self.layout.size_align(bty)?;
                let stride = sa.size.div_ceil(sa.align.max(1)) * sa.align.max(1);
                off = off.wrapping_add((idx(ids[1])? * stride as i64) as u64);
                let mut ty = bty;
                for &i in &ids[2..] {
                    let t = self.defs.get(ty).ok_or("unknown type")?.clone();
                    let k = idx(i)?;
                    match t.class.opcode {
                        Op::TypeStruct => {
                            off += self.layout.member_offsets(ty)?[k as usize];
                            ty = id_operand(&t, k as usize).unwrap_or(0);
                        }
                        _ => {
                            let e = id_operand(&t, 0).unwrap_or(0);
                            let sa = self.layout.size_align(e)?;
                            let stride = sa.size.div_ceil(sa.align.max(1)) * sa.align.max(1);
                            off = off.wrapping_add((k * stride as i64) as u64);
                            ty = e;
                        }
                    }
                }
                Ok(off)
            }
            other => Err(format!("pointer initialiser {other:?} is not supported")),
        }
    }
}
