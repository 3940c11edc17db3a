//! What the front end makes opt inline and what it finds left called: vkcl emits no
//! `OpFunctionCall` for the program's own functions (see `lower`'s `calls` pass), so every
//! call must be inlined by opt-15 (`frontend::llvm_to_spirv`). Scans of text IR before opt
//! and of Kernel SPIR-V after llvm-spirv.

/// The names of the functions that textual LLVM IR `text` defines with `noinline` or
/// `optnone` in their attribute group (`define ... @f(...) #N`, `attributes #N = { noinline
/// ... }`, as clang writes them), in order of definition. Quoted names (`@"a b"`) are left
/// out: the forced-inline loop of `frontend::llvm_to_spirv` still finds them.
pub(crate) fn noinline_functions(text: &str) -> Vec<String> {
    let groups: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("attributes #"))
        .filter_map(|l| l.split_once(" = {"))
        .filter(|(_, attrs)| {
            attrs
                .split_whitespace()
                .any(|a| a == "noinline" || a == "optnone")
        })
        .map(|(n, _)| n)
        .collect();
    if groups.is_empty() {
        return Vec::new();
    }
    text.lines()
        .filter(|l| l.starts_with("define "))
        .filter_map(|l| {
            let name = l.split_once(" @")?.1;
            let name = &name[..name.find('(')?];
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.$".contains(&b));
            let tail = &l[l.rfind(')')?..];
            let marked = tail
                .split_whitespace()
                .filter_map(|t| t.strip_prefix('#'))
                .any(|g| groups.contains(&g));
            (valid && marked).then(|| name.to_string())
        })
        .collect()
}

/// Textual LLVM IR `text` with its external non-kernel function definitions (`define
/// [dso_local] spir_func`) made `internal`. Nothing outside the program calls them: once
/// inlined into the kernels, opt deletes them instead of optimizing each on its own, and
/// llvm-spirv and the lowering never see them. pyopencl's `bessel_jn` kept 13 such functions
/// (59% of its IR, `bessel_jv` alone as large as the kernel with everything inlined).
/// Definitions with a linkage, visibility or calling convention of their own (kernels, the
/// `weak_odr` functions of IL objects) are left as they are; so are global variables.
pub(crate) fn internalize_functions(text: &str) -> std::borrow::Cow<'_, str> {
    fn external(line: &str) -> Option<&str> {
        let rest = line.strip_prefix("define ")?;
        rest.strip_prefix("dso_local spir_func ")
            .or_else(|| rest.strip_prefix("spir_func "))
    }
    if !text.lines().any(|l| external(l).is_some()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 1024);
    for line in text.split_inclusive('\n') {
        match external(line) {
            Some(rest) => {
                out.push_str("define internal spir_func ");
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The names of the functions with a body that a function other than a kernel's entry wrapper
/// still calls in Kernel SPIR-V `words`, llvm-spirv's own helpers (`spirv.llvm_*`) left out;
/// sorted, without repeats. A plain scan of the words: names (`OpName`), entry points,
/// functions with blocks and calls.
pub(crate) fn not_inlined(words: &[u32]) -> Vec<String> {
    use std::collections::{BTreeSet, HashMap, HashSet};
    const OP_NAME: u32 = 5;
    const OP_ENTRY_POINT: u32 = 15;
    const OP_FUNCTION: u32 = 54;
    const OP_FUNCTION_CALL: u32 = 57;
    const OP_LABEL: u32 = 248;
    let mut names: HashMap<u32, String> = HashMap::new();
    let mut entries = HashSet::new();
    let mut with_body = HashSet::new();
    let mut calls = Vec::new();
    let mut current = 0;
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let op = words[at] & 0xffff;
        let Some(operands) = words.get(at + 1..at + count.max(1)) else {
            break;
        };
        match (op, operands) {
            (OP_NAME, [target, text @ ..]) => {
                let bytes: Vec<u8> = text
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .take_while(|b| *b != 0)
                    .collect();
                names.insert(*target, String::from_utf8_lossy(&bytes).into_owned());
            }
            (OP_ENTRY_POINT, [_, function, ..]) => {
                entries.insert(*function);
            }
            (OP_FUNCTION, [_, id, ..]) => current = *id,
            (OP_LABEL, _) => {
                with_body.insert(current);
            }
            (OP_FUNCTION_CALL, [_, _, callee, ..]) => calls.push((current, *callee)),
            _ => {}
        }
        at += count.max(1);
    }
    let left: BTreeSet<String> = calls
        .into_iter()
        .filter(|(caller, callee)| !entries.contains(caller) && with_body.contains(callee))
        .filter_map(|(_, callee)| names.get(&callee))
        .filter(|n| !n.starts_with("spirv.llvm_"))
        .cloned()
        .collect();
    left.into_iter().collect()
}
