//! Map bandwidth (issue 19): what an application sees when it maps a buffer and copies through
//! the pointer, the host copy included.

use crate::cl::Session;
use crate::figure::{e, median, pattern, Figure, Sizes};
use std::time::Instant;

const CL_MAP_READ: u64 = 1;
const CL_MAP_WRITE_INVALIDATE_REGION: u64 = 4;

/// Blocking `CL_MAP_READ` map of the whole buffer, a memcpy out of it, the unmap and a finish;
/// median GB/s.
pub fn map_read_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let n = z.bytes / 4;
    let buf = s.buffer(z.bytes).map_err(e)?;
    let data = pattern(n, 11);
    s.write(&buf, &data).map_err(e)?;
    let mut back = vec![0u32; n];
    let mut times = Vec::new();
    for r in 0..=z.reps {
        back.iter_mut().for_each(|v| *v = 0);
        let t = Instant::now();
        let p = s.map(&buf, CL_MAP_READ, z.bytes).map_err(e)?;
        // SAFETY: the map covers `z.bytes` readable bytes until the unmap; `back` holds them.
        unsafe { std::ptr::copy_nonoverlapping(p, back.as_mut_ptr().cast::<u8>(), z.bytes) };
        s.unmap(&buf, p).map_err(e)?;
        s.finish().map_err(e)?;
        if r > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
        if back != data {
            return Err("the mapped bytes differ from what was written".into());
        }
    }
    Ok(Figure {
        value: z.bytes as f64 / median(times) / 1e9,
        note: format!(
            "{} MiB, map + memcpy + unmap, median of {}",
            z.bytes >> 20,
            z.reps
        ),
    })
}

/// Blocking `CL_MAP_WRITE_INVALIDATE_REGION` map of the whole buffer, a memcpy into it, the
/// unmap and a finish; median GB/s.
pub fn map_write_bandwidth(s: &Session<'_>, z: &Sizes) -> Result<Figure, String> {
    let n = z.bytes / 4;
    let buf = s.buffer(z.bytes).map_err(e)?;
    let mut times = Vec::new();
    let mut last = Vec::new();
    for r in 0..=z.reps {
        let data = pattern(n, 100 + r as u32);
        let t = Instant::now();
        let p = s
            .map(&buf, CL_MAP_WRITE_INVALIDATE_REGION, z.bytes)
            .map_err(e)?;
        // SAFETY: the map covers `z.bytes` writable bytes until the unmap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), p, z.bytes) };
        s.unmap(&buf, p).map_err(e)?;
        s.finish().map_err(e)?;
        if r > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
        last = data;
    }
    let mut back = vec![0u32; n];
    s.read(&buf, &mut back).map_err(e)?;
    if back != last {
        return Err("the buffer does not hold what was last written through a map".into());
    }
    Ok(Figure {
        value: z.bytes as f64 / median(times) / 1e9,
        note: format!(
            "{} MiB, map + memcpy + unmap, median of {}",
            z.bytes >> 20,
            z.reps
        ),
    })
}
