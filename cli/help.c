/*
 * help.c - --help, `trainscope help CMD` and the man page, all generated
 * from the command records so they cannot drift apart.
 */
#include <string.h>
#include "cli.h"

const char *const cli_stage_names[STAGE_COUNT] = {
	[STAGE_CONTRACT] = "Freeze the contract",
	[STAGE_PREFLIGHT] = "Preflight",
	[STAGE_FIT] = "Fit and scale",
	[STAGE_MEASURE] = "Measure",
	[STAGE_PROFILE] = "Profile",
	[STAGE_RETUNE] = "Retune",
	[STAGE_VALIDATE] = "Validate",
	[STAGE_AROUND] = "Around the loop",
	[STAGE_INPUTS] = "Inputs",
};

static void opt_line(struct ts_sb *out, const struct cli_opt *o)
{
	size_t start = out->len;

	ts_sb_adds(out, "  ");
	if (o->shortc)
		ts_sb_addf(out, "-%c, ", o->shortc);
	else
		ts_sb_adds(out, "    ");
	ts_sb_addf(out, "--%s", o->name);
	if (o->arg)
		ts_sb_addf(out, " %s", o->arg);
	size_t w = out->len - start;
	if (w < 28)
		ts_sb_pad(out, ' ', 28 - w);
	else {
		ts_sb_addc(out, '\n');
		ts_sb_pad(out, ' ', 28);
	}
	ts_sb_addf(out, "%s\n", o->help);
}

static void overview(struct ts_sb *out)
{
	ts_sb_adds(out,
		   "usage: trainscope <command> [options] [inputs]\n"
		   "\n"
		   "Measurement-first, evidence-gated performance work on AI training jobs.\n"
		   "Commands by workflow stage:\n");
	for (int st = 0; st < STAGE_COUNT; st++) {
		int any = 0;
		for (size_t i = 0; i < cli_ncommands; i++) {
			const struct cli_command *c = cli_commands[i];
			if ((int)c->stage != st)
				continue;
			if (!any)
				ts_sb_addf(out, "\n%s\n", cli_stage_names[st]);
			any = 1;
			ts_sb_addf(out, "  %-12s %s\n", c->name, c->summary);
		}
	}
	ts_sb_adds(out,
		   "\n'trainscope help <command>' or 'trainscope <command> --help' shows a command's options.\n"
		   "'trainscope --version' prints the version.\n"
		   "Exit status: 0 ok, 1 a gate or check failed, 2 bad usage or input, 3 internal error.\n");
}

void cli_help(const struct cli_command *cmd, struct ts_sb *out)
{
	if (!cmd) {
		overview(out);
		return;
	}
	ts_sb_addf(out, "usage: trainscope %s\n\n%s.\n", cmd->usage, cmd->summary);
	if (cmd->description && cmd->description[0])
		ts_sb_addf(out, "\n%s\n", cmd->description);
	if (cmd->opts && cmd->opts->name) {
		ts_sb_adds(out, "\nOptions:\n");
		for (const struct cli_opt *o = cmd->opts; o->name; o++)
			opt_line(out, o);
	}
	ts_sb_adds(out, "\nCommon options:\n");
	for (const struct cli_opt *o = cli_common_opts(); o->name; o++) {
		if (strcmp(o->name, "json") == 0 && !cmd->json_schema_version)
			continue;
		if (strcmp(o->name, "output") == 0 && !cmd->writes_output)
			continue;
		opt_line(out, o);
	}
	if (cmd->json_schema_version)
		ts_sb_addf(out, "\n--json schema: trainscope.%s/%d\n", cmd->name,
			   cmd->json_schema_version);
}

/* roff-escape: backslashes and leading dots/quotes */
static void roff(struct ts_sb *out, const char *s)
{
	int bol = 1;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			ts_sb_adds(out, "\\&");
		if (*s == '\\')
			ts_sb_adds(out, "\\e");
		else if (*s == '-')
			ts_sb_adds(out, "\\-");
		else
			ts_sb_addc(out, *s);
		bol = *s == '\n';
	}
}

static void man_opt(struct ts_sb *out, const struct cli_opt *o)
{
	ts_sb_adds(out, ".TP\n\\fB");
	if (o->shortc)
		ts_sb_addf(out, "\\-%c\\fR, \\fB", o->shortc);
	ts_sb_adds(out, "\\-\\-");
	roff(out, o->name);
	ts_sb_adds(out, "\\fR");
	if (o->arg) {
		ts_sb_adds(out, " \\fI");
		roff(out, o->arg);
		ts_sb_adds(out, "\\fR");
	}
	ts_sb_adds(out, "\n");
	roff(out, o->help);
	ts_sb_adds(out, "\n");
}

void cli_man(struct ts_sb *out)
{
	ts_sb_adds(out,
		   ".TH TRAINSCOPE 1 \"\" \"trainscope\" \"User Commands\"\n"
		   ".SH NAME\ntrainscope \\- measurement\\-first performance work on AI training jobs\n"
		   ".SH SYNOPSIS\n\\fBtrainscope\\fR \\fIcommand\\fR [\\fIoptions\\fR] [\\fIinputs\\fR]\n"
		   ".SH DESCRIPTION\n"
		   "trainscope freezes a measurement contract, checks that a parallel layout fits,\n"
		   "measures steady\\-state step time, tokens/s, model TFLOP/s, MFU and HFU, finds the\n"
		   "dominant wall in profiler traces, decides with statistics whether a change helped\n"
		   "and kept training numerically the same, and writes the validation report.\n"
		   ".SH COMMON OPTIONS\n");
	for (const struct cli_opt *o = cli_common_opts(); o->name; o++)
		man_opt(out, o);
	ts_sb_adds(out, ".SH COMMANDS\n");
	for (size_t i = 0; i < cli_ncommands; i++) {
		const struct cli_command *c = cli_commands[i];
		ts_sb_adds(out, ".SS ");
		roff(out, c->name);
		ts_sb_adds(out, "\n\\fBtrainscope ");
		roff(out, c->usage);
		ts_sb_adds(out, "\\fR\n.PP\n");
		roff(out, c->summary);
		ts_sb_adds(out, ".\n");
		if (c->description && c->description[0]) {
			ts_sb_adds(out, ".PP\n");
			roff(out, c->description);
			ts_sb_adds(out, "\n");
		}
		if (c->opts)
			for (const struct cli_opt *o = c->opts; o->name; o++)
				man_opt(out, o);
	}
	ts_sb_adds(out,
		   ".SH EXIT STATUS\n0 success; 1 a gate or check failed; 2 bad usage or unreadable input;\n"
		   "3 internal error.\n"
		   ".SH ENVIRONMENT\n\\fBNO_COLOR\\fR disables colour. \\fBTRAINSCOPE_DB\\fR names the ledger database.\n");
}
