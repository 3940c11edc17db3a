//! The workloads' registry. Each workload runs on one session, checks its output on the host,
//! and only then returns a figure; a wrong result is an error naming what was wrong.

use crate::cl::Session;
use crate::figure::{Better, Figure, Sizes};

/// One workload's description.
pub struct Workload {
    /// Short id.
    pub id: &'static str,
    /// Unit of its figure.
    pub unit: &'static str,
    /// Direction.
    pub better: Better,
    /// The measurement.
    pub run: fn(&Session<'_>, &Sizes) -> Result<Figure, String>,
}

/// The workloads, in print order.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        id: "enqueue_cost",
        unit: "us/launch",
        better: Better::Lower,
        run: crate::transfers::enqueue_cost,
    },
    Workload {
        id: "launch_latency",
        unit: "us",
        better: Better::Lower,
        run: crate::transfers::launch_latency,
    },
    Workload {
        id: "threads_queues",
        unit: "s",
        better: Better::Lower,
        run: crate::queues::threads_queues,
    },
    Workload {
        id: "overlap_ooo",
        unit: "x",
        better: Better::Lower,
        run: crate::queues::overlap_ooo,
    },
    Workload {
        id: "overlap_queues",
        unit: "x",
        better: Better::Lower,
        run: crate::queues::overlap_queues,
    },
    Workload {
        id: "write_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::transfers::write_bandwidth,
    },
    Workload {
        id: "read_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::transfers::read_bandwidth,
    },
    Workload {
        id: "map_read_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::maps::map_read_bandwidth,
    },
    Workload {
        id: "map_write_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::maps::map_write_bandwidth,
    },
    Workload {
        id: "copy_kernel_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::transfers::copy_bandwidth,
    },
    Workload {
        id: "copy_kernel_bandwidth_long",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::long::copy_bandwidth_long,
    },
    Workload {
        id: "copy_buffer_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::transfers::copy_buffer_bandwidth,
    },
    Workload {
        id: "image_copy_bandwidth",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::images::image_copy_bandwidth,
    },
    Workload {
        id: "image_filter",
        unit: "Gread/s",
        better: Better::Higher,
        run: crate::images::image_filter,
    },
    Workload {
        id: "compute_fp32",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: crate::compute::compute,
    },
    Workload {
        id: "compute_fp32_long",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: crate::long::compute_long,
    },
    Workload {
        id: "sgemm_tiled",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: crate::compute::sgemm,
    },
    Workload {
        id: "sgemm_tiled_long",
        unit: "GFLOP/s",
        better: Better::Higher,
        run: crate::long::sgemm_long,
    },
    Workload {
        id: "reduce_local",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::compute::reduce_local,
    },
    Workload {
        id: "reduce_subgroup",
        unit: "GB/s",
        better: Better::Higher,
        run: crate::compute::reduce_subgroup,
    },
    Workload {
        id: "build_cold",
        unit: "ms",
        better: Better::Lower,
        run: crate::builds::build_cold,
    },
    Workload {
        id: "build_cached",
        unit: "ms",
        better: Better::Lower,
        run: crate::builds::build_cached,
    },
];
