#!/usr/bin/env bash
# Kept connections (issue 49 item 3): `fabcheck exec hostname` on NODES lab nodes with
# `--persist`, the first run (every handshake) against the second (the kept masters reused),
# ROUNDS times (`fabcheck disconnect` between rounds), and a plain `exec` (no --persist).
#   sudo scripts/bench_persist.sh [NODES=64] [ROUNDS=5]
# Prints the medians and the ratio warm / cold (target <= 0.15 at 64 nodes), and checks that
# nothing is left after the last `disconnect` (no ssh master under the bench's directory).
# Takes the lab tests' lock (/run/fclab.tests.lock): waits while a lab test runs.
set -euo pipefail
FCLAB_ARGS=("$@")
cd "$(dirname "$0")/.."
N=${1:-64}
ROUNDS=${2:-5}
source scripts/lab_bench.sh
lab_enter "$((N > 16 ? N : 16))"
INV=$DIR/inventory.toml
export XDG_RUNTIME_DIR=/tmp/fcb-$$ # short: socket paths are limited to 108 bytes
mkdir -m 0700 "$XDG_RUNTIME_DIR"
trap '"$FC" disconnect >/dev/null 2>&1; rm -rf "$XDG_RUNTIME_DIR"' EXIT
SET=$(printf 'lab[01-%02d]' "$N")
[[ $N -gt 99 ]] && SET=$(printf 'lab[001-%03d]' "$N")
now() { date +%s.%N; }
timed() { # ARGS... -> seconds of `fabcheck ARGS...` (must exit 0)
    local t0
    t0=$(now)
    "$FC" "$@" >/dev/null 2>&1 || { echo "bench: fabcheck $* failed" >&2; exit 1; }
    python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$t0" "$(now)"
}
PLAIN=() COLD=() WARM=()
for ((r = 1; r <= ROUNDS; r++)); do
    PLAIN+=("$(timed exec -i "$INV" -w "$SET" -- hostname)")
    COLD+=("$(timed exec --persist=10m -i "$INV" -w "$SET" -- hostname)")
    WARM+=("$(timed exec --persist=10m -i "$INV" -w "$SET" -- hostname)")
    "$FC" disconnect >/dev/null
done
LEFT=$(pgrep -fc "ssh -E $XDG_RUNTIME_DIR/" || true)
python3 - "$N" "$LEFT" "${PLAIN[*]}" "${COLD[*]}" "${WARM[*]}" <<'PY'
import statistics, sys
n, left = sys.argv[1], int(sys.argv[2])
plain, cold, warm = ([float(x) for x in a.split()] for a in sys.argv[3:6])
med = statistics.median
print(f"exec hostname on {n} lab nodes, median of {len(cold)} rounds")
print(f"  plain exec (no --persist):            {med(plain):6.3f} s  ({' '.join(f'{x:.2f}' for x in plain)})")
print(f"  --persist, first run (handshakes):     {med(cold):6.3f} s  ({' '.join(f'{x:.2f}' for x in cold)})")
print(f"  --persist, second run (kept masters):  {med(warm):6.3f} s  ({' '.join(f'{x:.2f}' for x in warm)})")
print(f"  ratio second / first: {med(warm) / med(cold):.3f} (target <= 0.15); vs plain exec {med(warm) / med(plain):.3f}")
print(f"  ssh masters left after the last disconnect: {left}")
PY
