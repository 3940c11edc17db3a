//! Vectors carried round a loop by a non-commutative operation with the vector second
//! (`v = C - v`, `C << v`, `C / v`, `C % v`, `C - v` and `C / v` in float), of which one lane
//! is read, against host answers. LLVM 15's InstCombine (`scalarizePHI`) rebuilt such an
//! operation on the lane with its operands swapped (`v.y - 7` for `7 - v.y`), a silent wrong
//! answer of vkcl and pocl (difftest seed 400706); `src/compiler/phiguard.rs` keeps opt from
//! doing so.
mod common;
use common::*;

/// Work-items.
const G: usize = 32;

/// One case: a vector of `ty` carried round a loop of `n` (0 to 3) passes, one lane read.
#[derive(Clone, Copy)]
struct Case {
    /// OpenCL C element type: `uint`, `int`, `ulong`, `ushort`, `uchar`, `float`.
    elem: &'static str,
    width: usize,
    /// `-`, `<<`, `>>`, `/`, `%`, or `*-1` (`v * -1`, which InstCombine makes `0 - v`).
    op: &'static str,
    /// The loop's shape: 0 `for` with the lane read after it, 1 the lane read in the body
    /// (folded into `acc`), 2 the vector in a private array updated by an inner loop of two
    /// passes, 3 the vector in global memory (`restrict`).
    shape: u8,
}

const CASES: &[Case] = &[
    c("uint", 2, "-", 0),
    c("uint", 3, "-", 0),
    c("uint", 4, "-", 0),
    c("uint", 8, "-", 0),
    c("uint", 16, "-", 0),
    c("uint", 2, "-", 1),
    c("uint", 4, "-", 2),
    c("uint", 2, "-", 3),
    c("uint", 2, "*-1", 0),
    c("uint", 4, "<<", 0),
    c("uint", 2, ">>", 0),
    c("int", 4, ">>", 0),
    c("uint", 2, "/", 0),
    c("int", 4, "/", 0),
    c("int", 2, "/", 1),
    c("uint", 4, "%", 0),
    c("int", 2, "%", 0),
    c("ulong", 2, "-", 0),
    c("ulong", 2, ">>", 1),
    c("ushort", 4, "-", 0),
    c("uchar", 8, "-", 0),
    c("float", 2, "-", 0),
    c("float", 4, "-", 1),
    c("float", 2, "/", 0),
    c("float", 8, "/", 0),
];

const fn c(elem: &'static str, width: usize, op: &'static str, shape: u8) -> Case {
    Case {
        elem,
        width,
        op,
        shape,
    }
}

/// The lane read: the last one.
fn lane(width: usize) -> usize {
    width - 1
}

/// Bits of the element type.
fn bits(elem: &str) -> u32 {
    match elem {
        "ulong" => 64,
        "ushort" => 16,
        "uchar" => 8,
        _ => 32,
    }
}

/// Lane `l` of the constant operand, as the element's bits (`u64`).
fn constant(case: &Case, l: usize) -> u64 {
    let l = l as u64;
    match (case.elem, case.op) {
        ("float", _) => (1000.5f32 + 37.0 * l as f32).to_bits() as u64,
        ("int", "/") | ("int", "%") => (-(1_000_003i64 + 7919 * l as i64)) as i32 as u32 as u64,
        ("int", ">>") => (i32::MIN as i64 + 12_345 * l as i64) as i32 as u32 as u64,
        ("uint", "/") | ("uint", "%") => 4_000_000_007 - 104_729 * l,
        (_, "<<") => 0x8001 + 3 * l,
        ("ulong", _) => 0x8000_0000_0000_1234 + 0x1_0000_0001 * l,
        _ => (100 + 7 * l) & mask(case.elem),
    }
}

fn mask(elem: &str) -> u64 {
    if bits(elem) == 64 {
        u64::MAX
    } else {
        (1u64 << bits(elem)) - 1
    }
}

