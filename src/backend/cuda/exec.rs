//! The CUDA twin of `vulkan/record.rs`: what a device command enqueues on a stream of a
//! green context (its own stream for a queue's command, a capturing stream for a command
//! buffer's graph), and the queue work that runs it there ([`green_work`]).

use super::green::{Graph, GreenContext, Stream};
use super::CuError;
use crate::backend::vulkan::queue::{ForeignOutcome, Probe, Work};
use crate::backend::vulkan::record::DeviceCommand;
use std::sync::Arc;

/// The status of a command that failed on the device (`CL_OUT_OF_RESOURCES`).
const OUT_OF_RESOURCES: i32 = -5;

/// Whether `c` has a CUDA form on a green context: a copy or fill of buffers CUDA sees
/// (exported Vulkan memory imported into CUDA), a launch prepared as PTX.
pub fn supports(c: &DeviceCommand) -> bool {
    match c {
        DeviceCommand::Copy { src, dst, .. } => {
            src.cuda_address().is_some() && dst.cuda_address().is_some()
        }
        DeviceCommand::Fill { dst, .. } => dst.cuda_address().is_some(),
        DeviceCommand::Launch { cuda, .. } => cuda.is_some(),
        DeviceCommand::Barrier => true,
        DeviceCommand::Execute(_)
        | DeviceCommand::BufferImage { .. }
        | DeviceCommand::CopyImage { .. } => false,
    }
}

/// Enqueues `c` on `stream` of `green` (`cuMemcpyDtoDAsync` per region, `cuMemsetD32Async`,
/// `cuLaunchKernel`; a barrier is the stream's own order). Errors: the driver's, and
/// `CUDA_ERROR_NOT_SUPPORTED` for a command without a CUDA form ([`supports`]).
// `Stream` is the driver's opaque handle: handed to the driver, never dereferenced here.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn enqueue(green: &GreenContext, stream: Stream, c: &DeviceCommand) -> Result<(), CuError> {
    let unsupported = CuError {
        code: cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_SUPPORTED,
        call: "vkcl: command without a CUDA form",
    };
    match c {
        DeviceCommand::Copy { src, dst, regions } => {
            let (Some(from), Some(to)) = (src.cuda_address(), dst.cuda_address()) else {
                return Err(unsupported);
            };
            for &(s, d, n) in regions {
                // SAFETY: both ranges lie inside live buffers (core checked them in bounds and
                // not overlapping; the command keeps the buffers alive).
                unsafe { green.copy_on(stream, to + d, from + s, n as usize) }?;
            }
            Ok(())
        }
        DeviceCommand::Fill {
            dst,
            offset,
            size,
            word,
        } => {
            let Some(at) = dst.cuda_address() else {
                return Err(unsupported);
            };
            // SAFETY: the range lies inside a live buffer (core's checks); 4-byte aligned.
            unsafe {
                green.fill_on(
                    stream,
                    at + offset,
                    &word.to_le_bytes(),
                    (size / 4) as usize,
                )
            }
        }
        DeviceCommand::Launch { cuda: Some(l), .. } => l.enqueue_on(stream),
        DeviceCommand::Barrier => Ok(()),
        DeviceCommand::Launch { cuda: None, .. }
        | DeviceCommand::Execute(_)
        | DeviceCommand::BufferImage { .. }
        | DeviceCommand::CopyImage { .. } => Err(unsupported),
    }
}

/// `commands` captured, in order, into a CUDA graph of `green`. Errors: the driver's, or
/// those of [`enqueue`].
pub fn capture(green: &GreenContext, commands: &[DeviceCommand]) -> Result<Graph, CuError> {
    green.capture(|stream| commands.iter().try_for_each(|c| enqueue(green, stream, c)))
}

/// Device work on `green`'s stream as a command of a green-context queue ([`Work::Foreign`]):
/// `body` enqueues it (without blocking) after the command's waits, and the queue's timeline
/// value is signalled from CUDA after it, so commands of Vulkan queues that depend on it wait
/// on the device. A wait on a timeline CUDA cannot import is waited for on the host first;
/// where the queue's own timeline cannot be imported the command runs synchronously on the
/// submission thread (waits on the host, then the work, then `cuStreamSynchronize`).
pub fn green_work(
    green: Arc<GreenContext>,
    body: impl FnOnce() -> Result<(), CuError> + Send + 'static,
) -> Work {
    Work::Foreign(Box::new(move |waits, signal| {
        let failed = |e: CuError| {
            tracing::error!("command on a green context: {e}");
            // Whatever was enqueued ends before the host signals the command's value.
            let _ = green.synchronize();
            ForeignOutcome::Completed(OUT_OF_RESOURCES)
        };
        let Some(sig) = signal.0.cuda_semaphore() else {
            for (t, v) in waits {
                let _ = t.wait(*v);
            }
            return match green
                .make_current()
                .and_then(|()| body())
                .and_then(|()| green.synchronize())
            {
                Ok(()) => ForeignOutcome::Completed(0),
                Err(e) => failed(e),
            };
        };
        let sync = crate::util::config::config().cuda_sync;
        let mut sems = Vec::with_capacity(waits.len());
        for (t, v) in waits {
            match t.cuda_semaphore().filter(|_| !sync.host_wait) {
                Some(s) => sems.push((s, *v)),
                None => {
                    let _ = t.wait(*v);
                }
            }
        }
        let device_signal = (!sync.host_signal).then_some((sig, signal.1));
        if let Err(e) = green.submit(&sems, device_signal, body) {
            return failed(e);
        }
        if sync.host_signal {
            let (t, v) = signal.clone();
            if let Err(e) = green.then_on_host(Box::new(move || {
                let _ = t.signal(v);
            })) {
                return failed(e);
            }
        }
        // A fault on the device never signals the value: the completion's wait asks the
        // streams for their errors.
        let probe: Probe = Box::new(move || green.check_streams().map_err(|e| e.to_string()));
        ForeignOutcome::Enqueued(Some(probe))
    }))
}
