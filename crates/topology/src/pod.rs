//! Accelerator pods: a torus of chips, optionally built from cubes, with a
//! catalogue of slice shapes and a wiring that is either fixed or joined by
//! optical circuit switches between cubes.
//!
//! A *slice* is a box of chips that may run across the torus edge
//! ([`PodSlice`]); it has wrap-around in dimension `d` ([`LinkKind::Ring`])
//! when its extent there equals the pod's side (static wiring) or when it is
//! made of whole cubes joined by the switches (reconfigurable wiring).
//!
//! ```
//! use partalloc_topology::pod::{LinkKind, Pod, PodSlice};
//!
//! let pod = Pod::preset("tpu-v5e")?;
//! assert_eq!(pod.grid().num_nodes(), 256);
//! // A 2x16 slice at column 15 runs across the edge in dimension 0.
//! let slice = PodSlice::new(&[15, 0], &[2, 16])?;
//! assert_eq!(pod.slice_pieces(&slice)?.len(), 2);
//! assert_eq!(pod.static_links(&slice), vec![LinkKind::Line, LinkKind::Ring]);
//! // Shapes outside the catalogue are refused with the nearest allowed ones.
//! let e = pod.catalogue().check(&[3, 3]).unwrap_err();
//! assert!(e.to_string().contains("2x4"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use thiserror::Error;

use crate::{Coords, Grid, GridBox, NodeId, TopologyError};

/// How the links between the chips of a pod are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Wiring {
    /// Fixed links: a slice is a box of the torus, wrap-around only where it
    /// spans the whole side.
    Static,
    /// Optical circuit switches join whole cubes in any order into a torus.
    Reconfigurable,
}

/// Whether a slice is closed into a ring along one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkKind {
    /// Wrap-around link between the two ends.
    Ring,
    /// No wrap-around link.
    Line,
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ring => "ring",
            Self::Line => "line",
        })
    }
}

/// Why a pod description or a slice request is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PodError {
    /// A grid-level problem (sides, dimensions, coordinates).
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The requested shape is not in the catalogue.
    #[error("shape {shape} is not in the catalogue; nearest allowed shapes: {nearest}")]
    NotInCatalogue {
        /// The refused shape, as `AxB…`.
        shape: String,
        /// The catalogue shapes closest in chip count, as `AxB, CxD`.
        nearest: String,
    },
    /// No catalogue shape holds that many chips.
    #[error("no catalogue shape holds {count} chips; the largest holds {largest}")]
    TooManyChips {
        /// The requested chip count.
        count: u64,
        /// Chips of the largest catalogue shape.
        largest: u64,
    },
    /// The cube sides do not divide the pod's sides.
    #[error("cube {cube} does not tile the pod {sides}: each cube side must divide the pod side")]
    CubeDoesNotTile {
        /// The cube, as `AxB…`.
        cube: String,
        /// The pod's sides, as `AxB…`.
        sides: String,
    },
    /// A catalogue shape does not fit the pod.
    #[error("catalogue shape {shape} does not fit the pod {sides}")]
    ShapeDoesNotFit {
        /// The shape, as `AxB…`.
        shape: String,
        /// The pod's sides, as `AxB…`.
        sides: String,
    },
    /// The preset name is unknown.
    #[error("unknown pod preset {name:?}; known presets: tpu-v4, tpu-v5e")]
    UnknownPreset {
        /// The name given.
        name: String,
    },
    /// Reconfigurable wiring needs cubes.
    #[error("a reconfigurable pod needs a cube size")]
    NoCubes,
}

fn shape_str(s: &[u32]) -> String {
    s.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

/// The slice shapes that may be requested, kept sorted by chip count, then
/// lexicographically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeCatalogue {
    shapes: Vec<Coords>,
}

