//! Large staged reads, chunked and pipelined (issue 19): a clEnqueueReadBuffer of more than
//! [`chunk`] bytes from a staged buffer ([`Mem::staged`]) becomes one engine job per chunk,
//! each a device copy of its chunk into one of `BUFFERS` (3) pooled staging buffers whose
//! completion hook copies the chunk out to the application's memory. The device copies chunk
//! k + 1 while the completion thread copies chunk k out; chunk k + `BUFFERS` waits for
//! chunk k's host copy (it reuses its buffer). The jobs are consecutive on the queue and report
//! to the read's one event: submitted and running with the first chunk, complete (or failed,
//! with the first error) once every chunk has completed (OpenCL 3.0 section 5.2.2).

use super::command::Keep;
use super::error::{refused, ClResult};
use super::event::{Event, EventLink};
use super::memory::Mem;
use super::UserPtr;
use crate::backend::vulkan::queue::{Job, JobDependency, JobObserver, TimelinePoint, Work};
use crate::backend::vulkan::record::DeviceCommand;
use crate::backend::vulkan::staging::Staging;
use opencl_sys::*;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Bytes per chunk of a pipelined read (`VKCL_READ_CHUNK_MB`, default 8 MiB); reads up to
/// this size are one job. None: reads are never chunked (`VKCL_READ_CHUNK_MB=0`).
pub fn chunk() -> Option<usize> {
    Some(crate::util::config::config().read_chunk_bytes).filter(|&c| c > 0)
}

/// Whether a staged read of `size` bytes is split into chunks ([`read_jobs`]).
pub fn chunked(size: usize) -> bool {
    chunk().is_some_and(|c| size > c)
}

/// Staging buffers of a pipelined read, used in turn.
const BUFFERS: usize = 3;

/// The jobs of a read of `size` bytes (more than [`chunk`]) at `offset` of the staged buffer
/// `mem` into host `ptr` after `wait_list`, reporting to `event` (the read's, of its queue),
/// their device copies made into work by `work` (the queue's executor). `keep` (the command's
/// objects) stays alive until every chunk completed. The caller submits the jobs as
/// consecutive commands of the queue.
/// Errors: `CL_OUT_OF_RESOURCES` (logged) when the staging buffers cannot be had.
pub fn read_jobs(
    event: &Arc<Event>,
    wait_list: &[Arc<Event>],
    keep: Keep,
    (mem, offset, size, ptr): (&Arc<Mem>, usize, usize, UserPtr),
    work: impl Fn(Vec<DeviceCommand>) -> Work,
) -> ClResult<Vec<Job>> {
    let chunk = chunk().unwrap_or(size).max(1);
    let n = size.div_ceil(chunk);
    let leases = (0..BUFFERS.min(n))
        .map(|_| {
            Staging::lease(mem.storage().device(), chunk as u64)
                .map(Arc::new)
                .map_err(|e| refused(format_args!("staging of a read of {size} bytes"), e))
        })
        .collect::<ClResult<Vec<_>>>()?;
    let whole = Arc::new(Whole {
        event: EventLink(event.clone()),
        left: AtomicUsize::new(n),
        status: AtomicI32::new(CL_SUCCESS),
        start: AtomicU64::new(0),
    });
    let done: Vec<Arc<ChunkDone>> = (0..n).map(|_| Arc::new(ChunkDone::default())).collect();
    let mut jobs = Vec::with_capacity(n);
    for k in 0..n {
        let at = k * chunk;
        let len = chunk.min(size - at);
        let staging = leases[k % BUFFERS].clone();
        let copy = DeviceCommand::Copy {
            src: mem.storage().clone(),
            dst: staging.buffer().clone(),
            regions: vec![((mem.offset + offset + at) as u64, 0, len as u64)],
        };
        let mut deps: Vec<Arc<dyn JobDependency>> = wait_list
            .iter()
            .map(|e| Arc::new(EventLink(e.clone())) as Arc<dyn JobDependency>)
            .collect();
        if k >= BUFFERS {
            deps.push(done[k - BUFFERS].clone());
        }
        let (from, to) = (
            UserPtr(staging.mapped() as *mut std::ffi::c_void),
            UserPtr(ptr.get().wrapping_byte_add(at)),
        );
        let mut keep = keep.clone();
        keep.push(staging);
        jobs.push(Job {
            deps,
            work: work(vec![copy]),
            observer: Arc::new(Chunk {
                first: k == 0,
                last: k == n - 1,
                whole: whole.clone(),
                done: done[k].clone(),
                copy: Mutex::new(Some((from, to, len))),
            }),
            keep,
        });
    }
    Ok(jobs)
}

/// What the chunks of one read share: its event, the chunks still running, the first error
/// and the first chunk's start.
struct Whole {
    event: EventLink,
    left: AtomicUsize,
    status: AtomicI32,
    start: AtomicU64,
}

/// Set once a chunk's host copy is done (or the chunk failed): the dependency of the chunk
/// that reuses its staging buffer.
#[derive(Default)]
struct ChunkDone {
    state: Mutex<Option<bool>>,
    cond: Condvar,
}

impl JobDependency for ChunkDone {
    fn wait_submitted(&self) -> Result<Option<TimelinePoint>, ()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match *st {
                Some(true) => return Ok(None),
                Some(false) => return Err(()),
                None => st = self.cond.wait(st).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }
}

/// The observer of one chunk's job: copies the chunk out when its device copy completed,
/// then reports to the read's event.
struct Chunk {
    first: bool,
    last: bool,
    whole: Arc<Whole>,
    done: Arc<ChunkDone>,
    /// Staging buffer, destination and length of the host copy.
    copy: Mutex<Option<(UserPtr, UserPtr, usize)>>,
}

impl JobObserver for Chunk {
    fn assigned(&self, point: TimelinePoint) {
        // The event's point is the last chunk's (the jobs are consecutive on one queue).
        if self.last {
            self.whole.event.assigned(point);
        }
    }
    fn submitted(&self, ns: u64, _device_signal: bool) {
        // Complete only after the host copies: never waited for by the device.
        if self.first {
            self.whole.event.submitted(ns, false);
        }
    }
    fn running(&self, ns: u64) {
        if self.first {
            self.whole.event.running(ns);
        }
    }
    fn completed(&self, status: i32, start: u64, end: u64) {
        let copy = self.copy.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let (0, Some((from, to, len))) = (status, copy) {
            // SAFETY: the staging buffer holds the chunk (its device copy completed); the
            // application keeps `ptr` valid for the read's size until the read completes.
            unsafe {
                crate::util::host_copy::copy(from.get() as *const u8, to.get() as *mut u8, len)
            };
        }
        {
            let mut st = self.done.state.lock().unwrap_or_else(|e| e.into_inner());
            *st = Some(status >= 0);
            self.done.cond.notify_all();
        }
        if self.first {
            self.whole.start.store(start, Ordering::Release);
        }
        if status < 0 {
            let _ = self.whole.status.compare_exchange(
                CL_SUCCESS,
                status,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
        if self.whole.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let status = self.whole.status.load(Ordering::Acquire);
            let start = self.whole.start.load(Ordering::Acquire);
            self.whole.event.completed(status, start, end);
        }
    }
}
