//! Shared test harness: loads the system OpenCL ICD loader (libOpenCL.so.1) with
//! `OCL_ICD_VENDORS` naming only the freshly built libvkcl.so, and the Khronos validation layer
//! on (`VKCL_VALIDATION=fatal`: a validation error aborts the test process), on the Vulkan
//! driver that `VKCL_VULKAN_DRIVER` names (lavapipe 25.0.7 from the build tree by default;
//! [`vulkan_driver`]).
#![allow(dead_code)]

pub mod kernels;
pub mod vulkan_driver;

pub use opencl_sys::*;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

/// The built libvkcl.so next to the test binary's directory (target/<profile>/).
pub fn vkcl_library() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    dir.join("libvkcl.so")
}

/// `VKCL_TEST_OPENCL_LIBRARY`: an OpenCL ICD library that the tests load instead of the built
/// libvkcl.so, for running them through a forwarding implementation whose far end is vkcl
/// (PoCL-Remote's client library with pocld serving vkcl: docs/remote.md). Unset: vkcl.
pub const TEST_LIBRARY_VARIABLE: &str = "VKCL_TEST_OPENCL_LIBRARY";

/// A directory holding only vkcl.icd, for OCL_ICD_VENDORS; it names the library of
/// [`TEST_LIBRARY_VARIABLE`] where that is set.
pub fn icd_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("vkcl-test-icd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        if let Some(other) = std::env::var_os(TEST_LIBRARY_VARIABLE) {
            let other = PathBuf::from(other);
            assert!(
                other.exists(),
                "{TEST_LIBRARY_VARIABLE}={} does not exist",
                other.display()
            );
            std::fs::write(dir.join("vkcl.icd"), format!("{}\n", other.display())).unwrap();
            return dir;
        }
        let lib = vkcl_library();
        assert!(
            lib.exists(),
            "{} not built: run `cargo build` before `cargo test`",
            lib.display()
        );
        // cargo test does not relink the cdylib: refuse to test one older than the sources.
        let modified =
            |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).unwrap();
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let newest = newest_file(&src).unwrap_or(std::time::SystemTime::UNIX_EPOCH);
        assert!(
            modified(&lib) >= newest,
            "{} is older than the sources: run `cargo build` before `cargo test`",
            lib.display()
        );
        std::fs::write(dir.join("vkcl.icd"), format!("{}\n", lib.display())).unwrap();
        dir
    })
    .clone()
}

fn newest_file(dir: &std::path::Path) -> Option<std::time::SystemTime> {
    let mut newest = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let t = if e.path().is_dir() {
            newest_file(&e.path())
        } else {
            e.metadata().ok()?.modified().ok()
        };
        newest = newest.max(t);
    }
    newest
}

/// The Vulkan driver these tests run on (`VKCL_VULKAN_DRIVER`, resolved against the build
/// tree's `target/`); panics with the reason when the named driver is not there.
pub fn vulkan_driver() -> &'static vulkan_driver::Driver {
    static DRIVER: OnceLock<vulkan_driver::Driver> = OnceLock::new();
    DRIVER.get_or_init(|| {
        let lib = vkcl_library();
        let target = lib.parent().and_then(|d| d.parent()).expect("target dir");
        vulkan_driver::from_env(target).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Points the Vulkan loader at [`vulkan_driver`] before it is loaded: `VK_DRIVER_FILES`, and
/// the driver's own libraries (libdrm of the build tree's lavapipe) opened first, since
/// `LD_LIBRARY_PATH` set now would not reach the dynamic linker (it reads it at start-up); a
/// library already loaded satisfies a later dependency on its soname.
fn use_vulkan_driver() {
    use std::io::Write;
    let driver = vulkan_driver();
    let mut line = format!("vkcl tests: Vulkan driver {}", driver.name);
    if let Some(m) = &driver.manifest {
        line += &format!(" ({})", m.display());
    }
    if let Some(w) = &driver.warning {
        line = format!("\n!!!!!!!! {line}\n!!!!!!!! WARNING: {w}\n");
    }
    // Straight to the process's stderr, past the test harness's output capture.
    let _ = writeln!(std::io::stderr(), "{line}");
    // Also for the processes tests start (clinfo, this binary again): they resolve the same.
    // SAFETY: set before any thread of this process reads the environment (first use).
    unsafe {
        for (k, v) in driver.env() {
            std::env::set_var(&k, &v);
        }
        if driver.manifest.is_some() {
            std::env::remove_var("VK_ICD_FILENAMES");
        }
        std::env::set_var(vulkan_driver::VARIABLE, &driver.name);
    }
    static PRELOADED: OnceLock<Vec<libloading::Library>> = OnceLock::new();
    PRELOADED.get_or_init(|| {
        let Some(dir) = &driver.library_dir else {
            return Vec::new();
        };
        ["libdrm.so.2"]
            .iter()
            .map(|name| {
                // SAFETY: a plain C library without initialisers that touch this process.
                unsafe { libloading::Library::new(dir.join(name)) }
                    .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()))
            })
            .collect()
    });
}

