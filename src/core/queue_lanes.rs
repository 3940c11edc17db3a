//! The lanes of a command queue: the submission engines its commands run on, and the order
//! between commands of different lanes (OpenCL 3.0 sections 5.1 and 5.11).
//!
//! Every lane is one [`Engine`] (a timeline, a submit and a completion thread) on a `VkQueue`
//! of its own where the device's compute family has spare ones ([`Device::lease_queue`]);
//! the jobs of one lane run one after the other. An in-order queue runs every command on its
//! first lane. An out-of-order queue (`CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`) puts each
//! command on a lane and makes it wait only for its wait list and the last barrier, so that
//! commands without a dependency run at once: on the lane of a listed event that has not
//! completed (ordered there for free), else on an idle lane, else on a new one (up to
//! [`MAX_LANES`]), else on the lane with the fewest unfinished jobs. A user event holding one
//! command thus holds only its lane. Markers with an empty wait list and barriers wait for the
//! last command of every lane (which completes after everything before it on that lane).

use super::event::Event;
use crate::backend::error::BackendError;
use crate::backend::vulkan::device::{Device, QueueLease};
use crate::backend::vulkan::queue::{Engine, Job};
use opencl_sys::CL_COMPLETE;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// The most lanes of one out-of-order queue (each is an engine with two threads).
pub const MAX_LANES: usize = 4;

/// How a command orders against the commands around it on an out-of-order queue.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Order {
    /// After its wait list (and the last barrier).
    Plain,
    /// After every command enqueued before it: a marker with an empty wait list.
    All,
    /// A barrier: after its wait list, or after every command before it when the list is
    /// empty; every later command waits for it.
    Barrier,
    /// After its wait list and every command before it, and every later command waits for
    /// it (orderings that are no OpenCL barrier: external memory's acquire and release,
    /// semaphore waits and signals, a multi-queue command buffer's hand-offs).
    Full,
}

struct Lane {
    engine: Arc<Engine>,
    _lease: QueueLease,
    /// The last command submitted to the lane. (Weak: an event holds its queue.)
    last: Weak<Event>,
}

struct State {
    lanes: Vec<Lane>,
    /// The last barrier of an out-of-order queue, which every later command waits for.
    fence: Weak<Event>,
}

/// The lanes of one command queue.
pub struct Lanes {
    device: Arc<Device>,
    /// The engines run foreign (CUDA) work too.
    foreign: bool,
    /// The first lane's hand-off spin (the same for every lane).
    spin: Duration,
    state: Mutex<State>,
}

/// The event `e` while its command has not completed (nor failed); None once it has, or once
/// the event is gone (released by the application after its command completed: a pending
/// command's job holds its event).
fn pending(e: &Weak<Event>) -> Option<Arc<Event>> {
    e.upgrade().filter(|e| e.status() > CL_COMPLETE)
}

impl Lanes {
    /// A queue's lanes on `device`, starting with one. Errors: the engine's (Vulkan objects,
    /// threads).
    pub fn new(device: &Arc<Device>, foreign: bool) -> Result<Lanes, BackendError> {
        let first = Lanes::lane(device, foreign)?;
        Ok(Lanes {
            device: device.clone(),
            foreign,
            spin: first.engine.handoff_spin(),
            state: Mutex::new(State {
                lanes: vec![first],
                fence: Weak::new(),
            }),
        })
    }

    fn lane(device: &Arc<Device>, foreign: bool) -> Result<Lane, BackendError> {
        let lease = device.lease_queue();
        let engine = Arc::new(Engine::new(device, lease.index, foreign)?);
        Ok(Lane {
            engine,
            _lease: lease,
            last: Weak::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Submits the jobs of the command whose event is `event`, as consecutive jobs of one
    /// lane: `make` builds them from the events the command waits for (`wait_list`, plus what
    /// the queue's order adds: on an out-of-order queue the last barrier, and for `order`s
    /// other than [`Order::Plain`] with an empty list every lane's last command; on an
    /// in-order queue that has used other lanes, their last commands). Errors: `make`'s,
    /// when nothing is submitted.
    pub fn submit<E>(
        &self,
        out_of_order: bool,
        order: Order,
        wait_list: &[Arc<Event>],
        event: &Arc<Event>,
        make: impl FnOnce(Vec<Arc<Event>>) -> Result<Vec<Job>, E>,
    ) -> Result<(), E> {
        let mut st = self.lock();
        let mut waits = wait_list.to_vec();
        let lasts = |st: &State, from: usize| -> Vec<Arc<Event>> {
            st.lanes[from..]
                .iter()
                .filter_map(|l| pending(&l.last))
                .collect()
        };
        let lane = if out_of_order {
            waits.extend(pending(&st.fence));
            let all = match order {
                Order::Plain => false,
                Order::All | Order::Full => true,
                Order::Barrier => wait_list.is_empty(),
            };
            if all {
                waits.extend(lasts(&st, 0));
            }
            self.pick(&mut st, wait_list)
        } else {
            // Commands of other lanes (enqueued while the queue was out of order).
            waits.extend(lasts(&st, 1));
            0
        };
        let jobs = make(waits)?;
        let lane_state = &mut st.lanes[lane];
        lane_state.engine.submit_all(jobs);
        lane_state.last = Arc::downgrade(event);
        if out_of_order && matches!(order, Order::Barrier | Order::Full) {
            st.fence = Arc::downgrade(event);
        }
        Ok(())
    }

    /// The lane of a new command of an out-of-order queue that lists `wait_list`.
    fn pick(&self, st: &mut State, wait_list: &[Arc<Event>]) -> usize {
        let listed = |l: &Lane| {
            pending(&l.last).is_some_and(|e| wait_list.iter().any(|w| Arc::ptr_eq(w, &e)))
        };
        if let Some(i) = st.lanes.iter().position(listed) {
            return i;
        }
        if let Some(i) = st.lanes.iter().position(|l| pending(&l.last).is_none()) {
            return i;
        }
        if st.lanes.len() < MAX_LANES {
            match Lanes::lane(&self.device, self.foreign) {
                Ok(l) => {
                    st.lanes.push(l);
                    return st.lanes.len() - 1;
                }
                Err(e) => tracing::warn!("another lane of an out-of-order queue: {e}"),
            }
        }
        (0..st.lanes.len())
            .min_by_key(|&i| st.lanes[i].engine.pending())
            .unwrap_or(0)
    }

    /// clFinish: blocks until every command submitted so far, on every lane, has completed.
    pub fn finish(&self) {
        let engines: Vec<Arc<Engine>> =
            self.lock().lanes.iter().map(|l| l.engine.clone()).collect();
        for e in engines {
            e.finish();
        }
    }

    /// How long hand-offs to and from the lanes poll before sleeping.
    pub fn handoff_spin(&self) -> Duration {
        self.spin
    }

    /// Whether the device is lost.
    pub fn device_lost(&self) -> bool {
        self.device.is_lost()
    }

    /// How many lanes the queue has started (1 for an in-order queue).
    pub fn count(&self) -> usize {
        self.lock().lanes.len()
    }
}
