/*
 * pf_read.c - read a trainscope.preflight/1 file back.
 *
 * Why: a run directory that recorded a preflight shows its findings in
 * `diagnose`, and per-node files are compared in one table. The reader
 * keeps what those need: source, vendor, devices, drivers, the libraries'
 * picks and versions, host and facts, and the findings; copies and probes
 * are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_int.h"
#include "trainscope/input.h"
#include "trainscope/json.h"

static const char *val(struct ts_preflight *pf, const struct ts_json *j, int tok)
{
	struct ts_sb sb;
	const char *v;

	if (tok == TS_JSON_NUM)
		return pf_dupn(pf, j->s, j->n);
	if (tok == TS_JSON_TRUE || tok == TS_JSON_FALSE)
		return tok == TS_JSON_TRUE ? "true" : "false";
	if (tok != TS_JSON_STR)
		return NULL;
	if (!j->escaped)
		return pf_dupn(pf, j->s, j->n);
	ts_sb_init(&sb);
	ts_json_unescape(j->s, j->n, 1, &sb);
	v = sb.failed ? NULL : pf_dupn(pf, sb.buf, sb.len);
	ts_sb_release(&sb);
	return v;
}

/* One array element object of section `sec` (devices, drivers, libraries,
 * findings): its scalar keys; nested containers are skipped. */
static int element(struct ts_preflight *pf, struct ts_json *j, const char *sec, struct ts_err *err)
{
	struct ts_pf_device *dev = NULL;
	struct ts_pf_lib *lib = NULL;
	struct ts_pf_driver drv = { NULL, NULL, NULL, -1 };
	struct ts_pf_finding f = { NULL, TS_PF_INFO, NULL, NULL };
	int tok;

	if (!strcmp(sec, "devices") && !(dev = pf_device_add(pf)))
		return TS_ENOMEM;
	while ((tok = ts_json_next(j, err)) == TS_JSON_KEY) {
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)(j->n < 63 ? j->n : 63), j->s);
		tok = ts_json_next(j, err);
		if (tok < 0)
			return tok;
		if (tok == TS_JSON_OBJ || tok == TS_JSON_ARR) {
			if ((tok = ts_json_skip(j, tok, err)) < 0)
				return tok;
			continue;
		}
		const char *v = val(pf, j, tok);
		if (!v)
			continue;
		if (dev) {
			if (!strcmp(key, "bdf")) dev->bdf = v;
			else if (!strcmp(key, "vendor")) dev->vendor = v;
			else if (!strcmp(key, "name")) dev->name = v;
			else if (!strcmp(key, "compute_capability")) dev->cc = v;
			else if (!strcmp(key, "vendor_id")) dev->vendor_id = (unsigned)strtoul(v, NULL, 16);
			else if (!strcmp(key, "link_width_current")) dev->width_cur = (int)strtol(v, NULL, 10);
			else if (!strcmp(key, "link_width_max")) dev->width_max = (int)strtol(v, NULL, 10);
			else if (!strcmp(key, "link_speed_current_gts")) dev->speed_cur_gts = strtod(v, NULL);
			else if (!strcmp(key, "link_speed_max_gts")) dev->speed_max_gts = strtod(v, NULL);
			else if (!strcmp(key, "memory_total_mib")) dev->mem_total_mib = strtoll(v, NULL, 10);
			else if (!strcmp(key, "memory_used_mib")) dev->mem_used_mib = strtoll(v, NULL, 10);
			else if (!strcmp(key, "source")) dev->source = v;
			else if (!strcmp(key, "line")) dev->line = strtoll(v, NULL, 10);
		} else if (!strcmp(sec, "drivers")) {
			if (!strcmp(key, "name")) drv.name = v;
			else if (!strcmp(key, "version")) drv.version = v;
			else if (!strcmp(key, "source")) drv.source = v;
			else if (!strcmp(key, "line")) drv.line = strtoll(v, NULL, 10);
		} else if (!strcmp(sec, "libraries")) {
			if (!strcmp(key, "name")) {
				if (!(lib = pf_lib(pf, v, "?", "?")))
					return TS_ENOMEM;
			} else if (lib && !strcmp(key, "stack")) lib->stack = v;
			else if (lib && !strcmp(key, "soname")) lib->soname = v;
			else if (lib && !strcmp(key, "path")) lib->path = v;
			else if (lib && !strcmp(key, "picked_via")) lib->pick_via = v;
			else if (lib && !strcmp(key, "version")) lib->version = v;
			else if (lib && !strcmp(key, "version_source")) lib->version_src = v;
			else if (lib && !strcmp(key, "load_error")) lib->load_error = v;
			else if (lib && !strcmp(key, "torch_path")) lib->torch_path = v;
		} else if (!strcmp(sec, "findings")) {
			if (!strcmp(key, "id")) f.id = v;
			else if (!strcmp(key, "severity"))
				f.sev = !strcmp(v, "error") ? TS_PF_ERROR : !strcmp(v, "warning") ? TS_PF_WARNING : TS_PF_INFO;
			else if (!strcmp(key, "evidence")) f.evidence = v;
			else if (!strcmp(key, "fix")) f.fix = v;
		}
	}
	if (tok != TS_JSON_OBJ_END)
		return tok < 0 ? tok : ts_err_at(err, TS_EPARSE, NULL, (int64_t)j->tok_offset, -1,
						  "expected a key in a %s entry", sec);
	if (!strcmp(sec, "drivers") && drv.name && drv.version)
		return TS_VEC_PUSH(pf->drivers, drv);
	if (!strcmp(sec, "findings") && f.id && f.evidence && f.fix)
		return TS_VEC_PUSH(pf->findings, f);
	return 0;
}

