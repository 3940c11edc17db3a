//! The device side: one platform, a list of seeds, in batches of several kernels per program.
//! Prints one JSON line per event on stdout ([`Event`]), flushed, so that the parent knows
//! which batch was running when a crash or a hang ended the process.

use crate::cl;
use cts_runner::difftest::{ast::Unit, gen, print};
use serde::{Deserialize, Serialize};
use std::io::Write;

/// One line of the child's output.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The platform and device found.
    Platform {
        /// `CL_PLATFORM_NAME`, version and device name.
        name: String,
    },
    /// A batch of seeds is starting (its program build and its kernels).
    Started {
        /// The seeds.
        seeds: Vec<u64>,
    },
    /// A seed's outcome.
    Result {
        /// The seed.
        seed: u64,
        /// `ok`, `build_error` or `run_error`.
        status: String,
        /// The stored values (`ok`).
        values: Vec<u32>,
        /// The error (build log, failed call).
        detail: String,
    },
    /// The child could not start (no such platform, no loader).
    Fatal {
        /// Why.
        detail: String,
    },
}

fn emit(e: &Event) {
    if let Ok(s) = serde_json::to_string(e) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{s}");
        let _ = out.flush();
    }
}

fn matches(query: &str, name: &str) -> bool {
    let (q, n) = (query.to_ascii_lowercase(), name.to_ascii_lowercase());
    n.contains(&q) || (q == "pocl" && n.contains("portable computing language"))
}

/// Runs `seeds` on the platform matching `query`, `batch` units per program.
pub fn run(query: &str, seeds: &[u64], batch: usize) {
    let api = match cl::Api::load() {
        Ok(a) => a,
        Err(e) => return emit(&Event::Fatal { detail: e }),
    };
    let platforms = match api.platforms() {
        Ok(p) => p,
        Err(e) => {
            return emit(&Event::Fatal {
                detail: e.to_string(),
            })
        }
    };
    let Some(p) = platforms
        .into_iter()
        .find(|p| api.platform_name(*p).is_ok_and(|n| matches(query, &n)))
    else {
        return emit(&Event::Fatal {
            detail: format!("no platform with a device matches '{query}'"),
        });
    };
    emit(&Event::Platform {
        name: format!(
            "{} | {} | {}",
            api.platform_name(p).unwrap_or_default(),
            api.platform_version(p).unwrap_or_default(),
            api.device_name(p).unwrap_or_default()
        ),
    });
    let session = match api.session(p) {
        Ok(s) => s,
        Err(e) => {
            return emit(&Event::Fatal {
                detail: e.to_string(),
            })
        }
    };
    for chunk in seeds.chunks(batch.max(1)) {
        emit(&Event::Started {
            seeds: chunk.to_vec(),
        });
        let units: Vec<Unit> = chunk.iter().map(|&s| gen::generate(s)).collect();
        let refs: Vec<&Unit> = units.iter().collect();
        match run_batch(&session, &refs) {
            Ok(values) => {
                for (u, v) in units.iter().zip(values) {
                    emit(&Event::Result {
                        seed: u.seed,
                        status: "ok".into(),
                        values: v,
                        detail: String::new(),
                    });
                }
            }
            // One at a time, to tell which unit the error belongs to.
            Err(_) if units.len() > 1 => {
                for u in &units {
                    one(&session, u);
                }
            }
            Err((status, detail)) => emit(&Event::Result {
                seed: units[0].seed,
                status,
                values: Vec::new(),
                detail,
            }),
        }
    }
}

fn one(session: &cl::Session<'_>, u: &Unit) {
    let e = match run_batch(session, &[u]) {
        Ok(mut v) => Event::Result {
            seed: u.seed,
            status: "ok".into(),
            values: v.pop().unwrap_or_default(),
            detail: String::new(),
        },
        Err((status, detail)) => Event::Result {
            seed: u.seed,
            status,
            values: Vec::new(),
            detail,
        },
    };
    emit(&e);
}

/// Builds one program of `units` and runs each kernel; the values per unit.
fn run_batch(s: &cl::Session<'_>, units: &[&Unit]) -> Result<Vec<Vec<u32>>, (String, String)> {
    run_source(s, units, &print::program(units))
}

