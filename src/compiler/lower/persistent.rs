//! The persistent variant of a lowered kernel (compute-unit-limited dispatch on sub-devices).
//!
//! Input: a finished Vulkan module of this crate's kernel ABI (one function, the `GLCompute`
//! entry `main`). Output: the same kernel where `main` is a new entry that loops over the
//! NDRange's virtual work-groups and calls the old entry, now a plain function, once per
//! virtual group:
//!
//! ```text
//! v = WorkgroupId.x                       // the launched grid is [L, 1, 1]
//! while v < num_groups.x * num_groups.y * num_groups.z {    // launch header, 64-bit
//!     current_group = (v % nx, v / nx % ny, v / (nx * ny))  // a Private v3uint
//!     kernel_body()                        // every load of WorkgroupId reads current_group
//!     barrier (only if the kernel has Workgroup memory: the next virtual group reuses it)
//!     v += NumWorkgroups.x                 // L, the number of launched groups
//! }
//! ```
//!
//! The loop condition is uniform within a work-group, so the body's barriers stay in uniform
//! control flow; an early `return` of the body ends one virtual group, not the loop; Function
//! variables are fresh for every call. The runtime launches the variant with `group_offset` 0.

use rspirv::dr::{Block, Function, Instruction, Operand};
use rspirv::spirv::{
    BuiltIn, Decoration, FunctionControl, LoopControl, MemoryAccess, MemorySemantics, Op, Scope,
    StorageClass, Word,
};

use super::ctx::Ctx;
use crate::compiler::spv::{decorations_of, id_operand, inst};

/// Offset of `num_groups` (`u32[3]`) in the launch header, bytes (see the ABI).
const NUM_GROUPS: u64 = 68;

/// Input variables decorated with built-in `b`.
fn builtin_vars(ctx: &Ctx, b: BuiltIn) -> Vec<Word> {
    ctx.module
        .types_global_values
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Variable
                && i.operands.first() == Some(&Operand::StorageClass(StorageClass::Input))
        })
        .filter_map(|i| i.result_id)
        .filter(|&id| {
            decorations_of(&ctx.module, id)
                .iter()
                .any(|d| d.operands.get(2) == Some(&Operand::BuiltIn(b)))
        })
        .collect()
}

fn input_builtin_var(ctx: &mut Ctx, b: BuiltIn, ty: Word) -> Word {
    let pty = ctx.t_ptr(StorageClass::Input, ty);
    let var = ctx.id();
    ctx.module.types_global_values.push(inst(
        Op::Variable,
        Some(pty),
        Some(var),
        vec![Operand::StorageClass(StorageClass::Input)],
    ));
    ctx.decorate(var, Decoration::BuiltIn, vec![Operand::BuiltIn(b)]);
    var
}

/// Builds the instructions of one basic block.
struct Code<'c> {
    ctx: &'c mut Ctx,
    out: Vec<Instruction>,
}

impl Code<'_> {
    fn op(&mut self, op: Op, ty: Word, operands: &[Word]) -> Word {
        let id = self.ctx.id();
        let ops = operands.iter().map(|w| Operand::IdRef(*w)).collect();
        self.out.push(inst(op, Some(ty), Some(id), ops));
        id
    }

    fn extract(&mut self, ty: Word, v: Word, k: u32) -> Word {
        let id = self.ctx.id();
        self.out.push(inst(
            Op::CompositeExtract,
            Some(ty),
            Some(id),
            vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
        ));
        id
    }
}