impl ShapeCatalogue {
    /// A catalogue of the given shapes (duplicates dropped).
    ///
    /// # Errors
    /// A shape with a zero side or too many dimensions.
    pub fn new(shapes: &[&[u32]]) -> Result<Self, PodError> {
        let mut v = Vec::with_capacity(shapes.len());
        for s in shapes {
            if let Some(dim) = s.iter().position(|&x| x == 0) {
                return Err(TopologyError::ZeroSide { dim }.into());
            }
            v.push(Coords::new(s)?);
        }
        v.sort_by(|a, b| (a.product(), a.as_slice()).cmp(&(b.product(), b.as_slice())));
        v.dedup();
        Ok(Self { shapes: v })
    }

    /// The shapes, smallest first.
    #[must_use]
    pub fn shapes(&self) -> &[Coords] {
        &self.shapes
    }

    /// Accepts `shape` if the catalogue lists it.
    ///
    /// # Errors
    /// [`PodError::NotInCatalogue`] naming the (up to three) catalogue shapes
    /// closest in chip count.
    pub fn check(&self, shape: &[u32]) -> Result<(), PodError> {
        if self.shapes.iter().any(|s| s.as_slice() == shape) {
            return Ok(());
        }
        let want: u64 = shape.iter().map(|&x| u64::from(x)).product();
        let mut near: Vec<&Coords> = self.shapes.iter().collect();
        near.sort_by_key(|s| (s.product().abs_diff(want), s.product()));
        let nearest = near
            .iter()
            .take(3)
            .map(|s| shape_str(s.as_slice()))
            .collect::<Vec<_>>()
            .join(", ");
        Err(PodError::NotInCatalogue {
            shape: shape_str(shape),
            nearest,
        })
    }

    /// The smallest catalogue shape holding at least `count` chips (ties:
    /// the lexicographically smallest sides).
    ///
    /// # Errors
    /// [`PodError::TooManyChips`] when no shape is large enough.
    pub fn round_up(&self, count: u64) -> Result<Coords, PodError> {
        self.shapes
            .iter()
            .find(|s| s.product() >= count)
            .copied()
            .ok_or(PodError::TooManyChips {
                count,
                largest: self.shapes.last().map_or(0, Coords::product),
            })
    }
}

/// A box of chips on a torus that may run across the edge: dimension `d`
/// covers `base[d], base[d]+1, …, base[d]+extent[d]-1`, taken modulo the
/// pod's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PodSlice {
    base: Coords,
    extents: Coords,
}

impl PodSlice {
    /// The slice with that base corner and extents.
    ///
    /// # Errors
    /// Mismatched lengths or a zero extent.
    pub fn new(base: &[u32], extents: &[u32]) -> Result<Self, TopologyError> {
        if base.len() != extents.len() {
            return Err(TopologyError::DimensionMismatch {
                expected: base.len(),
                got: extents.len(),
            });
        }
        if let Some(dim) = extents.iter().position(|&x| x == 0) {
            return Err(TopologyError::ZeroSide { dim });
        }
        Ok(Self {
            base: Coords::new(base)?,
            extents: Coords::new(extents)?,
        })
    }

    /// The base corner.
    #[must_use]
    pub fn base(&self) -> &Coords {
        &self.base
    }

    /// The extents.
    #[must_use]
    pub fn extents(&self) -> &Coords {
        &self.extents
    }

    /// Chips in the slice.
    #[must_use]
    pub fn volume(&self) -> u64 {
        self.extents.product()
    }
}

impl fmt::Display for PodSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}",
            shape_str(self.extents.as_slice()),
            self.base
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )
    }
}

/// A pod: a torus of chips, its cubes, its wiring and its shape catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    grid: Grid,
    cube: Option<Coords>,
    wiring: Wiring,
    catalogue: ShapeCatalogue,
    rotate: bool,
}

