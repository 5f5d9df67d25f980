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
    /// Per switch: height above the leaves and the leaves below it.
    height: Vec<u32>,
    below: Vec<Vec<u32>>,
}

impl TreePlacer {
    /// An empty machine with the structure of `tree`.
    #[must_use]
    pub fn new(tree: &Tree) -> Self {
        let sw = tree.switches();
        let mut height = vec![0u32; sw.len()];
        let mut below = vec![Vec::new(); sw.len()];
        for (li, &leaf) in tree.leaves().iter().enumerate() {
            for (h, s) in tree.ancestors(leaf).enumerate() {
                height[s as usize] = height[s as usize].max(h as u32);
                below[s as usize].push(li as u32);
            }
        }
        let leaf_nodes: Vec<_> = tree
            .leaves()
            .iter()
            .map(|&l| sw[l as usize].nodes.clone())
            .collect();
        let total = leaf_nodes.last().map_or(0, |r| r.end as usize);
        Self {
            free: leaf_nodes.iter().map(|r| r.end - r.start).collect(),
            leaf_nodes,
            busy: vec![false; total],
            height,
            below,
        }
    }

    /// Leaves (in leaf order) a job of `nodes` would use under switch `s`,
    /// fewest first, or `None` if it does not fit in `max` leaves.
    fn plan(&self, s: usize, nodes: u32, max: Option<u32>) -> Option<Vec<u32>> {
        let mut leaves: Vec<u32> = self.below[s].clone();
        leaves.sort_by_key(|&l| (core::cmp::Reverse(self.free[l as usize]), l));
        let mut chosen = Vec::new();
        let mut left = nodes;
        for (k, &l) in leaves.iter().enumerate() {
            if left == 0 {
                break;
            }
            let f = self.free[l as usize];
            if f >= left {
                // The remainder goes to the best-fit leaf among the rest.
                let best = leaves[k..]
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
        (left == 0 && max.is_none_or(|m| chosen.len() as u32 <= m)).then_some(chosen)
    }

    /// The switch the rule chooses and the leaves it would use.
    ///
    /// # Errors
    /// A job of no nodes or larger than the machine.
    pub fn choose(
        &self,
        nodes: u32,
        max_leaves: Option<u32>,
    ) -> Result<Option<(usize, Vec<u32>)>, PlaceError> {
        if nodes == 0 || nodes as usize > self.busy.len() || max_leaves == Some(0) {
            return Err(PlaceError::Invalid {
                nodes,
                reason: format!("the machine has {} nodes", self.busy.len()),
            });
        }
        let mut best: Option<(u32, u32, usize, Vec<u32>)> = None; // (height, free, switch, plan)
        for s in 0..self.height.len() {
            let free: u32 = self.below[s].iter().map(|&l| self.free[l as usize]).sum();
            if free < nodes {
                continue;
            }
            let key = (self.height[s], free);
            if best.as_ref().is_some_and(|b| (b.0, b.1) <= key) {
                continue;
            }
            if let Some(plan) = self.plan(s, nodes, max_leaves) {
                best = Some((key.0, key.1, s, plan));
            }
        }
        Ok(best.map(|(_, _, s, p)| (s, p)))
    }

    /// Places a job; returns its nodes in increasing id order.
    ///
    /// # Errors
    /// As [`choose`](Self::choose), or [`PlaceError::NoRoom`] (state unchanged).
    pub fn place(
        &mut self,
        nodes: u32,
        max_leaves: Option<u32>,
    ) -> Result<Vec<NodeId>, PlaceError> {
        let Some((_, leaves)) = self.choose(nodes, max_leaves)? else {
            return Err(PlaceError::NoRoom { nodes });
        };
        let mut out = Vec::with_capacity(nodes as usize);
        let mut left = nodes;
        for l in leaves {
            let range = self.leaf_nodes[l as usize].clone();
            let take = self.free[l as usize].min(left);
            let mut got = 0;
            for n in range {
                if got == take {
                    break;
                }
                if !self.busy[n as usize] {
                    self.busy[n as usize] = true;
                    out.push(n);
                    got += 1;
                }
            }
            self.free[l as usize] -= take;
            left -= take;
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Frees the nodes of a placed job.
    pub fn release(&mut self, nodes: &[NodeId]) {
        for &n in nodes {
            if let Some(b) = self.busy.get_mut(n as usize).filter(|b| **b) {
                *b = false;
                if let Some(l) = self.leaf_nodes.iter().position(|r| r.contains(&n)) {
                    self.free[l] += 1;
                }
            }
        }
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
