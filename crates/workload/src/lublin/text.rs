//! The model's text form, `lublin[:KIND][:key=value…]`, in the style of the
//! workload laws (`hyper:5,0.95,4`) and of pod descriptions
//! (`tpu-v4:8x8x8:wiring=twisted`).

use core::fmt;
use core::str::FromStr;

use super::error::LublinError;
use super::params::{Overrides, PARAMS, param_index, resolve};
use super::{LublinClass, LublinKind, LublinModel, LublinParams};

/// A Lublin–Feitelson model in words: which classes (`mixed`, `batch`,
/// `interactive`, `whole`), optionally the machine's nodes and the start
/// hour, and the parameters that differ from the published ones.
///
/// | text | meaning |
/// |---|---|
/// | `lublin` | both classes (`lublin:mixed`), published parameters |
/// | `lublin:batch:nodes=256` | batch jobs for 256 nodes |
/// | `lublin:whole:serial=0.3:pa=-0.01` | the typeless model, 30% serial jobs, stronger size–run-time correlation |
/// | `lublin:mixed:batch.uprob=0.9:interactive.arar=1.2` | in the mixed model each parameter names its class |
/// | `lublin:batch:start=8` | time 0 at 08:00 |
///
/// Parameters: `nodes` (the machine's, when left out), `start` (hour of
/// time 0, default 0) and those of [`LublinParams`] by field name
/// (`serial`, `pow2`, `ulow`, `umed`, `uhi`, `uprob`, `a1`, `b1`, `a2`,
/// `b2`, `pa`, `pb`, `aarr`, `barr`, `anum`, `bnum`, `arar`, and
/// `maxlogrun`, `maxloggap` for the caps). [`Display`](fmt::Display) writes
/// the canonical form, which [`FromStr`] reads back to an equal value:
/// the kind always, then `nodes`, `start` and the parameters in the order
/// above (batch before interactive).
///
/// ```
/// use partalloc_workload::lublin::{LublinClass, LublinSpec};
///
/// let spec: LublinSpec = "lublin:batch:nodes=256:serial=0.3".parse()?;
/// assert_eq!(spec.to_string(), "lublin:batch:nodes=256:serial=0.3");
/// let model = spec.model(1024)?; // 256 of the machine's 1024 nodes
/// assert_eq!(model.nodes(), 256);
/// let (class, params) = model.classes().next().unwrap();
/// assert_eq!((class, params.serial, params.uhi), (LublinClass::Batch, 0.3, 8.0));
/// assert!("lublin:batch:serial=1.5".parse::<LublinSpec>().is_err());
/// # Ok::<(), partalloc_workload::lublin::LublinError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LublinSpec {
    kind: LublinKind,
    nodes: Option<u32>,
    start: Option<f64>,
    /// Given values of the first class (batch in the mixed model) and of
    /// the interactive class of the mixed model.
    given: [Overrides; 2],
}

impl LublinSpec {
    /// The published parameters of `kind`, for the machine it is built
    /// for, starting at midnight.
    #[must_use]
    pub fn new(kind: LublinKind) -> Self {
        Self {
            kind,
            nodes: None,
            start: None,
            given: [[None; PARAMS.len()]; 2],
        }
    }

    /// Which classes are drawn.
    #[must_use]
    pub fn kind(&self) -> LublinKind {
        self.kind
    }

    /// The machine size given in the text (`nodes=`), if any.
    #[must_use]
    pub fn nodes(&self) -> Option<u32> {
        self.nodes
    }

    /// The parameters of `class` on `nodes` nodes: the given values and
    /// the published ones for the rest ([`LublinParams::preset`]), not yet
    /// checked; `None` if the model does not draw `class`.
    #[must_use]
    pub fn params(&self, class: LublinClass, nodes: u32) -> Option<LublinParams> {
        let slot = self.kind.classes().iter().position(|&c| c == class)?;
        Some(resolve(class, nodes, &self.given[slot]))
    }

