//! The MPI backend's watchdog (feature `mpi`): no collective waits for
//! ever, and no rank waits for one that has left.
//!
//! - **Waits.** Every collective of the backend is non-blocking (the
//!   agreement's all-gather included) and waited by [`Watchdog::wait`]:
//!   `MPI_Test` in a loop (yielding the CPU between tests for the first
//!   [`SPIN`], which is as fast as `MPI_Wait`; then a test every [`NAP`]),
//!   bounded by the timeout of the last [`Watch`].
//! - **Notices.** Small point-to-point messages on a duplicate of the
//!   world (so that they never match a program's own messages), read by
//!   every waiting rank between its tests: `DEPART` (a rank left
//!   [`run`](crate::run), after how many collectives, at which step),
//!   `QUERY` (a rank timed out: where is everyone?) and `REPLY` (here I
//!   am: in collective number `n`, this operation, this step).
//! - **A rank that left.** Collectives are numbered alike on every rank
//!   (every rank makes the same backend calls in the same order), so a
//!   rank waiting in collective `c` that hears that rank `r` left after
//!   `n < c` collectives knows `r` will never come, and ends the job at
//!   once. (`n >= c`: `r` took part, the collective completes.)
//! - **A timeout.** The rank that timed out asks every other rank where it
//!   is (`QUERY`) and gives them [`GRACE`] to answer: a rank waiting in a
//!   collective answers from its wait loop within a millisecond or so; a
//!   rank that does not answer is not inside a collective (sleeping,
//!   stopped, computing, or stuck in a call of its own): it did not
//!   arrive. A rank that answers with another collective's number is
//!   named with it. Then one message, and `MPI_Abort`.
//! - **Blocking calls.** In-place buckets stay blocking (`MPI_Allreduce`
//!   with `MPI_IN_PLACE`: issue 26's figures); an alarm thread ends the
//!   job when one outlives the timeout. It cannot ask the other ranks
//!   (MPI is funneled: this thread is inside MPI), so its message names
//!   the operation and the step, not the ranks; every rank had arrived
//!   at the operation's agreement just before, so one stopped inside it.

use std::cell::RefCell;
use std::os::raw::c_int;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mpi::ffi;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{AsRaw, Communicator, Equivalence, Source};
use pytree_std::Error;

use crate::backend::Watch;

/// A rank left `run`.
const DEPART: c_int = 1;
/// A rank timed out and asks where the others are.
const QUERY: c_int = 2;
/// The answer to a `QUERY`.
const REPLY: c_int = 3;

/// How long a wait tests without sleeping (yielding the CPU between
/// tests): longer than a packed bucket's transfer, so that a step is as
/// fast as with `MPI_Wait` (non-blocking collectives progress only inside
/// MPI calls).
pub(crate) const SPIN: Duration = Duration::from_millis(100);
/// The sleep between two tests after [`SPIN`]: a rank waiting for a
/// straggler takes about 1 % of a core.
pub(crate) const NAP: Duration = Duration::from_millis(1);
/// How long a rank that timed out waits for the others' answers.
pub(crate) const GRACE: Duration = Duration::from_secs(1);
/// Notices longer than this are cut (the operation's name).
const MAX_NOTICE: usize = 256;

/// Where one rank is, as a notice says it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Whereabouts {
    /// The collectives it entered (while inside one: that one's number).
    count: u64,
    step: Option<u64>,
    /// It left `run` (and is waiting for the others to leave).
    leaving: bool,
    op: String,
}

impl Whereabouts {
    fn encode(&self) -> Box<[u8]> {
        let mut b = Vec::with_capacity(32 + self.op.len());
        b.extend_from_slice(&self.count.to_le_bytes());
        b.extend_from_slice(&self.step.unwrap_or(u64::MAX).to_le_bytes());
        b.push(u8::from(self.leaving));
        let mut op = self.op.as_bytes();
        let room = MAX_NOTICE - b.len();
        if op.len() > room {
            let mut cut = room;
            while !self.op.is_char_boundary(cut) {
                cut -= 1;
            }
            op = &op[..cut];
        }
        b.extend_from_slice(op);
        b.into_boxed_slice()
    }

    fn decode(b: &[u8]) -> Option<Whereabouts> {
        let count = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        let step = u64::from_le_bytes(b.get(8..16)?.try_into().ok()?);
        Some(Whereabouts {
            count,
            step: (step != u64::MAX).then_some(step),
            leaving: *b.get(16)? != 0,
            op: String::from_utf8_lossy(b.get(17..)?).into_owned(),
        })
    }

    /// "all_reduce_mean (step 3, collective #7)".
    fn describe(&self) -> String {
        let step = self.step.map(|s| format!("step {s}, ")).unwrap_or_default();
        format!("{} ({step}collective #{})", self.op, self.count)
    }

