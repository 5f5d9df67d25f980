//! What a scheduling policy's registry entry is made of: the entry type
//! (the allocators' generic [`Entry`]), the build error and the `rotate`
//! parameter every policy takes.
//!
//! A leaf module: the policy modules import it to declare their `ENTRY`,
//! and the list of built-in policies ([`registry`](crate::registry))
//! imports the policy modules, never the reverse.

pub use partalloc_allocators::registry::{ANY_TOPOLOGY, Entry, ParamInfo, StrategyInfo};
use partalloc_allocators::registry::{UnknownName, UnsupportedTopology};
use partalloc_allocators::{SpecError, StrategySpec};
use thiserror::Error;

use crate::{RequestMapping, Scheduler};

/// A registered scheduling policy.
pub type PolicyEntry = Entry<dyn Scheduler, PolicyBuildError>;

/// Why a scheduling policy could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PolicyBuildError {
    /// No policy has this name.
    #[error(transparent)]
    Unknown(#[from] UnknownName),
    /// The policy does not run on this family of machine.
    #[error(transparent)]
    UnsupportedTopology(#[from] UnsupportedTopology),
    /// The policy cannot run on this machine.
    #[error("{policy} cannot run on {topology}: {reason}")]
    UnsuitableTopology {
        /// The policy.
        policy: &'static str,
        /// The machine given.
        topology: String,
        /// Why.
        reason: String,
    },
    /// The name or a parameter is malformed or invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The constructor of a policy from outside the workspace (written in
    /// another language, say) failed for a reason of its own.
    #[error("{policy} could not be built: {reason}")]
    Constructor {
        /// The policy.
        policy: String,
        /// Its constructor's error.
        reason: String,
    },
}

/// The `rotate` parameter every built-in policy takes.
pub const ROTATE: ParamInfo = ParamInfo {
    name: "rotate",
    default: "false",
    doc: "whether box jobs accept any orientation: true or false",
};

/// The request mapping given by a spec's `rotate` parameter (default
/// `false`).
///
/// ```
/// use partalloc_schedulers::registry::mapping;
/// assert!(mapping(&"mine[rotate=true]".parse()?)?.rotate);
/// assert!(!mapping(&"mine".parse()?)?.rotate);
/// assert!(mapping(&"mine[rotate=maybe]".parse()?).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`SpecError::InvalidValue`] for a value other than `true` or `false`.
pub fn mapping(spec: &StrategySpec) -> Result<RequestMapping, SpecError> {
    Ok(RequestMapping {
        rotate: spec.parse_or("rotate", false)?,
    })
}

/// A policy's canonical name: `name[params]`, with `rotate=true` appended
/// when the mapping rotates (so that the name builds the same policy).
///
/// ```
/// use partalloc_schedulers::RequestMapping;
/// use partalloc_schedulers::registry::with_rotate;
/// let turn = RequestMapping { rotate: true };
/// assert_eq!(with_rotate("mine", turn, "k=2".into()), "mine[k=2,rotate=true]");
/// assert_eq!(with_rotate("mine", RequestMapping::default(), String::new()), "mine");
/// ```
#[must_use]
pub fn with_rotate(name: &str, mapping: RequestMapping, params: String) -> String {
    let mut items = params;
    if mapping.rotate {
        if !items.is_empty() {
            items.push(',');
        }
        items.push_str("rotate=true");
    }
    if items.is_empty() {
        name.to_owned()
    } else {
        format!("{name}[{items}]")
    }
}
