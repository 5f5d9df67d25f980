//! Replays the Slurm oracle goldens (`data/slurm-oracle/*.golden`, made by
//! a real slurmctld; see `slurm_golden` for the format) against partalloc's
//! `block` and `tree` placers, in two ways:
//!
//! - decision by decision: before every decision the placer holds exactly
//!   Slurm's busy nodes (from the golden's `start` and `cancel` lines), and
//!   must start the job at the head of the queue on exactly Slurm's nodes
//!   or make it wait where Slurm did;
//! - as a whole sequence: partalloc places every job itself from the empty
//!   machine, and every start and wait must still agree.
//!
//! `hostlists.golden` (node-name goldens, another format) is the only file
//! of the directory left out.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use partalloc_allocators::block::{BlockPlacer, PlaceError, Placement};
use partalloc_allocators::slurm_golden::{Action, Golden, GoldenJob, GoldenTopology, Outcome};
use partalloc_allocators::tree::TreePlacer;
use partalloc_topology::NodeId;
use partalloc_topology::slurm::{SlurmMachine, hostlist};

/// A golden's machine: node names and a placer.
#[derive(Clone)]
struct Machine {
    names: Vec<String>,
    ids: HashMap<String, NodeId>,
    placer: Placer,
}

#[derive(Clone)]
enum Placer {
    Block(BlockPlacer),
    Tree(TreePlacer),
}

fn placement(job: &GoldenJob) -> Placement {
    Placement {
        segment: job.segment,
        exclusive: job.exclusive,
        consolidate: job.consolidate,
    }
}

impl Machine {
    /// Reads the `conf` lines as a `topology.conf` file is read (the
    /// `blocks:FILE` and `tree:FILE` route): `SlurmMachine::parse_conf`.
    fn new(g: &Golden) -> Result<Self, String> {
        let m = SlurmMachine::parse_conf(&g.conf_text(), "golden").map_err(|e| e.to_string())?;
        Self::of(&m, g.topology)
    }

    /// The placer of `m` for a golden of `topology`.
    fn of(m: &SlurmMachine, topology: GoldenTopology) -> Result<Self, String> {
        let placer = match (topology, m.blocks(), m.tree()) {
            (GoldenTopology::Block, Some(b), _) => Placer::Block(BlockPlacer::new(b)),
            (GoldenTopology::Tree, _, Some(t)) => Placer::Tree(TreePlacer::new(t)),
            _ => return Err(format!("not a {topology:?} machine")),
        };
        Ok(Self::named(m.names().to_vec(), placer))
    }

    fn named(names: Vec<String>, placer: Placer) -> Self {
        let ids = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as NodeId))
            .collect();
        Self { names, ids, placer }
    }

    fn place(&mut self, job: &GoldenJob) -> Result<Vec<NodeId>, PlaceError> {
        match &mut self.placer {
            Placer::Block(p) => p.place(job.nodes, placement(job)),
            Placer::Tree(p) => p.place(job.nodes, job.switches),
        }
    }

    fn release(&mut self, nodes: &[NodeId], job: &GoldenJob) {
        match &mut self.placer {
            Placer::Block(p) => p.release(nodes, placement(job)),
            Placer::Tree(p) => p.release(nodes),
        }
    }

    fn occupy(&mut self, nodes: &[NodeId], job: &GoldenJob) {
        match &mut self.placer {
            Placer::Block(p) => p.occupy(nodes, job.exclusive),
            Placer::Tree(p) => p.occupy(nodes),
        }
    }

    fn ids(&self, list: &str) -> Result<Vec<NodeId>, String> {
        let mut v = hostlist::expand(list)
            .map_err(|e| e.to_string())?
            .iter()
            .map(|n| self.ids.get(n).copied().ok_or(format!("unknown node {n}")))
            .collect::<Result<Vec<_>, _>>()?;
        v.sort_unstable();
        Ok(v)
    }

    fn show(&self, ids: &[NodeId]) -> String {
        let names: Vec<&str> = ids
            .iter()
            .filter_map(|&i| self.names.get(i as usize).map(String::as_str))
            .collect();
        hostlist::compress(&names)
    }
}

/// Counts and mismatches of one replay.
#[derive(Default)]
pub(crate) struct Report {
    /// Files replayed.
    pub(crate) files: usize,
    /// Decisions the files record.
    pub(crate) present: usize,
    /// Decisions checked by the decision-by-decision replay.
    pub(crate) checked: usize,
    /// Decisions checked by the whole-sequence replay.
    pub(crate) sequence_checked: usize,
    /// Submissions Slurm refused, checked.
    pub(crate) rejects: usize,
    /// Every disagreement: scenario, line, expected, got.
    pub(crate) mismatches: Vec<String>,
}

