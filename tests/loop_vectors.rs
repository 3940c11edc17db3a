//! Vectors carried through loops and joins (see also `vector_phis.rs`), which vkcl's lowering now splits into one phi per
//! component (`compiler::lower::scalarphi`, issue 15): loops whose work-items leave at
//! different passes (through the loop test and through a `break`), vectors that trade places
//! each pass (a phi fed by another phi), joins of constant vectors, and 8-, 16-, 32- and
//! 64-bit components. Every result is compared with the host's.
mod common;
use common::*;

const SRC: &str = r#"
// Each work-item runs in[g] passes; a and b trade places every pass.
kernel void swap(global uint4 *out, global const int *in) {
    uint g = get_global_id(0);
    int n = in[g];
    uint4 a = (uint4)(g, 1, 2, 3);
    uint4 b = (uint4)(0);
    for (int i = 0; i < n; i++) {
        uint4 t = a * 3u + b;
        b = a;
        a = t ^ (uint4)(i, i + 1, i + 2, i + 3);
    }
    out[2 * g] = a;
    out[2 * g + 1] = b;
}
// Left through a break at pass in[g] (or after 100 passes); 0.5 * v is exact, so a fused
// multiply-add rounds as the separate operations do.
kernel void early_exit(global float4 *out, global const int *in) {
    int g = get_global_id(0);
    int n = in[g];
    float4 v = (float4)(g, 0.5f, -1.0f, 2.0f);
    for (int i = 0; i < 100; i++) {
        if (i == n) break;
        v = v * 0.5f + (float4)(1.0f, 2.0f, 3.0f, (float)i);
    }
    out[g] = v;
}
// A vector chosen on three paths, two of them constants.
kernel void join(global uint4 *out, global const int *in) {
    int x = in[get_global_id(0)];
    uint4 v;
    if (x & 1) v = (uint4)(1, 2, 3, 4);
    else if (x & 2) v = (uint4)(0);
    else v = (uint4)(x, x + 1, x * 2, 7);
    for (int i = 0; i < (x & 3); i++) v = v.yzwx + (uint4)(i);
    out[get_global_id(0)] = v;
}
// Narrow and wide components.
kernel void widths(global uchar4 *c, global short2 *s, global long2 *l, global const int *in) {
    int g = get_global_id(0);
    int n = in[g];
    uchar4 cv = (uchar4)(250, 1, 2, 3);
    short2 sv = (short2)(-7, 30000);
    long2 lv = (long2)(1L << 40, -5L);
    for (int i = 0; i < n; i++) {
        cv += (uchar4)(1, 2, 3, 4);
        sv = sv * (short2)(3, -1) + (short2)(1, 1);
        lv = lv * 3L + (long2)(i, g);
    }
    c[g] = cv;
    s[g] = sv;
    l[g] = lv;
}
"#;

/// Trip counts: 0, 1, short and long, odd and even, next to each other in the same group.
fn trips(items: usize) -> Vec<i32> {
    (0..items).map(|g| ((g * 7 + g / 5) % 23) as i32).collect()
}

fn swap_host(g: u32, n: i32) -> ([u32; 4], [u32; 4]) {
    let (mut a, mut b) = ([g, 1, 2, 3], [0u32; 4]);
    for i in 0..n as u32 {
        let t: [u32; 4] = std::array::from_fn(|k| a[k].wrapping_mul(3).wrapping_add(b[k]));
        b = a;
        a = std::array::from_fn(|k| t[k] ^ (i + k as u32));
    }
    (a, b)
}

