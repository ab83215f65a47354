/*
 * logparse.c - every training-log dialect to one step series.
 *
 * "How fast is it really?" is answered first from the log, and every
 * framework prints its own dialect of the same facts: Megatron's
 * `key: value |` iteration line (and its Bridge, Primus and MT-MegatronLM
 * variants), NeMo's Lightning progress line, Hugging Face's Python dicts,
 * JSON Lines from custom loops. Logs in the wild are prefixed by launchers,
 * coloured, interleaved with other output, cut mid-line by a crash and
 * hard-wrapped when pasted into an issue. This reader classifies each line
 * by its shape (never by file name), reads fields only up to a terminator
 * it has seen, and joins wrapped pieces back only when they complete the
 * grammar; anything else is reported, not guessed.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "trainscope/logs.h"
#include "trainscope/paths.h"
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/lineprefix.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static const char *const format_names[TS_LOG_FORMAT_COUNT] = {
	[TS_LOG_UNKNOWN] = "unknown",
	[TS_LOG_MEGATRON] = "megatron",
	[TS_LOG_BRIDGE] = "megatron-bridge",
	[TS_LOG_NEMO2] = "nemo2",
	[TS_LOG_HF] = "hf-trainer",
	[TS_LOG_PRIMUS] = "primus",
	[TS_LOG_JSONL] = "jsonl",
	[TS_LOG_LIGHTNING] = "lightning-bar",
	[TS_LOG_TITAN] = "torchtitan",
	[TS_LOG_DEEPSPEED] = "deepspeed",
};

const char *ts_log_format_name(int format)
{
	if (format < 0 || format >= TS_LOG_FORMAT_COUNT)
		return "unknown";
	return format_names[format];
}

static const char *const phase_names[TS_PHASE_COUNT] = {
	[TS_PHASE_DATA] = "data",
	[TS_PHASE_FORWARD] = "forward",
	[TS_PHASE_BACKWARD] = "backward",
	[TS_PHASE_FWD_BWD] = "forward-backward",
	[TS_PHASE_OPTIMIZER] = "optimizer",
	[TS_PHASE_COMM] = "comm",
};

const char *ts_phase_name(int phase)
{
	if (phase < 0 || phase >= TS_PHASE_COUNT)
		return "unknown";
	return phase_names[phase];
}

/* speed_metrics() rounds train_steps_per_second to 3 decimals */
#define HF_SPS_HALF_ULP 0.0005

int ts_hf_run_mean(const struct ts_steplog *log, struct ts_hf_run_mean *out)
{
	double r = log->hf_train_runtime_s, sps = log->hf_steps_per_s, lo, hi;

	out->mean_ms = out->low_ms = out->high_ms = NAN;
	out->steps = TS_NO_INT;
	if (!(r > 0) || !isfinite(r) || !(sps >= 0) || !isfinite(sps))
		return -1;
	/* the counts n >= 1 whose n / r rounds to sps, both ends kept so a
	 * count on an edge makes it ambiguous rather than wrong */
	lo = ceil((sps - HF_SPS_HALF_ULP) * r);
	hi = floor((sps + HF_SPS_HALF_ULP) * r);
	if (lo < 1)
		lo = 1;
	if (hi == lo && hi < 9e15) {
		out->steps = (int64_t)hi;
		out->mean_ms = out->low_ms = out->high_ms = r * 1e3 / hi;
		return 0;
	}
	if (sps > 0)
		out->mean_ms = 1e3 / sps;
	out->low_ms = 1e3 / (sps + HF_SPS_HALF_ULP);
	if (sps > HF_SPS_HALF_ULP)
		out->high_ms = 1e3 / (sps - HF_SPS_HALF_ULP);
	return 0;
}

#define MB ((double)(1 << 20))
#define MAX_PIECES 8

/* ------------------------------------------------------------ numbers */

static const double pow10_tab[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
	1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
	1e21, 1e22 };

static int ci_eq(const char *s, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; i < n && lit[i]; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		if (c != lit[i])
			return 0;
	}
	return i == n && !lit[i];
}

/*
 * The whole of s[0..n) as a number. Decimal with at most 19 significant
 * digits and |exponent| <= 22 is converted exactly by one multiply or
 * divide (the classic Clinger fast path, correctly rounded when the digits
 * fit 2^53); anything else goes through strtod. Leading zeros are not
 * significant ("0.000000000000000000012" keeps its 1 and 2). nan/inf words
 * accepted.
 */
static int pnum(const char *s, size_t n, double *out)
{
	size_t i = 0;
	int neg = 0, digits = 0, sig = 0, exp10 = 0, eneg = 0, e = 0;
	uint64_t mant = 0;
	char buf[64];
	char *end;

	while (n && (s[0] == ' ' || s[0] == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0)
		return -1;
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i++;
	}
	if (i < n && (s[i] < '0' || s[i] > '9') && s[i] != '.') {
		if (ci_eq(s + i, n - i, "nan")) {
			*out = NAN;
			return 0;
		}
		if (ci_eq(s + i, n - i, "inf") || ci_eq(s + i, n - i, "infinity")) {
			*out = neg ? -INFINITY : INFINITY;
			return 0;
		}
		return -1;
	}
	/* sig counts digits from the first non-zero one: mant stays 0 through
	 * leading zeros */
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (sig < 19) {
			mant = mant * 10 + (uint64_t)(s[i] - '0');
			sig += mant != 0;
		} else {
			exp10++;
		}
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			if (sig < 19) {
				mant = mant * 10 + (uint64_t)(s[i] - '0');
				sig += mant != 0;
				exp10--;
			}
		}
	}
	if (digits == 0)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		int ed = 0;

		if (j < n && (s[j] == '+' || s[j] == '-'))
			eneg = s[j++] == '-';
		for (; j < n && s[j] >= '0' && s[j] <= '9'; j++, ed++)
			if (e < 10000)
				e = e * 10 + (s[j] - '0');
		if (ed == 0)
			return -1;
		i = j;
		exp10 += eneg ? -e : e;
	}
	if (i != n)
		return -1;
	if (mant < ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
		double v = (double)mant;

		v = exp10 < 0 ? v / pow10_tab[-exp10] : v * pow10_tab[exp10];
		*out = neg ? -v : v;
		return 0;
	}
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, &end);
	return end == buf + n ? 0 : -1;
}

static int pint(const char *s, size_t n, int64_t *out)
{
	double v;
	uint64_t u = 0;
	size_t i;

	/* Plain digits (counts, iterations) need no double: up to 19 digits
	 * and at most 9e15, pnum's value is exactly this integer. */
	for (i = 0; i < n && i < 19 && s[i] >= '0' && s[i] <= '9'; i++)
		u = u * 10 + (uint64_t)(s[i] - '0');
	if (i == n && i > 0 && u <= 9000000000000000u) {
		*out = (int64_t)u;
		return 0;
	}
	if (pnum(s, n, &v) || !isfinite(v) || fabs(v) > 9e15)
		return -1;
	*out = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
	return 0;
}

/* A JSON/dict number as an integer count; TS_NO_INT when it is not one we
 * can hold exactly (non-finite or beyond 2^53). */
static int64_t d2i(double v)
{
	return isfinite(v) && fabs(v) < 9e15 ? (int64_t)v : TS_NO_INT;
}

static int64_t ms_to_ns(double ms)
{
	return isfinite(ms) && ms >= 0 && ms < 9e12 ? (int64_t)(ms * 1e6 + 0.5) : TS_NO_INT;
}

const char *ts_ignored_name(int kind)
{
	static const char *const names[TS_IGN_COUNT] = {
		"nan", "infinite", "negative", "too_large", "no_iteration", "not_a_number"
	};
	return kind >= 0 && kind < TS_IGN_COUNT ? names[kind] : "unknown";
}

/* Kind of an unusable value (limit: the largest usable one), or -1. */
static int unusable(double v, double limit)
{
	if (isnan(v))
		return TS_IGN_NAN;
	if (isinf(v))
		return TS_IGN_INF;
	if (v < 0)
		return TS_IGN_NEGATIVE;
	if (v >= limit)
		return TS_IGN_TOO_LARGE;
	return -1;
}

/* ------------------------------------------------------------ fields */

enum field {
	F_NONE = 0,
	F_CONSUMED, F_SKIPPED_SAMPLES, F_ELAPSED_MS, F_TFLOPS, F_TOKENS_GPU,
	F_ENERGY, F_POWER, F_LR, F_DLR, F_GBS, F_LOSS_SCALE, F_GRAD_NORM,
	F_NUM_ZEROS, F_PARAMS_NORM, F_N_SKIPPED, F_N_NAN, F_HIP_MEM, F_ATTN_LOGIT,
	/* NeMo 2 */
	F_N_LR, F_N_GBS, F_N_STEP, F_N_MAXRES, F_N_MAXALLOC, F_N_LOSS, F_N_STEP_S,
	F_N_CONSUMED, F_N_TFLOPS, F_N_ALLOC,
	/* memory lines */
	F_M_ALLOC, F_M_MAXALLOC, F_M_RES, F_M_MAXRES, F_M_TOTAL,
	F_G_ALLOC, F_G_ACTIVE, F_G_INACTIVE, F_G_RES, F_G_MAXALLOC, F_G_MAXACTIVE,
	F_G_MAXINACTIVE, F_G_MAXRES, F_G_RETIRES, F_G_COUNT,
	F_LOSS /* any other key ending in "loss" */
};

struct keydef {
	const char *name;
	unsigned char len;
	unsigned char id;
};

#define K(s, id) { s, sizeof(s) - 1, id }
static const struct keydef keys[] = {
	K("consumed samples", F_CONSUMED),
	K("skipped samples", F_SKIPPED_SAMPLES),
	K("elapsed time per iteration (ms)", F_ELAPSED_MS),
	K("throughput per GPU (TFLOP/s/GPU)", F_TFLOPS),
	K("Compute per GPU (TFLOP/s/GPU)", F_TFLOPS),
	K("tokens per GPU (tokens/s/GPU)", F_TOKENS_GPU),
	K("energy per GPU (J/iter/GPU)", F_ENERGY),
	K("power per GPU (W/GPU)", F_POWER),
	K("learning rate", F_LR),
	K("decoupled learning rate", F_DLR),
	K("global batch size", F_GBS),
	K("loss scale", F_LOSS_SCALE),
	K("grad norm", F_GRAD_NORM),
	K("num zeros", F_NUM_ZEROS),
	K("params norm", F_PARAMS_NORM),
	K("number of skipped iterations", F_N_SKIPPED),
	K("number of nan iterations", F_N_NAN),
	K("hip mem usage/free/total/usage_ratio", F_HIP_MEM),
	K("max attention logit", F_ATTN_LOGIT),
	K("lr", F_N_LR),
	K("global_batch_size", F_N_GBS),
	K("global_step", F_N_STEP),
	K("max_memory_reserved", F_N_MAXRES),
	K("max_memory_allocated", F_N_MAXALLOC),
	/* MegatronStrategy(log_memory_usage=True): torch.cuda.max_memory_reserved()
	 * and torch.cuda.memory_allocated(), in bytes */
	K("peak_memory_usage", F_N_MAXRES),
	K("memory_allocated", F_N_ALLOC),
	K("tokens_per_sec_per_gpu", F_TOKENS_GPU),
	K("reduced_train_loss", F_N_LOSS),
	K("train_step_timing in s", F_N_STEP_S),
	K("consumed_samples", F_N_CONSUMED),
	K("TFLOPS_per_GPU", F_N_TFLOPS),
	K("allocated", F_M_ALLOC),
	K("max allocated", F_M_MAXALLOC),
	K("reserved", F_M_RES),
	K("max reserved", F_M_MAXRES),
	K("total device memory used", F_M_TOTAL),
	K("mem-allocated-gigabytes", F_G_ALLOC),
	K("mem-active-gigabytes", F_G_ACTIVE),
	K("mem-inactive-gigabytes", F_G_INACTIVE),
	K("mem-reserved-gigabytes", F_G_RES),
	K("mem-max-allocated-gigabytes", F_G_MAXALLOC),
	K("mem-max-active-gigabytes", F_G_MAXACTIVE),
	K("mem-max-inactive-gigabytes", F_G_MAXINACTIVE),
	K("mem-max-reserved-gigabytes", F_G_MAXRES),
	K("mem-alloc-retires", F_G_RETIRES),
	K("mem-allocated-count", F_G_COUNT),
	/* argonne-lcf Megatron-DeepSpeed's "key=value" names */
	K("elapsed_time_per_iteration_ms", F_ELAPSED_MS),
	K("learning_rate", F_LR),
	K("loss_scale", F_LOSS_SCALE),
	K("grad_norm", F_GRAD_NORM),
	K("number_of_skipped_iterations", F_N_SKIPPED),
	K("number_of_nan_iterations", F_N_NAN),
};
#undef K

#define NKEYS (sizeof(keys) / sizeof(keys[0]))
#define KEY_SLOTS 128 /* power of two, under half full */

/*
 * Open-addressed table of the keys, hashed on length, first and last byte
 * (linear probing; the multipliers only keep the known keys from sharing
 * slots): every field of every line is looked up, and one probe with the
 * entry's bytes at hand costs less than walking a list of candidates.
 */
static struct keydef key_tab[KEY_SLOTS];
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
_Static_assert(NKEYS < KEY_SLOTS / 2, "key table must stay under half full");

static inline size_t key_hash(const char *s, size_t n)
{
	return (n * 6 + (unsigned char)s[0] + 2u * (unsigned char)s[n - 1]) & (KEY_SLOTS - 1);
}

static void keys_index(void)
{
	for (size_t i = 0; i < NKEYS; i++) {
		size_t h = key_hash(keys[i].name, keys[i].len);

		while (key_tab[h].name)
			h = (h + 1) & (KEY_SLOTS - 1);
		key_tab[h] = keys[i];
	}
}

static inline uint64_t load8(const char *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return x;
}

static inline uint32_t load4(const char *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return x;
}

/*
 * a[0..n) == b[0..n) by words, the last one overlapping, with one branch
 * on the result: each field of every line compares a key, and neither a
 * memcmp call nor a loop that exits at the first difference is cheap at
 * that rate.
 */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
	if (n >= 8) {
		uint64_t d = (load8(a) ^ load8(b)) | (load8(a + n - 8) ^ load8(b + n - 8));

		for (size_t i = 8; i + 8 < n; i += 8)
			d |= load8(a + i) ^ load8(b + i);
		return d == 0;
	}
	if (n >= 4)
		return ((load4(a) ^ load4(b)) | (load4(a + n - 4) ^ load4(b + n - 4))) == 0;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static int key_id(const char *s, size_t n)
{
	if (n == 0)
		return F_NONE;
	for (size_t h = key_hash(s, n); key_tab[h].name; h = (h + 1) & (KEY_SLOTS - 1))
		if (key_tab[h].len == n && same_bytes(key_tab[h].name, s, n))
			return key_tab[h].id;
	if (n >= 4 && same_bytes(s + n - 4, "loss", 4))
		return F_LOSS;
	return F_NONE;
}

/*
 * First occurrence of lit[0..k) in s[0..n): memchr on the first byte, then
 * memcmp. Used in loops that search again after each miss, where each call
 * must cost only the bytes it passes over (sanitizer memmem interceptors
 * check the whole remaining haystack per call), and on the short prefix of
 * every iteration line, where memmem's setup costs more than the search.
 */
static const char *find(const char *s, size_t n, const char *lit, size_t k)
{
	const char *e = s + n;

	while ((size_t)(e - s) >= k) {
		const char *p = memchr(s, lit[0], (size_t)(e - s) - k + 1);

		if (!p)
			return NULL;
		if (!memcmp(p, lit, k))
			return p;
		s = p + 1;
	}
	return NULL;
}

static inline void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* ------------------------------------------------------------ reader */

enum rec_kind { R_NONE = 0, R_ITER, R_MEM };

/* A progress-bar record waiting for its iteration (parse_bar). */
struct bar_pend {
	struct ts_step st;          /* markers of its time already in flags */
	int64_t counter;            /* the bar's i of i/N */
	int64_t exact;              /* its exact global step, TS_NO_INT none */
	int ign;                    /* its unusable value, -1 none */
};

#define TITAN_RANKS 1024            /* ranks with an interval clock of their own */
#define TITAN_NODE_CLOCKS 256       /* (node past 0, local rank) pairs with one */

