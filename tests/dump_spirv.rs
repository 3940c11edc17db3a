//! `VKCL_DUMP_SPIRV=DIR` writes each kernel's lowered Vulkan module (docs/settings.md): one
//! file per kernel, valid Vulkan SPIR-V whose entry point is the kernel.
mod common;
use common::*;

#[test]
fn every_kernel_is_written_as_valid_vulkan_spirv() {
    // Before the first OpenCL call: the library reads its settings once.
    let dir = std::env::temp_dir().join(format!("vkcl-dump-spirv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("VKCL_DUMP_SPIRV", &dir);
    std::env::set_var("VKCL_CACHE", "0");
    let env = Env::new();
    let p = env.build(
        "__kernel void first(__global int *a) { a[get_global_id(0)] = 1; }\n\
         __kernel void second(__global float *b, int n) { for (int i = -2; i < n; i++) b[i + 2] = i; }\n",
    );
    let _k = env.kernel(p, "second");
    let mut found = Vec::new();
    for e in std::fs::read_dir(&dir).expect("VKCL_DUMP_SPIRV directory was not created") {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            bytes.len() > 20 && bytes.len() % 4 == 0,
            "{name}: {} bytes",
            bytes.len()
        );
        assert_eq!(
            &bytes[..4],
            &0x0723_0203u32.to_le_bytes(),
            "{name}: no SPIR-V magic"
        );
        let kernel = name.split('-').next().unwrap().to_string();
        // The kernel's name is the module's entry point (a literal string in OpEntryPoint).
        assert!(
            bytes.windows(kernel.len()).any(|w| w == kernel.as_bytes()),
            "{name}: no entry point {kernel}"
        );
        let r = std::process::Command::new("spirv-val")
            .args(["--target-env", "vulkan1.2"])
            .arg(&path)
            .output()
            .expect("spirv-val (spirv-tools) must be installed");
        assert!(
            r.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        found.push(kernel);
    }
    found.sort();
    found.dedup();
    assert_eq!(found, ["first", "second"]);
    let _ = std::fs::remove_dir_all(&dir);
}
