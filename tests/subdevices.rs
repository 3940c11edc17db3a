//! Sub-devices through the real loader (OpenCL 3.0 section 4.3): each partition scheme,
//! nesting, reference counts, every partition query and clCreateSubDevices error code, and
//! kernels (work-item functions, barriers, local memory) on sub-devices compared with answers
//! computed on the host, in contexts of sub-devices and of a root device with its sub-devices.
//!
//! Kernels on sub-devices run with lavapipe's compute-unit-limited dispatch (waves) and, in a
//! child process, with the persistent variant.
//!
//! llvmpipe's compute units follow `LP_NUM_THREADS`; this file sets it to 4 (if unset) before
//! the loader starts, so partitions of 1 + 3 and nested splits are exercised on any machine.
mod common;
use common::*;
use std::ffi::{c_char, c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::Once;

fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("LP_NUM_THREADS").is_none() {
            // SAFETY: set before the loader (and any thread of vkcl or Mesa) starts: every test
            // calls init() first and Once blocks the others until this returns.
            unsafe { std::env::set_var("LP_NUM_THREADS", "4") };
        }
        let _ = loader();
    });
}

type Prop = cl_device_partition_property;

/// Whether `d` partitions through the CUDA path (green contexts): an NVIDIA device with
/// libcuda and `VKCL_CUDA` not 0. Counts are exact there too (`core::partition`: aligned,
/// fine or Vulkan-path sub-devices, whichever gives every part exactly its count), so this only
/// chooses a sample of counts instead of every one (each part is a green context).
fn cuda_path(d: cl_device_id) -> bool {
    let vendor: u32 =
        info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_VENDOR_ID, s, v, r) });
    let off = matches!(std::env::var("VKCL_CUDA").as_deref(), Ok("0") | Ok("off"));
    // SAFETY: loading NVIDIA's driver library only to see that it exists.
    vendor == 0x10DE && !off && unsafe { libloading::Library::new("libcuda.so.1") }.is_ok()
}

/// BY_COUNTS 1 and the rest: `1 + (units - 1)`.
fn one_and_rest(d: cl_device_id) -> [Prop; 5] {
    let second = units(d) - 1;
    [
        CL_DEVICE_PARTITION_BY_COUNTS,
        1,
        second as Prop,
        CL_DEVICE_PARTITION_BY_COUNTS_LIST_END,
        0,
    ]
}

fn parent(d: cl_device_id) -> cl_device_id {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_PARENT_DEVICE, s, v, r) })
}

fn ref_count(d: cl_device_id) -> u32 {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_REFERENCE_COUNT, s, v, r) })
}

fn err_of(d: cl_device_id, props: Option<&[Prop]>) -> cl_int {
    let mut n = 0;
    unsafe {
        cl!(clCreateSubDevices)(
            d,
            props.map_or(null(), |p| p.as_ptr()),
            0,
            null_mut(),
            &mut n,
        )
    }
}

#[test]
fn root_device_partition_queries() {
    init();
    let d = device();
    let cu = units(d);
    assert!(cu >= 2, "LP_NUM_THREADS=4 gives llvmpipe 4 compute units");
    let max: u32 = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, s, v, r)
    });
    assert_eq!(max, cu);
    assert_eq!(
        props_info(d, CL_DEVICE_PARTITION_PROPERTIES),
        vec![CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS]
    );
    let dom: cl_device_affinity_domain = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(d, CL_DEVICE_PARTITION_AFFINITY_DOMAIN, s, v, r)
    });
    assert_eq!(dom, 0, "llvmpipe has no affinity domains");
    assert!(props_info(d, CL_DEVICE_PARTITION_TYPE).is_empty());
    assert!(parent(d).is_null());
    assert_eq!(ref_count(d), 1);
    // Root devices are not reference counted.
    ok(unsafe { cl!(clRetainDevice)(d) });
    ok(unsafe { cl!(clReleaseDevice)(d) });
    ok(unsafe { cl!(clReleaseDevice)(d) });
    assert_eq!(ref_count(d), 1);
}

