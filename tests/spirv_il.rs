//! Programs from SPIR-V (clCreateProgramWithIL): specialization constants and their error
//! codes, and the SPIR-V 1.4 instructions vkcl rewrites for llvm-spirv-15 (OpCopyLogical,
//! OpPtrEqual/OpPtrNotEqual/OpPtrDiff, OpCopyMemory with two memory operands,
//! OpDecorateString) plus DontInline functions. Modules are assembled at test time with
//! spirv-as (Debian package spirv-tools); every result is compared with the host's answer.
mod common;
use common::spirv::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const HEAD: &str = "OpCapability Addresses\nOpCapability Kernel\nOpCapability Int64\n\
                    OpCapability Int8\nOpCapability Int16\nOpCapability Linkage\n\
                    OpMemoryModel Physical64 OpenCL\n";

/// `text` (after the capabilities and memory model) assembled for SPIR-V 1.4.
fn assemble(text: &str) -> Vec<u8> {
    assemble_whole(&format!("{HEAD}{text}"))
}

fn set_spec(p: cl_program, id: u32, bytes: &[u8]) -> cl_int {
    unsafe {
        cl!(clSetProgramSpecializationConstant)(p, id, bytes.len(), bytes.as_ptr() as *const c_void)
    }
}

/// Runs kernel `name` of built `p` once (one work-item) with a zeroed `u32` output buffer
/// of `n` words as argument 0 and `args` (bytes) after it; returns the output.
fn run(e: &Env, p: cl_program, name: &str, n: usize, args: &[&[u8]]) -> Vec<u32> {
    let out = e.buffer(CL_MEM_READ_WRITE, n * 4, Some(&vec![0u8; n * 4]));
    let k = e.kernel(p, name);
    set_arg(k, 0, &out);
    for (i, a) in args.iter().enumerate() {
        ok(unsafe { cl!(clSetKernelArg)(k, i as u32 + 1, a.len(), a.as_ptr() as *const c_void) });
    }
    let g = 1usize;
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(e.queue, k, 1, null(), &g, null(), 0, null(), null_mut())
    });
    let v = e.read::<u32>(out, n);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(out);
    }
    v
}

/// One kernel writing each specialization constant (ids 1 to 6: bool, uchar, ushort, uint,
/// ulong, float) and a constant derived from one (`OpSpecConstantOp`: uint + 5).
const SPEC: &str = r#"
    OpEntryPoint Kernel %k "spec"
    OpDecorate %b SpecId 1
    OpDecorate %c SpecId 2
    OpDecorate %s SpecId 3
    OpDecorate %u SpecId 4
    OpDecorate %l SpecId 5
    OpDecorate %f SpecId 6
    %void = OpTypeVoid
    %bool = OpTypeBool
    %uchar = OpTypeInt 8 0
    %ushort = OpTypeInt 16 0
    %uint = OpTypeInt 32 0
    %ulong = OpTypeInt 64 0
    %float = OpTypeFloat 32
    %u0 = OpConstant %uint 0
    %u1 = OpConstant %uint 1
    %u5 = OpConstant %uint 5
    %l32 = OpConstant %ulong 32
    %b = OpSpecConstantTrue %bool
    %c = OpSpecConstant %uchar 200
    %s = OpSpecConstant %ushort 40000
    %u = OpSpecConstant %uint 3000000000
    %l = OpSpecConstant %ulong 0x123456789abcdef0
    %f = OpSpecConstant %float -2.5
    %sum = OpSpecConstantOp %uint IAdd %u %u5
    %pu = OpTypePointer CrossWorkgroup %uint
    %i2 = OpConstant %uint 2
    %i3 = OpConstant %uint 3
    %i4 = OpConstant %uint 4
    %i5 = OpConstant %uint 5
    %i6 = OpConstant %uint 6
    %i7 = OpConstant %uint 7
    %fn = OpTypeFunction %void %pu
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %pu
    %e = OpLabel
    %vb = OpSelect %uint %b %u1 %u0
    OpStore %out %vb Aligned 4
    %vc = OpUConvert %uint %c
    %p1 = OpInBoundsPtrAccessChain %pu %out %u1
    OpStore %p1 %vc Aligned 4
    %vs = OpUConvert %uint %s
    %p2 = OpInBoundsPtrAccessChain %pu %out %i2
    OpStore %p2 %vs Aligned 4
    %p3 = OpInBoundsPtrAccessChain %pu %out %i3
    OpStore %p3 %u Aligned 4
    %lo = OpUConvert %uint %l
    %p4 = OpInBoundsPtrAccessChain %pu %out %i4
    OpStore %p4 %lo Aligned 4
    %lh = OpShiftRightLogical %ulong %l %l32
    %hi = OpUConvert %uint %lh
    %p5 = OpInBoundsPtrAccessChain %pu %out %i5
    OpStore %p5 %hi Aligned 4
    %fb = OpBitcast %uint %f
    %p6 = OpInBoundsPtrAccessChain %pu %out %i6
    OpStore %p6 %fb Aligned 4
    %p7 = OpInBoundsPtrAccessChain %pu %out %i7
    OpStore %p7 %sum Aligned 4
    OpReturn
    OpFunctionEnd
