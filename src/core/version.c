/*
 * version.c - when two recorded version strings name the same version.
 *
 * Traces, exports and contracts write one version in several ways
 * ("535.104.05" and "535.104.5", "12.4" and "12.4.0", "2.5.1+cu124" and
 * "2.5.1"); compared as text they would read as an environment change.
 */
#include <string.h>
#include "trainscope/core.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Compare the digit runs a[0..na) and b[0..nb) as numbers (any length). */
static int same_number(const char *a, size_t na, const char *b, size_t nb)
{
	while (na > 1 && *a == '0')
		a++, na--;
	while (nb > 1 && *b == '0')
		b++, nb--;
	return na == nb && memcmp(a, b, na) == 0;
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

int ts_version_same(const char *a, const char *b)
{
	size_t ra, rb, i = 0, k = 0;
	const char *la, *lb, *pa, *pb;

	if (!is_digit(a[0]) || !is_digit(b[0]))
		return strcmp(a, b) == 0;
	ra = release_len(a);
	rb = release_len(b);
	while (i < ra || k < rb) {
		size_t ea = i, eb = k;
		while (ea < ra && is_digit(a[ea]))
			ea++;
		while (eb < rb && is_digit(b[eb]))
			eb++;
		/* a missing component is 0 */
		if (!same_number(i < ra ? a + i : "0", i < ra ? ea - i : 1, k < rb ? b + k : "0",
				 k < rb ? eb - k : 1))
			return 0;
		i = ea < ra ? ea + 1 : ra;
		k = eb < rb ? eb + 1 : rb;
	}
	/* the rest up to a '+' (pre-release, dev, post) must match as text;
	 * a local build label after '+' only when both sides carry one */
	pa = a + ra;
	pb = b + rb;
	la = strchr(pa, '+');
	lb = strchr(pb, '+');
	if ((la ? (size_t)(la - pa) : strlen(pa)) != (lb ? (size_t)(lb - pb) : strlen(pb)) ||
	    memcmp(pa, pb, la ? (size_t)(la - pa) : strlen(pa)) != 0)
		return 0;
	return !la || !lb || strcmp(la, lb) == 0;
}
