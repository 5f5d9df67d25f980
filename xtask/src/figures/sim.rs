//! One point of a simulated figure: its setup, its replications and the
//! summary written to the figure's CSV.

use partalloc_allocators::registry::{ALLOCATORS, AllocatorSpec};
use partalloc_experiment::MachineSource;
use partalloc_experiment::experiment::{DrawnSource, Experiment, WorkloadSource};
use partalloc_schedulers::registry::{POLICIES, PolicySpec};
use partalloc_simkit::metrics::{self, METRICS, Metric as SimMetric, Summary as MetricSummary};
use partalloc_simkit::{Report, SimError};
use partalloc_topology::{Coords, Topology};
use partalloc_workload::{
    Arrivals, CubeDimLaw, DemandLaw, Dependence, Job, JobShape, ShapeLaw, WorkloadSpec,
};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::FigError;

/// When a replication ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum StopRule {
    /// This many jobs arrive; the run ends when the last completes.
    Jobs(u64),
    /// Jobs arrive until this time; the run stops at it.
    Horizon(f64),
}

/// Everything a point simulates.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub machine: Topology,
    pub allocator: AllocatorSpec,
    pub scheduler: PolicySpec,
    pub shapes: ShapeLaw,
    /// Round every side of a drawn box up to the next power of two (at
    /// most the machine's side) before the job is submitted: the box a
    /// subcube-granting strategy descended from Tree Collapsing would
    /// reserve for Kang §5.3's jobs. The arrival rate stays derived from
    /// the unrounded sizes, so the offered load counts the nodes the jobs
    /// need.
    pub round_up_pow2: bool,
    /// The service (residence) law; every figure uses the dependent model.
    pub demand: DemandLaw,
    pub load: f64,
    pub stop: StopRule,
    pub replications: u64,
    /// Measure CPU time in the allocator (not deterministic).
    pub search_time: bool,
}

/// A point's parameters, as written in the first columns of its CSV row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct PointKey {
    /// The line (legend label) the point belongs to.
    pub series: String,
    /// The x coordinate in the figure.
    pub x: f64,
    pub machine: String,
    pub allocator: String,
    pub scheduler: String,
    pub workload: String,
    /// Offered load ρ = λ·E\[nodes requested\]·E\[service\]/N.
    pub offered_load: f64,
    pub stop: String,
    pub replications: u64,
    pub seed: u64,
}

impl Setup {
    /// The workload string of the CSV.
    pub(crate) fn workload_name(&self) -> String {
        let shapes = match (&self.shapes, self.round_up_pow2) {
            (ShapeLaw::Cubic { max: None }, false) => "cubic 2^a per side".to_owned(),
            (ShapeLaw::Noncubic { max: None }, false) => "noncubic uniform sides".to_owned(),
            (ShapeLaw::Noncubic { max: None }, true) => {
                "noncubic uniform sides, each rounded up to 2^ceil(log2)".to_owned()
            }
            (ShapeLaw::Cube(CubeDimLaw::Uniform), false) => "cube dims uniform".to_owned(),
            (ShapeLaw::Cube(CubeDimLaw::Normal), false) => "cube dims normal table".to_owned(),
            (ShapeLaw::Sides { law, max: None }, false) => format!("sides {law}"),
            (law, false) => law.to_string(),
            (law, true) => format!("{law}, each side rounded up to 2^ceil(log2)"),
        };
        let demand = match self.demand {
            DemandLaw::Exponential { mean } => format!("exp({mean})"),
            DemandLaw::Uniform { mean } => format!("uniform(0..{})", 2.0 * mean),
            DemandLaw::HyperExponential { mean, alpha, cv } => {
                format!("hyperexp(mean {mean} alpha {alpha} cv {cv})")
            }
            law => law.to_string(),
        };
        format!("{shapes}; service {demand}")
    }

    /// The stop string of the CSV.
    pub(crate) fn stop_name(&self) -> String {
        match self.stop {
            StopRule::Jobs(n) => format!("{n} jobs"),
            StopRule::Horizon(t) => format!("T={t}"),
        }
    }

