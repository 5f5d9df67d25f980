//! Reader for Slurm oracle golden files: what a real `slurmctld` decided
//! for a scenario of job submissions and cancellations, so that partalloc's
//! `block` and `tree` placers can be replayed against it.
//!
//! The format (agreed in the project's coordination notes) is plain text,
//! one record per line, fields split by single spaces; a line whose first
//! non-blank character is `#` is a comment and blank lines are skipped:
//!
//! ```text
//! slurm 26.05.3
//! topology block
//! conf BlockName=r0 Nodes=n[000-017]
//! conf BlockSizes=18
//! submit j1 nodes=10 segment=5 consolidate exclusive=topo switches=1
//! start j1 n[000-009]
//! submit j2 nodes=10
//! pending j2 Resources
//! submit j3 nodes=40
//! reject j3 Requested node configuration is not available
//! cancel j1
//! start j2 n[008-017]
//! ```
//!
//! Every action (`submit`, `cancel`) is followed by the outcomes Slurm
//! reported once it settled: jobs that started (`start`, with the
//! hostlist), jobs still queued (`pending`, with the reason) and jobs
//! refused at submission (`reject`, with Slurm's message).
//!
//! ```
//! use partalloc_allocators::slurm_golden::{Action, Golden, Outcome};
//! let text = "slurm 26.05.3\ntopology block\nconf BlockName=r0 Nodes=n[0-3]\n\
//!             submit j1 nodes=2\nstart j1 n[2-3]\n";
//! let g = Golden::parse(text, "x.golden")?;
//! assert_eq!(g.version, "26.05.3");
//! let Action::Submit(job) = &g.steps[0].action else { panic!() };
//! assert_eq!((job.name.as_str(), job.nodes), ("j1", 2));
//! assert!(matches!(&g.steps[0].outcomes[0], Outcome::Start { nodes, .. } if nodes == "n[2-3]"));
//! # Ok::<(), partalloc_allocators::slurm_golden::GoldenError>(())
//! ```

use thiserror::Error;

/// The Slurm topology plugin a golden file was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GoldenTopology {
    /// `topology/block`.
    Block,
    /// `topology/tree`.
    Tree,
}

/// A submitted job and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldenJob {
    /// The scenario-local name (`j1`, `j2`, …).
    pub name: String,
    /// Nodes asked for (`nodes=`).
    pub nodes: u32,
    /// `--segment` (`segment=`).
    pub segment: Option<u32>,
    /// `--consolidate-segments` (`consolidate`).
    pub consolidate: bool,
    /// `--exclusive=topo` (`exclusive=topo`).
    pub exclusive: bool,
    /// `--switches` (`switches=`).
    pub switches: Option<u32>,
}

/// What the scenario did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// A job was submitted.
    Submit(GoldenJob),
    /// A job (running or queued) was cancelled.
    Cancel {
        /// The job's name.
        job: String,
    },
}

/// What Slurm reported after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The job started on these nodes.
    Start {
        /// Line in the file.
        line: usize,
        /// The job's name.
        job: String,
        /// Its nodes, as Slurm prints a node list.
        nodes: String,
    },
    /// The job is still queued.
    Pending {
        /// Line in the file.
        line: usize,
        /// The job's name.
        job: String,
        /// squeue's reason (`Resources`, `Priority`, …).
        reason: String,
    },
    /// The submission was refused.
    Reject {
        /// Line in the file.
        line: usize,
        /// The job's name.
        job: String,
        /// Slurm's message.
        message: String,
    },
}

/// One action and the outcomes that followed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Line of the action in the file.
    pub line: usize,
    /// The action.
    pub action: Action,
    /// The outcomes, in file order.
    pub outcomes: Vec<Outcome>,
}

/// A parsed golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Golden {
    /// The Slurm version it was made with (`slurm` line).
    pub version: String,
    /// The topology plugin.
    pub topology: GoldenTopology,
    /// The `topology.conf` lines, verbatim, in order.
    pub conf: Vec<String>,
    /// The actions and their outcomes.
    pub steps: Vec<Step>,
}

