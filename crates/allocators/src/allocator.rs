//! The `Allocator` trait: the one extension point every strategy implements.

use core::fmt;

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
    fn is_available(&self, node: NodeId) -> bool;

    /// A snapshot of the allocated nodes.
    fn busy_nodes(&self) -> NodeSet;

    /// A snapshot of the faulty nodes.
    fn faulty_nodes(&self) -> NodeSet;

    /// Takes a free node out of service (Al-Dhelaan & Bose, Example 15).
    ///
    /// # Errors
    /// [`FaultError::Busy`] if the node is allocated, a topology error if it
    /// does not exist, [`FaultError::Unsupported`] if the strategy cannot
    /// work around faults.
    fn mark_faulty(&mut self, node: NodeId) -> Result<(), FaultError>;

    /// Returns a faulty node to service.
    ///
    /// # Errors
    /// As [`Allocator::mark_faulty`].
    fn repair(&mut self, node: NodeId) -> Result<(), FaultError>;

    /// Every partition this strategy can ever grant for `request` on an
    /// empty, fault-free machine, in the strategy's search order and
    /// without duplicates. For analysis and teaching (Al-Dhelaan & Bose,
    /// Fig. 12); it allocates, so keep it off hot paths.
    ///
    /// # Errors
    /// As [`Allocator::allocate`], except that `NoRoom` is never returned.
    fn recognizable(&self, request: &Request) -> Result<Vec<Partition>, AllocError>;
}
