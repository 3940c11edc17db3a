//! The `VKCL_*` settings, read once from the environment (documented in docs/settings.md).

use super::cache_file::CacheConfig;
use std::sync::OnceLock;

/// What to do with messages from the Khronos validation layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validation {
    /// Layer not enabled (default).
    Off,
    /// `VKCL_VALIDATION=1`: layer enabled, errors printed to stderr and counted.
    Report,
    /// `VKCL_VALIDATION=fatal`: as `Report`, and the process aborts at the first error (tests).
    Fatal,
}

/// Where buffers live (`VKCL_DEVICE_LOCAL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceLocal {
    /// Host-visible memory, mapped for the buffer's life (the default).
    Off,
    /// Device-local memory the host does not map, on discrete GPUs (`1`); every host access
    /// goes through staging.
    Discrete,
    /// As `Discrete` on every device, lavapipe included (`force`: how tests cover the path).
    Force,
}

/// How a kernel on a sub-device keeps to its compute units (`VKCL_SUBDEVICE_DISPATCH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitedDispatch {
    /// One dispatch of at most `L` groups of the persistent variant, which loop over the
    /// NDRange's groups (GPUs: dispatches on one queue may run concurrently).
    Persistent,
    /// Consecutive dispatches ("waves") of at most `L` groups of the plain pipeline (lavapipe:
    /// one dispatch runs at a time, and llvmpipe caps the loop iterations of one shader
    /// invocation at 65535 in total, which a persistent loop would exceed).
    Waves,
}

