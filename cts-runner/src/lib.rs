//! cts-runner: runs Khronos OpenCL-CTS test binaries against vkcl and keeps score.
//!
//! The pieces, each usable on its own and tested without a CTS:
//! - [`suites`]: the quick and full suite lists (the full one read from the CTS's own
//!   `opencl_conformance_tests_full.csv`, minus the exclusions in `suites/exclusions.txt`);
//! - [`exec`]: runs one process with a time limit, its stdout and stderr merged into one
//!   timestamped log;
//! - [`parse`]: turns CTS output into per-test results;
//! - [`skips`]: tells a pass that tested something from one that skipped its work;
//! - [`cts_build`]: a CTS build directory's source and commit;
//! - [`runner`]: schedules suites and tests over worker threads;
//! - [`relog`]: reads the raw logs back, to judge a recorded run again;
//! - [`report`]: the results JSON and the Markdown tables;
//! - [`expect`]: expectations per device kind, and the comparison that decides the exit code;
//! - [`changes`]: `--changed-since`, the suites a change can affect, and the vkcl commit.
//! - [`difftest`]: random differential testing of OpenCL C kernels (`vkcl-difftest`).
//!
//! The benchmark (`vkcl-bench`) lives in `src/bin/vkcl-bench/` and shares nothing with the
//! runner but this crate's name.

pub mod changes;
pub mod cts_build;
pub mod difftest;
pub mod exec;
pub mod expect;
pub mod model;
pub mod parse;
pub mod relog;
pub mod report;
pub mod runner;
pub mod skips;
pub mod suites;
