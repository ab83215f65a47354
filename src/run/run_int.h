/*
 * run_int.h - the stages of the run model that live in their own files
 * (src/run/ only).
 */
#ifndef TS_RUN_INT_H
#define TS_RUN_INT_H

#include "trainscope/run.h"

/*
 * rm->rate (run.h, struct ts_run_rate) of a loaded run whose steps are
 * analysed, with the logged-tflops-mismatch warning when the window's
 * logged rate is off the model's by more than TS_RATE_MAX_DIFF; o gives
 * the command's --seq/--gbs/--gpus. A config or contract that cannot be
 * read only leaves its values unknown. Returns 0 or TS_ENOMEM.
 */
int runmodel_rate(struct ts_runmodel *rm, const struct ts_runmodel_opts *o);

#endif