#[test]
fn vectors_through_divergent_loops() {
    let env = Env::new();
    let p = env.build(SRC);
    let items = 200;
    let n = trips(items);
    let input = env.buf(&n);

    let out = env.zeros::<u32>(items * 8);
    let k = env.kernel(p, "swap");
    arg_mem(k, 0, out);
    arg_mem(k, 1, input);
    env.run(k, &[items], Some(&[40]), None);
    let got: Vec<u32> = env.read(out, items * 8);
    for g in 0..items {
        let (a, b) = swap_host(g as u32, n[g]);
        assert_eq!(
            &got[g * 8..g * 8 + 4],
            &a,
            "swap: a of item {g} ({} passes)",
            n[g]
        );
        assert_eq!(
            &got[g * 8 + 4..g * 8 + 8],
            &b,
            "swap: b of item {g} ({} passes)",
            n[g]
        );
    }

    let out = env.zeros::<f32>(items * 4);
    let k = env.kernel(p, "early_exit");
    arg_mem(k, 0, out);
    arg_mem(k, 1, input);
    env.run(k, &[items], Some(&[40]), None);
    let got: Vec<f32> = env.read(out, items * 4);
    for g in 0..items {
        let mut v = [g as f32, 0.5, -1.0, 2.0];
        for i in 0..n[g].min(100) {
            let add = [1.0, 2.0, 3.0, i as f32];
            v = std::array::from_fn(|k| v[k] * 0.5 + add[k]);
        }
        assert_eq!(
            &got[g * 4..g * 4 + 4],
            &v,
            "early_exit: item {g} ({} passes)",
            n[g]
        );
    }
}

#[test]
fn vectors_through_joins_and_narrow_and_wide_components() {
    let env = Env::new();
    let p = env.build(SRC);
    let items = 96;
    let xs: Vec<i32> = (0..items as i32).map(|g| g * 5 - 40).collect();
    let input = env.buf(&xs);
    let out = env.zeros::<u32>(items * 4);
    let k = env.kernel(p, "join");
    arg_mem(k, 0, out);
    arg_mem(k, 1, input);
    env.run(k, &[items], Some(&[32]), None);
    let got: Vec<u32> = env.read(out, items * 4);
    for (g, &x) in xs.iter().enumerate() {
        let mut v: [u32; 4] = if x & 1 != 0 {
            [1, 2, 3, 4]
        } else if x & 2 != 0 {
            [0; 4]
        } else {
            [x as u32, (x + 1) as u32, (x * 2) as u32, 7]
        };
        for i in 0..(x & 3) as u32 {
            v = [v[1] + i, v[2] + i, v[3] + i, v[0] + i];
        }
        assert_eq!(&got[g * 4..g * 4 + 4], &v, "join: x = {x}");
    }

    let n = trips(items);
    let input = env.buf(&n);
    let (c, s, l) = (
        env.zeros::<u8>(items * 4),
        env.zeros::<i16>(items * 2),
        env.zeros::<i64>(items * 2),
    );
    let k = env.kernel(p, "widths");
    arg_mem(k, 0, c);
    arg_mem(k, 1, s);
    arg_mem(k, 2, l);
    arg_mem(k, 3, input);
    env.run(k, &[items], Some(&[32]), None);
    let (gc, gs, gl): (Vec<u8>, Vec<i16>, Vec<i64>) = (
        env.read(c, items * 4),
        env.read(s, items * 2),
        env.read(l, items * 2),
    );
    for g in 0..items {
        let (mut cv, mut sv, mut lv) = ([250u8, 1, 2, 3], [-7i16, 30000], [1i64 << 40, -5]);
        for i in 0..n[g] {
            cv = std::array::from_fn(|k| cv[k].wrapping_add(k as u8 + 1));
            sv = [
                sv[0].wrapping_mul(3).wrapping_add(1),
                sv[1].wrapping_mul(-1).wrapping_add(1),
            ];
            lv = [
                lv[0].wrapping_mul(3).wrapping_add(i64::from(i)),
                lv[1].wrapping_mul(3).wrapping_add(g as i64),
            ];
        }
        let what = format!("item {g} ({} passes)", n[g]);
        assert_eq!(&gc[g * 4..g * 4 + 4], &cv, "uchar4 of {what}");
        assert_eq!(&gs[g * 2..g * 2 + 2], &sv, "short2 of {what}");
        assert_eq!(&gl[g * 2..g * 2 + 2], &lv, "long2 of {what}");
    }
}
