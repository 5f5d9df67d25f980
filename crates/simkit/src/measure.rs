//! Which measures a run takes beyond the basic ones.
//!
//! Every run measures the basic quantities of [`Results`]
//! (response, wait, slowdown, utilization, queue, fragmentation inside a
//! grant). The other measures cost work per grant or per state and apply
//! to some machine families only; a run takes the ones its
//! [`SimConfig::measures`](crate::SimConfig::measures) names:
//!
//! | measure | machines | quantities |
//! |---|---|---|
//! | `dispersal` | meshes, tori, k-ary n-cubes, hypercubes, pods | pairwise hop distance (sum and mean), diameter, bounding box, contiguous pieces ([`crate::dispersal`]) |
//! | `capacity` | capacity machines (Kueue, racks) | racks per job, stranded GPUs ([`crate::capacity`]) |
//! | `slurm` | Slurm block and tree machines | base blocks or leaf switches per job (as racks per job), stranded nodes, split segments, jobs at the lowest level ([`crate::slurm`]) |
//! | `pod` | accelerator pods | stranded chips (as stranded nodes), largest placeable slice ([`crate::pod`]) |
//! | `frag` | GPU-sharing clusters | GPU allocation, FGD's fragmentation of the idle GPUs (amount and ratio) ([`crate::gpushare`]) |
//!
//! [`MeasureSet::AUTO`] (the default) takes every measure the machine
//! family has; a set named explicitly takes only those, so a run that asks
//! for `none` pays for nothing beyond the basic quantities. A quantity a run
//! did not measure reads 0 in [`Results`], and
//! [`Results::measured`](crate::Results::measured) says which were taken,
//! so a front end prints "–" rather than a 0 it never measured.
//!
//! ```
//! use partalloc_simkit::measure::{Measure, MeasureSet};
//! use partalloc_topology::Topology;
//! let mesh: Topology = "mesh:8x8".parse()?;
//! assert_eq!(MeasureSet::AUTO.resolve(&mesh)?, MeasureSet::from(Measure::Dispersal));
//! let none: MeasureSet = "none".parse()?;
//! assert_eq!(none.resolve(&mesh)?, MeasureSet::NONE);
//! assert_eq!(
//!     "slurm".parse::<MeasureSet>()?.resolve(&mesh).unwrap_err().to_string(),
//!     "measure `slurm` needs a Slurm block or tree machine, not mesh:8x8 (ask for one of: dispersal, or none)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;

use partalloc_allocators::{Allocator, Grant, Partition};
use partalloc_topology::Topology;
use partalloc_workload::Job;
use thiserror::Error;

use crate::capacity::CapacityObserver;
use crate::dispersal::{DispersalMeter, DispersalObserver, GrantDispersal};
use crate::gpushare::FragMeter;
use crate::observe::{Departure, GrantLog, Observer};
use crate::report::{JobRecord, Results};

/// At most this many measured jobs are logged per run for the `slurm` and
/// `pod` measures (which sample the machine's state over time from the
/// logged grants): memory stays bounded however long the run.
pub const MEASURED_JOBS: usize = 100_000;

/// Most node ids (and boxes) the logged grants hold in all (2^23, 32 MiB):
/// on a machine of millions of nodes granted one by one, a hundred jobs
/// would otherwise hold gigabytes.
pub const MEASURED_IDS: usize = 1 << 23;

/// Sampling times of the time averages of the `slurm` and `pod` measures.
pub const SAMPLES: usize = 200;

/// One measure beyond the basic quantities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Measure {
    /// Hop distances of each grant.
    Dispersal,
    /// Racks per job and stranded GPUs on a capacity machine.
    Capacity,
    /// Locality and stranded nodes on a Slurm block or tree machine.
    Slurm,
    /// Stranded chips and the largest placeable slice on a pod.
    Pod,
    /// GPU allocation and FGD's fragmentation on a GPU-sharing cluster.
    Frag,
}

impl Measure {
    /// Every measure, in the order sets print them.
    pub const ALL: [Measure; 5] = [
        Measure::Dispersal,
        Measure::Capacity,
        Measure::Slurm,
        Measure::Pod,
        Measure::Frag,
    ];

