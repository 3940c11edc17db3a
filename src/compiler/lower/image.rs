//! Image arguments (docs/images.md, "Kernel access"): an OpenCL image parameter becomes a
//! `UniformConstant` image variable at descriptor set 0, binding = the argument's index, and
//! the OpenCL SPIR-V image instructions on it become their Vulkan forms:
//!
//! - the image type gets a 32-bit sampled type from its uses (`float` for `read_imagef`/
//!   `write_imagef`, signed `int` for the `SignExtend` forms of `read_imagei`/`write_imagei`,
//!   unsigned `int` for the `ZeroExtend` forms of the `ui` ones; `float` for an image only
//!   queried): Vulkan requires it to match the bound view's numeric format. A write-only or
//!   read-write image is a storage image (`Sampled` 2), a read-only one a sampled image
//!   (`Sampled` 1); its samplerless reads become `OpImageFetch` at level 0 (without a level
//!   for `image1d_buffer_t`, whose `Buffer` dimension makes it a texel buffer: storage for
//!   write-only and read-write, uniform for read-only);
//! - integer texels of `write_imagei`/`write_imageui` are saturated to the channel data
//!   type's range (the table's data type), as OpenCL converts them;
//! - coordinates keep only the components the image's dimension needs (OpenCL passes `int4`
//!   for 2D arrays and 3D images);
//! - the queries (`OpImageQuerySizeLod`, `OpImageQueryOrder`, `OpImageQueryFormat`) read the
//!   argument's 24 bytes in the argument block, which the runtime writes per launch: the
//!   channel order and channel data type as the SPIR-V enumerants (OpenCL's `CL_*` value
//!   less `CL_R` or `CL_SNORM_INT8`; Vulkan cannot query them), then width, height, depth
//!   and array size (so an image the kernel only queries needs no descriptor, whose
//!   sampled type Vulkan would require to match the view's format).
//!
//! `read_image*` with a sampler keep their `OpSampledImage` (retyped here) for
//! [`super::sampled`]. Half texels (`read_imageh`, `write_imageh`) were made float ones
//! before ([`super::image_half`]); any other use of an image value is refused with a
//! message.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{
    Capability, Decoration, Dim, ImageFormat, ImageOperands, Op, StorageClass, Word,
};

use super::ctx::Ctx;
use crate::compiler::reflect::{AccessQualifier, KernelArgInfo};
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// The numeric class of an image's texels as the kernel uses them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Texel {
    Float,
    Int,
    Uint,
}

fn extend_of(i: &Instruction) -> Option<ImageOperands> {
    i.operands.iter().find_map(|o| match o {
        Operand::ImageOperands(m) => Some(*m),
        _ => None,
    })
}

/// The scalar type of `ty` (itself or its vector's component).
fn component(ctx: &Ctx, ty: Word) -> Option<&Instruction> {
    let d = ctx.def(ty)?;
    if d.class.opcode == Op::TypeVector {
        ctx.def(id_operand(d, 0)?)
    } else {
        Some(d)
    }
}

/// The texel class of one use of an image value (None for queries).
fn use_class(
    ctx: &Ctx,
    i: &Instruction,
    types: &std::collections::HashMap<Word, Word>,
) -> Result<Option<Texel>, String> {
    let data_ty = match i.class.opcode {
        Op::ImageWrite => id_operand(i, 2).and_then(|t| types.get(&t).copied()),
        Op::ImageRead | Op::ImageSampleExplicitLod => i.result_type,
        _ => return Ok(None),
    };
    let c = data_ty
        .and_then(|t| component(ctx, t))
        .ok_or("image texel of unknown type")?;
    match (c.class.opcode, lit_operand(c, 0)) {
        (Op::TypeFloat, Some(32)) => Ok(Some(Texel::Float)),
        (Op::TypeFloat, _) => Err("image texel of a float type other than float4 or half4".into()),
        (Op::TypeInt, Some(32)) => Ok(Some(
            if extend_of(i).is_some_and(|m| m.contains(ImageOperands::SIGN_EXTEND)) {
                Texel::Int
            } else {
                Texel::Uint
            },
        )),
        _ => Err("image texel of an unsupported type".into()),
    }
}

/// SPIR-V `ImageChannelDataType` enumerants of the narrow integer types.
const SIGNED_INT8: u32 = 7;
const SIGNED_INT16: u32 = 8;
const UNSIGNED_INT8: u32 = 10;
const UNSIGNED_INT16: u32 = 11;

