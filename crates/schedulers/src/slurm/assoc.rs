//! Associations and QOS, read from `sacctmgr show assoc -P` and
//! `sacctmgr show qos -P` dumps (the `|`-separated form with a header).
//!
//! The association tree is `root` → accounts → users. An account's parent
//! is its `ParentName` column (`sacctmgr show assoc
//! format=Account,User,Share,ParentName,…`; printed `Par Name`), or `root`
//! without that column; a user's parent is its account. Children keep the
//! dump's order, which is the order Fair Tree's ties fall in. Only the
//! `cpu` and `node` entries of a TRES limit are modelled.

use std::collections::HashMap;

use super::conf::{PreemptMode, duration};
use super::error::{InputError, InputErrorKind};

/// A TRES count limit on CPUs and nodes (`None`: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Tres {
    /// `cpu=`.
    pub cpu: Option<u64>,
    /// `node=`.
    pub node: Option<u64>,
}

/// The limits of an association or a QOS that the model enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Limits {
    /// `GrpTRES`: CPUs and nodes of all running jobs under it.
    pub grp_tres: Tres,
    /// `GrpJobs`: running jobs under it.
    pub grp_jobs: Option<u64>,
    /// Running jobs per user: an association's `MaxJobs`, a QOS's
    /// `MaxJobsPU`.
    pub max_jobs_per_user: Option<u64>,
    /// `MaxTRESPU` of a QOS: CPUs and nodes per user.
    pub max_tres_per_user: Tres,
    /// `MaxTRES`: CPUs and nodes per job.
    pub max_tres_per_job: Tres,
    /// `MaxWall`, seconds: the longest time limit a job may have.
    pub max_wall: Option<u64>,
    /// `GrpTRESMins`: CPU- and node-minutes of usage under it (decaying
    /// as fair-share usage does); at or over it, no job starts.
    pub grp_tres_mins: Tres,
}

/// An association's `Share`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shares {
    /// A number of shares.
    Raw(u32),
    /// `parent`: the association competes as its parent.
    Parent,
}

/// One association.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Assoc {
    /// Its account.
    pub account: String,
    /// Its user (`None` for an account's own association).
    pub user: Option<String>,
    /// Its parent (`None` for root).
    pub parent: Option<usize>,
    /// Its children, in dump order.
    pub children: Vec<usize>,
    /// `Share`.
    pub shares: Shares,
    /// `Priority` (`None`: the nearest ancestor's; `PriorityWeightAssoc`).
    pub priority: Option<u32>,
    /// Its limits.
    pub limits: Limits,
    /// The line it was read from (0 for root when the dump has none).
    pub line: usize,
}

impl Assoc {
    /// The name sshare prints: the user, else the account.
    #[must_use]
    pub fn name(&self) -> &str {
        self.user.as_deref().unwrap_or(&self.account)
    }
}

/// The association tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssocTree {
    assocs: Vec<Assoc>,
    accounts: HashMap<String, usize>,
    users: HashMap<(String, String), usize>,
    first_of_user: HashMap<String, usize>,
    not_modelled: Vec<String>,
}

/// One QOS.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Qos {
    /// `Name`.
    pub name: String,
    /// `Priority`.
    pub priority: u32,
    /// `Preempt`: the QOS its jobs may preempt (indices into the table).
    pub preempt: Vec<usize>,
    /// `PreemptMode`, when set on the QOS.
    pub preempt_mode: Option<PreemptMode>,
    /// `PreemptExemptTime`, seconds, when set on the QOS.
    pub exempt_time: Option<u64>,
    /// `UsageFactor` (1 by default).
    pub usage_factor: f64,
    /// `Flags=DenyOnLimit`: a job over one of its limits (or its
    /// associations') at submission is refused, not left pending.
    pub deny_on_limit: bool,
    /// Its limits.
    pub limits: Limits,
}

/// The QOS table.
#[derive(Debug, Clone, PartialEq)]
pub struct QosTable {
    qos: Vec<Qos>,
    not_modelled: Vec<String>,
}

