//! What every workload shares: its figure, the problem sizes, and small helpers.

/// Whether a larger or a smaller figure is better.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Throughput.
    Higher,
    /// Cost or latency.
    Lower,
}

/// A measured, checked figure.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Figure {
    /// The value, in `unit`.
    pub value: f64,
    /// Remarks (sizes, repetitions).
    pub note: String,
}

/// Problem sizes (smaller with `--small`, for a quick look).
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Launches for the enqueue-cost loop.
    pub launches: usize,
    /// Round trips for the latency figure.
    pub round_trips: usize,
    /// Bytes for the bandwidth figures.
    pub bytes: usize,
    /// Repetitions of each bandwidth transfer.
    pub reps: usize,
    /// Work-items of the compute kernel.
    pub flop_items: usize,
    /// SGEMM matrix order (a multiple of 16).
    pub n: usize,
}

/// An error value as the workloads report it.
pub(crate) fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

/// `n` words of a pseudo-random pattern (`seed` makes each repetition different).
pub(crate) fn pattern(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ seed)
        .collect()
}

/// The median of `v` (not empty).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