/// One pass of the operation on one lane (`v` and `k` as the element's bits); `None` for an
/// undefined one (a zero divisor).
fn step(case: &Case, k: u64, v: u64) -> Option<u64> {
    let m = mask(case.elem);
    let w = bits(case.elem);
    if case.elem == "float" {
        let (k, v) = (f32::from_bits(k as u32), f32::from_bits(v as u32));
        let r = match case.op {
            "-" => k - v,
            "/" => k / v,
            _ => unreachable!(),
        };
        return Some(r.to_bits() as u64);
    }
    let signed = case.elem == "int";
    let sv = ((v << (64 - w)) as i64) >> (64 - w);
    let sk = ((k << (64 - w)) as i64) >> (64 - w);
    let r = match case.op {
        "-" => k.wrapping_sub(v),
        "*-1" => v.wrapping_neg(),
        "<<" => k << (v % w as u64),
        ">>" if signed => (sk >> (v % w as u64)) as u64,
        ">>" => k >> (v % w as u64),
        "/" if signed => sk.checked_div(if sv == 0 { return None } else { sv })? as u64,
        "/" => k.checked_div(v)?,
        "%" if signed => sk.checked_rem(if sv == 0 { return None } else { sv })? as u64,
        "%" => k.checked_rem(v)?,
        _ => unreachable!(),
    };
    Some(r & m)
}

/// The OpenCL C vector type of a case.
fn vty(case: &Case) -> String {
    format!("{}{}", case.elem, case.width)
}

/// The OpenCL C literal of lane bits `b`.
fn literal(case: &Case, b: u64) -> String {
    match case.elem {
        "float" => format!("as_float({}u)", b as u32),
        "ulong" => format!("{b}ul"),
        "int" => format!("(int){}u", b as u32),
        e => format!("({e}){b}u"),
    }
}

/// The kernel source: one block per case, writing `out[gid * CASES + i]`.
fn source() -> String {
    let mut s = String::from(
        "__kernel void k(__global uint *restrict out, __global const ulong *restrict in,\n\
         __global ulong *restrict mem) {\n\
         uint gid = (uint)get_global_id(0);\n\
         int n = (int)(gid % 4u);\n",
    );
    for (i, case) in CASES.iter().enumerate() {
        let t = vty(case);
        let lanes: Vec<String> = (0..case.width)
            .map(|l| literal(case, constant(case, l)))
            .collect();
        let k = format!("(({t})({}))", lanes.join(", "));
        let init: Vec<String> = (0..case.width)
            .map(|l| {
                format!(
                    "({})in[(gid * {} + {i}u) * 16u + {l}u]",
                    if case.elem == "float" {
                        "uint"
                    } else {
                        case.elem
                    },
                    CASES.len()
                )
            })
            .collect();
        let init = if case.elem == "float" {
            format!("as_{t}((uint{})({}))", case.width, init.join(", "))
        } else {
            format!("(({t})({}))", init.join(", "))
        };
        let next = |v: &str| match case.op {
            "*-1" => format!("{v} * (({t})({}))", literal(case, mask(case.elem))),
            op => format!("{k} {op} {v}"),
        };
        let l = lane(case.width);
        let read = |v: &str| match case.elem {
            "float" => format!("as_uint({v}.s{l:x})"),
            "ulong" => format!("(uint)({v}.s{l:x} ^ ({v}.s{l:x} >> 32))"),
            _ => format!("(uint){v}.s{l:x}"),
        };
        let o = format!("out[gid * {}u + {i}u]", CASES.len());
        let body = match case.shape {
            0 => format!(
                "{t} v = {init};\nfor (int j = 0; j < n; j++) v = {};\n{o} = {};\n",
                next("v"),
                read("v")
            ),
            1 => format!(
                "{t} v = {init}; uint acc = 0u;\nfor (int j = 0; j < n; j++) {{ acc = acc * 3u + {}; v = {}; }}\n{o} = acc * 3u + {};\n",
                read("v"),
                next("v"),
                read("v")
            ),
            2 => format!(
                "{t} a[2] = {{{init}, {init}}};\nfor (int j = 0; j < n; j++) for (int q = 0; q < 2; q++) a[q] = {};\n{o} = {};\n",
                next("a[q]"),
                read("a[1]")
            ),
            _ => format!(
                "__global {t} *p = (__global {t} *)(mem + (gid * {}u + {i}u) * 16u);\n*p = {init};\nfor (int j = 0; j < n; j++) *p = {};\n{o} = {};\n",
                CASES.len(),
                next("(*p)"),
                read("(*p)")
            ),
        };
        s.push_str(&format!("{{\n{body}}}\n"));
    }
    s.push_str("}\n");
    s
}

