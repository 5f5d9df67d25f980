//! `Topology`, `Allocator`, `Grant` and the registries' listings.

use std::sync::{Mutex, MutexGuard, PoisonError};

use partalloc_allocators::{
    AllocError, Allocator as RustAllocator, Grant as RustGrant, Partition, Request,
};
use partalloc_topology::{NodeId, NodeSet, Topology as RustTopology};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::{
    AllocationError, FaultError, ReleaseError, UnsupportedRequestError, guard, pythonic,
    value_error,
};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Topology>()?;
    m.add_class::<Allocator>()?;
    m.add_class::<Grant>()?;
    m.add_function(wrap_pyfunction!(strategies, m)?)?;
    m.add_function(wrap_pyfunction!(machine_families, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    Ok(())
}

/// Parses a machine description with the command line's message.
pub(crate) fn parse_topology(text: &str) -> PyResult<RustTopology> {
    use partalloc_experiment::{MachineSource, SourceError};
    // The library's one reader of machines: every text form and every file
    // form (Slurm, Kueue and pod files), with the size bound of a run.
    let max = partalloc_experiment::machine::MAX_MACHINE_NODES;
    MachineSource::parse(text)
        .load("partalloc", max)
        .map_err(|e| {
            let e = match e {
                e @ SourceError::File(partalloc_topology::files::FileError::Io { .. }) => {
                    return pyo3::exceptions::PyOSError::new_err(e.to_string());
                }
                SourceError::Description { reason, .. } => reason,
                e => return PyValueError::new_err(format!("topology: {e}")),
            };
            // The library fits the reason to one short line (the forms, or a
            // pointer to them: `Topology`'s docstring lists them).
            PyValueError::new_err(format!("topology: {e}"))
        })
}

/// A machine: `Topology("torus:8x8x8")`. The forms: `hypercube:N`,
/// `mesh:AxB[xC…]`, `torus:AxB[xC…]`, `kary:K^N`, `kary-torus:K^N`,
/// `pod:PRESET[:AxB…]` and `racks:[Bx]RxNxGgpu`; and machines read from
/// files: `blocks:FILE`, `tree:FILE`, `ring:FILE`, `torus3d:FILE` (a Slurm
/// topology.conf or topology.yaml, `#NAME` for one of a YAML file's
/// topologies), `blocks:FILE,4gpu`, `kueue:TOPOLOGY,NODES` (a Kueue
/// Topology and a node list) and a pod's `.toml` file.
#[pyclass(module = "partalloc._native", frozen, eq, hash)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Topology {
    pub(crate) inner: RustTopology,
}

/// The sides of the machine: a hypercube of dimension n is 2 × … × 2.
fn sides_of(t: &RustTopology) -> Vec<u32> {
    match (t.as_hypercube(), t.as_grid()) {
        (Some(h), _) => vec![2; h.dim() as usize],
        (_, Some(g)) => g.sides().as_slice().to_vec(),
        _ => Vec::new(),
    }
}

impl Topology {
    fn check(&self, node: u64) -> PyResult<NodeId> {
        let n = self.inner.num_nodes() as u64;
        if node >= n {
            return Err(PyValueError::new_err(format!(
                "node {node} is outside the machine {} (nodes 0..{n})",
                self.inner
            )));
        }
        Ok(node as NodeId)
    }
}

#[pymethods]
impl Topology {
    #[new]
    fn new(spec: &str) -> PyResult<Self> {
        Ok(Self {
            inner: parse_topology(spec)?,
        })
    }

    /// `hypercube`, `mesh` or `torus`.
    #[getter]
    fn kind(&self) -> String {
        self.inner.kind().to_string()
    }

    /// The number of nodes.
    #[getter]
    fn num_nodes(&self) -> usize {
        self.inner.num_nodes()
    }

    /// The side in each dimension (2 in each of a hypercube's).
    #[getter]
    fn shape(&self) -> Vec<u32> {
        sides_of(&self.inner)
    }

    /// The largest distance between two nodes.
    #[getter]
    fn diameter(&self) -> u32 {
        self.inner.diameter()
    }

    /// The number of links.
    #[getter]
    fn num_links(&self) -> u64 {
        self.inner.num_links()
    }

    /// The coordinates of `node` (dimension 0 first; a hypercube node's bits).
    fn coords(&self, node: u64) -> PyResult<Vec<u32>> {
        let id = self.check(node)?;
        match (self.inner.as_hypercube(), self.inner.as_grid()) {
            (Some(h), _) => Ok((0..h.dim()).map(|i| (id >> i) & 1).collect()),
            (_, Some(g)) => g
                .coords_of(id)
                .map(|c| c.as_slice().to_vec())
                .map_err(value_error),
            _ => Err(PyValueError::new_err("unknown machine family")),
        }
    }

