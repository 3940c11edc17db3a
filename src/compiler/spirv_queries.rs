//! What SPIR-V vkcl's IL path (`clCreateProgramWithIL`) accepts, for `cl_khr_spirv_queries`
//! (`CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR`, `CL_DEVICE_SPIRV_EXTENSIONS_KHR`,
//! `CL_DEVICE_SPIRV_CAPABILITIES_KHR`; OpenCL 3.1 API section 4.2 and the extension's
//! specification).
//!
//! The lists follow from the device's OpenCL extensions and features, as the OpenCL SPIR-V
//! environment specification ties them (the Khronos CTS's `spirv_query_requirements` checks
//! the same table), and hold only what the IL path builds, each covered by a test that runs
//! such a module against host answers: the OpenCL capabilities every full-profile device has
//! (`tests/spirv_il.rs` and the CTS's `spirv_new`), `Groups` (work-group collectives through
//! the IL library, `tests/spirv_il.rs`; sub-group ones as llvm-spirv-15 reads them),
//! `SPV_KHR_integer_dot_product` (`tests/spirv_il_dot.rs`), `SPV_KHR_bit_instructions`, the
//! sub-group `GroupNonUniform*` capabilities of the claimed `cl_khr_subgroup_*` extensions,
//! `SPV_KHR_expect_assume`, `SPV_KHR_linkonce_odr` and `SPV_KHR_no_integer_wrap_decoration`
//! (`tests/spirv_il.rs`). Not listed, because not supported: images, pipes, device-side
//! enqueue, the generic address space (`GenericPointer`), float atomics' capabilities.

use rspirv::spirv::Capability;
use std::ffi::CStr;

/// The three answers of `cl_khr_spirv_queries` for one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpirvQueries {
    /// Extended instruction sets an IL module may import.
    pub extended_instruction_sets: Vec<&'static CStr>,
    /// SPIR-V extensions an IL module may declare.
    pub extensions: Vec<&'static CStr>,
    /// SPIR-V capabilities an IL module may declare (`SpvCapability` values).
    pub capabilities: Vec<u32>,
}

