//! `__local` structs: the CTS's vectors vec_align_struct and vec_align_packed_struct
//! kernels (`__local testStruct test;` of which only the vector member's address is taken),
//! and a `__local` struct shared by a work-group. llvm-spirv gives a struct's `undef`
//! initializer as an `OpConstantComposite` of `OpUndef`s, which Vulkan forbids on a Workgroup
//! variable (VUID-StandaloneSpirv-OpVariable-04734): such kernels failed to build until
//! `compiler/lower/types.rs` dropped it. Results are compared with answers computed on the
//! host (the layout rules of OpenCL C).
mod common;
use common::*;

/// Element type, its byte size, vector widths tried.
const TYPES: [(&str, usize, &[usize]); 5] = [
    ("char", 1, &[2, 3]),
    ("short", 2, &[4]),
    ("int", 4, &[3, 8]),
    ("float", 4, &[2, 16]),
    ("long", 8, &[4]),
];

/// (bytes before the vector, bytes after it) in the structs.
const PADS: [(usize, usize); 3] = [(1, 1), (3, 5), (12, 12)];

/// Work-items.
const G: usize = 8;

/// The kernels, one per program: (name, the statement after the declaration of `test`,
/// whether its struct is packed).
const KERNELS: [(&str, &str, bool); 3] = [
    // vec_align_struct: the address of the vector (checked against its alignment).
    (
        "test_vec_align_struct",
        "dest[tid] = (uint)((__local uchar *)&(test.vec));",
        false,
    ),
    // Its offset in the struct.
    (
        "offset",
        "dest[tid] = (uint)((__local uchar *)&(test.vec) - (__local uchar *)&test);",
        false,
    ),
    // vec_align_packed_struct: its offset in a packed struct.
    (
        "test_vec_align_packed_struct",
        "dest[tid] = (uint)((__local uchar *)&(test.vec) - (__local uchar *)&test);",
        true,
    ),
];

#[test]
fn local_struct_member_addresses_follow_the_layout_rules() {
    let env = Env::new();
    for (elem, size, widths) in TYPES {
        for &n in widths {
            // A vector's alignment is its size, a 3-vector's that of 4 components.
            let align = size * if n == 3 { 4 } else { n };
            let t = format!("{elem}{n}");
            for (pre, post) in PADS {
                for (name, body, packed) in KERNELS {
                    let what = format!("{name}: {t}, {pre} bytes before, {post} after");
                    let attr = if packed {
                        "__attribute__ ((packed)) "
                    } else {
                        ""
                    };
                    let src = format!(
                        "typedef struct {attr}myStruct {{\n\
                         char arrPre[{pre}];\n\
                         {t} vec;\n\
                         char arrPost[{post}];\n\
                         }} testStruct;\n\
                         __kernel void {name}(__constant {t} *source, __global uint *dest) {{\n\
                           __local testStruct test;\n\
                           int tid = get_global_id(0);\n\
                           {body}\n\
                         }}\n"
                    );
                    let p = env
                        .try_build(&src, "-cl-std=CL3.0")
                        .unwrap_or_else(|(e, log)| panic!("{what}: build failed ({e}):\n{log}"));
                    let k = env.kernel(p, name);
                    let source = env.zeros::<u8>(align);
                    let dest = env.zeros::<u32>(G);
                    arg_mem(k, 0, source);
                    arg_mem(k, 1, dest);
                    env.run(k, &[G], None, None);
                    let got = env.read::<u32>(dest, G);
                    match name {
                        "test_vec_align_struct" => assert!(
                            got.iter().all(|a| (*a as usize).is_multiple_of(align)),
                            "{what}: addresses {got:?} not aligned to {align}"
                        ),
                        "offset" => {
                            assert_eq!(got, [(pre.div_ceil(align) * align) as u32; G], "{what}")
                        }
                        _ => assert_eq!(got, [pre as u32; G], "{what}"),
                    }
                }
            }
        }
    }
}

/// A `__local` struct that every work-item of a group writes one element of and reads
/// another's, after a barrier.
#[test]
fn local_struct_shared_by_a_work_group() {
    let env = Env::new();
    let src = "typedef struct { char tag; int2 vals[8]; short tail; } S;\n\
               kernel void k(global int *dest) {\n\
                 __local S s;\n\
                 int l = get_local_id(0);\n\
                 if (l == 0) { s.tag = 7; s.tail = -3; }\n\
                 s.vals[l] = (int2)(l * 3 + 1, l * 5 - get_group_id(0));\n\
                 barrier(CLK_LOCAL_MEM_FENCE);\n\
                 dest[get_global_id(0)] = s.vals[(l + 1) % 8].x * 100 + s.vals[7 - l].y + s.tag + s.tail;\n\
               }\n";
    let p = env
        .try_build(src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
    let k = env.kernel(p, "k");
    let groups = 4;
    let dest = env.zeros::<i32>(G * groups);
    arg_mem(k, 0, dest);
    env.run(k, &[G * groups], Some(&[G]), None);
    let want: Vec<i32> = (0..G * groups)
        .map(|gid| {
            let (g, l) = ((gid / G) as i32, (gid % G) as i32);
            let x = ((l + 1) % 8) * 3 + 1;
            let y = (7 - l) * 5 - g;
            x * 100 + y + 7 - 3
        })
        .collect();
    assert_eq!(env.read::<i32>(dest, G * groups), want);
}
