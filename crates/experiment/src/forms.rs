//! Every input form that names files, in one table: each machine form that
//! reads files and each trace format, with example files from the
//! repository and a strategy that runs on the result; and every workload
//! source with the flags that name it ([`WORKLOAD_FORMS`]). The adversarial
//! corpus of the command-line tool generates its probes of these forms
//! (an output naming an input, an input that never ends, a path with
//! control characters) from this table, so a form added here is probed
//! without anyone writing a probe; the tests below keep the table whole.
//!
//! ```
//! use partalloc_experiment::forms::MACHINE_FILE_FORMS;
//! let kueue = MACHINE_FILE_FORMS.iter().find(|f| f.name == "kueue").unwrap();
//! assert_eq!(kueue.machine(&["t.yaml", "n.yaml"]), "kueue:t.yaml,n.yaml");
//! ```

use partalloc_topology::TopologyKind;
use partalloc_workload::TraceFormat;

use crate::MachineSource;

/// A machine form that reads files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileForm {
    /// A short name, for the probes' names.
    pub name: &'static str,
    /// The `--topology` text, with `{0}`, `{1}` standing for its files.
    pub template: &'static str,
    /// Example files in the repository (relative to its root), one per
    /// placeholder, in order.
    pub examples: &'static [&'static str],
    /// A strategy that runs on the machine the examples describe.
    pub strategy: &'static str,
}

impl FileForm {
    /// The `--topology` text naming `files` (one per placeholder).
    #[must_use]
    pub fn machine(&self, files: &[&str]) -> String {
        substitute(self.template, files)
    }
}

/// Every machine form that reads files.
pub const MACHINE_FILE_FORMS: &[FileForm] = &[
    FileForm {
        name: "blocks",
        template: "blocks:{0}",
        examples: &["examples/blocks-8x18.conf"],
        strategy: "block",
    },
    FileForm {
        name: "blocks-yaml",
        template: "blocks:{0}",
        examples: &["examples/blocks-8x18.yaml"],
        strategy: "block",
    },
    FileForm {
        name: "blocks-gpus",
        template: "blocks:{0},4gpu",
        examples: &["examples/blocks-8x18.conf"],
        strategy: "tas",
    },
    FileForm {
        name: "tree",
        template: "tree:{0}",
        examples: &["examples/tree-2level.conf"],
        strategy: "tree",
    },
    FileForm {
        name: "ring",
        template: "ring:{0}",
        examples: &["examples/ring-4x8.conf"],
        strategy: "ring",
    },
    FileForm {
        name: "torus3d",
        template: "torus3d:{0}",
        examples: &["examples/torus3d-4x4x4.yaml"],
        strategy: "torus3d",
    },
    FileForm {
        name: "kueue",
        template: "kueue:{0},{1}",
        examples: &["examples/kueue/topology.yaml", "examples/kueue/nodes.yaml"],
        strategy: "tas",
    },
    FileForm {
        name: "pod",
        template: "{0}",
        examples: &["examples/pods/half-v5e.toml"],
        strategy: "pod-best-fit",
    },
    FileForm {
        name: "openb",
        template: "openb:{0},{1}",
        examples: &["examples/openb/nodes.csv", "examples/openb/pods.csv"],
        strategy: "fgd",
    },
];

/// A machine family as the front ends offer it: its text forms for help
/// texts, an example machine from the repository, and a strategy and a
/// workload that run there. Tests that run something on every family
/// (the command-line tool's and Python's) iterate [`FAMILIES`], so a new
/// family is tested there once it has its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The family.
    pub kind: TopologyKind,
    /// Its `--topology` forms, as the help of `--topology` lists them.
    pub help: &'static str,
    /// An example machine as `--topology` takes it, with `{0}`, `{1}`
    /// standing for `files`.
    pub example: &'static str,
    /// The example's files in the repository (relative to its root).
    pub files: &'static [&'static str],
    /// A strategy that runs there.
    pub strategy: &'static str,
    /// The measures a run on it takes unless told otherwise, as a run
    /// reports them (`measured`).
    pub measured: &'static str,
    /// A workload setting (one line of a `[workload]` table) under which
    /// every strategy and policy listed for the family can place every
    /// generated request on the example; `None` where no generated law
    /// draws only requests the family can place (runs there replay traces).
    pub workload: Option<&'static str>,
}

