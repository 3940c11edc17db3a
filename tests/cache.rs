//! The on-disk program cache: a second process building the same programs runs no clang, a
//! corrupt entry is rebuilt, `VKCL_CACHE=0` turns it off, and a program built from its
//! lowered-program entry (compiler/lowered_cache.rs) has the kernels, infos and results of a
//! cold build while an entry that does not decode falls back to a full build. Each build runs
//! in a child process (this test binary, running `child_builds`) with `VKCL_CACHE_DIR` pointing
//! at a fresh directory and `VKCL_CLANG` at a wrapper script that counts its invocations.
mod common;
use common::*;
use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

/// Two kernels, one with attributes and a `__local` argument, and a warning for the build log.
const BUILT: &str = "__kernel void poly(__global int *o, __global const int *i) {\n\
    size_t g = get_global_id(0); int x = i[g]; o[g] = x * x * 3 - 7 * x + (int)g; }\n\
    #warning the cache test's warning\n\
    __kernel __attribute__((reqd_work_group_size(8, 1, 1))) __attribute__((vec_type_hint(uint4)))\n\
    void prefix8(__global int *o, __global const int *i, __local int *t) {\n\
    size_t l = get_local_id(0), g = get_global_id(0); t[l] = i[g];\n\
    barrier(CLK_LOCAL_MEM_FENCE); int s = 0;\n\
    for (size_t j = 0; j <= l; j++) s += t[j]; o[g] = s; }\n";
/// Build options of [`BUILT`] (argument infos for the fingerprint).
const BUILT_OPTIONS: &str = "-cl-kernel-arg-info";
const HEADER: &str = "#define BIAS 17\n";
const OBJECT: &str = "#include \"bias.h\"\n\
    __kernel void biased(__global int *o, __global const int *i) {\n\
    size_t g = get_global_id(0); o[g] = i[g] - BIAS; }\n";

fn run_kernel(e: &Env, p: cl_program, name: &str, x: &[i32]) -> Vec<i32> {
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let inb = e.buffer(CL_MEM_READ_ONLY, bytes.len(), Some(&bytes));
    let out = e.buffer(CL_MEM_READ_WRITE, bytes.len(), None);
    let k = e.kernel(p, name);
    set_arg(k, 0, &out);
    set_arg(k, 1, &inb);
    let g = x.len();
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(e.queue, k, 1, null(), &g, null(), 0, null(), null_mut())
    });
    let v = e.read::<i32>(out, x.len());
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(inb);
        cl!(clReleaseMemObject)(out);
    }
    v
}

/// Everything an application can see of a built program on one line: build log, kernel
/// names, binary (a hash), and per kernel its attributes, work-group and memory figures and
/// argument infos.
fn fingerprint(e: &Env, p: cl_program) -> String {
    use sha2::Digest;
    let names = info_string(|s, v, r| unsafe {
        cl!(clGetProgramInfo)(p, CL_PROGRAM_KERNEL_NAMES, s, v, r)
    });
    let mut out = format!(
        "log={:?} names={names} binary={:x}",
        build_log(p, e.device),
        sha2::Sha256::digest(binary_of(p))
    );
    for name in names.split(';') {
        let k = e.kernel(p, name);
        let attributes = info_string(|s, v, r| unsafe {
            cl!(clGetKernelInfo)(k, CL_KERNEL_ATTRIBUTES, s, v, r)
        });
        let nargs: cl_uint =
            info_scalar(|s, v, r| unsafe { cl!(clGetKernelInfo)(k, CL_KERNEL_NUM_ARGS, s, v, r) });
        let wg = |what| -> Vec<u64> {
            let mut v = [0usize; 3];
            ok(unsafe {
                cl!(clGetKernelWorkGroupInfo)(
                    k,
                    e.device,
                    what,
                    std::mem::size_of_val(&v),
                    v.as_mut_ptr() as *mut _,
                    null_mut(),
                )
            });
            v.iter().map(|&x| x as u64).collect()
        };
        let mem = |what| -> u64 {
            info_scalar(|s, v, r| unsafe {
                cl!(clGetKernelWorkGroupInfo)(k, e.device, what, s, v, r)
            })
        };
        out += &format!(
            " | {name}: attributes={attributes:?} args={nargs} wg={:?} reqd={:?} local={} \
             private={}",
            wg(CL_KERNEL_WORK_GROUP_SIZE)[0],
            wg(CL_KERNEL_COMPILE_WORK_GROUP_SIZE),
            mem(CL_KERNEL_LOCAL_MEM_SIZE),
            mem(CL_KERNEL_PRIVATE_MEM_SIZE)
        );
        for i in 0..nargs {
            let arg = |what| {
                let mut n = 0;
                let r = unsafe { cl!(clGetKernelArgInfo)(k, i, what, 0, null_mut(), &mut n) };
                if r != CL_SUCCESS {
                    return format!("error {r}");
                }
                info_string(|s, v, r| unsafe { cl!(clGetKernelArgInfo)(k, i, what, s, v, r) })
            };
            let qualifier = |what| -> u64 {
                let mut v = 0u64;
                let r = unsafe {
                    cl!(clGetKernelArgInfo)(k, i, what, 8, &mut v as *mut u64 as *mut _, null_mut())
                };
                if r == CL_SUCCESS {
                    v
                } else {
                    u64::MAX
                }
            };
            out += &format!(
                " {}:{}:{}:{}",
                arg(CL_KERNEL_ARG_NAME),
                arg(CL_KERNEL_ARG_TYPE_NAME),
                qualifier(CL_KERNEL_ARG_ADDRESS_QUALIFIER),
                qualifier(CL_KERNEL_ARG_TYPE_QUALIFIER)
            );
        }
        unsafe { cl!(clReleaseKernel)(k) };
    }
    out
}

