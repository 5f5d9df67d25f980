//! Workload descriptions in text: the one place where the laws of arrival,
//! shape, demand and dependence are named, parsed and printed.
//!
//! Every law has a text form that [`FromStr`] reads and [`Display`] writes
//! back unchanged (`"hyper:5,0.95,4".parse::<DemandLaw>()?.to_string()` is
//! `"hyper:5,0.95,4"`), and with the `serde` feature the same text is the
//! serialized form, so an experiment file says `demand = "hyper:5,0.95,4"`.
//! A parsed law has been checked against its generator's constructor; what
//! can only be checked against a machine (a subcube law on a mesh, request
//! sides larger than the machine) is refused when the workload is built.
//!
//! | law | text |
//! |---|---|
//! | [`Arrivals`] | `load:RHO`, `rate:LAMBDA` |
//! | [`ShapeLaw`] | `cube:DIMS`, `sides:SIDES[:MAX]`, `cubic[:MAX]`, `noncubic[:MAX]` |
//! | [`CubeDimLaw`] (DIMS) | `uniform`, `uniform:LO-HI`, `normal`, `W0,W1,…` |
//! | [`SideLaw`] (SIDES) | `uniform`, `normal`, `exponential` |
//! | [`Sides`] (MAX) | `AxB[xC…]`, as in a machine description |
//! | [`DemandLaw`] | `exp:MEAN`, `uniform:MEAN`, `uniform:LO-HI`, `hyper:MEAN,ALPHA,CV`, `const:VALUE` |
//! | [`Dependence`] | `dependent`, `independent` |
//! | [`ShapeKind`] | `auto`, `cube`, `sides`, `cubic`, `noncubic` |
//!
//! ```
//! use partalloc_topology::Topology;
//! use partalloc_workload::spec::WorkloadSpec;
//! use partalloc_workload::ShapeDistribution;
//!
//! // Mohapatra §4: 10-cube, "normal" sizes, hyper-exponential residence.
//! let spec = WorkloadSpec {
//!     arrivals: "load:0.4".parse()?,
//!     shapes: "cube:normal".parse()?,
//!     demand: "hyper:5,0.95,4".parse()?,
//!     dependence: "dependent".parse()?,
//!     allow_saturation: false,
//! };
//! let machine: Topology = "hypercube:10".parse()?;
//! let w = spec.build(&machine)?;
//! assert!((w.offered_load(1024) - 0.4).abs() < 1e-12);
//! assert_eq!(spec.demand.to_string(), "hyper:5,0.95,4");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt::{self, Display};
use core::str::FromStr;

use partalloc_topology::{Coords, Topology, TopologyError, parse_sides};
use thiserror::Error;

use crate::{
    CatalogueShapes, Constant, CubeDims, CubicShapes, DemandDist, Dependence, Exponential,
    HyperExponential, MeshSides, NodeCountLaw, NodeCounts, NoncubicShapes, PoissonArrivals,
    ShapeDist, SideLaw, UniformDemand, Workload, WorkloadError,
};

/// Why a workload description was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The text is not of the law's form.
    #[error("{law} {text:?}: {reason}; use {accepted}")]
    Syntax {
        /// Which law was being read, e.g. `demand law`.
        law: &'static str,
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
        /// The forms the law accepts.
        accepted: &'static str,
    },
    /// The text is of the law's form but its values are refused.
    #[error("{law} {text:?}: {source}")]
    Invalid {
        /// Which law was being read.
        law: &'static str,
        /// The text given.
        text: String,
        /// Why the generator refused the values.
        source: WorkloadError,
    },
    /// The law cannot draw requests for this machine.
    #[error("shape law {law}: {reason}")]
    Machine {
        /// The law, in its text form.
        law: String,
        /// Why it does not fit, and what to use instead.
        reason: String,
    },
    /// The workload could not be built (e.g. an offered load of 1 or more
    /// without saturation allowed).
    #[error(transparent)]
    Workload(#[from] WorkloadError),
}

const ARRIVALS: &str = "load:RHO or rate:LAMBDA";
const SHAPES: &str = "cube:DIMS, sides:LAW[:AxB…], cubic[:AxB…], noncubic[:AxB…], nodes:uniform|pow2|multiples-of-K[:MAX] or catalogue[:W1,W2,…]";
const CUBE_DIMS: &str = "uniform, uniform:LO-HI, normal, or weights W0,W1,…";
const SIDE_LAWS: &str = "uniform, normal or exponential";
const DEMANDS: &str = "exp:MEAN, uniform:MEAN, uniform:LO-HI, hyper:MEAN,ALPHA,CV or const:VALUE";
const DEPENDENCES: &str = "dependent or independent";
const KINDS: &str = "auto, sides, cubic, noncubic, cube, nodes or catalogue";

fn syntax(law: &'static str, text: &str, accepted: &'static str, reason: String) -> SpecError {
    SpecError::Syntax {
        law,
        text: partalloc_topology::echo(text),
        reason,
        accepted,
    }
}

fn invalid<'t>(law: &'static str, text: &'t str) -> impl FnOnce(WorkloadError) -> SpecError + 't {
    move |source| SpecError::Invalid {
        law,
        text: partalloc_topology::echo(text),
        source,
    }
}

/// A finite number, or a syntax error naming the part that is not one.
fn number(
    law: &'static str,
    text: &str,
    accepted: &'static str,
    part: &str,
) -> Result<f64, SpecError> {
    part.trim().parse::<f64>().map_err(|_| {
        syntax(
            law,
            text,
            accepted,
            format!("{:?} is not a number", partalloc_topology::echo(part)),
        )
    })
}

/// The sides `part` of `text`, read by the topology's parser of side lists.
fn sides_of(
    law: &'static str,
    text: &str,
    accepted: &'static str,
    part: &str,
) -> Result<Coords, SpecError> {
    parse_sides(part).map_err(|e| {
        let reason = match e {
            TopologyError::InvalidSides { reason, .. } => reason,
            other => other.to_string(),
        };
        syntax(law, text, accepted, reason)
    })
}

/// Writes sides as `AxB…`, the form [`parse_sides`] reads.
fn write_sides(f: &mut fmt::Formatter<'_>, sides: &Coords) -> fmt::Result {
    for (i, s) in sides.iter().enumerate() {
        if i > 0 {
            f.write_str("x")?;
        }
        write!(f, "{s}")?;
    }
    Ok(())
}

/// How jobs arrive: a Poisson stream whose rate is given, or derived from
/// an offered load ρ = λ·E\[D\]/N on the machine (see [`Workload::with_load`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Arrivals {
    /// `load:RHO`: the rate that offers load ρ to the machine.
    Load(f64),
    /// `rate:LAMBDA`: jobs per time unit.
    Rate(f64),
}

impl FromStr for Arrivals {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        const LAW: &str = "arrival law";
        let (law, value) = text
            .split_once(':')
            .ok_or_else(|| syntax(LAW, text, ARRIVALS, "missing ':'".to_owned()))?;
        let x = number(LAW, text, ARRIVALS, value)?;
        match law.trim() {
            "load" => {
                crate::error::positive("offered load", x).map_err(invalid(LAW, text))?;
                Ok(Self::Load(x))
            }
            "rate" => {
                PoissonArrivals::new(x).map_err(invalid(LAW, text))?;
                Ok(Self::Rate(x))
            }
            other => Err(syntax(
                LAW,
                text,
                ARRIVALS,
                format!("unknown law {:?}", partalloc_topology::echo(other)),
            )),
        }
    }
}

impl Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Load(x) => write!(f, "load:{x}"),
            Self::Rate(x) => write!(f, "rate:{x}"),
        }
    }
}

