//! OpenCL C `printf` through the real loader: each test re-runs this test binary as a child
//! process (the same test, with `VKCL_PRINTF_CHILD` set) whose stdout, where the OpenCL C
//! specification sends printf output, the parent captures and compares with the host C
//! library's formatting of the same values.
mod common;
use common::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};

/// Marks the start and end of the scenario's output in the child's stdout.
const BEGIN: &str = "<<<vkcl-printf-begin>>>\n";
const END: &str = "<<<vkcl-printf-end>>>\n";

/// Writes `s` through the C library's stdout (where vkcl prints), flushed.
fn c_print(s: &str) {
    let c = CString::new(s).unwrap();
    // SAFETY: a NUL-terminated string and a "%s" format.
    unsafe {
        libc::printf(c"%s".as_ptr(), c.as_ptr());
        libc::fflush(null_mut());
    }
}

/// In the parent: runs test `name` in a child process and returns what its scenario printed.
/// In the child (`VKCL_PRINTF_CHILD` = `name`): runs `scenario` between the markers and
/// returns None.
fn captured(name: &str, scenario: impl FnOnce()) -> Option<String> {
    if std::env::var("VKCL_PRINTF_CHILD").as_deref() == Ok(name) {
        c_print(BEGIN);
        scenario();
        c_print(END);
        return None;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("VKCL_PRINTF_CHILD", name)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let start = stdout.find(BEGIN).expect("begin marker") + BEGIN.len();
    let end = stdout.rfind(END).expect("end marker");
    Some(stdout[start..end].to_string())
}

/// The host C library's formatting of one conversion.
enum V<'a> {
    I(i64),
    U(u64),
    D(f64),
    S(&'a str),
    P(u64),
}

fn c_fmt(spec: &str, v: V<'_>) -> String {
    let f = CString::new(spec).unwrap();
    let mut buf = vec![0u8; 512];
    let (p, n) = (buf.as_mut_ptr() as *mut libc::c_char, buf.len());
    // SAFETY: `buf` holds `n` bytes; each spec's conversion takes the type passed.
    let r = unsafe {
        match v {
            V::I(x) => libc::snprintf(p, n, f.as_ptr(), x as libc::c_longlong),
            V::U(x) => libc::snprintf(p, n, f.as_ptr(), x as libc::c_ulonglong),
            V::D(x) => libc::snprintf(p, n, f.as_ptr(), x),
            V::S(s) => {
                let s = CString::new(s).unwrap();
                libc::snprintf(p, n, f.as_ptr(), s.as_ptr())
            }
            V::P(x) => libc::snprintf(p, n, f.as_ptr(), x as usize as *const c_void),
        }
    };
    buf.truncate(r as usize);
    String::from_utf8(buf).unwrap()
}

/// Enqueues `k` over `global` items (local size chosen by vkcl) and waits with clFinish.
fn run(env: &Env, k: cl_kernel, global: usize) {
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(
            env.queue,
            k,
            1,
            null(),
            &global,
            null(),
            0,
            null(),
            null_mut(),
        )
    });
    env.finish();
}

#[test]
fn printf_integers_of_each_width() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let vals: Vec<u64> = (0..4)
        .map(|_| (u64::from(rng.next_u32()) << 32) | u64::from(rng.next_u32()))
        .collect();
    let src = r#"
