//! Executable form of the [`Allocator`] contract, for property tests of
//! every strategy — including your own.
//!
//! [`check_script`] drives an allocator through a script of steps and
//! checks after each one that no node is in two grants, that grants hold
//! only nodes that were available, that the free count is conserved, that
//! refusals change nothing, that a release restores exactly the nodes it
//! returns, and that a double release is refused. It also runs the script
//! on a second, fresh instance in lockstep (the choice must be
//! deterministic: same steps, same grants), and after releasing every grant
//! runs it once more against a fresh instance with the same faults (the
//! released strategy must behave as a fresh one).
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

use partalloc_topology::{NodeId, NodeSet, Topology};
use thiserror::Error;

use crate::registry::{AllocatorRegistry, AllocatorSpec};
use crate::{AllocError, Allocator, Grant, ReleaseError, Request};

/// Builds a fresh instance of the strategy under test, on the same machine.
pub type Fresh<'a> = dyn Fn() -> Result<Box<dyn Allocator>, String> + 'a;

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

/// Runs `script` on `alloc`, checking the contract after every step, with
/// fresh instances built by the built-in registry from `alloc.name()` (see
/// [`check_script_in`] for a registry with your own strategies and
/// [`check_script_with`] for a strategy in no registry).
///
/// # Errors
/// The first [`Violation`] found; a strategy whose name the registry
/// cannot build is reported as one.
pub fn check_script(alloc: &mut dyn Allocator, script: &[Step]) -> Result<Summary, Violation> {
    check_script_in(&crate::registry::ALLOCATORS, alloc, script)
}

/// As [`check_script`], with fresh instances built by `registry` (for
/// example the built-ins extended with your own strategies) from
/// `alloc.name()`.
///
/// ```
/// use partalloc_allocators::conformance::{check_script_in, Step};
/// use partalloc_allocators::registry::{self, ANY_TOPOLOGY, Entry, StrategyInfo};
/// use partalloc_allocators::{AllocError, Managed, Partition, Request, Strategy, View};
///
/// // The lowest free nodes, as paging grants them: an outside strategy.
/// #[derive(Debug, Clone)]
/// struct Mine;
/// impl Strategy for Mine {
///     type Record = Partition;
///     fn name(&self) -> String { "mine".to_owned() }
///     fn choose(&mut self, v: &View<'_>, r: &Request) -> Result<Option<Partition>, AllocError> {
///         let want = v.wanted_nodes(r)? as usize;
///         let free = (0..v.total_nodes() as u32).filter(|&n| v.is_available(n));
///         let nodes: Vec<u32> = free.take(want).collect();
///         Ok((nodes.len() == want).then_some(Partition::Nodes(nodes)))
///     }
/// }
/// let mut strategies = registry::builtin();
/// strategies.register(Entry {
///     info: StrategyInfo {
///         name: "mine",
///         summary: "the lowest free nodes",
///         source: "a test",
///         params: &[],
///         topologies: ANY_TOPOLOGY,
///     },
///     build: |t, _| Ok(Box::new(Managed::new(t.clone(), Mine))),
/// })?;
/// let mut a = strategies.build("mine", &"hypercube:3".parse()?)?;
/// let script = [Step::Allocate(Request::nodes(3)), Step::Release(0)];
/// assert_eq!(check_script_in(&strategies, a.as_mut(), &script)?.granted, 1);
/// // The built-in registry does not know it.
/// let v = partalloc_allocators::conformance::check_script(a.as_mut(), &script).unwrap_err();
/// assert!(v.problem.contains("unknown allocation strategy \"mine\""), "{v}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`check_script`].
pub fn check_script_in(
    registry: &AllocatorRegistry,
    alloc: &mut dyn Allocator,
    script: &[Step],
) -> Result<Summary, Violation> {
    let name = alloc.name();
    let topology = alloc.topology().clone();
    let fresh = move || {
        registry.build(&name, &topology).map_err(|e| {
            format!(
                "{e} (for a strategy outside the registry, register it and use \
                 check_script_in, or use check_script_with)"
            )
        })
    };
    check_script_with(alloc, &fresh, script)
}

/// Builds the strategy of `spec` for `topology` and runs `script` on it
/// as [`check_script_with`] does, with fresh instances from the same spec.
///
/// # Errors
/// A [`Violation`] at step 0 if the spec cannot be built for `topology`,
/// otherwise as [`check_script_with`].
pub fn check_spec(
    spec: &AllocatorSpec,
    topology: &Topology,
    script: &[Step],
) -> Result<Summary, Violation> {
    let fresh = || spec.build(topology).map_err(|e| e.to_string());
    let mut alloc = fresh().map_err(|problem| Violation {
        step: 0,
        what: "setup".to_owned(),
        problem: format!("{spec} cannot be built for {topology}: {problem}"),
    })?;
    check_script_with(alloc.as_mut(), &fresh, script)
}