/// Subcube dimensions on a hypercube (Mohapatra §4.1).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CubeDimLaw {
    /// `uniform`: dimension uniform in 0..=n−1 on an n-cube.
    Uniform,
    /// `uniform:LO-HI`: dimension uniform in LO..=HI.
    Range {
        /// Smallest dimension.
        lo: u32,
        /// Largest dimension.
        hi: u32,
    },
    /// `normal`: Mohapatra's "normal" table ([`CubeDims::mohapatra_normal`]).
    Normal,
    /// `W0,W1,…`: dimension i with probability proportional to Wi.
    Weights(Vec<f64>),
}

impl CubeDimLaw {
    /// Whether the law's own values are acceptable, whatever the machine.
    fn check(&self) -> Result<(), WorkloadError> {
        match self {
            Self::Uniform | Self::Normal => Ok(()),
            // The upper bound is checked against the machine in `dims`.
            Self::Range { lo, hi } if lo > hi => Err(WorkloadError::BadRange {
                name: "cube dimension",
                lo: f64::from(*lo),
                hi: f64::from(*hi),
            }),
            Self::Range { .. } => Ok(()),
            Self::Weights(w) => CubeDims::from_weights(w).map(drop),
        }
    }

    /// The dimension distribution on an n-cube.
    ///
    /// # Errors
    /// [`SpecError::Machine`] if it draws subcubes larger than the machine.
    pub fn dims(&self, machine_dim: u32) -> Result<CubeDims, SpecError> {
        let too_large = |max_dim: u32| SpecError::Machine {
            law: ShapeLaw::Cube(self.clone()).to_string(),
            reason: format!(
                "requests of dimension up to {max_dim} are larger than the machine's {machine_dim}-cube"
            ),
        };
        if let Self::Range { hi, .. } = self
            && *hi > machine_dim
        {
            return Err(too_large(*hi));
        }
        let dims = match self {
            Self::Uniform => CubeDims::uniform(0, machine_dim.saturating_sub(1))?,
            Self::Range { lo, hi } => CubeDims::uniform(*lo, *hi)?,
            Self::Normal => CubeDims::mohapatra_normal(),
            Self::Weights(w) => CubeDims::from_weights(w)?,
        };
        if dims.max_dim() > machine_dim {
            return Err(too_large(dims.max_dim()));
        }
        Ok(dims)
    }
}

impl FromStr for CubeDimLaw {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        const LAW: &str = "cube dimension law";
        let t = text.trim();
        let law = match t {
            "uniform" => Self::Uniform,
            "normal" => Self::Normal,
            _ if t.starts_with("uniform:") => {
                let range = &t["uniform:".len()..];
                let (lo, hi) = range.split_once('-').ok_or_else(|| {
                    syntax(LAW, text, CUBE_DIMS, "expected uniform:LO-HI".to_owned())
                })?;
                let whole = |s: &str| {
                    s.trim().parse::<u32>().map_err(|_| {
                        syntax(
                            LAW,
                            text,
                            CUBE_DIMS,
                            format!("{:?} is not a whole number", partalloc_topology::echo(s)),
                        )
                    })
                };
                Self::Range {
                    lo: whole(lo)?,
                    hi: whole(hi)?,
                }
            }
            _ => {
                let weights = t
                    .split(',')
                    .map(|w| number(LAW, text, CUBE_DIMS, w))
                    .collect::<Result<Vec<_>, _>>()?;
                Self::Weights(weights)
            }
        };
        law.check().map_err(invalid(LAW, text))?;
        Ok(law)
    }
}

impl Display for CubeDimLaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Uniform => f.write_str("uniform"),
            Self::Range { lo, hi } => write!(f, "uniform:{lo}-{hi}"),
            Self::Normal => f.write_str("normal"),
            Self::Weights(w) => {
                for (i, x) in w.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{x}")?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for SideLaw {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        match text.trim() {
            "uniform" => Ok(Self::Uniform),
            "normal" => Ok(Self::TruncatedNormal),
            "exponential" | "exp" => Ok(Self::TruncatedExponential),
            _ => Err(syntax(
                "side law",
                text,
                SIDE_LAWS,
                "unknown law".to_owned(),
            )),
        }
    }
}

impl Display for SideLaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Uniform => "uniform",
            Self::TruncatedNormal => "normal",
            Self::TruncatedExponential => "exponential",
        })
    }
}

impl FromStr for Dependence {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        match text.trim() {
            "dependent" => Ok(Self::Dependent),
            "independent" => Ok(Self::Independent),
            _ => Err(syntax(
                "dependence",
                text,
                DEPENDENCES,
                "unknown model".to_owned(),
            )),
        }
    }
}

impl Display for Dependence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Dependent => "dependent",
            Self::Independent => "independent",
        })
    }
}

/// How job shapes are drawn. Request sides (`MAX`, e.g. `16x16`) default to
/// the machine's.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ShapeLaw {
    /// `cube:DIMS`: subcubes of a hypercube (Mohapatra §4.1).
    Cube(CubeDimLaw),
    /// `sides:LAW[:MAX]`: boxes with independent sides (Kim–Yoon §IV.1).
    Sides {
        /// The law of each side.
        law: SideLaw,
        /// The largest request, if smaller than the machine.
        max: Option<Coords>,
    },
    /// `cubic[:MAX]`: sides 2^a, a uniform in 0..=log2 of the largest side
    /// (Kang §5.1); the largest sides must be powers of two.
    Cubic {
        /// The largest request, if smaller than the machine.
        max: Option<Coords>,
    },
    /// `noncubic[:MAX]`: sides uniform in 1..=the largest side (Kang §5.3).
    Noncubic {
        /// The largest request, if smaller than the machine.
        max: Option<Coords>,
    },
    /// `nodes:LAW[:MAX]`: plain node counts (`uniform`, `pow2`,
    /// `multiples-of-K`), for machines where jobs ask for nodes; without
    /// `MAX`, up to the machine (on a block machine, up to its largest
    /// block).
    Nodes {
        /// How counts are drawn.
        law: NodeCountLaw,
        /// The largest count, if smaller than the machine.
        max: Option<u32>,
    },
    /// `catalogue[:W1,W2,…]`: a pod's catalogue shapes, with a weight per
    /// shape (smallest first; default all equal).
    Catalogue {
        /// The weights, one per catalogue shape.
        weights: Option<Vec<f64>>,
    },
}

impl ShapeLaw {
    /// The law a [`ShapeKind`] stands for on `topology`, taking the side
    /// law, the dimension law and the largest request from the settings
    /// the kind leaves open (`auto` is `cube` on a hypercube, `sides`
    /// otherwise). For node counts the largest request is `max`'s product
    /// (`72`, or `4x4` for 16 nodes).
    #[must_use]
    pub fn of_kind(
        kind: ShapeKind,
        topology: &Topology,
        sides: SideLaw,
        cube_dims: &CubeDimLaw,
        max: Option<Coords>,
    ) -> Self {
        match kind {
            ShapeKind::Auto if topology.as_hypercube().is_some() => Self::Cube(cube_dims.clone()),
            ShapeKind::Auto if topology.as_pod().is_some() => Self::Catalogue { weights: None },
            ShapeKind::Catalogue => Self::Catalogue { weights: None },
            // A torus3d machine places only its placement shapes' sizes.
            ShapeKind::Auto if topology.as_slurm().and_then(|m| m.toruses()).is_some() => {
                Self::Nodes {
                    law: NodeCountLaw::Placements,
                    max: max.map(|m| u32::try_from(m.product()).unwrap_or(u32::MAX)),
                }
            }
            ShapeKind::Auto if topology.as_grid().is_none() => Self::Nodes {
                law: NodeCountLaw::Uniform,
                max: max.map(|m| u32::try_from(m.product()).unwrap_or(u32::MAX)),
            },
            ShapeKind::Nodes => Self::Nodes {
                law: NodeCountLaw::Uniform,
                max: max.map(|m| u32::try_from(m.product()).unwrap_or(u32::MAX)),
            },
            ShapeKind::Cube => Self::Cube(cube_dims.clone()),
            ShapeKind::Auto | ShapeKind::Sides => Self::Sides { law: sides, max },
            ShapeKind::Cubic => Self::Cubic { max },
            ShapeKind::Noncubic => Self::Noncubic { max },
        }
    }

