#!/usr/bin/env python3
"""Generates src/api/unsupported.rs: entry points of features vkcl does not offer (pipes,
SVM, GL/EGL/D3D sharing, device fission (EXT), on-device queues; images, samplers and
clGetSupportedImageFormats live in src/api/memory and src/api/sampler.rs). Each validates its
first object handle, then returns the error the OpenCL 3.0 specification names for a device
without the feature. Run: python3 src/api/gen_unsupported.py <opencl-sys src dir> > src/api/unsupported.rs
"""
import re, sys

src = sys.argv[1]
text = "".join(open(f"{src}/{f}").read() for f in ["cl_function_types.rs", "cl_gl.rs", "cl_egl.rs", "cl_ext.rs", "cl_d3d10.rs", "cl_d3d11.rs", "cl_dx9_media_sharing.rs"])
sigs = {}
for m in re.finditer(r"pub type (cl\w+)_t = Option<\s*unsafe extern \"C\" fn\((.*?)\)\s*(?:->\s*([\w\s\*]+?))?,?\s*>;", text, re.S):
    sigs.setdefault(m.group(1), (m.group(2), (m.group(3) or "").strip()))

# name -> (error code, doc)
FUNCS = {
    "clEnqueueNativeKernel": ("CL_INVALID_OPERATION", "the device does not support native kernels (CL_EXEC_NATIVE_KERNEL)"),
    "clCreateFromGLBuffer": ("CL_INVALID_CONTEXT", "the context was not created from a GL context"),
    "clCreateFromGLTexture": ("CL_INVALID_CONTEXT", "the context was not created from a GL context"),
    "clCreateFromGLTexture2D": ("CL_INVALID_CONTEXT", "the context was not created from a GL context"),
    "clCreateFromGLTexture3D": ("CL_INVALID_CONTEXT", "the context was not created from a GL context"),
    "clCreateFromGLRenderbuffer": ("CL_INVALID_CONTEXT", "the context was not created from a GL context"),
    "clGetGLObjectInfo": ("CL_INVALID_GL_OBJECT", "no memory object was created from a GL object"),
    "clGetGLTextureInfo": ("CL_INVALID_GL_OBJECT", "no memory object was created from a GL object"),
    "clEnqueueAcquireGLObjects": ("CL_INVALID_CONTEXT", "the queue's context was not created from a GL context"),
    "clEnqueueReleaseGLObjects": ("CL_INVALID_CONTEXT", "the queue's context was not created from a GL context"),
    "clGetGLContextInfoKHR": ("CL_INVALID_OPERATION", "cl_khr_gl_sharing is not supported"),
    "clCreateEventFromGLsyncKHR": ("CL_INVALID_CONTEXT", "cl_khr_gl_event is not supported"),
    "clCreateFromEGLImageKHR": ("CL_INVALID_CONTEXT", "cl_khr_egl_image is not supported"),
    "clEnqueueAcquireEGLObjectsKHR": ("CL_INVALID_CONTEXT", "cl_khr_egl_image is not supported"),
    "clEnqueueReleaseEGLObjectsKHR": ("CL_INVALID_CONTEXT", "cl_khr_egl_image is not supported"),
    "clCreateEventFromEGLSyncKHR": ("CL_INVALID_CONTEXT", "cl_khr_egl_event is not supported"),
    "clCreateSubDevicesEXT": ("CL_INVALID_OPERATION", "cl_ext_device_fission is not supported"),
    "clRetainDeviceEXT": ("CL_INVALID_OPERATION", "cl_ext_device_fission is not supported"),
    "clReleaseDeviceEXT": ("CL_INVALID_OPERATION", "cl_ext_device_fission is not supported"),
    "clCreatePipe": ("CL_INVALID_OPERATION", "no device in the context supports pipes"),
    "clGetPipeInfo": ("CL_INVALID_MEM_OBJECT", "no pipe objects exist"),
    "clSVMAlloc": (None, "returns NULL: no device supports shared virtual memory"),
    "clSVMFree": (None, "does nothing: no SVM allocation can exist"),
    "clEnqueueSVMFree": ("CL_INVALID_OPERATION", "no device supports shared virtual memory"),
    "clEnqueueSVMMemcpy": ("CL_INVALID_OPERATION", "no device supports shared virtual memory"),
    "clEnqueueSVMMemFill": ("CL_INVALID_OPERATION", "no device supports shared virtual memory"),
    "clEnqueueSVMMap": ("CL_INVALID_OPERATION", "no device supports shared virtual memory"),
    "clEnqueueSVMUnmap": ("CL_INVALID_OPERATION", "no device supports shared virtual memory"),
    "clEnqueueSVMMigrateMem": ("CL_INVALID_OPERATION", "no device supports shared virtual memory"),
    "clSetDefaultDeviceCommandQueue": ("CL_INVALID_OPERATION", "no device supports on-device queues"),
    "clGetDeviceIDsFromD3D10KHR": ("CL_INVALID_PLATFORM", "Direct3D 10 sharing is not supported (Windows only)"),
    "clCreateFromD3D10BufferKHR": ("CL_INVALID_CONTEXT", "Direct3D 10 sharing is not supported"),
    "clCreateFromD3D10Texture2DKHR": ("CL_INVALID_CONTEXT", "Direct3D 10 sharing is not supported"),
    "clCreateFromD3D10Texture3DKHR": ("CL_INVALID_CONTEXT", "Direct3D 10 sharing is not supported"),
    "clEnqueueAcquireD3D10ObjectsKHR": ("CL_INVALID_CONTEXT", "Direct3D 10 sharing is not supported"),
    "clEnqueueReleaseD3D10ObjectsKHR": ("CL_INVALID_CONTEXT", "Direct3D 10 sharing is not supported"),
    "clGetDeviceIDsFromD3D11KHR": ("CL_INVALID_PLATFORM", "Direct3D 11 sharing is not supported (Windows only)"),
    "clCreateFromD3D11BufferKHR": ("CL_INVALID_CONTEXT", "Direct3D 11 sharing is not supported"),
    "clCreateFromD3D11Texture2DKHR": ("CL_INVALID_CONTEXT", "Direct3D 11 sharing is not supported"),
    "clCreateFromD3D11Texture3DKHR": ("CL_INVALID_CONTEXT", "Direct3D 11 sharing is not supported"),
    "clEnqueueAcquireD3D11ObjectsKHR": ("CL_INVALID_CONTEXT", "Direct3D 11 sharing is not supported"),
    "clEnqueueReleaseD3D11ObjectsKHR": ("CL_INVALID_CONTEXT", "Direct3D 11 sharing is not supported"),
    "clGetDeviceIDsFromDX9MediaAdapterKHR": ("CL_INVALID_PLATFORM", "DX9 media sharing is not supported (Windows only)"),
    "clCreateFromDX9MediaSurfaceKHR": ("CL_INVALID_CONTEXT", "DX9 media sharing is not supported"),
    "clEnqueueAcquireDX9MediaSurfacesKHR": ("CL_INVALID_CONTEXT", "DX9 media sharing is not supported"),
    "clEnqueueReleaseDX9MediaSurfacesKHR": ("CL_INVALID_CONTEXT", "DX9 media sharing is not supported"),
}

