/*
 * logs.h - training logs and per-step metrics files to one step series.
 *
 * Reads, by content and line by line (streaming, never the whole file in
 * memory at once): Megatron-LM iteration lines of every era (2020 legacy
 * to current, with optional throughput, energy, MoE aux losses, num zeros,
 * params norm, skipped/NaN counts and intervals where no loss is printed),
 * the "[Rank R] (after N iterations) memory (MB|GB)" lines, the
 * theoretical-memory line, Megatron Bridge "Step Time :" lines, NeMo 2
 * Lightning progress lines, Hugging Face Trainer dict lines, AMD Primus
 * lines (cur/avg pairs, ANSI colours, rank prefixes), MT-MegatronLM, and
 * JSONL metrics (one JSON object per step; NaN/Infinity allowed). Megatron's
 * start-up `arguments` block is skipped (src/model reads it).
 *
 * Lines may carry srun ("0: "), torchrun ("[rank0]:") or Primus
 * ("[rank-3/8]") prefixes and timestamps; unrelated lines are skipped.
 * A record split by a hard-wrapped paste is joined back when the pieces
 * complete the grammar (each join is noted); one that cannot be completed
 * is dropped and reported as broken, never half-read. A field is only
 * taken when its terminator was seen, so a line cut mid-way loses the cut
 * field, not its meaning.
 *
 * Units: times in integer nanoseconds, memory in bytes (MB = 2^20 as
 * Megatron computes it, GB = 1e9 as Bridge prints it), rates per second.
 */
#ifndef TRAINSCOPE_LOGS_H
#define TRAINSCOPE_LOGS_H

#include <stdint.h>
#include "trainscope/core.h"

enum ts_log_format {
	TS_LOG_UNKNOWN = 0,
	TS_LOG_MEGATRON,     /* Megatron-LM (any era) / MT-MegatronLM */
	TS_LOG_BRIDGE,       /* Megatron Bridge (Step Time / GB memory lines) */
	TS_LOG_NEMO2,        /* NeMo 2 Lightning progress line */
	TS_LOG_HF,           /* Hugging Face Trainer dict lines */
	TS_LOG_PRIMUS,       /* AMD Primus (cur/avg pairs) */
	TS_LOG_JSONL,        /* JSON object per step */
	TS_LOG_LIGHTNING,    /* Lightning progress bars with global_step (NeMo 1) */
	TS_LOG_TITAN,        /* torchtitan metrics lines ("step: N  loss: ...") */
	TS_LOG_DEEPSPEED,    /* DeepSpeed engine throughput lines, pipeline engine
			      * "steps: N loss: L iter time (s): T" lines (and
			      * qlora-pipe's "step: N / T loss: L iter time (s): T") */
	TS_LOG_FORMAT_COUNT
};

/* "megatron", "megatron-bridge", "nemo2", "hf-trainer", "primus", "jsonl",
 * "lightning-bar". */
const char *ts_log_format_name(int format);

/* Flags of one step record. */
enum ts_step_flags {
	TS_STEP_ORDINAL = 1 << 0,        /* iteration is the record's place: the log prints
					  * no step number for it (HF dicts without
					  * step or bar, JSONL without an iteration
					  * key, Bridge Step Time lines only) */
	TS_STEP_JOINED = 1 << 1,         /* rebuilt from hard-wrapped pieces */
	TS_STEP_AFTER_PROFILER = 1 << 2, /* profiler capture/export lines precede it */
	TS_STEP_AFTER_CHECKPOINT = 1 << 3, /* checkpoint save lines precede it */
	TS_STEP_AFTER_EVAL = 1 << 4,     /* evaluation lines precede it */
	TS_STEP_NO_LOSS = 1 << 5,        /* loss omitted (every iteration skipped) */
	TS_STEP_LOSS_NONFINITE = 1 << 6, /* the loss was printed as NaN or Inf */
	TS_STEP_PROFILED = 1 << 7,       /* a profiler trace of the run captured it, or it
					  * exported one (set by the run model, run.h) */
	TS_STEP_GRAD_NONFINITE = 1 << 8, /* the grad norm was printed as NaN or Inf */
	TS_STEP_RESTART = 1 << 9,        /* the first record of a resumed segment (the
					  * log goes back) or after a training start or
					  * checkpoint load line: its process's first
					  * iteration */
	TS_STEP_RESTART_WARMUP = 1 << 10, /* the resumed process's warm-up after that
					  * record (set by the run model, run.h) */
	TS_STEP_HEALTH_FROM_LOG = 1 << 11, /* its non-finite evidence is a log's beside
					  * the metrics, not its own (run.h, spare logs) */
	TS_STEP_AFTER_ARGS = 1 << 12      /* a Megatron arguments dump precedes it, after
					  * the file's first record: a process started (a
					  * second process's dump, or a restart: the run
					  * model reads it as one when the record logs its
					  * rank's last iteration again); no artefact */
};
/* a restarted process's first record or warm-up: a restart artefact */
#define TS_STEP_RESTARTED (TS_STEP_RESTART | TS_STEP_RESTART_WARMUP)