struct rd {
	struct ts_steplog *log;
	const char *path;
	int file;
	int file_rank;              /* rank from the file name, or -1 */
	struct ts_sb clean;         /* ANSI-stripped line */
	struct ts_sb pend;          /* pending (possibly wrapped) record */
	int pend_kind;
	int pend_pieces;
	int64_t pend_line;
	uint64_t pend_off;
	int pend_nl;                /* last piece ended with a newline */
	int pend_bar_end;           /* first piece ended with '|' */
	int pend_guess;             /* pending a record whose head is not whole yet */
	uint32_t markers;           /* flags for the next step */
	size_t bar_step;            /* 1 + the last progress-bar record, 0 if none */
	int bar_ign;                /* an unusable value was counted for it */
	/* Lightning bars: global step - the bar's counter lies in [off_lo,
	 * off_hi] for the bar of epoch off_epoch (off_set: a constraint is
	 * known), pinned by off_pins redraws (2: at least two, the first at
	 * global step pin_at, another 2 or more from it; parse_bar); the
	 * redraws whose iteration waits for two */
	int off_set, off_pins;
	int64_t off_lo, off_hi, off_epoch, pin_at;
	TS_VEC(struct bar_pend) bar_pend;
	uint64_t bar_dropped;       /* redraws dropped without an iteration */
	char bar_desc[64];          /* the description of the last redraw read
				     * as a record, through its ':' ("Epoch 0:") */
	size_t bar_desc_n;          /* its length, 0 none (or longer than 64) */
	int have_steptime;
	double steptime_s, steptime_tflops;
	double steptime_res_ms;     /* its print's resolution (step_printed()) */
	int64_t steptime_line;
	int saw_iter;
	int timer_block;            /* inside a "time across ranks (ms):" block */
	size_t last_step;           /* 1 + index of this file's last step, 0 none */
	int64_t ordinal;
	int64_t bar_count;          /* the counter of the last redraw of a bar
				     * without a description (HF Trainer's, which
				     * counts optimizer steps) on this physical
				     * line, -1 none */
	int64_t hf_last;            /* the last HF dict's iteration, TS_NO_INT none */
	int line_rank;              /* the rank a launcher prefix at the start of
				     * this physical line names (after a collector's
				     * timestamp and colours), -1 none: its '\r'
				     * parts after the first have no prefix */
	int line_start;             /* the part read is its physical line's first */
	int64_t replica;            /* the torchx replica of the last line with a
				     * launcher prefix, -1 none (a wrapped piece has
				     * no prefix of its own) */
	/* the job's shape as the file states it anywhere (a launcher line or
	 * a second arguments dump may come after the first record: the ranks
	 * are mapped once the file is read), the first statement of each,
	 * TS_NO_INT none, and its line: nproc_per_node, the world size, the
	 * number of nodes (see_shape) */
	int64_t nproc_stated, world_stated, nnodes_stated;
	int64_t nproc_line, world_line, nnodes_line;
	/* torchrun's launch configuration's "min_nodes" and "max_nodes",
	 * TS_NO_INT none: the number of nodes when they are equal */
	int64_t min_nodes, max_nodes;
	int iter_seen;              /* a JSONL record of the file had an iteration */
	/* torchtitan: per rank (slot 0: none stated), the stamp and step the
	 * rank's next record's interval starts from (its last record,
	 * "Training starts at step N", a validation), TS_NO_INT none; the
	 * job's batch from "Training starts" */
	struct titan_clock { int64_t t0, step0; } titan_clk[TITAN_RANKS + 1]; /* by rank + 1 */
	/* the clocks of local ranks under a torchx prefix of a node past 0
	 * ("retraining/N [defaultK]:", N >= 1): node 0's local rank K is
	 * titan_clk's K, node N's another clock (two nodes' local rank 0
	 * printing into one console are two ranks); the first
	 * TITAN_NODE_CLOCKS pairs seen, later ones share the unknown rank's */
	struct { int64_t replica; int rank; struct titan_clock c; } titan_node[TITAN_NODE_CLOCKS];
	size_t titan_nnode;
	int64_t titan_gbs, titan_seq, titan_total;
	int titan_mfu;              /* a record of the file ended in its mfu */
	/* DeepSpeed: the stamp and global step of the last throughput line
	 * (TS_NO_INT none), the last "step=N, skipped=K" line's values and the
	 * skipped count at the last record; a Megatron arguments block seen
	 * (Megatron-DeepSpeed: its iteration lines are the records) */
	int64_t ds_t0, ds_step0, ds_step, ds_skipped, ds_skipped0, ds_rank;
	size_t ds_first, ds_n;      /* this file's DeepSpeed records in log->steps */
	int file_format;            /* the format of the file's first record, 0 none */
	int non_ds;                 /* the format of the file's first record of another
				     * framework (Megatron-DeepSpeed, HF Trainer with
				     * DeepSpeed: those are the records), 0 none */
	double ds_lr;
	/* DeepSpeed "wall_clock_breakdown" global timer lines (ds_timers):
	 * per phase the ms summed and the lines that had it, and the lines,
	 * since the last line that closed a record; the record the next line
	 * closes (1 + index, 0 none) and its global steps */
	double ds_ph_ms[TS_PHASE_COUNT];
	int64_t ds_ph_n[TS_PHASE_COUNT], ds_ph_lines, ds_ph_span;
	size_t ds_ph_rec;
	/* the pipeline engine record the next p2p timer line belongs to (1 +
	 * index, 0 none) and the global steps its sums cover (0 unknown) */
	size_t ds_p2p_rec;
	int64_t ds_p2p_span;
	int megatron_args;
	size_t records;
	/* Ids of the extra-loss names seen last, tried before the intern
	 * table: every line of a run repeats the same few names. */
	uint32_t recent_extra[4];
	unsigned n_recent_extra;
	int64_t ign_line;           /* first unusable value (line), 0 none */
	int ign_kind;
	int rec_ign;                /* unusable value of the record being read, -1 none */
	double rec_res_ms;          /* the resolution (ms) of the step time of the
				     * record being read, as its reader got it: half
				     * a unit of the last printed digit, a stamp's
				     * over the steps between; 0 a full float (JSONL) */
};

static int note(struct rd *r, int kind, int64_t line, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Count an unusable value; the first one is kept for --strict. */
static void ignore_value(struct rd *r, int kind, int64_t line)
{
	if (kind < 0)
		return;
	if (!r->ign_line) {
		r->ign_line = line;
		r->ign_kind = kind;
	}
	r->log->ignored[kind]++;
}

/* An unusable value of the record being read: counted once per record,
 * when the record is kept (push_step), however often the record is parsed
 * (a wrapped record is tried piece by piece) or the value repeated. */
static void ignore_in_record(struct rd *r, int kind)
{
	if (kind >= 0 && r->rec_ign < 0)
		r->rec_ign = kind;
}

/* Step time from milliseconds, noting an unusable one. */
static int64_t step_ms(struct rd *r, double ms)
{
	ignore_in_record(r, unusable(ms, 9e12));
	return ms_to_ns(ms);
}

/* Step time from a JSONL value ms (a full float): one above zero that
 * rounds to 0 ns is below the nanosecond step times are kept to, which is
 * then its resolution for step_time_rule() (a written 0 has none). */
static int64_t step_jsonl(struct rd *r, double ms)
{
	int64_t ns = step_ms(r, ms);

	if (ns == 0 && ms > 0)
		r->rec_res_ms = 0.5e-6;
	return ns;
}

/* Half a unit of the last digit of the number that starts v[0..n) (its
 * decimals up to the first character that is none), in that number's
 * unit: the most a value printed so can be off by. */
static double print_res(const char *v, size_t n)
{
	const char *e = v + n, *d;
	double res = 0.5;

	while (v < e && *v == ' ')
		v++;
	while (v < e && *v >= '0' && *v <= '9')
		v++;
	if (v < e && *v == '.')
		for (d = v + 1; d < e && *d >= '0' && *d <= '9'; d++)
			res /= 10;
	return res;
}

/* Step time from a printed value ms (ms, printed as v[0..vn) in units of
 * unit_ms), noting the print's resolution for step_time_rule(). */
static int64_t step_printed(struct rd *r, double ms, const char *v, size_t vn, double unit_ms)
{
	r->rec_res_ms = print_res(v, vn) * unit_ms;
	return step_ms(r, ms);
}

/* The step time of the Bridge "Step Time" line held, as step_printed()
 * reads a printed one. */
static int64_t steptime_ns(struct rd *r)
{
	r->rec_res_ms = r->steptime_res_ms;
	return step_ms(r, r->steptime_s * 1e3);
}

/* Step time of a record stamped t after the stamp t0 of the record at
 * step0 (stamps to the millisecond): the interval over the steps between,
 * negative when the clock stepped back (step_time_rule()). TS_NO_INT
 * without both stamps or steps between. */
static int64_t step_stamped(struct rd *r, int64_t t, int64_t t0, int64_t iteration, int64_t step0)
{
	if (t == TS_NO_INT || t0 == TS_NO_INT || step0 == TS_NO_INT || iteration <= step0)
		return TS_NO_INT;
	r->rec_res_ms = 1.0 / (double)(iteration - step0);
	return (t - t0) / (iteration - step0);
}

static int note(struct rd *r, int kind, int64_t line, uint64_t off, const char *fmt, ...)
{
	struct ts_log_note nt = { kind, r->file, line, off, NULL, NULL };
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nt.msg = ts_arena_strndup(&r->log->arena, buf, strlen(buf));
	if (!nt.msg)
		return TS_ENOMEM;
	return TS_VEC_PUSH(r->log->notes, nt);
}

/* The note of a last line cut by the end of the input: cause is what was
 * cut; the note says it was ignored. */
static int note_cut(struct rd *r, int64_t line, uint64_t off, const char *cause)
{
	int rc = note(r, TS_NOTE_TRUNCATED, line, off, "%s; ignored", cause);

	if (!rc) {
		struct ts_log_note *nt = &r->log->notes.v[r->log->notes.n - 1];
		nt->cause = ts_arena_strndup(&r->log->arena, cause, strlen(cause));
		if (!nt->cause)
			rc = TS_ENOMEM;
	}
	return rc;
}

static void step_blank(struct ts_step *s, struct rd *r, int64_t line)
{
	s->iteration = s->step_ns = s->consumed_samples = s->global_batch = TS_NO_INT;
	s->tokens = s->bucket = s->skipped = s->nan_iters = s->train_iters = TS_NO_INT;
	s->loss = s->grad_norm = s->lr = s->loss_scale = s->num_zeros = NAN;
	s->params_norm = s->tflops = s->tokens_per_s_gpu = NAN;
	s->energy_j = s->power_w = NAN;
	s->mem_alloc_bytes = s->mem_max_alloc_bytes = NAN;
	s->mem_reserved_bytes = s->mem_max_reserved_bytes = s->rss_max_bytes = NAN;
	s->overhead_ns = NAN;
	s->t_start_ns = TS_NO_INT;
	for (int k = 0; k < TS_PHASE_COUNT; k++)
		s->phase_ns[k] = TS_NO_INT;
	s->rank = r->file_rank;
	s->replica = -1;
	s->flags = 0;
	s->extra_first = (uint32_t)r->log->extras.n;
	s->extra_n = 0;
	s->file = r->file;
	s->line = line;
	r->rec_ign = -1;
	r->rec_res_ms = 0;
}

static void see_format(struct rd *r, int format)
{
	if (!r->log->format)
		r->log->format = format;
	r->log->formats |= 1u << format;
}

/* The one rule for a step time as a reader got it, applied to every
 * record kept: zero (a value printed as zero, an interval of zero between
 * two stamps, a JSONL zero) is below what the record resolves, or a
 * writer's bug, not a 0 ms step; negative (a negative print, a clock that
 * stepped back between two stamps) is no step time either. Both leave the
 * record untimed (TS_NO_INT, loss and health kept); zeros are counted
 * (logs.h: zero_steptimes), negatives are ignored values of kind
 * TS_IGN_NEGATIVE. */
static void step_time_rule(struct rd *r, struct ts_step *s)
{
	if (s->step_ns == TS_NO_INT || s->step_ns > 0)
		return;
	if (s->step_ns < 0) {
		ignore_in_record(r, TS_IGN_NEGATIVE);
	} else if (!r->log->zero_steptimes++) {
		r->log->zero_file = r->file;
		r->log->zero_line = s->line;
		r->log->zero_iteration = s->iteration;
		r->log->zero_res_ms = r->rec_res_ms;
	}
	s->step_ns = TS_NO_INT;
}

static int push_step(struct rd *r, struct ts_step *s, int format)
{
	if (format != TS_LOG_DEEPSPEED && !r->non_ds)
		r->non_ds = format;
	if (!r->file_format)
		r->file_format = format;
	step_time_rule(r, s);
	ignore_value(r, r->rec_ign, s->line);
	r->rec_ign = -1;
	r->rec_res_ms = 0;
	s->flags |= r->markers;
	r->markers = 0;
	/* its rank is the local rank of the replica's prefix (globalized
	 * once the file is read: replica_ranks) */
	if (s->rank >= 0 && s->rank != r->file_rank && r->replica >= 0)
		s->replica = (int32_t)r->replica;
	see_format(r, format);
	r->records++;
	r->last_step = r->log->steps.n + 1;
	return TS_VEC_PUSH(r->log->steps, *s);
}

static int add_extra(struct rd *r, struct ts_step *s, const char *k, size_t kn, double v)
{
	struct ts_step_extra e;
	const struct ts_intern *names = &r->log->names;
	unsigned i;

	for (i = 0; i < r->n_recent_extra; i++) {
		uint32_t id = r->recent_extra[i];

		if (ts_intern_len(names, id) == kn && !memcmp(ts_intern_str(names, id), k, kn))
			break;
	}
	if (i < r->n_recent_extra) {
		e.name = r->recent_extra[i];
	} else {
		int64_t id = ts_intern(&r->log->names, k, kn);

		if (id < 0)
			return TS_ENOMEM;
		e.name = (uint32_t)id;
		if (r->n_recent_extra < sizeof(r->recent_extra) / sizeof(r->recent_extra[0]))
			r->n_recent_extra++;
		memmove(r->recent_extra + 1, r->recent_extra,
			(r->n_recent_extra - 1) * sizeof(r->recent_extra[0]));
		r->recent_extra[0] = e.name;
	}
	e.value = v;
	if (TS_VEC_PUSH(r->log->extras, e))
		return TS_ENOMEM;
	s->extra_n++;
	return 0;
}

/* Rank from a launcher prefix (ts_launcher_prefix()) at the start of the
 * line, "[rank3]:" or "[rank-3/8]" anywhere before the record. */
static int prefix_rank(const char *s, size_t n)
{
	const char *p;
	size_t i = 0, j;
	int64_t v;

	while (i < n && s[i] == ' ')
		i++;
	if (ts_launcher_prefix(s + i, n - i, &v))
		return (int)v;
	p = find(s, n, "[rank", 5);
	if (p) {
		j = (size_t)(p - s) + 5;
		if (j < n && s[j] == '-')
			j++;
		for (v = 0, i = j; j < n && j - i < 7 && s[j] >= '0' && s[j] <= '9'; j++)
			v = v * 10 + (s[j] - '0');
		if (j > i)
			return (int)v;
	}
	return -1;
}

/*
 * First byte of s..e equal to a or b, or e. The field scan looks for the
 * bar and the colon together, one pass over each field instead of two
 * library calls per byte class; fields are short, so the SSE2 loop runs
 * inline without the call and setup of memchr.
 */
static inline const char *find2(const char *s, const char *e, char a, char b)
{
#if defined(__SSE2__)
	const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);

	while (e - s >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)s);
		int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));

		if (m)
			return s + __builtin_ctz((unsigned)m);
		s += 16;
	}
#endif
	while (s < e && *s != a && *s != b)
		s++;
	return s;
}

/*
 * Scan `key: value |` fields. A field counts only when its terminator was
 * seen: '|' always; end of text only when last_ok (the text ended with a
 * newline and the grammar has no trailing bar). Fills out[], at most cap
 * fields; a segment without a colon is not a field.
 */
struct fieldv {
	int id;
	const char *k, *v;
	size_t kn, vn;
};

static void put_field(struct fieldv *f, const char *seg, const char *colon, const char *end)
{
	/* Trimmed in locals: trimming through f would reload the pointers
	 * after every byte read, which may alias them. */
	const char *k = seg, *v = colon + 1;
	size_t kn = (size_t)(colon - seg), vn = (size_t)(end - colon - 1);

	trim(&k, &kn);
	trim(&v, &vn);
	f->k = k;
	f->kn = kn;
	f->v = v;
	f->vn = vn;
	f->id = key_id(k, kn);
}

static size_t scan_fields(const char *s, size_t n, int last_ok, char sep, struct fieldv *out,
			  size_t cap)
{
	const char *e = s + n, *seg = s, *colon = NULL, *p = s;
	size_t nf = 0;

	while (seg < e && nf < cap) {
		p = find2(p, e, '|', sep);
		if (p < e && *p == sep) {
			if (!colon)
				colon = p;
			p++;
			continue;
		}
		if (p == e && !last_ok)
			break;
		/* p is this segment's bar, or the end of a newline-ended text. */
		if (colon)
			put_field(&out[nf++], seg, colon, p);
		if (p == e)
			break;
		seg = ++p;
		colon = NULL;
	}
	return nf;
}

/* First number of "A/B" (Primus cur/avg pairs; sets *pair) or the value. */
static int pnum_cur(const char *v, size_t n, double *out, int *pair)
{
	const char *slash;

	if (!pnum(v, n, out))
		return 0;
	slash = memchr(v, '/', n);
	if (!slash)
		return -1;
	*pair = 1;
	return pnum(v, (size_t)(slash - v), out);
}

/* "10.5GB/53.5GB/64.0GB/16.4%": first value in GiB. */
static int pgib(const char *v, size_t n, double *out)
{
	const char *slash = memchr(v, '/', n);
	size_t k = slash ? (size_t)(slash - v) : n;

	if (k > 2 && v[k - 2] == 'G' && v[k - 1] == 'B')
		k -= 2;
	if (pnum(v, k, out))
		return -1;
	*out *= 1024.0 * 1024 * 1024;
	return 0;
}

#define MAX_FIELDS 64

enum { CHECK_ONLY = 0, PUSH_IF_COMPLETE, PUSH_ALWAYS };

/*
 * Parse an iteration record; *complete says whether the grammar closed.
 * mode CHECK_ONLY stores nothing; PUSH_IF_COMPLETE stores the step only
 * when complete; PUSH_ALWAYS stores it regardless. Returns 1 when s holds
 * an iteration record, 0 when not, or a negative code.
 */
/* The line ends inside an "iteration <i>/<N>" head: "iteration", spaces,
 * then nothing but digits, spaces and at most one '/' to its end. */
static int iter_head_cut(const char *s, size_t n)
{
	const char *p = NULL, *q, *e = s + n;

	for (const char *x = s; x < e && (q = find(x, (size_t)(e - x), "iteration", 9)); x = q + 9)
		p = q;
	if (!p)
		return 0;
	q = p + 9;
	if (q < e && *q != ' ')
		return 0;
	for (int slash = 0; q < e; q++) {
		if (*q == '/' && !slash++)
			continue;
		if (*q != ' ' && (*q < '0' || *q > '9'))
			return 0;
	}
	return 1;
}

