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
use core::str::FromStr;

use thiserror::Error;

use crate::{Coords, Grid, GridBox, NodeId, TopologyError, parse_sides};

/// How the links between the chips of a pod are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
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

impl fmt::Display for Wiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Static => "static",
            Self::Reconfigurable => "reconfigurable",
        })
    }
}

impl FromStr for Wiring {
    type Err = PodError;

    fn from_str(s: &str) -> Result<Self, PodError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "static" => Ok(Self::Static),
            "reconfigurable" => Ok(Self::Reconfigurable),
            _ => Err(PodError::InvalidText {
                text: crate::echo(s),
                reason: "wiring is static or reconfigurable".to_owned(),
            }),
        }
    }
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
    /// No catalogue shape is left (none given, or none fits the pod).
    #[error(
        "the pod {sides} has an empty shape catalogue; give at least one slice shape that fits"
    )]
    EmptyCatalogue {
        /// The pod's sides, as `AxB…`.
        sides: String,
    },
    /// A pod name that the text form could not carry.
    #[error("invalid pod name {name:?}: use a letter first, then letters, digits, '-', '_' or '.'")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// A description with neither sides nor a preset (an empty pod file).
    #[error(
        "the pod description gives neither sides nor a preset; add sides = \"AxB…\" with shapes, or preset = \"tpu-v4\" (presets tpu-v4, tpu-v5e)"
    )]
    MissingSides,
    /// A malformed pod text form or description.
    #[error("invalid pod description {text:?}: {reason} ({POD_TEXT_HELP})")]
    InvalidText {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// How the text form of a pod reads, for error messages.
const POD_TEXT_HELP: &str = "expected PRESET[:AxB…][:key=value…] or AxB…:shapes=AxB+CxD…[:key=value…], \
keys name, cube, wiring, rotate, shapes; presets tpu-v4, tpu-v5e";

fn shape_str(s: &[u32]) -> String {
    s.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

/// The slice shapes that may be requested, kept sorted by chip count, then
/// lexicographically.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
/// pod's side. Its wrap-aware operations (meeting, containment, the parts
/// outside another slice, corner placements, its chips) take the torus's
/// sides; [`PodSlice::on_torus`] writes a slice in the one form in which
/// equal slices hold equal chips.
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

    /// Builds a slice from parts already known to be valid (the
    /// wrap-aware operations of `crate::wrap`).
    #[inline]
    pub(crate) fn from_parts(base: Coords, extents: Coords) -> Self {
        Self { base, extents }
    }

    #[inline]
    pub(crate) fn base_mut(&mut self) -> &mut Coords {
        &mut self.base
    }

    #[inline]
    pub(crate) fn extents_mut(&mut self) -> &mut Coords {
        &mut self.extents
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

/// A pod: a torus of chips, its cubes, its wiring and its shape catalogue,
/// and optionally a name (a preset's, or one given in a description).
///
/// Its text form (the part after `pod:` in a `Topology`) is either a
/// preset, optionally resized and adjusted — `tpu-v4`, `tpu-v4:8x8x8`,
/// `tpu-v4:8x8x8:wiring=static` — or a full description,
/// `16x16:cube=4x4:wiring=static:rotate=true:shapes=2x2+4x4+8x8`. A
/// resized preset keeps its cubes, wiring and rotation, and those of its
/// shapes that fit the new sides. `Display` prints the shortest form that
/// parses back to an equal pod.
///
/// ```
/// use partalloc_topology::pod::{Pod, Wiring};
///
/// let small: Pod = "tpu-v4:8x8x8".parse()?;
/// assert_eq!(small.grid().num_nodes(), 512);
/// assert_eq!(small.catalogue().shapes().last().map(|s| s.product()), Some(512));
/// assert_eq!(small.to_string(), "tpu-v4:8x8x8");
/// let fixed: Pod = "tpu-v4:8x8x8:wiring=static".parse()?;
/// assert_eq!(fixed.wiring(), Wiring::Static);
/// assert_eq!(fixed.to_string().parse::<Pod>()?, fixed);
/// # Ok::<(), partalloc_topology::pod::PodError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "PodDescription", try_from = "PodDescription")
)]
pub struct Pod {
    name: Option<String>,
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
        if catalogue.shapes().is_empty() {
            return Err(PodError::EmptyCatalogue {
                sides: shape_str(sides),
            });
        }
        Ok(Self {
            name: None,
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
        let pod = match name {
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
                name: crate::echo(name),
            }),
        }?;
        Ok(Self {
            name: Some(name.to_owned()),
            ..pod
        })
    }

    /// The same pod under another name (`None`: unnamed).
    ///
    /// # Errors
    /// [`PodError::InvalidName`] unless the name starts with a letter and
    /// goes on with letters, digits, `-`, `_` or `.`.
    pub fn with_name(self, name: Option<&str>) -> Result<Self, PodError> {
        if let Some(n) = name {
            let mut chars = n.chars();
            let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
            if !first_ok
                || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            {
                return Err(PodError::InvalidName {
                    name: crate::echo(n),
                });
            }
        }
        Ok(Self {
            name: name.map(str::to_owned),
            ..self
        })
    }

    /// The same kind of pod with other sides: the cubes, wiring, rotation
    /// and name stay, and the catalogue keeps the shapes that fit.
    ///
    /// # Errors
    /// Bad sides, cubes that do not tile them, or no shape left.
    pub fn resized(&self, sides: &[u32]) -> Result<Self, PodError> {
        let fits = |s: &&Coords| s.len() == sides.len() && s.iter().zip(sides).all(|(e, k)| e <= k);
        let shapes: Vec<&[u32]> = self
            .catalogue
            .shapes()
            .iter()
            .filter(fits)
            .map(Coords::as_slice)
            .collect();
        let pod = Self::new(
            sides,
            self.cube.as_ref().map(Coords::as_slice),
            self.wiring,
            ShapeCatalogue::new(&shapes)?,
            self.rotate,
        )?;
        Ok(Self {
            name: self.name.clone(),
            ..pod
        })
    }

    /// The name, if the pod has one.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
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

/// A pod as a file or a text form describes it, before validation: a
/// preset to start from and the fields that replace the preset's, or
/// (without a preset) a whole description, for which `sides` and `shapes`
/// are required and the rest default to no cubes, static wiring, no
/// rotation and no name. Sides and shapes are written `AxB[xC…]`; `cube`
/// may be `none` to drop a preset's cubes.
///
/// With the `serde` feature it reads from TOML or JSON (unknown keys are
/// refused), and a [`Pod`] serializes as its whole description:
///
/// ```toml
/// name = "quarter-v4"
/// sides = "8x8x8"
/// cube = "4x4x4"
/// wiring = "reconfigurable"
/// shapes = ["2x2x2", "4x4x4", "4x4x8", "8x8x8"]
/// ```
///
/// ```
/// use partalloc_topology::pod::{Pod, PodDescription, Wiring};
///
/// let d = PodDescription {
///     preset: Some("tpu-v5e".to_owned()),
///     sides: Some("8x8".to_owned()),
///     wiring: Some(Wiring::Static),
///     ..PodDescription::default()
/// };
/// let pod = Pod::try_from(d)?;
/// assert_eq!(pod.catalogue().shapes().len(), 6); // 1x1 … 8x8
/// # Ok::<(), partalloc_topology::pod::PodError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct PodDescription {
    /// A preset to start from (`tpu-v4`, `tpu-v5e`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub preset: Option<String>,
    /// The pod's name.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub name: Option<String>,
    /// The sides in chips, `AxB[xC…]`; for a preset, resizes it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub sides: Option<String>,
    /// The cube sides, `AxB[xC…]`, or `none`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub cube: Option<String>,
    /// The wiring.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub wiring: Option<Wiring>,
    /// Whether requests may take any permutation of their shape.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub rotate: Option<bool>,
    /// The slice shapes, each `AxB[xC…]`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub shapes: Option<Vec<String>>,
}

