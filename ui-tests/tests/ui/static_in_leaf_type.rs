use pytree_std::PyTree;

#[derive(PyTree)]
#[pytree(leaf)]
struct Tensor {
    data: Vec<f32>,
    #[pytree(static)]
    shape: Vec<usize>,
}

fn main() {}
