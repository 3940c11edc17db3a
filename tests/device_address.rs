//! cl_ext_buffer_device_address 1.0.2 through the real loader: buffers created with
//! `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT`, their `CL_MEM_DEVICE_ADDRESS_EXT` (sub-buffers:
//! parent + origin), data structures built on the host from those addresses and walked by
//! kernels (a linked list across two buffers reached only through a pointer table, with
//! `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT`), `clSetKernelArgDevicePointerEXT` with addresses
//! inside a buffer, launches keeping indirectly reached buffers alive, command buffers with
//! device pointers, and every error code the extension defines. Results are checked against
//! the host's.
mod common;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// A buffer of `data` created with `CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT` set to `CL_TRUE`.
fn addressable<T: Copy>(env: &Env, data: &[T]) -> cl_mem {
    let props = [
        CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT,
        CL_TRUE as cl_mem_properties,
        0,
    ];
    let mut err = 0;
    let m = unsafe {
        cl!(clCreateBufferWithProperties)(
            env.context,
            props.as_ptr(),
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            std::mem::size_of_val(data),
            data.as_ptr() as *mut c_void,
            &mut err,
        )
    };
    ok(err);
    m
}

/// `CL_MEM_DEVICE_ADDRESS_EXT` of `m` (its one device), or the error.
fn try_address(m: cl_mem) -> Result<u64, cl_int> {
    let mut a: cl_mem_device_address_ext = 0;
    let r = unsafe {
        cl!(clGetMemObjectInfo)(
            m,
            CL_MEM_DEVICE_ADDRESS_EXT,
            8,
            &mut a as *mut u64 as *mut c_void,
            null_mut(),
        )
    };
    if r == CL_SUCCESS {
        Ok(a)
    } else {
        Err(r)
    }
}

fn address(m: cl_mem) -> u64 {
    try_address(m).unwrap_or_else(|e| panic!("CL_MEM_DEVICE_ADDRESS_EXT: {e}"))
}

fn set_device_ptrs(k: cl_kernel, ptrs: &[u64]) -> cl_int {
    unsafe {
        cl!(clSetKernelExecInfo)(
            k,
            CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT,
            std::mem::size_of_val(ptrs),
            if ptrs.is_empty() {
                null()
            } else {
                ptrs.as_ptr() as *const c_void
            },
        )
    }
}

fn release(m: cl_mem) {
    ok(unsafe { cl!(clReleaseMemObject)(m) });
}

const SOURCE: &str = r#"
struct node { __global struct node *next; int value; int pad; };

// Item i walks `steps` nodes from heads[i], summing the values it meets: the list's nodes
// live in buffers the kernel gets no argument for. (A kernel parameter cannot be a pointer
// to a pointer: the table is read as one.)
__kernel void walk(__global ulong *heads, __global int *out, int steps) {
    size_t i = get_global_id(0);
    __global struct node *p = ((__global struct node * __global *)heads)[i];
    int sum = 0;
    for (int s = 0; s < steps && p; s++) {
        sum = sum * 3 + p->value;
        p = p->next;
    }
    out[i] = sum;
}

// Reads around p and writes p[1]: p is a device pointer into the middle of a buffer.
__kernel void around(__global int *p, __global int *out) {
    out[0] = p[-2];
    out[1] = p[0];
    p[1] = p[-1] + 1000;
}

// The address the kernel sees for its argument.
__kernel void where(__global int *p, __global ulong *out) {
    *out = (ulong)p;
}

__kernel void kinds(__global int *g, __local int *l, int v, __constant int *c) {
    l[0] = v;
    *g = l[0] + c[0];
}
"#;

#[test]
fn the_extension_is_reported_at_revision_1_0_2() {
    let env = Env::new();
    assert!(env.has_extension("cl_ext_buffer_device_address"));
    let mut n = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            0,
            null_mut(),
            &mut n,
        )
    });
    let mut v = vec![
        cl_name_version {
            version: 0,
            name: [0; 64]
        };
        n / std::mem::size_of::<cl_name_version>()
    ];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            n,
            v.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    let name = |e: &cl_name_version| {
        std::ffi::CStr::from_bytes_until_nul(&e.name)
            .expect("NUL-terminated")
            .to_string_lossy()
            .into_owned()
    };
    let e = v
        .iter()
        .find(|e| name(e) == "cl_ext_buffer_device_address")
        .expect("listed with its version");
    assert_eq!(e.version, (1 << 22) | 2, "version 1.0.2");
}