__kernel void k(__global const ulong *v) {
    size_t i = get_global_id(0);
    ulong x = v[i];
    printf("%hhd %hhu %hd %hu %d %u %ld %lu\n", (char)x, (uchar)x, (short)x, (ushort)x,
           (int)x, (uint)x, (long)x, x);
    printf("[%5d] [%-5d] [%05d] [%+d] [% d] [%.3d] [%x] [%#X] [%#o] [%lx] [%#lo]\n",
           (int)(x % 1000), (int)(x % 1000), (int)(x % 1000), (int)x, (int)x, (int)(x % 10),
           (uint)x, (uint)x, (uint)x, x, x);
}
"#;
    let Some(out) = captured("printf_integers_of_each_width", || {
        let env = Env::new();
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_ONLY, 32, Some(bytes(&vals)));
        arg_mem(k, 0, m);
        run(&env, k, 4);
    }) else {
        return;
    };
    let mut lines: Vec<String> = Vec::new();
    for &x in &vals {
        lines.push(format!(
            "{} {} {} {} {} {} {} {}\n",
            x as i8, x as u8, x as i16, x as u16, x as i32, x as u32, x as i64, x
        ));
        let m = ((x % 1000) as i32) as i64;
        lines.push(format!(
            "[{}] [{}] [{}] [{}] [{}] [{}] [{}] [{}] [{}] [{}] [{}]\n",
            c_fmt("%5lld", V::I(m)),
            c_fmt("%-5lld", V::I(m)),
            c_fmt("%05lld", V::I(m)),
            c_fmt("%+lld", V::I(i64::from(x as i32))),
            c_fmt("% lld", V::I(i64::from(x as i32))),
            c_fmt("%.3lld", V::I(((x % 10) as i32).into())),
            c_fmt("%llx", V::U(u64::from(x as u32))),
            c_fmt("%#llX", V::U(u64::from(x as u32))),
            c_fmt("%#llo", V::U(u64::from(x as u32))),
            c_fmt("%llx", V::U(x)),
            c_fmt("%#llo", V::U(x)),
        ));
    }
    // Work-items print in any order; each item's two lines are in order but may interleave
    // with other items' lines: compare the multisets.
    let mut got: Vec<&str> = out.split_inclusive('\n').collect();
    let mut want: Vec<&str> = lines.iter().map(String::as_str).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn printf_floats() {
    let mut rng = Rng(77);
    let vals: Vec<f32> = (0..8)
        .map(|k| (rng.next_f32() - 0.5) * 10f32.powi(k - 3))
        .chain([0.0, -0.0, 1.0 / 3.0, 1e30, f32::INFINITY])
        .collect();
    let src = r#"
__kernel void k(__global const float *v, uint n) {
    for (uint i = 0; i < n; i++) {
        float x = v[i];
        printf("%f|%e|%g|%a|%.3f|%12.4E|%-10.2g|%G|%A\n", x, x, x, x, x, x, x, x, x);
    }
}
"#;
    let n = vals.len() as u32;
    let Some(out) = captured("printf_floats", || {
        let env = Env::new();
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_ONLY, vals.len() * 4, Some(bytes(&vals)));
        arg_mem(k, 0, m);
        set_arg(k, 1, &n);
        run(&env, k, 1);
    }) else {
        return;
    };
    let mut want = String::new();
    for &x in &vals {
        let d = f64::from(x);
        let specs = [
            "%f", "%e", "%g", "%a", "%.3f", "%12.4E", "%-10.2g", "%G", "%A",
        ];
        let parts: Vec<String> = specs.iter().map(|s| c_fmt(s, V::D(d))).collect();
        want.push_str(&parts.join("|"));
        want.push('\n');
    }
    assert_eq!(out, want);
}

