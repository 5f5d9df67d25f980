//! FGD's fragmentation measure: a workload's typical pods and the expected
//! GPU fragmentation of a node against them (the artifact's
//! `pkg/utils/frag.go`: `GetTypicalPods`, `NodeGpuShareFragAmount`,
//! `GetNodePodFrag`).
//!
//! A node's idle GPU thousandths count as fragmented for a typical pod
//! when that pod could not start on the node (too little CPU, no GPU of
//! its model, too few GPUs with enough left), and, when it could, the idle
//! thousandths on GPUs too small for it still do. Weighting by the typical
//! pods' frequencies gives the node's expected fragmentation.

use std::collections::HashMap;

use crate::model::{NodeState, Request};
use crate::openb::Pod;

/// The classes a node's idle GPU thousandths fall into for one typical pod,
/// in the artifact's order (`FragRatioDataMap`).
pub const CLASSES: [&str; 7] = [
    "q1_lack_both",
    "q2_lack_gpu",
    "q3_satisfied",
    "q4_lack_cpu",
    "xl_satisfied",
    "xr_lack_cpu",
    "no_access",
];
/// Index of the one class that is not fragmentation (the pod fits).
pub const Q3: usize = 2;
const Q1: usize = 0;
const Q2: usize = 1;
const Q4: usize = 3;
const XL: usize = 4;
const XR: usize = 5;
const NA: usize = 6;

/// Idle GPU thousandths of a node (or cluster) per class.
pub type FragAmount = [f64; 7];

pub use partalloc_topology::gpushare::TypicalPod;

/// The typical pods of a workload as the artifact picks them: pods counted
/// by (CPU, GPU thousandths, GPUs, models as written), most frequent
/// first (ties by those four in decreasing order), taken one at a time
/// until they cover at least `threshold_pct` % of the pods; frequencies
/// are then renormalised over the covered share.
#[must_use]
pub fn typical_pods(pods: &[Pod], threshold_pct: u32) -> Vec<TypicalPod> {
    let mut counts: HashMap<(u32, u32, u8, &str), (u64, u64)> = HashMap::new();
    for p in pods {
        let r = &p.request;
        let e = counts
            .entry((r.cpu_milli, r.gpu_milli, r.gpus, p.spec.as_str()))
            .or_insert((0, r.models));
        e.0 += 1;
    }
    let mut list: Vec<_> = counts.into_iter().collect();
    list.sort_by(|(ka, (ca, _)), (kb, (cb, _))| cb.cmp(ca).then_with(|| kb.cmp(ka)));
    let total = pods.len() as f64;
    let expected = f64::from(threshold_pct) * total / 100.0;
    let mut cum = 0.0_f64;
    let mut out = Vec::new();
    for ((cpu, milli, gpus, spec), (count, models)) in &list {
        if cum >= expected {
            break;
        }
        cum += *count as f64;
        out.push(TypicalPod {
            cpu_milli: *cpu,
            gpus: *gpus,
            gpu_milli: *milli,
            models: *models,
            spec: (*spec).to_owned(),
            count: *count,
            freq: *count as f64 / total,
        });
    }
    if out.len() < list.len() {
        let covered = cum / total;
        for t in &mut out {
            t.freq /= covered;
        }
    }
    out
}

/// The node's idle GPU thousandths per class, weighted by the typical
/// pods' frequencies (accumulated in typical-pod order, as the artifact
/// does, so the floating-point sums are the same).
#[must_use]
pub fn node_frag(node: &NodeState, typical: &[TypicalPod]) -> FragAmount {
    frag_parts(node.cpu_left, node.gpu_left(), node.model, typical)
}

/// [`node_frag`] of a node given by its CPU left, its GPUs' thousandths
/// left and its GPU model.
#[must_use]
pub fn frag_parts(
    cpu_left: u32,
    gpu_left: &[u16],
    model: u8,
    typical: &[TypicalPod],
) -> FragAmount {
    let mut data = [0.0; 7];
    let left: u32 = gpu_left.iter().map(|&g| u32::from(g)).sum();
    for t in typical {
        let cpu_ok = cpu_left >= t.cpu_milli;
        if t.gpu_milli == 0 {
            data[if cpu_ok { XL } else { XR }] += t.freq * f64::from(left);
            continue;
        }
        if gpu_left.is_empty() || t.models != 0 && t.models & crate::model::model_bit(model) == 0 {
            data[NA] += t.freq * f64::from(left);
            continue;
        }
        let mut fitting = 0_usize;
        let mut small = 0_u32;
        for &g in gpu_left {
            if u32::from(g) >= t.gpu_milli {
                fitting += 1;
            } else {
                small += u32::from(g);
            }
        }
        let c = match (fitting >= usize::from(t.gpus), cpu_ok) {
            (true, true) => Q3,
            (true, false) => Q4,
            (false, true) => Q2,
            (false, false) => Q1,
        };
        if c == Q3 {
            data[Q2] += t.freq * f64::from(small);
            data[Q3] += t.freq * f64::from(left - small);
        } else {
            data[c] += t.freq * f64::from(left);
        }
    }
    data
}

/// The fragmentation of a [`FragAmount`]: every class but [`Q3`], summed
/// in class order.
#[must_use]
pub fn frag_of(data: &FragAmount) -> f64 {
    let mut out = 0.0;
    for (i, v) in data.iter().enumerate() {
        if i != Q3 {
            out += v;
        }
    }
    out
}

/// The expected fragmentation of a node: [`frag_of`] its [`node_frag`].
#[must_use]
pub fn node_frag_score(node: &NodeState, typical: &[TypicalPod]) -> f64 {
    frag_of(&node_frag(node, typical))
}

/// [`node_frag_score`] of a node given by parts (see [`frag_parts`]).
#[must_use]
pub fn frag_score_parts(cpu_left: u32, gpu_left: &[u16], model: u8, typical: &[TypicalPod]) -> f64 {
    frag_of(&frag_parts(cpu_left, gpu_left, model, typical))
}

/// Whether `req` is one of the typical pods' shapes (used by tests and
/// reports).
#[must_use]
pub fn is_typical(req: &Request, typical: &[TypicalPod]) -> bool {
    typical.iter().any(|t| {
        t.cpu_milli == req.cpu_milli
            && t.gpus == req.gpus
            && t.gpu_milli == req.gpu_milli
            && t.models == req.models
    })
}

/// Exact running sums of many [`FragAmount`]s: each value is held as a
/// fixed-point integer (2⁻⁸⁰ units), so adding and taking away nodes in
/// any order gives the same total, the correctly rounded sum.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExactSum {
    acc: [i128; 7],
}

const SCALE: f64 = 1_208_925_819_614_629_174_706_176.0; // 2^80

fn fixed(v: f64) -> i128 {
    (v * SCALE) as i128
}

impl ExactSum {
    /// Adds one amount.
    pub fn add(&mut self, d: &FragAmount) {
        for (a, v) in self.acc.iter_mut().zip(d) {
            *a += fixed(*v);
        }
    }

    /// Takes one amount away.
    pub fn sub(&mut self, d: &FragAmount) {
        for (a, v) in self.acc.iter_mut().zip(d) {
            *a -= fixed(*v);
        }
    }

    /// The totals per class.
    #[must_use]
    pub fn total(&self) -> FragAmount {
        let mut out = [0.0; 7];
        for (o, a) in out.iter_mut().zip(&self.acc) {
            *o = *a as f64 / SCALE;
        }
        out
    }
}
