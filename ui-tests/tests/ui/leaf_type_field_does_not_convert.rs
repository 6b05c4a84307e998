use pytree_std::PyTree;

// `leaf_type = f64`: every data field's leaves must be f64s or convert to
// them (`LeafAs`); a `u64` field's do not.
#[derive(PyTree)]
#[pytree(leaf_type = f64)]
struct Model {
    weight: f64,
    steps: u64,
}

fn main() {}
