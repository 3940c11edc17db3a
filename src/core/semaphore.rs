//! Semaphores (`cl_khr_semaphore` 1.0.0, OpenCL extension specification "Semaphores"):
//! binary semaphores that commands of any queue of their context signal and wait on.
//!
//! A semaphore here is an ordering between commands, kept on the host: the n-th wait enqueued
//! on a semaphore is paired with its n-th signal, the binary semaphore's rule that each wait
//! consumes one signal. A signal is a command of its queue (a marker after the commands
//! before it and its wait list); a wait is a command whose job depends on its paired signal's
//! event, so the waiting queue's worker holds the commands after it until that signal
//! completed: before the signal is even enqueued when the wait comes first (wait before
//! signal, across queues). Both are ordered against the other commands of their queues as any
//! command is. Nothing of it reaches the device: Vulkan's binary semaphores are only needed to
//! share the semaphore with another API (`cl_khr_external_semaphore`), which vkcl does not
//! offer (docs/interop.md).

use super::context::Context;
use super::device::Device;
use super::error::{ClError, ClResult};
use super::event::{Event, EventLink};
use super::object::{ClObject, Header, Kind};
use super::queue::CommandQueue;
use crate::backend::vulkan::queue::{JobDependency, TimelinePoint, Work};
use opencl_sys::*;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

/// A semaphore (`cl_semaphore_khr`).
pub struct Semaphore {
    header: Header,
    pub context: Arc<Context>,
    /// The one device it is for (`CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR`): the device listed at
    /// creation, or the context's only device.
    pub device: Arc<Device>,
    /// `CL_SEMAPHORE_PROPERTIES_KHR`: the list given at creation, with its terminating 0.
    pub properties: Vec<cl_semaphore_properties_khr>,
    pairs: Arc<Pairs>,
}

impl ClObject for Semaphore {
    const KIND: Kind = Kind::Semaphore;
    const INVALID: i32 = CL_INVALID_SEMAPHORE_KHR;
    fn header(&self) -> &Header {
        &self.header
    }
}

/// The pairing of a semaphore's waits with its signals, shared with the commands that use it
/// (so a released semaphore's pending commands still complete).
#[derive(Default)]
struct Pairs {
    state: Mutex<PairState>,
    cond: Condvar,
}

#[derive(Default)]
struct PairState {
    /// Signals enqueued so far.
    signals: u64,
    /// Waits enqueued so far.
    waits: u64,
    /// The events of signals enqueued and not yet taken by their wait, by index.
    pending: HashMap<u64, Arc<Event>>,
    /// Signals completed less waits completed: the semaphore is signalled while this is above 0.
    signalled: u64,
}

impl Pairs {
    fn lock(&self) -> std::sync::MutexGuard<'_, PairState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The dependency of a wait on its paired signal (index `index` of the semaphore's signals).
struct PairedSignal {
    pairs: Arc<Pairs>,
    index: u64,
}

