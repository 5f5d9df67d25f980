//! Randomized input for the command line and experiment files, driven
//! through the parsing functions (no process per case).
//!
//! Case counts per run (each suite `ProptestConfig::with_cases(10_000)`):
//! - command lines through clap (`Cli::try_parse_from`): 10,000 from a
//!   grammar of each subcommand's flags and values and 10,000 mutated
//!   valid command lines;
//! - the `[workload]` table of an experiment (the laws behind `--shapes`,
//!   `--sides`, `--max-sides`, `--cube-dims`, `--residence`,
//!   `--dependence`), read and built on small machines with a random
//!   load: 10,000;
//! - experiment files (`parse_experiment`, then `validate`): 10,000 from a
//!   grammar and 10,000 mutated examples.
//!
//! Each input must give a value or an error naming the offending token,
//! flag, field or line — never a panic.

use std::path::Path;

use clap::Parser as _;
use partalloc_testkit::mutate;
use proptest::prelude::*;
use proptest::sample::{Index, select};

use crate::Cli;
use crate::run::parse_topology;
use crate::sweep::{parse_experiment, validate};
use partalloc::workload::WorkloadOptions;

use crate::error::CliError;

const PIECES: &[&str] = &[
    "-",
    "--",
    "=",
    ":",
    ",",
    "x",
    "[",
    "]",
    "\"",
    "\n",
    " ",
    "0",
    "-1",
    "1e309",
    "NaN",
    "18446744073709551616",
    "é",
    "🦀",
    "\0",
    "",
];

const MACHINES: &[&str] = &[
    "mesh:8x8",
    "hypercube:5",
    "torus:4x4",
    "mesh:4x4x4",
    "kary:4^2",
    "mesh:40000x40000",
    "hypercube:30",
    "mesh:0x4",
    "blob:3",
];

const VALUES: &[&str] = &[
    "0",
    "1",
    "0.5",
    "-1",
    "1e300",
    "NaN",
    "inf",
    "",
    "auto",
    "sides",
    "cube",
    "cubic",
    "noncubic",
    "uniform",
    "normal",
    "exponential",
    "exp",
    "dependent",
    "independent",
    "shapes",
    "nodes",
    "text",
    "json",
    "csv",
    "table",
    "exp:1",
    "uniform:0-2",
    "uniform:1e-3",
    "hyper:5,0.95,4",
    "const:3",
    "4x4",
    "1,2,3",
    "uniform:1-3",
    "fsl",
    "buddy",
    "fcfs",
    "paging",
    "bogus",
    "99999999999999999999",
];

/// The flags of each subcommand (those taking a value end with '=').
fn flags(sub: &str) -> &'static [&'static str] {
    const LAWS: &[&str] = &[
        "--load=",
        "--allow-saturation",
        "--shapes=",
        "--sides=",
        "--max-sides=",
        "--cube-dims=",
        "--residence=",
        "--dependence=",
    ];
    match sub {
        "simulate" => &[
            "--topology=",
            "--allocator=",
            "--scheduler=",
            "--trace=",
            "--mapping=",
            "--lenient",
            "--jobs=",
            "--warmup=",
            "--time=",
            "--seeds=",
            "--seed=",
            "--format=",
            "--threads=",
            "--quiet",
            "--load=",
            "--shapes=",
            "--residence=",
            "--dependence=",
            "--sides=",
        ],
        "show" => &[
            "--topology=",
            "--allocator=",
            "--at=",
            "--slice=",
            "--svg=",
            "--seed=",
            "--trace=",
            "--mapping=",
            "--jobs=",
            "--load=",
            "--cube-dims=",
            "--max-sides=",
        ],
        "generate" => &[
            "--topology=",
            "--out=",
            "--jobs=",
            "--seed=",
            "--warmup=",
            "--lenient",
            "--load=",
            "--residence=",
        ],
        "replay" => &[
            "--topology=",
            "--allocators=",
            "--reference=",
            "--scheduler=",
            "--load-scale=",
            "--target-load=",
            "--jobs=",
            "--lenient",
            "--format=",
            "--threads=",
            "--quiet",
        ],
        "sweep" => &["--out=", "--threads=", "--limit=", "--quiet", "--no-plots"],
        "strategies" => &["--format=", "--topology=", "--json"],
        _ => LAWS,
    }
}