/// A linked list whose nodes are spread over two buffers, built on the host from their
/// `CL_MEM_DEVICE_ADDRESS_EXT`, and a table of heads in a third, plain buffer: the kernel
/// walks it through `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT` only.
#[test]
fn a_linked_list_built_on_the_host_is_walked_by_a_kernel() {
    let env = Env::new();
    let mut rng = Rng(21);
    let per = 300usize;
    // Node k lives in buffer k % 2 at slot k / 2; 16 bytes each.
    let (a, b) = (
        addressable(&env, &vec![0u64; 2 * per]),
        addressable(&env, &vec![0u64; 2 * per]),
    );
    let bases = [address(a), address(b)];
    assert_ne!(bases[0], 0);
    assert_ne!(bases[0], bases[1]);
    let total = 2 * per;
    let at = |k: usize| bases[k % 2] + 16 * (k / 2) as u64;
    // A random successor order: a permutation, its last node pointing to NULL.
    let mut order: Vec<usize> = (0..total).collect();
    for i in (1..total).rev() {
        order.swap(i, rng.next_u32() as usize % (i + 1));
    }
    let values: Vec<i32> = (0..total).map(|_| (rng.next_u32() % 1000) as i32).collect();
    let mut next = vec![0u64; total];
    for w in order.windows(2) {
        next[w[0]] = at(w[1]);
    }
    let mut images = [vec![0u8; 16 * per], vec![0u8; 16 * per]];
    for k in 0..total {
        let o = 16 * (k / 2);
        images[k % 2][o..o + 8].copy_from_slice(&next[k].to_le_bytes());
        images[k % 2][o + 8..o + 12].copy_from_slice(&values[k].to_le_bytes());
    }
    for (m, img) in [a, b].iter().zip(&images) {
        ok(unsafe {
            cl!(clEnqueueWriteBuffer)(
                env.queue,
                *m,
                CL_TRUE,
                0,
                img.len(),
                img.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        });
    }
    let items = 64usize;
    let starts: Vec<usize> = (0..items)
        .map(|_| rng.next_u32() as usize % total)
        .collect();
    let heads: Vec<u64> = starts.iter().map(|&k| at(order[k])).collect();
    let steps = 40i32;
    let (h, out) = (env.buf(&heads), env.zeros::<i32>(items));
    let k = env.kern(SOURCE, "walk");
    arg_mem(k, 0, h);
    arg_mem(k, 1, out);
    set_arg(k, 2, &steps);
    // Any address inside each buffer names it (here: one past the middle).
    ok(set_device_ptrs(
        k,
        &[bases[0] + 16, bases[1] + 8 * per as u64],
    ));
    env.run(k, &[items], None, None);
    let got: Vec<i32> = env.read(out, items);
    for (i, &s) in starts.iter().enumerate() {
        let mut sum = 0i32;
        for &node in order[s..].iter().take(steps as usize) {
            sum = sum.wrapping_mul(3).wrapping_add(values[node]);
        }
        assert_eq!(got[i], sum, "walk {i} from order[{s}]");
    }
    for m in [a, b, h, out] {
        release(m);
    }
}

#[test]
fn sub_buffer_addresses_are_the_parents_plus_the_origin() {
    let env = Env::new();
    let parent = addressable(&env, &vec![0i32; 1024]);
    let base = address(parent);
    let k = env.kern(SOURCE, "where");
    let out = env.zeros::<u64>(1);
    for origin in [0usize, 128, 1024, 2048] {
        let region = cl_buffer_region { origin, size: 512 };
        let mut err = 0;
        let sub = unsafe {
            cl!(clCreateSubBuffer)(
                parent,
                CL_MEM_READ_WRITE,
                CL_BUFFER_CREATE_TYPE_REGION,
                &region as *const _ as *const c_void,
                &mut err,
            )
        };
        ok(err);
        assert_eq!(address(sub), base + origin as u64, "origin {origin}");
        // The kernel sees the same value for the sub-buffer as an argument.
        arg_mem(k, 0, sub);
        arg_mem(k, 1, out);
        env.run(k, &[1], None, None);
        assert_eq!(env.read::<u64>(out, 1)[0], base + origin as u64);
        release(sub);
    }
    // A plain buffer's sub-buffer has no device address to give.
    let plain = env.zeros::<i32>(1024);
    let region = cl_buffer_region {
        origin: 128,
        size: 64,
    };
    let mut err = 0;
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            plain,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    assert_eq!(try_address(sub), Err(CL_INVALID_OPERATION));
    for m in [sub, plain, parent, out] {
        release(m);
    }
}

#[test]
fn a_device_pointer_argument_may_point_inside_a_buffer() {
    let env = Env::new();
    let data: Vec<i32> = (0..64).map(|i| i * 7 - 3).collect();
    let m = addressable(&env, &data);
    let base = address(m);
    let out = env.zeros::<i32>(2);
    let k = env.kern(SOURCE, "around");
    for at in [2usize, 17, 62] {
        let p = base + 4 * at as u64;
        ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, p) });
        arg_mem(k, 1, out);
        env.run(k, &[1], None, None);
        let got: Vec<i32> = env.read(out, 2);
        assert_eq!(got, vec![data[at - 2], data[at]], "pointer at element {at}");
        let now: Vec<i32> = env.read(m, 64);
        assert_eq!(
            now[at + 1],
            data[at - 1] + 1000,
            "store through p[1], element {at}"
        );
        // Put it back for the next round.
        ok(unsafe {
            cl!(clEnqueueWriteBuffer)(
                env.queue,
                m,
                CL_TRUE,
                0,
                256,
                data.as_ptr() as *const c_void,
                0,
                null(),
                null_mut(),
            )
        });
    }
    for m in [m, out] {
        release(m);
    }
}

