//! The ICD entry points (`cl_khr_icd`): the dispatch table, `clIcdGetPlatformIDsKHR` and the
//! extension-function lookup. One list of entry points feeds both the table and the lookup.

use super::{
    context, device, event, kernel, memory, platform, program, queue, sampler, unsupported,
};
use crate::core::object;
use crate::core::platform::Platform;
use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::*;
use std::ffi::{c_char, c_void, CStr};
use std::sync::LazyLock;

macro_rules! entry_points {
    ($($name:ident => $path:path),* $(,)?) => {
        fn build_table() -> cl_icd_dispatch {
            // SAFETY: every field is an `Option` of a function pointer; all-zero is `None`.
            let mut t: cl_icd_dispatch = unsafe { std::mem::zeroed() };
            $( t.$name = Some($path); )*
            // The OpenCL 3.1 slot (an integer in the 3.0 layout of opencl-sys).
            t.clGetKernelSuggestedLocalWorkSize = kernel::clGetKernelSuggestedLocalWorkSizeKHR as *const () as usize as _;
            t
        }
        fn core_address(name: &[u8]) -> *mut c_void {
            match name {
                $( n if n == stringify!($name).as_bytes() => $path as *mut c_void, )*
                _ => std::ptr::null_mut(),
            }
        }
    };
}

