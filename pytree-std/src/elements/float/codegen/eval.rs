//! [`Program::eval`]: a recorded program run on numbers, node by node, in
//! the element type: the reference the generated device code is held to,
//! and the proof, in tests, that the recording is the computation the
//! CPU's loops make (the same bits on every input).

use super::{Node, Program};
use crate::elements::{Arith, Float};
use pytree_core::Error;

impl Program {
    /// Runs the program on one element position: `muts` (the written
    /// operands, overwritten with their new values) and `refs`, computing
    /// in `T` (each constant rounded to `T` at its use, as the scalars'
    /// [`Arith`] rounds it). An error if the numbers of operands are not
    /// the program's.
    ///
    /// ```
    /// use pytree_std::elements::codegen::record;
    /// use pytree_std::elements::{Arith, ElementUpdate};
    /// /// `m = 0.9 * m + 0.1 * g`
    /// struct Ema;
    /// impl ElementUpdate<f64, 1, 1> for Ema {
    ///     fn apply<T: Arith<f64>>(&self, [m]: [&mut T; 1], [g]: [T; 1]) {
    ///         *m = m.clone().scale(0.9) + g.scale(0.1);
    ///     }
    /// }
    /// let mut m = [1.0f32];
    /// record(&Ema).eval(&mut m, &[2.0])?;
    /// assert_eq!(m, [0.9f32 * 1.0 + 0.1f32 * 2.0]);
    /// assert!(record(&Ema).eval(&mut m, &[]).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn eval<T: Float>(&self, muts: &mut [T], refs: &[T]) -> Result<(), Error> {
        if muts.len() != self.muts() || refs.len() != self.refs() {
            return Err(Error::custom(format!(
                "a program of {} written and {} read operands run on {} and {}",
                self.muts(),
                self.refs(),
                muts.len(),
                refs.len()
            )));
        }
        let mut v: Vec<T> = Vec::with_capacity(self.nodes().len());
        for node in self.nodes() {
            let x = match *node {
                Node::Mut(i) => muts[i],
                Node::Ref(i) => refs[i],
                Node::Const(s) => T::from_f64(self.consts()[s]),
                Node::Zero => T::ZERO,
                Node::Add(a, b) => v[a] + v[b],
                Node::Sub(a, b) => v[a] - v[b],
                Node::Mul(a, b) => v[a] * v[b],
                Node::Div(a, b) => v[a] / v[b],
                Node::Sqrt(a) => Arith::<T>::sqrt(v[a]),
            };
            v.push(x);
        }
        for (m, &o) in muts.iter_mut().zip(self.outputs()) {
            *m = v[o];
        }
        Ok(())
    }
}
