/*
 * test_stamp.c - ts_stamp_parse, the one reader of calendar stamps in
 * text (training logs, telemetry captures). Expected nanoseconds from
 * Python's datetime (an independent calendar), e.g.
 *   datetime(2024,3,14,23,7,56,tzinfo=timezone.utc).timestamp() * 1e9
 * and the zone by hand: "+08:00" is 8 h east, so UTC is 8 h earlier.
 */
#include <string.h>
#include "harness.h"
#include "trainscope/core.h"

static const struct {
	const char *s;
	size_t len;          /* bytes the stamp takes; 0: not a stamp */
	int64_t ns;
	int zoned;
} rows[] = {
	{ "2024-03-14 23:07:56", 19, 1710457676000000000LL, 0 },
	{ "20240314 23:07:56", 17, 1710457676000000000LL, 0 },          /* compact date */
	{ "2026/01/06 15:13:03.389", 23, 1767712383389000000LL, 0 },    /* nvidia-smi */
	{ "2026-01-06T15:13:03.389+08:00", 29, 1767683583389000000LL, 1 },
	{ "2026-01-06T15:13:03.389+0800", 28, 1767683583389000000LL, 1 },
	{ "2026-01-06T15:13:03.389-05:30", 29, 1767732183389000000LL, 1 },
	{ "2026-01-06T15:13:03.389Z", 24, 1767712383389000000LL, 1 },
	/* Python logging's asctime, then the message: only the stamp read */
	{ "2025-04-01 00:25:47,084 - root - INFO - step: 1", 23, 1743467147084000000LL, 0 },
	{ "2000-02-29 9:5:3 rest", 16, 951815103000000000LL, 0 },       /* one-digit fields */
	/* nanoseconds exact, rounded at the tenth digit */
	{ "2024-03-14 23:07:56.1234567895", 30, 1710457676123456790LL, 0 },
	{ "2024-03-14 23:07:56.000000001", 29, 1710457676000000001LL, 0 },
	/* a zone-like tail that is not one: the time as written */
	{ "2024-03-14 23:07:56+x", 19, 1710457676000000000LL, 0 },
	/* not stamps */
	{ "2024-03-14", 0, 0, 0 },
	{ "2024-13-14 23:07:56", 0, 0, 0 },      /* month 13 */
	{ "2024-03/14 23:07:56", 0, 0, 0 },      /* mixed separators */
	{ "24-03-14 23:07:56", 0, 0, 0 },        /* two-digit year */
	{ "[2024-03-14 23:07:56]", 0, 0, 0 },    /* the caller steps over brackets */
	{ "2024-03-14 23:07", 0, 0, 0 },
	{ "", 0, 0, 0 },
};

TEST(stamp_parse_forms)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int64_t ns = -1;
		int zoned = -1;
		size_t got = ts_stamp_parse(rows[i].s, strlen(rows[i].s), &ns, &zoned);
		CHECK_I64((int64_t)got, (int64_t)rows[i].len);
		if (!rows[i].len)
			continue;
		CHECK_I64(ns, rows[i].ns);
		CHECK_I64(zoned, rows[i].zoned);
	}
}

/* The length bounds the read: a stamp cut anywhere is not read past n. */
TEST(stamp_parse_bounded)
{
	const char *s = "2026-01-06T15:13:03.389+08:00";
	int64_t ns;
	int zoned;

	for (size_t n = 0; n < 18; n++)
		CHECK_I64((int64_t)ts_stamp_parse(s, n, &ns, &zoned), 0);
	/* cut after the seconds' first digit: 15:13:0 */
	CHECK_I64((int64_t)ts_stamp_parse(s, 18, &ns, &zoned), 18);
	CHECK_I64(ns, 1767712380000000000LL);
	CHECK_I64((int64_t)ts_stamp_parse(s, 19, &ns, &zoned), 19);
	CHECK_I64(ns, 1767712383000000000LL);
	CHECK_I64((int64_t)ts_stamp_parse(s, 26, &ns, &zoned), 26); /* "+08": hours only */
	CHECK_I64(ns, 1767683583389000000LL);
	CHECK_I64(zoned, 1);
}