#[test]
fn partition_equally() {
    init();
    let d = device();
    let cu = units(d);
    // Every n on lavapipe; on the CUDA path (a green context per part) a sample.
    let ns: Vec<u32> = if !cuda_path(d) {
        (1..cu).collect()
    } else {
        [1, 2, 7, 8, 9, 16, 33, 64, cu / 2]
            .into_iter()
            .filter(|&n| n < cu)
            .collect()
    };
    for n in ns {
        let props = [CL_DEVICE_PARTITION_EQUALLY, n as Prop, 0];
        let subs = split(d, &props).unwrap();
        let want = n;
        assert_eq!(subs.len() as u32, cu / n, "EQUALLY {n} of {cu}");
        for &s in &subs {
            assert_eq!(units(s), want, "EQUALLY {n}");
            assert_eq!(parent(s), d);
            assert_eq!(props_info(s, CL_DEVICE_PARTITION_TYPE), props.to_vec());
            assert_eq!(ref_count(s), 1);
            let max: u32 = info_scalar(|sz, v, r| unsafe {
                cl!(clGetDeviceInfo)(s, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sz, v, r)
            });
            assert_eq!(max, want);
            // A sub-device is of its parent's type (CPU on lavapipe, GPU on NVIDIA).
            let ty = |x: cl_device_id| -> cl_device_type {
                info_scalar(|sz, v, r| unsafe { cl!(clGetDeviceInfo)(x, CL_DEVICE_TYPE, sz, v, r) })
            };
            assert_eq!(ty(s), ty(d));
        }
        release_all(&subs);
    }
}

#[test]
fn partition_by_counts() {
    init();
    let d = device();
    let props = one_and_rest(d);
    let second = props[2] as u32;
    let subs = split(d, &props).unwrap();
    assert_eq!(subs.len(), 2);
    assert_eq!(units(subs[0]), 1);
    assert_eq!(units(subs[1]), second);
    for &s in &subs {
        assert_eq!(props_info(s, CL_DEVICE_PARTITION_TYPE), props.to_vec());
        assert_eq!(parent(s), d);
    }
    // Fewer units than the device has is fine: the rest stays unused.
    let one = split(
        d,
        &[
            CL_DEVICE_PARTITION_BY_COUNTS,
            1,
            CL_DEVICE_PARTITION_BY_COUNTS_LIST_END,
            0,
        ],
    )
    .unwrap();
    assert_eq!(one.len(), 1);
    release_all(&one);
    release_all(&subs);
}

#[test]
fn nested_partitions_and_reference_counts() {
    init();
    let d = device();
    // All units; counts are exact on every path (on the CUDA path vkcl picks the aligned or
    // fine green-context split or Vulkan-path sub-devices, whichever is exact).
    let cu = units(d);
    let top = split(
        d,
        &[
            CL_DEVICE_PARTITION_BY_COUNTS,
            cu as Prop,
            CL_DEVICE_PARTITION_BY_COUNTS_LIST_END,
            0,
        ],
    )
    .unwrap();
    let mut level = top[0];
    assert_eq!(units(level), cu);
    let mut made = vec![level];
    // Halve until one unit is left; each level's parent is the level above.
    let g = 1;
    let halve = |n: Prop| -> Vec<Prop> { vec![CL_DEVICE_PARTITION_EQUALLY, n, 0] };
    while units(level) / 2 >= g {
        let n = units(level) / 2;
        let subs = split(level, &halve(n as Prop)).unwrap();
        assert_eq!(subs.len() as u32, units(level) / n);
        assert_eq!(units(subs[0]), n);
        assert_eq!(parent(subs[0]), level);
        made.extend(&subs);
        level = subs[0];
    }
    assert!(units(level) < 2 * g);
    let last = units(level) as Prop;
    // A device cannot be partitioned into parts of all its units, nor of more.
    assert_eq!(
        split(level, &[CL_DEVICE_PARTITION_EQUALLY, last, 0]).err(),
        Some(CL_DEVICE_PARTITION_FAILED)
    );
    assert_eq!(
        err_of(level, Some(&[CL_DEVICE_PARTITION_EQUALLY, last + 1, 0])),
        CL_INVALID_DEVICE_PARTITION_COUNT
    );

    // Retain/release count for real. At 0 the handle stays valid while its children still
    // reference the parent (clReleaseDevice), and is gone once they are released.
    let s = top[0];
    ok(unsafe { cl!(clRetainDevice)(s) });
    assert_eq!(ref_count(s), 2);
    ok(unsafe { cl!(clReleaseDevice)(s) });
    assert_eq!(ref_count(s), 1);
    ok(unsafe { cl!(clReleaseDevice)(s) });
    let cu_of = |x: cl_device_id| {
        let mut n = 0u32;
        let r = unsafe {
            cl!(clGetDeviceInfo)(
                x,
                CL_DEVICE_MAX_COMPUTE_UNITS,
                4,
                &mut n as *mut u32 as *mut c_void,
                null_mut(),
            )
        };
        (r, n)
    };
    assert_eq!(cu_of(s), (CL_SUCCESS, cu), "held by its children");
    let last = last as u32;
    assert_eq!(ref_count(s), 0);
    assert_eq!(unsafe { cl!(clReleaseDevice)(s) }, CL_INVALID_DEVICE);
    assert_eq!(
        units(level),
        last,
        "a child device still works after its parent's release"
    );
    assert_eq!(
        parent(made[1]),
        s,
        "CL_DEVICE_PARENT_DEVICE still names the released parent"
    );
    release_all(&made[1..]);
    assert_eq!(cu_of(s).0, CL_INVALID_DEVICE, "nothing holds it any more");
}