/// All settings. See docs/settings.md.
#[derive(Debug, Clone)]
pub struct Config {
    /// `VKCL_LOG`: a tracing filter (`debug`, `vkcl=trace`, ...); logging is off when unset.
    pub log: Option<String>,
    /// `VKCL_VALIDATION`: `1` or `fatal`.
    pub validation: Validation,
    /// `VKCL_DUMP_SPIRV=DIR`: every kernel's lowered Vulkan SPIR-V (what the driver compiles)
    /// is also written to `DIR/<kernel>-<hash>.spv`, for reports of driver bugs.
    pub dump_spirv: Option<std::path::PathBuf>,
    /// `VKCL_UNDEF_AS_NULL`: `1` defines every undefined numeric value in kernels as zero,
    /// `0` never; unset: on NVIDIA's driver only (see `compiler/lower/undef.rs`).
    pub undef_as_null: Option<bool>,
    /// `VKCL_SPIRV_VAL` (default on; `0` or `off`: off): every lowered module goes through
    /// spirv-val, when it is installed, before Vulkan sees it.
    pub spirv_val: bool,
    /// `VKCL_COMMAND_BUFFER_REVISION=0.9.4`: the pre-0.9.5 `cl_khr_command_buffer` ABI.
    pub command_buffer_094: bool,
    /// `VKCL_COMMAND_BUFFER_REVISION=0.9.8`: `cl_khr_command_buffer` reported as 0.9.8, the
    /// last provisional revision (same ABI and semantics as the final 1.0.0, the default),
    /// for applications that look for that version.
    pub command_buffer_098: bool,
    /// `cl_khr_command_buffer_multi_device` 0.9.2 reported (command buffers of several
    /// queues, `clRemapCommandBufferKHR`): on unless `VKCL_COMMAND_BUFFER_MULTI_DEVICE=0` or
    /// `VKCL_COMMAND_BUFFER_REVISION=0.9.4` (whose ABI predates it).
    pub command_buffer_multi_device: bool,
    /// `VKCL_COPY_KERNEL`: `1` copies large 16-byte-aligned buffers and images of one type
    /// with vkcl's copy shaders, `0` always with `vkCmdCopyBuffer` / `vkCmdCopyImage`; unset:
    /// the shaders on NVIDIA's driver only (`backend/vulkan/copy_kernel.rs`,
    /// `image_copy_kernel.rs`).
    pub copy_kernel: Option<bool>,
    /// `VKCL_GPU_TIMEOUT_MS`: a wait for a device command that has not ended after this long
    /// marks the device lost (its commands fail with `CL_OUT_OF_RESOURCES`), as a display
    /// driver's watchdog would; None (unset or 0): no limit. For GPUs whose driver reports no
    /// device loss after a fault (NVIDIA's, docs/features.md).
    pub gpu_timeout: Option<std::time::Duration>,
    /// `VKCL_GPU_FAULT_WATCH` (default on; `0`: off): on NVIDIA GPUs, NVML's critical Xid
    /// events end the waits of commands that make no progress after a GPU fault
    /// (`backend/vulkan/xid.rs`).
    pub gpu_fault_watch: bool,
    /// `VKCL_OPENCL_VERSION=3.0`: every device and the platform report OpenCL 3.0 even where
    /// OpenCL 3.1's requirements hold (core::version), for comparisons with 3.0 behaviour.
    pub opencl_30: bool,
    /// `VKCL_SUBDEVICE_DISPATCH`: `persistent` or `waves`; None: the device's default.
    pub subdevice_dispatch: Option<LimitedDispatch>,
    /// `VKCL_STAGED_READS=1`: every host access to buffers that can go through host-cached
    /// staging memory does (reads, rectangular reads and writes, maps); by default only
    /// accesses to memory the host reads slowly (NVIDIA's device-local BAR) do.
    pub staged_reads: bool,
    /// `VKCL_STAGING_POOL_MB` (default 256): how many MiB of idle staging buffers each Vulkan
    /// device keeps for reuse; larger staging buffers are freed after use.
    pub staging_pool_bytes: u64,
    /// `VKCL_READ_CHUNK_MB` (default 8): staged reads larger than this many MiB are split into
    /// pipelined chunks of it (`core/chunked.rs`); `0`: one staged copy for the whole read.
    pub read_chunk_bytes: usize,
    /// `VKCL_HOST_COPY_THREADS`: threads that copy large staged data out to the application
    /// (`util/host_copy.rs`); default half the CPUs, at most 8 and at least 1.
    pub host_copy_threads: usize,
    /// `VKCL_DEVICE_LOCAL`: `1` puts buffers (not `CL_MEM_ALLOC_HOST_PTR` ones, not those of
    /// contexts with green-context sub-devices) in device-local memory the host does not map,
    /// on discrete GPUs; `force` on every device; unset or `0`: host-visible memory.
    pub device_local: DeviceLocal,
    /// `VKCL_IMAGES=1` (experimental, docs/images.md): devices report `CL_DEVICE_IMAGE_SUPPORT`
    /// and the image limits and formats of the Vulkan driver.
    pub images: bool,
    /// The program and pipeline cache: `$VKCL_CACHE_DIR`, else `~/.cache/vkcl` (the user's
    /// cache directory), bounded by `VKCL_CACHE_MAX_MB` (default 256); `None` when
    /// `VKCL_CACHE=0` or no cache directory is known.
    pub cache: Option<CacheConfig>,
    /// `VKCL_CUDA`: `0` turns the CUDA path (green-context sub-devices on NVIDIA) off;
    /// on by default (it is inert where no CUDA driver is found).
    pub cuda: bool,
    /// `VKCL_CUDA_SYNC`: how commands of green-context queues order with Vulkan queues'
    /// commands (see [`CudaSync`]).
    pub cuda_sync: CudaSync,
    /// `VKCL_CROSS_QUEUE_WAIT`: `host` or `device`: whether a Vulkan submission that depends on
    /// another queue's command waits for it on the host before submitting, or in the submit
    /// (a timeline-semaphore wait); None: the device's default (host on GPUs, device on CPUs).
    pub cross_queue_host_wait: Option<bool>,
    /// `VKCL_HANDOFF_SPIN_US`: how long (microseconds) a queue's submit and completion threads
    /// and `clFinish` poll for the next step before they block (futex sleep); None: the
    /// device's default ([`crate::backend::vulkan::queue::HANDOFF_SPIN_GPU`] on GPUs, 0 on CPU
    /// devices, whose cores run the kernels).
    pub handoff_spin_us: Option<u64>,
    /// `VKCL_QUEUE_FAMILY`: `compute` (the default) runs commands on a compute-only queue
    /// family where the device has one (NVIDIA's asynchronous compute queues), `any` on the
    /// first family with compute (on NVIDIA the graphics family).
    pub compute_only_family: bool,
    /// `VKCL_LAUNCH_BUFFER_REUSE` (default on; `0`: off): launches reuse the launch buffers of
    /// finished launches on their device instead of allocating one each.
    pub launch_buffer_reuse: bool,
    /// `VKCL_FP64`: `1` (or unset: [`FP64_DEFAULT`]) reports `cl_khr_fp64` and
    /// `__opencl_c_fp64` on devices with `shaderFloat64` and `shaderInt64`, `0` never.
    pub fp64: bool,
    /// `VKCL_FP16`: `Some(true)` (`1`) reports `cl_khr_fp16` (`CL_DEVICE_HALF_FP_CONFIG`) on
    /// devices with `shaderFloat16` and 16-bit storage, `Some(false)` (`0`) never; `None`
    /// (unset): the device's default (`Device::has_fp16`).
    pub fp16: Option<bool>,
    /// `VKCL_BOUNDS_CHECK=1`: kernels run as their bounds-check variant (every global access
    /// checked against the launch's buffers; a violation fails the command with
    /// `CL_OUT_OF_RESOURCES`). Off by default.
    pub bounds_check: bool,
}

