#!/usr/bin/env bash
# fabcheck test lab: N fake GPU-cluster hosts in network namespaces, each with
# its own real OpenSSH sshd, a management network and two fabric "rails".
#
#   lab.sh up N [--dir DIR] [VARIANT]      (re)create lab01..labNN (tears down first)
#   lab.sh ensure N [--dir DIR] [VARIANT]  keep a healthy N-node lab of that variant in DIR,
#                                  else "up N [VARIANT]"
#     VARIANT (default: none of these; see README.md "Variants"):
#       --no-names                 nodes do not resolve each other's names (own name only)
#       --user-ssh-config TEXT     the lab user's ~/.ssh/config is TEXT (e.g.
#                                  "StrictHostKeyChecking no") and its known_hosts is empty
#       --noisy-shell              the lab user's login shell is bash and its ~/.bashrc
#                                  prints a banner (stdout) and module chatter (stderr)
#       --slurm                    a real Slurm cluster: munged and slurmctld on the root
#                                  side, one slurmd per node (README.md "Slurm")
#   lab.sh down [--dir DIR]        remove everything, the lab user too when up created it
#                                  (safe twice / after failure)
#   lab.sh status [--dir DIR]      which nodes are up (exit 0 all up, 1 some down, 2 no lab)
#   lab.sh kill-sshd NODE [--listener-only]   stop a node's sshd (and its sessions)
#   lab.sh start-sshd NODE         start it again
#   lab.sh isolate|unisolate NODE  take the node's management link down/up (ssh times out)
#   lab.sh exec NODE CMD...        run CMD as root inside the node (net/uts/mount/pid ns)
#   lab.sh run CMD...              run CMD in the lab's network namespace (the "root side"
#                                  of the lab: ssh -F DIR/ssh_config labNN, fabcheck ...)
#   lab.sh pids NODE               processes of the lab user on NODE, except sshd
#
# --dir may also be given as FCLAB_DIR. See README.md in this directory.
#
# The host's network is left alone: bridges, the lab's "root side" (10.213.0.254) and its
# routes live in one network namespace of their own, fclab-net; each node is a namespace
# set of its own (not registered in /run/netns) linked to fclab-net's bridges by veths.
set -euo pipefail

readonly LAB_USER=fclab
readonly LAB_HOME=/home/fclab
readonly BR_MGMT=fclabm0 BR_F0=fclabf0 BR_F1=fclabf1
readonly NS_PREFIX=fclab-
# the lab's own network namespace (bridges, 10.213.0.254, routes): the host sees none of it
readonly LAB_NS=fclab-net
readonly LAB_NS_PATH=/run/netns/$LAB_NS
# the lab user's comment: a user with it was created by lab.sh, and "down" removes it
readonly LAB_USER_GECOS="fabcheck test lab user (lab.sh; removed by lab.sh down)"
readonly LOCK=/run/fclab.lock
readonly NETPLAN_MARK=/run/fclab.created-etc-netplan
readonly SLURM_ETC_MARK=/run/fclab.created-etc-slurm
# the host's IPv4 neighbour-table limits before the lab raised them ("gc_thresh2 gc_thresh3");
# "down" writes them back and removes the file
readonly NEIGH_SAVED=/run/fclab.neigh-gc-thresh
# lab Slurm daemons' ports (not Slurm's 6817/6818: a real Slurm on this machine is left alone)
readonly SLURMCTLD_PORT=6917 SLURMD_PORT=6918
readonly SUDOERS=/etc/sudoers.d/fclab
readonly MTU_FABRIC=9000
# first line of a lab user ~/.ssh/config written by a variant (removed by a default up/down)
# first line of a lab user ~/.bashrc written by the --noisy-shell variant
readonly NOISY_RC_MARK="# fabcheck lab variant (lab.sh --noisy-shell); removed by lab.sh up/down"
readonly USER_SSH_CONFIG_MARK="# fabcheck lab variant (lab.sh --user-ssh-config); removed by lab.sh up/down"

die() { echo "fabcheck lab: $*" >&2; exit 1; }
log() { [[ -n ${FCLAB_QUIET:-} ]] || echo "fabcheck lab: $*" >&2; }
T0=$(date +%s%N)
phase() { [[ -z ${FCLAB_TIMING:-} ]] || echo "fabcheck lab: +$((($(date +%s%N) - T0) / 1000000)) ms $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
    echo "fabcheck lab: needs root (ip netns); skipping" >&2
    exit 77
fi

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }

# Lab nodes outlive this script: they must not inherit its caller's descriptors (a
# `flock LOCK cargo test` around the tests would otherwise stay locked while the lab runs).
for _fd in /proc/$$/fd/*; do
    _fd=${_fd##*/}
    [[ $_fd =~ ^[0-9]+$ ]] && ((_fd > 2)) && eval "exec $_fd>&-" 2>/dev/null || true
done
unset _fd

