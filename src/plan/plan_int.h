/*
 * plan_int.h - what the files of src/plan/ share and nobody else sees.
 */
#ifndef TRAINSCOPE_PLAN_INT_H
#define TRAINSCOPE_PLAN_INT_H

#include "trainscope/memory.h"
#include "trainscope/plan.h"

/*
 * Communication volumes (x->comm_bytes) and the step-time model
 * (x->time, compute_s, exposed_comm_s, bubble_s, step_s) of layout x,
 * whose memory context c is prepared (any ladder option: the layer
 * assignment does not depend on it). x->recompute/modules say what is
 * re-executed.
 */
void plan_step_time(const struct ts_model *m, const struct ts_plan_opts *o,
		    const struct ts_mem_ctx *c, struct ts_plan_layout *x);

#endif
