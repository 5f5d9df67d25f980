//! With the `serde` feature: every public data type round-trips through
//! JSON, and deserializing validates like the constructors, so a file can
//! never produce a value that would later panic. (A [`SubtorusEdge`] is
//! three plain numbers tied to no machine; it is read as written.)
//!
//! [`SubtorusEdge`]: partalloc_topology::SubtorusEdge

#![cfg(feature = "serde")]

use partalloc_testkit::{json_rejects as rejects, json_round_trip as round_trip};
use partalloc_topology::gray::GrayCode;
use partalloc_topology::{
    Coords, Grid, GridBox, Hypercube, KaryGray, Link, NodeSet, PartitionSteps, StepAddress,
    Subcube, Subtorus, SubtorusFamily, Topology, TupleGraph,
};

#[test]
fn public_types_round_trip() {
    let torus = Grid::torus(&[8, 6]).unwrap();
    round_trip(&Coords::new(&[1, 2, 3]).unwrap());
    round_trip(&torus);
    round_trip(&Grid::mesh(&[4, 4, 16]).unwrap());
    round_trip(&Hypercube::new(7).unwrap());
    round_trip(&"0X1X".parse::<Subcube>().unwrap());
    round_trip(&GridBox::new(&[1, 2], &[3, 4]).unwrap());
    let mut set = NodeSet::new(70);
    set.insert_range(3, 69).unwrap();
    round_trip(&set);
    round_trip(&"torus:4x4".parse::<Topology>().unwrap());
    round_trip(&"pod:tpu-v4".parse::<Topology>().unwrap());
    round_trip(
        &"pod:8x4:name=lab:cube=4x4:wiring=reconfigurable:shapes=4x4+8x4"
            .parse::<Topology>()
            .unwrap(),
    );
    round_trip(&TupleGraph::hypercube(3).unwrap());
    round_trip(
        &TupleGraph::cycle(5)
            .unwrap()
            .cross(&TupleGraph::linear_array(2).unwrap())
            .unwrap(),
    );
    round_trip(&Subtorus::new(&torus, &[2, 3], &[1, 2]).unwrap());
    round_trip(&SubtorusFamily::new(&torus, &[4, 2]).unwrap());
    round_trip(&Link::new(5, 2));
    round_trip(&GrayCode::new(&[2, 3, 1]).unwrap());
    round_trip(&KaryGray::new(3, 2).unwrap());
    let steps = PartitionSteps::new(&[8, 4]).unwrap();
    round_trip(&steps);
    round_trip(&steps.parse_address("((1),(1,0))").unwrap());
}

#[test]
fn links_are_read_in_canonical_form() {
    let l: Link = serde_json::from_str(r#"{"lo":7,"hi":3}"#).unwrap();
    assert_eq!(l, Link::new(3, 7));
}

#[test]
fn invalid_files_are_rejected() {
    rejects::<Coords>("[]");
    rejects::<Grid>(r#"{"sides":[4,0],"wrap":false}"#);
    rejects::<Grid>(r#"{"sides":[65536,65536,4],"wrap":true}"#);
    rejects::<Hypercube>(r#"{"dim":40}"#);
    // A pod is read through its description and validated like Pod::new.
    rejects::<Topology>(r#"{"Pod":{"sides":"8x8","shapes":["16x2"]}}"#);
    rejects::<Topology>(r#"{"Pod":{"sides":"8x8"}}"#);
    rejects::<Topology>(r#"{"Pod":{"sides":"8x8","shapes":["2x2"],"colour":"red"}}"#);
    rejects::<Subcube>(r#"{"n":3,"free":8,"fixed":0}"#);
    rejects::<GridBox>(r#"{"base":[0,0],"extents":[1,0]}"#);
    rejects::<GridBox>(r#"{"base":[0],"extents":[1,1]}"#);
    rejects::<NodeSet>(r#"{"words":[1024],"len":10}"#);
    rejects::<NodeSet>(r#"{"words":[0,1],"len":64}"#);
    rejects::<NodeSet>(r#"{"words":[],"len":18446744073709551615}"#);
    rejects::<TupleGraph>(r#"{"radices":[2],"nodes":[[1],[1]],"edges":[]}"#);
    rejects::<TupleGraph>(r#"{"radices":[2],"nodes":[[0],[1]],"edges":[[0,5]]}"#);
    rejects::<Subtorus>(r#"{"torus":{"sides":[8,6],"wrap":true},"strides":[3,3],"offset":[0,0]}"#);
    rejects::<Subtorus>(r#"{"torus":{"sides":[8,6],"wrap":false},"strides":[2,3],"offset":[0,0]}"#);
    rejects::<SubtorusFamily>(r#"{"torus":{"sides":[8,6],"wrap":true},"strides":[0,0]}"#);
    rejects::<GrayCode>(r#"{"params":[3,3,3]}"#);
    rejects::<GrayCode>(r#"{"params":[0]}"#);
    rejects::<GrayCode>(r#"{"params":[2]}"#);
    rejects::<KaryGray>(r#"{"k":0,"n":2}"#);
    rejects::<KaryGray>(r#"{"k":3,"n":0}"#);
    rejects::<KaryGray>(r#"{"k":65536,"n":3}"#);
    rejects::<PartitionSteps>(r#"{"sides":[8,6]}"#);
    rejects::<PartitionSteps>(r#"{"sides":[2147483648,2147483648]}"#);
    rejects::<PartitionSteps>(r#"{"sides":[]}"#);
    rejects::<StepAddress>(r#"{"shape":{"sides":[8,4]},"digits":[1,3,3,0]}"#);
    rejects::<StepAddress>(r#"{"shape":{"sides":[8,4]},"digits":[2]}"#);
    rejects::<StepAddress>(r#"{"shape":{"sides":[8,7]},"digits":[]}"#);
}

#[test]
fn short_node_set_words_are_padded() {
    let s: NodeSet = serde_json::from_str(r#"{"words":[5],"len":130}"#).unwrap();
    assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 2]);
    assert_eq!(s, {
        let mut t = NodeSet::new(130);
        t.insert(0).unwrap();
        t.insert(2).unwrap();
        t
    });
}

#[test]
fn a_pod_reads_from_its_description() {
    let t: Topology =
        serde_json::from_str(r#"{"Pod":{"preset":"tpu-v4","sides":"8x8x8","wiring":"static"}}"#)
            .unwrap();
    assert_eq!(t.to_string().parse::<Topology>().unwrap(), t);
    let pod = t.as_pod().unwrap();
    assert_eq!(pod.name(), Some("tpu-v4"));
    assert_eq!(pod.grid().num_nodes(), 512);
    assert_eq!(pod.wiring(), partalloc_topology::pod::Wiring::Static);
}
