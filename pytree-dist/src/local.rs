//! [`Local`]: the world of one, with no MPI at all (the unit tests run the
//! tree operations on it, and a build without the `mpi` feature has only
//! it).

use pytree_std::Error;

use crate::backend::{Backend, Buckets, BufMut, BufRef, Flow, Wire};

/// The world of one process: every collective is the identity (a sum over
/// one rank, a broadcast from oneself). It still packs and unpacks every
/// packed bucket and lends every in-place one, so the tree code runs the
/// same path as on many ranks.
///
/// ```
/// use pytree_dist::{Backend, Local};
/// let mut bytes = b"abc".to_vec();
/// Local.broadcast(&mut bytes, 0)?;
/// assert_eq!(bytes, b"abc");
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl Backend for Local {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn name(&self) -> &'static str {
        "local"
    }

    fn run(&self, flow: Flow, buckets: &mut dyn Buckets) -> Result<(), Error> {
        let (mut f32s, mut f64s) = (Vec::new(), Vec::new());
        for (k, b) in buckets.buckets().into_iter().enumerate() {
            if b.root != 0 {
                return Err(Error::custom(format!(
                    "bucket {k} has root {}, but the world has one rank",
                    b.root
                )));
            }
            // One rank: a broadcast from it changes nothing, and nothing
            // else receives it.
            if !flow.drains(0, 0) {
                continue;
            }
            if b.in_place && flow.scatters() {
                return Err(Error::custom(format!(
                    "bucket {k} is in place, but a {flow:?} takes packed buckets only"
                )));
            }
            // The sum over one rank is already in the leaf's memory (and
            // one rank's part of a bucket is all of it).
            if b.in_place {
                buckets.in_place(k, true, &mut |_| Ok(()))?;
                continue;
            }
            match b.wire {
                Wire::F32 => {
                    f32s.clear();
                    f32s.resize(b.len, 0.0);
                    buckets.fill(k, BufMut::F32(&mut f32s))?;
                    buckets.drain(k, BufRef::F32(&f32s))?;
                }
                Wire::F64 => {
                    f64s.clear();
                    f64s.resize(b.len, 0.0);
                    buckets.fill(k, BufMut::F64(&mut f64s))?;
                    buckets.drain(k, BufRef::F64(&f64s))?;
                }
            }
        }
        Ok(())
    }

    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
        Ok(vec![mine.to_vec()])
    }

    fn broadcast(&self, _bytes: &mut Vec<u8>, root: usize) -> Result<(), Error> {
        if root != 0 {
            return Err(Error::custom(format!(
                "broadcast from rank {root}, but the world has one rank"
            )));
        }
        Ok(())
    }

    fn abort(&self, message: &str) -> ! {
        eprintln!("{message}");
        std::process::exit(1)
    }
}
