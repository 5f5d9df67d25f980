//! Readers of the OpenB trace as Alibaba publishes it
//! (`cluster-trace-gpu-v2023/csv`): the node list
//! (`sn,cpu_milli,memory_mib,gpu,model`) and the pod lists
//! (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,…`). Columns are
//! found by their header names; other columns are ignored.

use std::path::Path;

use partalloc_topology::echo;
use partalloc_topology::gpushare::{GpuCluster, TypicalPod};

use crate::error::TraceError;
use crate::model::{MAX_GPUS, MILLI, Models, NodeSpec, Request};

/// Pod slots per node in the artifact's node list (`pods: 1001`).
pub const MAX_PODS_PER_NODE: u32 = 1001;

/// A cluster: its GPU models and nodes, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The GPU models the nodes name.
    pub models: Models,
    /// The nodes.
    pub nodes: Vec<NodeSpec>,
}

impl Cluster {
    /// Number of GPUs in all.
    #[must_use]
    pub fn gpus(&self) -> u32 {
        self.nodes.iter().map(|n| u32::from(n.gpus)).sum()
    }

    /// Whether some node, empty, could hold `req`.
    #[must_use]
    pub fn can_ever_hold(&self, req: &Request) -> bool {
        self.nodes.iter().any(|n| {
            req.cpu_milli <= n.cpu_milli
                && req.memory_mib <= n.memory_mib
                && (req.gpus == 0 || req.gpus <= n.gpus && req.allows(n.model))
        })
    }

    /// The cluster as a machine of the experiment
    /// ([`partalloc_topology::Topology::GpuShare`]), printed as `source`,
    /// judged against `typical` (none: one whole GPU of any model, what a
    /// generated workload asks for).
    ///
    /// # Errors
    /// As [`GpuCluster::new`].
    pub fn to_machine(
        &self,
        source: &str,
        typical: Vec<TypicalPod>,
    ) -> Result<GpuCluster, partalloc_topology::TopologyError> {
        let c = GpuCluster::new(source, self.models.clone(), self.nodes.clone())?;
        Ok(if typical.is_empty() {
            c
        } else {
            c.with_typical(typical)
        })
    }
}

impl From<&GpuCluster> for Cluster {
    fn from(c: &GpuCluster) -> Self {
        Cluster {
            models: c.models().clone(),
            nodes: c.nodes().to_vec(),
        }
    }
}

/// One pod of a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    /// Its name.
    pub name: String,
    /// What it asks for.
    pub request: Request,
    /// Its GPU models as written (`|`-separated, empty parts dropped);
    /// pods with different texts count as different kinds of pod.
    pub spec: String,
}

fn read(path: &Path) -> Result<String, TraceError> {
    std::fs::read_to_string(path).map_err(|e| TraceError::Io {
        file: path.display().to_string(),
        reason: e.to_string().to_lowercase(),
    })
}

/// Reads a node list file.
///
/// # Errors
/// [`TraceError`] naming the file and line of the first bad row.
pub fn read_nodes(path: &Path) -> Result<Cluster, TraceError> {
    parse_nodes(&read(path)?, &path.display().to_string())
}

/// What a pod reader does with a pod that no node could hold even empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Unplaceable {
    /// Refuse the file, naming the line.
    #[default]
    Refuse,
    /// Keep the pod: it fails when submitted, as in the FGD artifact,
    /// whose tuning and arrived-workload counts include such pods (the
    /// published `gpuspec` traces have a few).
    Keep,
}

/// Reads a pod list file for `cluster`.
///
/// # Errors
/// [`TraceError`] naming the file and line of the first bad row.
pub fn read_pods(
    path: &Path,
    cluster: &Cluster,
    unplaceable: Unplaceable,
) -> Result<Vec<Pod>, TraceError> {
    parse_pods(
        &read(path)?,
        &path.display().to_string(),
        cluster,
        unplaceable,
    )
}

struct Table<'a> {
    file: &'a str,
    columns: Vec<usize>,
}

impl<'a> Table<'a> {
    fn new(text: &str, file: &'a str, wanted: &[&str]) -> Result<(Self, usize), TraceError> {
        let header = text.lines().next().unwrap_or("");
        let names: Vec<&str> = header
            .trim_end_matches('\r')
            .split(',')
            .map(str::trim)
            .collect();
        let mut columns = Vec::with_capacity(wanted.len());
        for w in wanted {
            match names.iter().position(|n| n == w) {
                Some(i) => columns.push(i),
                None => {
                    return Err(TraceError::Line {
                        file: file.to_owned(),
                        line: 1,
                        reason: format!(
                            "the header has no column {w:?} (it needs {})",
                            wanted.join(",")
                        ),
                    });
                }
            }
        }
        let width = names.len();
        Ok((Table { file, columns }, width))
    }

