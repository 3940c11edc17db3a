//! OpenCL 3.1 (docs/opencl31.md) through the real loader: the device and platform versions
//! against the requirements read from other queries, OpenCL C 3.1 (`-cl-std=CL3.1`, its
//! macros, the promoted built-ins without any pragma, against host answers) and zero-sized
//! `__local` arguments, and the SPIR-V that OpenCL 3.1 requires beyond 3.0's (SPIR-V 1.3's
//! `GroupNonUniformShuffle`/`ShuffleRelative`, `SPV_KHR_subgroup_rotate`,
//! `SPV_KHR_bit_instructions`; `SPV_KHR_integer_dot_product`: tests/spirv_il_dot.rs) through
//! clCreateProgramWithIL. clGetKernelSuggestedLocalWorkSize: tests/suggested_local_size.rs.
mod common;
use common::spirv::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn device_string(d: cl_device_id, name: cl_device_info) -> String {
    info_string(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, name, s, v, r) })
}

fn device_scalar<T: Copy + Default>(d: cl_device_id, name: cl_device_info) -> T {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, name, s, v, r) })
}

/// A `cl_name_version` list query as (name, version) pairs.
fn name_versions(d: cl_device_id, name: cl_device_info) -> Vec<(String, cl_version)> {
    let mut size = 0;
    ok(unsafe { cl!(clGetDeviceInfo)(d, name, 0, null_mut(), &mut size) });
    let n = size / std::mem::size_of::<cl_name_version>();
    assert_eq!(n * std::mem::size_of::<cl_name_version>(), size);
    let mut v: Vec<cl_name_version> = (0..n)
        .map(|_| cl_name_version {
            version: 0,
            name: [0; CL_NAME_VERSION_MAX_NAME_SIZE],
        })
        .collect();
    ok(unsafe { cl!(clGetDeviceInfo)(d, name, size, v.as_mut_ptr() as *mut c_void, null_mut()) });
    v.iter()
        .map(|nv| {
            let s: Vec<u8> = nv
                .name
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            (String::from_utf8(s).unwrap(), nv.version)
        })
        .collect()
}

/// "OpenCL M.m <anything>" -> (M, m), as the specification's version format requires.
fn parse_version(text: &str) -> (u32, u32) {
    let rest = text.strip_prefix("OpenCL ").expect(text);
    let (num, info) = rest.split_once(' ').expect("a space after the version");
    assert!(!info.is_empty(), "{text}: platform-specific information");
    let (major, minor) = num.split_once('.').expect(text);
    (major.parse().expect(text), minor.parse().expect(text))
}

fn make_version(major: u32, minor: u32) -> cl_version {
    (major << 22) | (minor << 12)
}

/// Whether the device is one where vkcl knows every 3.1 requirement holds (lavapipe 22.3.6
/// and 25.0.7, NVIDIA: docs/subgroups.md, docs/opencl31.md).
fn known_31_device(d: cl_device_id) -> bool {
    let vendor: cl_uint = device_scalar(d, CL_DEVICE_VENDOR_ID);
    device_string(d, CL_DEVICE_NAME).contains("llvmpipe") || vendor == 0x10de
}

