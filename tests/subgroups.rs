//! Sub-groups: the cl_khr_subgroup_* extensions (each reported exactly where the Vulkan driver
//! offers its subgroup operations in compute shaders) and every built-in function of each,
//! for each type the extension covers, against host-computed answers, in work-groups whose
//! size is a multiple of the sub-group size, one that is not (a partial last sub-group), one
//! smaller than a sub-group, and a non-uniform NDRange (a smaller last work-group);
//! clGetKernelSubGroupInfo's answers and error codes.
//!
//! The layout the host model assumes is vkcl's (docs/devices.md): the sub-groups of a
//! work-group are its Vulkan subgroups in order of the linear local id, each of the driver's
//! subgroup size but possibly the last; get_max_sub_group_size() is that size, or the
//! enqueued work-group's size where that is smaller.

mod common;

use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// The cl_khr_subgroup_* extensions, in the order of the OpenCL extension specification.
const EXTENSIONS: &[&str] = &[
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
];

/// What each driver offers in compute shaders (vulkaninfo: `subgroupSupportedOperations`,
/// `shaderSubgroupExtendedTypes`, `subgroupBroadcastDynamicId`), hence the extensions vkcl
/// must report: lavapipe 25.0.7 has basic, vote, arithmetic, ballot, shuffle, shuffle
/// relative, clustered and quad; lavapipe 22.3.6 the same without clustered. NVIDIA's
/// drivers (the H200's 580) have every bit, so everything. `None`: a driver this table does
/// not know (only consistency is checked).
fn expected_extensions(env: &Env) -> Option<Vec<&'static str>> {
    let version = info_string(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DRIVER_VERSION, s, v, r)
    });
    let vendor: cl_uint = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(env.device, CL_DEVICE_VENDOR_ID, s, v, r)
    });
    if version.contains("Mesa 25.0.7") || vendor == 0x10DE {
        Some(EXTENSIONS.to_vec())
    } else if version.contains("Mesa 22.3.6") {
        Some(
            EXTENSIONS
                .iter()
                .copied()
                .filter(|e| *e != "cl_khr_subgroup_clustered_reduce")
                .collect(),
        )
    } else {
        None
    }
}

fn device_uint(d: cl_device_id, q: cl_device_info) -> cl_uint {
    info_scalar(|s, v, r| unsafe { cl!(clGetDeviceInfo)(d, q, s, v, r) })
}

fn has_subgroups(env: &Env) -> bool {
    device_uint(env.device, CL_DEVICE_MAX_NUM_SUB_GROUPS) > 0
}

/// clGetKernelSubGroupInfo with a `size_t` array input; the status and the `size_t` answers.
fn sub_group_info(
    k: cl_kernel,
    d: cl_device_id,
    param: cl_kernel_sub_group_info,
    input: &[usize],
    out_len: usize,
) -> (cl_int, Vec<usize>) {
    let mut out = vec![0usize; out_len];
    let w = std::mem::size_of::<usize>();
    let r = unsafe {
        cl!(clGetKernelSubGroupInfo)(
            k,
            d,
            param,
            std::mem::size_of_val(input),
            if input.is_empty() {
                std::ptr::null()
            } else {
                input.as_ptr() as *const c_void
            },
            out_len * w,
            out.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    };
    (r, out)
}

/// The driver's sub-group size, as the kernel reports it for a large work-group.
fn sub_group_size(k: cl_kernel, d: cl_device_id) -> usize {
    let (r, v) = sub_group_info(k, d, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[256], 1);
    ok(r);
    v[0]
}

#[test]
fn reported_extensions_follow_the_driver() {
    let env = Env::new();
    let claimed: Vec<&str> = EXTENSIONS
        .iter()
        .copied()
        .filter(|e| env.has_extension(e))
        .collect();
    if !has_subgroups(&env) {
        assert!(
            claimed.is_empty(),
            "sub-group extensions without sub-groups"
        );
        return;
    }
    if let Some(want) = expected_extensions(&env) {
        assert_eq!(claimed, want);
    }
    // Each with version 1.0.0 in CL_DEVICE_EXTENSIONS_WITH_VERSION.
    let mut n = 0;
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            0,
            null_mut(),
            &mut n,
        )
    });
    let mut list = vec![
        unsafe { std::mem::zeroed::<cl_name_version>() };
        n / std::mem::size_of::<cl_name_version>()
    ];
    ok(unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_EXTENSIONS_WITH_VERSION,
            n,
            list.as_mut_ptr() as *mut c_void,
            null_mut(),
        )
    });
    for e in &claimed {
        let v = list
            .iter()
            .find(|nv| {
                unsafe { std::ffi::CStr::from_ptr(nv.name.as_ptr() as *const std::ffi::c_char) }
                    .to_bytes()
                    == e.as_bytes()
            })
            .unwrap_or_else(|| panic!("{e} without a version"))
            .version;
        assert_eq!(v, 1 << 22, "{e}: CL_MAKE_VERSION(1, 0, 0)");
    }
    // cl_khr_subgroups is not claimed: it requires independent forward progress of
    // sub-groups, which Vulkan does not promise (CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS
    // must be CL_TRUE with it; OpenCL 3.0 table "Device queries").
    assert!(!env.has_extension("cl_khr_subgroups"));
    let ifp: cl_bool = info_scalar(|s, v, r| unsafe {
        cl!(clGetDeviceInfo)(
            env.device,
            CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
            s,
            v,
            r,
        )
    });
    assert_eq!(ifp, CL_FALSE);
}

