//! Developer tasks for the partalloc workspace.
//!
//! - `cargo xtask ci [--adversarial]` — every check CI runs (format, lints, tests, docs,
//!   the feature and dependency checks, the quick Fig. 10 reproduction);
//! - `cargo xtask reproduce-fig10` — Kang et al. (IEEE TC 2003) Fig. 10 at
//!   the paper's scale;
//! - `cargo xtask reproduce <id>`, `cargo xtask reproduce all`,
//!   `cargo xtask reproduce --list` — every figure of docs/reproduction.md;
//! - `cargo xtask package-check` — every published library crate, packaged
//!   as for crates.io, builds its own tests (opt-in, not part of CI).
//!
//! See `docs/reproduction.md` for what each figure runs and how the
//! measurements compare with the papers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod ci;
mod figures;
mod package;
mod tidy;

use figures::RunArgs;

/// Developer tasks for the partalloc workspace.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", version, about)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Run every check CI runs: fmt, clippy, tests, docs, quick Fig. 10.
    Ci {
        /// Also run the whole adversarial corpus of the command-line tool
        /// (PARTALLOC_ADVERSARIAL=full; the tests run its fast part).
        #[arg(long)]
        adversarial: bool,
    },
    /// Reproduce Kang et al. Fig. 10 (a, b, c): ETC vs Isomorphic on 4-, 8-
    /// and 16-ary 3-cubes, 20 seeds x 1000 jobs per point.
    #[command(name = "reproduce-fig10")]
    ReproduceFig10(RunArgs),
    /// Reproduce a figure (or one panel) by id, or `all`.
    Reproduce {
        /// Figure id (e.g. `kang-fig9`), panel id (e.g. `kang-fig10c`) or `all`.
        #[arg(required_unless_present = "list")]
        id: Option<String>,
        /// List the figure ids and what they run.
        #[arg(long)]
        list: bool,
        #[command(flatten)]
        args: RunArgs,
    },
    /// Package each published library crate as for crates.io, unpack the
    /// packages side by side and build each one's tests there (slow; not
    /// part of `ci`).
    #[command(name = "package-check")]
    PackageCheck,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Ci { adversarial } => return ci::run(adversarial),
        Task::ReproduceFig10(args) => figures::reproduce("kang-fig10", &args),
        Task::Reproduce { list: true, .. } => {
            figures::list();
            Ok(())
        }
        Task::PackageCheck => return package::run(),
        Task::Reproduce { id, args, .. } => {
            figures::reproduce(id.as_deref().unwrap_or("all"), &args)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