"#;

/// What the `spec` kernel writes for these values.
fn spec_expected(b: bool, c: u8, s: u16, u: u32, l: u64, f: f32) -> Vec<u32> {
    vec![
        b as u32,
        c as u32,
        s as u32,
        u,
        l as u32,
        (l >> 32) as u32,
        f.to_bits(),
        u.wrapping_add(5),
    ]
}

#[test]
fn specialization_constants_take_the_values_set() {
    let e = Env::new();
    let il = assemble(SPEC);
    let p = create_il(&e, &il);
    build(&e, p);
    assert_eq!(
        run(&e, p, "spec", 8, &[]),
        spec_expected(true, 200, 40000, 3_000_000_000, 0x1234_5678_9abc_def0, -2.5),
        "the module's defaults"
    );
    let mut rng = Rng(0x5eed_1234);
    for round in 0..3 {
        let b = round % 2 == 1;
        let c = rng.next_u32() as u8;
        let s = rng.next_u32() as u16;
        let u = rng.next_u32();
        let l = (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32());
        let f = rng.next_f32() * 1000.0 - 500.0;
        // A boolean is true for any nonzero byte.
        ok(set_spec(p, 1, &[if b { 0x80 } else { 0 }]));
        ok(set_spec(p, 2, &[c]));
        ok(set_spec(p, 3, &s.to_ne_bytes()));
        ok(set_spec(p, 4, &u.to_ne_bytes()));
        ok(set_spec(p, 5, &l.to_ne_bytes()));
        ok(set_spec(p, 6, &f.to_ne_bytes()));
        build(&e, p);
        assert_eq!(
            run(&e, p, "spec", 8, &[]),
            spec_expected(b, c, s, u, l, f),
            "round {round}"
        );
    }
    // A value set once stays for later builds; setting one constant keeps the others.
    ok(set_spec(p, 4, &7u32.to_ne_bytes()));
    build(&e, p);
    let got = run(&e, p, "spec", 8, &[]);
    assert_eq!((got[3], got[7]), (7, 12));
    // A fresh program of the same IL starts from the defaults again (no program-cache
    // confusion between values).
    let q = create_il(&e, &il);
    build(&e, q);
    assert_eq!(run(&e, q, "spec", 8, &[])[3], 3_000_000_000);
    // clCompileProgram uses the values too: compile, then link alone.
    let r = create_il(&e, &il);
    ok(set_spec(r, 4, &123_456u32.to_ne_bytes()));
    ok(set_spec(r, 1, &[0]));
    let c = unsafe {
        cl!(clCompileProgram)(
            r,
            1,
            &e.device,
            null(),
            0,
            null(),
            null_mut(),
            None,
            null_mut(),
        )
    };
    assert_eq!(c, CL_SUCCESS, "compile failed:\n{}", build_log(r, e.device));
    let mut err = 0;
    let linked = unsafe {
        cl!(clLinkProgram)(
            e.context,
            1,
            &e.device,
            null(),
            1,
            &r,
            None,
            null_mut(),
            &mut err,
        )
    };
    ok(err);
    let got = run(&e, linked, "spec", 8, &[]);
    assert_eq!((got[0], got[3], got[7]), (0, 123_456, 123_461));
    unsafe {
        cl!(clReleaseProgram)(p);
        cl!(clReleaseProgram)(q);
        cl!(clReleaseProgram)(linked);
        cl!(clReleaseProgram)(r);
    }
}