impl Pod {
    /// A pod of the given sides (a torus), cube sides (`None`: no cubes),
    /// wiring and catalogue; `rotate` lets a request take any permutation of
    /// its shape.
    ///
    /// # Errors
    /// Bad sides, cubes that do not tile the pod, reconfigurable wiring
    /// without cubes, or a catalogue shape that cannot fit.
    pub fn new(
        sides: &[u32],
        cube: Option<&[u32]>,
        wiring: Wiring,
        catalogue: ShapeCatalogue,
        rotate: bool,
    ) -> Result<Self, PodError> {
        let grid = Grid::torus(sides)?;
        let cube = match cube {
            Some(c) => {
                if c.len() != sides.len()
                    || c.iter().zip(sides).any(|(&c, &s)| c == 0 || s % c != 0)
                {
                    return Err(PodError::CubeDoesNotTile {
                        cube: shape_str(c),
                        sides: shape_str(sides),
                    });
                }
                Some(Coords::new(c)?)
            }
            None if wiring == Wiring::Reconfigurable => return Err(PodError::NoCubes),
            None => None,
        };
        for s in catalogue.shapes() {
            if s.len() != sides.len() || s.iter().zip(sides).any(|(&e, &k)| e > k) {
                return Err(PodError::ShapeDoesNotFit {
                    shape: shape_str(s.as_slice()),
                    sides: shape_str(sides),
                });
            }
        }
        Ok(Self {
            grid,
            cube,
            wiring,
            catalogue,
            rotate,
        })
    }

    /// A pod described publicly (see docs/pods.md for the sources):
    /// `tpu-v4` (16x16x16 chips of 4x4x4 cubes, reconfigurable, the slice
    /// shapes of the Cloud TPU v4 documentation) and `tpu-v5e` (a static
    /// 16x16 torus with slices 1x1 … 16x16).
    ///
    /// # Errors
    /// [`PodError::UnknownPreset`].
    pub fn preset(name: &str) -> Result<Self, PodError> {
        match name {
            "tpu-v4" => Self::new(
                &[16, 16, 16],
                Some(&[4, 4, 4]),
                Wiring::Reconfigurable,
                ShapeCatalogue::new(&[
                    &[2, 2, 1],
                    &[2, 2, 2],
                    &[2, 2, 4],
                    &[2, 4, 4],
                    &[4, 4, 4],
                    &[4, 4, 8],
                    &[4, 8, 8],
                    &[8, 8, 8],
                    &[8, 8, 16],
                    &[8, 16, 16],
                    &[16, 16, 16],
                ])?,
                false,
            ),
            "tpu-v5e" => Self::new(
                &[16, 16],
                None,
                Wiring::Static,
                ShapeCatalogue::new(&[
                    &[1, 1],
                    &[2, 2],
                    &[2, 4],
                    &[4, 4],
                    &[4, 8],
                    &[8, 8],
                    &[8, 16],
                    &[16, 16],
                ])?,
                true,
            ),
            _ => Err(PodError::UnknownPreset {
                name: name.to_owned(),
            }),
        }
    }

    /// The torus of chips.
    #[must_use]
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The cube sides, if the pod is built from cubes.
    #[must_use]
    pub fn cube(&self) -> Option<&Coords> {
        self.cube.as_ref()
    }

    /// The wiring.
    #[must_use]
    pub fn wiring(&self) -> Wiring {
        self.wiring
    }

    /// The shape catalogue.
    #[must_use]
    pub fn catalogue(&self) -> &ShapeCatalogue {
        &self.catalogue
    }

    /// Whether requests may be rotated.
    #[must_use]
    pub fn rotates(&self) -> bool {
        self.rotate
    }

    /// Ring or line per dimension for a slice of static wiring: a ring
    /// exactly where the slice spans the whole side.
    #[must_use]
    pub fn static_links(&self, slice: &PodSlice) -> Vec<LinkKind> {
        slice
            .extents
            .iter()
            .zip(self.grid.sides().iter())
            .map(|(e, k)| {
                if e == k {
                    LinkKind::Ring
                } else {
                    LinkKind::Line
                }
            })
            .collect()
    }

