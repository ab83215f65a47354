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
