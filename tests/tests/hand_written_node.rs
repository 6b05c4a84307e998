//! A node written by hand: only the required methods, the three walks of
//! `Flatten` (by value, by reference, by mutable reference) and
//! `Unflatten::unflatten_from`. Its provided methods (`zip_check`,
//! `zip_mut_prechecked`, `map_leaves`, `zip_with_prechecked`) must behave
//! as the derived ones do: the same round trips, the same values, the same
//! errors at the same key paths.
//! CONTRIBUTING.md ("A node by hand") shows this impl.

use pytree_std::{
    Error, FieldSchema, FieldStyle, Flatten, KeyRef, NodeRef, PyTree, Schema, Sink, Source, Std,
    Unflatten, Visit, VisitMut,
};

/// The node: a weight vector and a bias.
#[derive(Clone, Debug, PartialEq)]
struct Linear {
    w: Vec<f64>,
    b: f64,
}

static LINEAR: Schema = Schema::new(
    "Linear",
    module_path!(),
    None,
    FieldStyle::Named,
    &[FieldSchema::data("w"), FieldSchema::data("b")],
);

const NODE: NodeRef<'static> = NodeRef::Struct {
    schema: &LINEAR,
    statics: &[],
};

// --8<-- [start:node]
impl Flatten<Std> for Linear {
    type Leaf = f64;
    fn flatten_into<S: Sink<f64>>(self, s: &mut S) {
        s.node(NODE);
        s.enter(KeyRef::Field("w"));
        self.w.flatten_into(s);
        s.exit();
        s.enter(KeyRef::Field("b"));
        s.leaf(self.b);
        s.exit();
    }
    fn visit<'a, V: Visit<&'a f64>>(&'a self, v: &mut V) {
        v.node(NODE);
        v.enter(KeyRef::Field("w"));
        self.w.visit(v);
        v.exit();
        v.enter(KeyRef::Field("b"));
        v.leaf(&self.b);
        v.exit();
    }
    fn visit_mut<'a, V: VisitMut<&'a mut f64>>(&'a mut self, v: &mut V) {
        v.node(NODE);
        v.enter(KeyRef::Field("w"));
        self.w.visit_mut(v);
        v.exit();
        v.enter(KeyRef::Field("b"));
        v.leaf(&mut self.b);
        v.exit();
    }
}

impl Unflatten<Std> for Linear {
    fn unflatten_from<S: Source<f64>>(s: &mut S) -> Result<Self, Error> {
        s.struct_node(&[&LINEAR])?;
        let w =
            Vec::unflatten_from(s).map_err(|e| e.at(pytree_std::paths::KeyEntry::Field("w")))?;
        let b = s
            .leaf()
            .map_err(|e| e.at(pytree_std::paths::KeyEntry::Field("b")))?;
        Ok(Linear { w, b })
    }
}
// --8<-- [end:node]

/// The same node, derived: the reference the hand-written one is held to.
#[derive(Clone, Debug, PartialEq, PyTree)]
struct Derived {
    w: Vec<f64>,
    b: f64,
}

fn hand(w: &[f64], b: f64) -> Linear {
    Linear { w: w.to_vec(), b }
}

fn derived(w: &[f64], b: f64) -> Derived {
    Derived { w: w.to_vec(), b }
}

#[test]
fn flatten_and_unflatten_round_trip() {
    let (leaves, def) = pytree_std::flatten(hand(&[1.0, 2.0], 3.0));
    assert_eq!(leaves, [1.0, 2.0, 3.0]);
    assert_eq!(def.to_string(), "Linear { w: [*, *], b: * }");
    let back: Linear = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, hand(&[1.0, 2.0], 3.0));
    // In a container, as a derived node would be.
    let layers = vec![hand(&[1.0], 2.0), hand(&[], 3.0)];
    let (leaves, def) = pytree_std::flatten(layers.clone());
    assert_eq!(leaves, [1.0, 2.0, 3.0]);
    assert_eq!(
        pytree_std::unflatten::<Vec<Linear>>(&def, leaves).unwrap(),
        layers
    );
}

#[test]
fn a_wrong_treedef_is_an_error_at_its_path() {
    let def = pytree_std::structure(&hand(&[1.0], 2.0));
    let err = pytree_std::unflatten::<Linear>(&def, vec![1.0]).unwrap_err();
    let reference =
        pytree_std::unflatten::<Derived>(&pytree_std::structure(&derived(&[1.0], 2.0)), vec![1.0])
            .unwrap_err();
    assert_eq!(err.to_string(), reference.to_string());
}

