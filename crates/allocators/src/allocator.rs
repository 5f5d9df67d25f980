//! The `Allocator` trait: the object-safe interface schedulers and
//! wrappers drive; strategies usually reach it through
//! [`Managed`](crate::Managed).

use core::fmt;

use partalloc_topology::pod::Wiring;
use partalloc_topology::{NodeId, NodeSet, Topology};

use crate::{AllocError, FaultError, Grant, Partition, ReleaseError, Request};

/// A processor allocation strategy bound to one machine.
///
/// The trait is object safe, so a strategy can be chosen by name at run time
/// ([`registry::build`](crate::registry::build)) and driven through
/// `&mut dyn Allocator` by a scheduler.
///
/// # Contract
///
/// Every implementation upholds, and [`conformance`](crate::conformance)
/// checks:
/// - a grant holds only nodes that were available (free and not faulty),
///   and no node is in two live grants;
/// - [`free_nodes`](Allocator::free_nodes) always equals the number of
///   available nodes;
/// - a refused `allocate`, `release` or `mark_faulty` changes nothing;
/// - releasing a grant makes its nodes available again, and releasing
///   every grant returns the strategy to the state it would have after the
///   same faults on a fresh machine;
/// - the choice is deterministic: same state and request, same partition.
///
/// # Strategies, and implementing the trait directly
///
/// A strategy is written as a [`Strategy`](crate::Strategy), which only
/// chooses, and run by [`Managed`](crate::Managed), which implements this
/// trait once: the bookkeeping (grants, node states, faults), the contract
/// checks, `is_available` in O(1), the node check of `allocate_at` and the
/// probe fallback. A type implements `Allocator` itself when its per-grant
/// or per-node state is its own (the built-ins that do are listed in
/// `docs/ARCHITECTURE.md`): then seven methods are required,
/// [`name`](Allocator::name), [`topology`](Allocator::topology),
/// [`allocate`](Allocator::allocate), [`release`](Allocator::release),
/// [`free_nodes`](Allocator::free_nodes),
/// [`live_grants`](Allocator::live_grants) and
/// [`busy_nodes`](Allocator::busy_nodes), and the others default to
/// refusing with typed errors ([`FaultError::Unsupported`],
/// [`AllocError::ListingUnsupported`], [`AllocError::PlacementUnsupported`],
/// [`AllocError::ProbeUnsupported`]) or derive from the rest.
///
/// A strategy that gives each job the whole machine, one job at a time:
///
/// ```
/// use partalloc_allocators::{
///     AllocError, Allocator, FaultError, Managed, Partition, Request, Strategy, View,
/// };
///
/// #[derive(Debug, Clone)]
/// struct Exclusive;
///
/// impl Strategy for Exclusive {
///     type Record = Partition;
///     fn name(&self) -> String {
///         "exclusive".to_owned()
///     }
///
///     fn choose(&mut self, view: &View<'_>, request: &Request) -> Result<Option<Partition>, AllocError> {
///         view.wanted_nodes(request)?;
///         if view.live_grants() > 0 {
///             return Ok(None);
///         }
///         Ok(Some(Partition::Nodes((0..view.total_nodes() as u32).collect())))
///     }
///
///     fn takes_faults(&self) -> Result<(), FaultError> {
///         Err(FaultError::Unsupported { strategy: self.name() })
///     }
/// }
///
/// let mut a = Managed::new("mesh:4x4".parse()?, Exclusive);
/// let g = a.allocate(&Request::nodes(3))?;
/// assert_eq!(g.granted_nodes(), 16);
/// assert!(!a.is_available(5));
/// assert!(matches!(a.allocate(&Request::nodes(1)), Err(AllocError::NoRoom { .. })));
/// assert!(matches!(a.mark_faulty(5), Err(FaultError::Unsupported { .. })));
/// assert!(a.faulty_nodes().is_empty());
/// a.release(&g)?;
/// assert!(a.is_available(5));
/// assert!(matches!(
///     a.recognizable(&Request::nodes(3)),
///     Err(AllocError::ListingUnsupported { .. })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Allocator: Send + fmt::Debug {
    /// The strategy's canonical name with its parameters, as the registry
    /// parses it (e.g. `partner-ext[delta=2]`).
    fn name(&self) -> String;

    /// The machine this allocator manages.
    fn topology(&self) -> &Topology;

    /// Grants a partition for `request`, or refuses it.
    ///
    /// # Errors
    /// [`AllocError::NoRoom`] when nothing recognisable is free now,
    /// [`AllocError::Unsupported`] for request kinds the strategy does not
    /// serve, [`AllocError::Invalid`] for requests no state could serve.
    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError>;

    /// Returns a grant's nodes.
    ///
    /// # Errors
    /// [`ReleaseError::Foreign`] for a grant of another allocator,
    /// [`ReleaseError::NotLive`] for one already released.
    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError>;

    /// Nodes neither allocated nor faulty. O(1).
    fn free_nodes(&self) -> usize;

    /// Nodes of the machine.
    fn total_nodes(&self) -> usize {
        self.topology().num_nodes()
    }

    /// Number of live grants.
    fn live_grants(&self) -> usize;

    /// Whether `node` is free and healthy (false outside the machine).
    ///
    /// The default takes two snapshots, O(N); strategies with a bitmap
    /// answer in O(1).
    fn is_available(&self, node: NodeId) -> bool {
        (node as usize) < self.total_nodes()
            && !self.busy_nodes().contains(node)
            && !self.faulty_nodes().contains(node)
    }

    /// A snapshot of the allocated nodes.
    fn busy_nodes(&self) -> NodeSet;

    /// A snapshot of the faulty nodes.
    ///
    /// The default is empty, which is right for a strategy that keeps the
    /// default [`mark_faulty`](Allocator::mark_faulty); one that takes
    /// faults overrides this too.
    fn faulty_nodes(&self) -> NodeSet {
        NodeSet::new(self.total_nodes())
    }

    /// Takes a free node out of service (Al-Dhelaan & Bose, Example 15).
    ///
    /// # Errors
    /// [`FaultError::Busy`] if the node is allocated, a topology error if it
    /// does not exist, [`FaultError::Unsupported`] if the strategy cannot
    /// work around faults (the default, which changes nothing).
    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        let _ = node;
        Err(FaultError::Unsupported {
            strategy: self.name(),
        })
    }

    /// Returns a faulty node to service.
    ///
    /// # Errors
    /// As [`Allocator::mark_faulty`]; the default refuses with
    /// [`FaultError::Unsupported`].
    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        let _ = node;
        Err(FaultError::Unsupported {
            strategy: self.name(),
        })
    }

    /// Whether [`allocate`](Allocator::allocate) would grant `request` now,
    /// without changing anything: a probe, unlike an allocation and its
    /// release, cannot reorder a strategy's free lists and so never changes
    /// a later choice.
    ///
    /// # Errors
    /// As [`Allocator::allocate`], except that `NoRoom` is `Ok(false)`;
    /// [`AllocError::ProbeUnsupported`] from a strategy that cannot answer
    /// (the default), for which a caller may allocate and release instead
    /// if the strategy's release restores its state.
    fn can_allocate(&self, request: &Request) -> Result<bool, AllocError> {
        let _ = request;
        Err(AllocError::ProbeUnsupported {
            strategy: self.name(),
        })
    }

    /// Grants exactly `at` for `request`: the caller chooses the place (a
    /// scheduler that learns placements, say), the strategy checks and
    /// records it as its own allocation would, so its later choices see
    /// the grant as if it had chosen it.
    ///
    /// `at` must be one of the strategy's
    /// [`recognizable`](Allocator::recognizable) partitions for `request`
    /// and wholly free now. A strategy with state besides the busy nodes
    /// (free lists, say) updates it as for a grant of `at` by `allocate`;
    /// so there can be no generic default, and the default refuses.
    ///
    /// # Errors
    /// As [`Allocator::allocate`] for the request itself (`Unsupported`,
    /// `Invalid`); [`AllocError::Unrecognized`] when the strategy never
    /// grants `at` for `request`, [`AllocError::PartitionBusy`] when some
    /// node of `at` is allocated or faulty, and
    /// [`AllocError::PlacementUnsupported`] from a strategy that cannot
    /// grant a chosen partition (the default). A refusal changes nothing.
    ///
    /// ```
    /// use partalloc_allocators::{AllocError, Allocator, Partition, Request, registry};
    /// use partalloc_topology::GridBox;
    ///
    /// let mut fsl = registry::build("fsl", &"mesh:4x4".parse()?)?;
    /// let two = Request::boxed(&[2, 2])?;
    /// let at = Partition::Box(GridBox::new(&[2, 2], &[2, 2])?);
    /// let g = fsl.allocate_at(&two, &at)?;
    /// assert_eq!(g.partition(), &at);
    /// // Taken now: refused, and nothing changes.
    /// let busy = fsl.allocate_at(&two, &at);
    /// assert!(matches!(busy, Err(AllocError::PartitionBusy { .. })));
    /// assert_eq!(fsl.free_nodes(), 12);
    /// // fsl's own choices know the grant: a 4x4 no longer fits, a 4x2 does.
    /// assert_eq!(fsl.can_allocate(&Request::boxed(&[4, 4])?), Ok(false));
    /// let h = fsl.allocate(&Request::boxed(&[4, 2])?)?;
    /// assert_eq!(h.partition(), &Partition::Box(GridBox::new(&[0, 0], &[4, 2])?));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn allocate_at(&mut self, request: &Request, at: &Partition) -> Result<Grant, AllocError> {
        let _ = (request, at);
        Err(AllocError::PlacementUnsupported {
            strategy: self.name(),
        })
    }

    /// Every partition this strategy can ever grant for `request` on an
    /// empty, fault-free machine, in the strategy's search order and
    /// without duplicates. For analysis and teaching (Al-Dhelaan & Bose,
    /// Fig. 12); it allocates, so keep it off hot paths.
    ///
    /// # Errors
    /// As [`Allocator::allocate`], except that `NoRoom` is never returned;
    /// [`AllocError::ListingUnsupported`] from a strategy that cannot list
    /// (the default).
    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        let _ = request;
        Err(AllocError::ListingUnsupported {
            strategy: self.name(),
        })
    }

    /// The placement rules the strategy follows, for the measures of a run
    /// that judge the machine by them (a pod's stranded chips under its
    /// wiring, a Slurm job's split segments): the strategy says so itself,
    /// so nothing guesses it from its name. `None`, the default, for a
    /// strategy with no such rules.
    fn placement_rules(&self) -> Option<PlacementRules> {
        None
    }
}

