// A typo in an attribute is reported once, at the attribute: the derive
// still emits (never-run) impls, so the uses of the type below raise no
// "is not a pytree" errors of their own.
use pytree_std::PyTree;

#[derive(PyTree)]
struct Model {
    weight: f32,
    #[pytree(statik)]
    name: String,
}

fn main() {
    let model = Model { weight: 1.0, name: String::new() };
    let _ = pytree_std::structure(&model);
    let _ = pytree_std::flatten(model);
}
