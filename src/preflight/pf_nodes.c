/*
 * pf_nodes.c - one table over the preflight files of several nodes.
 *
 * Why: on a cluster the problem is usually one node that differs (another
 * driver, a GPU missing, a link at x8). Each node's file is reduced to a row
 * of comparable values; a value that is not the one most nodes share (a
 * tie has no majority) is marked, and the node counts as an outlier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_int.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"

#define NCOLS 13

static const char *const lib_cols[] = { "cuda", "cudart", "nvml", "nccl", "cudnn",
					"musart", "mtml", "mccl" };

struct row {
	const char *node;
	char *v[NCOLS];
	int mark[NCOLS];
	int outlier;
};

static char *xdup(const char *s)
{
	size_t n = strlen(s);
	char *d = malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

static void fill(struct row *r, const struct ts_preflight *pf)
{
	struct ts_sb sb;
	int minw = 0;

	ts_sb_init(&sb);
	ts_sb_addf(&sb, "%zu", pf->devices.n);
	if (pf->devices.n && pf->devices.v[0].name)
		ts_sb_addf(&sb, " x %s", pf->devices.v[0].name);
	r->v[0] = xdup(sb.buf);
	r->v[1] = xdup(pf->vendor ? pf->vendor : "-");
	ts_sb_reset(&sb);
	for (size_t i = 0; i < pf->drivers.n; i++)
		ts_sb_addf(&sb, "%s%s %s", i ? ", " : "", pf->drivers.v[i].name, pf->drivers.v[i].version);
	r->v[2] = xdup(sb.len ? sb.buf : "-");
	for (size_t i = 0; i < pf->devices.n; i++)
		if (pf->devices.v[i].width_cur > 0 && (!minw || pf->devices.v[i].width_cur < minw))
			minw = pf->devices.v[i].width_cur;
	ts_sb_reset(&sb);
	if (minw)
		ts_sb_addf(&sb, "x%d", minw);
	r->v[3] = xdup(minw ? sb.buf : "-");
	for (size_t k = 0; k < sizeof(lib_cols) / sizeof(lib_cols[0]); k++) {
		const struct ts_pf_lib *l = pf_lib_find(pf, lib_cols[k]);
		r->v[4 + k] = xdup(l && l->version ? l->version : "-");
	}
	ts_sb_reset(&sb);
	for (size_t i = 0; i < pf->findings.n; i++)
		if (pf->findings.v[i].sev == TS_PF_ERROR)
			ts_sb_addf(&sb, "%s%s", sb.len ? " " : "", pf->findings.v[i].id);
	r->v[12] = xdup(sb.len ? sb.buf : "-");
	ts_sb_release(&sb);
}

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->node, ((const struct row *)b)->node);
}

int ts_preflight_nodes(const char *const *paths, size_t n, int json, struct ts_sb *out,
		       size_t *outliers, struct ts_err *err)
{
	static const char *const names[NCOLS] = { "devices", "vendor", "drivers", "min_link_width",
		"cuda", "cudart", "nvml", "nccl", "cudnn", "musart", "mtml", "mccl", "errors" };
	struct row *rows = calloc(n ? n : 1, sizeof(*rows));
	int rc = 0, used[NCOLS];

	*outliers = 0;
	if (!rows)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct ts_preflight pf;
		ts_preflight_init(&pf);
		if ((rc = ts_preflight_read(&pf, paths[i], err))) {
			ts_preflight_release(&pf);
			goto out;
		}
		const char *base = strrchr(paths[i], '/');
		rows[i].node = base ? base + 1 : paths[i];
		fill(&rows[i], &pf);
		ts_preflight_release(&pf);
		for (int c = 0; c < NCOLS; c++)
			if (!rows[i].v[c]) {
				rc = ts_err_set(err, TS_ENOMEM, "out of memory");
				goto out;
			}
	}
	ts_sort(rows, n, sizeof(*rows), cmp_row);
	for (int c = 0; c < NCOLS; c++) {
		size_t best = 0, bestn = 0, tie = 0;
		used[c] = c < 4 || c == 12;
		for (size_t i = 0; i < n; i++) {
			size_t same = 0;
			if (strcmp(rows[i].v[c], "-"))
				used[c] = 1;
			for (size_t k = 0; k < n; k++)
				same += !strcmp(rows[i].v[c], rows[k].v[c]);
			if (same > bestn) {
				bestn = same;
				best = i;
				tie = 0;
			} else if (same == bestn && strcmp(rows[i].v[c], rows[best].v[c])) {
				tie = 1;
			}
		}
		for (size_t i = 0; i < n; i++)
			if (tie || strcmp(rows[i].v[c], rows[best].v[c])) {
				rows[i].mark[c] = 1;
				rows[i].outlier = 1;
			}
	}
	for (size_t i = 0; i < n; i++)
		*outliers += (size_t)rows[i].outlier;
	if (json) {
		struct ts_jw w;
		ts_jw_init(&w, out, 1);
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "schema", "trainscope.preflight-nodes/1");
		ts_jw_key(&w, "nodes");
		ts_jw_arr(&w);
		for (size_t i = 0; i < n; i++) {
			ts_jw_obj(&w);
			ts_jw_kstr(&w, "node", rows[i].node);
			ts_jw_kbool(&w, "outlier", rows[i].outlier);
			for (int c = 0; c < NCOLS; c++)
				if (used[c])
					ts_jw_kstr(&w, names[c], rows[i].v[c]);
			ts_jw_key(&w, "differs");
			ts_jw_arr(&w);
			for (int c = 0; c < NCOLS; c++)
				if (used[c] && rows[i].mark[c])
					ts_jw_str(&w, names[c]);
			ts_jw_arr_end(&w);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_jw_ki64(&w, "outliers", (int64_t)*outliers);
		ts_jw_obj_end(&w);
		ts_sb_addc(out, '\n');
	} else {
		struct ts_table t;
		ts_table_init(&t);
		ts_table_col(&t, "node", NULL, TS_LEFT, 0);
		for (int c = 0; c < NCOLS; c++)
			if (used[c])
				ts_table_col(&t, names[c], NULL, TS_LEFT, 0);
		for (size_t i = 0; i < n; i++) {
			ts_table_cell(&t, "%s%s", rows[i].outlier ? "* " : "  ", rows[i].node);
			for (int c = 0; c < NCOLS; c++)
				if (used[c])
					ts_table_cell(&t, "%s%s", rows[i].v[c], rows[i].mark[c] ? " *" : "");
		}
		ts_table_render(&t, out, 0);
		ts_table_release(&t);
		ts_sb_addf(out, "\n%zu node(s), %zu outlier(s) (* = differs from the value most nodes share)\n",
			   n, *outliers);
	}
out:
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NCOLS; c++)
			free(rows[i].v[c]);
	free(rows);
	return rc;
}