#[test]
fn create_sub_devices_error_codes() {
    init();
    let d = device();
    let cu = units(d) as Prop;
    let end = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
    // CL_INVALID_DEVICE if in_device is not valid.
    assert_eq!(
        err_of(null_mut(), Some(&[CL_DEVICE_PARTITION_EQUALLY, 1, 0])),
        CL_INVALID_DEVICE
    );
    // CL_INVALID_VALUE if values specified in properties are not valid ...
    assert_eq!(err_of(d, None), CL_INVALID_VALUE);
    assert_eq!(err_of(d, Some(&[0])), CL_INVALID_VALUE);
    assert_eq!(err_of(d, Some(&[0x4242, 1, 0])), CL_INVALID_VALUE);
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_EQUALLY, 0, 0])),
        CL_INVALID_VALUE
    );
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_EQUALLY, -1, 0])),
        CL_INVALID_VALUE
    );
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_BY_COUNTS, end, 0])),
        CL_INVALID_VALUE
    );
    // ... only one scheme per list.
    assert_eq!(
        err_of(
            d,
            Some(&[
                CL_DEVICE_PARTITION_EQUALLY,
                1,
                CL_DEVICE_PARTITION_BY_COUNTS,
                1,
                end,
                0
            ])
        ),
        CL_INVALID_VALUE
    );
    // ... or valid but not supported by the device: llvmpipe has no affinity domains.
    for dom in [
        CL_DEVICE_AFFINITY_DOMAIN_NUMA,
        CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
        CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE,
        CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
        CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
        CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
    ] {
        assert_eq!(
            err_of(
                d,
                Some(&[CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, dom as Prop, 0])
            ),
            CL_INVALID_VALUE
        );
    }
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0, 0])),
        CL_INVALID_VALUE
    );
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 3, 0])),
        CL_INVALID_VALUE
    );
    // CL_DEVICE_PARTITION_FAILED if the device could not be further partitioned (EQUALLY of
    // all its units); CL_INVALID_DEVICE_PARTITION_COUNT for more units than it has (the CTS's
    // negative_create_sub_devices expects exactly these).
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_EQUALLY, cu, 0])),
        CL_DEVICE_PARTITION_FAILED
    );
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_EQUALLY, cu + 1, 0])),
        CL_INVALID_DEVICE_PARTITION_COUNT
    );
    // CL_INVALID_DEVICE_PARTITION_COUNT: too many units in total, too many sub-devices, a count
    // below zero.
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_BY_COUNTS, cu, 1, end, 0])),
        CL_INVALID_DEVICE_PARTITION_COUNT
    );
    let mut many = vec![CL_DEVICE_PARTITION_BY_COUNTS];
    many.extend(std::iter::repeat_n(1, cu as usize + 1));
    many.extend([end, 0]);
    assert_eq!(err_of(d, Some(&many)), CL_INVALID_DEVICE_PARTITION_COUNT);
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_BY_COUNTS, -1, 1, end, 0])),
        CL_INVALID_DEVICE_PARTITION_COUNT
    );
    // A count of 0 is CL_DEVICE_PARTITION_BY_COUNTS_LIST_END: an empty list, then a stray value.
    assert_eq!(
        err_of(d, Some(&[CL_DEVICE_PARTITION_BY_COUNTS, 0, 1, end, 0])),
        CL_INVALID_VALUE
    );
    // CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the number of
    // sub-devices created.
    let props = [CL_DEVICE_PARTITION_EQUALLY, 1, 0];
    let mut out = [null_mut(); 1];
    let r = unsafe { cl!(clCreateSubDevices)(d, props.as_ptr(), 1, out.as_mut_ptr(), null_mut()) };
    assert_eq!(r, CL_INVALID_VALUE);
    assert!(out[0].is_null(), "nothing is created on error");
    // num_devices_ret may be NULL.
    let mut two = [null_mut(); 2];
    let p2 = [CL_DEVICE_PARTITION_BY_COUNTS, 1, 1, end, 0];
    ok(unsafe { cl!(clCreateSubDevices)(d, p2.as_ptr(), 2, two.as_mut_ptr(), null_mut()) });
    release_all(&two);
}