/// The texel `texel` (`uint4`) of a `write_imagei` (`class` Int) or `write_imageui` (Uint)
/// saturated to the range of the image's channel data type (`dtype`, the table's value):
/// OpenCL converts with saturation (3.0 section 8.3.2), Vulkan's storage writes of
/// out-of-range integers are undefined. Emits into `out`; returns the saturated texel.
fn saturate(
    ctx: &mut Ctx,
    out: &mut Vec<Instruction>,
    texel: Word,
    class: Texel,
    dtype: Word,
) -> Word {
    let u32t = ctx.t_int(32);
    let v4u = ctx.t_vec(u32t, 4);
    let bool_t = ctx.t_bool();
    let v4b = ctx.t_vec(bool_t, 4);
    let mut emit = |ctx: &mut Ctx, op: Op, ty: Word, ops: Vec<Operand>| {
        let id = ctx.id();
        out.push(inst(op, Some(ty), Some(id), ops));
        id
    };
    // pick(a, b, c): a for the 8-bit type, b for the 16-bit one, c otherwise.
    let mut bound = |ctx: &mut Ctx, t8: u32, t16: u32, v: [u32; 3]| {
        let (c8, c16) = (ctx.c_u32(t8), ctx.c_u32(t16));
        let (a, b, c) = (ctx.c_u32(v[0]), ctx.c_u32(v[1]), ctx.c_u32(v[2]));
        let is8 = emit(
            ctx,
            Op::IEqual,
            bool_t,
            vec![Operand::IdRef(dtype), Operand::IdRef(c8)],
        );
        let is16 = emit(
            ctx,
            Op::IEqual,
            bool_t,
            vec![Operand::IdRef(dtype), Operand::IdRef(c16)],
        );
        let x = emit(
            ctx,
            Op::Select,
            u32t,
            vec![Operand::IdRef(is16), Operand::IdRef(b), Operand::IdRef(c)],
        );
        let s = emit(
            ctx,
            Op::Select,
            u32t,
            vec![Operand::IdRef(is8), Operand::IdRef(a), Operand::IdRef(x)],
        );
        emit(ctx, Op::CompositeConstruct, v4u, vec![Operand::IdRef(s); 4])
    };
    let (hi, lo) = match class {
        Texel::Int => (
            bound(
                ctx,
                SIGNED_INT8,
                SIGNED_INT16,
                [127, 32767, i32::MAX as u32],
            ),
            Some(bound(
                ctx,
                SIGNED_INT8,
                SIGNED_INT16,
                [-128i32 as u32, -32768i32 as u32, i32::MIN as u32],
            )),
        ),
        _ => (
            bound(ctx, UNSIGNED_INT8, UNSIGNED_INT16, [255, 65535, u32::MAX]),
            None,
        ),
    };
    let (gt, lt) = match class {
        Texel::Int => (Op::SGreaterThan, Op::SLessThan),
        _ => (Op::UGreaterThan, Op::ULessThan),
    };
    let above = emit(
        ctx,
        gt,
        v4b,
        vec![Operand::IdRef(texel), Operand::IdRef(hi)],
    );
    let mut t = emit(
        ctx,
        Op::Select,
        v4u,
        vec![
            Operand::IdRef(above),
            Operand::IdRef(hi),
            Operand::IdRef(texel),
        ],
    );
    if let Some(lo) = lo {
        let below = emit(ctx, lt, v4b, vec![Operand::IdRef(t), Operand::IdRef(lo)]);
        t = emit(
            ctx,
            Op::Select,
            v4u,
            vec![Operand::IdRef(below), Operand::IdRef(lo), Operand::IdRef(t)],
        );
    }
    t
}

/// Coordinates an image of `dim` (`arrayed`) takes.
fn coord_count(dim: Dim, arrayed: bool) -> u32 {
    let n = match dim {
        Dim::Dim1D | Dim::DimBuffer => 1,
        Dim::Dim2D => 2,
        _ => 3,
    };
    n + u32::from(arrayed)
}

