//! llvm-spirv-15 loses the `SaturatedConversion` and `FPRoundingMode` decorations of a
//! conversion whose result is used before the conversion is translated: a phi of a loop
//! header taking it from the latch (`acc = convert_int_sat(x)` in a loop body), or a block
//! laid out before the conversion's own (LLVM's block order need not follow dominance). The
//! translator then makes a forward reference with its own id, gives the conversion that id
//! when it reaches it, and leaves the decorations on the id the conversion had first, which
//! no instruction has (fixed upstream, SPIRV-LLVM-Translator pull request 2606, 2024). The
//! conversion silently becomes a plain one: `convert_int_sat(-741444014703483050L)` gave the
//! low 32 bits (3535955798) instead of `INT_MIN` (difftest seed 400610), and
//! `convert_float_rtz`, `convert_int_rtp(float)` and `convert_int_sat(float)` lost their
//! rounding and saturation the same way.
//!
//! The front end checks llvm-spirv's output with [`lost_conversion_decorations`]; when a
//! decoration lost its target, it translates again from IR rewritten by
//! [`isolate_conversions`], where every saturating or rounding conversion call is used only
//! by a no-op bitcast right after it, so that nothing can refer to the call before it is
//! translated (the bitcast, which carries no decoration, takes the forward references).

use rspirv::spirv::{Decoration, Op};
use std::collections::HashSet;

/// Whether the module `words` (llvm-spirv's output) has an `OpDecorate ... SaturatedConversion`
/// or `OpDecorate ... FPRoundingMode` whose target no instruction defines. A module that does
/// not parse counts as not affected (the later stages report it).
pub(crate) fn lost_conversion_decorations(words: &[u32]) -> bool {
    let Ok(module) = super::spv::load(words) else {
        return false;
    };
    let targets: Vec<u32> = module
        .annotations
        .iter()
        .filter(|a| a.class.opcode == Op::Decorate)
        .filter(|a| {
            matches!(
                a.operands.get(1),
                Some(rspirv::dr::Operand::Decoration(
                    Decoration::SaturatedConversion | Decoration::FPRoundingMode
                ))
            )
        })
        .filter_map(|a| match a.operands.first() {
            Some(rspirv::dr::Operand::IdRef(t)) => Some(*t),
            _ => None,
        })
        .collect();
    if targets.is_empty() {
        return false;
    }
    let defined: HashSet<u32> = module.all_inst_iter().filter_map(|i| i.result_id).collect();
    targets.iter().any(|t| !defined.contains(t))
}

/// The OpenCL C conversion built-in an Itanium-mangled function name (`_Z15convert_int_satl`)
/// calls, when it is one that llvm-spirv decorates: `convert_T` with `_sat` and/or a rounding
/// mode (`_rte`, `_rtz`, `_rtp`, `_rtn`).
fn decorated_conversion(mangled: &str) -> bool {
    let Some(rest) = mangled.strip_prefix("_Z") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Ok(len) = rest[..digits].parse::<usize>() else {
        return false;
    };
    let Some(name) = rest.get(digits..digits + len) else {
        return false;
    };
    name.starts_with("convert_")
        && (name.contains("_sat")
            || ["_rte", "_rtz", "_rtp", "_rtn"]
                .iter()
                .any(|m| name.ends_with(m)))
}

/// Rewrites textual LLVM IR so that the result of every call of a decorated conversion
/// built-in ([`decorated_conversion`]) is used once, by a same-type `bitcast` on the next
/// line that takes over the call's name: `%21 = tail call spir_func i32
/// @_Z15convert_int_satl(i64 %20)` becomes `%vkcl.conv.0 = tail call ...` and `%21 = bitcast
/// i32 %vkcl.conv.0 to i32` (a numbered name stays in sequence, as named values do not
/// count). The bitcast becomes `OpBitcast` to the same type, a valid no-op (also used for
/// `freeze`, `frontend::remove_freeze`). Other lines are unchanged.
pub(crate) fn isolate_conversions(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut n = 0usize;
    for line in text.split_inclusive('\n') {
        match isolate_line(line, n) {
            Some(rewritten) => {
                out.push_str(&rewritten);
                n += 1;
            }
            None => out.push_str(line),
        }
    }
    out
}

/// [`isolate_conversions`] for one line; `None` when it is not such a call.
fn isolate_line(line: &str, n: usize) -> Option<String> {
    let body = line.trim_end_matches(['\n', '\r']);
    let indent = &body[..body.len() - body.trim_start().len()];
    let (lhs, rhs) = body.trim_start().split_once(" = ")?;
    if !lhs.starts_with('%') || lhs.contains(' ') {
        return None;
    }
    let call = rhs.find("call ")?;
    let at = rhs.find(" @_Z")?;
    if at < call {
        return None;
    }
    let name_end = rhs[at + 2..].find('(').map(|e| at + 2 + e)?;
    if !decorated_conversion(&rhs[at + 2..name_end]) {
        return None;
    }
    // The result type is the last thing before the callee: a vector `<N x T>` or one token.
    let before = &rhs[call + "call ".len()..at];
    let ty = if before.ends_with('>') {
        &before[before.rfind('<')?..]
    } else {
        before.rsplit(' ').next()?
    };
    if ty.is_empty() || ty == "void" {
        return None;
    }
    let tmp = format!("%vkcl.conv.{n}");
    Some(format!(
        "{indent}{tmp} = {rhs}\n{indent}{lhs} = bitcast {ty} {tmp} to {ty}{}",
        &line[body.len()..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_names() {
        assert!(decorated_conversion("_Z15convert_int_satl"));
        assert!(decorated_conversion("_Z17convert_float_rtzi"));
        assert!(decorated_conversion("_Z19convert_int4_sat_rteDv4_f"));
        assert!(decorated_conversion("_Z19convert_uchar16_satDv16_i"));
        assert!(!decorated_conversion("_Z11convert_intl"));
        assert!(!decorated_conversion("_Z7add_satii"));
        assert!(!decorated_conversion("_Z3maxll"));
        assert!(!decorated_conversion("_Z99convert_int_sat"));
    }

    #[test]
    fn calls_are_isolated_and_names_kept() {
        let ir = "  %21 = tail call spir_func i32 @_Z15convert_int_satl(i64 noundef %20) #3\n\
                  %22 = add nsw i32 %21, 1\n\
                  \x20 %v = call spir_func zeroext <4 x i8> @_Z18convert_uchar4_satDv4_i(<4 x i32> %x), !dbg !7\n\
                  \x20 %w = call spir_func i64 @_Z12convert_longi(i32 %y)\n";
        let out = isolate_conversions(ir);
        let want = "  %vkcl.conv.0 = tail call spir_func i32 @_Z15convert_int_satl(i64 noundef %20) #3\n\
                    \x20 %21 = bitcast i32 %vkcl.conv.0 to i32\n\
                    %22 = add nsw i32 %21, 1\n\
                    \x20 %vkcl.conv.1 = call spir_func zeroext <4 x i8> @_Z18convert_uchar4_satDv4_i(<4 x i32> %x), !dbg !7\n\
                    \x20 %v = bitcast <4 x i8> %vkcl.conv.1 to <4 x i8>\n\
                    \x20 %w = call spir_func i64 @_Z12convert_longi(i32 %y)\n";
        assert_eq!(out, want);
        // Declarations and plain conversions stay.
        let decl = "declare spir_func i32 @_Z15convert_int_satl(i64 noundef) #2\n";
        assert_eq!(isolate_conversions(decl), decl);
    }
}
