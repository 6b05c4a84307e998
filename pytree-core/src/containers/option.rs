//! `Option<T>`: `Some(x)` is a node with one child, `None` a node with no
//! children (as in JAX, `None` is structure, not a leaf). `Some` adds no key
//! path entry: the path of the child is the path of the option.

use super::StdContainers;
use crate::__private::elements_hint;
use crate::error::{Error, ErrorKind};
use crate::leaf::{LeafMut, LeafRef};
use crate::sources::source::Source;
use crate::traits::flatten::defaults::all_some;
use crate::traits::flatten::{zip_mut_method, zip_with_method, Flatten, Unflatten};
use crate::traits::visit::{Sink, Visit, VisitMut};
use crate::treedef::node::NodeRef;

/// The error for an option that is `Some` in one tree and `None` in another.
#[cold]
fn hole_mismatch(first_is_some: bool, tree: usize) -> Error {
    let (expected, found) = if first_is_some {
        ("Some(_)", "None")
    } else {
        ("None", "Some(_)")
    };
    Error::new(ErrorKind::NodeMismatch {
        expected: expected.into(),
        found: found.into(),
    })
    .in_tree(tree)
}

/// Checks that every other option is `Some` exactly when the first is.
#[inline]
fn check_holes<T, const N: usize>(
    first_is_some: bool,
    others: [&Option<T>; N],
) -> Result<(), Error> {
    match others.iter().position(|o| o.is_some() != first_is_some) {
        None => Ok(()),
        Some(j) => Err(hole_mismatch(first_is_some, j + 1)),
    }
}

impl<Ns: StdContainers, T: Flatten<Ns>> Flatten<Ns> for Option<T> {
    type Leaf = T::Leaf;

    /// Uniform contents or 0: recursive types pass through
    /// options, and the hint must not walk a deep chain.
    #[inline]
    fn leaf_count_hint(&self) -> usize {
        self.as_ref().map_or(0, |_| elements_hint::<Ns, T>(1))
    }

    #[inline]
    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        match self {
            Some(x) => {
                sink.node(NodeRef::Some);
                x.flatten_into(sink);
            }
            None => sink.node(NodeRef::None),
        }
    }
    #[inline]
    fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V) {
        match self {
            Some(x) => {
                visitor.node(NodeRef::Some);
                x.visit(visitor);
            }
            None => visitor.node(NodeRef::None),
        }
    }
    #[inline]
    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V) {
        match self {
            Some(x) => {
                visitor.node(NodeRef::Some);
                x.visit_mut(visitor);
            }
            None => visitor.node(NodeRef::None),
        }
    }
    #[inline]
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        check_holes(self.is_some(), others)?;
        match self {
            Some(x) => x.zip_check(others.map(|o| o.as_ref().unwrap_or(x))),
            None => Ok(()),
        }
    }
    zip_mut_method!(N, |this, others, f| {
        // A `None` among the others (the check was skipped): nothing to do.
        if let (Some(x), Some(inner)) = (this, all_some(others.map(Option::as_ref))) {
            x.zip_mut_prechecked(inner, f);
        }
    });
}

impl<Ns: StdContainers, T: Unflatten<Ns>> Unflatten<Ns> for Option<T> {
    #[inline]
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        if source.option_node()? {
            T::unflatten_from(source).map(Some)
        } else {
            Ok(None)
        }
    }
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        self.map(|x| x.map_leaves(f))
    }
    // A `None` among the others (the check was skipped) is replaced by
    // `self`'s value.
    zip_with_method!(N, |this, others, f| this.as_ref().map(
        |x| x.zip_with_prechecked(others.map(|o| o.as_ref().unwrap_or(x)), f)
    ));
}