#[test]
fn versions_follow_the_31_requirements() {
    let d = device();
    let version = parse_version(&device_string(d, CL_DEVICE_VERSION));
    let numeric: cl_version = device_scalar(d, CL_DEVICE_NUMERIC_VERSION);
    assert_eq!(numeric, make_version(version.0, version.1));
    let p = platform();
    let ptext =
        info_string(|s, v, r| unsafe { cl!(clGetPlatformInfo)(p, CL_PLATFORM_VERSION, s, v, r) });
    let pversion = parse_version(&ptext);
    let pnumeric: cl_version = info_scalar(|s, v, r| unsafe {
        cl!(clGetPlatformInfo)(p, CL_PLATFORM_NUMERIC_VERSION, s, v, r)
    });
    assert_eq!(pnumeric, make_version(pversion.0, pversion.1));
    // The platform reports the highest of its devices' versions.
    assert!(pversion >= version, "{ptext}");

    // The 3.1 requirements, each from its own query.
    let extensions = device_string(d, CL_DEVICE_EXTENSIONS);
    let has = |e: &str| extensions.split(' ').any(|x| x == e);
    let required = [
        "cl_khr_device_uuid",
        "cl_khr_extended_bit_ops",
        "cl_khr_integer_dot_product",
        "cl_khr_spirv_queries",
        "cl_khr_subgroup_extended_types",
        "cl_khr_subgroup_rotate",
        "cl_khr_subgroup_shuffle",
        "cl_khr_subgroup_shuffle_relative",
        "cl_khr_suggested_local_work_size",
    ];
    let sub_groups: cl_uint = device_scalar(d, CL_DEVICE_MAX_NUM_SUB_GROUPS);
    let features = name_versions(d, CL_DEVICE_OPENCL_C_FEATURES);
    let ils = device_string(d, CL_DEVICE_IL_VERSION);
    let compiler: cl_bool = device_scalar(d, CL_DEVICE_COMPILER_AVAILABLE);
    let holds = required.iter().all(|e| has(e))
        && sub_groups >= 1
        && features.iter().any(|(n, _)| n == "__opencl_c_subgroups")
        && (0..=4).all(|m| ils.split(' ').any(|x| x == format!("SPIR-V_1.{m}")))
        && compiler == CL_TRUE;
    let forced_30 = std::env::var("VKCL_OPENCL_VERSION").as_deref() == Ok("3.0");
    assert_eq!(
        version,
        if holds && !forced_30 { (3, 1) } else { (3, 0) },
        "extensions: {extensions}; sub-groups {sub_groups}; ILs {ils}"
    );
    if known_31_device(d) && !forced_30 {
        assert_eq!(
            version,
            (3, 1),
            "lavapipe and NVIDIA meet every 3.1 requirement"
        );
    }

    // CL_DEVICE_OPENCL_C_ALL_VERSIONS: OpenCL C 1.0, 1.1, 1.2 and 3.0, and 3.1 on a 3.1 device.
    let all = name_versions(d, CL_DEVICE_OPENCL_C_ALL_VERSIONS);
    assert!(all.iter().all(|(n, _)| n == "OpenCL C"), "{all:?}");
    let mut want = vec![make_version(1, 0), make_version(1, 1), make_version(1, 2)];
    want.push(make_version(3, 0));
    if version == (3, 1) {
        want.push(make_version(3, 1));
    }
    let got: Vec<cl_version> = all.iter().map(|(_, v)| *v).collect();
    assert_eq!(got, want);
    // CL_DEVICE_OPENCL_C_VERSION (the highest OpenCL C 1.x) is one of them.
    let c = device_string(d, CL_DEVICE_OPENCL_C_VERSION);
    assert!(c.starts_with("OpenCL C 1.2 "), "{c}");
    // The 3.1 name CL_DEVICE_MAX_WORK_GROUP_SIZES (0x1005, CL/cl.h of OpenCL-Headers
    // a1b9cce) answers as CL_DEVICE_MAX_WORK_ITEM_SIZES: three sizes.
    let mut size = 0;
    ok(unsafe { cl!(clGetDeviceInfo)(d, 0x1005, 0, null_mut(), &mut size) });
    assert_eq!(size, 3 * std::mem::size_of::<usize>());
}

/// The device's OpenCL version as (major, minor).
fn device_version() -> (u32, u32) {
    parse_version(&device_string(device(), CL_DEVICE_VERSION))
}

