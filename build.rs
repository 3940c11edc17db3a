//! Build script: links libvkcl.so with `-Bsymbolic`.
//!
//! An application linked with `-lOpenCL` has the loader's `clGetExtensionFunctionAddress*`
//! first in the global symbol scope. Without `-Bsymbolic`, vkcl's own references to functions
//! of the same names (the dispatch table, and identical functions the optimiser merges into
//! the exported ones in release builds) can bind to the loader's, which then dispatches back to
//! itself forever. `-Bsymbolic` binds every reference inside the library to its own definition.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic");
}