impl Family {
    /// The example machine naming `files` (one per placeholder).
    #[must_use]
    pub fn machine(&self, files: &[&str]) -> String {
        substitute(self.example, files)
    }

    /// The row of `kind` (a test checks that every family has one).
    #[must_use]
    pub fn of(kind: TopologyKind) -> Option<&'static Family> {
        FAMILIES.iter().find(|f| f.kind == kind)
    }
}

/// Every machine family, in the order of [`TopologyKind::ALL`].
pub const FAMILIES: &[Family] = &[
    Family {
        kind: TopologyKind::Hypercube,
        help: "hypercube:N",
        example: "hypercube:6",
        files: &[],
        strategy: "buddy",
        measured: "dispersal",
        workload: Some("cube_dims = \"uniform:0-4\""),
    },
    Family {
        kind: TopologyKind::Mesh,
        help: "mesh:AxB[xC…], kary:K^N",
        example: "mesh:8x8",
        files: &[],
        strategy: "first-fit",
        measured: "dispersal",
        workload: Some("max_sides = \"4x4\""),
    },
    Family {
        kind: TopologyKind::Torus,
        help: "torus:AxB[xC…], kary-torus:K^N",
        example: "torus:8x8",
        files: &[],
        strategy: "paging",
        measured: "dispersal",
        workload: Some("max_sides = \"4x4\""),
    },
    Family {
        kind: TopologyKind::Pod,
        help: "pod:PRESET[:AxB…] or a pod file (*.toml)",
        example: "{0}",
        files: &["examples/pods/lab-2d.toml"],
        strategy: "pod-best-fit",
        measured: "dispersal,pod",
        workload: Some("shape_weights = [1, 1, 1, 1, 1, 0, 0]"),
    },
    Family {
        kind: TopologyKind::Blocks,
        help: "blocks:FILE, a Slurm topology.conf or topology.yaml (blocks:FILE,4gpu: its nodes with 4 GPUs each, as a capacity machine)",
        example: "blocks:{0}",
        files: &["examples/blocks-8x18.conf"],
        strategy: "block",
        measured: "slurm",
        workload: Some("max_sides = \"18\""),
    },
    Family {
        kind: TopologyKind::Tree,
        help: "tree:FILE, a Slurm topology/tree file",
        example: "tree:{0}",
        files: &["examples/tree-2level.conf"],
        strategy: "tree",
        measured: "slurm",
        workload: Some("max_sides = \"4\""),
    },
    Family {
        kind: TopologyKind::Ring,
        help: "ring:FILE, a Slurm topology/ring file",
        example: "ring:{0}",
        files: &["examples/ring-4x8.conf"],
        strategy: "ring",
        measured: "slurm",
        workload: Some("max_sides = \"4\""),
    },
    Family {
        kind: TopologyKind::Torus3d,
        help: "torus3d:FILE, a Slurm topology/torus3d file",
        example: "torus3d:{0}",
        files: &["examples/torus3d-4x4x4.yaml"],
        strategy: "torus3d",
        measured: "slurm",
        // A job of n nodes needs a placement shape of exactly n: `auto`
        // draws uniformly among the placement sizes (up to 16, since
        // static partitioning has no partition for the whole machine).
        workload: Some("max_sides = \"16\""),
    },
    Family {
        kind: TopologyKind::Capacity,
        help: "racks:[Bx]RxNxGgpu, kueue:TOPOLOGY.yaml,NODES.yaml (a Kueue Topology and a node list)",
        example: "racks:2x4x4gpu",
        files: &[],
        strategy: "tas",
        measured: "capacity",
        workload: Some("max_sides = \"16\""),
    },
    Family {
        kind: TopologyKind::GpuShare,
        help: "gpushare:NxGgpu or openb:NODES.csv[,PODS.csv] (a GPU-sharing cluster; an OpenB node list whose pod list names the typical pods FGD judges by)",
        example: "gpushare:8x8gpu",
        files: &[],
        strategy: "fgd",
        measured: "frag",
        workload: Some("max_sides = \"4\""),
    },
];