/// Whether `double` is reported (on capable devices) when `VKCL_FP64` is unset: yes (the
/// exact software `fma(double)` in `compiler/mathlib.cl` keeps the double math built-ins
/// affordable to compile on lavapipe).
pub const FP64_DEFAULT: bool = true;

/// How a green-context queue's command waits for other queues' commands and tells them it
/// completed (`VKCL_CUDA_SYNC`): through the Vulkan timelines imported into CUDA, on the device
/// (`device`), or on the host: the submission thread waits for the values before enqueuing
/// (`host-wait`), a CUDA host function signals the queue's timeline (`host-signal`), or both
/// (`host`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaSync {
    /// Waits on other queues' timeline values are made on the host.
    pub host_wait: bool,
    /// The queue's timeline value is signalled from the host (a CUDA host function).
    pub host_signal: bool,
}

impl Config {
    fn from_env() -> Config {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        // An on/off setting: `1`, `on`, `true` / `0`, `off`, `false`; None when unset or other.
        let switch = |k: &str| match var(k).as_deref() {
            Some("1") | Some("on") | Some("true") => Some(true),
            Some("0") | Some("off") | Some("false") => Some(false),
            _ => None,
        };
        let validation = match var("VKCL_VALIDATION").as_deref() {
            None | Some("0") | Some("off") => Validation::Off,
            Some("fatal") => Validation::Fatal,
            Some(_) => Validation::Report,
        };
        let spirv_val = !matches!(var("VKCL_SPIRV_VAL").as_deref(), Some("0") | Some("off"));
        let command_buffer_094 = var("VKCL_COMMAND_BUFFER_REVISION").as_deref() == Some("0.9.4");
        let command_buffer_098 = var("VKCL_COMMAND_BUFFER_REVISION").as_deref() == Some("0.9.8");
        let subdevice_dispatch = match var("VKCL_SUBDEVICE_DISPATCH").as_deref() {
            Some("persistent") => Some(LimitedDispatch::Persistent),
            Some("waves") => Some(LimitedDispatch::Waves),
            _ => None,
        };
        let cache_off = matches!(
            var("VKCL_CACHE").as_deref(),
            Some("0") | Some("off") | Some("false") | Some("no")
        );
        let cache_dir = var("VKCL_CACHE_DIR")
            .map(std::path::PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("vkcl")));
        let max_mb = var("VKCL_CACHE_MAX_MB")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(256);
        let cache = cache_dir.filter(|_| !cache_off).map(|dir| CacheConfig {
            dir,
            max_bytes: max_mb << 20,
        });
        let cuda = !matches!(var("VKCL_CUDA").as_deref(), Some("0") | Some("off"));
        let cuda_sync = match var("VKCL_CUDA_SYNC").as_deref() {
            Some("host-wait") => CudaSync {
                host_wait: true,
                host_signal: false,
            },
            Some("host-signal") => CudaSync {
                host_wait: false,
                host_signal: true,
            },
            Some("host") => CudaSync {
                host_wait: true,
                host_signal: true,
            },
            // The default: on the device (docs/h200.md, "Cross-queue dependencies").
            _ => CudaSync {
                host_wait: false,
                host_signal: false,
            },
        };
        let cross_queue_host_wait = match var("VKCL_CROSS_QUEUE_WAIT").as_deref() {
            Some("host") => Some(true),
            Some("device") => Some(false),
            _ => None,
        };
        let compute_only_family = var("VKCL_QUEUE_FAMILY").as_deref() != Some("any");
        let handoff_spin_us = var("VKCL_HANDOFF_SPIN_US").and_then(|v| v.parse::<u64>().ok());
        let fp64 = switch("VKCL_FP64").unwrap_or(FP64_DEFAULT);
        let fp16 = switch("VKCL_FP16");
        let bounds_check = switch("VKCL_BOUNDS_CHECK") == Some(true);
        Config {
            bounds_check,
            fp64,
            fp16,
            cache,
            cuda,
            cuda_sync,
            cross_queue_host_wait,
            handoff_spin_us,
            compute_only_family,
            launch_buffer_reuse: !matches!(
                var("VKCL_LAUNCH_BUFFER_REUSE").as_deref(),
                Some("0") | Some("off")
            ),
            log: var("VKCL_LOG"),
            dump_spirv: var("VKCL_DUMP_SPIRV").map(std::path::PathBuf::from),
            undef_as_null: switch("VKCL_UNDEF_AS_NULL"),
            validation,
            spirv_val,
            command_buffer_094,
            command_buffer_098,
            copy_kernel: switch("VKCL_COPY_KERNEL"),
            command_buffer_multi_device: !command_buffer_094
                && !matches!(
                    var("VKCL_COMMAND_BUFFER_MULTI_DEVICE").as_deref(),
                    Some("0") | Some("off")
                ),
            gpu_fault_watch: switch("VKCL_GPU_FAULT_WATCH") != Some(false),
            gpu_timeout: var("VKCL_GPU_TIMEOUT_MS")
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&ms| ms > 0)
                .map(std::time::Duration::from_millis),
            opencl_30: var("VKCL_OPENCL_VERSION").as_deref() == Some("3.0"),
            subdevice_dispatch,
            staged_reads: var("VKCL_STAGED_READS").as_deref() == Some("1"),
            device_local: match var("VKCL_DEVICE_LOCAL").as_deref() {
                Some("1") | Some("on") => DeviceLocal::Discrete,
                Some("force") => DeviceLocal::Force,
                _ => DeviceLocal::Off,
            },
            staging_pool_bytes: var("VKCL_STAGING_POOL_MB")
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(256)
                .saturating_mul(1 << 20),
            read_chunk_bytes: var("VKCL_READ_CHUNK_MB")
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(8)
                .saturating_mul(1 << 20),
            host_copy_threads: var("VKCL_HOST_COPY_THREADS")
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or_else(|| {
                    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
                    (cpus / 2).clamp(1, 8)
                })
                .max(1),
            images: var("VKCL_IMAGES").as_deref() == Some("1"),
        }
    }
}

/// The process-wide settings, read at first use.
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let c = Config::from_env();
        if let Some(filter) = &c.log {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
                .with_writer(std::io::stderr)
                .try_init();
        }
        c
    })
}
