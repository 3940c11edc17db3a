//! Private and `__local` memory reached through byte-level pointers (8- and 16-bit views of
//! wider objects, unaligned `vloadn`/`vstoren`, memcpy of part of an object, pointer
//! comparisons and differences): kernels run on the device, results compared with answers
//! computed on the host.
mod common;
use common::*;

impl Env {
    /// Runs `k` over `global` items (work-groups of `local`, or vkcl's choice) and waits.
    fn go(&self, k: cl_kernel, global: usize, local: Option<usize>) {
        let l = local.map(|l| [l]);
        self.run(k, &[global], l.as_ref().map(|l| &l[..]), None);
    }
}

/// The OpenCL C name and byte size of each integer element type tested.
const INTS: [(&str, usize); 8] = [
    ("char", 1),
    ("uchar", 1),
    ("short", 2),
    ("ushort", 2),
    ("int", 4),
    ("uint", 4),
    ("long", 8),
    ("ulong", 8),
];

/// `vstoren` into a private array of n-vectors at an element offset (`alignment`) that is not
/// a multiple of n, then the bytes read back through a scalar pointer (basic vstore_private).
#[test]
fn vstore_private_at_element_offsets() {
    let env = Env::new();
    for (ty, size) in INTS {
        for n in [2usize, 4, 8, 16] {
            let slots = 8usize;
            let src = format!(
                "__kernel void k(__global {ty}{n} *src, __global uint *offsets, __global {ty}{n} *dst, uint align)\n\
                 {{\n\
                   __private {ty}{n} priv[{slots}];\n\
                   int tid = get_global_id(0);\n\
                   priv[tid] = ({ty}{n})({ty})0;\n\
                   vstore{n}(src[tid], offsets[tid], ((__private {ty} *)priv) + align);\n\
                   __private {ty} *sp = (__private {ty} *)(priv + offsets[tid]) + align;\n\
                   __global {ty} *dp = (__global {ty} *)(dst + offsets[tid]) + align;\n\
                   for (uint i = 0; i < {n}; i++) dp[i] = sp[i];\n\
                 }}\n"
            );
            let k = env.kern(&src, "k");
            let items = slots - 1;
            let data: Vec<u8> = (0..items * n * size).map(|i| (i * 37 + 11) as u8).collect();
            let offsets: Vec<u32> = (0..items as u32).rev().collect();
            for align in [0u32, 1, (n - 1) as u32] {
                let out_len = slots * n * size;
                let (ms, mo, md) = (
                    env.buf(&data),
                    env.buf(&offsets),
                    env.buf(&vec![0u8; out_len]),
                );
                arg_mem(k, 0, ms);
                arg_mem(k, 1, mo);
                arg_mem(k, 2, md);
                set_arg(k, 3, &align);
                env.go(k, items, None);
                let got: Vec<u8> = env.read(md, out_len);
                let mut want = vec![0u8; out_len];
                for t in 0..items {
                    let at = (offsets[t] as usize * n + align as usize) * size;
                    want[at..at + n * size]
                        .copy_from_slice(&data[t * n * size..(t + 1) * n * size]);
                }
                assert_eq!(got, want, "vstore{n} of {ty}, alignment offset {align}");
            }
        }
    }
}

/// `vloadn` from a private array of n-vectors at element offsets that are not multiples of n
/// (basic vload_private): every integer type, sizes 2 to 16.
#[test]
fn vload_private_at_element_offsets() {
    let env = Env::new();
    for (ty, size) in INTS {
        for n in [2usize, 3, 4, 8, 16] {
            let slots = 8usize;
            let src = format!(
                "__kernel void k(__global {ty} *src, __global uint *offsets, __global uint *aligns, __global {ty} *dst)\n\
                 {{\n\
                   __private {ty} priv[{len}];\n\
                   int tid = get_global_id(0);\n\
                   for (int i = 0; i < {len}; i++) priv[i] = src[i];\n\
                   {ty}{n} v = vload{n}(offsets[tid], priv + aligns[tid]);\n\
                   vstore{n}(v, tid, dst);\n\
                 }}\n",
                len = slots * n
            );
            let k = env.kern(&src, "k");
            let items = slots - 1;
            let data: Vec<u8> = (0..slots * n * size).map(|i| (i * 53 + 7) as u8).collect();
            let offsets: Vec<u32> = (0..items as u32).map(|t| (t * 3) % items as u32).collect();
            let aligns: Vec<u32> = (0..items as u32).map(|t| t % n as u32).collect();
            let (ms, mo, ma, md) = (
                env.buf(&data),
                env.buf(&offsets),
                env.buf(&aligns),
                env.buf(&vec![0u8; items * n * size]),
            );
            arg_mem(k, 0, ms);
            arg_mem(k, 1, mo);
            arg_mem(k, 2, ma);
            arg_mem(k, 3, md);
            env.go(k, items, None);
            let got: Vec<u8> = env.read(md, items * n * size);
            let mut want = Vec::new();
            for t in 0..items {
                let at = (offsets[t] as usize * n + aligns[t] as usize) * size;
                want.extend_from_slice(&data[at..at + n * size]);
            }
            assert_eq!(got, want, "vload{n} of {ty}");
        }
    }
}