fn tres(text: &str) -> Result<Tres, String> {
    let mut t = Tres::default();
    for item in text.split(',').filter(|s| !s.trim().is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not TRES=count"))?;
        let n = v
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("{item:?} has a count that is not a whole number"))?;
        match k.trim().to_ascii_lowercase().as_str() {
            "cpu" => t.cpu = Some(n),
            "node" => t.node = Some(n),
            _ => {}
        }
    }
    Ok(t)
}

/// A `|`-separated dump: its header's columns and its lines.
struct Dump<'a> {
    source: &'a str,
    /// The columns' names as written.
    header: Vec<String>,
    /// The columns' names lowercased, without spaces.
    names: Vec<String>,
    rows: Vec<(usize, Vec<&'a str>)>,
}

impl<'a> Dump<'a> {
    fn read(text: &'a str, source: &'a str) -> Result<Self, InputError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().ok_or_else(|| {
            InputError::at(source, 0, InputErrorKind::MissingColumn("header line"))
        })?;
        let written: Vec<String> = header.split('|').map(|n| n.trim().to_owned()).collect();
        let names: Vec<String> = header
            .split('|')
            .map(|n| n.trim().to_ascii_lowercase().replace(' ', ""))
            .collect();
        let mut rows = Vec::new();
        for (i, l) in lines {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            // sacctmgr -p ends each line with a separator; -P does not.
            let f = if f.len() == names.len() + 1 && f.last() == Some(&"") {
                f[..names.len()].to_vec()
            } else {
                f
            };
            if f.len() != names.len() {
                return Err(InputError::at(
                    source,
                    i + 1,
                    InputErrorKind::FieldCount {
                        found: f.len(),
                        want: names.len(),
                    },
                ));
            }
            rows.push((i + 1, f));
        }
        Ok(Self {
            source,
            header: written,
            names,
            rows,
        })
    }

    /// The header's names (as written) of the columns not in `read` that
    /// hold a value on some line: options the model does not enforce.
    fn unread(&self, read: &[&str]) -> Vec<String> {
        self.names
            .iter()
            .enumerate()
            .filter(|(i, n)| {
                !read.contains(&n.as_str()) && self.rows.iter().any(|(_, f)| !f[*i].is_empty())
            })
            .map(|(i, _)| self.header[i].clone())
            .collect()
    }

    fn col(&self, names: &[&str]) -> Option<usize> {
        names
            .iter()
            .find_map(|n| self.names.iter().position(|c| c == n))
    }

    fn bad(&self, line: usize, key: &str, value: &str, reason: String) -> InputError {
        InputError::at(
            self.source,
            line,
            InputErrorKind::BadValue {
                key: key.to_owned(),
                value: partalloc_topology::echo(value),
                reason,
            },
        )
    }

    fn limits(&self, line: usize, f: &[&str], qos: bool) -> Result<Limits, InputError> {
        let mut l = Limits::default();
        let get = |names: &[&str]| self.col(names).map(|i| f[i]).filter(|v| !v.is_empty());
        let count = |key: &str, v: &str| {
            v.parse::<u64>()
                .map_err(|_| self.bad(line, key, v, "is not a whole number".into()))
        };
        if let Some(v) = get(&["grptres"]) {
            l.grp_tres = tres(v).map_err(|r| self.bad(line, "GrpTRES", v, r))?;
        }
        if let Some(v) = get(&["grptresmins"]) {
            l.grp_tres_mins = tres(v).map_err(|r| self.bad(line, "GrpTRESMins", v, r))?;
        }
        if let Some(v) = get(&["maxtres", "maxtresperjob"]) {
            l.max_tres_per_job = tres(v).map_err(|r| self.bad(line, "MaxTRES", v, r))?;
        }
        if let Some(v) = get(&["grpjobs"]) {
            l.grp_jobs = Some(count("GrpJobs", v)?);
        }
        if let Some(v) = get(&["maxwall", "maxwalldurationperjob"]) {
            l.max_wall = duration(v).map_err(|r| self.bad(line, "MaxWall", v, r))?;
        }
        if qos {
            if let Some(v) = get(&["maxjobspu", "maxjobsperuser"]) {
                l.max_jobs_per_user = Some(count("MaxJobsPU", v)?);
            }
            if let Some(v) = get(&["maxtrespu", "maxtresperuser"]) {
                l.max_tres_per_user = tres(v).map_err(|r| self.bad(line, "MaxTRESPU", v, r))?;
            }
        } else if let Some(v) = get(&["maxjobs"]) {
            l.max_jobs_per_user = Some(count("MaxJobs", v)?);
        }
        Ok(l)
    }
}