impl TryFrom<PodDescription> for Pod {
    type Error = PodError;

    fn try_from(d: PodDescription) -> Result<Self, PodError> {
        let base = d.preset.as_deref().map(Self::preset).transpose()?;
        let sides = match (&d.sides, &base) {
            (Some(text), _) => parse_sides(text)?,
            (None, Some(b)) => *b.grid.sides(),
            (None, None) => return Err(PodError::MissingSides),
        };
        // A resized preset keeps the shapes that fit the new sides.
        let base = base
            .map(|b| {
                if *b.grid.sides() == sides {
                    Ok(b)
                } else {
                    b.resized(sides.as_slice())
                }
            })
            .transpose()?;
        let cube = match d.cube.as_deref().map(str::trim) {
            Some("none") => None,
            Some(text) => Some(parse_sides(text)?),
            None => base.as_ref().and_then(|b| b.cube),
        };
        let catalogue = match (&d.shapes, &base) {
            (Some(list), _) => {
                let shapes = list
                    .iter()
                    .map(|t| parse_sides(t))
                    .collect::<Result<Vec<_>, _>>()?;
                let refs: Vec<&[u32]> = shapes.iter().map(Coords::as_slice).collect();
                ShapeCatalogue::new(&refs)?
            }
            (None, Some(b)) => b.catalogue.clone(),
            (None, None) => {
                return Err(PodError::EmptyCatalogue {
                    sides: shape_str(sides.as_slice()),
                });
            }
        };
        let wiring = d
            .wiring
            .or(base.as_ref().map(|b| b.wiring))
            .unwrap_or(Wiring::Static);
        let rotate = d
            .rotate
            .or(base.as_ref().map(|b| b.rotate))
            .unwrap_or(false);
        let name = d.name.or(base.and_then(|b| b.name));
        Self::new(
            sides.as_slice(),
            cube.as_ref().map(Coords::as_slice),
            wiring,
            catalogue,
            rotate,
        )?
        .with_name(name.as_deref())
    }
}

