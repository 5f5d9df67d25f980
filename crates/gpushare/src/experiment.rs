//! The artifact's experiment, step for step (see `docs/fgd.md`): one Go
//! random stream seeded by the tune seed shuffles the pods, tunes the
//! workload to 1.3 × the cluster's GPUs with clones, names the nodes by a
//! permutation (which decides ties), and then every pod is scheduled once,
//! in order, with a report of allocation and fragmentation after each.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use crate::frag::{ExactSum, FragAmount, TypicalPod, frag_of, node_frag, typical_pods};
use crate::gorand::GoRand;
use crate::model::{MAX_GPUS, MILLI, NodeState, Placement, Request};
use crate::openb::{Cluster, Pod};
use crate::policy::{self, Policy};

/// The artifact's workload tuning ratio: pods are cloned until they ask
/// for 1.3 × the cluster's GPUs.
pub const TUNE_RATIO: f64 = 1.3;
/// The artifact's tune seeds: 42 to 51.
pub const SEEDS: std::ops::RangeInclusive<i64> = 42..=51;
/// Share of pods the typical pods cover, in percent.
pub const TYPICAL_THRESHOLD_PCT: u32 = 95;
/// Go random draws between tuning and naming the nodes (the scheduler's
/// informers, one watch timeout each; found by matching the artifact's
/// results).
pub const INFORMER_DRAWS: usize = 10;

/// A workload: its pods sorted by name, and its typical pods.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Its name (the pod file's stem, `openb_pod_list_default`).
    pub name: String,
    /// The pods, sorted by name.
    pub pods: Vec<Pod>,
    /// Its typical pods (over all its pods, before tuning).
    pub typical: Vec<TypicalPod>,
}

impl Workload {
    /// A workload from its pods (sorted here by name).
    #[must_use]
    pub fn new(name: &str, mut pods: Vec<Pod>) -> Self {
        pods.sort_by(|a, b| a.name.cmp(&b.name));
        let typical = typical_pods(&pods, TYPICAL_THRESHOLD_PCT);
        Workload {
            name: name.to_owned(),
            pods,
            typical,
        }
    }
}

/// What the random stream decides before the first pod: the pods' order
/// (indices into [`Workload::pods`], clones repeating an index) and the
/// nodes' name prefixes.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Pods in submission order.
    pub order: Vec<usize>,
    /// `rank[i]`: the 4-digit prefix of node `i` (nodes sorted by name);
    /// ties between nodes go to the smaller prefix.
    pub rank: Vec<usize>,
    /// The stream after these draws (the Random policy goes on with it).
    pub rng: GoRand,
}

/// Draws the order and names as the artifact does for `seed`.
#[must_use]
pub fn setup(cluster: &Cluster, workload: &Workload, seed: i64) -> Setup {
    let mut rng = GoRand::new(seed);
    // `rand.Int()` in an argument of a debug log line.
    let _ = rng.int();
    let mut order: Vec<usize> = (0..workload.pods.len()).collect();
    rng.shuffle(order.len(), |i, j| order.swap(i, j));
    tune(&mut order, workload, cluster, &mut rng);
    for _ in 0..INFORMER_DRAWS {
        let _ = rng.int63();
    }
    let rank = rng.perm(cluster.nodes.len());
    Setup { order, rank, rng }
}

/// Tunes the order to [`TUNE_RATIO`] × the cluster's GPU thousandths: up
/// by appending clones of uniformly drawn pods (of the name-sorted list)
/// until the next one would pass the target (its one-GPU share is
/// checked, its total added, as the artifact does), down by deleting
/// uniformly drawn pods.
fn tune(order: &mut Vec<usize>, workload: &Workload, cluster: &Cluster, rng: &mut GoRand) {
    let target = TUNE_RATIO * f64::from(cluster.gpus() * MILLI);
    let mut total: i64 = workload
        .pods
        .iter()
        .map(|p| i64::from(p.request.total_gpu_milli()))
        .sum();
    let n = workload.pods.len();
    if n == 0 || total == 0 {
        return;
    }
    if (total as f64) < target {
        loop {
            let idx = rng.intn(n);
            let r = &workload.pods[idx].request;
            if (total + i64::from(r.gpu_milli)) as f64 > target {
                break;
            }
            total += i64::from(r.total_gpu_milli());
            order.push(idx);
        }
    } else {
        while total as f64 > target && !order.is_empty() {
            let idx = rng.intn(order.len());
            total -= i64::from(workload.pods[order[idx]].request.total_gpu_milli());
            order.remove(idx);
        }
    }
}

