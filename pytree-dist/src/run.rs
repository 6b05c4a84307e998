//! [`run`]: a program's `main` for a job of many processes, where a rank
//! that fails ends the whole job at once with its message.

use std::fmt::Display;
use std::process::ExitCode;

use crate::dist::Dist;

/// Runs `main` with this process's [`Dist`] ([`Dist::init`]) and ends the
/// whole job promptly if it fails on any rank: an `Err` is printed with
/// the rank (`pytree-dist: rank 1: error: ...`) and the job aborted
/// (`MPI_Abort`), so the other ranks are not left waiting in a collective
/// for a rank that is gone. A panic does the same (with feature `mpi`,
/// in a world of more than one rank, the backend's panic hook aborts the
/// job after printing the panic). In a world of one, an error is printed
/// and the exit status is 1. `Ok` on a rank returns success once every
/// rank has left `run`: a rank that returns while others still call
/// collectives (three steps early, say) is not waited for, it ends the
/// job with a message naming it and its step ([`Dist::set_step`]); a
/// rank that stalls (sleeps, is stopped, loops) ends it after the
/// collectives' timeout ([`Dist::timeout`],
/// [`TIMEOUT_ENV`](crate::TIMEOUT_ENV)), naming the ranks that did not
/// arrive.
///
/// ```no_run
/// use std::process::ExitCode;
/// fn main() -> ExitCode {
///     pytree_dist::run(|dist| {
///         let mut grads = vec![1.0f32, 2.0];
///         dist.all_reduce_mean(&mut grads)?;
///         Ok::<(), pytree_std::Error>(())
///     })
/// }
/// ```
pub fn run<E: Display>(main: impl FnOnce(&Dist) -> Result<(), E>) -> ExitCode {
    let dist = match Dist::init() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("pytree-dist: could not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match main(&dist) {
        Ok(()) => {
            if dist.size() > 1 {
                // Tells the others, so that a rank still calling
                // collectives ends the job instead of waiting for this
                // one; then waits (at most the timeout) for them to leave.
                dist.watch(crate::agree::Op::Leave);
                if let Err(e) = dist.backend().leave() {
                    dist.abort(&format!(
                        "pytree-dist: rank {}: error leaving run: {e}",
                        dist.rank()
                    ));
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            let message = format!("pytree-dist: rank {}: error: {e}", dist.rank());
            if dist.size() > 1 {
                dist.abort(&message);
            }
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}
