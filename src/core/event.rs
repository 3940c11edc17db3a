//! Events (OpenCL 3.0 section 5.11): a point on a queue's timeline plus status, callbacks and
//! profiling times; or a user event set by the application.

use super::context::Context;
use super::error::{ClError, ClResult};
use super::object::{ClObject, Header, Kind};
use super::UserPtr;
use crate::backend::vulkan::queue::{JobDependency, JobObserver, TimelinePoint};
use opencl_sys::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// Host time in nanoseconds (CLOCK_MONOTONIC): the time base of every profiling value and of
/// clGetHostTimer.
pub fn host_ns() -> u64 {
    crate::backend::vulkan::queue::host_ns()
}

/// `pfn_notify` of clSetEventCallback.
pub type EventCallback = unsafe extern "C" fn(cl_event, cl_int, *mut std::ffi::c_void);

struct State {
    status: cl_int,
    /// (callback status, function, user data), not yet called.
    callbacks: Vec<(cl_int, EventCallback, UserPtr)>,
    /// QUEUED, SUBMIT, START, END, COMPLETE host times in ns.
    times: [u64; 5],
}

/// The queue of a command's event, as the event sees it (implemented by
/// [`crate::core::queue::CommandQueue`], which makes the events).
pub trait EventQueue: Send + Sync {
    /// Whether the queue profiles its commands now (`CL_QUEUE_PROFILING_ENABLE`).
    fn profiling(&self) -> bool;
    /// The queue's handle (`CL_EVENT_COMMAND_QUEUE`).
    fn handle(&self) -> *mut std::ffi::c_void;
    /// How long a wait for one of its commands polls before sleeping (its engine's hand-off
    /// spin: zero on CPU devices).
    fn handoff_spin(&self) -> std::time::Duration;
}

/// An event.
pub struct Event {
    header: Header,
    pub context: Arc<Context>,
    /// The queue of a command's event; None for user events.
    pub queue: Option<Arc<dyn EventQueue>>,
    /// `CL_EVENT_COMMAND_TYPE`.
    pub command_type: cl_command_type,
    point: OnceLock<TimelinePoint>,
    /// Whether the timeline value is signalled by a device submission already made (so a
    /// dependant may wait on it from the device); false for host-run commands.
    device_signal: AtomicBool,
    /// The value of the point's timeline that the command's submission signals, when above
    /// the point's own (a batch of jobs, `JobObserver::batched`); 0 otherwise.
    signal: AtomicU64,
    state: Mutex<State>,
    cond: Condvar,
}

