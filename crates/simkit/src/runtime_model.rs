//! What dispersal costs: an optional model in which a job's run time
//! grows with how far apart its nodes are.
//!
//! A job's service time in the workload is read as its run time on the
//! **baseline allocation** of its size, and a started job runs for the
//! time the model gives for the grant it actually got. Off by default: a
//! [`Simulation`](crate::Simulation) without a model runs every job for
//! its service time, exactly.
//!
//! Two models ([`RuntimeModel`], parsed from text at the edge):
//!
//! - **`sst:A[B,C]`** — the allocation-based timing of SST's scheduler
//!   element (sst-elements, `src/sst/elements/scheduler/schedComponent.cc`,
//!   `schedComponent::startJob`, parameter `timeperdistance` read by
//!   `Factory::getTimePerDistance`; present up to the parent of commit
//!   03cdec6fa925f00cf6e367cb8732f4d42807bedb; see docs/baselines.md). With
//!   hop-bytes H of the grant, H_base of the baseline, and r drawn
//!   uniformly from [−1, 1] per job,
//!   T₀ = T / (1 + A·H_base^(B + C·r)) and
//!   T′ = ⌈T₀ · (1 + A·H^(B + C·r))⌉.
//!   Hop-bytes are SST's for its default all-to-all traffic with one task
//!   per node: every ordered pair of tasks sends one unit, so an unordered
//!   node pair carries 2 units over its route, and a unit is 256 MiB —
//!   H = 2²⁹ · Σ over node pairs of the hop distance
//!   ([`GrantDispersal::distance_sum`]). SST's own example is
//!   `sst:.001865[.1569,0.0129]`. C = 0 makes the model deterministic; with
//!   C > 0 each job's r comes from the model's seed and the job's id alone
//!   ([`RuntimeModel::seeded`]), so the same job draws the same r under
//!   every allocator and scheduler (and the run is reproducible).
//! - **`linear:K`** — a simpler model of our own:
//!   T′ = T · max(0, 1 + K·(d / d_base − 1)), with d the grant's mean
//!   pairwise distance and d_base the baseline's (T′ = T for one node).
//!   K is the fraction by which a job slows when its nodes are on average
//!   twice as far apart as in the baseline.
//!
//! The **baseline allocation** is SST's (`StencilMachine::
//! getBaselineAllocation`): for n nodes on a machine of d dimensions with
//! sides k_i, start from the cube of side c, the least with cᵈ ≥ n, each
//! side cut to its k_i; while the box holds fewer than n nodes, widen the
//! first dimension that can grow by one, again and again, then the next;
//! the baseline is the first n nodes of the box in boustrophedon (snake)
//! order, dimension 0 fastest. It is contiguous, and in it n nodes are as
//! close as a near-cubic box allows ([`baseline_nodes`]). A hypercube is
//! treated as the 2×…×2 mesh it is (its baseline is then the first n
//! words of the reflected Gray code). Slurm machines have no distances
//! and refuse a model.
//!
//! Where we differ from SST, on purpose: SST aborts when T′ exceeds the
//! job's estimate; here the job runs T′. On a torus SST routes without the
//! wrap-around links when it sums hop-bytes but uses Lee distance
//! elsewhere; here both H and H_base use the machine's hop distance (Lee
//! on tori). A job whose grant has the baseline's hop-bytes keeps ⌈T⌉
//! (the formula would return T·x/x, which floating point can round past
//! an integer T). Run times are rounded up to whole time units as SST's
//! integer clock does, so `sst:` suits workloads timed in seconds; the
//! `linear:` model does not round.
//!
//! ```
//! use partalloc_simkit::runtime_model::RuntimeModel;
//! let m: RuntimeModel = "sst:.001865[.1569,0.0129]".parse()?;
//! assert_eq!(m, RuntimeModel::Sst { a: 0.001865, b: 0.1569, c: 0.0129, seed: 0 });
//! assert_eq!(m.to_string(), "sst:0.001865[0.1569,0.0129]");
//! let l: RuntimeModel = "linear:0.25".parse()?;
//! // Twice the baseline's mean distance: 25% slower.
//! assert_eq!(l.run_time(100.0, 7, 2.0 * 9.0, 9.0), 125.0);
//! assert!("sst:-1[0.1,0]".parse::<RuntimeModel>().is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::str::FromStr;
use std::collections::HashMap;

use partalloc_topology::{NodeId, Topology};
use thiserror::Error;

use crate::dispersal::{DispersalMeter, GrantDispersal};

