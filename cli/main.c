/*
 * main.c - entry point and the command table.
 *
 * The table is generated at build time from the cli/cmd_*.c file names
 * (build/gen/commands.inc), so it is always sorted and a new command needs
 * no edit here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#ifndef TRAINSCOPE_VERSION
#define TRAINSCOPE_VERSION "0.0.0-dev"
#endif

#define CLI_COMMAND(n) extern const struct cli_command cli_cmd_##n;
#include "commands.inc"
#undef CLI_COMMAND

#define CLI_COMMAND(n) &cli_cmd_##n,
const struct cli_command *const cli_commands[] = {
#include "commands.inc"
};
#undef CLI_COMMAND

const size_t cli_ncommands = sizeof(cli_commands) / sizeof(cli_commands[0]);

const struct cli_command *cli_find(const char *name)
{
	for (size_t i = 0; i < cli_ncommands; i++)
		if (strcmp(cli_commands[i]->name, name) == 0)
			return cli_commands[i];
	return NULL;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[64];

	if (lb >= 63 || la >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

static int unknown_command(const char *name)
{
	const char *best = NULL;
	size_t bestd = 3;

	for (size_t i = 0; i < cli_ncommands; i++) {
		size_t d = edit_distance(name, cli_commands[i]->name);
		if (d < bestd) {
			bestd = d;
			best = cli_commands[i]->name;
		}
	}
	fprintf(stderr, "trainscope: unknown command '%s'\n", name);
	if (best)
		fprintf(stderr, "hint: did you mean 'trainscope %s'? ('trainscope --help' lists the commands)\n", best);
	else
		fprintf(stderr, "hint: 'trainscope --help' lists the commands\n");
	return EXIT_USAGE;
}

static int print_sb(struct ts_sb *sb)
{
	fwrite(sb->buf, 1, sb->len, stdout);
	ts_sb_release(sb);
	return fflush(stdout) ? EXIT_INTERNAL : EXIT_OK;
}

static int help_command(int argc, char **argv)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	if (argc < 2) {
		cli_help(NULL, &sb);
		return print_sb(&sb);
	}
	if (strcmp(argv[1], "--man") == 0) {
		cli_man(&sb);
		return print_sb(&sb);
	}
	const struct cli_command *cmd = cli_find(argv[1]);
	if (!cmd) {
		ts_sb_release(&sb);
		return unknown_command(argv[1]);
	}
	cli_help(cmd, &sb);
	return print_sb(&sb);
}

int main(int argc, char **argv)
{
	struct cli_ctx ctx;

	if (argc < 2) {
		fprintf(stderr, "usage: trainscope <command> [options] [inputs]\n"
				"hint: 'trainscope --help' lists the commands\n");
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0)
		return help_command(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("trainscope %s\n", TRAINSCOPE_VERSION);
		return EXIT_OK;
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "trainscope: unknown option '%s'\n"
				"hint: options go after the command: trainscope <command> [options]; "
				"'trainscope --help' lists the commands\n", argv[1]);
		return EXIT_USAGE;
	}
	const struct cli_command *cmd = cli_find(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);

	memset(&ctx, 0, sizeof(ctx));
	ctx.cmd = cmd;
	ctx.color = isatty(1) && !getenv("NO_COLOR");
	ctx.progress = isatty(2);
	cli_signals_install(cmd->name);
	int rc = cmd->run(&ctx, argc - 1, argv + 1);
	if (fflush(stdout) != 0 && rc == EXIT_OK) {
		fprintf(stderr, "trainscope %s: cannot write to standard output\n", cmd->name);
		rc = EXIT_USAGE;
	}
	return rc;
}