/// The loader, opened once with the environment set up.
pub fn loader() -> &'static libloading::Library {
    static LIB: OnceLock<libloading::Library> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = icd_dir();
        use_vulkan_driver();
        // SAFETY: set before any thread of this process reads the environment (first use).
        unsafe {
            std::env::set_var("OCL_ICD_VENDORS", &dir);
            if std::env::var_os("VKCL_VALIDATION").is_none() {
                std::env::set_var("VKCL_VALIDATION", "fatal");
            }
        }
        // SAFETY: loading the system ICD loader.
        unsafe { libloading::Library::new("libOpenCL.so.1") }
            .expect("libOpenCL.so.1 (ocl-icd-libopencl1)")
    })
}

/// `cl!(clGetPlatformIDs)` is the loader's function with the type of opencl-sys's
/// `clGetPlatformIDs_t`.
#[macro_export]
macro_rules! cl {
    ($name:ident) => {
        paste::paste! {{
            // SAFETY: the symbol has the C signature of the OpenCL header.
            #[allow(unused_unsafe)]
            let f: libloading::Symbol<opencl_sys::cl_function_types::[<$name _t>]> =
                unsafe { $crate::common::loader().get(concat!(stringify!($name), "\0").as_bytes()) }
                    .expect(stringify!($name));
            (*f).expect(stringify!($name))
        }}
    };
}

/// The extension function `name` of vkcl's platform, typed as opencl-sys's `<name>_t`.
#[macro_export]
macro_rules! ext {
    ($name:ident) => {
        paste::paste! {{
            #[allow(unused_unsafe)]
            let p = unsafe {
                cl!(clGetExtensionFunctionAddressForPlatform)(
                    platform(),
                    concat!(stringify!($name), "\0").as_ptr() as *const std::ffi::c_char,
                )
            };
            assert!(!p.is_null(), concat!(stringify!($name), " not found"));
            // SAFETY: vkcl's function of that name has the 0.9.8 signature of opencl-sys.
            #[allow(unused_unsafe)]
            let f: [<$name _t>] = unsafe { std::mem::transmute::<*mut std::ffi::c_void, [<$name _t>]>(p) };
            f.unwrap()
        }}
    };
}

/// A `cl_mutable_dispatch_config_khr` for mutable command `h` that changes nothing (fill in
/// the fields to update, with `..dispatch_config(h)` for the rest).
#[allow(dead_code)]
pub fn dispatch_config(h: cl_mutable_command_khr) -> cl_mutable_dispatch_config_khr {
    cl_mutable_dispatch_config_khr {
        command: h,
        num_args: 0,
        num_svm_args: 0,
        num_exec_infos: 0,
        work_dim: 0,
        arg_list: null(),
        arg_svm_list: null(),
        exec_info_list: null(),
        global_work_offset: null(),
        global_work_size: null(),
        local_work_size: null(),
    }
}

