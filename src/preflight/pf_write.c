/*
 * pf_write.c - the preflight model as JSON (trainscope.preflight/1) and as
 * tables. One model, two renderings, same facts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_int.h"
#include "trainscope/jsonw.h"
#include "trainscope/table.h"

static void kstr_or_null(struct ts_jw *w, const char *k, const char *v)
{
	ts_jw_key(w, k);
	if (v)
		ts_jw_str(w, v);
	else
		ts_jw_null(w);
}

static void ki64_known(struct ts_jw *w, const char *k, int64_t v, int64_t unknown)
{
	ts_jw_key(w, k);
	if (v == unknown)
		ts_jw_null(w);
	else
		ts_jw_i64(w, v);
}

static void kgts(struct ts_jw *w, const char *k, double v)
{
	ts_jw_key(w, k);
	if (v > 0)
		ts_jw_fixed(w, v, 1);
	else
		ts_jw_null(w);
}

static int cmp_kv_idx(const void *a, const void *b)
{
	const struct ts_pf_kv *const *x = a, *const *y = b;
	int c = strcmp((*x)->key, (*y)->key);
	return c ? c : (*x < *y ? -1 : *x > *y);
}

/* kv list as an object; a key set several times becomes an array. */
static void kv_object(struct ts_jw *w, const char *name, const struct ts_pf_kv *v, size_t n)
{
	const struct ts_pf_kv **idx = n ? malloc(n * sizeof(*idx)) : NULL;

	ts_jw_key(w, name);
	ts_jw_obj(w);
	if (n && !idx) {
		ts_jw_obj_end(w);
		return;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = &v[i];
	ts_sort(idx, n, sizeof(*idx), cmp_kv_idx);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !strcmp(idx[j]->key, idx[i]->key))
			j++;
		ts_jw_key(w, idx[i]->key);
		if (j - i == 1 && idx[i]->value) {
			ts_jw_str(w, idx[i]->value);
		} else if (j - i == 1) {
			ts_jw_null(w);
		} else {
			ts_jw_arr(w);
			for (size_t k = i; k < j; k++)
				ts_jw_str(w, idx[k]->value ? idx[k]->value : "");
			ts_jw_arr_end(w);
		}
		i = j;
	}
	free(idx);
	ts_jw_obj_end(w);
}

void ts_preflight_write_json(const struct ts_preflight *pf, struct ts_sb *out)
{
	struct ts_jw w;
	size_t nsev[3] = { 0, 0, 0 };
	char hex[16];

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", TS_PREFLIGHT_SCHEMA);
	kstr_or_null(&w, "source", pf->source);
	kstr_or_null(&w, "vendor", pf->vendor);
	kstr_or_null(&w, "vendor_chain", pf->vendor_chain);
	ts_jw_kbool(&w, "accelerator_found", pf->devices.n > 0);
	ts_jw_key(&w, "devices");
	ts_jw_arr(&w);
	for (size_t i = 0; i < pf->devices.n; i++) {
		const struct ts_pf_device *d = &pf->devices.v[i];
		ts_jw_obj(&w);
		kstr_or_null(&w, "bdf", d->bdf);
		kstr_or_null(&w, "vendor", d->vendor);
		snprintf(hex, sizeof(hex), "0x%04x", d->vendor_id);
		kstr_or_null(&w, "vendor_id", d->vendor_id ? hex : NULL);
		snprintf(hex, sizeof(hex), "0x%04x", d->device_id);
		kstr_or_null(&w, "device_id", d->device_id ? hex : NULL);
		kstr_or_null(&w, "name", d->name);
		ki64_known(&w, "numa_node", d->numa_node, -1);
		ki64_known(&w, "link_width_current", d->width_cur, 0);
		ki64_known(&w, "link_width_max", d->width_max, 0);
		kgts(&w, "link_speed_current_gts", d->speed_cur_gts);
		kgts(&w, "link_speed_max_gts", d->speed_max_gts);
		kstr_or_null(&w, "kernel_driver", d->kdriver);
		kstr_or_null(&w, "compute_capability", d->cc);
		ki64_known(&w, "memory_total_mib", d->mem_total_mib, -1);
		ki64_known(&w, "memory_used_mib", d->mem_used_mib, -1);
		kstr_or_null(&w, "source", d->source);
		ki64_known(&w, "line", d->line, -1);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "drivers");
	ts_jw_arr(&w);
	for (size_t i = 0; i < pf->drivers.n; i++) {
		const struct ts_pf_driver *d = &pf->drivers.v[i];
		ts_jw_obj(&w);
		kstr_or_null(&w, "name", d->name);
		kstr_or_null(&w, "version", d->version);
		kstr_or_null(&w, "source", d->source);
		ki64_known(&w, "line", d->line, -1);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "libraries");
	ts_jw_arr(&w);
	for (size_t i = 0; i < pf->libs.n; i++) {
		const struct ts_pf_lib *l = &pf->libs.v[i];
		ts_jw_obj(&w);
		kstr_or_null(&w, "name", l->name);
		kstr_or_null(&w, "stack", l->stack);
		kstr_or_null(&w, "soname", l->soname);
		kstr_or_null(&w, "path", l->path);
		kstr_or_null(&w, "picked_via", l->pick_via);
		kstr_or_null(&w, "version", l->version);
		kstr_or_null(&w, "version_source", l->version_src);
		ts_jw_key(&w, "loaded");
		if (l->loaded < 0)
			ts_jw_null(&w);
		else
			ts_jw_bool(&w, l->loaded);
		kstr_or_null(&w, "load_error", l->load_error);
		kstr_or_null(&w, "torch_path", l->torch_path);
		ts_jw_key(&w, "copies");
		ts_jw_arr(&w);
		for (size_t k = 0; k < l->copies.n; k++) {
			ts_jw_obj(&w);
			kstr_or_null(&w, "path", l->copies.v[k].path);
			kstr_or_null(&w, "version", l->copies.v[k].version);
			kstr_or_null(&w, "via", l->copies.v[k].via);
			ts_jw_obj_end(&w);
		}
		ts_jw_arr_end(&w);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	kv_object(&w, "env", pf->env.v, pf->env.n);
	kv_object(&w, "host", pf->host.v, pf->host.n);
	kv_object(&w, "facts", pf->facts.v, pf->facts.n);
	ts_jw_key(&w, "probes");
	ts_jw_arr(&w);
	for (size_t i = 0; i < pf->probes.n; i++) {
		ts_jw_obj(&w);
		kstr_or_null(&w, "probe", pf->probes.v[i].key);
		kstr_or_null(&w, "result", pf->probes.v[i].value);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "findings");
	ts_jw_arr(&w);
	for (size_t i = 0; i < pf->findings.n; i++) {
		const struct ts_pf_finding *f = &pf->findings.v[i];
		nsev[f->sev]++;
		ts_jw_obj(&w);
		ts_jw_kstr(&w, "id", f->id);
		ts_jw_kstr(&w, "severity", ts_pf_sev_name(f->sev));
		ts_jw_kstr(&w, "evidence", f->evidence);
		ts_jw_kstr(&w, "fix", f->fix);
		ts_jw_obj_end(&w);
	}
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "summary");
	ts_jw_obj(&w);
	ts_jw_ki64(&w, "errors", (int64_t)nsev[TS_PF_ERROR]);
	ts_jw_ki64(&w, "warnings", (int64_t)nsev[TS_PF_WARNING]);
	ts_jw_ki64(&w, "info", (int64_t)nsev[TS_PF_INFO]);
	ts_jw_obj_end(&w);
	ts_jw_obj_end(&w);
	ts_sb_addc(out, '\n');
}