    /// The non-wrapping boxes a slice covers (at most two per dimension
    /// split at the edge), in row-major order of their bases.
    ///
    /// # Errors
    /// A slice of the wrong dimension, a base outside the pod or an extent
    /// larger than the side.
    pub fn slice_pieces(&self, slice: &PodSlice) -> Result<Vec<GridBox>, TopologyError> {
        let sides = self.grid.sides();
        let n = sides.len();
        if slice.base.len() != n {
            return Err(TopologyError::DimensionMismatch {
                expected: n,
                got: slice.base.len(),
            });
        }
        // Per dimension, one or two (start, length) runs.
        let mut runs: Vec<Vec<(u32, u32)>> = Vec::with_capacity(n);
        for d in 0..n {
            let (b, e, k) = (slice.base[d], slice.extents[d], sides[d]);
            if b >= k || e > k {
                return Err(TopologyError::CoordinateOutOfRange {
                    dim: d,
                    value: b.max(e),
                    side: k,
                });
            }
            if b + e <= k {
                runs.push(vec![(b, e)]);
            } else {
                runs.push(vec![(b, k - b), (0, b + e - k)]);
            }
        }
        let mut out = Vec::new();
        let total: usize = runs.iter().map(Vec::len).product();
        for mut i in 0..total {
            let mut base = [0u32; crate::MAX_DIMS];
            let mut ext = [0u32; crate::MAX_DIMS];
            for d in 0..n {
                let r = runs[d][i % runs[d].len()];
                i /= runs[d].len();
                base[d] = r.0;
                ext[d] = r.1;
            }
            out.push(GridBox::new(&base[..n], &ext[..n])?);
        }
        Ok(out)
    }

    /// Calls `f` with every chip of the slice (row-major within each piece).
    ///
    /// # Errors
    /// As [`Pod::slice_pieces`].
    pub fn for_each_chip(
        &self,
        slice: &PodSlice,
        mut f: impl FnMut(NodeId),
    ) -> Result<(), TopologyError> {
        for p in self.slice_pieces(slice)? {
            self.grid.box_nodes(&p)?.for_each(&mut f);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_across_both_edges_splits_into_four_boxes() {
        let pod = Pod::new(
            &[4, 3],
            None,
            Wiring::Static,
            ShapeCatalogue::new(&[&[2, 2]]).unwrap(),
            false,
        )
        .unwrap();
        let s = PodSlice::new(&[3, 2], &[2, 2]).unwrap();
        let mut chips = Vec::new();
        pod.for_each_chip(&s, |c| chips.push(c)).unwrap();
        chips.sort_unstable();
        // (3,2)=11 (0,2)=8 (3,0)=3 (0,0)=0
        assert_eq!(chips, vec![0, 3, 8, 11]);
        assert_eq!(pod.static_links(&s), vec![LinkKind::Line, LinkKind::Line]);
    }

    #[test]
    fn refusal_lists_the_nearest_shapes_by_chip_count() {
        let c = ShapeCatalogue::new(&[&[1, 1], &[2, 2], &[2, 4], &[4, 4], &[8, 8]]).unwrap();
        let e = c.check(&[3, 3]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "shape 3x3 is not in the catalogue; nearest allowed shapes: 2x4, 2x2, 4x4"
        );
        assert_eq!(c.round_up(5).unwrap().as_slice(), &[2, 4]);
        assert_eq!(c.round_up(1).unwrap().as_slice(), &[1, 1]);
        assert_eq!(
            c.round_up(65).unwrap_err().to_string(),
            "no catalogue shape holds 65 chips; the largest holds 64"
        );
    }

    #[test]
    fn bad_pods_are_refused() {
        let cat = ShapeCatalogue::new(&[&[2, 2]]).unwrap();
        assert!(matches!(
            Pod::new(&[6, 6], Some(&[4, 4]), Wiring::Static, cat.clone(), false),
            Err(PodError::CubeDoesNotTile { .. })
        ));
        assert_eq!(
            Pod::new(&[8, 8], None, Wiring::Reconfigurable, cat.clone(), false),
            Err(PodError::NoCubes)
        );
        let big = ShapeCatalogue::new(&[&[2, 16]]).unwrap();
        assert!(matches!(
            Pod::new(&[8, 8], None, Wiring::Static, big, false),
            Err(PodError::ShapeDoesNotFit { .. })
        ));
        assert!(Pod::preset("tpu-v9").is_err());
        let v4 = Pod::preset("tpu-v4").unwrap();
        assert_eq!(v4.grid().num_nodes(), 4096);
        assert_eq!(v4.wiring(), Wiring::Reconfigurable);
    }
}