/// The help of every command's `--topology`: every family's forms, from
/// [`FAMILIES`].
#[must_use]
pub fn topology_help() -> String {
    let forms: Vec<&str> = FAMILIES.iter().map(|f| f.help).collect();
    format!("The machine: {}", forms.join("; "))
}

/// A trace format with an example trace and a machine it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceForm {
    /// The format.
    pub format: TraceFormat,
    /// An example trace in the repository (relative to its root).
    pub example: &'static str,
    /// The machine the example runs on, as `--topology` takes it, with
    /// `{0}`, `{1}` standing for `machine_files`.
    pub machine: &'static str,
    /// The machine's example files in the repository, if it reads any.
    pub machine_files: &'static [&'static str],
    /// A strategy that runs there.
    pub strategy: &'static str,
}

impl TraceForm {
    /// The `--topology` text naming `files` (one per placeholder).
    #[must_use]
    pub fn machine(&self, files: &[&str]) -> String {
        substitute(self.machine, files)
    }
}

/// `template` with `{i}` replaced by `files[i]`.
fn substitute(template: &str, files: &[&str]) -> String {
    files
        .iter()
        .enumerate()
        .fold(template.to_owned(), |t, (i, f)| {
            t.replace(&format!("{{{i}}}"), f)
        })
}

/// Every trace format.
pub const TRACE_FORMS: &[TraceForm] = &[
    TraceForm {
        format: TraceFormat::Swf,
        example: "examples/mesh8x8-load0.6.swf",
        machine: "mesh:8x8",
        machine_files: &[],
        strategy: "first-fit",
    },
    TraceForm {
        format: TraceFormat::Sacct,
        example: "examples/blocks-8x18.sacct",
        machine: "mesh:16x16",
        machine_files: &[],
        strategy: "paging",
    },
    TraceForm {
        format: TraceFormat::Openb,
        example: "examples/openb/pods.csv",
        machine: "openb:{0}",
        machine_files: &["examples/openb/nodes.csv"],
        strategy: "fgd",
    },
];

/// A workload source as the commands name it: the flags of `simulate`,
/// `show` and `report` that choose it and its lines in a sweep file, each
/// with `{v}` standing for one value (a text, or a file's name), with an
/// example value and one too large to run. The adversarial corpus probes
/// every row under every command that takes a workload, so a source added
/// here is probed without anyone writing a probe.
///
/// ```
/// use partalloc_experiment::forms::{WORKLOAD_FORMS, WorkloadValue};
/// let lublin = WORKLOAD_FORMS.iter().find(|f| f.name == "lublin").unwrap();
/// assert_eq!(lublin.flags("lublin:batch"), ["--model", "lublin:batch"]);
/// assert_eq!(lublin.sweep("lublin:batch"), "model = \"lublin:batch\"\n");
/// assert!(matches!(lublin.value, WorkloadValue::Text { .. }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadForm {
    /// A short name, for the probes' names.
    pub name: &'static str,
    /// The flags that choose it, `{v}` standing for its value.
    pub flags: &'static [&'static str],
    /// Its lines in a sweep file (top-level keys, then any `[workload]`
    /// table), `{v}` standing for its value.
    pub sweep: &'static str,
    /// What `{v}` is.
    pub value: WorkloadValue,
}

/// The value a [`WorkloadForm`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadValue {
    /// A text, run on a machine given by its `--topology` text.
    Text {
        /// A value that runs.
        example: &'static str,
        /// A value naming a workload too large for the machine, refused
        /// before anything of its size is built.
        too_large: &'static str,
        /// Words of every front end's refusal of `too_large`.
        refused: &'static str,
        /// The machine, as `--topology` takes it.
        machine: &'static str,
        /// A strategy that runs the example there.
        strategy: &'static str,
    },
    /// A file of a trace format: its row of [`TRACE_FORMS`] gives the
    /// example trace, the machine and the strategy.
    Trace(&'static TraceForm),
}

