//! `cargo xtask ci`: every check CI makes, in order. This list is the one
//! definition of CI; `.ci/run` only sets up the environment and calls it.
//! After the steps, every crate alone under each of its feature combinations.

use std::path::Path;
use std::process::{Command, ExitCode};

/// A check of what a step prints on standard output; the error is the
/// message to show.
type OutputCheck = fn(&str) -> Result<(), String>;

/// One step of CI: a cargo invocation, extra environment, and optionally a
/// check of what it prints.
struct Step {
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    check_output: Option<OutputCheck>,
}

impl Step {
    const fn run(args: &'static [&'static str]) -> Self {
        Self {
            args,
            env: &[],
            check_output: None,
        }
    }
}

/// Where the quick Fig. 10 is written and checked.
const FIGURES: &str = "target/ci-figures";

/// The steps, in order; the first failure stops CI.
const CI_STEPS: &[Step] = &[
    Step::run(&["fmt", "--all", "--check"]),
    Step::run(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]),
    Step::run(&["test", "--workspace"]),
    // A researcher's own allocator and policy, registered beside the
    // built-ins and run through the conformance checks and the simulator
    // (it exits non-zero when one of its checks fails).
    Step::run(&["run", "-p", "partalloc", "--example", "custom_strategy"]),
    Step {
        args: &["doc", "--workspace", "--no-deps"],
        env: &[("RUSTDOCFLAGS", "-D warnings")],
        check_output: None,
    },
    // A library user can leave the simulator's optional dependencies out.
    Step::run(&["build", "-p", "partalloc-simkit", "--no-default-features"]),
    // The facade is a plain library: the tool's dependencies stay in
    // partalloc-cli.
    Step {
        args: &[
            "tree",
            "-p",
            "partalloc",
            "-e",
            "normal",
            "--prefix",
            "none",
        ],
        env: &[],
        check_output: Some(facade_is_a_plain_library),
    },
    Step::run(&["xtask", "reproduce-fig10", "--quick", "--out", FIGURES]),
    // Every curve of the FGD artifact's 1,020 experiments against its
    // expected results (the workspace tests compare two seeds of each).
    Step::run(&[
        "run",
        "--release",
        "-p",
        "partalloc-gpushare",
        "--example",
        "fgd_all",
    ]),
];

/// The whole adversarial corpus of the command-line tool (`--adversarial`;
/// the workspace tests run its fast part): see docs/guide.md,
/// "Adversarial corpus".
const ADVERSARIAL_STEP: Step = Step {
    args: &[
        "test",
        "-p",
        "partalloc-cli",
        "--test",
        "cli",
        "adversarial",
    ],
    env: &[("PARTALLOC_ADVERSARIAL", "full")],
    check_output: None,
};

/// Steps that are not cargo commands, run after the cargo steps and the
/// figure checks: the Python package, built in a fresh virtual environment
/// and tested with pytest (the script skips, saying so, without python3).
const SCRIPT_STEPS: &[&[&str]] = &[&["bash", "crates/python/ci.sh"]];

/// Runs one script step; its error is the message to print.
fn run_script(args: &[&str]) -> Result<(), String> {
    let line = args.join(" ");
    eprintln!("==> {line}");
    let (program, rest) = args
        .split_first()
        .ok_or_else(|| "an empty script step".to_owned())?;
    match Command::new(program).args(rest).status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("`{line}` failed ({s})")),
        Err(e) => Err(format!("could not run {program}: {e}")),
    }
}

/// Dependencies of the command-line tool that the facade must not have.
const CLI_ONLY: &[&str] = &["clap", "indicatif", "toml"];

/// Checks the output of `cargo tree -p partalloc -e normal --prefix none`
/// (one `name version` per line) for the command-line tool's dependencies.
fn facade_is_a_plain_library(tree: &str) -> Result<(), String> {
    let found: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| CLI_ONLY.contains(name))
        .collect();
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the partalloc facade depends on {}; keep command-line dependencies in partalloc-cli",
            found.join(", ")
        ))
    }
}

/// Runs one step; its error is the message to print.
fn run_step(cargo: &str, step: &Step) -> Result<(), String> {
    let line = format!("cargo {}", step.args.join(" "));
    eprintln!("==> {line}");
    let mut cmd = Command::new(cargo);
    cmd.args(step.args).envs(step.env.iter().copied());
    let status = match step.check_output {
        None => cmd.status(),
        Some(check) => {
            let out = cmd
                .output()
                .map_err(|e| format!("could not run cargo: {e}"))?;
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            if out.status.success() {
                check(&String::from_utf8_lossy(&out.stdout))?;
            }
            Ok(out.status)
        }
    };
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("`{line}` failed ({s})")),
        Err(e) => Err(format!("could not run cargo: {e}")),
    }
}

