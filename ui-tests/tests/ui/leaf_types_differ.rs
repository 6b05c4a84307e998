use pytree_std::PyTree;

#[derive(PyTree)]
struct Model {
    weight: f32,
    step: u64,
}

fn main() {}
