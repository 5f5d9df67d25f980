//! Reading traces as jobs: Standard Workload Format, and Slurm accounting
//! dumps.

use std::fs;
use std::io::BufReader;
use std::path::Path;

use partalloc::workload::Job;
use partalloc::workload::ShapeMapping;
use partalloc::workload::sacct::SacctTrace;
use partalloc::workload::swf::{SwfError, SwfHeader, SwfReader};

use crate::error::CliError;

/// Reads a whole trace as jobs on `mapping`, with line-numbered errors.
pub(crate) fn read_trace(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<(Vec<Job>, SwfHeader, u64), CliError> {
    let file = fs::File::open(path).map_err(CliError::io(path))?;
    let swf = |source| CliError::Swf {
        path: path.to_path_buf(),
        source,
    };
    let reader = SwfReader::new(BufReader::new(file))
        .map_err(swf)?
        .lenient(lenient);
    let header = reader.header().clone();
    let mut jobs = reader.jobs(mapping);
    let mut out = Vec::new();
    while let Some(j) = jobs.next() {
        match j {
            Ok(j) => out.push(j),
            Err(e) => {
                // Mapping and unusable-record errors name the job; add the line.
                let line = jobs.reader().line();
                return Err(match e {
                    e @ (SwfError::Unusable { .. } | SwfError::Mapping { .. }) => {
                        CliError::input(format!("{}: line {line}: {e}", path.display()))
                    }
                    e => swf(e),
                });
            }
        }
    }
    let skipped = jobs.reader().skipped();
    // Traces are sorted by submit time; make sure, keeping ties in file order.
    out.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok((out, header, skipped))
}

/// Reads a `sacct --parsable2` dump as jobs on a machine of `machine_nodes`
/// nodes: jobs that never ran or do not fit are dropped (and counted with
/// the skipped lines); bad lines stop the read unless `lenient`.
pub(crate) fn read_sacct(
    path: &Path,
    machine_nodes: u64,
    lenient: bool,
) -> Result<(Vec<Job>, u64), CliError> {
    let text = fs::read_to_string(path).map_err(CliError::io(path))?;
    let bad = |e: partalloc::workload::sacct::SacctError| {
        CliError::input(format!("{}: {e}", path.display()))
    };
    let trace = SacctTrace::parse(&text, lenient).map_err(bad)?;
    let skipped = trace.skipped.len() as u64;
    let (trace, dropped) = trace.usable(machine_nodes);
    let jobs = trace.jobs(machine_nodes).map_err(bad)?;
    Ok((jobs, skipped + dropped as u64))
}
