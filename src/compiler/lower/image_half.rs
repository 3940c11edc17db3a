//! `read_imageh` and `write_imageh` (OpenCL C 3.0 section 6.15.15 with `cl_khr_fp16`;
//! docs/images.md, "Kernel access"): llvm-spirv gives their `OpImageRead`,
//! `OpImageSampleExplicitLod` and `OpImageWrite` `half4` texels, while Vulkan requires a
//! texel of the image's 32-bit sampled type. Before the image arguments are bound
//! ([`super::image`]), each such read is made a `float4` read whose components are rounded
//! to half precision, to nearest with ties to even, on their bits
//! ([`super::convert::round_to_half_precision`], so the driver's own float-to-half
//! rounding does not matter) and then converted exactly; each such write gets the `half4`
//! texel converted exactly to `float4`. The reads and writes are then those of
//! `read_imagef`/`write_imagef`, with their conversions to and from the image's format.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{FPRoundingMode, Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// The component count of `ty` if it is a vector of 16-bit floats (None otherwise).
fn half_vector(ctx: &Ctx, ty: Word) -> Option<u32> {
    let d = ctx.def(ty)?;
    if d.class.opcode != Op::TypeVector {
        return None;
    }
    let c = ctx.def(id_operand(d, 0)?)?;
    if c.class.opcode == Op::TypeFloat && lit_operand(c, 0) == Some(16) {
        lit_operand(d, 1)
    } else {
        None
    }
}

/// Rewrites every image read and write of `half` texels as described in the module doc.
///
/// # Errors
/// A message for a half texel read or written that is not a vector (llvm-spirv writes
/// `half4`).
pub(super) fn widen_half_texels(ctx: &mut Ctx) -> Result<(), String> {
    let types = ctx.value_types();
    let f32t = ctx.global(Op::TypeFloat, None, vec![Operand::LiteralBit32(32)]);
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut done = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        let mut out: Vec<Instruction> = Vec::with_capacity(b.instructions.len());
        for mut i in std::mem::take(&mut b.instructions) {
            match i.class.opcode {
                Op::ImageRead | Op::ImageSampleExplicitLod => {
                    let Some(rty) = i.result_type else {
                        out.push(i);
                        continue;
                    };
                    let Some(n) = half_vector(ctx, rty) else {
                        out.push(i);
                        continue;
                    };
                    let result = i.result_id.ok_or("image read without a result")?;
                    let vf = ctx.t_vec(f32t, n);
                    let wide = ctx.id();
                    i.result_type = Some(vf);
                    i.result_id = Some(wide);
                    out.push(i);
                    let mut parts = Vec::with_capacity(n as usize);
                    for k in 0..n {
                        let c = ctx.id();
                        out.push(inst(
                            Op::CompositeExtract,
                            Some(f32t),
                            Some(c),
                            vec![Operand::IdRef(wide), Operand::LiteralBit32(k)],
                        ));
                        parts.push(super::convert::round_to_half_precision(
                            ctx,
                            &mut out,
                            c,
                            FPRoundingMode::RTE as u32,
                        )?);
                    }
                    let rounded = ctx.id();
                    out.push(inst(
                        Op::CompositeConstruct,
                        Some(vf),
                        Some(rounded),
                        parts.into_iter().map(Operand::IdRef).collect(),
                    ));
                    out.push(inst(
                        Op::FConvert,
                        Some(rty),
                        Some(result),
                        vec![Operand::IdRef(rounded)],
                    ));
                }
                Op::ImageWrite => {
                    let texel = id_operand(&i, 2).ok_or("image write without a texel")?;
                    let tty = types.get(&texel).copied();
                    if let Some(n) = tty.and_then(|t| half_vector(ctx, t)) {
                        let vf = ctx.t_vec(f32t, n);
                        let wide = ctx.id();
                        out.push(inst(
                            Op::FConvert,
                            Some(vf),
                            Some(wide),
                            vec![Operand::IdRef(texel)],
                        ));
                        i.operands[2] = Operand::IdRef(wide);
                    } else if tty.and_then(|t| ctx.def(t)).is_some_and(|d| {
                        d.class.opcode == Op::TypeFloat && lit_operand(d, 0) == Some(16)
                    }) {
                        return Err("image write of a scalar half texel".into());
                    }
                    out.push(i);
                }
                _ => out.push(i),
            }
        }
        b.instructions = out;
        done.push(b);
    }
    ctx.module.functions[0].blocks = done;
    Ok(())
}
