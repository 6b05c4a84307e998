use pytree_std::PyTree;

#[derive(PyTree)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