const KERNELS: &str = r#"
__kernel void ids(__global uint4 *out) {
    size_t w = get_global_size(0);
    size_t i = (get_global_id(1) - get_global_offset(1)) * w + (get_global_id(0) - get_global_offset(0));
    out[i] = (uint4)(get_group_id(0), get_group_id(1), get_local_id(0) + 100 * get_local_id(1),
                     get_num_groups(0) * 1000 + get_num_groups(1));
}

__kernel void reverse_sum(__global const int *in, __global int *out, __global int *sums,
                          __local int *tmp) {
    size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
    tmp[l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = tmp[n - 1 - l];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s) tmp[l] += tmp[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) sums[get_group_id(0)] = tmp[0];
}

__kernel void early_exit(__global int *out, int limit) {
    size_t g = get_global_id(0);
    if (g >= limit) return;
    out[g] = (int)g * 3;
}
"#;

struct Multi {
    context: cl_context,
    program: cl_program,
}

impl Multi {
    fn new(devices: &[cl_device_id]) -> Multi {
        let mut err = 1;
        let context = unsafe {
            cl!(clCreateContext)(
                null(),
                devices.len() as u32,
                devices.as_ptr(),
                None,
                null_mut(),
                &mut err,
            )
        };
        ok(err);
        let src = CString::new(KERNELS).unwrap();
        let ptrs = [src.as_ptr()];
        let program = unsafe {
            cl!(clCreateProgramWithSource)(
                context,
                1,
                ptrs.as_ptr() as *mut *const c_char,
                null(),
                &mut err,
            )
        };
        ok(err);
        // OpenCL C 3.0: the checks run non-uniform ranges, which OpenCL C 1.2 programs may not.
        let opts = c"-cl-std=CL3.0";
        let r = unsafe { cl!(clBuildProgram)(program, 0, null(), opts.as_ptr(), None, null_mut()) };
        assert_eq!(r, CL_SUCCESS, "{}", build_log(program, devices[0]));
        Multi { context, program }
    }

    fn queue(&self, d: cl_device_id) -> cl_command_queue {
        let mut err = 1;
        let q =
            unsafe { cl!(clCreateCommandQueueWithProperties)(self.context, d, null(), &mut err) };
        ok(err);
        q
    }

    fn kernel(&self, name: &str) -> cl_kernel {
        let mut err = 1;
        let n = CString::new(name).unwrap();
        let k = unsafe { cl!(clCreateKernel)(self.program, n.as_ptr(), &mut err) };
        ok(err);
        k
    }

    fn buffer(&self, bytes: usize, data: Option<&[i32]>) -> cl_mem {
        let mut err = 1;
        let (flags, ptr) = match data {
            Some(d) => (
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                d.as_ptr() as *mut c_void,
            ),
            None => (CL_MEM_READ_WRITE, null_mut()),
        };
        let m = unsafe { cl!(clCreateBuffer)(self.context, flags, bytes, ptr, &mut err) };
        ok(err);
        m
    }
}

impl Drop for Multi {
    fn drop(&mut self) {
        unsafe {
            cl!(clReleaseProgram)(self.program);
            cl!(clReleaseContext)(self.context);
        }
    }
}

fn read<T: Copy + Default>(q: cl_command_queue, m: cl_mem, n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    let bytes = n * std::mem::size_of::<T>();
    ok(unsafe {
        cl!(clEnqueueReadBuffer)(
            q,
            m,
            CL_TRUE,
            0,
            bytes,
            v.as_mut_ptr() as *mut c_void,
            0,
            null(),
            null_mut(),
        )
    });
    v
}

