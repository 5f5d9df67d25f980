//! The guards of the readers of machine files and descriptions: sizes
//! refused before anything is built, inputs echoed short and escaped,
//! wrong documents refused, names the formatter cannot pad.

#![expect(clippy::expect_used, reason = "a missing example file stops the test")]

use partalloc_topology::capacity::{CapacityMachine, MAX_NODES, MAX_UNITS};
use partalloc_topology::slurm::{SlurmMachine, hostlist};
use partalloc_topology::{Topology, echo, escaped};

fn example(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/kueue")
        .join(name);
    std::fs::read_to_string(&path).expect("the Kueue examples are readable")
}

#[test]
fn echo_caps_and_escapes_every_control_character() {
    let e = echo("r0\u{1b}]0;title\u{7}\n\u{202e}x");
    assert!(!e.chars().any(char::is_control), "{e:?}");
    assert_eq!(e, "r0\\u{1b}]0;title\\u{7}\\n\\u{202e}x");
    assert_eq!(escaped("plain"), "plain");
    let long = format!("{}\n", "a".repeat(100));
    assert_eq!(echo(&long).chars().count(), 41);
    assert!(!escaped(&long).contains('\n'));
}

#[test]
fn a_host_number_padded_past_the_formatters_width_expands_and_compresses() {
    let zeros = "0".repeat(70_000);
    let names = hostlist::expand(&format!("n[{zeros}1-{zeros}3]")).unwrap();
    assert_eq!(names.len(), 3);
    assert_eq!(names[2], format!("n{zeros}3"));
    assert_eq!(hostlist::compress(&names), format!("n[{zeros}1-{zeros}3]"));
    let conf = format!("BlockName=r0 Nodes=n[{zeros}1-{zeros}4]\n");
    assert_eq!(
        SlurmMachine::parse_conf(&conf, "pad.conf")
            .unwrap()
            .num_nodes(),
        4
    );
}

#[test]
fn hostlist_errors_repeat_a_short_escaped_expression() {
    let huge = format!("{}[1-", "x".repeat(1 << 20));
    let e = hostlist::expand(&huge).unwrap_err().to_string();
    assert!(e.len() < 200, "{} bytes", e.len());
    let e = SlurmMachine::parse_conf(&format!("BlockName=b\u{1b}[2J Nodes={huge}\n"), "b.conf")
        .unwrap_err()
        .to_string();
    assert!(e.len() < 300 && !e.contains('\u{1b}'), "{e:?}");
}

#[test]
fn racks_over_the_bounds_are_refused_from_their_counts() {
    for (text, says) in [
        ("racks:1x4194304x1gpu", "the node count is 4194304"),
        ("racks:4096x4096x4gpu", "the node count is 16777216"),
        ("racks:1x1x4194305gpu", "the GPU or pod count is 4194305"),
    ] {
        let e = text.parse::<Topology>().unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e}");
    }
    let nodes = u32::try_from(MAX_NODES).unwrap();
    assert!(CapacityMachine::racks(1, 1, nodes + 1, &[("nvidia.com/gpu", 1)]).is_err());
    let per = i64::try_from(MAX_UNITS).unwrap() / 2 + 1;
    assert!(CapacityMachine::racks(1, 1, 2, &[("nvidia.com/gpu", per)]).is_err());
    let ok: Topology = "racks:1x4x4gpu".parse().unwrap();
    assert_eq!(ok.num_nodes(), 16);
}

#[test]
fn kueue_files_of_the_wrong_kind_or_two_documents_are_refused() {
    let (topology, nodes) = (example("topology.yaml"), example("nodes.yaml"));
    let read = |t: &str, n: &str| {
        CapacityMachine::from_kueue_yaml(t, "t.yaml", n, "n.yaml")
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(read(&topology, &nodes), Ok(()));
    let pod = read(&topology.replace("kind: Topology", "kind: Pod"), &nodes).unwrap_err();
    assert!(
        pod.starts_with("t.yaml:") && pod.contains("kind: Pod"),
        "{pod}"
    );
    let swapped = read(&nodes, &nodes).unwrap_err();
    assert!(swapped.contains("kind: List"), "{swapped}");
    let two = read(&format!("{topology}---\n{topology}"), &nodes).unwrap_err();
    assert!(two.contains("second YAML document"), "{two}");
    let two = read(&topology, &format!("{nodes}---\n{nodes}")).unwrap_err();
    assert!(two.contains("second YAML document"), "{two}");
    let no_pods: String = nodes
        .lines()
        .filter(|l| !l.trim_start().starts_with("pods:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let e = read(&topology, &no_pods).unwrap_err();
    assert!(e.contains("no `pods` under status.allocatable"), "{e}");
    let e = CapacityMachine::from_kueue_yaml(&topology, "a\nb.yaml", &nodes, "n.yaml");
    assert!(e.is_ok());
    let e = CapacityMachine::from_kueue_yaml("kind: Pod\n", "a\nb.yaml", &nodes, "n.yaml")
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n'), "{e:?}");
}

#[test]
fn slurm_yaml_refuses_a_second_document_and_echoes_keys_short() {
    let one = "- topology: a\n  block:\n    blocks:\n    - block: b0\n      nodes: n[0-3]\n";
    assert!(SlurmMachine::parse_yaml(&format!("---\n{one}"), "b.yaml", None).is_ok());
    let e = SlurmMachine::parse_yaml(&format!("{one}---\n{one}"), "b.yaml", None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("b.yaml:6:") && e.contains("second YAML document"),
        "{e}"
    );
    let huge = "k".repeat(1 << 20);
    let e = SlurmMachine::parse_yaml(
        &format!("- topology: a\n  {huge}: 1\n  block:\n    blocks:\n    - block: b0\n      nodes: n[0-3]\n"),
        "b.yaml",
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("unknown key") && e.len() < 300,
        "{} bytes",
        e.len()
    );
}

#[test]
fn a_torus_of_too_many_placements_is_refused() {
    let mut text = String::from(
        "- topology: t\n  torus3d:\n    toruses:\n      - name: t0\n        dims: {x: 4, y: 4, z: 4}\n        nodes: tn[00-63]\n        placements:\n",
    );
    for _ in 0..=partalloc_topology::slurm::torus3d::MAX_PLACEMENTS {
        text.push_str("          - dims: {x: 2, y: 1, z: 1}\n");
    }
    let e = SlurmMachine::parse_yaml(&text, "t.yaml", None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("placements, more than the 4096 accepted"), "{e}");
}
