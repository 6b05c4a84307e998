//! A leaf with a shape, for the signature checks of the multi-tree
//! operations: what an array leaf (ndarray, candle) does, without the
//! dependency. A `Vector` is lent by reference and says it is an `f32`
//! array of its length.

use pytree_std::{
    DType, Error, ErrorKind, Flatten, Leaf, Signature, Sink, Source, Std, Unflatten, Visit,
    VisitMut,
};

/// A one-dimensional `f32` array leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Vector(pub Vec<f32>);

impl Leaf<Std> for Vector {
    type Ref<'a> = &'a Vector;
    type Mut<'a> = &'a mut Vector;
    const HAS_SHAPE: bool = true;
    fn lend(&self) -> &Vector {
        self
    }
    fn lend_mut(&mut self) -> &mut Vector {
        self
    }
    fn signature(leaf: &&Vector) -> Option<Signature> {
        Some(Signature::new(DType::F32, vec![leaf.0.len()]))
    }
    fn assign(slot: &mut Vector, value: Vector) -> Result<Vector, Error> {
        if slot.0.len() != value.0.len() {
            return Err(Error::custom("length differs"));
        }
        Ok(std::mem::replace(slot, value))
    }
}

impl Flatten<Std> for Vector {
    type Leaf = Vector;
    fn flatten_into<S: Sink<Vector>>(self, sink: &mut S) {
        sink.leaf(self)
    }
    fn visit<'a, V: Visit<&'a Vector>>(&'a self, visitor: &mut V) {
        visitor.leaf(self)
    }
    fn visit_mut<'a, V: VisitMut<&'a mut Vector>>(&'a mut self, visitor: &mut V) {
        visitor.leaf(self)
    }
    /// Leaves of another length do not zip.
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        let mine = Vector::signature(&self);
        for (j, other) in others.iter().enumerate() {
            let theirs = Vector::signature(other);
            if let (Some(expected), Some(found)) = (&mine, theirs) {
                if *expected != found {
                    let kind = ErrorKind::SignatureMismatch {
                        expected: expected.clone(),
                        found,
                    };
                    return Err(Error::new(kind).in_tree(j + 1));
                }
            }
        }
        Ok(())
    }
    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(&'a mut Vector, [&'a Vector; N]),
    {
        f(self, others)
    }
}

impl Unflatten<Std> for Vector {
    fn unflatten_from<S: Source<Vector>>(source: &mut S) -> Result<Self, Error> {
        source.leaf()
    }
    fn map_leaves<F: FnMut(Self) -> Self>(self, f: &mut F) -> Self {
        f(self)
    }
    fn zip_with_prechecked<'a, const N: usize, F>(
        &'a self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Self
    where
        F: FnMut(&'a Vector, [&'a Vector; N]) -> Vector,
    {
        f(self, others)
    }
}

/// A vector of these elements.
pub fn v(xs: &[f32]) -> Vector {
    Vector(xs.to_vec())
}