/// Hop-bytes per unit of summed pairwise distance in SST's all-to-all
/// traffic: 2 units per node pair × 256 MiB.
pub const SST_BYTES_PER_HOP: f64 = (1u64 << 29) as f64;

/// Why a run-time model was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RuntimeModelError {
    /// The text is not `sst:A[B,C]`, `sst:A[B]` or `linear:K`.
    #[error(
        "cannot read run-time model {spec:?}; write sst:A[B,C] (e.g. sst:.001865[.1569,.0129]) or linear:K (e.g. linear:0.2)"
    )]
    Syntax {
        /// The text given (shortened).
        spec: String,
    },
    /// A parameter is not a finite number.
    #[error("run-time model parameter {name} = {value} must be a finite number")]
    NotFinite {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// A parameter that must not be negative is.
    #[error("run-time model parameter {name} = {value} must not be negative")]
    Negative {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// B − C < 0: the exponent B + C·r could be negative, and a grant of
    /// one node (hop-bytes 0) would run forever.
    #[error(
        "sst model exponent B + C·r must stay non-negative for r in [-1, 1], but B = {b} < C = {c}; lower C or raise B"
    )]
    NegativeExponent {
        /// B.
        b: f64,
        /// C.
        c: f64,
    },
    /// The machine has no hop distances (a Slurm machine).
    #[error(
        "a run-time model needs hop distances, which {topology} does not have; use a mesh, torus, pod or hypercube"
    )]
    Unsupported {
        /// The machine.
        topology: String,
    },
}

/// A run-time model (see the [module docs](self)). Two models are equal
/// when their parameters have the same bits.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum RuntimeModel {
    /// SST's allocation-based timing `a[b,c]`.
    Sst {
        /// The coefficient A (0 = no effect).
        a: f64,
        /// The exponent B.
        b: f64,
        /// The exponent's random spread C.
        c: f64,
        /// Seed of the per-job r (used only when c > 0).
        seed: u64,
    },
    /// T′ = T · (1 + coef · (d / d_base − 1)).
    Linear {
        /// The coefficient K.
        coef: f64,
    },
}

impl PartialEq for RuntimeModel {
    fn eq(&self, other: &Self) -> bool {
        let bits = |m: &Self| match *m {
            Self::Sst { a, b, c, seed } => [0, a.to_bits(), b.to_bits(), c.to_bits(), seed],
            Self::Linear { coef } => [1, coef.to_bits(), 0, 0, 0],
        };
        bits(self) == bits(other)
    }
}

impl Eq for RuntimeModel {}

fn number(name: &'static str, text: &str) -> Result<f64, RuntimeModelError> {
    let value: f64 = text.trim().parse().map_err(|_| RuntimeModelError::Syntax {
        spec: partalloc_topology::echo(text),
    })?;
    if !value.is_finite() {
        return Err(RuntimeModelError::NotFinite { name, value });
    }
    if value < 0.0 {
        return Err(RuntimeModelError::Negative { name, value });
    }
    Ok(value)
}

impl RuntimeModel {
    /// SST's model `a[b,c]`, checked.
    ///
    /// # Errors
    /// A parameter not finite or negative, or b < c.
    pub fn sst(a: f64, b: f64, c: f64) -> Result<Self, RuntimeModelError> {
        for (name, value) in [("A", a), ("B", b), ("C", c)] {
            number(name, &value.to_string())?;
        }
        if b < c {
            return Err(RuntimeModelError::NegativeExponent { b, c });
        }
        Ok(Self::Sst { a, b, c, seed: 0 })
    }

    /// The linear model with coefficient `coef`, checked.
    ///
    /// # Errors
    /// `coef` not finite or negative.
    pub fn linear(coef: f64) -> Result<Self, RuntimeModelError> {
        let coef = number("K", &coef.to_string())?;
        Ok(Self::Linear { coef })
    }

    /// The same model with the per-job r drawn from `seed` (SST's model
    /// with C > 0; the others ignore it).
    #[must_use]
    pub fn seeded(self, seed: u64) -> Self {
        match self {
            Self::Sst { a, b, c, .. } => Self::Sst { a, b, c, seed },
            other => other,
        }
    }

