//! Telling a pass that tested something from one that did not.
//!
//! The CTS harness prints `<name> passed` for a test that returned early because the device
//! lacks what it needs ("Wimpy mode enabled, skipping test", "Images are not supported by the
//! device, skipping test...", "SVM_ATOMICS not supported", "Skipping test (implicitly
//! passing)"). Those passes exercised nothing and must not be counted as passes. The rules,
//! applied to the lines a test printed between its `<name>...` line and its verdict:
//!
//! - a line is a *skip notice* when [`is_skip_notice`] says so (the CTS's own words: a form of
//!   "skip", "implicitly passing", or a line that ends with "not supported");
//! - a pass with no skip notice stays a pass;
//! - a notice that skips one type's cases ("skipping double tests", "Skipping half because
//!   cl_khr_fp16 extension is not supported") says the test went on with its other types,
//!   which print nothing when they pass (geometrics `geom_dot`): the pass is a
//!   [`Status::PartialPass`], unless the test's name holds that type
//!   (`op_fadd_double_fast`, `select_half_short`), where the type was all it tests;
//! - a pass with other skip notices and no other line is [`Status::PassedWithoutTesting`];
//! - a pass with skip notices and other lines is [`Status::PartialPass`]: some cases ran.
//!   A suite with a *work marker* ([`crate::suites::WORK_MARKERS`]) counts only lines holding
//!   the marker as evidence that a case ran (device_partition prints "Maximal number of
//!   sub-devices" and "Testing on all device ... finished" even when every type was skipped).
//!
//! A test that did its work silently and then printed one notice that is not of a type's
//! cases is taken for one that did nothing: the rules err toward not counting a pass.

use crate::model::Status;

/// Whether a line of a test's output says that the test (or one of its cases) skipped its
/// work. Lines of vkcl's own diagnostics (`kernel `k`: ... is not supported yet`) and lines
/// naming an error are not notices: a build failure is not a skip.
pub fn is_skip_notice(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() || t.starts_with("kernel `") {
        return false;
    }
    let lower = t.to_ascii_lowercase();
    if lower.contains("error") || lower.contains("fail") {
        return false;
    }
    if lower.contains("skipping") || lower.contains("skipped") || lower.contains("implicitly pass")
    {
        return true;
    }
    // "cl_khr_priority_hints is not supported.", "atomic_int - SVM_ATOMICS not supported",
    // "INDEPENDENT FORWARD PROGRESS not supported...", but not compiler features_macro's
    // report "Feature status: API - not supported, compiler - not supported".
    let end = lower.trim_end_matches(['.', ' ', '!']);
    (end.ends_with(" not supported") || end.ends_with(" not supported on this device"))
        && !end.ends_with("- not supported")
}

/// The floating-point type whose cases a notice skips ("skipping double tests", "Skipping
/// half because ..."), if it is such a notice.
pub fn skipped_type(line: &str) -> Option<&'static str> {
    let lower = line.to_ascii_lowercase();
    ["double", "half"]
        .into_iter()
        .find(|ty| lower.contains(&format!("skipping {ty}")))
}

/// What a test printed between its start and its verdict, as far as skipping goes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence {
    /// The first skip notice, trimmed.
    pub first_notice: Option<String>,
    /// How many skip notices.
    pub notices: usize,
    /// Whether a line showed that some case ran: any non-blank line that is not a notice, or
    /// with a work marker, a line holding it.
    pub worked: bool,
    /// The types whose cases a notice skipped ([`skipped_type`]).
    pub skipped_types: Vec<&'static str>,
}

impl Evidence {
    /// Takes one line of the running test's output.
    pub fn see(&mut self, line: &str, work_marker: Option<&str>) {
        let t = line.trim();
        if t.is_empty() {
            return;
        }
        if is_skip_notice(t) {
            self.notices += 1;
            if let Some(ty) = skipped_type(t) {
                if !self.skipped_types.contains(&ty) {
                    self.skipped_types.push(ty);
                }
            }
            if self.first_notice.is_none() {
                let mut s: String = t.chars().take(160).collect();
                if s.len() < t.len() {
                    s.push_str("...");
                }
                self.first_notice = Some(s);
            }
        } else if work_marker.is_none_or(|m| t.contains(m)) {
            self.worked = true;
        }
    }

