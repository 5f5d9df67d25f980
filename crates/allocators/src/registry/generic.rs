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
use std::borrow::Cow;
use std::sync::Arc;

use partalloc_topology::Topology;
use thiserror::Error;

use crate::entry::Entry;
use crate::error::{UnknownName, UnsupportedTopology, join};
use crate::{SpecError, StrategySpec};

/// Why an entry could not be added to a registry. The registry is
/// unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// Another entry already has this name.
    #[error("{kind} {name:?} is already registered; give yours another name")]
    Duplicate {
        /// What the registry holds (e.g. `allocation strategy`).
        kind: &'static str,
        /// The name given.
        name: &'static str,
    },
    /// The name could not be written in a spec (`name[key=value,…]`).
    #[error("{kind} name {name:?} cannot be used: {reason}")]
    InvalidName {
        /// What the registry holds.
        kind: &'static str,
        /// The name given.
        name: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The entry lists no machine family, so it could never be built.
    #[error("{kind} {name:?} lists no machine family; name at least one in its topologies")]
    NoMachineFamily {
        /// What the registry holds.
        kind: &'static str,
        /// The name given.
        name: &'static str,
    },
}

/// A list of entries that build a `Box<T>` by name for a machine, failing
/// with `E`: a value that starts from a fixed list (the built-ins) and
/// takes more entries with [`Registry::register`].
///
/// Invariants: names are unique and each parses as a spec's name; the
/// built-in lists' tests also check that every entry has a summary, a
/// source, at least one machine family and documented parameters.
/// [`Registry::build_spec`] calls a constructor only for a machine family
/// the entry lists and with parameter keys it declares, so constructors
/// check values, never names.
///
/// ```
/// use partalloc_allocators::registry::{Entry, Registry, StrategyInfo, UnknownName};
/// use partalloc_allocators::registry::UnsupportedTopology;
/// use partalloc_allocators::{SpecError, StrategySpec};
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
/// type Make = fn(&Topology, &StrategySpec) -> Result<Box<str>, GreetError>;
///
/// const fn greeter(name: &'static str, build: Make) -> Entry<str, GreetError> {
///     let info = StrategyInfo {
///         name,
///         summary: "says something",
///         source: "folklore",
///         params: &[],
///         topologies: &[TopologyKind::Hypercube],
///     };
///     Entry { info, build }
/// }
///
/// const GREETERS: Registry<str, GreetError> =
///     Registry::new("greeter", "greeters", &[greeter("hello", |_, _| Ok("hello".into()))]);
///
/// let cube: Topology = "hypercube:3".parse()?;
/// assert_eq!(&*GREETERS.build("hello", &cube)?, "hello");
/// let e = GREETERS.build("bye", &cube).unwrap_err().to_string();
/// assert_eq!(e, "unknown greeter \"bye\"; known greeters: hello");
/// let mesh: Topology = "mesh:4x4".parse()?;
/// let e = GREETERS.build("hello", &mesh).unwrap_err().to_string();
/// assert_eq!(e, "hello does not run on mesh:4x4; it accepts: hypercube");
/// assert!(GREETERS.build("hello[loud=yes]", &cube).is_err());
///
/// // A registry is a value: extend a copy of the built-ins.
/// let mut mine = GREETERS.clone();
/// mine.register(greeter("good-day", |_, _| Ok("good day".into())))?;
/// assert_eq!(&*mine.build("good-day", &cube)?, "good day");
/// let e = mine.register(greeter("hello", |_, _| Ok("hi".into()))).unwrap_err().to_string();
/// assert_eq!(e, "greeter \"hello\" is already registered; give yours another name");
/// assert_eq!(mine.names().collect::<Vec<_>>(), ["hello", "good-day"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Registry<T: ?Sized + 'static, E: 'static> {
    kind: &'static str,
    plural: &'static str,
    entries: Cow<'static, [Entry<T, E>]>,
}

