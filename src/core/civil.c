/*
 * civil.c - a calendar date and time as nanoseconds since the Unix epoch,
 * for the readers that meet timestamps in text (telemetry captures,
 * training logs).
 */
#include <math.h>
#include "trainscope/core.h"

/* Days from 1970-01-01 of a date in the proleptic Gregorian calendar (the
 * era/day-of-era decomposition: 400-year eras of 146,097 days). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int64_t ts_civil_ns(int y, int mo, int d, int h, int mi, double sec)
{
	if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 ||
	    mi < 0 || mi > 59 || !(sec >= 0 && sec < 61))
		return INT64_MIN;
	int64_t days = days_from_civil(y, mo, d);
	return (days * 86400 + h * 3600 + mi * 60) * 1000000000LL + (int64_t)llround(sec * 1e9);
}

/* One or two ASCII digits at s[*i], as a number; -1 when none. */
static int digits12(const char *s, size_t n, size_t *i)
{
	int v;

	if (*i >= n || s[*i] < '0' || s[*i] > '9')
		return -1;
	v = s[(*i)++] - '0';
	if (*i < n && s[*i] >= '0' && s[*i] <= '9')
		v = v * 10 + (s[(*i)++] - '0');
	return v;
}

/* Exactly k ASCII digits at s[*i], as a number; -1 otherwise. */
static int digits_k(const char *s, size_t n, size_t *i, int k)
{
	int v = 0;

	for (int j = 0; j < k; j++, (*i)++) {
		if (*i >= n || s[*i] < '0' || s[*i] > '9')
			return -1;
		v = v * 10 + (s[*i] - '0');
	}
	return v;
}

/* The zone at s[*i]: "Z", "+HH:MM", "+HHMM", "+HH"; its offset east of
 * UTC in seconds in *off; 0 when there is none (nothing consumed). */
static int zone_at(const char *s, size_t n, size_t *i, int64_t *off)
{
	size_t j = *i;
	int sign, hh, mm = 0;

	if (j < n && s[j] == 'Z') {
		*off = 0;
		*i = j + 1;
		return 1;
	}
	if (j >= n || (s[j] != '+' && s[j] != '-'))
		return 0;
	sign = s[j++] == '-' ? -1 : 1;
	if ((hh = digits_k(s, n, &j, 2)) < 0)
		return 0;
	size_t m = j + (j < n && s[j] == ':');
	if (m + 1 < n && s[m] >= '0' && s[m] <= '9' && s[m + 1] >= '0' && s[m + 1] <= '9') {
		mm = (s[m] - '0') * 10 + (s[m + 1] - '0');
		j = m + 2;
	}
	if (hh > 18 || mm > 59)
		return 0;
	*off = sign * (int64_t)(hh * 3600 + mm * 60);
	*i = j;
	return 1;
}

size_t ts_stamp_parse(const char *s, size_t n, int64_t *ns, int *zoned)
{
	size_t i = 0;
	int y, mo, d, h, mi, se;
	int64_t t, off = 0, frac = 0;

	if ((y = digits_k(s, n, &i, 4)) < 0)
		return 0;
	if (i < n && (s[i] == '-' || s[i] == '/')) {
		char sep = s[i++];
		if ((mo = digits12(s, n, &i)) < 0 || i >= n || s[i++] != sep ||
		    (d = digits12(s, n, &i)) < 0)
			return 0;
	} else if ((mo = digits_k(s, n, &i, 2)) < 0 || (d = digits_k(s, n, &i, 2)) < 0) {
		return 0;
	}
	if (i >= n || (s[i] != ' ' && s[i] != 'T'))
		return 0;
	i++;
	if ((h = digits12(s, n, &i)) < 0 || i >= n || s[i++] != ':' ||
	    (mi = digits12(s, n, &i)) < 0 || i >= n || s[i++] != ':' ||
	    (se = digits12(s, n, &i)) < 0)
		return 0;
	if (i + 1 < n && (s[i] == '.' || s[i] == ',') && s[i + 1] >= '0' && s[i + 1] <= '9') {
		/* exact nanoseconds: nine digits, rounded at the tenth */
		int k = 0;
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, k++) {
			if (k < 9)
				frac = frac * 10 + (s[i] - '0');
			else if (k == 9)
				frac += s[i] >= '5';
		}
		for (; k < 9; k++)
			frac *= 10;
	}
	if ((t = ts_civil_ns(y, mo, d, h, mi, se)) == INT64_MIN)
		return 0;
	*zoned = zone_at(s, n, &i, &off);
	*ns = t + frac - off * 1000000000LL;
	return i;
}
