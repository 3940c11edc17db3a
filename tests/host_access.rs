//! Host access to buffers on the device's default path (on lavapipe: the storage itself, no
//! staging): maps, rectangles and reads against a host model. tests/host_access_staged.rs runs
//! the same tests with `VKCL_STAGED_READS=1`; the body is tests/common/host_access_body.rs.
mod common;

const STAGED: bool = false;
const DEVICE_LOCAL: bool = false;

include!("common/host_access_body.rs");
