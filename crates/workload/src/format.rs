//! The kinds of recorded trace the tools read, spelled once for the
//! command line, the experiment files and Python.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// A recorded trace's file format.
///
/// ```
/// use partalloc_workload::TraceFormat;
/// assert_eq!("sacct".parse::<TraceFormat>()?, TraceFormat::Sacct);
/// assert_eq!(TraceFormat::Swf.to_string(), "swf");
/// assert_eq!(
///     "csv".parse::<TraceFormat>().unwrap_err().to_string(),
///     "unknown trace format `csv` (known: swf, sacct, openb)"
/// );
/// # Ok::<(), partalloc_workload::UnknownTraceFormat>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TraceFormat {
    /// The Standard Workload Format of the Parallel Workloads Archive
    /// ([`crate::swf`]).
    #[default]
    Swf,
    /// A Slurm accounting dump, `sacct --parsable2` ([`crate::sacct`]).
    Sacct,
    /// An OpenB pod list (Alibaba's `cluster-trace-gpu-v2023`): one pod a
    /// row, arriving at its `creation_time` and running until its
    /// `deletion_time`; replayed on a GPU-sharing cluster.
    Openb,
}

impl TraceFormat {
    /// Every format, in the order messages list them.
    pub const ALL: [TraceFormat; 3] = [TraceFormat::Swf, TraceFormat::Sacct, TraceFormat::Openb];

    /// Its name, as `--trace-format`, `trace_format = "…"` and Python spell
    /// it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Swf => "swf",
            TraceFormat::Sacct => "sacct",
            TraceFormat::Openb => "openb",
        }
    }
}

impl TraceFormat {
    /// What a trace of this format is, for help texts.
    #[must_use]
    pub fn summary(self) -> &'static str {
        match self {
            TraceFormat::Swf => "the Standard Workload Format",
            TraceFormat::Sacct => {
                "a Slurm accounting dump, sacct --parsable2 with JobID, Submit, Start, End, NNodes and optionally Timelimit and AllocTRES"
            }
            TraceFormat::Openb => "an OpenB pod list, replayed on gpushare: and openb: machines",
        }
    }

    /// The help of `--trace-format`: every format with its summary.
    #[must_use]
    pub fn help() -> String {
        let each: Vec<String> = TraceFormat::ALL
            .iter()
            .map(|f| format!("{f} ({})", f.summary()))
            .collect();
        format!("What the trace is: {}", each.join("; "))
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A trace format name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
#[error("unknown trace format `{name}` (known: swf, sacct, openb)")]
pub struct UnknownTraceFormat {
    /// The name given, cut for echoing.
    pub name: String,
}

impl FromStr for TraceFormat {
    type Err = UnknownTraceFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name() == s.trim())
            .ok_or_else(|| UnknownTraceFormat {
                name: partalloc_topology::echo(s),
            })
    }
}
