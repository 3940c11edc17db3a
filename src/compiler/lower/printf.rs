//! `printf` (`OpenCL.std` 184) -> a record in the launch's printf buffer (kernel ABI, "Printf
//! buffer" in the `compiler` module doc). Runs after [`super::entry`] (it reads the launch
//! header through the push constants) and before [`super::memory`] and [`super::widevec`]
//! (its vector extracts and atomic go through them like the kernel's own).
//!
//! Each call reserves `record_bytes` with one `OpAtomicIAdd` on the buffer's counter and
//! stores its words there, or, when the record does not fit in the capacity, into the
//! buffer's overflow slot (never read): no branch is needed, so the structured CFG stays as it
//! is. The call returns 0, or -1 when the record did not fit. The format string and every `%s`
//! argument must be constant strings known at compile time (program-scope `__constant` data
//! or string literals); they go to the reflection data, not to the device.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{MemoryAccess, Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::printf::{conversions, PrintfArg, PrintfCall, PrintfInfo};
use crate::compiler::spv::{id_operand, inst, lit_operand, used_ids, Defs};

/// `OpenCL.std` number of printf.
const PRINTF: u32 = 184;
/// Offset of the printf buffer address in the launch header, bytes.
const HEADER_PRINTF: u64 = 80;
/// Offset of the first record in the printf buffer, bytes (after counter and capacity).
pub(crate) const RECORDS_OFFSET: u64 = 8;

struct Pass<'c> {
    ctx: &'c mut Ctx,
    /// Function-local definitions by result id.
    local: HashMap<Word, Instruction>,
    /// Global definitions as the pass found them (the constants of access-chain indices).
    defs: Defs,
    types: HashMap<Word, Word>,
    pc_var: Word,
    info: PrintfInfo,
    out: Vec<Instruction>,
    /// Phis to add right after an existing phi (its id): call or string ids chosen by the
    /// same control flow as the format or string pointer the existing phi chooses.
    phis: Vec<(Word, Instruction)>,
}