impl AssocTree {
    /// A tree of one account `root` holding one user `user`: the tree of a
    /// run without an association dump.
    #[must_use]
    pub fn single(user: &str) -> Self {
        let text = format!("Account|User|Share\nroot||1\nroot|{user}|1\n");
        // The text is well formed by construction; a failure would be a
        // reader bug, reported as an empty tree rather than a panic.
        Self::parse(&text, "built-in").unwrap_or_else(|_| Self {
            assocs: Vec::new(),
            accounts: HashMap::new(),
            users: HashMap::new(),
            first_of_user: HashMap::new(),
            not_modelled: Vec::new(),
        })
    }

    /// Reads a `sacctmgr show assoc -P` dump (columns `Account`, `User`,
    /// `Share` are needed; `ParentName`/`Par Name`, `GrpTRES`, `GrpJobs`,
    /// `MaxJobs`, `MaxWall`, `Partition` are read when present).
    ///
    /// ```
    /// use partalloc_schedulers::slurm::assoc::AssocTree;
    /// let t = AssocTree::parse("Account|User|Share|Par Name\nroot||1|\n\
    ///     physics||40|root\nphysics|ann|1|\nchem||60|root\nchem|bob|1|\n", "a.txt")?;
    /// assert_eq!(t.len(), 5);
    /// let ann = t.user("ann", Some("physics")).unwrap();
    /// assert_eq!(t.get(t.get(ann).parent.unwrap()).account, "physics");
    /// # Ok::<(), partalloc_schedulers::slurm::InputError>(())
    /// ```
    ///
    /// # Errors
    /// A missing column, an account defined twice or with two parents, a
    /// parent or user's account never defined, a cycle of parents, a
    /// per-partition association, an account with `Share=parent`.
    pub fn parse(text: &str, source: &str) -> Result<Self, InputError> {
        let d = Dump::read(text, source)?;
        let need = |names: &[&str], what| {
            d.col(names)
                .ok_or_else(|| InputError::at(source, 1, InputErrorKind::MissingColumn(what)))
        };
        let c_account = need(&["account"], "Account")?;
        let c_user = need(&["user"], "User")?;
        let c_share = need(&["share", "fairshare"], "Share")?;
        let c_parent = d.col(&["parentname", "parname"]);
        let c_part = d.col(&["partition"]);
        let mut t = Self {
            assocs: Vec::new(),
            accounts: HashMap::new(),
            users: HashMap::new(),
            first_of_user: HashMap::new(),
            not_modelled: d.unread(&[
                "cluster",
                "account",
                "user",
                "partition",
                "share",
                "fairshare",
                "parentname",
                "parname",
                "priority",
                "grptres",
                "grptresmins",
                "grpjobs",
                "maxjobs",
                "maxtres",
                "maxtresperjob",
                "maxwall",
                "maxwalldurationperjob",
                "qos",
                "defqos",
                "lft",
                "rgt",
                "id",
            ]),
        };
        let mut parent_names: Vec<Option<(String, usize)>> = Vec::new();
        for (line, f) in &d.rows {
            let line = *line;
            let err = |kind| InputError::at(source, line, kind);
            if let Some(i) = c_part
                && !f[i].is_empty()
            {
                return Err(err(InputErrorKind::Contradiction(format!(
                    "per-partition association (Partition={}) is not modelled; merge it into the user's association",
                    partalloc_topology::echo(f[i])
                ))));
            }
            let account = f[c_account];
            if account.is_empty() {
                return Err(err(InputErrorKind::BadValue {
                    key: "Account".into(),
                    value: String::new(),
                    reason: "is empty".into(),
                }));
            }
            let user = (!f[c_user].is_empty()).then(|| f[c_user].to_owned());
            let shares = match f[c_share] {
                s if s.eq_ignore_ascii_case("parent") => Shares::Parent,
                "" => Shares::Raw(1),
                s => Shares::Raw(s.parse::<u32>().map_err(|_| {
                    d.bad(line, "Share", s, "is not a whole number or parent".into())
                })?),
            };
            if user.is_none() && shares == Shares::Parent {
                return Err(err(InputErrorKind::Contradiction(format!(
                    "account {:?} has Share=parent, which this model supports on users only; give it a number of shares",
                    partalloc_topology::echo(account)
                ))));
            }
            let limits = d.limits(line, f, false)?;
            let priority = match d.col(&["priority"]).map(|i| f[i]).filter(|v| !v.is_empty()) {
                None => None,
                Some(v) => Some(
                    v.parse::<u32>()
                        .map_err(|_| d.bad(line, "Priority", v, "is not a whole number".into()))?,
                ),
            };
            let idx = t.assocs.len();
            match &user {
                None => {
                    if t.accounts.insert(account.to_owned(), idx).is_some() {
                        return Err(err(InputErrorKind::Duplicate {
                            what: "account",
                            name: partalloc_topology::echo(account),
                        }));
                    }
                    let p = c_parent.map(|i| f[i]).filter(|p| !p.is_empty());
                    parent_names.push(if account == "root" {
                        if let Some(p) = p {
                            return Err(err(InputErrorKind::Contradiction(format!(
                                "root has parent {:?}; root is the top of the tree, leave its parent empty",
                                partalloc_topology::echo(p)
                            ))));
                        }
                        None
                    } else {
                        Some((p.unwrap_or("root").to_owned(), line))
                    });
                }
                Some(u) => {
                    if t.users
                        .insert((u.clone(), account.to_owned()), idx)
                        .is_some()
                    {
                        return Err(err(InputErrorKind::Duplicate {
                            what: "association of user",
                            name: format!(
                                "{}/{}",
                                partalloc_topology::echo(u),
                                partalloc_topology::echo(account)
                            ),
                        }));
                    }
                    t.first_of_user.entry(u.clone()).or_insert(idx);
                    parent_names.push(Some((account.to_owned(), line)));
                }
            }
            t.assocs.push(Assoc {
                account: account.to_owned(),
                user,
                parent: None,
                children: Vec::new(),
                shares,
                priority,
                limits,
                line,
            });
        }
        if !t.accounts.contains_key("root") {
            // A dump without root's line: root holds the top accounts.
            let idx = t.assocs.len();
            t.accounts.insert("root".into(), idx);
            t.assocs.push(Assoc {
                account: "root".into(),
                user: None,
                parent: None,
                children: Vec::new(),
                shares: Shares::Raw(1),
                priority: None,
                limits: Limits::default(),
                line: 0,
            });
            parent_names.push(None);
        }
        for (i, p) in parent_names.iter().enumerate() {
            let Some((name, line)) = p else { continue };
            let &pi = t.accounts.get(name).ok_or_else(|| {
                InputError::at(
                    source,
                    *line,
                    InputErrorKind::Unknown {
                        what: "account",
                        name: partalloc_topology::echo(name),
                        hint: "the association dump (a line with that Account and an empty User)",
                    },
                )
            })?;
            t.assocs[i].parent = Some(pi);
            t.assocs[pi].children.push(i);
        }
        // Every account must reach root.
        for i in 0..t.assocs.len() {
            let mut at = i;
            let mut steps = 0;
            while let Some(p) = t.assocs[at].parent {
                at = p;
                steps += 1;
                if steps > t.assocs.len() {
                    return Err(InputError::at(
                        source,
                        t.assocs[i].line,
                        InputErrorKind::Cycle(partalloc_topology::echo(&t.assocs[i].account)),
                    ));
                }
            }
            if t.assocs[at].account != "root" {
                return Err(InputError::at(
                    source,
                    t.assocs[i].line,
                    InputErrorKind::Cycle(partalloc_topology::echo(&t.assocs[i].account)),
                ));
            }
        }
        Ok(t)
    }