/// The answers for a device that reports the OpenCL extensions and OpenCL C features in
/// `names` (`CL_DEVICE_EXTENSIONS` and `CL_DEVICE_OPENCL_C_FEATURES` names) and, with
/// `il` false (no compiler tools: `CL_DEVICE_IL_VERSION` is empty), nothing at all.
pub fn spirv_queries(names: &[&str], il: bool) -> SpirvQueries {
    if !il {
        return SpirvQueries {
            extended_instruction_sets: Vec::new(),
            extensions: Vec::new(),
            capabilities: Vec::new(),
        };
    }
    let has = |n: &str| names.contains(&n);
    use Capability as C;
    let mut caps = vec![
        C::Addresses,
        C::Float16Buffer,
        C::Int16,
        C::Int8,
        C::Kernel,
        C::Linkage,
        C::Vector16,
    ];
    let mut exts: Vec<&'static CStr> = Vec::new();
    let mut add = |on: bool, ext: Option<&'static CStr>, more: &[C]| {
        if on {
            exts.extend(ext);
            caps.extend_from_slice(more);
        }
    };
    add(has("__opencl_c_int64"), None, &[C::Int64]);
    let subgroups = has("__opencl_c_subgroups");
    add(
        subgroups || has("__opencl_c_work_group_collective_functions"),
        None,
        &[C::Groups],
    );
    // SPIR-V 1.1 and later with sub-groups (CL_DEVICE_IL_VERSION lists 1.0 to 1.4).
    add(subgroups, None, &[C::SubgroupDispatch]);
    add(has("cl_khr_fp16"), None, &[C::Float16]);
    add(has("cl_khr_fp64"), None, &[C::Float64]);
    add(
        has("cl_khr_int64_base_atomics") || has("cl_khr_int64_extended_atomics"),
        None,
        &[C::Int64Atomics],
    );
    add(
        has("cl_khr_expect_assume"),
        Some(c"SPV_KHR_expect_assume"),
        &[C::ExpectAssumeKHR],
    );
    add(
        has("cl_khr_extended_bit_ops"),
        Some(c"SPV_KHR_bit_instructions"),
        &[C::BitInstructions],
    );
    // Both input forms (CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR reports both).
    add(
        has("cl_khr_integer_dot_product"),
        Some(c"SPV_KHR_integer_dot_product"),
        &[
            C::DotProduct,
            C::DotProductInput4x8BitPacked,
            C::DotProductInput4x8Bit,
        ],
    );
    add(
        has("cl_khr_spirv_linkonce_odr"),
        Some(c"SPV_KHR_linkonce_odr"),
        &[],
    );
    add(
        has("cl_khr_spirv_no_integer_wrap_decoration"),
        Some(c"SPV_KHR_no_integer_wrap_decoration"),
        &[],
    );
    add(
        has("cl_khr_subgroup_ballot"),
        None,
        &[C::GroupNonUniformBallot],
    );
    add(
        has("cl_khr_subgroup_clustered_reduce"),
        None,
        &[C::GroupNonUniformClustered],
    );
    add(
        has("cl_khr_subgroup_non_uniform_arithmetic"),
        None,
        &[C::GroupNonUniformArithmetic],
    );
    add(
        has("cl_khr_subgroup_non_uniform_vote"),
        None,
        &[C::GroupNonUniform, C::GroupNonUniformVote],
    );
    add(
        has("cl_khr_subgroup_rotate"),
        Some(c"SPV_KHR_subgroup_rotate"),
        &[C::GroupNonUniformRotateKHR],
    );
    add(
        has("cl_khr_subgroup_shuffle"),
        None,
        &[C::GroupNonUniformShuffle],
    );
    add(
        has("cl_khr_subgroup_shuffle_relative"),
        None,
        &[C::GroupNonUniformShuffleRelative],
    );
    // Every GroupNonUniform* capability implies GroupNonUniform.
    let non_uniform = [
        C::GroupNonUniformBallot,
        C::GroupNonUniformClustered,
        C::GroupNonUniformArithmetic,
        C::GroupNonUniformShuffle,
        C::GroupNonUniformShuffleRelative,
        C::GroupNonUniformRotateKHR,
    ];
    if caps.iter().any(|c| non_uniform.contains(c)) && !caps.contains(&C::GroupNonUniform) {
        caps.push(C::GroupNonUniform);
    }
    SpirvQueries {
        extended_instruction_sets: vec![c"OpenCL.std"],
        extensions: exts,
        capabilities: caps.into_iter().map(|c| c as u32).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_follow_the_device() {
        let none = spirv_queries(&["__opencl_c_int64"], false);
        assert!(none.capabilities.is_empty() && none.extensions.is_empty());
        assert!(none.extended_instruction_sets.is_empty());
        let base = spirv_queries(&["__opencl_c_int64"], true);
        assert_eq!(base.extended_instruction_sets, vec![c"OpenCL.std"]);
        assert!(base.extensions.is_empty());
        assert!(base.capabilities.contains(&(Capability::Int64 as u32)));
        assert!(!base.capabilities.contains(&(Capability::Groups as u32)));
        let more = spirv_queries(
            &[
                "__opencl_c_int64",
                "__opencl_c_subgroups",
                "cl_khr_subgroup_rotate",
                "cl_khr_integer_dot_product",
            ],
            true,
        );
        for c in [
            Capability::Groups,
            Capability::SubgroupDispatch,
            Capability::GroupNonUniformRotateKHR,
            Capability::GroupNonUniform,
            Capability::DotProduct,
        ] {
            assert!(more.capabilities.contains(&(c as u32)), "{c:?}");
        }
        assert_eq!(
            more.extensions,
            vec![c"SPV_KHR_integer_dot_product", c"SPV_KHR_subgroup_rotate"]
        );
    }
}
