//! The lowering context: the module being rewritten, id allocation and find-or-create helpers
//! for types and constants.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use crate::compiler::spv::{id_operand, inst, IdAlloc};

/// One kernel's module while it is lowered. The module holds exactly one function.
pub(crate) struct Ctx {
    /// The module (one function, the kernel body).
    pub module: Module,
    ids: IdAlloc,
}

impl Ctx {
    /// Wraps `module` for rewriting.
    pub fn new(module: Module) -> Self {
        let ids = IdAlloc::new(&module);
        Ctx { module, ids }
    }

    /// A fresh id.
    pub fn id(&mut self) -> Word {
        self.ids.next()
    }

    /// The id bound for the header.
    pub fn bound(&self) -> Word {
        self.ids.bound()
    }

    /// The global (type/constant/variable) instruction defining `id`.
    pub fn def(&self, id: Word) -> Option<&Instruction> {
        self.module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(id))
    }

    fn find_global(&self, op: Op, ty: Option<Word>, operands: &[Operand]) -> Option<Word> {
        self.module.types_global_values.iter().find_map(|i| {
            (i.class.opcode == op && i.result_type == ty && i.operands == operands)
                .then_some(i.result_id)
                .flatten()
        })
    }

    /// Finds an identical global instruction (or creates one) and returns its id.
    pub fn global(&mut self, op: Op, ty: Option<Word>, operands: Vec<Operand>) -> Word {
        if let Some(id) = self.find_global(op, ty, &operands) {
            return id;
        }
        let id = self.id();
        self.module
            .types_global_values
            .push(inst(op, ty, Some(id), operands));
        id
    }

    /// `OpTypeVoid`.
    pub fn t_void(&mut self) -> Word {
        self.global(Op::TypeVoid, None, vec![])
    }

    /// `OpTypeBool`.
    pub fn t_bool(&mut self) -> Word {
        self.global(Op::TypeBool, None, vec![])
    }

    /// `OpTypeInt width 0` (OpenCL modules use signedness 0 throughout).
    pub fn t_int(&mut self, width: u32) -> Word {
        self.global(
            Op::TypeInt,
            None,
            vec![Operand::LiteralBit32(width), Operand::LiteralBit32(0)],
        )
    }

    /// `OpTypeVector elem n`.
    pub fn t_vec(&mut self, elem: Word, n: u32) -> Word {
        self.global(
            Op::TypeVector,
            None,
            vec![Operand::IdRef(elem), Operand::LiteralBit32(n)],
        )
    }

    /// `OpTypePointer sc pointee`.
    pub fn t_ptr(&mut self, sc: StorageClass, pointee: Word) -> Word {
        self.global(
            Op::TypePointer,
            None,
            vec![Operand::StorageClass(sc), Operand::IdRef(pointee)],
        )
    }

    /// `OpTypeFunction ret params...`.
    pub fn t_fn(&mut self, ret: Word, params: &[Word]) -> Word {
        let mut ops = vec![Operand::IdRef(ret)];
        ops.extend(params.iter().map(|p| Operand::IdRef(*p)));
        self.global(Op::TypeFunction, None, ops)
    }

    /// A 32-bit unsigned constant.
    pub fn c_u32(&mut self, v: u32) -> Word {
        let t = self.t_int(32);
        self.global(Op::Constant, Some(t), vec![Operand::LiteralBit32(v)])
    }

    /// A 64-bit unsigned constant.
    pub fn c_u64(&mut self, v: u64) -> Word {
        let t = self.t_int(64);
        self.global(Op::Constant, Some(t), vec![Operand::LiteralBit64(v)])
    }

    /// Storage class and pointee of pointer type `ty`.
    pub fn ptr_info(&self, ty: Word) -> Option<(StorageClass, Word)> {
        let d = self.def(ty)?;
        if d.class.opcode != Op::TypePointer {
            return None;
        }
        match (d.operands.first(), id_operand(d, 1)) {
            (Some(Operand::StorageClass(sc)), Some(p)) => Some((*sc, p)),
            _ => None,
        }
    }

    /// Adds `OpDecorate target deco extra...`.
    pub fn decorate(&mut self, target: Word, deco: Decoration, extra: Vec<Operand>) {
        let mut ops = vec![Operand::IdRef(target), Operand::Decoration(deco)];
        ops.extend(extra);
        self.module
            .annotations
            .push(inst(Op::Decorate, None, None, ops));
    }

    /// Result types of every value in the function and of globals.
    pub fn value_types(&self) -> HashMap<Word, Word> {
        let mut m = HashMap::new();
        for i in &self.module.types_global_values {
            if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
                m.insert(id, t);
            }
        }
        for f in &self.module.functions {
            for i in f
                .parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
            {
                if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
                    m.insert(id, t);
                }
            }
        }
        m
    }

    /// (component type, component count) of vector type `ty`; None for any other type.
    pub fn vector_shape(&self, ty: Word) -> Option<(Word, u32)> {
        let d = self.def(ty)?;
        if d.class.opcode != Op::TypeVector {
            return None;
        }
        Some((id_operand(d, 0)?, crate::compiler::spv::lit_operand(d, 1)?))
    }

    /// Width in bits of integer or float type `ty` (or of a vector's component).
    pub fn scalar_width(&self, ty: Word) -> Option<u32> {
        let d = self.def(ty)?;
        match d.class.opcode {
            Op::TypeInt | Op::TypeFloat => match d.operands.first() {
                Some(Operand::LiteralBit32(w)) => Some(*w),
                _ => None,
            },
            Op::TypeVector => self.scalar_width(id_operand(d, 0)?),
            _ => None,
        }
    }

    /// Replaces every use of each key id by its value, everywhere in the module.
    pub fn substitute(&mut self, map: &HashMap<Word, Word>) {
        if map.is_empty() {
            return;
        }
        let resolve = |w: &mut Word| {
            let mut guard = 0;
            while let Some(n) = map.get(w) {
                *w = *n;
                guard += 1;
                if guard > 64 {
                    break;
                }
            }
        };
        let m = &mut self.module;
        let sections = m
            .entry_points
            .iter_mut()
            .chain(m.execution_modes.iter_mut())
            .chain(m.debug_names.iter_mut())
            .chain(m.annotations.iter_mut())
            .chain(m.types_global_values.iter_mut());
        for i in sections {
            crate::compiler::spv::for_each_used_id_mut(i, resolve);
        }
        for f in &mut m.functions {
            let all = f
                .def
                .iter_mut()
                .chain(f.parameters.iter_mut())
                .chain(f.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()));
            for i in all {
                crate::compiler::spv::for_each_used_id_mut(i, resolve);
            }
        }
    }
}
