//! Command queues (OpenCL 3.0 section 5.1) and the enqueue path shared by every command.

use super::context::Context;
use super::device::Device;
use super::error::{refused, ClError, ClResult};
use super::event::{Event, EventLink};
use super::object::{ClObject, Header, Kind};
use crate::backend::vulkan::device::QueueLease;
use crate::backend::vulkan::queue::{Engine, Job, JobDependency, JobObserver, TimelinePoint, Work};
use opencl_sys::*;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A command queue: one submission engine (timeline, worker, completion thread) on a Vulkan
/// queue of its device.
pub struct CommandQueue {
    header: Header,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    /// `CL_QUEUE_PROPERTIES` (changeable through the deprecated clSetCommandQueueProperty).
    pub properties: AtomicU64,
    /// `CL_QUEUE_PROPERTIES_ARRAY`: the list given to clCreateCommandQueueWithProperties.
    pub properties_array: Vec<cl_queue_properties>,
    engine: Engine,
    /// The Vulkan queue this queue submits to (its own where the family has spare queues).
    pub vk_queue: QueueLease,
}

impl ClObject for CommandQueue {
    const KIND: Kind = Kind::CommandQueue;
    const INVALID: i32 = CL_INVALID_COMMAND_QUEUE;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl CommandQueue {
    /// A queue on `device` of `context`. Errors: `CL_OUT_OF_RESOURCES` when the Vulkan device
    /// or the queue's semaphore and threads cannot be created.
    pub fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
    ) -> ClResult<CommandQueue> {
        let vk = device.vk()?;
        let vk_queue = vk.lease_queue();
        let foreign = device.green_context().is_some();
        let engine =
            Engine::new(vk, vk_queue.index, foreign).map_err(|e| refused("command queue", e))?;
        let properties = AtomicU64::new(properties);
        Ok(CommandQueue {
            header: Header::new(Kind::CommandQueue),
            context,
            device,
            properties,
            properties_array,
            engine,
            vk_queue,
        })
    }

    /// Enqueues one command: `work` runs after every event of `wait_list` and (queues run in
    /// order) after every command enqueued before it. `keep` stays alive until it completes.
    pub fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
    ) -> Arc<Event> {
        self.enqueue_with(command_type, wait_list, work, keep, None)
    }

    /// As [`enqueue`](Self::enqueue), and when the command completes successfully, `then`
    /// runs on the completion thread before the command's event is set complete (printf
    /// output, OpenCL C 6.15.14.3: printed before `clFinish`, `clWaitForEvents` or a callback
    /// see the completion; the host half of a staged read).
    pub fn enqueue_then(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
        then: Box<dyn FnOnce() + Send>,
    ) -> Arc<Event> {
        let then: Hook = Box::new(move || {
            then();
            CL_SUCCESS
        });
        self.enqueue_with(command_type, wait_list, work, keep, Some(then))
    }

    /// As [`enqueue_then`](Self::enqueue_then), where `check` also decides the command's
    /// status: `CL_SUCCESS` completes it, a negative error code becomes the event's status
    /// (so `clWaitForEvents` returns `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST`).
    pub fn enqueue_checked(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
        check: Box<dyn FnOnce() -> cl_int + Send>,
    ) -> Arc<Event> {
        self.enqueue_with(command_type, wait_list, work, keep, Some(check))
    }

    fn enqueue_with(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
        then: Option<Hook>,
    ) -> Arc<Event> {
        let event = Arc::new(Event::new_command(self, command_type));
        let deps: Vec<Arc<dyn JobDependency>> = wait_list
            .iter()
            .map(|e| Arc::new(EventLink(e.clone())) as Arc<dyn JobDependency>)
            .collect();
        let observer: Arc<dyn JobObserver> = match then {
            Some(then) => Arc::new(Then {
                inner: EventLink(event.clone()),
                then: Mutex::new(Some(then)),
            }),
            None => Arc::new(EventLink(event.clone())),
        };
        self.engine.submit(Job {
            deps,
            work,
            observer,
            keep,
        });
        event
    }

    /// The current `CL_QUEUE_PROPERTIES`.
    pub fn props(&self) -> cl_command_queue_properties {
        self.properties.load(Ordering::Acquire)
    }

    /// clFinish: blocks until every command enqueued so far has completed (or failed: on a
    /// lost device within about [`crate::backend::vulkan::timeline::CHECK`]).
    pub fn finish(&self) {
        self.engine.finish();
    }

    /// Whether the queue's device is lost (a GPU fault, `VK_ERROR_DEVICE_LOST`, a CUDA error
    /// on a green context's stream): its commands failed or will fail with
    /// `CL_OUT_OF_RESOURCES`, and new ones are refused.
    pub fn device_lost(&self) -> bool {
        self.engine.timeline.device_lost()
    }

    /// Checks a wait list (every enqueue does, before it enqueues): every event of this
    /// queue's context, and the queue's device not lost.
    /// Errors: `CL_INVALID_CONTEXT` for an event of another context; `CL_OUT_OF_RESOURCES`
    /// once the device is lost ([`CommandQueue::device_lost`]).
    pub fn check_wait_list(&self, events: &[Arc<Event>]) -> ClResult<()> {
        if self.device_lost() {
            return Err(ClError(CL_OUT_OF_RESOURCES));
        }
        if events
            .iter()
            .any(|e| !Arc::ptr_eq(&e.context, &self.context))
        {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        Ok(())
    }
}

/// A completion hook: runs when the job completed successfully; its result (`CL_SUCCESS` or
/// a negative error) is the command's status.
type Hook = Box<dyn FnOnce() -> cl_int + Send>;

/// An event's observer that runs a hook when the job completed successfully, before the event
/// learns of it.
struct Then {
    inner: EventLink,
    then: Mutex<Option<Hook>>,
}

impl JobObserver for Then {
    fn assigned(&self, point: TimelinePoint) {
        self.inner.assigned(point);
    }
    fn submitted(&self, ns: u64, device_signal: bool) {
        self.inner.submitted(ns, device_signal);
    }
    fn running(&self, ns: u64) {
        self.inner.running(ns);
    }
    fn completed(&self, status: i32, start: u64, end: u64) {
        let then = self.then.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut status = status;
        if let (0, Some(f)) = (status, then) {
            // A panic in the hook must not take the completion thread down.
            if let Ok(s) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
                status = s.min(0);
            }
        }
        self.inner.completed(status, start, end);
    }
}
