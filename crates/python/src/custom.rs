//! Strategies written in Python: an allocator class (`allocate`,
//! `release`) and a scheduling policy class (`choose`), wrapped as the
//! Rust [`Allocator`] and [`Scheduler`] so that `simulate`, the Gymnasium
//! environment and the conformance checks run them beside the built-in
//! ones, and the typed specs ([`AllocatorSpec`], [`PolicySpec`]) that build
//! a fresh instance per run from a class or a registry name.
//!
//! The Rust side keeps the allocator's bookkeeping (busy nodes, live
//! grants) and checks every answer: a node out of range, busy or given
//! twice, or fewer nodes than asked, is a `ValueError`; an answer of the
//! wrong type a `TypeError`. An exception raised inside a callback, or one
//! of those errors, is kept in the run's [`Callbacks`] and raised as
//! itself when the run stops.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use partalloc_allocators::conformance::{Step, check_spec};
use partalloc_allocators::registry::{ALLOCATORS, AllocatorSpec, Spec};
use partalloc_allocators::{
    AllocError, Allocator, BuildError, Grant, GrantLedger, Occupancy, Partition, ReleaseError,
    Request, StrategySpec,
};
use partalloc_schedulers::registry::{POLICIES, PolicySpec};
use partalloc_schedulers::{
    Attempt, PolicyBuildError, RequestMapping, ScheduleError, Scheduler, Started, start_queued,
};
use partalloc_topology::{NodeId, NodeSet, Topology as RustTopology};
use partalloc_workload::{Job, ShapeMapping};
use pyo3::create_exception;
use pyo3::exceptions::{PyAssertionError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyType};

use crate::alloc::{Topology, topology_arg};
use crate::errors::{guard, value_error};

create_exception!(
    partalloc,
    ConformanceError,
    PyAssertionError,
    "An allocator broke the allocation contract in partalloc.check_allocator."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ConformanceError", m.py().get_type::<ConformanceError>())?;
    m.add_function(wrap_pyfunction!(check_allocator, m)?)?;
    Ok(())
}

/// The first error a Python callback raised (or caused) during a run,
/// shared by every instance the run built; raised as itself when the run
/// stops.
#[derive(Debug, Clone, Default)]
pub(crate) struct Callbacks(Arc<Mutex<Option<PyErr>>>);

impl Callbacks {
    /// Keeps `e` unless an earlier error is kept.
    fn record(&self, e: PyErr) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    /// The kept error, if any, else `e`: what to raise when a run failed.
    pub(crate) fn or(&self, e: PyErr) -> PyErr {
        self.take().unwrap_or(e)
    }

    /// The kept error, if any.
    pub(crate) fn take(&self) -> Option<PyErr> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// A class's name for reports: its `name` attribute if it is a string,
/// else the class name.
fn class_name(cls: &Bound<'_, PyType>) -> PyResult<String> {
    if let Ok(name) = cls.getattr("name").and_then(|n| n.extract::<String>()) {
        return Ok(name);
    }
    cls.getattr("__name__")?.extract()
}

/// The class in `obj`, with every method in `methods`, or a `TypeError`
/// saying what is missing.
fn class_with<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    methods: &[&str],
) -> PyResult<Bound<'py, PyType>> {
    let cls = obj.downcast::<PyType>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: give a registry name (str) or a class with {}; a class, not an instance, as one instance is made per run",
            methods.join(" and ")
        ))
    })?;
    for m in methods {
        let ok = cls.getattr(*m).is_ok_and(|f| f.is_callable());
        if !ok {
            return Err(PyTypeError::new_err(format!(
                "{what} class {} has no method {m}(); it needs {}",
                class_name(cls)?,
                methods.join(" and ")
            )));
        }
    }
    Ok(cls.clone())
}

/// Makes an instance of `cls` for `topology`, keeping a raised error.
fn instantiate(
    cls: &Py<PyType>,
    topology: &RustTopology,
    callbacks: &Callbacks,
) -> Result<Py<PyAny>, String> {
    Python::with_gil(|py| -> PyResult<Py<PyAny>> {
        let machine = Bound::new(
            py,
            Topology {
                inner: topology.clone(),
            },
        )?;
        Ok(cls.bind(py).call1((machine,))?.unbind())
    })
    .map_err(|e: PyErr| {
        let text = e.to_string();
        callbacks.record(e);
        text
    })
}

