/*===- ompdpu_mpi.h - MPI handles usable inside target regions ---*- C -*-===*\
 *
 * With `ompdpu-server --mpi`, target regions run inside an MPI process and
 * may call MPI. Open MPI's predefined handles (MPI_COMM_WORLD, MPI_INT, ...)
 * are addresses of library globals of incomplete type, which clang refuses
 * in device code; these functions return them instead. The server defines
 * them for device code; link host code with -lompdpu_mpi (and MPI).
 *
 *   #pragma omp target device(dpu)
 *   MPI_Send(buf, n, ompdpu_mpi_float(), peer, 0, ompdpu_mpi_comm_world());
\*===----------------------------------------------------------------------===*/
#ifndef OMPDPU_MPI_H
#define OMPDPU_MPI_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

MPI_Comm ompdpu_mpi_comm_world(void);
MPI_Datatype ompdpu_mpi_byte(void);
MPI_Datatype ompdpu_mpi_int(void);
MPI_Datatype ompdpu_mpi_float(void);
MPI_Datatype ompdpu_mpi_double(void);
MPI_Op ompdpu_mpi_sum(void);
MPI_Op ompdpu_mpi_max(void);
MPI_Op ompdpu_mpi_min(void);

#ifdef __cplusplus
}
#endif

#endif /* OMPDPU_MPI_H */