/// The answer of `case` for work-item `gid` whose initial lane holds bits `v0`.
fn expected(case: &Case, gid: usize, v0: u64) -> Option<u32> {
    let k = constant(case, lane(case.width));
    let n = gid % 4;
    let fold = |v: u64| {
        if case.elem == "float" {
            v as u32
        } else {
            (v ^ (v >> 32)) as u32
        }
    };
    let mut v = v0 & mask(case.elem);
    let mut acc = 0u32;
    let passes = if case.shape == 2 { 2 * n } else { n };
    for j in 0..passes {
        if case.shape == 1 {
            acc = acc.wrapping_mul(3).wrapping_add(fold(v));
        }
        // Shape 2 updates a[0] and a[1] in turn: a[1] steps once per outer pass.
        if case.shape == 2 && j % 2 == 0 {
            continue;
        }
        v = step(case, k, v)?;
    }
    Some(if case.shape == 1 {
        acc.wrapping_mul(3).wrapping_add(fold(v))
    } else {
        fold(v)
    })
}

/// Inputs: 16 lanes per case and work-item, each chosen so that no pass divides by zero.
fn inputs() -> Vec<u64> {
    let mut rng = Rng(0x5eed_4007);
    let mut data = vec![0u64; G * CASES.len() * 16];
    for gid in 0..G {
        for (i, case) in CASES.iter().enumerate() {
            for l in 0..16 {
                let at = (gid * CASES.len() + i) * 16 + l;
                data[at] = loop {
                    let r = ((rng.next_u32() as u64) << 32) | rng.next_u32() as u64;
                    let v = match (case.elem, case.op) {
                        ("float", _) => (0.5f32 + (r % 100_000) as f32 / 64.0).to_bits() as u64,
                        ("int", "/") | ("int", "%") => {
                            let x = (r % 2000) as i64 - 1000;
                            x as i32 as u32 as u64
                        }
                        (_, "/") | (_, "%") => 1 + r % 5000,
                        _ => r,
                    };
                    let ok = l >= case.width
                        || (0..4).all(|g| {
                            let k = constant(case, l);
                            let mut x = v & mask(case.elem);
                            (0..g).all(|_| match step(case, k, x) {
                                Some(y) => {
                                    x = y;
                                    true
                                }
                                None => false,
                            })
                        });
                    if ok {
                        break v;
                    }
                };
            }
        }
    }
    data
}

