//! The [`Strategy`] trait (a strategy only chooses) and [`Managed`], the
//! one allocator that keeps the books for any strategy.
//!
//! A strategy answers "which partition for this request, given the
//! machine as it is now?" from a read-only [`View`] of the machine: its
//! topology, the per-node [`Occupancy`] and the live grants. [`Managed`]
//! owns that state and implements [`Allocator`] once: it validates nothing
//! a strategy must know about, but it records every grant in its
//! [`GrantLedger`] as the strategy's [`GrantRecord`] (so a release trusts
//! only its own copy and a foreign or dead grant is refused without
//! change), has the record mark and free its nodes, takes
//! faults and repairs, answers `is_available`, `free_nodes` and
//! `live_grants` in O(1), checks a chosen partition's nodes for
//! `allocate_at`, and falls back to choosing on a copy of the strategy for
//! a probe the strategy does not answer itself.
//!
//! ```
//! use partalloc_allocators::strategy::{Managed, Strategy, View};
//! use partalloc_allocators::{AllocError, Allocator, Partition, Request};
//!
//! /// The lowest free node, one per request.
//! #[derive(Debug, Clone)]
//! struct Lowest;
//!
//! impl Strategy for Lowest {
//!     type Record = Partition;
//!     fn name(&self) -> String {
//!         "lowest".to_owned()
//!     }
//!     fn choose(&mut self, view: &View<'_>, request: &Request) -> Result<Option<Partition>, AllocError> {
//!         if view.wanted_nodes(request)? != 1 {
//!             let reason = "one node at a time".to_owned();
//!             return Err(AllocError::Invalid { request: *request, reason });
//!         }
//!         let node = (0..view.total_nodes() as u32).find(|&n| view.is_available(n));
//!         Ok(node.map(|n| Partition::Nodes(vec![n])))
//!     }
//! }
//!
//! let mut a = Managed::new("hypercube:3".parse()?, Lowest);
//! a.mark_faulty(0)?;
//! let g = a.allocate(&Request::nodes(1))?;
//! assert_eq!(g.partition(), &Partition::Nodes(vec![1]));
//! assert_eq!((a.free_nodes(), a.live_grants()), (6, 1));
//! assert_eq!(a.can_allocate(&Request::nodes(1)), Ok(true));
//! a.release(&g)?;
//! assert!(a.release(&g).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::ops::Deref;

use partalloc_topology::{GridBox, NodeId, NodeSet, Subcube, Topology};

use crate::allocator::PlacementRules;
use crate::{
    AllocError, Allocator, FaultError, Grant, GrantLedger, Occupancy, Partition, ReleaseError,
    Request,
};

/// What a strategy sees of the machine: read-only, and the same for every
/// hook of one call. `R` is the strategy's [`Strategy::Record`].
#[derive(Debug)]
pub struct View<'a, R = Partition> {
    topology: &'a Topology,
    occupancy: &'a Occupancy,
    grants: &'a GrantLedger<R>,
    generation: u64,
}

impl<R> Clone for View<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for View<'_, R> {}

impl<'a, R> View<'a, R> {
    /// The machine.
    #[must_use]
    pub fn topology(&self) -> &'a Topology {
        self.topology
    }

    /// The busy and faulty nodes.
    #[must_use]
    pub fn occupancy(&self) -> &'a Occupancy {
        self.occupancy
    }

    /// Nodes of the machine.
    #[must_use]
    pub fn total_nodes(&self) -> usize {
        self.occupancy.len()
    }

    /// Whether `node` is neither busy nor faulty (false outside). O(1).
    #[must_use]
    pub fn is_available(&self, node: NodeId) -> bool {
        self.occupancy.is_available(node)
    }

    /// The records of the live grants, in the ledger's slot order.
    pub fn grants(&self) -> impl Iterator<Item = &'a R> + 'a {
        self.grants.iter().map(|(_, p)| p)
    }

    /// Number of live grants.
    #[must_use]
    pub fn live_grants(&self) -> usize {
        self.grants.len()
    }

    /// A number that changes whenever a node becomes busy, free, faulty
    /// or repaired, so a strategy may keep what it read until it changes.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The node count of `request` if this machine can ever serve it
    /// (1 ..= its nodes), else [`AllocError::Invalid`] saying both: the
    /// check every strategy that counts nodes starts with.
    ///
    /// # Errors
    /// [`AllocError::Invalid`] as above.
    pub fn wanted_nodes(&self, request: &Request) -> Result<u64, AllocError> {
        crate::allocator::wanted_nodes(request, self.total_nodes())
    }
}

