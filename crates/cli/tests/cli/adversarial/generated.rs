//! Probes generated from the registry of input forms
//! (`partalloc_experiment::forms`): every machine form that reads files,
//! every trace format and every workload source gets the same guards
//! without a probe written for it — no output of `simulate`, `show`,
//! `generate`, `replay`, `report` or a sweep replaces one of its files (by
//! name, by another spelling, through a link, under a name with control
//! characters, which the message must show escaped), an input that never
//! ends (`/dev/zero`) or a workload too large for the machine is refused
//! within a small address space, and a hostile value is refused in one
//! short line, writing nothing.

use std::fs;
use std::path::Path;

use partalloc_experiment::forms::{
    FileForm, MACHINE_FILE_FORMS, TRACE_FORMS, TraceForm, WORKLOAD_FORMS, WorkloadForm,
    WorkloadValue,
};

use super::{Expect, Probe, Special};

const SURFACE: &str = "registry of input forms";

/// Address space of the probes that read an endless input (200 MiB).
const SMALL_KB: u64 = 200 << 10;

/// A name no shell prints safely: an escape sequence that clears the
/// screen, and a line break.
const HOSTILE: &str = "x\u{1b}[2J\ny";

fn example(path: &str) -> Vec<u8> {
    let at = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    fs::read(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display()))
}

/// The name a probe gives file `i` of a form: `in{i}` with the example's
/// extension (the pod form is told by its `.toml`).
fn local(i: usize, example: &str) -> String {
    let ext = Path::new(example)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("txt");
    format!("in{i}.{ext}")
}

/// A probe of `form` with `args` (after the machine's), its files copied
/// in under `names`.
fn machine_probe(form: &FileForm, what: &str, names: &[String], args: &[&str]) -> Probe {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let machine = form.machine(&refs);
    let mut all: Vec<&str> = args.to_vec();
    for a in &mut all {
        if *a == "{machine}" {
            *a = &machine;
        }
    }
    let all: Vec<&str> = all
        .iter()
        .map(|a| if *a == "{strategy}" { form.strategy } else { a })
        .collect();
    let mut p = Probe::new(SURFACE, format!("{} machine: {what}", form.name), &all);
    for (name, path) in names.iter().zip(form.examples) {
        p = p.file(name, example(path));
    }
    p
}

fn machine_forms() -> Vec<Probe> {
    let mut v = Vec::new();
    for form in MACHINE_FILE_FORMS {
        let names: Vec<String> = form
            .examples
            .iter()
            .enumerate()
            .map(|(i, e)| local(i, e))
            .collect();
        let sim = [
            "simulate",
            "-q",
            "-t",
            "{machine}",
            "-a",
            "{strategy}",
            "--jobs",
            "20",
        ];
        fn with<'a>(sim: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
            sim.iter().chain(extra).copied().collect()
        }
        for (i, name) in names.iter().enumerate() {
            v.push(
                machine_probe(
                    form,
                    &format!("file {i} as -o"),
                    &names,
                    &with(&sim, &["-o", name]),
                )
                .expect(Expect::Fails)
                .says("that is the input"),
            );
            v.push(
                machine_probe(
                    form,
                    &format!("file {i} as --jobs-csv"),
                    &names,
                    &with(&sim, &["--jobs-csv", name]),
                )
                .expect(Expect::Fails)
                .says("that is the input"),
            );
            let generate = ["generate", "-t", "{machine}", "--jobs", "10", "--out", name];
            v.push(
                machine_probe(
                    form,
                    &format!("file {i} as generate --out"),
                    &names,
                    &generate,
                )
                .expect(Expect::Fails)
                .says("that is the input"),
            );
        }
        let first = names[0].as_str();
        v.push(
            machine_probe(
                form,
                "file 0 through a link",
                &names,
                &with(&sim, &["-o", "link"]),
            )
            .special(Special::Symlink {
                name: "link".into(),
                target: first.into(),
            })
            .expect(Expect::Fails)
            .says("that is the input"),
        );
        let other = format!("./sub/../{first}");
        v.push(
            machine_probe(
                form,
                "file 0 by another spelling",
                &names,
                &with(&sim, &["-o", &other]),
            )
            .special(Special::Dir("sub".into()))
            .expect(Expect::Fails)
            .says("that is the input"),
        );
        // Under a hostile name, as -o: refused, the name shown escaped.
        let mut hostile = names.clone();
        hostile[0] = format!("{HOSTILE}{first}");
        v.push(
            machine_probe(
                form,
                "file 0 named with control characters",
                &hostile,
                &with(&sim, &["-o", &hostile[0]]),
            )
            .expect(Expect::Fails)
            .says("that is the input"),
        );
        // An endless file 0.
        let mut endless = names.clone();
        endless[0] = format!("zero{first}");
        let refs: Vec<&str> = endless.iter().map(String::as_str).collect();
        let machine = form.machine(&refs);
        let mut p = Probe::new(
            SURFACE,
            format!("{} machine: file 0 is /dev/zero", form.name),
            &[
                "simulate",
                "-q",
                "-t",
                &machine,
                "-a",
                form.strategy,
                "--jobs",
                "20",
            ],
        )
        .special(Special::Symlink {
            name: endless[0].clone(),
            target: "/dev/zero".into(),
        })
        .expect(Expect::Fails)
        .memory_kb(SMALL_KB);
        for (name, path) in endless.iter().zip(form.examples).skip(1) {
            p = p.file(name, example(path));
        }
        v.push(p);
    }
    v
}

