//! Command queues (OpenCL 3.0 section 5.1) and the enqueue path shared by every command.

use super::chunked;
use super::command::{Command, Keep};
use super::context::Context;
use super::device::Device;
use super::error::{refused, ClError, ClResult};
use super::event::{Event, EventLink, EventQueue, OrderLink};
use super::image_desc::copy_box;
use super::memory::Mapping;
use super::object::{ClObject, Header, Kind};
use super::queue_lanes::{Lanes, Order};
use super::staged::{self, Staged};
use super::transfer::FillPlan;
use super::UserPtr;
use crate::backend::executor::Executor;
use crate::backend::vulkan::memory::Buffer;
use crate::backend::vulkan::queue::{Job, JobDependency, JobObserver, TimelinePoint, Work};
use crate::backend::vulkan::record::DeviceCommand;
use opencl_sys::*;
use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A command queue: its lanes (`core/queue_lanes.rs`: submission engines, each a timeline, a
/// worker and a completion thread on a Vulkan queue of its device; one for an in-order queue,
/// more as an out-of-order queue runs independent commands at once), and the executor that
/// lowers its device commands (CUDA on a green-context sub-device, Vulkan otherwise).
pub struct CommandQueue {
    header: Header,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    /// `CL_QUEUE_PROPERTIES` (changeable through the deprecated clSetCommandQueueProperty).
    pub properties: AtomicU64,
    /// `CL_QUEUE_PROPERTIES_ARRAY`: the list given to clCreateCommandQueueWithProperties.
    pub properties_array: Vec<cl_queue_properties>,
    lanes: Lanes,
    /// How the queue runs device commands, chosen at creation.
    pub executor: Executor,
}

impl ClObject for CommandQueue {
    const KIND: Kind = Kind::CommandQueue;
    const INVALID: i32 = CL_INVALID_COMMAND_QUEUE;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl EventQueue for CommandQueue {
    fn profiling(&self) -> bool {
        self.props() & CL_QUEUE_PROFILING_ENABLE != 0
    }
    fn handle(&self) -> *mut c_void {
        self.header.handle()
    }
    fn handoff_spin(&self) -> std::time::Duration {
        self.lanes.handoff_spin()
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
        let executor = match device.green_context() {
            Some(g) => Executor::Green(g.clone()),
            None => Executor::Vulkan,
        };
        let foreign = executor.green().is_some();
        let lanes = Lanes::new(vk, foreign).map_err(|e| refused("command queue", e))?;
        let properties = AtomicU64::new(properties);
        Ok(CommandQueue {
            header: Header::new(Kind::CommandQueue),
            context,
            device,
            properties,
            properties_array,
            lanes,
            executor,
        })
    }

    /// Enqueues `cmd` after `wait_list` (checked) and, on an in-order queue, every command
    /// enqueued before it (out of order: after the last barrier, `core/queue_lanes.rs`): its
    /// device part through the queue's executor, its host part (reads, writes, maps, fills of
    /// byte patterns, image rows) on the worker of its lane in order. Returns its event.
    /// Staged buffers ([`crate::core::memory::Mem::staged`]) go through host-cached staging
    /// (`core/staged.rs`, reads over 8 MiB `core/chunked.rs`).
    /// Errors: `CL_OUT_OF_RESOURCES` (logged) when a staged command's or an image transfer's
    /// staging buffer cannot be allocated.
    pub fn enqueue_command(
        self: &Arc<Self>,
        cmd: Command,
        wait_list: &[Arc<Event>],
    ) -> ClResult<Arc<Event>> {
        let ty = cmd.command_type();
        let order = match cmd {
            Command::Marker if wait_list.is_empty() => Order::All,
            Command::Barrier => Order::Barrier,
            _ => Order::Plain,
        };
        let mut keep = cmd.keep();
        let device = cmd.device_commands();
        let mut hook: Option<Hook> = None;
        let work = match cmd {
            Command::Read { size: 0, .. } | Command::Write { size: 0, .. } => Work::Nop,
            // Storage the host does not map (VKCL_DEVICE_LOCAL): writes and byte-pattern
            // fills through staging too.
            Command::Write {
                mem,
                offset,
                size,
                ptr,
            } if !mem.host_writes() => {
                let plan = staged::write(&mem, offset, size, ptr)?;
                return Ok(self.enqueue_staged(ty, wait_list, keep, plan));
            }
            Command::Fill {
                mem,
                offset,
                size,
                plan: FillPlan::Bytes(pat),
            } if !mem.host_writes() && size > 0 => {
                let plan = staged::fill(&mem, offset, size, pat)?;
                return Ok(self.enqueue_staged(ty, wait_list, keep, plan));
            }
            // Memory the host reads slowly (device-local behind the PCI BAR), or
            // VKCL_STAGED_READS=1: through host-cached staging memory (core/staged.rs).
            Command::Read {
                mem,
                offset,
                size,
                ptr,
            } if chunked::chunked(size) && mem.staged() => {
                let q: Arc<dyn EventQueue> = self.clone();
                let event = Arc::new(Event::new_command(self.context.clone(), q, ty));
                let read = (&mem, offset, size, ptr);
                let (ooo, work) = (self.out_of_order(), |c| self.executor.work(c));
                self.lanes
                    .submit(ooo, Order::Plain, wait_list, &event, |waits| {
                        chunked::read_jobs(&event, &waits, keep, read, work)
                    })?;
                return Ok(event);
            }
            Command::Read {
                mem,
                offset,
                size,
                ptr,
            } if size > 0 && mem.staged() => {
                let plan = staged::read(&mem, offset, size, ptr)?;
                return Ok(self.enqueue_staged(ty, wait_list, keep, plan));
            }
            Command::HostRect {
                mem,
                write,
                buffer,
                host,
                region,
                ptr,
            } if mem.staged() => {
                let plan = staged::rect(&mem, write, buffer, host, region, ptr)?;
                return Ok(self.enqueue_staged(ty, wait_list, keep, plan));
            }
            Command::Map {
                mem,
                offset,
                size,
                ptr,
                copy_in,
                staging: Some(staging),
            } => {
                let plan = staged::map(&mem, offset, size, ptr, copy_in, staging);
                return Ok(self.enqueue_staged(ty, wait_list, keep, plan));
            }
            Command::Unmap {
                mem,
                mapping,
                copy_out: true,
            } if mapping.staging.is_some() => {
                let plan = staged::unmap(&mem, &mapping).ok_or(ClError(CL_INVALID_VALUE))?;
                return Ok(self.enqueue_staged(ty, wait_list, keep, plan));
            }
            Command::Read {
                mem,
                offset,
                size,
                ptr,
            } => {
                let src = UserPtr(mem.mapped().wrapping_add(offset) as *mut c_void);
                // SAFETY: the source lies inside the mapped buffer (bounds checked); the
                // application keeps `ptr` valid for `size` bytes until the read completes.
                host_work(move || unsafe { host_copy(src, ptr, size) })
            }
            Command::Write {
                mem,
                offset,
                size,
                ptr,
            } => {
                let dst = UserPtr(mem.mapped().wrapping_add(offset) as *mut c_void);
                // SAFETY: as for reads, in the other direction.
                host_work(move || unsafe { host_copy(ptr, dst, size) })
            }
            Command::HostRect {
                mem,
                write,
                buffer,
                host,
                region,
                ptr,
            } => {
                let dev = UserPtr(mem.mapped() as *mut c_void);
                host_work(move || {
                    let (dev, hp) = (dev.get() as *mut u8, ptr.get() as *mut u8);
                    for (bo, ho) in buffer.rows(region).zip(host.rows(region)) {
                        let (from, to) = if write {
                            (hp.wrapping_add(ho), dev.wrapping_add(bo))
                        } else {
                            (dev.wrapping_add(bo), hp.wrapping_add(ho))
                        };
                        // SAFETY: buffer rows lie inside the mapped object (bounds checked);
                        // the application keeps `ptr` valid for the host rectangle until the
                        // command completes.
                        unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to, region[0]) };
                    }
                })
            }
            Command::Fill {
                mem,
                offset,
                size,
                plan: FillPlan::Bytes(pat),
            } => {
                let dst = UserPtr(mem.mapped().wrapping_add(offset) as *mut c_void);
                host_work(move || {
                    // SAFETY: the region lies inside the mapped buffer (bounds checked).
                    let d = unsafe { std::slice::from_raw_parts_mut(dst.get() as *mut u8, size) };
                    for c in d.chunks_mut(pat.len()) {
                        c.copy_from_slice(&pat[..c.len()]);
                    }
                })
            }
            Command::Map {
                mem,
                offset,
                size,
                ptr,
                copy_in: true,
                staging: None,
            } => {
                let src = UserPtr(mem.mapped().wrapping_add(offset) as *mut c_void);
                // SAFETY: the region lies in the object's mapped storage, `ptr` in the
                // application's host_ptr (bounds checked at enqueue); they never overlap.
                host_work(move || unsafe { host_copy(src, ptr, size) })
            }
            Command::MapImage { image, map, read } => {
                // The box into the staging buffer (unless the map invalidates it), and for
                // CL_MEM_USE_HOST_PTR images on into host_ptr once that completed.
                let part = image.image_part()?;
                let copy = DeviceCommand::BufferImage {
                    buffer: map.staging.clone(),
                    image: part.vk.clone(),
                    regions: vec![part.desc.region(map.origin, map.region, 0)],
                    to_image: false,
                };
                if let (true, Some((host, strides))) = (read, map.host) {
                    let row = map.region[0] * part.desc.element_size;
                    let at = UserPtr(map.staging.mapped() as *mut c_void);
                    let (packed, size) = (map.packed, [row, map.region[1], map.region[2]]);
                    hook = Some(Box::new(move || {
                        // SAFETY: the staging buffer holds the box; host_ptr holds the image
                        // with its pitches (clCreateImage).
                        unsafe {
                            copy_box(
                                at.get() as *const u8,
                                packed,
                                host.get() as *mut u8,
                                strides,
                                size,
                            )
                        };
                        CL_SUCCESS
                    }));
                }
                self.executor
                    .work(if read { vec![copy] } else { Vec::new() })
            }
            Command::Unmap {
                mem,
                mapping:
                    Mapping {
                        image: Some(map),
                        flags,
                        ..
                    },
                ..
            } => {
                // A write map's box back into the image (from host_ptr through the staging
                // buffer for CL_MEM_USE_HOST_PTR images: host rows first, in queue order).
                let writes =
                    flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0 || flags == 0;
                let part = mem.image_part()?;
                let copy = DeviceCommand::BufferImage {
                    buffer: map.staging.clone(),
                    image: part.vk.clone(),
                    regions: vec![part.desc.region(map.origin, map.region, 0)],
                    to_image: true,
                };
                keep.push(map.staging.clone());
                if !writes {
                    Work::Nop
                } else if let Some((host, strides)) = map.host {
                    let row = map.region[0] * part.desc.element_size;
                    let at = UserPtr(map.staging.mapped() as *mut c_void);
                    let (packed, size) = (map.packed, [row, map.region[1], map.region[2]]);
                    let rows_in = host_work(move || {
                        // SAFETY: as for the map, in the other direction.
                        unsafe {
                            copy_box(
                                host.get() as *const u8,
                                strides,
                                at.get() as *mut u8,
                                packed,
                                size,
                            )
                        }
                    });
                    let first = self.enqueue(ty, wait_list, rows_in, keep.clone());
                    let work = self.executor.work(vec![copy]);
                    return Ok(self.enqueue_plain(ty, &[first], work, keep, None));
                } else {
                    self.executor.work(vec![copy])
                }
            }
            Command::Unmap {
                mem,
                mapping,
                copy_out: true,
            } => {
                let dst = UserPtr(mem.mapped().wrapping_add(mapping.offset) as *mut c_void);
                // SAFETY: as for maps, in the other direction.
                host_work(move || unsafe { host_copy(mapping.ptr, dst, mapping.size) })
            }
            Command::HostImage {
                image,
                write,
                origin,
                region,
                strides,
                ptr,
            } => {
                // Through a staging buffer holding the box tightly packed: a read copies the
                // box into it on the device and out row by row once that completed; a write
                // copies the rows in on the host, in queue order (ptr may be an earlier
                // command's output), then the box into the image, the returned event the
                // device copy's (after the host part, failing with it).
                let part = image.image_part()?;
                let desc = part.desc;
                let row = region[0] * desc.element_size;
                let bytes = row * region[1] * region[2];
                let vk = self.device.vk()?;
                let staging = Arc::new(
                    if write {
                        Buffer::new(vk, bytes as u64)
                    } else {
                        Buffer::readback(vk, bytes as u64)
                    }
                    .map_err(|e| refused("image staging", e))?,
                );
                let copy = DeviceCommand::BufferImage {
                    buffer: staging.clone(),
                    image: part.vk.clone(),
                    regions: vec![desc.region(origin, region, 0)],
                    to_image: write,
                };
                let packed = (row, row * region[1]);
                let at = UserPtr(staging.mapped() as *mut c_void);
                keep.push(staging);
                if write {
                    let fill = host_work(move || {
                        // SAFETY: the application keeps `ptr` valid for the box with its
                        // pitches until the command completes; the staging buffer holds the
                        // box tightly.
                        unsafe {
                            copy_box(
                                ptr.get() as *const u8,
                                strides,
                                at.get() as *mut u8,
                                packed,
                                [row, region[1], region[2]],
                            )
                        }
                    });
                    let first = self.enqueue(ty, wait_list, fill, keep.clone());
                    let work = self.executor.work(vec![copy]);
                    return Ok(self.enqueue_plain(ty, &[first], work, keep, None));
                }
                hook = Some(Box::new(move || {
                    // SAFETY: as for writes, in the other direction, after the device copy.
                    unsafe {
                        copy_box(
                            at.get() as *const u8,
                            packed,
                            ptr.get() as *mut u8,
                            strides,
                            [row, region[1], region[2]],
                        )
                    };
                    CL_SUCCESS
                }));
                self.executor.work(vec![copy])
            }
            Command::Launch(l) => {
                if l.printf.is_some() || l.loop_check.is_some() {
                    // The kernel's output is printed when the command completes; a loop cut
                    // by the driver's limit fails the command (core::launch::LoopCheck).
                    let (printf, check) = (l.printf, l.loop_check);
                    hook = Some(Box::new(move || {
                        if let Some(p) = printf {
                            p.print();
                        }
                        check.map_or(CL_SUCCESS, |c| c.status())
                    }));
                }
                self.executor.work(device)
            }
            _ => self.executor.work(device),
        };
        Ok(self.enqueue_with(ty, wait_list, order, Vec::new(), work, keep, hook))
    }

    /// Enqueues a staged command's plan ([`Staged`]) of type `ty` after `wait_list`; `keep`
    /// (the command's objects) stays alive, with the plan's staging buffer, until it completes.
    fn enqueue_staged(
        self: &Arc<Self>,
        ty: cl_command_type,
        wait_list: &[Arc<Event>],
        mut keep: Keep,
        plan: Staged,
    ) -> Arc<Event> {
        match plan {
            Staged::CopyOut {
                device,
                after,
                keep: more,
            } => {
                keep.extend(more);
                let work = self.executor.work(device);
                self.enqueue_plain(ty, wait_list, work, keep, after)
            }
            Staged::CopyIn {
                before,
                device,
                keep: more,
            } => {
                keep.extend(more);
                let Some(before) = before else {
                    let work = self.executor.work(device);
                    return self.enqueue_plain(ty, wait_list, work, keep, None);
                };
                // The host part first, in queue order (its source may be an earlier
                // command's output); the device copy after it, failing with it.
                let first = self.enqueue(ty, wait_list, Work::Host(before), keep.clone());
                let work = self.executor.work(device);
                self.enqueue_plain(ty, &[first], work, keep, None)
            }
        }
    }

    /// Enqueues `commands` as one job of command type `ty` (a command buffer's run) after
    /// `wait_list`, with `then` run on successful completion before the event completes.
    pub fn enqueue_device(
        self: &Arc<Self>,
        ty: cl_command_type,
        wait_list: &[Arc<Event>],
        commands: Vec<DeviceCommand>,
        keep: Keep,
        then: Option<Box<dyn FnOnce() + Send>>,
    ) -> Arc<Event> {
        let work = self.executor.work(commands);
        match then {
            Some(f) => self.enqueue_then(ty, wait_list, work, keep, f),
            None => self.enqueue(ty, wait_list, work, keep),
        }
    }

    /// Enqueues one command: `work` runs after every event of `wait_list` and, on an in-order
    /// queue, every command enqueued before it. `keep` stays alive until it completes.
    pub fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
    ) -> Arc<Event> {
        self.enqueue_plain(command_type, wait_list, work, keep, None)
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
        self.enqueue_plain(command_type, wait_list, work, keep, Some(then))
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
        self.enqueue_plain(command_type, wait_list, work, keep, Some(check))
    }

    /// As [`enqueue_checked`](Self::enqueue_checked), and also after `previous` (an earlier
    /// run of the same command buffer) whatever its status: the runs are ordered, but a failed
    /// earlier run does not fail this one.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue_checked_after(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        previous: Option<Arc<Event>>,
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
        check: Box<dyn FnOnce() -> cl_int + Send>,
    ) -> Arc<Event> {
        let order = previous.map(|e| Arc::new(OrderLink(e)) as Arc<dyn JobDependency>);
        let extra = order.into_iter().collect();
        self.enqueue_with(
            command_type,
            wait_list,
            Order::Plain,
            extra,
            work,
            keep,
            Some(check),
        )
    }

    /// A command of type `command_type` that only orders: it completes after `wait_list` and
    /// the commands enqueued before it (the acquire and release of external memory), and on
    /// an out-of-order queue the commands after it wait for it too; `keep` lives until then.
    pub fn enqueue_ordering(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        keep: Vec<Arc<dyn Any + Send + Sync>>,
    ) -> Arc<Event> {
        let (order, none) = (Order::Full, Vec::new());
        self.enqueue_with(command_type, wait_list, order, none, Work::Nop, keep, None)
    }

    /// As [`enqueue_then`](Self::enqueue_then), also after `extra`: dependencies that are no
    /// event of a wait list (a semaphore's signal, `core/semaphore.rs`), each waited for by
    /// the queue's worker as an event of the wait list is. A failed one fails the command
    /// (`CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST`). On an out-of-order queue it waits for
    /// every command before it and the commands after it wait for it, as on an in-order one.
    pub fn enqueue_after(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        extra: Vec<Arc<dyn JobDependency>>,
        work: Work,
        then: Box<dyn FnOnce() + Send>,
    ) -> Arc<Event> {
        let then: Hook = Box::new(move || {
            then();
            CL_SUCCESS
        });
        self.enqueue_with(
            command_type,
            wait_list,
            Order::Full,
            extra,
            work,
            Vec::new(),
            Some(then),
        )
    }

    /// [`enqueue_with`](Self::enqueue_with) of an [`Order::Plain`] command without `extra`.
    fn enqueue_plain(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
        then: Option<Hook>,
    ) -> Arc<Event> {
        let (order, extra) = (Order::Plain, Vec::new());
        self.enqueue_with(command_type, wait_list, order, extra, work, keep, then)
    }

    /// Enqueues one command of `command_type` that runs `work` after `wait_list` and `extra`,
    /// ordered against the queue's other commands as `order` says (`core/queue_lanes.rs`),
    /// with `then` run on completion (see [`enqueue_checked`](Self::enqueue_checked)).
    #[allow(clippy::too_many_arguments)]
    fn enqueue_with(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_list: &[Arc<Event>],
        order: Order,
        extra: Vec<Arc<dyn JobDependency>>,
        work: Work,
        keep: Vec<Arc<dyn Any + Send + Sync>>,
        then: Option<Hook>,
    ) -> Arc<Event> {
        let queue: Arc<dyn EventQueue> = self.clone();
        let event = Arc::new(Event::new_command(
            self.context.clone(),
            queue,
            command_type,
        ));
        let observer: Arc<dyn JobObserver> = match then {
            Some(then) => Arc::new(Then {
                inner: EventLink(event.clone()),
                then: Mutex::new(Some(then)),
            }),
            None => Arc::new(EventLink(event.clone())),
        };
        let ooo = self.out_of_order();
        let submitted = self.lanes.submit(ooo, order, wait_list, &event, |waits| {
            let mut deps: Vec<Arc<dyn JobDependency>> = waits
                .into_iter()
                .map(|e| Arc::new(EventLink(e)) as Arc<dyn JobDependency>)
                .collect();
            deps.extend(extra);
            Ok::<_, std::convert::Infallible>(vec![Job {
                deps,
                work,
                observer,
                keep,
            }])
        });
        let Ok(()) = submitted;
        event
    }

    /// Whether the queue runs its commands out of order now
    /// (`CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`, `core/queue_lanes.rs`).
    pub fn out_of_order(&self) -> bool {
        self.props() & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0
    }

    /// How many lanes (submission engines) the queue has started: 1 for an in-order queue,
    /// up to [`crate::core::queue_lanes::MAX_LANES`] as an out-of-order one runs independent
    /// commands at once.
    pub fn lanes(&self) -> usize {
        self.lanes.count()
    }

    /// The current `CL_QUEUE_PROPERTIES`.
    pub fn props(&self) -> cl_command_queue_properties {
        self.properties.load(Ordering::Acquire)
    }

    /// clFinish: blocks until every command enqueued so far has completed (or failed: on a
    /// lost device within about [`crate::backend::vulkan::timeline::CHECK`]).
    pub fn finish(&self) {
        self.lanes.finish();
    }

    /// Whether the queue's device is lost (a GPU fault, `VK_ERROR_DEVICE_LOST`, a CUDA error
    /// on a green context's stream): its commands failed or will fail with
    /// `CL_OUT_OF_RESOURCES`, and new ones are refused.
    pub fn device_lost(&self) -> bool {
        self.lanes.device_lost()
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

/// Host work that always succeeds, as a job's work.
fn host_work(f: impl FnOnce() + Send + 'static) -> Work {
    Work::Host(Box::new(move || {
        f();
        0
    }))
}

/// Copies `size` bytes from `from` to `to`.
///
/// # Safety
/// Both ranges valid for `size` bytes and not overlapping.
unsafe fn host_copy(from: UserPtr, to: UserPtr, size: usize) {
    // SAFETY: the caller's contract.
    unsafe { crate::util::host_copy::copy(from.get() as *const u8, to.get() as *mut u8, size) };
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
    fn submitted(&self, ns: u64, _device_signal: bool) {
        // Never ready for device waits at submission: the hook's host work (a staged read's
        // copy into the application's memory) is part of the command, so a dependent command
        // waits for the whole of it (complete) rather than for the device's signal.
        self.inner.submitted(ns, false);
    }
    fn batched(&self, signal: u64) {
        self.inner.batched(signal);
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
