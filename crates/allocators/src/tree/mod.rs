//! Switch-tree placement on a Slurm `topology/tree` machine, deciding as
//! Slurm 26.05.3 decides (`src/plugins/topology/tree/eval_nodes_tree.c`,
//! `_eval_nodes_topo`, with the switch distances of `switch_record.c`).
//!
//! 1. **Top switch**: among the switches whose subtree has enough free
//!    nodes, the one of the highest level; among equals the last in
//!    `topology.conf` order. With a root that has room this is the root:
//!    the job is not confined to the lowest switch that could hold it.
//! 2. **Leaf switches**, one after the other, under the top switch: the
//!    first pick compares leaves in file order and keeps the better one:
//!    a leaf that holds the rest beats one that does not, among leaves
//!    that hold it the fewest free nodes; when neither holds it, their
//!    parents are compared the same way, up to the level below their
//!    common switch, and then the one with more free nodes wins; a tie
//!    keeps the earlier leaf. Later picks prefer leaves closer (in switch
//!    hops, summed over the leaves already picked) if they hold the rest,
//!    else the same comparison among leaves as close as the best so far.
//!    All free nodes of a picked leaf count as used by the job for later
//!    comparisons; nodes are taken in id order.
//! 3. **One node** (`select/cons_tres/job_test.c`, `_get_one_res`): the
//!    first free node, in node order.
//! 4. **`--switches=K`** (`eval_nodes_tree.c`, end of `_eval_nodes_topo`,
//!    and `select/cons_tres/job_test.c`): the placement is made as above;
//!    if it uses more than `K` leaf switches the job waits (until Slurm's
//!    `max_switch_wait`, which partalloc does not model).
//! 5. **Refused at submission** (`_eval_nodes_topo`, no top switch:
//!    `ESLURM_TOPO_INSUFFICIENT_RESOURCES`; then `_pick_best_nodes` in
//!    `src/slurmctld/node_scheduler.c` finds the job never runnable): when
//!    the switches have no common root (a forest) and no tree holds the
//!    job even with every node free, Slurm refuses it ("Requested node
//!    configuration is not available", [`PlaceError::Unavailable`]), never
//!    queues it. A job of one node is never refused this way.
//!
//! ```
//! use partalloc_allocators::tree::TreePlacer;
//! use partalloc_topology::slurm::SlurmMachine;
//! let conf = "SwitchName=a Nodes=n[0-3]\nSwitchName=b Nodes=n[4-7]\nSwitchName=c Switches=a,b\n";
//! let m = SlurmMachine::parse_conf(conf, "x.conf")?;
//! let mut p = TreePlacer::new(m.tree().expect("tree"));
//! // Neither leaf holds 6: the first (a) gives its 4, then b the 2 left.
//! let nodes = p.place(6, None)?;
//! assert_eq!(m.hostlist(&nodes), "n[0-5]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::NodeId;
use partalloc_topology::slurm::Tree;

use crate::error::PlaceError;

/// Distance between switches in different trees.
const FAR: u32 = u32::MAX;

/// Most switches for which [`TreePlacer`] keeps a table of all pairwise
/// hops (4 MB at this size).
const HOPS_TABLE_MAX: usize = 1024;

/// Hops from switch `a` to switch `b` through their lowest common ancestor,
/// walking up from the deeper one; `FAR` when they share no ancestor.
fn lca_hops(parent: &[Option<u32>], depth: &[u32], a: usize, b: usize) -> u32 {
    let (mut a, mut b, mut h) = (a, b, 0u32);
    while depth[a] > depth[b] {
        let Some(p) = parent[a] else { return FAR };
        a = p as usize;
        h += 1;
    }
    while depth[b] > depth[a] {
        let Some(p) = parent[b] else { return FAR };
        b = p as usize;
        h += 1;
    }
    while a != b {
        match (parent[a], parent[b]) {
            (Some(pa), Some(pb)) => {
                a = pa as usize;
                b = pb as usize;
                h += 2;
            }
            _ => return FAR,
        }
    }
    h
}

