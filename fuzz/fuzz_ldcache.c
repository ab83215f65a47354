/* libFuzzer target: the ld.so cache reader (old and new glibc formats).
 * Asserts that every entry's key and value are NUL-terminated strings
 * inside the input and that a lookup returns one of the entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/preflight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_ldcache c;
	struct ts_err err;
	const char *lo = (const char *)data, *hi = lo + size;

	ts_err_init(&err);
	if (ts_ldcache_parse(&c, data, size, "fuzz", &err) == 0) {
		for (size_t i = 0; i < c.entries.n; i++) {
			const char *k = c.entries.v[i].key, *v = c.entries.v[i].value;
			if (k < lo || k >= hi || v < lo || v >= hi ||
			    !memchr(k, 0, (size_t)(hi - k)) || !memchr(v, 0, (size_t)(hi - v)))
				abort();
			const struct ts_ldcache_entry *e = ts_ldcache_find(&c, k);
			if (e && (e < c.entries.v || e >= c.entries.v + c.entries.n))
				abort();
		}
	} else if (err.code != TS_EPARSE && err.code != TS_ENOMEM) {
		abort();
	}
	ts_ldcache_release(&c);
	return 0;
}