/// What [`Managed`] keeps of one grant: the partition in the form its
/// strategy finds smallest and quickest to mark (a [`Partition`] for most,
/// a 12-byte [`Subcube`] for the hypercube strategies).
///
/// A record marks and frees its own nodes on the [`Occupancy`], so a
/// subcube or a box is marked a range of bitmap words at a time, and it
/// turns into the [`Partition`] of the grant handed out.
///
/// # Contract
///
/// `mark(busy)` changes exactly the nodes of
/// [`partition`](GrantRecord::partition);
/// [`available`](GrantRecord::available) is true exactly when every node of
/// the partition is available (false if it does not fit the machine).
pub trait GrantRecord: Clone + Send + fmt::Debug {
    /// Marks the nodes busy (`busy`) or frees them; a caller marks busy
    /// only available nodes and frees only the nodes it marked.
    fn mark(&self, occupancy: &mut Occupancy, topology: &Topology, busy: bool);

    /// Whether every node is available.
    fn available(&self, occupancy: &Occupancy, topology: &Topology) -> bool;

    /// The partition granted.
    fn partition(&self) -> Partition;

    /// The partition of the grant this record was just chosen for, asked
    /// once before [`Managed`] keeps the record: by default
    /// [`partition`](GrantRecord::partition). A record that built its
    /// partition while it was chosen hands it over here and keeps only
    /// what it needs (it still marks the same nodes and still answers
    /// `partition` alike).
    #[inline]
    fn take_partition(&mut self) -> Partition {
        self.partition()
    }
}

impl GrantRecord for Partition {
    #[inline]
    fn mark(&self, occupancy: &mut Occupancy, topology: &Topology, busy: bool) {
        mark(occupancy, topology, self, busy);
    }

    fn available(&self, occupancy: &Occupancy, topology: &Topology) -> bool {
        all_available(occupancy, topology, self)
    }

    #[inline]
    fn partition(&self) -> Partition {
        self.clone()
    }
}

/// A subcube of a hypercube, marked one aligned id range at a time.
impl GrantRecord for Subcube {
    #[inline]
    fn mark(&self, occupancy: &mut Occupancy, topology: &Topology, busy: bool) {
        if topology
            .as_hypercube()
            .is_some_and(|c| c.dim() == self.cube_dim())
        {
            if busy {
                occupancy.occupy_subcube(self);
            } else {
                occupancy.vacate_subcube(self);
            }
        } else {
            mark(occupancy, topology, &Partition::Subcube(*self), busy);
        }
    }

    fn available(&self, occupancy: &Occupancy, topology: &Topology) -> bool {
        if topology
            .as_hypercube()
            .is_some_and(|c| c.dim() == self.cube_dim())
        {
            occupancy.subcube_available(self)
        } else {
            all_available(occupancy, topology, &Partition::Subcube(*self))
        }
    }

    #[inline]
    fn partition(&self) -> Partition {
        Partition::Subcube(*self)
    }
}

/// A node list (a [`Partition::Nodes`] without the enum around it),
/// marked one bitmap word at a time.
impl GrantRecord for Vec<NodeId> {
    #[inline]
    fn mark(&self, occupancy: &mut Occupancy, _: &Topology, busy: bool) {
        mark_nodes(occupancy, self, busy);
    }

    fn available(&self, occupancy: &Occupancy, _: &Topology) -> bool {
        self.iter().all(|&n| occupancy.is_available(n))
    }

    #[inline]
    fn partition(&self) -> Partition {
        Partition::Nodes(self.clone())
    }
}

