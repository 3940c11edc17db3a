//! `read_image{f,i,ui}` with a sampler (docs/images.md, "Kernel access"): a `sampler_t`
//! argument becomes a `UniformConstant` sampler variable at descriptor set 0, binding = the
//! argument's index (the runtime makes the `VkSampler` of its addressing and filter mode),
//! and each `OpImageSampleExplicitLod` of an image argument (whose `OpSampledImage`
//! [`super::image`] retyped) gets Vulkan coordinates:
//!
//! - Vulkan samplers are always normalized; for a sampler with unnormalized coordinates (the
//!   argument's table entry, a `u32` written per launch) each spatial coordinate is divided
//!   by the image's size (the image's table entry); the array layer stays unnormalized, as in
//!   both APIs;
//! - integer coordinates (OpenCL allows them with unnormalized, nearest samplers) become the
//!   texel centre, `(float)c + 0.5`, divided by the size;
//! - normalized coordinates of `CL_ADDRESS_REPEAT` samplers become `s - floor(s)` and of
//!   `CL_ADDRESS_MIRRORED_REPEAT` ones `|s - 2 rint(s / 2)|`, computed in float as OpenCL C
//!   3.0 8.2 writes them, before Vulkan's own wrap (which then leaves [0, 1] alone but for
//!   1.0, texel `size`, wrapped to 0 or mirrored to `size - 1`, as OpenCL's rules do): Vulkan
//!   wraps `floor(s * size)` instead, so a coordinate just below 0 such as -1e-10, whose
//!   `s - floor(s)` rounds to 1.0 and so reads texel 0 in OpenCL, read texel `size - 1`;
//! - the components the dimension needs only (OpenCL passes `float4` for 2D arrays and 3D);
//! - integer results are read as the image's signed or unsigned sampled type.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Dim, Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// Binds sampler parameter `pid` (of type `pty`, `OpTypeSampler`) to descriptor `binding`;
/// returns the `OpLoad` that now defines it, for the top of the kernel.
pub(super) fn bind_sampler(ctx: &mut Ctx, pid: Word, pty: Word, binding: u32) -> Instruction {
    let ptr_ty = ctx.t_ptr(StorageClass::UniformConstant, pty);
    let var = ctx.id();
    ctx.module.types_global_values.push(inst(
        Op::Variable,
        Some(ptr_ty),
        Some(var),
        vec![Operand::StorageClass(StorageClass::UniformConstant)],
    ));
    ctx.decorate(
        var,
        Decoration::DescriptorSet,
        vec![Operand::LiteralBit32(0)],
    );
    ctx.decorate(
        var,
        Decoration::Binding,
        vec![Operand::LiteralBit32(binding)],
    );
    inst(Op::Load, Some(pty), Some(pid), vec![Operand::IdRef(var)])
}

/// The sampler table value of a sampler state (a `u32`): bit 0 normalized coordinates, bits
/// 1-2 the wrap the lowering applies to normalized coordinates (0 none, 1 repeat, 2 mirrored
/// repeat). `addressing`: the SPIR-V enumerant (`CL_ADDRESS_*` less `CL_ADDRESS_NONE`).
pub(crate) fn sampler_entry(normalized: bool, addressing: u32) -> u32 {
    let wrap = match (normalized, addressing) {
        (true, 3) => 1,
        (true, 4) => 2,
        _ => 0,
    };
    u32::from(normalized) | wrap << 1
}

