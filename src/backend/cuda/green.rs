//! Green contexts: SM resources, their splits, contexts made from them, PTX modules loaded in
//! them and kernels launched on their streams (CUDA driver API, CUDA 12.4 and newer).
//!
//! Facts of the H200 with driver 580 (CUDA 13.0), see DESIGN.md "Sub-devices": the driver
//! splits SMs in co-scheduled groups of 8, or of 2 with
//! `CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING`; a green context needs
//! `CU_GREEN_CTX_DEFAULT_STREAM` and its streams `CU_STREAM_NON_BLOCKING`.

use super::{check, CuError, CudaDevice};
use cudarc::driver::sys;
use std::ffi::{c_void, CStr};
use std::sync::Mutex;

/// Serialises SM splits and green-context creation in the process: run from several threads
/// at once, NVIDIA's driver (580, H200) refuses some `cuDevSmResourceSplitByCount` calls with
/// `CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION` ("one or more resources are insufficient or
/// non-applicable") that succeed one at a time.
static SPLIT_LOCK: Mutex<()> = Mutex::new(());

/// How SMs are carved (vkcl's partition property, docs/subdevices.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMethod {
    /// Whole co-scheduled groups of 8 SMs (thread-block clusters possible): a count rounds up
    /// to the next 8, leftover SMs stay unused. The default.
    Aligned,
    /// Every requested SM, in groups of 2 (`IGNORE_SM_COSCHEDULING`; no clusters).
    Fine,
    /// EQUALLY shares that together cover the whole device: as many shares as `n` fits, the
    /// leftover SMs spread over them (groups of 2, the last takes any odd rest). With
    /// BY_COUNTS it is [`SplitMethod::Fine`].
    Backfill,
}

impl SplitMethod {
    fn flags(self) -> u32 {
        match self {
            SplitMethod::Aligned => 0,
            SplitMethod::Fine | SplitMethod::Backfill => {
                sys::CUdevSmResourceSplit_flags::CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING
                    as u32
            }
        }
    }
}

/// An SM resource (`CUdevResource` of type SM): a device's SMs or a part split from them.
#[derive(Clone, Copy)]
pub struct SmResource(sys::CUdevResource);

// SAFETY: a plain descriptor value, no pointers the driver keeps.
unsafe impl Send for SmResource {}
// SAFETY: as above; never mutated once made.
unsafe impl Sync for SmResource {}

impl std::fmt::Debug for SmResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SmResource({} SMs)", self.sm_count())
    }
}

/// What to split: EQUALLY (`max` shares of at least `size` SMs, as many as fit) or BY_COUNTS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitRequest {
    /// As many shares of `size` SMs as fit, at most `max`.
    Equally { size: u32, max: u32 },
    /// One part per count, in order.
    Counts(Vec<u32>),
}

fn empty_resource() -> sys::CUdevResource {
    // SAFETY: CUdevResource is plain old data (an enum tag whose 0 is invalid but never read
    // before the driver writes it, padding, and a union of integers).
    unsafe { std::mem::zeroed() }
}

impl SmResource {
    /// All SMs of `dev` (`cuDeviceGetDevResource`).
    pub(crate) fn of_device(dev: &CudaDevice) -> Result<SmResource, CuError> {
        let mut r = empty_resource();
        // SAFETY: valid device handle and output.
        check(
            unsafe {
                sys::cuDeviceGetDevResource(
                    dev.raw,
                    &mut r,
                    sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
                )
            },
            "cuDeviceGetDevResource",
        )?;
        Ok(SmResource(r))
    }

    /// The SMs this resource holds.
    pub fn sm_count(&self) -> u32 {
        // SAFETY: an SM-type resource: the `sm` member of the union is the one written.
        unsafe { self.0.__bindgen_anon_1.sm.smCount }
    }

    /// One driver split of `self` (`cuDevSmResourceSplitByCount`): up to `groups` parts of
    /// at least `min` SMs each, and the rest.
    pub fn split_by_count(
        &self,
        groups: u32,
        min: u32,
        method: SplitMethod,
    ) -> Result<(Vec<SmResource>, SmResource), CuError> {
        self.split_once(groups, min, method.flags())
    }

