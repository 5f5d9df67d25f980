//! The probes over every input surface: hand-written ones, generated
//! combinations, and random byte mutations of ten file kinds.

use super::{Expect, Probe, Special, data};
use crate::support::words;

/// SplitMix64: a small deterministic generator, so every mutation probe
/// is the same on every run (its name carries its seed).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Pieces inserted by mutations: numbers at and past the limits, syntax
/// characters, control bytes, non-ASCII text.
const PIECES: &[&[u8]] = &[
    b"-1",
    b"1e308",
    b"4294967296",
    b"18446744073709551616",
    b"nan",
    b"inf",
    b"\"",
    b"'",
    b"[",
    b"]",
    b"{",
    b"}",
    b"=",
    b":",
    b"|",
    b",",
    b"\n",
    b"\r\n",
    b"\t",
    b"\0",
    b"#",
    b";",
    b"\xc3\xa9",
    b"\xff\xfe",
    b"x",
    b" ",
    b".",
    b"-",
];

/// `seed` edited by 1 to 4 random byte operations: insert a piece, delete
/// a range, replace a byte, duplicate a range, truncate.
pub(crate) fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(b.len() + 1);
        match rng.below(6) {
            0 | 1 => {
                let piece = PIECES[rng.below(PIECES.len())];
                b.splice(at..at, piece.iter().copied());
            }
            2 => {
                let end = (at + 1 + rng.below(16)).min(b.len());
                if at < end {
                    b.drain(at..end);
                }
            }
            3 => {
                if let Some(x) = b.get_mut(at) {
                    *x = (rng.next() & 0xff) as u8;
                }
            }
            4 => {
                let end = (at + 1 + rng.below(64)).min(b.len());
                if at < end {
                    let copy = b[at..end].to_vec();
                    b.splice(end..end, copy);
                }
            }
            _ => b.truncate(at),
        }
    }
    b
}

/// The ten mutated file kinds: (kind, seed file, name in the probe's
/// directory, command line).
pub(crate) fn file_kinds() -> Vec<(&'static str, Vec<u8>, &'static str, Vec<&'static str>)> {
    vec![
        (
            "swf",
            data("mesh8x8.swf"),
            "t.swf",
            vec!["replay", "t.swf", "-t", "mesh:8x8", "-a", "first-fit", "-q"],
        ),
        (
            "sacct",
            data("dump.sacct"),
            "d.txt",
            words("replay d.txt -t mesh:4x4 -a first-fit --trace-format sacct --lenient -q"),
        ),
        (
            "pod toml",
            data("pod.toml"),
            "p.toml",
            words("simulate -t p.toml -a pod-first-fit --jobs 20 -q"),
        ),
        (
            "sweep toml",
            data("sweep.toml"),
            "e.toml",
            words("sweep e.toml -o out.csv -q --no-plots --threads 1"),
        ),
        (
            "blocks conf",
            data("blocks.conf"),
            "b.conf",
            words("simulate -t blocks:b.conf -a block --jobs 20 -q"),
        ),
        (
            "tree conf",
            data("tree.conf"),
            "t.conf",
            words("simulate -t tree:t.conf -a tree --jobs 20 -q"),
        ),
        (
            "blocks yaml",
            data("blocks.yaml"),
            "b.yaml",
            words("simulate -t blocks:b.yaml -a block --jobs 20 -q"),
        ),
        (
            "tree yaml",
            data("tree.yaml"),
            "t.yaml",
            words("simulate -t tree:t.yaml -a tree --jobs 20 -q"),
        ),
        (
            "swf (simulate)",
            data("mesh8x8.swf"),
            "t.swf",
            words("simulate --trace t.swf -t mesh:8x8 -a first-fit -q --lenient"),
        ),
        (
            "sacct (strict)",
            data("dump.sacct"),
            "d.txt",
            words("replay d.txt -t mesh:4x4 -a first-fit,paging --trace-format sacct -q"),
        ),
    ]
}

/// `per_kind` mutations of each file kind, plus mutations of shard files
/// and of a resumed sweep's `.partial` (see [`super::recovery`]).
fn mutations(per_kind: usize) -> Vec<Probe> {
    let mut v = Vec::new();
    for (k, (kind, seed, name, args)) in file_kinds().into_iter().enumerate() {
        for i in 0..per_kind {
            let s = (k as u64) << 32 | i as u64;
            let bytes = mutate(&seed, &mut Rng::new(s));
            v.push(
                Probe::new("mutations", format!("{kind} #{s:x}"), &args)
                    .file(name, bytes)
                    .expect(Expect::Either),
            );
        }
    }
    v
}

fn cmd(surface: &'static str, args: &[&str]) -> Probe {
    Probe::new(surface, args.join(" "), args)
}

