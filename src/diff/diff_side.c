/*
 * diff_side.c - one side of a diff: trace's rank profile plus one record
 * per op instance inside a step, with CPU self time (duration minus the
 * children on the same thread), sizes of copies and collectives, name
 * normalisation and kernel families.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/diff.h"
#include "trainscope/diffcompat.h"
#include "trainscope/taxonomy.h"

static const char *const kind_names[TS_DIFF_KIND_COUNT] = { "cpu_op", "annotation", "kernel",
							     "memcpy", "memset", "wall" };

const char *ts_diff_kind_name(int kind)
{
	return kind >= 0 && kind < TS_DIFF_KIND_COUNT ? kind_names[kind] : "?";
}

const char *ts_diff_match_name(int match)
{
	static const char *const n[] = { "exact", "normalized", "none" };
	return match >= 0 && match <= TS_DIFF_MATCH_NONE ? n[match] : "?";
}

/* ------------------------------------------------------------ names */

static int starts(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);
	return n >= k && memcmp(s, p, k) == 0;
}

/* Replace every occurrence of `from` by `to` (to no longer than from) in
 * buf[0..*len), in place. */
static void replace_all(char *buf, size_t *len, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), r = 0, w = 0;

	while (r < *len) {
		if (r + fl <= *len && memcmp(buf + r, from, fl) == 0) {
			memmove(buf + w, to, tl);
			w += tl;
			r += fl;
		} else {
			buf[w++] = buf[r++];
		}
	}
	*len = w;
}

size_t ts_diff_normalize(const char *name, size_t n, char *out, size_t cap)
{
	char tmp[512];
	size_t len = 0, start = 0;
	int depth = 0, signature = memchr(name, '(', n) != NULL;

	if (!cap)
		return 0;
	if (starts(name, n, "void "))
		name += 5, n -= 5;
	/* drop template arguments and argument lists, keep the rest */
	for (size_t i = 0; i < n && len + 1 < sizeof(tmp); i++) {
		char c = name[i];
		if (c == '<' || c == '(') {
			depth++;
			continue;
		}
		if ((c == '>' || c == ')') && depth > 0) {
			depth--;
			continue;
		}
		if (depth)
			continue;
		tmp[len++] = (char)tolower((unsigned char)c);
	}
	/* a return type before the name ("float foo(int)"), in signatures only */
	for (size_t i = len; signature && i > 0; i--)
		if (tmp[i - 1] == ' ') {
			start = i;
			break;
		}
	/* namespaces */
	for (size_t i = len; i > start + 1; i--)
		if (tmp[i - 1] == ':' && tmp[i - 2] == ':') {
			start = i;
			break;
		}
	memmove(tmp, tmp + start, len - start);
	len -= start;
	replace_all(tmp, &len, "___mt_", "_");
	replace_all(tmp, &len, "bfloat16", "bf16");
	replace_all(tmp, &len, "float16", "fp16");
	replace_all(tmp, &len, "half", "fp16");
	replace_all(tmp, &len, "float32", "fp32");
	/* collapse runs of '_' */
	{
		size_t w = 0;
		for (size_t r = 0; r < len; r++)
			if (!(tmp[r] == '_' && w > 0 && tmp[w - 1] == '_'))
				tmp[w++] = tmp[r];
		len = w;
	}
	/* numeric suffixes: "_42", "#3" (not "bf16", "128x64") */
	for (;;) {
		size_t k = len;
		while (k && isdigit((unsigned char)tmp[k - 1]))
			k--;
		if (k < len && k > 1 && (tmp[k - 1] == '_' || tmp[k - 1] == '#'))
			len = k - 1;
		else
			break;
	}
	while (len && (tmp[len - 1] == '_' || tmp[len - 1] == ' '))
		len--;
	if (len >= cap)
		len = cap - 1;
	memcpy(out, tmp, len);
	out[len] = 0;
	return len;
}

static int has(const char *s, size_t n, const char *p)
{
	return ts_name_contains(s, n, p);
}

