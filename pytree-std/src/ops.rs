//! The operations of the library, written once over a namespace: each
//! with its documentation, its signature (the namespace fixed, so calls
//! need no turbofish) and a one-line body that calls the generic engine in
//! `pytree-core`. Expanded with the documentation for [`Std`](crate::Std)
//! at this crate's root (`pytree_std::flatten`, ...; see `lib.rs`), and
//! without it for a
//! namespace of your own by [`ops_for!`](crate::ops_for) (or
//! [`namespace!`](crate::namespace)'s `ops = module`).
//!
//! To add an operation: write it generically in `pytree-core` (the
//! engine), then one entry here with its documentation and example.

/// Every operation of [`flatten`](crate::flatten) to
/// [`Treelize`](crate::Treelize), for namespace `$ns`, as functions of
/// the module the macro is called in (without documentation: see the
/// functions of the same names at this crate's root).
///
/// ```
/// use pytree_std::PyTree;
///
/// /// A namespace where a `Vec<f32>` is one leaf (a tensor), not a sequence.
/// pub struct Coarse;
/// pytree_std::std_containers!(Coarse);
/// pytree_std::impl_leaf!(Coarse => Vec<f32>);
///
/// /// Its operations: `coarse::flatten`, `coarse::map2`, ...
/// mod coarse {
///     pytree_std::ops_for!(super::Coarse);
/// }
///
/// #[derive(PyTree)]
/// #[pytree(namespace = Coarse)]
/// struct Layer { w: Vec<f32>, b: Vec<f32> }
///
/// fn main() -> Result<(), pytree_std::Error> {
///     let (leaves, def) = coarse::flatten(Layer { w: vec![1.0, 2.0], b: vec![0.0] });
///     assert_eq!(leaves, [vec![1.0, 2.0], vec![0.0]]);
///     assert_eq!(def.to_string(), "Layer { w: *, b: * }");
///     let layer = Layer { w: vec![1.0, 2.0], b: vec![0.5] };
///     let doubled = coarse::map2(&layer, &layer, |a, b| a.iter().zip(b).map(|(x, y)| x + y).collect())?;
///     assert_eq!(doubled.w, [2.0, 4.0]);
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! ops_for {
    ($ns:ty) => {
        $crate::__pytree_ops!(nodocs, $ns);
    };
}

/// One operation: its documentation kept (`docs`) or dropped (`nodocs`).
#[doc(hidden)]
#[macro_export]
macro_rules! __pytree_op {
    (docs [$($doc:tt)*] $($item:tt)*) => {
        $($doc)*
        $($item)*
    };
    (nodocs [$($doc:tt)*] $($item:tt)*) => {
        #[allow(missing_docs)]
        $($item)*
    };
}