fn argv() -> impl Strategy<Value = Vec<String>> {
    let sub = select(
        &[
            "simulate",
            "show",
            "generate",
            "replay",
            "sweep",
            "strategies",
            "help",
            "bogus",
        ][..],
    );
    (
        sub,
        prop::collection::vec((any::<Index>(), select(VALUES), select(MACHINES)), 0..9),
        select(&["", "file.swf", "exp.toml"][..]),
    )
        .prop_map(|(sub, picks, positional)| {
            let fl = flags(sub);
            let mut v = vec!["partalloc".to_owned(), sub.to_owned()];
            if !positional.is_empty() {
                v.push(positional.to_owned());
            }
            for (at, value, machine) in picks {
                let f = fl[at.index(fl.len())];
                match f.strip_suffix('=') {
                    Some("--topology") => v.extend(["--topology".to_owned(), machine.to_owned()]),
                    Some(name) => v.extend([name.to_owned(), value.to_owned()]),
                    None => v.push(f.to_owned()),
                }
            }
            v
        })
}

fn mutated_argv() -> impl Strategy<Value = Vec<String>> {
    let valid = select(
        &[
            "simulate -t mesh:8x8 -a fsl --load 0.6 --residence exp:10 --format csv",
            "show --topology hypercube:6 --allocator buddy --at 12 --slice 0",
            "generate -t mesh:8x8 --load 0.6 --jobs 200 --seed 7 --out g.swf",
            "replay t.swf -t hypercube:7 --allocators buddy,partner --reference paging --threads 2",
            "sweep exp.toml --threads 2 --limit 3 --quiet",
            "strategies --format json --topology torus:8x8",
        ][..],
    );
    (
        valid,
        prop::collection::vec((any::<u8>(), any::<Index>(), select(PIECES)), 1..5),
    )
        .prop_map(|(line, edits)| {
            let mut text = line.to_owned();
            for (op, at, piece) in edits {
                mutate(&mut text, op, at, piece);
            }
            std::iter::once("partalloc".to_owned())
                .chain(text.split(' ').map(str::to_owned))
                .collect()
        })
}

/// clap either parses the line or says which token or flag is wrong.
fn check_argv(args: &[String]) -> Result<(), TestCaseError> {
    use clap::error::ErrorKind;
    let Err(e) = Cli::try_parse_from(args) else {
        return Ok(());
    };
    // clap drops control characters when it prints a token.
    let visible = |t: &str| t.chars().filter(|c| !c.is_control()).collect::<String>();
    let msg = visible(&e.to_string());
    match e.kind() {
        // These name what is missing or print help, not a token given.
        ErrorKind::MissingRequiredArgument
        | ErrorKind::MissingSubcommand
        | ErrorKind::DisplayHelp
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        | ErrorKind::DisplayVersion => {}
        _ => {
            let given: Vec<String> = args.iter().skip(1).map(|a| visible(a)).collect();
            // A token named in full, or a piece of one quoted ('-1' of
            // "-1imulate").
            let quoted = msg
                .split('\'')
                .skip(1)
                .step_by(2)
                .any(|q| given.iter().any(|a| a.contains(q)));
            let named = quoted
                || given.iter().any(|a| {
                    let token = a.split('=').next().unwrap_or(a);
                    !token.is_empty() && msg.contains(token)
                });
            // An empty token has nothing to quote: clap names the argument
            // that got it ("a value is required for '<TRACE>'").
            let empty =
                given.iter().any(String::is_empty) && msg.contains("a value is required for '");
            prop_assert!(named || empty, "{args:?}: {msg}");
        }
    }
    Ok(())
}

