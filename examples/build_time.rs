//! Times vkcl's compiler on one OpenCL C file, without a device (`DeviceCaps::default()`,
//! lavapipe's): the whole build and, with `VKCL_LOG=vkcl=debug`, each stage (every external
//! tool run and vkcl's own passes are logged with timestamps). A measuring aid for large
//! programs (issue 22 finding 4); `examples/build_time/bessel_jn.cl` is pyopencl's
//! `bessel_jn` program.
//!
//! ```sh
//! cargo run --release --example build_time -- examples/build_time/bessel_jn.cl \
//!     "-I $VENV/lib/python3.11/site-packages/pyopencl/cl" [RUNS]
//! ```
//!
//! The builds go through a program cache in a new temporary directory, as `clBuildProgram`
//! does: the first run is cold (clang, opt, llvm-spirv, then vkcl's lowering and checks), the
//! others hit the cache, which holds the whole built program (`compiler/lowered_cache.rs`)
//! (`BUILD_TIME_CACHE=DIR` keeps the cache in `DIR` instead, so that later invocations hit it
//! from their first run). With `BUILD_TIME_PASSES=1` the example also times, after each
//! build, vkcl's own passes alone (reflection, lowering and spirv-val of the structurized
//! SPIR-V, as a program built from a binary runs them; no cache, so spirv-val runs on every
//! module unless `VKCL_SPIRV_VAL=0`). Prints one line per run: milliseconds of the build (and
//! of the passes), and the number of lowered SPIR-V words of each kernel.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: build_time FILE.cl [OPTIONS] [RUNS]");
        std::process::exit(2);
    }
    let filter = std::env::var("VKCL_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .init();
    let src = std::fs::read_to_string(&args[1]).expect("read the source");
    let opts = args.get(2).map(String::as_str).unwrap_or("");
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(1);
    let tools = vkcl::compiler::find_tools().expect("clang-15, opt-15, llvm-spirv-15");
    let caps = vkcl::compiler::DeviceCaps::default();
    let dir = tempfile::tempdir().expect("a temporary cache directory");
    let cache = vkcl::util::cache_file::CacheConfig {
        // `BUILD_TIME_CACHE=DIR` keeps the cache between runs (every run then hits it, for
        // profiling what comes after the front end).
        dir: std::env::var_os("BUILD_TIME_CACHE").map_or(dir.path().to_path_buf(), Into::into),
        max_bytes: 1 << 30,
    };
    let env = vkcl::compiler::BuildEnv {
        tools: &tools,
        caps: &caps,
        device_key: b"build_time",
        cache: Some(&cache),
    };
    let warm = cache
        .dir
        .join("programs")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some());
    for run in 0..runs {
        let started = std::time::Instant::now();
        match vkcl::compiler::build_source(&env, &src, opts) {
            Ok(p) => {
                let words: Vec<String> = p
                    .kernels
                    .iter()
                    .map(|k| format!("{} {} words", k.name, k.spirv.len()))
                    .collect();
                let build_ms = started.elapsed().as_secs_f64() * 1e3;
                let mut passes = String::new();
                if std::env::var_os("BUILD_TIME_PASSES").is_some_and(|v| v == "1") {
                    let bytes: Vec<u8> = p
                        .opencl_spirv
                        .iter()
                        .flat_map(|w| w.to_le_bytes())
                        .collect();
                    let started = std::time::Instant::now();
                    if let Err(e) = vkcl::compiler::build_structured(&bytes, opts, &caps) {
                        eprintln!("the passes alone failed: {}", e.log);
                    }
                    let ms = started.elapsed().as_secs_f64() * 1e3;
                    passes = format!(", passes alone {ms:.2} ms");
                }
                println!(
                    "run {run} ({}): build {build_ms:.2} ms{passes}; {}",
                    if run == 0 && !warm { "cold" } else { "cached" },
                    words.join(", ")
                );
            }
            Err(e) => {
                eprintln!("build failed ({:?}):\n{}", e.kind, e.log);
                std::process::exit(1);
            }
        }
    }
}