impl From<Pod> for PodDescription {
    fn from(p: Pod) -> Self {
        Self::from(&p)
    }
}

impl From<&Pod> for PodDescription {
    /// The whole description (no preset), from which an equal pod builds.
    fn from(p: &Pod) -> Self {
        Self {
            preset: None,
            name: p.name.clone(),
            sides: Some(shape_str(p.grid.sides().as_slice())),
            cube: p.cube.map(|c| shape_str(c.as_slice())),
            wiring: Some(p.wiring),
            rotate: Some(p.rotate),
            shapes: Some(
                p.catalogue
                    .shapes()
                    .iter()
                    .map(|s| shape_str(s.as_slice()))
                    .collect(),
            ),
        }
    }
}

impl Pod {
    /// The preset this pod equals (possibly resized), if any: its name and
    /// whether the sides differ from the preset's.
    fn as_preset(&self) -> Option<(&str, bool)> {
        let name = self.name.as_deref()?;
        let preset = Self::preset(name).ok()?;
        let resized = *preset.grid.sides() != *self.grid.sides();
        let same = if resized {
            preset.resized(self.grid.sides().as_slice()).ok()? == *self
        } else {
            preset == *self
        };
        same.then_some((name, resized))
    }
}

impl fmt::Display for Pod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sides = shape_str(self.grid.sides().as_slice());
        if let Some((name, resized)) = self.as_preset() {
            f.write_str(name)?;
            if resized {
                write!(f, ":{sides}")?;
            }
            return Ok(());
        }
        f.write_str(&sides)?;
        if let Some(name) = &self.name {
            write!(f, ":name={name}")?;
        }
        if let Some(c) = &self.cube {
            write!(f, ":cube={}", shape_str(c.as_slice()))?;
        }
        write!(f, ":wiring={}:rotate={}:shapes=", self.wiring, self.rotate)?;
        for (i, s) in self.catalogue.shapes().iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(&shape_str(s.as_slice()))?;
        }
        Ok(())
    }
}

impl FromStr for Pod {
    type Err = PodError;

