//! Program-scope variables of vector types, written the way the CTS's basic
//! progvar_prog_scope_init and progvar_prog_scope_uninit kernels are: `var`, `g_var`, an
//! array `a_var[2]` and a pointer `p_var` to one of its elements, stored by one kernel
//! through helper functions and loaded by the next. With initializers, llvm-spirv writes
//! `p_var = &a_var[1]` as a constant access chain of four operands
//! (`OpSpecConstantOp PtrAccessChain %a_var %0 %1 %0`), which rspirv 0.13 refused and vkcl's
//! loop-vector guard then could not remove ("found extra operands"); `compiler/spv.rs`'s
//! `load` reads it whole. Results are compared with answers computed on the host.
mod common;
use common::*;

/// OpenCL C element type, its byte size, whether floating point, and the vector widths
/// tried (3-component vectors take 4 components of memory).
const TYPES: [(&str, usize, bool, &[usize]); 9] = [
    ("char", 1, false, &[2, 16]),
    ("uchar", 1, false, &[3]),
    ("short", 2, false, &[4]),
    ("ushort", 2, false, &[8]),
    ("int", 4, false, &[2, 3]),
    ("uint", 4, false, &[16]),
    ("long", 8, false, &[4]),
    ("float", 4, true, &[3, 8]),
    ("double", 8, true, &[2]),
];

/// `v` as the bytes of an element (`size`, `float`).
fn enc(size: usize, float: bool, v: i64) -> Vec<u8> {
    match (size, float) {
        (4, true) => (v as f32).to_le_bytes().to_vec(),
        (8, true) => (v as f64).to_le_bytes().to_vec(),
        _ => v.to_le_bytes()[..size].to_vec(),
    }
}

/// The source of the test, with or without initializers.
fn source(t: &str, init: bool) -> String {
    let decls = if init {
        format!(
            "#define INIT_VAR(a) (({t})(a))\n\
             {t} var = INIT_VAR(0);\n\
             global {t} g_var = INIT_VAR(1);\n\
             {t} a_var[2] = {{ INIT_VAR(1), INIT_VAR(1) }};\n\
             volatile global {t} *p_var = &a_var[1];\n"
        )
    } else {
        format!(
            "{t} var;\n\
             global {t} g_var;\n\
             {t} a_var[2];\n\
             global {t} *p_var;\n\
             kernel void global_check(global int *out) {{\n\
               const {t} zero = ({t})0;\n\
               bool status = true;\n\
               status &= all(var == zero);\n\
               status &= all(g_var == zero);\n\
               status &= all(a_var[0] == zero);\n\
               status &= all(a_var[1] == zero);\n\
               status &= (p_var == NULL);\n\
               *out = status ? 1 : 0;\n\
             }}\n"
        )
    };
    format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
         {t} from_buf({t} a) {{ return a; }}\n\
         {t} to_buf({t} a) {{ return a; }}\n\
         {decls}\
         kernel void writer(global {t} *src, uint idx) {{\n\
           var = from_buf(src[0]);\n\
           g_var = from_buf(src[1]);\n\
           a_var[0] = from_buf(src[2]);\n\
           a_var[1] = from_buf(src[3]);\n\
           p_var = a_var + idx;\n\
         }}\n\
         kernel void reader(global {t} *dest, {t} ptr_write_val) {{\n\
           *p_var = from_buf(ptr_write_val);\n\
           dest[0] = to_buf(var);\n\
           dest[1] = to_buf(g_var);\n\
           dest[2] = to_buf(a_var[0]);\n\
           dest[3] = to_buf(a_var[1]);\n\
         }}\n"
    )
}

#[test]
fn program_scope_vectors_of_every_element_type() {
    let env = Env::new();
    let fp64 = env.has_extension("cl_khr_fp64");
    for (elem, size, float, widths) in TYPES {
        if elem == "double" && !fp64 {
            continue;
        }
        for &n in widths {
            let t = format!("{elem}{n}");
            // Bytes of one vector in memory and as an argument.
            let stride = size * if n == 3 { 4 } else { n };
            // Value k of round r: every lane different, small enough for char.
            let value = |r: i64, k: i64| -> Vec<u8> {
                (0..stride / size)
                    .flat_map(|l| enc(size, float, r * 40 + k * 8 + l as i64 % 8 + 1))
                    .collect()
            };
            // A vector of `v` in every lane, as the host expects to read it back.
            let splat = |v: i64| -> Vec<u8> {
                (0..stride / size)
                    .flat_map(|l| enc(size, float, if l < n { v } else { 0 }))
                    .collect()
            };
            // The lanes of the values read back (a 3-vector's fourth lane is undefined).
            let lanes = |bytes: &[u8]| -> Vec<u8> {
                bytes
                    .chunks(stride)
                    .flat_map(|v| v[..n * size].to_vec())
                    .collect()
            };
            for init in [true, false] {
                let what = format!("{t}, init {init}");
                let p = env
                    .try_build(&source(&t, init), "-cl-std=CL3.0")
                    .unwrap_or_else(|(e, log)| panic!("{what}: build failed ({e}):\n{log}"));
                let (w, r) = (env.kernel(p, "writer"), env.kernel(p, "reader"));
                let dest = env.zeros::<u8>(4 * stride);
                arg_mem(r, 0, dest);
                if init {
                    // The initial values, the pointer's target overwritten with zero.
                    let zero = splat(0);
                    ok(unsafe { cl!(clSetKernelArg)(r, 1, stride, zero.as_ptr().cast()) });
                    env.run(r, &[1], None, None);
                    let want: Vec<u8> = [0, 1, 1, 0].iter().flat_map(|&v| splat(v)).collect();
                    assert_eq!(
                        lanes(&env.read::<u8>(dest, 4 * stride)),
                        lanes(&want),
                        "{what}: initial values"
                    );
                } else {
                    let k = env.kernel(p, "global_check");
                    let out = env.zeros::<i32>(1);
                    arg_mem(k, 0, out);
                    env.run(k, &[1], None, None);
                    assert_eq!(env.read::<i32>(out, 1), [1], "{what}: not all zero");
                }
                for idx in 0..2u32 {
                    let round = i64::from(idx) + 1;
                    let vals: Vec<Vec<u8>> = (0..5).map(|k| value(round, k)).collect();
                    let src = env.buf(&vals[..4].concat());
                    arg_mem(w, 0, src);
                    set_arg(w, 1, &idx);
                    env.run(w, &[1], None, None);
                    ok(unsafe { cl!(clSetKernelArg)(r, 1, stride, vals[4].as_ptr().cast()) });
                    env.run(r, &[1], None, None);
                    let mut want = vals[..4].to_vec();
                    want[2 + idx as usize] = vals[4].clone();
                    assert_eq!(
                        lanes(&env.read::<u8>(dest, 4 * stride)),
                        lanes(&want.concat()),
                        "{what}: p_var = a_var + {idx}"
                    );
                }
            }
        }
    }
}
