//! Switch-tree placement on a Slurm `topology/tree` machine.
//!
//! The rule follows the topology guide's description of `topology/tree`:
//! a job that fits one leaf switch goes to the best-fit leaf (fewest free
//! nodes that still hold it); otherwise to the lowest switch whose subtree
//! has room, best fit among the switches of that height, using as few leaf
//! switches as possible (the fullest-free leaves, then the best-fit leaf
//! for the remainder). `max_leaves` is sbatch's `--switches`.
//!
//! ```
//! use partalloc_allocators::tree::TreePlacer;
//! use partalloc_topology::slurm::SlurmMachine;
//! let conf = "SwitchName=a Nodes=n[0-3]\nSwitchName=b Nodes=n[4-7]\nSwitchName=c Switches=a,b\n";
//! let m = SlurmMachine::parse_conf(conf, "x.conf")?;
//! let mut p = TreePlacer::new(m.tree().expect("tree"));
//! let nodes = p.place(6, None)?;
//! assert_eq!(m.hostlist(&nodes), "n[0-5]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::NodeId;
use partalloc_topology::slurm::Tree;

use crate::block::PlaceError;

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
    /// Per switch: height above the leaves, the leaves below it, its
    /// parent and its free nodes.
    height: Vec<u32>,
    below: Vec<Vec<u32>>,
    parent: Vec<Option<u32>>,
    switch_free: Vec<u32>,
    /// Switch index of each leaf.
    leaf_switch: Vec<u32>,
    /// Per switch: the sizes of the leaves below it, largest first (what
    /// an empty machine offers a job limited to k leaves).
    sizes_below: Vec<Vec<u32>>,
    /// Nodes under the largest switch.
    largest_subtree: u32,
    /// Reused between placements: leaves sorted for a plan, the plan being
    /// tried and the best plan so far.
    sorted: Vec<u32>,
    trial: Vec<u32>,
    best: Vec<u32>,
}

impl TreePlacer {
    /// An empty machine with the structure of `tree`.
    #[must_use]
    pub fn new(tree: &Tree) -> Self {
        let sw = tree.switches();
        // Heights are Slurm's switch levels.
        let height: Vec<u32> = (0..sw.len() as u32)
            .map(|s| tree.level(s).unwrap_or(0))
            .collect();
        let mut below = vec![Vec::new(); sw.len()];
        for (li, &leaf) in tree.leaves().iter().enumerate() {
            for s in tree.ancestors(leaf) {
                below[s as usize].push(li as u32);
            }
        }
        let leaf_nodes: Vec<_> = tree
            .leaves()
            .iter()
            .map(|&l| sw[l as usize].nodes.clone())
            .collect();
        let total = leaf_nodes.last().map_or(0, |r| r.end as usize);
        let mut leaf_of = vec![0u32; total];
        for (li, r) in leaf_nodes.iter().enumerate() {
            for n in r.clone() {
                leaf_of[n as usize] = li as u32;
            }
        }
        let free: Vec<u32> = leaf_nodes.iter().map(|r| r.end - r.start).collect();
        let switch_free = below
            .iter()
            .map(|ls| ls.iter().map(|&l| free[l as usize]).sum())
            .collect();
        let widest = below.iter().map(Vec::len).max().unwrap_or(0);
        let sizes_below = below
            .iter()
            .map(|ls| {
                let mut v: Vec<u32> = ls.iter().map(|&l| free[l as usize]).collect();
                v.sort_unstable_by(|a, b| b.cmp(a));
                v
            })
            .collect::<Vec<Vec<u32>>>();
        let largest_subtree = sizes_below
            .iter()
            .map(|v: &Vec<u32>| v.iter().sum::<u32>())
            .max()
            .unwrap_or(0);
        Self {
            largest_subtree,
            sizes_below,
            free,
            leaf_nodes,
            busy: vec![false; total],
            leaf_of,
            height,
            below,
            parent: sw.iter().map(|s| s.parent).collect(),
            switch_free,
            leaf_switch: tree.leaves().to_vec(),
            sorted: Vec::with_capacity(widest),
            trial: Vec::with_capacity(widest),
            best: Vec::with_capacity(widest),
        }
    }

