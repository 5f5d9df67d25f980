//! `read_swf` / `write_swf`: Standard Workload Format files as columns.

use std::fs;
use std::io::BufReader;
use std::path::PathBuf;

use partalloc_workload::swf::{SwfHeader, SwfReader, SwfRecord, SwfWriter};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::guard;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_swf, m)?)?;
    m.add_function(wrap_pyfunction!(write_swf, m)?)?;
    Ok(())
}

/// The 18 fields of a record, in file order: (name, is an integer field).
pub(crate) const FIELDS: [(&str, bool); 18] = [
    ("job_number", true),
    ("submit_time", false),
    ("wait_time", false),
    ("run_time", false),
    ("allocated_processors", true),
    ("average_cpu_time", false),
    ("used_memory", false),
    ("requested_processors", true),
    ("requested_time", false),
    ("requested_memory", false),
    ("status", true),
    ("user_id", true),
    ("group_id", true),
    ("executable", true),
    ("queue", true),
    ("partition", true),
    ("preceding_job", true),
    ("think_time", false),
];

/// A field as f64, NaN when unknown (−1 in the file).
pub(crate) fn get(r: &SwfRecord, i: usize) -> f64 {
    let f = |x: Option<f64>| x.unwrap_or(f64::NAN);
    let u = |x: Option<u64>| x.map_or(f64::NAN, |v| v as f64);
    match i {
        0 => r.job_number as f64,
        1 => f(r.submit_time),
        2 => f(r.wait_time),
        3 => f(r.run_time),
        4 => u(r.allocated_processors),
        5 => f(r.average_cpu_time),
        6 => f(r.used_memory),
        7 => u(r.requested_processors),
        8 => f(r.requested_time),
        9 => f(r.requested_memory),
        10 => u(r.status),
        11 => u(r.user_id),
        12 => u(r.group_id),
        13 => u(r.executable),
        14 => u(r.queue),
        15 => u(r.partition),
        16 => u(r.preceding_job),
        _ => f(r.think_time),
    }
}

/// Reads a trace: `(header lines, {field: little-endian f64 bytes})`, NaN
/// for unknown values.
#[pyfunction]
#[pyo3(signature = (path, *, lenient=false))]
fn read_swf<'py>(
    py: Python<'py>,
    path: PathBuf,
    lenient: bool,
) -> PyResult<(Vec<String>, Bound<'py, PyDict>)> {
    let (header, cols) = py.allow_threads(|| {
        guard(|| {
            let file = fs::File::open(&path)
                .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
            let swf = |e| PyValueError::new_err(format!("{}: {e}", path.display()));
            let mut reader = SwfReader::new(BufReader::new(file))
                .map_err(swf)?
                .lenient(lenient);
            let header = reader.header().lines().to_vec();
            let mut cols: Vec<Vec<u8>> = vec![Vec::new(); FIELDS.len()];
            for r in reader.by_ref() {
                let r = r.map_err(swf)?;
                for (i, c) in cols.iter_mut().enumerate() {
                    c.extend_from_slice(&get(&r, i).to_le_bytes());
                }
            }
            Ok((header, cols))
        })
    })?;
    let d = PyDict::new(py);
    for ((name, _), c) in FIELDS.iter().zip(&cols) {
        d.set_item(*name, PyBytes::new(py, c))?;
    }
    Ok((header, d))
}

fn opt_f(x: f64) -> Option<f64> {
    (!x.is_nan() && x >= 0.0).then_some(x)
}

fn opt_u(name: &str, row: usize, x: f64) -> PyResult<Option<u64>> {
    if x.is_nan() || x < 0.0 {
        return Ok(None);
    }
    if x.fract() != 0.0 || x > 9.0e15 {
        return Err(PyValueError::new_err(format!(
            "row {row}: {name} {x} is not a whole number"
        )));
    }
    Ok(Some(x as u64))
}

/// Writes a trace from columns of f64 (NaN or negative: unknown) and
/// header lines (`; Key: value`).
#[pyfunction]
#[pyo3(signature = (path, columns, header=Vec::new()))]
fn write_swf(path: PathBuf, columns: Vec<Vec<f64>>, header: Vec<String>) -> PyResult<()> {
    if columns.len() != FIELDS.len() {
        return Err(PyValueError::new_err(format!(
            "a trace has {} fields, got {} columns",
            FIELDS.len(),
            columns.len()
        )));
    }
    let rows = columns[0].len();
    if let Some((i, c)) = columns.iter().enumerate().find(|(_, c)| c.len() != rows) {
        return Err(PyValueError::new_err(format!(
            "column {} has {} rows, job_number has {rows}",
            FIELDS[i].0,
            c.len()
        )));
    }
    guard(|| {
        let mut h = SwfHeader::new();
        for (i, line) in header.iter().enumerate() {
            h.push_line(line, i as u64 + 1);
        }
        let mut records = Vec::with_capacity(rows);
        for row in 0..rows {
            // Columns are read across, one record per row.
            let c = |i: usize| {
                columns
                    .get(i)
                    .and_then(|col| col.get(row))
                    .copied()
                    .unwrap_or(f64::NAN)
            };
            let u = |i: usize| opt_u(FIELDS[i].0, row, c(i));
            let id = u(0)?.ok_or_else(|| {
                PyValueError::new_err(format!("row {row}: job_number must be a whole number"))
            })?;
            let mut r = SwfRecord::unknown(id);
            r.submit_time = opt_f(c(1));
            r.wait_time = opt_f(c(2));
            r.run_time = opt_f(c(3));
            r.allocated_processors = u(4)?;
            r.average_cpu_time = opt_f(c(5));
            r.used_memory = opt_f(c(6));
            r.requested_processors = u(7)?;
            r.requested_time = opt_f(c(8));
            r.requested_memory = opt_f(c(9));
            r.status = u(10)?;
            r.user_id = u(11)?;
            r.group_id = u(12)?;
            r.executable = u(13)?;
            r.queue = u(14)?;
            r.partition = u(15)?;
            r.preceding_job = u(16)?;
            r.think_time = opt_f(c(17));
            r.check_writable()
                .map_err(|e| PyValueError::new_err(format!("row {row}: {e}")))?;
            records.push(r);
        }
        let io = |e: std::io::Error| PyOSError::new_err(format!("{}: {e}", path.display()));
        let swf = |e| PyValueError::new_err(format!("{}: {e}", path.display()));
        let mut w = SwfWriter::new(Vec::new(), &h).map_err(swf)?;
        for r in &records {
            w.write(r).map_err(swf)?;
        }
        let bytes = w.finish().map_err(io)?;
        partalloc_simkit::write_atomic(&path, &bytes).map_err(io)?;
        Ok(())
    })
}
