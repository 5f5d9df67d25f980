//! `cargo xtask package-check`: every library crate, as `cargo package`
//! makes it for crates.io, compiles its own tests there.
//!
//! The crates are packaged together (cargo resolves their dependencies on
//! each other through a local registry of the packages it just made),
//! unpacked side by side under `target/package-check/`, and gathered in a
//! scratch workspace whose `[patch.crates-io]` points every `partalloc-*`
//! dependency at the unpacked copy. There each crate alone runs `cargo test
//! --all-targets --no-run`: a test that reads a file the package leaves out,
//! or a dev-dependency that packaging drops, fails here and nowhere else.
//! Opt-in (it compiles the library crates once more and needs the
//! crates.io index), so not a CI step.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The crates that are published, in dependency order; `partalloc-testkit`
/// is their dev-dependency and is published so that the dependency
/// survives packaging.
const PUBLISHED: &[&str] = &[
    "partalloc-testkit",
    "partalloc-topology",
    "partalloc-gpushare",
    "partalloc-allocators",
    "partalloc-workload",
    "partalloc-schedulers",
    "partalloc-simkit",
    "partalloc-report",
    "partalloc-experiment",
    "partalloc",
];

/// Where the packages are made, unpacked and built.
const DIR: &str = "target/package-check";

/// Runs a command, echoing it first; its error is the message to print.
fn run_command(cmd: &mut Command) -> Result<(), String> {
    let line = format!("{cmd:?}");
    eprintln!("==> {line}");
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{line} failed ({s})")),
        Err(e) => Err(format!("could not run {line}: {e}")),
    }
}

/// The workspace version: every published crate has it.
fn workspace_version(manifest: &str) -> Option<String> {
    let mut section = "";
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[workspace.package]"
            && let Some((key, value)) = line.split_once('=')
            && key.trim() == "version"
        {
            return Some(value.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// The manifest of the scratch workspace: the unpacked crates as members,
/// and every dependency on one of them patched to the unpacked copy.
fn scratch_manifest(version: &str) -> String {
    let mut m = String::from(
        "# Made by `cargo xtask package-check`: the packaged crates, unpacked.\n\
         [workspace]\nresolver = \"3\"\nmembers = [\n",
    );
    for name in PUBLISHED {
        let _ = writeln!(m, "    \"{name}-{version}\",");
    }
    m.push_str("]\n\n[patch.crates-io]\n");
    for name in PUBLISHED {
        let _ = writeln!(m, "{name} = {{ path = \"{name}-{version}\" }}");
    }
    m
}

/// `cargo xtask package-check`: the check, its failure printed.
pub(crate) fn run() -> ExitCode {
    match run_check() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Packages, unpacks and test-builds every published crate.
fn run_check() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = std::fs::read_to_string("Cargo.toml")
        .map_err(|e| format!("Cargo.toml: {e} (run from the repository root)"))?;
    let version = workspace_version(&manifest)
        .ok_or_else(|| "Cargo.toml: no [workspace.package] version".to_owned())?;
    let dir = Path::new(DIR);
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot clear {DIR}: {e}"));
        }
        _ => {}
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {DIR}: {e}"))?;
    let target = dir.join("target");
    // The working tree as it is, committed or not.
    let mut package = Command::new(&cargo);
    package
        .args(["package", "--no-verify", "--allow-dirty", "--target-dir"])
        .arg(&target);
    for name in PUBLISHED {
        package.args(["-p", name]);
    }
    run_command(&mut package)?;
    for name in PUBLISHED {
        let file: PathBuf = target
            .join("package")
            .join(format!("{name}-{version}.crate"));
        run_command(
            Command::new("tar")
                .arg("-xzf")
                .arg(&file)
                .arg("-C")
                .arg(dir),
        )?;
    }
    std::fs::write(dir.join("Cargo.toml"), scratch_manifest(&version))
        .map_err(|e| format!("cannot write {DIR}/Cargo.toml: {e}"))?;
    for name in PUBLISHED {
        run_command(
            Command::new(&cargo)
                .current_dir(dir)
                .args(["test", "--all-targets", "--no-run", "-p", name])
                .arg("--target-dir")
                .arg("target"),
        )?;
    }
    eprintln!(
        "the {} published crates, as packaged, build their tests",
        PUBLISHED.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list is the workspace's publishable crates: a crate that is
    /// published but not checked, or checked but not published, fails.
    #[test]
    fn the_checked_crates_are_the_published_ones() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut published = Vec::new();
        for entry in std::fs::read_dir(root.join("crates")).unwrap() {
            let manifest = entry.unwrap().path().join("Cargo.toml");
            let Ok(text) = std::fs::read_to_string(&manifest) else {
                continue;
            };
            if text.lines().any(|l| l.trim() == "publish = false") {
                continue;
            }
            let name = text
                .lines()
                .find_map(|l| l.strip_prefix("name = "))
                .unwrap()
                .trim_matches('"');
            published.push(name.to_owned());
        }
        // The tool is published too; its tests and bench need the
        // repository, so its package leaves them out.
        published.retain(|n| n != "partalloc-cli");
        published.sort();
        let mut checked: Vec<String> = PUBLISHED.iter().map(|s| (*s).to_owned()).collect();
        checked.sort();
        assert_eq!(published, checked);
    }
}
