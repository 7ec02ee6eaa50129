#!/bin/sh
# fabcheck TEST SHIM — not the real tool. This kernel has no RDMA/OFED, so lab tests put this
# program on a node's PATH under the tool's name (ibdev2netdev, rdma, ofed_info); it prints a
# REAL captured output of that tool from tests/fixtures (@FIXTURE@, substituted by the test).
cat '@FIXTURE@'
