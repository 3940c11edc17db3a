//! SPIR-V modules for IL tests (`clCreateProgramWithIL`): assembled at test time with spirv-as
//! (Debian package spirv-tools) and checked with spirv-val, then made into programs.
use super::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// `text`, a whole module (its own capabilities, extensions and memory model), assembled for
/// SPIR-V 1.4 and checked with spirv-val.
pub fn assemble_whole(text: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("vkcl-spirv-il-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let i = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = dir.join(format!("m{i}.spvasm"));
    let out = dir.join(format!("m{i}.spv"));
    std::fs::write(&src, text).unwrap();
    let r = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.4"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("spirv-as (spirv-tools) must be installed");
    assert!(
        r.status.success(),
        "spirv-as: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    // The test modules themselves must be valid SPIR-V 1.4.
    let r = std::process::Command::new("spirv-val")
        .args(["--target-env", "spv1.4"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "spirv-val: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    std::fs::read(&out).unwrap()
}

pub fn create_il(e: &Env, il: &[u8]) -> cl_program {
    let mut err = 0;
    let p = unsafe {
        cl!(clCreateProgramWithIL)(e.context, il.as_ptr() as *const c_void, il.len(), &mut err)
    };
    ok(err);
    p
}

pub fn build(e: &Env, p: cl_program) {
    let r = unsafe { cl!(clBuildProgram)(p, 1, &e.device, null(), None, null_mut()) };
    assert_eq!(r, CL_SUCCESS, "build failed:\n{}", build_log(p, e.device));
}
