//! An exponential moving average of parameters ([`Ema`]): Polyak
//! averaging for evaluation, kept beside the training parameters.

use pytree_std::{Error, Leaf, PyTree};

use crate::element::Float;
use crate::kernel::Exec;
use crate::leaf::FloatLeaf;
use crate::mask::{LeafMask, Mask};
use crate::op::ElementOp;
use crate::transform::{walk, Scalar};

/// An exponential moving average of a tree of parameters: after each
/// training step, `average = decay * average + (1 - decay) * params`
/// (optax's `incremental_update` with step size `1 - decay`), in one pass.
/// It starts as a copy of the parameters. Leaves outside the mask (by
/// default those of kind `"state"`, such as running statistics) are copied
/// from the parameters instead of averaged.
///
/// ```
/// use pytree_optim::Ema;
/// let mut params = vec![0.0f64, 10.0];
/// let mut ema = Ema::new(0.9, &params)?;
/// params[0] = 1.0;
/// ema.update(&params)?;
/// assert!((ema.average()[0] - 0.1).abs() < 1e-12);
/// assert_eq!(ema.average()[1], 10.0);
/// assert_eq!(ema.count(), 1);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Ema<P> {
    decay: f64,
    average: P,
    count: u64,
    mask: LeafMask,
    exec: Exec,
}

impl<P> Ema<P>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    /// An average with decay `decay` (in `[0, 1]`: 0.999 keeps about the
    /// last thousand steps) starting at `params`, averaging the leaves
    /// where [`Mask::params`] holds.
    ///
    /// ```
    /// let ema = pytree_optim::Ema::new(0.99, &(1.0f32, 2.0f32))?;
    /// assert_eq!(ema.average(), &(1.0, 2.0));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new(decay: f64, params: &P) -> Result<Self, Error> {
        Self::with_mask(decay, params, Mask::params())
    }

    /// [`new`](Ema::new) averaging where `mask` holds (copying elsewhere).
    ///
    /// ```
    /// use pytree_optim::{Ema, Mask};
    /// let mut ema = Ema::with_mask(0.5, &vec![0.0f32, 0.0], Mask::all())?;
    /// ema.update(&vec![2.0, 4.0])?;
    /// assert_eq!(ema.average(), &vec![1.0, 2.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn with_mask(decay: f64, params: &P, mask: Mask) -> Result<Self, Error> {
        let average = pytree_std::try_map_n(params, [], |x, []| {
            let mut z = P::Leaf::zeros_like(x.clone()).map_err(|e| e.kind().to_string())?;
            P::Leaf::zip_op(
                [z.lend_mut()],
                [x],
                Exec::Sequential,
                &|[z], [x]| *z = x,
                &ElementOp::Copy,
            )
            .map_err(|e| e.kind().to_string())?;
            Ok::<_, String>(z)
        })?;
        Ok(Ema {
            decay,
            average,
            count: 0,
            mask: mask.on(params).first_occurrences(params),
            exec: Exec::Sequential,
        })
    }

    /// Runs the element loops as `exec` says.
    ///
    /// ```
    /// use pytree_optim::{Ema, Exec};
    /// let ema = Ema::new(0.9, &vec![1.0f64])?.exec(Exec::Sequential);
    /// assert_eq!(ema.average(), &vec![1.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn exec(mut self, exec: Exec) -> Self {
        self.exec = exec;
        self
    }

    /// Moves the average towards `params`; `params` of another structure
    /// or leaf shape are an error naming the path, and nothing changes.
    ///
    /// ```
    /// let mut ema = pytree_optim::Ema::new(0.5, &vec![0.0f32])?;
    /// ema.update(&vec![1.0])?;
    /// ema.update(&vec![1.0])?;
    /// assert_eq!(ema.average(), &vec![0.75]);
    /// assert!(ema.update(&vec![1.0, 2.0]).is_err());
    /// assert_eq!(ema.count(), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn update(&mut self, params: &P) -> Result<(), Error> {
        let d = Scalar::<P>::from_f64(self.decay);
        let step = Scalar::<P>::from_f64(1.0 - self.decay);
        walk(
            [&mut self.average],
            [params],
            &self.mask,
            self.exec,
            (
                &|[a], [p]| *a = d * *a + step * p,
                &ElementOp::Axpby {
                    a: self.decay,
                    b: 1.0 - self.decay,
                },
            ),
            Some((
                &|[a]: [&mut Scalar<P>; 1], [p]: [Scalar<P>; 1]| *a = p,
                &ElementOp::Copy,
            )),
        )?;
        self.count += 1;
        Ok(())
    }

    /// The average.
    ///
    /// ```
    /// assert_eq!(pytree_optim::Ema::new(0.9, &vec![3.0f32])?.average(), &vec![3.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn average(&self) -> &P {
        &self.average
    }

    /// The average, by value.
    ///
    /// ```
    /// assert_eq!(pytree_optim::Ema::new(0.9, &vec![3.0f32])?.into_average(), vec![3.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn into_average(self) -> P {
        self.average
    }

    /// The number of updates so far.
    ///
    /// ```
    /// assert_eq!(pytree_optim::Ema::new(0.9, &vec![3.0f32])?.count(), 0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The decay.
    ///
    /// ```
    /// assert_eq!(pytree_optim::Ema::new(0.9, &vec![3.0f32])?.decay(), 0.9);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn decay(&self) -> f64 {
        self.decay
    }
}