/// clUpdateMutableCommandsKHR of `cb` with one dispatch config.
#[allow(dead_code)]
pub fn update_one(cb: cl_command_buffer_khr, config: &cl_mutable_dispatch_config_khr) -> cl_int {
    let ty = CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR;
    let mut p = config as *const _ as *const c_void;
    unsafe { ext!(clUpdateMutableCommandsKHR)(cb, 1, &ty, &mut p) }
}

/// The results among `got` (function j of input i at `j * inputs.len() + i`) whose bits are
/// not those of the input, a signed zero (odd functions keep the sign of zero: C99 Annex F,
/// OpenCL C 3.0 section 7.5.1), each as `f(x) = result`.
#[allow(dead_code)]
pub fn signed_zero_errors<T: Copy + std::fmt::Debug>(
    names: &[&str],
    inputs: &[T],
    got: &[T],
    bits: impl Fn(T) -> u64,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (j, f) in names.iter().enumerate() {
        for (i, &z) in inputs.iter().enumerate() {
            let g = got[j * inputs.len() + i];
            if bits(g) != bits(z) {
                wrong.push(format!("{f}({z:?}) = {g:?}"));
            }
        }
    }
    wrong
}

/// vkcl's debug counters (`vkcl_debug_stats`, api/command_buffer.rs): [vkQueueSubmit calls,
/// device commands recorded, secondaries executed, pipeline barriers finalize put into
/// secondaries, staging buffers allocated from Vulkan, buffer copies made by the copy shader],
/// since the library was loaded.
#[allow(dead_code)]
pub fn debug_stats() -> [u64; 6] {
    static LIB: std::sync::OnceLock<libloading::Library> = std::sync::OnceLock::new();
    loader();
    // SAFETY: the same libvkcl.so the loader opened (dlopen returns the loaded instance).
    let lib = LIB.get_or_init(|| unsafe { libloading::Library::new(vkcl_library()) }.unwrap());
    // SAFETY: the symbol's signature is `usize vkcl_debug_stats(u64 *out, usize n)`.
    let f: libloading::Symbol<unsafe extern "C" fn(*mut u64, usize) -> usize> =
        unsafe { lib.get(b"vkcl_debug_stats\0") }.unwrap();
    let mut out = [0u64; 6];
    assert!(unsafe { f(out.as_mut_ptr(), 6) } >= 6);
    out
}

/// Panics with the error name unless `code` is CL_SUCCESS.
#[track_caller]
pub fn ok(code: cl_int) {
    assert_eq!(code, CL_SUCCESS, "expected CL_SUCCESS, got {code}");
}

/// vkcl's platform.
pub fn platform() -> cl_platform_id {
    let mut p = null_mut();
    let mut n = 0;
    ok(unsafe { cl!(clGetPlatformIDs)(1, &mut p, &mut n) });
    assert_eq!(n, 1, "exactly one platform (vkcl) behind OCL_ICD_VENDORS");
    p
}

/// The default device.
/// Whether the default device reports `CL_FP_DENORM` in `CL_DEVICE_SINGLE_FP_CONFIG`: without
/// it, a kernel may flush single-precision subnormal inputs and results to zero (OpenCL C 3.0
/// section 7.5.3; NVIDIA's Vulkan driver does, having no fp32 denorm-preserve mode).
#[allow(dead_code)]
pub fn single_fp_denorm() -> bool {
    let c: cl_device_fp_config = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(device(), CL_DEVICE_SINGLE_FP_CONFIG, s, v, r)
    });
    c & CL_FP_DENORM != 0
}

