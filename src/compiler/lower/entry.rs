//! The kernel entry: parameters become loads from the argument block, OpenCL built-ins are
//! computed from Vulkan built-ins, push constants and the launch header (see the ABI in the
//! `compiler` module doc), `__local` pointer parameters become spec-constant-sized `Workgroup`
//! arrays, and the function becomes a `GLCompute` entry point `main` without parameters.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{
    BuiltIn, Decoration, ExecutionMode, ExecutionModel, FunctionControl, MemoryAccess, Op,
    StorageClass, Word,
};

use super::ctx::Ctx;
use crate::compiler::layout::Layout;
use crate::compiler::reflect::{ArgKind, KernelInfo};
use crate::compiler::spv::{decorations_of, id_operand, inst, Defs};

/// Memory use found while lowering the entry.
pub(crate) struct EntrySizes {
    pub static_local_mem_bytes: u64,
    pub private_mem_bytes: u64,
}

/// Offsets in the launch header.
mod header {
    pub const WORK_DIM: u64 = 0;
    pub const GLOBAL_OFFSET: u64 = 8;
    pub const GLOBAL_SIZE: u64 = 32;
    // 56: `local_size` (u32[3]), read from spec constants instead (ENQUEUED_LOCAL_SIZE_SPEC_ID).
    pub const NUM_GROUPS: u64 = 68;
    /// Device address of the program's global variable block (`compiler::globals`).
    pub const GLOBALS: u64 = 88;
}

/// Instructions being emitted at the top of the entry block.
struct Emit<'c> {
    ctx: &'c mut Ctx,
    vars: Vec<Instruction>,
    code: Vec<Instruction>,
    pc_var: Word,
    cache: HashMap<&'static str, Word>,
    /// The enqueued work-group size: a `v3uint` spec-constant composite
    /// ([`crate::compiler::ENQUEUED_LOCAL_SIZE_SPEC_ID`]).
    enqueued: Word,
    /// Bool spec constant: the launch's global offset is 0 in every dimension
    /// ([`crate::compiler::ZERO_GLOBAL_OFFSET_SPEC_ID`]).
    zero_offset: Word,
    /// Bool spec constant: every dispatch of the pipeline has `group_offset` 0
    /// ([`crate::compiler::ZERO_GROUP_OFFSET_SPEC_ID`]).
    zero_group_offset: Word,
}

