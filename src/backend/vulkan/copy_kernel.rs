//! Buffer copies as a compute shader (issue 19: `clEnqueueCopyBuffer` at a copy kernel's
//! speed). NVIDIA's `vkCmdCopyBuffer` ran at 600-820 GB/s on the H200 where a copy kernel ran
//! at 3,000-3,700 and NVIDIA's OpenCL at 3,400-4,100 (docs/performance.md), so on NVIDIA a
//! large copy whose ranges are 16-byte aligned is a dispatch of this shader: each invocation
//! loads 16 bytes through the source's device address and stores them through the
//! destination's (`PhysicalStorageBuffer` pointers, `Aligned 16`). Other copies, and every copy
//! on other drivers (lavapipe's `vkCmdCopyBuffer` is a `memcpy`), stay `vkCmdCopyBuffer`.
//! Only copies between `DEVICE_LOCAL` buffers: on a discrete GPU the host's staging buffers live
//! in system memory, and their copies stay on the copy engine. `VKCL_COPY_KERNEL=1` or `0`
//! forces the choice (docs/settings.md).
//!
//! The module is built here with rspirv (SPIR-V 1.5, `GLCompute`, 64 invocations per group);
//! push constants: source address (u64, offset 0), destination address (u64, 8), number of
//! 16-byte words (u32, 16), invocations per row of groups (u32, 20). A copy of more than 65,535
//! groups is a 2D dispatch; invocation (x, y) copies word y * row + x.

use ash::vk;
use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, MemoryAccess, MemoryModel, SelectionControl, StorageClass,
};

/// Invocations per work-group of the copy shader.
pub const GROUP: u64 = 64;
/// The smallest copy the shader takes: below it a dispatch's fixed cost is not repaid.
pub const MIN_BYTES: u64 = 1 << 20;
/// Bytes of the push-constant block.
const PUSH_BYTES: u32 = 24;

/// The copy shader's pipeline on one device (created once, kept for the device's life like
/// its samplers).
pub struct CopyKernel {
    pub layout: vk::PipelineLayout,
    pub raw: vk::Pipeline,
}

/// One dispatch of the shader: its push constants and work-group counts.
pub struct CopyDispatch {
    pub push: [u8; PUSH_BYTES as usize],
    pub groups: [u32; 2],
}

/// The dispatch copying `size` bytes from device address `src` to `dst`, or None when the
/// shader cannot take the copy (an address or the size not a multiple of 16, under
/// [`MIN_BYTES`], more 16-byte words than a u32 counts, or more groups than `max_groups`
/// allows in two dimensions).
pub fn plan(src: u64, dst: u64, size: u64, max_groups: [u32; 2]) -> Option<CopyDispatch> {
    if size < MIN_BYTES || !(src | dst | size).is_multiple_of(16) {
        return None;
    }
    let words = u32::try_from(size / 16).ok()?;
    let groups = u64::from(words).div_ceil(GROUP);
    let x = groups.min(u64::from(max_groups[0]));
    let y = groups.div_ceil(x);
    if y > u64::from(max_groups[1]) {
        return None;
    }
    let row = u32::try_from(x * GROUP).ok()?;
    let mut push = [0u8; PUSH_BYTES as usize];
    push[0..8].copy_from_slice(&src.to_le_bytes());
    push[8..16].copy_from_slice(&dst.to_le_bytes());
    push[16..20].copy_from_slice(&words.to_le_bytes());
    push[20..24].copy_from_slice(&row.to_le_bytes());
    Some(CopyDispatch {
        push,
        groups: [x as u32, y as u32],
    })
}

/// Whether a device copies large aligned buffers with the shader: `setting` (`VKCL_COPY_KERNEL`)
/// if given, else on NVIDIA's driver only.
pub fn wanted(vendor_id: u32, setting: Option<bool>) -> bool {
    setting.unwrap_or(vendor_id == 0x10DE)
}

/// Declares the interface every vkcl compute shader has: a `Block` struct of `members`
/// (type id, byte offset) as a push-constant variable, and the `GlobalInvocationId` input of
/// type `uvec3` (`v3`). Returns (push-constant variable, invocation-id variable).
pub(super) fn push_block_and_invocation_id(
    b: &mut Builder,
    members: &[(u32, u32)],
    v3: u32,
) -> (u32, u32) {
    let block = b.type_struct(members.iter().map(|m| m.0).collect::<Vec<_>>());
    b.decorate(block, Decoration::Block, vec![]);
    for (i, &(_, offset)) in members.iter().enumerate() {
        b.member_decorate(
            block,
            i as u32,
            Decoration::Offset,
            vec![Operand::LiteralBit32(offset)],
        );
    }
    let pc_ptr = b.type_pointer(None, StorageClass::PushConstant, block);
    let pc = b.variable(pc_ptr, None, StorageClass::PushConstant, None);
    let in_ptr = b.type_pointer(None, StorageClass::Input, v3);
    let gid = b.variable(in_ptr, None, StorageClass::Input, None);
    b.decorate(
        gid,
        Decoration::BuiltIn,
        vec![Operand::BuiltIn(BuiltIn::GlobalInvocationId)],
    );
    (pc, gid)
}

