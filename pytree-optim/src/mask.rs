//! Where a transformation acts: [`Mask`], a predicate on a leaf's key path
//! (and its kind), and [`LeafMask`], its value at each leaf of a tree,
//! computed once by `init` and kept in the state.

use std::fmt;
use std::sync::Arc;

use pytree_std::{Error, Flatten, KeyPath, Std};

/// A predicate on a leaf's [`KeyPath`] (with its
/// [`kind`](KeyPath::kind)) saying where a transformation acts (optax's
/// `mask`), given to the wrappers [`masked`](crate::masked) (optax's:
/// elsewhere the updates pass through) and [`Wrap::mask`](crate::Wrap::mask)
/// (elsewhere the parameters stay as they are). [`Mask::params`] is every
/// leaf but those of kind `"state"` (`#[pytree(kind = "state")]` fields,
/// PAX's parameter/state split): `adam(lr).mask(Mask::params())` never
/// changes a running statistic.
///
/// ```
/// use pytree_optim::Mask;
/// use pytree_std::{KeyPath, PyTree};
///
/// #[derive(PyTree)]
/// struct BatchNorm { scale: f32, #[pytree(kind = "state")] running_mean: f32 }
///
/// let paths: Vec<KeyPath> = pytree_std::paths::leaves_with_path(&BatchNorm { scale: 1.0, running_mean: 0.0 })
///     .into_iter().map(|(p, _)| p).collect();
/// assert!(Mask::params().holds(&paths[0]) && !Mask::params().holds(&paths[1]));
///
/// // Weight decay on matrices only: not on fields named `b`, nor on state.
/// let decay = Mask::new(|p: &KeyPath| !p.to_string().ends_with(".b")).and(Mask::params());
/// assert!(decay.holds(&KeyPath::root().field("w")));
/// assert!(!decay.holds(&KeyPath::root().field("b")));
/// assert!(Mask::all().holds(&paths[1]));
/// ```
#[derive(Clone)]
pub struct Mask(Rule);

#[derive(Clone)]
enum Rule {
    All,
    Params,
    Fn(Arc<dyn Fn(&KeyPath) -> bool + Send + Sync>),
}

impl Mask {
    /// Every leaf.
    ///
    /// ```
    /// assert!(pytree_optim::Mask::all().holds(&pytree_std::KeyPath::root().with_kind("state")));
    /// ```
    pub fn all() -> Self {
        Mask(Rule::All)
    }

    /// Every leaf whose kind is not `"state"` (the default).
    ///
    /// ```
    /// use pytree_std::KeyPath;
    /// assert!(pytree_optim::Mask::params().holds(&KeyPath::root().field("w")));
    /// assert!(!pytree_optim::Mask::params().holds(&KeyPath::root().field("n").with_kind("state")));
    /// ```
    pub fn params() -> Self {
        Mask(Rule::Params)
    }

    /// The leaves where `f(path)` is true.
    ///
    /// ```
    /// use pytree_std::KeyPath;
    /// let m = pytree_optim::Mask::new(|p: &KeyPath| p.len() > 1);
    /// assert!(m.holds(&KeyPath::root().field("a").index(0)));
    /// ```
    pub fn new(f: impl Fn(&KeyPath) -> bool + Send + Sync + 'static) -> Self {
        Mask(Rule::Fn(Arc::new(f)))
    }

    /// The leaves of kind `kind` (`#[pytree(kind = "...")]`).
    ///
    /// ```
    /// use pytree_std::KeyPath;
    /// assert!(pytree_optim::Mask::kind("state").holds(&KeyPath::root().with_kind("state")));
    /// assert!(!pytree_optim::Mask::kind("state").holds(&KeyPath::root()));
    /// ```
    pub fn kind(kind: &'static str) -> Self {
        Mask::new(move |p| p.kind() == kind)
    }

    /// The leaves where both masks hold.
    ///
    /// ```
    /// use pytree_optim::Mask;
    /// use pytree_std::KeyPath;
    /// assert!(!Mask::all().and(Mask::params()).holds(&KeyPath::root().with_kind("state")));
    /// ```
    pub fn and(self, other: Mask) -> Self {
        Mask::new(move |p| self.holds(p) && other.holds(p))
    }

    /// The leaves where this mask does not hold.
    ///
    /// ```
    /// use pytree_optim::Mask;
    /// use pytree_std::KeyPath;
    /// assert!(Mask::params().not().holds(&KeyPath::root().with_kind("state")));
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        Mask::new(move |p| !self.holds(p))
    }

    /// Whether the mask holds at `path`.
    ///
    /// ```
    /// assert!(pytree_optim::Mask::default().holds(&pytree_std::KeyPath::root()));
    /// ```
    pub fn holds(&self, path: &KeyPath) -> bool {
        match &self.0 {
            Rule::All => true,
            Rule::Params => path.kind() != "state",
            Rule::Fn(f) => f(path),
        }
    }

    /// The mask's value at every leaf of `tree`, in leaf order (one walk
    /// with paths; `init` calls it once).
    ///
    /// ```
    /// use pytree_std::PyTree;
    /// #[derive(PyTree)]
    /// struct Bn { g: f32, #[pytree(kind = "state")] mean: f32 }
    /// let bits = pytree_optim::Mask::params().on(&Bn { g: 1.0, mean: 0.0 });
    /// assert_eq!((bits.len(), bits.get(0), bits.get(1)), (2, true, false));
    /// ```
    pub fn on<P: Flatten<Std>>(&self, tree: &P) -> LeafMask {
        let every = LeafMask {
            len: pytree_std::generic::reduce::num_leaves::<Std, P>(tree),
            bits: None,
            pending: false,
        };
        if let Rule::All = self.0 {
            return every;
        }
        let bits: Vec<bool> = pytree_std::paths::leaves_with_path(tree)
            .iter()
            .map(|(path, _)| self.holds(path))
            .collect();
        every.map_bits(|i| bits[i])
    }
}

