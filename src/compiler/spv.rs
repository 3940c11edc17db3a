//! Small helpers over rspirv's data representation shared by reflection and the passes.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::grammar::{OperandKind, OperandQuantifier};
use rspirv::spirv::{Decoration, Op, Word};

/// Parses the module `words`, as `rspirv::dr::load_words` does but with every
/// `OpSpecConstantOp` read whole. Every pass parses through here.
///
/// rspirv 0.13 reads each operand of the operation inside an `OpSpecConstantOp` once,
/// whatever its quantifier, and refuses the words left over ("found extra operands"): an
/// access chain with more than one index (llvm-spirv writes `&a[1]` of an array of vectors
/// as `OpSpecConstantOp PtrAccessChain %a %0 %1 %0`), an `OpVectorShuffle` of more than one
/// component, an `OpCompositeExtract` or `OpCompositeInsert` of more than one index. So
/// rspirv is given each `OpSpecConstantOp` as an `OpSpecConstantComposite` of the same words
/// (a list of ids, which it reads whole), and the operation's operands are then decoded here
/// after its grammar ([`spec_constant_op_operands`]).
///
/// # Errors
/// rspirv's message for a module it cannot parse, or a message for an `OpSpecConstantOp`
/// whose operands do not fit its operation.
pub(crate) fn load(words: &[u32]) -> Result<Module, String> {
    const MAGIC: u32 = 0x0723_0203;
    const HEADER: usize = 5;
    // The words after each respelled instruction's result id, by that id.
    let mut ops: HashMap<Word, Vec<u32>> = HashMap::new();
    let mut words = std::borrow::Cow::Borrowed(words);
    // A module in the other byte order, or a malformed one, goes to rspirv as it is.
    if words.first() == Some(&MAGIC) {
        let mut at = HEADER;
        while let Some(&first) = words.get(at) {
            let count = (first >> 16) as usize;
            if count == 0 || at + count > words.len() {
                break;
            }
            if first & 0xffff == Op::SpecConstantOp as u32 && count >= 4 {
                ops.insert(words[at + 2], words[at + 3..at + count].to_vec());
                words.to_mut()[at] = (first & 0xffff_0000) | Op::SpecConstantComposite as u32;
            }
            at += count;
        }
    }
    let mut module = rspirv::dr::load_words(&*words).map_err(|e| e.to_string())?;
    if ops.is_empty() {
        return Ok(module);
    }
    for inst in module.all_inst_iter_mut() {
        let raw = inst
            .result_id
            .filter(|_| inst.class.opcode == Op::SpecConstantComposite)
            .and_then(|id| ops.get(&id));
        if let Some(raw) = raw {
            let operands = spec_constant_op_operands(raw)
                .map_err(|e| format!("OpSpecConstantOp %{}: {e}", inst.result_id.unwrap_or(0)))?;
            *inst = Instruction::new(
                Op::SpecConstantOp,
                inst.result_type,
                inst.result_id,
                operands,
            );
        }
    }
    Ok(module)
}

