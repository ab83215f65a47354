/*
 * harness.c - runner for the unit tests declared with TEST().
 */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include "harness.h"

static struct ts_test tests[1024];
static int ntests;
static int cur_failed, cur_skipped;
static const char *cur_name;

void ts_test_register(const char *name, const char *file, void (*fn)(void))
{
	if (ntests < (int)(sizeof(tests) / sizeof(tests[0])))
		tests[ntests++] = (struct ts_test){ name, file, fn };
}

void ts_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s (%s:%d): ", cur_name, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cur_failed++;
}

void ts_test_skip(const char *why)
{
	if (!cur_skipped)
		fprintf(stderr, "SKIP %s: %s\n", cur_name, why);
	cur_skipped = 1;
}

int ts_test_skipping(void)
{
	return cur_skipped;
}

const char *test_data(const char *rel)
{
	static char buf[4][1024];
	static int next;
	const char *dir = getenv("DATA");
	char *p = buf[next++ & 3];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir && *dir ? dir : "../shared/data", rel);
	if (access(p, R_OK) != 0) {
		char why[1100];
		snprintf(why, sizeof(why), "shared data file %s not found", p);
		ts_test_skip(why);
		return NULL;
	}
	return p;
}

static int cmp_test(const void *a, const void *b)
{
	const struct ts_test *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	return c ? c : strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;

	qsort(tests, (size_t)ntests, sizeof(tests[0]), cmp_test);
	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		cur_name = tests[i].name;
		cur_failed = 0;
		cur_skipped = 0;
		tests[i].fn();
		if (cur_failed)
			failed++;
		else if (cur_skipped)
			skipped++;
		else
			passed++;
	}
	printf("unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}

unsigned char *test_load_all(const char *path, size_t *n)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 20, len = 0;
	unsigned char *buf = malloc(cap);
	int r;

	if (!f || !buf) {
		free(buf);
		if (f)
			gzclose(f);
		return NULL;
	}
	while ((r = gzread(f, buf + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)r;
		if (len == cap) {
			unsigned char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				gzclose(f);
				return NULL;
			}
			buf = nb;
		}
	}
	gzclose(f);
	*n = len;
	return buf;
}