/// The report after one pod: GPU thousandths asked for so far, allocated
/// now, and the cluster's fragmentation against the typical pods.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// GPU thousandths of all pods submitted so far (failed ones too).
    pub arrived: u64,
    /// GPU thousandths allocated.
    pub used: u64,
    /// Fragmented idle GPU thousandths (every class but Q3).
    pub frag: f64,
    /// Idle GPU thousandths (every class).
    pub idle: f64,
    /// Whether this pod was placed.
    pub placed: bool,
}

/// A cluster being scheduled: node states in name order (by prefix), the
/// fragmentation of each and their exact sum.
#[derive(Debug, Clone)]
pub struct ClusterState<'a> {
    nodes: Vec<NodeState>,
    /// Creation order (node list sorted by its names) → position.
    created: Vec<usize>,
    /// Position → index in the cluster's node list.
    at_pos: Vec<usize>,
    /// Index in the cluster's node list → position.
    pos_of: Vec<usize>,
    frag: Vec<FragAmount>,
    frag_score: Vec<f64>,
    version: Vec<u32>,
    sum: ExactSum,
    used: u64,
    typical: Cow<'a, [TypicalPod]>,
    /// Request kinds seen, by (CPU, GPUs, thousandths, models): a node's
    /// score depends only on its state and these.
    kinds: HashMap<(u32, u8, u32, u64), usize>,
    /// Per kind and node: the node version scored, the score and FGD's GPUs.
    cache: Vec<Vec<(u32, i64, Placement)>>,
    /// Per kind and node state (see [`state_key`]): the score and the GPU
    /// thousandths-left values whose GPUs score highest.
    fgd_memo: HashMap<(usize, u128), (i64, u16), BuildMix>,
    /// What the feasibility check reads, per node.
    fit: Vec<Fit>,
    /// Some node has a model id past 63, which [`Fit`] cannot hold.
    wide_models: bool,
    /// The nodes grouped by state: the deterministic policies score a
    /// state once.
    classes: Classes,
    /// Feasible positions (kept to reuse the memory).
    scratch: Vec<u32>,
}

/// What every deterministic policy's score and the feasibility check read
/// of a node: CPU and memory left, whether a pod slot is left, the GPU
/// model and count, the GPUs' thousandths left as a multiset (sorted), and
/// which kinds of GPU pods run there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct StateKey {
    cpu: u32,
    mem: u64,
    slot: bool,
    gpus: u8,
    model: u8,
    lefts: [u16; MAX_GPUS],
    kinds: u32,
}

impl StateKey {
    fn of(n: &NodeState) -> Self {
        let g = usize::from(n.gpus);
        let mut lefts = [0_u16; MAX_GPUS];
        lefts[..g].copy_from_slice(n.gpu_left());
        lefts[..g].sort_unstable();
        let kinds = n
            .kinds
            .iter()
            .enumerate()
            .fold(0_u32, |m, (k, &c)| m | u32::from(c > 0) << k);
        StateKey {
            cpu: n.cpu_left,
            mem: n.memory_left,
            slot: n.pods_left > 0,
            gpus: n.gpus,
            model: n.model,
            lefts,
            kinds,
        }
    }
}

/// The nodes grouped by [`StateKey`]. Nodes in one class are
/// indistinguishable to the deterministic policies, so a request is
/// checked and scored once per class, and the class's first node (by
/// name order) stands for it.
#[derive(Debug, Clone, Default)]
struct Classes {
    /// Node position → class id.
    of: Vec<u32>,
    /// Members of each class id, in name order.
    members: Vec<BTreeSet<u32>>,
    index: HashMap<StateKey, u32, BuildMix>,
    /// Class ids with members, and their feasibility records.
    live: Vec<u32>,
    live_fit: Vec<Fit>,
    /// Class id → its index in `live` (`u32::MAX` when empty).
    live_at: Vec<u32>,
    /// (class id, request kind) → score.
    scores: HashMap<(u32, u32), i64, BuildMix>,
}

