//! Vectors of 8 and 16 components (Kernel-only in SPIR-V) split into 4-component parts.
//!
//! Every value of a wide vector type becomes `n / 4` values of the 4-component vector of the
//! same element type; elementwise instructions are repeated per part, the others (extracts,
//! inserts, constructs, shuffles, dynamic indexing, `any`/`all`, loads and stores) regroup
//! components. In memory a wide vector becomes an array of its parts (same size and layout), so
//! pointers to wide vectors keep their arithmetic (physical ones) and their access chains
//! (private and local ones). Struct values holding wide vectors are not supported yet.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{MemoryAccess, Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// How one wide vector type is split.
#[derive(Clone, Copy)]
struct Split {
    /// The 4-component part type.
    part: Word,
    /// The element type.
    elem: Word,
    /// Number of parts (2 or 4).
    count: u32,
    /// In-memory replacement: `OpTypeArray part count` (0 for booleans).
    array: Word,
}

struct Lower<'c> {
    ctx: &'c mut Ctx,
    splits: HashMap<Word, Split>,
    /// Wide values -> their parts.
    parts: HashMap<Word, Vec<Word>>,
    types: HashMap<Word, Word>,
    out: Vec<Instruction>,
}

const UNSUPPORTED: &str = "this use of an 8- or 16-component vector is not supported yet";

