//! Building and inspecting a [`TreeDef`] one node at a time: optree's
//! `treespec_leaf` / `treespec_none` / `treespec_tuple` / `treespec_list` /
//! `treespec_dict` and `PyTreeSpec.child` / `entries` / `one_level` /
//! `walk` (here `fold`) / `transform`, JAX's `treedef_tuple` and `treedef_children`.
//!
//! Constructors copy their children's records under one new record, so a
//! TreeDef built node by node is the same value (equal, same hash, same
//! `Display`) as the one `structure` gives for the matching Rust value.
//! Readers go through the [`Decoder`], iteratively: deep TreeDefs do not
//! overflow the stack.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use core::hash::Hasher;

use super::align::ChildKeys;
use super::checked::Fnv1a;
use super::compose::copy_into;
use super::{Decoder, Item, Record, TreeDef, TreeDefBuilder};
use crate::error::{Error, ErrorKind};
use crate::paths::key_path::{KeyEntry, KeyPath};
use crate::static_data::{Static, StaticValue};
use crate::treedef::display::describe_node;
use crate::treedef::node::NodeView;

/// The [`NodeView`] of a record and the statics it owns.
pub(crate) fn view_of(node: Record, statics: &[StaticValue]) -> NodeView {
    match node {
        Record::Struct(schema) => NodeView::Struct {
            schema,
            statics: statics.to_vec(),
        },
        Record::Seq(n) => NodeView::Seq(n),
        Record::Tuple(n) => NodeView::Tuple(n),
        Record::Map(len) => NodeView::Map {
            len,
            keys: statics
                .first()
                .cloned()
                .unwrap_or_else(|| StaticValue::keys::<()>(Vec::new())),
        },
        Record::Some => NodeView::Some,
        Record::None => NodeView::None,
        Record::Leaves(_) => NodeView::Leaf,
    }
}

/// The TreeDef of one node whose children are leaves.
fn one_level_of(node: Record, statics: &[StaticValue]) -> TreeDef {
    let mut b = TreeDefBuilder::new();
    b.raw(node, statics);
    b.leaves(node.arity());
    b.build()
}

/// A node record over copies of `children`.
fn node_over(node: Record, statics: &[StaticValue], children: &[TreeDef]) -> TreeDef {
    let mut b = TreeDefBuilder::new();
    b.raw(node, statics);
    for child in children {
        copy_into(&mut b, child);
    }
    b.build()
}

/// The error for a repeated map key.
#[cold]
fn repeated_key<K: Static>(key: &K) -> Error {
    Error::custom(format!("the key {key:?} appears twice")).at(KeyEntry::key(key.clone()))
}

impl TreeDef {
    /// The TreeDef of `None` (optree's `treespec_none`): a node without
    /// children, not a leaf.
    ///
    /// ```
    /// use pytree_std::TreeDef;
    /// assert_eq!(TreeDef::none(), pytree_std::structure(&None::<f32>));
    /// assert_eq!(TreeDef::none().num_leaves(), 0);
    /// ```
    pub fn none() -> TreeDef {
        one_level_of(Record::None, &[])
    }

    /// The TreeDef of `Some(child)`.
    ///
    /// ```
    /// use pytree_std::TreeDef;
    /// assert_eq!(TreeDef::some(TreeDef::leaf()), pytree_std::structure(&Some(1.0f32)));
    /// ```
    pub fn some(child: TreeDef) -> TreeDef {
        node_over(Record::Some, &[], &[child])
    }

    /// The TreeDef of a tuple of these children (optree's
    /// `treespec_tuple`, JAX's `treedef_tuple`).
    ///
    /// ```
    /// use pytree_std::TreeDef;
    /// let def = TreeDef::tuple([TreeDef::leaf(), TreeDef::seq(vec![TreeDef::leaf(); 2])]);
    /// assert_eq!(def.to_string(), "(*, [*, *])");
    /// assert_eq!(def, pytree_std::structure(&(1.0f32, vec![2.0f32, 3.0])));
    /// ```
    pub fn tuple(children: impl IntoIterator<Item = TreeDef>) -> TreeDef {
        let children: Vec<TreeDef> = children.into_iter().collect();
        node_over(Record::Tuple(children.len()), &[], &children)
    }