impl Pass<'_> {
    fn op(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.out.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    fn def(&self, id: Word) -> Option<&Instruction> {
        self.local.get(&id).or_else(|| self.ctx.def(id))
    }

    /// Follows pointer casts and access chains back to a variable: (variable, byte offset
    /// into it when every index is a constant into a byte array).
    fn root(&self, mut p: Word) -> Option<(Word, Option<u64>)> {
        let mut offset = Some(0u64);
        let defs = &self.defs;
        for _ in 0..64 {
            let d = self.def(p)?;
            match d.class.opcode {
                Op::Variable => return Some((p, offset)),
                Op::Bitcast
                | Op::CopyObject
                | Op::PtrCastToGeneric
                | Op::GenericCastToPtr
                | Op::GenericCastToPtrExplicit => p = id_operand(d, 0)?,
                Op::InBoundsPtrAccessChain
                | Op::PtrAccessChain
                | Op::AccessChain
                | Op::InBoundsAccessChain => {
                    // Strings are byte arrays: every index counts bytes, except the element
                    // index of a pointer to a whole array, which is almost always 0.
                    let n: u64 = (1..d.operands.len())
                        .map(|k| id_operand(d, k).and_then(|c| defs.const_u64(c)))
                        .try_fold(0u64, |acc, v| v.map(|v| acc + v))
                        .unwrap_or(u64::MAX);
                    offset = offset.and_then(|o| (n != u64::MAX).then_some(o + n));
                    p = id_operand(d, 0)?;
                }
                _ => return None,
            }
        }
        None
    }

    /// The NUL-terminated string that pointer `p` points to, when it is constant data.
    fn const_string(&self, p: Word) -> Option<String> {
        let (var, offset) = self.root(p)?;
        let v = self.ctx.def(var)?;
        let init = id_operand(v, 1)?;
        let bytes = self.const_bytes(init)?;
        let start = usize::try_from(offset?).ok()?;
        let tail = bytes.get(start..)?;
        let end = tail.iter().position(|b| *b == 0).unwrap_or(tail.len());
        Some(String::from_utf8_lossy(&tail[..end]).into_owned())
    }

    fn const_bytes(&self, id: Word) -> Option<Vec<u8>> {
        let d = self.ctx.def(id)?;
        match d.class.opcode {
            Op::ConstantComposite => {
                let mut v = Vec::new();
                for k in 0..d.operands.len() {
                    let c = self.ctx.def(id_operand(d, k)?)?;
                    match (c.class.opcode, c.operands.first()) {
                        (Op::Constant, Some(Operand::LiteralBit32(b))) => v.push(*b as u8),
                        (Op::ConstantNull, _) => v.push(0),
                        _ => return None,
                    }
                }
                Some(v)
            }
            Op::ConstantNull => Some(vec![0]),
            _ => None,
        }
    }

    /// Index of string `s` in the reflection data.
    fn string_id(&mut self, s: String) -> u32 {
        if let Some(k) = self.info.strings.iter().position(|x| *x == s) {
            return k as u32;
        }
        self.info.strings.push(s);
        (self.info.strings.len() - 1) as u32
    }

    /// The constant strings pointer `p` may point to: one constant, or the choices of
    /// `OpSelect`s and `OpPhi`s between constants (LLVM merges `if (c) printf("a"); else
    /// printf("b");` into one call on a select or phi of the formats).
    fn leaves(&self, p: Word, out: &mut Vec<String>, depth: u32) -> Option<()> {
        if let Some(s) = self.const_string(p) {
            if !out.contains(&s) {
                out.push(s);
            }
            return Some(());
        }
        let d = self.def(p)?;
        match d.class.opcode {
            Op::Select if depth < 16 => {
                let (a, b) = (id_operand(d, 1)?, id_operand(d, 2)?);
                self.leaves(a, out, depth + 1)?;
                self.leaves(b, out, depth + 1)
            }
            Op::Phi => {
                for k in (0..d.operands.len()).step_by(2) {
                    let s = self.const_string(id_operand(d, k)?)?;
                    if !out.contains(&s) {
                        out.push(s);
                    }
                }
                Some(())
            }
            _ => None,
        }
    }

    /// The `u32` word that follows pointer `p` through the choices [`leaves`](Self::leaves)
    /// found, with each constant string replaced by `ids[string]`: a constant, `OpSelect`s
    /// emitted here, or an `OpPhi` added beside the pointer's phi.
    fn choice_word(&mut self, p: Word, ids: &HashMap<String, u32>) -> Option<Word> {
        if let Some(s) = self.const_string(p) {
            return Some(self.ctx.c_u32(*ids.get(&s)?));
        }
        let d = self.def(p)?.clone();
        let u32t = self.ctx.t_int(32);
        match d.class.opcode {
            Op::Select => {
                let c = id_operand(&d, 0)?;
                let a = self.choice_word(id_operand(&d, 1)?, ids)?;
                let b = self.choice_word(id_operand(&d, 2)?, ids)?;
                Some(self.op(
                    Op::Select,
                    u32t,
                    vec![Operand::IdRef(c), Operand::IdRef(a), Operand::IdRef(b)],
                ))
            }
            Op::Phi => {
                let mut ops = Vec::new();
                for k in (0..d.operands.len()).step_by(2) {
                    let s = self.const_string(id_operand(&d, k)?)?;
                    ops.push(Operand::IdRef(self.ctx.c_u32(*ids.get(&s)?)));
                    ops.push(Operand::IdRef(id_operand(&d, k + 1)?));
                }
                let id = self.ctx.id();
                self.phis
                    .push((p, inst(Op::Phi, Some(u32t), Some(id), ops)));
                Some(id)
            }
            _ => None,
        }
    }

    /// The string-table word for a `%s` argument (constant strings, or choices between them).
    fn string_word(&mut self, p: Word) -> Option<Word> {
        let mut leaves = Vec::new();
        self.leaves(p, &mut leaves, 0)?;
        let ids = leaves
            .into_iter()
            .map(|s| (s.clone(), self.string_id(s)))
            .collect();
        self.choice_word(p, &ids)
    }

    /// The words of scalar `v`, `bits` wide, a float when `float` (1 or 2 `u32`s).
    fn scalar_words(&mut self, v: Word, float: bool, bits: u32) -> Vec<Word> {
        let u32t = self.ctx.t_int(32);
        let it = self.ctx.t_int(bits);
        let as_int = if float {
            self.op(Op::Bitcast, it, vec![Operand::IdRef(v)])
        } else {
            v
        };
        match bits {
            32 => vec![as_int],
            64 => {
                let lo = self.op(Op::UConvert, u32t, vec![Operand::IdRef(as_int)]);
                let u64t = self.ctx.t_int(64);
                let c32 = self.ctx.c_u64(32);
                let hi64 = self.op(
                    Op::ShiftRightLogical,
                    u64t,
                    vec![Operand::IdRef(as_int), Operand::IdRef(c32)],
                );
                let hi = self.op(Op::UConvert, u32t, vec![Operand::IdRef(hi64)]);
                vec![lo, hi]
            }
            _ => vec![self.op(Op::UConvert, u32t, vec![Operand::IdRef(as_int)])],
        }
    }

    /// The record words and description of argument `v` (`is_string`: its conversion is `%s`).
    fn arg_words(&mut self, v: Word, is_string: bool) -> Result<(PrintfArg, Vec<Word>), String> {
        let ty = *self.types.get(&v).ok_or("printf argument without a type")?;
        let d = self.ctx.def(ty).ok_or("printf argument type")?.clone();
        let (elem, lanes) = match d.class.opcode {
            Op::TypeVector => (
                id_operand(&d, 0).ok_or("vector type")?,
                lit_operand(&d, 1).ok_or("vector type")?,
            ),
            _ => (ty, 1),
        };
        let e = self.ctx.def(elem).ok_or("printf argument type")?.clone();
        match e.class.opcode {
            Op::TypePointer => {
                if is_string {
                    let w = self.string_word(v).ok_or(
                        "printf: a %s argument must be a constant string (a string literal or \
                         program-scope __constant data)",
                    )?;
                    return Ok((PrintfArg::Str, vec![w]));
                }
                let physical = match self.root(v) {
                    Some((var, _)) => {
                        self.ctx.def(var).is_none_or(|i| {
                            !matches!(
                                i.operands.first(),
                                Some(Operand::StorageClass(
                                    StorageClass::Private
                                        | StorageClass::Function
                                        | StorageClass::Workgroup
                                ))
                            )
                        }) && !self.local.contains_key(&var)
                    }
                    None => {
                        self.ctx.ptr_info(ty).map(|p| p.0)
                            == Some(StorageClass::PhysicalStorageBuffer)
                    }
                };
                let u64t = self.ctx.t_int(64);
                let addr = if physical {
                    self.op(Op::ConvertPtrToU, u64t, vec![Operand::IdRef(v)])
                } else {
                    self.ctx.c_u64(0)
                };
                let words = self.scalar_words(addr, false, 64);
                Ok((PrintfArg::Ptr, words))
            }
            Op::TypeInt | Op::TypeFloat => {
                let float = e.class.opcode == Op::TypeFloat;
                let bits = lit_operand(&e, 0).ok_or("scalar width")?;
                let mut words = Vec::new();
                for k in 0..lanes {
                    let c = if lanes > 1 || d.class.opcode == Op::TypeVector {
                        self.op(
                            Op::CompositeExtract,
                            elem,
                            vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
                        )
                    } else {
                        v
                    };
                    words.extend(self.scalar_words(c, float, bits));
                }
                let (bytes, lanes) = ((bits / 8) as u8, lanes as u8);
                let arg = if float {
                    PrintfArg::Float { bytes, lanes }
                } else {
                    PrintfArg::Int { bytes, lanes }
                };
                Ok((arg, words))
            }
            Op::TypeBool => {
                let u32t = self.ctx.t_int(32);
                let (one, zero) = (self.ctx.c_u32(1), self.ctx.c_u32(0));
                let w = self.op(
                    Op::Select,
                    u32t,
                    vec![Operand::IdRef(v), Operand::IdRef(one), Operand::IdRef(zero)],
                );
                Ok((PrintfArg::Int { bytes: 4, lanes: 1 }, vec![w]))
            }
            _ => Err("printf: an argument of this type cannot be printed".into()),
        }
    }

    /// Replaces printf call `i` by the record write; the call's result keeps its id.
    fn call(&mut self, i: &Instruction) -> Result<(), String> {
        let rid = i.result_id.ok_or("printf without result")?;
        let rty = i.result_type.ok_or("printf without result type")?;
        let fmt_ptr = id_operand(i, 2).ok_or("printf without a format")?;
        let mut formats = Vec::new();
        self.leaves(fmt_ptr, &mut formats, 0).ok_or(
            "printf: the format must be a constant string (a string literal or program-scope \
             __constant data)",
        )?;
        // The conversions tell which pointer arguments are %s strings; a format OpenCL C does
        // not allow is printed as the host can (undefined behaviour in the spec). Formats
        // chosen at run time share the arguments, so the first one's conversions serve all.
        let convs = conversions(&formats[0]).unwrap_or_default();
        let mut args = Vec::new();
        let mut data = Vec::new();
        for (k, a) in (3..i.operands.len())
            .filter_map(|k| id_operand(i, k))
            .enumerate()
        {
            let is_string = convs.get(k).is_some_and(|s| s.conv == 's');
            let (arg, words) = self.arg_words(a, is_string)?;
            args.push(arg);
            data.extend(words);
        }
        // One call per format this call site can print; the record's id word picks it.
        let mut ids = HashMap::new();
        let mut record = 0;
        for format in formats {
            let call = PrintfCall {
                format: format.clone(),
                args: args.clone(),
            };
            record = call.record_bytes();
            ids.insert(format, self.info.calls.len() as u32);
            self.info.calls.push(call);
        }
        let id_word = self
            .choice_word(fmt_ptr, &ids)
            .ok_or("printf: the format must be a constant string")?;

        let (u32t, u64t, boolt) = (self.ctx.t_int(32), self.ctx.t_int(64), self.ctx.t_bool());
        // The printf buffer address from the launch header.
        let pc_ptr_t = self.ctx.t_ptr(StorageClass::PushConstant, u64t);
        let zero32 = self.ctx.c_u32(0);
        let p = self.op(
            Op::AccessChain,
            pc_ptr_t,
            vec![Operand::IdRef(self.pc_var), Operand::IdRef(zero32)],
        );
        let header = self.op(Op::Load, u64t, vec![Operand::IdRef(p)]);
        let at = self.ctx.c_u64(HEADER_PRINTF);
        let a = self.op(
            Op::IAdd,
            u64t,
            vec![Operand::IdRef(header), Operand::IdRef(at)],
        );
        let buf = self.load(a, u64t, 8);
        // Reserve the record.
        let p32 = self.ctx.t_ptr(StorageClass::PhysicalStorageBuffer, u32t);
        let counter = self.op(Op::ConvertUToPtr, p32, vec![Operand::IdRef(buf)]);
        let size = self.ctx.c_u32(record);
        let (device, relaxed) = (self.ctx.c_u32(1), self.ctx.c_u32(0));
        let off = self.op(
            Op::AtomicIAdd,
            u32t,
            vec![
                Operand::IdRef(counter),
                Operand::IdScope(device),
                Operand::IdMemorySemantics(relaxed),
                Operand::IdRef(size),
            ],
        );
        let four = self.ctx.c_u64(4);
        let cap_a = self.op(
            Op::IAdd,
            u64t,
            vec![Operand::IdRef(buf), Operand::IdRef(four)],
        );
        let cap = self.load(cap_a, u32t, 4);
        // fits = off <= cap && size <= cap - off
        let le = self.op(
            Op::ULessThanEqual,
            boolt,
            vec![Operand::IdRef(off), Operand::IdRef(cap)],
        );
        let room = self.op(
            Op::ISub,
            u32t,
            vec![Operand::IdRef(cap), Operand::IdRef(off)],
        );
        let enough = self.op(
            Op::ULessThanEqual,
            boolt,
            vec![Operand::IdRef(size), Operand::IdRef(room)],
        );
        let fits = self.op(
            Op::LogicalAnd,
            boolt,
            vec![Operand::IdRef(le), Operand::IdRef(enough)],
        );
        // Records that do not fit go to the overflow slot at `cap`.
        let dest = self.op(
            Op::Select,
            u32t,
            vec![
                Operand::IdRef(fits),
                Operand::IdRef(off),
                Operand::IdRef(cap),
            ],
        );
        let dest64 = self.op(Op::UConvert, u64t, vec![Operand::IdRef(dest)]);
        let rec0 = self.ctx.c_u64(RECORDS_OFFSET);
        let base = self.op(
            Op::IAdd,
            u64t,
            vec![Operand::IdRef(buf), Operand::IdRef(rec0)],
        );
        let base = self.op(
            Op::IAdd,
            u64t,
            vec![Operand::IdRef(base), Operand::IdRef(dest64)],
        );
        let mut words = vec![size, id_word];
        words.extend(data);
        for (k, w) in words.into_iter().enumerate() {
            let a = if k == 0 {
                base
            } else {
                let c = self.ctx.c_u64(4 * k as u64);
                self.op(
                    Op::IAdd,
                    u64t,
                    vec![Operand::IdRef(base), Operand::IdRef(c)],
                )
            };
            let p = self.op(Op::ConvertUToPtr, p32, vec![Operand::IdRef(a)]);
            self.out.push(inst(
                Op::Store,
                None,
                None,
                vec![
                    Operand::IdRef(p),
                    Operand::IdRef(w),
                    Operand::MemoryAccess(MemoryAccess::ALIGNED),
                    Operand::LiteralBit32(4),
                ],
            ));
        }
        // The result: 0 on success, -1 when the buffer was full.
        let rw = self.ctx.scalar_width(rty).unwrap_or(32);
        let (ok, full) = if rw == 64 {
            (self.ctx.c_u64(0), self.ctx.c_u64(u64::MAX))
        } else {
            (self.ctx.c_u32(0), self.ctx.c_u32(u32::MAX))
        };
        self.out.push(inst(
            Op::Select,
            Some(rty),
            Some(rid),
            vec![
                Operand::IdRef(fits),
                Operand::IdRef(ok),
                Operand::IdRef(full),
            ],
        ));
        Ok(())
    }

    fn load(&mut self, addr: Word, ty: Word, align: u32) -> Word {
        let pty = self.ctx.t_ptr(StorageClass::PhysicalStorageBuffer, ty);
        let p = self.op(Op::ConvertUToPtr, pty, vec![Operand::IdRef(addr)]);
        self.op(
            Op::Load,
            ty,
            vec![
                Operand::IdRef(p),
                Operand::MemoryAccess(MemoryAccess::ALIGNED),
                Operand::LiteralBit32(align),
            ],
        )
    }
}