    /// The status of test `name` whose verdict line said `verdict`, and the note to go with
    /// it. Only a pass is changed.
    pub fn judge(&self, name: &str, verdict: Status) -> (Status, Option<String>) {
        if verdict != Status::Pass || self.notices == 0 {
            return (verdict, None);
        }
        let first = self.first_notice.clone().unwrap_or_default();
        let lower = name.to_ascii_lowercase();
        let other_types_ran = self.skipped_types.iter().any(|ty| !lower.contains(ty));
        if self.worked || other_types_ran {
            (
                Status::PartialPass,
                Some(format!(
                    "some cases skipped ({} skip notices; first: {first})",
                    self.notices
                )),
            )
        } else {
            (Status::PassedWithoutTesting, Some(first))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_in_the_ctss_words() {
        for l in [
            "Wimpy mode enabled, skipping test",
            "Running in wimpy mode, skipping long test",
            "Images are not supported by the device, skipping test...",
            "Device does not support images. Skipping test.",
            "Note: Unable to run dual-device sub-buffer test (only one device available). Skipping test (implicitly passing).",
            "Device does not support extended async copies fence. Skipping test.",
            "Device does not support denormalized single-precision floats; skipping test.",
            "cl_khr_priority_hints is not supported.",
            "\tatomic_int - SVM_ATOMICS not supported",
            "Correctly rounded divide and sqrt are not supported, skipping function.",
            "No image support on current device - skipped",
            "Device partition type \"CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN\" \"CL_DEVICE_AFFINITY_DOMAIN_NUMA\" is not supported on device 0x557e25df32c0. Skipping test...",
        ] {
            assert!(is_skip_notice(l), "{l}");
        }
        for l in [
            "",
            "Testing with 2 queues on 2 devices, 64 kernel executions.",
            "kernel `test_fn`: reinterpreting private or local memory through a pointer cast is not supported here: 8-bit view",
            "kernel `k`: atomics on __local float are not supported yet",
            "Failure; skipping further sizes for this type.",
            "ERROR: clBuildProgram failed: printf is not supported",
            "Test succeeded",
            "\t\tTest disabled",
        ] {
            assert!(!is_skip_notice(l), "{l}");
        }
    }

    fn judge(lines: &[&str], marker: Option<&str>) -> Status {
        let mut e = Evidence::default();
        for l in lines {
            e.see(l, marker);
        }
        e.judge("t", Status::Pass).0
    }

    #[test]
    fn pass_partial_or_untested() {
        assert_eq!(judge(&["Test succeeded", ""], None), Status::Pass);
        assert_eq!(
            judge(&["Wimpy mode enabled, skipping test"], None),
            Status::PassedWithoutTesting
        );
        assert_eq!(
            judge(
                &[
                    "Testing with cl_mem_flags src: CL_MEM_USE_HOST_PTR",
                    "Device does not support CL_MEM_IMMUTABLE_EXT. Skipping the memory flag.",
                ],
                None
            ),
            Status::PartialPass
        );
        // With a marker, only a marked line is work.
        let numa = [
            "Maximal number of sub-devices on device 0x5601bc4cb2c0 is 2.",
            "Device partition type \"X\" is not supported on device 0x1. Skipping test...",
            "Testing on all device 0x5601bc4cb2c0 finished",
        ];
        assert_eq!(judge(&numa, None), Status::PartialPass);
        assert_eq!(
            judge(&numa, Some("Testing on device ")),
            Status::PassedWithoutTesting
        );
        let mut all =
            vec!["Testing on device 0x1 partition type \"CL_DEVICE_PARTITION_EQUALLY\" (1,0)"];
        all.extend(numa);
        assert_eq!(judge(&all, Some("Testing on device ")), Status::PartialPass);
    }

    #[test]
    fn a_types_cases_skipped() {
        let double = "Extension cl_khr_fp64 not supported; skipping double tests.";
        let half = "Skipping half because cl_khr_fp16 extension is not supported.";
        assert_eq!(skipped_type(double), Some("double"));
        assert_eq!(skipped_type(half), Some("half"));
        assert_eq!(skipped_type("Wimpy mode enabled, skipping test"), None);
        let judge_named = |name: &str, lines: &[&str]| {
            let mut e = Evidence::default();
            for l in lines {
                e.see(l, None);
            }
            e.judge(name, Status::Pass).0
        };
        // geom_dot ran its float cases silently.
        assert_eq!(judge_named("geom_dot", &[double]), Status::PartialPass);
        assert_eq!(
            judge_named("relational_bitselect", &[half, double]),
            Status::PartialPass
        );
        // A test named for the type has nothing else.
        assert_eq!(
            judge_named("op_fadd_double_fast", &[double]),
            Status::PassedWithoutTesting
        );
        assert_eq!(
            judge_named("select_half_short", &[half]),
            Status::PassedWithoutTesting
        );
        // compiler features_macro reports a state; it skips nothing.
        assert!(!is_skip_notice(
            "Feature status: API - not supported, compiler - not supported"
        ));
    }

    #[test]
    fn only_a_pass_changes() {
        let mut e = Evidence::default();
        e.see("Wimpy mode enabled, skipping test", None);
        assert_eq!(e.judge("t", Status::Fail), (Status::Fail, None));
        assert_eq!(e.judge("t", Status::Skip).0, Status::Skip);
        let (s, note) = e.judge("t", Status::Pass);
        assert_eq!(s, Status::PassedWithoutTesting);
        assert_eq!(note.as_deref(), Some("Wimpy mode enabled, skipping test"));
    }
}
