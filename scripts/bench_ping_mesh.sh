#!/usr/bin/env bash
# Ping-mesh benchmark (issue 22 item 5): five-step step 1 (a ping mesh, both directions, each
# pair pinging every fabric address of its peer at once, n.ping_all) on lab nodes, against the
# time of one `ping -c COUNT` between two lab nodes.
#   sudo scripts/bench_ping_mesh.sh [NODES=16] [COUNT=5]
# Measured twice: with the lab's two fabric addresses per node (two pings per pair) and with
# the first address only (one ping per pair). Prints the times and ratios (target <= 3 at 16
# nodes), checks that every pair passed, and the most pairs one node was first (and second) of
# at once (from the JSON start times and durations). BENCH_ROUNDS=1 also times the step in
# rounds (the way before issue 22).
# Takes the lab tests' lock (/run/fclab.tests.lock): waits while a lab test runs.
set -euo pipefail
FCLAB_ARGS=("$@")
cd "$(dirname "$0")/.."
N=${1:-16}
COUNT=${2:-5}
source scripts/lab_bench.sh
lab_enter "$((N > 16 ? N : 16))"
INV=$DIR/inventory.toml
WORK=$(mktemp -d)
ROUNDS_SCRIPT=$PWD/scripts/.bench_rounds.rhai # next to the script: same module paths
trap 'rm -rf "$WORK" "$ROUNDS_SCRIPT"' EXIT
SET=$(printf 'lab[01-%02d]' "$N")
SCRIPT=$PWD/scripts/five_step_acceptance.rhai

now() { date +%s.%N; }
# The kernel's IPv4 neighbour table is one for all namespaces (tests/lab/lab.sh raises its
# limits to fit the lab): refusals of new entries (table_fulls, summed over CPUs) so far.
table_fulls() { python3 -c "print(sum(int(l.split()[12], 16) for l in open('/proc/1/net/stat/arp_cache').readlines()[1:]))"; }
FULLS0=$(table_fulls)
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }
# One ping -c COUNT from lab01 to lab02's first fabric address (inside lab01's namespace).
PEER=$(awk '/name = "lab02"/ { f = 1 } f && /fabric_ips/ { gsub(/[^0-9.,]/, ""); split($0, a, ","); print a[1]; exit }' "$INV")
t0=$(now)
bash tests/lab/lab.sh exec lab01 ping -n -q -c "$COUNT" -W 2 "$PEER" >/dev/null
T_PING=$(secs "$t0" "$(now)")
step1() { # SCRIPT INVENTORY JSON -> seconds (a failed run is reported from its JSON below)
    local t0
    t0=$(now)
    "$FC" run "$1" -i "$2" -w "$SET" --filter "step 1" --set ping_count="$COUNT" --json "$3" -q >/dev/null 2>&1 || true
    secs "$t0" "$(now)"
}
# The same lab with one fabric interface and address per node.
sed -E -e 's/^interfaces = \["([^"]+)",.*$/interfaces = ["\1"]/' \
    -e 's/^fabric_ips = \["([^"]+)",.*$/fabric_ips = ["\1"]/' "$INV" > "$WORK/one.toml"
T_MESH=$(step1 "$SCRIPT" "$INV" "$WORK/two.json")
T_ONE=$(step1 "$SCRIPT" "$WORK/one.toml" "$WORK/one.json")
T_ROUNDS=
if [[ -n ${BENCH_ROUNDS:-} ]]; then
    sed 's/, rounds: false//' "$SCRIPT" > "$ROUNDS_SCRIPT"
    T_ROUNDS=$(step1 "$ROUNDS_SCRIPT" "$INV" "$WORK/rounds.json")
fi
cp "$WORK"/*.json /tmp/ 2>/dev/null || true # left for a look: /tmp/two.json, /tmp/one.json
FULLS=$(($(table_fulls) - FULLS0))
python3 - "$T_PING" "$N" "$COUNT" "$T_ROUNDS" "$FULLS" \
    "$WORK/two.json" "$T_MESH" "two addresses" "$WORK/one.json" "$T_ONE" "one address" <<'PY'
import json, sys
from datetime import datetime
t_ping, n, count, t_rounds, fulls = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
args = sys.argv[6:]
print(f"one ping -c {count}: {t_ping:.2f} s")
print(f"neighbour table overflows during the runs: {fulls} (table_fulls in the host's /proc/net/stat/arp_cache; "
      "not 0: the host's net.ipv4.neigh.default.gc_thresh3 is too small for the lab, pings go unanswered)")
if t_rounds:
    print(f"step 1, two addresses, in rounds (before): {float(t_rounds):.2f} s, ratio {float(t_rounds) / t_ping:.2f}")
ok = True
for path, t_mesh, what in zip(args[0::3], args[1::3], args[2::3]):
    t_mesh = float(t_mesh)
    run = json.load(open(path))
    tests = [t for s in run["suites"] for t in s["tests"] if t["name"].startswith("step 1")]
    bad = [t["name"] + ": " + (t.get("message") or "") for t in tests if t["status"] not in ("pass", "skipped")]
    events = []
    spans = {}
    for t in tests:
        start = datetime.fromisoformat(t["started"].replace("Z", "+00:00")).timestamp()
        g = spans.setdefault(t["name"].split(" [")[0], [start, start])
        g[0], g[1] = min(g[0], start), max(g[1], start + t["duration_ms"] / 1000)
    for t in tests:
        if t.get("peer") is None:  # the per-node testcases of step 1 (identity, RoCE MTU)
            continue
        start = datetime.fromisoformat(t["started"].replace("Z", "+00:00")).timestamp()
        # ends 2 ms early: start stamps and durations are whole milliseconds
        events += [(start, 1, t), (start + t["duration_ms"] / 1000 - 0.002, -1, t)]
    events.sort(key=lambda e: (e[0], e[1]))
    now, most = {}, {"first": 0, "second": 0}
    for _, d, t in events:
        for role, node in (("first", t["node"]), ("second", t["peer"])):
            now[(role, node)] = now.get((role, node), 0) + d
            most[role] = max(most[role], now[(role, node)])
    print(f"step 1, {what}, {n} nodes, together: {t_mesh:.2f} s, ratio {t_mesh / t_ping:.2f} (target <= 3 at 16 nodes); "
          f"{len(tests)} testcases, {len(tests) - len(bad)} passed; pairs at once per node: "
          f"{most['first']} as first, {most['second']} as second")
    for name, (t0, t1) in spans.items():
        print(f"  {name}: {t1 - t0:.2f} s from its first start to its last end")
    for b in bad[:5]:
        print(f"  NOT PASSED {b}")
    ok = ok and len(tests) > 0 and not bad
sys.exit(0 if ok and fulls == 0 else 1)
PY
