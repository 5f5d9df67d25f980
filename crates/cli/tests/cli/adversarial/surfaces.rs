//! The machine families and files added after the corpus was written
//! (`racks:`, Kueue files, Slurm ring and torus files, the Lublin model,
//! the stop time), each probed for what the corpus asks of every older
//! surface: no panic or abort, bounded memory and time, a short one-line
//! message naming the input, no input replaced, no control character on
//! the terminal or in a picture.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::{Expect, Probe, Special};

const SURFACE: &str = "newer surfaces";

/// Address space of the probes that must stay small (200 MiB, so their
/// peak memory is below it too; a debug
/// build's baseline is well under it).
const SMALL_KB: u64 = 200 << 10;

/// Longest message a probe accepts, in characters.
const SHORT: usize = 200;

fn p(name: &str, args: &[&str]) -> Probe {
    Probe::new(SURFACE, name, args)
}

fn kueue_example(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/kueue")
        .join(name);
    fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `n` comma-separated host names.
fn names(prefix: &str, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{prefix}{i}");
    }
    s
}

/// A host number zero-padded past 65,535 digits, which the formatter of
/// the standard library refuses.
fn padded() -> String {
    format!("n[{}1]", "0".repeat(65_535))
}

/// Zero-padded host numbers in every Slurm file form.
fn padding() -> Vec<Probe> {
    let pad = padded();
    let files = [
        ("blocks", "pad.conf", format!("BlockName=r0 Nodes={pad}\n")),
        (
            "blocks",
            "pad.yaml",
            format!("- topology: t\n  block:\n    blocks:\n    - block: r0\n      nodes: {pad}\n"),
        ),
        ("tree", "pad.conf", format!("SwitchName=s0 Nodes={pad}\n")),
        ("ring", "pad.conf", format!("RingName=r0 Nodes={pad}\n")),
        (
            "torus3d",
            "pad.yaml",
            format!(
                "- topology: t\n  torus3d:\n    toruses:\n      - name: t0\n        dims: {{x: 1, y: 1, z: 1}}\n        nodes: {pad}\n"
            ),
        ),
    ];
    let mut v = Vec::new();
    for (kind, file, text) in files {
        let t = format!("{kind}:{file}");
        v.push(
            p(
                &format!("padded host number, {t}"),
                &["strategies", "--topology", &t],
            )
            .file(file, text.clone()),
        );
        v.push(
            p(
                &format!("padded host number, simulate {t}"),
                &["simulate", "-q", "-t", &t, "-a", "paging", "--jobs", "5"],
            )
            .file(file, text),
        );
    }
    v.push(
        p(
            "padded host number, blocks:FILE,4gpu",
            &["strategies", "--topology", "blocks:pad.conf,4gpu"],
        )
        .file("pad.conf", format!("BlockName=r0 Nodes={pad}\n")),
    );
    v.push(
        p("padded host number, sweep", &["sweep", "e.toml", "-o", "out.csv", "-q"])
            .file("pad.conf", format!("BlockName=r0 Nodes={pad}\n"))
            .file(
                "e.toml",
                "topologies = [\"blocks:pad.conf\"]\nallocators = [\"block\"]\nloads = [0.5]\n\n[workload]\njobs = 5\n",
            )
            .output_file("out.csv", ""),
    );
    v
}