    /// Leaves (in leaf order) a job of `nodes` would use under switch `s`,
    /// written into `chosen`: while no leaf holds the rest, the leaf with
    /// the most free nodes; then the best-fit leaf for the rest. False if
    /// the job does not fit in `max` leaves.
    fn plan(
        &self,
        s: usize,
        nodes: u32,
        max: Option<u32>,
        sorted: &mut Vec<u32>,
        chosen: &mut Vec<u32>,
    ) -> bool {
        sorted.clear();
        sorted.extend_from_slice(&self.below[s]);
        sorted.sort_unstable_by_key(|&l| (core::cmp::Reverse(self.free[l as usize]), l));
        chosen.clear();
        let mut left = nodes;
        for (k, &l) in sorted.iter().enumerate() {
            if left == 0 {
                break;
            }
            let f = self.free[l as usize];
            if f >= left {
                // The remainder goes to the best-fit leaf among the rest.
                let best = sorted[k..]
                    .iter()
                    .copied()
                    .filter(|&x| self.free[x as usize] >= left)
                    .min_by_key(|&x| (self.free[x as usize], x))
                    .unwrap_or(l);
                chosen.push(best);
                left = 0;
                break;
            }
            if f == 0 {
                break;
            }
            chosen.push(l);
            left -= f;
        }
        left == 0 && max.is_none_or(|m| chosen.len() as u32 <= m)
    }

    fn check(&self, nodes: u32, max_leaves: Option<u32>) -> Result<(), PlaceError> {
        let invalid = |reason: String| PlaceError::Invalid { nodes, reason };
        if nodes == 0 || nodes as usize > self.busy.len() || max_leaves == Some(0) {
            return Err(invalid(format!(
                "the machine has {} nodes and a job needs at least one leaf switch",
                self.busy.len()
            )));
        }
        // Even on an empty machine the job must fit under one switch in at
        // most the allowed leaves, or it would wait for ever.
        let most = match max_leaves {
            // The largest subtree: its leaves' sizes sum to the most.
            None => self.largest_subtree,
            Some(k) => self
                .sizes_below
                .iter()
                .map(|v| v.iter().take(k as usize).sum::<u32>())
                .max()
                .unwrap_or(0),
        };
        if nodes > most {
            return Err(invalid(format!(
                "at most {most} nodes fit under one switch{}",
                max_leaves.map_or(String::new(), |m| format!(" in {m} leaf switches"))
            )));
        }
        Ok(())
    }

    /// The rule's switch, its plan left in `self.best`.
    fn choose_into(
        &mut self,
        nodes: u32,
        max_leaves: Option<u32>,
    ) -> Result<Option<usize>, PlaceError> {
        self.check(nodes, max_leaves)?;
        let (mut sorted, mut trial, mut best) = (
            core::mem::take(&mut self.sorted),
            core::mem::take(&mut self.trial),
            core::mem::take(&mut self.best),
        );
        let mut chosen: Option<(u32, u32, usize)> = None; // (height, free, switch)
        for s in 0..self.height.len() {
            let free = self.switch_free[s];
            if free < nodes {
                continue;
            }
            let key = (self.height[s], free);
            if chosen.is_some_and(|b| (b.0, b.1) <= key) {
                continue;
            }
            if self.plan(s, nodes, max_leaves, &mut sorted, &mut trial) {
                chosen = Some((key.0, key.1, s));
                core::mem::swap(&mut best, &mut trial);
            }
        }
        (self.sorted, self.trial, self.best) = (sorted, trial, best);
        Ok(chosen.map(|c| c.2))
    }

