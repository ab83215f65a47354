/*
 * pf_model.c - the preflight model: lifecycle and the small helpers every
 * source (probe, report, python child) uses to add facts.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_int.h"

void ts_preflight_init(struct ts_preflight *pf)
{
	memset(pf, 0, sizeof(*pf));
	ts_arena_init(&pf->arena);
}

void ts_preflight_release(struct ts_preflight *pf)
{
	for (size_t i = 0; i < pf->libs.n; i++)
		TS_VEC_RELEASE(pf->libs.v[i].copies);
	TS_VEC_RELEASE(pf->devices);
	TS_VEC_RELEASE(pf->drivers);
	TS_VEC_RELEASE(pf->libs);
	TS_VEC_RELEASE(pf->env);
	TS_VEC_RELEASE(pf->host);
	TS_VEC_RELEASE(pf->facts);
	TS_VEC_RELEASE(pf->probes);
	TS_VEC_RELEASE(pf->findings);
	ts_arena_release(&pf->arena);
	memset(pf, 0, sizeof(*pf));
}

const char *ts_pf_sev_name(enum ts_pf_sev s)
{
	return s == TS_PF_ERROR ? "error" : s == TS_PF_WARNING ? "warning" : "info";
}

const char *pf_dup(struct ts_preflight *pf, const char *s)
{
	return s ? ts_arena_strndup(&pf->arena, s, strlen(s)) : NULL;
}

const char *pf_dupn(struct ts_preflight *pf, const char *s, size_t n)
{
	return ts_arena_strndup(&pf->arena, s, n);
}

const char *pf_fmt(struct ts_preflight *pf, const char *fmt, ...)
{
	struct ts_sb sb;
	va_list ap;
	const char *r;

	ts_sb_init(&sb);
	va_start(ap, fmt);
	ts_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	r = sb.failed ? NULL : pf_dupn(pf, sb.buf, sb.len);
	ts_sb_release(&sb);
	return r;
}

int pf_kv(struct ts_preflight *pf, int which, const char *key, const char *value,
	  const char *source, int64_t line)
{
	struct ts_pf_kv kv = { pf_dup(pf, key), pf_dup(pf, value), pf_dup(pf, source), line };

	if (!kv.key || (value && !kv.value))
		return TS_ENOMEM;
	switch (which) {
	case PF_ENV: return TS_VEC_PUSH(pf->env, kv);
	case PF_HOST: return TS_VEC_PUSH(pf->host, kv);
	case PF_FACT: return TS_VEC_PUSH(pf->facts, kv);
	default: return TS_VEC_PUSH(pf->probes, kv);
	}
}

struct ts_pf_device *pf_device_add(struct ts_preflight *pf)
{
	struct ts_pf_device d;

	memset(&d, 0, sizeof(d));
	d.numa_node = -1;
	d.mem_total_mib = d.mem_used_mib = -1;
	d.line = -1;
	if (TS_VEC_PUSH(pf->devices, d))
		return NULL;
	return &pf->devices.v[pf->devices.n - 1];
}

int pf_driver_add(struct ts_preflight *pf, const char *name, const char *version,
		  const char *source, int64_t line)
{
	struct ts_pf_driver d = { pf_dup(pf, name), pf_dup(pf, version), pf_dup(pf, source), line };

	if (!d.name || !d.version)
		return TS_ENOMEM;
	return TS_VEC_PUSH(pf->drivers, d);
}

struct ts_pf_lib *pf_lib(struct ts_preflight *pf, const char *name, const char *stack,
			 const char *soname)
{
	struct ts_pf_lib l;

	for (size_t i = 0; i < pf->libs.n; i++)
		if (strcmp(pf->libs.v[i].name, name) == 0)
			return &pf->libs.v[i];
	memset(&l, 0, sizeof(l));
	l.name = pf_dup(pf, name);
	l.stack = pf_dup(pf, stack);
	l.soname = pf_dup(pf, soname);
	l.loaded = -1;
	if (!l.name || !l.stack || !l.soname || TS_VEC_PUSH(pf->libs, l))
		return NULL;
	return &pf->libs.v[pf->libs.n - 1];
}

const struct ts_pf_lib *pf_lib_find(const struct ts_preflight *pf, const char *name)
{
	for (size_t i = 0; i < pf->libs.n; i++)
		if (strcmp(pf->libs.v[i].name, name) == 0)
			return &pf->libs.v[i];
	return NULL;
}

const struct ts_pf_driver *pf_driver_find(const struct ts_preflight *pf, const char *name)
{
	for (size_t i = 0; i < pf->drivers.n; i++)
		if (strcmp(pf->drivers.v[i].name, name) == 0)
			return &pf->drivers.v[i];
	return NULL;
}

static const char *kv_last(const struct ts_pf_kv *v, size_t n, const char *key)
{
	for (size_t i = n; i-- > 0;)
		if (strcmp(v[i].key, key) == 0)
			return v[i].value;
	return NULL;
}

const char *ts_preflight_fact(const struct ts_preflight *pf, const char *key)
{
	return kv_last(pf->facts.v, pf->facts.n, key);
}

const char *pf_host(const struct ts_preflight *pf, const char *key)
{
	return kv_last(pf->host.v, pf->host.n, key);
}

const char *pf_env(const struct ts_preflight *pf, const char *key)
{
	return kv_last(pf->env.v, pf->env.n, key);
}

const char *pf_so_version(const char *name)
{
	const char *p = strstr(name, ".so.");

	if (!p || !isdigit((unsigned char)p[4]))
		return NULL;
	return p + 4;
}

void pf_trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t' || **s == '\r'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}