impl JobDependency for PairedSignal {
    fn wait_submitted(&self) -> Result<Option<TimelinePoint>, ()> {
        let signal = {
            let mut st = self.pairs.lock();
            loop {
                if let Some(e) = st.pending.remove(&self.index) {
                    break e;
                }
                st = self.pairs.cond.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        // A failed signal fails the wait.
        EventLink(signal).wait_submitted()
    }
}

/// The properties of clCreateSemaphoreWithPropertiesKHR as the api read them.
pub struct SemaphoreDesc {
    /// `CL_SEMAPHORE_TYPE_KHR`, if given.
    pub semaphore_type: Option<cl_semaphore_properties_khr>,
    /// `CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR`, if given (handles already looked up).
    pub devices: Option<Vec<Arc<Device>>>,
    /// The whole list, with its terminating 0.
    pub properties: Vec<cl_semaphore_properties_khr>,
}

impl Semaphore {
    /// clCreateSemaphoreWithPropertiesKHR: an un-signalled binary semaphore of `context`.
    /// Errors: `CL_INVALID_VALUE` without `CL_SEMAPHORE_TYPE_KHR`; `CL_INVALID_PROPERTY` for a
    /// type other than `CL_SEMAPHORE_TYPE_BINARY_KHR`, or no device list in a context of
    /// several devices; `CL_INVALID_DEVICE` for a device list that does not name exactly one
    /// device, or names a device outside `context`.
    pub fn new(context: Arc<Context>, desc: SemaphoreDesc) -> ClResult<Semaphore> {
        // CL_INVALID_VALUE if sema_props do not specify <property, value> pairs for the
        // minimum set of properties (i.e. CL_SEMAPHORE_TYPE_KHR).
        let ty = desc.semaphore_type.ok_or(ClError(CL_INVALID_VALUE))?;
        // CL_INVALID_PROPERTY if the value specified for a supported property name is not
        // valid.
        if ty != CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr {
            return Err(ClError(CL_INVALID_PROPERTY));
        }
        let device = match desc.devices {
            Some(list) => {
                // CL_INVALID_DEVICE if CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR is specified but
                // does not identify exactly one valid device, or a device it identifies is
                // not one of the devices within context.
                let [d] =
                    <[Arc<Device>; 1]>::try_from(list).map_err(|_| ClError(CL_INVALID_DEVICE))?;
                if !context.has_device(&d) {
                    return Err(ClError(CL_INVALID_DEVICE));
                }
                d
            }
            // CL_INVALID_PROPERTY if context is a multiple device context and sema_props does
            // not specify CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR.
            None if context.devices.len() != 1 => return Err(ClError(CL_INVALID_PROPERTY)),
            None => context.devices[0].clone(),
        };
        Ok(Semaphore {
            header: Header::new(Kind::Semaphore),
            context,
            device,
            properties: desc.properties,
            pairs: Arc::new(Pairs::default()),
        })
    }

    /// `CL_SEMAPHORE_PAYLOAD_KHR` of a binary semaphore: 1 while signalled (a signal command
    /// completed that no completed wait has consumed), else 0.
    pub fn payload(&self) -> cl_semaphore_payload_khr {
        u64::from(self.pairs.lock().signalled > 0)
    }

    /// Checks that `queue` may signal or wait on this semaphore.
    /// Errors: `CL_INVALID_CONTEXT` if the semaphore is of another context than `queue`;
    /// `CL_INVALID_COMMAND_QUEUE` if `queue`'s device is not the semaphore's device.
    fn check_queue(&self, queue: &CommandQueue) -> ClResult<()> {
        // CL_INVALID_CONTEXT if the context associated with command_queue and any of the
        // semaphore objects in sema_objects are not the same.
        if !Arc::ptr_eq(&self.context, &queue.context) {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        // CL_INVALID_COMMAND_QUEUE if the device associated with command_queue is not the same
        // as one of the devices specified by CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR.
        if !Arc::ptr_eq(&self.device, &queue.device) {
            return Err(ClError(CL_INVALID_COMMAND_QUEUE));
        }
        Ok(())
    }
}

/// Checks what clEnqueueSignalSemaphoresKHR and clEnqueueWaitSemaphoresKHR share.
/// Errors: as [`Semaphore::check_queue`] for each semaphore; `CL_INVALID_VALUE` for no
/// semaphores; `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` if an event of `wait_list`
/// already failed.
fn check(queue: &CommandQueue, sems: &[Arc<Semaphore>], wait_list: &[Arc<Event>]) -> ClResult<()> {
    // CL_INVALID_VALUE if num_sema_objects is 0.
    if sems.is_empty() {
        return Err(ClError(CL_INVALID_VALUE));
    }
    for s in sems {
        s.check_queue(queue)?;
    }
    // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any of the
    // events in event_wait_list is a negative integer value.
    if wait_list.iter().any(|e| e.status() < 0) {
        return Err(ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST));
    }
    Ok(())
}

/// clEnqueueSignalSemaphoresKHR: a command of `queue` (after `wait_list` and the commands
/// before it) whose completion signals each of `sems`. Returns its event
/// (`CL_COMMAND_SEMAPHORE_SIGNAL_KHR`). Errors: as [`check`].
pub fn enqueue_signal(
    queue: &Arc<CommandQueue>,
    sems: &[Arc<Semaphore>],
    wait_list: &[Arc<Event>],
) -> ClResult<Arc<Event>> {
    check(queue, sems, wait_list)?;
    let pairs: Vec<Arc<Pairs>> = sems.iter().map(|s| s.pairs.clone()).collect();
    let done = pairs.clone();
    let event = queue.enqueue_after(
        CL_COMMAND_SEMAPHORE_SIGNAL_KHR,
        wait_list,
        Vec::new(),
        Work::Nop,
        Box::new(move || {
            for p in &done {
                p.lock().signalled += 1;
            }
        }),
    );
    for p in &pairs {
        let mut st = p.lock();
        let index = st.signals;
        st.signals += 1;
        st.pending.insert(index, event.clone());
        drop(st);
        p.cond.notify_all();
    }
    Ok(event)
}

/// clEnqueueWaitSemaphoresKHR: a command of `queue` (after `wait_list` and the commands
/// before it) that completes once the signal paired with it on each of `sems` has completed,
/// and then un-signals them; the commands after it wait for it. A wait enqueued before its
/// signal waits for that signal to be enqueued, on any queue (its queue's later commands with
/// it). Returns its event (`CL_COMMAND_SEMAPHORE_WAIT_KHR`); a failed signal fails it with
/// `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST`. Errors: as [`check`].
pub fn enqueue_wait(
    queue: &Arc<CommandQueue>,
    sems: &[Arc<Semaphore>],
    wait_list: &[Arc<Event>],
) -> ClResult<Arc<Event>> {
    check(queue, sems, wait_list)?;
    let mut deps: Vec<Arc<dyn JobDependency>> = Vec::with_capacity(sems.len());
    for s in sems {
        let mut st = s.pairs.lock();
        let index = st.waits;
        st.waits += 1;
        deps.push(Arc::new(PairedSignal {
            pairs: s.pairs.clone(),
            index,
        }));
    }
    let done: Vec<Arc<Pairs>> = sems.iter().map(|s| s.pairs.clone()).collect();
    Ok(queue.enqueue_after(
        CL_COMMAND_SEMAPHORE_WAIT_KHR,
        wait_list,
        deps,
        Work::Nop,
        Box::new(move || {
            for p in &done {
                let mut st = p.lock();
                st.signalled = st.signalled.saturating_sub(1);
            }
        }),
    ))
}
