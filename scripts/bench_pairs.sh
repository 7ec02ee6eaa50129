#!/usr/bin/env bash
# Pair-scheduler benchmarks.
#   scripts/bench_pairs.sh plan [NODES=1000]    planning only (no lab, no root; issue 22 item 4)
#   sudo scripts/bench_pairs.sh [NODES=8] [SECONDS=2]
# plan: `fabcheck list` of a full mesh over NODES names (one way: NODES*(NODES-1)/2 pairs in
# NODES-1 rounds; both ways: twice that), printing wall and CPU seconds and peak RSS (target:
# 1000 nodes one way <= 2 s). FC=path/to/fabcheck compares another build (e.g. main's).
# Lab (issue 15): an iperf3 mesh on lab nodes, run by `test_pairs` in rounds vs the same pairs
# one after another. Prints both wall times, the ratio (target <= 0.35 at 8 nodes) and whether
# any node was in two pairs at once (from the JSON result's recorded start times and durations).
set -euo pipefail
FCLAB_ARGS=("$@")
cd "$(dirname "$0")/.."
if [[ ${1:-} == plan ]]; then
    N=${2:-1000}
    [[ -n ${FC:-} ]] || { cargo build --release --quiet; FC=$PWD/target/release/fabcheck; }
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
    SET=$(printf 'n[%04d-%04d]' 1 "$N")
    for both in false true; do
        echo "test_pairs(nodes(), \"ping\", #{ pattern: \"mesh\", both_directions: $both }, |a, b| { a.ping(b.host, #{ count: 5 }); });" > "$WORK/mesh_$both.rhai"
        /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$FC" list "$WORK/mesh_$both.rhai" -w "$SET" > "$WORK/list"
        read -r wall user sys rss < "$WORK/time"
        pairs=$(wc -l < "$WORK/list")
        rounds=$(tail -1 "$WORK/list" | sed 's/.*round [0-9]*\///')
        python3 -c "import sys; w,u,s,r=map(float,sys.argv[1:5]); print(f'plan mesh of {sys.argv[5]} nodes, both_directions {sys.argv[6]:5}: {int(sys.argv[7]):7} pairs, {sys.argv[8]:>4} rounds: {w:5.2f} s wall, {u+s:5.2f} s CPU, peak RSS {r/1024:4.0f} MiB')" \
            "$wall" "$user" "$sys" "$rss" "$N" "$both" "$pairs" "$rounds"
    done
    exit 0
fi
N=${1:-8}
SECS=${2:-2}
source scripts/lab_bench.sh
lab_enter "$((N > 16 ? N : 16))"
INV=$DIR/inventory.toml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SET=$(printf 'lab[01-%02d]' "$N")

cat > "$WORK/rounds.rhai" <<RHAI
test_pairs(nodes("$SET"), "iperf3", #{ pattern: "mesh", timeout: "5m" }, |a, b| {
    let r = iperf3(a, b, #{ duration: $SECS });
    metric("gbps", r.received_bps / 1e9, "Gbit/s");
});
RHAI
cat > "$WORK/sequential.rhai" <<RHAI
let ns = nodes("$SET");
for i in 0..ns.len() {
    for j in (i + 1)..ns.len() {
        let a = ns[i];
        let b = ns[j];
        test(\`iperf3 [\${a.name} -> \${b.name}]\`, #{ timeout: "5m" }, || {
            let r = iperf3(a, b, #{ duration: $SECS });
            metric("gbps", r.received_bps / 1e9, "Gbit/s");
        });
    }
}
RHAI

now() { date +%s.%N; }
run() {
    local t0 t1
    t0=$(now)
    "$FC" run "$1" -i "$INV" --json "$2" -q >/dev/null 2>&1 || { echo "bench: $1 failed (see $2)"; exit 1; }
    t1=$(now)
    python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$t1"
}
echo "mesh of $((N * (N - 1) / 2)) iperf3 pairs (${SECS} s each) on $N lab nodes" >&2
T_SEQ=$(run "$WORK/sequential.rhai" "$WORK/seq.json")
T_RND=$(run "$WORK/rounds.rhai" "$WORK/rounds.json")
python3 - "$WORK/rounds.json" "$T_SEQ" "$T_RND" <<'PY'
import json, sys
from datetime import datetime
run = json.load(open(sys.argv[1]))
t_seq, t_rnd = float(sys.argv[2]), float(sys.argv[3])
busy = {}
rounds = set()
for s in run["suites"]:
    for t in s["tests"]:
        if t.get("peer") is None:
            continue
        rounds.add(t["round"])
        start = datetime.fromisoformat(t["started"].replace("Z", "+00:00")).timestamp()
        end = start + t["duration_ms"] / 1000
        for n in (t["node"], t["peer"]):
            busy.setdefault(n, []).append((start, end, t["name"]))
overlaps = 0
for n, iv in busy.items():
    iv.sort()
    for (a0, a1, an), (b0, b1, bn) in zip(iv, iv[1:]):
        if b0 < a1 - 0.001:
            overlaps += 1
            print(f"OVERLAP on {n}: {an} and {bn}")
print(f"sequential        {t_seq:8.2f} s")
print(f"test_pairs rounds {t_rnd:8.2f} s  ({len(rounds)} rounds)")
print(f"ratio             {t_rnd / t_seq:8.3f}  (target <= 0.35)")
print(f"node in two pairs at once: {'no' if overlaps == 0 else f'YES ({overlaps})'}")
PY