impl Emit<'_> {
    fn op(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.code.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    fn push_constant_field(&mut self, member: u32, ty: Word) -> Word {
        let pty = self.ctx.t_ptr(StorageClass::PushConstant, ty);
        let idx = self.ctx.c_u32(member);
        let p = self.op(
            Op::AccessChain,
            pty,
            vec![Operand::IdRef(self.pc_var), Operand::IdRef(idx)],
        );
        self.op(Op::Load, ty, vec![Operand::IdRef(p)])
    }

    fn cached(&mut self, key: &'static str, f: impl FnOnce(&mut Self) -> Word) -> Word {
        if let Some(v) = self.cache.get(key) {
            return *v;
        }
        let v = f(self);
        self.cache.insert(key, v);
        v
    }

    fn header_addr(&mut self) -> Word {
        self.cached("header", |e| {
            let u64t = e.ctx.t_int(64);
            e.push_constant_field(0, u64t)
        })
    }

    fn args_addr(&mut self) -> Word {
        self.cached("args", |e| {
            let u64t = e.ctx.t_int(64);
            e.push_constant_field(1, u64t)
        })
    }

    /// Loads a `ty` (alignment `align`) at device address `base + offset`.
    fn load_at(&mut self, base: Word, offset: u64, ty: Word, align: u32) -> Word {
        let u64t = self.ctx.t_int(64);
        let addr = if offset == 0 {
            base
        } else {
            let c = self.ctx.c_u64(offset);
            self.op(
                Op::IAdd,
                u64t,
                vec![Operand::IdRef(base), Operand::IdRef(c)],
            )
        };
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

    fn header_v3(&mut self, offset: u64, width: u32) -> Word {
        self.header_v3_unless(offset, width, None)
    }

    /// A 3-vector of the launch header at `offset` (components of `width` bits), widened to
    /// 64 bits; where `zero` (a bool spec constant) is given, each component is
    /// `zero ? 0 : load`, so a pipeline specialized with `zero` true loads nothing.
    fn header_v3_unless(&mut self, offset: u64, width: u32, zero: Option<Word>) -> Word {
        let h = self.header_addr();
        let t = self.ctx.t_int(width);
        let bytes = u64::from(width / 8);
        let c: Vec<Word> = (0..3)
            .map(|d| {
                let v = self.load_at(h, offset + d * bytes, t, width / 8);
                self.unless(zero, t, v)
            })
            .collect();
        let vt = self.ctx.t_vec(t, 3);
        let v = self.op(
            Op::CompositeConstruct,
            vt,
            c.iter().map(|x| Operand::IdRef(*x)).collect(),
        );
        self.widen3(v, width)
    }

    /// `zero ? 0 : v` for a scalar `v` of integer type `t` (`v` itself where `zero` is None).
    fn unless(&mut self, zero: Option<Word>, t: Word, v: Word) -> Word {
        let Some(z) = zero else {
            return v;
        };
        let c0 = match self.ctx.scalar_width(t) {
            Some(64) => self.ctx.c_u64(0),
            _ => self.ctx.c_u32(0),
        };
        self.op(
            Op::Select,
            t,
            vec![Operand::IdRef(z), Operand::IdRef(c0), Operand::IdRef(v)],
        )
    }

    fn widen3(&mut self, v: Word, width: u32) -> Word {
        if width == 64 {
            return v;
        }
        let u64t = self.ctx.t_int(64);
        let vt = self.ctx.t_vec(u64t, 3);
        self.op(Op::UConvert, vt, vec![Operand::IdRef(v)])
    }

    fn input_builtin(&mut self, b: BuiltIn, ty: Word) -> Word {
        let pty = self.ctx.t_ptr(StorageClass::Input, ty);
        let var = self.ctx.id();
        self.ctx.module.types_global_values.push(inst(
            Op::Variable,
            Some(pty),
            Some(var),
            vec![Operand::StorageClass(StorageClass::Input)],
        ));
        self.ctx
            .decorate(var, Decoration::BuiltIn, vec![Operand::BuiltIn(b)]);
        self.op(Op::Load, ty, vec![Operand::IdRef(var)])
    }

    /// A 32-bit Vulkan subgroup built-in (loaded once).
    fn subgroup_input(&mut self, b: BuiltIn) -> Word {
        let key: &'static str = match b {
            BuiltIn::SubgroupSize => "sg_size",
            BuiltIn::SubgroupId => "sg_id",
            _ => "sg_local_id",
        };
        self.cached(key, |e| {
            let u = e.ctx.t_int(32);
            e.input_builtin(b, u)
        })
    }

    /// get_max_sub_group_size(), 32 bits: the largest sub-group of the dispatch, no more than
    /// the enqueued work-group (NVIDIA's 32-wide subgroups in work-groups of 20 items: 20).
    fn max_sub_group_size(&mut self) -> Word {
        self.cached("sg_max", |e| {
            let u = e.ctx.t_int(32);
            let max = e.subgroup_input(BuiltIn::SubgroupSize);
            let ls = e.enqueued_local_size();
            let n = e.linear_count(ls);
            let bool_t = e.ctx.t_bool();
            let lt = e.op(
                Op::ULessThan,
                bool_t,
                vec![Operand::IdRef(max), Operand::IdRef(n)],
            );
            e.op(
                Op::Select,
                u,
                vec![Operand::IdRef(lt), Operand::IdRef(max), Operand::IdRef(n)],
            )
        })
    }

    /// A `uint4` (`ty`) ballot mask of the bits below get_max_sub_group_size(): component k
    /// holds bits 32k to 32k + 31.
    fn below_max_sub_group_size(&mut self, ty: Word) -> Word {
        let u = self.ctx.t_int(32);
        let bool_t = self.ctx.t_bool();
        let max = self.max_sub_group_size();
        let (zero, one, c31, c32, ones) = (
            self.ctx.c_u32(0),
            self.ctx.c_u32(1),
            self.ctx.c_u32(31),
            self.ctx.c_u32(32),
            self.ctx.c_u32(u32::MAX),
        );
        let mut comps = Vec::new();
        for k in 0..4u32 {
            let base = self.ctx.c_u32(32 * k);
            let none = self.op(
                Op::ULessThanEqual,
                bool_t,
                vec![Operand::IdRef(max), Operand::IdRef(base)],
            );
            let rest = self.op(Op::ISub, u, vec![Operand::IdRef(max), Operand::IdRef(base)]);
            let all = self.op(
                Op::UGreaterThanEqual,
                bool_t,
                vec![Operand::IdRef(rest), Operand::IdRef(c32)],
            );
            // rest itself where it is used (below 32); a shift in range elsewhere.
            let small = self.op(
                Op::BitwiseAnd,
                u,
                vec![Operand::IdRef(rest), Operand::IdRef(c31)],
            );
            let bit = self.op(
                Op::ShiftLeftLogical,
                u,
                vec![Operand::IdRef(one), Operand::IdRef(small)],
            );
            let low = self.op(Op::ISub, u, vec![Operand::IdRef(bit), Operand::IdRef(one)]);
            let part = self.op(
                Op::Select,
                u,
                vec![
                    Operand::IdRef(all),
                    Operand::IdRef(ones),
                    Operand::IdRef(low),
                ],
            );
            comps.push(self.op(
                Op::Select,
                u,
                vec![
                    Operand::IdRef(none),
                    Operand::IdRef(zero),
                    Operand::IdRef(part),
                ],
            ));
        }
        self.op(
            Op::CompositeConstruct,
            ty,
            comps.into_iter().map(Operand::IdRef).collect(),
        )
    }

    /// x * y * z of a 64-bit 3-vector, as 32 bits (work-group sizes).
    fn linear_count(&mut self, v3: Word) -> Word {
        let u64t = self.ctx.t_int(64);
        let u = self.ctx.t_int(32);
        let c: Vec<Word> = (0..3)
            .map(|k| {
                self.op(
                    Op::CompositeExtract,
                    u64t,
                    vec![Operand::IdRef(v3), Operand::LiteralBit32(k)],
                )
            })
            .collect();
        let xy = self.op(
            Op::IMul,
            u64t,
            vec![Operand::IdRef(c[0]), Operand::IdRef(c[1])],
        );
        let xyz = self.op(
            Op::IMul,
            u64t,
            vec![Operand::IdRef(xy), Operand::IdRef(c[2])],
        );
        self.op(Op::UConvert, u, vec![Operand::IdRef(xyz)])
    }

    fn v3u32(&mut self) -> Word {
        let u = self.ctx.t_int(32);
        self.ctx.t_vec(u, 3)
    }

    fn v3u64(&mut self) -> Word {
        let u = self.ctx.t_int(64);
        self.ctx.t_vec(u, 3)
    }

    fn group_id(&mut self) -> Word {
        self.cached("group_id", |e| {
            let v3 = e.v3u32();
            let wid = e.input_builtin(BuiltIn::WorkgroupId, v3);
            let u = e.ctx.t_int(32);
            let zero = Some(e.zero_group_offset);
            let go: Vec<Word> = (2..5)
                .map(|m| {
                    let v = e.push_constant_field(m, u);
                    e.unless(zero, u, v)
                })
                .collect();
            let gov = e.op(
                Op::CompositeConstruct,
                v3,
                go.iter().map(|x| Operand::IdRef(*x)).collect(),
            );
            let sum = e.op(Op::IAdd, v3, vec![Operand::IdRef(wid), Operand::IdRef(gov)]);
            e.widen3(sum, 32)
        })
    }

    fn local_id(&mut self) -> Word {
        self.cached("local_id", |e| {
            let v3 = e.v3u32();
            let l = e.input_builtin(BuiltIn::LocalInvocationId, v3);
            e.widen3(l, 32)
        })
    }

    /// The size of this work-group (the pipeline's `WorkgroupSize`: smaller than the
    /// enqueued size in the edge groups of a non-uniform NDRange).
    fn local_size(&mut self, wg_size: Word) -> Word {
        self.cached("local_size", |e| e.widen3(wg_size, 32))
    }

    /// The enqueued (uniform) work-group size: spec constants the runtime sets to the
    /// header's `local_size` (a constant after specialization, no load).
    fn enqueued_local_size(&mut self) -> Word {
        self.cached("enqueued_local_size", |e| {
            let v = e.enqueued;
            e.widen3(v, 32)
        })
    }

    /// The global offset: the header's, or 0 without a load in a pipeline specialized for a
    /// zero offset.
    fn global_offset(&mut self) -> Word {
        self.cached("global_offset", |e| {
            let zero = Some(e.zero_offset);
            e.header_v3_unless(header::GLOBAL_OFFSET, 64, zero)
        })
    }

    fn global_size(&mut self) -> Word {
        self.cached("global_size", |e| e.header_v3(header::GLOBAL_SIZE, 64))
    }

    fn global_id(&mut self) -> Word {
        self.cached("global_id", |e| {
            let v3 = e.v3u64();
            let g = e.group_id();
            let ls = e.enqueued_local_size();
            let l = e.local_id();
            let o = e.global_offset();
            let m = e.op(Op::IMul, v3, vec![Operand::IdRef(g), Operand::IdRef(ls)]);
            let a = e.op(Op::IAdd, v3, vec![Operand::IdRef(m), Operand::IdRef(l)]);
            e.op(Op::IAdd, v3, vec![Operand::IdRef(a), Operand::IdRef(o)])
        })
    }

    /// The value of OpenCL built-in `b` as the Kernel module's type `ty` expects.
    fn builtin(&mut self, b: BuiltIn, ty: Word, wg_size: Word) -> Result<Word, String> {
        let u64t = self.ctx.t_int(64);
        let v = match b {
            BuiltIn::GlobalInvocationId => self.global_id(),
            BuiltIn::LocalInvocationId => self.local_id(),
            BuiltIn::WorkgroupId => self.group_id(),
            BuiltIn::WorkgroupSize => self.local_size(wg_size),
            BuiltIn::EnqueuedWorkgroupSize => self.enqueued_local_size(),
            BuiltIn::NumWorkgroups => self.header_v3(header::NUM_GROUPS, 32),
            BuiltIn::GlobalSize => self.global_size(),
            BuiltIn::GlobalOffset => self.global_offset(),
            BuiltIn::WorkDim => {
                let h = self.header_addr();
                let u = self.ctx.t_int(32);
                return Ok(self.load_at(h, header::WORK_DIM, u, 4));
            }
            BuiltIn::LocalInvocationIndex => {
                let u = self.ctx.t_int(32);
                let l = self.input_builtin(BuiltIn::LocalInvocationIndex, u);
                self.op(Op::UConvert, u64t, vec![Operand::IdRef(l)])
            }
            BuiltIn::GlobalLinearId => {
                let gid = self.global_id();
                let off = self.global_offset();
                let gs = self.global_size();
                let v3 = self.v3u64();
                let rel = self.op(Op::ISub, v3, vec![Operand::IdRef(gid), Operand::IdRef(off)]);
                let c = |e: &mut Self, v: Word, k: u32| {
                    e.op(
                        Op::CompositeExtract,
                        u64t,
                        vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
                    )
                };
                let (x, y, z) = (c(self, rel, 0), c(self, rel, 1), c(self, rel, 2));
                let (sx, sy) = (c(self, gs, 0), c(self, gs, 1));
                let t = self.op(Op::IMul, u64t, vec![Operand::IdRef(z), Operand::IdRef(sy)]);
                let t = self.op(Op::IAdd, u64t, vec![Operand::IdRef(t), Operand::IdRef(y)]);
                let t = self.op(Op::IMul, u64t, vec![Operand::IdRef(t), Operand::IdRef(sx)]);
                self.op(Op::IAdd, u64t, vec![Operand::IdRef(t), Operand::IdRef(x)])
            }
            // Sub-groups (cl_khr_subgroups): Vulkan's subgroups of the work-group, in order of
            // the linear local id; all of `SubgroupSize` but possibly the last.
            // get_max_sub_group_size: the largest sub-group of the dispatch, no more than the
            // enqueued work-group (NVIDIA's 32-wide subgroups in work-groups of 20 items: 20).
            BuiltIn::SubgroupMaxSize => return Ok(self.max_sub_group_size()),
            BuiltIn::SubgroupLocalInvocationId | BuiltIn::SubgroupId => {
                return Ok(self.subgroup_input(b))
            }
            // cl_khr_subgroup_ballot's get_sub_group_*_mask(): Vulkan's uvec4 masks, the
            // Kernel module's uint4 (bits of the sub-group's work-items, in local-id order).
            // The ge and gt masks stop below the maximum sub-group size (OpenCL), Vulkan's
            // below `SubgroupSize`: in a work-group smaller than a subgroup they differ.
            BuiltIn::SubgroupEqMask | BuiltIn::SubgroupLeMask | BuiltIn::SubgroupLtMask => {
                return Ok(self.input_builtin(b, ty))
            }
            BuiltIn::SubgroupGeMask | BuiltIn::SubgroupGtMask => {
                let m = self.input_builtin(b, ty);
                let below = self.below_max_sub_group_size(ty);
                return Ok(self.op(
                    Op::BitwiseAnd,
                    ty,
                    vec![Operand::IdRef(m), Operand::IdRef(below)],
                ));
            }
            BuiltIn::SubgroupSize => {
                // min(max size, items of the work-group after this sub-group's first).
                let u = self.ctx.t_int(32);
                let max = self.subgroup_input(BuiltIn::SubgroupSize);
                let id = self.subgroup_input(BuiltIn::SubgroupId);
                let ls = self.local_size(wg_size);
                let n = self.linear_count(ls);
                let first = self.op(Op::IMul, u, vec![Operand::IdRef(id), Operand::IdRef(max)]);
                let rest = self.op(Op::ISub, u, vec![Operand::IdRef(n), Operand::IdRef(first)]);
                let bool_t = self.ctx.t_bool();
                let lt = self.op(
                    Op::ULessThan,
                    bool_t,
                    vec![Operand::IdRef(max), Operand::IdRef(rest)],
                );
                return Ok(self.op(
                    Op::Select,
                    u,
                    vec![
                        Operand::IdRef(lt),
                        Operand::IdRef(max),
                        Operand::IdRef(rest),
                    ],
                ));
            }
            // ceil(work-group items / max size); Vulkan's NumSubgroups leaves out a partial
            // last subgroup on lavapipe 22.3 (2 for 20 items in subgroups of 8).
            BuiltIn::NumEnqueuedSubgroups | BuiltIn::NumSubgroups => {
                let u = self.ctx.t_int(32);
                let max = self.subgroup_input(BuiltIn::SubgroupSize);
                let ls = if b == BuiltIn::NumSubgroups {
                    self.local_size(wg_size)
                } else {
                    self.enqueued_local_size()
                };
                let n = self.linear_count(ls);
                let one = self.ctx.c_u32(1);
                let m1 = self.op(Op::ISub, u, vec![Operand::IdRef(max), Operand::IdRef(one)]);
                let t = self.op(Op::IAdd, u, vec![Operand::IdRef(n), Operand::IdRef(m1)]);
                return Ok(self.op(Op::UDiv, u, vec![Operand::IdRef(t), Operand::IdRef(max)]));
            }
            other => return Err(format!("built-in {other:?} is not supported yet")),
        };
        // Narrow if the module wants 32-bit values (it never does for spir64).
        let want = self.ctx.scalar_width(ty).unwrap_or(64);
        if want != 64 {
            return Ok(self.op(Op::UConvert, ty, vec![Operand::IdRef(v)]));
        }
        Ok(v)
    }
}