/// An allocation strategy: the choice of a partition, nothing else.
///
/// [`Managed`] runs it: it keeps the topology, the [`Occupancy`], the
/// grant ledger and the faults, and calls these hooks with a [`View`] of
/// that state. Only [`Record`](Strategy::Record), [`name`](Strategy::name)
/// and [`choose`](Strategy::choose) are required; a strategy that has no
/// smaller form of its grants keeps `type Record = Partition`.
///
/// # Contract
///
/// - `choose` returns a partition whose nodes are all available in the
///   view, or `Ok(None)` when nothing it recognises is free
///   ([`Managed`] turns that into [`AllocError::NoRoom`]), or an error for
///   a request no state could serve (`Invalid`) or of a kind it does not
///   serve (`Unsupported`). It decides from the view and its own state
///   only, deterministically. What it changes in its own state while
///   choosing (a split to apply in [`committed`](Strategy::committed), a
///   placer's own records) must be right once the choice is granted:
///   [`Managed`] grants every partition `allocate` gets, and answers a
///   probe that [`fits`](Strategy::fits) leaves open by choosing on a
///   clone it then drops.
/// - The view in [`committed`](Strategy::committed) already shows the
///   grant's nodes busy (its record joins [`View::grants`] as the hook
///   returns); in [`released`](Strategy::released),
///   [`faulted`](Strategy::faulted) and [`repaired`](Strategy::repaired)
///   it already shows the change. The hooks are called only for changes
///   that happened (a refused call reaches no hook).
/// - [`name`](Strategy::name) is the registry text that builds this
///   strategy again (`fsl[dealloc=incremental]`): the registry parser
///   reads it back to the same strategy.
/// - Releasing every grant and repairing every fault must leave the
///   strategy choosing as a fresh one would.
pub trait Strategy: Clone + Send + fmt::Debug {
    /// What [`Managed`] keeps of each grant ([`GrantRecord`]): `Partition`,
    /// or a smaller form such as a [`Subcube`].
    type Record: GrantRecord;

    /// The canonical name with its parameters, as the registry parses it.
    fn name(&self) -> String;

    /// The partition to grant for `request` now (as its record), or `None`
    /// if nothing the strategy recognises is free.
    ///
    /// # Errors
    /// [`AllocError::Invalid`] or [`AllocError::Unsupported`] for a
    /// request the strategy never serves.
    fn choose(
        &mut self,
        view: &View<'_, Self::Record>,
        request: &Request,
    ) -> Result<Option<Self::Record>, AllocError>;

    /// Whether [`choose`](Strategy::choose) would find a partition, when
    /// the strategy can tell without changing anything; `Ok(None)` (the
    /// default) lets [`Managed`] choose on a copy.
    ///
    /// # Errors
    /// As [`choose`](Strategy::choose).
    fn fits(
        &self,
        view: &View<'_, Self::Record>,
        request: &Request,
    ) -> Result<Option<bool>, AllocError> {
        let _ = (view, request);
        Ok(None)
    }

    /// Told that `partition`, just chosen (or prepared by
    /// [`prepare_at`](Strategy::prepare_at)), is now granted.
    fn committed(&mut self, view: &View<'_, Self::Record>, partition: &Self::Record) {
        let _ = (view, partition);
    }

    /// Told that a grant of `partition` was released.
    fn released(&mut self, view: &View<'_, Self::Record>, partition: &Self::Record) {
        let _ = (view, partition);
    }

    /// Given the record of a released grant, after
    /// [`released`](Strategy::released), to keep its memory for a later
    /// record; dropped by default.
    fn recycle(&mut self, record: Self::Record) {
        drop(record);
    }

    /// Whether nodes may be marked faulty and repaired under this
    /// strategy: yes by default (the view shows them unavailable).
    ///
    /// # Errors
    /// [`FaultError::Unsupported`] from a strategy that cannot work around
    /// faults; [`Managed`] then refuses the fault or repair unchanged.
    fn takes_faults(&self) -> Result<(), FaultError> {
        Ok(())
    }

    /// Told that a free node became faulty.
    fn faulted(&mut self, view: &View<'_, Self::Record>, node: NodeId) {
        let _ = (view, node);
    }

    /// Told that a faulty node was repaired.
    fn repaired(&mut self, view: &View<'_, Self::Record>, node: NodeId) {
        let _ = (view, node);
    }

    /// Every partition the strategy can grant for `request` on an empty,
    /// fault-free machine, in its search order (see
    /// [`Allocator::recognizable`]).
    ///
    /// # Errors
    /// As [`choose`](Strategy::choose);
    /// [`AllocError::ListingUnsupported`] by default.
    fn recognizable(
        &self,
        view: &View<'_, Self::Record>,
        request: &Request,
    ) -> Result<Vec<Partition>, AllocError> {
        let _ = (view, request);
        Err(AllocError::ListingUnsupported {
            strategy: self.name(),
        })
    }

