//! Host access to buffers through host-cached staging (`VKCL_STAGED_READS=1`, the path of
//! NVIDIA's device-local BAR memory): the tests of tests/host_access.rs
//! (tests/common/host_access_body.rs) with every map, read and rectangle staged.
mod common;

const STAGED: bool = true;
const DEVICE_LOCAL: bool = false;

include!("common/host_access_body.rs");
