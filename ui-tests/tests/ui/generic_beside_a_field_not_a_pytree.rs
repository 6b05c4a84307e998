// A field that is no pytree in a generic type whose parameter the derive
// ties to that field's leaf type: the error is at the field (and at the
// derive, whose where-clause names that leaf type), never at the
// parameter's field.
use pytree_std::PyTree;

struct Config {
    depth: usize,
}

#[derive(PyTree)]
struct Ckpt<S> {
    config: Config,
    opt: S,
}

fn main() {}