fn starts(outcomes: &[Outcome]) -> Vec<(usize, &str, &str)> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Start { line, job, nodes } => Some((*line, job.as_str(), nodes.as_str())),
            _ => None,
        })
        .collect()
}

fn first_pending(outcomes: &[Outcome]) -> Option<(usize, &str)> {
    outcomes.iter().find_map(|o| match o {
        Outcome::Pending { line, job, .. } => Some((*line, job.as_str())),
        _ => None,
    })
}

fn rejected<'a>(outcomes: &'a [Outcome], name: &str) -> Option<&'a str> {
    outcomes.iter().find_map(|o| match o {
        Outcome::Reject { job, message, .. } if job == name => Some(message.as_str()),
        _ => None,
    })
}

/// Cancels `job`: frees its nodes if it runs, drops it if it is queued.
/// False when it is neither (a job Slurm refused at submission).
fn cancel(
    m: &mut Machine,
    running: &mut HashMap<String, (Vec<NodeId>, GoldenJob)>,
    queue: &mut Vec<GoldenJob>,
    job: &str,
) -> bool {
    if let Some((nodes, j)) = running.remove(job) {
        m.release(&nodes, &j);
        true
    } else if let Some(i) = queue.iter().position(|q| q.name == job) {
        queue.remove(i);
        true
    } else {
        false
    }
}

fn outcome_line(o: &Outcome) -> usize {
    match o {
        Outcome::Start { line, .. }
        | Outcome::Pending { line, .. }
        | Outcome::Reject { line, .. } => *line,
        _ => 0,
    }
}

/// Decision by decision, in Slurm's busy set.
fn replay_decisions(file: &str, g: &Golden, base: &Machine, r: &mut Report) {
    let mut m = base.clone();
    let mut miss = |line: usize, want: &str, got: &str| {
        r.mismatches.push(format!(
            "{file}:{line}: decision: expected {want}, got {got}"
        ));
    };
    let mut running: HashMap<String, (Vec<NodeId>, GoldenJob)> = HashMap::new();
    let mut queue: Vec<GoldenJob> = Vec::new();
    let mut checked = 0;
    for step in &g.steps {
        match &step.action {
            Action::Submit(job) => {
                if let Some(message) = rejected(&step.outcomes, &job.name) {
                    r.rejects += 1;
                    match m.place(job) {
                        Err(PlaceError::NoRoom { .. }) => {
                            miss(step.line, &format!("reject ({message})"), "wait");
                        }
                        Err(_) => {}
                        Ok(v) => {
                            miss(step.line, &format!("reject ({message})"), &m.show(&v));
                            m.release(&v, job);
                        }
                    }
                    continue;
                }
                queue.push(job.clone());
            }
            // The guard cancels; false for a job Slurm refused, which was
            // never queued: the harness cancels nothing, and no decision
            // follows.
            Action::Cancel { job } if !cancel(&mut m, &mut running, &mut queue, job) => {
                if let Some(line) = step.outcomes.first().map(outcome_line) {
                    miss(
                        line,
                        &format!("nothing after cancelling {job}"),
                        "an outcome",
                    );
                }
                continue;
            }
            _ => {}
        }
        let golden_starts = starts(&step.outcomes);
        let mut next = 0;
        while let Some(head) = queue.first().cloned() {
            if let Some(&(line, name, list)) = golden_starts.get(next)
                && name == head.name
            {
                next += 1;
                checked += 1;
                let want = match m.ids(list) {
                    Ok(v) => v,
                    Err(e) => {
                        miss(line, list, &e);
                        break;
                    }
                };
                match m.place(&head) {
                    Ok(v) if v == want => {}
                    Ok(v) => {
                        miss(line, &format!("{name} on {list}"), &m.show(&v));
                        m.release(&v, &head);
                        m.occupy(&want, &head);
                    }
                    Err(e) => {
                        miss(line, &format!("{name} on {list}"), &e.to_string());
                        m.occupy(&want, &head);
                    }
                }
                queue.remove(0);
                running.insert(head.name.clone(), (want, head));
                continue;
            }
            match first_pending(&step.outcomes) {
                Some((line, name)) => {
                    checked += 1;
                    if name != head.name {
                        miss(
                            line,
                            &format!("{name} to wait first"),
                            &format!("{} at the head", head.name),
                        );
                    }
                    match m.place(&head) {
                        Err(PlaceError::NoRoom { .. }) => {}
                        Ok(v) => {
                            miss(line, &format!("{} waits", head.name), &m.show(&v));
                            m.release(&v, &head);
                        }
                        Err(e) => miss(line, &format!("{} waits", head.name), &e.to_string()),
                    }
                }
                None => miss(step.line, &format!("an outcome for {}", head.name), "none"),
            }
            break;
        }
        for &(line, name, list) in golden_starts.iter().skip(next) {
            miss(
                line,
                &format!("{name} on {list}"),
                "not at the head of partalloc's queue",
            );
        }
    }
    r.checked += checked;
}

