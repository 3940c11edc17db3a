//! The CUDA back end: NVIDIA's driver library (`libcuda.so.1`) loaded at run time through
//! cudarc's dynamic loading, for sub-devices that are CUDA green contexts (real SM partitions).
//! The only module that names `cudarc`.
//!
//! Inert and silent where it cannot work: [`Cuda::get`] is `None` when `VKCL_CUDA=0`, when no
//! driver library loads, when it lacks a function vkcl calls (green contexts need a 12.4 or
//! newer driver) or when `cuInit` fails; nothing is printed then (a `tracing` debug line only).
//! A Vulkan physical device is matched to its CUDA device by UUID
//! (`VkPhysicalDeviceIDProperties::deviceUUID` = `cuDeviceGetUuid_v2`).

pub mod exec;
pub mod green;
pub mod launch;

use cudarc::driver::sys;
use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

pub use green::{
    sm_count_of, DeviceMemory, Event, Graph, GreenContext, Module, SmResource, SplitMethod,
    SplitRequest, Stream,
};

/// A failed driver call: the `CUresult` and the function's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuError {
    /// The driver's status.
    pub code: sys::CUresult,
    /// The driver function that returned it.
    pub call: &'static str,
}

impl std::fmt::Display for CuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: the library is loaded (a CuError exists only after Cuda::get succeeded);
        // cuGetErrorString writes a static string or leaves the pointer NULL.
        unsafe { sys::cuGetErrorString(self.code, &mut s) };
        let msg = if s.is_null() {
            format!("{:?}", self.code)
        } else {
            // SAFETY: a NUL-terminated static string from the driver.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        write!(f, "{} failed: {msg}", self.call)
    }
}

/// Turns a driver status into a `Result`, naming the call.
pub(crate) fn check(code: sys::CUresult, call: &'static str) -> Result<(), CuError> {
    if code == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CuError { code, call })
    }
}

/// Every driver function vkcl calls: all must be present before any is called (cudarc's
/// dynamic loading panics on a missing one).
const REQUIRED: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetUuid_v2",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuCtxSetCurrent",
    "cuGetErrorString",
    "cuDeviceGetDevResource",
    "cuDevSmResourceSplitByCount",
    "cuDevResourceGenerateDesc",
    "cuGreenCtxCreate",
    "cuGreenCtxDestroy",
    "cuGreenCtxGetDevResource",
    "cuGreenCtxStreamCreate",
    "cuCtxFromGreenCtx",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamQuery",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyHtoD_v2",
    "cuMemsetD8_v2",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuImportExternalMemory",
    "cuExternalMemoryGetMappedBuffer",
    "cuDestroyExternalMemory",
    "cuImportExternalSemaphore",
    "cuDestroyExternalSemaphore",
    "cuWaitExternalSemaphoresAsync",
    "cuSignalExternalSemaphoresAsync",
    "cuStreamCreate",
    "cuStreamWaitEvent",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8Async",
    "cuMemsetD16Async",
    "cuMemsetD32Async",
    "cuLaunchHostFunc",
    "cuStreamBeginCapture_v2",
    "cuStreamEndCapture",
    "cuGraphInstantiateWithFlags",
    "cuGraphLaunch",
    "cuGraphExecDestroy",
    "cuGraphDestroy",
];

/// A CUDA device as vkcl sees it.
#[derive(Debug)]
pub struct CudaDevice {
    /// The driver's handle (`CUdevice`, an ordinal).
    pub raw: sys::CUdevice,
    /// `cuDeviceGetName`.
    pub name: String,
    /// `cuDeviceGetUuid_v2`: equals Vulkan's `deviceUUID` for the same GPU.
    pub uuid: [u8; 16],
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`: the device's SMs.
    pub sm_count: u32,
    /// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`: the peak SM clock in kHz; 0 where the driver does
    /// not say.
    pub clock_khz: u32,
    /// `CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE`: the L2 cache in bytes; 0 where the driver does
    /// not say.
    pub l2_bytes: u32,
    /// The primary context, retained for the process's life (kernels outside green contexts,
    /// and the context current while green contexts are made).
    pub primary: sys::CUcontext,
}

// SAFETY: CUdevice is an ordinal and CUcontext a driver handle usable from any thread.
unsafe impl Send for CudaDevice {}
// SAFETY: as above; vkcl never mutates a CudaDevice after the probe.
unsafe impl Sync for CudaDevice {}

/// The loaded driver and its devices.
#[derive(Debug)]
pub struct Cuda {
    /// `cuDriverGetVersion`: 1000 x major + 10 x minor (13000 for CUDA 13.0).
    pub driver_version: i32,
    /// The CUDA devices, in ordinal order.
    pub devices: Vec<CudaDevice>,
}

