use pytree_std::PyTree;

struct Config {
    depth: usize,
}

#[derive(PyTree)]
struct Model {
    weight: f32,
    config: Config,
}

fn main() {}
