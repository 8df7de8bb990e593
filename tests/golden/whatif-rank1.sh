#!/bin/bash
# whatif-rank1.sh ORRERY EXTRA ARGS...: run under mpirun (Open MPI) by run-whatif.sh:
# `ORRERY whatif ARGS...` on every process, with the words of EXTRA ("" for none)
# appended on rank 1 alone: one process given other options or files than the others.
orrery=$1 extra=$2
shift 2
if [[ ${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}} == 1 && -n $extra ]]; then
	# shellcheck disable=SC2086 # EXTRA is words
	exec "$orrery" whatif "$@" $extra
fi
exec "$orrery" whatif "$@"
