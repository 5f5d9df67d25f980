//! The model's parameters: the published sets, their dependence on the
//! machine's size, their checks and the closed forms derived from them.

use super::LublinClass;
use super::error::LublinError;
use super::gamma::{exp_moment, gamma_cdf, gamma_pq};

/// The default cap on ln(run time): run times above e^12 s (about 45
/// hours) are drawn again (`TOO_MUCH_TIME` in `m_lublin99.c`).
pub const DEFAULT_MAX_LOG_RUN: f64 = 12.0;
/// The default cap on ln(gap): gaps above e^13 s (about 5 days) are drawn
/// again (`TOO_MUCH_ARRIVE_TIME` in `m_lublin99.c`).
pub const DEFAULT_MAX_LOG_GAP: f64 = 13.0;
/// The largest cap accepted for `maxlogrun` and `maxloggap`: e^40 s is
/// far beyond any trace, and the closed forms stay finite below it.
pub const MAX_LOG_CAP: f64 = 40.0;
/// A capped Gamma law must put at least this much of its mass below its
/// cap, so that drawing by rejection takes at most 1,000 tries on average.
pub const MIN_ACCEPTANCE: f64 = 1e-3;

/// Half hours in a day: the daily cycle's resolution.
pub(crate) const BUCKETS: usize = 48;
/// Seconds in a half hour.
pub(crate) const BUCKET_SECONDS: f64 = 1800.0;
/// The first half hour of the model's day, in the numbering of the daily
/// cycle's Gamma law (`CYCLIC_DAY_START` in `m_lublin99.c`): half hours
/// i = 11..=58 are weighted and half hour i falls at clock half hour
/// (i − 1) mod 48 (so i = 11 is 05:00–05:30).
pub(crate) const DAY_START: u32 = 11;

/// The parameter names of the text form, in their canonical order.
pub(crate) const PARAM_NAMES: &str = "serial, pow2, ulow, umed, uhi, uprob, a1, b1, a2, b2, pa, pb, aarr, barr, anum, bnum, arar, maxlogrun, maxloggap";

/// What values a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Domain {
    /// In \[0, 1\].
    Probability,
    /// Finite and > 0.
    Positive,
    /// Finite (the size bounds: their order is checked with the machine).
    Finite,
    /// Finite and > 0, at most [`MAX_LOG_CAP`].
    Cap,
}

/// One parameter of a class: its text name, its domain and its field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Param {
    pub(crate) name: &'static str,
    pub(crate) domain: Domain,
    get: fn(&LublinParams) -> f64,
    set: fn(&mut LublinParams, f64),
}

impl Param {
    pub(crate) fn get(&self, p: &LublinParams) -> f64 {
        (self.get)(p)
    }

    pub(crate) fn set(&self, p: &mut LublinParams, v: f64) {
        (self.set)(p, v);
    }

    /// Whether `value` is in the parameter's domain.
    pub(crate) fn check(&self, value: f64) -> Result<(), LublinError> {
        let name = self.name;
        match self.domain {
            Domain::Probability if !(0.0..=1.0).contains(&value) => {
                Err(LublinError::Probability { name, value })
            }
            Domain::Positive | Domain::Cap if !(value.is_finite() && value > 0.0) => {
                Err(LublinError::NotPositive { name, value })
            }
            Domain::Cap if value > MAX_LOG_CAP => Err(LublinError::CapTooLarge {
                name,
                value,
                max: MAX_LOG_CAP,
            }),
            Domain::Finite if !value.is_finite() => Err(LublinError::NotFinite { name, value }),
            _ => Ok(()),
        }
    }
}

macro_rules! params {
    ($($field:ident $name:literal $domain:ident),* $(,)?) => {
        /// Every parameter, in the text form's canonical order.
        pub(crate) const PARAMS: [Param; 19] = [$(Param {
            name: $name,
            domain: Domain::$domain,
            get: |p| p.$field,
            set: |p, v| p.$field = v,
        }),*];
    };
}

params!(
    serial "serial" Probability,
    pow2 "pow2" Probability,
    ulow "ulow" Finite,
    umed "umed" Finite,
    uhi "uhi" Finite,
    uprob "uprob" Probability,
    a1 "a1" Positive,
    b1 "b1" Positive,
    a2 "a2" Positive,
    b2 "b2" Positive,
    pa "pa" Finite,
    pb "pb" Finite,
    aarr "aarr" Positive,
    barr "barr" Positive,
    anum "anum" Positive,
    bnum "bnum" Positive,
    arar "arar" Positive,
    max_log_run "maxlogrun" Cap,
    max_log_gap "maxloggap" Cap,
);

