//! The one mechanism behind every registry of the workspace: entries found
//! by name, `name[key=value,…]` specs ([`StrategySpec`]), parameter
//! checking and the machine-family filter, generic over what an entry
//! builds (`dyn Allocator` here, `dyn Scheduler` in `partalloc-schedulers`)
//! and over the registry's error type.
//!
//! A registry supplies only its entries and its error type; the error
//! type takes the failures found here through `From`: [`UnknownName`],
//! [`UnsupportedTopology`] and [`SpecError`].

use core::fmt;

use partalloc_topology::{Topology, TopologyKind};
use thiserror::Error;

use crate::{SpecError, StrategySpec};

/// A parameter of a registered entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key, as written inside the brackets.
    pub name: &'static str,
    /// The default, as text.
    pub default: &'static str,
    /// What it means and which values it takes.
    pub doc: &'static str,
}

/// What a registry knows about one of its entries (an allocation strategy
/// or a scheduling policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategyInfo {
    /// The name it is built by.
    pub name: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where it comes from (paper and section).
    pub source: &'static str,
    /// Its parameters.
    pub params: &'static [ParamInfo],
    /// The machine families it accepts; the registry refuses the others
    /// before calling the constructor.
    pub topologies: &'static [TopologyKind],
}

/// Every machine family, for entries that run on any machine.
pub const ANY_TOPOLOGY: &[TopologyKind] = &[
    TopologyKind::Hypercube,
    TopologyKind::Mesh,
    TopologyKind::Torus,
    TopologyKind::Pod,
    TopologyKind::Blocks,
    TopologyKind::Tree,
    TopologyKind::Ring,
    TopologyKind::Torus3d,
];

/// Builds an entry's product for a machine from a parsed spec whose name
/// and parameter keys the registry has already checked.
pub type Constructor<T, E> = fn(&Topology, &StrategySpec) -> Result<Box<T>, E>;

/// A registered entry: its description and its constructor.
pub struct Entry<T: ?Sized + 'static, E: 'static> {
    /// Its description.
    pub info: StrategyInfo,
    /// Its constructor.
    pub build: Constructor<T, E>,
}

// Written by hand: a derive would require `T: Clone + Debug`, which
// `dyn Allocator` is not, though only a function pointer is held.
impl<T: ?Sized, E> Clone for Entry<T, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized, E> Copy for Entry<T, E> {}

impl<T: ?Sized, E> fmt::Debug for Entry<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry").field("info", &self.info).finish()
    }
}

/// No entry of the registry has the name given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {kind} {name:?}; known {plural}: {known}")]
pub struct UnknownName {
    /// What the registry holds (e.g. `allocation strategy`).
    pub kind: &'static str,
    /// The same in the plural (e.g. `strategies`).
    pub plural: &'static str,
    /// The name given.
    pub name: String,
    /// The registered names, comma separated.
    pub known: String,
}

/// The entry does not run on this family of machine.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{strategy} does not run on {topology}; it accepts: {accepted}")]
pub struct UnsupportedTopology {
    /// The entry's name.
    pub strategy: &'static str,
    /// The machine given.
    pub topology: String,
    /// The families it accepts, comma separated.
    pub accepted: String,
}

impl UnsupportedTopology {
    /// `strategy`, which accepts `accepted`, refuses `topology`.
    #[must_use]
    pub fn new(strategy: &'static str, topology: &Topology, accepted: &[TopologyKind]) -> Self {
        Self {
            strategy,
            topology: topology.to_string(),
            accepted: join(accepted.iter().map(ToString::to_string)),
        }
    }
}

fn join<S: AsRef<str>>(items: impl Iterator<Item = S>) -> String {
    let mut out = String::new();
    for (i, s) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(s.as_ref());
    }
    out
}