#[test]
fn clsetkernelarg_and_device_pointers_replace_each_other() {
    let env = Env::new();
    let m = addressable(&env, &[0i32; 64]);
    let plain = env.zeros::<i32>(64);
    let (out, base) = (env.zeros::<u64>(1), address(m));
    let k = env.kern(SOURCE, "where");
    arg_mem(k, 1, out);
    let seen = |k| {
        env.run(k, &[1], None, None);
        env.read::<u64>(out, 1)[0]
    };
    ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, base + 40) });
    assert_eq!(seen(k), base + 40);
    arg_mem(k, 0, plain);
    let plain_at = seen(k);
    assert_ne!(plain_at, base + 40);
    // NULL and a value no buffer holds are legal as long as the kernel does not dereference
    // them.
    for v in [0u64, 0x15465] {
        ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, v) });
        assert_eq!(seen(k), v);
    }
    // A cloned kernel carries the device pointer.
    ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, base + 4) });
    let mut err = 0;
    let c = unsafe { cl!(clCloneKernel)(k, &mut err) };
    ok(err);
    assert_eq!(seen(c), base + 4);
    unsafe {
        cl!(clReleaseKernel)(c);
    }
    for m in [m, plain, out] {
        release(m);
    }
}

const DEREF: &str = r#"
// Element i of the int array whose address is in table[0].
__kernel void deref(__global ulong *table, __global int *out) {
    size_t i = get_global_id(0);
    out[i] = (*(__global int * __global *)table)[i];
}
"#;

/// A launch waiting on a user event holds the buffer named only by its
/// `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT` after the application released it: new buffers made
/// meanwhile get other addresses, and the kernel reads the released buffer's contents.
#[test]
fn launches_keep_indirectly_reached_buffers_alive() {
    let env = Env::new();
    let n = 16 * 1024;
    let values: Vec<i32> = (0..n as i32).map(|i| i * 5 + 1).collect();
    let data = addressable(&env, &values);
    let at = address(data);
    let (table, out) = (env.buf(&[at]), env.zeros::<i32>(n));
    let k = env.kern(DEREF, "deref");
    arg_mem(k, 0, table);
    arg_mem(k, 1, out);
    ok(set_device_ptrs(k, &[at]));
    let mut err = 0;
    let gate = unsafe { cl!(clCreateUserEvent)(env.context, &mut err) };
    ok(err);
    let g = [n];
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            1,
            &gate,
            null_mut(),
        )
    });
    release(data);
    // Buffers of the same size, made while the launch waits, take their memory elsewhere.
    let junk: Vec<cl_mem> = (0..4).map(|_| addressable(&env, &vec![-1i32; n])).collect();
    let overlapping: Vec<u64> = junk
        .iter()
        .map(|&j| address(j))
        .filter(|&a| a < at + (4 * n) as u64 && at < a + (4 * n) as u64)
        .collect();
    // Open the gate before any assertion, so that a failure does not leave the queue stuck.
    ok(unsafe { cl!(clSetUserEventStatus)(gate, CL_COMPLETE) });
    env.finish();
    let got: Vec<i32> = env.read(out, n);
    assert!(
        overlapping.is_empty(),
        "new buffers at {overlapping:x?} overlap the pending launch's buffer at {at:#x}"
    );
    assert!(
        got == values,
        "the kernel read other data than the released buffer's"
    );
    unsafe { cl!(clReleaseEvent)(gate) };
    for m in junk.into_iter().chain([table, out]) {
        release(m);
    }
}

