/*
 * fuzz_model.c - libFuzzer target for the model readers: the Hugging Face
 * config.json reader, the Megatron arguments-block reader, the packed
 * sequence-length reader and the user GPU catalog.
 *
 * Every input goes through all four readers (so config and log seeds
 * exercise each). A successful model read is pushed through
 * ts_model_finish() and every FLOPs formula so their range checks see
 * hostile values too; every SKU a catalog accepts must be findable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/flops.h"
#include "trainscope/gpus.h"
#include "trainscope/model.h"

#include "oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void formulas(const struct ts_model *m, const struct ts_model_args *a)
{
	struct ts_flops_shape sh;
	struct ts_flops f;
	struct ts_err err;

	ts_flops_shape_init(&sh);
	sh.seq = a && a->seq_length ? a->seq_length : 4096;
	sh.gbs = a && a->global_batch ? a->global_batch : 8;
	sh.tp = a ? a->tp : 1;
	sh.pp = a ? a->pp : 1;
	sh.recompute = a ? a->recompute_granularity : TS_RC_FULL;
	sh.recompute_method = a ? a->recompute_method : TS_RC_BLOCK;
	sh.recompute_layers = a ? a->recompute_num_layers : 1;
	sh.recompute_modules = a ? a->recompute_modules : 0;
	for (int k = 0; k < TS_FORMULA_COUNT; k++)
		ts_flops_compute(m, &sh, k, &f, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_model *m = malloc(sizeof(*m));
	struct ts_model_args a;
	struct ts_gpu_catalog c;
	struct ts_seqlens sl;
	struct ts_err err;

	if (!m)
		return 0;
	ts_model_init(m);
	ts_err_init(&err);
	if (ts_model_parse_config(m, data, size, "fuzz.json", &err) == 0 &&
	    ts_model_finish(m, &err) == 0)
		formulas(m, NULL);
	ts_model_init(m);
	ts_model_args_init(&a);
	if (ts_model_parse_megatron_args(m, &a, data, size, "fuzz.log", &err) == 0 &&
	    ts_model_finish(m, &err) == 0)
		formulas(m, &a);
	ts_seqlens_parse(&sl, data, size, "fuzz.txt", &err);
	if (ts_gpu_catalog_init(&c) == 0 &&
	    ts_gpu_catalog_parse(&c, data, size, "fuzz.json", &err) == 0) {
		for (size_t i = 0; i < c.n; i++) {
			if (!ts_gpu_find(&c, c.v[i].sku))
				abort();
			oracle_text(c.v[i].sku, strlen(c.v[i].sku));
		}
	}
	ts_gpu_catalog_release(&c);
	free(m);
	return 0;
}
