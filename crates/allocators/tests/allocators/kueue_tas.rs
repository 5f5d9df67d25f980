//! Replays the cases translated from Kueue's own TAS unit tests
//! (`data/kueue-tas/*.yaml`, each naming its Go test function, case and
//! Kueue release) and requires every expected assignment or failure.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "golden files are checked-in, valid fixtures"
)]

use std::path::PathBuf;
use std::sync::Arc;

use partalloc_allocators::tas::{KUEUE_RELEASE, Tas, TasAlgorithm, TasError, TasMode, TasRequest};
use partalloc_topology::capacity::{CapacityError, CapacityMachine, CapacityMachineBuilder};
use yaml_rust2::{Yaml, YamlLoader};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/kueue-tas")
}

fn s(y: &Yaml) -> String {
    match y {
        Yaml::String(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Real(r) => r.clone(),
        Yaml::Boolean(b) => b.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

fn pairs(y: &Yaml) -> Vec<(String, String)> {
    y.as_hash()
        .map(|h| h.iter().map(|(k, v)| (s(k), s(v))).collect())
        .unwrap_or_default()
}

fn machine(doc: &Yaml) -> CapacityMachine {
    let levels: Vec<String> = doc["levels"].as_vec().unwrap().iter().map(s).collect();
    let mut b = CapacityMachineBuilder::new("golden", &levels).unwrap();
    for n in doc["nodes"].as_vec().unwrap() {
        let labels = pairs(&n["labels"]);
        let alloc = pairs(&n["allocatable"]);
        let labels: Vec<(&str, &str)> = labels
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let alloc: Vec<(&str, &str)> = alloc
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        b.add_node(0, &s(&n["name"]), &labels, &alloc).unwrap();
    }
    b.build().unwrap()
}

fn requests(y: &Yaml) -> Vec<(String, i64)> {
    pairs(y)
        .into_iter()
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect()
}

/// Replays one file; `Err` describes the first disagreement.
fn replay(path: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = &YamlLoader::load_from_str(&text).unwrap()[0];
    assert_eq!(s(&doc["kueue"]), KUEUE_RELEASE);
    assert!(!s(&doc["test"]).is_empty() && !s(&doc["case"]).is_empty());
    let m = Arc::new(machine(doc));
    let mut tas = Tas::new(Arc::clone(&m));
    for u in doc["usage"].as_vec().unwrap() {
        let r = requests(&u["requests"]);
        let r: Vec<(&str, i64)> = r.iter().map(|(a, b)| (a.as_str(), *b)).collect();
        let leaf = m
            .leaf_of_node(&s(&u["node"]))
            .expect("usage on a known node");
        tas.add_usage(leaf, &m.pod_request_lenient(&r).unwrap(), 1);
    }
    for ps in doc["podsets"].as_vec().unwrap() {
        let r = requests(&ps["requests"]);
        let r: Vec<(&str, i64)> = r.iter().map(|(a, b)| (a.as_str(), *b)).collect();
        let pod = m.pod_request_lenient(&r).unwrap();
        let mode = match s(&ps["mode"]).as_str() {
            "required" => TasMode::Required,
            "preferred" => TasMode::Preferred,
            _ => TasMode::Unconstrained,
        };
        let algorithm = match s(&ps["algorithm"]).as_str() {
            "best-fit" => TasAlgorithm::BestFit,
            "least-free-capacity" => TasAlgorithm::LeastFreeCapacity,
            _ => TasAlgorithm::Balanced,
        };
        let level = match &ps["level"] {
            Yaml::BadValue => Ok(0),
            l => m.level_index(&s(l)),
        };
        let slice_level = match &ps["slice-level"] {
            Yaml::BadValue => None,
            l => Some(m.level_index(&s(l))),
        };
        let expect_error = ps["expect-error"].as_str();
        let (level, slice_level) = match (level, slice_level.transpose()) {
            (Ok(l), Ok(sl)) => (l, sl),
            (Err(CapacityError::UnknownLevel { .. }), _)
            | (_, Err(CapacityError::UnknownLevel { .. }))
                if expect_error == Some("unknown-level") =>
            {
                continue;
            }
            (l, sl) => return Err(format!("level lookup: {l:?} {sl:?}")),
        };
        let count = u32::try_from(ps["count"].as_i64().unwrap()).unwrap();
        let mut req = TasRequest::new(count, pod.clone(), mode, level, algorithm);
        if let Some(sl) = slice_level {
            let size = u32::try_from(ps["slice-size"].as_i64().unwrap()).unwrap();
            req = req.with_slices(size, sl);
        }
        let got = tas.place(&req);
        if let Some(kind) = expect_error {
            let ok = matches!(
                (kind, &got),
                ("slice-above-level", Err(TasError::SliceAboveLevel { .. }))
                    | ("slice-size", Err(TasError::SliceSize { .. }))
            );
            return if ok {
                Ok(())
            } else {
                Err(format!("want error {kind}, got {got:?}"))
            };
        }
        if let Some(f) = ps["expect-fail"].as_hash() {
            let _ = f;
            let want = TasError::NoFit {
                fit: ps["expect-fail"]["fit"].as_i64().unwrap(),
                total: ps["expect-fail"]["total"].as_i64().unwrap(),
                unit: if s(&ps["expect-fail"]["unit"]) == "pod" {
                    "pod"
                } else {
                    "slice"
                },
            };
            return if got.as_ref() == Err(&want) {
                Ok(())
            } else {
                Err(format!("want {want:?}, got {got:?}"))
            };
        }
        let a = got.map_err(|e| format!("want an assignment, got {e:?}"))?;
        let want_levels: Vec<String> = ps["expect-levels"]
            .as_vec()
            .unwrap()
            .iter()
            .map(s)
            .collect();
        let got_levels: Vec<String> = if m.lowest_level_is_hostname() {
            m.levels()[m.levels().len() - 1..].to_vec()
        } else {
            m.levels().to_vec()
        };
        if want_levels != got_levels {
            return Err(format!("levels {want_levels:?} vs {got_levels:?}"));
        }
        let skip = m.levels().len() - got_levels.len();
        let got_domains: Vec<(Vec<String>, u32)> = a
            .entries()
            .iter()
            .map(|&(leaf, c)| {
                let path = m.path(m.leaf_domain(leaf as usize));
                (path[skip..].iter().map(|v| (*v).to_owned()).collect(), c)
            })
            .collect();
        let want_domains: Vec<(Vec<String>, u32)> = ps["expect"]
            .as_vec()
            .unwrap()
            .iter()
            .map(|d| {
                let values = d["values"].as_vec().unwrap().iter().map(s).collect();
                (values, u32::try_from(d["count"].as_i64().unwrap()).unwrap())
            })
            .collect();
        if got_domains != want_domains {
            return Err(format!("want {want_domains:?}\n   got {got_domains:?}"));
        }
        tas.commit(&a, &pod);
    }
    Ok(())
}

#[test]
fn every_translated_kueue_case_agrees() {
    let mut files: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "only {} golden cases", files.len());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| {
            replay(f)
                .err()
                .map(|e| format!("{}: {e}", f.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