/// Lowers parameters, built-ins and the entry point of the kernel.
///
/// # Errors
/// For argument kinds and built-ins that are not supported yet.
pub(crate) fn lower_entry(
    ctx: &mut Ctx,
    info: &KernelInfo,
    globals: &HashMap<Word, u64>,
) -> Result<EntrySizes, String> {
    let sizes = memory_sizes(ctx);
    let func_id = info.function;
    let params = std::mem::take(&mut ctx.module.functions[0].parameters);
    let void = ctx.t_void();
    let fn_ty = ctx.t_fn(void, &[]);
    if let Some(def) = ctx.module.functions[0].def.as_mut() {
        def.result_type = Some(void);
        def.operands = vec![
            Operand::FunctionControl(FunctionControl::NONE),
            Operand::IdRef(fn_ty),
        ];
    }

    // Push constant block.
    let u64t = ctx.t_int(64);
    let u32t = ctx.t_int(32);
    let pc_var = push_constant_block(ctx);

    // Work-group size spec constants (reqd_work_group_size gives the defaults).
    let reqd = info.reqd_work_group_size.unwrap_or([1, 1, 1]);
    let mut comps = Vec::new();
    for (d, v) in reqd.iter().enumerate() {
        let id = ctx.id();
        ctx.module.types_global_values.push(inst(
            Op::SpecConstant,
            Some(u32t),
            Some(id),
            vec![Operand::LiteralBit32(*v)],
        ));
        ctx.decorate(
            id,
            Decoration::SpecId,
            vec![Operand::LiteralBit32(d as u32)],
        );
        comps.push(Operand::IdRef(id));
    }
    let v3u32 = ctx.t_vec(u32t, 3);
    let wg_size = ctx.id();
    ctx.module.types_global_values.push(inst(
        Op::SpecConstantComposite,
        Some(v3u32),
        Some(wg_size),
        comps,
    ));
    ctx.decorate(
        wg_size,
        Decoration::BuiltIn,
        vec![Operand::BuiltIn(BuiltIn::WorkgroupSize)],
    );

    // The enqueued work-group size and the two zero-offset flags (spec constants the runtime
    // sets per pipeline: see the ABI in the `compiler` module doc).
    let mut enq = Vec::new();
    for (d, v) in reqd.iter().enumerate() {
        let id = spec_constant(ctx, Op::SpecConstant, u32t, vec![Operand::LiteralBit32(*v)]);
        let spec_id = crate::compiler::ENQUEUED_LOCAL_SIZE_SPEC_ID + d as u32;
        ctx.decorate(id, Decoration::SpecId, vec![Operand::LiteralBit32(spec_id)]);
        enq.push(Operand::IdRef(id));
    }
    let enqueued = spec_constant(ctx, Op::SpecConstantComposite, v3u32, enq);
    let bool_t = ctx.t_bool();
    let flags = [
        crate::compiler::ZERO_GLOBAL_OFFSET_SPEC_ID,
        crate::compiler::ZERO_GROUP_OFFSET_SPEC_ID,
    ]
    .map(|spec_id| {
        let id = spec_constant(ctx, Op::SpecConstantFalse, bool_t, vec![]);
        ctx.decorate(id, Decoration::SpecId, vec![Operand::LiteralBit32(spec_id)]);
        id
    });

    let mut e = Emit {
        ctx,
        vars: Vec::new(),
        code: Vec::new(),
        pc_var,
        cache: HashMap::new(),
        enqueued,
        zero_offset: flags[0],
        zero_group_offset: flags[1],
    };

    // Half texels of read_imageh/write_imageh become float ones (lower/image_half.rs).
    if info.args.iter().any(|a| a.kind == ArgKind::Image) {
        super::image_half::widen_half_texels(e.ctx)?;
    }
    // Parameters.
    let defs = Defs::new(&e.ctx.module);
    let mut images: HashMap<Word, [Word; 6]> = HashMap::new();
    let (inline_loads, mut samplers) =
        super::sampled::bind_inline_samplers(e.ctx, info.args.len() as u32)?;
    e.code.extend(inline_loads);
    for (k, p) in params.iter().enumerate() {
        let (Some(pid), Some(pty)) = (p.result_id, p.result_type) else {
            continue;
        };
        let arg = info.args.get(k).ok_or("argument info mismatch")?;
        match arg.kind {
            ArgKind::Buffer => {
                let base = e.args_addr();
                let u = e.load_at(base, u64::from(arg.offset), u64t, 8);
                e.code.push(inst(
                    Op::ConvertUToPtr,
                    Some(pty),
                    Some(pid),
                    vec![Operand::IdRef(u)],
                ));
            }
            ArgKind::Value => {
                let (value_ty, byval) = match e.ctx.ptr_info(pty) {
                    Some((StorageClass::Function, pointee)) => (pointee, true),
                    _ => (pty, false),
                };
                let align = Layout::new(&e.ctx.module, &defs)
                    .size_align(value_ty)
                    .map(|s| s.align)
                    .unwrap_or(4) as u32;
                let base = e.args_addr();
                let v = e.load_at(base, u64::from(arg.offset), value_ty, align);
                if byval {
                    e.vars.push(inst(
                        Op::Variable,
                        Some(pty),
                        Some(pid),
                        vec![Operand::StorageClass(StorageClass::Function)],
                    ));
                    e.code.push(inst(
                        Op::Store,
                        None,
                        None,
                        vec![Operand::IdRef(pid), Operand::IdRef(v)],
                    ));
                } else {
                    e.code.push(inst(
                        Op::CopyObject,
                        Some(pty),
                        Some(pid),
                        vec![Operand::IdRef(v)],
                    ));
                }
            }
            ArgKind::Local { spec_id, .. } => {
                let (_, elem) = e
                    .ctx
                    .ptr_info(pty)
                    .ok_or("__local argument is not a pointer")?;
                let len = e.ctx.id();
                e.ctx.module.types_global_values.push(inst(
                    Op::SpecConstant,
                    Some(u32t),
                    Some(len),
                    vec![Operand::LiteralBit32(1)],
                ));
                e.ctx.decorate(
                    len,
                    Decoration::SpecId,
                    vec![Operand::LiteralBit32(spec_id)],
                );
                let arr = e.ctx.id();
                e.ctx.module.types_global_values.push(inst(
                    Op::TypeArray,
                    None,
                    Some(arr),
                    vec![Operand::IdRef(elem), Operand::IdRef(len)],
                ));
                let aptr = e.ctx.t_ptr(StorageClass::Workgroup, arr);
                let var = e.ctx.id();
                e.ctx.module.types_global_values.push(inst(
                    Op::Variable,
                    Some(aptr),
                    Some(var),
                    vec![Operand::StorageClass(StorageClass::Workgroup)],
                ));
                let zero = e.ctx.c_u32(0);
                e.code.push(inst(
                    Op::AccessChain,
                    Some(pty),
                    Some(pid),
                    vec![Operand::IdRef(var), Operand::IdRef(zero)],
                ));
            }
            ArgKind::Image => {
                // The channel order and data type of the launch's table entry (lower/image.rs).
                let base = e.args_addr();
                let table: [Word; 6] = std::array::from_fn(|j| {
                    e.load_at(base, u64::from(arg.offset) + 4 * j as u64, u32t, 4)
                });
                let load = super::image::bind_image(e.ctx, pid, pty, arg, k as u32, table)?;
                e.code.extend(load);
                images.insert(pid, table);
            }
            ArgKind::Sampler => {
                // Whether the sampler normalizes coordinates (lower/sampled.rs).
                let base = e.args_addr();
                let normalized = e.load_at(base, u64::from(arg.offset), u32t, 4);
                let load = super::sampled::bind_sampler(e.ctx, pid, pty, k as u32);
                e.code.push(load);
                samplers.insert(pid, normalized);
            }
        }
    }

    super::sampled::lower_sampled_reads(e.ctx, &images, &samplers)?;

    // Built-ins: every load of an OpenCL built-in variable becomes a copy of a value computed
    // once at the top of the kernel.
    let builtin_vars: Vec<(Word, BuiltIn, Word)> =
        e.ctx
            .module
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Variable)
            .filter_map(|i| {
                let id = i.result_id?;
                let b = decorations_of(&e.ctx.module, id).iter().find_map(|d| {
                    match d.operands.get(2) {
                        Some(Operand::BuiltIn(b))
                            if d.operands.get(1)
                                == Some(&Operand::Decoration(Decoration::BuiltIn)) =>
                        {
                            Some(*b)
                        }
                        _ => None,
                    }
                })?;
                let pointee = e.ctx.ptr_info(i.result_type?)?.1;
                Some((id, b, pointee))
            })
            .filter(|(id, _, _)| *id != pc_var)
            .collect();
    let mut values: HashMap<Word, Word> = HashMap::new();
    for (var, b, ty) in &builtin_vars {
        let used = e.ctx.module.functions[0]
            .blocks
            .iter()
            .flat_map(|bl| bl.instructions.iter())
            .any(|i| crate::compiler::spv::used_ids(i).contains(var));
        if used {
            values.insert(*var, e.builtin(*b, *ty, wg_size)?);
        }
    }
    // Program-scope __global variables: block address + offset. Their initialisers are the
    // runtime's (compiler::globals); constants that only served those go too.
    let program_vars: Vec<(Word, Word, u64)> = e
        .ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter_map(|i| {
            let id = i.result_id?;
            Some((id, i.result_type?, *globals.get(&id)?))
        })
        .collect();
    let mut global_ptrs: HashMap<Word, Word> = HashMap::new();
    for (var, pty, offset) in &program_vars {
        let u64t = e.ctx.t_int(64);
        let block = e.cached("globals", |e| {
            let h = e.header_addr();
            let u64t = e.ctx.t_int(64);
            e.load_at(h, header::GLOBALS, u64t, 8)
        });
        let c = e.ctx.c_u64(*offset);
        let addr = e.op(
            Op::IAdd,
            u64t,
            vec![Operand::IdRef(block), Operand::IdRef(c)],
        );
        let p = e.op(Op::ConvertUToPtr, *pty, vec![Operand::IdRef(addr)]);
        global_ptrs.insert(*var, p);
    }
    let Emit { vars, code, .. } = e;
    if !program_vars.is_empty() {
        remove_program_vars(ctx, &global_ptrs);
    }
    // The OpenCL built-in variables are gone (their loads are copies now).
    ctx.module.types_global_values.retain(|i| {
        !i.result_id
            .is_some_and(|r| builtin_vars.iter().any(|b| b.0 == r))
    });
    // Loads of vector built-ins, with the value OpenCL gives for a dimension >= 3.
    let mut dim_defaults: HashMap<Word, u64> = HashMap::new();
    let f = &mut ctx.module.functions[0];
    for i in f.blocks.iter_mut().flat_map(|b| b.instructions.iter_mut()) {
        if i.class.opcode == Op::Load {
            if let Some(v) = id_operand(i, 0).and_then(|p| values.get(&p)) {
                let b = id_operand(i, 0).and_then(|p| builtin_vars.iter().find(|b| b.0 == p));
                if let (Some((_, b, _)), Some(r)) = (b, i.result_id) {
                    if let Some(d) = out_of_range_default(*b) {
                        dim_defaults.insert(r, d);
                    }
                }
                *i = inst(
                    Op::CopyObject,
                    i.result_type,
                    i.result_id,
                    vec![Operand::IdRef(*v)],
                );
            } else if id_operand(i, 0).is_some_and(|p| builtin_vars.iter().any(|b| b.0 == p)) {
                return Err("unsupported use of a built-in variable".into());
            }
        }
    }
    let f = &mut ctx.module.functions[0];
    // Function variables must open the first block; llvm-spirv leaves them where LLVM's
    // allocas were (after a bitcast, or in later blocks).
    let mut hoisted = Vec::new();
    for b in f.blocks.iter_mut() {
        let (vars, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut b.instructions)
            .into_iter()
            .partition(|i| i.class.opcode == Op::Variable);
        hoisted.extend(vars);
        b.instructions = rest;
    }
    let entry = f.blocks.first_mut().ok_or("kernel without blocks")?;
    hoisted.append(&mut entry.instructions);
    entry.instructions = hoisted;
    let split = entry
        .instructions
        .iter()
        .position(|i| i.class.opcode != Op::Variable)
        .unwrap_or(entry.instructions.len());
    let rest = entry.instructions.split_off(split);
    entry.instructions.extend(vars);
    entry.instructions.extend(code);
    entry.instructions.extend(rest);
    guard_dimensions(ctx, &dim_defaults)?;

    // Contraction. OpenCL C contracts only within an expression (FP_CONTRACT, OpenCL C 6.10),
    // which clang marks with llvm.fmuladd and llvm-spirv turns into OpenCL.std `mad` (lowered
    // later to a multiply and an add without the decoration, which the driver may fuse).
    // Every other multiply, add and subtract from the front end stays rounded on its own,
    // whether or not llvm-spirv added `ContractionOff` (it does not when the kernel has any
    // `mad`): a Vulkan driver may fuse undecorated ones (lavapipe does on doubles), which
    // breaks the exact error terms of libclc's extended-precision arithmetic (the `double`
    // sin/cos argument reduction was off by 10^15 ulp).
    let targets: Vec<Word> = ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .filter(|i| matches!(i.class.opcode, Op::FMul | Op::FAdd | Op::FSub))
        .filter_map(|i| i.result_id)
        .collect();
    for t in targets {
        ctx.decorate(t, Decoration::NoContraction, vec![]);
    }
    ctx.module.entry_points = vec![inst(
        Op::EntryPoint,
        None,
        None,
        vec![
            Operand::ExecutionModel(ExecutionModel::GLCompute),
            Operand::IdRef(func_id),
            Operand::LiteralString("main".into()),
        ],
    )];
    ctx.module.execution_modes = vec![inst(
        Op::ExecutionMode,
        None,
        None,
        vec![
            Operand::IdRef(func_id),
            Operand::ExecutionMode(ExecutionMode::LocalSize),
            Operand::LiteralBit32(reqd[0]),
            Operand::LiteralBit32(reqd[1]),
            Operand::LiteralBit32(reqd[2]),
        ],
    )];
    Ok(sizes)
}

