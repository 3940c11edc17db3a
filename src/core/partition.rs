//! How a device on the CUDA path is partitioned (OpenCL 3.0 section 4.3, clCreateSubDevices):
//! which driver split gives every sub-device exactly the compute units the scheme asks for,
//! or the Vulkan path (compute-unit-limited dispatch) where none does. Pure arithmetic, so the
//! rule is tested without a GPU (`cargo test --lib core::partition`).
//!
//! The rule (docs/subdevices.md, "Sub-devices on NVIDIA: green contexts"):
//! `EQUALLY` n makes as many sub-devices of exactly n units as fit, `BY_COUNTS` one of
//! exactly each count. Without vkcl's split property a partition whose counts are all
//! multiples of the driver's co-scheduling alignment (8 SMs on the H200) is an aligned green
//! context split; else, when all counts are even, a fine one (steps of 2,
//! `IGNORE_SM_COSCHEDULING`); else the sub-devices are Vulkan-path ones (no green context,
//! kernels keep to their count by compute-unit-limited dispatch). An explicit `ALIGNED` or
//! `FINE` whose step does not divide every count is `CL_DEVICE_PARTITION_FAILED` (never a
//! rounded count). `BACKFILL` is vkcl's opt-in departure from `EQUALLY`: shares of at least
//! n that together cover the device.

use super::error::{ClError, ClResult};
pub use crate::backend::cuda::SplitMethod;
use opencl_sys::*;

/// A partition scheme of clCreateSubDevices, decoded from its property list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partition {
    /// `CL_DEVICE_PARTITION_EQUALLY`: as many sub-devices of `n` compute units as fit.
    Equally(u32),
    /// `CL_DEVICE_PARTITION_BY_COUNTS`: one sub-device per count, in order.
    ByCounts(Vec<u32>),
    /// `CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN` with one `CL_DEVICE_AFFINITY_DOMAIN_*` bit.
    ByAffinityDomain(cl_device_affinity_domain),
}

/// Every affinity domain the spec defines (`CL_DEVICE_AFFINITY_DOMAIN_*`).
pub const ALL_AFFINITY_DOMAINS: cl_device_affinity_domain = CL_DEVICE_AFFINITY_DOMAIN_NUMA
    | CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE
    | CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE
    | CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE
    | CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE
    | CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;

/// Splits `units` compute units by `scheme` into (first unit, count) pairs, offsets relative
/// to the device being partitioned; `domains` are the affinity domains the device has
/// (`CL_DEVICE_PARTITION_AFFINITY_DOMAIN`).
///
/// Errors (OpenCL 3.0 section 4.3, clCreateSubDevices): `CL_INVALID_VALUE` for values that are
/// not valid or not supported by the device; `CL_DEVICE_PARTITION_FAILED` when the scheme is
/// supported but the device cannot be split that way; `CL_INVALID_DEVICE_PARTITION_COUNT` for
/// BY_COUNTS lists that ask for too many sub-devices or compute units.
pub fn plan_partition(
    units: u32,
    domains: cl_device_affinity_domain,
    scheme: &Partition,
) -> ClResult<Vec<(u32, u32)>> {
    match scheme {
        Partition::Equally(n) => {
            // CL_INVALID_VALUE if values specified in properties are not valid (n compute units, n >= 1).
            if *n == 0 {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // CL_INVALID_DEVICE_PARTITION_COUNT if the total number of compute units requested
            // exceeds CL_DEVICE_MAX_COMPUTE_UNITS for in_device.
            if *n > units {
                return Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT));
            }
            // CL_DEVICE_PARTITION_FAILED if the partition name is supported by the implementation
            // but in_device could not be further partitioned: n = all its compute units leaves no
            // smaller device to make (the CTS's negative_create_sub_devices reads it so).
            if *n == units {
                return Err(ClError(CL_DEVICE_PARTITION_FAILED));
            }
            Ok((0..units / n).map(|i| (i * n, *n)).collect())
        }
        Partition::ByCounts(counts) => {
            // CL_INVALID_VALUE if values specified in properties are not valid (an empty list).
            if counts.is_empty() {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // CL_INVALID_DEVICE_PARTITION_COUNT if ... the number of sub-devices requested exceeds
            // CL_DEVICE_PARTITION_MAX_SUB_DEVICES ... or exceeds CL_DEVICE_MAX_COMPUTE_UNITS.
            if counts.len() as u64 > u64::from(units) {
                return Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT));
            }
            // CL_INVALID_DEVICE_PARTITION_COUNT if ... the number of compute units requested for one
            // or more sub-devices is less than zero (a sub-device needs one unit: 0 is refused too).
            if counts.contains(&0) {
                return Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT));
            }
            // CL_INVALID_DEVICE_PARTITION_COUNT if ... the total number of compute units requested
            // exceeds CL_DEVICE_MAX_COMPUTE_UNITS for in_device.
            if counts.iter().map(|&c| u64::from(c)).sum::<u64>() > u64::from(units) {
                return Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT));
            }
            let mut first = 0;
            Ok(counts
                .iter()
                .map(|&c| {
                    first += c;
                    (first - c, c)
                })
                .collect())
        }
        Partition::ByAffinityDomain(d) => {
            // CL_INVALID_VALUE if values specified in properties are not valid (exactly one domain).
            if d & ALL_AFFINITY_DOMAINS != *d || d.count_ones() != 1 {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // CL_INVALID_VALUE if values specified in properties are valid but not supported by the
            // device (vkcl's devices report no affinity domains: see docs/subdevices.md).
            if domains & d == 0 {
                return Err(ClError(CL_INVALID_VALUE));
            }
            // No device offers a domain yet; one that does splits here along it.
            Err(ClError(CL_DEVICE_PARTITION_FAILED))
        }
    }
}

