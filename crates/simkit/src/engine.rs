//! The one event loop under every run: a job source, an allocator, the
//! running jobs and their departures, and a clock.
//!
//! [`Stepper`](crate::Stepper) drives it with the caller's decisions and
//! [`Simulation`](crate::Simulation) with a scheduler and measuring
//! observers; both move time only through [`Engine::advance`] and start
//! jobs only through [`Engine::launch`], so they see the same events in
//! the same order.
//!
//! At an event time the engine releases every job departing then (in the
//! order they were started, for equal end times) and then hands over
//! every job arriving then (in source order), each through an
//! [`EventSink`]. The source is pulled one job ahead; a job arriving after
//! the horizon (a run's stop time) ends the source there.
//!
//! A scheduler may end a running job before its departure
//! ([`Engine::preempt`]): its grant goes back to the allocator then, once,
//! and its departure leaves the calendar.
//!
//! A second mode steps as RLScheduler's simulator does, for the
//! benchmark protocol ([`benchmark`](crate::benchmark)): built by
//! [`Engine::one_event_per_step`] and driven by [`Engine::step`], it
//! handles **one event per step** (the next arrival if it comes no later
//! than the next departure, else the departure that ends first, ties in
//! start order) and takes arrivals in source order even when their times
//! go back: such a job arrives at the current time (the clock is clamped,
//! never moved back). The mode costs the batched mode nothing: `step` is a
//! method of its own, and the arrival-order rule is read only when a job
//! arrives before the previous one, which the batched mode refuses.
//!
//! The engine allocates nothing per event once its buffers have grown:
//! running jobs live in a slab with a free list and departures in a binary
//! heap of (time, slot); the next arrival waits beside it.

use partalloc_allocators::{Allocator, Grant};
use partalloc_schedulers::ScheduleError;
use partalloc_workload::Job;

use crate::Calendar;
use crate::run::SimError;

/// A job the engine runs: what it is, what it holds, when it started, and
/// what its driver keeps beside it (`X`: the numerical delay for a
/// simulation, nothing for the stepper).
#[derive(Debug)]
pub(crate) struct Running<X> {
    pub(crate) job: Job,
    pub(crate) grant: Grant,
    pub(crate) start: f64,
    pub(crate) extra: X,
}

/// What a driver does with the events of one event time.
pub(crate) trait EventSink<A, X> {
    /// `run` (in slab slot `slot`) has left at `now`; its grant is already
    /// back with `alloc`.
    ///
    /// # Errors
    /// Whatever the driver refuses.
    fn departed(
        &mut self,
        alloc: &mut A,
        slot: u32,
        run: &Running<X>,
        now: f64,
    ) -> Result<(), SimError>;

    /// `job` has arrived at `now`.
    ///
    /// # Errors
    /// Whatever the driver refuses.
    fn arrived(&mut self, job: Job, now: f64) -> Result<(), SimError>;
}

/// The event loop (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct Engine<I, A, X> {
    alloc: A,
    source: I,
    next_arrival: Option<Job>,
    previous_arrival: f64,
    /// Jobs arriving after this are not pulled (nor any after them).
    horizon: f64,
    /// Whether a pulled job's service time is checked (the stepper's
    /// rule; a simulation's scheduler checks it on submission).
    check_service: bool,
    /// Whether a job arriving before the previous one is taken (it
    /// arrives at the current time; the one-event-per-step mode) rather
    /// than refused.
    clamp_arrivals: bool,
    departures: Calendar<u32>,
    slots: Vec<Option<Running<X>>>,
    vacant: Vec<u32>,
    now: f64,
    busy_nodes: u64,
    busy_area: f64,
    /// A time the driver asked to be woken at (a scheduler's periodic
    /// pass), an event of its own when no job arrives or departs then.
    wakeup: Option<f64>,
}

impl<I: Iterator<Item = Job>, A: Allocator, X> Engine<I, A, X> {
    /// An engine at time 0 with the first job pulled.
    ///
    /// # Errors
    /// The first job has a bad arrival (or, with `check_service`, service)
    /// time.
    pub(crate) fn new(
        alloc: A,
        source: I,
        horizon: f64,
        check_service: bool,
    ) -> Result<Self, SimError> {
        let mut e = Self {
            alloc,
            source,
            next_arrival: None,
            previous_arrival: f64::NEG_INFINITY,
            horizon,
            check_service,
            clamp_arrivals: false,
            departures: Calendar::with_capacity(256),
            slots: Vec::new(),
            vacant: Vec::new(),
            now: 0.0,
            busy_nodes: 0,
            busy_area: 0.0,
            wakeup: None,
        };
        e.pull()?;
        Ok(e)
    }

