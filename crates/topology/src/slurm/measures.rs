//! What a placement costs in locality, measured the same way for every
//! strategy: fast domains touched, segments split, distance class.

use super::{Shape, SlurmMachine};
use crate::NodeId;

/// Locality of one job's nodes on a Slurm machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct JobLocality {
    /// Base blocks (block machine) or leaf switches (tree machine) holding
    /// at least one of the job's nodes.
    pub domains: u32,
    /// Segments that cannot lie inside one base block or leaf switch:
    /// with `n` nodes in segments of `S` and `c_d` nodes in domain `d`,
    /// `n / S − Σ_d ⌊c_d / S⌋`. Zero when every domain holds whole segments
    /// (and always zero without a segment size).
    pub split_segments: u32,
    /// The smallest level whose one block holds every node (0 = one base
    /// block; the number of levels when only the whole machine does), or the
    /// level of the lowest switch over every node as Slurm numbers switch
    /// levels (0 = one leaf switch, one more than the highest child above;
    /// `u32::MAX` when the nodes share no switch).
    pub distance_class: u32,
}

impl SlurmMachine {
    /// The fast domain (base block or leaf switch, by index in id order)
    /// of `node`, if it exists.
    #[must_use]
    pub fn domain_of(&self, node: NodeId) -> Option<u32> {
        if node as usize >= self.num_nodes() {
            return None;
        }
        match &self.shape {
            Shape::Blocks(b) => Some(b.block_of(node)),
            // Leaves hold consecutive runs of ids, in id order.
            Shape::Tree(t) => Some(
                t.leaves
                    .partition_point(|&l| t.switches[l as usize].nodes.end <= node)
                    as u32,
            ),
            Shape::Rings(r) => r.ring_of(node).map(|i| i as u32),
            Shape::Toruses(t) => t.torus_of(node).map(|i| i as u32),
        }
    }

    /// Number of fast domains (base blocks or leaf switches).
    #[must_use]
    pub fn num_domains(&self) -> u32 {
        match &self.shape {
            Shape::Blocks(b) => b.base_blocks(),
            Shape::Tree(t) => t.leaves.len() as u32,
            Shape::Rings(r) => r.len() as u32,
            Shape::Toruses(t) => t.toruses().len() as u32,
        }
    }

    /// The locality of a job holding `nodes` (in increasing id order, as
    /// grants list them), placed in segments of `segment` nodes if given.
    /// Ids outside the machine are ignored. Does not allocate.
    #[must_use]
    pub fn job_locality(&self, nodes: &[NodeId], segment: Option<u32>) -> JobLocality {
        let mut out = JobLocality::default();
        let (mut whole, mut total) = (0u32, 0u32);
        let mut run: Option<(u32, u32)> = None; // (domain, nodes in it so far)
        let seg = segment.filter(|&s| s > 0);
        let close = |run: Option<(u32, u32)>, whole: &mut u32| {
            if let (Some((_, c)), Some(s)) = (run, seg) {
                *whole += c / s;
            }
        };
        for &n in nodes {
            let Some(d) = self.domain_of(n) else { continue };
            total += 1;
            match run {
                Some((rd, c)) if rd == d => run = Some((d, c + 1)),
                _ => {
                    close(run, &mut whole);
                    out.domains += 1;
                    run = Some((d, 1));
                }
            }
        }
        close(run, &mut whole);
        if let Some(s) = seg {
            out.split_segments = (total / s).saturating_sub(whole);
        }
        out.distance_class = self.distance_class(nodes);
        out
    }

