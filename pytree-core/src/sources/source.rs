//! [`Source`]: what [`Unflatten`](crate::Unflatten) reads a value back
//! from, node by node and leaf by leaf (a TreeDef and its leaves through
//! [`DefSource`](crate::DefSource), a `Tree`, a checkpoint).

use alloc::vec::Vec;

use crate::error::Error;
use crate::paths::key_path::KeyEntry;
use crate::static_data::Static;
use crate::treedef::node::NodeView;
use crate::treedef::schema::Schema;

/// Where [`Unflatten`](crate::Unflatten) reads from: the nodes of a TreeDef and a stream of
/// leaves, in pre-order. Each method checks that the next node is the kind
/// the caller expects and says what it found otherwise.
///
/// ```
/// use pytree_std::{DefSource, Source};
/// let def = pytree_std::structure(&vec![1u8, 2]);
/// let mut src = DefSource::new(&def, vec![7u8, 8].into_iter());
/// assert_eq!(src.seq_node().unwrap(), 2);
/// assert_eq!(src.leaf().unwrap(), 7);
/// assert!(src.tuple_node(2).is_err());
/// ```
pub trait Source<L> {
    /// The next leaf.
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// let def = pytree_std::TreeDef::leaf();
    /// let mut src = DefSource::new(&def, vec![3u8].into_iter());
    /// assert_eq!(src.leaf().unwrap(), 3);
    /// assert!(src.leaf().is_err()); // the TreeDef has no second leaf
    /// ```
    fn leaf(&mut self) -> Result<L, Error>;
    /// The next `len` leaves, for a sequence of leaves.
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// let def = pytree_std::structure(&vec![0u8; 3]);
    /// let mut src = DefSource::new(&def, vec![1u8, 2].into_iter());
    /// assert_eq!(src.seq_node().unwrap(), 3);
    /// assert!(src.leaf_vec(3).is_err()); // only 2 leaves given
    /// ```
    fn leaf_vec(&mut self, len: usize) -> Result<Vec<L>, Error> {
        let mut out = Vec::with_capacity(len.min(1024));
        for i in 0..len {
            out.push(self.leaf().map_err(|e| e.at(KeyEntry::Index(i)))?);
        }
        Ok(out)
    }
    /// A struct or enum-variant node whose schema is one of `candidates`;
    /// returns the index of the one found. Its static fields follow through
    /// [`static_field`](Source::static_field).
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// #[derive(pytree_std::PyTree)]
    /// struct P { x: u8 }
    /// let def = pytree_std::structure(&(0u8, 0u8));
    /// let mut src = DefSource::new(&def, vec![1u8, 2].into_iter());
    /// assert!(src.struct_node(&[]).is_err()); // a tuple, not a struct
    /// ```
    fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error>;
    /// The next static field of the struct node just read.
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// let def = pytree_std::TreeDef::leaf();
    /// let mut src = DefSource::new(&def, vec![1u8].into_iter());
    /// assert!(src.static_field::<String>().is_err()); // no struct node was read
    /// ```
    fn static_field<T: Static>(&mut self) -> Result<T, Error>;
    /// A sequence node; returns its length.
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// let def = pytree_std::structure(&vec![0u8; 2]);
    /// let mut src = DefSource::new(&def, Vec::<u8>::new().into_iter());
    /// assert_eq!(src.seq_node().unwrap(), 2);
    /// ```
    fn seq_node(&mut self) -> Result<usize, Error>;
    /// A tuple node of this arity.
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// let def = pytree_std::structure(&(0u8, 0u8));
    /// let mut src = DefSource::new(&def, Vec::<u8>::new().into_iter());
    /// assert!(src.tuple_node(3).is_err());
    /// assert!(src.tuple_node(2).is_ok());
    /// ```
    fn tuple_node(&mut self, arity: usize) -> Result<(), Error>;
    /// A map node; returns its keys (in flattening order).
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// let def = pytree_std::structure(&std::collections::BTreeMap::from([("a", 0u8)]));
    /// let mut src = DefSource::new(&def, Vec::<u8>::new().into_iter());
    /// assert_eq!(src.map_node::<&str>().unwrap(), ["a"]);
    /// ```
    fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error>;
    /// An `Option` node; returns true for `Some`.
    ///
    /// ```
    /// use pytree_std::{DefSource, Source};
    /// let def = pytree_std::structure(&None::<u8>);
    /// let mut src = DefSource::new(&def, Vec::<u8>::new().into_iter());
    /// assert_eq!(src.option_node().unwrap(), false);
    /// ```
    fn option_node(&mut self) -> Result<bool, Error>;

    /// The next node, whatever its kind, for readers that accept any
    /// structure (a dynamic tree such as `pytree_std::Tree`). An internal
    /// node is consumed and described; a leaf is reported as
    /// [`NodeView::Leaf`] and *not* consumed: read it with
    /// [`leaf`](Source::leaf). The default says the source cannot do this.
    ///
    /// ```
    /// use pytree_std::{DefSource, NodeView, Source};
    /// let def = pytree_std::structure(&(1u8, None::<u8>));
    /// let mut src = DefSource::new(&def, vec![7u8].into_iter());
    /// assert!(matches!(src.any_node().unwrap(), NodeView::Tuple(2)));
    /// assert!(matches!(src.any_node().unwrap(), NodeView::Leaf));
    /// assert_eq!(src.leaf().unwrap(), 7);
    /// assert!(matches!(src.any_node().unwrap(), NodeView::None));
    /// ```
    fn any_node(&mut self) -> Result<NodeView, Error> {
        Err(Error::custom(
            "this source can only read the nodes its target type asks for",
        ))
    }
}
