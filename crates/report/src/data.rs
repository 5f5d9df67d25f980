//! What a report draws, computed from a run's job records: the nodes each
//! job held as runs of consecutive ids, the machine's groups of nodes, the
//! busy nodes and the queue over time, the distributions and the summary.
//! Everything here is plain data with tests; `page` only writes it out.

use partalloc_allocators::Partition;
use partalloc_simkit::{JobRecord, t_quantile};
use partalloc_topology::{NodeId, Topology};

/// A contiguous range of node ids, `first..first + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NodeRun {
    pub first: u32,
    pub len: u32,
}

/// The node ids of a partition as runs of consecutive ids, in increasing
/// order (`None` when the partition does not fit the machine).
pub(crate) fn node_runs(partition: &Partition, topology: &Topology) -> Option<Vec<NodeRun>> {
    let mut ids: Vec<NodeId> = partition.node_list(topology).ok()?;
    ids.sort_unstable();
    ids.dedup();
    let mut runs: Vec<NodeRun> = Vec::new();
    for id in ids {
        match runs.last_mut() {
            Some(r) if r.first + r.len == id => r.len += 1,
            _ => runs.push(NodeRun { first: id, len: 1 }),
        }
    }
    Some(runs)
}

/// Runs of node ids as text: `first` alone or `first{dash}last`, the runs
/// joined by `sep` (`0-3 8` for Batsim, `0–3, 8` for a person).
pub(crate) fn ranges_text(runs: &[NodeRun], dash: &str, sep: &str) -> String {
    let mut out = String::new();
    for (i, r) in runs.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&r.first.to_string());
        if r.len > 1 {
            out.push_str(dash);
            out.push_str(&(r.first + r.len - 1).to_string());
        }
    }
    out
}

/// A group of consecutive nodes that the machine itself names: a rack or
/// block, a leaf switch, a mesh row or plane, a hypercube's subcube.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub label: String,
    pub first: u32,
    pub len: u32,
}

/// The machine's groups, in node order, covering every node once.
pub(crate) fn groups(topology: &Topology) -> Vec<Group> {
    let n = u32::try_from(topology.num_nodes()).unwrap_or(u32::MAX);
    let key: Box<dyn Fn(u32) -> String> = if let Some(cube) = topology.as_hypercube() {
        // Subcubes of the upper half of the dimensions: 2^⌈d/2⌉ nodes each.
        let low = cube.dim().div_ceil(2);
        Box::new(move |id| format!("subcube {}", id >> low))
    } else if let Some(grid) = topology.as_grid() {
        let sides = grid.sides();
        match sides.len() {
            0 | 1 => Box::new(|_| "line".to_owned()),
            2 => {
                let w = sides[0].max(1);
                Box::new(move |id| format!("y = {}", id / w))
            }
            _ => {
                let plane = sides[0].max(1).saturating_mul(sides[1].max(1));
                Box::new(move |id| format!("z = {}", id / plane))
            }
        }
    } else if let Some(slurm) = topology.as_slurm() {
        let slurm = slurm.clone();
        if slurm.blocks().is_some() {
            Box::new(move |id| {
                slurm.blocks().map_or_else(String::new, |b| {
                    let k = b.block_of(id) as usize;
                    b.block_names()
                        .get(k)
                        .cloned()
                        .unwrap_or_else(|| format!("block {k}"))
                })
            })
        } else if slurm.tree().is_some() {
            Box::new(move |id| {
                slurm
                    .tree()
                    .map_or_else(String::new, |t| match t.leaf_of(id) {
                        Some(s) => t
                            .switches()
                            .get(s as usize)
                            .map_or_else(|| format!("switch {s}"), |sw| sw.name.clone()),
                        None => "no switch".to_owned(),
                    })
            })
        } else {
            Box::new(|id| format!("nodes {}–{}", id / 16 * 16, id / 16 * 16 + 15))
        }
    } else if let Some(pod) = topology.as_pod() {
        let sides = pod.grid().sides();
        let plane = sides
            .first()
            .copied()
            .unwrap_or(1)
            .max(1)
            .saturating_mul(sides.get(1).copied().unwrap_or(1).max(1));
        Box::new(move |id| format!("z = {}", id / plane))
    } else if let Some(cluster) = topology.as_gpushare() {
        // Nodes of one GPU model and count together (a run of them).
        let cluster = cluster.clone();
        Box::new(move |id| {
            cluster
                .nodes()
                .get(id as usize)
                .map_or_else(String::new, |n| {
                    match cluster.models().name(n.model).filter(|_| n.gpus > 0) {
                        Some(m) => format!("{}×{m}", n.gpus),
                        None => "no gpu".to_owned(),
                    }
                })
        })
    } else {
        Box::new(|id| format!("nodes {}–{}", id / 64 * 64, id / 64 * 64 + 63))
    };
    let mut out: Vec<Group> = Vec::new();
    for id in 0..n {
        let k = key(id);
        match out.last_mut() {
            Some(g) if g.label == k => g.len += 1,
            _ => out.push(Group {
                label: k,
                first: id,
                len: 1,
            }),
        }
    }
    out
}

