//! Al-Dhelaan & Bose (1988) §II: the notation examples 1–3 and the subcube
//! address 0X1X, checked against `Subcube` and `Hypercube`.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap values that are valid by construction"
)]

use std::collections::BTreeSet;

use partalloc_topology::gray::{GrayError, insert_bit};
use partalloc_topology::{Hypercube, NodeId, Subcube};

/// A binary address as printed in the paper (most significant bit first).
fn bin(s: &str) -> NodeId {
    NodeId::from_str_radix(s, 2).unwrap()
}

fn bins(list: &[&str]) -> Vec<NodeId> {
    list.iter().map(|s| bin(s)).collect()
}

/// A^{α\β}: the library's insertion applied to every element of `a`.
fn insert(a: &[NodeId], alpha: u32, beta: u32) -> Vec<NodeId> {
    a.iter()
        .map(|&x| insert_bit(x, alpha == 1, beta).unwrap())
        .collect()
}

/// B_n(m): the n-bit binary representation of m.
fn b(n: u32, m: NodeId) -> String {
    Subcube::node(n, m).unwrap().to_string()
}

const A: [&str; 4] = ["00", "01", "11", "10"];

#[test]
fn example_1_insertion_fixes_one_address_bit() {
    let a = bins(&A);
    // A^{1\1} = {010, 011, 111, 110} and A^{1\2} = {100, 101, 111, 110}.
    assert_eq!(insert(&a, 1, 1), bins(&["010", "011", "111", "110"]));
    assert_eq!(insert(&a, 1, 2), bins(&["100", "101", "111", "110"]));
    // Inserting α at β into all of Q_2 gives the subcube of Q_3 whose bit β
    // is fixed to α: X1X and 1XX.
    let as_set = |v: Vec<NodeId>| v.into_iter().collect::<BTreeSet<_>>();
    let x1x: Subcube = "X1X".parse().unwrap();
    let one_xx: Subcube = "1XX".parse().unwrap();
    assert_eq!(as_set(insert(&a, 1, 1)), x1x.nodes().collect());
    assert_eq!(as_set(insert(&a, 1, 2)), one_xx.nodes().collect());
    // In general, for every β and α.
    for beta in 0..3 {
        for alpha in 0..2 {
            let s = Subcube::new(3, 0b111 & !(1 << beta), alpha << beta).unwrap();
            assert_eq!(as_set(insert(&a, alpha, beta)), s.nodes().collect());
        }
    }
}

#[test]
fn insertion_refuses_words_that_would_not_fit() {
    assert_eq!(insert_bit(1 << 30, true, 31), Ok((1 << 31) | (1 << 30)));
    assert!(matches!(
        insert_bit(1 << 31, false, 0),
        Err(GrayError::InsertTooWide { .. })
    ));
    assert!(matches!(
        insert_bit(0, true, 32),
        Err(GrayError::InsertTooWide { .. })
    ));
}

#[test]
fn example_2_reversal_keeps_the_subcube_and_its_path() {
    let a = bins(&A);
    let reversed: Vec<NodeId> = a.iter().rev().copied().collect();
    // A* = {10, 11, 01, 00}.
    assert_eq!(reversed, bins(&["10", "11", "01", "00"]));
    let whole: Subcube = "XX".parse().unwrap();
    let q2 = Hypercube::new(2).unwrap();
    for seq in [&a, &reversed] {
        assert_eq!(
            seq.iter().copied().collect::<BTreeSet<_>>(),
            whole.nodes().collect()
        );
        // Both list Q_2 along a path of links.
        assert!(
            seq.windows(2)
                .all(|w| q2.distance(w[0], w[1]).unwrap() == 1)
        );
    }
}

#[test]
fn example_3_binary_representations() {
    // B_4(1) = 0001, B_3(1) = 001.
    assert_eq!(b(4, 1), "0001");
    assert_eq!(b(3, 1), "001");
    assert_eq!(bin(&b(4, 1)), 1);
    assert!(Subcube::node(3, 8).is_err());
}

#[test]
fn subcube_0x1x_of_a_4_cube() {
    // §II: "the subcube Q_2 which consists of the processors {0000, 0011,
    // 0110, 0111} in a 4-cube is written as 0X1X". The address 0X1X holds
    // 0010, 0011, 0110, 0111; 0000 is a misprint for 0010
    // (docs/paper-errata.md (topology part)).
    let s: Subcube = "0X1X".parse().unwrap();
    assert_eq!(s.dim(), 2);
    assert_eq!(s.cube_dim(), 4);
    assert_eq!(
        s.nodes().collect::<Vec<_>>(),
        bins(&["0010", "0011", "0110", "0111"])
    );
    assert!(!s.contains(bin("0000")));
    for p in ["0011", "0110", "0111"] {
        assert!(s.contains(bin(p)));
    }
    assert_eq!(s.free_mask(), 0b0101);
    assert_eq!(s.base(), bin("0010"));
}
