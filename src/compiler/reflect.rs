//! Reflection: one [`KernelInfo`] per kernel of a Kernel SPIR-V module (argument kinds, names,
//! type names, qualifiers, sizes and offsets in the argument block, attributes).

use crate::compiler::printf::PrintfInfo;
use rspirv::dr::{Module, Operand};
use rspirv::spirv::{
    ExecutionMode, ExecutionModel, FunctionParameterAttribute, Op, StorageClass, Word,
};

use super::layout::Layout;
use super::spv::{decorations_of, id_operand, lit_operand, name_of, Defs};

/// `CL_KERNEL_ARG_ADDRESS_QUALIFIER`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AddressQualifier {
    /// `__global` pointer.
    Global,
    /// `__constant` pointer.
    Constant,
    /// `__local` pointer.
    Local,
    /// Anything passed by value.
    Private,
}

/// `CL_KERNEL_ARG_ACCESS_QUALIFIER` (images only; `None` for everything else).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AccessQualifier {
    /// Not an image.
    None,
    /// `read_only` image.
    ReadOnly,
    /// `write_only` image.
    WriteOnly,
    /// `read_write` image.
    ReadWrite,
}

/// `CL_KERNEL_ARG_TYPE_QUALIFIER` bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TypeQualifiers {
    /// `const` (on the pointee of a pointer argument).
    pub is_const: bool,
    /// `restrict`.
    pub is_restrict: bool,
    /// `volatile`.
    pub is_volatile: bool,
    /// `pipe`.
    pub is_pipe: bool,
}

/// How the runtime passes an argument (see the ABI in the module doc of `compiler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ArgKind {
    /// `__global` or `__constant` pointer: an 8-byte device address in the argument block (0 for
    /// NULL).
    Buffer,
    /// `__local` pointer: no bytes in the block; the `Workgroup` array's length is the
    /// specialization constant `spec_id`, in elements of `elem_size` bytes.
    Local {
        /// Specialization constant id of the array length (3 + argument index).
        spec_id: u32,
        /// Size in bytes of one element (the pointee type).
        elem_size: u32,
    },
    /// Scalar, vector or struct by value: `size` bytes copied verbatim from `clSetKernelArg`.
    Value,
    /// `sampler_t`: a `SAMPLER` descriptor at binding = argument index, and 8 bytes in the
    /// block (a `u32`, 1 for normalized coordinates; compiler/lower/sampled.rs).
    Sampler,
    /// An image type: an image descriptor at binding = argument index, and 24 bytes in the
    /// block (channel order and data type enumerants, width, height, depth, array size as
    /// `u32`; compiler/lower/image.rs).
    Image,
}

/// One kernel argument (`clGetKernelArgInfo` plus the ABI placement).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelArgInfo {
    /// `CL_KERNEL_ARG_NAME`.
    pub name: String,
    /// `CL_KERNEL_ARG_TYPE_NAME`, as written in the source (`float*`, `float4`, `S`).
    pub type_name: String,
    /// `CL_KERNEL_ARG_ADDRESS_QUALIFIER`.
    pub address_qualifier: AddressQualifier,
    /// `CL_KERNEL_ARG_ACCESS_QUALIFIER`.
    pub access_qualifier: AccessQualifier,
    /// `CL_KERNEL_ARG_TYPE_QUALIFIER`.
    pub type_qualifier: TypeQualifiers,
    /// How the runtime passes it.
    pub kind: ArgKind,
    /// Byte offset in the argument block (0 for `Local`).
    pub offset: u32,
    /// Bytes in the argument block; for `Value` the size `clSetKernelArg` must be given, for
    /// `Buffer` and `Sampler` 8, for `Image` 24, for `Local` 0.
    pub size: u32,
}

/// Everything the runtime needs to know about one kernel, plus its Vulkan module.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelInfo {
    /// The kernel's name.
    pub name: String,
    /// Its arguments, in order.
    pub args: Vec<KernelArgInfo>,
    /// Bytes of the argument block (multiple of 8).
    pub args_size: u32,
    /// `__attribute__((reqd_work_group_size(x, y, z)))`.
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// `__attribute__((work_group_size_hint(x, y, z)))`.
    pub work_group_size_hint: Option<[u32; 3]>,
    /// `__attribute__((vec_type_hint(T)))`, as the OpenCL C type name.
    pub vec_type_hint: Option<String>,
    /// `CL_KERNEL_ATTRIBUTES`: the attributes above as source text, space separated.
    pub attributes: String,
    /// Bytes of `__local` variables declared in the kernel (`CL_KERNEL_LOCAL_MEM_SIZE` without
    /// the local arguments).
    pub static_local_mem_bytes: u64,
    /// Bytes of private (Function) variables, an estimate (`CL_KERNEL_PRIVATE_MEM_SIZE`).
    pub private_mem_bytes: u64,
    /// A Vulkan SPIR-V module (Vulkan 1.2) with one `GLCompute` entry point `main`.
    pub spirv: Vec<u32>,
    /// The kernel's `printf` calls (formats, argument layout, `%s` strings); empty when it
    /// has none. The runtime gives such a kernel a printf buffer (kernel ABI).
    pub printf: PrintfInfo,
    /// The Kernel module's function id of the kernel body (internal).
    pub(crate) function: Word,
}

