/*
 * trace_mpi.c - MPI for `trainscope trace --mpi`, in one place.
 *
 * Why a separate file: the product must build and run where Open MPI is not
 * installed, and MPI_Init must only ever run under --mpi. The Makefile
 * compiles this file with -DTS_HAVE_MPI when pkg-config finds ompi-c; the
 * other build reports that MPI is unavailable. Blobs larger than INT_MAX
 * bytes are refused (a rank profile is kilobytes).
 */
#include <limits.h>
#include <stdio.h>
#include "trace_mpi.h"

#ifdef TS_HAVE_MPI
#include <mpi.h>

static void mpi_why(int rc, const char *what, char *why, size_t whylen)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(rc, msg, &len);
	snprintf(why, whylen, "%s: %.*s", what, len, msg);
}

int trace_mpi_start(int *rank, int *size, char *why, size_t whylen)
{
	int rc = MPI_Init(NULL, NULL);

	if (rc != MPI_SUCCESS) {
		mpi_why(rc, "MPI_Init", why, whylen);
		return -1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

void trace_mpi_stop(void)
{
	MPI_Finalize();
}

void trace_mpi_abort(int code)
{
	MPI_Abort(MPI_COMM_WORLD, code);
}

int trace_mpi_send(const void *data, size_t n, char *why, size_t whylen)
{
	int rc;

	if (n > INT_MAX) {
		snprintf(why, whylen, "message of %zu bytes is too large", n);
		return -1;
	}
	rc = MPI_Send(data, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
	if (rc != MPI_SUCCESS) {
		mpi_why(rc, "MPI_Send", why, whylen);
		return -1;
	}
	return 0;
}

int trace_mpi_recv(int from, struct ts_sb *out, char *why, size_t whylen)
{
	MPI_Status st;
	int count = 0, rc = MPI_Probe(from, 0, MPI_COMM_WORLD, &st);

	if (rc == MPI_SUCCESS)
		rc = MPI_Get_count(&st, MPI_BYTE, &count);
	if (rc != MPI_SUCCESS) {
		mpi_why(rc, "MPI_Probe", why, whylen);
		return -1;
	}
	ts_sb_reset(out);
	ts_sb_pad(out, 0, (size_t)count);
	if (out->failed) {
		snprintf(why, whylen, "out of memory for a %d-byte message", count);
		return -1;
	}
	rc = MPI_Recv(out->buf, count, MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS) {
		mpi_why(rc, "MPI_Recv", why, whylen);
		return -1;
	}
	return 0;
}

#else

int trace_mpi_start(int *rank, int *size, char *why, size_t whylen)
{
	*rank = 0;
	*size = 1;
	snprintf(why, whylen, "this trainscope was built without MPI "
		 "(install libopenmpi-dev and rebuild)");
	return -1;
}

void trace_mpi_stop(void)
{
}

void trace_mpi_abort(int code)
{
	(void)code;
}

int trace_mpi_send(const void *data, size_t n, char *why, size_t whylen)
{
	(void)data;
	(void)n;
	snprintf(why, whylen, "built without MPI");
	return -1;
}

int trace_mpi_recv(int from, struct ts_sb *out, char *why, size_t whylen)
{
	(void)from;
	(void)out;
	snprintf(why, whylen, "built without MPI");
	return -1;
}

#endif
