//! A small, safe layer over the OpenCL entry points the benchmark needs, loaded at run time
//! from the ICD loader (`libOpenCL.so.1`) so that the binary builds without OpenCL installed.
//!
//! Objects release themselves on drop. Every call's error code comes back as [`ClError`],
//! naming the call.

use std::ffi::{c_char, c_void, CString};
use std::ptr;

type Int = i32;
type Uint = u32;
type Handle = *mut c_void;

/// An OpenCL error: the call and its code.
#[derive(Debug, Clone)]
pub struct ClError {
    /// The entry point.
    pub call: &'static str,
    /// Its `cl_int` result.
    pub code: i32,
    /// More (a build log).
    pub detail: String,
}

impl std::fmt::Display for ClError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} returned {}", self.call, self.code)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Result of an OpenCL call.
pub type ClResult<T> = Result<T, ClError>;

fn check(call: &'static str, code: Int) -> ClResult<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(ClError {
            call,
            code,
            detail: String::new(),
        })
    }
}

macro_rules! api {
    ($($name:ident : fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The entry points, resolved from the loader.
        #[allow(non_snake_case)]
        pub struct Api {
            _lib: libloading::Library,
            $($name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl Api {
            /// Opens `libOpenCL.so.1` and resolves every entry point.
            #[allow(non_snake_case)]
            pub fn load() -> Result<Api, String> {
                // SAFETY: loading the system ICD loader runs its initialisers, which only read
                // the environment and the vendors directory.
                let lib = unsafe { libloading::Library::new("libOpenCL.so.1") }
                    .map_err(|e| format!("cannot open libOpenCL.so.1: {e}"))?;
                $(
                    // SAFETY: the type is the OpenCL 1.2 prototype of this entry point.
                    let $name = unsafe {
                        *lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                        .map_err(|e| format!("{}: {e}", stringify!($name)))?
                    };
                )*
                Ok(Api { _lib: lib, $($name,)* })
            }
        }
    };
}

api! {
    clGetPlatformIDs: fn(Uint, *mut Handle, *mut Uint) -> Int;
    clGetPlatformInfo: fn(Handle, Uint, usize, *mut c_void, *mut usize) -> Int;
    clGetDeviceIDs: fn(Handle, u64, Uint, *mut Handle, *mut Uint) -> Int;
    clGetDeviceInfo: fn(Handle, Uint, usize, *mut c_void, *mut usize) -> Int;
    clCreateContext: fn(*const isize, Uint, *const Handle, *const c_void, *mut c_void, *mut Int) -> Handle;
    clReleaseContext: fn(Handle) -> Int;
    clCreateCommandQueue: fn(Handle, Handle, u64, *mut Int) -> Handle;
    clReleaseCommandQueue: fn(Handle) -> Int;
    clCreateBuffer: fn(Handle, u64, usize, *mut c_void, *mut Int) -> Handle;
    clReleaseMemObject: fn(Handle) -> Int;
    clEnqueueWriteBuffer: fn(Handle, Handle, Uint, usize, usize, *const c_void, Uint, *const Handle, *mut Handle) -> Int;
    clEnqueueReadBuffer: fn(Handle, Handle, Uint, usize, usize, *mut c_void, Uint, *const Handle, *mut Handle) -> Int;
    clCreateProgramWithSource: fn(Handle, Uint, *const *const c_char, *const usize, *mut Int) -> Handle;
    clBuildProgram: fn(Handle, Uint, *const Handle, *const c_char, *const c_void, *mut c_void) -> Int;
    clGetProgramBuildInfo: fn(Handle, Handle, Uint, usize, *mut c_void, *mut usize) -> Int;
    clReleaseProgram: fn(Handle) -> Int;
    clCreateKernel: fn(Handle, *const c_char, *mut Int) -> Handle;
    clReleaseKernel: fn(Handle) -> Int;
    clSetKernelArg: fn(Handle, Uint, usize, *const c_void) -> Int;
    clEnqueueNDRangeKernel: fn(Handle, Handle, Uint, *const usize, *const usize, *const usize, Uint, *const Handle, *mut Handle) -> Int;
    clFinish: fn(Handle) -> Int;
    clEnqueueMapBuffer: fn(Handle, Handle, Uint, u64, usize, usize, Uint, *const Handle, *mut Handle, *mut Int) -> *mut c_void;
    clEnqueueUnmapMemObject: fn(Handle, Handle, *mut c_void, Uint, *const Handle, *mut Handle) -> Int;
    clEnqueueCopyBuffer: fn(Handle, Handle, Handle, usize, usize, usize, Uint, *const Handle, *mut Handle) -> Int;
    clCreateImage: fn(Handle, u64, *const image::ImageFormat, *const image::ImageDesc, *mut c_void, *mut Int) -> Handle;
    clEnqueueWriteImage: fn(Handle, Handle, Uint, *const usize, *const usize, usize, usize, *const c_void, Uint, *const Handle, *mut Handle) -> Int;
    clEnqueueReadImage: fn(Handle, Handle, Uint, *const usize, *const usize, usize, usize, *mut c_void, Uint, *const Handle, *mut Handle) -> Int;
    clEnqueueCopyImage: fn(Handle, Handle, Handle, *const usize, *const usize, *const usize, Uint, *const Handle, *mut Handle) -> Int;
    clCreateSampler: fn(Handle, Uint, Uint, Uint, *mut Int) -> Handle;
    clReleaseSampler: fn(Handle) -> Int;
}

#[path = "cl_image.rs"]
mod image;
pub use image::{Image, Sampler};
/// The sampler constants the image workloads use (vkcl-difftest, which includes this file, has
/// none).
#[allow(unused_imports)]
pub mod image_consts {
    pub use super::image::{CLAMP_TO_EDGE, FILTER_LINEAR};
}

const CL_PLATFORM_NAME: Uint = 0x0902;
const CL_PLATFORM_VERSION: Uint = 0x0901;
const CL_DEVICE_TYPE_ALL: u64 = 0xFFFF_FFFF;
const CL_DEVICE_NAME: Uint = 0x102B;
const CL_DRIVER_VERSION: Uint = 0x102D;
const CL_DEVICE_TYPE: Uint = 0x1000;
const CL_PROGRAM_BUILD_LOG: Uint = 0x1183;
const CL_MEM_READ_WRITE: u64 = 1;

/// A platform and its first device.
#[derive(Clone, Copy)]
pub struct Platform {
    raw: Handle,
    device: Handle,
}

/// `CL_DEVICE_TYPE_CPU`.
pub const DEVICE_TYPE_CPU: u64 = 2;

impl Api {
    fn string_info(
        &self,
        call: &'static str,
        f: unsafe extern "C" fn(Handle, Uint, usize, *mut c_void, *mut usize) -> Int,
        h: Handle,
        param: Uint,
    ) -> ClResult<String> {
        let mut size = 0usize;
        // SAFETY: a size query with a null buffer.
        check(call, unsafe { f(h, param, 0, ptr::null_mut(), &mut size) })?;
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: buf holds `size` bytes.
        check(call, unsafe {
            f(
                h,
                param,
                buf.len(),
                buf.as_mut_ptr().cast(),
                ptr::null_mut(),
            )
        })?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    /// Every platform with at least one device.
    pub fn platforms(&self) -> ClResult<Vec<Platform>> {
        let mut n = 0u32;
        // SAFETY: count query.
        check("clGetPlatformIDs", unsafe {
            (self.clGetPlatformIDs)(0, ptr::null_mut(), &mut n)
        })?;
        let mut ids = vec![ptr::null_mut(); n as usize];
        // SAFETY: ids holds n handles.
        check("clGetPlatformIDs", unsafe {
            (self.clGetPlatformIDs)(n, ids.as_mut_ptr(), ptr::null_mut())
        })?;
        let mut out = Vec::new();
        for p in ids {
            let mut dev = ptr::null_mut();
            // SAFETY: room for one device handle.
            let r = unsafe {
                (self.clGetDeviceIDs)(p, CL_DEVICE_TYPE_ALL, 1, &mut dev, ptr::null_mut())
            };
            if r == 0 {
                out.push(Platform {
                    raw: p,
                    device: dev,
                });
            }
        }
        Ok(out)
    }

    /// The platform's name.
    pub fn platform_name(&self, p: Platform) -> ClResult<String> {
        self.string_info(
            "clGetPlatformInfo",
            self.clGetPlatformInfo,
            p.raw,
            CL_PLATFORM_NAME,
        )
    }

    /// The platform's version string.
    pub fn platform_version(&self, p: Platform) -> ClResult<String> {
        self.string_info(
            "clGetPlatformInfo",
            self.clGetPlatformInfo,
            p.raw,
            CL_PLATFORM_VERSION,
        )
    }

    /// The device's name.
    pub fn device_name(&self, p: Platform) -> ClResult<String> {
        self.string_info(
            "clGetDeviceInfo",
            self.clGetDeviceInfo,
            p.device,
            CL_DEVICE_NAME,
        )
    }

    /// The device's driver version (`CL_DRIVER_VERSION`; Mesa's version for rusticl).
    pub fn driver_version(&self, p: Platform) -> ClResult<String> {
        self.string_info(
            "clGetDeviceInfo",
            self.clGetDeviceInfo,
            p.device,
            CL_DRIVER_VERSION,
        )
    }

    /// The device's `CL_DEVICE_TYPE` bits.
    pub fn device_type(&self, p: Platform) -> ClResult<u64> {
        let mut t = 0u64;
        // SAFETY: CL_DEVICE_TYPE is a cl_bitfield (u64).
        check("clGetDeviceInfo", unsafe {
            (self.clGetDeviceInfo)(
                p.device,
                CL_DEVICE_TYPE,
                8,
                (&mut t as *mut u64).cast(),
                ptr::null_mut(),
            )
        })?;
        Ok(t)
    }

    /// A context and an in-order queue on the platform's device.
    pub fn session(&self, p: Platform) -> ClResult<Session<'_>> {
        let mut err = 0;
        // SAFETY: one valid device handle, no callback.
        let ctx = unsafe {
            (self.clCreateContext)(
                ptr::null(),
                1,
                &p.device,
                ptr::null(),
                ptr::null_mut(),
                &mut err,
            )
        };
        check("clCreateContext", err)?;
        let ctx = Context {
            api: self,
            raw: ctx,
        };
        // SAFETY: valid context and device.
        let q = unsafe { (self.clCreateCommandQueue)(ctx.raw, p.device, 0, &mut err) };
        check("clCreateCommandQueue", err)?;
        Ok(Session {
            api: self,
            device: p.device,
            queue: Queue { api: self, raw: q },
            ctx,
        })
    }
}

struct Context<'a> {
    api: &'a Api,
    raw: Handle,
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this reference.
        unsafe { (self.api.clReleaseContext)(self.raw) };
    }
}

/// A command queue (the session's own, or one more from [`Session::queue`]); finished and
/// released on drop.
pub struct Queue<'a> {
    api: &'a Api,
    raw: Handle,
}