/// The allocation strategy named by `obj`: a registry spec (checked by
/// building it once for `topology`, as the command line does) or a
/// Python class with `allocate` and `release`.
pub(crate) fn allocator_spec(
    obj: &Bound<'_, PyAny>,
    topology: &RustTopology,
    callbacks: &Callbacks,
) -> PyResult<AllocatorSpec> {
    if let Ok(text) = obj.extract::<String>() {
        let spec = ALLOCATORS.spec(&text).map_err(value_error)?;
        guard(|| spec.build(topology).map(drop).map_err(value_error))?;
        return Ok(spec);
    }
    let cls = class_with(obj, "allocator", &["allocate", "release"])?;
    let name = class_name(&cls)?;
    let (cls, callbacks) = (cls.unbind(), callbacks.clone());
    let spec = StrategySpec::bare(&name);
    Ok(Spec::from_fn(
        spec,
        move |topology: &RustTopology| -> Result<Box<dyn Allocator>, BuildError> {
            let object = instantiate(&cls, topology, &callbacks).map_err(|reason| {
                BuildError::Constructor {
                    strategy: name.clone(),
                    reason,
                }
            })?;
            Ok(Box::new(PyAllocator {
                name: name.clone(),
                topology: topology.clone(),
                object,
                occupancy: Occupancy::new(topology.num_nodes()),
                ledger: GrantLedger::new(),
                callbacks: callbacks.clone(),
            }))
        },
    ))
}

/// The scheduling policy named by `obj`: a registry spec (checked by
/// building it once for `topology`) or a Python class with `choose`.
pub(crate) fn policy_spec(
    obj: &Bound<'_, PyAny>,
    topology: &RustTopology,
    callbacks: &Callbacks,
) -> PyResult<PolicySpec> {
    if let Ok(text) = obj.extract::<String>() {
        let spec = POLICIES.spec(&text).map_err(value_error)?;
        guard(|| spec.build(topology).map(drop).map_err(value_error))?;
        return Ok(spec);
    }
    let cls = class_with(obj, "scheduler", &["choose"])?;
    let name = class_name(&cls)?;
    let rotate = match cls.getattr("rotate") {
        Ok(r) => r
            .extract::<bool>()
            .map_err(|_| PyTypeError::new_err(format!("{name}.rotate must be True or False")))?,
        Err(_) => false,
    };
    let (cls, callbacks) = (cls.unbind(), callbacks.clone());
    let spec = StrategySpec::bare(&name);
    Ok(Spec::from_fn(
        spec,
        move |topology: &RustTopology| -> Result<Box<dyn Scheduler>, PolicyBuildError> {
            let object = instantiate(&cls, topology, &callbacks).map_err(|reason| {
                PolicyBuildError::Constructor {
                    policy: name.clone(),
                    reason,
                }
            })?;
            Ok(Box::new(PyPolicy {
                name: name.clone(),
                object,
                queue: VecDeque::new(),
                mapping: RequestMapping { rotate },
                callbacks: callbacks.clone(),
            }))
        },
    ))
}

/// A request as the Python allocator sees it.
fn request_dict<'py>(py: Python<'py>, request: &Request) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("nodes", request.node_count())?;
    let (kind, sides, dim, rotate) = match *request {
        Request::Subcube { dim } => ("subcube", None, Some(dim), false),
        Request::Box { sides, rotate } => ("box", Some(sides.as_slice().to_vec()), None, rotate),
        _ => ("nodes", None, None, false),
    };
    d.set_item("kind", kind)?;
    d.set_item("sides", sides)?;
    d.set_item("dim", dim)?;
    d.set_item("rotate", rotate)?;
    Ok(d)
}

/// An allocator written in Python: its `allocate(request)` returns the
/// node ids to grant (any sequence of ints) or `None` for "no room now",
/// its `release(nodes)` is told the nodes of a released grant. Faults are
/// refused (the Python side is not told about them).
struct PyAllocator {
    name: String,
    topology: RustTopology,
    object: Py<PyAny>,
    occupancy: Occupancy,
    ledger: GrantLedger<Vec<NodeId>>,
    callbacks: Callbacks,
}

impl fmt::Debug for PyAllocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PyAllocator")
            .field("name", &self.name)
            .field("topology", &self.topology)
            .field("live", &self.ledger.len())
            .finish_non_exhaustive()
    }
}