/// A probe of `form` with `args`, the machine's files copied in as
/// `m{i}.EXT`.
fn trace_probe(form: &TraceForm, what: &str, trace: &str, args: &[&str]) -> Probe {
    let format = form.format.name();
    let names: Vec<String> = form
        .machine_files
        .iter()
        .enumerate()
        .map(|(i, e)| format!("m{}", local(i, e)))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let machine = form.machine(&refs);
    let all: Vec<&str> = args
        .iter()
        .map(|a| match *a {
            "{trace}" => trace,
            "{format}" => format,
            "{machine}" => machine.as_str(),
            "{strategy}" => form.strategy,
            a => a,
        })
        .collect();
    let mut p = Probe::new(SURFACE, format!("{format} trace: {what}"), &all);
    for (name, path) in names.iter().zip(form.machine_files) {
        p = p.file(name, example(path));
    }
    p
}

fn trace_forms() -> Vec<Probe> {
    let mut v = Vec::new();
    for form in TRACE_FORMS {
        let bytes = example(form.example);
        let name = local(0, form.example);
        let replay = [
            "replay",
            "{trace}",
            "-q",
            "-t",
            "{machine}",
            "-a",
            "{strategy}",
            "--trace-format",
            "{format}",
        ];
        // The commands that take any workload source are probed per
        // source (`workload_forms`); `replay` reads traces alone.
        let outputs: [(&str, &[&str], &str); 2] = [
            ("replay -o", &replay, "-o"),
            ("replay --jobs-csv", &replay, "--jobs-csv"),
        ];
        for (what, cmd, flag) in outputs {
            let args: Vec<&str> = cmd.iter().copied().chain([flag, "{trace}"]).collect();
            v.push(
                trace_probe(form, &format!("the trace as {what}"), &name, &args)
                    .file(&name, bytes.clone())
                    .expect(Expect::Fails)
                    .says("that is the input"),
            );
        }
        let hostile = format!("{HOSTILE}{name}");
        let args: Vec<&str> = replay.iter().copied().chain(["-o", "{trace}"]).collect();
        v.push(
            trace_probe(
                form,
                "named with control characters, as -o",
                &hostile,
                &args,
            )
            .file(&hostile, bytes.clone())
            .expect(Expect::Fails)
            .says("that is the input"),
        );
        v.push(
            trace_probe(form, "replay of /dev/zero", "zero", &replay)
                .special(Special::Symlink {
                    name: "zero".into(),
                    target: "/dev/zero".into(),
                })
                .expect(Expect::Fails)
                .memory_kb(SMALL_KB),
        );
    }
    v
}

/// A command that takes any workload source, and the output it writes.
#[derive(Debug, Clone, Copy)]
enum Command {
    Simulate,
    Show,
    Report,
    Sweep,
}

impl Command {
    const ALL: [Self; 4] = [Self::Simulate, Self::Show, Self::Report, Self::Sweep];

    fn name(self) -> &'static str {
        match self {
            Self::Simulate => "simulate",
            Self::Show => "show",
            Self::Report => "report",
            Self::Sweep => "sweep file",
        }
    }

    /// Its output flags, each with a file name of its own.
    fn outputs(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Simulate => &[("-o", "out.txt"), ("--jobs-csv", "jobs.csv")],
            Self::Show => &[("--svg", "out.svg")],
            Self::Report => &[("-o", "out.html")],
            Self::Sweep => &[("-o", "out.csv")],
        }
    }
}