    /// The point key of this setup in a figure.
    pub(crate) fn key(&self, series: &str, x: f64, seed: u64) -> PointKey {
        PointKey {
            series: series.to_owned(),
            x,
            machine: self.machine.to_string(),
            allocator: self.allocator.to_string(),
            scheduler: self.scheduler.to_string(),
            workload: self.workload_name(),
            offered_load: self.load,
            stop: self.stop_name(),
            replications: self.replications,
            seed,
        }
    }

    /// The experiment of this point under master `seed`: the laws drawn
    /// as a finite run ([`WorkloadSource::Drawn`]), replication r from
    /// stream r of the seed, so every strategy and load sees the same job
    /// sizes and service draws (common random numbers).
    pub(crate) fn experiment(&self, seed: u64) -> Experiment {
        let mut source = DrawnSource::new(WorkloadSpec {
            arrivals: Arrivals::Load(self.load),
            shapes: self.shapes.clone(),
            demand: self.demand,
            dependence: Dependence::Dependent,
            allow_saturation: true,
        });
        if self.round_up_pow2 {
            source.reshape = Some(rounded_up_pow2);
        }
        let mut exp = Experiment::new(
            MachineSource::Text(self.machine.to_string()),
            WorkloadSource::Drawn(source),
            self.allocator.clone(),
            self.scheduler.clone(),
        );
        exp.seed = seed;
        exp.replications = self.replications;
        exp.search_time = self.search_time;
        match self.stop {
            StopRule::Jobs(n) => exp.stop.jobs = Some(n),
            StopRule::Horizon(t) => exp.stop.time = Some(t),
        }
        exp
    }

    /// Runs the point's replications under master `seed`, checked on the
    /// machine, in replication order; `done` is called as each finishes.
    pub(crate) fn run(&self, seed: u64, done: &(dyn Fn() + Sync)) -> Result<Vec<Report>, FigError> {
        let prepared = self.experiment(seed).check_on(self.machine.clone())?;
        Ok(prepared
            .run(&|_| (), done)?
            .into_iter()
            .map(|(report, ())| report)
            .collect())
    }
}

/// The strategy a figure's table names, parsed once when the figure is set
/// up.
pub(crate) fn strategy(name: &str) -> Result<AllocatorSpec, FigError> {
    Ok(ALLOCATORS.spec(name).map_err(SimError::from)?)
}

/// The scheduling policy a figure's table names, parsed once when the
/// figure is set up.
pub(crate) fn policy(name: &str) -> Result<PolicySpec, FigError> {
    Ok(POLICIES.spec(name).map_err(SimError::from)?)
}

/// The job with every side of its box rounded up to the next power of
/// two within the machine's sides ([`round_up_pow2`]); on a machine that
/// is not a grid, the job as drawn.
fn rounded_up_pow2(mut job: Job, machine: &Topology) -> Job {
    if let Topology::Grid(g) = machine {
        round_up_pow2(&mut job, g.sides());
    }
    job
}

/// Rounds every side of a box job up to the next power of two, capped at
/// the machine's side along that dimension (`caps`); other shapes are left
/// as they are. The job keeps its id, arrival and service, so a rounded
/// series sees the same jobs as the unrounded ones (common random numbers).
fn round_up_pow2(job: &mut Job, caps: &Coords) {
    if let JobShape::Box { sides } = &mut job.shape {
        for (i, s) in sides.as_mut_slice().iter_mut().enumerate() {
            let cap = caps.as_slice().get(i).copied().unwrap_or(u32::MAX);
            *s = s.checked_next_power_of_two().unwrap_or(*s).min(cap).max(*s);
        }
    }
}

/// What a point measured, summarized over its replications (each
/// quantity by [`metrics::summary_of`], the one summary over replications).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub replications: u64,
    /// One per metric of [`METRICS`], in that table's order.
    pub metrics: [MetricSummary; METRICS.len()],
    /// Microseconds in allocate + release per job (not deterministic).
    pub search_us: Option<MetricSummary>,
}

