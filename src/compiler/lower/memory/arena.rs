//! Arenas: one byte-addressed home for the private (or the `__local`) variables whose
//! pointers meet.
//!
//! A flat pointer ([`super::flat`]) is a variable and a byte offset; the variable is fixed
//! at compile time. C lets a pointer into private or local memory be chosen at run time
//! among variables: `p = c ? a : b`, a pointer switched from one array to another in a loop,
//! a pointer kept in a private struct and loaded back, pointers compared or subtracted,
//! converted to an integer and back. Such variables get one address space: an *arena* per
//! kind of memory, a word array holding each of them at an aligned offset, so that any
//! pointer into them is an offset into the arena and every one of those forms is integer
//! arithmetic on offsets.
//!
//! - Two arenas at most per kernel: one per work-item (the `Function` variables of the
//!   kernel body and the module-scope `Private` ones, LLVM's private globals and program
//!   `__constant` data, which are per-work-item copies in Vulkan too; a `Function` variable
//!   when every member is one, else a `Private` one) and one per work-group (`Workgroup`:
//!   `__local` variables and `__local` arguments). Each work-item has its own work-item arena
//!   and each work-group its own local arena, as each had its own variables.
//! - A flat variable joins its kind's arena when one of its pointers meets a pointer that
//!   may point elsewhere: a phi or select with a pointer into another variable (or NULL, or
//!   one loaded from memory or made from an integer), a comparison or difference with one,
//!   or when it leaves the typed world as a value: stored to memory (`OpStore` of the
//!   pointer) or converted to an integer (`OpConvertPtrToU`). The other flat variables keep
//!   their own arrays, and typed variables stay typed: the drivers keep small private
//!   arrays with static indices in registers, which one arena indexed at run time would
//!   defeat for every variable of the kernel. Merging *all* flattened variables would be
//!   simpler, but the flat variables that never meet another (8-bit views, partial memcpy)
//!   gain nothing from it; merging each set of variables that meet into its own arena
//!   instead would not serve a pointer loaded from memory or made from an integer, which
//!   may point into any variable whose pointer was stored or converted: one arena per kind
//!   is the set those pointers need.
//! - Layout: offset 0 is never an object (it is NULL: a `NULL` constant of a private or
//!   local pointer type is offset 0 of the arena, so `p == NULL` and `if (p)` work), then
//!   the members in declaration order, each at a multiple of its alignment (the larger of
//!   its OpenCL C alignment, its `Alignment` decoration and 4, so that word accesses stay
//!   whole words). `__local` arguments, whose size is a specialization constant, come last,
//!   their offsets spec-constant expressions.
//! - A pointer as a value (stored in memory, `(uintptr_t)p`) is its arena offset,
//!   zero-extended: an integer cast back (`OpConvertUToPtr`), or a pointer loaded back from
//!   memory, is that offset into the arena of the pointer type's kind. Pointer order and
//!   differences are those of the offsets, so they hold within an arena as in C within an
//!   object, and stay consistent across its members.
//!
//! A pointer that may point into private *or* local memory (or global memory) at run time
//! needs a generic address space resolved at run time; vkcl does not claim
//! `__opencl_c_generic_address_space`, and such pointers (from SPIR-V IL) fail with an
//! error. Generic pointers that only ever come from one kind of memory are the flat
//! pointers they were cast from.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Block, Instruction, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::flat::{kind_of, Flat};
use super::Walk;
use crate::compiler::spv::{id_operand, inst};

/// The arenas of one lowering attempt.
pub(super) struct Arenas {
    /// Per kind: the arena variable's id (also the root key of pointers into the arena).
    pub keys: [Word; 2],
    /// Member variable -> kind.
    pub members: HashMap<Word, usize>,
}

impl Arenas {
    /// The kind whose arena `key` is.
    pub fn kind_of_key(&self, key: Word) -> Option<usize> {
        self.keys.iter().position(|k| *k == key)
    }

    /// Whether kind `k` has an arena (any member).
    pub fn used(&self, k: usize) -> bool {
        self.members.values().any(|m| *m == k)
    }
}

/// Storage class of the logical pointer type `ty` (Function, Private, Workgroup), if it is one.
fn logical_sc(ctx: &super::Ctx, ty: Word) -> Option<StorageClass> {
    ctx.ptr_info(ty)
        .map(|p| p.0)
        .filter(|sc| kind_of(*sc).is_some())
}