/// Index of the parameter named `name` in [`PARAMS`].
pub(crate) fn param_index(name: &str) -> Option<usize> {
    PARAMS.iter().position(|p| p.name == name)
}

/// Index of `umed`, `uhi` and `ulow` in [`PARAMS`]: the values that
/// follow the machine's size unless given.
const ULOW: usize = 2;
const UMED: usize = 3;
const UHI: usize = 4;

/// Values given explicitly, by index in [`PARAMS`]; the others come from
/// the published set.
pub(crate) type Overrides = [Option<f64>; PARAMS.len()];

/// The parameters of one class of jobs (batch, interactive, or the whole
/// typeless workload), for one machine size.
///
/// Sizes: a job is serial with probability `serial`; otherwise
/// x = log2(size) is drawn from the two-stage uniform — U(`ulow`, `umed`)
/// with probability `uprob`, else U(`umed`, `uhi`) — and, with overall
/// probability `pow2` (the same uniform that decided "not serial"
/// decides: u ≤ serial + pow2), rounded to a whole number, so that the
/// size 2^x is a power of two; size = round(2^x).
///
/// Run times: ln(run time) is hyper-Gamma — Gamma(shape `a1`, scale `b1`)
/// with probability p, else Gamma(`a2`, `b2`) — where p = `pa`·size + `pb`
/// clamped to \[0, 1\] (larger jobs run longer when `pa` < 0); values above
/// `max_log_run` are drawn again.
///
/// Arrivals: ln(gap) is Gamma(`aarr`·`arar`, `barr`), values above
/// `max_log_gap` drawn again, and gaps are measured on a clock that runs
/// at each half hour's weight of the daily cycle, the Gamma(`anum`,
/// `bnum`) probability of that half hour (see [`day_shares`](Self::day_shares)).
///
/// Build one with [`preset`](Self::preset) and change fields as needed;
/// [`LublinModel`](super::LublinModel) checks them.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LublinParams {
    /// Probability that a job is serial (one node).
    pub serial: f64,
    /// Probability that a job's size is a power of two by construction
    /// (a fraction of all jobs; serial + pow2 ≤ 1).
    pub pow2: f64,
    /// Lower bound of log2(size) of parallel jobs.
    pub ulow: f64,
    /// The boundary between the two uniform stages of log2(size).
    pub umed: f64,
    /// Upper bound of log2(size); at most log2 of the machine's nodes.
    pub uhi: f64,
    /// Probability of the first stage, U(ulow, umed).
    pub uprob: f64,
    /// Shape of the first Gamma of ln(run time).
    pub a1: f64,
    /// Scale of the first Gamma of ln(run time).
    pub b1: f64,
    /// Shape of the second Gamma of ln(run time).
    pub a2: f64,
    /// Scale of the second Gamma of ln(run time).
    pub b2: f64,
    /// Slope of the first Gamma's probability in the job's size.
    pub pa: f64,
    /// Intercept of the first Gamma's probability.
    pub pb: f64,
    /// Shape of the Gamma of ln(gap) at rush hours (multiplied by `arar`).
    pub aarr: f64,
    /// Scale of the Gamma of ln(gap).
    pub barr: f64,
    /// Shape of the daily cycle's Gamma over the half hours of the day.
    pub anum: f64,
    /// Scale of the daily cycle's Gamma, in half hours.
    pub bnum: f64,
    /// Ratio turning the rush-hour shape `aarr` into the whole day's.
    pub arar: f64,
    /// Cap on ln(run time in seconds); larger draws are repeated.
    pub max_log_run: f64,
    /// Cap on ln(gap in seconds); larger draws are repeated.
    pub max_log_gap: f64,
}

/// log2 of the machine size `m_lublin99.c` is written for (128 nodes).
const REFERENCE_LOG2: f64 = 7.0;

