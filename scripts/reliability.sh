#!/usr/bin/env bash
# Reliability trial (issue 9): interrupt fabcheck at random moments on a 16-node lab and check
# that every run exits 3, writes a valid JUnit/JSON, and leaves no process on any node and no
# local ssh or control directory behind 1 s after exit.
#   sudo scripts/reliability.sh [ITERATIONS=20]      (NODES=4 to use lab01..lab04 only)
set -euo pipefail
FCLAB_ARGS=("$@")
cd "$(dirname "$0")/.."
ITER=${1:-20}
NODES=${NODES:-16}
XSD=tests/junit/jenkins-xunit-junit-10-2018-04.xsd
source scripts/lab_bench.sh
lab_enter 16 reliability
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cat > "$W/s.rhai" <<'RHAI'
let all = nodes(param("nodes", "lab[01-16]"));
test_each(all, "hostname", |n| { assert_eq(n.sh("hostname").trimmed(), n.name, "hostname"); });
test("sleepers", || { run_all(all, "sleep 30"); });
test_each(all, "iperf-ish", |n| { n.run("sleep 5 & sleep 5; wait"); });
test("after", || {});
RHAI
ok=0; bad=0
for i in $(seq 1 "$ITER"); do
    sig=INT; ((i % 2)) || sig=TERM
    delay=$(python3 -c "import random; print(round(random.uniform(0.05, 3.0), 2))")
    rm -f "$W/j.xml" "$W/r.json"
    "$FC" run "$W/s.rhai" --set nodes="lab[01-$(printf %02d "$NODES")]" -i "$DIR/inventory.toml" -q --junit "$W/j.xml" --json "$W/r.json" >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"; kill -"$sig" "$pid" 2>/dev/null || true
    t0=$(date +%s%N); set +e; wait "$pid"; code=$?; set -e; ms=$((($(date +%s%N) - t0) / 1000000))
    sleep 1
    left=""; for n in $(seq -f "lab%02g" 1 "$NODES"); do p=$(bash tests/lab/lab.sh pids "$n" --dir "$DIR" 2>/dev/null); [[ -z $p ]] || left+="$n "; done
    localssh=$(pgrep -f "fc-$pid/" || true)
    dirs=$(ls -d "${TMPDIR:-/tmp}"/fc-*/"fc-$pid" "${TMPDIR:-/tmp}/fc-$pid" 2>/dev/null || true)
    valid=yes; xmllint --noout --schema "$XSD" "$W/j.xml" 2>/dev/null || valid=no
    python3 -c "import json; json.load(open('$W/r.json'))" 2>/dev/null || valid=no
    if [[ $code -eq 3 && $valid == yes && -z $left && -z $localssh && -z $dirs ]]; then ok=$((ok + 1)); r=ok; else bad=$((bad + 1)); r=FAIL; fi
    echo "run $i: SIG$sig after ${delay}s -> exit $code in ${ms} ms, reports valid: $valid, left on nodes: ${left:-none}, local ssh: ${localssh:-none}, control dir: ${dirs:-none} [$r]"
done
echo "reliability: $ITER interrupted runs, $ok clean, $bad with a problem"
[[ $bad -eq 0 ]]