/// Runs `script` on `alloc` (which must hold no live grant), checking the
/// contract after every step:
///
/// 1. the script runs on `alloc` and, in lockstep, on a fresh instance
///    from `fresh` with the same faults; every step must have the same
///    outcome on both, every grant the same partition (determinism); on
///    odd steps the twin is given the partition `alloc` granted through
///    [`Allocator::allocate_at`] instead, where the strategy supports it and
///    recognises that partition, so later steps check that a granted
///    placement updates the strategy's state as its own choice would;
/// 2. every remaining grant is released, and the allocator must have no
///    busy node;
/// 3. the script runs again on `alloc` and, in lockstep, on another fresh
///    instance with the faults `alloc` has now: releasing every grant must
///    have returned the strategy to a fresh one's state. Every grant is
///    released again at the end.
///
/// The contract checks run on `alloc` throughout; the [`Summary`] counts
/// the first pass.
///
/// # Errors
/// The first [`Violation`] found (steps of the second pass are numbered
/// after the script's length).
pub fn check_script_with(
    alloc: &mut dyn Allocator,
    fresh: &Fresh<'_>,
    script: &[Step],
) -> Result<Summary, Violation> {
    let setup = |problem: String| Violation {
        step: 0,
        what: "setup".to_owned(),
        problem,
    };
    if alloc.live_grants() != 0 {
        return Err(setup(format!(
            "the allocator holds {} live grants; start from one without",
            alloc.live_grants()
        )));
    }
    let twin_with_faults = |alloc: &dyn Allocator, when: &str| {
        let mut twin = fresh().map_err(|e| setup(format!("no fresh instance {when}: {e}")))?;
        for n in alloc.faulty_nodes().iter() {
            twin.mark_faulty(n).map_err(|e| {
                setup(format!(
                    "a fresh instance refused to mark node {n} faulty {when}: {e}"
                ))
            })?;
        }
        Ok::<_, Violation>(twin)
    };
    let mut summary = Summary::default();
    let mut twin = twin_with_faults(alloc, "at the start")?;
    let mut pass = Pass {
        alloc,
        twin: twin.as_mut(),
        offset: 0,
        versus: "a second instance given the same steps",
    };
    let live = pass.run(script, &mut summary)?;
    pass.release_all(live, script.len())?;
    let alloc = pass.alloc;
    let mut fresh_twin = twin_with_faults(alloc, "after releasing every grant")?;
    let mut pass = Pass {
        alloc,
        twin: fresh_twin.as_mut(),
        offset: script.len() + 1,
        versus: "a fresh instance with the same faults, after every grant was released",
    };
    let live = pass.run(script, &mut Summary::default())?;
    pass.release_all(live, 2 * script.len() + 1)?;
    Ok(summary)
}

/// An allocator's answer to an allocation.
type Answer = Result<Grant, AllocError>;

/// A live grant on the allocator under test (with its nodes) and the
/// twin's grant for the same step.
type Live = Vec<(Grant, Vec<NodeId>, Grant)>;

/// One pass of a script over the allocator under test and a twin that must
/// answer every step the same way.
struct Pass<'a> {
    alloc: &'a mut dyn Allocator,
    twin: &'a mut dyn Allocator,
    /// Added to step indices in violations.
    offset: usize,
    /// What the twin is, for messages.
    versus: &'static str,
}

