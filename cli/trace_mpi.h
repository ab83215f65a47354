/*
 * trace_mpi.h - the MPI transport of `trainscope trace --mpi`: start and
 * stop MPI, send byte blobs to process 0, receive them there. Everything
 * MPI-specific lives in trace_mpi.c; a build without Open MPI
 * (pkg-config ompi-c) gets functions that report "not built with MPI".
 * All return 0 or -1 with a message in why.
 */
#ifndef TS_CLI_TRACE_MPI_H
#define TS_CLI_TRACE_MPI_H

#include <stddef.h>
#include "trainscope/core.h"

int trace_mpi_start(int *rank, int *size, char *why, size_t whylen);
void trace_mpi_stop(void);
/* Send n bytes to process 0 (messages from one sender arrive in order). */
int trace_mpi_send(const void *data, size_t n, char *why, size_t whylen);
/* Receive the next message from process `from` into out (reset first). */
int trace_mpi_recv(int from, struct ts_sb *out, char *why, size_t whylen);
/* Abort every process (after a fatal error on one). */
void trace_mpi_abort(int code);

#endif