    /// The record of `at` if the strategy would ever grant `at` for
    /// `request` (one of its recognizable partitions), for
    /// [`Allocator::allocate_at`]; [`Managed`] then checks that its nodes
    /// are free and calls [`prepare_at`](Strategy::prepare_at).
    ///
    /// # Errors
    /// As [`choose`](Strategy::choose); [`AllocError::Unrecognized`] for a
    /// partition it never grants; [`AllocError::PlacementUnsupported`] by
    /// default.
    fn recognises(
        &self,
        view: &View<'_, Self::Record>,
        request: &Request,
        at: &Partition,
    ) -> Result<Self::Record, AllocError> {
        let _ = (view, request, at);
        Err(AllocError::PlacementUnsupported {
            strategy: self.name(),
        })
    }

    /// Prepares what [`choose`](Strategy::choose) prepares when it picks
    /// `at` (recognised, its nodes free). False refuses `at` as busy and
    /// must change nothing; the default has nothing to prepare.
    fn prepare_at(&mut self, view: &View<'_, Self::Record>, at: &Self::Record) -> bool {
        let _ = (view, at);
        true
    }

    /// The placement rules the strategy follows
    /// ([`Allocator::placement_rules`]); `None` by default.
    fn placement_rules(&self) -> Option<PlacementRules> {
        None
    }
}

/// The allocator of a [`Strategy`]: the machine, its node states, the
/// live grants and the faults, kept once for every strategy.
///
/// It dereferences to the strategy, so a strategy's own inspectors
/// (`fsl.free_submeshes()`) read through it.
#[derive(Debug, Clone)]
pub struct Managed<S: Strategy> {
    topology: Topology,
    occupancy: Occupancy,
    ledger: GrantLedger<S::Record>,
    generation: u64,
    strategy: S,
}

/// A [`View`] of a [`Managed`]'s fields, borrowed apart from its strategy.
macro_rules! view {
    ($m:expr) => {
        View {
            topology: &$m.topology,
            occupancy: &$m.occupancy,
            grants: &$m.ledger,
            generation: $m.generation,
        }
    };
}

impl<S: Strategy> Managed<S> {
    /// `strategy` on `topology`, every node free and healthy.
    #[must_use]
    pub fn new(topology: Topology, strategy: S) -> Self {
        Self {
            occupancy: Occupancy::new(topology.num_nodes()),
            topology,
            ledger: GrantLedger::new(),
            generation: 0,
            strategy,
        }
    }

    /// The strategy.
    #[must_use]
    pub fn strategy(&self) -> &S {
        &self.strategy
    }

    /// The machine as the strategy sees it.
    #[must_use]
    pub fn view(&self) -> View<'_, S::Record> {
        view!(self)
    }

    /// The record kept of a live `grant`.
    ///
    /// # Errors
    /// The grant is not live here ([`ReleaseError`]).
    pub fn record(&self, grant: &Grant) -> Result<&S::Record, ReleaseError> {
        self.ledger.get(grant.id())
    }

    /// The strategy, to change, and the view of the machine beside it.
    #[cfg(test)]
    pub(crate) fn strategy_and_view(&mut self) -> (&mut S, View<'_, S::Record>) {
        let view = view!(self);
        (&mut self.strategy, view)
    }

    /// The same allocator with its (still fresh) strategy changed by `f`:
    /// for a strategy's builder methods.
    #[must_use]
    pub fn map(mut self, f: impl FnOnce(S) -> S) -> Self {
        self.strategy = f(self.strategy);
        self
    }

    /// Records a grant of `record` (its nodes available) and tells the
    /// strategy.
    #[inline]
    pub(crate) fn commit(&mut self, mut record: S::Record, requested: u64) -> Grant {
        record.mark(&mut self.occupancy, &self.topology, true);
        self.generation = self.generation.wrapping_add(1);
        let partition = record.take_partition();
        let view = view!(self);
        self.strategy.committed(&view, &record);
        let id = self.ledger.issue(record);
        Grant::new(id, partition, requested)
    }
}

impl<S: Strategy> Deref for Managed<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.strategy
    }
}

