#!/usr/bin/env bash
# Compile time of #[derive(PyTree)] against serde's derives: generates two
# crates with the same 200 structs (in $WORK, default /tmp/derive-compile),
# one with #[derive(PyTree)], one with #[derive(Serialize, Deserialize)],
# and times their builds in the dev profile, each in a target dir of its own:
#   - "crate only": the dependencies built beforehand, then
#     `cargo clean -p <crate>` and a timed `cargo build` (the derive's own
#     cost: expansion, type checking, code generation);
#   - "from clean": `cargo clean` and a timed `cargo build` of everything
#     (syn, darling or serde_derive, ...).
# Each timing is the median of $RUNS runs (default 5), the two crates
# alternating. MODES=crate measures "crate only" alone. Not part of CI.
#
# Usage: [RUNS=5] [MODES="crate all"] benches/scripts/derive_compile_time.sh
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${WORK:-/tmp/derive-compile}"
runs="${RUNS:-5}"
modes="${MODES:-crate all}"
n=200
mkdir -p "$work"

# The 200 structs: six fields each (leaves, a Vec, an Option, the previous
# struct, and a static field: `#[pytree(static)]` for PyTree, a plain
# field for serde); every fourth struct is generic over its leaf type.
gen_structs() { # $1 = derive line, $2 = the static field's attribute line
    local derive="$1" static_attr="$2"
    for i in $(seq 0 $((n - 1))); do
        local prev=""
        if [ "$i" -gt 0 ]; then
            local p=$((i - 1))
            if [ $((p % 4)) -eq 0 ]; then prev="    pub e: S$p<f64>,"; else prev="    pub e: S$p,"; fi
        fi
        if [ $((i % 4)) -eq 0 ]; then
            cat <<EOF
$derive
pub struct S$i<T> {
    pub a: T,
    pub b: T,
    pub c: Vec<T>,
    pub d: Option<T>,
$static_attr
    pub n: usize,
}
EOF
        else
            cat <<EOF
$derive
pub struct S$i {
    pub a: f64,
    pub b: f64,
    pub c: Vec<f64>,
    pub d: Option<f64>,
$prev
$static_attr
    pub n: usize,
}
EOF
        fi
    done
}

make_crate() { # $1 = name, $2 = dependency lines, $3 = derive line, $4 = use line, $5 = static attribute
    local dir="$work/$1"
    mkdir -p "$dir/src"
    cat > "$dir/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$2

[workspace]
EOF
    { echo "#![allow(dead_code)]"; echo "$4"; echo; gen_structs "$3" "$5"; } > "$dir/src/lib.rs"
}

make_crate gen-pytree "pytree-std = { path = \"$repo/pytree-std\" }" \
    "#[derive(PyTree)]" "use pytree_std::PyTree;" "    #[pytree(static)]"
make_crate gen-serde "serde = { version = \"1\", features = [\"derive\"] }" \
    "#[derive(Serialize, Deserialize)]" "use serde::{Deserialize, Serialize};" ""

seconds() { # wall-clock and CPU (user + sys, of every process it ran) seconds of a command
    /usr/bin/time -f '%e %U %S' -o "$work/time.out" "$@" > /dev/null 2>&1
    awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time.out"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

build_time() { # $1 = crate, $2 = what to clean first: "crate" or "all"
    local dir="$work/$1"
    export CARGO_TARGET_DIR="$work/target-$1"
    if [ "$2" = crate ]; then
        (cd "$dir" && cargo clean -q -p "$1")
    else
        (cd "$dir" && cargo clean -q)
    fi
    (cd "$dir" && seconds cargo build -q)
}

echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for c in gen-pytree gen-serde; do # dependencies first, not timed
    (cd "$work/$c" && CARGO_TARGET_DIR="$work/target-$c" cargo build -q)
done
# The two crates alternate, so that a change of load hits both alike.
# Wall time is what the issue quotes; CPU time is what a build costs
# whatever else the machine runs (on a shared machine, compare both).
declare -A wall cpu
for mode in $modes; do
    for _ in $(seq "$runs"); do
        for c in gen-pytree gen-serde; do
            read -r w u < <(build_time "$c" "$mode")
            echo "# $mode $c wall $w cpu $u (load $(cut -d' ' -f1 /proc/loadavg))" >&2
            wall[$c-$mode]+=" $w"
            cpu[$c-$mode]+=" $u"
        done
    done
done
med() { tr ' ' '\n' | grep . | median | grep . || echo 0; } # 0: not measured
row() { # $1 = crate
    echo "$1" \
        "$(echo "${wall[$1-crate]:-}" | med)" "$(echo "${cpu[$1-crate]:-}" | med)" \
        "$(echo "${wall[$1-all]:-}" | med)" "$(echo "${cpu[$1-all]:-}" | med)"
}
p="$(row gen-pytree)"
s="$(row gen-serde)"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "| crate ($n structs, dev profile; 0: not measured) | crate only, wall (s) | crate only, CPU (s) | from clean, wall (s) | from clean, CPU (s) |"
echo "|---|---:|---:|---:|---:|"
echo "$p" | awk '{printf "| #[derive(PyTree)] | %.2f | %.2f | %.2f | %.2f |\n", $2, $3, $4, $5}'
echo "$s" | awk '{printf "| #[derive(Serialize, Deserialize)] | %.2f | %.2f | %.2f | %.2f |\n", $2, $3, $4, $5}'
paste <(echo "$p") <(echo "$s") |
    awk '{r = "| ratio PyTree / serde"; for (i = 2; i <= 5; i++) r = r sprintf(" | %.2f", $(i + 5) ? $i / $(i + 5) : 0); print r " |"}'
