//! Writing results: number and document formatting, standard output, and
//! files written atomically.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use partalloc::simkit::atomic;
use serde::Serialize;

use crate::error::CliError;

/// Output formats of the reporting commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Aligned text for the terminal.
    #[value(alias = "table")]
    Text,
    /// One JSON document.
    Json,
    /// CSV with a header line.
    Csv,
}

/// Formats `x` for a table: 6 significant digits, fixed or scientific.
pub(crate) fn num(x: f64) -> String {
    if x.abs() < 1e-9 {
        return "0".to_owned();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    if x == 0.0 || (1e-3..1e7).contains(&x.abs()) {
        let digits = if x == 0.0 {
            0
        } else {
            (5 - x.abs().log10().floor() as i32).clamp(0, 9) as usize
        };
        format!("{x:.digits$}")
    } else {
        format!("{x:.4e}")
    }
}

/// Writes a CSV document from rows of text.
pub(crate) fn csv_text(header: &[&str], rows: &[Vec<String>]) -> Result<String, CliError> {
    let err = |e: csv::Error| CliError::input(format!("cannot format CSV: {e}"));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(r).map_err(err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| CliError::input(format!("cannot format CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| CliError::input(format!("cannot format CSV: {e}")))
}

/// `value` as one pretty-printed JSON document ending in a newline.
pub(crate) fn json_text<T: Serialize + ?Sized>(value: &T) -> Result<String, CliError> {
    let mut s = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::input(format!("cannot format JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// Writes `text` to `output` (atomically) if given, else to standard output.
pub(crate) fn write_or_emit(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    match output {
        Some(path) => write_atomic(path, text.as_bytes()),
        None => emit(text),
    }
}

/// Writes `text` to standard output; a closed pipe (`| head`) is not an error.
pub(crate) fn emit(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CliError::Io {
            path: PathBuf::from("<stdout>"),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Checks every output path of a command before any work: each must be
/// writable as [`atomic::destination`] says (not a directory, its
/// directory existing, no dangling link), no two may be the same file, and
/// none may be one of the command's input files. Identity is the file's,
/// not its name's: a link or another spelling of an input is refused too.
/// Devices, FIFOs and standard output are written in place and never
/// clash.
pub(crate) fn check_outputs(outputs: &[(&str, &Path)], inputs: &[&Path]) -> Result<(), CliError> {
    let mut files: Vec<(&str, &Path, FileId)> = Vec::new();
    for &(flag, path) in outputs {
        let Some(id) = replaced(flag, path)? else {
            continue;
        };
        for &input in inputs {
            if FileId::existing(input).is_some_and(|i| i == id) {
                return Err(CliError::OutputIsInput {
                    flag: flag.to_owned(),
                    path: path.to_path_buf(),
                    input: input.to_path_buf(),
                });
            }
        }
        if let Some((other, _, _)) = files.iter().find(|(_, _, i)| *i == id) {
            return Err(CliError::SameOutput {
                first: (*other).to_owned(),
                second: flag.to_owned(),
                path: path.to_path_buf(),
            });
        }
        files.push((flag, path, id));
    }
    Ok(())
}

/// The identity of the regular file writing `path` (named by `flag`)
/// replaces, after checking that it may be replaced: a destination
/// [`atomic::destination`] accepts, not write-protected, and not a file
/// the run has read ([`register_input`]). `None` for what is written in
/// place (a device, a FIFO, standard output).
fn replaced(flag: &str, path: &Path) -> Result<Option<FileId>, CliError> {
    let refuse = |reason: String| CliError::OutputPath {
        flag: flag.to_owned(),
        path: path.to_path_buf(),
        reason,
    };
    let dest = atomic::destination(path).map_err(|e| refuse(e.to_string()))?;
    let atomic::Destination::Replace(real) = dest else {
        return Ok(None);
    };
    let id = FileId::of(&real)?;
    guard(flag, path, &id)?;
    Ok(Some(id))
}

/// Refuses to replace the existing file `id` (named `path` by `flag`) when
/// it is write-protected or a file the run has read.
fn guard(flag: &str, path: &Path, id: &FileId) -> Result<(), CliError> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().readonly()) {
        return Err(CliError::OutputPath {
            flag: flag.to_owned(),
            path: path.to_path_buf(),
            reason:
                "the file is write-protected; make it writable (chmod u+w) or write to another file"
                    .to_owned(),
        });
    }
    match input_identical_to(id) {
        Some(input) => Err(CliError::OutputIsInput {
            flag: flag.to_owned(),
            path: path.to_path_buf(),
            input,
        }),
        None => Ok(()),
    }
}

pub(crate) use partalloc_experiment::files::register_input;
use partalloc_experiment::files::{FileId, input_identical_to};

/// Writes `bytes` to `path` atomically (simkit's [`write_atomic`]), so
/// `path` never holds partial content.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    if let Some(id) = FileId::existing(path) {
        guard("the output", path, &id)?;
    }
    atomic::write_atomic(path, bytes).map_err(CliError::io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_compactly() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1e-17), "0");
        assert_eq!(num(2000.0), "2000");
        assert_eq!(num(972.3902), "972.390");
        assert_eq!(num(0.4661), "0.466100");
        assert_eq!(num(1.5e9 + 0.5), "1.5000e9");
    }

    #[test]
    fn a_file_read_this_run_or_write_protected_is_never_replaced() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.yaml");
        std::fs::write(&input, b"keep").unwrap();
        register_input(&input, &std::fs::File::open(&input).unwrap());
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        for p in [&input, &link] {
            let e = write_atomic(p, b"x").unwrap_err().to_string();
            assert!(e.contains("that is the input"), "{e}");
            let e = check_outputs(&[("-o", p)], &[]).unwrap_err().to_string();
            assert!(e.contains("that is the input"), "{e}");
        }
        assert_eq!(std::fs::read(&input).unwrap(), b"keep");
        let ro = dir.path().join("ro.txt");
        std::fs::write(&ro, b"keep").unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = check_outputs(&[("-o", &ro)], &[]).unwrap_err().to_string();
        assert!(e.contains("write-protected"), "{e}");
        assert!(write_atomic(&ro, b"x").is_err());
        assert_eq!(std::fs::read(&ro).unwrap(), b"keep");
    }

    #[test]
    fn atomic_writes_name_the_file_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        write_atomic(&p, b"one").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let bad = dir.path().join("missing/out.txt");
        let e = write_atomic(&bad, b"x").unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}: ", bad.display())), "{e}");
    }
}
