//! `cts-reclassify`: judges a recorded cts-runner run again with this runner's rules, from its
//! results file and raw logs, without running anything.
//!
//! ```sh
//! mkdir /tmp/logs && for f in cts-runner/results/lavapipe/logs/*.log.gz; do
//!     gunzip -c "$f" > /tmp/logs/$(basename "$f" .gz); done
//! cts-reclassify --results cts-runner/results/lavapipe/lavapipe.json --logs /tmp/logs
//! ```
//!
//! Prints the summary table the run would have had, then every test whose status changed.
//! Each suite's test names come from the old results (the binary's list is not in the log).

use clap::Parser;
use cts_runner::model::{RunResults, SuiteState};
use cts_runner::{relog, report, suites};
use std::path::PathBuf;
use std::process::ExitCode;

/// Judges a recorded run again from its raw logs.
#[derive(Parser, Debug)]
struct Args {
    /// The run's `<device>.json`.
    #[arg(long)]
    results: PathBuf,
    /// The directory holding its raw logs, `<suite>.log`, uncompressed.
    #[arg(long)]
    logs: PathBuf,
    /// Write the re-judged results as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cts-reclassify: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(a: &Args) -> Result<(), String> {
    let text = std::fs::read_to_string(&a.results)
        .map_err(|e| format!("cannot read {}: {e}", a.results.display()))?;
    let old: RunResults = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a results file: {e}", a.results.display()))?;
    let mut new = old.clone();
    let mut changes = Vec::new();
    for s in new.suites.iter_mut().filter(|s| s.state == SuiteState::Ran) {
        let path = a.logs.join(format!("{}.log", s.id));
        let log = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let args = suites::command_args(&s.command);
        let names: Vec<String> = s.tests.iter().map(|t| t.name.clone()).collect();
        let mut tests = relog::reclassify(&s.id, &args, Some(&names), &log);
        tests.sort_by_key(|t| {
            names
                .iter()
                .position(|n| n == &t.name)
                .unwrap_or(usize::MAX)
        });
        for t in &tests {
            let before = s.tests.iter().find(|o| o.name == t.name).map(|o| o.status);
            if before != Some(t.status) {
                changes.push(format!(
                    "{}/{}: {} -> {}{}",
                    s.id,
                    t.name,
                    before.map_or("(absent)".to_string(), |b| b.to_string()),
                    t.status,
                    t.note
                        .as_deref()
                        .map_or(String::new(), |n| format!(" ({n})"))
                ));
            }
        }
        s.tests = tests;
    }
    println!("{}", report::summary_table(&new, &[]));
    println!("## {} changed statuses\n", changes.len());
    for c in &changes {
        println!("- {c}");
    }
    if let Some(p) = &a.json {
        let json = serde_json::to_string_pretty(&new).map_err(|e| e.to_string())?;
        std::fs::write(p, json + "\n").map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    Ok(())
}