/// Machines over the size bound, refused from their description before
/// anything is built.
fn sizes() -> Vec<Probe> {
    let mut v = Vec::new();
    for t in [
        "racks:1x4194304x1gpu",
        "racks:4096x4096x4gpu",
        "racks:1x4194305x1gpu",
        "racks:1x262145x1gpu",
        "racks:1x1x4194305gpu",
    ] {
        v.push(
            p(&format!("strategies {t}"), &["strategies", "--topology", t])
                .expect(Expect::Fails)
                .says("more than the supported")
                .memory_kb(SMALL_KB)
                .timeout(10)
                .max_chars(SHORT),
        );
        for a in ["paging", "tas"] {
            v.push(
                p(
                    &format!("simulate {t} -a {a}"),
                    &["simulate", "-q", "-t", t, "-a", a, "--jobs", "5"],
                )
                .expect(Expect::Fails)
                .says("more than the supported")
                .memory_kb(SMALL_KB)
                .timeout(10)
                .max_chars(SHORT),
            );
        }
    }
    v.push(
        p("sweep racks:4096x4096x4gpu", &["sweep", "e.toml", "-o", "out.csv", "-q"])
            .file(
                "e.toml",
                "topologies = [\"racks:4096x4096x4gpu\"]\nallocators = [\"paging\"]\nloads = [0.5]\n\n[workload]\njobs = 5\n",
            )
            .expect(Expect::Fails)
            .says("more than the supported")
            .memory_kb(SMALL_KB)
            .timeout(10)
            .absent("out.csv"),
    );
    // The Slurm scheduling policy's own files are inputs too: bounded, and
    // never replaced by an output.
    let conf = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/slurm-sched.conf"),
    )
    .unwrap_or_default();
    v.push(
        p(
            "slurm policy conf as the output",
            &[
                "simulate",
                "-t",
                "mesh:8x4",
                "-a",
                "paging",
                "-s",
                "slurm[conf=s.conf]",
                "--jobs",
                "20",
                "-o",
                "s.conf",
            ],
        )
        .file("s.conf", conf)
        .expect(Expect::Fails)
        .says("that is the input")
        .timeout(20),
    );
    v.push(
        p(
            "slurm policy conf from /dev/zero",
            &[
                "simulate",
                "-t",
                "mesh:8x4",
                "-a",
                "paging",
                "-s",
                "slurm[conf=z.conf]",
                "--jobs",
                "20",
            ],
        )
        .special(Special::Symlink {
            name: "z.conf".to_owned(),
            target: "/dev/zero".to_owned(),
        })
        .expect(Expect::Fails)
        .says("larger than 16 MiB")
        .memory_kb(SMALL_KB)
        .timeout(20),
    );
    // 262,144 rings of 16 nodes: refused from the Nodes= counts, before
    // any name is expanded, in little memory.
    let mut rings = String::new();
    for i in 0..262_144u32 {
        let _ = writeln!(
            rings,
            "RingName=r{i} Nodes=n[{:07}-{:07}]",
            i * 16,
            i * 16 + 15
        );
    }
    v.push(
        p(
            "paging on a ring file of 262,144 rings",
            &[
                "simulate",
                "-t",
                "ring:r.conf",
                "-a",
                "paging",
                "--jobs",
                "5",
                "-o",
                "out.txt",
            ],
        )
        .file("r.conf", rings)
        .expect(Expect::Fails)
        .says("(2^19) a Slurm machine may have")
        .memory_kb(SMALL_KB)
        .timeout(20)
        .max_chars(SHORT)
        .absent("out.txt"),
    );
    let mut torus = String::from(
        "- topology: t\n  torus3d:\n    toruses:\n      - name: t0\n        dims: {x: 4, y: 4, z: 4}\n        nodes: tn[00-63]\n        placements:\n",
    );
    for _ in 0..100_000 {
        torus.push_str("          - dims: {x: 2, y: 1, z: 1}\n");
    }
    v.push(
        p(
            "torus3d file of 100,000 placements",
            &["strategies", "--topology", "torus3d:t.yaml"],
        )
        .file("t.yaml", torus)
        .expect(Expect::Fails)
        .says("placements, more than the 4096 accepted")
        .timeout(20)
        .max_chars(SHORT),
    );
    v
}

/// Reading is linear in the input: lists far longer than a quadratic
/// reader gets through in the time limit.
fn linear_reading() -> Vec<Probe> {
    const N: usize = 200_000;
    let hosts = names("n", N);
    let mut switches = String::new();
    for i in 0..N {
        let _ = writeln!(switches, "SwitchName=l{i} Nodes=h{i}");
    }
    let _ = writeln!(switches, "SwitchName=top Switches={}", names("l", N));
    let mut keys = String::from("- topology: t\n  cluster_default: true\n");
    for i in 0..300_000 {
        let _ = writeln!(keys, "  k{i}: v");
    }
    keys.push_str("  block:\n    blocks:\n    - block: b0\n      nodes: n[0-3]\n");
    let mut topologies = String::new();
    for i in 0..100_000 {
        let _ = writeln!(
            topologies,
            "- topology: t{i}\n  block:\n    blocks:\n    - block: b0\n      nodes: n[0-3]"
        );
    }
    let cases = [
        (
            "blocks Nodes= of 200,000 names",
            "blocks:b.conf",
            "b.conf",
            format!("BlockName=b0 Nodes={hosts}\n"),
            Expect::Ok,
        ),
        (
            "tree Switches= of 200,000 names",
            "tree:s.conf",
            "s.conf",
            switches,
            Expect::Ok,
        ),
        (
            "ring Nodes= of 200,000 names",
            "ring:r.conf",
            "r.conf",
            format!("RingName=r0 Nodes={hosts}\n"),
            Expect::Fails,
        ),
        (
            "topology.yaml nodes: of 200,000 names",
            "blocks:b.yaml",
            "b.yaml",
            format!(
                "- topology: t\n  block:\n    blocks:\n    - block: b0\n      nodes: {hosts}\n"
            ),
            Expect::Ok,
        ),
        (
            "topology.yaml of 300,000 keys",
            "blocks:k.yaml",
            "k.yaml",
            keys,
            Expect::Fails,
        ),
        (
            "topology.yaml of 100,000 topologies",
            "blocks:m.yaml",
            "m.yaml",
            topologies,
            Expect::Ok,
        ),
    ];
    cases
        .into_iter()
        .map(|(name, t, file, text, expect)| {
            p(name, &["strategies", "--topology", t])
                .file(file, text)
                .expect(expect)
                .timeout(20)
                .max_chars(SHORT)
        })
        .collect()
}

