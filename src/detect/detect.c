/*
 * detect.c - classify inputs by content.
 *
 * A run directory holds logs, traces, configs and telemetry with whatever
 * names the job gave them. The rules here look for markers each producer
 * always writes (see shared/reference/training-logs.md and trace-format.md)
 * in the first 256 KiB, so a misnamed file is still read correctly.
 */
#include <stdio.h>
#include <string.h>
#include "trainscope/detect.h"
#include "trainscope/telemetry.h"
#include "trainscope/input.h"
#include "trainscope/json.h"

#define SNIFF_BYTES ((size_t)256 << 10)

static const char *const kind_names[TS_KIND_COUNT] = {
	[TS_KIND_UNKNOWN] = "unknown",
	[TS_KIND_KINETO_TRACE] = "kineto-trace",
	[TS_KIND_LEGACY_TRACE] = "legacy-trace",
	[TS_KIND_NSYS_SQLITE] = "nsys-sqlite",
	[TS_KIND_SQLITE] = "sqlite",
	[TS_KIND_HF_CONFIG] = "hf-config",
	[TS_KIND_CONTRACT] = "contract",
	[TS_KIND_FLIGHT_RECORDER] = "flight-recorder",
	[TS_KIND_JSON_OTHER] = "json",
	[TS_KIND_METRICS_JSONL] = "metrics-jsonl",
	[TS_KIND_LOG_MEGATRON] = "log-megatron",
	[TS_KIND_LOG_BRIDGE] = "log-megatron-bridge",
	[TS_KIND_LOG_NEMO] = "log-nemo",
	[TS_KIND_LOG_HF] = "log-hf-trainer",
	[TS_KIND_LOG_PRIMUS] = "log-primus",
	[TS_KIND_LOG_TITAN] = "log-torchtitan",
	[TS_KIND_LOG_DEEPSPEED] = "log-deepspeed",
	[TS_KIND_LOG_HANG] = "log-hang",
	[TS_KIND_HANG_REPORT] = "hang-report",
	[TS_KIND_TELEMETRY_SMI] = "telemetry-nvidia-smi",
	[TS_KIND_TELEMETRY_DMON] = "telemetry-dmon",
	[TS_KIND_TELEMETRY_GMI] = "telemetry-mthreads-gmi",
	[TS_KIND_ENV_REPORT] = "env-report",
	[TS_KIND_PREFLIGHT] = "preflight",
	[TS_KIND_TELEMETRY_DCGMI] = "telemetry-dcgmi",
	[TS_KIND_TELEMETRY_STRAGGLER] = "telemetry-megatron-straggler",
	[TS_KIND_TELEMETRY_OWN] = "telemetry-trainscope",
	[TS_KIND_TELEMETRY_DCGM_EXPORTER] = "telemetry-dcgm-exporter",
	[TS_KIND_SAFETENSORS] = "safetensors",
	[TS_KIND_TEXT] = "text",
	[TS_KIND_BINARY] = "binary",
};

const char *ts_kind_name(enum ts_kind kind)
{
	if ((int)kind < 0 || kind >= TS_KIND_COUNT || !kind_names[kind])
		return "unknown";
	return kind_names[kind];
}

int ts_detect_pickle_opening(const void *data, size_t n)
{
	const unsigned char *d = data;

	return (n >= 1 && d[0] == 0x80) ||
	       (n >= 3 && d[0] == '(' && memchr("dlt", d[1], 3) && memchr("pSVIFLN(", d[2], 8)) ||
	       (n >= 2 && (d[0] == '}' || d[0] == ']') && memchr("q(hr\x94", d[1], 5));
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcmp(s + n - k, suf) == 0;
}

const char *ts_detect_misnamed(const char *path, const struct ts_detect *d, char *buf, size_t size)
{
	enum ts_kind kind = d->kind;

	if (ends_with(path, ".nsys-rep")) {
		snprintf(buf, size, "an Nsight Systems report, which is read through its SQLite "
			 "export: run `nsys export --type sqlite %s` and give the .sqlite file", path);
		return buf;
	}
	if ((ends_with(path, ".pt.trace.json") || ends_with(path, ".pt.trace.json.gz")) &&
	    kind != TS_KIND_KINETO_TRACE && kind != TS_KIND_LEGACY_TRACE) {
		snprintf(buf, size, "named like a PyTorch profiler trace, but its content is %s, "
			 "not a trace, so it is not used",
			 d->bytes == 0 ? "empty" : kind == TS_KIND_BINARY ? "binary" :
			 kind == TS_KIND_TEXT ? "text" : kind == TS_KIND_UNKNOWN ? "unrecognised" :
			 ts_kind_name(kind));
		return buf;
	}
	return NULL;
}

