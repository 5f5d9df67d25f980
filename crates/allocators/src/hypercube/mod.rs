//! Subcube allocation strategies for the binary hypercube Q_n.
//!
//! | type | registry name | paper | recognised Q_k (1 ≤ k ≤ n) |
//! |---|---|---|---|
//! | [`Buddy`] | `buddy` | Al-Dhelaan & Bose Alg. 1 | 2^{n−k} |
//! | [`BuddyFreeList`] | `buddy-free-list` | Mohapatra et al. §3.2 (Knuth) | 2^{n−k} |
//! | [`GrayCode`] | `gray-code[g=…]` | Al-Dhelaan & Bose Alg. 2 | 2^{n−k+1} (1 at k = n) |
//! | [`MultipleGrayCode`] | `multiple-gray-code` | Mohapatra et al. §2.1 | C(n,k)·2^{n−k} (all) |
//! | [`Partner`] | `partner` | Al-Dhelaan & Bose Alg. 3 | (n−k+1)·2^{n−k} |
//! | [`PartnerExt`] | `partner-ext[delta=…]` | Al-Dhelaan & Bose Alg. 4 | [k(n−k)+1]·2^{n−k} (δ = ∞) |
//!
//! All of them take [`Request::Subcube`](crate::Request::Subcube) only
//! (others: [`AllocError::Unsupported`](crate::AllocError::Unsupported);
//! Q_k with k > n: [`AllocError::Invalid`](crate::AllocError::Invalid)),
//! work around faulty nodes (Al-Dhelaan & Bose, Example 15), grant a
//! [`Partition::Subcube`](crate::Partition::Subcube), and list what they
//! can recognise with [`Allocator::recognizable`](crate::Allocator::recognizable).
//! At k = 0 every strategy recognises the 2^n single nodes and grants the
//! lowest available node; each module says how that follows from (or is
//! added to) its algorithm.
//!
//! ```
//! use partalloc_allocators::hypercube::Partner;
//! use partalloc_allocators::{Allocator, Request};
//! use partalloc_topology::Hypercube;
//!
//! // Al-Dhelaan & Bose, Example 13 / Fig. 8.
//! let mut p = Partner::new(Hypercube::new(4)?)?;
//! let grants: Vec<String> = [0, 3, 2, 1, 0]
//!     .into_iter()
//!     .map(|k| p.allocate(&Request::subcube(k)).map(|g| g.partition().to_string()))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(grants, ["0000", "X1XX", "X01X", "X001", "1000"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod buddy;
mod buddy_free_list;
mod common;
mod gray_code;
mod multiple_gray_code;
mod partner;
mod partner_ext;
mod tree;

pub use buddy::Buddy;
pub use buddy_free_list::BuddyFreeList;
pub use gray_code::{GrayCode, GrayWindow};
pub use multiple_gray_code::{MAX_MULTIPLE_GRAY_DIM, MultipleGrayCode, chain_codes};
pub use partner::Partner;
pub use partner_ext::{Delta, ParseDeltaError, PartnerExt};

pub(crate) use buddy::ENTRY as BUDDY;
pub(crate) use buddy_free_list::ENTRY as BUDDY_FREE_LIST;
pub(crate) use gray_code::ENTRY as GRAY_CODE;
pub(crate) use multiple_gray_code::ENTRY as MULTIPLE_GRAY_CODE;
pub(crate) use partner::ENTRY as PARTNER;
pub(crate) use partner_ext::ENTRY as PARTNER_EXT;
