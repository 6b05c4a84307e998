// Mistakes in the container's attributes, in a variant's and in the
// fields' are all reported in one compile: a malformed `bound` does not
// hide a variant's unknown attribute, nor a field's broken rule.
use pytree_std::PyTree;

#[derive(PyTree)]
#[pytree(bound = "T Clone")]
enum Layer<T> {
    #[pytree(skip)]
    Dense {
        #[pytree(rename = "w")]
        weight: T,
        #[pytree(rename = "w")]
        bias: T,
    },
    Norm(#[pytree(rename = "scale")] T),
}

fn main() {}