    /// The dump's columns that hold values the model does not enforce
    /// (`GrpTRESMins`, `GrpSubmit`, …), as the header names them.
    #[must_use]
    pub fn not_modelled(&self) -> &[String] {
        &self.not_modelled
    }

    /// Number of associations (root included).
    #[must_use]
    pub fn len(&self) -> usize {
        self.assocs.len()
    }

    /// Whether the tree is empty (never, for a tree that was read).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.assocs.is_empty()
    }

    /// Association `i`.
    ///
    /// # Panics
    /// Past the last association, as slice indexing does.
    #[must_use]
    pub fn get(&self, i: usize) -> &Assoc {
        &self.assocs[i]
    }

    /// All associations, in dump order.
    #[must_use]
    pub fn all(&self) -> &[Assoc] {
        &self.assocs
    }

    /// The root association.
    #[must_use]
    pub fn root(&self) -> usize {
        self.accounts.get("root").copied().unwrap_or(0)
    }

    /// The association of `user` in `account`, or in the user's first
    /// account when `account` is `None`.
    #[must_use]
    pub fn user(&self, user: &str, account: Option<&str>) -> Option<usize> {
        match account {
            Some(a) => self.users.get(&(user.to_owned(), a.to_owned())).copied(),
            None => self.first_of_user.get(user).copied(),
        }
    }

    /// The account association named `account`.
    #[must_use]
    pub fn account(&self, account: &str) -> Option<usize> {
        self.accounts.get(account).copied()
    }

    /// `i` and its ancestors up to root.
    pub fn chain(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        core::iter::successors(Some(i), move |&a| self.assocs[a].parent)
    }

    /// Association `i`'s priority: its own `Priority`, else its nearest
    /// ancestor's, else 0.
    #[must_use]
    pub fn priority(&self, i: usize) -> u32 {
        self.chain(i)
            .find_map(|a| self.assocs[a].priority)
            .unwrap_or(0)
    }

    /// The highest `Priority` of any association (the association
    /// factor's divisor, `g_assoc_max_priority`).
    #[must_use]
    pub fn max_priority(&self) -> u32 {
        self.assocs
            .iter()
            .filter_map(|a| a.priority)
            .max()
            .unwrap_or(0)
    }

    /// Number of user associations (Fair Tree's `g_user_assoc_count`).
    #[must_use]
    pub fn user_count(&self) -> usize {
        self.assocs.iter().filter(|a| a.user.is_some()).count()
    }
}