    /// An engine in the one-event-per-step mode (see the
    /// [module docs](self)), with no horizon: [`step`](Self::step) drives
    /// it, and a job arriving before the previous one arrives at the
    /// current time.
    ///
    /// # Errors
    /// The first job has a bad arrival time.
    pub(crate) fn one_event_per_step(alloc: A, source: I) -> Result<Self, SimError> {
        let mut e = Self::new(alloc, source, f64::INFINITY, false)?;
        e.clamp_arrivals = true;
        Ok(e)
    }

    /// Pulls the next job of the source into `next_arrival` (`None` at the
    /// end of the source or past the horizon).
    #[inline]
    fn pull(&mut self) -> Result<(), SimError> {
        let Some(job) = self.source.next() else {
            self.next_arrival = None;
            return Ok(());
        };
        if !job.arrival.is_finite() || job.arrival < 0.0 {
            return Err(bad(&job, "arrival time", job.arrival));
        }
        if self.check_service && (!job.service.is_finite() || job.service < 0.0) {
            return Err(bad(&job, "service time", job.service));
        }
        if job.arrival < self.previous_arrival && !self.clamp_arrivals {
            return Err(SimError::Unordered {
                id: job.id,
                arrival: job.arrival,
                previous: self.previous_arrival,
            });
        }
        self.previous_arrival = job.arrival;
        self.next_arrival = (job.arrival <= self.horizon).then_some(job);
        Ok(())
    }

    /// The allocator.
    #[inline]
    pub(crate) fn alloc(&self) -> &A {
        &self.alloc
    }

    /// The allocator, to start jobs through (then [`launch`](Self::launch)
    /// them).
    #[inline]
    pub(crate) fn alloc_mut(&mut self) -> &mut A {
        &mut self.alloc
    }

    /// The allocator, handed back.
    pub(crate) fn into_alloc(self) -> A {
        self.alloc
    }

    /// The current time.
    pub(crate) fn now(&self) -> f64 {
        self.now
    }

    /// Nodes granted to running jobs.
    pub(crate) fn busy_nodes(&self) -> u64 {
        self.busy_nodes
    }

    /// Busy node·time from time 0 to now.
    pub(crate) fn busy_area(&self) -> f64 {
        self.busy_area
    }

    /// The next job to arrive.
    pub(crate) fn next_arrival(&self) -> Option<&Job> {
        self.next_arrival.as_ref()
    }

    /// Jobs running now.
    pub(crate) fn running_len(&self) -> usize {
        self.slots.len() - self.vacant.len()
    }

    /// The job running in `slot`.
    #[inline]
    pub(crate) fn running_at(&self, slot: u32) -> Option<&Running<X>> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    /// Whether an event remains: a job to arrive or one running.
    #[inline]
    pub(crate) fn has_events(&self) -> bool {
        self.next_arrival.is_some() || !self.departures.is_empty()
    }

    /// The time of the next event: a departure, an arrival or the
    /// wake-up asked for.
    #[inline]
    pub(crate) fn next_time(&self) -> Option<f64> {
        let arrival = self.next_arrival.as_ref().map(|j| j.arrival);
        let job = match (self.departures.peek_time(), arrival) {
            (Some(d), Some(a)) => Some(d.min(a)),
            (d, a) => d.or(a),
        };
        match (job, self.wakeup) {
            (Some(j), Some(w)) => Some(j.min(w)),
            (j, w) => j.or(w),
        }
    }

    /// Asks for an event at `t` (a scheduler's
    /// [`next_wakeup`](partalloc_schedulers::Scheduler::next_wakeup));
    /// `None`, a time not after now or not finite asks for none.
    #[inline]
    pub(crate) fn set_wakeup(&mut self, t: Option<f64>) {
        self.wakeup = t.filter(|&t| t.is_finite() && t > self.now);
    }

    /// Moves to the next event time and hands its departures, then its
    /// arrivals, to `sink`. Returns `false`, changing nothing, when no
    /// event remains.
    ///
    /// # Errors
    /// As [`advance_to`](Self::advance_to).
    pub(crate) fn advance(&mut self, sink: &mut impl EventSink<A, X>) -> Result<bool, SimError> {
        let Some(t) = self.next_time() else {
            return Ok(false);
        };
        self.advance_to(t, sink)?;
        Ok(true)
    }