fn literal_string(op: Option<&Operand>) -> Option<&str> {
    match op {
        Some(Operand::LiteralString(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// The comma-separated list of an `OpString "<prefix>.<kernel>.a,b,c,"`.
fn metadata_list(module: &Module, prefix: &str, kernel: &str) -> Option<Vec<String>> {
    let key = format!("{prefix}.{kernel}.");
    module.debug_string_source.iter().find_map(|i| {
        if i.class.opcode != Op::String {
            return None;
        }
        let s = literal_string(i.operands.first())?;
        let rest = s.strip_prefix(&key)?;
        let rest = rest.strip_suffix(',').unwrap_or(rest);
        Some(rest.split(',').map(|t| t.trim().to_string()).collect())
    })
}

fn vec_type_name(hint: u32) -> String {
    let base = match hint & 0xffff {
        0 => "char",
        1 => "short",
        2 => "int",
        3 => "long",
        4 => "half",
        5 => "float",
        6 => "double",
        _ => "int",
    };
    let n = hint >> 16;
    if n > 1 {
        format!("{base}{n}")
    } else {
        base.to_string()
    }
}

/// SPIR-V's `VecTypeHint` encodes no signedness, so a hint of `uint4` comes back as `int4`.
/// Where the OpenCL C source of kernel `k` spells the hint with an unsigned type of the same
/// shape, use that name instead (for `CL_KERNEL_ATTRIBUTES`).
pub(crate) fn restore_hint_signedness(k: &mut KernelInfo, source: &str) {
    let Some(hint) = k.vec_type_hint.clone() else {
        return;
    };
    // The declaration of the kernel: from the end of the previous declaration to `name(`.
    let Some(at) = find_declaration(source, &k.name) else {
        return;
    };
    let start = source[..at].rfind([';', '}']).map_or(0, |i| i + 1);
    let decl = &source[start..at];
    let Some(p) = decl.find("vec_type_hint") else {
        return;
    };
    let rest = &decl[p + "vec_type_hint".len()..];
    let name: String = rest
        .trim_start()
        .trim_start_matches('(')
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let unsigned = name.strip_prefix('u').map(String::from);
    if unsigned.as_deref() == Some(hint.as_str()) {
        k.attributes = k.attributes.replace(
            &format!("vec_type_hint({hint})"),
            &format!("vec_type_hint({name})"),
        );
        k.vec_type_hint = Some(name);
    }
}

/// Byte offset of `name` followed by `(` as a whole word in `source`, the first such place.
fn find_declaration(source: &str, name: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut from = 0;
    while let Some(i) = source[from..].find(name).map(|i| i + from) {
        let before_ok = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let after = source[i + name.len()..].trim_start();
        if before_ok && after.starts_with('(') {
            return Some(i);
        }
        from = i + name.len();
    }
    None
}

/// Reflects every kernel entry point of `module`.
///
/// # Errors
/// A message when an argument type has no layout.
pub(crate) fn reflect_module(module: &Module) -> Result<Vec<KernelInfo>, String> {
    let defs = Defs::new(module);
    let layout = Layout::new(module, &defs);
    let mut out = Vec::new();
    for ep in &module.entry_points {
        if !matches!(
            ep.operands.first(),
            Some(Operand::ExecutionModel(ExecutionModel::Kernel))
        ) {
            continue;
        }
        let (Some(func), Some(name)) = (id_operand(ep, 1), literal_string(ep.operands.get(2)))
        else {
            continue;
        };
        let f = module
            .functions
            .iter()
            .find(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(func))
            .ok_or_else(|| format!("entry point {name} has no function"))?;
        let types = metadata_list(module, "kernel_arg_type", name).unwrap_or_default();
        let quals = metadata_list(module, "kernel_arg_type_qual", name).unwrap_or_default();
        let mut info = KernelInfo {
            name: name.to_string(),
            function: func,
            ..Default::default()
        };
        let mut offset: u64 = 0;
        for (index, p) in f.parameters.iter().enumerate() {
            let pid = p.result_id.unwrap_or(0);
            let pty = p.result_type.unwrap_or(0);
            let arg_name = name_of(module, pid).unwrap_or_default();
            let ty_inst = defs.get(pty).ok_or("parameter of unknown type")?;
            let byval = decorations_of(module, pid).iter().any(|d| {
                matches!(
                    d.operands.get(2),
                    Some(Operand::FunctionParameterAttribute(
                        FunctionParameterAttribute::ByVal
                    ))
                )
            });
            let mut q = TypeQualifiers::default();
            if let Some(qs) = quals.get(index) {
                for w in qs.split_whitespace() {
                    match w {
                        "const" => q.is_const = true,
                        "restrict" => q.is_restrict = true,
                        "volatile" => q.is_volatile = true,
                        "pipe" => q.is_pipe = true,
                        _ => {}
                    }
                }
            }
            let mut access = AccessQualifier::None;
            let (aq, kind, size, align) = match ty_inst.class.opcode {
                Op::TypePointer if !byval => {
                    let sc = match ty_inst.operands.first() {
                        Some(Operand::StorageClass(sc)) => *sc,
                        _ => StorageClass::CrossWorkgroup,
                    };
                    let pointee = id_operand(ty_inst, 1).unwrap_or(0);
                    match sc {
                        StorageClass::Workgroup => {
                            let elem = layout.size_align(pointee).map(|s| s.size).unwrap_or(1);
                            let spec_id = 3 + index as u32;
                            let kind = ArgKind::Local {
                                spec_id,
                                elem_size: elem.max(1) as u32,
                            };
                            (AddressQualifier::Local, kind, 0, 1)
                        }
                        StorageClass::UniformConstant => {
                            (AddressQualifier::Constant, ArgKind::Buffer, 8, 8)
                        }
                        _ => (AddressQualifier::Global, ArgKind::Buffer, 8, 8),
                    }
                }
                Op::TypePointer => {
                    let pointee = id_operand(ty_inst, 1).unwrap_or(0);
                    let sa = layout.size_align(pointee)?;
                    (AddressQualifier::Private, ArgKind::Value, sa.size, sa.align)
                }
                Op::TypeSampler => (AddressQualifier::Private, ArgKind::Sampler, 8, 8),
                Op::TypeImage => {
                    access = match ty_inst.operands.get(7) {
                        Some(Operand::AccessQualifier(a)) => match a {
                            rspirv::spirv::AccessQualifier::ReadOnly => AccessQualifier::ReadOnly,
                            rspirv::spirv::AccessQualifier::WriteOnly => AccessQualifier::WriteOnly,
                            rspirv::spirv::AccessQualifier::ReadWrite => AccessQualifier::ReadWrite,
                        },
                        _ => AccessQualifier::ReadOnly,
                    };
                    (AddressQualifier::Global, ArgKind::Image, 24, 8)
                }
                _ => {
                    let sa = layout.size_align(pty)?;
                    (AddressQualifier::Private, ArgKind::Value, sa.size, sa.align)
                }
            };
            let arg_offset = if size == 0 {
                0
            } else {
                offset = offset.div_ceil(align) * align;
                let o = offset;
                offset += size;
                o
            };
            let type_name = types.get(index).cloned().unwrap_or_default();
            info.args.push(KernelArgInfo {
                name: arg_name,
                type_name,
                address_qualifier: aq,
                access_qualifier: access,
                type_qualifier: q,
                kind,
                offset: arg_offset as u32,
                size: size as u32,
            });
        }
        info.args_size = (offset.div_ceil(8) * 8) as u32;
        let mut attrs = Vec::new();
        for em in &module.execution_modes {
            if id_operand(em, 0) != Some(func) {
                continue;
            }
            let xyz = || {
                [
                    lit_operand(em, 2).unwrap_or(1),
                    lit_operand(em, 3).unwrap_or(1),
                    lit_operand(em, 4).unwrap_or(1),
                ]
            };
            match em.operands.get(1) {
                Some(Operand::ExecutionMode(ExecutionMode::LocalSize)) => {
                    let s = xyz();
                    attrs.push(format!("reqd_work_group_size({},{},{})", s[0], s[1], s[2]));
                    info.reqd_work_group_size = Some(s);
                }
                Some(Operand::ExecutionMode(ExecutionMode::LocalSizeHint)) => {
                    let s = xyz();
                    attrs.push(format!("work_group_size_hint({},{},{})", s[0], s[1], s[2]));
                    info.work_group_size_hint = Some(s);
                }
                Some(Operand::ExecutionMode(ExecutionMode::VecTypeHint)) => {
                    let t = vec_type_name(lit_operand(em, 2).unwrap_or(0));
                    attrs.push(format!("vec_type_hint({t})"));
                    info.vec_type_hint = Some(t);
                }
                _ => {}
            }
        }
        info.attributes = attrs.join(" ");
        out.push(info);
    }
    Ok(out)
}
