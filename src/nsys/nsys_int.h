/*
 * nsys_int.h - internals shared by the nsys reader, rank builder and the
 * stats reports (src/nsys only).
 */
#ifndef TS_NSYS_INT_H
#define TS_NSYS_INT_H

#include <sqlite3.h>
#include "trainscope/nsys.h"

#define NS_MAXCOL 12

/* Times beyond +-2^61 ns (73 years) are not real; rows holding them are
 * skipped so every end, difference and sum fits int64 (as in profile). */
#define NS_TIME_LIM (INT64_C(1) << 61)
#define NS_TIME_OK(t) ((t) >= -NS_TIME_LIM && (t) <= NS_TIME_LIM)
/* A row the analysis and the stats reports use, as SQL (span_of's rule):
 * integer start and end within NS_TIME_LIM, end not before start. Every
 * other row is counted (null_end) and warned about. */
#define NS_ROW_OK_SQL                                                                     \
	"typeof(start) = 'integer' AND typeof(end) = 'integer' AND end >= start AND "       \
	"start BETWEEN -2305843009213693952 AND 2305843009213693952 AND "                  \
	"end BETWEEN -2305843009213693952 AND 2305843009213693952"

/* Column numbers shared by the GPU activity tables (KERNEL, MEMCPY,
 * MEMSET, SYNCHRONIZATION) in the reader's column lists. */
enum { NS_START = 0, NS_END, NS_DEV, NS_STREAM, NS_CORR, NS_GPID };
/* KERNEL names; MEMCPY/MEMSET bytes and kinds; SYNC type */
enum { NS_KNAME = 6, NS_KSHORT = 7 };
enum { NS_BYTES = 6, NS_COPYKIND = 7, NS_SRCKIND = 8, NS_DSTKIND = 9, NS_MEMKIND = 7 };
enum { NS_SYNCTYPE = 6 };
/* RUNTIME: start, end, eventClass, globalTid, correlationId, nameId */
enum { NS_RT_CLASS = 2, NS_RT_TID = 3, NS_RT_CORR = 4, NS_RT_NAME = 5 };
/* NVTX_EVENTS: start, end, eventType, text, textId, globalTid, domainId, binaryData */
enum { NS_NV_TYPE = 2, NS_NV_TEXT = 3, NS_NV_TEXTID = 4, NS_NV_TID = 5, NS_NV_DOMAIN = 6 };

int ns_has(const struct ts_nsys *x, enum ts_nsys_tab t);
int ns_col(const struct ts_nsys *x, enum ts_nsys_tab t, int c);
const char *ns_c(const struct ts_nsys *x, enum ts_nsys_tab t, int c);
int ns_prepare(struct ts_nsys *x, sqlite3_stmt **st, const char *sql, const char *what,
	       struct ts_err *err);
int ns_step(struct ts_nsys *x, sqlite3_stmt *st, const char *what, struct ts_err *err);
int ns_sql_fail(struct ts_nsys *x, struct ts_err *err, const char *what);
uint32_t ns_sid(const struct ts_nsys *x, int64_t id);
uint32_t ns_str_col(struct ts_nsys *x, sqlite3_stmt *st, int c);
/* An NVTX row's name from columns text (inline) and text_id (StringIds):
 * the inline text unless it is empty and text_id is set; TS_NO_ID when
 * neither names it. */
uint32_t ns_nvtx_text(struct ts_nsys *x, sqlite3_stmt *st, int text, int text_id);
int ns_is_nccl_range(const char *s);
/* Memory-kind label (ENUM_CUDA_MEM_KIND numbering), "Unknown" out of range. */
const char *ns_mem_kind(int64_t k);
/* Kineto short copy kind ("HtoD") of an ENUM_CUDA_MEMCPY_OPER id. */
const char *ns_copy_short(int64_t k);

#endif