/// The table of operations (see the module docs).
#[doc(hidden)]
#[macro_export]
macro_rules! __pytree_ops {
    ($mode:ident, $ns:ty) => {
        // ops: The operations with the namespace fixed to [`Std`], named after `jax.tree`: no turbofish, no namespace in sight.
        $crate::__pytree_op! { $mode [
            /// Splits a tree into its leaves (pre-order) and its [`TreeDef`]
            /// (JAX's `tree_flatten`).
            ///
            /// ```
            /// let (leaves, def) = pytree_std::flatten(vec![1.0, 2.0]);
            /// assert_eq!(leaves, [1.0, 2.0]);
            /// assert_eq!(def.to_string(), "[*, *]");
            /// ```
        ]
        pub fn flatten<T: $crate::Flatten<$ns>>(tree: T) -> (::std::vec::Vec<T::Leaf>, $crate::TreeDef) {
            $crate::__core::flatten::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Rebuilds a `T` from a [`TreeDef`] and leaves (JAX's `tree_unflatten`).
            /// Wrong leaf counts and TreeDefs of another shape are errors that name the
            /// key path.
            ///
            /// ```
            /// let def = pytree_std::structure(&(0, 0));
            /// let t: (i32, i32) = pytree_std::unflatten(&def, [1, 2])?;
            /// assert_eq!(t, (1, 2));
            /// let err = pytree_std::unflatten::<(i32, i32)>(&def, [1, 2, 3]).unwrap_err();
            /// assert_eq!(err.to_string(), "at <root>: too many leaves for TreeDef: expected 2, got 3");
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn unflatten<T: $crate::Unflatten<$ns>>(
            def: &$crate::TreeDef,
            leaves: impl ::core::iter::IntoIterator<Item = T::Leaf>,
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::unflatten::<$ns, T, _>(def, leaves)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The [`TreeDef`] of a borrowed tree (JAX's `tree_structure`).
            ///
            /// ```
            /// assert_eq!(pytree_std::structure(&Some((1, 2))).to_string(), "Some((*, *))");
            /// ```
        ]
        pub fn structure<T: $crate::Flatten<$ns>>(tree: &T) -> $crate::TreeDef {
            $crate::__core::structure::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The leaves in pre-order, lent by reference (JAX's `tree_leaves`):
            /// `&L` for scalars, a view for arrays ([`LeafRef`]).
            ///
            /// ```
            /// assert_eq!(pytree_std::leaves(&(1, [2, 3])), [&1, &2, &3]);
            /// ```
        ]
        pub fn leaves<T: $crate::Flatten<$ns>>(tree: &T) -> ::std::vec::Vec<$crate::LeafRef<'_, $ns, T::Leaf>> {
            $crate::__core::leaves::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Every leaf at once, lent by mutable reference for as long as the tree
            /// is borrowed: `&mut L` for scalars, a mutable view for arrays
            /// ([`LeafMut`]). The leaves are disjoint, so they can be updated in any
            /// order, or split across threads.
            ///
            /// ```
            /// let mut t = (1.0f32, vec![2.0f32, 3.0]);
            /// let mut all = pytree_std::leaves_mut(&mut t);
            /// let (first, rest) = all.split_at_mut(1);
            /// *first[0] += *rest[1]; // two leaves at once
            /// assert_eq!(t.0, 4.0);
            /// ```
        ]
        pub fn leaves_mut<T: $crate::Flatten<$ns>>(tree: &mut T) -> ::std::vec::Vec<$crate::LeafMut<'_, $ns, T::Leaf>> {
            $crate::__core::leaves_mut::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Applies `f` to every leaf, keeping structure and leaf type
            /// (JAX's `tree_map` with one tree). Builds no TreeDef.
            ///
            /// ```
            /// assert_eq!(pytree_std::map((1, vec![2]), |x| x + 1), (2, vec![3]));
            /// ```
        ]
        pub fn map<T: $crate::Flatten<$ns>>(tree: T, f: impl ::core::ops::FnMut(T::Leaf) -> T::Leaf) -> T {
            $crate::__core::map::<$ns, T, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Applies `f` to every leaf and rebuilds as a `U` with another leaf type,
            /// checked through the TreeDef.
            ///
            /// ```
            /// let t: Vec<f64> = pytree_std::map_into(vec![1.0f32], f64::from)?;
            /// assert_eq!(t, [1.0]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn map_into<T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns>>(
            tree: T,
            f: impl ::core::ops::FnMut(T::Leaf) -> U::Leaf,
        ) -> ::core::result::Result<U, $crate::Error> {
            $crate::__core::map_into::<$ns, T, U, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Combines two trees of the same type leaf by leaf (JAX's
            /// `tree_map(f, a, b)`). Lengths, keys, holes, variants and static fields
            /// must match; the error names the place where they do not, or lists every
            /// place ([`ErrorKind::Mismatches`](crate::ErrorKind::Mismatches)) when
            /// there are several.
            ///
            /// Leaves are lent by reference ([`LeafRef`]); array leaves must have the
            /// same signature (shape, dtype), else the error names the path and both.
            ///
            /// ```
            /// let sum = pytree_std::map2(&vec![1, 2], &vec![10, 20], |a, b| a + b)?;
            /// assert_eq!(sum, [11, 22]);
            /// let err = pytree_std::map2(&vec![1, 2], &vec![10], |a, b| a + b).unwrap_err();
            /// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 2, found 1");
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn map2<'a, T: $crate::Flatten<$ns>>(
            a: &'a T,
            b: &'a T,
            mut f: impl ::core::ops::FnMut($crate::LeafRef<'a, $ns, T::Leaf>, $crate::LeafRef<'a, $ns, T::Leaf>) -> T::Leaf,
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::map_n::<$ns, T, 1, _>(a, [b], |x, [y]| f(x, y))
        }
        }
        $crate::__pytree_op! { $mode [
            /// Combines `first` with `N` more trees of the same type, leaf by leaf
            /// (zero-cost for any fixed `N`: the others travel as an array of
            /// references). A mismatch error lists every place where the others differ
            /// from `first`.
            ///
            /// ```
            /// let t = pytree_std::map_n(&(1, 2), [&(10, 20), &(100, 200)], |a, [b, c]| a + b + c)?;
            /// assert_eq!(t, (111, 222));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn map_n<'a, T: $crate::Flatten<$ns>, const N: usize>(
            first: &'a T,
            others: [&'a T; N],
            f: impl ::core::ops::FnMut($crate::LeafRef<'a, $ns, T::Leaf>, [$crate::LeafRef<'a, $ns, T::Leaf>; N]) -> T::Leaf,
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::map_n::<$ns, T, N, _>(first, others, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Updates `tree` in place from `N` other trees of the same type, leaf by
            /// leaf: the SGD step `zip_mut(&mut params, [&grads], |p, [g]| *p -= lr * g)`.
            /// The structures (and the signatures of array leaves) are checked before
            /// the first update: on a mismatch, `tree` is unchanged. The leaf of
            /// `tree` is lent as [`LeafMut`], the others' as [`LeafRef`].
            ///
            /// ```
            /// let mut params = vec![1.0f64, 2.0];
            /// pytree_std::zip_mut(&mut params, [&vec![0.5, 0.5]], |p, [g]| *p -= g)?;
            /// assert_eq!(params, [0.5, 1.5]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn zip_mut<'a, T: $crate::Flatten<$ns>, const N: usize>(
            tree: &'a mut T,
            others: [&'a T; N],
            f: impl ::core::ops::FnMut($crate::LeafMut<'a, $ns, T::Leaf>, [$crate::LeafRef<'a, $ns, T::Leaf>; N]),
        ) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::zip_mut::<$ns, T, N, _>(tree, others, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Calls `f` on every leaf by reference ([`LeafRef`]).
            ///
            /// ```
            /// let mut n = 0;
            /// pytree_std::for_each(&vec![(1, 2)], |_| n += 1);
            /// assert_eq!(n, 2);
            /// ```
        ]
        pub fn for_each<'a, T: $crate::Flatten<$ns>>(tree: &'a T, f: impl ::core::ops::FnMut($crate::LeafRef<'a, $ns, T::Leaf>)) {
            $crate::__core::for_each::<$ns, T, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Calls `f` on every leaf by mutable reference ([`LeafMut`]): an
            /// in-place update.
            ///
            /// ```
            /// let mut t = (1.0f32, vec![2.0f32]);
            /// pytree_std::for_each_mut(&mut t, |x: &mut f32| *x *= 10.0);
            /// assert_eq!(t, (10.0, vec![20.0]));
            /// ```
        ]
        pub fn for_each_mut<'a, T: $crate::Flatten<$ns>>(
            tree: &'a mut T,
            f: impl ::core::ops::FnMut($crate::LeafMut<'a, $ns, T::Leaf>),
        ) {
            $crate::__core::for_each_mut::<$ns, T, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Applies a fallible `f` to every leaf and rebuilds a `U` (whose leaf type
            /// may differ). The first error of `f` comes back at its leaf's path, with
            /// `f`'s error as the [`source`](std::error::Error::source); a `U` of
            /// another structure is an error as in [`map_into`].
            ///
            /// ```
            /// let t: (u8, Vec<u8>) = pytree_std::try_map((1i32, vec![2i32]), u8::try_from)?;
            /// assert_eq!(t, (1, vec![2]));
            /// let err = pytree_std::try_map::<_, (u8, Vec<u8>), _>((1i32, vec![300i32]), u8::try_from).unwrap_err();
            /// assert_eq!(err.to_string(), "at [1][0]: the function failed: out of range integral type conversion attempted");
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn try_map<T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns>, E: $crate::LeafFnErr>(
            tree: T,
            f: impl ::core::ops::FnMut(T::Leaf) -> ::core::result::Result<U::Leaf, E>,
        ) -> ::core::result::Result<U, $crate::Error> {
            $crate::__core::try_map::<$ns, T, U, E, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Combines two trees of the same type leaf by leaf with a fallible `f`
            /// (for leaf operations that return `Result`, as candle's do). Structures
            /// and array signatures are checked first; the first error of `f` comes
            /// back at its leaf's path. The result is rebuilt through the TreeDef, so
            /// an array of another rank in a rank-typed field is an error, not a
            /// panic.
            ///
            /// ```
            /// let div = |a: &i32, b: &i32| a.checked_div(*b).ok_or("division by zero");
            /// assert_eq!(pytree_std::try_map2(&(6i32, vec![8i32]), &(3, vec![2]), div)?, (2, vec![4]));
            /// let err = pytree_std::try_map2(&(6i32, vec![8i32]), &(3, vec![0]), div).unwrap_err();
            /// assert_eq!(err.to_string(), "at [1][0]: the function failed: division by zero");
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn try_map2<T: $crate::Unflatten<$ns>, E: $crate::LeafFnErr>(
            a: &T,
            b: &T,
            mut f: impl for<'x> ::core::ops::FnMut(
                $crate::LeafRef<'x, $ns, T::Leaf>,
                $crate::LeafRef<'x, $ns, T::Leaf>,
            ) -> ::core::result::Result<T::Leaf, E>,
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::try_map_n::<$ns, T, 1, E, _>(a, [b], |x, [y]| f(x, y))
        }
        }
        $crate::__pytree_op! { $mode [
            /// [`map_n`] with a fallible `f`: checked as [`try_map2`] is.
            ///
            /// ```
            /// let t = pytree_std::try_map_n(&vec![1u8, 2], [&vec![3u8, 4], &vec![5u8, 250]], |a, [b, c]| {
            ///     a.checked_add(*b).and_then(|s| s.checked_add(*c)).ok_or("overflow")
            /// });
            /// assert_eq!(t.unwrap_err().to_string(), "at [1]: the function failed: overflow");
            /// ```
        ]
        pub fn try_map_n<T: $crate::Unflatten<$ns>, const N: usize, E: $crate::LeafFnErr>(
            first: &T,
            others: [&T; N],
            f: impl for<'x> ::core::ops::FnMut(
                $crate::LeafRef<'x, $ns, T::Leaf>,
                [$crate::LeafRef<'x, $ns, T::Leaf>; N],
            ) -> ::core::result::Result<T::Leaf, E>,
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::try_map_n::<$ns, T, N, E, _>(first, others, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// [`zip_mut`] with a fallible `f`. Structures and array signatures are
            /// checked before the first update (on a mismatch nothing changes). If `f`
            /// fails, the leaves before the failing one are updated, the failing leaf
            /// is as `f` left it, the rest are untouched, and the error names the
            /// failing leaf's path.
            ///
            /// ```
            /// let mut p = vec![1.0f64, 2.0, 3.0];
            /// let g = vec![0.5f64, f64::NAN, 0.5];
            /// let err = pytree_std::try_zip_mut(&mut p, [&g], |p, [g]| {
            ///     if g.is_nan() { return Err("NaN gradient"); }
            ///     *p -= g;
            ///     Ok(())
            /// })
            /// .unwrap_err();
            /// assert_eq!(err.to_string(), "at [1]: the function failed: NaN gradient");
            /// assert_eq!(p, [0.5, 2.0, 3.0]);
            /// ```
        ]
        pub fn try_zip_mut<T: $crate::Flatten<$ns>, const N: usize, E: $crate::LeafFnErr>(
            tree: &mut T,
            others: [&T; N],
            f: impl for<'x> ::core::ops::FnMut($crate::LeafMut<'x, $ns, T::Leaf>, [$crate::LeafRef<'x, $ns, T::Leaf>; N]) -> ::core::result::Result<(), E>,
        ) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::try_zip_mut::<$ns, T, N, E, _>(tree, others, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// [`for_each_mut`] with a fallible `f`, stopping at its first error,
            /// which names the leaf's path. After an error, the leaves before the
            /// failing one are updated, the failing leaf is as `f` left it, the rest
            /// are untouched.
            ///
            /// ```
            /// let mut t = (1u8, vec![200u8, 3]);
            /// let err = pytree_std::try_for_each_mut(&mut t, |x| {
            ///     *x = x.checked_mul(2).ok_or("overflow")?;
            ///     Ok::<(), &str>(())
            /// })
            /// .unwrap_err();
            /// assert_eq!(err.to_string(), "at [1][0]: the function failed: overflow");
            /// assert_eq!(t, (2, vec![200, 3]));
            /// ```
        ]
        pub fn try_for_each_mut<T: $crate::Flatten<$ns>, E: $crate::LeafFnErr>(
            tree: &mut T,
            f: impl for<'x> ::core::ops::FnMut($crate::LeafMut<'x, $ns, T::Leaf>) -> ::core::result::Result<(), E>,
        ) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::try_for_each_mut::<$ns, T, E, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Updates `N` trees in place in one pass while reading `M` more, leaf by
            /// leaf: `f([leaf of each mutable tree], [leaf of each other tree])`, as
            /// an optimizer updates parameters and moments from a gradient. Every
            /// tree is checked against the first before anything changes (structures
            /// and array signatures; trees numbered from 0, mutable ones first).
            ///
            /// ```
            /// use pytree_std::PyTree;
            /// #[derive(PyTree, Debug, PartialEq)]
            /// struct Linear { w: f32, b: f32 }
            /// let mut params = Linear { w: 1.0, b: 1.0 };
            /// let mut velocity = Linear { w: 0.0, b: 0.0 };
            /// let grads = Linear { w: 1.0, b: -1.0 };
            /// pytree_std::zip_mut_n([&mut params, &mut velocity], [&grads], |[p, v], [g]| {
            ///     *v = 0.9 * *v + g;
            ///     *p -= 0.1 * *v;
            /// })?;
            /// assert_eq!(params, Linear { w: 0.9, b: 1.1 });
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn zip_mut_n<T: $crate::Flatten<$ns>, const N: usize, const M: usize>(
            muts: [&mut T; N],
            refs: [&T; M],
            f: impl for<'x> ::core::ops::FnMut([$crate::LeafMut<'x, $ns, T::Leaf>; N], [$crate::LeafRef<'x, $ns, T::Leaf>; M]),
        ) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::zip_mut_n::<$ns, T, N, M, _>(muts, refs, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// [`zip_mut_n`] with a fallible `f`: the first error stops the pass and
            /// names its leaf's path; the leaves before it are updated in every
            /// mutable tree, the failing ones are as `f` left them, the rest are
            /// untouched.
            ///
            /// ```
            /// let (mut p, mut v) = (vec![1.0f64, 2.0], vec![0.0f64, 0.0]);
            /// let err = pytree_std::try_zip_mut_n([&mut p, &mut v], [&vec![4.0f64, -1.0]], |[p, v], [g]| {
            ///     *v += g;
            ///     *p -= v.sqrt();
            ///     if p.is_nan() { Err("NaN") } else { Ok(()) }
            /// })
            /// .unwrap_err();
            /// assert_eq!(err.to_string(), "at [1]: the function failed: NaN");
            /// ```
        ]
        pub fn try_zip_mut_n<T: $crate::Flatten<$ns>, const N: usize, const M: usize, E: $crate::LeafFnErr>(
            muts: [&mut T; N],
            refs: [&T; M],
            f: impl for<'x> ::core::ops::FnMut(
                [$crate::LeafMut<'x, $ns, T::Leaf>; N],
                [$crate::LeafRef<'x, $ns, T::Leaf>; M],
            ) -> ::core::result::Result<(), E>,
        ) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::try_zip_mut_n::<$ns, T, N, M, E, _>(muts, refs, f)
        }
        }
        // reduce: Reductions and queries with the namespace fixed to [`Std`]: [`fold`], [`reduce`], [`all`], [`any`], [`count`], [`num_leaves`], [`sum`], [`min`], [`max`] (JAX's `tree_reduce` / `tree_all`, optree's `tr
        $crate::__pytree_op! { $mode [
            /// Folds the leaves, lent by reference ([`LeafRef`]), into `init`, in pre-order (JAX's
            /// `tree_reduce(f, tree, initializer)`).
            ///
            /// ```
            /// let norm2 = pytree_std::fold(&(3.0f32, vec![4.0f32]), 0.0, |acc, x| acc + x * x);
            /// assert_eq!(norm2, 25.0);
            /// ```
        ]
        pub fn fold<'a, T: $crate::Flatten<$ns>, A>(
            tree: &'a T,
            init: A,
            f: impl ::core::ops::FnMut(A, $crate::LeafRef<'a, $ns, T::Leaf>) -> A,
        ) -> A {
            $crate::__core::fold::<$ns, T, A, _>(tree, init, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Combines the leaves by value, left to right, the first being the start
            /// (JAX's `tree_reduce(f, tree)`); `None` without leaves.
            ///
            /// ```
            /// assert_eq!(pytree_std::reduce((1, vec![2, 3]), |a, b| a * 10 + b), Some(123));
            /// ```
        ]
        pub fn reduce<T: $crate::Flatten<$ns>>(
            tree: T,
            f: impl ::core::ops::FnMut(T::Leaf, T::Leaf) -> T::Leaf,
        ) -> ::core::option::Option<T::Leaf> {
            $crate::__core::reduce::<$ns, T, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// True if `pred` holds for every leaf (JAX's `tree_all` with a predicate).
            ///
            /// ```
            /// assert!(pytree_std::all(&vec![1.0f64, 2.0], |x| x.is_finite()));
            /// assert!(pytree_std::all(&Vec::<f64>::new(), |_| false));
            /// ```
        ]
        pub fn all<'a, T: $crate::Flatten<$ns>>(
            tree: &'a T,
            pred: impl ::core::ops::FnMut($crate::LeafRef<'a, $ns, T::Leaf>) -> bool,
        ) -> bool {
            $crate::__core::all::<$ns, T, _>(tree, pred)
        }
        }
        $crate::__pytree_op! { $mode [
            /// True if `pred` holds for some leaf.
            ///
            /// ```
            /// assert!(pytree_std::any(&(1.0f64, f64::NAN), |x| x.is_nan()));
            /// ```
        ]
        pub fn any<'a, T: $crate::Flatten<$ns>>(
            tree: &'a T,
            pred: impl ::core::ops::FnMut($crate::LeafRef<'a, $ns, T::Leaf>) -> bool,
        ) -> bool {
            $crate::__core::any::<$ns, T, _>(tree, pred)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The number of leaves for which `pred` holds.
            ///
            /// ```
            /// assert_eq!(pytree_std::count(&(0i32, [1i32, 0, 2]), |x| *x == 0), 2);
            /// ```
        ]
        pub fn count<'a, T: $crate::Flatten<$ns>>(
            tree: &'a T,
            pred: impl ::core::ops::FnMut($crate::LeafRef<'a, $ns, T::Leaf>) -> bool,
        ) -> usize {
            $crate::__core::count::<$ns, T, _>(tree, pred)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The number of leaves.
            ///
            /// ```
            /// assert_eq!(pytree_std::num_leaves(&(1, vec![2, 3], None::<i32>)), 3);
            /// ```
        ]
        pub fn num_leaves<T: $crate::Flatten<$ns>>(tree: &T) -> usize {
            $crate::__core::num_leaves::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The sum of the leaves, left to right (zero without leaves).
            ///
            /// ```
            /// assert_eq!(pytree_std::sum(&(1, vec![2, 3])), 6);
            /// ```
        ]
        pub fn sum<'a, T: $crate::Flatten<$ns>>(tree: &'a T) -> T::Leaf
        where
            T::Leaf: ::core::iter::Sum<$crate::LeafRef<'a, $ns, T::Leaf>> + ::core::ops::Add<$crate::LeafRef<'a, $ns, T::Leaf>, Output = T::Leaf>,
        {
            $crate::__core::sum::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The smallest leaf; `None` without leaves. A NaN leaf (not comparable
            /// with itself) is the result, the first one found, as in `jnp.min`.
            ///
            /// ```
            /// assert_eq!(pytree_std::min(&(2.0, [1.0, 3.0])), Some(&1.0));
            /// assert!(pytree_std::min(&(2.0f64, [f64::NAN, 1.0])).is_some_and(|x| x.is_nan()));
            /// ```
        ]
        pub fn min<T: $crate::Flatten<$ns>>(tree: &T) -> ::core::option::Option<$crate::LeafRef<'_, $ns, T::Leaf>>
        where
            for<'a> $crate::LeafRef<'a, $ns, T::Leaf>: ::core::cmp::PartialOrd,
        {
            $crate::__core::min::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The largest leaf; `None` without leaves. Same NaN rule as [`min`].
            ///
            /// ```
            /// assert_eq!(pytree_std::max(&(2, [1, 3])), Some(&3));
            /// ```
        ]
        pub fn max<T: $crate::Flatten<$ns>>(tree: &T) -> ::core::option::Option<$crate::LeafRef<'_, $ns, T::Leaf>>
        where
            for<'a> $crate::LeafRef<'a, $ns, T::Leaf>: ::core::cmp::PartialOrd,
        {
            $crate::__core::max::<$ns, T>(tree)
        }
        }
        // at_path: Lookup and update by key path with the namespace fixed to [`Std`] (equinox's `tree_at`, in place): [`get`], [`update`], [`set`], [`set_subtree`]. Every error names the path.
        $crate::__pytree_op! { $mode [
            /// The leaf at `path`, lent by reference ([`LeafRef`]); an error naming
            /// the path if there is none (the path does not exist, or leads to a
            /// subtree or `None`).
            ///
            /// ```
            /// use pytree_std::{KeyPath, PyTree};
            /// #[derive(PyTree)]
            /// struct Linear { w: f32, b: f32 }
            /// let layers = vec![Linear { w: 1.0, b: 2.0 }];
            /// assert_eq!(pytree_std::get(&layers, &KeyPath::root().index(0).field("b")), Ok(&2.0));
            /// let err = pytree_std::get(&layers, &KeyPath::root().index(0)).unwrap_err();
            /// assert_eq!(err.to_string(), "at [0]: node mismatch: expected a leaf, found Linear { w: *, b: * }");
            /// ```
        ]
        pub fn get<'a, T: $crate::Flatten<$ns>>(
            tree: &'a T,
            path: &$crate::KeyPath,
        ) -> ::core::result::Result<$crate::LeafRef<'a, $ns, T::Leaf>, $crate::Error> {
            $crate::__core::get::<$ns, T>(tree, path)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Calls `f` on the leaf at `path` by mutable reference ([`LeafMut`]) and returns its
            /// result (equinox's `tree_at(..., replace_fn=f)`). On error the tree is
            /// unchanged.
            ///
            /// ```
            /// use pytree_std::KeyPath;
            /// let mut t = (1i32, vec![2i32, 3]);
            /// pytree_std::update(&mut t, &KeyPath::root().index(1).index(0), |x| *x *= 100)?;
            /// assert_eq!(t, (1, vec![200, 3]));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn update<T: $crate::Flatten<$ns>, R>(
            tree: &mut T,
            path: &$crate::KeyPath,
            f: impl ::core::ops::FnOnce($crate::LeafMut<'_, $ns, T::Leaf>) -> R,
        ) -> ::core::result::Result<R, $crate::Error> {
            $crate::__core::update::<$ns, T, R>(tree, path, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Replaces the leaf at `path` and returns the old one (equinox's
            /// `tree_at(..., replace=leaf)`). An array leaf keeps its shape: a new
            /// leaf of another shape is an error. On error the tree is unchanged.
            ///
            /// ```
            /// use pytree_std::KeyPath;
            /// let mut t = vec![1, 2];
            /// assert_eq!(pytree_std::set(&mut t, &KeyPath::root().index(0), 10), Ok(1));
            /// assert_eq!(t, [10, 2]);
            /// let err = pytree_std::set(&mut t, &KeyPath::root().index(2), 0).unwrap_err();
            /// assert_eq!(err.to_string(), "at [2]: no such key path: <root> has no child [2]");
            /// ```
        ]
        pub fn set<T: $crate::Flatten<$ns>>(tree: &mut T, path: &$crate::KeyPath, leaf: T::Leaf) -> ::core::result::Result<T::Leaf, $crate::Error> {
            $crate::__core::set::<$ns, T>(tree, path, leaf)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Replaces the subtree at `path` by `subtree`, whose TreeDef must equal
            /// the one there, and returns the old subtree (equinox's `tree_at` on a
            /// node). On error the tree is unchanged.
            ///
            /// ```
            /// use std::collections::BTreeMap;
            /// use pytree_std::KeyPath;
            /// let mut t = BTreeMap::from([("a".to_string(), vec![1, 2]), ("b".to_string(), vec![3])]);
            /// let old = pytree_std::set_subtree(&mut t, &KeyPath::root().key("a".to_string()), vec![7, 8])?;
            /// assert_eq!(old, [1, 2]);
            /// assert_eq!(t["a"], [7, 8]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn set_subtree<T, S>(tree: &mut T, path: &$crate::KeyPath, subtree: S) -> ::core::result::Result<S, $crate::Error>
        where
            T: $crate::Flatten<$ns>,
            S: $crate::Unflatten<$ns, Leaf = T::Leaf>,
        {
            $crate::__core::set_subtree::<$ns, T, S>(tree, path, subtree)
        }
        }
        // by_index: Leaves by their position in leaf order, with the namespace fixed to [`Std`]: the leaf at flat index `i` and its path, without flattening.
        $crate::__pytree_op! { $mode [
            /// The leaf at position `index` in leaf order (pre-order), lent by
            /// reference: `leaves(t)[i]` without building the `Vec`. An index past
            /// the last leaf is an error that says how many leaves there are.
            ///
            /// ```
            /// use pytree_std::{tree, Tree};
            /// let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => 2, "d" => 3 } };
            /// assert_eq!(pytree_std::leaf_at(&t, 2)?, &3);
            /// assert!(pytree_std::leaf_at(&t, 3).is_err());
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn leaf_at<T: $crate::Flatten<$ns>>(
            tree: &T,
            index: usize,
        ) -> ::core::result::Result<$crate::LeafRef<'_, $ns, T::Leaf>, $crate::Error> {
            $crate::__core::leaf_at::<$ns, T>(tree, index)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The leaf at position `index` in leaf order, lent by mutable reference.
            ///
            /// ```
            /// let mut t = (1.0f32, vec![2.0f32, 3.0]);
            /// *pytree_std::leaf_at_mut(&mut t, 2)? = 30.0;
            /// assert_eq!(t, (1.0, vec![2.0, 30.0]));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn leaf_at_mut<T: $crate::Flatten<$ns>>(
            tree: &mut T,
            index: usize,
        ) -> ::core::result::Result<$crate::LeafMut<'_, $ns, T::Leaf>, $crate::Error> {
            $crate::__core::leaf_at_mut::<$ns, T>(tree, index)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The key path (with its kind) of the leaf at position `index` in leaf
            /// order, without flattening. From a TreeDef:
            /// [`TreeDef::leaf_path`](crate::TreeDef::leaf_path) (optree's
            /// `treespec.paths()[i]`).
            ///
            /// ```
            /// let t = (1, vec![2, 3]);
            /// assert_eq!(pytree_std::leaf_path_at(&t, 2)?.to_string(), "[1][1]");
            /// assert_eq!(pytree_std::structure(&t).leaf_path(2), Some(pytree_std::leaf_path_at(&t, 2)?));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn leaf_path_at<T: $crate::Flatten<$ns>>(tree: &T, index: usize) -> ::core::result::Result<$crate::KeyPath, $crate::Error> {
            $crate::__core::leaf_path_at::<$ns, T>(tree, index)
        }
        }
        // with_path: The key-path operations with the namespace fixed to [`Std`]: each leaf comes with its [`KeyPath`] (JAX's `*_with_path` functions), whose [`kind`](KeyPath::kind) says whether it sits under a `#[pytree(
        $crate::__pytree_op! { $mode [
            /// Splits a tree into `(path, leaf)` pairs in pre-order and its [`TreeDef`]
            /// (JAX's `tree_flatten_with_path`).
            ///
            /// ```
            /// use pytree_std::PyTree;
            /// #[derive(PyTree)]
            /// struct Linear { w: f32, b: f32 }
            /// let (pairs, def) = pytree_std::flatten_with_path(vec![Linear { w: 1.0, b: 2.0 }]);
            /// assert_eq!(pairs[1].0.to_string(), "[0].b");
            /// assert_eq!(pairs[1].1, 2.0);
            /// assert_eq!(def.num_leaves(), 2);
            /// ```
        ]
        pub fn flatten_with_path<T: $crate::Flatten<$ns>>(tree: T) -> (::std::vec::Vec<($crate::KeyPath, T::Leaf)>, $crate::TreeDef) {
            $crate::__core::flatten_with_path::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The leaves, lent by reference ([`LeafRef`]), with their paths, in
            /// pre-order (JAX's `tree_leaves_with_path`).
            ///
            /// ```
            /// let t = (1, Some(2));
            /// let shown: Vec<String> = pytree_std::leaves_with_path(&t)
            ///     .into_iter()
            ///     .map(|(path, x)| format!("{path}: {x}"))
            ///     .collect();
            /// assert_eq!(shown, ["[0]: 1", "[1]: 2"]);
            /// ```
        ]
        pub fn leaves_with_path<T: $crate::Flatten<$ns>>(tree: &T) -> ::std::vec::Vec<($crate::KeyPath, $crate::LeafRef<'_, $ns, T::Leaf>)> {
            $crate::__core::leaves_with_path::<$ns, T>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Applies `f(path, leaf)` to every leaf and rebuilds a `U` (JAX's
            /// `tree_map_with_path`); the leaf type may change, checked through the
            /// TreeDef as in [`map_into`](crate::map_into).
            ///
            /// ```
            /// use pytree_std::KeyPath;
            /// let t: (String, Vec<String>) =
            ///     pytree_std::map_with_path((1, vec![2]), |path: &KeyPath, x: i32| format!("{path}={x}"))?;
            /// assert_eq!(t, ("[0]=1".to_string(), vec!["[1][0]=2".to_string()]));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn map_with_path<T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns>>(
            tree: T,
            f: impl ::core::ops::FnMut(&$crate::KeyPath, T::Leaf) -> U::Leaf,
        ) -> ::core::result::Result<U, $crate::Error> {
            $crate::__core::map_with_path::<$ns, T, U, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Calls `f(path, leaf)` on every leaf by reference ([`LeafRef`]), in pre-order.
            ///
            /// ```
            /// let mut paths = Vec::new();
            /// pytree_std::for_each_with_path(&vec![(1, 2)], |path, _| paths.push(path.to_string()));
            /// assert_eq!(paths, ["[0][0]", "[0][1]"]);
            /// ```
        ]
        pub fn for_each_with_path<'a, T: $crate::Flatten<$ns>>(
            tree: &'a T,
            f: impl ::core::ops::FnMut(&$crate::KeyPath, $crate::LeafRef<'a, $ns, T::Leaf>),
        ) {
            $crate::__core::for_each_with_path::<$ns, T, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Calls `f(path, leaf)` on every leaf by mutable reference ([`LeafMut`]): an in-place
            /// update that can depend on where (or of which kind) the leaf is.
            ///
            /// ```
            /// let mut t = (1.0f32, vec![1.0f32, 1.0]);
            /// pytree_std::for_each_mut_with_path(&mut t, |path, x| *x *= path.len() as f32);
            /// assert_eq!(t, (1.0, vec![2.0, 2.0]));
            /// ```
        ]
        pub fn for_each_mut_with_path<'a, T: $crate::Flatten<$ns>>(
            tree: &'a mut T,
            f: impl ::core::ops::FnMut(&$crate::KeyPath, $crate::LeafMut<'a, $ns, T::Leaf>),
        ) {
            $crate::__core::for_each_mut_with_path::<$ns, T, _>(tree, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Combines `first` with `N` more trees of the same type leaf by leaf,
            /// with the path of each leaf in `first` (JAX's
            /// `tree_map_with_path(f, tree, *rest)`): `f(path, leaf, [leaf of each
            /// other])`, rebuilt as a `U` of `first`'s structure (the leaf type may
            /// change). The structures are checked as in [`map_n`](crate::map_n)
            /// (array leaves: their signatures too), and a mismatch lists every
            /// difference. The dynamic tree's maps pair by key, whatever their order.
            ///
            /// ```
            /// use pytree_std::{tree, KeyPath, Tree};
            /// let a: Tree<i32> = tree! { "w" => 1, "b" => [2, 3] };
            /// let b: Tree<i32> = tree! { "b" => [20, 30], "w" => 10 }; // other order: paired by key
            /// let t: Tree<String> = pytree_std::map_with_path_n(&a, [&b], |path: &KeyPath, x: &i32, [y]: [&i32; 1]| {
            ///     format!("{path}={}", x + y)
            /// })?;
            /// assert_eq!(format!("{t:?}"), r#"{"w": "[\"w\"]=11", "b": ["[\"b\"][0]=22", "[\"b\"][1]=33"]}"#);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn map_with_path_n<'a, T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns>, const N: usize>(
            first: &'a T,
            others: [&'a T; N],
            f: impl ::core::ops::FnMut(&$crate::KeyPath, $crate::LeafRef<'a, $ns, T::Leaf>, [$crate::LeafRef<'a, $ns, T::Leaf>; N]) -> U::Leaf,
        ) -> ::core::result::Result<U, $crate::Error> {
            $crate::__core::map_with_path_n::<$ns, T, U, N, _>(first, others, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Calls `f(path, leaf, [leaf of each other])` on `first` and `N` more
            /// trees of the same type, in `first`'s leaf order, after the structure
            /// check of [`map_n`](crate::map_n) (on a mismatch `f` is never called).
            ///
            /// ```
            /// let mut diffs = Vec::new();
            /// pytree_std::for_each_with_path_n(&vec![1.0f32, 2.0], [&vec![1.0f32, 2.5]], |path, x, [y]| {
            ///     if x != y { diffs.push(path.to_string()) }
            /// })?;
            /// assert_eq!(diffs, ["[1]"]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn for_each_with_path_n<'a, T: $crate::Flatten<$ns>, const N: usize>(
            first: &'a T,
            others: [&'a T; N],
            f: impl ::core::ops::FnMut(&$crate::KeyPath, $crate::LeafRef<'a, $ns, T::Leaf>, [$crate::LeafRef<'a, $ns, T::Leaf>; N]),
        ) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::for_each_with_path_n::<$ns, T, N, _>(first, others, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Updates `tree` in place from `N` other trees of the same type, leaf by
            /// leaf, with paths: `f(path, leaf, [leaf of each other])` (the path-aware
            /// [`zip_mut`](crate::zip_mut)). Checked before the first update: on a
            /// mismatch `tree` is unchanged and the error lists every difference.
            ///
            /// ```
            /// use pytree_std::PyTree;
            /// #[derive(PyTree, Debug, PartialEq)]
            /// struct Layer { w: f32, #[pytree(kind = "state")] steps: f32 }
            /// let mut p = Layer { w: 1.0, steps: 0.0 };
            /// let g = Layer { w: 0.5, steps: 1.0 };
            /// pytree_std::zip_mut_with_path(&mut p, [&g], |path, x, [dx]| match path.kind() {
            ///     "state" => *x += dx,
            ///     _ => *x -= 0.1 * dx,
            /// })?;
            /// assert_eq!(p, Layer { w: 0.95, steps: 1.0 });
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn zip_mut_with_path<'a, T: $crate::Flatten<$ns>, const N: usize>(
            tree: &'a mut T,
            others: [&'a T; N],
            f: impl ::core::ops::FnMut(&$crate::KeyPath, $crate::LeafMut<'a, $ns, T::Leaf>, [$crate::LeafRef<'a, $ns, T::Leaf>; N]),
        ) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::zip_mut_with_path::<$ns, T, N, _>(tree, others, f)
        }
        }
        // multi: Comparing the structures of two trees with the namespace fixed to [`Std`]: every difference, with its key path.
        $crate::__pytree_op! { $mode [
            /// Checks that two trees (of any types, any leaf types) have the same
            /// structure; otherwise the error lists every place where `b` differs from
            /// `a` (dm-tree's `assert_same_structure`, as a value).
            ///
            /// ```
            /// use std::collections::BTreeMap;
            /// let a = BTreeMap::from([("a", vec![1.0f32, 2.0]), ("b", vec![3.0])]);
            /// let b = BTreeMap::from([("a", vec![0u8]), ("c", vec![0u8])]);
            /// pytree_std::check_same_structure(&a, &a.clone())?;
            /// let err = pytree_std::check_same_structure(&a, &b).unwrap_err();
            /// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)\
            ///     \n  tree 1 at <root>: map key mismatch; expected key(s): [\"a\", \"b\"], got key(s): [\"a\", \"c\"], \
            ///         missing key(s): [\"b\"], extra key(s): [\"c\"]\
            ///     \n  tree 1 at [\"a\"]: sequence length mismatch: expected 2, found 1");
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn check_same_structure<A: $crate::Flatten<$ns>, B: $crate::Flatten<$ns>>(a: &A, b: &B) -> ::core::result::Result<(), $crate::Error> {
            $crate::__core::check_same_structure::<$ns, A, B>(a, b)
        }
        }
        // partition: Filter, partition and combine with the namespace fixed to [`Std`] (equinox's `filter` / `partition` / `combine`, PAX's parameters versus state): a `T` is split into trees of the same structure with `O
        $crate::__pytree_op! { $mode [
            /// Splits `tree` into the leaves for which `pred(path, leaf)` holds and the
            /// others, each side with `None` holes where the other has a leaf
            /// (equinox's `partition`). PAX's split is
            /// `partition(model, |path, _| path.kind() == "param")`.
            ///
            /// ```
            /// use pytree_std::PyTree;
            /// #[derive(PyTree, Debug, PartialEq)]
            /// struct Counter<T> {
            ///     #[pytree(kind = "state")]
            ///     count: T,
            ///     bias: T,
            /// }
            /// let (params, state): (Counter<Option<f64>>, Counter<Option<f64>>) =
            ///     pytree_std::partition(Counter { count: 1.0, bias: 0.5 }, |path, _| path.kind() == "param")?;
            /// assert_eq!(params, Counter { count: None, bias: Some(0.5) });
            /// assert_eq!(state, Counter { count: Some(1.0), bias: None });
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn partition<T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns, Leaf = T::Leaf>>(
            tree: T,
            pred: impl ::core::ops::FnMut(&$crate::KeyPath, &T::Leaf) -> bool,
        ) -> ::core::result::Result<(U, U), $crate::Error> {
            $crate::__core::partition::<$ns, T, U, _>(tree, pred)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Keeps the leaves for which `pred(path, leaf)` holds, with `None` holes
            /// for the others (equinox's `filter`).
            ///
            /// ```
            /// let big: Vec<Option<i32>> = pytree_std::filter(vec![1, 20, 3], |_, x| *x > 10)?;
            /// assert_eq!(big, [None, Some(20), None]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn filter<T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns, Leaf = T::Leaf>>(
            tree: T,
            pred: impl ::core::ops::FnMut(&$crate::KeyPath, &T::Leaf) -> bool,
        ) -> ::core::result::Result<U, $crate::Error> {
            $crate::__core::filter::<$ns, T, U, _>(tree, pred)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Puts two trees of `Option` leaves back together (equinox's `combine`):
            /// at each leaf of `T` exactly one of them must hold a leaf, else the error
            /// names the path.
            ///
            /// ```
            /// let t: (i32, i32) = pytree_std::combine((Some(1), None), (None, Some(2)))?;
            /// assert_eq!(t, (1, 2));
            /// let err = pytree_std::combine::<_, (i32, i32)>((Some(1), None::<i32>), (None, None)).unwrap_err();
            /// assert_eq!(err.to_string(), "at [1]: none of the 2 trees holds a leaf here; combine needs exactly one");
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn combine<U: $crate::Flatten<$ns>, T: $crate::Unflatten<$ns, Leaf = U::Leaf>>(a: U, b: U) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::combine::<$ns, U, T, 2>([a, b])
        }
        }
        $crate::__pytree_op! { $mode [
            /// Puts `N` trees of `Option` leaves back together: [`combine`] for any
            /// number of parts.
            ///
            /// ```
            /// let t: [u8; 3] = pytree_std::combine_n([[Some(1u8), None, None], [None, Some(2), None], [None, None, Some(3)]])?;
            /// assert_eq!(t, [1, 2, 3]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn combine_n<U: $crate::Flatten<$ns>, T: $crate::Unflatten<$ns, Leaf = U::Leaf>, const N: usize>(
            parts: [U; N],
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::combine::<$ns, U, T, N>(parts)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Splits `tree` in two trees of its own type (equinox's
            /// `partition(tree, filter_spec, replace=..)`): the first keeps the leaves
            /// for which `pred(path, leaf)` holds, the second the others, and each has
            /// `fill(path, leaf)` where the other has the leaf.
            ///
            /// ```
            /// use pytree_std::PyTree;
            /// #[derive(PyTree, Debug, PartialEq)]
            /// struct Counter { #[pytree(kind = "state")] count: f64, bias: f64 }
            /// let (params, state) = pytree_std::partition_fill(
            ///     Counter { count: 3.0, bias: 0.5 },
            ///     |path, _| path.kind() == "param",
            ///     |_, _| 0.0,
            /// )?;
            /// assert_eq!(params, Counter { count: 0.0, bias: 0.5 });
            /// assert_eq!(state, Counter { count: 3.0, bias: 0.0 });
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn partition_fill<T: $crate::Unflatten<$ns>>(
            tree: T,
            pred: impl ::core::ops::FnMut(&$crate::KeyPath, &T::Leaf) -> bool,
            fill: impl ::core::ops::FnMut(&$crate::KeyPath, &T::Leaf) -> T::Leaf,
        ) -> ::core::result::Result<(T, T), $crate::Error> {
            $crate::__core::partition_fill::<$ns, T, _, _>(tree, pred, fill)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Keeps the leaves for which `pred(path, leaf)` holds and replaces the
            /// others by `fill(path, leaf)` (equinox's `filter(tree, filter_spec,
            /// replace=..)`), in the tree's own type.
            ///
            /// ```
            /// use pytree_std::{tree, Tree};
            /// let t: Tree<f32> = tree! { "w" => 2.0, "b" => -1.0 };
            /// let kept = pytree_std::filter_fill(t, |_, x| *x > 0.0, |_, _| f32::NAN)?;
            /// assert!(kept["b"].as_leaf().is_some_and(|x| x.is_nan()));
            /// assert_eq!(kept["w"], Tree::leaf(2.0));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn filter_fill<T: $crate::Unflatten<$ns>>(
            tree: T,
            pred: impl ::core::ops::FnMut(&$crate::KeyPath, &T::Leaf) -> bool,
            fill: impl ::core::ops::FnMut(&$crate::KeyPath, &T::Leaf) -> T::Leaf,
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::filter_fill::<$ns, T, _, _>(tree, pred, fill)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Rebuilds `tree`, whose leaves may sit in `Option`s, as a `T` with a
            /// plain leaf where `T` wants one (optree's `tree_replace_nones`):
            /// `Some(leaf)` gives the leaf, a `None` hole gives `fill()`. A dynamic
            /// tree turns every `None` into a leaf.
            ///
            /// ```
            /// use pytree_std::{tree, PyTree, Tree};
            /// #[derive(PyTree, Debug, PartialEq)]
            /// struct Linear<T> { w: T, b: T }
            /// let half = Linear { w: Some(1.0f32), b: None };
            /// assert_eq!(pytree_std::replace_nones::<_, Linear<f32>>(half, || 0.0)?, Linear { w: 1.0, b: 0.0 });
            /// let t: Tree<f32> = tree! { "w" => 1.0, "b" => None };
            /// assert_eq!(pytree_std::replace_nones::<_, Tree<f32>>(t, || 0.0)?, tree! { "w" => 1.0, "b" => 0.0 });
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn replace_nones<U: $crate::Flatten<$ns>, T: $crate::Unflatten<$ns, Leaf = U::Leaf>>(
            tree: U,
            fill: impl ::core::ops::FnMut() -> U::Leaf,
        ) -> ::core::result::Result<T, $crate::Error> {
            $crate::__core::replace_nones::<$ns, U, T, _>(tree, fill)
        }
        }
        // prefix: Prefix trees with the namespace fixed to [`Std`] (JAX's `in_axes`): a tree whose leaves may each stand for a whole subtree of a fuller tree. See [`pytree_core::Subtree`] for how a subtree reaches a fu
        $crate::__pytree_op! { $mode [
            /// For each leaf of the prefix `prefix`, the subtree of `tree` it stands
            /// for (JAX's `PyTreeDef.flatten_up_to`).
            ///
            /// ```
            /// use std::collections::BTreeMap;
            /// // in_axes (None, 0) against the arguments (a1, {"k1": a2, "k2": a3})
            /// let args = (1.0f32, BTreeMap::from([("k1", 2.0f32), ("k2", 3.0)]));
            /// let subs = pytree_std::flatten_up_to(&pytree_std::structure(&(0, 0)), args)?;
            /// assert_eq!(subs[0].leaves(), [1.0]);
            /// assert_eq!(subs[1].leaves(), [2.0, 3.0]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn flatten_up_to<T: $crate::Flatten<$ns>>(
            prefix: &$crate::TreeDef,
            tree: T,
        ) -> ::core::result::Result<::std::vec::Vec<$crate::Subtree<T::Leaf>>, $crate::Error> {
            $crate::__core::flatten_up_to::<$ns, T>(prefix, tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The prefix's leaves, one per leaf of `full` (optree's
            /// `broadcast_prefix`).
            ///
            /// ```
            /// assert_eq!(pytree_std::broadcast_prefix(&7, &(1, vec![2, 3]))?, [&7, &7, &7]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn broadcast_prefix<'p, P: $crate::Flatten<$ns>, T: $crate::Flatten<$ns>>(
            prefix: &'p P,
            full: &T,
        ) -> ::core::result::Result<::std::vec::Vec<$crate::LeafRef<'p, $ns, P::Leaf>>, $crate::Error> {
            $crate::__core::broadcast_prefix::<$ns, P, T>(prefix, full)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The prefix spelled out to `full`'s structure, as a `U` (optree's
            /// `tree_broadcast_prefix`). The prefix's leaves are cloned.
            ///
            /// ```
            /// let b: (u8, Vec<u8>) = pytree_std::broadcast(&(0u8, 1u8), &(1.0f32, vec![2.0f32, 3.0]))?;
            /// assert_eq!(b, (0, vec![1, 1]));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn broadcast<P, T, U>(prefix: &P, full: &T) -> ::core::result::Result<U, $crate::Error>
        where
            P: $crate::Flatten<$ns> + ::core::clone::Clone,
            P::Leaf: ::core::clone::Clone,
            T: $crate::Flatten<$ns>,
            U: $crate::Unflatten<$ns, Leaf = P::Leaf>,
        {
            $crate::__core::broadcast::<$ns, P, T, U>(prefix, full)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Maps over a prefix tree and a fuller one (JAX's `tree_map(f, prefix,
            /// full)`): `f` receives each prefix leaf with the whole subtree of `full`
            /// below it; the result has the prefix's structure.
            ///
            /// ```
            /// let sums: (i32, i32) = pytree_std::map_prefix(&(1, 2), &(vec![3, 4], 5), |p, sub| {
            ///     p * sub.leaves().iter().copied().sum::<i32>()
            /// })?;
            /// assert_eq!(sums, (7, 10));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn map_prefix<'p, 't, P, T, V, U>(
            prefix: &'p P,
            full: &'t T,
            f: impl ::core::ops::FnMut($crate::LeafRef<'p, $ns, P::Leaf>, $crate::Subtree<$crate::LeafRef<'t, $ns, T::Leaf>>) -> V,
        ) -> ::core::result::Result<U, $crate::Error>
        where
            P: $crate::Flatten<$ns>,
            T: $crate::Flatten<$ns>,
            V: $crate::Flatten<$ns>,
            U: $crate::Unflatten<$ns, Leaf = V::Leaf>,
        {
            $crate::__core::map_prefix::<$ns, P, T, V, U, _>(prefix, full, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Maps over a tree and a prefix of it (`vmap`'s arguments and
            /// `in_axes`): `f(leaf, prefix_leaf)` for every leaf of `tree`; the result
            /// has `tree`'s structure. The two may differ in type and leaf type.
            ///
            /// ```
            /// let scaled: (f32, Vec<f32>) = pytree_std::map_with_prefix(
            ///     &(1.0f32, vec![2.0f32, 3.0]),
            ///     &(10u8, 100u8),
            ///     |x, k| x * f32::from(*k),
            /// )?;
            /// assert_eq!(scaled, (10.0, vec![200.0, 300.0]));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn map_with_prefix<'t, 'p, T, P, V, U>(
            tree: &'t T,
            prefix: &'p P,
            f: impl ::core::ops::FnMut($crate::LeafRef<'t, $ns, T::Leaf>, $crate::LeafRef<'p, $ns, P::Leaf>) -> V,
        ) -> ::core::result::Result<U, $crate::Error>
        where
            T: $crate::Flatten<$ns>,
            P: $crate::Flatten<$ns>,
            V: $crate::Flatten<$ns>,
            U: $crate::Unflatten<$ns, Leaf = V::Leaf>,
        {
            $crate::__core::map_with_prefix::<$ns, T, P, V, U, _>(tree, prefix, f)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Two trees broadcast to their common suffix structure (optree's
            /// `tree_broadcast_common`): where one has a leaf and the other a
            /// subtree, the leaf is copied over that subtree, in either direction;
            /// elsewhere the structures must agree (the error lists every
            /// difference, about tree 1, `b`). Each result keeps its input's leaf
            /// type and, for the dynamic tree, its own map key order.
            ///
            /// ```
            /// use pytree_std::{tree, Tree};
            /// // tree_broadcast_common([1, {'a': (2, 3)}, {'a': 4, 'b': 5}], [6, 7, {'a': 8, 'b': (9, 10)}])
            /// let a: Tree<i32> = tree!([1, { "a" => [2, 3] }, { "a" => 4, "b" => 5 }]);
            /// let b: Tree<i32> = tree!([6, 7, { "b" => [9, 10], "a" => 8 }]);
            /// let (x, y): (Tree<i32>, Tree<i32>) = pytree_std::broadcast_common(a, b)?;
            /// assert_eq!(format!("{x:?}"), r#"[1, {"a": [2, 3]}, {"a": 4, "b": [5, 5]}]"#);
            /// assert_eq!(format!("{y:?}"), r#"[6, {"a": [7, 7]}, {"b": [9, 10], "a": 8}]"#);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn broadcast_common<A, B, UA, UB>(a: A, b: B) -> ::core::result::Result<(UA, UB), $crate::Error>
        where
            A: $crate::Flatten<$ns>,
            B: $crate::Flatten<$ns>,
            A::Leaf: ::core::clone::Clone,
            B::Leaf: ::core::clone::Clone,
            UA: $crate::Unflatten<$ns, Leaf = A::Leaf>,
            UB: $crate::Unflatten<$ns, Leaf = B::Leaf>,
        {
            $crate::__core::broadcast_common::<$ns, A, B, UA, UB>(a, b)
        }
        }
        $crate::__pytree_op! { $mode [
            /// The children of the root of `tree`, each as a [`Subtree`] (its TreeDef
            /// and leaves), and the root's one-level structure (JAX's
            /// `flatten_one_level`). A leaf has no level to flatten: an error.
            ///
            /// ```
            /// use pytree_std::{tree, Tree};
            /// let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => 2, "d" => 3 } };
            /// let (children, one) = pytree_std::flatten_one_level(t)?;
            /// assert_eq!(one.to_string(), r#"{"a": *, "x": *}"#);
            /// let (def, leaves) = children[1].clone().into_parts();
            /// let x: Tree<i32> = pytree_std::unflatten(&def, leaves)?;
            /// assert_eq!(format!("{x:?}"), r#"{"c": 2, "d": 3}"#);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
            #[allow(clippy::type_complexity)]
        ]
        // The pair JAX's `flatten_one_level` returns, spelled out.
        pub fn flatten_one_level<T: $crate::Flatten<$ns>>(
            tree: T,
        ) -> ::core::result::Result<(::std::vec::Vec<$crate::Subtree<T::Leaf>>, $crate::TreeDef), $crate::Error> {
            $crate::__core::flatten_one_level::<$ns, T>(tree)
        }
        }
        // transpose: Transposes with the namespace fixed to [`Std`]: a `Vec` of trees and a tree of `Vec`s (treevalue's `subside`), a tree of pairs and a pair of trees (`rise`), and JAX's general `tree.transpose`.
        $crate::__pytree_op! { $mode [
            /// Turns a tree of structure `outer.compose(inner)` into one of structure
            /// `inner.compose(outer)` (JAX's `tree.transpose`), checking the whole
            /// structure.
            ///
            /// ```
            /// let outer = pytree_std::structure(&(0, 0));
            /// let inner = pytree_std::structure(&vec![0, 0]);
            /// let t: Vec<(i32, i32)> = pytree_std::transpose(&outer, &inner, (vec![1, 2], vec![3, 4]))?;
            /// assert_eq!(t, [(1, 3), (2, 4)]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn transpose<T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns, Leaf = T::Leaf>>(
            outer: &$crate::TreeDef,
            inner: &$crate::TreeDef,
            tree: T,
        ) -> ::core::result::Result<U, $crate::Error> {
            $crate::__core::transpose::<$ns, T, U>(outer, inner, tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Stacks trees of one structure into one tree of sequences (treevalue's
            /// `subside`): `U` is the trees' type with `Vec<L>` for each leaf.
            ///
            /// ```
            /// let s: (Vec<i32>, Vec<i32>) = pytree_std::stack([(1, 2), (3, 4), (5, 6)])?;
            /// assert_eq!(s, (vec![1, 3, 5], vec![2, 4, 6]));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn stack<T: $crate::Flatten<$ns>, U: $crate::Unflatten<$ns, Leaf = T::Leaf>>(
            trees: impl ::core::iter::IntoIterator<Item = T>,
        ) -> ::core::result::Result<U, $crate::Error> {
            $crate::__core::stack::<$ns, T, U>(trees)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Splits a tree of sequences into trees (the inverse of [`stack`]).
            ///
            /// ```
            /// let trees: Vec<(i32, i32)> = pytree_std::unstack((vec![1, 3, 5], vec![2, 4, 6]))?;
            /// assert_eq!(trees, [(1, 2), (3, 4), (5, 6)]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn unstack<U: $crate::Flatten<$ns>, T: $crate::Unflatten<$ns, Leaf = U::Leaf>>(
            stacked: U,
        ) -> ::core::result::Result<::std::vec::Vec<T>, $crate::Error> {
            $crate::__core::unstack::<$ns, U, T>(stacked)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Pairs two trees of one structure into a tree of pairs.
            ///
            /// ```
            /// let z: Vec<(i32, i32)> = pytree_std::zip(vec![1, 2], vec![10, 20])?;
            /// assert_eq!(z, [(1, 10), (2, 20)]);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn zip<A, B, U>(a: A, b: B) -> ::core::result::Result<U, $crate::Error>
        where
            A: $crate::Flatten<$ns>,
            B: $crate::Flatten<$ns, Leaf = A::Leaf>,
            U: $crate::Unflatten<$ns, Leaf = A::Leaf>,
        {
            $crate::__core::zip::<$ns, A, B, U>(a, b)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Splits a tree of pairs into a pair of trees (the inverse of [`zip`]).
            ///
            /// ```
            /// let (a, b): (Vec<i32>, Vec<i32>) = pytree_std::unzip(vec![(1, 10), (2, 20)])?;
            /// assert_eq!((a, b), (vec![1, 2], vec![10, 20]));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn unzip<U, A, B>(tree: U) -> ::core::result::Result<(A, B), $crate::Error>
        where
            U: $crate::Flatten<$ns>,
            A: $crate::Unflatten<$ns, Leaf = U::Leaf>,
            B: $crate::Unflatten<$ns, Leaf = U::Leaf>,
        {
            $crate::__core::unzip::<$ns, U, A, B>(tree)
        }
        }
        $crate::__pytree_op! { $mode [
            /// Builds a pair of trees of structure `def` from one pair of values per
            /// leaf (treevalue's `rise`); the halves may be subtrees.
            ///
            /// ```
            /// let def = pytree_std::structure(&(0, 0));
            /// let (found, count): ((Option<usize>, Option<usize>), (usize, usize)) =
            ///     pytree_std::rise(&def, [(Some(1usize), 3usize), (None, 0)])?;
            /// assert_eq!(found, (Some(1), None));
            /// assert_eq!(count, (3, 0));
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub fn rise<VA, VB, A, B>(
            def: &$crate::TreeDef,
            pairs: impl ::core::iter::IntoIterator<Item = (VA, VB)>,
        ) -> ::core::result::Result<(A, B), $crate::Error>
        where
            VA: $crate::Flatten<$ns>,
            VB: $crate::Flatten<$ns>,
            A: $crate::Unflatten<$ns, Leaf = VA::Leaf>,
            B: $crate::Unflatten<$ns, Leaf = VB::Leaf>,
        {
            $crate::__core::rise::<$ns, VA, VB, A, B>(def, pairs)
        }
        }
        // treelize: [`Treelize`] with the namespace fixed to [`Std`]: a plain function of leaves applied to trees, with treevalue's modes (`mode::Strict` by default, `Inner`, `Outer`, `Left`), `missing` and `inherit`.
        $crate::__pytree_op! { $mode [
            /// [`pytree_core::Treelize`] in the standard namespace.
            ///
            /// ```
            /// use std::collections::BTreeMap;
            /// use pytree_std::Treelize;
            /// let mut add = Treelize::new(|a: &i32, b: &i32| a + b);
            /// let r: BTreeMap<&str, i32> = add.call2(&BTreeMap::from([("a", 1)]), &BTreeMap::from([("a", 2)]))?;
            /// assert_eq!(r["a"], 3);
            /// # Ok::<(), pytree_std::Error>(())
            /// ```
        ]
        pub type Treelize<F, M = $crate::mode::Strict, P = $crate::mode::NoMissing> = $crate::__core::Treelize<$ns, F, M, P>;
        }

    };
}
