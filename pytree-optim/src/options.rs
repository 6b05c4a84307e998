//! The builder methods every transformation has: `.mask(..)`, `.exec(..)`
//! and (feature `rayon`) `.parallel()`, and the helper that builds state
//! trees of zeros.

use pytree_std::{Error, PyTree};

use crate::leaf::FloatLeaf;

/// A tree of `params`' structure with every leaf zero (same shapes).
pub(crate) fn zeros<P>(params: &P) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    pytree_std::walk::map_n(params, [], |x, []| {
        P::Leaf::zeros_like(x).map_err(|e| e.kind().to_string())
    })
}

/// `mask`, `exec` and `parallel` for `$ty`, with doc examples built from
/// the constructor call `$ctor` and what the transformation does outside
/// its mask (`$outside`).
macro_rules! options {
    ($ty:ident $(<$g:ident>)?, $ctor:literal, $outside:literal) => {
        impl$(<$g>)? $ty$(<$g>)? {
            #[doc = concat!(
                "Acts only on the leaves where `mask` holds (default [`Mask::params`](crate::Mask::params): ",
                "every leaf not of kind `\"state\"`); ", $outside, ". The mask is evaluated on the ",
                "parameters' key paths once, by `init`, and kept in the state.\n\n",
                "```\n",
                "use pytree_optim::{GradientTransformation, Mask};\n",
                "use pytree_std::KeyPath;\n",
                "let opt = ", $ctor, ".mask(Mask::new(|p: &KeyPath| p.to_string() != \"[1]\"));\n",
                "let mut params = vec![1.0f32, 1.0];\n",
                "let mut state = opt.init(&params)?;\n",
                "assert!(state.mask.get(0) && !state.mask.get(1));\n",
                "opt.step(&mut params, &mut vec![1.0, 1.0], &mut state)?;\n",
                "# Ok::<(), pytree_std::Error>(())\n",
                "```"
            )]
            #[must_use]
            pub fn mask(mut self, mask: crate::Mask) -> Self {
                self.mask = mask;
                self
            }

            #[doc = concat!(
                "Restricts where it acts to where its mask and `mask` both hold (what [`multi_transform`](crate::multi_transform) ",
                "does to a group's transformation).\n\n",
                "```\n",
                "use pytree_optim::{GradientTransformation, Mask};\n",
                "use pytree_std::KeyPath;\n",
                "let opt = ", $ctor, ".restrict(Mask::new(|p: &KeyPath| p.to_string() == \"[0]\"));\n",
                "let params = vec![1.0f32, 1.0];\n",
                "let state = opt.init(&params)?;\n",
                "assert!(state.mask.get(0) && !state.mask.get(1));\n",
                "# Ok::<(), pytree_std::Error>(())\n",
                "```"
            )]
            #[must_use]
            pub fn restrict(mut self, mask: crate::Mask) -> Self {
                self.mask = core::mem::take(&mut self.mask).and(mask);
                self
            }

            #[doc = concat!(
                "Runs the element loops as `exec` says (default [`Exec::Sequential`](crate::Exec::Sequential)).\n\n",
                "```\n",
                "use pytree_optim::{Exec, GradientTransformation};\n",
                "let opt = ", $ctor, ".exec(Exec::Sequential);\n",
                "let mut params = vec![1.0f64; 4];\n",
                "let mut state = opt.init(&params)?;\n",
                "opt.step(&mut params, &mut vec![1.0; 4], &mut state)?;\n",
                "# Ok::<(), pytree_std::Error>(())\n",
                "```"
            )]
            #[must_use]
            pub fn exec(mut self, exec: crate::Exec) -> Self {
                self.exec = exec;
                self
            }

            #[doc = concat!(
                "Splits leaves longer than [`GRAIN`](crate::GRAIN) elements across rayon's threads ",
                "(`.exec(Exec::Parallel)`); the results are the sequential ones, bit for bit. ",
                "Scalar leaves and short arrays run on the calling thread.\n\n",
                "```\n",
                "use pytree_optim::GradientTransformation;\n",
                "let (seq, par) = (", $ctor, ", ", $ctor, ".parallel());\n",
                "let (mut a, mut b) = (vec![1.0f32; 8], vec![1.0f32; 8]);\n",
                "let (mut sa, mut sb) = (seq.init(&a)?, par.init(&b)?);\n",
                "seq.step(&mut a, &mut vec![0.5; 8], &mut sa)?;\n",
                "par.step(&mut b, &mut vec![0.5; 8], &mut sb)?;\n",
                "assert_eq!(a, b);\n",
                "# Ok::<(), pytree_std::Error>(())\n",
                "```"
            )]
            #[cfg(feature = "rayon")]
            #[must_use]
            pub fn parallel(self) -> Self {
                self.exec(crate::Exec::Parallel)
            }
        }

        impl$(<$g>)? crate::groups::Restrict for $ty$(<$g>)? {
            fn restrict(self, mask: crate::Mask) -> Self {
                $ty::restrict(self, mask)
            }
        }
    };
}
pub(crate) use options;