    /// The switch the rule chooses and the leaves it would use.
    ///
    /// # Errors
    /// A job of no nodes or larger than the machine, or a limit of zero
    /// leaves.
    pub fn choose(
        &self,
        nodes: u32,
        max_leaves: Option<u32>,
    ) -> Result<Option<(usize, Vec<u32>)>, PlaceError> {
        let mut probe = self.clone();
        Ok(probe
            .choose_into(nodes, max_leaves)?
            .map(|s| (s, probe.best.clone())))
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
    /// As [`choose`](Self::choose), or [`PlaceError::NoRoom`] (state unchanged).
    pub fn place_into(
        &mut self,
        nodes: u32,
        max_leaves: Option<u32>,
        out: &mut Vec<NodeId>,
    ) -> Result<(), PlaceError> {
        out.clear();
        if self.choose_into(nodes, max_leaves)?.is_none() {
            return Err(PlaceError::NoRoom { nodes });
        }
        let mut left = nodes;
        for i in 0..self.best.len() {
            let l = self.best[i] as usize;
            let take = self.free[l].min(left);
            let mut got = 0;
            for n in self.leaf_nodes[l].clone() {
                if got == take {
                    break;
                }
                if !self.busy[n as usize] {
                    self.busy[n as usize] = true;
                    out.push(n);
                    got += 1;
                }
            }
            self.take_from(l, take, false);
            left -= take;
        }
        out.sort_unstable();
        Ok(())
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

    #[test]
    fn fewest_leaves_and_best_fit_at_the_lowest_switch() {
        let m = machine();
        let mut p = TreePlacer::new(m.tree().unwrap());
        let a = p.place(3, None).unwrap();
        assert_eq!(m.hostlist(&a), "t[00-02]");
        // One node: the best-fit leaf is l0 (one free).
        assert_eq!(m.hostlist(&p.place(1, None).unwrap()), "t03");
        let b = p.place(2, None).unwrap();
        assert_eq!(m.hostlist(&b), "t[04-05]");
        // Five nodes: s0 has 2 free, so s1 (8 free): two leaves of s1.
        let c = p.place(5, None).unwrap();
        assert_eq!(m.hostlist(&c), "t[08-12]");
        // Four nodes, at most one leaf: none has four free any more.
        assert_eq!(p.place(4, Some(1)), Err(PlaceError::NoRoom { nodes: 4 }));
        // Without the limit: the lowest switch with room is the root; the
        // fullest leaf l3 gives all of its 3, l1 the remaining one.
        let d = p.place(4, None).unwrap();
        assert_eq!(m.hostlist(&d), "t[06,13-15]");
    }

    /// Leaves of 2, 3, 3 and 4 nodes, pairs under two spines and a core.
    fn uneven() -> SlurmMachine {
        let conf = "SwitchName=l0 Nodes=t[00-01]\nSwitchName=l1 Nodes=t[02-04]\n\
                    SwitchName=l2 Nodes=t[05-07]\nSwitchName=l3 Nodes=t[08-11]\n\
                    SwitchName=s0 Switches=l[0-1]\nSwitchName=s1 Switches=l[2-3]\n\
                    SwitchName=top Switches=s[0-1]\n";
        SlurmMachine::parse_conf(conf, "u.conf").unwrap()
    }

    /// The documented rule's ranking of one placement (a set of free
    /// nodes): the lowest switch over all its nodes, best fit among
    /// switches of that height (fewest free, then lowest index), then the
    /// fewest leaf switches. `None` if a node is busy or the set needs more
    /// than `max` leaves.
    fn rank(p: &TreePlacer, mask: u32, max: Option<u32>) -> Option<(u32, u32, usize, u32)> {
        let mut leaves = std::collections::BTreeSet::new();
        for n in (0..p.busy.len()).filter(|n| mask >> n & 1 == 1) {
            if p.busy[n] {
                return None;
            }
            leaves.insert(p.leaf_of[n]);
        }
        let count = leaves.len() as u32;
        if max.is_some_and(|m| count > m) {
            return None;
        }
        (0..p.height.len())
            .filter(|&s| leaves.iter().all(|l| p.below[s].contains(l)))
            .map(|s| (p.height[s], p.switch_free[s], s, count))
            .min()
    }

    proptest! {
        /// Every placement on a 12-node tree is enumerated: the placer's
        /// choice ranks best among all feasible ones, takes the lowest free
        /// ids of each leaf it uses, and it refuses exactly when none is
        /// feasible.
        #[test]
        fn placement_ranks_best_among_every_feasible_one(
            ops in prop::collection::vec((1u32..=12, 0u32..4, any::<bool>()), 1..25)
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
                let best = (0u32..1 << 12)
                    .filter(|mask| mask.count_ones() == nodes)
                    .filter_map(|mask| rank(&p, mask, max))
                    .min();
                let before = p.clone();
                match p.place(nodes, max) {
                    Ok(v) => {
                        let mask = v.iter().fold(0u32, |acc, &n| acc | 1 << n);
                        prop_assert_eq!(rank(&before, mask, max), best);
                        for &n in &v {
                            let l = before.leaf_of[n as usize] as usize;
                            let lower_free = before.leaf_nodes[l].clone()
                                .filter(|&x| x < n && !before.busy[x as usize])
                                .all(|x| v.contains(&x));
                            prop_assert!(lower_free, "node {n} skips a lower free node of its leaf");
                        }
                        live.push(v);
                    }
                    Err(e) => prop_assert!(best.is_none(), "{e} but {best:?} is feasible"),
                }
            }
        }
    }

    #[test]
    fn jobs_no_switch_could_ever_hold_are_invalid_not_waiting() {
        let m = uneven();
        let p = TreePlacer::new(m.tree().unwrap());
        // Two leaves hold at most 4 + 3 nodes.
        assert!(matches!(
            p.choose(8, Some(2)),
            Err(PlaceError::Invalid { .. })
        ));
        assert!(p.choose(7, Some(2)).unwrap().is_some());
        assert!(p.choose(12, None).unwrap().is_some());
        let two = SlurmMachine::parse_conf(
            "SwitchName=a Nodes=x[1-2]\nSwitchName=b Nodes=x[3-4]\n",
            "t",
        )
        .unwrap();
        let q = TreePlacer::new(two.tree().unwrap());
        assert!(matches!(q.choose(3, None), Err(PlaceError::Invalid { .. })));
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
        // Best fit for three: l1 (three free) before l2 (three, higher index).
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
        assert!(matches!(
            p.place_into(2, Some(0), &mut out),
            Err(PlaceError::Invalid { .. })
        ));
    }

    proptest! {
        #[test]
        fn grants_are_exact_disjoint_and_use_the_fewest_leaves(
            ops in prop::collection::vec((1u32..=16, any::<bool>()), 1..30)
        ) {
            let m = machine();
            let mut p = TreePlacer::new(m.tree().unwrap());
            let mut live: Vec<Vec<NodeId>> = Vec::new();
            for (nodes, release) in ops {
                if release && !live.is_empty() {
                    let v = live.remove(0);
                    p.release(&v);
                    continue;
                }
                let free: Vec<u32> = p.free.clone();
                let chosen = p.choose(nodes, None).unwrap();
                match p.place(nodes, None) {
                    Ok(v) => {
                        prop_assert_eq!(v.len(), nodes as usize);
                        let used: std::collections::BTreeSet<u32> =
                            v.iter().map(|n| n / 4).collect();
                        // Under the chosen switch no placement uses fewer
                        // leaves: its k-1 fullest leaves hold fewer nodes.
                        let (s, _) = chosen.unwrap();
                        let mut under: Vec<u32> =
                            p.below[s].iter().map(|&l| free[l as usize]).collect();
                        under.sort_unstable_by(|a, b| b.cmp(a));
                        let k = used.len();
                        prop_assert!(under[..k - 1].iter().sum::<u32>() < nodes);
                        prop_assert!(used.iter().all(|l| p.below[s].contains(l)));
                        for o in &live {
                            prop_assert!(o.iter().all(|n| !v.contains(n)));
                        }
                        live.push(v);
                    }
                    Err(_) => prop_assert!(free.iter().sum::<u32>() < nodes),
                }
            }
        }
    }
}