static int has(const char *data, size_t n, const char *needle)
{
	return memmem(data, n, needle, strlen(needle)) != NULL;
}

static void set_vendor(char *vendor, size_t vsize, const char *v)
{
	if (vendor && vsize)
		snprintf(vendor, vsize, "%s", v);
}

static void trace_vendor(const char *d, size_t n, char *vendor, size_t vsize)
{
	if (has(d, n, "\"mupti_version\"") || has(d, n, "musaLaunchKernel") ||
	    has(d, n, "mcclKernel") || has(d, n, "\"musa_runtime"))
		set_vendor(vendor, vsize, "musa");
	else if (has(d, n, "hipLaunchKernel") || has(d, n, "hipExtModuleLaunchKernel") ||
		 has(d, n, "\"roctracer") || has(d, n, "maxSharedMemoryPerMultiProcessor"))
		set_vendor(vendor, vsize, "rocm");
	else if (has(d, n, "mtia_runtime") || has(d, n, "\"mtia"))
		set_vendor(vendor, vsize, "mtia");
	else if (has(d, n, "\"cupti_version\"") || has(d, n, "cudaLaunchKernel") ||
		 has(d, n, "\"cat\": \"kernel\"") || has(d, n, "\"cat\":\"kernel\"") ||
		 has(d, n, "\"cat\": \"Kernel\"") || has(d, n, "cuda_runtime") ||
		 has(d, n, "\"computeMajor\"") || has(d, n, "\"computeProperties\""))
		set_vendor(vendor, vsize, "cuda");
	else
		set_vendor(vendor, vsize, "cpu");
}

/* Top-level keys of a JSON object within the sniffed prefix. */
static enum ts_kind json_object_kind(const char *d, size_t n, char *vendor, size_t vsize,
				     int *valid)
{
	struct ts_json j;
	struct ts_err err;
	int tok, saw_events = 0, hf = 0, fr = 0, contract = 0, trace_meta = 0, preflight = 0;
	int keys = 0;

	ts_err_init(&err);
	ts_json_init_mem(&j, d, n, TS_JSON_LENIENT | TS_JSON_ALLOW_NAN, NULL);
	tok = ts_json_next(&j, &err);
	if (tok != TS_JSON_OBJ)
		goto out;
	for (;;) {
		tok = ts_json_next(&j, &err);
		if (tok == TS_JSON_OBJ_END || (tok == TS_JSON_KEY && ++keys >= 1))
			*valid = 1;
		if (tok != TS_JSON_KEY)
			break;
		if (TS_JSON_IS(&j, "traceEvents"))
			saw_events = 1;
		else if (TS_JSON_IS(&j, "schemaVersion") || TS_JSON_IS(&j, "deviceProperties") ||
			 TS_JSON_IS(&j, "distributedInfo") || TS_JSON_IS(&j, "baseTimeNanoseconds"))
			trace_meta = 1;
		else if (TS_JSON_IS(&j, "model_type") || TS_JSON_IS(&j, "architectures") ||
			 TS_JSON_IS(&j, "num_hidden_layers") || TS_JSON_IS(&j, "n_layer"))
			hf = 1;
		else if (TS_JSON_IS(&j, "pg_config") || TS_JSON_IS(&j, "entries") ||
			 TS_JSON_IS(&j, "pg_status"))
			fr++;
		else if (TS_JSON_IS(&j, "schema")) {
			tok = ts_json_next(&j, &err);
			if (tok == TS_JSON_STR && j.n > 20 &&
			    memcmp(j.s, "trainscope.contract/", 20) == 0)
				contract = 1;
			if (tok == TS_JSON_STR && j.n > 21 &&
			    memcmp(j.s, "trainscope.preflight/", 21) == 0)
				preflight = 1;
			if (tok < 0 || ts_json_skip(&j, tok, &err))
				break;
			continue;
		}
		if (saw_events)
			break; /* the events array is not needed to decide */
		tok = ts_json_next(&j, &err);
		if (tok < 0 || ts_json_skip(&j, tok, &err))
			break;
	}
out:
	ts_json_release(&j);
	if (saw_events || (trace_meta && has(d, n, "\"traceEvents\""))) {
		trace_vendor(d, n, vendor, vsize);
		return TS_KIND_KINETO_TRACE;
	}
	if (contract)
		return TS_KIND_CONTRACT;
	if (preflight)
		return TS_KIND_PREFLIGHT;
	/* mthreads-gmi -q --json: top-level "Driver Version" and a "GPU" array */
	if (has(d, n, "\"Driver Version\"") && has(d, n, "\"GPU\"") &&
	    (has(d, n, "\"MTBios Version\"") || has(d, n, "\"MTT S")))
		return TS_KIND_TELEMETRY_GMI;
	if (hf)
		return TS_KIND_HF_CONFIG;
	if (fr >= 2)
		return TS_KIND_FLIGHT_RECORDER;
	return TS_KIND_UNKNOWN;
}