impl PyAllocator {
    /// Calls `allocate` and checks its answer.
    fn ask(&self, request: &Request) -> PyResult<Option<Vec<NodeId>>> {
        Python::with_gil(|py| {
            let answer = self
                .object
                .bind(py)
                .call_method1("allocate", (request_dict(py, request)?,))?;
            if answer.is_none() {
                return Ok(None);
            }
            let ids: Vec<i64> = answer.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{}.allocate returned {}; return a sequence of node ids, or None when there is no room",
                    self.name,
                    answer.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string())
                ))
            })?;
            self.checked(request, &ids).map(Some)
        })
    }

    /// The granted ids, sorted, if each is a free node of the machine, given
    /// once, and there are enough of them.
    fn checked(&self, request: &Request, ids: &[i64]) -> PyResult<Vec<NodeId>> {
        let total = self.topology.num_nodes();
        let bad = |what: String| PyValueError::new_err(format!("{}.allocate {what}", self.name));
        let want = request.node_count();
        if (ids.len() as u64) < want {
            return Err(bad(format!(
                "returned {} nodes for a request of {want}",
                ids.len()
            )));
        }
        let mut seen = NodeSet::new(total);
        let mut nodes = Vec::with_capacity(ids.len());
        for &id in ids {
            let node = NodeId::try_from(id)
                .ok()
                .filter(|&n| (n as usize) < total)
                .ok_or_else(|| {
                    bad(format!(
                        "returned node {id}, outside the machine's 0..{total}"
                    ))
                })?;
            if !seen.insert(node).unwrap_or(false) {
                return Err(bad(format!("returned node {node} twice")));
            }
            if !self.occupancy.is_available(node) {
                return Err(bad(format!("returned node {node}, which is busy")));
            }
            nodes.push(node);
        }
        nodes.sort_unstable();
        Ok(nodes)
    }

    fn failed(&self, e: PyErr, request: &Request) -> AllocError {
        let reason = format!("the Python allocator {} failed: {e}", self.name);
        self.callbacks.record(e);
        AllocError::Invalid {
            request: *request,
            reason,
        }
    }
}

impl Allocator for PyAllocator {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn topology(&self) -> &RustTopology {
        &self.topology
    }

    fn allocate(&mut self, request: &Request) -> Result<Grant, AllocError> {
        let (want, total) = (request.node_count(), self.topology.num_nodes());
        if want == 0 || want > total as u64 {
            return Err(AllocError::Invalid {
                request: *request,
                reason: format!("needs {want} nodes; the machine has {total}"),
            });
        }
        match self.ask(request) {
            Ok(Some(nodes)) => {
                self.occupancy.occupy(nodes.iter().copied());
                let id = self.ledger.issue(nodes.clone());
                Ok(Grant::new(id, Partition::Nodes(nodes), want))
            }
            Ok(None) => Err(AllocError::NoRoom {
                request: *request,
                free: self.occupancy.free_count(),
                total,
            }),
            Err(e) => Err(self.failed(e, request)),
        }
    }

    fn release(&mut self, grant: &Grant) -> Result<(), ReleaseError> {
        let nodes = self.ledger.take(grant.id())?;
        self.occupancy.vacate(nodes.iter().copied());
        let told = Python::with_gil(|py| {
            self.object
                .bind(py)
                .call_method1("release", (PyList::new(py, &nodes)?,))
                .map(drop)
        });
        told.map_err(|e| {
            self.callbacks.record(e);
            // The run stops here; the kept exception is what is raised.
            ReleaseError::NotLive { id: grant.id() }
        })
    }

    fn free_nodes(&self) -> usize {
        self.occupancy.free_count()
    }

    fn live_grants(&self) -> usize {
        self.ledger.len()
    }

    fn is_available(&self, node: NodeId) -> bool {
        self.occupancy.is_available(node)
    }

    fn busy_nodes(&self) -> NodeSet {
        self.occupancy.busy()
    }
}

/// A job as the Python policy sees it.
pub(crate) fn job_dict<'py>(py: Python<'py>, job: &Job) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", job.id)?;
    d.set_item("arrival", job.arrival)?;
    d.set_item("service", job.service)?;
    d.set_item("estimate", job.estimate)?;
    d.set_item("nodes", job.nodes())?;
    Ok(d)
}

/// A scheduling policy written in Python: at every decision its
/// `choose(waiting, free_nodes, now)` gets the waiting jobs (dicts, in
/// arrival order) and returns the index of the one to start, or `None` to
/// start nothing more until the next event. A chosen job that does not fit
/// now also ends the decision (it stays waiting).
struct PyPolicy {
    name: String,
    object: Py<PyAny>,
    queue: VecDeque<Job>,
    mapping: RequestMapping,
    callbacks: Callbacks,
}

