//! Machines from every form a user gives them in: the text forms of
//! [`Topology`] (`mesh:16x16`, `racks:8x18x4gpu`, `pod:tpu-v4:8x8x8`) and
//! the files some name — `blocks:FILE`, `tree:FILE`, `ring:FILE` and
//! `torus3d:FILE` (a Slurm `topology.conf`, or `topology.yaml` with
//! `#NAME` for one of several topologies), `blocks:FILE,4gpu` (a capacity
//! machine of the file's nodes), `kueue:TOPOLOGY,NODES` (a Kueue Topology
//! and a node list as `kubectl get nodes -o yaml` prints it),
//! `openb:NODES.csv[,PODS.csv]` (a GPU-sharing cluster of an OpenB node
//! list, judged against a pod list's typical pods), and a pod's `.toml`
//! file. The text form of [`Topology`] never touches files; this
//! module does, within the bounds of [`crate::files`], and checks a
//! machine's size against what a run builds before any strategy is built.
//!
//! ```
//! use partalloc_experiment::machine::{MachineSource, MAX_MACHINE_NODES};
//! let m = MachineSource::parse("mesh:16x16");
//! assert!(m.files().is_empty());
//! assert_eq!(m.load("simulate", MAX_MACHINE_NODES)?.num_nodes(), 256);
//! let k = MachineSource::parse("kueue:topology.yaml,nodes.yaml");
//! assert_eq!(k.files().len(), 2);
//! assert_eq!(
//!     MachineSource::parse("mesh:0x3").load("simulate", MAX_MACHINE_NODES).unwrap_err().to_string(),
//!     "\"mesh:0x3\": side 0 has length 0; every side needs at least one node (the topology help lists every form)"
//! );
//! # Ok::<(), partalloc_experiment::SourceError>(())
//! ```

use std::path::{Path, PathBuf};

use partalloc_topology::capacity::CapacityMachine;
use partalloc_topology::pod::{Pod, PodDescription};
use partalloc_topology::slurm::SlurmMachine;
use partalloc_topology::{Topology, TopologyKind, echo, echo_path};

use crate::SourceError;
use crate::files::{FileKind, read_text};

/// Largest machine a run builds strategies for (2^22 nodes: a 2048×2048
/// mesh or a 22-cube). The strategies keep a few bytes to a few dozen
/// bytes per node, and a replay or a sweep holds several at once.
pub const MAX_MACHINE_NODES: usize = 1 << 22;

/// Largest pod a run builds strategies for (2^16 chips, seven times the
/// largest pods built so far). Pod strategies keep counts per catalogue
/// orientation and chip, and a request costs time in the pod's size.
pub const MAX_POD_CHIPS: usize = 1 << 16;

/// A machine as the user named it, parsed into its form (no file read).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MachineSource {
    /// A text form of [`Topology`].
    Text(String),
    /// A Slurm topology file: `KIND:FILE[#NAME][,Ngpu]` as given after the
    /// family.
    Slurm {
        /// Blocks, tree, ring or torus3d.
        kind: TopologyKind,
        /// What follows `KIND:`.
        spec: String,
    },
    /// A Kueue Topology file and node list.
    Kueue {
        /// The Topology file (`spec.levels`).
        topology: String,
        /// The node list.
        nodes: String,
    },
    /// A pod described in a TOML file.
    PodFile(PathBuf),
    /// A GPU-sharing cluster of an OpenB node list, judged against the
    /// typical pods of a pod list when one is named (`openb:NODES[,PODS]`).
    Openb {
        /// The node list (`sn,cpu_milli,memory_mib,gpu,model`).
        nodes: String,
        /// The pod list whose typical pods FGD and the `frag` measure use.
        pods: Option<String>,
    },
}

