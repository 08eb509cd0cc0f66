#!/usr/bin/env bash
# ferry-stage under srun: stage_mpi.sh's checks (a tree to two receivers
# in two namespaces, one file split across every rank; a rank killed
# mid-way and a rerun; the DSCP in a capture) with the ranks started by a
# one-host Slurm that the test starts and stops, over tcp and uroce.
STAGE_LAUNCH=srun STAGE_XPORTS="tcp uroce" exec bash "$(dirname "$0")/stage_mpi.sh"
