/*
 * stall_power.c - recall and false-alarm rate of the periodic-stall
 * detector on synthetic runs with known truth (tests/unit/synth_stalls.h),
 * read and analysed end to end as `trainscope steps` does.
 *
 *   build/bench/stall_power [RUNS [ITERATIONS]]   (defaults 200, 200)
 *
 * Prints one Markdown table per run shape: rows are (rho, amplitude),
 * columns periods; each cell is the share of RUNS runs whose report names
 * the true period and phase. The clean rows give the false-alarm rate
 * (any pattern reported). The stall offset cycles through the phases.
 * The table in docs/stall-power.md was made with the defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include "../tests/unit/synth_stalls.h"

int main(int argc, char **argv)
{
	static const size_t periods[] = { 2, 3, 5, 7, 10 };
	static const double amps[] = { 0.5, 1, 2, 3, 5 };
	static const double rhos[] = { 0, 0.3, 0.6 };
	static const char *const kinds[2] = { "log only: stall in the step time (noise SD 15 ms, CV 5 %)",
		"JSONL with phases: stall in data_ms (noise SD 0.2 ms; step CV about 28 %)" };
	size_t runs = argc > 1 ? strtoul(argv[1], NULL, 10) : 200;
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 200;
	struct ts_sb sb;
	struct ts_rng g;

	if (runs == 0 || n < 20) {
		fprintf(stderr, "usage: stall_power [RUNS>0 [ITERATIONS>=20]]\n");
		return 2;
	}
	ts_sb_init(&sb);
	ts_rng_init(&g, 20261201);
	printf("%zu runs per cell, %zu iterations per run\n", runs, n);
	for (int kind = 0; kind < 2; kind++) {
		printf("\n%s\n\n| rho | amplitude (SD) |", kinds[kind]);
		for (size_t p = 0; p < sizeof(periods) / sizeof(*periods); p++)
			printf(" period %zu |", periods[p]);
		printf("\n|---|---|");
		for (size_t p = 0; p < sizeof(periods) / sizeof(*periods); p++)
			printf("---|");
		printf("\n");
		for (size_t ri = 0; ri < sizeof(rhos) / sizeof(*rhos); ri++) {
			struct synth_stall c = { kind, n, 0, 0, 0, rhos[ri] };
			size_t fa = 0;

			for (size_t t = 0; t < runs; t++) {
				int v = synth_stall_trial(&c, &g, &sb);

				if (v == -2)
					return 3;
				fa += v != 0;
			}
			printf("| %.1f | clean: false alarms | %.1f %% |\n", rhos[ri],
			       100.0 * (double)fa / (double)runs);
			for (size_t ai = 0; ai < sizeof(amps) / sizeof(*amps); ai++) {
				printf("| %.1f | %.1f |", rhos[ri], amps[ai]);
				for (size_t p = 0; p < sizeof(periods) / sizeof(*periods); p++) {
					size_t hit = 0;

					c.period = periods[p];
					c.amp_sd = amps[ai];
					for (size_t t = 0; t < runs; t++) {
						int v;

						c.offset = t % c.period;
						v = synth_stall_trial(&c, &g, &sb);
						if (v == -2)
							return 3;
						hit += v == 1;
					}
					printf(" %.1f %% |", 100.0 * (double)hit / (double)runs);
				}
				printf("\n");
				c.period = 0;
			}
		}
	}
	ts_sb_release(&sb);
	return 0;
}