/// Rewrites every sampled read (module doc). `images`: image parameter -> its table values
/// (order, data type, width, height, depth, array size); `samplers`: sampler parameter ->
/// its table value ([`sampler_entry`]).
///
/// # Errors
/// A message for a sampled read of something other than an image and a sampler argument.
pub(super) fn lower_sampled_reads(
    ctx: &mut Ctx,
    images: &HashMap<Word, [Word; 6]>,
    samplers: &HashMap<Word, Word>,
) -> Result<(), String> {
    let pairs: HashMap<Word, (Word, Word, Word)> = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == Op::SampledImage)
        .filter_map(|i| {
            Some((
                i.result_id?,
                (id_operand(i, 0)?, id_operand(i, 1)?, i.result_type?),
            ))
        })
        .collect();
    if pairs.is_empty() {
        return Ok(());
    }
    let types = ctx.value_types();
    let f32t = ctx.global(Op::TypeFloat, None, vec![Operand::LiteralBit32(32)]);
    let u32t = ctx.t_int(32);
    let bool_t = ctx.t_bool();
    let half = ctx.global(
        Op::Constant,
        Some(f32t),
        vec![Operand::LiteralBit32(0.5f32.to_bits())],
    );
    let zero = ctx.c_u32(0);
    let (one, two) = (ctx.c_u32(1), ctx.c_u32(2));
    let two_f = ctx.global(
        Op::Constant,
        Some(f32t),
        vec![Operand::LiteralBit32(2.0f32.to_bits())],
    );
    let glsl = super::convert::glsl_import(ctx);
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut done = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        let mut out = Vec::with_capacity(b.instructions.len());
        for mut i in std::mem::take(&mut b.instructions) {
            if i.class.opcode != Op::ImageSampleExplicitLod {
                out.push(i);
                continue;
            }
            let si = id_operand(&i, 0).ok_or("sampled read without an image")?;
            let &(img, smp, sty) = pairs.get(&si).ok_or("sampled read of an unknown image")?;
            let (Some(table), Some(&normalized)) = (images.get(&img), samplers.get(&smp)) else {
                return Err(
                    "read_image with a sampler of something other than image and \
                            sampler arguments is not supported"
                        .into(),
                );
            };
            let img_ty = ctx
                .def(sty)
                .and_then(|d| id_operand(d, 0))
                .ok_or("sampled image of unknown type")?;
            let it = ctx.def(img_ty).ok_or("image of unknown type")?.clone();
            let dim = match it.operands.get(1) {
                Some(Operand::Dim(d)) => *d,
                _ => return Err("image type without a dimension".into()),
            };
            let arrayed = lit_operand(&it, 3) == Some(1);
            let sampled_ty = id_operand(&it, 0).ok_or("image without a sampled type")?;
            let spatial = match dim {
                Dim::Dim1D => 1,
                Dim::Dim2D => 2,
                _ => 3,
            };
            let need = spatial + usize::from(arrayed);
            let coord = id_operand(&i, 1).ok_or("sampled read without a coordinate")?;
            let cty = *types.get(&coord).ok_or("coordinate of unknown type")?;
            let (n, comp_ty) = match ctx.def(cty) {
                Some(d) if d.class.opcode == Op::TypeVector => (
                    lit_operand(d, 1).unwrap_or(1) as usize,
                    id_operand(d, 0).unwrap_or(0),
                ),
                _ => (1, cty),
            };
            if n < need {
                return Err(format!("sampled read with a coordinate of {n} components"));
            }
            let int_coord = ctx
                .def(comp_ty)
                .is_some_and(|d| d.class.opcode == Op::TypeInt);
            let mut emit = |ctx: &mut Ctx, op: Op, ty: Word, ops: Vec<Operand>| {
                let id = ctx.id();
                out.push(inst(op, Some(ty), Some(id), ops));
                id
            };
            let norm_bit = emit(
                ctx,
                Op::BitwiseAnd,
                u32t,
                vec![Operand::IdRef(normalized), Operand::IdRef(one)],
            );
            let is_norm = emit(
                ctx,
                Op::INotEqual,
                bool_t,
                vec![Operand::IdRef(norm_bit), Operand::IdRef(zero)],
            );
            let wrap = emit(
                ctx,
                Op::ShiftRightLogical,
                u32t,
                vec![Operand::IdRef(normalized), Operand::IdRef(one)],
            );
            let (is_repeat, is_mirror) = if int_coord {
                (None, None)
            } else {
                let r = emit(
                    ctx,
                    Op::IEqual,
                    bool_t,
                    vec![Operand::IdRef(wrap), Operand::IdRef(one)],
                );
                let m = emit(
                    ctx,
                    Op::IEqual,
                    bool_t,
                    vec![Operand::IdRef(wrap), Operand::IdRef(two)],
                );
                (Some(r), Some(m))
            };
            let mut parts = Vec::with_capacity(need);
            for j in 0..need {
                let c = if n == 1 {
                    coord
                } else {
                    emit(
                        ctx,
                        Op::CompositeExtract,
                        comp_ty,
                        vec![Operand::IdRef(coord), Operand::LiteralBit32(j as u32)],
                    )
                };
                let f = if int_coord {
                    emit(ctx, Op::ConvertSToF, f32t, vec![Operand::IdRef(c)])
                } else {
                    c
                };
                if j >= spatial {
                    parts.push(f);
                    continue;
                }
                let size_u = table[2 + j];
                let size = emit(ctx, Op::ConvertUToF, f32t, vec![Operand::IdRef(size_u)]);
                let part = if int_coord {
                    let centre = emit(
                        ctx,
                        Op::FAdd,
                        f32t,
                        vec![Operand::IdRef(f), Operand::IdRef(half)],
                    );
                    emit(
                        ctx,
                        Op::FDiv,
                        f32t,
                        vec![Operand::IdRef(centre), Operand::IdRef(size)],
                    )
                } else {
                    let q = emit(
                        ctx,
                        Op::FDiv,
                        f32t,
                        vec![Operand::IdRef(f), Operand::IdRef(size)],
                    );
                    // OpenCL's repeat and mirrored repeat of normalized coordinates.
                    const ROUND_EVEN: u32 = 2;
                    const FABS: u32 = 4;
                    const FLOOR: u32 = 8;
                    let glsl_op = |n: u32, a: Word| {
                        vec![
                            Operand::IdRef(glsl),
                            Operand::LiteralExtInstInteger(n),
                            Operand::IdRef(a),
                        ]
                    };
                    let bin = |a: Word, b: Word| vec![Operand::IdRef(a), Operand::IdRef(b)];
                    let fl = emit(ctx, Op::ExtInst, f32t, glsl_op(FLOOR, f));
                    let repeated = emit(ctx, Op::FSub, f32t, bin(f, fl));
                    let h = emit(ctx, Op::FMul, f32t, bin(f, half));
                    let r = emit(ctx, Op::ExtInst, f32t, glsl_op(ROUND_EVEN, h));
                    let t = emit(ctx, Op::FMul, f32t, bin(r, two_f));
                    let d = emit(ctx, Op::FSub, f32t, bin(f, t));
                    let mirrored = emit(ctx, Op::ExtInst, f32t, glsl_op(FABS, d));
                    let (mir, rep) = (is_mirror.unwrap_or(0), is_repeat.unwrap_or(0));
                    let m = emit(
                        ctx,
                        Op::Select,
                        f32t,
                        vec![
                            Operand::IdRef(mir),
                            Operand::IdRef(mirrored),
                            Operand::IdRef(f),
                        ],
                    );
                    let wrapped = emit(
                        ctx,
                        Op::Select,
                        f32t,
                        vec![
                            Operand::IdRef(rep),
                            Operand::IdRef(repeated),
                            Operand::IdRef(m),
                        ],
                    );
                    emit(
                        ctx,
                        Op::Select,
                        f32t,
                        vec![
                            Operand::IdRef(is_norm),
                            Operand::IdRef(wrapped),
                            Operand::IdRef(q),
                        ],
                    )
                };
                parts.push(part);
            }
            let new_coord = if need == 1 {
                parts[0]
            } else {
                let vt = ctx.t_vec(f32t, need as u32);
                emit(
                    ctx,
                    Op::CompositeConstruct,
                    vt,
                    parts.iter().map(|p| Operand::IdRef(*p)).collect(),
                )
            };
            i.operands[1] = Operand::IdRef(new_coord);
            // Integer results in the image's sampled type.
            let rty = i.result_type.ok_or("sampled read without a type")?;
            let signed = ctx
                .def(sampled_ty)
                .is_some_and(|d| d.class.opcode == Op::TypeInt && lit_operand(d, 1) == Some(1));
            if signed {
                let result = i.result_id.ok_or("sampled read without a result")?;
                let v4i = ctx.t_vec(sampled_ty, 4);
                let read = ctx.id();
                i.result_type = Some(v4i);
                i.result_id = Some(read);
                out.push(i);
                out.push(inst(
                    Op::Bitcast,
                    Some(rty),
                    Some(result),
                    vec![Operand::IdRef(read)],
                ));
            } else {
                out.push(i);
            }
        }
        b.instructions = out;
        done.push(b);
    }
    ctx.module.functions[0].blocks = done;
    let _ = u32t;
    Ok(())
}