static int count_lines_with(const char *d, size_t n, const char *needle)
{
	int c = 0;
	const char *p = d, *end = d + n;
	size_t nl = strlen(needle);

	while (p < end) {
		const char *hit = memmem(p, (size_t)(end - p), needle, nl);
		if (!hit)
			break;
		c++;
		const char *eol = memchr(hit, '\n', (size_t)(end - hit));
		p = eol ? eol + 1 : end;
	}
	return c;
}

/* Some line starts (after blanks) with prefix. */
static int line_starts(const char *d, size_t n, const char *prefix)
{
	size_t pn = strlen(prefix);

	for (size_t i = 0; i < n;) {
		while (i < n && (d[i] == ' ' || d[i] == '\t'))
			i++;
		if (n - i >= pn && memcmp(d + i, prefix, pn) == 0)
			return 1;
		const char *eol = memchr(d + i, '\n', n - i);
		i = eol ? (size_t)(eol - d) + 1 : n;
	}
	return 0;
}

/* The detect kind of a telemetry format (src/telemetry decides the format). */
static enum ts_kind telemetry_kind(int format)
{
	switch (format) {
	case TS_TELE_DMON: return TS_KIND_TELEMETRY_DMON;
	case TS_TELE_QUERY_CSV: return TS_KIND_TELEMETRY_SMI;
	case TS_TELE_DCGMI: return TS_KIND_TELEMETRY_DCGMI;
	case TS_TELE_GMI_TABLE:
	case TS_TELE_GMI_JSON: return TS_KIND_TELEMETRY_GMI;
	case TS_TELE_STRAGGLER: return TS_KIND_TELEMETRY_STRAGGLER;
	case TS_TELE_OWN: return TS_KIND_TELEMETRY_OWN;
	case TS_TELE_DCGM_EXPORTER: return TS_KIND_TELEMETRY_DCGM_EXPORTER;
	default: return TS_KIND_UNKNOWN;
	}
}

/* First non-blank line looks like a JSON object that has a step key (the
 * iteration keys of the JSONL step reader, logparse.c). */
static int looks_jsonl(const char *d, size_t n)
{
	size_t i = 0;

	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
		i++;
	if (i >= n || d[i] != '{')
		return 0;
	const char *eol = memchr(d + i, '\n', n - i);
	size_t len = eol ? (size_t)(eol - (d + i)) : n - i;
	const char *line = d + i;
	return (has(line, len, "\"iteration\"") || has(line, len, "\"step\"") ||
		has(line, len, "\"global_step\"") || has(line, len, "\"iter\"")) &&
	       memchr(line, '}', len) != NULL;
}

/* A word of running text: letters, at most one leading '(' or quote and
 * one trailing punctuation mark. */
static int plain_word(const char *w, size_t n)
{
	size_t a = 0;

	if (n && (w[0] == '(' || w[0] == '"' || w[0] == '\''))
		a = 1;
	if (n > a && strchr(".,;:)\"'", w[n - 1]))
		n--;
	if (n <= a)
		return 0;
	for (size_t i = a; i < n; i++)
		if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= 'A' && w[i] <= 'Z')))
			return 0;
	return 1;
}

/* Lines of a document about data: running text (>= 6 words, >= 80 % of
 * them plain words), Markdown headings, code spans, links. */
