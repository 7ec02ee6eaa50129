#!/usr/bin/env bash
# A newcomer's first day, with the README alone (issue 31): from a fresh clone of this checkout,
# run the README's main command (install, then the five-step acceptance on the simulation), see
# the fault it names caught, then write the README's custom check and run it. Every command is
# taken from README.md itself, so the test follows the README when it changes.
#
#   tests/newcomer.sh              fresh clone in a temporary directory; `cargo install` into it
#   NEWCOMER_KEEP=1 tests/newcomer.sh   keep the temporary directory (printed)
#
# The install builds fabcheck in release mode (several minutes on a small machine); nothing is
# installed outside the temporary directory (CARGO_INSTALL_ROOT). As root it then runs the
# README's line for the five-step on the test lab, which builds the lab and removes it again
# (the host's routes, namespaces, links and users are compared before and after); without root
# that half is skipped, saying so (with CI set: a failure).
# Exit 0: every step did what the README says.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/fabcheck-newcomer.XXXXXX)
[[ -n ${NEWCOMER_KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
fail() { echo "newcomer: FAIL: $*" >&2; exit 1; }
step() { echo "newcomer: $*" >&2; }

# The README's first ```sh block: its first line is the main job.
main_cmd=$(awk '/^```sh$/ { inside = 1; next } inside && /^```/ { exit } inside { print; exit }' "$repo/README.md")
main_cmd=${main_cmd%%#*}
[[ $main_cmd == *"cargo install"*"fabcheck run"* ]] || fail "README's first command is not install + run: $main_cmd"

step "fresh clone of $repo"
git clone -q --no-hardlinks "$repo" "$work/fabcheck"
# uncommitted work of this checkout is not in a clone: test what is committed
cd "$work/fabcheck"

export CARGO_INSTALL_ROOT=$work/cargo
export PATH=$CARGO_INSTALL_ROOT/bin:$PATH
export CARGO_TARGET_DIR=${NEWCOMER_TARGET_DIR:-$work/target}
# (the newcomer's shell has no CI; whether this run is CI's is kept for the lab half's skip)
case ${CI:-} in ''|false|0) under_ci= ;; *) under_ci=1 ;; esac
unset CI
t0=$SECONDS
step "README: $main_cmd"
set +e
out=$(bash -c "$main_cmd" 2>&1)
rc=$?
set -e
printf '%s\n' "$out" | tail -n 5 >&2
((rc == 0)) || fail "the README's main command exited $rc"
step "install and five-step on the simulation: $((SECONDS - t0)) s"
command -v fabcheck >/dev/null || fail "fabcheck is not on PATH after the README's install"
grep -q "SIMULATED" <<<"$out" || fail "the simulated run does not say SIMULATED"
grep -q "synthesised" <<<"$out" || fail "the simulation banner does not say what is synthesised"
grep -Eq "^[0-9]+ tests: [0-9]+ passed, 0 failed, 0 errors" <<<"$out" || fail "five-step on the simulation is not green"

# "Then see a fault caught: add `--scenario NAME` to the first command"
scenario=$(grep -o 'add `--scenario [a-z0-9-]*`' "$repo/README.md" | head -n 1 | sed 's/.*--scenario \([a-z0-9-]*\)`/\1/')
[[ -n $scenario ]] || fail "README names no fault scenario to try"
run_cmd=${main_cmd#*&& }
step "README: $run_cmd --scenario $scenario"
set +e
out=$(bash -c "$run_cmd --scenario $scenario" 2>&1)
rc=$?
set -e
((rc == 1)) || fail "the fault scenario $scenario exited $rc, not 1 (a test failed)"
grep -q "^FAIL " <<<"$out" || fail "the fault scenario $scenario failed no test"

# "One custom check": the README's ```rhai block, saved where its first line says, run as its
# comment says, then `fabcheck check` on it
script=$(awk '/^```rhai$/ { inside = 1; next } inside && /^```/ { exit } inside { print }' "$repo/README.md")
path=$(head -n 1 <<<"$script" | sed -n 's|^// *\([^ ]*\.rhai\).*|\1|p')
[[ -n $path ]] || fail "README's custom check does not say where it lives"
mkdir -p "$(dirname "$path")"
printf '%s\n' "$script" >"$path"
step "README: fabcheck check $(dirname "$path")/ and run on the simulation"
fabcheck check "$(dirname "$path")/" >/dev/null || fail "fabcheck check rejects the README's custom check"
set +e
out=$(fabcheck run "$(dirname "$path")/" -i examples/sim/two-sparks.toml 2>&1)
rc=$?
set -e
((rc == 0)) || { printf '%s\n' "$out" >&2; fail "the README's custom check on the simulation exited $rc"; }
grep -q "PASS  fabric MTU \[spark-01\]" <<<"$out" || fail "no per-node testcase for spark-01"
grep -q "^Results: " <<<"$out" || step "note: this build writes no results directory"
step "ok: fresh clone to five-step on the simulation, a fault caught and a custom check, in $((SECONDS - t0)) s"

# "On real SSH servers before your own cluster": the README's lab line, as root. It leaves the
# host as it found it (no namespace, route or user of the lab's afterwards). Skipped, saying so,
# without root or when a lab is already up (its `up` would replace a lab kept for other work).
lab_cmd=$(grep -m 1 '^bash tests/lab/lab.sh up ' "$repo/README.md" || true)
[[ -n $lab_cmd ]] || fail "README gives no command for the five-step on the test lab"
if [[ $(id -u) -ne 0 ]]; then
    [[ -z $under_ci && -z ${NEWCOMER_CI:-} ]] || fail "the lab half needs root (CI runs as root)"
    step "SKIPPED the lab half: not root (the README's lab line needs root)"
    exit 0
fi
# The lab is the machine's: hold the lab tests' lock (tests/it/common/lab.rs) while the lab half
# uses it, so that a lab test of another test run finishes first and none starts meanwhile.
exec 8>/run/fclab.tests.lock
flock -w 1800 8 || fail "the lab tests' lock /run/fclab.tests.lock was not free within 30 minutes"
if bash tests/lab/lab.sh status >/dev/null 2>&1 || [[ $? -ne 2 ]]; then
    step "SKIPPED the lab half: a test lab is up already (tests/lab/lab.sh status)"
    exit 0
fi
lab_state() { ip route; ip netns list; ip -o link show | awk -F': ' '{print $2}'; cut -d: -f1 /etc/passwd; }
before=$(lab_state)
t1=$SECONDS
step "README: $lab_cmd"
set +e
out=$(bash -c "$lab_cmd" 2>&1)
set -e
printf '%s\n' "$out" | tail -n 3 >&2
for s in "step 1: ping mesh" "step 1: MTU end to end" "step 2: passwordless ssh"; do
    n=$(grep -c "^PASS  $s \[" <<<"$out" || true)
    ((n == 12)) || fail "on the lab, $n of 12 '$s' testcases passed"
done
grep -q "^FAIL " <<<"$out" && fail "a test failed on the healthy lab"
grep -q "^ERROR step 3: rdma devices up \[lab01\]" <<<"$out" || fail "step 3 is not the ERROR the README says"
[[ $(lab_state) == "$before" ]] || fail "the README's lab line left the host changed: $(diff <(echo "$before") <(lab_state))"
step "ok: the five-step on the test lab (steps 1 and 2 real, step 3 an error) and the host as before, in $((SECONDS - t1)) s"
