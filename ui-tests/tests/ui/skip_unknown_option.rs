use pytree_std::PyTree;

#[derive(PyTree)]
struct Model {
    weight: f32,
    #[pytree(skip(recompute))]
    cache: Option<f32>,
}

fn main() {}
