//! The executor of a command queue, chosen when the queue is made: Vulkan for every device,
//! CUDA for a queue of a green-context sub-device (its commands that have a CUDA form run on
//! the green context's stream; the others through Vulkan, as on any sub-device).
//!
//! One lowering per back end serves immediate submission and command buffers alike:
//! [`crate::backend::vulkan::record::record`] records a [`DeviceCommand`] into a job's primary
//! or a command buffer's secondary; [`crate::backend::cuda::exec::enqueue`] enqueues it on the
//! queue's stream or on a stream captured into a command buffer's graph.

use super::cuda::exec::{capture, enqueue, green_work, supports};
use super::cuda::{Graph, GreenContext};
use super::vulkan::queue::Work;
use super::vulkan::record::{record, DeviceCommand};
use std::sync::Arc;

/// How a queue runs its device commands.
#[derive(Clone)]
pub enum Executor {
    /// Vulkan command buffers submitted to the queue's `VkQueue`.
    Vulkan,
    /// The green context's CUDA stream where a command has a CUDA form, else Vulkan.
    Green(Arc<GreenContext>),
}

/// The status of device work that has no form this executor can run (`CL_OUT_OF_RESOURCES`).
const OUT_OF_RESOURCES: i32 = -5;

impl Executor {
    /// The green context of a CUDA executor.
    pub fn green(&self) -> Option<&Arc<GreenContext>> {
        match self {
            Executor::Vulkan => None,
            Executor::Green(g) => Some(g),
        }
    }

    /// The job work that runs `commands`, in order, as one command of the queue: on the green
    /// context's stream when every one has a CUDA form there, else one Vulkan command buffer
    /// (a command with neither form fails the job with `CL_OUT_OF_RESOURCES`, logged).
    pub fn work(&self, commands: Vec<DeviceCommand>) -> Work {
        if commands.is_empty() {
            return Work::Nop;
        }
        if let Executor::Green(green) = self {
            if commands.iter().all(supports) {
                let g = green.clone();
                return green_work(green.clone(), move || {
                    commands.iter().try_for_each(|c| enqueue(&g, g.stream, c))
                });
            }
        }
        if !commands.iter().all(DeviceCommand::has_vulkan_form) {
            tracing::error!("a command prepared for CUDA only reached a Vulkan queue");
            return Work::Host(Box::new(|| OUT_OF_RESOURCES));
        }
        Work::Gpu(Box::new(move |r| {
            for c in &commands {
                record(r, c);
            }
        }))
    }

    /// A command buffer's commands captured into a CUDA graph of the green context: None for
    /// a Vulkan executor, when a command lacks a CUDA form, or when the capture fails (logged).
    pub fn capture(&self, commands: &[DeviceCommand]) -> Option<Arc<Graph>> {
        let green = self.green()?;
        if !commands.iter().all(supports) {
            return None;
        }
        match capture(green, commands) {
            Ok(g) => {
                tracing::debug!(
                    "command buffer captured into a CUDA graph ({} commands)",
                    commands.len()
                );
                Some(Arc::new(g))
            }
            Err(e) => {
                tracing::warn!("command buffer as a CUDA graph: {e}; it runs through Vulkan");
                None
            }
        }
    }

    /// The job work that launches `graph` (captured by [`capture`](Self::capture) of this
    /// executor) on the green context's stream; None for a Vulkan executor.
    pub fn graph_work(&self, graph: Arc<Graph>) -> Option<Work> {
        let green = self.green()?.clone();
        let g = green.clone();
        Some(green_work(green, move || g.launch_graph(&graph)))
    }
}
