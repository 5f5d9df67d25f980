//! Batsim's `_jobs.csv`: the job file the Batsim simulator writes, which
//! evalys and Batsim's other tools read (its columns are documented in
//! Batsim's `docs/output-jobs.rst`). One row per finished job; the
//! allocated resources are the job's node ids as an interval set (`0-3 8
//! 10-11`, Batsim's hyphenated form).
//!
//! ```
//! use partalloc_report::batsim::jobs_csv;
//! use partalloc_simkit::{SimConfig, Simulation, Stop};
//! use partalloc_allocators::registry::ALLOCATORS;
//! use partalloc_schedulers::registry::POLICIES;
//! use partalloc_topology::Topology;
//! use partalloc_workload::{ChaCha8Rng, CubeDims, Dependence, Exponential, SeedableRng, Workload};
//!
//! let machine: Topology = "hypercube:4".parse()?;
//! let dims = CubeDims::mohapatra_uniform(machine.as_hypercube().unwrap())?;
//! let w = Workload::with_load(0.5, 16, dims, Exponential::new(1.0)?, Dependence::Dependent)?;
//! let mut rng = ChaCha8Rng::seed_from_u64(1);
//! let config = SimConfig { stop: Stop { jobs: Some(20), time: None }, ..SimConfig::default() };
//! let mut records: Vec<partalloc_simkit::JobRecord> = Vec::new();
//! let (buddy, fcfs) = (ALLOCATORS.spec("buddy")?, POLICIES.spec("fcfs")?);
//! Simulation::from_specs(machine.clone(), &buddy, &fcfs, w.jobs(&mut rng), config)?
//!     .run_observed(&mut (), Some(&mut |r| records.push(r)))?;
//! let csv = jobs_csv(&machine, "w0", &records)?;
//! assert!(csv.starts_with("job_id,workload_name,profile,submission_time,"));
//! assert_eq!(csv.lines().count(), 1 + records.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Write as _;

use partalloc_simkit::JobRecord;
use partalloc_topology::Topology;

use crate::ReportError;
use crate::data::{node_runs, ranges_text};

/// The columns, in Batsim's order.
pub const COLUMNS: [&str; 17] = [
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
];

/// The jobs of one run as Batsim's `_jobs.csv`, in job id order.
/// `requested_number_of_resources` is the nodes granted (the resources
/// the job held, as Batsim counts them); `requested_time` is −1 (no
/// walltime is kept in a job record), every job finished successfully,
/// and energy is not modelled (−1). Times are printed in Rust's shortest
/// form that reads back to the same number.
///
/// # Errors
/// [`ReportError::Partition`] if a job's partition is not on `topology`;
/// [`ReportError::NoJobs`] without records.
pub fn jobs_csv(
    topology: &Topology,
    workload: &str,
    records: &[JobRecord],
) -> Result<String, ReportError> {
    if records.is_empty() {
        return Err(ReportError::NoJobs {
            label: workload.to_owned(),
        });
    }
    let mut out = COLUMNS.join(",");
    out.push('\n');
    let mut sorted: Vec<&JobRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.id);
    let workload = csv_field(workload);
    for r in sorted {
        let runs = node_runs(&r.partition, topology).ok_or_else(|| ReportError::Partition {
            label: workload.clone(),
            job: r.id,
            machine: topology.to_string(),
        })?;
        let resources = ranges_text(&runs, "-", " ");
        let execution = r.end - r.start;
        let stretch = if execution > 0.0 {
            r.response / execution
        } else {
            f64::NAN
        };
        let _ = writeln!(
            out,
            "{},{workload},,{},{},-1,1,COMPLETED_SUCCESSFULLY,{},{},{},{},{},{},{resources},-1,",
            r.id,
            r.arrival,
            r.granted,
            r.start,
            execution,
            r.end,
            r.wait,
            r.response,
            if stretch.is_finite() {
                stretch.to_string()
            } else {
                String::new()
            },
        );
    }
    Ok(out)
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc_allocators::Partition;
    use partalloc_topology::GridBox;

    fn record(id: u64, partition: Partition, granted: u64) -> JobRecord {
        JobRecord {
            id,
            arrival: 1.5,
            start: 4.0,
            end: 10.0,
            wait: 2.5,
            response: 8.5,
            numerical_delay: 0.0,
            bounded_slowdown: 1.0,
            requested: granted,
            granted,
            partition,
            dispersal: None,
            domains: None,
            preempted: 0,
        }
    }

    #[test]
    fn a_box_becomes_an_interval_set_of_node_ids() {
        let mesh: Topology = "mesh:8x4".parse().unwrap();
        let b = GridBox::new(&[2, 1], &[3, 2]).unwrap();
        let csv = jobs_csv(
            &mesh,
            "w,0",
            &[
                record(7, Partition::Box(b), 6),
                record(3, Partition::Nodes(vec![0]), 1),
            ],
        )
        .unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        // In job id order; the workload name quoted for its comma.
        assert_eq!(
            lines[1],
            "3,\"w,0\",,1.5,1,-1,1,COMPLETED_SUCCESSFULLY,4,6,10,2.5,8.5,1.4166666666666667,0,-1,"
        );
        assert!(lines[2].starts_with("7,\"w,0\",,1.5,6,"));
        assert!(lines[2].ends_with(",10-12 18-20,-1,"), "{}", lines[2]);
        assert_eq!(lines[0].split(',').count(), COLUMNS.len());
    }
}