impl QosTable {
    /// A table of one QOS `normal` of priority 0: a run without a QOS dump.
    #[must_use]
    pub fn single() -> Self {
        Self {
            not_modelled: Vec::new(),
            qos: vec![Qos {
                name: "normal".into(),
                priority: 0,
                preempt: Vec::new(),
                preempt_mode: None,
                exempt_time: None,
                usage_factor: 1.0,
                deny_on_limit: false,
                limits: Limits::default(),
            }],
        }
    }

    /// Reads a `sacctmgr show qos -P` dump (`Name` is needed; `Priority`,
    /// `Preempt`, `PreemptMode`, `PreemptExemptTime`, `UsageFactor`,
    /// `GrpTRES`, `GrpJobs`, `MaxWall`, `MaxTRESPU`, `MaxJobsPU` are read
    /// when present).
    ///
    /// ```
    /// use partalloc_schedulers::slurm::assoc::QosTable;
    /// let q = QosTable::parse("Name|Priority|Preempt|MaxJobsPU\nnormal|0||\nhigh|100|normal|2\n", "q.txt")?;
    /// let high = q.find("high").unwrap();
    /// assert_eq!(q.get(high).preempt, [q.find("normal").unwrap()]);
    /// assert_eq!(q.get(high).limits.max_jobs_per_user, Some(2));
    /// assert_eq!(q.max_priority(), 100);
    /// # Ok::<(), partalloc_schedulers::slurm::InputError>(())
    /// ```
    ///
    /// # Errors
    /// A missing `Name` column, a QOS defined twice, a `Preempt` entry
    /// naming an unknown QOS, a value that cannot be read.
    pub fn parse(text: &str, source: &str) -> Result<Self, InputError> {
        let d = Dump::read(text, source)?;
        let c_name = d
            .col(&["name"])
            .ok_or_else(|| InputError::at(source, 1, InputErrorKind::MissingColumn("Name")))?;
        let mut qos = Vec::new();
        let mut preempt_names = Vec::new();
        // Flags other than DenyOnLimit, named as not modelled.
        let mut other_flags: Vec<String> = Vec::new();
        for (line, f) in &d.rows {
            let line = *line;
            let name = f[c_name];
            if qos.iter().any(|q: &Qos| q.name == name) {
                return Err(InputError::at(
                    source,
                    line,
                    InputErrorKind::Duplicate {
                        what: "QOS",
                        name: partalloc_topology::echo(name),
                    },
                ));
            }
            let get = |names: &[&str]| d.col(names).map(|i| f[i]).filter(|v| !v.is_empty());
            let priority = match get(&["priority"]) {
                None => 0,
                Some(v) => v
                    .parse::<u32>()
                    .map_err(|_| d.bad(line, "Priority", v, "is not a whole number".into()))?,
            };
            let preempt_mode = match get(&["preemptmode"]) {
                None => None,
                Some(v) => match v.to_ascii_lowercase().as_str() {
                    "cluster" => None,
                    "off" => Some(PreemptMode::Off),
                    "cancel" => Some(PreemptMode::Cancel),
                    "requeue" => Some(PreemptMode::Requeue),
                    _ => {
                        return Err(d.bad(
                            line,
                            "PreemptMode",
                            v,
                            "is not cluster, off, cancel or requeue".into(),
                        ));
                    }
                },
            };
            let exempt_time = match get(&["preemptexempttime"]) {
                None => None,
                Some(v) => duration(v).map_err(|r| d.bad(line, "PreemptExemptTime", v, r))?,
            };
            let usage_factor = match get(&["usagefactor"]) {
                None => 1.0,
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| d.bad(line, "UsageFactor", v, "is not a number".into()))?,
            };
            let limits = d.limits(line, f, true)?;
            let mut deny_on_limit = false;
            for flag in get(&["flags"])
                .unwrap_or("")
                .split(',')
                .filter(|x| !x.is_empty())
            {
                if flag.eq_ignore_ascii_case("denyonlimit") {
                    deny_on_limit = true;
                } else {
                    let name = format!("Flags {}", partalloc_topology::echo(flag));
                    if !other_flags.contains(&name) {
                        other_flags.push(name);
                    }
                }
            }
            preempt_names.push((line, get(&["preempt"]).unwrap_or("").to_owned()));
            qos.push(Qos {
                name: name.to_owned(),
                priority,
                preempt: Vec::new(),
                preempt_mode,
                exempt_time,
                usage_factor,
                deny_on_limit,
                limits,
            });
        }
        let mut table = Self {
            qos,
            not_modelled: d.unread(&[
                "name",
                "priority",
                "preempt",
                "preemptmode",
                "preemptexempttime",
                "usagefactor",
                "flags",
                "grptres",
                "grptresmins",
                "grpjobs",
                "maxwall",
                "maxwalldurationperjob",
                "maxjobspu",
                "maxjobsperuser",
                "maxtrespu",
                "maxtresperuser",
                "maxtres",
                "maxtresperjob",
                "id",
                "description",
            ]),
        };
        table.not_modelled.extend(other_flags);
        for (i, (line, names)) in preempt_names.iter().enumerate() {
            for n in names.split(',').filter(|s| !s.is_empty()) {
                let n = n.trim_start_matches(['+', '-']);
                let j = table.find(n).ok_or_else(|| {
                    InputError::at(
                        source,
                        *line,
                        InputErrorKind::Unknown {
                            what: "QOS",
                            name: partalloc_topology::echo(n),
                            hint: "the QOS dump",
                        },
                    )
                })?;
                table.qos[i].preempt.push(j);
            }
        }
        if table.qos.is_empty() {
            return Err(InputError::at(
                source,
                0,
                InputErrorKind::MissingColumn("QOS line (the dump lists none)"),
            ));
        }
        Ok(table)
    }

    /// The dump's columns that hold values the model does not enforce
    /// (`GraceTime`, `GrpSubmit`, …), as the header names them, and the
    /// `Flags` other than `DenyOnLimit` (`Flags NoDecay`, …).
    #[must_use]
    pub fn not_modelled(&self) -> &[String] {
        &self.not_modelled
    }

    /// The QOS named `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<usize> {
        self.qos.iter().position(|q| q.name == name)
    }

    /// QOS `i`.
    ///
    /// # Panics
    /// Past the last QOS.
    #[must_use]
    pub fn get(&self, i: usize) -> &Qos {
        &self.qos[i]
    }

    /// Number of QOS.
    #[must_use]
    pub fn len(&self) -> usize {
        self.qos.len()
    }

    /// Whether the table is empty (never, once read).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.qos.is_empty()
    }

    /// The highest priority of any QOS (the QOS factor's divisor,
    /// `g_qos_max_priority` in `src/common/assoc_mgr.c`).
    #[must_use]
    pub fn max_priority(&self) -> u32 {
        self.qos.iter().map(|q| q.priority).max().unwrap_or(0)
    }

    /// The QOS a job uses when it names none: `normal` if it exists, else
    /// the first.
    #[must_use]
    pub fn default_qos(&self) -> usize {
        self.find("normal").unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_trees_are_refused_with_the_line() {
        let cyc = "Account|User|Share|ParentName\nroot||1|\na||1|b\nb||1|a\n";
        let e = AssocTree::parse(cyc, "t").unwrap_err().to_string();
        assert!(e.starts_with("t:3:") && e.contains("own ancestor"), "{e}");
        let unknown = "Account|User|Share\nroot||1\nphys|ann|1\n";
        let e = AssocTree::parse(unknown, "t").unwrap_err().to_string();
        assert!(e.starts_with("t:3:") && e.contains("\"phys\""), "{e}");
        let twice = "Account|User|Share\nroot||1\na||1\na||2\n";
        let e = AssocTree::parse(twice, "t").unwrap_err().to_string();
        assert!(e.starts_with("t:4:") && e.contains("twice"), "{e}");
        let e = QosTable::parse("Name|Preempt\nhigh|nope\n", "q")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("q:2:") && e.contains("nope"), "{e}");
    }

    #[test]
    fn unread_columns_with_values_are_named() {
        let t = AssocTree::parse(
            "Account|User|Share|GrpTRESRunMins|GrpSubmit\nroot||1||\na||1|cpu=3|\n",
            "t",
        )
        .unwrap();
        assert_eq!(t.not_modelled(), ["GrpTRESRunMins"]);
        let q = QosTable::parse(
            "Name|Priority|Flags|GraceTime\nnormal|0||00:00:00\nstrict|0|DenyOnLimit,NoDecay|\n",
            "q",
        )
        .unwrap();
        assert_eq!(q.not_modelled(), ["GraceTime", "Flags NoDecay"]);
        assert!(q.get(q.find("strict").unwrap()).deny_on_limit);
    }

    #[test]
    fn user_counts_and_chains() {
        let t = AssocTree::parse(
            "Account|User|Share|ParentName\nroot||1|\nroot|root|1|\na||3|root\nb||1|a\nb|u|1|\n",
            "t",
        )
        .unwrap();
        assert_eq!(t.user_count(), 2);
        let u = t.user("u", None).unwrap();
        let names: Vec<&str> = t.chain(u).map(|i| t.get(i).name()).collect();
        assert_eq!(names, ["u", "b", "a", "root"]);
    }
}