/// A new (never shared) spec constant instruction `op` of type `ty`.
fn spec_constant(ctx: &mut Ctx, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
    let id = ctx.id();
    ctx.module
        .types_global_values
        .push(inst(op, Some(ty), Some(id), operands));
    id
}

/// Removes the program's __global variables (`ptrs`: variable -> its address in the kernel)
/// and the constant expressions built on them (initialisers of other such variables), and
/// points the kernel's uses at the addresses.
fn remove_program_vars(ctx: &mut Ctx, ptrs: &HashMap<Word, Word>) {
    let mut dead: std::collections::HashSet<Word> = ptrs.keys().copied().collect();
    loop {
        let more: Vec<Word> = ctx
            .module
            .types_global_values
            .iter()
            .filter(|i| {
                matches!(
                    i.class.opcode,
                    Op::SpecConstantOp | Op::SpecConstantComposite
                )
            })
            .filter(|i| {
                crate::compiler::spv::used_ids(i)
                    .iter()
                    .any(|u| dead.contains(u))
            })
            .filter_map(|i| i.result_id)
            .filter(|r| !dead.contains(r))
            .collect();
        if more.is_empty() {
            break;
        }
        dead.extend(more);
    }
    ctx.module
        .types_global_values
        .retain(|i| !i.result_id.is_some_and(|r| dead.contains(&r)));
    for i in ctx.module.functions[0]
        .blocks
        .iter_mut()
        .flat_map(|b| b.instructions.iter_mut())
    {
        crate::compiler::spv::for_each_used_id_mut(i, |w| {
            if let Some(p) = ptrs.get(w) {
                *w = *p;
            }
        });
    }
}