/// The placement state of one tree machine.
#[derive(Debug, Clone)]
pub struct TreePlacer {
    /// Node range of each leaf switch (in leaf order).
    leaf_nodes: Vec<core::ops::Range<NodeId>>,
    /// Free nodes per leaf.
    free: Vec<u32>,
    busy: Vec<bool>,
    /// Leaf (in leaf order) of each node.
    leaf_of: Vec<u32>,
    /// Per switch: its Slurm level, its parent and its free nodes.
    height: Vec<u32>,
    parent: Vec<Option<u32>>,
    switch_free: Vec<u32>,
    /// Switch index of each leaf; leaf order index of each leaf switch.
    leaf_switch: Vec<u32>,
    leaf_index: Vec<Option<u32>>,
    /// Per switch: the leaves below it (for the measures).
    below: Vec<Vec<u32>>,
    /// Switches without a parent.
    roots: usize,
    /// Nodes of the largest tree (all nodes under one root): a larger job
    /// of two or more nodes is refused at submission.
    largest_tree: u32,
    /// Hops between switches, row by row (`FAR` across trees), kept for
    /// trees of at most [`HOPS_TABLE_MAX`] switches; larger ones walk up
    /// to the common ancestor on each query ([`hop`](Self::hop)).
    hops: Vec<u32>,
    /// Per switch: hops up to its root.
    depth: Vec<u32>,
    /// Reused between placements: free nodes per switch as the placement
    /// sees them, and the summed distance to the leaves picked so far.
    count: Vec<u32>,
    dist: Vec<u32>,
}

