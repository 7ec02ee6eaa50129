# Sourced by the scripts that measure on the namespace lab (bench_*.sh, reliability.sh), from the
# repository root, after `FCLAB_ARGS=("$@")`.
#
# lab_enter SIZE [WHO]: needs root; a release build in $FC; the lab tests' lock
# (/run/fclab.tests.lock: waits while a lab test runs, so a bench never rebuilds a lab under one);
# a lab of SIZE nodes in $DIR (FCLAB_DIR, default /tmp/fclab); then runs the calling script again
# inside the lab's network namespace (tests/lab/README.md), where the rest of it runs. The lock's
# file descriptor is inherited by that second pass and held until the script ends.
lab_enter() {
    local size=$1 who=${2:-bench}
    DIR=${FCLAB_DIR:-/tmp/fclab}
    [[ $(id -u) -eq 0 ]] || { echo "$who: needs root (namespace lab)"; exit 77; }
    [[ -x target/release/fabcheck ]] || cargo build --release --quiet
    FC=$PWD/target/release/fabcheck
    [[ -z ${FCLAB_IN_NETNS:-} ]] || return 0
    exec 9>/run/fclab.tests.lock
    flock 9
    FCLAB_QUIET=1 bash tests/lab/lab.sh ensure "$size" --dir "$DIR"
    FCLAB_IN_NETNS=1 exec nsenter --net=/run/netns/fclab-net -- bash "$0" "${FCLAB_ARGS[@]}"
}
