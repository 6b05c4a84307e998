// A field of a type from another crate that is not a pytree (ndarray
// without pytree-std's `ndarray` feature): the error names the three ways
// out (the feature, a namespace, a newtype).
use pytree_std::PyTree;

#[derive(PyTree)]
struct Linear {
    w: ndarray::Array2<f32>,
    b: ndarray::Array1<f32>,
}

fn main() {}