/// The published parameters of `class` on the C program's 128 nodes
/// (`m_lublin99.c`, Parallel Workloads Archive); the size bounds shift
/// with log2(nodes) in [`resolve`].
const fn published(class: LublinClass) -> LublinParams {
    match class {
        LublinClass::Batch => LublinParams {
            serial: 0.2927,
            pow2: 0.6686,
            ulow: 1.2,
            umed: 5.0,
            uhi: 7.0,
            uprob: 0.875,
            a1: 6.57,
            b1: 0.823,
            a2: 639.1,
            b2: 0.0156,
            pa: -0.003,
            pb: 0.6986,
            aarr: 6.0415,
            barr: 0.8531,
            anum: 6.1271,
            bnum: 5.2740,
            arar: 1.0519,
            max_log_run: DEFAULT_MAX_LOG_RUN,
            max_log_gap: DEFAULT_MAX_LOG_GAP,
        },
        LublinClass::Interactive => LublinParams {
            serial: 0.1541,
            pow2: 0.625,
            ulow: 1.0,
            umed: 3.0,
            uhi: 5.5,
            uprob: 0.705,
            a1: 3.8351,
            b1: 0.6605,
            a2: 7.073,
            b2: 0.6856,
            pa: -0.0118,
            pb: 0.9156,
            aarr: 6.5510,
            barr: 0.6621,
            anum: 8.9186,
            bnum: 3.6680,
            arar: 0.9797,
            max_log_run: DEFAULT_MAX_LOG_RUN,
            max_log_gap: DEFAULT_MAX_LOG_GAP,
        },
        LublinClass::Whole => LublinParams {
            serial: 0.244,
            pow2: 0.576,
            ulow: 0.8,
            umed: 4.5,
            uhi: 7.0,
            uprob: 0.86,
            a1: 4.2,
            b1: 0.94,
            a2: 312.0,
            b2: 0.03,
            pa: -0.0054,
            pb: 0.78,
            aarr: 10.2303,
            barr: 0.4871,
            anum: 8.1737,
            bnum: 3.9631,
            arar: 1.0225,
            max_log_run: DEFAULT_MAX_LOG_RUN,
            max_log_gap: DEFAULT_MAX_LOG_GAP,
        },
    }
}

/// log2 of a machine's nodes (0 for an empty machine, which is refused
/// elsewhere).
pub(crate) fn log2_nodes(nodes: u32) -> f64 {
    f64::from(nodes.max(1)).log2()
}

/// The parameters of `class` on a machine of `nodes` nodes, taking the
/// values in `given` where present and the published ones elsewhere.
///
/// The published size bounds follow the machine: uhi = log2(nodes) −
/// (7 − uhi₁₂₈) clamped to \[0, log2(nodes)\], umed = uhi − (uhi₁₂₈ −
/// umed₁₂₈) but not below min(ulow, uhi), and ulow = min(ulow₁₂₈, umed), so
/// that on 128 nodes they are the C program's and on small machines they
/// stay in order. Given values are kept as they are (and checked later).
pub(crate) fn resolve(class: LublinClass, nodes: u32, given: &Overrides) -> LublinParams {
    let at_128 = published(class);
    let mut p = at_128;
    for (param, value) in PARAMS.iter().zip(given) {
        if let Some(v) = value {
            param.set(&mut p, *v);
        }
    }
    let log2 = log2_nodes(nodes);
    if given[UHI].is_none() {
        p.uhi = (log2 - (REFERENCE_LOG2 - at_128.uhi)).clamp(0.0, log2);
    }
    if given[UMED].is_none() {
        let floor = p.ulow.min(p.uhi);
        p.umed = (p.uhi - (at_128.uhi - at_128.umed)).max(floor).min(p.uhi);
    }
    if given[ULOW].is_none() {
        p.ulow = at_128.ulow.min(p.umed);
    }
    p
}

impl LublinParams {
    /// The published parameters of `class` (`m_lublin99.c`, Lublin &
    /// Feitelson 2003) on a machine of `nodes` nodes: on 128 nodes exactly
    /// the C program's; on other sizes the size bounds `umed` and `uhi`
    /// move with log2(nodes) (see the module documentation).
    ///
    /// ```
    /// use partalloc_workload::lublin::{LublinClass, LublinParams};
    ///
    /// let p = LublinParams::preset(LublinClass::Batch, 128);
    /// assert_eq!((p.ulow, p.umed, p.uhi), (1.2, 5.0, 7.0));
    /// let p = LublinParams::preset(LublinClass::Batch, 1024);
    /// assert_eq!((p.ulow, p.umed, p.uhi), (1.2, 8.0, 10.0));
    /// ```
    #[must_use]
    pub fn preset(class: LublinClass, nodes: u32) -> Self {
        resolve(class, nodes, &[None; PARAMS.len()])
    }

