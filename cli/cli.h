/*
 * cli.h - what every command file uses: the command record, option
 * parsing, output conventions, errors and exit codes.
 *
 * Adding a command (the whole checklist):
 *   1. create cli/cmd_<name>.c defining
 *        const struct cli_command cli_cmd_<name> = { ... };
 *      with name, stage, summary, usage, description, options and run();
 *      the Makefile picks the file up and the command table is generated
 *      from the file names (sorted), so nothing else is edited;
 *   2. put the analysis in the library (src/<area>/, include/trainscope/),
 *      never in the command file: the command parses options, calls the
 *      library, renders and returns an exit code;
 *   3. add golden tests under tests/golden/<name>-NAME/ and unit tests under
 *      tests/unit/;
 *   4. describe it in docs/ARCHITECTURE.md (help and man page are generated
 *      from the command record).
 *
 * Conventions every command follows (parsed here, not in the command):
 * --json, -o/--output FILE (atomic), -q/--quiet, --no-color, -h/--help.
 */
#ifndef TRAINSCOPE_CLI_H
#define TRAINSCOPE_CLI_H

#include <stdio.h>
#include "trainscope/core.h"

/* Exit statuses (SPEC "Outputs"). */
enum {
	EXIT_OK = 0,
	EXIT_GATE = 1,     /* a gate or check failed */
	EXIT_USAGE = 2,    /* bad usage or unreadable input */
	EXIT_INTERNAL = 3  /* a bug */
};

/* Workflow stages, in the order --help lists them. */
enum cli_stage {
	STAGE_CONTRACT,
	STAGE_PREFLIGHT,
	STAGE_FIT,
	STAGE_MEASURE,
	STAGE_PROFILE,
	STAGE_RETUNE,
	STAGE_VALIDATE,
	STAGE_AROUND,
	STAGE_INPUTS,
	STAGE_COUNT
};

struct cli_opt {
	const char *name;  /* long name without "--" */
	int shortc;        /* short letter or 0 */
	const char *arg;   /* argument name, NULL for a flag */
	const char *help;  /* one line */
	int key;           /* value handed back to the command (> 0) */
};

struct cli_ctx;

struct cli_command {
	const char *name;
	enum cli_stage stage;
	const char *summary;     /* one line, no trailing period */
	const char *usage;       /* after "trainscope ": "trace [options] PATH..." */
	const char *description; /* paragraphs separated by blank lines */
	const struct cli_opt *opts; /* terminated by {0} */
	int (*run)(struct cli_ctx *ctx, int argc, char **argv);
	int json_schema_version; /* > 0 when --json is supported */
	int writes_output;       /* -o is meaningful */
};

struct cli_ctx {
	const struct cli_command *cmd;
	int json;
	int quiet;
	int color;            /* stdout is a terminal and colour is allowed */
	int progress;         /* stderr is a terminal and not quiet */
	const char *output;   /* -o FILE or NULL */
};

/* One parsed option, in command-line order. */
struct cli_arg {
	int key;
	const char *name;
	const char *val; /* NULL for flags */
};

struct cli_parsed {
	struct cli_arg *opts;
	size_t nopts;
	char **pos;      /* positional arguments */
	size_t npos;
};

/*
 * Parse argv (argv[0] is the command name) against the command's options
 * and the common ones. Common options fill ctx. On error prints one line
 * plus a hint and returns EXIT_USAGE; `--help` prints help and returns -1
 * (the command then returns EXIT_OK). Free with cli_parsed_release().
 */
int cli_parse(struct cli_ctx *ctx, int argc, char **argv, struct cli_parsed *p);
void cli_parsed_release(struct cli_parsed *p);

/* Option value converters: print "trainscope CMD: --NAME: ..." and return
 * EXIT_USAGE on bad input, 0 on success. */
int cli_int(struct cli_ctx *ctx, const struct cli_arg *a, long long min,
	    long long max, long long *out);
int cli_double(struct cli_ctx *ctx, const struct cli_arg *a, double min,
	       double max, double *out);

/* Messages on stderr, prefixed "trainscope CMD: ". */
void cli_error(struct cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_warn(struct cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print a library error record; returns the exit status for its code. */
int cli_fail(struct cli_ctx *ctx, const struct ts_err *err);
/* Exit status for a library code. */
int cli_exit_for(int code);

/*
 * Write the command's result: to stdout, or to -o PATH through the atomic
 * writer (temp file + rename for regular files, written through for "-",
 * devices and FIFOs; see atomic.h). Returns 0 or EXIT_USAGE after printing
 * why (including write errors such as ENOSPC).
 */
int cli_emit(struct cli_ctx *ctx, const struct ts_sb *sb);
/* Same, to an explicit path (for secondary outputs like --annotate). */
int cli_emit_to(struct cli_ctx *ctx, const char *path, const struct ts_sb *sb);

/* Install the handlers for SIGINT/SIGTERM/SIGHUP/SIGQUIT (remove the
 * temp file of an unfinished -o, then die by the signal) and SIGBUS (a
 * mapped input cut short: "FILE shrank while being read", exit 2). */
void cli_signals_install(const char *cmd_name);

/* ANSI sequence for a style ("bold", "red", "green", "yellow", "dim",
 * "reset") when colour is on, else "". */
const char *cli_style(const struct cli_ctx *ctx, const char *style);

/* Progress bar on stderr (terminal only, throttled). done <= total.
 * cli_progress_end clears the line. */
void cli_progress(struct cli_ctx *ctx, const char *what, uint64_t done, uint64_t total);
void cli_progress_end(struct cli_ctx *ctx);

/* The options every command accepts (terminated by {0}). */
const struct cli_opt *cli_common_opts(void);

/* Help text for one command, or the overview (cmd NULL). */
void cli_help(const struct cli_command *cmd, struct ts_sb *out);
/* The man page (roff) for the whole tool. */
void cli_man(struct ts_sb *out);

/* The command table (generated from cli/cmd_*.c), sorted by name. */
extern const struct cli_command *const cli_commands[];
extern const size_t cli_ncommands;
const struct cli_command *cli_find(const char *name);

extern const char *const cli_stage_names[STAGE_COUNT];

#endif