    /// One split of `self`: up to `groups` parts of at least `min` SMs each and the rest.
    fn split_once(
        &self,
        groups: u32,
        min: u32,
        flags: u32,
    ) -> Result<(Vec<SmResource>, SmResource), CuError> {
        let _one_at_a_time = SPLIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = vec![empty_resource(); groups as usize];
        let mut n = groups;
        let mut rest = empty_resource();
        // SAFETY: `out` holds `groups` resources; input and outputs are valid.
        let r = unsafe {
            sys::cuDevSmResourceSplitByCount(
                out.as_mut_ptr(),
                &mut n,
                &self.0,
                &mut rest,
                flags,
                min,
            )
        };
        check(r, "cuDevSmResourceSplitByCount")?;
        out.truncate(n as usize);
        Ok((out.into_iter().map(SmResource).collect(), SmResource(rest)))
    }

    /// The driver's split granularity for `method`: `smCoscheduledAlignment` (8 on the H200)
    /// when aligned; 2 otherwise (with `IGNORE_SM_COSCHEDULING` the H200's driver splits in
    /// 2s although `minSmPartitionSize` says 8).
    pub fn granularity(&self, method: SplitMethod) -> u32 {
        // SAFETY: an SM-type resource: the `sm` member of the union is the one written.
        let sm = unsafe { self.0.__bindgen_anon_1.sm };
        match method {
            SplitMethod::Aligned => sm.smCoscheduledAlignment.max(2),
            SplitMethod::Fine | SplitMethod::Backfill => 2,
        }
    }

    /// Splits this resource as `request` asks, by `method`. `Ok(None)` when the parts cannot
    /// fit (the caller's `CL_DEVICE_PARTITION_FAILED`). Each part is a list of SM resources
    /// of one split (for [`GreenContext::new`]); its SMs are the sum of their counts.
    ///
    /// - EQUALLY (aligned, fine): one driver split into as many parts of at least `size` SMs
    ///   as fit (at most `max`); the driver rounds each up to its granularity.
    /// - BY_COUNTS: equal counts in one driver split; different counts from the device's
    ///   smallest units (one split; the H200's driver refuses to split the rest of a split
    ///   again), each count taking whole units in order.
    /// - Backfill (EQUALLY): the device split into its smallest units, handed out largest
    ///   first to the share with the fewest SMs so far: the shares cover every SM.
    ///
    /// Errors: the driver's.
    pub fn split(
        &self,
        request: &SplitRequest,
        method: SplitMethod,
    ) -> Result<Option<Vec<Vec<SmResource>>>, CuError> {
        let total = self.sm_count();
        let flags = method.flags();
        match (request, method) {
            (SplitRequest::Equally { size, max }, SplitMethod::Backfill) => {
                let g = self.granularity(method);
                let k = (total / size.max(&1)).min(*max) as usize;
                if k == 0 || total < g {
                    return Ok(None);
                }
                let (mut units, rest) = self.split_once(total / g, g, flags)?;
                if rest.sm_count() > 0 {
                    units.push(rest);
                }
                if units.len() < k {
                    return Ok(None);
                }
                units.sort_by_key(|u| std::cmp::Reverse(u.sm_count()));
                let mut parts: Vec<Vec<SmResource>> = vec![Vec::new(); k];
                for u in units {
                    let i = (0..k)
                        .min_by_key(|&i| (sm_count_of(&parts[i]), i))
                        .unwrap_or(0);
                    parts[i].push(u);
                }
                if parts.iter().any(|p| sm_count_of(p) < *size) {
                    return Ok(None);
                }
                Ok(Some(parts))
            }
            (SplitRequest::Equally { size, max }, _) => {
                let (parts, _) = self.split_once(*max, *size, flags)?;
                if parts.is_empty() || parts.iter().any(|p| p.sm_count() < *size) {
                    return Ok(None);
                }
                Ok(Some(parts.into_iter().map(|p| vec![p]).collect()))
            }
            (SplitRequest::Counts(counts), _) => {
                if let Some(parts) = self.split_counts_directly(counts, flags)? {
                    return Ok(Some(parts));
                }
                self.split_counts_by_units(counts, method)
            }
        }
    }