impl WorkloadForm {
    /// The flags naming `value`.
    #[must_use]
    pub fn flags(&self, value: &str) -> Vec<String> {
        self.flags.iter().map(|f| f.replace("{v}", value)).collect()
    }

    /// The sweep file's lines naming `value`, each ending in a line break.
    #[must_use]
    pub fn sweep(&self, value: &str) -> String {
        let mut s = self.sweep.replace("{v}", value);
        s.push('\n');
        s
    }

    /// The machine the example runs on, as `--topology` takes it, `{0}`,
    /// `{1}` standing for [`machine_files`](Self::machine_files).
    #[must_use]
    pub fn machine(&self, files: &[&str]) -> String {
        match self.value {
            WorkloadValue::Text { machine, .. } => machine.to_owned(),
            WorkloadValue::Trace(t) => t.machine(files),
        }
    }

    /// The machine's example files in the repository, if it reads any.
    #[must_use]
    pub fn machine_files(&self) -> &'static [&'static str] {
        match self.value {
            WorkloadValue::Text { .. } => &[],
            WorkloadValue::Trace(t) => t.machine_files,
        }
    }

    /// A strategy that runs the example.
    #[must_use]
    pub fn strategy(&self) -> &'static str {
        match self.value {
            WorkloadValue::Text { strategy, .. } => strategy,
            WorkloadValue::Trace(t) => t.strategy,
        }
    }
}

/// Every workload source: the generated laws, each trace format of
/// [`TRACE_FORMS`] and the Lublin–Feitelson model.
pub const WORKLOAD_FORMS: &[WorkloadForm] = &[
    WorkloadForm {
        name: "generated",
        flags: &["--load", "0.5", "--max-sides", "{v}"],
        sweep: "[workload]\nmax_sides = \"{v}\"",
        value: WorkloadValue::Text {
            example: "4x4",
            too_large: "100000x100000",
            refused: "requests would be larger than the machine",
            machine: "mesh:8x8",
            strategy: "first-fit",
        },
    },
    WorkloadForm {
        name: "swf",
        flags: &["--trace", "{v}", "--trace-format", "swf"],
        sweep: "trace = \"{v}\"\ntrace_format = \"swf\"",
        value: WorkloadValue::Trace(&TRACE_FORMS[0]),
    },
    WorkloadForm {
        name: "sacct",
        flags: &["--trace", "{v}", "--trace-format", "sacct"],
        sweep: "trace = \"{v}\"\ntrace_format = \"sacct\"",
        value: WorkloadValue::Trace(&TRACE_FORMS[1]),
    },
    WorkloadForm {
        name: "openb",
        flags: &["--trace", "{v}", "--trace-format", "openb"],
        sweep: "trace = \"{v}\"\ntrace_format = \"openb\"",
        value: WorkloadValue::Trace(&TRACE_FORMS[2]),
    },
    WorkloadForm {
        name: "lublin",
        flags: &["--model", "{v}"],
        sweep: "model = \"{v}\"",
        value: WorkloadValue::Text {
            example: "lublin:batch",
            too_large: "lublin:batch:nodes=1048576",
            refused: "exceed the machine's 64 nodes",
            machine: "mesh:8x8",
            strategy: "first-fit",
        },
    },
];

/// The variant of a machine source that reads files (`None` for a text
/// form). A new variant does not compile until it is named here, and the
/// tests then ask for its row in [`MACHINE_FILE_FORMS`].
#[must_use]
pub fn file_variant(source: &MachineSource) -> Option<&'static str> {
    match source {
        MachineSource::Text(_) => None,
        MachineSource::Slurm { .. } => Some("slurm"),
        MachineSource::Kueue { .. } => Some("kueue"),
        MachineSource::PodFile(_) => Some("pod"),
        MachineSource::Openb { .. } => Some("openb"),
    }
}

