//! [`Plans`]: the bucket plans a [`Dist`](crate::Dist) handle has made,
//! by the structure they were made for ([`plans`](crate::plans) makes
//! and agrees on them).

use std::cell::RefCell;
use std::rc::Rc;

use pytree_std::{Signature, TreeDef};

use crate::op::Op;
use crate::plan::Plan;

/// The structures a handle has seen, most recent last.
#[derive(Default)]
pub(crate) struct Plans(RefCell<Vec<Cached>>);

/// A structure seen before: what it is recognized by, its hash and its
/// plan.
pub(crate) struct Cached {
    pub op: Op,
    pub def: TreeDef,
    pub signatures: Vec<Signature>,
    pub sent: Vec<bool>,
    pub hash: u64,
    pub plan: Rc<Plan>,
}

/// At most this many structures are remembered (the oldest is dropped).
const MAX_CACHED: usize = 16;

impl Plans {
    /// The hash and plan of a structure seen before.
    pub(crate) fn find(
        &self,
        op: Op,
        def: &TreeDef,
        signatures: &[Signature],
        sent: &[bool],
    ) -> Option<(u64, Rc<Plan>)> {
        self.0.borrow().iter().find_map(|c| {
            (c.op == op && c.def == *def && c.signatures == signatures && c.sent == sent)
                .then(|| (c.hash, c.plan.clone()))
        })
    }

    pub(crate) fn remember(&self, cached: Cached) {
        let mut plans = self.0.borrow_mut();
        if plans.len() == MAX_CACHED {
            plans.remove(0);
        }
        plans.push(cached);
    }
}