/// Runs `cargo ARGS`, echoing the command line first.
fn run_args(cargo: &str, args: &[String]) -> Result<(), String> {
    let line = format!("cargo {}", args.join(" "));
    eprintln!("==> {line}");
    match Command::new(cargo).args(args).status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("`{line}` failed ({s})")),
        Err(e) => Err(format!("could not run cargo: {e}")),
    }
}

/// Runs every step (with `adversarial`, the whole adversarial corpus after
/// the workspace steps), then checks the figures; stops at the first
/// failure.
pub(crate) fn run(adversarial: bool) -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    // A fresh quick Fig. 10: the sweeps would otherwise resume old files.
    match std::fs::remove_dir_all(FIGURES) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            eprintln!("error: cannot clear {FIGURES}: {e}");
            return ExitCode::FAILURE;
        }
        _ => {}
    }
    let extra: &[Step] = if adversarial {
        &[ADVERSARIAL_STEP]
    } else {
        &[]
    };
    let result = CI_STEPS
        .iter()
        .chain(extra)
        .try_for_each(|step| run_step(&cargo, step))
        .and_then(|()| feature_checks(Path::new("crates")))
        .and_then(|checks| checks.iter().try_for_each(|args| run_args(&cargo, args)))
        .and_then(|()| check_figures(Path::new(FIGURES)))
        .and_then(|()| SCRIPT_STEPS.iter().try_for_each(|args| run_script(args)));
    match result {
        Ok(()) => {
            eprintln!("figure outputs are well-formed; every step passed");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The checks of the quick Fig. 10: each panel's CSV has
/// the expected header and one row per point (2 strategies × 9 loads) with
/// finite numbers from the `mean` column on, no partial file is left, and
/// each SVG starts with `<svg` and plots every value inside its axes.
pub(crate) fn check_figures(dir: &Path) -> Result<(), String> {
    for panel in ["kang-fig10a", "kang-fig10b", "kang-fig10c"] {
        let csv = dir.join(format!("{panel}.csv"));
        let text = std::fs::read_to_string(&csv).map_err(|e| format!("{}: {e}", csv.display()))?;
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
        if header.get(..2) != Some(&["series", "x"][..])
            || header.get(10..14) != Some(&["mean", "ci95", "jobs_mean", "response_mean"][..])
        {
            return Err(format!("{}: unexpected header {header:?}", csv.display()));
        }
        let mut rows = 0;
        for (i, line) in lines.enumerate() {
            rows += 1;
            for (j, cell) in line.split(',').enumerate().skip(10) {
                if !cell.parse::<f64>().is_ok_and(f64::is_finite) {
                    return Err(format!(
                        "{}: line {}, column {}: {cell:?} is not a finite number",
                        csv.display(),
                        i + 2,
                        j + 1
                    ));
                }
            }
        }
        if rows != 18 {
            return Err(format!("{}: {rows} rows, expected 18", csv.display()));
        }
        let mut partial = csv.clone().into_os_string();
        partial.push(".partial");
        if Path::new(&partial).exists() {
            return Err(format!("{} was left behind", Path::new(&partial).display()));
        }
        let svg = dir.join(format!("{panel}.svg"));
        let text = std::fs::read_to_string(&svg).map_err(|e| format!("{}: {e}", svg.display()))?;
        if !text.starts_with("<svg") {
            return Err(format!("{} is not an SVG document", svg.display()));
        }
        // The chart's y axis covers every plotted value: the plot marks a
        // point it cuts with this note.
        if text.contains(partalloc_simkit::plot::CUT_NOTE) {
            return Err(format!(
                "{} cuts points above its y axis: Fig. 10 must show all of its data",
                svg.display()
            ));
        }
    }
    Ok(())
}

/// Each crate under `crates/`, built alone with no default features, with
/// each of its features by itself, and with all of them, so that a feature
/// combination that does not compile is caught. The features are read from
/// the crates' manifests, so a new one is checked without editing this.
fn feature_checks(crates_dir: &Path) -> Result<Vec<Vec<String>>, String> {
    let mut entries: Vec<_> = std::fs::read_dir(crates_dir)
        .map_err(|e| format!("{}: {e}", crates_dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path().join("Cargo.toml"))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    let mut checks = Vec::new();
    for manifest in entries {
        let text = std::fs::read_to_string(&manifest)
            .map_err(|e| format!("{}: {e}", manifest.display()))?;
        // A crate with its own workspace (the Python bindings) is not part
        // of this one: cargo cannot check it with -p, and its own script
        // tests it.
        if text.lines().any(|l| l.trim() == "[workspace]") {
            continue;
        }
        let (name, features) = package_and_features(&text)
            .ok_or_else(|| format!("{}: no package name", manifest.display()))?;
        let check = |extra: &[&str]| -> Vec<String> {
            ["check", "-p", name.as_str(), "--no-default-features"]
                .iter()
                .chain(extra)
                .map(|s| (*s).to_owned())
                .collect()
        };
        checks.push(check(&[]));
        for f in &features {
            checks.push(check(&["--features", f]));
        }
        if features.len() > 1 {
            checks.push(check(&["--all-features"]));
        }
    }
    Ok(checks)
}

/// The package name and the features (other than `default`) of a manifest.
fn package_and_features(manifest: &str) -> Option<(String, Vec<String>)> {
    let mut section = "";
    let mut name = None;
    let mut features = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if section == "[package]" && key == "name" {
            name = Some(value.trim().trim_matches('"').to_owned());
        } else if section == "[features]"
            && key != "default"
            && !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            features.push(key.to_owned());
        }
    }
    Some((name?, features))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{DEFAULT_SEED, RunArgs, reproduce};

    #[test]
    fn the_facade_check_finds_command_line_dependencies() {
        let plain = "partalloc v0.1.0 (/w/crates/partalloc)\npartalloc-simkit v0.1.0\ncsv v1.4.0\ntoml_datetime v1.1.3\n";
        assert_eq!(facade_is_a_plain_library(plain), Ok(()));
        let cli = "partalloc v0.1.0\nclap v4.6.7\nclap_builder v4.6.7\ntoml v1.2.1\n";
        let err = facade_is_a_plain_library(cli).unwrap_err();
        assert!(err.contains("clap, toml"), "{err}");
    }

    #[test]
    fn ci_runs_the_workspace_tests_and_the_feature_checks() {
        let lines: Vec<String> = CI_STEPS.iter().map(|s| s.args.join(" ")).collect();
        for want in [
            "test --workspace",
            "run -p partalloc --example custom_strategy",
            "build -p partalloc-simkit --no-default-features",
            "tree -p partalloc -e normal --prefix none",
        ] {
            assert!(lines.iter().any(|l| l == want), "{want} missing: {lines:?}");
        }
    }

    #[test]
    fn feature_checks_cover_every_feature_of_every_crate() {
        let manifest = "[package]\nname = \"demo\"\n\n[features]\ndefault = [\"cli\"]\n\
                        # a comment\nserde = [\n    \"dep:serde\",\n]\nplot = [\"dep:plotters\"]\n\n\
                        [dependencies]\nserde = { version = \"1\" }\n";
        let (name, features) = package_and_features(manifest).unwrap();
        assert_eq!(name, "demo");
        assert_eq!(features, ["serde", "plot"]);
        let checks =
            feature_checks(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../crates"))).unwrap();
        let topology: Vec<String> = checks
            .iter()
            .filter(|c| c[2] == "partalloc-topology")
            .map(|c| c[3..].join(" "))
            .collect();
        assert_eq!(
            topology,
            [
                "--no-default-features",
                "--no-default-features --features serde"
            ]
        );
        let simkit: Vec<String> = checks
            .iter()
            .filter(|c| c[2] == "partalloc-simkit")
            .map(|c| c[3..].join(" "))
            .collect();
        for f in ["--features serde", "--features plot", "--all-features"] {
            assert!(simkit.iter().any(|c| c.ends_with(f)), "{simkit:?}");
        }
        assert!(checks.iter().all(|c| c[2] != "partalloc-py"));
    }

    #[test]
    fn quick_fig10_passes_the_ci_checks_and_a_damaged_csv_fails_them() {
        let dir = tempfile::tempdir().unwrap();
        let args = RunArgs {
            quick: true,
            paper_scale: false,
            seeds: None,
            jobs: None,
            horizon: None,
            threads: 2,
            out: dir.path().to_path_buf(),
            seed: DEFAULT_SEED,
            fresh: false,
        };
        reproduce("kang-fig10", &args).unwrap();
        check_figures(dir.path()).unwrap();
        let csv = dir.path().join("kang-fig10b.csv");
        let text = std::fs::read_to_string(&csv).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut cells: Vec<String> = lines[3].split(',').map(str::to_owned).collect();
        cells[13] = "NaN".to_owned();
        lines[3] = cells.join(",");
        std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
        let err = check_figures(dir.path()).unwrap_err();
        assert!(err.contains("line 4, column 14"), "{err}");
        let short: Vec<&str> = text.lines().take(10).collect();
        std::fs::write(&csv, short.join("\n") + "\n").unwrap();
        assert!(check_figures(dir.path()).unwrap_err().contains("9 rows"));
    }
}
