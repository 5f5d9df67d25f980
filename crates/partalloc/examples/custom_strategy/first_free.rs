//! `first-free[from=low|high]`: any free nodes, the lowest ids first (or
//! the highest). A whole strategy is its choice, its name and its registry
//! entry: `Managed` keeps the grants, the node states and the faults.

use partalloc::allocators::registry::{ANY_TOPOLOGY, AllocatorEntry, Entry};
use partalloc::allocators::registry::{ParamInfo, StrategyInfo};
use partalloc::allocators::{AllocError, Managed, Partition, Request, Strategy, View};
use partalloc::topology::NodeId;

/// Any free nodes, from the high end of the ids if `.0`, else the low end.
#[derive(Debug, Clone)]
pub(crate) struct FirstFree(bool);

impl Strategy for FirstFree {
    type Record = Partition;
    fn name(&self) -> String {
        let from = if self.0 { "[from=high]" } else { "" };
        format!("first-free{from}")
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let want = view.wanted_nodes(request)? as usize;
        if want > view.occupancy().free_count() {
            return Ok(None);
        }
        let ids = 0..view.total_nodes() as NodeId;
        let free = |&n: &NodeId| view.is_available(n);
        let mut nodes: Vec<NodeId> = if self.0 {
            ids.rev().filter(free).take(want).collect()
        } else {
            ids.filter(free).take(want).collect()
        };
        nodes.sort_unstable();
        Ok(Some(Partition::Nodes(nodes)))
    }
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: "first-free",
        summary: "any free nodes, from the low or the high end of the ids",
        source: "examples/custom_strategy/first_free.rs",
        params: &[ParamInfo {
            name: "from",
            default: "low",
            doc: "which end of the ids to take nodes from: low or high",
        }],
        topologies: ANY_TOPOLOGY,
    },
    build: |topology, spec| {
        let high = spec.choice("from", &[("low", false), ("high", true)])?;
        Ok(Box::new(Managed::new(topology.clone(), FirstFree(high))))
    },
};