impl<T: ?Sized, E> Clone for Registry<T, E> {
    fn clone(&self) -> Self {
        Self {
            kind: self.kind,
            plural: self.plural,
            entries: self.entries.clone(),
        }
    }
}

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
            entries: Cow::Borrowed(entries),
        }
    }

    /// Adds `entry` after the others.
    ///
    /// # Errors
    /// [`RegisterError`] if another entry has its name, if the name could
    /// not be written in a spec, or if it lists no machine family; the
    /// registry is then unchanged.
    pub fn register(&mut self, entry: Entry<T, E>) -> Result<(), RegisterError> {
        let (kind, name) = (self.kind, entry.info.name);
        if self.find(name).is_some() {
            return Err(RegisterError::Duplicate { kind, name });
        }
        match name.parse::<StrategySpec>() {
            Ok(spec) if spec.name() == name && spec.params().is_empty() => {}
            _ => {
                return Err(RegisterError::InvalidName {
                    kind,
                    name,
                    reason: "a name is not empty and has no spaces, '[', ']', '=' or ','",
                });
            }
        }
        if entry.info.topologies.is_empty() {
            return Err(RegisterError::NoMachineFamily { kind, name });
        }
        self.entries.to_mut().push(entry);
        Ok(())
    }

    /// The entries, in listing order.
    #[must_use]
    pub fn entries(&self) -> &[Entry<T, E>] {
        &self.entries
    }

    /// The entries' descriptions, in listing order.
    pub fn info(&self) -> impl Iterator<Item = &crate::entry::StrategyInfo> {
        self.entries.iter().map(|e| &e.info)
    }

    /// The entries' names, in listing order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.entries.iter().map(|e| e.info.name)
    }

    /// The entry named `name`, if any.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<&Entry<T, E>> {
        self.entries.iter().find(|e| e.info.name == name)
    }

    /// The entry named `name`, or an error listing the known names.
    ///
    /// # Errors
    /// [`UnknownName`] if no entry has that name.
    pub fn lookup(&self, name: &str) -> Result<&Entry<T, E>, UnknownName> {
        self.find(name).ok_or_else(|| UnknownName {
            kind: self.kind,
            plural: self.plural,
            name: partalloc_topology::echo(name),
            known: join(self.names()),
            closest: crate::error::closest_name(name, self.names()).map(str::to_owned),
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
        build_entry(self.lookup(spec.name())?, spec, topology)
    }

    /// Parses `text` once into a [`Spec`] that builds the entry it names
    /// for any machine, as often as needed (e.g. once per replication).
    ///
    /// Only the form and the name are checked here; the machine family,
    /// the parameter keys and their values are checked by
    /// [`Spec::build`], in that order, as [`Registry::build`] does.
    ///
    /// # Errors
    /// A malformed spec or an unknown name.
    pub fn spec(&self, text: &str) -> Result<Spec<T, E>, E> {
        self.resolve(text.parse()?)
    }

    /// As [`Registry::spec`], from a parsed spec.
    ///
    /// # Errors
    /// An unknown name.
    pub fn resolve(&self, spec: StrategySpec) -> Result<Spec<T, E>, E> {
        let entry = *self.lookup(spec.name())?;
        Ok(Spec {
            spec,
            make: Make::Entry(entry),
        })
    }
}

/// Checks the machine family and the parameter keys, then calls the
/// constructor.
fn build_entry<T: ?Sized, E>(
    entry: &Entry<T, E>,
    spec: &StrategySpec,
    topology: &Topology,
) -> Result<Box<T>, E>
where
    E: From<UnsupportedTopology> + From<SpecError>,
{
    let info = &entry.info;
    if !info.topologies.contains(&topology.kind()) {
        return Err(UnsupportedTopology::new(info.name, topology, info.topologies).into());
    }
    let known: Vec<&str> = info.params.iter().map(|p| p.name).collect();
    spec.check_known(&known)?;
    (entry.build)(topology, spec)
}

/// Builds a fresh `Box<T>` for a machine.
type MakeFn<T, E> = dyn Fn(&Topology) -> Result<Box<T>, E> + Send + Sync;

enum Make<T: ?Sized + 'static, E: 'static> {
    Entry(Entry<T, E>),
    Fn(Arc<MakeFn<T, E>>),
}

/// A strategy chosen once: its parsed spec and how to build it. Parse the
/// text at the edge ([`Registry::spec`]), pass the `Spec` down, and
/// [`build`](Spec::build) a fresh instance wherever one is needed, without
/// parsing or looking the name up again. It prints as its spec.
///
/// ```
/// use partalloc_allocators::registry;
/// let spec = registry::ALLOCATORS.spec("partner-ext[delta=2]")?;
/// assert_eq!(spec.to_string(), "partner-ext[delta=2]");
/// assert_eq!((spec.name(), spec.get("delta")), ("partner-ext", Some("2")));
/// let machine = "hypercube:4".parse()?;
/// let (a, b) = (spec.build(&machine)?, spec.build(&machine)?);
/// assert_eq!((a.name(), b.free_nodes()), ("partner-ext[delta=2]".to_owned(), 16));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Spec<T: ?Sized + 'static, E: 'static> {
    spec: StrategySpec,
    make: Make<T, E>,
}

impl<T: ?Sized, E> Clone for Spec<T, E> {
    fn clone(&self) -> Self {
        Self {
            spec: self.spec.clone(),
            make: match &self.make {
                Make::Entry(e) => Make::Entry(*e),
                Make::Fn(f) => Make::Fn(Arc::clone(f)),
            },
        }
    }
}

impl<T: ?Sized, E> fmt::Debug for Spec<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Spec").field(&self.spec.to_string()).finish()
    }
}

/// Printed as the spec it was parsed from (spaces trimmed).
impl<T: ?Sized, E> fmt::Display for Spec<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.spec, f)
    }
}

impl<T: ?Sized, E> Spec<T, E> {
    /// A spec for something outside any registry (e.g. a strategy written
    /// in another language): `make` builds a fresh instance for a machine
    /// and checks whatever it needs. `spec` names it in reports.
    #[must_use]
    pub fn from_fn(
        spec: StrategySpec,
        make: impl Fn(&Topology) -> Result<Box<T>, E> + Send + Sync + 'static,
    ) -> Self {
        Self {
            spec,
            make: Make::Fn(Arc::new(make)),
        }
    }

    /// The parsed spec: the name and the parameters as given.
    #[must_use]
    pub fn strategy_spec(&self) -> &StrategySpec {
        &self.spec
    }

    /// The name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.spec.name()
    }

    /// The value of parameter `key` as given, if it was.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.spec.get(key)
    }

    /// The registry entry it builds, if it came from a registry.
    #[must_use]
    pub fn entry(&self) -> Option<&Entry<T, E>> {
        match &self.make {
            Make::Entry(e) => Some(e),
            Make::Fn(_) => None,
        }
    }
}

impl<T: ?Sized, E> Spec<T, E>
where
    E: From<UnsupportedTopology> + From<SpecError>,
{
    /// A fresh instance for `topology`.
    ///
    /// # Errors
    /// For a registry entry, as [`Registry::build`] past the name: a
    /// machine family the entry does not accept, an unknown parameter, or
    /// whatever its constructor refuses. Otherwise what `make` returns.
    pub fn build(&self, topology: &Topology) -> Result<Box<T>, E> {
        match &self.make {
            Make::Entry(e) => build_entry(e, &self.spec, topology),
            Make::Fn(f) => f(topology),
        }
    }
}