    /// BY_COUNTS of equal counts as one driver split (the driver packs equal co-scheduled
    /// parts best that way: 64 + 64 of the H200's 132 SMs, where units give one 64).
    /// `Ok(None)` for different counts or when the split does not give what was asked.
    fn split_counts_directly(
        &self,
        counts: &[u32],
        flags: u32,
    ) -> Result<Option<Vec<Vec<SmResource>>>, CuError> {
        let mut sizes: Vec<u32> = counts.to_vec();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        sizes.dedup();
        if sizes.len() != 1 {
            return Ok(None);
        }
        let mut rest = *self;
        let mut made: Vec<(u32, Vec<SmResource>)> = Vec::new();
        for v in sizes {
            let k = counts.iter().filter(|&&c| c == v).count() as u32;
            if rest.sm_count() < v * k {
                return Ok(None);
            }
            let (parts, r) = match rest.split_once(k, v, flags) {
                Ok(r) => r,
                Err(e)
                    if e.code == sys::CUresult::CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
                        || e.code == sys::CUresult::CUDA_ERROR_INVALID_VALUE =>
                {
                    tracing::debug!("split of {v} x {k} from {} SMs: {e}", rest.sm_count());
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            if parts.len() as u32 != k || parts.iter().any(|p| p.sm_count() < v) {
                return Ok(None);
            }
            made.push((v, parts));
            rest = r;
        }
        // Back to the order of `counts`.
        let mut out = Vec::with_capacity(counts.len());
        for c in counts {
            let Some((_, parts)) = made.iter_mut().find(|(v, p)| v == c && !p.is_empty()) else {
                return Ok(None);
            };
            out.push(vec![parts.remove(0)]);
        }
        Ok(Some(out))
    }

    /// BY_COUNTS from the device's smallest units (one driver split): each count takes units,
    /// in order, until it has at least its SMs.
    fn split_counts_by_units(
        &self,
        counts: &[u32],
        method: SplitMethod,
    ) -> Result<Option<Vec<Vec<SmResource>>>, CuError> {
        let g = self.granularity(method);
        let total = self.sm_count();
        if total < g {
            return Ok(None);
        }
        let (units, _) = self.split_once(total / g, g, method.flags())?;
        let mut it = units.into_iter();
        let mut out = Vec::with_capacity(counts.len());
        for &c in counts {
            let mut part = Vec::new();
            while sm_count_of(&part) < c {
                let Some(u) = it.next() else {
                    return Ok(None);
                };
                part.push(u);
            }
            out.push(part);
        }
        Ok(Some(out))
    }
}

/// The SMs of a part made by [`SmResource::split`].
pub fn sm_count_of(part: &[SmResource]) -> u32 {
    part.iter().map(SmResource::sm_count).sum()
}

/// A green context: a CUDA context limited to the SMs of some [`SmResource`]s, with its own
/// non-blocking stream. Destroyed with its stream on drop.
pub struct GreenContext {
    raw: sys::CUgreenCtx,
    /// The context view of the green context (`cuCtxFromGreenCtx`), for `cuCtxSetCurrent`.
    pub ctx: sys::CUcontext,
    /// The green context's stream (`cuGreenCtxStreamCreate`, non-blocking).
    pub stream: sys::CUstream,
    /// The SMs the green context really holds (`cuGreenCtxGetDevResource`).
    pub sm_count: u32,
    /// Its SMs as one resource (`cuGreenCtxGetDevResource`): the input of nested splits.
    pub resource: SmResource,
    /// PTX modules loaded in this context, by the caller's key (None: the load failed).
    pub modules: std::sync::Mutex<std::collections::HashMap<u64, Option<std::sync::Arc<Module>>>>,
    /// The bridge to Vulkan timelines (see [`GreenContext::submit`]).
    bridge: Bridge,
}

/// Waits on and signals of imported Vulkan timelines go through a stream of the primary
/// context (the driver refuses external semaphores on green-context streams with
/// CUDA_ERROR_INVALID_HANDLE), ordered with the green stream by two events; the lock keeps
/// each record-then-wait pair of one submission together.
struct Bridge {
    primary: sys::CUcontext,
    stream: sys::CUstream,
    to_green: sys::CUevent,
    to_bridge: sys::CUevent,
    lock: std::sync::Mutex<()>,
}

impl Bridge {
    /// # Safety
    /// `primary` is a live context of the device.
    unsafe fn new(primary: sys::CUcontext) -> Result<Bridge, CuError> {
        let mut stream = std::ptr::null_mut();
        let mut to_green = std::ptr::null_mut();
        let mut to_bridge = std::ptr::null_mut();
        let flags = sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        // SAFETY (whole block): valid outputs; what was made is destroyed on the error paths.
        unsafe {
            check(sys::cuCtxSetCurrent(primary), "cuCtxSetCurrent")?;
            check(
                sys::cuStreamCreate(
                    &mut stream,
                    sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                ),
                "cuStreamCreate",
            )?;
            if let Err(e) = check(sys::cuEventCreate(&mut to_green, flags), "cuEventCreate") {
                sys::cuStreamDestroy_v2(stream);
                return Err(e);
            }
            if let Err(e) = check(sys::cuEventCreate(&mut to_bridge, flags), "cuEventCreate") {
                sys::cuEventDestroy_v2(to_green);
                sys::cuStreamDestroy_v2(stream);
                return Err(e);
            }
        }
        Ok(Bridge {
            primary,
            stream,
            to_green,
            to_bridge,
            lock: std::sync::Mutex::new(()),
        })
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // SAFETY: made by `new`, destroyed once; nothing is pending on them once the green
        // context (their only user) is dropped.
        unsafe {
            sys::cuStreamSynchronize(self.stream);
            sys::cuEventDestroy_v2(self.to_green);
            sys::cuEventDestroy_v2(self.to_bridge);
            sys::cuStreamDestroy_v2(self.stream);
        }
    }
}

// SAFETY: driver handles, usable from any thread; launches on one stream are serialised by
// the driver.
unsafe impl Send for GreenContext {}
// SAFETY: as above.
unsafe impl Sync for GreenContext {}

impl std::fmt::Debug for GreenContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GreenContext({} SMs)", self.sm_count)
    }
}