#[test]
fn buffer_property_errors() {
    let env = Env::new();
    let create = |props: &[cl_mem_properties]| {
        let mut err = 0;
        let m = unsafe {
            cl!(clCreateBufferWithProperties)(
                env.context,
                props.as_ptr(),
                CL_MEM_READ_WRITE,
                64,
                null_mut(),
                &mut err,
            )
        };
        (m, err)
    };
    let p = CL_MEM_DEVICE_PRIVATE_ADDRESS_EXT;
    // CL_INVALID_PROPERTY: a value other than CL_TRUE or CL_FALSE, a name given twice, an
    // unknown name.
    for bad in [
        vec![p, 2, 0],
        vec![p, u64::MAX, 0],
        vec![p, 1, p, 1, 0],
        vec![0x5003, 1, 0],
    ] {
        let (m, err) = create(&bad);
        assert!(m.is_null());
        assert_eq!(err, CL_INVALID_PROPERTY, "{bad:x?}");
    }
    // CL_FALSE: a plain buffer, which has no address to give; CL_MEM_PROPERTIES as given.
    let (m, err) = create(&[p, 0, 0]);
    ok(err);
    assert_eq!(try_address(m), Err(CL_INVALID_OPERATION));
    let mut got = [7u64; 3];
    let mut n = 0;
    ok(unsafe {
        cl!(clGetMemObjectInfo)(
            m,
            CL_MEM_PROPERTIES,
            24,
            got.as_mut_ptr() as *mut c_void,
            &mut n,
        )
    });
    assert_eq!((n, got), (24, [p, 0, 0]));
    release(m);
    // clCreateBuffer's buffers have none either.
    let plain = env.zeros::<i32>(4);
    assert_eq!(try_address(plain), Err(CL_INVALID_OPERATION));
    release(plain);
    // CL_TRUE: one address per device of the context; CL_INVALID_VALUE for a short size.
    let (m, err) = create(&[p, 1, 0]);
    ok(err);
    let mut size = 0;
    ok(unsafe { cl!(clGetMemObjectInfo)(m, CL_MEM_DEVICE_ADDRESS_EXT, 0, null_mut(), &mut size) });
    assert_eq!(size, 8, "one device in the context");
    let mut a = 0u64;
    let short = unsafe {
        cl!(clGetMemObjectInfo)(
            m,
            CL_MEM_DEVICE_ADDRESS_EXT,
            4,
            &mut a as *mut u64 as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(short, CL_INVALID_VALUE);
    let a = address(m);
    assert!(
        a != 0 && a.is_multiple_of(128),
        "{a:#x}: CL_DEVICE_MEM_BASE_ADDR_ALIGN"
    );
    // The address is fixed for the buffer's lifetime.
    assert_eq!(address(m), a);
    release(m);
}

#[test]
fn set_kernel_arg_device_pointer_errors() {
    let env = Env::new();
    let k = env.kern(SOURCE, "kinds");
    let set = |k: cl_kernel, i: u32| unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, i, 0x15465) };
    assert_eq!(set(null_mut(), 0), CL_INVALID_KERNEL);
    // Not a kernel: a buffer handle.
    let m = env.zeros::<i32>(1);
    assert_eq!(set(m as cl_kernel, 0), CL_INVALID_KERNEL);
    // CL_INVALID_ARG_INDEX: __local pointer, by-value, __constant pointer, past the last.
    for i in [1, 2, 3, 4, 100] {
        assert_eq!(set(k, i), CL_INVALID_ARG_INDEX, "argument {i}");
    }
    ok(set(k, 0));
    release(m);
}

#[test]
fn set_kernel_exec_info_device_ptrs_errors() {
    let env = Env::new();
    let k = env.kern(DEREF, "deref");
    let ptrs = [0x1000u64, 0x2000];
    let call = |k: cl_kernel, name: cl_kernel_exec_info, size: usize, v: *const c_void| unsafe {
        cl!(clSetKernelExecInfo)(k, name, size, v)
    };
    let name = CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT;
    let v = ptrs.as_ptr() as *const c_void;
    assert_eq!(call(null_mut(), name, 16, v), CL_INVALID_KERNEL);
    // CL_INVALID_VALUE: a size that is not a whole number of addresses, NULL with a size.
    assert_eq!(call(k, name, 12, v), CL_INVALID_VALUE);
    assert_eq!(call(k, name, 8, null()), CL_INVALID_VALUE);
    assert_eq!(call(k, 0x5003, 8, v), CL_INVALID_VALUE);
    // The SVM names: no SVM on vkcl's devices.
    assert_eq!(
        call(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 8, v),
        CL_INVALID_OPERATION
    );
    ok(call(k, name, 16, v));
    // An empty list clears it.
    ok(call(k, name, 0, null()));
}

