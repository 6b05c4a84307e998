//! `ravel` / `unravel` (JAX's `ravel_pytree`): a tree's leaves laid end to
//! end in one flat buffer of elements, and back. The plan ([`Unravel`])
//! keeps the TreeDef and each leaf's signature, so it rebuilds any flat
//! vector of the right length (an optimizer's or a solver's output) into
//! the tree, and ravels further trees of the same structure into a
//! reused buffer.
//!
//! A leaf type joins by implementing [`Ravel`]: the numeric primitives
//! and `bool` (one element each; with `half`, `f16` and `bf16`), and with
//! their features `ndarray` arrays, `AnyArray` (into `f32` or `f64`, each
//! array rebuilt in its own dtype), nalgebra matrices and candle tensors
//! (their elements in C order).

use std::marker::PhantomData;

use pytree_core::{Error, ErrorKind, Flatten, Leaf, Signature, TreeDef, Unflatten};

use crate::std_namespace::Std;

/// A leaf type whose elements can be laid out in a flat buffer of `A`s.
///
/// ```
/// use pytree_std::{Leaf, elements::Ravel, Signature, DType};
/// let mut out = Vec::new();
/// <f32 as Ravel<f32>>::ravel_into(&2.5, &mut out)?;
/// assert_eq!(out, [2.5]);
/// let x = <f32 as Ravel<f32>>::unravel_from(&Signature::scalar(DType::F32), &[4.0])?;
/// assert_eq!(x, 4.0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait Ravel<A>: Leaf<Std> {
    /// Appends the elements of a lent leaf to `out`, in C order.
    fn ravel_into(leaf: Self::Ref<'_>, out: &mut Vec<A>) -> Result<(), Error>;
    /// Rebuilds a leaf of signature `like` from exactly its elements
    /// (`data.len()` is `like.num_elements()`).
    fn unravel_from(like: &Signature, data: &[A]) -> Result<Self, Error>;
}

/// `Ravel<T> for T` for scalar leaf types: one element, itself (also
/// used by `impls/half.rs` for `f16` and `bf16`).
macro_rules! ravel_scalars {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::elements::Ravel<$t> for $t {
            #[inline]
            fn ravel_into(
                leaf: &$t,
                out: &mut ::std::vec::Vec<$t>,
            ) -> ::core::result::Result<(), ::pytree_core::Error> {
                out.push(*leaf);
                Ok(())
            }
            #[inline]
            fn unravel_from(
                _like: &::pytree_core::Signature,
                data: &[$t],
            ) -> ::core::result::Result<Self, ::pytree_core::Error> {
                match data {
                    [x] => Ok(*x),
                    _ => Err(::pytree_core::Error::new(::pytree_core::ErrorKind::LengthMismatch {
                        expected: 1,
                        found: data.len(),
                    })),
                }
            }
        }
    )*};
}
#[cfg(feature = "half")]
pub(crate) use ravel_scalars;

ravel_scalars!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool);

/// The plan to rebuild a tree of type `T` from a flat buffer of `A`s: the
/// TreeDef and each leaf's signature and offset (JAX's `unravel_fn`).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: Vec<f64>, b: f64 }
/// let model = Linear { w: vec![1.0, 2.0], b: 3.0 };
/// let (flat, plan) = pytree_std::elements::ravel(&model)?;
/// assert_eq!(flat, [1.0, 2.0, 3.0]);
/// let moved: Vec<f64> = flat.iter().map(|x| x * 10.0).collect();
/// assert_eq!(plan.unravel(&moved)?, Linear { w: vec![10.0, 20.0], b: 30.0 });
/// assert_eq!(plan.unravel(&[1.0]).unwrap_err().to_string(),
///     "at <root>: sequence length mismatch: expected 3, found 1");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct Unravel<T, A> {
    def: TreeDef,
    signatures: Vec<Signature>,
    /// Where each leaf's elements start; one more entry, the total.
    offsets: Vec<usize>,
    marker: PhantomData<fn() -> (T, A)>,
}

impl<T, A> Clone for Unravel<T, A> {
    fn clone(&self) -> Self {
        Unravel {
            def: self.def.clone(),
            signatures: self.signatures.clone(),
            offsets: self.offsets.clone(),
            marker: PhantomData,
        }
    }
}

