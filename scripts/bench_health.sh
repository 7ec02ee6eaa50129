#!/usr/bin/env bash
# fabcheck health budgets (issue 47): wall time of `fabcheck health` per context on one node of
# each simulation, against the budgets the issue sets (prolog <= 2 s, healthcheck <= 20 s,
# epilog <= 60 s):
#   scripts/bench_health.sh [ROUNDS=5]
# Prints the median and the slowest of ROUNDS runs per case. On replayed transcripts the
# healthcheck's counter window is 0 s (the transcripts answer the second read); on a real node
# it adds --set health_window (default 5 s), printed as a separate line. FC=/path/to/fabcheck
# compares another build; by default target/release/fabcheck, built if missing. No root, no lab.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
if [[ -z ${FC:-} ]]; then
    [[ -x target/release/fabcheck ]] || cargo build --release --quiet --bin fabcheck
    FC=$PWD/target/release/fabcheck
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# "median max" wall seconds of ROUNDS runs of "$@" (exit 0 or 1 is a verdict, not an error)
times() {
    local t=() r s e rc
    for ((r = 0; r < ROUNDS; r++)); do
        s=$(date +%s%N)
        rc=0
        "$@" >/dev/null 2>"$WORK/err" || rc=$?
        e=$(date +%s%N)
        if ((rc > 1)); then printf 'error %s: %s' "$rc" "$(head -c 80 "$WORK/err")"; return 0; fi
        t+=("$(((e - s) / 1000000))")
    done
    printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR] = $1} END {printf "%8.3f %8.3f", a[int((NR + 1) / 2)] / 1000, a[NR] / 1000}'
}

echo "fabcheck: $FC ($("$FC" --version))"
echo "cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg), rounds: $ROUNDS"
printf '%-58s %8s %8s %s\n' case "median s" "max s" budget
row() { # label budget args...
    local label=$1 budget=$2
    shift 2
    rm -rf "$WORK/state"
    printf '%-58s %s %s\n' "$label" "$(times "$FC" health --state "$WORK/state" "$@")" "$budget"
}
SPARK=(-i examples/sim/two-sparks.toml --node spark-02)
IB=(-i examples/sim-ib/cluster.toml --node h100-03)
row "Spark sim spark-02, prolog, healthy" "2 s" "${SPARK[@]}"
row "Spark sim spark-02, prolog, negotiated-100g" "2 s" "${SPARK[@]}" --scenario negotiated-100g
row "Spark sim spark-02, healthcheck, healthy (window 0 s)" "20 s" "${SPARK[@]}" --context healthcheck
row "IB sim h100-03 (8 HCAs), prolog, healthy" "2 s" "${IB[@]}"
row "IB sim h100-02, prolog, ib-port-at-hdr" "2 s" -i examples/sim-ib/cluster.toml --node h100-02 --scenario ib-port-at-hdr
row "IB sim h100-03, healthcheck, healthy (window 0 s)" "20 s" "${IB[@]}" --context healthcheck
row "IB sim h100-03, prolog with --prom" "2 s" "${IB[@]}" --prom "$WORK/prom"
row "Spark sim spark-02, epilog, healthy (2 rails looped back)" "60 s" "${SPARK[@]}" --context epilog
row "IB sim h100-03, epilog, healthy (8 HCAs looped back)" "60 s" "${IB[@]}" --context epilog
echo "healthcheck on a real node: add --set health_window (default 5 s) to the healthcheck rows"
echo "epilog on a real node: add the window and, per rail, ib_write_bw's 2 s plus its start (replayed here: no wait)"