    /// The shape distribution on `topology`.
    ///
    /// # Errors
    /// [`SpecError::Machine`] if the law does not fit the machine (subcubes
    /// on a mesh, boxes on a hypercube, requests larger than the machine or
    /// of another dimension, cubic requests without power-of-two sides);
    /// [`SpecError::Workload`] if the generator refuses the sides.
    pub fn shapes(&self, topology: &Topology) -> Result<ShapeDist, SpecError> {
        let unfit = |reason: String| SpecError::Machine {
            law: self.to_string(),
            reason,
        };
        let max = match self {
            Self::Cube(dims) => {
                let Some(h) = topology.as_hypercube() else {
                    return Err(unfit(format!(
                        "draws subcubes and needs a hypercube, not {topology}; {}",
                        fitting_shapes(topology)
                    )));
                };
                return Ok(dims.dims(h.dim())?.into());
            }
            Self::Nodes { law, max } => {
                // On a block machine a job must fit one block of the largest
                // level, on a tree machine the largest tree under one root,
                // on a ring machine (where any count up to a ring's size is
                // placed within one ring) the largest ring; elsewhere the
                // whole machine.
                // On a GPU-sharing cluster a job of n is a pod of n whole
                // GPUs on one node: at most the most GPUs a node has.
                let slurm = topology.as_slurm();
                let nodes = match (slurm.and_then(|m| m.blocks()), slurm.and_then(|m| m.tree())) {
                    (Some(b), _) => b.largest_job_nodes() as usize,
                    (None, Some(t)) => largest_root_tree(t),
                    (None, None) if let Some(r) = slurm.and_then(|m| m.rings()) => {
                        (0..r.len()).map(|i| r.nodes(i).len()).max().unwrap_or(1)
                    }
                    (None, None) => topology.as_gpushare().map_or(topology.num_nodes(), |c| {
                        c.nodes()
                            .iter()
                            .map(|n| usize::from(n.gpus))
                            .max()
                            .unwrap_or(1)
                            .max(1)
                    }),
                };
                let machine = u32::try_from(nodes).unwrap_or(u32::MAX);
                if *law == NodeCountLaw::Placements {
                    let Some(tori) = slurm.and_then(|m| m.toruses()) else {
                        return Err(unfit(format!(
                            "draws a torus3d machine's placement sizes and needs one, not {topology}; {}",
                            fitting_shapes(topology)
                        )));
                    };
                    let limit = max.unwrap_or(u32::MAX);
                    let sizes: Vec<u32> = tori
                        .toruses()
                        .iter()
                        .flat_map(|t| t.placements().iter().map(|p| p.size()))
                        .filter(|&n| n <= limit)
                        .collect();
                    if sizes.is_empty() {
                        return Err(unfit(format!(
                            "no placement of {topology} has at most {limit} nodes; raise the largest request (--max-sides on the command line)"
                        )));
                    }
                    return Ok(NodeCounts::among(&sizes)?.into());
                }
                let max = max.unwrap_or(machine);
                if max > machine {
                    return Err(unfit(if slurm.is_some() {
                        format!(
                            "requests of up to {max} nodes are larger than the largest job {topology} can place, {machine} nodes; give at most {machine} (--max-sides on the command line)"
                        )
                    } else {
                        format!(
                            "requests would be larger than the machine {topology} of {machine} nodes"
                        )
                    }));
                }
                return Ok(NodeCounts::new(*law, max)?.into());
            }
            Self::Catalogue { weights } => {
                let Some(pod) = topology.as_pod() else {
                    return Err(unfit(format!(
                        "draws a pod's catalogue shapes and needs a pod, not {topology}; {}",
                        fitting_shapes(topology)
                    )));
                };
                return Ok(CatalogueShapes::new(pod.catalogue(), weights.as_deref())?.into());
            }
            Self::Sides { max, .. } | Self::Cubic { max } | Self::Noncubic { max } => max,
        };
        let Some(grid) = topology.as_grid() else {
            return Err(unfit(format!(
                "draws boxes and needs a mesh or torus, not {topology}; {}",
                fitting_shapes(topology)
            )));
        };
        let machine = grid.sides();
        let max: &[u32] = match max {
            None => machine,
            Some(m) if m.len() != machine.len() => {
                return Err(unfit(format!(
                    "requests have {} dimensions, the machine {topology} has {}",
                    m.len(),
                    machine.len()
                )));
            }
            Some(m) if m.iter().zip(machine.iter()).any(|(a, b)| a > b) => {
                return Err(unfit(format!(
                    "requests would be larger than the machine {topology}"
                )));
            }
            Some(m) => m,
        };
        Ok(match self {
            Self::Sides { law, .. } => MeshSides::new(*law, max)?.into(),
            Self::Noncubic { .. } => NoncubicShapes::new(max)?.into(),
            _ => {
                let exps = max
                    .iter()
                    .map(|&s| {
                        if s.is_power_of_two() {
                            Ok(s.trailing_zeros())
                        } else {
                            Err(unfit(format!(
                                "draws power-of-two sides and needs power-of-two limits; {s} is not one (give power-of-two largest sides, as in cubic:AxB)"
                            )))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                CubicShapes::new(&exps)?.into()
            }
        })
    }
}

/// The nodes under the root switch with the most of them: the largest job
/// a tree machine can ever place (a machine of two roots is two trees).
fn largest_root_tree(tree: &partalloc_topology::slurm::Tree) -> usize {
    let switches = tree.switches();
    let mut below = vec![0usize; switches.len()];
    for &leaf in tree.leaves() {
        let nodes = switches
            .get(leaf as usize)
            .map_or(0, |s| s.nodes.end.saturating_sub(s.nodes.start) as usize);
        if let Some(root) = tree.ancestors(leaf).last()
            && let Some(b) = below.get_mut(root as usize)
        {
            *b += nodes;
        }
    }
    below.into_iter().max().unwrap_or(0)
}

/// The shape laws that fit `topology`, as advice for a law that does not.
fn fitting_shapes(topology: &Topology) -> &'static str {
    if topology.as_hypercube().is_some() {
        "use cube"
    } else if topology.as_pod().is_some() {
        "use catalogue or sides"
    } else if topology.as_grid().is_some() {
        "use sides, cubic or noncubic"
    } else {
        "use nodes (node counts)"
    }
}

impl FromStr for ShapeLaw {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        const LAW: &str = "shape law";
        let t = text.trim();
        let (kind, rest) = match t.split_once(':') {
            Some((k, r)) => (k.trim(), Some(r)),
            None => (t, None),
        };
        let sides = |s: &str| sides_of(LAW, text, SHAPES, s);
        let max = |r: Option<&str>| r.map(sides).transpose();
        match kind {
            "cube" => {
                let dims = rest.ok_or_else(|| {
                    syntax(
                        LAW,
                        text,
                        SHAPES,
                        "cube needs a dimension law, e.g. cube:uniform".to_owned(),
                    )
                })?;
                Ok(Self::Cube(dims.parse()?))
            }
            "sides" => {
                let rest = rest.ok_or_else(|| {
                    syntax(
                        LAW,
                        text,
                        SHAPES,
                        "sides needs a side law, e.g. sides:uniform".to_owned(),
                    )
                })?;
                let (law, limit) = match rest.split_once(':') {
                    Some((l, m)) => (l, Some(m)),
                    None => (rest, None),
                };
                Ok(Self::Sides {
                    law: law.parse()?,
                    max: max(limit)?,
                })
            }
            "cubic" => Ok(Self::Cubic { max: max(rest)? }),
            "noncubic" => Ok(Self::Noncubic { max: max(rest)? }),
            "nodes" => {
                let bad = |reason: String| syntax(LAW, text, SHAPES, reason);
                let rest = rest.ok_or_else(|| {
                    bad(
                        "nodes needs a count law, e.g. nodes:uniform or nodes:multiples-of-18:144"
                            .to_owned(),
                    )
                })?;
                let (law, limit) = match rest.split_once(':') {
                    Some((l, m)) => (l.trim(), Some(m.trim())),
                    None => (rest.trim(), None),
                };
                let positive = |t: &str| {
                    t.parse::<u32>().ok().filter(|&v| v > 0).ok_or_else(|| {
                        bad(format!(
                            "{:?} is not a positive whole number",
                            partalloc_topology::echo(t)
                        ))
                    })
                };
                let law = match law {
                    "uniform" => NodeCountLaw::Uniform,
                    "pow2" => NodeCountLaw::PowersOfTwo,
                    "placements" => NodeCountLaw::Placements,
                    other => match other.strip_prefix("multiples-of-") {
                        Some(k) => NodeCountLaw::Multiples(positive(k)?),
                        None => {
                            return Err(bad(format!(
                                "unknown count law {:?} (uniform, pow2, multiples-of-K or placements)",
                                partalloc_topology::echo(other)
                            )));
                        }
                    },
                };
                let max = limit.map(positive).transpose()?;
                if let (NodeCountLaw::Multiples(k), Some(m)) = (law, max)
                    && k > m
                {
                    return Err(bad(format!("multiples of {k} cannot stay within {m}")));
                }
                Ok(Self::Nodes { law, max })
            }
            "catalogue" => {
                let weights = rest
                    .map(|r| {
                        r.split(',')
                            .map(|w| {
                                w.trim().parse::<f64>().map_err(|_| {
                                    syntax(
                                        LAW,
                                        text,
                                        SHAPES,
                                        format!("shape weight {w:?} is not a number"),
                                    )
                                })
                            })
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .transpose()?;
                Ok(Self::Catalogue { weights })
            }
            other => Err(syntax(
                LAW,
                text,
                SHAPES,
                format!("unknown law {:?}", partalloc_topology::echo(other)),
            )),
        }
    }
}

impl Display for ShapeLaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max = match self {
            Self::Cube(dims) => return write!(f, "cube:{dims}"),
            Self::Nodes { law, max } => {
                write!(f, "nodes:{law}")?;
                if let Some(m) = max {
                    write!(f, ":{m}")?;
                }
                return Ok(());
            }
            Self::Sides { law, max } => {
                write!(f, "sides:{law}")?;
                max
            }
            Self::Cubic { max } => {
                f.write_str("cubic")?;
                max
            }
            Self::Noncubic { max } => {
                f.write_str("noncubic")?;
                max
            }
            Self::Catalogue { weights } => {
                f.write_str("catalogue")?;
                if let Some(w) = weights {
                    for (i, w) in w.iter().enumerate() {
                        write!(f, "{}{w}", if i == 0 { ':' } else { ',' })?;
                    }
                }
                return Ok(());
            }
        };
        if let Some(m) = max {
            f.write_str(":")?;
            write_sides(f, m)?;
        }
        Ok(())
    }
}

/// The sides of a request, `AxB[xC…]` as in a machine description (the
/// largest request of a [`ShapeLaw`], given on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sides(pub Coords);

impl FromStr for Sides {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        sides_of("sides", text, "AxB[xC…], e.g. 16x16", text).map(Self)
    }
}