    /// "at step 3 after 7 collectives" / "after 7 collectives".
    fn left(&self) -> String {
        let step = self
            .step
            .map(|s| format!("at step {s} "))
            .unwrap_or_default();
        format!("{step}after {} collectives", self.count)
    }
}

/// The watchdog of one `Mpi`.
pub(crate) struct Watchdog {
    rank: usize,
    size: usize,
    /// A duplicate of the world, for the notices only.
    notices: SimpleCommunicator,
    state: RefCell<State>,
    /// [`leave`](Watchdog::leave) ran.
    left: std::cell::Cell<bool>,
}

struct State {
    watch: Watch,
    /// The backend collectives entered so far.
    count: u64,
    /// What each rank said when it left.
    departed: Vec<Option<Whereabouts>>,
    /// Each rank's answer to this rank's `QUERY`.
    replies: Vec<Option<Whereabouts>>,
    /// Notices in flight, with their buffers (boxed: they stay where they
    /// are while the vector grows).
    sends: Vec<(ffi::MPI_Request, Box<[u8]>)>,
}

impl Watchdog {
    /// The watchdog of `world` (collective: duplicates the communicator).
    pub(crate) fn new(world: &SimpleCommunicator, timeout: Option<Duration>) -> Watchdog {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        Watchdog {
            rank,
            size,
            notices: world.duplicate(),
            state: RefCell::new(State {
                watch: Watch::new("the first collective", timeout, None),
                count: 0,
                departed: vec![None; size],
                replies: vec![None; size],
                sends: Vec::new(),
            }),
            left: std::cell::Cell::new(false),
        }
    }

    /// Whether this rank left already ([`leave`](Watchdog::leave)).
    pub(crate) fn has_left(&self) -> bool {
        self.left.get()
    }

    pub(crate) fn watch(&self, watch: &Watch) {
        self.state.borrow_mut().watch.clone_from(watch);
    }

    /// A backend collective begins: the next number.
    pub(crate) fn enter(&self) {
        self.state.borrow_mut().count += 1;
    }

    /// Waits for `request` (of the collective entered last), ending the
    /// job when the timeout passes or when a rank that will not come has
    /// left.
    pub(crate) fn wait(&self, request: &mut ffi::MPI_Request) {
        let start = Instant::now();
        let mut tests = 0u32;
        loop {
            let mut done: c_int = 0;
            // SAFETY: `request` was returned by a non-blocking call of
            // this process (or is MPI_REQUEST_NULL, for which MPI_Test
            // says done); MPI is live while an `Mpi` (and so this
            // watchdog) is.
            unsafe {
                ffi::MPI_Test(request, &mut done, ffi::RSMPI_STATUS_IGNORE);
            }
            if done != 0 {
                return;
            }
            tests = tests.wrapping_add(1);
            let waited = start.elapsed();
            // The notices every 16 tests while spinning, every test after.
            if waited >= SPIN || tests & 15 == 0 {
                let mut st = self.state.borrow_mut();
                self.poll(&mut st, false);
                if let Some(gone) = (0..self.size)
                    .find(|&r| st.departed[r].as_ref().is_some_and(|w| w.count < st.count))
                {
                    self.gone(&st, gone);
                }
                if st.watch.timeout.is_some_and(|t| waited >= t) {
                    self.timed_out(&mut st, waited);
                }
            }
            nap(waited);
        }
    }

    /// Runs `call` (a blocking collective of the collective entered
    /// last) with the alarm set to the timeout.
    pub(crate) fn blocking<R>(&self, what: &str, call: impl FnOnce() -> R) -> R {
        let message = {
            let st = self.state.borrow();
            st.watch.timeout.map(|t| {
                (
                    t,
                    format!(
                        "pytree-dist: rank {}: timeout: {} waited {t:.1?} (the timeout) inside {what}, \
                         a blocking call: a rank stopped or died inside this collective (which one \
                         cannot be asked from inside a blocking call); ending the job (MPI_Abort)",
                        self.rank,
                        self.here(&st, false).describe(),
                    ),
                )
            })
        };
        let Some((deadline, message)) =
            message.and_then(|(t, m)| Some((Instant::now().checked_add(t)?, m)))
        else {
            return call();
        };
        let alarm = alarm();
        alarm.arm(deadline, message);
        let result = call();
        alarm.disarm();
        result
    }

