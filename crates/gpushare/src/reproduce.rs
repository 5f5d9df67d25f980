//! The whole FGD evaluation: every workload × policy × seed run on worker
//! threads (each experiment alone on its own stream, so the results are
//! the same for any number of threads) and compared with the artifact's
//! expected CSVs.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::analysis::{Curves, curves};
use crate::error::TraceError;
use crate::experiment::{SEEDS, Workload, run};
use crate::golden::{Expected, Measure, agreement};
use crate::openb::{Cluster, Unplaceable, read_nodes, read_pods};
use crate::policy::Policy;

/// The 17 pod lists the artifact's experiments use
/// (`experiments/run_scripts/generate_run_scripts.py`), with the figure
/// each serves.
pub const WORKLOADS: [&str; 17] = [
    "openb_pod_list_default",
    "openb_pod_list_cpu050",
    "openb_pod_list_cpu100",
    "openb_pod_list_cpu200",
    "openb_pod_list_cpu250",
    "openb_pod_list_gpushare100",
    "openb_pod_list_gpushare40",
    "openb_pod_list_gpushare60",
    "openb_pod_list_gpushare80",
    "openb_pod_list_gpuspec10",
    "openb_pod_list_gpuspec20",
    "openb_pod_list_gpuspec25",
    "openb_pod_list_gpuspec33",
    "openb_pod_list_multigpu20",
    "openb_pod_list_multigpu30",
    "openb_pod_list_multigpu40",
    "openb_pod_list_multigpu50",
];

/// The node list of every experiment.
pub const NODE_FILE: &str = "openb_node_list_gpu_node.csv";

/// The OpenB data: the cluster and the workloads, read from a directory
/// holding `openb_node_list_gpu_node.csv` and `WORKLOAD.csv` files.
#[derive(Debug, Clone)]
pub struct OpenB {
    /// The GPU nodes.
    pub cluster: Cluster,
    /// The workloads read, in the order asked.
    pub workloads: Vec<Workload>,
}

impl OpenB {
    /// Reads the node list and the named workloads from `dir`.
    ///
    /// # Errors
    /// [`TraceError`] of the first file that cannot be read.
    pub fn read(dir: &Path, workloads: &[&str]) -> Result<Self, TraceError> {
        let cluster = read_nodes(&dir.join(NODE_FILE))?;
        let workloads = workloads
            .iter()
            .map(|w| {
                read_pods(&dir.join(format!("{w}.csv")), &cluster, Unplaceable::Keep)
                    .map(|p| Workload::new(w, p))
            })
            .collect::<Result<_, _>>()?;
        Ok(OpenB { cluster, workloads })
    }
}

/// One experiment of the evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Index into [`OpenB::workloads`].
    pub workload: usize,
    /// The policy.
    pub policy: Policy,
    /// The tune seed.
    pub seed: i64,
}

/// Every workload × policy × seed 42–51 of `data`, workload-major.
#[must_use]
pub fn all_jobs(data: &OpenB, policies: &[Policy]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for w in 0..data.workloads.len() {
        for &policy in policies {
            for seed in SEEDS {
                jobs.push(Job {
                    workload: w,
                    policy,
                    seed,
                });
            }
        }
    }
    jobs
}

/// Runs `jobs` on `threads` worker threads (at least one); the curves come
/// back in the jobs' order and do not depend on `threads`.
#[must_use]
pub fn run_jobs(data: &OpenB, jobs: &[Job], threads: usize) -> Vec<Curves> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Curves>>> = Mutex::new(vec![None; jobs.len()]);
    let gpus = data.cluster.gpus();
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let steps = run(
                        &data.cluster,
                        &data.workloads[job.workload],
                        job.policy,
                        job.seed,
                    );
                    let c = curves(&steps, gpus);
                    if let Ok(mut o) = out.lock() {
                        o[i] = Some(c);
                    }
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            c.unwrap_or_else(|| Curves {
                alloc: Vec::new(),
                frag: Vec::new(),
                frag_ratio: Vec::new(),
            })
        })
        .collect()
}

/// Agreement of reproduced curves with the expected ones, per policy and
/// measure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Curves compared.
    pub curves: usize,
    /// Curves equal at all 131 points.
    pub curves_equal: usize,
    /// Points compared (131 per curve).
    pub points: usize,
    /// Points equal.
    pub points_equal: usize,
}

/// One row of the comparison: a policy, a measure, and its tally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// The policy.
    pub policy: Policy,
    /// The measure.
    pub measure: Measure,
    /// How much agrees.
    pub tally: Tally,
    /// The first differing curve and point, as `workload policy seed @x`.
    pub first_difference: Option<String>,
}

/// Compares reproduced curves (in `jobs` order) with the expected CSVs,
/// one row per policy and measure in `jobs`.
#[must_use]
pub fn compare(
    data: &OpenB,
    jobs: &[Job],
    got: &[Curves],
    expected: &[(Measure, Expected)],
) -> Vec<Comparison> {
    let mut rows: Vec<Comparison> = Vec::new();
    for (job, c) in jobs.iter().zip(got) {
        let wname = &data.workloads[job.workload].name;
        for (m, e) in expected {
            let mine = match m {
                Measure::Alloc => &c.alloc,
                Measure::Frag => &c.frag,
                Measure::FragRatio => &c.frag_ratio,
            };
            let idx = match rows
                .iter()
                .position(|r| r.policy == job.policy && r.measure == *m)
            {
                Some(i) => i,
                None => {
                    rows.push(Comparison {
                        policy: job.policy,
                        measure: *m,
                        tally: Tally::default(),
                        first_difference: None,
                    });
                    rows.len() - 1
                }
            };
            let row = &mut rows[idx];
            row.tally.curves += 1;
            row.tally.points += crate::analysis::PERCENTS;
            let (same, first) = match e.curve(wname, &job.policy.dir_name(), job.seed) {
                Some(want) => agreement(mine, want),
                None => (0, Some(0)),
            };
            row.tally.points_equal += same;
            if same == crate::analysis::PERCENTS {
                row.tally.curves_equal += 1;
            } else if row.first_difference.is_none() {
                row.first_difference = Some(format!(
                    "{wname} {} {} @{}",
                    job.policy,
                    job.seed,
                    first.unwrap_or(0)
                ));
            }
        }
    }
    rows
}

/// Reads the three expected CSVs from `dir`.
///
/// # Errors
/// [`TraceError`] of the first file that cannot be read.
pub fn read_expected(dir: &Path) -> Result<Vec<(Measure, Expected)>, TraceError> {
    Measure::ALL
        .iter()
        .map(|&m| Expected::read(&dir.join(m.file_name())).map(|e| (m, e)))
        .collect()
}
