// Every mistake of one input is reported in one compile, as serde's
// `Ctxt` does: a typo darling rejects on one field does not hide the
// cross-field rules broken by the others.
use pytree_std::PyTree;

#[derive(PyTree)]
struct Model {
    weight: f32,
    #[pytree(statik)]
    name: String,
    #[pytree(static, skip)]
    cache: Vec<f32>,
    #[pytree(kind = "")]
    bias: f32,
}

fn main() {}
