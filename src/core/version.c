/*
 * version.c - how two recorded version strings order, and when they name
 * the same version.
 *
 * Traces, exports and contracts write one version in several ways
 * ("535.104.05" and "535.104.5", "12.4" and "12.4.0", "2.5.1+cu124" and
 * "2.5.1"); compared as text they would read as an environment change.
 * Preflight (driver against the CUDA table, NVML library against the
 * kernel module) and contract capture (the highest library copy) order
 * versions with the same rule, so "same" and "newer" never disagree.
 */
#include <string.h>
#include "trainscope/core.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* Compare the digit runs a[0..na) and b[0..nb) as numbers (any length). */
static int num_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	while (na > 1 && *a == '0')
		a++, na--;
	while (nb > 1 && *b == '0')
		b++, nb--;
	if (na != nb)
		return na < nb ? -1 : 1;
	return sign(memcmp(a, b, na));
}

/* Texts a[0..na) and b[0..nb) in natural order (digit runs as numbers,
 * other bytes as bytes, a prefix first); ties broken by the bytes, so 0
 * only for equal text. */
static int text_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, k = 0;
	int c;

	while (i < na && k < nb) {
		if (is_digit(a[i]) && is_digit(b[k])) {
			size_t ei = i, ek = k;
			while (ei < na && is_digit(a[ei]))
				ei++;
			while (ek < nb && is_digit(b[ek]))
				ek++;
			if ((c = num_cmp(a + i, ei - i, b + k, ek - k)))
				return c;
			i = ei;
			k = ek;
			continue;
		}
		if (a[i] != b[k])
			return (unsigned char)a[i] < (unsigned char)b[k] ? -1 : 1;
		i++, k++;
	}
	if (i < na || k < nb)
		return i < na ? 1 : -1;
	if ((c = memcmp(a, b, na < nb ? na : nb)))
		return sign(c);
	return na == nb ? 0 : na < nb ? -1 : 1;
}

/* The numeric release part: components of digits joined by '.', each '.'
 * followed by a digit. Returns its length. */
static size_t release_len(const char *s)
{
	size_t i = 0;

	while (is_digit(s[i])) {
		while (is_digit(s[i]))
			i++;
		if (s[i] != '.' || !is_digit(s[i + 1]))
			break;
		i++;
	}
	return i;
}

/* Where the text after the release ranks: 0 a pre-release (a letter after
 * any '.', '-' or '_': "a0", "rc1", ".dev0", "-beta"), 1 none, 2 after the
 * release (".post1", "-1"). */
static int suffix_rank(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == '.' || s[i] == '-' || s[i] == '_'))
		i++;
	if (!n)
		return 1;
	if (i < n && is_alpha(s[i]) && !(n - i >= 4 && !strncmp(s + i, "post", 4)))
		return 0;
	return 2;
}

int ts_version_cmp(const char *a, const char *b)
{
	size_t ra, rb, na, nb, i = 0, k = 0;
	const char *la, *lb, *pa, *pb;
	int c;

	if (!is_digit(a[0]) || !is_digit(b[0]))
		return sign(strcmp(a, b));
	ra = release_len(a);
	rb = release_len(b);
	while (i < ra || k < rb) {
		size_t ea = i, eb = k;
		while (ea < ra && is_digit(a[ea]))
			ea++;
		while (eb < rb && is_digit(b[eb]))
			eb++;
		/* a missing component is 0 */
		if ((c = num_cmp(i < ra ? a + i : "0", i < ra ? ea - i : 1, k < rb ? b + k : "0",
				 k < rb ? eb - k : 1)))
			return c;
		i = ea < ra ? ea + 1 : ra;
		k = eb < rb ? eb + 1 : rb;
	}
	pa = a + ra;
	pb = b + rb;
	la = strchr(pa, '+');
	lb = strchr(pb, '+');
	na = la ? (size_t)(la - pa) : strlen(pa);
	nb = lb ? (size_t)(lb - pb) : strlen(pb);
	if ((c = suffix_rank(pa, na) - suffix_rank(pb, nb)))
		return sign(c);
	if ((c = text_cmp(pa, na, pb, nb)))
		return c;
	/* a local build label counts only when both sides carry one */
	if (!la || !lb)
		return 0;
	return text_cmp(la, strlen(la), lb, strlen(lb));
}

int ts_version_same(const char *a, const char *b)
{
	return ts_version_cmp(a, b) == 0;
}