impl<T, A> std::fmt::Debug for Unravel<T, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unravel")
            .field("def", &self.def)
            .field("signatures", &self.signatures)
            .field("len", &self.len())
            .finish()
    }
}

/// The signature of leaf `i`, or the error naming its path.
fn signature_of<L: Leaf<Std>>(
    def: &TreeDef,
    i: usize,
    leaf: &L::Ref<'_>,
) -> Result<Signature, Error> {
    L::signature(leaf).ok_or_else(|| {
        let mut err = Error::custom("the leaf has no signature, so it cannot be raveled");
        if let Some(path) = def.leaf_path(i) {
            err = err.under(&path);
        }
        err
    })
}

/// Lays the leaves of `tree` end to end in one `Vec<A>` (C order within
/// each leaf) and returns it with the plan that rebuilds the tree (JAX's
/// `ravel_pytree`). Every leaf type must be [`Ravel<A>`]: one element type
/// for the whole buffer.
///
/// ```
/// let (flat, plan) = pytree_std::elements::ravel(&(1.0f32, vec![2.0f32, 3.0]))?;
/// assert_eq!((flat.as_slice(), plan.len()), (&[1.0f32, 2.0, 3.0][..], 3));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn ravel<T, A>(tree: &T) -> Result<(Vec<A>, Unravel<T, A>), Error>
where
    T: Flatten<Std>,
    T::Leaf: Ravel<A>,
{
    let def = crate::walk::structure(tree);
    let leaves = crate::walk::leaves(tree);
    let mut signatures = Vec::with_capacity(leaves.len());
    let mut offsets = Vec::with_capacity(leaves.len() + 1);
    let mut total = 0usize;
    for (i, leaf) in leaves.iter().enumerate() {
        let sig = signature_of::<T::Leaf>(&def, i, leaf)?;
        offsets.push(total);
        total = total.saturating_add(sig.num_elements());
        signatures.push(sig);
    }
    offsets.push(total);
    let plan = Unravel {
        def,
        signatures,
        offsets,
        marker: PhantomData,
    };
    let mut flat = Vec::with_capacity(total);
    plan.write(leaves, &mut flat)?;
    Ok((flat, plan))
}

impl<T, A> Unravel<T, A> {
    /// The number of elements of the flat buffer.
    ///
    /// ```
    /// let (_, plan) = pytree_std::elements::ravel(&vec![0.0f64; 4])?;
    /// assert_eq!(plan.len(), 4);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// True when the tree has no elements.
    ///
    /// ```
    /// let (_, plan) = pytree_std::elements::ravel(&Vec::<f64>::new())?;
    /// assert!(plan.is_empty());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The structure the plan rebuilds.
    ///
    /// ```
    /// let (_, plan) = pytree_std::elements::ravel(&(1.0f32, 2.0f32))?;
    /// assert_eq!(plan.treedef().to_string(), "(*, *)");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn treedef(&self) -> &TreeDef {
        &self.def
    }

    /// Each leaf's signature, in leaf order.
    ///
    /// ```
    /// let (_, plan) = pytree_std::elements::ravel(&(1.0f32, 2.0f32))?;
    /// assert_eq!(plan.signatures()[1].to_string(), "f32[]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn signatures(&self) -> &[Signature] {
        &self.signatures
    }
}