entry_points! {
    clGetPlatformIDs => platform::clGetPlatformIDs,
    clGetPlatformInfo => platform::clGetPlatformInfo,
    clGetDeviceIDs => device::clGetDeviceIDs,
    clGetDeviceInfo => device::clGetDeviceInfo,
    clRetainDevice => device::clRetainDevice,
    clReleaseDevice => device::clReleaseDevice,
    clCreateSubDevices => device::clCreateSubDevices,
    clGetDeviceAndHostTimer => device::clGetDeviceAndHostTimer,
    clGetHostTimer => device::clGetHostTimer,
    clCreateContext => context::clCreateContext,
    clCreateContextFromType => context::clCreateContextFromType,
    clRetainContext => context::clRetainContext,
    clReleaseContext => context::clReleaseContext,
    clGetContextInfo => context::clGetContextInfo,
    clSetContextDestructorCallback => context::clSetContextDestructorCallback,
    clCreateCommandQueue => queue::clCreateCommandQueue,
    clCreateCommandQueueWithProperties => queue::clCreateCommandQueueWithProperties,
    clRetainCommandQueue => queue::clRetainCommandQueue,
    clReleaseCommandQueue => queue::clReleaseCommandQueue,
    clGetCommandQueueInfo => queue::clGetCommandQueueInfo,
    clSetCommandQueueProperty => queue::clSetCommandQueueProperty,
    clFlush => queue::clFlush,
    clFinish => queue::clFinish,
    clCreateBuffer => memory::clCreateBuffer,
    clCreateBufferWithProperties => memory::clCreateBufferWithProperties,
    clCreateSubBuffer => memory::clCreateSubBuffer,
    clRetainMemObject => memory::clRetainMemObject,
    clReleaseMemObject => memory::clReleaseMemObject,
    clGetMemObjectInfo => memory::clGetMemObjectInfo,
    clSetMemObjectDestructorCallback => memory::clSetMemObjectDestructorCallback,
    clEnqueueReadBuffer => memory::clEnqueueReadBuffer,
    clEnqueueWriteBuffer => memory::clEnqueueWriteBuffer,
    clEnqueueCopyBuffer => memory::clEnqueueCopyBuffer,
    clEnqueueFillBuffer => memory::clEnqueueFillBuffer,
    clEnqueueReadBufferRect => memory::clEnqueueReadBufferRect,
    clEnqueueWriteBufferRect => memory::clEnqueueWriteBufferRect,
    clEnqueueCopyBufferRect => memory::clEnqueueCopyBufferRect,
    clEnqueueMapBuffer => memory::clEnqueueMapBuffer,
    clEnqueueUnmapMemObject => memory::clEnqueueUnmapMemObject,
    clEnqueueMigrateMemObjects => memory::clEnqueueMigrateMemObjects,
    clCreateProgramWithSource => program::clCreateProgramWithSource,
    clCreateProgramWithIL => program::clCreateProgramWithIL,
    clCreateProgramWithBinary => program::clCreateProgramWithBinary,
    clCreateProgramWithBuiltInKernels => program::clCreateProgramWithBuiltInKernels,
    clRetainProgram => program::clRetainProgram,
    clReleaseProgram => program::clReleaseProgram,
    clBuildProgram => program::clBuildProgram,
    clCompileProgram => program::clCompileProgram,
    clLinkProgram => program::clLinkProgram,
    clUnloadCompiler => program::clUnloadCompiler,
    clUnloadPlatformCompiler => program::clUnloadPlatformCompiler,
    clSetProgramReleaseCallback => program::clSetProgramReleaseCallback,
    clSetProgramSpecializationConstant => program::clSetProgramSpecializationConstant,
    clGetProgramInfo => program::clGetProgramInfo,
    clGetProgramBuildInfo => program::clGetProgramBuildInfo,
    clCreateKernel => kernel::clCreateKernel,
    clCreateKernelsInProgram => kernel::clCreateKernelsInProgram,
    clRetainKernel => kernel::clRetainKernel,
    clReleaseKernel => kernel::clReleaseKernel,
    clCloneKernel => kernel::clCloneKernel,
    clSetKernelArg => kernel::clSetKernelArg,
    clSetKernelArgSVMPointer => kernel::clSetKernelArgSVMPointer,
    clSetKernelExecInfo => kernel::clSetKernelExecInfo,
    clGetKernelInfo => kernel::clGetKernelInfo,
    clGetKernelWorkGroupInfo => kernel::clGetKernelWorkGroupInfo,
    clGetKernelArgInfo => kernel::clGetKernelArgInfo,
    clGetKernelSubGroupInfo => kernel::clGetKernelSubGroupInfo,
    clGetKernelSubGroupInfoKHR => kernel::clGetKernelSubGroupInfo,
    clEnqueueNDRangeKernel => kernel::clEnqueueNDRangeKernel,
    clEnqueueTask => kernel::clEnqueueTask,
    clWaitForEvents => event::clWaitForEvents,
    clGetEventInfo => event::clGetEventInfo,
    clRetainEvent => event::clRetainEvent,
    clReleaseEvent => event::clReleaseEvent,
    clGetEventProfilingInfo => event::clGetEventProfilingInfo,
    clCreateUserEvent => event::clCreateUserEvent,
    clSetUserEventStatus => event::clSetUserEventStatus,
    clSetEventCallback => event::clSetEventCallback,
    clEnqueueMarkerWithWaitList => event::clEnqueueMarkerWithWaitList,
    clEnqueueBarrierWithWaitList => event::clEnqueueBarrierWithWaitList,
    clEnqueueMarker => event::clEnqueueMarker,
    clEnqueueBarrier => event::clEnqueueBarrier,
    clEnqueueWaitForEvents => event::clEnqueueWaitForEvents,
    clGetSupportedImageFormats => memory::clGetSupportedImageFormats,
    clCreateImage2D => memory::clCreateImage2D,
    clCreateImage3D => memory::clCreateImage3D,
    clCreateImage => memory::clCreateImage,
    clCreateImageWithProperties => memory::clCreateImageWithProperties,
    clGetImageInfo => memory::clGetImageInfo,
    clCreateSampler => sampler::clCreateSampler,
    clCreateSamplerWithProperties => sampler::clCreateSamplerWithProperties,
    clRetainSampler => sampler::clRetainSampler,
    clReleaseSampler => sampler::clReleaseSampler,
    clGetSamplerInfo => sampler::clGetSamplerInfo,
    clEnqueueReadImage => memory::clEnqueueReadImage,
    clEnqueueWriteImage => memory::clEnqueueWriteImage,
    clEnqueueCopyImage => memory::clEnqueueCopyImage,
    clEnqueueCopyImageToBuffer => memory::clEnqueueCopyImageToBuffer,
    clEnqueueCopyBufferToImage => memory::clEnqueueCopyBufferToImage,
    clEnqueueMapImage => memory::clEnqueueMapImage,
    clEnqueueFillImage => memory::clEnqueueFillImage,
    clEnqueueNativeKernel => unsupported::clEnqueueNativeKernel,
    clCreateFromGLBuffer => unsupported::clCreateFromGLBuffer,
    clCreateFromGLTexture => unsupported::clCreateFromGLTexture,
    clCreateFromGLTexture2D => unsupported::clCreateFromGLTexture2D,
    clCreateFromGLTexture3D => unsupported::clCreateFromGLTexture3D,
    clCreateFromGLRenderbuffer => unsupported::clCreateFromGLRenderbuffer,
    clGetGLObjectInfo => unsupported::clGetGLObjectInfo,
    clGetGLTextureInfo => unsupported::clGetGLTextureInfo,
    clEnqueueAcquireGLObjects => unsupported::clEnqueueAcquireGLObjects,
    clEnqueueReleaseGLObjects => unsupported::clEnqueueReleaseGLObjects,
    clGetGLContextInfoKHR => unsupported::clGetGLContextInfoKHR,
    clCreateEventFromGLsyncKHR => unsupported::clCreateEventFromGLsyncKHR,
    clCreateFromEGLImageKHR => unsupported::clCreateFromEGLImageKHR,
    clEnqueueAcquireEGLObjectsKHR => unsupported::clEnqueueAcquireEGLObjectsKHR,
    clEnqueueReleaseEGLObjectsKHR => unsupported::clEnqueueReleaseEGLObjectsKHR,
    clCreateEventFromEGLSyncKHR => unsupported::clCreateEventFromEGLSyncKHR,
    clCreateSubDevicesEXT => unsupported::clCreateSubDevicesEXT,
    clRetainDeviceEXT => unsupported::clRetainDeviceEXT,
    clReleaseDeviceEXT => unsupported::clReleaseDeviceEXT,
    clCreatePipe => unsupported::clCreatePipe,
    clGetPipeInfo => unsupported::clGetPipeInfo,
    clSVMAlloc => unsupported::clSVMAlloc,
    clSVMFree => unsupported::clSVMFree,
    clEnqueueSVMFree => unsupported::clEnqueueSVMFree,
    clEnqueueSVMMemcpy => unsupported::clEnqueueSVMMemcpy,
    clEnqueueSVMMemFill => unsupported::clEnqueueSVMMemFill,
    clEnqueueSVMMap => unsupported::clEnqueueSVMMap,
    clEnqueueSVMUnmap => unsupported::clEnqueueSVMUnmap,
    clEnqueueSVMMigrateMem => unsupported::clEnqueueSVMMigrateMem,
    clSetDefaultDeviceCommandQueue => unsupported::clSetDefaultDeviceCommandQueue,
    clGetDeviceIDsFromD3D10KHR => unsupported::clGetDeviceIDsFromD3D10KHR,
    clCreateFromD3D10BufferKHR => unsupported::clCreateFromD3D10BufferKHR,
    clCreateFromD3D10Texture2DKHR => unsupported::clCreateFromD3D10Texture2DKHR,
    clCreateFromD3D10Texture3DKHR => unsupported::clCreateFromD3D10Texture3DKHR,
    clEnqueueAcquireD3D10ObjectsKHR => unsupported::clEnqueueAcquireD3D10ObjectsKHR,
    clEnqueueReleaseD3D10ObjectsKHR => unsupported::clEnqueueReleaseD3D10ObjectsKHR,
    clGetDeviceIDsFromD3D11KHR => unsupported::clGetDeviceIDsFromD3D11KHR,
    clCreateFromD3D11BufferKHR => unsupported::clCreateFromD3D11BufferKHR,
    clCreateFromD3D11Texture2DKHR => unsupported::clCreateFromD3D11Texture2DKHR,
    clCreateFromD3D11Texture3DKHR => unsupported::clCreateFromD3D11Texture3DKHR,
    clEnqueueAcquireD3D11ObjectsKHR => unsupported::clEnqueueAcquireD3D11ObjectsKHR,
    clEnqueueReleaseD3D11ObjectsKHR => unsupported::clEnqueueReleaseD3D11ObjectsKHR,
    clGetDeviceIDsFromDX9MediaAdapterKHR => unsupported::clGetDeviceIDsFromDX9MediaAdapterKHR,
    clCreateFromDX9MediaSurfaceKHR => unsupported::clCreateFromDX9MediaSurfaceKHR,
    clEnqueueAcquireDX9MediaSurfacesKHR => unsupported::clEnqueueAcquireDX9MediaSurfacesKHR,
    clEnqueueReleaseDX9MediaSurfacesKHR => unsupported::clEnqueueReleaseDX9MediaSurfacesKHR,
    clGetExtensionFunctionAddress => extension_function_address,
    clGetExtensionFunctionAddressForPlatform => extension_function_address_for_platform,
}

