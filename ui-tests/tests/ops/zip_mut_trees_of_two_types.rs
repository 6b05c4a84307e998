// `zip_mut` walks trees of one type in step: a gradient tree of another
// type than the parameters is a type error at the call, not inside a macro.
fn main() {
    let mut params = vec![1.0f32, 2.0];
    let grads = (0.5f32, 0.5f32);
    let _ = pytree_std::zip_mut([&mut params], [&grads], |[p], [g]| *p -= g);
}
