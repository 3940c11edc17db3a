//! The long variants of the kernel workloads: each grows its problem until one launch takes
//! at least [`LONG_LAUNCH_S`], so that the fixed cost of a launch and its completion (tens of
//! microseconds on a large GPU, issue 17) fades from a figure that is about kernel code.

use crate::cl::Session;
use crate::compute::{compute_sized, sgemm_sized, ITERS};
use crate::figure::{Figure, Sizes};
use crate::transfers::copy_sized;
use std::time::Instant;

/// The compute kernel sized to run at least [`LONG_LAUNCH_S`] per launch, so that launch and
/// completion costs vanish from the figure: work-items grow (x4, up to 32x `z.flop_items`)
/// and then steps (x4, up to 32768, under llvmpipe 22.3's 65,535-pass loop limit) until one
/// launch takes that long, then the median of 3 launches of that size.
pub(crate) fn compute_long(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let (mut items, mut iters) = (z.flop_items, ITERS);
    loop {
        let t = Instant::now();
        compute_sized(s, items, iters, 0)?;
        if t.elapsed().as_secs_f64() >= LONG_LAUNCH_S {
            break;
        }
        if items < z.flop_items * 32 {
            items *= 4;
        } else if iters < 32768 {
            iters *= 4;
        } else {
            break;
        }
    }
    compute_sized(s, items, iters, 3)
}

/// One launch per run of a kernel shorter than this is dominated by launch cost (seconds).
pub(crate) const LONG_LAUNCH_S: f64 = 0.02;

/// The copy kernel on buffers grown (x4, up to 1 GiB each) until one launch takes at least
/// [`LONG_LAUNCH_S`], so that launch and completion costs fade from the figure (on a large
/// GPU the 64 MiB copy is about 50 us of transfer, the size of a launch's fixed cost).
pub(crate) fn copy_bandwidth_long(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let mut bytes = z.bytes;
    while bytes < 1 << 30 {
        let f = copy_sized(s, bytes, 1)?;
        // One timed launch: its time from the figure.
        if 2.0 * bytes as f64 / (f.value * 1e9) >= LONG_LAUNCH_S {
            break;
        }
        bytes *= 4;
    }
    copy_sized(s, bytes, z.reps)
}

/// The SGEMM grown (n x2, up to 4096) until one launch takes at least [`LONG_LAUNCH_S`], so
/// that launch and completion costs fade from the figure (n = 512 is about 60 us of work on
/// a large GPU); on a CPU device n = 512 already does.
pub(crate) fn sgemm_long(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let mut n = z.n;
    while n < 4096 {
        let t = Instant::now();
        let f = sgemm_sized(s, n, 1)?;
        // One timed launch: its time from the figure.
        let launch = 2.0 * (n as f64).powi(3) / (f.value * 1e9);
        if launch >= LONG_LAUNCH_S || t.elapsed().as_secs_f64() > 60.0 {
            break;
        }
        n *= 2;
    }
    sgemm_sized(s, n, 3)
}
