//! `partalloc benchmark`: RLScheduler's benchmark protocol — the mean
//! bounded slowdown of heuristics (and any policy) on sequences of N jobs
//! cut from a trace, replayed as RLScheduler's simulator replays them
//! (`partalloc_simkit::benchmark`, docs/rl-benchmark.md).

use std::path::PathBuf;

use partalloc::schedulers::registry::PolicySpec;
use partalloc::simkit::SlowdownBound;
use partalloc::simkit::benchmark::{
    self, BenchTrace, BenchmarkConfig, DEFAULT_LENGTH, DEFAULT_SEQUENCES,
};

use crate::error::CliError;
use crate::output::{csv_text, emit, num};

/// Options of `partalloc benchmark`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The SWF trace the sequences are cut from; its header's MaxNodes (or
    /// MaxProcs) is the machine's size.
    #[arg(long)]
    trace: PathBuf,
    /// Heuristics (queue orders), comma-separated: fcfs, sjf, wfp3, unicep,
    /// f1, wfp3-rlscheduler, unicep-rlscheduler, … Each runs as
    /// rlscheduler[order=…,backfill=…].
    #[arg(long, value_delimiter = ',', default_value = "fcfs,wfp3,unicep,sjf,f1")]
    policies: Vec<String>,
    /// A further scheduling policy spec to score on the same sequences
    /// (repeatable), e.g. 'easy-backfilling[order=sjf]'.
    #[arg(long = "scheduler", value_name = "SPEC")]
    schedulers: Vec<String>,
    /// Run the heuristics without backfilling (off), with it (on), or both.
    #[arg(long, default_value_t = benchmark::Backfill::Both, value_parser = crate::workload::choices::<benchmark::Backfill>(benchmark::Backfill::ALL.map(|b| b.name())))]
    backfill: benchmark::Backfill,
    /// Sequences to score (K).
    #[arg(long, default_value_t = DEFAULT_SEQUENCES)]
    sequences: usize,
    /// Jobs per sequence (N).
    #[arg(long, default_value_t = DEFAULT_LENGTH)]
    length: usize,
    /// Seed of the sequence starts (ChaCha8, uniform on [N, jobs − N − 1)).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Explicit start indices (comma-separated) instead of drawn ones.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["sequences", "seed"])]
    starts: Option<Vec<usize>>,
    /// The threshold τ of the bounded slowdown, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = SlowdownBound::default())]
    slowdown_bound: SlowdownBound,
    /// Print one CSV row per policy and sequence instead of the table.
    #[arg(long)]
    csv: bool,
}

/// Runs `partalloc benchmark`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let input = |e: benchmark::BenchmarkError| CliError::input(e.to_string());
    let list =
        benchmark::policies(&args.policies, args.backfill, &args.schedulers).map_err(input)?;
    let policies: Vec<PolicySpec> = list.iter().map(|p| p.spec.clone()).collect();
    let labels: Vec<(&str, Option<bool>)> = list
        .iter()
        .map(|p| (p.label.as_str(), p.backfill))
        .collect();
    let trace = BenchTrace::read(&args.trace).map_err(input)?;
    let config = BenchmarkConfig {
        length: args.length,
        sequences: args.sequences,
        seed: args.seed,
        starts: args.starts.clone(),
        bound: args.slowdown_bound,
    };
    let table = benchmark::run(&trace, &policies, &config).map_err(input)?;
    if args.csv {
        let mut rows = Vec::new();
        for ((policy, backfill), row) in labels.iter().zip(&table.rows) {
            for (k, (start, b)) in table.starts.iter().zip(&row.per_sequence).enumerate() {
                rows.push(vec![
                    (*policy).to_owned(),
                    backfill.map(|b| b.to_string()).unwrap_or_default(),
                    k.to_string(),
                    start.to_string(),
                    format!("{b:?}"),
                ]);
            }
        }
        let header = [
            "policy",
            "backfill",
            "sequence",
            "start",
            "bounded_slowdown",
        ];
        return emit(&csv_text(&header, &rows)?);
    }
    let mut text = format!(
        "mean bounded slowdown (tau {} s) over {} sequences of {} jobs from {} ({} jobs, {} nodes); starts {}\n",
        args.slowdown_bound,
        table.starts.len(),
        args.length,
        crate::error::shown(&args.trace),
        trace.jobs().len(),
        trace.nodes(),
        table
            .starts
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    let width = labels
        .iter()
        .map(|(p, _)| p.len())
        .max()
        .unwrap_or(0)
        .max(6);
    text.push_str(&format!(
        "{:<width$}  backfill  {:>10}  {:>10}  {:>10}\n",
        "policy", "mean", "min", "max"
    ));
    for ((policy, backfill), row) in labels.iter().zip(&table.rows) {
        let min = row
            .per_sequence
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let max = row
            .per_sequence
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let backfill = match backfill {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        text.push_str(&format!(
            "{policy:<width$}  {backfill:<8}  {:>10}  {:>10}  {:>10}\n",
            num(row.mean),
            num(min),
            num(max)
        ));
    }
    emit(&text)
}