/// A summary of a missing quantity.
const NONE: MetricSummary = MetricSummary {
    metric: "",
    mean: f64::NAN,
    half_width: None,
    n: 0,
};

impl Summary {
    pub(crate) fn of(reports: &[Report]) -> Result<Self, FigError> {
        let search_us = if reports.iter().all(|r| r.search_time.measured) {
            Some(metrics::summary_of(
                "search_us",
                reports
                    .iter()
                    .map(|r| r.search_time.mean_seconds_per_job * 1e6),
            )?)
        } else {
            None
        };
        let mut all = [NONE; METRICS.len()];
        for (slot, s) in all
            .iter_mut()
            .zip(metrics::summarize_metrics(reports, METRICS)?)
        {
            *slot = s;
        }
        Ok(Self {
            replications: reports.len() as u64,
            metrics: all,
            search_us,
        })
    }

    /// The summary of metric `m` (one of [`METRICS`]).
    fn get(&self, m: &SimMetric) -> MetricSummary {
        METRICS
            .iter()
            .position(|x| x.name == m.name)
            .and_then(|i| self.metrics.get(i).copied())
            .unwrap_or(NONE)
    }
}

/// The quantity a panel plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    Response,
    Wait,
    Numerical,
    Topological,
    Utilization,
    MissRate,
    /// CPU time per job; the deterministic CSV carries attempts per job.
    SearchTime,
}

impl Metric {
    /// The metric of the table the deterministic CSV's `mean` column
    /// holds for this panel.
    fn plotted(self) -> &'static str {
        match self {
            Self::Response => "mean_response",
            Self::Wait => "mean_wait",
            Self::Numerical => "mean_numerical_delay",
            Self::Topological => "mean_topological_delay",
            Self::Utilization => "utilization",
            Self::MissRate => "miss_rate",
            Self::SearchTime => "attempts_per_job",
        }
    }

    /// The CSV column prefix of the metric (`<prefix>_mean`): its figure
    /// key in the table, or `search_us` for the CPU-time CSV.
    pub(crate) fn column(self) -> &'static str {
        match self {
            Self::SearchTime => "search_us",
            m => FIGURE_COLUMNS
                .iter()
                .find(|c| c.metric == m.plotted())
                .map_or("mean", |c| c.key),
        }
    }
}

/// Where a metric of [`METRICS`] stands in the figure CSVs: its column
/// prefix, and the columns of its mean and (if carried) 95% half-width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FigureColumn {
    /// The metric's name in [`METRICS`].
    pub metric: &'static str,
    /// The column prefix (`response` for `response_mean`).
    pub key: &'static str,
    pub mean: &'static str,
    pub ci95: Option<&'static str>,
}

/// A metric's columns `<key>_mean` and `<key>_ci95`.
macro_rules! columns {
    ($metric:literal, $key:literal) => {
        FigureColumn {
            metric: $metric,
            key: $key,
            mean: concat!($key, "_mean"),
            ci95: Some(concat!($key, "_ci95")),
        }
    };
    ($metric:literal, $key:literal, no_ci) => {
        FigureColumn {
            metric: $metric,
            key: $key,
            mean: concat!($key, "_mean"),
            ci95: None,
        }
    };
}

/// The metric columns of every figure CSV, in their order (a layout of the
/// figures' own, older than the command-line tool's metric order).
#[rustfmt::skip]
pub(crate) const FIGURE_COLUMNS: &[FigureColumn] = &[
    columns!("completed", "jobs", no_ci),
    columns!("mean_response", "response"),
    columns!("mean_wait", "wait"),
    columns!("mean_service", "service"),
    columns!("mean_numerical_delay", "numerical_delay"),
    columns!("mean_topological_delay", "topological_delay"),
    columns!("utilization", "utilization"),
    columns!("useful_utilization", "useful_utilization"),
    columns!("miss_rate", "miss_rate"),
    columns!("mean_internal_fragmentation", "internal_fragmentation"),
    columns!("mean_queue_length", "queue_length"),
    columns!("attempts_per_job", "attempts_per_job"),
];

