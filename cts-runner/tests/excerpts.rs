//! Every status rule on CTS log excerpts (tests/data, described in its README): what the
//! CTS printed, and the status cts-runner must give it.

use cts_runner::model::{Status, TestResult};
use cts_runner::relog;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn statuses(tests: &[TestResult]) -> Vec<(&str, Status)> {
    tests.iter().map(|t| (t.name.as_str(), t.status)).collect()
}

#[test]
fn passes_that_skipped_their_work_are_not_passes() {
    let got = relog::reclassify("mixed", &[], None, include_str!("data/untested.log"));
    assert_eq!(
        statuses(&got),
        vec![
            ("queue_hint", Status::PassedWithoutTesting),
            ("mem_host_no_access_image", Status::PassedWithoutTesting),
            ("image_migrate", Status::PassedWithoutTesting),
            (
                "sub_buffers_read_write_dual_devices",
                Status::PassedWithoutTesting
            ),
            ("async_copy_global_to_local2D", Status::PassedWithoutTesting),
            (
                "async_work_group_copy_fence_export_after_import_aliased_global",
                Status::PassedWithoutTesting
            ),
            // The CTS's own "test not supported" verdict stays a skip.
            ("progvar_prog_scope_init", Status::Skip),
            ("options_denorm_cache", Status::PassedWithoutTesting),
            ("char_compare", Status::PassedWithoutTesting),
            ("svm_atomic_init", Status::PassedWithoutTesting),
            ("divide_cr", Status::PassedWithoutTesting),
        ]
    );
    // The note quotes the CTS.
    assert_eq!(
        got[3].note.as_deref(),
        Some("Note: Unable to run dual-device sub-buffer test (only one device available). Skipping test (implicitly passing).")
    );
    assert_eq!(
        got[8].note.as_deref(),
        Some("Running in wimpy mode, skipping long test")
    );
}

#[test]
fn passes_that_ran_stay_passes_and_failures_stay_failures() {
    let got = relog::reclassify("mixed", &[], None, include_str!("data/passes.log"));
    assert_eq!(
        statuses(&got),
        vec![
            // Ran four flag sets, skipped the immutable ones.
            ("enqueue_map_buffer", Status::PartialPass),
            ("mem_host_no_access_buffer", Status::Pass),
            // "Test disabled" (the CTS's own choice, for every device) is not a skip notice.
            ("atomic_fetch_add", Status::Pass),
            // vkcl's "... is not supported yet" in a build log and the CTS's "skipping
            // further sizes" after a failure leave a failure a failure.
            ("vload_private", Status::Fail),
        ]
    );
    assert!(got[0]
        .note
        .as_deref()
        .is_some_and(|n| n.contains("3 skip notices")));
}

#[test]
fn device_partition_counts_only_partition_types_that_ran() {
    let got = relog::reclassify(
        "device_partition",
        &[],
        None,
        include_str!("data/device_partition.log"),
    );
    assert_eq!(
        statuses(&got),
        vec![
            // EQUALLY and BY_COUNTS ran (2 and 3 devices, 64 kernel runs each), the six
            // affinity domains were skipped.
            ("partition_all", Status::PartialPass),
            // "Maximal number of sub-devices" and "Testing on all device ... finished" are
            // chatter: nothing was partitioned.
            (
                "partition_by_affinity_domain_numa",
                Status::PassedWithoutTesting
            ),
            ("partition_equally", Status::Pass),
        ]
    );
}

const THREAD_DIMENSIONS: &[&str] = &[
    "full_1d_explicit_local",
    "full_2d_explicit_local",
    "full_3d_explicit_local",
    "full_1d_implicit_local",
    "full_2d_implicit_local",
    "full_3d_implicit_local",
    "quick_1d_explicit_local",
];

#[test]
fn an_argument_suite_in_wimpy_mode_ran_nothing() {
    let listed = names(THREAD_DIMENSIONS);
    let got = relog::reclassify(
        "thread_dimensions_full",
        &names(&["full*"]),
        Some(&listed),
        include_str!("data/thread_dimensions_wimpy.log"),
    );
    assert_eq!(got.len(), 6, "full* names 6 of the 7 listed tests");
    assert!(
        got.iter().all(|t| t.status == Status::PassedWithoutTesting),
        "{got:?}"
    );
}

#[test]
fn tests_after_a_timeout_are_listed_as_not_run() {
    let listed = names(THREAD_DIMENSIONS);
    let got = relog::reclassify(
        "thread_dimensions_full",
        &names(&["full*"]),
        Some(&listed),
        include_str!("data/thread_dimensions_timeout.log"),
    );
    let mut got = statuses(&got);
    got.sort();
    let mut want = vec![
        ("full_1d_explicit_local", Status::Pass),
        ("full_2d_explicit_local", Status::Timeout),
        ("full_3d_explicit_local", Status::NotRun),
        ("full_1d_implicit_local", Status::NotRun),
        ("full_2d_implicit_local", Status::NotRun),
        ("full_3d_implicit_local", Status::NotRun),
    ];
    want.sort();
    assert_eq!(got, want);
    // Without the list, the unreached tests cannot be named, but the timeout is kept.
    let got = relog::reclassify(
        "thread_dimensions_full",
        &names(&["full*"]),
        None,
        include_str!("data/thread_dimensions_timeout.log"),
    );
    assert_eq!(
        statuses(&got),
        vec![
            ("full_1d_explicit_local", Status::Pass),
            ("full_2d_explicit_local", Status::Timeout)
        ]
    );
}

#[test]
fn skipped_closing_line_of_an_argument_suite() {
    let log = include_str!("data/image_streams_no_images.log");
    let args = names(&["CL_FILTER_NEAREST"]);
    // Without a list: one row for the suite, a skip (not the pass it was reported as).
    let got = relog::reclassify("image_streams", &args, None, log);
    assert_eq!(statuses(&got), vec![("image_streams", Status::Skip)]);
    assert_eq!(got[0].note.as_deref(), Some("SKIPPED 18 of 18 tests."));
    // With the binary's list (no argument names a test: all are expected): each a skip.
    let listed: Vec<String> = (0..18).map(|i| format!("t{i}")).collect();
    let got = relog::reclassify("image_streams", &args, Some(&listed), log);
    assert_eq!(got.len(), 18);
    assert!(got.iter().all(|t| t.status == Status::Skip));
}

#[test]
fn skipped_closing_line_of_a_single_test_process() {
    let log = "### images/kernel_read_write/test_image_streams 1D (exit 0, 0.2 s)\n\
               Test skipped while initialization\nSKIPPED 1 of 1 tests.\n";
    let got = relog::reclassify("image_streams", &[], None, log);
    assert_eq!(statuses(&got), vec![("1D", Status::Skip)]);
}
