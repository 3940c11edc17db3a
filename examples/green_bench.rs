//! Green-context benchmark (not a test), issue 7: a compute-bound kernel compiled from OpenCL C
//! to PTX by vkcl's CUDA-path compiler, run through vkcl's CUDA back end on green contexts of
//! 8, 16, 32, 64 and 128 SMs (throughput against SM count), on two 64-SM green contexts at
//! once and one after the other, with the SM ids each context's work-groups ran on (`%smid`,
//! read by inline PTX in the OpenCL C kernel).
//!
//! This drives `vkcl::backend::cuda` directly, as the OpenCL sub-devices of the CUDA path will;
//! the Vulkan compute-unit-limited figures to set beside it come from `subdevice_bench` with
//! `VKCL_CUDA=0`. Needs an NVIDIA GPU with its CUDA driver, clang-15, opt-15, llvm-link-15,
//! llc-15 and libclc-15 (see src/compiler/ptx.rs); prints why and exits 0 elsewhere.
//! Arguments (optional): `groups iterations repetitions`.
//!
//! ```sh
//! cargo run --release --example green_bench
//! ```
use std::collections::BTreeSet;
use std::ffi::c_void;
use std::time::Instant;
use vkcl::backend::cuda::{
    Cuda, CudaDevice, DeviceMemory, Event, GreenContext, Module, SplitMethod, SplitRequest,
};

const SOURCE: &str = r#"
__kernel void burn(__global float *out, __global uint *smids, int iters) {
    float a = (float)get_global_id(0) * 1e-6f, b = 1.0f, c = 0.5f, d = 0.25f;
    for (int i = 0; i < iters; i++) {
        a = a * 0.9999f + 0.001f;
        b = b * 0.9999f + 0.002f;
        c = c * 0.9999f + 0.003f;
        d = d * 0.9999f + 0.004f;
    }
    out[get_global_id(0)] = a + b + c + d;
    uint smid;
    __asm__ volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (get_local_id(0) == 0)
        smids[get_group_id(0)] = smid;
}
"#;

/// Floating-point operations per loop iteration of `burn` (4 multiply-adds).
const FLOPS_PER_ITER: f64 = 8.0;
const LOCAL: u32 = 64;

/// One green context with the kernel loaded and its buffers.
struct Part {
    green: GreenContext,
    _module: Module,
    f: vkcl::backend::cuda::green::Function,
    out: DeviceMemory,
    smids: DeviceMemory,
}

impl Part {
    fn new(dev: &CudaDevice, green: GreenContext, ptx: &std::ffi::CStr, groups: u32) -> Part {
        let module = Module::load(&green, ptx).expect("cuModuleLoadData");
        let f = module.function(c"burn").expect("burn");
        let out = DeviceMemory::zeroed(&green, (groups * LOCAL) as usize * 4).expect("out");
        let smids = DeviceMemory::zeroed(&green, groups as usize * 4).expect("smids");
        let _ = dev;
        Part {
            green,
            _module: module,
            f,
            out,
            smids,
        }
    }

    fn launch(&self, groups: u32, iters: i32) {
        let mut out = self.out.ptr;
        let mut smids = self.smids.ptr;
        let mut iters = iters;
        let mut params = [
            &mut out as *mut u64 as *mut c_void,
            &mut smids as *mut u64 as *mut c_void,
            &mut iters as *mut i32 as *mut c_void,
        ];
        // SAFETY: the function is `burn` loaded in this context; the parameters match its
        // list and point to live locals; the buffers live as long as `self`.
        unsafe {
            self.green
                .launch(self.f, [groups, 1, 1], [LOCAL, 1, 1], 0, &mut params)
                .expect("cuLaunchKernel")
        };
    }

    /// Seconds of one launch, by CUDA events on the context's stream.
    fn time(&self, groups: u32, iters: i32) -> f64 {
        let (a, b) = (Event::new().unwrap(), Event::new().unwrap());
        self.green.record(&a).unwrap();
        self.launch(groups, iters);
        self.green.record(&b).unwrap();
        b.elapsed_ms(&a).unwrap() as f64 / 1e3
    }

    fn sm_ids(&self) -> BTreeSet<u32> {
        let mut bytes = vec![0u8; self.smids.size];
        self.smids.read(&mut bytes).unwrap();
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// Checks a sample of the results against the host's computation of the same loop.
    fn check(&self, iters: i32) {
        let mut bytes = vec![0u8; self.out.size];
        self.out.read(&mut bytes).unwrap();
        let n = self.out.size / 4;
        for i in (0..n).step_by(n / 97 + 1) {
            let (mut a, mut b, mut c, mut d) = (i as f32 * 1e-6, 1.0f32, 0.5f32, 0.25f32);
            for _ in 0..iters {
                a = a * 0.9999 + 0.001;
                b = b * 0.9999 + 0.002;
                c = c * 0.9999 + 0.003;
                d = d * 0.9999 + 0.004;
            }
            let want = a + b + c + d;
            let got = f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
            assert!(
                (got - want).abs() <= 1e-3 * want.abs().max(1.0),
                "out[{i}] = {got}, host {want}"
            );
        }
    }
}

const CHAIN: &str = r#"
__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }
__kernel void nop(__global int *a) { }
"#;