impl Drop for Queue<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this reference; finish first so that nothing runs on freed objects.
        unsafe {
            (self.api.clFinish)(self.raw);
            (self.api.clReleaseCommandQueue)(self.raw)
        };
    }
}

/// A context with one queue. (Field order: the queue drops before the context.)
pub struct Session<'a> {
    api: &'a Api,
    device: Handle,
    queue: Queue<'a>,
    ctx: Context<'a>,
}

/// A buffer.
pub struct Buffer<'a> {
    api: &'a Api,
    raw: Handle,
    size: usize,
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this reference.
        unsafe { (self.api.clReleaseMemObject)(self.raw) };
    }
}

/// A built program.
pub struct Program<'a> {
    api: &'a Api,
    raw: Handle,
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this reference.
        unsafe { (self.api.clReleaseProgram)(self.raw) };
    }
}

/// A kernel.
pub struct Kernel<'a> {
    api: &'a Api,
    raw: Handle,
}

impl Drop for Kernel<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this reference.
        unsafe { (self.api.clReleaseKernel)(self.raw) };
    }
}

/// A kernel argument.
pub enum Arg<'b, 'a> {
    /// A buffer.
    Buf(&'b Buffer<'a>),
    /// A 32-bit scalar (int, uint or float bits).
    U32(u32),
    /// An image (`image2d_t`).
    Image(&'b Image<'a>),
    /// A sampler (`sampler_t`).
    Sampler(&'b Sampler<'a>),
}

