/*
 * ab_power.c - how often `trainscope ab` is right: interval coverage, false
 * verdicts and power of ts_ab_compare on synthetic runs with known truth
 * (tests/unit/synth_runs.h), for the noise levels of a quiet node and of
 * the loaded 2-vCPU VM that recorded ../shared/data/traces/cpu.
 *
 * Rows: noise x runs per side x iterations per run. Columns:
 *   coverage   share of null comparisons whose 95 % CI holds the true ratio 1
 *   false      share of null comparisons called faster or slower
 *   stall      share of comparisons called slower when the candidate adds a
 *              300 ms stall every 7th iteration (d_stall's injection)
 *   +5 %       share called slower when every step is 5 % slower
 *   false/cv   one run per side only: false verdicts when --run-cv states
 *              the true run-to-run CV
 * Not a speed benchmark: the baseline is the nominal 95 % (coverage), 5 %
 * (false verdicts at most) and the power an honest method can reach.
 *
 * usage: ab_power [TRIALS]   (default 400 comparisons per cell)
 */
#include <stdio.h>
#include <stdlib.h>
#include "../tests/unit/synth_runs.h"

struct noise_case {
	const char *name;
	struct synth_noise nz;
};

int main(int argc, char **argv)
{
	static const struct noise_case noises[] = {
		{ "quiet node (cv 3 %, rho 0.3, runs 0.5 %)", { 300.0, 0.03, 0.3, 0.005 } },
		{ "quiet node (cv 3 %, rho 0.3, runs 1 %)", { 300.0, 0.03, 0.3, 0.01 } },
		{ "quiet node (cv 3 %, rho 0.3, runs 2 %)", { 300.0, 0.03, 0.3, 0.02 } },
		{ "loaded VM (cv 30 %, rho 0.3, runs 5 %)", { 300.0, 0.30, 0.3, 0.05 } },
		{ "loaded VM (cv 30 %, rho 0.6, runs 5 %)", { 300.0, 0.30, 0.6, 0.05 } },
	};
	static const size_t sides[] = { 1, 4, 8 };
	static const size_t iters[] = { 60, 240, 960 };
	const struct synth_effect none = { 1.0, 0, 0.0 }, stall = { 1.0, 7, 300.0 },
				  slow5 = { 1.05, 0, 0.0 };
	size_t trials = argc > 1 ? strtoul(argv[1], NULL, 10) : 400;

	if (trials == 0) {
		fprintf(stderr, "usage: ab_power [TRIALS]\n");
		return 2;
	}
	printf("%zu comparisons per cell; stall = +300 ms every 7th iteration on 300 ms "
	       "(+14.3 %% mean)\n\n", trials);
	printf("%-42s %5s %6s  %9s %6s %6s %6s %9s\n", "noise", "runs", "iters", "coverage", "false",
	       "stall", "+5 %", "false/cv");
	for (size_t a = 0; a < sizeof(noises) / sizeof(noises[0]); a++)
		for (size_t b = 0; b < sizeof(sides) / sizeof(sides[0]); b++)
			for (size_t c = 0; c < sizeof(iters) / sizeof(iters[0]); c++) {
				const struct synth_noise *nz = &noises[a].nz;
				struct synth_tally t0, t1, t2, t3 = { 0 };
				struct ts_ab_opts stated;
				uint64_t seed = 1000003u * (a + 1) + 1009u * (b + 1) + c;
				double stall_truth = (nz->mu_ms + 300.0 / 7.0) / nz->mu_ms;

				if (synth_tally_ab(trials, sides[b], iters[c], nz, &none, 1.0, NULL,
						   seed, &t0) ||
				    synth_tally_ab(trials, sides[b], iters[c], nz, &stall,
						   stall_truth, NULL, seed + 7, &t1) ||
				    synth_tally_ab(trials, sides[b], iters[c], nz, &slow5, 1.05,
						   NULL, seed + 13, &t2)) {
					fprintf(stderr, "ab_power: out of memory\n");
					return 1;
				}
				ts_ab_opts_init(&stated);
				stated.run_cv = nz->run_cv;
				if (sides[b] == 1 && synth_tally_ab(trials, 1, iters[c], nz, &none, 1.0,
								    &stated, seed, &t3)) {
					fprintf(stderr, "ab_power: out of memory\n");
					return 1;
				}
				printf("%-42s %5zu %6zu  %8.1f%% %5.1f%% %5.1f%% %5.1f%%",
				       noises[a].name, sides[b], iters[c],
				       100.0 * (double)t0.covered / (double)t0.trials,
				       100.0 * (double)(t0.slower + t0.faster) / (double)t0.trials,
				       100.0 * (double)t1.slower / (double)t1.trials,
				       100.0 * (double)t2.slower / (double)t2.trials);
				if (t3.trials)
					printf(" %8.1f%%\n", 100.0 * (double)(t3.slower + t3.faster) /
								  (double)t3.trials);
				else
					printf(" %9s\n", "-");
				fflush(stdout);
			}
	return 0;
}