impl Display for Sides {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_sides(f, &self.0)
    }
}

/// A family of shape laws, leaving the side law, the dimension law and the
/// largest request to other settings (see [`ShapeLaw::of_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ShapeKind {
    /// `auto`: `cube` on a hypercube, `sides` otherwise.
    #[default]
    Auto,
    /// `cube`: subcubes.
    Cube,
    /// `sides`: boxes with sides by a side law.
    Sides,
    /// `cubic`: Kang's power-of-two boxes.
    Cubic,
    /// `noncubic`: Kang's uniform boxes.
    Noncubic,
    /// `nodes`: plain node counts, uniform up to the machine.
    Nodes,
    /// `catalogue`: a pod's catalogue shapes, all equally likely.
    Catalogue,
}

impl FromStr for ShapeKind {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        match text.trim() {
            "auto" => Ok(Self::Auto),
            "cube" => Ok(Self::Cube),
            "sides" => Ok(Self::Sides),
            "cubic" => Ok(Self::Cubic),
            "noncubic" => Ok(Self::Noncubic),
            "nodes" => Ok(Self::Nodes),
            "catalogue" => Ok(Self::Catalogue),
            _ => Err(syntax("shape kind", text, KINDS, "unknown kind".to_owned())),
        }
    }
}

impl Display for ShapeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Cube => "cube",
            Self::Sides => "sides",
            Self::Cubic => "cubic",
            Self::Noncubic => "noncubic",
            Self::Nodes => "nodes",
            Self::Catalogue => "catalogue",
        })
    }
}

/// The law of a job's service (residence) time, or of its total demand
/// under [`Dependence::Independent`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum DemandLaw {
    /// `exp:MEAN`.
    Exponential {
        /// The mean.
        mean: f64,
    },
    /// `uniform:MEAN`: uniform on \[0, 2·MEAN\].
    Uniform {
        /// The mean.
        mean: f64,
    },
    /// `uniform:LO-HI`.
    Range {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// `hyper:MEAN,ALPHA,CV`: bimodal hyper-exponential (Mohapatra §4.1).
    HyperExponential {
        /// The mean.
        mean: f64,
        /// The probability of the first branch.
        alpha: f64,
        /// The coefficient of variation.
        cv: f64,
    },
    /// `const:VALUE`.
    Constant {
        /// The value.
        value: f64,
    },
}

impl DemandLaw {
    /// The distribution.
    ///
    /// # Errors
    /// As the generator's constructor (never for a parsed law).
    pub fn dist(&self) -> Result<DemandDist, WorkloadError> {
        Ok(match *self {
            Self::Exponential { mean } => Exponential::new(mean)?.into(),
            Self::Uniform { mean } => UniformDemand::with_mean(mean)?.into(),
            Self::Range { lo, hi } => UniformDemand::new(lo, hi)?.into(),
            Self::HyperExponential { mean, alpha, cv } => {
                HyperExponential::new(mean, alpha, cv)?.into()
            }
            Self::Constant { value } => Constant::new(value)?.into(),
        })
    }
}

/// `LO-HI` split at the first '-' that is neither a leading sign nor an
/// exponent's sign, so `1e-3` is one number and `1e-3-2e-3` the range from
/// 0.001 to 0.002.
fn split_range(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    let mut prev = None;
    for (i, c) in t.char_indices() {
        if c == '-' && prev.is_some_and(|p: char| p != 'e' && p != 'E') {
            return Some((t.get(..i)?, t.get(i + 1..)?));
        }
        prev = Some(c);
    }
    None
}