    /// The model on a machine of `machine_nodes` nodes: for `nodes=` nodes
    /// if given, else for the whole machine.
    ///
    /// # Errors
    /// [`LublinError::LargerThanMachine`] if `nodes=` exceeds the machine;
    /// [`LublinError::NoNodes`] for an empty machine; the errors of
    /// [`LublinModel::single`] and [`LublinModel::mixed`].
    pub fn model(&self, machine_nodes: u64) -> Result<LublinModel, LublinError> {
        let nodes = match self.nodes {
            Some(n) if u64::from(n) > machine_nodes => {
                return Err(LublinError::LargerThanMachine {
                    nodes: n,
                    machine: machine_nodes,
                });
            }
            Some(n) => n,
            None => u32::try_from(machine_nodes).unwrap_or(u32::MAX),
        };
        if nodes == 0 {
            return Err(LublinError::NoNodes);
        }
        let params = |slot: usize, class| resolve(class, nodes, &self.given[slot]);
        let single = |class| LublinModel::single(nodes, class, params(0, class));
        let model = match self.kind {
            LublinKind::Mixed => LublinModel::mixed(
                nodes,
                params(0, LublinClass::Batch),
                params(1, LublinClass::Interactive),
            ),
            LublinKind::Batch => single(LublinClass::Batch),
            LublinKind::Interactive => single(LublinClass::Interactive),
            LublinKind::Whole => single(LublinClass::Whole),
        }?;
        model.with_start_hour(self.start.unwrap_or(0.0))
    }

    /// Checks what can be checked without the machine, and everything if
    /// `nodes=` is given.
    fn check(&self) -> Result<(), LublinError> {
        let nodes = self.nodes.unwrap_or(1);
        for (slot, &class) in self.kind.classes().iter().enumerate() {
            let p = resolve(class, nodes, &self.given[slot]);
            let checked = if self.nodes.is_some() {
                p.check(nodes)
            } else {
                p.check_laws()
            };
            checked.map_err(|e| self.in_class(class, e))?;
        }
        if let Some(h) = self.start
            && !(0.0..24.0).contains(&h)
        {
            return Err(LublinError::StartHour { value: h });
        }
        Ok(())
    }
}

impl Default for LublinSpec {
    fn default() -> Self {
        Self::new(LublinKind::Mixed)
    }
}

impl FromStr for LublinSpec {
    type Err = LublinError;

