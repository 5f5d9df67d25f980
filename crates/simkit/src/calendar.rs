//! The event calendar: a binary heap of pending events keyed on
//! (time, insertion sequence).
//!
//! Events at the same simulated time come out in the order they were
//! scheduled (docs/baselines.md#seeds-and-event-order: "ties in the event queue break by insertion
//! sequence"), so a run is deterministic whatever the payload type. Times
//! are `f64` simulated time units; scheduling a NaN, an infinite time or a
//! time before the calendar's clock is refused with a [`CalendarError`] and
//! leaves the calendar unchanged.
//!
//! The heap stores the payload inline next to its key, so scheduling an
//! event does not allocate beyond the heap's own (amortised) growth; reuse
//! a calendar with [`Calendar::clear`] to keep its capacity.
//!
//! ```
//! use partalloc_simkit::Calendar;
//!
//! #[derive(Debug, PartialEq)]
//! enum Ev { Arrival(u32), Departure(u32) }
//!
//! let mut cal = Calendar::new();
//! cal.schedule(2.0, Ev::Departure(1))?;
//! cal.schedule(1.0, Ev::Arrival(2))?;
//! cal.schedule(2.0, Ev::Arrival(3))?; // same time: after Departure(1)
//! assert_eq!(cal.pop(), Some((1.0, Ev::Arrival(2))));
//! assert_eq!(cal.now(), 1.0);
//! assert!(cal.schedule(0.5, Ev::Arrival(4)).is_err()); // in the past
//! assert_eq!(cal.pop(), Some((2.0, Ev::Departure(1))));
//! assert_eq!(cal.pop(), Some((2.0, Ev::Arrival(3))));
//! assert_eq!(cal.pop(), None);
//! # Ok::<(), partalloc_simkit::CalendarError>(())
//! ```

use core::cmp::Ordering;
use std::collections::BinaryHeap;

use thiserror::Error;

/// Why an event was refused. The calendar is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
#[non_exhaustive]
pub enum CalendarError {
    /// The time is NaN or infinite.
    #[error("event time {time} is not a finite number; schedule events at finite times")]
    NotFinite {
        /// The refused time.
        time: f64,
    },
    /// The time is before the calendar's clock.
    #[error(
        "event time {time} is before the current time {now}; events cannot be scheduled in the past"
    )]
    InPast {
        /// The refused time.
        time: f64,
        /// The calendar's clock when the event was refused.
        now: f64,
    },
    /// A relative delay was negative, NaN or infinite.
    #[error("event delay {delay} must be a finite number at least 0")]
    BadDelay {
        /// The refused delay.
        delay: f64,
    },
    /// The calendar has handed out every insertion sequence number (2^64
    /// events); it cannot order further events deterministically.
    #[error("the calendar has scheduled 2^64 events and cannot order more; start a new calendar")]
    SequenceExhausted,
}

