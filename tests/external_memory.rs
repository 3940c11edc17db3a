//! cl_khr_external_memory with opaque fds through the real loader: Vulkan memory (allocated
//! exportable here with ash, on the same driver as vkcl's device) imported as an OpenCL buffer
//! with no copy; a kernel's result read through Vulkan's mapping and Vulkan's writes read by
//! OpenCL; the acquire and release commands and the error codes.
mod common;
use ash::vk;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// A Vulkan device of the same physical device as vkcl's default device.
struct Vulkan {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    memory_types: vk::PhysicalDeviceMemoryProperties,
    fd: ash::khr::external_memory_fd::Device,
}

impl Vulkan {
    fn new(uuid: [u8; 16]) -> Vulkan {
        let _ = platform(); // selects the Vulkan driver (VK_DRIVER_FILES) first
                            // SAFETY: loading the system's Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.expect("libvulkan");
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: valid create info.
        let instance = unsafe { entry.create_instance(&info, None) }.expect("instance");
        // SAFETY: a live instance.
        let phys = unsafe { instance.enumerate_physical_devices() }
            .unwrap()
            .into_iter()
            .find(|&p| {
                let mut id = vk::PhysicalDeviceIDProperties::default();
                let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
                // SAFETY: a physical device of this instance.
                unsafe { instance.get_physical_device_properties2(p, &mut props) };
                id.device_uuid == uuid
            })
            .expect("the Vulkan device of vkcl's device (same UUID)");
        let prio = [1.0f32];
        let queue = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&prio)];
        let exts = [ash::khr::external_memory_fd::NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue)
            .enabled_extension_names(&exts);
        // SAFETY: valid create info for this physical device.
        let device = unsafe { instance.create_device(phys, &info, None) }.expect("device");
        // SAFETY: plain query.
        let memory_types = unsafe { instance.get_physical_device_memory_properties(phys) };
        let fd = ash::khr::external_memory_fd::Device::new(&instance, &device);
        Vulkan {
            _entry: entry,
            instance,
            device,
            memory_types,
            fd,
        }
    }

    /// Host-visible, exportable memory of `size` bytes bound to a buffer (the usages vkcl's
    /// buffers have, so both sides compute the same allocation size), mapped.
    fn exportable(&self, size: u64) -> (vk::Buffer, vk::DeviceMemory, *mut i32) {
        let handle = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
        let mut ext = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST
                    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                    | vk::BufferUsageFlags::INDIRECT_BUFFER,
            )
            .push_next(&mut ext);
        // SAFETY (all below): valid create infos on the live device; each object used once.
        unsafe {
            let buffer = self.device.create_buffer(&info, None).unwrap();
            let req = self.device.get_buffer_memory_requirements(buffer);
            let host =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let ty = (0..self.memory_types.memory_type_count)
                .find(|&i| {
                    req.memory_type_bits & (1 << i) != 0
                        && self.memory_types.memory_types[i as usize]
                            .property_flags
                            .contains(host)
                })
                .expect("a host-visible memory type");
            let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(handle);
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(ty)
                .push_next(&mut export);
            let memory = self.device.allocate_memory(&alloc, None).unwrap();
            self.device.bind_buffer_memory(buffer, memory, 0).unwrap();
            let p = self
                .device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .unwrap();
            (buffer, memory, p as *mut i32)
        }
    }

    fn export_fd(&self, memory: vk::DeviceMemory) -> i32 {
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(memory)
            .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        // SAFETY: exportable memory of this device.
        unsafe { self.fd.get_memory_fd(&info) }.expect("vkGetMemoryFdKHR")
    }
}

impl Drop for Vulkan {
    fn drop(&mut self) {
        // SAFETY: nothing of the device is in use any more.
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn import(
    env: &Env,
    props: &[cl_mem_properties],
    flags: cl_mem_flags,
    size: usize,
) -> Result<cl_mem, cl_int> {
    let mut err = 1;
    let m = unsafe {
        cl!(clCreateBufferWithProperties)(
            env.context,
            props.as_ptr(),
            flags,
            size,
            null_mut(),
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        Ok(m)
    } else {
        assert!(m.is_null());
        Err(err)
    }
}

fn uuid(d: cl_device_id) -> [u8; 16] {
    let mut u = [0u8; 16];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            d,
            CL_DEVICE_UUID_KHR,
            16,
            u.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    u
}

const OPAQUE: cl_mem_properties = CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR as cl_mem_properties;

#[test]
fn vulkan_memory_imported_as_a_buffer() {
    let env = Env::new();
    if !env.has_extension("cl_khr_external_memory_opaque_fd") {
        eprintln!("skipped: the Vulkan driver imports no opaque fd for buffers");
        return;
    }
    assert!(env.has_extension("cl_khr_external_memory"));
    let types: cl_external_memory_handle_type_khr = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
            s,
            v,
            r,
        )
    });
    assert_eq!(types, CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR);
    let vkd = Vulkan::new(uuid(env.device));
    let n = 4096usize;
    let size = n * 4;
    let (buffer, memory, mapped) = vkd.exportable(size as u64);
    // SAFETY: the mapping holds n ints.
    let shared = unsafe { std::slice::from_raw_parts_mut(mapped, n) };
    for (i, x) in shared.iter_mut().enumerate() {
        *x = i as i32 * 3;
    }
    let fd = vkd.export_fd(memory);

