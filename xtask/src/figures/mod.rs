//! Figure reproduction (docs/reproduction.md): every figure of the papers as a resumable
//! sweep of simulated points, written as CSV and SVG, with the paper's
//! claims checked against the measurement.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use partalloc_simkit::Sweep;
use partalloc_simkit::plot::{Chart, Series, write_svg};
use rayon::prelude::*;
use thiserror::Error;

mod blocks;
#[cfg(test)]
mod claims;
mod dispersal;
mod fgd;
mod gupta;
mod kang;
mod kimyoon;
mod mohapatra;
mod pods;
pub(crate) mod sim;
mod table;
mod tas;

use sim::{CpuRow, Metric, PointKey, Row, Setup, Summary};
pub(crate) use table::{Claim, Table, Verdict};

/// The master seed when `--seed` is not given.
pub(crate) const DEFAULT_SEED: u64 = 20_030_301;

/// Options shared by every reproduction command.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunArgs {
    /// Small run for CI: a few seeds and short streams (seconds per figure).
    #[arg(long, conflicts_with = "paper_scale")]
    pub quick: bool,
    /// The papers' own scale where the default is smaller (Kim–Yoon: 100,000
    /// requests per run; Mohapatra: 1000 iterations of T = 10000).
    #[arg(long)]
    pub paper_scale: bool,
    /// Replications (seeds) per point.
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Jobs per replication (figures that run a number of jobs).
    #[arg(long)]
    pub jobs: Option<u64>,
    /// Observation time T per replication (figures that run for a time).
    #[arg(long)]
    pub horizon: Option<f64>,
    /// Worker threads (0: one per core). Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Output directory.
    #[arg(long, default_value = "target/figures")]
    pub out: PathBuf,
    /// Master seed: replication r of every point draws from stream r of it.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Delete this figure's earlier outputs instead of resuming from them.
    #[arg(long)]
    pub fresh: bool,
}