static TABLE: LazyLock<cl_icd_dispatch> = LazyLock::new(build_table);

/// The dispatch table every object's header points to.
pub fn dispatch_table() -> &'static cl_icd_dispatch {
    &TABLE
}

/// Installs the dispatch table in core ([`object::install_dispatch_table`]) when the library
/// is loaded, before any entry point can run: an ELF `.init_array` constructor (the loader
/// runs it at `dlopen`). Core makes every handle cell and so never names the entry points.
#[used]
#[link_section = ".init_array"]
static INSTALL_DISPATCH_TABLE: extern "C" fn() = install_dispatch_table;

extern "C" fn install_dispatch_table() {
    object::install_dispatch_table(dispatch_table());
}

/// Extension functions reachable by name (`clGetExtensionFunctionAddressForPlatform`).
fn extension_address(name: &[u8]) -> *mut c_void {
    match name {
        b"clIcdGetPlatformIDsKHR" => icd_get_platform_ids as *mut c_void,
        // OpenCL 3.1's core name too (ocl-icd 2.3 exports no such symbol, so applications
        // on it find the function by name; a 3.1 loader uses the dispatch table's slot).
        b"clGetKernelSuggestedLocalWorkSizeKHR" | b"clGetKernelSuggestedLocalWorkSize" => {
            kernel::clGetKernelSuggestedLocalWorkSizeKHR as *mut c_void
        }
        b"clSetKernelArgDevicePointerEXT" => kernel::clSetKernelArgDevicePointerEXT as *mut c_void,
        // cl_khr_il_program: the core function under its extension name.
        b"clCreateProgramWithILKHR" => program::clCreateProgramWithIL as *mut c_void,
        _ => [
            semaphore_address,
            external_memory_address,
            command_buffer_address,
        ]
        .iter()
        .map(|f| f(name))
        .find(|p| !p.is_null())
        .unwrap_or(std::ptr::null_mut()),
    }
}