#[test]
fn unclaimed_built_ins_fail_the_build() {
    // Where an extension is not reported, its built-ins fail the build with a log line,
    // never run: clang-15 leaves them undeclared (the device's -cl-ext list), and the
    // lowering refuses the instructions (for SPIR-V input) naming the capability the device
    // lacks.
    let env = Env::new();
    let probes = [
        (
            "cl_khr_subgroup_non_uniform_vote",
            "sub_group_non_uniform_all(x)",
        ),
        ("cl_khr_subgroup_ballot", "sub_group_ballot(x).x"),
        (
            "cl_khr_subgroup_non_uniform_arithmetic",
            "sub_group_non_uniform_reduce_mul(x)",
        ),
        ("cl_khr_subgroup_shuffle", "sub_group_shuffle_xor(x, 1u)"),
        (
            "cl_khr_subgroup_shuffle_relative",
            "sub_group_shuffle_down(x, 1u)",
        ),
        (
            "cl_khr_subgroup_clustered_reduce",
            "sub_group_clustered_reduce_add(x, 4u)",
        ),
        ("cl_khr_subgroup_rotate", "sub_group_rotate(x, 1)"),
    ];
    let mut checked = 0;
    for (ext, expr) in probes {
        let src = format!(
            "kernel void k(global int *o) {{ int x = o[get_global_id(0)]; \
             o[get_global_id(0)] = {expr}; }}"
        );
        let r = env.try_build(&src, "-cl-std=CL3.0");
        if env.has_extension(ext) {
            assert!(r.is_ok(), "{ext}: {:?}", r.err());
        } else {
            let (e, log) = r
                .err()
                .unwrap_or_else(|| panic!("{ext} not claimed, yet {expr} built"));
            assert_eq!(e, CL_BUILD_PROGRAM_FAILURE, "{ext}");
            assert!(
                log.contains("undeclared identifier") || log.contains("lacks"),
                "{ext}: {log}"
            );
            checked += 1;
        }
    }
    if let Some(want) = expected_extensions(&env) {
        assert_eq!(checked, EXTENSIONS.len() - want.len());
    }
}

// ---------------------------------------------------------------------------------------
// The host model.

/// An OpenCL C scalar type of the tests.
#[derive(Clone, Copy, Debug)]
struct Ty {
    name: &'static str,
    bits: u32,
    signed: bool,
    float: bool,
}

const TYPES: &[Ty] = &[
    Ty {
        name: "int",
        bits: 32,
        signed: true,
        float: false,
    },
    Ty {
        name: "uint",
        bits: 32,
        signed: false,
        float: false,
    },
    Ty {
        name: "long",
        bits: 64,
        signed: true,
        float: false,
    },
    Ty {
        name: "ulong",
        bits: 64,
        signed: false,
        float: false,
    },
    Ty {
        name: "float",
        bits: 32,
        signed: true,
        float: true,
    },
    // cl_khr_subgroup_extended_types.
    Ty {
        name: "char",
        bits: 8,
        signed: true,
        float: false,
    },
    Ty {
        name: "uchar",
        bits: 8,
        signed: false,
        float: false,
    },
    Ty {
        name: "short",
        bits: 16,
        signed: true,
        float: false,
    },
    Ty {
        name: "ushort",
        bits: 16,
        signed: false,
        float: false,
    },
    // cl_khr_fp16.
    Ty {
        name: "half",
        bits: 16,
        signed: true,
        float: true,
    },
];

impl Ty {
    /// The host-side type of the kernel's buffers: long, ulong or float.
    fn host(&self) -> &'static str {
        match (self.float, self.signed) {
            (true, _) => "float",
            (false, true) => "long",
            (false, false) => "ulong",
        }
    }

    /// `v` truncated to the type and extended back to 64 bits, as `(long)(T)v`.
    fn norm(&self, v: u64) -> u64 {
        if self.bits == 64 {
            return v;
        }
        let t = v & ((1u64 << self.bits) - 1);
        if self.signed && t >> (self.bits - 1) & 1 == 1 {
            t | !((1u64 << self.bits) - 1)
        } else {
            t
        }
    }

    fn extended(&self) -> bool {
        self.bits < 32 && !self.float
    }
}

/// A value: an integer (normalised, see [`Ty::norm`]) or a float.
#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    I(u64),
    F(f32),
}

#[derive(Clone, Copy, Debug)]
enum Arith {
    Add,
    Mul,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl Arith {
    fn name(self) -> &'static str {
        match self {
            Arith::Add => "add",
            Arith::Mul => "mul",
            Arith::Min => "min",
            Arith::Max => "max",
            Arith::And => "and",
            Arith::Or => "or",
            Arith::Xor => "xor",
        }
    }