/// How the sub-devices of a partition on the CUDA path are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitVia {
    /// Green contexts from one driver split by this method.
    Green(SplitMethod),
    /// Vulkan-path sub-devices (no green context): compute-unit-limited dispatch.
    Vulkan,
}

/// A partition of a device on the CUDA path: how, and the (first unit, count) of each
/// sub-device (the counts exact; for [`SplitMethod::Backfill`] the least each share gets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmSplit {
    pub via: SplitVia,
    pub parts: Vec<(u32, u32)>,
}

/// Plans the partition of a device of `units` SMs whose driver co-schedules SMs in groups of
/// `align` (`smCoscheduledAlignment`: 8 on the H200), by `scheme`, with the split method
/// `requested` by vkcl's property (None: absent). The counts follow [`plan_partition`]
/// (OpenCL's rules: `EQUALLY` n gives units / n sub-devices of n), and the method is chosen
/// as the module's rule says.
///
/// Errors: as [`plan_partition`]; `CL_DEVICE_PARTITION_FAILED` for an explicit `ALIGNED`
/// (`FINE`) request whose counts are not all multiples of `align` (of 2).
pub fn plan_sm_split(
    units: u32,
    align: u32,
    scheme: &Partition,
    requested: Option<SplitMethod>,
) -> ClResult<SmSplit> {
    let parts = plan_partition(units, 0, scheme)?;
    let align = align.max(2);
    let all = |step: u32| parts.iter().all(|&(_, c)| c % step == 0);
    let via = match requested {
        None if all(align) => SplitVia::Green(SplitMethod::Aligned),
        None if all(2) => SplitVia::Green(SplitMethod::Fine),
        None => SplitVia::Vulkan,
        // CL_DEVICE_PARTITION_FAILED if the partition name is supported by the implementation
        // but in_device could not be further partitioned (not into these counts this way).
        Some(SplitMethod::Aligned) if !all(align) => {
            return Err(ClError(CL_DEVICE_PARTITION_FAILED))
        }
        Some(SplitMethod::Fine) if !all(2) => return Err(ClError(CL_DEVICE_PARTITION_FAILED)),
        // BACKFILL with BY_COUNTS is FINE.
        Some(SplitMethod::Backfill) if matches!(scheme, Partition::ByCounts(_)) => {
            if !all(2) {
                return Err(ClError(CL_DEVICE_PARTITION_FAILED));
            }
            SplitVia::Green(SplitMethod::Fine)
        }
        Some(m) => SplitVia::Green(m),
    };
    Ok(SmSplit { via, parts })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: u32 = 132;

    fn plan(scheme: Partition, requested: Option<SplitMethod>) -> ClResult<SmSplit> {
        plan_sm_split(H200, 8, &scheme, requested)
    }

    fn counts(s: &SmSplit) -> Vec<u32> {
        s.parts.iter().map(|&(_, c)| c).collect()
    }

    #[test]
    fn equally_on_the_h200() {
        // 66: two of 66 (the case), fine (66 is not a multiple of 8).
        let s = plan(Partition::Equally(66), None).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Fine));
        assert_eq!(s.parts, vec![(0, 66), (66, 66)]);
        // 64: two of 64, aligned.
        let s = plan(Partition::Equally(64), None).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Aligned));
        assert_eq!(counts(&s), vec![64, 64]);
        // 8: sixteen of 8, aligned.
        let s = plan(Partition::Equally(8), None).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Aligned));
        assert_eq!(counts(&s), vec![8; 16]);
        // 2: sixty-six of 2, fine.
        let s = plan(Partition::Equally(2), None).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Fine));
        assert_eq!(counts(&s), vec![2; 66]);
        // 1 and 3: odd, no green split gives them: the Vulkan path, 132 of 1 and 44 of 3.
        let s = plan(Partition::Equally(1), None).unwrap();
        assert_eq!(s.via, SplitVia::Vulkan);
        assert_eq!(counts(&s), vec![1; 132]);
        let s = plan(Partition::Equally(3), None).unwrap();
        assert_eq!(s.via, SplitVia::Vulkan);
        assert_eq!(counts(&s), vec![3; 44]);
        assert_eq!(s.parts[43], (129, 3));
        // Every part's count is exactly n, whatever n.
        for n in 1..H200 {
            let s = plan(Partition::Equally(n), None).unwrap();
            assert_eq!(s.parts.len() as u32, H200 / n, "EQUALLY {n}");
            assert!(s.parts.iter().all(|&(_, c)| c == n), "EQUALLY {n}");
        }
        // The spec's errors stay: all units, more than all, zero.
        assert_eq!(
            plan(Partition::Equally(132), None),
            Err(ClError(CL_DEVICE_PARTITION_FAILED))
        );
        assert_eq!(
            plan(Partition::Equally(133), None),
            Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT))
        );
        assert_eq!(
            plan(Partition::Equally(0), None),
            Err(ClError(CL_INVALID_VALUE))
        );
    }

    #[test]
    fn explicit_methods_never_round() {
        // ALIGNED 66 would be 72 each: refused, not rounded.
        assert_eq!(
            plan(Partition::Equally(66), Some(SplitMethod::Aligned)),
            Err(ClError(CL_DEVICE_PARTITION_FAILED))
        );
        let s = plan(Partition::Equally(64), Some(SplitMethod::Aligned)).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Aligned));
        // FINE: even counts only.
        let s = plan(Partition::Equally(64), Some(SplitMethod::Fine)).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Fine));
        assert_eq!(counts(&s), vec![64, 64]);
        assert_eq!(
            plan(Partition::Equally(3), Some(SplitMethod::Fine)),
            Err(ClError(CL_DEVICE_PARTITION_FAILED))
        );
        // BACKFILL: EQUALLY's shares of at least n (the driver's counts decide).
        let s = plan(Partition::Equally(64), Some(SplitMethod::Backfill)).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Backfill));
        assert_eq!(s.parts.len(), 2);
        // BACKFILL with BY_COUNTS is FINE.
        let s = plan(
            Partition::ByCounts(vec![10, 6]),
            Some(SplitMethod::Backfill),
        )
        .unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Fine));
    }

    #[test]
    fn by_counts_on_the_h200() {
        let by = |c: &[u32]| plan(Partition::ByCounts(c.to_vec()), None);
        // 66 + 66: fine, exact (aligned would need 72 + 72 > 132).
        let s = by(&[66, 66]).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Fine));
        assert_eq!(s.parts, vec![(0, 66), (66, 66)]);
        // 64 + 64 and 8 + 16 + 32 + 64: aligned.
        assert_eq!(
            by(&[64, 64]).unwrap().via,
            SplitVia::Green(SplitMethod::Aligned)
        );
        let s = by(&[8, 16, 32, 64]).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Aligned));
        assert_eq!(s.parts, vec![(0, 8), (8, 16), (24, 32), (56, 64)]);
        // 64 + 66, 10 + 6: even, not all multiples of 8: fine.
        assert_eq!(
            by(&[64, 66]).unwrap().via,
            SplitVia::Green(SplitMethod::Fine)
        );
        assert_eq!(
            by(&[10, 6]).unwrap().via,
            SplitVia::Green(SplitMethod::Fine)
        );
        // An odd count anywhere: the Vulkan path, counts as asked.
        let s = by(&[65, 1]).unwrap();
        assert_eq!(s.via, SplitVia::Vulkan);
        assert_eq!(s.parts, vec![(0, 65), (65, 1)]);
        let s = by(&[10, 3]).unwrap();
        assert_eq!(s.via, SplitVia::Vulkan);
        assert_eq!(counts(&s), vec![10, 3]);
        // The spec's errors stay.
        assert_eq!(
            by(&[100, 33]),
            Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT))
        );
        assert_eq!(by(&[0, 8]), Err(ClError(CL_INVALID_DEVICE_PARTITION_COUNT)));
        assert_eq!(by(&[]), Err(ClError(CL_INVALID_VALUE)));
        // Explicit ALIGNED with 10 + 3 (once 16 + 8): refused.
        assert_eq!(
            plan(Partition::ByCounts(vec![10, 3]), Some(SplitMethod::Aligned)),
            Err(ClError(CL_DEVICE_PARTITION_FAILED))
        );
    }

    #[test]
    fn nested_parts_use_their_own_sms() {
        // A 66-SM green context split EQUALLY 8: eight of 8, aligned; 33: two of 33, Vulkan.
        let s = plan_sm_split(66, 8, &Partition::Equally(8), None).unwrap();
        assert_eq!(s.via, SplitVia::Green(SplitMethod::Aligned));
        assert_eq!(counts(&s), vec![8; 8]);
        let s = plan_sm_split(66, 8, &Partition::Equally(33), None).unwrap();
        assert_eq!(s.via, SplitVia::Vulkan);
        assert_eq!(counts(&s), vec![33, 33]);
    }
}
