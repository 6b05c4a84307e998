//! The plans of the trees a [`Dist`] has seen: [`Dist::plan`] agrees
//! with the other ranks on an operation over a tree and returns its
//! bucket [`Plan`], built once per structure; [`Dist::agree_on`] and
//! [`Dist::agree_structure`] only agree, for operations that send no
//! buckets of their own (a checkpoint, ZeRO's set-up).

use std::rc::Rc;

use pytree_std::ByteLeaf;
use pytree_std::{Error, Flatten, Std, TreeDef};

use crate::agree::Op;
use crate::agree::{agree, Intent};
use crate::dist::Cached;
use crate::dist::Dist;
use crate::plan::{wire_of, LeafSpec, Plan};

impl Dist {
    /// The plan of `op` on `tree` once every rank has agreed on it (from
    /// the cache when this structure was seen before): `sent(i)` says
    /// whether leaf `i` takes part, `root(i)` where it goes. The
    /// [`Sizes`](crate::Sizes) are part of what the ranks agree on (they
    /// make the plan). One all-gather of a hash for a structure seen
    /// before.
    pub(crate) fn plan<T>(
        &self,
        op: Op,
        tree: &T,
        sent: impl Fn(usize) -> bool,
        root: impl Fn(usize) -> usize,
    ) -> Result<Rc<Plan>, Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.watch(op);
        let sizes = self.sizes();
        let def = pytree_std::structure(tree);
        let mut signatures = Vec::new();
        let mut failed = false;
        for leaf in pytree_std::leaves(tree) {
            match <T::Leaf as ByteLeaf>::signature(&leaf) {
                Ok(s) => signatures.push(s),
                Err(_) => failed = true,
            };
        }
        let flags: Vec<bool> = (0..signatures.len()).map(&sent).collect();
        let hit = (!failed)
            .then(|| self.plans.find(op, &def, &signatures, &flags))
            .flatten();
        let describe = || Intent::of(op, Some(sizes), tree, true, &sent);
        let (hash, plan) = match hit {
            Some(found) => found,
            None => {
                let intent = describe();
                if let Some(e) = intent.error.clone() {
                    // Fails on every rank (this one says it failed).
                    agree(&*self.backend, intent.hash(), true, || intent)?;
                    return Err(Error::custom(e));
                }
                let specs = signatures
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        let wire = wire_of(s.dtype()).filter(|_| flags[i])?;
                        Some(LeafSpec {
                            dtype: s.dtype(),
                            shape: s.shape().to_vec(),
                            elements: s.num_elements(),
                            wire,
                            root: root(i),
                        })
                    })
                    .collect();
                let plan = Rc::new(Plan::new(specs, sizes.bucket_bytes, sizes.in_place_bytes));
                let hash = intent.hash();
                self.plans.remember(Cached {
                    op,
                    def,
                    signatures,
                    sent: flags,
                    hash,
                    plan: plan.clone(),
                });
                (hash, plan)
            }
        };
        // The one collective of a structure seen before: the hashes.
        agree(&*self.backend, hash, false, describe)?;
        Ok(plan)
    }

    /// Checks that every rank calls `op` on the same tree (structure,
    /// static data, key paths, dtypes and shapes): an error on every rank
    /// otherwise, naming the first difference. For operations that send
    /// no buckets ([`plan`](Dist::plan) agrees for those that do).
    pub(crate) fn agree_on<T>(&self, op: Op, tree: &T) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.watch(op);
        let intent = Intent::of(op, None, tree, true, |_| false);
        // A rank that failed (a leaf with no signature) makes it an error
        // on every rank, itself included.
        agree(
            &*self.backend,
            intent.hash(),
            intent.error.is_some(),
            || intent,
        )
    }

    /// Checks that every rank has the structure `def` (static data
    /// included) for `op`; an error on every rank otherwise.
    pub(crate) fn agree_structure(&self, op: Op, def: &TreeDef) -> Result<(), Error> {
        self.watch(op);
        let intent = Intent {
            op,
            sizes: None,
            def: Some(def.clone()),
            leaves: Vec::new(),
            error: None,
        };
        agree(&*self.backend, intent.hash(), false, || intent)
    }
}