/// Busy nodes (granted nodes of running jobs) and queue length (jobs
/// submitted and not yet started) over a run, as step functions on one
/// time axis: `busy[i]` and `queue[i]` hold from `times[i]` until the next
/// time; changes at one time are applied together.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OverTime {
    pub times: Vec<f64>,
    pub busy: Vec<f64>,
    pub queue: Vec<f64>,
}

pub(crate) fn over_time(records: &[JobRecord]) -> OverTime {
    // (time, change of busy nodes, change of queue length)
    let mut changes: Vec<(f64, f64, f64)> = Vec::with_capacity(records.len() * 4);
    for r in records {
        let g = r.granted as f64;
        changes.push((r.start, g, 0.0));
        changes.push((r.end, -g, 0.0));
        if r.start > r.arrival {
            changes.push((r.arrival, 0.0, 1.0));
            changes.push((r.start, 0.0, -1.0));
        }
    }
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut s = OverTime::default();
    let (mut busy, mut queue) = (0.0, 0.0);
    let mut i = 0;
    while i < changes.len() {
        let t = changes[i].0;
        while i < changes.len() && changes[i].0.to_bits() == t.to_bits() {
            busy += changes[i].1;
            queue += changes[i].2;
            i += 1;
        }
        s.times.push(t);
        s.busy.push(busy);
        s.queue.push(queue);
    }
    s
}

/// Most times at which the stranded nodes are counted over a run.
pub(crate) const STRANDED_SAMPLES: usize = 1000;

/// Free nodes the machine's structure strands, over a run: on a Slurm
/// machine the free nodes in partly busy base blocks or leaf switches
/// (`partalloc_simkit::slurm::stranded_nodes`), on a pod the free chips in
/// no placeable catalogue shape under static wiring
/// (`partalloc_allocators::pod::stranded_chips_under`); `None` on other
/// machines. Counted at up to [`STRANDED_SAMPLES`] evenly spaced times
/// from the first start to the last end (the busy nodes at each time are
/// exact: every job's partition is applied in time order).
pub(crate) fn stranded_over_time(
    topology: &Topology,
    records: &[JobRecord],
    samples: usize,
) -> Option<(Vec<f64>, Vec<f64>)> {
    use partalloc_topology::NodeSet;
    let count: Box<dyn Fn(&NodeSet) -> f64> = if let Some(m) = topology.as_slurm() {
        Box::new(move |busy| f64::from(partalloc_simkit::slurm::stranded_nodes(m, busy)))
    } else if let Some(pod) = topology.as_pod() {
        Box::new(move |busy| {
            partalloc_allocators::pod::stranded_chips_under(
                pod,
                busy,
                partalloc_topology::pod::Wiring::Static,
            ) as f64
        })
    } else {
        return None;
    };
    let t0 = records
        .iter()
        .map(|r| r.start)
        .fold(f64::INFINITY, f64::min);
    let t1 = records
        .iter()
        .map(|r| r.end)
        .fold(f64::NEG_INFINITY, f64::max);
    if !(t0.is_finite() && t1.is_finite()) || samples == 0 {
        return None;
    }
    // (time, record, starts): ends before starts at one time.
    let mut events: Vec<(f64, usize, bool)> = Vec::with_capacity(records.len() * 2);
    for (i, r) in records.iter().enumerate() {
        events.push((r.start, i, true));
        events.push((r.end, i, false));
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
    let nodes = topology.num_nodes();
    let mut busy = NodeSet::new(nodes);
    let (mut times, mut values) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    let mut next = 0;
    for k in 0..samples {
        let t = if samples == 1 {
            t0
        } else {
            t0 + (t1 - t0) * k as f64 / (samples - 1) as f64
        };
        while next < events.len() && events[next].0 <= t {
            let (_, i, start) = events[next];
            let _ = records[i].partition.for_each_node(topology, |n| {
                let _ = if start {
                    busy.insert(n)
                } else {
                    busy.remove(n)
                };
            });
            next += 1;
        }
        times.push(t);
        values.push(count(&busy));
    }
    Some((times, values))
}

/// A job's runs of node ids for the page, compactly: a run is `first,
/// len`, and three or more runs of one length at a constant stride (the
/// rows of a box) are `first, len, -stride, count`.
pub(crate) fn encode_runs(runs: &[NodeRun]) -> Vec<i64> {
    let mut out = Vec::with_capacity(runs.len() * 2);
    let mut i = 0;
    while i < runs.len() {
        let r = runs[i];
        let mut count = 1;
        if let Some(next) = runs.get(i + 1)
            && next.len == r.len
        {
            let stride = next.first - r.first;
            while runs
                .get(i + count)
                .is_some_and(|n| n.len == r.len && n.first == r.first + stride * count as u32)
            {
                count += 1;
            }
            if count >= 3 {
                out.extend([
                    i64::from(r.first),
                    i64::from(r.len),
                    -i64::from(stride),
                    count as i64,
                ]);
                i += count;
                continue;
            }
            count = 1;
        }
        out.extend([i64::from(r.first), i64::from(r.len)]);
        i += count;
    }
    out
}

/// Points of an empirical distribution: at most `points` (value,
/// cumulative share) pairs, the largest value always included.
pub(crate) fn cdf(mut values: Vec<f64>, points: usize) -> Vec<(f64, f64)> {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 || points == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(points).max(1);
    let mut out: Vec<(f64, f64)> = (step - 1..n)
        .step_by(step)
        .map(|i| (values[i], (i + 1) as f64 / n as f64))
        .collect();
    if out.last().is_none_or(|p| p.1 < 1.0) {
        out.push((values[n - 1], 1.0));
    }
    out
}

/// A mean with a 95% half-width by batch means: the jobs in completion
/// order cut into `batches` equal batches, whose means are taken as
/// independent (the usual estimate for one long run; `None` with fewer
/// jobs than batches).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    pub mean: f64,
    pub half_width: Option<f64>,
}