static int parse_iter(struct rd *r, const char *s, size_t n, int nl, int64_t line,
		      int mode, int *complete)
{
	const char *it = NULL, *p;
	size_t off = 0;
	struct fieldv f[MAX_FIELDS];
	struct ts_step st;
	int64_t iter, total;
	size_t nf, i;
	int nemo, primus = 0, rc, have_nan = 0, have_loss = 0, rank, eq = 0;
	const char *after;
	size_t an;

	/* Locate "iteration <i>/<N>" (or "iteration= <i>/<N>", whose fields
	 * are "key=value": the logger of argonne-lcf's Megatron-DeepSpeed) */
	while (off < n && (p = find(s + off, n - off, "iteration", 9))) {
		const char *q = p + 9, *e = s + n, *d0;

		off = (size_t)(q - s);
		eq = q < e && *q == '=';
		q += eq;
		if (q >= e || (*q != ' ' && !(eq && *q >= '0' && *q <= '9')))
			continue;
		while (q < e && *q == ' ')
			q++;
		d0 = q;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (q == d0 || q >= e || *q != '/')
			continue;
		if (pint(d0, (size_t)(q - d0), &iter))
			continue;
		q++;
		while (q < e && *q == ' ')
			q++;
		d0 = q;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (q == d0 || pint(d0, (size_t)(q - d0), &total))
			continue;
		it = p;
		after = q;
		break;
	}
	*complete = 0;
	if (!it)
		return 0;
	nemo = find(s, (size_t)(it - s), "Training epoch", 14) != NULL;
	an = (size_t)(s + n - after);
	nf = scan_fields(after, an, nl && nemo, eq ? '=' : ':', f, MAX_FIELDS);
	step_blank(&st, r, line);
	st.iteration = iter;
	st.train_iters = total;
	rank = prefix_rank(s, (size_t)(it - s));
	if (rank >= 0)
		st.rank = rank;
	for (i = 0; i < nf; i++) {
		double v;
		int64_t iv;
		const char *v0 = f[i].v;
		size_t vn = f[i].vn;

		switch (f[i].id) {
		case F_CONSUMED:
		case F_N_CONSUMED:
			if (!pint(v0, vn, &iv))
				st.consumed_samples = iv;
			break;
		case F_N_STEP:
			/* NeMo 2's "iteration i/N" counts within the epoch and
			 * starts again at 0 in the next one; global_step goes on */
			if (nemo && !pnum(v0, vn, &v) && v >= 0 && v < 9e15 && v == floor(v))
				st.iteration = (int64_t)v;
			break;
		case F_ELAPSED_MS:
			if (!pnum_cur(v0, vn, &v, &primus))
				st.step_ns = step_printed(r, v, v0, vn, 1.0);
			else
				ignore_in_record(r, TS_IGN_NOT_A_NUMBER);
			break;
		case F_N_STEP_S:
			if (!pnum(v0, vn, &v))
				st.step_ns = step_printed(r, v * 1e3, v0, vn, 1e3);
			else
				ignore_in_record(r, TS_IGN_NOT_A_NUMBER);
			break;
		case F_TFLOPS:
		case F_N_TFLOPS:
			if (!pnum_cur(v0, vn, &v, &primus))
				st.tflops = v;
			break;
		case F_TOKENS_GPU:
			if (!pnum_cur(v0, vn, &v, &primus))
				st.tokens_per_s_gpu = v;
			break;
		case F_ENERGY:
			if (!pnum(v0, vn, &v))
				st.energy_j = v;
			break;
		case F_POWER:
			if (!pnum(v0, vn, &v))
				st.power_w = v;
			break;
		case F_LR:
		case F_N_LR:
			if (!pnum(v0, vn, &v))
				st.lr = v;
			break;
		case F_GBS:
		case F_N_GBS:
			if (!pint(v0, vn, &iv))
				st.global_batch = iv;
			break;
		case F_LOSS_SCALE:
			if (!pnum(v0, vn, &v))
				st.loss_scale = v;
			break;
		case F_GRAD_NORM:
			if (!pnum(v0, vn, &v)) {
				st.grad_norm = v;
				if (!isfinite(v))
					st.flags |= TS_STEP_GRAD_NONFINITE;
			}
			break;
		case F_NUM_ZEROS:
			if (!pnum(v0, vn, &v))
				st.num_zeros = v;
			break;
		case F_PARAMS_NORM:
			if (!pnum(v0, vn, &v))
				st.params_norm = v;
			break;
		case F_N_SKIPPED:
			if (!pint(v0, vn, &iv))
				st.skipped = iv;
			break;
		case F_N_NAN:
			if (!pint(v0, vn, &iv)) {
				st.nan_iters = iv;
				have_nan = 1;
			}
			break;
		case F_HIP_MEM:
			if (!pgib(v0, vn, &v))
				st.mem_reserved_bytes = v;
			primus = 1;
			break;
		case F_N_MAXRES:
			if (!pnum(v0, vn, &v))
				st.mem_max_reserved_bytes = v;
			break;
		case F_N_MAXALLOC:
			if (!pnum(v0, vn, &v))
				st.mem_max_alloc_bytes = v;
			break;
		case F_N_ALLOC:
			if (!pnum(v0, vn, &v))
				st.mem_alloc_bytes = v;
			break;
		case F_N_LOSS:
			if (!pnum(v0, vn, &v)) {
				st.loss = v;
				have_loss = 1;
			}
			break;
		case F_LOSS:
			if (pnum(v0, vn, &v))
				break;
			if (f[i].kn == 7 && !memcmp(f[i].k, "lm loss", 7)) {
				st.loss = v;
				have_loss = 1;
			} else if (mode != CHECK_ONLY) {
				rc = add_extra(r, &st, f[i].k, f[i].kn, v);
				if (rc)
					return rc;
			}
			break;
		default:
			break;
		}
	}
	if (nemo)
		*complete = nl;
	else
		*complete = have_nan;
	if (mode == CHECK_ONLY)
		return 1;
	if (mode == PUSH_IF_COMPLETE && !*complete) {
		r->log->extras.n = st.extra_first;
		return 1;
	}
	if (have_loss && !isfinite(st.loss))
		st.flags |= TS_STEP_LOSS_NONFINITE;
	if (!have_loss && !nemo) {
		/* No "lm loss": take the first extra loss as primary if any. */
		if (st.extra_n) {
			st.loss = r->log->extras.v[st.extra_first].value;
			have_loss = 1;
		} else if (st.skipped != TS_NO_INT && st.skipped > 0) {
			st.flags |= TS_STEP_NO_LOSS;
		}
	}
	if (r->have_steptime) {
		if (isnan(st.tflops))
			st.tflops = r->steptime_tflops;
		/* a zero iteration line's too: Bridge's may resolve it */
		if (st.step_ns == TS_NO_INT || st.step_ns == 0)
			st.step_ns = steptime_ns(r);
		r->have_steptime = 0;
		see_format(r, TS_LOG_BRIDGE);
	}
	r->saw_iter = 1;
	return push_step(r, &st, nemo ? TS_LOG_NEMO2 : primus ? TS_LOG_PRIMUS : TS_LOG_MEGATRON) ?
		       TS_ENOMEM : 1;
}

/* "[Rank R] (after N iterations) memory (MB) | ..." and the GB variant. */
static int parse_mem(struct rd *r, const char *s, size_t n, int nl, int emit, int *complete)
{
	const char *p = memmem(s, n, "iterations) memory (", 20);
	const char *q, *a;
	struct fieldv f[MAX_FIELDS];
	struct ts_mem_report m;
	size_t nf, skip = 20;
	int gb, have_maxres = 0;
	int64_t iter = TS_NO_INT;

	if (!p) {
		p = memmem(s, n, "iterations memory (", 19);
		skip = 19;
	}
	*complete = 0;
	if (!p)
		return 0;
	q = p + skip;
	if ((size_t)(s + n - q) < 3)
		return 0;
	gb = q[0] == 'G';
	/* "after N " precedes. */
	a = memmem(s, (size_t)(p - s), "after ", 6);
	if (a)
		pint(a + 6, (size_t)(p - a - 6), &iter);
	m.rank = -1;
	a = memmem(s, (size_t)(p - s), "[Rank ", 6);
	if (a) {
		int64_t rk;
		const char *e = memchr(a, ']', (size_t)(p - a));

		if (e && !pint(a + 6, (size_t)(e - a - 6), &rk) && rk >= 0 && rk < 10000000)
			m.rank = (int32_t)rk;
	}
	m.file = r->file;
	m.iteration = iter;
	m.alloc = m.max_alloc = m.reserved = m.max_reserved = NAN;
	q = memchr(q, '|', (size_t)(s + n - q));
	if (!q)
		return 1;
	nf = scan_fields(q + 1, (size_t)(s + n - q - 1), nl, ':', f, MAX_FIELDS);
	for (size_t i = 0; i < nf; i++) {
		double v;
		double unit = gb ? 1e9 : MB;

		if (pnum(f[i].v, f[i].vn, &v))
			continue;
		switch (f[i].id) {
		case F_M_ALLOC:
		case F_G_ALLOC:
			m.alloc = v * unit;
			break;
		case F_M_MAXALLOC:
		case F_G_MAXALLOC:
			m.max_alloc = v * unit;
			break;
		case F_M_RES:
		case F_G_RES:
			m.reserved = v * unit;
			break;
		case F_M_MAXRES:
		case F_G_MAXRES:
			m.max_reserved = v * unit;
			have_maxres = 1;
			break;
		default:
			break;
		}
	}
	*complete = have_maxres;
	if (!emit || !have_maxres)
		return 1;
	if (gb)
		see_format(r, TS_LOG_BRIDGE);
	return TS_VEC_PUSH(r->log->mem, m) ? TS_ENOMEM : 1;
}

/* "Step Time : 14.26s GPU utilization: 58.2TFLOP/s/GPU" (Bridge). */
static int parse_steptime(struct rd *r, const char *s, size_t n, int64_t line)
{
	const char *p = memmem(s, n, "Step Time :", 11), *e = s + n, *q, *u;
	double secs, tf = NAN, res_ms;

	if (!p)
		return 0;
	q = p + 11;
	while (q < e && *q == ' ')
		q++;
	u = q;
	while (u < e && ((*u >= '0' && *u <= '9') || *u == '.'))
		u++;
	if (u >= e || *u != 's' || pnum(q, (size_t)(u - q), &secs))
		return 0;
	res_ms = print_res(q, (size_t)(u - q)) * 1e3;
	p = memmem(u, (size_t)(e - u), "utilization:", 12);
	if (p) {
		q = p + 12;
		while (q < e && *q == ' ')
			q++;
		u = q;
		while (u < e && ((*u >= '0' && *u <= '9') || *u == '.'))
			u++;
		if (pnum(q, (size_t)(u - q), &tf))
			tf = NAN;
	}
	if (r->have_steptime) {
		/* The previous one found no iteration line to join. */
		if (r->saw_iter) {
			if (note(r, TS_NOTE_UNATTACHED, r->steptime_line, 0,
				 "Step Time line without an iteration line after it"))
				return TS_ENOMEM;
		} else {
			struct ts_step st;

			step_blank(&st, r, r->steptime_line);
			st.iteration = ++r->ordinal;
			st.step_ns = steptime_ns(r);
			st.tflops = r->steptime_tflops;
			st.flags |= TS_STEP_ORDINAL;
			if (push_step(r, &st, TS_LOG_BRIDGE))
				return TS_ENOMEM;
		}
	}
	r->have_steptime = 1;
	r->steptime_s = secs;
	r->steptime_res_ms = res_ms;
	r->steptime_tflops = tf;
	r->steptime_line = line;
	see_format(r, TS_LOG_BRIDGE);
	return 1;
}

/* "Number of parameters in transformer block in billions:  X" and the
 * "most loaded shard" variant. */
static int parse_params(struct rd *r, const char *s, size_t n)
{
	static const char block[] = "Number of parameters in transformer block in billions:";
	static const char shard[] = "Number of parameters in most loaded shard in billions:";
	const char *p = memmem(s, n, block, sizeof(block) - 1);
	double *dst = &r->log->theo_params_b, v;
	size_t k = sizeof(block) - 1;

	if (!p) {
		p = memmem(s, n, shard, sizeof(shard) - 1);
		dst = &r->log->theo_params_shard_b;
		k = sizeof(shard) - 1;
	}
	if (!p)
		return 0;
	p += k;
	if (!pnum(p, (size_t)(s + n - p), &v))
		*dst = v;
	return 1;
}

/* "Theoretical memory footprints: weight and optimizer=X MB, activation=Y MB, total=Z MB" */
static int parse_theory(struct rd *r, const char *s, size_t n)
{
	static const char *const what[3] = { "weight and optimizer=", "activation=", "total=" };
	double *dst[3] = { &r->log->theo_weight_opt_mb, &r->log->theo_activation_mb,
			   &r->log->theo_total_mb };
	const char *p = memmem(s, n, "Theoretical memory footprints:", 30), *e = s + n;

	if (!p)
		return 0;
	for (int i = 0; i < 3; i++) {
		const char *q = memmem(p, (size_t)(e - p), what[i], strlen(what[i])), *u;
		double v;

		if (!q)
			continue;
		q += strlen(what[i]);
		u = q;
		while (u < e && ((*u >= '0' && *u <= '9') || *u == '.'))
			u++;
		if (u + 3 <= e && !memcmp(u, " MB", 3) && !pnum(q, (size_t)(u - q), &v))
			*dst[i] = v;
	}
	return 1;
}

/* ----------------------------------------------------- HF Trainer dicts */

static int hf_key(const char *k, size_t n, const char *lit)
{
	return n == strlen(lit) && !memcmp(k, lit, n);
}

/* A number in its Python wrapper, as some versions print their values:
 * "tensor(1.25, device='cuda:0')", "np.float64(2.119)" (NumPy 2's repr). */
