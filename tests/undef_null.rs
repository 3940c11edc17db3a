//! Undefined values defined as zeros (`VKCL_UNDEF_AS_NULL=1`, on by default on NVIDIA;
//! src/compiler/lower/undef.rs) keep every answer: seed 400148's loops from a negative start
//! that store a value carried out of the loop (the three shapes NVIDIA's driver got wrong),
//! with signed comparisons of `char`, `short`, `int`, `long` and `int4` beside them, against
//! the host; and the dumped module has no `OpUndef` left (the unit test in
//! src/compiler/lower/undef.rs shows the plain module has one).
mod common;
use common::*;

const SRC: &str = r#"
__kernel void k(__global int *out, __global const int *in) {
  uint g = (uint)get_global_id(0);
  int a = in[2 * g], b = in[2 * g + 1];
  __global int *o = out + g * 17u;
  char ca = (char)a, cb = (char)b;
  short sa = (short)a, sb = (short)b;
  long la = (long)a * 65537L, lb = (long)b * 65537L;
  o[0] = ca < cb; o[1] = ca <= cb; o[2] = ca > cb; o[3] = ca >= cb;
  o[4] = sa < sb; o[5] = sa <= sb; o[6] = sa > sb; o[7] = sa >= sb;
  o[8] = a < b; o[9] = a <= b; o[10] = a > b; o[11] = la < lb; o[12] = la >= lb;
  int4 va = (int4)(a, b, -a, -b), vb = (int4)(b, a, b, a);
  int4 lt = va < vb;
  o[13] = lt.x * 1 + lt.y * 2 + lt.z * 4 + lt.w * 8;
  // Seed 400148's loop: from -2 below a bound of 0..7, a store at a loaded index.
  uchar arr[8] = {0, 0, 0, 1, 0, 0, 29, 3};
  for (int i = -2; i < (convert_int_sat((long)b) & 7); i += 2) arr[(uint)a & 7u] = 3;
  o[14] = arr[(uint)a & 7u];
  int n = 0;
  for (int i = -(b & 7); i <= (a & 3); i++) n++;
  o[15] = n;
  uint arr2[8] = {0, 0, 0, 1, 0, 0, 29, 3};
  for (int i = -2; i < (convert_int_sat(0L) & 7); i += 2) arr2[(uint)a & 7u] = 3u;
  o[16] = (int)arr2[0];
}
"#;

#[test]
fn undefined_values_as_zeros_keep_the_answers() {
    let dir = std::env::temp_dir().join(format!("vkcl-signedcmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("VKCL_UNDEF_AS_NULL", "1");
    std::env::set_var("VKCL_DUMP_SPIRV", &dir);
    std::env::set_var("VKCL_CACHE", "0");
    let env = Env::new();
    let n = 256usize;
    let mut rng = Rng(0x4001_48);
    let mut input: Vec<i32> = (0..2 * n).map(|_| rng.next_u32() as i32).collect();
    // Small values and equal pairs too.
    for i in 0..n / 4 {
        input[2 * i] = (i as i32 % 19) - 9;
        input[2 * i + 1] = if i % 3 == 0 {
            input[2 * i]
        } else {
            (i as i32 % 7) - 3
        };
    }
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let inb = env.buffer(
        CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
        bytes.len(),
        Some(&bytes),
    );
    let outb = env.buffer(CL_MEM_WRITE_ONLY, n * 17 * 4, None);
    let p = env.build(SRC);
    let k = env.kernel(p, "k");
    set_arg(k, 0, &outb);
    set_arg(k, 1, &inb);
    env.run(k, &[n], None, None);
    let got: Vec<i32> = env.read(outb, n * 17);
    for g in 0..n {
        let (a, b) = (input[2 * g], input[2 * g + 1]);
        let (ca, cb) = (a as i8, b as i8);
        let (sa, sb) = (a as i16, b as i16);
        let (la, lb) = (i64::from(a) * 65537, i64::from(b) * 65537);
        let lanes = [(a, b), (b, a), (a.wrapping_neg(), b), (b.wrapping_neg(), a)];
        let lt: i32 = lanes
            .iter()
            .enumerate()
            .map(|(i, (x, y))| if x < y { -(1 << i) } else { 0 })
            .sum();
        let mut arr = [0u8, 0, 0, 1, 0, 0, 29, 3];
        let mut i = -2;
        while i < (b & 7) {
            arr[(a as u32 & 7) as usize] = 3;
            i += 2;
        }
        let mut count = 0;
        let mut j = -(b & 7);
        while j <= (a & 3) {
            count += 1;
            j += 1;
        }
        let want = [
            (ca < cb) as i32,
            (ca <= cb) as i32,
            (ca > cb) as i32,
            (ca >= cb) as i32,
            (sa < sb) as i32,
            (sa <= sb) as i32,
            (sa > sb) as i32,
            (sa >= sb) as i32,
            (a < b) as i32,
            (a <= b) as i32,
            (a > b) as i32,
            (la < lb) as i32,
            (la >= lb) as i32,
            lt,
            i32::from(arr[(a as u32 & 7) as usize]),
            count,
            if a as u32 & 7 == 0 { 3 } else { 0 },
        ];
        assert_eq!(
            &got[g * 17..g * 17 + 17],
            &want,
            "work-item {g}: a = {a}, b = {b}"
        );
    }
    // The pass ran: no OpUndef (opcode 1) is left, and OpConstantNull (46) is there.
    let module = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .next()
        .expect("VKCL_DUMP_SPIRV wrote no module");
    let words: Vec<u32> = module
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let opcodes = instructions(&words);
    assert!(
        !opcodes.contains(&1),
        "an OpUndef is left in the lowered module"
    );
    assert!(
        opcodes.contains(&46),
        "no OpConstantNull in the lowered module"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The opcodes of a SPIR-V module's instructions, in order (after the 5-word header).
fn instructions(words: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16).max(1) as usize;
        out.push(words[i] & 0xffff);
        i += n;
    }
    out
}