/*
 * Per-phase times a record may carry: JSONL `data_ms`, `fwd_ms`, `bwd_ms`,
 * `opt_ms`, `comm_ms` (and the spelled-out `forward_ms` ...), and
 * Megatron's `--timing-log-level` timers, either the one-line
 * `time (ms) | name: v | ...` of 2020-era builds or the block
 * `(min, max) time across ranks (ms):` / `max time across ranks (ms):`
 * followed by one `name ....: (min, max)` or `name ....: v` line per
 * timer (the max is kept: the slowest rank sets the step). Megatron prints
 * the timers after the iteration line, normalised per iteration, so they
 * belong to the record before them. Timer names: batch-generator /
 * "batch generator" -> data, forward-compute / forward -> forward,
 * backward-compute / backward -> backward, forward-backward, optimizer,
 * all-grads-sync / backward-allreduce -> comm; other timers are sub-parts
 * of these and are not kept. DeepSpeed's `"wall_clock_breakdown": true`
 * global timer lines (`time (ms) | fwd: v | bwd: v | bwd_inner: v |
 * bwd_allreduce: v | step: v`, in older engines `forward`, `backward`,
 * `backward_inner`, `backward_allreduce`, `step`), one per global step
 * with that step's total, give a DeepSpeed throughput record the mean over
 * its global steps (fwd -> forward, bwd -> backward, step -> optimizer,
 * bwd_allreduce -> comm, a part of backward), only when every one of its
 * steps has its line; the micro-step lines are not kept. The pipeline
 * engine prints one such line per steps_per_print steps, summed since its
 * last print: a pipeline record at N after one at P gets that line's values
 * over N - P (its micro line's batch_input as data, bwd_allreduce not
 * kept: it times no allreduce there) when exactly one came between them,
 * the file's first record none; its comm is the p2p line printed right
 * after it (`time (ms) | pipe_send_output: v | pipe_recv_grad: v`, global
 * rank 0's blocking sends and receives, the wait for the next stage
 * included, summed since the last print) over N - P, under the same
 * conditions: there comm is no part of backward (docs/steps.md).
 */
enum ts_phase {
	TS_PHASE_DATA = 0,
	TS_PHASE_FORWARD,
	TS_PHASE_BACKWARD,
	TS_PHASE_FWD_BWD,
	TS_PHASE_OPTIMIZER,
	TS_PHASE_COMM,
	TS_PHASE_COUNT
};

/* "data", "forward", "backward", "forward-backward", "optimizer", "comm". */
const char *ts_phase_name(int phase);

#define TS_NO_INT INT64_MIN

/*
 * One logged step (Megatron: one log interval, whose time is the interval
 * mean). Unknown integers are TS_NO_INT, unknown doubles NAN.
 */
struct ts_step {
	int64_t iteration;
	int64_t step_ns;          /* step time */
	int64_t consumed_samples;
	int64_t global_batch;     /* sequences per step */
	int64_t tokens;           /* tokens in the step */
	int64_t bucket;           /* seq_len / bucket key of mixed workloads */
	int64_t skipped;          /* skipped iterations in this interval */
	int64_t nan_iters;        /* NaN iterations in this interval */
	int64_t train_iters;      /* N of "iteration i/N" */
	double loss;              /* primary loss (lm loss, loss, ...) */
	double grad_norm, lr, loss_scale, num_zeros, params_norm;
	double tflops;            /* logged TFLOP/s per GPU */
	double tokens_per_s_gpu;  /* logged tokens/s per GPU (Primus) */
	double energy_j, power_w; /* logged J/iteration/GPU and W/GPU */
	double mem_alloc_bytes, mem_max_alloc_bytes;     /* device memory */
	double mem_reserved_bytes, mem_max_reserved_bytes;
	double rss_max_bytes;     /* host RSS (CPU runs) */
	double overhead_ns;       /* logged interval minus step time (JSONL) */
	int64_t t_start_ns;       /* step start, Unix epoch ns (JSONL t_start_unix), or TS_NO_INT;
	                           * with step_ns, t_start_ns + step_ns fits int64 */
	int64_t phase_ns[TS_PHASE_COUNT]; /* per-phase time (enum ts_phase), TS_NO_INT unknown */
	int32_t rank;             /* -1 when the line does not say; under a torchx
				   * prefix "ROLE/N [defaultK]:" the global rank,
				   * N x nproc_per_node + K (struct ts_steplog) */
	int32_t replica;          /* that N, -1 without such a prefix */
	uint32_t flags;           /* enum ts_step_flags */
	uint32_t extra_first;     /* extra losses: extras[extra_first ..] */
	uint32_t extra_n;
	int32_t file;             /* index of the input file */
	int64_t line;             /* 1-based line of the record */
};