    fn apply(self, t: &Ty, a: V, b: V) -> V {
        match (a, b) {
            (V::F(a), V::F(b)) => V::F(match self {
                Arith::Add => a + b,
                Arith::Mul => a * b,
                Arith::Min => a.min(b),
                Arith::Max => a.max(b),
                _ => unreachable!("bitwise on float"),
            }),
            (V::I(a), V::I(b)) => {
                let lt = if t.signed {
                    (a as i64) < (b as i64)
                } else {
                    a < b
                };
                V::I(t.norm(match self {
                    Arith::Add => a.wrapping_add(b),
                    Arith::Mul => a.wrapping_mul(b),
                    Arith::Min => {
                        if lt {
                            a
                        } else {
                            b
                        }
                    }
                    Arith::Max => {
                        if lt {
                            b
                        } else {
                            a
                        }
                    }
                    Arith::And => a & b,
                    Arith::Or => a | b,
                    Arith::Xor => a ^ b,
                }))
            }
            _ => unreachable!("mixed values"),
        }
    }

    fn identity(self, t: &Ty) -> V {
        if t.float {
            return V::F(match self {
                Arith::Add => 0.0,
                Arith::Mul => 1.0,
                Arith::Min => f32::INFINITY,
                Arith::Max => f32::NEG_INFINITY,
                _ => unreachable!(),
            });
        }
        let top = 1u64.wrapping_shl(t.bits - 1);
        V::I(t.norm(match self {
            Arith::Add | Arith::Or | Arith::Xor => 0,
            Arith::Mul => 1,
            Arith::And => u64::MAX,
            Arith::Min if t.signed => top - 1,
            Arith::Min => u64::MAX,
            Arith::Max if t.signed => top.wrapping_neg(),
            Arith::Max => 0,
        }))
    }
}

/// One work-item's view of its sub-group.
struct Item<'a> {
    t: &'a Ty,
    /// The sub-group's values of `x`, by sub-group local id.
    x: &'a [V],
    /// Whether each work-item of the sub-group takes the kernel's `if (a & 1)` branch.
    active: &'a [bool],
    /// Each work-item's predicate `p`.
    p: &'a [bool],
    lane: usize,
    /// get_max_sub_group_size().
    max: usize,
}

impl Item<'_> {
    fn size(&self) -> usize {
        self.x.len()
    }
    /// A 32-bit integer result as the kernel stores it, `(HT)(int or uint)`.
    fn int(&self, v: i64) -> Option<V> {
        Some(if self.t.float {
            V::F(v as f32)
        } else {
            V::I(v as u64)
        })
    }
    fn active_lanes(&self) -> Vec<usize> {
        (0..self.size()).filter(|&k| self.active[k]).collect()
    }
    fn at(&self, k: usize) -> Option<V> {
        (k < self.size()).then(|| self.x[k])
    }
    /// The 128-bit ballot of the predicate over the lanes `keep` allows.
    fn ballot(&self, keep: impl Fn(usize) -> bool) -> u128 {
        (0..self.size())
            .filter(|&k| keep(k) && self.p[k])
            .fold(0u128, |m, k| m | 1u128 << k)
    }
}

/// A built-in call to test: its OpenCL C expression (of `x` of the type under test, `p` an
/// int predicate, `lid` = get_sub_group_local_id(), `sz` = get_sub_group_size()), whether
/// it runs in the non-uniform branch `if (a & 1)`, and its host model (`None`: undefined).
struct Call {
    expr: String,
    branch: bool,
    model: Box<dyn Fn(&Item) -> Option<V>>,
}

fn call(
    expr: impl Into<String>,
    branch: bool,
    model: impl Fn(&Item) -> Option<V> + 'static,
) -> Call {
    Call {
        expr: expr.into(),
        branch,
        model: Box::new(model),
    }
}

/// The reductions and scans of `prefix` (`sub_group_` or `sub_group_non_uniform_`) over the
/// lanes `lanes` gives.
fn arithmetic(
    prefix: &str,
    ops: &[Arith],
    branch: bool,
    calls: &mut Vec<Call>,
    lanes: fn(&Item) -> Vec<usize>,
) {
    for &o in ops {
        let n = o.name();
        calls.push(call(format!("{prefix}reduce_{n}(x)"), branch, move |it| {
            Some(
                lanes(it)
                    .iter()
                    .fold(o.identity(it.t), |a, &k| o.apply(it.t, a, it.x[k])),
            )
        }));
        calls.push(call(
            format!("{prefix}scan_inclusive_{n}(x)"),
            branch,
            move |it| {
                Some(
                    lanes(it)
                        .iter()
                        .filter(|&&k| k <= it.lane)
                        .fold(o.identity(it.t), |a, &k| o.apply(it.t, a, it.x[k])),
                )
            },
        ));
        calls.push(call(
            format!("{prefix}scan_exclusive_{n}(x)"),
            branch,
            move |it| {
                Some(
                    lanes(it)
                        .iter()
                        .filter(|&&k| k < it.lane)
                        .fold(o.identity(it.t), |a, &k| o.apply(it.t, a, it.x[k])),
                )
            },
        ));
    }
}

