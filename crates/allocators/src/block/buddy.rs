//! A buddy-style baseline over aggregated blocks: every job gets one whole,
//! entirely free block of the smallest level that holds it, the first such
//! block in id order. Internal fragmentation (the block's nodes beyond the
//! job's) is the price of its simplicity, as for the buddy systems of the
//! hypercube papers; the base block is the smallest unit.

use partalloc_topology::NodeId;
use partalloc_topology::slurm::Blocks;

use super::PlaceError;

/// Whole-block placement state of one block machine.
#[derive(Debug, Clone)]
pub struct BlockBuddy {
    levels: Vec<u32>,
    /// First node id of each base block, then the number of nodes.
    starts: Vec<NodeId>,
    /// Per base block: whether it is granted.
    taken: Vec<bool>,
}

impl BlockBuddy {
    /// An empty machine with the structure of `blocks`.
    #[must_use]
    pub fn new(blocks: &Blocks) -> Self {
        let mut starts = Vec::with_capacity(blocks.base_blocks() as usize + 1);
        let mut next: NodeId = 0;
        for n in blocks.block_sizes() {
            starts.push(next);
            next += n;
        }
        starts.push(next);
        Self {
            levels: blocks.levels().to_vec(),
            starts,
            taken: vec![false; blocks.base_blocks() as usize],
        }
    }

    /// Nodes of the block of `m` base blocks starting at base block `f`.
    fn nodes_in(&self, f: usize, m: usize) -> u32 {
        self.starts[f + m] - self.starts[f]
    }

    /// The whole blocks of a level of `m` base blocks: their first base
    /// blocks.
    fn blocks_of(&self, m: usize) -> impl Iterator<Item = usize> + use<> {
        (0..self.taken.len() / m).map(move |i| i * m)
    }

    /// The level a job of `nodes` nodes is given a block of: the smallest
    /// with a block that holds it (with racks of the base size, the
    /// smallest whose blocks hold it).
    ///
    /// # Errors
    /// [`PlaceError::Invalid`] for 0 nodes or more than the largest block.
    pub fn level_for(&self, nodes: u32) -> Result<usize, PlaceError> {
        let holds = |m: usize| self.blocks_of(m).any(|f| self.nodes_in(f, m) >= nodes);
        let largest = self
            .levels
            .iter()
            .flat_map(|&m| self.blocks_of(m as usize).map(move |f| (f, m as usize)))
            .map(|(f, m)| self.nodes_in(f, m))
            .max()
            .unwrap_or(0);
        self.levels
            .iter()
            .position(|&m| holds(m as usize))
            .filter(|_| nodes > 0)
            .ok_or_else(|| PlaceError::Invalid {
                nodes,
                reason: format!("the largest block has {largest} nodes"),
            })
    }

    /// Grants the first entirely free block of the smallest level holding
    /// `nodes` nodes that holds them, and writes all of its node ids into
    /// `out` (cleared first), in increasing order.
    ///
    /// # Errors
    /// As [`level_for`](Self::level_for), or [`PlaceError::NoRoom`] (state
    /// unchanged).
    pub fn place_into(&mut self, nodes: u32, out: &mut Vec<NodeId>) -> Result<(), PlaceError> {
        out.clear();
        let m = self.levels[self.level_for(nodes)?] as usize;
        let first = self
            .blocks_of(m)
            .find(|&f| self.nodes_in(f, m) >= nodes && self.taken[f..f + m].iter().all(|t| !t))
            .ok_or(PlaceError::NoRoom { nodes })?;
        self.taken[first..first + m].fill(true);
        out.extend(self.starts[first]..self.starts[first + m]);
        Ok(())
    }

    /// Frees the base blocks of a granted block (given its node ids).
    pub fn release(&mut self, nodes: &[NodeId]) {
        for &n in nodes {
            let b = self.starts.partition_point(|&s| s <= n).saturating_sub(1);
            if let Some(t) = self.taken.get_mut(b).filter(|_| n < self.starts[b + 1]) {
                *t = false;
            }
        }
    }

    /// The largest job that can be placed now (0 if none): the most nodes
    /// of an entirely free block of any level.
    #[must_use]
    pub fn largest_placeable(&self) -> u32 {
        self.levels
            .iter()
            .map(|&m| m as usize)
            .flat_map(|m| self.blocks_of(m).map(move |f| (f, m)))
            .filter(|&(f, m)| self.taken[f..f + m].iter().all(|t| !t))
            .map(|(f, m)| self.nodes_in(f, m))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use partalloc_topology::slurm::SlurmMachine;

    use super::*;

    #[test]
    fn jobs_get_whole_blocks_of_the_smallest_level_first_fit() {
        let mut conf = String::new();
        for r in 0..8 {
            conf.push_str(&format!(
                "BlockName=r{r} Nodes=n[{:03}-{:03}]\n",
                r * 18,
                r * 18 + 17
            ));
        }
        conf.push_str("BlockSizes=18,36,72,144\n");
        let m = SlurmMachine::parse_conf(&conf, "b").unwrap();
        let mut b = BlockBuddy::new(m.blocks().unwrap());
        let mut out = Vec::new();
        b.place_into(5, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "n[000-017]");
        // 19 nodes: a pair; the first pair is broken, so racks 2-3.
        b.place_into(19, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "n[036-071]");
        let pair = out.clone();
        b.place_into(18, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "n[018-035]");
        assert_eq!(b.largest_placeable(), 72);
        // 73 nodes need the whole machine: refused while anything is held.
        assert_eq!(
            b.place_into(73, &mut out),
            Err(PlaceError::NoRoom { nodes: 73 })
        );
        assert!(matches!(
            b.place_into(145, &mut out),
            Err(PlaceError::Invalid { .. })
        ));
        b.release(&pair);
        b.place_into(40, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "n[072-143]");
        assert_eq!(b.largest_placeable(), 36);
    }

    #[test]
    fn racks_of_different_sizes_give_blocks_that_hold_the_job() {
        // Racks of 18, 6, 18, 12 with BlockSizes=18,36,72.
        let conf = "BlockName=r0 Nodes=n[00-17]\nBlockName=r1 Nodes=n[18-23]\n\
                    BlockName=r2 Nodes=n[24-41]\nBlockName=r3 Nodes=n[42-53]\n\
                    BlockSizes=18,36,72\n";
        let m = SlurmMachine::parse_conf(conf, "u").unwrap();
        let mut b = BlockBuddy::new(m.blocks().unwrap());
        let mut out = Vec::new();
        // 10 nodes: a rack; r0 is the first that holds them (r1 has 6).
        b.place_into(10, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "n[00-17]");
        // 6: r1 holds it.
        b.place_into(6, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "n[18-23]");
        // 25 nodes: a pair that holds them is r2-r3 (30); r0-r1 has 24.
        assert_eq!(b.level_for(25), Ok(1));
        b.place_into(25, &mut out).unwrap();
        assert_eq!(m.hostlist(&out), "n[24-53]");
        let pair = out.clone();
        // More than the whole machine's one block of 72 (54 nodes): never.
        assert!(matches!(
            b.place_into(55, &mut out),
            Err(PlaceError::Invalid { .. })
        ));
        b.release(&pair);
        assert_eq!(b.largest_placeable(), 30);
        b.release(&m.blocks().unwrap().nodes_of(0).collect::<Vec<_>>());
        assert_eq!(b.largest_placeable(), 30);
        b.release(&m.blocks().unwrap().nodes_of(1).collect::<Vec<_>>());
        assert_eq!(b.largest_placeable(), 54);
    }
}
