#!/usr/bin/env bash
# Fan-out benchmark (issue 8): fabcheck vs pdsh/clush on a lab of namespace nodes with real sshd.
#   sudo scripts/bench_fanout.sh [NODES=64] [ROUNDS=5]
# Prints medians over ROUNDS alternations and the ratios (fabcheck / other; < 1 is faster):
#   A  one command on all nodes: `fabcheck exec` vs `pdsh -R ssh -f N` vs `clush -f N`, and
#      pdsh running the command line fabcheck sends (start lines, `timeout -k` on the node):
#      the same node-side work, so that the transports alone are compared
#   B  10 rounds of run_all in one script vs ten pdsh calls
#   C  per-command latency on an open connection vs a raw `ssh -S` ControlMaster command
#   D  fabcheck's peak RSS at N nodes and `fabcheck --version` start-up time
# A is also given in busy CPU seconds of the whole machine. BENCH_ONLY_A=1 runs only A.
set -euo pipefail
FCLAB_ARGS=("$@")
cd "$(dirname "$0")/.."
N=${1:-64}
ROUNDS=${2:-5}
for t in pdsh clush /usr/bin/time python3; do command -v "$t" >/dev/null || { echo "bench: missing $t (apt-get install pdsh clustershell time)"; exit 2; }; done
source scripts/lab_bench.sh
lab_enter "$N"
INV=$DIR/inventory.toml
HOSTS=$(paste -sd, "$DIR/hosts")
export PDSH_SSH_ARGS="-F $DIR/ssh_config -l fclab %h"
export PDSH_RCMD_TYPE=ssh
CLUSH_OPTS=(-o "-F $DIR/ssh_config" -l fclab)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/b.rhai" <<'RHAI'
let all = nodes();
test("10 rounds of run_all", || { for i in 0..10 { run_all(all, "true"); } });
RHAI
cat > "$WORK/c.rhai" <<'RHAI'
let n = node("lab01");
n.run("true");                                   // connect once
test("per-command latency", || {
    let t = timestamp();
    for i in 0..50 { n.run("true"); }
    metric("per_command_ms", t.elapsed * 1000.0 / 50.0, "ms");
});
RHAI

now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.4f}')" "$1" "$2"; }
timeit() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now); secs "$t0" "$t1"; }

# Busy CPU seconds of the whole machine (all processes: ssh clients, sshds, the tool).
busy() { awk '/^cpu /{printf "%.2f\n", ($2+$3+$4+$7+$8+$9)/100}' /proc/stat; }
# "wall cpu" of one command.
measure() {
    local t0 t1 c0 c1; c0=$(busy); t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now); c1=$(busy)
    echo "$(secs "$t0" "$t1") $(secs "$c0" "$c1")"
}

declare -a A_FC A_PDSH A_CLUSH A_PDSHW AC_FC AC_PDSH AC_CLUSH AC_PDSHW B_FC B_PDSH C_FC C_SSH
# What fabcheck's node-side wrapper runs for `true` (src/transport/mod.rs, wrap_command).
WRAPPED='exec timeout -k 5 600.0 sh -c '"'"'printf "%s%s\n" fabc heck-0-bench:start; printf "%s%s\n" fabc heck-0-bench:start >&2; PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" FABCHECK_RUN="$0"; export FABCHECK_RUN; true'"'"' fabcheck-0-bench'
first_host=$(head -1 "$DIR/hosts")
for r in $(seq 1 "$ROUNDS"); do
    echo "round $r/$ROUNDS ..." >&2
    # A: the three tools in a rotating order, so that none always runs first or last.
    for k in 0 1 2 3; do
        case $(( (r + k) % 4 )) in
        0) read -r w c < <(measure "$FC" exec -i "$INV" -w @all --fanout "$N" -- true); A_FC+=("$w"); AC_FC+=("$c") ;;
        1) read -r w c < <(measure pdsh -f "$N" -w "$HOSTS" true); A_PDSH+=("$w"); AC_PDSH+=("$c") ;;
        2) read -r w c < <(measure clush -f "$N" "${CLUSH_OPTS[@]}" -w "$HOSTS" -b true); A_CLUSH+=("$w"); AC_CLUSH+=("$c") ;;
        3) read -r w c < <(measure pdsh -f "$N" -w "$HOSTS" "$WRAPPED"); A_PDSHW+=("$w"); AC_PDSHW+=("$c") ;;
        esac
    done
    [[ ${BENCH_ONLY_A:-} ]] && continue
    B_FC+=("$(timeit "$FC" run "$WORK/b.rhai" -i "$INV" --fanout "$N" -q)")
    t0=$(now); for _ in $(seq 1 10); do pdsh -f "$N" -w "$HOSTS" true >/dev/null 2>&1 || true; done; t1=$(now)
    B_PDSH+=("$(secs "$t0" "$t1")")
    "$FC" run "$WORK/c.rhai" -i "$INV" -q --json "$WORK/c.json" >/dev/null 2>&1 || true
    C_FC+=("$(python3 -c "import json; d=json.load(open('$WORK/c.json')); print(d['suites'][0]['tests'][0]['metrics'][0]['value']/1000.0)")")
    sock=$WORK/ctl
    ssh -F "$DIR/ssh_config" -M -S "$sock" -fN "$first_host"
    t0=$(now); for _ in $(seq 1 50); do ssh -F "$DIR/ssh_config" -S "$sock" "$first_host" true; done; t1=$(now)
    ssh -F "$DIR/ssh_config" -S "$sock" -O exit "$first_host" 2>/dev/null || true
    C_SSH+=("$(python3 -c "print(($t1 - $t0) / 50)")")
