/* pf_int.h - helpers shared by the preflight sources (not public). */
#ifndef TS_PF_INT_H
#define TS_PF_INT_H

#include <stddef.h>
#include "trainscope/preflight.h"

/* Copy into pf's arena (NULL stays NULL). */
const char *pf_dup(struct ts_preflight *pf, const char *s);
const char *pf_dupn(struct ts_preflight *pf, const char *s, size_t n);
const char *pf_fmt(struct ts_preflight *pf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append to a kv list (strings copied). 0 or TS_ENOMEM. */
int pf_kv(struct ts_preflight *pf, int which, const char *key, const char *value,
	  const char *source, int64_t line);
enum { PF_ENV, PF_HOST, PF_FACT, PF_PROBE };

/* A new zeroed device with unknowns set (-1); NULL on ENOMEM. */
struct ts_pf_device *pf_device_add(struct ts_preflight *pf);
int pf_driver_add(struct ts_preflight *pf, const char *name, const char *version,
		  const char *source, int64_t line);
/* The library record of kind name, created on first use. */
struct ts_pf_lib *pf_lib(struct ts_preflight *pf, const char *name, const char *stack,
			 const char *soname);
const struct ts_pf_lib *pf_lib_find(const struct ts_preflight *pf, const char *name);
const struct ts_pf_driver *pf_driver_find(const struct ts_preflight *pf, const char *name);
const char *pf_host(const struct ts_preflight *pf, const char *key);
const char *pf_env(const struct ts_preflight *pf, const char *key);

/* "libnvidia-ml.so.570.124.06" -> "570.124.06" (pointer into name), NULL
 * when the name has no digits after ".so.". */
const char *pf_so_version(const char *name);

/* Trim spaces/tabs/CR at both ends of [*s, *s + *n). */
void pf_trim(const char **s, size_t *n);

/* Fill pf from the python3 probe's JSON answer. */
int pf_python_parse(struct ts_preflight *pf, const char *data, size_t n);
extern const char pf_python_script[];

#endif
