//! What `show` adds for a pod at a moment: the largest placeable
//! catalogue shape and the stranded chips (a run's time averages are the
//! `pod` measure of `partalloc_simkit::measure`).

use partalloc::allocators::PlacementRules;
use partalloc::allocators::pod::{largest_placeable, stranded_chips_under};
use partalloc::topology::NodeSet;
use partalloc::topology::Topology;
use partalloc::topology::pod::Wiring;

/// For `show` on a pod: "; largest placeable slice 4x4x8, 0 stranded chips
/// (static rules)" for the chips `owner` marks busy, judged by the rules
/// the allocator reported (static if none).
pub(crate) fn state_line(
    topology: &Topology,
    rules: Option<PlacementRules>,
    owner: &[Option<usize>],
) -> Option<String> {
    let pod = topology.as_pod()?;
    let mut busy = NodeSet::new(owner.len());
    for (c, o) in owner.iter().enumerate() {
        if o.is_some() {
            let _ = busy.insert(u32::try_from(c).ok()?);
        }
    }
    let wiring = match rules {
        Some(PlacementRules::Pod(w)) => w,
        _ => Wiring::Static,
    };
    let largest = largest_placeable(pod, &busy, wiring).map_or_else(
        || "none".to_owned(),
        |s| {
            s.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x")
        },
    );
    Some(format!(
        "; largest placeable slice {largest}, {} stranded chips ({wiring} rules)",
        stranded_chips_under(pod, &busy, wiring)
    ))
}

#[cfg(test)]
mod tests {
    use partalloc::allocators::registry::ALLOCATORS;
    use partalloc::schedulers::registry::POLICIES;
    use partalloc::simkit::observe::GrantLog;
    use partalloc::simkit::pod::pod_log_measures;
    use partalloc::simkit::{Replications, SimConfig, Stop};
    use partalloc::workload::{Arrivals, DemandLaw, Dependence, ShapeLaw, WorkloadSpec};

    use super::*;

    /// Seed 0's log keeps at most the bound, its completions are those
    /// of the run (the first measured ones, in completion order), and the
    /// rules are the strategy's own.
    #[test]
    fn the_log_keeps_at_most_the_bound_of_the_run_s_own_completions() {
        let topology: Topology = "pod:tpu-v5e:8x8".parse().unwrap();
        let w = WorkloadSpec {
            arrivals: Arrivals::Load(0.8),
            shapes: ShapeLaw::Catalogue { weights: None },
            demand: DemandLaw::Exponential { mean: 1.0 },
            dependence: Dependence::Dependent,
            allow_saturation: false,
        }
        .build(&topology)
        .unwrap();
        let run = |strategy: &str, cap: usize| {
            let config = SimConfig {
                stop: Stop {
                    jobs: Some(300),
                    time: None,
                },
                warmup: 20,
                record_jobs: true,
                measure_search_time: false,
                ..SimConfig::default()
            };
            let (allocator, fcfs) = (
                ALLOCATORS.spec(strategy).unwrap(),
                POLICIES.spec("fcfs").unwrap(),
            );
            let mut runs = Replications::new(3, 1)
                .unwrap()
                .simulate(
                    (&topology, &allocator, &fcfs),
                    &w,
                    config,
                    &|_| GrantLog::new(cap),
                    &|| {},
                )
                .unwrap();
            runs.remove(0)
        };
        let (report, all) = run("pod-first-fit", 1000);
        assert_eq!(all.completed().len(), 300);
        let ends = |log: &GrantLog| {
            log.completed()
                .iter()
                .map(|h| (h.start, h.end))
                .collect::<Vec<_>>()
        };
        let recorded: Vec<(f64, f64)> = report.jobs.iter().map(|j| (j.start, j.end)).collect();
        assert_eq!(ends(&all), recorded);
        // The jobs running at the k-th completion (all completed later in
        // the run), by their starts.
        let running_at = |k: usize| {
            let last = recorded[k - 1].1;
            let mut v: Vec<f64> = recorded
                .iter()
                .filter(|&&(start, end)| start < last && last < end)
                .map(|&(start, _)| start)
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        // A bound reached while jobs run: the log keeps them, open.
        let cap = (120..300).find(|&k| !running_at(k).is_empty()).unwrap();
        let (_, capped) = run("pod-first-fit", cap);
        assert_eq!(ends(&capped), recorded[..cap]);
        let mut open: Vec<f64> = capped.still_running().iter().map(|h| h.start).collect();
        open.sort_by(f64::total_cmp);
        assert_eq!(open, running_at(cap));
        assert!(
            capped
                .still_running()
                .iter()
                .all(|h| h.end == f64::INFINITY)
        );
        assert!(pod_log_measures(&topology, &capped, 200).is_some());
        assert_eq!(capped.wiring().to_string(), "static");
        let (_, reconfigurable) = run("pod-reconfigurable", 1000);
        assert_eq!(reconfigurable.wiring().to_string(), "reconfigurable");
    }
}