    // Errors first (none takes the fd).
    let ty = CL_MEM_DEVICE_HANDLE_LIST_KHR as cl_mem_properties;
    let dev = env.device as cl_mem_properties;
    let rw = CL_MEM_READ_WRITE;
    assert_eq!(
        import(&env, &[OPAQUE, fd as u64, OPAQUE, fd as u64, 0], rw, size),
        Err(CL_INVALID_PROPERTY)
    );
    assert_eq!(
        import(&env, &[OPAQUE, fd as u64, ty, 0x1234, 0, 0], rw, size),
        Err(CL_INVALID_DEVICE)
    );
    assert_eq!(
        import(&env, &[ty, dev, 0, 0], rw, size),
        Err(CL_INVALID_PROPERTY)
    );
    assert_eq!(
        import(&env, &[OPAQUE, fd as u64, 0], rw, 0),
        Err(CL_INVALID_BUFFER_SIZE)
    );
    assert_eq!(
        import(
            &env,
            &[OPAQUE, fd as u64, 0],
            rw | CL_MEM_ALLOC_HOST_PTR,
            size
        ),
        Err(CL_INVALID_VALUE)
    );
    assert_eq!(
        import(&env, &[0x7777, 1, 0], rw, size),
        Err(CL_INVALID_PROPERTY)
    );

    let props = [OPAQUE, fd as u64, ty, dev, 0, 0];
    let m = import(&env, &props, rw, size).expect("import");
    let mut got = vec![0 as cl_mem_properties; 8];
    let mut len = 0;
    ok(unsafe {
        cl!(clGetMemObjectInfo)(
            m,
            CL_MEM_PROPERTIES,
            64,
            got.as_mut_ptr() as *mut c_void,
            &mut len,
        )
    });
    assert_eq!(&got[..len / 8], &props);

    // OpenCL reads what Vulkan wrote, a kernel writes, Vulkan reads it: no copy between.
    let acquire = ext!(clEnqueueAcquireExternalMemObjectsKHR);
    let release = ext!(clEnqueueReleaseExternalMemObjectsKHR);
    let mut aev = null_mut();
    ok(unsafe { acquire(env.queue, 1, &m, 0, null(), &mut aev) });
    let k = env.kern(
        "kernel void f(global int* a) { size_t i = get_global_id(0); a[i] = a[i] * 2 + 1; }",
        "f",
    );
    arg_mem(k, 0, m);
    ok(unsafe {
        cl!(clEnqueueNDRangeKernel)(env.queue, k, 1, null(), &n, null(), 0, null(), null_mut())
    });
    let mut rev = null_mut();
    ok(unsafe { release(env.queue, 1, &m, 0, null(), &mut rev) });
    ok(unsafe { cl!(clWaitForEvents)(1, &rev) });
    let ty_of = |e: cl_event| -> cl_command_type {
        info_scalar(|s, v, r| unsafe { cl!(clGetEventInfo)(e, CL_EVENT_COMMAND_TYPE, s, v, r) })
    };
    assert_eq!(ty_of(aev), CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
    assert_eq!(ty_of(rev), CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR);
    let want: Vec<i32> = (0..n as i32).map(|i| i * 6 + 1).collect();
    assert_eq!(
        shared,
        &want[..],
        "Vulkan's mapping after the OpenCL kernel"
    );
    shared.iter_mut().for_each(|x| *x = -*x);
    let back: Vec<i32> = env.read(m, n);
    assert_eq!(
        back,
        want.iter().map(|x| -x).collect::<Vec<_>>(),
        "OpenCL's read after Vulkan's write"
    );

    // Acquire and release errors.
    let plain = env.zeros::<i32>(4);
    assert_eq!(
        unsafe { acquire(env.queue, 1, &plain, 0, null(), null_mut()) },
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(
        unsafe { release(env.queue, 0, &m, 0, null(), null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe { acquire(env.queue, 1, null(), 0, null(), null_mut()) },
        CL_INVALID_VALUE
    );
    assert_eq!(
        unsafe { acquire(null_mut(), 1, &m, 0, null(), null_mut()) },
        CL_INVALID_COMMAND_QUEUE
    );
    assert_eq!(
        unsafe { acquire(env.queue, 1, &m, 1, null(), null_mut()) },
        CL_INVALID_EVENT_WAIT_LIST
    );
    let other = Env::new();
    assert_eq!(
        unsafe { acquire(other.queue, 1, &m, 0, null(), null_mut()) },
        CL_INVALID_CONTEXT
    );

    env.finish();
    for e in [aev, rev] {
        ok(unsafe { cl!(clReleaseEvent)(e) });
    }
    ok(unsafe { cl!(clReleaseMemObject)(m) });
    ok(unsafe { cl!(clReleaseMemObject)(plain) });
    // SAFETY: OpenCL no longer uses the memory; each object destroyed once.
    unsafe {
        vkd.device.unmap_memory(memory);
        vkd.device.destroy_buffer(buffer, None);
        vkd.device.free_memory(memory, None);
    }
}

#[test]
fn platform_and_device_queries() {
    let env = Env::new();
    let mut n = 0;
    ok(unsafe {
        cl!(clGetPlatformInfo)(
            env.platform,
            CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
            0,
            null_mut(),
            &mut n,
        )
    });
    let offered = env.has_extension("cl_khr_external_memory_opaque_fd");
    assert_eq!(n, if offered { 4 } else { 0 });
    let r = unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR,
            0,
            null_mut(),
            &mut n,
        )
    };
    if offered {
        assert_eq!((r, n), (CL_SUCCESS, 0));
    } else {
        assert_eq!(r, CL_INVALID_VALUE);
    }
}