    /// The checks that do not depend on the machine: every parameter in
    /// its domain, serial + pow2 ≤ 1, caps reachable, a daily cycle with
    /// weight somewhere.
    pub(crate) fn check_laws(&self) -> Result<(), LublinError> {
        for param in &PARAMS {
            param.check(param.get(self))?;
        }
        let sum = self.serial + self.pow2;
        if sum > 1.0 + 4.0 * f64::EPSILON {
            return Err(LublinError::FractionsAboveOne { sum });
        }
        // Each factor is finite, their product need not be: an infinite
        // shape would make the capped draw loop for ever.
        if !self.gap_shape().is_finite() {
            return Err(LublinError::NotFinite {
                name: "aarr·arar (the gap gamma's shape)",
                value: self.gap_shape(),
            });
        }
        let laws = [
            (
                "first run-time gamma (a1, b1)",
                self.a1,
                self.b1,
                self.max_log_run,
            ),
            (
                "second run-time gamma (a2, b2)",
                self.a2,
                self.b2,
                self.max_log_run,
            ),
            (
                "gap gamma (aarr·arar, barr)",
                self.gap_shape(),
                self.barr,
                self.max_log_gap,
            ),
        ];
        for (law, a, b, cap) in laws {
            let mass = gamma_cdf(a, b, cap);
            if mass.is_nan() || mass < MIN_ACCEPTANCE {
                return Err(LublinError::CapUnreachable { law, mass, cap });
            }
        }
        day_weights(self.anum, self.bnum).map(drop)
    }

    /// The checks of the size bounds on a machine of `nodes` nodes.
    pub(crate) fn check_sizes(&self, nodes: u32) -> Result<(), LublinError> {
        if nodes == 0 {
            return Err(LublinError::NoNodes);
        }
        let (ulow, umed, uhi) = (self.ulow, self.umed, self.uhi);
        // NaN fails every comparison, so it lands here too.
        if !(0.0 <= ulow && ulow <= umed && umed <= uhi) {
            return Err(LublinError::SizeOrder { ulow, umed, uhi });
        }
        let max = log2_nodes(nodes);
        if uhi > max + 1e-12 {
            return Err(LublinError::SizeAboveMachine { uhi, nodes, max });
        }
        Ok(())
    }

    /// Checks every parameter for a machine of `nodes` nodes.
    ///
    /// # Errors
    /// The first parameter refused: a probability outside \[0, 1\]
    /// ([`LublinError::Probability`]), serial + pow2 above 1, a shape or
    /// scale that is not a finite number above 0, size bounds out of order
    /// or above log2(nodes), a cap above [`MAX_LOG_CAP`] or one its law
    /// hardly reaches ([`LublinError::CapUnreachable`]), a daily cycle
    /// without weight ([`LublinError::EmptyDay`]), or no nodes.
    pub fn check(&self, nodes: u32) -> Result<(), LublinError> {
        self.check_laws()?;
        self.check_sizes(nodes)
    }

    /// The shape of the Gamma law of ln(gap): `aarr`·`arar`.
    #[must_use]
    pub fn gap_shape(&self) -> f64 {
        self.aarr * self.arar
    }

    /// The probability p that a job of `size` nodes draws ln(run time)
    /// from the first Gamma: `pa`·size + `pb` clamped to \[0, 1\].
    #[must_use]
    pub fn first_gamma_probability(&self, size: u32) -> f64 {
        self.pa.mul_add(f64::from(size), self.pb).clamp(0.0, 1.0)
    }

    /// E\[run time | size\] in seconds, in closed form: with X the
    /// hyper-Gamma ln(run time) conditioned on X ≤ `max_log_run`,
    /// E\[e^X\] = Σᵢ pᵢ·E\[e^{Xᵢ}; Xᵢ ≤ c\] / Σᵢ pᵢ·P(Xᵢ ≤ c).
    ///
    /// ```
    /// use partalloc_workload::lublin::{LublinClass, LublinParams};
    ///
    /// let p = LublinParams::preset(LublinClass::Batch, 128);
    /// // Larger batch jobs run longer (pa < 0).
    /// assert!(p.mean_run_time(64) > p.mean_run_time(1));
    /// ```
    #[must_use]
    pub fn mean_run_time(&self, size: u32) -> f64 {
        self.run_time_moment(size, 1.0)
    }

