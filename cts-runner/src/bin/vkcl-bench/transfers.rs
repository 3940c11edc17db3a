//! Launch-path and transfer workloads: enqueue cost, launch latency, host reads and writes,
//! and a copy kernel's bandwidth.

use crate::cl::{Arg, Session};
use crate::figure::{e, median, pattern, Figure, Sizes};
use std::time::Instant;

const INC: &str = "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n";

/// Host time to enqueue one small kernel (the enqueue loop alone; completion waited after).
pub(crate) fn enqueue_cost(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let items = 64;
    let buf = s.buffer(items * 4).map_err(e)?;
    s.write(&buf, &vec![0i32; items]).map_err(e)?;
    let p = s.program(INC).map_err(e)?;
    let k = s.kernel(&p, "inc", &[Arg::Buf(&buf)]).map_err(e)?;
    let warm = 20;
    for _ in 0..warm {
        s.launch(&k, &[items], None).map_err(e)?;
    }
    s.finish().map_err(e)?;
    let t = Instant::now();
    for _ in 0..z.launches {
        s.launch(&k, &[items], None).map_err(e)?;
    }
    let enq = t.elapsed().as_secs_f64();
    s.finish().map_err(e)?;
    let mut out = vec![0i32; items];
    s.read(&buf, &mut out).map_err(e)?;
    let want = (warm + z.launches) as i32;
    if let Some((i, v)) = out.iter().enumerate().find(|(_, v)| **v != want) {
        return Err(format!("a[{i}] = {v}, expected {want}: launches were lost"));
    }
    Ok(Figure {
        value: enq / z.launches as f64 * 1e6,
        note: format!(
            "{} launches of 64 work-items, enqueue loop only",
            z.launches
        ),
    })
}

/// Enqueue plus clFinish of one small kernel, median of many.
pub(crate) fn launch_latency(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let items = 64;
    let buf = s.buffer(items * 4).map_err(e)?;
    s.write(&buf, &vec![0i32; items]).map_err(e)?;
    let p = s.program(INC).map_err(e)?;
    let k = s.kernel(&p, "inc", &[Arg::Buf(&buf)]).map_err(e)?;
    let mut times = Vec::with_capacity(z.round_trips);
    for _ in 0..z.round_trips + 5 {
        let t = Instant::now();
        s.launch(&k, &[items], None).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut out = vec![0i32; items];
    s.read(&buf, &mut out).map_err(e)?;
    let want = (z.round_trips + 5) as i32;
    if out.iter().any(|v| *v != want) {
        return Err(format!("counter is {}, expected {want}", out[0]));
    }
    let mut t = times[5..].to_vec();
    t.sort_by(f64::total_cmp);
    Ok(Figure {
        value: t[t.len() / 2] * 1e6,
        note: format!("median of {} enqueue+clFinish round trips", z.round_trips),
    })
}

/// Blocking clEnqueueWriteBuffer from host memory, median GB/s.
pub(crate) fn write_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let n = z.bytes / 4;
    let buf = s.buffer(z.bytes).map_err(e)?;
    let mut times = Vec::new();
    let mut last = Vec::new();
    for r in 0..=z.reps {
        let data = pattern(n, r as u32);
        let t = Instant::now();
        s.write(&buf, &data).map_err(e)?;
        if r > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
        last = data;
    }
    let mut back = vec![0u32; n];
    s.read(&buf, &mut back).map_err(e)?;
    if back != last {
        return Err("the buffer does not hold what was last written".into());
    }
    Ok(Figure {
        value: z.bytes as f64 / median(times) / 1e9,
        note: format!("{} MiB, median of {}", z.bytes >> 20, z.reps),
    })
}