pub(crate) const BATCHES: usize = 20;

pub(crate) fn batch_means(values: &[f64]) -> Estimate {
    let n = values.len();
    let mean = if n == 0 {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / n as f64
    };
    if n < BATCHES {
        return Estimate {
            mean,
            half_width: None,
        };
    }
    let size = n / BATCHES;
    let means: Vec<f64> = (0..BATCHES)
        .map(|b| values[b * size..(b + 1) * size].iter().sum::<f64>() / size as f64)
        .collect();
    let m = means.iter().sum::<f64>() / BATCHES as f64;
    let var = means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (BATCHES - 1) as f64;
    let t = t_quantile((BATCHES - 1) as f64, 0.975).unwrap_or(f64::NAN);
    Estimate {
        mean,
        half_width: Some(t * (var / BATCHES as f64).sqrt()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc_topology::GridBox;

    fn held(id: u64, start: f64, end: f64, nodes: Vec<u32>) -> JobRecord {
        JobRecord {
            id,
            arrival: start,
            start,
            end,
            wait: 0.0,
            response: end - start,
            numerical_delay: 0.0,
            bounded_slowdown: 1.0,
            requested: nodes.len() as u64,
            granted: nodes.len() as u64,
            partition: Partition::Nodes(nodes),
            dispersal: None,
            domains: None,
            preempted: 0,
        }
    }

    #[test]
    fn stranded_nodes_over_time_count_the_free_nodes_of_partly_busy_blocks() {
        let conf = "BlockName=r0 Nodes=n[0-3]\nBlockName=r1 Nodes=n[4-7]\nBlockSizes=4,8\n";
        let machine: Topology = partalloc_topology::slurm::SlurmMachine::parse_conf(conf, "t.conf")
            .unwrap()
            .into();
        // Two nodes of r0 for [0, 10), then all of r1 for [10, 20): two
        // nodes stranded, then none.
        let records = [
            held(1, 0.0, 10.0, vec![0, 1]),
            held(2, 10.0, 20.0, vec![4, 5, 6, 7]),
        ];
        let (t, v) = stranded_over_time(&machine, &records, 5).unwrap();
        assert_eq!(t, [0.0, 5.0, 10.0, 15.0, 20.0]);
        assert_eq!(v, [2.0, 2.0, 0.0, 0.0, 0.0]);
        // A brute-force count at each time agrees.
        for (&t, &v) in t.iter().zip(&v) {
            let busy: Vec<u32> = records
                .iter()
                .filter(|r| r.start <= t && t < r.end)
                .flat_map(|r| r.partition.node_list(&machine).unwrap_or_default())
                .collect();
            let partly = |b: std::ops::Range<u32>| {
                let n = b.clone().filter(|x| busy.contains(x)).count() as u32;
                if n > 0 && n < 4 { 4 - n } else { 0 }
            };
            assert_eq!(f64::from(partly(0..4) + partly(4..8)), v, "t = {t}");
        }
        // Nothing on a mesh.
        let mesh: Topology = "mesh:4x2".parse().unwrap();
        assert!(stranded_over_time(&mesh, &records, 5).is_none());
    }

    #[test]
    fn a_box_on_a_mesh_is_one_run_per_row() {
        let mesh: Topology = "mesh:8x4".parse().unwrap();
        let b = GridBox::new(&[2, 1], &[3, 2]).unwrap();
        let runs = node_runs(&Partition::Box(b), &mesh).unwrap();
        assert_eq!(
            runs,
            [NodeRun { first: 10, len: 3 }, NodeRun { first: 18, len: 3 }]
        );
        let nodes = Partition::Nodes(vec![7, 3, 4, 5, 9]);
        assert_eq!(
            node_runs(&nodes, &mesh).unwrap(),
            [
                NodeRun { first: 3, len: 3 },
                NodeRun { first: 7, len: 1 },
                NodeRun { first: 9, len: 1 }
            ]
        );
    }

    #[test]
    fn groups_cover_every_node_once_in_the_machines_own_units() {
        for (text, first_label, count) in [
            ("mesh:8x4", "y = 0", 4),
            ("mesh:4x4x2", "z = 0", 2),
            ("hypercube:7", "subcube 0", 8),
            ("gpushare:5x8gpu", "8×GPU", 1),
        ] {
            let t: Topology = text.parse().unwrap();
            let g = groups(&t);
            assert_eq!(g.len(), count, "{text}");
            assert_eq!(g[0].label, first_label);
            let covered: u32 = g.iter().map(|g| g.len).sum();
            assert_eq!(covered as usize, t.num_nodes());
            assert!(g.windows(2).all(|w| w[0].first + w[0].len == w[1].first));
        }
        let conf = "BlockName=r0 Nodes=n[0-3]\nBlockName=r1 Nodes=n[4-7]\nBlockSizes=4,8\n";
        let slurm = partalloc_topology::slurm::SlurmMachine::parse_conf(conf, "t.conf").unwrap();
        let g = groups(&Topology::from(slurm));
        assert_eq!(
            g.iter().map(|g| g.label.as_str()).collect::<Vec<_>>(),
            ["r0", "r1"]
        );
    }

    #[test]
    fn busy_and_queue_step_at_starts_ends_and_arrivals() {
        let rec = |arrival: f64, start: f64, end: f64, granted: u64| JobRecord {
            id: 0,
            arrival,
            start,
            end,
            wait: start - arrival,
            response: end - arrival,
            numerical_delay: 0.0,
            bounded_slowdown: 1.0,
            requested: granted,
            granted,
            partition: Partition::Nodes(Vec::new()),
            dispersal: None,
            domains: None,
            preempted: 0,
        };
        let s = over_time(&[rec(0.0, 0.0, 10.0, 4), rec(1.0, 10.0, 12.0, 2)]);
        assert_eq!(s.times, [0.0, 1.0, 10.0, 12.0]);
        // At 10 one job ends and the other starts: one step, 4 → 2.
        assert_eq!(s.busy, [4.0, 4.0, 2.0, 0.0]);
        assert_eq!(s.queue, [0.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn rows_of_a_box_are_one_strided_group() {
        let run = |first, len| NodeRun { first, len };
        // Four rows of 3 at stride 8, then a lone run.
        let runs = [run(10, 3), run(18, 3), run(26, 3), run(34, 3), run(50, 1)];
        assert_eq!(encode_runs(&runs), [10, 3, -8, 4, 50, 1]);
        // Two equal runs stay pairs; so do runs of different lengths.
        assert_eq!(encode_runs(&[run(0, 2), run(8, 2)]), [0, 2, 8, 2]);
        assert_eq!(
            encode_runs(&[run(0, 2), run(8, 3), run(16, 3)]),
            [0, 2, 8, 3, 16, 3]
        );
        // A break in the stride ends the group.
        assert_eq!(
            encode_runs(&[run(0, 1), run(2, 1), run(4, 1), run(7, 1)]),
            [0, 1, -2, 3, 7, 1]
        );
    }

    #[test]
    fn cdf_ends_at_the_largest_value_and_batch_means_need_enough_jobs() {
        let c = cdf((1..=1000).map(f64::from).collect(), 10);
        assert_eq!(c.len(), 10);
        assert_eq!(c[0], (100.0, 0.1));
        assert_eq!(*c.last().unwrap(), (1000.0, 1.0));
        assert!(cdf(Vec::new(), 10).is_empty());
        let few = batch_means(&[1.0, 2.0, 3.0]);
        assert_eq!((few.mean, few.half_width), (2.0, None));
        let flat = batch_means(&[5.0; 100]);
        assert_eq!((flat.mean, flat.half_width), (5.0, Some(0.0)));
        let rising: Vec<f64> = (0..100).map(f64::from).collect();
        assert!(batch_means(&rising).half_width.unwrap() > 0.0);
    }
}