/// Lowers every printf of the kernel; returns what the host needs to print its records.
///
/// # Errors
/// A message for a format or `%s` argument that is not a constant string, or an argument type
/// that cannot be printed.
pub(crate) fn lower_printf(ctx: &mut Ctx) -> Result<PrintfInfo, String> {
    let Some(cl) = ctx
        .module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "OpenCL.std" => i.result_id,
            _ => None,
        })
    else {
        return Ok(PrintfInfo::default());
    };
    let is_printf = |i: &Instruction| {
        i.class.opcode == Op::ExtInst
            && id_operand(i, 0) == Some(cl)
            && lit_operand(i, 1) == Some(PRINTF)
    };
    let f = &ctx.module.functions[0];
    if !f.blocks.iter().flat_map(|b| &b.instructions).any(is_printf) {
        return Ok(PrintfInfo::default());
    }
    let local: HashMap<Word, Instruction> = f
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .filter_map(|i| Some((i.result_id?, i.clone())))
        .collect();
    let pc_var =
        super::entry::push_constant_var(ctx).ok_or("printf: the push-constant block is missing")?;
    let types = ctx.value_types();
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let defs = Defs::new(&ctx.module);
    let mut pass = Pass {
        ctx,
        local,
        defs,
        types,
        pc_var,
        info: PrintfInfo::default(),
        out: Vec::new(),
        phis: Vec::new(),
    };
    let mut new_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        for i in std::mem::take(&mut b.instructions) {
            if is_printf(&i) {
                pass.call(&i)?;
            } else {
                pass.out.push(i);
            }
        }
        b.instructions = std::mem::take(&mut pass.out);
        new_blocks.push(b);
    }
    let info = pass.info;
    for (after, phi) in pass.phis {
        for b in &mut new_blocks {
            if let Some(k) = b
                .instructions
                .iter()
                .position(|i| i.result_id == Some(after))
            {
                b.instructions.insert(k + 1, phi);
                break;
            }
        }
    }
    ctx.module.functions[0].blocks = new_blocks;
    remove_dead_pointer_chains(ctx);
    Ok(info)
}

/// Removes pointer computations left without a use (the format strings' access chains, selects
/// and phis between strings), so that the strings' variables die too and are not copied into
/// private memory.
fn remove_dead_pointer_chains(ctx: &mut Ctx) {
    loop {
        let mut used = std::collections::HashSet::new();
        for b in &ctx.module.functions[0].blocks {
            for i in &b.instructions {
                used.extend(used_ids(i));
            }
        }
        let mut removed = false;
        for b in &mut ctx.module.functions[0].blocks {
            b.instructions.retain(|i| {
                let dead = matches!(
                    i.class.opcode,
                    Op::InBoundsPtrAccessChain
                        | Op::PtrAccessChain
                        | Op::AccessChain
                        | Op::InBoundsAccessChain
                        | Op::Bitcast
                        | Op::PtrCastToGeneric
                        | Op::Select
                        | Op::Phi
                ) && i.result_id.is_some_and(|r| !used.contains(&r));
                removed |= dead;
                !dead
            });
        }
        if !removed {
            return;
        }
    }
}
