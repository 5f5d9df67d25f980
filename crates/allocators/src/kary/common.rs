//! Helpers shared by the k-ary strategies. This module imports no
//! strategy module, so the strategies depend on it and never on one
//! another.

use partalloc_topology::{Grid, GridBox, MAX_DIMS, NodeId};

use crate::Partition;

/// Advances a mixed-radix counter, dimension 0 fastest.
pub(crate) fn odometer(x: &mut [u32], sides: &[u32]) {
    for i in 0..x.len() {
        x[i] += 1;
        if x[i] < sides[i] {
            return;
        }
        x[i] = 0;
    }
}

/// `Partition::Box` if the sorted node list is exactly a box, else
/// `Partition::Nodes`.
pub(crate) fn as_box_if_box(grid: &Grid, nodes: Vec<NodeId>) -> Partition {
    let n = grid.dims();
    let mut lo = [u32::MAX; MAX_DIMS];
    let mut hi = [0u32; MAX_DIMS];
    for &nd in &nodes {
        if let Ok(c) = grid.coords_of(nd) {
            for i in 0..n {
                lo[i] = lo[i].min(c[i]);
                hi[i] = hi[i].max(c[i]);
            }
        }
    }
    if let Ok(b) = GridBox::from_corners(&lo[..n], &hi[..n])
        && b.volume() == nodes.len() as u64
    {
        return Partition::Box(b);
    }
    Partition::Nodes(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odometer_counts_dimension_0_fastest() {
        let mut x = [0u32; 2];
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(x);
            odometer(&mut x, &[3, 2]);
        }
        assert_eq!(seen, [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]]);
        assert_eq!(x, [0, 0], "wraps after the last value");
    }

    #[test]
    fn a_node_list_is_a_box_only_if_it_fills_its_bounds() {
        let g = Grid::mesh(&[4, 4]).unwrap();
        // Nodes 0, 1, 4, 5: the 2×2 box at the origin.
        let b = as_box_if_box(&g, vec![0, 1, 4, 5]);
        assert_eq!(b, Partition::Box(GridBox::new(&[0, 0], &[2, 2]).unwrap()));
        // An L shape spans the same bounds with a node missing.
        assert_eq!(
            as_box_if_box(&g, vec![0, 1, 4]),
            Partition::Nodes(vec![0, 1, 4])
        );
    }
}
