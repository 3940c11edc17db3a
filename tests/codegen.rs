//! The lowered SPIR-V of vkcl-bench's kernels (`cts-runner/src/bin/vkcl-bench/workloads.rs`),
//! compiled as for lavapipe (`DeviceCaps::default()`), keeps the shapes that make them fast
//! (issue 15, docs/performance.md "Kernel code, session 11"): the copy kernel moves 128-bit
//! vectors, SGEMM reaches `__local` tiles through `OpAccessChain` on typed Workgroup arrays,
//! no loop reloads launch facts or kernel arguments, and the FP32 kernel's loop is eight
//! `float4` multiply-adds that the driver may fuse. No device is needed: these inspect modules.

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// The lowered module of the one kernel of `src`.
fn lowered(src: &str) -> Module {
    let tools = vkcl::compiler::find_tools().expect("clang-15, opt-15, llvm-spirv-15");
    let caps = vkcl::compiler::DeviceCaps::default();
    let p = vkcl::compiler::compile_source(&tools, src, "", &caps)
        .unwrap_or_else(|e| panic!("build failed: {}", e.log));
    assert_eq!(p.kernels.len(), 1);
    rspirv::dr::load_words(&p.kernels[0].spirv).expect("a module")
}

fn id(i: &Instruction, k: usize) -> Word {
    match i.operands.get(k) {
        Some(Operand::IdRef(w)) => *w,
        o => panic!("operand {k} of {i:?}: {o:?}"),
    }
}

/// Every instruction of the kernel function with the index of its block.
fn code(m: &Module) -> Vec<(usize, &Instruction)> {
    m.functions[0]
        .blocks
        .iter()
        .enumerate()
        .flat_map(|(b, blk)| blk.instructions.iter().map(move |i| (b, i)))
        .collect()
}

/// Indices of the blocks inside loops: from each header to its merge block, in the
/// function's block order (the structurizer emits a loop's blocks before its merge).
fn loop_blocks(m: &Module) -> HashSet<usize> {
    let blocks = &m.functions[0].blocks;
    let index: HashMap<Word, usize> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (b.label.as_ref().unwrap().result_id.unwrap(), i))
        .collect();
    let mut inside = HashSet::new();
    for (h, b) in blocks.iter().enumerate() {
        if let Some(lm) = b
            .instructions
            .iter()
            .find(|i| i.class.opcode == Op::LoopMerge)
        {
            let merge = index[&id(lm, 0)];
            assert!(merge > h, "a loop's merge block before its header");
            inside.extend(h..merge);
        }
    }
    inside
}

/// Result type of each id defined in the function or globally.
fn types(m: &Module) -> HashMap<Word, Word> {
    m.types_global_values
        .iter()
        .chain(
            m.functions[0]
                .blocks
                .iter()
                .flat_map(|b| b.instructions.iter()),
        )
        .filter_map(|i| Some((i.result_id?, i.result_type?)))
        .collect()
}

/// The global definition of `id`.
fn def(m: &Module, id: Word) -> &Instruction {
    m.types_global_values
        .iter()
        .find(|i| i.result_id == Some(id))
        .unwrap_or_else(|| panic!("no global %{id}"))
}

/// The storage class of pointer type `ty`.
fn storage(m: &Module, ty: Word) -> StorageClass {
    match def(m, ty).operands[0] {
        Operand::StorageClass(s) => s,
        _ => unreachable!(),
    }
}

/// Whether type `ty` is a vector of `n` 32-bit components.
fn is_vec32(m: &Module, ty: Word, n: u32) -> bool {
    let t = def(m, ty);
    t.class.opcode == Op::TypeVector && t.operands[1] == Operand::LiteralBit32(n) && {
        let e = def(m, id(t, 0));
        e.operands[0] == Operand::LiteralBit32(32)
    }
}

const COPY: &str = "__kernel void copy(__global const uint4 *a, __global uint4 *b) {\n\
    size_t i = get_global_id(0); b[i] = a[i]; }\n";