/// Run in a child process by the tests below: builds one program from source and one by
/// clCompileProgram (with an embedded header) + clLinkProgram, and checks both kernels'
/// results against the host.
#[test]
#[ignore]
fn child_builds() {
    let e = Env::new();
    let mut r = Rng(99);
    let x: Vec<i32> = (0..128)
        .map(|_| (r.next_u32() % 2000) as i32 - 1000)
        .collect();

    let p = e
        .try_build(BUILT, BUILT_OPTIONS)
        .unwrap_or_else(|(c, log)| panic!("build failed ({c}):\n{log}"));
    let want: Vec<i32> = x
        .iter()
        .enumerate()
        .map(|(g, &v)| v * v * 3 - 7 * v + g as i32)
        .collect();
    assert_eq!(run_kernel(&e, p, "poly", &x), want);
    // prefix8: inclusive prefix sums within groups of 8.
    let inb = e.buf(&x);
    let out = e.zeros::<i32>(x.len());
    let k = e.kernel(p, "prefix8");
    arg_mem(k, 0, out);
    arg_mem(k, 1, inb);
    arg_local(k, 2, 8 * 4);
    e.run(k, &[x.len()], Some(&[8]), None);
    let want8: Vec<i32> = x
        .chunks(8)
        .flat_map(|c| {
            c.iter()
                .scan(0, |s, v| {
                    *s += v;
                    Some(*s)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(e.read::<i32>(out, x.len()), want8);
    println!("FP {}", fingerprint(&e, p));
    // The program's binary builds and runs.
    let bin = binary_of(p);
    let (pb, err, status) = from_binary(&e, &bin);
    ok(err);
    ok(status);
    ok(unsafe { cl!(clBuildProgram)(pb, 0, null(), null(), None, null_mut()) });
    assert_eq!(run_kernel(&e, pb, "poly", &x), want);
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseMemObject)(inb);
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseProgram)(pb);
    }

    let mut err = 0;
    let make = |src: &str, err: &mut i32| {
        let s = CString::new(src).unwrap();
        let ptrs = [s.as_ptr()];
        unsafe {
            cl!(clCreateProgramWithSource)(e.context, 1, ptrs.as_ptr() as *mut _, null(), err)
        }
    };
    let h = make(HEADER, &mut err);
    ok(err);
    let o = make(OBJECT, &mut err);
    ok(err);
    let name = CString::new("bias.h").unwrap();
    let mut names = [name.as_ptr()];
    ok(unsafe {
        cl!(clCompileProgram)(
            o,
            0,
            null(),
            null(),
            1,
            &h,
            names.as_mut_ptr() as *mut _,
            None,
            null_mut(),
        )
    });
    let linked = unsafe {
        cl!(clLinkProgram)(
            e.context,
            0,
            null(),
            null(),
            1,
            &o,
            None,
            null_mut(),
            &mut err,
        )
    };
    ok(err);
    let want: Vec<i32> = x.iter().map(|v| v - 17).collect();
    assert_eq!(run_kernel(&e, linked, "biased", &x), want);
    println!("FP {}", fingerprint(&e, linked));
    unsafe {
        for q in [p, h, o, linked] {
            cl!(clReleaseProgram)(q);
        }
    }
}

fn find_clang() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("clang-15"))
        .find(|p| p.is_file())
}

