/* MPI_IN_PLACE for pytree-dist's MPI backend (feature `mpi`).
 *
 * MPI_IN_PLACE is a macro of mpi.h, not a symbol, and its value differs
 * between MPI libraries ((void *) 1 in Open MPI, (void *) -1 in MPICH and
 * the libraries built on it); rsmpi 0.8 does not export it. This file is
 * compiled by build.rs against the mpi.h of the MPI library that rsmpi's
 * build finds (the same probe), so the value is that library's own. */
#include <mpi.h>

void *pytree_dist_mpi_in_place(void) { return MPI_IN_PLACE; }