impl Lower<'_> {
    fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.types.insert(id, ty);
        self.out.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    fn split_of_value(&self, v: Word) -> Option<Split> {
        self.types.get(&v).and_then(|t| self.splits.get(t)).copied()
    }

    fn is_wide(&self, v: Word) -> bool {
        self.parts.contains_key(&v)
    }

    /// Component count of (narrow or wide) vector type `ty`, 1 for scalars.
    fn width_of(&self, ty: Word) -> u32 {
        if let Some(s) = self.splits.get(&ty) {
            return s.count * 4;
        }
        self.ctx
            .def(ty)
            .filter(|d| d.class.opcode == Op::TypeVector)
            .and_then(|d| lit_operand(d, 1))
            .unwrap_or(1)
    }

    /// Element type of vector `ty` (itself for scalars).
    fn elem_of(&self, ty: Word) -> Word {
        if let Some(s) = self.splits.get(&ty) {
            return s.elem;
        }
        self.ctx
            .def(ty)
            .filter(|d| d.class.opcode == Op::TypeVector)
            .and_then(|d| id_operand(d, 0))
            .unwrap_or(ty)
    }

    /// Component `k` of value `v` (scalar, narrow or wide vector) as a scalar.
    fn component(&mut self, v: Word, k: u32) -> Result<Word, String> {
        let ty = self.types.get(&v).copied().ok_or("value type")?;
        let elem = self.elem_of(ty);
        if let Some(p) = self.parts.get(&v).cloned() {
            let part = *p.get((k / 4) as usize).ok_or("component index")?;
            return Ok(self.emit(
                Op::CompositeExtract,
                elem,
                vec![Operand::IdRef(part), Operand::LiteralBit32(k % 4)],
            ));
        }
        if self.width_of(ty) == 1 {
            return Ok(v);
        }
        Ok(self.emit(
            Op::CompositeExtract,
            elem,
            vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
        ))
    }

    /// Defines the value `rid` of type `ty` from its scalar components.
    fn assemble(&mut self, rid: Word, ty: Word, comps: &[Word]) {
        if let Some(s) = self.splits.get(&ty).copied() {
            let ids = self.parts[&rid].clone();
            for (k, id) in ids.iter().enumerate() {
                let ops = comps[k * 4..k * 4 + 4]
                    .iter()
                    .map(|c| Operand::IdRef(*c))
                    .collect();
                self.types.insert(*id, s.part);
                self.out
                    .push(inst(Op::CompositeConstruct, Some(s.part), Some(*id), ops));
            }
        } else if comps.len() == 1 {
            self.out.push(inst(
                Op::CopyObject,
                Some(ty),
                Some(rid),
                vec![Operand::IdRef(comps[0])],
            ));
        } else {
            let ops = comps.iter().map(|c| Operand::IdRef(*c)).collect();
            self.out
                .push(inst(Op::CompositeConstruct, Some(ty), Some(rid), ops));
        }
    }

    /// The memory operands for part `k` of an access with operands `old`.
    fn part_access(&self, old: &[Operand], part_bytes: u32) -> Vec<Operand> {
        match (old.first(), old.get(1)) {
            (Some(Operand::MemoryAccess(m)), Some(Operand::LiteralBit32(a)))
                if m.contains(MemoryAccess::ALIGNED) =>
            {
                vec![
                    Operand::MemoryAccess(*m),
                    Operand::LiteralBit32((*a).min(part_bytes).max(1)),
                ]
            }
            (Some(m), _) => vec![m.clone()],
            _ => vec![],
        }
    }

    /// Pointers to the parts of the wide vector that `ptr` points to (now an array).
    fn part_ptrs(&mut self, ptr: Word, s: Split) -> Result<Vec<Word>, String> {
        let pty = self.types.get(&ptr).copied().ok_or("pointer type")?;
        let (sc, _) = self.ctx.ptr_info(pty).ok_or("pointer")?;
        let part_ptr = self.ctx.t_ptr(sc, s.part);
        let mut ptrs = Vec::new();
        for k in 0..s.count {
            let c = self.ctx.c_u32(k);
            ptrs.push(self.emit(
                Op::AccessChain,
                part_ptr,
                vec![Operand::IdRef(ptr), Operand::IdRef(c)],
            ));
        }
        Ok(ptrs)
    }

    fn part_bytes(&self, s: Split) -> u32 {
        4 * self.ctx.scalar_width(s.elem).unwrap_or(32) / 8
    }

    /// An access chain that indexes a component of a wide vector (now an array of parts): the
    /// index `i` becomes the pair `i / 4`, `i % 4`.
    fn access_chain(&mut self, mut i: Instruction) -> Result<(), String> {
        let base = id_operand(&i, 0).ok_or("access chain base")?;
        let bt = self
            .types
            .get(&base)
            .copied()
            .ok_or("access chain base type")?;
        let mut cur = self.ctx.ptr_info(bt).ok_or("access chain base pointer")?.1;
        let first = usize::from(matches!(
            i.class.opcode,
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain
        ));
        let mut ops = i.operands[..1 + first].to_vec();
        for o in &i.operands[1 + first..] {
            let Operand::IdRef(idx) = o else {
                ops.push(o.clone());
                continue;
            };
            if let Some(s) = self.splits.values().find(|s| s.array == cur).copied() {
                let it = self.types.get(idx).copied().ok_or("index type")?;
                let (hi, lo) = match self.ctx.def(*idx).and_then(|d| lit_operand(d, 0)) {
                    Some(k)
                        if self
                            .ctx
                            .def(*idx)
                            .is_some_and(|d| d.class.opcode == Op::Constant) =>
                    {
                        (self.ctx.c_u32(k / 4), self.ctx.c_u32(k % 4))
                    }
                    _ => {
                        let wide64 = self.ctx.scalar_width(it) == Some(64);
                        let (two, three) = if wide64 {
                            (self.ctx.c_u64(2), self.ctx.c_u64(3))
                        } else {
                            (self.ctx.c_u32(2), self.ctx.c_u32(3))
                        };
                        let hi = self.emit(
                            Op::ShiftRightLogical,
                            it,
                            vec![Operand::IdRef(*idx), Operand::IdRef(two)],
                        );
                        let lo = self.emit(
                            Op::BitwiseAnd,
                            it,
                            vec![Operand::IdRef(*idx), Operand::IdRef(three)],
                        );
                        (hi, lo)
                    }
                };
                ops.push(Operand::IdRef(hi));
                ops.push(Operand::IdRef(lo));
                cur = s.elem;
                continue;
            }
            ops.push(o.clone());
            let d = self.ctx.def(cur).ok_or("access chain type")?;
            cur = match d.class.opcode {
                Op::TypeStruct => {
                    let k = self
                        .ctx
                        .def(*idx)
                        .and_then(|c| lit_operand(c, 0))
                        .ok_or("struct index")?;
                    id_operand(d, k as usize).ok_or("member type")?
                }
                _ => id_operand(d, 0).ok_or("element type")?,
            };
        }
        i.operands = ops;
        if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
            self.types.insert(r, t);
        }
        self.out.push(i);
        Ok(())
    }

    fn instruction(&mut self, i: Instruction) -> Result<(), String> {
        let rid = i.result_id.unwrap_or(0);
        let result_split = i.result_type.and_then(|t| self.splits.get(&t)).copied();
        let wide_operand = (0..i.operands.len())
            .filter_map(|k| id_operand(&i, k))
            .any(|v| self.is_wide(v));
        if matches!(
            i.class.opcode,
            Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
        ) {
            return self.access_chain(i);
        }
        if result_split.is_none() && !wide_operand {
            if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                self.types.insert(r, t);
            }
            self.out.push(i);
            return Ok(());
        }
        let op = i.class.opcode;
        match op {
            Op::CompositeExtract => {
                let v = id_operand(&i, 0).ok_or("extract operand")?;
                let k = lit_operand(&i, 1).ok_or("extract index")?;
                if i.operands.len() != 2 {
                    return Err(UNSUPPORTED.into());
                }
                let c = self.component(v, k)?;
                let ty = i.result_type.ok_or("type")?;
                self.assemble(rid, ty, &[c]);
            }
            Op::CompositeInsert | Op::CompositeConstruct | Op::VectorShuffle => {
                let ty = i.result_type.ok_or("type")?;
                let n = self.width_of(ty);
                let comps: Vec<Word> = match op {
                    Op::CompositeInsert => {
                        let (obj, v) = (
                            id_operand(&i, 0).ok_or("insert object")?,
                            id_operand(&i, 1).ok_or("insert vector")?,
                        );
                        let k = lit_operand(&i, 2).ok_or("insert index")?;
                        (0..n)
                            .map(|j| {
                                if j == k {
                                    Ok(obj)
                                } else {
                                    self.component(v, j)
                                }
                            })
                            .collect::<Result<_, String>>()?
                    }
                    Op::CompositeConstruct => {
                        let mut comps = Vec::new();
                        for k in 0..i.operands.len() {
                            let c = id_operand(&i, k).ok_or("construct operand")?;
                            let ct = self.types.get(&c).copied().ok_or("constituent type")?;
                            for j in 0..self.width_of(ct) {
                                comps.push(self.component(c, j)?);
                            }
                        }
                        comps
                    }
                    _ => {
                        let (a, b) = (
                            id_operand(&i, 0).ok_or("shuffle operand")?,
                            id_operand(&i, 1).ok_or("shuffle operand")?,
                        );
                        let na = self.width_of(self.types.get(&a).copied().ok_or("type")?);
                        let mut comps = Vec::new();
                        for k in 2..i.operands.len() {
                            let l = lit_operand(&i, k).ok_or("shuffle literal")?;
                            let l = if l == u32::MAX { 0 } else { l };
                            comps.push(if l < na {
                                self.component(a, l)?
                            } else {
                                self.component(b, l - na)?
                            });
                        }
                        comps
                    }
                };
                if comps.len() != n as usize {
                    return Err(UNSUPPORTED.into());
                }
                self.assemble(rid, ty, &comps);
            }
            Op::VectorExtractDynamic | Op::VectorInsertDynamic => {
                let v = id_operand(&i, 0).ok_or("vector operand")?;
                let s = self.split_of_value(v).ok_or(UNSUPPORTED)?;
                let idx = id_operand(&i, if op == Op::VectorInsertDynamic { 2 } else { 1 })
                    .ok_or("index")?;
                let it = self.types.get(&idx).copied().ok_or("index type")?;
                let wide64 = self.ctx.scalar_width(it) == Some(64);
                let c = |l: &mut Self, v: u64| {
                    if wide64 {
                        l.ctx.c_u64(v)
                    } else {
                        l.ctx.c_u32(v as u32)
                    }
                };
                let (three, two) = (c(self, 3), c(self, 2));
                let low = self.emit(
                    Op::BitwiseAnd,
                    it,
                    vec![Operand::IdRef(idx), Operand::IdRef(three)],
                );
                let high = self.emit(
                    Op::ShiftRightLogical,
                    it,
                    vec![Operand::IdRef(idx), Operand::IdRef(two)],
                );
                let bool_t = self.ctx.t_bool();
                let parts = self.parts[&v].clone();
                let mut chosen = Vec::new();
                for k in 0..s.count {
                    let kc = c(self, u64::from(k));
                    chosen.push(self.emit(
                        Op::IEqual,
                        bool_t,
                        vec![Operand::IdRef(high), Operand::IdRef(kc)],
                    ));
                }
                if op == Op::VectorExtractDynamic {
                    let ty = i.result_type.ok_or("type")?;
                    let mut r = self.emit(
                        Op::VectorExtractDynamic,
                        ty,
                        vec![Operand::IdRef(parts[0]), Operand::IdRef(low)],
                    );
                    for k in 1..s.count as usize {
                        let e = self.emit(
                            Op::VectorExtractDynamic,
                            ty,
                            vec![Operand::IdRef(parts[k]), Operand::IdRef(low)],
                        );
                        r = self.emit(
                            Op::Select,
                            ty,
                            vec![
                                Operand::IdRef(chosen[k]),
                                Operand::IdRef(e),
                                Operand::IdRef(r),
                            ],
                        );
                    }
                    self.assemble(rid, ty, &[r]);
                } else {
                    let comp = id_operand(&i, 1).ok_or("insert component")?;
                    let ids = self.parts[&rid].clone();
                    for k in 0..s.count as usize {
                        let ins = self.emit(
                            Op::VectorInsertDynamic,
                            s.part,
                            vec![
                                Operand::IdRef(parts[k]),
                                Operand::IdRef(comp),
                                Operand::IdRef(low),
                            ],
                        );
                        self.types.insert(ids[k], s.part);
                        self.out.push(inst(
                            Op::Select,
                            Some(s.part),
                            Some(ids[k]),
                            vec![
                                Operand::IdRef(chosen[k]),
                                Operand::IdRef(ins),
                                Operand::IdRef(parts[k]),
                            ],
                        ));
                    }
                }
            }
            Op::Any | Op::All => {
                let v = id_operand(&i, 0).ok_or("operand")?;
                let ty = i.result_type.ok_or("type")?;
                let parts = self.parts[&v].clone();
                let mut r = self.emit(op, ty, vec![Operand::IdRef(parts[0])]);
                for p in &parts[1..] {
                    let x = self.emit(op, ty, vec![Operand::IdRef(*p)]);
                    let join = if op == Op::Any {
                        Op::LogicalOr
                    } else {
                        Op::LogicalAnd
                    };
                    r = self.emit(join, ty, vec![Operand::IdRef(r), Operand::IdRef(x)]);
                }
                self.assemble(rid, ty, &[r]);
            }
            Op::Load => {
                let s = result_split.ok_or(UNSUPPORTED)?;
                let ptr = id_operand(&i, 0).ok_or("load pointer")?;
                let ptrs = self.part_ptrs(ptr, s)?;
                let access = self.part_access(&i.operands[1..], self.part_bytes(s));
                let ids = self.parts[&rid].clone();
                for (p, id) in ptrs.iter().zip(ids) {
                    self.types.insert(id, s.part);
                    self.out.push(inst(
                        Op::Load,
                        Some(s.part),
                        Some(id),
                        [vec![Operand::IdRef(*p)], access.clone()].concat(),
                    ));
                }
            }
            Op::Store => {
                let (ptr, v) = (
                    id_operand(&i, 0).ok_or("store pointer")?,
                    id_operand(&i, 1).ok_or("store value")?,
                );
                let s = self.split_of_value(v).ok_or(UNSUPPORTED)?;
                let ptrs = self.part_ptrs(ptr, s)?;
                let access = self.part_access(&i.operands[2..], self.part_bytes(s));
                let parts = self.parts[&v].clone();
                for (p, x) in ptrs.iter().zip(parts) {
                    self.out.push(inst(
                        Op::Store,
                        None,
                        None,
                        [vec![Operand::IdRef(*p), Operand::IdRef(x)], access.clone()].concat(),
                    ));
                }
            }
            // Everything else with a wide result is elementwise: once per part, wide operands
            // replaced by their parts, scalar ones kept.
            _ => {
                let s = result_split.ok_or(UNSUPPORTED)?;
                let ids = self.parts[&rid].clone();
                for (k, id) in ids.iter().enumerate() {
                    let mut ops = Vec::with_capacity(i.operands.len());
                    for o in &i.operands {
                        ops.push(match o {
                            Operand::IdRef(v) if self.is_wide(*v) => {
                                Operand::IdRef(self.parts[v][k])
                            }
                            Operand::IdRef(v) => {
                                let t = self.types.get(v).copied();
                                if t.is_some_and(|t| self.width_of(t) > 1) {
                                    return Err(format!("{UNSUPPORTED}: {op:?} mixes widths"));
                                }
                                o.clone()
                            }
                            _ => o.clone(),
                        });
                    }
                    self.types.insert(*id, s.part);
                    self.out.push(inst(op, Some(s.part), Some(*id), ops));
                }
            }
        }
        Ok(())
    }
}