/// No output replaces an input, whatever names it; a write-protected
/// output is refused.
fn inputs_kept() -> Vec<Probe> {
    let (topology, nodes) = (kueue_example("topology.yaml"), kueue_example("nodes.yaml"));
    let kueue = "kueue:topology.yaml,nodes.yaml";
    let sim = ["simulate", "-q", "-t", kueue, "-a", "tas", "--jobs", "20"];
    let with = |name: &str, extra: &[&str]| {
        let args: Vec<&str> = sim.iter().chain(extra).copied().collect();
        p(name, &args)
            .file("topology.yaml", topology.clone())
            .file("nodes.yaml", nodes.clone())
            .expect(Expect::Fails)
    };
    let mut swf = String::from("; MaxNodes: 16\n");
    for j in 1..=5 {
        let _ = writeln!(swf, "{j} {j} -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1");
    }
    vec![
        with("kueue Topology file as -o", &["-o", "topology.yaml"]).says("that is the input"),
        with(
            "kueue Topology file as --jobs-csv",
            &["--jobs-csv", "topology.yaml"],
        )
        .says("that is the input"),
        with("kueue node list as -o", &["-o", "nodes.yaml"]).says("that is the input"),
        with("kueue Topology file through a link", &["-o", "link.yaml"])
            .special(Special::Symlink {
                name: "link.yaml".into(),
                target: "topology.yaml".into(),
            })
            .says("that is the input"),
        with(
            "kueue Topology file by another spelling",
            &["-o", "./sub/../topology.yaml"],
        )
        .special(Special::Dir("sub".into()))
        .says("that is the input"),
        p(
            "kueue Topology file as replay -o",
            &[
                "replay",
                "t.swf",
                "-t",
                kueue,
                "-a",
                "tas",
                "-q",
                "-o",
                "topology.yaml",
            ],
        )
        .file("topology.yaml", topology.clone())
        .file("nodes.yaml", nodes.clone())
        .file("t.swf", swf)
        .expect(Expect::Fails)
        .says("that is the input"),
        p(
            "kueue Topology file as generate --out",
            &[
                "generate",
                "-t",
                kueue,
                "--jobs",
                "10",
                "--out",
                "topology.yaml",
            ],
        )
        .file("topology.yaml", topology.clone())
        .file("nodes.yaml", nodes.clone())
        .expect(Expect::Fails)
        .says("that is the input"),
        p(
            "write-protected -o",
            &[
                "simulate",
                "-q",
                "-t",
                "mesh:8x8",
                "-a",
                "first-fit",
                "--jobs",
                "10",
                "-o",
                "ro.txt",
            ],
        )
        .special(Special::ReadOnly {
            name: "ro.txt".into(),
            bytes: b"keep me\n".to_vec(),
        })
        .expect(Expect::Fails)
        .says("write-protected"),
        p(
            "write-protected generate --out",
            &[
                "generate", "-t", "mesh:8x8", "--jobs", "10", "--out", "ro.swf",
            ],
        )
        .special(Special::ReadOnly {
            name: "ro.swf".into(),
            bytes: b"keep me\n".to_vec(),
        })
        .expect(Expect::Fails)
        .says("write-protected"),
    ]
}