/// The device cost per node of a CUDA graph of 1,000 dependent launches of one 64-work-item
/// kernel (captured from one stream, so each node depends on the one before), best of 7
/// launches timed by CUDA events: the reference for vkcl's recorded command buffers (issue 3,
/// `examples/cmdbuf_chain.c`). Checks the `inc` chain's result.
fn graph_chain(green: &GreenContext, _sms: u32) {
    use cudarc::driver::sys;
    const N: usize = 1000;
    let ptx = vkcl::compiler::ptx::compile_ptx(CHAIN, &[]).expect("PTX");
    let module = Module::load(green, &ptx).expect("module");
    let a = DeviceMemory::zeroed(green, 64 * 4).expect("buffer");
    println!("\n| CUDA graph, {N} dependent nodes of 64 work-items | us per node |");
    println!("|---|---|");
    let mut runs = 0;
    for name in [c"inc", c"nop"] {
        let f = module.function(name).expect("kernel");
        let mut ptr = a.ptr;
        let mut params = [&mut ptr as *mut u64 as *mut c_void];
        green.make_current().unwrap();
        // SAFETY (whole block): live context, stream and module; each launch's parameters
        // point to a live local; the graph objects are destroyed at the end.
        unsafe {
            let stream = green.stream;
            assert_eq!(
                sys::cuStreamBeginCapture_v2(
                    stream,
                    sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
                ),
                sys::CUresult::CUDA_SUCCESS
            );
            for _ in 0..N {
                green
                    .launch(f, [1, 1, 1], [64, 1, 1], 0, &mut params)
                    .expect("launch");
            }
            let mut graph = std::ptr::null_mut();
            assert_eq!(
                sys::cuStreamEndCapture(stream, &mut graph),
                sys::CUresult::CUDA_SUCCESS
            );
            let mut exec = std::ptr::null_mut();
            assert_eq!(
                sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
                sys::CUresult::CUDA_SUCCESS
            );
            let mut best = f64::INFINITY;
            for _ in 0..8 {
                let (s, e) = (Event::new().unwrap(), Event::new().unwrap());
                green.record(&s).unwrap();
                assert_eq!(
                    sys::cuGraphLaunch(exec, stream),
                    sys::CUresult::CUDA_SUCCESS
                );
                green.record(&e).unwrap();
                best = best.min(e.elapsed_ms(&s).unwrap() as f64 * 1e3);
                if name == c"inc" {
                    runs += 1;
                }
            }
            sys::cuGraphExecDestroy(exec);
            sys::cuGraphDestroy(graph);
            println!("| {} | {:.3} |", name.to_str().unwrap(), best / N as f64);
        }
    }
    let mut bytes = vec![0u8; 64 * 4];
    a.read(&mut bytes).unwrap();
    let want = (runs * N) as i32;
    for c in bytes.chunks(4) {
        assert_eq!(
            i32::from_le_bytes(c.try_into().unwrap()),
            want,
            "a chain node was lost"
        );
    }
}

