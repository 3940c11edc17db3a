//! `OpBitcast` of an integer scalar to a vector of narrower integers (`as_ushort4(ulong)`,
//! `as_uchar4(uint)`) as shifts and conversions.
//!
//! Lavapipe 22.3.6 computed `x = (ushort4)(65525, 65527, 65524, 0) + as_ushort4(y); x.s0 ^
//! x.s3` as if `x.s3` were 0 when `y` is a constant that only the driver's compiler can fold
//! (`add_sat(0L, LONG_MIN)`, which vkcl lowers to an add and selects; difftest seed 500472),
//! while `x.s0` and `x.s3` alone came out right, a loaded `y` was right, and lavapipe 25.0.7
//! and pocl are right (`tests/bitcast_lanes.rs`: 192 of 576 answers wrong before, on 22.3.6
//! only). Built from shifts the same kernels are right there. Component `i` of the vector
//! holds bits `[i * w, (i + 1) * w)` of the scalar (SPIR-V `OpBitcast`: the lowest-numbered
//! component takes the lowest-order bits), so each becomes `UConvert(x >> (i * w))`, joined by
//! `OpCompositeConstruct`: exact, and done on every device.

use rspirv::dr::Operand;
use rspirv::spirv::Op;

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Rewrites the bitcasts of the module doc.
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn unpack_scalar_bitcasts(ctx: &mut Ctx) -> Result<(), String> {
    let types = ctx.value_types();
    // (result type) -> (component type, count, component width) for vectors of integers.
    let vector_of_ints = |ctx: &Ctx, ty: u32| -> Option<(u32, u32, u32)> {
        let (elem, n) = ctx.vector_shape(ty)?;
        let e = ctx.def(elem)?;
        (e.class.opcode == Op::TypeInt).then_some(())?;
        Some((elem, n, ctx.scalar_width(elem)?))
    };
    let mut functions = std::mem::take(&mut ctx.module.functions);
    for b in functions.iter_mut().flat_map(|f| f.blocks.iter_mut()) {
        if !b.instructions.iter().any(|i| i.class.opcode == Op::Bitcast) {
            continue;
        }
        let mut out = Vec::with_capacity(b.instructions.len());
        for i in std::mem::take(&mut b.instructions) {
            let parts = (i.class.opcode == Op::Bitcast)
                .then(|| {
                    let x = id_operand(&i, 0)?;
                    let xt = *types.get(&x)?;
                    let xd = ctx.def(xt)?;
                    (xd.class.opcode == Op::TypeInt).then_some(())?;
                    let (elem, n, w) = vector_of_ints(ctx, i.result_type?)?;
                    Some((i.result_type?, i.result_id?, x, xt, elem, n, w))
                })
                .flatten();
            let Some((ty, id, x, xt, elem, n, w)) = parts else {
                out.push(i);
                continue;
            };
            let wide = ctx.scalar_width(xt).unwrap_or(0);
            let mut lanes = Vec::with_capacity(n as usize);
            for k in 0..n {
                let mut v = x;
                if k > 0 {
                    let amount = if wide == 64 {
                        ctx.c_u64(u64::from(k * w))
                    } else {
                        ctx.c_u32(k * w)
                    };
                    v = ctx.id();
                    out.push(inst(
                        Op::ShiftRightLogical,
                        Some(xt),
                        Some(v),
                        vec![Operand::IdRef(x), Operand::IdRef(amount)],
                    ));
                }
                let lane = ctx.id();
                out.push(inst(
                    Op::UConvert,
                    Some(elem),
                    Some(lane),
                    vec![Operand::IdRef(v)],
                ));
                lanes.push(Operand::IdRef(lane));
            }
            out.push(inst(Op::CompositeConstruct, Some(ty), Some(id), lanes));
        }
        b.instructions = out;
    }
    ctx.module.functions = functions;
    Ok(())
}