/// The operands of an `OpSpecConstantOp` from its words after the result id (the
/// operation's opcode, then the operation's operands), each logical operand of the
/// operation's grammar taken as often as its quantifier allows.
fn spec_constant_op_operands(raw: &[u32]) -> Result<Vec<Operand>, String> {
    let (&opcode, mut rest) = raw.split_first().ok_or("no operation")?;
    let grammar = rspirv::grammar::INSTRUCTION_TABLE
        .lookup_opcode(opcode)
        .ok_or_else(|| format!("unknown operation {opcode}"))?;
    let mut out = vec![Operand::LiteralSpecConstantOpInteger(grammar.opcode)];
    let logical = grammar
        .operands
        .iter()
        .filter(|o| !matches!(o.kind, OperandKind::IdResultType | OperandKind::IdResult));
    for operand in logical {
        let n = match operand.quantifier {
            OperandQuantifier::One if rest.is_empty() => {
                return Err(format!("too few operands for {}", grammar.opname))
            }
            OperandQuantifier::One => 1,
            OperandQuantifier::ZeroOrOne => rest.len().min(1),
            OperandQuantifier::ZeroOrMore => rest.len(),
        };
        let (taken, left) = rest.split_at(n);
        for &w in taken {
            out.push(match operand.kind {
                OperandKind::IdRef => Operand::IdRef(w),
                OperandKind::LiteralInteger => Operand::LiteralBit32(w),
                other => {
                    return Err(format!(
                        "operand kind {other:?} of {} is not supported",
                        grammar.opname
                    ))
                }
            });
        }
        rest = left;
    }
    if rest.is_empty() {
        Ok(out)
    } else {
        Err(format!("extra operands for {}", grammar.opname))
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use rspirv::binary::Assemble;
    use spirv_tools::assembler::Assembler;

    /// Constant expressions with more than one operand of a repeated kind: the access chain
    /// llvm-spirv writes for `&a[1]` of a program-scope `uint2 a[2]` (basic
    /// progvar_prog_scope_init), a shuffle of two components, an extract of two indexes.
    const EXPRESSIONS: &str = r#"
        OpCapability Addresses
        OpCapability Kernel
        OpCapability Int64
        OpMemoryModel Physical64 OpenCL
        OpEntryPoint Kernel %k "k"
        OpName %elem "elem"
        OpName %swap "swap"
        OpName %lane "lane"
        OpName %sum "sum"
        %void = OpTypeVoid
        %uint = OpTypeInt 32 0
        %ulong = OpTypeInt 64 0
        %u0 = OpConstant %ulong 0
        %u1 = OpConstant %ulong 1
        %u2 = OpConstant %ulong 2
        %seven = OpConstant %uint 7
        %v2 = OpTypeVector %uint 2
        %arr = OpTypeArray %v2 %u2
        %parr = OpTypePointer CrossWorkgroup %arr
        %pu = OpTypePointer CrossWorkgroup %uint
        %pv2 = OpTypePointer CrossWorkgroup %v2
        %ppv2 = OpTypePointer CrossWorkgroup %pv2
        %sevens = OpConstantComposite %v2 %seven %seven
        %init = OpConstantComposite %arr %sevens %sevens
        %a = OpVariable %parr CrossWorkgroup %init
        %elem = OpSpecConstantOp %pu PtrAccessChain %a %u0 %u1 %u0
        %cast = OpSpecConstantOp %pv2 Bitcast %elem
        %p = OpVariable %ppv2 CrossWorkgroup %cast
        %swap = OpSpecConstantOp %v2 VectorShuffle %sevens %sevens 1 2
        %lane = OpSpecConstantOp %uint CompositeExtract %init 1 0
        %sum = OpSpecConstantOp %uint IAdd %lane %seven
        %fn = OpTypeFunction %void
        %k = OpFunction %void None %fn
        %e = OpLabel
        OpReturn
        OpFunctionEnd
    "#;

    fn assemble(text: &str) -> Vec<u32> {
        let a = spirv_tools::assembler::create(Some(spirv_tools::TargetEnv::Universal_1_4));
        a.assemble(text, Default::default())
            .unwrap_or_else(|e| panic!("spirv-as: {e}"))
            .as_words()
            .to_vec()
    }

    /// The operation and the operands after it of the `OpSpecConstantOp` named `name`.
    fn expression(module: &Module, name: &str) -> (Op, Vec<Operand>) {
        let id = module
            .debug_names
            .iter()
            .find(|i| matches!(i.operands.get(1), Some(Operand::LiteralString(s)) if s == name))
            .and_then(|i| id_operand(i, 0));
        let inst = module
            .types_global_values
            .iter()
            .find(|i| i.result_id.is_some() && i.result_id == id)
            .unwrap_or_else(|| panic!("no %{name}"));
        assert_eq!(inst.class.opcode, Op::SpecConstantOp, "%{name}");
        match inst.operands.split_first() {
            Some((Operand::LiteralSpecConstantOpInteger(op), rest)) => (*op, rest.to_vec()),
            other => panic!("%{name}: {other:?}"),
        }
    }

    /// Where the first `OpSpecConstantOp` of operation `op` in `words` starts, and its word
    /// count.
    fn find(words: &[u32], op: Op) -> (usize, usize) {
        let mut at = 5;
        loop {
            let count = (words[at] >> 16) as usize;
            if words[at] & 0xffff == Op::SpecConstantOp as u32 && words[at + 3] == op as u32 {
                return (at, count);
            }
            at += count;
        }
    }

    #[test]
    fn spec_constant_operations_are_read_whole() {
        let words = assemble(EXPRESSIONS);
        let module = load(&words).expect("parses");
        let (op, rest) = expression(&module, "elem");
        assert_eq!(op, Op::PtrAccessChain);
        assert_eq!(rest.len(), 4, "{rest:?}");
        assert!(rest.iter().all(|o| matches!(o, Operand::IdRef(_))));
        let (op, rest) = expression(&module, "swap");
        assert_eq!(op, Op::VectorShuffle);
        assert!(matches!(
            rest[..],
            [
                Operand::IdRef(_),
                Operand::IdRef(_),
                Operand::LiteralBit32(1),
                Operand::LiteralBit32(2)
            ]
        ));
        let (op, rest) = expression(&module, "lane");
        assert_eq!(op, Op::CompositeExtract);
        assert!(matches!(
            rest[..],
            [
                Operand::IdRef(_),
                Operand::LiteralBit32(1),
                Operand::LiteralBit32(0)
            ]
        ));
        let (op, rest) = expression(&module, "sum");
        assert_eq!(op, Op::IAdd);
        assert_eq!(rest.len(), 2);
        // Nothing of the detour through OpSpecConstantComposite is left: the same words after
        // the header's generator.
        assert_eq!(module.assemble()[3..], words[3..]);
    }

    #[test]
    fn spec_constant_operations_that_do_not_fit_their_grammar_are_errors() {
        let words = assemble(EXPRESSIONS);
        // IAdd of one operand.
        let (at, count) = find(&words, Op::IAdd);
        let mut short = words.clone();
        short[at] -= 1 << 16;
        short.remove(at + count - 1);
        let e = load(&short).unwrap_err();
        assert!(e.contains("too few operands for IAdd"), "{e}");
        // Bitcast of two operands.
        let (at, count) = find(&words, Op::Bitcast);
        let mut long = words.clone();
        long[at] += 1 << 16;
        long.insert(at + count, words[at + count - 1]);
        let e = load(&long).unwrap_err();
        assert!(e.contains("extra operands for Bitcast"), "{e}");
    }
}