impl FromStr for DemandLaw {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        const LAW: &str = "demand law";
        let (law, args) = text
            .split_once(':')
            .ok_or_else(|| syntax(LAW, text, DEMANDS, "missing ':'".to_owned()))?;
        let num = |part: &str| number(LAW, text, DEMANDS, part);
        let parsed = match law.trim() {
            "exp" | "exponential" => Self::Exponential { mean: num(args)? },
            "uniform" => match split_range(args) {
                Some((lo, hi)) => Self::Range {
                    lo: num(lo)?,
                    hi: num(hi)?,
                },
                None => Self::Uniform { mean: num(args)? },
            },
            "hyper" | "hyperexp" => {
                let v: Vec<&str> = args.split(',').collect();
                let [mean, alpha, cv] = v.as_slice() else {
                    return Err(syntax(
                        LAW,
                        text,
                        DEMANDS,
                        "hyper takes three values MEAN,ALPHA,CV".to_owned(),
                    ));
                };
                Self::HyperExponential {
                    mean: num(mean)?,
                    alpha: num(alpha)?,
                    cv: num(cv)?,
                }
            }
            "const" | "constant" => Self::Constant { value: num(args)? },
            other => {
                return Err(syntax(
                    LAW,
                    text,
                    DEMANDS,
                    format!("unknown law {:?}", partalloc_topology::echo(other)),
                ));
            }
        };
        parsed.dist().map_err(invalid(LAW, text))?;
        Ok(parsed)
    }
}

impl Display for DemandLaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exponential { mean } => write!(f, "exp:{mean}"),
            Self::Uniform { mean } => write!(f, "uniform:{mean}"),
            Self::Range { lo, hi } => write!(f, "uniform:{lo}-{hi}"),
            Self::HyperExponential { mean, alpha, cv } => write!(f, "hyper:{mean},{alpha},{cv}"),
            Self::Constant { value } => write!(f, "const:{value}"),
        }
    }
}

/// A whole generated workload: how jobs arrive, what they ask for and how
/// long they stay.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct WorkloadSpec {
    /// The arrival law.
    pub arrivals: Arrivals,
    /// The shape law.
    pub shapes: ShapeLaw,
    /// The service (residence) law.
    pub demand: DemandLaw,
    /// How residence relates to size.
    #[cfg_attr(feature = "serde", serde(with = "as_text"))]
    pub dependence: Dependence,
    /// Accept offered loads of 1 or more (saturation studies).
    #[cfg_attr(feature = "serde", serde(default))]
    pub allow_saturation: bool,
}

impl WorkloadSpec {
    /// The workload on `topology`, drawing exactly as the [`Workload`]
    /// built from the same generators by hand.
    ///
    /// # Errors
    /// [`SpecError::Machine`] if the shape law does not fit the machine;
    /// [`SpecError::Workload`] if the load is 1 or more without
    /// `allow_saturation`, or the generators refuse their values.
    pub fn build(&self, topology: &Topology) -> Result<Workload<ShapeDist, DemandDist>, SpecError> {
        let shapes = self.shapes.shapes(topology)?;
        let demand = self.demand.dist()?;
        // On a GPU-sharing cluster jobs ask for GPUs: the load is theirs.
        let nodes = topology
            .as_gpushare()
            .map_or(topology.num_nodes() as u64, |c| u64::from(c.gpus()).max(1));
        let dep = self.dependence;
        Ok(match self.arrivals {
            Arrivals::Load(load) if self.allow_saturation => {
                Workload::with_saturating_load(load, nodes, shapes, demand, dep)?
            }
            Arrivals::Load(load) => Workload::with_load(load, nodes, shapes, demand, dep)?,
            Arrivals::Rate(rate) => Workload::new(PoissonArrivals::new(rate)?, shapes, demand, dep),
        })
    }
}

impl WorkloadSpec {
    /// One line describing the workload and a run of it, as the command
    /// line and the Python package print it: arrivals, shapes, the largest
    /// request `max` as given (shown even where the shape law has no use
    /// for it), residence law, and `jobs` measured jobs after `warmup`
    /// discarded ones (the warm-up only when there is one).
    ///
    /// ```
    /// use partalloc_workload::spec::{Sides, WorkloadSpec};
    ///
    /// let spec = WorkloadSpec {
    ///     arrivals: "load:0.5".parse()?,
    ///     shapes: "sides:uniform:8x8".parse()?,
    ///     demand: "exp:1".parse()?,
    ///     dependence: "dependent".parse()?,
    ///     allow_saturation: false,
    /// };
    /// let max: Sides = "8x8".parse()?;
    /// assert_eq!(
    ///     spec.describe(Some(&max), 300, 20),
    ///     "load 0.5, sides uniform up to 8x8, residence exp:1 (dependent), 300 jobs after 20 warm-up"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn describe(&self, max: Option<&Sides>, jobs: u64, warmup: u64) -> String {
        let arrivals = match self.arrivals {
            Arrivals::Load(x) => format!("load {x}"),
            Arrivals::Rate(x) => format!("rate {x}"),
        };
        let shapes = match &self.shapes {
            ShapeLaw::Cube(dims) => format!("cube dims {dims}"),
            ShapeLaw::Sides { law, .. } => format!("sides {law}"),
            ShapeLaw::Cubic { .. } => ShapeKind::Cubic.to_string(),
            ShapeLaw::Noncubic { .. } => ShapeKind::Noncubic.to_string(),
            ShapeLaw::Nodes {
                law: NodeCountLaw::Placements,
                ..
            } => "nodes among the placement sizes".to_owned(),
            ShapeLaw::Nodes { .. } => ShapeKind::Nodes.to_string(),
            law @ ShapeLaw::Catalogue { .. } => law.to_string(),
        };
        let max = match (&self.shapes, max) {
            (ShapeLaw::Nodes { max: Some(n), .. }, _) => format!(" up to {n}"),
            (_, Some(m)) => format!(" up to {m}"),
            _ => String::new(),
        };
        let warmup = if warmup > 0 {
            format!(" after {warmup} warm-up")
        } else {
            String::new()
        };
        format!(
            "{arrivals}, {shapes}{max}, residence {} ({}), {jobs} jobs{warmup}",
            self.demand, self.dependence
        )
    }
}

/// Serde helpers that write a value as its text form and read it back
/// through [`FromStr`]: for fields whose type serializes otherwise, such as
/// a [`SideLaw`] or [`Dependence`] field written `sides = "normal"`
/// (`#[serde(with = "partalloc_workload::spec::as_text")]`).
#[cfg(feature = "serde")]
pub mod as_text {
    use core::fmt::Display;
    use core::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `v` as its text form.
    ///
    /// # Errors
    /// As the serializer.
    pub fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Reads a value from its text form.
    ///
    /// # Errors
    /// The parse error, as the deserializer's error.
    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr<Err: Display>,
        D: Deserializer<'de>,
    {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Implements `Serialize`/`Deserialize` through the text form.
macro_rules! serde_as_text {
    ($($t:ty),*) => {$(
        #[cfg(feature = "serde")]
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                as_text::serialize(self, s)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                as_text::deserialize(d)
            }
        }
    )*};
}

