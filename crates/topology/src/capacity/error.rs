//! The one error type of capacity machines and their readers.

use thiserror::Error;

/// Why a capacity machine, its YAML description or a pod request was
/// refused. Nothing is built when one of these is returned.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CapacityError {
    /// The text is not well-formed YAML.
    #[error("{file}:{line}: malformed yaml: {message}")]
    Yaml {
        /// File name or other source label.
        file: String,
        /// 1-based line of the problem.
        line: usize,
        /// What the parser reported.
        message: String,
    },
    /// A required field is absent or has the wrong kind of value.
    #[error("{file}:{line}: `{field}` is missing or not {expected}")]
    Field {
        /// File name or other source label.
        file: String,
        /// 1-based line of the enclosing value.
        line: usize,
        /// The field's path, e.g. `spec.levels`.
        field: String,
        /// What kind of value was expected there.
        expected: &'static str,
    },
    /// The document is of another kind than the file should hold.
    #[error(
        "{file}:{line}: a `kind: {kind}` document, where a {expected} is expected; is this the right file?"
    )]
    Kind {
        /// File name or other source label.
        file: String,
        /// 1-based line of `kind`.
        line: usize,
        /// The kind given (shortened).
        kind: String,
        /// The kinds accepted.
        expected: String,
    },
    /// A node of a node list allocates no `pods`, so no pod would fit.
    #[error(
        "{file}:{line}: node `{node}` has no `pods` under status.allocatable; add the pods it takes (Kubernetes' default is pods: \"110\")"
    )]
    NoPods {
        /// File name or other source label.
        file: String,
        /// 1-based line of its `allocatable`.
        line: usize,
        /// The node's name (shortened).
        node: String,
    },
    /// The topology names no level.
    #[error("{file}: the topology has no levels; list at least one node label under spec.levels")]
    NoLevels {
        /// File name or other source label.
        file: String,
    },
    /// The same node label is listed twice as a level.
    #[error("{file}: level `{label}` is listed twice")]
    DuplicateLevel {
        /// File name or other source label.
        file: String,
        /// The repeated label.
        label: String,
    },
    /// A node lacks the label of one of the levels.
    #[error(
        "{file}:{line}: node `{node}` has no label `{label}` (a topology level); label it or drop the node"
    )]
    MissingLabel {
        /// File name or other source label.
        file: String,
        /// 1-based line of the node.
        line: usize,
        /// The node's name.
        node: String,
        /// The missing level label.
        label: String,
    },
    /// A resource quantity is negative or not a Kubernetes quantity.
    #[error(
        "{file}:{line}: node `{node}` resource `{resource}` has quantity `{value}`, not a non-negative quantity like 4, 500m or 16Gi"
    )]
    Quantity {
        /// File name or other source label.
        file: String,
        /// 1-based line of the quantity.
        line: usize,
        /// The node's name.
        node: String,
        /// The resource name.
        resource: String,
        /// The refused text (shortened).
        value: String,
    },
    /// Two nodes share a name or, when the lowest level is the hostname, a
    /// hostname.
    #[error("{file}:{line}: node `{node}` appears twice")]
    DuplicateNode {
        /// File name or other source label.
        file: String,
        /// 1-based line of the second occurrence.
        line: usize,
        /// The repeated name.
        node: String,
    },
    /// The node list is empty.
    #[error("{file}: the node list is empty; a machine needs at least one node")]
    NoNodes {
        /// File name or other source label.
        file: String,
    },
    /// A request or generator names more than the supported number of
    /// nodes, domains, resources or pods.
    #[error("{what} is {got}, more than the supported {max}")]
    TooLarge {
        /// What was counted.
        what: &'static str,
        /// The count given.
        got: u64,
        /// The supported maximum.
        max: u64,
    },
    /// A generator parameter is zero.
    #[error("{what} must be at least 1")]
    Zero {
        /// The parameter.
        what: &'static str,
    },
    /// A pod request names a resource that no node of the machine has, so
    /// no node can ever hold one of its pods.
    #[error("no node has resource `{resource}`; the machine has {known}")]
    UnknownResource {
        /// The resource asked for.
        resource: String,
        /// The machine's resources, comma separated.
        known: String,
    },
    /// A pod request asks for a negative quantity.
    #[error(
        "resource `{resource}` is requested with quantity {value}; quantities must be non-negative"
    )]
    NegativeRequest {
        /// The resource asked for.
        resource: String,
        /// The refused quantity.
        value: i64,
    },
    /// A Slurm machine whose shape has no levels of domains (ring,
    /// torus3d) cannot become a capacity machine.
    #[error(
        "{file}: a {shape} machine has no levels of domains; a capacity machine needs a block or tree topology"
    )]
    SlurmShape {
        /// The Slurm file.
        file: String,
        /// The machine's shape.
        shape: &'static str,
    },
    /// A Slurm tree whose leaf switches sit at different depths: Kueue's
    /// levels are one label per depth, the same on every node.
    #[error(
        "{file}: leaf switch `{leaf}` is {depth} switches below its root, but the first leaf is {expected}; a capacity machine needs every leaf at the same depth"
    )]
    UnevenTree {
        /// The Slurm file.
        file: String,
        /// The leaf switch at another depth.
        leaf: String,
        /// Its depth (switches from the root down to it, itself included).
        depth: usize,
        /// The first leaf's depth.
        expected: usize,
    },
    /// A level name that the machine does not have.
    #[error("no topology level `{level}`; the machine has {known}")]
    UnknownLevel {
        /// The level asked for.
        level: String,
        /// The machine's levels, comma separated.
        known: String,
    },
}
