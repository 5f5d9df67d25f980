//! With the `serde` feature: the distributions round-trip through JSON, and
//! deserializing validates like the constructors, so a file can never
//! produce a distribution that samples nonsense or panics.

#![cfg(feature = "serde")]

use partalloc_testkit::{json_rejects as rejects, json_round_trip as round_trip};
use partalloc_workload::{
    Constant, CubeDims, CubicShapes, Exponential, HyperExponential, MeshSides, NoncubicShapes,
    OfferedLoad, ShapeDistribution, SideLaw, UniformDemand,
};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::Distribution;

#[test]
fn distributions_round_trip() {
    round_trip(&CubicShapes::new(&[3, 2]).unwrap());
    round_trip(&NoncubicShapes::new(&[5, 7]).unwrap());
    round_trip(&CubeDims::mohapatra_normal());
    round_trip(&CubeDims::from_weights(&[1.0, 3.0, 0.0, 2.0]).unwrap());
    round_trip(&MeshSides::new(SideLaw::TruncatedNormal, &[16, 9]).unwrap());
    round_trip(&Exponential::new(2.5).unwrap());
    round_trip(&UniformDemand::new(1.0, 4.0).unwrap());
    round_trip(&HyperExponential::new(5.0, 0.95, 4.0).unwrap());
    round_trip(&Constant::new(3.0).unwrap());
    round_trip(&OfferedLoad::new(0.5, 1024, 100.0, 5.0).unwrap());
    round_trip(&OfferedLoad::saturating(1.5, 1024, 100.0, 5.0).unwrap());
}

#[test]
fn invalid_files_are_rejected() {
    rejects::<CubicShapes>(r#"{"max_exponents":[40]}"#);
    rejects::<CubicShapes>(r#"{"max_exponents":[]}"#);
    rejects::<NoncubicShapes>(r#"{"max_sides":[4,0]}"#);
    rejects::<CubeDims>(r#"{"cumulative":[]}"#);
    rejects::<CubeDims>(r#"{"cumulative":[0.5,0.2,1.0]}"#);
    rejects::<CubeDims>(r#"{"cumulative":[0.5,0.7]}"#);
    rejects::<CubeDims>(r#"{"cumulative":[-0.5,1.0]}"#);
    rejects::<MeshSides>(r#"{"law":"Uniform","max_sides":[4,0]}"#);
    rejects::<Exponential>(r#"{"mean":-3.0}"#);
    rejects::<Exponential>(r#"{"mean":0.0}"#);
    rejects::<UniformDemand>(r#"{"lo":4.0,"hi":1.0}"#);
    rejects::<HyperExponential>(r#"{"alpha":1.5,"mean1":1.0,"mean2":2.0}"#);
    rejects::<HyperExponential>(r#"{"alpha":0.5,"mean1":-1.0,"mean2":2.0}"#);
    rejects::<Constant>(r#"{"value":-1.0}"#);
    rejects::<OfferedLoad>(
        r#"{"load":1.5,"machine_nodes":1024,"mean_nodes":100.0,"mean_residence":5.0,"saturation_allowed":false}"#,
    );
    rejects::<OfferedLoad>(
        r#"{"load":0.5,"machine_nodes":0,"mean_nodes":100.0,"mean_residence":5.0,"saturation_allowed":false}"#,
    );
}

#[test]
fn mesh_sides_recompute_their_mean() {
    // The file names only the law and the sides; the mean comes from them.
    let m: MeshSides = serde_json::from_str(r#"{"law":"Uniform","max_sides":[4,6]}"#).unwrap();
    assert!((m.mean_nodes() - 2.5 * 3.5).abs() < 1e-12);
}

#[test]
fn deserialized_exponential_samples_positive_times() {
    let e: Exponential = serde_json::from_str(r#"{"mean":3.0}"#).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert!((0..100).all(|_| e.sample(&mut rng) >= 0.0));
}
