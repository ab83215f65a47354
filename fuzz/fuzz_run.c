/*
 * fuzz_run.c - libFuzzer target for the run model (run.h): the input is
 * cut at each "\n@@\n" into up to four files of one run directory (a step
 * file per piece: logs, JSONL, or anything else), which is loaded as every
 * run command loads it. Any bytes must load or fail with a message, and a
 * loaded run must keep the model's invariants:
 *  - the window object counts exactly the steps the statistics use, and
 *    its steps plus its excluded groups are every timed step;
 *  - the window lies inside the series, first <= last;
 *  - a CI of the (positive) step time never reaches below 0;
 *  - stall shares are shares (0..100 %);
 *  - every warning has a kebab-case code and a sentence;
 *  - the steps JSON renders and is balanced.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trainscope/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

/* The pieces of the last input and the directory go when the fuzzer exits. */
static void remove_dir(void)
{
	for (int i = 0; i < 4; i++) {
		char path[96];

		snprintf(path, sizeof(path), "%s/f%d.log", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

static void write_piece(int i, const uint8_t *p, size_t n)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/f%d.log", dir, i);
	f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

static void invariants(const struct ts_runmodel *rm)
{
	const struct ts_steps_report *r = &rm->steps;
	const struct ts_window_obj *w = &rm->window;
	size_t timed = 0, excl = 0;
	struct ts_sb sb;
	struct ts_jw jw;
	long depth = 0;

	for (size_t i = 0; i < rm->warnings.v.n; i++) {
		const struct ts_warning *x = &rm->warnings.v.v[i];
		size_t m = strlen(x->message);

		check(x->code[0] && strspn(x->code, "abcdefghijklmnopqrstuvwxyz-") == strlen(x->code),
		      "kebab-case code");
		check(m > 0 && x->message[m - 1] == '.', "warning is a sentence");
	}
	if (!rm->have_steps)
		return;
	for (size_t i = 0; i < r->n; i++)
		timed += isfinite(r->step_ms[i]) != 0;
	for (size_t i = 0; i < w->nexcl; i++)
		excl += w->excl[i].steps;
	if (w->first != TS_NO_INT) {
		check(w->first <= w->last, "window first <= last");
		check(w->steps == r->win_n, "window steps are the statistics' steps");
		check(w->steps + excl == timed, "window steps + excluded = timed steps");
	}
	if (r->ci.method != TS_CI_NONE && isfinite(r->ci.lo))
		check(r->ci.lo >= 0, "CI of a step time below 0");
	check(!(r->periodic_share > 1.0 + 1e-9) && !(r->periodic_share < 0), "periodic share");
	ts_sb_init(&sb);
	ts_jw_init(&jw, &sb, 0);
	ts_steps_json(&jw, rm, 1);
	check(!sb.failed && sb.len > 2, "steps JSON renders");
	for (size_t i = 0, instr = 0; i < sb.len; i++) {
		char c = sb.buf[i];

		if (instr) {
			if (c == '\\')
				i++;
			else if (c == '"')
				instr = 0;
			continue;
		}
		instr = c == '"';
		depth += (c == '{' || c == '[') - (c == '}' || c == ']');
		check(depth >= 0, "JSON nesting");
	}
	check(depth == 0, "JSON balanced");
	ts_sb_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sep[] = "\n@@\n";
	struct ts_runmodel rm;
	struct ts_err err;
	char *paths[1] = { dir };
	size_t start = 0;
	int n = 0, rc;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_run.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	for (int i = 0; i < 4; i++) {
		char path[96];

		snprintf(path, sizeof(path), "%s/f%d.log", dir, i);
		unlink(path);
	}
	while (n < 4) {
		const uint8_t *hit = start < size ?
			memmem(data + start, size - start, sep, sizeof(sep) - 1) : NULL;
		size_t end = hit ? (size_t)(hit - data) : size;

		write_piece(n++, data + start, end - start);
		if (!hit)
			break;
		start = end + sizeof(sep) - 1;
	}
	ts_runmodel_init(&rm);
	ts_err_init(&err);
	rc = ts_runmodel_load(&rm, paths, 1, NULL, 0, &err);
	if (rc)
		check(err.msg[0] != 0, "an error says why");
	else
		invariants(&rm);
	ts_runmodel_release(&rm);
	return 0;
}