/// What a work-item function returns for a dimension outside `0..3` (OpenCL C 6.15.1:
/// ids and offsets 0, sizes and counts 1); `None` for scalar built-ins.
fn out_of_range_default(b: BuiltIn) -> Option<u64> {
    match b {
        BuiltIn::GlobalInvocationId
        | BuiltIn::LocalInvocationId
        | BuiltIn::WorkgroupId
        | BuiltIn::GlobalOffset => Some(0),
        BuiltIn::WorkgroupSize
        | BuiltIn::EnqueuedWorkgroupSize
        | BuiltIn::NumWorkgroups
        | BuiltIn::GlobalSize => Some(1),
        _ => None,
    }
}

/// Makes component reads of the built-in vectors in `defaults` (load result -> default)
/// return the default for dimensions >= 3: `OpVectorExtractDynamic v d` becomes
/// `d < 3 ? v[d] : default` (an out-of-range extract is undefined in SPIR-V), and a constant
/// out-of-range `OpCompositeExtract` becomes the default.
fn guard_dimensions(ctx: &mut Ctx, defaults: &HashMap<Word, u64>) -> Result<(), String> {
    if defaults.is_empty() {
        return Ok(());
    }
    let types = ctx.value_types();
    let bool_t = ctx.t_bool();
    let mut blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    for block in &mut blocks {
        let mut out = Vec::with_capacity(block.instructions.len());
        for i in std::mem::take(&mut block.instructions) {
            let out_of_range =
                matches!(i.operands.get(1), Some(Operand::LiteralBit32(k)) if *k >= 3);
            let guarded = match i.class.opcode {
                Op::VectorExtractDynamic => true,
                Op::CompositeExtract => out_of_range,
                _ => false,
            };
            let default = id_operand(&i, 0)
                .filter(|_| guarded)
                .and_then(|v| defaults.get(&v))
                .copied();
            let (Some(default), Some(ty), Some(rid)) = (default, i.result_type, i.result_id) else {
                out.push(i);
                continue;
            };
            let width = ctx.scalar_width(ty).ok_or("built-in of unknown width")?;
            let default = if width == 64 {
                ctx.c_u64(default)
            } else {
                ctx.c_u32(default as u32)
            };
            match i.class.opcode {
                Op::VectorExtractDynamic => {
                    let idx = id_operand(&i, 1).ok_or("extract index")?;
                    let idx_width = types
                        .get(&idx)
                        .and_then(|t| ctx.scalar_width(*t))
                        .ok_or("extract index of unknown type")?;
                    let three = if idx_width == 64 {
                        ctx.c_u64(3)
                    } else {
                        ctx.c_u32(3)
                    };
                    let (e, inside) = (ctx.id(), ctx.id());
                    let mut extract = i;
                    extract.result_id = Some(e);
                    out.push(extract);
                    out.push(inst(
                        Op::ULessThan,
                        Some(bool_t),
                        Some(inside),
                        vec![Operand::IdRef(idx), Operand::IdRef(three)],
                    ));
                    out.push(inst(
                        Op::Select,
                        Some(ty),
                        Some(rid),
                        vec![
                            Operand::IdRef(inside),
                            Operand::IdRef(e),
                            Operand::IdRef(default),
                        ],
                    ));
                }
                Op::CompositeExtract => {
                    out.push(inst(
                        Op::CopyObject,
                        Some(ty),
                        Some(rid),
                        vec![Operand::IdRef(default)],
                    ));
                }
                _ => out.push(i),
            }
        }
        block.instructions = out;
    }
    ctx.module.functions[0].blocks = blocks;
    Ok(())
}

