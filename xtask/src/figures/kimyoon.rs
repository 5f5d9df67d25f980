//! Kim & Yoon, free submesh list (FSL) allocation for 2-D meshes, §IV:
//! Figs. 10–17.
//!
//! Square L×L meshes; FSL, Busy-List (complete candidate set, the default
//! `busy-list[candidates=complete]`) and Adaptive Scan; Poisson arrivals
//! with λ = ρN/(m·r); exponential residence of mean 10; sides uniform,
//! truncated normal or truncated exponential (§IV.1); every request may be
//! rotated; FCFS (Figs. 10–14) or M-FCFS with the dynamic d·λ threshold
//! (Figs. 15–17). The paper runs 100,000 requests per point on meshes up to
//! 512×512 (`--paper-scale`); the default runs fewer requests and meshes up
//! to 256×256.
//! Search time is CPU time: it goes to `<id>-cputime.csv`, outside the
//! determinism promise.

use partalloc_topology::Topology;
use partalloc_workload::{DemandLaw, ShapeLaw, SideLaw};

use partalloc_allocators::registry::AllocatorSpec;
use partalloc_schedulers::registry::PolicySpec;

use super::sim::{Metric, Setup, StopRule, policy, strategy};
use super::{Claim, Ctx, FigError, Figure, FigureKind, Panel, Scale, Table, Verdict};

const STRATEGIES: [(&str, &str); 3] = [
    ("FSL", "fsl"),
    ("Busy-List", "busy-list"),
    ("AS", "adaptive-scan"),
];

const FCFS: &str = "fcfs[rotate=true]";
const MFCFS: &str = "m-fcfs[rotate=true]";

macro_rules! figure {
    ($name:ident, $id:literal, $summary:literal, $build:ident) => {
        pub(crate) const $name: Figure = Figure {
            id: $id,
            paper: "Kim & Yoon, §IV.2",
            summary: $summary,
            kind: FigureKind::Panels($build),
        };
    };
}

figure!(
    FIG10,
    "kimyoon-fig10",
    "mean waiting delay vs mesh size, FCFS, load 0.47; (a) uniform, (b) exponential sides",
    fig10
);
figure!(
    FIG11,
    "kimyoon-fig11",
    "mean waiting delay vs load, 64x64, FCFS; (a) uniform, (b) normal sides",
    fig11
);
figure!(
    FIG12,
    "kimyoon-fig12",
    "allocation miss vs mesh size, FCFS, load 0.47; (a) uniform, (b) normal sides",
    fig12
);
figure!(
    FIG13,
    "kimyoon-fig13",
    "allocation miss vs load, 64x64, FCFS; (a) uniform, (b) normal sides",
    fig13
);
figure!(
    FIG14,
    "kimyoon-fig14",
    "mean search time vs mesh size, FCFS; (a) exponential, (b) normal sides (CPU time)",
    fig14
);
figure!(
    FIG15,
    "kimyoon-fig15",
    "mean waiting delay vs mesh size, M-FCFS, load 0.57; (a) uniform, (b) exponential sides",
    fig15
);
figure!(
    FIG16,
    "kimyoon-fig16",
    "mean waiting delay vs load, 64x64, M-FCFS; (a) uniform, (b) normal sides",
    fig16
);
figure!(
    FIG17,
    "kimyoon-fig17",
    "mean search time vs mesh size, M-FCFS; (a) uniform, (b) exponential sides (CPU time)",
    fig17
);

/// The label with its first letter in lower case ("Mean …" → "mean …").
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

fn sides(ctx: &Ctx) -> Vec<u32> {
    match ctx.scale {
        Scale::Quick => vec![16, 32],
        Scale::Default => vec![16, 32, 64, 128, 256],
        Scale::Paper => vec![16, 32, 64, 128, 256, 512],
    }
}

fn reps(ctx: &Ctx) -> u64 {
    ctx.reps(2, 5, 5)
}

fn jobs(ctx: &Ctx) -> u64 {
    ctx.jobs(300, 3000, 100_000)
}

