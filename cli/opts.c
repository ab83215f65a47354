/*
 * opts.c - option parsing shared by all commands.
 *
 * Long options (--name, --name=value, --name value), short options (-o
 * value, -q), "--" to end options, and "-" as a positional (stdin). The
 * common options are handled here so every command behaves the same.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "trainscope/limits.h"

enum { KEY_JSON = -100, KEY_OUTPUT, KEY_QUIET, KEY_NOCOLOR, KEY_HELP, KEY_MAXMEM };

static const struct cli_opt common_opts[] = {
	{ "json", 0, NULL, "machine-readable output on stdout (with a \"schema\" key)", KEY_JSON },
	{ "output", 'o', "FILE", "write the result to FILE (regular files: temp + rename; devices, FIFOs, - written through)", KEY_OUTPUT },
	{ "quiet", 'q', NULL, "no warnings or progress on stderr", KEY_QUIET },
	{ "no-color", 0, NULL, "no colour (also when NO_COLOR is set or stdout is not a terminal)", KEY_NOCOLOR },
	{ "max-memory", 0, "SIZE", "memory budget (e.g. 8G; default 3/4 of RAM); inputs that need more exit 2", KEY_MAXMEM },
	{ "help", 'h', NULL, "show this help", KEY_HELP },
	{ 0 }
};

const struct cli_opt *cli_common_opts(void)
{
	return common_opts;
}

static const struct cli_opt *find_long(const struct cli_opt *opts, const char *name,
				       size_t n)
{
	for (; opts && opts->name; opts++)
		if (strlen(opts->name) == n && strncmp(opts->name, name, n) == 0)
			return opts;
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *opts, int c)
{
	for (; opts && opts->name; opts++)
		if (opts->shortc && opts->shortc == c)
			return opts;
	return NULL;
}

static void hint(struct cli_ctx *ctx)
{
	fprintf(stderr, "hint: 'trainscope help %s' shows the options\n", ctx->cmd->name);
}

static int add_opt(struct cli_parsed *p, size_t *cap, const struct cli_opt *o,
		   const char *val)
{
	if (ts_grow((void **)&p->opts, cap, p->nopts + 1, sizeof(*p->opts)))
		return TS_ENOMEM;
	p->opts[p->nopts].key = o->key;
	p->opts[p->nopts].name = o->name;
	p->opts[p->nopts].val = val;
	p->nopts++;
	return 0;
}

static int apply(struct cli_ctx *ctx, struct cli_parsed *p, size_t *cap,
		 const struct cli_opt *o, const char *val)
{
	switch (o->key) {
	case KEY_JSON:
		if (!ctx->cmd->json_schema_version) {
			cli_error(ctx, "--json is not available for this command");
			return EXIT_USAGE;
		}
		ctx->json = 1;
		ctx->color = 0;
		return 0;
	case KEY_OUTPUT:
		ctx->output = val;
		return 0;
	case KEY_QUIET:
		ctx->quiet = 1;
		ctx->progress = 0;
		return 0;
	case KEY_NOCOLOR:
		ctx->color = 0;
		return 0;
	case KEY_HELP:
		return -1;
	case KEY_MAXMEM: {
		uint64_t bytes;
		if (ts_parse_size(val, &bytes)) {
			cli_error(ctx, "--max-memory: expected a size such as 512M or 8G, got '%s'", val);
			return EXIT_USAGE;
		}
		ts_mem_budget_set(bytes);
		return 0;
	}
	default:
		return add_opt(p, cap, o, val) ? EXIT_INTERNAL : 0;
	}
}

static int do_help(struct cli_ctx *ctx)
{
	struct ts_sb sb;

	ts_sb_init(&sb);
	cli_help(ctx->cmd, &sb);
	fwrite(sb.buf, 1, sb.len, stdout);
	ts_sb_release(&sb);
	return -1;
}

int cli_parse(struct cli_ctx *ctx, int argc, char **argv, struct cli_parsed *p)
{
	size_t optcap = 0, poscap = 0;
	int only_pos = 0;

	memset(p, 0, sizeof(*p));
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		const struct cli_opt *o;
		const char *val = NULL;
		int rc;

		if (only_pos || a[0] != '-' || a[1] == '\0') {
			if (ts_grow((void **)&p->pos, &poscap, p->npos + 1, sizeof(*p->pos)))
				return EXIT_INTERNAL;
			p->pos[p->npos++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(ctx->cmd->opts, name, n);
			if (!o)
				o = find_long(common_opts, name, n);
			if (!o) {
				cli_error(ctx, "unknown option '--%.*s'", (int)n, name);
				hint(ctx);
				return EXIT_USAGE;
			}
			if (o->arg) {
				if (eq)
					val = eq + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else {
					cli_error(ctx, "option '--%s' needs a value (%s)", o->name, o->arg);
					hint(ctx);
					return EXIT_USAGE;
				}
			} else if (eq) {
				cli_error(ctx, "option '--%s' takes no value", o->name);
				hint(ctx);
				return EXIT_USAGE;
			}
		} else {
			o = find_short(ctx->cmd->opts, a[1]);
			if (!o)
				o = find_short(common_opts, a[1]);
			if (!o) {
				cli_error(ctx, "unknown option '-%c'", a[1]);
				hint(ctx);
				return EXIT_USAGE;
			}
			if (o->arg) {
				if (a[2])
					val = a + 2;
				else if (i + 1 < argc)
					val = argv[++i];
				else {
					cli_error(ctx, "option '-%c' needs a value (%s)", a[1], o->arg);
					hint(ctx);
					return EXIT_USAGE;
				}
			} else if (a[2]) {
				cli_error(ctx, "option '-%c' takes no value (did you mean '--%s'?)",
					  a[1], a + 1);
				hint(ctx);
				return EXIT_USAGE;
			}
		}
		rc = apply(ctx, p, &optcap, o, val);
		if (rc == -1)
			return do_help(ctx);
		if (rc)
			return rc;
	}
	return 0;
}

void cli_parsed_release(struct cli_parsed *p)
{
	free(p->opts);
	free(p->pos);
	memset(p, 0, sizeof(*p));
}

int cli_int(struct cli_ctx *ctx, const struct cli_arg *a, long long min,
	    long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(a->val, &end, 10);
	if (errno || end == a->val || *end) {
		cli_error(ctx, "--%s: expected an integer, got '%s'", a->name, a->val);
		return EXIT_USAGE;
	}
	if (v < min || v > max) {
		cli_error(ctx, "--%s: %lld is out of range [%lld, %lld]", a->name, v, min, max);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

int cli_double(struct cli_ctx *ctx, const struct cli_arg *a, double min,
	       double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(a->val, &end);
	if (errno || end == a->val || *end || !isfinite(v)) {
		cli_error(ctx, "--%s: expected a number, got '%s'", a->name, a->val);
		return EXIT_USAGE;
	}
	if (v < min || v > max) {
		cli_error(ctx, "--%s: %g is out of range [%g, %g]", a->name, v, min, max);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}