/// What a strategy reports about the rules it places by
/// ([`Allocator::placement_rules`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlacementRules {
    /// An accelerator-pod strategy placing slices by this wiring's rules.
    Pod(Wiring),
    /// A Slurm strategy, with the segment size its jobs are placed in
    /// (`--segment`), if it has one.
    Slurm {
        /// Nodes per segment.
        segment: Option<u32>,
    },
}

/// An allocator wrapped to watch (or change) its `allocate` and `release`,
/// such as a simulator's metering layer: every other [`Allocator`]
/// method is forwarded to [`inner`](Self::inner) by the one blanket
/// implementation below, so no wrapper can drop a method (a wrapper that
/// forwarded by hand once lost `can_allocate`, and its schedulers were
/// told probing was unsupported). A method added to [`Allocator`] is
/// forwarded there, once.
///
/// ```
/// use partalloc_allocators::{Allocator, AllocatorWrapper, AllocError, Grant, Request, registry};
///
/// #[derive(Debug)]
/// struct Counting { inner: Box<dyn Allocator>, grants: u64 }
///
/// impl AllocatorWrapper for Counting {
///     fn inner(&self) -> &dyn Allocator { self.inner.as_ref() }
///     fn inner_mut(&mut self) -> &mut dyn Allocator { self.inner.as_mut() }
///     fn wrapped_allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
///         let g = self.inner.allocate(request)?;
///         self.grants += 1;
///         Ok(g)
///     }
/// }
///
/// let mut c = Counting { inner: registry::build("fsl", &"mesh:4x4".parse()?)?, grants: 0 };
/// let g = c.allocate(&Request::boxed(&[2, 2])?)?;
/// assert_eq!((c.grants, c.free_nodes()), (1, 12));
/// // Forwarded, not dropped: fsl answers the probe itself.
/// assert_eq!(c.can_allocate(&Request::boxed(&[4, 4])?), Ok(false));
/// assert_eq!(c.can_allocate(&Request::boxed(&[2, 4])?), Ok(true));
/// c.release(&g)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait AllocatorWrapper: Send + fmt::Debug {
    /// The wrapped allocator.
    fn inner(&self) -> &dyn Allocator;

    /// The wrapped allocator, mutably.
    fn inner_mut(&mut self) -> &mut dyn Allocator;

    /// [`Allocator::allocate`] of the wrapper; forwards by default.
    ///
    /// # Errors
    /// As [`Allocator::allocate`].
    fn wrapped_allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        self.inner_mut().allocate(request)
    }

    /// [`Allocator::allocate_at`] of the wrapper; forwards by default.
    ///
    /// # Errors
    /// As [`Allocator::allocate_at`].
    fn wrapped_allocate_at(
        &mut self,
        request: &Request,
        at: &Partition,
    ) -> Result<Grant, AllocError> {
        self.inner_mut().allocate_at(request, at)
    }

    /// [`Allocator::release`] of the wrapper; forwards by default.
    ///
    /// # Errors
    /// As [`Allocator::release`].
    fn wrapped_release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        self.inner_mut().release(grant)
    }
}

