//! Fair share: accumulated usage with decay, and the fair-share factor of
//! each user association, by Fair Tree or by the classic algorithm.
//!
//! Rules, each from the file that decides it:
//! - usage: a running job adds `Δt · d^Δt · CPUs · UsageFactor` to its
//!   association and every ancestor at each priority pass, Δt counted
//!   from the later of the last pass and its start; a job ending adds the
//!   rest at once (`_apply_new_usage`, `priority_p_job_end`,
//!   `src/plugins/priority/multifactor/priority_multifactor.c`);
//! - decay: every pass multiplies all usage by `d^(pass − last pass)` with
//!   the per-second factor `d = 1 − 0.693 / PriorityDecayHalfLife`
//!   (`_init_decay_vars`, `_apply_decay`; the source uses 0.693, not ln 2);
//!   the first pass after start only computes factors;
//! - Fair Tree: `LevelFS = S / U` with `S` the shares over the siblings'
//!   shares and `U` the usage over the parent's usage; siblings sorted by
//!   LevelFS (users before accounts on ties), users ranked depth first, a
//!   user's factor is rank / number of user associations, tied users share
//!   a rank (`fair_tree.c`). Tied sibling accounts are not merged:
//!   `_count_tied_accounts` stops at the first account it meets, so it
//!   never counts one, although `doc/html/fair_tree.shtml` describes the
//!   merge; a tied account's first user takes the previous user's rank;
//! - classic: `EffectvUsage = UsageNorm + (parent's EffectvUsage −
//!   UsageNorm) · shares / siblings' shares` (the parent's for root's
//!   children: `UsageNorm`), `FairShare = 2^(−EffectvUsage / NormShares)`
//!   with `NormShares` the product of share fractions up the tree
//!   (`_set_usage_efctv`, `_set_assoc_fs_factor`; `assoc_mgr.c`'s
//!   `_normalize_assoc_shares_traditional`). Accounts' effective usage is
//!   computed at the start of a pass, before the pass adds running jobs'
//!   usage (`_set_children_usage_efctv`, `_decay_thread`); a user's
//!   effective usage is then unknown (`NO_VAL`) until something needs it:
//!   a job of the user whose priority is computed (at submission, at
//!   release, or at a pass while it pends: `_get_fairshare_priority`), or
//!   sshare reading it (`assoc_mgr_get_shares`, `src/common/assoc_mgr.c`).
//!   Only then are its normalized and effective usage and its factor
//!   computed, from the usage of that moment; a user's normalized usage
//!   stays as last computed until then (`NO_VAL` before the first time,
//!   `slurmdb_create_assoc_usage`, `src/common/slurmdb_defs.c`), and a
//!   depth-oblivious effective usage reads its siblings' as they stand.

use super::assoc::{AssocTree, Shares};
use super::conf::FairShareAlgo;

/// Slurm's `NO_VAL` (`0xfffffffe`), the normalized usage of a user
/// association never computed.
const NO_VAL: f64 = 4_294_967_294.0;

/// The fair-share state of one association.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct AssocUsage {
    /// `RawUsage`: decayed CPU-seconds.
    pub usage_raw: f64,
    /// `NormUsage`: usage over root's usage.
    pub usage_norm: f64,
    /// `EffectvUsage`.
    pub usage_efctv: f64,
    /// `NormShares`.
    pub shares_norm: f64,
    /// The siblings' shares (the association's own level).
    pub level_shares: u64,
    /// `LevelFS` (Fair Tree).
    pub level_fs: f64,
    /// `FairShare`: the factor a user's jobs get.
    pub fs_factor: f64,
}