impl<S: Strategy> Allocator for Managed<S> {
    fn name(&self) -> String {
        self.strategy.name()
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    #[inline]
    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let view = view!(self);
        let Some(record) = self.strategy.choose(&view, request)? else {
            return Err(AllocError::NoRoom {
                request: *request,
                free: self.occupancy.free_count(),
                total: self.occupancy.len(),
            });
        };
        Ok(self.commit(record, request.node_count()))
    }

    #[inline]
    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let record = self.ledger.take(grant.id())?;
        record.mark(&mut self.occupancy, &self.topology, false);
        self.generation = self.generation.wrapping_add(1);
        let view = view!(self);
        self.strategy.released(&view, &record);
        self.strategy.recycle(record);
        Ok(())
    }

    #[inline]
    fn free_nodes(&self) -> usize {
        self.occupancy.free_count()
    }

    fn live_grants(&self) -> usize {
        self.ledger.len()
    }

    #[inline]
    fn is_available(&self, node: NodeId) -> bool {
        self.occupancy.is_available(node)
    }

    fn busy_nodes(&self) -> NodeSet {
        self.occupancy.busy()
    }

    fn faulty_nodes(&self) -> NodeSet {
        self.occupancy.faulty().clone()
    }

    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.strategy.takes_faults()?;
        if self.occupancy.mark_faulty(node)? {
            self.generation = self.generation.wrapping_add(1);
            let view = view!(self);
            self.strategy.faulted(&view, node);
        }
        Ok(())
    }

    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.strategy.takes_faults()?;
        if self.occupancy.repair(node)? {
            self.generation = self.generation.wrapping_add(1);
            let view = view!(self);
            self.strategy.repaired(&view, node);
        }
        Ok(())
    }

    fn can_allocate(&self, request: &Request) -> Result<bool, AllocError> {
        let view = self.view();
        match self.strategy.fits(&view, request)? {
            Some(fits) => Ok(fits),
            None => Ok(self.strategy.clone().choose(&view, request)?.is_some()),
        }
    }

    fn allocate_at(&mut self, request: &Request, at: &Partition) -> Result<Grant, AllocError> {
        let view = view!(self);
        let busy = || AllocError::PartitionBusy {
            request: *request,
            partition: Box::new(at.clone()),
        };
        let record = self.strategy.recognises(&view, request, at)?;
        if !record.available(&self.occupancy, &self.topology) {
            return Err(busy());
        }
        if !self.strategy.prepare_at(&view, &record) {
            return Err(busy());
        }
        Ok(self.commit(record, request.node_count()))
    }

    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        self.strategy.recognizable(&self.view(), request)
    }

    fn placement_rules(&self) -> Option<PlacementRules> {
        self.strategy.placement_rules()
    }
}

/// Whether every node of `p` is available (false if `p` does not fit the
/// machine).
fn all_available(occ: &Occupancy, topology: &Topology, p: &Partition) -> bool {
    let mut free = true;
    let fits = p.for_each_node(topology, |n| free &= occ.is_available(n));
    fits.is_ok() && free
}

/// Marks the nodes of `p` busy (`busy`) or frees them: a box one x-row
/// range at a time, a subcube one aligned id range at a time, a node list
/// one bitset word at a time.
#[inline]
fn mark(occ: &mut Occupancy, topology: &Topology, p: &Partition, busy: bool) {
    match (p, topology.as_grid()) {
        (Partition::Box(b), Some(g)) => mark_box(occ, g.sides(), b, busy),
        (Partition::Boxes(bs), Some(g)) => {
            for b in bs {
                mark_box(occ, g.sides(), b, busy);
            }
        }
        (Partition::Subcube(c), _) if topology.as_hypercube().is_some() => {
            if busy {
                occ.occupy_subcube(c);
            } else {
                occ.vacate_subcube(c);
            }
        }
        (Partition::Nodes(ns), _) => mark_nodes(occ, ns, busy),
        _ => {
            let _ = p.for_each_node(topology, |n| {
                if busy {
                    occ.occupy_node(n);
                } else {
                    occ.vacate_node(n);
                }
            });
        }
    }
}