    fn err(&self, line: usize, reason: String) -> TraceError {
        TraceError::Line {
            file: self.file.to_owned(),
            line,
            reason,
        }
    }

    fn fields<'l>(
        &self,
        line_no: usize,
        line: &'l str,
        names: &[&str],
    ) -> Result<Vec<&'l str>, TraceError> {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        self.columns
            .iter()
            .zip(names)
            .map(|(&c, n)| {
                cells.get(c).copied().ok_or_else(|| {
                    self.err(line_no, format!("missing field {n} (column {})", c + 1))
                })
            })
            .collect()
    }

    fn number(&self, line: usize, name: &str, text: &str) -> Result<u64, TraceError> {
        if let Some(rest) = text.strip_prefix('-')
            && rest.parse::<u64>().is_ok()
        {
            return Err(self.err(line, format!("{name} is negative ({})", echo(text))));
        }
        text.parse::<u64>().map_err(|_| {
            self.err(
                line,
                format!("{name} is not a whole number: {:?}", echo(text)),
            )
        })
    }
}

fn rows(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .skip(1)
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty())
}

/// Parses a node list (`sn,cpu_milli,memory_mib,gpu,model`); `file`
/// names it in errors.
///
/// # Errors
/// [`TraceError::Line`] for a missing column or field, a negative or
/// non-numeric quantity, more than [`crate::MAX_GPUS`] GPUs, GPUs without a
/// model, or a repeated name.
pub fn parse_nodes(text: &str, file: &str) -> Result<Cluster, TraceError> {
    const NAMES: [&str; 5] = ["sn", "cpu_milli", "memory_mib", "gpu", "model"];
    let (table, _) = Table::new(text, file, &NAMES)?;
    let mut models = Models::default();
    let mut nodes: Vec<NodeSpec> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (line, row) in rows(text) {
        let f = table.fields(line, row, &NAMES)?;
        let name = f[0];
        if name.is_empty() {
            return Err(table.err(line, "empty node name".into()));
        }
        let cpu = table.number(line, "cpu_milli", f[1])?;
        let memory = table.number(line, "memory_mib", f[2])?;
        let gpus = table.number(line, "gpu", f[3])?;
        let cpu = u32::try_from(cpu)
            .map_err(|_| table.err(line, format!("cpu_milli {cpu} is too large")))?;
        if gpus > MAX_GPUS as u64 {
            return Err(table.err(line, format!("{gpus} gpus on one node; at most {MAX_GPUS}")));
        }
        let model = if gpus == 0 {
            0
        } else if f[4].is_empty() {
            return Err(table.err(line, "a node with gpus needs a gpu model".into()));
        } else {
            models
                .intern(f[4])
                .map_err(|e| table.err(line, e.to_string()))?
        };
        if !seen.insert(name.to_owned()) {
            return Err(table.err(line, format!("node {} is listed twice", echo(name))));
        }
        nodes.push(NodeSpec {
            name: name.to_owned(),
            cpu_milli: cpu,
            memory_mib: memory,
            gpus: gpus as u8,
            model,
            max_pods: MAX_PODS_PER_NODE,
        });
    }
    if nodes.is_empty() {
        return Err(table.err(1, "no node listed".into()));
    }
    Ok(Cluster { models, nodes })
}

/// Parses a pod list (`name,cpu_milli,memory_mib,num_gpu,gpu_milli` and
/// optionally `gpu_spec`)
/// for `cluster`; `file` names it in errors.
///
/// # Errors
/// [`TraceError::Line`] for a missing column or field, a negative or
/// non-numeric quantity, a GPU share over 1000 thousandths or missing, a
/// share of several GPUs, a GPU model no node has (the known ones
/// listed), a repeated name, or (with [`Unplaceable::Refuse`]) a pod that
/// no node of the cluster could hold even empty.
pub fn parse_pods(
    text: &str,
    file: &str,
    cluster: &Cluster,
    unplaceable: Unplaceable,
) -> Result<Vec<Pod>, TraceError> {
    parse_pods_timed(text, file, cluster, unplaceable)
        .map(|pods| pods.into_iter().map(|t| t.pod).collect())
}

/// A pod with its creation and deletion times as the list gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedPod {
    /// The pod.
    pub pod: Pod,
    /// `creation_time`, when the list has the column.
    pub created: Option<u64>,
    /// `deletion_time`, when the list has the column and the field is not
    /// empty.
    pub deleted: Option<u64>,
}