    /// The node at these coordinates.
    fn node(&self, coords: Vec<u32>) -> PyResult<u64> {
        match (self.inner.as_hypercube(), self.inner.as_grid()) {
            (Some(h), _) => {
                if coords.len() != h.dim() as usize || coords.iter().any(|&b| b > 1) {
                    return Err(PyValueError::new_err(format!(
                        "coordinates {coords:?} are not {} bits of the machine {}",
                        h.dim(),
                        self.inner
                    )));
                }
                Ok(coords
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| u64::from(b) << i)
                    .sum())
            }
            (_, Some(g)) => g.id_of(&coords).map(|n| n as u64).map_err(value_error),
            _ => Err(PyValueError::new_err("unknown machine family")),
        }
    }

    /// The number of hops between nodes `a` and `b`.
    fn distance(&self, a: u64, b: u64) -> PyResult<u32> {
        let (a, b) = (self.check(a)?, self.check(b)?);
        self.inner.distance(a, b).map_err(value_error)
    }

    /// The neighbours of `node`.
    fn neighbours(&self, node: u64) -> PyResult<Vec<u64>> {
        let id = self.check(node)?;
        self.inner
            .neighbours(id)
            .map(|v| v.into_iter().map(|n| n as u64).collect())
            .map_err(value_error)
    }

    fn __len__(&self) -> usize {
        self.inner.num_nodes()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Topology({:?})", self.inner.to_string())
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(PyObject, (String,))> {
        let cls = py.get_type::<Self>().into_any().unbind();
        Ok((cls, (self.inner.to_string(),)))
    }
}

/// A topology given as a `Topology` or as its text.
pub(crate) fn topology_arg(obj: &Bound<'_, PyAny>) -> PyResult<RustTopology> {
    if let Ok(t) = obj.downcast::<Topology>() {
        return Ok(t.get().inner.clone());
    }
    let text: String = obj.extract().map_err(|_| {
        PyValueError::new_err(
            "topology must be a partalloc.Topology or a text such as \"mesh:32x32\"",
        )
    })?;
    parse_topology(&text)
}

/// A partition granted by an `Allocator`.
#[pyclass(module = "partalloc._native", frozen)]
#[derive(Debug)]
pub(crate) struct Grant {
    pub(crate) inner: RustGrant,
    pub(crate) nodes: Vec<u32>,
    owner: usize,
}