/// One row of a figure's deterministic CSV (after the point's columns):
/// the plotted quantity first, then every metric of [`FIGURE_COLUMNS`],
/// in that order, with its 95% confidence half-width over the
/// replications.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    main: MetricSummary,
    summary: Summary,
}

impl Row {
    pub(crate) fn new(s: &Summary, metric: Metric) -> Self {
        let main = metrics::by_name(metric.plotted()).map_or(NONE, |m| s.get(m));
        Self { main, summary: *s }
    }
}

impl Serialize for Row {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_struct("Row", 2 + 2 * METRICS.len())?;
        row.serialize_field("mean", &self.main.mean)?;
        row.serialize_field("ci95", &self.main.half_width)?;
        for f in FIGURE_COLUMNS {
            let c = metrics::by_name(f.metric).map_or(NONE, |m| self.summary.get(m));
            row.serialize_field(f.mean, &c.mean)?;
            if let Some(ci95) = f.ci95 {
                row.serialize_field(ci95, &c.half_width)?;
            }
        }
        row.end()
    }
}

/// One row of a figure's CPU-time CSV (wall-clock, not deterministic).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CpuRow {
    pub search_us_mean: f64,
    pub search_us_ci95: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn box_job(sides: &[u32]) -> Job {
        Job::new(
            7,
            2.5,
            JobShape::Box {
                sides: Coords::new(sides).unwrap(),
            },
            0.75,
        )
    }

    #[test]
    fn sides_round_up_to_powers_of_two_within_the_machine() {
        let caps = Coords::new(&[8, 8, 8]).unwrap();
        let mut j = box_job(&[1, 3, 5]);
        round_up_pow2(&mut j, &caps);
        assert_eq!(j.shape, box_job(&[1, 4, 8]).shape);
        // The job's draw is kept: same id, arrival and service.
        assert_eq!((j.id, j.arrival, j.service), (7, 2.5, 0.75));
        // Powers of two stay; a side is never rounded past the machine's.
        let caps = Coords::new(&[16, 6, 8]).unwrap();
        let mut j = box_job(&[16, 5, 2]);
        round_up_pow2(&mut j, &caps);
        assert_eq!(j.shape, box_job(&[16, 6, 2]).shape);
        let mut c = box_job(&[1, 1, 1]).with_shape(JobShape::Nodes { count: 5 });
        round_up_pow2(&mut c, &caps);
        assert_eq!(c.shape, JobShape::Nodes { count: 5 });
    }

    #[test]
    fn figure_rows_keep_their_columns_and_carry_each_metric_once() {
        let r = |completed, attempts, wait| partalloc_simkit::Results {
            completed,
            attempts,
            mean_wait: wait,
            mean_service: 1.5,
            ..partalloc_simkit::Results::default()
        };
        let reports: Vec<Report> = [r(4, 6, 2.0), r(4, 10, 4.0)]
            .into_iter()
            .map(|results| Report {
                allocator: "fsl".to_owned(),
                scheduler: "fcfs".to_owned(),
                topology: "mesh:4x4".to_owned(),
                results,
                search_time: partalloc_simkit::SearchTime::default(),
                jobs: Vec::new(),
            })
            .collect();
        let s = Summary::of(&reports).unwrap();
        let mut w = csv::Writer::from_writer(Vec::new());
        w.serialize(Row::new(&s, Metric::SearchTime)).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let (header, values) = text.split_once('\n').unwrap();
        // The columns of the figure CSVs written before the row was derived
        // from the table.
        assert_eq!(
            header,
            "mean,ci95,jobs_mean,response_mean,response_ci95,wait_mean,wait_ci95,\
             service_mean,service_ci95,numerical_delay_mean,numerical_delay_ci95,\
             topological_delay_mean,topological_delay_ci95,utilization_mean,\
             utilization_ci95,useful_utilization_mean,useful_utilization_ci95,\
             miss_rate_mean,miss_rate_ci95,internal_fragmentation_mean,\
             internal_fragmentation_ci95,queue_length_mean,queue_length_ci95,\
             attempts_per_job_mean,attempts_per_job_ci95"
        );
        let cols: Vec<&str> = header.split(',').collect();
        let vals: Vec<&str> = values.trim_end().split(',').collect();
        for f in FIGURE_COLUMNS {
            // Each names a metric of the table, and has one column.
            assert!(metrics::by_name(f.metric).is_some(), "{}", f.metric);
            assert_eq!(
                cols.iter().filter(|&&c| c == f.mean).count(),
                1,
                "{}",
                f.metric
            );
        }
        let at = |c: &str| cols.iter().position(|&x| x == c).map(|i| vals[i]);
        // The plotted quantity of a search-time panel is attempts per job.
        assert_eq!(
            (at("mean"), at("attempts_per_job_mean")),
            (Some("2.0"), Some("2.0"))
        );
        assert_eq!(
            (at("jobs_mean"), at("wait_mean"), at("service_mean")),
            (Some("4.0"), Some("3.0"), Some("1.5"))
        );
        assert_eq!(at("service_ci95"), Some("0.0"));
    }

    #[test]
    fn rounded_jobs_keep_the_unrounded_arrival_rate() {
        let setup = |round_up_pow2| Setup {
            machine: "kary:8^3".parse().unwrap(),
            allocator: strategy("etc").unwrap(),
            scheduler: policy("fcfs").unwrap(),
            shapes: ShapeLaw::Noncubic { max: None },
            round_up_pow2,
            demand: DemandLaw::Exponential { mean: 1.0 },
            load: 0.4,
            stop: StopRule::Jobs(50),
            replications: 1,
            search_time: false,
        };
        let records = |round| {
            let mut exp = setup(round).experiment(1);
            exp.record_jobs = true;
            let prepared = exp.check_on(setup(round).machine).unwrap();
            let mut runs = prepared.run(&|_| (), &|| {}).unwrap();
            assert_eq!(runs.len(), 1);
            let mut jobs = runs.remove(0).0.jobs;
            jobs.sort_by_key(|j| j.id);
            jobs
        };
        let (a, b) = (records(false), records(true));
        // Every one of the 50 jobs ran to completion, each arriving when
        // its unrounded draw did; rounding only grows the requests.
        assert_eq!((a.len(), b.len()), (50, 50));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.id, x.arrival.to_bits()), (y.id, y.arrival.to_bits()));
            assert!(y.requested >= x.requested, "{x:?} {y:?}");
        }
        assert!(a.iter().zip(&b).any(|(x, y)| y.requested > x.requested));
    }

    #[test]
    fn a_horizon_takes_the_jobs_arriving_before_it() {
        let mut setup = Setup {
            machine: "mesh:8x8".parse().unwrap(),
            allocator: strategy("fsl").unwrap(),
            scheduler: policy("fcfs").unwrap(),
            shapes: ShapeLaw::Noncubic { max: None },
            round_up_pow2: false,
            demand: DemandLaw::Exponential { mean: 1.0 },
            load: 0.3,
            stop: StopRule::Horizon(40.0),
            replications: 2,
            search_time: false,
        };
        let horizon = setup.run(3, &|| {}).unwrap();
        assert_eq!(horizon.len(), 2);
        // The same stream cut by count: the jobs arriving before 40.
        let arrived = |r: u64| {
            let spec = match setup.experiment(3).workload {
                WorkloadSource::Drawn(d) => d.spec,
                w => panic!("{w:?}"),
            };
            let w = spec.build(&setup.machine).unwrap();
            let mut rng = partalloc_simkit::replication_rng(3, r);
            w.jobs(&mut rng).take_while(|j| j.arrival < 40.0).count() as u64
        };
        let (n0, n1) = (arrived(0), arrived(1));
        assert!(n0 > 5, "{n0}");
        setup.stop = StopRule::Jobs(n0);
        let counted = setup.run(3, &|| {}).unwrap();
        // A count runs every job taken to completion; a horizon completes
        // at most the jobs arriving before it.
        assert_eq!(counted[0].results.completed, n0);
        assert!(horizon[0].results.completed > 0);
        assert!(horizon[0].results.completed <= n0);
        assert!(horizon[1].results.completed <= n1);
    }
}
