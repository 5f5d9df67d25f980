//! Rings of nodes (`topology/ring`, Slurm 26.05): `RingName=… Nodes=…`
//! lines of `topology.conf`, or the `ring:` form of `topology.yaml`.
//!
//! Each ring is an ordered run of consecutive node ids, position 0 first;
//! Slurm 26.05.3 allows at most [`MAX_RING_SIZE`] nodes per ring
//! (`src/plugins/topology/ring/ring_record.h`).
//!
//! ```
//! use partalloc_topology::slurm::SlurmMachine;
//! let m = SlurmMachine::parse_conf("RingName=a Nodes=n[0-7]\nRingName=b Nodes=n[8-11]\n", "r.conf")?;
//! let rings = m.rings().expect("a ring machine");
//! assert_eq!(rings.len(), 2);
//! assert_eq!(rings.nodes(1), 8..12);
//! assert_eq!(m.distance(0, 7), 1); // the ring closes
//! # Ok::<(), partalloc_topology::slurm::ConfError>(())
//! ```

use std::collections::HashSet;

use super::Shape;
use super::conf::{ConfError, ConfErrorKind, Line, Reader};
use crate::NodeId;

/// The most nodes one ring may hold in Slurm 26.05.3 (`MAX_RING_SIZE`).
pub const MAX_RING_SIZE: usize = 16;

/// A ring machine: rings of consecutive node ids, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rings {
    names: Vec<String>,
    /// `starts[i]..starts[i + 1]` are ring `i`'s nodes; one more entry than
    /// rings.
    starts: Vec<NodeId>,
}

impl Rings {
    /// Number of rings.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True if there is no ring (never, for a machine that was read).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The ring names, in file order.
    #[must_use]
    pub fn ring_names(&self) -> &[String] {
        &self.names
    }

    /// The node ids of ring `i`, position 0 first (empty if there is no
    /// such ring).
    #[must_use]
    pub fn nodes(&self, i: usize) -> core::ops::Range<NodeId> {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => a..b,
            _ => 0..0,
        }
    }

    /// The ring holding `node`, if any.
    #[must_use]
    pub fn ring_of(&self, node: NodeId) -> Option<usize> {
        let end = *self.starts.last()?;
        (node < end).then(|| self.starts.partition_point(|&s| s <= node) - 1)
    }
}

/// Builds a ring machine from `RingName` definitions.
pub(super) fn read(lines: &[Line], r: &mut Reader<'_>) -> Result<Shape, ConfError> {
    let mut names = Vec::new();
    let mut starts = vec![0];
    let mut seen = HashSet::new();
    for l in lines {
        let name = l.name();
        if !seen.insert(name.clone()) {
            return Err(r.err(l.number, ConfErrorKind::DuplicateName(name)));
        }
        let Some(expr) = l.get("nodes") else {
            let why = format!("ring {name:?} has no Nodes=");
            return Err(r.err(l.number, ConfErrorKind::Incomplete(why)));
        };
        // Counted before expanding: a ring is small.
        let n = super::hostlist::count(expr).map_err(|e| r.err(l.number, e.into()))?;
        if n > MAX_RING_SIZE as u64 {
            let kind = ConfErrorKind::RingTooLarge { name, nodes: n };
            return Err(r.err(l.number, kind));
        }
        r.add_nodes(expr, l.number)?;
        names.push(name);
        starts.push(r.node_count() as NodeId);
    }
    Ok(Shape::Rings(Rings { names, starts }))
}

#[cfg(test)]
mod tests {
    use super::super::SlurmMachine;
    use super::*;

    #[test]
    fn rings_read_in_order_and_bad_rings_are_refused() {
        let m = SlurmMachine::parse_conf(
            "RingName=ring0 Nodes=node[01-08]\nRingName=ring1 Nodes=node[09-16]\n",
            "t.conf",
        )
        .unwrap();
        let r = m.rings().unwrap();
        assert_eq!(r.ring_names(), &["ring0", "ring1"]);
        assert_eq!(
            (r.ring_of(8), r.ring_of(7), r.ring_of(16)),
            (Some(1), Some(0), None)
        );
        assert_eq!(
            m.to_conf(),
            "RingName=ring0 Nodes=node[01-08]\nRingName=ring1 Nodes=node[09-16]\n"
        );
        assert_eq!(m.distance(0, 4), 4);
        assert_eq!(m.distance(0, 5), 3);
        assert_eq!(m.distance(0, 9), u32::MAX);
        assert_eq!(m.neighbours(0), Some(vec![7, 1]));
        assert_eq!(m.num_links(), 16);
        let e = SlurmMachine::parse_conf("RingName=a Nodes=n[0-16]\n", "t.conf").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.conf:1: ring \"a\" has 17 nodes; a ring may have at most 16"
        );
        let e = SlurmMachine::parse_conf("RingName=a Nodes=n1\nRingName=a Nodes=n2\n", "t.conf")
            .unwrap_err();
        assert_eq!(
            (e.line, e.kind),
            (2, ConfErrorKind::DuplicateName("a".into()))
        );
        let e = SlurmMachine::parse_conf("RingName=a Nodes=n1\nBlockName=b Nodes=n2\n", "t.conf")
            .unwrap_err();
        assert_eq!((e.line, e.kind), (2, ConfErrorKind::Mixed));
        let e = SlurmMachine::parse_conf("RingName=a\n", "t.conf").unwrap_err();
        assert!(e.to_string().contains("no Nodes="), "{e}");
    }
}

#[cfg(test)]
mod example_files {
    use super::super::SlurmMachine;

    #[test]
    fn the_shipped_ring_and_torus_examples_read() {
        let conf = SlurmMachine::parse_conf(include_str!("testdata/ring-4x8.conf"), "r").unwrap();
        let yaml =
            SlurmMachine::parse_yaml(include_str!("testdata/ring-4x8.yaml"), "r", None).unwrap();
        assert_eq!(conf, yaml);
        assert_eq!(conf.rings().unwrap().len(), 4);
        assert_eq!(
            SlurmMachine::parse_conf(&conf.to_conf(), "r").unwrap(),
            conf
        );
        let t = SlurmMachine::parse_yaml(include_str!("testdata/torus3d-4x4x4.yaml"), "t", None)
            .unwrap();
        assert_eq!(t.num_nodes(), 64);
        assert_eq!(t.toruses().unwrap().toruses()[0].placements().len(), 5);
        assert_eq!(t.diameter(), 6);
        assert_eq!(t.num_links(), 3 * 64);
        assert_eq!(t.neighbours(0).map(|v| v.len()), Some(6));
        assert_eq!(
            SlurmMachine::parse_yaml(&t.to_conf(), "t", None).unwrap(),
            t
        );
    }
}