impl MachineSource {
    /// The form of `text` (never fails: what it reads is checked by
    /// [`load`](Self::load)).
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let t = text.trim();
        if Path::new(t)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
        {
            return Self::PodFile(t.into());
        }
        if let Some((family, rest)) = t.split_once(':') {
            let kind = match family.trim().to_ascii_lowercase().as_str() {
                "blocks" => Some(TopologyKind::Blocks),
                "tree" => Some(TopologyKind::Tree),
                "ring" => Some(TopologyKind::Ring),
                "torus3d" => Some(TopologyKind::Torus3d),
                "openb" => {
                    let (nodes, pods) = match rest.split_once(',') {
                        Some((n, p)) => (n, Some(p.trim().to_owned())),
                        None => (rest, None),
                    };
                    return Self::Openb {
                        nodes: nodes.trim().to_owned(),
                        pods,
                    };
                }
                "kueue" => {
                    let (topology, nodes) = rest.split_once(',').unwrap_or((rest, ""));
                    return Self::Kueue {
                        topology: topology.trim().to_owned(),
                        nodes: nodes.trim().to_owned(),
                    };
                }
                _ => None,
            };
            if let Some(kind) = kind {
                return Self::Slurm {
                    kind,
                    spec: rest.trim().to_owned(),
                };
            }
        }
        Self::Text(text.to_owned())
    }

    /// The files it reads: the inputs no output of the run may replace.
    #[must_use]
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            Self::Text(_) => Vec::new(),
            Self::PodFile(p) => vec![p.clone()],
            Self::Kueue { topology, nodes } => vec![topology.into(), nodes.into()],
            Self::Openb { nodes, pods } => std::iter::once(nodes)
                .chain(pods)
                .map(PathBuf::from)
                .collect(),
            Self::Slurm { spec, .. } => {
                let rest = gpus_suffix(spec).map_or(spec.as_str(), |(file, _)| file);
                let file = match rest.rsplit_once('#') {
                    Some((f, _)) if !Path::new(rest).exists() => f,
                    _ => rest,
                };
                vec![file.into()]
            }
        }
    }

    /// Reads the machine and checks its size for `what` (a command's name,
    /// for the message) against `max` nodes and [`MAX_POD_CHIPS`].
    ///
    /// # Errors
    /// A malformed description ([`SourceError::Description`]), a file that
    /// cannot be read or describes no machine of the family, or a machine
    /// too large.
    pub fn load(&self, what: &str, max: usize) -> Result<Topology, SourceError> {
        let topology = match self {
            Self::Text(text) => text.parse::<Topology>().map_err(|e| {
                use partalloc_topology::TopologyError;
                let given = echo(text);
                let reason = match e {
                    TopologyError::InvalidTopology { reason, .. } => fit(&given, reason, true),
                    TopologyError::MachineTooLarge { reason, .. } => fit(
                        &given,
                        format!("too large: {reason}; describe a smaller machine"),
                        false,
                    ),
                    e => fit(&given, e.to_string(), false),
                };
                SourceError::Description { reason, given }
            })?,
            Self::PodFile(p) => load_pod_file(p)?,
            Self::Kueue { topology, nodes } => load_kueue(topology, nodes)?,
            Self::Slurm { kind, spec } => load_slurm(*kind, spec)?,
            Self::Openb { nodes, pods } => load_openb(what, nodes, pods.as_deref(), max)?,
        };
        check_machine(what, &topology, max)?;
        Ok(topology)
    }
}

/// The text forms of a machine, for a message about a malformed one.
const FORMS: &str = "hypercube:N, mesh:AxB[xC…], torus:AxB[xC…], kary:K^N, kary-torus:K^N, pod:PRESET[:AxB…], racks:[Bx]RxNxGgpu or gpushare:NxGgpu";

/// Characters a description's echo and its reason may take together, so
/// that a front end's line with its option stays under 200.
const DESCRIBED_CHARS: usize = 175;

/// `reason` fitted to one short line with `given`: for a malformed form
/// (`invalid`), with the machine forms when they fit, else with a pointer
/// to them; a parser's own trailing `(expected …)` list is dropped when it
/// does not fit, and anything still too long is cut with `…`.
fn fit(given: &str, reason: String, invalid: bool) -> String {
    let len = |r: &str| given.chars().count() + r.chars().count();
    if invalid {
        let long = format!("{reason} (expected {FORMS})");
        if len(&long) <= 160 {
            return long;
        }
    }
    let mut r = reason;
    if len(&r) > DESCRIBED_CHARS
        && let Some(at) = r.rfind(" (expected ")
    {
        r.truncate(at);
    }
    const POINTER: &str = " (the topology help lists every form)";
    if invalid && len(&r) + POINTER.len() <= DESCRIBED_CHARS {
        r.push_str(POINTER);
    }
    let room = DESCRIBED_CHARS.saturating_sub(given.chars().count());
    match r.char_indices().nth(room) {
        Some((end, _)) => format!("{}…", &r[..end]),
        None => r,
    }
}

/// Refuses a machine above `max` nodes for `what`, and a pod above
/// [`MAX_POD_CHIPS`].
///
/// # Errors
/// [`SourceError::TooManyNodes`] or [`SourceError::TooManyChips`].
pub fn check_machine(what: &str, topology: &Topology, max: usize) -> Result<(), SourceError> {
    let nodes = topology.num_nodes();
    if topology.as_pod().is_some() && nodes > MAX_POD_CHIPS {
        return Err(SourceError::TooManyChips {
            machine: topology.to_string(),
            chips: nodes,
            what: what.to_owned(),
            max: MAX_POD_CHIPS,
        });
    }
    if nodes > max {
        return Err(SourceError::TooManyNodes {
            machine: topology.to_string(),
            nodes,
            what: what.to_owned(),
            max,
        });
    }
    Ok(())
}

