/*
 * fuzz_detect.c - libFuzzer target for the content classifier behind
 * `detect`, `diagnose` and every command that takes a run directory
 * (ts_detect_buffer: JSON object keys, log line grammars, telemetry and
 * report headers). Asserts that the kind is one of the enum, that the
 * vendor string ends inside its buffer and is one of the documented
 * values, and that the same bytes classify the same way twice; and that
 * a trace's name on the bytes is said misnamed exactly when they are no
 * trace (ts_detect_misnamed), in a string that ends inside its buffer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *vendors[] = { "", "cuda", "rocm", "musa", "mtia", "cpu" };
	char v1[16], v2[16];
	enum ts_kind k1, k2;
	int known = 0;

	memset(v1, 'x', sizeof(v1));
	memset(v2, 'y', sizeof(v2));
	k1 = ts_detect_buffer((const char *)data, size, v1, sizeof(v1));
	k2 = ts_detect_buffer((const char *)data, size, v2, sizeof(v2));
	if ((int)k1 < 0 || k1 >= TS_KIND_COUNT || k1 != k2)
		abort();
	if (!memchr(v1, 0, sizeof(v1)) || strcmp(v1, v2) != 0)
		abort();
	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++)
		known |= !strcmp(v1, vendors[i]);
	if (!known || !ts_kind_name(k1))
		abort();
	{
		struct ts_detect d = { .kind = k1, .bytes = (int64_t)size };
		char why[96];
		const char *m = ts_detect_misnamed("rank0.pt.trace.json", &d, why, sizeof(why));
		int trace = k1 == TS_KIND_KINETO_TRACE || k1 == TS_KIND_LEGACY_TRACE;

		if ((m == NULL) != trace || (m && (m != why || !memchr(why, 0, sizeof(why)))))
			abort();
		if (ts_detect_misnamed("metrics.jsonl", &d, why, sizeof(why)))
			abort();
	}
	return 0;
}
