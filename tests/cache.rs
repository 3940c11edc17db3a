//! The on-disk program cache: a second process building the same programs runs no clang, a
//! corrupt entry is rebuilt, `VKCL_CACHE=0` turns it off. Each build runs in a child process
//! (this test binary, running `child_builds`) with `VKCL_CACHE_DIR` pointing at a fresh
//! directory and `VKCL_CLANG` at a wrapper script that counts its invocations.
mod common;
use common::*;
use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

const BUILT: &str = "__kernel void poly(__global int *o, __global const int *i) {\n\
    size_t g = get_global_id(0); int x = i[g]; o[g] = x * x * 3 - 7 * x + (int)g; }\n";
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

    let p = e.build(BUILT);
    let want: Vec<i32> = x
        .iter()
        .enumerate()
        .map(|(g, &v)| v * v * 3 - 7 * v + g as i32)
        .collect();
    assert_eq!(run_kernel(&e, p, "poly", &x), want);

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

    /// Runs `child_builds` in a fresh process with `env`.
    fn child(&self, env: &[(&str, &Path)]) {
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
