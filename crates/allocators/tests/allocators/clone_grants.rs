//! A clone of an allocator is a separate instance: grants it issues later
//! are foreign to the original and the other way round, while grants live
//! at clone time stay releasable in both copies.

#![expect(clippy::unwrap_used, reason = "fixtures are valid by construction")]

use partalloc_allocators::hypercube::{Buddy, BuddyFreeList};
use partalloc_allocators::mesh::FirstFit;
use partalloc_allocators::{Allocator, ReleaseError, Request};
use partalloc_topology::{Hypercube, Topology};

fn check<A: Allocator + Clone>(mut a: A, request: &Request) {
    let before = a.allocate(request).unwrap();
    let mut b = a.clone();
    let a_grant = a.allocate(request).unwrap();
    let b_grant = b.allocate(request).unwrap();
    let a_free = a.free_nodes();
    let b_free = b.free_nodes();

    // Grants issued after the clone are foreign to the other copy and
    // leave it unchanged.
    assert!(matches!(
        a.release(&b_grant),
        Err(ReleaseError::Foreign { .. })
    ));
    assert!(matches!(
        b.release(&a_grant),
        Err(ReleaseError::Foreign { .. })
    ));
    assert_eq!(a.free_nodes(), a_free);
    assert_eq!(b.free_nodes(), b_free);

    // The grant live at clone time is released once in each copy.
    a.release(&before).unwrap();
    b.release(&before).unwrap();
    assert!(a.release(&before).is_err());
    assert!(b.release(&before).is_err());

    // A reissued slot keeps the copies apart.
    let a_again = a.allocate(request).unwrap();
    assert!(b.release(&a_again).is_err());
    a.release(&a_again).unwrap();
    a.release(&a_grant).unwrap();
    b.release(&b_grant).unwrap();
    assert_eq!(a.free_nodes(), b.free_nodes());
}

#[test]
fn hypercube_clones_do_not_accept_each_others_grants() {
    let cube = Hypercube::new(3).unwrap();
    check(Buddy::new(cube).unwrap(), &Request::subcube(1));
    check(BuddyFreeList::new(cube).unwrap(), &Request::subcube(1));
}

#[test]
fn mesh_clones_do_not_accept_each_others_grants() {
    let mesh: Topology = "mesh:4x4".parse().unwrap();
    check(
        FirstFit::new(mesh).unwrap(),
        &Request::boxed(&[2, 2]).unwrap(),
    );
}