/// `__local` variables of the kernel body and Function variables, in bytes.
fn memory_sizes(ctx: &Ctx) -> EntrySizes {
    let defs = Defs::new(&ctx.module);
    let layout = Layout::new(&ctx.module, &defs);
    let size_of_var = |i: &Instruction| -> u64 {
        i.result_type
            .and_then(|t| ctx.ptr_info(t))
            .and_then(|(_, p)| layout.size_align(p).ok())
            .map(|s| s.size)
            .unwrap_or(0)
    };
    let used: std::collections::HashSet<Word> = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .flat_map(crate::compiler::spv::used_ids)
        .collect();
    let static_local_mem_bytes = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| {
            i.result_id.is_some_and(|r| used.contains(&r))
                && i.class.opcode == Op::Variable
                && i.operands.first() == Some(&Operand::StorageClass(StorageClass::Workgroup))
        })
        .map(size_of_var)
        .sum();
    let private_mem_bytes = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == Op::Variable)
        .map(size_of_var)
        .sum();
    EntrySizes {
        static_local_mem_bytes,
        private_mem_bytes,
    }
}

/// The module's `PushConstant` variable (the kernel ABI's block of [`push_constant_block`]),
/// if it has one.
pub(crate) fn push_constant_var(ctx: &Ctx) -> Option<Word> {
    ctx.module
        .types_global_values
        .iter()
        .find(|i| {
            i.class.opcode == Op::Variable
                && i.operands.first() == Some(&Operand::StorageClass(StorageClass::PushConstant))
        })
        .and_then(|i| i.result_id)
}

