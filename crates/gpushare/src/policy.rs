//! The six policies of the FGD experiment, each deciding as the artifact
//! does: which feasible node scores highest (ties to the node whose name
//! sorts first) and which GPUs of it the pod takes.
//!
//! Sources in the artifact (github hkust-adsl/kubernetes-scheduler-simulator):
//! `pkg/simulator/plugin/{random_score,dot_product_score,gpu_clustering_score,
//! gpu_packing_score,best_fit_score,fgd_score,open_gpu_share,plugin_utils}.go`,
//! `pkg/type/resource.go` and the scheduler's `selectHost`
//! (`vendor/k8s.io/kubernetes/pkg/scheduler/core/generic_scheduler.go`).

use std::fmt;
use std::str::FromStr;

use crate::error::ExperimentError;
use crate::frag::{TypicalPod, frag_score_parts};
use crate::gorand::GoRand;
use crate::model::{MILLI, NodeState, Placement, Request};

/// CPU thousandths of the largest node the artifact normalises by.
pub const MAX_SPEC_CPU: f64 = 128_000.0;
/// GPU thousandths of the largest node the artifact normalises by.
pub const MAX_SPEC_GPU: f64 = 8_000.0;
/// Highest node score of the scheduling framework.
pub const MAX_SCORE: i64 = 100;

/// A scheduling policy of the FGD paper's evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Policy {
    /// A uniformly random feasible node, a random fitting GPU.
    Random,
    /// Smallest dot product of the node's free and the pod's asked
    /// CPU and GPU (Tetris-like alignment).
    DotProd,
    /// Nodes already running pods of the same GPU kind first.
    GpuClustering,
    /// Shared GPUs first, then free GPUs of used nodes, then empty nodes.
    GpuPacking,
    /// Least CPU and GPU left after placing.
    BestFit,
    /// Fragmentation gradient descent: least growth of expected
    /// fragmentation.
    Fgd,
}

impl Policy {
    /// All six, in the artifact's numbering.
    pub const ALL: [Policy; 6] = [
        Policy::Random,
        Policy::DotProd,
        Policy::GpuClustering,
        Policy::GpuPacking,
        Policy::BestFit,
        Policy::Fgd,
    ];

    /// The artifact's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Policy::Random => "Random",
            Policy::DotProd => "DotProd",
            Policy::GpuClustering => "GpuClustering",
            Policy::GpuPacking => "GpuPacking",
            Policy::BestFit => "BestFit",
            Policy::Fgd => "FGD",
        }
    }

    /// The artifact's result folder name (`06-FGD`).
    #[must_use]
    pub fn dir_name(self) -> String {
        let n = Policy::ALL.iter().position(|&p| p == self).unwrap_or(0) + 1;
        format!("{n:02}-{}", self.name())
    }

    /// Whether decisions draw random numbers.
    #[must_use]
    pub fn is_random(self) -> bool {
        self == Policy::Random
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Policy {
    type Err = ExperimentError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Policy::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s) || p.dir_name() == s)
            .ok_or_else(|| ExperimentError::UnknownPolicy {
                name: partalloc_topology::echo(s),
                known: Policy::ALL.map(Policy::name).join(", "),
            })
    }
}

/// BestFit's raw score: 100 · (1 − ½·CPU left after / 128 000 − ½·GPU
/// left after / 8 000), truncated (`best_fit_score.go`).
#[must_use]
pub fn best_fit_raw(node: &NodeState, req: &Request) -> i64 {
    let free = [f64::from(node.cpu_left), f64::from(node.gpu_left_total())];
    let ask = [f64::from(req.cpu_milli), f64::from(req.total_gpu_milli())];
    let max = [MAX_SPEC_CPU, MAX_SPEC_GPU];
    let mut s = 0.0;
    for i in 0..2 {
        s += (free[i] - ask[i]) / max[i] * 0.5;
    }
    ((1.0 - s) * MAX_SCORE as f64) as i64
}

