//! Reading Standard Workload Format traces as jobs.

use std::fs;
use std::io::BufReader;
use std::path::Path;

use partalloc::workload::Job;
use partalloc::workload::ShapeMapping;
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