# ---------------------------------------------------------------- arguments
CMD=${1:-}
[[ -n $CMD ]] || usage
shift
DIR=${FCLAB_DIR:-/tmp/fclab}
LISTENER_ONLY=0
PURGE=0
NO_NAMES=0
NOISY_SHELL=0
SLURM=0
USER_SSH_CONFIG=
HAVE_USER_SSH_CONFIG=0
ARGS=()
while (($#)); do
    case $1 in
        --dir) [[ $# -ge 2 ]] || usage; DIR=$2; shift 2 ;;
        --dir=*) DIR=${1#--dir=}; shift ;;
        --listener-only) LISTENER_ONLY=1; shift ;;
        --purge) PURGE=1; shift ;;
        --no-names) NO_NAMES=1; shift ;;
        --noisy-shell) NOISY_SHELL=1; shift ;;
        --slurm) SLURM=1; shift ;;
        --user-ssh-config) [[ $# -ge 2 ]] || usage; USER_SSH_CONFIG=$2; HAVE_USER_SSH_CONFIG=1; shift 2 ;;
        --user-ssh-config=*) USER_SSH_CONFIG=${1#--user-ssh-config=}; HAVE_USER_SSH_CONFIG=1; shift ;;
        --) shift; ARGS+=("$@"); break ;;
        *)
            if [[ ($CMD == exec && ${#ARGS[@]} -ge 1) || $CMD == run ]]; then ARGS+=("$@"); break; fi
            ARGS+=("$1"); shift ;;
    esac
done
[[ $DIR == /* ]] || DIR=$PWD/$DIR
DIR=${DIR%/}
[[ $DIR =~ ^/[A-Za-z0-9/._-]+$ ]] || die "DIR must be an absolute path of [A-Za-z0-9/._-]: $DIR"
((${#DIR} <= 48)) || echo "fabcheck lab: warning: DIR is long; ssh control socket paths under it may exceed 108 bytes" >&2
[[ $DIR != / && $DIR != /tmp && $DIR != /root && $DIR != /home ]] || die "refusing DIR=$DIR"

# ---------------------------------------------------------------- helpers
# Node i (1-based) -> name and addresses. Third octet = (i-1)/250, fourth =
# (i-1)%250+1, so lab01..lab250 are 10.21x.0.1..250, lab251 is 10.21x.1.1.
# The root side of the management bridge is 10.213.0.254 (never a node).
node_name() { if (($2 > 99)); then printf -v "$3" 'lab%03d' "$1"; else printf -v "$3" 'lab%02d' "$1"; fi; }
node_oct() { printf -v "$2" '%d.%d' $((($1 - 1) / 250)) $((($1 - 1) % 250 + 1)); }
node_mac() { printf -v "$3" '02:fc:1a:%02x:%02x:%02x' "$2" $((($1 >> 8) & 255)) $(($1 & 255)); }

# Reads DIR/nodes.list ("name idx mgmt fab0 fab1") into arrays.
NODES=() IDX=() MGMT=() FAB0=() FAB1=()
load_nodes() {
    NODES=() IDX=() MGMT=() FAB0=() FAB1=()
    [[ -f $DIR/nodes.list ]] || return 0
    local n i m a b
    while read -r n i m a b; do
        NODES+=("$n"); IDX+=("$i"); MGMT+=("$m"); FAB0+=("$a"); FAB1+=("$b")
    done <"$DIR/nodes.list"
}
node_index() { # NODE -> sets REPLY to array position or dies
    local k
    for k in "${!NODES[@]}"; do
        if [[ ${NODES[$k]} == "$1" ]]; then REPLY=$k; return 0; fi
    done
    die "no such node in $DIR: $1"
}
# pid (root pid namespace) of the unshare process holding the node
unshare_pid() {
    local f=$DIR/nodes/$1/unshare.pid p
    [[ -f $f ]] || return 1
    read -r p <"$f" || return 1
    [[ -r /proc/$p/comm ]] || return 1
    [[ $(<"/proc/$p/comm") == unshare ]] || return 1
    REPLY=$p
}
# pid (root pid namespace) of the node's init (PID 1 inside the node)
init_pid() {
    local up c
    unshare_pid "$1" || return 1
    up=$REPLY
    c=$(cat "/proc/$up/task/$up/children" 2>/dev/null) || return 1
    c=${c%% *}
    [[ -n $c ]] || return 1
    REPLY=$c
}
# root-namespace pids of sshd processes of a node (listener first if any)
sshd_pids() {
    local p init=
    init_pid "$1" && init=$REPLY
    REPLY=""
    [[ -n $init ]] || return 0
    for p in $(pgrep --ns "$init" --nslist net 2>/dev/null); do
        [[ -r /proc/$p/comm && $(</proc/"$p"/comm) == sshd ]] || continue
        if [[ -n $init && $(awk '/^PPid:/{print $2}' "/proc/$p/status" 2>/dev/null) == "$init" ]]; then
            REPLY="$p $REPLY"
        else
            REPLY="$REPLY $p"
        fi
    done
    REPLY=${REPLY# }
    REPLY=${REPLY% }
}
listener_pid() {
    local init p
    init_pid "$1" || return 1
    init=$REPLY
    local kids=()
    read -r -a kids <"/proc/$init/task/$init/children" 2>/dev/null || true
    for p in "${kids[@]}"; do
        if [[ $(<"/proc/$p/comm") == sshd ]]; then REPLY=$p; return 0; fi
    done 2>/dev/null
    return 1
}

# Older copies of lab.sh added "unreachable" route guards for the lab subnets to the host;
# "down" removes them (this lab adds no route to the host: its subnets exist only in
# fclab-net and the nodes).
readonly LAB_NETS="10.213.0.0/16 10.214.0.0/16 10.215.0.0/16"
unguard_routes() {
    local net
    for net in $LAB_NETS; do ip route del unreachable "$net" metric 4000 2>/dev/null || true; done
}

# The variant asked for on the command line, as written to DIR/variant; a lab without that
# file is the default lab (labs made before variants existed).
variant_sig() {
    local cfg=none
    if ((HAVE_USER_SSH_CONFIG)); then
        cfg=$(printf '%s' "$USER_SSH_CONFIG" | sha256sum | cut -c1-16)
    fi
    REPLY="no_names=$NO_NAMES user_ssh_config=$cfg noisy_shell=$NOISY_SHELL"
    # only when asked for: a default lab's signature is the one older lab.sh copies write
    ((SLURM)) && REPLY+=" slurm=1"
    # the layout: older copies (nodes on host bridges) see a different lab and rebuild it
    REPLY+=" netns=$LAB_NS"
    return 0
}
current_variant() {
    REPLY="no_names=0 user_ssh_config=none noisy_shell=0"
    [[ -f $DIR/variant ]] && read -r REPLY <"$DIR/variant"
    return 0
}
# The lab user's ~/.ssh/config: a variant's TEXT, else none (only a file this script wrote is
# removed; a foreign one is kept with a warning).
user_ssh_config() {
    local f=$LAB_HOME/.ssh/config first=
    if [[ -f $f ]]; then
        read -r first <"$f" || true
        if [[ $first == "$USER_SSH_CONFIG_MARK" ]]; then
            rm -f "$f"
        elif [[ ${1:-} != remove ]]; then
            echo "fabcheck lab: warning: $f was not written by lab.sh; left as it is" >&2
            return 0
        fi
    fi
    [[ ${1:-} != remove ]] || return 0
    if ((HAVE_USER_SSH_CONFIG)); then
        printf '%s\n%s\n' "$USER_SSH_CONFIG_MARK" "$USER_SSH_CONFIG" >"$f"
        chown "$LAB_USER:" "$f"
        chmod 0600 "$f"
    fi
}

# The lab user's ~/.bashrc: the --noisy-shell variant's (banner on stdout, module chatter on
# stderr, a last line without newline), else the one from /etc/skel (only a file this script
# wrote is replaced).
noisy_rc() {
    local f=$LAB_HOME/.bashrc first=
    if [[ -f $f ]]; then
        read -r first <"$f" || true
        if [[ $first == "$NOISY_RC_MARK" ]]; then
            if [[ -f /etc/skel/.bashrc ]]; then cp /etc/skel/.bashrc "$f"; else rm -f "$f"; fi
            chown "$LAB_USER:" "$f" 2>/dev/null || true
        fi
    fi
    if [[ ${1:-} != remove ]] && ((NOISY_SHELL)); then
        cat >"$f" <<'RC'
# fabcheck lab variant (lab.sh --noisy-shell); removed by lab.sh up/down
echo "Welcome to $(hostname): maintenance window tonight, 22:00-02:00"
echo "Lmod: loaded cuda/12.4 nccl/2.21 (3 modules)" >&2
printf '%s' "motd: last login from 10.0.0.1"
RC
        chown "$LAB_USER:" "$f"
    fi
}

# CMD... in the lab's network namespace (as the caller, same mounts)
labns() { nsenter --net="$LAB_NS_PATH" -- "$@"; }

take_lock() {
    exec 9>"$LOCK"
    flock -w 300 9 || die "could not lock $LOCK"
}

ensure_pkgs() {
    local missing=()
    command -v sshd >/dev/null || [[ -x /usr/sbin/sshd ]] || missing+=(openssh-server)
    command -v ssh >/dev/null || missing+=(openssh-client)
    command -v sudo >/dev/null || missing+=(sudo)
    command -v ip >/dev/null || missing+=(iproute2)
    command -v nsenter >/dev/null || missing+=(util-linux)
    ((${#missing[@]} == 0)) && return 0
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null ||
        { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; } ||
        die "could not install ${missing[*]}"
}

# ---------------------------------------------------------------- down
# The kernel's IPv4 neighbour (ARP) table is ONE table for all network namespaces: its limits
# (net.ipv4.neigh.default.gc_thresh2/3, 512/1024 by default, settable only from the host's
# namespace) count every namespace's entries together. A lab node has an entry per peer it
# reached on each fabric rail and on the management network, so a lab of N nodes whose every
# pair pings holds up to about 3·N² entries (64 nodes: ~12,000): past gc_thresh3 the kernel
# refuses new entries ("neighbour: arp_cache: neighbor table overflow!", table_fulls in
# /proc/net/stat/arp_cache) and those pings go unanswered. Raise both limits to fit N nodes
# (never lower them), keeping the host's values in NEIGH_SAVED for "down".
# The limits are settable only from the host's network namespace: run inside fclab-net (as a
# bench's second pass is), lab.sh leaves them to the pass that ran on the host.
NEIGH_KEYS="net.ipv4.neigh.default.gc_thresh2 net.ipv4.neigh.default.gc_thresh3"
host_sysctl() { [[ -e /proc/sys/net/ipv4/neigh/default/gc_thresh3 ]] && sysctl "$@"; }
neigh_fit() { # N
    local n=$1 cur2 cur3 want2 want3
    cur2=$(host_sysctl -n net.ipv4.neigh.default.gc_thresh2) || return 0
    cur3=$(host_sysctl -n net.ipv4.neigh.default.gc_thresh3) || return 0
    want2=$((3 * n * n + 512)) want3=$((4 * n * n + 1024))
    ((cur2 >= want2 && cur3 >= want3)) && return 0
    [[ -f $NEIGH_SAVED ]] || printf '%s %s\n' "$cur2" "$cur3" >"$NEIGH_SAVED"
    ((want2 > cur2)) || want2=$cur2
    ((want3 > cur3)) || want3=$cur3
    host_sysctl -qw "net.ipv4.neigh.default.gc_thresh2=$want2" "net.ipv4.neigh.default.gc_thresh3=$want3" ||
        echo "fabcheck lab: warning: could not raise the neighbour table limits for $n nodes; pings of big meshes may go unanswered" >&2
}
neigh_restore() {
    local v2 v3
    [[ -f $NEIGH_SAVED ]] || return 0
    # not in the host's namespace: the saved values stay for a "down" run there
    [[ -e /proc/sys/net/ipv4/neigh/default/gc_thresh3 ]] || return 0
    read -r v2 v3 <"$NEIGH_SAVED" || true
    if [[ $v2 =~ ^[0-9]+$ && $v3 =~ ^[0-9]+$ ]]; then
        host_sysctl -qw "net.ipv4.neigh.default.gc_thresh2=$v2" "net.ipv4.neigh.default.gc_thresh3=$v3" ||
            echo "fabcheck lab: warning: could not restore $NEIGH_KEYS to $v2 $v3" >&2
    fi
    rm -f "$NEIGH_SAVED"
}

LINKS=()
lab_links() { # root-namespace ends of lab veths -> LINKS
    local l
    LINKS=()
    while read -r _ l _; do
        l=${l%:}; l=${l%%@*}
        [[ $l =~ ^fc(m|f0|f1)-lab[0-9]+$ ]] && LINKS+=("$l")
    done < <(ip -o link show 2>/dev/null)
    return 0
}
do_down() {
    local ns p pids=() batch k nss=()
    while read -r ns _; do
        [[ $ns == "$NS_PREFIX"* ]] && nss+=("$ns")
    done < <(ip netns list 2>/dev/null)
    # 1. SIGKILL every lab process. Killing a node's PID 1 (node-init) takes
    #    its whole PID namespace with it. Note: "unshare --fork" blocks SIGTERM
    #    while it waits for its child, so TERM on it does nothing. Processes are
    #    found by their command line (DIR/node-init, DIR/nodes/...) and by
    #    network namespace, so a lab whose netns names are gone is still found.
    local re=${DIR//./\\.} deadline=$((SECONDS + 15))
    while :; do
        pids=()
        for p in $(pgrep -f -- "$re/(node-init|nodes/)" 2>/dev/null); do
            [[ $p != "$$" ]] && pids+=("$p")
        done
        for ns in "${nss[@]}"; do
            for p in $(ip netns pids "$ns" 2>/dev/null); do pids+=("$p"); done
        done
        ((${#pids[@]})) || break
        kill -KILL "${pids[@]}" 2>/dev/null || true
        if ((SECONDS >= deadline)); then
            echo "fabcheck lab: could not kill: ${pids[*]}" >&2
            break
        fi
        sleep 0.05
    done
    # 2. bridges and namespaces. Deleting a namespace destroys its devices
    #    (and their veth peers in the root namespace) in one batch in the
    #    kernel, far faster than one "ip link del" per veth (~15 ms each), but
    #    asynchronously: wait for the peers to vanish before returning.
    batch=""
    for p in $BR_MGMT $BR_F0 $BR_F1; do
        ip link show "$p" >/dev/null 2>&1 && batch+="link del $p"$'\n'
    done
    for ns in "${nss[@]}"; do batch+="netns del $ns"$'\n'; done
    [[ -n $batch ]] && { ip -force -batch - <<<"$batch" >/dev/null 2>&1 || true; }
    for k in $(seq 200); do
        lab_links
        ((${#LINKS[@]})) || break
        ((k < 200)) && sleep 0.05
    done
    # 3. anything still there (e.g. a veth whose namespace is gone): delete it
    if ((${#LINKS[@]})); then
        batch=""
        for p in "${LINKS[@]}"; do batch+="link del $p"$'\n'; done
        ip -force -batch - <<<"$batch" >/dev/null 2>&1 || true
    fi
    rm -f "$SUDOERS"
    [[ -d $LAB_HOME/.ssh ]] && user_ssh_config remove
    [[ -d $LAB_HOME ]] && noisy_rc remove
    id "$LAB_USER" >/dev/null 2>&1 && [[ $(getent passwd "$LAB_USER" | cut -d: -f7) == /bin/sh ]] || usermod -s /bin/sh "$LAB_USER" 2>/dev/null || true
    if [[ -f $NETPLAN_MARK ]]; then
        rmdir /etc/netplan 2>/dev/null || true
        rm -f "$NETPLAN_MARK"
    fi
    if [[ -f $SLURM_ETC_MARK ]]; then
        rmdir /etc/slurm 2>/dev/null || true
        rm -f "$SLURM_ETC_MARK"
    fi
    # route guards of older copies of lab.sh (this one adds no host route)
    unguard_routes
    neigh_restore
    [[ ${1:-} == keep-keys ]] || remove_user
    if [[ ${1:-} == keep-keys ]]; then
        [[ -d $DIR ]] && find "$DIR" -mindepth 1 -maxdepth 1 ! -name keys ! -name 'id_ed25519*' \
            ! -name .fclab-lab -exec rm -rf {} +
    elif [[ -f $DIR/.fclab-lab ]]; then
        rm -rf "$DIR"
    fi
    return 0
}

# The lab user goes with the lab when lab.sh created it (its comment says so); a user that
# was there before (or made by an older lab.sh) is left as it is.
remove_user() {
    id "$LAB_USER" >/dev/null 2>&1 || return 0
    [[ $(getent passwd "$LAB_USER" | cut -d: -f5) == "$LAB_USER_GECOS" ]] || return 0
    if pkill -KILL -u "$LAB_USER" 2>/dev/null; then
        local k
        for ((k = 0; k < 600; k++)); do pgrep -u "$LAB_USER" >/dev/null || break; sleep 0.05; done
    fi
    userdel -r "$LAB_USER" 2>/dev/null || userdel "$LAB_USER" ||
        echo "fabcheck lab: warning: could not remove user $LAB_USER" >&2
    rm -rf "$LAB_HOME"
}

# ---------------------------------------------------------------- slurm (--slurm)
# A real Slurm cluster over the lab: one munged and slurmctld on the root side (slurmctld
# listens on the management bridge address 10.213.0.254, under this machine's own host name,
# which it must match), one slurmd per node inside the node's namespaces (started with
# nsenter, so it dies with the node). Everything lives in DIR/nodes/_slurm: the daemons'
# command lines name it, so any lab.sh's "down" (which kills DIR/nodes/... processes, and
# older copies too) ends them. Nodes see DIR/nodes/_slurm/etc as /etc/slurm (bind mount in
# their mount namespace, node-init); root-side commands need SLURM_CONF=DIR/slurm.conf.
slurm_files() {
    local sd=$DIR/nodes/_slurm k n hw ctl
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null &&
        command -v srun >/dev/null || die "--slurm needs slurm-wlm and munge (apt-get install slurm-wlm munge)"
    mkdir -p "$sd"/{etc,munge,ctld,cgroup}
    chmod 0755 "$sd" "$sd/etc" "$sd/cgroup"
    chmod 0711 "$sd/munge" # the lab user reaches the socket, not the key
    chmod 0700 "$sd/ctld"
    if [[ ! -d /etc/slurm ]]; then mkdir -p /etc/slurm; : >"$SLURM_ETC_MARK"; fi
    head -c 1024 /dev/urandom >"$sd/munge/munge.key"
    chmod 0400 "$sd/munge/munge.key"
    hw=$(slurmd -C | head -n 1) || die "slurmd -C failed"
    hw=${hw#NodeName=* } # the node line's hardware part, else "Node configuration differs"
    ctl=$(hostname -s)
    {
        printf '%s\n' "# fabcheck lab Slurm cluster (generated by lab.sh up --slurm)" \
            "ClusterName=fclab" "SlurmctldHost=$ctl(10.213.0.254)" \
            "SlurmctldPort=$SLURMCTLD_PORT" "SlurmdPort=$SLURMD_PORT" \
            "SlurmUser=root" "SlurmdUser=root" \
            "AuthType=auth/munge" "CredType=cred/munge" "AuthInfo=socket=$sd/munge/munge.socket" \
            "StateSaveLocation=$sd/ctld" "SlurmctldPidFile=$sd/slurmctld.pid" \
            "SlurmctldLogFile=$sd/slurmctld.log" \
            "SlurmdSpoolDir=$sd/%n" "SlurmdPidFile=$sd/%n/slurmd.pid" "SlurmdLogFile=$sd/%n/slurmd.log" \
            "ProctrackType=proctrack/linuxproc" "TaskPlugin=task/none" \
            "SelectType=select/linear" "SchedulerType=sched/builtin" \
            "JobAcctGatherType=jobacct_gather/none" "AccountingStorageType=accounting_storage/none" \
            "MpiDefault=none" "ReturnToService=2" "InactiveLimit=0" "KillWait=5" "MinJobAge=30" \
            "SlurmctldTimeout=30" "SlurmdTimeout=60" "MessageTimeout=10"
        for k in "${!NODES[@]}"; do
            printf 'NodeName=%s NodeAddr=%s %s\n' "${NODES[$k]}" "${MGMT[$k]}" "$hw"
        done
        printf '%s\n' "PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    } >"$sd/etc/slurm.conf"
    # slurmd 22.05 always loads a cgroup plugin; a node's fresh /sys has no cgroup mount: an
    # empty directory as the mount point, never mounted, keeps it off the host's cgroups.
    printf '%s\n' "CgroupPlugin=cgroup/v1" "CgroupAutomount=no" "CgroupMountpoint=$sd/cgroup" >"$sd/etc/cgroup.conf"
    for n in "${NODES[@]}"; do mkdir -p "$sd/$n"; done
    ln -sf "nodes/_slurm/etc/slurm.conf" "$DIR/slurm.conf"
    # fabcheck -i slurm:DIR/slurm-defaults.toml, as the lab user from the root side: node
    # names to management addresses; the user's own key and known_hosts
    {
        printf '# fabcheck -i slurm defaults for the lab (generated by lab.sh up --slurm)\n'
        printf '[defaults]\nuser = "%s"\nconnect_timeout = "10s"\ncommand_timeout = "60s"\n' "$LAB_USER"
        for k in "${!NODES[@]}"; do
            printf '\n[[node]]\nname = "%s"\nhost = "%s"\ninterfaces = ["fab0", "fab1"]\nfabric_ips = ["%s", "%s"]\n' \
                "${NODES[$k]}" "${MGMT[$k]}" "${FAB0[$k]}" "${FAB1[$k]}"
        done
    } >"$DIR/slurm-defaults.toml"
}
# munged and slurmctld (while the nodes come up)
slurm_start_ctl() {
    local sd=$DIR/nodes/_slurm
    munged --socket="$sd/munge/munge.socket" --key-file="$sd/munge/munge.key" \
        --pid-file="$sd/munge/munged.pid" --log-file="$sd/munge/munged.log" \
        --seed-file="$sd/munge/munged.seed" 9>&- || die "munged did not start (log: $sd/munge/munged.log)"
    SLURM_CONF=$sd/etc/slurm.conf labns slurmctld -c -f "$sd/etc/slurm.conf" 9>&- ||
        die "slurmctld did not start (log: $sd/slurmctld.log)"
}
# one slurmd per node (all at once; each daemonizes), once the node's mounts are in place
# (node-init mounts before it starts sshd); then wait until every node is idle
slurm_start_nodes() {
    local sd=$DIR/nodes/_slurm n k pids=()
    for n in "${NODES[@]}"; do
        init_pid "$n" || die "node $n is not running"
        nsenter -t "$REPLY" -n -u -m -p -w/ -- slurmd -N "$n" 9>&- &
        pids+=($!)
    done
    k=0
    for n in "${NODES[@]}"; do
        wait "${pids[$k]}" || die "slurmd on $n did not start (log: $sd/$n/slurmd.log)"
        k=$((k + 1))
    done
    phase "slurmd started"
    for ((k = 0; k < 600; k++)); do
        slurm_idle && return 0
        sleep 0.02
    done
    SLURM_CONF=$sd/etc/slurm.conf labns sinfo -N >&2 || true
    die "Slurm nodes did not all become idle (logs: $sd/slurmctld.log, $sd/labNN/slurmd.log)"
}
# all lab nodes registered and idle (sets REPLY to the count)
slurm_idle() {
    [[ -e $LAB_NS_PATH ]] || { REPLY=0; return 1; }
    REPLY=$(SLURM_CONF=$DIR/nodes/_slurm/etc/slurm.conf labns timeout 5 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    ((REPLY == ${#NODES[@]}))
}

# ---------------------------------------------------------------- up
# shellcheck disable=SC2016 # expanded by the node's bash, not here
NODE_INIT='#!/bin/bash
# PID 1 of a fabcheck lab node: node-init NAME NODEDIR (written by lab.sh up)
set -u
name=$1 nd=$2
hostname "$name" || exit 1
# its own /sys (this node network devices), as ip netns exec does
umount -l /sys 2>/dev/null; mount -t sysfs sysfs /sys || exit 1
# lab.sh moves mgmt0/fab0/fab1 into this namespace, then creates net.ready
for ((i = 0; i < 3000; i++)); do [[ -e $nd/net.ready ]] && break; sleep 0.01; done
[[ -e $nd/net.ready ]] || { echo "node-init: no network after 30 s" >&2; exit 1; }
ip -batch "$nd/ip.batch" || exit 1
mount --bind "$nd/netplan" /etc/netplan || exit 1
mount --bind "$nd/hosts" /etc/hosts || exit 1
# the --slurm variant: the lab Slurm configuration where srun and slurmd look for it
if [[ -f ${nd%/*}/_slurm/etc/slurm.conf ]]; then mount --bind "${nd%/*}/_slurm/etc" /etc/slurm || exit 1; fi
echo "0 2147483647" >/proc/sys/net/ipv4/ping_group_range 2>/dev/null || true
sshd=
start() {
    [[ -z $sshd ]] || return 0
    /usr/sbin/sshd -D -f "$nd/sshd_config" -E "$nd/sshd.log" </dev/null >>"$nd/sshd.out" 2>&1 &
    sshd=$!
}
trap start USR1
trap "kill -KILL -1 2>/dev/null; exit 0" TERM
start
while :; do
    if [[ -n $sshd ]]; then
        wait "$sshd" 2>/dev/null
        kill -0 "$sshd" 2>/dev/null || { sshd=; rm -f "$nd/sshd.pid"; }
    else
        sleep 86400 & s=$!
        wait "$s" 2>/dev/null
        kill "$s" 2>/dev/null
    fi
done
'

launch_node() { # NAME: start the node in namespaces of its own; node-init waits for net.ready
    local n=$1 nd=$DIR/nodes/$1
    : >"$nd/sshd.out"
    : >"$nd/init.out"
    rm -f "$nd/net.ready"
    # one background job per node; it execs (setsid -> unshare), so $! is the unshare process
    (
        exec setsid unshare --net --uts --mount --pid --fork --mount-proc --kill-child -- \
            /bin/bash "$DIR/node-init" "$n" "$nd" </dev/null >>"$nd/init.out" 2>&1 9>&-
    ) 9>&- &
    echo $! >"$nd/unshare.pid"
}

ensure_user() {
    local shadow
    if ! id "$LAB_USER" >/dev/null 2>&1; then
        useradd -m -d "$LAB_HOME" -s /bin/sh -c "$LAB_USER_GECOS" "$LAB_USER"
    fi
    local shell=/bin/sh
    ((NOISY_SHELL)) && shell=/bin/bash
    [[ $(getent passwd "$LAB_USER" | cut -d: -f7) == "$shell" ]] || usermod -s "$shell" "$LAB_USER"
    # UsePAM no => sshd refuses accounts whose password starts with "!" (locked)
    shadow=$(getent shadow "$LAB_USER" | cut -d: -f2)
    [[ $shadow == '!'* || -z $shadow ]] && usermod -p '*' "$LAB_USER"
    mkdir -p "$LAB_HOME/.ssh"
    [[ -f $LAB_HOME/.ssh/id_ed25519 ]] ||
        ssh-keygen -q -t ed25519 -N '' -C "fclab@fabcheck-lab" -f "$LAB_HOME/.ssh/id_ed25519"
}

do_up() {
    local count=$1 t0=$SECONDS i n oct nd
    if ! [[ $count =~ ^[0-9]+$ ]] || ((count < 1 || count > 999)); then die "up: N must be 1..999"; fi
    local start_ns
    start_ns=$(date +%s%N)
    ensure_pkgs
    do_down keep-keys
    phase "teardown done"
    mkdir -p "$DIR"/{keys,nodes,shims/bin,cm}
    chmod 0755 "$DIR" "$DIR/shims" "$DIR/shims/bin" "$DIR/nodes"
    chmod 0700 "$DIR/cm" "$DIR/keys"
    : >"$DIR/.fclab-lab"
    mkdir -p /run/sshd && chmod 0755 /run/sshd
    if [[ ! -d /etc/netplan ]]; then mkdir -p /etc/netplan; : >"$NETPLAN_MARK"; fi

    # ---- node table
    : >"$DIR/nodes.list"
    local list="" hosts_common="" hosts_lines="" name
    for ((i = 1; i <= count; i++)); do
        node_name "$i" "$count" name
        node_oct "$i" oct
        list+="$name $i 10.213.$oct 10.214.$oct 10.215.$oct"$'\n'
        hosts_common+="10.213.$oct	$name"$'\n'
        hosts_lines+="10.213.$oct"$'\n'
    done
    printf '%s' "$list" >"$DIR/nodes.list"
    printf '%s' "$hosts_lines" >"$DIR/hosts"
    load_nodes

    # ---- keys (cached across "up" in DIR/keys; regenerated after "down")
    [[ -f $DIR/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C "root@fabcheck-lab" -f "$DIR/id_ed25519"
    for n in "${NODES[@]}"; do
        [[ -f $DIR/keys/${n}_host_ed25519 ]] ||
            ssh-keygen -q -t ed25519 -N '' -C "$n" -f "$DIR/keys/${n}_host_ed25519" &
    done
    wait
    ensure_user

    phase "keys, user"
    # ---- known_hosts (root side and fclab side) and ssh_config
    local kh="" key k
    for k in "${!NODES[@]}"; do
        read -r key <"$DIR/keys/${NODES[$k]}_host_ed25519.pub"
        key=${key% *}
        kh+="${NODES[$k]},${MGMT[$k]},${FAB0[$k]},${FAB1[$k]} $key"$'\n'
    done
    printf '%s' "$kh" >"$DIR/known_hosts"
    if ((HAVE_USER_SSH_CONFIG)); then
        : >"$LAB_HOME/.ssh/known_hosts" # the variant: the user's own config decides about keys
    else
        printf '%s' "$kh" >"$LAB_HOME/.ssh/known_hosts"
    fi
    {
        cat "$DIR/id_ed25519.pub"
        cat "$LAB_HOME/.ssh/id_ed25519.pub"
    } >"$LAB_HOME/.ssh/authorized_keys"
    user_ssh_config
    noisy_rc
    chown -R "$LAB_USER:" "$LAB_HOME/.ssh"
    chmod 0700 "$LAB_HOME/.ssh"
    chmod 0600 "$LAB_HOME/.ssh/authorized_keys" "$LAB_HOME/.ssh/id_ed25519"
    chown "$LAB_USER:" "$LAB_HOME"

    local sc="# fabcheck lab ssh client config (generated by lab.sh up)"$'\n'
    for k in "${!NODES[@]}"; do
        sc+="Host ${NODES[$k]}"$'\n'"    HostName ${MGMT[$k]}"$'\n'
    done
    sc+="Host lab* 10.213.* 10.214.* 10.215.*
    User $LAB_USER
    IdentityFile $DIR/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $DIR/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    UpdateHostKeys no
    BatchMode yes
    ConnectTimeout 10
    LogLevel ERROR
"
    printf '%s' "$sc" >"$DIR/ssh_config"

    # ---- sudo for the lab user
    printf '# fabcheck lab (removed by lab.sh down)\n%s ALL=(ALL) NOPASSWD: ALL\n' "$LAB_USER" >"$SUDOERS.tmp"
    chmod 0440 "$SUDOERS.tmp"
    visudo -cqf "$SUDOERS.tmp" >/dev/null || die "bad sudoers rule"
    mv "$SUDOERS.tmp" "$SUDOERS"

    # ---- per-node files
    local extra=""
    local ver
    ver=$(ssh -V 2>&1) || true
    if [[ $ver =~ OpenSSH_([0-9]+)\.([0-9]+) ]] &&
        ((BASH_REMATCH[1] > 9 || (BASH_REMATCH[1] == 9 && BASH_REMATCH[2] >= 8))); then
        # OpenSSH >= 9.8 penalises sources with many short/failed connections.
        extra="PerSourcePenalties no"$'\n'
    fi
    printf '%s' "$NODE_INIT" >"$DIR/node-init"
    chmod 0755 "$DIR/node-init"
    local mac0 mac1 macm dirs=() peers=$hosts_common
    ((NO_NAMES)) && peers="" # the variant: each node resolves its own name only
    ((SLURM)) && peers+="10.213.0.254	$(hostname -s)"$'\n' # the Slurm controller
    for n in "${NODES[@]}"; do dirs+=("$DIR/nodes/$n/netplan"); done
    mkdir -p "${dirs[@]}"
    for k in "${!NODES[@]}"; do
        n=${NODES[$k]} i=${IDX[$k]} nd=$DIR/nodes/${NODES[$k]}
        printf '%s\n' "link set lo up" "addr add ${MGMT[$k]}/16 dev mgmt0" \
            "addr add ${FAB0[$k]}/16 dev fab0" "addr add ${FAB1[$k]}/16 dev fab1" \
            "link set mgmt0 up" "link set fab0 up" "link set fab1 up" >"$nd/ip.batch"
        node_mac "$i" 1 mac0
        node_mac "$i" 2 mac1
        printf '%s' "127.0.0.1	localhost
127.0.1.1	$n
::1	localhost ip6-localhost ip6-loopback
$peers" >"$nd/hosts"
        printf '%s' "# fabcheck lab: ConnectX-7 fabric ports of $n (two rails)
network:
  version: 2
  renderer: networkd
  ethernets:
    fab0:
      match:
        macaddress: \"$mac0\"
      set-name: fab0
      dhcp4: false
      dhcp6: false
      link-local: []
      mtu: $MTU_FABRIC
      addresses:
        - ${FAB0[$k]}/16
    fab1:
      match:
        macaddress: \"$mac1\"
      set-name: fab1
      dhcp4: false
      dhcp6: false
      link-local: []
      mtu: $MTU_FABRIC
      addresses:
        - ${FAB1[$k]}/16
" >"$nd/netplan/40-cx7.yaml"
        printf '%s' "# fabcheck lab sshd for $n (generated by lab.sh up)
ListenAddress ${MGMT[$k]}:22
ListenAddress ${FAB0[$k]}:22
ListenAddress ${FAB1[$k]}:22
AddressFamily inet
HostKey $DIR/keys/${n}_host_ed25519
PidFile $nd/sshd.pid
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin no
AllowUsers $LAB_USER
AuthorizedKeysFile $LAB_HOME/.ssh/authorized_keys
StrictModes no
MaxSessions 64
MaxStartups 200:30:400
LoginGraceTime 30
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
LogLevel ERROR
SetEnv PATH=$DIR/shims/bin:/usr/local/bin:/usr/bin:/bin
Subsystem sftp internal-sftp
$extra" >"$nd/sshd_config"
    done
    chmod 0600 "$DIR"/nodes/*/netplan/40-cx7.yaml
    chmod 0755 "$DIR"/nodes/*/netplan

    ((SLURM)) && slurm_files
    phase "files written"
    # ---- inventory for fabcheck
    local inv first last
    first=${NODES[0]} last=${NODES[-1]}
    inv="# fabcheck lab inventory (generated by lab.sh up)
[defaults]
user = \"$LAB_USER\"
connect_timeout = \"10s\"
command_timeout = \"60s\"
known_hosts = \"strict\"
ssh_config = \"$DIR/ssh_config\"
"
    for k in "${!NODES[@]}"; do
        inv+="
[[node]]
name = \"${NODES[$k]}\"
host = \"${MGMT[$k]}\"
interfaces = [\"fab0\", \"fab1\"]
fabric_ips = [\"${FAB0[$k]}\", \"${FAB1[$k]}\"]
"
    done
    if ((count == 1)); then
        inv+=$'\n[groups]\nall = "'"$first"$'"\n'
    else
        inv+=$'\n[groups]\nall = "lab['"${first#lab}-${last#lab}"$']"\n'
    fi
    printf '%s' "$inv" >"$DIR/inventory.toml"

    # ---- start the nodes (each: unshare net/uts/mount/pid; sshd -D once its network is there)
    neigh_fit "$count"
    for n in "${NODES[@]}"; do launch_node "$n"; done
    phase "nodes launched"
    lab_network
    phase "network configured"
    ((SLURM)) && slurm_start_ctl
    wait_sshd "${NODES[@]}" || die "some sshd did not come up (logs: $DIR/nodes/*/sshd.{log,out})"
    phase "all sshd listening"
    ((SLURM)) && slurm_start_nodes

    local got
    # (last line: a --noisy-shell variant prints before every command)
    got=$(labns ssh -F "$DIR/ssh_config" "${NODES[0]}" 'echo; hostname' 2>/dev/null | tail -n 1) || die "ssh to ${NODES[0]} failed"
    [[ $got == "${NODES[0]}" ]] || die "ssh ${NODES[0]} hostname returned '$got'"
    variant_sig
    printf '%s\n' "$REPLY" >"$DIR/variant"
    local ms=$((($(date +%s%N) - start_ns) / 1000000))
    log "up: $count nodes in ${ms} ms ($((SECONDS - t0)) s); inventory $DIR/inventory.toml"
}

# The lab's network namespace: bridges, the root-side address 10.213.0.254 and the veths,
# whose node ends go into each node's own network namespace (found by the node's PID 1);
# then each node's node-init configures its side (DIR/nodes/labNN/ip.batch) and starts sshd.
lab_network() {
    local b="" k n i macm mac0 mac1 pid pids=() tries
    for n in "${NODES[@]}"; do
        for ((tries = 0; tries < 1500; tries++)); do init_pid "$n" && break; sleep 0.02; done
        init_pid "$n" || die "node $n did not start (log: $DIR/nodes/$n/init.out)"
        pids+=("$REPLY")
    done
    ip netns add "$LAB_NS" || die "cannot create network namespace $LAB_NS"
    b+="link set lo up"$'\n'
    b+="link add $BR_MGMT type bridge"$'\n'
    b+="link add $BR_F0 mtu $MTU_FABRIC type bridge"$'\n'
    b+="link add $BR_F1 mtu $MTU_FABRIC type bridge"$'\n'
    b+="addr add 10.213.0.254/16 dev $BR_MGMT"$'\n'
    for k in "${!NODES[@]}"; do
        n=${NODES[$k]} i=${IDX[$k]} pid=${pids[$k]}
        node_mac "$i" 0 macm
        node_mac "$i" 1 mac0
        node_mac "$i" 2 mac1
        b+="link add fcm-$n type veth peer name mgmt0 address $macm netns $pid"$'\n'
        b+="link add fcf0-$n mtu $MTU_FABRIC type veth peer name fab0 mtu $MTU_FABRIC address $mac0 netns $pid"$'\n'
        b+="link add fcf1-$n mtu $MTU_FABRIC type veth peer name fab1 mtu $MTU_FABRIC address $mac1 netns $pid"$'\n'
        b+="link set fcm-$n master $BR_MGMT up"$'\n'
        b+="link set fcf0-$n master $BR_F0 up"$'\n'
        b+="link set fcf1-$n master $BR_F1 up"$'\n'
    done
    b+="link set $BR_MGMT up"$'\n'"link set $BR_F0 mtu $MTU_FABRIC up"$'\n'"link set $BR_F1 mtu $MTU_FABRIC up"$'\n'
    ip -n "$LAB_NS" -batch - <<<"$b" || die "network setup failed (see above); run: $0 down --dir $DIR"
    for n in "${NODES[@]}"; do : >"$DIR/nodes/$n/net.ready"; done
}

# wait until each node's sshd has written its PidFile (sshd writes it after
# binding its listeners) and accepts a TCP connection on the mgmt address
wait_sshd() {
    local deadline=$((SECONDS + 30 + $# / 2)) pending=("$@") still n
    while ((${#pending[@]})); do
        still=()
        for n in "${pending[@]}"; do
            [[ -s $DIR/nodes/$n/sshd.pid ]] && continue
            local up=""
            [[ -f $DIR/nodes/$n/unshare.pid ]] && read -r up <"$DIR/nodes/$n/unshare.pid"
            if [[ -z $up ]] || ! kill -0 "$up" 2>/dev/null; then
                echo "fabcheck lab: node $n died:" >&2
                cat "$DIR/nodes/$n/init.out" "$DIR/nodes/$n/sshd.out" "$DIR/nodes/$n/sshd.log" >&2 2>/dev/null || true
                return 1
            fi
            still+=("$n")
        done
        pending=("${still[@]}")
        ((${#pending[@]})) || break
        ((SECONDS < deadline)) || { echo "fabcheck lab: timeout waiting for: ${pending[*]}" >&2; return 1; }
        sleep 0.02
    done
    # one extra process for all nodes: connect to each mgmt address:22
    local ips=()
    load_nodes
    for n in "$@"; do node_index "$n"; ips+=("${MGMT[$REPLY]}"); done
    # shellcheck disable=SC2016
    labns timeout 20 bash -c 'for ip; do
        exec 3<>"/dev/tcp/$ip/22" || { echo "fabcheck lab: sshd not reachable on $ip:22" >&2; exit 1; }
        exec 3>&-; done' _ "${ips[@]}"
}

# ---------------------------------------------------------------- other commands
need_lab() {
    load_nodes
    ((${#NODES[@]})) || { echo "fabcheck lab: no lab in $DIR" >&2; exit 2; }
}

do_status() {
    need_lab
    local k n rc=0 state
    for k in "${!NODES[@]}"; do
        n=${NODES[$k]}
        if ! init_pid "$n"; then state="down (node not running)"; rc=1
        elif ! listener_pid "$n"; then state="down (sshd not running)"; rc=1
        elif [[ $(nsenter -t "$REPLY" -n ip -o link show mgmt0 2>/dev/null) != *"state UP"* ]] ||
             [[ $(ip -n "$LAB_NS" -o link show "fcm-$n" 2>/dev/null) != *"state UP"* ]]; then state="isolated (mgmt link down)"; rc=1
        else state="up"; fi
        printf '%s %s mgmt=%s fab0=%s fab1=%s\n' "$n" "$state" "${MGMT[$k]}" "${FAB0[$k]}" "${FAB1[$k]}"
    done
    return $rc
}

do_kill_sshd() {
    local n=$1 p k
    need_lab; node_index "$n"
    if ((LISTENER_ONLY)); then
        listener_pid "$n" && kill -TERM "$REPLY" 2>/dev/null
    else
        sshd_pids "$n"
        # shellcheck disable=SC2086
        [[ -n $REPLY ]] && kill -TERM $REPLY 2>/dev/null
    fi
    for ((k = 0; k < 200; k++)); do
        if ((LISTENER_ONLY)); then listener_pid "$n" || break
        else sshd_pids "$n"; [[ -n $REPLY ]] || break; fi
        sleep 0.02
    done
    if ((LISTENER_ONLY)); then
        listener_pid "$n" && kill -KILL "$REPLY" 2>/dev/null
    else
        sshd_pids "$n"
        # shellcheck disable=SC2086
        [[ -n $REPLY ]] && kill -KILL $REPLY 2>/dev/null
    fi
    for p in 1 2 3 4 5 6 7 8 9 10; do
        listener_pid "$n" || break
        sleep 0.05
    done
    rm -f "$DIR/nodes/$n/sshd.pid"
    return 0
}

do_start_sshd() {
    local n=$1
    need_lab; node_index "$n"
    if ! init_pid "$n"; then
        die "node $n is not running (run lab.sh up again)"
    fi
    listener_pid "$n" && return 0
    rm -f "$DIR/nodes/$n/sshd.pid"
    kill -USR1 "$REPLY"
    wait_sshd "$n"
}

do_isolate() { # NODE up|down
    need_lab; node_index "$1"
    ip -n "$LAB_NS" link set "fcm-$1" "$2"
}

do_exec() {
    local n=$1
    shift
    (($#)) || die "exec: missing command"
    need_lab; node_index "$n"
    init_pid "$n" || die "node $n is not running"
    exec nsenter -t "$REPLY" -n -u -m -p -w/ -- "$@"
}

do_pids() {
    local n=$1 uid p puid
    need_lab; node_index "$n"
    uid=$(id -u "$LAB_USER")
    init_pid "$n" || return 0
    for p in $(pgrep --ns "$REPLY" --nslist net 2>/dev/null); do
        [[ -r /proc/$p/status ]] || continue
        puid=$(awk '/^Uid:/{print $2}' "/proc/$p/status" 2>/dev/null) || continue
        [[ $puid == "$uid" ]] || continue
        [[ $(<"/proc/$p/comm") != sshd ]] || continue
        printf '%s %s\n' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline")"
    done 2>/dev/null
    return 0
}

one_node() { [[ ${#ARGS[@]} -ge 1 ]] || die "$CMD: missing NODE"; }

case $CMD in
    up)
        [[ ${#ARGS[@]} -eq 1 ]] || die "usage: lab.sh up N [--dir DIR]"
        take_lock; do_up "${ARGS[0]}" ;;
    ensure)
        [[ ${#ARGS[@]} -eq 1 ]] || die "usage: lab.sh ensure N [--dir DIR]"
        take_lock
        load_nodes
        variant_sig; want=$REPLY
        current_variant
        if [[ ${#NODES[@]} -eq ${ARGS[0]} && $REPLY == "$want" ]] && do_status >/dev/null 2>&1 &&
            { ((!SLURM)) || slurm_idle; } &&
            [[ $(labns ssh -F "$DIR/ssh_config" "${NODES[0]}" 'echo; hostname' 2>/dev/null | tail -n 1) == "${NODES[0]}" ]]; then
            neigh_fit "${ARGS[0]}" # a lab made by an older lab.sh kept the host's limits
            log "ensure: lab of ${ARGS[0]} nodes ($want) in $DIR is up"
        else
            do_up "${ARGS[0]}"
        fi ;;
    down)
        t0=$(date +%s%N)
        take_lock; do_down
        log "down: done in $((($(date +%s%N) - t0) / 1000000)) ms" ;;
    status) do_status ;;
    kill-sshd) one_node; take_lock; do_kill_sshd "${ARGS[0]}" ;;
    start-sshd) one_node; take_lock; do_start_sshd "${ARGS[0]}" ;;
    isolate) one_node; do_isolate "${ARGS[0]}" down ;;
    unisolate) one_node; do_isolate "${ARGS[0]}" up ;;
    exec) one_node; do_exec "${ARGS[@]}" ;;
    run)
        ((${#ARGS[@]})) || die "run: missing command"
        [[ -e $LAB_NS_PATH ]] || die "no lab network namespace ($LAB_NS_PATH): run lab.sh up N first"
        exec nsenter --net="$LAB_NS_PATH" -- "${ARGS[@]}" ;;
    pids) one_node; do_pids "${ARGS[0]}" ;;
    -h|--help|help) usage ;;
    *) usage ;;
esac