done

if [[ ${BENCH_ONLY_A:-} ]]; then
    python3 - "$N" "$ROUNDS" <<PY
import statistics as st, sys
m = lambda xs: st.median([float(x) for x in xs.split()])
a_fc, a_pdsh, a_clush = m("${A_FC[*]}"), m("${A_PDSH[*]}"), m("${A_CLUSH[*]}")
print(f"A only: {sys.argv[1]} lab nodes, median of {sys.argv[2]} rotations")
print(f"A  one command:   fabcheck exec {a_fc:.3f}s  pdsh {a_pdsh:.3f}s  clush {a_clush:.3f}s   ratio vs pdsh {a_fc/a_pdsh:.2f} (target <= 1.0), vs clush {a_fc/a_clush:.2f}")
print(f"   busy CPU-s:    fabcheck {m('${AC_FC[*]}'):.2f}  pdsh {m('${AC_PDSH[*]}'):.2f}  clush {m('${AC_CLUSH[*]}'):.2f}")
# Paired: fabcheck / pdsh within each rotation (both ran minutes apart at most), so that the
# spread between rotations shows how far the median can be trusted.
pairs = sorted(float(f) / float(p) for f, p in zip("${A_FC[*]}".split(), "${A_PDSH[*]}".split()))
print(f"   per-rotation ratio vs pdsh: min {pairs[0]:.2f}  median {st.median(pairs):.2f}  max {pairs[-1]:.2f}  ({sum(r <= 1.0 for r in pairs)}/{len(pairs)} rotations <= 1.0)")
a_w = m("${A_PDSHW[*]}")
wp = sorted(float(f) / float(p) for f, p in zip("${A_FC[*]}".split(), "${A_PDSHW[*]}".split()))
print(f"A' pdsh running fabcheck's node-side line (same node work): {a_w:.3f}s, busy CPU-s {m('${AC_PDSHW[*]}'):.2f};  fabcheck / that: median {st.median(wp):.2f} (min {wp[0]:.2f}, max {wp[-1]:.2f}; {sum(r <= 1.0 for r in wp)}/{len(wp)} rotations <= 1.0)")
PY
    exit 0
fi

rss_kb=$(/usr/bin/time -f %M "$FC" exec -i "$INV" -w @all --fanout "$N" -- true 2>&1 >/dev/null | tail -1)
startup=$(python3 - "$FC" <<'PY'
import subprocess, sys, time, statistics
ts = []
for _ in range(30):
    t = time.perf_counter(); subprocess.run([sys.argv[1], "--version"], stdout=subprocess.DEVNULL); ts.append(time.perf_counter() - t)
print(f"{statistics.median(ts) * 1000:.1f}")
PY
)

python3 - "$N" "$ROUNDS" "$rss_kb" "$startup" <<PY
import statistics as st, sys
n, rounds, rss_kb, startup = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
m = lambda xs: st.median([float(x) for x in xs.split()])
a_fc, a_pdsh, a_clush = m("${A_FC[*]}"), m("${A_PDSH[*]}"), m("${A_CLUSH[*]}")
b_fc, b_pdsh = m("${B_FC[*]}"), m("${B_PDSH[*]}")
c_fc, c_ssh = m("${C_FC[*]}"), m("${C_SSH[*]}")
print(f"fan-out benchmark: {n} lab nodes, median of {rounds} alternations")
print(f"A  one command:   fabcheck exec {a_fc:.3f}s  pdsh {a_pdsh:.3f}s  clush {a_clush:.3f}s   ratio vs pdsh {a_fc/a_pdsh:.2f} (target <= 1.0), vs clush {a_fc/a_clush:.2f}")
print(f"   busy CPU-s:    fabcheck {m('${AC_FC[*]}'):.2f}  pdsh {m('${AC_PDSH[*]}'):.2f}  clush {m('${AC_CLUSH[*]}'):.2f}   (whole machine: ssh clients + sshds + the tool)")
print(f"A' pdsh running fabcheck's node-side line: {m('${A_PDSHW[*]}'):.3f}s   fabcheck / that {a_fc/m('${A_PDSHW[*]}'):.2f} (the transports alone)")
print(f"B  10 rounds:     fabcheck run  {b_fc:.3f}s  10x pdsh {b_pdsh:.3f}s   ratio {b_fc/b_pdsh:.2f} (target <= 0.25)")
print(f"C  per command:   fabcheck {c_fc*1000:.2f} ms  ssh -S ControlMaster {c_ssh*1000:.2f} ms   ratio {c_fc/c_ssh:.2f} (target <= 1.5)")
print(f"D  peak RSS at {n} nodes: {rss_kb/1024:.1f} MB (target <= 64)   start-up (--version): {startup:.1f} ms (target <= 20)")
PY