/* An extra named loss of a step ("load_balancing_loss", "mtp_1 loss"). */
struct ts_step_extra {
	uint32_t name;            /* id in steplog.names */
	double value;
};

/* A "[Rank R] (after N iterations) memory" line, in bytes. */
struct ts_mem_report {
	int32_t rank;             /* -1 for 2020-era lines without [Rank R] */
	int32_t file;
	int64_t iteration;
	double alloc, max_alloc, reserved, max_reserved;
};

enum ts_note_kind { TS_NOTE_JOINED = 1, TS_NOTE_BROKEN, TS_NOTE_TRUNCATED,
	TS_NOTE_BAD_JSON, TS_NOTE_UNATTACHED };

/* A finding about the input (not an error): where and what. */
struct ts_log_note {
	int kind;                 /* enum ts_note_kind */
	int32_t file;
	int64_t line;
	uint64_t offset;
	const char *msg;          /* owned by the steplog's arena */
	const char *cause;        /* TS_NOTE_TRUNCATED: what was cut, msg without
				   * "; ignored" (an error about the same cut
				   * quotes it); else NULL */
};

/* Step times (and iteration numbers) that cannot be used, by kind: they
 * are dropped from the series, counted here and warned about
 * ("ignored-values"); with strict set they fail the read instead. */
enum ts_ignored {
	TS_IGN_NAN = 0,      /* NaN */
	TS_IGN_INF,          /* +-Infinity */
	TS_IGN_NEGATIVE,     /* below zero, printed or between two stamps of a
			      * clock that stepped back */
	TS_IGN_TOO_LARGE,    /* beyond 9e12 ms (285 years; e.g. 1e300) */
	TS_IGN_NO_ITER,      /* a record without a usable iteration, dropped: a
			      * JSONL record in a file whose records have one (it
			      * would be iteration 1 and fake a resume), a
			      * progress-bar redraw whose global step tqdm wrote
			      * to 3 digits and nothing pinned */
	TS_IGN_NOT_A_NUMBER, /* a step time field whose value is not a number
			      * ("", "12x", a NUL byte; a JSON string that is not
			      * one); JSON null is no value and not counted */
	TS_IGN_COUNT
};

/* "nan", "infinite", "negative", "too_large", "no_iteration", "not_a_number". */
const char *ts_ignored_name(int kind);

/* Where a file's nproc_per_node came from (struct ts_steplog). */
enum ts_nproc_source {
	TS_NPROC_STATED = 1,      /* stated as such */
	TS_NPROC_WORLD_NODES,     /* the stated world size / the stated nodes */
	TS_NPROC_SEEN             /* the local ranks the prefixes show */
};

