//! Why a Lublin–Feitelson model or its text form was refused.

use thiserror::Error;

use super::LublinClass;

/// A number as a message prints it: whole up to 10^9, else in scientific
/// notation (`1e308`, not 309 digits).
struct Short(f64);

impl std::fmt::Display for Short {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        if v.is_finite() && v != 0.0 && (v.abs() >= 1e9 || v.abs() < 1e-6) {
            write!(f, "{v:e}")
        } else {
            write!(f, "{v}")
        }
    }
}

/// Why a Lublin–Feitelson model could not be built or its text form read.
/// Nothing is built on error.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LublinError {
    /// A machine of no nodes.
    #[error("the Lublin model needs a machine of at least 1 node (got nodes=0)")]
    NoNodes,
    /// The model's nodes exceed the machine it is built for.
    #[error(
        "the model's nodes={nodes} exceed the machine's {machine} nodes; give nodes={machine} or less, or leave nodes out to use the machine's"
    )]
    LargerThanMachine {
        /// The model's nodes.
        nodes: u32,
        /// The machine's nodes.
        machine: u64,
    },
    /// A probability outside \[0, 1\].
    #[error("{name} must be a probability between 0 and 1 (got {})", Short(*.value))]
    Probability {
        /// The parameter.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// The serial and power-of-two fractions add up to more than 1.
    #[error(
        "serial + pow2 = {} exceeds 1 (both are fractions of all jobs); lower serial or pow2", Short(*.sum)
    )]
    FractionsAboveOne {
        /// serial + pow2.
        sum: f64,
    },
    /// A shape, scale or ratio that must be a finite number above 0.
    #[error("{name} must be a finite number greater than 0 (got {})", Short(*.value))]
    NotPositive {
        /// The parameter.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// A coefficient that must be a finite number.
    #[error("{name} must be a finite number (got {})", Short(*.value))]
    NotFinite {
        /// The parameter.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// The two-stage uniform's bounds (log2 of sizes) out of order.
    #[error(
        "the size bounds need 0 <= ulow <= umed <= uhi (log2 of sizes; got ulow={}, umed={}, uhi={})", Short(*.ulow), Short(*.umed), Short(*.uhi)
    )]
    SizeOrder {
        /// Lower bound of the first stage.
        ulow: f64,
        /// The boundary between the stages.
        umed: f64,
        /// Upper bound of the second stage.
        uhi: f64,
    },
    /// Sizes that would exceed the machine.
    #[error(
        "uhi={} is above log2 of the machine's {nodes} nodes ({max:.4}): jobs would be larger than the machine; lower uhi", Short(*.uhi)
    )]
    SizeAboveMachine {
        /// The refused upper bound.
        uhi: f64,
        /// The machine's nodes.
        nodes: u32,
        /// log2(nodes).
        max: f64,
    },
    /// A cap on the logarithm of run times or gaps above the largest
    /// accepted.
    #[error("{name}={} is above {max}, the largest accepted (e^{max} seconds)", Short(*.value))]
    CapTooLarge {
        /// The parameter.
        name: &'static str,
        /// The refused value.
        value: f64,
        /// The largest accepted value.
        max: f64,
    },
    /// A capped Gamma law with almost no mass below its cap: drawing by
    /// rejection would hardly ever end.
    #[error(
        "the {law} puts only {mass:.3e} of its mass below the cap {}: drawing would almost never end; lower its shape or scale, or raise the cap", Short(*.cap)
    )]
    CapUnreachable {
        /// Which law, e.g. `second run-time gamma (a2, b2)`.
        law: &'static str,
        /// Its probability below the cap.
        mass: f64,
        /// The cap (a logarithm of seconds).
        cap: f64,
    },
    /// A daily cycle with no weight on any half hour of the day.
    #[error(
        "the daily cycle gamma(anum={}, bnum={}) puts no weight on the day's half hours 11 to 58; choose anum·bnum between about 11 and 58", Short(*.anum), Short(*.bnum)
    )]
    EmptyDay {
        /// Shape of the daily cycle.
        anum: f64,
        /// Scale of the daily cycle.
        bnum: f64,
    },
    /// A start hour outside \[0, 24).
    #[error("start={} must be an hour of the day in [0, 24)", Short(*.value))]
    StartHour {
        /// The refused hour.
        value: f64,
    },
    /// One class's parameters refused, in a model of two classes.
    #[error("{class} jobs: {source}")]
    Class {
        /// The class whose parameters were refused.
        class: LublinClass,
        /// Why.
        source: Box<LublinError>,
    },
    /// A text form that does not read as the model.
    #[error(
        "Lublin model {text:?}: {reason}; use lublin[:mixed|batch|interactive|whole][:key=value…]"
    )]
    Syntax {
        /// The text given (shortened).
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A parameter name the model does not have.
    #[error(
        "Lublin model {text:?}: unknown parameter {key:?}; the parameters are nodes, start, {}",
        super::params::PARAM_NAMES
    )]
    UnknownParameter {
        /// The text given (shortened).
        text: String,
        /// The unknown key.
        key: String,
    },
    /// A parameter given twice.
    #[error("Lublin model {text:?}: {key} is given twice")]
    Duplicate {
        /// The text given (shortened).
        text: String,
        /// The repeated key.
        key: String,
    },
    /// A value that is not a number.
    #[error("Lublin model {text:?}: {key}={value:?} is not a number")]
    NotANumber {
        /// The text given (shortened).
        text: String,
        /// The key.
        key: String,
        /// The value given (shortened).
        value: String,
    },
    /// A parameter without a class prefix in the mixed model, or with
    /// the prefix of a class the model does not draw.
    #[error("Lublin model {text:?}: {reason}")]
    WrongClass {
        /// The text given (shortened).
        text: String,
        /// What is wrong and what to write instead.
        reason: String,
    },
    /// A text form whose values are refused.
    #[error("Lublin model {text:?}: {source}")]
    Invalid {
        /// The text given (shortened).
        text: String,
        /// Why the values were refused.
        source: Box<LublinError>,
    },
}