/// `x` as a device that flushes subnormals sees it: ±0 for a subnormal, else `x`.
#[allow(dead_code)]
pub fn flushed(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

pub fn device() -> cl_device_id {
    let mut d = null_mut();
    ok(unsafe { cl!(clGetDeviceIDs)(platform(), CL_DEVICE_TYPE_DEFAULT, 1, &mut d, null_mut()) });
    d
}

/// A context and an in-order queue on the default device, released on drop.
pub struct Env {
    pub platform: cl_platform_id,
    pub device: cl_device_id,
    pub context: cl_context,
    pub queue: cl_command_queue,
}

impl Env {
    pub fn new() -> Env {
        Env::with_queue_properties(0)
    }

    pub fn with_queue_properties(props: cl_command_queue_properties) -> Env {
        let platform = platform();
        let device = device();
        let mut err = 0;
        let context =
            unsafe { cl!(clCreateContext)(null(), 1, &device, None, null_mut(), &mut err) };
        ok(err);
        let p = [CL_QUEUE_PROPERTIES as cl_queue_properties, props, 0];
        let queue = unsafe {
            cl!(clCreateCommandQueueWithProperties)(context, device, p.as_ptr(), &mut err)
        };
        ok(err);
        Env {
            platform,
            device,
            context,
            queue,
        }
    }

    /// A buffer of `size` bytes with `flags`, initialised from `data` if given.
    pub fn buffer(&self, flags: cl_mem_flags, size: usize, data: Option<&[u8]>) -> cl_mem {
        let mut err = 0;
        let (flags, ptr) = match data {
            Some(d) => (flags | CL_MEM_COPY_HOST_PTR, d.as_ptr() as *mut c_void),
            None => (flags, null_mut()),
        };
        let m = unsafe { cl!(clCreateBuffer)(self.context, flags, size, ptr, &mut err) };
        ok(err);
        m
    }

    /// Reads `n` elements of T from `mem` (blocking).
    pub fn read<T: Copy + Default>(&self, mem: cl_mem, n: usize) -> Vec<T> {
        let mut v = vec![T::default(); n];
        ok(unsafe {
            cl!(clEnqueueReadBuffer)(
                self.queue,
                mem,
                CL_TRUE,
                0,
                n * std::mem::size_of::<T>(),
                v.as_mut_ptr() as *mut c_void,
                0,
                null(),
                null_mut(),
            )
        });
        v
    }

    /// Builds `source` with `options`; on failure returns the error and the build log.
    pub fn try_build(&self, source: &str, options: &str) -> Result<cl_program, (cl_int, String)> {
        let mut err = 0;
        let src = CString::new(source).unwrap();
        let ptrs = [src.as_ptr()];
        let p = unsafe {
            cl!(clCreateProgramWithSource)(
                self.context,
                1,
                ptrs.as_ptr() as *mut _,
                null(),
                &mut err,
            )
        };
        ok(err);
        let opts = CString::new(options).unwrap();
        let r = unsafe { cl!(clBuildProgram)(p, 1, &self.device, opts.as_ptr(), None, null_mut()) };
        if r != CL_SUCCESS {
            return Err((r, build_log(p, self.device)));
        }
        Ok(p)
    }

    /// Builds `source` or panics with the log.
    pub fn build(&self, source: &str) -> cl_program {
        self.try_build(source, "")
            .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"))
    }

    /// A kernel of a built program.
    pub fn kernel(&self, program: cl_program, name: &str) -> cl_kernel {
        let mut err = 0;
        let n = CString::new(name).unwrap();
        let k = unsafe { cl!(clCreateKernel)(program, n.as_ptr(), &mut err) };
        ok(err);
        k
    }

    /// Whether the device lists `name` in `CL_DEVICE_EXTENSIONS`.
    pub fn has_extension(&self, name: &str) -> bool {
        let exts = info_string(|s, v, r| unsafe {
            cl!(clGetDeviceInfo)(self.device, CL_DEVICE_EXTENSIONS, s, v, r)
        });
        exts.split(' ').any(|e| e == name)
    }

    /// clFinish on the queue.
    pub fn finish(&self) {
        ok(unsafe { cl!(clFinish)(self.queue) });
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        unsafe {
            cl!(clFinish)(self.queue);
            cl!(clReleaseCommandQueue)(self.queue);
            cl!(clReleaseContext)(self.context);
        }
    }
}

/// A program's build log for `device`.
pub fn build_log(p: cl_program, device: cl_device_id) -> String {
    let mut n = 0;
    unsafe { cl!(clGetProgramBuildInfo)(p, device, CL_PROGRAM_BUILD_LOG, 0, null_mut(), &mut n) };
    let mut buf = vec![0u8; n];
    unsafe {
        cl!(clGetProgramBuildInfo)(
            p,
            device,
            CL_PROGRAM_BUILD_LOG,
            n,
            buf.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    };
    String::from_utf8_lossy(&buf)
        .trim_end_matches('\0')
        .to_string()
}

/// Sets kernel argument `i` to the bytes of `v`.
pub fn set_arg<T>(k: cl_kernel, i: u32, v: &T) {
    ok(unsafe {
        cl!(clSetKernelArg)(
            k,
            i,
            std::mem::size_of::<T>(),
            v as *const T as *const c_void,
        )
    });
}

/// A string-valued info query through a generic getter.
pub fn info_string(get: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> String {
    let mut n = 0;
    ok(get(0, null_mut(), &mut n));
    let mut buf = vec![0u8; n];
    ok(get(n, buf.as_mut_ptr() as *mut c_void, null_mut()));
    assert_eq!(buf.last(), Some(&0), "strings are NUL-terminated");
    String::from_utf8_lossy(&buf[..n - 1]).into_owned()
}

/// A scalar-valued info query.
pub fn info_scalar<T: Copy + Default>(get: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> T {
    let mut v = T::default();
    let mut n = 0;
    ok(get(
        std::mem::size_of::<T>(),
        &mut v as *mut T as *mut c_void,
        &mut n,
    ));
    assert_eq!(n, std::mem::size_of::<T>());
    v
}

/// A small deterministic pseudo-random generator for test data (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
}

/// `CL_DEVICE_MAX_COMPUTE_UNITS`.
#[allow(dead_code)]
pub fn units(d: cl_device_id) -> u32 {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, CL_DEVICE_MAX_COMPUTE_UNITS, s, v, r) })
}