serde_as_text!(Arrivals, CubeDimLaw, ShapeLaw, ShapeKind, DemandLaw, Sides);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_count_laws_read_build_and_refuse() {
        let mesh: Topology = "mesh:12x12".parse().unwrap();
        let law: ShapeLaw = "nodes:multiples-of-18:144".parse().unwrap();
        assert_eq!(
            law,
            ShapeLaw::Nodes {
                law: NodeCountLaw::Multiples(18),
                max: Some(144)
            }
        );
        assert_eq!(law.to_string(), "nodes:multiples-of-18:144");
        assert!((law.shapes(&mesh).unwrap().mean_nodes() - 81.0).abs() < 1e-12);
        let e = "nodes:uniform:200"
            .parse::<ShapeLaw>()
            .unwrap()
            .shapes(&mesh)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("larger than the machine mesh:12x12 of 144 nodes"),
            "{e}"
        );
        for (bad, says) in [
            ("nodes", "nodes needs a count law"),
            ("nodes:normal", "unknown count law \"normal\""),
            (
                "nodes:multiples-of-x",
                "\"x\" is not a positive whole number",
            ),
            (
                "nodes:multiples-of-50:40",
                "multiples of 50 cannot stay within 40",
            ),
            ("nodes:pow2:0", "\"0\" is not a positive whole number"),
        ] {
            let e = bad.parse::<ShapeLaw>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert_eq!("nodes".parse::<ShapeKind>(), Ok(ShapeKind::Nodes));
        // On a block machine the default largest count is the largest block.
        let racks: Topology = partalloc_topology::slurm::SlurmMachine::parse_conf(
            "BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=n[4-7]\nBlockName=c Nodes=n[8-11]\nBlockSizes=4,8\n",
            "r.conf",
        )
        .unwrap()
        .into();
        let uniform: ShapeLaw = "nodes:uniform".parse().unwrap();
        assert_eq!(uniform.shapes(&racks).unwrap().mean_nodes(), 4.5);
        let by_kind = ShapeLaw::of_kind(
            ShapeKind::Nodes,
            &mesh,
            SideLaw::Uniform,
            &CubeDimLaw::Uniform,
            None,
        );
        assert_eq!(by_kind.to_string(), "nodes:uniform");
    }
    use crate::{MeanDistribution, ShapeDistribution};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    #[test]
    fn demand_laws_have_the_stated_means() {
        for (text, mean) in [
            ("exp:10", 10.0),
            ("uniform:5", 5.0),
            ("uniform:2-6", 4.0),
            ("hyper:5,0.95,4", 5.0),
            ("const:3", 3.0),
        ] {
            let d: DemandLaw = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
            let m = d.dist().unwrap().mean();
            assert!((m - mean).abs() < 1e-12, "{text}: {m}");
        }
        assert_eq!(
            "exponential:2".parse::<DemandLaw>().unwrap(),
            DemandLaw::Exponential { mean: 2.0 }
        );
    }

    #[test]
    fn bad_demand_laws_name_the_input_and_the_accepted_forms() {
        for bad in ["exp", "exp:x", "gamma:2", "hyper:5,0.95", "uniform:2-x"] {
            let e = bad.parse::<DemandLaw>().unwrap_err();
            assert!(matches!(e, SpecError::Syntax { .. }), "{bad}: {e:?}");
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("demand law {bad:?}: ")), "{msg}");
            assert!(msg.ends_with(DEMANDS), "{msg}");
        }
        for bad in ["exp:-1", "uniform:6-2", "hyper:5,1.5,4", "const:0"] {
            let e = bad.parse::<DemandLaw>().unwrap_err();
            assert!(matches!(e, SpecError::Invalid { .. }), "{bad}: {e:?}");
            assert!(e.to_string().starts_with(&format!("demand law {bad:?}: ")));
        }
    }

    #[test]
    fn shape_laws_read_their_sides_with_the_topology_parser() {
        let law: ShapeLaw = "sides:normal:16x8".parse().unwrap();
        assert_eq!(
            law,
            ShapeLaw::Sides {
                law: SideLaw::TruncatedNormal,
                max: Some(Coords::new(&[16, 8]).unwrap())
            }
        );
        assert_eq!(
            "cubic:4X4".parse::<ShapeLaw>().unwrap().to_string(),
            "cubic:4x4"
        );
        assert_eq!(
            "cube:uniform:2-5".parse::<ShapeLaw>().unwrap().to_string(),
            "cube:uniform:2-5"
        );
        for bad in [
            "noncubic:16xa",
            "cube",
            "sides",
            "sides:gamma",
            "blob",
            "cube:1,x",
        ] {
            assert!(bad.parse::<ShapeLaw>().is_err(), "{bad}");
        }
        let e = "noncubic:16xa".parse::<ShapeLaw>().unwrap_err().to_string();
        assert!(e.contains("\"a\" is not a non-negative integer"), "{e}");
    }

    #[test]
    fn shape_laws_follow_the_machine() {
        let mesh: Topology = "mesh:16x8".parse().unwrap();
        let cube: Topology = "hypercube:6".parse().unwrap();
        let law =
            |kind| ShapeLaw::of_kind(kind, &mesh, SideLaw::Uniform, &CubeDimLaw::Uniform, None);
        // Kim & Yoon uniform sides on 16x8: m = 8.5 · 4.5.
        let s = law(ShapeKind::Auto).shapes(&mesh).unwrap();
        assert!((s.mean_nodes() - 8.5 * 4.5).abs() < 1e-12);
        // Mohapatra uniform dimensions 0..=5 on a 6-cube: m = 63/6.
        let auto = ShapeLaw::of_kind(
            ShapeKind::Auto,
            &cube,
            SideLaw::Uniform,
            &CubeDimLaw::Uniform,
            None,
        );
        assert_eq!(auto, ShapeLaw::Cube(CubeDimLaw::Uniform));
        assert!((auto.shapes(&cube).unwrap().mean_nodes() - 63.0 / 6.0).abs() < 1e-12);
        // Kang: exponents uniform in 0..=4 and 0..=3: m = (31/5)(15/4).
        let cubic = law(ShapeKind::Cubic);
        let s = cubic.shapes(&mesh).unwrap();
        assert!((s.mean_nodes() - 31.0 / 5.0 * 15.0 / 4.0).abs() < 1e-12);
        let odd: Topology = "mesh:12x8".parse().unwrap();
        assert!(matches!(cubic.shapes(&odd), Err(SpecError::Machine { .. })));
        assert!(matches!(
            "cubic:8x8".parse::<ShapeLaw>().unwrap().shapes(&odd),
            Ok(ShapeDist::Cubic(_))
        ));
        for (law, machine) in [
            ("cube:uniform", &mesh),
            ("sides:uniform", &cube),
            ("noncubic:32x8", &mesh),
            ("noncubic:4x4x4", &mesh),
            ("cube:normal", &cube),
            ("cube:uniform:0-7", &cube),
        ] {
            let e = law
                .parse::<ShapeLaw>()
                .unwrap()
                .shapes(machine)
                .unwrap_err();
            assert!(matches!(e, SpecError::Machine { .. }), "{law}: {e:?}");
            assert!(
                e.to_string().starts_with(&format!("shape law {law}: ")),
                "{e}"
            );
        }
    }

    #[test]
    fn node_counts_on_a_tree_of_two_roots_stay_under_the_larger_root() {
        let two: Topology = partalloc_topology::slurm::SlurmMachine::parse_conf(
            "SwitchName=a Nodes=n[0-3]\nSwitchName=b Nodes=m[0-7]\n",
            "two.conf",
        )
        .unwrap()
        .into();
        let law = ShapeLaw::of_kind(
            ShapeKind::Auto,
            &two,
            SideLaw::Uniform,
            &CubeDimLaw::Uniform,
            None,
        );
        // Uniform in 1..=8, not 1..=12.
        assert_eq!(law.shapes(&two).unwrap().mean_nodes(), 4.5);
        let e = "nodes:uniform:9"
            .parse::<ShapeLaw>()
            .unwrap()
            .shapes(&two)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("requests of up to 9 nodes are larger than the largest job tree:two.conf can place, 8 nodes"),
            "{e}"
        );
    }

    #[test]
    fn auto_on_a_torus3d_machine_draws_its_placement_sizes_uniformly() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/torus3d-4x4x4.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let torus: Topology =
            partalloc_topology::slurm::SlurmMachine::parse_yaml(&text, "t.yaml", None)
                .unwrap()
                .into();
        let law = ShapeLaw::of_kind(
            ShapeKind::Auto,
            &torus,
            SideLaw::Uniform,
            &CubeDimLaw::Uniform,
            None,
        );
        assert_eq!(law.to_string(), "nodes:placements");
        assert_eq!(law.to_string().parse::<ShapeLaw>().unwrap(), law);
        // The file's placements: 2x1x1, 2x2x1, 2x2x2, 4x4x1, 4x4x4.
        let dist = law.shapes(&torus).unwrap();
        let ShapeDist::Nodes(counts) = dist else {
            panic!("{dist:?}")
        };
        assert_eq!(counts.sizes(), &[2, 4, 8, 16, 64]);
        assert_eq!(dist.mean_nodes(), 94.0 / 5.0);
        use rand::SeedableRng as _;
        use rand_distr::Distribution as _;
        let mut rng = crate::ChaCha8Rng::seed_from_u64(3);
        let mut seen = [0u32; 5];
        for _ in 0..5000 {
            let crate::JobShape::Nodes { count } = counts.sample(&mut rng) else {
                panic!()
            };
            let i = [2, 4, 8, 16, 64].iter().position(|&n| n == count).unwrap();
            seen[i] += 1;
        }
        // Each of the five about 1000 times (5 standard deviations: 141).
        assert!(seen.iter().all(|&c| (859..=1141).contains(&c)), "{seen:?}");
        // A largest request keeps the sizes within it; none left is refused.
        let small = ShapeLaw::of_kind(
            ShapeKind::Auto,
            &torus,
            SideLaw::Uniform,
            &CubeDimLaw::Uniform,
            Some(Coords::new(&[8]).unwrap()),
        );
        let ShapeDist::Nodes(c) = small.shapes(&torus).unwrap() else {
            panic!()
        };
        assert_eq!(c.sizes(), &[2, 4, 8]);
        let none = ShapeLaw::Nodes {
            law: NodeCountLaw::Placements,
            max: Some(1),
        };
        assert!(
            none.shapes(&torus)
                .unwrap_err()
                .to_string()
                .contains("no placement of")
        );
        // Elsewhere the law is refused with the laws that fit.
        let mesh: Topology = "mesh:4x4".parse().unwrap();
        let e = "nodes:placements"
            .parse::<ShapeLaw>()
            .unwrap()
            .shapes(&mesh)
            .unwrap_err();
        assert!(
            e.to_string().contains("needs one, not mesh:4x4; use sides"),
            "{e}"
        );
        // Described in words.
        let spec = WorkloadSpec {
            arrivals: Arrivals::Load(0.5),
            shapes: law,
            demand: DemandLaw::Exponential { mean: 1.0 },
            dependence: Dependence::Dependent,
            allow_saturation: false,
        };
        assert_eq!(
            spec.describe(None, 10, 0),
            "load 0.5, nodes among the placement sizes, residence exp:1 (dependent), 10 jobs"
        );
    }

    #[test]
    fn misfitting_laws_name_the_laws_that_fit_and_the_real_fault() {
        let racks: Topology = partalloc_topology::slurm::SlurmMachine::parse_conf(
            "BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=n[4-7]\nBlockSizes=4,8\n",
            "r.conf",
        )
        .unwrap()
        .into();
        let mesh: Topology = "mesh:4x4".parse().unwrap();
        let cube: Topology = "hypercube:6".parse().unwrap();
        let pod: Topology = "pod:tpu-v4:4x4x4".parse().unwrap();
        for (law, machine, advice) in [
            ("sides:uniform", &racks, "; use nodes (node counts)"),
            ("cube:uniform", &racks, "; use nodes (node counts)"),
            ("catalogue", &racks, "; use nodes (node counts)"),
            ("cube:uniform", &mesh, "; use sides, cubic or noncubic"),
            ("catalogue", &cube, "; use cube"),
            ("catalogue", &mesh, "; use sides, cubic or noncubic"),
            ("cube:uniform", &pod, "; use catalogue or sides"),
        ] {
            let e = law
                .parse::<ShapeLaw>()
                .unwrap()
                .shapes(machine)
                .unwrap_err();
            assert!(e.to_string().ends_with(advice), "{law} on {machine}: {e}");
        }
        // A dimension above the machine is said so, even above every machine.
        for (hi, says) in [(7, "up to 7 are"), (99, "up to 99 are")] {
            let e = format!("cube:uniform:0-{hi}")
                .parse::<ShapeLaw>()
                .unwrap()
                .shapes(&cube)
                .unwrap_err()
                .to_string();
            assert_eq!(
                e,
                format!(
                    "shape law cube:uniform:0-{hi}: requests of dimension {says} larger than the machine's 6-cube"
                )
            );
        }
        let e = "uniform:5-3".parse::<CubeDimLaw>().unwrap_err().to_string();
        assert!(
            e.ends_with("lower bound 5 must not exceed upper bound 3"),
            "{e}"
        );
        // A negative lower bound is named as such, not as a reversed range.
        let e = "uniform:-1-5".parse::<DemandLaw>().unwrap_err().to_string();
        assert_eq!(
            e,
            "demand law \"uniform:-1-5\": uniform demand: lower bound -1 is negative; write the range as LO-HI with 0 <= LO <= HI, e.g. uniform:0-5"
        );
        let e = "uniform:0-inf"
            .parse::<DemandLaw>()
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("bound inf is not a finite number"), "{e}");
        // Weights that overflow are not "a sum of 0".
        let e = "1e308,1e308".parse::<CubeDimLaw>().unwrap_err().to_string();
        assert!(
            e.contains("add up to more than the largest finite number"),
            "{e}"
        );
        let e = ShapeLaw::Catalogue {
            weights: Some(vec![1e308, 1e308, 1.0, 1.0, 1.0]),
        }
        .shapes(&pod)
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("add up to more than the largest finite number"),
            "{e}"
        );
    }

    #[test]
    fn specs_draw_as_hand_built_workloads() {
        let machine: Topology = "hypercube:10".parse().unwrap();
        let spec = WorkloadSpec {
            arrivals: Arrivals::Load(0.4),
            shapes: "cube:normal".parse().unwrap(),
            demand: "hyper:5,0.95,4".parse().unwrap(),
            dependence: Dependence::Independent,
            allow_saturation: false,
        };
        let by_hand = Workload::with_load(
            0.4,
            1024,
            CubeDims::mohapatra_normal(),
            HyperExponential::new(5.0, 0.95, 4.0).unwrap(),
            Dependence::Independent,
        )
        .unwrap();
        let a: Vec<_> = spec
            .build(&machine)
            .unwrap()
            .jobs(&mut ChaCha8Rng::seed_from_u64(3))
            .take(200)
            .collect();
        let b: Vec<_> = by_hand
            .jobs(&mut ChaCha8Rng::seed_from_u64(3))
            .take(200)
            .collect();
        assert_eq!(a, b);
        let saturated = WorkloadSpec {
            arrivals: Arrivals::Load(1.2),
            ..spec.clone()
        };
        assert!(matches!(
            saturated.build(&machine),
            Err(SpecError::Workload(WorkloadError::Saturated { .. }))
        ));
        let allowed = WorkloadSpec {
            allow_saturation: true,
            ..saturated
        };
        assert!(allowed.build(&machine).is_ok());
        let rate = WorkloadSpec {
            arrivals: "rate:0.25".parse().unwrap(),
            ..spec
        };
        assert_eq!(rate.build(&machine).unwrap().arrivals().rate(), 0.25);
    }

    #[test]
    fn small_laws_round_trip_and_refuse_unknown_names() {
        for t in ["uniform", "normal", "exponential"] {
            assert_eq!(t.parse::<SideLaw>().unwrap().to_string(), t);
        }
        for t in ["dependent", "independent"] {
            assert_eq!(t.parse::<Dependence>().unwrap().to_string(), t);
        }
        for t in ["auto", "cube", "sides", "cubic", "noncubic"] {
            assert_eq!(t.parse::<ShapeKind>().unwrap().to_string(), t);
        }
        for t in ["16x8", "4x4x2"] {
            assert_eq!(t.parse::<Sides>().unwrap().to_string(), t);
        }
        assert_eq!(
            "16xa".parse::<Sides>().unwrap_err().to_string(),
            "sides \"16xa\": \"a\" is not a non-negative integer; use AxB[xC…], e.g. 16x16"
        );
        for t in ["load:0.5", "rate:2"] {
            assert_eq!(t.parse::<Arrivals>().unwrap().to_string(), t);
        }
        let e = "gamma".parse::<SideLaw>().unwrap_err().to_string();
        assert_eq!(
            e,
            "side law \"gamma\": unknown law; use uniform, normal or exponential"
        );
        assert!("sometimes".parse::<Dependence>().is_err());
        assert!("load:-1".parse::<Arrivals>().is_err());
        assert!("load".parse::<Arrivals>().is_err());
        assert!("speed:1".parse::<Arrivals>().is_err());
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_uses_the_text_forms() {
        let text = r#"{"arrivals":"load:0.4","shapes":"sides:normal:8x8","demand":"hyper:5,0.95,4","dependence":"independent","allow_saturation":false}"#;
        let spec: WorkloadSpec = serde_json::from_str(text).unwrap();
        assert_eq!(
            spec.demand,
            DemandLaw::HyperExponential {
                mean: 5.0,
                alpha: 0.95,
                cv: 4.0
            }
        );
        assert_eq!(spec.dependence, Dependence::Independent);
        assert_eq!(serde_json::to_string(&spec).unwrap(), text);
        let bad = text.replace("hyper:5,0.95,4", "gamma:2");
        let e = serde_json::from_str::<WorkloadSpec>(&bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("demand law \"gamma:2\": unknown law \"gamma\"; use exp:MEAN"),
            "{e}"
        );
    }

    fn positive() -> impl Strategy<Value = f64> {
        (1e-6f64..1e6).prop_map(|x| x)
    }

    fn sides() -> impl Strategy<Value = Option<Coords>> {
        proptest::option::of(
            proptest::collection::vec(1u32..1000, 1..=3).prop_map(|v| Coords::new(&v).unwrap()),
        )
    }

    fn demand() -> impl Strategy<Value = DemandLaw> {
        prop_oneof![
            positive().prop_map(|mean| DemandLaw::Exponential { mean }),
            positive().prop_map(|mean| DemandLaw::Uniform { mean }),
            (0f64..1e3, 0f64..1e3).prop_map(|(a, b)| DemandLaw::Range {
                lo: a.min(b),
                hi: a.max(b)
            }),
            (positive(), 0.01f64..0.99, 1.0f64..20.0)
                .prop_map(|(mean, alpha, cv)| { DemandLaw::HyperExponential { mean, alpha, cv } }),
            positive().prop_map(|value| DemandLaw::Constant { value }),
        ]
        .prop_filter("valid demand law", |d| d.dist().is_ok())
    }

    fn shape() -> impl Strategy<Value = ShapeLaw> {
        let dims = prop_oneof![
            Just(CubeDimLaw::Uniform),
            Just(CubeDimLaw::Normal),
            (0u32..20, 0u32..20).prop_map(|(a, b)| CubeDimLaw::Range {
                lo: a.min(b),
                hi: a.max(b)
            }),
            proptest::collection::vec(0.01f64..100.0, 1..12).prop_map(CubeDimLaw::Weights),
        ]
        .prop_filter("valid dimension law", |d| d.check().is_ok());
        let law = prop_oneof![
            Just(SideLaw::Uniform),
            Just(SideLaw::TruncatedNormal),
            Just(SideLaw::TruncatedExponential)
        ];
        prop_oneof![
            dims.prop_map(ShapeLaw::Cube),
            (law, sides()).prop_map(|(law, max)| ShapeLaw::Sides { law, max }),
            sides().prop_map(|max| ShapeLaw::Cubic { max }),
            sides().prop_map(|max| ShapeLaw::Noncubic { max }),
            (
                prop_oneof![
                    Just(NodeCountLaw::Uniform),
                    Just(NodeCountLaw::PowersOfTwo),
                    (1u32..64).prop_map(NodeCountLaw::Multiples)
                ],
                proptest::option::of(64u32..10_000)
            )
                .prop_map(|(law, max)| ShapeLaw::Nodes { law, max }),
            proptest::option::of(proptest::collection::vec(0.0f64..100.0, 1..12))
                .prop_map(|weights| ShapeLaw::Catalogue { weights }),
        ]
    }

    proptest! {
        #[test]
        fn demand_laws_round_trip(d in demand()) {
            prop_assert_eq!(d.to_string().parse::<DemandLaw>(), Ok(d));
        }

        #[test]
        fn shape_laws_round_trip(s in shape()) {
            prop_assert_eq!(s.to_string().parse::<ShapeLaw>(), Ok(s));
        }

        #[test]
        fn arrival_laws_round_trip(x in positive(), rate in any::<bool>()) {
            let a = if rate { Arrivals::Rate(x) } else { Arrivals::Load(x) };
            prop_assert_eq!(a.to_string().parse::<Arrivals>(), Ok(a));
        }
    }
}

