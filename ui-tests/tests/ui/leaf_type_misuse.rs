use pytree_std::PyTree;

// A leaf type is one leaf: no field of it is walked.
#[derive(PyTree)]
#[pytree(leaf, leaf_type = f64)]
struct Tensor {
    data: Vec<f64>,
}

// `leaf_type` names a type.
#[derive(PyTree)]
#[pytree(leaf_type)]
struct NoType {
    w: f64,
}

fn main() {}