/// One line of `sshare -l`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SshareRow {
    /// `Account`.
    pub account: String,
    /// `User` (empty for an account).
    pub user: String,
    /// Depth in the tree (root 0), for sshare's indentation.
    pub depth: usize,
    /// `RawShares` (`None`: `parent`).
    pub raw_shares: Option<u32>,
    /// `NormShares`.
    pub norm_shares: f64,
    /// `RawUsage` (sshare prints it rounded down to a whole number).
    pub raw_usage: f64,
    /// `NormUsage`.
    pub norm_usage: f64,
    /// `EffectvUsage`.
    pub effectv_usage: f64,
    /// `FairShare` (`None` where sshare prints nothing: accounts).
    pub fair_share: Option<f64>,
    /// `LevelFS` (`None` for root, classic, and `parent` shares).
    pub level_fs: Option<f64>,
}

/// The fair-share state of an association tree.
#[derive(Debug, Clone)]
pub struct FairShare {
    algo: FairShareAlgo,
    /// `PriorityFlags=DEPTH_OBLIVIOUS` (with the classic algorithm).
    depth_oblivious: bool,
    /// Per-second decay factor.
    decay: f64,
    usage: Vec<AssocUsage>,
    /// Classic: user associations whose effective usage is unknown since
    /// the last pass (slurmctld's `usage_efctv == NO_VAL`).
    stale: Vec<bool>,
    /// Associations in depth-first order from root.
    preorder: Vec<usize>,
    depth: Vec<usize>,
}

impl FairShare {
    /// Zero usage on `tree`, for `algo` with `half_life` seconds (0: no
    /// decay).
    #[must_use]
    pub fn new(tree: &AssocTree, algo: FairShareAlgo, half_life: u64) -> Self {
        let n = tree.len();
        let mut usage = vec![AssocUsage::default(); n];
        // A user's normalized usage before it is first computed: slurmdbd's
        // records start at `NO_VAL` (`slurmdb_create_assoc_usage`).
        for (i, u) in usage.iter_mut().enumerate() {
            if tree.get(i).user.is_some() {
                u.usage_norm = NO_VAL;
            }
        }
        let stale = (0..n).map(|i| tree.get(i).user.is_some()).collect();
        let mut preorder = Vec::with_capacity(n);
        let mut depth = vec![0; n];
        let mut stack = vec![tree.root()];
        while let Some(a) = stack.pop() {
            preorder.push(a);
            for &c in tree.get(a).children.iter().rev() {
                depth[c] = depth[a] + 1;
                stack.push(c);
            }
        }
        let raw = |i: usize| match tree.get(i).shares {
            Shares::Raw(s) => Some(u64::from(s)),
            Shares::Parent => None,
        };
        for &a in &preorder {
            let level: u64 = tree.get(a).children.iter().filter_map(|&c| raw(c)).sum();
            for &c in &tree.get(a).children {
                usage[c].level_shares = level;
            }
        }
        for &a in &preorder {
            let node = tree.get(a);
            let Some(parent) = node.parent else {
                // Root has no siblings: Fair Tree's fraction of no level
                // is 0, the classic product of no fractions 1.
                usage[a].shares_norm = match algo {
                    FairShareAlgo::FairTree => 0.0,
                    FairShareAlgo::Classic => 1.0,
                };
                continue;
            };
            usage[a].shares_norm = match algo {
                FairShareAlgo::FairTree => {
                    // `parent` shares use the parent's own fraction.
                    let fs = if raw(a).is_some() { a } else { parent };
                    match (raw(fs), usage[fs].level_shares) {
                        (Some(s), l) if l > 0 => s as f64 / l as f64,
                        _ => 0.0,
                    }
                }
                FairShareAlgo::Classic => match raw(a) {
                    None => usage[parent].shares_norm,
                    Some(s) => {
                        let l = usage[a].level_shares;
                        if l == 0 {
                            0.0
                        } else {
                            s as f64 / l as f64 * usage[parent].shares_norm
                        }
                    }
                },
            };
        }
        let decay = if half_life > 0 {
            1.0 - 0.693 / half_life as f64
        } else {
            1.0
        };
        Self {
            algo,
            depth_oblivious: false,
            decay,
            usage,
            stale,
            preorder,
            depth,
        }
    }