/// Checks the output of `ids` over a `g` range of `l` groups (edge groups where `l` does not
/// divide `g`) against the host.
fn check_ids(q: cl_command_queue, out: cl_mem, g: [usize; 2], l: [usize; 2]) {
    let got: Vec<[u32; 4]> = read(q, out, g[0] * g[1]);
    for y in 0..g[1] {
        for x in 0..g[0] {
            let want = [
                (x / l[0]) as u32,
                (y / l[1]) as u32,
                (x % l[0] + 100 * (y % l[1])) as u32,
                (g[0].div_ceil(l[0]) * 1000 + g[1].div_ceil(l[1])) as u32,
            ];
            assert_eq!(
                got[y * g[0] + x],
                want,
                "ids at ({x}, {y}) of {g:?} / {l:?}"
            );
        }
    }
}

/// Runs the three kernels on queue `q` and checks every value against the host.
fn check_kernels(m: &Multi, q: cl_command_queue) {
    // ids: a 2-D range with an offset, 12 x 6 groups of 4 x 2 (72 groups, more than any
    // sub-device launches at once).
    let (w, h, lx, ly) = (48usize, 12usize, 4usize, 2usize);
    // Room for the non-uniform range below too (50 x 13 items).
    let out = m.buffer(50 * 13 * 16, None);
    let k = m.kernel("ids");
    set_arg(k, 0, &out);
    let (off, gs, ls) = ([5usize, 7, 0], [w, h, 1], [lx, ly, 1]);
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            q,
            k,
            2,
            off.as_ptr(),
            gs.as_ptr(),
            ls.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    check_ids(q, out, [w, h], [lx, ly]);

    // ids again, non-uniform in both dimensions: four boxes of groups, each dispatched in
    // waves within the sub-device's limit.
    let (w2, h2) = (50usize, 13usize);
    let (gs2, ls2) = ([w2, h2, 1], [lx, ly, 1]);
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            q,
            k,
            2,
            off.as_ptr(),
            gs2.as_ptr(),
            ls2.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    });
    check_ids(q, out, [w2, h2], [lx, ly]);

    // reverse_sum: barriers and __local memory in every virtual group.
    let (n, l) = (4096usize, 64usize);
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 1000 - 500).collect();
    let (bin, bout, bsum) = (
        m.buffer(n * 4, Some(&input)),
        m.buffer(n * 4, None),
        m.buffer(n / l * 4, None),
    );
    let k2 = m.kernel("reverse_sum");
    set_arg(k2, 0, &bin);
    set_arg(k2, 1, &bout);
    set_arg(k2, 2, &bsum);
    ok(unsafe { cl!(clSetKernelArg)(k2, 3, l * 4, null()) });
    ok(unsafe { cl!(clEnqueueNDRangeKernel)(q, k2, 1, null(), &n, &l, 0, null(), null_mut()) });
    let rev: Vec<i32> = read(q, bout, n);
    let sums: Vec<i32> = read(q, bsum, n / l);
    for g in 0..n / l {
        let chunk = &input[g * l..(g + 1) * l];
        for i in 0..l {
            assert_eq!(rev[g * l + i], chunk[l - 1 - i], "reverse at {}", g * l + i);
        }
        assert_eq!(sums[g], chunk.iter().sum::<i32>(), "sum of group {g}");
    }

    // early_exit: a `return` ends one virtual group, not the launched group's loop.
    let (n3, l3, limit) = (1024usize, 8usize, 1000i32);
    let b3 = m.buffer(n3 * 4, Some(&vec![-1; n3]));
    let k3 = m.kernel("early_exit");
    set_arg(k3, 0, &b3);
    set_arg(k3, 1, &limit);
    ok(unsafe { cl!(clEnqueueNDRangeKernel)(q, k3, 1, null(), &n3, &l3, 0, null(), null_mut()) });
    let got3: Vec<i32> = read(q, b3, n3);
    for (i, v) in got3.iter().enumerate() {
        assert_eq!(
            *v,
            if (i as i32) < limit { i as i32 * 3 } else { -1 },
            "early_exit at {i}"
        );
    }
    unsafe {
        for mm in [out, bin, bout, bsum, b3] {
            cl!(clReleaseMemObject)(mm);
        }
        for kk in [k, k2, k3] {
            cl!(clReleaseKernel)(kk);
        }
    }
}

