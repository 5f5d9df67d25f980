//! The papers' claims, asserted with the verdicts `docs/reproduction.md`
//! reports, so that a change that flips one fails `cargo test`.
//!
//! Each figure runs through [`reproduce`] (the code behind `cargo xtask
//! reproduce`) with fixed seeds, and its claims are judged by the figure's
//! own verdict code on the tables it wrote, so this test and the published
//! tables cannot disagree. A claim the document reports as not confirmed is
//! asserted as not confirmed.
//!
//! Scales: Kang Figs. 9 and 10 run at the documented scale (20 seeds × 1000
//! jobs, the paper's), so the README's headline numbers are pinned too;
//! Kang Fig. 11 runs 5 seeds × 1000 jobs; Mohapatra runs 5 replications of T = 10000 instead of 20, Kim–Yoon the
//! `--quick` sizes and loads with 5 × 3000 requests. At those scales only
//! claims whose verdict is far from its threshold are asserted; each
//! failure message prints what was measured. Claims left out because their
//! verdict sits at a threshold at the reduced scale: Mohapatra Fig. 2(b)
//! "Scan below FCFS" (0.0308 against 0.0300 at load 0.2) and Fig. 5(a)
//! "lazy's delay does not increase considerably"; Kim–Yoon's improvement
//! ranges; the CPU-time Figs. 14 and 17 (wall clock, not deterministic).
//! The recognition order on the NASA iPSC/860 replay (`docs/replay.md`) is
//! checked on the whole trace.

use std::collections::HashMap;
use std::sync::Mutex;

use super::sim::Metric;
use super::{
    Claim, Ctx, DEFAULT_SEED, FIGURES, FigureKind, Lookup, RunArgs, Scale, Table, Verdict,
    reproduce,
};

/// A figure's panels after a run: (panel id, its table, its judged claims).
struct Run {
    _out: tempfile::TempDir,
    panels: Vec<(String, Table, Vec<Claim>)>,
}

impl Run {
    fn panel(&self, id: &str) -> (&Table, &[Claim]) {
        let (_, t, c) = self
            .panels
            .iter()
            .find(|p| p.0 == id)
            .unwrap_or_else(|| panic!("panel {id} was not produced"));
        (t, c)
    }

    fn table(&self, id: &str) -> &Table {
        self.panel(id).0
    }

    /// Asserts the verdict of the claim of panel `id` whose text starts
    /// with `paper`.
    fn expect(&self, id: &str, paper: &str, want: Verdict) {
        let (_, claims) = self.panel(id);
        let found: Vec<&Claim> = claims
            .iter()
            .filter(|c| c.paper.starts_with(paper))
            .collect();
        let [claim] = found[..] else {
            panic!(
                "{id}: {} claims start with {paper:?}: {claims:#?}",
                found.len()
            );
        };
        assert_eq!(
            claim.verdict, want,
            "{id}: \"{}\" is {} (docs/reproduction.md: {}); measured: {}",
            claim.paper, claim.verdict, want, claim.measured
        );
        eprintln!(
            "{id}: {} — {} ({})",
            claim.paper, claim.verdict, claim.measured
        );
    }
}

/// Runs figure `id` into a temporary directory and judges its claims.
fn run(id: &str, scale: Scale, seeds: Option<u64>, jobs: Option<u64>) -> Run {
    let out = tempfile::tempdir().unwrap();
    let args = RunArgs {
        quick: scale == Scale::Quick,
        paper_scale: scale == Scale::Paper,
        seeds,
        jobs,
        horizon: None,
        threads: 0,
        out: out.path().to_path_buf(),
        seed: DEFAULT_SEED,
        fresh: false,
    };
    reproduce(id, &args).unwrap();
    let ctx = Ctx {
        args,
        scale,
        memo: Mutex::new(HashMap::new()),
    };
    let figure = FIGURES.iter().find(|f| f.id == id).unwrap();
    let FigureKind::Panels(build) = figure.kind else {
        panic!("{id} has no simulated panels");
    };
    let lookup = Lookup { out: out.path() };
    let panels = build(&ctx)
        .unwrap()
        .into_iter()
        .map(|p| {
            let csv = out.path().join(format!("{}.csv", p.id));
            let cpu = out.path().join(format!("{}-cputime.csv", p.id));
            let timed = p.metric == Metric::SearchTime;
            let table = Table::read(&csv, timed.then_some(cpu.as_path())).unwrap();
            let claims = (p.claims)(&table, &lookup);
            (p.id.clone(), table, claims)
        })
        .collect();
    Run { _out: out, panels }
}