    /// The TreeDef of a sequence (`Vec`, `VecDeque`, array, the dynamic
    /// tree's sequences) of these children (optree's `treespec_list`).
    ///
    /// ```
    /// use pytree_std::{tree, Tree, TreeDef};
    /// let def = TreeDef::seq([TreeDef::leaf(), TreeDef::none()]);
    /// assert_eq!(def.to_string(), "[*, None]");
    /// let t: Tree<f32> = tree!([1.0, None]);
    /// assert_eq!(def, pytree_std::structure(&t));
    /// assert_eq!(TreeDef::seq(vec![TreeDef::leaf(); 3]), pytree_std::structure(&vec![0u8; 3]));
    /// ```
    pub fn seq(children: impl IntoIterator<Item = TreeDef>) -> TreeDef {
        let children: Vec<TreeDef> = children.into_iter().collect();
        node_over(Record::Seq(children.len()), &[], &children)
    }

    /// The TreeDef of a map with ordered keys (`BTreeMap`, `HashMap`;
    /// optree's `treespec_dict`): the entries are sorted by key, as those
    /// maps flatten. A repeated key is an error naming it.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::TreeDef;
    /// let def = TreeDef::dict([("w", TreeDef::leaf()), ("b", TreeDef::leaf())])?;
    /// assert_eq!(def.to_string(), r#"{"b": *, "w": *}"#);
    /// assert_eq!(def, pytree_std::structure(&BTreeMap::from([("w", 1.0f32), ("b", 0.0)])));
    /// let err = TreeDef::dict([("w", TreeDef::leaf()), ("w", TreeDef::none())]).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["w"]: the key "w" appears twice"#);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn dict<K: Static + Ord>(
        entries: impl IntoIterator<Item = (K, TreeDef)>,
    ) -> Result<TreeDef, Error> {
        let mut entries: Vec<(K, TreeDef)> = entries.into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(repeated_key(&w[0].0));
        }
        let (keys, children): (Vec<K>, Vec<TreeDef>) = entries.into_iter().unzip();
        let keys = StaticValue::ordered_keys(keys);
        Ok(node_over(Record::Map(children.len()), &[keys], &children))
    }

    /// The TreeDef of a map whose entries keep the order given (the
    /// dynamic tree's maps, whose keys are `String`s in insertion order).
    /// A repeated key is an error naming it.
    ///
    /// ```
    /// use pytree_std::{tree, Tree, TreeDef};
    /// let def = TreeDef::dict_in_order([("w".to_string(), TreeDef::leaf()), ("b".to_string(), TreeDef::leaf())])?;
    /// assert_eq!(def.to_string(), r#"{"w": *, "b": *}"#);
    /// let t: Tree<f32> = tree! { "w" => 1.0, "b" => 0.0 };
    /// assert_eq!(def, pytree_std::structure(&t));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn dict_in_order<K: Static>(
        entries: impl IntoIterator<Item = (K, TreeDef)>,
    ) -> Result<TreeDef, Error> {
        let (keys, children): (Vec<K>, Vec<TreeDef>) = entries.into_iter().unzip();
        // Repeated keys, found in O(n log n) without `Ord`: sort the
        // positions by hash, compare the keys of equal hashes.
        let hash = |k: &K| {
            let mut h = Fnv1a::new();
            k.hash(&mut h);
            h.finish()
        };
        let mut by_hash: Vec<(u64, usize)> = keys.iter().map(hash).zip(0..).collect();
        by_hash.sort_unstable();
        for (i, &(h, a)) in by_hash.iter().enumerate() {
            let same_hash = by_hash[i + 1..].iter().take_while(|(g, _)| *g == h);
            if let Some(&(_, b)) = same_hash.clone().find(|&&(_, b)| keys[a] == keys[b]) {
                return Err(repeated_key(&keys[a.min(b)]));
            }
        }
        let keys = StaticValue::keys(keys);
        Ok(node_over(Record::Map(children.len()), &[keys], &children))
    }

    /// One node over these children, whatever its kind: the node a
    /// [`NodeView`] describes (with its static data: a struct's static
    /// fields, a map's keys), its children replaced by `children` (JAX's
    /// `PyTreeDef.make_from_node_data_and_children`). The inverse of
    /// [`root_node`](TreeDef::root_node) and [`children`](TreeDef::children).
    /// The number of children (and of a struct's static fields, and of a
    /// map's keys) must be the node's, else an error says both.
    ///
    /// ```
    /// use pytree_std::{PyTree, TreeDef};
    /// #[derive(PyTree)]
    /// struct Linear { w: f32, b: f32, #[pytree(static)] name: String }
    /// let def = pytree_std::structure(&Linear { w: 1.0, b: 2.0, name: "l".into() });
    /// let rebuilt = TreeDef::from_node(&def.root_node(), def.children()?)?;
    /// assert_eq!(rebuilt, def);
    /// // A struct node over other children: a Linear whose `b` is a pair.
    /// let wider = TreeDef::from_node(&def.root_node(), [TreeDef::leaf(), TreeDef::tuple(vec![TreeDef::leaf(); 2])])?;
    /// assert_eq!(wider.to_string(), r#"Linear { w: *, b: (*, *), name: "l" }"#);
    /// let err = TreeDef::from_node(&def.root_node(), [TreeDef::leaf()]).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: Linear takes 2 children, got 1");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn from_node(
        node: &NodeView,
        children: impl IntoIterator<Item = TreeDef>,
    ) -> Result<TreeDef, Error> {
        let children: Vec<TreeDef> = children.into_iter().collect();
        let (record, statics): (Record, Vec<StaticValue>) = match node {
            NodeView::Leaf => {
                return match children.len() {
                    0 => Ok(TreeDef::leaf()),
                    n => Err(Error::custom(format!("a leaf takes no children, got {n}"))),
                };
            }
            NodeView::Struct { schema, statics } => {
                super::validate::check_schema(schema, super::TreeDefLimits::current())
                    .map_err(Error::custom)?;
                if statics.len() != schema.num_static() {
                    return Err(Error::custom(format!(
                        "{} has {} static fields, got {}",
                        schema.display_name(),
                        schema.num_static(),
                        statics.len()
                    )));
                }
                (Record::Struct(schema), statics.clone())
            }
            NodeView::Seq(n) => (Record::Seq(*n), Vec::new()),
            NodeView::Tuple(n) => (Record::Tuple(*n), Vec::new()),
            NodeView::Map { len, keys } => {
                if keys.item_count() != *len {
                    return Err(Error::custom(format!(
                        "a map of {len} entries needs {len} keys, got {}",
                        keys.item_count()
                    )));
                }
                super::validate::check_keys(keys, *len).map_err(Error::custom)?;
                (Record::Map(*len), vec![keys.clone()])
            }
            NodeView::Some => (Record::Some, Vec::new()),
            NodeView::None => (Record::None, Vec::new()),
        };
        if children.len() != record.arity() {
            return Err(Error::custom(format!(
                "{} takes {} children, got {}",
                describe_node(record),
                record.arity(),
                children.len()
            )));
        }
        Ok(node_over(record, &statics, &children))
    }

    /// The root node with its static data (a struct's static fields, a
    /// map's keys); [`NodeView::Leaf`] for a leaf (JAX's `node_data`,
    /// optree's `kind` and `type`).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::NodeView;
    /// let def = pytree_std::structure(&BTreeMap::from([("a", 1u8), ("b", 2)]));
    /// let NodeView::Map { len, keys } = def.root_node() else { panic!() };
    /// assert_eq!((len, keys.item_debug(1)), (2, "\"b\"".to_string()));
    /// assert!(matches!(pytree_std::TreeDef::leaf().root_node(), NodeView::Leaf));
    /// ```
    pub fn root_node(&self) -> NodeView {
        match Decoder::new(self).next_item() {
            Some(Item::Node(node, statics)) => view_of(node, statics),
            Some(Item::Leaf) | None => NodeView::Leaf,
        }
    }

    /// Number of children of the root (optree's `num_children`; 0 for a
    /// leaf).
    ///
    /// ```
    /// assert_eq!(pytree_std::structure(&(1u8, vec![2u8, 3])).num_children(), 2);
    /// ```
    pub fn num_children(&self) -> usize {
        match Decoder::new(self).next_item() {
            Some(Item::Node(node, _)) => node.arity(),
            _ => 0,
        }
    }

    /// The TreeDef of the root's child `i` (optree's `child(i)`), or `None`
    /// past the last child. Only child `i` is copied; the children before
    /// it are skipped.
    ///
    /// ```
    /// let def = pytree_std::structure(&(1u8, vec![2u8, 3]));
    /// assert_eq!(def.child(1).map(|d| d.to_string()), Some("[*, *]".to_string()));
    /// assert_eq!(def.child(2), None);
    /// ```
    pub fn child(&self, i: usize) -> Option<TreeDef> {
        let mut decoder = Decoder::new(self);
        match decoder.next_item() {
            Some(Item::Node(node, _)) if i < node.arity() => {
                decoder.skip_subtrees(i);
                Some(decoder.copy_subtree())
            }
            _ => None,
        }
    }

    /// How the root's children are reached: for each child, the key-path
    /// entries from the root to it (optree's `entries()`): a field
    /// (`.w`), an index (`[0]`), a map key (`["a"]`), a variant and a field
    /// (`::Circle.r`), or nothing (the child of `Some`). Empty for a leaf.
    ///
    /// ```
    /// use pytree_std::PyTree;
    /// #[derive(PyTree)]
    /// struct Linear { w: f32, b: f32 }
    /// let def = pytree_std::structure(&Linear { w: 1.0, b: 2.0 });
    /// let entries: Vec<String> = def.entries()?.iter().map(|p| p.to_string()).collect();
    /// assert_eq!(entries, [".w", ".b"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    ///
    /// A node may claim billions of children in one record; when their
    /// paths would need more memory than the
    /// [output budget](crate::TreeDefLimits::output_budget), the result is
    /// an error, returned before anything is allocated.
    pub fn entries(&self) -> Result<Vec<KeyPath>, Error> {
        let Some(Item::Node(node, statics)) = Decoder::new(self).next_item() else {
            return Ok(Vec::new());
        };
        // A path of at most two entries (a variant and a field) per child.
        let bytes = super::budget::mul_add(
            node.arity(),
            core::mem::size_of::<KeyPath>() + 2 * core::mem::size_of::<KeyEntry>(),
            0,
        );
        super::budget::check_output(self, "the entries of this TreeDef", bytes)?;
        let keys = ChildKeys::of(node, statics);
        let mut out = Vec::with_capacity(node.arity());
        for j in 0..node.arity() {
            // Exactly the room counted above.
            let mut entries = Vec::with_capacity(2);
            keys.push(j, &mut entries);
            out.push(KeyPath::from_entries(entries));
        }
        Ok(out)
    }

    /// The root node alone, with a leaf for each child (optree's
    /// `one_level()`); a leaf for a leaf.
    ///
    /// ```
    /// let def = pytree_std::structure(&(1u8, vec![2u8, 3], None::<u8>));
    /// assert_eq!(def.one_level().to_string(), "(*, *, *)");
    /// assert!(def.one_level().is_one_level());
    /// assert!(!def.is_one_level());
    /// ```
    pub fn one_level(&self) -> TreeDef {
        match Decoder::new(self).next_item() {
            Some(Item::Node(node, statics)) => one_level_of(node, statics),
            Some(Item::Leaf) | None => TreeDef::leaf(),
        }
    }

    /// True when the TreeDef is one node whose children are all leaves
    /// (optree's `is_one_level()`). A leaf is not; a node without children
    /// (`None`, `()`) is.
    ///
    /// ```
    /// assert!(pytree_std::structure(&vec![1u8, 2]).is_one_level());
    /// assert!(pytree_std::TreeDef::none().is_one_level());
    /// assert!(!pytree_std::TreeDef::leaf().is_one_level());
    /// ```
    pub fn is_one_level(&self) -> bool {
        let mut decoder = Decoder::new(self);
        match decoder.next_item() {
            Some(Item::Node(node, _)) => {
                let arity = node.arity();
                let mut leaves = 0;
                while leaves < arity {
                    match decoder.take_leaves(arity - leaves) {
                        0 => return false,
                        k => leaves += k,
                    }
                }
                decoder.at_end()
            }
            _ => false,
        }
    }

    /// Folds the structure bottom-up over `leaves` (optree's and JAX's
    /// `walk(f_node, f_leaf, leaves)`): each leaf becomes `f_leaf(leaf)`,
    /// each node `f_node(node, results of its children)`. Pass
    /// `0..def.num_leaves()` to fold over the structure alone (each leaf
    /// is then its index). Iterative. Too few or too many leaves is an
    /// error naming the place. The results of the children of every open
    /// node are held until the node is folded: when that could take more
    /// memory than the [output
    /// budget](crate::TreeDefLimits::output_budget) (one `R` per node of
    /// the TreeDef), the fold is an error before it starts.
    ///
    /// ```
    /// use pytree_std::NodeView;
    /// let def = pytree_std::structure(&(1, vec![2, 3], None::<i32>));
    /// // Print the structure with leaves as given, Python style.
    /// let shown = def.fold(["a", "b", "c"], |x| x.to_string(), |node, kids| match node {
    ///     NodeView::Seq(_) => format!("[{}]", kids.join(", ")),
    ///     NodeView::Tuple(_) => format!("({})", kids.join(", ")),
    ///     NodeView::None => "None".to_string(),
    ///     _ => kids.concat(),
    /// })?;
    /// assert_eq!(shown, "(a, [b, c], None)");
    /// // Depth of the structure.
    /// let depth = def.fold(0..def.num_leaves(), |_| 0, |_, kids| 1 + kids.into_iter().max().unwrap_or(0))?;
    /// assert_eq!(depth, 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn fold<L, R>(
        &self,
        leaves: impl IntoIterator<Item = L>,
        mut f_leaf: impl FnMut(L) -> R,
        mut f_node: impl FnMut(&NodeView, Vec<R>) -> R,
    ) -> Result<R, Error> {
        struct Open<R> {
            node: NodeView,
            arity: usize,
            done: Vec<R>,
        }
        // Held at once: at most one result per node (the children of the
        // open nodes), and one open node per level.
        let bytes = super::budget::mul_add(
            self.num_nodes(),
            core::mem::size_of::<R>(),
            self.node_depth()
                .saturating_mul(core::mem::size_of::<Open<R>>()),
        );
        super::budget::check_output(self, "a fold of this TreeDef", bytes)?;
        let mut leaves = leaves.into_iter();
        let mut used = 0;
        let mut decoder = Decoder::new(self);
        let mut stack: Vec<Open<R>> = Vec::new();
        loop {
            let mut result = match decoder.next_item() {
                None => return Err(Error::custom("the TreeDef ended early")),
                Some(Item::Leaf) => match leaves.next() {
                    Some(leaf) => {
                        used += 1;
                        f_leaf(leaf)
                    }
                    None => return Err(self.too_few_leaves(used)),
                },
                Some(Item::Node(node, statics)) if node.arity() > 0 => {
                    stack.push(Open {
                        node: view_of(node, statics),
                        arity: node.arity(),
                        done: Vec::with_capacity(node.arity().min(1024)),
                    });
                    continue;
                }
                Some(Item::Node(node, statics)) => f_node(&view_of(node, statics), Vec::new()),
            };
            // Hand the result to its parent; close every node now complete.
            loop {
                let Some(top) = stack.last_mut() else {
                    let extra = leaves.count();
                    if extra > 0 {
                        return Err(Error::new(ErrorKind::TooManyLeaves {
                            expected: self.num_leaves(),
                            found: used + extra,
                        }));
                    }
                    return Ok(result);
                };
                top.done.push(result);
                if top.done.len() < top.arity {
                    break;
                }
                let Some(open) = stack.pop() else {
                    return Err(Error::custom("the TreeDef ended early"));
                };
                result = f_node(&open.node, open.done);
            }
        }
    }

    /// The error for leaves that ran out at leaf `used`, at its path.
    #[cold]
    fn too_few_leaves(&self, used: usize) -> Error {
        let err = Error::new(ErrorKind::TooFewLeaves {
            expected: self.num_leaves(),
            found: used,
        });
        match self.leaf_path(used) {
            Some(path) => err.under(&path),
            None => err,
        }
    }

    /// A new structure, node by node (optree's `transform(f_node,
    /// f_leaf)`): each node is replaced by `f_node(path, one_level)`, where
    /// `one_level` is the node with a leaf for each child (see
    /// [`one_level`](TreeDef::one_level)); the result's leaves, in order,
    /// are where the transformed children go, so it must have one leaf per
    /// child. Each leaf is replaced by `f_leaf(path)`. Returning the
    /// argument keeps a node (or, with `TreeDef::leaf()`, a leaf) as it
    /// is. Top-down and iterative: deep TreeDefs are fine, and each record
    /// is written once.
    ///
    /// Bounded: `f_node` and `f_leaf` are called once per node and leaf,
    /// and a document of a few bytes may claim billions of leaves, so a
    /// TreeDef with more nodes and leaves than the [work
    /// budget](crate::TreeDefLimits::work_budget) is an error before the
    /// first call; a result that grows past the [output
    /// budget](crate::TreeDefLimits::output_budget) stops the transform
    /// with an error.
    ///
    /// Errors (from `f_node`, or a result with the wrong number of leaves)
    /// name the node's path.
    ///
    /// ```
    /// use pytree_std::{NodeView, TreeDef};
    /// let def = pytree_std::structure(&(1u8, vec![2u8, 3]));
    /// // Tuples become sequences, and every leaf a pair of leaves.
    /// let pair = TreeDef::tuple([TreeDef::leaf(), TreeDef::leaf()]);
    /// let t = def.transform(
    ///     |_, node| Ok(match node.root_node() {
    ///         NodeView::Tuple(n) => TreeDef::seq(vec![TreeDef::leaf(); n]),
    ///         _ => node.clone(),
    ///     }),
    ///     |_| pair.clone(),
    /// )?;
    /// assert_eq!(t.to_string(), "[(*, *), [(*, *), (*, *)]]");
    /// // A node replaced by a structure with the wrong number of leaves.
    /// let err = def.transform(|_, _| Ok(TreeDef::leaf()), |_| TreeDef::leaf()).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: the transformed node must have 2 leaves \
    ///     (one per child of (*, *)), found 1: *");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn transform(
        &self,
        mut f_node: impl FnMut(&KeyPath, &TreeDef) -> Result<TreeDef, Error>,
        mut f_leaf: impl FnMut(&KeyPath) -> TreeDef,
    ) -> Result<TreeDef, Error> {
        /// The template of a transformed node being written: its records
        /// (leaves are where the original children go), and how the
        /// original node names its children.
        struct Open {
            template: Template,
            keys: ChildKeys,
            next: usize,
            path_len: usize,
        }
        // One call of `f_node` or `f_leaf` per node and leaf.
        super::budget::check_work(self, "this transform", Some(self.num_nodes()))?;
        let budget = crate::treedef::TreeDefLimits::current().output_budget(self);
        // Room for as many records as `self` has (what an identity
        // transform writes), so that the result does not grow by doubling.
        let mut out = TreeDefBuilder::with_capacity(
            self.num_records()
                .min(budget / core::mem::size_of::<Record>()),
        );
        let mut decoder = Decoder::new(self);
        let mut path = KeyPath::root();
        let mut stack: Vec<Open> = Vec::new();
        // Writes the original subtree the decoder is at: a leaf at once, a
        // node by opening its template.
        let mut subtree = |decoder: &mut Decoder<'_>,
                           path: &KeyPath,
                           out: &mut TreeDefBuilder,
                           stack: &mut Vec<Open>|
         -> Result<(), Error> {
            match decoder.next_item() {
                None => Err(Error::custom("the TreeDef ended early").under(path)),
                Some(Item::Leaf) => {
                    copy_into(out, &f_leaf(path));
                    Ok(())
                }
                Some(Item::Node(node, statics)) => {
                    let one = one_level_of(node, statics);
                    let new = f_node(path, &one).map_err(|e| e.under(path))?;
                    if new.num_leaves() != node.arity() {
                        return Err(Error::custom(format!(
                                "the transformed node must have {} leaves (one per child of {one}), found {}: {new}",
                                node.arity(),
                                new.num_leaves()
                            )).under(path));
                    }
                    stack.push(Open {
                        template: Template::of(&new),
                        keys: ChildKeys::of(node, statics),
                        next: 0,
                        path_len: path.len(),
                    });
                    Ok(())
                }
            }
        };
        subtree(&mut decoder, &path, &mut out, &mut stack)?;
        while !stack.is_empty() {
            // The result, and the templates of the open nodes, within the
            // output budget (an identity transform of a run of 2^32 leaves
            // writes one record, however many steps it takes).
            let held = out
                .records_written()
                .saturating_mul(core::mem::size_of::<Record>())
                .saturating_add(stack.len().saturating_mul(core::mem::size_of::<Open>()));
            if held > budget {
                let err = super::budget::over_budget(self, "this transform", Some(held));
                return Err(err.under(&path));
            }
            let top = match stack.last_mut() {
                Some(top) => top,
                None => break,
            };
            match top.template.next() {
                None => {
                    stack.pop();
                }
                Some(Some((node, statics))) => out.raw(node, &statics),
                Some(None) => {
                    // A leaf of the template: the next original child.
                    while path.len() > top.path_len {
                        path.pop();
                    }
                    let mut entries: Vec<KeyEntry> = Vec::new();
                    top.keys.push(top.next, &mut entries);
                    top.next += 1;
                    for entry in entries {
                        path.push(entry);
                    }
                    subtree(&mut decoder, &path, &mut out, &mut stack)?;
                }
            }
        }
        Ok(out.build())
    }
}