#[cfg(test)]
mod pod_tests {
    use partalloc_topology::pod::Pod;

    use super::*;
    use crate::ShapeDistribution;

    #[test]
    fn the_largest_request_caps_node_counts_by_its_product() {
        let mesh: Topology = "mesh:8x8".parse().unwrap();
        let law = |max: Option<&[u32]>| {
            ShapeLaw::of_kind(
                ShapeKind::Nodes,
                &mesh,
                SideLaw::Uniform,
                &CubeDimLaw::Uniform,
                max.map(|m| Coords::new(m).unwrap()),
            )
        };
        assert_eq!(
            law(Some(&[4, 4])),
            ShapeLaw::Nodes {
                law: NodeCountLaw::Uniform,
                max: Some(16)
            }
        );
        // Uniform on 1..=16 nodes: mean 8.5; uncapped, 1..=64.
        assert_eq!(law(Some(&[4, 4])).shapes(&mesh).unwrap().mean_nodes(), 8.5);
        assert_eq!(law(None).shapes(&mesh).unwrap().mean_nodes(), 32.5);
        let e = law(Some(&[65])).shapes(&mesh).unwrap_err().to_string();
        assert!(e.contains("larger than the machine"), "{e}");
    }

    #[test]
    fn a_pod_draws_its_catalogue_shapes_by_default() {
        let pod: Topology = Pod::preset("tpu-v5e").unwrap().into();
        let auto = ShapeLaw::of_kind(
            ShapeKind::Auto,
            &pod,
            SideLaw::Uniform,
            &CubeDimLaw::Uniform,
            None,
        );
        assert_eq!(auto, ShapeLaw::Catalogue { weights: None });
        // 1, 4, 8, 16, 32, 64, 128, 256 chips, equally likely.
        let d = auto.shapes(&pod).unwrap();
        assert_eq!(d.mean_nodes(), 509.0 / 8.0);
        let law: ShapeLaw = "catalogue:1,0,0,0,0,0,0,1".parse().unwrap();
        assert_eq!(law.to_string(), "catalogue:1,0,0,0,0,0,0,1");
        assert_eq!(law.shapes(&pod).unwrap().mean_nodes(), 128.5);
        let e = law
            .shapes(&"mesh:8x8".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a pod"), "{e}");
        let e = "catalogue:1,x".parse::<ShapeLaw>().unwrap_err().to_string();
        assert!(e.contains("shape weight \"x\" is not a number"), "{e}");
        let e = "catalogue:1,2"
            .parse::<ShapeLaw>()
            .unwrap()
            .shapes(&pod)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 shape weights given for 8"), "{e}");
    }
}
