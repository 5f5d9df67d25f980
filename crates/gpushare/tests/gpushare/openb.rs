//! The OpenB readers: the published files read, and every kind of bad row
//! refused with one line naming the file and line.

#![expect(clippy::unwrap_used, reason = "fixtures are valid by construction")]

use partalloc_gpushare::TraceError;
use partalloc_gpushare::openb::{
    Cluster, Unplaceable, parse_nodes, parse_pods, read_nodes, read_pods,
};

const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,96000,786432,8,G2\nn2,32000,65536,0,\n";

fn cluster() -> Cluster {
    parse_nodes(NODES, "nodes.csv").unwrap()
}

fn pods(rows: &str) -> Result<usize, String> {
    let text = format!("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n{rows}");
    parse_pods(&text, "pods.csv", &cluster(), Unplaceable::Refuse)
        .map(|p| p.len())
        .map_err(|e| e.to_string())
}

#[test]
fn the_published_node_list_has_1213_nodes_and_6212_gpus() {
    let c = read_nodes(&crate::data_dir().join("openb_node_list_gpu_node.csv")).unwrap();
    assert_eq!(c.nodes.len(), 1213);
    assert_eq!(c.gpus(), 6212);
    assert_eq!(c.models.names().len(), 7);
    let pods = read_pods(
        &crate::data_dir().join("openb_pod_list_default.csv"),
        &c,
        Unplaceable::Refuse,
    )
    .unwrap();
    assert_eq!(pods.len(), 8152);
}

#[test]
fn a_published_list_with_pods_no_node_holds_is_refused_unless_kept() {
    let dir = crate::data_dir();
    let c = read_nodes(&dir.join("openb_node_list_gpu_node.csv")).unwrap();
    let path = dir.join("openb_pod_list_gpuspec33.csv");
    let err = read_pods(&path, &c, Unplaceable::Refuse)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("openb_pod_list_gpuspec33.csv:1641: pod openb-pod-1639 fits no node"),
        "{err}"
    );
    assert_eq!(read_pods(&path, &c, Unplaceable::Keep).unwrap().len(), 8152);
}

#[test]
fn good_rows_read() {
    assert_eq!(
        pods("p0,1000,10,1,500,\np1,1000,10,2,1000,G2\np2,500,1,0,0,\np3,1,1,1,1000,G2|P100\n"),
        Ok(4)
    );
    let c = cluster();
    let text = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,300\n";
    let p = parse_pods(text, "f", &c, Unplaceable::Refuse).unwrap();
    assert_eq!(
        (p[0].request.gpu_milli, p[0].request.models),
        (300, 0),
        "no gpu_spec column: any model"
    );
}

#[test]
fn bad_rows_are_refused_with_file_and_line() {
    let cases: [(&str, &str); 11] = [
        ("p0,1000,10,1", "pods.csv:2: missing field gpu_milli"),
        ("p0,-5,10,1,500,", "pods.csv:2: cpu_milli is negative"),
        ("p0,1000,-1,1,500,", "pods.csv:2: memory_mib is negative"),
        (
            "p0,1000,10,1,x,",
            "pods.csv:2: gpu_milli is not a whole number",
        ),
        (
            "p0,1000,10,1,1200,",
            "pods.csv:2: gpu_milli 1200 is more than one gpu (1000)",
        ),
        (
            "p0,1000,10,2,500,",
            "pods.csv:2: a share (500 thousandths) of 2 gpus",
        ),
        (
            "p0,1000,10,0,500,",
            "pods.csv:2: gpu_milli 500 without num_gpu",
        ),
        (
            "p0,1000,10,1,500,A100",
            "pods.csv:2: gpu model A100 is on no node (known: P100, G2)",
        ),
        (
            "p0,1000,10,1,500,\np0,1,1,0,0,",
            "pods.csv:3: pod p0 is listed twice",
        ),
        (
            "p0,200000,10,0,0,",
            "pods.csv:2: pod p0 fits no node of the cluster, even empty",
        ),
        (
            "p0,1000,10,4,1000,P100",
            "pods.csv:2: pod p0 fits no node of the cluster, even empty",
        ),
    ];
    for (rows, want) in cases {
        let got = pods(rows).unwrap_err();
        assert!(got.starts_with(want), "{rows:?}: {got}");
        assert!(!got.contains('\n'), "one line: {got}");
    }
    let e = parse_pods("name,cpu\n", "p.csv", &cluster(), Unplaceable::Refuse).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("p.csv:1: the header has no column \"cpu_milli\""),
        "{e}"
    );
}

#[test]
fn bad_node_rows_are_refused() {
    let head = "sn,cpu_milli,memory_mib,gpu,model\n";
    let cases = [
        ("n,1,1,17,G2", "n.csv:2: 17 gpus on one node; at most 16"),
        ("n,1,1,2,", "n.csv:2: a node with gpus needs a gpu model"),
        ("n,1,1,1,T4\nn,1,1,1,T4", "n.csv:3: node n is listed twice"),
        ("n,1.5,1,1,T4", "n.csv:2: cpu_milli is not a whole number"),
        ("", "n.csv:1: no node listed"),
    ];
    for (rows, want) in cases {
        let e = parse_nodes(&format!("{head}{rows}"), "n.csv").unwrap_err();
        assert!(matches!(e, TraceError::Line { .. }));
        assert!(e.to_string().starts_with(want), "{rows:?}: {e}");
    }
    let e = read_nodes(std::path::Path::new("/nonexistent/nodes.csv")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/nodes.csv: cannot read:"),
        "{e}"
    );
}
