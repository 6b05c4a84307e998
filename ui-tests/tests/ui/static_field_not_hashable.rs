use pytree_std::PyTree;

#[derive(PyTree)]
struct Model {
    weight: f32,
    #[pytree(static)]
    scale: f64,
}

fn main() {}
