#!/usr/bin/env bash
# shellcheck disable=SC2016 # remote commands are expanded on the node
# Smoke test of the fabcheck lab: brings up N nodes (default 16), checks ssh,
# hops, netplan/hostname per node, jumbo frames, iperf3, ethtool, kill/start
# sshd, leftover-process detection, then tears down and checks nothing is left.
# Usage: smoke.sh [N] [--dir DIR]      exit 0 = all passed, 77 = not root
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
L=$here/lab.sh
N=16
DIR=${FCLAB_DIR:-/tmp/fclab}
while (($#)); do
    case $1 in
        --dir) DIR=$2; shift 2 ;;
        *) N=$1; shift ;;
    esac
done
if [[ $(id -u) -ne 0 ]]; then
    echo "fabcheck lab: needs root (ip netns); skipping" >&2
    exit 77
fi
((N >= 4)) || { echo "smoke.sh: need N >= 4" >&2; exit 2; }

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { # DESCRIPTION CMD...
    local d=$1; shift
    if "$@"; then ok "$d"; else bad "$d"; fi
}
# the lab lives in its own network namespace: the root side of the lab is reached through it
NSX="nsenter --net=/run/netns/fclab-net"
S() { $NSX ssh -F "$DIR/ssh_config" "$@"; }
ms() { echo $((($(date +%s%N) - $1) / 1000000)); }
# CMD... until it succeeds, polled, 120 s at most: wait for what a check needs, never a pause
until_ok() { local k; for ((k = 0; k < 1200; k++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
name() { if ((N > 99)); then printf 'lab%03d' "$1"; else printf 'lab%02d' "$1"; fi; }
cleanup() { "$L" down --dir "$DIR" >/dev/null 2>&1 || true; }
trap cleanup EXIT

t=$(date +%s%N)
"$L" up "$N" --dir "$DIR"
echo "time: up $N nodes: $(ms "$t") ms"

# the host's network is untouched: no lab route, bridge or veth outside fclab-net
check "host: no lab route" bash -c "! ip route | grep -qE '10\.21[345]\.'"
check "host: no lab link" bash -c "! ip -o link | grep -qE 'fclab|fc(m|f0|f1)-lab'"
check "host: one lab netns (fclab-net)" test "$(ip netns list | grep -c '^fclab-')" = 1
check "fclab-net: bridge address 10.213.0.254" bash -c "ip -n fclab-net -o addr | grep -q '10.213.0.254/16'"

# every node: ssh as fclab, own hostname, own netplan (file is root 0600 -> sudo)
declare -A sums=()
for ((i = 1; i <= N; i++)); do
    n=$(name "$i")
    out=$(S "$n" 'hostname; sudo -n cat /etc/netplan/40-cx7.yaml | md5sum; sudo -n grep -c "10.214.0.'"$i"'/16" /etc/netplan/40-cx7.yaml; stat -c %U:%a /etc/netplan/40-cx7.yaml') || out=""
    mapfile -t lines <<<"$out"
    if [[ ${lines[0]:-} == "$n" && ${lines[2]:-} == 1 && ${lines[3]:-} == root:600 ]]; then
        sums[${lines[1]}]=1
    else
        bad "$n: hostname/netplan over ssh: ${out//$'\n'/ | }"
    fi
done
check "ssh to all $N nodes, per-node hostname and netplan (root:600)" test "${#sums[@]}" -eq "$N"

check "ssh by mgmt IP with strict known_hosts" test "$(S -o StrictHostKeyChecking=yes 10.213.0.2 hostname)" = lab02
check "login PATH is shims first, no sbin" test "$(S lab01 'echo $PATH')" = "$DIR/shims/bin:/usr/local/bin:/usr/bin:/bin"
printf '#!/bin/sh\necho shim-on-$(hostname)\n' >"$DIR/shims/bin/fcshim"
chmod 0755 "$DIR/shims/bin/fcshim"
check "shim in DIR/shims/bin found via PATH" test "$(S lab02 fcshim)" = shim-on-lab02
check "user is fclab with /bin/sh" test "$(S lab01 'id -un; echo $SHELL')" = $'fclab\n/bin/sh'
check "passwordless sudo" test "$(S lab01 'sudo -n id -u')" = 0

# node-to-node ssh over the fabric (BatchMode, fclab's own key/known_hosts)
check "hop lab01 -> 10.214.0.2 (fab0)" test "$(S lab01 'ssh -o BatchMode=yes 10.214.0.2 hostname')" = lab02
check "hop lab01 -> 10.215.0.3 (fab1)" test "$(S lab01 'ssh -o BatchMode=yes 10.215.0.3 hostname')" = lab03
check "hop lab02 -> lab01 by name (mgmt)" test "$(S lab02 'ssh -o BatchMode=yes lab01 hostname')" = lab01

# jumbo frames end to end, and not bigger
check "ping -M do -s 8972 fab0 lab01->lab02" S lab01 'ping -q -c 2 -W 2 -M do -s 8972 10.214.0.2 >/dev/null'
check "ping -M do -s 8972 fab1 lab03->lab04" S lab03 'ping -q -c 2 -W 2 -M do -s 8972 10.215.0.4 >/dev/null'
check "ping -M do -s 8973 fails (MTU 9000)" bash -c "! $NSX ssh -F '$DIR/ssh_config' lab01 'ping -q -c 1 -W 1 -M do -s 8973 10.214.0.2' >/dev/null 2>&1"

# iperf3 over fab0
S lab02 'iperf3 -s -D -1 -B 10.214.0.2 >/dev/null 2>&1'
until_ok S lab02 'ss -Hltn "( sport = :5201 )" | grep -q .'
check "iperf3 lab01 -> lab02 over fab0" S lab01 'iperf3 -c 10.214.0.2 -t 1 -f g | grep -q receiver'
check "no fclab process left on lab02 after iperf3 -1" until_ok bash -c "test -z \"\$('$L' pids lab02 --dir '$DIR')\""

# ethtool: root via lab.sh exec, and sudo over ssh (ethtool lives in /usr/sbin)
check "ethtool fab0 (lab.sh exec)" bash -c "'$L' exec lab05 --dir '$DIR' ethtool fab0 | grep -q 'Link detected: yes'"
check "ethtool fab0 via ssh+sudo" bash -c "$NSX ssh -F '$DIR/ssh_config' lab05 'sudo -n ethtool fab0' | grep -q 'Speed:'"
check "fab0 MTU 9000 in node" test "$(S lab05 'cat /sys/class/net/fab0/mtu')" = 9000

# leftover process detection
S lab04 'sleep 120 >/dev/null 2>&1 &'
check "pids sees a leftover sleep on lab04" bash -c "'$L' pids lab04 --dir '$DIR' | grep -q 'sleep 120'"
check "pid namespace per node: lab03 does not see it" bash -c "! '$L' exec lab03 --dir '$DIR' pgrep -u fclab sleep >/dev/null"
"$L" exec lab04 --dir "$DIR" pkill -u fclab -x sleep || true
check "pids empty after pkill" until_ok bash -c "test -z \"\$('$L' pids lab04 --dir '$DIR')\""

# unreachable node
"$L" kill-sshd lab03 --dir "$DIR"
check "kill-sshd: ssh lab03 refused" bash -c "! $NSX ssh -F '$DIR/ssh_config' -o ConnectTimeout=3 lab03 true 2>/dev/null"
check "status reports lab03 down" bash -c "'$L' status --dir '$DIR' | grep -q '^lab03 down'"
"$L" start-sshd lab03 --dir "$DIR"
check "start-sshd: lab03 back" test "$(S lab03 hostname)" = lab03
check "status all up" bash -c "'$L' status --dir '$DIR' >/dev/null"

t=$(date +%s%N)
"$L" down --dir "$DIR"
echo "time: down $N nodes: $(ms "$t") ms"
check "down: no lab netns" bash -c "! ip netns list | grep -q '^fclab-'"
check "down: no lab sshd" bash -c "! pgrep -a sshd | grep -q -e '$DIR' -e node-init"
check "down: no lab links" bash -c "! ip -o link | grep -qE 'fclab|fc(m|f0|f1)-lab'"
check "down: no sudoers rule" test ! -e /etc/sudoers.d/fclab
check "down: DIR removed" test ! -e "$DIR"
"$L" down --dir "$DIR" >/dev/null 2>&1
check "down twice is fine" test $? -eq 0

echo "$pass passed, $fail failed"
((fail == 0))