static int doc_lines(const char *d, size_t n)
{
	const char *p = d, *end = d + n;
	int lines = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *e = eol ? eol : end;
		const char *t = p, *tick;
		int words = 0, plain = 0, markup;

		while (t < e && (*t == ' ' || *t == '\t'))
			t++;
		tick = memchr(p, '`', (size_t)(e - p));
		markup = (t < e && *t == '#' && memchr(t, ' ', (size_t)(e - t)) &&
			  strspn(t, "#") <= 6 && t[strspn(t, "#")] == ' ') ||
			 (tick && memchr(tick + 1, '`', (size_t)(e - tick - 1))) ||
			 memmem(p, (size_t)(e - p), "://", 3) != NULL;
		while (p < e) {
			const char *w;

			while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
				p++;
			w = p;
			while (p < e && *p != ' ' && *p != '\t' && *p != '\r')
				p++;
			if (p > w) {
				words++;
				plain += plain_word(w, (size_t)(p - w));
			}
		}
		lines += markup || (words >= 6 && plain * 5 >= words * 4);
		p = e + 1;
	}
	return lines;
}

/*
 * kind when its m marker lines are the document; TS_KIND_TEXT when the
 * document is prose that quotes them (a README, a PROVENANCE note): at
 * least 8 document lines (doc_lines) and three times as many as marker
 * lines. Real logs and telemetry carry far more records than sentences.
 */
static enum ts_kind not_prose(const char *d, size_t n, int m, enum ts_kind kind)
{
	int p = doc_lines(d, n);

	return p >= 8 && p >= 3 * m ? TS_KIND_TEXT : kind;
}

enum ts_kind ts_detect_buffer(const char *d, size_t n, char *vendor, size_t vsize)
{
	size_t i;