/// Binds image argument `arg` (parameter `pid` of OpenCL image type `pty`) to descriptor
/// `binding` and rewrites the instructions that use it (see the module doc). `table` holds
/// the `u32` values of the argument's table entry, loaded at the top of the kernel: channel
/// order, channel data type, width, height, depth, array size. Returns the `OpLoad` that now
/// defines `pid`, to be placed at the top of the kernel; None when the kernel only queries
/// the image (then nothing is bound: Vulkan would require the view's numeric format to
/// match a sampled type the kernel does not tell).
///
/// # Errors
/// A message for a use the lowering does not support (module doc).
pub(super) fn bind_image(
    ctx: &mut Ctx,
    pid: Word,
    pty: Word,
    arg: &KernelArgInfo,
    binding: u32,
    table: [Word; 6],
) -> Result<Option<Instruction>, String> {
    let old = ctx
        .def(pty)
        .ok_or("image parameter of unknown type")?
        .clone();
    let dim = match old.operands.get(1) {
        Some(Operand::Dim(d)) => *d,
        _ => return Err("image type without a dimension".into()),
    };
    let arrayed = lit_operand(&old, 3) == Some(1);
    let storage = arg.access_qualifier != AccessQualifier::ReadOnly;
    let types = ctx.value_types();
    let mut class = None;
    // Sampled reads (lower/sampled.rs) are uses of the OpSampledImage results.
    let sampled: Vec<Word> = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == Op::SampledImage && id_operand(i, 0) == Some(pid))
        .filter_map(|i| i.result_id)
        .collect();
    for i in ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
    {
        if id_operand(i, 0).is_some_and(|s| sampled.contains(&s)) {
            if i.class.opcode != Op::ImageSampleExplicitLod {
                return Err(format!(
                    "argument `{}`: sampled image used by Op{:?}, which is not supported",
                    arg.name, i.class.opcode
                ));
            }
            let c = use_class(ctx, i, &types)?;
            if class.is_some() && class != c {
                return Err(format!(
                    "argument `{}`: the image is read both as float and integer texels",
                    arg.name
                ));
            }
            class = c;
        }
    }
    for i in ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
    {
        if id_operand(i, 0) != Some(pid) && !crate::compiler::spv::used_ids(i).contains(&pid) {
            continue;
        }
        let ok_use = matches!(
            i.class.opcode,
            Op::ImageWrite
                | Op::ImageRead
                | Op::ImageQuerySizeLod
                | Op::ImageQuerySize
                | Op::ImageQueryOrder
                | Op::ImageQueryFormat
        ) || (i.class.opcode == Op::SampledImage && !storage);
        let ok_use = ok_use
            && id_operand(i, 0) == Some(pid)
            && !i.operands[1..].iter().any(|o| o == &Operand::IdRef(pid));
        if !ok_use {
            return Err(match i.class.opcode {
                Op::SampledImage => format!(
                    "argument `{}`: read_image with a sampler of an image that is not read_only",
                    arg.name
                ),
                op => format!(
                    "argument `{}`: image used by Op{op:?}, which is not supported",
                    arg.name
                ),
            });
        }
        if let Some(c) = use_class(ctx, i, &types)? {
            if class.is_some_and(|k| k != c) {
                return Err(format!(
                    "argument `{}`: the image is read or written both as float and integer \
                     texels (undefined in OpenCL)",
                    arg.name
                ));
            }
            class = Some(c);
        }
    }
    let queried_only = class.is_none();
    let class = class.unwrap_or(Texel::Float);
    let sampled_ty = match class {
        Texel::Float => ctx.global(Op::TypeFloat, None, vec![Operand::LiteralBit32(32)]),
        Texel::Int => ctx.global(
            Op::TypeInt,
            None,
            vec![Operand::LiteralBit32(32), Operand::LiteralBit32(1)],
        ),
        Texel::Uint => ctx.t_int(32),
    };
    let img_ty = ctx.global(
        Op::TypeImage,
        None,
        vec![
            Operand::IdRef(sampled_ty),
            Operand::Dim(dim),
            Operand::LiteralBit32(0),
            Operand::LiteralBit32(u32::from(arrayed)),
            Operand::LiteralBit32(0),
            Operand::LiteralBit32(if storage { 2 } else { 1 }),
            Operand::ImageFormat(ImageFormat::Unknown),
        ],
    );
    let ptr_ty = ctx.t_ptr(StorageClass::UniformConstant, img_ty);
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

    let u32t = ctx.t_int(32);
    let v4u = ctx.t_vec(u32t, 4);
    let v4i = if class == Texel::Int {
        let s = sampled_ty;
        Some(ctx.t_vec(s, 4))
    } else {
        None
    };
    let zero = ctx.c_u32(0);
    let need = coord_count(dim, arrayed);
    let mut shrink_types: std::collections::HashMap<u32, Word> = std::collections::HashMap::new();
    for n in 2..=need {
        shrink_types.insert(n, ctx.t_vec(u32t, n));
    }
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut out_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        let mut out = Vec::with_capacity(b.instructions.len());
        for mut i in std::mem::take(&mut b.instructions) {
            if id_operand(&i, 0) != Some(pid) {
                out.push(i);
                continue;
            }
            match i.class.opcode {
                Op::SampledImage => {
                    let st = ctx.global(Op::TypeSampledImage, None, vec![Operand::IdRef(img_ty)]);
                    i.result_type = Some(st);
                    out.push(i);
                    continue;
                }
                Op::ImageQueryOrder | Op::ImageQueryFormat => {
                    let v = table[usize::from(i.class.opcode == Op::ImageQueryFormat)];
                    out.push(inst(
                        Op::CopyObject,
                        i.result_type,
                        i.result_id,
                        vec![Operand::IdRef(v)],
                    ));
                    continue;
                }
                Op::ImageQuerySizeLod | Op::ImageQuerySize => {
                    // Sizes from the table (`size_t` queries widened after).
                    let rty = i.result_type.ok_or("image query without a type")?;
                    let n = ctx
                        .def(rty)
                        .filter(|d| d.class.opcode == Op::TypeVector)
                        .and_then(|d| lit_operand(d, 1));
                    let wide = component(ctx, rty).and_then(|c| lit_operand(c, 0)) == Some(64);
                    let parts: Vec<Word> = match (dim, arrayed) {
                        (Dim::Dim1D | Dim::DimBuffer, false) => vec![table[2]],
                        (Dim::Dim1D, true) => vec![table[2], table[5]],
                        (Dim::Dim2D, false) => vec![table[2], table[3]],
                        (Dim::Dim2D, true) => vec![table[2], table[3], table[5]],
                        _ => vec![table[2], table[3], table[4]],
                    };
                    if parts.len() != n.unwrap_or(1) as usize {
                        return Err(format!(
                            "argument `{}`: image size query of an unexpected type",
                            arg.name
                        ));
                    }
                    let qty = match (wide, n) {
                        (false, _) => rty,
                        (true, None) => u32t,
                        (true, Some(n)) => ctx.t_vec(u32t, n),
                    };
                    let result = i.result_id.ok_or("image query without a result")?;
                    let q = if wide { ctx.id() } else { result };
                    out.push(if n.is_none() {
                        inst(
                            Op::CopyObject,
                            Some(qty),
                            Some(q),
                            vec![Operand::IdRef(parts[0])],
                        )
                    } else {
                        inst(
                            Op::CompositeConstruct,
                            Some(qty),
                            Some(q),
                            parts.iter().map(|p| Operand::IdRef(*p)).collect(),
                        )
                    });
                    if wide {
                        out.push(inst(
                            Op::UConvert,
                            Some(rty),
                            Some(result),
                            vec![Operand::IdRef(q)],
                        ));
                    }
                    continue;
                }
                _ => {}
            }
            // Reads and writes: the coordinate.
            let coord = id_operand(&i, 1).ok_or("image access without a coordinate")?;
            let cty = types
                .get(&coord)
                .copied()
                .ok_or("image coordinate of unknown type")?;
            let have = ctx
                .def(cty)
                .filter(|d| d.class.opcode == Op::TypeVector)
                .and_then(|d| lit_operand(d, 1))
                .unwrap_or(1);
            if have > need {
                let id = ctx.id();
                if need == 1 {
                    out.push(inst(
                        Op::CompositeExtract,
                        Some(u32t),
                        Some(id),
                        vec![Operand::IdRef(coord), Operand::LiteralBit32(0)],
                    ));
                } else {
                    let mut ops = vec![Operand::IdRef(coord), Operand::IdRef(coord)];
                    ops.extend((0..need).map(Operand::LiteralBit32));
                    out.push(inst(
                        Op::VectorShuffle,
                        Some(shrink_types[&need]),
                        Some(id),
                        ops,
                    ));
                }
                i.operands[1] = Operand::IdRef(id);
            } else if have < need {
                return Err(format!(
                    "argument `{}`: image coordinate of {have} components",
                    arg.name
                ));
            }
            match i.class.opcode {
                Op::ImageWrite => {
                    if class != Texel::Float {
                        let texel = id_operand(&i, 2).ok_or("image write without a texel")?;
                        let t = saturate(ctx, &mut out, texel, class, table[1]);
                        i.operands[2] = Operand::IdRef(t);
                    }
                    if let Some(v4i) = v4i {
                        let texel = id_operand(&i, 2).ok_or("image write without a texel")?;
                        let id = ctx.id();
                        out.push(inst(
                            Op::Bitcast,
                            Some(v4i),
                            Some(id),
                            vec![Operand::IdRef(texel)],
                        ));
                        i.operands[2] = Operand::IdRef(id);
                    }
                    out.push(i);
                }
                Op::ImageRead => {
                    let result = i.result_id.ok_or("image read without a result")?;
                    let fetched = if v4i.is_some() { ctx.id() } else { result };
                    let rty = v4i.or(i.result_type);
                    let mut ops = vec![i.operands[0].clone(), i.operands[1].clone()];
                    let extend = extend_of(&i).unwrap_or(ImageOperands::NONE);
                    let op = if storage {
                        if !extend.is_empty() {
                            ops.push(Operand::ImageOperands(extend));
                        }
                        Op::ImageRead
                    } else if dim == Dim::DimBuffer {
                        // Texel buffers have no levels: no Lod operand.
                        if !extend.is_empty() {
                            ops.push(Operand::ImageOperands(extend));
                        }
                        Op::ImageFetch
                    } else {
                        ops.push(Operand::ImageOperands(extend | ImageOperands::LOD));
                        ops.push(Operand::IdRef(zero));
                        Op::ImageFetch
                    };
                    out.push(inst(op, rty, Some(fetched), ops));
                    if v4i.is_some() {
                        out.push(inst(
                            Op::Bitcast,
                            Some(v4u),
                            Some(result),
                            vec![Operand::IdRef(fetched)],
                        ));
                    }
                }
                _ => unreachable!("checked above"),
            }
        }
        b.instructions = out;
        out_blocks.push(b);
    }
    ctx.module.functions[0].blocks = out_blocks;
    if queried_only {
        ctx.module
            .types_global_values
            .retain(|i| i.result_id != Some(var));
        ctx.module
            .annotations
            .retain(|a| id_operand(a, 0) != Some(var));
        return Ok(None);
    }
    Ok(Some(inst(
        Op::Load,
        Some(img_ty),
        Some(pid),
        vec![Operand::IdRef(var)],
    )))
}

