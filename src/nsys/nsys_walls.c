/*
 * nsys_walls.c - per-device GPU time of a trace: span, busy, idle,
 * compute, communication and exposed communication, memcpy and exposed
 * memcpy, as exact int64-ns interval unions (definitions in nsys.h and
 * docs/nsys.md). Works on any trace model, Kineto or nsys-read, which is
 * what the cross-format identity test relies on.
 */
#include <stdlib.h>
#include <string.h>
#include "trainscope/nsys.h"
#include "trainscope/profile.h"
#include "trainscope/taxonomy.h"

/* Times beyond +-2^61 ns are not real (as in profile): left out. */
#define TIME_LIM (INT64_C(1) << 61)

struct dev_sets {
	int32_t device;
	int64_t last_end;     /* of every activity, zero-length ones too */
	struct ts_ivset all, comp, comm, mcpy, mset;
	struct ts_dev_walls w;
};

static void sets_release(struct dev_sets *d)
{
	ts_ivset_release(&d->all);
	ts_ivset_release(&d->comp);
	ts_ivset_release(&d->comm);
	ts_ivset_release(&d->mcpy);
	ts_ivset_release(&d->mset);
}

static int cmp_dev(const void *a, const void *b)
{
	const struct dev_sets *x = a, *y = b;
	return (x->device > y->device) - (x->device < y->device);
}

int ts_dev_walls_of(const struct ts_trace *t, struct ts_dev_walls **out, size_t *nout,
		    struct ts_err *err)
{
	TS_VEC(struct dev_sets) d = { 0 };
	uint8_t *cls = NULL;   /* per name: 0 unknown, 1 compute, 2 comm */
	struct ts_ivset tmp;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	ts_ivset_init(&tmp);
	cls = calloc(t->strings.count ? t->strings.count : 1, 1);
	if (!cls)
		goto nomem;
	for (size_t i = 0; i < t->ev.n; i++) {
		int cat = t->ev.cat[i];
		int64_t s = ts_ev_ts(&t->ev, i), du = ts_ev_dur(&t->ev, i);
		int32_t dev;
		size_t k;
		struct dev_sets *ds;
		if ((cat != TS_CAT_KERNEL && cat != TS_CAT_MEMCPY && cat != TS_CAT_MEMSET) ||
		    t->ev.ph[i] != 'X' || du == TS_NONE || du < 0 || du > TIME_LIM || s == TS_NONE ||
		    s < -TIME_LIM || s > TIME_LIM)
			continue;
		dev = ts_ev_device(&t->ev, i);
		if (dev < 0)
			dev = (ts_ev_pid(&t->ev, i) >= 0 && ts_ev_pid(&t->ev, i) < INT32_MAX ? (int32_t)ts_ev_pid(&t->ev, i) : -1);
		for (k = 0; k < d.n && d.v[k].device != dev; k++)
			;
		if (k == d.n) {
			struct dev_sets z;
			memset(&z, 0, sizeof(z));
			z.device = dev;
			z.w.device = dev;
			z.w.t0_ns = INT64_MAX;
			z.last_end = INT64_MIN;
			if (TS_VEC_PUSH(d, z))
				goto nomem;
		}
		ds = &d.v[k];
		if (s < ds->w.t0_ns)
			ds->w.t0_ns = s;
		if (s + du > ds->last_end)
			ds->last_end = s + du;
		if (ts_ivset_add(&ds->all, s, s + du))
			goto nomem;
		if (cat == TS_CAT_MEMCPY) {
			ds->w.memcpys++;
			if (ts_ivset_add(&ds->mcpy, s, s + du))
				goto nomem;
		} else if (cat == TS_CAT_MEMSET) {
			ds->w.memsets++;
			if (ts_ivset_add(&ds->mset, s, s + du) || ts_ivset_add(&ds->comp, s, s + du))
				goto nomem;
		} else {
			uint32_t id = t->ev.name[i];
			int c = 1;
			if (id < t->strings.count) {
				if (!cls[id])
					cls[id] = ts_kclass_of(ts_intern_str(&t->strings, id),
							       ts_intern_len(&t->strings, id), 0, 0) == TS_KC_COMM ? 2 : 1;
				c = cls[id];
			}
			ds->w.kernels++;
			ds->w.comm_kernels += c == 2;
			if (__builtin_add_overflow(ds->w.kernel_sum_ns, du, &ds->w.kernel_sum_ns))
				ds->w.kernel_sum_ns = INT64_MAX;   /* saturate */
			if (ts_ivset_add(c == 2 ? &ds->comm : &ds->comp, s, s + du))
				goto nomem;
		}
	}
	ts_sort(d.v, d.n, sizeof(*d.v), cmp_dev);
	*out = calloc(d.n ? d.n : 1, sizeof(**out));
	if (!*out)
		goto nomem;
	for (size_t k = 0; k < d.n; k++) {
		struct dev_sets *ds = &d.v[k];
		struct ts_dev_walls *w = &ds->w;
		ts_ivset_norm(&ds->all);
		ts_ivset_norm(&ds->comp);
		ts_ivset_norm(&ds->comm);
		ts_ivset_norm(&ds->mcpy);
		ts_ivset_norm(&ds->mset);
		w->span_ns = ds->last_end - w->t0_ns;
		w->busy_ns = ts_ivset_len(&ds->all);
		w->idle_ns = w->span_ns - w->busy_ns;
		w->compute_ns = ts_ivset_len(&ds->comp);
		w->comm_ns = ts_ivset_len(&ds->comm);
		w->exposed_comm_ns = w->comm_ns - ts_ivset_and_len(&ds->comm, &ds->comp);
		w->memcpy_ns = ts_ivset_len(&ds->mcpy);
		w->memset_ns = ts_ivset_len(&ds->mset);
		if (ts_ivset_or(&tmp, &ds->comp, &ds->comm))
			goto nomem;
		w->exposed_memcpy_ns = w->memcpy_ns - ts_ivset_and_len(&ds->mcpy, &tmp);
		(*out)[k] = *w;
	}
	*nout = d.n;
	goto out;
nomem:
	free(*out);
	*out = NULL;
	rc = ts_err_set(err, TS_ENOMEM, "out of memory computing device walls");
out:
	for (size_t k = 0; k < d.n; k++)
		sets_release(&d.v[k]);
	TS_VEC_RELEASE(d);
	ts_ivset_release(&tmp);
	free(cls);
	return rc;
}