#[test]
fn copy_kernel_moves_128_bit_vectors() {
    let m = lowered(COPY);
    let ty = types(&m);
    let code = code(&m);
    let loads: Vec<_> = code
        .iter()
        .filter(|(_, i)| i.class.opcode == Op::Load && is_vec32(&m, i.result_type.unwrap(), 4))
        .collect();
    let stores: Vec<_> = code
        .iter()
        .filter(|(_, i)| i.class.opcode == Op::Store)
        .collect();
    // One 16-byte load and one 16-byte store, both through global (PhysicalStorageBuffer)
    // pointers and aligned to 16: no component-wise copy.
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(stores.len(), 1, "{stores:?}");
    for (_, i) in loads.iter().chain(stores.iter()) {
        let ptr = id(i, 0);
        assert_eq!(
            storage(&m, ty[&ptr]),
            StorageClass::PhysicalStorageBuffer,
            "{i:?}"
        );
        assert!(
            i.operands.iter().any(|o| *o == Operand::LiteralBit32(16)),
            "not aligned to 16: {i:?}"
        );
    }
    assert!(
        is_vec32(&m, ty[&id(stores[0].1, 1)], 4),
        "{:?}",
        stores[0].1
    );
    assert!(
        !code.iter().any(|(_, i)| match i.class.opcode {
            Op::CompositeConstruct => is_vec32(&m, i.result_type.unwrap(), 4),
            Op::CompositeExtract => is_vec32(&m, ty[&id(i, 0)], 4),
            _ => false,
        }),
        "the uint4 is taken apart or put together"
    );
}

const SGEMM: &str = "#define T 16\n\
__kernel void sgemm(__global const float *A, __global const float *B, __global float *C, int n) {\n\
    __local float As[T][T];\n\
    __local float Bs[T][T];\n\
    int lx = get_local_id(0), ly = get_local_id(1);\n\
    int col = get_global_id(0), row = get_global_id(1);\n\
    float acc = 0.0f;\n\
    for (int t = 0; t < n; t += T) {\n\
        As[ly][lx] = A[row * n + t + lx];\n\
        Bs[ly][lx] = B[(t + ly) * n + col];\n\
        barrier(CLK_LOCAL_MEM_FENCE);\n\
        for (int k = 0; k < T; k++) acc += As[ly][k] * Bs[k][lx];\n\
        barrier(CLK_LOCAL_MEM_FENCE);\n\
    }\n\
    C[row * n + col] = acc;\n\
}\n";

#[test]
fn sgemm_tiles_are_typed_workgroup_arrays() {
    let m = lowered(SGEMM);
    let ty = types(&m);
    let code = code(&m);
    let defs: HashMap<Word, &Instruction> = code
        .iter()
        .filter_map(|(_, i)| Some((i.result_id?, *i)))
        .collect();
    let workgroup_vars: HashSet<Word> = m
        .types_global_values
        .iter()
        .filter(|i| {
            i.class.opcode == Op::Variable
                && i.operands[0] == Operand::StorageClass(StorageClass::Workgroup)
        })
        .filter_map(|i| i.result_id)
        .collect();
    assert_eq!(workgroup_vars.len(), 2, "As and Bs");
    let (mut loads, mut stores) = (0, 0);
    for (_, i) in &code {
        let ptr = match i.class.opcode {
            Op::Load => id(i, 0),
            Op::Store => id(i, 0),
            _ => continue,
        };
        if storage(&m, ty[&ptr]) != StorageClass::Workgroup {
            continue;
        }
        // Every access: an OpAccessChain straight on As or Bs, no integer address.
        let chain = defs[&ptr];
        assert_eq!(chain.class.opcode, Op::AccessChain, "{chain:?}");
        assert!(workgroup_vars.contains(&id(chain, 0)), "{chain:?}");
        if i.class.opcode == Op::Load {
            loads += 1;
        } else {
            stores += 1;
        }
    }
    // The k loop unrolled: 16 elements of each tile read, one of each written, per tile step.
    assert_eq!((loads, stores), (32, 2));
    assert!(
        !code.iter().any(|(_, i)| i.class.opcode == Op::ConvertUToPtr
            && storage(&m, i.result_type.unwrap()) == StorageClass::Workgroup),
        "a Workgroup pointer made from an integer"
    );
}

/// The FP32 kernel of vkcl-bench (`compute_source(512)`).
fn flops_source() -> String {
    let mut s = String::from(
        "__kernel void flops(__global float *out, float a, float b) {\n\
         float x0 = get_global_id(0) * 1e-6f;\n",
    );
    for c in 0..8 {
        s.push_str(&format!(
            "    float4 v{c} = (float4)(x0 + {c}.0f, x0 - {c}.0f, x0 * {c}.5f, -x0);\n"
        ));
    }
    s.push_str("    for (int i = 0; i < 512; i++) {\n");
    for c in 0..8 {
        s.push_str(&format!("        v{c} = v{c} * a + b;\n"));
    }
    s.push_str("    }\n    float4 t = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;\n");
    s.push_str("    out[get_global_id(0)] = t.x + t.y + t.z + t.w;\n}\n");
    s
}

