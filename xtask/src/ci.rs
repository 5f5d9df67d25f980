//! `cargo xtask ci`: the checks `.ci/run` runs, in the same order.

use std::process::{Command, ExitCode};

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
    Step {
        args: &[
            "xtask",
            "reproduce-fig10",
            "--quick",
            "--out",
            "target/ci-figures",
        ],
        env: &[],
    },
];

/// Runs every step; stops at the first failure.
pub(crate) fn run() -> ExitCode {
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