    /// The r of job `id` in [−1, 1): a hash of the seed and the id
    /// (SplitMix64's finaliser), so that it depends on nothing else.
    fn r(seed: u64, id: u64) -> f64 {
        let mut z = seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // 53 random bits → [0, 1) → [−1, 1).
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    /// The run time of job `id` whose service time is `t` on a grant with
    /// pairwise distance sum `sum` when the baseline's is `base` (both as
    /// [`GrantDispersal::distance_sum`], as reals).
    #[must_use]
    pub fn run_time(&self, t: f64, id: u64, sum: f64, base: f64) -> f64 {
        match *self {
            Self::Sst { a, b, c, seed } => {
                if sum == base {
                    return t.ceil();
                }
                let r = if c == 0.0 { 0.0 } else { Self::r(seed, id) };
                let e = b + c * r;
                let h = sum * SST_BYTES_PER_HOP;
                let h_base = base * SST_BYTES_PER_HOP;
                let t0 = t / (1.0 + a * h_base.powf(e));
                (t0 * (1.0 + a * h.powf(e))).ceil()
            }
            Self::Linear { coef } => {
                if base <= 0.0 {
                    return t;
                }
                t * (1.0 + coef * (sum / base - 1.0)).max(0.0)
            }
        }
    }
}

impl FromStr for RuntimeModel {
    type Err = RuntimeModelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || RuntimeModelError::Syntax {
            spec: partalloc_topology::echo(s),
        };
        let (kind, rest) = s.trim().split_once(':').ok_or_else(syntax)?;
        match kind.trim() {
            "linear" => Self::linear(number("K", rest)?),
            "sst" => {
                let (a, params) = match rest.split_once('[') {
                    Some((a, p)) => (a, Some(p.strip_suffix(']').ok_or_else(syntax)?)),
                    None => (rest, None),
                };
                let a = number("A", a)?;
                let (b, c) = match params.map(|p| p.split(',').collect::<Vec<_>>()) {
                    None => (0.0, 0.0),
                    Some(v) if v.len() == 1 => (number("B", v[0])?, 0.0),
                    Some(v) if v.len() == 2 => (number("B", v[0])?, number("C", v[1])?),
                    Some(_) => return Err(syntax()),
                };
                Self::sst(a, b, c)
            }
            _ => Err(syntax()),
        }
    }
}

impl fmt::Display for RuntimeModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sst { a, b, c, .. } => write!(f, "sst:{a}[{b},{c}]"),
            Self::Linear { coef } => write!(f, "linear:{coef}"),
        }
    }
}

/// The first `n` nodes of SST's baseline allocation on `topology` (see the
/// [module docs](self)), in snake order, into `out` (cleared first).
/// Nothing for `n` = 0, a Slurm machine, or more nodes than the machine
/// has.
pub fn baseline_nodes(topology: &Topology, n: u64, out: &mut Vec<NodeId>) {
    out.clear();
    if n == 0 || n > topology.num_nodes() as u64 {
        return;
    }
    if topology.as_hypercube().is_some() {
        // The snake over 2×…×2 is the reflected Gray code; every side is 2,
        // so the box is the whole cube and the first n words are the
        // baseline.
        out.extend((0..n as u32).map(|i| i ^ (i >> 1)));
        return;
    }
    let Some(grid) = topology.as_grid() else {
        return;
    };
    let sides = grid.sides();
    let d = sides.len();
    let mut c = 1u64;
    while c.saturating_pow(d as u32) < n {
        c += 1;
    }
    let mut m: Vec<u64> = sides.iter().map(|&k| c.min(u64::from(k))).collect();
    let mut ready: u64 = m.iter().product();
    for i in 0..d {
        while ready < n && m[i] < u64::from(sides[i]) {
            ready = ready / m[i] * (m[i] + 1);
            m[i] += 1;
        }
    }
    for i in 0..n {
        let (mut id, mut stride, mut q) = (0u64, 1u64, i);
        for dim in 0..d {
            let digit = q % m[dim];
            q /= m[dim];
            // Reflected when the digits above have odd parity of steps.
            let x = if q % 2 == 0 {
                digit
            } else {
                m[dim] - 1 - digit
            };
            id += x * stride;
            stride *= u64::from(sides[dim]);
        }
        out.push(id as NodeId);
    }
}

/// A model applied to one machine's jobs: the baseline's distance sum per
/// job size, computed once per size.
#[derive(Debug, Clone)]
pub(crate) struct Dilation {
    model: RuntimeModel,
    topology: Topology,
    meter: DispersalMeter,
    baseline: HashMap<u64, u128>,
    scratch: Vec<NodeId>,
}