/// DotProd's score: 100 · (1 − (free · asked)/2) with both vectors
/// divided by (128 000, 8 000) (`dot_product_score.go`, merged GPU
/// dimension, max norm).
#[must_use]
pub fn dot_prod_score(node: &NodeState, req: &Request) -> i64 {
    let free = [
        f64::from(node.cpu_left) / MAX_SPEC_CPU,
        f64::from(node.gpu_left_total()) / MAX_SPEC_GPU,
    ];
    let ask = [
        f64::from(req.cpu_milli) / MAX_SPEC_CPU,
        f64::from(req.total_gpu_milli()) / MAX_SPEC_GPU,
    ];
    let mut dot = 0.0;
    for i in 0..2 {
        dot += free[i] * ask[i];
    }
    let s = 1.0 - dot / 2.0;
    (MAX_SCORE as f64 * s) as i64
}

/// GpuClustering's score (`gpu_clustering_score.go`): CPU pods 0; GPU
/// pods by the kinds of GPU pods the node runs (share, 1, 2, … whole GPUs)
/// — only the pod's kind: 75–100, the pod's and others: 50–75, none:
/// 25–50, only others: 0–25 — plus 25 · (8 000 − GPU left) / 8 000,
/// all in integers.
#[must_use]
pub fn gpu_clustering_score(node: &NodeState, req: &Request) -> i64 {
    let Some(k) = crate::model::kind(req) else {
        return 0;
    };
    let used = (MAX_SCORE / 4) * (MAX_SPEC_GPU as i64 - i64::from(node.gpu_left_total()))
        / MAX_SPEC_GPU as i64;
    let kinds = node.kind_count();
    let base = if node.kinds[k] > 0 {
        if kinds == 1 { 3 } else { 2 }
    } else if kinds == 0 {
        1
    } else {
        0
    };
    used + MAX_SCORE * base / 4
}

/// GpuPacking's score (`gpu_packing_score.go`): CPU pods 0; an empty
/// node max(33 − free GPUs, free GPUs); a node where the pod needs a free
/// GPU max(50 − free GPUs taken, 33); else, on shared GPUs,
/// max(100 − Σ(left·100/1000)/10, 50). GPUs are taken least-left first.
#[must_use]
pub fn gpu_packing_score(node: &NodeState, req: &Request) -> i64 {
    if req.gpu_milli == 0 {
        return 0;
    }
    let free = i64::from(node.free_gpus());
    if free == i64::from(node.gpus) {
        return (MAX_SCORE / 3 - free).max(free);
    }
    let mut order: Vec<usize> = (0..usize::from(node.gpus)).collect();
    order.sort_by_key(|&i| node.gpu_left[i]);
    let mut need = req.gpus;
    let mut free_taken = 0_i64;
    let mut ratio = 0_i64;
    for i in order {
        if need == 0 {
            break;
        }
        let left = u32::from(node.gpu_left[i]);
        if req.gpu_milli <= left {
            need -= 1;
            ratio += i64::from(left) * 100 / i64::from(MILLI);
            if left == MILLI {
                free_taken += 1;
            }
        }
    }
    if need != 0 {
        return 0;
    }
    if free_taken > 0 {
        return (MAX_SCORE / 2 - free_taken).max(MAX_SCORE / 3);
    }
    (MAX_SCORE - ratio / 10).max(MAX_SCORE / 2)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// FGD's score of a move from expected fragmentation `f_now` to
/// `f_after`: ⌊100·σ((f_now − f_after)/1000)⌋.
#[must_use]
pub fn fgd_value(f_now: f64, f_after: f64) -> i64 {
    (sigmoid((f_now - f_after) / 1000.0) * MAX_SCORE as f64) as i64
}

/// FGD's score and GPU choice (`fgd_score.go`): with F the node's expected
/// fragmentation, a share of one GPU tries each GPU with room and scores
/// ⌊100·σ((F − F′)/1000)⌋, keeping the first GPU with the highest score;
/// other pods take the least-left fitting GPUs for F′ and the
/// lowest-numbered free GPUs for the placement. `f_now` is F of `node`.
#[must_use]
pub fn fgd_score(
    node: &NodeState,
    req: &Request,
    typical: &[TypicalPod],
    f_now: f64,
) -> (i64, Placement) {
    let n = usize::from(node.gpus);
    let mut probe = node.gpu_left;
    let cpu_after = node.cpu_left.saturating_sub(req.cpu_milli);
    let score_of = |f_after: f64| fgd_value(f_now, f_after);
    if req.is_share() {
        let mut best: Option<(i64, usize)> = None;
        for i in 0..n {
            if u32::from(node.gpu_left[i]) < req.gpu_milli {
                continue;
            }
            probe[i] = node.gpu_left[i] - req.gpu_milli as u16;
            let s = score_of(frag_score_parts(
                cpu_after,
                &probe[..n],
                node.model,
                typical,
            ));
            probe[i] = node.gpu_left[i];
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, i));
            }
        }
        return match best {
            Some((s, i)) => (
                s,
                Placement {
                    gpus: 1 << i,
                    milli: req.gpu_milli,
                },
            ),
            None => (0, Placement { gpus: 0, milli: 0 }),
        };
    }
    if req.gpus > 0 {
        // Least-left fitting GPUs first (a stable order), as `Sub` packs.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| node.gpu_left[i]);
        let mut need = req.gpus;
        for i in order {
            if need == 0 {
                break;
            }
            if u32::from(probe[i]) >= req.gpu_milli {
                probe[i] -= req.gpu_milli as u16;
                need -= 1;
            }
        }
    }
    let s = score_of(frag_score_parts(
        cpu_after,
        &probe[..n],
        node.model,
        typical,
    ));
    let at = if req.gpus == 0 {
        Placement { gpus: 0, milli: 0 }
    } else {
        node.lowest_free(req.gpus)
            .unwrap_or(Placement { gpus: 0, milli: 0 })
    };
    (s, at)
}