/// Values that used to run to exit 0, or for ever.
fn bad_values() -> Vec<Probe> {
    let (topology, nodes) = (kueue_example("topology.yaml"), kueue_example("nodes.yaml"));
    let topology_text = String::from_utf8_lossy(&topology).into_owned();
    let nodes_text = String::from_utf8_lossy(&nodes).into_owned();
    let kueue = |name: &str, t: String, n: String| {
        p(
            name,
            &["strategies", "--topology", "kueue:topology.yaml,nodes.yaml"],
        )
        .file("topology.yaml", t)
        .file("nodes.yaml", n)
        .expect(Expect::Fails)
        .max_chars(SHORT)
    };
    let mut v = vec![
        kueue(
            "kueue Topology file of kind Pod",
            topology_text.replace("kind: Topology", "kind: Pod"),
            nodes_text.clone(),
        )
        .says("kind: Pod"),
        kueue(
            "kueue node list as the Topology file",
            nodes_text.clone(),
            nodes_text.clone(),
        )
        .says("kind: List"),
        kueue(
            "kueue Topology file of two documents",
            format!("{topology_text}---\n{topology_text}"),
            nodes_text.clone(),
        )
        .says("second YAML document"),
        kueue(
            "kueue node list of two documents",
            topology_text.clone(),
            format!("{nodes_text}---\n{nodes_text}"),
        )
        .says("second YAML document"),
        kueue(
            "kueue node list without pods",
            topology_text.clone(),
            nodes_text
                .lines()
                .filter(|l| !l.trim_start().starts_with("pods:"))
                .map(|l| format!("{l}\n"))
                .collect(),
        )
        .says("no `pods` under status.allocatable"),
        p(
            "Slurm topology.yaml of two documents",
            &["strategies", "--topology", "blocks:b.yaml"],
        )
        .file(
            "b.yaml",
            "- topology: a\n  block:\n    blocks:\n    - block: b0\n      nodes: n[0-3]\n---\n- topology: b\n  flat: true\n",
        )
        .expect(Expect::Fails)
        .says("second YAML document"),
    ];
    for t in ["0", "-0", "1e-400"] {
        let flag = format!("--time={t}");
        v.push(
            p(
                &format!("simulate {flag}"),
                &["simulate", "-q", "-t", "mesh:8x8", "-a", "first-fit", &flag],
            )
            .expect(Expect::Fails)
            .says("above 0")
            .max_chars(SHORT),
        );
    }
    // The command-line parser reads the model's laws (exit 2, with its
    // usage lines); the machine's size bound comes after it (exit 1).
    for (model, says, expect) in [
        ("lublin:whole:arar=1e308", "aarr·arar", Expect::Any),
        ("lublin:batch:arar=1e308", "aarr·arar", Expect::Any),
        (
            "lublin:whole:aarr=1e200:arar=1e200",
            "aarr·arar",
            Expect::Any,
        ),
        ("lublin:whole:uhi=1e308", "uhi=1e308", Expect::Fails),
    ] {
        v.push(
            p(
                &format!("generate --model {model}"),
                &[
                    "generate",
                    "-t",
                    "mesh:16x16",
                    "--jobs",
                    "10",
                    "--model",
                    model,
                    "--out",
                    "g.swf",
                ],
            )
            .expect(expect)
            .says(says)
            .timeout(10)
            .max_chars(SHORT)
            .absent("g.swf"),
        );
        // The same models as `simulate`'s workload source.
        let probe = p(
            &format!("simulate --model {model}"),
            &[
                "simulate",
                "-q",
                "-t",
                "mesh:16x16",
                "-a",
                "first-fit",
                "--jobs",
                "10",
                "--model",
                model,
                "-o",
                "out.txt",
            ],
        )
        .expect(expect)
        .says(says)
        .timeout(10)
        .max_chars(SHORT);
        v.push(if matches!(expect, Expect::Fails) {
            probe.absent("out.txt")
        } else {
            probe
        });
    }
    v.push(
        p(
            "benchmark --length 2^64-1",
            &[
                "benchmark",
                "--trace",
                "t.swf",
                "--length",
                "18446744073709551615",
            ],
        )
        .file("t.swf", super::data("mesh8x8.swf"))
        .expect(Expect::Fails)
        .says("enough for sequences of at most"),
    );
    for kind in ["blocks", "tree", "ring", "torus3d"] {
        let t = format!("{kind}:");
        v.push(
            p(&format!("{kind}: alone"), &["strategies", "--topology", &t])
                .expect(Expect::Fails)
                .says(&format!("e.g. {kind}:examples/{kind}")),
        );
    }
    v
}

/// Fails if the picture or the terminal text holds a control character
/// other than a line break or a tab.
fn no_control(d: &Path, stdout: &[u8]) -> Result<(), String> {
    let bad = |b: &u8| *b < 0x20 && !matches!(b, b'\n' | b'\t') || *b == 0x7f;
    if let Some(b) = stdout.iter().find(|b| bad(b)) {
        return Err(format!("standard output holds the control byte {b:#04x}"));
    }
    if let Ok(svg) = fs::read(d.join("out.svg"))
        && let Some(b) = svg.iter().find(|b| bad(b))
    {
        return Err(format!("the SVG holds the control byte {b:#04x}, not XML"));
    }
    Ok(())
}