/// The L×L mesh.
fn mesh(side: u32) -> Result<Topology, FigError> {
    Ok(format!("mesh:{side}x{side}").parse()?)
}

fn setup(
    ctx: &Ctx,
    machine: Topology,
    (alloc, sched): (&AllocatorSpec, &PolicySpec),
    law: SideLaw,
    load: f64,
) -> Setup {
    Setup {
        machine,
        allocator: alloc.clone(),
        scheduler: sched.clone(),
        shapes: ShapeLaw::Sides { law, max: None },
        round_up_pow2: false,
        demand: DemandLaw::Exponential { mean: 10.0 },
        load,
        stop: StopRule::Jobs(jobs(ctx)),
        replications: reps(ctx),
        // Always measured (cheap), so the runs of Figs. 10, 12 and 14 are
        // shared within one invocation.
        search_time: true,
    }
}

fn notes(ctx: &Ctx, sched: &str) -> Vec<String> {
    vec![format!(
        "{} replications × {} requests per point; {sched}; exponential residence, mean 10; Busy-List with the complete candidate set",
        reps(ctx),
        jobs(ctx)
    )]
}

#[derive(Clone, Copy)]
struct Spec {
    fig: u32,
    sched: &'static str,
    metric: Metric,
    laws: [SideLaw; 2],
    /// Fixed load of a size sweep.
    load: f64,
    y_label: &'static str,
    y_max: Option<f64>,
}

fn by_size(ctx: &Ctx, spec: Spec) -> Result<Vec<Panel>, FigError> {
    let xs = sides(ctx)
        .into_iter()
        .map(|l| Ok((f64::from(l), mesh(l)?, spec.load)))
        .collect::<Result<Vec<_>, FigError>>()?;
    panels(
        ctx,
        spec,
        "Mesh side L (L×L mesh)",
        &format!("load {}", spec.load),
        &xs,
    )
}

fn loads(ctx: &Ctx) -> Vec<f64> {
    match ctx.scale {
        Scale::Quick => vec![0.3, 0.45, 0.55],
        _ => vec![0.3, 0.35, 0.4, 0.45, 0.5, 0.55],
    }
}

fn by_load(ctx: &Ctx, spec: Spec) -> Result<Vec<Panel>, FigError> {
    let machine = mesh(64)?;
    let xs: Vec<_> = loads(ctx)
        .into_iter()
        .map(|load| (load, machine.clone(), load))
        .collect();
    panels(ctx, spec, "Offered load", "64×64 mesh", &xs)
}

/// The two panels of a figure (one per side law): every strategy at each
/// `(x, machine, load)` of `xs`; `setting` ends the title.
fn panels(
    ctx: &Ctx,
    spec: Spec,
    x_label: &str,
    setting: &str,
    xs: &[(f64, Topology, f64)],
) -> Result<Vec<Panel>, FigError> {
    let sched = policy(spec.sched)?;
    let strategies = STRATEGIES
        .iter()
        .map(|&(label, name)| Ok((label, strategy(name)?)))
        .collect::<Result<Vec<_>, FigError>>()?;
    Ok(['a', 'b']
        .iter()
        .zip(spec.laws)
        .map(|(&letter, law)| {
            let points = strategies
                .iter()
                .flat_map(|(label, alloc)| {
                    let sched = &sched;
                    xs.iter().map(move |(x, machine, load)| {
                        (
                            (*label).to_owned(),
                            *x,
                            setup(ctx, machine.clone(), (alloc, sched), law, *load),
                        )
                    })
                })
                .collect();
            Panel {
                id: format!("kimyoon-fig{}{letter}", spec.fig),
                title: format!(
                    "Kim–Yoon Fig. {}({letter}): {}, {} sides, {setting}",
                    spec.fig,
                    lower_first(spec.y_label),
                    law,
                ),
                x_label: x_label.to_owned(),
                y_label: spec.y_label.to_owned(),
                metric: spec.metric,
                points,
                y_max: spec.y_max,
                claims: Box::new(move |t, _| claims(spec, law, t)),
                notes: notes(ctx, spec.sched),
            }
        })
        .collect())
}