/// OpenCL C 3.1: the version macros, and the built-ins that OpenCL C 3.1 takes from the
/// promoted extensions (sub-group rotate, shuffles, relative shuffles and extended types,
/// extended bit operations, integer dot products) without any pragma, each against the
/// host's answer; non-uniform work-groups as in OpenCL C 3.0.
#[test]
fn opencl_c_31_macros_and_builtins() {
    let env = Env::new();
    if device_version() < (3, 1) {
        let e = env
            .try_build("__kernel void k() {}", "-cl-std=CL3.1")
            .unwrap_err();
        assert_eq!(e.0, CL_BUILD_PROGRAM_FAILURE, "{}", e.1);
        return;
    }
    let src = r#"
__kernel void macros(__global int *out) {
    out[0] = __OPENCL_C_VERSION__;
    out[1] = __OPENCL_VERSION__;
    out[2] = CL_VERSION_3_1;
    out[3] = CL_VERSION_3_0;
}
__kernel void builtins(__global const uint *in, __global uint *out) {
    size_t i = get_global_id(0);
    uint x = in[i];
    __global uint *o = out + i * 9;
    o[0] = get_sub_group_local_id();
    o[1] = get_max_sub_group_size();
    o[2] = sub_group_rotate(x, 1);
    o[3] = sub_group_shuffle_xor(x, 1u);
    o[4] = sub_group_shuffle(x, get_sub_group_local_id() ^ 2u);
    // Every lane shuffles: "the return value is undefined if the work item with sub-group
    // local ID equal to the calculated index is inactive" (OpenCL C, sub_group_shuffle_up),
    // so lane 0 may not skip the call in a branch (NVIDIA's driver then gave lane 1 a 0).
    // Lane 0's own result (no lane below it) is not checked.
    o[5] = sub_group_shuffle_up(x, 1u);
    o[6] = (uchar)sub_group_broadcast((uchar)x, 0u);
    o[7] = bitfield_extract_unsigned(x, 4, 8) ^ bit_reverse(x);
    o[8] = dot(as_uchar4(x), as_uchar4(x ^ 0x5a5a5a5au)) + dot_4x8packed_ss_int(x, ~x);
}
"#;
    let p = env
        .try_build(src, "-cl-std=CL3.1")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "macros");
    let m = env.zeros::<i32>(4);
    arg_mem(k, 0, m);
    env.run(k, &[1], None, None);
    assert_eq!(env.read::<i32>(m, 4), vec![310, 310, 310, 300]);
    // With -cl-std=CL3.0 the language version is 3.0; the device's stays 3.1.
    let p30 = env
        .try_build(src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k30 = env.kernel(p30, "macros");
    arg_mem(k30, 0, m);
    env.run(k30, &[1], None, None);
    assert_eq!(env.read::<i32>(m, 4), vec![300, 310, 310, 300]);

    // Work-groups of 64 hold whole sub-groups on every device vkcl knows (8 or 32 wide);
    // 136 items in groups of 64 end with a smaller work-group (non-uniform, allowed in 3.1).
    let n = 136;
    let mut rng = Rng(31);
    let input: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let inp = env.buf(&input);
    let out = env.zeros::<u32>(n * 9);
    let k = env.kernel(p, "builtins");
    arg_mem(k, 0, inp);
    arg_mem(k, 1, out);
    env.run(k, &[n], Some(&[64]), None);
    let got = env.read::<u32>(out, n * 9);
    let dot4 = |a: u32, b: u32, sa: bool, sb: bool| -> i64 {
        (0..4)
            .map(|j| {
                let (x, y) = ((a >> (8 * j)) as u8, (b >> (8 * j)) as u8);
                let x = if sa { i64::from(x as i8) } else { i64::from(x) };
                let y = if sb { i64::from(y as i8) } else { i64::from(y) };
                x * y
            })
            .sum()
    };
    for i in 0..n {
        let o = &got[i * 9..i * 9 + 9];
        let (lane, max) = (o[0] as usize, o[1] as usize);
        let group_start = i / 64 * 64;
        let group_len = (n - group_start).min(64);
        // The sub-group: consecutive items of the work-group (docs/subgroups.md).
        let base = i - lane;
        let sg_len = (group_start + group_len - base).min(max);
        assert!(lane < sg_len && (8..=64).contains(&max), "item {i}: {o:?}");
        let at = |l: usize| input[base + l];
        let x = input[i];
        // Rotation is modulo the maximum sub-group size; lanes beyond a smaller last
        // sub-group hold no value.
        if (lane + 1) % max < sg_len {
            assert_eq!(o[2], at((lane + 1) % max), "sub_group_rotate, item {i}");
        }
        if (lane ^ 1) < sg_len {
            assert_eq!(o[3], at(lane ^ 1), "sub_group_shuffle_xor, item {i}");
        }
        if (lane ^ 2) < sg_len {
            assert_eq!(o[4], at(lane ^ 2), "sub_group_shuffle, item {i}");
        }
        if lane > 0 {
            assert_eq!(o[5], at(lane - 1), "sub_group_shuffle_up, item {i}");
        }
        assert_eq!(o[6], at(0) & 0xff, "sub_group_broadcast(uchar), item {i}");
        assert_eq!(
            o[7],
            ((x >> 4) & 0xff) ^ x.reverse_bits(),
            "bit ops, item {i}"
        );
        let want = dot4(x, x ^ 0x5a5a_5a5a, false, false) + dot4(x, !x, true, true);
        assert_eq!(o[8], want as u32, "dot products, item {i}");
    }
}