impl Pass<'_> {
    fn fail(&self, step: usize, what: &Step, problem: String) -> Violation {
        Violation {
            step: self.offset + step,
            what: format!("{what:?}"),
            problem,
        }
    }

    fn differs(&self, step: usize, what: &Step, ours: String, theirs: String) -> Violation {
        self.fail(
            step,
            what,
            format!("{ours}, but {theirs} on {}", self.versus),
        )
    }

    /// Releases every live grant on both, then checks that nothing is busy.
    fn release_all(&mut self, live: Live, step: usize) -> Result<(), Violation> {
        let what = Step::Release(0);
        for (g, _, t) in live {
            self.alloc
                .release(&g)
                .map_err(|e| self.fail(step, &what, format!("final release refused: {e}")))?;
            self.twin.release(&t).map_err(|e| {
                self.fail(
                    step,
                    &what,
                    format!("final release refused on {}: {e}", self.versus),
                )
            })?;
        }
        if !self.alloc.busy_nodes().is_empty() || self.alloc.live_grants() != 0 {
            return Err(self.fail(step, &what, "nodes busy after releasing everything".into()));
        }
        Ok(())
    }

    /// The twin's answer to `req`, which the allocator under test answered
    /// with `ours`: on odd steps a grant is repeated on the twin with
    /// [`Allocator::allocate_at`] where the strategy supports it and lists
    /// the partition, so the later steps check that a placement chosen by
    /// the caller leaves the strategy choosing as its own allocation does;
    /// otherwise the twin allocates.
    fn twin_allocate(
        &mut self,
        step: usize,
        req: &Request,
        ours: &Result<Grant, AllocError>,
    ) -> Result<Grant, AllocError> {
        if let (1, Ok(g)) = (step % 2, ours) {
            match self.twin.allocate_at(req, g.partition()) {
                Err(AllocError::PlacementUnsupported { .. } | AllocError::Unrecognized { .. }) => {}
                answer => return answer,
            }
        }
        self.twin.allocate(req)
    }

    /// The probed allocation of `req` on the allocator under test, then
    /// the twin's answer ([`Pass::twin_allocate`]).
    fn allocate_both(
        &mut self,
        step: usize,
        what: &Step,
        req: &Request,
    ) -> Result<(Answer, Answer), Violation> {
        let ours = self.probed_allocate(step, what, req)?;
        let theirs = self.twin_allocate(step, req, &ours);
        Ok((ours, theirs))
    }

    /// Allocates `req` after probing it: a probe changes nothing, and one
    /// that answers agrees with the allocation (`Ok(true)` when granted,
    /// `Ok(false)` for no room, the allocation's own error otherwise).
    fn probed_allocate(
        &mut self,
        step: usize,
        what: &Step,
        req: &Request,
    ) -> Result<Result<Grant, AllocError>, Violation> {
        let before = snapshot(self.alloc);
        let probe = self.alloc.can_allocate(req);
        if !same(&before, &snapshot(self.alloc)) {
            return Err(self.fail(step, what, "can_allocate changed the state".into()));
        }
        let result = self.alloc.allocate(req);
        let agrees = match (&probe, &result) {
            (Err(AllocError::ProbeUnsupported { .. }), _) => true,
            (Ok(can), Ok(_)) => *can,
            (Ok(can), Err(AllocError::NoRoom { .. })) => !*can,
            (Err(p), Err(r)) => p == r,
            _ => false,
        };
        if !agrees {
            let granted = result.as_ref().map(|g| g.granted_nodes());
            return Err(self.fail(
                step,
                what,
                format!("can_allocate gave {probe:?} but allocate {granted:?}"),
            ));
        }
        Ok(result)
    }

    fn run(&mut self, script: &[Step], summary: &mut Summary) -> Result<Live, Violation> {
        let total = self.alloc.total_nodes();
        let topology = self.alloc.topology().clone();
        let mut live: Live = Vec::new();
        for (step, what) in script.iter().enumerate() {
            let before = snapshot(self.alloc);
            match what {
                Step::Allocate(req) => match self.allocate_both(step, what, req)? {
                    (Ok(g), Ok(t)) => {
                        let nodes = g.partition().node_list(&topology).map_err(|e| {
                            self.fail(step, what, format!("grant does not fit: {e}"))
                        })?;
                        if nodes.len() as u64 != g.granted_nodes() {
                            return Err(self.fail(
                                step,
                                what,
                                "granted count differs from nodes".into(),
                            ));
                        }
                        if g.granted_nodes() < req.node_count() {
                            return Err(self.fail(
                                step,
                                what,
                                "fewer nodes granted than requested".into(),
                            ));
                        }
                        if g.requested_nodes() != req.node_count() {
                            return Err(self.fail(
                                step,
                                what,
                                "requested count misrecorded".into(),
                            ));
                        }
                        if let Some(n) = nodes
                            .iter()
                            .find(|&&n| before.busy.contains(n) || before.faulty.contains(n))
                        {
                            return Err(self.fail(
                                step,
                                what,
                                format!("node {n} was not available"),
                            ));
                        }
                        if g.partition() != t.partition() {
                            return Err(self.differs(
                                step,
                                what,
                                format!("granted {}", g.partition()),
                                format!("{}", t.partition()),
                            ));
                        }
                        summary.granted += 1;
                        live.push((g, nodes, t));
                    }
                    (Err(e), theirs) => {
                        if !same(&before, &snapshot(self.alloc)) {
                            return Err(self.fail(
                                step,
                                what,
                                format!("refusal ({e}) changed the state"),
                            ));
                        }
                        match theirs {
                            Err(f) if f == e => {}
                            Err(f) => {
                                return Err(self.differs(
                                    step,
                                    what,
                                    format!("refused ({e})"),
                                    format!("refused differently ({f})"),
                                ));
                            }
                            Ok(t) => {
                                return Err(self.differs(
                                    step,
                                    what,
                                    format!("refused ({e})"),
                                    format!("granted {}", t.partition()),
                                ));
                            }
                        }
                        match e {
                            AllocError::NoRoom { .. } => summary.no_room += 1,
                            _ => summary.rejected += 1,
                        }
                    }
                    (Ok(g), Err(f)) => {
                        return Err(self.differs(
                            step,
                            what,
                            format!("granted {}", g.partition()),
                            format!("refused ({f})"),
                        ));
                    }
                },
                Step::Release(k) | Step::ReleaseTwice(k) => {
                    if live.is_empty() {
                        continue;
                    }
                    let (g, nodes, t) = live.swap_remove(k % live.len());
                    self.alloc
                        .release(&g)
                        .map_err(|e| self.fail(step, what, format!("release refused: {e}")))?;
                    self.twin.release(&t).map_err(|e| {
                        self.differs(
                            step,
                            what,
                            "released".into(),
                            format!("release refused ({e})"),
                        )
                    })?;
                    let mut expect = before.busy.clone();
                    for &n in &nodes {
                        // Nodes were checked to be in range when granted.
                        let _ = expect.remove(n);
                    }
                    if self.alloc.busy_nodes() != expect {
                        return Err(self.fail(
                            step,
                            what,
                            "release did not free exactly its nodes".into(),
                        ));
                    }
                    summary.released += 1;
                    if matches!(what, Step::ReleaseTwice(_)) {
                        let mid = snapshot(self.alloc);
                        match self.alloc.release(&g) {
                            Err(ReleaseError::NotLive { .. }) => {}
                            other => {
                                return Err(self.fail(
                                    step,
                                    what,
                                    format!("double release gave {other:?}, not NotLive"),
                                ));
                            }
                        }
                        if !same(&mid, &snapshot(self.alloc)) {
                            return Err(self.fail(
                                step,
                                what,
                                "refused release changed the state".into(),
                            ));
                        }
                    }
                }
                Step::MarkFaulty(n) | Step::Repair(n) => {
                    let fault = matches!(what, Step::MarkFaulty(_));
                    let (ours, theirs) = if fault {
                        (self.alloc.mark_faulty(*n), self.twin.mark_faulty(*n))
                    } else {
                        (self.alloc.repair(*n), self.twin.repair(*n))
                    };
                    if ours.is_err() && !same(&before, &snapshot(self.alloc)) {
                        return Err(self.fail(
                            step,
                            what,
                            format!(
                                "refused {} changed the state",
                                if fault { "fault marking" } else { "repair" }
                            ),
                        ));
                    }
                    if ours.is_ok() != theirs.is_ok() {
                        return Err(self.differs(
                            step,
                            what,
                            format!("{ours:?}"),
                            format!("{theirs:?}"),
                        ));
                    }
                }
            }
            check_state(self.alloc, total, &live).map_err(|p| self.fail(step, what, p))?;
        }
        Ok(live)
    }
}

