//! Executable form of the [`Allocator`] contract, for property tests of
//! every strategy — including your own.
//!
//! [`check_script`] drives an allocator through a script of steps and
//! checks after each one that no node is in two grants, that grants hold
//! only nodes that were available, that the free count is conserved, that
//! refusals change nothing, that a release restores exactly the nodes it
//! returns, and that a double release is refused.
//!
//! ```
//! use partalloc_allocators::conformance::{check_script, Step};
//! use partalloc_allocators::{paging::Paging, Request};
//! let mut p = Paging::new("hypercube:4".parse()?)?;
//! let script = [
//!     Step::Allocate(Request::nodes(5)),
//!     Step::Allocate(Request::nodes(20)), // refused: too big
//!     Step::MarkFaulty(15),
//!     Step::Allocate(Request::nodes(3)),
//!     Step::Release(0),
//!     Step::ReleaseTwice(0),
//! ];
//! let summary = check_script(&mut p, &script)?;
//! assert_eq!(summary.granted, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::{NodeId, NodeSet};
use thiserror::Error;

use crate::{AllocError, Allocator, Grant, ReleaseError, Request};

/// One step of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Allocate a request (refusals are allowed and checked).
    Allocate(Request),
    /// Release the live grant at this index modulo the number of live
    /// grants (nothing if none is live).
    Release(usize),
    /// Release that grant, then try to release it again (must be refused).
    ReleaseTwice(usize),
    /// Mark a node faulty (refusals for busy nodes are allowed and checked).
    MarkFaulty(NodeId),
    /// Repair a node.
    Repair(NodeId),
}

/// A broken contract, with the step at which it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("step {step} ({what}): {problem}")]
pub struct Violation {
    /// Index of the step in the script.
    pub step: usize,
    /// The step, printed.
    pub what: String,
    /// What went wrong.
    pub problem: String,
}

/// What a script did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Requests granted.
    pub granted: usize,
    /// Requests refused for lack of room.
    pub no_room: usize,
    /// Requests refused as unsupported or invalid.
    pub rejected: usize,
    /// Grants released.
    pub released: usize,
}

struct Snapshot {
    busy: NodeSet,
    faulty: NodeSet,
    free: usize,
    live: usize,
}

fn snapshot(a: &dyn Allocator) -> Snapshot {
    Snapshot {
        busy: a.busy_nodes(),
        faulty: a.faulty_nodes(),
        free: a.free_nodes(),
        live: a.live_grants(),
    }
}

fn same(a: &Snapshot, b: &Snapshot) -> bool {
    a.busy == b.busy && a.faulty == b.faulty && a.free == b.free && a.live == b.live
}

