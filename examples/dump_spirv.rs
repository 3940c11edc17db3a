//! Writes the lowered SPIR-V of every kernel of an OpenCL C file (compiled as for lavapipe,
//! `DeviceCaps::default()`) to `<out-dir>/<kernel>.spv`, for `spirv-dis`: a debugging aid.
//!
//! ```sh
//! cargo run --example dump_spirv -- kernel.cl /tmp/out ["build options"]
//! ```
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: dump_spirv FILE.cl OUT_DIR [OPTIONS]");
        std::process::exit(2);
    }
    let src = std::fs::read_to_string(&args[1]).expect("read the source");
    let opts = args.get(3).map(String::as_str).unwrap_or("");
    let tools = vkcl::compiler::find_tools().expect("clang-15, opt-15, llvm-spirv-15");
    let caps = vkcl::compiler::DeviceCaps::default();
    match vkcl::compiler::compile_source(&tools, &src, opts, &caps) {
        Ok(p) => {
            std::fs::create_dir_all(&args[2]).expect("make the output directory");
            for k in &p.kernels {
                let bytes: Vec<u8> = k.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
                let path = std::path::Path::new(&args[2]).join(format!("{}.spv", k.name));
                std::fs::write(&path, bytes).expect("write the module");
                println!("{}", path.display());
            }
        }
        Err(e) => {
            eprintln!("build failed ({:?}):\n{}", e.kind, e.log);
            std::process::exit(1);
        }
    }
}
