use super::*;

/// The example files, read at run time (a published package has no
/// `examples/kueue/` to compile in).
fn example_text(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/kueue")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn example() -> CapacityMachine {
    let (topology, nodes) = (example_text("topology.yaml"), example_text("nodes.yaml"));
    CapacityMachine::from_kueue_yaml(&topology, "topology.yaml", &nodes, "nodes.yaml").unwrap()
}

#[test]
fn example_files_give_the_tree_of_their_labels() {
    let m = example();
    assert_eq!(m.levels().len(), 3);
    assert!(m.lowest_level_is_hostname());
    assert_eq!(m.level_domains(0).len(), 2);
    assert_eq!(m.level_domains(1).len(), 4);
    assert_eq!(m.num_leaves(), 16);
    assert_eq!(m.resources(), ["cpu", "memory", "nvidia.com/gpu", "pods"]);
    let leaf = m.leaf_of_node("b1-r0-n2").unwrap();
    let d = m.leaf_domain(leaf);
    assert_eq!(m.path(d), ["b1", "b1-r0", "b1-r0-n2"]);
    let cap = m.leaf_capacity(leaf);
    assert_eq!(cap[0], 72_000);
    assert_eq!(cap[1], 1 << 40);
    assert_eq!(cap[2], 4);
    // Children are contiguous and point back to their parent.
    for level in 0..2 {
        for dom in m.level_domains(level) {
            for c in m.children(dom) {
                assert_eq!(m.parent(c), Some(dom));
            }
        }
    }
    assert_eq!(m.children(m.level_domains(0).start).len(), 2);
}

#[test]
fn racks_equal_the_same_machine_read_from_yaml() {
    let m = CapacityMachine::racks(2, 3, 18, &[("nvidia.com/gpu", 4)]).unwrap();
    assert_eq!(m.num_leaves(), 108);
    assert_eq!(
        m.path(m.leaf_domain(107)),
        ["b01", "b01-r02", "b01-r02-n17"]
    );
    let req = m.pod_request(&[("nvidia.com/gpu", 3)]).unwrap();
    assert_eq!(req.fits_in(m.leaf_capacity(0)), 1);
    assert!(matches!(
        CapacityMachine::racks(0, 1, 1, &[]),
        Err(CapacityError::Zero { .. })
    ));
}

#[test]
fn domains_are_numbered_in_label_order() {
    let mut b = CapacityMachineBuilder::new("t", &["rack", HOSTNAME_LABEL]).unwrap();
    for (name, rack) in [("x3", "r2"), ("x1", "r1"), ("x2", "r2"), ("x0", "r1")] {
        b.add_node(
            0,
            name,
            &[("rack", rack), (HOSTNAME_LABEL, name)],
            &[("cpu", "1")],
        )
        .unwrap();
    }
    let m = b.build().unwrap();
    let names: Vec<_> = m.level_domains(1).map(|d| m.value(d)).collect();
    assert_eq!(names, ["x0", "x1", "x2", "x3"]);
    assert_eq!(m.leaf_of_node("x3"), Some(3));
}

#[test]
fn nodes_sharing_a_non_hostname_leaf_add_their_capacity() {
    let mut b = CapacityMachineBuilder::new("t", &["block", "rack"]).unwrap();
    b.add_node(0, "a", &[("block", "b1"), ("rack", "r1")], &[("cpu", "1")])
        .unwrap();
    b.add_node(0, "b", &[("block", "b1"), ("rack", "r1")], &[("cpu", "2")])
        .unwrap();
    let m = b.build().unwrap();
    assert_eq!(m.num_leaves(), 1);
    assert_eq!(m.leaf_capacity(0)[0], 3000);
    assert_eq!(m.leaf_capacity(0)[1], 0, "no pods allocatable: no pod fits");
}