struct ts_steplog {
	int strict;                       /* set before reading: unusable values fail */
	uint64_t ignored[TS_IGN_COUNT];   /* unusable step times / iterations seen */
	int format;                       /* first record format seen */
	uint32_t formats;                 /* bit (1 << format) per format seen */
	TS_VEC(struct ts_step) steps;     /* in input order */
	TS_VEC(struct ts_step_extra) extras;
	TS_VEC(struct ts_mem_report) mem;
	TS_VEC(struct ts_log_note) notes;
	struct ts_intern names;           /* extra-loss names */
	/* Theoretical memory footprints (MB as printed) and parameter counts
	 * (billions: transformer block, most loaded shard), NAN when absent. */
	double theo_weight_opt_mb, theo_activation_mb, theo_total_mb;
	double theo_params_b, theo_params_shard_b;
	/* Step times of zero, from any reader (DeepSpeed's pipeline engine
	 * "iter time (s): 0.000", Megatron's "elapsed time per iteration
	 * (ms): 0.0", Bridge's "Step Time : 0.00s", NeMo's "train_step_timing
	 * in s: 0.00"; two DeepSpeed throughput or torchtitan lines with one
	 * stamp; a JSONL 0): shorter than what the print resolves, or a
	 * writer's bug, not 0 ms steps, so their records have no step time
	 * (loss and health kept). Their count, and the first: its file, line,
	 * iteration and the print's resolution in ms (half a unit of the last
	 * digit printed; for stamps 1 ms over the steps between; 0 for a full
	 * float, JSONL's, written as 0; 0.5e-6, half a nanosecond, for one
	 * above zero that rounds to 0 ns). A negative step time is an ignored value
	 * (TS_IGN_NEGATIVE) instead. */
	uint64_t zero_steptimes;
	int32_t zero_file;
	int64_t zero_line, zero_iteration;
	double zero_res_ms;
	/* HF Trainer final summary, NAN when absent (ts_hf_run_mean). */
	double hf_train_runtime_s, hf_steps_per_s;
	uint64_t lines, bytes;            /* read so far, all files */
	size_t joined, broken;            /* wrapped records joined / dropped */
	/* Ranks under torchx prefixes "ROLE/N [defaultK]:" (several nodes of
	 * one NeMo-Run / torchx job): the global rank is N x nproc_per_node +
	 * K. nproc_per_node is the one a file states anywhere, before or
	 * after its first record (the first statement: torchrun's
	 * "nproc_per_node" or "local_world_size", NeMo-Run's
	 * "--nproc-per-node", an env dump's "LOCAL_WORLD_SIZE"), else world
	 * size / nodes when the file states both and they divide exactly
	 * (Megatron's "world_size", "WORLD_SIZE"; "--nnodes", "NNODES",
	 * torchrun's "group_world_size"), else the number of local ranks its
	 * prefixes show (the largest K + 1). replica_nproc_file is the first
	 * file with a replica above 0 (-1 none), replica_nproc the count its
	 * ranks took, replica_nproc_from where it came from (enum
	 * ts_nproc_source), replica_nproc_line the line of the statement
	 * (the world size's) and replica_nodes_line the nodes' (TS_NO_INT
	 * none); from world size / nodes, replica_world and replica_nodes are
	 * the two (else TS_NO_INT). When a file with a replica above 0 states none and its
	 * replicas do not each show the same local ranks 0..n-1 (or only 0),
	 * the count is a guess: replica_guess_file is that file (-1 none),
	 * replica_guess_nproc the count taken, replica_guess_line the first
	 * record under a replica above 0. replica_files counts the files with
	 * a replica above 0; replica_differ_file is the first of them whose
	 * ranks took another count than replica_nproc_file's (-1 none),
	 * replica_differ_nproc that count. */
	int replica_files, replica_differ_file;
	int64_t replica_differ_nproc;
	int replica_nproc_file, replica_nproc_from;
	int64_t replica_nproc, replica_nproc_line, replica_nodes_line;
	int64_t replica_world, replica_nodes;
	int replica_guess_file;
	int64_t replica_guess_nproc, replica_guess_line;
	int nfiles;
	struct ts_arena arena;
};

/*
 * The HF Trainer's whole-run mean step time, from its final summary dict:
 * transformers' speed_metrics() (trainer_utils.py) writes train_runtime R
 * (s, the training loop's wall time: warm-up, evaluations, checkpoint
 * saves and the best-model load included) and train_steps_per_second S =
 * max_steps / R rounded to 3 decimals. When exactly one step count n >= 1
 * has n / R within 0.0005 of S, it is the run's (steps) and the mean is
 * R / n, exact (low_ms = high_ms = mean_ms); else steps is TS_NO_INT
 * (possible from R = 1000 s on, where the rounding admits more than one
 * count), the mean 1000 / S ms and low_ms..high_ms the means the rounding
 * allows (high_ms NAN: unbounded, S <= 0.0005; mean_ms NAN when S is 0). A whole-run figure, not a steady-window statistic;
 * on a resumed run max_steps counts the steps done before the resume, so
 * the mean is too short. Returns 0, or -1 (out zeroed to NAN/TS_NO_INT)
 * when the log has no summary with a positive R and a finite S >= 0.
 */
struct ts_hf_run_mean {
	double mean_ms, low_ms, high_ms;
	int64_t steps;
};
int ts_hf_run_mean(const struct ts_steplog *log, struct ts_hf_run_mean *out);

void ts_steplog_init(struct ts_steplog *log);
void ts_steplog_release(struct ts_steplog *log);

/*
 * Read one file (or "-") and append its records, tagged with the next file
 * index. Lines that are not records are skipped. Returns 0, or TS_EIO /
 * TS_ELIMIT / TS_ENOMEM with err naming the file. A file with no record
 * at all is TS_EPARSE ("no step records ... expected ..."). Findings that
 * do not stop the read (joins, broken lines, a truncated last line, a
 * malformed JSON line) are appended to log->notes.
 */
int ts_steplog_read(struct ts_steplog *log, const char *path, struct ts_err *err);

/* As ts_steplog_read on a caller-owned buffer; name is used in messages. */
int ts_steplog_read_mem(struct ts_steplog *log, const void *data, size_t n,
			const char *name, struct ts_err *err);

/* Name of an extra loss. */
static inline const char *ts_steplog_name(const struct ts_steplog *log, uint32_t id)
{
	return ts_intern_str(&log->names, id);
}

#endif