impl GreenContext {
    /// A green context of `dev` on the SMs of `sm`, one or several SM resources of one split
    /// (`cuDevResourceGenerateDesc`, `cuGreenCtxCreate`, `cuGreenCtxStreamCreate`).
    ///
    /// Errors: the driver's (out of resources, a resource from another device).
    pub fn new(dev: &CudaDevice, sm: &[SmResource]) -> Result<GreenContext, CuError> {
        let _one_at_a_time = SPLIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut res: Vec<sys::CUdevResource> = sm.iter().map(|r| r.0).collect();
        let mut desc = std::ptr::null_mut();
        let mut raw = std::ptr::null_mut();
        // SAFETY (whole block): valid handles and outputs; each object made here is destroyed
        // on the error paths that follow it.
        unsafe {
            check(
                sys::cuDevResourceGenerateDesc(&mut desc, res.as_mut_ptr(), res.len() as u32),
                "cuDevResourceGenerateDesc",
            )?;
            check(
                sys::cuGreenCtxCreate(
                    &mut raw,
                    desc,
                    dev.raw,
                    sys::CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM as u32,
                ),
                "cuGreenCtxCreate",
            )?;
            let made = (|| {
                let mut ctx = std::ptr::null_mut();
                check(sys::cuCtxFromGreenCtx(&mut ctx, raw), "cuCtxFromGreenCtx")?;
                let mut stream = std::ptr::null_mut();
                check(
                    sys::cuGreenCtxStreamCreate(
                        &mut stream,
                        raw,
                        sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                        0,
                    ),
                    "cuGreenCtxStreamCreate",
                )?;
                let mut got = empty_resource();
                let r = sys::cuGreenCtxGetDevResource(
                    raw,
                    &mut got,
                    sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
                );
                if let Err(e) = check(r, "cuGreenCtxGetDevResource") {
                    sys::cuStreamDestroy_v2(stream);
                    return Err(e);
                }
                let bridge = match Bridge::new(dev.primary) {
                    Ok(b) => b,
                    Err(e) => {
                        sys::cuStreamDestroy_v2(stream);
                        return Err(e);
                    }
                };
                Ok((ctx, stream, SmResource(got), bridge))
            })();
            match made {
                Ok((ctx, stream, resource, bridge)) => Ok(GreenContext {
                    bridge,
                    raw,
                    ctx,
                    stream,
                    sm_count: resource.sm_count(),
                    resource,
                    modules: Default::default(),
                }),
                Err(e) => {
                    sys::cuGreenCtxDestroy(raw);
                    Err(e)
                }
            }
        }
    }