/// `text` as the inside of a TOML basic string.
fn toml_escaped(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' => "\\\"".to_owned(),
            '\\' => "\\\\".to_owned(),
            c if c.is_control() => format!("\\u{:04x}", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

/// A probe of `command` on the workload `form` naming `value`, its output
/// (the first of the command's) written to `output`.
fn workload_probe(
    form: &WorkloadForm,
    command: Command,
    what: &str,
    value: &str,
    output: (&str, &str),
) -> Probe {
    let names: Vec<String> = form
        .machine_files()
        .iter()
        .enumerate()
        .map(|(i, e)| format!("m{}", local(i, e)))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let machine = form.machine(&refs);
    let strategy = form.strategy();
    let flags = form.flags(value);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let base: Vec<&str> = match command {
        Command::Simulate => vec![
            "simulate", "-q", "-t", &machine, "-a", strategy, "--jobs", "20",
        ],
        Command::Show => vec!["show", "-t", &machine, "-a", strategy, "--at", "5"],
        Command::Report => vec![
            "report", "-q", "-t", &machine, "-a", strategy, "--jobs", "20",
        ],
        Command::Sweep => vec!["sweep", "e.toml", "-q"],
    };
    let args: Vec<&str> = match command {
        Command::Sweep => base.into_iter().chain([output.0, output.1]).collect(),
        _ => base
            .into_iter()
            .chain(flags)
            .chain([output.0, output.1])
            .collect(),
    };
    let mut p = Probe::new(
        SURFACE,
        format!("{} workload, {}: {what}", form.name, command.name()),
        &args,
    );
    if let Command::Sweep = command {
        let mut file = format!(
            "topologies = [\"{}\"]\nallocators = [\"{strategy}\"]\nloads = [0.5]\n",
            toml_escaped(&machine)
        );
        file.push_str(&form.sweep(&toml_escaped(value)));
        // Drawn jobs: a few (a trace gives its own).
        if let WorkloadValue::Text { .. } = form.value {
            if !file.contains("[workload]") {
                file.push_str("[workload]\n");
            }
            file.push_str("jobs = 20\n");
        }
        p = p.file("e.toml", file);
    }
    for (name, path) in names.iter().zip(form.machine_files()) {
        p = p.file(name, example(path));
    }
    p
}

/// Every workload source under every command that takes one: no output
/// replaces its file (or the sweep file), a source too large (an endless
/// trace) is refused within a small address space, and a hostile value
/// is refused in one short line without a control character, writing
/// nothing.
fn workload_forms() -> Vec<Probe> {
    let mut v = Vec::new();
    for form in WORKLOAD_FORMS {
        let trace = match form.value {
            WorkloadValue::Trace(t) => Some((local(0, t.example), example(t.example))),
            WorkloadValue::Text { .. } => None,
        };
        for command in Command::ALL {
            let first = command.outputs()[0];
            // An output naming an input: the trace, or the sweep file.
            match &trace {
                Some((name, bytes)) => {
                    for &(flag, _) in command.outputs() {
                        v.push(
                            workload_probe(
                                form,
                                command,
                                &format!("the trace as {flag}"),
                                name,
                                (flag, name),
                            )
                            .file(name, bytes.clone())
                            .expect(Expect::Fails)
                            .says("that is the input"),
                        );
                    }
                }
                None => {
                    if let Command::Sweep = command {
                        let example = match form.value {
                            WorkloadValue::Text { example, .. } => example,
                            WorkloadValue::Trace(t) => t.example,
                        };
                        v.push(
                            workload_probe(
                                form,
                                command,
                                "the sweep file as -o",
                                example,
                                ("-o", "e.toml"),
                            )
                            .expect(Expect::Fails)
                            .says("that is the input"),
                        );
                    }
                }
            }
            // Too large: an endless trace, or a value past the machine.
            let p = match form.value {
                WorkloadValue::Trace(_) => {
                    workload_probe(form, command, "the trace is /dev/zero", "zero", first).special(
                        Special::Symlink {
                            name: "zero".into(),
                            target: "/dev/zero".into(),
                        },
                    )
                }
                WorkloadValue::Text {
                    too_large, refused, ..
                } => workload_probe(form, command, "too large", too_large, first).says(refused),
            };
            v.push(
                p.expect(Expect::Fails)
                    .memory_kb(SMALL_KB)
                    .max_chars(200)
                    .absent(first.1),
            );
            // A hostile value (a file name for a trace): one short line,
            // escaped, nothing written.
            let hostile = match &trace {
                Some((name, _)) => format!("{HOSTILE}{name}"),
                None => HOSTILE.to_owned(),
            };
            v.push(
                workload_probe(form, command, "a hostile value", &hostile, first)
                    .expect(Expect::Any)
                    .max_chars(200)
                    .absent(first.1),
            );
        }
    }
    v
}

pub(super) fn probes() -> Vec<Probe> {
    let mut v = machine_forms();
    v.extend(trace_forms());
    v.extend(workload_forms());
    v
}
