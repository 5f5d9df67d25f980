//! One point of a simulated figure: its setup, its replications and the
//! summary written to the figure's CSV.

use partalloc_simkit::{ConfidenceInterval, Report, SimConfig, Simulation, Stop, replication_rng};
use partalloc_topology::{Coords, Topology};
use partalloc_workload::{
    Arrivals, CubeDimLaw, DemandDist, DemandLaw, Dependence, Job, JobShape, ShapeDist, ShapeLaw,
    Workload, WorkloadSpec,
};
use serde::Serialize;

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
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setup {
    pub machine: Topology,
    pub allocator: String,
    pub scheduler: String,
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
            allocator: self.allocator.clone(),
            scheduler: self.scheduler.clone(),
            workload: self.workload_name(),
            offered_load: self.load,
            stop: self.stop_name(),
            replications: self.replications,
            seed,
        }
    }

    fn workload(&self) -> Result<Workload<ShapeDist, DemandDist>, FigError> {
        let spec = WorkloadSpec {
            arrivals: Arrivals::Load(self.load),
            shapes: self.shapes.clone(),
            demand: self.demand,
            dependence: Dependence::Dependent,
            allow_saturation: true,
        };
        Ok(spec.build(&self.machine)?)
    }

    /// Runs replication `rep` under `seed`: the jobs come from stream `rep`
    /// of the master seed, so every strategy and load sees the same job
    /// sizes and service draws (common random numbers).
    pub(crate) fn replicate(&self, seed: u64, rep: u64) -> Result<Report, FigError> {
        let w = self.workload()?;
        let round = self.round_up_pow2;
        let caps = match self.machine {
            Topology::Grid(g) => Some(*g.sides()),
            _ => None,
        };
        let shape = move |mut j: Job| {
            if round && let Some(caps) = &caps {
                round_up_pow2(&mut j, caps);
            }
            j
        };
        let mut rng = replication_rng(seed, rep);
        let mut cfg = SimConfig {
            stop: Stop::default(),
            warmup: 0,
            record_jobs: false,
            measure_search_time: self.search_time,
        };
        let report = match self.stop {
            StopRule::Jobs(n) => {
                let jobs = w
                    .jobs(&mut rng)
                    .map(shape)
                    .take(usize::try_from(n).unwrap_or(usize::MAX));
                Simulation::by_name(
                    self.machine.clone(),
                    &self.allocator,
                    &self.scheduler,
                    jobs,
                    cfg,
                )?
                .run()?
            }
            StopRule::Horizon(t) => {
                cfg.stop.time = Some(t);
                let jobs = w
                    .jobs(&mut rng)
                    .map(shape)
                    .take_while(move |j| j.arrival < t);
                Simulation::by_name(
                    self.machine.clone(),
                    &self.allocator,
                    &self.scheduler,
                    jobs,
                    cfg,
                )?
                .run()?
            }
        };
        Ok(report)
    }
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

/// Mean and 95% half-width of one quantity over the replications.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ci {
    pub mean: f64,
    pub half: Option<f64>,
}

fn ci(values: &[f64]) -> Result<Ci, FigError> {
    let c = ConfidenceInterval::from_samples(values, 0.95)?;
    Ok(Ci {
        mean: c.mean,
        half: c.half_width,
    })
}

/// What a point measured, summarized over its replications.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub replications: u64,
    pub completed: Ci,
    pub response: Ci,
    pub wait: Ci,
    pub service: Ci,
    pub numerical: Ci,
    pub topological: Ci,
    pub utilization: Ci,
    pub useful_utilization: Ci,
    pub miss_rate: Ci,
    pub fragmentation: Ci,
    pub queue_length: Ci,
    pub attempts_per_job: Ci,
    /// Microseconds in allocate + release per job (not deterministic).
    pub search_us: Option<Ci>,
}