/// A device query answered with a list of partition properties.
#[allow(dead_code)]
pub fn props_info(d: cl_device_id, name: cl_device_info) -> Vec<cl_device_partition_property> {
    type Prop = cl_device_partition_property;
    let mut n = 0;
    ok(unsafe { cl!(clGetDeviceInfo)(d, name, 0, null_mut(), &mut n) });
    assert_eq!(n % std::mem::size_of::<Prop>(), 0);
    let mut v = vec![0 as Prop; n / std::mem::size_of::<Prop>()];
    ok(unsafe { cl!(clGetDeviceInfo)(d, name, n, v.as_mut_ptr() as *mut c_void, null_mut()) });
    v
}

/// clCreateSubDevices: the count alone, then the devices.
#[allow(dead_code)]
pub fn split(
    d: cl_device_id,
    props: &[cl_device_partition_property],
) -> Result<Vec<cl_device_id>, cl_int> {
    let mut n = 0;
    let r = unsafe { cl!(clCreateSubDevices)(d, props.as_ptr(), 0, null_mut(), &mut n) };
    if r != CL_SUCCESS {
        return Err(r);
    }
    let mut out = vec![null_mut(); n as usize];
    let mut n2 = 0;
    ok(unsafe { cl!(clCreateSubDevices)(d, props.as_ptr(), n, out.as_mut_ptr(), &mut n2) });
    assert_eq!(n, n2);
    Ok(out)
}

/// clReleaseDevice of each.
#[allow(dead_code)]
pub fn release_all(ds: &[cl_device_id]) {
    for &d in ds {
        ok(unsafe { cl!(clReleaseDevice)(d) });
    }
}

// Kernel-running shorthands (buffers from slices, build-and-create, enqueue-and-wait).

/// The bytes of a slice of plain values.
pub fn bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is a plain Copy value type without padding in every use here; the slice is
    // only read.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

impl Env {
    /// A read-write buffer holding `data`.
    pub fn buf<T: Copy>(&self, data: &[T]) -> cl_mem {
        self.buffer(
            CL_MEM_READ_WRITE,
            std::mem::size_of_val(data).max(1),
            Some(bytes(data)),
        )
    }

    /// A zero-filled read-write buffer of `n` elements of T.
    pub fn zeros<T: Copy + Default>(&self, n: usize) -> cl_mem {
        self.buf(&vec![T::default(); n])
    }

