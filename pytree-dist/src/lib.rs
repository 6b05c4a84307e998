//! # pytree-dist
//!
//! Data-parallel training over pytrees, across processes and machines, on
//! MPI: a derived model's gradient tree averaged across ranks, parameters
//! broadcast, optimizer state sharded by element (ZeRO stages 1 and 2), checkpoints written
//! by every rank. A `#[derive(PyTree)]` struct gives every process the same
//! leaf order, so a tree is the unit every collective works on.
//!
//! ```
//! use pytree_dist::Dist;
//! use pytree_optim::{adam, GradientTransformation};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Linear { w: Vec<f32>, b: f32 }
//!
//! // `Dist::init()` under `mpirun -np N` (feature `mpi`); a world of one here.
//! let dist = Dist::local();
//! let mut params = Linear { w: vec![0.5, -0.5], b: 0.0 };
//! let opt = adam(0.1);
//! let mut state = opt.init(&params)?;
//! dist.broadcast(&mut params, 0)?;              // every rank starts from rank 0's
//! let mut grads = Linear { w: vec![1.0, -1.0], b: 0.5 }; // this rank's share of the batch
//! dist.all_reduce_mean(&mut grads)?;            // the gradient of the whole batch
//! opt.step(&mut params, &mut grads, &mut state)?;
//! dist.check_replicated(&params)?;             // every rank holds the same parameters
//! assert_eq!(params.w, [0.4, -0.4]);
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! ## Contents
//! - [`Dist`]: the tree collectives of one job: [`all_reduce_mean`]
//!   (large leaves summed in their own memory, small ones packed into
//!   pipelined buckets; masks leave frozen leaves out),
//!   [`broadcast`] (leaves and static data), [`check_replicated`]. Before
//!   each, the ranks check that they hold the same tree: a rank whose tree
//!   differs makes it an error on every rank, naming the ranks and the
//!   first differing key path. [`Sizes`] shape the buckets.
//! - [`Backend`]: the collectives underneath, a small trait, so that
//!   another transport is an impl and no change to the tree code;
//!   [`Local`] (the world of one, no MPI) and `Mpi` (feature `mpi`, rsmpi
//!   over the system's MPI library).
//! - [`Zero1`]: ZeRO over any pytree-optim transformation: the
//!   optimizer state split across the ranks by element ([`Partition`]:
//!   `1/N` per rank whatever the leaf sizes; or by whole leaves), the
//!   gradients reduce-scattered and the parameters all-gathered, the
//!   result the unsharded optimizer's bit for bit for element-wise
//!   updates; ZeRO-2's accumulation at `1/N` of the gradient
//!   ([`Zero1::accumulate`]).
//! - [`checkpoint`] (feature `checkpoint`, on by default; without it
//!   the crate needs no checkpoint format): checkpoints written by every rank (each its shard,
//!   rank 0 the index last), loaded in one process or at any number of
//!   ranks; [`Zero1::save_state`] / [`Zero1::load_state`] for the sharded
//!   optimizer state.
//! - [`run`]: `main` for a job: a rank that returns an error or panics
//!   ends the whole job at once with its message (MPI_Abort), and so does
//!   one that returns `Ok` while the others still call collectives.
//! - Timeouts: no collective waits for ever. After
//!   [`DEFAULT_TIMEOUT`] (10 minutes; [`Dist::timeout`], or
//!   [`TIMEOUT_ENV`]: `PYTREE_DIST_TIMEOUT=30`) the job ends with a
//!   message naming the operation, the step ([`Dist::set_step`]) and the
//!   ranks that did not arrive.
//!
//! [`all_reduce_mean`]: Dist::all_reduce_mean
//! [`broadcast`]: Dist::broadcast
//! [`check_replicated`]: Dist::check_replicated

#![warn(missing_docs)]
// Without the `checkpoint` feature the crate's pages still name the
// checkpoint items (module `checkpoint`, `Zero1::save_state`), which are
// then not there to link to.
#![cfg_attr(not(feature = "checkpoint"), allow(rustdoc::broken_intra_doc_links))]

mod agree;
mod backend;
mod broadcast;
#[cfg(feature = "checkpoint")]
pub mod checkpoint;
mod collectives;
mod dist;
mod local;
mod message;
#[cfg(feature = "mpi")]
mod mpi;
mod owners;
mod plan;
mod run;
mod sizes;
mod timeout;
#[cfg(feature = "mpi")]
mod watchdog;
mod zero;

pub use backend::{Backend, Bucket, Buckets, BufMut, BufRef, Direct, Flow, Watch, Wire};
pub use dist::Dist;
pub use local::Local;
#[cfg(feature = "mpi")]
pub use mpi::Mpi;
pub use run::run;
pub use sizes::{Sizes, DEFAULT_BUCKET_BYTES, DEFAULT_IN_PLACE_BYTES};
pub use timeout::{parse_timeout, DEFAULT_TIMEOUT, TIMEOUT_ENV};
pub use zero::{Partition, Zero1};
