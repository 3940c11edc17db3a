//! Private and `__local` memory reached through byte-level pointers (8- and 16-bit views of
//! wider objects, unaligned `vloadn`/`vstoren`, memcpy of part of an object, pointer
//! comparisons and differences): kernels run on the device, results compared with answers
//! computed on the host.
mod common;
use common::*;
use std::ptr::null;

fn bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain Copy values without padding; the slice is only read.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

impl Env {
    fn buf<T: Copy>(&self, data: &[T]) -> cl_mem {
        self.buffer(
            CL_MEM_READ_WRITE,
            std::mem::size_of_val(data).max(1),
            Some(bytes(data)),
        )
    }

    fn kern_src(&self, source: &str, name: &str) -> cl_kernel {
        let p = self.build(source);
        self.kernel(p, name)
    }

    fn go(&self, k: cl_kernel, global: usize, local: Option<usize>) {
        let l = local.map(|l| [l]);
        ok(unsafe {
            cl!(clEnqueueNDRangeKernel)(
                self.queue,
                k,
                1,
                null(),
                [global].as_ptr(),
                l.as_ref().map_or(null(), |l| l.as_ptr()),
                0,
                null(),
                std::ptr::null_mut(),
            )
        });
        self.finish();
    }
}

fn arg_mem(k: cl_kernel, i: u32, m: cl_mem) {
    set_arg(k, i, &m);
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
            let k = env.kern_src(&src, "k");
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
                    want[at..at + n * size].copy_from_slice(&data[t * n * size..(t + 1) * n * size]);
                }
                assert_eq!(got, want, "vstore{n} of {ty}, alignment offset {align}");
            }
        }
    }
}