static int hf_wrapped(const char *v, size_t n, double *x)
{
	size_t i = 0, j;

	while (i < n && ((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
			 (v[i] >= '0' && v[i] <= '9') || v[i] == '_' || v[i] == '.'))
		i++;
	if (i == 0 || i >= n || v[i] != '(')
		return -1;
	for (j = ++i; j < n && v[j] != ',' && v[j] != ')'; j++)
		;
	return j < n ? pnum(v + i, j - i, x) : -1;
}

/*
 * {'loss': 2.119, 'grad_norm': 37.6, 'learning_rate': 4.5e-05, 'epoch': 0.25}
 * A dict is the Trainer's when it holds what the Trainer logs: a training
 * record's loss or grad_norm, an evaluation's eval_* keys, or the final
 * summary's train_runtime (a dict of other keys, a configuration printed
 * by the script, is none). rank: the launcher prefix's before it, -1 none
 * (the file's rank).
 */
static int parse_hf(struct rd *r, const char *s, size_t n, int64_t line, int rank)
{
	const char *e = s + n, *p = s + 1;
	struct ts_step st;
	int step = 0, eval = 0, summary = 0, closed = 0, hf_loss = 0;
	double runtime = NAN, sps = NAN;

	step_blank(&st, r, line);
	if (rank >= 0)
		st.rank = rank;
	for (;;) {
		const char *k, *v;
		char qc;
		size_t kn, vn;
		double x;

		while (p < e && (*p == ' ' || *p == ','))
			p++;
		if (p < e && *p == '}') {
			closed = 1;
			break;
		}
		if (p >= e || (*p != '\'' && *p != '"'))
			break;
		qc = *p++;
		k = p;
		while (p < e && *p != qc)
			p++;
		if (p >= e)
			break;
		kn = (size_t)(p - k);
		p++;
		while (p < e && *p == ' ')
			p++;
		if (p >= e || *p != ':')
			break;
		p++;
		while (p < e && *p == ' ')
			p++;
		v = p;
		if (p < e && (*p == '\'' || *p == '"')) {
			char vq = *p++;

			while (p < e && *p != vq)
				p++;
			if (p >= e)
				break;
			p++;
			continue;
		}
		{
			int depth = 0;

			while (p < e && (depth > 0 || (*p != ',' && *p != '}'))) {
				depth += *p == '(' || *p == '[';
				depth -= *p == ')' || *p == ']';
				p++;
			}
		}
		vn = (size_t)(p - v);
		if (pnum(v, vn, &x) && hf_wrapped(v, vn, &x))
			continue;
		if (hf_key(k, kn, "loss"))
			st.loss = x, hf_loss = step = 1;
		else if (hf_key(k, kn, "grad_norm"))
			st.grad_norm = x, step = 1, st.flags |= isfinite(x) ? 0u : TS_STEP_GRAD_NONFINITE;
		else if (hf_key(k, kn, "learning_rate"))
			st.lr = x;
		else if (hf_key(k, kn, "num_tokens"))
			st.tokens = d2i(x);
		else if (hf_key(k, kn, "step"))
			st.iteration = d2i(x);
		else if (kn > 5 && !memcmp(k, "eval_", 5))
			eval = 1;
		else if (hf_key(k, kn, "train_runtime"))
			runtime = x, summary = 1;
		else if (hf_key(k, kn, "train_steps_per_second"))
			sps = x, summary = 1;
	}
	if (!closed || !(step || eval || summary))
		return 0;
	see_format(r, TS_LOG_HF);
	if (summary) {
		r->log->hf_train_runtime_s = runtime;
		r->log->hf_steps_per_s = sps;
		return 1;
	}
	if (eval) {
		r->markers |= TS_STEP_AFTER_EVAL;
		return 1;
	}
	if (hf_loss && !isfinite(st.loss))
		st.flags |= TS_STEP_LOSS_NONFINITE;
	if (st.iteration == TS_NO_INT && r->bar_count >= 0 &&
	    (r->hf_last == TS_NO_INT || r->bar_count > r->hf_last)) {
		/* the Trainer's bar counts optimizer steps and is redrawn
		 * before the dict of step i is written: "i/N" */
		st.iteration = r->bar_count;
	} else if (st.iteration == TS_NO_INT) {
		/* no bar (or one that did not move): the record after the last */
		st.iteration = (r->hf_last == TS_NO_INT ? 0 : r->hf_last) + 1;
		st.flags |= TS_STEP_ORDINAL;
	}
	r->hf_last = st.iteration;
	return push_step(r, &st, TS_LOG_HF) ? TS_ENOMEM : 1;
}

/* ------------------------------------------------------------ torchtitan */

/*
 * torchtitan's logger puts "[titan] 2025-03-10 20:06:28,373 - root - INFO - "
 * (Python logging's asctime: milliseconds after a comma) before each
 * message, and its metrics processor logs step 1 and every log_freq-th
 * step as
 *   step: 10  loss:  7.9000  grad_norm:  1.1000  memory: 42.22GiB(44.44%)
 *   tps: 6,826  tflops: 395.32  mfu: 39.97%
 * (colours stripped; before 2025 no grad_norm, "wps" for tps, no tflops).
 * The record has no step time: its interval's time is between its stamp
 * and the stamp of what reset torchtitan's interval clock (the record
 * before, or a "validate step:" line), over the steps between them, so a
 * record is an interval mean like Megatron's log-interval records. The
 * first record's interval starts at "Training starts at step N, with
 * local batch size B, global batch size G, ..., sequence length S, total
 * steps T", which also gives the tokens of a step (G x S).
 */

/* The stamp at s[0..n) (ts_stamp_parse: torchtitan's and DeepSpeed's
 * "YYYY-MM-DD HH:MM:SS,mmm"), ns; TS_NO_INT when s does not start with one. */
static int64_t py_stamp(const char *s, size_t n)
{
	int64_t t;
	int zoned;

	return ts_stamp_parse(s, n, &t, &zoned) ? t : TS_NO_INT;
}

static void skip_prefix(const char **s, size_t *n);

/* The line's torchtitan stamp: after "[titan] ", else at its start (after
 * a launcher prefix: "[rank0]:2025-04-01 00:25:47,084 - root - ..."). */
static int64_t titan_stamp(const char *s, size_t n)
{
	const char *p = memmem(s, n, "[titan] ", 8);

	if (p)
		return py_stamp(p + 8, (size_t)(s + n - p - 8));
	skip_prefix(&s, &n);
	return py_stamp(s, n);
}

/* A number after "key:" (blanks, thousands commas) at p..e; the end of
 * its digits in *end. 0 on success. */
static int titan_num(const char *p, const char *e, double *x, const char **end)
{
	char buf[48];
	size_t k = 0;

	while (p < e && *p == ' ')
		p++;
	while (p < e && k < sizeof(buf) - 1 && *p != ' ' && *p != '(' && *p != '%' && *p != '/' &&
	       !(*p == 'G' && p + 3 <= e && !memcmp(p, "GiB", 3))) {
		if (*p != ',')
			buf[k++] = *p;
		p++;
	}
	*end = p;
	return k ? pnum(buf, k, x) : -1;
}

/* The value of "key:" in the message m..e (a field starts the message or
 * follows a blank), via titan_num; 0 found. */
static int titan_field(const char *m, const char *e, const char *key, double *x)
{
	size_t k = strlen(key);
	const char *p = m, *end;

	while ((p = memmem(p, (size_t)(e - p), key, k))) {
		if ((p == m || p[-1] == ' ') && p + k < e && p[k] == ':')
			return titan_num(p + k + 1, e, x, &end);
		p += k;
	}
	return -1;
}

/* The interval clock of the rank a line's prefix names: its local rank on
 * the node its torchx prefix names, if any (ranks past TITAN_RANKS, and
 * pairs past TITAN_NODE_CLOCKS, share the unknown rank's). Until 5 Dec 2026
 * it was the local rank's alone, so two nodes' rank 0 shared one clock and
 * each record's interval ran from the other node's last stamp. */
static struct titan_clock *titan_clock_of(struct rd *r, const char *s, size_t n)
{
	int rank = prefix_rank(s, n);

	if (rank >= 0 && r->replica > 0) {
		size_t k;

		for (k = 0; k < r->titan_nnode; k++)
			if (r->titan_node[k].replica == r->replica && r->titan_node[k].rank == rank)
				return &r->titan_node[k].c;
		if (k == TITAN_NODE_CLOCKS)
			return &r->titan_clk[0];
		r->titan_node[k].replica = r->replica;
		r->titan_node[k].rank = rank;
		r->titan_node[k].c.t0 = r->titan_node[k].c.step0 = TS_NO_INT;
		r->titan_nnode++;
		return &r->titan_node[k].c;
	}
	return &r->titan_clk[rank >= 0 && rank < TITAN_RANKS ? rank + 1 : 0];
}

/* "Training starts at step N, with local batch size B, global batch size
 * G, [gradient accumulation steps A, ]sequence length S, total steps T
 * (warmup W)" */
static int parse_titan_start(struct rd *r, const char *s, size_t n)
{
	static const char head[] = "Training starts at step ";
	const char *p = memmem(s, n, head, sizeof(head) - 1), *e = s + n, *end;
	double x;

	if (!p)
		return 0;
	if (titan_num(p + sizeof(head) - 1, e, &x, &end) || !(x >= 1) || x > 1e15)
		return 0;
	{
		struct titan_clock *c = titan_clock_of(r, s, (size_t)(p - s));

		c->step0 = d2i(x) - 1;
		c->t0 = titan_stamp(s, n);
	}
	r->titan_gbs = r->titan_seq = r->titan_total = TS_NO_INT;
	if ((p = memmem(p, (size_t)(e - p), "global batch size ", 18)) &&
	    !titan_num(p + 18, e, &x, &end) && x >= 1)
		r->titan_gbs = d2i(x);
	if ((p = memmem(s, n, "sequence length ", 16)) && !titan_num(p + 16, e, &x, &end) && x >= 1)
		r->titan_seq = d2i(x);
	if ((p = memmem(s, n, "total steps ", 12)) && !titan_num(p + 12, e, &x, &end) && x >= 1)
		r->titan_total = d2i(x);
	/* a (re)start of training, as Megatron's banner is */
	r->markers |= TS_STEP_RESTART;
	return 1;
}

/* 1 when s[0..n) is a torchtitan step or validation record (pushed), or
 * the input's last line cut inside one (noted: its mfu, the field every
 * version prints last, is missing where the file's records had one), 0
 * when not, < 0 on error. */
static int parse_titan(struct rd *r, const char *s, size_t n, int nl, int64_t line, uint64_t off)
{
	const char *e = s + n, *m = NULL, *p = s, *end;
	struct ts_step st;
	struct titan_clock *clk;
	double x, step, loss = 0, gnorm = 0, mem = 0, tflops = 0, tps = 0;
	int64_t t, total;
	int validate = 0, has_loss, has_gnorm, has_mem, has_tflops, has_mfu, has_tps;

	/* the message: "step:" after the logger's " - " or at the line's start
	 * (after a launcher prefix), or "validate step:" */
	while ((p = memmem(p, (size_t)(e - p), "step: ", 6))) {
		if (p - s >= 9 && !memcmp(p - 9, "validate ", 9)) {
			m = p - 9;
			validate = 1;
			break;
		}
		if (p - s >= 2 && !memcmp(p - 2, "- ", 2)) {
			m = p;
			break;
		}
		p += 6;
	}
	if (!m) {
		const char *q = s;
		size_t qn = n;

		skip_prefix(&q, &qn);
		if (qn >= 6 && !memcmp(q, "step: ", 6))
			m = q;
		else
			return 0;
	}
	p = validate ? m + 9 : m;
	if (titan_num(p + 5, e, &step, &end) || !(step >= 0) || step > 1e15)
		return 0;
	/* "step: 640/644 = 99.3789%" (a run's length on the line) */
	total = end < e && *end == '/' && !titan_num(end + 1, e, &x, &end) && x >= step && x <= 1e15 ?
			d2i(x) : TS_NO_INT;
	if (!nl && r->titan_mfu && !validate && !memmem(m, (size_t)(e - m), "mfu:", 4)) {
		int rc = note_cut(r, line, off, "last line cut inside a torchtitan record");

		return rc < 0 ? rc : 1;
	}
	if (!memmem(m, (size_t)(e - m), "  loss:", 7))
		return 0;
	/* each field read once; a record has a rate, its memory or its mfu */
	has_loss = !titan_field(m, e, "loss", &loss);
	has_gnorm = !titan_field(m, e, "grad_norm", &gnorm);
	has_mem = !titan_field(m, e, "memory", &mem);
	has_tflops = !titan_field(m, e, "tflops", &tflops);
	has_mfu = !titan_field(m, e, "mfu", &x);
	has_tps = !titan_field(m, e, "tps", &tps) || !titan_field(m, e, "wps", &tps);
	if (!has_tps && !has_mem && !has_mfu)
		return 0;
	t = titan_stamp(s, n);
	clk = titan_clock_of(r, s, (size_t)(m - s));
	see_format(r, TS_LOG_TITAN);
	if (validate) {
		/* torchtitan restarts its interval clock after a validation */
		clk->t0 = t;
		r->markers |= TS_STEP_AFTER_EVAL;
		return 1;
	}
	if (clk->step0 == d2i(step) && clk->t0 == t && t != TS_NO_INT)
		return 1; /* the same record again (a second handler of the logger) */
	step_blank(&st, r, line);
	st.iteration = d2i(step);
	{
		int rank = prefix_rank(s, (size_t)(m - s));

		if (rank >= 0)
			st.rank = rank;
	}
	if (has_loss) {
		st.loss = loss;
		if (!isfinite(loss))
			st.flags |= TS_STEP_LOSS_NONFINITE;
	}
	if (has_gnorm) {
		st.grad_norm = gnorm;
		if (!isfinite(gnorm))
			st.flags |= TS_STEP_GRAD_NONFINITE;
	}
	if (has_mem && mem >= 0)
		st.mem_max_reserved_bytes = mem * 1073741824.0;   /* GiB */
	if (has_tflops)
		st.tflops = tflops;
	if (has_mfu)
		r->titan_mfu = 1;
	if (has_tps)
		st.tokens_per_s_gpu = tps;
	st.step_ns = step_stamped(r, t, clk->t0, st.iteration, clk->step0);
	if (r->titan_gbs != TS_NO_INT) {
		st.global_batch = r->titan_gbs;
		if (r->titan_seq != TS_NO_INT)
			st.tokens = r->titan_gbs * r->titan_seq;
	}
	st.train_iters = total != TS_NO_INT ? total : r->titan_total;
	clk->t0 = t;
	clk->step0 = st.iteration;
	return push_step(r, &st, TS_LOG_TITAN) ? TS_ENOMEM : 1;
}

/* ------------------------------------------------------------- DeepSpeed */

/*
 * DeepSpeed's engine logs, every steps_per_print global steps, on rank 0
 * ("[asctime] [INFO] [file.py:line:func] " before each message):
 *   [Rank 0] step=10, skipped=2, lr=[0.0001], mom=[(0.9, 0.999)]
 *   epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=25.0,
 *   CurrSamplesPerSec=25.7, MemAllocated=4.32GB, MaxMemAllocated=38.49GB
 * (the throughput line of deepspeed/utils/timer.py; before 2023 it began
 * "0/20, RunningAvgSamplesPerSec="). No line has a step time or a loss
 * (DeepSpeed leaves the loss to the training script). A record is the
 * throughput line: its step time the interval between its stamp and the
 * last one's over the global steps between (the first has none), as a
 * Megatron log-interval record is a mean; CurrSamplesPerSec covers the
 * last step alone, without the data loading, so it is not used; skipped
 * steps are the difference of the cumulative "skipped=" counts; memory
 * in GB of 2^30 bytes (torch.cuda.max_memory_allocated() / 1024**3).
 * The pipeline engine prints no throughput line but a record of its own
 * (parse_ds_pipe()). Megatron-DeepSpeed prints both these lines and
 * Megatron's iteration lines, and the HF Trainer on DeepSpeed these lines
 * and its dicts: after a Megatron arguments block or another framework's
 * record, that framework's records are the log's (ds_drop).
 */

/* Forget the timer lines read since the last record closed. */
static void ds_timers_reset(struct rd *r)
{
	for (int k = 0; k < TS_PHASE_COUNT; k++) {
		r->ds_ph_ms[k] = 0;
		r->ds_ph_n[k] = 0;
	}
	r->ds_ph_lines = 0;
	r->ds_ph_rec = 0;
}

/* A number at p..e (up to a ',' ']' or blank), via pnum; 0 on success. */
static int ds_num(const char *p, const char *e, double *x)
{
	const char *q = p;

	while (q < e && *q != ',' && *q != ']' && *q != ' ' && *q != 'G')
		q++;
	return q > p ? pnum(p, (size_t)(q - p), x) : -1;
}

/* The value after "key=" in s..e, 0 found. */
static int ds_field(const char *s, const char *e, const char *key, double *x)
{
	size_t k = strlen(key);
	const char *p = s;

	while ((p = memmem(p, (size_t)(e - p), key, k))) {
		if ((p == s || p[-1] == ' ' || p[-1] == '/' || p[-1] == ',') && p + k < e &&
		    p[k] == '=')
			return ds_num(p + k + 1, e, x);
		p += k;
	}
	return -1;
}

/* The step line's rank, skipped steps and lr go to the record of its
 * global step. */
static void ds_step_facts(struct rd *r, struct ts_step *st)
{
	if (r->ds_step != st->iteration)
		return;
	if (st->rank < 0 && r->ds_rank != TS_NO_INT)
		st->rank = (int32_t)r->ds_rank;
	st->skipped = r->ds_skipped >= r->ds_skipped0 ? r->ds_skipped - r->ds_skipped0 : 0;
	r->ds_skipped0 = r->ds_skipped;
	st->lr = r->ds_lr;
}

/* Record st, pushed as one of this file's DeepSpeed records. */
static int ds_push(struct rd *r, struct ts_step *st)
{
	if (!r->ds_n)
		r->ds_first = r->log->steps.n;
	r->ds_n++;
	return push_step(r, st, TS_LOG_DEEPSPEED) ? TS_ENOMEM : 0;
}

/*
 * The head of qlora-pipe's record (tdrussell/qlora-pipe, whose
 * CustomPipelineEngine.train_batch prints it through its own log(), after
 * "[%Y-%m-%d %H:%M:%S.mmm] [INFO] [qlora-pipe] "):
 *   step:    10 /  1000 loss: 1.2345 iter time (s): 3.210 ...
 * its "step: N / T " from p, up to e: the step and the run's length, the
 * end of the head returned, NULL when p does not start one.
 */
static const char *qlora_head(const char *p, const char *e, double *step, double *total)
{
	const char *a;

	if (e - p < 6 || memcmp(p, "step: ", 6))
		return NULL;
	for (p += 6; p < e && *p == ' '; p++)
		;
	for (a = p; p < e && *p != ' '; p++)
		;
	if (ds_num(a, p, step))
		return NULL;
	while (p < e && *p == ' ')
		p++;
	if (p == e || *p != '/')
		return NULL;
	for (p++; p < e && *p == ' '; p++)
		;
	for (a = p; p < e && *p != ' '; p++)
		;
	return ds_num(a, p, total) ? NULL : p;
}

/*
 * The pipeline engine's record (PipelineEngine.train_batch,
 * deepspeed/runtime/pipe/engine.py), printed by global rank 0 every
 * steps_per_print global steps:
 *   steps: 100 loss: 2.3456 iter time (s): 1.234 samples/sec: 51.864
 * (the newest engines put "name: %.4f " of each additional loss before
 * "iter time"), and qlora-pipe's subclass of that engine (qlora_head():
 * "step: N / T loss: ..." with " eta (h): %.3f" or " eta: 1h5m" after
 * samples/sec, the same quantities). The loss is the global step's own, from
 * the last stage, averaged over the micro-batches and the data-parallel
 * ranks; iter time the train_batch timer's sum since the last print (reset
 * there) divided by steps_per_print: a mean over the steps since the last
 * print; printed "%0.3f", so "0.000" is a mean under 0.5 ms, not 0
 * (step_printed()). samples/sec is train_batch_size / iter time and adds
 * nothing. The engine's timer lines of the same step come before it, each
 * value summed since the last print: with exactly one global line since the
 * previous record at P, the phases are its values over the N - P steps; the
 * first record of a file (its steps not known: a resumed process) gets
 * none. bwd_allreduce is not kept: this engine turns
 * enable_backward_allreduce off and reduces in _exec_reduce_grads, outside
 * every timer, so the timer wraps no allreduce. The p2p timer line printed
 * right after the record gives its comm (ds_timers()). 1 when s[0..n) is
 * such a line (pushed), 0 when not, < 0 on error.
 */
static int parse_ds_pipe(struct rd *r, const char *s, size_t n, int64_t line)
{
	const char *q = s, *e, *p, *it, *c, *h;
	size_t qn = n;
	struct ts_step st;
	double step = NAN, loss, secs, x, total = NAN;
	int rc, qlora = 0;

	skip_prefix(&q, &qn);
	e = q + qn;
	if (qn >= 7 && !memcmp(q, "steps: ", 7)) {
		h = q + 7;
	} else {
		/* qlora-pipe's, at the line's start or after its logger's "] " */
		h = memmem(q, qn, "step: ", 6);
		if (!h || (h != q && (h - q < 2 || h[-1] != ' ' || h[-2] != ']')) ||
		    !(h = qlora_head(h, e, &step, &total)))
			return 0;
		qlora = 1;
	}
	it = memmem(h, (size_t)(e - h), " iter time (s): ", 16);
	p = memmem(h - 1, (size_t)(e - h + 1), " loss: ", 7);
	/* " samples/sec: " after it: the line goes on past iter time's value */
	if (!it || !p || p > it || !memmem(it, (size_t)(e - it), " samples/sec: ", 14) ||
	    (!qlora && ds_num(h, p, &step)) || !(step >= 0) || step > 1e15 ||
	    ds_num(p + 7, it, &loss) || ds_num(it + 16, e, &secs))
		return 0;
	step_blank(&st, r, line);
	st.iteration = d2i(step);
	if (total >= 1 && total < 1e15)
		st.train_iters = d2i(total);
	{
		int rank = prefix_rank(s, (size_t)(q - s));

		if (rank >= 0)
			st.rank = rank;
	}
	st.loss = loss;
	if (!isfinite(loss))
		st.flags |= TS_STEP_LOSS_NONFINITE;
	st.step_ns = step_printed(r, secs * 1e3, it + 16, (size_t)(e - it - 16), 1e3);
	/* the additional losses: "name: value " up to " iter time" */
	for (p += 7; p < it && *p != ' '; p++)
		;
	while (p < it) {
		while (p < it && *p == ' ')
			p++;
		c = memmem(p, (size_t)(it - p), ": ", 2);
		if (!c || c == p)
			break;
		for (q = c + 2; q < it && *q != ' '; q++)
			;
		if (!pnum(c + 2, (size_t)(q - c - 2), &x) && add_extra(r, &st, p, (size_t)(c - p), x))
			return TS_ENOMEM;
		p = q;
	}
	ds_step_facts(r, &st);
	/* its p2p timer line, right after it, sums the same steps: one print
	 * since P's record, as the global line says */
	r->ds_p2p_span = 0;
	if (r->ds_step0 != TS_NO_INT && st.iteration > r->ds_step0 && r->ds_ph_lines == 1) {
		r->ds_p2p_span = st.iteration - r->ds_step0;
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			if (r->ds_ph_n[k] == 1 && k != TS_PHASE_COMM)
				st.phase_ns[k] = ms_to_ns(r->ds_ph_ms[k] / (double)r->ds_p2p_span);
	}
	ds_timers_reset(r);
	r->ds_t0 = TS_NO_INT;
	r->ds_step0 = st.iteration;
	rc = ds_push(r, &st);
	r->ds_p2p_rec = rc ? 0 : r->log->steps.n;
	return rc < 0 ? rc : 1;
}

/* 1 when s[0..n) is a DeepSpeed throughput line or pipeline engine
 * record (pushed) or step line (kept for the next record), 0 when not,
 * < 0 on error. */
static int parse_deepspeed(struct rd *r, const char *s, size_t n, int64_t line)
{
	const char *e = s + n, *p;
	struct ts_step st;
	double step, x;
	int64_t t;
	int rc;

	if ((rc = parse_ds_pipe(r, s, n, line)))
		return rc;
	if ((p = memmem(s, n, "] step=", 7)) && memmem(s, n, ", skipped=", 10)) {
		/* "[Rank 0] step=10, skipped=2, lr=[...]" */
		if (ds_field(p + 2, e, "step", &step) || !(step >= 0) || step > 1e15 ||
		    ds_field(p + 2, e, "skipped", &x) || !(x >= 0))
			return 0;
		r->ds_step = d2i(step);
		r->ds_skipped = d2i(x);
		r->ds_rank = TS_NO_INT;
		{
			/* log_dist's "[Rank R] " */
			const char *k = memmem(s, (size_t)(p - s), "[Rank ", 6);

			if (k && !ds_num(k + 6, p, &x) && x >= 0 && x < 1e7)
				r->ds_rank = d2i(x);
		}
		r->ds_lr = NAN;
		if ((p = memmem(p, (size_t)(e - p), "lr=[", 4)) && !ds_num(p + 4, e, &x))
			r->ds_lr = x;
		return 1;
	}
	p = memmem(s, n, ", RunningAvgSamplesPerSec=", 26);
	if (!p)
		return 0;
	{
		/* the step counter before it: "global_step=G" or "E/G" */
		const char *g = memmem(s, (size_t)(p - s), "global_step=", 12), *q;

		if (g) {
			if (ds_num(g + 12, p, &step))
				return 0;
		} else {
			q = p;
			while (q > s && q[-1] >= '0' && q[-1] <= '9')
				q--;
			if (q == p || q == s || q[-1] != '/' || ds_num(q, p, &step))
				return 0;
		}
		if (!(step >= 0) || step > 1e15)
			return 0;
	}
	step_blank(&st, r, line);
	st.iteration = d2i(step);
	{
		int rank = prefix_rank(s, (size_t)(p - s));

		if (rank >= 0)
			st.rank = rank;
	}
	{
		/* "[2023-11-07 01:55:23,714] [INFO] ...", after a launcher prefix */
		const char *q = s;
		size_t qn = n;

		skip_prefix(&q, &qn);
		t = qn && q[0] == '[' ? py_stamp(q + 1, qn - 1) : py_stamp(q, qn);
	}
	st.step_ns = step_stamped(r, t, r->ds_t0, st.iteration, r->ds_step0);
	if (!ds_field(p + 2, e, "MaxMemAllocated", &x) && x >= 0)
		st.mem_max_alloc_bytes = x * 1073741824.0;
	if (!ds_field(p + 2, e, "MemAllocated", &x) && x >= 0)
		st.mem_alloc_bytes = x * 1073741824.0;
	ds_step_facts(r, &st);
	/* the timer line of its own global step comes next (ds_timers) */
	r->ds_ph_span = st.iteration - (r->ds_step0 != TS_NO_INT ? r->ds_step0 : 0);
	if (r->ds_ph_span <= 0)
		ds_timers_reset(r);
	r->ds_t0 = t;
	r->ds_step0 = st.iteration;
	if ((rc = ds_push(r, &st)))
		return rc;
	r->ds_ph_rec = r->log->steps.n;
	return 1;
}

/* A log of another framework on DeepSpeed (Megatron-DeepSpeed without
 * its arguments block, a tail; HF Trainer with DeepSpeed): the DeepSpeed
 * records read before its first record of that framework are dropped,
 * that framework's are the records. */
static void ds_drop(struct rd *r)
{
	struct ts_steplog *log = r->log;
	size_t end = r->ds_first + r->ds_n;

	memmove(log->steps.v + r->ds_first, log->steps.v + end,
		(log->steps.n - end) * sizeof(*log->steps.v));
	log->steps.n -= r->ds_n;
	r->records -= r->ds_n;
	if (r->last_step > r->ds_first)
		r->last_step -= r->ds_n;
	if (r->bar_step > r->ds_first)
		r->bar_step -= r->ds_n;
	if (log->format == TS_LOG_DEEPSPEED)
		log->format = r->non_ds;
	if (r->file_format == TS_LOG_DEEPSPEED)
		r->file_format = r->non_ds;
	log->formats &= ~(1u << TS_LOG_DEEPSPEED);
	r->ds_n = 0;
	r->ds_p2p_rec = 0;
	ds_timers_reset(r);
}

/* ---------------------------------------------------------------- JSONL */

enum jkey {
	J_NONE, J_ITER, J_STEP_MS, J_STEP_S, J_LOSS, J_GRAD, J_LR, J_SCALE,
	J_SKIPPED, J_NAN, J_TFLOPS, J_TOKENS, J_TOKENS_GPU, J_RANK, J_BUCKET,
	J_MAXRSS_MB, J_MAXALLOC_B, J_MAXRES_B, J_ALLOC_B, J_RES_B, J_LOGGED_MS,
	J_GBS, J_CONSUMED, J_XLOSS, J_T_START,
	J_PHASE /* J_PHASE + enum ts_phase */
};

static const struct { const char *k; int id; } jkeys[] = {
	{ "iteration", J_ITER }, { "step", J_ITER }, { "global_step", J_ITER },
	{ "iter", J_ITER },
	{ "step_ms", J_STEP_MS }, { "step_time_ms", J_STEP_MS },
	{ "iteration_time_ms", J_STEP_MS }, { "elapsed_time_per_iteration_ms", J_STEP_MS },
	{ "time_ms", J_STEP_MS },
	{ "step_time", J_STEP_S }, { "step_time_s", J_STEP_S }, { "step_s", J_STEP_S },
	{ "train_step_timing", J_STEP_S }, { "iteration_time", J_STEP_S },
	{ "lm_loss", J_LOSS }, { "loss", J_LOSS }, { "train_loss", J_LOSS },
	{ "reduced_train_loss", J_LOSS },
	{ "grad_norm", J_GRAD }, { "lr", J_LR }, { "learning_rate", J_LR },
	{ "loss_scale", J_SCALE }, { "skipped", J_SKIPPED }, { "nan", J_NAN },
	{ "tflops", J_TFLOPS }, { "tflops_per_gpu", J_TFLOPS }, { "TFLOPS_per_GPU", J_TFLOPS },
	{ "tokens", J_TOKENS }, { "num_tokens", J_TOKENS },
	{ "tokens_per_s_per_gpu", J_TOKENS_GPU },
	{ "rank", J_RANK }, { "seq_len", J_BUCKET }, { "bucket", J_BUCKET },
	{ "max_rss_mb", J_MAXRSS_MB },
	{ "max_memory_allocated", J_MAXALLOC_B }, { "max_memory_reserved", J_MAXRES_B },
	{ "memory_allocated", J_ALLOC_B }, { "memory_reserved", J_RES_B },
	{ "logged_elapsed_ms", J_LOGGED_MS }, { "global_batch_size", J_GBS },
	{ "consumed_samples", J_CONSUMED },
	{ "t_start_unix", J_T_START }, { "step_start_unix", J_T_START },
	{ "data_ms", J_PHASE + TS_PHASE_DATA }, { "dataloader_ms", J_PHASE + TS_PHASE_DATA },
	{ "data_time_ms", J_PHASE + TS_PHASE_DATA },
	{ "fwd_ms", J_PHASE + TS_PHASE_FORWARD }, { "forward_ms", J_PHASE + TS_PHASE_FORWARD },
	{ "bwd_ms", J_PHASE + TS_PHASE_BACKWARD }, { "backward_ms", J_PHASE + TS_PHASE_BACKWARD },
	{ "fwd_bwd_ms", J_PHASE + TS_PHASE_FWD_BWD },
	{ "forward_backward_ms", J_PHASE + TS_PHASE_FWD_BWD },
	{ "opt_ms", J_PHASE + TS_PHASE_OPTIMIZER }, { "optimizer_ms", J_PHASE + TS_PHASE_OPTIMIZER },
	{ "comm_ms", J_PHASE + TS_PHASE_COMM },
};

static int jkey_id(const char *k, size_t n)
{
	for (size_t i = 0; i < sizeof(jkeys) / sizeof(jkeys[0]); i++)
		if (strlen(jkeys[i].k) == n && !memcmp(jkeys[i].k, k, n))
			return jkeys[i].id;
	if (n > 5 && !memcmp(k + n - 5, "_loss", 5))
		return J_XLOSS;
	return J_NONE;
}


/* 1 and *v when s[0..n) spells a non-finite number as loggers write it as
 * a string: nan, inf, infinity, any case, with an optional sign. */
static int nonfinite_word(const char *s, size_t n, double *v)
{
	static const char *const words[] = { "nan", "inf", "infinity" };
	int neg = 0;

	if (n && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	for (size_t w = 0; w < sizeof(words) / sizeof(*words); w++) {
		size_t k = strlen(words[w]);

		if (n != k)
			continue;
		for (k = 0; k < n && (s[k] | 0x20) == words[w][k]; k++)
			;
		if (k == n) {
			*v = w ? (neg ? -INFINITY : INFINITY) : NAN;
			return 1;
		}
	}
	return 0;
}

static int parse_jsonl(struct rd *r, const char *s, size_t n, int nl, int64_t line,
		       uint64_t off)
{
	struct ts_json j;
	struct ts_err jerr;
	struct ts_step st;
	int tok, rc = 0, id = J_NONE, have_iter = 0, known = 0;
	double logged = NAN;
	const char *key = NULL;
	size_t keyn = 0;

	step_blank(&st, r, line);
	ts_err_init(&jerr);
	ts_json_init_mem(&j, s, n, TS_JSON_ALLOW_NAN, r->path);
	tok = ts_json_next(&j, &jerr);
	if (tok != TS_JSON_OBJ)
		goto bad;
	for (;;) {
		double v;

		tok = ts_json_next(&j, &jerr);
		if (tok == TS_JSON_OBJ_END)
			break;
		if (tok != TS_JSON_KEY)
			goto bad;
		key = j.s;
		keyn = j.n;
		id = jkey_id(j.s, j.n);
		tok = ts_json_next(&j, &jerr);
		if (tok < 0)
			goto bad;
		if (tok == TS_JSON_OBJ || tok == TS_JSON_ARR) {
			if (ts_json_skip(&j, tok, &jerr))
				goto bad;
			continue;
		}
		if (id != J_NONE && (tok == TS_JSON_TRUE || tok == TS_JSON_FALSE ||
				     tok == TS_JSON_NUM))
			known++;
		if (tok == TS_JSON_TRUE || tok == TS_JSON_FALSE) {
			if (id == J_SKIPPED)
				st.skipped = tok == TS_JSON_TRUE;
			else if (id == J_NAN)
				st.nan_iters = tok == TS_JSON_TRUE;
			continue;
		}
		/* a value written through str() or a NaN-safe encoder: "nan",
		 * "inf", "-Infinity" is that value, not a value to drop (a NaN
		 * grad norm dropped read as a healthy run) */
		if (tok == TS_JSON_STR && id != J_NONE && id != J_ITER &&
		    nonfinite_word(j.s, j.n, &v))
			known++;
		else if (tok == TS_JSON_STR && (id == J_STEP_MS || id == J_STEP_S)) {
			/* str() of a number ("512.3") is that number; any other
			 * string is a step time that is not one */
			if (ts_num_f64(j.s, j.n, &v)) {
				ignore_in_record(r, TS_IGN_NOT_A_NUMBER);
				continue;
			}
			known++;
		} else if (tok != TS_JSON_NUM || ts_num_f64(j.s, j.n, &v))
			continue;
		switch (id) {
		case J_ITER:
			if (isfinite(v) && fabs(v) < 9e15) {
				st.iteration = (int64_t)v;
				have_iter = 1;
				r->iter_seen = 1;
			} else {
				ignore_in_record(r, unusable(v, 9e15));
			}
			break;
		case J_STEP_MS:
			st.step_ns = step_jsonl(r, v);
			break;
		case J_STEP_S:
			st.step_ns = step_jsonl(r, v * 1e3);
			break;
		case J_LOSS:
			st.loss = v;
			if (!isfinite(v))
				st.flags |= TS_STEP_LOSS_NONFINITE;
			break;
		case J_GRAD:
			st.grad_norm = v;
			if (!isfinite(v))
				st.flags |= TS_STEP_GRAD_NONFINITE;
			break;
		case J_LR:
			st.lr = v;
			break;
		case J_SCALE:
			st.loss_scale = v;
			break;
		case J_SKIPPED:
			st.skipped = d2i(v);
			break;
		case J_NAN:
			st.nan_iters = d2i(v);
			break;
		case J_TFLOPS:
			st.tflops = v;
			break;
		case J_TOKENS:
			st.tokens = d2i(v);
			break;
		case J_TOKENS_GPU:
			st.tokens_per_s_gpu = v;
			break;
		case J_RANK:
			if (v >= 0 && v < 1e7)
				st.rank = (int32_t)v;
			break;
		case J_BUCKET:
			st.bucket = d2i(v);
			break;
		case J_MAXRSS_MB:
			st.rss_max_bytes = v * MB;
			break;
		case J_MAXALLOC_B:
			st.mem_max_alloc_bytes = v;
			break;
		case J_MAXRES_B:
			st.mem_max_reserved_bytes = v;
			break;
		case J_ALLOC_B:
			st.mem_alloc_bytes = v;
			break;
		case J_RES_B:
			st.mem_reserved_bytes = v;
			break;
		case J_LOGGED_MS:
			logged = v;
			break;
		case J_T_START:
			if (isfinite(v) && v > 0 && v < 9e9)
				st.t_start_ns = (int64_t)llround(v * 1e9);
			break;
		case J_GBS:
			st.global_batch = d2i(v);
			break;
		case J_CONSUMED:
			st.consumed_samples = d2i(v);
			break;
		case J_XLOSS:
			rc = add_extra(r, &st, key, keyn, v);
			if (rc)
				goto out;
			break;
		default:
			if (id >= J_PHASE && id < J_PHASE + TS_PHASE_COUNT)
				st.phase_ns[id - J_PHASE] = ms_to_ns(v);
			break;
		}
	}
	tok = ts_json_next(&j, &jerr);
	if (tok != TS_JSON_EOF)
		goto bad;
	/* an object with no step key (a minified config or contract, a JSON
	 * document on one line) is not an iteration */
	if (!known) {
		r->log->extras.n = st.extra_first;
		rc = 1;
		goto out;
	}
	if (!have_iter && r->iter_seen) {
		/* numbered by its place it would be iteration 1 again */
		ignore_value(r, TS_IGN_NO_ITER, st.line);
		r->log->extras.n = st.extra_first;
		rc = 1;
		goto out;
	}
	if (!have_iter) {
		st.iteration = ++r->ordinal;
		st.flags |= TS_STEP_ORDINAL;
	}
	if (st.step_ns > 0 && isfinite(logged)) /* none for a zero (push_step) */
		st.overhead_ns = logged * 1e6 - (double)st.step_ns;
	/* a start whose step ends past int64 ns is no start (users add them) */
	if (st.t_start_ns != TS_NO_INT && st.step_ns != TS_NO_INT &&
	    st.step_ns > INT64_MAX - st.t_start_ns) {
		ignore_in_record(r, TS_IGN_TOO_LARGE);
		st.t_start_ns = TS_NO_INT;
	}
	rc = push_step(r, &st, TS_LOG_JSONL) ? TS_ENOMEM : 1;
	goto out;
bad:
	r->log->extras.n = st.extra_first; /* drop extras of the rejected line */
	if (!nl) {
		/* the line was parsed alone: its offsets are made the file's */
		char cause[96];
		snprintf(cause, sizeof(cause),
			 "last line cut mid-object (the input ends inside a JSON value at byte %llu)",
			 (unsigned long long)(off + (jerr.offset > 0 ? (uint64_t)jerr.offset : 0)));
		rc = note_cut(r, line, off, cause);
	} else
		rc = note(r, TS_NOTE_BAD_JSON, line, off + (jerr.offset > 0 ? (uint64_t)jerr.offset : 0),
			  "malformed JSON object skipped: %s", jerr.msg);
	rc = rc ? rc : 1;
out:
	ts_json_release(&j);
	return rc;
}

/* -------------------------------------------------------------- timers */

/* A Megatron timer name as a phase, or -1 (a sub-timer, not kept). */
static int timer_phase(const char *k, size_t n)
{
	static const struct { const char *name; int phase; } t[] = {
		{ "batch-generator", TS_PHASE_DATA }, { "batch generator", TS_PHASE_DATA },
		{ "forward-compute", TS_PHASE_FORWARD }, { "forward", TS_PHASE_FORWARD },
		{ "backward-compute", TS_PHASE_BACKWARD }, { "backward", TS_PHASE_BACKWARD },
		{ "forward-backward", TS_PHASE_FWD_BWD }, { "optimizer", TS_PHASE_OPTIMIZER },
		{ "all-grads-sync", TS_PHASE_COMM }, { "backward-allreduce", TS_PHASE_COMM },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		if (strlen(t[i].name) == n && !memcmp(t[i].name, k, n))
			return t[i].phase;
	return -1;
}

/*
 * One timer "name[ ....]: v" or "name ....: (min, max)". Returns 0 when
 * it has that shape (kept on this file's last step when the name is a
 * phase), -1 when not.
 */
static int timer_entry(struct rd *r, const char *k, size_t kn, const char *v, size_t vn)
{
	const char *comma;
	double x;
	int ph;

	trim(&k, &kn);
	while (kn && (k[kn - 1] == '.' || k[kn - 1] == ' '))
		kn--;
	trim(&v, &vn);
	if (kn == 0)
		return -1;
	for (size_t i = 0; i < kn; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '-' ||
		      k[i] == '_' || k[i] == ' '))
			return -1;
	if (vn >= 2 && v[0] == '(' && v[vn - 1] == ')') {
		/* (min, max): the slowest rank sets the step */
		comma = memchr(v, ',', vn);
		if (!comma || pnum(comma + 1, (size_t)(v + vn - 1 - comma - 1), &x) ||
		    pnum(v + 1, (size_t)(comma - v - 1), &(double){ 0 }))
			return -1;
	} else if (pnum(v, vn, &x)) {
		return -1;
	}
	ph = timer_phase(k, kn);
	if (ph >= 0 && r->last_step)
		r->log->steps.v[r->last_step - 1].phase_ns[ph] = ms_to_ns(x);
	return 0;
}

/*
 * DeepSpeed's "wall_clock_breakdown" lines: SynchronizedWallClockTimer.log
 * (deepspeed/utils/timer.py) prints "time (ms) | name: %.2f | ..." through
 * log_dist ("[Rank 0] ", "rank=0 " before "time (ms)" in older engines), each
 * value the milliseconds its timer summed since it was last printed
 * (reset=True), divided by normalizer 1.0. DeepSpeedEngine.step()
 * (deepspeed/runtime/engine.py) prints at every micro-step the micro
 * timers (fwd_microstep, ...: that micro-step alone) and at every
 * gradient-accumulation boundary, after the step and throughput lines of
 * that global step, the global timers (fwd, bwd, bwd_inner, bwd_allreduce,
 * step; in older engines forward, backward, backward_inner, backward_allreduce,
 * step): that global step's sum over its micro-steps. Neither waits for
 * steps_per_print, so a throughput record at global step N after one at P
 * is owed the global lines of steps P+1..N: those printed before it and
 * the one right after it. The record gets, per phase, the mean of those
 * lines when it has one for each of its N - P steps. The pipeline
 * engine prints its lines only every steps_per_print steps, each the sum
 * since its last print, before its own record (parse_ds_pipe() divides
 * them). The micro lines are not kept: the global line of their step sums
 * them.
 */

/* A global timer's phase (bwd holds bwd_inner and bwd_allreduce: comm is a
 * part of backward), -1 for bwd_inner (a part) and unknown names. */
static int ds_timer_phase(const char *k, size_t n)
{
	static const struct { const char *name; int phase; } t[] = {
		{ "fwd", TS_PHASE_FORWARD }, { "forward", TS_PHASE_FORWARD },
		{ "bwd", TS_PHASE_BACKWARD }, { "backward", TS_PHASE_BACKWARD },
		{ "bwd_allreduce", TS_PHASE_COMM }, { "backward_allreduce", TS_PHASE_COMM },
		{ "step", TS_PHASE_OPTIMIZER },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		if (strlen(t[i].name) == n && !memcmp(t[i].name, k, n))
			return t[i].phase;
	return -1;
}

/* The pipeline engine's p2p timers (PIPE_SEND_OUTPUT_TIMER, ...). */
static int ds_p2p_timer(const char *k, size_t n)
{
	static const char *const t[] = { "pipe_send_output", "pipe_send_grad",
					 "pipe_recv_input", "pipe_recv_grad" };

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		if (strlen(t[i]) == n && !memcmp(t[i], k, n))
			return 1;
	return 0;
}

/* 2 when the fields are DeepSpeed's global timers, 1 its micro timers,
 * 3 the pipeline engine's p2p timers, 0 none of them (Megatron's: no name
 * of theirs has an underscore or is "step"). */
static int ds_timer_kind(const struct fieldv *f, size_t nf)
{
	static const char *const global[] = { "fwd", "bwd", "bwd_inner", "bwd_allreduce",
					      "backward_inner", "backward_allreduce", "step" };
	int ds = 0;

	for (size_t i = 0; i < nf; i++) {
		if (ds_p2p_timer(f[i].k, f[i].kn))
			return 3;
		if (f[i].kn > 10 && !memcmp(f[i].k + f[i].kn - 10, "_microstep", 10))
			return 1;
		if (f[i].kn == 11 && !memcmp(f[i].k, "batch_input", 11))
			return 1;
		for (size_t j = 0; j < sizeof(global) / sizeof(*global); j++)
			if (strlen(global[j]) == f[i].kn && !memcmp(global[j], f[i].k, f[i].kn))
				ds = 2;
	}
	return ds;
}

/* A timer line of kind (ds_timer_kind()): a global line summed toward
 * the record it belongs to, which it closes when that record was read
 * right before it; of a micro line only the pipeline engine's batch_input
 * (data: _exec_load_micro_batch, summed since its last print as the
 * global timers of its line are; the other engine has none); a p2p line
 * (PipelineEngine.train_batch prints it right after its record, each
 * timer summed since the last print: the time global rank 0, the first
 * stage, spent in its blocking sends of activations and receives of
 * gradients, the wait for the next stage included) the comm of the
 * record right before it, over the record's steps. */
static void ds_timers(struct rd *r, const struct fieldv *f, size_t nf, int kind)
{
	struct ts_step *st;
	double x, sum = 0;
	int ph, got = 0;

	if (kind == 3) {
		for (size_t i = 0; i < nf; i++)
			if (ds_p2p_timer(f[i].k, f[i].kn) && !pnum(f[i].v, f[i].vn, &x) && x >= 0) {
				sum += x;
				got = 1;
			}
		if (got && r->ds_p2p_rec && r->ds_p2p_rec == r->last_step && r->ds_p2p_span > 0)
			r->log->steps.v[r->ds_p2p_rec - 1].phase_ns[TS_PHASE_COMM] =
				ms_to_ns(sum / (double)r->ds_p2p_span);
		r->ds_p2p_rec = 0;
		return;
	}
	for (size_t i = 0; i < nf; i++) {
		if (kind == 1)
			ph = f[i].kn == 11 && !memcmp(f[i].k, "batch_input", 11) ? TS_PHASE_DATA : -1;
		else
			ph = ds_timer_phase(f[i].k, f[i].kn);
		if (ph >= 0 && !pnum(f[i].v, f[i].vn, &x) && x >= 0) {
			r->ds_ph_ms[ph] += x;
			r->ds_ph_n[ph]++;
		}
	}
	if (kind == 1)
		return;
	r->ds_ph_lines++;
	if (!r->ds_ph_rec)
		return;
	st = &r->log->steps.v[r->ds_ph_rec - 1];
	if (r->ds_ph_lines == r->ds_ph_span)
		for (int k = 0; k < TS_PHASE_COUNT; k++)
			if (r->ds_ph_n[k] == r->ds_ph_span)
				st->phase_ns[k] = ms_to_ns(r->ds_ph_ms[k] / (double)r->ds_ph_span);
	ds_timers_reset(r);
}

/* Skip a "12: ", "[rank3]: ", "[default3]:" or "[1,3]<stdout>:" launcher prefix. */
static void skip_prefix(const char **s, size_t *n)
{
	const char *p = *s, *e = *s + *n;
	size_t k;

	while (p < e && *p == ' ')
		p++;
	if ((k = ts_launcher_prefix(p, (size_t)(e - p), NULL))) {
		p += k;
	} else if (p < e && *p == '[') {
		const char *q = memchr(p, ']', (size_t)(e - p));

		if (q && q + 1 < e && q[1] == ':' && prefix_rank(p, (size_t)(q + 1 - p)) >= 0)
			p = q + 2;
	}
	*n = (size_t)(e - p);
	*s = p;
}

/* 1 when the line starts (after blanks) with a launcher prefix; *rest and
 * *rn get what follows it. */
static int launcher_prefix(const char *s, size_t n, const char **rest, size_t *rn)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	*rest = s;
	*rn = n;
	skip_prefix(rest, rn);
	return *rest != s;
}

/* The rank of a launcher prefix at the start of s[0..n) (after blanks),
 * -1 none: the rank of a record the prefix stands before. */
static int lead_rank(struct rd *r, const char *s, size_t n)
{
	const char *rest;
	size_t rn;

	if (launcher_prefix(s, n, &rest, &rn))
		return prefix_rank(s, (size_t)(rest - s));
	return r->line_rank;
}

/* The length of s[0..n) without a launcher prefix that ends it (blanks
 * before it dropped too): torchrun --tee copies a worker's output piece by
 * piece as it comes, each piece after its prefix, so a progress bar's
 * redraw that is followed on its '\r' part by the next piece's prefix
 * ("... 10/300 [00:12<04:48, 1.20s/it][default0]:") is still the redraw. */
static size_t prefix_tail(const char *s, size_t n)
{
	const char *p = n ? memrchr(s, '[', n) : NULL;
	size_t k, pn = p ? (size_t)(s + n - p) : 0;

	if (!p || p == s)
		return n;
	/* torchrun's "[default0]:", mpirun's "[1,0]<stdout>:", or the
	 * "[rank0]:" of torchrun --log-line-prefix-template */
	if (ts_launcher_prefix(p, pn, NULL) != pn &&
	    !(pn > 7 && !memcmp(p, "[rank", 5) && !memcmp(p + pn - 2, "]:", 2) &&
	      prefix_rank(p, pn) >= 0))
		return n;
	for (k = (size_t)(p - s); k && (s[k - 1] == ' ' || s[k - 1] == '\t'); k--)
		;
	return k;
}

/* What may precede a record's head at k: nothing, a blank, a timestamp's
 * ']' or a launcher prefix's ':'. */
static int head_context(const char *s, size_t k)
{
	while (k && (s[k - 1] == ' ' || s[k - 1] == '\t'))
		k--;
	return k == 0 || s[k - 1] == ']' || (s[k - 1] == ':' && prefix_rank(s, k) >= 0);
}

/* The line ends inside Megatron's timestamp "[2024-04-06 10:27:27.123456]"
 * or right after it (blanks allowed), the timestamp opening after a blank,
 * a launcher prefix's ':' or at the line's start. */
static int stamp_cut(const char *s, size_t n)
{
	static const char pat[] = "dddd-dd-dd dd:dd:dd";
	const char *open = memrchr(s, '[', n);
	size_t i = 0, m, k;

	if (!open)
		return 0;
	k = (size_t)(open - s);
	if (k && s[k - 1] != ' ' && s[k - 1] != ':')
		return 0;
	open++;
	m = (size_t)(s + n - open);
	for (; i < m && i < sizeof(pat) - 1; i++)
		if (pat[i] == 'd' ? open[i] < '0' || open[i] > '9' : open[i] != pat[i])
			return 0;
	if (i < m && i == sizeof(pat) - 1 && open[i] == '.')
		for (i++; i < m && open[i] >= '0' && open[i] <= '9'; i++)
			;
	if (i < m && i >= sizeof(pat) - 1 && open[i] == ']')
		for (i++; i < m && (open[i] == ' ' || open[i] == '\t'); i++)
			;
	return i == m;
}

/*
 * The line ends inside the preamble or head of a record that a terminal
 * wrapped: inside its timestamp (stamp_cut()), inside the word "iteration"
 * (a proper prefix of it, or the word itself), or after the word among the
 * head's digits, blanks and slash (iter_head_cut()). Only a record's head
 * counts (head_context()), so that "... saved at iteration 100" is not
 * taken. A guess until the next line completes the head (handle_line()).
 */
static int head_wrapped(const char *s, size_t n)
{
	const char *w = NULL, *q, *t;
	size_t k = n;

	if (stamp_cut(s, n))
		return 1;
	if (launcher_prefix(s, n, &t, &k)) {
		while (k && (*t == ' ' || *t == '\t'))
			t++, k--;
		if (!k)
			return 1;   /* a launcher prefix and nothing else */
	}
	k = n;
	if (iter_head_cut(s, n)) {
		for (const char *x = s; x < s + n && (q = find(x, (size_t)(s + n - x), "iteration", 9));
		     x = q + 9)
			w = q;
	} else {
		while (k && s[k - 1] >= 'a' && s[k - 1] <= 'z')
			k--;
		if (k == n || n - k > 9 || memcmp(s + k, "iteration", n - k) != 0)
			return 0;
		w = s + k;
	}
	k = (size_t)(w - s);
	return (k == 0 || s[k - 1] == ' ') && head_context(s, k);
}

/* Megatron timer lines (logs.h) and DeepSpeed's (ds_timers: of DeepSpeed
 * records only, a line cut by the end of the input not read); 1 when s is
 * one, else 0. */
static int parse_timers(struct rd *r, const char *s, size_t n, int nl)
{
	const char *p = memmem(s, n, "time (ms) |", 11), *colon;
	struct fieldv f[MAX_FIELDS];
	size_t nf;
	int ds;

	if (p) {
		p += 11;
		nf = scan_fields(p, (size_t)(s + n - p), 1, ':', f, MAX_FIELDS);
		r->timer_block = 0;
		ds = ds_timer_kind(f, nf);
		if (ds && nl && !r->megatron_args && !r->non_ds)
			ds_timers(r, f, nf, ds);
		if (ds)
			return 1;
		for (size_t i = 0; i < nf; i++)
			timer_entry(r, f[i].k, f[i].kn, f[i].v, f[i].vn);
		return 1;
	}
	if (memmem(s, n, "time across ranks (ms):", 23)) {
		r->timer_block = 1;
		return 1;
	}
	if (!r->timer_block)
		return 0;
	skip_prefix(&s, &n);
	colon = memchr(s, ':', n);
	if (colon && !timer_entry(r, s, (size_t)(colon - s), colon + 1, (size_t)(s + n - colon - 1)))
		return 1;
	r->timer_block = 0;
	return 0;
}

/* ------------------------------------------------------- line dispatch */

static int is_iter_start(const char *s, size_t n)
{
	const char *p = find(s, n, "iteration ", 10);

	while (p) {
		const char *q = p + 10, *e = s + n;

		while (q < e && *q == ' ')
			q++;
		if (q < e && *q >= '0' && *q <= '9')
			return 1;
		p = find(q, (size_t)(e - q), "iteration ", 10);
	}
	return 0;
}

/* A line that starts a record of its own (never a wrapped continuation). */
static int is_record_start(const char *s, size_t n)
{
	const char *b = s, *e = s + n;

	while (b < e && *b == ' ')
		b++;
	if (b < e && *b == '{')
		return 1;
	return is_iter_start(s, n) || memmem(s, n, "iterations) memory (", 20) ||
	       memmem(s, n, "iterations memory (", 19) || memmem(s, n, "Step Time :", 11) ||
	       memmem(s, n, "time (ms) |", 11) || memmem(s, n, "time across ranks (ms):", 23);
}

static int is_blank_prefix_only(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i < n && s[i] == ':')
		i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i == n;
}

static void scan_markers(struct rd *r, const char *s, size_t n)
{
	static const char *const prof[] = { "Capture range ended", ".nsys-rep",
		"torch.profiler", "export_chrome_trace", "Saved profiler trace" };
	static const char *const ckpt[] = { "saving checkpoint", "saved checkpoint",
		"Saving checkpoint", "Saved checkpoint", "Saving the checkpoint" };
	static const char *const eval[] = { "validation loss", "Evaluating",
		"evaluation" };
	/* a process (re)starting training: Megatron's banner before its first
	 * step and its checkpoint load, Lightning's state restore */
	static const char *const start[] = { "[before the start of training step]",
		"successfully loaded checkpoint from", "Restored all states from the checkpoint" };

	for (size_t i = 0; i < sizeof(prof) / sizeof(*prof); i++)
		if (memmem(s, n, prof[i], strlen(prof[i])))
			r->markers |= TS_STEP_AFTER_PROFILER;
	for (size_t i = 0; i < sizeof(ckpt) / sizeof(*ckpt); i++)
		if (memmem(s, n, ckpt[i], strlen(ckpt[i])))
			r->markers |= TS_STEP_AFTER_CHECKPOINT;
	for (size_t i = 0; i < sizeof(eval) / sizeof(*eval); i++)
		if (memmem(s, n, eval[i], strlen(eval[i])))
			r->markers |= TS_STEP_AFTER_EVAL;
	for (size_t i = 0; i < sizeof(start) / sizeof(*start); i++)
		if (memmem(s, n, start[i], strlen(start[i])))
			r->markers |= TS_STEP_RESTART;
	if (r->records && memmem(s, n, "- arguments -", 13))
		r->markers |= TS_STEP_AFTER_ARGS;
}

/* Check whether the pending text parses as a complete record. */
static int pend_complete(struct rd *r)
{
	int complete = 0;

	if (r->pend_kind == R_ITER)
		parse_iter(r, r->pend.buf, r->pend.len, r->pend_nl, r->pend_line, CHECK_ONLY,
			   &complete);
	else
		parse_mem(r, r->pend.buf, r->pend.len, r->pend_nl, 0, &complete);
	return complete;
}

static int pend_emit(struct rd *r, int joined)
{
	int complete = 0, rc;
	size_t before = r->log->steps.n;

	if (r->pend_kind == R_ITER)
		rc = parse_iter(r, r->pend.buf, r->pend.len, r->pend_nl, r->pend_line,
				PUSH_ALWAYS, &complete);
	else
		rc = parse_mem(r, r->pend.buf, r->pend.len, r->pend_nl, 1, &complete);
	if (rc < 0)
		return rc;
	if (joined) {
		r->log->joined++;
		if (r->log->steps.n > before)
			r->log->steps.v[r->log->steps.n - 1].flags |= TS_STEP_JOINED;
		return note(r, TS_NOTE_JOINED, r->pend_line, r->pend_off,
			    "%s record hard-wrapped over %d lines; joined",
			    r->pend_kind == R_ITER ? "iteration" : "memory", r->pend_pieces);
	}
	return 0;
}

/* Finish a pending record that no further piece will complete. */
static int pend_finish(struct rd *r)
{
	int rc = 0;

	if (!r->pend_kind)
		return 0;
	if (r->pend_guess) {
		/* the line only looked like the start of a wrapped record */
		scan_markers(r, r->pend.buf, r->pend.len);
		r->pend_guess = 0;
	} else if (pend_complete(r)) {
		rc = pend_emit(r, r->pend_pieces > 1);
	} else if (r->pend_pieces == 1 && r->pend_nl && r->pend_bar_end && r->pend_kind == R_ITER) {
		/* A complete line of a build that prints no NaN counter. */
		rc = pend_emit(r, 0);
	} else if (!r->pend_nl) {
		/* only the last line lacks its newline: the input was cut */
		rc = note_cut(r, r->pend_line, r->pend_off,
			      r->pend_kind == R_ITER ? "last line cut inside an iteration record"
						     : "last line cut inside a memory record");
	} else {
		r->log->broken++;
		rc = note(r, TS_NOTE_BROKEN, r->pend_line, r->pend_off,
			  "%s record incomplete (wrapped or cut); dropped",
			  r->pend_kind == R_ITER ? "iteration" : "memory");
	}
	r->pend_kind = R_NONE;
	ts_sb_reset(&r->pend);
	return rc;
}

/*
 * Append a wrapped piece. Inside a value the wrap split a token: join
 * without a space. Inside a key the wrap may have eaten a space ("global
 * batch / size") or split a word ("number of s / kipped"): take whichever
 * spelling is a known key.
 */
static void pend_append(struct rd *r, const char *s, size_t n)
{
	const char *a = r->pend.buf, *bar;
	size_t an = r->pend.len, i;
	/* a wrap inside the record's head: blanks at the wrap are one blank,
	 * none means the wrap split the word or a number */
	int head = head_wrapped(a, an);
	int blank = (an && (a[an - 1] == ' ' || a[an - 1] == '\t')) ||
		    (n && (*s == ' ' || *s == '\t'));

	while (an && (a[an - 1] == ' ' || a[an - 1] == '\t'))
		an--;
	r->pend.len = an;
	r->pend.buf[an] = '\0';
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (blank) {
		/* the wrap fell on a blank, which a terminal keeps */
		ts_sb_addc(&r->pend, ' ');
	} else if (head) {
		/* nothing between the pieces of a split word or number */
	} else if (an && a[an - 1] != '|' && !(n && *s == '|')) {
		bar = NULL;
		for (i = an; i-- > 0;)
			if (a[i] == '|') {
				bar = a + i;
				break;
			}
		{
			const char *seg = bar ? bar + 1 : a, *colon_r;
			size_t segn = (size_t)(a + an - seg);

			if (!memchr(seg, ':', segn)) {
				char key[160];
				size_t kl, rn;
				const char *ks = seg;
				size_t kn = segn;

				trim(&ks, &kn);
				colon_r = memchr(s, ':', n);
				rn = colon_r ? (size_t)(colon_r - s) : 0;
				if (colon_r && kn + rn + 1 < sizeof(key)) {
					memcpy(key, ks, kn);
					memcpy(key + kn, s, rn);
					kl = kn + rn;
					if (key_id(key, kl) == F_NONE) {
						memcpy(key + kn + 1, s, rn);
						key[kn] = ' ';
						if (key_id(key, kl + 1) != F_NONE)
							ts_sb_addc(&r->pend, ' ');
					}
				} else {
					ts_sb_addc(&r->pend, ' ');
				}
			}
		}
	} else {
		ts_sb_addc(&r->pend, ' ');
	}
	ts_sb_add(&r->pend, s, n);
	r->pend_pieces++;
}

static int pend_start(struct rd *r, int kind, const char *s, size_t n, int nl,
		      int64_t line, uint64_t off)
{
	size_t k = n;

	ts_sb_reset(&r->pend);
	ts_sb_add(&r->pend, s, n);
	r->pend_kind = kind;
	r->pend_pieces = 1;
	r->pend_line = line;
	r->pend_off = off;
	r->pend_nl = nl;
	while (k && (s[k - 1] == ' ' || s[k - 1] == '\t'))
		k--;
	r->pend_bar_end = k && s[k - 1] == '|';
	return r->pend.failed ? TS_ENOMEM : 0;
}

static const char *strip_ansi(struct rd *r, const char *s, size_t *n)
{
	if (!ts_ansi_strip(&r->clean, s, *n))
		return s;
	*n = r->clean.len;
	return r->clean.buf;
}

/* ------------------------------------------------- progress bars */

/* The value of "key=" among a bar's postfix items ", key=value". */
static int bar_item(const char *in, size_t n, const char *key, const char **v, size_t *vn)
{
	size_t kn = strlen(key);
	const char *e = in + n, *p = in;

	while ((p = find(p, (size_t)(e - p), key, kn))) {
		const char *q = p + kn;

		if ((p == in || (p >= in + 2 && p[-2] == ',' && p[-1] == ' ')) && q < e && *q == '=') {
			const char *c = find(q + 1, (size_t)(e - q - 1), ", ", 2);

			*v = q + 1;
			*vn = (size_t)((c ? c : e) - *v);
			return 1;
		}
		p = q;
	}
	return 0;
}

/* A bar item's number: 1 with *x set when the item is there and is one.
 * Exact integers (counts) are refused when tqdm wrote them with an
 * exponent: it keeps 3 significant digits (1.63e+6). */
static int bar_num(const char *in, size_t n, const char *key, int exact, double *x)
{
	const char *v;
	size_t vn;

	if (!bar_item(in, n, key, &v, &vn) || pnum(v, vn, x))
		return 0;
	if (exact && (memchr(v, 'e', vn) || memchr(v, 'E', vn) || !(*x >= 0) || *x > 9e15 ||
		      *x != (double)(int64_t)*x))
		return 0;
	return 1;
}

/* The bar's counter, i of "{i}/{total} [" or "{i}it [": the count
 * ts_progress_bar found between the blank before it and the blank before
 * the bracket whose content starts at in; and the epoch of a "Epoch E"
 * before it (-1 when none). 1 with *i set, 0 when the count is not plain
 * digits (unit-scaled "1.2k"). */
static int bar_counter(const char *s, const char *in, int64_t *i, int64_t *epoch)
{
	const char *p = in - 2, *t = p, *slash, *ep;
	size_t k, d = 0;

	while (t > s && t[-1] != ' ')
		t--;
	k = (size_t)(p - t);
	if (k > 2 && p[-2] == 'i' && p[-1] == 't')
		k -= 2;
	else if ((slash = memchr(t, '/', k)))
		k = (size_t)(slash - t);
	while (d < k && t[d] >= '0' && t[d] <= '9')
		d++;
	if (!k || d < k || pint(t, k, i))
		return 0;
	*epoch = -1;
	if ((ep = find(s, (size_t)(t - s), "Epoch ", 6))) {
		for (d = 0; ep + 6 + d < t && ep[6 + d] >= '0' && ep[6 + d] <= '9'; d++)
			;
		if (d && pint(ep + 6, d, epoch))
			*epoch = -1;
	}
	return 1;
}

/*
 * The integers tqdm prints as v[0..vn) when it writes a count in exponent
 * form: '{:.3g}' with "e+0" shortened to "e+" ("1.23e+5", "1.1e+4",
 * "1e+5"), used when shorter than the plain number (every count from 1e5
 * on, and rounder ones from 1e4). '{:.3g}' rounds half to even, so q of
 * the 3 digits covers q*u -+ u/2 with the halves when q is even, u =
 * 10^(exponent-2): 1 with [*lo, *hi] set, 0 when v is no such form.
 */
static int bar_exp_range(const char *v, size_t vn, int64_t *lo, int64_t *hi)
{
	size_t k = 0;
	int nd = 1, ed = 0, e = 0;
	int64_t q, u = 1;

	if (vn < 4 || v[0] < '1' || v[0] > '9')
		return 0;
	q = v[k++] - '0';
	if (v[k] == '.') {
		k++;
		while (k < vn && nd < 3 && v[k] >= '0' && v[k] <= '9')
			q = q * 10 + (v[k++] - '0'), nd++;
		if (nd == 1)
			return 0;
	}
	if (k + 2 >= vn || v[k] != 'e' || v[k + 1] != '+')
		return 0;
	for (k += 2; k < vn && ed < 3 && v[k] >= '0' && v[k] <= '9'; k++)
		e = e * 10 + (v[k] - '0'), ed++;
	if (k != vn || e < 2 || e > 15)
		return 0;
	for (; nd < 3; nd++)
		q *= 10;
	for (int j = 2; j < e; j++)
		u *= 10;
	*lo = *hi = q * u;
	if (u > 1) {
		*lo -= u / 2 - (q & 1);
		*hi += u / 2 - (q & 1);
	}
	return 1;
}

/* What a redraw's record keeps of the one it replaces: the markers read
 * before the first drawing. */
#define BAR_KEPT_FLAGS (TS_STEP_AFTER_PROFILER | TS_STEP_AFTER_CHECKPOINT | TS_STEP_AFTER_EVAL | \
			TS_STEP_RESTART)