    /// E\[run time^s | size\] (s = 1, 2 for the mean and the variance).
    pub(crate) fn run_time_moment(&self, size: u32, s: f64) -> f64 {
        let p = self.first_gamma_probability(size);
        let c = self.max_log_run;
        let part = |s| {
            p * exp_moment(self.a1, self.b1, s, c) + (1.0 - p) * exp_moment(self.a2, self.b2, s, c)
        };
        part(s) / part(0.0)
    }

    /// The mean gap between arrivals of this class in seconds, which is
    /// also the long-run mean in real time (the daily cycle's clock runs
    /// 24 hours a day on average): E\[e^G | G ≤ `max_log_gap`\] for
    /// G ~ Gamma(`aarr`·`arar`, `barr`).
    #[must_use]
    pub fn mean_gap(&self) -> f64 {
        self.gap_moment(1.0)
    }

    /// E\[gap^s\] (s = 1, 2).
    pub(crate) fn gap_moment(&self, s: f64) -> f64 {
        let (a, b, c) = (self.gap_shape(), self.barr, self.max_log_gap);
        exp_moment(a, b, s, c) / exp_moment(a, b, 0.0, c)
    }

    /// The long-run share of this class's arrivals in each half hour of
    /// the day, from 00:00–00:30 to 23:30–24:00 (they add up to 1): half
    /// hour i = 11..=58 of the daily cycle weighs P(i − ½ < Y ≤ i + ½)
    /// for Y ~ Gamma(`anum`, `bnum`) and falls at clock half hour
    /// (i − 1) mod 48, as in `m_lublin99.c`.
    ///
    /// ```
    /// use partalloc_workload::lublin::{LublinClass, LublinParams};
    ///
    /// let shares = LublinParams::preset(LublinClass::Batch, 128).day_shares()?;
    /// assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    /// // The busiest half hour is early in the afternoon, the quietest at
    /// // dawn, when the model's day wraps around.
    /// let order = |a: &usize, b: &usize| shares[*a].total_cmp(&shares[*b]);
    /// let busiest = (0..48).max_by(order).unwrap();
    /// let quietest = (0..48).min_by(order).unwrap();
    /// assert_eq!((busiest, quietest), (26, 9)); // 13:00–13:30, 04:30–05:00
    /// assert!(shares[busiest] > 6.0 * shares[quietest]);
    /// # Ok::<(), partalloc_workload::lublin::LublinError>(())
    /// ```
    ///
    /// # Errors
    /// [`LublinError::EmptyDay`] if no half hour has weight.
    pub fn day_shares(&self) -> Result<[f64; BUCKETS], LublinError> {
        let mut w = day_weights(self.anum, self.bnum)?;
        for x in &mut w {
            *x /= BUCKETS as f64;
        }
        Ok(w)
    }
}

/// The daily cycle's weight of each clock half hour, normalized to mean 1.
pub(crate) fn day_weights(anum: f64, bnum: f64) -> Result<[f64; BUCKETS], LublinError> {
    let mut w = [0.0; BUCKETS];
    let mut total = 0.0;
    for i in DAY_START..DAY_START + BUCKETS as u32 {
        let (lo, hi) = ((f64::from(i) - 0.5) / bnum, (f64::from(i) + 0.5) / bnum);
        let (p_lo, q_lo) = gamma_pq(anum, lo);
        let (p_hi, q_hi) = gamma_pq(anum, hi);
        // Subtract the smaller tails: the difference keeps its precision.
        let mass = if lo >= anum { q_lo - q_hi } else { p_hi - p_lo };
        let mass = if mass.is_finite() { mass.max(0.0) } else { 0.0 };
        w[(i as usize - 1) % BUCKETS] = mass;
        total += mass;
    }
    if !(total.is_finite() && total > 0.0) {
        return Err(LublinError::EmptyDay { anum, bnum });
    }
    let mean = total / BUCKETS as f64;
    for x in &mut w {
        *x /= mean;
    }
    Ok(w)
}