/* aten operators the kernel taxonomy does not name. */
static const char *cpu_family(const char *s, size_t n)
{
	static const char *const gemm[] = { "aten::mm", "aten::bmm", "aten::addmm", "aten::matmul",
					     "aten::linear", "aten::baddbmm", "aten::addbmm",
					     "MmBackward", "BmmBackward", "AddmmBackward" };
	static const char *const red[] = { "aten::softmax", "aten::_softmax", "aten::sum",
					   "aten::mean", "aten::max", "aten::min", "aten::topk",
					   "aten::argmax", "aten::cumsum", "aten::sort",
					   "aten::nll_loss", "aten::cross_entropy", "aten::log_softmax",
					   "aten::_log_softmax", "SoftmaxBackward", "TopkBackward" };

	if (starts(s, n, "enumerate(DataLoader)"))
		return "data_loader";
	/* the host side of a collective: PyTorch's record, c10d and backend ops */
	if (starts(s, n, "record_param_comms") || starts(s, n, "c10d::") || starts(s, n, "nccl:") ||
	    starts(s, n, "gloo:") || starts(s, n, "mccl:"))
		return "communication";
	if (starts(s, n, "aten::copy_") || starts(s, n, "aten::_to_copy") ||
	    (starts(s, n, "aten::to") && n == 8) || starts(s, n, "aten::clone") ||
	    starts(s, n, "aten::contiguous"))
		return "copy";
	if (starts(s, n, "Optimizer.") || has(s, n, "_foreach_") || has(s, n, "lerp") ||
	    has(s, n, "addcdiv") || has(s, n, "addcmul"))
		return "optimizer";
	for (size_t i = 0; i < sizeof(gemm) / sizeof(*gemm); i++)
		if (starts(s, n, gemm[i]) && (n == strlen(gemm[i]) || !isalpha((unsigned char)s[strlen(gemm[i])])))
			return "gemm";
	for (size_t i = 0; i < sizeof(red) / sizeof(*red); i++)
		if (starts(s, n, red[i]))
			return "reduction";
	return NULL;
}

const char *ts_diff_family(const char *name, size_t n, int kind)
{
	int mc = kind == TS_DIFF_MEMCPY, ms = kind == TS_DIFF_MEMSET;
	enum ts_kclass c = ts_kclass_of(name, n, mc, ms);
	int cpu = kind == TS_DIFF_CPU_OP || kind == TS_DIFF_ANNOTATION;

	if (cpu && (c == TS_KC_OTHER || c == TS_KC_ELEMENTWISE)) {
		const char *f = cpu_family(name, n);
		if (f)
			return f;
	}
	/* the one kernel-family table (diffcompat.h), also the cross-vendor one */
	return ts_diff_family_name(ts_diff_family_of(name, n, mc, ms));
}

/* ------------------------------------------------------------ side */

void ts_diff_side_init(struct ts_diff_side *s)
{
	memset(s, 0, sizeof(*s));
	ts_rank_prof_init(&s->prof);
	ts_intern_init(&s->names);
}

void ts_diff_side_release(struct ts_diff_side *s)
{
	ts_rank_prof_release(&s->prof);
	ts_intern_release(&s->names);
	TS_VEC_RELEASE(s->ops);
	TS_VEC_RELEASE(s->inst);
	memset(s, 0, sizeof(*s));
}

struct evb {
	uint32_t ev;
	int64_t bytes;
};

static int cmp_evb(const void *x, const void *y)
{
	const struct evb *a = x, *b = y;
	return (a->ev > b->ev) - (a->ev < b->ev);
}

static int evb_below(const void *elem, const void *ev)
{
	return ((const struct evb *)elem)->ev < *(const uint32_t *)ev;
}

static int64_t bytes_of(const struct evb *v, size_t n, uint32_t ev)
{
	size_t l = ts_lower_bound(v, n, sizeof(*v), &ev, evb_below);

	return l < n && v[l].ev == ev ? v[l].bytes : -1;
}