#[test]
fn kernels_on_sub_devices_match_the_host() {
    init();
    let d = device();
    let subs = split(d, &one_and_rest(d)).unwrap();
    let m = Multi::new(&subs);
    for &s in &subs {
        let q = m.queue(s);
        check_kernels(&m, q);
        ok(unsafe { cl!(clReleaseCommandQueue)(q) });
    }
    drop(m);
    release_all(&subs);
}

/// The same kernels with the other compute-unit-limited dispatch (lavapipe's default is waves;
/// the persistent variant, the GPUs' default, runs here too), in a child process since the
/// setting is read once per process.
#[test]
fn kernels_on_sub_devices_persistent_variant() {
    init();
    if std::env::var_os("VKCL_SUBDEVICE_DISPATCH").is_some() {
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kernels_on_sub_devices_match_the_host",
            "--test-threads",
            "1",
        ])
        .env("VKCL_SUBDEVICE_DISPATCH", "persistent")
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn context_of_root_and_sub_devices() {
    init();
    let d = device();
    let subs = split(d, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).unwrap();
    let mut devices = vec![d];
    devices.extend(&subs[..2]);
    let m = Multi::new(&devices);
    let n: u32 = info_scalar(|s, v, r| unsafe {
        cl!(clGetContextInfo)(m.context, CL_CONTEXT_NUM_DEVICES, s, v, r)
    });
    assert_eq!(n, 3);
    // The same buffer, updated in turn from the root's queue and each sub-device's, ordered by
    // events across queues.
    let queues: Vec<cl_command_queue> = devices.iter().map(|&x| m.queue(x)).collect();
    for &q in &queues {
        check_kernels(&m, q);
    }
    let n3 = 256usize;
    let buf = m.buffer(n3 * 4, Some(&vec![0; n3]));
    let k = m.kernel("early_exit");
    set_arg(k, 0, &buf);
    let mut prev: cl_event = null_mut();
    for (i, &q) in queues.iter().enumerate() {
        let limit = (i as i32 + 1) * 64;
        set_arg(k, 1, &limit);
        let l = 4usize;
        let mut ev = null_mut();
        let (nw, wl) = if prev.is_null() {
            (0, null())
        } else {
            (1, &prev as *const cl_event)
        };
        ok(unsafe { cl!(clEnqueueNDRangeKernel)(q, k, 1, null(), &n3, &l, nw, wl, &mut ev) });
        ok(unsafe { cl!(clFlush)(q) });
        if !prev.is_null() {
            ok(unsafe { cl!(clReleaseEvent)(prev) });
        }
        prev = ev;
    }
    ok(unsafe { cl!(clWaitForEvents)(1, &prev) });
    ok(unsafe { cl!(clReleaseEvent)(prev) });
    let got: Vec<i32> = read(queues[0], buf, n3);
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, if i < 192 { i as i32 * 3 } else { 0 });
    }
    let qdev: cl_device_id = info_scalar(|s, v, r| unsafe {
        cl!(clGetCommandQueueInfo)(queues[1], CL_QUEUE_DEVICE, s, v, r)
    });
    assert_eq!(qdev, subs[0]);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(buf);
        for q in queues {
            cl!(clReleaseCommandQueue)(q);
        }
    }
    drop(m);
    release_all(&subs);
}

#[test]
fn command_buffer_on_a_sub_device() {
    init();
    let d = device();
    let subs = split(d, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).unwrap();
    let m = Multi::new(&[subs[0], subs[1]]);
    let mut q = m.queue(subs[0]);
    let mut other = m.queue(subs[1]);
    let n = 512usize;
    let buf = m.buffer(n * 4, Some(&vec![0; n]));
    let k = m.kernel("early_exit");
    set_arg(k, 0, &buf);
    set_arg(k, 1, &(n as i32));
    let mut err = 1;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &q, null(), &mut err) };
    ok(err);
    let l = 8usize;
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            &n,
            &l,
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    // A non-uniform 2-D range of `ids` (edge groups in both dimensions).
    let (gi, li) = ([30usize, 11], [4usize, 2]);
    let ids_out = m.buffer(gi[0] * gi[1] * 16, None);
    let ki = m.kernel("ids");
    set_arg(ki, 0, &ids_out);
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            ki,
            2,
            null(),
            gi.as_ptr(),
            li.as_ptr(),
            0,
            null(),
            null_mut(),
            null_mut(),
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    // A queue of another device of the context is not compatible with the creation queue.
    assert_eq!(
        unsafe { ext!(clEnqueueCommandBufferKHR)(1, &mut other, cb, 0, null(), null_mut()) },
        CL_INCOMPATIBLE_COMMAND_QUEUE_KHR
    );
    ok(unsafe { ext!(clEnqueueCommandBufferKHR)(1, &mut q, cb, 0, null(), null_mut()) });
    let got: Vec<i32> = read(q, buf, n);
    assert!(got.iter().enumerate().all(|(i, v)| *v == i as i32 * 3));
    check_ids(q, ids_out, gi, li);
    unsafe {
        ext!(clReleaseCommandBufferKHR)(cb);
        cl!(clReleaseKernel)(k);
        cl!(clReleaseKernel)(ki);
        cl!(clReleaseMemObject)(ids_out);
        cl!(clReleaseMemObject)(buf);
        cl!(clReleaseCommandQueue)(q);
        cl!(clReleaseCommandQueue)(other);
    }
    drop(m);
    release_all(&subs);
}