    /// This rank leaves `run`: tells every other rank, then waits (at most
    /// the timeout) until each has left too.
    pub(crate) fn leave(&self) -> Result<(), Error> {
        if self.size < 2 || self.left.replace(true) {
            return Ok(());
        }
        let mut st = self.state.borrow_mut();
        let me = self.here(&st, true);
        for r in self.others() {
            self.send(&mut st, r, DEPART, &me);
        }
        let start = Instant::now();
        loop {
            self.poll(&mut st, true);
            let waiting: Vec<usize> = self
                .others()
                .filter(|&r| st.departed[r].is_none())
                .collect();
            if waiting.is_empty() && st.sends.is_empty() {
                return Ok(());
            }
            let waited = start.elapsed();
            if st.watch.timeout.is_some_and(|t| waited >= t) {
                let message = format!(
                    "pytree-dist: rank {}: timeout: leaving run {} waited {waited:.1?} (the timeout) \
                     for rank(s) {} to leave run too (stopped, sleeping, or at work without \
                     collectives for longer than the timeout); ending the job (MPI_Abort)",
                    self.rank,
                    me.left(),
                    list(&waiting)
                );
                say(&message);
                abort_world(1);
            }
            nap(waited);
        }
    }

    fn others(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.size).filter(move |&r| r != self.rank)
    }

    fn here(&self, st: &State, leaving: bool) -> Whereabouts {
        Whereabouts {
            count: st.count,
            step: st.watch.step,
            leaving,
            op: st.watch.op.clone(),
        }
    }

    /// Sends notice `tag` to rank `to`, without waiting.
    fn send(&self, st: &mut State, to: usize, tag: c_int, what: &Whereabouts) {
        let buf = what.encode();
        // SAFETY: MPI_REQUEST_NULL is a constant of the library.
        let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: `buf` (its length in bytes, at most MAX_NOTICE) is kept
        // with the request in `st.sends`, unmoved (boxed) and unwritten,
        // until MPI_Test says the send is done; `to` is a rank of the
        // notices' communicator (a duplicate of the world); MPI is live.
        unsafe {
            ffi::MPI_Isend(
                buf.as_ptr() as *const _,
                buf.len() as c_int,
                u8::equivalent_datatype().as_raw(),
                to as c_int,
                tag,
                self.notices.as_raw(),
                &mut request,
            );
        }
        st.sends.push((request, buf));
    }

    /// Reads every notice that has come, answers the queries, and forgets
    /// the sends that are done.
    fn poll(&self, st: &mut State, leaving: bool) {
        while let Some(status) = self.notices.any_process().immediate_probe() {
            let from = status.source_rank();
            let tag = status.tag();
            // The message just probed: the same source, tag and
            // communicator, and no other thread receives on it.
            let (bytes, _) = self
                .notices
                .process_at_rank(from)
                .receive_vec_with_tag::<u8>(tag);
            let from = from as usize;
            let said = Whereabouts::decode(&bytes);
            match tag {
                DEPART => st.departed[from] = said,
                QUERY => {
                    let me = self.here(st, leaving);
                    self.send(st, from, REPLY, &me);
                }
                REPLY => st.replies[from] = said,
                _ => {}
            }
        }
        st.sends.retain_mut(|(request, _)| {
            let mut done: c_int = 0;
            // SAFETY: a request of MPI_Isend above, not yet done.
            unsafe {
                ffi::MPI_Test(request, &mut done, ffi::RSMPI_STATUS_IGNORE);
            }
            done == 0
        });
    }

    /// Rank `gone` left `run` before the collective this rank waits in.
    fn gone(&self, st: &State, gone: usize) -> ! {
        let left = st.departed[gone]
            .as_ref()
            .map(|w| w.left())
            .unwrap_or_default();
        let message = format!(
            "pytree-dist: rank {}: rank {gone} left run {left}, while rank {} still calls {}, \
             which rank {gone} will never join; ending the job (MPI_Abort)",
            self.rank,
            self.rank,
            self.here(st, false).describe()
        );
        say(&message);
        abort_world(1)
    }

    /// The collective this rank waits in timed out: asks the others where
    /// they are, then ends the job naming those that did not arrive.
    fn timed_out(&self, st: &mut State, waited: Duration) -> ! {
        let me = self.here(st, false);
        st.replies.iter_mut().for_each(|r| *r = None);
        for r in self.others() {
            self.send(st, r, QUERY, &me);
        }
        let until = Instant::now() + GRACE;
        while Instant::now() < until
            && self
                .others()
                .any(|r| st.replies[r].is_none() && st.departed[r].is_none())
        {
            self.poll(st, false);
            std::thread::sleep(NAP);
        }
        let mut arrived = vec![self.rank];
        let mut silent = Vec::new();
        let mut elsewhere = Vec::new();
        for r in self.others() {
            match (&st.departed[r], &st.replies[r]) {
                (Some(w), _) => elsewhere.push(format!("rank {r} left run {}", w.left())),
                (None, Some(w)) if w.count == me.count && !w.leaving => arrived.push(r),
                (None, Some(w)) => elsewhere.push(format!("rank {r} waits in {}", w.describe())),
                (None, None) => silent.push(r),
            }
        }
        let mut missing: Vec<usize> = self.others().filter(|r| !arrived.contains(r)).collect();
        missing.sort_unstable();
        arrived.sort_unstable();
        let mut why = Vec::new();
        if !silent.is_empty() {
            why.push(format!(
                "rank(s) {} did not answer within {GRACE:?} (stopped, sleeping, or at work \
                 outside pytree-dist's collectives)",
                list(&silent)
            ));
        }
        why.extend(elsewhere);
        let message = format!(
            "pytree-dist: rank {}: timeout: {} waited {waited:.1?} (the timeout); rank(s) {} did \
             not arrive: {}; rank(s) {} arrived; ending the job (MPI_Abort)",
            self.rank,
            me.describe(),
            list(&missing),
            why.join("; "),
            list(&arrived),
        );
        say(&message);
        abort_world(1)
    }
}