/// A fixed list of entries that build a `Box<T>` by name for a machine,
/// failing with `E`.
///
/// Invariants the registries' tests check: names are unique, every entry
/// has a summary, a source, at least one machine family and documented
/// parameters. [`Registry::build_spec`] calls a constructor only for a
/// machine family the entry lists and with parameter keys it declares, so
/// constructors check values, never names.
///
/// ```
/// use partalloc_allocators::registry::{Entry, Registry, StrategyInfo, UnknownName};
/// use partalloc_allocators::registry::UnsupportedTopology;
/// use partalloc_allocators::SpecError;
/// use partalloc_topology::{Topology, TopologyKind};
///
/// #[derive(Debug, thiserror::Error)]
/// enum GreetError {
///     #[error(transparent)]
///     Unknown(#[from] UnknownName),
///     #[error(transparent)]
///     Topology(#[from] UnsupportedTopology),
///     #[error(transparent)]
///     Spec(#[from] SpecError),
/// }
///
/// const GREETERS: Registry<str, GreetError> = Registry::new(
///     "greeter",
///     "greeters",
///     &[Entry {
///         info: StrategyInfo {
///             name: "hello",
///             summary: "says hello",
///             source: "folklore",
///             params: &[],
///             topologies: &[TopologyKind::Hypercube],
///         },
///         build: |_, _| Ok("hello".into()),
///     }],
/// );
///
/// let cube: Topology = "hypercube:3".parse()?;
/// assert_eq!(&*GREETERS.build("hello", &cube)?, "hello");
/// let e = GREETERS.build("bye", &cube).unwrap_err().to_string();
/// assert_eq!(e, "unknown greeter \"bye\"; known greeters: hello");
/// let mesh: Topology = "mesh:4x4".parse()?;
/// let e = GREETERS.build("hello", &mesh).unwrap_err().to_string();
/// assert_eq!(e, "hello does not run on mesh:4x4; it accepts: hypercube");
/// assert!(GREETERS.build("hello[loud=yes]", &cube).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Registry<T: ?Sized + 'static, E: 'static> {
    kind: &'static str,
    plural: &'static str,
    entries: &'static [Entry<T, E>],
}

impl<T: ?Sized, E> Clone for Registry<T, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized, E> Copy for Registry<T, E> {}

impl<T: ?Sized, E> fmt::Debug for Registry<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("kind", &self.kind)
            .field("names", &self.names().collect::<Vec<_>>())
            .finish()
    }
}

impl<T: ?Sized, E> Registry<T, E> {
    /// A registry of `entries`, in listing order; `kind` and `plural`
    /// name what it holds in messages (`"allocation strategy"`,
    /// `"strategies"`).
    #[must_use]
    pub const fn new(
        kind: &'static str,
        plural: &'static str,
        entries: &'static [Entry<T, E>],
    ) -> Self {
        Self {
            kind,
            plural,
            entries,
        }
    }

    /// The entries, in listing order.
    #[must_use]
    pub fn entries(&self) -> &'static [Entry<T, E>] {
        self.entries
    }

    /// The entries' descriptions, in listing order.
    pub fn info(&self) -> impl Iterator<Item = &'static StrategyInfo> + use<T, E> {
        self.entries.iter().map(|e| &e.info)
    }

    /// The entries' names, in listing order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + use<T, E> {
        self.entries.iter().map(|e| e.info.name)
    }

    /// The entry named `name`, if any.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<&'static Entry<T, E>> {
        self.entries.iter().find(|e| e.info.name == name)
    }

    /// The entry named `name`, or an error listing the known names.
    ///
    /// # Errors
    /// [`UnknownName`] if no entry has that name.
    pub fn lookup(&self, name: &str) -> Result<&'static Entry<T, E>, UnknownName> {
        self.find(name).ok_or_else(|| UnknownName {
            kind: self.kind,
            plural: self.plural,
            name: partalloc_topology::echo(name),
            known: join(self.names()),
        })
    }
}

impl<T: ?Sized, E> Registry<T, E>
where
    E: From<UnknownName> + From<UnsupportedTopology> + From<SpecError>,
{
    /// Builds the entry described by `spec` (e.g. `partner-ext[delta=2]`)
    /// for `topology`.
    ///
    /// # Errors
    /// A malformed spec, an unknown name (the message lists the known
    /// ones), an unknown parameter (likewise), a machine family the entry
    /// does not accept, or whatever its constructor refuses.
    pub fn build(&self, spec: &str, topology: &Topology) -> Result<Box<T>, E> {
        self.build_spec(&spec.parse()?, topology)
    }

    /// As [`Registry::build`], from a parsed spec.
    ///
    /// # Errors
    /// As [`Registry::build`].
    pub fn build_spec(&self, spec: &StrategySpec, topology: &Topology) -> Result<Box<T>, E> {
        let entry = self.lookup(spec.name())?;
        let info = &entry.info;
        if !info.topologies.contains(&topology.kind()) {
            return Err(UnsupportedTopology::new(info.name, topology, info.topologies).into());
        }
        let known: Vec<&str> = info.params.iter().map(|p| p.name).collect();
        spec.check_known(&known)?;
        (entry.build)(topology, spec)
    }
}
