//! `OpSRem` as `a - (a / b) * b`.
//!
//! NVIDIA's Vulkan driver (580.159, H200) computes `OpSRem` of a negative dividend as the
//! unsigned remainder of its bits: measured 2026-12-02 with operands no compiler can fold,
//! `(-1 + z) % 3` gave 0 and `(-347600648 + z) % 128` gave 120 (`z` a loaded 0), where
//! OpenCL C (and SPIR-V's `OpSRem`: the sign of the dividend) want -1 and -8; NVIDIA's own
//! OpenCL and lavapipe are right, and `OpSDiv` on the same operands is right there too. 27 of
//! 3,000 random kernels of `vkcl-difftest` differed from the host on the H200 through it
//! (docs/difftest.md). Each `OpSRem a b` becomes `a - (a / b) * b` with `OpSDiv`, which
//! equals the truncated remainder for every divisor but 0 and every pair but
//! `(INT_MIN, -1)`, the cases OpenCL C leaves undefined; on every device, so lavapipe runs
//! what NVIDIA runs.

use rspirv::dr::Operand;
use rspirv::spirv::Op;

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Rewrites every `OpSRem` (see the module doc).
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn expand_signed_remainders(ctx: &mut Ctx) -> Result<(), String> {
    let mut functions = std::mem::take(&mut ctx.module.functions);
    for b in functions.iter_mut().flat_map(|f| f.blocks.iter_mut()) {
        if !b.instructions.iter().any(|i| i.class.opcode == Op::SRem) {
            continue;
        }
        let mut out = Vec::with_capacity(b.instructions.len() + 4);
        for i in std::mem::take(&mut b.instructions) {
            let parts = (i.class.opcode == Op::SRem)
                .then(|| {
                    Some((
                        i.result_type?,
                        i.result_id?,
                        id_operand(&i, 0)?,
                        id_operand(&i, 1)?,
                    ))
                })
                .flatten();
            let Some((ty, id, a, d)) = parts else {
                out.push(i);
                continue;
            };
            let q = ctx.id();
            out.push(inst(
                Op::SDiv,
                Some(ty),
                Some(q),
                vec![Operand::IdRef(a), Operand::IdRef(d)],
            ));
            let m = ctx.id();
            out.push(inst(
                Op::IMul,
                Some(ty),
                Some(m),
                vec![Operand::IdRef(q), Operand::IdRef(d)],
            ));
            out.push(inst(
                Op::ISub,
                Some(ty),
                Some(id),
                vec![Operand::IdRef(a), Operand::IdRef(m)],
            ));
        }
        b.instructions = out;
    }
    ctx.module.functions = functions;
    Ok(())
}