/// Marks the nodes `ns` busy (`busy`) or frees them, one bitmap word at a
/// time: the ids of one word gather in a register and reach the occupancy
/// once (a list in increasing order, as strategies grant them, touches each
/// word once; any order is right).
#[inline]
fn mark_nodes(occ: &mut Occupancy, ns: &[NodeId], busy: bool) {
    let mut i = 0;
    while let Some(&first) = ns.get(i) {
        let w = first >> 6;
        let mut bits = 0u64;
        while let Some(&n) = ns.get(i) {
            if n >> 6 != w {
                break;
            }
            bits |= 1 << (n & 63);
            i += 1;
        }
        if busy {
            occ.occupy_word_bits(w as usize, bits);
        } else {
            occ.vacate_word_bits(w as usize, bits);
        }
    }
}

/// [`mark`] for one box of a grid of `sides` (dimension 0 fastest).
#[inline]
fn mark_box(occ: &mut Occupancy, sides: &[u32], b: &GridBox, busy: bool) {
    let d = sides.len();
    let w = b.extent(0) as usize;
    // The start of each x-row: an odometer over dimensions 1..d.
    let mut at = [0u32; partalloc_topology::MAX_DIMS];
    for (i, slot) in at.iter_mut().enumerate().take(d).skip(1) {
        *slot = b.lo(i);
    }
    loop {
        let mut id = b.lo(0) as usize;
        let mut stride = 1usize;
        for i in 1..d {
            stride *= sides[i - 1] as usize;
            id += at[i] as usize * stride;
        }
        if busy {
            occ.occupy_range(id, id + w);
        } else {
            occ.vacate_range(id, id + w);
        }
        let mut i = 1;
        loop {
            if i >= d {
                return;
            }
            if at[i] < b.hi(i) {
                at[i] += 1;
                break;
            }
            at[i] = b.lo(i);
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use partalloc_topology::{GridBox, NodeId, Topology};

    use partalloc_topology::Subcube;

    use super::{GrantRecord, Managed, Strategy, View, mark};
    use crate::paging::Paging;
    use crate::{AllocError, Allocator, FaultError, Occupancy, Partition, ReleaseError, Request};

    /// Only the two required methods: the lowest free node.
    #[derive(Debug, Clone)]
    struct Lowest;

    impl Strategy for Lowest {
        type Record = Partition;
        fn name(&self) -> String {
            "lowest".to_owned()
        }
        fn choose(
            &mut self,
            view: &View<'_>,
            request: &Request,
        ) -> Result<Option<Partition>, AllocError> {
            view.wanted_nodes(request)?;
            let node = (0..view.total_nodes() as NodeId).find(|&n| view.is_available(n));
            Ok(node.map(|n| Partition::Nodes(vec![n])))
        }
    }

    fn cube() -> Topology {
        "hypercube:3".parse().unwrap()
    }

    #[test]
    fn defaults_take_faults_and_refuse_listing_and_placement_unchanged() {
        let mut a = Managed::new(cube(), Lowest);
        a.mark_faulty(0).unwrap();
        let g = a.allocate(&Request::nodes(1)).unwrap();
        assert_eq!(g.partition(), &Partition::Nodes(vec![1]));
        let at = Partition::Nodes(vec![2]);
        let e = a.allocate_at(&Request::nodes(1), &at).unwrap_err();
        assert!(matches!(e, AllocError::PlacementUnsupported { .. }));
        let e = a.recognizable(&Request::nodes(1)).unwrap_err();
        assert!(matches!(e, AllocError::ListingUnsupported { .. }));
        assert_eq!((a.free_nodes(), a.live_grants()), (6, 1));
        assert!(matches!(
            a.mark_faulty(1),
            Err(FaultError::Busy { node: 1 })
        ));
        a.repair(0).unwrap();
        a.release(&g).unwrap();
        assert_eq!(a.free_nodes(), 8);
    }

    #[test]
    fn foreign_and_dead_grants_are_refused_without_change() {
        let mut a = Managed::new(cube(), Lowest);
        let mut b = Managed::new(cube(), Lowest);
        let g = a.allocate(&Request::nodes(1)).unwrap();
        let h = b.allocate(&Request::nodes(1)).unwrap();
        assert!(matches!(a.release(&h), Err(ReleaseError::Foreign { .. })));
        a.release(&g).unwrap();
        assert!(matches!(a.release(&g), Err(ReleaseError::NotLive { .. })));
        assert_eq!((a.free_nodes(), a.live_grants()), (8, 0));
        assert_eq!((b.free_nodes(), b.live_grants()), (7, 1));
    }

    #[test]
    fn allocate_at_checks_the_nodes_before_the_strategy_prepares() {
        let mut p = Paging::new(cube()).unwrap();
        let g = p.allocate(&Request::nodes(2)).unwrap();
        let taken = Partition::Nodes(vec![1, 2]);
        let e = p.allocate_at(&Request::nodes(2), &taken).unwrap_err();
        assert!(matches!(e, AllocError::PartitionBusy { .. }));
        let odd = Partition::Nodes(vec![3, 2]);
        let e = p.allocate_at(&Request::nodes(2), &odd).unwrap_err();
        assert!(matches!(e, AllocError::Unrecognized { .. }));
        assert_eq!((p.free_nodes(), p.live_grants()), (6, 1));
        let free = Partition::Nodes(vec![5, 7]);
        let h = p.allocate_at(&Request::nodes(2), &free).unwrap();
        assert!(!p.is_available(5) && !p.is_available(7) && p.is_available(6));
        p.release(&g).unwrap();
        p.release(&h).unwrap();
        assert_eq!(p.free_nodes(), 8);
    }

    #[test]
    fn a_strategy_that_refuses_faults_changes_nothing() {
        let mut b =
            crate::mesh::Buddy2d::new("mesh:4x4".parse().unwrap(), crate::mesh::BuddyOrder::ZOrder)
                .unwrap();
        let e = b.mark_faulty(3).unwrap_err();
        assert_eq!(e.to_string(), "buddy-2d does not support faulty nodes");
        assert!(b.repair(3).is_err());
        assert!(b.faulty_nodes().is_empty() && b.free_nodes() == 16);
    }

    /// A subcube and a node list mark, free and test exactly the nodes of
    /// their partition, as the partition itself does (node by node).
    #[test]
    fn compact_records_mark_what_their_partition_names() {
        fn agree<R: GrantRecord>(t: &Topology, r: &R, other: NodeId) {
            let p = r.partition();
            let ids = p.node_list(t).unwrap();
            let mut occ = Occupancy::new(t.num_nodes());
            assert!(r.available(&occ, t));
            occ.occupy_node(other);
            assert_eq!(r.available(&occ, t), !ids.contains(&other), "{p}");
            occ.vacate_node(other);
            r.mark(&mut occ, t, true);
            assert_eq!(occ.busy().iter().collect::<Vec<_>>(), ids, "{p}");
            assert!(!r.available(&occ, t) && !p.available(&occ, t));
            r.mark(&mut occ, t, false);
            assert_eq!(occ.free_count(), t.num_nodes(), "{p}");
        }
        let cube: Topology = "hypercube:7".parse().unwrap();
        for text in ["X01X0XX", "0000000", "XXXXXXX", "1X1X1X1"] {
            let s: Subcube = text.parse().unwrap();
            for other in [0, 5, 77, 127] {
                agree(&cube, &s, other);
            }
        }
        let mesh: Topology = "mesh:20x10".parse().unwrap();
        for nodes in [vec![0, 1, 63, 64, 65, 199], vec![7], vec![128, 130, 191]] {
            for other in [0, 64, 130, 150] {
                agree(&mesh, &nodes, other);
                agree(
                    &mesh,
                    &crate::paging::PageWords::of_increasing(&nodes),
                    other,
                );
            }
        }
    }

    /// A box is marked one x-row range at a time: exactly its nodes, on
    /// grids of one to four dimensions.
    #[test]
    fn boxes_mark_exactly_their_nodes() {
        for (machine, lo, ext) in [
            ("mesh:7", &[2u32][..], &[3u32][..]),
            ("mesh:5x4", &[1, 1], &[3, 2]),
            ("mesh:4x3x5", &[1, 0, 2], &[2, 3, 2]),
            ("mesh:3x3x2x3", &[0, 1, 1, 1], &[3, 2, 1, 2]),
        ] {
            let t: Topology = machine.parse().unwrap();
            let p = Partition::Box(GridBox::new(lo, ext).unwrap());
            let mut occ = Occupancy::new(t.num_nodes());
            mark(&mut occ, &t, &p, true);
            assert_eq!(
                occ.busy().iter().collect::<Vec<_>>(),
                p.node_list(&t).unwrap()
            );
            mark(&mut occ, &t, &p, false);
            assert_eq!(occ.free_count(), t.num_nodes(), "{machine}");
        }
    }
}