#[test]
fn specialization_constant_errors() {
    let e = Env::new();
    let p = create_il(&e, &assemble(SPEC));
    let four = 1u32.to_ne_bytes();
    // No constant with that SpecId.
    assert_eq!(set_spec(p, 99, &four), CL_INVALID_SPEC_ID);
    assert_eq!(set_spec(p, 0, &four), CL_INVALID_SPEC_ID);
    // Sizes must match: 1 for the boolean, the type's size for the others.
    assert_eq!(set_spec(p, 1, &four), CL_INVALID_VALUE);
    assert_eq!(set_spec(p, 4, &[1, 2]), CL_INVALID_VALUE);
    assert_eq!(set_spec(p, 5, &four), CL_INVALID_VALUE);
    assert_eq!(set_spec(p, 3, &[1]), CL_INVALID_VALUE);
    // NULL value.
    let r = unsafe { cl!(clSetProgramSpecializationConstant)(p, 4, 4, null()) };
    assert_eq!(r, CL_INVALID_VALUE);
    // Failed calls leave the defaults.
    build(&e, p);
    assert_eq!(run(&e, p, "spec", 8, &[])[3], 3_000_000_000);
    // A program from source is not an IL program; a bad handle is no program.
    let src = e.build("__kernel void k(__global int *a) { a[0] = 1; }");
    assert_eq!(set_spec(src, 1, &[1]), CL_INVALID_PROGRAM);
    let r = unsafe {
        cl!(clSetProgramSpecializationConstant)(null_mut(), 1, 1, [1u8].as_ptr() as *const c_void)
    };
    assert_eq!(r, CL_INVALID_PROGRAM);
    unsafe {
        cl!(clReleaseProgram)(p);
        cl!(clReleaseProgram)(src);
    }
}

