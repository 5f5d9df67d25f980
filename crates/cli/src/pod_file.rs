//! Pods described in TOML files: a `--topology` value that names a `.toml`
//! file is read here (the text form of `Topology` never touches files).

use std::path::Path;

use partalloc::topology::Topology;
use partalloc::topology::pod::{Pod, PodDescription};

use crate::error::CliError;

/// Whether a `--topology` value names a pod file rather than a text form.
pub(crate) fn is_pod_file(text: &str) -> bool {
    Path::new(text.trim())
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// Reads the pod described in the TOML file at `path` (keys `preset`,
/// `name`, `sides`, `cube`, `wiring`, `rotate`, `shapes`; see
/// `examples/pods/`).
pub(crate) fn load_pod_file(path: &Path) -> Result<Topology, CliError> {
    let text = crate::limits::read_text(path, crate::limits::FileKind::Config)?;
    let what = || format!("pod file {}", crate::error::shown(path));
    let description: PodDescription =
        toml::from_str(&text).map_err(|e| toml_error(&text, path, &e))?;
    let pod =
        Pod::try_from(description).map_err(|e| CliError::input(format!("{}: {e}", what())))?;
    Ok(pod.into())
}

/// A TOML error in one line: the file, the line of the fault when known,
/// and the parser's message with its line breaks joined (the form of the
/// sweep file's errors).
pub(crate) fn toml_error(text: &str, path: &Path, e: &toml::de::Error) -> CliError {
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
    CliError::input(format!(
        "pod file {}: {line}{}",
        crate::error::shown(path),
        crate::error::clipped(&message)
    ))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/pods/{name}"))
    }

    #[test]
    fn the_example_pods_load_and_print_a_text_form_that_parses_back() {
        for (file, nodes, name) in [
            ("quarter-v4.toml", 512, "quarter-v4"),
            ("lab-2d.toml", 128, "lab-2d"),
            ("half-v5e.toml", 128, "half-v5e"),
        ] {
            let t = load_pod_file(&example(file)).unwrap();
            assert_eq!(t.num_nodes(), nodes, "{file}");
            assert_eq!(t.as_pod().and_then(Pod::name), Some(name), "{file}");
            assert_eq!(t.to_string().parse::<Topology>().unwrap(), t, "{file}");
        }
        assert!(is_pod_file("examples/pods/lab-2d.TOML"));
        assert!(!is_pod_file("pod:tpu-v4"));
    }

    #[test]
    fn a_bad_pod_file_names_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "sides = \"8x8\"\nshapes = [\"16x2\"]\n").unwrap();
        let e = load_pod_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("bad.toml") && e.contains("16x2 does not fit"),
            "{e}"
        );
        std::fs::write(&path, "sides = \"8x8\"\nshape = [\"2x2\"]\n").unwrap();
        let e = load_pod_file(&path).unwrap_err().to_string();
        assert!(e.contains("unknown field"), "{e}");
        // Syntax errors and an empty file are one line naming file and line.
        for (text, says) in [
            (
                "sides = \"8x8\"\nname = \n",
                "bad.toml: line 2: string values must be quoted, expected literal string",
            ),
            (
                "",
                "bad.toml: the pod description gives neither sides nor a preset; add sides",
            ),
            ("sides = 8\n", "bad.toml: line 1: invalid type: integer `8`"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = load_pod_file(&path).unwrap_err().to_string();
            assert!(e.contains(says) && !e.contains('\n'), "{text:?}: {e}");
        }
        let e = load_pod_file(&dir.path().join("missing.toml")).unwrap_err();
        assert!(e.to_string().contains("missing.toml"), "{e}");
    }
}
