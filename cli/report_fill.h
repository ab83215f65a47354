/*
 * report_fill.h - the report's A/B and memory sections, filled from the
 * gate (ab) and memory modules, kept apart from diagnose_cli.c so that
 * the diagnosis driver does not depend on the gate and memory APIs.
 */
#ifndef TRAINSCOPE_REPORT_FILL_H
#define TRAINSCOPE_REPORT_FILL_H

#include "cli.h"
#include "trainscope/report.h"

/* A/B of two runs (directories or logs) as `trainscope ab` compares them;
 * the step times of both matched windows become the distributions.
 * Returns 0 or an exit status (error printed). */
int report_fill_ab(struct cli_ctx *ctx, struct ts_report *r, const char *base, const char *cand);

/*
 * Memory of the most loaded GPU for a layout "tp=2,pp=4,dp=8,mbs=1,gbs=512,
 * seq=4096,..." (keys: tp pp vpp cp ep etp dp mbs gbs seq, recompute=
 * none|selective|full, dist_opt=0|1, sp=0|1) of the model in model_path,
 * against the capacity of gpu (catalog SKU) when given. Returns 0 or an
 * exit status (error printed).
 */
int report_fill_mem(struct cli_ctx *ctx, struct ts_report *r, const char *model_path,
		    const char *layout, const char *gpu);

#endif