/// Topology strings, through `strategies --topology` and `simulate`.
fn topology_strings() -> Vec<Probe> {
    let long_digits = format!("mesh:{}", "9".repeat(100_000));
    let long_sides = format!("mesh:{}4", "4x".repeat(5000));
    let many = format!("pod:tpu-v4:8x8x8:shapes={}", "2x2x2+".repeat(2000));
    let texts: Vec<String> = [
        "",
        ":",
        "mesh",
        "mesh:",
        "mesh:x",
        "mesh:4x",
        "mesh:x4",
        "mesh:0x4",
        "mesh:-1x4",
        "mesh:4294967295x1",
        "mesh:4294967296x1",
        "mesh:65536x65536",
        "mesh:2048x2048",
        "mesh:1x1x1x1x1x1x1x1x1",
        "mesh:2x2x2x2x2x2x2x2",
        "mesh:1",
        "mesh:1x1",
        "torus:1",
        "torus:2147483648",
        "torus:3x3",
        "hypercube:0",
        "hypercube:-1",
        "hypercube:22",
        "hypercube:23",
        "hypercube:30",
        "hypercube:31",
        "hypercube:99999999999",
        "hypercube:1e3",
        "hypercube:0x10",
        "cube:5",
        "kary:2^0",
        "kary:0^3",
        "kary:1^8",
        "kary:16^9",
        "kary:2^4000000000",
        "kary:65536^8",
        "kary-torus:3^3",
        "kary:^",
        "kary:4^",
        "pod:",
        "pod:tpu-v4",
        "pod:tpu-v4:0x0x0",
        "pod:tpu-v4:4096x4096x4096",
        "pod:tpu-v4:256x128x128",
        "pod:nope",
        "pod:8x8",
        "pod:8x8:shapes=",
        "pod:8x8:shapes=9x9",
        "pod:8x8:shapes=2x2:wiring=quantum",
        "pod:tpu-v4:8x8x8:rotate=maybe",
        "pod:tpu-v4:8x8x8:cube=3x3x3",
        "pod:tpu-v5e:8x8:name=é",
        "pod:8x8:shapes=2x2::",
        "blocks:",
        "blocks:/nonexistent/x.conf",
        "tree:",
        "tree:/",
        "blocks:.",
        "MESH:4X4",
        " mesh:4x4 ",
        "mesh:4×4",
        "mesh:４x4",
        "mesh:4x4\n",
        "mesh:4x4:extra",
        "nope:4",
        "x.toml",
        "/nonexistent.toml",
        ".toml",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([long_digits, long_sides, many])
    .collect();
    let mut v = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        let short: String = t.chars().take(40).collect();
        let mut a = Probe::new(
            "topology strings",
            format!("strategies {short:?} #{i}"),
            &[],
        );
        a.args = vec!["strategies".into(), "--topology".into(), t.clone()];
        v.push(a);
        let mut b = Probe::new("topology strings", format!("simulate {short:?} #{i}"), &[]);
        b.args = ["simulate", "-t", t, "-a", "paging", "--jobs", "5", "-q"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        v.push(b);
    }
    v.push(
        cmd(
            "topology strings",
            &["strategies", "--topology", "mesh:4294967296x1"],
        )
        .expect(Expect::Fails)
        .says("\"4294967296\" is larger than the largest side or dimension accepted"),
    );
    v
}

/// Topology files: topology.conf and topology.yaml, block and tree forms.
fn topology_files() -> Vec<Probe> {
    let cases: &[(&str, &str, &str)] = &[
        ("empty", "b.conf", ""),
        ("comments only", "b.conf", "# nothing\n\n"),
        ("no nodes", "b.conf", "BlockName=b0\n"),
        (
            "twice a node",
            "b.conf",
            "BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=n[3-5]\n",
        ),
        ("unbalanced", "b.conf", "BlockName=a Nodes=n[0-3\n"),
        ("backwards", "b.conf", "BlockName=a Nodes=n[9-3]\n"),
        (
            "huge range",
            "b.conf",
            "BlockName=a Nodes=n[0-99999999999]\n",
        ),
        ("over the cap", "b.conf", "BlockName=a Nodes=n[0-4194304]\n"),
        (
            "zero sizes",
            "b.conf",
            "BlockName=a Nodes=n[0-3]\nBlockSizes=0\n",
        ),
        (
            "negative sizes",
            "b.conf",
            "BlockName=a Nodes=n[0-3]\nBlockSizes=-1\n",
        ),
        (
            "unequal blocks",
            "b.conf",
            "BlockName=a Nodes=n[0-3]\nBlockName=b Nodes=m[0-2]\n",
        ),
        (
            "mixed",
            "b.conf",
            "BlockName=a Nodes=n[0-3]\nSwitchName=s Nodes=m[0-3]\n",
        ),
        ("bad key", "b.conf", "Block=a Nodes=n[0-3]\n"),
        ("no equals", "b.conf", "BlockName a\n"),
        ("binary", "b.conf", "\0\u{1}\u{2}BlockName=\u{7f}"),
        (
            "block named twice",
            "b.conf",
            "BlockName=a Nodes=n[0-3]\nBlockName=a Nodes=m[0-3]\n",
        ),
        (
            "loop",
            "t.conf",
            "SwitchName=a Switches=b\nSwitchName=b Switches=a\n",
        ),
        ("self parent", "t.conf", "SwitchName=a Switches=a\n"),
        ("unknown child", "t.conf", "SwitchName=a Switches=zz\n"),
        (
            "two parents",
            "t.conf",
            "SwitchName=l Nodes=n[0-3]\nSwitchName=a Switches=l\nSwitchName=b Switches=l\n",
        ),
        ("empty switch", "t.conf", "SwitchName=a\n"),
        (
            "link speed",
            "t.conf",
            "SwitchName=a Nodes=n[0-3] LinkSpeed=-5\n",
        ),
        (
            "yaml flow",
            "b.yaml",
            "- topology: x\n  block: {blocks: []}\n",
        ),
        ("yaml tabs", "b.yaml", "- topology: x\n\tblock:\n"),
        ("yaml empty", "b.yaml", ""),
        (
            "yaml no topology",
            "b.yaml",
            "block:\n  blocks:\n  - block: a\n    nodes: n[0-3]\n",
        ),
        (
            "yaml deep",
            "t.yaml",
            "- topology: x\n  tree:\n    switches:\n    - switch: a\n      children: a\n",
        ),
        (
            "yaml unbalanced",
            "t.yaml",
            "- topology: x\n  tree:\n    switches:\n    - switch: a\n      nodes: n[0-\n",
        ),
    ];
    let mut v = Vec::new();
    for (what, name, text) in cases {
        let kind = if name.starts_with('b') {
            "blocks"
        } else {
            "tree"
        };
        let alloc = if kind == "blocks" { "block" } else { "tree" };
        let t = format!("{kind}:{name}");
        v.push(
            Probe::new("topology files", format!("{what} ({name})"), &[])
                .file(name, text.as_bytes()),
        );
        let last = v.len() - 1;
        v[last].args = ["simulate", "-t", &t, "-a", alloc, "--jobs", "5", "-q"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
    }
    // A directory and a missing file.
    v.push(
        cmd(
            "topology files",
            &["simulate", "-t", "blocks:d", "-a", "block", "-q"],
        )
        .special(Special::Dir("d".into())),
    );
    v.push(cmd(
        "topology files",
        &["simulate", "-t", "tree:missing.conf", "-a", "tree", "-q"],
    ));
    // Two roots: the default workload fits the larger root.
    v.push(
        cmd(
            "topology files",
            &words("simulate -t tree:two.conf -a tree --jobs 20 -q"),
        )
        .file(
            "two.conf",
            "SwitchName=a Nodes=n[0-3]\nSwitchName=b Nodes=m[0-7]\n",
        )
        .expect(Expect::Ok),
    );
    v
}

/// Pod TOML files.
fn pod_files() -> Vec<Probe> {
    let big_list = format!(
        "sides = \"8x8\"\nshapes = [{}]\n",
        (0..10_000).map(|_| "\"2x2\"").collect::<Vec<_>>().join(",")
    );
    let cases: Vec<(&str, String, Expect, Option<&str>)> = vec![
        (
            "empty",
            String::new(),
            Expect::Fails,
            Some("neither sides nor a preset"),
        ),
        (
            "syntax",
            "name = \n".into(),
            Expect::Fails,
            Some("p.toml: line 1: "),
        ),
        (
            "unclosed table",
            "sides = \"8x8\"\n[x\n".into(),
            Expect::Fails,
            Some("line 2: "),
        ),
        (
            "sides number",
            "sides = 8\n".into(),
            Expect::Fails,
            Some("line 1: "),
        ),
        (
            "zero sides",
            "sides = \"0x0\"\nshapes = [\"1x1\"]\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "no shapes",
            "sides = \"8x8\"\nshapes = []\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "shape too big",
            "sides = \"8x8\"\nshapes = [\"9x9\"]\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "unknown preset",
            "preset = \"tpu-v9\"\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "bad wiring",
            "preset = \"tpu-v4\"\nwiring = \"x\"\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "odd cube",
            "preset = \"tpu-v4\"\nsides = \"8x8x8\"\ncube = \"3x3x3\"\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "reconfigurable without cube",
            "sides = \"8x8\"\nshapes = [\"2x2\"]\nwiring = \"reconfigurable\"\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "huge sides",
            "sides = \"4096x4096x4096\"\nshapes = [\"1x1x1\"]\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "over u32",
            "sides = \"4294967296x1\"\nshapes = [\"1x1\"]\n".into(),
            Expect::Fails,
            Some("larger than the largest side"),
        ),
        (
            "bad name",
            "name = \"é\"\nsides = \"8x8\"\nshapes = [\"2x2\"]\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "nesting",
            format!("{}\n", "[".repeat(10_000)),
            Expect::Fails,
            None,
        ),
        (
            "duplicate key",
            "sides = \"8x8\"\nsides = \"4x4\"\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "unknown key",
            "sides = \"8x8\"\nshape = [\"2x2\"]\n".into(),
            Expect::Fails,
            Some("unknown field"),
        ),
        (
            "bom",
            "\u{feff}sides = \"8x8\"\nshapes = [\"2x2\"]\n".into(),
            Expect::Either,
            None,
        ),
        (
            "crlf",
            "sides = \"8x8\"\r\nshapes = [\"2x2\", \"8x8\"]\r\n".into(),
            Expect::Ok,
            None,
        ),
        ("10k shapes", big_list, Expect::Either, None),
        (
            "rotate string",
            "sides = \"8x8\"\nshapes = [\"2x2\"]\nrotate = \"yes\"\n".into(),
            Expect::Fails,
            None,
        ),
        ("binary", "\0\0\0\u{1}".into(), Expect::Fails, None),
        (
            "long value",
            format!("sides = \"{}\"\n", "9".repeat(1_000_000)),
            Expect::Fails,
            None,
        ),
    ];
    cases
        .into_iter()
        .map(|(what, text, e, says)| {
            let mut p = cmd(
                "pod toml",
                &words("simulate -t p.toml -a pod-first-fit --jobs 10 -q"),
            )
            .file("p.toml", text)
            .expect(e);
            p.name = format!("pod file {what}");
            if let Some(s) = says {
                p = p.says(s);
            }
            p
        })
        .collect()
}

/// SWF traces, through `replay` and `simulate --trace`.
fn swf_traces() -> Vec<Probe> {
    let job = |fields: &str| format!("; MaxNodes: 64\n{fields}\n");
    let ok_line = "1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1";
    let cases: Vec<(&str, String, Expect, Option<&str>)> = vec![
        ("empty", String::new(), Expect::Either, None),
        (
            "header only",
            "; MaxNodes: 64\n".into(),
            Expect::Either,
            None,
        ),
        (
            "huge MaxNodes",
            format!("; MaxNodes: 99999999999999999999999\n{ok_line}\n"),
            Expect::Either,
            None,
        ),
        (
            "17 fields",
            job("1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "19 fields",
            job(&format!("{ok_line} 5")),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "negative run",
            job("1 0 -1 -5 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "all unknown",
            job("1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1"),
            Expect::Fails,
            None,
        ),
        (
            "run 1e308",
            job("1 0 -1 1e308 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2: field 4 (run time)"),
        ),
        (
            "run above 1e12",
            job("1 0 -1 1000000000001 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "submit 1e308",
            job("1 1e308 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "procs 2^40+1",
            job("1 0 -1 10 1099511627777 -1 -1 1099511627777 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "procs 0",
            job("1 0 -1 10 0 -1 -1 0 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            None,
        ),
        (
            "procs too many",
            job("1 0 -1 10 65 -1 -1 65 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            None,
        ),
        (
            "nan",
            job("1 0 -1 nan 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "inf",
            job("1 0 -1 inf 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "unsorted",
            format!(
                "{}2 5 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n",
                "; MaxNodes: 64\n"
            ),
            Expect::Ok,
            None,
        ),
        (
            "long line",
            format!("; MaxNodes: 64\n{}\n", "7".repeat(3 << 20)),
            Expect::Fails,
            Some("longer than"),
        ),
        (
            "long field",
            job(&format!(
                "1 0 -1 {} 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1",
                "8".repeat(100_000)
            )),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "binary",
            "\0\u{1}\u{2}\u{3}\n\u{7f}".into(),
            Expect::Fails,
            None,
        ),
        (
            "crlf",
            format!("; MaxNodes: 64\r\n{ok_line}\r\n"),
            Expect::Either,
            None,
        ),
        (
            "tabs",
            job(&ok_line.replace(' ', "\t")),
            Expect::Either,
            None,
        ),
        ("bom", format!("\u{feff}{ok_line}\n"), Expect::Either, None),
        (
            "duplicate ids",
            format!("; MaxNodes: 64\n{ok_line}\n{ok_line}\n"),
            Expect::Either,
            None,
        ),
        (
            "job number past u64",
            job("18446744073709551616 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "not utf-8",
            "; MaxNodes: 64\n1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 \u{ff}\n".into(),
            Expect::Fails,
            None,
        ),
        (
            "header line break",
            "; Note: a\rb\n1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n".into(),
            Expect::Either,
            None,
        ),
    ];
    let mut v = Vec::new();
    for (what, text, e, says) in cases {
        for (how, args) in [
            (
                "replay",
                vec!["replay", "t.swf", "-t", "mesh:8x8", "-a", "first-fit", "-q"],
            ),
            (
                "simulate",
                words("simulate --trace t.swf -t mesh:8x8 -a first-fit -q"),
            ),
        ] {
            // `simulate` on an empty trace and `replay` on one may differ
            // (exit 0 with zeros or a refusal): both are allowed there.
            let mut p = Probe::new("swf", format!("{how} {what}"), &args)
                .file("t.swf", text.clone())
                .expect(e);
            if let Some(s) = says {
                p = p.says(s);
            }
            v.push(p);
        }
    }
    v
}

/// sacct dumps.
fn sacct_dumps() -> Vec<Probe> {
    let head = "JobID|Submit|Start|End|NNodes|Timelimit|State\n";
    let row = |id: &str, submit: &str, start: &str, end: &str, n: &str, limit: &str| {
        format!("{id}|{submit}|{start}|{end}|{n}|{limit}|COMPLETED\n")
    };
    let t0 = "2024-01-01T00:00:00";
    let t1 = "2024-01-01T00:10:00";
    let all_unknown: String = (0..10)
        .map(|i| row(&i.to_string(), t0, "Unknown", "Unknown", "1", "10"))
        .collect::<String>()
        + &row("10", t0, t0, t1, "200", "10")
        + &row("11", t0, t0, t1, "300", "10");
    let cases: Vec<(&str, String, Expect, Option<&str>)> = vec![
        ("empty", String::new(), Expect::Fails, Some("empty")),
        (
            "header only",
            head.into(),
            Expect::Fails,
            Some("no job line"),
        ),
        (
            "no NNodes",
            "JobID|Submit|Start|End\n1|a|b|c\n".into(),
            Expect::Fails,
            Some("NNodes"),
        ),
        (
            "all unusable",
            format!("{head}{all_unknown}"),
            Expect::Fails,
            Some("10 never ran"),
        ),
        (
            "10 MB field",
            format!(
                "{head}{}",
                row("1", &"7".repeat(10 << 20), t0, t1, "1", "10")
            ),
            Expect::Fails,
            Some("…"),
        ),
        (
            "field count",
            format!("{head}1|{t0}|{t0}\n"),
            Expect::Fails,
            Some("line 2"),
        ),
        (
            "nodes 2^32",
            format!("{head}{}", row("1", t0, t0, t1, "4294967296", "10")),
            Expect::Fails,
            None,
        ),
        (
            "nodes 0",
            format!("{head}{}", row("1", t0, t0, t1, "0", "10")),
            Expect::Fails,
            None,
        ),
        (
            "limit weird",
            format!("{head}{}", row("1", t0, t0, t1, "1", "1:2:3:4")),
            Expect::Fails,
            None,
        ),
        (
            "limit huge",
            format!(
                "{head}{}",
                row("1", t0, t0, t1, "1", "99999999999999-00:00:00")
            ),
            Expect::Either,
            None,
        ),
        (
            "feb 30",
            format!(
                "{head}{}",
                row("1", "2024-02-30T00:00:00", t0, t1, "1", "10")
            ),
            Expect::Fails,
            None,
        ),
        (
            "year 99999",
            format!(
                "{head}{}",
                row("1", "99999-01-01T00:00:00", t0, t1, "1", "10")
            ),
            Expect::Fails,
            None,
        ),
        (
            "year 0",
            format!(
                "{head}{}",
                row("1", "0000-01-01T00:00:00", t0, t1, "1", "10")
            ),
            Expect::Either,
            None,
        ),
        (
            "ends before start",
            format!("{head}{}", row("1", t0, t1, t0, "1", "10")),
            Expect::Fails,
            None,
        ),
        (
            "steps only",
            format!("{head}{}", row("1.batch", t0, t0, t1, "1", "10")),
            Expect::Fails,
            None,
        ),
        (
            "empty id",
            format!("{head}{}", row("", t0, t0, t1, "1", "10")),
            Expect::Fails,
            None,
        ),
        (
            "crlf",
            format!(
                "{}{}",
                head.replace('\n', "\r\n"),
                row("1", t0, t0, t1, "1", "10").replace('\n', "\r\n")
            ),
            Expect::Either,
            None,
        ),
        (
            "long id",
            format!("{head}{}", row(&"9".repeat(1 << 20), t0, t0, t1, "1", "10")),
            Expect::Either,
            None,
        ),
        (
            "far apart",
            format!(
                "{head}{}{}",
                row(
                    "1",
                    "1970-01-01T00:00:00",
                    "1970-01-01T00:00:00",
                    "1970-01-01T00:00:01",
                    "1",
                    "10"
                ),
                row(
                    "2",
                    "9999-12-31T23:59:59",
                    "9999-12-31T23:59:59",
                    "9999-12-31T23:59:59",
                    "1",
                    "10"
                )
            ),
            Expect::Either,
            None,
        ),
        ("binary", "\0|\u{1}|\u{2}\n".into(), Expect::Fails, None),
    ];
    let mut v = Vec::new();
    for (what, text, e, says) in cases {
        for lenient in [false, true] {
            let mut args = words("replay d.txt -t mesh:4x4 -a first-fit --trace-format sacct -q");
            if lenient {
                args.push("--lenient");
            }
            let mut p = Probe::new(
                "sacct",
                format!("{what}{}", if lenient { " (lenient)" } else { "" }),
                &args,
            )
            .file("d.txt", text.clone());
            // Lenient reading may skip what strict reading refuses.
            p = p.expect(if lenient && e == Expect::Fails {
                Expect::Either
            } else {
                e
            });
            if let Some(s) = says
                && !lenient
            {
                p = p.says(s);
            }
            v.push(p);
        }
    }
    v
}

/// Workload laws on every kind of machine.
fn workload_laws() -> Vec<Probe> {
    let mut v = Vec::new();
    let machines: &[(&str, &str)] = &[
        ("mesh:8x8", "first-fit"),
        ("hypercube:6", "buddy"),
        ("blocks:b.conf", "block"),
        ("tree:t.conf", "tree"),
        ("pod:tpu-v4:4x4x4", "pod-first-fit"),
    ];
    for (m, a) in machines {
        for shapes in [
            "auto",
            "sides",
            "cubic",
            "noncubic",
            "cube",
            "nodes",
            "catalogue",
        ] {
            v.push(
                cmd(
                    "workload laws",
                    &[
                        "simulate", "-t", m, "-a", a, "--shapes", shapes, "--jobs", "10", "-q",
                    ],
                )
                .file("b.conf", data("blocks.conf"))
                .file("t.conf", data("tree.conf"))
                .expect(Expect::Either),
            );
        }
    }
    // A law that does not fit says which ones do.
    for (m, a, shapes, says) in [
        ("blocks:b.conf", "block", "sides", "use nodes"),
        ("blocks:b.conf", "block", "cube", "use nodes"),
        ("hypercube:6", "buddy", "sides", "use cube"),
        (
            "mesh:8x8",
            "first-fit",
            "cube",
            "use sides, cubic or noncubic",
        ),
    ] {
        v.push(
            cmd(
                "workload laws",
                &[
                    "simulate", "-t", m, "-a", a, "--shapes", shapes, "--jobs", "10", "-q",
                ],
            )
            .file("b.conf", data("blocks.conf"))
            .expect(Expect::Fails)
            .says(says),
        );
    }
    for dims in [
        "uniform:0-99",
        "uniform:9-3",
        "uniform:0-6",
        "normal",
        "1e308,1e308",
        "",
        ",",
        "-1",
        "nan",
        "0,0,0",
        "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
        "uniform:0-4294967296",
        "uniform",
        "uniform:",
    ] {
        v.push(
            cmd(
                "workload laws",
                &[
                    "simulate",
                    "-t",
                    "hypercube:6",
                    "-a",
                    "buddy",
                    "--shapes",
                    "cube",
                    "--cube-dims",
                    dims,
                    "--jobs",
                    "10",
                    "-q",
                ],
            )
            .expect(Expect::Any),
        );
    }
    v.push(
        cmd(
            "workload laws",
            &words("simulate -t hypercube:6 -a buddy --shapes cube --cube-dims uniform:0-99 --jobs 10 -q"),
        )
        .expect(Expect::Fails)
        .says("larger than the machine's 6-cube"),
    );
    for r in [
        "exp:0",
        "exp:-1",
        "exp:inf",
        "exp:nan",
        "exp:1e308",
        "exp:1e-308",
        "uniform:-1-5",
        "uniform:5-1",
        "uniform:0-inf",
        "uniform:1e-3-3E-3",
        "hyper:1,0,1",
        "hyper:1,1,1",
        "hyper:1,0.5,0.1",
        "hyper:1,0.5",
        "const:0",
        "const:1e308",
        "foo:1",
        "exp",
        "exp:",
        ":",
        "uniform:1-2-3",
    ] {
        v.push(
            cmd(
                "workload laws",
                &[
                    "simulate",
                    "-t",
                    "mesh:8x8",
                    "-a",
                    "first-fit",
                    "--residence",
                    r,
                    "--jobs",
                    "10",
                    "-q",
                ],
            )
            .expect(Expect::Any),
        );
    }
    for w in [
        "1,1,1,1,1",
        "0,0,0,0,0",
        "1e308,1e308,1,1,1",
        "-1,1,1,1,1",
        "nan,1,1,1,1",
        "1",
        "",
        "1,1,1,1,1,1,1,1,1",
    ] {
        v.push(
            cmd(
                "workload laws",
                &[
                    "simulate",
                    "-t",
                    "pod:tpu-v4:4x4x4",
                    "-a",
                    "pod-first-fit",
                    "--shapes",
                    "catalogue",
                    "--shape-weights",
                    w,
                    "--jobs",
                    "10",
                    "-q",
                ],
            )
            .expect(Expect::Any),
        );
    }
    for m in [
        "0x0",
        "100x100",
        "8",
        "4x4x4",
        "-1",
        "1e3",
        "99999999999",
        "8x8",
        "1x1",
        "x",
    ] {
        for (t, a) in [("mesh:8x8", "first-fit"), ("blocks:b.conf", "block")] {
            v.push(
                cmd(
                    "workload laws",
                    &[
                        "simulate",
                        "-t",
                        t,
                        "-a",
                        a,
                        "--max-sides",
                        m,
                        "--jobs",
                        "10",
                        "-q",
                    ],
                )
                .file("b.conf", data("blocks.conf"))
                .expect(Expect::Any),
            );
        }
    }
    for s in ["uniform", "normal", "exponential", "exp", "weird"] {
        v.push(
            cmd(
                "workload laws",
                &[
                    "simulate",
                    "-t",
                    "mesh:8x8",
                    "-a",
                    "first-fit",
                    "--shapes",
                    "sides",
                    "--sides",
                    s,
                    "--jobs",
                    "10",
                    "-q",
                ],
            )
            .expect(Expect::Any),
        );
    }
    v
}

/// Strategy and policy specs.
fn strategy_specs() -> Vec<Probe> {
    let long = "q".repeat(100_000);
    let long_key = format!("fsl[{long}=1]");
    let long_value = format!("fsl[r={long}]");
    let specs: Vec<String> = [
        "",
        "fsl[",
        "fsl[]",
        "fsl]",
        "fsl[a=1]",
        "fsl[r=]",
        "fsl[r=nan]",
        "fsl[r=-1]",
        "fsl[r=1e308]",
        "fsl[=1]",
        "fsl[r=1,r=2]",
        "FSL",
        "fsl ",
        " fsl",
        "paging[[]]",
        "buddy[x=1]",
        "gray-code[code=]",
        "partner-ext[delta=-1]",
        "partner-ext[delta=inf]",
        "isomorphic[split=maybe]",
        "frame-sliding[stride=0]",
        "é",
        "fsl[r=1]]",
        "fsl,paging",
        "block",
        "tree[max_leaves=0]",
        "pod-first-fit",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([long.clone(), long_key, long_value])
    .collect();
    let mut v = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let short: String = s.chars().take(30).collect();
        let mut p = Probe::new("strategy specs", format!("-a {short:?} #{i}"), &[]);
        p.args = ["simulate", "-t", "mesh:8x8", "-a", s, "--jobs", "5", "-q"]
            .iter()
            .map(|x| (*x).to_owned())
            .collect();
        v.push(p);
    }
    for s in [
        "",
        "fcfs[",
        "fcfs[x=1]",
        "easy",
        "lazy[window=-1]",
        "scan[dir=up]",
        "nope",
        "threshold[t=nan]",
        long.as_str(),
    ] {
        let short: String = s.chars().take(30).collect();
        let mut p = Probe::new("strategy specs", format!("-s {short:?}"), &[]);
        p.args = [
            "simulate",
            "-t",
            "mesh:8x8",
            "-a",
            "first-fit",
            "-s",
            s,
            "--jobs",
            "5",
            "-q",
        ]
        .iter()
        .map(|x| (*x).to_owned())
        .collect();
        v.push(p);
    }
    for (a, r) in [
        ("first-fit,first-fit", "paging"),
        ("first-fit,,paging", "paging"),
        ("", "paging"),
        ("first-fit", "nope"),
        ("first-fit", ""),
        ("nope", "paging"),
    ] {
        v.push(
            cmd(
                "strategy specs",
                &[
                    "replay",
                    "t.swf",
                    "-t",
                    "mesh:8x8",
                    "-a",
                    a,
                    "--reference",
                    r,
                    "-q",
                ],
            )
            .file("t.swf", data("mesh8x8.swf"))
            .expect(Expect::Any),
        );
    }
    v.push(
        Probe::new(
            "strategy specs",
            "a 100,000-character strategy is echoed in 40",
            &[],
        )
        .expect(Expect::Fails)
        .says("…"),
    );
    let last = v.len() - 1;
    v[last].args = ["simulate", "-t", "mesh:8x8", "-a", &long, "-q"]
        .iter()
        .map(|x| (*x).to_owned())
        .collect();
    v
}

/// Numeric flags of every subcommand.
fn numeric_flags() -> Vec<Probe> {
    let mut v = Vec::new();
    let sim = |flag: &str, value: &str| {
        cmd(
            "numeric flags",
            &[
                "simulate",
                "-t",
                "mesh:8x8",
                "-a",
                "first-fit",
                "--jobs",
                "10",
                "-q",
                flag,
                value,
            ],
        )
    };
    for load in [
        "0", "-1", "nan", "inf", "1", "1e-308", "1e-9", "0.999999", "1e308", "", "0x1", "-0",
    ] {
        v.push(sim("--load", load).expect(Expect::Any));
    }
    v.push(sim("--load", "1e-308").expect(Expect::Fails).says("--load"));
    for jobs in ["0", "-1", "1e3", "18446744073709551616", ""] {
        v.push(
            cmd(
                "numeric flags",
                &[
                    "simulate",
                    "-t",
                    "mesh:8x8",
                    "-a",
                    "first-fit",
                    "-q",
                    "--jobs",
                    jobs,
                ],
            )
            .expect(Expect::Any),
        );
    }
    for (flag, values) in [
        ("--warmup", &["-1", "x"][..]),
        ("--seeds", &["0", "100001", "18446744073709551615"][..]),
        ("--seed", &["18446744073709551615", "-1", "x"][..]),
        ("--threads", &["0", "-1", "65536"][..]),
        ("--time", &["0", "-1", "nan", "inf", "1e308"][..]),
    ] {
        for value in values {
            v.push(sim(flag, value).expect(Expect::Any));
        }
    }
    for at in ["-1", "nan", "inf", "1e308", "0", "x"] {
        v.push(
            cmd(
                "numeric flags",
                &["show", "-t", "mesh:8x8", "-a", "first-fit", "--at", at],
            )
            .expect(Expect::Any),
        );
    }
    for slice in ["-1", "99999999999", "x", "0"] {
        v.push(
            cmd(
                "numeric flags",
                &[
                    "show",
                    "-t",
                    "mesh:4x4x4",
                    "-a",
                    "first-fit",
                    "--at",
                    "3",
                    "--slice",
                    slice,
                ],
            )
            .expect(Expect::Any),
        );
    }
    let replay = |flag: &str, value: &str| {
        cmd(
            "numeric flags",
            &[
                "replay",
                "t.swf",
                "-t",
                "mesh:8x8",
                "-a",
                "first-fit",
                "-q",
                flag,
                value,
            ],
        )
        .file("t.swf", data("mesh8x8.swf"))
    };
    for (flag, values) in [
        ("--cores-per-node", &["0", "4294967296", "-1", "1"][..]),
        (
            "--load-scale",
            &["0", "-1", "inf", "nan", "1e-308", "1e308"][..],
        ),
        (
            "--target-load",
            &["0", "-1", "inf", "nan", "1e-308", "1e308", "2"][..],
        ),
        ("--jobs", &["0", "1", "18446744073709551616"][..]),
    ] {
        for value in values {
            v.push(replay(flag, value).expect(Expect::Any));
        }
    }
    let sweep = |extra: &[&str]| {
        let mut args = vec!["sweep", "e.toml", "-o", "out.csv", "-q", "--no-plots"];
        args.extend_from_slice(extra);
        cmd("numeric flags", &args).file("e.toml", data("sweep.toml"))
    };
    for extra in [
        &["--limit", "0"][..],
        &["--limit", "-1"][..],
        &["--shard", "0/0"][..],
        &["--shard", "2/2"][..],
        &["--shard", "1/0"][..],
        &["--shard", "a/b"][..],
        &["--shard", "18446744073709551615/18446744073709551616"][..],
        &["--shard", "0/18446744073709551615"][..],
        &["--shard", "/"][..],
        &["--threads", "0"][..],
        &["--emit-slurm", "--shards", "0"][..],
        &["--emit-slurm", "--shards", "18446744073709551615"][..],
        &["--emit-slurm", "--cpus-per-task", "0"][..],
        &["--emit-slurm", "--time", "x\ny"][..],
        &["--emit-slurm", "--partition", "p q"][..],
        &["--emit-slurm", "--sbatch-arg", "--x=$(touch PWNED)"][..],
    ] {
        v.push(sweep(extra).expect(Expect::Any).absent("PWNED"));
    }
    for (flag, value) in [
        ("--jobs", "0"),
        ("--jobs", "10000001"),
        ("--jobs", "18446744073709551615"),
        ("--load", "1e-308"),
        ("--seed", "18446744073709551615"),
    ] {
        v.push(
            cmd(
                "numeric flags",
                &["generate", "-t", "mesh:8x8", "--out", "g.swf", flag, value],
            )
            .expect(Expect::Any),
        );
    }
    v
}

/// Sweep experiment files.
fn sweep_files() -> Vec<Probe> {
    let base = String::from_utf8(data("sweep.toml")).unwrap_or_default();
    let with = |from: &str, to: &str| base.replace(from, to);
    let cases: Vec<(&str, String, Expect, Option<&str>)> = vec![
        ("empty", String::new(), Expect::Fails, None),
        (
            "no topologies",
            with("topologies = [\"mesh:4x4\"]\n", ""),
            Expect::Fails,
            None,
        ),
        (
            "empty topologies",
            with("[\"mesh:4x4\"]", "[]"),
            Expect::Fails,
            Some("topologies is empty"),
        ),
        ("empty loads", with("[0.3, 0.5]", "[]"), Expect::Fails, None),
        (
            "bad load",
            with("[0.3, 0.5]", "[0.3, -1]"),
            Expect::Fails,
            None,
        ),
        (
            "tiny load",
            with("[0.3, 0.5]", "[0.3, 1e-308]"),
            Expect::Fails,
            None,
        ),
        (
            "zero seeds",
            with("seeds = 2", "seeds = 0"),
            Expect::Fails,
            None,
        ),
        (
            "max seeds",
            with("seeds = 2", "seeds = 18446744073709551615"),
            Expect::Fails,
            None,
        ),
        (
            "seeds past u64",
            with("seeds = 2", "seeds = 18446744073709551616"),
            Expect::Fails,
            None,
        ),
        (
            "unknown allocator",
            with("\"paging\"", "\"nope\""),
            Expect::Fails,
            None,
        ),
        (
            "zero jobs",
            with("jobs = 30", "jobs = 0"),
            Expect::Fails,
            None,
        ),
        (
            "output root",
            with("output = \"small.csv\"", "output = \"/\""),
            Expect::Fails,
            None,
        ),
        (
            "output dir",
            with("output = \"small.csv\"", "output = \".\""),
            Expect::Fails,
            None,
        ),
        (
            "unknown metric",
            with("\"mean_response\"", "\"nope\""),
            Expect::Fails,
            None,
        ),
        (
            "bad series",
            format!("{base}series = \"x\"\n"),
            Expect::Fails,
            None,
        ),
        (
            "unknown workload key",
            with("jobs = 30", "jobs = 30\nnope = 1"),
            Expect::Fails,
            None,
        ),
        (
            "duplicate table",
            format!("{base}[workload]\njobs = 3\n"),
            Expect::Fails,
            None,
        ),
        (
            "syntax",
            with("loads = [0.3, 0.5]", "loads = [0.3, 0.5"),
            Expect::Fails,
            Some("e.toml: line"),
        ),
        (
            "machine too large",
            with("[\"mesh:4x4\"]", "[\"mesh:40000x40000\"]"),
            Expect::Fails,
            None,
        ),
        (
            "bad workload law",
            with("exp:1", "exp:-1"),
            Expect::Fails,
            None,
        ),
        (
            "negative residence bound",
            with("exp:1", "uniform:-1-5"),
            Expect::Fails,
            Some("lower bound -1 is negative"),
        ),
        (
            "cube dimension weights overflow",
            with("[\"mesh:4x4\"]", "[\"hypercube:6\"]")
                .replace("[\"first-fit\", \"paging\"]", "[\"buddy\"]")
                .replace(
                    "shapes = \"sides\"",
                    "shapes = \"cube\"\ncube_dims = \"1e308,1e308\"",
                ),
            Expect::Fails,
            Some("add up to more than the largest finite number"),
        ),
        (
            "cube dimensions above the machine",
            with("[\"mesh:4x4\"]", "[\"hypercube:6\"]")
                .replace("[\"first-fit\", \"paging\"]", "[\"buddy\"]")
                .replace(
                    "shapes = \"sides\"",
                    "shapes = \"cube\"\ncube_dims = \"uniform:0-99\"",
                ),
            Expect::Fails,
            Some("larger than the machine's 6-cube"),
        ),
        (
            "shapes misfit on a block machine",
            with("[\"mesh:4x4\"]", "[\"blocks:b.conf\"]")
                .replace("[\"first-fit\", \"paging\"]", "[\"block\"]"),
            Expect::Fails,
            Some("use nodes"),
        ),
        (
            "shapes misfit",
            with("shapes = \"sides\"", "shapes = \"cube\""),
            Expect::Fails,
            None,
        ),
        (
            "huge array",
            with(
                "[0.3, 0.5]",
                &format!("[{}]", vec!["0.3"; 100_000].join(",")),
            ),
            Expect::Either,
            None,
        ),
        ("binary", "\0\u{1}\u{2}".into(), Expect::Fails, None),
        (
            "long string",
            with("small.csv", &"s".repeat(1_000_000)),
            Expect::Either,
            None,
        ),
    ];
    cases
        .into_iter()
        .map(|(what, text, e, says)| {
            let mut p = cmd(
                "sweep toml",
                &["sweep", "e.toml", "-q", "--no-plots", "--limit", "1"],
            )
            .file("e.toml", text)
            .expect(e);
            p.name = format!("sweep file {what}");
            p = p.file("b.conf", data("blocks.conf"));
            if let Some(s) = says {
                p = p.says(s);
            }
            p
        })
        .collect()
}

/// Output paths of every writer: a directory, a missing parent, an
/// existing file, a path with a newline. (Devices, FIFOs, symbolic links
/// and inputs as outputs are item 8 of the earlier findings, in
/// [`super::issue`].)
fn output_paths() -> Vec<Probe> {
    // The writers of item 8 of the earlier findings but `sweep merge`, whose
    // inputs differ.
    let writers: Vec<(&str, Vec<&str>)> = super::issue::writers()
        .into_iter()
        .filter(|(w, _)| *w != "sweep merge")
        .collect();
    let mut v = Vec::new();
    for (w, args) in &writers {
        let with = |target: &str| {
            let mut a = args.clone();
            a.push(target);
            Probe::new("output paths", format!("{w} {target:?}"), &a)
                .file("t.swf", data("mesh8x8.swf"))
                .file("e.toml", data("sweep.toml"))
        };
        v.push(
            with("d")
                .special(Special::Dir("d".into()))
                .expect(Expect::Fails),
        );
        v.push(
            with("d/")
                .special(Special::Dir("d".into()))
                .expect(Expect::Fails),
        );
        v.push(
            with("missing/x.out")
                .expect(Expect::Fails)
                .absent("missing"),
        );
        v.push(with("").expect(Expect::Any));
        v.push(with("new\nline.out").expect(Expect::Either));
        v.push(
            // `sweep` resumes from an existing output, so it may refuse
            // one that is not its CSV.
            with("old.out")
                .output_file("old.out", "old")
                .expect(Expect::Either),
        );
        v.push(with("{dir}/abs.out").expect(Expect::Ok));
        v.push(
            with("f/x.out")
                .file("f", "a file, not a directory")
                .expect(Expect::Fails),
        );
    }
    v
}

/// Shards and `sweep merge`.
fn shards() -> Vec<Probe> {
    let mut v = Vec::new();
    let shard_files = super::recovery::shard_files();
    let merge = |what: &str, args: &[&str]| {
        let mut p = Probe::new("shards and merge", format!("merge {what}"), args);
        for (name, bytes) in &shard_files {
            p = p.file(name, bytes.clone());
        }
        p
    };
    let (a, b) = ("e.shard-0-of-2.csv", "e.shard-1-of-2.csv");
    v.push(merge("both", &["sweep", "merge", "m.csv", a, b]).expect(Expect::Ok));
    v.push(
        merge("one missing", &["sweep", "merge", "m.csv", a])
            .expect(Expect::Fails)
            .absent("m.csv"),
    );
    v.push(
        merge("twice", &["sweep", "merge", "m.csv", a, a])
            .expect(Expect::Fails)
            .absent("m.csv"),
    );
    v.push(
        merge("no shards", &["sweep", "merge", "m.csv"])
            .expect(Expect::Any)
            .absent("m.csv"),
    );
    v.push(
        merge("not a shard", &["sweep", "merge", "m.csv", a, "e.toml"])
            .expect(Expect::Fails)
            .absent("m.csv"),
    );
    v.push(
        merge("missing file", &["sweep", "merge", "m.csv", a, "nope.csv"])
            .expect(Expect::Fails)
            .absent("m.csv"),
    );
    v.push(
        merge("three of two", &["sweep", "merge", "m.csv", a, b, b])
            .expect(Expect::Fails)
            .absent("m.csv"),
    );
    v.push(
        merge("out is a directory", &["sweep", "merge", "sub", a, b])
            .special(Special::Dir("sub".into()))
            .expect(Expect::Fails),
    );
    for (what, from, to) in [
        ("points 0", "\"points\":4", "\"points\":0"),
        ("points 5", "\"points\":4", "\"points\":5"),
        ("points -1", "\"points\":4", "\"points\":-1"),
        ("shards 0", "\"shards\":2", "\"shards\":0"),
        ("shard 7", "\"shard\":0", "\"shard\":7"),
        (
            "other experiment",
            "\"experiment\":\"",
            "\"experiment\":\"0",
        ),
        ("format 2", "shard/1", "shard/2"),
        ("ids past points", "\"ids\":[0,2]", "\"ids\":[0,99]"),
        (
            "ids huge",
            "\"ids\":[0,2]",
            "\"ids\":[0,18446744073709551615]",
        ),
        ("ids repeated", "\"ids\":[0,2]", "\"ids\":[0,0]"),
        ("csv hash", "\"csv\":\"", "\"csv\":\"0"),
    ] {
        let mut p = merge(what, &["sweep", "merge", "m.csv", a, b])
            .expect(Expect::Fails)
            .absent("m.csv");
        for (name, bytes) in &mut p.files {
            if name == "e.shard-0-of-2.json" {
                let text = String::from_utf8_lossy(bytes).replacen(from, to, 1);
                *bytes = text.into_bytes();
            }
        }
        v.push(p);
    }
    v.push({
        let mut p = merge("csv edited", &["sweep", "merge", "m.csv", a, b])
            .expect(Expect::Fails)
            .absent("m.csv");
        for (name, bytes) in &mut p.files {
            if name == a {
                bytes.extend_from_slice(b"mesh:4x4,x,fcfs,0.3,0,2\n");
            }
        }
        p
    });
    v
}

/// Random mutations of shard records and shard CSVs, merged.
fn shard_mutations(n: usize) -> Vec<Probe> {
    let shard_files = super::recovery::shard_files();
    let mut v = Vec::new();
    for i in 0..n {
        for target in ["e.shard-0-of-2.json", "e.shard-1-of-2.csv"] {
            let s = 0xa000_0000 | (i as u64) << 1 | u64::from(target.ends_with("csv"));
            let mut p = Probe::new(
                "mutations",
                format!("shard {target} #{s:x}"),
                &words("sweep merge m.csv e.shard-0-of-2.csv e.shard-1-of-2.csv"),
            );
            for (name, bytes) in &shard_files {
                let b = if name == target {
                    mutate(bytes, &mut Rng::new(s))
                } else {
                    bytes.clone()
                };
                p = p.file(name, b);
            }
            v.push(p.expect(Expect::Either));
        }
    }
    v
}

/// Every probe of the corpus. The fast part takes every other
/// hand-written probe (and every one that checks a message) and a few
/// mutations per kind.
pub(crate) fn probes(full: bool) -> Vec<Probe> {
    let mut v = hand_written();
    if !full {
        v = v
            .into_iter()
            .enumerate()
            .filter(|(i, p)| i % 2 == 0 || p.says.is_some())
            .map(|(_, p)| p)
            .collect();
    }
    v.extend(mutations(if full { 100 } else { 4 }));
    v.extend(shard_mutations(if full { 50 } else { 2 }));
    v
}

/// The hand-written and generated probes of every surface.
fn hand_written() -> Vec<Probe> {
    let mut v = Vec::new();
    v.extend(topology_strings());
    v.extend(topology_files());
    v.extend(pod_files());
    v.extend(swf_traces());
    v.extend(sacct_dumps());
    v.extend(workload_laws());
    v.extend(strategy_specs());
    v.extend(numeric_flags());
    v.extend(sweep_files());
    v.extend(output_paths());
    v.extend(shards());
    v
}
