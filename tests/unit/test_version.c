/*
 * test_version.c - the one version comparator family (core.h):
 * ts_version_cmp's order by hand from its rule, in both directions, and
 * its zero exactly ts_version_same's equality.
 */
#include "harness.h"
#include "trainscope/core.h"

/*
 * want: the sign of ts_version_cmp(a, b), by hand from core.h's rule.
 * Where preflight's pf_vercmp (skip non-digits, strtoull runs) or contract
 * capture's vercmp (strtol components, stop at a non-digit), which this
 * function replaced, gave another sign, the comment says what each gave
 * ("=": the same as want); rows without one are where both were right
 * and are kept.
 */
static const struct {
	const char *a, *b;
	int want;
} rows[] = {
	/* driver versions against preflight's CUDA table, library copies */
	{ "535.104.05", "525.60.13", 1 },
	{ "470.82.01", "525.60.13", -1 },
	{ "535.104.05", "535.104.5", 0 },
	{ "535.104.05", "535.104.05", 0 },
	{ "535.104.05", "535.104", 1 },
	{ "2.21.5", "2.18.3", 1 },
	{ "12.10", "12.9", 1 },
	{ "12040", "12.4", 1 }, /* encodings are not translated */
	{ "13000", "013000", 0 },
	/* a missing trailing component is 0: preflight said 12.4 < 12.4.0 */
	{ "12.4", "12.4.0", 0 }, /* before: preflight -1, contract = */
	{ "12.4.0.0", "12.4", 0 }, /* before: preflight 1, contract = */
	/* numbers past 64 bits: both saturated and called these equal */
	{ "99999999999999999999", "99999999999999999998", 1 }, /* before: preflight 0, contract 0 */
	/* a pre-release is older than its release: preflight read the rc
	 * number as a fourth component, contract capture stopped at it */
	{ "2.5.0rc1", "2.5.0", -1 }, /* before: preflight 1, contract 0 */
	{ "2.5.0a0+git1234", "2.5.0", -1 }, /* before: preflight 1, contract 0 */
	{ "2.5.0-rc1", "2.5.0", -1 }, /* before: preflight 1, contract 0 */
	{ "2.5.0rc2", "2.5.0rc10", -1 }, /* before: preflight =, contract 0 */
	{ "2.5.0rc01", "2.5.0rc1", -1 }, /* not as text; before: preflight 0, contract 0 */
	/* a post-release is newer */
	{ "2.5.0.post1", "2.5.0", 1 }, /* before: preflight =, contract 0 */
	{ "12.4.1-1", "12.4.1", 1 }, /* before: preflight =, contract 0 */
	{ "2.5.0.post1", "2.5.0rc1", 1 }, /* before: preflight 0, contract 0 */
	/* a local build label counts only when both carry one */
	{ "2.5.1+cu124", "2.5.1", 0 }, /* before: preflight 1, contract = */
	{ "2.5.1+cu121", "2.5.1+cu124", -1 }, /* before: preflight =, contract 0 */
	{ "2.5.1+cu124", "2.5.1+cu124", 0 },
	{ "2.5.1+cu124", "2.5.2", -1 },
	/* text that does not start with a digit is compared as text */
	{ "v1.2", "1.2", 1 }, /* before: preflight 0, contract -1 */
	{ "nccl", "gloo", 1 }, /* before: preflight 0, contract 0 */
	{ "nccl", "nccl", 0 },
	{ "Nsight Systems 2026.2.1", "Nsight Systems 2026.2.1", 0 },
};

TEST(version_cmp_table)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int ab = ts_version_cmp(rows[i].a, rows[i].b), ba = ts_version_cmp(rows[i].b, rows[i].a);

		if ((ab > 0) - (ab < 0) != rows[i].want)
			ts_test_fail(__FILE__, __LINE__, "%s vs %s: %d, want sign %d", rows[i].a,
				     rows[i].b, ab, rows[i].want);
		if ((ba > 0) - (ba < 0) != -rows[i].want)
			ts_test_fail(__FILE__, __LINE__, "%s vs %s (swapped): %d, want sign %d",
				     rows[i].b, rows[i].a, ba, -rows[i].want);
	}
}

/* Over every pair of the table's strings: the order is antisymmetric and
 * its zero is ts_version_same. */
TEST(version_cmp_zero_is_same)
{
	size_t n = sizeof(rows) / sizeof(rows[0]);

	for (size_t i = 0; i < 2 * n; i++)
		for (size_t k = 0; k < 2 * n; k++) {
			const char *x = i < n ? rows[i].a : rows[i - n].b;
			const char *y = k < n ? rows[k].a : rows[k - n].b;
			int xy = ts_version_cmp(x, y), yx = ts_version_cmp(y, x);

			if ((xy > 0) - (xy < 0) != (yx < 0) - (yx > 0))
				ts_test_fail(__FILE__, __LINE__, "%s vs %s: %d, swapped %d", x, y, xy, yx);
			if ((xy == 0) != ts_version_same(x, y))
				ts_test_fail(__FILE__, __LINE__, "%s vs %s: cmp %d, same %d", x, y, xy,
					     ts_version_same(x, y));
		}
}
