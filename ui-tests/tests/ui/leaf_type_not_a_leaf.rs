use pytree_std::PyTree;

// A generic type is written as a string (an attribute cannot hold `<`).
// `Vec<f64>` is a pytree of `f64` leaves, not a leaf type of `Std`.
#[derive(PyTree)]
#[pytree(leaf_type = "Vec<f64>")]
struct Model {
    weight: f64,
}

fn main() {}
