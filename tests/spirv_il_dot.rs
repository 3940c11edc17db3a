//! `SPV_KHR_integer_dot_product` in IL programs (`cl_khr_integer_dot_product`'s SPIR-V):
//! `OpSDot`, `OpUDot`, `OpSUDot` and their `AccSat` forms, packed (`PackedVectorFormat4x8Bit`)
//! and on 4-component 8-bit vectors, with 32- and 64-bit results, against the host, on
//! inputs that reach every saturation. vkcl gives them to llvm-spirv-15 as calls of its IL
//! library (`compiler/il_library.cl`).
mod common;
use common::spirv::*;
use common::*;

const OPS: [&str; 3] = ["SDot", "UDot", "SUDot"];

/// The module: work-item i reads a = in[3i], b = in[3i+1], acc = in[3i+2], acc64 = acc64s[i]
/// and stores the 24 results (op x {32, 64 bits} x {packed, vector} x {dot, acc_sat}) as
/// ulongs (32-bit ones zero-extended) at out[24i..].
fn module() -> String {
    let mut m = String::from(
        "OpCapability Addresses\nOpCapability Kernel\nOpCapability Int64\nOpCapability Int8\n\
         OpCapability DotProduct\nOpCapability DotProductInput4x8BitPacked\n\
         OpCapability DotProductInput4x8Bit\nOpExtension \"SPV_KHR_integer_dot_product\"\n\
         OpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %k \"dots\" %gid\n\
         OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorate %gid Constant\n\
         %uint = OpTypeInt 32 0\n%ulong = OpTypeInt 64 0\n%uchar = OpTypeInt 8 0\n\
         %v4 = OpTypeVector %uchar 4\n%v3 = OpTypeVector %ulong 3\n\
         %pv3 = OpTypePointer Input %v3\n%gid = OpVariable %pv3 Input\n%void = OpTypeVoid\n\
         %pu = OpTypePointer CrossWorkgroup %uint\n%pl = OpTypePointer CrossWorkgroup %ulong\n\
         %fn = OpTypeFunction %void %pl %pu %pl\n%l1 = OpConstant %ulong 1\n\
         %l3 = OpConstant %ulong 3\n%l24 = OpConstant %ulong 24\n\
         %k = OpFunction %void None %fn\n%out = OpFunctionParameter %pl\n\
         %in = OpFunctionParameter %pu\n%in64 = OpFunctionParameter %pl\n%b = OpLabel\n\
         %g3 = OpLoad %v3 %gid\n%g = OpCompositeExtract %ulong %g3 0\n\
         %i0 = OpIMul %ulong %g %l3\n%pa = OpPtrAccessChain %pu %in %i0\n\
         %a = OpLoad %uint %pa Aligned 4\n%pb = OpPtrAccessChain %pu %pa %l1\n\
         %bb = OpLoad %uint %pb Aligned 4\n%pc = OpPtrAccessChain %pu %pb %l1\n\
         %acc = OpLoad %uint %pc Aligned 4\n%pd = OpPtrAccessChain %pl %in64 %g\n\
         %acc64 = OpLoad %ulong %pd Aligned 8\n%va = OpBitcast %v4 %a\n%vb = OpBitcast %v4 %bb\n\
         %o = OpIMul %ulong %g %l24\n%p0 = OpPtrAccessChain %pl %out %o\n",
    );
    let mut slot = 0;
    for op in OPS {
        for wide in [false, true] {
            let (ty, acc) = if wide {
                ("%ulong", "%acc64")
            } else {
                ("%uint", "%acc")
            };
            let forms = [
                format!("Op{op} {ty} %a %bb PackedVectorFormat4x8Bit"),
                format!("Op{op} {ty} %va %vb"),
                format!("Op{op}AccSat {ty} %a %bb {acc} PackedVectorFormat4x8Bit"),
                format!("Op{op}AccSat {ty} %va %vb {acc}"),
            ];
            for f in forms {
                m += &format!("%r{slot} = {f}\n");
                let v = if wide {
                    format!("%r{slot}")
                } else {
                    m += &format!("%w{slot} = OpUConvert %ulong %r{slot}\n");
                    format!("%w{slot}")
                };
                if slot > 0 {
                    m += &format!("%p{slot} = OpPtrAccessChain %pl %p{} %l1\n", slot - 1);
                }
                m += &format!("OpStore %p{slot} {v} Aligned 8\n");
                slot += 1;
            }
        }
    }
    m + "OpReturn\nOpFunctionEnd\n"
}