/* The bar record st: a redraw of the record just read (the same
 * iteration, nothing read between) replaces it, else it is pushed. ign is
 * its unusable value (-1 none). */
static int bar_push(struct rd *r, struct ts_step *st, int ign)
{
	r->rec_ign = ign;
	if (r->bar_step && r->bar_step == r->log->steps.n &&
	    r->log->steps.v[r->bar_step - 1].iteration == st->iteration) {
		struct ts_step *prev = &r->log->steps.v[r->bar_step - 1];

		st->flags |= r->markers | (prev->flags & BAR_KEPT_FLAGS);
		r->markers = 0;
		/* one record: at most one unusable value counted for it */
		if (!r->bar_ign)
			ignore_value(r, r->rec_ign, st->line);
		r->bar_ign |= r->rec_ign >= 0;
		r->rec_ign = -1;
		*prev = *st;
		return 0;
	}
	r->bar_ign = r->rec_ign >= 0;
	if (push_step(r, st, TS_LOG_LIGHTNING))
		return TS_ENOMEM;
	r->bar_step = r->log->steps.n;
	return 0;
}

/* The waiting redraws, in order: with known set, each is iteration
 * counter + off; else those with an exact global step are that
 * iteration and the others are dropped (counted as records without
 * one). The markers read since the last of them stay for the next. */
