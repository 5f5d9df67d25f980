//! Fragmentation measures of a pod state under static wiring: which
//! catalogue shapes can be placed, how many disjoint copies fit, and the
//! stranded chips.

use partalloc_topology::pod::{Pod, Wiring};
use partalloc_topology::{Coords, NodeId, NodeSet};

use super::placements::FreeBases;
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
        for o in orients.clone() {
            if !f(&base, &o) {
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
    let k = *pod.grid().sides();
    let n = pod.grid().num_nodes();
    let mut covered = vec![0u8; n];
    let mut fb = FreeBases::default();
    for shape in pod.catalogue().shapes() {
        for o in orientations(shape, pod.rotates(), k.as_slice()) {
            fb.compute(k.as_slice(), unavailable, o.as_slice());
            if fb.total > 0 {
                fb.cover(k.as_slice(), o.as_slice(), &mut covered);
            }
        }
    }
    (0..n)
        .filter(|&c| covered[c] == 0 && !unavailable.contains(c as NodeId))
        .count()
}

/// [`stranded_chips`] by trying every placement: the reference it must
/// agree with.
#[cfg(test)]
pub(crate) fn stranded_chips_reference(pod: &Pod, unavailable: &NodeSet) -> usize {
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

/// The cube sides of a pod (the whole pod when it has no cubes), the cube
/// grid's sides and the number of cubes.
fn cubes(pod: &Pod) -> (Coords, Coords, u32) {
    let sides = *pod.grid().sides();
    let cube = pod.cube().copied().unwrap_or(sides);
    let mut grid = sides;
    for (g, c) in grid.as_mut_slice().iter_mut().zip(cube.iter()) {
        *g /= c;
    }
    let n = u32::try_from(grid.product()).unwrap_or(u32::MAX);
    (cube, grid, n)
}

/// The base chip of cube `id` (cube ids number the cube grid like node ids
/// number chips).
fn cube_base(cube: &Coords, grid: &Coords, id: u32) -> Coords {
    let mut b = *cube;
    let mut rest = id;
    for ((b, &k), &c) in b
        .as_mut_slice()
        .iter_mut()
        .zip(grid.iter())
        .zip(cube.iter())
    {
        *b = (rest % k) * c;
        rest /= k;
    }
    b
}

/// The cubes with no unavailable chip, as a flag per cube id.
fn clean_cubes(pod: &Pod, unavailable: &NodeSet) -> Vec<bool> {
    let (cube, grid, n) = cubes(pod);
    let sides = *pod.grid().sides();
    (0..n)
        .map(|id| {
            let b = cube_base(&cube, &grid, id);
            all_chips(sides.as_slice(), b.as_slice(), cube.as_slice(), |c| {
                !unavailable.contains(c)
            })
        })
        .collect()
}

/// Whether `shape` (in one of its orientations) is made of whole cubes.
fn whole_cube_orientation(pod: &Pod, shape: &Coords, cube: &Coords) -> Option<Coords> {
    orientations(shape, pod.rotates(), pod.grid().sides().as_slice())
        .find(|o| o.iter().zip(cube.iter()).all(|(&e, &c)| e % c == 0))
}

/// Calls `f` with every in-cube placement (base, extents) of `shape`: a box
/// inside one cube, without wrap-around; stops when `f` returns false.
fn each_in_cube_placement(pod: &Pod, shape: &Coords, mut f: impl FnMut(&Coords, &Coords) -> bool) {
    let (cube, grid, n) = cubes(pod);
    let orients: Vec<Coords> = orientations(shape, pod.rotates(), pod.grid().sides().as_slice())
        .filter(|o| o.iter().zip(cube.iter()).all(|(e, c)| e <= c))
        .collect();
    let cells = u32::try_from(cube.product()).unwrap_or(u32::MAX);
    for id in 0..n {
        let cb = cube_base(&cube, &grid, id);
        for i in 0..cells {
            let mut local = cube;
            let mut rest = i;
            for (l, &c) in local.as_mut_slice().iter_mut().zip(cube.iter()) {
                *l = rest % c;
                rest /= c;
            }
            for o in &orients {
                if local
                    .iter()
                    .zip(o.iter())
                    .zip(cube.iter())
                    .any(|((&l, &e), &c)| l + e > c)
                {
                    continue;
                }
                let mut base = cb;
                for (b, &l) in base.as_mut_slice().iter_mut().zip(local.iter()) {
                    *b += l;
                }
                if !f(&base, o) {
                    return;
                }
            }
        }
    }
}

/// Whether `shape` can be placed now under `wiring`'s rules: static, a
/// free box anywhere (across the edge allowed); reconfigurable, enough
/// clean cubes for a whole-cube shape, else a free box inside one cube.
#[must_use]
pub fn placeable(pod: &Pod, unavailable: &NodeSet, shape: &Coords, wiring: Wiring) -> bool {
    let mut found = false;
    match wiring {
        Wiring::Reconfigurable => {
            let (cube, _, _) = cubes(pod);
            if let Some(o) = whole_cube_orientation(pod, shape, &cube) {
                let need = (o.product() / cube.product()) as usize;
                return clean_cubes(pod, unavailable).iter().filter(|&&c| c).count() >= need;
            }
            each_in_cube_placement(pod, shape, |base, ext| {
                found = free_at(pod, unavailable, base, ext);
                !found
            });
        }
        _ => {
            let k = *pod.grid().sides();
            let mut fb = FreeBases::default();
            found = orientations(shape, pod.rotates(), k.as_slice()).any(|o| {
                fb.compute(k.as_slice(), unavailable, o.as_slice());
                fb.total > 0
            });
        }
    }
    found
}

/// The largest catalogue shape placeable now under `wiring`'s rules (see
/// [`placeable`]), or `None`.
#[must_use]
pub fn largest_placeable(pod: &Pod, unavailable: &NodeSet, wiring: Wiring) -> Option<Coords> {
    pod.catalogue()
        .shapes()
        .iter()
        .rev()
        .find(|s| placeable(pod, unavailable, s, wiring))
        .copied()
}

/// Free chips that lie in no placement of any catalogue shape under
/// `wiring`'s rules: for static wiring as [`stranded_chips`]; for
/// reconfigurable wiring a free chip is covered when its cube is clean and
/// some whole-cube shape is placeable, or when it lies in a free in-cube
/// placement of a shape that is not made of whole cubes.
#[must_use]
pub fn stranded_chips_under(pod: &Pod, unavailable: &NodeSet, wiring: Wiring) -> usize {
    if wiring != Wiring::Reconfigurable {
        return stranded_chips(pod, unavailable);
    }
    let sides = *pod.grid().sides();
    let (cube, grid, _) = cubes(pod);
    let clean = clean_cubes(pod, unavailable);
    let clean_count = clean.iter().filter(|&&c| c).count();
    let mut covered = unavailable.clone();
    let mut whole_placeable = false;
    for shape in pod.catalogue().shapes() {
        if let Some(o) = whole_cube_orientation(pod, shape, &cube) {
            whole_placeable |= (o.product() / cube.product()) as usize <= clean_count;
            continue;
        }
        each_in_cube_placement(pod, shape, |base, ext| {
            if free_at(pod, unavailable, base, ext) {
                all_chips(sides.as_slice(), base.as_slice(), ext.as_slice(), |c| {
                    let _ = covered.insert(c);
                    true
                });
            }
            true
        });
    }
    if whole_placeable {
        for (id, _) in clean.iter().enumerate().filter(|(_, c)| **c) {
            let b = cube_base(&cube, &grid, id as u32);
            all_chips(sides.as_slice(), b.as_slice(), cube.as_slice(), |c| {
                let _ = covered.insert(c);
                true
            });
        }
    }
    pod.grid().num_nodes() - covered.count()
}
