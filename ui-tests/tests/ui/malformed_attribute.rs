use pytree_std::PyTree;

#[derive(PyTree)]
#[pytree(leaf = 3, bound = "T: ")]
struct Model<T> {
    weight: T,
    #[pytree(static = "yes")]
    name: String,
}

fn main() {}