#[test]
fn printf_vectors() {
    let src = r#"
__kernel void k(__global const int *v) {
    int a = v[0], b = v[1];
    float4 f = (float4)(1.5f, -2.25f, (float)a, 1.0f / 3.0f);
    uchar2 c = (uchar2)((uchar)a, (uchar)b);
    short8 s = (short8)((short)a, (short)b, -1, 2, -3, 4, 32767, -32768);
    uint16 u = (uint16)(1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 32, 64, 128, 256, (uint)a, (uint)b);
    long2 l = (long2)((long)a * 100000000L, -(long)b);
    float3 g = (float3)(1234.25f, 987654.5f, 0.0005f);
    printf("%v4hlf|%#v2hhx|%v8hd|%v16hlo|%v2ld|%.2v3hle|%v3hlg|%.1v4hla\n", f, c, s, u, l, g,
           g, f);
}
"#;
    let vals = [123456i32, -98765];
    let Some(out) = captured("printf_vectors", || {
        let env = Env::new();
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_ONLY, 8, Some(bytes(&vals)));
        arg_mem(k, 0, m);
        run(&env, k, 1);
    }) else {
        return;
    };
    let (a, b) = (vals[0], vals[1]);
    let join = |spec: &str, vs: Vec<V<'_>>| {
        vs.into_iter()
            .map(|v| c_fmt(spec, v))
            .collect::<Vec<_>>()
            .join(",")
    };
    let f = [1.5f32, -2.25, a as f32, 1.0 / 3.0].map(f64::from);
    let g = [1234.25f32, 987654.5, 0.0005].map(f64::from);
    let s: Vec<i64> = [a as i16, b as i16, -1, 2, -3, 4, 32767, -32768]
        .iter()
        .map(|&x| i64::from(x))
        .collect();
    let u: Vec<u64> = [
        1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 32, 64, 128, 256, a as u32, b as u32,
    ]
    .iter()
    .map(|&x| u64::from(x))
    .collect();
    let want = format!(
        "{}|{}|{}|{}|{}|{}|{}|{}\n",
        join("%f", f.iter().map(|&x| V::D(x)).collect()),
        join(
            "%#llx",
            vec![V::U(u64::from(a as u8)), V::U(u64::from(b as u8))]
        ),
        join("%lld", s.into_iter().map(V::I).collect()),
        join("%llo", u.into_iter().map(V::U).collect()),
        join(
            "%lld",
            vec![V::I(i64::from(a) * 100_000_000), V::I(-i64::from(b))]
        ),
        join("%.2e", g.iter().map(|&x| V::D(x)).collect()),
        join("%g", g.iter().map(|&x| V::D(x)).collect()),
        join("%.1a", f.iter().map(|&x| V::D(x)).collect()),
    );
    assert_eq!(out, want);
}

#[test]
fn printf_strings_chars_and_pointers() {
    let src = r#"
__constant char table[] = "from constant memory";
__kernel void k(__global ulong *addr, int pick) {
    *addr = (ulong)addr;
    printf("%s|%5s|%-5s|%.2s|%s|%c%c%c|%%|100%%|%p\n", "lit", "ab", "ab", "xyz", table, 'o',
           (char)(pick + 'a'), '!', addr);
    printf("%s\n", pick ? "picked" : "not picked");
    printf("no arguments\n");
}
"#;
    let mut addr = 0u64;
    let Some(out) = captured("printf_strings_chars_and_pointers", || {
        let env = Env::new();
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_WRITE, 8, None);
        arg_mem(k, 0, m);
        set_arg(k, 1, &1i32);
        run(&env, k, 1);
        addr = env.read::<u64>(m, 1)[0];
        // The address goes to the parent through the captured output.
        c_print(&format!("addr={addr}\n"));
    }) else {
        return;
    };
    let (body, tail) = out.rsplit_once("addr=").expect("address line");
    addr = tail.trim().parse().unwrap();
    assert_ne!(addr, 0);
    let want = format!(
        "lit|{}|{}|{}|from constant memory|ob!|%|100%|{}\npicked\nno arguments\n",
        c_fmt("%5s", V::S("ab")),
        c_fmt("%-5s", V::S("ab")),
        c_fmt("%.2s", V::S("xyz")),
        c_fmt("%p", V::P(addr)),
    );
    assert_eq!(body, want);
}

#[test]
fn printf_many_work_items() {
    let n = 4096usize;
    let src = r#"
__kernel void k(__global int *ret) {
    int i = get_global_id(0);
    ret[i] = printf("item %d of %d\n", i, (int)get_global_size(0));
}
"#;
    let mut rets = Vec::new();
    let Some(out) = captured("printf_many_work_items", || {
        let env = Env::new();
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_WRITE, n * 4, None);
        arg_mem(k, 0, m);
        run(&env, k, n);
        rets = env.read::<i32>(m, n);
        assert!(
            rets.iter().all(|&r| r == 0),
            "printf returns 0 while it fits"
        );
    }) else {
        return;
    };
    let mut seen = vec![false; n];
    let mut count = 0;
    for line in out.lines() {
        let rest = line.strip_prefix("item ").expect("line format");
        let (i, total) = rest.split_once(" of ").unwrap();
        assert_eq!(total.parse::<usize>().unwrap(), n);
        let i: usize = i.parse().unwrap();
        assert!(!seen[i], "item {i} printed twice");
        seen[i] = true;
        count += 1;
    }
    assert_eq!(count, n);
}

