#!/bin/sh
# fabcheck TEST SHIM — not Open MPI. A recording stand-in for `mpirun`: it appends its argument
# list and the NCCL variables it was given (which `-x NAME` exports to the ranks) to @LOG@ (so
# the test can check the launch), then prints a REAL captured nccl-tests output (@FIXTURE@) —
# this kernel has no GPUs or RDMA.
printf '%s | NCCL_IB_HCA=%s NCCL_DEBUG=%s NCCL_DEBUG_SUBSYS=%s\n' "$*" "$NCCL_IB_HCA" "$NCCL_DEBUG" "$NCCL_DEBUG_SUBSYS" >> '@LOG@'
cat '@FIXTURE@'