impl fmt::Debug for PyPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PyPolicy")
            .field("name", &self.name)
            .field("waiting", &self.queue.len())
            .finish_non_exhaustive()
    }
}

impl PyPolicy {
    /// Calls `choose` and checks its answer.
    fn choose(&self, free: usize, now: f64) -> PyResult<Option<usize>> {
        Python::with_gil(|py| {
            let waiting = PyList::empty(py);
            for job in &self.queue {
                waiting.append(job_dict(py, job)?)?;
            }
            let answer = self
                .object
                .bind(py)
                .call_method1("choose", (waiting, free, now))?;
            if answer.is_none() {
                return Ok(None);
            }
            let i: i64 = answer.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{}.choose returned {}; return the index of a waiting job, or None",
                    self.name,
                    answer
                        .get_type()
                        .name()
                        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
                ))
            })?;
            usize::try_from(i)
                .ok()
                .filter(|&i| i < self.queue.len())
                .map(Some)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "{}.choose returned {i}, but {} jobs are waiting (indices 0..{})",
                        self.name,
                        self.queue.len(),
                        self.queue.len()
                    ))
                })
        })
    }
}

impl Scheduler for PyPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        while !self.queue.is_empty() {
            let i = match self.choose(alloc.free_nodes(), now) {
                Ok(Some(i)) => i,
                Ok(None) => break,
                Err(e) => {
                    let reason = e.to_string();
                    self.callbacks.record(e);
                    return Err(ScheduleError::Policy {
                        policy: self.name.clone(),
                        reason,
                    });
                }
            };
            if start_queued(&mut self.queue, i, self.mapping, alloc, started)? == Attempt::Blocked {
                break;
            }
        }
        Ok(())
    }

    // submit (checked, appended), queue_len and head of a one-queue policy.
    partalloc_schedulers::queue_methods!(queue);
}

/// SplitMix64, for the scripts of `check_allocator`.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A random script of `steps` steps from `seed`: requests shaped for the
/// machine as `simulate` shapes jobs (subcubes, near-square boxes, node
/// counts) of 1 to half the machine, releases, double releases, faults
/// and repairs.
fn script(topology: &RustTopology, steps: usize, seed: u64) -> Vec<Step> {
    let shapes = ShapeMapping::for_topology(topology);
    let total = topology.num_nodes() as u64;
    let mut state = seed;
    let mut out = Vec::with_capacity(steps);
    for _ in 0..steps {
        let r = next(&mut state);
        let pick = next(&mut state);
        out.push(match r % 10 {
            0..=5 => {
                let nodes = 1 + pick % (total / 2).max(1);
                match shapes.shape_for(nodes) {
                    Ok(shape) => Step::Allocate(RequestMapping::default().request(&shape)),
                    // A count the machine has no shape for: a plain count.
                    Err(_) => Step::Allocate(Request::nodes(nodes as u32)),
                }
            }
            6 | 7 => Step::Release(pick as usize),
            8 => Step::ReleaseTwice(pick as usize),
            _ if pick.is_multiple_of(2) => Step::MarkFaulty((pick / 2 % total) as NodeId),
            _ => Step::Repair((pick / 2 % total) as NodeId),
        });
    }
    out
}

/// Checks an allocator against the allocation contract (see
/// `partalloc.check_allocator`); returns the counts of the first pass.
#[pyfunction]
#[pyo3(signature = (allocator, topology, *, steps=200, seed=0))]
fn check_allocator<'py>(
    py: Python<'py>,
    allocator: &Bound<'py, PyAny>,
    topology: &Bound<'py, PyAny>,
    steps: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let topology = topology_arg(topology)?;
    if steps > 100_000 {
        return Err(PyValueError::new_err(format!(
            "steps {steps}: at most 100000 steps are checked at once"
        )));
    }
    let callbacks = Callbacks::default();
    let spec = allocator_spec(allocator, &topology, &callbacks)?;
    let steps = script(&topology, steps, seed);
    let checked = guard(|| Ok(check_spec(&spec, &topology, &steps)));
    if let Some(e) = callbacks.take() {
        return Err(e);
    }
    let summary = checked?.map_err(|v| ConformanceError::new_err(v.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("granted", summary.granted)?;
    d.set_item("no_room", summary.no_room)?;
    d.set_item("rejected", summary.rejected)?;
    d.set_item("released", summary.released)?;
    Ok(d)
}