/// Names with control characters shown on the terminal and in an SVG,
/// and echoes of huge or multi-line input in messages.
fn echoes() -> Vec<Probe> {
    let esc = "\u{1b}[2J\u{1b}]0;owned\u{7}";
    let blocks = format!("BlockName=r{esc}0 Nodes=n[0-3]\nBlockName=r1 Nodes=n[4-7]\n");
    let tree = format!("SwitchName=s{esc}0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[4-7]\n");
    let yaml = format!(
        "- topology: t\n  block:\n    blocks:\n    - block: \"r{}\"\n      nodes: n[0-3]\n",
        "\u{1b}[2J"
    );
    let mut v = Vec::new();
    for (t, file, text) in [
        ("blocks:b.conf", "b.conf", blocks.clone()),
        ("tree:t.conf", "t.conf", tree),
        ("blocks:b.yaml", "b.yaml", yaml),
    ] {
        v.push(
            p(
                &format!("show {t} with an escape sequence in a name"),
                &[
                    "show", "-t", t, "-a", "paging", "--at", "5", "--svg", "out.svg",
                ],
            )
            .file(file, text)
            .output_file("out.svg", "")
            .expect(Expect::Either)
            .after(no_control),
        );
    }
    let huge = "k".repeat(1 << 20);
    v.push(
        p(
            "unknown topology.yaml key of 1 MB",
            &["strategies", "--topology", "blocks:b.yaml"],
        )
        .file(
            "b.yaml",
            format!("- topology: t\n  {huge}: 1\n  block:\n    blocks:\n    - block: b0\n      nodes: n[0-3]\n"),
        )
        .expect(Expect::Fails)
        .says("unknown key")
        .max_chars(SHORT),
    );
    let name = "b".repeat(1 << 20);
    v.push(
        p(
            "topology.conf name of 1 MB, twice",
            &["strategies", "--topology", "blocks:b.conf"],
        )
        .file(
            "b.conf",
            format!("BlockName={name} Nodes=n[0-3]\nBlockName={name} Nodes=n[4-7]\n"),
        )
        .expect(Expect::Fails)
        .max_chars(SHORT),
    );
    v.push(
        p("sweep file key of 1 MB", &["sweep", "e.toml", "-o", "out.csv", "-q"])
            .file(
                "e.toml",
                format!("{huge} = 1\ntopologies = [\"mesh:4x4\"]\nallocators = [\"paging\"]\nloads = [0.5]\n"),
            )
            .expect(Expect::Fails)
            .max_chars(SHORT)
            .absent("out.csv"),
    );
    v.push(
        p(
            "pod file key of 1 MB",
            &["strategies", "--topology", "p.toml"],
        )
        .file("p.toml", format!("preset = \"tpu-v4\"\n{huge} = 1\n"))
        .expect(Expect::Fails)
        .max_chars(SHORT),
    );
    for model in ["sst:1e300[1,1]", "linear:1e308"] {
        v.push(
            p(
                &format!("run-time model {model} overflowing"),
                &[
                    "simulate",
                    "-q",
                    "-t",
                    "mesh:8x8",
                    "-a",
                    "paging",
                    "--jobs",
                    "50",
                    "--runtime-model",
                    model,
                ],
            )
            .expect(Expect::Either)
            .says("run-time model")
            .max_chars(SHORT),
        );
    }
    v.push(
        p(
            "a path with a line break",
            &[
                "simulate",
                "-q",
                "-t",
                "blocks:no\nsuch.conf",
                "-a",
                "block",
            ],
        )
        .expect(Expect::Fails)
        .max_chars(SHORT),
    );
    v.push(
        p(
            "an output path with a line break over an input",
            &[
                "simulate",
                "-q",
                "-t",
                "blocks:b\nc.conf",
                "-a",
                "block",
                "-o",
                "b\nc.conf",
            ],
        )
        .file("b\nc.conf", blocks)
        .expect(Expect::Fails)
        .says("that is the input")
        .max_chars(SHORT),
    );
    v
}

pub(super) fn probes() -> Vec<Probe> {
    let mut v = Vec::new();
    v.extend(padding());
    v.extend(sizes());
    v.extend(linear_reading());
    v.extend(inputs_kept());
    v.extend(bad_values());
    v.extend(echoes());
    v
}