/// [`run_batch`] with the program's source given (kernels `t<i>_k`, as printed).
fn run_source(
    s: &cl::Session<'_>,
    units: &[&Unit],
    src: &str,
) -> Result<Vec<Vec<u32>>, (String, String)> {
    let prog = s
        .program(src)
        .map_err(|e| ("build_error".to_string(), e.to_string()))?;
    let run_err = |e: cl::ClError| ("run_error".to_string(), e.to_string());
    let total: usize = units.iter().map(|u| u.global).sum();
    let out = s.buffer(total * 4).map_err(run_err)?;
    s.write(&out, &vec![0u32; total]).map_err(run_err)?;
    let mut inputs = Vec::new();
    let mut kernels = Vec::new();
    for (i, u) in units.iter().enumerate() {
        let inb = s.buffer(u.input.len() * 4).map_err(run_err)?;
        s.write(&inb, &u.input).map_err(run_err)?;
        let k = s
            .kernel(
                &prog,
                &print::kernel_name(&format!("t{i}_")),
                &[cl::Arg::Buf(&out), cl::Arg::Buf(&inb)],
            )
            .map_err(run_err)?;
        let local = u.local.map(|l| [l]);
        s.launch(&k, &[u.global], local.as_ref().map(|l| &l[..]))
            .map_err(run_err)?;
        inputs.push(inb);
        kernels.push(k);
    }
    s.finish().map_err(run_err)?;
    let mut all = vec![0u32; total];
    s.read(&out, &mut all).map_err(run_err)?;
    let mut res = Vec::new();
    let mut base = 0;
    for u in units {
        res.push(all[base..base + u.global].to_vec());
        base += u.global;
    }
    Ok(res)
}

/// The key of a build failure: its first error line, after the last `error:` (and a
/// validator's ` - `), so that a reduction keeps to the same failure.
fn error_key(detail: &str) -> String {
    let line = detail
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or(detail);
    let tail = line.rsplit("error:").next().unwrap_or(line);
    let tail = tail.split_once(" - ").map_or(tail, |(_, t)| t);
    tail.trim().to_string()
}

/// Reduces `seed`'s failure on the platform matching `query`; writes each smaller program to
/// `out` and prints the last.
///
/// With `source`, runs that file instead (its kernel `t0_k` with seed's input and sizes) and
/// prints the values.
pub fn reduce(
    query: &str,
    seed: u64,
    budget: usize,
    out: &std::path::Path,
    source: Option<&std::path::Path>,
) {
    use cts_runner::difftest::{eval, reduce};
    let api = match cl::Api::load() {
        Ok(a) => a,
        Err(e) => return eprintln!("{e}"),
    };
    let Some(p) = api.platforms().ok().and_then(|ps| {
        ps.into_iter()
            .find(|p| api.platform_name(*p).is_ok_and(|n| matches(query, &n)))
    }) else {
        return eprintln!("no platform matches '{query}'");
    };
    let session = match api.session(p) {
        Ok(s) => s,
        Err(e) => return eprintln!("{e}"),
    };
    let session = &session;
    let unit = gen::generate(seed);
    let expected = match eval::run(&unit) {
        Ok(v) => v,
        Err(e) => return eprintln!("seed {seed} is not well defined: {e}"),
    };
    if let Some(file) = source {
        let src = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => return eprintln!("{}: {e}", file.display()),
        };
        match run_source(session, &[&unit], &src) {
            Ok(v) => println!("{query}: {:?}", v[0]),
            Err((k, d)) => println!("{query}: {k}: {d}"),
        }
        return;
    }
    let mut fails: Box<dyn FnMut(&Unit) -> bool + '_> = match run_batch(session, &[&unit]) {
        Ok(v) if v[0] == expected => return eprintln!("seed {seed} does not fail on {query}"),
        Ok(_) => Box::new(|u: &Unit| {
            let exp = eval::run(u).unwrap_or_default();
            matches!(run_batch(session, &[u]), Ok(v) if v[0] != exp)
        }),
        Err((kind, detail)) => {
            let key = error_key(&detail);
            eprintln!("reducing a {kind}: {key}");
            Box::new(
                move |u: &Unit| matches!(run_batch(session, &[u]), Err((k, d)) if k == kind && d.contains(&key)),
            )
        }
    };
    let mut steps = 0;
    let best = reduce::reduce(&unit, &mut *fails, budget, &mut |u| {
        steps += 1;
        let _ = std::fs::write(out, print::program(&[u]));
        eprintln!("  step {steps}: {} bytes", print::unit(u, "t0_", 0).len());
    });
    drop(fails);
    let src = print::program(&[&best]);
    let _ = std::fs::write(out, &src);
    println!("{src}");
    let exp = eval::run(&best).unwrap_or_default();
    println!("// expected: {exp:?}");
    match run_batch(session, &[&best]) {
        Ok(v) => println!("// got:      {:?}", v[0]),
        Err((k, d)) => println!("// {k}: {d}"),
    }
    println!(
        "// global {}, local {:?}, in[] = {:?}",
        best.global, best.local, best.input
    );
}