/// The whole scenario with partalloc's own placements.
fn replay_sequence(file: &str, g: &Golden, base: &Machine, r: &mut Report) {
    let mut m = base.clone();
    let mut running: HashMap<String, (Vec<NodeId>, GoldenJob)> = HashMap::new();
    let mut queue: Vec<GoldenJob> = Vec::new();
    for step in &g.steps {
        match &step.action {
            Action::Submit(job) => {
                if rejected(&step.outcomes, &job.name).is_some() {
                    continue;
                }
                queue.push(job.clone());
            }
            // As above: the guard cancels; a refused job was never queued.
            Action::Cancel { job } if !cancel(&mut m, &mut running, &mut queue, job) => continue,
            _ => {}
        }
        let mut got = String::new();
        let mut waited = None;
        while let Some(head) = queue.first().cloned() {
            match m.place(&head) {
                Ok(v) => {
                    let _ = write!(got, "start {} {}; ", head.name, m.show(&v));
                    queue.remove(0);
                    running.insert(head.name.clone(), (v, head));
                }
                Err(_) => {
                    waited = Some(head.name.clone());
                    break;
                }
            }
        }
        let mut want = String::new();
        for (_, name, list) in starts(&step.outcomes) {
            let list = m.ids(list).map_or_else(|e| e, |v| m.show(&v));
            let _ = write!(want, "start {name} {list}; ");
        }
        let golden_wait = first_pending(&step.outcomes).map(|(_, n)| n.to_owned());
        r.sequence_checked += starts(&step.outcomes).len() + usize::from(golden_wait.is_some());
        if let Some(w) = &golden_wait {
            let _ = write!(want, "wait {w}");
        }
        if let Some(w) = &waited {
            let _ = write!(got, "wait {w}");
        }
        if want != got {
            r.mismatches.push(format!(
                "{file}:{}: sequence: expected {want:?}, got {got:?}",
                step.line
            ));
        }
    }
}

/// The golden directory: `data/slurm-oracle` at the workspace root.
pub(crate) fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/slurm-oracle")
}

/// Replays every golden of `dir`.
pub(crate) fn replay_dir(dir: &std::path::Path) -> Result<Report, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "golden"))
        .filter(|p| p.file_name().is_some_and(|n| n != "hostlists.golden"))
        // ring-* and torus3d-* goldens are replayed by slurm_goldens/torus_ring.rs.
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_none_or(|n| !n.starts_with("ring-") && !n.starts_with("torus3d-"))
        })
        .collect();
    files.sort();
    let mut r = Report::default();
    for path in &files {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        replay_text(&name, &text, None, &mut r)?;
    }
    Ok(r)
}

/// Replays one golden's text (named `name` in mismatches) into `r`, on
/// the machine of its `conf` lines or, if given, on `machine` (read from a
/// machine file), which must have the same nodes.
pub(crate) fn replay_text(
    name: &str,
    text: &str,
    machine: Option<&SlurmMachine>,
    r: &mut Report,
) -> Result<(), String> {
    let g = Golden::parse(text, name).map_err(|e| e.to_string())?;
    if g.version != "26.05.3" {
        r.mismatches.push(format!(
            "{name}: made with Slurm {}, not 26.05.3",
            g.version
        ));
    }
    let machine = match machine {
        Some(m) => Machine::of(m, g.topology),
        None => Machine::new(&g),
    }
    .map_err(|e| format!("{name}: {e}"))?;
    r.files += 1;
    r.present += g.decisions();
    replay_decisions(name, &g, &machine, r);
    replay_sequence(name, &g, &machine, r);
    Ok(())
}