impl<T, A> Unravel<T, A>
where
    T: Flatten<Std>,
    T::Leaf: Ravel<A>,
{
    /// Appends the leaves' elements to `out`, checking each leaf against
    /// the plan.
    fn write(
        &self,
        leaves: Vec<pytree_core::LeafRef<'_, Std, T::Leaf>>,
        out: &mut Vec<A>,
    ) -> Result<(), Error> {
        for (i, leaf) in leaves.into_iter().enumerate() {
            let before = out.len();
            T::Leaf::ravel_into(leaf, out)?;
            let wrote = out.len() - before;
            let expected = self.offsets[i + 1] - self.offsets[i];
            if wrote != expected {
                out.truncate(before);
                return Err(self.at_leaf(
                    i,
                    Error::new(ErrorKind::LengthMismatch {
                        expected,
                        found: wrote,
                    }),
                ));
            }
        }
        Ok(())
    }

    /// Places `err` at the path of leaf `i`.
    #[cold]
    fn at_leaf(&self, i: usize, mut err: Error) -> Error {
        if let Some(path) = self.def.leaf_path(i) {
            err = err.under(&path);
        }
        err
    }

    /// Ravels another tree of the plan's structure into `out` (cleared
    /// first, its allocation reused): the tree's structure and leaf
    /// signatures must be the plan's, else the error names the place.
    ///
    /// ```
    /// let (mut buf, plan) = pytree_std::elements::ravel(&vec![1.0f32, 2.0])?;
    /// plan.ravel_into(&vec![3.0f32, 4.0], &mut buf)?;
    /// assert_eq!(buf, [3.0, 4.0]);
    /// assert!(plan.ravel_into(&vec![1.0f32], &mut buf).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn ravel_into(&self, tree: &T, out: &mut Vec<A>) -> Result<(), Error> {
        let def = crate::walk::structure(tree);
        if def != self.def {
            return Err(Error::from_mismatches(self.def.diff(&def)));
        }
        let leaves = crate::walk::leaves(tree);
        for (i, leaf) in leaves.iter().enumerate() {
            if let Some(sig) = T::Leaf::signature(leaf) {
                if sig != self.signatures[i] {
                    return Err(self.at_leaf(
                        i,
                        Error::new(ErrorKind::SignatureMismatch {
                            expected: self.signatures[i].clone(),
                            found: sig,
                        }),
                    ));
                }
            }
        }
        out.clear();
        out.reserve(self.len());
        self.write(leaves, out)
    }
}

impl<T, A> Unravel<T, A>
where
    T: Unflatten<Std>,
    T::Leaf: Ravel<A>,
{
    /// Rebuilds the tree from a flat buffer of exactly [`len`](Unravel::len)
    /// elements.
    ///
    /// ```
    /// let (_, plan) = pytree_std::elements::ravel(&(0i32, [0i32, 0]))?;
    /// assert_eq!(plan.unravel(&[1, 2, 3])?, (1, [2, 3]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn unravel(&self, flat: &[A]) -> Result<T, Error> {
        if flat.len() != self.len() {
            return Err(Error::new(ErrorKind::LengthMismatch {
                expected: self.len(),
                found: flat.len(),
            }));
        }
        let mut leaves = Vec::with_capacity(self.signatures.len());
        for (i, sig) in self.signatures.iter().enumerate() {
            let data = &flat[self.offsets[i]..self.offsets[i + 1]];
            leaves.push(T::Leaf::unravel_from(sig, data).map_err(|e| self.at_leaf(i, e))?);
        }
        crate::walk::unflatten(&self.def, leaves)
    }

    /// Rebuilds a tree like `like` (a tree of the plan's structure) from
    /// a flat buffer: for trees that the `TreeDef` alone cannot rebuild (a
    /// burn module, `BurnModule`, whose configuration is not in it), as
    /// JAX's `unravel` closes over what it needs.
    ///
    /// ```
    /// let (flat, plan) = pytree_std::elements::ravel(&vec![1.0f32, 2.0])?;
    /// assert_eq!(plan.unravel_like(&[3.0, 4.0], &vec![0.0, 0.0])?, [3.0, 4.0]);
    /// assert!(plan.unravel_like(&flat, &vec![0.0]).is_err()); // another structure
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn unravel_like(&self, flat: &[A], like: &T) -> Result<T, Error> {
        let def = crate::walk::structure(like);
        if def != self.def {
            return Err(Error::custom(format!(
                "unravel_like: the tree's structure {def} is not the plan's {}",
                self.def
            )));
        }
        if flat.len() != self.len() {
            return Err(Error::new(ErrorKind::LengthMismatch {
                expected: self.len(),
                found: flat.len(),
            }));
        }
        let mut i = 0;
        crate::walk::map_n(like, [], |_, []| {
            let data = &flat[self.offsets[i]..self.offsets[i + 1]];
            let leaf = T::Leaf::unravel_from(&self.signatures[i], data);
            i += 1;
            leaf
        })
    }
}
