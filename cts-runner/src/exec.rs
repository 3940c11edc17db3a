//! Running one test process with a time limit.

use crate::parse::Line;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// How a process ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it (Unix).
    Signal(i32),
    /// It ran past the limit and was killed.
    TimedOut,
}

/// A finished process: how it ended, its merged output and its wall time.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub exit: Exit,
    /// stdout and stderr, merged in the order written, each line timestamped.
    pub lines: Vec<Line>,
    /// Wall time, seconds.
    pub duration_s: f64,
}

/// Runs `program args` in `cwd` with `env` added (and `env_remove` removed), kills it after
/// `limit`, and returns its output. An error means it could not be started.
pub fn run(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
    env_remove: &[&str],
    limit: Duration,
) -> std::io::Result<Outcome> {
    let (reader, writer) = std::io::pipe()?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    // Its own process group, so that a timeout kills what it started too.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    for k in env_remove {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    // Drop our copies of the pipe's write end, so that the reader sees end-of-file when the
    // child (and anything it started) is gone.
    drop(cmd);
    let collector = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut r = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&buf);
                    lines.push(Line {
                        at: start.elapsed().as_secs_f64(),
                        text: text.trim_end_matches(['\n', '\r']).to_string(),
                    });
                }
            }
        }
        lines
    });
    let exit = match child.wait_timeout(limit)? {
        Some(status) => status_exit(status),
        None => {
            // Kill the group and reap; an error here means it ended on its own meanwhile.
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            Exit::TimedOut
        }
    };
    let duration_s = start.elapsed().as_secs_f64();
    let lines = collector.join().unwrap_or_default();
    Ok(Outcome {
        exit,
        lines,
        duration_s,
    })
}

/// Kills the process group `pgid` (the child's, made by `process_group(0)`).
#[cfg(unix)]
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(not(unix))]
fn kill_group(_pgid: u32) {}

#[cfg(unix)]
fn status_exit(s: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(-1),
    }
}

#[cfg(not(unix))]
fn status_exit(s: std::process::ExitStatus) -> Exit {
    Exit::Code(s.code().unwrap_or(-1))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str, limit_ms: u64) -> Outcome {
        run(
            Path::new("/bin/sh"),
            &["-c".to_string(), script.to_string()],
            Path::new("/"),
            &[("X".to_string(), "7".to_string())],
            &[],
            Duration::from_millis(limit_ms),
        )
        .expect("sh starts")
    }

    #[test]
    fn merges_output_and_env() {
        let o = sh("echo a; echo b >&2; echo $X; exit 3", 10_000);
        let t: Vec<&str> = o.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(t, vec!["a", "b", "7"]);
        assert_eq!(o.exit, Exit::Code(3));
    }

    #[test]
    fn signal_and_timeout() {
        assert_eq!(sh("kill -SEGV $$", 10_000).exit, Exit::Signal(11));
        let o = sh("echo started; sleep 30; echo never", 300);
        assert_eq!(o.exit, Exit::TimedOut);
        assert!(o.duration_s < 10.0);
        assert_eq!(o.lines.len(), 1);
    }
}
