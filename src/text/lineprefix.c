/*
 * lineprefix.c - what captures put before the lines a process printed:
 * launcher prefixes, log-collector timestamps, progress-bar redraws, ANSI
 * sequences (lineprefix.h).
 */
#include <string.h>
#include "trainscope/lineprefix.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Digits at s[*j] (at most 7) as a number, or -1 when there are none. */
static int64_t digits(const char *s, size_t n, size_t *j)
{
	size_t i = *j;
	int64_t v = 0;

	while (*j < n && is_digit(s[*j]) && *j - i < 7)
		v = v * 10 + (s[(*j)++] - '0');
	return *j > i ? v : -1;
}

/*
 * torchx (NeMo-Run's local executor) puts the replica, "ROLE/N ", before
 * each line torchrun copies: "retraining/0 [default0]:". The role is a
 * Python identifier-like name (letters, digits, '_', '-', '.').
 */
static size_t replica_prefix(const char *s, size_t n, int64_t *rank)
{
	size_t j = 0, k;

	while (j < n && j < 64 && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') ||
				   is_digit(s[j]) || s[j] == '_' || s[j] == '-' || s[j] == '.'))
		j++;
	if (!j || j >= n || s[j] != '/')
		return 0;
	j++;
	if (digits(s, n, &j) < 0 || j + 1 >= n || s[j] != ' ' || s[j + 1] != '[')
		return 0;
	j++;
	/* torchrun's "[defaultK]:" only (j + 1 < n: the '[' was seen) */
	if (!((s[j + 1] >= 'a' && s[j + 1] <= 'z') || s[j + 1] == '_'))
		return 0;
	k = ts_launcher_prefix(s + j, n - j, rank);
	return k ? j + k : 0;
}

int64_t ts_launcher_replica(const char *s, size_t n)
{
	size_t j = 0;

	if (!n || s[0] == '[' || !replica_prefix(s, n, NULL))
		return -1;
	while (s[j] != '/')
		j++;
	j++;
	return digits(s, n, &j);
}

size_t ts_launcher_prefix(const char *s, size_t n, int64_t *rank)
{
	size_t j = 0;
	int64_t v;

	/* srun pads its label to the widest task number: " 3: ", "13: " */
	while (j < n && j < 8 && s[j] == ' ')
		j++;
	if (j < n && is_digit(s[j])) {
		v = digits(s, n, &j);
		if (j >= n || s[j] != ':' || (j + 1 < n && s[j + 1] != ' ' && s[j + 1] != '\t'))
			return 0;
		if (rank)
			*rank = v;
		return j + 1;
	}
	if (j || !n)
		return 0;
	if (s[0] != '[')
		return replica_prefix(s, n, rank);
	j = 1;
	while (j < n && ((s[j] >= 'a' && s[j] <= 'z') || s[j] == '_'))
		j++;
	if (j > 1) {
		/* "[rank3]:" is PyTorch's own prefix, the global rank, not a launcher's */
		if (j == 5 && !memcmp(s + 1, "rank", 4))
			return 0;
		v = digits(s, n, &j);
		if (v < 0 || j + 1 >= n || s[j] != ']' || s[j + 1] != ':')
			return 0;
		if (rank)
			*rank = v;
		return j + 2;
	}
	if (digits(s, n, &j) < 0 || j >= n || s[j] != ',')
		return 0;
	j++;
	v = digits(s, n, &j);
	if (v < 0 || j + 1 >= n || s[j] != ']' || s[j + 1] != '<')
		return 0;
	for (j += 2; j < n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')); j++)
		;
	if (j + 1 >= n || s[j] != '>' || s[j + 1] != ':')
		return 0;
	if (rank)
		*rank = v;
	return j + 2;
}

/* s[i..] matches pat, where 'd' is any digit and other bytes themselves. */
static int shape(const char *s, size_t n, size_t i, const char *pat)
{
	for (; *pat; pat++, i++)
		if (i >= n || (*pat == 'd' ? !is_digit(s[i]) : s[i] != *pat))
			return 0;
	return 1;
}

size_t ts_collector_stamp(const char *s, size_t n)
{
	size_t j = 19;

	if (!shape(s, n, 0, "dddd-dd-ddTdd:dd:dd"))
		return 0;
	if (j < n && s[j] == '.') {
		size_t f = ++j;
		while (j < n && is_digit(s[j]) && j - f < 12)
			j++;
		if (j == f)
			return 0;
	}
	if (j < n && s[j] == 'Z')
		j++;
	else if (j < n && (s[j] == '+' || s[j] == '-') && shape(s, n, j + 1, "dd:dd"))
		j += 6;
	if (j >= n || (s[j] != ' ' && s[j] != '\t'))
		return 0;
	return j + 1;
}

/* The content start of the first bar's bracket in s[0..n): after "{count}
 * [" and opening with an elapsed time; NULL when s holds no bar head. */
static const char *bar_head(const char *s, size_t n)
{
	const char *e = s + n, *from = s, *p, *q, *t;

	/* '[' is rare in a line, ' ' is not: look for the bracket */
	while ((q = memchr(from, '[', (size_t)(e - from)))) {
		int digit = 0, slash = 0;

		from = ++q;
		if (q - s < 2 || q[-2] != ' ')
			continue;
		p = q - 2;   /* the blank before '[' */
		/* the count before: "10/15", "1.2k/3.4k", "12it", "0/?" */
		for (t = p; t > s && t[-1] != ' '; t--) {
			digit |= t[-1] >= '0' && t[-1] <= '9';
			slash |= t[-1] == '/';
		}
		if (digit && (slash || (p - t > 2 && p[-2] == 'i' && p[-1] == 't'))) {
			/* "[mm:ss" or "[h:mm:ss" */
			const char *d = q;

			while (d < e && *d >= '0' && *d <= '9')
				d++;
			if (d > q && e - d >= 3 && d[0] == ':' && d[1] >= '0' && d[1] <= '5' &&
			    d[2] >= '0' && d[2] <= '9')
				return q;
		}
	}
	return NULL;
}

size_t ts_progress_bar(const char *s, size_t n, const char **in, size_t *in_n)
{
	const char *q = bar_head(s, n), *c;

	if (!q || !(c = memchr(q, ']', (size_t)(s + n - q))))
		return 0;
	*in = q;
	*in_n = (size_t)(c - q);
	return (size_t)(c + 1 - s);
}

int ts_progress_bar_open(const char *s, size_t n, const char **in, size_t *in_n)
{
	const char *q = bar_head(s, n);

	if (!q || memchr(q, ']', (size_t)(s + n - q)))
		return 0;
	*in = q;
	*in_n = (size_t)(s + n - q);
	return 1;
}

int ts_ansi_strip(struct ts_sb *out, const char *s, size_t n)
{
	size_t i = 0;

	if (!memchr(s, 0x1b, n))
		return 0;
	ts_sb_reset(out);
	while (i < n) {
		if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '[') {
			i += 2;
			while (i < n && !(s[i] >= 0x40 && s[i] <= 0x7e))
				i++;
			i++;
			continue;
		}
		ts_sb_addc(out, s[i++]);
	}
	return 1;
}