/// OpPtrEqual, OpPtrNotEqual and OpPtrDiff of pointers `i` and `j` elements into a global
/// array of 12-byte structs, a private (Function) array and a local (Workgroup) array of
/// uints.
const PTROPS: &str = r#"
    OpEntryPoint Kernel %k "ptrops" %lds
    %void = OpTypeVoid
    %bool = OpTypeBool
    %uint = OpTypeInt 32 0
    %ulong = OpTypeInt 64 0
    %u0 = OpConstant %uint 0
    %u1 = OpConstant %uint 1
    %u8 = OpConstant %uint 8
    %s3 = OpTypeStruct %uint %uint %uint
    %ps3 = OpTypePointer CrossWorkgroup %s3
    %pu = OpTypePointer CrossWorkgroup %uint
    %arr = OpTypeArray %uint %u8
    %pfarr = OpTypePointer Function %arr
    %pfu = OpTypePointer Function %uint
    %pwarr = OpTypePointer Workgroup %arr
    %pwu = OpTypePointer Workgroup %uint
    %lds = OpVariable %pwarr Workgroup
    %c2 = OpConstant %uint 2
    %c3 = OpConstant %uint 3
    %c4 = OpConstant %uint 4
    %c5 = OpConstant %uint 5
    %c6 = OpConstant %uint 6
    %c7 = OpConstant %uint 7
    %fn = OpTypeFunction %void %pu %ps3 %ulong %ulong
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %pu
    %base = OpFunctionParameter %ps3
    %i = OpFunctionParameter %ulong
    %j = OpFunctionParameter %ulong
    %e = OpLabel
    %priv = OpVariable %pfarr Function
    %a = OpPtrAccessChain %ps3 %base %i
    %b = OpPtrAccessChain %ps3 %base %j
    %eq = OpPtrEqual %bool %a %b
    %veq = OpSelect %uint %eq %u1 %u0
    OpStore %out %veq Aligned 4
    %ne = OpPtrNotEqual %bool %a %b
    %vne = OpSelect %uint %ne %u1 %u0
    %o1 = OpPtrAccessChain %pu %out %u1
    OpStore %o1 %vne Aligned 4
    %d = OpPtrDiff %ulong %a %b
    %dl = OpUConvert %uint %d
    %o2 = OpPtrAccessChain %pu %out %c2
    OpStore %o2 %dl Aligned 4
    %d32 = OpPtrDiff %uint %b %a
    %o3 = OpPtrAccessChain %pu %out %c3
    OpStore %o3 %d32 Aligned 4
    %pa = OpInBoundsAccessChain %pfu %priv %i
    %pb = OpInBoundsAccessChain %pfu %priv %j
    %pd = OpPtrDiff %uint %pa %pb
    %o4 = OpPtrAccessChain %pu %out %c4
    OpStore %o4 %pd Aligned 4
    %peq = OpPtrEqual %bool %pa %pb
    %vpeq = OpSelect %uint %peq %u1 %u0
    %o5 = OpPtrAccessChain %pu %out %c5
    OpStore %o5 %vpeq Aligned 4
    %wa = OpInBoundsAccessChain %pwu %lds %i
    %wb = OpInBoundsAccessChain %pwu %lds %j
    %wd = OpPtrDiff %uint %wa %wb
    %o6 = OpPtrAccessChain %pu %out %c6
    OpStore %o6 %wd Aligned 4
    %wne = OpPtrNotEqual %bool %wa %wb
    %vwne = OpSelect %uint %wne %u1 %u0
    %o7 = OpPtrAccessChain %pu %out %c7
    OpStore %o7 %vwne Aligned 4
    OpReturn
    OpFunctionEnd
"#;

#[test]
fn spirv14_pointer_comparisons_and_differences() {
    let e = Env::new();
    let p = create_il(&e, &assemble(PTROPS));
    build(&e, p);
    let base = e.buffer(CL_MEM_READ_WRITE, 8 * 12, None);
    let k_base = (base as usize).to_ne_bytes();
    for (i, j) in [(5u64, 2u64), (2, 5), (3, 3), (0, 7), (7, 0)] {
        let got = run(
            &e,
            p,
            "ptrops",
            8,
            &[&k_base, &i.to_ne_bytes(), &j.to_ne_bytes()],
        );
        let d = i as i64 - j as i64;
        let want = vec![
            (i == j) as u32,
            (i != j) as u32,
            d as u32,
            (-d) as u32,
            d as u32,
            (i == j) as u32,
            d as u32,
            (i != j) as u32,
        ];
        assert_eq!(got, want, "i = {i}, j = {j}");
    }
    unsafe {
        cl!(clReleaseMemObject)(base);
        cl!(clReleaseProgram)(p);
    }
}

