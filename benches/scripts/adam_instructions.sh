#!/usr/bin/env bash
# Instructions per parameter of one Adam step, pytree-optim's `adam(..).step`
# against the hand-written fused loop, counted by callgrind inside the step
# loop only (benches/examples/adam_instructions.rs: a GPT-2-shaped tree of
# 148 arrays, about 6M parameters). Two step counts are run and subtracted,
# so model construction and `init` drop out.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --profile bench -q -p pytree-benches --example adam_instructions
bin="${CARGO_TARGET_DIR:-target}/release/examples/adam_instructions"
ir() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --toggle-collect="adam_instructions::run_$1" "$bin" "$1" "$2" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
n=$("$bin" hand 0 | cut -d' ' -f1)
printf "%-6s %14s %14s %10s\n" impl "Ir (3-1 steps)" "per step" "per param"
for impl in optim hand; do
    a=$(ir "$impl" 1)
    b=$(ir "$impl" 3)
    d=$(( (b - a) / 2 ))
    printf "%-6s %14s %14s %10s\n" "$impl" "$((b - a))" "$d" "$(awk -v d="$d" -v n="$n" 'BEGIN{printf "%.3f", d/n}')"
done