impl Default for Mask {
    /// [`Mask::params`].
    fn default() -> Self {
        Mask::params()
    }
}

impl fmt::Debug for Mask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Rule::All => f.write_str("Mask::all()"),
            Rule::Params => f.write_str("Mask::params()"),
            Rule::Fn(_) => f.write_str("Mask::new(..)"),
        }
    }
}

/// A [`Mask`]'s value at each leaf of one tree, in leaf order (cheap to
/// clone; a mask that holds everywhere stores nothing).
///
/// A mask is configuration, not training state: it is not saved with an
/// optimizer state (it is a `#[pytree(skip(recomputed))]` field there), and
/// a state loaded from a checkpoint (by type, against a template, or in
/// place when its step count is restored) holds the
/// [`default`](LeafMask::default), a mask *not yet evaluated*, which the
/// next `update` or `step` evaluates from the wrapper's [`Mask`] on the
/// parameters and keeps.
///
/// ```
/// let bits = pytree_optim::Mask::all().on(&vec![1.0f32, 2.0]);
/// assert!(bits.is_all() && bits.get(1));
/// assert!(!bits.is_pending() && pytree_optim::LeafMask::default().is_pending());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeafMask {
    len: usize,
    bits: Option<Arc<[bool]>>,
    pending: bool,
}

impl Default for LeafMask {
    /// A mask not yet evaluated (what a state loaded from a checkpoint
    /// holds): it holds nowhere until a transformation evaluates it.
    fn default() -> Self {
        LeafMask {
            len: 0,
            bits: None,
            pending: true,
        }
    }
}

impl LeafMask {
    /// Whether the mask holds at leaf `i` (false past the end).
    ///
    /// ```
    /// let bits = pytree_optim::Mask::all().on(&(1.0f32,));
    /// assert!(bits.get(0) && !bits.get(1));
    /// ```
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        match &self.bits {
            None => i < self.len && !self.pending,
            Some(b) => b.get(i).copied().unwrap_or(false),
        }
    }

    /// The number of leaves it was computed for.
    ///
    /// ```
    /// assert_eq!(pytree_optim::Mask::all().on(&[1.0f32; 3]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it was computed for a tree without leaves.
    ///
    /// ```
    /// assert!(pytree_optim::Mask::all().on(&Vec::<f32>::new()).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the mask holds at every leaf.
    ///
    /// ```
    /// assert!(pytree_optim::Mask::params().on(&[1.0f32; 2]).is_all());
    /// ```
    pub fn is_all(&self) -> bool {
        self.bits.is_none()
    }

    /// Whether this is a mask not yet evaluated (the
    /// [`default`](LeafMask::default), as in a state loaded from a
    /// checkpoint).
    ///
    /// ```
    /// assert!(pytree_optim::LeafMask::default().is_pending());
    /// ```
    pub fn is_pending(&self) -> bool {
        self.pending
    }

    /// The leaves where both hold (lengths as `self`'s; a pending mask
    /// stays pending).
    pub(crate) fn and(&self, other: &LeafMask) -> LeafMask {
        if other.is_all() && !other.pending {
            return self.clone();
        }
        if self.is_all() && !self.pending {
            return LeafMask {
                len: self.len,
                ..other.clone()
            };
        }
        self.map_bits(|i| self.get(i) && other.get(i))
    }

    /// The leaves where this mask does not hold.
    pub(crate) fn not(&self) -> LeafMask {
        self.map_bits(|i| !self.get(i))
    }

    /// A mask of this one's length from the value at each leaf.
    pub(crate) fn map_bits(&self, f: impl Fn(usize) -> bool) -> LeafMask {
        let bits: Vec<bool> = (0..self.len).map(f).collect();
        LeafMask {
            len: self.len,
            pending: self.pending,
            bits: (!bits.iter().all(|&b| b)).then(|| bits.into()),
        }
    }

    /// An error unless `tree` has the number of leaves the mask was
    /// computed for (a state built by `init` for another tree).
    ///
    /// ```
    /// let bits = pytree_optim::Mask::all().on(&vec![1.0f32, 2.0]);
    /// assert!(bits.ensure_fits(&vec![0.0f32, 0.0]).is_ok());
    /// assert_eq!(bits.ensure_fits(&vec![0.0f32]).unwrap_err().to_string(),
    ///     "at <root>: optimizer state mismatch: the state was built by init for a tree of 2 leaves, this tree has 1");
    /// ```
    pub fn ensure_fits<P: Flatten<Std>>(&self, tree: &P) -> Result<(), Error> {
        let n = pytree_std::generic::reduce::num_leaves::<Std, P>(tree);
        if self.pending {
            Err(Error::custom(
                "optimizer state mismatch: the mask was not evaluated (a state loaded from a checkpoint: pass it to the transformation's update or step)",
            ))
        } else if n == self.len {
            Ok(())
        } else {
            Err(Error::custom(format!(
                "optimizer state mismatch: the state was built by init for a tree of {} leaves, this tree has {n}",
                self.len
            )))
        }
    }
}
