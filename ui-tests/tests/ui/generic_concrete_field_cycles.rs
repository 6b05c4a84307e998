// What the derive cannot infer: `Outer<S>`'s concrete field leads back, through
// `Inner`, to `Outer<f32>`, so tying `S` to that field's leaf type is a
// cycle (E0275, the compiler's message). The fix is to name the leaf type:
// `#[pytree(bound = "S: pytree_std::PyTree<Leaf = f32>")]` on `Outer`
// (tests/tests/derive_bounds.rs, `mutual_recursion_with_a_bound`).
use pytree_std::PyTree;

#[derive(PyTree)]
struct Outer<S> {
    s: S,
    inner: Option<Box<Inner>>,
}

#[derive(PyTree)]
struct Inner {
    outers: Vec<Outer<f32>>,
    x: f32,
}

fn main() {}