/// The capabilities the module's images need: `Image1D` /
/// `Sampled1D` for 1D storage / sampled images, `ImageBuffer` / `SampledBuffer` for storage /
/// uniform texel buffers (`image1d_buffer_t`), `StorageImageReadWithoutFormat` and
/// `StorageImageWriteWithoutFormat` for reads and writes of storage images (their format is
/// `Unknown`).
pub(super) fn image_capabilities(ctx: &Ctx) -> Vec<Capability> {
    let mut c = Vec::new();
    let storage: Vec<Word> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeImage)
        .filter_map(|i| {
            let s = lit_operand(i, 5)?;
            if i.operands.get(1) == Some(&Operand::Dim(Dim::Dim1D)) {
                c.push(if s == 2 {
                    Capability::Image1D
                } else {
                    Capability::Sampled1D
                });
            }
            if i.operands.get(1) == Some(&Operand::Dim(Dim::DimBuffer)) {
                c.push(if s == 2 {
                    Capability::ImageBuffer
                } else {
                    Capability::SampledBuffer
                });
            }
            (s == 2).then_some(i.result_id).flatten()
        })
        .collect();
    if c.is_empty()
        && storage.is_empty()
        && !ctx
            .module
            .types_global_values
            .iter()
            .any(|i| i.class.opcode == Op::TypeImage)
    {
        return c;
    }
    let types = ctx.value_types();
    for i in ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
    {
        let on_storage = || {
            id_operand(i, 0)
                .and_then(|img| types.get(&img))
                .is_some_and(|t| storage.contains(t))
        };
        match i.class.opcode {
            Op::ImageRead if on_storage() => c.push(Capability::StorageImageReadWithoutFormat),
            Op::ImageWrite if on_storage() => c.push(Capability::StorageImageWriteWithoutFormat),
            _ => {}
        }
    }
    c
}