#[test]
fn printf_output_order_across_kernels_and_completion() {
    let src = r#"
__kernel void a(void) { printf("A%d\n", (int)get_global_id(0)); }
__kernel void b(void) { printf("B%d\n", (int)get_global_id(0)); }
"#;
    let Some(out) = captured("printf_output_order_across_kernels_and_completion", || {
        let env = Env::new();
        let p = env.build(src);
        let (ka, kb) = (env.kernel(p, "a"), env.kernel(p, "b"));
        let g = 64usize;
        let mut ev = null_mut();
        for (k, e) in [(ka, null_mut()), (kb, &mut ev as *mut cl_event)] {
            ok(unsafe {
                cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &g, null(), 0, null(), e)
            });
        }
        // The kernels' output is flushed before clWaitForEvents returns.
        ok(unsafe { cl!(clWaitForEvents)(1, &ev) });
        c_print("host after wait\n");
        ok(unsafe { cl!(clReleaseEvent)(ev) });
    }) else {
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 129, "{out}");
    assert!(lines[..64].iter().all(|l| l.starts_with('A')), "{out}");
    assert!(lines[64..128].iter().all(|l| l.starts_with('B')), "{out}");
    assert_eq!(lines[128], "host after wait");
    for p in ["A", "B"] {
        let mut ids: Vec<usize> = lines
            .iter()
            .filter_map(|l| l.strip_prefix(p))
            .map(|s| s.parse().unwrap())
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..64).collect::<Vec<_>>());
    }
}

#[test]
fn printf_returns_minus_one_when_the_buffer_is_full() {
    // Each record: 8 header bytes + 16 longs = 136 bytes; 10,000 of them do not fit in 1 MB.
    let n = 10_000usize;
    let src = r#"
__kernel void k(__global int *ret) {
    long i = get_global_id(0);
    long8 v = (long8)(i);
    ret[i] = printf("%v8ld %v8ld\n", v, v + 1);
}
"#;
    let mut ok_count = 0;
    let Some(out) = captured("printf_returns_minus_one_when_the_buffer_is_full", || {
        let env = Env::new();
        let mut size = 0usize;
        ok(unsafe {
            cl!(clGetDeviceInfo)(
                env.device,
                CL_DEVICE_PRINTF_BUFFER_SIZE,
                8,
                &mut size as *mut usize as *mut c_void,
                null_mut(),
            )
        });
        assert!(size >= 1024 * 1024, "full profile: at least 1 MB");
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_WRITE, n * 4, None);
        arg_mem(k, 0, m);
        run(&env, k, n);
        let rets = env.read::<i32>(m, n);
        assert!(rets.iter().all(|&r| r == 0 || r == -1));
        ok_count = rets.iter().filter(|&&r| r == 0).count();
        assert_eq!(ok_count, size / 136, "records that fit in {size} bytes");
        c_print(&format!("fitted={ok_count}\n"));
    }) else {
        return;
    };
    let (body, tail) = out.rsplit_once("fitted=").unwrap();
    ok_count = tail.trim().parse().unwrap();
    assert_eq!(body.lines().count(), ok_count);
    for line in body.lines() {
        let (x, y) = line.split_once(' ').unwrap();
        let xs: Vec<i64> = x.split(',').map(|s| s.parse().unwrap()).collect();
        let ys: Vec<i64> = y.split(',').map(|s| s.parse().unwrap()).collect();
        assert_eq!(xs.len(), 8);
        assert!(xs.iter().all(|&v| v == xs[0]));
        assert!(ys.iter().all(|&v| v == xs[0] + 1));
    }
}

