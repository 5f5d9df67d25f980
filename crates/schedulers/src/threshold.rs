//! Waiting-time thresholds that end indefinite postponement (Mohapatra
//! §3.2, Kim & Yoon §IV.1).

use core::fmt;
use core::str::FromStr;

/// When a waiting job stops letting others pass it.
///
/// Both papers allow a predefined threshold or one computed from the
/// monitored mean queueing delay `d` of the jobs allocated so far and the
/// monitored arrival rate `λ` (arrivals so far divided by the elapsed time):
/// - [`Threshold::Fixed`]: a constant time;
/// - [`Threshold::DynamicLinear`]: `d · λ` (Kim & Yoon §IV.1);
/// - [`Threshold::DynamicSquare`]: `d² · λ` (Mohapatra §3.2: the waiting job
///   "sees" `d · λ` arrivals and tolerates their processing, `d · λ · d`).
///
/// The formulas are used literally, as times. Each policy states how it
/// compares: M-FCFS gives the head priority once its time at the head
/// *reaches* the threshold (≥), lazy scheduling once the oldest job's
/// waiting time *exceeds* it (>). Until some allocated job has waited
/// (no queueing delay measured yet, `d = 0`) a dynamic threshold has
/// nothing to scale and is no threshold at all (infinite, as
/// [`Threshold::Never`]); taking `d · λ = 0` literally would give the
/// blocked job priority at once and turn M-FCFS into FCFS from the start.
///
/// ```
/// use partalloc_schedulers::threshold::Threshold;
/// assert_eq!("3".parse::<Threshold>()?, Threshold::Fixed(3.0));
/// assert_eq!("dynamic".parse::<Threshold>()?.to_string(), "dynamic");
/// assert!("-1".parse::<Threshold>().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Threshold {
    /// No threshold: a job may be passed forever.
    Never,
    /// A predefined waiting time.
    Fixed(f64),
    /// `d · λ`.
    DynamicLinear,
    /// `d² · λ`.
    DynamicSquare,
}

impl Threshold {
    /// The threshold's value now: infinite for [`Threshold::Never`] and for
    /// a dynamic threshold before any queueing delay has been measured.
    #[must_use]
    pub fn value(&self, monitor: &DelayMonitor, now: f64) -> f64 {
        let d = monitor.mean_delay();
        let lambda = monitor.arrival_rate(now);
        match *self {
            Self::Never => f64::INFINITY,
            Self::Fixed(t) => t,
            Self::DynamicLinear | Self::DynamicSquare if !monitor.has_measured_delay() => {
                f64::INFINITY
            }
            Self::DynamicLinear => d * lambda,
            Self::DynamicSquare => d * d * lambda,
        }
    }
}

/// Parses `never`, a non-negative number, `dynamic-linear`,
/// `dynamic-square`, or `dynamic` (= `dynamic-linear`; the lazy policy's
/// registry entry reads `dynamic` as its own formula, `dynamic-square`).
impl FromStr for Threshold {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "never" | "none" => Ok(Self::Never),
            "dynamic" | "dynamic-linear" => Ok(Self::DynamicLinear),
            "dynamic-square" => Ok(Self::DynamicSquare),
            t => match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Self::Fixed(v)),
                _ => Err(format!(
                    "expected never, dynamic, dynamic-linear, dynamic-square or a non-negative time, got {t:?}"
                )),
            },
        }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Never => f.write_str("never"),
            Self::Fixed(t) => write!(f, "{t}"),
            Self::DynamicLinear => f.write_str("dynamic"),
            Self::DynamicSquare => f.write_str("dynamic-square"),
        }
    }
}

/// The running statistics a dynamic threshold is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DelayMonitor {
    arrivals: u64,
    allocated: u64,
    total_delay: f64,
}

impl DelayMonitor {
    /// Records an arrival.
    pub fn arrived(&mut self) {
        self.arrivals += 1;
    }

    /// Records that a job which arrived at `arrival` started at `now`.
    pub fn allocated(&mut self, arrival: f64, now: f64) {
        self.allocated += 1;
        self.total_delay += (now - arrival).max(0.0);
    }

    /// Mean queueing delay of the jobs allocated so far (0 before any).
    #[must_use]
    pub fn mean_delay(&self) -> f64 {
        if self.allocated == 0 {
            0.0
        } else {
            self.total_delay / self.allocated as f64
        }
    }

    /// Whether some allocated job has waited, i.e. a positive queueing
    /// delay has been measured.
    #[must_use]
    pub fn has_measured_delay(&self) -> bool {
        self.total_delay > 0.0
    }

    /// Arrivals per time unit up to `now` (0 at time 0).
    #[must_use]
    pub fn arrival_rate(&self, now: f64) -> f64 {
        if now > 0.0 {
            self.arrivals as f64 / now
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_values() {
        let mut m = DelayMonitor::default();
        for _ in 0..4 {
            m.arrived();
        }
        m.allocated(0.0, 1.0);
        m.allocated(1.0, 4.0);
        // d = (1 + 3) / 2 = 2, λ = 4 / 2 = 2 at t = 2.
        assert_eq!(Threshold::DynamicLinear.value(&m, 2.0), 4.0);
        assert_eq!(Threshold::DynamicSquare.value(&m, 2.0), 8.0);
        assert_eq!(Threshold::Fixed(3.0).value(&m, 2.0), 3.0);
        assert_eq!(Threshold::Never.value(&m, 2.0), f64::INFINITY);
    }

    /// No delay measured yet (nothing allocated, or only jobs that did not
    /// wait): a dynamic threshold is no threshold.
    #[test]
    fn dynamic_threshold_without_measured_delay_is_never() {
        let mut m = DelayMonitor::default();
        for t in [Threshold::DynamicLinear, Threshold::DynamicSquare] {
            assert_eq!(t.value(&m, 0.0), f64::INFINITY);
        }
        m.arrived();
        m.arrived();
        m.allocated(1.0, 1.0);
        assert!(!m.has_measured_delay());
        for t in [Threshold::DynamicLinear, Threshold::DynamicSquare] {
            assert_eq!(t.value(&m, 2.0), f64::INFINITY);
        }
        m.allocated(1.0, 2.0);
        assert!(m.has_measured_delay());
        // d = 0.5, λ = 1.
        assert_eq!(Threshold::DynamicLinear.value(&m, 2.0), 0.5);
        assert_eq!(Threshold::DynamicSquare.value(&m, 2.0), 0.25);
    }
}