/// The records of a transformed node's result in pre-order, owned, read
/// one item per leaf (`None`) without splitting runs in memory: a template
/// of `[*; 2^32]` is two records, not 2^32 items.
struct Template {
    records: alloc::vec::IntoIter<(Record, Vec<StaticValue>)>,
    /// Leaves left of the run being read.
    run_left: usize,
}

impl Template {
    fn of(def: &TreeDef) -> Self {
        let mut records = Vec::with_capacity(def.num_records());
        let mut decoder = Decoder::new(def);
        loop {
            let run = decoder.take_leaves(usize::MAX);
            if run > 0 {
                records.push((Record::Leaves(run), Vec::new()));
            }
            match decoder.next_item() {
                Some(Item::Node(node, statics)) => records.push((node, statics.to_vec())),
                Some(Item::Leaf) => records.push((Record::Leaves(1), Vec::new())),
                None => break,
            }
        }
        Template {
            records: records.into_iter(),
            run_left: 0,
        }
    }
}

impl Iterator for Template {
    type Item = Option<(Record, Vec<StaticValue>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.run_left > 0 {
            self.run_left -= 1;
            return Some(None);
        }
        match self.records.next()? {
            (Record::Leaves(n), _) => {
                self.run_left = n.saturating_sub(1);
                Some(None)
            }
            (node, statics) => Some(Some((node, statics))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn a_transform_that_keeps_everything_gives_the_same_treedef() {
        let def = TreeDef::tuple([
            TreeDef::leaf(),
            TreeDef::seq([TreeDef::none(), TreeDef::some(TreeDef::leaf())]),
        ]);
        let same = def
            .transform(|_, node| Ok(node.clone()), |_| TreeDef::leaf())
            .unwrap();
        assert!(same == def);
    }

    #[test]
    fn a_deep_treedef_is_transformed_and_folded_without_recursion() {
        let mut b = TreeDefBuilder::new();
        for _ in 0..50_000 {
            b.node(crate::treedef::node::NodeRef::Seq(1));
        }
        b.leaf();
        let def = crate::treedef::TreeDefLimits::UNLIMITED
            .scope(|| b.finish())
            .unwrap();
        let t = def
            .transform(|_, node| Ok(node.clone()), |_| TreeDef::none())
            .unwrap();
        assert_eq!(t.num_leaves(), 0);
        let depth = def.fold([()], |_| 0usize, |_, kids| kids[0] + 1).unwrap();
        assert_eq!(depth, 50_000);
    }

    #[test]
    fn repeated_keys_in_order_are_found_whatever_their_position() {
        let keys = ["a", "b", "c", "b"];
        let err = TreeDef::dict_in_order(keys.map(|k| (k, TreeDef::leaf()))).unwrap_err();
        assert_eq!(err.to_string(), "at [\"b\"]: the key \"b\" appears twice");
        assert!(TreeDef::dict_in_order(["a", "b"].map(|k| (k, TreeDef::leaf()))).is_ok());
    }
}