    /// The same with `PriorityFlags=DEPTH_OBLIVIOUS`'s effective usage
    /// (the classic algorithm only).
    #[must_use]
    pub fn with_depth_oblivious(mut self, on: bool) -> Self {
        self.depth_oblivious = on;
        self
    }

    /// The per-second decay factor.
    #[must_use]
    pub fn decay_factor(&self) -> f64 {
        self.decay
    }

    /// Association `i`'s state.
    #[must_use]
    pub fn usage(&self, i: usize) -> &AssocUsage {
        &self.usage[i]
    }

    /// User association `i`'s fair-share factor.
    #[must_use]
    pub fn factor(&self, i: usize) -> f64 {
        self.usage[i].fs_factor
    }

    /// Multiplies all usage by `d^dt` (clamped as Slurm clamps, at
    /// `f64::MIN_POSITIVE`).
    pub fn decay(&mut self, dt: f64) {
        if dt <= 0.0 || self.decay == 1.0 {
            return;
        }
        let f = self.decay.powf(dt).max(f64::MIN_POSITIVE);
        for u in &mut self.usage {
            u.usage_raw *= f;
        }
    }

    /// The usage `dt` seconds of `cpus` CPUs add (`dt · d^dt · cpus ·
    /// factor`).
    #[must_use]
    pub fn charge(&self, dt: f64, cpus: f64, usage_factor: f64) -> f64 {
        if dt <= 0.0 {
            return 0.0;
        }
        dt * self.decay.powf(dt) * cpus * usage_factor
    }

    /// Adds `amount` to association `i` and all its ancestors.
    pub fn add(&mut self, tree: &AssocTree, i: usize, amount: f64) {
        if amount == 0.0 {
            return;
        }
        for a in tree.chain(i) {
            self.usage[a].usage_raw += amount;
        }
    }

    /// Clears all usage (`PriorityUsageResetPeriod`).
    pub fn reset(&mut self) {
        for u in &mut self.usage {
            u.usage_raw = 0.0;
        }
    }

    fn set_norm(&mut self, tree: &AssocTree, a: usize) {
        let root = self.usage[tree.root()].usage_raw;
        self.usage[a].usage_norm = if root == 0.0 {
            0.0
        } else {
            (self.usage[a].usage_raw / root).min(1.0)
        };
    }

    /// The classic algorithm's first half, at the start of a pass:
    /// accounts' normalized and effective usage (users wait for
    /// [`classic_users`](Self::classic_users)).
    pub fn classic_accounts(&mut self, tree: &AssocTree) {
        let root = tree.root();
        // One association after the other, depth first
        // (`_set_children_usage_efctv`): a depth-oblivious effective usage
        // reads its siblings' normalized usage as last computed (this
        // pass for those before it, users' at the last pass).
        for k in 0..self.preorder.len() {
            let a = self.preorder[k];
            if tree.get(a).user.is_some() {
                self.stale[a] = true;
                continue;
            }
            if a == root {
                continue;
            }
            self.set_norm(tree, a);
            self.set_classic_efctv(tree, a);
            self.set_classic_factor(a);
        }
    }

    fn set_classic_efctv(&mut self, tree: &AssocTree, a: usize) {
        let node = tree.get(a);
        let Some(parent) = node.parent else { return };
        let u = self.usage[a];
        self.usage[a].usage_efctv = if parent == tree.root() {
            u.usage_norm
        } else {
            match node.shares {
                Shares::Parent => self.usage[parent].usage_efctv,
                Shares::Raw(_) if self.depth_oblivious => {
                    self.depth_oblivious_efctv(tree, a, parent)
                }
                Shares::Raw(s) => {
                    let pe = self.usage[parent].usage_efctv;
                    if u.level_shares == 0 {
                        pe
                    } else {
                        u.usage_norm + (pe - u.usage_norm) * (f64::from(s) / u.level_shares as f64)
                    }
                }
            }
        };
    }

