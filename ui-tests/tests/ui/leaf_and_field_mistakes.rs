// A container attribute darling rejects does not hide the fields' own
// mistakes: they are checked against the default container (a tree).
use pytree_std::PyTree;

#[derive(PyTree)]
#[pytree(leef)]
struct Tensor {
    #[pytree(kind = "state", static)]
    data: Vec<f32>,
    #[pytree(skip = "yes")]
    shape: Vec<usize>,
}

fn main() {}