const DELAY: &str = "Mean waiting delay";
const MISS: &str = "Allocation miss (fraction of valid requests)";
const SEARCH: &str = "Mean search time per job (µs, CPU)";

fn fig10(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_size(
        ctx,
        Spec {
            fig: 10,
            sched: FCFS,
            metric: Metric::Wait,
            laws: [SideLaw::Uniform, SideLaw::TruncatedExponential],
            load: 0.47,
            y_label: DELAY,
            y_max: Some(200.0),
        },
    )
}

fn fig11(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_load(
        ctx,
        Spec {
            fig: 11,
            sched: FCFS,
            metric: Metric::Wait,
            laws: [SideLaw::Uniform, SideLaw::TruncatedNormal],
            load: 0.0,
            y_label: DELAY,
            y_max: Some(300.0),
        },
    )
}

fn fig12(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_size(
        ctx,
        Spec {
            fig: 12,
            sched: FCFS,
            metric: Metric::MissRate,
            laws: [SideLaw::Uniform, SideLaw::TruncatedNormal],
            load: 0.47,
            y_label: MISS,
            y_max: None,
        },
    )
}

fn fig13(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_load(
        ctx,
        Spec {
            fig: 13,
            sched: FCFS,
            metric: Metric::MissRate,
            laws: [SideLaw::Uniform, SideLaw::TruncatedNormal],
            load: 0.0,
            y_label: MISS,
            y_max: None,
        },
    )
}

fn fig14(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_size(
        ctx,
        Spec {
            fig: 14,
            sched: FCFS,
            metric: Metric::SearchTime,
            laws: [SideLaw::TruncatedExponential, SideLaw::TruncatedNormal],
            load: 0.47,
            y_label: SEARCH,
            y_max: None,
        },
    )
}

fn fig15(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_size(
        ctx,
        Spec {
            fig: 15,
            sched: MFCFS,
            metric: Metric::Wait,
            laws: [SideLaw::Uniform, SideLaw::TruncatedExponential],
            load: 0.57,
            y_label: DELAY,
            y_max: Some(200.0),
        },
    )
}

fn fig16(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_load(
        ctx,
        Spec {
            fig: 16,
            sched: MFCFS,
            metric: Metric::Wait,
            laws: [SideLaw::Uniform, SideLaw::TruncatedNormal],
            load: 0.0,
            y_label: DELAY,
            y_max: Some(300.0),
        },
    )
}

fn fig17(ctx: &Ctx) -> Result<Vec<Panel>, FigError> {
    by_size(
        ctx,
        Spec {
            fig: 17,
            sched: MFCFS,
            metric: Metric::SearchTime,
            laws: [SideLaw::Uniform, SideLaw::TruncatedExponential],
            load: 0.47,
            y_label: SEARCH,
            y_max: None,
        },
    )
}

/// At how many x values FSL is lowest in `col`.
fn fsl_lowest(t: &Table, col: &str) -> (usize, usize) {
    let v: Vec<bool> = t
        .xs()
        .into_iter()
        .filter_map(|x| {
            let f = t.mean("FSL", x, col)?;
            let b = t.mean("Busy-List", x, col)?;
            let a = t.mean("AS", x, col)?;
            Some(f <= b && f <= a)
        })
        .collect();
    (v.iter().filter(|&&b| b).count(), v.len())
}

/// Relative improvement range of FSL over `other` (1 − FSL/other).
fn improvement(t: &Table, other: &str, col: &str) -> Option<(f64, f64)> {
    let v: Vec<f64> = t
        .xs()
        .into_iter()
        .filter_map(|x| Some(1.0 - t.mean("FSL", x, col)? / t.mean(other, x, col)?))
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| {
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    })
}