    /// Its name, as `--measure` and Python's `measures=` spell it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Measure::Dispersal => "dispersal",
            Measure::Capacity => "capacity",
            Measure::Slurm => "slurm",
            Measure::Pod => "pod",
            Measure::Frag => "frag",
        }
    }

    /// The machines it needs, for messages.
    fn machines(self) -> &'static str {
        match self {
            Measure::Dispersal => {
                "a machine with hop distances (a mesh, torus, k-ary n-cube, hypercube or pod)"
            }
            Measure::Capacity => "a capacity machine (kueue: or racks:)",
            Measure::Slurm => "a Slurm block or tree machine",
            Measure::Pod => "an accelerator pod",
            Measure::Frag => "a gpu-sharing cluster (gpushare: or openb:)",
        }
    }

    /// Whether `topology` has this measure.
    #[must_use]
    pub fn applies_to(self, topology: &Topology) -> bool {
        match self {
            Measure::Dispersal => DispersalMeter::new(topology).is_defined(),
            Measure::Capacity => topology.as_capacity().is_some(),
            Measure::Slurm => topology.as_slurm().is_some(),
            Measure::Pod => topology.as_pod().is_some(),
            Measure::Frag => topology.as_gpushare().is_some(),
        }
    }

    fn bit(self) -> u8 {
        match self {
            Measure::Dispersal => 1,
            Measure::Capacity => 2,
            Measure::Slurm => 4,
            Measure::Pod => 8,
            Measure::Frag => 16,
        }
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A measure name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
#[error(
    "unknown measure `{name}` (known: dispersal, capacity, slurm, pod, frag, or auto for the machine's own, none for the basic quantities only)"
)]
pub struct UnknownMeasure {
    /// The name asked for, cut for echoing.
    pub name: String,
}

impl FromStr for Measure {
    type Err = UnknownMeasure;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Measure::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| UnknownMeasure {
                name: partalloc_topology::echo(s),
            })
    }
}

/// A measure asked of a machine that does not have it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
#[error("measure `{measure}` needs {needs}, not {machine} (ask for one of: {offered})")]
pub struct MeasureNotApplicable {
    /// The measure.
    pub measure: Measure,
    /// What it needs.
    pub needs: &'static str,
    /// The machine, cut for echoing.
    pub machine: String,
    /// What the machine offers, with `none`.
    pub offered: String,
}

/// A set of measures, or [`AUTO`](Self::AUTO): the machine's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MeasureSet {
    bits: u8,
    auto: bool,
}

impl MeasureSet {
    /// Every measure the machine family has (the default).
    pub const AUTO: MeasureSet = MeasureSet {
        bits: 0,
        auto: true,
    };

    /// The basic quantities only.
    pub const NONE: MeasureSet = MeasureSet {
        bits: 0,
        auto: false,
    };

    /// Whether this is [`AUTO`](Self::AUTO), not yet resolved for a machine.
    #[must_use]
    pub fn is_auto(self) -> bool {
        self.auto
    }

    /// Whether the set holds `m` (false for an unresolved
    /// [`AUTO`](Self::AUTO)).
    #[must_use]
    pub fn contains(self, m: Measure) -> bool {
        !self.auto && self.bits & m.bit() != 0
    }

    /// The set with `m` added (an [`AUTO`](Self::AUTO) set becomes explicit).
    #[must_use]
    pub fn with(self, m: Measure) -> MeasureSet {
        MeasureSet {
            bits: if self.auto { 0 } else { self.bits } | m.bit(),
            auto: false,
        }
    }