/// Pointers derived from the flat variables `roots` in `blocks` (chains, casts, copies,
/// phis, selects), each with its root; `seeds` are further pointers with their roots
/// (pointers loaded from memory, made from integers, NULL constants: their kind's arena).
fn derived_pointers(
    blocks: &[Block],
    roots: &HashSet<Word>,
    seeds: &HashMap<Word, Word>,
) -> HashMap<Word, Word> {
    let mut m: HashMap<Word, Word> = roots.iter().map(|r| (*r, *r)).collect();
    m.extend(seeds.iter().map(|(p, r)| (*p, *r)));
    loop {
        let before = m.len();
        for i in blocks.iter().flat_map(|b| b.instructions.iter()) {
            let Some(rid) = i.result_id else { continue };
            if m.contains_key(&rid) {
                continue;
            }
            let src = match i.class.opcode {
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
                | Op::Bitcast
                | Op::CopyObject
                | Op::PtrCastToGeneric
                | Op::GenericCastToPtr
                | Op::GenericCastToPtrExplicit => id_operand(i, 0).and_then(|p| m.get(&p).copied()),
                Op::Phi => i.operands.iter().step_by(2).find_map(|o| match o {
                    Operand::IdRef(v) => m.get(v).copied(),
                    _ => None,
                }),
                Op::Select => id_operand(i, 1)
                    .and_then(|p| m.get(&p).copied())
                    .or_else(|| id_operand(i, 2).and_then(|p| m.get(&p).copied())),
                _ => None,
            };
            if let Some(r) = src {
                m.insert(rid, r);
            }
        }
        if m.len() == before {
            return m;
        }
    }
}

/// Decides the arenas for the flat variables `flat_roots` of `blocks`: which variables join
/// (see the module doc), and every flat pointer's root (a member's pointers have their
/// arena's key as root). `keys`: fresh ids for the two arena variables.
pub(super) fn plan(
    ctx: &super::Ctx,
    blocks: &[Block],
    flat_roots: &HashSet<Word>,
    keys: [Word; 2],
) -> (HashMap<Word, Word>, Arenas) {
    // Pointers that may point into any member of their kind's arena.
    let mut seeds = HashMap::new();
    for i in blocks.iter().flat_map(|b| b.instructions.iter()) {
        if matches!(i.class.opcode, Op::Load | Op::ConvertUToPtr) {
            let k = i
                .result_type
                .and_then(|t| logical_sc(ctx, t))
                .and_then(kind_of);
            if let (Some(k), Some(r)) = (k, i.result_id) {
                seeds.insert(r, keys[k]);
            }
        }
    }
    for g in &ctx.module.types_global_values {
        if g.class.opcode == Op::ConstantNull {
            let k = g
                .result_type
                .and_then(|t| logical_sc(ctx, t))
                .and_then(kind_of);
            if let (Some(k), Some(r)) = (k, g.result_id) {
                seeds.insert(r, keys[k]);
            }
        }
    }
    let raw = derived_pointers(blocks, flat_roots, &seeds);
    let root_of = |v: Word| raw.get(&v).copied();
    let mut joined: HashSet<Word> = HashSet::new();
    let meet = |joined: &mut HashSet<Word>, ops: &[Word]| {
        let rs: HashSet<Word> = ops.iter().filter_map(|v| root_of(*v)).collect();
        if rs.len() > 1 {
            joined.extend(rs.into_iter().filter(|r| flat_roots.contains(r)));
        }
    };
    for i in blocks.iter().flat_map(|b| b.instructions.iter()) {
        match i.class.opcode {
            Op::Phi => {
                let ops: Vec<Word> = i
                    .operands
                    .iter()
                    .step_by(2)
                    .filter_map(|o| match o {
                        Operand::IdRef(v) => Some(*v),
                        _ => None,
                    })
                    .collect();
                meet(&mut joined, &ops);
            }
            Op::Select => {
                let ops: Vec<Word> = (1..3).filter_map(|k| id_operand(i, k)).collect();
                meet(&mut joined, &ops);
            }
            Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff => {
                let ops: Vec<Word> = (0..2).filter_map(|k| id_operand(i, k)).collect();
                meet(&mut joined, &ops);
            }
            Op::Store | Op::ConvertPtrToU => {
                let k = if i.class.opcode == Op::Store { 1 } else { 0 };
                if let Some(r) = id_operand(i, k).and_then(root_of) {
                    if flat_roots.contains(&r) {
                        joined.insert(r);
                    }
                }
            }
            _ => {}
        }
    }
    // The kind of each joining variable (a Function variable in the entry block, or a
    // module-scope one).
    let mut members = HashMap::new();
    let var_sc = |i: &Instruction| match i.operands.first() {
        Some(Operand::StorageClass(sc)) => Some(*sc),
        _ => None,
    };
    let vars = blocks
        .first()
        .into_iter()
        .flat_map(|b| b.instructions.iter())
        .chain(ctx.module.types_global_values.iter())
        .filter(|i| i.class.opcode == Op::Variable);
    for v in vars {
        if let (Some(r), Some(k)) = (v.result_id, var_sc(v).and_then(kind_of)) {
            if joined.contains(&r) {
                members.insert(r, k);
            }
        }
    }
    let derived = raw
        .into_iter()
        .map(|(p, r)| match members.get(&r) {
            Some(k) => (p, keys[*k]),
            None => (p, r),
        })
        .collect();
    (derived, Arenas { keys, members })
}