static int bar_settle(struct rd *r, int known, int64_t off)
{
	uint32_t later = r->markers;

	for (size_t k = 0; k < r->bar_pend.n; k++) {
		struct bar_pend *p = &r->bar_pend.v[k];

		if (known) {
			p->st.iteration = p->counter + off;
		} else if (p->exact != TS_NO_INT) {
			p->st.iteration = p->exact;
		} else {
			ignore_value(r, TS_IGN_NO_ITER, p->st.line);
			r->bar_dropped++;
			continue;
		}
		r->markers = 0;
		if (bar_push(r, &p->st, p->ign))
			return TS_ENOMEM;
	}
	r->bar_pend.n = 0;
	r->markers = later;
	return 0;
}

/* bar_settle without an offset, which is forgotten. */
static int bar_reset(struct rd *r)
{
	r->off_set = 0;
	r->off_pins = 0;
	return bar_settle(r, 0, 0);
}

/* st waits for its iteration (exact: its exact global step, TS_NO_INT
 * none); a redraw of the same count replaces the last waiting record. */
static int bar_wait(struct rd *r, struct ts_step *st, int64_t counter, int64_t exact)
{
	struct bar_pend *last = r->bar_pend.n ? &r->bar_pend.v[r->bar_pend.n - 1] : NULL;

	st->flags |= r->markers;
	r->markers = 0;
	if (last && last->counter == counter) {
		st->flags |= last->st.flags & BAR_KEPT_FLAGS;
		last->st = *st;
		last->exact = exact;
		if (last->ign < 0)
			last->ign = r->rec_ign;
	} else {
		struct bar_pend p = { *st, counter, exact, r->rec_ign };

		if (TS_VEC_PUSH(r->bar_pend, p))
			return TS_ENOMEM;
	}
	r->rec_ign = -1;
	return 0;
}

