//! Command queues (OpenCL 3.0 section 5.1) and the enqueue path shared by every command.

use super::context::Context;
use super::device::Device;
use super::error::{ClError, ClResult};
use super::event::{Event, EventLink};
use super::object::{ClObject, Header, Kind};
use crate::backend::vulkan::device::QueueLease;
use crate::backend::vulkan::queue::{Engine, Job, JobDependency, Work};
use opencl_sys::*;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
        let engine = Engine::new(vk, vk_queue.index).map_err(|_| ClError(CL_OUT_OF_RESOURCES))?;
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
        let event = Arc::new(Event::new_command(self, command_type));
        let deps: Vec<Arc<dyn JobDependency>> = wait_list
            .iter()
            .map(|e| Arc::new(EventLink(e.clone())) as Arc<dyn JobDependency>)
            .collect();
        self.engine.submit(Job {
            deps,
            work,
            observer: Arc::new(EventLink(event.clone())),
            keep,
        });
        event
    }

    /// The current `CL_QUEUE_PROPERTIES`.
    pub fn props(&self) -> cl_command_queue_properties {
        self.properties.load(Ordering::Acquire)
    }

    /// clFinish: blocks until every command enqueued so far has completed.
    pub fn finish(&self) {
        self.engine.finish();
    }

    /// Checks a wait list: every event of this queue's context.
    /// Errors: `CL_INVALID_CONTEXT` for an event of another context.
    pub fn check_wait_list(&self, events: &[Arc<Event>]) -> ClResult<()> {
        if events
            .iter()
            .any(|e| !Arc::ptr_eq(&e.context, &self.context))
        {
            return Err(ClError(CL_INVALID_CONTEXT));
        }
        Ok(())
    }
}
