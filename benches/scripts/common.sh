# What the bench scripts that run a criterion bench beside a Python peer
# share; sourced first thing (`. "$(dirname "$0")/common.sh"`). Sets
#   repo    the checkout's root;
#   target  where cargo builds ($CARGO_TARGET_DIR, default $repo/target),
#           exported as CARGO_TARGET_DIR (criterion writes under it);
#   pin     the command prefix that pins a run to CPU 1 (taskset -c 1, where
#           taskset exists and there is more than one CPU; else empty),
# and the functions below.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
export CARGO_TARGET_DIR="$target"

pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
    pin=(taskset -c 1)
fi

# A progress line on stderr.
log() { echo "# $*" >&2; }

# The load averages (1, 5, 15 minutes): other work on the machine moves
# every figure.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# ensure_venv VENV REQUIREMENTS [--upgrade-pip]: creates the venv with the
# requirements file's packages, if it has no python yet.
ensure_venv() {
    local venv="$1" requirements="$2"
    if [ ! -x "$venv/bin/python" ]; then
        log "creating $venv"
        python3 -m venv "$venv"
        if [ "${3:-}" = --upgrade-pip ]; then
            "$venv/bin/pip" install -q --upgrade pip
        fi
        "$venv/bin/pip" install -q -r "$requirements"
    fi
}

# run_header PYTHON [MORE...]: the table's first line (date, CPUs, CPU
# model, rustc, the Python's version, then each of MORE), comma-separated.
run_header() {
    local line
    line="Run: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs,"
    line+=" $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1),"
    line+=" rustc $(rustc --version | cut -d' ' -f2), $("$1" --version)"
    shift
    for more in "$@"; do
        line+=", $more"
    done
    echo "$line"
}

# ckpt_dir: where checkpoint benches write their files ($CKPT_DIR, default
# /dev/shm: memory, not disk; $TMPDIR or /tmp where there is no /dev/shm),
# exported as CKPT_DIR for the benches.
ckpt_dir() {
    local dir="${CKPT_DIR:-/dev/shm}"
    [ -d "$dir" ] || dir="${TMPDIR:-/tmp}"
    echo "$dir"
}