/// OpCopyLogical between two struct types of the same members (with a nested array),
/// OpCopyMemory and OpCopyMemorySized with zero, one and two memory operands, a DontInline
/// function and UserSemantic string decorations.
const COPIES: &str = r#"
    OpEntryPoint Kernel %k "copies"
    OpDecorateString %y UserSemantic "vkcl test"
    OpDecorateString %x UserSemantic "the x"
    OpMemberDecorateString %sa 1 UserSemantic "member"
    %void = OpTypeVoid
    %uint = OpTypeInt 32 0
    %ulong = OpTypeInt 64 0
    %float = OpTypeFloat 32
    %u0 = OpConstant %uint 0
    %u1 = OpConstant %uint 1
    %u2 = OpConstant %uint 2
    %l4 = OpConstant %ulong 4
    %arr = OpTypeArray %uint %u2
    %arrb = OpTypeArray %uint %u2
    %sa = OpTypeStruct %uint %float %arr
    %sb = OpTypeStruct %uint %float %arrb
    %psb = OpTypePointer CrossWorkgroup %sb
    %pu = OpTypePointer CrossWorkgroup %uint
    %pfu = OpTypePointer Function %uint
    %c4 = OpConstant %uint 4
    %c5 = OpConstant %uint 5
    %c6 = OpConstant %uint 6
    %c7 = OpConstant %uint 7
    %fn = OpTypeFunction %void %pu %uint %float
    %ff = OpTypeFunction %uint %uint
    %triple = OpFunction %uint DontInline %ff
    %t = OpFunctionParameter %uint
    %te = OpLabel
    %t2 = OpIMul %uint %t %u2
    %t3 = OpIAdd %uint %t2 %t
    OpReturnValue %t3
    OpFunctionEnd
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %pu
    %x = OpFunctionParameter %uint
    %y = OpFunctionParameter %float
    %e = OpLabel
    %v = OpVariable %pfu Function
    %x3 = OpFunctionCall %uint %triple %x
    %a = OpCompositeConstruct %arr %x3 %u1
    %s = OpCompositeConstruct %sa %x %y %a
    %c = OpCopyLogical %sb %s
    %o = OpBitcast %psb %out
    OpStore %o %c Aligned 4
    OpStore %v %x3
    %p4 = OpPtrAccessChain %pu %out %c4
    OpCopyMemory %p4 %v
    %p5 = OpPtrAccessChain %pu %out %c5
    OpCopyMemory %p5 %v Volatile
    %p6 = OpPtrAccessChain %pu %out %c6
    OpCopyMemory %p6 %v Aligned 4 Volatile|Aligned 4
    %p7 = OpPtrAccessChain %pu %out %c7
    OpCopyMemorySized %p7 %v %l4 Volatile Aligned 4
    OpReturn
    OpFunctionEnd
"#;

#[test]
fn spirv14_copies_dont_inline_and_string_decorations() {
    let e = Env::new();
    let p = create_il(&e, &assemble(COPIES));
    build(&e, p);
    for (x, y) in [(7u32, 1.25f32), (0x4000_0001, -3.5), (0, 0.0)] {
        let got = run(&e, p, "copies", 8, &[&x.to_ne_bytes(), &y.to_ne_bytes()]);
        let x3 = x.wrapping_mul(3);
        assert_eq!(
            got,
            vec![x, y.to_bits(), x3, 1, x3, x3, x3, x3],
            "x = {x}, y = {y}"
        );
    }
    unsafe { cl!(clReleaseProgram)(p) };
}

