//! [`LeafAs`]: a leaf type whose values stand in a tree of another leaf
//! type, so that one tree holds fields of several leaf types. A struct
//! derived with `#[pytree(leaf_type = L)]` has the leaf type `L`; each of
//! its data fields has leaves of its own type `M: LeafAs<Ns, L>`: `L`
//! itself (every leaf type stands as itself), or a type that `L` erases,
//! as `pytree_std::AnyArray` (an array whose dtype is a value) erases the
//! typed arrays `ArrayD<f32>`, `ArrayD<i64>`, ... So a model of `f32`
//! weights and an `i64` buffer is one tree of typed fields.
//!
//! The field's leaves are converted as they pass, never copied: moved
//! into an `L` by value ([`into_leaf`](LeafAs::into_leaf)), lent as `L`'s
//! views by reference ([`lend_as`](LeafAs::lend_as),
//! [`lend_mut_as`](LeafAs::lend_mut_as)), and converted back when the
//! field is rebuilt ([`from_leaf`](LeafAs::from_leaf)), where an `L` that
//! is not an `M` (an `f32` array for an `i64` field) is an error at the
//! field's key path.

use crate::error::Error;
use crate::leaf::{Leaf, LeafMut, LeafRef};

/// A leaf type whose values stand as leaves of type `L` (namespace `Ns`):
/// what a field of a `#[pytree(leaf_type = L)]` struct needs of its
/// leaves. Every leaf type stands as itself; `pytree_std::AnyArray`
/// implements it for the typed arrays it erases.
///
/// ```
/// use pytree_std::{LeafAs, Std};
/// // Every leaf type stands as itself, unchanged.
/// assert_eq!(<f32 as LeafAs<Std, f32>>::into_leaf(1.5), 1.5);
/// assert_eq!(*<f32 as LeafAs<Std, f32>>::lend_as(&2.5), 2.5);
/// assert_eq!(<f32 as LeafAs<Std, f32>>::from_leaf(3.5)?, 3.5);
/// # Ok::<(), pytree_std::Error>(())
/// ```
///
/// A struct of typed fields whose leaves are `AnyArray`s is the example
/// of `pytree_std::AnyArray`'s impl (`pytree_std::any_array`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` leaves cannot stand as `{L}` leaves in namespace `{Ns}`",
    label = "the leaves of this field do not convert to the struct's `leaf_type`",
    note = "a `#[pytree(leaf_type = L)]` struct holds fields whose leaves are `L` or convert to it (`LeafAs<Ns, L>`): with `leaf_type = AnyArray`, ndarray arrays of f32, f64, f16, bf16, i64, i32, u8 or bool, and pytrees whose leaves are those arrays or `AnyArray`s"
)]
pub trait LeafAs<Ns, L: Leaf<Ns>>: Leaf<Ns> {
    /// The leaf, moved into an `L` (no copy of its data).
    ///
    /// ```
    /// use pytree_std::{LeafAs, Std};
    /// assert_eq!(<u8 as LeafAs<Std, u8>>::into_leaf(7), 7);
    /// ```
    fn into_leaf(self) -> L;

    /// The leaf lent by shared reference, as `L` lends its leaves. (The
    /// `where` clause keeps `'a` a parameter of the function's type, so an
    /// impl whose views name it, `ArrayViewD<'a, A>`, matches the trait;
    /// leaves are `'static`, so it always holds.)
    ///
    /// ```
    /// use pytree_std::{LeafAs, Std};
    /// assert_eq!(<u8 as LeafAs<Std, u8>>::lend_as(&7), &7);
    /// ```
    fn lend_as<'a>(leaf: LeafRef<'a, Ns, Self>) -> LeafRef<'a, Ns, L>
    where
        Self: 'a;

    /// The leaf lent by mutable reference, as `L` lends its leaves.
    ///
    /// ```
    /// use pytree_std::{LeafAs, Std};
    /// let mut x = 7u8;
    /// *<u8 as LeafAs<Std, u8>>::lend_mut_as(&mut x) += 1;
    /// assert_eq!(x, 8);
    /// ```
    fn lend_mut_as<'a>(leaf: LeafMut<'a, Ns, Self>) -> LeafMut<'a, Ns, L>
    where
        Self: 'a;

    /// An `L` back as this leaf type; an `L` that holds something else (an
    /// array of another dtype) is an error saying what was expected and
    /// found (the field's path is added on the way out).
    ///
    /// ```
    /// use pytree_std::{LeafAs, Std};
    /// assert_eq!(<u8 as LeafAs<Std, u8>>::from_leaf(7)?, 7);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn from_leaf(leaf: L) -> Result<Self, Error>;
}

/// Every leaf type stands as itself: the fields of a `leaf_type = L`
/// struct whose leaves already are `L` (a nested struct of the same
/// `leaf_type`, an `L` field) pass unchanged.
impl<Ns, L: Leaf<Ns>> LeafAs<Ns, L> for L {
    #[inline(always)]
    fn into_leaf(self) -> L {
        self
    }
    #[inline(always)]
    fn lend_as<'a>(leaf: LeafRef<'a, Ns, L>) -> LeafRef<'a, Ns, L>
    where
        L: 'a,
    {
        leaf
    }
    #[inline(always)]
    fn lend_mut_as<'a>(leaf: LeafMut<'a, Ns, L>) -> LeafMut<'a, Ns, L>
    where
        L: 'a,
    {
        leaf
    }
    #[inline(always)]
    fn from_leaf(leaf: L) -> Result<L, Error> {
        Ok(leaf)
    }
}