#[test]
fn map_and_leaves_by_reference() {
    let t = pytree_std::map(hand(&[1.0, 2.0], 3.0), |x| x * 10.0);
    assert_eq!(t, hand(&[10.0, 20.0], 30.0));
    assert_eq!(pytree_std::leaves(&t), [&10.0, &20.0, &30.0]);
}

#[test]
fn zip_mut_with_the_provided_methods_updates_each_leaf() {
    let mut p = hand(&[1.0, 2.0], 3.0);
    let g = hand(&[0.5, 0.5], 1.0);
    let h = hand(&[0.25, 0.0], 0.0);
    pytree_std::zip_mut([&mut p], [&g, &h], |[x], [g, h]| *x -= g + h).unwrap();
    assert_eq!(p, hand(&[0.25, 1.5], 2.0));
    // The prechecked form alone: the default walks the others' leaves.
    p.zip_mut_prechecked([&g], &mut |x: &mut f64, [g]: [&f64; 1]| *x += g);
    assert_eq!(p, hand(&[0.75, 2.0], 3.0));
}

#[test]
fn the_provided_zip_check_errs_as_the_derived_one_at_the_same_path() {
    let cases: [(&[f64], &[f64]); 3] = [(&[1.0, 2.0], &[1.0]), (&[], &[1.0]), (&[1.0], &[2.0])];
    for (a, b) in cases {
        let (ha, hb) = (hand(a, 0.0), hand(b, 0.0));
        let (da, db) = (derived(a, 0.0), derived(b, 0.0));
        let ours = ha.zip_check([&ha, &hb]).map_err(|e| e.to_string());
        let reference = da.zip_check([&da, &db]).map_err(|e| e.to_string());
        assert_eq!(ours, reference, "{a:?} vs {b:?}");
    }
    let err = hand(&[1.0, 2.0], 0.0)
        .zip_check([&hand(&[1.0], 0.0)])
        .unwrap_err();
    assert_eq!(err.tree_index(), Some(1));
    assert_eq!(err.path().to_string(), ".w");
    assert_eq!(
        err.to_string(),
        "tree 1 at .w: sequence length mismatch: expected 2, found 1"
    );
}

#[test]
fn a_zip_of_unlike_trees_errs_and_changes_nothing() {
    let mut p = hand(&[1.0, 2.0], 3.0);
    let err = pytree_std::zip_mut([&mut p], [&hand(&[1.0], 0.0)], |[x], [g]| *x -= g).unwrap_err();
    assert_eq!(err.path().to_string(), ".w");
    assert_eq!(p, hand(&[1.0, 2.0], 3.0));
    // Prechecked with the check skipped: no panic, `p` stays as it is.
    p.zip_mut_prechecked([&hand(&[1.0], 0.0)], &mut |x: &mut f64, [g]: [&f64; 1]| {
        *x -= g
    });
    assert_eq!(p, hand(&[1.0, 2.0], 3.0));
}

#[test]
fn map2_of_hand_written_nodes() {
    let a = hand(&[1.0, 2.0], 3.0);
    let t = pytree_std::walk::map_n(&a, [&a], |x, [y]| x + y).unwrap();
    assert_eq!(t, hand(&[2.0, 4.0], 6.0));
    assert!(pytree_std::walk::map_n(&a, [&hand(&[1.0], 3.0)], |x, [y]| x + y).is_err());
}

#[test]
fn the_provided_map_leaves_and_zip_with_match_the_derived_ones() {
    let f = |x: f64| x * 10.0 + 1.0;
    for (w, b) in [(&[][..], 1.0), (&[1.0, 2.0][..], 3.0)] {
        let ours = Unflatten::<Std>::map_leaves(hand(w, b), &mut { f });
        let reference = Unflatten::<Std>::map_leaves(derived(w, b), &mut { f });
        assert_eq!((ours.w, ours.b), (reference.w, reference.b));
        let (a, c) = (hand(w, b), hand(w, -b));
        let ours = a
            .zip_with([&c, &a], &mut |x, [y, z]| x * 100.0 + y * 10.0 + z)
            .unwrap();
        let (da, dc) = (derived(w, b), derived(w, -b));
        let reference = da
            .zip_with([&dc, &da], &mut |x, [y, z]| x * 100.0 + y * 10.0 + z)
            .unwrap();
        assert_eq!((ours.w, ours.b), (reference.w, reference.b));
    }
    let err = hand(&[1.0], 2.0)
        .zip_with([&hand(&[], 2.0)], &mut |x, [y]| x + y)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .w: sequence length mismatch: expected 1, found 0"
    );
}