/// Maps a finite `f64` to a `u64` whose unsigned order is the numeric
/// order (sign-magnitude to offset binary), with −0.0 folded onto +0.0.
#[inline]
fn time_key(time: f64) -> u64 {
    // `+ 0.0` turns −0.0 into +0.0, so the two compare equal as they do as
    // numbers and ties between them break by sequence.
    let bits = (time + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Inverse of [`time_key`].
#[inline]
fn key_time(key: u64) -> f64 {
    if key >> 63 == 1 {
        f64::from_bits(key ^ (1 << 63))
    } else {
        f64::from_bits(!key)
    }
}

/// A pending event: its ordering key (the time is recovered from it, which
/// keeps heap entries small) and payload.
#[derive(Debug, Clone)]
struct Entry<E> {
    key: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.seq == other.seq
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap and we want the earliest
        // (time, sequence) on top.
        (other.key, other.seq).cmp(&(self.key, self.seq))
    }
}

/// A future-event list: pop returns the earliest event, ties by insertion
/// order. Generic over the event payload `E`.
#[derive(Debug, Clone)]
pub struct Calendar<E> {
    heap: BinaryHeap<Entry<E>>,
    now: f64,
    next_seq: u64,
}

impl<E> Default for Calendar<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Calendar<E> {
    /// An empty calendar whose clock reads 0.
    #[must_use]
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty calendar with room for `capacity` pending events before it
    /// grows.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(capacity),
            now: 0.0,
            next_seq: 0,
        }
    }

    /// An empty calendar whose clock reads `start`.
    ///
    /// # Errors
    /// [`CalendarError::NotFinite`] if `start` is NaN or infinite.
    pub fn starting_at(start: f64) -> Result<Self, CalendarError> {
        if !start.is_finite() {
            return Err(CalendarError::NotFinite { time: start });
        }
        let mut c = Self::new();
        c.now = start + 0.0;
        Ok(c)
    }

    /// The clock: the time of the last popped event (or the start time).
    #[must_use]
    #[inline]
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Number of pending events.
    #[must_use]
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events scheduled since creation or the last
    /// [`clear`](Self::clear).
    #[must_use]
    pub fn scheduled_count(&self) -> u64 {
        self.next_seq
    }

    /// Schedules `event` at absolute time `time` (≥ [`now`](Self::now)).
    /// Returns the event's insertion sequence number.
    ///
    /// # Errors
    /// [`CalendarError::NotFinite`] for NaN or infinite times,
    /// [`CalendarError::InPast`] for times before the clock; the calendar
    /// is unchanged.
    #[inline]
    pub fn schedule(&mut self, time: f64, event: E) -> Result<u64, CalendarError> {
        if !time.is_finite() {
            return Err(CalendarError::NotFinite { time });
        }
        if time < self.now {
            return Err(CalendarError::InPast {
                time,
                now: self.now,
            });
        }
        let seq = self.next_seq;
        self.next_seq = seq.checked_add(1).ok_or(CalendarError::SequenceExhausted)?;
        self.heap.push(Entry {
            key: time_key(time),
            seq,
            event,
        });
        Ok(seq)
    }

    /// Schedules `event` `delay` time units after [`now`](Self::now).
    ///
    /// # Errors
    /// [`CalendarError::BadDelay`] for a negative, NaN or infinite delay;
    /// [`CalendarError::NotFinite`] if `now + delay` overflows to infinity.
    #[inline]
    pub fn schedule_in(&mut self, delay: f64, event: E) -> Result<u64, CalendarError> {
        if !(delay.is_finite() && delay >= 0.0) {
            return Err(CalendarError::BadDelay { delay });
        }
        self.schedule(self.now + delay, event)
    }

    /// The time of the earliest pending event, without removing it.
    #[must_use]
    #[inline]
    pub fn peek_time(&self) -> Option<f64> {
        self.heap.peek().map(|e| key_time(e.key))
    }

    /// The earliest pending event, without removing it.
    #[must_use]
    pub fn peek(&self) -> Option<(f64, &E)> {
        self.heap.peek().map(|e| (key_time(e.key), &e.event))
    }

    /// Removes the earliest pending event (ties: first scheduled first) and
    /// advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(f64, E)> {
        let e = self.heap.pop()?;
        let time = key_time(e.key);
        self.now = time;
        Some((time, e.event))
    }

    /// Removes the earliest pending event only if its time is at most
    /// `until`; otherwise leaves the calendar unchanged.
    #[inline]
    pub fn pop_until(&mut self, until: f64) -> Option<(f64, E)> {
        match self.heap.peek() {
            Some(e) if key_time(e.key) <= until => self.pop(),
            _ => None,
        }
    }

    /// Removes every pending event `drop` returns `true` for (the clock
    /// stays where it is); returns how many. Linear in the pending events.
    ///
    /// ```
    /// use partalloc_simkit::Calendar;
    /// let mut c = Calendar::new();
    /// c.schedule(5.0, 'a')?;
    /// c.schedule(2.0, 'b')?;
    /// assert_eq!(c.remove_where(|&e| e == 'b'), 1);
    /// assert_eq!((c.now(), c.pop()), (0.0, Some((5.0, 'a'))));
    /// # Ok::<(), partalloc_simkit::CalendarError>(())
    /// ```
    pub fn remove_where(&mut self, mut drop: impl FnMut(&E) -> bool) -> usize {
        let before = self.heap.len();
        self.heap.retain(|e| !drop(&e.event));
        before - self.heap.len()
    }

    /// Drops every pending event and resets the clock to 0 and the sequence
    /// counter, keeping the heap's capacity.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.now = 0.0;
        self.next_seq = 0;
    }

    /// Iterates over the pending events in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (f64, &E)> + '_ {
        self.heap.iter().map(|e| (key_time(e.key), &e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_bad_times_and_stays_unchanged() {
        let mut c = Calendar::new();
        c.schedule(1.0, 'a').unwrap();
        assert_eq!(
            c.schedule(f64::NAN, 'x').unwrap_err().to_string(),
            "event time NaN is not a finite number; schedule events at finite times"
        );
        assert!(matches!(
            c.schedule(f64::INFINITY, 'x'),
            Err(CalendarError::NotFinite { .. })
        ));
        assert!(matches!(
            c.schedule(f64::NEG_INFINITY, 'x'),
            Err(CalendarError::NotFinite { .. })
        ));
        assert_eq!(c.pop(), Some((1.0, 'a')));
        assert_eq!(
            c.schedule(0.5, 'x'),
            Err(CalendarError::InPast {
                time: 0.5,
                now: 1.0
            })
        );
        assert!(matches!(
            c.schedule_in(-1.0, 'x'),
            Err(CalendarError::BadDelay { .. })
        ));
        assert!(matches!(
            c.schedule_in(f64::NAN, 'x'),
            Err(CalendarError::BadDelay { .. })
        ));
        assert!(c.is_empty());
        assert_eq!(c.scheduled_count(), 1);
        // An event exactly at the clock is allowed.
        c.schedule(1.0, 'b').unwrap();
        c.schedule_in(0.0, 'c').unwrap();
        assert_eq!(c.pop(), Some((1.0, 'b')));
        assert_eq!(c.pop(), Some((1.0, 'c')));
    }

    #[test]
    fn negative_start_and_signed_zero() {
        let mut c = Calendar::starting_at(-5.0).unwrap();
        c.schedule(0.0, 1).unwrap();
        c.schedule(-0.0, 2).unwrap();
        c.schedule(-4.5, 3).unwrap();
        c.schedule(-1e-300, 4).unwrap();
        assert_eq!(c.pop(), Some((-4.5, 3)));
        assert_eq!(c.pop(), Some((-1e-300, 4)));
        // 0.0 and -0.0 are the same time: insertion order.
        assert_eq!(c.pop().map(|e| e.1), Some(1));
        assert_eq!(c.pop().map(|e| e.1), Some(2));
        assert!(Calendar::<u8>::starting_at(f64::NAN).is_err());
        let mut late = Calendar::starting_at(f64::MAX).unwrap();
        assert!(matches!(
            late.schedule_in(f64::MAX, 0),
            Err(CalendarError::NotFinite { .. })
        ));
    }

    #[test]
    fn time_key_is_monotone() {
        let xs = [
            f64::MIN,
            -1e10,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            1.0 + f64::EPSILON,
            1e300,
            f64::MAX,
        ];
        for w in xs.windows(2) {
            assert!(time_key(w[0]) <= time_key(w[1]), "{} vs {}", w[0], w[1]);
        }
        assert_eq!(time_key(-0.0), time_key(0.0));
        for &x in &xs {
            assert_eq!(key_time(time_key(x)).to_bits(), (x + 0.0).to_bits());
        }
    }

    #[test]
    fn pop_until_and_clear() {
        let mut c = Calendar::with_capacity(4);
        c.schedule(3.0, 'c').unwrap();
        c.schedule(1.0, 'a').unwrap();
        assert_eq!(c.peek(), Some((1.0, &'a')));
        assert_eq!(c.pop_until(0.5), None);
        assert_eq!(c.len(), 2);
        assert_eq!(c.pop_until(2.0), Some((1.0, 'a')));
        assert_eq!(c.pop_until(2.0), None);
        assert_eq!(c.peek_time(), Some(3.0));
        assert_eq!(c.iter().count(), 1);
        c.clear();
        assert!(c.is_empty());
        assert_eq!(c.now(), 0.0);
        assert_eq!(c.scheduled_count(), 0);
    }

    proptest! {
        /// Against a brute-force oracle: a stable sort of (time, index).
        #[test]
        fn pops_in_time_then_insertion_order(
            times in proptest::collection::vec(0u8..16, 0..200)
        ) {
            let mut c = Calendar::new();
            for (i, &t) in times.iter().enumerate() {
                c.schedule(f64::from(t) / 4.0, i).unwrap();
            }
            let mut want: Vec<(f64, usize)> = times
                .iter()
                .enumerate()
                .map(|(i, &t)| (f64::from(t) / 4.0, i))
                .collect();
            want.sort_by(|a, b| a.0.total_cmp(&b.0)); // stable: keeps index order
            let mut got = Vec::new();
            while let Some(e) = c.pop() {
                got.push(e);
            }
            prop_assert_eq!(got, want);
        }

        /// Interleaved scheduling relative to the clock never goes back in
        /// time.
        #[test]
        fn clock_is_monotone(delays in proptest::collection::vec(0.0f64..10.0, 1..100)) {
            let mut c = Calendar::new();
            c.schedule(0.0, 0usize).unwrap();
            let mut last = f64::NEG_INFINITY;
            let mut i = 0;
            while let Some((t, _)) = c.pop() {
                prop_assert!(t >= last);
                prop_assert_eq!(t, c.now());
                last = t;
                if let Some(&d) = delays.get(i) {
                    c.schedule_in(d, i).unwrap();
                    c.schedule_in(d / 2.0, i).unwrap();
                }
                i += 1;
            }
        }
    }
}