/// Every file-reading variant [`file_variant`] names.
pub const FILE_VARIANTS: &[&str] = &["slurm", "kueue", "pod", "openb"];

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::machine::MAX_MACHINE_NODES;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn at_root(paths: &[&str]) -> Vec<String> {
        paths
            .iter()
            .map(|p| root().join(p).display().to_string())
            .collect()
    }

    #[test]
    fn every_machine_form_reads_its_examples_and_runs_its_strategy() {
        for form in MACHINE_FILE_FORMS {
            let files = at_root(form.examples);
            let refs: Vec<&str> = files.iter().map(String::as_str).collect();
            let source = MachineSource::parse(&form.machine(&refs));
            assert!(file_variant(&source).is_some(), "{}", form.name);
            let named: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
            assert_eq!(source.files(), named, "{}", form.name);
            let machine = source
                .load("test", MAX_MACHINE_NODES)
                .unwrap_or_else(|e| panic!("{}: {e}", form.name));
            let spec = partalloc_allocators::registry::ALLOCATORS
                .spec(form.strategy)
                .unwrap_or_else(|e| panic!("{}: {e}", form.name));
            spec.build(&machine)
                .unwrap_or_else(|e| panic!("{} on {}: {e}", form.strategy, form.name));
        }
    }

    #[test]
    fn every_file_variant_and_slurm_family_has_a_form() {
        let sources: Vec<MachineSource> = MACHINE_FILE_FORMS
            .iter()
            .map(|f| MachineSource::parse(&f.machine(f.examples)))
            .collect();
        for v in FILE_VARIANTS {
            assert!(
                sources.iter().any(|s| file_variant(s) == Some(v)),
                "no form reads {v}"
            );
        }
        for kind in [
            TopologyKind::Blocks,
            TopologyKind::Tree,
            TopologyKind::Ring,
            TopologyKind::Torus3d,
        ] {
            assert!(
                sources
                    .iter()
                    .any(|s| matches!(s, MachineSource::Slurm { kind: k, .. } if *k == kind)),
                "no form reads {kind}"
            );
        }
    }

    #[test]
    fn every_trace_format_has_a_form_that_reads() {
        for format in TraceFormat::ALL {
            let form = TRACE_FORMS
                .iter()
                .find(|t| t.format == format)
                .unwrap_or_else(|| panic!("no form for {format}"));
            let files = at_root(form.machine_files);
            let refs: Vec<&str> = files.iter().map(String::as_str).collect();
            let machine = MachineSource::parse(&form.machine(&refs))
                .load("test", MAX_MACHINE_NODES)
                .unwrap_or_else(|e| panic!("{format}: {e}"));
            let path = root().join(form.example);
            let (jobs, _) = crate::trace::read_jobs(
                &path,
                format,
                &machine,
                partalloc_workload::ShapeMapping::for_topology(&machine),
                false,
            )
            .unwrap_or_else(|e| panic!("{format}: {e}"));
            assert!(!jobs.is_empty(), "{format}");
        }
    }

    #[test]
    fn every_workload_source_has_a_form_whose_example_runs_and_too_large_is_refused() {
        use crate::experiment::{
            Experiment, ExperimentError, LublinSource, TraceSource, WorkloadSource,
        };
        // Every trace format once, the laws and the model.
        for format in TraceFormat::ALL {
            let rows = WORKLOAD_FORMS
                .iter()
                .filter(|f| matches!(f.value, WorkloadValue::Trace(t) if t.format == format))
                .count();
            assert_eq!(rows, 1, "{format}");
        }
        let names: Vec<&str> = WORKLOAD_FORMS.iter().map(|f| f.name).collect();
        assert!(names.contains(&"generated") && names.contains(&"lublin"));
        for form in WORKLOAD_FORMS {
            // Each names its value in its flags and its sweep lines, and a
            // trace its format.
            assert!(form.flags.contains(&"{v}"), "{}", form.name);
            assert!(form.sweep.contains("{v}"), "{}", form.name);
            if let WorkloadValue::Trace(t) = form.value {
                assert!(form.flags.contains(&t.format.name()), "{}", form.name);
                assert!(form.sweep.contains(t.format.name()), "{}", form.name);
            }
            let files = at_root(form.machine_files());
            let refs: Vec<&str> = files.iter().map(String::as_str).collect();
            let machine = MachineSource::parse(&form.machine(&refs));
            // The example runs as the library reads the flags' value, and
            // the value too large is refused by the check.
            let source = |value: &str| match (form.name, form.value) {
                ("generated", _) => WorkloadSource::Generated {
                    options: partalloc_workload::WorkloadOptions {
                        max_sides: Some(value.parse().unwrap_or_else(|e| panic!("{e}"))),
                        ..Default::default()
                    },
                    load: 0.5,
                },
                ("lublin", _) => WorkloadSource::Lublin(LublinSource::new(
                    value.parse().unwrap_or_else(|e| panic!("{e}")),
                )),
                (_, WorkloadValue::Trace(t)) => WorkloadSource::Trace(TraceSource {
                    path: root().join(value),
                    format: t.format,
                    mapping: partalloc_workload::TraceMapping::Shapes,
                    lenient: false,
                }),
                (name, _) => panic!("{name}: a source this test does not know"),
            };
            let experiment = |value: &str| {
                let mut e = Experiment::new(
                    machine.clone(),
                    source(value),
                    partalloc_allocators::registry::ALLOCATORS
                        .spec(form.strategy())
                        .unwrap_or_else(|e| panic!("{e}")),
                    partalloc_schedulers::registry::POLICIES
                        .spec("fcfs")
                        .unwrap_or_else(|e| panic!("{e}")),
                );
                e.stop.jobs = Some(20);
                e
            };
            let (example, too_large) = match form.value {
                WorkloadValue::Text {
                    example,
                    too_large,
                    refused,
                    ..
                } => (example, Some((too_large, refused))),
                WorkloadValue::Trace(t) => (t.example, None),
            };
            let runs = experiment(example)
                .check("test")
                .and_then(|p| p.run(&|_| (), &|| {}))
                .unwrap_or_else(|e| panic!("{}: {e}", form.name));
            assert!(runs[0].0.results.completed > 0, "{}", form.name);
            if let Some((v, refused)) = too_large {
                let e = experiment(v).check("test").map(|_| ()).unwrap_err();
                assert!(
                    matches!(e, ExperimentError::Workload(_) | ExperimentError::Lublin(_)),
                    "{}: {e}",
                    form.name
                );
                assert!(e.to_string().contains(refused), "{}: {e}", form.name);
            }
        }
    }

    #[test]
    fn every_family_has_one_row_in_order_whose_example_runs_its_strategy() {
        let kinds: Vec<TopologyKind> = FAMILIES.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, TopologyKind::ALL);
        for family in FAMILIES {
            let files = at_root(family.files);
            let refs: Vec<&str> = files.iter().map(String::as_str).collect();
            let machine = MachineSource::parse(&family.machine(&refs))
                .load("test", MAX_MACHINE_NODES)
                .unwrap_or_else(|e| panic!("{}: {e}", family.kind));
            assert_eq!(machine.kind(), family.kind);
            let spec = partalloc_allocators::registry::ALLOCATORS
                .spec(family.strategy)
                .unwrap_or_else(|e| panic!("{}: {e}", family.kind));
            spec.build(&machine)
                .unwrap_or_else(|e| panic!("{} on {}: {e}", family.strategy, family.kind));
            // The help names the family's own prefix.
            assert!(
                family.help.contains(&format!("{}:", family.kind))
                    || family.kind == TopologyKind::Capacity,
                "{}",
                family.help
            );
        }
        let help = topology_help();
        for prefix in [
            "racks:",
            "kueue:",
            "kary:",
            "kary-torus:",
            "*.toml",
            "openb:",
        ] {
            assert!(help.contains(prefix), "{prefix}");
        }
    }
}