/// A command buffer captures a device-pointer argument and the device-pointer list when it
/// records; a mutable update replaces the argument by a buffer and takes exec info.
#[test]
fn command_buffers_capture_device_pointers() {
    let env = Env::new();
    let data: Vec<i32> = (0..64).map(|i| 100 + i).collect();
    let m = addressable(&env, &data);
    let base = address(m);
    let out = env.zeros::<i32>(2);
    let k = env.kern(SOURCE, "around");
    ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, base + 4 * 10) });
    arg_mem(k, 1, out);
    ok(set_device_ptrs(k, &[base]));
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_MUTABLE_KHR,
        0,
    ];
    let mut err = 0;
    let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, props.as_ptr(), &mut err) };
    ok(err);
    let g = [1usize];
    let mut h = null_mut();
    ok(unsafe {
        ext!(clCommandNDRangeKernelKHR)(
            cb,
            null_mut(),
            null(),
            k,
            1,
            null(),
            g.as_ptr(),
            null(),
            0,
            null(),
            null_mut(),
            &mut h,
        )
    });
    ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
    // Changing the kernel's argument after recording changes nothing recorded.
    ok(unsafe { ext!(clSetKernelArgDevicePointerEXT)(k, 0, base + 4 * 40) });
    assert_eq!(run_command_buffer(cb), (CL_SUCCESS, CL_COMPLETE));
    assert_eq!(env.read::<i32>(out, 2), vec![data[8], data[10]]);
    // Mutable update: exec info (a new list; a bad size is refused), then the pointer
    // argument replaced by a plain buffer's sub-region through clSetKernelArg semantics.
    let info = |size: usize, v: *const c_void| cl_mutable_dispatch_exec_info_khr {
        param_name: CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT,
        param_value_size: size,
        param_value: v,
    };
    let update = |c: &cl_mutable_dispatch_config_khr| {
        let types = [CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR];
        let mut ptrs = [c as *const _ as *const c_void];
        unsafe { ext!(clUpdateMutableCommandsKHR)(cb, 1, types.as_ptr(), ptrs.as_mut_ptr()) }
    };
    let list = [base + 8];
    let bad = [info(4, list.as_ptr() as *const c_void)];
    let good = [info(8, list.as_ptr() as *const c_void)];
    let mut c = cl_mutable_dispatch_config_khr {
        command: h,
        num_args: 0,
        num_svm_args: 0,
        num_exec_infos: 1,
        work_dim: 0,
        arg_list: null(),
        arg_svm_list: null(),
        exec_info_list: bad.as_ptr(),
        global_work_offset: null(),
        global_work_size: null(),
        local_work_size: null(),
    };
    assert_eq!(update(&c), CL_INVALID_VALUE);
    c.exec_info_list = good.as_ptr();
    ok(update(&c));
    assert_eq!(run_command_buffer(cb), (CL_SUCCESS, CL_COMPLETE));
    assert_eq!(env.read::<i32>(out, 2), vec![data[8], data[10]]);
    let region = cl_buffer_region {
        origin: 128,
        size: 128,
    };
    let sub = unsafe {
        cl!(clCreateSubBuffer)(
            m,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
            &mut err,
        )
    };
    ok(err);
    let arg = cl_mutable_dispatch_arg_khr {
        arg_index: 0,
        arg_size: std::mem::size_of::<cl_mem>(),
        arg_value: &sub as *const cl_mem as *const c_void,
    };
    let c = cl_mutable_dispatch_config_khr {
        num_args: 1,
        arg_list: &arg,
        num_exec_infos: 0,
        exec_info_list: null(),
        ..c
    };
    ok(update(&c));
    assert_eq!(run_command_buffer(cb), (CL_SUCCESS, CL_COMPLETE));
    // The sub-buffer starts at element 32: p[-2] is element 30 of the parent.
    assert_eq!(env.read::<i32>(out, 2), vec![data[30], data[32]]);
    unsafe { ext!(clReleaseCommandBufferKHR)(cb) };
    for x in [sub, m, out] {
        release(x);
    }
}