/// The SPIR-V words of the copy shader.
pub fn spirv() -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 5);
    b.capability(Capability::Shader);
    b.capability(Capability::Int64);
    b.capability(Capability::PhysicalStorageBufferAddresses);
    b.memory_model(
        AddressingModel::PhysicalStorageBuffer64,
        MemoryModel::GLSL450,
    );
    let void = b.type_void();
    let fn_ty = b.type_function(void, vec![]);
    let u32_t = b.type_int(32, 0);
    let u64_t = b.type_int(64, 0);
    let bool_t = b.type_bool();
    let v3 = b.type_vector(u32_t, 3);
    let v4 = b.type_vector(u32_t, 4);
    let (pc, gid) = push_block_and_invocation_id(
        &mut b,
        &[(u64_t, 0), (u64_t, 8), (u32_t, 16), (u32_t, 20)],
        v3,
    );
    let word_ptr = b.type_pointer(None, StorageClass::PhysicalStorageBuffer, v4);
    let pc_u64 = b.type_pointer(None, StorageClass::PushConstant, u64_t);
    let pc_u32 = b.type_pointer(None, StorageClass::PushConstant, u32_t);
    let [c0, c1, c2, c3] = [0, 1, 2, 3].map(|v| b.constant_bit32(u32_t, v));
    let c16 = b.constant_bit64(u64_t, 16);
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .expect("function");
    let (body, merge) = (b.id(), b.id());
    // The builder fails only when called outside a function or block; each call is inside.
    let emit = |b: &mut Builder| -> Result<(), rspirv::dr::Error> {
        b.begin_block(None)?;
        let g = b.load(v3, None, gid, None, vec![])?;
        let (x, y) = (
            b.composite_extract(u32_t, None, g, vec![0])?,
            b.composite_extract(u32_t, None, g, vec![1])?,
        );
        let row_p = b.access_chain(pc_u32, None, pc, vec![c3])?;
        let row = b.load(u32_t, None, row_p, None, vec![])?;
        let yr = b.i_mul(u32_t, None, y, row)?;
        let i = b.i_add(u32_t, None, yr, x)?;
        let n_p = b.access_chain(pc_u32, None, pc, vec![c2])?;
        let n = b.load(u32_t, None, n_p, None, vec![])?;
        let inside = b.u_less_than(bool_t, None, i, n)?;
        b.selection_merge(merge, SelectionControl::NONE)?;
        b.branch_conditional(inside, body, merge, vec![])?;
        b.begin_block(Some(body))?;
        let i64 = b.u_convert(u64_t, None, i)?;
        let off = b.i_mul(u64_t, None, i64, c16)?;
        let at = |b: &mut Builder, member| -> Result<u32, rspirv::dr::Error> {
            let p = b.access_chain(pc_u64, None, pc, vec![member])?;
            let base = b.load(u64_t, None, p, None, vec![])?;
            let a = b.i_add(u64_t, None, base, off)?;
            b.convert_u_to_ptr(word_ptr, None, a)
        };
        let (s, d) = (at(b, c0)?, at(b, c1)?);
        let aligned = || Some(MemoryAccess::ALIGNED);
        let v = b.load(v4, None, s, aligned(), vec![Operand::LiteralBit32(16)])?;
        b.store(d, v, aligned(), vec![Operand::LiteralBit32(16)])?;
        b.branch(merge)?;
        b.begin_block(Some(merge))?;
        b.ret()?;
        b.end_function()
    };
    emit(&mut b).expect("the copy shader's instructions");
    b.entry_point(ExecutionModel::GLCompute, main, "main", vec![gid, pc]);
    b.execution_mode(main, ExecutionMode::LocalSize, vec![GROUP as u32, 1, 1]);
    b.module().assemble()
}

