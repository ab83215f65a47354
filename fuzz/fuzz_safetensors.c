/* libFuzzer target: the safetensors header parser and the comparison. */
#include <stdint.h>
#include <stdlib.h>
#include "trainscope/tensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_safetensors st;
	struct ts_tensor_cmp *cmp = NULL;
	struct ts_err err;
	size_t n = 0, failed = 0;

	ts_err_init(&err);
	ts_safetensors_init(&st);
	if (ts_safetensors_parse(&st, data, size, "fuzz.safetensors", &err) == 0 &&
	    ts_tensors_compare(&st, &st, -1, -1, &cmp, &n, &failed) == 0) {
		/* a file compared with itself: no finite pair differs */
		for (size_t i = 0; i < n; i++)
			if (cmp[i].mismatched || cmp[i].max_abs > 0 || cmp[i].nan_a != cmp[i].nan_b ||
			    cmp[i].inf_a != cmp[i].inf_b)
				abort();
		free(cmp);
	}
	ts_safetensors_release(&st);
	return 0;
}