/// The logical reductions and scans of the int predicate.
fn logical(prefix: &str, cluster: Option<usize>, branch: bool, calls: &mut Vec<Call>) {
    for (n, f) in [
        ("and", (|a: bool, b: bool| a & b) as fn(bool, bool) -> bool),
        ("or", |a, b| a | b),
        ("xor", |a, b| a ^ b),
    ] {
        let id = n == "and";
        match cluster {
            Some(c) => calls.push(call(
                format!("{prefix}clustered_reduce_logical_{n}(p, {c}u)"),
                branch,
                move |it| {
                    let first = it.lane / c * c;
                    let v = (first..(first + c).min(it.size())).fold(id, |a, k| f(a, it.p[k]));
                    it.int(v as i64)
                },
            )),
            None => {
                for (scan, keep) in [
                    (
                        "reduce",
                        (|_: usize, _: usize| true) as fn(usize, usize) -> bool,
                    ),
                    ("scan_inclusive", |k, l| k <= l),
                    ("scan_exclusive", |k, l| k < l),
                ] {
                    calls.push(call(
                        format!("{prefix}{scan}_logical_{n}(p)"),
                        branch,
                        move |it| {
                            let v = it
                                .active_lanes()
                                .into_iter()
                                .filter(|&k| keep(k, it.lane))
                                .fold(id, |a, k| f(a, it.p[k]));
                            it.int(v as i64)
                        },
                    ));
                }
            }
        }
    }
}

fn all_lanes(it: &Item) -> Vec<usize> {
    (0..it.size()).collect()
}