impl TreePlacer {
    /// An empty machine with the structure of `tree`.
    #[must_use]
    pub fn new(tree: &Tree) -> Self {
        let sw = tree.switches();
        let n = sw.len();
        let height: Vec<u32> = (0..n as u32).map(|s| tree.level(s).unwrap_or(0)).collect();
        let mut below = vec![Vec::new(); n];
        for (li, &leaf) in tree.leaves().iter().enumerate() {
            for s in tree.ancestors(leaf) {
                if let Some(b) = below.get_mut(s as usize) {
                    b.push(li as u32);
                }
            }
        }
        let leaf_nodes: Vec<_> = tree
            .leaves()
            .iter()
            .map(|&l| sw[l as usize].nodes.clone())
            .collect();
        let total = leaf_nodes.iter().map(|r| r.end as usize).max().unwrap_or(0);
        let mut leaf_of = vec![0u32; total];
        for (li, r) in leaf_nodes.iter().enumerate() {
            for node in r.clone() {
                leaf_of[node as usize] = li as u32;
            }
        }
        let free: Vec<u32> = leaf_nodes.iter().map(|r| r.end - r.start).collect();
        let switch_free: Vec<u32> = below
            .iter()
            .map(|ls| ls.iter().map(|&l| free[l as usize]).sum())
            .collect();
        let mut leaf_index = vec![None; n];
        for (li, &l) in tree.leaves().iter().enumerate() {
            leaf_index[l as usize] = Some(li as u32);
        }
        let parent: Vec<Option<u32>> = sw.iter().map(|s| s.parent).collect();
        // Depths from the roots down, so a chain costs one pass.
        let mut depth = vec![0u32; n];
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&s| sw[s as usize].parent.is_none())
            .collect();
        let mut next = 0;
        while let Some(&s) = order.get(next) {
            for &c in &sw[s as usize].children {
                depth[c as usize] = depth[s as usize] + 1;
                order.push(c);
            }
            next += 1;
        }
        // Hops: through the lowest common ancestor, within one tree. The
        // table is n² entries, so only small trees keep one (a file of
        // 100,000 switches would ask for 40 GB).
        let mut hops = Vec::new();
        if n <= HOPS_TABLE_MAX {
            hops = vec![FAR; n * n];
            for a in 0..n {
                for b in 0..n {
                    hops[a * n + b] = lca_hops(&parent, &depth, a, b);
                }
            }
        }
        let largest_tree = (0..n)
            .filter(|&s| parent[s].is_none())
            .map(|s| switch_free[s])
            .max()
            .unwrap_or(0);
        Self {
            roots: parent.iter().filter(|p| p.is_none()).count(),
            largest_tree,
            free,
            leaf_nodes,
            busy: vec![false; total],
            leaf_of,
            height,
            parent,
            switch_free,
            leaf_switch: tree.leaves().to_vec(),
            leaf_index,
            below,
            hops,
            depth,
            count: vec![0; n],
            dist: vec![0; n],
        }
    }

    /// Hops between switches `a` and `b` through their lowest common
    /// ancestor (`FAR` when they are in different trees).
    fn hop(&self, a: usize, b: usize) -> u32 {
        let n = self.parent.len();
        match self.hops.get(a * n + b) {
            Some(&h) if !self.hops.is_empty() => h,
            _ => lca_hops(&self.parent, &self.depth, a, b),
        }
    }

    /// Slurm's comparison of leaf `i` with the best leaf `j` so far
    /// (`_topo_compare_switches`): above 0 if `i` is better, and whether
    /// `i` (or the ancestor last compared) holds `rem`.
    fn compare(&self, mut i: usize, mut j: usize, rem: u32) -> (i32, bool) {
        let c = &self.count;
        let mut i_fit;
        loop {
            i_fit = c[i] >= rem;
            let j_fit = c[j] >= rem;
            match (i_fit, j_fit) {
                (true, true) => {
                    if c[i] != c[j] {
                        return (if c[i] < c[j] { 1 } else { -1 }, i_fit);
                    }
                    break;
                }
                (true, false) => return (1, i_fit),
                (false, true) => return (-1, i_fit),
                (false, false) => {}
            }
            match (self.parent[i], self.parent[j]) {
                (Some(pi), Some(pj)) if pi != pj => {
                    i = pi as usize;
                    j = pj as usize;
                }
                _ => break,
            }
        }
        let order = c[i]
            .cmp(&c[j])
            .then_with(|| self.height[j].cmp(&self.height[i]));
        (order as i32, i_fit)
    }

    /// The next leaf switch for `rem` nodes (`_topo_choose_best_switch`
    /// over the leaves in switch order).
    fn pick(&self, rem: u32) -> Option<usize> {
        let mut best: Option<usize> = None;
        for i in 0..self.height.len() {
            if self.height[i] != 0 || self.leaf_index[i].is_none() {
                continue;
            }
            let usable = self.count[i] > 0 && self.dist[i] != FAR;
            let Some(b) = best else {
                if usable {
                    best = Some(i);
                }
                continue;
            };
            if !usable {
                continue;
            }
            let (better, i_fit) = self.compare(i, b, rem);
            if (self.dist[i] < self.dist[b] && i_fit)
                || (self.dist[i] == self.dist[b] && better > 0)
            {
                best = Some(i);
            }
        }
        best
    }

    /// Free nodes of switch `s` that lie under switch `top`.
    fn under(&self, s: usize, top: usize) -> u32 {
        let n = self.height.len();
        let anc = |a: usize, b: usize| {
            // Whether `a` is `b` or above it.
            let mut x = Some(b as u32);
            while let Some(y) = x {
                if y as usize == a {
                    return true;
                }
                x = self.parent[y as usize];
            }
            false
        };
        if s < n && anc(top, s) {
            self.switch_free[s]
        } else if anc(s, top) {
            self.switch_free[top]
        } else {
            0
        }
    }

    /// Places a job; returns its nodes in increasing id order.
    ///
    /// # Errors
    /// As [`place_into`](Self::place_into).
    pub fn place(
        &mut self,
        nodes: u32,
        max_leaves: Option<u32>,
    ) -> Result<Vec<NodeId>, PlaceError> {
        let mut out = Vec::with_capacity(nodes as usize);
        self.place_into(nodes, max_leaves, &mut out)?;
        Ok(out)
    }

    /// Places a job and writes its nodes, in increasing id order, into
    /// `out` (cleared first). With a reused `out` no placement allocates.
    ///
    /// # Errors
    /// [`PlaceError::Invalid`] for no nodes, more than the machine or a
    /// limit of zero leaves; [`PlaceError::Unavailable`] for a job of two
    /// or more nodes that no tree of the machine holds (only when the
    /// switches have no common root); [`PlaceError::NoRoom`] when the job waits (no
    /// switch has room, or the placement would use more than `max_leaves`
    /// leaf switches); the state is then unchanged.
    pub fn place_into(
        &mut self,
        nodes: u32,
        max_leaves: Option<u32>,
        out: &mut Vec<NodeId>,
    ) -> Result<(), PlaceError> {
        out.clear();
        if nodes == 0 || nodes as usize > self.busy.len() || max_leaves == Some(0) {
            return Err(PlaceError::Invalid {
                nodes,
                reason: format!(
                    "the machine has {} nodes and a job needs at least one leaf switch",
                    self.busy.len()
                ),
            });
        }
        if nodes == 1 {
            // A one-node job skips the tree rules (select/cons_tres
            // `_get_one_res`): the first free node, in node order.
            let Some(x) = self.busy.iter().position(|b| !b) else {
                return Err(PlaceError::NoRoom { nodes });
            };
            self.busy[x] = true;
            let l = self.leaf_of[x] as usize;
            self.take_from(l, 1, false);
            out.push(x as NodeId);
            return Ok(());
        }
        let n = self.height.len();
        // The top switch: the highest level with room, the last of equals.
        let mut top: Option<usize> = None;
        for s in 0..n {
            if self.switch_free[s] >= nodes && top.is_none_or(|t| self.height[s] >= self.height[t])
            {
                top = Some(s);
            }
        }
        let Some(top) = top else {
            // Not even the empty machine has a switch over this many
            // nodes: Slurm refuses the job at submission.
            if nodes > self.largest_tree {
                return Err(PlaceError::Unavailable { nodes });
            }
            return Err(PlaceError::NoRoom { nodes });
        };
        if self.parent[top].is_none() && self.roots == 1 {
            // The only root: every switch's free nodes lie under it.
            self.count.copy_from_slice(&self.switch_free);
        } else {
            for s in 0..n {
                self.count[s] = self.under(s, top);
            }
        }
        self.dist.fill(0);
        let mut rem = nodes;
        let mut leaves = 0u32;
        let mut prev = u64::from(rem) + 1;
        while rem > 0 {
            if prev == u64::from(rem) {
                break;
            }
            prev = u64::from(rem);
            let Some(best) = self.pick(rem) else { break };
            leaves += 1;
            for x in 0..n {
                let h = self.hop(best, x);
                self.dist[x] = if h == FAR || self.dist[x] == FAR {
                    FAR
                } else {
                    self.dist[x] + h
                };
            }
            if let Some(l) = self.leaf_index[best] {
                for node in self.leaf_nodes[l as usize].clone() {
                    if rem == 0 {
                        break;
                    }
                    if !self.busy[node as usize] {
                        // Marked now; undone below if the job cannot start.
                        self.busy[node as usize] = true;
                        out.push(node);
                        rem -= 1;
                    }
                }
            }
            // The whole leaf counts as used, up to the root.
            let used = self.count[best];
            let mut s = Some(best as u32);
            while let Some(x) = s {
                let c = &mut self.count[x as usize];
                *c = c.saturating_sub(used);
                s = self.parent[x as usize];
            }
        }
        if rem > 0 || max_leaves.is_some_and(|m| leaves > m) {
            for &node in out.iter() {
                self.busy[node as usize] = false;
            }
            out.clear();
            return Err(PlaceError::NoRoom { nodes });
        }
        for &node in out.iter() {
            let l = self.leaf_of[node as usize] as usize;
            self.take_from(l, 1, false);
        }
        out.sort_unstable();
        Ok(())
    }

    /// Whether the empty machine would start a job of `nodes` within
    /// `max_leaves` leaf switches (a job that never would waits for ever
    /// in a simulation; Slurm lets it run after `max_switch_wait`).
    #[must_use]
    pub fn fits_empty(&self, nodes: u32, max_leaves: Option<u32>) -> bool {
        let mut empty = self.clone();
        empty.busy.fill(false);
        for (l, r) in empty.leaf_nodes.iter().enumerate() {
            empty.free[l] = r.end - r.start;
        }
        for s in 0..empty.switch_free.len() {
            empty.switch_free[s] = empty.below[s].iter().map(|&l| empty.free[l as usize]).sum();
        }
        empty.place(nodes, max_leaves).is_ok()
    }

    /// Takes (or with `back`, returns) `count` free nodes of leaf `l`, and
    /// of every switch above it.
    fn take_from(&mut self, l: usize, count: u32, back: bool) {
        let change = |x: &mut u32| {
            if back {
                *x += count;
            } else {
                *x -= count;
            }
        };
        change(&mut self.free[l]);
        let mut s = Some(self.leaf_switch[l]);
        while let Some(sw) = s {
            change(&mut self.switch_free[sw as usize]);
            s = self.parent[sw as usize];
        }
    }

    /// Frees the nodes of a placed job (ids not busy are skipped).
    pub fn release(&mut self, nodes: &[NodeId]) {
        for &n in nodes {
            if let Some(b) = self.busy.get_mut(n as usize).filter(|b| **b) {
                *b = false;
                let l = self.leaf_of[n as usize] as usize;
                self.take_from(l, 1, true);
            }
        }
    }

    /// Marks `nodes` busy as a running job placed elsewhere (for replaying
    /// another scheduler's decisions). Ids outside the machine or already
    /// busy are skipped.
    pub fn occupy(&mut self, nodes: &[NodeId]) {
        for &n in nodes {
            if let Some(b) = self.busy.get_mut(n as usize).filter(|b| !**b) {
                *b = true;
                let l = self.leaf_of[n as usize] as usize;
                self.take_from(l, 1, false);
            }
        }
    }

    /// Free nodes of the whole machine.
    #[must_use]
    pub fn free_nodes(&self) -> u32 {
        self.free.iter().sum()
    }

    /// The largest job that can be placed now under one switch of height
    /// `height` (0 = a leaf switch), without a leaf limit: the most free
    /// nodes under any such switch (0 if there is none).
    #[must_use]
    pub fn largest_placeable(&self, height: u32) -> u32 {
        (0..self.height.len())
            .filter(|&s| self.height[s] == height)
            .map(|s| self.switch_free[s])
            .max()
            .unwrap_or(0)
    }

    /// Free nodes that a job wanting whole leaf switches cannot use: those
    /// on leaf switches that are partly busy.
    #[must_use]
    pub fn stranded_nodes(&self) -> u32 {
        self.free
            .iter()
            .zip(&self.leaf_nodes)
            .filter(|(f, r)| **f < r.end - r.start)
            .map(|(f, _)| *f)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use partalloc_topology::slurm::SlurmMachine;
    use proptest::prelude::*;

    use super::*;

    fn machine() -> SlurmMachine {
        let conf = "SwitchName=l0 Nodes=t[00-03]\nSwitchName=l1 Nodes=t[04-07]\n\
                    SwitchName=l2 Nodes=t[08-11]\nSwitchName=l3 Nodes=t[12-15]\n\
                    SwitchName=s0 Switches=l[0-1]\nSwitchName=s1 Switches=l[2-3]\n\
                    SwitchName=top Switches=s[0-1]\n";
        SlurmMachine::parse_conf(conf, "t.conf").unwrap()
    }

    /// Leaves of 2, 3, 3 and 4 nodes, pairs under two spines and a core.
    fn uneven() -> SlurmMachine {
        let conf = "SwitchName=l0 Nodes=t[00-01]\nSwitchName=l1 Nodes=t[02-04]\n\
                    SwitchName=l2 Nodes=t[05-07]\nSwitchName=l3 Nodes=t[08-11]\n\
                    SwitchName=s0 Switches=l[0-1]\nSwitchName=s1 Switches=l[2-3]\n\
                    SwitchName=top Switches=s[0-1]\n";
        SlurmMachine::parse_conf(conf, "u.conf").unwrap()
    }

    #[test]
    fn best_fit_leaf_first_of_equals_then_closest_leaves() {
        let m = machine();
        let mut p = TreePlacer::new(m.tree().unwrap());
        // Every leaf holds 3: the first of the equal best fits.
        assert_eq!(m.hostlist(&p.place(3, None).unwrap()), "t[00-02]");
        // One node: l0 has 1 free, the best fit.
        assert_eq!(m.hostlist(&p.place(1, None).unwrap()), "t03");
        // Two: l1, l2, l3 all 4: the first.
        assert_eq!(m.hostlist(&p.place(2, None).unwrap()), "t[04-05]");
        // Five: no leaf holds it; l1's spine s0 has 2, s1 has 8 and holds
        // it, so l2 first (the first of s1's leaves), then the closest leaf
        // that holds the last one: l3 (two hops) rather than l1 (four).
        assert_eq!(m.hostlist(&p.place(5, None).unwrap()), "t[08-12]");
        // Four nodes within one leaf: l1 has 2, l3 3: never now.
        assert_eq!(p.place(4, Some(1)), Err(PlaceError::NoRoom { nodes: 4 }));
        // Without the limit: l3 (3) beats l1 (2) as neither holds 4 and
        // their spines differ (s1 has 3, s0 has 2: more wins); then l1.
        assert_eq!(m.hostlist(&p.place(4, None).unwrap()), "t[06,13-15]");
        assert_eq!(p.free_nodes(), 1);
    }

    proptest! {
        /// A tree too large for the hop table walks to the common ancestor
        /// instead: the same placements, job for job, as with the table.
        #[test]
        fn hops_walked_up_place_as_the_table_does(
            ops in prop::collection::vec((1u32..=16, 0u32..4, any::<bool>()), 1..30)
        ) {
            let m = machine();
            let mut table = TreePlacer::new(m.tree().unwrap());
            let mut walk = table.clone();
            walk.hops = Vec::new();
            for a in 0..7 {
                for b in 0..7 {
                    prop_assert_eq!(walk.hop(a, b), table.hop(a, b));
                }
            }
            let mut live = Vec::new();
            for (nodes, limit, release) in ops {
                if release && !live.is_empty() {
                    let v: Vec<NodeId> = live.remove(0);
                    table.release(&v);
                    walk.release(&v);
                    continue;
                }
                let limit = (limit > 0).then_some(limit);
                let (a, b) = (table.place(nodes, limit), walk.place(nodes, limit));
                prop_assert_eq!(&a, &b);
                if let Ok(v) = a {
                    live.push(v);
                }
            }
        }
    }

    #[test]
    fn the_hop_table_is_kept_for_small_trees_only() {
        let mut conf = String::from("SwitchName=s0 Nodes=n[0-1]\n");
        for i in 1..=HOPS_TABLE_MAX {
            conf.push_str(&format!("SwitchName=s{i} Switches=s{}\n", i - 1));
        }
        let m = SlurmMachine::parse_conf(&conf, "chain.conf").unwrap();
        let mut p = TreePlacer::new(m.tree().unwrap());
        assert!(p.hops.is_empty());
        assert_eq!(p.hop(0, HOPS_TABLE_MAX), HOPS_TABLE_MAX as u32);
        assert_eq!(m.hostlist(&p.place(2, None).unwrap()), "n[0-1]");
        assert!(TreePlacer::new(machine().tree().unwrap()).hops.len() == 49);
    }

    #[test]
    fn switch_limits_make_a_job_wait_never_reshape_it() {
        let m = uneven();
        let mut p = TreePlacer::new(m.tree().unwrap());
        // Seven nodes: the root is the top switch; l3 (4) first, as no
        // leaf holds 7 and s1 (7) holds it, then l2 (3): two leaves.
        assert_eq!(m.hostlist(&p.place(7, Some(2)).unwrap()), "t[05-11]");
        // Five nodes on l0 (2) and l1 (3): two leaves; with one it waits.
        assert_eq!(p.place(5, Some(1)), Err(PlaceError::NoRoom { nodes: 5 }));
        assert!(p.busy.iter().filter(|b| **b).count() == 7);
        assert_eq!(m.hostlist(&p.place(5, Some(2)).unwrap()), "t[00-04]");
        assert!(matches!(
            p.place(1, Some(0)),
            Err(PlaceError::Invalid { .. })
        ));
        assert!(matches!(p.place(13, None), Err(PlaceError::Invalid { .. })));
        assert!(p.fits_empty(7, Some(2)));
        assert!(!p.fits_empty(8, Some(2)));
    }

    /// Two trees without a common root: leaves of 15, 15 (under `a`) and
    /// 16, 16 (under `b`), 62 nodes in all.
    fn forest() -> SlurmMachine {
        let conf = "SwitchName=a0 Nodes=f[00-14]\nSwitchName=a1 Nodes=f[15-29]\n\
                    SwitchName=b0 Nodes=f[30-45]\nSwitchName=b1 Nodes=f[46-61]\n\
                    SwitchName=a Switches=a[0-1]\nSwitchName=b Switches=b[0-1]\n";
        SlurmMachine::parse_conf(conf, "forest.conf").unwrap()
    }

    #[test]
    fn a_job_no_tree_of_a_forest_holds_is_refused_not_kept_waiting() {
        let m = forest();
        let mut p = TreePlacer::new(m.tree().unwrap());
        // Larger than either tree (30, 32), not than the machine (62):
        // refused on the empty machine, as Slurm refuses it at submission.
        for nodes in [33, 40, 62] {
            assert_eq!(
                p.place(nodes, None),
                Err(PlaceError::Unavailable { nodes }),
                "{nodes}"
            );
            assert!(!p.fits_empty(nodes, None));
        }
        // The largest tree's size starts at once, in that tree.
        assert_eq!(m.hostlist(&p.place(32, None).unwrap()), "f[30-61]");
        // 30 fits the other tree but it is busy now: the job waits.
        assert_eq!(m.hostlist(&p.place(2, None).unwrap()), "f[00-01]");
        assert_eq!(p.place(30, None), Err(PlaceError::NoRoom { nodes: 30 }));
        // Still refused, whatever is busy.
        assert_eq!(
            p.place(33, None),
            Err(PlaceError::Unavailable { nodes: 33 })
        );
        assert!(matches!(p.place(63, None), Err(PlaceError::Invalid { .. })));
    }

    #[test]
    fn largest_placeable_and_stranded_nodes_follow_the_state() {
        let m = uneven();
        let mut p = TreePlacer::new(m.tree().unwrap());
        assert_eq!(
            (
                p.largest_placeable(0),
                p.largest_placeable(1),
                p.largest_placeable(2)
            ),
            (4, 7, 12)
        );
        let mut out = Vec::new();
        p.place_into(3, None, &mut out).unwrap();
        // Best fit for three: l1 (three free) before l2 (three, later).
        assert_eq!(m.hostlist(&out), "t[02-04]");
        p.place_into(1, None, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "t00");
        assert_eq!(p.stranded_nodes(), 1);
        assert_eq!(
            (
                p.largest_placeable(0),
                p.largest_placeable(1),
                p.largest_placeable(2)
            ),
            (4, 7, 8)
        );
        assert_eq!(p.largest_placeable(3), 0);
        assert_eq!(p.free_nodes(), 8);
    }

    proptest! {
        /// Any history: grants are exact, disjoint and free before; without
        /// a leaf limit a job waits exactly when fewer nodes are free than it
        /// asks (the root is the top switch and every leaf gives all it
        /// has); with a limit a placed job uses at most that many leaves,
        /// and a job that waits leaves the state as it was.
        #[test]
        fn grants_are_exact_and_wait_only_when_slurm_would(
            ops in prop::collection::vec((1u32..=12, 0u32..3, any::<bool>()), 1..40)
        ) {
            let m = uneven();
            let mut p = TreePlacer::new(m.tree().unwrap());
            let mut live: Vec<Vec<NodeId>> = Vec::new();
            for (nodes, limit, release) in ops {
                if release && !live.is_empty() {
                    let v = live.remove(0);
                    p.release(&v);
                    continue;
                }
                let max = (limit > 0).then_some(limit);
                let before = p.clone();
                match p.place(nodes, max) {
                    Ok(v) => {
                        prop_assert_eq!(v.len(), nodes as usize);
                        prop_assert!(v.iter().all(|&n| !before.busy[n as usize]));
                        let leaves: std::collections::BTreeSet<u32> =
                            v.iter().map(|&n| before.leaf_of[n as usize]).collect();
                        prop_assert!(max.is_none_or(|k| leaves.len() as u32 <= k));
                        prop_assert_eq!(p.free_nodes() + nodes, before.free_nodes());
                        live.push(v);
                    }
                    Err(PlaceError::NoRoom { .. }) => {
                        if max.is_none() {
                            prop_assert!(before.free_nodes() < nodes);
                        }
                        prop_assert_eq!(&p.busy, &before.busy);
                        prop_assert_eq!(&p.free, &before.free);
                    }
                    Err(e) => prop_assert!(false, "{e}"),
                }
            }
        }
    }
}
