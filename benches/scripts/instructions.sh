#!/usr/bin/env bash
# Instructions per call of each T1 operation (pytree and hand-written),
# counted by callgrind inside the example's timed loop only: steady where
# wall time on a shared machine is not. Output moved into the loop (drops)
# is counted too, as in the criterion benches.
# Usage: benches/scripts/instructions.sh [op ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --profile bench -q -p pytree-benches --example profile
bin="${CARGO_TARGET_DIR:-target}/release/examples/profile"
n=1000
ir() { # instructions of the timed loop
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --toggle-collect='profile::run' "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
ops=("$@")
[ ${#ops[@]} -gt 0 ] || ops=(flatten unflatten map map2 sgd for_each_mut leaves struct_eq flatten_with_path)
printf "%-18s %12s %12s %8s\n" op pytree hand ratio
for op in "${ops[@]}"; do
    p=$(( $(ir "$bin" "$op" pytree "$n") / n ))
    if [ "$op" = struct_eq ]; then
        printf "%-18s %12s %12s %8s\n" "$op" "$p" - -
        continue
    fi
    h=$(( $(ir "$bin" "$op" hand "$n") / n ))
    printf "%-18s %12s %12s %8s\n" "$op" "$p" "$h" "$(awk -v a="$p" -v b="$h" 'BEGIN{printf "%.2f", a/b}')"
done