/// The host's 24 results for one work-item, in the module's order.
fn host(a: u32, b: u32, acc: u32, acc64: u64) -> Vec<u64> {
    let sa = a.to_le_bytes().map(|x| i64::from(x as i8));
    let sb = b.to_le_bytes().map(|x| i64::from(x as i8));
    let ua = a.to_le_bytes().map(i64::from);
    let ub = b.to_le_bytes().map(i64::from);
    let dot = |x: [i64; 4], y: [i64; 4]| -> i64 { (0..4).map(|i| x[i] * y[i]).sum() };
    let mut out = Vec::new();
    for op in OPS {
        let d = match op {
            "SDot" => dot(sa, sb),
            "UDot" => dot(ua, ub),
            _ => dot(sa, ub),
        };
        let unsigned = op == "UDot";
        for wide in [false, true] {
            let sat = if wide {
                if unsigned {
                    acc64.saturating_add(d as u64)
                } else {
                    (acc64 as i64).saturating_add(d) as u64
                }
            } else if unsigned {
                u64::from(acc.saturating_add(d as u32))
            } else {
                u64::from((acc as i32).saturating_add(d as i32) as u32)
            };
            let plain = if wide { d as u64 } else { u64::from(d as u32) };
            out.extend([plain, plain, sat, sat]);
        }
    }
    out
}

#[test]
fn integer_dot_products_of_il_programs() {
    let e = Env::new();
    if !e.has_extension("cl_khr_integer_dot_product") {
        eprintln!("skipped: no cl_khr_integer_dot_product");
        return;
    }
    let mut rng = Rng(0xd07);
    let special = [0u32, 0x8080_8080, 0x7f7f_7f7f, 0xffff_ffff, 0x0180_7f01];
    let accs = [
        0u32,
        i32::MAX as u32 - 5,
        i32::MIN as u32 + 5,
        u32::MAX - 3,
        (-100i32) as u32,
    ];
    let accs64 = [
        0u64,
        i64::MAX as u64 - 9,
        i64::MIN as u64 + 9,
        u64::MAX - 9,
        1 << 40,
    ];
    let n = 256;
    let mut words = Vec::new();
    let mut acc64s = Vec::new();
    for i in 0..n {
        let pick = |rng: &mut Rng, k: usize| {
            if k % 3 == 0 {
                special[(rng.next_u32() % 5) as usize]
            } else {
                rng.next_u32()
            }
        };
        let (a, b) = (pick(&mut rng, i), pick(&mut rng, i + 1));
        let acc = if i % 2 == 0 {
            accs[i / 2 % 5]
        } else {
            rng.next_u32()
        };
        words.extend([a, b, acc]);
        acc64s.push(if i % 2 == 0 {
            accs64[i / 2 % 5]
        } else {
            (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32())
        });
    }
    let p = create_il(&e, &assemble_whole(&module()));
    build(&e, p);
    let k = e.kernel(p, "dots");
    let out = e.buffer(CL_MEM_READ_WRITE, n * 24 * 8, None);
    let inb = e.buffer(CL_MEM_READ_ONLY, n * 12, Some(bytes(&words)));
    let in64 = e.buffer(CL_MEM_READ_ONLY, n * 8, Some(bytes(&acc64s)));
    set_arg(k, 0, &out);
    set_arg(k, 1, &inb);
    set_arg(k, 2, &in64);
    e.run(k, &[n], None, None);
    let got: Vec<u64> = e.read(out, n * 24);
    let names = [
        "dot packed",
        "dot vector",
        "acc_sat packed",
        "acc_sat vector",
    ];
    for i in 0..n {
        let (a, b, acc) = (words[3 * i], words[3 * i + 1], words[3 * i + 2]);
        let want = host(a, b, acc, acc64s[i]);
        for (j, w) in want.iter().enumerate() {
            assert_eq!(
                got[24 * i + j],
                *w,
                "item {i}: {} {}-bit {} of a={a:#x} b={b:#x} acc={acc:#x} acc64={:#x}",
                OPS[j / 8],
                if j % 8 < 4 { 32 } else { 64 },
                names[j % 4],
                acc64s[i]
            );
        }
    }
}