/// The calls of extension `ext` for type `t` (`None`: the extension has none of that type).
fn calls_of(ext: &str, t: &Ty) -> Vec<Call> {
    let mut c = Vec::new();
    let int_ops: &[Arith] = &[
        Arith::Add,
        Arith::Mul,
        Arith::Min,
        Arith::Max,
        Arith::And,
        Arith::Or,
        Arith::Xor,
    ];
    let float_ops: &[Arith] = &[Arith::Add, Arith::Mul, Arith::Min, Arith::Max];
    let ops = if t.float { float_ops } else { int_ops };
    let is_int = t.name == "int";
    match ext {
        // OpenCL C 3.0's sub-group functions (for char and short: extended types).
        "core" => {
            arithmetic(
                "sub_group_",
                &[Arith::Add, Arith::Min, Arith::Max],
                false,
                &mut c,
                all_lanes,
            );
            c.push(call("sub_group_broadcast(x, 0u)", false, |it| it.at(0)));
            c.push(call("sub_group_broadcast(x, sz - 1)", false, |it| {
                it.at(it.size() - 1)
            }));
            if is_int {
                c.push(call("sub_group_all(p)", false, |it| {
                    it.int(it.p.iter().all(|&b| b) as i64)
                }));
                c.push(call("sub_group_any(p)", false, |it| {
                    it.int(it.p.iter().any(|&b| b) as i64)
                }));
            }
        }
        "cl_khr_subgroup_non_uniform_vote" => {
            c.push(call("sub_group_non_uniform_all_equal(x)", true, |it| {
                let a = it.active_lanes();
                it.int(a.iter().all(|&k| it.x[k] == it.x[a[0]]) as i64)
            }));
            if is_int {
                c.push(call("sub_group_elect()", true, |it| {
                    it.int((it.active_lanes()[0] == it.lane) as i64)
                }));
                c.push(call("sub_group_non_uniform_all(p)", true, |it| {
                    it.int(it.active_lanes().iter().all(|&k| it.p[k]) as i64)
                }));
                c.push(call("sub_group_non_uniform_any(p)", true, |it| {
                    it.int(it.active_lanes().iter().any(|&k| it.p[k]) as i64)
                }));
            }
        }
        "cl_khr_subgroup_ballot" => {
            c.push(call(
                "sub_group_non_uniform_broadcast(x, sz - 1)",
                false,
                |it| it.at(it.size() - 1),
            ));
            c.push(call("sub_group_broadcast_first(x)", true, |it| {
                Some(it.x[it.active_lanes()[0]])
            }));
            if is_int {
                let word = |m: u128, k: u32| (m >> (32 * k)) as u32 as i64;
                for k in 0..4u32 {
                    let comp = ["x", "y", "z", "w"][k as usize];
                    c.push(call(
                        format!("sub_group_ballot(p).{comp}"),
                        false,
                        move |it| it.int(word(it.ballot(|_| true), k)),
                    ));
                    c.push(call(
                        format!("sub_group_ballot(p).{comp}"),
                        true,
                        move |it| {
                            let a = it.active.to_vec();
                            it.int(word(it.ballot(|l| a[l]), k))
                        },
                    ));
                }
                // A uniform ballot value: bit k set for k % 3 == 0.
                let v = "(uint4)(0x49249249u, 0x92492492u, 0x24924924u, 0x49249249u)";
                let bit = |k: usize| k % 3 == 0;
                c.push(call(
                    format!("sub_group_inverse_ballot({v})"),
                    false,
                    move |it| it.int(bit(it.lane) as i64),
                ));
                c.push(call(
                    format!("sub_group_ballot_bit_extract({v}, (lid * 5 + 2) % sz)"),
                    false,
                    move |it| it.int(bit((it.lane * 5 + 2) % it.size()) as i64),
                ));
                let b = "sub_group_ballot(p)";
                c.push(call(
                    format!("sub_group_ballot_bit_count({b})"),
                    false,
                    |it| it.int(it.ballot(|_| true).count_ones() as i64),
                ));
                c.push(call(
                    format!("sub_group_ballot_inclusive_scan({b})"),
                    false,
                    |it| it.int(it.ballot(|k| k <= it.lane).count_ones() as i64),
                ));
                c.push(call(
                    format!("sub_group_ballot_exclusive_scan({b})"),
                    false,
                    |it| it.int(it.ballot(|k| k < it.lane).count_ones() as i64),
                ));
                c.push(call(
                    format!("sub_group_ballot_find_lsb({b})"),
                    false,
                    |it| {
                        let m = it.ballot(|_| true);
                        (m != 0)
                            .then(|| it.int(m.trailing_zeros() as i64))
                            .flatten()
                    },
                ));
                c.push(call(
                    format!("sub_group_ballot_find_msb({b})"),
                    false,
                    |it| {
                        let m = it.ballot(|_| true);
                        (m != 0)
                            .then(|| it.int(127 - m.leading_zeros() as i64))
                            .flatten()
                    },
                ));
                type Mask = fn(usize, usize, usize) -> bool;
                let masks: [(&str, Mask); 5] = [
                    ("eq", |k, l, _| k == l),
                    ("ge", |k, l, max| k >= l && k < max),
                    ("gt", |k, l, max| k > l && k < max),
                    ("le", |k, l, _| k <= l),
                    ("lt", |k, l, _| k < l),
                ];
                for (name, f) in masks {
                    for k in 0..4u32 {
                        let comp = ["x", "y", "z", "w"][k as usize];
                        c.push(call(
                            format!("get_sub_group_{name}_mask().{comp}"),
                            false,
                            move |it| {
                                let m = (0..128)
                                    .filter(|&b| f(b, it.lane, it.max))
                                    .fold(0u128, |m, b| m | 1u128 << b);
                                it.int(word(m, k))
                            },
                        ));
                    }
                }
            }
        }
        "cl_khr_subgroup_non_uniform_arithmetic" => {
            arithmetic("sub_group_non_uniform_", ops, true, &mut c, |it| {
                it.active_lanes()
            });
            if is_int {
                logical("sub_group_non_uniform_", None, true, &mut c);
            }
        }
        "cl_khr_subgroup_shuffle" => {
            c.push(call(
                "sub_group_shuffle(x, (lid * 5 + 3) % sz)",
                false,
                |it| it.at((it.lane * 5 + 3) % it.size()),
            ));
            for m in [1usize, 3, 6] {
                c.push(call(
                    format!("sub_group_shuffle_xor(x, {m}u)"),
                    false,
                    move |it| it.at(it.lane ^ m),
                ));
            }
        }
        "cl_khr_subgroup_shuffle_relative" => {
            for d in [1usize, 3] {
                c.push(call(
                    format!("sub_group_shuffle_up(x, {d}u)"),
                    false,
                    move |it| it.lane.checked_sub(d).and_then(|k| it.at(k)),
                ));
                c.push(call(
                    format!("sub_group_shuffle_down(x, {d}u)"),
                    false,
                    move |it| it.at(it.lane + d),
                ));
            }
        }
        "cl_khr_subgroup_clustered_reduce" => {
            for cl in [2usize, 4] {
                for &o in ops {
                    c.push(call(
                        format!("sub_group_clustered_reduce_{}(x, {cl}u)", o.name()),
                        false,
                        move |it| {
                            let first = it.lane / cl * cl;
                            Some(
                                (first..(first + cl).min(it.size()))
                                    .fold(o.identity(it.t), |a, k| o.apply(it.t, a, it.x[k])),
                            )
                        },
                    ));
                }
                if is_int {
                    logical("sub_group_", Some(cl), false, &mut c);
                }
            }
        }
        "cl_khr_subgroup_rotate" => {
            for d in [1usize, 3] {
                c.push(call(
                    format!("sub_group_rotate(x, {d})"),
                    false,
                    move |it| it.at((it.lane + d) % it.max),
                ));
                c.push(call(
                    format!("sub_group_clustered_rotate(x, {d}, 4u)"),
                    false,
                    move |it| it.at(it.lane / 4 * 4 + (it.lane + d) % 4),
                ));
            }
        }
        _ => unreachable!("{ext}"),
    }
    c
}

