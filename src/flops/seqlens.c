/*
 * seqlens.c - read the sub-sequence lengths of a packed (THD) step.
 *
 * With sequence packing Megatron counts real tokens T = sum L_i and the
 * attention square S2 = sum L_i^2 instead of B·s and B·s^2, so the FLOPs of
 * a packed step depend on the length distribution. Users have it either as
 * a plain list (one length per line) or as a histogram ("LENGTH COUNT");
 * both reduce to the three sums kept here, so the file is streamed and
 * never stored.
 */
#include <string.h>
#include "trainscope/flops.h"
#include "trainscope/input.h"

#define MAX_TOKENS ((double)((int64_t)1 << 40))

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == ',';
}

/* Next unsigned decimal at line[*i]; 0 or -1 (not a number / too big). */
static int number(const char *line, size_t n, size_t *i, int64_t *out)
{
	int64_t v = 0;
	size_t start = *i;

	while (*i < n && line[*i] >= '0' && line[*i] <= '9') {
		if (v > ((int64_t)1 << 40))
			return -1;
		v = v * 10 + (line[*i] - '0');
		(*i)++;
	}
	if (*i == start)
		return -1;
	*out = v;
	return 0;
}

static int read_lines(struct ts_seqlens *out, struct ts_input *in, const char *name,
		      struct ts_err *err)
{
	const char *line;
	size_t n;
	uint64_t off;
	int64_t lineno = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	while ((rc = ts_input_getline(in, &line, &n, &off, err)) > 0) {
		int64_t len, count = 1;
		size_t i = 0;

		lineno++;
		while (i < n && is_space(line[i]))
			i++;
		if (i == n || line[i] == '#')
			continue;
		if (number(line, n, &i, &len) || len == 0)
			return ts_err_at(err, TS_EPARSE, name, (int64_t)(off + i), lineno,
					 "expected a sequence length (a positive integer)");
		while (i < n && is_space(line[i]))
			i++;
		if (i < n && line[i] != '#') {
			if (number(line, n, &i, &count))
				return ts_err_at(err, TS_EPARSE, name, (int64_t)(off + i), lineno,
						 "expected a count after the length");
			while (i < n && is_space(line[i]))
				i++;
			if (i < n && line[i] != '#')
				return ts_err_at(err, TS_EPARSE, name, (int64_t)(off + i), lineno,
						 "expected 'LENGTH' or 'LENGTH COUNT' per line");
		}
		out->tokens += (double)len * (double)count;
		out->square += (double)len * (double)len * (double)count;
		out->count += count;
		if (count > 0 && len > out->max_len)
			out->max_len = len;
		if (out->tokens > MAX_TOKENS)
			return ts_err_at(err, TS_ELIMIT, name, (int64_t)off, lineno,
					 "more than 2^40 tokens in one step");
	}
	if (rc < 0)
		return rc;
	if (out->count == 0)
		return ts_err_at(err, TS_EPARSE, name, 0, 1, "no sequence lengths in the file");
	return 0;
}

int ts_seqlens_parse(struct ts_seqlens *out, const void *data, size_t n, const char *name,
		     struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open_mem(&in, data, n, name, err)))
		return rc;
	rc = read_lines(out, &in, name, err);
	ts_input_release(&in);
	return rc;
}

int ts_seqlens_read(struct ts_seqlens *out, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open(&in, path, err)))
		return rc;
	rc = read_lines(out, &in, in.path, err);
	ts_input_release(&in);
	return rc;
}
