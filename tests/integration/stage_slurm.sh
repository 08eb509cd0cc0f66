#!/usr/bin/env bash
# ferry-stage under srun: stage_mpi.sh's checks (a tree to two receivers
# in two namespaces; a rank killed mid-way and a rerun) with the ranks
# started by a one-host Slurm that the test starts and stops, over tcp.
STAGE_LAUNCH=srun STAGE_XPORTS=tcp exec bash "$(dirname "$0")/stage_mpi.sh"