#[test]
fn loops_do_not_reload_launch_facts_or_arguments() {
    for src in [SGEMM.to_string(), flops_source()] {
        let m = lowered(&src);
        let ty = types(&m);
        let inside = loop_blocks(&m);
        assert!(!inside.is_empty(), "no loop in {src}");
        for (b, i) in code(&m) {
            if !inside.contains(&b) {
                continue;
            }
            // Push constants (header and argument addresses, group offset) and the 64-bit
            // values of the launch header and argument block (buffer addresses, global
            // offset) are read once, before the loops.
            if i.class.opcode == Op::AccessChain {
                let base = ty[&id(i, 0)];
                assert_ne!(storage(&m, base), StorageClass::PushConstant, "{i:?}");
            }
            if i.class.opcode == Op::Load {
                let t = def(&m, i.result_type.unwrap());
                assert!(
                    !(t.class.opcode == Op::TypeInt && t.operands[0] == Operand::LiteralBit32(64)),
                    "a 64-bit load in a loop: {i:?}"
                );
            }
        }
    }
}

#[test]
fn fp32_loop_is_eight_float4_multiply_adds_left_to_fuse() {
    let m = lowered(&flops_source());
    let inside = loop_blocks(&m);
    let exact: HashSet<Word> = m
        .annotations
        .iter()
        .filter(|i| i.operands.get(1) == Some(&Operand::Decoration(Decoration::NoContraction)))
        .map(|i| id(i, 0))
        .collect();
    let mut ops: HashMap<Op, usize> = HashMap::new();
    for (b, i) in code(&m) {
        // The phis and the vectors taken apart for them and rebuilt from them (see
        // `loops_carry_scalars_not_vectors`) are not arithmetic.
        let plumbing = matches!(
            i.class.opcode,
            Op::Phi | Op::CompositeExtract | Op::CompositeConstruct
        );
        if !inside.contains(&b) || plumbing {
            continue;
        }
        if let Some(t) = i.result_type {
            assert_ne!(
                def(&m, t).class.opcode,
                Op::TypeFloat,
                "scalar float arithmetic in the loop: {i:?}"
            );
            if is_vec32(&m, t, 4) {
                *ops.entry(i.class.opcode).or_default() += 1;
                assert!(
                    !exact.contains(&i.result_id.unwrap()),
                    "NoContraction: {i:?}"
                );
            }
        }
    }
    // a * b + c on float4, as written: one multiply and one add each (the driver may fuse
    // them: OpenCL C FP_CONTRACT), nothing split into components or converted.
    assert_eq!(
        ops,
        HashMap::from([(Op::FMul, 8), (Op::FAdd, 8)]),
        "float4 operations in the loop"
    );
}

/// The FP32 loop carries its eight `float4`s as 32 scalar phis (and the counter), not as vector
/// phis: with vector phis llvmpipe kept every value that leaves the loop in a register of its
/// own, written under the execution mask each pass (2x the hot loop's instructions, 0.4x
/// rusticl's speed; `compiler::lower::scalarphi`, docs/performance.md "lavapipe 25.0.7
/// against rusticl of the same Mesa"). Each vector is rebuilt once after the header's phis.
#[test]
fn loops_carry_scalars_not_vectors() {
    let m = lowered(&flops_source());
    let ty = types(&m);
    let phis: Vec<&Instruction> = code(&m)
        .into_iter()
        .filter(|(_, i)| i.class.opcode == Op::Phi)
        .map(|(_, i)| i)
        .collect();
    for p in &phis {
        let t = def(&m, p.result_type.unwrap());
        assert_ne!(t.class.opcode, Op::TypeVector, "a vector phi: {p:?}");
    }
    let floats = phis
        .iter()
        .filter(|p| def(&m, p.result_type.unwrap()).class.opcode == Op::TypeFloat)
        .count();
    assert_eq!(floats, 32, "float phis (8 float4 chains)");
    // Each float phi feeds exactly one float4 rebuilt in the header, its components in order.
    let rebuilt: Vec<&Instruction> = code(&m)
        .into_iter()
        .filter(|(_, i)| {
            i.class.opcode == Op::CompositeConstruct
                && is_vec32(&m, i.result_type.unwrap(), 4)
                && i.operands.iter().all(|o| match o {
                    Operand::IdRef(w) => phis.iter().any(|p| p.result_id == Some(*w)),
                    _ => false,
                })
        })
        .map(|(_, i)| i)
        .collect();
    assert_eq!(rebuilt.len(), 8, "float4s rebuilt from the phis");
    let parts: HashSet<Word> = rebuilt
        .iter()
        .flat_map(|r| (0..4).map(|k| id(r, k)))
        .collect();
    assert_eq!(parts.len(), 32, "each float phi in one float4");
    assert!(parts.iter().all(|p| ty[p] == ty[&id(rebuilt[0], 0)]));
}