/// A `[workload]` table (as in an experiment file) from the values each
/// field takes, and garbage.
fn workload_spec() -> impl Strategy<Value = (String, f64, &'static str)> {
    let field = |good: &'static [&'static str]| prop_oneof![3 => select(good).prop_map(str::to_owned), 1 => select(VALUES).prop_map(str::to_owned), 1 => ".{0,8}"];
    (
        (
            field(&["auto", "sides", "cubic", "noncubic", "cube"]),
            field(&["uniform", "normal", "exponential"]),
            prop::option::of(field(&["4x4", "8x8", "2x2x2", "4", "16x16", "0x1"])),
            field(&["uniform", "normal", "uniform:1-3", "1,2,3", "0.5,0.5", "uniform:3-1"]),
            field(&[
                "exp:1",
                "exp:10",
                "uniform:0-2",
                "uniform:1e-3",
                "uniform:1e-3-2e-3",
                "hyper:5,0.95,4",
                "const:3",
            ]),
            field(&["dependent", "independent"]),
        ),
        prop_oneof![
            select(&[0.1, 0.5, 0.99, 1.0, 2.0, 0.0, -1.0, f64::NAN, f64::INFINITY, 1e300][..]),
            any::<f64>()
        ],
        any::<bool>(),
        select(&["mesh:8x8", "hypercube:5", "torus:4x4", "mesh:4x4x4", "kary:4^2"][..]),
    )
        .prop_map(
            |((shapes, sides, max_sides, cube_dims, residence, dependence), load, sat, machine)| {
                let mut t = format!(
                    "shapes = {shapes:?}\nsides = {sides:?}\ncube_dims = {cube_dims:?}\nresidence = {residence:?}\ndependence = {dependence:?}\nallow_saturation = {sat}\n"
                );
                if let Some(m) = max_sides {
                    t.push_str(&format!("max_sides = {m:?}\n"));
                }
                (t, load, machine)
            },
        )
}

/// An experiment file from the grammar of its keys and values.
fn experiment() -> impl Strategy<Value = String> {
    let list = |items: &'static [&'static str]| {
        prop::collection::vec(select(items), 0..3).prop_map(|v| {
            let quoted: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
            format!("[{}]", quoted.join(", "))
        })
    };
    (
        list(&[
            "mesh:8x8",
            "hypercube:4",
            "torus:4x4",
            "mesh:40000x40000",
            "blob",
            "mesh:0x2",
        ]),
        list(&[
            "fsl",
            "buddy",
            "first-fit",
            "paging",
            "bogus",
            "partner-ext[delta=2]",
        ]),
        prop::option::of(list(&["fcfs", "scan", "lazy[threshold=3]", "sjf"])),
        prop::collection::vec(
            prop_oneof![
                Just("0.5".to_owned()),
                Just("1.5".to_owned()),
                Just("-1".to_owned()),
                Just("nan".to_owned()),
                any::<f64>().prop_map(|x| format!("{x:?}"))
            ],
            0..3,
        ),
        prop::option::of(select(
            &[
                "1",
                "0",
                "3",
                "100001",
                "18446744073709551615",
                "-2",
                "\"x\"",
            ][..],
        )),
        prop::option::of((
            select(
                &[
                    "residence = \"exp:1\"",
                    "residence = \"uniform:1e-3\"",
                    "jobs = 0",
                    "jobs = 5",
                    "shapes = \"cube\"",
                    "bogus = 1",
                    "max_sides = \"4x4\"",
                ][..],
            ),
            select(&["", "warmup = 2", "dependence = \"sideways\""][..]),
        )),
        prop::option::of(select(
            &[
                "metrics = [\"mean_response\"]",
                "metrics = [\"bogus\"]",
                "series = \"scheduler\"",
                "series = \"x\"",
                "y_max = 1.0",
            ][..],
        )),
    )
        .prop_map(|(tops, allocs, scheds, loads, seeds, workload, plot)| {
            let mut t = format!(
                "topologies = {tops}\nallocators = {allocs}\nloads = [{}]\n",
                loads.join(", ")
            );
            if let Some(s) = scheds {
                t.push_str(&format!("schedulers = {s}\n"));
            }
            if let Some(s) = seeds {
                t.push_str(&format!("seeds = {s}\n"));
            }
            if let Some((a, b)) = workload {
                t.push_str(&format!("[workload]\n{a}\n{b}\n"));
            }
            if let Some(p) = plot {
                t.push_str(&format!("[plot]\n{p}\n"));
            }
            t
        })
}