impl Classes {
    fn new(nodes: &[NodeState]) -> Self {
        let mut c = Classes {
            of: vec![0; nodes.len()],
            index: HashMap::with_hasher(BuildMix),
            scores: HashMap::with_hasher(BuildMix),
            ..Classes::default()
        };
        for (pos, n) in nodes.iter().enumerate() {
            c.add(pos, n);
        }
        c
    }

    fn add(&mut self, pos: usize, n: &NodeState) {
        let key = StateKey::of(n);
        let next = self.members.len() as u32;
        let id = *self.index.entry(key).or_insert(next);
        if id == next {
            self.members.push(BTreeSet::new());
            self.live_at.push(u32::MAX);
        }
        let set = &mut self.members[id as usize];
        set.insert(pos as u32);
        if set.len() == 1 {
            self.live_at[id as usize] = self.live.len() as u32;
            self.live.push(id);
            self.live_fit.push(Fit::of(n));
        }
        self.of[pos] = id;
    }

    fn remove(&mut self, pos: usize) {
        let id = self.of[pos] as usize;
        let set = &mut self.members[id];
        set.remove(&(pos as u32));
        if set.is_empty() {
            let at = self.live_at[id] as usize;
            self.live.swap_remove(at);
            self.live_fit.swap_remove(at);
            if let Some(&moved) = self.live.get(at) {
                self.live_at[moved as usize] = at as u32;
            }
            self.live_at[id] = u32::MAX;
        }
    }
}

/// A node state as FGD sees it (CPU left, model, GPUs' thousandths left
/// sorted), packed; `None` past 8 GPUs.
fn state_key(node: &NodeState) -> Option<u128> {
    let n = usize::from(node.gpus);
    if n > 8 {
        return None;
    }
    let mut lefts = [0_u16; 8];
    lefts[..n].copy_from_slice(node.gpu_left());
    lefts[..n].sort_unstable();
    let mut k = u128::from(node.cpu_left);
    k = k << 6 | u128::from(node.model & 63);
    k = k << 5 | n as u128;
    for l in lefts {
        k = k << 11 | u128::from(l);
    }
    Some(k)
}

impl<'a> ClusterState<'a> {
    /// Empty nodes of `cluster`, ordered by `rank`.
    #[must_use]
    pub fn new(cluster: &Cluster, rank: &[usize], typical: &'a [TypicalPod]) -> Self {
        Self::of_nodes(&cluster.nodes, rank, Cow::Borrowed(typical))
    }