    fn from_str(text: &str) -> Result<Self, LublinError> {
        let echo = || partalloc_topology::echo(text);
        let syntax = |reason: String| LublinError::Syntax {
            text: echo(),
            reason,
        };
        let mut parts = text.trim().split(':').map(str::trim);
        match parts.next() {
            Some("lublin") => {}
            other => {
                return Err(syntax(format!(
                    "the model's name {:?} is not lublin",
                    partalloc_topology::echo(other.unwrap_or_default())
                )));
            }
        }
        let mut spec = Self::default();
        let mut pairs = Vec::new();
        for (i, part) in parts.enumerate() {
            if part.is_empty() {
                return Err(syntax("an empty part between ':'".to_owned()));
            }
            match part.split_once('=') {
                Some((k, v)) => pairs.push((k.trim(), v.trim())),
                None if i == 0 => {
                    spec.kind = LublinKind::parse(part).ok_or_else(|| {
                        syntax(format!(
                            "unknown kind {:?} (mixed, batch, interactive or whole)",
                            partalloc_topology::echo(part)
                        ))
                    })?;
                }
                None => {
                    return Err(syntax(format!(
                        "{:?} is not key=value",
                        partalloc_topology::echo(part)
                    )));
                }
            }
        }
        let invalid = |e: LublinError| LublinError::Invalid {
            text: echo(),
            source: Box::new(e),
        };
        let number = |key: &str, value: &str| {
            value.parse::<f64>().map_err(|_| LublinError::NotANumber {
                text: echo(),
                key: partalloc_topology::echo(key),
                value: partalloc_topology::echo(value),
            })
        };
        let duplicate = |key: &str| LublinError::Duplicate {
            text: echo(),
            key: partalloc_topology::echo(key),
        };
        for (key, value) in pairs {
            match key {
                "nodes" => {
                    if spec.nodes.is_some() {
                        return Err(duplicate(key));
                    }
                    let n = value.parse::<u32>().map_err(|_| {
                        syntax(format!(
                            "nodes={:?} is not a whole number of nodes",
                            partalloc_topology::echo(value)
                        ))
                    })?;
                    if n == 0 {
                        return Err(invalid(LublinError::NoNodes));
                    }
                    spec.nodes = Some(n);
                }
                "start" => {
                    if spec.start.is_some() {
                        return Err(duplicate(key));
                    }
                    spec.start = Some(number(key, value)?);
                }
                _ => {
                    let (slot, class, name) = spec.slot(key, text)?;
                    let index = param_index(name).ok_or_else(|| LublinError::UnknownParameter {
                        text: echo(),
                        key: partalloc_topology::echo(key),
                    })?;
                    if spec.given[slot][index].is_some() {
                        return Err(duplicate(key));
                    }
                    let v = number(key, value)?;
                    PARAMS[index]
                        .check(v)
                        .map_err(|e| invalid(spec.in_class(class, e)))?;
                    spec.given[slot][index] = Some(v);
                }
            }
        }
        spec.check().map_err(invalid)?;
        Ok(spec)
    }
}

impl LublinSpec {
    /// `e`, naming `class` in the mixed model (where either class may be
    /// at fault).
    fn in_class(&self, class: LublinClass, e: LublinError) -> LublinError {
        match self.kind {
            LublinKind::Mixed => LublinError::Class {
                class,
                source: Box::new(e),
            },
            _ => e,
        }
    }

    /// Which class's values a key sets (slot 0: the first class, 1: the
    /// mixed model's interactive one), that class and the parameter's name.
    fn slot<'k>(
        &self,
        key: &'k str,
        text: &str,
    ) -> Result<(usize, LublinClass, &'k str), LublinError> {
        let wrong = |reason: String| LublinError::WrongClass {
            text: partalloc_topology::echo(text),
            reason,
        };
        let Some((prefix, name)) = key.split_once('.') else {
            return match *self.kind.classes() {
                [class] => Ok((0, class, key)),
                _ => {
                    let key = partalloc_topology::echo(key);
                    Err(wrong(format!(
                        "in the mixed model a parameter names its class: batch.{key} or interactive.{key}"
                    )))
                }
            };
        };
        let Some(class) = LublinClass::parse(prefix) else {
            return Err(LublinError::UnknownParameter {
                text: partalloc_topology::echo(text),
                key: partalloc_topology::echo(key),
            });
        };
        match self.kind.classes().iter().position(|&c| c == class) {
            Some(slot) => Ok((slot, class, name)),
            None => Err(wrong(format!(
                "{}: the {} model draws no {class} jobs",
                partalloc_topology::echo(key),
                self.kind
            ))),
        }
    }
}

impl fmt::Display for LublinSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lublin:{}", self.kind)?;
        if let Some(n) = self.nodes {
            write!(f, ":nodes={n}")?;
        }
        if let Some(h) = self.start {
            write!(f, ":start={h}")?;
        }
        let mixed = self.kind == LublinKind::Mixed;
        for (given, &class) in self.given.iter().zip(self.kind.classes()) {
            for (param, value) in PARAMS.iter().zip(given) {
                if let Some(v) = value {
                    if mixed {
                        write!(f, ":{class}.{}={v}", param.name)?;
                    } else {
                        write!(f, ":{}={v}", param.name)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for LublinSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::spec::as_text::serialize(self, s)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for LublinSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::spec::as_text::deserialize(d)
    }
}