impl CopyKernel {
    /// Creates the pipeline on `device` (through `cache`). Errors: Vulkan's result.
    pub fn new(device: &ash::Device, cache: vk::PipelineCache) -> Result<CopyKernel, vk::Result> {
        let (layout, raw) = compute_pipeline(
            device,
            cache,
            &spirv(),
            &[],
            PUSH_BYTES,
            vk::PipelineLayout::null(),
        )?;
        Ok(CopyKernel { layout, raw })
    }
}

/// A compute pipeline of vkcl's own shader `words` (entry point `main`) on `device`, through
/// `cache`: with `layout` when it is not null, else with a new layout of `set_layouts` and
/// `push_bytes` of push constants (compute stage), which is returned with the pipeline.
/// Errors: Vulkan's result (what this call made is destroyed first).
pub fn compute_pipeline(
    device: &ash::Device,
    cache: vk::PipelineCache,
    words: &[u32],
    set_layouts: &[vk::DescriptorSetLayout],
    push_bytes: u32,
    layout: vk::PipelineLayout,
) -> Result<(vk::PipelineLayout, vk::Pipeline), vk::Result> {
    let info = vk::ShaderModuleCreateInfo::default().code(words);
    // SAFETY: valid SPIR-V (spirv-val checks each of vkcl's shaders in its file's unit test)
    // on a live device.
    let module = unsafe { device.create_shader_module(&info, None) }?;
    let made_layout = layout == vk::PipelineLayout::null();
    let layout = if made_layout {
        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: push_bytes,
        }];
        let layout_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(set_layouts)
            .push_constant_ranges(&ranges);
        // SAFETY: valid create info.
        match unsafe { device.create_pipeline_layout(&layout_info, None) } {
            Ok(l) => l,
            Err(e) => {
                // SAFETY: unused.
                unsafe { device.destroy_shader_module(module, None) };
                return Err(e);
            }
        }
    } else {
        layout
    };
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(c"main");
    let info = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(layout)];
    // SAFETY: valid create info; the module may go once the pipeline exists.
    let made = unsafe { device.create_compute_pipelines(cache, &info, None) };
    // SAFETY: no longer needed.
    unsafe { device.destroy_shader_module(module, None) };
    match made {
        Ok(p) => Ok((layout, p[0])),
        Err((_, e)) => {
            if made_layout {
                // SAFETY: unused.
                unsafe { device.destroy_pipeline_layout(layout, None) };
            }
            Err(e)
        }
    }
}

/// Checks one of vkcl's own shaders with `spirv-val` (Vulkan 1.2 rules), panicking with its
/// message when invalid; where spirv-val is missing, says so and returns (unit tests).
#[cfg(test)]
pub(crate) fn assert_valid_spirv(words: &[u32], name: &str) {
    assert_eq!(words[0], 0x0723_0203, "{name}: SPIR-V magic");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.spv"));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).unwrap();
    let Ok(out) = std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&path)
        .output()
    else {
        eprintln!("{name}: skipped, no spirv-val");
        return;
    };
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_only_large_aligned_copies() {
        let max = [65_535, 65_535];
        assert!(plan(0, 0, MIN_BYTES - 16, max).is_none(), "small");
        assert!(plan(8, 0, MIN_BYTES, max).is_none(), "source address");
        assert!(plan(0, 4, MIN_BYTES, max).is_none(), "destination address");
        assert!(plan(0, 0, MIN_BYTES + 8, max).is_none(), "size");
        let p = plan(0x1000, 0x2000, MIN_BYTES, max).expect("1 MiB aligned");
        assert_eq!(p.groups, [1024, 1], "65,536 words in groups of 64");
        assert_eq!(u64::from_le_bytes(p.push[0..8].try_into().unwrap()), 0x1000);
        assert_eq!(
            u64::from_le_bytes(p.push[8..16].try_into().unwrap()),
            0x2000
        );
        assert_eq!(
            u32::from_le_bytes(p.push[16..20].try_into().unwrap()),
            65_536
        );
        assert_eq!(
            u32::from_le_bytes(p.push[20..24].try_into().unwrap()),
            1024 * 64
        );
        // 4 GiB: 2^28 words, 2^22 groups: 65,535 per row, 65 rows.
        let p = plan(0, 1 << 40, 1 << 32, max).expect("4 GiB");
        assert_eq!(p.groups, [65_535, 65]);
        assert!(
            plan(0, 0, 1 << 40, max).is_none(),
            "more words than a u32 counts"
        );
        assert!(
            plan(0, 0, 1 << 32, [1024, 1024]).is_none(),
            "more groups than allowed"
        );
    }

    #[test]
    fn the_shader_is_valid_vulkan_spirv() {
        assert_valid_spirv(&spirv(), "copy");
    }
}