/// The `cl_khr_semaphore` entry points by name, and `clGetSemaphoreHandleForTypeKHR`
/// (api/semaphore.rs).
fn semaphore_address(name: &[u8]) -> *mut c_void {
    use super::semaphore as s;
    macro_rules! by_name {
        ($($f:ident),* $(,)?) => {
            match name {
                $( n if n == stringify!($f).as_bytes() => s::$f as *mut c_void, )*
                _ => std::ptr::null_mut(),
            }
        };
    }
    by_name!(
        clCreateSemaphoreWithPropertiesKHR,
        clEnqueueWaitSemaphoresKHR,
        clEnqueueSignalSemaphoresKHR,
        clGetSemaphoreInfoKHR,
        clRetainSemaphoreKHR,
        clReleaseSemaphoreKHR,
        clGetSemaphoreHandleForTypeKHR,
    )
}

/// The `cl_khr_external_memory` entry points by name (api/memory/external.rs).
fn external_memory_address(name: &[u8]) -> *mut c_void {
    match name {
        b"clEnqueueAcquireExternalMemObjectsKHR" => {
            memory::clEnqueueAcquireExternalMemObjectsKHR as *mut c_void
        }
        b"clEnqueueReleaseExternalMemObjectsKHR" => {
            memory::clEnqueueReleaseExternalMemObjectsKHR as *mut c_void
        }
        _ => std::ptr::null_mut(),
    }
}