/// Why a reproduction failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub(crate) enum FigError {
    /// An unknown figure id.
    #[error("unknown figure {0:?}; `cargo xtask reproduce --list` shows the ids")]
    UnknownFigure(String),
    /// A bad option value.
    #[error("{0}")]
    Options(String),
    /// A figure's setup is inconsistent.
    #[error("bad setup: {0}")]
    Setup(String),
    /// A workload could not be built.
    #[error(transparent)]
    Workload(#[from] partalloc_workload::WorkloadError),
    /// A workload description does not fit its machine.
    #[error(transparent)]
    Spec(#[from] partalloc_workload::SpecError),
    /// A topology could not be built.
    #[error(transparent)]
    Topology(#[from] partalloc_topology::TopologyError),
    /// A simulation failed.
    #[error(transparent)]
    Sim(#[from] partalloc_simkit::SimError),
    /// A point's experiment cannot run (boxed: the error is large).
    #[error(transparent)]
    Experiment(Box<partalloc_experiment::ExperimentError>),
    /// Statistics refused a value.
    #[error(transparent)]
    Stats(#[from] partalloc_simkit::StatsError),
    /// The sweep file could not be written or resumed.
    #[error("{0} (rerun with --fresh to start this figure over)")]
    Sweep(#[from] partalloc_simkit::SweepError),
    /// The thread pool could not be built.
    #[error(transparent)]
    Replication(#[from] partalloc_simkit::ReplicationError),
    /// Plotting failed.
    #[error(transparent)]
    Plot(#[from] partalloc_simkit::plot::PlotError),
    /// An offline schedule failed.
    #[error(transparent)]
    Torus(#[from] partalloc_schedulers::torus::TorusError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A CSV could not be read back.
    #[error("{path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: csv::Error,
    },
}

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    Quick,
    Default,
    Paper,
}

/// The options of a run, resolved.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub args: RunArgs,
    pub scale: Scale,
    /// Summaries computed in this process, by point key (figures that plot
    /// other quantities of the same runs, e.g. Kang Figs. 11–13, share them).
    memo: Mutex<HashMap<String, Summary>>,
}

impl Ctx {
    /// Replications per point: `--seeds`, else the figure's default for
    /// the scale.
    pub(crate) fn reps(&self, quick: u64, default: u64, paper: u64) -> u64 {
        self.args.seeds.unwrap_or(match self.scale {
            Scale::Quick => quick,
            Scale::Default => default,
            Scale::Paper => paper,
        })
    }

    /// Jobs per replication: `--jobs`, else the figure's default.
    pub(crate) fn jobs(&self, quick: u64, default: u64, paper: u64) -> u64 {
        self.args.jobs.unwrap_or(match self.scale {
            Scale::Quick => quick,
            Scale::Default => default,
            Scale::Paper => paper,
        })
    }

    /// Observation time per replication: `--horizon`, else the default.
    pub(crate) fn horizon(&self, quick: f64, default: f64, paper: f64) -> f64 {
        self.args.horizon.unwrap_or(match self.scale {
            Scale::Quick => quick,
            Scale::Default => default,
            Scale::Paper => paper,
        })
    }
}

/// Checks a panel's claims on its table (other panels' tables by lookup).
pub(crate) type ClaimCheck = Box<dyn Fn(&Table, &Lookup<'_>) -> Vec<Claim> + Sync>;

/// One panel of a simulated figure: a line chart of one quantity.
pub(crate) struct Panel {
    /// `kang-fig10a`, …
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub metric: Metric,
    /// (series label, x, setup), in series-major order.
    pub points: Vec<(String, f64, Setup)>,
    /// Upper limit of the y axis (saturated curves are clipped).
    pub y_max: Option<f64>,
    /// The paper's claims, checked on the measured table (and on other
    /// panels' finished tables, looked up by id).
    pub claims: ClaimCheck,
    /// Extra notes printed under the table (what was run).
    pub notes: Vec<String>,
}

impl std::fmt::Debug for Panel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Panel").field("id", &self.id).finish()
    }
}

/// A figure: its id, where it comes from and how it is produced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Figure {
    pub id: &'static str,
    pub paper: &'static str,
    pub summary: &'static str,
    pub kind: FigureKind,
}

/// How a figure is produced.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FigureKind {
    /// Simulated panels.
    Panels(fn(&Ctx) -> Result<Vec<Panel>, FigError>),
    /// Anything else (worked examples).
    Custom(fn(&Ctx) -> Result<(), FigError>),
}

/// Every figure, in the order `reproduce all` runs them.
pub(crate) const FIGURES: &[Figure] = &[
    kang::FIG9,
    kang::FIG10,
    kang::FIG11,
    kang::FIG12,
    kang::FIG13,
    mohapatra::FIG2,
    mohapatra::FIG3,
    mohapatra::FIG4,
    mohapatra::FIG5,
    kimyoon::FIG10,
    kimyoon::FIG11,
    kimyoon::FIG12,
    kimyoon::FIG13,
    kimyoon::FIG14,
    kimyoon::FIG15,
    kimyoon::FIG16,
    kimyoon::FIG17,
    gupta::EXAMPLES,
    pods::FIGURE,
    blocks::FIGURE,
    dispersal::FIGURE,
    tas::FIGURE,
    fgd::FIGURE,
];

/// Prints the figure ids.
pub(crate) fn list() {
    for f in FIGURES {
        println!("{:<16} {:<28} {}", f.id, f.paper, f.summary);
    }
}

/// Runs the figure `id` (a figure id, a panel id such as `kang-fig10c`, or
/// `all`).
pub(crate) fn reproduce(id: &str, args: &RunArgs) -> Result<(), FigError> {
    let scale = if args.quick {
        Scale::Quick
    } else if args.paper_scale {
        Scale::Paper
    } else {
        Scale::Default
    };
    if args.seeds == Some(0) {
        return Err(FigError::Options("--seeds must be at least 1".to_owned()));
    }
    if args.jobs == Some(0) {
        return Err(FigError::Options("--jobs must be at least 1".to_owned()));
    }
    if let Some(t) = args.horizon
        && !(t.is_finite() && t > 0.0)
    {
        return Err(FigError::Options(format!(
            "--horizon {t} must be a finite time > 0"
        )));
    }
    let ctx = Ctx {
        args: args.clone(),
        scale,
        memo: Mutex::new(HashMap::new()),
    };
    let (figures, panel): (Vec<&Figure>, Option<&str>) = if id == "all" {
        (FIGURES.iter().collect(), None)
    } else if let Some(f) = FIGURES.iter().find(|f| f.id == id) {
        (vec![f], None)
    } else if let Some(f) = FIGURES
        .iter()
        .find(|f| id.starts_with(f.id) && id.len() == f.id.len() + 1)
    {
        (vec![f], Some(id))
    } else {
        return Err(FigError::UnknownFigure(id.to_owned()));
    };
    std::fs::create_dir_all(&args.out).map_err(|source| FigError::Io {
        path: args.out.clone(),
        source,
    })?;
    let pool = partalloc_simkit::thread_pool(args.threads)?;
    let started = std::time::Instant::now();
    for f in figures {
        eprintln!("==> {} ({})", f.id, f.paper);
        let figure_started = std::time::Instant::now();
        match f.kind {
            FigureKind::Panels(build) => {
                let panels = build(&ctx)?;
                let mut found = panel.is_none();
                for p in &panels {
                    if panel.is_some_and(|want| want != p.id) {
                        continue;
                    }
                    found = true;
                    pool.install(|| run_panel(&ctx, p))?;
                }
                if !found {
                    return Err(FigError::UnknownFigure(id.to_owned()));
                }
            }
            FigureKind::Custom(run) => {
                if panel.is_some() {
                    return Err(FigError::UnknownFigure(id.to_owned()));
                }
                run(&ctx)?;
            }
        }
        eprintln!(
            "    {} finished in {:.1} s",
            f.id,
            figure_started.elapsed().as_secs_f64()
        );
    }
    eprintln!(
        "done in {:.1} s; outputs in {}",
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(())
}

/// Writes `text` as `name` in `dir`, atomically (a reader never sees half
/// a file).
pub(crate) fn write_text(dir: &Path, name: &str, text: &str) -> Result<(), FigError> {
    let path = dir.join(name);
    partalloc_simkit::write_atomic(&path, text).map_err(|source| FigError::Io { path, source })
}

fn remove_if_exists(path: &Path) -> Result<(), FigError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(FigError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn progress(total: u64, label: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix:>14} [{elapsed_precise}] {wide_bar} {pos}/{len} runs (eta {eta})",
    ) {
        pb.set_style(style);
    }
    pb.set_prefix(label.to_owned());
    pb
}

/// Simulates (or resumes) every point of a panel, writes its CSV(s) and
/// SVG, prints its table and checks its claims.
fn run_panel(ctx: &Ctx, panel: &Panel) -> Result<(), FigError> {
    let out = &ctx.args.out;
    let csv = out.join(format!("{}.csv", panel.id));
    let cpu_csv = out.join(format!("{}-cputime.csv", panel.id));
    let timed = panel.metric == Metric::SearchTime;
    if ctx.args.fresh {
        for p in [&csv, &cpu_csv] {
            remove_if_exists(p)?;
            let mut partial = p.clone().into_os_string();
            partial.push(".partial");
            remove_if_exists(Path::new(&partial))?;
        }
    }
    let seed = ctx.args.seed;
    let keys: Vec<PointKey> = panel
        .points
        .iter()
        .map(|(series, x, s)| s.key(series, *x, seed))
        .collect();
    let mut main = Sweep::open(&csv, keys.clone())?;
    let mut cpu = if timed {
        Some(Sweep::open(&cpu_csv, keys.clone())?)
    } else {
        None
    };
    let pending: Vec<usize> = (0..keys.len())
        .filter(|&i| !main.is_done(i) || cpu.as_ref().is_some_and(|c| !c.is_done(i)))
        .collect();
    let runs: u64 = pending
        .iter()
        .filter_map(|&i| panel.points.get(i))
        .map(|p| p.2.replications)
        .sum();
    let pb = progress(runs, &panel.id);
    {
        let sink = Mutex::new((&mut main, cpu.as_mut()));
        pending
            .par_iter()
            .try_for_each(|&i| -> Result<(), FigError> {
                let (Some(key), Some((_, _, setup))) = (keys.get(i), panel.points.get(i)) else {
                    return Ok(());
                };
                let summary = summarize(ctx, key, setup, &pb)?;
                let row = Row::new(&summary, panel.metric);
                let mut guard = sink
                    .lock()
                    .map_err(|_| FigError::Setup("a worker thread panicked".to_owned()))?;
                if !guard.0.is_done(i) {
                    guard.0.append_index(i, &row)?;
                }
                if let Some(c) = guard.1.as_mut()
                    && !c.is_done(i)
                {
                    let (mean, half) = summary
                        .search_us
                        .map_or((f64::NAN, None), |s| (s.mean, s.half_width));
                    c.append_index(
                        i,
                        &CpuRow {
                            search_us_mean: mean,
                            search_us_ci95: half,
                        },
                    )?;
                }
                Ok(())
            })?;
    }
    pb.finish_and_clear();
    main.finish()?;
    if let Some(c) = cpu.as_mut() {
        c.finish()?;
    }
    let table = Table::read(&csv, timed.then_some(cpu_csv.as_path()))?;
    let col = panel.metric.column();
    let series = table.series_names();
    let chart = Chart {
        title: panel.title.clone(),
        x_label: panel.x_label.clone(),
        y_label: panel.y_label.clone(),
        series: series
            .iter()
            .map(|s| Series {
                label: s.clone(),
                points: table
                    .points(s, col)
                    .into_iter()
                    .map(|(x, m, h)| (x, m, h.unwrap_or(0.0)))
                    .collect(),
            })
            .collect(),
        y_max: panel.y_max,
    };
    let svg = out.join(format!("{}.svg", panel.id));
    write_svg(&chart, &svg)?;
    let lookup = Lookup { out };
    let claims = (panel.claims)(&table, &lookup);
    let text = table.render(panel, col, &claims);
    print!("{text}");
    write_text(out, &format!("{}.txt", panel.id), &text)
}

impl From<partalloc_experiment::ExperimentError> for FigError {
    fn from(e: partalloc_experiment::ExperimentError) -> Self {
        Self::Experiment(Box::new(e))
    }
}

/// Finds the finished tables of other panels in the output directory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lookup<'a> {
    out: &'a Path,
}

impl Lookup<'_> {
    /// The finished table of panel `id`, if it is on disk.
    pub(crate) fn table(&self, id: &str) -> Option<Table> {
        let p = self.out.join(format!("{id}.csv"));
        p.exists().then(|| Table::read(&p, None).ok()).flatten()
    }
}

/// The summary of a point: from this process's memo, or simulated.
fn summarize(
    ctx: &Ctx,
    key: &PointKey,
    setup: &Setup,
    pb: &ProgressBar,
) -> Result<Summary, FigError> {
    let memo_key = format!("{key:?}");
    if let Ok(m) = ctx.memo.lock()
        && let Some(s) = m.get(&memo_key)
    {
        pb.inc(setup.replications);
        return Ok(*s);
    }
    let reports = setup.run(key.seed, &|| pb.inc(1))?;
    let s = Summary::of(&reports)?;
    if let Ok(mut m) = ctx.memo.lock() {
        m.insert(memo_key, s);
    }
    Ok(s)
}

/// Formats `mean ± half`.
pub(crate) fn pm(mean: f64, half: Option<f64>) -> String {
    let digits = if mean.abs() >= 100.0 {
        1
    } else if mean.abs() >= 1.0 {
        3
    } else {
        4
    };
    match half {
        Some(h) => format!("{mean:.digits$} ± {h:.digits$}"),
        None => format!("{mean:.digits$}"),
    }
}

/// Appends a line to a string.
pub(crate) fn line(s: &mut String, text: &str) {
    let _ = writeln!(s, "{text}");
}