/// `async_work_group_copy` and the strided form of `char`, `short` and their vectors through
/// `__local` memory, both directions (basic async_copy_* and async_strided_copy_*): sub-word
/// stores into shared words from many work-items at once.
#[test]
fn async_copies_of_narrow_types_through_local_memory() {
    let env = Env::new();
    for (ty, size) in [("char", 1usize), ("uchar", 1), ("short", 2), ("ushort", 2)] {
        for n in [1usize, 2, 3, 4, 16] {
            let vty = if n == 1 {
                ty.to_string()
            } else {
                format!("{ty}{n}")
            };
            // Bytes per element in memory (3-vectors take 4 slots).
            let slot = if n == 3 { 4 } else { n };
            let (local, per_item, stride) = (16usize, 3usize, 2usize);
            let per_group = local * per_item;
            let src = format!(
                "__kernel void copy(const __global {vty} *src, __global {vty} *dst, __local {vty} *buf)\n\
                 {{\n\
                   event_t e = async_work_group_copy(buf, src + get_group_id(0) * {per_group}, {per_group}, 0);\n\
                   wait_group_events(1, &e);\n\
                   for (int i = 0; i < {per_item}; i++) {{\n\
                     int j = get_local_id(0) * {per_item} + i;\n\
                     buf[j] = buf[j] + ({vty})(({ty})1);\n\
                   }}\n\
                   barrier(CLK_LOCAL_MEM_FENCE);\n\
                   e = async_work_group_copy(dst + get_group_id(0) * {per_group}, buf, {per_group}, 0);\n\
                   wait_group_events(1, &e);\n\
                 }}\n\
                 __kernel void strided(const __global {vty} *src, __global {vty} *dst, __local {vty} *buf)\n\
                 {{\n\
                   event_t e = async_work_group_strided_copy(buf, src + get_group_id(0) * {per_group} * {stride}, {per_group}, {stride}, 0);\n\
                   wait_group_events(1, &e);\n\
                   e = async_work_group_strided_copy(dst + get_group_id(0) * {per_group} * {stride}, buf, {per_group}, {stride}, 0);\n\
                   wait_group_events(1, &e);\n\
                 }}\n"
            );
            let p = env.build(&src);
            let groups = 3usize;
            let elems = groups * per_group * stride;
            let data: Vec<u8> = (0..elems * slot * size)
                .map(|i| (i * 29 + 3) as u8)
                .collect();
            for name in ["copy", "strided"] {
                let k = env.kernel(p, name);
                let (ms, md) = (env.buf(&data), env.buf(&vec![0u8; data.len()]));
                arg_mem(k, 0, ms);
                arg_mem(k, 1, md);
                ok(unsafe { cl!(clSetKernelArg)(k, 2, per_group * slot * size, std::ptr::null()) });
                env.go(k, groups * local, Some(local));
                let got: Vec<u8> = env.read(md, data.len());
                let e = slot * size;
                let mut want = vec![0u8; data.len()];
                for g in 0..groups {
                    for j in 0..per_group {
                        let idx = if name == "copy" {
                            g * per_group + j
                        } else {
                            (g * per_group + j) * stride
                        };
                        for c in 0..n {
                            let at = idx * e + c * size;
                            let mut x = 0u64;
                            for b in 0..size {
                                x |= u64::from(data[at + b]) << (8 * b);
                            }
                            if name == "copy" {
                                x = x.wrapping_add(1);
                            }
                            for b in 0..size {
                                want[at + b] = (x >> (8 * b)) as u8;
                            }
                        }
                    }
                }
                // Padding of 3-vectors is unspecified: compare the components only.
                for i in 0..data.len() {
                    if (i % e) / size >= n {
                        continue;
                    }
                    assert_eq!(got[i], want[i], "{name} of {vty}: byte {i}");
                }
            }
        }
    }
}