    /// Makes this green context current on the calling thread.
    pub fn make_current(&self) -> Result<(), CuError> {
        // SAFETY: a live context.
        check(unsafe { sys::cuCtxSetCurrent(self.ctx) }, "cuCtxSetCurrent")
    }

    /// Checks the work enqueued on the green context's stream and on its bridge stream
    /// (`cuStreamQuery`, without waiting): `Err` with the driver's error once it failed (a
    /// fault in a kernel leaves the context's sticky error), `Ok` while it runs or is done.
    pub fn check_streams(&self) -> Result<(), CuError> {
        for (ctx, stream) in [
            (self.ctx, self.stream),
            (self.bridge.primary, self.bridge.stream),
        ] {
            // SAFETY: live contexts and streams.
            let r = unsafe {
                check(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent")?;
                sys::cuStreamQuery(stream)
            };
            if r != sys::CUresult::CUDA_ERROR_NOT_READY {
                check(r, "cuStreamQuery")?;
            }
        }
        Ok(())
    }

    /// Waits for everything enqueued on the green context's stream.
    pub fn synchronize(&self) -> Result<(), CuError> {
        // SAFETY: a live stream.
        check(
            unsafe { sys::cuStreamSynchronize(self.stream) },
            "cuStreamSynchronize",
        )
    }

    /// Launches `f` on this green context's stream: `grid` groups of `block` work-items,
    /// `params` one pointer per kernel argument (to the argument's value), as
    /// `cuLaunchKernel` takes them.
    ///
    /// # Safety
    /// `f` must come from a module loaded in this context and `params` must match its
    /// parameter list; the memory the arguments name must stay alive until the kernel ends.
    pub unsafe fn launch(
        &self,
        f: sys::CUfunction,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CuError> {
        // SAFETY: forwarded contract.
        unsafe { self.launch_on(self.stream, f, grid, block, shared_bytes, params) }
    }

    /// [`launch`](Self::launch) on `stream`, a stream of this context (its own, or one being
    /// captured into a graph: [`GreenContext::capture`]).
    ///
    /// # Safety
    /// As [`launch`](Self::launch).
    pub unsafe fn launch_on(
        &self,
        stream: Stream,
        f: sys::CUfunction,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CuError> {
        // SAFETY: forwarded contract.
        check(
            unsafe {
                sys::cuLaunchKernel(
                    f,
                    grid[0],
                    grid[1],
                    grid[2],
                    block[0],
                    block[1],
                    block[2],
                    shared_bytes,
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
            "cuLaunchKernel",
        )
    }

    /// Captures what `record` enqueues, in order, on a new stream of this context (given to
    /// it) into a CUDA graph (`cuStreamBeginCapture`, `cuStreamEndCapture`,
    /// `cuGraphInstantiateWithFlags`): each piece of work depends on everything before it.
    /// Errors: the driver's, or `record`'s.
    pub fn capture(
        &self,
        record: impl FnOnce(Stream) -> Result<(), CuError>,
    ) -> Result<Graph, CuError> {
        self.make_current()?;
        let mut stream = std::ptr::null_mut();
        // SAFETY (whole block): live context; the capture stream is destroyed at the end; a
        // failed capture is ended before the error returns.
        unsafe {
            check(
                sys::cuGreenCtxStreamCreate(
                    &mut stream,
                    self.raw,
                    sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                    0,
                ),
                "cuGreenCtxStreamCreate",
            )?;
            let result = (|| {
                check(
                    sys::cuStreamBeginCapture_v2(
                        stream,
                        sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                    ),
                    "cuStreamBeginCapture",
                )?;
                let body = record(stream);
                let mut graph = std::ptr::null_mut();
                let ended = check(
                    sys::cuStreamEndCapture(stream, &mut graph),
                    "cuStreamEndCapture",
                );
                body?;
                ended?;
                let mut exec = std::ptr::null_mut();
                if let Err(e) = check(
                    sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
                    "cuGraphInstantiateWithFlags",
                ) {
                    sys::cuGraphDestroy(graph);
                    return Err(e);
                }
                Ok(Graph { graph, exec })
            })();
            sys::cuStreamDestroy_v2(stream);
            result
        }
    }

    /// Enqueues work on this green context's stream, ordered after `waits` and followed by
    /// `signal`, without blocking the calling thread: each wait is a value of a Vulkan timeline
    /// imported into CUDA, waited for on the primary-context bridge stream
    /// (`cuWaitExternalSemaphoresAsync`) and passed to the green stream by an event; `body`
    /// enqueues the work on this context's stream ([`launch`](Self::launch),
    /// [`copy_on`](Self::copy_on), [`fill_on`](Self::fill_on)); then the green stream's progress is passed
    /// back to the bridge by an event and the bridge signals `signal`'s value
    /// (`cuSignalExternalSemaphoresAsync`; no signal when `signal` is None). With no waits the green stream's own order is the
    /// only ordering (the caller leaves out waits already reached or ordered by the stream).
    ///
    /// Errors: the driver's; on an error the signal was not enqueued (the caller must signal
    /// the value another way, after whatever was enqueued).
    pub fn submit(
        &self,
        waits: &[(&super::ExternalSemaphore, u64)],
        signal: Option<(&super::ExternalSemaphore, u64)>,
        body: impl FnOnce() -> Result<(), CuError>,
    ) -> Result<(), CuError> {
        let b = &self.bridge;
        let _g = b.lock.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY (whole block): live contexts, streams, events and imported semaphores; the
        // parameter arrays outlive the calls that read them.
        unsafe {
            if !waits.is_empty() {
                let sems: Vec<sys::CUexternalSemaphore> =
                    waits.iter().map(|(s, _)| s.raw).collect();
                let params: Vec<sys::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS> = waits
                    .iter()
                    .map(|&(_, v)| {
                        let mut p: sys::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS = std::mem::zeroed();
                        p.params.fence.value = v;
                        p
                    })
                    .collect();
                check(sys::cuCtxSetCurrent(b.primary), "cuCtxSetCurrent")?;
                check(
                    sys::cuWaitExternalSemaphoresAsync(
                        sems.as_ptr(),
                        params.as_ptr(),
                        sems.len() as u32,
                        b.stream,
                    ),
                    "cuWaitExternalSemaphoresAsync",
                )?;
                check(sys::cuEventRecord(b.to_green, b.stream), "cuEventRecord")?;
                check(
                    sys::cuStreamWaitEvent(self.stream, b.to_green, 0),
                    "cuStreamWaitEvent",
                )?;
            }
            self.make_current()?;
            body()?;
            let Some(signal) = signal else {
                return Ok(());
            };
            check(
                sys::cuEventRecord(b.to_bridge, self.stream),
                "cuEventRecord",
            )?;
            check(sys::cuCtxSetCurrent(b.primary), "cuCtxSetCurrent")?;
            check(
                sys::cuStreamWaitEvent(b.stream, b.to_bridge, 0),
                "cuStreamWaitEvent",
            )?;
            let mut p: sys::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS = std::mem::zeroed();
            p.params.fence.value = signal.1;
            check(
                sys::cuSignalExternalSemaphoresAsync(&signal.0.raw, &p, 1, b.stream),
                "cuSignalExternalSemaphoresAsync",
            )
        }
    }

    /// Enqueues `f` on this context's stream as a host function (`cuLaunchHostFunc`): it runs
    /// on a driver thread once everything enqueued before it has completed, and must not call
    /// CUDA. Errors: the driver's (then `f` is dropped without running).
    pub fn then_on_host(&self, f: Box<dyn FnOnce() + Send>) -> Result<(), CuError> {
        unsafe extern "C" fn trampoline(data: *mut c_void) {
            // SAFETY: `data` is the box leaked below, reclaimed once here.
            let f = unsafe { Box::from_raw(data as *mut Box<dyn FnOnce() + Send>) };
            // A panic must not unwind into the driver.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        }
        let data = Box::into_raw(Box::new(f)) as *mut c_void;
        // SAFETY: a live stream; the trampoline reclaims `data` exactly once.
        let r = unsafe { sys::cuLaunchHostFunc(self.stream, Some(trampoline), data) };
        if let Err(e) = check(r, "cuLaunchHostFunc") {
            // SAFETY: not enqueued, so still ours.
            drop(unsafe { Box::from_raw(data as *mut Box<dyn FnOnce() + Send>) });
            return Err(e);
        }
        Ok(())
    }

    /// Enqueues a copy of `size` bytes from CUDA address `src` to `dst` on `stream`, a stream
    /// of this context (`cuMemcpyDtoDAsync`).
    ///
    /// # Safety
    /// Both ranges lie in live device memory until the copy ends; they may not overlap.
    pub unsafe fn copy_on(
        &self,
        stream: Stream,
        dst: u64,
        src: u64,
        size: usize,
    ) -> Result<(), CuError> {
        // SAFETY: forwarded contract.
        check(
            unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, size, stream) },
            "cuMemcpyDtoDAsync",
        )
    }

    /// Enqueues a fill of `count` elements of `pattern` (1, 2 or 4 bytes wide) at CUDA address
    /// `dst` on `stream`, a stream of this context (`cuMemsetD8/D16/D32Async`). Errors: the
    /// driver's (`dst` misaligned for the width); `CUDA_ERROR_INVALID_VALUE` for another width.
    ///
    /// # Safety
    /// The range lies in live device memory until the fill ends.
    pub unsafe fn fill_on(
        &self,
        stream: Stream,
        dst: u64,
        pattern: &[u8],
        count: usize,
    ) -> Result<(), CuError> {
        // SAFETY (whole block): forwarded contract.
        unsafe {
            match *pattern {
                [b] => check(
                    sys::cuMemsetD8Async(dst, b, count, stream),
                    "cuMemsetD8Async",
                ),
                [a, b] => check(
                    sys::cuMemsetD16Async(dst, u16::from_le_bytes([a, b]), count, stream),
                    "cuMemsetD16Async",
                ),
                [a, b, c, d] => check(
                    sys::cuMemsetD32Async(dst, u32::from_le_bytes([a, b, c, d]), count, stream),
                    "cuMemsetD32Async",
                ),
                _ => Err(CuError {
                    code: sys::CUresult::CUDA_ERROR_INVALID_VALUE,
                    call: "cuMemsetAsync",
                }),
            }
        }
    }

    /// Enqueues a launch of `graph` on this context's stream (`cuGraphLaunch`).
    pub fn launch_graph(&self, graph: &Graph) -> Result<(), CuError> {
        // SAFETY: a live executable graph of this context and a live stream.
        check(
            unsafe { sys::cuGraphLaunch(graph.exec, self.stream) },
            "cuGraphLaunch",
        )
    }

    /// `cuEventRecord` of a timing event on this context's stream.
    pub fn record(&self, e: &Event) -> Result<(), CuError> {
        // SAFETY: live event and stream.
        check(
            unsafe { sys::cuEventRecord(e.0, self.stream) },
            "cuEventRecord",
        )
    }
}

impl Drop for GreenContext {
    fn drop(&mut self) {
        // Modules first (a module outliving its context is a driver error); a command that
        // still holds one keeps this context alive too, so none is in use here.
        self.modules
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        // SAFETY: the stream and context were made by `new` and are destroyed once.
        unsafe {
            sys::cuStreamDestroy_v2(self.stream);
            sys::cuGreenCtxDestroy(self.raw);
        }
    }
}

/// A CUDA stream (`CUstream`) of a green context.
pub type Stream = sys::CUstream;

/// An instantiated CUDA graph ([`GreenContext::capture`]); destroyed on drop, which must wait
/// until no launch of it is pending (its owner keeps it alive until then).
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

// SAFETY: driver handles usable from any thread; launches are serialised by the caller's
// stream order.
unsafe impl Send for Graph {}
// SAFETY: as above.
unsafe impl Sync for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: made by `capture`, destroyed once, no launch pending (owner's contract).
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}

/// A kernel of a loaded [`Module`] (`CUfunction`), valid while the module is loaded.
pub type Function = sys::CUfunction;

/// A PTX module loaded in one context (`cuModuleLoadData`); unloaded on drop.
pub struct Module {
    raw: sys::CUmodule,
}

// SAFETY: a driver handle usable from any thread.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Module {
    /// Loads `ptx` (NUL-terminated PTX text, JIT-compiled by the driver) in `ctx`'s context;
    /// its kernels are loaded by [`function`](Self::function).
    pub fn load(ctx: &GreenContext, ptx: &CStr) -> Result<Module, CuError> {
        ctx.make_current()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: a valid NUL-terminated image; the context is current.
        check(
            unsafe { sys::cuModuleLoadData(&mut raw, ptx.as_ptr() as *const c_void) },
            "cuModuleLoadData",
        )?;
        Ok(Module { raw })
    }

    /// The kernel called `name`, loaded now (`cuFuncLoad` where the driver has it): with
    /// `CUDA_MODULE_LOADING=LAZY`, the default of recent drivers, `cuModuleLoadData` defers
    /// loading to the first launch, which can then block behind a pending external wait.
    pub fn function(&self, name: &CStr) -> Result<sys::CUfunction, CuError> {
        static HAS_FUNC_LOAD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let mut f = std::ptr::null_mut();
        // SAFETY: live module, NUL-terminated name.
        check(
            unsafe { sys::cuModuleGetFunction(&mut f, self.raw, name.as_ptr()) },
            "cuModuleGetFunction",
        )?;
        // SAFETY: a symbol lookup in the loaded driver library (present: a Module exists).
        let has = *HAS_FUNC_LOAD
            .get_or_init(|| unsafe { sys::culib().get::<*const ()>(b"cuFuncLoad").is_ok() });
        if has {
            // SAFETY: a function of this live module.
            check(unsafe { sys::cuFuncLoad(f) }, "cuFuncLoad")?;
        }
        Ok(f)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded by `load`, unloaded once.
        unsafe { sys::cuModuleUnload(self.raw) };
    }
}

/// Device memory allocated with `cuMemAlloc` in the current context; freed on drop.
pub struct DeviceMemory {
    /// The CUDA address.
    pub ptr: sys::CUdeviceptr,
    /// Size in bytes.
    pub size: usize,
}

impl DeviceMemory {
    /// `size` bytes, zero-filled, in `ctx`'s device memory.
    pub fn zeroed(ctx: &GreenContext, size: usize) -> Result<DeviceMemory, CuError> {
        ctx.make_current()?;
        let mut ptr = 0;
        // SAFETY: valid output; context current.
        check(
            unsafe { sys::cuMemAlloc_v2(&mut ptr, size) },
            "cuMemAlloc_v2",
        )?;
        let m = DeviceMemory { ptr, size };
        // SAFETY: `size` bytes at `ptr` were just allocated.
        check(unsafe { sys::cuMemsetD8_v2(ptr, 0, size) }, "cuMemsetD8_v2")?;
        Ok(m)
    }

    /// Copies the memory into `out` (at most `size` bytes), synchronously.
    pub fn read(&self, out: &mut [u8]) -> Result<(), CuError> {
        let n = out.len().min(self.size);
        // SAFETY: `n` bytes are readable at `ptr` and writable at `out`.
        check(
            unsafe { sys::cuMemcpyDtoH_v2(out.as_mut_ptr() as *mut c_void, self.ptr, n) },
            "cuMemcpyDtoH_v2",
        )
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // SAFETY: allocated by `zeroed`, freed once.
        unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

/// A timing event (`cuEventCreate` with default flags); destroyed on drop.
pub struct Event(sys::CUevent);

impl Event {
    /// A new timing event (a context must be current).
    pub fn new() -> Result<Event, CuError> {
        let mut e = std::ptr::null_mut();
        // SAFETY: valid output.
        check(unsafe { sys::cuEventCreate(&mut e, 0) }, "cuEventCreate")?;
        Ok(Event(e))
    }

    /// Milliseconds from `start` to `self`, waiting for `self` to complete.
    pub fn elapsed_ms(&self, start: &Event) -> Result<f32, CuError> {
        let mut ms = 0.0;
        // SAFETY: live events.
        unsafe {
            check(sys::cuEventSynchronize(self.0), "cuEventSynchronize")?;
            check(
                sys::cuEventElapsedTime_v2(&mut ms, start.0, self.0),
                "cuEventElapsedTime_v2",
            )?;
        }
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: made by `new`, destroyed once.
        unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}
