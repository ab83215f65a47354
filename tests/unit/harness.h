/*
 * harness.h - the unit-test harness (no external framework).
 *
 *   TEST(name) { CHECK(cond); CHECK_I64(got, want); CHECK_NEAR(got, want, tol);
 *                CHECK_STR(got, want); }
 *
 * Tests register themselves at start-up; unit-tests runs them all (or those
 * whose name contains argv[1]) and prints "unit: N passed, N failed".
 * test_data("traces/cpu/...") gives the path of a shared data file, or skips
 * the test when ../shared/data is absent.
 */
#ifndef TS_TEST_HARNESS_H
#define TS_TEST_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct ts_test {
	const char *name;
	const char *file;
	void (*fn)(void);
};

void ts_test_register(const char *name, const char *file, void (*fn)(void));
void ts_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ts_test_skip(const char *why);
/* Path under the shared data folder (static buffer); skips when missing. */
const char *test_data(const char *rel);
/* The whole of a file, gzip or plain (inflated), in a malloc'ed buffer of
 * *n bytes; NULL when it cannot be opened or memory runs out. */
unsigned char *test_load_all(const char *path, size_t *n);
int ts_test_skipping(void);

#define TEST(name)                                                         \
	static void test_##name(void);                                     \
	__attribute__((constructor)) static void reg_##name(void)          \
	{ ts_test_register(#name, __FILE__, test_##name); }                \
	static void test_##name(void)

#define CHECK(cond)                                                        \
	do { if (!(cond)) ts_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); } while (0)

#define CHECK_I64(got, want)                                               \
	do { long long g_ = (long long)(got), w_ = (long long)(want);     \
	     if (g_ != w_) ts_test_fail(__FILE__, __LINE__, "%s = %lld, want %lld", #got, g_, w_); } while (0)

#define CHECK_NEAR(got, want, tol)                                         \
	do { double g_ = (got), w_ = (want), t_ = (tol);                   \
	     if (!(fabs(g_ - w_) <= t_)) ts_test_fail(__FILE__, __LINE__,  \
		"%s = %.9g, want %.9g (tolerance %g)", #got, g_, w_, t_); } while (0)

/* relative tolerance */
#define CHECK_REL(got, want, rel)                                          \
	do { double g_ = (got), w_ = (want), r_ = (rel);                   \
	     if (!(fabs(g_ - w_) <= r_ * fabs(w_))) ts_test_fail(__FILE__, __LINE__, \
		"%s = %.9g, want %.9g (relative tolerance %g)", #got, g_, w_, r_); } while (0)

#define CHECK_STR(got, want)                                               \
	do { const char *g_ = (got), *w_ = (want);                         \
	     if (!g_ || strcmp(g_, w_) != 0) ts_test_fail(__FILE__, __LINE__, \
		"%s = \"%s\", want \"%s\"", #got, g_ ? g_ : "(null)", w_); } while (0)

#define REQUIRE(cond)                                                      \
	do { if (!(cond)) { ts_test_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond); return; } } while (0)

#define DATA_OR_SKIP(var, rel)                                             \
	const char *var = test_data(rel);                                  \
	if (!var) return

#endif