/// A sub-device released by the application stays usable through the handles other objects
/// give back (a context's devices, a queue's device, a child's parent) while they hold it, and
/// becomes invalid once nothing does (clReleaseDevice: deleted when its count is zero and no
/// other object references it).
#[test]
fn released_sub_devices_live_while_referenced() {
    init();
    let d = device();
    if units(d) < 2 {
        eprintln!("skipped: the device has fewer than 2 compute units");
        return;
    }
    let subs = split(d, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).unwrap();
    let (s, rest) = (subs[0], &subs[1..]);
    release_all(rest);
    let mut err = 0;
    let ctx = unsafe { cl!(clCreateContext)(null(), 1, &s, None, null_mut(), &mut err) };
    ok(err);
    // The application's last reference goes; the context still uses the sub-device.
    ok(unsafe { cl!(clReleaseDevice)(s) });
    let mut listed: cl_device_id = null_mut();
    ok(unsafe {
        cl!(clGetContextInfo)(
            ctx,
            CL_CONTEXT_DEVICES,
            std::mem::size_of::<cl_device_id>(),
            &mut listed as *mut _ as *mut c_void,
            null_mut(),
        )
    });
    assert_eq!(listed, s);
    assert_eq!(units(listed), 1, "the listed sub-device answers queries");
    assert_eq!(parent(listed), d);
    let q = unsafe { cl!(clCreateCommandQueueWithProperties)(ctx, listed, null(), &mut err) };
    assert_eq!(err, CL_SUCCESS, "a queue on the context's sub-device");
    // A second release through that handle is one too many.
    assert_eq!(unsafe { cl!(clReleaseDevice)(listed) }, CL_INVALID_DEVICE);
    // A retain makes the handle the application's again; the release after it is fine.
    ok(unsafe { cl!(clRetainDevice)(listed) });
    assert_eq!(ref_count(listed), 1);
    ok(unsafe { cl!(clReleaseDevice)(listed) });
    ok(unsafe { cl!(clReleaseCommandQueue)(q) });
    ok(unsafe { cl!(clReleaseContext)(ctx) });
    // Nothing holds it now: the handle is invalid.
    let mut n: cl_uint = 0;
    let r = unsafe {
        cl!(clGetDeviceInfo)(
            s,
            CL_DEVICE_MAX_COMPUTE_UNITS,
            4,
            &mut n as *mut _ as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_DEVICE);
}

fn build_status(p: cl_program, d: cl_device_id) -> cl_build_status {
    info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramBuildInfo)(p, d, CL_PROGRAM_BUILD_STATUS, s, v, r)
    })
}

