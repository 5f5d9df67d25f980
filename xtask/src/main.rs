//! Developer tasks for the partalloc workspace.
//!
//! Run as `cargo xtask <task>`; `cargo xtask help` lists the tasks.

use std::process::{Command, ExitCode};

const HELP: &str = "\
usage: cargo xtask <task>

tasks:
  ci      run every check CI runs: fmt, clippy, tests, docs
  help    print this message
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("help" | "--help" | "-h") | None => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("error: unknown task {other:?}\n\n{HELP}");
            ExitCode::FAILURE
        }
    }
}

/// One step of CI: a cargo invocation and extra environment.
struct Step {
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

/// The same steps, in the same order, as `.ci/run`.
const CI_STEPS: &[Step] = &[
    Step {
        args: &["fmt", "--all", "--check"],
        env: &[],
    },
    Step {
        args: &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        env: &[],
    },
    Step {
        args: &["test", "--workspace"],
        env: &[],
    },
    Step {
        args: &["doc", "--workspace", "--no-deps"],
        env: &[("RUSTDOCFLAGS", "-D warnings")],
    },
];

fn ci() -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    for step in CI_STEPS {
        eprintln!("==> cargo {}", step.args.join(" "));
        let status = Command::new(&cargo)
            .args(step.args)
            .envs(step.env.iter().copied())
            .status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => {
                eprintln!("error: `cargo {}` failed ({s})", step.args.join(" "));
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("error: could not run cargo: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