/// The kernel of `calls` on type `t`: one `HT` output per call per work-item.
fn kernel_source(t: &Ty, calls: &[Call]) -> String {
    let ht = t.host();
    let mut s = String::new();
    if t.name == "half" {
        s.push_str("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
    }
    s.push_str(&format!(
        "kernel void k(global const {ht} *in, global const int *aux, global {ht} *out) {{\n\
         size_t i = get_global_id(0);\n\
         {t} x = ({t})in[i];\n\
         int a = aux[i];\n\
         int p = (a >> 1) & 1;\n\
         uint lid = get_sub_group_local_id();\n\
         uint sz = get_sub_group_size();\n\
         global {ht} *o = out + {n} * i;\n",
        t = t.name,
        n = calls.len()
    ));
    for (j, c) in calls.iter().enumerate() {
        let store = format!("o[{j}] = ({ht})({});", c.expr);
        if c.branch {
            s.push_str(&format!("if (a & 1) {{ {store} }}\n"));
        } else {
            s.push_str(&format!("{store}\n"));
        }
    }
    s.push_str("}\n");
    s
}

/// Runs `calls` on type `t` in each shape and compares every defined result with the host.
fn check_calls(env: &Env, ext: &str, t: &Ty, calls: &[Call]) {
    let src = kernel_source(t, calls);
    let p = env
        .try_build(&src, "-cl-std=CL3.0")
        .unwrap_or_else(|(e, log)| panic!("{ext} {}: build failed ({e}):\n{log}\n{src}", t.name));
    let k = env.kernel(p, "k");
    let s = sub_group_size(k, env.device);
    let nf = calls.len();
    // (global, local): a partial last sub-group (20 = 8 + 8 + 4 on lavapipe), whole
    // sub-groups, a work-group smaller than a sub-group, and a last work-group of 10.
    for (n, l) in [(60usize, 20usize), (128, 64), (15, 5), (90, 20)] {
        let mut rng = Rng(0x5eed ^ (n * 31 + l) as u64);
        // The first work-group holds one value (all_equal true there), the second an
        // all-true predicate; elsewhere random. Floats are small powers of two and their
        // negations, so every order of summation or multiplication is exact.
        let xs: Vec<V> = (0..n)
            .map(|i| {
                let r = rng.next_u32() as u64 | (rng.next_u32() as u64) << 32;
                if i < l {
                    if t.float {
                        V::F(1.0)
                    } else {
                        V::I(1)
                    }
                } else if t.float {
                    let m = if i % 7 == 0 { 2.0 } else { 1.0 };
                    V::F(if r & 1 == 1 { -m } else { m })
                } else {
                    V::I(t.norm(r))
                }
            })
            .collect();
        let aux: Vec<i32> = (0..n)
            .map(|i| {
                let r = rng.next_u32();
                // Lane 0 of every sub-group is active, so every branch has a first lane.
                let active = r & 1 == 1 || (i % l) % s == 0;
                let pred = (l..2 * l).contains(&i) || r & 2 == 2;
                active as i32 | (pred as i32) << 1
            })
            .collect();
        let input = if t.float {
            let v: Vec<f32> = xs
                .iter()
                .map(|v| if let V::F(f) = v { *f } else { 0.0 })
                .collect();
            env.buf(&v)
        } else {
            let v: Vec<u64> = xs
                .iter()
                .map(|v| if let V::I(x) = v { *x } else { 0 })
                .collect();
            env.buf(&v)
        };
        let auxb = env.buf(&aux);
        let width = if t.float { 4 } else { 8 };
        let out = env.buffer(CL_MEM_READ_WRITE, width * nf * n, None);
        arg_mem(k, 0, input);
        arg_mem(k, 1, auxb);
        arg_mem(k, 2, out);
        env.run(k, &[n], Some(&[l]), None);
        let got: Vec<V> = if t.float {
            env.read::<f32>(out, nf * n).into_iter().map(V::F).collect()
        } else {
            env.read::<u64>(out, nf * n).into_iter().map(V::I).collect()
        };
        let max = s.min(l);
        let mut checked = 0;
        for i in 0..n {
            let g0 = i / l * l;
            let wg = l.min(n - g0);
            let lid = i - g0;
            let first = g0 + lid / s * s;
            let size = s.min(wg - lid / s * s);
            let active: Vec<bool> = aux[first..first + size]
                .iter()
                .map(|a| a & 1 == 1)
                .collect();
            let pred: Vec<bool> = aux[first..first + size]
                .iter()
                .map(|a| a & 2 == 2)
                .collect();
            let it = Item {
                t,
                x: &xs[first..first + size],
                active: &active,
                p: &pred,
                lane: lid % s,
                max,
            };
            for (j, c) in calls.iter().enumerate() {
                if c.branch && !active[it.lane] {
                    continue;
                }
                let Some(want) = (c.model)(&it) else { continue };
                assert_eq!(
                    got[nf * i + j],
                    want,
                    "{ext} {} `{}`{}: work-item {i} (global {n}, local {l}, sub-group size \
                     {s}: lane {} of {size})",
                    t.name,
                    c.expr,
                    if c.branch { " in a branch" } else { "" },
                    it.lane
                );
                checked += 1;
            }
        }
        assert!(checked > 0);
        unsafe {
            for m in [input, auxb, out] {
                cl!(clReleaseMemObject)(m);
            }
        }
    }
    unsafe {
        cl!(clReleaseKernel)(k);
        cl!(clReleaseProgram)(p);
    }
}

/// Every call of `ext` on every type it covers, where the device claims it.
fn check_extension(ext: &str) {
    let env = Env::new();
    if !has_subgroups(&env) || (ext != "core" && !env.has_extension(ext)) {
        return;
    }
    let extended = env.has_extension("cl_khr_subgroup_extended_types");
    let fp16 = env.has_extension("cl_khr_fp16");
    for t in TYPES {
        if (t.extended() && !extended) || (t.name == "half" && !fp16) {
            continue;
        }
        let calls = calls_of(ext, t);
        if !calls.is_empty() {
            check_calls(&env, ext, t, &calls);
        }
    }
}

#[test]
fn sub_group_functions_core() {
    check_extension("core");
}

#[test]
fn non_uniform_vote() {
    check_extension("cl_khr_subgroup_non_uniform_vote");
}

#[test]
fn ballot() {
    check_extension("cl_khr_subgroup_ballot");
}

#[test]
fn non_uniform_arithmetic() {
    check_extension("cl_khr_subgroup_non_uniform_arithmetic");
}

#[test]
fn shuffle() {
    check_extension("cl_khr_subgroup_shuffle");
}

#[test]
fn shuffle_relative() {
    check_extension("cl_khr_subgroup_shuffle_relative");
}

#[test]
fn clustered_reduce() {
    check_extension("cl_khr_subgroup_clustered_reduce");
}

#[test]
fn rotate() {
    check_extension("cl_khr_subgroup_rotate");
}

#[test]
fn kernel_sub_group_info_answers_and_errors() {
    let env = Env::new();
    let k = env.kern_opts(
        "kernel void k(global int *o) { o[get_global_id(0)] = get_sub_group_size(); }",
        "-cl-std=CL3.0",
        "k",
    );
    let w = std::mem::size_of::<usize>();
    let d = env.device;
    if !has_subgroups(&env) {
        let (r, _) = sub_group_info(k, d, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[], 1);
        assert_eq!(r, CL_INVALID_OPERATION);
        return;
    }
    let s = sub_group_size(k, d);
    let max_wg: usize = info_scalar(|sz, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(k, d, CL_KERNEL_WORK_GROUP_SIZE, sz, v, r)
    });
    let device_max = device_uint(d, CL_DEVICE_MAX_NUM_SUB_GROUPS) as usize;
    // The sub-group size is the driver's (CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE too),
    // and what the kernel itself sees.
    let multiple: usize = info_scalar(|sz, v, r| unsafe {
        cl!(clGetKernelWorkGroupInfo)(k, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sz, v, r)
    });
    assert_eq!(s, multiple);
    let out = env.zeros::<i32>(256);
    arg_mem(k, 0, out);
    env.run(k, &[256], Some(&[256]), None);
    assert_eq!(
        env.read::<i32>(out, 1)[0] as usize,
        s,
        "get_sub_group_size() in a group of 256"
    );

    for local in [[20usize, 1, 1], [5, 1, 1], [4, 4, 2], [64, 1, 1], [1, 1, 1]] {
        let items: usize = local.iter().product();
        for dims in 1..=3 {
            let input = &local[..dims];
            let n: usize = input.iter().product();
            let (r, v) = sub_group_info(k, d, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, input, 1);
            ok(r);
            assert_eq!(v[0], n.min(s), "max sub-group size for {input:?}");
            let (r, v) = sub_group_info(k, d, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, input, 1);
            ok(r);
            assert_eq!(v[0], n.div_ceil(s), "sub-group count for {input:?}");
        }
        assert!(items.div_ceil(s) <= device_max);
    }
    // The local size for a sub-group count: `count` whole sub-groups in dimension 0; zeros
    // where no work-group has that many.
    for count in [1usize, 2, 3] {
        for dims in 1..=3 {
            let (r, v) = sub_group_info(
                k,
                d,
                CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                &[count],
                dims,
            );
            ok(r);
            let mut want = vec![1usize; dims];
            want[0] = count * s;
            assert_eq!(
                v, want,
                "local size for {count} sub-groups in {dims} dimensions"
            );
            let n: usize = v.iter().product();
            let (_, c) = sub_group_info(k, d, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, &v, 1);
            assert_eq!(c[0], count);
            assert!(n <= max_wg);
        }
    }
    let too_many = max_wg.div_ceil(s) + 1;
    let (r, v) = sub_group_info(
        k,
        d,
        CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
        &[too_many],
        3,
    );
    ok(r);
    assert_eq!(v, vec![0, 0, 0]);
    let (r, v) = sub_group_info(k, d, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[0], 1);
    ok(r);
    assert_eq!(v, vec![0]);
    let (r, v) = sub_group_info(k, d, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[], 1);
    ok(r);
    assert_eq!(v[0], max_wg.div_ceil(s));
    assert!(v[0] <= device_max);
    // No attribute or execution mode of an OpenCL C kernel sets a sub-group count.
    let (r, v) = sub_group_info(k, d, CL_KERNEL_COMPILE_NUM_SUB_GROUPS, &[], 1);
    ok(r);
    assert_eq!(v[0], 0);

    // Errors (OpenCL 3.0 section 5.9.3).
    let (r, _) = sub_group_info(k, d, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[], 1);
    assert_eq!(r, CL_INVALID_VALUE, "no local size");
    let (r, _) = sub_group_info(
        k,
        d,
        CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
        &[1, 2, 3, 4],
        1,
    );
    assert_eq!(r, CL_INVALID_VALUE, "four dimensions");
    let (r, _) = sub_group_info(k, d, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[1, 1], 1);
    assert_eq!(r, CL_INVALID_VALUE, "count of two size_t");
    let (r, _) = sub_group_info(k, d, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, &[1], 4);
    assert_eq!(r, CL_INVALID_VALUE, "four dimensions of output");
    let odd = [8u8; 3];
    let mut v = 0usize;
    let r = unsafe {
        cl!(clGetKernelSubGroupInfo)(
            k,
            d,
            CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
            3,
            odd.as_ptr() as *const c_void,
            w,
            &mut v as *mut usize as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "input of 3 bytes");
    let mut small = 0u32;
    let r = unsafe {
        cl!(clGetKernelSubGroupInfo)(
            k,
            d,
            CL_KERNEL_MAX_NUM_SUB_GROUPS,
            0,
            std::ptr::null(),
            4,
            &mut small as *mut u32 as *mut c_void,
            null_mut(),
        )
    };
    assert_eq!(r, CL_INVALID_VALUE, "output smaller than size_t");
    let (r, _) = sub_group_info(k, d, 0x4242, &[], 1);
    assert_eq!(r, CL_INVALID_VALUE, "unknown query");
    let mut ret = 0usize;
    ok(unsafe {
        cl!(clGetKernelSubGroupInfo)(
            k,
            d,
            CL_KERNEL_MAX_NUM_SUB_GROUPS,
            0,
            std::ptr::null(),
            0,
            null_mut(),
            &mut ret,
        )
    });
    assert_eq!(ret, w);
    let (r, _) = sub_group_info(null_mut(), d, CL_KERNEL_MAX_NUM_SUB_GROUPS, &[], 1);
    assert_eq!(r, CL_INVALID_KERNEL);
    // A live object of another kind.
    let (r, _) = sub_group_info(
        k,
        env.context as cl_device_id,
        CL_KERNEL_MAX_NUM_SUB_GROUPS,
        &[],
        1,
    );
    assert_eq!(r, CL_INVALID_DEVICE);
    unsafe {
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseKernel)(k);
    }
}