/// OpenCL 3.1 allows a `__local` argument of size 0 on a 3.1 platform; the kernel runs and
/// `CL_KERNEL_LOCAL_MEM_SIZE` counts nothing for it. Before 3.1 it is `CL_INVALID_ARG_SIZE`.
#[test]
fn zero_sized_local_arguments() {
    let env = Env::new();
    let src = r#"
__kernel void k(__global uint *out, __local uint *unused, __local uint *scratch) {
    uint l = get_local_id(0);
    scratch[l] = l * 3u;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[get_local_size(0) - 1u - l];
}
"#;
    let k = env.kern_opts(src, "-cl-std=CL3.0", "k");
    let r = unsafe { cl!(clSetKernelArg)(k, 1, 0, null()) };
    let p = info_string(|s, v, r| unsafe {
        cl!(clGetPlatformInfo)(platform(), CL_PLATFORM_VERSION, s, v, r)
    });
    if parse_version(&p) < (3, 1) {
        assert_eq!(r, CL_INVALID_ARG_SIZE);
        return;
    }
    ok(r);
    let out = env.zeros::<u32>(32);
    arg_mem(k, 0, out);
    arg_local(k, 2, 16 * 4);
    let local: cl_ulong = info_scalar(|s, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(k, env.device, CL_KERNEL_LOCAL_MEM_SIZE, s, v, r)
    });
    assert_eq!(local, 64, "only the 64-byte argument counts");
    env.run(k, &[32], Some(&[16]), None);
    let got = env.read::<u32>(out, 32);
    let want: Vec<u32> = (0..32).map(|i| (15 - i % 16) * 3).collect();
    assert_eq!(got, want);
    // A non-NULL value is still an error for a __local argument, whatever the size.
    let x = 0u32;
    let r = unsafe { cl!(clSetKernelArg)(k, 1, 0, &x as *const u32 as *const c_void) };
    assert_eq!(r, CL_INVALID_ARG_VALUE);
}