impl Cuda {
    /// The process-wide CUDA driver, probed at first use; `None` when the path is off
    /// (`VKCL_CUDA=0`) or unavailable (no driver library, a function missing, `cuInit` failed).
    pub fn get() -> Option<&'static Cuda> {
        static CUDA: OnceLock<Option<Cuda>> = OnceLock::new();
        CUDA.get_or_init(|| {
            if !crate::util::config::config().cuda {
                tracing::debug!("CUDA path off (VKCL_CUDA=0)");
                return None;
            }
            match Cuda::probe() {
                Ok(c) => Some(c),
                Err(why) => {
                    tracing::debug!("CUDA path unavailable: {why}");
                    None
                }
            }
        })
        .as_ref()
    }

    fn probe() -> Result<Cuda, String> {
        // SAFETY: tries to dlopen the driver library by its usual names; no symbol is called.
        if !unsafe { sys::is_culib_present() } {
            return Err("no libcuda".into());
        }
        // SAFETY: the library is present (checked above), so culib() does not panic.
        let lib = unsafe { sys::culib() };
        for name in REQUIRED {
            // SAFETY: a symbol lookup only; the pointer is not called here.
            if unsafe { lib.get::<*const ()>(name.as_bytes()) }.is_err() {
                return Err(format!(
                    "libcuda lacks {name} (driver older than CUDA 12.4?)"
                ));
            }
        }
        // SAFETY: every function called below was found above; outputs are valid locals.
        unsafe {
            check(sys::cuInit(0), "cuInit").map_err(|e| e.to_string())?;
            let mut version = 0;
            check(sys::cuDriverGetVersion(&mut version), "cuDriverGetVersion")
                .map_err(|e| e.to_string())?;
            let mut count = 0;
            check(sys::cuDeviceGetCount(&mut count), "cuDeviceGetCount")
                .map_err(|e| e.to_string())?;
            let mut devices = Vec::new();
            for i in 0..count {
                match CudaDevice::probe(i) {
                    Ok(d) => devices.push(d),
                    Err(e) => tracing::debug!("CUDA device {i} skipped: {e}"),
                }
            }
            tracing::debug!("CUDA driver {version}, {} device(s)", devices.len());
            Ok(Cuda {
                driver_version: version,
                devices,
            })
        }
    }

    /// The CUDA device whose UUID is `uuid` (Vulkan's `deviceUUID`), if any.
    pub fn device_by_uuid(&self, uuid: &[u8; 16]) -> Option<&CudaDevice> {
        self.devices.iter().find(|d| &d.uuid == uuid)
    }
}

impl CudaDevice {
    /// Reads device `ordinal`'s facts and retains its primary context.
    ///
    /// # Safety
    /// The driver library must be loaded with every [`REQUIRED`] function, and `cuInit` done.
    unsafe fn probe(ordinal: c_int) -> Result<CudaDevice, CuError> {
        let mut raw = 0;
        // SAFETY (whole block): outputs are valid locals; the device handle comes from cuDeviceGet.
        unsafe {
            check(sys::cuDeviceGet(&mut raw, ordinal), "cuDeviceGet")?;
            let mut name = [0 as c_char; 256];
            check(
                sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, raw),
                "cuDeviceGetName",
            )?;
            let mut uuid = sys::CUuuid { bytes: [0; 16] };
            check(
                sys::cuDeviceGetUuid_v2(&mut uuid, raw),
                "cuDeviceGetUuid_v2",
            )?;
            let mut sms = 0;
            check(
                sys::cuDeviceGetAttribute(
                    &mut sms,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                    raw,
                ),
                "cuDeviceGetAttribute",
            )?;
            // Facts for the device queries only: 0 where the driver declines.
            let attribute = |a: sys::CUdevice_attribute| {
                let mut v = 0;
                match check(
                    sys::cuDeviceGetAttribute(&mut v, a, raw),
                    "cuDeviceGetAttribute",
                ) {
                    Ok(()) => v.max(0) as u32,
                    Err(_) => 0,
                }
            };
            let clock_khz = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
            let l2_bytes = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
            let mut primary = std::ptr::null_mut();
            check(
                sys::cuDevicePrimaryCtxRetain(&mut primary, raw),
                "cuDevicePrimaryCtxRetain",
            )?;
            Ok(CudaDevice {
                raw,
                name: CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                uuid: uuid.bytes.map(|b| b as u8),
                sm_count: sms.max(0) as u32,
                clock_khz,
                l2_bytes,
                primary,
            })
        }
    }

    /// Makes the primary context current on the calling thread (driver calls that allocate
    /// or load need a current context).
    pub fn make_current(&self) -> Result<(), CuError> {
        // SAFETY: a context retained for the process's life.
        check(
            unsafe { sys::cuCtxSetCurrent(self.primary) },
            "cuCtxSetCurrent",
        )
    }

    /// The device's whole SM resource (`cuDeviceGetDevResource`, type SM), the input of the
    /// first split.
    pub fn sm_resource(&self) -> Result<SmResource, CuError> {
        SmResource::of_device(self)
    }
}