    /// Empty nodes of `nodes` (in name order: ties go to the node whose
    /// name sorts first), judged against typical pods the state owns.
    #[must_use]
    pub fn owned(nodes: &[crate::NodeSpec], typical: Vec<TypicalPod>) -> ClusterState<'static> {
        ClusterState::of_nodes(nodes, &[], Cow::Owned(typical))
    }

    fn of_nodes(
        nodes_in: &[crate::NodeSpec],
        rank: &[usize],
        typical: Cow<'a, [TypicalPod]>,
    ) -> Self {
        let n = nodes_in.len();
        let mut by_name: Vec<usize> = (0..n).collect();
        by_name.sort_by(|&a, &b| nodes_in[a].name.cmp(&nodes_in[b].name));
        // `rank` must be a permutation of 0..n; anything else keeps the
        // name order.
        let mut seen = vec![false; n];
        let is_perm = rank.len() == n
            && rank
                .iter()
                .all(|&r| r < n && !std::mem::replace(&mut seen[r], true));
        let created: Vec<usize> = if is_perm {
            rank.to_vec()
        } else {
            (0..n).collect()
        };
        let mut at_pos = vec![0; n];
        for (c, &i) in by_name.iter().enumerate() {
            at_pos[created[c]] = i;
        }
        let nodes: Vec<NodeState> = at_pos
            .iter()
            .map(|&i| NodeState::new(&nodes_in[i]))
            .collect();
        let mut pos_of = vec![0; n];
        for (pos, &i) in at_pos.iter().enumerate() {
            pos_of[i] = pos;
        }
        let frag: Vec<FragAmount> = nodes.iter().map(|s| node_frag(s, &typical)).collect();
        let frag_score = frag.iter().map(frag_of).collect();
        let mut sum = ExactSum::default();
        for f in &frag {
            sum.add(f);
        }
        let nodes_fit = nodes.iter().map(Fit::of).collect();
        let wide_models = nodes.iter().any(|s| s.model > 63);
        let classes = Classes::new(&nodes);
        ClusterState {
            nodes,
            created,
            at_pos,
            pos_of,
            frag,
            frag_score,
            version: vec![0; n],
            sum,
            used: 0,
            typical,
            kinds: HashMap::new(),
            cache: Vec::new(),
            fgd_memo: HashMap::with_hasher(BuildMix),
            fit: nodes_fit,
            wide_models,
            classes,
            scratch: Vec::new(),
        }
    }

    /// The first node (by name order) with the highest score among those
    /// that can hold `req`, scoring each class of equal nodes once with
    /// `score` on its first node; the score too.
    fn best_by_class(
        &mut self,
        req: &Request,
        kind: usize,
        mut score: impl FnMut(&mut Self, usize) -> i64,
    ) -> Option<(i64, usize)> {
        let ask = Ask::of(req);
        let exact = ask.mem_exact || self.wide_models;
        let mut best: Option<(i64, u32)> = None;
        for i in 0..self.classes.live.len() {
            if !self.classes.live_fit[i].admits(&ask) {
                continue;
            }
            let id = self.classes.live[i];
            let Some(&first) = self.classes.members[id as usize].first() else {
                continue;
            };
            if exact && !self.nodes[first as usize].fits(req) {
                continue;
            }
            let key = (id, kind as u32);
            let s = match self.classes.scores.get(&key) {
                Some(&s) => s,
                None => {
                    let s = score(self, first as usize);
                    self.classes.scores.insert(key, s);
                    s
                }
            };
            if best.is_none_or(|(b, p)| s > b || s == b && first < p) {
                best = Some((s, first));
            }
        }
        best.map(|(s, p)| (s, p as usize))
    }

    /// Whether node `pos` can hold the request now.
    #[inline(always)]
    fn feasible(&self, pos: usize, ask: &Ask, req: &Request) -> bool {
        self.fit[pos].admits(ask)
            && (!ask.mem_exact && !self.wide_models || self.nodes[pos].fits(req))
    }

    /// The node states, by name order.
    #[must_use]
    pub fn nodes(&self) -> &[NodeState] {
        &self.nodes
    }

    /// GPU thousandths allocated.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The cluster's idle GPU thousandths per fragmentation class.
    #[must_use]
    pub fn frag_amount(&self) -> FragAmount {
        self.sum.total()
    }

    fn kind(&mut self, req: &Request) -> usize {
        let key = (req.cpu_milli, req.gpus, req.gpu_milli, req.models);
        let next = self.kinds.len();
        *self.kinds.entry(key).or_insert(next)
    }

    /// The kind of `req` with FGD's cache row ready.
    fn fgd_kind(&mut self, req: &Request) -> usize {
        let k = self.kind(req);
        while self.cache.len() <= k {
            self.cache.push(vec![
                (u32::MAX, 0, Placement { gpus: 0, milli: 0 });
                self.nodes.len()
            ]);
        }
        k
    }

    fn fgd(&mut self, kind: usize, pos: usize, req: &Request) -> (i64, Placement) {
        let e = self.cache[kind][pos];
        if e.0 == self.version[pos] {
            return (e.1, e.2);
        }
        let node = &self.nodes[pos];
        let (s, at) = match state_key(node) {
            Some(key) => {
                let typical = &*self.typical;
                let f_now = self.frag_score[pos];
                let &mut (s, vals) = self
                    .fgd_memo
                    .entry((kind, key))
                    .or_insert_with(|| memo_entry(node, req, typical, f_now));
                if vals == u16::MAX {
                    policy::fgd_score(node, req, typical, f_now)
                } else {
                    (s, place_by_values(node, req, vals))
                }
            }
            None => policy::fgd_score(node, req, &self.typical, self.frag_score[pos]),
        };
        self.cache[kind][pos] = (self.version[pos], s, at);
        (s, at)
    }

    /// The Random policy's node for `req`: the feasible nodes in creation
    /// order (the scheduler's node list before its parallel filter), one
    /// drawn with `Intn` (no draw when one or none is feasible).
    pub fn random_node(&mut self, req: &Request, rng: &mut GoRand) -> Option<usize> {
        let ask = Ask::of(req);
        let mut feasible = std::mem::take(&mut self.scratch);
        feasible.clear();
        for &p in &self.created {
            if self.feasible(p, &ask, req) {
                feasible.push(p as u32);
            }
        }
        let pick = match feasible.len() {
            0 => None,
            1 => Some(feasible[0]),
            k => Some(feasible[rng.intn(k)]),
        };
        self.scratch = feasible;
        pick.map(|p| p as usize)
    }

    /// Chooses a node and GPUs for `req` under `policy`, or `None` when no
    /// node fits. `rng` serves the Random policy only.
    pub fn choose(
        &mut self,
        req: &Request,
        policy: Policy,
        rng: &mut GoRand,
    ) -> Option<(usize, Placement)> {
        match policy {
            Policy::Random => {
                let pos = self.random_node(req, rng)?;
                policy::random_gpus(&self.nodes[pos], req, rng).map(|at| (pos, at))
            }
            Policy::Fgd => {
                let kind = self.fgd_kind(req);
                let (_, pos) = self.best_by_class(req, kind, |me, pos| me.fgd(kind, pos, req).0)?;
                let (_, at) = self.fgd(kind, pos, req);
                Some((pos, at))
            }
            // BestFit normalises its scores over the feasible nodes,
            // ⌊(s − lo)·100/(hi − lo)⌋; only s = hi reaches 100 (and with
            // hi = lo all are 0), so the first node with the highest raw
            // score wins either way and the normalisation can be skipped.
            Policy::BestFit | Policy::DotProd | Policy::GpuClustering | Policy::GpuPacking => {
                let score: fn(&NodeState, &Request) -> i64 = match policy {
                    Policy::BestFit => policy::best_fit_raw,
                    Policy::DotProd => policy::dot_prod_score,
                    Policy::GpuClustering => policy::gpu_clustering_score,
                    _ => policy::gpu_packing_score,
                };
                let kind = self.kind(req);
                let (_, pos) =
                    self.best_by_class(req, kind, |me, pos| score(&me.nodes[pos], req))?;
                policy::best_gpus(&self.nodes[pos], req).map(|at| (pos, at))
            }
        }
    }

    /// Places `req` at `pos` on the GPUs of `at`, updating the
    /// fragmentation of that node and the cluster.
    ///
    /// # Errors
    /// [`crate::ModelError`] when it does not fit (state unchanged).
    pub fn place(
        &mut self,
        pos: usize,
        req: &Request,
        at: Placement,
    ) -> Result<(), crate::ModelError> {
        let node = self
            .nodes
            .get_mut(pos)
            .ok_or(crate::ModelError::DoesNotFit)?;
        node.place(req, at)?;
        self.used += u64::from(at.gpus.count_ones() * at.milli);
        self.refresh(pos);
        Ok(())
    }

    /// Undoes [`ClusterState::place`] of the same request and GPUs.
    ///
    /// # Errors
    /// [`crate::ModelError::NotPlaced`] when they were not placed there
    /// (state unchanged).
    pub fn remove(
        &mut self,
        pos: usize,
        req: &Request,
        at: Placement,
    ) -> Result<(), crate::ModelError> {
        let node = self
            .nodes
            .get_mut(pos)
            .ok_or(crate::ModelError::NotPlaced)?;
        node.remove(req, at)?;
        self.used -= u64::from(at.gpus.count_ones() * at.milli);
        self.refresh(pos);
        Ok(())
    }

    /// The position of node `index` of the cluster's node list.
    #[must_use]
    pub fn position_of(&self, index: usize) -> Option<usize> {
        self.pos_of.get(index).copied()
    }

    /// The index in the cluster's node list of the node at `pos`.
    #[must_use]
    pub fn index_at(&self, pos: usize) -> Option<usize> {
        self.at_pos.get(pos).copied()
    }

    /// The typical pods the fragmentation is measured against.
    #[must_use]
    pub fn typical(&self) -> &[TypicalPod] {
        &self.typical
    }

    /// The GPUs `policy` takes for `req` on the node at `pos` (which must
    /// fit it): the policy's own choice within a node, as after choosing
    /// that node. `rng` serves the Random policy only.
    pub fn gpus_on(
        &mut self,
        pos: usize,
        req: &Request,
        policy: Policy,
        rng: &mut GoRand,
    ) -> Option<Placement> {
        if !self.nodes.get(pos)?.fits(req) {
            return None;
        }
        match policy {
            Policy::Random => policy::random_gpus(&self.nodes[pos], req, rng),
            Policy::Fgd => {
                let kind = self.fgd_kind(req);
                Some(self.fgd(kind, pos, req).1)
            }
            _ => policy::best_gpus(&self.nodes[pos], req),
        }
    }

    fn refresh(&mut self, pos: usize) {
        self.sum.sub(&self.frag[pos]);
        self.frag[pos] = node_frag(&self.nodes[pos], &self.typical);
        self.frag_score[pos] = frag_of(&self.frag[pos]);
        self.sum.add(&self.frag[pos]);
        self.version[pos] = self.version[pos].wrapping_add(1);
        self.fit[pos] = Fit::of(&self.nodes[pos]);
        self.classes.remove(pos);
        self.classes.add(pos, &self.nodes[pos]);
    }
}