/// The `cl_khr_command_buffer` (and mutable dispatch) entry points by name; those of the
/// 0.9.4 ABI under `VKCL_COMMAND_BUFFER_REVISION=0.9.4`.
fn command_buffer_address(name: &[u8]) -> *mut c_void {
    use super::command_buffer as cb;
    use super::command_buffer_094 as old;
    use super::mutable_dispatch as md;
    if crate::util::config::config().command_buffer_094 {
        macro_rules! old_abi {
            ($($f:ident),* $(,)?) => {
                match name {
                    $( n if n == stringify!($f).as_bytes() => return old::$f as *mut c_void, )*
                    b"clCommandSVMMemcpyKHR" | b"clCommandSVMMemFillKHR" => return std::ptr::null_mut(),
                    _ => {}
                }
            };
        }
        old_abi!(
            clCommandBarrierWithWaitListKHR,
            clCommandCopyBufferKHR,
            clCommandCopyBufferRectKHR,
            clCommandCopyBufferToImageKHR,
            clCommandCopyImageKHR,
            clCommandCopyImageToBufferKHR,
            clCommandFillBufferKHR,
            clCommandFillImageKHR,
        );
    } else {
        match name {
            b"clUpdateMutableCommandsKHR" => return md::clUpdateMutableCommandsKHR as *mut c_void,
            b"clGetMutableCommandInfoKHR" => return md::clGetMutableCommandInfoKHR as *mut c_void,
            b"clRemapCommandBufferKHR" if super::command_buffer_multi::enabled() => {
                return super::command_buffer_multi::clRemapCommandBufferKHR as *mut c_void
            }
            _ => {}
        }
    }
    macro_rules! by_name {
        ($($f:ident),* $(,)?) => {
            match name {
                $( n if n == stringify!($f).as_bytes() => cb::$f as *mut c_void, )*
                _ => std::ptr::null_mut(),
            }
        };
    }
    by_name!(
        clCreateCommandBufferKHR,
        clRetainCommandBufferKHR,
        clReleaseCommandBufferKHR,
        clFinalizeCommandBufferKHR,
        clEnqueueCommandBufferKHR,
        clCommandBarrierWithWaitListKHR,
        clCommandCopyBufferKHR,
        clCommandCopyBufferRectKHR,
        clCommandCopyBufferToImageKHR,
        clCommandCopyImageKHR,
        clCommandCopyImageToBufferKHR,
        clCommandFillBufferKHR,
        clCommandFillImageKHR,
        clCommandNDRangeKernelKHR,
        clCommandSVMMemcpyKHR,
        clCommandSVMMemFillKHR,
        clGetCommandBufferInfoKHR,
    )
}

/// `clIcdGetPlatformIDsKHR` (cl_khr_icd): the loader's way to list vkcl's platform.
/// Errors: `CL_INVALID_VALUE` if both `platforms` and `num_platforms` are NULL or
/// `num_entries` is 0 with a non-NULL `platforms`.
///
/// # Safety
/// Pointers as the OpenCL API requires.
#[no_mangle]
pub unsafe extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    // SAFETY: same contract.
    unsafe { icd_get_platform_ids(num_entries, platforms, num_platforms) }
}