#[test]
fn loop_carried_vectors_with_the_vector_second() {
    let src = source();
    let data = inputs();
    let e = Env::new();
    let k = e.kern(&src, "k");
    let out = e.zeros::<u32>(G * CASES.len());
    let input = e.buf(&data);
    let mem = e.zeros::<u64>(data.len());
    arg_mem(k, 0, out);
    arg_mem(k, 1, input);
    arg_mem(k, 2, mem);
    e.run(k, &[G], Some(&[8]), None);
    let got = e.read::<u32>(out, G * CASES.len());
    let mut wrong = Vec::new();
    for gid in 0..G {
        for (i, case) in CASES.iter().enumerate() {
            let v0 = data[(gid * CASES.len() + i) * 16 + lane(case.width)];
            let want = expected(case, gid, v0).expect("inputs avoid zero divisors");
            let have = got[gid * CASES.len() + i];
            let close = case.elem == "float"
                && case.op == "/"
                && ((f32::from_bits(have) - f32::from_bits(want)).abs()
                    <= 1e-5 * f32::from_bits(want).abs());
            if have != want && !close {
                wrong.push(format!(
                    "{}{} `{}` shape {} gid {gid}: {have:#x}, expected {want:#x}",
                    case.elem, case.width, case.op, case.shape
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} wrong:\n{}",
        wrong.len(),
        G * CASES.len(),
        wrong.join("\n")
    );
}

/// Difftest seed 400706 reduced: a helper negates a `uint2` in a loop of one pass.
#[test]
fn seed_400706_vector_negated_in_a_helper_loop() {
    let src = r#"
uint t0_f0(uint2 p1) {
  for (int i2 = 1; i2 <= 1; i2++) {
    p1 = ((((uint2)(0u)) - p1)).s01;
  }
  return p1.s1;
}
__kernel void t0_k(__global uint *out, __global const uint *in) {
  uint gid = ((uint)get_global_id(0));
  uint v22 = 0u;
  v22 -= t0_f0(((uint2)(4294967295u, 4294967294u)));
  out[0u + gid] = v22;
}
"#;
    let e = Env::new();
    let k = e.kern(src, "t0_k");
    let out = e.zeros::<u32>(4);
    let input = e.zeros::<u32>(4);
    arg_mem(k, 0, out);
    arg_mem(k, 1, input);
    e.run(k, &[4], None, None);
    // p1.s1 = 0 - 0xfffffffe = 2; v22 = 0 - 2.
    assert_eq!(e.read::<u32>(out, 4), vec![4294967294u32; 4]);
}

/// The same loop in SPIR-V input (`clCreateProgramWithIL`), where the vector is already a phi:
/// `v = (100, 7) - v` for `n` passes from `v = (n, n + 1)`, lane 1 read.
#[test]
fn il_vector_phi_with_the_vector_second() {
    let il = common::spirv::assemble_whole(
        "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\n\
         OpMemoryModel Physical64 OpenCL\n\
         OpEntryPoint Kernel %k \"k\"\n\
         %uint = OpTypeInt 32 0\n%v2uint = OpTypeVector %uint 2\n%void = OpTypeVoid\n\
         %bool = OpTypeBool\n%ptr = OpTypePointer CrossWorkgroup %uint\n\
         %fnty = OpTypeFunction %void %ptr %uint\n\
         %c0 = OpConstant %uint 0\n%c1 = OpConstant %uint 1\n%c7 = OpConstant %uint 7\n\
         %c100 = OpConstant %uint 100\n%cv = OpConstantComposite %v2uint %c100 %c7\n\
         %k = OpFunction %void None %fnty\n%out = OpFunctionParameter %ptr\n\
         %n = OpFunctionParameter %uint\n\
         %entry = OpLabel\n%n1 = OpIAdd %uint %n %c1\n\
         %v0 = OpCompositeConstruct %v2uint %n %n1\nOpBranch %head\n\
         %head = OpLabel\n%v = OpPhi %v2uint %v0 %entry %vn %body\n\
         %i = OpPhi %uint %c0 %entry %in %body\n%cond = OpULessThan %bool %i %n\n\
         OpLoopMerge %exit %body None\nOpBranchConditional %cond %body %exit\n\
         %body = OpLabel\n%vn = OpISub %v2uint %cv %v\n%in = OpIAdd %uint %i %c1\n\
         OpBranch %head\n\
         %exit = OpLabel\n%y = OpCompositeExtract %uint %v 1\n\
         OpStore %out %y Aligned 4\nOpReturn\nOpFunctionEnd\n",
    );
    let e = Env::new();
    let p = common::spirv::create_il(&e, &il);
    common::spirv::build(&e, p);
    let k = e.kernel(p, "k");
    for n in [1u32, 2, 3, 6] {
        let out = e.zeros::<u32>(1);
        arg_mem(k, 0, out);
        set_arg(k, 1, &n);
        e.run(k, &[1], None, None);
        // Lane 1 alternates between n + 1 and 7 - (n + 1).
        let want = if n % 2 == 0 {
            n + 1
        } else {
            7u32.wrapping_sub(n + 1)
        };
        assert_eq!(e.read::<u32>(out, 1), vec![want], "n = {n}");
    }
}