/// Blocking clEnqueueReadBuffer into host memory, median GB/s.
pub(crate) fn read_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let n = z.bytes / 4;
    let buf = s.buffer(z.bytes).map_err(e)?;
    let data = pattern(n, 7);
    s.write(&buf, &data).map_err(e)?;
    let mut back = vec![0u32; n];
    let mut times = Vec::new();
    for r in 0..=z.reps {
        back.iter_mut().for_each(|v| *v = 0);
        let t = Instant::now();
        s.read(&buf, &mut back).map_err(e)?;
        if r > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
        if back != data {
            return Err("read-back differs from what was written".into());
        }
    }
    Ok(Figure {
        value: z.bytes as f64 / median(times) / 1e9,
        note: format!("{} MiB, median of {}", z.bytes >> 20, z.reps),
    })
}

const COPY: &str = "__kernel void copy(__global const uint4 *a, __global uint4 *b) {\n\
    size_t i = get_global_id(0); b[i] = a[i]; }\n";

/// A kernel copying one buffer to another; bytes counted read plus written.
pub(crate) fn copy_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    copy_sized(s, z.bytes, z.reps)
}

/// The copy kernel over two buffers of `bytes`: one untimed launch, then the median of `reps`
/// (at least 1) timed launches + finish; the destination compared.
pub(crate) fn copy_sized(s: &Session<'_>, bytes: usize, reps: usize) -> Result<Figure, String> {
    let n = bytes / 4;
    let a = s.buffer(bytes).map_err(e)?;
    let b = s.buffer(bytes).map_err(e)?;
    let data = pattern(n, 3);
    s.write(&a, &data).map_err(e)?;
    s.write(&b, &vec![0u32; n]).map_err(e)?;
    let p = s.program(COPY).map_err(e)?;
    let k = s
        .kernel(&p, "copy", &[Arg::Buf(&a), Arg::Buf(&b)])
        .map_err(e)?;
    let global = [n / 4];
    s.launch(&k, &global, Some(&[64])).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        s.launch(&k, &global, Some(&[64])).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut back = vec![0u32; n];
    s.read(&b, &mut back).map_err(e)?;
    if back != data {
        let i = back
            .iter()
            .zip(&data)
            .position(|(x, y)| x != y)
            .unwrap_or(0);
        return Err(format!("b[{i}] = {:#x}, expected {:#x}", back[i], data[i]));
    }
    Ok(Figure {
        value: 2.0 * bytes as f64 / median(times) / 1e9,
        note: format!(
            "{} MiB copied, 2x bytes counted, median of {}",
            bytes >> 20,
            reps
        ),
    })
}

/// `clEnqueueCopyBuffer` between two buffers of `--bytes` x 4 (256 MiB by default, the size
/// issue 19 names): one untimed copy, then the median of `reps` timed copies + finish; the
/// destination compared; bytes counted read plus written.
pub(crate) fn copy_buffer_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let bytes = 4 * z.bytes;
    let n = bytes / 4;
    let a = s.buffer(bytes).map_err(e)?;
    let b = s.buffer(bytes).map_err(e)?;
    let data = pattern(n, 9);
    s.write(&a, &data).map_err(e)?;
    s.write(&b, &vec![0u32; n]).map_err(e)?;
    s.copy_buffer(&a, &b, bytes).map_err(e)?;
    s.finish().map_err(e)?;
    let mut times = Vec::new();
    for _ in 0..z.reps.max(1) {
        let t = Instant::now();
        s.copy_buffer(&a, &b, bytes).map_err(e)?;
        s.finish().map_err(e)?;
        times.push(t.elapsed().as_secs_f64());
    }
    let mut back = vec![0u32; n];
    s.read(&b, &mut back).map_err(e)?;
    if let Some(i) = (0..n).find(|&i| back[i] != data[i]) {
        return Err(format!("b[{i}] = {:#x}, expected {:#x}", back[i], data[i]));
    }
    Ok(Figure {
        value: 2.0 * bytes as f64 / median(times) / 1e9,
        note: format!(
            "clEnqueueCopyBuffer of {} MiB, 2x bytes counted, median of {}",
            bytes >> 20,
            z.reps.max(1)
        ),
    })
}
