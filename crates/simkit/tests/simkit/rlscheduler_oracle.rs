//! Replays the goldens RLScheduler's simulator wrote
//! (`scripts/rlscheduler-oracle/oracle.py`, `data/rlscheduler-oracle/`):
//! every heuristic × backfilling × sequence must give the simulator's mean
//! bounded slowdown to the bit and every job's wait exactly.
#![expect(
    clippy::unwrap_used,
    reason = "the helpers reading the goldens sit outside #[test] functions"
)]

use std::path::{Path, PathBuf};

use partalloc_simkit::SlowdownBound;
use partalloc_simkit::benchmark::{self, BenchTrace};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

struct Row {
    policy: String,
    backfill: bool,
    start: usize,
    first_job: u64,
    bsld: f64,
    waits: Vec<f64>,
}

fn rows(golden: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(golden).unwrap();
    assert!(
        text.starts_with("# rlscheduler-oracle 1\n"),
        "{}",
        golden.display()
    );
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("policy,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 7, "{l}");
            Row {
                policy: f[0].to_owned(),
                backfill: f[1].parse().unwrap(),
                start: f[3].parse().unwrap(),
                first_job: f[4].parse().unwrap(),
                bsld: f[5].parse().unwrap(),
                waits: f[6].split(' ').map(|w| w.parse().unwrap()).collect(),
            }
        })
        .collect()
}

/// Replays every row; `cut` says the trace holds only the sequences' jobs
/// (then a sequence is found by its first job, not by its index).
fn replay(golden: &str, trace: &Path, cut: bool) -> usize {
    let trace = BenchTrace::read(trace).unwrap();
    let rows = rows(&data().join("rlscheduler-oracle").join(golden));
    let mut wrong = Vec::new();
    for r in &rows {
        let index = if cut {
            trace.index_of(r.first_job).unwrap()
        } else {
            r.start
        };
        let jobs = trace.sequence(index, r.waits.len()).unwrap();
        assert_eq!(jobs[0].id, r.first_job, "sequence from {}", r.start);
        let spec = benchmark::heuristic(&r.policy, r.backfill).unwrap();
        let run =
            benchmark::run_sequence(jobs, trace.nodes(), &spec, SlowdownBound::default(), index)
                .unwrap();
        if run.bounded_slowdown.to_bits() != r.bsld.to_bits() || run.waits != r.waits {
            let waits = run
                .waits
                .iter()
                .zip(&r.waits)
                .filter(|(a, b)| a != b)
                .count();
            wrong.push(format!(
                "{} backfill={} start {}: bsld {} vs {} ({} waits differ)",
                r.policy, r.backfill, r.start, run.bounded_slowdown, r.bsld, waits
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} rows differ:\n{}",
        wrong.len(),
        rows.len(),
        wrong.join("\n")
    );
    rows.len()
}

#[test]
fn lublin_256_agrees_with_rlscheduler_everywhere() {
    let trace = data().join("rlscheduler-oracle/lublin_256.cut.swf");
    assert_eq!(replay("lublin_256.golden.csv", &trace, true), 100);
}

/// Submit times in this log are start times, so few jobs wait; it checks
/// the reading rules (173 jobs of run time 0 dropped) and simultaneous
/// arrivals.
#[test]
fn nasa_ipsc_agrees_with_rlscheduler_everywhere() {
    let trace = data().join("traces/NASA-iPSC-1993-3.1-cln.swf");
    assert_eq!(replay("nasa-ipsc.golden.csv", &trace, false), 100);
}

#[test]
fn lublin_256_new2_agrees_with_rlscheduler_everywhere() {
    let trace = data().join("rlscheduler-oracle/lublin_256_new2.cut.swf");
    assert_eq!(replay("lublin_256_new2.golden.csv", &trace, true), 100);
}

/// The goldens tell policies apart: Tang's WFP3 instead of the simulator's
/// computation, or EASY instead of the simulator's backfilling, miss them.
#[test]
fn other_policies_miss_the_goldens() {
    let trace = BenchTrace::read(&data().join("rlscheduler-oracle/lublin_256.cut.swf")).unwrap();
    let rows = rows(&data().join("rlscheduler-oracle/lublin_256.golden.csv"));
    let differ = |policy: &str, backfill: bool, spec: &str| {
        let spec = partalloc_schedulers::registry::POLICIES.spec(spec).unwrap();
        rows.iter()
            .filter(|r| r.policy == policy && r.backfill == backfill)
            .filter(|r| {
                let index = trace.index_of(r.first_job).unwrap();
                let jobs = trace.sequence(index, r.waits.len()).unwrap();
                let run = benchmark::run_sequence(
                    jobs,
                    trace.nodes(),
                    &spec,
                    SlowdownBound::default(),
                    index,
                )
                .unwrap();
                run.bounded_slowdown != r.bsld
            })
            .count()
    };
    assert_eq!(
        differ("wfp3-rlscheduler", false, "rlscheduler[order=wfp3]"),
        10
    );
    assert!(differ("sjf", true, "easy-backfilling[order=sjf]") >= 5);
    // …while the simulator's own procedure matches all ten.
    assert_eq!(
        differ("sjf", true, "rlscheduler[order=sjf,backfill=true]"),
        0
    );
}