static const char *dash(const char *s)
{
	return s && *s ? s : "-";
}

void ts_preflight_write_table(const struct ts_preflight *pf, struct ts_sb *out)
{
	struct ts_table t;

	ts_sb_addf(out, "preflight of %s: vendor %s (%s)\n\n", dash(pf->source), dash(pf->vendor),
		   dash(pf->vendor_chain));
	ts_sb_adds(out, "probes\n");
	ts_table_init(&t);
	ts_table_col(&t, "probe", NULL, TS_LEFT, 0);
	ts_table_col(&t, "result", NULL, TS_LEFT, 0);
	for (size_t i = 0; i < pf->probes.n; i++) {
		ts_table_cell(&t, "%s", pf->probes.v[i].key);
		ts_table_cell(&t, "%s", dash(pf->probes.v[i].value));
	}
	ts_table_render(&t, out, 2);
	ts_table_release(&t);

	if (!pf->devices.n) {
		ts_sb_adds(out, "\nno accelerator found\n");
	} else {
		ts_sb_addf(out, "\ndevices (%zu)\n", pf->devices.n);
		ts_table_init(&t);
		ts_table_col(&t, "device", NULL, TS_LEFT, 0);
		ts_table_col(&t, "vendor", NULL, TS_LEFT, 0);
		ts_table_col(&t, "name", NULL, TS_LEFT, 0);
		ts_table_col(&t, "cc", NULL, TS_LEFT, 0);
		ts_table_col(&t, "width", "cur/max", TS_RIGHT, 0);
		ts_table_col(&t, "speed", "GT/s cur/max", TS_RIGHT, 0);
		ts_table_col(&t, "numa", NULL, TS_RIGHT, 0);
		ts_table_col(&t, "memory", "MiB used/total", TS_RIGHT, 0);
		ts_table_col(&t, "driver", NULL, TS_LEFT, 0);
		for (size_t i = 0; i < pf->devices.n; i++) {
			const struct ts_pf_device *d = &pf->devices.v[i];
			if (d->bdf)
				ts_table_cell(&t, "%s", d->bdf);
			else
				ts_table_cell(&t, "#%zu", i);
			ts_table_cell(&t, "%s", dash(d->vendor));
			ts_table_cell(&t, "%s", dash(d->name));
			ts_table_cell(&t, "%s", dash(d->cc));
			if (d->width_max)
				ts_table_cell(&t, "x%d/x%d", d->width_cur, d->width_max);
			else
				ts_table_cell(&t, "-");
			if (d->speed_max_gts > 0)
				ts_table_cell(&t, "%.1f/%.1f", d->speed_cur_gts, d->speed_max_gts);
			else
				ts_table_cell(&t, "-");
			if (d->numa_node >= 0)
				ts_table_cell(&t, "%d", d->numa_node);
			else
				ts_table_cell(&t, "-");
			if (d->mem_total_mib >= 0)
				ts_table_cell(&t, "%lld/%lld", (long long)d->mem_used_mib, (long long)d->mem_total_mib);
			else
				ts_table_cell(&t, "-");
			ts_table_cell(&t, "%s", dash(d->kdriver));
		}
		ts_table_render(&t, out, 2);
		ts_table_release(&t);
	}
	if (pf->drivers.n) {
		ts_sb_adds(out, "\ndrivers\n");
		ts_table_init(&t);
		ts_table_col(&t, "driver", NULL, TS_LEFT, 0);
		ts_table_col(&t, "version", NULL, TS_LEFT, 0);
		ts_table_col(&t, "from", NULL, TS_LEFT, 0);
		for (size_t i = 0; i < pf->drivers.n; i++) {
			ts_table_cell(&t, "%s", pf->drivers.v[i].name);
			ts_table_cell(&t, "%s", pf->drivers.v[i].version);
			if (pf->drivers.v[i].line > 0)
				ts_table_cell(&t, "%s:%lld", dash(pf->drivers.v[i].source), (long long)pf->drivers.v[i].line);
			else
				ts_table_cell(&t, "%s", dash(pf->drivers.v[i].source));
		}
		ts_table_render(&t, out, 2);
		ts_table_release(&t);
	}
	if (pf->libs.n) {
		ts_sb_adds(out, "\nlibraries\n");
		ts_table_init(&t);
		ts_table_col(&t, "library", NULL, TS_LEFT, 0);
		ts_table_col(&t, "version", NULL, TS_LEFT, 0);
		ts_table_col(&t, "loader picks", NULL, TS_LEFT, 0);
		ts_table_col(&t, "via", NULL, TS_LEFT, 0);
		ts_table_col(&t, "loaded", NULL, TS_LEFT, 0);
		ts_table_col(&t, "copies", NULL, TS_RIGHT, 0);
		for (size_t i = 0; i < pf->libs.n; i++) {
			const struct ts_pf_lib *l = &pf->libs.v[i];
			ts_table_cell(&t, "%s", l->soname);
			ts_table_cell(&t, "%s", dash(l->version));
			ts_table_cell(&t, "%s", l->path ? l->path : "not found");
			ts_table_cell(&t, "%s", dash(l->pick_via));
			ts_table_cell(&t, "%s", l->loaded < 0 ? "-" : l->loaded ? "yes" : dash(l->load_error));
			ts_table_cell_i64(&t, (long long)l->copies.n);
		}
		ts_table_render(&t, out, 2);
		ts_table_release(&t);
	}
	if (pf->facts.n) {
		ts_sb_adds(out, "\nfacts\n");
		ts_table_init(&t);
		ts_table_col(&t, "fact", NULL, TS_LEFT, 0);
		ts_table_col(&t, "value", NULL, TS_LEFT, 72);
		for (size_t i = 0; i < pf->facts.n; i++) {
			ts_table_cell(&t, "%s", pf->facts.v[i].key);
			ts_table_cell(&t, "%s", dash(pf->facts.v[i].value));
		}
		ts_table_render(&t, out, 2);
		ts_table_release(&t);
	}
	if (pf->env.n || pf->host.n) {
		ts_sb_adds(out, "\nenvironment and host\n");
		ts_table_init(&t);
		ts_table_col(&t, "name", NULL, TS_LEFT, 0);
		ts_table_col(&t, "value", NULL, TS_LEFT, 72);
		for (size_t i = 0; i < pf->env.n; i++) {
			ts_table_cell(&t, "%s", pf->env.v[i].key);
			ts_table_cell(&t, "%s", dash(pf->env.v[i].value));
		}
		for (size_t i = 0; i < pf->host.n; i++) {
			ts_table_cell(&t, "%s", pf->host.v[i].key);
			ts_table_cell(&t, "%s", dash(pf->host.v[i].value));
		}
		ts_table_render(&t, out, 2);
		ts_table_release(&t);
	}
	if (!pf->findings.n) {
		ts_sb_adds(out, "\nno findings\n");
		return;
	}
	ts_sb_addf(out, "\nfindings (%zu)\n", pf->findings.n);
	for (size_t i = 0; i < pf->findings.n; i++) {
		const struct ts_pf_finding *f = &pf->findings.v[i];
		ts_sb_addf(out, "  %-7s %s\n          evidence: %s\n          fix: %s\n",
			   ts_pf_sev_name(f->sev), f->id, f->evidence, f->fix);
	}
}