fn compile_il(e: &Env, il: &[u8]) -> cl_program {
    let p = create_il(e, il);
    let r = unsafe {
        cl!(clCompileProgram)(
            p,
            1,
            &e.device,
            null(),
            0,
            null(),
            null_mut(),
            None,
            null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS, "compile failed:\n{}", build_log(p, e.device));
    p
}

/// SPV_KHR_no_integer_wrap_decoration, SPV_KHR_expect_assume, a scalar OpConstantNull and an
/// OpVectorShuffle of vectors of different lengths: out[0] = (x + 7) (no-wrap add, expected
/// to be 7 more than x, x assumed below 1000), out[1..5] = shuffle of (x, 2x) with (0, 0, 0).
const EXTENSIONS: &str = r#"
    OpCapability Addresses
    OpCapability Kernel
    OpCapability Int64
    OpCapability ExpectAssumeKHR
    OpExtension "SPV_KHR_no_integer_wrap_decoration"
    OpExtension "SPV_KHR_expect_assume"
    OpMemoryModel Physical64 OpenCL
    OpEntryPoint Kernel %k "ext"
    OpDecorate %sum NoSignedWrap
    OpDecorate %sum NoUnsignedWrap
    %void = OpTypeVoid
    %bool = OpTypeBool
    %uint = OpTypeInt 32 0
    %v2 = OpTypeVector %uint 2
    %v3 = OpTypeVector %uint 3
    %v4 = OpTypeVector %uint 4
    %zero = OpConstantNull %uint
    %z3 = OpConstantNull %v3
    %u1 = OpConstant %uint 1
    %u2 = OpConstant %uint 2
    %u7 = OpConstant %uint 7
    %u1000 = OpConstant %uint 1000
    %pu = OpTypePointer CrossWorkgroup %uint
    %pv4 = OpTypePointer CrossWorkgroup %v4
    %fn = OpTypeFunction %void %pu %uint
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %pu
    %x = OpFunctionParameter %uint
    %e = OpLabel
    %small = OpULessThan %bool %x %u1000
    OpAssumeTrueKHR %small
    %sum = OpIAdd %uint %x %u7
    %ex = OpExpectKHR %uint %sum %u7
    %plus0 = OpIAdd %uint %ex %zero
    OpStore %out %plus0 Aligned 4
    %x2 = OpIMul %uint %x %u2
    %pair = OpCompositeConstruct %v2 %x %x2
    %mix = OpVectorShuffle %v4 %pair %z3 1 2 0 3
    %p1 = OpPtrAccessChain %pu %out %u1
    %pv = OpBitcast %pv4 %p1
    OpStore %pv %mix Aligned 4
    OpReturn
    OpFunctionEnd
"#;

#[test]
fn spirv_extensions_of_il_programs() {
    let e = Env::new();
    for name in [
        "cl_khr_spirv_no_integer_wrap_decoration",
        "cl_khr_spirv_linkonce_odr",
        "cl_khr_expect_assume",
    ] {
        assert!(e.has_extension(name), "{name} not reported");
    }
    let p = create_il(&e, &assemble_whole(EXTENSIONS));
    build(&e, p);
    for x in [0u32, 5, 999] {
        let got = run(&e, p, "ext", 5, &[&x.to_ne_bytes()]);
        assert_eq!(got, vec![x + 7, 2 * x, 0, x, 0], "x = {x}");
    }
    unsafe { cl!(clReleaseProgram)(p) };
}

/// An object with `a` (LinkOnceODR, x + 5) and `b` (Export, -x), and a main module calling
/// `b(a(x))` that imports `b` and either imports `a` or has its own LinkOnceODR copy.
const LINKONCE_OBJ: &str = r#"
    OpCapability Addresses
    OpCapability Linkage
    OpCapability Kernel
    OpExtension "SPV_KHR_linkonce_odr"
    OpMemoryModel Physical64 OpenCL
    OpDecorate %a LinkageAttributes "a" LinkOnceODR
    OpDecorate %b LinkageAttributes "b" Export
    %uint = OpTypeInt 32 0
    %u5 = OpConstant %uint 5
    %u0 = OpConstant %uint 0
    %fn = OpTypeFunction %uint %uint
    %a = OpFunction %uint None %fn
    %ax = OpFunctionParameter %uint
    %ae = OpLabel
    %ar = OpIAdd %uint %ax %u5
    OpReturnValue %ar
    OpFunctionEnd
    %b = OpFunction %uint None %fn
    %bx = OpFunctionParameter %uint
    %be = OpLabel
    %br = OpISub %uint %u0 %bx
    OpReturnValue %br
    OpFunctionEnd
"#;

fn linkonce_main(own_a: bool) -> String {
    let (deco, def) = if own_a {
        (
            "OpDecorate %a LinkageAttributes \"a\" LinkOnceODR",
            "%a = OpFunction %uint None %fn\n%ax = OpFunctionParameter %uint\n%ae = OpLabel\n\
             %ar = OpIAdd %uint %ax %u5\nOpReturnValue %ar\nOpFunctionEnd",
        )
    } else {
        (
            "OpDecorate %a LinkageAttributes \"a\" Import",
            "%a = OpFunction %uint None %fn\n%ax = OpFunctionParameter %uint\nOpFunctionEnd",
        )
    };
    format!(
        r#"
    OpCapability Addresses
    OpCapability Linkage
    OpCapability Kernel
    OpCapability Int64
    OpExtension "SPV_KHR_linkonce_odr"
    OpMemoryModel Physical64 OpenCL
    OpEntryPoint Kernel %k "linked"
    {deco}
    OpDecorate %b LinkageAttributes "b" Import
    %uint = OpTypeInt 32 0
    %u5 = OpConstant %uint 5
    %void = OpTypeVoid
    %pu = OpTypePointer CrossWorkgroup %uint
    %fn = OpTypeFunction %uint %uint
    %kfn = OpTypeFunction %void %pu %uint
    %b = OpFunction %uint None %fn
    %bx = OpFunctionParameter %uint
    OpFunctionEnd
    {def}
    %k = OpFunction %void None %kfn
    %out = OpFunctionParameter %pu
    %x = OpFunctionParameter %uint
    %e = OpLabel
    %y = OpFunctionCall %uint %a %x
    %z = OpFunctionCall %uint %b %y
    OpStore %out %z Aligned 4
    OpReturn
    OpFunctionEnd
"#
    )
}

#[test]
fn linkonce_odr_functions_link() {
    let e = Env::new();
    for own_a in [false, true] {
        // The object first: llvm-link would drop its linkonce_odr `a` before seeing a use.
        let obj = compile_il(&e, &assemble_whole(LINKONCE_OBJ));
        let main = compile_il(&e, &assemble_whole(&linkonce_main(own_a)));
        let inputs = [obj, main];
        let mut err = 0;
        let p = unsafe {
            cl!(clLinkProgram)(
                e.context,
                1,
                &e.device,
                null(),
                2,
                inputs.as_ptr(),
                None,
                null_mut(),
                &mut err,
            )
        };
        assert_eq!(
            err,
            CL_SUCCESS,
            "link (own a: {own_a}):\n{}",
            build_log(p, e.device)
        );
        for x in [0u32, 3, 1 << 20] {
            let got = run(&e, p, "linked", 1, &[&x.to_ne_bytes()]);
            assert_eq!(got[0], (x + 5).wrapping_neg(), "x = {x}, own a: {own_a}");
        }
        unsafe {
            cl!(clReleaseProgram)(p);
            cl!(clReleaseProgram)(obj);
            cl!(clReleaseProgram)(main);
        }
    }
}

/// Work-group collectives of an IL program (`OpGroup*` of `Workgroup` scope, read back by
/// llvm-spirv-15 as `work_group_*` built-ins that vkcl's IL library defines), two groups of
/// 64 against the host; the broadcast with a 64-bit and a 32-bit local id.
const WG_COLLECTIVES: &str = r#"
    OpCapability Addresses
    OpCapability Kernel
    OpCapability Int64
    OpCapability Groups
    OpMemoryModel Physical64 OpenCL
    OpEntryPoint Kernel %k "wg" %gid %lid
    OpDecorate %gid BuiltIn GlobalInvocationId
    OpDecorate %lid BuiltIn LocalInvocationId
    OpDecorate %gid Constant
    OpDecorate %lid Constant
    %uint = OpTypeInt 32 0
    %ulong = OpTypeInt 64 0
    %float = OpTypeFloat 32
    %bool = OpTypeBool
    %v3 = OpTypeVector %ulong 3
    %pv3 = OpTypePointer Input %v3
    %gid = OpVariable %pv3 Input
    %lid = OpVariable %pv3 Input
    %void = OpTypeVoid
    %pu = OpTypePointer CrossWorkgroup %uint
    %fn = OpTypeFunction %void %pu %pu
    %wgs = OpConstant %uint 2
    %c0 = OpConstant %uint 0
    %c1 = OpConstant %uint 1
    %c5 = OpConstant %uint 5
    %c500 = OpConstant %uint 500
    %c1000 = OpConstant %uint 1000
    %l5 = OpConstant %ulong 5
    %l10 = OpConstant %ulong 10
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %pu
    %in = OpFunctionParameter %pu
    %b = OpLabel
    %g3 = OpLoad %v3 %gid
    %g = OpCompositeExtract %ulong %g3 0
    %pin = OpPtrAccessChain %pu %in %g
    %x = OpLoad %uint %pin Aligned 4
    %r0 = OpGroupIAdd %uint %wgs Reduce %x
    %r1 = OpGroupIAdd %uint %wgs InclusiveScan %x
    %r2 = OpGroupIAdd %uint %wgs ExclusiveScan %x
    %r3 = OpGroupSMin %uint %wgs Reduce %x
    %r4 = OpGroupUMax %uint %wgs InclusiveScan %x
    %xf = OpConvertUToF %float %x
    %r5f = OpGroupFAdd %float %wgs Reduce %xf
    %r5 = OpConvertFToU %uint %r5f
    %big = OpUGreaterThan %bool %x %c500
    %any = OpGroupAny %bool %wgs %big
    %r6 = OpSelect %uint %any %c1 %c0
    %small = OpULessThan %bool %x %c1000
    %all = OpGroupAll %bool %wgs %small
    %r7 = OpSelect %uint %all %c1 %c0
    %r8 = OpGroupBroadcast %uint %wgs %x %l5
    %r9 = OpGroupBroadcast %uint %wgs %x %c5
    %base = OpIMul %ulong %g %l10
    %o0 = OpPtrAccessChain %pu %out %base
    OpStore %o0 %r0 Aligned 4
    %o1 = OpPtrAccessChain %pu %o0 %c1
    OpStore %o1 %r1 Aligned 4
    %o2 = OpPtrAccessChain %pu %o1 %c1
    OpStore %o2 %r2 Aligned 4
    %o3 = OpPtrAccessChain %pu %o2 %c1
    OpStore %o3 %r3 Aligned 4
    %o4 = OpPtrAccessChain %pu %o3 %c1
    OpStore %o4 %r4 Aligned 4
    %o5 = OpPtrAccessChain %pu %o4 %c1
    OpStore %o5 %r5 Aligned 4
    %o6 = OpPtrAccessChain %pu %o5 %c1
    OpStore %o6 %r6 Aligned 4
    %o7 = OpPtrAccessChain %pu %o6 %c1
    OpStore %o7 %r7 Aligned 4
    %o8 = OpPtrAccessChain %pu %o7 %c1
    OpStore %o8 %r8 Aligned 4
    %o9 = OpPtrAccessChain %pu %o8 %c1
    OpStore %o9 %r9 Aligned 4
    OpReturn
    OpFunctionEnd
"#;

#[test]
fn work_group_collectives_of_il_programs() {
    let e = Env::new();
    let (groups, size) = (2usize, 64usize);
    let n = groups * size;
    let x: Vec<u32> = (0..n as u32).map(|i| (i * 37 + 11) % 997).collect();
    let p = create_il(&e, &assemble_whole(WG_COLLECTIVES));
    build(&e, p);
    let k = e.kernel(p, "wg");
    let out = e.buffer(CL_MEM_READ_WRITE, n * 40, None);
    let inb = e.buffer(CL_MEM_READ_ONLY, n * 4, Some(bytes(&x)));
    set_arg(k, 0, &out);
    set_arg(k, 1, &inb);
    e.run(k, &[n], Some(&[size]), None);
    let got: Vec<u32> = e.read(out, n * 10);
    for g in 0..groups {
        let v = &x[g * size..(g + 1) * size];
        let sum: u32 = v.iter().sum();
        for (l, &xi) in v.iter().enumerate() {
            let i = g * size + l;
            let want = [
                sum,
                v[..=l].iter().sum(),
                v[..l].iter().sum(),
                *v.iter().min().unwrap(),
                *v[..=l].iter().max().unwrap(),
                sum,
                u32::from(v.iter().any(|&y| y > 500)),
                u32::from(v.iter().all(|&y| y < 1000)),
                v[5],
                v[5],
            ];
            assert_eq!(&got[10 * i..10 * i + 10], &want, "work-item {i} (x = {xi})");
        }
    }
}