fn error_of(topology: &str, nodes: &str) -> String {
    CapacityMachine::from_kueue_yaml(topology, "t.yaml", nodes, "n.yaml")
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_input_is_one_line_naming_file_and_line() {
    let (topology, nodes) = (example_text("topology.yaml"), example_text("nodes.yaml"));
    let (topo, node_list) = (topology.as_str(), nodes.as_str());
    let bad_yaml = error_of(
        "spec:\n  levels:\n  - nodeLabel: a\n  - : : [\nkind: x\n",
        node_list,
    );
    assert!(
        bad_yaml.starts_with("t.yaml:5: malformed yaml"),
        "{bad_yaml}"
    );
    let no_levels = error_of("spec:\n  levels: []\n", node_list);
    assert!(no_levels.contains("no levels"), "{no_levels}");
    let no_spec = error_of("kind: Topology\n", node_list);
    assert!(no_spec.contains("`spec` is missing"), "{no_spec}");
    let missing = error_of(
        "spec:\n  levels:\n  - nodeLabel: rack\n",
        "items:\n- metadata:\n    name: a\n    labels: {zone: z}\n  status:\n    allocatable: {cpu: 1}\n",
    );
    assert_eq!(
        missing,
        "n.yaml:2: node `a` has no label `rack` (a topology level); label it or drop the node"
    );
    let negative = node_list.replacen("nvidia.com/gpu: \"4\"", "nvidia.com/gpu: \"-4\"", 1);
    let neg = error_of(topo, &negative);
    assert!(
        neg.starts_with("n.yaml:6: node `b0-r0-n0` resource `nvidia.com/gpu`"),
        "{neg}"
    );
    let word = node_list.replacen("cpu: \"72\"", "cpu: lots", 1);
    assert!(error_of(topo, &word).contains("quantity `lots`"));
    let dup = node_list.replacen("name: b0-r0-n1", "name: b0-r0-n0", 1);
    assert!(error_of(topo, &dup).contains("appears twice"));
    for e in [bad_yaml, no_levels, missing, neg] {
        assert!(!e.contains('\n'));
        assert!(e.chars().next().is_some_and(|c| !c.is_uppercase()));
    }
}

#[test]
fn requests_name_known_resources_only() {
    let m = example();
    assert!(matches!(
        m.pod_request(&[("amd.com/gpu", 1)]),
        Err(CapacityError::UnknownResource { .. })
    ));
    assert!(matches!(
        m.pod_request(&[("cpu", -1)]),
        Err(CapacityError::NegativeRequest { .. })
    ));
    assert!(matches!(
        m.level_index("zone"),
        Err(CapacityError::UnknownLevel { .. })
    ));
}

/// A Slurm topology file of the repository's examples.
fn slurm_example(name: &str) -> crate::slurm::SlurmMachine {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    let text = std::fs::read_to_string(path).unwrap();
    crate::slurm::SlurmMachine::parse_conf(&text, name).unwrap()
}

#[test]
fn slurm_blocks_become_one_level_per_block_size() {
    let slurm = slurm_example("blocks-8x18.conf");
    let b = slurm.blocks().unwrap().clone();
    let m = CapacityMachine::from_slurm(&slurm, &[(GPU_RESOURCE, 4)]).unwrap();
    let sizes = b.levels();
    assert_eq!(m.levels().len(), sizes.len() + 1);
    assert_eq!(m.levels().last().map(String::as_str), Some(HOSTNAME_LABEL));
    // Level i from the top holds one domain per aggregate of that size.
    for (i, &per) in sizes.iter().rev().enumerate() {
        assert_eq!(
            m.level_domains(i).len() as u32,
            b.base_blocks() / per,
            "level {i}"
        );
    }
    assert_eq!(m.num_leaves(), slurm.num_nodes());
    assert_eq!(m.num_units(), 4 * slurm.num_nodes());
    // Every node sits under its own base block, named as in the file.
    let base = sizes.len() - 1;
    for (id, name) in slurm.names().iter().enumerate() {
        let leaf = m.leaf_of_node(name).unwrap();
        let path = m.path(m.leaf_domain(leaf));
        let block = &b.block_names()[b.block_of(id as u32) as usize];
        assert_eq!(path[base], block.as_str(), "{name}");
        assert_eq!(path.last().copied(), Some(name.as_str()));
    }
    // The base blocks are the racks of racks:8x18x4gpu, level for level.
    let racks = CapacityMachine::racks(1, 8, 18, &[(GPU_RESOURCE, 4)]).unwrap();
    assert_eq!(racks.level_domains(1).len(), m.level_domains(base).len());
    assert_eq!(racks.num_units(), m.num_units());
}

#[test]
fn slurm_trees_become_one_level_per_switch_depth() {
    let slurm = slurm_example("tree-2level.conf");
    let m = CapacityMachine::from_slurm(&slurm, &[(GPU_RESOURCE, 2), ("cpu", 64_000)]).unwrap();
    let levels: Vec<&str> = m.levels().iter().map(String::as_str).collect();
    assert_eq!(
        levels,
        [
            "topology.slurm/switch-level-2",
            "topology.slurm/switch-level-1",
            "topology.slurm/switch-level-0",
            HOSTNAME_LABEL
        ]
    );
    let counts: Vec<usize> = (0..4).map(|l| m.level_domains(l).len()).collect();
    assert_eq!(counts, [1, 2, 4, 64]);
    let leaf = m.leaf_of_node("tux17").unwrap();
    assert_eq!(
        m.path(m.leaf_domain(leaf)),
        ["core", "spine0", "leaf1", "tux17"]
    );
    assert_eq!(m.num_units(), 128);
}

#[test]
fn slurm_machines_without_levels_or_with_uneven_trees_are_refused() {
    let ring = slurm_example("ring-4x8.conf");
    let e = CapacityMachine::from_slurm(&ring, &[(GPU_RESOURCE, 4)]).unwrap_err();
    assert!(
        matches!(e, CapacityError::SlurmShape { shape: "ring", .. }),
        "{e}"
    );
    // leaf1 hangs from the core directly, leaf0 under a spine.
    let conf = "SwitchName=leaf0 Nodes=n[0-1]\nSwitchName=leaf1 Nodes=n[2-3]\n\
                SwitchName=spine Switches=leaf0\nSwitchName=core Switches=spine,leaf1\n";
    let uneven = crate::slurm::SlurmMachine::parse_conf(conf, "uneven.conf").unwrap();
    let e = CapacityMachine::from_slurm(&uneven, &[(GPU_RESOURCE, 4)]).unwrap_err();
    assert!(matches!(e, CapacityError::UnevenTree { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("uneven.conf: leaf switch `leaf1`"),
        "{e}"
    );
    let blocks = slurm_example("blocks-8x18.conf");
    let e = CapacityMachine::from_slurm(&blocks, &[(GPU_RESOURCE, -1)]).unwrap_err();
    assert!(
        matches!(e, CapacityError::NegativeRequest { value: -1, .. }),
        "{e}"
    );
}