/// The contract's invariants between steps: live grants disjoint and equal
/// to the busy set, no faulty node busy, the free count and
/// `is_available` consistent with both sets, the live count right.
fn check_state(alloc: &dyn Allocator, total: usize, live: &Live) -> Result<(), String> {
    let s = snapshot(alloc);
    let mut union = NodeSet::new(total);
    let mut count = 0usize;
    for (g, nodes, _) in live {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paging::Paging;
    use crate::{FaultError, Partition};

    /// Paging that, once it has seen a release, skips the lowest free node
    /// (a next-fit style memory): deterministic, but not fresh again after
    /// everything is released.
    #[derive(Debug)]
    struct Sticky {
        inner: crate::strategy::Managed<Paging>,
        released: bool,
        /// What `can_allocate` answers, if anything (always the same).
        probe: Option<bool>,
    }

    impl Allocator for Sticky {
        fn name(&self) -> String {
            "sticky".to_owned()
        }
        fn topology(&self) -> &Topology {
            self.inner.topology()
        }
        fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
            if !self.released {
                return self.inner.allocate(request);
            }
            let hole = self.inner.allocate(&Request::nodes(1))?;
            let grant = self.inner.allocate(request);
            let _ = self.inner.release(&hole);
            grant
        }
        fn can_allocate(&self, request: &Request) -> Result<bool, AllocError> {
            self.probe
                .map_or_else(|| self.inner.can_allocate(request), Ok)
        }
        fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
            self.inner.release(grant)?;
            self.released = true;
            Ok(())
        }
        fn free_nodes(&self) -> usize {
            self.inner.free_nodes()
        }
        fn live_grants(&self) -> usize {
            self.inner.live_grants()
        }
        fn is_available(&self, node: NodeId) -> bool {
            self.inner.is_available(node)
        }
        fn busy_nodes(&self) -> NodeSet {
            self.inner.busy_nodes()
        }
        fn faulty_nodes(&self) -> NodeSet {
            self.inner.faulty_nodes()
        }
        fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
            self.inner.mark_faulty(node)
        }
        fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
            self.inner.repair(node)
        }
        fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
            self.inner.recognizable(request)
        }
    }

    fn machine() -> Topology {
        "hypercube:3".parse().unwrap()
    }

    #[test]
    fn a_strategy_that_remembers_releases_is_caught_after_the_reset() {
        let script = [
            Step::Allocate(Request::nodes(2)),
            Step::Release(0),
            Step::Allocate(Request::nodes(2)),
        ];
        let fresh = || -> Result<Box<dyn Allocator>, String> {
            Ok(Box::new(Sticky {
                inner: Paging::new(machine()).unwrap(),
                released: false,
                probe: None,
            }))
        };
        let mut a = fresh().unwrap();
        // Two instances given the same steps agree: the first pass is clean.
        let v = check_script_with(a.as_mut(), &fresh, &script).unwrap_err();
        assert_eq!(v.step, script.len() + 1, "{v}");
        assert!(
            v.problem.contains("fresh instance with the same faults"),
            "{v}"
        );
    }

    #[test]
    fn two_instances_that_disagree_are_caught_in_lockstep() {
        // The twin is a plain paging allocator, the allocator under test
        // is not: the first grant after a release differs.
        let script = [
            Step::Allocate(Request::nodes(2)),
            Step::Release(0),
            Step::Allocate(Request::nodes(2)),
        ];
        let twin = || -> Result<Box<dyn Allocator>, String> {
            Ok(Box::new(Paging::new(machine()).unwrap()))
        };
        let mut a = Sticky {
            inner: Paging::new(machine()).unwrap(),
            released: false,
            probe: None,
        };
        let v = check_script_with(&mut a, &twin, &script).unwrap_err();
        assert_eq!(v.step, 2, "{v}");
        assert!(
            v.problem.contains("a second instance given the same steps"),
            "{v}"
        );
    }

    #[test]
    fn an_allocator_with_live_grants_is_refused() {
        let mut p = Paging::new(machine()).unwrap();
        let _g = p.allocate(&Request::nodes(1)).unwrap();
        let v = check_script(&mut p, &[]).unwrap_err();
        assert!(v.problem.contains("1 live grants"), "{v}");
    }

    #[test]
    fn a_name_the_registry_cannot_build_is_reported() {
        let mut a = Sticky {
            inner: Paging::new(machine()).unwrap(),
            released: false,
            probe: None,
        };
        let v = check_script(&mut a, &[]).unwrap_err();
        assert!(v.problem.contains("check_script_with"), "{v}");
    }

    #[test]
    fn a_probe_that_disagrees_with_the_allocation_is_caught() {
        // Room for 8 nodes: a probe saying "no" to 2 nodes is wrong, and so
        // is one saying "yes" to 8 once 2 are busy.
        for (answer, wrong_at) in [(false, 0), (true, 1)] {
            let script = [
                Step::Allocate(Request::nodes(2)),
                Step::Allocate(Request::nodes(8)),
            ];
            let mut a = Sticky {
                inner: Paging::new(machine()).unwrap(),
                released: false,
                probe: Some(answer),
            };
            let twin = || -> Result<Box<dyn Allocator>, String> {
                Ok(Box::new(Paging::new(machine()).unwrap()))
            };
            let v = check_script_with(&mut a, &twin, &script).unwrap_err();
            assert_eq!(v.step, wrong_at, "{v}");
            assert!(v.problem.contains("can_allocate gave"), "{v}");
        }
    }
}
