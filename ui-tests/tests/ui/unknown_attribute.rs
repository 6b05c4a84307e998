use pytree_std::PyTree;

#[derive(PyTree)]
struct Model {
    weight: f32,
    #[pytree(statik)]
    name: String,
}

fn main() {}