impl<'a> Session<'a> {
    /// A read-write buffer of `size` bytes.
    pub fn buffer(&self, size: usize) -> ClResult<Buffer<'a>> {
        let mut err = 0;
        // SAFETY: no host pointer.
        let raw = unsafe {
            (self.api.clCreateBuffer)(
                self.ctx.raw,
                CL_MEM_READ_WRITE,
                size,
                ptr::null_mut(),
                &mut err,
            )
        };
        check("clCreateBuffer", err)?;
        Ok(Buffer {
            api: self.api,
            raw,
            size,
        })
    }

    /// Blocking write of `data` at offset 0.
    pub fn write<T: Copy>(&self, b: &Buffer<'a>, data: &[T]) -> ClResult<()> {
        let bytes = std::mem::size_of_val(data);
        assert!(bytes <= b.size, "write larger than the buffer");
        // SAFETY: blocking write from `bytes` readable bytes into a buffer at least that large.
        check("clEnqueueWriteBuffer", unsafe {
            (self.api.clEnqueueWriteBuffer)(
                self.queue.raw,
                b.raw,
                1,
                0,
                bytes,
                data.as_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// Blocking read into `data` from offset 0.
    pub fn read<T: Copy>(&self, b: &Buffer<'a>, data: &mut [T]) -> ClResult<()> {
        let bytes = std::mem::size_of_val(data);
        assert!(bytes <= b.size, "read larger than the buffer");
        // SAFETY: blocking read into `bytes` writable bytes.
        check("clEnqueueReadBuffer", unsafe {
            (self.api.clEnqueueReadBuffer)(
                self.queue.raw,
                b.raw,
                1,
                0,
                bytes,
                data.as_mut_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// Creates and builds a program from source; a failed build's log is in the error.
    pub fn program(&self, source: &str) -> ClResult<Program<'a>> {
        self.program_with_options(source, "")
    }

    /// As [`Session::program`], with build `options` (`-cl-std=CL3.0`...).
    pub fn program_with_options(&self, source: &str, options: &str) -> ClResult<Program<'a>> {
        let opts = CString::new(options).map_err(|_| ClError {
            call: "clBuildProgram",
            code: -43,
            detail: "options hold a NUL".into(),
        })?;
        let src = CString::new(source).map_err(|_| ClError {
            call: "clCreateProgramWithSource",
            code: -30,
            detail: "source holds a NUL".into(),
        })?;
        let mut err = 0;
        let p = src.as_ptr();
        // SAFETY: one NUL-terminated string.
        let raw = unsafe {
            (self.api.clCreateProgramWithSource)(self.ctx.raw, 1, &p, ptr::null(), &mut err)
        };
        check("clCreateProgramWithSource", err)?;
        let prog = Program { api: self.api, raw };
        // SAFETY: valid program and device, NUL-terminated options, synchronous build.
        let r = unsafe {
            (self.api.clBuildProgram)(
                raw,
                1,
                &self.device,
                opts.as_ptr(),
                ptr::null(),
                ptr::null_mut(),
            )
        };
        if r != 0 {
            let log = self
                .api
                .string_info_build(raw, self.device)
                .unwrap_or_default();
            return Err(ClError {
                call: "clBuildProgram",
                code: r,
                detail: log,
            });
        }
        Ok(prog)
    }

    /// A kernel of a built program, with its arguments set.
    pub fn kernel(
        &self,
        p: &Program<'a>,
        name: &str,
        args: &[Arg<'_, 'a>],
    ) -> ClResult<Kernel<'a>> {
        let cname = CString::new(name).map_err(|_| ClError {
            call: "clCreateKernel",
            code: -46,
            detail: "name holds a NUL".into(),
        })?;
        let mut err = 0;
        // SAFETY: valid program, NUL-terminated name.
        let raw = unsafe { (self.api.clCreateKernel)(p.raw, cname.as_ptr(), &mut err) };
        check("clCreateKernel", err)?;
        let k = Kernel { api: self.api, raw };
        for (i, a) in args.iter().enumerate() {
            let r = match a {
                // SAFETY: a 4-byte scalar by pointer.
                Arg::U32(v) => unsafe {
                    (self.api.clSetKernelArg)(raw, i as u32, 4, (v as *const u32).cast())
                },
                Arg::Buf(Buffer { raw: h, .. })
                | Arg::Image(Image { raw: h, .. })
                | Arg::Sampler(Sampler { raw: h, .. }) => unsafe {
                    // SAFETY: a cl_mem or cl_sampler handle by pointer, as the API wants.
                    (self.api.clSetKernelArg)(
                        raw,
                        i as u32,
                        std::mem::size_of::<Handle>(),
                        (h as *const Handle).cast(),
                    )
                },
            };
            check("clSetKernelArg", r)?;
        }
        Ok(k)
    }

    /// Enqueues a 1- or 2-dimensional NDRange (local size optional), without waiting.
    pub fn launch(
        &self,
        k: &Kernel<'a>,
        global: &[usize],
        local: Option<&[usize]>,
    ) -> ClResult<()> {
        self.launch_on(&self.queue, k, global, local)
    }

    /// Another queue on the session's device and context: in order, or out of order
    /// (`CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`) with `out_of_order`.
    pub fn queue(&self, out_of_order: bool) -> ClResult<Queue<'a>> {
        let mut err = 0;
        // SAFETY: valid context and device.
        let raw = unsafe {
            (self.api.clCreateCommandQueue)(
                self.ctx.raw,
                self.device,
                out_of_order as u64,
                &mut err,
            )
        };
        check("clCreateCommandQueue", err)?;
        Ok(Queue { api: self.api, raw })
    }

    /// As [`Session::launch`], on queue `q` of this session.
    pub fn launch_on(
        &self,
        q: &Queue<'a>,
        k: &Kernel<'a>,
        global: &[usize],
        local: Option<&[usize]>,
    ) -> ClResult<()> {
        let local_ptr = local.map_or(ptr::null(), |l| l.as_ptr());
        // SAFETY: global (and local) hold work_dim sizes; no events.
        check("clEnqueueNDRangeKernel", unsafe {
            (self.api.clEnqueueNDRangeKernel)(
                q.raw,
                k.raw,
                global.len() as u32,
                ptr::null(),
                global.as_ptr(),
                local_ptr,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// Blocking clEnqueueMapBuffer of the first `bytes` of `b` with `flags`
    /// (`CL_MAP_READ` = 1, `CL_MAP_WRITE` = 2, `CL_MAP_WRITE_INVALIDATE_REGION` = 4); the
    /// pointer stays valid until [`Session::unmap`].
    pub fn map(&self, b: &Buffer<'a>, flags: u64, bytes: usize) -> ClResult<*mut u8> {
        assert!(bytes <= b.size, "map larger than the buffer");
        let mut err = 0;
        // SAFETY: blocking map of a region inside the buffer.
        let p = unsafe {
            (self.api.clEnqueueMapBuffer)(
                self.queue.raw,
                b.raw,
                1,
                flags,
                0,
                bytes,
                0,
                ptr::null(),
                ptr::null_mut(),
                &mut err,
            )
        };
        check("clEnqueueMapBuffer", err)?;
        Ok(p.cast())
    }

    /// clEnqueueUnmapMemObject of a pointer [`Session::map`] returned for `b`.
    pub fn unmap(&self, b: &Buffer<'a>, p: *mut u8) -> ClResult<()> {
        // SAFETY: a live map of this buffer.
        check("clEnqueueUnmapMemObject", unsafe {
            (self.api.clEnqueueUnmapMemObject)(
                self.queue.raw,
                b.raw,
                p.cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// Enqueues `clEnqueueCopyBuffer` of `bytes` from the start of `src` to the start of
    /// `dst`, without waiting.
    pub fn copy_buffer(&self, src: &Buffer<'a>, dst: &Buffer<'a>, bytes: usize) -> ClResult<()> {
        // SAFETY: both buffers hold `bytes`; no events.
        check("clEnqueueCopyBuffer", unsafe {
            (self.api.clEnqueueCopyBuffer)(
                self.queue.raw,
                src.raw,
                dst.raw,
                0,
                0,
                bytes,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// Waits for everything enqueued.
    pub fn finish(&self) -> ClResult<()> {
        self.finish_on(&self.queue)
    }

    /// Waits for everything enqueued on queue `q` of this session.
    pub fn finish_on(&self, q: &Queue<'a>) -> ClResult<()> {
        // SAFETY: valid queue.
        check("clFinish", unsafe { (self.api.clFinish)(q.raw) })
    }
}

impl Api {
    fn string_info_build(&self, prog: Handle, dev: Handle) -> ClResult<String> {
        let mut size = 0usize;
        // SAFETY: size query.
        check("clGetProgramBuildInfo", unsafe {
            (self.clGetProgramBuildInfo)(
                prog,
                dev,
                CL_PROGRAM_BUILD_LOG,
                0,
                ptr::null_mut(),
                &mut size,
            )
        })?;
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: buf holds size bytes.
        check("clGetProgramBuildInfo", unsafe {
            (self.clGetProgramBuildInfo)(
                prog,
                dev,
                CL_PROGRAM_BUILD_LOG,
                buf.len(),
                buf.as_mut_ptr().cast(),
                ptr::null_mut(),
            )
        })?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }
}