/// The spec id of `id` (its `SpecId` decoration), if any.
fn spec_id(m: &Module, id: Word) -> Option<u32> {
    m.annotations.iter().find_map(|a| {
        (a.class.opcode == Op::Decorate
            && a.operands[0] == Operand::IdRef(id)
            && a.operands[1] == Operand::Decoration(Decoration::SpecId))
        .then(|| match a.operands[2] {
            Operand::LiteralBit32(n) => n,
            _ => unreachable!(),
        })
    })
}

/// The launch facts of the copy kernel (issue 15, docs/performance.md "The launch ABI"): the
/// enqueued work-group size is a spec constant (no load), and the global offset and group
/// offset are read only where the zero-offset spec constants are false, as the third operand
/// of an `OpSelect` on them, so a pipeline specialized for zero offsets (nearly every launch)
/// reads neither. What is left to load is the argument block: its address and the two buffer
/// addresses.
#[test]
fn copy_kernel_reads_launch_facts_only_for_non_zero_offsets() {
    let m = lowered(COPY);
    let ty = types(&m);
    let code = code(&m);
    let by_id: HashMap<Word, &Instruction> = code
        .iter()
        .filter_map(|(_, i)| Some((i.result_id?, *i)))
        .collect();
    let uses = |v: Word| -> Vec<&Instruction> {
        code.iter()
            .map(|(_, i)| *i)
            .filter(|i| i.operands.contains(&Operand::IdRef(v)))
            .collect()
    };
    let flag = |sid: u32| -> Word {
        m.types_global_values
            .iter()
            .find(|i| {
                i.class.opcode == Op::SpecConstantFalse
                    && spec_id(&m, i.result_id.unwrap()) == Some(sid)
            })
            .and_then(|i| i.result_id)
            .unwrap_or_else(|| panic!("no bool spec constant {sid:#x}"))
    };
    let zero_offset = flag(vkcl::compiler::ZERO_GLOBAL_OFFSET_SPEC_ID);
    let zero_group = flag(vkcl::compiler::ZERO_GROUP_OFFSET_SPEC_ID);
    let enqueued: Vec<u32> = m
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::SpecConstant)
        .filter_map(|i| spec_id(&m, i.result_id?))
        .filter(|s| (0..3).any(|d| *s == vkcl::compiler::ENQUEUED_LOCAL_SIZE_SPEC_ID + d))
        .collect();
    assert_eq!(enqueued.len(), 3, "enqueued-size spec constants");
    // Only under a false flag: a loaded value's every use is `OpSelect flag 0 value`.
    let only_unless = |v: Word, flag: Word, what: &str| {
        let u = uses(v);
        assert!(!u.is_empty(), "{what}: unused");
        for i in u {
            assert!(
                i.class.opcode == Op::Select && id(i, 0) == flag && id(i, 2) == v,
                "{what} used outside a select on its zero flag: {i:?}"
            );
        }
    };
    // Push-constant members: 0 header address, 1 argument block, 2..=4 group offset.
    let mut header_loads = 0;
    let mut arg_loads = 0;
    for (_, i) in &code {
        if i.class.opcode != Op::Load {
            continue;
        }
        let p = by_id.get(&id(i, 0));
        let Some(p) = p else { continue };
        if p.class.opcode == Op::AccessChain
            && storage(&m, ty[&id(p, 0)]) == StorageClass::PushConstant
        {
            let member = def(&m, id(p, 1));
            let Operand::LiteralBit32(n) = member.operands[0] else {
                panic!("member {member:?}")
            };
            if (2..=4).contains(&n) {
                only_unless(i.result_id.unwrap(), zero_group, "group offset");
            }
            continue;
        }
        if p.class.opcode != Op::ConvertUToPtr {
            continue;
        }
        // The address: a push-constant pointer, maybe plus a constant.
        let Some(mut a) = by_id.get(&id(p, 0)).copied() else {
            continue;
        };
        if a.class.opcode == Op::IAdd {
            let Some(b) = by_id.get(&id(a, 0)).copied() else {
                continue;
            };
            a = b;
        }
        let base = a
            .class
            .opcode
            .eq(&Op::Load)
            .then(|| by_id.get(&id(a, 0)))
            .flatten()
            .filter(|b| b.class.opcode == Op::AccessChain);
        let Some(b) = base else { continue };
        match def(&m, id(b, 1)).operands[0] {
            Operand::LiteralBit32(0) => {
                header_loads += 1;
                only_unless(i.result_id.unwrap(), zero_offset, "global offset");
            }
            Operand::LiteralBit32(1) => arg_loads += 1,
            _ => {}
        }
    }
    assert_eq!(
        header_loads, 3,
        "the global offset, x y z, and nothing else of the header"
    );
    assert_eq!(arg_loads, 2, "the two buffer addresses");
}