/// The GPUs the artifact's "best" choice takes (`allocateGpuIdBasedOnBestFit`):
/// a share goes to the first GPU with the least left among those with
/// room; whole GPUs are the lowest-numbered free ones.
#[must_use]
pub fn best_gpus(node: &NodeState, req: &Request) -> Option<Placement> {
    if req.gpus == 0 {
        return Some(Placement { gpus: 0, milli: 0 });
    }
    if req.is_share() {
        let mut pick: Option<usize> = None;
        for (i, &g) in node.gpu_left().iter().enumerate() {
            if u32::from(g) >= req.gpu_milli && pick.is_none_or(|p| g < node.gpu_left[p]) {
                pick = Some(i);
            }
        }
        return pick.map(|i| Placement {
            gpus: 1 << i,
            milli: req.gpu_milli,
        });
    }
    node.lowest_free(req.gpus)
}

/// The GPUs the artifact's "random" choice takes
/// (`allocateGpuIdBasedOnRandomFit`): a share goes to a GPU with room
/// picked by reservoir sampling (one `Intn(k)` per candidate); whole GPUs
/// are the lowest-numbered free ones.
pub fn random_gpus(node: &NodeState, req: &Request, rng: &mut GoRand) -> Option<Placement> {
    if !req.is_share() {
        return best_gpus(node, req);
    }
    let mut pick = None;
    let mut seen = 0;
    for (i, &g) in node.gpu_left().iter().enumerate() {
        if u32::from(g) >= req.gpu_milli {
            seen += 1;
            if rng.intn(seen) == 0 {
                pick = Some(i);
            }
        }
    }
    pick.map(|i| Placement {
        gpus: 1 << i,
        milli: req.gpu_milli,
    })
}

/// BestFit's normalisation over the feasible nodes
/// (`plugin_utils.go: NormalizeScore`): (s − lo)·100/(hi − lo) in
/// integers, all 0 when every score is equal.
#[must_use]
pub fn normalize(raw: i64, lo: i64, hi: i64) -> i64 {
    if hi == lo {
        0
    } else {
        (raw - lo) * MAX_SCORE / (hi - lo)
    }
}