fn ranges(ids: &BTreeSet<u32>) -> String {
    let mut out = Vec::new();
    let mut it = ids.iter().copied().peekable();
    while let Some(s) = it.next() {
        let mut e = s;
        while it.peek() == Some(&(e + 1)) {
            e = it.next().unwrap();
        }
        out.push(if s == e {
            format!("{s}")
        } else {
            format!("{s}-{e}")
        });
    }
    out.join(",")
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let Some(cuda) = Cuda::get() else {
        println!("green_bench: no CUDA driver or device (or VKCL_CUDA=0): nothing to measure");
        return;
    };
    let Some(dev) = cuda.devices.first() else {
        println!("green_bench: the CUDA driver reports no device");
        return;
    };
    let ptx = match vkcl::compiler::ptx::compile_ptx(SOURCE, &[]) {
        Ok(p) => p,
        Err(e) => {
            println!("green_bench: cannot compile to PTX: {e}");
            return;
        }
    };
    let total = dev.sm_count;
    let groups = args.first().map_or(total * 64, |&g| g as u32);
    let iters = args.get(1).map_or(20000, |&i| i as i32);
    let reps = args.get(2).map_or(3, |&r| r as usize);
    let flop = groups as f64 * LOCAL as f64 * iters as f64 * FLOPS_PER_ITER;
    println!(
        "green_bench: {} ({} SMs), CUDA driver {}, {groups} groups x {LOCAL} work-items, \
         {iters} iterations, best of {reps}",
        dev.name, total, cuda.driver_version
    );
    let whole = dev.sm_resource().expect("SM resource");
    // What the driver's splits give (facts for vkcl's split methods).
    for (m, g) in [(SplitMethod::Aligned, 8u32), (SplitMethod::Fine, 2)] {
        match whole.split_by_count(total / g, g, m) {
            Ok((parts, rest)) => {
                let sizes: Vec<u32> = parts.iter().map(|p| p.sm_count()).collect();
                println!(
                    "driver split {m:?} into parts of >= {g}: {} parts {sizes:?}, rest {}",
                    parts.len(),
                    rest.sm_count()
                );
            }
            Err(e) => println!("driver split {m:?} into parts of >= {g}: {e}"),
        }
        let a = if g == 8 { 64 } else { 10 };
        let b = if g == 8 { 32 } else { 6 };
        match whole.split_by_count(1, a, m) {
            Ok((first, rest)) => {
                let again = rest.split_by_count(1, b, m);
                println!(
                    "driver split {m:?}: {a} -> {:?} (rest {}), then {b} from the rest -> {:?}",
                    first.iter().map(|p| p.sm_count()).collect::<Vec<_>>(),
                    rest.sm_count(),
                    again.map(|(p, r)| (
                        p.iter().map(|p| p.sm_count()).collect::<Vec<_>>(),
                        r.sm_count()
                    ))
                );
            }
            Err(e) => println!("driver split {m:?}: {a}: {e}"),
        }
    }
    let best = |p: &Part| {
        (0..reps)
            .map(|_| p.time(groups, iters))
            .fold(f64::INFINITY, f64::min)
    };

    println!("\n| green context | SMs | GFLOP/s | per SM vs all | SM ids of its work-groups |");
    println!("|---|---|---|---|---|");
    let all = whole
        .split(&SplitRequest::Counts(vec![total & !1]), SplitMethod::Fine)
        .unwrap()
        .expect("all SMs");
    let all = Part::new(dev, GreenContext::new(dev, &all[0]).unwrap(), &ptx, groups);
    all.launch(groups, iters); // warm-up (JIT, clocks)
    all.green.synchronize().unwrap();
    let all_rate = flop / best(&all) / 1e9;
    all.check(iters);
    let per_sm_all = all_rate / all.green.sm_count as f64;
    println!(
        "| all (fine) | {} | {all_rate:.0} | 1.000 | {} ids: {} |",
        all.green.sm_count,
        all.sm_ids().len(),
        ranges(&all.sm_ids())
    );
    graph_chain(&all.green, total);
    drop(all);
    for m in [8u32, 16, 32, 64, 128] {
        if m > total {
            continue;
        }
        let part = whole
            .split(&SplitRequest::Counts(vec![m]), SplitMethod::Aligned)
            .unwrap()
            .expect("split");
        let p = Part::new(dev, GreenContext::new(dev, &part[0]).unwrap(), &ptx, groups);
        p.launch(groups, iters);
        p.green.synchronize().unwrap();
        let rate = flop / best(&p) / 1e9;
        p.check(iters);
        let ids = p.sm_ids();
        println!(
            "| {m} SMs (aligned) | {} | {rate:.0} | {:.3} | {} ids: {} |",
            p.green.sm_count,
            rate / p.green.sm_count as f64 / per_sm_all,
            ids.len(),
            ranges(&ids)
        );
    }

    // Two disjoint 64-SM green contexts: at once, then one after the other.
    let parts = whole
        .split(&SplitRequest::Counts(vec![64, 64]), SplitMethod::Aligned)
        .unwrap()
        .expect("64 + 64");
    let two: Vec<Part> = parts
        .iter()
        .map(|r| Part::new(dev, GreenContext::new(dev, r).unwrap(), &ptx, groups))
        .collect();
    for p in &two {
        p.launch(groups, iters);
        p.green.synchronize().unwrap();
    }
    let mut together = f64::INFINITY;
    let mut apart = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        for p in &two {
            p.launch(groups, iters);
        }
        for p in &two {
            p.green.synchronize().unwrap();
        }
        together = together.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for p in &two {
            p.launch(groups, iters);
            p.green.synchronize().unwrap();
        }
        apart = apart.min(t.elapsed().as_secs_f64());
    }
    for p in &two {
        p.check(iters);
    }
    let (a, b) = (two[0].sm_ids(), two[1].sm_ids());
    println!("\n| two 64-SM green contexts | seconds | GFLOP/s (both) |");
    println!("|---|---|---|");
    println!(
        "| at once | {together:.4} | {:.0} |",
        2.0 * flop / together / 1e9
    );
    println!(
        "| one after the other | {apart:.4} | {:.0} |",
        2.0 * flop / apart / 1e9
    );
    println!(
        "\nat once vs one after the other: {:.2}x; SM ids A: {} ({}), B: {} ({}), shared: {}",
        apart / together,
        ranges(&a),
        a.len(),
        ranges(&b),
        b.len(),
        a.intersection(&b).count()
    );
}