    /// Builds `source` and creates kernel `name`.
    pub fn kern(&self, source: &str, name: &str) -> cl_kernel {
        let p = self.build(source);
        self.kernel(p, name)
    }

    /// Builds `source` with `options` and creates kernel `name`.
    pub fn kern_opts(&self, source: &str, options: &str, name: &str) -> cl_kernel {
        let p = self
            .try_build(source, options)
            .unwrap_or_else(|(e, log)| panic!("build failed ({e}):\n{log}"));
        self.kernel(p, name)
    }

    /// Enqueues `k` and waits; returns the enqueue status.
    pub fn try_run(
        &self,
        k: cl_kernel,
        global: &[usize],
        local: Option<&[usize]>,
        offset: Option<&[usize]>,
    ) -> cl_int {
        let r = unsafe {
            cl!(clEnqueueNDRangeKernel)(
                self.queue,
                k,
                global.len() as cl_uint,
                offset.map_or(null(), |o| o.as_ptr()),
                global.as_ptr(),
                local.map_or(null(), |l| l.as_ptr()),
                0,
                null(),
                null_mut(),
            )
        };
        if r == CL_SUCCESS {
            self.finish();
        }
        r
    }

    /// Enqueues `k` and waits, panicking on failure.
    #[track_caller]
    pub fn run(
        &self,
        k: cl_kernel,
        global: &[usize],
        local: Option<&[usize]>,
        offset: Option<&[usize]>,
    ) {
        ok(self.try_run(k, global, local, offset));
    }
}

/// Sets argument `i` of `k` to buffer `m`.
pub fn arg_mem(k: cl_kernel, i: u32, m: cl_mem) {
    set_arg(k, i, &m);
}

/// Sets `__local` argument `i` of `k` to `bytes` bytes.
pub fn arg_local(k: cl_kernel, i: u32, bytes: usize) {
    ok(unsafe { cl!(clSetKernelArg)(k, i, bytes, null()) });
}

/// The program's binary for its one device (`CL_PROGRAM_BINARIES`).
pub fn binary_of(p: cl_program) -> Vec<u8> {
    let size: usize = info_scalar(|s, v, r| unsafe {
        cl!(clGetProgramInfo)(p, CL_PROGRAM_BINARY_SIZES, s, v, r)
    });
    let mut bin = vec![0u8; size];
    let mut ptrs = [bin.as_mut_ptr()];
    ok(unsafe {
        cl!(clGetProgramInfo)(
            p,
            CL_PROGRAM_BINARIES,
            std::mem::size_of_val(&ptrs),
            ptrs.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    bin
}

/// clCreateProgramWithBinary of `bin` for the env's device: (program, error, binary status).
pub fn from_binary(e: &Env, bin: &[u8]) -> (cl_program, cl_int, cl_int) {
    let mut err = 0;
    let mut status = 0;
    let lens = [bin.len()];
    let bins = [bin.as_ptr()];
    let p = unsafe {
        cl!(clCreateProgramWithBinary)(
            e.context,
            1,
            &e.device,
            lens.as_ptr(),
            bins.as_ptr() as *mut _,
            &mut status,
            &mut err,
        )
    };
    (p, err, status)
}

/// Enqueues command buffer `cb` on its own queue with an event and waits for it:
/// (clWaitForEvents' result, the event's execution status).
pub fn run_command_buffer(cb: cl_command_buffer_khr) -> (cl_int, cl_int) {
    let mut ev: cl_event = null_mut();
    ok(unsafe { ext!(clEnqueueCommandBufferKHR)(0, null_mut(), cb, 0, null(), &mut ev) });
    let waited = unsafe { cl!(clWaitForEvents)(1, &ev) };
    let status: cl_int = info_scalar(|n, p, r| unsafe {
        cl!(clGetEventInfo)(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, n, p, r)
    });
    unsafe { cl!(clReleaseEvent)(ev) };
    (waited, status)
}

// After the macros above, which it uses.
pub mod images;
pub mod spirv;