struct Setup {
    root: PathBuf,
    wrapper: PathBuf,
    counter: PathBuf,
}

impl Setup {
    fn new(tag: &str) -> Option<Setup> {
        let Some(clang) = find_clang() else {
            println!("skipped: clang-15 is not on PATH");
            return None;
        };
        let root = std::env::temp_dir().join(format!("vkcl-cache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let counter = root.join("clang-runs");
        let wrapper = root.join("clang-counting");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n",
                counter.display(),
                clang.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        Some(Setup {
            root,
            wrapper,
            counter,
        })
    }

    fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// Runs `child_builds` in a fresh process with `env`; its standard output and error.
    fn child(&self, env: &[(&str, &Path)]) -> (String, String) {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "child_builds", "--ignored", "--nocapture"])
            .env("VKCL_CLANG", &self.wrapper)
            .env_remove("VKCL_CACHE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            text.into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn clang_runs(&self) -> usize {
        std::fs::read_to_string(&self.counter)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn entries(&self) -> Vec<PathBuf> {
        let dir = self.cache_dir().join("programs");
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        rd.flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[test]
fn second_process_skips_clang_and_corrupt_entries_are_rebuilt() {
    let Some(s) = Setup::new("hit") else { return };
    let dir = s.cache_dir();
    // Cold: clang runs for the source build and for the compiled object.
    s.child(&[("VKCL_CACHE_DIR", &dir)]);
    assert_eq!(s.clang_runs(), 2);
    let entries = s.entries();
    assert!(
        entries.len() >= 3,
        "source, object and link entries: {entries:?}"
    );
    // No temporary files are left behind (entries are renamed into place).
    let stray: Vec<_> = std::fs::read_dir(dir.join("programs"))
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".bin"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    // The VkPipelineCache was saved beside it (at context release or exit).
    let pipelines: Vec<PathBuf> = std::fs::read_dir(dir.join("pipelines"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(pipelines.len(), 1, "one pipeline cache file: {pipelines:?}");
    let saved = std::fs::read(&pipelines[0]).unwrap();
    assert!(saved.len() > 64 && saved.starts_with(b"VKCLCAC\0"));

    // Warm, in a new process: no clang at all, same results (checked in the child).
    s.child(&[("VKCL_CACHE_DIR", &dir)]);
    assert_eq!(s.clang_runs(), 2, "the second process ran clang");

    // Corrupt every entry (one flipped byte in the middle): they are not trusted, the
    // programs are rebuilt (right results, checked in the child) and the entries rewritten.
    for p in entries.iter().chain(&pipelines) {
        let mut b = std::fs::read(p).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 0x10;
        std::fs::write(p, b).unwrap();
    }
    s.child(&[("VKCL_CACHE_DIR", &dir)]);
    assert_eq!(s.clang_runs(), 4, "corrupt entries were rebuilt");
    s.child(&[("VKCL_CACHE_DIR", &dir)]);
    assert_eq!(s.clang_runs(), 4, "the rebuilt entries are used");
    let resaved = std::fs::read(&pipelines[0]).unwrap();
    assert!(resaved.starts_with(b"VKCLCAC\0") && resaved != saved_corrupt(&saved));

    // Truncated entries too.
    for p in s.entries() {
        std::fs::write(&p, b"VKCLCAC\0").unwrap();
    }
    s.child(&[("VKCL_CACHE_DIR", &dir)]);
    assert_eq!(s.clang_runs(), 6);
}

/// `saved` with the byte flipped that the corruption step flips.
fn saved_corrupt(saved: &[u8]) -> Vec<u8> {
    let mut b = saved.to_vec();
    let mid = b.len() / 2;
    b[mid] ^= 0x10;
    b
}

#[test]
fn cache_can_be_disabled() {
    let Some(s) = Setup::new("off") else { return };
    let dir = s.cache_dir();
    let zero = Path::new("0");
    s.child(&[("VKCL_CACHE_DIR", &dir), ("VKCL_CACHE", zero)]);
    s.child(&[("VKCL_CACHE_DIR", &dir), ("VKCL_CACHE", zero)]);
    assert_eq!(
        s.clang_runs(),
        4,
        "without the cache every build runs clang"
    );
    assert!(!dir.exists(), "nothing is written with VKCL_CACHE=0");
}

/// The data of a checked cache file (`None` when it does not check out).
fn entry_data(p: &Path) -> Option<Vec<u8>> {
    vkcl::util::cache_file::decode(&std::fs::read(p).ok()?).map(|e| e.data)
}

/// The entries of whole built programs: their data starts with the format word 1
/// (compiler/lowered_cache.rs), where front-end entries hold SPIR-V or LLVM bitcode and
/// validation records nothing.
fn lowered_entries(s: &Setup) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = s
        .entries()
        .into_iter()
        .filter(|p| entry_data(p).is_some_and(|d| d.starts_with(&[1, 0, 0, 0])))
        .collect();
    v.sort();
    v
}

/// The fingerprint lines a child printed.
fn fingerprints(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("FP "))
        .map(str::to_string)
        .collect()
}

#[test]
fn lowered_programs_are_cached_and_bad_entries_fall_back() {
    let Some(s) = Setup::new("lowered") else {
        return;
    };
    let dir = s.cache_dir();
    let log_filter = Path::new("vkcl::compiler::cache=debug");
    let env = [("VKCL_CACHE_DIR", dir.as_path()), ("VKCL_LOG", log_filter)];
    let (cold, _) = s.child(&env);
    let cold = fingerprints(&cold);
    assert_eq!(cold.len(), 2, "{cold:?}");
    assert!(cold[0].contains("the cache test's warning"), "{}", cold[0]);
    assert!(cold[0].contains("names=poly;prefix8"), "{}", cold[0]);
    assert!(
        cold[0].contains("reqd_work_group_size(8,1,1)"),
        "{}",
        cold[0]
    );
    assert_eq!(s.clang_runs(), 2);
    let lowered = lowered_entries(&s);
    assert_eq!(
        lowered.len(),
        3,
        "the built program, the one from its binary and the linked one: {lowered:?}"
    );
    let good: Vec<Vec<u8>> = lowered.iter().map(|p| std::fs::read(p).unwrap()).collect();
    // Front-end entries of executables (their data is SPIR-V): a build served by its lowered
    // entry does not read them.
    let front: Vec<PathBuf> = s
        .entries()
        .into_iter()
        .filter(|p| entry_data(p).is_some_and(|d| d.starts_with(&0x0723_0203u32.to_le_bytes())))
        .collect();
    assert_eq!(front.len(), 2, "{front:?}");
    let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();

    // Warm: both programs come from their lowered entries, identical in every info, with the
    // host's results (checked in the child).
    let (warm, log) = s.child(&env);
    assert_eq!(fingerprints(&warm), cold);
    assert_eq!(s.clang_runs(), 2);
    for p in &lowered {
        assert!(log.contains(&name(p)), "{} was not read:\n{log}", name(p));
    }
    for p in &front {
        assert!(!log.contains(&name(p)), "{} was read:\n{log}", name(p));
    }

    // Entries that check out as files but whose data does not decode, or that hold another
    // program (rotated): refused, the programs rebuilt from the front-end entries or the
    // binary (no clang) with the same results, and the entries rewritten.
    let garbage = vkcl::util::cache_file::encode("", &[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 7]);
    std::fs::write(&lowered[0], &garbage).unwrap();
    std::fs::write(&lowered[1], &good[2]).unwrap();
    std::fs::write(&lowered[2], &good[1]).unwrap();
    let (fallback, log) = s.child(&env);
    assert_eq!(fingerprints(&fallback), cold);
    assert_eq!(s.clang_runs(), 2);
    for p in &front {
        assert!(log.contains(&name(p)), "{} was not read:\n{log}", name(p));
    }
    for (p, bytes) in lowered.iter().zip(&good) {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            bytes,
            "{} was not rewritten as a cold build writes it",
            name(p)
        );
    }
}