#[test]
fn printf_in_a_command_buffer_prints_on_every_enqueue() {
    let src = r#"
__kernel void k(__global const int *run, __global int *ret) {
    int i = get_global_id(0);
    ret[i] = printf("run %d item %d\n", run[0], i);
}
"#;
    let n = 16usize;
    let runs = 3;
    let Some(out) = captured("printf_in_a_command_buffer_prints_on_every_enqueue", || {
        let env = Env::new();
        let caps: cl_device_command_buffer_capabilities_khr = info_scalar(|s, v, r| unsafe {
            cl!(clGetDeviceInfo)(
                env.device,
                CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
                s,
                v,
                r,
            )
        });
        assert_ne!(caps & CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR, 0);
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let run_mem = env.buffer(CL_MEM_READ_ONLY, 4, Some(bytes(&[0i32])));
        let ret = env.buffer(CL_MEM_READ_WRITE, n * 4, Some(bytes(&vec![7i32; n])));
        arg_mem(k, 0, run_mem);
        arg_mem(k, 1, ret);
        let mut err = 0;
        let cb = unsafe { ext!(clCreateCommandBufferKHR)(1, &env.queue, null(), &mut err) };
        ok(err);
        ok(unsafe {
            ext!(clCommandNDRangeKernelKHR)(
                cb,
                null_mut(),
                null(),
                k,
                1,
                null(),
                &n,
                null(),
                0,
                null(),
                null_mut(),
                null_mut(),
            )
        });
        ok(unsafe { ext!(clFinalizeCommandBufferKHR)(cb) });
        // Non-blocking writes read their source later: it lives until clFinish.
        let values: Vec<i32> = (1..=runs as i32).collect();
        for r in 0..runs {
            // A write between runs changes what the recorded kernel reads.
            let v = &values[r..r + 1];
            ok(unsafe {
                cl!(clEnqueueWriteBuffer)(
                    env.queue,
                    run_mem,
                    CL_FALSE,
                    0,
                    4,
                    v.as_ptr() as *const c_void,
                    0,
                    null(),
                    null_mut(),
                )
            });
            ok(unsafe {
                ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, null(), null_mut())
            });
        }
        env.finish();
        c_print("host after finish\n");
        assert!(env.read::<i32>(ret, n).iter().all(|&r| r == 0));
        ok(unsafe { ext!(clReleaseCommandBufferKHR)(cb) });
    }) else {
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), runs * n + 1, "{out}");
    assert_eq!(lines[runs * n], "host after finish");
    for r in 0..runs {
        let mut items: Vec<usize> = lines[r * n..(r + 1) * n]
            .iter()
            .map(|l| {
                let rest = l
                    .strip_prefix(&format!("run {} item ", r + 1))
                    .unwrap_or_else(|| panic!("run {} out of order: {out}", r + 1));
                rest.parse().unwrap()
            })
            .collect();
        items.sort_unstable();
        assert_eq!(items, (0..n).collect::<Vec<_>>());
    }
}

