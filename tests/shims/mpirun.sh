#!/bin/sh
# fabcheck TEST SHIM — not Open MPI. A recording stand-in for `mpirun`: it appends its argument
# list to @LOG@ (so the test can check the launch line) and prints a REAL captured nccl-tests
# output (@FIXTURE@) — this kernel has no GPUs or RDMA.
printf '%s\n' "$*" >> '@LOG@'
cat '@FIXTURE@'
