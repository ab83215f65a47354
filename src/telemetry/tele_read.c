/*
 * tele_read.c - readers for other tools' telemetry captures.
 *
 * Every capture format people paste or log is a text table of some kind
 * (dmon, --query-gpu CSV, dcgmi, mthreads-gmi) or a JSON document (gmi
 * --json, our own JSONL). Each reader walks the lines once, maps the
 * tool's column names to the model's fields, and keeps the difference
 * between "no value this tick" (N/A) and "the device cannot give this"
 * (`-`, [Not Supported]) that other tools collapse into 0.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/lineprefix.h"
#include "trainscope/telemetry.h"
#include "tele_internal.h"

#define TELE_MAX_INPUT ((size_t)1 << 30)
#define MAX_COLS 64

struct view { const char *s; size_t n; };
#define VLIT(lit) ((struct view){ (lit), sizeof(lit) - 1 })

struct rd {
	struct ts_telemetry *t;
	const char *name;
	const char *base;      /* the buffer */
	const char *p, *end;   /* cursor over the buffer */
	const char *lstart;    /* start of the last line returned */
	int64_t line;          /* of the last line returned */
	int unterminated;      /* the last line returned has no line end: the
				* capture ends inside it (its last number may
				* be the head of a longer one) */
	uint32_t gpu_base;     /* first GPU index of this file */
	struct ts_err *err;
	int tasks;             /* a launcher prefix was seen: its number is task */
	int64_t task;
	int64_t line_task;     /* the last line's launcher task, -1 none */
	int many_tasks;        /* lines of several tasks belong together (a
				* training log's straggler lines; sniffing) */
	int local_time;        /* a time was read from a stamp without a zone */
	const char *host;      /* the host the capture records (arena), or NULL */
	int64_t other_task;    /* a second task's number, and its first line */
	int64_t other_line;
	/* cells of numeric fields not taken as they stand, noted once per
	 * capture and kind (cell_notes): the count and the first one */
	struct cell_kind {
		size_t n;
		int64_t line;
		char col[48], cell[48], why[96];
	} ck[3];
	/* the GPUs of this file by id (gpu_for): open addressing, a slot
	 * holds a GPU index + 1, 0 when empty; nslot a power of two or 0 */
	uint32_t *slot;
	size_t nslot, nin;
	/* each GPU's last sampling round + 1 (next_tick), by index - gpu_base */
	uint32_t *last_tick;
	size_t nlast;
};

enum { CK_BAD, CK_RANGE, CK_UNIT };

/*
 * The next line as the tool printed it: a log collector's timestamp and a
 * launcher's prefix (srun -l's "3: " with its blank, torchrun's, mpirun's)
 * are taken off (line_task keeps the task's number). A tool's capture is
 * one task's: unless many_tasks, a line of another task ends the reading
 * there (other_line; ts_tele_read_mem says so), since both tasks' GPU 0
 * would read as one GPU.
 */
static int next_line(struct rd *r, struct view *l)
{
	const char *nl;
	size_t k;
	int64_t task;

	if (r->p >= r->end)
		return 0;
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	l->s = r->p;
	r->lstart = r->p;
	l->n = nl ? (size_t)(nl - r->p) : (size_t)(r->end - r->p);
	r->p = nl ? nl + 1 : r->end;
	r->unterminated = !nl;
	if (l->n && l->s[l->n - 1] == '\r')
		l->n--;
	r->line++;
	k = ts_collector_stamp(l->s, l->n);
	l->s += k;
	l->n -= k;
	r->line_task = -1;
	if ((k = ts_launcher_prefix(l->s, l->n, &task))) {
		r->line_task = task;
		if (!r->tasks) {
			r->tasks = 1;
			r->task = task;
		} else if (task != r->task && !r->many_tasks) {
			r->other_task = task;
			r->other_line = r->line;
			r->p = r->end;
			return 0;
		}
		if (l->s[0] != '[' && k < l->n && l->s[k] == ' ')   /* srun's blank */
			k++;
		l->s += k;
		l->n -= k;
	}
	return 1;
}

static int is_last_line(const struct rd *r)
{
	const char *q = r->p;

	while (q < r->end && isspace((unsigned char)*q))
		q++;
	return q >= r->end;
}

/* The capture's last row is cut: it has k of the want cells, or all of
 * them and no line end (its last number may be cut short). Left out. */
static void cut_row(struct rd *r, const char *what, int k, int want, const char *cells)
{
	if (k != want)
		ts_tele_note(r->t, "truncated", r->line, "the last %s has %d of %d %s (cut): left out",
			     what, k, want, cells);
	else
		ts_tele_note(r->t, "truncated", r->line, "the last %s has no line end (the capture "
			     "is cut inside it, perhaps inside its last number): left out", what);
}

static struct view trim(struct view v)
{
	while (v.n && isspace((unsigned char)v.s[0])) {
		v.s++;
		v.n--;
	}
	while (v.n && isspace((unsigned char)v.s[v.n - 1]))
		v.n--;
	return v;
}

static int veq(struct view v, const char *lit)
{
	size_t n = strlen(lit);

	return v.n == n && memcmp(v.s, lit, n) == 0;
}

static int vhas(struct view v, const char *lit)
{
	size_t n = strlen(lit);

	if (n > v.n)
		return 0;
	for (size_t i = 0; i + n <= v.n; i++)
		if (memcmp(v.s + i, lit, n) == 0)
			return 1;
	return 0;
}

static int vprefix(struct view v, const char *lit)
{
	size_t n = strlen(lit);

	return v.n >= n && memcmp(v.s, lit, n) == 0;
}

/* Split on runs of white space; returns the count (at most max). */
static int split_ws(struct view l, struct view *out, int max)
{
	int k = 0;
	size_t i = 0;

	while (i < l.n && k < max) {
		while (i < l.n && isspace((unsigned char)l.s[i]))
			i++;
		if (i >= l.n)
			break;
		size_t b = i;
		while (i < l.n && !isspace((unsigned char)l.s[i]))
			i++;
		out[k].s = l.s + b;
		out[k].n = i - b;
		k++;
	}
	return k;
}

/* Split on commas, trimming each cell. */
static int split_csv(struct view l, struct view *out, int max)
{
	int k = 0;
	size_t b = 0;

	for (size_t i = 0; i <= l.n && k < max; i++)
		if (i == l.n || l.s[i] == ',') {
			struct view c = { l.s + b, i - b };
			out[k++] = trim(c);
			b = i + 1;
		}
	return k;
}

/*
 * A cell: a number with an optional unit suffix ("176.98", "0 %", "44302MiB",
 * "65C", "96.66W"), a placeholder, or text. Returns the state; *v is set for
 * a value, *unit to its suffix (empty when none). Text is TS_TV_ABSENT.
 */
static int cell_parse(struct view c, double *v, struct view *unit)
{
	size_t i = 0, b;

	c = trim(c);
	unit->s = c.s;
	unit->n = 0;
	if (!c.n || veq(c, "N/A") || veq(c, "[N/A]") || veq(c, "N/W") || veq(c, "n/a"))
		return TS_TV_MISSING;
	if (veq(c, "-") || veq(c, "[Not Supported]") || veq(c, "Not Supported") ||
	    veq(c, "[Unknown Error]"))
		return TS_TV_UNSUPPORTED;
	if (c.n > 2 && c.s[0] == '0' && (c.s[1] == 'x' || c.s[1] == 'X')) {
		uint64_t x = 0;
		for (i = 2; i < c.n && isxdigit((unsigned char)c.s[i]); i++)
			x = x * 16 + (uint64_t)(isdigit((unsigned char)c.s[i]) ? c.s[i] - '0' :
						 (tolower((unsigned char)c.s[i]) - 'a' + 10));
		if (i != c.n || i == 2)
			return TS_TV_ABSENT;
		*v = (double)x;
		return TS_TV_VALUE;
	}
	b = 0;
	if (i < c.n && (c.s[i] == '-' || c.s[i] == '+'))
		i++;
	if (c.s[0] == '+')
		b = 1;
	size_t digits = 0;
	while (i < c.n && isdigit((unsigned char)c.s[i])) {
		i++;
		digits++;
	}
	if (i < c.n && c.s[i] == '.') {
		i++;
		while (i < c.n && isdigit((unsigned char)c.s[i])) {
			i++;
			digits++;
		}
	}
	if (!digits)
		return TS_TV_ABSENT;
	if (ts_num_f64(c.s + b, i - b, v))
		return TS_TV_ABSENT;
	/* what follows must be a unit, not more text */
	while (i < c.n && c.s[i] == ' ')
		i++;
	if (i < c.n && !(isalpha((unsigned char)c.s[i]) || c.s[i] == '%'))
		return TS_TV_ABSENT;
	unit->s = c.s + i;
	unit->n = c.n - i;
	for (; i < c.n; i++)
		if (!(isalpha((unsigned char)c.s[i]) || c.s[i] == '%' || c.s[i] == '/'))
			return TS_TV_ABSENT;
	return TS_TV_VALUE;
}

static int cell_value(struct view c, double *v)
{
	struct view unit;

	return cell_parse(c, v, &unit);
}

/*
 * The factor that takes a value printed in unit u to field f's unit
 * (ts_tf_unit): 1 for no suffix or the field's own, 1000 for GHz on a MHz
 * field, ...; 0 for a unit the field cannot be in. nvidia-smi's "MB" of
 * memory is MiB (dmon's fb column).
 */
struct unit_k { const char *u; double k; };

static double unit_factor(int f, struct view u)
{
	static const struct unit_k power[] = {
		{ "W", 1 }, { "mW", 1e-3 }, { "kW", 1e3 }, { NULL, 0 } },
	energy[] = { { "J", 1 }, { "mJ", 1e-3 }, { "kJ", 1e3 }, { NULL, 0 } },
	pct[] = { { "%", 1 }, { NULL, 0 } },
	temp[] = { { "C", 1 }, { NULL, 0 } },
	clock[] = { { "MHz", 1 }, { "GHz", 1e3 }, { "kHz", 1e-3 }, { "Hz", 1e-6 }, { NULL, 0 } },
	mem[] = { { "MiB", 1 }, { "MB", 1 }, { "GiB", 1024 }, { "KiB", 1.0 / 1024 },
		  { "TiB", 1048576 }, { NULL, 0 } },
	rate[] = { { "MB/s", 1 }, { "KB/s", 1e-3 }, { "kB/s", 1e-3 }, { "GB/s", 1e3 }, { NULL, 0 } },
	lanes[] = { { "x", 1 }, { NULL, 0 } },
	none[] = { { NULL, 0 } };
	const struct unit_k *m;

	if (!u.n)
		return 1;
	switch (f) {
	case TS_TF_POWER_W: case TS_TF_POWER_LIMIT_W: m = power; break;
	case TS_TF_ENERGY_J: m = energy; break;
	case TS_TF_UTIL_PCT: case TS_TF_MEM_UTIL_PCT: case TS_TF_FAN_PCT:
	case TS_TF_POWER_VIOL_PCT: m = pct; break;
	case TS_TF_TEMP_C: case TS_TF_MEM_TEMP_C: m = temp; break;
	case TS_TF_SM_CLOCK_MHZ: case TS_TF_SM_CLOCK_MAX_MHZ: case TS_TF_MEM_CLOCK_MHZ:
		m = clock; break;
	case TS_TF_MEM_USED_MIB: case TS_TF_MEM_TOTAL_MIB: m = mem; break;
	case TS_TF_PCIE_RX_MBPS: case TS_TF_PCIE_TX_MBPS: m = rate; break;
	case TS_TF_PCIE_WIDTH: case TS_TF_PCIE_WIDTH_MAX: m = lanes; break;
	default: m = none; break;
	}
	for (; m->u; m++)
		if (veq(u, m->u))
			return m->k;
	return 0;
}

/* Why value v cannot be a reading of field f, or NULL when it can:
 * power, energy, clocks, memory, rates and counts are never negative,
 * utilisation and the power-violation share are 0-100 %. */
static const char *out_of_range(int f, double v)
{
	switch (f) {
	case TS_TF_TEMP_C: case TS_TF_MEM_TEMP_C: case TS_TF_EVENT_REASONS:
		return NULL;
	case TS_TF_UTIL_PCT: case TS_TF_MEM_UTIL_PCT: case TS_TF_POWER_VIOL_PCT:
		return v < 0 || v > 100 ? "a share is 0-100 %" : NULL;
	default:
		return v < 0 ? "it cannot be negative" : NULL;
	}
}

