#!/usr/bin/env bash
# The compile time of a crate that declares a namespace
# (`pytree_std::namespace!(pub struct Ns; leaves = [f32, f64]);`), against
# a crate of the same dependencies that declares nothing: the crate's own
# dev build after `touch`, median of 5, each crate in its own target (its
# dependencies built first, not timed). With OLD_TREE (a checkout of an
# earlier commit, e.g. `git worktree add /tmp/ns-old e4cabe5`), the same
# two crates, and one with `; ops = ops` (the old way to get operations),
# are built against it too.
# Usage: benches/scripts/namespace_compile_time.sh [OLD_TREE]
set -euo pipefail
new_tree=$(cd "$(dirname "$0")/../.." && pwd)
old_tree=${1:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mk() { # crate tree body
    mkdir -p "$work/$1/src"
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\npytree-std = { path = "%s/pytree-std" }\n[workspace]\n' \
        "$1" "$2" >"$work/$1/Cargo.toml"
    printf '%s\n' "$3" >"$work/$1/src/lib.rs"
}
crates=(base-new ns-new)
mk base-new "$new_tree" 'pub struct Ns; pub use pytree_std::Std;'
mk ns-new "$new_tree" 'pytree_std::namespace!(pub struct Ns; leaves = [f32, f64]);'
if [ -n "$old_tree" ]; then
    crates+=(base-old ns-old nsops-old)
    mk base-old "$old_tree" 'pub struct Ns; pub use pytree_std::Std;'
    mk ns-old "$old_tree" 'pytree_std::namespace!(pub struct Ns; leaves = [f32, f64]);'
    mk nsops-old "$old_tree" 'pytree_std::namespace!(pub struct Ns; leaves = [f32, f64]; ops = ops);'
fi
printf "%-10s %9s  %s\n" crate median_ms runs
for c in "${crates[@]}"; do
    target="$work/target-${c#*-}"
    (cd "$work/$c" && CARGO_TARGET_DIR=$target cargo build -q)
    runs=()
    for _ in 1 2 3 4 5; do
        touch "$work/$c/src/lib.rs"
        start=$(date +%s%N)
        (cd "$work/$c" && CARGO_TARGET_DIR=$target cargo build -q)
        runs+=("$(( ($(date +%s%N) - start) / 1000000 ))")
    done
    median=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p)
    printf "%-10s %9s  %s\n" "$c" "$median" "${runs[*]}"
done
