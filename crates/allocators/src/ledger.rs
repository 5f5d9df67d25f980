//! Bookkeeping of live grants shared by every strategy.

use core::sync::atomic::{AtomicU32, Ordering};

use crate::{GrantId, ReleaseError};

static NEXT_OWNER: AtomicU32 = AtomicU32::new(1);

/// The live grants of one allocator instance, each with strategy-specific
/// data `T` (what the strategy needs to undo the allocation).
///
/// Handles carry the ledger's unique owner number and a per-slot generation,
/// so a foreign or already-released grant is recognised in O(1). Slots are
/// reused, so a steady allocate/release mix does not allocate memory.
///
/// A clone is a new owner: the grants it issues are foreign to the original
/// and the other way round. Both still accept the grants that were live
/// when the clone was made, each releasing its own copy of them.
///
/// ```
/// use partalloc_allocators::{GrantLedger, ReleaseError};
/// let mut ledger = GrantLedger::new();
/// let id = ledger.issue("block 3");
/// assert_eq!(ledger.take(id), Ok("block 3"));
/// assert_eq!(ledger.take(id), Err(ReleaseError::NotLive { id }));
/// let other: GrantLedger<()> = GrantLedger::new();
/// assert!(matches!(other.get(id), Err(ReleaseError::Foreign { .. })));
/// ```
#[derive(Debug)]
pub struct GrantLedger<T> {
    owner: u32,
    slots: Vec<Slot<T>>,
    vacant: Vec<u32>,
    live: usize,
}

#[derive(Debug, Clone)]
struct Slot<T> {
    /// The owner number of the handle issued for this slot: this ledger's,
    /// or, for a grant live when the ledger was cloned, the original's.
    owner: u32,
    generation: u32,
    data: Option<T>,
}

impl<T: Clone> Clone for GrantLedger<T> {
    /// A copy with a fresh owner number. Slots keep the owner of the handle
    /// issued for them, so the grants live now stay releasable in both
    /// ledgers, while grants issued later by either are foreign to the
    /// other: reissuing a slot stamps it with the issuer's own number.
    fn clone(&self) -> Self {
        Self {
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
            slots: self.slots.clone(),
            vacant: self.vacant.clone(),
            live: self.live,
        }
    }
}

impl<T> Default for GrantLedger<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> GrantLedger<T> {
    /// An empty ledger with a fresh owner number.
    #[must_use]
    pub fn new() -> Self {
        Self {
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
            slots: Vec::new(),
            vacant: Vec::new(),
            live: 0,
        }
    }

    /// Records a new grant and returns its handle.
    pub fn issue(&mut self, data: T) -> GrantId {
        self.live += 1;
        if let Some(slot) = self.vacant.pop() {
            let s = &mut self.slots[slot as usize];
            s.owner = self.owner;
            s.generation = s.generation.wrapping_add(1);
            s.data = Some(data);
            GrantId {
                owner: self.owner,
                slot,
                generation: s.generation,
            }
        } else {
            // More than 2^32 simultaneous grants cannot occur: machines
            // have at most 2^31 nodes.
            let slot = self.slots.len() as u32;
            self.slots.push(Slot {
                owner: self.owner,
                generation: 0,
                data: Some(data),
            });
            GrantId {
                owner: self.owner,
                slot,
                generation: 0,
            }
        }
    }

    /// The data of a live grant.
    ///
    /// # Errors
    /// [`ReleaseError::Foreign`] or [`ReleaseError::NotLive`].
    pub fn get(&self, id: GrantId) -> Result<&T, ReleaseError> {
        let slot = self.slots.get(id.slot as usize);
        if id.owner != self.owner && slot.is_none_or(|s| s.owner != id.owner) {
            return Err(ReleaseError::Foreign { id });
        }
        match slot {
            Some(Slot {
                owner,
                generation,
                data: Some(d),
            }) if *owner == id.owner && *generation == id.generation => Ok(d),
            _ => Err(ReleaseError::NotLive { id }),
        }
    }

    /// Removes a live grant and returns its data.
    ///
    /// # Errors
    /// As [`GrantLedger::get`]; the ledger is then unchanged.
    pub fn take(&mut self, id: GrantId) -> Result<T, ReleaseError> {
        self.get(id)?;
        let data = self.slots[id.slot as usize].data.take();
        self.vacant.push(id.slot);
        self.live -= 1;
        data.ok_or(ReleaseError::NotLive { id })
    }

    /// Number of live grants.
    #[must_use]
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no grant is live.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The live grants with their data, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (GrantId, &T)> {
        self.slots.iter().enumerate().filter_map(move |(i, s)| {
            s.data.as_ref().map(|d| {
                (
                    GrantId {
                        owner: s.owner,
                        slot: i as u32,
                        generation: s.generation,
                    },
                    d,
                )
            })
        })
    }
}
