//! [`Dist::broadcast`]: a tree of one rank copied to every rank, leaves
//! and static data, as one message: the TreeDef (when its static data
//! travels) and every leaf's bytes in leaf order.

use pytree_std::{ByteLeaf, ByteTensor};
use pytree_std::{Error, Flatten, Std, TreeDef, Unflatten};

use crate::agree::Op;
use crate::agree::{agree, Intent};
use crate::dist::Dist;

impl Dist {
    /// Copies `tree` of rank `root` to every rank, in place: leaves (of any
    /// dtype, integers included) and static data (an optimizer state's
    /// step count), so that every rank starts from the same parameters and
    /// state. The leaves are written into the existing ones (a candle
    /// variable stays the same variable); the ranks' trees must have the
    /// same leaves (key paths, dtypes, shapes: checked, an error on every
    /// rank otherwise); their static data may differ and becomes the
    /// root's, when serde can write it (numbers, strings, bools: what a
    /// checkpoint's TreeDef holds); static data of other types (a user's
    /// enum) must be equal on every rank already, and is checked to be. A
    /// `#[pytree(skip)]` field of a receiving rank becomes its `Default`
    /// when the static data differed.
    ///
    /// The tree travels as one message: the TreeDef with its static data
    /// (as serde writes it), then every leaf's bytes in leaf order.
    ///
    /// ```
    /// use pytree_optim::{adam, GradientTransformation};
    /// let dist = pytree_dist::Dist::local();
    /// let mut params = vec![1.0f32, 2.0];
    /// let mut state = adam(0.1).init(&params)?;
    /// dist.broadcast(&mut params, 0)?;
    /// dist.broadcast(&mut state, 0)?;
    /// assert_eq!(params, [1.0, 2.0]);
    /// assert!(dist.broadcast(&mut params, 1).is_err()); // no rank 1 in a world of one
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn broadcast<T>(&self, tree: &mut T, root: usize) -> Result<(), Error>
    where
        T: Unflatten<Std>,
        T::Leaf: ByteLeaf,
    {
        self.ensure_rank(root, "broadcast from")?;
        let rank = self.rank();
        let op = Op::Broadcast { root };
        self.watch(op);
        // Static data travels when serde can write it; otherwise it must
        // be equal on every rank already (checked with the rest).
        let statics = serde_json::to_vec(&pytree_std::structure(&*tree)).ok();
        let mut intent = Intent::of(op, None, &*tree, statics.is_none(), |_| true);
        let mut bytes = Vec::new();
        if rank == root && intent.error.is_none() {
            match encode(&*tree, statics.as_deref()) {
                Ok(b) => bytes = b,
                Err(e) => intent.error = Some(e.to_string()),
            }
        }
        agree(
            &*self.backend,
            intent.hash(),
            intent.error.is_some(),
            || intent,
        )?;
        self.backend.broadcast(&mut bytes, root)?;
        if rank == root {
            return Ok(());
        }
        decode_into(tree, bytes)
    }
}

/// `tree` as one message: the length of the header (8 bytes, little
/// endian), the header (`statics`: the TreeDef as serde writes it, when
/// the static data travels; else JSON `null`), then each leaf's bytes in
/// leaf order.
fn encode<T>(tree: &T, statics: Option<&[u8]>) -> Result<Vec<u8>, Error>
where
    T: Flatten<Std>,
    T::Leaf: ByteLeaf,
{
    let header = statics.unwrap_or(b"null");
    let leaves = pytree_std::leaves(tree);
    let mut bytes = Vec::with_capacity(8 + header.len());
    bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
    bytes.extend_from_slice(header);
    for leaf in &leaves {
        bytes.extend_from_slice(&<T::Leaf as ByteLeaf>::bytes(leaf)?);
    }
    Ok(bytes)
}

