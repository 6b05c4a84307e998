use pytree_std::PyTree;

#[derive(PyTree)]
struct Counter {
    #[pytree(kind = "")]
    count: f64,
    #[pytree(static, kind = "state")]
    is_training: bool,
}

fn main() {}