impl Dilation {
    /// `model` on `topology`.
    pub(crate) fn new(model: RuntimeModel, topology: &Topology) -> Result<Self, RuntimeModelError> {
        let meter = DispersalMeter::new(topology);
        if !meter.is_defined() {
            return Err(RuntimeModelError::Unsupported {
                topology: partalloc_topology::echo(&topology.to_string()),
            });
        }
        Ok(Self {
            model,
            topology: topology.clone(),
            meter,
            baseline: HashMap::new(),
            scratch: Vec::new(),
        })
    }

    /// The distance sum of the baseline of `n` nodes.
    pub(crate) fn baseline_sum(&mut self, n: u64) -> u128 {
        if let Some(&s) = self.baseline.get(&n) {
            return s;
        }
        baseline_nodes(&self.topology, n, &mut self.scratch);
        let s = self
            .meter
            .measure_nodes(&self.scratch)
            .map_or(0, |d| d.distance_sum);
        self.baseline.insert(n, s);
        s
    }

    /// The run time of job `id` with service time `t` on a grant of
    /// dispersal `d` (`t` itself when the grant was not measured).
    pub(crate) fn run_time(&mut self, t: f64, id: u64, d: Option<&GrantDispersal>) -> f64 {
        let Some(d) = d else { return t };
        let base = self.baseline_sum(d.nodes);
        self.model
            .run_time(t, id, d.distance_sum as f64, base as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// SST's fill loop as its source describes it, step by step: move along
    /// the current dimension; at an end, turn that dimension around and
    /// step the next one.
    fn sst_fill(m: &[u64], n: u64) -> Vec<Vec<u64>> {
        let d = m.len();
        let mut loc = vec![0u64; d];
        let mut fwd = vec![true; d];
        let mut out = vec![loc.clone()];
        let last = (0..d).rev().find(|&i| m[i] != 1).unwrap_or(0);
        while (out.len() as u64) < n {
            let mut cur = 0;
            while (fwd[cur] && loc[cur] == m[cur] - 1) || (!fwd[cur] && loc[cur] == 0) {
                fwd[cur] = !fwd[cur];
                if cur != last {
                    cur += 1;
                } else {
                    break;
                }
            }
            loop {
                if m[cur] != 1 {
                    if fwd[cur] {
                        loc[cur] += 1;
                    } else {
                        loc[cur] -= 1;
                    }
                    break;
                }
                if cur == 0 {
                    break;
                }
                cur -= 1;
            }
            out.push(loc.clone());
        }
        out
    }

    /// The box SST grows, by its rule, from real-valued cube roots.
    fn sst_box(sides: &[u32], n: u64) -> Vec<u64> {
        let d = sides.len();
        let cubic = (n as f64).powf(1.0 / d as f64).ceil() as u64;
        let mut m: Vec<u64> = sides.iter().map(|&k| cubic.min(u64::from(k))).collect();
        let mut ready: u64 = m.iter().product();
        for i in 0..d {
            while m[i] < u64::from(sides[i]) && ready < n {
                ready = ready / m[i] * (m[i] + 1);
                m[i] += 1;
            }
        }
        m
    }

    proptest! {
        /// The baseline is SST's: the nodes of its step-by-step fill of the
        /// box its rule grows, in that order; contiguous (each node next to
        /// the one before); and its box is minimal (one fewer in the last
        /// side that grew would not hold n).
        #[test]
        fn the_baseline_is_ssts_snake(sides in prop::collection::vec(1u32..=6, 1..=3), frac in 0.0f64..1.0) {
            let topology = Topology::Grid(partalloc_topology::Grid::mesh(&sides).unwrap());
            let nodes = topology.num_nodes() as u64;
            let n = 1 + (frac * nodes as f64) as u64 % nodes;
            let mut got = Vec::new();
            baseline_nodes(&topology, n, &mut got);
            let m = sst_box(&sides, n);
            let want: Vec<NodeId> = sst_fill(&m, n)
                .iter()
                .map(|c| {
                    let (mut id, mut stride) = (0u64, 1u64);
                    for (x, &k) in c.iter().zip(&sides) {
                        id += x * stride;
                        stride *= u64::from(k);
                    }
                    id as NodeId
                })
                .collect();
            prop_assert_eq!(&got, &want);
            let g = topology.as_grid().unwrap();
            for w in got.windows(2) {
                prop_assert_eq!(g.distance(w[0], w[1]).unwrap(), 1);
            }
        }
    }

    #[test]
    fn worked_baselines() {
        let mesh: Topology = "mesh:16x16".parse().unwrap();
        let mut out = Vec::new();
        // 5 nodes: the 3×3 box, snake ⟨0,0⟩ ⟨1,0⟩ ⟨2,0⟩ ⟨2,1⟩ ⟨1,1⟩.
        baseline_nodes(&mesh, 5, &mut out);
        assert_eq!(out, [0, 1, 2, 18, 17]);
        // 16 nodes: a 4×4 square; along each dimension 4 nodes at each of
        // 0..4, so Σ|x − y| = 16·(1+2+3+1+2+1) = 160 per dimension.
        let mut dil = Dilation::new(RuntimeModel::linear(0.1).unwrap(), &mesh).unwrap();
        assert_eq!(dil.baseline_sum(16), 320);
        // 12 on a 2-wide machine: cube side 4 cut to 2, then the first side
        // is full, the second grows to 6; the snake turns at every row.
        let narrow: Topology = "mesh:2x8".parse().unwrap();
        baseline_nodes(&narrow, 12, &mut out);
        assert_eq!(out, [0, 1, 3, 2, 4, 5, 7, 6, 8, 9, 11, 10]);
        // A hypercube's baseline is the reflected Gray code.
        let cube: Topology = "hypercube:4".parse().unwrap();
        baseline_nodes(&cube, 5, &mut out);
        assert_eq!(out, [0, 1, 3, 2, 6]);
    }

    #[test]
    fn sst_formula_by_hand() {
        let m = RuntimeModel::sst(0.001865, 0.1569, 0.0).unwrap();
        // 4 nodes: baseline 2×2 square (sum 8); a row of 4 (sum 10).
        let (h, hb) = (10.0 * SST_BYTES_PER_HOP, 8.0 * SST_BYTES_PER_HOP);
        let t0 = 1000.0 / (1.0 + 0.001865 * hb.powf(0.1569));
        let want = (t0 * (1.0 + 0.001865 * h.powf(0.1569))).ceil();
        assert_eq!(m.run_time(1000.0, 1, 10.0, 8.0), want);
        assert!(want > 1000.0 && want < 1010.0, "{want}");
        // The baseline itself keeps its time; one node too.
        assert_eq!(m.run_time(1000.0, 1, 8.0, 8.0), 1000.0);
        assert_eq!(m.run_time(999.5, 1, 0.0, 0.0), 1000.0);
    }

    #[test]
    fn r_is_seeded_per_job_and_uniform() {
        let m = RuntimeModel::sst(0.01, 0.2, 0.1).unwrap().seeded(7);
        let again = m;
        for id in 0..50 {
            assert_eq!(
                m.run_time(100.0, id, 40.0, 8.0),
                again.run_time(100.0, id, 40.0, 8.0)
            );
        }
        let rs: Vec<f64> = (0..10_000).map(|id| RuntimeModel::r(7, id)).collect();
        assert!(rs.iter().all(|r| (-1.0..1.0).contains(r)));
        let mean = rs.iter().sum::<f64>() / rs.len() as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert_ne!(RuntimeModel::r(7, 1), RuntimeModel::r(8, 1));
    }

    #[test]
    fn bad_models_are_refused_with_their_reason() {
        let e = |s: &str| s.parse::<RuntimeModel>().unwrap_err();
        assert!(matches!(e("sst"), RuntimeModelError::Syntax { .. }));
        assert!(matches!(
            e("sst:1[2,3,4]"),
            RuntimeModelError::Syntax { .. }
        ));
        assert!(matches!(e("sst:1[2,3"), RuntimeModelError::Syntax { .. }));
        assert!(matches!(e("cubic:1"), RuntimeModelError::Syntax { .. }));
        assert_eq!(
            e("sst:-1[0,0]"),
            RuntimeModelError::Negative {
                name: "A",
                value: -1.0
            }
        );
        assert!(matches!(
            e("linear:inf"),
            RuntimeModelError::NotFinite { name: "K", .. }
        ));
        assert_eq!(
            e("sst:1[0.1,0.2]"),
            RuntimeModelError::NegativeExponent { b: 0.1, c: 0.2 }
        );
        assert_eq!(
            e("sst:1[0.1,0.2]").to_string(),
            "sst model exponent B + C·r must stay non-negative for r in [-1, 1], but B = 0.1 < C = 0.2; lower C or raise B"
        );
        assert_eq!(
            "sst:0.5".parse::<RuntimeModel>().unwrap(),
            RuntimeModel::Sst {
                a: 0.5,
                b: 0.0,
                c: 0.0,
                seed: 0
            }
        );
        let round: RuntimeModel = "sst:0.001865[0.1569,0.0129]".parse().unwrap();
        assert_eq!(round.to_string().parse::<RuntimeModel>().unwrap(), round);
    }
}