/* A tqdm bar without a description ("  5%|##  | 10/200 [...]"): the HF
 * Trainer's; data and evaluation bars carry one ("Map: 100%|...",
 * "Epoch 0: ..."). A launcher prefix before it ("[rank0]:", "0: ") is
 * no description. */
static int bare_bar(const char *s, size_t n)
{
	size_t i = 0, d;

	skip_prefix(&s, &n);
	while (i < n && s[i] == ' ')
		i++;
	for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	return i > d && i - d <= 3 && i + 1 < n && s[i] == '%' && s[i + 1] == '|';
}

/* Keeps the description of the bar redraw s whose bracket's content
 * starts at in: after a launcher prefix, through the ':' of the first ": "
 * before the bracket (tqdm writes "{desc}: {pct}%|"); none when there is
 * none. */
static void bar_desc_keep(struct rd *r, const char *s, const char *in)
{
	size_t n = (size_t)(in - s);
	const char *d;

	skip_prefix(&s, &n);
	d = find(s, n, ": ", 2);
	r->bar_desc_n = d && (size_t)(d + 1 - s) <= sizeof(r->bar_desc) ? (size_t)(d + 1 - s) : 0;
	memcpy(r->bar_desc, s, r->bar_desc_n);
}

/* 1 when s[0..n) starts with the description d[0..dn), a run of digits
 * standing for any run of digits (the epoch's number changes). */
static int desc_head(const char *d, size_t dn, const char *s, size_t n)
{
	size_t i = 0, j = 0;

	while (i < dn) {
		if (d[i] >= '0' && d[i] <= '9') {
			size_t j0 = j;

			while (i < dn && d[i] >= '0' && d[i] <= '9')
				i++;
			while (j < n && s[j] >= '0' && s[j] <= '9')
				j++;
			if (j == j0)
				return 0;
		} else if (j < n && s[j] == d[i]) {
			i++;
			j++;
		} else {
			return 0;
		}
	}
	return 1;
}

/*
 * A Lightning progress bar whose postfix carries global_step (NeMo 1 and
 * any module logging it with prog_bar=True): one step record per redraw,
 * its iteration the global step. A redraw of the step just read (the
 * same global step, nothing read between) replaces its record. The loss
 * is reduced_train_loss (NeMo) or train_loss, never Lightning's "loss", a
 * running mean; the step time train_step_timing in s (NeMo's timing
 * callback).
 *
 * tqdm writes a global step in exponent form with 3 significant digits
 * from 1e4 on (bar_exp_range): that is a range, not an iteration. The
 * bar's counter i (of i/N) gives it: global step - i is the same for
 * every redraw of one epoch's bar when the bar counts optimizer steps. A
 * redraw pins that offset when it is exact, or when its range starts
 * where the ranges before it end (the first redraw after a rounding step,
 * 1.23e+5 then 1.24e+5), at that global step. One pin, or two at
 * neighbouring steps (one step's transition), is not trusted: a bar
 * counting micro-batches (gradient accumulation: four counts a step) is
 * pinned so too, wrongly. A second pin at the same offset 2 or more
 * global steps from the first (an exact step after the next, the next
 * rounding step 1000 steps on) shows the bar counts steps; under
 * accumulation the offset is contradicted first. Until then the redraws
 * wait (bar_wait); a range that contradicts the offset (a restart,
 * accumulation), a new epoch or the end of the log settles them without
 * it: those with an exact global step are records still, the others are
 * dropped, counted as records without an iteration. Returns 1 when s was
 * such a bar, 0 when not, < 0 on error.
 */
static int parse_bar(struct rd *r, const char *s, size_t n, int64_t line)
{
	const char *in, *v;
	size_t in_n, vn;
	struct ts_step st;
	double x, g = 0;
	int64_t i = 0, epoch = -1, lo = 0, hi = 0;
	int exact, counted;

	if (!ts_progress_bar(s, n, &in, &in_n))
		return 0;
	exact = bar_num(in, in_n, "global_step", 1, &g);
	counted = bar_counter(s, in, &i, &epoch);
	if (counted && bare_bar(s, n))
		r->bar_count = i;
	if (!exact && !(counted && bar_item(in, in_n, "global_step", &v, &vn) &&
			bar_exp_range(v, vn, &lo, &hi)))
		return 0;
	bar_desc_keep(r, s, in);
	step_blank(&st, r, line);
	if (bar_num(in, in_n, "reduced_train_loss", 0, &x) || bar_num(in, in_n, "train_loss", 0, &x)) {
		st.loss = x;
		if (!isfinite(x))
			st.flags |= TS_STEP_LOSS_NONFINITE;
	}
	if (bar_item(in, in_n, "train_step_timing in s", &v, &vn) && !pnum(v, vn, &x))
		st.step_ns = step_printed(r, x * 1e3, v, vn, 1e3);
	if (bar_num(in, in_n, "lr", 0, &x))
		st.lr = x;
	if (bar_num(in, in_n, "grad_norm", 0, &x)) {
		st.grad_norm = x;
		if (!isfinite(x))
			st.flags |= TS_STEP_GRAD_NONFINITE;
	}
	if (bar_num(in, in_n, "consumed_samples", 1, &x))
		st.consumed_samples = (int64_t)x;
	if (bar_num(in, in_n, "global_batch_size", 1, &x))
		st.global_batch = (int64_t)x;
	if (!counted) {
		st.iteration = (int64_t)g;
		return bar_push(r, &st, r->rec_ign) ? TS_ENOMEM : 1;
	}
	if (exact)
		lo = hi = (int64_t)g;
	lo -= i;
	hi -= i;
	if (r->off_set && (epoch != r->off_epoch || lo > r->off_hi || hi < r->off_lo) &&
	    bar_reset(r))
		return TS_ENOMEM;
	if (!r->off_set) {
		r->off_set = 1;
		r->off_epoch = epoch;
		r->off_lo = lo;
		r->off_hi = hi;
	} else {
		r->off_lo = lo > r->off_lo ? lo : r->off_lo;
		r->off_hi = hi < r->off_hi ? hi : r->off_hi;
	}
	if (r->off_lo == r->off_hi && lo == r->off_lo) {
		int64_t at = lo + i;   /* the global step this redraw pins */

		if (!r->off_pins) {
			r->off_pins = 1;
			r->pin_at = at;
		} else if (at - r->pin_at >= 2 || r->pin_at - at >= 2) {
			r->off_pins = 2;
		}
	}
	if (r->off_pins < 2)
		return bar_wait(r, &st, i, exact ? (int64_t)g : TS_NO_INT) ? TS_ENOMEM : 1;
	if (r->bar_pend.n && bar_settle(r, 1, r->off_lo))
		return TS_ENOMEM;
	st.iteration = exact ? (int64_t)g : i + r->off_lo;
	return bar_push(r, &st, r->rec_ign) ? TS_ENOMEM : 1;
}

/*
 * s, the input's last line without its line end, is a redraw of a bar
 * that gives records (parse_bar) cut before its bracket closes: one whose
 * bracket names global_step before the cut, or, once this file has bar
 * records, a redraw of the bar that gave them cut anywhere after its
 * description ("Epoch E:", "Training:"; a number in it may be another:
 * the next epoch's bar). Its record is not read: a value at the cut may
 * be the head of a longer one.
 */
static int bar_cut(const struct rd *r, const char *s, size_t n)
{
	const char *in, *v;
	size_t in_n, vn;

	if (ts_progress_bar(s, n, &in, &in_n))
		return 0;
	if (ts_progress_bar_open(s, n, &in, &in_n) && bar_item(in, in_n, "global_step", &v, &vn))
		return 1;
	if ((!r->bar_step && !r->bar_pend.n) || !r->bar_desc_n)
		return 0;
	skip_prefix(&s, &n);
	return desc_head(r->bar_desc, r->bar_desc_n, s, n);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int is_word_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/*
 * The first "KEY <separators> N" of s[0..n) for one of keys, matched
 * without case (env dumps print WORLD_SIZE=16) and as a whole word: the
 * byte before the key is no letter, digit or '_' (so "group_world_size"
 * is no "world_size"), the one after neither. Between key and number
 * blanks, ':', '=', quotes and Megatron's dot leaders; the number must end
 * the word (an elastic range "1:4" or a "2.5" is none). 1 and *v when
 * found.
 */
static int stated_count(const char *s, size_t n, const char *const *keys, size_t nkeys,
			int64_t *v)
{
	for (size_t k = 0; k < nkeys; k++) {
		size_t kn = strlen(keys[k]);

		for (size_t i = 0; i + kn <= n; i++) {
			size_t j = i + kn, d;
			int64_t x = 0;

			if ((s[i] | 0x20) != keys[k][0] || strncasecmp(s + i, keys[k], kn) ||
			    (i && (is_word_byte(s[i - 1]))) || (j < n && is_word_byte(s[j])))
				continue;
			while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == ':' || s[j] == '=' ||
					 s[j] == '"' || s[j] == '\'' || s[j] == '.'))
				j++;
			if (j >= n || s[j] < '1' || s[j] > '9')
				continue;
			for (d = j; j < n && j - d < 7 && s[j] >= '0' && s[j] <= '9'; j++)
				x = x * 10 + (s[j] - '0');
			if (j < n && (is_word_byte(s[j]) ||
				      ((s[j] == ':' || s[j] == '.') && j + 1 < n &&
				       s[j + 1] >= '0' && s[j + 1] <= '9')))
				continue;
			*v = x;
			return 1;
		}
	}
	return 0;
}

/*
 * An elastic range "KEY <separators> A:B" of s[0..n) with A == B (a fixed
 * size written as a range, torchrun's "--nnodes=2:2"): 1 and *v. The key
 * is matched as stated_count matches it.
 */
static int stated_fixed_range(const char *s, size_t n, const char *key, int64_t *v)
{
	size_t kn = strlen(key);

	for (size_t i = 0; i + kn <= n; i++) {
		size_t j = i + kn, d;
		int64_t a = 0, b = 0;

		if ((s[i] | 0x20) != key[0] || strncasecmp(s + i, key, kn) ||
		    (i && is_word_byte(s[i - 1])) || (j < n && is_word_byte(s[j])))
			continue;
		while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '='))
			j++;
		for (d = j; j < n && j - d < 7 && s[j] >= '0' && s[j] <= '9'; j++)
			a = a * 10 + (s[j] - '0');
		if (j == d || j >= n || s[j] != ':')
			continue;
		for (d = ++j; j < n && j - d < 7 && s[j] >= '0' && s[j] <= '9'; j++)
			b = b * 10 + (s[j] - '0');
		if (j == d || (j < n && is_word_byte(s[j])) || a != b || a < 1)
			continue;
		*v = a;
		return 1;
	}
	return 0;
}

/*
 * The job's shape where a line states it (the first statement of each
 * fact counts): nproc_per_node from torchrun's launch configuration
 * ("nproc_per_node   : 4"), its worker spec ("local_world_size=4"),
 * NeMo-Run's command ("--nproc-per-node 4") or an env dump
 * ("LOCAL_WORLD_SIZE=4"); the world size from Megatron's arguments
 * ("world_size ....... 16"), Megatron's older validate_args print ("using
 * world size: 16, data-parallel size: 8, ...") or an env dump
 * ("WORLD_SIZE=16"); the number of nodes from a launcher command
 * ("--nnodes 2", "--nnodes=2", an elastic range of one size "2:2", not
 * "1:4"), an env dump ("NNODES=2"), torchrun's worker group
 * ("group_world_size=2") or its launch configuration's "min_nodes" and
 * "max_nodes" when they are equal (until 5 Dec 2026 neither the older
 * print, a range of one size nor min_nodes/max_nodes was read).
 * Megatron's "> initializing torch distributed ..." states no size.
 */
static void see_shape(struct rd *r, const char *s, size_t n, int64_t line)
{
	static const char *const nproc[] = { "nproc_per_node", "nproc-per-node",
		"local_world_size" };
	static const char *const world[] = { "world_size", "using world size" };
	static const char *const nodes[] = { "nnodes", "group_world_size" };
	static const char *const min_nodes[] = { "min_nodes" };
	static const char *const max_nodes[] = { "max_nodes" };
	int64_t v;

	if (r->nproc_stated != TS_NO_INT && r->world_stated != TS_NO_INT &&
	    r->nnodes_stated != TS_NO_INT)
		return;
	if (r->nproc_stated == TS_NO_INT && stated_count(s, n, nproc, 3, &v)) {
		r->nproc_stated = v;
		r->nproc_line = line;
	}
	if (r->world_stated == TS_NO_INT && stated_count(s, n, world, 2, &v)) {
		r->world_stated = v;
		r->world_line = line;
	}
	if (r->nnodes_stated != TS_NO_INT)
		return;
	if (stated_count(s, n, nodes, 2, &v) || stated_fixed_range(s, n, "nnodes", &v)) {
		r->nnodes_stated = v;
		r->nnodes_line = line;
		return;
	}
	if (r->min_nodes == TS_NO_INT && stated_count(s, n, min_nodes, 1, &v))
		r->min_nodes = v;
	if (r->max_nodes == TS_NO_INT && stated_count(s, n, max_nodes, 1, &v))
		r->max_nodes = v;
	if (r->min_nodes != TS_NO_INT && r->min_nodes == r->max_nodes) {
		r->nnodes_stated = r->max_nodes;
		r->nnodes_line = line;
	}
}