    /// The measures in the set, in [`Measure::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Measure> {
        Measure::ALL.into_iter().filter(move |m| self.contains(*m))
    }

    /// Every measure `topology` has.
    #[must_use]
    pub fn offered_by(topology: &Topology) -> MeasureSet {
        Measure::ALL
            .into_iter()
            .filter(|m| m.applies_to(topology))
            .fold(MeasureSet::NONE, MeasureSet::with)
    }

    /// The explicit set a run on `topology` takes: [`AUTO`](Self::AUTO)
    /// becomes the machine's own measures; an explicit set is checked.
    ///
    /// # Errors
    /// [`MeasureNotApplicable`] for a named measure the machine does not
    /// have.
    pub fn resolve(self, topology: &Topology) -> Result<MeasureSet, MeasureNotApplicable> {
        let offered = MeasureSet::offered_by(topology);
        if self.auto {
            return Ok(offered);
        }
        if let Some(m) = self.iter().find(|m| !offered.contains(*m)) {
            let mut names: Vec<&str> = offered.iter().map(Measure::name).collect();
            names.push("none");
            return Err(MeasureNotApplicable {
                measure: m,
                needs: m.machines(),
                machine: partalloc_topology::echo(&topology.to_string()),
                offered: names.join(", or "),
            });
        }
        Ok(self)
    }
}

impl From<Measure> for MeasureSet {
    fn from(m: Measure) -> Self {
        MeasureSet::NONE.with(m)
    }
}

impl fmt::Display for MeasureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.auto {
            return f.write_str("auto");
        }
        if self.bits == 0 {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.iter().map(Measure::name).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for MeasureSet {
    type Err = UnknownMeasure;

    /// `auto`, `none`, or measure names separated by commas
    /// (`dispersal,slurm`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(MeasureSet::AUTO),
            "none" => Ok(MeasureSet::NONE),
            list => list
                .split(',')
                .try_fold(MeasureSet::NONE, |set, name| Ok(set.with(name.parse()?))),
        }
    }
}

/// The measures that give the quantity `name` of
/// [`Results::fields`](crate::Results::fields) (`None` for a basic quantity,
/// measured by every run).
#[must_use]
pub fn measure_of(name: &str) -> Option<&'static [Measure]> {
    Some(match name {
        "mean_distance_sum"
        | "mean_pairwise_distance"
        | "mean_diameter"
        | "mean_span"
        | "mean_pieces" => &[Measure::Dispersal],
        "mean_racks_per_job" => &[Measure::Capacity, Measure::Slurm],
        "mean_stranded_gpus" => &[Measure::Capacity],
        "mean_stranded_nodes" => &[Measure::Slurm, Measure::Pod],
        "mean_split_segments" | "lowest_level_share" => &[Measure::Slurm],
        "mean_largest_placeable" => &[Measure::Pod],
        "mean_gpu_allocation" | "mean_frag_gpus" | "mean_frag_ratio" => &[Measure::Frag],
        _ => return None,
    })
}

/// The observers of the measures a run takes: each built only when its
/// measure is in the run's set, so a measure nobody asked for costs
/// nothing. The run loop shows them every event, lets them fill in their
/// fields of each measured job's record, and asks them for their
/// quantities of [`Results`] at the end.
#[derive(Debug)]
pub(crate) struct MeasureObservers {
    taken: MeasureSet,
    dispersal: Option<DispersalObserver>,
    capacity: Option<CapacityObserver>,
    /// The slurm and pod measures sample the machine's state from a
    /// bounded log of the grants.
    log: Option<GrantLog>,
    /// The frag measure follows the grants on a twin of the strategy.
    frag: Option<FragMeter>,
}

impl MeasureObservers {
    /// The observers of the (resolved) set `taken` on `topology`; with
    /// `dispersal_for_model`, each grant's dispersal is measured for a
    /// run-time model even when the measure was not asked for (it is then
    /// not reported).
    pub(crate) fn new(topology: &Topology, taken: MeasureSet, dispersal_for_model: bool) -> Self {
        Self {
            taken,
            dispersal: (taken.contains(Measure::Dispersal) || dispersal_for_model)
                .then(|| DispersalObserver::new(topology)),
            capacity: taken
                .contains(Measure::Capacity)
                .then(|| CapacityObserver::new(topology)),
            log: (taken.contains(Measure::Slurm) || taken.contains(Measure::Pod))
                .then(|| GrantLog::new(MEASURED_JOBS).with_max_items(MEASURED_IDS)),
            frag: taken.contains(Measure::Frag).then(FragMeter::new),
        }
    }