impl Summary {
    pub(crate) fn of(reports: &[Report]) -> Result<Self, FigError> {
        let col = |f: &dyn Fn(&Report) -> f64| -> Result<Ci, FigError> {
            let v: Vec<f64> = reports.iter().map(f).collect();
            ci(&v)
        };
        let search_us = if reports.iter().all(|r| r.search_time.measured) {
            Some(col(&|r| r.search_time.mean_seconds_per_job * 1e6)?)
        } else {
            None
        };
        Ok(Self {
            replications: reports.len() as u64,
            completed: col(&|r| r.results.completed as f64)?,
            response: col(&|r| r.results.mean_response)?,
            wait: col(&|r| r.results.mean_wait)?,
            service: col(&|r| r.results.mean_service)?,
            numerical: col(&|r| r.results.mean_numerical_delay)?,
            topological: col(&|r| r.results.mean_topological_delay)?,
            utilization: col(&|r| r.results.utilization)?,
            useful_utilization: col(&|r| r.results.useful_utilization)?,
            miss_rate: col(&|r| r.results.miss_rate)?,
            fragmentation: col(&|r| r.results.mean_internal_fragmentation)?,
            queue_length: col(&|r| r.results.mean_queue_length)?,
            attempts_per_job: col(&|r| {
                if r.results.completed == 0 {
                    0.0
                } else {
                    r.results.attempts as f64 / r.results.completed as f64
                }
            })?,
            search_us,
        })
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
    /// The CSV column prefix of the metric (`<prefix>_mean`).
    pub(crate) fn column(self) -> &'static str {
        match self {
            Self::Response => "response",
            Self::Wait => "wait",
            Self::Numerical => "numerical_delay",
            Self::Topological => "topological_delay",
            Self::Utilization => "utilization",
            Self::MissRate => "miss_rate",
            Self::SearchTime => "search_us",
        }
    }
}

/// One row of a figure's deterministic CSV (after the point's columns):
/// the plotted quantity first, then every other measured quantity with its
/// 95% confidence half-width over the replications.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub mean: f64,
    pub ci95: Option<f64>,
    pub jobs_mean: f64,
    pub response_mean: f64,
    pub response_ci95: Option<f64>,
    pub wait_mean: f64,
    pub wait_ci95: Option<f64>,
    pub service_mean: f64,
    pub service_ci95: Option<f64>,
    pub numerical_delay_mean: f64,
    pub numerical_delay_ci95: Option<f64>,
    pub topological_delay_mean: f64,
    pub topological_delay_ci95: Option<f64>,
    pub utilization_mean: f64,
    pub utilization_ci95: Option<f64>,
    pub useful_utilization_mean: f64,
    pub useful_utilization_ci95: Option<f64>,
    pub miss_rate_mean: f64,
    pub miss_rate_ci95: Option<f64>,
    pub internal_fragmentation_mean: f64,
    pub internal_fragmentation_ci95: Option<f64>,
    pub queue_length_mean: f64,
    pub queue_length_ci95: Option<f64>,
    pub attempts_per_job_mean: f64,
    pub attempts_per_job_ci95: Option<f64>,
}

impl Row {
    pub(crate) fn new(s: &Summary, metric: Metric) -> Self {
        let main = match metric {
            Metric::Response => s.response,
            Metric::Wait => s.wait,
            Metric::Numerical => s.numerical,
            Metric::Topological => s.topological,
            Metric::Utilization => s.utilization,
            Metric::MissRate => s.miss_rate,
            Metric::SearchTime => s.attempts_per_job,
        };
        Self {
            mean: main.mean,
            ci95: main.half,
            jobs_mean: s.completed.mean,
            response_mean: s.response.mean,
            response_ci95: s.response.half,
            wait_mean: s.wait.mean,
            wait_ci95: s.wait.half,
            service_mean: s.service.mean,
            service_ci95: s.service.half,
            numerical_delay_mean: s.numerical.mean,
            numerical_delay_ci95: s.numerical.half,
            topological_delay_mean: s.topological.mean,
            topological_delay_ci95: s.topological.half,
            utilization_mean: s.utilization.mean,
            utilization_ci95: s.utilization.half,
            useful_utilization_mean: s.useful_utilization.mean,
            useful_utilization_ci95: s.useful_utilization.half,
            miss_rate_mean: s.miss_rate.mean,
            miss_rate_ci95: s.miss_rate.half,
            internal_fragmentation_mean: s.fragmentation.mean,
            internal_fragmentation_ci95: s.fragmentation.half,
            queue_length_mean: s.queue_length.mean,
            queue_length_ci95: s.queue_length.half,
            attempts_per_job_mean: s.attempts_per_job.mean,
            attempts_per_job_ci95: s.attempts_per_job.half,
        }
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
    fn rounded_jobs_keep_the_unrounded_arrival_rate() {
        let setup = |round_up_pow2| Setup {
            machine: "kary:8^3".parse().unwrap(),
            allocator: "etc".to_owned(),
            scheduler: "fcfs".to_owned(),
            shapes: ShapeLaw::Noncubic { max: None },
            round_up_pow2,
            demand: DemandLaw::Exponential { mean: 1.0 },
            load: 0.4,
            stop: StopRule::Jobs(50),
            replications: 1,
            search_time: false,
        };
        let a: Vec<Job> = setup(false)
            .workload()
            .unwrap()
            .jobs(&mut replication_rng(1, 0))
            .take(50)
            .collect();
        let b: Vec<Job> = setup(true)
            .workload()
            .unwrap()
            .jobs(&mut replication_rng(1, 0))
            .take(50)
            .collect();
        assert_eq!(a, b);
    }
}
