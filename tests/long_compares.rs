//! Signed comparisons of a sign-extended `int` (libclc's `convert_long`) with a `long`
//! constant, which lavapipe 22.3.6 computed wrongly (`convert_long(0) < 1L` false; found by
//! vkcl-difftest, docs/difftest.md) until vkcl narrowed them to 32 bits
//! (`compiler::lower::upcastcmp`). Every result is compared with the host's.
mod common;
use common::*;

/// (kernel name, OpenCL C condition on `int x`, the host's answer for x).
type Case = (&'static str, &'static str, fn(i64) -> bool);

const CASES: [Case; 12] = [
    ("lt1", "convert_long(x) < 1L", |x| x < 1),
    ("le0", "convert_long(x) <= 0L", |x| x <= 0),
    ("gt11", "convert_long(x) > 11L", |x| x > 11),
    ("ge0", "convert_long(x) >= 0L", |x| x >= 0),
    ("ltm2", "convert_long(x) < -2L", |x| x < -2),
    ("sat_le0", "convert_long_sat(x) <= 0L", |x| x <= 0),
    ("left", "5L < convert_long(x)", |x| 5 < x),
    ("big", "convert_long(x) < 4294967296L", |x| x < 4294967296),
    ("neg_big", "convert_long(x) > -4294967296L", |x| {
        x > -4294967296
    }),
    ("max", "convert_long(x) >= 2147483647L", |x| x >= 2147483647),
    ("min", "convert_long(x) <= -2147483648L", |x| {
        x <= -2147483648
    }),
    ("past_max", "convert_long(x) > 2147483647L", |x| {
        x > 2147483647
    }),
];

#[test]
fn sign_extended_compares_with_long_constants() {
    let env = Env::new();
    let src: String = CASES
        .iter()
        .map(|(name, cond, _)| {
            format!(
                "kernel void {name}(global uint *out, global const int *in) {{\n\
                 int x = in[get_global_id(0)];\n\
                 out[get_global_id(0)] = ({cond}) ? 1u : 0u;\n}}\n"
            )
        })
        .collect();
    let xs: Vec<i32> = vec![
        0,
        1,
        -1,
        2,
        -2,
        -3,
        5,
        6,
        11,
        12,
        -936415223,
        i32::MAX,
        i32::MIN,
        i32::MAX - 1,
        i32::MIN + 1,
        100,
    ];
    let p = env.build(&src);
    let input = env.buf(&xs);
    for (name, cond, host) in CASES {
        let out = env.zeros::<u32>(xs.len());
        let k = env.kernel(p, name);
        arg_mem(k, 0, out);
        arg_mem(k, 1, input);
        env.run(k, &[xs.len()], None, None);
        let got: Vec<u32> = env.read(out, xs.len());
        let want: Vec<u32> = xs.iter().map(|&x| host(i64::from(x)) as u32).collect();
        assert_eq!(got, want, "{cond} for x in {xs:?}");
    }
}