fn mutated_experiment() -> impl Strategy<Value = String> {
    (
        select(
            &[
                include_str!("testdata/kimyoon-small.toml"),
                include_str!("testdata/kang-small.toml"),
                include_str!("testdata/mohapatra-small.toml"),
            ][..],
        ),
        prop::collection::vec((any::<u8>(), any::<Index>(), select(PIECES)), 1..5),
    )
        .prop_map(|(text, edits)| {
            let mut text = text.to_owned();
            for (op, at, piece) in edits {
                mutate(&mut text, op, at, piece);
            }
            text
        })
}

/// The file parses (and then validates or not), or the error names the
/// file and, for syntax and type errors, the line.
fn check_experiment(text: &str) -> Result<(), TestCaseError> {
    let path = Path::new("exp.toml");
    match parse_experiment(text, path) {
        Ok(exp) => {
            if let Err(e) = validate(&exp) {
                let msg = e.to_string();
                prop_assert!(!msg.contains('\n'), "{msg}");
                prop_assert!(msg.contains('"') || msg.contains(':'), "{msg}");
            }
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(msg.starts_with("exp.toml: "), "{msg}");
            prop_assert!(!msg.contains('\n'), "{msg}");
        }
    }
    Ok(())
}

#[test]
fn an_empty_token_is_named_by_its_argument() {
    // Found by the mutated command lines: "replay t.swf" edited into
    // "replay -t.swf" with an empty token where the trace was.
    let args: Vec<String> = ["partalloc", "replay", "-t.swf", "", "--allocators", "buddy"]
        .map(str::to_owned)
        .into();
    assert!(Cli::try_parse_from(&args).is_err());
    assert!(check_argv(&args).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// 10,000 command lines from each subcommand's flags and values.
    #[test]
    fn command_lines_parse_or_name_the_token(args in argv()) {
        check_argv(&args)?;
    }

    /// 10,000 mutated valid command lines.
    #[test]
    fn mutated_command_lines_parse_or_name_the_token(args in mutated_argv()) {
        check_argv(&args)?;
    }

    /// 10,000 workload tables on small machines: read and built, or
    /// refused naming the field, the law or the load at fault.
    #[test]
    fn workloads_build_or_name_the_field((text, load, machine) in workload_spec()) {
        let topology = parse_topology(machine).map_err(|e| TestCaseError::fail(e.to_string()))?;
        match toml::from_str::<WorkloadOptions>(&text) {
            Err(e) => {
                let msg = e.to_string();
                let named = ["shapes", "sides", "max_sides", "cube_dims", "residence", "dependence", "allow_saturation", "line"]
                    .iter()
                    .any(|f| msg.contains(f));
                prop_assert!(named, "{text}: {msg}");
            }
            Ok(spec) => {
                if let Err(e) = spec.build(&topology, load) {
                    let msg = CliError::from(e).to_string();
                    prop_assert!(msg.starts_with("workload: ") || msg.starts_with("offered load"), "{text} load {load} on {machine}: {msg}");
                    prop_assert!(!msg.contains('\n'), "{msg}");
                }
            }
        }
    }

    /// 10,000 experiment files from the grammar.
    #[test]
    fn experiments_parse_or_name_file_and_line(text in experiment()) {
        check_experiment(&text)?;
    }

    /// 10,000 mutated example experiments.
    #[test]
    fn mutated_experiments_parse_or_name_file_and_line(text in mutated_experiment()) {
        check_experiment(&text)?;
    }
}