/* Count a cell of kind k; the first one's place and words are kept. */
static void cell_kind(struct rd *r, int k, struct view col, struct view cell, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void cell_kind(struct rd *r, int k, struct view col, struct view cell, const char *fmt, ...)
{
	struct cell_kind *c = &r->ck[k];
	va_list ap;

	if (c->n++)
		return;
	c->line = r->line;
	/* a --query-gpu header's " [W]" is the column's unit, not its name */
	for (size_t i = 0; i < col.n; i++)
		if (col.s[i] == ' ' || col.s[i] == '[') {
			col.n = i;
			break;
		}
	snprintf(c->col, sizeof(c->col), "%.*s", (int)(col.n < 40 ? col.n : 40), col.s);
	snprintf(c->cell, sizeof(c->cell), "%.*s", (int)(cell.n < 40 ? cell.n : 40), cell.s);
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

/* A placeholder (st missing or unsupported) in a throttle-reason cell:
 * the first of its GPU is kept with its column (reasons_cell). */
static void reasons_cell(struct rd *r, const struct ts_tele_sample *s, int st, struct view col,
			 struct view c)
{
	struct ts_tele_gpu *gp = &r->t->gpus.v[s->gpu];
	char buf[160];

	if (gp->reasons_cell || !c.n || (st != TS_TV_MISSING && st != TS_TV_UNSUPPORTED))
		return;
	col = trim(col);
	snprintf(buf, sizeof(buf), "%.*s is '%.*s'", (int)(col.n < 80 ? col.n : 80), col.s,
		 (int)(c.n < 40 ? c.n : 40), c.s);
	gp->reasons_cell = ts_arena_strndup(&r->t->arena, buf, strlen(buf));
}

/*
 * Cell c of column col into field f of s. A value in another unit than
 * the field's is converted (unit_factor); text, a unit the field cannot
 * be in and a value out of the field's range are left out as missing and
 * counted (cell_notes). Placeholders keep their state.
 */
static void put(struct rd *r, struct ts_tele_sample *s, int f, struct view c, struct view col)
{
	double v = NAN, k;
	struct view unit;
	int st;
	const char *why;

	if (f < 0)
		return;
	c = trim(c);
	st = cell_parse(c, &v, &unit);
	if (st == TS_TV_ABSENT) {
		cell_kind(r, CK_BAD, col, c, "not a number");
		st = TS_TV_MISSING;
	} else if (st == TS_TV_VALUE && (k = unit_factor(f, unit)) == 0) {
		cell_kind(r, CK_BAD, col, c, "'%.*s' is no unit of %s (%s)", (int)(unit.n < 16 ? unit.n : 16),
			  unit.s, ts_tf_name(f), ts_tf_unit(f));
		st = TS_TV_MISSING;
	} else if (st == TS_TV_VALUE) {
		if (k != 1) {
			v *= k;
			cell_kind(r, CK_UNIT, col, c, "read as %g %s", v, ts_tf_unit(f));
		}
		if ((why = out_of_range(f, v))) {
			cell_kind(r, CK_RANGE, col, c, "%s", why);
			st = TS_TV_MISSING;
		}
	}
	s->st[f] = (unsigned char)st;
	s->v[f] = st == TS_TV_VALUE ? v : NAN;
	if (f == TS_TF_EVENT_REASONS || f == TS_TF_POWER_VIOL_PCT || f == TS_TF_THERMAL_VIOL)
		reasons_cell(r, s, st, col, c);
}

/* One note per kind of cell put() did not take as it stands. */
static void cell_notes(struct rd *r)
{
	static const struct { const char *code, *what; } kinds[] = {
		[CK_BAD] = { "bad-cell", "cell(s) of numeric columns that are no number in the "
			     "column's unit: left out as missing" },
		[CK_RANGE] = { "out-of-range", "value(s) outside their field's range: left out as "
			       "missing" },
		[CK_UNIT] = { "unit-converted", "cell(s) in another unit than their column's: "
			      "converted" },
	};

	for (int k = 0; k < 3; k++) {
		const struct cell_kind *c = &r->ck[k];

		/* the note's line is the first cell's */
		if (c->n)
			ts_tele_note(r->t, kinds[k].code, c->line, "%zu %s (first: column '%s', "
				     "'%s': %s)", c->n, kinds[k].what, c->col, c->cell, c->why);
	}
}

/* A per-reason cell: "Active" sets the reason's bit in the sample's event
 * reasons, "Not Active" makes them known without it; a bitmask field of
 * the same row is kept and added to. A placeholder ([N/A], [Not
 * Supported]) makes them missing or unsupported unless known (and is kept
 * by reasons_cell); other cells say nothing. */
static void put_reason(struct rd *r, struct ts_tele_sample *s, unsigned bit, struct view c,
		       struct view col)
{
	int active = veq(c, "Active"), st;
	double v;
	struct view unit;

	if (!active && !veq(c, "Not Active")) {
		st = cell_parse(c, &v, &unit);
		if (st != TS_TV_MISSING && st != TS_TV_UNSUPPORTED)
			return;
		if (s->st[TS_TF_EVENT_REASONS] != TS_TV_VALUE) {
			s->st[TS_TF_EVENT_REASONS] = (unsigned char)st;
			s->v[TS_TF_EVENT_REASONS] = NAN;
		}
		reasons_cell(r, s, st, col, c);
		return;
	}
	if (s->st[TS_TF_EVENT_REASONS] != TS_TV_VALUE) {
		s->st[TS_TF_EVENT_REASONS] = TS_TV_VALUE;
		s->v[TS_TF_EVENT_REASONS] = 0;
	}
	if (active)
		s->v[TS_TF_EVENT_REASONS] = (double)((uint64_t)s->v[TS_TF_EVENT_REASONS] | bit);
}

static char *vdup(struct rd *r, struct view v)
{
	return ts_arena_strndup(&r->t->arena, v.s, v.n);
}

static int oom(struct rd *r)
{
	return ts_err_at(r->err, TS_ENOMEM, r->name, -1, r->line, "out of memory");
}

static int bad(struct rd *r, const char *what)
{
	int64_t off = r->lstart && r->base ? (int64_t)(r->lstart - r->base) : 0;
	return ts_err_at(r->err, TS_EPARSE, r->name, off, r->line > 0 ? r->line : 1, "%s", what);
}

static size_t id_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* Put GPU g into r's id table (grown to twice its entries). Returns 0 or
 * TS_ENOMEM. */
static int id_put(struct rd *r, size_t g)
{
	const char *id = r->t->gpus.v[g].id;

	if (2 * (r->nin + 1) > r->nslot) {
		size_t n = r->nslot ? 2 * r->nslot : 64;
		uint32_t *v = calloc(n, sizeof(*v)), *old = r->slot;
		if (!v)
			return TS_ENOMEM;
		for (size_t i = 0; i < r->nslot; i++)
			if (old[i]) {
				const char *o = r->t->gpus.v[old[i] - 1].id;
				size_t k = id_hash(o, strlen(o)) & (n - 1);
				while (v[k])
					k = (k + 1) & (n - 1);
				v[k] = old[i];
			}
		free(old);
		r->slot = v;
		r->nslot = n;
	}
	size_t k = id_hash(id, strlen(id)) & (r->nslot - 1);
	while (r->slot[k])
		k = (k + 1) & (r->nslot - 1);
	r->slot[k] = (uint32_t)g + 1;
	r->nin++;
	return 0;
}

/* GPU by its id within this file, added when new: one lookup in r's id
 * table per row, so a round of G GPUs costs G, not G^2. Every GPU of the
 * file is added here and tabled at once, so an id the table lacks is new
 * (before 5 Dec 2026 a miss also scanned the file's GPUs: each new GPU
 * cost the GPUs before it). The id is kept whole: a dcgm-exporter file of
 * several hosts names its GPUs HOST/GPU, and a long host name cut to a
 * shorter id matched no later row (each scrape was a new GPU). */
static int gpu_for(struct rd *r, struct view id, struct view name)
{
	struct ts_telemetry *t = r->t;
	char nb[160];
	const char *idz;
	int g;

	for (size_t k = r->nslot ? id_hash(id.s, id.n) & (r->nslot - 1) : 0; r->nslot && r->slot[k];
	     k = (k + 1) & (r->nslot - 1)) {
		const char *o = t->gpus.v[r->slot[k] - 1].id;
		if (strlen(o) == id.n && !memcmp(o, id.s, id.n))
			return (int)r->slot[k] - 1;
	}
	if (!(idz = ts_arena_strndup(&t->arena, id.s, id.n)))
		return -1;
	snprintf(nb, sizeof(nb), "%.*s", (int)(name.n < 150 ? name.n : 150), name.s);
	g = ts_tele_add_gpu(t, idz, name.n ? nb : NULL);
	return g < 0 || id_put(r, (size_t)g) ? -1 : g;
}

/* The sampling round of a row of GPU g, tick the current round: the next
 * round when g already has a row in this one (rows of one round name each
 * GPU once). Returns 0 or TS_ENOMEM. */
static int next_tick(struct rd *r, int g, uint32_t *tick)
{
	size_t i = (size_t)g - r->gpu_base;

	if (i >= r->nlast) {
		size_t n = r->nlast ? 2 * r->nlast : 64;
		while (n <= i)
			n *= 2;
		uint32_t *v = realloc(r->last_tick, n * sizeof(*v));
		if (!v)
			return TS_ENOMEM;
		memset(v + r->nlast, 0, (n - r->nlast) * sizeof(*v));
		r->last_tick = v;
		r->nlast = n;
	}
	if (r->last_tick[i] == *tick + 1)
		(*tick)++;
	r->last_tick[i] = *tick + 1;
	return 0;
}

/* ts_civil_ns's out-of-range INT64_MIN is TS_NO_TIME */
_Static_assert(TS_NO_TIME == INT64_MIN, "TS_NO_TIME is ts_civil_ns's out-of-range value");

/* A capture's time cell (ts_stamp_parse: "2026/01/06 15:13:03.389",
 * "2024-03-14 23:07:56", "20240314 23:07:56", ISO 8601 with a zone), UTC
 * when a zone is written; a time without one sets r->local_time (it is the
 * capturing machine's local time, read as UTC). */
static int64_t parse_stamp(struct rd *r, struct view c)
{
	int64_t t;
	int zoned;

	c = trim(c);
	if (!ts_stamp_parse(c.s, c.n, &t, &zoned))
		return TS_NO_TIME;
	if (!zoned)
		r->local_time = 1;
	return t;
}

/* "Tue Nov 12 20:55:00 2024" (ctime form, local time: sets r->local_time). */
static int64_t parse_ctime(struct rd *r, struct view c)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	char buf[48], mon[4], wd[4];
	int d, h, mi, s, y;

	c = trim(c);
	if (c.n >= sizeof(buf))
		return TS_NO_TIME;
	memcpy(buf, c.s, c.n);
	buf[c.n] = 0;
	if (sscanf(buf, "%3s %3s %d %d:%d:%d %d", wd, mon, &d, &h, &mi, &s, &y) != 7)
		return TS_NO_TIME;
	const char *m = strstr(months, mon);
	if (!m || (m - months) % 3)
		return TS_NO_TIME;
	r->local_time = 1;
	return ts_civil_ns(y, (int)(m - months) / 3 + 1, d, h, mi, s);
}

enum { Q_NONE = -1, Q_INDEX = -2, Q_NAME = -3, Q_UUID = -4, Q_BUS = -5,
	Q_DRIVER = -6, Q_STAMP = -7, Q_GRCLK = -8, Q_GRMAX = -9, Q_REASON = -10 };

/* The NVML clock event reason bit (telemetry.h) of a per-reason field,
 * "clocks_event_reasons.sw_power_cap" (older nvidia-smi: "clocks_throttle_
 * reasons."), whose cells say "Active" or "Not Active"; 0 for any other. */
static unsigned reason_bit(struct view name)
{
	static const struct { const char *n; unsigned bit; } map[] = {
		{ "gpu_idle", TS_REASON_GPU_IDLE },
		{ "applications_clocks_setting", TS_REASON_APP_CLOCKS },
		{ "sw_power_cap", TS_REASON_SW_POWER_CAP }, { "hw_slowdown", TS_REASON_HW_SLOWDOWN },
		{ "sync_boost", TS_REASON_SYNC_BOOST },
		{ "sw_thermal_slowdown", TS_REASON_SW_THERMAL },
		{ "hw_thermal_slowdown", TS_REASON_HW_THERMAL },
		{ "hw_power_brake_slowdown", TS_REASON_HW_POWER_BRAKE },
		{ "display_clock_setting", TS_REASON_DISPLAY_CLOCK },
	};
	static const char *const prefix[] = { "clocks_event_reasons.", "clocks_throttle_reasons." };

	for (size_t p = 0; p < 2; p++) {
		size_t k = strlen(prefix[p]);
		if (name.n <= k || memcmp(name.s, prefix[p], k))
			continue;
		struct view rest = { name.s + k, name.n - k };
		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (veq(rest, map[i].n))
				return map[i].bit;
	}
	return 0;
}

static int query_field(struct view name)
{
	static const struct { const char *n; int f; } map[] = {
		{ "power.draw", TS_TF_POWER_W }, { "power.draw.average", TS_TF_POWER_W },
		{ "power.draw.instant", TS_TF_POWER_W },
		{ "power.limit", TS_TF_POWER_LIMIT_W },
		{ "enforced.power.limit", TS_TF_POWER_LIMIT_W },
		{ "utilization.gpu", TS_TF_UTIL_PCT }, { "utilization.memory", TS_TF_MEM_UTIL_PCT },
		{ "temperature.gpu", TS_TF_TEMP_C }, { "temperature.memory", TS_TF_MEM_TEMP_C },
		{ "clocks.sm", TS_TF_SM_CLOCK_MHZ }, { "clocks.current.sm", TS_TF_SM_CLOCK_MHZ },
		{ "clocks.max.sm", TS_TF_SM_CLOCK_MAX_MHZ },
		{ "clocks.max.graphics", Q_GRMAX }, { "clocks.max.gr", Q_GRMAX },
		{ "clocks.gr", Q_GRCLK }, { "clocks.current.graphics", Q_GRCLK },
		{ "clocks.mem", TS_TF_MEM_CLOCK_MHZ }, { "clocks.current.memory", TS_TF_MEM_CLOCK_MHZ },
		{ "memory.used", TS_TF_MEM_USED_MIB }, { "memory.total", TS_TF_MEM_TOTAL_MIB },
		{ "fan.speed", TS_TF_FAN_PCT },
		{ "pcie.link.gen.current", TS_TF_PCIE_GEN }, { "pcie.link.gen.gpucurrent", TS_TF_PCIE_GEN },
		{ "pcie.link.gen.max", TS_TF_PCIE_GEN_MAX }, { "pcie.link.gen.gpumax", TS_TF_PCIE_GEN_MAX },
		{ "pcie.link.width.current", TS_TF_PCIE_WIDTH },
		{ "pcie.link.width.max", TS_TF_PCIE_WIDTH_MAX },
		{ "clocks_event_reasons.active", TS_TF_EVENT_REASONS },
		{ "clocks_throttle_reasons.active", TS_TF_EVENT_REASONS },
		{ "index", Q_INDEX }, { "name", Q_NAME }, { "gpu_name", Q_NAME },
		{ "uuid", Q_UUID }, { "gpu_uuid", Q_UUID }, { "pci.bus_id", Q_BUS },
		{ "gpu_bus_id", Q_BUS }, { "driver_version", Q_DRIVER }, { "timestamp", Q_STAMP },
	};
	/* drop a " [unit]" suffix */
	for (size_t i = 0; i < name.n; i++)
		if (name.s[i] == ' ' || name.s[i] == '[') {
			name.n = i;
			break;
		}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (veq(name, map[i].n))
			return map[i].f;
	return reason_bit(name) ? Q_REASON : Q_NONE;
}

static int looks_header(struct view *cells, int k)
{
	int known = 0;

	for (int i = 0; i < k; i++)
		if (query_field(cells[i]) != Q_NONE)
			known++;
	return known >= 1 && known * 2 >= k;
}

/* ------------------------------------------------------ dcgm-exporter */

/* Frame-buffer fields the model has no field for: a sample's total memory
 * is used + free + reserved (MiB, as nvidia-smi's memory.total) when the
 * exporter sends no DCGM_FI_DEV_FB_TOTAL, which its default counters lack. */
enum { EXP_FB_FREE = TS_TF_COUNT, EXP_FB_RESERVED };

/* The model field of a dcgm-exporter metric name (or EXP_FB_*), -1 for
 * another. Energy is mJ since boot (read as J by the caller), profiling
 * fields are 0-1. */
static int exporter_field(struct view name)
{
	static const struct { const char *n; int f; } map[] = {
		{ "DCGM_FI_DEV_POWER_USAGE", TS_TF_POWER_W },
		{ "DCGM_FI_DEV_POWER_MGMT_LIMIT", TS_TF_POWER_LIMIT_W },
		{ "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", TS_TF_ENERGY_J },
		{ "DCGM_FI_DEV_GPU_UTIL", TS_TF_UTIL_PCT },
		{ "DCGM_FI_DEV_MEM_COPY_UTIL", TS_TF_MEM_UTIL_PCT },
		{ "DCGM_FI_DEV_GPU_TEMP", TS_TF_TEMP_C },
		{ "DCGM_FI_DEV_MEMORY_TEMP", TS_TF_MEM_TEMP_C },
		{ "DCGM_FI_DEV_SM_CLOCK", TS_TF_SM_CLOCK_MHZ },
		{ "DCGM_FI_DEV_MEM_CLOCK", TS_TF_MEM_CLOCK_MHZ },
		{ "DCGM_FI_DEV_FB_USED", TS_TF_MEM_USED_MIB },
		{ "DCGM_FI_DEV_FB_TOTAL", TS_TF_MEM_TOTAL_MIB },
		{ "DCGM_FI_DEV_FB_FREE", EXP_FB_FREE },
		{ "DCGM_FI_DEV_FB_RESERVED", EXP_FB_RESERVED },
		{ "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", TS_TF_EVENT_REASONS },
		{ "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", TS_TF_EVENT_REASONS },
		{ "DCGM_FI_DEV_XID_ERRORS", TS_TF_XID },
		{ "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", TS_TF_ECC_SBE },
		{ "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", TS_TF_ECC_DBE },
		{ "DCGM_FI_PROF_GR_ENGINE_ACTIVE", TS_TF_GR_ACTIVE },
		{ "DCGM_FI_PROF_SM_ACTIVE", TS_TF_SM_ACTIVE },
		{ "DCGM_FI_PROF_SM_OCCUPANCY", TS_TF_SM_OCCUPANCY },
		{ "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", TS_TF_TENSOR_ACTIVE },
		{ "DCGM_FI_PROF_DRAM_ACTIVE", TS_TF_DRAM_ACTIVE },
		{ "DCGM_FI_PROF_PIPE_FP64_ACTIVE", TS_TF_FP64_ACTIVE },
		{ "DCGM_FI_PROF_PIPE_FP32_ACTIVE", TS_TF_FP32_ACTIVE },
		{ "DCGM_FI_PROF_PIPE_FP16_ACTIVE", TS_TF_FP16_ACTIVE },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (veq(name, map[i].n))
			return map[i].f;
	return -1;
}

/* One Prometheus sample line, "NAME{k="v",...} VALUE [TIMESTAMP_MS]". */
struct prom_line {
	struct view name, value, stamp;
	struct view gpu, uuid, model, host, bus, driver;
};

/* Split l into pl; 0 when it is no sample line. Label values are views
 * between their quotes (escapes kept as written). */
static int prom_parse(struct view l, struct prom_line *pl)
{
	size_t i = 0;
	struct view rest[3];

	memset(pl, 0, sizeof(*pl));
	while (i < l.n && (isalnum((unsigned char)l.s[i]) || l.s[i] == '_' || l.s[i] == ':'))
		i++;
	if (!i || isdigit((unsigned char)l.s[0]))
		return 0;
	pl->name = (struct view){ l.s, i };
	if (i < l.n && l.s[i] == '{') {
		i++;
		for (;;) {
			while (i < l.n && (l.s[i] == ' ' || l.s[i] == ','))
				i++;
			if (i < l.n && l.s[i] == '}') {
				i++;
				break;
			}
			size_t k0 = i;
			while (i < l.n && (isalnum((unsigned char)l.s[i]) || l.s[i] == '_'))
				i++;
			struct view key = { l.s + k0, i - k0 };
			if (!key.n || i + 1 >= l.n || l.s[i] != '=' || l.s[i + 1] != '"')
				return 0;
			i += 2;
			size_t v0 = i;
			while (i < l.n && l.s[i] != '"')
				i += l.s[i] == '\\' ? 2 : 1;
			if (i >= l.n)
				return 0;
			struct view v = { l.s + v0, i - v0 };
			i++;
			if (veq(key, "gpu"))
				pl->gpu = v;
			else if (veq(key, "UUID"))
				pl->uuid = v;
			else if (veq(key, "modelName"))
				pl->model = v;
			else if (veq(key, "Hostname"))
				pl->host = v;
			else if (veq(key, "pci_bus_id"))
				pl->bus = v;
			else if (veq(key, "DCGM_FI_DRIVER_VERSION"))
				pl->driver = v;
		}
	}
	struct view tail = { l.s + i, l.n - i };
	int k = split_ws(tail, rest, 3);
	if (k < 1 || k > 2 || (i < l.n && l.s[i] != ' ' && l.s[i] != '\t'))
		return 0;
	pl->value = rest[0];
	if (k == 2)
		pl->stamp = rest[1];
	return 1;
}

/* Total memory of exporter sample s from its used and fb[] (free,
 * reserved; NAN unknown, INFINITY unreadable) when it has no FB_TOTAL of
 * its own: used + free (+ reserved when sent). */
static void exporter_fb_total(struct ts_tele_sample *s, const double *fb)
{
	double total;

	if (s->st[TS_TF_MEM_TOTAL_MIB] != TS_TV_ABSENT || s->st[TS_TF_MEM_USED_MIB] != TS_TV_VALUE ||
	    !isfinite(fb[0]) || fb[1] == INFINITY)
		return;
	total = s->v[TS_TF_MEM_USED_MIB] + fb[0] + (isnan(fb[1]) ? 0 : fb[1]);
	if (out_of_range(TS_TF_MEM_TOTAL_MIB, total))
		return;
	s->st[TS_TF_MEM_TOTAL_MIB] = TS_TV_VALUE;
	s->v[TS_TF_MEM_TOTAL_MIB] = total;
}

/*
 * dcgm-exporter's Prometheus text (curl :9400/metrics, appended scrape
 * after scrape): each scrape is a sampling round; a series (metric and
 * GPU) seen again starts the next one. A scrape's time is its lines'
 * timestamps (ms) when the exporter writes them, else a line of its own
 * holding a date and time (`date -u +%FT%T.%3NZ` between the scrapes),
 * else the capture is untimed and says so. The GPU is the `gpu` label,
 * with its host's name first when the file holds several `Hostname`s.
 * One scrape file is one host's unless its labels name several: with one
 * `Hostname`, it is the host of every GPU of the file, labelled or not;
 * with several, a GPU without one is on no host the file tells (a note
 * says how many).
 */
static int read_dcgm_exporter(struct rd *r)
{
	struct view l;
	struct prom_line pl;
	struct rd scan = *r;
	struct view host0 = { NULL, 0 };
	int hosts = 0, timed = 0, any = 0;
	int64_t scrape_t = TS_NO_TIME;
	uint32_t tick = 0;
	/* per GPU of this file: its sample of scrape `tick` - 1 (tick 0: none
	 * yet), with that sample's free and reserved frame buffer (NAN unknown) */
	struct cur_sample { uint32_t tick; size_t idx; double fb[2]; };
	TS_VEC(struct cur_sample) cur = { 0 };
	int rc = 0;

	/* several hosts in one file (a federation dump): GPU ids get the host */
	while (next_line(&scan, &l) && hosts < 2)
		if (prom_parse(trim(l), &pl) && pl.host.n) {
			if (!host0.n)
				host0 = pl.host;
			else if (pl.host.n != host0.n || memcmp(pl.host.s, host0.s, host0.n))
				hosts = 2;
			hosts = hosts ? hosts : 1;
		}
	if (hosts == 1 && !(r->host = vdup(r, host0))) {
		rc = oom(r);
		goto out;
	}
	while (next_line(r, &l)) {
		struct view tl = trim(l);
		char idbuf[160];
		double v;
		int64_t ms;

		if (!tl.n)
			continue;
		if (tl.s[0] == '#') {
			struct view body = trim((struct view){ tl.s + 1, tl.n - 1 });
			int64_t st = parse_stamp(r, body);
			if (st != TS_NO_TIME) {
				scrape_t = st;
				tick += any;
				any = 0;
			}
			continue;
		}
		if (!prom_parse(tl, &pl)) {
			int64_t st = parse_stamp(r, tl);
			if (st != TS_NO_TIME) {
				scrape_t = st;
				tick += any;
				any = 0;
				continue;
			}
			if (is_last_line(r)) {
				ts_tele_note(r->t, "truncated", r->line, "the last line is cut: left out");
				break;
			}
			rc = bad(r, "dcgm-exporter line is not 'METRIC{labels} VALUE [TIMESTAMP]' (Prometheus text)");
			goto out;
		}
		if (r->unterminated && is_last_line(r)) {
			ts_tele_note(r->t, "truncated", r->line, "the last line has no line end (the "
				     "capture is cut inside it, perhaps inside its value): left out");
			break;
		}
		int f = exporter_field(pl.name);
		if (f < 0)
			continue;
		if (!pl.gpu.n) {
			rc = bad(r, "dcgm-exporter series without a gpu label");
			goto out;
		}
		if (hosts > 1 && pl.host.n)
			snprintf(idbuf, sizeof(idbuf), "%.*s/%.*s", (int)(pl.host.n < 100 ? pl.host.n : 100),
				 pl.host.s, (int)(pl.gpu.n < 40 ? pl.gpu.n : 40), pl.gpu.s);
		else
			snprintf(idbuf, sizeof(idbuf), "%.*s", (int)(pl.gpu.n < 40 ? pl.gpu.n : 40), pl.gpu.s);
		int g = gpu_for(r, (struct view){ idbuf, strlen(idbuf) }, pl.model);
		if (g < 0) {
			rc = oom(r);
			goto out;
		}
		struct ts_tele_gpu *gp = &r->t->gpus.v[g];
		if (pl.uuid.n && !gp->uuid)
			gp->uuid = vdup(r, pl.uuid);
		if (pl.bus.n && !gp->bus_id)
			gp->bus_id = vdup(r, pl.bus);
		if (pl.host.n && !gp->host)
			gp->host = vdup(r, pl.host);
		if (pl.driver.n && !r->t->driver_version)
			r->t->driver_version = vdup(r, pl.driver);
		size_t gi = (size_t)g - r->gpu_base;
		struct cur_sample none = { 0, 0, { NAN, NAN } };
		while (cur.n <= gi)
			if (TS_VEC_PUSH(cur, none)) {
				rc = oom(r);
				goto out;
			}
		int64_t t_ns = scrape_t;
		if (pl.stamp.n) {
			if (ts_num_i64(pl.stamp.s, pl.stamp.n, &ms) || ms < 0 || ms > INT64_MAX / 1000000) {
				rc = bad(r, "dcgm-exporter sample with a timestamp that is no count of "
					    "milliseconds since 1970");
				goto out;
			}
			t_ns = ms * 1000000;
		}
		/* a series seen again: the next scrape */
		if (cur.v[gi].tick == tick + 1 &&
		    (f >= TS_TF_COUNT ? !isnan(cur.v[gi].fb[f - EXP_FB_FREE]) :
		     r->t->samples.v[cur.v[gi].idx].st[f] != TS_TV_ABSENT)) {
			tick++;
			any = 0;
		}
		if (cur.v[gi].tick != tick + 1) {
			if (cur.v[gi].tick)
				exporter_fb_total(&r->t->samples.v[cur.v[gi].idx], cur.v[gi].fb);
			if (!ts_tele_add_sample(r->t, (uint32_t)g, tick, t_ns)) {
				rc = oom(r);
				goto out;
			}
			cur.v[gi].tick = tick + 1;
			cur.v[gi].idx = r->t->samples.n - 1;
			cur.v[gi].fb[0] = cur.v[gi].fb[1] = NAN;
		}
		struct ts_tele_sample *s = &r->t->samples.v[cur.v[gi].idx];
		any = 1;
		timed |= s->t_ns != TS_NO_TIME;
		if (f >= TS_TF_COUNT) {
			/* a count of MiB, or unknown (the total stays unknown) */
			if (ts_num_f64(pl.value.s, pl.value.n, &v) || !(v >= 0 && v < 1e12))
				v = INFINITY;
			cur.v[gi].fb[f - EXP_FB_FREE] = v;
			continue;
		}
		if (veq(pl.value, "NaN")) {
			s->st[f] = TS_TV_MISSING;
			continue;
		}
		if (ts_num_f64(pl.value.s, pl.value.n, &v) || !isfinite(v)) {
			cell_kind(r, CK_BAD, pl.name, pl.value, "not a number");
			s->st[f] = TS_TV_MISSING;
			continue;
		}
		if (f == TS_TF_ENERGY_J)
			v /= 1000;  /* mJ */
		const char *why = out_of_range(f, v);
		if (why) {
			cell_kind(r, CK_RANGE, pl.name, pl.value, "%s", why);
			s->st[f] = TS_TV_MISSING;
			continue;
		}
		s->st[f] = TS_TV_VALUE;
		s->v[f] = v;
	}
	for (size_t i = 0; i < cur.n; i++)
		if (cur.v[i].tick)
			exporter_fb_total(&r->t->samples.v[cur.v[i].idx], cur.v[i].fb);
	if (r->t->samples.n == 0 || (size_t)r->gpu_base == r->t->gpus.n) {
		rc = bad(r, "dcgm-exporter capture with no DCGM_FI_ sample of a GPU");
		goto out;
	}
	size_t unlabelled = 0;
	for (size_t g = r->gpu_base; hosts > 1 && g < r->t->gpus.n; g++)
		unlabelled += !r->t->gpus.v[g].host;
	if (unlabelled)
		ts_tele_note(r->t, "host-unknown", -1,
			     "%zu of %zu GPUs have no Hostname label while others name several "
			     "hosts: which host they are on cannot be told, so they are compared "
			     "only with each other", unlabelled, r->t->gpus.n - r->gpu_base);
	if (!timed)
		ts_tele_note(r->t, "untimed", -1,
			     "dcgm-exporter scrapes without timestamps: samples are ordered by scrape "
			     "only (give each scrape's time as a line of its own before it, as "
			     "`date -u +%%FT%%T.%%3NZ` prints it, to join them to steps)");
out:
	TS_VEC_RELEASE(cur);
	return rc;
}

/* ------------------------------------------------------------- sniffing */

int ts_tele_sniff(const char *d, size_t n)
{
	struct view all = { d, n };
	size_t i = 0;

	if (n == 0)
		return TS_TELE_UNKNOWN;   /* nothing (d may be NULL) */
	while (i < n && isspace((unsigned char)d[i]))
		i++;
	if (i < n && d[i] == '{') {
		if (vhas(all, "trainscope.telemetry/"))
			return TS_TELE_OWN;
		if (vhas(all, "\"Attached GPUs\"") ||
		    (vhas(all, "\"Product Name\"") && vhas(all, "\"MTT")))
			return TS_TELE_GMI_JSON;
		return TS_TELE_UNKNOWN;
	}
	/* dmon: a "# gpu" or "#Date ... gpu" header followed by a units line */
	struct rd r = { .many_tasks = 1 };
	struct view l;
	int dmon_names = 0, dmon_units = 0, csv_header = 0, query_cmd = 0, csv_rows = 0,
	    csv_gpuish = 0, lines = 0, other = 0, row_k = 0, rows_same = 1;
	r.p = d;
	r.end = d + n;
	int straggler = 0, gmi = 0, dcgmi = 0, exporter = 0;
	struct prom_line pl;
	while (next_line(&r, &l) && lines < 200) {
		struct view tl = trim(l);
		struct view cells[MAX_COLS];
		if (!tl.n)
			continue;
		/* a last line cut by the end of the capture (or of the bytes
		 * sniffed) is no evidence of the format: the reader warns */
		if (r.unterminated && lines)
			break;
		lines++;
		/* markers count only where the tool prints them, never inside prose */
		if (vhas(tl, "MnRtt/Rnk:") || (vhas(tl, "Ranks with") && vhas(tl, "Etpt(TF):")))
			straggler++;
		if (vprefix(tl, "mthreads-gmi:") && vhas(tl, "Driver Version"))
			gmi++;
		if (vprefix(tl, "#Entity") || vprefix(tl, "# Entity"))
			dcgmi++;
		if (vprefix(tl, "# HELP DCGM_FI_") || vprefix(tl, "# TYPE DCGM_FI_") ||
		    (vprefix(tl, "DCGM_FI_") && prom_parse(tl, &pl)))
			exporter++;
		if (tl.s[0] == '#') {
			for (size_t q = 0; q + 12 <= tl.n; q++)
				if (!memcmp(tl.s + q, "--query-gpu=", 12)) {
					struct view fl = { tl.s + q + 12, 0 };
					while (fl.s + fl.n < tl.s + tl.n && !isspace((unsigned char)fl.s[fl.n]))
						fl.n++;
					query_cmd = split_csv(fl, cells, MAX_COLS);
					break;
				}
			if ((vprefix(tl, "# gpu") || vprefix(tl, "#gpu") || vprefix(tl, "#Date")) &&
			    (vhas(tl, " pwr") || vhas(tl, " sm ") || vhas(tl, " mclk") ||
			     vhas(tl, " fb")))
				dmon_names = 1;
			if (vprefix(tl, "# Idx") || vhas(tl, "YYYYMMDD") || vhas(tl, " Idx "))
				dmon_units = 1;
			continue;
		}
		int k = split_csv(tl, cells, MAX_COLS);
		if (k >= 2 && looks_header(cells, k)) {
			csv_header = k;
		} else if (k >= 3) {
			csv_rows++;
			if (!row_k)
				row_k = k;
			else if (k != row_k)
				rows_same = 0;
			if (vhas(tl, "NVIDIA") || vhas(tl, "GeForce") || vhas(tl, "Tesla") ||
			    vhas(tl, "Quadro") || vhas(tl, ", GPU-") || vhas(tl, " MiB") ||
			    vhas(tl, " %,"))
				csv_gpuish++;
		} else
			other++;
	}
	if (straggler)
		return TS_TELE_STRAGGLER;
	if (gmi)
		return TS_TELE_GMI_TABLE;
	if (dcgmi)
		return TS_TELE_DCGMI;
	if (exporter)
		return TS_TELE_DCGM_EXPORTER;
	if (dmon_names && dmon_units)
		return TS_TELE_DMON;
	/* CSV: every data row has the field count of the header (or of the
	 * --query-gpu list a comment line gives), or rows that all look like
	 * GPU rows and nothing else */
	if (csv_rows && rows_same && !other &&
	    ((csv_header && row_k == csv_header) || (query_cmd && row_k == query_cmd) ||
	     csv_gpuish == csv_rows))
		return TS_TELE_QUERY_CSV;
	return TS_TELE_UNKNOWN;
}

/* --------------------------------------------------------------- dmon */

static int dmon_field(struct view name)
{
	static const struct { const char *n; int f; } map[] = {
		{ "pwr", TS_TF_POWER_W }, { "temp", TS_TF_TEMP_C }, { "gtemp", TS_TF_TEMP_C },
		{ "mtemp", TS_TF_MEM_TEMP_C }, { "sm", TS_TF_UTIL_PCT },
		{ "mem", TS_TF_MEM_UTIL_PCT }, { "mclk", TS_TF_MEM_CLOCK_MHZ },
		{ "pclk", TS_TF_SM_CLOCK_MHZ }, { "pviol", TS_TF_POWER_VIOL_PCT },
		{ "tviol", TS_TF_THERMAL_VIOL }, { "fb", TS_TF_MEM_USED_MIB },
		{ "sbecc", TS_TF_ECC_SBE }, { "dbecc", TS_TF_ECC_DBE },
		{ "rxpci", TS_TF_PCIE_RX_MBPS }, { "txpci", TS_TF_PCIE_TX_MBPS },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (veq(name, map[i].n))
			return map[i].f;
	return -1;
}

static int read_dmon(struct rd *r)
{
	struct view l, names[MAX_COLS], cells[MAX_COLS];
	int nnames = 0, col_gpu = -1, col_date = -1, col_time = -1, map[MAX_COLS];
	uint32_t tick = 0;
	long prev_gpu = -1;
	int any = 0;

	while (next_line(r, &l)) {
		struct view tl = trim(l);
		if (!tl.n)
			continue;
		if (tl.s[0] == '#') {
			struct view body = { tl.s + 1, tl.n - 1 };
			if (vhas(body, "Idx") || vhas(body, "YYYYMMDD"))
				continue; /* units line */
			int k = split_ws(body, names, MAX_COLS);
			if (k < 2)
				continue;
			nnames = k;
			col_gpu = col_date = col_time = -1;
			for (int i = 0; i < k; i++) {
				map[i] = dmon_field(names[i]);
				if (veq(names[i], "gpu"))
					col_gpu = i;
				else if (veq(names[i], "Date"))
					col_date = i;
				else if (veq(names[i], "Time"))
					col_time = i;
			}
			continue;
		}
		if (!nnames || col_gpu < 0)
			return bad(r, "nvidia-smi dmon row before its '# gpu' header line");
		int k = split_ws(tl, cells, MAX_COLS);
		if (k != nnames || r->unterminated) {
			if (is_last_line(r)) {
				cut_row(r, "dmon row", k, nnames, "columns");
				break;
			}
			return bad(r, "dmon row has a different number of columns than its header");
		}
		double gv;
		if (cell_value(cells[col_gpu], &gv) != TS_TV_VALUE)
			return bad(r, "dmon row without a GPU index");
		if (!(gv >= 0 && gv < 1e9))
			return bad(r, "dmon row with a GPU index that is not a device number");
		if (any && (long)gv <= prev_gpu)
			tick++;
		prev_gpu = (long)gv;
		any = 1;
		int64_t tns = TS_NO_TIME;
		if (col_date >= 0 && col_time >= 0) {
			char buf[40];
			snprintf(buf, sizeof(buf), "%.*s %.*s", (int)(cells[col_date].n % 16),
				 cells[col_date].s, (int)(cells[col_time].n % 16), cells[col_time].s);
			struct view sv = { buf, strlen(buf) };
			tns = parse_stamp(r, sv);
		}
		int g = gpu_for(r, cells[col_gpu], (struct view){ NULL, 0 });
		if (g < 0)
			return oom(r);
		struct ts_tele_sample *s = ts_tele_add_sample(r->t, (uint32_t)g, tick, tns);
		if (!s)
			return oom(r);
		for (int i = 0; i < k; i++)
			put(r, s, map[i], cells[i], names[i]);
	}
	if (!any)
		return bad(r, "nvidia-smi dmon capture with no sample rows");
	if (col_date < 0)
		ts_tele_note(r->t, "untimed", -1,
			     "dmon without -o DT has no timestamps: samples are ordered by tick only");
	return 0;
}

/* ------------------------------------------------------- query-gpu CSV */

struct qrow {
	int64_t t_ns;
	int64_t line;
	const char *p;   /* line start in the buffer */
	size_t n;
};

static int read_query(struct rd *r, const struct ts_tele_read_opts *o)
{
	struct view l, names[MAX_COLS], cells[MAX_COLS];
	int nnames = 0, map[MAX_COLS];
	unsigned reasons[MAX_COLS];
	int c_index = -1, c_name = -1, c_uuid = -1, c_bus = -1, c_drv = -1, c_time = -1;
	int c_gr = -1, c_grmax = -1, has_sm = 0, has_smmax = 0;
	char fieldbuf[2048];
	TS_VEC(struct qrow) rows = { 0 };
	int rc = 0;
	size_t bad_stamps = 0;
	int64_t bad_stamp_line = 0;
	char bad_stamp[64] = "";

	if (o && o->query_fields) {
		snprintf(fieldbuf, sizeof(fieldbuf), "%s", o->query_fields);
		struct view fv = { fieldbuf, strlen(fieldbuf) };
		nnames = split_csv(fv, names, MAX_COLS);
	}
	while (next_line(r, &l)) {
		struct view tl = trim(l);
		if (!tl.n)
			continue;
		if (tl.s[0] == '#') {
			const char *q = NULL;
			for (size_t i = 0; i + 12 <= tl.n; i++)
				if (!memcmp(tl.s + i, "--query-gpu=", 12)) {
					q = tl.s + i + 12;
					break;
				}
			if (q && !nnames) {
				size_t m = 0;
				while (q + m < tl.s + tl.n && !isspace((unsigned char)q[m]))
					m++;
				snprintf(fieldbuf, sizeof(fieldbuf), "%.*s", (int)m, q);
				struct view fv = { fieldbuf, strlen(fieldbuf) };
				nnames = split_csv(fv, names, MAX_COLS);
			}
			continue;
		}
		int k = split_csv(tl, cells, MAX_COLS);
		if (looks_header(cells, k)) {
			/* a header row names the fields (and is repeated by -l loops) */
			if (k >= (int)(sizeof(fieldbuf) / 8))
				continue;
			snprintf(fieldbuf, sizeof(fieldbuf), "%.*s", (int)tl.n, tl.s);
			struct view fv = { fieldbuf, strlen(fieldbuf) };
			nnames = split_csv(fv, names, MAX_COLS);
			continue;
		}
		if (!nnames) {
			rc = bad(r, "nvidia-smi --query-gpu CSV without a header row: give the "
				    "field names with --fields (the --query-gpu list)");
			goto out;
		}
		if (k != nnames || r->unterminated) {
			if (is_last_line(r)) {
				cut_row(r, "CSV row", k, nnames, "fields");
				break;
			}
			rc = bad(r, "--query-gpu row has a different number of fields than its header");
			goto out;
		}
		struct qrow q = { TS_NO_TIME, r->line, l.s, l.n };
		if (TS_VEC_PUSH(rows, q)) {
			rc = oom(r);
			goto out;
		}
	}
	if (!rows.n) {
		rc = bad(r, "nvidia-smi --query-gpu CSV with no data rows");
		goto out;
	}
	for (int i = 0; i < nnames; i++) {
		int f = query_field(names[i]);
		map[i] = f >= 0 ? f : -1;
		if (f == Q_INDEX) c_index = i;
		if (f == Q_NAME) c_name = i;
		if (f == Q_UUID) c_uuid = i;
		if (f == Q_BUS) c_bus = i;
		if (f == Q_DRIVER) c_drv = i;
		if (f == Q_STAMP) c_time = i;
		if (f == Q_GRCLK) c_gr = i;
		if (f == Q_GRMAX) c_grmax = i;
		reasons[i] = f == Q_REASON ? reason_bit(names[i]) : 0;
		if (f == TS_TF_SM_CLOCK_MHZ) has_sm = 1;
		if (f == TS_TF_SM_CLOCK_MAX_MHZ) has_smmax = 1;
	}
	/* the graphics clock stands in for the SM clock when no SM clock is
	 * queried (they are the same domain on data-centre parts) */
	if (c_gr >= 0 && !has_sm)
		map[c_gr] = TS_TF_SM_CLOCK_MHZ;
	if (c_grmax >= 0 && !has_smmax)
		map[c_grmax] = TS_TF_SM_CLOCK_MAX_MHZ;
	int c_id = c_index >= 0 ? c_index : c_uuid >= 0 ? c_uuid : c_bus;

	/* ticks: by identity when a GPU id is queried, else by timestamp
	 * (rows of one round are printed within milliseconds; .389 and .390
	 * are one tick), else every row is one GPU of one tick */
	size_t nr = rows.n;
	uint32_t *tick = calloc(nr, sizeof(*tick));
	int *pos = calloc(nr, sizeof(*pos));
	if (!tick || !pos) {
		free(tick);
		free(pos);
		rc = oom(r);
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct view rl = { rows.v[i].p, rows.v[i].n };
		split_csv(trim(rl), cells, MAX_COLS);
		if (c_time >= 0) {
			struct view tc = trim(cells[c_time]);
			rows.v[i].t_ns = parse_stamp(r, tc);
			/* a stamp not read makes its row untimed: said, not silent */
			double pv;
			struct view pu;
			if (rows.v[i].t_ns == TS_NO_TIME && tc.n &&
			    cell_parse(tc, &pv, &pu) != TS_TV_MISSING &&
			    cell_parse(tc, &pv, &pu) != TS_TV_UNSUPPORTED) {
				if (!bad_stamps++) {
					bad_stamp_line = rows.v[i].line;
					snprintf(bad_stamp, sizeof(bad_stamp), "%.*s",
						 (int)(tc.n < 60 ? tc.n : 60), tc.s);
				}
			}
		}
	}
	if (bad_stamps)
		ts_tele_note(r->t, "bad-cell", bad_stamp_line,
			     "%zu timestamp cell(s) not read as a date and time: their rows are "
			     "untimed (first: '%s')", bad_stamps, bad_stamp);
	if (c_id < 0 && c_time >= 0) {
		uint32_t tk = 0;
		int p = 0, maxsize = 0;
		for (size_t i = 0; i < nr; i++) {
			if (i > 0) {
				int64_t a = rows.v[i - 1].t_ns, b = rows.v[i].t_ns;
				if (a == TS_NO_TIME || b == TS_NO_TIME || b - a > 20000000LL || b < a) {
					tk++;
					p = 0;
				}
			}
			tick[i] = tk;
			pos[i] = p++;
			if (p > maxsize)
				maxsize = p;
		}
		/* a first tick cut by `tail` holds the last GPUs of its round */
		size_t first = 0;
		while (first < nr && tick[first] == 0)
			first++;
		if ((int)first < maxsize && tick[nr - 1] > 0) {
			for (size_t i = 0; i < first; i++)
				pos[i] += maxsize - (int)first;
			ts_tele_note(r->t, "partial-tick", rows.v[0].line,
				     "the first round has %zu of %d rows (the capture starts mid-round): "
				     "they are taken as GPUs %d-%d by position", first, maxsize,
				     maxsize - (int)first, maxsize - 1);
		}
		ts_tele_note(r->t, "gpu-by-position", -1,
			     "no index, uuid or pci.bus_id field: GPUs are identified by their "
			     "position within each round");
	} else if (c_id < 0) {
		for (size_t i = 0; i < nr; i++)
			pos[i] = (int)i;
	}
	uint32_t tk = 0;
	for (size_t i = 0; i < nr; i++) {
		struct view rl = { rows.v[i].p, rows.v[i].n };
		struct view name = { NULL, 0 };
		char idbuf[24];
		int g;

		r->line = rows.v[i].line;
		split_csv(trim(rl), cells, MAX_COLS);
		if (c_name >= 0)
			name = cells[c_name];
		if (c_id >= 0) {
			g = gpu_for(r, cells[c_id], name);
			if (g >= 0 && next_tick(r, g, &tk))
				g = -1;
		} else {
			snprintf(idbuf, sizeof(idbuf), "%d", pos[i]);
			struct view iv = { idbuf, strlen(idbuf) };
			g = gpu_for(r, iv, name);
			tk = c_time >= 0 ? tick[i] : 0;
		}
		if (g < 0) {
			rc = oom(r);
			break;
		}
		struct ts_tele_gpu *gp = &r->t->gpus.v[g];
		if (c_uuid >= 0 && !gp->uuid && cells[c_uuid].n)
			gp->uuid = vdup(r, cells[c_uuid]);
		if (c_bus >= 0 && !gp->bus_id && cells[c_bus].n)
			gp->bus_id = vdup(r, cells[c_bus]);
		if (c_drv >= 0 && !r->t->driver_version && cells[c_drv].n)
			r->t->driver_version = vdup(r, cells[c_drv]);
		struct ts_tele_sample *s = ts_tele_add_sample(r->t, (uint32_t)g, tk, rows.v[i].t_ns);
		if (!s) {
			rc = oom(r);
			break;
		}
		for (int c = 0; c < nnames; c++)
			put(r, s, map[c], cells[c], names[c]);
		for (int c = 0; c < nnames; c++)
			if (reasons[c])
				put_reason(r, s, reasons[c], trim(cells[c]), names[c]);
	}
	free(tick);
	free(pos);
out:
	TS_VEC_RELEASE(rows);
	return rc;
}

/* --------------------------------------------------------------- dcgmi */

static int dcgmi_field(struct view name)
{
	static const struct { const char *n; int f; } map[] = {
		{ "GRACT", TS_TF_GR_ACTIVE }, { "SMACT", TS_TF_SM_ACTIVE },
		{ "SMOCC", TS_TF_SM_OCCUPANCY }, { "TENSO", TS_TF_TENSOR_ACTIVE },
		{ "DRAMA", TS_TF_DRAM_ACTIVE }, { "FP64A", TS_TF_FP64_ACTIVE },
		{ "FP32A", TS_TF_FP32_ACTIVE }, { "FP16A", TS_TF_FP16_ACTIVE },
		{ "POWER", TS_TF_POWER_W }, { "PWR", TS_TF_POWER_W },
		{ "GTEMP", TS_TF_TEMP_C }, { "TMPTR", TS_TF_TEMP_C }, { "MMTMP", TS_TF_MEM_TEMP_C },
		{ "GPUTL", TS_TF_UTIL_PCT }, { "MCUTL", TS_TF_MEM_UTIL_PCT },
		{ "SMCLK", TS_TF_SM_CLOCK_MHZ }, { "MMCLK", TS_TF_MEM_CLOCK_MHZ },
		{ "FBUSD", TS_TF_MEM_USED_MIB }, { "FBTTL", TS_TF_MEM_TOTAL_MIB },
		{ "XIDER", TS_TF_XID },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (veq(name, map[i].n))
			return map[i].f;
	return -1;
}

static int read_dcgmi(struct rd *r)
{
	struct view l, names[MAX_COLS], cells[MAX_COLS];
	int nnames = 0, map[MAX_COLS], mixed = 0;
	uint32_t tick = 0;
	int after_header = 0;

	while (next_line(r, &l)) {
		struct view tl = trim(l);
		if (!tl.n)
			continue;
		if (tl.s[0] == '#') {
			if (vhas(tl, "Entity")) {
				int k = split_ws(tl, names, MAX_COLS);
				int b = 0;
				while (b < k && (veq(names[b], "#") || veq(names[b], "#Entity") ||
						 veq(names[b], "Entity")))
					b++;
				nnames = 0;
				for (int i = b; i < k; i++) {
					names[nnames] = names[i];
					map[nnames] = dcgmi_field(names[i]);
					nnames++;
				}
				after_header = 1;
			}
			continue;
		}
		if (after_header && (vprefix(tl, "ID") || vprefix(tl, "Id"))) {
			after_header = 0;
			continue; /* the id / units line */
		}
		after_header = 0;
		if (vprefix(tl, "Error") || vhas(tl, "Error setting watches") ||
		    vprefix(tl, "Failed")) {
			char *e = vdup(r, tl);
			if (!e || TS_VEC_PUSH(r->t->errors, e))
				return oom(r);
			continue;
		}
		int k = split_ws(tl, cells, MAX_COLS);
		if (!nnames)
			return bad(r, "dcgmi dmon row before its '#Entity' header line");
		if (k != nnames + 2 || r->unterminated) {
			if (is_last_line(r)) {
				cut_row(r, "dcgmi row", k, nnames + 2, "cells");
				break;
			}
			return bad(r, "dcgmi dmon row has a different number of cells than its header");
		}
		char idbuf[64];
		snprintf(idbuf, sizeof(idbuf), "%.*s %.*s", (int)(cells[0].n % 24), cells[0].s,
			 (int)(cells[1].n % 24), cells[1].s);
		struct view iv = { idbuf, strlen(idbuf) };
		int g = gpu_for(r, iv, (struct view){ NULL, 0 });
		if (g < 0 || next_tick(r, g, &tick))
			return oom(r);
		struct ts_tele_sample *s = ts_tele_add_sample(r->t, (uint32_t)g, tick, TS_NO_TIME);
		if (!s)
			return oom(r);
		int nv = 0, nm = 0;
		for (int i = 0; i < nnames; i++) {
			put(r, s, map[i], cells[i + 2], names[i]);
			if (map[i] >= 0) {
				if (s->st[map[i]] == TS_TV_VALUE)
					nv++;
				else
					nm++;
			}
		}
		if (nv && nm)
			mixed = 1;
	}
	if (mixed)
		ts_tele_note(r->t, "multiplexed", -1,
			     "some profiling fields are N/A in samples where others have values: "
			     "DCGM multiplexes profiling counters, so not every field is read every "
			     "sample (N/A is kept as missing, never 0)");
	if (!r->t->samples.n && r->t->errors.n)
		ts_tele_note(r->t, "no-samples", -1, "dcgmi reported an error and no samples");
	return 0;
}

/* ------------------------------------------------------ mthreads-gmi */

/* "44302MiB(32768MiB)" or "16x(16x)": the number before and inside (). */
static int pair_values(struct view c, double *a, double *b)
{
	size_t i = 0;

	while (i < c.n && c.s[i] != '(')
		i++;
	if (i >= c.n)
		return -1;
	struct view x = { c.s, i }, y = { c.s + i + 1, c.n - i - 1 };
	if (y.n && y.s[y.n - 1] == ')')
		y.n--;
	/* "16x" has a unit 'x' the cell parser accepts as letters */
	if (cell_value(x, a) != TS_TV_VALUE || cell_value(y, b) != TS_TV_VALUE)
		return -1;
	return 0;
}

/* Cut a block line at its '|' separators. */
static int split_bar(struct view l, struct view *out, int max)
{
	int k = 0;
	size_t b = 0;

	for (size_t i = 0; i <= l.n && k < max; i++)
		if (i == l.n || l.s[i] == '|') {
			out[k++] = trim((struct view){ l.s + b, i - b });
			b = i + 1;
		}
	return k;
}

static int read_gmi_table(struct rd *r)
{
	struct view l, parts[8], tok[16];
	int64_t t_ns = TS_NO_TIME;
	int in_blocks = 0, lines_in_block = 0, gpus = 0;
	struct ts_tele_sample *s = NULL;
	int64_t block_line = 0;

	while (next_line(r, &l)) {
		struct view tl = trim(l);
		if (!tl.n)
			continue;
		if (t_ns == TS_NO_TIME && !in_blocks) {
			int64_t c = parse_ctime(r, tl);
			if (c != TS_NO_TIME) {
				t_ns = c;
				continue;
			}
		}
		if (vhas(tl, "mthreads-gmi:")) {
			struct view w[8];
			int k = split_ws(tl, w, 8);
			char buf[80];
			for (int i = 0; i < k; i++) {
				if (vprefix(w[i], "mthreads-gmi:")) {
					snprintf(buf, sizeof(buf), "mthreads-gmi %.*s", (int)(w[i].n - 13) % 40,
						 w[i].s + 13);
					r->t->tool_version = ts_arena_strndup(&r->t->arena, buf, strlen(buf));
				}
				if (vprefix(w[i], "Version:") && w[i].n > 8)
					r->t->driver_version = vdup(r, (struct view){ w[i].s + 8, w[i].n - 8 });
			}
			continue;
		}
		if (tl.s[0] == '+' || tl.s[0] == '-' || tl.s[0] == '=') {
			if (tl.s[0] == '+')
				in_blocks = 1;
			if (s && lines_in_block < 3)
				ts_tele_note(r->t, "truncated", block_line,
					     "a GPU block has %d of its 3 lines", lines_in_block);
			s = NULL;
			continue;
		}
		if (!in_blocks)
			continue; /* column headings */
		if (vprefix(tl, "Processes") || vprefix(tl, "Process")) {
			in_blocks = 0;
			continue;
		}
		int np = split_bar(l, parts, 8);
		if (!s) {
			/* first line: ID Name | bus | util mem(total) */
			if (np < 3 || !isdigit((unsigned char)trim(parts[0]).s[0]))
				continue;
			int k = split_ws(parts[0], tok, 16);
			if (k < 1)
				continue;
			struct view name = { NULL, 0 };
			if (k >= 2)
				name = (struct view){ tok[1].s, (size_t)(tok[k - 1].s + tok[k - 1].n - tok[1].s) };
			int g = gpu_for(r, tok[0], name);
			if (g < 0)
				return oom(r);
			if (parts[1].n)
				r->t->gpus.v[g].bus_id = vdup(r, parts[1]);
			s = ts_tele_add_sample(r->t, (uint32_t)g, 0, t_ns);
			if (!s)
				return oom(r);
			gpus++;
			block_line = r->line;
			lines_in_block = 1;
			int k2 = split_ws(parts[2], tok, 16);
			if (k2 >= 1)
				put(r, s, TS_TF_UTIL_PCT, tok[0], VLIT("util"));
			if (k2 >= 2) {
				double used, total;
				if (!pair_values(tok[1], &used, &total)) {
					s->st[TS_TF_MEM_USED_MIB] = s->st[TS_TF_MEM_TOTAL_MIB] = TS_TV_VALUE;
					s->v[TS_TF_MEM_USED_MIB] = used;
					s->v[TS_TF_MEM_TOTAL_MIB] = total;
				}
			}
			continue;
		}
		lines_in_block++;
		if (lines_in_block == 2 && np >= 3) {
			double cur, max;
			if (!pair_values(parts[1], &cur, &max)) {
				s->st[TS_TF_PCIE_WIDTH] = s->st[TS_TF_PCIE_WIDTH_MAX] = TS_TV_VALUE;
				s->v[TS_TF_PCIE_WIDTH] = cur;
				s->v[TS_TF_PCIE_WIDTH_MAX] = max;
			}
			int k2 = split_ws(parts[2], tok, 16);
			if (k2 >= 1)
				put(r, s, TS_TF_TEMP_C, tok[0], VLIT("temp"));
		}
	}
	if (s && lines_in_block < 3)
		ts_tele_note(r->t, "truncated", block_line,
			     "the last GPU block has %d of its 3 lines (the capture is cut)",
			     lines_in_block);
	if (!gpus)
		return bad(r, "mthreads-gmi output with no GPU block");
	/* every field MTML cannot give is unsupported, not 0 */
	for (size_t g = r->gpu_base; g < r->t->gpus.n; g++) {
		static const int gaps[] = { TS_TF_POWER_LIMIT_W, TS_TF_ENERGY_J, TS_TF_EVENT_REASONS,
					    TS_TF_PCIE_RX_MBPS, TS_TF_PCIE_TX_MBPS };
		for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
			r->t->gpus.v[g].unsupported_why[gaps[i]] = "mtml";
	}
	return 0;
}

/* gmi --query --json: a walk that tracks the key path (keys trimmed). */
struct gj {
	struct rd *r;
	struct ts_json j;
	char path[6][48];
	int depth;
	int in_gpu;            /* inside GPU[i] */
	struct ts_tele_sample *s;
	int g;
	int64_t t_ns;
};

static void key_copy(char *dst, size_t cap, const char *s, size_t n)
{
	struct view v = trim((struct view){ s, n });
	snprintf(dst, cap, "%.*s", (int)(v.n < cap - 1 ? v.n : cap - 1), v.s);
}

static int gj_value(struct gj *w, const char *s, size_t n)
{
	struct view v = { s, n };
	const char *k0 = w->depth >= 1 ? w->path[0] : "";
	const char *k1 = w->depth >= 2 ? w->path[w->depth - 2] : "";
	const char *k = w->depth >= 1 ? w->path[w->depth - 1] : "";
	struct rd *r = w->r;
	struct view kv = { k, strlen(k) };

	if (w->depth == 1) {
		if (!strcmp(k0, "Timestamp"))
			w->t_ns = parse_ctime(r, v);
		else if (!strcmp(k0, "Driver Version"))
			r->t->driver_version = vdup(r, v);
		else if (!strcmp(k0, "Attached GPUs")) {
			double a;
			if (cell_value(v, &a) == TS_TV_VALUE && a >= 0 && a < 1e6)
				r->t->gpus_attached = (int32_t)a;
		}
		return 0;
	}
	if (!w->in_gpu)
		return 0;
	if (!strcmp(k, "Index") && w->depth == 2) {
		int g = gpu_for(r, v, (struct view){ NULL, 0 });
		if (g < 0)
			return TS_ENOMEM;
		w->g = g;
		w->s = ts_tele_add_sample(r->t, (uint32_t)g, 0, w->t_ns);
		return w->s ? 0 : TS_ENOMEM;
	}
	if (!w->s)
		return 0;
	struct ts_tele_gpu *gp = &r->t->gpus.v[w->g];
	if (!strcmp(k, "Product Name") && w->depth == 2)
		gp->name = vdup(r, v);
	else if (!strcmp(k, "Bus ID") && !strcmp(k1, "PCI"))
		gp->bus_id = vdup(r, v);
	else if (!strcmp(k, "GPU UUID") && w->depth == 2)
		gp->uuid = vdup(r, v);
	else if (!strcmp(k1, "FB Memory Usage") && !strcmp(k, "Total"))
		put(r, w->s, TS_TF_MEM_TOTAL_MIB, v, kv);
	else if (!strcmp(k1, "FB Memory Usage") && !strcmp(k, "Used"))
		put(r, w->s, TS_TF_MEM_USED_MIB, v, kv);
	else if (!strcmp(k1, "Utilization") && !strcmp(k, "Gpu"))
		put(r, w->s, TS_TF_UTIL_PCT, v, kv);
	else if (!strcmp(k1, "Utilization") && !strcmp(k, "Memory"))
		put(r, w->s, TS_TF_MEM_UTIL_PCT, v, kv);
	else if (!strcmp(k1, "Temperature") && !strcmp(k, "GPU Current Temp"))
		put(r, w->s, TS_TF_TEMP_C, v, kv);
	else if (!strcmp(k1, "Power Readings") && !strcmp(k, "Power Draw"))
		put(r, w->s, TS_TF_POWER_W, v, kv);
	else if (!strcmp(k1, "Power Readings") &&
		 (!strcmp(k, "Current Power Limit") || !strcmp(k, "Power Limit")))
		put(r, w->s, TS_TF_POWER_LIMIT_W, v, kv);
	else if (!strcmp(k1, "Clocks") && (!strcmp(k, "Graphics") || !strcmp(k, "GPU")))
		put(r, w->s, TS_TF_SM_CLOCK_MHZ, v, kv);
	else if (!strcmp(k1, "Clocks") && !strcmp(k, "Memory"))
		put(r, w->s, TS_TF_MEM_CLOCK_MHZ, v, kv);
	return 0;
}

static int gj_walk(struct gj *w, int tok, struct ts_err *err)
{
	int rc;

	if (tok == TS_JSON_OBJ) {
		for (;;) {
			tok = ts_json_next(&w->j, err);
			if (tok < 0)
				return tok;
			if (tok == TS_JSON_OBJ_END)
				return 0;
			if (tok != TS_JSON_KEY)
				return TS_EPARSE;
			if (w->depth >= 6) {
				tok = ts_json_next(&w->j, err);
				if (tok < 0 || (rc = ts_json_skip(&w->j, tok, err)))
					return tok < 0 ? tok : rc;
				continue;
			}
			key_copy(w->path[w->depth], sizeof(w->path[0]), w->j.s, w->j.n);
			w->depth++;
			tok = ts_json_next(&w->j, err);
			if (tok < 0)
				return tok;
			rc = gj_walk(w, tok, err);
			w->depth--;
			if (rc)
				return rc;
		}
	}
	if (tok == TS_JSON_ARR) {
		int gpu_array = w->depth == 1 && !strcmp(w->path[0], "GPU");
		for (;;) {
			tok = ts_json_next(&w->j, err);
			if (tok < 0)
				return tok;
			if (tok == TS_JSON_ARR_END)
				return 0;
			if (gpu_array) {
				w->in_gpu = 1;
				w->s = NULL;
			}
			rc = gj_walk(w, tok, err);
			if (gpu_array)
				w->in_gpu = 0;
			if (rc)
				return rc;
		}
	}
	if (tok == TS_JSON_STR || tok == TS_JSON_NUM)
		return gj_value(w, w->j.s, w->j.n);
	return 0;
}

static int read_gmi_json(struct rd *r)
{
	struct gj w;
	int tok, rc;

	memset(&w, 0, sizeof(w));
	w.r = r;
	w.t_ns = TS_NO_TIME;
	w.g = -1;
	ts_json_init_mem(&w.j, r->p, (size_t)(r->end - r->p), TS_JSON_LENIENT, r->name);
	tok = ts_json_next(&w.j, r->err);
	rc = tok < 0 ? tok : gj_walk(&w, tok, r->err);
	if (rc) {
		if (rc == TS_ENOMEM)
			rc = oom(r);
		else if (r->err->code == TS_OK)
			rc = ts_err_at(r->err, TS_EPARSE, r->name, (int64_t)ts_json_offset(&w.j), -1,
				       "malformed mthreads-gmi JSON");
		ts_json_release(&w.j);
		return rc;
	}
	ts_json_release(&w.j);
	size_t n = r->t->gpus.n - r->gpu_base;
	if (!n)
		return bad(r, "mthreads-gmi JSON with no GPU record");
	if (r->t->gpus_attached > 0 && (size_t)r->t->gpus_attached != n)
		ts_tele_note(r->t, "partial-gpus", -1, "%zu of %d attached GPUs in input", n,
			     r->t->gpus_attached);
	for (size_t g = r->gpu_base; g < r->t->gpus.n; g++) {
		static const int gaps[] = { TS_TF_ENERGY_J, TS_TF_EVENT_REASONS, TS_TF_PCIE_RX_MBPS,
					    TS_TF_PCIE_TX_MBPS };
		for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++)
			r->t->gpus.v[g].unsupported_why[gaps[i]] = "mtml";
	}
	r->t->tool_version = "mthreads-gmi --query --json";
	return 0;
}

/* ------------------------------------------------------ straggler lines */

static int read_straggler(struct rd *r)
{
	struct view l;
	int any = 0, mw_fixed = 0;

	while (next_line(r, &l)) {
		struct ts_straggler_line sl;
		const char *p = l.s, *end = l.s + l.n;

		if (!vhas(l, "/Rnk:") && !vhas(l, "Ranks with"))
			continue;
		memset(&sl, 0, sizeof(sl));
		sl.t_ns = TS_NO_TIME;
		sl.file = r->t->nfiles - 1;
		sl.line = r->line;
		sl.srun_rank = r->line_task >= 0 && r->line_task <= INT32_MAX ? (int32_t)r->line_task : -1;
		for (const char *q = p; q < end; q++)
			if (*q == '[' && end - q > 20) {
				const char *c = memchr(q, ']', (size_t)(end - q));
				if (c) {
					int64_t tt = parse_stamp(r, (struct view){ q + 1, (size_t)(c - q - 1) });
					if (tt != TS_NO_TIME) {
						sl.t_ns = tt;
						break;
					}
				}
			}
		if (vhas(l, "Ranks with")) {
			sl.list_kind = vhas(l, "Bottom") ? "bottom" : "top";
			const char *c = NULL;
			for (const char *q = p; q + 4 < end; q++)
				if (!memcmp(q, "(TF):", 5)) {
					c = q + 5;
					break;
				}
			while (c && c < end && sl.nlist < TS_STRAGGLER_MAX) {
				char *e;
				while (c < end && (*c == ' ' || *c == ','))
					c++;
				if (c >= end)
					break;
				char buf[48];
				size_t m = 0;
				while (c + m < end && c[m] != ',' && m < sizeof(buf) - 1)
					m++;
				memcpy(buf, c, m);
				buf[m] = 0;
				double v = strtod(buf, &e);
				if (e == buf || *e != '/')
					break;
				sl.list_v[sl.nlist] = v;
				sl.list_rank[sl.nlist] = (int32_t)strtol(e + 1, NULL, 10);
				sl.nlist++;
				c += m;
			}
		} else {
			/* "| MnRtt/Rnk: 3453.08ms/8 |" pairs */
			for (const char *q = p; q + 6 < end; q++) {
				if (!((q[0] == 'M' && (q[1] == 'n' || q[1] == 'x'))))
					continue;
				const char *slash = memchr(q, '/', (size_t)(end - q));
				if (!slash || slash - q > 8 || end - slash < 6 || memcmp(slash, "/Rnk:", 5))
					continue;
				char metric[8];
				size_t ml = (size_t)(slash - q - 2);
				snprintf(metric, sizeof(metric), "%.*s", (int)ml, q + 2);
				const char *v = slash + 5;
				while (v < end && *v == ' ')
					v++;
				char buf[48];
				size_t m = 0;
				while (v + m < end && v[m] != ' ' && v[m] != '|' && m < sizeof(buf) - 1)
					m++;
				memcpy(buf, v, m);
				buf[m] = 0;
				char *e;
				double val = strtod(buf, &e);
				if (e == buf)
					continue;
				char unit[8];
				size_t ul = 0;
				while (e[ul] && e[ul] != '/' && ul < sizeof(unit) - 1) {
					unit[ul] = e[ul];
					ul++;
				}
				unit[ul] = 0;
				int32_t rank = e[ul] == '/' ? (int32_t)strtol(e + ul + 1, NULL, 10) : -1;
				int k;
				for (k = 0; k < sl.nstat; k++)
					if (!strcmp(sl.stat[k].metric, metric))
						break;
				if (k == sl.nstat) {
					if (sl.nstat >= TS_STRAGGLER_MAX)
						continue;
					sl.stat[k].metric = ts_arena_strndup(&r->t->arena, metric, strlen(metric));
					sl.stat[k].min = sl.stat[k].max = NAN;
					sl.stat[k].min_rank = sl.stat[k].max_rank = -1;
					sl.nstat++;
				}
				/* torch.cuda.power_draw() is milliwatts; Megatron prints it with W */
				if (!strcmp(metric, "Pwr") && !strcmp(unit, "W")) {
					val /= 1000.0;
					mw_fixed = 1;
				}
				sl.stat[k].unit = ts_arena_strndup(&r->t->arena, unit, strlen(unit));
				if (q[1] == 'n') {
					sl.stat[k].min = val;
					sl.stat[k].min_rank = rank;
				} else {
					sl.stat[k].max = val;
					sl.stat[k].max_rank = rank;
				}
				q = v + m - 1;
			}
		}
		if (!sl.nstat && !sl.nlist)
			continue;
		if (TS_VEC_PUSH(r->t->straggler, sl))
			return oom(r);
		any = 1;
	}
	if (!any)
		return bad(r, "no Megatron straggler-detector line");
	if (mw_fixed)
		ts_tele_note(r->t, "mw-as-w", -1,
			     "Megatron's straggler detector prints torch.cuda.power_draw() "
			     "milliwatts with a 'W' suffix: divided by 1000");
	return 0;
}

/* ------------------------------------------------- trainscope JSONL */

static int own_field(const char *s, size_t n)
{
	for (int f = 0; f < TS_TF_COUNT; f++)
		if (strlen(ts_tf_name(f)) == n && !memcmp(ts_tf_name(f), s, n))
			return f;
	return -1;
}

static int read_own(struct rd *r)
{
	struct view l;
	int header = 0;
	int rc = 0;

	while (next_line(r, &l)) {
		struct ts_json j;
		int tok;
		struct view tl = trim(l);

		if (!tl.n)
			continue;
		ts_json_init_mem(&j, tl.s, tl.n, TS_JSON_ALLOW_NAN, r->name);
		tok = ts_json_next(&j, r->err);
		if (tok != TS_JSON_OBJ) {
			ts_json_release(&j);
			if (is_last_line(r)) {
				ts_tele_note(r->t, "truncated", r->line, "the last line is cut: left out");
				break;
			}
			return bad(r, "telemetry line is not a JSON object");
		}
		int64_t t_ns = TS_NO_TIME, mono = TS_NO_TIME, gpu = -1, tick = 0;
		double vals[TS_TF_COUNT];
		unsigned char st[TS_TF_COUNT];
		const char *why[TS_TF_COUNT];
		memset(st, 0, sizeof(st));
		memset(why, 0, sizeof(why));
		int is_header = 0, is_end = 0;
		for (;;) {
			tok = ts_json_next(&j, r->err);
			if (tok == TS_JSON_OBJ_END || tok < 0)
				break;
			if (tok != TS_JSON_KEY)
				break;
			char key[48];
			key_copy(key, sizeof(key), j.s, j.n);
			tok = ts_json_next(&j, r->err);
			if (tok < 0)
				break;
			if (!strcmp(key, "gpus") && tok == TS_JSON_ARR) {
				is_header = 1;
				for (;;) {
					tok = ts_json_next(&j, r->err);
					if (tok != TS_JSON_OBJ)
						break;
					char id[64] = "", name[160] = "", uuid[96] = "", bus[48] = "";
					for (;;) {
						tok = ts_json_next(&j, r->err);
						if (tok != TS_JSON_KEY)
							break;
						char gk[32];
						key_copy(gk, sizeof(gk), j.s, j.n);
						tok = ts_json_next(&j, r->err);
						if (tok == TS_JSON_STR && !strcmp(gk, "id"))
							key_copy(id, sizeof(id), j.s, j.n);
						else if (tok == TS_JSON_STR && !strcmp(gk, "name"))
							key_copy(name, sizeof(name), j.s, j.n);
						else if (tok == TS_JSON_STR && !strcmp(gk, "uuid"))
							key_copy(uuid, sizeof(uuid), j.s, j.n);
						else if (tok == TS_JSON_STR && !strcmp(gk, "bus_id"))
							key_copy(bus, sizeof(bus), j.s, j.n);
						else if (tok == TS_JSON_OBJ && !strcmp(gk, "unsupported")) {
							int g = gpu_for(r, (struct view){ id, strlen(id) },
									(struct view){ name, strlen(name) });
							if (g < 0)
								return oom(r);
							for (;;) {
								tok = ts_json_next(&j, r->err);
								if (tok != TS_JSON_KEY)
									break;
								int f = own_field(j.s, j.n);
								tok = ts_json_next(&j, r->err);
								if (f >= 0 && tok == TS_JSON_STR)
									r->t->gpus.v[g].unsupported_why[f] =
										vdup(r, (struct view){ j.s, j.n });
								else if ((tok == TS_JSON_OBJ || tok == TS_JSON_ARR) &&
									 (tok = ts_json_skip(&j, tok, r->err)) < 0)
									goto line_done;
							}
						} else if ((tok == TS_JSON_OBJ || tok == TS_JSON_ARR) &&
							   (tok = ts_json_skip(&j, tok, r->err)) < 0)
							goto line_done;
					}
					int g = gpu_for(r, (struct view){ id, strlen(id) },
							(struct view){ name, strlen(name) });
					if (g < 0)
						return oom(r);
					struct ts_tele_gpu *gp = &r->t->gpus.v[g];
					if (uuid[0] && !gp->uuid)
						gp->uuid = vdup(r, (struct view){ uuid, strlen(uuid) });
					if (bus[0] && !gp->bus_id)
						gp->bus_id = vdup(r, (struct view){ bus, strlen(bus) });
				}
				continue;
			}
			if (tok == TS_JSON_OBJ || tok == TS_JSON_ARR) {
				if ((tok = ts_json_skip(&j, tok, r->err)) < 0)
					break;
				continue;
			}
			if (tok == TS_JSON_STR) {
				struct view v = { j.s, j.n };
				int uf = own_field(key, strlen(key));
				if (uf >= 0) {
					/* a field found unsupported while sampling, with its reason */
					st[uf] = TS_TV_UNSUPPORTED;
					why[uf] = vdup(r, v);
				} else if (!strcmp(key, "source"))
					r->t->source = vdup(r, v);
				else if (!strcmp(key, "fidelity"))
					r->t->fidelity = vdup(r, v);
				else if (!strcmp(key, "tool_version"))
					r->t->tool_version = vdup(r, v);
				else if (!strcmp(key, "driver_version"))
					r->t->driver_version = vdup(r, v);
				else if (!strcmp(key, "host") && v.n)
					r->host = vdup(r, v);
				continue;
			}
			if (tok == TS_JSON_TRUE && !strcmp(key, "end"))
				is_end = 1;
			if (tok != TS_JSON_NUM && tok != TS_JSON_NULL)
				continue;
			double v = NAN;
			if (tok == TS_JSON_NUM && ts_num_f64(j.s, j.n, &v))
				continue;
			if (!strcmp(key, "t_unix_ns") && tok == TS_JSON_NUM)
				ts_num_i64(j.s, j.n, &t_ns);
			else if (!strcmp(key, "t_mono_ns") && tok == TS_JSON_NUM)
				ts_num_i64(j.s, j.n, &mono);
			else if (!strcmp(key, "gpu") && tok == TS_JSON_NUM) {
				if (!(v >= 0 && v < 1e9))
					return bad(r, "telemetry sample \"gpu\" out of range");
				gpu = (int64_t)v;
			} else if (!strcmp(key, "tick") && tok == TS_JSON_NUM) {
				if (!(v >= 0 && v < 4294967296.0))
					return bad(r, "telemetry sample \"tick\" out of range");
				tick = (int64_t)v;
			} else if (!strcmp(key, "interval_ms") && isfinite(v)) {
				if (v >= 0 && v < 9e12)
					r->t->interval_ns = (int64_t)(v * 1e6);
				else
					ts_tele_note(r->t, "interval-range", r->line,
						     "header interval_ms %g out of range: interval unknown", v);
			}
			else if (!strcmp(key, "sampler_cpu_pct"))
				r->t->sampler_cpu_pct = v;
			else if (!strcmp(key, "sampler_call_us"))
				r->t->sampler_call_us = v;
			else {
				int f = own_field(key, strlen(key));
				if (f >= 0) {
					st[f] = tok == TS_JSON_NULL ? TS_TV_MISSING : TS_TV_VALUE;
					vals[f] = v;
				}
			}
		}
line_done:
		ts_json_release(&j);
		if (tok < 0) {
			if (is_last_line(r)) {
				ts_tele_note(r->t, "truncated", r->line, "the last line is cut: left out");
				break;
			}
			return ts_err_at(r->err, TS_EPARSE, r->name, -1, r->line,
					 "malformed telemetry line");
		}
		if (is_header) {
			header = 1;
			continue;
		}
		if (is_end)
			continue;
		if (!header)
			return bad(r, "telemetry samples before the header line");
		if (gpu < 0 || (size_t)gpu + r->gpu_base >= r->t->gpus.n)
			return bad(r, "telemetry sample names a GPU the header does not list");
		struct ts_tele_sample *s = ts_tele_add_sample(r->t, (uint32_t)(gpu + r->gpu_base),
							      (uint32_t)tick, t_ns);
		if (!s)
			return oom(r);
		s->mono_ns = mono;
		for (int f = 0; f < TS_TF_COUNT; f++) {
			if (why[f])
				r->t->gpus.v[s->gpu].unsupported_why[f] = why[f];
			const char *gw = r->t->gpus.v[s->gpu].unsupported_why[f];
			if (st[f]) {
				s->st[f] = st[f];
				s->v[f] = st[f] == TS_TV_VALUE ? vals[f] : NAN;
			} else if (gw) {
				s->st[f] = TS_TV_UNSUPPORTED;
			}
		}
	}
	if (!header)
		return bad(r, "trainscope telemetry file without its header line");
	return rc;
}

/* ------------------------------------------------------------- entry */

/* Undo a failed read: the counts and fields as they were (before is a copy
 * of *t taken first); buffers grown since and the arenas' bytes stay. */
static void tele_restore(struct ts_telemetry *t, const struct ts_telemetry *before)
{
	t->format = before->format;
	t->source = before->source;
	t->fidelity = before->fidelity;
	t->tool_version = before->tool_version;
	t->driver_version = before->driver_version;
	t->interval_ns = before->interval_ns;
	t->gpus_attached = before->gpus_attached;
	t->gpus.n = before->gpus.n;
	t->samples.n = before->samples.n;
	t->notes.v.n = before->notes.v.n;
	t->errors.n = before->errors.n;
	t->straggler.n = before->straggler.n;
	t->sampler_cpu_pct = before->sampler_cpu_pct;
	t->sampler_call_us = before->sampler_call_us;
	t->nfiles = before->nfiles;
}

int ts_tele_read_mem(struct ts_telemetry *t, const void *data, size_t n, const char *name,
		     const struct ts_tele_read_opts *o, struct ts_err *err)
{
	struct rd r;
	struct ts_telemetry before;
	size_t bom = ts_bom_len(data, n);
	const char *text = bom ? (const char *)data + bom : data; /* data may be NULL when n is 0 */
	int fmt = ts_tele_sniff(text, n - bom < 65536 ? n - bom : 65536);
	int rc;

	memset(&r, 0, sizeof(r));
	r.t = t;
	r.name = name;
	r.base = data;
	r.p = text;
	r.end = n ? (const char *)data + n : text;
	r.err = err;
	r.gpu_base = (uint32_t)t->gpus.n;
	before = *t;
	if (fmt == TS_TELE_UNKNOWN && o && o->query_fields)
		fmt = TS_TELE_QUERY_CSV;
	if (fmt == TS_TELE_UNKNOWN)
		return ts_err_at(err, TS_EPARSE, name, 0, 1,
				 "not a telemetry capture (expected nvidia-smi dmon or --query-gpu CSV, "
				 "dcgmi dmon, dcgm-exporter metrics, mthreads-gmi, Megatron straggler "
				 "lines or trainscope telemetry JSONL)");
	t->nfiles++;
	if (!t->format) {
		t->format = fmt;
		t->source = ts_tele_format_name(fmt);
		t->fidelity = fmt == TS_TELE_OWN ? "library" : "text-capture";
	}
	switch (fmt) {
	case TS_TELE_DMON: rc = read_dmon(&r); break;
	case TS_TELE_QUERY_CSV: rc = read_query(&r, o); break;
	case TS_TELE_DCGMI: rc = read_dcgmi(&r); break;
	case TS_TELE_GMI_TABLE: rc = read_gmi_table(&r); break;
	case TS_TELE_GMI_JSON: rc = read_gmi_json(&r); break;
	case TS_TELE_STRAGGLER: r.many_tasks = 1; rc = read_straggler(&r); break;
	case TS_TELE_DCGM_EXPORTER: rc = read_dcgm_exporter(&r); break;
	default: rc = read_own(&r); break;
	}
	free(r.slot);
	free(r.last_tick);
	if (!rc)
		cell_notes(&r);
	if (!rc && t->arena.failed)
		rc = oom(&r);
	if (r.other_line) /* the cause of whatever the reader said about the cut */
		rc = ts_err_at(err, TS_EPARSE, name, (int64_t)(r.lstart - r.base), r.other_line,
			       "lines of launcher tasks %lld and %lld in one capture (their GPU 0 "
			       "would read as one GPU): give each task's lines as a file of its own",
			       (long long)r.task, (long long)r.other_task);
	if (!rc) {
		const char *file = ts_arena_strndup(&t->arena, name ? name : "", name ? strlen(name) : 0);
		for (size_t g = before.gpus.n; g < t->gpus.n; g++) {
			t->gpus.v[g].capture = t->nfiles - 1;
			t->gpus.v[g].file = file;
			if (r.host)
				t->gpus.v[g].host = r.host;
			t->gpus.v[g].local_time = r.local_time;
		}
		if (t->arena.failed)
			rc = oom(&r);
	}
	if (rc)
		tele_restore(t, &before);
	else
		tele_note_gaps(t, before.samples.n);
	return rc;
}

int ts_tele_read(struct ts_telemetry *t, const char *path, const struct ts_tele_read_opts *o,
		 struct ts_err *err)
{
	struct ts_input in;
	int rc = ts_input_read_all(&in, path, TELE_MAX_INPUT, err);

	if (rc)
		return rc;
	rc = ts_tele_read_mem(t, in.data, in.len, in.path, o, err);
	ts_input_release(&in);
	return rc;
}

int ts_tele_notes_warn(const struct ts_telemetry *t, size_t from, const char *path,
		       struct ts_warnings *out)
{
	for (size_t k = from; k < t->notes.v.n; k++) {
		const struct ts_warning *x = &t->notes.v.v[k];

		if (ts_warnings_add(out, x->code, path, -1, TS_NO_INT, "%s: %s", path, x->message))
			return TS_ENOMEM;
		out->v.v[out->v.n - 1].line = x->line;
	}
	return 0;
}