/// Whether the calling process can see a CUDA device whose UUID is `uuid` with the CUDA path
/// on: the test for "this Vulkan device goes through CUDA for green contexts".
pub fn device_for_uuid(uuid: &[u8; 16]) -> Option<&'static CudaDevice> {
    Cuda::get()?.device_by_uuid(uuid)
}

/// Vulkan memory imported into CUDA (`cuImportExternalMemory` of an opaque fd, then
/// `cuExternalMemoryGetMappedBuffer` of all of it): the same bytes at a CUDA address. Unmapped
/// and released on drop, which must come before the Vulkan memory is freed.
pub struct ImportedMemory {
    ext: sys::CUexternalMemory,
    /// The CUDA address of the memory's byte 0 (differs from its Vulkan address).
    pub ptr: sys::CUdeviceptr,
}

// SAFETY: driver handles usable from any thread.
unsafe impl Send for ImportedMemory {}
// SAFETY: as above; never mutated.
unsafe impl Sync for ImportedMemory {}

impl ImportedMemory {
    /// Imports `fd`, an opaque fd exported from a dedicated Vulkan allocation of `size` bytes
    /// (`vkGetMemoryFdKHR`), into `dev`'s primary context. On success the driver owns `fd`;
    /// on failure the caller still does.
    ///
    /// Errors: the driver's.
    pub fn import_fd(dev: &CudaDevice, fd: i32, size: u64) -> Result<ImportedMemory, CuError> {
        dev.make_current()?;
        let desc = sys::CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
            type_: sys::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
            handle: sys::CUDA_EXTERNAL_MEMORY_HANDLE_DESC_st__bindgen_ty_1 { fd },
            size,
            flags: sys::CUDA_EXTERNAL_MEMORY_DEDICATED,
            reserved: [0; 16],
        };
        let mut ext = std::ptr::null_mut();
        // SAFETY: valid descriptor and output; a context is current.
        check(
            unsafe { sys::cuImportExternalMemory(&mut ext, &desc) },
            "cuImportExternalMemory",
        )?;
        let buf = sys::CUDA_EXTERNAL_MEMORY_BUFFER_DESC {
            offset: 0,
            size,
            flags: 0,
            reserved: [0; 16],
        };
        let mut ptr = 0;
        // SAFETY: `ext` was just imported with `size` bytes.
        let r = unsafe { sys::cuExternalMemoryGetMappedBuffer(&mut ptr, ext, &buf) };
        if let Err(e) = check(r, "cuExternalMemoryGetMappedBuffer") {
            // SAFETY: imported above, released once.
            unsafe { sys::cuDestroyExternalMemory(ext) };
            return Err(e);
        }
        Ok(ImportedMemory { ext, ptr })
    }
}

impl Drop for ImportedMemory {
    fn drop(&mut self) {
        // SAFETY: mapped and imported by `import_fd`, released once, mapping first.
        unsafe {
            sys::cuMemFree_v2(self.ptr);
            sys::cuDestroyExternalMemory(self.ext);
        }
    }
}

/// A Vulkan timeline semaphore imported into CUDA (`cuImportExternalSemaphore` of an opaque fd,
/// `CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD`): CUDA streams wait for and
/// signal values of the same timeline Vulkan submissions use. Released on drop, which must come
/// before the Vulkan semaphore is destroyed.
pub struct ExternalSemaphore {
    /// The driver's handle.
    pub raw: sys::CUexternalSemaphore,
}

// SAFETY: a driver handle usable from any thread.
unsafe impl Send for ExternalSemaphore {}
// SAFETY: as above; never mutated.
unsafe impl Sync for ExternalSemaphore {}

impl ExternalSemaphore {
    /// Imports `fd`, an opaque fd exported from a Vulkan timeline semaphore
    /// (`vkGetSemaphoreFdKHR`), into `dev`'s primary context. On success the driver owns `fd`;
    /// on failure the caller still does.
    ///
    /// Errors: the driver's.
    pub fn import_timeline_fd(dev: &CudaDevice, fd: i32) -> Result<ExternalSemaphore, CuError> {
        dev.make_current()?;
        let desc = sys::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
            type_: sys::CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
            handle: sys::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st__bindgen_ty_1 { fd },
            flags: 0,
            reserved: [0; 16],
        };
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid descriptor and output; a context is current.
        check(
            unsafe { sys::cuImportExternalSemaphore(&mut raw, &desc) },
            "cuImportExternalSemaphore",
        )?;
        Ok(ExternalSemaphore { raw })
    }
}

impl Drop for ExternalSemaphore {
    fn drop(&mut self) {
        // SAFETY: imported by `import_timeline_fd`, released once.
        unsafe { sys::cuDestroyExternalSemaphore(self.raw) };
    }
}