int ts_preflight_read_mem(struct ts_preflight *pf, const char *data, size_t n, const char *name,
			  struct ts_err *err)
{
	struct ts_json j;
	int tok, rc = 0, schema = 0;

	ts_json_init_mem(&j, data, n, TS_JSON_LENIENT, name);
	if ((tok = ts_json_next(&j, err)) != TS_JSON_OBJ) {
		rc = tok < 0 ? tok : ts_err_at(err, TS_EPARSE, name, 0, 1, "not a JSON object");
		goto out;
	}
	while ((tok = ts_json_next(&j, err)) == TS_JSON_KEY) {
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)(j.n < 63 ? j.n : 63), j.s);
		if ((tok = ts_json_next(&j, err)) < 0)
			break;
		if (tok == TS_JSON_ARR && (!strcmp(key, "devices") || !strcmp(key, "drivers") ||
					   !strcmp(key, "libraries") || !strcmp(key, "findings"))) {
			while ((tok = ts_json_next(&j, err)) == TS_JSON_OBJ)
				if ((rc = element(pf, &j, key, err)))
					goto out;
			if (tok != TS_JSON_ARR_END)
				break;
		} else if (tok == TS_JSON_OBJ && (!strcmp(key, "host") || !strcmp(key, "facts") ||
						  !strcmp(key, "env"))) {
			int which = key[0] == 'h' ? PF_HOST : key[0] == 'f' ? PF_FACT : PF_ENV;
			while ((tok = ts_json_next(&j, err)) == TS_JSON_KEY) {
				const char *k = pf_dupn(pf, j.s, j.n);
				if ((tok = ts_json_next(&j, err)) < 0)
					break;
				if (tok == TS_JSON_ARR) {
					/* the strings of a list; anything else in it is skipped */
					while ((tok = ts_json_next(&j, err)) != TS_JSON_ARR_END && tok > 0) {
						if (tok == TS_JSON_STR) {
							if ((rc = pf_kv(pf, which, k, val(pf, &j, tok), name, -1)))
								goto out;
						} else if ((tok = ts_json_skip(&j, tok, err)) < 0) {
							break;
						}
					}
					if (tok != TS_JSON_ARR_END)
						break;
				} else if (tok == TS_JSON_OBJ) {
					if ((tok = ts_json_skip(&j, tok, err)) < 0)
						break;
				} else if (k && (rc = pf_kv(pf, which, k, val(pf, &j, tok), name, -1))) {
					goto out;
				}
			}
			if (tok != TS_JSON_OBJ_END)
				break;
		} else if (tok == TS_JSON_OBJ || tok == TS_JSON_ARR) {
			if ((tok = ts_json_skip(&j, tok, err)) < 0)
				break;
		} else if (!strcmp(key, "schema")) {
			schema = tok == TS_JSON_STR && TS_JSON_IS(&j, TS_PREFLIGHT_SCHEMA);
		} else if (!strcmp(key, "source")) {
			pf->source = val(pf, &j, tok);
		} else if (!strcmp(key, "vendor")) {
			pf->vendor = val(pf, &j, tok);
		} else if (!strcmp(key, "vendor_chain")) {
			pf->vendor_chain = val(pf, &j, tok);
		}
	}
	if (tok < 0) {
		rc = tok;
	} else if (tok != TS_JSON_OBJ_END) {
		rc = ts_err_at(err, TS_EPARSE, name, (int64_t)j.tok_offset, -1, "malformed preflight JSON");
	} else if (!schema) {
		rc = ts_err_at(err, TS_EPARSE, name, 0, 1, "\"schema\" is not %s", TS_PREFLIGHT_SCHEMA);
	}
out:
	if (rc && !err->path[0])
		snprintf(err->path, sizeof(err->path), "%s", name);
	if (!rc && pf->arena.failed)
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
	ts_json_release(&j);
	return rc;
}

int ts_preflight_read(struct ts_preflight *pf, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_read_all(&in, path, TS_PREFLIGHT_MAX_BYTES, err)))
		return rc;
	rc = ts_preflight_read_mem(pf, (const char *)in.data, in.len, path, err);
	ts_input_release(&in);
	return rc;
}