/// A SPIR-V 1.4 module with what OpenCL 3.1's SPIR-V environment adds (section "SPIR-V
/// Extensions" and SPIR-V 1.3's capabilities): per work-item, out[6i..6i+6] = shuffle-xor 1,
/// shuffle-down 1, rotate 1 (sub-group scope), bit-field extract (4, 8), bit reverse, and the
/// sub-group local id; out[6n + i] = the maximum sub-group size.
const SPIRV_31: &str = r#"
    OpCapability Addresses
    OpCapability Kernel
    OpCapability Int64
    OpCapability GroupNonUniform
    OpCapability GroupNonUniformShuffle
    OpCapability GroupNonUniformShuffleRelative
    OpCapability GroupNonUniformRotateKHR
    OpCapability BitInstructions
    OpExtension "SPV_KHR_bit_instructions"
    OpExtension "SPV_KHR_subgroup_rotate"
    OpMemoryModel Physical64 OpenCL
    OpEntryPoint Kernel %k "sg31" %gid %lane %sgmax
    OpDecorate %gid BuiltIn GlobalInvocationId
    OpDecorate %gid Constant
    OpDecorate %lane BuiltIn SubgroupLocalInvocationId
    OpDecorate %lane Constant
    OpDecorate %sgmax BuiltIn SubgroupMaxSize
    OpDecorate %sgmax Constant
    %void = OpTypeVoid
    %uint = OpTypeInt 32 0
    %ulong = OpTypeInt 64 0
    %v3l = OpTypeVector %ulong 3
    %pin3 = OpTypePointer Input %v3l
    %pinu = OpTypePointer Input %uint
    %gid = OpVariable %pin3 Input
    %lane = OpVariable %pinu Input
    %sgmax = OpVariable %pinu Input
    %pu = OpTypePointer CrossWorkgroup %uint
    %fn = OpTypeFunction %void %pu %pu %ulong
    %u1 = OpConstant %uint 1
    %scope = OpConstant %uint 3
    %u4 = OpConstant %uint 4
    %u8 = OpConstant %uint 8
    %l1 = OpConstant %ulong 1
    %l6 = OpConstant %ulong 6
    %k = OpFunction %void None %fn
    %out = OpFunctionParameter %pu
    %in = OpFunctionParameter %pu
    %n = OpFunctionParameter %ulong
    %e = OpLabel
    %g3 = OpLoad %v3l %gid Aligned 32
    %g = OpCompositeExtract %ulong %g3 0
    %l = OpLoad %uint %lane
    %m = OpLoad %uint %sgmax
    %pin = OpInBoundsPtrAccessChain %pu %in %g
    %x = OpLoad %uint %pin Aligned 4
    %r0 = OpGroupNonUniformShuffleXor %uint %scope %x %u1
    %r1 = OpGroupNonUniformShuffleDown %uint %scope %x %u1
    %r2 = OpGroupNonUniformRotateKHR %uint %scope %x %u1
    %r3 = OpBitFieldUExtract %uint %x %u4 %u8
    %r4 = OpBitReverse %uint %x
    %at = OpIMul %ulong %g %l6
    %o0 = OpInBoundsPtrAccessChain %pu %out %at
    OpStore %o0 %r0 Aligned 4
    %o1 = OpInBoundsPtrAccessChain %pu %o0 %l1
    OpStore %o1 %r1 Aligned 4
    %o2 = OpInBoundsPtrAccessChain %pu %o1 %l1
    OpStore %o2 %r2 Aligned 4
    %o3 = OpInBoundsPtrAccessChain %pu %o2 %l1
    OpStore %o3 %r3 Aligned 4
    %o4 = OpInBoundsPtrAccessChain %pu %o3 %l1
    OpStore %o4 %r4 Aligned 4
    %o5 = OpInBoundsPtrAccessChain %pu %o4 %l1
    OpStore %o5 %l Aligned 4
    %n6 = OpIMul %ulong %n %l6
    %mi = OpIAdd %ulong %n6 %g
    %om = OpInBoundsPtrAccessChain %pu %out %mi
    OpStore %om %m Aligned 4
    OpReturn
    OpFunctionEnd
"#;

#[test]
fn spirv_required_by_opencl_31() {
    let env = Env::new();
    let ils = device_string(env.device, CL_DEVICE_IL_VERSION);
    if !ils.split(' ').any(|v| v == "SPIR-V_1.3") {
        return;
    }
    let p = create_il(&env, &assemble_whole(SPIRV_31));
    build(&env, p);
    let k = env.kernel(p, "sg31");
    // Work-groups of 64: whole sub-groups of 8 (lavapipe) or 32 (NVIDIA).
    let n = 128usize;
    let mut rng = Rng(1331);
    let input: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let inp = env.buf(&input);
    let out = env.zeros::<u32>(n * 7);
    arg_mem(k, 0, out);
    arg_mem(k, 1, inp);
    set_arg(k, 2, &(n as u64));
    env.run(k, &[n], Some(&[64]), None);
    let got = env.read::<u32>(out, n * 7);
    for i in 0..n {
        let o = &got[i * 6..i * 6 + 6];
        let (lane, max) = (o[5] as usize, got[n * 6 + i] as usize);
        assert!(
            max >= 1 && 64 % max == 0 && lane < max,
            "item {i}: {o:?}, max {max}"
        );
        let at = |l: usize| input[i - lane + l];
        let x = input[i];
        assert_eq!(o[0], at(lane ^ 1), "OpGroupNonUniformShuffleXor, item {i}");
        if lane + 1 < max {
            assert_eq!(o[1], at(lane + 1), "OpGroupNonUniformShuffleDown, item {i}");
        }
        assert_eq!(
            o[2],
            at((lane + 1) % max),
            "OpGroupNonUniformRotateKHR, item {i}"
        );
        assert_eq!(o[3], (x >> 4) & 0xff, "OpBitFieldUExtract, item {i}");
        assert_eq!(o[4], x.reverse_bits(), "OpBitReverse, item {i}");
    }
}