// The exported names above and below are only thin wrappers: everything inside vkcl (the
// dispatch table, the lookup answers) uses these private functions. An application linked
// against the loader (-lOpenCL) puts the loader's functions of the same names first in the
// global symbol scope, so a reference to an exported name from inside vkcl could bind to the
// loader's function: the loader's clGetExtensionFunctionAddressForPlatform then dispatches to
// itself forever.

/// `clIcdGetPlatformIDsKHR` as reached through vkcl's own tables.
///
/// # Safety
/// As [`clIcdGetPlatformIDsKHR`].
unsafe extern "C" fn icd_get_platform_ids(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    // SAFETY: same contract as clGetPlatformIDs.
    unsafe { platform::clGetPlatformIDs(num_entries, platforms, num_platforms) }
}

/// `clGetExtensionFunctionAddress` as reached through the dispatch table.
///
/// # Safety
/// As [`clGetExtensionFunctionAddress`].
unsafe extern "C" fn extension_function_address(func_name: *const c_char) -> *mut c_void {
    if func_name.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: NUL-terminated per the caller.
    let name = unsafe { CStr::from_ptr(func_name) }.to_bytes();
    let p = extension_address(name);
    if p.is_null() {
        core_address(name)
    } else {
        p
    }
}

/// `clGetExtensionFunctionAddressForPlatform` as reached through the dispatch table.
///
/// # Safety
/// As [`clGetExtensionFunctionAddressForPlatform`].
unsafe extern "C" fn extension_function_address_for_platform(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    if !object::is_live::<Platform>(platform as *const c_void) {
        return std::ptr::null_mut();
    }
    // SAFETY: same contract.
    unsafe { extension_function_address(func_name) }
}

/// `clGetExtensionFunctionAddress`: vkcl's extension functions and the ICD entry point by
/// name; NULL for a name vkcl does not know (OpenCL 3.0 section 9.2). Core functions are also
/// answered, which the Khronos loader uses when it asks.
///
/// # Safety
/// `func_name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
    // SAFETY: same contract.
    unsafe { extension_function_address(func_name) }
}

/// `clGetExtensionFunctionAddressForPlatform`: as [`clGetExtensionFunctionAddress`] for
/// vkcl's platform; NULL for another platform or an unknown name.
///
/// # Safety
/// `func_name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn clGetExtensionFunctionAddressForPlatform(
    platform: cl_platform_id,
    func_name: *const c_char,
) -> *mut c_void {
    // SAFETY: same contract.
    unsafe { extension_function_address_for_platform(platform, func_name) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every slot of the dispatch table is filled: the loader calls through it blindly, so an
    /// empty slot would be a NULL call in the application.
    #[test]
    fn dispatch_table_has_no_empty_slot() {
        let t = dispatch_table();
        let n = std::mem::size_of::<cl_icd_dispatch>() / std::mem::size_of::<usize>();
        // SAFETY: the table is a repr(C) struct of pointer-sized Option<fn> fields.
        let slots =
            unsafe { std::slice::from_raw_parts(t as *const cl_icd_dispatch as *const usize, n) };
        let empty: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| **s == 0)
            .map(|(i, _)| i)
            .collect();
        assert!(
            empty.is_empty(),
            "empty dispatch slots (indices): {empty:?}"
        );
    }

    /// The table was installed at load: a handle's first word is the table's address, which
    /// the loader reads to dispatch (`cl_icd.h`).
    #[test]
    fn handles_start_with_the_installed_table() {
        let handle = object::handle_of(Platform::get()) as *const *const cl_icd_dispatch;
        // SAFETY: a live handle points to its cell, whose first field is the table pointer.
        let first = unsafe { *handle };
        assert_eq!(first, dispatch_table() as *const cl_icd_dispatch);
    }
}