impl ClObject for Event {
    const KIND: Kind = Kind::Event;
    const INVALID: i32 = CL_INVALID_EVENT;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Event {
    /// The event of a command enqueued now on `queue` of `context` (status CL_QUEUED).
    pub fn new_command(
        context: Arc<Context>,
        queue: Arc<dyn EventQueue>,
        command_type: cl_command_type,
    ) -> Event {
        Event::new(context, Some(queue), command_type, CL_QUEUED)
    }

    /// A user event (status CL_SUBMITTED), clCreateUserEvent.
    pub fn new_user(context: Arc<Context>) -> Event {
        Event::new(context, None, CL_COMMAND_USER, CL_SUBMITTED)
    }

    fn new(
        context: Arc<Context>,
        queue: Option<Arc<dyn EventQueue>>,
        command_type: cl_command_type,
        status: cl_int,
    ) -> Event {
        let now = host_ns();
        Event {
            header: Header::new(Kind::Event),
            context,
            queue,
            command_type,
            point: OnceLock::new(),
            device_signal: AtomicBool::new(false),
            signal: AtomicU64::new(0),
            state: Mutex::new(State {
                status,
                callbacks: Vec::new(),
                times: [now, 0, 0, 0, 0],
            }),
            cond: Condvar::new(),
        }
    }

    /// `CL_EVENT_COMMAND_EXECUTION_STATUS`.
    pub fn status(&self) -> cl_int {
        self.lock().status
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves the status down to `status` (statuses only decrease: QUEUED 3 > SUBMITTED 2 >
    /// RUNNING 1 > COMPLETE 0 > errors) and calls the callbacks that became due.
    fn set_status(self: &Arc<Self>, status: cl_int) {
        let due = {
            let mut st = self.lock();
            if status >= st.status || st.status <= CL_COMPLETE {
                return;
            }
            st.status = status;
            let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut st.callbacks)
                .into_iter()
                .partition(|(when, _, _)| status <= *when);
            st.callbacks = keep;
            due
        };
        self.cond.notify_all();
        let handle = self.header.handle() as cl_event;
        for (when, f, user) in due {
            let reported = if status < 0 { status } else { when };
            // SAFETY: the application registered this callback for this event.
            unsafe { f(handle, reported, user.0) };
        }
    }

    /// clSetUserEventStatus. Errors: `CL_INVALID_EVENT` if not a user event,
    /// `CL_INVALID_VALUE` for a status neither CL_COMPLETE nor negative,
    /// `CL_INVALID_OPERATION` if the status was already set.
    pub fn set_user_status(self: &Arc<Self>, status: cl_int) -> ClResult<()> {
        if self.queue.is_some() {
            return Err(ClError(CL_INVALID_EVENT));
        }
        if status > CL_COMPLETE {
            return Err(ClError(CL_INVALID_VALUE));
        }
        if self.status() != CL_SUBMITTED {
            return Err(ClError(CL_INVALID_OPERATION));
        }
        self.set_status(status);
        Ok(())
    }

    /// clSetEventCallback: calls `f` when the status reaches `when` (CL_SUBMITTED, CL_RUNNING
    /// or CL_COMPLETE) or an error; at once if it already has.
    pub fn add_callback(self: &Arc<Self>, when: cl_int, f: EventCallback, user: UserPtr) {
        let now = {
            let mut st = self.lock();
            if st.status <= when {
                Some(if st.status < 0 { st.status } else { when })
            } else {
                st.callbacks.push((when, f, user));
                None
            }
        };
        if let Some(s) = now {
            // SAFETY: the application registered this callback for this event.
            unsafe { f(self.header.handle() as cl_event, s, user.0) };
        }
    }

    /// Blocks until the event completes; returns its final status (0 or negative).
    pub fn wait(&self) -> cl_int {
        // On a GPU the queue's completion thread is polling the device: poll the status
        // rather than sleep until it wakes this thread (a futex wake-up costs microseconds
        // on the critical path of a short command).
        if let Some(q) = &self.queue {
            let (spin, start) = (q.handoff_spin(), std::time::Instant::now());
            while start.elapsed() < spin {
                let status = self.lock().status;
                if status <= CL_COMPLETE {
                    return status;
                }
                std::hint::spin_loop();
            }
        }
        let mut st = self.lock();
        while st.status > CL_COMPLETE {
            st = self.cond.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.status
    }

    /// Profiling time (ns) of `CL_PROFILING_COMMAND_QUEUED` .. `_COMPLETE`.
    /// Errors: `CL_PROFILING_INFO_NOT_AVAILABLE` for user events, queues without profiling and
    /// events not yet complete; `CL_INVALID_VALUE` for an unknown name.
    pub fn profiling(&self, name: cl_profiling_info) -> ClResult<u64> {
        let Some(q) = &self.queue else {
            return Err(ClError(CL_PROFILING_INFO_NOT_AVAILABLE));
        };
        if !q.profiling() {
            return Err(ClError(CL_PROFILING_INFO_NOT_AVAILABLE));
        }
        let idx = match name {
            CL_PROFILING_COMMAND_QUEUED => 0,
            CL_PROFILING_COMMAND_SUBMIT => 1,
            CL_PROFILING_COMMAND_START => 2,
            CL_PROFILING_COMMAND_END => 3,
            CL_PROFILING_COMMAND_COMPLETE => 4,
            _ => return Err(ClError(CL_INVALID_VALUE)),
        };
        let st = self.lock();
        if st.status != CL_COMPLETE {
            return Err(ClError(CL_PROFILING_INFO_NOT_AVAILABLE));
        }
        Ok(st.times[idx])
    }
}

/// The dependency/observer view of an event, handed to the back end.
pub struct EventLink(pub Arc<Event>);

impl JobObserver for EventLink {
    fn assigned(&self, point: TimelinePoint) {
        let _ = self.0.point.set(point);
    }
    fn batched(&self, signal: u64) {
        self.0.signal.store(signal, Ordering::Release);
    }
    fn submitted(&self, ns: u64, device_signal: bool) {
        self.0.device_signal.store(device_signal, Ordering::Release);
        self.0.lock().times[1] = ns;
        self.0.set_status(CL_SUBMITTED);
    }
    fn running(&self, ns: u64) {
        {
            let mut st = self.0.lock();
            st.times[2] = ns.max(st.times[1]);
        }
        self.0.set_status(CL_RUNNING);
    }
    fn completed(&self, status: i32, start: u64, end: u64) {
        {
            let mut st = self.0.lock();
            if st.times[1] == 0 {
                st.times[1] = start;
            }
            st.times[2] = st.times[2].max(start).max(st.times[1]);
            st.times[3] = end.max(st.times[2]);
            st.times[4] = st.times[3];
        }
        self.0
            .set_status(if status < 0 { status } else { CL_COMPLETE });
    }
}

impl JobDependency for EventLink {
    fn wait_submitted(&self) -> Result<Option<TimelinePoint>, ()> {
        let ev = &self.0;
        let mut st = ev.lock();
        // A command's event is ready to be waited on by the device once its signal has been
        // submitted to the device; host-run commands and user events only once complete (the
        // device never waits for a signal that is not yet submitted).
        let ready = |st: &State| {
            st.status <= CL_COMPLETE
                || (st.status <= CL_SUBMITTED && ev.device_signal.load(Ordering::Acquire))
        };
        while !ready(&st) {
            st = ev.cond.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.status < 0 {
            return Err(());
        }
        if st.status == CL_COMPLETE {
            return Ok(None);
        }
        let signal = ev.signal.load(Ordering::Acquire);
        Ok(ev.point.get().map(|(t, v)| (t.clone(), (*v).max(signal))))
    }
}

/// An ordering-only dependency on an event: the job runs after the event's command, whether
/// that command succeeded or failed (a later run of a command buffer after an earlier run
/// that failed a completion check; its device work is done or never started).
pub struct OrderLink(pub Arc<Event>);

impl JobDependency for OrderLink {
    fn wait_submitted(&self) -> Result<Option<TimelinePoint>, ()> {
        Ok(EventLink(self.0.clone()).wait_submitted().unwrap_or(None))
    }
}
