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
    base: u32,
    levels: Vec<u32>,
    /// Per base block: whether it is granted.
    taken: Vec<bool>,
}

impl BlockBuddy {
    /// An empty machine with the structure of `blocks`.
    #[must_use]
    pub fn new(blocks: &Blocks) -> Self {
        Self {
            base: blocks.base_size(),
            levels: blocks.levels().to_vec(),
            taken: vec![false; blocks.base_blocks() as usize],
        }
    }

    /// The level a job of `nodes` nodes is given a block of.
    ///
    /// # Errors
    /// [`PlaceError::Invalid`] for 0 nodes or more than the largest block.
    pub fn level_for(&self, nodes: u32) -> Result<usize, PlaceError> {
        let largest = self
            .levels
            .last()
            .map_or(0, |&m| u64::from(m) * u64::from(self.base));
        self.levels
            .iter()
            .position(|&m| u64::from(m) * u64::from(self.base) >= u64::from(nodes))
            .filter(|_| nodes > 0)
            .ok_or_else(|| PlaceError::Invalid {
                nodes,
                reason: format!("the largest block has {largest} nodes"),
            })
    }

    /// Grants the first entirely free block of the smallest level holding
    /// `nodes` nodes, and writes all of its node ids into `out` (cleared
    /// first), in increasing order.
    ///
    /// # Errors
    /// As [`level_for`](Self::level_for), or [`PlaceError::NoRoom`] (state
    /// unchanged).
    pub fn place_into(&mut self, nodes: u32, out: &mut Vec<NodeId>) -> Result<(), PlaceError> {
        out.clear();
        let m = self.levels[self.level_for(nodes)?] as usize;
        let first = (0..self.taken.len() / m)
            .map(|i| i * m)
            .find(|&f| self.taken[f..f + m].iter().all(|t| !t))
            .ok_or(PlaceError::NoRoom { nodes })?;
        self.taken[first..first + m].fill(true);
        let lo = first as NodeId * self.base;
        out.extend(lo..lo + m as NodeId * self.base);
        Ok(())
    }

    /// Frees the base blocks of a granted block (given its node ids).
    pub fn release(&mut self, nodes: &[NodeId]) {
        for &n in nodes {
            if let Some(t) = self.taken.get_mut((n / self.base) as usize) {
                *t = false;
            }
        }
    }

    /// The largest job that can be placed now (0 if none): the size of the
    /// largest level with an entirely free block.
    #[must_use]
    pub fn largest_placeable(&self) -> u32 {
        self.levels
            .iter()
            .rev()
            .map(|&m| m as usize)
            .find(|&m| {
                (0..self.taken.len() / m).any(|i| self.taken[i * m..(i + 1) * m].iter().all(|t| !t))
            })
            .map_or(0, |m| m as u32 * self.base)
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
}