impl<W: AllocatorWrapper> Allocator for W {
    fn name(&self) -> String {
        self.inner().name()
    }
    fn topology(&self) -> &Topology {
        self.inner().topology()
    }
    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        self.wrapped_allocate(request)
    }
    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        self.wrapped_release(grant)
    }
    fn free_nodes(&self) -> usize {
        self.inner().free_nodes()
    }
    fn total_nodes(&self) -> usize {
        self.inner().total_nodes()
    }
    fn live_grants(&self) -> usize {
        self.inner().live_grants()
    }
    fn is_available(&self, node: NodeId) -> bool {
        self.inner().is_available(node)
    }
    fn busy_nodes(&self) -> NodeSet {
        self.inner().busy_nodes()
    }
    fn faulty_nodes(&self) -> NodeSet {
        self.inner().faulty_nodes()
    }
    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.inner_mut().mark_faulty(node)
    }
    fn repair(&mut self, node: NodeId) -> Result<(), FaultError> {
        self.inner_mut().repair(node)
    }
    fn can_allocate(&self, request: &Request) -> Result<bool, AllocError> {
        self.inner().can_allocate(request)
    }
    fn allocate_at(&mut self, request: &Request, at: &Partition) -> Result<Grant, AllocError> {
        self.wrapped_allocate_at(request, at)
    }
    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError> {
        self.inner().recognizable(request)
    }
    fn placement_rules(&self) -> Option<PlacementRules> {
        self.inner().placement_rules()
    }
}