/// Bindings of inline samplers start at the kernel's argument count: binding
/// `args + code`, `code` = addressing mode (SPIR-V enumerant, 0..=4) * 4 + normalized * 2 +
/// linear, so the runtime reads each one's state back from its binding
/// ([`inline_sampler_bindings`]).
fn inline_code(i: &Instruction) -> Option<u32> {
    let a = match i.operands.first()? {
        Operand::SamplerAddressingMode(m) => *m as u32,
        _ => return None,
    };
    let n = lit_operand(i, 1)?;
    let f = match i.operands.get(2)? {
        Operand::SamplerFilterMode(f) => *f as u32,
        _ => return None,
    };
    Some(a * 4 + n.min(1) * 2 + f.min(1))
}

/// Binds the module's inline samplers (`OpConstantSampler`, from `const sampler_t` in the
/// source) to descriptors at bindings from `args` (see [`inline_code`]) and makes every
/// `OpSampledImage` use a loaded sampler instead. Returns the loads for the top of the
/// kernel, and each loaded sampler with its `normalized` value (a constant) for
/// [`lower_sampled_reads`].
///
/// # Errors
/// A message for an inline sampler of unknown modes.
pub(super) fn bind_inline_samplers(
    ctx: &mut Ctx,
    args: u32,
) -> Result<(Vec<Instruction>, HashMap<Word, Word>), String> {
    let consts: Vec<(Word, Word, u32)> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::ConstantSampler)
        .map(|i| {
            let code = inline_code(i).ok_or("inline sampler of unknown modes")?;
            Ok((i.result_id.unwrap_or(0), i.result_type.unwrap_or(0), code))
        })
        .collect::<Result<_, String>>()?;
    let mut loads = Vec::new();
    let mut normalized = HashMap::new();
    let mut by_const: HashMap<Word, Word> = HashMap::new();
    let mut by_code: HashMap<u32, Word> = HashMap::new();
    for (c, ty, code) in consts {
        let load = match by_code.get(&code) {
            Some(l) => *l,
            None => {
                let l = ctx.id();
                let mut i = bind_sampler(ctx, l, ty, args + code);
                i.result_id = Some(l);
                loads.push(i);
                let n = ctx.c_u32(sampler_entry(code & 2 != 0, code >> 2));
                normalized.insert(l, n);
                by_code.insert(code, l);
                l
            }
        };
        by_const.insert(c, load);
    }
    if by_const.is_empty() {
        return Ok((loads, normalized));
    }
    for i in ctx.module.functions[0]
        .blocks
        .iter_mut()
        .flat_map(|b| b.instructions.iter_mut())
    {
        if i.class.opcode == Op::SampledImage {
            if let Some(l) = id_operand(i, 1).and_then(|s| by_const.get(&s)) {
                i.operands[1] = Operand::IdRef(*l);
            }
        }
    }
    ctx.module
        .types_global_values
        .retain(|i| i.class.opcode != Op::ConstantSampler);
    Ok((loads, normalized))
}

/// The inline samplers of lowered kernel `words` with `args` arguments: (binding,
/// normalized, addressing mode as the SPIR-V enumerant 0..=4, linear) of each binding at or
/// after `args` (see [`bind_inline_samplers`]).
pub(crate) fn inline_sampler_bindings(words: &[u32], args: u32) -> Vec<(u32, bool, u32, bool)> {
    const OP_DECORATE: u32 = 71;
    const BINDING: u32 = 33;
    let mut out = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 {
            break;
        }
        if words[at] & 0xFFFF == OP_DECORATE && count == 4 && words.get(at + 2) == Some(&BINDING) {
            let b = words[at + 3];
            if b >= args && !out.iter().any(|o: &(u32, bool, u32, bool)| o.0 == b) {
                let code = b - args;
                out.push((b, code & 2 != 0, code >> 2, code & 1 != 0));
            }
        }
        at += count;
    }
    out
}