    /// The dispersal of a grant about to start (for the run-time model;
    /// `None` without the dispersal observer).
    pub(crate) fn dispersal_ahead(&mut self, partition: &Partition) -> Option<GrantDispersal> {
        self.dispersal.as_mut()?.measure_ahead(partition)
    }

    /// Fills in the measured fields of the record of the job leaving
    /// `slot` (before [`Observer::departed`] of that job).
    pub(crate) fn fill_record(&self, slot: u32, record: &mut JobRecord) {
        if let Some(d) = &self.dispersal {
            record.dispersal = d.of_slot(slot);
        }
        if let Some(c) = &self.capacity {
            record.domains = c.domains(slot);
        }
    }

    /// Writes the taken measures' quantities into `results` (after
    /// [`Observer::finish`] at `end`) and says which were measured.
    pub(crate) fn report(&self, topology: &Topology, results: &mut Results, end: f64) {
        results.measured = self.taken;
        if let Some(d) = &self.dispersal
            && self.taken.contains(Measure::Dispersal)
        {
            [
                results.mean_distance_sum,
                results.mean_pairwise_distance,
                results.mean_diameter,
                results.mean_span,
                results.mean_pieces,
            ] = d.means();
        }
        if let Some(c) = &self.capacity {
            results.mean_racks_per_job = c.mean_racks_per_job();
            results.mean_stranded_gpus = c.mean_stranded_gpus();
        }
        if let Some(log) = &self.log {
            results.add_logged(topology, self.taken, log);
        }
        if let Some(frag) = &self.frag {
            results.add_frag(frag.measures(end));
        }
    }
}

impl MeasureObservers {
    /// Every observer, in one.
    #[inline]
    fn all(&mut self) -> impl Observer + '_ {
        (
            &mut self.dispersal,
            (&mut self.capacity, (&mut self.log, &mut self.frag)),
        )
    }
}

impl Observer for MeasureObservers {
    fn begin(&mut self, topology: &Topology, alloc: &dyn Allocator) {
        self.all().begin(topology, alloc);
    }
    #[inline]
    fn arrived(&mut self, job: &Job, now: f64) {
        self.all().arrived(job, now);
    }
    #[inline]
    fn started(&mut self, slot: u32, job: &Job, grant: &Grant, now: f64) {
        self.all().started(slot, job, grant, now);
    }
    #[inline]
    fn departed(&mut self, departure: &Departure<'_>) {
        self.all().departed(departure);
    }
    #[inline]
    fn settled(&mut self, now: f64, alloc: &dyn Allocator, waiting: usize) {
        self.all().settled(now, alloc, waiting);
    }
    fn window_opened(&mut self, now: f64) {
        self.all().window_opened(now);
    }
    fn finish(&mut self, end: f64) {
        self.all().finish(end);
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for MeasureSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for MeasureSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_offers_its_own_measures() -> Result<(), Box<dyn std::error::Error>> {
        let cases = [
            ("hypercube:4", "dispersal"),
            ("torus:4x4", "dispersal"),
            ("racks:2x2x4gpu", "capacity"),
            ("pod:tpu-v4:8x8x8", "dispersal,pod"),
            ("gpushare:4x8gpu", "frag"),
        ];
        for (machine, want) in cases {
            let t: Topology = machine.parse()?;
            assert_eq!(MeasureSet::AUTO.resolve(&t)?.to_string(), want, "{machine}");
        }
        Ok(())
    }

    #[test]
    fn sets_parse_print_and_refuse() -> Result<(), Box<dyn std::error::Error>> {
        let s: MeasureSet = "slurm, dispersal".parse()?;
        assert_eq!(s.to_string(), "dispersal,slurm");
        assert_eq!("auto".parse::<MeasureSet>()?, MeasureSet::AUTO);
        assert!(!MeasureSet::AUTO.contains(Measure::Dispersal));
        let e = "distance".parse::<MeasureSet>().unwrap_err().to_string();
        assert!(e.starts_with("unknown measure `distance`"), "{e}");
        let long = "x".repeat(1000);
        assert!(long.parse::<MeasureSet>().unwrap_err().to_string().len() < 200);
        Ok(())
    }
}
