//! Small helpers over rspirv's data representation shared by reflection and the passes.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, Word};

/// Type, constant and global-variable definitions of a module, by result id.
pub(crate) struct Defs {
    map: HashMap<Word, Instruction>,
}

impl Defs {
    /// Indexes `types_global_values` of `module`.
    pub fn new(module: &Module) -> Self {
        let map = module
            .types_global_values
            .iter()
            .filter_map(|i| i.result_id.map(|id| (id, i.clone())))
            .collect();
        Defs { map }
    }

    /// The defining instruction of `id`, if it is a type, constant or global.
    pub fn get(&self, id: Word) -> Option<&Instruction> {
        self.map.get(&id)
    }

    /// The integer value of an `OpConstant` of integer type (up to 64 bits).
    pub fn const_u64(&self, id: Word) -> Option<u64> {
        let inst = self.get(id)?;
        if inst.class.opcode != Op::Constant {
            return None;
        }
        match inst.operands.first()? {
            Operand::LiteralBit32(v) => Some(u64::from(*v)),
            Operand::LiteralBit64(v) => Some(*v),
            _ => None,
        }
    }
}

/// The id in operand `i` of `inst`, if it is an id.
pub(crate) fn id_operand(inst: &Instruction, i: usize) -> Option<Word> {
    match inst.operands.get(i)? {
        Operand::IdRef(w) | Operand::IdScope(w) | Operand::IdMemorySemantics(w) => Some(*w),
        _ => None,
    }
}

/// The literal integer in operand `i` of `inst`.
pub(crate) fn lit_operand(inst: &Instruction, i: usize) -> Option<u32> {
    match inst.operands.get(i)? {
        Operand::LiteralBit32(w) => Some(*w),
        Operand::LiteralExtInstInteger(w) => Some(*w),
        _ => None,
    }
}

/// Calls `f` on every id an instruction uses (result type and id operands), mutably.
pub(crate) fn for_each_used_id_mut(inst: &mut Instruction, mut f: impl FnMut(&mut Word)) {
    if let Some(t) = inst.result_type.as_mut() {
        f(t);
    }
    for op in inst.operands.iter_mut() {
        match op {
            Operand::IdRef(w) | Operand::IdScope(w) | Operand::IdMemorySemantics(w) => f(w),
            _ => {}
        }
    }
}

/// Every id an instruction uses (result type and id operands).
pub(crate) fn used_ids(inst: &Instruction) -> Vec<Word> {
    let mut v = Vec::new();
    if let Some(t) = inst.result_type {
        v.push(t);
    }
    for op in &inst.operands {
        match op {
            Operand::IdRef(w) | Operand::IdScope(w) | Operand::IdMemorySemantics(w) => v.push(*w),
            _ => {}
        }
    }
    v
}

/// The string of an `OpName` for `id`.
pub(crate) fn name_of(module: &Module, id: Word) -> Option<String> {
    module.debug_names.iter().find_map(|i| {
        if i.class.opcode == Op::Name && id_operand(i, 0) == Some(id) {
            match i.operands.get(1) {
                Some(Operand::LiteralString(s)) => Some(s.clone()),
                _ => None,
            }
        } else {
            None
        }
    })
}

/// Whether `id` carries decoration `deco` (with any operands).
pub(crate) fn has_decoration(module: &Module, id: Word, deco: Decoration) -> bool {
    decorations_of(module, id)
        .iter()
        .any(|i| matches!(i.operands.get(1), Some(Operand::Decoration(d)) if *d == deco))
}

/// The `OpDecorate` instructions targeting `id`.
pub(crate) fn decorations_of(module: &Module, id: Word) -> Vec<&Instruction> {
    module
        .annotations
        .iter()
        .filter(|i| i.class.opcode == Op::Decorate && id_operand(i, 0) == Some(id))
        .collect()
}

/// Allocates fresh ids from the module header bound.
pub(crate) struct IdAlloc {
    next: Word,
}

impl IdAlloc {
    /// Starts after the highest id of `module`.
    pub fn new(module: &Module) -> Self {
        let next = module.header.as_ref().map(|h| h.bound).unwrap_or(1).max(1);
        IdAlloc { next }
    }

    /// A fresh id.
    pub fn next(&mut self) -> Word {
        let id = self.next;
        self.next += 1;
        id
    }

    /// The bound to write back into the header.
    pub fn bound(&self) -> Word {
        self.next
    }
}

/// Shorthand for building an instruction.
pub(crate) fn inst(
    op: Op,
    ty: Option<Word>,
    id: Option<Word>,
    operands: Vec<Operand>,
) -> Instruction {
    Instruction::new(op, ty, id, operands)
}
