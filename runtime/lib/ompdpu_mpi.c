/* MPI handles for device code (see ompdpu_mpi.h). Compiled into
 * ompdpu-server, which exports them to device images, and into
 * libompdpu_mpi.a for the host side of applications. */
#include "ompdpu_mpi.h"

MPI_Comm ompdpu_mpi_comm_world(void) { return MPI_COMM_WORLD; }
MPI_Datatype ompdpu_mpi_byte(void) { return MPI_BYTE; }
MPI_Datatype ompdpu_mpi_int(void) { return MPI_INT; }
MPI_Datatype ompdpu_mpi_float(void) { return MPI_FLOAT; }
MPI_Datatype ompdpu_mpi_double(void) { return MPI_DOUBLE; }
MPI_Op ompdpu_mpi_sum(void) { return MPI_SUM; }
MPI_Op ompdpu_mpi_max(void) { return MPI_MAX; }
MPI_Op ompdpu_mpi_min(void) { return MPI_MIN; }