/// The private and local variables the typed form is sure to fail on (see the module doc):
/// those whose pointers reach a phi, a select, a pointer comparison or difference, are
/// stored to memory (with the variable stored into), or converted to integers where an
/// integer is converted back. [`super::lower_memory`] flattens them before its first
/// attempt instead of finding them one failing instruction at a time (each finding costs a
/// lowering of the whole kernel).
pub(super) fn predicted_flat_roots(ctx: &super::Ctx, blocks: &[Block]) -> HashSet<Word> {
    let is_logical_var = |i: &Instruction| {
        i.class.opcode == Op::Variable
            && matches!(i.operands.first(), Some(Operand::StorageClass(sc)) if kind_of(*sc).is_some())
    };
    let roots: HashSet<Word> = blocks
        .first()
        .into_iter()
        .flat_map(|b| b.instructions.iter())
        .chain(ctx.module.types_global_values.iter())
        .filter(|i| is_logical_var(i))
        .filter_map(|i| i.result_id)
        .collect();
    let raw = derived_pointers(blocks, &roots, &HashMap::new());
    let int_to_ptr = blocks.iter().flat_map(|b| b.instructions.iter()).any(|i| {
        i.class.opcode == Op::ConvertUToPtr
            && i.result_type.and_then(|t| logical_sc(ctx, t)).is_some()
    });
    let mut out = HashSet::new();
    let mut add = |v: Option<Word>| {
        if let Some(r) = v.and_then(|v| raw.get(&v)) {
            out.insert(*r);
        }
    };
    for i in blocks.iter().flat_map(|b| b.instructions.iter()) {
        match i.class.opcode {
            Op::Phi if i.result_id.is_some_and(|r| raw.contains_key(&r)) => {
                for o in i.operands.iter().step_by(2) {
                    if let Operand::IdRef(v) = o {
                        add(Some(*v));
                    }
                }
            }
            Op::Select if i.result_id.is_some_and(|r| raw.contains_key(&r)) => {
                add(id_operand(i, 1));
                add(id_operand(i, 2));
            }
            Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff => {
                add(id_operand(i, 0));
                add(id_operand(i, 1));
            }
            Op::Store if id_operand(i, 1).is_some_and(|v| raw.contains_key(&v)) => {
                add(id_operand(i, 0));
                add(id_operand(i, 1));
            }
            Op::Load if i.result_type.and_then(|t| logical_sc(ctx, t)).is_some() => {
                add(id_operand(i, 0));
            }
            Op::ConvertPtrToU if int_to_ptr => add(id_operand(i, 0)),
            _ => {}
        }
    }
    out
}

/// The size of one member: bytes, or a spec-constant `uint` id (`__local` arguments).
#[derive(Clone, Copy)]
enum Size {
    Bytes(u64),
    Spec(Word),
}

/// One member as laid out.
struct Member {
    var: Word,
    pointee: Word,
    size: Size,
    align: u64,
    init: Option<Word>,
    module_scope: bool,
}