#[test]
fn the_provided_zip_with_prechecked_takes_self_for_a_tree_of_another_size() {
    // The check skipped: a tree with another number of leaves is replaced
    // by `self` as a whole, so the result has `self`'s structure.
    let a = hand(&[1.0, 2.0], 3.0);
    let t = Unflatten::<Std>::zip_with_prechecked(&a, [&hand(&[7.0], 9.0)], &mut |x, [y]| x + y);
    assert_eq!(t, hand(&[2.0, 4.0], 6.0));
}

/// A node whose `unflatten_from` does not read what its `flatten_into`
/// writes (it expects a leaf where a struct was written).
#[derive(Debug)]
struct Broken(f64);

impl Flatten<Std> for Broken {
    type Leaf = f64;
    fn flatten_into<S: Sink<f64>>(self, s: &mut S) {
        s.node(NODE);
        s.enter(KeyRef::Field("b"));
        s.leaf(self.0);
        s.exit();
    }
    fn visit<'a, V: Visit<&'a f64>>(&'a self, v: &mut V) {
        v.leaf(&self.0)
    }
    fn visit_mut<'a, V: VisitMut<&'a mut f64>>(&'a mut self, v: &mut V) {
        v.leaf(&mut self.0)
    }
}

impl Unflatten<Std> for Broken {
    fn unflatten_from<S: Source<f64>>(s: &mut S) -> Result<Self, Error> {
        s.leaf().map(Broken)
    }
}

#[test]
#[should_panic(
    expected = "its `Unflatten::unflatten_from` cannot read back what its `Flatten::flatten_into` wrote"
)]
fn the_provided_map_leaves_names_an_impl_that_cannot_read_itself_back() {
    let _ = pytree_std::map(Broken(1.0), |x| x + 1.0);
}

/// Leaves with a shape: a hand-written wrapper of a `Vec` of arrays that
/// keeps the provided `zip_check` (signatures compared) and
/// `zip_mut_prechecked`.
mod shaped {
    use pytree_std::ndarray::{arr1, ArrayD, IxDyn};
    use pytree_std::{Flatten, LeafMut, LeafRef, Sink, Std, Visit, VisitMut};

    #[derive(Clone, Debug, PartialEq)]
    struct Params(Vec<ArrayD<f64>>);

    impl Flatten<Std> for Params {
        type Leaf = ArrayD<f64>;
        fn flatten_into<S: Sink<Self::Leaf>>(self, s: &mut S) {
            self.0.flatten_into(s)
        }
        fn visit<'a, V: Visit<LeafRef<'a, Std, Self::Leaf>>>(&'a self, v: &mut V) {
            self.0.visit(v)
        }
        fn visit_mut<'a, V: VisitMut<LeafMut<'a, Std, Self::Leaf>>>(&'a mut self, v: &mut V) {
            self.0.visit_mut(v)
        }
    }

    fn params(shapes: &[usize]) -> Params {
        Params(shapes.iter().map(|&n| ArrayD::zeros(IxDyn(&[n]))).collect())
    }

    #[test]
    fn a_signature_mismatch_is_the_error_the_vec_itself_gives() {
        let (a, b) = (params(&[2, 3]), params(&[2, 4]));
        let ours = a.zip_check([&a, &b]).unwrap_err();
        let reference = a.0.zip_check([&a.0, &b.0]).unwrap_err();
        assert_eq!(ours.to_string(), reference.to_string());
        assert_eq!(ours.path().to_string(), "[1]");
        assert_eq!(ours.tree_index(), Some(2));
        assert!(a.zip_check([&params(&[2, 3])]).is_ok());
    }

    #[test]
    fn zip_mut_lends_the_arrays_in_order() {
        let mut p = params(&[2, 1]);
        let g = Params(vec![arr1(&[1.0, 2.0]).into_dyn(), arr1(&[3.0]).into_dyn()]);
        pytree_std::zip_mut([&mut p], [&g], |[mut x], [g]| x -= &g).unwrap();
        assert_eq!(p.0[0].as_slice().unwrap(), [-1.0, -2.0]);
        assert_eq!(p.0[1].as_slice().unwrap(), [-3.0]);
    }
}
