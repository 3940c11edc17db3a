//! Workloads of several queues and threads (issue 17): many threads enqueueing on their own
//! queues, and two independent long kernels on one out-of-order queue or on two in-order
//! queues, which a device that runs commands concurrently finishes in the time of one.

use crate::cl::{Arg, Kernel, Queue, Session};
use crate::figure::{e, median, Figure, Sizes};
use std::time::Instant;

/// Threads of [`threads_queues`], each with its own queue.
const THREADS: usize = 8;

const INC: &str = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

/// A reference the workload's threads share: OpenCL objects may be used from any thread
/// (OpenCL 3.0 appendix A.2; a kernel's arguments are set before the threads start).
struct Shared<'x, T>(&'x T);
// SAFETY: as said above; every object outlives the scope of the threads.
unsafe impl<T> Send for Shared<'_, T> {}

/// [`THREADS`] threads, each creating its own in-order queue in the session's context,
/// enqueueing `z.launches` launches of a small kernel on its own buffer and finishing the
/// queue: the wall time of all of it, in seconds (queue creation included; the kernels,
/// built and set before, are not). Each buffer must count every launch.
pub(crate) fn threads_queues(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let items = 64;
    let p = s.program(INC).map_err(e)?;
    let mut bufs = Vec::new();
    let mut kernels = Vec::new();
    for _ in 0..THREADS {
        let b = s.buffer(items * 4).map_err(e)?;
        s.write(&b, &vec![0i32; items]).map_err(e)?;
        kernels.push(s.kernel(&p, "inc", &[Arg::Buf(&b)]).map_err(e)?);
        bufs.push(b);
    }
    // One launch of each first, so that no first-use cost (pipelines) lands in the figure.
    for k in &kernels {
        s.launch(k, &[items], None).map_err(e)?;
    }
    s.finish().map_err(e)?;
    let launches = z.launches;
    let t = Instant::now();
    let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = kernels
            .iter()
            .map(|k| {
                let (sh, kh) = (Shared(s), Shared(k));
                scope.spawn(move || {
                    let (s, k) = (sh, kh);
                    let q = s.0.queue(false).map_err(e)?;
                    for _ in 0..launches {
                        s.0.launch_on(&q, k.0, &[items], None).map_err(e)?;
                    }
                    s.0.finish_on(&q).map_err(e)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a thread panicked".into())))
            .collect()
    });
    let secs = t.elapsed().as_secs_f64();
    results.into_iter().collect::<Result<Vec<()>, String>>()?;
    let want = 1 + launches as i32;
    for (t, b) in bufs.iter().enumerate() {
        let mut out = vec![0i32; items];
        s.read(b, &mut out).map_err(e)?;
        if let Some((i, v)) = out.iter().enumerate().find(|(_, v)| **v != want) {
            return Err(format!("thread {t}: a[{i}] = {v}, expected {want}"));
        }
    }
    Ok(Figure {
        value: secs,
        note: format!(
            "{THREADS} threads x {launches} launches of 64 work-items, each on its own new \
             in-order queue, to clFinish"
        ),
    })
}

/// A long kernel that keeps few compute units busy: each work-item steps a generator (a
/// linear congruential step and an xor-shift, which no compiler folds into fewer steps)
/// `outer * INNER` times from its seed, [`INNER`] steps written out per pass of one loop, so
/// that the passes stay under llvmpipe 22.3's 65,535 per shader call (rusticl's too).
const SPIN: &str = "#define STEP x = x * 1664525u + 1013904223u; x ^= x >> 15;\n\
    #define S8 STEP STEP STEP STEP STEP STEP STEP STEP\n\
    #define S64 S8 S8 S8 S8 S8 S8 S8 S8\n\
    #define S512 S64 S64 S64 S64 S64 S64 S64 S64\n\
    __kernel void spin(__global uint *out, uint outer, uint seed) {\n\
    uint x = (uint)get_global_id(0) ^ seed;\n\
    for (uint o = 0; o < outer; o++) { S512 S512 }\n\
    out[get_global_id(0)] = x;\n}\n";
const INNER: u64 = 1024;
/// Work-groups of the long kernel and their size: a few compute units of a large GPU.
const GROUPS: usize = 4;
const LOCAL: usize = 64;
/// One kernel alone should run this long (seconds): 100 ms is the figure issue 17 names.
const OVERLAP_S: f64 = 0.1;
/// Host steps of the generator a check may take for every work-item; beyond, 8 of them.
const CHECK_ALL_STEPS: u64 = 1 << 26;

/// `x` stepped `n` times by the generator of [`SPIN`].
fn spin_steps(mut x: u32, n: u64) -> u32 {
    for _ in 0..n {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        x ^= x >> 15;
    }
    x
}

/// How two long kernels are put on queues.
#[derive(Clone, Copy, PartialEq)]
enum Placement {
    /// Both on one out-of-order queue, no event between them.
    OutOfOrder,
    /// One on each of two in-order queues.
    TwoQueues,
}

/// Two independent long kernels on one out-of-order queue: time(both) / time(one), about 1
/// where the device runs them at once, 2 where they run one after the other.
pub(crate) fn overlap_ooo(s: &Session<'_>, _z: &Sizes) -> Result<Figure, String> {
    overlap(s, Placement::OutOfOrder)
}

/// As [`overlap_ooo`], each kernel on its own in-order queue of the same context.
pub(crate) fn overlap_queues(s: &Session<'_>, _z: &Sizes) -> Result<Figure, String> {
    overlap(s, Placement::TwoQueues)
}

fn overlap(s: &Session<'_>, how: Placement) -> Result<Figure, String> {
    let items = GROUPS * LOCAL;
    let p = s.program(SPIN).map_err(e)?;
    let bufs = [
        s.buffer(items * 4).map_err(e)?,
        s.buffer(items * 4).map_err(e)?,
    ];
    let seeds = [0x1234_5678u32, 0x9abc_def0];
    let queues: Vec<Queue<'_>> = match how {
        Placement::OutOfOrder => vec![s.queue(true).map_err(|x| match x.code {
            -35 => "the device has no out-of-order queues (CL_INVALID_QUEUE_PROPERTIES)".into(),
            _ => x.to_string(),
        })?],
        Placement::TwoQueues => vec![s.queue(false).map_err(e)?, s.queue(false).map_err(e)?],
    };
    let kernel = |i: usize, outer: u32| -> Result<Kernel<'_>, String> {
        let args = [Arg::Buf(&bufs[i]), Arg::U32(outer), Arg::U32(seeds[i])];
        s.kernel(&p, "spin", &args).map_err(e)
    };
    // Runs kernels `which` (each on its queue), waits for all, checks the outputs; seconds.
    let run = |which: &[usize], outer: u32| -> Result<f64, String> {
        let ks = which
            .iter()
            .map(|&i| kernel(i, outer))
            .collect::<Result<Vec<_>, _>>()?;
        let t = Instant::now();
        for (k, &i) in ks.iter().zip(which) {
            let q = &queues[i.min(queues.len() - 1)];
            s.launch_on(q, k, &[items], Some(&[LOCAL])).map_err(e)?;
        }
        for q in &queues {
            s.finish_on(q).map_err(e)?;
        }
        let secs = t.elapsed().as_secs_f64();
        let steps = outer as u64 * INNER;
        let checked: Vec<usize> = if steps * items as u64 <= CHECK_ALL_STEPS {
            (0..items).collect()
        } else {
            (0..8).map(|j| j * (items - 1) / 7).collect()
        };
        for &i in which {
            let mut out = vec![0u32; items];
            s.read(&bufs[i], &mut out).map_err(e)?;
            for &g in &checked {
                let (v, want) = (out[g], spin_steps(g as u32 ^ seeds[i], steps));
                if v != want {
                    return Err(format!("kernel {i}: out[{g}] = {v:#x}, expected {want:#x}"));
                }
            }
        }
        Ok(secs)
    };
    // Grow the kernel (x2, up to 32768 outer passes) until one alone runs OVERLAP_S.
    let mut outer = 16u32;
    while outer < 32768 && run(&[0], outer)? < OVERLAP_S {
        outer *= 2;
    }
    let mut one = Vec::new();
    let mut both = Vec::new();
    for _ in 0..3 {
        one.push(run(&[0], outer)?);
        both.push(run(&[0, 1], outer)?);
    }
    let (one, both) = (median(one), median(both));
    let on = match how {
        Placement::OutOfOrder => "one out-of-order queue",
        Placement::TwoQueues => "two in-order queues",
    };
    Ok(Figure {
        value: both / one,
        note: format!(
            "two {GROUPS}x{LOCAL} kernels on {on}: {:.1} ms together, {:.1} ms alone \
             (medians of 3; {} steps per work-item)",
            both * 1e3,
            one * 1e3,
            outer as u64 * INNER
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::spin_steps;

    #[test]
    fn steps_compose() {
        let x = spin_steps(77, 100);
        assert_eq!(spin_steps(x, 23), spin_steps(77, 123));
        assert_ne!(spin_steps(77, 1), 77);
    }
}