static int64_t dtype_size(const char *s)
{
	static const struct { const char *n; int64_t b; } t[] = {
		{ "Float", 4 }, { "float", 4 }, { "BFloat16", 2 }, { "Half", 2 }, { "Double", 8 },
		{ "Long", 8 }, { "Int", 4 }, { "Short", 2 }, { "Byte", 1 }, { "Char", 1 },
		{ "Bool", 1 }, { "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 }
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		if (strcmp(s, t[i].n) == 0)
			return t[i].b;
	return 0;
}

/* NVTX ranges of torch's emit_nvtx carry the op's sequence and id
 * ("aten::to, seq = 47651, op_id = 999879"): the op name is the part
 * before them, so instances of one op share a row. */
static size_t nvtx_op_len(const char *s, size_t n)
{
	for (size_t i = 0; i + 2 < n; i++)
		if (s[i] == ',' && s[i + 1] == ' ' &&
		    (starts(s + i + 2, n - i - 2, "seq = ") || starts(s + i + 2, n - i - 2, "op_id = ")))
			return i;
	return n;
}

/* |ts| and dur within 2^61 ns (73 years), as profile's timed events: their
 * ends and sums of a few stay in int64 */
#define TIME_LIM (INT64_C(1) << 61)

static int timed_x(const struct ts_trace *t, size_t i)
{
	int64_t ts = ts_ev_ts(&t->ev, i), d = ts_ev_dur(&t->ev, i);

	return t->ev.ph[i] == 'X' && d != TS_NONE && d >= 0 && d <= TIME_LIM && ts != TS_NONE &&
	       ts >= -TIME_LIM && ts <= TIME_LIM;
}

static int kind_of(const struct ts_trace *t, size_t i)
{
	switch (t->ev.cat[i]) {
	case TS_CAT_CPU_OP:
	case TS_CAT_RUNTIME:
	case TS_CAT_DRIVER: return TS_DIFF_CPU_OP;
	case TS_CAT_USER_ANNOTATION: return TS_DIFF_ANNOTATION;
	case TS_CAT_KERNEL: return TS_DIFF_KERNEL;
	case TS_CAT_MEMCPY: return TS_DIFF_MEMCPY;
	case TS_CAT_MEMSET: return TS_DIFF_MEMSET;
	default: return -1;
	}
}

/* comparator context: the trace being sorted (one build per thread at a time) */
static _Thread_local const struct ts_trace *cpu_sort_t;

static int cmp_cpu(const void *x, const void *y)
{
	const struct ts_trace *t = cpu_sort_t;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (ts_ev_pid(&t->ev, a) != ts_ev_pid(&t->ev, b))
		return ts_ev_pid(&t->ev, a) < ts_ev_pid(&t->ev, b) ? -1 : 1;
	if (ts_ev_tid(&t->ev, a) != ts_ev_tid(&t->ev, b))
		return ts_ev_tid(&t->ev, a) < ts_ev_tid(&t->ev, b) ? -1 : 1;
	if (ts_ev_ts(&t->ev, a) != ts_ev_ts(&t->ev, b))
		return ts_ev_ts(&t->ev, a) < ts_ev_ts(&t->ev, b) ? -1 : 1;
	if (ts_ev_dur(&t->ev, a) != ts_ev_dur(&t->ev, b))
		return ts_ev_dur(&t->ev, a) > ts_ev_dur(&t->ev, b) ? -1 : 1;
	return (a > b) - (a < b);
}

void ts_diff_context_env(struct ts_diff_context *c, const struct ts_trace *t)
{
	const char *dev = NULL;
	enum ts_rank_dev_source src;
	int k = ts_trace_rank_device(t, &src);

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", t->path);
	c->rank = t->meta.rank;
	c->world_size = t->meta.world_size;
	c->vendor = ts_vendor_name(t->meta.vendor);
	c->device_assumed = src == TS_RANK_DEV_ASSUMED;
	c->devices_listed = (int)t->meta.ndevices;
	if (src == TS_RANK_DEV_EVENTS || src == TS_RANK_DEV_LOCAL_RANK) {
		dev = ts_trace_str(t, t->meta.devices[k].name);
	} else {
		for (size_t i = 0; i < t->meta.ndevices && !dev; i++) {
			const char *n = ts_trace_str(t, t->meta.devices[i].name);
			if (*n) {
				dev = n;
				k = (int)i;
			}
		}
	}
	if (k >= 0 && t->meta.devices[k].num_sms > 0)
		c->sms = t->meta.devices[k].num_sms;
	c->device_known = dev && *dev;
	snprintf(c->device, sizeof(c->device), "%s", c->device_known ? dev : "");
	snprintf(c->format, sizeof(c->format), "%s",
		 t->meta.nsys ? "nsys-sqlite" : t->meta.legacy ? "legacy-array" : "kineto");
	snprintf(c->profiler, sizeof(c->profiler), "%s",
		 t->meta.profiler_version != TS_NO_ID ? ts_trace_str(t, t->meta.profiler_version) : "");
	snprintf(c->backend, sizeof(c->backend), "%s",
		 t->meta.backend != TS_NO_ID ? ts_trace_str(t, t->meta.backend) : "");
	snprintf(c->runtime, sizeof(c->runtime), "%s",
		 t->meta.runtime_version != TS_NO_ID ? ts_trace_str(t, t->meta.runtime_version) : "");
	snprintf(c->driver, sizeof(c->driver), "%s",
		 t->meta.driver_version != TS_NO_ID ? ts_trace_str(t, t->meta.driver_version) : "");
	snprintf(c->nccl, sizeof(c->nccl), "%s",
		 t->meta.nccl_version != TS_NO_ID ? ts_trace_str(t, t->meta.nccl_version) : "");
}

static void fill_context(struct ts_diff_side *s, const struct ts_trace *t)
{
	struct ts_diff_context *c = &s->ctx;

	ts_diff_context_env(c, t);
	c->has_gpu = s->prof.has_gpu;
	/* no model in the metadata: the one the profile found, else the
	 * vendor's name (a model not known) or "cpu" */
	if (!c->device_known) {
		snprintf(c->device, sizeof(c->device), "%s",
			 s->prof.device[0] ? s->prof.device : (s->prof.has_gpu ? c->vendor : "cpu"));
		c->device_known = s->prof.device[0] || !s->prof.has_gpu;
	}
	c->clock_ns = ts_trace_clock_resolution_ns(t);
	c->truncated = t->meta.truncated;
	c->steps_dropped = s->prof.steps_dropped;
	c->recovered = t->meta.recovered;
}

int ts_diff_side_build(struct ts_diff_side *s, const struct ts_trace *t, struct ts_err *err)
{
	TS_VEC(struct evb) sizes = { 0 };
	TS_VEC(uint32_t) cpu = { 0 };
	TS_VEC(int64_t) byname = { 0 };
	int64_t *self = NULL, *opmap = NULL;
	uint32_t *stack = NULL;
	int64_t main_pid = TS_NONE, main_tid = TS_NONE;
	int64_t prec_bf16 = 0, prec_fp16 = 0;
	int rc;

	if ((rc = ts_rank_profile(&s->prof, t, NULL, err)))
		return rc;
	fill_context(s, t);
	if (!s->prof.steps.n) {
		/* no steps (nsys without a step range, custom loops): the whole
		 * window is one step, with the window's walls */
		struct ts_step_prof w;
		const struct ts_rank_prof *p = &s->prof;
		memset(&w, 0, sizeof(w));
		w.step = TS_NONE;
		w.start_ns = p->t0_ns;
		w.dur_ns = p->window_ns;
		w.compute_ns = p->compute_ns;
		w.exposed_comm_ns = p->exposed_comm_ns;
		w.exposed_memcpy_ns = p->exposed_memcpy_ns;
		w.exposed_memset_ns = p->exposed_memset_ns;
		w.idle_ns = p->idle_ns;
		w.data_ns = p->data_ns;
		w.gap_ns = p->host_gap_ns;
		w.idle_part_data_ns = p->idle_part_data_ns;
		w.idle_part_gap_ns = p->idle_part_gap_ns;
		w.fwd_ns = w.bwd_ns = w.opt_ns = -1;
		if (p->window_ns <= 0)
			return ts_err_set(err, TS_EUNSUPPORTED, "%s: no steps and no timed window to compare",
					  t->path);
		if (TS_VEC_PUSH(s->prof.steps, w))
			goto nomem;
		s->ctx.whole_window = 1;
	}
	/* sizes of copies (bytes) and collectives (input elements x dtype) */
	for (size_t i = 0; i < t->xfer.n; i++)
		if (t->xfer.v[i].bytes >= 0 && TS_VEC_PUSH(sizes, ((struct evb){ t->xfer.v[i].ev,
										 t->xfer.v[i].bytes })))
			goto nomem;
	for (size_t i = 0; i < t->coll.n; i++) {
		const struct ts_trace_coll *c = &t->coll.v[i];
		int64_t b = dtype_size(ts_trace_str(t, c->dtype));
		if (b > 0 && c->in_nelems > 0 && c->in_nelems < INT64_MAX / 8 &&
		    TS_VEC_PUSH(sizes, ((struct evb){ c->ev, c->in_nelems * b })))
			goto nomem;
	}
	if (sizes.n)
		ts_sort(sizes.v, sizes.n, sizeof(*sizes.v), cmp_evb);
	/* the main thread: where the ProfilerStep spans are */
	for (size_t i = 0; i < t->ev.n; i++) {
		int k = kind_of(t, i);
		if ((k == TS_DIFF_CPU_OP || k == TS_DIFF_ANNOTATION) && timed_x(t, i)) {
			const char *nm = ts_trace_str(t, t->ev.name[i]);
			if (main_pid == TS_NONE && strncmp(nm, "ProfilerStep#", 13) == 0) {
				main_pid = ts_ev_pid(&t->ev, i);
				main_tid = ts_ev_tid(&t->ev, i);
			}
			if (TS_VEC_PUSH(cpu, (uint32_t)i))
				goto nomem;
		}
	}
	/* CPU self time: duration minus direct children on the same thread */
	cpu_sort_t = t;
	if (cpu.n)
		ts_sort(cpu.v, cpu.n, sizeof(*cpu.v), cmp_cpu);
	if (main_pid == TS_NONE) {
		/* no ProfilerStep: trace's rule, the thread with most cpu_op time */
		int64_t best = -1, run = 0;
		for (size_t k = 0; k < cpu.n; k++) {
			uint32_t e = cpu.v[k];
			if (k && (ts_ev_pid(&t->ev, e) != ts_ev_pid(&t->ev, cpu.v[k - 1]) ||
				  ts_ev_tid(&t->ev, e) != ts_ev_tid(&t->ev, cpu.v[k - 1])))
				run = 0;
			if (t->ev.cat[e] == TS_CAT_CPU_OP &&
			    __builtin_add_overflow(run, ts_ev_dur(&t->ev, e), &run))
				run = INT64_MAX;
			if (run > best) {
				best = run;
				main_pid = ts_ev_pid(&t->ev, e);
				main_tid = ts_ev_tid(&t->ev, e);
			}
		}
	}
	self = malloc((cpu.n + 1) * sizeof(*self));
	stack = malloc((cpu.n + 1) * sizeof(*stack));
	opmap = malloc(((size_t)t->strings.count * TS_DIFF_KIND_COUNT + 1) * sizeof(*opmap));
	if (!self || !stack || !opmap)
		goto nomem;
	for (size_t i = 0; i < (size_t)t->strings.count * TS_DIFF_KIND_COUNT; i++)
		opmap[i] = -1;
	{
		size_t sp = 0;
		for (size_t k = 0; k < cpu.n; k++) {
			uint32_t e = cpu.v[k];
			int64_t s0 = ts_ev_ts(&t->ev, e), e0 = s0 + ts_ev_dur(&t->ev, e);
			self[k] = ts_ev_dur(&t->ev, e);
			while (sp) {
				uint32_t top = cpu.v[stack[sp - 1]];
				if (ts_ev_pid(&t->ev, top) != ts_ev_pid(&t->ev, e) || ts_ev_tid(&t->ev, top) != ts_ev_tid(&t->ev, e) ||
				    ts_ev_ts(&t->ev, top) + ts_ev_dur(&t->ev, top) <= s0)
					sp--;
				else
					break;
			}
			if (sp) {
				uint32_t pk = stack[sp - 1];
				uint32_t par = cpu.v[pk];
				int64_t pe = ts_ev_ts(&t->ev, par) + ts_ev_dur(&t->ev, par);
				self[pk] -= (e0 < pe ? e0 : pe) - s0;
			}
			stack[sp++] = (uint32_t)k;
		}
	}
	/* one record per instance in a step: CPU ones in thread order, then GPU */
	for (size_t pass = 0; pass < 2; pass++) {
		size_t n = pass == 0 ? cpu.n : t->ev.n;
		for (size_t k = 0; k < n; k++) {
			size_t i = pass == 0 ? cpu.v[k] : k;
			int kind = kind_of(t, i);
			uint32_t nid = t->ev.name[i];
			const char *nm;
			size_t nl;
			int32_t st;
			struct ts_diff_inst in;
			if (pass == 1 && (kind < TS_DIFF_KERNEL || !timed_x(t, i)))
				continue;
			if (nid >= t->strings.count)
				continue;
			nm = ts_intern_str(&t->strings, nid);
			nl = ts_intern_len(&t->strings, nid);
			if (kind == TS_DIFF_ANNOTATION)
				nl = nvtx_op_len(nm, nl);
			if (pass == 0 && strncmp(nm, "ProfilerStep#", 13) == 0)
				continue;
			st = ts_rank_prof_step_at(&s->prof, ts_ev_ts(&t->ev, i));
			if (st < 0)
				continue;
			if (ts_name_contains(nm, nl, "bf16") || ts_name_contains(nm, nl, "bfloat16"))
				prec_bf16++;
			else if (ts_name_contains(nm, nl, "fp16") || ts_name_contains(nm, nl, "half"))
				prec_fp16++;
			if (opmap[(size_t)nid * TS_DIFF_KIND_COUNT + (size_t)kind] < 0) {
				struct ts_diff_op op;
				int64_t id = ts_intern(&s->names, nm, nl);
				size_t slot;
				if (id < 0)
					goto nomem;
				/* one op per (name, kind): trace names that shorten to
				 * the same op name share it */
				slot = (size_t)id * TS_DIFF_KIND_COUNT + (size_t)kind;
				while (byname.n <= slot)
					if (TS_VEC_PUSH(byname, -1))
						goto nomem;
				if (byname.v[slot] < 0) {
					op.name = (uint32_t)id;
					op.kind = (uint8_t)kind;
					op.family = ts_diff_family(nm, nl, kind);
					byname.v[slot] = (int64_t)s->ops.n;
					if (TS_VEC_PUSH(s->ops, op))
						goto nomem;
				}
				opmap[(size_t)nid * TS_DIFF_KIND_COUNT + (size_t)kind] = byname.v[slot];
			}
			in.op = (uint32_t)opmap[(size_t)nid * TS_DIFF_KIND_COUNT + (size_t)kind];
			in.step = st;
			in.dur_ns = ts_ev_dur(&t->ev, i);
			in.self_ns = pass == 0 ? self[k] : ts_ev_dur(&t->ev, i);
			in.bytes = sizes.n ? bytes_of(sizes.v, sizes.n, (uint32_t)i) : -1;
			in.main_thread = pass == 0 && ts_ev_pid(&t->ev, i) == main_pid && ts_ev_tid(&t->ev, i) == main_tid;
			if (TS_VEC_PUSH(s->inst, in))
				goto nomem;
		}
	}
	snprintf(s->ctx.precision, sizeof(s->ctx.precision), "%s",
		 prec_bf16 > prec_fp16 ? "bf16" : prec_fp16 ? "fp16" : "fp32/unknown");
	rc = 0;
	goto out;
nomem:
	rc = ts_err_set(err, TS_ENOMEM, "out of memory building the diff of %s", t->path);
out:
	free(self);
	free(stack);
	free(opmap);
	TS_VEC_RELEASE(cpu);
	TS_VEC_RELEASE(byname);
	TS_VEC_RELEASE(sizes);
	return rc;
}
