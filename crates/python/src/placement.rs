//! The environment's placement choice (`placements=P`): per window job,
//! the first `P` wholly free partitions the strategy could grant it, in
//! the strategy's own search order, for the agent to choose among.

use std::collections::HashMap;

use partalloc_allocators::{AllocError, Allocator, Partition, Request};
use partalloc_topology::{NodeId, NodeSet, Topology};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::env::charge_listing;
use crate::errors::value_error;

/// Per candidate: present, contact (the share of its border links that
/// end at a busy node or at the machine's edge), position (its lowest node
/// over the machine's nodes).
pub(crate) const PLACEMENT_FEATURES: usize = 3;

/// The most choices (window × placements) an environment offers, checked
/// before the observation and mask are sized by them.
const MAX_CHOICES: usize = 1 << 20;

/// No candidate in this place of a slot's list.
const NONE: u32 = u32::MAX;

/// One partition a job may be placed on.
#[derive(Debug, Clone)]
struct Candidate {
    partition: Partition,
    nodes: NodeSet,
    /// The nodes outside it linked to one of its nodes, once per link.
    border: Box<[NodeId]>,
    /// The links its nodes lack against the machine's highest degree: the
    /// machine's edge, which a placement touches as it touches a busy node.
    edge: u32,
    /// Its lowest node / the machine's nodes.
    position: f32,
}

impl Candidate {
    fn contact(&self, busy: &NodeSet) -> f32 {
        let links = self.border.len() as u32 + self.edge;
        if links == 0 {
            return 1.0;
        }
        let touching = self.border.iter().filter(|&&n| busy.contains(n)).count() as u32;
        (touching + self.edge) as f32 / links as f32
    }
}

/// The candidates of every request seen, and the current state's choices.
#[derive(Debug, Clone)]
pub(crate) struct Placements {
    per_slot: usize,
    max_degree: u32,
    lists: Vec<Box<[Candidate]>>,
    by_request: HashMap<Request, usize>,
    /// Per window slot: its request's list, or `usize::MAX`.
    slot_list: Vec<usize>,
    /// Per window slot and choice: the candidate's index in the list, or
    /// [`NONE`].
    chosen: Vec<u32>,
    /// Bytes of the candidates' bit sets listed so far.
    listed_bytes: usize,
}

