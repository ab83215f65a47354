/*
 * contract.h - the measurement contract: what exactly was measured.
 *
 * A contract is a flat, sorted set of fields "section.key" -> value (a
 * string, or NULL for "unknown"), in two sections:
 *   environment.*  detected on the machine: OS, CPU, GPUs and driver, CUDA /
 *                  MUSA SDK, python3 / torch / torch_musa, NCCL / MCCL and the
 *                  environment variables that change performance;
 *   workload.*     model and revision, data, precision, shapes, accumulation,
 *                  device count, parallel layout, recompute, dispatcher,
 *                  graph scopes, steady window (from --set and from the
 *                  arguments block of a Megatron log).
 * A tool that is not installed is recorded with the value "absent", never
 * guessed. Each contract is labelled training-equivalent or benchmark-only
 * (forced load balancing, mock data, NaN checks off, optimizer or checkpoint
 * disabled) with the reasons.
 *
 * File format (JSON, written deterministically):
 *   { "schema": "trainscope.contract/1", "label": "...", "label_reasons": [...],
 *     "captured": {"time": ..., "host": ..., "trainscope": ...},   (not compared)
 *     "environment": {"os": "...", ...}, "workload": {"model": "...", ...} }
 *
 * The library never runs programs itself: capture asks a caller-supplied
 * runner (struct ts_probe) for tool output, and reads files below probe->root
 * so tests can hand it a fake machine.
 *
 * Ownership: every string in a contract lives in its arena; release frees all.
 */
#ifndef TRAINSCOPE_CONTRACT_H
#define TRAINSCOPE_CONTRACT_H

#include <stddef.h>
#include "trainscope/core.h"

#define TS_CONTRACT_SCHEMA "trainscope.contract/1"
#define TS_CONTRACT_MAX_BYTES ((size_t)16 << 20)

struct ts_contract_field {
	const char *key;   /* "environment.os", "workload.tp", ... */
	const char *value; /* NULL = unknown */
	size_t seq;        /* order set (a later value of a key wins) */
};

struct ts_contract {
	TS_VEC(struct ts_contract_field) fields; /* one per key, sorted, after ts_contract_finish */
	TS_VEC(const char *) reasons;            /* why benchmark-only; empty if training-equivalent */
	int benchmark_only;
	const char *captured_time;   /* ISO 8601 UTC, informational */
	const char *captured_host;
	struct ts_arena arena;
};

void ts_contract_init(struct ts_contract *c);
void ts_contract_release(struct ts_contract *c);

/* Set key to value (copied; NULL = unknown); the last value set wins.
 * Returns 0 or TS_ENOMEM. */
int ts_contract_set(struct ts_contract *c, const char *key, const char *value);
/* Value of key; NULL when unknown or missing. *found (may be NULL) says
 * whether the key exists. */
const char *ts_contract_get(const struct ts_contract *c, const char *key, int *found);

/*
 * Apply "key=value" from the command line. A key without a section
 * ("tp=2") goes to workload.; "environment.x=y" and "workload.x=y" are
 * taken as written. TS_EUSAGE when there is no '=' or the key is empty.
 */
int ts_contract_apply_set(struct ts_contract *c, const char *assignment, struct ts_err *err);

/* Runs argv (argv[0] looked up on PATH); out receives stdout. Returns the
 * exit status, -1 when the program is not installed, -2 on failure. */
typedef int (*ts_probe_run_fn)(void *ctx, const char *const argv[], struct ts_sb *out);

struct ts_probe {
	ts_probe_run_fn run;
	void *run_ctx;
	char *const *envp;  /* NAME=VALUE list, NULL-terminated (may be NULL) */
	const char *root;   /* prefix for /proc, /etc, /usr paths; "" = this machine */
};

/* Fill environment.* from the probe. Never fails for a missing tool
 * (recorded as "absent"); TS_ENOMEM only. */
int ts_contract_capture_env(struct ts_contract *c, const struct ts_probe *p, struct ts_err *err);

/*
 * Fill workload.* from the arguments block Megatron-LM prints at start-up
 * ("------ arguments ------" ... "---- end of arguments ----"). TS_EIO if the
 * file cannot be read, TS_EPARSE (naming the file) if it has no arguments
 * block.
 */
int ts_contract_from_log(struct ts_contract *c, const char *path, struct ts_err *err);
/* The same on a caller-owned buffer (name is used in messages). */
int ts_contract_from_log_mem(struct ts_contract *c, const char *data, size_t n,
			     const char *name, struct ts_err *err);

/* Sort the fields and compute the label and its reasons from workload.*. */
int ts_contract_finish(struct ts_contract *c);

/* The contract as JSON (pretty, deterministic, trailing newline). */
void ts_contract_write(const struct ts_contract *c, struct ts_sb *out);

/*
 * Read a contract file (or buffer). TS_EIO if unreadable, TS_EPARSE with the
 * byte offset if it is not JSON or its "schema" is not trainscope.contract/1,
 * TS_ELIMIT above TS_CONTRACT_MAX_BYTES. The result is finished (sorted,
 * labelled from its own fields).
 */
int ts_contract_read(struct ts_contract *c, const char *path, struct ts_err *err);
int ts_contract_read_mem(struct ts_contract *c, const char *data, size_t n,
			 const char *name, struct ts_err *err);

/* One difference between two finished contracts (values NULL = unknown or
 * missing). Pointers refer into the two contracts. */
struct ts_contract_diff {
	const char *key;
	const char *a;
	const char *b;
};

/* 1 for the fields that hold a version (environment.gpu.driver,
 * cuda.sdk, musa.sdk, python, torch, torch.cuda, torch.hip, torch.nccl,
 * torch_musa, torch.musa, torch.mccl, nccl.lib, mccl.lib). */
int ts_contract_key_is_version(const char *key);

/* Every field whose value differs, in key order; version fields
 * (ts_contract_key_is_version) by ts_version_same (core.h: "535.104.05"
 * and "535.104.5" are one version). *diffs is malloc'ed (free it); *n
 * receives the count. Returns 0 or TS_ENOMEM. */
int ts_contract_diff(const struct ts_contract *a, const struct ts_contract *b,
		     struct ts_contract_diff **diffs, size_t *n);

#endif
