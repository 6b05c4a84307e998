use pytree_std::PyTree;

#[derive(PyTree)]
struct Attention {
    #[pytree(rename = "self")]
    self_: f64,
    #[pytree(rename = "self")]
    other: f64,
    #[pytree(rename = "")]
    empty: f64,
    #[pytree(rename = "output")]
    out: f64,
    output: f64,
}

fn main() {}