/// The smallest relative margin by which `low` stays below `high` in
/// `col` at the offered loads `xs`: min over x of 1 − low/high.
fn below_margin(t: &Table, low: &str, high: &str, xs: &[f64], col: &str) -> f64 {
    let m = xs
        .iter()
        .map(|&x| {
            let l = t.mean(low, x, col).unwrap();
            let h = t.mean(high, x, col).unwrap();
            1.0 - l / h
        })
        .fold(f64::INFINITY, f64::min);
    eprintln!(
        "{low} below {high} in {col} at {xs:?}: by at least {:.1}%",
        100.0 * m
    );
    m
}

#[test]
fn kang_fig9_slice_strategies_against_isomorphic() {
    use Verdict::{Confirmed, NotConfirmed, Partly};
    let r = run("kang-fig9", Scale::Default, None, None);
    let id = "kang-fig9";
    r.expect(id, "EB and EGC show similar performance", Confirmed);
    r.expect(id, "EB and EGC degrade significantly", Confirmed);
    r.expect(id, "k-ary Partner performs better", NotConfirmed);
    r.expect(id, "Isomorphic outperforms EB, EGC", Confirmed);
    r.expect(id, "ETC performs comparably", Partly);
    // "Far below": at least half the best slice strategy's response from
    // load 0.4 on.
    let t = r.table(id);
    for slice in ["EB", "EGC", "k-ary Partner"] {
        let m = below_margin(
            t,
            "Isomorphic",
            slice,
            &[0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
            "response",
        );
        assert!(
            m > 0.5,
            "Isomorphic only {m:.2} below {slice} from load 0.4"
        );
    }
}

#[test]
fn kang_fig10_isomorphic_scales_and_etc_saturates() {
    use Verdict::{Confirmed, Partly};
    let r = run("kang-fig10", Scale::Default, None, None);
    r.expect(
        "kang-fig10a",
        "on the small 4-ary 3-cube ETC performs comparably",
        Partly,
    );
    r.expect(
        "kang-fig10b",
        "ETC's response time quickly saturates",
        Confirmed,
    );
    r.expect(
        "kang-fig10c",
        "on the 16-ary 3-cube ETC saturates at about 50%",
        Confirmed,
    );
    r.expect(
        "kang-fig10c",
        "at 50% utilization Isomorphic improves",
        Partly,
    );
    r.expect("kang-fig10c", "Isomorphic is scalable", Partly);
    // Isomorphic below ETC at loads 0.3–0.6 on the 8- and 16-ary cubes.
    for (id, at_least) in [("kang-fig10b", 0.05), ("kang-fig10c", 0.15)] {
        let m = below_margin(
            r.table(id),
            "Isomorphic",
            "ETC",
            &[0.3, 0.4, 0.5, 0.6],
            "response",
        );
        assert!(
            m > at_least,
            "{id}: Isomorphic only {m:.3} below ETC at loads 0.3–0.6"
        );
    }
    // ETC's sustained utilization falls with k faster than Isomorphic's.
    let s = |id: &str, series: &str| super::kang::sustained(r.table(id), series).unwrap();
    let etc_fall = s("kang-fig10a", "ETC") - s("kang-fig10c", "ETC");
    let iso_fall = s("kang-fig10a", "Isomorphic") - s("kang-fig10c", "Isomorphic");
    eprintln!(
        "sustained utilization 4-ary → 16-ary falls by {etc_fall:.3} (ETC), {iso_fall:.3} (Isomorphic)"
    );
    assert!(
        etc_fall > iso_fall + 0.03,
        "sustained utilization 4-ary → 16-ary falls by {etc_fall:.3} for ETC, {iso_fall:.3} for Isomorphic"
    );
    // The README's headline numbers: ETC sustains 44% on the 16-ary cube,
    // and Isomorphic's response at offered load 0.5 is 64% below ETC's.
    let etc16 = s("kang-fig10c", "ETC");
    assert_eq!(
        format!("{:.0}", 100.0 * etc16),
        "44",
        "ETC sustains {etc16}"
    );
    let c = r.table("kang-fig10c");
    let red = 1.0
        - c.mean("Isomorphic", 0.5, "response").unwrap() / c.mean("ETC", 0.5, "response").unwrap();
    assert_eq!(
        format!("{:.0}", 100.0 * red),
        "64",
        "reduction at 0.5: {red}"
    );
}

/// §5.3 under its three readings (docs/reproduction.md, "Summary of
/// §5.3's claims by reading"): Isomorphic behind ETC granting the exact box
/// at every load, ahead of ETC granting power-of-two boxes at every load,
/// and the split variant ahead of exact-box ETC on the 16-ary cube but not
/// on the 4-ary one. 5 seeds × 1000 jobs; the split variant on the 8-ary
/// cube is left out (its lead at the lowest loads is within noise: 6 of 7
/// loads with 3 seeds × 500 jobs).
#[test]
fn kang_fig11_noncubic_readings() {
    use Verdict::{Confirmed, NotConfirmed};
    let r = run("kang-fig11", Scale::Default, Some(5), None);
    let better = |lines: &str| format!("Isomorphic performs better than ETC [lines: {lines}");
    for id in ["kang-fig11a", "kang-fig11b", "kang-fig11c"] {
        r.expect(id, &better("Isomorphic vs ETC]"), NotConfirmed);
        r.expect(
            id,
            &better("Isomorphic vs ETC (sides rounded up to 2^⌈log2 l⌉)]"),
            Confirmed,
        );
    }
    r.expect(
        "kang-fig11a",
        &better("Isomorphic (split) vs ETC]"),
        NotConfirmed,
    );
    r.expect(
        "kang-fig11c",
        &better("Isomorphic (split) vs ETC]"),
        Confirmed,
    );
}

#[test]
fn mohapatra_policy_orderings() {
    use Verdict::{Confirmed, NotConfirmed, Partly};
    let scan = "Scan has a lower queueing delay than FCFS";
    let lazy_fcfs = "Lazy has a lower queueing delay than FCFS";
    let lazy_scan = "Lazy has a lower queueing delay than Scan";
    let r = run("mohapatra-fig2", Scale::Default, Some(5), None);
    r.expect("mohapatra-fig2a", scan, Confirmed);
    r.expect("mohapatra-fig2a", lazy_fcfs, NotConfirmed);
    r.expect("mohapatra-fig2a", lazy_scan, NotConfirmed);
    r.expect(
        "mohapatra-fig2a",
        "static partitioning performs very well",
        Confirmed,
    );
    r.expect("mohapatra-fig2b", lazy_fcfs, NotConfirmed);
    r.expect("mohapatra-fig2b", lazy_scan, NotConfirmed);
    r.expect(
        "mohapatra-fig2b",
        "static partitioning deteriorates",
        Confirmed,
    );
    let r = run("mohapatra-fig3", Scale::Default, Some(5), None);
    for id in ["mohapatra-fig3a", "mohapatra-fig3b"] {
        r.expect(id, scan, Confirmed);
        r.expect(id, lazy_scan, Partly);
        r.expect(id, "Scan deteriorates under hyper-exponential", Confirmed);
    }
    r.expect("mohapatra-fig3a", lazy_fcfs, Confirmed);
    r.expect("mohapatra-fig3b", lazy_fcfs, Partly);
    let r = run("mohapatra-fig4", Scale::Default, Some(5), None);
    let stat = "the utilization of static partitioning is very low";
    r.expect("mohapatra-fig4a", stat, NotConfirmed);
    r.expect("mohapatra-fig4b", stat, Partly);
    for id in ["mohapatra-fig4a", "mohapatra-fig4b"] {
        r.expect(
            id,
            "at higher loads lazy scheduling gives better",
            Confirmed,
        );
        r.expect(
            id,
            "at low load the utilization of FCFS, Scan and lazy",
            Confirmed,
        );
    }
    let r = run("mohapatra-fig5", Scale::Default, Some(5), None);
    for id in ["mohapatra-fig5a", "mohapatra-fig5b"] {
        r.expect(id, "the delay with FCFS is very high", Confirmed);
    }
    r.expect(
        "mohapatra-fig5b",
        "lazy's delay does not increase",
        NotConfirmed,
    );
    r.expect(
        "mohapatra-fig5b",
        "under heavy load Scan's delay increases",
        Confirmed,
    );
}

#[test]
fn kim_yoon_fsl_waits_least_and_misses_least() {
    let lowest_wait = "FSL has the lowest mean waiting delay";
    let lowest_miss = "FSL has the lowest allocation miss";
    for (fig, claim, col) in [
        ("kimyoon-fig10", lowest_wait, "wait"),
        ("kimyoon-fig11", lowest_wait, "wait"),
        ("kimyoon-fig12", lowest_miss, "miss_rate"),
        ("kimyoon-fig13", lowest_miss, "miss_rate"),
    ] {
        let r = run(fig, Scale::Quick, Some(5), Some(3000));
        for panel in ["a", "b"] {
            let id = format!("{fig}{panel}");
            r.expect(&id, claim, Verdict::Confirmed);
            let t = r.table(&id);
            for other in ["Busy-List", "AS"] {
                let m = below_margin(t, "FSL", other, &t.xs(), col);
                assert!(m > 0.0, "{id}: FSL's {col} not below {other}'s ({m:.3})");
            }
        }
    }
}

/// `docs/replay.md`: on the NASA Ames iPSC/860 log replayed on its own
/// 7-cube with FCFS, the mean wait follows the recognition order —
/// buddy ≥ partner ≥ multiple Gray code ≥ non-contiguous paging.
#[test]
fn nasa_replay_follows_the_recognition_order() {
    use partalloc_allocators::registry::ALLOCATORS;
    use partalloc_schedulers::registry::POLICIES;
    use partalloc_simkit::{SimConfig, Simulation, Stop};
    use partalloc_workload::ShapeMapping;
    use partalloc_workload::swf::SwfReader;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/traces/NASA-iPSC-1993-3.1-cln.swf"
    );
    let topology: partalloc_topology::Topology = "hypercube:7".parse().unwrap();
    let jobs: Vec<_> = SwfReader::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()))
        .unwrap()
        .jobs(ShapeMapping::for_topology(&topology))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(jobs.len(), 18_239);
    let config = SimConfig {
        stop: Stop::default(),
        warmup: 0,
        record_jobs: false,
        measure_search_time: false,
        ..SimConfig::default()
    };
    let wait = |alloc: &str| {
        let r = Simulation::from_specs(
            topology.clone(),
            &ALLOCATORS.spec(alloc).unwrap(),
            &POLICIES.spec("fcfs").unwrap(),
            jobs.iter().copied(),
            config,
        )
        .unwrap()
        .run()
        .unwrap();
        assert_eq!(r.results.completed, 18_239, "{alloc}");
        r.results.mean_wait
    };
    let order = ["buddy", "partner", "multiple-gray-code", "paging"];
    let waits: Vec<f64> = order.iter().map(|a| wait(a)).collect();
    eprintln!("NASA replay, mean wait: {order:?} = {waits:.3?}");
    for (i, pair) in waits.windows(2).enumerate() {
        assert!(
            pair[0] > 1.1 * pair[1],
            "{} waits {:.3}, not clearly above {} ({:.3}); all: {order:?} = {waits:.3?}",
            order[i],
            pair[0],
            order[i + 1],
            pair[1]
        );
    }
}