/// Writes the message of [`encode`] into `tree`, whose leaves have the
/// signatures of the sender's (the ranks agreed on them): each leaf in
/// place, then the static data (the tree rebuilt around the same leaves
/// when the TreeDef differs). A message of another length is an error
/// naming the leaf where it ran out.
fn decode_into<T>(tree: &mut T, bytes: Vec<u8>) -> Result<(), Error>
where
    T: Unflatten<Std>,
    T::Leaf: ByteLeaf,
{
    let short = |what: &str| Error::custom(format!("a broadcast message ended inside {what}"));
    let len = bytes
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| short("its header's length"))?;
    let header_end = usize::try_from(len)
        .ok()
        .and_then(|n| n.checked_add(8))
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| short("its header"))?;
    let def: Option<TreeDef> = serde_json::from_slice(&bytes[8..header_end])
        .map_err(|e| Error::custom(format!("a broadcast message's header: {e}")))?;
    let signatures = crate::plan::signatures(&*tree)?;
    let paths = pytree_std::structure(&*tree);
    let mut at = header_end;
    for (i, slot) in pytree_std::leaves_mut(tree).into_iter().enumerate() {
        let sig = &signatures[i];
        let n = sig
            .size_in_bytes()
            .ok_or_else(|| Error::custom(format!("{sig} has no size in bytes")))?;
        let data = bytes.get(at..at + n).ok_or_else(|| {
            let path = paths
                .leaf_path(i)
                .map_or_else(|| format!("leaf {i}"), |p| p.to_string());
            short(&format!("the leaf at {path} ({sig})"))
        })?;
        at += n;
        let view = ByteTensor::new(sig.dtype(), sig.shape(), data)?;
        <T::Leaf as ByteLeaf>::write_bytes(slot, &view)?;
    }
    if at != bytes.len() {
        return Err(Error::custom(format!(
            "a broadcast message has {} bytes after its last leaf",
            bytes.len() - at
        )));
    }
    if let Some(def) = def.filter(|d| *d != pytree_std::structure(&*tree)) {
        let leaves: Vec<T::Leaf> = pytree_std::leaves(&*tree)
            .iter()
            .map(<T::Leaf as ByteLeaf>::to_owned_leaf)
            .collect();
        *tree = pytree_std::unflatten(&def, leaves)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pytree_optim::{adam, GradientTransformation};
    use pytree_std::ndarray::{array, Array1};

    /// [`encode`] with the TreeDef in the header when `with_statics`.
    fn message<T>(tree: &T, with_statics: bool) -> Result<Vec<u8>, Error>
    where
        T: Flatten<Std>,
        T::Leaf: ByteLeaf,
    {
        let statics = serde_json::to_vec(&pytree_std::structure(tree)).ok();
        encode(tree, statics.as_deref().filter(|_| with_statics))
    }

    #[test]
    fn a_broadcast_message_writes_leaves_and_static_data_in_place() {
        let opt = adam(0.1);
        let mut p = array![1.0f32, 2.0];
        let mut sent = opt.init(&p).unwrap();
        for _ in 0..3 {
            opt.step(&mut p, &mut array![0.5, -0.5], &mut sent).unwrap();
        }
        let mut got = opt.init(&Array1::<f32>::zeros(2)).unwrap();
        decode_into(&mut got, message(&sent, true).unwrap()).unwrap();
        assert_eq!(
            (got.0.count, &got.0.mu, &got.0.nu),
            (3, &sent.0.mu, &sent.0.nu)
        );
        // A tree that is one leaf.
        let mut x = Array1::<f32>::zeros(2);
        decode_into(&mut x, message(&p, true).unwrap()).unwrap();
        assert_eq!(x, p);
        // A message of another length (the ranks agree on the leaves
        // before, so only a damaged message): an error naming the leaf,
        // nothing changed.
        let mut wrong = (Array1::<f32>::zeros(3),);
        let err = decode_into(&mut wrong, message(&(p.clone(),), true).unwrap()).unwrap_err();
        assert!(
            err.to_string()
                .contains("a broadcast message ended inside the leaf at [0] (f32[3])"),
            "{err}"
        );
        assert_eq!(wrong.0, Array1::<f32>::zeros(3));
        let mut bytes = message(&p, false).unwrap();
        bytes.push(0);
        let err = decode_into(&mut x, bytes).unwrap_err();
        assert!(
            err.to_string().contains("1 bytes after its last leaf"),
            "{err}"
        );
        assert!(decode_into(&mut x, vec![1, 2]).is_err());
    }
}