CHECK = {"cl_command_queue": "CommandQueue", "cl_context": "Context", "cl_kernel": None, "cl_program": None}

out = ["//! Entry points of features vkcl does not offer: pipes, SVM, GL/EGL",
       "//! sharing, device fission (EXT) and on-device queues. Each checks its first handle, then",
       "//! gives the error the OpenCL 3.0 specification names when no device has the feature.",
       "//! Generated by src/api/gen_unsupported.py; edit that instead.",
       "#![allow(unused_variables, clippy::too_many_arguments)]",
       "",
       "use super::status;",
       "use crate::core::context::Context;",
       "use crate::core::error::ClError;",
       "use crate::core::object::lookup;",
       "use crate::core::queue::CommandQueue;",
       "use libc::{c_void, size_t};",
       "use opencl_sys::*;",
       "use opencl_sys::cl_egl::*;",
       "use opencl_sys::cl_d3d10::*;",
       "use opencl_sys::cl_d3d11::*;",
       "use opencl_sys::cl_dx9_media_sharing::*;",
       ""]
for name, (code, doc) in FUNCS.items():
    if name not in sigs:
        print(f"missing {name}", file=sys.stderr); continue
    params, ret = sigs[name]
    params = " ".join(params.split())
    plist, depth, cur = [], 0, ""
    for ch in params:
        if ch in "(<":
            depth += 1
        elif ch in ")>" and not cur.endswith("-"):
            depth -= 1
        if ch == "," and depth == 0:
            plist.append(cur.strip()); cur = ""
        else:
            cur += ch
    if cur.strip():
        plist.append(cur.strip())
    pnames = [p.split(":")[0].strip() for p in plist]
    ptypes = [p.split(":", 1)[1].strip() for p in plist]
    check = ""
    for n, t in zip(pnames, ptypes):
        if t in ("cl_command_queue", "cl_context"):
            check = f"lookup::<{CHECK[t]}>({n} as *const c_void)?;"
            break
    sig = f"pub unsafe extern \"C\" fn {name}({', '.join(plist)})" + (f" -> {ret}" if ret else "")
    out.append(f"/// {name}: {doc}.")
    out.append("///")
    out.append("/// # Safety")
    out.append("/// Pointers as the OpenCL API requires.")
    if name == "clSVMAlloc":
        body = "std::ptr::null_mut()"
    elif name == "clSVMFree":
        body = ""
    elif ret == "cl_int":
        body = f"status(|| {{\n        {check}\n        Err(ClError({code}))\n    }})" if check else f"status(|| Err(ClError({code})))"
    else:
        if "errcode_ret" not in pnames:
            print(f"no errcode_ret in {name}", file=sys.stderr)
        body = f"super::object(errcode_ret, || {{\n        {check}\n        Err::<*mut c_void, _>(ClError({code}))\n    }})" if check else f"super::object(errcode_ret, || Err::<*mut c_void, _>(ClError({code})))"
    out.append(f"{sig} {{\n    {body}\n}}\n")
print("\n".join(out))