/// Rewrites a finished kernel module (see the module doc) into its persistent variant.
///
/// # Errors
/// A message when the module is not of the expected shape (no single entry function, or a
/// use of Vulkan's `GlobalInvocationId`/`NumWorkgroups` the loop could not remap).
pub(crate) fn make_persistent(ctx: &mut Ctx) -> Result<(), String> {
    if ctx.module.functions.len() != 1 {
        return Err("expected exactly one function".into());
    }
    for b in [BuiltIn::GlobalInvocationId, BuiltIn::NumWorkgroups] {
        if !builtin_vars(ctx, b).is_empty() {
            return Err(format!("the kernel reads Vulkan's {b:?}"));
        }
    }
    let body_id = ctx.module.functions[0]
        .def
        .as_ref()
        .and_then(|d| d.result_id)
        .ok_or("function without id")?;
    let u32t = ctx.t_int(32);
    let u64t = ctx.t_int(64);
    let v3u32 = ctx.t_vec(u32t, 3);
    let bool_t = ctx.t_bool();
    let void = ctx.t_void();
    let fn_ty = ctx.t_fn(void, &[]);

    // The current virtual group, read wherever the body read WorkgroupId.
    let mut wg_vars = builtin_vars(ctx, BuiltIn::WorkgroupId);
    let current_ptr = ctx.t_ptr(StorageClass::Private, v3u32);
    let current = ctx.id();
    ctx.module.types_global_values.push(inst(
        Op::Variable,
        Some(current_ptr),
        Some(current),
        vec![Operand::StorageClass(StorageClass::Private)],
    ));
    for i in ctx.module.functions[0]
        .blocks
        .iter_mut()
        .flat_map(|b| b.instructions.iter_mut())
    {
        if i.class.opcode == Op::Load && id_operand(i, 0).is_some_and(|p| wg_vars.contains(&p)) {
            i.operands[0] = Operand::IdRef(current);
        }
    }
    if wg_vars.is_empty() {
        wg_vars.push(input_builtin_var(ctx, BuiltIn::WorkgroupId, v3u32));
    }
    let num_wg = input_builtin_var(ctx, BuiltIn::NumWorkgroups, v3u32);
    let found = super::entry::push_constant_var(ctx);
    let pc_var = match found {
        Some(v) => v,
        None => super::entry::push_constant_block(ctx),
    };
    let uses_local_memory = ctx.module.types_global_values.iter().any(|i| {
        i.class.opcode == Op::Variable
            && i.operands.first() == Some(&Operand::StorageClass(StorageClass::Workgroup))
    });

    // Constants and pointer types the loop needs (created before the code that uses them).
    let c0 = ctx.c_u32(0);
    let pc_u64 = ctx.t_ptr(StorageClass::PushConstant, u64t);
    let psb_u32 = ctx.t_ptr(StorageClass::PhysicalStorageBuffer, u32t);
    let offsets: Vec<Word> = (0..3).map(|d| ctx.c_u64(NUM_GROUPS + 4 * d)).collect();
    let scope_wg = ctx.c_u32(Scope::Workgroup as u32);
    let semantics =
        ctx.c_u32((MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::WORKGROUP_MEMORY).bits());

    // Entry block: launched group index, launched group count, total virtual groups.
    let (l_entry, l_header, l_body, l_cont, l_merge) =
        (ctx.id(), ctx.id(), ctx.id(), ctx.id(), ctx.id());
    let mut c = Code {
        ctx,
        out: Vec::new(),
    };
    let wid = c.op(Op::Load, v3u32, &[wg_vars[0]]);
    let wx = c.extract(u32t, wid, 0);
    let v0 = c.op(Op::UConvert, u64t, &[wx]);
    let nwg = c.op(Op::Load, v3u32, &[num_wg]);
    let lx = c.extract(u32t, nwg, 0);
    let launched = c.op(Op::UConvert, u64t, &[lx]);
    let hp = c.op(Op::AccessChain, pc_u64, &[pc_var, c0]);
    let header = c.op(Op::Load, u64t, &[hp]);
    let mut n = Vec::new();
    for off in &offsets {
        let a = c.op(Op::IAdd, u64t, &[header, *off]);
        let p = c.op(Op::ConvertUToPtr, psb_u32, &[a]);
        let id = c.ctx.id();
        c.out.push(inst(
            Op::Load,
            Some(u32t),
            Some(id),
            vec![
                Operand::IdRef(p),
                Operand::MemoryAccess(MemoryAccess::ALIGNED),
                Operand::LiteralBit32(4),
            ],
        ));
        n.push(c.op(Op::UConvert, u64t, &[id]));
    }
    let nxy = c.op(Op::IMul, u64t, &[n[0], n[1]]);
    let total = c.op(Op::IMul, u64t, &[nxy, n[2]]);
    c.out
        .push(inst(Op::Branch, None, None, vec![Operand::IdRef(l_header)]));
    let entry_code = std::mem::take(&mut c.out);

    // Loop header: v < total?
    let v = c.ctx.id();
    let v_next = c.ctx.id();
    c.out.push(inst(
        Op::Phi,
        Some(u64t),
        Some(v),
        vec![
            Operand::IdRef(v0),
            Operand::IdRef(l_entry),
            Operand::IdRef(v_next),
            Operand::IdRef(l_cont),
        ],
    ));
    let more = c.op(Op::ULessThan, bool_t, &[v, total]);
    c.out.push(inst(
        Op::LoopMerge,
        None,
        None,
        vec![
            Operand::IdRef(l_merge),
            Operand::IdRef(l_cont),
            Operand::LoopControl(LoopControl::NONE),
        ],
    ));
    c.out.push(inst(
        Op::BranchConditional,
        None,
        None,
        vec![
            Operand::IdRef(more),
            Operand::IdRef(l_body),
            Operand::IdRef(l_merge),
        ],
    ));
    let header_code = std::mem::take(&mut c.out);

    // Body: the virtual group's id, the kernel, a barrier before local memory is reused.
    let x = c.op(Op::UMod, u64t, &[v, n[0]]);
    let t = c.op(Op::UDiv, u64t, &[v, n[0]]);
    let y = c.op(Op::UMod, u64t, &[t, n[1]]);
    let z = c.op(Op::UDiv, u64t, &[t, n[1]]);
    let comps: Vec<Word> = [x, y, z]
        .iter()
        .map(|w| c.op(Op::UConvert, u32t, &[*w]))
        .collect();
    let g = c.op(Op::CompositeConstruct, v3u32, &comps);
    c.out.push(inst(
        Op::Store,
        None,
        None,
        vec![Operand::IdRef(current), Operand::IdRef(g)],
    ));
    c.op(Op::FunctionCall, void, &[body_id]);
    if uses_local_memory {
        c.out.push(inst(
            Op::ControlBarrier,
            None,
            None,
            vec![
                Operand::IdRef(scope_wg),
                Operand::IdRef(scope_wg),
                Operand::IdRef(semantics),
            ],
        ));
    }
    c.out
        .push(inst(Op::Branch, None, None, vec![Operand::IdRef(l_cont)]));
    let body_code = std::mem::take(&mut c.out);

    // Continue: next virtual group of this launched group.
    c.out.push(inst(
        Op::IAdd,
        Some(u64t),
        Some(v_next),
        vec![Operand::IdRef(v), Operand::IdRef(launched)],
    ));
    c.out
        .push(inst(Op::Branch, None, None, vec![Operand::IdRef(l_header)]));
    let cont_code = std::mem::take(&mut c.out);

    let main_id = ctx.id();
    let block = |label: Word, instructions: Vec<Instruction>| Block {
        label: Some(inst(Op::Label, None, Some(label), vec![])),
        instructions,
    };
    let main = Function {
        def: Some(inst(
            Op::Function,
            Some(void),
            Some(main_id),
            vec![
                Operand::FunctionControl(FunctionControl::NONE),
                Operand::IdRef(fn_ty),
            ],
        )),
        end: Some(inst(Op::FunctionEnd, None, None, vec![])),
        parameters: Vec::new(),
        blocks: vec![
            block(l_entry, entry_code),
            block(l_header, header_code),
            block(l_body, body_code),
            block(l_cont, cont_code),
            block(l_merge, vec![inst(Op::Return, None, None, vec![])]),
        ],
    };
    ctx.module.functions.push(main);

    // The new function is the entry point; its interface lists every module-scope variable.
    for m in ctx.module.execution_modes.iter_mut() {
        if id_operand(m, 0) == Some(body_id) {
            m.operands[0] = Operand::IdRef(main_id);
        }
    }
    let vars: Vec<Word> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter_map(|i| i.result_id)
        .collect();
    let ep = ctx
        .module
        .entry_points
        .first_mut()
        .ok_or("no entry point")?;
    ep.operands[1] = Operand::IdRef(main_id);
    ep.operands.truncate(3);
    ep.operands.extend(vars.into_iter().map(Operand::IdRef));
    let bound = ctx.bound();
    if let Some(h) = ctx.module.header.as_mut() {
        h.bound = bound;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::compiler::{compile_source, find_tools, persistent_variant, DeviceCaps};

    /// Every kernel's persistent variant passes spirv-val (Vulkan 1.2) and keeps one entry.
    #[test]
    fn variants_validate() {
        let src = r#"
            __kernel void ids(__global uint *o) {
                size_t i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
                o[i] = get_group_id(0) + get_group_id(1) * 7 + get_group_id(2) * 49 + get_local_id(0);
            }
            __kernel void local_sum(__global int *o, __local int *t) {
                t[get_local_id(0)] = (int)get_global_id(0);
                barrier(CLK_LOCAL_MEM_FENCE);
                if (get_local_id(0) == 0) {
                    int s = 0;
                    for (size_t k = 0; k < get_local_size(0); k++) s += t[k];
                    o[get_group_id(0)] = s;
                }
            }
            __kernel void static_local(__global int *o) {
                __local int x[4];
                x[get_local_id(0) & 3] = 1;
                barrier(CLK_LOCAL_MEM_FENCE);
                o[get_global_id(0)] = x[0];
            }
            __kernel void early(__global int *o, int n) {
                if (get_global_id(0) >= n) return;
                atomic_add(o, 1);
            }
            __kernel void nothing() {}
        "#;
        let tools = find_tools().expect("clang-15, opt-15 and llvm-spirv-15");
        let p = compile_source(&tools, src, "", &DeviceCaps::default()).expect("build");
        for k in &p.kernels {
            let v = persistent_variant(&k.spirv).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            let m = rspirv::dr::load_words(&v).expect("parse");
            assert_eq!(m.entry_points.len(), 1, "{}", k.name);
            assert_eq!(m.functions.len(), 2, "{}", k.name);
        }
    }
}