/// The node count of `request` if a machine of `total` nodes can ever
/// serve it (1 ..= `total`), else [`AllocError::Invalid`] saying both.
pub(crate) fn wanted_nodes(request: &Request, total: usize) -> Result<u64, AllocError> {
    let want = request.node_count();
    if want == 0 || want > total as u64 {
        return Err(AllocError::Invalid {
            request: *request,
            reason: format!("needs {want} nodes; the machine has {total}"),
        });
    }
    Ok(want)
}

#[cfg(test)]
mod tests {
    use partalloc_topology::{NodeId, NodeSet, Topology};

    use super::Allocator;
    use crate::{AllocError, FaultError, Grant, GrantLedger, Partition, ReleaseError, Request};

    /// Only the required methods: one node at a time, lowest first.
    #[derive(Debug)]
    struct OneNode {
        topology: Topology,
        busy: NodeSet,
        ledger: GrantLedger<u32>,
    }

    impl Allocator for OneNode {
        fn name(&self) -> String {
            "one-node".to_owned()
        }

        fn topology(&self) -> &Topology {
            &self.topology
        }

        fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
            let no_room = AllocError::NoRoom {
                request: *request,
                free: self.free_nodes(),
                total: self.total_nodes(),
            };
            let node = (0..self.total_nodes() as u32)
                .find(|&n| !self.busy.contains(n))
                .ok_or(no_room)?;
            self.busy.insert(node).map_err(|e| AllocError::Invalid {
                request: *request,
                reason: e.to_string(),
            })?;
            let id = self.ledger.issue(node);
            Ok(Grant::new(id, Partition::Nodes(vec![node]), 1))
        }

        fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
            let node = self.ledger.take(grant.id())?;
            let _ = self.busy.remove(node);
            Ok(())
        }

        fn free_nodes(&self) -> usize {
            self.total_nodes() - self.busy.count()
        }

        fn live_grants(&self) -> usize {
            self.ledger.len()
        }

        fn busy_nodes(&self) -> NodeSet {
            self.busy.clone()
        }
    }

    fn one_node() -> OneNode {
        let topology: Topology = "hypercube:2".parse().unwrap();
        OneNode {
            busy: NodeSet::new(topology.num_nodes()),
            topology,
            ledger: GrantLedger::new(),
        }
    }

    #[test]
    fn fault_defaults_refuse_with_the_strategy_name_and_change_nothing() {
        let mut a = one_node();
        let g = a.allocate(&Request::nodes(1)).unwrap();
        for refused in [a.mark_faulty(1), a.repair(1), a.mark_faulty(0)] {
            let e = refused.unwrap_err();
            assert_eq!(
                e,
                FaultError::Unsupported {
                    strategy: "one-node".to_owned()
                }
            );
            assert_eq!(e.to_string(), "one-node does not support faulty nodes");
        }
        assert!(a.faulty_nodes().is_empty());
        assert_eq!(a.faulty_nodes().universe(), 4);
        assert_eq!((a.free_nodes(), a.live_grants()), (3, 1));
        a.release(&g).unwrap();
        assert_eq!(a.free_nodes(), 4);
    }

    #[test]
    fn recognizable_default_says_listing_is_unsupported() {
        let a = one_node();
        let e = a.recognizable(&Request::nodes(1)).unwrap_err();
        assert_eq!(
            e,
            AllocError::ListingUnsupported {
                strategy: "one-node".to_owned()
            }
        );
        assert_eq!(
            e.to_string(),
            "one-node cannot list the partitions it recognises"
        );
    }

    #[test]
    fn allocate_at_default_says_placement_is_unsupported_and_changes_nothing() {
        let mut a = one_node();
        let at = Partition::Nodes(vec![1]);
        let e = a.allocate_at(&Request::nodes(1), &at).unwrap_err();
        assert_eq!(
            e,
            AllocError::PlacementUnsupported {
                strategy: "one-node".to_owned()
            }
        );
        assert_eq!(
            e.to_string(),
            "one-node cannot grant a chosen partition; let it choose with allocate"
        );
        assert_eq!((a.free_nodes(), a.live_grants()), (4, 0));
    }

    #[test]
    fn derived_is_available_and_total_follow_the_required_methods() {
        let mut a = one_node();
        assert_eq!(a.total_nodes(), 4);
        let g = a.allocate(&Request::nodes(1)).unwrap();
        let avail: Vec<bool> = (0..5).map(|n| a.is_available(n)).collect();
        assert_eq!(avail, [false, true, true, true, false]);
        a.release(&g).unwrap();
        assert!(a.is_available(0));
    }

    /// Answers every method, provided ones too, unlike its default, so a
    /// wrapper that dropped one (and so fell back to the default) is seen.
    #[derive(Debug)]
    struct Unusual(OneNode);

    impl Allocator for Unusual {
        fn name(&self) -> String {
            "unusual".to_owned()
        }
        fn topology(&self) -> &Topology {
            self.0.topology()
        }
        fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
            self.0.allocate(request)
        }
        fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
            self.0.release(grant)
        }
        fn free_nodes(&self) -> usize {
            self.0.free_nodes()
        }
        fn total_nodes(&self) -> usize {
            99
        }
        fn live_grants(&self) -> usize {
            self.0.live_grants()
        }
        fn is_available(&self, node: NodeId) -> bool {
            node == 42
        }
        fn busy_nodes(&self) -> NodeSet {
            self.0.busy_nodes()
        }
        fn faulty_nodes(&self) -> NodeSet {
            let mut f = NodeSet::new(4);
            f.insert(3).unwrap();
            f
        }
        fn mark_faulty(&mut self, _node: NodeId) -> Result<(), FaultError> {
            Ok(())
        }
        fn repair(&mut self, _node: NodeId) -> Result<(), FaultError> {
            Ok(())
        }
        fn can_allocate(&self, _request: &Request) -> Result<bool, AllocError> {
            Ok(true)
        }
        fn recognizable(&self, _request: &Request) -> Result<Vec<Partition>, AllocError> {
            Ok(vec![Partition::Nodes(vec![2])])
        }
        fn allocate_at(&mut self, request: &Request, at: &Partition) -> Result<Grant, AllocError> {
            Err(AllocError::PartitionBusy {
                request: *request,
                partition: Box::new(at.clone()),
            })
        }
        fn placement_rules(&self) -> Option<super::PlacementRules> {
            Some(super::PlacementRules::Slurm { segment: Some(5) })
        }
    }

    /// The thinnest wrapper: every method by the blanket implementation.
    #[derive(Debug)]
    struct Thin(Box<dyn Allocator>);

    impl super::AllocatorWrapper for Thin {
        fn inner(&self) -> &dyn Allocator {
            self.0.as_ref()
        }
        fn inner_mut(&mut self) -> &mut dyn Allocator {
            self.0.as_mut()
        }
    }

    /// Every method of a wrapper answers as the wrapped allocator does: a
    /// hand-written forwarding once dropped `can_allocate`, and schedulers
    /// probing through it were told probing was unsupported. A method
    /// added to `Allocator` without a forward in the blanket implementation
    /// fails here once `Unusual` answers it.
    #[test]
    fn a_wrapper_forwards_every_method() {
        let mut w = Thin(Box::new(Unusual(one_node())));
        let mut u = Unusual(one_node());
        let r = Request::nodes(1);
        assert_eq!(w.name(), u.name());
        assert_eq!(w.topology(), u.topology());
        assert_eq!(w.total_nodes(), 99);
        assert!(w.is_available(42) && !w.is_available(0));
        assert_eq!(w.faulty_nodes(), u.faulty_nodes());
        assert_eq!(w.mark_faulty(1), Ok(()));
        assert_eq!(w.repair(1), Ok(()));
        assert_eq!(w.can_allocate(&r), Ok(true));
        assert_eq!(w.recognizable(&r), u.recognizable(&r));
        let at = Partition::Nodes(vec![2]);
        assert_eq!(w.allocate_at(&r, &at), u.allocate_at(&r, &at));
        assert!(matches!(
            w.allocate_at(&r, &at),
            Err(AllocError::PartitionBusy { .. })
        ));
        assert_eq!(w.placement_rules(), u.placement_rules());
        let g = w.allocate(&r).unwrap();
        let h = u.allocate(&r).unwrap();
        assert_eq!(g.partition(), h.partition());
        assert_eq!(
            (w.free_nodes(), w.live_grants(), w.busy_nodes()),
            (u.free_nodes(), u.live_grants(), u.busy_nodes())
        );
        w.release(&g).unwrap();
        assert_eq!(w.live_grants(), 0);
    }
}