/// Splits the kernel's 8- and 16-component vectors (see the module documentation).
///
/// # Errors
/// For wide vectors in private or local variables, struct values, and casts between wide and
/// narrow vectors of different element sizes.
pub(crate) fn split_wide_vectors(ctx: &mut Ctx) -> Result<(), String> {
    let wide: Vec<(Word, Word, u32)> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeVector)
        .filter_map(|i| Some((i.result_id?, id_operand(i, 0)?, lit_operand(i, 1)?)))
        .filter(|(_, _, n)| *n > 4)
        .collect();
    if wide.is_empty() {
        return Ok(());
    }
    let mut splits = HashMap::new();
    for (ty, elem, n) in &wide {
        let part = ctx.t_vec(*elem, 4);
        let count = n / 4;
        let is_bool = ctx
            .def(*elem)
            .is_some_and(|d| d.class.opcode == Op::TypeBool);
        let array = if is_bool {
            0
        } else {
            let len = ctx.c_u32(count);
            // A fresh array type: add_layout gives it its ArrayStride.
            let id = ctx.id();
            ctx.module.types_global_values.push(inst(
                Op::TypeArray,
                None,
                Some(id),
                vec![Operand::IdRef(part), Operand::IdRef(len)],
            ));
            id
        };
        splits.insert(
            *ty,
            Split {
                part,
                elem: *elem,
                count,
                array,
            },
        );
    }
    // Memory types: a wide vector becomes the array of its parts.
    for i in &mut ctx.module.types_global_values {
        if matches!(
            i.class.opcode,
            Op::TypePointer | Op::TypeStruct | Op::TypeArray | Op::TypeRuntimeArray
        ) {
            for o in &mut i.operands {
                if let Operand::IdRef(t) = o {
                    if let Some(s) = splits.get(t) {
                        if s.array != 0 {
                            *t = s.array;
                        }
                    }
                }
            }
        }
    }
    let mut types = ctx.value_types();
    // Constants of wide types become constants of their parts.
    let mut parts: HashMap<Word, Vec<Word>> = HashMap::new();
    let constants: Vec<Instruction> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.result_type.is_some_and(|t| splits.contains_key(&t)))
        .cloned()
        .collect();
    for c in constants {
        let (Some(ty), Some(id)) = (c.result_type, c.result_id) else {
            continue;
        };
        let s = splits[&ty];
        let mut ids = Vec::new();
        for k in 0..s.count as usize {
            let ops = match c.class.opcode {
                Op::ConstantComposite => c.operands[k * 4..k * 4 + 4].to_vec(),
                Op::ConstantNull | Op::Undef => vec![],
                _ => return Err(format!("{UNSUPPORTED}: {:?} constant", c.class.opcode)),
            };
            let pid = ctx.global(c.class.opcode, Some(s.part), ops);
            types.insert(pid, s.part);
            ids.push(pid);
        }
        parts.insert(id, ids);
    }
    // Every wide value of the function gets its part ids up front (phis refer forward).
    let wide_values: Vec<(Word, u32)> = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter_map(|i| Some((i.result_id?, splits.get(&i.result_type?)?.count)))
        .collect();
    for (r, count) in wide_values {
        let ids = (0..count).map(|_| ctx.id()).collect();
        parts.insert(r, ids);
    }
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut l = Lower {
        ctx,
        splits: splits.clone(),
        parts,
        types,
        out: Vec::new(),
    };
    let mut new_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        for i in std::mem::take(&mut b.instructions) {
            l.instruction(i)?;
        }
        b.instructions = std::mem::take(&mut l.out);
        new_blocks.push(b);
    }
    ctx.module.functions[0].blocks = new_blocks;
    // The wide types and their constants are gone.
    ctx.module.types_global_values.retain(|i| {
        !i.result_id.is_some_and(|r| splits.contains_key(&r))
            && !i.result_type.is_some_and(|t| splits.contains_key(&t))
    });
    Ok(())
}