/// `FILE,Ngpu`: the file and the GPUs per node of a capacity machine made
/// from a Slurm block or tree file, if `spec` ends so.
fn gpus_suffix(spec: &str) -> Option<(&str, &str)> {
    let (file, gpus) = spec.rsplit_once(',')?;
    let count = gpus.trim().strip_suffix("gpu")?;
    Some((file.trim(), count))
}

fn is_yaml(p: &str) -> bool {
    Path::new(p)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The machine a Slurm topology file describes, as `kind:spec` names it.
fn load_slurm(kind: TopologyKind, spec: &str) -> Result<Topology, SourceError> {
    if matches!(kind, TopologyKind::Blocks | TopologyKind::Tree)
        && let Some((file, count)) = gpus_suffix(spec)
    {
        return load_with_gpus(kind, spec, file, count);
    }
    let (file, name) = match spec.rsplit_once('#') {
        Some((f, n)) if is_yaml(f) => (f, Some(n)),
        _ => (spec, None),
    };
    if file.is_empty() {
        let example = match kind {
            TopologyKind::Tree => "tree-2level.conf",
            TopologyKind::Ring => "ring-4x8.conf",
            TopologyKind::Torus3d => "torus3d-4x4x4.yaml",
            _ => "blocks-8x18.conf",
        };
        return Err(SourceError::Description {
            given: String::new(),
            reason: format!(
                "{kind}:FILE needs a topology.conf or topology.yaml file, e.g. {kind}:examples/{example}"
            ),
        });
    }
    let path = Path::new(file);
    let body = read_text(path, FileKind::Config)?;
    let machine = if is_yaml(file) {
        SlurmMachine::parse_yaml(&body, spec, name)
    } else {
        SlurmMachine::parse_conf(&body, spec)
    }
    .map_err(|e| SourceError::Machine(e.to_string()))?;
    let topology = Topology::from(machine);
    if topology.kind() != kind {
        return Err(SourceError::Machine(format!(
            "{} describes a {} machine; name it {}:{}",
            echo_path(path),
            topology.kind(),
            topology.kind(),
            echo(spec)
        )));
    }
    Ok(topology)
}

/// A capacity machine from a Slurm block or tree file (`blocks:FILE,4gpu`):
/// the file's nodes with `count` GPUs each, under its levels.
fn load_with_gpus(
    kind: TopologyKind,
    spec: &str,
    file: &str,
    count: &str,
) -> Result<Topology, SourceError> {
    let gpus: i64 = count
        .trim()
        .parse()
        .ok()
        .filter(|&g| g >= 1)
        .ok_or_else(|| {
            SourceError::Description {
                given: String::new(),
                reason: format!(
                    "{kind}:{}: {:?} is not a GPU count; write FILE,Ngpu with N at least 1, e.g. {kind}:examples/blocks-8x18.conf,4gpu",
                    echo(spec),
                    echo(count)
                ),
            }
        })?;
    let Topology::Slurm(slurm) = load_slurm(kind, file)? else {
        return Err(SourceError::Machine(format!(
            "{} is not a Slurm topology file",
            echo_path(Path::new(file))
        )));
    };
    let machine = CapacityMachine::from_slurm(
        &slurm,
        &[(partalloc_topology::capacity::GPU_RESOURCE, gpus)],
    )
    .map_err(|e| SourceError::Machine(e.to_string()))?;
    Ok(machine
        .with_source(format!("{kind}:{file},{gpus}gpu"))
        .into())
}

/// The GPU-sharing cluster of an OpenB node list, its typical pods those
/// of `pods` (the FGD artifact's: pods counted by CPU, GPU share, GPU
/// count and models, the most frequent covering 95 %) or, without a pod
/// list, one whole GPU. The node rows are counted against `max` before
/// any is parsed.
fn load_openb(
    what: &str,
    nodes: &str,
    pods: Option<&str>,
    max: usize,
) -> Result<Topology, SourceError> {
    use partalloc_gpushare::openb::{Unplaceable, parse_nodes, parse_pods};
    if nodes.is_empty() || pods.is_some_and(str::is_empty) {
        return Err(SourceError::Description {
            given: String::new(),
            reason: "openb:NODES[,PODS] needs an OpenB node list and optionally a pod list, e.g. openb:data/openb/openb_node_list_gpu_node.csv".to_owned(),
        });
    }
    let path = Path::new(nodes);
    let text = read_text(path, FileKind::Config)?;
    let rows = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    if rows > max {
        return Err(SourceError::TooManyNodes {
            machine: format!("openb:{}", echo_path(path)),
            nodes: rows,
            what: what.to_owned(),
            max,
        });
    }
    let cluster =
        parse_nodes(&text, &echo_path(path)).map_err(|e| SourceError::Machine(e.to_string()))?;
    let typical = match pods {
        Some(p) => {
            let p = Path::new(p);
            let list = read_text(p, FileKind::PodList)?;
            let pods = parse_pods(&list, &echo_path(p), &cluster, Unplaceable::Keep)
                .map_err(|e| SourceError::Machine(e.to_string()))?;
            partalloc_gpushare::frag::typical_pods(
                &pods,
                partalloc_gpushare::experiment::TYPICAL_THRESHOLD_PCT,
            )
        }
        None => Vec::new(),
    };
    let source = match pods {
        Some(p) => format!("openb:{nodes},{p}"),
        None => format!("openb:{nodes}"),
    };
    let machine = cluster
        .to_machine(&source, typical)
        .map_err(|e| SourceError::Machine(e.to_string()))?;
    Ok(machine.into())
}

/// The capacity machine of a Kueue Topology file and a node list.
fn load_kueue(topology: &str, nodes: &str) -> Result<Topology, SourceError> {
    if topology.is_empty() || nodes.is_empty() {
        return Err(SourceError::Description {
            given: String::new(),
            reason: "kueue:TOPOLOGY,NODES needs a Kueue Topology file and a node list, e.g. kueue:examples/kueue/topology.yaml,examples/kueue/nodes.yaml".to_owned(),
        });
    }
    let levels = read_text(Path::new(topology), FileKind::Config)?;
    let list = read_text(Path::new(nodes), FileKind::Config)?;
    let machine = CapacityMachine::from_kueue_yaml(&levels, topology, &list, nodes)
        .map_err(|e| SourceError::Machine(e.to_string()))?;
    Ok(machine
        .with_source(format!("kueue:{topology},{nodes}"))
        .into())
}

/// Most characters of a parser's own message a message repeats.
const MESSAGE_CHARS: usize = 120;

/// A parser's message as an error repeats it: control characters escaped,
/// every word of it (a key or value the parser quotes) cut to the
/// [`ECHO_CHARS`](partalloc_topology::ECHO_CHARS) every echoed input is
/// cut to, and the whole cut with `…` past 120 characters.
///
/// ```
/// let key = "k".repeat(1 << 20);
/// let shown = partalloc_experiment::machine::clip(&format!("unknown field `{key}`"));
/// assert_eq!(shown.chars().count(), "unknown field ".len() + 41);
/// ```
#[must_use]
pub fn clip(message: &str) -> String {
    let words: Vec<String> = message.split(' ').map(partalloc_topology::echo).collect();
    let escaped = words.join(" ");
    match escaped.char_indices().nth(MESSAGE_CHARS) {
        None => escaped,
        Some((end, _)) => format!("{}…", &escaped[..end]),
    }
}

/// A TOML parser's error in `text` as one line: `line N: ` where it
/// points, then its message, its lines joined by `; ` and [`clip`]ped.
#[must_use]
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let line = e
        .span()
        .and_then(|s| text.get(..s.start))
        .map(|t| format!("line {}: ", t.matches('\n').count() + 1))
        .unwrap_or_default();
    let message = e
        .message()
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    format!("{line}{}", clip(&message))
}

