#!/usr/bin/env bash
# localise.rhai benchmarks (issue 49 item 1).
#   scripts/bench_localise.sh plan [NODES=1000]   the plan only (no lab, no root): a dry run of
#       localise.rhai over NODES `local` nodes (every ring pair's commands listed, none run);
#       prints wall and CPU seconds and peak RSS (target: 1000 nodes under 5 s), and the plan's
#       rounds (from its log lines); fails unless the ring's N pairs are in 2 rounds (3 for an
#       odd N) with no node twice in a round.
#   sudo scripts/bench_localise.sh [NODES=16] [SECONDS=2]
#       on the healthy lab: localise.rhai's testcase time (the ring: N pair tests, in rounds,
#       a round's pairs at once) against one pair test's (iperf3 both ways between lab01 and
#       lab02, the way localise measures a pair), and the ring one pair after another
#       (`--fanout 1`, the way before issue 49). Prints the times and the ratios (target: ring
#       <= 3x one pair). Times are the testcases' own (JSON duration_ms), SSH handshakes in.
# Takes the lab tests' lock (/run/fclab.tests.lock): waits while a lab test runs.
set -euo pipefail
FCLAB_ARGS=("$@")
cd "$(dirname "$0")/.."
if [[ ${1:-} == plan ]]; then
    N=${2:-1000}
    [[ -n ${FC:-} ]] || { cargo build --release --quiet; FC=$PWD/target/release/fabcheck; }
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
    python3 - "$N" > "$WORK/inv.toml" <<'PY'
import sys
print('[defaults]\ntransport = "local"')
for i in range(1, int(sys.argv[1]) + 1):
    print(f'[[node]]\nname = "n{i:04d}"\nfabric_ips = ["10.{i // 250}.{i % 250}.1"]')
PY
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$FC" run --dry-run scripts/localise.rhai \
        -i "$WORK/inv.toml" --json "$WORK/dry.json" -q >/dev/null 2>&1 || true
    read -r wall user sys rss < "$WORK/time"
    python3 - "$WORK/dry.json" "$N" "$wall" "$user" "$sys" "$rss" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
n, w, u, s, r = int(sys.argv[2]), *map(float, sys.argv[3:7])
t = [t for x in run["suites"] for t in x["tests"] if t["name"] == "localise: bad node or link"][0]
print(f"plan of localise over {n} nodes (dry run): {w:5.2f} s wall, {u + s:5.2f} s CPU, peak RSS {r / 1024:4.0f} MiB (target < 5 s)")
print(f"  {t['message'][:160]}")
# the plan's rounds (the testcase's output): each ring pair once, no node twice in a round
rounds = [l.rsplit(": ", 1)[1].split(" ") for l in (t.get("output") or "").splitlines() if l.startswith("localise plan: ring round ")]
pairs = [p for r in rounds for p in r]
twice = sum(len(r) * 2 - len({x for p in r for x in p.split("-")}) for r in rounds)
print(f"  ring: {len(pairs)} pair tests in {len(rounds)} rounds of {', '.join(str(len(r)) for r in rounds)}; nodes twice in a round: {twice}")
sys.exit(0 if len(pairs) == n and len(set(pairs)) == n and twice == 0 and len(rounds) == (2 if n % 2 == 0 else 3) else 1)
PY
    exit 0
fi
N=${1:-16}
SECS=${2:-2}
source scripts/lab_bench.sh
lab_enter "$((N > 16 ? N : 16))"
INV=$DIR/inventory.toml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SET=$(printf 'lab[01-%02d]' "$N")
rm -f "$DIR"/shims/bin/iperf3 # the real iperf3 (a lab test's shim may be left after a crash)
cat > "$WORK/pair.rhai" <<RHAI
test("one pair", || {
    for d in [["lab01", "lab02"], ["lab02", "lab01"]] {
        let r = iperf3(node(d[0]), node(d[1]), #{ duration: $SECS });
        metric("gbps", r.received_bps / 1e9, "Gbit/s");
    }
});
RHAI
one() { # SCRIPT JSON [ARGS...]: the run, its JSON kept
    local s=$1 j=$2
    shift 2
    "$FC" run "$s" -i "$INV" -w "$SET" --json "$j" -q "$@" >/dev/null 2>&1 || true
}
one "$WORK/pair.rhai" "$WORK/pair.json"
one scripts/localise.rhai "$WORK/ring.json" --set duration="$SECS"
one scripts/localise.rhai "$WORK/seq.json" --set duration="$SECS" --fanout 1
python3 - "$N" "$WORK/pair.json" "$WORK/ring.json" "$WORK/seq.json" <<'PY'
import json, sys
def test(path):
    run = json.load(open(path))
    return [t for s in run["suites"] for t in s["tests"] if t.get("node") is None and t["name"] != "(script top level)"][0]
def tests_used(t):
    return next((int(m["value"]) for m in t.get("metrics", []) if m["name"] == "localise_tests"), None)
n = sys.argv[1]
pair, ring, seq = (test(p) for p in sys.argv[2:5])
tp = pair["duration_ms"] / 1000
print(f"one pair test (iperf3 both ways, lab01 - lab02): {tp:6.2f} s ({pair['status']})")
for what, t in (("in rounds, a round at once", ring), ("one pair after another (--fanout 1)", seq)):
    d = t["duration_ms"] / 1000
    print(f"localise on {n} nodes, {what}: {d:6.2f} s = {d / tp:5.2f}x one pair "
          f"({t['status']}, {tests_used(t)} pair tests{'' if t['status'] == 'pass' else ': ' + (t.get('message') or '')[:200]})")
PY