fn binary_sizes(p: cl_program, n: usize) -> Vec<usize> {
    let mut sizes = vec![0usize; n];
    ok(unsafe {
        cl!(clGetProgramInfo)(
            p,
            CL_PROGRAM_BINARY_SIZES,
            n * std::mem::size_of::<usize>(),
            sizes.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    sizes
}

/// OpenCL 3.0 clBuildProgram / clGetProgramBuildInfo: build state is per device. A program of
/// a context of the root device and a sub-device, built for the sub-device only, reports
/// CL_BUILD_NONE, no binary and no executable for the root (a launch on its queue is
/// CL_INVALID_PROGRAM_EXECUTABLE) while the sub-device's launch computes the host's answer;
/// a build for the root then serves the root and its sub-devices (what the CTS's
/// device_partition expects); a program never built has no kernels.
#[test]
fn build_state_is_per_device() {
    init();
    let d = device();
    let subs = split(d, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).unwrap();
    let devices = [d, subs[0]];
    let mut err = 1;
    let context =
        unsafe { cl!(clCreateContext)(null(), 2, devices.as_ptr(), None, null_mut(), &mut err) };
    ok(err);
    let src = CString::new(KERNELS).unwrap();
    let ptrs = [src.as_ptr()];
    let program = unsafe {
        cl!(clCreateProgramWithSource)(
            context,
            1,
            ptrs.as_ptr() as *mut *const c_char,
            null(),
            &mut err,
        )
    };
    ok(err);
    let name = CString::new("early_exit").unwrap();
    // No executable for any device: no kernel.
    let k = unsafe { cl!(clCreateKernel)(program, name.as_ptr(), &mut err) };
    assert!(k.is_null());
    assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);
    let mut nk = 0u32;
    assert_eq!(
        unsafe { cl!(clCreateKernelsInProgram)(program, 0, null_mut(), &mut nk) },
        CL_INVALID_PROGRAM_EXECUTABLE
    );

    // Built for the sub-device only.
    ok(unsafe { cl!(clBuildProgram)(program, 1, &subs[0], null(), None, null_mut()) });
    assert_eq!(build_status(program, subs[0]), CL_BUILD_SUCCESS);
    assert_eq!(build_status(program, d), CL_BUILD_NONE);
    let sizes = binary_sizes(program, 2);
    assert_eq!(sizes[0], 0, "{sizes:?}");
    assert!(sizes[1] > 0, "{sizes:?}");
    let bt: cl_program_binary_type = info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramBuildInfo)(program, d, CL_PROGRAM_BINARY_TYPE, s, v, r)
    });
    assert_eq!(bt, CL_PROGRAM_BINARY_TYPE_NONE as cl_program_binary_type);

    let n = 64usize;
    let mem =
        unsafe { cl!(clCreateBuffer)(context, CL_MEM_READ_WRITE, n * 4, null_mut(), &mut err) };
    ok(err);
    let run = |q: cl_command_queue| -> cl_int {
        let mut e = 1;
        let k = unsafe { cl!(clCreateKernel)(program, name.as_ptr(), &mut e) };
        ok(e);
        set_arg(k, 0, &mem);
        set_arg(k, 1, &(n as i32));
        let r = unsafe {
            cl!(clEnqueueNDRangeKernel)(q, k, 1, null(), &n, null(), 0, null(), null_mut())
        };
        ok(unsafe { cl!(clReleaseKernel)(k) });
        r
    };
    let queues: Vec<cl_command_queue> = devices
        .iter()
        .map(|&x| {
            let mut e = 1;
            let q = unsafe { cl!(clCreateCommandQueueWithProperties)(context, x, null(), &mut e) };
            ok(e);
            q
        })
        .collect();
    assert_eq!(run(queues[0]), CL_INVALID_PROGRAM_EXECUTABLE);
    ok(run(queues[1]));
    let got: Vec<i32> = read(queues[1], mem, n);
    assert_eq!(got, (0..n as i32).map(|i| i * 3).collect::<Vec<_>>());

    // Now built for the root: that build serves its sub-device too.
    ok(unsafe { cl!(clBuildProgram)(program, 1, &d, null(), None, null_mut()) });
    assert_eq!(build_status(program, d), CL_BUILD_SUCCESS);
    assert_eq!(build_status(program, subs[0]), CL_BUILD_SUCCESS);
    assert!(binary_sizes(program, 2).iter().all(|&s| s > 0));
    let zero = vec![0i32; n];
    ok(unsafe {
        cl!(clEnqueueWriteBuffer)(
            queues[1],
            mem,
            CL_TRUE,
            0,
            n * 4,
            zero.as_ptr() as *const c_void,
            0,
            null(),
            null_mut(),
        )
    });
    ok(run(queues[1]));
    let got: Vec<i32> = read(queues[1], mem, n);
    assert_eq!(got, (0..n as i32).map(|i| i * 3).collect::<Vec<_>>());

    unsafe {
        for q in queues {
            cl!(clReleaseCommandQueue)(q);
        }
        cl!(clReleaseMemObject)(mem);
        cl!(clReleaseProgram)(program);
        cl!(clReleaseContext)(context);
    }
    release_all(&subs);
}