/// A fast hasher for the memo's integer keys (the keys are not chosen by
/// an adversary, so the default hasher's protection is not needed).
#[derive(Debug, Clone, Copy, Default)]
struct BuildMix;

/// The state of [`BuildMix`]: multiply-rotate mixing of 64-bit words.
#[derive(Debug, Clone, Copy, Default)]
struct Mix(u64);

impl std::hash::Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0_u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u128(&mut self, i: u128) {
        self.write_u64(i as u64);
        self.write_u64((i >> 64) as u64);
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

impl std::hash::BuildHasher for BuildMix {
    type Hasher = Mix;
    fn build_hasher(&self) -> Mix {
        Mix(0)
    }
}

/// What the feasibility check reads of a node, packed in 12 bytes so the
/// scan over all nodes stays in the first-level cache.
#[derive(Debug, Clone, Copy, Default)]
struct Fit {
    cpu: u32,
    /// Memory left, capped at `u32::MAX` MiB.
    mem: u32,
    max_left: u16,
    free: u8,
    /// Bits 0–5 the GPU model, bit 6 the node has GPUs, bit 7 a pod slot
    /// is left.
    flags: u8,
}

impl Fit {
    fn of(n: &NodeState) -> Self {
        Fit {
            cpu: n.cpu_left,
            mem: u32::try_from(n.memory_left).unwrap_or(u32::MAX),
            max_left: n.max_gpu_left() as u16,
            free: n.free_gpus() as u8,
            flags: (n.model & 63)
                | if n.gpus > 0 { 64 } else { 0 }
                | if n.pods_left > 0 { 128 } else { 0 },
        }
    }
}

/// A request as [`Fit::admits`] reads it.
#[derive(Debug, Clone, Copy)]
struct Ask {
    cpu: u32,
    mem: u32,
    /// The exact memory check is needed (asks for `u32::MAX` MiB or more).
    mem_exact: bool,
    gpus: u8,
    milli: u32,
    models: u64,
}

impl Ask {
    fn of(r: &Request) -> Self {
        let mem = u32::try_from(r.memory_mib).unwrap_or(u32::MAX);
        Ask {
            cpu: r.cpu_milli,
            mem,
            mem_exact: mem == u32::MAX,
            gpus: r.gpus,
            milli: r.gpu_milli,
            models: r.models,
        }
    }
}

impl Fit {
    /// [`NodeState::fits`], except memory of `u32::MAX` MiB or more
    /// (`Ask::mem_exact`), which the caller checks on the node.
    #[inline]
    fn admits(self, a: &Ask) -> bool {
        if self.cpu < a.cpu || self.mem < a.mem || self.flags & 128 == 0 {
            return false;
        }
        if a.gpus == 0 {
            return true;
        }
        let model = self.flags & 63;
        if self.flags & 64 == 0 || a.models != 0 && a.models & (1 << model) == 0 {
            return false;
        }
        if a.gpus == 1 {
            u32::from(self.max_left) >= a.milli
        } else {
            self.free >= a.gpus
        }
    }
}

/// FGD's score of a node state and, for a share of one GPU, which
/// thousandths-left values its best GPUs have (bit `v` of the 16-bit set
/// is not usable for values up to 1000, so the set is kept as the one
/// value of the first best GPU when all best GPUs share it, else
/// `u16::MAX` to ask for a full computation).
fn memo_entry(node: &NodeState, req: &Request, typical: &[TypicalPod], f_now: f64) -> (i64, u16) {
    let (s, at) = policy::fgd_score(node, req, typical, f_now);
    if !req.is_share() {
        return (s, 0);
    }
    // Every GPU with the chosen GPU's value scores the same; a GPU with
    // another value and the same score would make the choice depend on
    // the GPUs' order, which the memo does not keep.
    let chosen = at.gpus.trailing_zeros() as usize;
    let v = node.gpu_left[chosen];
    let cpu_after = node.cpu_left.saturating_sub(req.cpu_milli);
    let n = usize::from(node.gpus);
    let mut seen = [false; 1001];
    for i in 0..n {
        let g = node.gpu_left[i];
        if g == v || u32::from(g) < req.gpu_milli || seen[usize::from(g)] {
            continue;
        }
        seen[usize::from(g)] = true;
        let mut probe = node.gpu_left;
        probe[i] = g - req.gpu_milli as u16;
        let f_after = crate::frag::frag_score_parts(cpu_after, &probe[..n], node.model, typical);
        let si = policy::fgd_value(f_now, f_after);
        if si == s {
            return (s, u16::MAX);
        }
    }
    (s, v)
}

/// The placement of a memoised FGD choice on this node's GPU order.
fn place_by_values(node: &NodeState, req: &Request, v: u16) -> Placement {
    if req.gpus == 0 {
        return Placement { gpus: 0, milli: 0 };
    }
    if !req.is_share() {
        return node
            .lowest_free(req.gpus)
            .unwrap_or(Placement { gpus: 0, milli: 0 });
    }
    match node.gpu_left().iter().position(|&g| g == v) {
        Some(i) => Placement {
            gpus: 1 << i,
            milli: req.gpu_milli,
        },
        _ => Placement { gpus: 0, milli: 0 },
    }
}

/// Runs one experiment: `workload` on `cluster` under `policy` with tune
/// seed `seed`, one [`Step`] per submitted pod.
#[must_use]
pub fn run(cluster: &Cluster, workload: &Workload, policy: Policy, seed: i64) -> Vec<Step> {
    let Setup {
        order,
        rank,
        mut rng,
    } = setup(cluster, workload, seed);
    let mut state = ClusterState::new(cluster, &rank, &workload.typical);
    let mut arrived = 0_u64;
    let mut steps = Vec::with_capacity(order.len());
    for &i in &order {
        let req = workload.pods[i].request;
        if policy.is_random() {
            // The scheduler samples plugin metrics once per cycle.
            let _ = rng.intn(100);
        }
        arrived += u64::from(req.total_gpu_milli());
        let placed = match state.choose(&req, policy, &mut rng) {
            Some((pos, at)) => state.place(pos, &req, at).is_ok(),
            None => false,
        };
        let amount = state.frag_amount();
        steps.push(Step {
            arrived,
            used: state.used(),
            frag: frag_of(&amount),
            idle: amount.iter().sum(),
            placed,
        });
    }
    steps
}