    /// Moves to `t`, the time of the next event ([`next_time`](Self::next_time)),
    /// and hands its departures, then its arrivals, to `sink`.
    ///
    /// # Errors
    /// The allocator refuses a release, a pulled job is out of order or
    /// has bad times, or `sink` fails.
    #[inline]
    pub(crate) fn advance_to(
        &mut self,
        t: f64,
        sink: &mut impl EventSink<A, X>,
    ) -> Result<(), SimError> {
        self.busy_area += self.busy_nodes as f64 * (t - self.now);
        self.now = t;
        if self.wakeup.is_some_and(|w| w <= t) {
            self.wakeup = None;
        }
        while self.departures.peek_time() == Some(t) {
            let Some((_, slot)) = self.departures.pop() else {
                break;
            };
            let Some(r) = self.slots.get_mut(slot as usize).and_then(Option::take) else {
                continue;
            };
            self.vacant.push(slot);
            self.alloc.release(&r.grant)?;
            self.busy_nodes -= r.grant.granted_nodes();
            sink.departed(&mut self.alloc, slot, &r, t)?;
        }
        while let Some(job) = self.next_arrival.take_if(|j| j.arrival == t) {
            sink.arrived(job, t)?;
            self.pull()?;
        }
        Ok(())
    }

    /// Handles the one next event (the one-event-per-step mode, see the
    /// [module docs](self)): the next arrival if it arrives no later than
    /// the next departure, else the first departure (ties in start
    /// order), handed to `sink` at the event's time or, for a job
    /// arriving before the clock, at the current time. Wake-ups are no
    /// events here. Returns `false`, changing nothing, when no event
    /// remains.
    ///
    /// # Errors
    /// The allocator refuses a release, a pulled job has a bad arrival
    /// time, or `sink` fails.
    pub(crate) fn step(&mut self, sink: &mut impl EventSink<A, X>) -> Result<bool, SimError> {
        let departure = self.departures.peek_time();
        if let Some(job) = self
            .next_arrival
            .take_if(|j| departure.is_none_or(|d| j.arrival <= d))
        {
            let t = self.now.max(job.arrival);
            self.move_clock(t);
            sink.arrived(job, t)?;
            self.pull()?;
            return Ok(true);
        }
        let Some((t, slot)) = self.departures.pop() else {
            return Ok(false);
        };
        let t = self.now.max(t);
        self.move_clock(t);
        // Released and handed over in place, then dropped.
        let Some(entry) = self.slots.get_mut(slot as usize) else {
            return Ok(true);
        };
        if let Some(r) = entry.as_ref() {
            self.alloc.release(&r.grant)?;
            self.busy_nodes -= r.grant.granted_nodes();
            sink.departed(&mut self.alloc, slot, r, t)?;
            *entry = None;
            self.vacant.push(slot);
        }
        Ok(true)
    }

    /// Moves the clock to `t` (not before now), counting the busy
    /// node·time up to it.
    fn move_clock(&mut self, t: f64) {
        self.busy_area += self.busy_nodes as f64 * (t - self.now);
        self.now = t;
    }

    /// Ends running job `id` now, before its departure (a scheduler
    /// preempted it): releases its grant to the allocator once, drops its
    /// departure and hands back its slot and what it ran. `None` when no
    /// running job has that id.
    ///
    /// # Errors
    /// The allocator refuses the release.
    pub(crate) fn preempt(&mut self, id: u64) -> Result<Option<(u32, Running<X>)>, SimError> {
        let Some(slot) = self
            .slots
            .iter()
            .position(|r| r.as_ref().is_some_and(|r| r.job.id == id))
        else {
            return Ok(None);
        };
        let Some(r) = self.slots[slot].take() else {
            return Ok(None);
        };
        let slot = slot as u32;
        self.departures.remove_where(|&s| s == slot);
        self.vacant.push(slot);
        self.alloc.release(&r.grant)?;
        self.busy_nodes -= r.grant.granted_nodes();
        Ok(Some((slot, r)))
    }

    /// Runs `job` on `grant` (just granted by the allocator) from now until
    /// now + its service time; returns its slot.
    ///
    /// # Errors
    /// A departure time the calendar refuses.
    #[inline]
    pub(crate) fn launch(&mut self, job: Job, grant: Grant, extra: X) -> Result<u32, SimError> {
        self.busy_nodes += grant.granted_nodes();
        let depart = self.now + job.service;
        let run = Running {
            job,
            grant,
            start: self.now,
            extra,
        };
        let slot = match self.vacant.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(run);
                i
            }
            None => {
                self.slots.push(Some(run));
                (self.slots.len() - 1) as u32
            }
        };
        self.departures.schedule(depart, slot)?;
        Ok(slot)
    }
}

fn bad(job: &Job, what: &'static str, value: f64) -> SimError {
    ScheduleError::BadJob {
        job: job.id,
        what,
        value,
    }
    .into()
}
