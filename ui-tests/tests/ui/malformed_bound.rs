use pytree_std::PyTree;

#[derive(PyTree)]
#[pytree(bound = "T: +")]
struct Model<T> {
    weight: T,
}

fn main() {}