/// The improvement ranges of FSL over AS and over Busy-List that §IV.2
/// states for Figs. 10 and 15.
fn paper_ranges(fig: u32, law: SideLaw) -> Option<((f64, f64), (f64, f64))> {
    match (fig, law) {
        (10, SideLaw::Uniform) => Some(((0.31, 0.56), (0.14, 0.26))),
        (10, SideLaw::TruncatedExponential) => Some(((0.46, 0.91), (0.16, 0.39))),
        (10, SideLaw::TruncatedNormal) => Some(((0.41, 0.83), (0.19, 0.36))),
        (15, SideLaw::Uniform) => Some(((0.16, 0.28), (0.07, 0.13))),
        (15, SideLaw::TruncatedExponential) => Some(((0.15, 0.25), (0.05, 0.11))),
        _ => None,
    }
}

fn claims(spec: Spec, law: SideLaw, t: &Table) -> Vec<Claim> {
    let mut c = Vec::new();
    let range = |other: &str, col: &str| {
        improvement(t, other, col).map_or_else(
            || "?".to_owned(),
            |(lo, hi)| format!("{:.0}% to {:.0}%", 100.0 * lo, 100.0 * hi),
        )
    };
    match spec.metric {
        Metric::Wait => {
            let (wins, n) = fsl_lowest(t, "wait");
            c.push(Claim::new(
                "FSL has the lowest mean waiting delay",
                format!(
                    "FSL lowest at {wins} of {n} points; FSL better than AS by {}, than Busy-List by {}",
                    range("AS", "wait"),
                    range("Busy-List", "wait")
                ),
                Verdict::from_count(wins, n),
            ));
            if let Some((as_range, bl_range)) = paper_ranges(spec.fig, law) {
                let overlaps = |m: Option<(f64, f64)>, p: (f64, f64)| {
                    m.is_some_and(|(lo, hi)| lo <= p.1 && hi >= p.0)
                };
                let (a, b) = (
                    improvement(t, "AS", "wait"),
                    improvement(t, "Busy-List", "wait"),
                );
                c.push(Claim::new(
                    format!(
                        "FSL improves the mean waiting delay by {:.0}–{:.0}% over AS and {:.0}–{:.0}% over Busy-List ({} sides)",
                        100.0 * as_range.0,
                        100.0 * as_range.1,
                        100.0 * bl_range.0,
                        100.0 * bl_range.1,
                        law
                    ),
                    format!(
                        "over AS {}, over Busy-List {}",
                        range("AS", "wait"),
                        range("Busy-List", "wait")
                    ),
                    match (overlaps(a, as_range), overlaps(b, bl_range)) {
                        (true, true) => Verdict::Confirmed,
                        (true, false) | (false, true) => Verdict::Partly,
                        (false, false) => Verdict::NotConfirmed,
                    },
                ));
            }
        }
        Metric::MissRate => {
            let (wins, n) = fsl_lowest(t, "miss_rate");
            c.push(Claim::new(
                "FSL has the lowest allocation miss",
                format!("FSL lowest at {wins} of {n} points"),
                Verdict::from_count(wins, n),
            ));
        }
        Metric::SearchTime => {
            let pts = |s: &str| t.points(s, "search_us");
            let growth = |s: &str| {
                let p = pts(s);
                match (p.first(), p.last()) {
                    (Some(a), Some(b)) if a.1 > 0.0 => Some((b.1 / a.1, a.0, b.0)),
                    _ => None,
                }
            };
            if let (Some(f), Some(a)) = (growth("FSL"), growth("AS")) {
                c.push(Claim::check(
                    "FSL's search time is nearly flat in the mesh size; AS's grows with N",
                    format!(
                        "from L = {} to {}: FSL ×{:.1}, Busy-List ×{}, AS ×{:.1}",
                        f.1,
                        f.2,
                        f.0,
                        growth("Busy-List").map_or("?".to_owned(), |b| format!("{:.1}", b.0)),
                        a.0
                    ),
                    a.0 > 4.0 * f.0,
                ));
            }
            let (wins, n) = fsl_lowest(t, "search_us");
            c.push(Claim::new(
                "FSL's search time is the lowest (slightly below Busy-List)",
                format!("FSL lowest at {wins} of {n} mesh sizes"),
                Verdict::from_count(wins, n),
            ));
        }
        _ => {}
    }
    c
}