    /// `PriorityFlags=DEPTH_OBLIVIOUS`'s effective usage of `a` under
    /// `parent` (not root) (`_depth_oblivious_set_usage_efctv`,
    /// `priority_multifactor.c`): with the parent's ratio
    /// Rp = its effective usage / its normalized shares, the siblings'
    /// Rs = the sum of their normalized usage (those of `parent` shares
    /// left out) / the parent's normalized shares, and a's own
    /// Rl = (its normalized usage / its normalized shares) / Rs, it is
    /// Rp · Rl^k · its normalized shares, where k = 1 unless ln Rp and
    /// ln Rl have opposite signs, then 1 / (1 + (5 ln Rp)²); its
    /// normalized usage when any of these is 0.
    fn depth_oblivious_efctv(&self, tree: &AssocTree, a: usize, parent: usize) -> f64 {
        let (u, p) = (self.usage[a], self.usage[parent]);
        if u.shares_norm == 0.0
            || p.shares_norm == 0.0
            || p.usage_efctv == 0.0
            || u.usage_norm == 0.0
        {
            return u.usage_norm;
        }
        let ratio_p = p.usage_efctv / p.shares_norm;
        let siblings: f64 = tree
            .get(parent)
            .children
            .iter()
            .filter(|&&c| matches!(tree.get(c).shares, Shares::Raw(_)))
            .map(|&c| self.usage[c].usage_norm)
            .sum();
        let ratio_s = siblings / p.shares_norm;
        let ratio_l = u.usage_norm / u.shares_norm / ratio_s;
        let k = if ratio_p == 0.0 || ratio_l == 0.0 || ratio_p.ln() * ratio_l.ln() >= 0.0 {
            1.0
        } else {
            1.0 / (1.0 + (5.0 * ratio_p.ln()).powi(2))
        };
        ratio_p * ratio_l.powf(k) * u.shares_norm
    }

    fn set_classic_factor(&mut self, a: usize) {
        let u = self.usage[a];
        self.usage[a].fs_factor = if u.shares_norm <= 0.0 {
            0.0
        } else {
            (-(u.usage_efctv / u.shares_norm)).exp2()
        };
    }

    /// User association `a`'s normalized and effective usage and factor,
    /// computed now if they are unknown since the last pass
    /// (`priority_p_set_assoc_usage` where `usage_efctv` is `NO_VAL`); a
    /// no-op for an account, a user already computed, and Fair Tree.
    pub fn refresh_user(&mut self, tree: &AssocTree, a: usize) {
        if self.algo != FairShareAlgo::Classic || !self.stale[a] {
            return;
        }
        self.set_norm(tree, a);
        self.set_classic_efctv(tree, a);
        self.set_classic_factor(a);
        self.stale[a] = false;
    }

    /// Every user association's values not computed since the last pass,
    /// one after the other depth first, as sshare's reading computes them.
    pub fn classic_users(&mut self, tree: &AssocTree) {
        for k in 0..self.preorder.len() {
            let a = self.preorder[k];
            self.refresh_user(tree, a);
        }
    }

    /// Fair Tree over the whole tree: every association's `LevelFS` and
    /// every user's factor.
    pub fn fair_tree(&mut self, tree: &AssocTree) {
        let root = tree.root();
        for k in 0..self.preorder.len() {
            let a = self.preorder[k];
            if a == root {
                continue;
            }
            self.set_norm(tree, a);
            let parent = tree.get(a).parent.unwrap_or(root);
            let pu = self.usage[parent].usage_raw;
            let u = if pu == 0.0 {
                0.0
            } else {
                self.usage[a].usage_raw / pu
            };
            self.usage[a].usage_efctv = u;
            let s = self.usage[a].shares_norm;
            self.usage[a].level_fs = match tree.get(a).shares {
                Shares::Parent => f64::INFINITY,
                Shares::Raw(_) if s == 0.0 => 0.0,
                Shares::Raw(_) => s / u,
            };
        }
        let users = tree.user_count().max(1) as f64;
        let mut rank = tree.user_count();
        let mut rnt = rank;
        self.rank_level(
            tree,
            &tree.get(root).children,
            &mut rank,
            &mut rnt,
            false,
            users,
        );
    }