	set_vendor(vendor, vsize, "");
	if (n == 0)
		return TS_KIND_TEXT; /* an empty file (d may be NULL): as before, text */
	i = ts_bom_len(d, n);
	d += i;
	n -= i;
	i = 0;
	if (n == 0)
		return TS_KIND_TEXT; /* a byte-order mark alone */
	if (n >= 16 && memcmp(d, "SQLite format 3", 16) == 0) {
		/* nsys exports carry these tables in the schema page */
		if (has(d, n, "TARGET_INFO_SESSION_START_TIME") || has(d, n, "CUPTI_ACTIVITY_KIND") ||
		    has(d, n, "StringIds")) {
			/* CUPTI tables: a CUDA capture (MUSA's msys exports are not nsys) */
			if (has(d, n, "CUPTI_ACTIVITY_KIND"))
				set_vendor(vendor, vsize, "cuda");
			return TS_KIND_NSYS_SQLITE;
		}
		return TS_KIND_SQLITE;
	}
	if (n >= 9) {
		/* safetensors: u64 little-endian header length, then '{' */
		uint64_t hl = 0;
		for (int k = 7; k >= 0; k--)
			hl = hl << 8 | (unsigned char)d[k];
		if (hl > 1 && hl < ((uint64_t)100 << 20) && d[8] == '{' && has(d, n < 4096 ? n : 4096, "\"dtype\""))
			return TS_KIND_SAFETENSORS;
	}
	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
		i++;
	if (i < n && d[i] == '[') {
		/* legacy export: an array of {"name":..., "ph":...} events */
		size_t k = i + 1;
		while (k < n && (d[k] == ' ' || d[k] == '\n' || d[k] == '\r' || d[k] == '\t'))
			k++;
		if (k < n && d[k] == '{' && has(d, n, "\"ph\"") && has(d, n, "\"name\"") &&
		    has(d, n, "\"ts\"")) {
			trace_vendor(d, n, vendor, vsize);
			return TS_KIND_LEGACY_TRACE;
		}
		if (k < n && (d[k] == '{' || d[k] == '[' || d[k] == '"' || d[k] == ']'))
			return TS_KIND_JSON_OTHER;
	}
	if (i < n && d[i] == '{') {
		enum ts_kind tk = telemetry_kind(ts_tele_sniff(d + i, n - i));
		if (tk != TS_KIND_UNKNOWN)
			return tk;
	}
	if (looks_jsonl(d, n)) {
		const char *eol = memchr(d, '\n', n);
		/* a single pretty-printed object is not JSONL */
		if (eol && (size_t)(eol - d) + 1 < n) {
			const char *next = eol + 1;
			while (next < d + n && (*next == ' ' || *next == '\n'))
				next++;
			if (next < d + n && *next == '{')
				return TS_KIND_METRICS_JSONL;
		}
	}
	if (i < n && d[i] == '{') {
		int valid = 0;
		enum ts_kind k = json_object_kind(d + i, n - i, vendor, vsize, &valid);
		if (k != TS_KIND_UNKNOWN)
			return k;
		if (valid)
			return TS_KIND_JSON_OTHER;
	}
	/* Flight Recorder pickle (any protocol): its opening, then the dump's keys */
	if (ts_detect_pickle_opening(d, n) && (has(d, n, "pg_config") || has(d, n, "entries")))
		return TS_KIND_FLIGHT_RECORDER;
	/* text formats: count marker lines (a prose document quoting a few of
	 * them, like a README or PROVENANCE, is text) */
	size_t nul = 0;
	for (size_t k = 0; k < n && k < 4096; k++)
		if (d[k] == '\0')
			nul++;
	if (nul)
		return TS_KIND_BINARY;
	{
		int m;

		if ((m = count_lines_with(d, n, "elapsed time per iteration") +
			 (count_lines_with(d, n, " iteration ") && count_lines_with(d, n, "consumed samples"))))
			return not_prose(d, n, m, TS_KIND_LOG_MEGATRON);
		if ((m = count_lines_with(d, n, "Step Time :") + count_lines_with(d, n, "Step Time:")))
			return not_prose(d, n, m, TS_KIND_LOG_BRIDGE);
		if ((m = count_lines_with(d, n, "reduced_train_loss") +
			 count_lines_with(d, n, "train_step_timing")))
			return not_prose(d, n, m, TS_KIND_LOG_NEMO);
		if ((m = count_lines_with(d, n, "{'loss':") + count_lines_with(d, n, "{'train_runtime':")))
			return not_prose(d, n, m, TS_KIND_LOG_HF);
		/* argonne-lcf Megatron-DeepSpeed: Megatron's record as "key=value" */
		if ((m = count_lines_with(d, n, "elapsed_time_per_iteration_ms=")) &&
		    count_lines_with(d, n, "iteration="))
			return not_prose(d, n, m, TS_KIND_LOG_MEGATRON);
		if ((m = count_lines_with(d, n, "elapsed_time_per_iter") + count_lines_with(d, n, "[Primus")))
			return not_prose(d, n, m, TS_KIND_LOG_PRIMUS);
		/* torchtitan's metrics line: a step, its loss and a rate (mfu,
		 * tps, or the 2024 wps: what the reader needs); colour codes may
		 * sit between the fields, so each word is counted alone */
		if (count_lines_with(d, n, "step: ") && count_lines_with(d, n, "loss: ") &&
		    (m = count_lines_with(d, n, "mfu: ") + count_lines_with(d, n, "tps: ") +
			 count_lines_with(d, n, "wps: ")))
			return not_prose(d, n, m, TS_KIND_LOG_TITAN);
		if ((m = count_lines_with(d, n, ", RunningAvgSamplesPerSec=")))
			return not_prose(d, n, m, TS_KIND_LOG_DEEPSPEED);
		/* the pipeline engine's "steps: N loss: L iter time (s): T ...",
		 * qlora-pipe's "[...] [qlora-pipe] step: N / T loss: ..." */
		if ((count_lines_with(d, n, "steps: ") || count_lines_with(d, n, "] step: ")) &&
		    (m = count_lines_with(d, n, " iter time (s): ")))
			return not_prose(d, n, m, TS_KIND_LOG_DEEPSPEED);
	}
	/* environment reports: torch collect_env, sglang check_env, nvidia-smi -q */
	if ((count_lines_with(d, n, "PyTorch version:") && count_lines_with(d, n, "Is CUDA available:")) ||
	    (line_starts(d, n, "Python: ") && (line_starts(d, n, "MUSA available:") ||
					      line_starts(d, n, "CUDA available:"))) ||
	    count_lines_with(d, n, "==NVSMI LOG==")) {
		set_vendor(vendor, vsize, line_starts(d, n, "MUSA available:") ? "musa" : "cuda");
		return TS_KIND_ENV_REPORT;
	}
	if (line_starts(d, n, "Not all ranks joining collective") ||
	    (line_starts(d, n, "Collective sequence number:") && line_starts(d, n, "Culprit rank ")) ||
	    line_starts(d, n, "Communicator ranks have different") ||
	    (line_starts(d, n, "Job summary") && line_starts(d, n, "NCCL version")))
		return TS_KIND_HANG_REPORT;
	{
		int m;

		if ((m = count_lines_with(d, n, "Watchdog caught collective operation timeout") +
			 count_lines_with(d, n, "ProcessGroupNCCL") +
			 count_lines_with(d, n, "ProcessGroupMCCL") +
			 (count_lines_with(d, n, " NCCL INFO ") && count_lines_with(d, n, ": opCount ")) +
			 (count_lines_with(d, n, " MCCL INFO ") && count_lines_with(d, n, ": opCount ")) +
			 count_lines_with(d, n, "NCCL WARN NET/IB : collective mismatch error")))
			return not_prose(d, n, m, TS_KIND_LOG_HANG);
	}
	/* telemetry: src/telemetry's content test (markers only where the tools
	 * print them, so prose quoting them stays text) */
	enum ts_kind tk = telemetry_kind(ts_tele_sniff(d, n));
	if (tk != TS_KIND_UNKNOWN)
		return tk;
	return TS_KIND_TEXT;
}