#[test]
fn vector_broadcasts() {
    // sub_group_broadcast and sub_group_non_uniform_broadcast of vectors (2 to 16
    // components; char16 with cl_khr_subgroup_extended_types), each component against the
    // value of the lane named.
    let env = Env::new();
    if !has_subgroups(&env) {
        return;
    }
    let ballot = env.has_extension("cl_khr_subgroup_ballot");
    let extended = env.has_extension("cl_khr_subgroup_extended_types");
    let src = format!(
        "kernel void k(global const int *in, global int *out) {{\n\
         size_t i = get_global_id(0);\n\
         int b = in[i];\n\
         uint sz = get_sub_group_size();\n\
         global int *o = out + 60 * i;\n\
         uint2 a = (uint2)(b, b + 1);\n\
         float4 f = (float4)(b, b * 2, b * 3, b * 4);\n\
         int8 v = (int8)(b) + (int8)(0, 1, 2, 3, 4, 5, 6, 7);\n\
         vstore2(convert_int2(sub_group_broadcast(a, 1u)), 0, o);\n\
         vstore4(convert_int4(sub_group_broadcast(f, 1u)), 0, o + 2);\n\
         vstore8(sub_group_broadcast(v, 1u), 0, o + 6);\n\
         {}\n\
         {}\n\
         }}\n",
        if extended {
            "char16 c = convert_char16((int16)(b) + (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, \
             11, 12, 13, 14, 15));\n\
             vstore16(convert_int16(sub_group_broadcast(c, 1u)), 0, o + 14);"
        } else {
            ""
        },
        if ballot {
            "vstore2(convert_int2(sub_group_non_uniform_broadcast(a, sz - 1)), 0, o + 30);\n\
             vstore4(convert_int4(sub_group_non_uniform_broadcast(f, sz - 1)), 0, o + 32);\n\
             vstore8(sub_group_non_uniform_broadcast(v, sz - 1), 0, o + 36);"
        } else {
            ""
        }
    );
    let k = env.kern_opts(&src, "-cl-std=CL3.0", "k");
    let s = sub_group_size(k, env.device);
    let (n, l) = (128usize, 64usize);
    let xs: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 50 - 20).collect();
    let input = env.buf(&xs);
    let out = env.zeros::<i32>(60 * n);
    arg_mem(k, 0, input);
    arg_mem(k, 1, out);
    env.run(k, &[n], Some(&[l]), None);
    let got: Vec<i32> = env.read(out, 60 * n);
    let comps = |b: i32| -> Vec<i32> {
        let mut v = vec![b, b + 1, b, b * 2, b * 3, b * 4];
        v.extend((0..8).map(|c| b + c));
        v
    };
    for i in 0..n {
        let first = i / s * s;
        let (one, last) = (xs[first + 1], xs[first + s - 1]);
        let o = &got[60 * i..60 * i + 60];
        assert_eq!(
            &o[..14],
            &comps(one)[..],
            "broadcast from lane 1, work-item {i}"
        );
        if extended {
            let want: Vec<i32> = (0..16).map(|c| (one + c) as i8 as i32).collect();
            assert_eq!(&o[14..30], &want[..], "char16 broadcast, work-item {i}");
        }
        if ballot {
            assert_eq!(
                &o[30..44],
                &comps(last)[..],
                "non-uniform broadcast, work-item {i}"
            );
        }
    }
    unsafe {
        cl!(clReleaseMemObject)(input);
        cl!(clReleaseMemObject)(out);
        cl!(clReleaseKernel)(k);
    }
}
