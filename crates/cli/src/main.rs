//! `partalloc`: processor allocation and job scheduling on partitionable
//! parallel machines, from the command line.
//!
//! ```text
//! partalloc strategies
//! partalloc simulate --topology mesh:32x32 --allocator fsl --scheduler fcfs --load 0.47
//! partalloc sweep examples/kimyoon-small.toml
//! partalloc replay data/traces/NASA-iPSC-1993-3.1-cln.swf --topology hypercube:7
//! partalloc show --topology mesh:16x16 --allocator fsl --at 40
//! partalloc generate --topology mesh:8x8 --load 0.6 --jobs 200 --out small.swf
//! partalloc benchmark --trace lublin_256.swf --sequences 10 --length 256
//! ```
//!
//! Errors are one line on standard error and a non-zero exit code (1 for
//! bad input or a failed run, 2 for a malformed command line). Files are
//! written through a temporary file renamed into place, so a failed command
//! never leaves a file that looks complete. See `docs/guide.md`.

mod benchmark;
mod error;
mod generate;
#[cfg(test)]
mod input_fuzz;
mod limits;
mod metrics;
mod output;
mod pod_measures;
mod progress;
mod replay;
mod report;
mod run;
mod shard;
mod show;
mod simulate;
mod slurm_measures;
mod strategies;
mod sweep;
mod trace;
mod whatif;
mod workload;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Processor allocation and job scheduling on partitionable parallel
/// machines (hypercubes, k-ary n-cubes, meshes, tori).
#[derive(Debug, Parser)]
#[command(name = "partalloc", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every allocation strategy and scheduling policy with its
    /// parameters and the machines it accepts.
    Strategies(strategies::Args),
    /// Run one simulation (a generated workload or a trace) and report its
    /// statistics.
    Simulate(simulate::Args),
    /// Run a grid of simulations described in a TOML experiment file, in
    /// parallel and resumably; write CSV and SVG charts.
    Sweep(sweep::Args),
    /// Replay a Standard Workload Format trace on a machine with several
    /// strategies and compare them with non-contiguous allocation.
    Replay(replay::Args),
    /// Write one HTML page of a workload run under several strategies and
    /// policies, side by side: the jobs on the machine (a Gantt chart),
    /// occupancy and queue over time, wait and slowdown distributions.
    Report(report::Args),
    /// Write a generated workload as a Standard Workload Format trace.
    Generate(generate::Args),
    /// Score heuristics and policies by RLScheduler's protocol: mean
    /// bounded slowdown on sequences of jobs cut from a trace.
    Benchmark(benchmark::Args),
    /// Draw the machine's occupancy at a chosen simulated time, as text and
    /// optionally as SVG.
    Show(show::Args),
    /// Run one Slurm workload (a sacct dump) under several slurm.conf files
    /// and compare wait, slowdown and use per account, QOS and partition.
    Whatif(whatif::Args),
}

/// A command line the argument parser refused, as one line: the parser's
/// message without its usage hint, a value's own error after the flag it
/// was given to (the value is echoed there once, cut and escaped).
fn one_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() == ErrorKind::ValueValidation
        && let (Some(ContextValue::String(arg)), Some(source)) =
            (e.get(ContextKind::InvalidArg), std::error::Error::source(e))
    {
        let source = source.to_string();
        return match e.get(ContextKind::InvalidValue) {
            Some(ContextValue::String(value)) if !source.contains(value.as_str()) => {
                format!(
                    "error: {arg}: \"{}\": {source}",
                    partalloc::topology::echo(value)
                )
            }
            _ => format!("error: {arg}: {source}"),
        };
    }
    let text = e.render().to_string();
    let head = text
        .split("\n\nUsage:")
        .next()
        .unwrap_or_default()
        .split("\n\nFor more information")
        .next()
        .unwrap_or_default();
    let lines: Vec<&str> = head
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", one_line(&e));
            return ExitCode::from(2);
        }
        // --help and --version print to standard output.
        Err(e) => e.exit(),
    };
    // Ctrl-C or a TERM signal (a cancelled Slurm job) ends the process at
    // once: remove the temporary files of unfinished writes first, so
    // none is left beside its target. A sweep's `.partial` file is not a
    // temporary: it stays, and the sweep resumes from it.
    let _ = ctrlc::set_handler(|| {
        partalloc::simkit::remove_temporaries();
        std::process::exit(130);
    });
    let result = match cli.command {
        Command::Strategies(a) => strategies::run(&a),
        Command::Simulate(a) => simulate::run(&a),
        Command::Sweep(a) => sweep::run(&a),
        Command::Replay(a) => replay::run(&a),
        Command::Report(a) => report::run(&a),
        Command::Show(a) => show::run(&a),
        Command::Generate(a) => generate::run(&a),
        Command::Benchmark(a) => benchmark::run(&a),
        Command::Whatif(a) => whatif::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every command that takes `--topology` lists every machine family in
    /// its help, from the one table of families.
    #[test]
    fn every_topology_flag_lists_every_family() {
        let cli = super::Cli::command();
        let mut seen = 0;
        for sub in cli.get_subcommands() {
            let Some(arg) = sub.get_arguments().find(|a| a.get_id() == "topology") else {
                continue;
            };
            seen += 1;
            let help = arg
                .get_long_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            for family in partalloc_experiment::forms::FAMILIES {
                assert!(
                    help.contains(family.help),
                    "`{} --topology` help misses {}",
                    sub.get_name(),
                    family.kind
                );
            }
        }
        assert!(seen >= 6, "only {seen} commands take --topology");
    }
}