impl Walk<'_> {
    /// `x` rounded up to a multiple of `a`, as a spec-constant expression.
    fn spec_align_up(&mut self, x: Word, a: u64) -> Word {
        if a <= 1 {
            return x;
        }
        let (k1, ka) = (self.ctx.c_u32(a as u32 - 1), self.ctx.c_u32(a as u32));
        let up = self.spec_op(Op::IAdd, x, k1);
        let q = self.spec_op(Op::UDiv, up, ka);
        self.spec_op(Op::IMul, q, ka)
    }

    /// Member `var` (an `OpVariable`): its pointee, size, alignment and initializer.
    fn arena_member(&self, v: &Instruction, module_scope: bool) -> Result<Member, String> {
        let var = v.result_id.ok_or("variable id")?;
        let pointee = v
            .result_type
            .and_then(|t| self.ctx.ptr_info(t))
            .map(|p| p.1)
            .ok_or("variable type")?;
        let decorated = crate::compiler::spv::decorations_of(&self.ctx.module, var)
            .iter()
            .find_map(|d| match (d.operands.get(1), d.operands.get(2)) {
                (
                    Some(Operand::Decoration(Decoration::Alignment)),
                    Some(Operand::LiteralBit32(a)),
                ) => Some(u64::from(*a)),
                _ => None,
            })
            .unwrap_or(1);
        let d = self.ctx.def(pointee).ok_or("variable type")?;
        let spec_len = (d.class.opcode == Op::TypeArray)
            .then(|| id_operand(d, 1))
            .flatten()
            .filter(|l| {
                self.ctx
                    .def(*l)
                    .is_some_and(|c| c.class.opcode == Op::SpecConstant)
            });
        let (size, natural) = match spec_len {
            Some(len) => {
                let elem = id_operand(d, 0).ok_or("element type")?;
                (Size::Spec(len), u64::from(self.natural_align(elem)))
            }
            None => (
                Size::Bytes(self.layout_size(pointee)?),
                u64::from(self.natural_align(pointee)),
            ),
        };
        Ok(Member {
            var,
            pointee,
            size,
            align: natural.max(decorated).max(4),
            init: id_operand(v, 1),
            module_scope,
        })
    }

    /// Creates the arena variables of `arenas` and registers their members and NULL
    /// constants as flat pointers; removes the module-scope members. Returns the
    /// `Function`-scope arena variable to put at the top of the entry block, if any.
    pub(super) fn build_arenas(
        &mut self,
        arenas: &Arenas,
        entry: Option<&Block>,
    ) -> Result<Option<Instruction>, String> {
        let mut function_arena = None;
        for kind in 0..2 {
            if !arenas.used(kind) {
                continue;
            }
            let key = arenas.keys[kind];
            let mut members = Vec::new();
            for g in &self.ctx.module.types_global_values {
                if g.class.opcode == Op::Variable
                    && g.result_id.and_then(|r| arenas.members.get(&r)) == Some(&kind)
                {
                    members.push(self.arena_member(g, true)?);
                }
            }
            for v in entry.into_iter().flat_map(|b| b.instructions.iter()) {
                if v.class.opcode == Op::Variable
                    && v.result_id.and_then(|r| arenas.members.get(&r)) == Some(&kind)
                {
                    members.push(self.arena_member(v, false)?);
                }
            }
            // Spec-constant sizes last: the offsets before them stay constants.
            members.sort_by_key(|m| matches!(m.size, Size::Spec(_)));
            let sc = match kind {
                1 => StorageClass::Workgroup,
                _ if members.iter().any(|m| m.module_scope) => StorageClass::Private,
                _ => StorageClass::Function,
            };
            // Offset 0 is NULL.
            let mut at = 1u64;
            let mut spec_at: Option<Word> = None;
            let mut bytes: Vec<u8> = Vec::new();
            let mut any_init = false;
            let mut bases = Vec::new();
            for m in &members {
                let base = match spec_at {
                    None => {
                        at = at.div_ceil(m.align) * m.align;
                        self.ctx.c_u32(u32::try_from(at).map_err(|_| ARENA_SIZE)?)
                    }
                    Some(s) => self.spec_align_up(s, m.align),
                };
                bases.push(base);
                match (m.size, spec_at) {
                    (Size::Bytes(n), None) => {
                        if let Some(init) = m.init {
                            bytes.resize(at as usize + n as usize, 0);
                            self.constant_bytes(init, at, &mut bytes)?;
                            any_init = true;
                        }
                        at += n;
                    }
                    (Size::Bytes(n), Some(_)) => {
                        let k = self.ctx.c_u32(n as u32);
                        spec_at = Some(self.spec_op(Op::IAdd, base, k));
                    }
                    (Size::Spec(len), _) => {
                        let d = self.ctx.def(m.pointee).ok_or("variable type")?;
                        let elem = id_operand(d, 0).ok_or("element type")?;
                        let es = self.layout_size(elem)?;
                        let k = self.ctx.c_u32(es as u32);
                        let n = self.spec_op(Op::IMul, len, k);
                        spec_at = Some(self.spec_op(Op::IAdd, base, n));
                    }
                }
            }
            if at > u64::from(u32::MAX) {
                return Err(ARENA_SIZE.into());
            }
            let u = self.ctx.t_int(32);
            let words = match spec_at {
                None => self.ctx.c_u32(at.div_ceil(4) as u32),
                Some(s) => {
                    let k3 = self.ctx.c_u32(3);
                    let k4 = self.ctx.c_u32(4);
                    let up = self.spec_op(Op::IAdd, s, k3);
                    self.spec_op(Op::UDiv, up, k4)
                }
            };
            let arr = if spec_at.is_some() {
                let id = self.ctx.id();
                self.ctx.module.types_global_values.push(inst(
                    Op::TypeArray,
                    None,
                    Some(id),
                    vec![Operand::IdRef(u), Operand::IdRef(words)],
                ));
                id
            } else {
                self.ctx.global(
                    Op::TypeArray,
                    None,
                    vec![Operand::IdRef(u), Operand::IdRef(words)],
                )
            };
            let pt = self.ctx.t_ptr(sc, arr);
            let mut ops = vec![Operand::StorageClass(sc)];
            if any_init {
                bytes.resize(at.div_ceil(4) as usize * 4, 0);
                let ws: Vec<Operand> = bytes
                    .chunks(4)
                    .map(|c| {
                        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                        Operand::IdRef(self.ctx.c_u32(w))
                    })
                    .collect();
                ops.push(Operand::IdRef(self.ctx.global(
                    Op::ConstantComposite,
                    Some(arr),
                    ws,
                )));
            }
            tracing::debug!(
                kind = if kind == 0 { "work-item" } else { "work-group" },
                members = members.len(),
                bytes = at,
                spec_sized = spec_at.is_some(),
                "private/local arena"
            );
            let var = inst(Op::Variable, Some(pt), Some(key), ops);
            self.types.insert(key, pt);
            if sc == StorageClass::Function {
                function_arena = Some(var);
            } else {
                self.ctx.module.types_global_values.push(var);
            }
            let zero = self.ctx.c_u32(0);
            self.flat.insert(
                key,
                Flat {
                    var: key,
                    sc,
                    off: zero,
                    pointee: u,
                },
            );
            for (m, base) in members.iter().zip(bases) {
                self.flat.insert(
                    m.var,
                    Flat {
                        var: key,
                        sc,
                        off: base,
                        pointee: m.pointee,
                    },
                );
            }
            let module_members: HashSet<Word> = members
                .iter()
                .filter(|m| m.module_scope)
                .map(|m| m.var)
                .collect();
            self.ctx
                .module
                .types_global_values
                .retain(|g| !g.result_id.is_some_and(|r| module_members.contains(&r)));
            // NULL pointers of this kind: offset 0.
            let nulls: Vec<(Word, Word)> = self
                .ctx
                .module
                .types_global_values
                .iter()
                .filter(|g| g.class.opcode == Op::ConstantNull)
                .filter_map(|g| Some((g.result_id?, g.result_type?)))
                .filter_map(|(id, t)| {
                    let (s, p) = self.ctx.ptr_info(t)?;
                    (kind_of(s) == Some(kind)).then_some((id, p))
                })
                .collect();
            for (id, pointee) in nulls {
                self.flat.insert(
                    id,
                    Flat {
                        var: key,
                        sc,
                        off: zero,
                        pointee,
                    },
                );
            }
        }
        Ok(function_arena)
    }

    /// Whether `var` is one of the arena variables (pointers into it are offsets of the
    /// arena's address space, see the module doc).
    pub(super) fn is_arena(&self, var: Word) -> bool {
        self.arenas
            .as_ref()
            .is_some_and(|a| a.kind_of_key(var).is_some())
    }

    /// The flat pointer at offset `off` (a `uint` id) into the arena of pointer type `ty`'s
    /// kind, pointing to `ty`'s pointee.
    pub(super) fn arena_pointer(&self, ty: Word, off: Word) -> Result<Flat, String> {
        let (sc, pointee) = self.ctx.ptr_info(ty).ok_or("pointer type")?;
        let kind = kind_of(sc).ok_or("a private or local pointer type")?;
        let key = self
            .arenas
            .as_ref()
            .filter(|a| a.used(kind))
            .map(|a| a.keys[kind])
            .ok_or(
                "a private or local pointer loaded from memory or made from an integer, where no \
                 such pointer was stored or converted, is not supported",
            )?;
        let base = self.flat.get(&key).copied().ok_or("arena")?;
        Ok(Flat {
            off,
            pointee,
            ..base
        })
    }
}

const ARENA_SIZE: &str = "private or local variables of more than 4 GiB";