/// Prints `message` and a newline in one write, so that the line arrives
/// whole at the launcher even when `MPI_Abort` follows at once (and
/// another rank prints at the same moment).
fn say(message: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("{message}\n").as_bytes());
}

/// "1, 2".
fn list(ranks: &[usize]) -> String {
    ranks
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Between two tests: yield the CPU while the wait is young, sleep after.
fn nap(waited: Duration) {
    if waited < SPIN {
        std::thread::yield_now();
    } else {
        std::thread::sleep(NAP);
    }
}

/// The alarm of blocking calls: a thread that ends the job when a call
/// it was armed for outlives its deadline.
struct Alarm {
    armed: Mutex<Option<(Instant, String)>>,
    changed: Condvar,
}

fn alarm() -> &'static Alarm {
    static ALARM: OnceLock<&'static Alarm> = OnceLock::new();
    ALARM.get_or_init(|| {
        let alarm: &'static Alarm = Box::leak(Box::new(Alarm {
            armed: Mutex::new(None),
            changed: Condvar::new(),
        }));
        let spawned = std::thread::Builder::new()
            .name("pytree-dist-watchdog".into())
            .spawn(move || alarm.watch());
        if let Err(e) = spawned {
            eprintln!("pytree-dist: no watchdog thread for blocking calls: {e}");
        }
        alarm
    })
}

impl Alarm {
    fn arm(&self, deadline: Instant, message: String) {
        *self.armed.lock().unwrap_or_else(|e| e.into_inner()) = Some((deadline, message));
        self.changed.notify_one();
    }

    fn disarm(&self) {
        *self.armed.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn watch(&self) {
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            armed = match &*armed {
                None => self.changed.wait(armed).unwrap_or_else(|e| e.into_inner()),
                Some((deadline, message)) if now >= *deadline => {
                    say(message);
                    // MPI_Abort from this thread while the main thread is
                    // inside MPI: what the panic hook does too; Open MPI
                    // ends the job through its runtime.
                    abort_world(1)
                }
                Some((deadline, _)) => {
                    let left = *deadline - now;
                    self.changed
                        .wait_timeout(armed, left)
                        .map_or_else(|e| e.into_inner().0, |(g, _)| g)
                }
            };
        }
    }
}

/// `MPI_Abort(MPI_COMM_WORLD, code)`, then `std::process::abort` if it
/// returns.
pub(crate) fn abort_world(code: c_int) -> ! {
    // SAFETY: MPI is initialized and not finalized (the callers check
    // `LIVE`, or hold an `Mpi`); MPI_Abort may be called from any thread
    // with any communicator, and does not return in practice.
    unsafe {
        ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code);
    }
    std::process::abort()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whereabouts_round_trip_and_are_cut_at_a_char_boundary() {
        let w = Whereabouts {
            count: 7,
            step: Some(3),
            leaving: false,
            op: "all_reduce_mean".into(),
        };
        assert_eq!(Whereabouts::decode(&w.encode()), Some(w.clone()));
        assert_eq!(w.describe(), "all_reduce_mean (step 3, collective #7)");
        let none = Whereabouts {
            step: None,
            leaving: true,
            ..w
        };
        assert_eq!(Whereabouts::decode(&none.encode()), Some(none.clone()));
        assert_eq!(none.left(), "after 7 collectives");
        let long = Whereabouts {
            op: "é".repeat(200),
            ..none
        };
        let back = Whereabouts::decode(&long.encode()).unwrap();
        assert!(long.encode().len() <= MAX_NOTICE && long.op.starts_with(&back.op));
        assert_eq!(Whereabouts::decode(&[1, 2, 3]), None);
    }
}