#[test]
fn printf_formats_and_strings_chosen_by_control_flow() {
    // LLVM merges these calls into one printf on a select or phi of the formats.
    let src = r#"
__kernel void k(__global int *o) {
    int i = get_global_id(0);
    if (o[i] > 3) printf("big %d\n", i); else printf("small %d\n", i);
    if (o[i] > 5) { o[i] = 1; printf("high %d %s\n", i, "x"); }
    else { o[i] = 2; printf("low %d %s\n", i, i & 1 ? "odd" : "even"); }
}
"#;
    let vals: Vec<i32> = (0..32).map(|i| (i * 7) % 10).collect();
    let Some(out) = captured("printf_formats_and_strings_chosen_by_control_flow", || {
        let env = Env::new();
        let p = env.build(src);
        let k = env.kernel(p, "k");
        let m = env.buffer(CL_MEM_READ_WRITE, vals.len() * 4, Some(bytes(&vals)));
        arg_mem(k, 0, m);
        run(&env, k, vals.len());
    }) else {
        return;
    };
    let mut want: Vec<String> = Vec::new();
    for (i, &v) in vals.iter().enumerate() {
        want.push(format!("{} {i}\n", if v > 3 { "big" } else { "small" }));
        want.push(if v > 5 {
            format!("high {i} x\n")
        } else {
            format!("low {i} {}\n", if i & 1 == 1 { "odd" } else { "even" })
        });
    }
    let mut got: Vec<&str> = out.split_inclusive('\n').collect();
    let mut want: Vec<&str> = want.iter().map(String::as_str).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn printf_survives_a_program_binary_round_trip() {
    let src = r#"
__kernel void k(int v) { printf("binary %d %s %v2hlx\n", v, "ok", (uint2)(v, 255)); }
"#;
    let Some(out) = captured("printf_survives_a_program_binary_round_trip", || {
        let env = Env::new();
        let p = env.build(src);
        let size: usize = info_scalar(|s, v, r| unsafe {
            cl!(clGetProgramInfo)(p, CL_PROGRAM_BINARY_SIZES, s, v, r)
        });
        let mut bin = vec![0u8; size];
        let mut ptrs = [bin.as_mut_ptr()];
        ok(unsafe {
            cl!(clGetProgramInfo)(
                p,
                CL_PROGRAM_BINARIES,
                8,
                ptrs.as_mut_ptr() as *mut c_void,
                null_mut(),
            )
        });
        let (mut err, mut status) = (0, 0);
        let bins = [bin.as_ptr()];
        let p2 = unsafe {
            cl!(clCreateProgramWithBinary)(
                env.context,
                1,
                &env.device,
                &size,
                bins.as_ptr() as *mut _,
                &mut status,
                &mut err,
            )
        };
        ok(err);
        ok(status);
        ok(unsafe { cl!(clBuildProgram)(p2, 0, null(), null(), None, null_mut()) });
        let k = env.kernel(p2, "k");
        set_arg(k, 0, &1234i32);
        run(&env, k, 1);
    }) else {
        return;
    };
    assert_eq!(
        out,
        format!(
            "binary 1234 ok {},{}\n",
            c_fmt("%llx", V::U(1234)),
            c_fmt("%llx", V::U(255))
        )
    );
}

/// OpenCL C 3.1's `z` (size_t) and `t` (ptrdiff_t) length modifiers, 64-bit on vkcl's devices
/// (CL_DEVICE_ADDRESS_BITS 64), in an OpenCL C 3.1 program where the device offers it.
#[test]
fn printf_size_t_and_ptrdiff_t() {
    let vals: Vec<u64> = vec![
        0,
        10,
        0xffff_ffff,
        0x1_0000_0000,
        u64::MAX,
        0x8000_0000_0000_0001,
    ];
    let src = r#"
__kernel void k(__global const ulong *v) {
    size_t i = get_global_id(0);
    size_t s = (size_t)v[i];
    ptrdiff_t t = (ptrdiff_t)v[i];
    printf("%zu %zx %td %5zu|\n", s, s, t, i);
}
"#;
    let Some(out) = captured("printf_size_t_and_ptrdiff_t", || {
        let env = Env::new();
        let all = info_string(|s, v, r| unsafe {
            cl!(clGetDeviceInfo)(env.device, CL_DEVICE_VERSION, s, v, r)
        });
        let std = if all.starts_with("OpenCL 3.1 ") {
            "-cl-std=CL3.1"
        } else {
            "-cl-std=CL3.0"
        };
        let k = env.kern_opts(src, std, "k");
        let m = env.buffer(CL_MEM_READ_ONLY, 8 * vals.len(), Some(bytes(&vals)));
        arg_mem(k, 0, m);
        run(&env, k, vals.len());
    }) else {
        return;
    };
    let mut want: Vec<String> = vals
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            format!(
                "{} {} {} {}|\n",
                c_fmt("%llu", V::U(x)),
                c_fmt("%llx", V::U(x)),
                c_fmt("%lld", V::I(x as i64)),
                c_fmt("%5llu", V::U(i as u64))
            )
        })
        .collect();
    let mut got: Vec<&str> = out.split_inclusive('\n').collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}