/// The pod described in the TOML file at `path` (keys `preset`, `name`,
/// `sides`, `cube`, `wiring`, `rotate`, `shapes`; see `examples/pods/`).
///
/// # Errors
/// The file cannot be read, is not TOML of a pod description, or
/// describes no pod; one line naming the file and the line.
pub fn load_pod_file(path: &Path) -> Result<Topology, SourceError> {
    let text = read_text(path, FileKind::Config)?;
    let description: PodDescription = toml::from_str(&text).map_err(|e| {
        SourceError::Machine(format!(
            "pod file {}: {}",
            echo_path(path),
            toml_error(&text, &e)
        ))
    })?;
    let pod = Pod::try_from(description).map_err(|e| {
        SourceError::Machine(format!(
            "pod file {}: {}",
            echo_path(path),
            clip(&e.to_string())
        ))
    })?;
    Ok(pod.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str) -> String {
        format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    fn load(text: &str) -> Result<Topology, SourceError> {
        MachineSource::parse(text).load("test", MAX_MACHINE_NODES)
    }

    #[test]
    fn every_file_form_loads_and_names_its_files() -> Result<(), SourceError> {
        let conf = load(&format!("blocks:{}", example("blocks-8x18.conf")))?;
        let yaml = load(&format!("blocks:{}", example("blocks-8x18.yaml")))?;
        assert_eq!(conf.kind(), TopologyKind::Blocks);
        assert_eq!(
            conf.as_slurm().map(|m| m.to_conf()),
            yaml.as_slurm().map(|m| m.to_conf())
        );
        assert_eq!(
            load(&format!("blocks:{}#racks", example("blocks-8x18.yaml")))?.num_nodes(),
            144
        );
        let tree = load(&format!("tree:{}", example("tree-2level.yaml")))?;
        assert_eq!((tree.kind(), tree.num_nodes()), (TopologyKind::Tree, 64));
        let ring = load(&format!("ring:{}", example("ring-4x8.conf")))?;
        assert_eq!((ring.kind(), ring.num_nodes()), (TopologyKind::Ring, 32));
        let torus = load(&format!("torus3d:{}", example("torus3d-4x4x4.yaml")))?;
        assert_eq!(torus.num_nodes(), 64);
        let gpus = load(&format!("blocks:{},4gpu", example("blocks-8x18.conf")))?;
        assert_eq!(gpus.num_nodes(), 144 * 4);
        let kueue = format!(
            "kueue:{},{}",
            example("kueue/topology.yaml"),
            example("kueue/nodes.yaml")
        );
        assert!(load(&kueue)?.as_capacity().is_some());
        assert_eq!(MachineSource::parse(&kueue).files().len(), 2);
        let pod = load(&example("pods/lab-2d.toml"))?;
        assert_eq!(pod.num_nodes(), 128);
        assert_eq!(
            MachineSource::parse(&format!("blocks:{},4gpu", example("blocks-8x18.conf"))).files(),
            [PathBuf::from(example("blocks-8x18.conf"))]
        );
        Ok(())
    }

    #[test]
    fn a_bad_pod_file_names_the_file_the_line_and_the_problem()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("bad.toml");
        let text = |p: &Path| {
            load(&p.display().to_string())
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        for (body, says) in [
            (
                "sides = \"8x8\"\nshapes = [\"16x2\"]\n",
                "16x2 does not fit",
            ),
            ("sides = \"8x8\"\nshape = [\"2x2\"]\n", "unknown field"),
            (
                "sides = \"8x8\"\nname = \n",
                "bad.toml: line 2: string values must be quoted",
            ),
            (
                "",
                "bad.toml: the pod description gives neither sides nor a preset; add sides",
            ),
            ("sides = 8\n", "bad.toml: line 1: invalid type: integer `8`"),
        ] {
            std::fs::write(&path, body)?;
            let e = text(&path);
            assert!(e.contains(says) && !e.contains('\n'), "{body:?}: {e}");
        }
        assert!(text(&dir.path().join("missing.toml")).contains("missing.toml"));
        Ok(())
    }

    #[test]
    fn wrong_families_missing_files_and_sizes_are_one_line_errors() {
        let msg = |t: &str| load(t).map(|_| ()).unwrap_err().to_string();
        assert!(
            msg(&format!("tree:{}", example("ring-4x8.conf")))
                .contains("describes a ring machine; name it ring:")
        );
        assert!(
            msg(&format!("blocks:{}#nope", example("blocks-8x18.yaml")))
                .contains("no topology named \"nope\"")
        );
        assert!(msg("blocks:").starts_with("blocks:FILE needs a topology.conf"));
        assert!(msg("kueue:a.yaml").contains("needs a Kueue Topology file and a node list"));
        assert!(msg("blocks:/no/such/file.conf").starts_with("/no/such/file.conf: "));
        assert!(
            msg(&format!("blocks:{},0gpu", example("blocks-8x18.conf")))
                .contains("is not a GPU count")
        );
        let e = MachineSource::parse("mesh:4096x2048")
            .load("simulate", MAX_MACHINE_NODES)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "mesh:4096x2048 has 8388608 nodes, too many for simulate: machines of at most 4194304 nodes (2^22) are accepted"
        );
        for m in [msg("blocks:\u{1b}[2J"), msg(&"x".repeat(100_000))] {
            assert!(
                m.len() < 400 && !m.contains('\u{1b}') && !m.contains('\n'),
                "{m}"
            );
        }
    }
}