    fn rank_level(
        &mut self,
        tree: &AssocTree,
        siblings: &[usize],
        rank: &mut usize,
        rnt: &mut usize,
        account_tied: bool,
        users: f64,
    ) {
        let mut sorted = siblings.to_vec();
        // Higher LevelFS first; on ties users before accounts; a stable
        // sort keeps the dump's order among the rest.
        sorted.sort_by(|&a, &b| {
            let (x, y) = (self.usage[a].level_fs, self.usage[b].level_fs);
            y.partial_cmp(&x)
                .unwrap_or(core::cmp::Ordering::Equal)
                .then_with(|| {
                    let (ua, ub) = (tree.get(a).user.is_some(), tree.get(b).user.is_some());
                    ub.cmp(&ua)
                })
        });
        let mut prev: Option<f64> = None;
        for (i, &a) in sorted.iter().enumerate() {
            let lf = self.usage[a].level_fs;
            let tied = if i == 0 && account_tied {
                true
            } else {
                prev == Some(lf)
            };
            if tree.get(a).user.is_some() {
                if !tied {
                    *rank = *rnt;
                }
                self.usage[a].fs_factor = *rank as f64 / users;
                *rnt = rnt.saturating_sub(1);
            } else {
                let children = tree.get(a).children.clone();
                self.rank_level(tree, &children, rank, rnt, tied, users);
            }
            prev = Some(lf);
        }
    }

    /// Recomputes the factors after new usage: Fair Tree's whole tree;
    /// nothing for the classic algorithm, whose users are computed when
    /// needed ([`refresh_user`](Self::refresh_user)).
    pub fn recompute(&mut self, tree: &AssocTree) {
        if self.algo == FairShareAlgo::FairTree {
            self.fair_tree(tree);
        }
    }