/// What is wrong with a line of a golden file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GoldenErrorKind {
    /// The file has no `slurm VERSION` line first.
    #[error("the first record must be `slurm VERSION`")]
    MissingVersion,
    /// The second record is not `topology block` or `topology tree`.
    #[error("the second record must be `topology block` or `topology tree`")]
    MissingTopology,
    /// A record of an unknown kind.
    #[error("unknown record {0:?}")]
    UnknownRecord(String),
    /// A record with too few fields.
    #[error("{0} needs more fields")]
    TooShort(&'static str),
    /// A `conf` line after the first action.
    #[error("conf lines must come before the first action")]
    LateConf,
    /// An outcome before any action.
    #[error("an outcome must follow an action")]
    OrphanOutcome,
    /// A `submit` option that is not one of the format's.
    #[error("unknown submit option {0:?}")]
    UnknownOption(String),
    /// A `submit` option with a bad value.
    #[error("{0} must be a positive whole number")]
    BadNumber(&'static str),
    /// A `submit` without `nodes=`.
    #[error("submit needs nodes=")]
    NoNodes,
    /// A job named twice by `submit`.
    #[error("job {0:?} is submitted twice")]
    Resubmitted(String),
    /// No `conf` line at all.
    #[error("no conf lines")]
    NoConf,
}

/// A golden file that cannot be read: where and why, on one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}:{line}: {kind}")]
pub struct GoldenError {
    /// The file's name as given.
    pub file: String,
    /// The line (1-based; 0 for the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub kind: GoldenErrorKind,
}

/// Cuts a trailing ` # …` comment from a record (not from a `reject`
/// message, which is kept whole).
fn strip_comment(line: &str) -> &str {
    line.find(" #").map_or(line, |i| &line[..i]).trim_end()
}

fn number(value: &str, what: &'static str) -> Result<u32, GoldenErrorKind> {
    value
        .parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or(GoldenErrorKind::BadNumber(what))
}

fn parse_submit(fields: &[&str]) -> Result<GoldenJob, GoldenErrorKind> {
    let [name, options @ ..] = fields else {
        return Err(GoldenErrorKind::TooShort("submit"));
    };
    let mut job = GoldenJob {
        name: (*name).to_owned(),
        nodes: 0,
        segment: None,
        consolidate: false,
        exclusive: false,
        switches: None,
    };
    for &o in options {
        match o.split_once('=') {
            Some(("nodes", v)) => job.nodes = number(v, "nodes")?,
            Some(("segment", v)) => job.segment = Some(number(v, "segment")?),
            Some(("switches", v)) => job.switches = Some(number(v, "switches")?),
            Some(("exclusive", "topo")) => job.exclusive = true,
            None if o == "consolidate" => job.consolidate = true,
            _ => {
                return Err(GoldenErrorKind::UnknownOption(o.chars().take(40).collect()));
            }
        }
    }
    if job.nodes == 0 {
        return Err(GoldenErrorKind::NoNodes);
    }
    Ok(job)
}

impl Golden {
    /// Reads a golden file's text; `file` names it in errors.
    ///
    /// # Errors
    /// [`GoldenError`] for the first line that does not follow the format.
    pub fn parse(text: &str, file: &str) -> Result<Self, GoldenError> {
        let err = |line: usize, kind| GoldenError {
            file: file.to_owned(),
            line,
            kind,
        };
        let mut version: Option<String> = None;
        let mut topology: Option<GoldenTopology> = None;
        let mut conf = Vec::new();
        let mut steps: Vec<Step> = Vec::new();
        let mut submitted = std::collections::HashSet::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let (kind, rest) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            if version.is_none() {
                let v = strip_comment(rest).trim();
                if kind != "slurm" || v.is_empty() {
                    return Err(err(line, GoldenErrorKind::MissingVersion));
                }
                version = Some(v.to_owned());
                continue;
            }
            if topology.is_none() {
                topology = Some(match (kind, strip_comment(rest).trim()) {
                    ("topology", "block") => GoldenTopology::Block,
                    ("topology", "tree") => GoldenTopology::Tree,
                    _ => return Err(err(line, GoldenErrorKind::MissingTopology)),
                });
                continue;
            }
            // A reject's message and a pending reason are free text.
            if kind == "reject" || kind == "pending" {
                let (job, text) = rest.split_once(' ').unwrap_or((rest, ""));
                let text = text.trim();
                if job.is_empty() || (kind == "pending" && text.is_empty()) {
                    return Err(err(
                        line,
                        GoldenErrorKind::TooShort(if kind == "reject" {
                            "reject"
                        } else {
                            "pending"
                        }),
                    ));
                }
                let step = steps
                    .last_mut()
                    .ok_or_else(|| err(line, GoldenErrorKind::OrphanOutcome))?;
                let job = job.to_owned();
                step.outcomes.push(if kind == "reject" {
                    Outcome::Reject {
                        line,
                        job,
                        message: text.to_owned(),
                    }
                } else {
                    Outcome::Pending {
                        line,
                        job,
                        reason: text.to_owned(),
                    }
                });
                continue;
            }
            let fields: Vec<&str> = strip_comment(rest).split_whitespace().collect();
            match kind {
                "conf" => {
                    if !steps.is_empty() {
                        return Err(err(line, GoldenErrorKind::LateConf));
                    }
                    let body = strip_comment(rest).trim();
                    if body.is_empty() {
                        return Err(err(line, GoldenErrorKind::TooShort("conf")));
                    }
                    conf.push(body.to_owned());
                }
                "submit" => {
                    let job = parse_submit(&fields).map_err(|k| err(line, k))?;
                    if !submitted.insert(job.name.clone()) {
                        return Err(err(line, GoldenErrorKind::Resubmitted(job.name)));
                    }
                    steps.push(Step {
                        line,
                        action: Action::Submit(job),
                        outcomes: Vec::new(),
                    });
                }
                "cancel" => {
                    let [job] = fields.as_slice() else {
                        return Err(err(line, GoldenErrorKind::TooShort("cancel")));
                    };
                    steps.push(Step {
                        line,
                        action: Action::Cancel {
                            job: (*job).to_owned(),
                        },
                        outcomes: Vec::new(),
                    });
                }
                "start" => {
                    let [job, nodes] = fields.as_slice() else {
                        return Err(err(line, GoldenErrorKind::TooShort("start")));
                    };
                    let step = steps
                        .last_mut()
                        .ok_or_else(|| err(line, GoldenErrorKind::OrphanOutcome))?;
                    step.outcomes.push(Outcome::Start {
                        line,
                        job: (*job).to_owned(),
                        nodes: (*nodes).to_owned(),
                    });
                }
                other => {
                    return Err(err(
                        line,
                        GoldenErrorKind::UnknownRecord(other.chars().take(40).collect()),
                    ));
                }
            }
        }
        let (Some(version), Some(topology)) = (version, topology) else {
            return Err(err(0, GoldenErrorKind::MissingVersion));
        };
        if conf.is_empty() {
            return Err(err(0, GoldenErrorKind::NoConf));
        }
        Ok(Self {
            version,
            topology,
            conf,
            steps,
        })
    }

    /// The `conf` lines as one `topology.conf` text.
    #[must_use]
    pub fn conf_text(&self) -> String {
        let mut s = String::new();
        for l in &self.conf {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// Decisions the file records: one per `start`, and one per action
    /// after which a job is still pending (the job at the head of the queue
    /// that could not start).
    #[must_use]
    pub fn decisions(&self) -> usize {
        self.steps
            .iter()
            .map(|s| {
                let starts = s
                    .outcomes
                    .iter()
                    .filter(|o| matches!(o, Outcome::Start { .. }))
                    .count();
                let waits = s
                    .outcomes
                    .iter()
                    .any(|o| matches!(o, Outcome::Pending { .. }));
                starts + usize::from(waits)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "# a scenario\nslurm 26.05.3  # slurmctld -V\ntopology block\n\
        conf BlockName=r0 Nodes=n[0-3]\nconf BlockSizes=4\n\n\
        submit j1 nodes=2 segment=1 consolidate exclusive=topo\nstart j1 n[2-3]\n\
        submit j2 nodes=3\npending j2 No suitable topology unit found\nsubmit j3 nodes=9\n\
        reject j3 Requested node configuration is not available\ncancel j1\nstart j2 n[0-2]\n";

    #[test]
    fn a_golden_file_reads_into_steps_and_counts_its_decisions() {
        let g = Golden::parse(GOOD, "g").unwrap();
        assert_eq!(
            (g.version.as_str(), g.topology),
            ("26.05.3", GoldenTopology::Block)
        );
        assert_eq!(g.conf_text(), "BlockName=r0 Nodes=n[0-3]\nBlockSizes=4\n");
        assert_eq!(g.steps.len(), 4);
        assert_eq!(
            g.steps[0].action,
            Action::Submit(GoldenJob {
                name: "j1".into(),
                nodes: 2,
                segment: Some(1),
                consolidate: true,
                exclusive: true,
                switches: None,
            })
        );
        assert_eq!(
            g.steps[2].outcomes,
            vec![Outcome::Reject {
                line: 12,
                job: "j3".into(),
                message: "Requested node configuration is not available".into()
            }]
        );
        assert_eq!(g.steps[3].line, 13);
        assert_eq!(
            g.steps[1].outcomes,
            vec![Outcome::Pending {
                line: 10,
                job: "j2".into(),
                reason: "No suitable topology unit found".into()
            }]
        );
        // Two starts and one wait.
        assert_eq!(g.decisions(), 3);
    }

    #[test]
    fn malformed_files_are_typed_errors_with_file_and_line() {
        let head = "slurm 26.05.3\ntopology block\nconf BlockName=r0 Nodes=n[0-3]\n";
        for (text, line, kind) in [
            ("", 0, GoldenErrorKind::MissingVersion),
            ("topology block\n", 1, GoldenErrorKind::MissingVersion),
            (
                "slurm 26.05.3\ntopology torus\n",
                2,
                GoldenErrorKind::MissingTopology,
            ),
            ("slurm 26.05.3\ntopology tree\n", 0, GoldenErrorKind::NoConf),
            (
                &format!("{head}start j1 n0\n"),
                4,
                GoldenErrorKind::OrphanOutcome,
            ),
            (&format!("{head}submit j1\n"), 4, GoldenErrorKind::NoNodes),
            (
                &format!("{head}submit j1 nodes=0\n"),
                4,
                GoldenErrorKind::BadNumber("nodes"),
            ),
            (
                &format!("{head}submit j1 nodes=-3\n"),
                4,
                GoldenErrorKind::BadNumber("nodes"),
            ),
            (
                &format!("{head}submit j1 nodes=2 exclusive=yes\n"),
                4,
                GoldenErrorKind::UnknownOption("exclusive=yes".into()),
            ),
            (
                &format!("{head}submit j1 nodes=2\nsubmit j1 nodes=2\n"),
                5,
                GoldenErrorKind::Resubmitted("j1".into()),
            ),
            (
                &format!("{head}submit j1 nodes=2\nconf BlockSizes=4\n"),
                5,
                GoldenErrorKind::LateConf,
            ),
            (
                &format!("{head}submit j1 nodes=2\nstart j1\n"),
                5,
                GoldenErrorKind::TooShort("start"),
            ),
            (
                &format!("{head}cancel\n"),
                4,
                GoldenErrorKind::TooShort("cancel"),
            ),
            (
                &format!("{head}submit j1 nodes=2\npending j1\n"),
                5,
                GoldenErrorKind::TooShort("pending"),
            ),
            (
                &format!("{head}launch j1\n"),
                4,
                GoldenErrorKind::UnknownRecord("launch".into()),
            ),
        ] {
            let e = Golden::parse(text, "bad.golden").unwrap_err();
            assert_eq!((e.line, &e.kind), (line, &kind), "{text:?}");
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("bad.golden:{line}: ")), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A crude fuzz over mutations of a good file.
        let bytes = GOOD.as_bytes();
        for i in 0..bytes.len() {
            for b in [b' ', b'\n', b'=', b'#', b'x', 0xff] {
                let mut v = bytes.to_vec();
                v[i] = b;
                let text = String::from_utf8_lossy(&v);
                let _ = Golden::parse(&text, "f");
            }
        }
    }
}
