#!/usr/bin/env bash
# Inventory loading benchmark (issue 14): `fabcheck nodes -i INV` on generated inventories of
# N nodes, in two forms: one [[node]] table per node (name, host, interfaces, a group over all)
# and one node set `n[000000-N]`. Also the expansion of a 1,000,000-name node set (the cap).
#   scripts/bench_inventory.sh [SIZES="10000 40000 100000"] [ROUNDS=3]
# Prints the median wall time per case. FC=/path/to/fabcheck compares another build (e.g. an
# older commit's target/release/fabcheck); by default target/release/fabcheck, built if missing.
# Needs python3 (to write the inventories). No root, no lab.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${1:-"10000 40000 100000"}
ROUNDS=${2:-3}
if [[ -z ${FC:-} ]]; then
    [[ -x target/release/fabcheck ]] || cargo build --release --quiet --bin fabcheck
    FC=$PWD/target/release/fabcheck
fi
command -v python3 >/dev/null || { echo "bench: needs python3"; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 - "$WORK" $SIZES <<'PY'
import sys
work, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
for n in sizes:
    with open(f"{work}/tables{n}.toml", "w") as f:
        f.write('[defaults]\nuser = "nvidia"\n')
        for i in range(n):
            f.write(f'[[node]]\nname = "n{i:06d}"\nhost = "10.{i >> 16}.{(i >> 8) & 255}.{i & 255}"\n'
                    f'interfaces = ["eth0"]\n')
        f.write(f'[groups]\nall = "n[000000-{n - 1:06d}]"\n')
    with open(f"{work}/set{n}.toml", "w") as f:
        f.write(f'[[node]]\nname = "n[000000-{n - 1:06d}]"\n[groups]\nall = "n[000000-{n - 1:06d}]"\n')
PY

# median wall seconds of ROUNDS runs of "$@" (stdout discarded; a failure prints its error:
# builds before the cap reject `n[0-999999]` as a range of more than 100000 nodes)
median() {
    local times=() r s e
    for ((r = 0; r < ROUNDS; r++)); do
        s=$(date +%s%N)
        "$@" >/dev/null 2>"$WORK/err" || { printf 'error: %s' "$(head -c 60 "$WORK/err")"; return 0; }
        e=$(date +%s%N)
        times+=("$(((e - s) / 1000000))")
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)] / 1000}'
}

echo "fabcheck: $FC ($("$FC" --version))"
echo "cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg), rounds: $ROUNDS"
printf '%-34s %10s\n' case "median s"
for n in $SIZES; do
    printf '%-34s %10s\n' "$n nodes, one [[node]] each" "$(median "$FC" nodes -i "$WORK/tables$n.toml")"
    printf '%-34s %10s\n' "$n nodes, one node set" "$(median "$FC" nodes -i "$WORK/set$n.toml")"
done
printf '%-34s %10s\n' "-w n[0-999999] (the cap)" "$(median "$FC" nodes 'n[0-999999]')"