#[pymethods]
impl Grant {
    /// The granted node ids in increasing order, as little-endian u32 bytes.
    fn _node_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let bytes: Vec<u8> = self.nodes.iter().flat_map(|n| n.to_le_bytes()).collect();
        PyBytes::new(py, &bytes)
    }

    /// Nodes asked for.
    #[getter]
    fn requested(&self) -> u64 {
        self.inner.requested_nodes()
    }

    /// Nodes granted (more than asked for when the strategy rounds up).
    #[getter]
    fn granted(&self) -> u64 {
        self.inner.granted_nodes()
    }

    /// `subcube`, `box`, `boxes` or `nodes`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner.partition() {
            Partition::Subcube(_) => "subcube",
            Partition::Box(_) => "box",
            Partition::Boxes(_) => "boxes",
            _ => "nodes",
        }
    }

    /// The subcube's ternary address (most significant dimension first), or
    /// None.
    #[getter]
    fn subcube(&self) -> Option<String> {
        match self.inner.partition() {
            Partition::Subcube(s) => Some(s.to_string()),
            _ => None,
        }
    }

    /// `(base, extents)` of a box grant, or None.
    #[getter(r#box)]
    fn box_(&self) -> Option<(Vec<u32>, Vec<u32>)> {
        match self.inner.partition() {
            Partition::Box(b) => Some((
                b.base().as_slice().to_vec(),
                b.extents().as_slice().to_vec(),
            )),
            _ => None,
        }
    }

    /// The boxes of a multi-box grant, or None.
    #[getter]
    fn boxes(&self) -> Option<Vec<(Vec<u32>, Vec<u32>)>> {
        match self.inner.partition() {
            Partition::Boxes(bs) => Some(
                bs.iter()
                    .map(|b| {
                        (
                            b.base().as_slice().to_vec(),
                            b.extents().as_slice().to_vec(),
                        )
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    fn __len__(&self) -> usize {
        self.nodes.len()
    }

    fn __str__(&self) -> String {
        self.inner.partition().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "Grant({} {}, {} of {} nodes)",
            self.kind(),
            self.inner.partition(),
            self.inner.requested_nodes(),
            self.inner.granted_nodes()
        )
    }
}

/// An allocation strategy on a machine: `Allocator("fsl", "mesh:32x32")`.
#[pyclass(module = "partalloc._native")]
#[derive(Debug)]
pub(crate) struct Allocator {
    // A Python object may be shared between threads; the lock makes the
    // strategy, which is only `Send`, safe to share.
    inner: Mutex<Box<dyn RustAllocator>>,
    topology: RustTopology,
    id: usize,
}

fn node_vec(p: &Partition, t: &RustTopology) -> PyResult<Vec<u32>> {
    let mut v = Vec::with_capacity(usize::try_from(p.len()).unwrap_or(0));
    p.for_each_node(t, |n| v.push(n)).map_err(value_error)?;
    v.sort_unstable();
    Ok(v)
}

fn set_bytes<'py>(py: Python<'py>, set: &NodeSet, n: usize) -> Bound<'py, PyBytes> {
    let mut b = vec![0u8; n];
    for id in set.iter() {
        if let Some(x) = b.get_mut(id as usize) {
            *x = 1;
        }
    }
    PyBytes::new(py, &b)
}

/// The request `allocate` and `can_allocate` are given.
fn request_of(
    shape: Option<Vec<u32>>,
    nodes: Option<u32>,
    subcube: Option<u32>,
    rotate: bool,
) -> PyResult<Request> {
    match (shape, nodes, subcube) {
        (Some(s), None, None) => {
            let r = Request::boxed(&s)
                .map_err(|e| PyValueError::new_err(format!("shape {s:?}: {e}")))?;
            Ok(if rotate { r.any_orientation() } else { r })
        }
        (None, Some(n), None) => Ok(Request::nodes(n)),
        (None, None, Some(d)) => Ok(Request::subcube(d)),
        _ => Err(PyValueError::new_err(
            "give exactly one of shape=(a, b, …), nodes=count or subcube=dimension",
        )),
    }
}

/// An allocator's refusal other than "no room now", as its exception.
fn refusal(e: AllocError) -> PyErr {
    match e {
        e @ AllocError::Unsupported { .. } => {
            UnsupportedRequestError::new_err(pythonic(&e.to_string()))
        }
        e => AllocationError::new_err(pythonic(&e.to_string())),
    }
}

impl Allocator {
    fn a(&self) -> MutexGuard<'_, Box<dyn RustAllocator>> {
        // A panic inside a call is caught by `guard`; the strategy's state
        // is still consistent (every refused call leaves it unchanged).
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl Allocator {
    #[new]
    fn new(strategy: &str, topology: &Bound<'_, PyAny>) -> PyResult<Self> {
        let topology = topology_arg(topology)?;
        let inner = guard(|| {
            partalloc_allocators::registry::build(strategy, &topology).map_err(value_error)
        })?;
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
        Ok(Self {
            inner: Mutex::new(inner),
            topology,
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// The strategy's name with its parameters.
    #[getter]
    fn name(&self) -> String {
        self.a().name()
    }

    /// The machine.
    #[getter]
    fn topology(&self) -> Topology {
        Topology {
            inner: self.topology.clone(),
        }
    }

    /// Nodes neither busy nor faulty.
    #[getter]
    fn free_nodes(&self) -> usize {
        self.a().free_nodes()
    }

    /// Nodes of the machine.
    #[getter]
    fn total_nodes(&self) -> usize {
        self.a().total_nodes()
    }

    /// Grants not yet released.
    #[getter]
    fn live_grants(&self) -> usize {
        self.a().live_grants()
    }

    /// Allocates exactly one of `shape` (box sides), `nodes` (a count) or
    /// `subcube` (a dimension); None when the machine has no room now.
    #[pyo3(signature = (*, shape=None, nodes=None, subcube=None, rotate=false))]
    fn allocate(
        &mut self,
        shape: Option<Vec<u32>>,
        nodes: Option<u32>,
        subcube: Option<u32>,
        rotate: bool,
    ) -> PyResult<Option<Grant>> {
        let request = request_of(shape, nodes, subcube, rotate)?;
        guard(|| match self.a().allocate(&request) {
            Ok(g) => {
                let nodes = node_vec(g.partition(), &self.topology)?;
                Ok(Some(Grant {
                    inner: g,
                    nodes,
                    owner: self.id,
                }))
            }
            Err(AllocError::NoRoom { .. }) => Ok(None),
            Err(e) => Err(refusal(e)),
        })
    }

    /// Whether `allocate` with the same arguments would grant now, without
    /// changing the machine. Strategies that answer from their own state
    /// do so; one that cannot is probed by allocating and releasing at
    /// once (its release restores its state).
    #[pyo3(signature = (*, shape=None, nodes=None, subcube=None, rotate=false))]
    fn can_allocate(
        &mut self,
        shape: Option<Vec<u32>>,
        nodes: Option<u32>,
        subcube: Option<u32>,
        rotate: bool,
    ) -> PyResult<bool> {
        let request = request_of(shape, nodes, subcube, rotate)?;
        guard(|| {
            let mut a = self.a();
            match a.can_allocate(&request) {
                Ok(answer) => Ok(answer),
                Err(AllocError::ProbeUnsupported { .. }) => match a.allocate(&request) {
                    Ok(g) => {
                        a.release(&g)
                            .map_err(|e| ReleaseError::new_err(e.to_string()))?;
                        Ok(true)
                    }
                    Err(AllocError::NoRoom { .. }) => Ok(false),
                    Err(e) => Err(refusal(e)),
                },
                Err(e) => Err(refusal(e)),
            }
        })
    }

    /// Returns a grant's nodes to the machine.
    fn release(&mut self, grant: &Bound<'_, Grant>) -> PyResult<()> {
        let g = grant.get();
        if g.owner != self.id {
            return Err(ReleaseError::new_err(
                "this grant was issued by another allocator",
            ));
        }
        guard(|| {
            self.a()
                .release(&g.inner)
                .map_err(|e| ReleaseError::new_err(e.to_string()))
        })
    }

    /// Whether `node` is neither busy nor faulty.
    fn is_available(&self, node: u64) -> PyResult<bool> {
        let n = self.topology.num_nodes() as u64;
        if node >= n {
            return Err(PyValueError::new_err(format!(
                "node {node} is outside the machine {} (nodes 0..{n})",
                self.topology
            )));
        }
        Ok(self.a().is_available(node as NodeId))
    }

    /// Takes a free node out of service.
    fn mark_faulty(&mut self, node: u64) -> PyResult<()> {
        let id = NodeId::try_from(node).map_err(value_error)?;
        guard(|| {
            self.a()
                .mark_faulty(id)
                .map_err(|e| FaultError::new_err(e.to_string()))
        })
    }

    /// Returns a faulty node to service.
    fn repair(&mut self, node: u64) -> PyResult<()> {
        let id = NodeId::try_from(node).map_err(value_error)?;
        guard(|| {
            self.a()
                .repair(id)
                .map_err(|e| FaultError::new_err(e.to_string()))
        })
    }

    /// One byte per node, 1 where busy.
    fn _busy_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        set_bytes(py, &self.a().busy_nodes(), self.topology.num_nodes())
    }

    /// One byte per node, 1 where faulty.
    fn _faulty_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        set_bytes(py, &self.a().faulty_nodes(), self.topology.num_nodes())
    }

    fn __repr__(&self) -> String {
        format!(
            "Allocator({:?}, {:?}; {} of {} nodes free)",
            self.a().name(),
            self.topology.to_string(),
            self.a().free_nodes(),
            self.a().total_nodes()
        )
    }
}

fn listing<'py>(
    py: Python<'py>,
    infos: impl Iterator<Item = &'static partalloc_allocators::registry::StrategyInfo>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for info in infos {
        let d = PyDict::new(py);
        d.set_item("name", info.name)?;
        d.set_item("summary", info.summary)?;
        d.set_item("source", info.source)?;
        let params = PyList::empty(py);
        for p in info.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("default", p.default)?;
            pd.set_item("doc", p.doc)?;
            params.append(pd)?;
        }
        d.set_item("params", params)?;
        let kinds: Vec<String> = info.topologies.iter().map(ToString::to_string).collect();
        d.set_item("topologies", kinds)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The allocation strategies, with their parameters, sources and machines.
#[pyfunction]
fn strategies(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    listing(py, partalloc_allocators::registry::strategies())
}

/// Every machine family: its name, its `topology=` forms, an example
/// machine (`{0}`, `{1}` standing for its `files`, relative to the
/// repository), a strategy that runs there, the measures a run takes and
/// a workload setting every listed strategy places (`None`: traces only).
#[pyfunction]
fn machine_families(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for f in partalloc_experiment::forms::FAMILIES {
        let d = PyDict::new(py);
        d.set_item("kind", f.kind.to_string())?;
        d.set_item("forms", f.help)?;
        d.set_item("example", f.example)?;
        d.set_item("files", f.files.to_vec())?;
        d.set_item("strategy", f.strategy)?;
        d.set_item("measured", f.measured)?;
        d.set_item("workload", f.workload)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The scheduling policies, with their parameters and sources.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    listing(py, partalloc_schedulers::registry::policies())
}