/// Pointer comparisons and differences on private and `__local` pointers (`OpPtrEqual`,
/// `OpPtrDiff` and the integer compares clang makes of them), with memcpy of part of a
/// private struct.
#[test]
fn private_pointer_compare_diff_and_partial_memcpy() {
    let env = Env::new();
    let src = r#"
typedef struct { char tag; short s; int x[5]; } rec;
__kernel void k(__global const int *in, __global int *out)
{
    int tid = get_global_id(0);
    __private int a[8];
    __local int l[64];
    for (int i = 0; i < 8; i++) a[i] = in[(tid + i) % 16];
    l[tid] = in[tid];
    barrier(CLK_LOCAL_MEM_FENCE);
    __private int *p = a + (in[tid] & 7);
    __private int *q = a + (in[tid + 1] & 7);
    __local int *lp = l + (in[tid] & 31);
    __local int *lq = l + (in[tid + 2] & 31);
    out[tid * 8 + 0] = (int)(p - q);
    out[tid * 8 + 1] = p == q;
    out[tid * 8 + 2] = p < q;
    out[tid * 8 + 3] = (int)(lp - lq);
    out[tid * 8 + 4] = lp >= lq;
    rec r;
    r.tag = (char)tid; r.s = (short)(3 * tid);
    for (int i = 0; i < 5; i++) r.x[i] = in[i] + tid;
    rec c;
    c.tag = 0; c.s = 0;
    for (int i = 0; i < 5; i++) c.x[i] = 0;
    __builtin_memcpy(&c.s, &r.s, sizeof(short) + 2 * sizeof(int) + 2);
    out[tid * 8 + 5] = c.s;
    out[tid * 8 + 6] = c.x[0] + 100 * c.x[1] + 10000 * c.x[2];
    out[tid * 8 + 7] = *p + *q;
}
"#;
    let k = env.kern(src, "k");
    let input: Vec<i32> = (0..32).map(|i| (i * 7 + 3) % 19).collect();
    let n = 16usize;
    let (mi, mo) = (env.buf(&input), env.buf(&vec![0i32; n * 8]));
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    env.go(k, n, Some(n));
    let got: Vec<i32> = env.read(mo, n * 8);
    for t in 0..n {
        let a: Vec<i32> = (0..8).map(|i| input[(t + i) % 16]).collect();
        let (pi, qi) = (input[t] & 7, input[t + 1] & 7);
        let (li, lj) = (input[t] & 31, input[t + 2] & 31);
        let x: Vec<i32> = (0..5).map(|i| input[i] + t as i32).collect();
        let want = [
            pi - qi,
            (pi == qi) as i32,
            (pi < qi) as i32,
            li - lj,
            (li >= lj) as i32,
            3 * t as i32,
            x[0] + 100 * x[1] + 10000 * (x[2] & 0xffff),
            a[pi as usize] + a[qi as usize],
        ];
        assert_eq!(&got[t * 8..t * 8 + 8], &want, "work-item {t}");
    }
}

/// A union read through its byte array with a dynamic index (an 8-bit view of a private
/// `float`), once a known limitation.
#[test]
fn union_bytes_with_a_dynamic_index() {
    let env = Env::new();
    let src = "__kernel void byte_views(__global const float *in, __global uint *out) {\n\
                   union { float f; uint u; uchar b[4]; } x;\n\
                   x.f = in[get_global_id(0)];\n\
                   out[get_global_id(0)] = x.u + x.b[get_global_id(0) & 3];\n\
               }\n";
    let k = env.kern(src, "byte_views");
    let input: Vec<f32> = (0..64).map(|i| i as f32 * 1.37 - 20.5).collect();
    let (mi, mo) = (env.buf(&input), env.buf(&vec![0u32; 64]));
    arg_mem(k, 0, mi);
    arg_mem(k, 1, mo);
    env.go(k, 64, None);
    let got: Vec<u32> = env.read(mo, 64);
    for (i, x) in input.iter().enumerate() {
        let u = x.to_bits();
        let want = u.wrapping_add(u32::from(x.to_le_bytes()[i & 3]));
        assert_eq!(got[i], want, "work-item {i}");
    }
}