    /// `sshare -l`'s lines, root first, depth first in dump order. As
    /// slurmctld's reading does, it first computes the users not computed
    /// since the last pass, in that order, and keeps their values.
    pub fn sshare(&mut self, tree: &AssocTree) -> Vec<SshareRow> {
        self.classic_users(tree);
        let root = tree.root();
        self.preorder
            .iter()
            .map(|&a| {
                let node = tree.get(a);
                let u = &self.usage[a];
                let is_user = node.user.is_some();
                let fair_tree = self.algo == FairShareAlgo::FairTree;
                SshareRow {
                    account: node.account.clone(),
                    user: node.user.clone().unwrap_or_default(),
                    depth: self.depth[a],
                    raw_shares: match node.shares {
                        Shares::Raw(s) => Some(s),
                        Shares::Parent => None,
                    },
                    norm_shares: u.shares_norm,
                    raw_usage: u.usage_raw,
                    norm_usage: if a == root {
                        f64::from(u8::from(u.usage_raw > 0.0))
                    } else {
                        u.usage_norm
                    },
                    effectv_usage: if a == root {
                        f64::from(u8::from(u.usage_raw > 0.0))
                    } else {
                        u.usage_efctv
                    },
                    fair_share: is_user.then_some(u.fs_factor),
                    level_fs: (fair_tree && a != root && node.shares != Shares::Parent)
                        .then_some(u.level_fs),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> AssocTree {
        AssocTree::parse(
            "Account|User|Share|ParentName\n\
             root||1|\n\
             a||3|root\n\
             a|u1|1|\n\
             a|u2|1|\n\
             b||1|root\n\
             b|u3|1|\n",
            "t",
        )
        .unwrap()
    }

    /// Worked by hand from fair_tree.c: a has 3/4 of the shares and 90 %
    /// of the usage, b 1/4 and 10 %: LevelFS a = 0.75/0.9 = 0.8333,
    /// b = 0.25/0.1 = 2.5, so b's user ranks first (3/3); inside a, u2
    /// (no usage, LevelFS ∞) ranks 2/3, u1 1/3.
    #[test]
    fn fair_tree_by_hand() {
        let t = tree();
        let mut fs = FairShare::new(&t, FairShareAlgo::FairTree, 0);
        let (u1, u3) = (t.user("u1", None).unwrap(), t.user("u3", None).unwrap());
        let u2 = t.user("u2", None).unwrap();
        fs.add(&t, u1, 900.0);
        fs.add(&t, u3, 100.0);
        fs.fair_tree(&t);
        let a = t.account("a").unwrap();
        assert!((fs.usage(a).level_fs - 0.75 / 0.9).abs() < 1e-12);
        assert_eq!(fs.factor(u3), 1.0);
        assert!((fs.factor(u2) - 2.0 / 3.0).abs() < 1e-12);
        assert!((fs.factor(u1) - 1.0 / 3.0).abs() < 1e-12);
    }

    /// No usage anywhere: every LevelFS is ∞ and everyone ties at the top
    /// rank (accounts are not merged, but the tie carries into them).
    #[test]
    fn fair_tree_all_tied() {
        let t = tree();
        let mut fs = FairShare::new(&t, FairShareAlgo::FairTree, 0);
        fs.fair_tree(&t);
        for u in ["u1", "u2", "u3"] {
            assert_eq!(fs.factor(t.user(u, None).unwrap()), 1.0, "{u}");
        }
    }

    /// The classic formula by hand: a's NormShares 0.75, u1's
    /// 0.75 · 0.5 = 0.375. With u1 holding all 900 of a's 1000 units
    /// (b's u3 100): a's EffectvUsage = its NormUsage 0.9, u1's =
    /// 0.9 + (0.9 − 0.9) · 1/2 = 0.9, FairShare = 2^(−0.9/0.375).
    #[test]
    fn classic_by_hand() {
        let t = tree();
        let mut fs = FairShare::new(&t, FairShareAlgo::Classic, 0);
        let u1 = t.user("u1", None).unwrap();
        let u2 = t.user("u2", None).unwrap();
        assert!((fs.usage(u1).shares_norm - 0.375).abs() < 1e-12);
        fs.add(&t, u1, 900.0);
        fs.add(&t, t.user("u3", None).unwrap(), 100.0);
        fs.classic_accounts(&t);
        fs.classic_users(&t);
        assert!((fs.factor(u1) - (-0.9f64 / 0.375).exp2()).abs() < 1e-12);
        // u2: NormUsage 0, EffectvUsage = 0 + 0.9 · 1/2 = 0.45.
        assert!((fs.usage(u2).usage_efctv - 0.45).abs() < 1e-12);
    }

    /// DEPTH_OBLIVIOUS's staleness by hand (`_set_children_usage_efctv`,
    /// `_get_fairshare_priority`, `assoc_mgr_get_shares`). u1 and u2 (a's
    /// users, NormShares 0.375 each; a's 0.75) were computed while there
    /// was no usage (NormUsage 0). Then u1 has 500, u2 300, u3 200: a's
    /// EffectvUsage is 0.8, Rp = 0.8 / 0.75. u1 is computed first (its
    /// job's priority) and reads u2's stale 0: Rs = 0.5 / 0.75,
    /// Rl = (0.5 / 0.375) / Rs = 2, EffectvUsage = Rp · 2 · 0.375 = 0.8
    /// (with u2's 0.3 it would be 0.5). sshare then computes u2 only,
    /// reading u1's fresh 0.5: Rs = 0.8 / 0.75, Rl = (0.3 / 0.375) / Rs =
    /// 0.75, k = 1 / (1 + (5 ln Rp)²), and leaves u1's 0.8.
    #[test]
    fn depth_oblivious_reads_stale_siblings() {
        let t = tree();
        let mut fs = FairShare::new(&t, FairShareAlgo::Classic, 0).with_depth_oblivious(true);
        let (u1, u2) = (t.user("u1", None).unwrap(), t.user("u2", None).unwrap());
        fs.classic_accounts(&t);
        fs.refresh_user(&t, u1);
        fs.refresh_user(&t, u2);
        assert_eq!(fs.usage(u2).usage_norm, 0.0);
        fs.add(&t, u1, 500.0);
        fs.add(&t, u2, 300.0);
        fs.add(&t, t.user("u3", None).unwrap(), 200.0);
        fs.classic_accounts(&t);
        // Unknown until needed: the pass computed accounts only.
        assert_eq!(fs.usage(u2).usage_norm, 0.0);
        fs.refresh_user(&t, u1);
        assert!((fs.usage(u1).usage_efctv - 0.8).abs() < 1e-12);
        // Computed once per pass.
        fs.refresh_user(&t, u1);
        assert!((fs.usage(u1).usage_efctv - 0.8).abs() < 1e-12);
        let rows = fs.sshare(&t);
        let rp = 0.8 / 0.75;
        let k = 1.0 / (1.0 + (5.0 * f64::ln(rp)).powi(2));
        let want = rp * 0.75f64.powf(k) * 0.375;
        let row = |u: &str| rows.iter().find(|r| r.user == u).unwrap().clone();
        assert!((row("u2").effectv_usage - want).abs() < 1e-12);
        assert!((row("u2").norm_usage - 0.3).abs() < 1e-12);
        assert!((row("u1").effectv_usage - 0.8).abs() < 1e-12);
    }

    /// A user never computed has slurmdbd's initial NormUsage, `NO_VAL`: a
    /// depth-oblivious sibling that reads it finds itself with almost no
    /// share of the siblings' usage (u2 never had a job: u1's Rs is
    /// (0.5 + NO_VAL) / 0.75, its EffectvUsage ≈ 0, its factor ≈ 1).
    #[test]
    fn depth_oblivious_sibling_never_computed() {
        let t = tree();
        let mut fs = FairShare::new(&t, FairShareAlgo::Classic, 0).with_depth_oblivious(true);
        let u1 = t.user("u1", None).unwrap();
        fs.classic_accounts(&t);
        fs.add(&t, u1, 500.0);
        fs.add(&t, t.user("u3", None).unwrap(), 500.0);
        fs.classic_accounts(&t);
        fs.refresh_user(&t, u1);
        // Rp = 0.5 / 0.75 and Rl both below 1: k = 1.
        let rl = (0.5 / 0.375) / ((0.5 + NO_VAL) / 0.75);
        let want = 0.5 / 0.75 * rl * 0.375;
        assert!((fs.usage(u1).usage_efctv - want).abs() < 1e-18);
        assert!(fs.factor(u1) > 0.999_999);
    }

    #[test]
    fn decay_halves_in_about_a_half_life() {
        let t = tree();
        let mut fs = FairShare::new(&t, FairShareAlgo::FairTree, 3600);
        let u1 = t.user("u1", None).unwrap();
        fs.add(&t, u1, 1000.0);
        for _ in 0..12 {
            fs.decay(300.0);
        }
        let left = fs.usage(u1).usage_raw;
        // (1 − 0.693/3600)^3600 ≈ 0.49995: Slurm's linearised factor.
        let want = 1000.0 * (1.0 - 0.693 / 3600.0f64).powf(3600.0);
        assert!(
            (left - want).abs() < 1e-9 && (left - 500.0).abs() < 1.0,
            "{left}"
        );
    }
}