/*
 * A trace whose first events are all CPU operators may still hold device
 * events further on (Kineto writes them after the CPU ones): read on, up
 * to VENDOR_SCAN_MAX (16 MiB), until a device marker shows. Still nothing
 * at the end of the file: a CPU trace; nothing within the cap: unknown
 * (""), never a guess.
 */
#define VENDOR_SCAN_MAX ((uint64_t)16 << 20)
#define VENDOR_OVERLAP 64

static void vendor_scan_on(struct ts_input *in, char *vendor, size_t vsize)
{
	uint64_t seen = in->len;
	struct ts_err e;
	char v[16];

	ts_err_init(&e);
	/* the window may already hold more than the sniffed prefix */
	trace_vendor((const char *)in->data, in->len, v, sizeof(v));
	if (strcmp(v, "cpu") != 0) {
		set_vendor(vendor, vsize, v);
		return;
	}
	while (!in->eof && seen < VENDOR_SCAN_MAX) {
		size_t keep = in->len > VENDOR_OVERLAP ? in->len - VENDOR_OVERLAP : 0;
		int64_t got = ts_input_more(in, keep, &e);

		if (got <= 0)
			break;
		seen += (uint64_t)got;
		trace_vendor((const char *)in->data, in->len, v, sizeof(v));
		if (strcmp(v, "cpu") != 0) {
			set_vendor(vendor, vsize, v);
			return;
		}
	}
	if (!in->eof)
		set_vendor(vendor, vsize, "");
}

int ts_detect_file(const char *path, struct ts_detect *out, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ts_input_open_peek(&in, path, err);
	if (rc)
		return rc;
	out->bytes = in.file_bytes;
	while (in.len < SNIFF_BYTES && !in.eof) {
		int64_t r = ts_input_more(&in, 0, err);
		if (r < 0 && r != TS_ETRUNC) {
			ts_input_release_keep(&in, 0, err);
			return (int)r;
		}
		if (r == TS_ETRUNC)
			rc = TS_ETRUNC;
		if (r <= 0)
			break;
	}
	out->gzip = in.gzip;
	size_t n = in.len < SNIFF_BYTES ? in.len : SNIFF_BYTES;
	out->kind = ts_detect_buffer((const char *)in.data, n, out->vendor, sizeof(out->vendor));
	/* a CUDA trace whose first window shows only CPU events: look further
	 * (regular files only: a pipe's bytes are handed on below) */
	if ((out->kind == TS_KIND_KINETO_TRACE || out->kind == TS_KIND_LEGACY_TRACE) &&
	    strcmp(out->vendor, "cpu") == 0 && rc == 0 && in.file_bytes >= 0)
		vendor_scan_on(&in, out->vendor, sizeof(out->vendor));
	/* a pipe is handed to the readers: whole when recognised (they may read
	 * it more than once), else its start and the open descriptor */
	int whole = out->kind != TS_KIND_UNKNOWN && out->kind != TS_KIND_TEXT &&
		    out->kind != TS_KIND_BINARY;
	int krc = ts_input_release_keep(&in, whole, err);
	if (krc)
		return krc;
	/* a cut gzip stream is only worth reading on when what it holds is
	 * recognisable (readers keep the complete part of a trace or log) */
	if (rc == TS_ETRUNC && (out->kind == TS_KIND_UNKNOWN || out->kind == TS_KIND_TEXT))
		return rc;
	return 0;
}
