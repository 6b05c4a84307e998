// The leaf function of `map_n` takes the trees' leaves (lent by reference):
// one written for `f64` leaves of an `f32` tree is an error at the call.
fn main() {
    let a = vec![1.0f32, 2.0];
    let _ = pytree_std::walk::map_n(&a, [&a], |x: &f64, [y]: [&f64; 1]| (x + y) as f32);
}
