// A type parameter inside a leaf type (`Tensor<A>`), beside a field of a
// concrete type that fixes the leaf type (`Tensor<f32>`): the derive ties
// `A` to that leaf type as it would for `Option<A>` or `Vec<A>`, but here
// the field's leaves are `Tensor<A>`, which only `A = f32` makes equal.
// The error is at the field and names both types; the fix is to write the
// field as `Tensor<f32>` (or tie it by hand with `#[pytree(bound = "...")]`).
use pytree_std::PyTree;

#[derive(PyTree, Clone)]
#[pytree(leaf)]
struct Tensor<A>(Vec<A>);

#[derive(PyTree)]
struct Ckpt<A> {
    weight: Tensor<f32>,
    scale: Tensor<A>,
}

fn main() {}