static int handle_line(struct rd *r, const char *s, size_t n, int nl, int64_t line,
		       uint64_t off)
{
	const char *b = s, *e, *t;
	int rc, complete;

	if (n && s[n - 1] == '\r')
		n--;
	s = strip_ansi(r, s, &n);
	if (r->clean.failed)
		return TS_ENOMEM;
	{
		/* a log collector's timestamp before everything the job printed */
		size_t k = ts_collector_stamp(s, n);

		s += k;
		n -= k;
	}
	if (r->line_start)
		r->line_rank = lead_rank(r, s, n);
	if (r->line_start) {
		const char *t;
		size_t tn;

		if (launcher_prefix(s, n, &t, &tn)) {
			size_t k = 0;

			while (k < n && s[k] == ' ')
				k++;
			r->replica = ts_launcher_replica(s + k, n - k);
		}
	}
	e = s + n;
	if (r->pend_kind && r->pend_guess) {
		/* the previous line ended inside a record's head, or looked so:
		 * this line must complete the head, else that line was not a
		 * record and this one is read on its own */
		size_t keep = r->pend.len, tn;
		const char *t;
		int piece = r->pend_pieces < MAX_PIECES && !launcher_prefix(s, n, &t, &tn) && tn;

		/* a wrapped piece never starts with a launcher prefix, nor is blank */
		if (piece) {
			pend_append(r, s, n);
			if (r->pend.failed)
				return TS_ENOMEM;
		}
		if (piece &&
		    parse_iter(r, r->pend.buf, r->pend.len, nl, r->pend_line, CHECK_ONLY, &complete) > 0) {
			r->pend_guess = 0;
		} else if (piece && r->pend_pieces < MAX_PIECES && head_wrapped(r->pend.buf, r->pend.len)) {
			return 0;
		} else {
			r->pend.len = keep;
			scan_markers(r, r->pend.buf, keep);
			r->pend_kind = R_NONE;
			r->pend_guess = 0;
			ts_sb_reset(&r->pend);
		}
		if (r->pend_kind) {
			r->pend_nl = nl;
			if (!pend_complete(r))
				return 0;
			rc = pend_emit(r, 1);
			r->pend_kind = R_NONE;
			ts_sb_reset(&r->pend);
			return rc;
		}
	}
	if (r->pend_kind) {
		if (!is_record_start(s, n) && !is_blank_prefix_only(s, n) &&
		    r->pend_pieces < MAX_PIECES) {
			pend_append(r, s, n);
			if (r->pend.failed)
				return TS_ENOMEM;
			r->pend_nl = nl;
			if (pend_complete(r)) {
				rc = pend_emit(r, 1);
				r->pend_kind = R_NONE;
				ts_sb_reset(&r->pend);
				return rc;
			}
			return 0;
		}
		rc = pend_finish(r);
		if (rc)
			return rc;
	}
	if (parse_timers(r, s, n, nl))
		return 0;
	b = s;
	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	/* JSON Lines and HF dicts, possibly after a launcher prefix shorter
	 * than 32 bytes or after a progress bar's last redraw (a dict printed
	 * while the bar is shown): only those bytes need a look, not the whole
	 * line. An HF dict may also close a line after a logging prefix. */
	t = e;
	while (t > b && (t[-1] == ' ' || t[-1] == '\t'))
		t--;
	{
		const char *in, *hb = b;
		size_t in_n, bar;
		int rank;
		const char *br = memchr(b, '{', (size_t)(e - b) < 32 ? (size_t)(e - b) : 32);

		if (!br && t > b && t[-1] == '}' && (bar = ts_progress_bar(b, (size_t)(e - b), &in, &in_n)) &&
		    bar < (size_t)(e - b)) {
			/* the dict right after the redraw, or after the launcher
			 * prefix torchrun --tee writes before each piece it
			 * copies ("...1.20s/it][default0]:{'loss': ...}") */
			const char *rest;
			size_t rn;

			launcher_prefix(b + bar, (size_t)(e - b) - bar, &rest, &rn);
			if (rn && *rest == '{') {
				hb = b + bar;
				br = rest;
			}
		}

		if (br && (br == hb || prefix_rank(hb, (size_t)(br - hb)) >= 0)) {
			/* the first key, after blanks a writer may put there
			 * ("{ \"step\": 2}" is JSON as much as "{\"step\": 2}") */
			const char *k = br + 1;

			while (k < e && (*k == ' ' || *k == '\t'))
				k++;
			if (k < e && *k == '"')
				return parse_jsonl(r, br, (size_t)(e - br), nl, line, off) < 0 ? TS_ENOMEM : 0;
			if (k < e && *k == '\'') {
				/* the input ends inside the dict (no line end, no '}') */
				int64_t count, epoch;

				if (!nl && !(t > b && t[-1] == '}'))
					return note_cut(r, line, off, "last line cut inside an HF "
							"Trainer dict");
				/* the Trainer's bar right before the dict on its line */
				if (hb != b && bare_bar(b, (size_t)(hb - b)) &&
				    bar_counter(b, in, &count, &epoch))
					r->bar_count = count;
				rank = hb < br ? prefix_rank(hb, (size_t)(br - hb)) : -1;
				rc = parse_hf(r, br, (size_t)(e - br), line, rank >= 0 ? rank :
					      lead_rank(r, b, (size_t)(br - b)));
				return rc < 0 ? rc : 0;
			}
		}
		if (t > b && t[-1] == '}' && (br = find(b, (size_t)(t - b), "{'", 2)) &&
		    (rc = parse_hf(r, br, (size_t)(e - br), line, lead_rank(r, b, (size_t)(br - b)))))
			return rc < 0 ? rc : 0;
	}
	if (r->ds_n && r->non_ds)
		ds_drop(r);
	if (!r->megatron_args && !r->non_ds) {
		/* DeepSpeed's own lines, unless another framework's are this
		 * file's records */
		if (!r->file_format && memmem(s, n, "- arguments -", 13))
			r->megatron_args = 1;
		else if ((rc = parse_deepspeed(r, s, n, line)))
			return rc < 0 ? rc : 0;
	}
	if (!r->file_format || r->file_format == TS_LOG_TITAN) {
		/* torchtitan's lines, until this file has given another format */
		if ((rc = parse_titan(r, s, n, nl, line, off)))
			return rc < 0 ? rc : 0;
		if (parse_titan_start(r, s, n))
			return 0;
	}
	rc = parse_iter(r, s, n, nl, line, PUSH_IF_COMPLETE, &complete);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return complete ? 0 : pend_start(r, R_ITER, s, n, nl, line, off);
	t = b + prefix_tail(b, (size_t)(t - b));
	if (t > b && t[-1] == ']' && (rc = parse_bar(r, b, (size_t)(t - b), line)))
		return rc < 0 ? rc : 0;
	if (!nl && bar_cut(r, b, (size_t)(t - b)))
		return note_cut(r, line, off, "last line cut inside a progress-bar redraw");
	if (nl && head_wrapped(s, n)) {
		rc = pend_start(r, R_ITER, s, n, nl, line, off);
		r->pend_guess = 1;
		return rc;
	}
	rc = parse_mem(r, s, n, nl, 0, &complete);
	if (rc > 0) {
		if (complete) {
			rc = parse_mem(r, s, n, nl, 1, &complete);
			return rc < 0 ? rc : 0;
		}
		return pend_start(r, R_MEM, s, n, nl, line, off);
	}
	rc = parse_steptime(r, s, n, line);
	if (rc)
		return rc < 0 ? rc : 0;
	if (parse_theory(r, s, n) || parse_params(r, s, n))
		return 0;
	see_shape(r, s, n, line);
	if (!nl && iter_head_cut(s, n))
		return note_cut(r, line, off, "last line cut inside an iteration record");
	scan_markers(r, s, n);
	return 0;
}

/*
 * A line with carriage returns inside is a terminal line drawn over:
 * progress bars (tqdm, Lightning) redraw after each '\r', and tqdm.write()
 * clears the bar ('\r', blanks, '\r') before the text it prints. Each
 * part is read as a line of its own, blank parts skipped; a CRLF's '\r'
 * is no such part.
 */
static int handle_drawn(struct rd *r, const char *s, size_t n, int nl, int64_t line,
			uint64_t off)
{
	size_t m = n && s[n - 1] == '\r' ? n - 1 : n, a = 0;
	const char *cr = memchr(s, '\r', m);

	/* an HF dict takes its step from a bar redrawn before it on its
	 * line only: a bar of an earlier line may be far from it (stdout
	 * buffered apart from the bar's stderr) */
	r->bar_count = -1;
	r->line_rank = -1;
	r->line_start = 1;
	if (!cr)
		return handle_line(r, s, n, nl, line, off);
	for (;;) {
		size_t b = cr ? (size_t)(cr - s) : m, k = a;
		int rc;

		while (k < b && (s[k] == ' ' || s[k] == '\t'))
			k++;
		r->line_start = a == 0;
		if (k < b && (rc = handle_line(r, s + a, b - a, cr ? 1 : nl, line, off + a)))
			return rc;
		if (!cr)
			return 0;
		a = b + 1;
		cr = memchr(s + a, '\r', m - a);
	}
}

/*
 * Ranks under torchx prefixes ("retraining/1 [default0]:") of the records
 * steps[first..] of r's file: each local rank K of replica N becomes the
 * global rank N x nproc_per_node + K (struct ts_steplog says which count,
 * where it comes from and when it is a guess). Run once the file is read,
 * so a count stated after the first record serves every record. Without
 * it replica 1's rank 0 was replica 0's rank 0, and the later line of an
 * iteration won.
 */
static int replica_ranks(struct rd *r, size_t first)
{
	struct ts_steplog *log = r->log;
	int64_t nloc = 0, nrep = 0, nproc, line = TS_NO_INT;
	size_t n = 0;
	uint64_t *pair;
	int told = 1, from;

	for (size_t i = first; i < log->steps.n; i++) {
		const struct ts_step *s = &log->steps.v[i];

		if (s->replica < 0)
			continue;
		n++;
		nloc = s->rank + 1 > nloc ? s->rank + 1 : nloc;
		nrep = s->replica + 1 > nrep ? s->replica + 1 : nrep;
		if (s->replica > 0 && line == TS_NO_INT)
			line = s->line;
	}
	if (nrep < 2)
		return 0; /* replica 0 only: its local ranks are the global ones */
	/* the local ranks each replica shows: 0..nloc-1 on every one tells
	 * the count (unless only rank 0 prints) */
	pair = malloc(n * sizeof(*pair));
	if (!pair)
		return TS_ENOMEM;
	n = 0;
	for (size_t i = first; i < log->steps.n; i++)
		if (log->steps.v[i].replica >= 0)
			pair[n++] = (uint64_t)log->steps.v[i].replica << 32 |
				    (uint32_t)log->steps.v[i].rank;
	ts_sort(pair, n, sizeof(*pair), cmp_u64);
	for (size_t i = 0, k = 0; i < n; i = k) {
		int64_t distinct = 0;

		for (k = i; k < n && pair[k] >> 32 == pair[i] >> 32; k++)
			distinct += k == i || pair[k] != pair[k - 1];
		told &= distinct == nloc;
	}
	free(pair);
	told &= nloc > 1;
	nproc = nloc;
	from = TS_NPROC_SEEN;
	if (r->nproc_stated != TS_NO_INT && r->nproc_stated >= nloc) {
		nproc = r->nproc_stated;
		from = TS_NPROC_STATED;
		told = 1;
	} else if (r->world_stated != TS_NO_INT && r->nnodes_stated != TS_NO_INT &&
		   r->world_stated % r->nnodes_stated == 0 &&
		   r->world_stated / r->nnodes_stated >= nloc && r->nnodes_stated >= nrep) {
		nproc = r->world_stated / r->nnodes_stated;
		from = TS_NPROC_WORLD_NODES;
		told = 1;
	}
	log->replica_files++;
	if (log->replica_nproc_file >= 0 && nproc != log->replica_nproc &&
	    log->replica_differ_file < 0) {
		log->replica_differ_file = r->file;
		log->replica_differ_nproc = nproc;
	}
	if (log->replica_nproc_file < 0) {
		log->replica_nproc_file = r->file;
		log->replica_nproc = nproc;
		log->replica_nproc_from = from;
		log->replica_nproc_line = from == TS_NPROC_STATED ? r->nproc_line :
					  from == TS_NPROC_WORLD_NODES ? r->world_line : TS_NO_INT;
		log->replica_nodes_line = from == TS_NPROC_WORLD_NODES ? r->nnodes_line : TS_NO_INT;
		log->replica_world = from == TS_NPROC_WORLD_NODES ? r->world_stated : TS_NO_INT;
		log->replica_nodes = from == TS_NPROC_WORLD_NODES ? r->nnodes_stated : TS_NO_INT;
	}
	if (!told && log->replica_guess_file < 0) {
		log->replica_guess_file = r->file;
		log->replica_guess_nproc = nproc;
		log->replica_guess_line = line;
	}
	for (size_t i = first; i < log->steps.n; i++) {
		struct ts_step *s = &log->steps.v[i];

		if (s->replica >= 0 && s->replica * nproc + s->rank <= INT32_MAX)
			s->rank = (int32_t)(s->replica * nproc + s->rank);
	}
	return 0;
}

static int read_input(struct ts_steplog *log, struct ts_input *in, const char *name,
		      struct ts_err *err)
{
	struct rd r;
	const char *line;
	size_t n;
	uint64_t off;
	int64_t lineno = 0;
	size_t first;
	int rc;

	memset(&r, 0, sizeof(r));
	r.rec_ign = -1;
	r.bar_count = -1;
	r.hf_last = TS_NO_INT;
	for (size_t k = 0; k <= TITAN_RANKS; k++)
		r.titan_clk[k].t0 = r.titan_clk[k].step0 = TS_NO_INT;
	r.titan_gbs = r.titan_seq = r.titan_total = TS_NO_INT;
	r.ds_t0 = r.ds_step0 = r.ds_step = r.ds_skipped = r.ds_rank = TS_NO_INT;
	r.ds_skipped0 = 0;
	r.ds_lr = NAN;
	r.line_rank = -1;
	r.replica = -1;
	r.nproc_stated = r.world_stated = r.nnodes_stated = TS_NO_INT;
	r.min_nodes = r.max_nodes = TS_NO_INT;
	first = log->steps.n;
	r.log = log;
	r.path = name;
	r.file = log->nfiles++;
	r.file_rank = (int)ts_rank_in_name(name);
	ts_sb_init(&r.clean);
	ts_sb_init(&r.pend);
	for (;;) {
		int nl;

		rc = ts_input_getline(in, &line, &n, &off, err);
		if (rc <= 0)
			break;
		lineno++;
		nl = line + n < (const char *)in->data + in->len && line[n] == '\n';
		log->lines++;
		log->bytes += n + (size_t)nl;
		rc = handle_drawn(&r, line, n, nl, lineno, off);
		if (rc) {
			ts_err_at(err, rc, name, (int64_t)off, lineno, "%s", ts_code_name(rc));
			goto out;
		}
		/* a pipe of something else (/dev/urandom) must not be read forever */
		if (r.records == 0 && r.bar_pend.n == 0 && log->mem.n == 0 && (lineno & 1023) == 0 &&
		    (rc = ts_input_unmatched_check(in, off + n, err)))
			goto out;
	}
	if (rc < 0)
		goto out;
	rc = pend_finish(&r);
	if (r.ds_n && r.non_ds)
		ds_drop(&r);
	if (!rc)
		rc = bar_reset(&r);
	if (!rc && r.have_steptime) {
		if (r.saw_iter) {
			rc = note(&r, TS_NOTE_UNATTACHED, r.steptime_line, 0,
				  "Step Time line without an iteration line after it");
		} else {
			struct ts_step st;

			step_blank(&st, &r, r.steptime_line);
			st.iteration = ++r.ordinal;
			st.step_ns = steptime_ns(&r);
			st.tflops = r.steptime_tflops;
			st.flags |= TS_STEP_ORDINAL;
			rc = push_step(&r, &st, TS_LOG_BRIDGE) ? TS_ENOMEM : 0;
		}
	}
	if (!rc)
		rc = replica_ranks(&r, first);
	if (rc) {
		ts_err_at(err, rc, name, -1, -1, "%s", ts_code_name(rc));
		goto out;
	}
	if (log->strict && r.ign_line) {
		rc = ts_err_at(err, TS_EPARSE, name, -1, r.ign_line,
			       "line %lld: unusable value (%s) for a step time or iteration; --strict "
			       "rejects it (without --strict it is ignored and counted)",
			       (long long)r.ign_line, ts_ignored_name(r.ign_kind));
		goto out;
	}
	if (r.records == 0 && log->mem.n == 0) {
		/* a file cut inside its first record says so, not just "none" */
		const struct ts_log_note *cut = NULL;
		for (size_t k = 0; k < log->notes.n; k++)
			if (log->notes.v[k].file == r.file && log->notes.v[k].kind == TS_NOTE_TRUNCATED)
				cut = &log->notes.v[k];
		if (cut)
			rc = ts_err_at(err, TS_EPARSE, name, (int64_t)cut->offset, cut->line,
				       "no complete step record: the file ends inside its first "
				       "record (%s)", cut->cause);
		else if (r.bar_dropped)
			rc = ts_err_at(err, TS_EPARSE, name, 0, -1,
				       "no step records: %llu progress-bar redraws give their "
				       "global_step in tqdm's exponent form (3 significant digits, "
				       "e.g. 1.23e+5), and no two exact global steps or rounding "
				       "steps of it, apart, pin the bar's counter to it",
				       (unsigned long long)r.bar_dropped);
		else
			rc = ts_err_at(err, TS_EPARSE, name, 0, -1,
				       "no step records found (expected Megatron/Bridge/NeMo/Primus "
				       "iteration lines, torchtitan step lines, DeepSpeed throughput "
				       "or pipeline-engine lines, Hugging Face Trainer dicts or JSON "
				       "objects with an iteration or step key)");
	}
out:
	ts_sb_release(&r.clean);
	ts_sb_release(&r.pend);
	TS_VEC_RELEASE(r.bar_pend);
	return rc;
}

void ts_steplog_init(struct ts_steplog *log)
{
	pthread_once(&keys_once, keys_index);
	memset(log, 0, sizeof(*log));
	ts_intern_init(&log->names);
	ts_arena_init(&log->arena);
	log->theo_weight_opt_mb = log->theo_activation_mb = log->theo_total_mb = NAN;
	log->theo_params_b = log->theo_params_shard_b = NAN;
	log->replica_guess_file = -1;
	log->replica_nproc_file = -1;
	log->replica_differ_file = -1;
	log->hf_train_runtime_s = log->hf_steps_per_s = NAN;
}

void ts_steplog_release(struct ts_steplog *log)
{
	TS_VEC_RELEASE(log->steps);
	TS_VEC_RELEASE(log->extras);
	TS_VEC_RELEASE(log->mem);
	TS_VEC_RELEASE(log->notes);
	ts_intern_release(&log->names);
	ts_arena_release(&log->arena);
	ts_steplog_init(log);
}

int ts_steplog_read(struct ts_steplog *log, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	rc = ts_input_open(&in, path, err);
	if (rc)
		return rc;
	rc = read_input(log, &in, in.path, err);
	ts_input_release(&in);
	return rc;
}

int ts_steplog_read_mem(struct ts_steplog *log, const void *data, size_t n,
			const char *name, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	rc = ts_input_open_mem(&in, data, n, name, err);
	if (rc)
		return rc;
	rc = read_input(log, &in, name, err);
	ts_input_release(&in);
	return rc;
}