    /// Parses the text form described at [`Pod`]; no file is read.
    fn from_str(s: &str) -> Result<Self, PodError> {
        let invalid = |reason: String| PodError::InvalidText {
            text: crate::echo(s),
            reason,
        };
        let mut fields = s.trim().split(':').map(str::trim).peekable();
        let mut d = PodDescription::default();
        match fields.next() {
            Some(first) if first.starts_with(|c: char| c.is_ascii_digit()) => {
                d.sides = Some(first.to_owned());
            }
            Some(first) if !first.is_empty() && !first.contains('=') => {
                d.preset = Some(first.to_owned());
                if let Some(sides) = fields.next_if(|f| !f.contains('=')) {
                    d.sides = Some(sides.to_owned());
                }
            }
            _ => {
                return Err(invalid(
                    "it starts with neither a preset nor sides".to_owned(),
                ));
            }
        }
        for field in fields {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| invalid(format!("{:?} is not key=value", crate::echo(field))))?;
            let (key, value) = (key.trim(), value.trim());
            let duplicate = || invalid(format!("{key} is given twice"));
            match key {
                "name" => {
                    if d.name.replace(value.to_owned()).is_some() {
                        return Err(duplicate());
                    }
                }
                "cube" => {
                    if d.cube.replace(value.to_owned()).is_some() {
                        return Err(duplicate());
                    }
                }
                "wiring" => {
                    if d.wiring.replace(value.parse()?).is_some() {
                        return Err(duplicate());
                    }
                }
                "rotate" => {
                    let r = match value {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(invalid(format!(
                                "rotate is true or false, not {:?}",
                                crate::echo(value)
                            )));
                        }
                    };
                    if d.rotate.replace(r).is_some() {
                        return Err(duplicate());
                    }
                }
                "shapes" => {
                    let list = value.split('+').map(|t| t.trim().to_owned()).collect();
                    if d.shapes.replace(list).is_some() {
                        return Err(duplicate());
                    }
                }
                other => return Err(invalid(format!("unknown key {:?}", crate::echo(other)))),
            }
        }
        Self::try_from(d)
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

    #[test]
    fn text_forms_round_trip_and_print_the_shortest_form() {
        for (text, printed) in [
            ("tpu-v4", "tpu-v4"),
            ("tpu-v5e", "tpu-v5e"),
            ("tpu-v4:16x16x16", "tpu-v4"),
            ("tpu-v4:8x8x8", "tpu-v4:8x8x8"),
            (
                "tpu-v4:8x8x8:wiring=static",
                "8x8x8:name=tpu-v4:cube=4x4x4:wiring=static:rotate=false:\
                 shapes=2x2x1+2x2x2+2x2x4+2x4x4+4x4x4+4x4x8+4x8x8+8x8x8",
            ),
            (
                "8x4:shapes=4x4+2x2:rotate=true",
                "8x4:wiring=static:rotate=true:shapes=2x2+4x4",
            ),
            (
                " 8x8 : cube=4x4 : wiring=reconfigurable : name=lab.pod-2 : shapes=4x4+8x8 ",
                "8x8:name=lab.pod-2:cube=4x4:wiring=reconfigurable:rotate=false:shapes=4x4+8x8",
            ),
        ] {
            let pod: Pod = text.parse().unwrap();
            assert_eq!(pod.to_string(), printed, "{text}");
            assert_eq!(printed.parse::<Pod>().unwrap(), pod, "{printed}");
        }
        let small: Pod = "tpu-v5e:4x8".parse().unwrap();
        let shapes: Vec<String> = small
            .catalogue()
            .shapes()
            .iter()
            .map(|s| shape_str(s.as_slice()))
            .collect();
        assert_eq!(shapes, ["1x1", "2x2", "2x4", "4x4", "4x8"]);
        assert!(small.rotates());
        assert_eq!(small.name(), Some("tpu-v5e"));
        // Dropping the preset's cubes.
        let flat: Pod = "tpu-v4:8x8x8:cube=none:wiring=static".parse().unwrap();
        assert_eq!(flat.cube(), None);
        assert_eq!(flat.to_string().parse::<Pod>().unwrap(), flat);
    }

    #[test]
    fn malformed_text_forms_say_what_is_wrong() {
        for (bad, says) in [
            ("", "starts with neither a preset nor sides"),
            ("tpu-v9", "unknown pod preset \"tpu-v9\""),
            ("8x8", "empty shape catalogue"),
            ("8x8:shapes=2x2:colour=red", "unknown key \"colour\""),
            ("8x8:shapes=2x2:rotate=yes", "rotate is true or false"),
            (
                "8x8:shapes=2x2:wiring=optical",
                "wiring is static or reconfigurable",
            ),
            ("8x8:shapes=2x2:shapes=4x4", "shapes is given twice"),
            ("8x8:shapes=2x2:name=9lives", "invalid pod name \"9lives\""),
            ("8x8:shapes=2x2:cube", "\"cube\" is not key=value"),
            ("8x8:shapes=2xq", "\"q\" is not a non-negative integer"),
            (
                "8x8:shapes=16x2",
                "catalogue shape 16x2 does not fit the pod 8x8",
            ),
            ("tpu-v4:2x2x2", "cube 4x4x4 does not tile the pod 2x2x2"),
            ("tpu-v4:6x8x8", "cube 4x4x4 does not tile the pod 6x8x8"),
            ("6x6:wiring=reconfigurable:shapes=2x2", "needs a cube size"),
        ] {
            let e = bad.parse::<Pod>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_description_overrides_its_preset_field_by_field() {
        let d = PodDescription {
            preset: Some("tpu-v4".to_owned()),
            name: Some("half".to_owned()),
            sides: Some("8x16x16".to_owned()),
            rotate: Some(true),
            ..PodDescription::default()
        };
        let pod = Pod::try_from(d).unwrap();
        assert_eq!(pod.name(), Some("half"));
        assert_eq!(pod.wiring(), Wiring::Reconfigurable);
        assert_eq!(pod.cube().map(|c| c.product()), Some(64));
        assert!(pod.rotates());
        // 8x16x16 keeps the shapes whose sides fit: not 16x16x16.
        assert_eq!(
            pod.catalogue()
                .shapes()
                .last()
                .map(|s| s.as_slice().to_vec()),
            Some(vec![8, 16, 16])
        );
        // The whole description rebuilds an equal pod.
        assert_eq!(Pod::try_from(PodDescription::from(&pod)).unwrap(), pod);
        let e = Pod::try_from(PodDescription::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the pod description gives neither sides nor a preset; add sides = \"AxB…\" with shapes, or preset = \"tpu-v4\" (presets tpu-v4, tpu-v5e)"
        );
    }
}