/// Declares the kernel ABI's 32-byte push-constant block (launch header address, argument
/// block address, group offset x/y/z, padding; see the compiler module doc) and returns its
/// `PushConstant` variable. The one place that spells the block's layout.
pub(crate) fn push_constant_block(ctx: &mut Ctx) -> Word {
    let u64t = ctx.t_int(64);
    let u32t = ctx.t_int(32);
    let st = ctx.id();
    ctx.module.types_global_values.push(inst(
        Op::TypeStruct,
        None,
        Some(st),
        [u64t, u64t, u32t, u32t, u32t, u32t]
            .iter()
            .map(|t| Operand::IdRef(*t))
            .collect(),
    ));
    for (m, off) in [0u32, 8, 16, 20, 24, 28].iter().enumerate() {
        ctx.module.annotations.push(inst(
            Op::MemberDecorate,
            None,
            None,
            vec![
                Operand::IdRef(st),
                Operand::LiteralBit32(m as u32),
                Operand::Decoration(Decoration::Offset),
                Operand::LiteralBit32(*off),
            ],
        ));
    }
    ctx.decorate(st, Decoration::Block, vec![]);
    let pty = ctx.t_ptr(StorageClass::PushConstant, st);
    let var = ctx.id();
    ctx.module.types_global_values.push(inst(
        Op::Variable,
        Some(pty),
        Some(var),
        vec![Operand::StorageClass(StorageClass::PushConstant)],
    ));
    var
}