impl Placements {
    /// `per_slot` choices per job of a `window`; the strategy must grant
    /// chosen partitions and list them (checked on `alloc`, a fresh
    /// instance, with `probe`, a request it serves).
    pub(crate) fn new(
        per_slot: usize,
        window: usize,
        topology: &Topology,
        alloc: &mut dyn Allocator,
        probe: &Request,
    ) -> PyResult<Self> {
        if per_slot == 0 {
            return Err(PyValueError::new_err(
                "placements must be at least 1 (or None for the strategy's own choice)",
            ));
        }
        let cells = window
            .checked_mul(per_slot)
            .filter(|&n| n <= MAX_CHOICES)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "window × placements is more than {MAX_CHOICES} choices: choose fewer placements"
                ))
            })?;
        let name = alloc.name();
        let first = match alloc.recognizable(probe) {
            Ok(parts) => parts.into_iter().next(),
            Err(e) => {
                return Err(PyValueError::new_err(format!(
                    "placements needs a strategy that lists its partitions: {e}"
                )));
            }
        };
        let Some(first) = first else {
            return Err(PyValueError::new_err(format!(
                "placements: {name} lists no partition for a {} request",
                probe.node_count()
            )));
        };
        if matches!(first, Partition::Nodes(_)) {
            return Err(PyValueError::new_err(format!(
                "placements chooses among a contiguous strategy's partitions; {name} grants lists of nodes: use placements=None"
            )));
        }
        match alloc.allocate_at(probe, &first) {
            Ok(g) => alloc.release(&g).map_err(value_error)?,
            Err(e) => {
                return Err(PyValueError::new_err(format!(
                    "placements needs a strategy that grants a chosen partition: {e}"
                )));
            }
        }
        let mut max_degree = 0;
        for id in 0..topology.num_nodes() {
            let node = NodeId::try_from(id).map_err(value_error)?;
            max_degree = max_degree.max(topology.neighbours(node).map_err(value_error)?.len());
        }
        Ok(Self {
            per_slot,
            max_degree: u32::try_from(max_degree).map_err(value_error)?,
            lists: Vec::new(),
            by_request: HashMap::new(),
            slot_list: vec![usize::MAX; window],
            chosen: vec![NONE; cells],
            listed_bytes: 0,
        })
    }

    /// The choices per window job.
    pub(crate) fn per_slot(&self) -> usize {
        self.per_slot
    }

    /// The list of `request`'s candidates, made on first sight.
    fn list(
        &mut self,
        alloc: &dyn Allocator,
        topology: &Topology,
        request: &Request,
    ) -> PyResult<usize> {
        if let Some(&i) = self.by_request.get(request) {
            return Ok(i);
        }
        let parts = match alloc.recognizable(request) {
            Ok(parts) => parts,
            // A request the strategy never serves has no candidate.
            Err(AllocError::ListingUnsupported { .. }) => {
                return Err(PyValueError::new_err(format!(
                    "placements: {} cannot list its partitions",
                    alloc.name()
                )));
            }
            Err(_) => Vec::new(),
        };
        let n = topology.num_nodes();
        charge_listing("placements", &mut self.listed_bytes, parts.len(), n)?;
        let mut list = Vec::with_capacity(parts.len());
        for partition in parts {
            let ids = partition.node_list(topology).map_err(value_error)?;
            let mut nodes = NodeSet::new(n);
            for &id in &ids {
                nodes.insert(id).map_err(value_error)?;
            }
            let (mut border, mut links) = (Vec::new(), 0u32);
            for &id in &ids {
                let around = topology.neighbours(id).map_err(value_error)?;
                links += around.len() as u32;
                border.extend(around.into_iter().filter(|&m| !nodes.contains(m)));
            }
            let edge = (self.max_degree * ids.len() as u32).saturating_sub(links);
            let position = ids.first().map_or(0.0, |&i| i as f32 / n as f32);
            list.push(Candidate {
                partition,
                nodes,
                border: border.into(),
                edge,
                position,
            });
        }
        let i = self.lists.len();
        self.lists.push(list.into());
        self.by_request.insert(*request, i);
        Ok(i)
    }

    /// Finds the first `per_slot` free candidates of window slot `slot`'s
    /// job (`request`; `None` for an empty slot); returns how many.
    pub(crate) fn choose(
        &mut self,
        slot: usize,
        request: Option<&Request>,
        alloc: &dyn Allocator,
        topology: &Topology,
        busy: &NodeSet,
    ) -> PyResult<usize> {
        let p = self.per_slot;
        let cells = slot * p..(slot + 1) * p;
        self.chosen[cells.clone()].fill(NONE);
        self.slot_list[slot] = usize::MAX;
        let Some(request) = request else {
            return Ok(0);
        };
        let li = self.list(alloc, topology, request)?;
        self.slot_list[slot] = li;
        let mut found = 0;
        for (k, c) in self.lists[li].iter().enumerate() {
            if c.nodes.is_disjoint(busy) {
                self.chosen[cells.start + found] = k as u32;
                found += 1;
                if found == p {
                    break;
                }
            }
        }
        Ok(found)
    }

    /// The `c`-th choice of window slot `slot` (as last chosen).
    pub(crate) fn partition(&self, slot: usize, c: usize) -> Option<&Partition> {
        let k = *self.chosen.get(slot * self.per_slot + c)?;
        let list = self.lists.get(*self.slot_list.get(slot)?)?;
        list.get(k as usize).map(|cand| &cand.partition)
    }

    /// Writes the choices' features of window slot `slot` into `out`
    /// (`per_slot × PLACEMENT_FEATURES` values) and their mask bits into
    /// `mask` (`per_slot` bytes).
    pub(crate) fn encode(&self, slot: usize, busy: &NodeSet, out: &mut [f32], mask: &mut [u8]) {
        let p = self.per_slot;
        let list = self.slot_list.get(slot).and_then(|&li| self.lists.get(li));
        for c in 0..p {
            let f = &mut out[c * PLACEMENT_FEATURES..(c + 1) * PLACEMENT_FEATURES];
            let cand = list.and_then(|l| l.get(self.chosen[slot * p + c] as usize));
            let Some(cand) = cand else {
                f.fill(0.0);
                mask[c] = 0;
                continue;
            };
            f[0] = 1.0;
            f[1] = cand.contact(busy);
            f[2] = cand.position;
            mask[c] = 1;
        }
    }
}