/// Runs `script` on `alloc`, checking the contract after every step. At
/// the end every remaining grant is released and the allocator must have
/// no busy node.
///
/// # Errors
/// The first [`Violation`] found.
pub fn check_script(alloc: &mut dyn Allocator, script: &[Step]) -> Result<Summary, Violation> {
    let total = alloc.total_nodes();
    let mut live: Vec<(Grant, Vec<NodeId>)> = Vec::new();
    let mut summary = Summary::default();
    let topology = *alloc.topology();
    let mut i = 0;
    let fail = |step: usize, what: &Step, problem: String| Violation {
        step,
        what: format!("{what:?}"),
        problem,
    };
    let check_state =
        |alloc: &dyn Allocator, live: &[(Grant, Vec<NodeId>)]| -> Result<(), String> {
            let s = snapshot(alloc);
            let mut union = NodeSet::new(total);
            let mut count = 0usize;
            for (g, nodes) in live {
                for &n in nodes {
                    if !union.insert(n).map_err(|e| e.to_string())? {
                        return Err(format!(
                            "node {n} is in two live grants (one is {})",
                            g.id()
                        ));
                    }
                    count += 1;
                }
            }
            if s.busy != union {
                return Err(format!(
                    "busy_nodes() {:?} differs from the union of live grants {:?}",
                    s.busy, union
                ));
            }
            if !s.busy.is_disjoint(&s.faulty) {
                return Err("a faulty node is busy".to_owned());
            }
            let expect_free = total - count - s.faulty.count();
            if s.free != expect_free {
                return Err(format!(
                    "free_nodes() = {} but {} nodes are neither busy nor faulty",
                    s.free, expect_free
                ));
            }
            if s.live != live.len() {
                return Err(format!(
                    "live_grants() = {} but {} are live",
                    s.live,
                    live.len()
                ));
            }
            for n in 0..total as NodeId {
                if alloc.is_available(n) == (s.busy.contains(n) || s.faulty.contains(n)) {
                    return Err(format!("is_available({n}) disagrees with busy/faulty sets"));
                }
            }
            Ok(())
        };

    for (step, what) in script.iter().enumerate() {
        let before = snapshot(alloc);
        match what {
            Step::Allocate(req) => match alloc.allocate(req) {
                Ok(g) => {
                    let nodes = g
                        .partition()
                        .node_list(&topology)
                        .map_err(|e| fail(step, what, format!("grant does not fit: {e}")))?;
                    if nodes.len() as u64 != g.granted_nodes() {
                        return Err(fail(step, what, "granted count differs from nodes".into()));
                    }
                    if g.granted_nodes() < req.node_count() {
                        return Err(fail(
                            step,
                            what,
                            "fewer nodes granted than requested".into(),
                        ));
                    }
                    if g.requested_nodes() != req.node_count() {
                        return Err(fail(step, what, "requested count misrecorded".into()));
                    }
                    if let Some(n) = nodes
                        .iter()
                        .find(|&&n| before.busy.contains(n) || before.faulty.contains(n))
                    {
                        return Err(fail(step, what, format!("node {n} was not available")));
                    }
                    summary.granted += 1;
                    live.push((g, nodes));
                }
                Err(e) => {
                    if !same(&before, &snapshot(alloc)) {
                        return Err(fail(step, what, format!("refusal ({e}) changed the state")));
                    }
                    match e {
                        AllocError::NoRoom { .. } => summary.no_room += 1,
                        _ => summary.rejected += 1,
                    }
                }
            },
            Step::Release(k) | Step::ReleaseTwice(k) => {
                if live.is_empty() {
                    continue;
                }
                let (g, nodes) = live.swap_remove(k % live.len());
                alloc
                    .release(&g)
                    .map_err(|e| fail(step, what, format!("release refused: {e}")))?;
                let mut expect = before.busy.clone();
                for &n in &nodes {
                    // Nodes were checked to be in range when granted.
                    let _ = expect.remove(n);
                }
                if alloc.busy_nodes() != expect {
                    return Err(fail(
                        step,
                        what,
                        "release did not free exactly its nodes".into(),
                    ));
                }
                summary.released += 1;
                if matches!(what, Step::ReleaseTwice(_)) {
                    let mid = snapshot(alloc);
                    match alloc.release(&g) {
                        Err(ReleaseError::NotLive { .. }) => {}
                        other => {
                            return Err(fail(
                                step,
                                what,
                                format!("double release gave {other:?}, not NotLive"),
                            ));
                        }
                    }
                    if !same(&mid, &snapshot(alloc)) {
                        return Err(fail(step, what, "refused release changed the state".into()));
                    }
                }
            }
            Step::MarkFaulty(n) => {
                if alloc.mark_faulty(*n).is_err() && !same(&before, &snapshot(alloc)) {
                    return Err(fail(
                        step,
                        what,
                        "refused fault marking changed the state".into(),
                    ));
                }
            }
            Step::Repair(n) => {
                if alloc.repair(*n).is_err() && !same(&before, &snapshot(alloc)) {
                    return Err(fail(step, what, "refused repair changed the state".into()));
                }
            }
        }
        check_state(alloc, &live).map_err(|p| fail(step, what, p))?;
        i = step + 1;
    }
    for (g, _) in live.drain(..) {
        alloc
            .release(&g)
            .map_err(|e| fail(i, &Step::Release(0), format!("final release refused: {e}")))?;
    }
    if !alloc.busy_nodes().is_empty() || alloc.live_grants() != 0 {
        return Err(fail(
            i,
            &Step::Release(0),
            "nodes busy after releasing everything".into(),
        ));
    }
    Ok(summary)
}