    fn distance_class(&self, nodes: &[NodeId]) -> u32 {
        let mut ids = nodes
            .iter()
            .copied()
            .filter(|&n| (n as usize) < self.num_nodes());
        let Some(first) = ids.next() else { return 0 };
        match &self.shape {
            Shape::Blocks(b) => {
                let (mut lo, mut hi) = (b.block_of(first), b.block_of(first));
                for n in ids {
                    lo = lo.min(b.block_of(n));
                    hi = hi.max(b.block_of(n));
                }
                b.levels
                    .iter()
                    .position(|&m| lo / m == hi / m)
                    .map_or(b.levels.len() as u32, |l| l as u32)
            }
            Shape::Tree(t) => {
                // Climb from the first node's leaf until the switch's
                // subtree covers every node: the lowest common switch,
                // whichever node comes first; its class is its level.
                let Some(leaf) = t.leaf_of(first) else {
                    return u32::MAX;
                };
                t.ancestors(leaf)
                    .find(|&s| {
                        nodes
                            .iter()
                            .all(|&n| t.leaf_of(n).is_none_or(|l| t.ancestors(l).any(|a| a == s)))
                    })
                    .and_then(|s| t.level(s))
                    .unwrap_or(u32::MAX)
            }
            // One ring or torus: class 0; several: no common domain.
            Shape::Rings(_) | Shape::Toruses(_) => {
                let d = self.domain_of(first);
                if nodes
                    .iter()
                    .all(|&n| (n as usize) >= self.num_nodes() || self.domain_of(n) == d)
                {
                    0
                } else {
                    u32::MAX
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventeen_seventeen_two_splits_one_segment_of_twelve() {
        let mut conf = String::new();
        for r in 0..4 {
            conf.push_str(&format!(
                "BlockName=r{r} Nodes=n[{:02}-{:02}]\n",
                r * 18,
                r * 18 + 17
            ));
        }
        conf.push_str("BlockSizes=18,36,72\n");
        let m = SlurmMachine::parse_conf(&conf, "m").unwrap();
        // 17 + 17 + 2 over racks 0, 1, 2: three racks, one segment of 12
        // has to cross racks, and only the 72-node block holds them all.
        let bad: Vec<NodeId> = (0..17).chain(18..35).chain(36..38).collect();
        let l = m.job_locality(&bad, Some(12));
        assert_eq!(
            l,
            JobLocality {
                domains: 3,
                split_segments: 1,
                distance_class: 2
            }
        );
        // 12 + 12 + 12: none split.
        let good: Vec<NodeId> = (0..12).chain(18..30).chain(36..48).collect();
        assert_eq!(m.job_locality(&good, Some(12)).split_segments, 0);
        assert_eq!(m.job_locality(&good, None).split_segments, 0);
        // Inside one rack, inside the pair, the whole machine.
        assert_eq!(m.job_locality(&[3, 5], None).distance_class, 0);
        assert_eq!(m.job_locality(&[3, 20], None).distance_class, 1);
        assert_eq!(m.job_locality(&[3, 71], None).distance_class, 2);
        assert_eq!(m.job_locality(&[], None), JobLocality::default());
    }

    #[test]
    fn tree_locality_counts_leaves_and_the_covering_height() {
        let conf = "SwitchName=l0 Nodes=t[0-3]\nSwitchName=l1 Nodes=t[4-7]\nSwitchName=l2 Nodes=t[8-11]\n\
                    SwitchName=s0 Switches=l[0-1]\nSwitchName=s1 Switches=l2\nSwitchName=top Switches=s[0-1]\n";
        let m = SlurmMachine::parse_conf(conf, "t").unwrap();
        let l = m.job_locality(&[0, 1, 4, 5], Some(2));
        assert_eq!(
            l,
            JobLocality {
                domains: 2,
                split_segments: 0,
                distance_class: 1
            }
        );
        let l = m.job_locality(&[0, 4, 8], Some(3));
        assert_eq!(
            l,
            JobLocality {
                domains: 3,
                split_segments: 1,
                distance_class: 2
            }
        );
        assert_eq!(m.domain_of(9), Some(2));
        assert_eq!(m.num_domains(), 3);
        // Two roots: no common switch.
        let two = SlurmMachine::parse_conf("SwitchName=a Nodes=x1\nSwitchName=b Nodes=x2\n", "t")
            .unwrap();
        assert_eq!(two.job_locality(&[0, 1], None).distance_class, u32::MAX);
    }
}
