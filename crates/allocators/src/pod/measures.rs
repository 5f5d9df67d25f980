//! Fragmentation measures of a pod state under static wiring: which
//! catalogue shapes can be placed, how many disjoint copies fit, and the
//! stranded chips.

use partalloc_topology::pod::Pod;
use partalloc_topology::{Coords, NodeId, NodeSet};

use super::{all_chips, orientations};

/// What one catalogue shape can do in a state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeMeasure {
    /// The catalogue shape.
    pub shape: Coords,
    /// Whether one copy can be placed now.
    pub placeable: bool,
    /// Disjoint copies placed greedily in first-fit order: a lower bound on
    /// the maximum number of disjoint copies.
    pub disjoint_copies: usize,
}

fn each_placement(pod: &Pod, shape: &Coords, mut f: impl FnMut(&Coords, &Coords) -> bool) {
    let grid = pod.grid();
    let orients = orientations(shape, pod.rotates(), grid.sides().as_slice());
    for id in 0..grid.num_nodes() as NodeId {
        let Ok(base) = grid.coords_of(id) else {
            continue;
        };
        for o in &orients {
            if !f(&base, o) {
                return;
            }
        }
    }
}

fn free_at(pod: &Pod, taken: &NodeSet, base: &Coords, ext: &Coords) -> bool {
    all_chips(
        pod.grid().sides().as_slice(),
        base.as_slice(),
        ext.as_slice(),
        |c| !taken.contains(c),
    )
}

/// For each catalogue shape (smallest first), whether it is placeable with
/// the chips of `unavailable` (busy or faulty) excluded, and a greedy lower
/// bound on its disjoint copies.
#[must_use]
pub fn pod_measures(pod: &Pod, unavailable: &NodeSet) -> Vec<ShapeMeasure> {
    let sides = *pod.grid().sides();
    pod.catalogue()
        .shapes()
        .iter()
        .map(|shape| {
            let mut taken = unavailable.clone();
            let mut copies = 0;
            each_placement(pod, shape, |base, ext| {
                if free_at(pod, &taken, base, ext) {
                    copies += 1;
                    all_chips(sides.as_slice(), base.as_slice(), ext.as_slice(), |c| {
                        let _ = taken.insert(c);
                        true
                    });
                }
                true
            });
            ShapeMeasure {
                shape: *shape,
                placeable: copies > 0,
                disjoint_copies: copies,
            }
        })
        .collect()
}

/// Free chips that lie in no free placement of any catalogue shape.
#[must_use]
pub fn stranded_chips(pod: &Pod, unavailable: &NodeSet) -> usize {
    let sides = *pod.grid().sides();
    let mut covered = unavailable.clone();
    for shape in pod.catalogue().shapes() {
        each_placement(pod, shape, |base, ext| {
            if free_at(pod, unavailable, base, ext) {
                all_chips(sides.as_slice(), base.as_slice(), ext.as_slice(), |c| {
                    let _ = covered.insert(c);
                    true
                });
            }
            true
        });
    }
    pod.grid().num_nodes() - covered.count()
}