/// [`parse_pods`] keeping each pod's `creation_time` and `deletion_time`
/// (optional columns; a deletion before the creation is refused).
///
/// # Errors
/// As [`parse_pods`], and [`TraceError::Line`] for a time that is not a
/// whole number or a deletion before the creation.
pub fn parse_pods_timed(
    text: &str,
    file: &str,
    cluster: &Cluster,
    unplaceable: Unplaceable,
) -> Result<Vec<TimedPod>, TraceError> {
    const NAMES: [&str; 5] = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"];
    let (table, _) = Table::new(text, file, &NAMES)?;
    // `gpu_spec` is optional (the multigpu lists have none): any model.
    let spec_col = text
        .lines()
        .next()
        .unwrap_or("")
        .trim_end_matches('\r')
        .split(',')
        .position(|h| h.trim() == "gpu_spec");
    let column = |name: &str| {
        text.lines()
            .next()
            .unwrap_or("")
            .trim_end_matches('\r')
            .split(',')
            .position(|h| h.trim() == name)
    };
    let (created_col, deleted_col) = (column("creation_time"), column("deletion_time"));
    let mut pods = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (line, row) in rows(text) {
        let f = table.fields(line, row, &NAMES)?;
        let name = f[0];
        if name.is_empty() {
            return Err(table.err(line, "empty pod name".into()));
        }
        let cpu = table.number(line, "cpu_milli", f[1])?;
        let cpu = u32::try_from(cpu)
            .map_err(|_| table.err(line, format!("cpu_milli {cpu} is too large")))?;
        let memory = table.number(line, "memory_mib", f[2])?;
        let gpus = table.number(line, "num_gpu", f[3])?;
        let milli = table.number(line, "gpu_milli", f[4])?;
        if gpus > MAX_GPUS as u64 {
            return Err(table.err(line, format!("num_gpu {gpus} is more than {MAX_GPUS}")));
        }
        if milli > u64::from(MILLI) {
            return Err(table.err(
                line,
                format!("gpu_milli {milli} is more than one gpu (1000)"),
            ));
        }
        let (gpus, milli) = (gpus as u8, milli as u32);
        let request = match (gpus, milli) {
            (0, 0) => Request::cpu(cpu, memory),
            (0, _) => return Err(table.err(line, format!("gpu_milli {milli} without num_gpu"))),
            (_, 0) => return Err(table.err(line, format!("num_gpu {gpus} without gpu_milli"))),
            (1, _) => {
                Request::gpu(cpu, memory, 1, milli).map_err(|e| table.err(line, e.to_string()))?
            }
            (_, m) if m < MILLI => {
                return Err(table.err(
                    line,
                    format!("a share ({m} thousandths) of {gpus} gpus; several gpus are taken whole (1000)"),
                ));
            }
            _ => Request::gpu(cpu, memory, gpus, milli)
                .map_err(|e| table.err(line, e.to_string()))?,
        };
        let mut mask = 0_u64;
        let spec_text = match spec_col {
            Some(c) => row.split(',').nth(c).map(str::trim).ok_or_else(|| {
                table.err(line, format!("missing field gpu_spec (column {})", c + 1))
            })?,
            None => "",
        };
        let parts: Vec<&str> = spec_text.split('|').filter(|s| !s.is_empty()).collect();
        for &spec in &parts {
            match cluster.models.id(spec) {
                Some(id) => mask |= 1 << id,
                None => {
                    return Err(table.err(
                        line,
                        format!(
                            "gpu model {} is on no node (known: {})",
                            echo(spec),
                            cluster.models.names().join(", ")
                        ),
                    ));
                }
            }
        }
        let request = if gpus > 0 {
            request.with_models(mask)
        } else {
            request
        };
        if unplaceable == Unplaceable::Refuse && !cluster.can_ever_hold(&request) {
            return Err(table.err(
                line,
                format!("pod {} fits no node of the cluster, even empty", echo(name)),
            ));
        }
        if !seen.insert(name.to_owned()) {
            return Err(table.err(line, format!("pod {} is listed twice", echo(name))));
        }
        let time = |col: Option<usize>, what: &str| -> Result<Option<u64>, TraceError> {
            let Some(c) = col else { return Ok(None) };
            let cell = row.split(',').nth(c).map(str::trim).unwrap_or("");
            if cell.is_empty() {
                return Ok(None);
            }
            table.number(line, what, cell).map(Some)
        };
        let created = time(created_col, "creation_time")?;
        let deleted = time(deleted_col, "deletion_time")?;
        if let (Some(c), Some(d)) = (created, deleted)
            && d < c
        {
            return Err(table.err(
                line,
                format!("deletion_time {d} is before creation_time {c}"),
            ));
        }
        pods.push(TimedPod {
            pod: Pod {
                name: name.to_owned(),
                request,
                spec: if gpus > 0 {
                    parts.join("|")
                } else {
                    String::new()
                },
            },
            created,
            deleted,
        });
    }
    Ok(pods)
}
